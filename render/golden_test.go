package render

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwire/kwire/protocol"
)

var update = flag.Bool("update", false, "rewrite render/testdata/*.golden from the current output")

// goldenVectors are Kafka-written bodies whose renderings are pinned in
// testdata: records, tagged fields, error codes, nulls and UUIDs between
// them. Regenerate with `go test ./render -run Golden -update` and read
// the diff.
var goldenVectors = []struct{ message, version, name string }{
	{"ProduceRequest", "v9", "synthesized_populated_v9"},
	{"FetchResponse", "v12", "three_struct_tags_on_one_partition"},
	{"FetchResponse", "v16", "synthesized_populated_v16"},
	{"MetadataResponse", "v12", "synthesized_populated_v12"},
}

// goldenBatches are record batches from records.json pinned the same way.
var goldenBatches = []string{"gzip", "committed_transaction_control_batch", "log_append_time", "headers_on_one_record"}

func TestGolden(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "kafka-vectors", "messages")
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "kafka-vectors", "records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var batches struct{ Vectors []vector }
	if err := json.Unmarshal(data, &batches); err != nil {
		t.Fatal(err)
	}
	for _, name := range goldenBatches {
		var tr *protocol.Tree
		for _, v := range batches.Vectors {
			if v.Name == name {
				d := protocol.Decoder{Records: true}
				tr = d.DecodeRecordBatches(mustHex(t, v.Hex))
			}
		}
		if tr == nil {
			t.Fatalf("records.json: no vector %q", name)
		}
		checkGolden(t, "records-"+name, tr)
	}
	for _, g := range goldenVectors {
		data, err := os.ReadFile(filepath.Join(dir, g.message, g.version+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Vectors []vector }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		var v *vector
		for i := range doc.Vectors {
			if doc.Vectors[i].Name == g.name {
				v = &doc.Vectors[i]
			}
		}
		if v == nil {
			t.Fatalf("%s %s: no vector %q", g.message, g.version, g.name)
		}
		checkGolden(t, g.message+"-"+g.version+"-"+g.name, decodeVector(t, *v))
	}
}

// checkGolden compares Tree, Hex and TreeJSON of tr with testdata/name.golden.
func checkGolden(t *testing.T, name string, tr *protocol.Tree) {
	t.Helper()
	checkIndent(t, name, tr)
	{
		var out bytes.Buffer
		for _, step := range []struct {
			title string
			f     func() error
		}{
			{"Tree", func() error { return Tree(&out, tr, Options{}) }},
			{"Hex", func() error { return Hex(&out, tr, Options{}) }},
			{"TreeJSON", func() error { return TreeJSON(&out, tr, Options{}) }},
		} {
			out.WriteString("== " + step.title + "\n")
			if err := step.f(); err != nil {
				t.Fatal(err)
			}
		}
		file := filepath.Join("testdata", name+".golden")
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (run go test ./render -run Golden -update)", err)
		}
		if got := out.String(); got != string(want) {
			gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := 0; i < len(gl) || i < len(wl); i++ {
				var a, b string
				if i < len(gl) {
					a = gl[i]
				}
				if i < len(wl) {
					b = wl[i]
				}
				if a != b {
					t.Errorf("%s: line %d differs:\n got  %q\n want %q", file, i+1, a, b)
					break
				}
			}
		}
	}
}

// checkIndent checks that Tree with Options.Indent 2 writes what Tree
// writes with every non-empty line indented by four spaces, colored or not.
func checkIndent(t *testing.T, name string, tr *protocol.Tree) {
	t.Helper()
	for _, color := range []bool{false, true} {
		var flat, indented bytes.Buffer
		if err := Tree(&flat, tr, Options{Color: color}); err != nil {
			t.Fatal(err)
		}
		if err := Tree(&indented, tr, Options{Color: color, Indent: 2}); err != nil {
			t.Fatal(err)
		}
		var want strings.Builder
		for line := range strings.Lines(flat.String()) {
			if line != "\n" {
				want.WriteString("    ")
			}
			want.WriteString(line)
		}
		if indented.String() != want.String() {
			t.Errorf("%s: Tree with Indent 2 (color %v) is not the tree indented by four spaces:\n%s", name, color, indented.String())
		}
	}
}

func TestTreeIndent(t *testing.T) {
	checkIndent(t, "nil tree", nil)
	d := protocol.Decoder{Records: true}
	checkIndent(t, "cut batch", d.DecodeRecordBatches([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0x30, 0xff}))
	// A Metadata v1 request cut inside its topic count: the tree ends on
	// an error line.
	cut := d.DecodeRequest([]byte{0, 0, 0, 12, 0, 3, 0, 1, 0, 0, 0, 7, 0, 1, 'c', 0, 0})
	if cut.Err == nil {
		t.Fatal("the cut request decoded without an error")
	}
	checkIndent(t, "cut request", cut)
}
