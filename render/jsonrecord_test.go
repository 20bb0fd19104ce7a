package render

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// testRec is a record for encodeBatch; a nil key or value is null, a
// header whose key or value is nil has a null one.
type testRec struct {
	tsDelta    int64
	key, value []byte
	headers    [][2][]byte
}

// appendVarBytes appends a varint length (-1 for nil) and v.
func appendVarBytes(b, v []byte) []byte {
	if v == nil {
		return binary.AppendVarint(b, -1)
	}
	b = binary.AppendVarint(b, int64(len(v)))
	return append(b, v...)
}

// encodeBatch encodes an uncompressed magic 2 record batch (protocol guide,
// "Record Batch") of recs at baseOffset with attributes attrs and a valid
// CRC.
func encodeBatch(baseOffset int64, attrs uint16, recs []testRec) []byte {
	var body []byte
	for i, r := range recs {
		var rb []byte
		rb = append(rb, 0) // attributes
		rb = binary.AppendVarint(rb, r.tsDelta)
		rb = binary.AppendVarint(rb, int64(i))
		rb = appendVarBytes(rb, r.key)
		rb = appendVarBytes(rb, r.value)
		rb = binary.AppendVarint(rb, int64(len(r.headers)))
		for _, h := range r.headers {
			rb = appendVarBytes(rb, h[0])
			rb = appendVarBytes(rb, h[1])
		}
		body = binary.AppendVarint(body, int64(len(rb)))
		body = append(body, rb...)
	}
	b := binary.BigEndian.AppendUint64(nil, uint64(baseOffset))
	b = binary.BigEndian.AppendUint32(b, 0) // batch length, set below
	b = binary.BigEndian.AppendUint32(b, 7) // partition leader epoch
	b = append(b, 2)                        // magic
	b = binary.BigEndian.AppendUint32(b, 0) // CRC, set below
	b = binary.BigEndian.AppendUint16(b, attrs)
	b = binary.BigEndian.AppendUint32(b, uint32(len(recs)-1))
	b = binary.BigEndian.AppendUint64(b, 1700000000000)
	b = binary.BigEndian.AppendUint64(b, 1700000000000+50)
	b = binary.BigEndian.AppendUint64(b, 4242) // producer ID
	b = binary.BigEndian.AppendUint16(b, 3)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(recs)))
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// jsonRecordVariants are option sets under which the record objects are
// compared: every value mode, 64-bit integers as strings, values cut short
// or never, secrets shown.
var jsonRecordVariants = []struct {
	name string
	o    Options
	html bool
}{
	{"text", Options{}, false},
	{"text html", Options{}, true},
	{"hex", Options{Values: ValuesHex}, false},
	{"base64", Options{Values: ValuesBase64}, true},
	{"none", Options{Values: ValuesNone}, false},
	{"int64 strings", Options{Int64Strings: true}, false},
	{"max 3", Options{MaxValue: 3}, true},
	{"max never", Options{MaxValue: -1}, false},
	{"show secrets", Options{ShowSecrets: true}, false},
}

// recordCounts tallies what compareRecords saw.
type recordCounts struct{ records, fast int }

// compareRecords writes every RECORDS node of tr with the fast record
// objects and with object's generic walk alone, under each variant, and
// fails on any difference.
func compareRecords(t *testing.T, name string, tr *protocol.Tree, n *recordCounts) {
	t.Helper()
	if tr == nil || tr.Root == nil {
		return
	}
	var nodes []*protocol.Node
	var walk func(x *protocol.Node, depth int)
	walk = func(x *protocol.Node, depth int) {
		if x.Kind == protocol.KindRecords && len(x.Children) > 0 {
			nodes = append(nodes, x)
		}
		if isRecord(x) {
			n.records++
		}
		if depth < 64 {
			for _, c := range x.Children {
				walk(c, depth+1)
			}
		}
	}
	walk(tr.Root, 0)
	for _, v := range jsonRecordVariants {
		for _, x := range nodes {
			opts := v.o
			fast := &jsonWriter{o: &opts, typedRecords: true, html: v.html}
			generic := &jsonWriter{o: &opts, typedRecords: true, html: v.html, genericRecords: true}
			got := fast.value(nil, x, "", nil, false)
			want := generic.value(nil, x, "", nil, false)
			if !bytes.Equal(got, want) {
				t.Errorf("%s (%s):\n fast    %s\n generic %s", name, v.name, got, want)
				return
			}
			if generic.fastRecords != 0 {
				t.Fatalf("%s: the generic writer wrote %d records the fast way", name, generic.fastRecords)
			}
			if v.name == "text" {
				n.fast += fast.fastRecords
			}
			if !json.Valid(got) {
				t.Errorf("%s (%s): not JSON: %s", name, v.name, got)
			}
		}
	}
}

