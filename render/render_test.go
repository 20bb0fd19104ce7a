package render

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/kwire/kwire/render/termsafe"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render/units"
)

// apiVersionsHex is the ApiVersions v0 request of the task: header v1,
// client id "wire-read", empty body.
const apiVersionsHex = "0000001300120000010203040009776972652d72656164"

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func render(t testing.TB, f func(*bytes.Buffer) error) string {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }

func checkLines(t *testing.T, got string, want []string) {
	t.Helper()
	g := lines(got)
	if !slices.Equal(g, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

var wantApiVersionsHex = []string{
	"0000  00 00 00 13                                       Length 19",
	"0004  00 12                                             RequestHeader.RequestApiKey 18 (ApiVersions)",
	"0006  00 00                                             RequestHeader.RequestApiVersion 0",
	"0008  01 02 03 04                                       RequestHeader.CorrelationId 16909060",
	"000c  00 09                                             RequestHeader.ClientId (length 9)",
	"000e  77 69 72 65 2d 72 65 61  64                       RequestHeader.ClientId \"wire-read\"",
	"0017                                                    ApiVersionsRequest v0 (empty)",
}

var wantApiVersionsTree = []string{
	"Length: 19",
	"RequestHeader v1",
	"  RequestApiKey: 18 (ApiVersions)",
	"  RequestApiVersion: 0",
	"  CorrelationId: 16909060",
	"  ClientId: \"wire-read\"",
	"ApiVersionsRequest v0 (empty)",
}

// The hand-built tree and the decoder's tree of the same bytes render the
// same, and as the task's walk-through describes.
func TestApiVersionsWalkThrough(t *testing.T) {
	for name, tr := range map[string]*protocol.Tree{
		"hand-built": apiVersionsV0(),
		"decoded":    protocol.DecodeRequest(mustHex(t, apiVersionsHex)),
	} {
		t.Run(name, func(t *testing.T) {
			if !bytes.Equal(tr.Spaces[0].Data, mustHex(t, apiVersionsHex)) {
				t.Fatalf("tree bytes %x", tr.Spaces[0].Data)
			}
			checkLines(t, render(t, func(b *bytes.Buffer) error { return Hex(b, tr, Options{}) }), wantApiVersionsHex)
			checkLines(t, render(t, func(b *bytes.Buffer) error { return Tree(b, tr, Options{}) }), wantApiVersionsTree)
			got := render(t, func(b *bytes.Buffer) error { return TreeJSON(b, tr, Options{}) })
			want := `{"length":19,"message":"ApiVersionsRequest","header":{"requestApiKey":18,"requestApiVersion":0,"correlationId":16909060,"clientId":"wire-read"},"body":{}}` + "\n"
			if got != want {
				t.Errorf("TreeJSON:\n got %s want %s", got, want)
			}
		})
	}
}

func TestHexDump(t *testing.T) {
	got := render(t, func(b *bytes.Buffer) error { return HexDump(b, mustHex(t, apiVersionsHex), 0x100) })
	checkLines(t, got, []string{
		"00000100  00 00 00 13 00 12 00 00  01 02 03 04 00 09 77 69  |..............wi|",
		"00000110  72 65 2d 72 65 61 64                              |re-read|",
		"00000117",
	})
	checkLines(t, render(t, func(b *bytes.Buffer) error { return HexDump(b, nil, 0) }), []string{"00000000"})
}

// hexSpan is a span of a space that a dump line stands for instead of
// listing its bytes: an elided long value or a withheld secret.
type hexSpan struct {
	off, end int // [off, end) in the space; end -1: up to the end of the space
	redacted bool
	line     string
}

// dumpedSpace is what a dump lists for one space: its bytes in order, with
// the bytes of elided and redacted spans filled in as zeros and listed in
// spans.
type dumpedSpace struct {
	data  []byte
	spans []hexSpan
}

// elisionLine matches the line Hex writes for the rest of a long value.
var elisionLine = regexp.MustCompile(`^ +… (\d+) more bytes of (\S+) \(offset (\+?)0x([0-9a-f]+) – (\+?)0x([0-9a-f]+)\)$`)

// parseHex reads an annotated dump of tr back: the bytes listed for each
// space, in order. An elision line must start where the listing stands
// and state a range whose size is its byte count; a redacted line
// ("<redacted>" in the hex column) stands for the span of the node tr
// withholds there (a redacted leaf, or the prefix of a redacted value with
// parts); the offsets after it ("+0004") count from that span's end.
func parseHex(t *testing.T, tr *protocol.Tree, o *Options, dump string) []*dumpedSpace {
	t.Helper()
	spaces := []*dumpedSpace{{}}
	rel := -1 // the end of the last redacted span of the current space
	abs := func(l, tok string) int {
		r := strings.HasPrefix(tok, "+")
		v, err := strconv.ParseInt(strings.TrimPrefix(tok, "+"), 16, 64)
		switch {
		case err != nil:
			t.Fatalf("bad offset in %q", l)
		case r && rel < 0:
			t.Fatalf("relative offset before any redacted span: %q", l)
		case !r && rel >= 0:
			t.Fatalf("absolute offset after a redacted span (it would give the secret's length): %q", l)
		case r:
			return rel + int(v)
		}
		return int(v)
	}
	for _, l := range lines(dump) {
		cur := spaces[len(spaces)-1]
		switch {
		case l == "":
			continue
		case strings.HasPrefix(l, "-- "):
			spaces = append(spaces, &dumpedSpace{})
			rel = -1
			continue
		case strings.HasPrefix(l, "error: "):
			continue
		}
		if m := elisionLine.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			first := abs(l, m[3]+m[4])
			last := abs(l, m[5]+m[6])
			if first != len(cur.data) {
				t.Fatalf("elision %q starts at %#x, the dump stands at %#x", l, first, len(cur.data))
			}
			if n <= 0 || last-first+1 != n {
				t.Fatalf("elision %q: range 0x%x–0x%x is not %d bytes", l, first, last, n)
			}
			cur.spans = append(cur.spans, hexSpan{off: first, end: last + 1, line: l})
			cur.data = append(cur.data, make([]byte, n)...)
			continue
		}
		sp := strings.IndexByte(l, ' ')
		if sp < 4 {
			t.Fatalf("bad dump line %q", l)
		}
		off := abs(l, l[:sp])
		if off != len(cur.data) {
			t.Fatalf("line %q starts at %#x, want %#x (bytes skipped or repeated)", l, off, len(cur.data))
		}
		col := l[sp+2:]
		label := ""
		if len(col) > hexColumn {
			col, label = col[:hexColumn], col[hexColumn:]
		}
		if strings.TrimSpace(col) == redacted {
			if strings.Contains(label, redacted) {
				t.Fatalf("redacted line %q says so twice", l)
			}
			end, ok := withheldEnd(tr, len(spaces)-1, off, o)
			if !ok {
				t.Fatalf("redacted line %q: no withheld node at %#x", l, off)
			}
			cur.spans = append(cur.spans, hexSpan{off: off, end: end, redacted: true, line: l})
			cur.data = append(cur.data, make([]byte, end-off)...)
			rel = end
			continue
		}
		for f := range strings.FieldsSeq(col) {
			if f == "**" {
				t.Fatalf("masked byte in %q: a secret's length shows", l)
			}
			v, err := strconv.ParseUint(f, 16, 8)
			if err != nil || len(f) != 2 {
				t.Fatalf("bad byte %q in %q", f, l)
			}
			cur.data = append(cur.data, byte(v))
		}
	}
	return spaces
}

// withheldEnd returns the end of the span Hex withholds at off in space
// sp of tr: a redacted node without same-space children starting there,
// or the prefix of a redacted node with parts (up to its first part).
func withheldEnd(tr *protocol.Tree, sp, off int, o *Options) (int, bool) {
	end, found := 0, false
	var visit func(n *protocol.Node, depth int)
	visit = func(n *protocol.Node, depth int) {
		if found || n == nil || depth > 200 {
			return
		}
		if n.Space == sp && n.Off == off && isRedacted(n, o) {
			first := -1
			for _, c := range n.Children {
				if c.Space == sp {
					first = c.Off
					break
				}
			}
			switch {
			case first < 0:
				end, found = n.End(), true
				return
			case first > off:
				end, found = first, true
				return
			}
		}
		for _, c := range n.Children {
			visit(c, depth+1)
		}
	}
	visit(tr.Root, 0)
	return end, found
}

// checkCoverage asserts that Hex lists every byte of every space exactly
// once, in order: with no limit and secrets shown, all of them; with the
// default limit and with a 3-byte limit and secrets withheld, all of them
// but for elided and redacted spans, each of which must be exactly the
// rest of a BYTES node's value past the limit, or the span of a node
// marked redacted.
func checkCoverage(t *testing.T, name string, tr *protocol.Tree) {
	t.Helper()
	for _, o := range []Options{{ShowSecrets: true, MaxValue: -1}, {}, {MaxValue: 3}} {
		dump := render(t, func(b *bytes.Buffer) error { return Hex(b, tr, o) })
		got := parseHex(t, tr, &o, dump)
		if len(got) != len(tr.Spaces) {
			t.Fatalf("%s: %d sections, want %d spaces\n%s", name, len(got), len(tr.Spaces), dump)
		}
		for i, sp := range tr.Spaces {
			g := got[i]
			want := bytes.Clone(sp.Data)
			for _, s := range g.spans {
				if o.MaxValue < 0 && o.ShowSecrets {
					t.Fatalf("%s: with no limit and secrets shown, %q", name, s.line)
				}
				if !spanExplained(tr, i, s, &o) {
					t.Fatalf("%s: space %d: %q stands for [%#x, %#x), which is neither a value past %d bytes nor a secret\n%s",
						name, i, s.line, s.off, s.end, o.maxValue(), dump)
				}
				if s.end <= len(want) {
					clear(want[s.off:s.end])
				}
			}
			if !bytes.Equal(g.data, want) {
				t.Fatalf("%s: space %d (%s): dump has\n%x\nwant\n%x\n%s", name, i, sp.Name, g.data, want, dump)
			}
		}
	}
}

// spanExplained reports whether span s of space sp is the rest of a BYTES
// value past o's limit (s not redacted) or a node marked redacted.
func spanExplained(tr *protocol.Tree, sp int, s hexSpan, o *Options) bool {
	found := false
	var visit func(n *protocol.Node, depth int)
	visit = func(n *protocol.Node, depth int) {
		if found || depth > 200 {
			return
		}
		if n.Space == sp {
			switch {
			case s.redacted:
				found = isRedacted(n, o) && n.Off == s.off && (n.End() == s.end || len(n.Children) > 0)
			case n.Kind == protocol.KindBytes && len(n.Raw) > o.maxValue():
				found = n.End()-len(n.Raw)+o.maxValue() == s.off && n.End() == s.end
			}
		}
		for _, c := range n.Children {
			visit(c, depth+1)
		}
	}
	if tr.Root != nil {
		visit(tr.Root, 0)
	}
	return found
}

func TestHexCoverageHandBuilt(t *testing.T) {
	checkCoverage(t, "apiVersions", apiVersionsV0())
	tr := produceV9()
	checkCoverage(t, "produce", tr)
	checkCoverage(t, "produce response", produceResponseV9(0, 6))
	dump := render(t, func(b *bytes.Buffer) error { return Hex(b, tr, Options{}) })
	for _, want := range []string{
		"00ec  00 00 00 02                                       ProduceRequest.TopicData[0].PartitionData[1].Records.RecordBatch[0].Records [2]",
		"00f0  1f 8b 08 00 00 00 00 00  00 00 00 00 00 00 00 00  ProduceRequest.TopicData[0].PartitionData[1].Records.RecordBatch[0].Records (compressed, 84 bytes; decoded in gzip-decompressed records of batch at 0xb3)",
		"-- gzip-decompressed records of batch at 0xb3 (71 bytes) --",
		"0005  6b 31                                             ProduceRequest.TopicData[0].PartitionData[1].Records.RecordBatch[0].Records[0].Key \"k1\"",
		"0043  ff 00 01                                          ProduceRequest.TopicData[0].PartitionData[1].Records.RecordBatch[0].Records[1].Value 0xff0001",
		"0039  12 34 ab cd                                       ProduceRequest.TopicData[0].PartitionData[0].Records.RecordBatch[0].Crc 0x1234abcd (ok)",
	} {
		if !strings.Contains(dump, want+"\n") {
			t.Errorf("dump lacks line %q\n%s", want, dump)
		}
	}
}

// sharedDir returns $KWIRE_SHARED or ../shared beside the module root.
func sharedDir(t testing.TB) string {
	d := os.Getenv("KWIRE_SHARED")
	if d == "" {
		d, _ = filepath.Abs(filepath.Join("..", "..", "shared"))
	}
	if _, err := os.Stat(filepath.Join(d, "kafka-vectors")); err != nil {
		t.Skipf("../shared not found at %s (set KWIRE_SHARED): skipping tests over Kafka's vectors", d)
	}
	return d
}

type vector struct {
	Name      string          `json:"name"`
	Message   string          `json:"message"`
	APIKey    int16           `json:"api_key"`
	Direction string          `json:"direction"`
	Version   int16           `json:"version"`
	JSONValue json.RawMessage `json:"json_value"`
	Unknown   []struct {
		Tag     int64  `json:"tag"`
		DataHex string `json:"data_hex"`
	} `json:"unknown_tagged_fields"`
	Hex string `json:"hex"`
}

// declaredOnly drops the top-level members of a vector's json_value that
// name fields the schema does not declare in the vector's version: they
// have no bytes on the wire (a few of Kafka's hand-written vectors list a
// newer version's fields at their defaults).
func declaredOnly(t testing.TB, v vector) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(v.JSONValue, &obj) != nil {
		return v.JSONValue
	}
	m := protocol.LookupName(v.Message, v.Version)
	if m == nil {
		return v.JSONValue
	}
	declared := map[string]bool{}
	for _, f := range m.Fields {
		if f.Versions.Contains(v.Version) {
			declared[lowerCamel(f.Name)] = true
		}
	}
	for k := range obj {
		if !declared[k] {
			delete(obj, k)
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// loadVectorsIfPresent is loadVectors without the skip, for fuzz seeds.
func loadVectorsIfPresent(t testing.TB) []vector {
	d := os.Getenv("KWIRE_SHARED")
	if d == "" {
		d, _ = filepath.Abs(filepath.Join("..", "..", "shared"))
	}
	if _, err := os.Stat(filepath.Join(d, "kafka-vectors")); err != nil {
		return nil
	}
	return loadVectors(t)
}

func jsonValid(b []byte) bool { return json.Valid(b) }

func loadVectors(t testing.TB) []vector {
	dir := filepath.Join(sharedDir(t), "kafka-vectors", "messages")
	files, err := filepath.Glob(filepath.Join(dir, "*", "v*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vectors under %s: %v", dir, err)
	}
	var out []vector
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Vectors []vector }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, doc.Vectors...)
	}
	return out
}

