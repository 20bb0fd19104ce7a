package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
)

// versionedRequest is a request frame (the header version the API and
// version take, client id "kwire-rd") of API key key at version ver,
// with body.
func versionedRequest(key, ver int16, body []byte) []byte {
	b := []byte{0, 0, 0, 0, byte(key >> 8), byte(key), byte(ver >> 8), byte(ver), 1, 2, 3, 4, 0, 8}
	b = append(b, "kwire-rd"...)
	if protocol.RequestHeaderVersion(key, ver) >= 2 {
		b = append(b, 0) // no tagged fields
	}
	b = append(b, body...)
	n := len(b) - 4
	b[0], b[1], b[2], b[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return b
}

// An API version or key the schemas do not define is data kept raw,
// labelled as what it is in the line, -V, -x and the JSON, never as a
// decode error: its bytes withheld by default (they may hold credentials),
// shown with --show-secrets; a real decode error keeps its label.
func TestUnknownVersionLabel(t *testing.T) {
	known := protocol.KnownVersions("MetadataRequest")
	if known.Max < 12 {
		t.Fatalf("MetadataRequest versions %+v", known)
	}
	body := []byte{0xde, 0xad, 0xbe, 0xef}
	const withheld = "withheld (bytes not decoded may hold credentials; --show-secrets shows them)"
	for _, c := range []struct {
		name      string
		key, ver  int16
		label     string
		show      bool
		errorWant string
	}{
		{"version", 3, 99, fmt.Sprintf("unknown version: Metadata v99 is beyond what kwire's schemas define (v%d-%d); body shown raw", known.Min, known.Max), true, ""},
		{"key", 1234, 0, "unknown API: key 1234 is not one kwire's schemas define; body shown raw", true, ""},
		{"version withheld", 3, 99, fmt.Sprintf("unknown version: Metadata v99 is beyond what kwire's schemas define (v%d-%d); body %s", known.Min, known.Max, withheld), false, ""},
		{"key withheld", 1234, 0, "unknown API: key 1234 is not one kwire's schemas define; body " + withheld, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			frame := versionedRequest(c.key, c.ver, body)
			tr := (&protocol.Decoder{ShowSecrets: c.show}).DecodeRequest(frame)
			if tr.Err == nil {
				t.Fatal("decoded an unknown body")
			}
			o := Options{ShowSecrets: c.show}
			hexWant := "deadbeef"
			if !c.show {
				hexWant = "<redacted>"
			}
			tree := render(t, func(w *bytes.Buffer) error { return Tree(w, tr, o) })
			if !strings.Contains(tree, "\n"+c.label+"\n") || strings.Contains(tree, "error: ") || strings.Contains(tree, "de ad be ef") != c.show {
				t.Errorf("-V:\n%s\nwant the line %q and the bytes %v", tree, c.label, c.show)
			}
			hx := render(t, func(w *bytes.Buffer) error { return Hex(w, tr, o) })
			if !strings.Contains(hx, "\n"+c.label+"\n") || strings.Contains(hx, "error: ") {
				t.Errorf("-x:\n%s", hx)
			}
			e := &dissect.Exchange{Kind: dissect.KindUnanswered, APIKey: c.key, APIVersion: c.ver, CorrelationID: 0x01020304,
				Request: &dissect.Frame{Tree: tr, Bytes: frame}}
			line := render(t, func(w *bytes.Buffer) error { return Line(w, e, o) })
			if !strings.Contains(line, "["+c.label+"]") || strings.Contains(line, "decode error") {
				t.Errorf("line: %s", line)
			}
			for name, write := range map[string]func(w *bytes.Buffer) error{
				"ExchangeJSON":     func(w *bytes.Buffer) error { return ExchangeJSON(w, e, o) },
				"ExchangeJSONLine": func(w *bytes.Buffer) error { return ExchangeJSONLine(w, e, o) },
			} {
				var doc struct {
					Request struct {
						Error   string
						Unknown *string
						Body    struct{ Undecoded, Hex string }
					}
				}
				if err := json.Unmarshal([]byte(render(t, write)), &doc); err != nil {
					t.Fatal(err)
				}
				if r := doc.Request; r.Error != "" || r.Unknown == nil || *r.Unknown != c.label || r.Body.Hex != hexWant {
					t.Errorf("%s: request error %q, unknown %v, body %+v", name, r.Error, r.Unknown, r.Body)
				}
			}
			var td struct{ Error, Unknown string }
			if err := json.Unmarshal([]byte(render(t, func(w *bytes.Buffer) error { return TreeJSON(w, tr, o) })), &td); err != nil {
				t.Fatal(err)
			}
			if td.Error != "" || td.Unknown != c.label {
				t.Errorf("TreeJSON: error %q, unknown %q", td.Error, td.Unknown)
			}
		})
	}
	// A known version whose body is cut short is a decode error still.
	tr := protocol.DecodeRequest(versionedRequest(3, 12, []byte{0, 0, 0, 5}))
	e := &dissect.Exchange{Kind: dissect.KindUnanswered, APIKey: 3, APIVersion: 12, Request: &dissect.Frame{Tree: tr}}
	if line := render(t, func(w *bytes.Buffer) error { return Line(w, e, Options{}) }); !strings.Contains(line, "[decode error: MetadataRequest") {
		t.Errorf("cut Metadata v12: %s", line)
	}
	var doc struct {
		Request struct {
			Error   string
			Unknown *string
		}
	}
	if err := json.Unmarshal([]byte(render(t, func(w *bytes.Buffer) error { return ExchangeJSON(w, e, Options{}) })), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Request.Error == "" || doc.Request.Unknown != nil {
		t.Errorf("cut Metadata v12 JSON: error %q, unknown %v", doc.Request.Error, doc.Request.Unknown)
	}
}
