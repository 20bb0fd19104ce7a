package pcaps

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/invopop/jsonschema"
	"github.com/kwire/kwire/analysis"
	"github.com/kwire/kwire/dissect/profile"
	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/render"
	"github.com/kwire/kwire/render/statsview"
	sv "github.com/santhosh-tekuri/jsonschema/v6"
)

var updateSchemas = flag.Bool("update-schemas", false, "rewrite docs/schema/*.schema.json from the Go types")

// jsonSchemas are the JSON documents kwire writes (docs/json.md), by the
// name of their schema file in docs/schema: generated from the Go types
// that write them (github.com/invopop/jsonschema), so that a field added
// to a type and not to its schema, or the other way round, fails
// TestJSONSchemasCurrent.
var jsonSchemas = map[string]any{
	"exchange":         &render.ExchangeDoc{},       // read --json, live --json: an exchange's line
	"event":            &render.EventDoc{},          // read --json: an event's line
	"stats":            &statsview.StatsDoc{},       // stats --json, read --stats --json
	"versions":         &stats.VersionsReport{},     // versions --json
	"versions-against": &statsview.ComparisonJSON{}, // versions --against --json
	"decode":           &render.TreeDoc{},           // decode --json
	"facts":            &render.FactsDoc{},          // the "facts" of an exchange line, on its own
	"unknown-tag":      &render.UnknownTagDoc{},     // unknownTaggedFields entries
	"sasl":             &render.SASLDoc{},           // an exchange's "sasl"
	"message":          &render.MessageDoc{},        // an exchange's "request" and "response"
	"groups":           &analysis.GroupsReport{},    // groups --json
	"txns":             &analysis.TxnsReport{},      // txns --json
	"finding":          &statsview.FindingDoc{},     // read --findings --json: a finding's line
	"stats-record":     &statsview.StatsRecord{},    // read --json --stats: the last line
	"diff":             &statsview.DiffJSON{},       // diff --json
	"profile":          &profile.Profile{},          // read --normalize --json: a snapshot diff reads
}

const schemaDir = "../docs/schema"

func schemaOf(t *testing.T, name string, v any) []byte {
	t.Helper()
	r := &jsonschema.Reflector{Mapper: func(t reflect.Type) *jsonschema.Schema {
		switch t {
		case reflect.TypeOf(stats.Millis(0)), reflect.TypeOf(analysis.Millis(0)):
			return &jsonschema.Schema{Type: "number", Description: "milliseconds"}
		case reflect.TypeOf(analysis.Time{}):
			return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string", Format: "date-time"}, {Type: "null"}},
				Description: "capture time, RFC 3339 in UTC; null when unknown"}
		case reflect.TypeOf(json.RawMessage(nil)):
			return &jsonschema.Schema{Description: "a message in Kafka's JsonConverter form, or null"}
		}
		return nil
	}}
	s := r.Reflect(v)
	s.ID = jsonschema.ID("https://github.com/kwire/kwire/docs/schema/" + name + ".schema.json")
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestJSONSchemasCurrent: docs/schema holds the schema of every JSON
// document kwire writes, as its Go type gives it (-update-schemas
// rewrites them).
func TestJSONSchemasCurrent(t *testing.T) {
	for name, v := range jsonSchemas {
		got := schemaOf(t, name, v)
		path := filepath.Join(schemaDir, name+".schema.json")
		if *updateSchemas {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./pcaps -run TestJSONSchemasCurrent -update-schemas writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from its Go type (go test ./pcaps -run TestJSONSchemasCurrent -update-schemas rewrites it)", path)
		}
	}
}