func decodeVector(t testing.TB, v vector) *protocol.Tree {
	return decodeVectorShow(t, v, false)
}

// decodeVectorShow decodes v, secrets withheld unless show.
func decodeVectorShow(t testing.TB, v vector, show bool) *protocol.Tree {
	body := mustHex(t, v.Hex)
	d := protocol.Decoder{Records: true, ShowSecrets: show}
	if v.Direction == "framing" || v.APIKey < 0 {
		return d.DecodeStruct(v.Message, v.Version, body)
	}
	return d.DecodeBody(v.APIKey, v.Version, v.Direction == "response", body)
}

// Every byte of every decoded Kafka vector appears once in the dump; the
// tree and JSON renderers handle every one of them.
func TestRenderKafkaVectors(t *testing.T) {
	vs := loadVectors(t)
	for _, v := range vs {
		tr := decodeVector(t, v)
		name := fmt.Sprintf("%s v%d %s", v.Message, v.Version, v.Name)
		checkCoverage(t, name, tr)
		if err := Tree(&bytes.Buffer{}, tr, Options{}); err != nil {
			t.Fatal(err)
		}
		// Kafka's JSON holds the secrets: compare with them shown.
		shown := decodeVectorShow(t, v, true)
		checkCoverage(t, name+" (secrets shown)", shown)
		js := render(t, func(b *bytes.Buffer) error { return TreeJSON(b, shown, Options{ShowSecrets: true}) })
		var doc TreeDoc
		if err := json.Unmarshal([]byte(js), &doc); err != nil {
			t.Fatalf("%s: TreeJSON is not JSON: %v\n%s", name, err, js)
		}
		if !jsonEqual(t, doc.Body, declaredOnly(t, v)) {
			t.Errorf("%s: TreeJSON body\n%s\nKafka's JsonConverter\n%s", name, doc.Body, v.JSONValue)
		}
		var got, want []string
		for _, u := range doc.UnknownTaggedFields {
			got = append(got, fmt.Sprintf("%d:%s", u.Tag, u.Hex))
		}
		for _, u := range v.Unknown {
			want = append(want, fmt.Sprintf("%d:%s", u.Tag, strings.ToLower(u.DataHex)))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: unknownTaggedFields %v, want %v", name, got, want)
		}
	}
	t.Logf("%d vectors", len(vs))
}

