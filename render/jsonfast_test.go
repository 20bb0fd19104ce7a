package render

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// stdJSON is what encoding/json writes for v (html escaping as json.Marshal
// when html, else as an Encoder with SetEscapeHTML(false), without the
// newline).
func stdJSON(t *testing.T, v any, html bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestFastJSONStrings(t *testing.T) {
	cases := []string{"", "plain", `q"uote`, `back\slash`, "<a href='x'>&amp;</a>", "\u2028\u2029", "é€😀",
		"\x7f\x00\x01\x08\x0c\n\r\t\x1f", "bad \xff\xfe utf8 \xe2\x80", "\xe2\x80\xa8x\xe2\x80\xa9"}
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"b")
	}
	r := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("ab<>&\"\\\x00\x1f\x7f\xe2\x80\xa8\xa9\xff\xc3\xa9 ")
	for range 2000 {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	// appendStdString skips 8 plain bytes at a time: a byte to escape (or
	// not) at every place of a long plain run.
	long := strings.Repeat("kgo client 1.2 ", 3)
	for i := 0; i <= len(long); i++ {
		for _, sp := range []string{"\x00", "\x1f", " ", "~", "\x7f", "\x80", "\xff", `"`, `\\`, "<", ">", "&", "é", "\u2028", "\xe2\x80"} {
			cases = append(cases, long[:i]+sp+long[i:])
		}
	}
	for _, s := range cases {
		if plain := string(stdJSON(t, s, false)) == `"`+s+`"`; stdPlain([]byte(s)) != plain {
			t.Errorf("stdPlain(%q) = %v, want %v", s, !plain, plain)
		}
		for _, html := range []bool{true, false} {
			want := stdJSON(t, s, html)
			if got := appendStdString(nil, s, html); !bytes.Equal(got, want) {
				t.Errorf("string %q html=%v: got %s, encoding/json %s", s, html, got, want)
			}
		}
	}
}

func TestFastJSONFloats(t *testing.T) {
	fs := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.5, 123.456, 1e-6, 9.99e-7, 1e-7, 1.234e-9, 1e20, 1e21, 1.5e21, -1e21,
		1e100, 5e-324, math.MaxFloat64, 12.345678901234567, 0.062, 3.91}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		fs = append(fs, math.Float64frombits(r.Uint64()), r.Float64()*1000, r.NormFloat64()*1e-5)
	}
	for _, f := range fs {
		got, ok := appendStdFloat(nil, f)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			if ok {
				t.Errorf("%v: accepted", f)
			}
			continue
		}
		if want := stdJSON(t, f, true); !ok || !bytes.Equal(got, want) {
			t.Errorf("float %v: got %s (%v), encoding/json %s", f, got, ok, want)
		}
	}
}

func TestFastJSONRaw(t *testing.T) {
	for _, raw := range []string{`{"a":"<b>&\u2028"}`, "[\"\xe2\x80\xa8\",\"\xe2\x80\xa9\",1,null]", `"plain"`, `{"x":[{"y":true}]}`} {
		for _, html := range []bool{true, false} {
			want := stdJSON(t, json.RawMessage(raw), html)
			if got := appendCompactRaw(nil, []byte(raw), html); !bytes.Equal(got, want) {
				t.Errorf("raw %s html=%v: got %s, encoding/json %s", raw, html, got, want)
			}
		}
	}
}

// checkExchangeJSON compares the fast writer with encoding/json on one
// exchange, in every value mode.
func checkExchangeJSON(t *testing.T, name string, e *dissect.Exchange) {
	t.Helper()
	for _, vm := range []ValueMode{ValuesText, ValuesHex, ValuesBase64, ValuesNone} {
		opts := Options{Values: vm}
		var want bytes.Buffer
		d := NewExchangeDoc(e, opts)
		if err := writeJSONLine(&want, d); err != nil {
			t.Fatalf("%s: encoding/json: %v", name, err)
		}
		var got bytes.Buffer
		if err := ExchangeJSON(&got, e, opts); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s (values %d):\n got %s\nwant %s", name, vm, got.Bytes(), want.Bytes())
		}

	}
}

// referenceConverter is converter as encoding/json alone would write it.
func referenceConverter(j *jsonWriter, n *protocol.Node) []byte {
	if n.Kind == protocol.KindRaw {
		return j.value(nil, n, n.Name, nil, false)
	}
	b, err := json.Marshal(j.patch(protocol.BodyJSON(n), n, n.Name, 0))
	if err != nil {
		return j.value(nil, n, n.Name, nil, false)
	}
	return b
}