// The fast record objects (jsonWriter.record) are byte for byte what
// object's generic walk writes: on Kafka's own batches (every codec,
// headers, control records, LogAppendTime), on batches of null keys,
// values and header keys, on every cut of them, on every one-byte
// corruption of one and of Kafka's compressed batches (records cut short,
// lengths beyond the batch, leftovers, payloads that inflate part way),
// and on every batch of the golden captures.
func TestJSONRecordFast(t *testing.T) {
	d := protocol.Decoder{Records: true}
	var n recordCounts
	var whole [][]byte

	nulls := encodeBatch(100, 0, []testRec{
		{key: nil, value: []byte("v0 <&> \"quoted\"\n"), headers: [][2][]byte{{[]byte("h"), nil}, {nil, []byte("null key")}}},
		{tsDelta: 5, key: []byte("k1"), value: nil},
		{tsDelta: 9, key: []byte{0xff, 0xfe, 0}, value: bytes.Repeat([]byte("long value "), 40),
			headers: [][2][]byte{{[]byte("trace"), []byte{1, 2, 3}}, {[]byte(""), []byte("")}}},
	})
	whole = append(whole, nulls, encodeBatch(0, 0x08, []testRec{{key: []byte("lat"), value: []byte("x")}}), // LogAppendTime
		encodeBatch(7, 0x30, []testRec{{key: []byte{0, 0, 0, 1}, value: []byte{0, 0, 0, 0, 0, 3}}})) // control COMMIT
	shared := os.Getenv("KWIRE_SHARED")
	if shared == "" {
		shared = filepath.Join("..", "..", "shared")
	}
	// Kafka's batches when ../shared is there (CI); the rest without.
	if data, err := os.ReadFile(filepath.Join(shared, "kafka-vectors", "records.json")); err == nil {
		var doc struct{ Vectors []vector }
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		for _, v := range doc.Vectors {
			whole = append(whole, mustHex(t, v.Hex))
		}
	}
	for i, b := range whole {
		compareRecords(t, "batch "+itoa(int64(i)), d.DecodeRecordBatches(b), &n)
		for cut := 1; cut < len(b); cut += 1 + len(b)/97 {
			compareRecords(t, "batch "+itoa(int64(i))+" cut at "+itoa(int64(cut)), d.DecodeRecordBatches(b[:cut]), &n)
		}
	}
	// Every byte after the batch header of the null-laden batch and of
	// Kafka's compressed ones (a payload that inflates to records cut
	// short, or not at all), corrupted.
	corrupt := [][]byte{nulls}
	for _, b := range whole[3:] {
		if len(b) > 61 && b[16] == 2 && b[22]&7 != 0 {
			corrupt = append(corrupt, b)
		}
	}
	for k, src := range corrupt {
		for i := 61; i < len(src); i++ {
			b := bytes.Clone(src)
			b[i] ^= 0xff
			name := "batch " + itoa(int64(k)) + " corrupt byte " + itoa(int64(i))
			compareRecords(t, name, d.DecodeRecordBatches(b), &n)
			b[i] ^= 0xfe // now 0x01 away from the original
			compareRecords(t, name+"^1", d.DecodeRecordBatches(b), &n)
		}
	}

	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	for _, f := range files {
		var s collectSink
		ds := dissect.New(dissect.Options{Ports: pcaps.BrokerPorts(), Decoder: protocol.Decoder{Records: true}}, &s)
		if _, err := reassembly.ReadFiles(context.Background(), []string{f}, reassembly.Options{}, ds); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		ds.Finish()
		for i, e := range s.ex {
			for _, fr := range []*dissect.Frame{e.Request, e.Response} {
				if fr != nil {
					compareRecords(t, filepath.Base(f)+" exchange "+itoa(int64(i)), fr.Tree, &n)
				}
			}
		}
	}
	// Both forms were exercised: most records the fast way, the cut and
	// corrupt ones the generic way.
	t.Logf("%d records, %d written the fast way", n.records, n.fast)
	if n.fast < 1000 || n.records-n.fast < 30 {
		t.Errorf("%d records, %d of them the fast way: the test no longer exercises both forms", n.records, n.fast)
	}
}

// A large line's buffer outlives collections (bigLine): the second line of
// an exchange of 500 records of 1 KB, after two collections (which empty a
// sync.Pool), allocates less than a tenth of its size, and both lines are
// what AppendExchangeJSON writes.
func TestBigLineKept(t *testing.T) {
	tr := (&protocol.Decoder{Records: true}).DecodeRecordBatches(benchBatch(500, 1000, false))
	e := &dissect.Exchange{Kind: dissect.KindNoResponse, Request: &dissect.Frame{FirstPacket: 1, LastPacket: 2, Tree: tr}}
	if h := lineHint(e); h <= bigLineMin {
		t.Fatalf("line hint %d: not a big line", h)
	}
	want := AppendExchangeJSON(nil, e, Options{})
	var got bytes.Buffer
	line := func() uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got.Reset()
		if err := ExchangeJSONLine(&got, e, Options{}); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("ExchangeJSONLine wrote %d bytes unlike AppendExchangeJSON's %d", got.Len(), len(want))
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	got.Grow(2 * len(want))
	line()
	runtime.GC()
	runtime.GC()
	if a := line(); a > uint64(len(want)/10) {
		t.Errorf("a line of %d bytes allocated %d bytes after two collections", len(want), a)
	}
}