// compileSchemas compiles the committed schemas with a validator of its
// own (github.com/santhosh-tekuri/jsonschema), not the generator.
func compileSchemas(t *testing.T) map[string]*sv.Schema {
	t.Helper()
	c := sv.NewCompiler()
	out := map[string]*sv.Schema{}
	for name := range jsonSchemas {
		path, err := filepath.Abs(filepath.Join(schemaDir, name+".schema.json"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := sv.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		url := "https://github.com/kwire/kwire/docs/schema/" + name + ".schema.json"
		if err := c.AddResource(url, doc); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = s
	}
	return out
}

func validate(t *testing.T, s *sv.Schema, where string, line []byte) {
	t.Helper()
	v, err := sv.UnmarshalJSON(bytes.NewReader(line))
	if err != nil {
		t.Errorf("%s: not JSON: %v", where, err)
		return
	}
	if err := s.Validate(v); err != nil {
		msg := err.Error()
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		t.Errorf("%s: %s", where, msg)
	}
}

// TestGoldenJSONValid validates every JSON line of the golden outputs
// against its schema: exchanges and events of read --json, the stats
// reports.
func TestGoldenJSONValid(t *testing.T) {
	schemas := compileSchemas(t)
	files, _ := filepath.Glob(filepath.Join("golden", "*.json.golden"))
	if len(files) == 0 {
		t.Fatal("no JSON goldens")
	}
	lines := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for n := 1; sc.Scan(); n++ {
			line := sc.Bytes()
			if len(line) == 0 || line[0] == '#' {
				continue
			}
			var k struct{ Kind string }
			if err := json.Unmarshal(line, &k); err != nil {
				t.Errorf("%s:%d: %v", f, n, err)
				continue
			}
			name := "exchange"
			switch k.Kind {
			case "paired", "noResponse", "unanswered", "orphan", "sasl":
			default:
				name = "event"
			}
			validate(t, schemas[name], f+":"+strconv.Itoa(n), line)
			lines++
		}
		fh.Close()
	}
	reports, _ := filepath.Glob(filepath.Join("..", "dissect", "stats", "testdata", "*.stats.json"))
	for _, f := range reports {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		validate(t, schemas["stats"], f, b)
	}
	if lines == 0 || len(reports) == 0 {
		t.Errorf("validated %d lines and %d stats reports", lines, len(reports))
	}
}

// TestSchemasReject: the schemas refuse what kwire must not write: a key
// no type has, a wrong type, a missing key.
func TestSchemasReject(t *testing.T) {
	schemas := compileSchemas(t)
	line := []byte(`{"stream":3,"file":null,"client":"a","broker":"b","kind":"paired","api":"Produce","apiKey":0,"apiVersion":9,"correlationId":7,"clientId":null,"clientIdNotCaptured":false,` +
		`"request":null,"response":null,"latencyMs":null,"sasl":null,"guess":null,"subject":"","errors":[],"notes":[],"topics":[],"facts":null}`)
	ok, _ := sv.UnmarshalJSON(bytes.NewReader(line))
	if err := schemas["exchange"].Validate(ok); err != nil {
		t.Fatalf("a minimal exchange line is refused: %v", err)
	}
	for what, bad := range map[string]string{
		"unknown key":  strings.Replace(string(line), `"stream":3`, `"stream":3,"streem":3`, 1),
		"wrong type":   strings.Replace(string(line), `"latencyMs":null`, `"latencyMs":"2ms"`, 1),
		"missing key":  strings.Replace(string(line), `"subject":"",`, ``, 1),
		"null not ok":  strings.Replace(string(line), `"api":"Produce"`, `"api":null`, 1),
		"facts object": strings.Replace(string(line), `"facts":null`, `"facts":{"topics":[]}`, 1),
		"guess object": strings.Replace(string(line), `"guess":null`, `"guess":{"api":"Metadata"}`, 1),
	} {
		v, err := sv.UnmarshalJSON(strings.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		if schemas["exchange"].Validate(v) == nil {
			t.Errorf("%s: accepted %s", what, bad)
		}
	}
}

// TestCIJSONValid: the documents of kwire diff --json, read --normalize
// --json and read --json --stats's last line validate against their
// schemas.
func TestCIJSONValid(t *testing.T) {
	schemas := compileSchemas(t)
	base, capped := filepath.Join("diff", "diff-base.pcap"), filepath.Join("diff", "diff-capped.pcap")
	if _, err := os.Stat(base); err != nil {
		t.Skipf("%s is missing", base)
	}
	r := kwire(t, "diff", "--json", "--port", "19390", base, capped)
	if r.exit != 1 {
		t.Fatalf("diff: exit %d: %s", r.exit, r.stderr)
	}
	validate(t, schemas["diff"], "diff --json", r.stdout)
	r = kwire(t, "read", "--normalize", "--json", "--port", "19390", base)
	validate(t, schemas["profile"], "read --normalize --json", r.stdout)
	r = kwire(t, "read", "--json", "--stats", "--port", "19092", "kgo-produce-consume.pcap")
	lines := bytes.Split(bytes.TrimSuffix(r.stdout, []byte("\n")), []byte("\n"))
	validate(t, schemas["stats-record"], "read --json --stats, last line", lines[len(lines)-1])
	for i, l := range lines[:len(lines)-1] {
		var k struct{ Kind string }
		if json.Unmarshal(l, &k) == nil && k.Kind == "stats" {
			t.Errorf("line %d of %d is a stats record", i+1, len(lines))
		}
	}
}
