package render

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/kwire/kwire/protocol"
)

// benchBatch encodes an uncompressed v2 record batch of n records shaped
// like the benchmark captures' (a short key, a value of size bytes of
// text, no headers); with binary set each value ends in a byte that is not
// UTF-8, so that it shows as hex.
func benchBatch(n, size int, binary_ bool) []byte {
	value := []byte(strings.Repeat("capgen benchmark value ", size/23+1)[:size])
	if binary_ {
		value[size-1] = 0xff
	}
	var recs []byte
	for i := range n {
		var r []byte
		r = append(r, 0) // attributes
		r = binary.AppendVarint(r, int64(i/10))
		r = binary.AppendVarint(r, int64(i))
		key := "p3-" + strconv.Itoa(i)
		r = binary.AppendVarint(r, int64(len(key)))
		r = append(r, key...)
		r = binary.AppendVarint(r, int64(len(value)))
		r = append(r, value...)
		r = binary.AppendVarint(r, 0) // headers
		recs = binary.AppendVarint(recs, int64(len(r)))
		recs = append(recs, r...)
	}
	b := binary.BigEndian.AppendUint64(nil, 1000)    // base offset
	b = binary.BigEndian.AppendUint32(b, 0)          // batch length, set below
	b = binary.BigEndian.AppendUint32(b, 0xffffffff) // partition leader epoch
	b = append(b, 2)                                 // magic
	b = binary.BigEndian.AppendUint32(b, 0)          // CRC, set below
	b = binary.BigEndian.AppendUint16(b, 0)          // attributes
	b = binary.BigEndian.AppendUint32(b, uint32(n-1))
	b = binary.BigEndian.AppendUint64(b, 1700000000000)
	b = binary.BigEndian.AppendUint64(b, 1700000000000+uint64(n/10))
	b = binary.BigEndian.AppendUint64(b, 0xffffffffffffffff) // producer ID
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func benchRecordsTree(tb testing.TB, binary bool) (*protocol.Tree, int) {
	batch := benchBatch(500, 1000, binary)
	d := protocol.Decoder{Records: true}
	tr := d.DecodeRecordBatches(batch)
	if len(tr.Root.Children) != 1 || tr.FirstError() != nil {
		tb.Fatalf("bench batch did not decode: %v", tr.FirstError())
	}
	return tr, len(batch)
}

// BenchmarkTreeRecords renders the -V tree of a 500-record batch of
// 1000-byte values (as kwire read -V does for Produce and Fetch); bytes
// are those of the batch.
func BenchmarkTreeRecords(b *testing.B) {
	for _, bin := range []bool{false, true} {
		name := "text"
		if bin {
			name = "binary"
		}
		b.Run(name, func(b *testing.B) {
			tr, size := benchRecordsTree(b, bin)
			var buf bytes.Buffer
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				if err := Tree(&buf, tr, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkJSONRecords renders the typed JSON records array of the same
// batch (kwire read --json's form of a RECORDS field).
func BenchmarkJSONRecords(b *testing.B) {
	for _, bin := range []bool{false, true} {
		name := "text"
		if bin {
			name = "binary"
		}
		b.Run(name, func(b *testing.B) {
			tr, size := benchRecordsTree(b, bin)
			j := &jsonWriter{o: &Options{}, typedRecords: true}
			var out []byte
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				out = j.value(out[:0], tr.Root, "", nil, false)
			}
		})
	}
}

// The quick printable test agrees with its definition on every short
// input built from interesting bytes.
func TestPrintableFast(t *testing.T) {
	slow := func(b []byte) bool {
		if !utf8.Valid(b) {
			return false
		}
		for _, r := range string(b) {
			if r == '\t' || r == '\n' || r == '\r' {
				continue
			}
			if !unicode.IsPrint(r) && r != ' ' {
				return false
			}
		}
		return true
	}
	pieces := [][]byte{{'a'}, {' '}, {'~'}, {0x7f}, {0x1f}, {'\t'}, {'\n'}, {0}, {0x80}, {0xff},
		[]byte("é"), []byte("\u2028"), []byte("\U0001F600"), {0xe2, 0x82}, []byte("\ufffd"), []byte("0123456789abcdef"), {'"'}, {'\\'}, {'\r'}}
	var walk func(b []byte, depth int)
	walk = func(b []byte, depth int) {
		if got, want := printable(b), slow(b); got != want {
			t.Fatalf("printable(%q) = %v, want %v", b, got, want)
		}
		if printable(b) {
			for _, max := range []int{0, 1, 2, 3, 5, 100} {
				got := string(appendQuotedPrintable(nil, b, len(b), max))
				want := string(appendQuoted(nil, string(b), max))
				if got != want {
					t.Fatalf("appendQuotedPrintable(%q, %d) = %s, want %s", b, max, got, want)
				}
			}
		}
		// A value in text mode: quoted when the part shown is printable,
		// else hex (appendBytesValue scans a plain run once, then printable
		// looks at the rest).
		for _, max := range []int{0, 1, 2, 3, 5, 100} {
			got := string(appendBytesValue(nil, b, len(b), ValuesText, max))
			want := string(appendBytesValue(nil, b, len(b), ValuesHex, max))
			if printable(shownText(b, max)) {
				want = string(appendQuoted(nil, string(b), max))
			}
			if got != want {
				t.Fatalf("appendBytesValue(%q, text, %d) = %s, want %s", b, max, got, want)
			}
		}
		if depth == 3 {
			return
		}
		for _, p := range pieces {
			walk(append(append([]byte(nil), b...), p...), depth+1)
		}
	}
	walk(nil, 0)
	long := []byte(strings.Repeat("capgen benchmark value ", 40))
	for i := range long {
		for _, c := range []byte{0x00, 0x1f, 0x7f, 0x80, 0xff, '\n'} {
			b := bytes.Clone(long)
			b[i] = c
			if got, want := printable(b), slow(b); got != want {
				t.Fatalf("printable with %#x at %d = %v, want %v", c, i, got, want)
			}
			for _, max := range []int{7, 256, len(b)} {
				got := string(appendBytesValue(nil, b, len(b), ValuesText, max))
				want := string(appendBytesValue(nil, b, len(b), ValuesHex, max))
				if slow(shownText(b, max)) {
					want = string(appendQuoted(nil, string(b), max))
				}
				if got != want {
					t.Fatalf("appendBytesValue with %#x at %d, max %d = %s, want %s", c, i, max, got, want)
				}
			}
		}
		for _, c := range []byte{'\t', '\n', '\r', '"', '\\'} { // escaped in runs of 8 skipped whole
			b := bytes.Clone(long)
			b[i] = c
			for _, max := range []int{7, 256, len(b)} {
				got := string(appendQuotedPrintable(nil, b, len(b), max))
				if want := string(appendQuoted(nil, string(b), max)); got != want {
					t.Fatalf("appendQuotedPrintable with %q at %d, max %d = %s, want %s", c, i, max, got, want)
				}
			}
		}
	}
}

// TestAppendQuotedPlain holds appendQuoted's path for plain ASCII to
// strconv.AppendQuote: every string of up to three pieces (bytes that need
// escaping, quotes, backslashes, runes beyond ASCII, runs of 8 that the
// test skips whole), cut or not.
func TestAppendQuotedPlain(t *testing.T) {
	pieces := []string{"a", " ", "~", "\x7f", "\x1f", "\t", "\n", "\x00", "\x80", "\xff", "é", "\u2028",
		"\U0001F600", "\xe2\x82", "\ufffd", "01234567", "0123456789abcdef", `"`, `\`, "\r"}
	check := func(s string) {
		for _, max := range []int{0, 1, 3, 8, 9, 100} {
			u, cut := cutText(s, max)
			want := strconv.AppendQuote([]byte("x"), u)
			if cut {
				want = append(want, "... ("+strconv.Itoa(len(s))+" bytes)"...)
			}
			if got := appendQuoted([]byte("x"), s, max); string(got) != string(want) {
				t.Fatalf("appendQuoted(%q, %d) = %s, want %s", s, max, got, want)
			}
		}
		plain := true
		for i := 0; i < len(s); i++ {
			plain = plain && s[i] >= 0x20 && s[i] < 0x7f && s[i] != '"' && s[i] != '\\'
		}
		if got := plainASCII(s); got != plain {
			t.Fatalf("plainASCII(%q) = %v, want %v", s, got, plain)
		}
	}
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		check(s)
		if depth == 3 {
			return
		}
		for _, p := range pieces {
			walk(s+p, depth+1)
		}
	}
	walk("", 0)
	long := strings.Repeat("capgen-kgo-admin", 5)
	for i := range long {
		for _, c := range []byte{0x00, 0x1f, 0x7f, 0x80, 0xff, '"', '\\', '\n'} {
			b := []byte(long)
			b[i] = c
			check(string(b))
		}
	}
}

// TestAppendUUID holds appendUUID and appendUUIDHex to UUIDString and
// uuidHex, for UUIDs and for the other lengths a damaged field may have.
func TestAppendUUID(t *testing.T) {
	for _, raw := range [][]byte{nil, {0xab}, bytes.Repeat([]byte{0xff}, 15), bytes.Repeat([]byte{0x00}, 16),
		[]byte("\x01\x23\x45\x67\x89\xab\xcd\xef\xfe\xdc\xba\x98\x76\x54\x32\x10"), bytes.Repeat([]byte{0x5a}, 17)} {
		if got, want := string(appendUUID([]byte("x"), raw)), "x"+UUIDString(raw); got != want {
			t.Errorf("appendUUID(%x) = %s, want %s", raw, got, want)
		}
		if got, want := string(appendUUIDHex([]byte("x"), raw)), "x"+uuidHex(raw); got != want {
			t.Errorf("appendUUIDHex(%x) = %s, want %s", raw, got, want)
		}
	}
	if got := uuidHex([]byte("\x01\x23\x45\x67\x89\xab\xcd\xef\xfe\xdc\xba\x98\x76\x54\x32\x10")); got != "01234567-89ab-cdef-fedc-ba9876543210" {
		t.Errorf("uuidHex = %s", got)
	}
}

// apiVersionsV3 is an ApiVersions v3 response frame listing keys API
// keys (the tree -V prints most of on a capture of many small exchanges:
// every connection starts with one).
func apiVersionsV3(keys int) []byte {
	body := []byte{0, 0, 0, 7, 0, 0, byte(keys + 1)} // CorrelationId 7, ErrorCode 0, ApiKeys
	for k := range keys {
		body = append(body, 0, byte(k), 0, 0, 0, byte(k%13+1), 0)
	}
	body = append(body, 0, 0, 0, 0, 0) // ThrottleTimeMs, no tagged fields
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// BenchmarkTreeSmall renders a decoded ApiVersions response of 62 API
// keys as -V does: per-node costs on small frames.
func BenchmarkTreeSmall(b *testing.B) {
	var d protocol.Decoder
	tr := d.DecodeResponse(apiVersionsV3(62), 18, 3)
	if tr.Err != nil {
		b.Fatal(tr.Err)
	}
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Tree(&buf, tr, Options{Indent: 2}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

// TestLeafIntAgrees holds leafInt, the fast path for integers, to
// leaf's general path: every integer field of every schema (so every
// enum, role and API key field), with values and notes of every shape,
// at several depths, and the nodes of the benchmark's ApiVersions tree.
func TestLeafIntAgrees(t *testing.T) {
	var nodes []*protocol.Node
	var walk func(fs []protocol.Field)
	walk = func(fs []protocol.Field) {
		for i := range fs {
			f := &fs[i]
			walk(f.Fields)
			switch f.Kind {
			case protocol.TypeInt8, protocol.TypeInt16, protocol.TypeInt32, protocol.TypeInt64, protocol.TypeUint16, protocol.TypeUint32:
			default:
				continue
			}
			for _, v := range []int64{0, 1, 2, 3, -1, 18, 62, 1 << 15, 1700000000000, -1700000000000} {
				for _, note := range []string{"", "x", "NONE", "18 (ApiVersions)", "1700000000000 (2023-11-14T22:13:20.000Z)", "-1700000000000 (then)", "12", "1 ()"} {
					nodes = append(nodes, &protocol.Node{Name: f.Name, Type: "int", Kind: protocol.KindInt, Field: f, Int: v, Note: note})
				}
			}
		}
	}
	for _, m := range protocol.Schemas {
		walk(m.Fields)
	}
	nodes = append(nodes, &protocol.Node{Name: "Fieldless", Kind: protocol.KindInt, Int: 5, Note: "5 (five)"})
	var d protocol.Decoder
	tr := d.DecodeResponse(apiVersionsV3(62), 18, 3)
	var all func(n *protocol.Node)
	all = func(n *protocol.Node) {
		if n.Kind == protocol.KindInt && len(n.Children) == 0 {
			nodes = append(nodes, n)
		}
		for _, c := range n.Children {
			all(c)
		}
	}
	all(tr.Root)
	if len(nodes) < 1000 {
		t.Fatalf("only %d nodes", len(nodes))
	}
	for _, n := range nodes {
		for _, depth := range []int{0, 3, 40} {
			fast := &treeWriter{o: &Options{}}
			fast.leafInt(n, depth)
			slow := &treeWriter{o: &Options{}}
			slow.leafAny(n, depth)
			if string(fast.buf) != string(slow.buf) {
				t.Fatalf("%s = %d (%q), depth %d: leafInt wrote %q, leaf's general path %q", n.Name, n.Int, n.Note, depth, fast.buf, slow.buf)
			}
		}
	}
}