// Kafka's vectors as bodies: the fast converter writes what encoding/json
// writes, typed records or not.
func TestFastJSONKafkaVectors(t *testing.T) {
	vs := loadVectorsIfPresent(t)
	if vs == nil {
		t.Skip("../shared/kafka-vectors not found (set KWIRE_SHARED)")
	}
	for _, v := range vs {
		tr := decodeVector(t, v)
		if tr == nil || tr.Root == nil {
			continue
		}
		for _, typed := range []bool{false, true} {
			j := &jsonWriter{o: &Options{}, typedRecords: typed}
			want := referenceConverter(j, tr.Root)
			got := (&jsonWriter{o: &Options{}, typedRecords: typed}).converter(tr.Root)
			if !bytes.Equal(got, want) {
				t.Errorf("%s v%d %s typed=%v:\n got %s\nwant %s", v.Message, v.Version, v.Name, typed, got, want)
			}
		}
	}
}

type collectSink struct{ ex []*dissect.Exchange }

func (c *collectSink) Exchange(e *dissect.Exchange) { c.ex = append(c.ex, e) }
func (c *collectSink) Event(*dissect.Event)         {}

// Every exchange of the golden captures: ExchangeJSON writes exactly what
// encoding/json writes for its ExchangeDoc.
func TestFastJSONCaptures(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(files) == 0 {
		t.Skip("no golden captures in ../pcaps")
	}
	ports := pcaps.BrokerPorts()
	total := 0
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
		var s collectSink
		d := dissect.New(dissect.Options{Ports: ports, Decoder: protocol.Decoder{Records: true}}, &s)
		if _, err := reassembly.ReadFiles(context.Background(), []string{f}, reassembly.Options{}, d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		d.Finish()
		total += len(s.ex)
		for i, e := range s.ex {
			checkExchangeJSON(t, filepath.Base(f)+" exchange "+itoa(int64(i)), e)
		}
	}
	if total < 100 {
		t.Errorf("only %d exchanges in the golden captures", total)
	}
}

// Typed records written in place get encoding/json's HTML escaping too.
func TestFastJSONTypedRecordsEscaped(t *testing.T) {
	recs := (&protocol.Decoder{Records: true}).DecodeRecordBatches(legacyMessage(7, 0, []byte("<b>&amp;\u2028</b>")))
	body := &protocol.Node{Name: "Body", Kind: protocol.KindStruct, Children: []*protocol.Node{recs.Root}}
	for _, vm := range []ValueMode{ValuesText, ValuesHex} {
		j := &jsonWriter{o: &Options{Values: vm}, typedRecords: true}
		want := referenceConverter(j, body)
		got := (&jsonWriter{o: &Options{Values: vm}, typedRecords: true}).converter(body)
		if !bytes.Equal(got, want) {
			t.Errorf("values %d:\n got %s\nwant %s", vm, got, want)
		}
		if vm == ValuesText && !bytes.Contains(got, []byte(`\u003cb\u003e\u0026amp;\u2028`)) {
			t.Errorf("value not escaped: %s", got)
		}
	}
}

// FuzzFastJSON decodes arbitrary request frames and checks that the fast
// JSON writer writes what encoding/json writes: the converter, typed
// records or not, and the whole exchange line.
func FuzzFastJSON(f *testing.F) {
	f.Add(mustHex(f, apiVersionsHex))
	f.Add(produceV9().Spaces[0].Data)
	for _, v := range loadVectorsIfPresent(f) {
		if v.Direction != "request" || v.APIKey < 0 {
			continue
		}
		body := mustHex(f, v.Hex)
		hdr := binary.BigEndian.AppendUint16(nil, uint16(v.APIKey))
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(v.Version))
		hdr = binary.BigEndian.AppendUint32(hdr, 7)
		hdr = append(hdr, 0, 1, 'c')
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(hdr)+len(body)))
		f.Add(append(append(frame, hdr...), body...))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		d := protocol.Decoder{Records: true, MaxDecompressed: 1 << 16}
		tr := d.DecodeRequest(frame)
		if tr == nil || tr.Root == nil {
			return
		}
		for _, typed := range []bool{false, true} {
			for _, n := range []*protocol.Node{headerOf(tr), bodyOf(tr)} {
				if n == nil {
					continue
				}
				want := referenceConverter(&jsonWriter{o: &Options{}, typedRecords: typed}, n)
				if got := (&jsonWriter{o: &Options{}, typedRecords: typed}).converter(n); !bytes.Equal(got, want) {
					t.Fatalf("typed=%v %s:\n got %s\nwant %s", typed, n.Name, got, want)
				}
			}
		}
		e := &dissect.Exchange{Kind: dissect.KindNoResponse, APIKey: 0, Notes: []string{"<n>"},
			Request: &dissect.Frame{FirstPacket: 1, LastPacket: 2, Bytes: frame, Tree: tr}}
		checkExchangeJSON(t, "fuzz", e)
	})
}