func jsonEqual(t testing.TB, a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// Record batches written by Kafka: the dump covers the wire bytes and each
// decompressed space once, and the tree gives absolute offsets.
func TestRenderKafkaRecordBatches(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "kafka-vectors", "records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Vectors []vector }
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	d := protocol.Decoder{Records: true}
	compressed := 0
	for _, v := range doc.Vectors {
		tr := d.DecodeRecordBatches(mustHex(t, v.Hex))
		checkCoverage(t, v.Name, tr)
		tree := render(t, func(b *bytes.Buffer) error { return Tree(b, tr, Options{}) })
		batch := tr.Root.Children[0]
		if !isBatch(batch) {
			t.Fatalf("%s: first child %q is not a batch", v.Name, batch.Name)
		}
		base, _ := fieldInt(batch, protocol.Batch.BaseOffset)
		if recs := batch.ChildOf(protocol.Batch.Records); recs != nil && len(recs.Children) > 0 {
			var pos batchPos
			off, ts, ok := pos.position(batch, recs.Children[0])
			want := fmt.Sprintf("[0] offset %d timestamp %s", off, msTime(ts))
			if !ok || off < base || !strings.Contains(tree, want) {
				t.Errorf("%s: tree lacks %q:\n%s", v.Name, want, tree)
			}
		}
		if !strings.Contains(tree, "crc ok") {
			t.Errorf("%s: no CRC verdict in\n%s", v.Name, tree)
		}
		if len(tr.Spaces) > 1 {
			compressed++
			dump := render(t, func(b *bytes.Buffer) error { return Hex(b, tr, Options{}) })
			if !strings.Contains(dump, "\n-- "+tr.Spaces[1].Name+" (") {
				t.Errorf("%s: no section for %s", v.Name, tr.Spaces[1].Name)
			}
		}
	}
	if compressed < 4 {
		t.Errorf("only %d compressed batches seen; the vectors have one per codec", compressed)
	}
}

func TestTreeProduce(t *testing.T) {
	got := render(t, func(b *bytes.Buffer) error { return Tree(b, produceV9(), Options{}) })
	for _, want := range []string{
		"          Records 132 bytes, 1 batch",
		"            RecordBatch offset 0-1, 2 records, uncompressed, 2025-11-29T12:00:00.000Z, crc ok",
		"                [1] offset 1 timestamp 2025-11-29T12:00:00.010Z",
		"                  Key: null",
		"                  Value: 0xff0001",
		"                  Value: JSON, 42 bytes",
		"                      \"item\": \"a rather long order line\"",
		"            RecordBatch offset 0-1, 2 records, gzip, 2025-11-29T12:00:00.000Z, crc ok",
		"                [0] offset 0 timestamp 2025-11-29T12:00:00.000Z [gzip-decompressed records of batch at 0xb3]",
		"  TransactionalId: null",
	} {
		if !strings.Contains(got, "\n"+want+"\n") {
			t.Errorf("tree lacks line %q:\n%s", want, got)
		}
	}
	// Empty tagged-field buffers are left out of the tree.
	if strings.Contains(got, "TaggedFields") {
		t.Errorf("empty tagged fields shown:\n%s", got)
	}
}

func TestValueModes(t *testing.T) {
	long := strings.Repeat("x", 300)
	cases := []struct {
		raw  []byte
		o    Options
		want string
	}{
		{[]byte("hello"), Options{}, `"hello"`},
		{[]byte("tab\there"), Options{}, `"tab\there"`},
		{[]byte{0, 1, 0xfe}, Options{}, "0x0001fe"},
		{[]byte("hello"), Options{Values: ValuesHex}, "0x68656c6c6f"},
		{[]byte("hello"), Options{Values: ValuesBase64}, "aGVsbG8="},
		{[]byte("hello"), Options{Values: ValuesNone}, "5 bytes"},
		{[]byte(long), Options{}, `"` + long[:256] + `"... (300 bytes)`},
		{[]byte(long), Options{MaxValue: 4}, `"xxxx"... (300 bytes)`},
		{[]byte(long), Options{MaxValue: -1}, `"` + long + `"`},
		{[]byte{1, 2, 3, 4, 5}, Options{MaxValue: 2}, "0x0102... (5 bytes)"},
		{[]byte("héllo"), Options{MaxValue: 2}, `"h"... (6 bytes)`},
	}
	for _, c := range cases {
		n := &protocol.Node{Name: "Value", Kind: protocol.KindBytes, Raw: c.raw}
		if got := string(appendValue(nil, n, &c.o, false)); got != c.want {
			t.Errorf("%q %+v: got %s want %s", c.raw, c.o, got, c.want)
		}
	}
	for _, s := range []string{"text", "HEX", "base64", "none"} {
		m, err := ParseValueMode(s)
		if err != nil || !strings.EqualFold(m.String(), s) {
			t.Errorf("ParseValueMode(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseValueMode("utf8"); err == nil {
		t.Error("ParseValueMode accepted utf8")
	}
	u := [16]byte{0x31, 0x0d, 0xa8, 0xdd, 0xe5, 0x5d, 0x4e, 0xaf, 0x9c, 0x56, 0x3d, 0x94, 0x83, 0x21, 0xbe, 0x94}
	n := &protocol.Node{Name: "TopicId", Kind: protocol.KindUUID, Raw: u[:]}
	if got := string(appendValue(nil, n, &Options{}, true)); got != "MQ2o3eVdTq-cVj2UgyG-lA (310da8dd-e55d-4eaf-9c56-3d948321be94)" {
		t.Errorf("uuid: %s", got)
	}
}

func TestCamelKey(t *testing.T) {
	for in, want := range map[string]string{
		"CRC": "crc", "Crc": "crc", "BaseOffset": "baseOffset", "HTTPServer": "httpServer", "key": "key", "": "",
	} {
		if got := camelKey(in); got != want {
			t.Errorf("camelKey(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLine(t *testing.T) {
	e := produceExchange(0, 6)
	got := render(t, func(b *bytes.Buffer) error { return Line(b, e, Options{}) })
	want := "12:01:02.345 10.0.0.5:53412 → 10.0.0.9:9092 Produce v9 corr=7 client=app 2.41ms 327B/90B orders[0@100+2 132B,3+2 gzip 145B] errors: NOT_LEADER_OR_FOLLOWER orders[3]\n"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	e = produceExchange(6, 6, 3)
	e.Notes = []string{"duplicate correlation ID 7 in flight"}
	got = render(t, func(b *bytes.Buffer) error { return Line(b, e, Options{}) })
	if !strings.HasSuffix(got, " errors: NOT_LEADER_OR_FOLLOWER×2 orders[0,3], UNKNOWN_TOPIC_OR_PARTITION orders[5] [duplicate correlation ID 7 in flight]\n") {
		t.Errorf("errors and notes: %s", got)
	}
	errs := Errors(e)
	if len(errs) != 2 || errs[0].Name != "NOT_LEADER_OR_FOLLOWER" || errs[0].Count != 2 || errs[1].Name != "UNKNOWN_TOPIC_OR_PARTITION" || errs[1].Count != 1 {
		t.Errorf("Errors = %+v", errs)
	}

	un := produceExchange(0)
	un.Kind, un.Response = dissect.KindUnanswered, nil
	un.ClientIDNull, un.ClientID = true, ""
	got = render(t, func(b *bytes.Buffer) error { return Line(b, un, Options{}) })
	if want := "12:01:02.345 10.0.0.5:53412 → 10.0.0.9:9092 Produce v9 corr=7 client=null unanswered 327B/- orders[0+2 132B,3+2 gzip 145B]\n"; got != want {
		t.Errorf("unanswered:\n got  %s want %s", got, want)
	}

	// An empty client ID and one spelled "null" are not a null one.
	for id, want := range map[string]string{"": `client="" unanswered`, "null": `client="null" unanswered`, "app 1": `client="app 1" unanswered`} {
		un.ClientIDNull, un.ClientID = false, id
		if got = render(t, func(b *bytes.Buffer) error { return Line(b, un, Options{}) }); !strings.Contains(got, " corr=7 "+want+" ") {
			t.Errorf("client ID %q: %s", id, got)
		}
	}

	orphan := produceExchange(0)
	orphan.Kind, orphan.Request = dissect.KindOrphan, nil
	got = render(t, func(b *bytes.Buffer) error { return Line(b, orphan, Options{}) })
	if want := "12:01:02.348 10.0.0.5:53412 → 10.0.0.9:9092 orphan response Produce v9 corr=7 - -/57B orders[0@100]\n"; got != want {
		t.Errorf("orphan:\n got  %s want %s", got, want)
	}

	sasl := &dissect.Exchange{Client: testClient, Broker: testBroker, Kind: dissect.KindSASL, Mechanism: "PLAIN", User: "alice",
		Request:  &dissect.Frame{Time: testT0, Bytes: make([]byte, 20)},
		Response: &dissect.Frame{Time: testT0, Bytes: make([]byte, 8)}}
	got = render(t, func(b *bytes.Buffer) error { return Line(b, sasl, Options{}) })
	if want := "12:01:02.345 10.0.0.5:53412 → 10.0.0.9:9092 SASL token 20B/8B mechanism=PLAIN user=alice\n"; got != want {
		t.Errorf("sasl:\n got  %s want %s", got, want)
	}
	got = render(t, func(b *bytes.Buffer) error { return ExchangeJSON(b, sasl, Options{}) })
	if !strings.Contains(got, `"kind":"sasl",`) || !strings.Contains(got, `"sasl":{"mechanism":"PLAIN","user":"alice"}`) {
		t.Errorf("sasl JSON: %s", got)
	}
}

// Line names topics known only by ID from the run's facts.Names.
func TestLineTopicNames(t *testing.T) {
	b := newBuilder()
	b.int("Length", "int32", 4, 0)
	b.strct("RequestHeader", "header")
	b.int("RequestApiKey", "int16", 2, 1)
	b.close()
	body := b.strct("FetchRequest", "request")
	body.Note = "v13"
	b.array("Topics", 1, true)
	b.strct("[0]", "FetchTopic")
	b.uuid("TopicId", [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	b.array("Partitions", 1, true)
	b.strct("[0]", "FetchPartition")
	b.int("Partition", "int32", 4, 4)
	b.close()
	b.close()
	b.close()
	b.close()
	b.close()
	tr := b.frame()
	id := facts.TopicID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	for _, c := range []struct {
		learnt []facts.IDName
		want   string
	}{
		{nil, " " + id.String() + "[4]\n"},
		{[]facts.IDName{{ID: id, Name: "orders"}}, " orders[4]\n"},
		{[]facts.IDName{{ID: facts.TopicID{}, Name: "x"}}, " " + id.String() + "[4]\n"},
	} {
		names := facts.NewNames()
		names.Resolve(&facts.Exchange{IDNames: c.learnt})
		e := &dissect.Exchange{Kind: dissect.KindUnanswered, APIKey: 1, APIVersion: 13, Request: &dissect.Frame{Tree: tr, Bytes: tr.Spaces[0].Data, Time: testT0}}
		names.Resolve(e.Facts())
		got := render(t, func(w *bytes.Buffer) error { return Line(w, e, Options{}) })
		if !strings.HasSuffix(got, c.want) {
			t.Errorf("learnt %v: %q does not end in %q", c.learnt, got, c.want)
		}
	}
}

func TestFormatLatency(t *testing.T) {
	for d, want := range map[time.Duration]string{
		123 * time.Microsecond:   "0.123ms",
		2412 * time.Microsecond:  "2.41ms",
		35249 * time.Microsecond: "35.2ms",
		1234 * time.Millisecond:  "1.23s",
		-1:                       "-",
	} {
		if got := units.Duration(d); got != want {
			t.Errorf("units.Duration(%v) = %s, want %s", d, got, want)
		}
	}
}

// Subject finds topics by TopicId, string topic lists, group, transactional
// and producer IDs.
func TestSubject(t *testing.T) {
	b := newBuilder()
	b.int("Length", "int32", 4, 0)
	b.strct("RequestHeader", "header")
	b.int("RequestApiKey", "int16", 2, 28)
	b.close()
	body := b.strct("TxnOffsetCommitRequest", "request")
	body.Note = "v3"
	b.str("TransactionalId", "tx-1", true)
	b.str("GroupId", "billing", true)
	b.int("ProducerId", "int64", 8, 4711)
	b.array("Topics", 2, true)
	b.strct("[0]", "TxnOffsetCommitRequestTopic")
	b.uuid("TopicId", [16]byte{0x31, 0x0d, 0xa8, 0xdd, 0xe5, 0x5d, 0x4e, 0xaf, 0x9c, 0x56, 0x3d, 0x94, 0x83, 0x21, 0xbe, 0x94})
	b.array("Partitions", 2, true)
	for _, p := range []int64{2, 1} {
		b.strct("[x]", "P")
		b.int("PartitionIndex", "int32", 4, p)
		b.close()
	}
	b.close()
	b.close()
	b.strct("[1]", "TxnOffsetCommitRequestTopic")
	b.str("Name", "audit", true)
	b.array("Partitions", 0, true)
	b.close()
	b.close()
	b.close()
	b.close()
	tr := b.frame()
	e := &dissect.Exchange{APIKey: 28, APIVersion: 3, Request: &dissect.Frame{Tree: tr}}
	if got, want := Subject(e), "MQ2o3eVdTq-cVj2UgyG-lA[2,1] audit group=billing txn=tx-1 pid=4711"; got != want {
		t.Errorf("Subject = %q, want %q", got, want)
	}
	names := facts.NewNames()
	names.Resolve(&facts.Exchange{IDNames: []facts.IDName{{ID: facts.TopicID{0x31, 0x0d, 0xa8, 0xdd, 0xe5, 0x5d, 0x4e, 0xaf, 0x9c, 0x56, 0x3d, 0x94, 0x83, 0x21, 0xbe, 0x94}, Name: "payments"}}})
	e = &dissect.Exchange{APIKey: 28, APIVersion: 3, Request: &dissect.Frame{Tree: tr}}
	names.Resolve(e.Facts())
	if got, want := Subject(e), "payments[2,1] audit group=billing txn=tx-1 pid=4711"; got != want {
		t.Errorf("Subject, named = %q, want %q", got, want)
	}
	if got := Subject(&dissect.Exchange{}); got != "" {
		t.Errorf("empty exchange: %q", got)
	}
}

func TestEventLineAndSummary(t *testing.T) {
	conn := &reassembly.Conn{Index: 4, A: testClient, B: testBroker}
	ev := &dissect.Event{Kind: dissect.EventGap, Conn: conn, Dir: reassembly.BtoA, Frame: 57, Time: testT0, Bytes: 1460, Detail: "lost segment"}
	got := render(t, func(b *bytes.Buffer) error { return EventLine(b, ev, Options{}) })
	if want := "12:01:02.345 stream 4 10.0.0.9:9092 → 10.0.0.5:53412 GAP 1460 bytes packet 57 (lost segment)\n"; got != want {
		t.Errorf("EventLine:\n got  %s want %s", got, want)
	}
	// A detail holding what the wire said (a TLS ClientHello's SNI) has
	// its unprintable characters escaped: a right-to-left override
	// reordered the line on the terminal (an adversarial trial).
	tls := &dissect.Event{Kind: dissect.EventTLS, Conn: conn, Frame: 4, Time: testT0,
		Detail: "SNI evil\u202egnp.exe\x1b]0;t\x07, not decrypted: no key log"}
	got = render(t, func(b *bytes.Buffer) error { return EventLine(b, tls, Options{}) })
	if want := `12:01:02.345 stream 4 10.0.0.5:53412 → 10.0.0.9:9092 TLS packet 4 (SNI evil\u202egnp.exe\x1b]0;t\a, not decrypted: no key log)` + "\n"; got != want {
		t.Errorf("EventLine of a TLS event:\n got  %s want %s", got, want)
	}

	var s SummaryCounts
	s.Packets, s.Connections = 1200, 3
	s.Event(&dissect.Event{Kind: dissect.EventOpen})
	s.Event(&dissect.Event{Kind: dissect.EventOpen})
	s.Event(&dissect.Event{Kind: dissect.EventSkipped})
	s.AddDissect(dissect.Summary{Problems: dissect.Problems{Gaps: 1, GapBytes: 1460, Resyncs: 1}})
	s.Exchange(produceExchange(0, 6))
	s.Exchange(produceExchange(6, 6))
	un := produceExchange()
	un.Kind, un.Response = dissect.KindUnanswered, nil
	s.Exchange(un)
	got = render(t, func(b *bytes.Buffer) error { return Summary(b, &s, Options{}) })
	checkLines(t, got, []string{
		"packets 1200, connections 3 (2 Kafka, 1 skipped)",
		"exchanges 3: 2 paired, 1 unanswered",
		"errors: NOT_LEADER_OR_FOLLOWER×3",
		"anomalies: 1 gap (1460 bytes), 1 resync",
	})

	// Two capture files' dissector summaries add up.
	s.AddDissect(dissect.Summary{Frames: 5, OutOfOrder: 1, Problems: dissect.Problems{ResyncBytes: 7}, SkipReasons: []dissect.Reason{{Reason: "TLS", Count: 1}, {Reason: "not on a Kafka port", Count: 2}}})
	s.AddDissect(dissect.Summary{Frames: 1, DuplicateIDs: 2, Unknown: 2, Problems: dissect.Problems{Truncated: 1}, SkipReasons: []dissect.Reason{{Reason: "HTTP", Count: 1}, {Reason: "not on a Kafka port", Count: 1}}})
	got = render(t, func(b *bytes.Buffer) error { return Summary(b, &s, Options{}) })
	checkLines(t, got, []string{
		"packets 1200, connections 3 (2 Kafka, 1 skipped: 1 HTTP, 1 TLS, 3 not on a Kafka port)",
		"frames 6, exchanges 3: 2 paired, 1 unanswered",
		"errors: NOT_LEADER_OR_FOLLOWER×3",
		"anomalies: 2 frames of unknown API keys or versions (kept raw), 1 gap (1460 bytes), 1 resync (7 bytes skipped), 1 truncated frame, 1 out-of-order response, 2 duplicate correlation IDs",
	})
}

// The exchange document's keys are pinned: changing them breaks users' jq.
func TestExchangeJSONFields(t *testing.T) {
	e := produceExchange(0, 6)
	got := render(t, func(b *bytes.Buffer) error { return ExchangeJSON(b, e, Options{}) })
	if strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
		t.Fatalf("not one line: %q", got)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, got)
	}
	keys := func(m map[string]json.RawMessage) string {
		var k []string
		for key := range m {
			k = append(k, key)
		}
		slices.Sort(k)
		return strings.Join(k, ",")
	}
	if got, want := keys(doc), "api,apiKey,apiVersion,broker,client,clientId,clientIdNotCaptured,correlationId,errors,facts,file,guess,kind,latencyMs,notes,request,response,sasl,stream,subject,topics"; got != want {
		t.Errorf("exchange keys %s\nwant %s", got, want)
	}
	var fd map[string]json.RawMessage
	if err := json.Unmarshal(doc["facts"], &fd); err != nil {
		t.Fatal(err)
	}
	if got, want := keys(fd), "acks,apiVersions,clientSoftware,commit,coordinators,described,errors,forgotten,group,groups,isolationLevel,maxWaitMs,producer,resources,throttleTimeMs,timeoutMs,topics,transactions,validateOnly"; got != want {
		t.Errorf("facts keys %s\nwant %s", got, want)
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(doc["request"], &req); err != nil {
		t.Fatal(err)
	}
	if got, want := keys(req), "body,capturedBytes,error,frame,header,lastFrame,size,time,unknown,unknownTaggedFields"; got != want {
		t.Errorf("request keys %s\nwant %s", got, want)
	}
	var d struct {
		Stream    int
		Kind      string
		API       string
		LatencyMs float64
		Errors    []string
		Request   struct {
			Time string
			Size int
			Body struct {
				TopicData []struct {
					PartitionData []struct {
						Records []struct {
							Compression string
							BaseOffset  int64
							Records     []struct {
								Offset    int64
								Timestamp int64
								Key       any
								Value     any
								ValueSize int
							}
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(got), &d); err != nil {
		t.Fatal(err)
	}
	if d.Stream != 3 || d.Kind != "paired" || d.API != "Produce" || d.LatencyMs != 2.412 ||
		!slices.Equal(d.Errors, []string{"NOT_LEADER_OR_FOLLOWER"}) ||
		d.Request.Time != "2026-11-29T12:01:02.345678Z" || d.Request.Size != 327 {
		t.Errorf("exchange fields: %+v", d)
	}
	parts := d.Request.Body.TopicData[0].PartitionData
	if len(parts) != 2 || parts[1].Records[0].Compression != "gzip" {
		t.Fatalf("records not typed: %s", got)
	}
	r := parts[1].Records[0].Records
	if len(r) != 2 || r[1].Offset != 1 || r[1].Timestamp != 1764417600010 || r[0].Key != "k1" || r[1].Key != nil ||
		r[1].ValueSize != 3 || fmt.Sprint(r[1].Value) != "/wAB" || !strings.Contains(got, `"value":"/wAB","valueEncoding":"base64"`) ||
		!strings.Contains(got, `"key":"k1","keyEncoding":"text"`) {
		t.Errorf("records: %+v", r)
	}

	// Values hex, cut at 2 bytes.
	got = render(t, func(b *bytes.Buffer) error { return ExchangeJSON(b, e, Options{Values: ValuesHex, MaxValue: 2}) })
	if !strings.Contains(got, `"key":"6b31","keyEncoding":"hex","keySize":2,"value":"7b22","valueEncoding":"hex","valueSize":42,"valueTruncated":true`) {
		t.Errorf("hex values: %s", got)
	}

	// No response: nulls, not missing keys.
	un := produceExchange()
	un.Kind, un.Response, un.Conn = dissect.KindUnanswered, nil, nil
	got = render(t, func(b *bytes.Buffer) error { return ExchangeJSON(b, un, Options{}) })
	for _, want := range []string{`"stream":-1`, `"kind":"unanswered"`, `"response":null`, `"latencyMs":null`, `"sasl":null`, `"errors":[]`, `"notes":[]`} {
		if !strings.Contains(got, want) {
			t.Errorf("unanswered JSON lacks %s: %s", want, got)
		}
	}
}

// Unknown tagged fields are listed with path, tag, size and bytes.
func TestUnknownTaggedFields(t *testing.T) {
	b := newBuilder()
	b.int("Length", "int32", 4, 0)
	b.strct("RequestHeader", "header")
	b.int("RequestApiKey", "int16", 2, 18)
	b.int("RequestApiVersion", "int16", 2, 3)
	b.int("CorrelationId", "int32", 4, 1)
	b.str("ClientId", "c", false)
	tags := b.open(&protocol.Node{Name: "TaggedFields", Kind: protocol.KindTaggedFields, Int: 1}, []byte{1})
	u := b.add(&protocol.Node{Name: "UNKNOWN(5)", Kind: protocol.KindUnknownTag, Flags: protocol.FlagTagged | protocol.FlagUnknown, Int: 5,
		Note: "unknown tag 5, 2 bytes"}, []byte{5, 2, 0xca, 0xfe})
	b.setRaw(u, 2)
	b.close()
	_ = tags
	b.close()
	body := b.strct("ApiVersionsRequest", "request")
	body.Note = "v3"
	b.str("ClientSoftwareName", "k", true)
	b.str("ClientSoftwareVersion", "1", true)
	b.tags()
	b.close()
	tr := b.frame()
	checkCoverage(t, "unknown tag", tr)
	tree := render(t, func(w *bytes.Buffer) error { return Tree(w, tr, Options{}) })
	if !strings.Contains(tree, "\n    UNKNOWN(5): unknown tag 5, 2 bytes at 0x10: 0xcafe (unknown tag 5, 2 bytes) [tagged] [unknown]\n") {
		t.Errorf("tree:\n%s", tree)
	}
	js := render(t, func(w *bytes.Buffer) error { return TreeJSON(w, tr, Options{}) })
	if !strings.Contains(js, `"unknownTaggedFields":[{"path":"RequestHeader","tag":5,"size":2,"offset":16,"space":0,"hex":"cafe"}]`) {
		t.Errorf("TreeJSON: %s", js)
	}
}

// With Color off nothing writes an escape code; with it on, roles are
// colored.
func TestColor(t *testing.T) {
	e := produceExchange(0, 6)
	e.Notes = []string{"a note"}
	tr := produceV9()
	run := func(o Options) string {
		var buf bytes.Buffer
		for _, f := range []func() error{
			func() error { return Line(&buf, e, o) },
			func() error { return Tree(&buf, tr, o) },
			func() error { return Tree(&buf, e.Response.Tree, o) },
			func() error { return Hex(&buf, tr, o) },
			func() error { return ExchangeJSON(&buf, e, o) },
			func() error { return TreeJSON(&buf, tr, o) },
			func() error {
				return EventLine(&buf, &dissect.Event{Kind: dissect.EventGap, Bytes: 5, Time: testT0}, o)
			},
			func() error { return Summary(&buf, &SummaryCounts{Paired: 1, Problems: dissect.Problems{Gaps: 1}}, o) },
		} {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}
		return buf.String()
	}
	if off := run(Options{}); strings.ContainsRune(off, 0x1b) {
		t.Errorf("escape codes with Color off")
	}
	on := run(Options{Color: true})
	for _, r := range []role{roleOffset, roleName, roleValue, roleError, roleNote, roleAPI, roleLatency} {
		if !strings.Contains(on, escapes[r][0]) {
			t.Errorf("role %d never colored", r)
		}
	}
	if strings.Contains(render(t, func(b *bytes.Buffer) error { return ExchangeJSON(b, e, Options{Color: true}) }), "\x1b") {
		t.Error("JSON colored")
	}
}

// A value marked FlagRedacted never reaches the output.
func TestRedaction(t *testing.T) {
	const secret = "hunter2-secret"
	// SaslAuthenticate v0 with a PLAIN token, decoded by protocol.
	token := "\x00alice\x00" + secret
	b := newBuilder()
	b.int("Length", "int32", 4, 0)
	b.int("RequestApiKey", "int16", 2, 36)
	b.int("RequestApiVersion", "int16", 2, 0)
	b.int("CorrelationId", "int32", 4, 9)
	b.str("ClientId", "c", false)
	b.bytes("AuthBytes", []byte(token), false)
	frame := b.frame().Spaces[0].Data

	hand := apiVersionsV0()
	hand.Root.Children[1].Child("ClientId").Flags |= protocol.FlagRedacted
	hand.Root.Children[1].Child("ClientId").Str = secret

	trees := map[string]*protocol.Tree{
		"decoded":    protocol.DecodeRequest(frame),
		"hand-built": hand,
	}
	var ad protocol.Decoder
	ad.ShowSecrets = true
	shown := ad.DecodeRequest(frame)

	for name, tr := range trees {
		e := &dissect.Exchange{Kind: dissect.KindUnanswered, APIKey: 36, Request: &dissect.Frame{Tree: tr, Bytes: tr.Spaces[0].Data}}
		for what, out := range map[string]string{
			"Tree":         render(t, func(w *bytes.Buffer) error { return Tree(w, tr, Options{}) }),
			"Hex":          render(t, func(w *bytes.Buffer) error { return Hex(w, tr, Options{}) }),
			"TreeJSON":     render(t, func(w *bytes.Buffer) error { return TreeJSON(w, tr, Options{}) }),
			"ExchangeJSON": render(t, func(w *bytes.Buffer) error { return ExchangeJSON(w, e, Options{}) }),
			"Line":         render(t, func(w *bytes.Buffer) error { return Line(w, e, Options{}) }),
		} {
			if strings.Contains(out, secret) || strings.Contains(out, hex.EncodeToString([]byte(secret))[:8]) {
				t.Errorf("%s %s: secret printed:\n%s", name, what, out)
			}
			if what == "Tree" && !strings.Contains(out, redacted) {
				t.Errorf("%s Tree: no %s marker:\n%s", name, redacted, out)
			}
		}
	}
	// No output gives the secret's length: the dump shows one line for
	// it, the JSON the fixed marker in place of its bytes.
	checkCoverage(t, "redacted", trees["decoded"])
	x := render(t, func(w *bytes.Buffer) error { return Hex(w, trees["decoded"], Options{}) })
	wantLine := "+0007  <redacted>" + strings.Repeat(" ", hexColumn-len(redacted)+2) + "SaslAuthenticateRequest.AuthBytes.password\n"
	if strings.Contains(x, "**") || !strings.Contains(x, wantLine) {
		t.Errorf("Hex: want the line %q and no masked bytes:\n%s", wantLine, x)
	}
	for _, tr := range []*protocol.Tree{trees["decoded"], shown} {
		e := &dissect.Exchange{Kind: dissect.KindUnanswered, APIKey: 36, Request: &dissect.Frame{Tree: tr, Bytes: tr.Spaces[0].Data}}
		for _, o := range []Options{{}, {ShowSecrets: true}} {
			var doc struct {
				Request struct{ Body struct{ AuthBytes []byte } }
			}
			js := render(t, func(w *bytes.Buffer) error { return ExchangeJSON(w, e, o) })
			if err := json.Unmarshal([]byte(js), &doc); err != nil {
				t.Fatal(err)
			}
			want := token // shown: the decoder flagged nothing; ShowSecrets: shown
			if !o.ShowSecrets && tr != shown {
				want = "\x00alice\x00<redacted>"
			}
			if got := string(doc.Request.Body.AuthBytes); got != want {
				t.Errorf("ExchangeJSON (ShowSecrets %v): authBytes %q, want %q", o.ShowSecrets, got, want)
			}
		}
	}
	dec := render(t, func(w *bytes.Buffer) error { return Tree(w, trees["decoded"], Options{}) })
	if !strings.Contains(dec, `username: "alice"`) {
		t.Errorf("the username is not a secret:\n%s", dec)
	}
	// Shown when asked for, by the decoder and by render.
	out := render(t, func(w *bytes.Buffer) error { return Tree(w, shown, Options{ShowSecrets: true}) })
	if !strings.Contains(out, secret) {
		t.Errorf("ShowSecrets: secret not shown:\n%s", out)
	}
	out = render(t, func(w *bytes.Buffer) error { return Tree(w, hand, Options{ShowSecrets: true}) })
	if !strings.Contains(out, secret) {
		t.Errorf("ShowSecrets on a hand-built tree: secret not shown:\n%s", out)
	}
}

// A decoding error and undecoded bytes are shown, nothing lost: the
// bytes withheld by default (they may hold credentials), shown with
// --show-secrets.
func TestDecodeErrorShown(t *testing.T) {
	frame := mustHex(t, apiVersionsHex)
	frame = append(frame, 0xde, 0xad) // leftover after an empty v0 body
	frame[3] += 2
	if tree := render(t, func(w *bytes.Buffer) error { return Tree(w, protocol.DecodeRequest(frame), Options{}) }); !strings.Contains(tree,
		"leftover: <redacted> (2 bytes left over after ApiVersionsRequest v0; withheld: bytes not decoded may hold credentials)") ||
		strings.Contains(tree, "de ad") || !strings.Contains(tree, "error: ") {
		t.Errorf("tree by default:\n%s", tree)
	}
	tr := (&protocol.Decoder{ShowSecrets: true}).DecodeRequest(frame)
	if tr.Err == nil {
		t.Fatal("decoder accepted leftover bytes")
	}
	checkCoverage(t, "leftover", tr)
	tree := render(t, func(w *bytes.Buffer) error { return Tree(w, tr, Options{ShowSecrets: true}) })
	if !strings.Contains(tree, "00000017  de ad") || !strings.Contains(tree, "error: ") {
		t.Errorf("tree:\n%s", tree)
	}
	js := render(t, func(w *bytes.Buffer) error { return TreeJSON(w, tr, Options{}) })
	if !strings.Contains(js, `"error":"`) {
		t.Errorf("TreeJSON: %s", js)
	}
	e := &dissect.Exchange{Kind: dissect.KindUnanswered, APIKey: 18, Request: &dissect.Frame{Tree: tr, Bytes: frame}}
	line := render(t, func(w *bytes.Buffer) error { return Line(w, e, Options{}) })
	if !strings.Contains(line, "[decode error: ") {
		t.Errorf("line: %s", line)
	}
}

// A failing writer's error is returned.
func TestWriteError(t *testing.T) {
	tr := produceV9()
	for name, f := range map[string]func(w *failWriter) error{
		"Tree":    func(w *failWriter) error { return Tree(w, tr, Options{}) },
		"Hex":     func(w *failWriter) error { return Hex(w, tr, Options{}) },
		"Line":    func(w *failWriter) error { return Line(w, produceExchange(0), Options{}) },
		"JSON":    func(w *failWriter) error { return ExchangeJSON(w, produceExchange(0), Options{}) },
		"HexDump": func(w *failWriter) error { return HexDump(w, tr.Spaces[0].Data, 0) },
	} {
		if err := f(&failWriter{}); err == nil {
			t.Errorf("%s: no error from a failing writer", name)
		}
	}
}

type failWriter struct{}

func (*failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

// Nil and empty inputs do not panic.
func TestEmptyInputs(t *testing.T) {
	var buf bytes.Buffer
	_ = Tree(&buf, nil, Options{})
	_ = Tree(&buf, &protocol.Tree{}, Options{})
	_ = Hex(&buf, nil, Options{})
	_ = Hex(&buf, &protocol.Tree{Spaces: []protocol.Space{{Data: []byte{1, 2}}}}, Options{})
	_ = TreeJSON(&buf, nil, Options{})
	_ = Line(&buf, &dissect.Exchange{}, Options{})
	_ = ExchangeJSON(&buf, &dissect.Exchange{}, Options{})
	_ = EventLine(&buf, &dissect.Event{}, Options{})
	if !strings.Contains(buf.String(), "(nothing decoded)") || !strings.Contains(buf.String(), "0000  01 02") {
		t.Errorf("output:\n%s", buf.String())
	}
}

func BenchmarkLine(b *testing.B) {
	e := produceExchange(0, 6)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Line(&buf, e, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTree(b *testing.B) {
	tr := produceV9()
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Tree(&buf, tr, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHex(b *testing.B) {
	tr := produceV9()
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Hex(&buf, tr, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExchangeJSON(b *testing.B) {
	e := produceExchange(0, 6)
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := ExchangeJSON(&buf, e, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// The one-line renderer runs once per exchange on captures of millions:
// it must stay cheap.
func TestLineAllocs(t *testing.T) {
	e := produceExchange(0, 6)
	var buf bytes.Buffer
	allocs := testing.AllocsPerRun(200, func() {
		buf.Reset()
		_ = Line(&buf, e, Options{})
	})
	if allocs > 6 {
		t.Errorf("Line: %.0f allocations per exchange, budget 6", allocs)
	}
}

// A legacy (magic 0) message set and a partial batch, decoded by protocol.
func TestLegacyAndPartialRecords(t *testing.T) {
	// Message v0 at offset 5: crc, magic 0, attributes 0, key null, value "abc".
	body := []byte{0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 3, 'a', 'b', 'c'}
	msg := binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(body))
	msg = append(msg, body...)
	set := binary.BigEndian.AppendUint64(nil, 5)
	set = binary.BigEndian.AppendUint32(set, uint32(len(msg)))
	set = append(set, msg...)
	d := protocol.Decoder{Records: true}
	tr := d.DecodeRecordBatches(set)
	checkCoverage(t, "legacy", tr)
	checkLines(t, render(t, func(w *bytes.Buffer) error { return Tree(w, tr, Options{}) }), []string{
		"Records 29 bytes, 1 batch",
		"  Message v0 offset 5, uncompressed, crc ok",
		"    Offset: 5",
		"    MessageSize: 17",
		"    Crc: 0x43dc3faf (ok)",
		"    Magic: 0",
		"    Attributes: 0 (codec=none)",
		"    Key: null",
		"    Value: \"abc\"",
	})

	// A Kafka-written batch followed by the first 30 bytes of another, as
	// a Fetch response may end.
	batch := mustHex(t, "000000000000000000000043ffffffff02616355c40000000000000000018bcfe568000000018bcfe56800ffffffffffffffffffffffffffff0000000122000000046b311276616c75652d6f6e6500")
	tr = d.DecodeRecordBatches(append(slices.Clip(batch), batch[:30]...))
	checkCoverage(t, "partial", tr)
	tree := render(t, func(w *bytes.Buffer) error { return Tree(w, tr, Options{MaxValue: 16}) })
	for _, want := range []string{
		"Records 109 bytes, 1 batch and a partial one",
		"  RecordBatch offset 0, 1 record, uncompressed, 2023-11-14T22:13:20.000Z, crc ok",
		"      [0] offset 0 timestamp 2023-11-14T22:13:20.000Z",
		"  PartialBatch: <redacted> (partial batch (normal): 30 of 79 bytes, base offset 0; withheld: records cut short cannot be told free of credentials (--show-secrets shows them))",
	} {
		if !strings.Contains(tree, want+"\n") {
			t.Errorf("tree lacks %q:\n%s", want, tree)
		}
	}
	if strings.Contains(tree, "0000004f") {
		t.Errorf("the withheld partial batch's bytes are shown:\n%s", tree)
	}

	// --show-secrets shows its bytes, up to the value limit.
	d.ShowSecrets = true
	tr = d.DecodeRecordBatches(append(slices.Clip(batch), batch[:30]...))
	tree = render(t, func(w *bytes.Buffer) error { return Tree(w, tr, Options{MaxValue: 16, ShowSecrets: true}) })
	for _, want := range []string{
		"  PartialBatch: 30 bytes not decoded (partial batch (normal): 30 of 79 bytes, base offset 0)",
		"    0000004f  00 00 00 00 00 00 00 00  00 00 00 43 ff ff ff ff  |...........C....|",
		"    ... (30 bytes)",
	} {
		if !strings.Contains(tree, want+"\n") {
			t.Errorf("tree with secrets shown lacks %q:\n%s", want, tree)
		}
	}
}

// A tree with spans that break the decoder's invariants (overlaps, a child
// past the end, a negative offset, a space index out of range) renders
// without panicking, and the dump still lists every byte once.
func TestHexBrokenTree(t *testing.T) {
	data := []byte("0123456789")
	root := &protocol.Node{Name: "RequestFrame", Type: "frame", Kind: protocol.KindStruct, Len: 10, Children: []*protocol.Node{
		{Name: "a", Kind: protocol.KindInt, Off: 2, Len: 4},
		{Name: "b", Kind: protocol.KindInt, Off: 3, Len: 2}, // inside a
		{Name: "c", Kind: protocol.KindBytes, Off: 8, Len: 9, Raw: data[8:]},
		{Name: "d", Kind: protocol.KindInt, Off: -5, Len: 1},
		{Name: "e", Kind: protocol.KindInt, Off: 40, Len: 3},
		{Name: "f", Kind: protocol.KindInt, Space: 7, Off: 1, Len: 1},
		{Name: "g", Kind: protocol.KindStruct, Off: 1, Len: 3, Children: []*protocol.Node{{Name: "h", Kind: protocol.KindInt, Off: 0, Len: 20}}},
	}}
	tr := &protocol.Tree{Root: root, Spaces: []protocol.Space{{Name: "frame", Data: data}}}
	checkCoverage(t, "broken", tr)
	var buf bytes.Buffer
	for _, f := range []func() error{
		func() error { return Tree(&buf, tr, Options{}) },
		func() error { return TreeJSON(&buf, tr, Options{}) },
	} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
}

// legacyMessage returns one magic 1 message at offset off: attributes
// attrs, timestamp 1700000000000, a null key and value v.
func legacyMessage(off int64, attrs byte, v []byte) []byte {
	body := []byte{1, attrs}
	body = binary.BigEndian.AppendUint64(body, 1700000000000)
	body = binary.BigEndian.AppendUint32(body, 0xffffffff)
	body = binary.BigEndian.AppendUint32(body, uint32(len(v)))
	body = append(body, v...)
	msg := binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(body))
	msg = append(msg, body...)
	out := binary.BigEndian.AppendUint64(nil, uint64(off))
	out = binary.BigEndian.AppendUint32(out, uint32(len(msg)))
	return append(out, msg...)
}

// A compressed legacy wrapper: its inner messages are a JSON array, the
// summary counts them from the first absolute offset, and the tree says
// how many it holds.
func TestLegacyWrapper(t *testing.T) {
	var inner []byte
	for i := range 3 {
		inner = append(inner, legacyMessage(int64(i), 0, []byte{'v', byte('0' + i)})...) // relative offsets 0..2
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(inner)
	zw.Close()
	set := legacyMessage(12, 1, z.Bytes()) // the wrapper carries the last absolute offset
	d := protocol.Decoder{Records: true}
	tr := d.DecodeRecordBatches(set)
	checkCoverage(t, "legacy wrapper", tr)
	// The wrapper's compressed value past 3 bytes is one elision line.
	x := render(t, func(w *bytes.Buffer) error { return Hex(w, tr, Options{MaxValue: 3}) })
	val := tr.Root.Children[0].Child("Value")
	first := val.End() - len(val.Raw) + 3
	wantLine := fmt.Sprintf("      … %d more bytes of Value (offset 0x%x – 0x%x)\n", len(val.Raw)-3, first, val.End()-1)
	if !strings.Contains(x, wantLine) {
		t.Errorf("Hex lacks %q:\n%s", wantLine, x)
	}
	if !strings.Contains(x, "  Message[0].MessageSet.Message[2].Value \"v2\"\n") {
		t.Errorf("Hex: inner messages not numbered:\n%s", x)
	}
	w := tr.Root.Children[0]
	if bi := batchSummary(w); bi.baseOffset != 10 || bi.count != 3 || !bi.wrapper {
		t.Errorf("batchSummary = offset %d, count %d, wrapper %v; want 10, 3, true", bi.baseOffset, bi.count, bi.wrapper)
	}
	if got, want := batchDescription(w), "v1 offset 12, 3 messages, gzip, crc ok"; got != want {
		t.Errorf("batchDescription = %q, want %q", got, want)
	}
	// An uncompressed legacy message is one message at its own offset.
	if bi := batchSummary(d.DecodeRecordBatches(legacyMessage(7, 0, []byte("x"))).Root.Children[0]); bi.baseOffset != 7 || bi.count != 1 {
		t.Errorf("uncompressed: offset %d, count %d; want 7, 1", bi.baseOffset, bi.count)
	}

	j := &jsonWriter{o: &Options{}, typedRecords: true}
	doc := j.value(nil, tr.Root, "Records", nil, false)
	if err := checkNoDuplicateKeys(doc); err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	var got []struct {
		Compression string
		Offset      int64
		MessageSet  []struct {
			Offset int64
			Value  string
		}
	}
	if err := json.Unmarshal(doc, &got); err != nil {
		t.Fatalf("%v: %s", err, doc)
	}
	if len(got) != 1 || got[0].Compression != "gzip" || got[0].Offset != 12 || len(got[0].MessageSet) != 3 {
		t.Fatalf("JSON: %s", doc)
	}
	for i, m := range got[0].MessageSet {
		if m.Offset != int64(i) || m.Value != "v"+strconv.Itoa(i) {
			t.Errorf("inner message %d: offset %d value %q\n%s", i, m.Offset, m.Value, doc)
		}
	}
}

// checkNoDuplicateKeys walks a JSON text and reports an object key that
// appears twice in one object.
func checkNoDuplicateKeys(doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	var walk func() error
	walk = func() error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if seen[k.(string)] {
					return fmt.Errorf("key %q repeated", k)
				}
				seen[k.(string)] = true
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	return walk()
}

// TestSummaryErrorCounts: the summary counts every error code, in order
// of first appearance, whether an exchange brings a new code or only
// codes counted before; the latter costs no allocation.
func TestSummaryErrorCounts(t *testing.T) {
	var s SummaryCounts
	s.Exchange(produceExchange(6, 0, 6))
	s.Exchange(produceExchange(6, 3)) // one new code
	seen := produceExchange(3, 6, 6)  // none new
	s.Exchange(seen)
	want := []ErrorCount{{Name: "NOT_LEADER_OR_FOLLOWER", Code: 6, Count: 5}, {Name: "UNKNOWN_TOPIC_OR_PARTITION", Code: 3, Count: 2}}
	if len(s.Errors) != len(want) {
		t.Fatalf("errors %+v", s.Errors)
	}
	for i, w := range want {
		if g := s.Errors[i]; g.Name != w.Name || g.Code != w.Code || g.Count != w.Count {
			t.Errorf("error %d: %+v, want %+v", i, g, w)
		}
	}
	if n := testing.AllocsPerRun(100, func() { s.Exchange(seen) }); n != 0 {
		t.Errorf("%.1f allocations to count an exchange of codes counted before", n)
	}
	if s.Errors[0].Count != 5+2*101 || s.Errors[1].Count != 2+101 {
		t.Errorf("after 101 more: %+v", s.Errors)
	}
}

// TestAppendClockAgrees: a line's time of day is what
// t.UTC().Format("15:04:05.000") gives (milliseconds truncated), with
// and without color, for times in any zone, before 1970 and far ahead.
func TestAppendClockAgrees(t *testing.T) {
	zone := time.FixedZone("X", -(9*3600 + 30*60))
	times := []time.Time{
		time.Date(2026, 12, 1, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 1_000_000, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
		time.Date(9999, 12, 31, 12, 34, 56, 789_123_456, zone),
		time.Unix(-1, 999_999), time.Unix(1733011262, 345_678_901).In(zone),
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		times = append(times, time.Unix(r.Int64N(1<<36)-1<<35, r.Int64N(1e9)).In(zone))
	}
	for _, tm := range times {
		want := tm.UTC().Format("15:04:05.000")
		if got := string(appendClock(nil, tm, false)); got != want {
			t.Fatalf("%v: %q, want %q", tm, got, want)
		}
		if got, want := string(appendClock(nil, tm, true)), string(paint(nil, true, roleOffset, want)); got != want {
			t.Fatalf("%v in color: %q, want %q", tm, got, want)
		}
	}
}

// TestNeedsQuoteAgrees: the quick test of plain ASCII words agrees with
// the full one (spaces, tabs, newlines, quotes, unprintable bytes) on
// every string of one and two bytes, on UTF-8 and on random strings.
func TestNeedsQuoteAgrees(t *testing.T) {
	full := func(s string) bool { return strings.ContainsAny(s, " \"") || !termsafe.Safe(s) }
	words := []string{"", "capgen-kgo-admin", "rdkafka", "consumer-1-0b9c", "a b", "x\"y", "é", "\u200b", "日本", "\xff", "a\x7f", "tab\t", "cr\r", "c1\u009b", "bidi\u202e"}
	for c := range 256 {
		words = append(words, string([]byte{byte(c)}), string([]byte{'a', byte(c)}), string([]byte{byte(c), 'z'}))
		for d := range 256 {
			words = append(words, string([]byte{byte(c), byte(d)}))
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(0x20 + r.IntN(0x60))
			if r.IntN(20) == 0 {
				b[i] = byte(r.IntN(256))
			}
		}
		words = append(words, string(b))
	}
	for _, w := range words {
		if got, want := needsQuote(w), full(w); got != want {
			t.Fatalf("needsQuote(%q) = %v, want %v", w, got, want)
		}
	}
}

// oneRecordBatch returns an uncompressed record batch (magic 2) at base
// offset 7 holding one record with key and value, its CRC-32C right.
func oneRecordBatch(key, value []byte) []byte {
	varint := func(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }
	rec := []byte{0}     // attributes
	rec = varint(rec, 0) // timestamp delta
	rec = varint(rec, 0) // offset delta
	rec = varint(rec, int64(len(key)))
	rec = append(rec, key...)
	rec = varint(rec, int64(len(value)))
	rec = append(rec, value...)
	rec = varint(rec, 0) // headers
	b := binary.BigEndian.AppendUint64(nil, 7)
	b = binary.BigEndian.AppendUint32(b, 0) // batch length, below
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	b = append(b, 2, 0, 0, 0, 0)    // magic, crc (below)
	b = append(b, 0, 0, 0, 0, 0, 0) // attributes, last offset delta
	b = binary.BigEndian.AppendUint64(b, 0)
	b = binary.BigEndian.AppendUint64(b, 0)
	b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff) // producer id, epoch, base sequence
	b = binary.BigEndian.AppendUint32(b, 1)
	b = varint(b, int64(len(rec)))
	b = append(b, rec...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// A RECORDS field written as JsonConverter writes it (the base64 of its
// bytes, kwire decode --json) holding a withheld record value (a Kafka
// Connect configuration record) or a partial batch is written typed
// instead, so that the base64 does not carry what the tree withholds; with
// the secrets shown it is the base64 again.
func TestTreeJSONRecordsWithheld(t *testing.T) {
	const pw = "Qz-JSON-RECORDS-PW"
	batch := oneRecordBatch([]byte("connector-db"), []byte(`{"properties":{"database.password":"`+pw+`"}}`))
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"connect record", batch},
		{"partial batch", append(oneRecordBatch([]byte("k"), []byte("v")), batch[:len(batch)-4]...)},
	} {
		for _, show := range []bool{false, true} {
			tr := (&protocol.Decoder{Records: true, ShowSecrets: show}).DecodeRecordBatches(tc.in)
			js := render(t, func(b *bytes.Buffer) error { return TreeJSON(b, tr, Options{ShowSecrets: show}) })
			var doc TreeDoc
			if err := json.Unmarshal([]byte(js), &doc); err != nil {
				t.Fatalf("%s: %v\n%s", tc.name, err, js)
			}
			var b64 string
			isB64 := json.Unmarshal(doc.Body, &b64) == nil
			if show {
				if got, _ := base64.StdEncoding.DecodeString(b64); !isB64 || !bytes.Equal(got, tc.in) {
					t.Errorf("%s, secrets shown: body %s, want the base64 of the bytes", tc.name, doc.Body)
				}
				continue
			}
			if isB64 || !strings.Contains(js, "<redacted>") && !strings.Contains(js, `\u003credacted\u003e`) && !strings.Contains(js, "PHJlZGFjdGVkPg==") {
				t.Errorf("%s: body %s, want typed records with the withheld part marked", tc.name, doc.Body)
			}
			for _, form := range []string{pw, base64.StdEncoding.EncodeToString([]byte(pw))[:16], hex.EncodeToString([]byte(pw))} {
				if strings.Contains(js, form) {
					t.Errorf("%s: the JSON shows the password (%q):\n%s", tc.name, form, js)
				}
			}
			// The base64 of the password may start anywhere in a base64
			// run: decode every string and look in the bytes.
			if strings.Contains(decodeAllBase64(js), pw) {
				t.Errorf("%s: a base64 string in the JSON holds the password:\n%s", tc.name, js)
			}
		}
	}
}

// decodeAllBase64 returns the concatenated decodings of every JSON string
// of s that is valid standard base64.
func decodeAllBase64(s string) string {
	var out []byte
	for _, m := range regexp.MustCompile(`"([A-Za-z0-9+/=]{4,})"`).FindAllStringSubmatch(s, -1) {
		if b, err := base64.StdEncoding.DecodeString(m[1]); err == nil {
			out = append(out, b...)
		}
	}
	return string(out)
}

// A JSON record value is indented in -V only when every line of it is
// printable text: one holding a C1 control, a bidirectional override or a
// byte that is not UTF-8 inside a string is shown as any other value is,
// escaped, never raw on the terminal.
func TestTreeJSONValueTerminalSafe(t *testing.T) {
	for _, c := range []struct {
		value  string
		pretty bool
	}{
		{`{"a":"b"}`, true},
		{`{"a":"\u001b]0;x\u0007"}`, true}, // JSON's own escapes are text
		{"{\"k\xc2\x9b31m\":1}", false},    // U+009B, the C1 CSI
		{"{\"a\":\"x\u202egnp.exe\"}", false},
		{"{\"a\x9b\":\"b\"}", false}, // not UTF-8
	} {
		tr := (&protocol.Decoder{Records: true}).DecodeRecordBatches(oneRecordBatch([]byte("k"), []byte(c.value)))
		out := render(t, func(w *bytes.Buffer) error { return Tree(w, tr, Options{}) })
		if got := strings.Contains(out, "Value: JSON, "); got != c.pretty {
			t.Errorf("%q: indented %v, want %v:\n%s", c.value, got, c.pretty, out)
		}
		for _, bad := range []string{"\u009b", "\u202e", "\x9b"} {
			if strings.Contains(out, bad) {
				t.Errorf("%q: the tree holds %q raw:\n%s", c.value, bad, out)
			}
		}
	}
}

// TestAppendInt: appendInt writes what strconv.AppendInt does, around
// its direct cases (0 to 99) and at the extremes.
func TestAppendInt(t *testing.T) {
	vals := []int64{math.MinInt64, math.MaxInt64, -100, -99, -10, -9, -1}
	for v := int64(0); v <= 1000; v++ {
		vals = append(vals, v)
	}
	for _, v := range vals {
		want := strconv.AppendInt([]byte("x="), v, 10)
		if got := appendInt([]byte("x="), v); string(got) != string(want) {
			t.Errorf("appendInt(%d) = %q, want %q", v, got, want)
		}
	}
}