// appendJSONStr and appendJSONBytes skip runs of 8 plain bytes at a time
// (plainJSONPrefix 32 and 8): they agree with a byte-at-a-time escape of the same table whatever
// byte breaks a run, wherever it falls.
func TestJSONStrRuns(t *testing.T) {
	slow := func(s string, safe *[utf8.RuneSelf]bool) []byte {
		b := []byte{'"'}
		for i := 0; i < len(s); {
			c := s[i]
			if c < utf8.RuneSelf {
				if safe[c] {
					b = append(b, c)
				} else {
					b = appendJSONEscape(b, c)
				}
				i++
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
				b = appendRuneEscape(b, r)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
		return append(b, '"')
	}
	long := strings.Repeat("capgen benchmark value ", 4)
	specials := []string{"\x00", "\x1f", "\x7f", "\x80", "\xff", "\n", `"`, `\`, "<", ">", "&", "é", "\u2028", "\xe2\x80"}
	for i := 0; i <= len(long); i++ {
		for _, sp := range specials {
			s := long[:i] + sp + long[i:]
			for _, safe := range []*[utf8.RuneSelf]bool{&jsonSafe, &jsonSafeHTML} {
				want := slow(s, safe)
				if got := appendJSONStr(nil, s, safe); !bytes.Equal(got, want) {
					t.Fatalf("appendJSONStr(%q) = %s, want %s", s, got, want)
				}
				if got := appendJSONBytes(nil, []byte(s), safe); !bytes.Equal(got, want) {
					t.Fatalf("appendJSONBytes(%q) = %s, want %s", s, got, want)
				}
				plain := 0
				for plain < len(s) && s[plain] < utf8.RuneSelf && safe[s[plain]] {
					plain++
				}
				if got := plainJSONPrefix([]byte(s), safe); got != plain {
					t.Fatalf("plainJSONPrefix(%q) = %d, want %d", s, got, plain)
				}
			}
		}
	}
}

// TestPlainWords holds the eight-byte tests of the plain runs (the ones
// record values are scanned with: notQuotedPlain for text and JSON,
// notPlainHTML for JSON's HTML-safe strings) to their byte-at-a-time
// definitions: every byte value at every position of a plain word, and
// random words with several odd bytes (carries between bytes must not
// hide one).
func TestPlainWords(t *testing.T) {
	plain := func(x uint64, html bool) bool {
		for i := range 8 {
			c := byte(x >> (8 * i))
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
			if html && (c == '<' || c == '>' || c == '&') {
				return false
			}
		}
		return true
	}
	check := func(x uint64) {
		if got, want := notQuotedPlain(x) == 0, plain(x, false); got != want {
			t.Fatalf("notQuotedPlain(%#016x) == 0 is %v, want %v", x, got, want)
		}
		if got, want := notPlainHTML(x) == 0, plain(x, true); got != want {
			t.Fatalf("notPlainHTML(%#016x) == 0 is %v, want %v", x, got, want)
		}
		if got, want := jsonPlain8(x, true), plain(x, true); got != want {
			t.Fatalf("jsonPlain8(%#016x, html) = %v, want %v", x, got, want)
		}
		if got, want := notQuotedPlain(x) == 0, jsonPlain8(x, false); got != want {
			t.Fatalf("notQuotedPlain and jsonPlain8 disagree on %#016x", x)
		}
	}
	const base = 0x6162636465666768 // "hgfedcba"
	for pos := range 8 {
		for c := range 256 {
			x := base&^(0xff<<(8*pos)) | uint64(c)<<(8*pos)
			check(x)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	odd := []byte{0, 0x1f, 0x20, 0x21, '"', '&', '\'', '<', '=', '>', '\\', 0x7e, 0x7f, 0x80, 0xff, 0x22 ^ 4, 0x3c ^ 2}
	for range 200000 {
		var x uint64
		for i := range 8 {
			c := byte('a' + r.IntN(26))
			if r.IntN(4) == 0 {
				c = odd[r.IntN(len(odd))]
			}
			x |= uint64(c) << (8 * i)
		}
		check(x)
	}
}
