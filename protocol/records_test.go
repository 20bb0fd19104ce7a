package protocol

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// recSharedDir finds ../shared from the module root (KWIRE_SHARED
// overrides it), or skips the test.
func recSharedDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("KWIRE_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(dir, "kafka-vectors", "records.json")); err != nil {
		t.Skipf("Kafka record vectors not found (%v): set KWIRE_SHARED or check out ../shared beside the repository", err)
	}
	return dir
}

type recVector struct {
	Name, Why string
	Bytes     []byte
}

// recVectors loads ../shared/kafka-vectors/records.json in file order.
func recVectors(t testing.TB) []recVector {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(recSharedDir(t), "kafka-vectors", "records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct{ Name, Why, Hex string }
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatalf("records.json: %v", err)
	}
	var vs []recVector
	for _, v := range file.Vectors {
		b, err := hex.DecodeString(v.Hex)
		if err != nil {
			t.Fatalf("%s: %v", v.Name, err)
		}
		vs = append(vs, recVector{v.Name, v.Why, b})
	}
	return vs
}

func recVectorByName(t *testing.T, vs []recVector, name string) []byte {
	t.Helper()
	for _, v := range vs {
		if v.Name == name {
			return v.Bytes
		}
	}
	t.Fatalf("vector %q missing from records.json", name)
	return nil
}

// recCheckTree asserts the span invariants of a decoded tree: every node
// lies inside its space, a child inside its parent when both share a
// space, siblings of one space in order without overlap, and a KindBytes
// node's Raw the tail of its span.
func recCheckTree(t testing.TB, tr *Tree) {
	t.Helper()
	var walk func(n *Node, path string)
	walk = func(n *Node, path string) {
		if n.Space < 0 || n.Space >= len(tr.Spaces) {
			t.Fatalf("%s: space %d of %d", path, n.Space, len(tr.Spaces))
		}
		data := tr.Spaces[n.Space].Data
		if n.Off < 0 || n.Len < 0 || n.End() > len(data) {
			t.Fatalf("%s: span [%d,%d) outside space %d of %d bytes", path, n.Off, n.End(), n.Space, len(data))
		}
		if n.Kind == KindBytes && n.Flags&FlagNull == 0 && !bytes.HasSuffix(data[n.Off:n.End()], n.Raw) {
			t.Fatalf("%s: Raw is not the end of its span", path)
		}
		prevEnd := map[int]int{}
		for _, c := range n.Children {
			cp := path + "." + c.Name
			if c.Space == n.Space && (c.Off < n.Off || c.End() > n.End()) {
				t.Fatalf("%s: [%d,%d) outside parent [%d,%d)", cp, c.Off, c.End(), n.Off, n.End())
			}
			if e, ok := prevEnd[c.Space]; ok && c.Off < e {
				t.Fatalf("%s: starts at %d before the previous sibling's end %d", cp, c.Off, e)
			}
			prevEnd[c.Space] = c.End()
			walk(c, cp)
		}
	}
	walk(tr.Root, tr.Root.Name)
}

// recErrors lists the notes of nodes flagged FlagError.
func recErrors(n *Node) []string {
	var out []string
	if n.Flags&FlagError != 0 {
		out = append(out, n.Name+": "+n.Note)
	}
	for _, c := range n.Children {
		out = append(out, recErrors(c)...)
	}
	return out
}

// recDecode decodes b standalone and checks the tree's invariants.
func recDecode(t testing.TB, d *Decoder, b []byte) *Tree {
	t.Helper()
	tr := d.DecodeRecordBatches(b)
	recCheckTree(t, tr)
	if tr.Err != nil {
		t.Fatalf("Tree.Err = %v; record problems should be annotations", tr.Err)
	}
	return tr
}

// recBatch returns the only batch of tr.
func recBatch(t *testing.T, tr *Tree) *Node {
	t.Helper()
	if len(tr.Root.Children) != 1 {
		t.Fatalf("%d top-level nodes, want 1 batch", len(tr.Root.Children))
	}
	return tr.Root.Children[0]
}

// recView is a record as the tests compare it: absolute values.
type recView struct {
	Offset, Timestamp int64
	Key, Value        string // "<null>" for null
	Headers           string
}

func bytesView(n *Node) string {
	if n == nil {
		return "<missing>"
	}
	if n.Flags&FlagNull != 0 {
		return "<null>"
	}
	return string(n.Raw)
}

// recViews lists the records of batch b with absolute offsets and
// timestamps computed from the nodes' values.
func recViews(t *testing.T, b *Node) []recView {
	t.Helper()
	base := b.Child("BaseOffset").Int
	baseTS := b.Child("BaseTimestamp").Int
	var out []recView
	for _, r := range b.Child("Records").Children {
		if r.Type != "Record" {
			t.Fatalf("unexpected %s node %q among records (%s)", r.Type, r.Name, r.Note)
		}
		v := recView{
			Offset:    base + r.Child("OffsetDelta").Int,
			Timestamp: baseTS + r.Child("TimestampDelta").Int,
			Key:       bytesView(r.Child("Key")),
			Value:     bytesView(r.Child("Value")),
		}
		var hs []string
		for _, h := range r.Child("Headers").Children {
			hs = append(hs, bytesView(h.Child("Key"))+"="+bytesView(h.Child("Value")))
		}
		v.Headers = strings.Join(hs, ",")
		out = append(out, v)
	}
	return out
}

func TestRecordVectors(t *testing.T) {
	vs := recVectors(t)
	if len(vs) != 18 {
		t.Errorf("records.json has %d vectors, want 18", len(vs))
	}
	var d Decoder
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			tr := recDecode(t, &d, v.Bytes)
			b := recBatch(t, tr)
			if b.Name != "RecordBatch" || b.Off != 0 || b.Len != len(v.Bytes) {
				t.Fatalf("batch %s [%d,%d), want RecordBatch over all %d bytes", b.Name, b.Off, b.End(), len(v.Bytes))
			}
			if errs := recErrors(tr.Root); len(errs) > 0 {
				t.Fatalf("errors in a Kafka-written batch: %v", errs)
			}
			if c := b.Child("Crc"); c == nil || c.Note != "ok" {
				t.Fatalf("Crc = %+v, want Note ok", c)
			}
			if m := b.Child("Magic"); m.Int != 2 {
				t.Errorf("Magic = %d", m.Int)
			}
			if got := b.Child("BatchLength").Int; got != int64(len(v.Bytes)-12) {
				t.Errorf("BatchLength = %d, want %d", got, len(v.Bytes)-12)
			}
			recs := b.Child("Records")
			if int64(len(recs.Children)) != recs.Int {
				t.Errorf("%d records decoded, count says %d", len(recs.Children), recs.Int)
			}
		})
	}
}

func TestRecordVectorValues(t *testing.T) {
	vs := recVectors(t)
	var d Decoder
	const ts0 = int64(1700000000000)
	decode := func(t *testing.T, name string) (*Node, []recView) {
		tr := recDecode(t, &d, recVectorByName(t, vs, name))
		b := recBatch(t, tr)
		return b, recViews(t, b)
	}
	want := func(t *testing.T, got, want []recView) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("records\n got %+v\nwant %+v", got, want)
		}
	}
	sentinels := func(t *testing.T, b *Node) {
		t.Helper()
		for name, v := range map[string]int64{"ProducerId": -1, "ProducerEpoch": -1, "BaseSequence": -1, "PartitionLeaderEpoch": -1} {
			if got := b.Child(name).Int; got != v {
				t.Errorf("%s = %d, want the sentinel %d", name, got, v)
			}
		}
	}

	t.Run("one_record_no_key", func(t *testing.T) {
		b, rs := decode(t, "one_record_no_key")
		want(t, rs, []recView{{0, ts0, "<null>", "value-one", ""}})
		sentinels(t, b)
		if a := b.Child("Attributes"); a.Int != 0 || !strings.Contains(a.Note, "codec=none") || !strings.Contains(a.Note, "timestampType=CreateTime") {
			t.Errorf("Attributes %d %q", a.Int, a.Note)
		}
		td := b.Child("Records").Children[0].Child("TimestampDelta")
		if td.Note != "timestamp 1700000000000 (2023-11-14T22:13:20.000Z)" {
			t.Errorf("TimestampDelta note %q", td.Note)
		}
	})
	t.Run("one_record_with_key", func(t *testing.T) {
		_, rs := decode(t, "one_record_with_key")
		want(t, rs, []recView{{0, ts0, "k1", "value-one", ""}})
	})
	t.Run("an_empty_key_and_an_empty_value", func(t *testing.T) {
		b, rs := decode(t, "an_empty_key_and_an_empty_value")
		want(t, rs, []recView{{0, ts0, "", "", ""}})
		r := b.Child("Records").Children[0]
		for _, f := range []string{"Key", "Value"} {
			if n := r.Child(f); n.Flags&FlagNull != 0 || n.Raw == nil || n.Len != 1 {
				t.Errorf("%s: flags %b raw %v len %d, want empty non-null over its 1-byte length", f, n.Flags, n.Raw, n.Len)
			}
		}
	})
	t.Run("a_null_value", func(t *testing.T) {
		b, rs := decode(t, "a_null_value")
		want(t, rs, []recView{{0, ts0, "k1", "<null>", ""}})
		if v := b.Child("Records").Children[0].Child("Value"); v.Flags&FlagNull == 0 || v.Len != 1 {
			t.Errorf("Value flags %b len %d", v.Flags, v.Len)
		}
	})
	t.Run("three_records_with_deltas", func(t *testing.T) {
		b, rs := decode(t, "three_records_with_deltas")
		want(t, rs, []recView{
			{100, ts0, "<null>", "one", ""},
			{101, ts0 + 500, "<null>", "two", ""},
			{102, ts0 + 200, "<null>", "three", ""},
		})
		if n := b.Child("LastOffsetDelta"); n.Int != 2 || n.Note != "last offset 102" {
			t.Errorf("LastOffsetDelta %d %q", n.Int, n.Note)
		}
		// MaxTimestamp is the largest (the middle record's), not the last.
		if got := b.Child("MaxTimestamp").Int; got != ts0+500 {
			t.Errorf("MaxTimestamp %d", got)
		}
		if n := b.Child("Records").Children[2].Child("OffsetDelta"); n.Note != "offset 102" {
			t.Errorf("OffsetDelta note %q", n.Note)
		}
	})
	t.Run("compacted_records_keep_offset_gaps", func(t *testing.T) {
		b, rs := decode(t, "compacted_records_keep_offset_gaps")
		want(t, rs, []recView{{100, ts0, "k1", "old", ""}, {102, ts0 + 200, "k2", "new", ""}})
		if b.Child("LastOffsetDelta").Int != 2 || b.Child("Records").Int != 2 {
			t.Errorf("lastOffsetDelta %d count %d", b.Child("LastOffsetDelta").Int, b.Child("Records").Int)
		}
	})
	t.Run("empty_compacted_batch_keeps_last_offset", func(t *testing.T) {
		b, rs := decode(t, "empty_compacted_batch_keeps_last_offset")
		want(t, rs, nil)
		if n := b.Child("LastOffsetDelta"); n.Note != "last offset 102" {
			t.Errorf("LastOffsetDelta %q", n.Note)
		}
		if n := b.Child("Records"); n.Int != 0 || n.Len != 4 {
			t.Errorf("Records count %d len %d", n.Int, n.Len)
		}
		if n := b.Child("BaseTimestamp"); n.Int != -1 || n.Note != "-1 (none)" {
			t.Errorf("BaseTimestamp %d %q", n.Int, n.Note)
		}
	})
	t.Run("headers_on_one_record", func(t *testing.T) {
		_, rs := decode(t, "headers_on_one_record")
		want(t, rs, []recView{{0, ts0, "<null>", "value", "trace-id=abc123,empty=,absent=<null>"}})
	})
	t.Run("transactional_with_producer_identity", func(t *testing.T) {
		b, rs := decode(t, "transactional_with_producer_identity")
		want(t, rs, []recView{{0, ts0, "k1", "value", ""}})
		got := [4]int64{b.Child("ProducerId").Int, b.Child("ProducerEpoch").Int, b.Child("BaseSequence").Int, b.Child("PartitionLeaderEpoch").Int}
		if got != [4]int64{12345, 7, 100, 42} {
			t.Errorf("producerId, epoch, baseSequence, leaderEpoch = %v", got)
		}
		if a := b.Child("Attributes"); a.Int&0x10 == 0 || !strings.Contains(a.Note, "isTransactional=true") || !strings.Contains(a.Note, "isControl=false") {
			t.Errorf("Attributes %#x %q", a.Int, a.Note)
		}
	})
	t.Run("committed_transaction_control_batch", func(t *testing.T) {
		b, _ := decode(t, "committed_transaction_control_batch")
		if a := b.Child("Attributes"); !strings.Contains(a.Note, "isTransactional=true") || !strings.Contains(a.Note, "isControl=true") {
			t.Errorf("Attributes %q", a.Note)
		}
		r := b.Child("Records").Children[0]
		key, val := r.Child("Key"), r.Child("Value")
		if typ := key.Child("Type"); typ == nil || typ.Int != 1 || typ.Note != "COMMIT" || key.Child("Version").Int != 0 {
			t.Fatalf("control key %+v", key.Children)
		}
		if val.Type != "EndTxnMarker" || val.Child("CoordinatorEpoch") == nil {
			t.Fatalf("control value %s %+v", val.Type, val.Children)
		}
		if got := val.Child("CoordinatorEpoch").Int; got != 11 {
			t.Errorf("CoordinatorEpoch %d", got)
		}
		if b.Child("ProducerId").Int != 12345 || b.Child("ProducerEpoch").Int != 7 {
			t.Errorf("producer %d/%d", b.Child("ProducerId").Int, b.Child("ProducerEpoch").Int)
		}
	})
	t.Run("tombstone_with_delete_horizon", func(t *testing.T) {
		b, rs := decode(t, "tombstone_with_delete_horizon")
		if a := b.Child("Attributes"); a.Int&0x40 == 0 || !strings.Contains(a.Note, "hasDeleteHorizon=true") {
			t.Errorf("Attributes %#x %q", a.Int, a.Note)
		}
		horizon := b.Child("BaseTimestamp")
		if !strings.HasPrefix(horizon.Note, "delete horizon ") || horizon.Int != ts0+3600000 {
			t.Errorf("BaseTimestamp %d %q", horizon.Int, horizon.Note)
		}
		// The record's delta is relative to the horizon: it lands on MaxTimestamp.
		want(t, rs, []recView{{0, ts0, "k1", "<null>", ""}})
	})
	t.Run("log_append_time", func(t *testing.T) {
		b, rs := decode(t, "log_append_time")
		if a := b.Child("Attributes"); a.Int&0x08 == 0 || !strings.Contains(a.Note, "timestampType=LogAppendTime") {
			t.Errorf("Attributes %#x %q", a.Int, a.Note)
		}
		want(t, rs, []recView{{0, ts0, "<null>", "value", ""}})
		if n := b.Child("Records").Children[0].Child("TimestampDelta"); !strings.Contains(n.Note, "LogAppendTime") {
			t.Errorf("TimestampDelta note %q does not mention LogAppendTime", n.Note)
		}
	})
	t.Run("a_large_batch_needing_multibyte_varints", func(t *testing.T) {
		b, rs := decode(t, "a_large_batch_needing_multibyte_varints")
		if len(rs) != 1 || rs[0].Key != "k1" || !strings.HasPrefix(rs[0].Value, "Lorem ipsum") || len(rs[0].Value) <= 63 {
			t.Fatalf("records %+v", rs)
		}
		r := b.Child("Records").Children[0]
		if l := r.Child("Length"); l.Len != 2 || l.Int != int64(r.Len-2) {
			t.Errorf("Length %d over %d bytes; record is %d bytes", l.Int, l.Len, r.Len)
		}
		if v := r.Child("Value"); v.Len != 2+len(v.Raw) {
			t.Errorf("Value span %d for %d bytes: want a 2-byte varint length", v.Len, len(v.Raw))
		}
	})
	t.Run("compression_twins", func(t *testing.T) {
		plainB, plain := decode(t, "compression_twin_uncompressed")
		if len(plain) != 2 {
			t.Fatalf("uncompressed twin has %d records", len(plain))
		}
		want(t, plain, []recView{{0, ts0, "k1", "value-one", ""}, {1, ts0 + 1, "<null>", "value-two", ""}})
		if plainB.Child("Records").Children[0].Space != 0 {
			t.Errorf("uncompressed records are not in space 0")
		}
		for i, codec := range []string{"gzip", "snappy", "lz4", "zstd"} {
			t.Run(codec, func(t *testing.T) {
				tr := recDecode(t, &d, recVectorByName(t, vs, codec))
				b := recBatch(t, tr)
				if got := Codec(b.Child("Attributes").Int & 7); got.String() != codec || int(got) != i+1 {
					t.Errorf("codec %v", got)
				}
				want(t, recViews(t, b), plain)
				if len(tr.Spaces) != 2 {
					t.Fatalf("%d spaces, want the input and one decompressed", len(tr.Spaces))
				}
				wantName := codec + "-decompressed records of batch at 0x0"
				if tr.Spaces[1].Name != wantName {
					t.Errorf("space name %q, want %q", tr.Spaces[1].Name, wantName)
				}
				// The decompressed bytes are exactly the twin's records section.
				twin := recVectorByName(t, vs, "compression_twin_uncompressed")
				if !bytes.Equal(tr.Spaces[1].Data, twin[61:]) {
					t.Errorf("decompressed %x\nwant         %x", tr.Spaces[1].Data, twin[61:])
				}
				for _, r := range b.Child("Records").Children {
					if r.Space != 1 {
						t.Errorf("record %s in space %d", r.Name, r.Space)
					}
				}
			})
		}
	})
}

func TestRecordBadCRC(t *testing.T) {
	vs := recVectors(t)
	b := bytes.Clone(recVectorByName(t, vs, "one_record_with_key"))
	b[len(b)-3] ^= 0x20 // a byte of the value: "value-one" becomes "value-oNe"
	var d Decoder
	tr := recDecode(t, &d, b)
	batch := recBatch(t, tr)
	c := batch.Child("Crc")
	if c.Flags&FlagError == 0 || !strings.HasPrefix(c.Note, "bad: got 0x616355c4, computed 0x") {
		t.Fatalf("Crc flags %b note %q", c.Flags, c.Note)
	}
	// Decoding goes on: the record is still there, with the changed value.
	if rs := recViews(t, batch); len(rs) != 1 || rs[0].Value != "value-oNe" {
		t.Errorf("records after a bad CRC: %+v", rs)
	}
}

func TestRecordPartialTail(t *testing.T) {
	vs := recVectors(t)
	first := recVectorByName(t, vs, "one_record_with_key")
	second := recVectorByName(t, vs, "three_records_with_deltas")
	// The note says what of the batch is there once its length is.
	const withheldNote = "; withheld: records cut short cannot be told free of credentials (--show-secrets shows them)"
	wantNote := map[int]string{
		1:  "partial batch (normal)",
		11: "partial batch (normal)",
		12: fmt.Sprintf("partial batch (normal): 12 of %d bytes, base offset 100", len(second)),
		30: fmt.Sprintf("partial batch (normal): 30 of %d bytes, base offset 100", len(second)),
	}
	wantNote[len(second)-1] = fmt.Sprintf("partial batch (normal): %d of %d bytes, base offset 100", len(second)-1, len(second))
	if got := int64(binary.BigEndian.Uint64(second)); got != 100 {
		t.Fatalf("three_records_with_deltas' base offset %d, want 100", got)
	}
	for _, show := range []bool{false, true} {
		d := Decoder{ShowSecrets: show}
		for _, cut := range []int{1, 11, 12, 30, len(second) - 1} {
			in := append(bytes.Clone(first), second[:cut]...)
			tr := recDecode(t, &d, in)
			kids := tr.Root.Children
			if len(kids) != 2 || kids[0].Name != "RecordBatch" {
				t.Fatalf("cut %d: %d nodes", cut, len(kids))
			}
			tail := kids[1]
			flags, note, raw := FlagPartial, wantNote[cut], second[:cut]
			if !show {
				flags, note, raw = FlagPartial|FlagRedacted, note+withheldNote, nil
			}
			if tail.Kind != KindRaw || tail.Flags != flags || tail.Note != note ||
				tail.Off != len(first) || tail.Len != cut || !bytes.Equal(tail.Raw, raw) {
				t.Errorf("show=%v cut %d: tail %+v", show, cut, tail)
			}
			if errs := recErrors(tr.Root); len(errs) > 0 {
				t.Errorf("show=%v cut %d: a partial tail is not an error: %v", show, cut, errs)
			}
		}
	}
}

func TestRecordFewerThanCount(t *testing.T) {
	vs := recVectors(t)
	b := bytes.Clone(recVectorByName(t, vs, "compression_twin_uncompressed"))
	binary.BigEndian.PutUint32(b[57:], 3) // claim 3 records; 2 follow
	var d Decoder
	batch := recBatch(t, recDecode(t, &d, b))
	recs := batch.Child("Records")
	if len(recs.Children) != 2 || recs.Flags&FlagTruncated == 0 || recs.Note != "only 2 of 3 records present" {
		t.Errorf("Records: %d children, flags %b, note %q", len(recs.Children), recs.Flags, recs.Note)
	}
	binary.BigEndian.PutUint32(b[57:], 1) // claim 1 record; 2 follow
	recs = recBatch(t, recDecode(t, &d, b)).Child("Records")
	last := recs.Children[len(recs.Children)-1]
	if len(recs.Children) != 2 || last.Name != nameLeftover || last.Flags&FlagError == 0 {
		t.Errorf("Records with leftover: %+v", recs.Children)
	}
}

// --- hand-built batches -------------------------------------------------

// recRecord is a record to build; nil Key or Value means null.
type recRecord struct {
	OffsetDelta, TimestampDelta int64
	Key, Value                  []byte
	Headers                     [][2][]byte
}

func appendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

func appendVarBytes(b, v []byte) []byte {
	if v == nil {
		return appendVarint(b, -1)
	}
	return append(appendVarint(b, int64(len(v))), v...)
}

// recCompress compresses b with codec the way Kafka's Java client does
// (xerial-framed snappy, LZ4 frames).
func recCompress(t testing.TB, codec Codec, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	switch codec {
	case CodecNone:
		return b
	case CodecGzip:
		w := gzip.NewWriter(&out)
		w.Write(b)
		w.Close()
	case CodecSnappy:
		out.Write(xerialMagic)
		out.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
		for len(b) > 0 { // 32 KiB chunks, as snappy-java writes them
			n := min(len(b), 32<<10)
			blk := snappy.Encode(nil, b[:n])
			out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(blk))))
			out.Write(blk)
			b = b[n:]
		}
	case CodecLZ4:
		w := lz4.NewWriter(&out)
		w.Write(b)
		w.Close()
	case CodecZstd:
		w, err := zstd.NewWriter(&out)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		w.Close()
	default:
		t.Fatalf("codec %v", codec)
	}
	return out.Bytes()
}

// recBuild encodes a v2 record batch with a correct CRC (Kafka protocol
// guide, "Record Batch").
func recBuild(t testing.TB, codec Codec, baseOffset, baseTS int64, recs []recRecord) []byte {
	t.Helper()
	return recBuildAttrs(t, int16(codec), baseOffset, baseTS, recs)
}

// recBuildAttrs is recBuild with the batch attributes given whole.
func recBuildAttrs(t testing.TB, attrs int16, baseOffset, baseTS int64, recs []recRecord) []byte {
	t.Helper()
	codec := Codec(attrs & 7)
	var body []byte
	var lastDelta, maxTS int64 = 0, baseTS
	for _, r := range recs {
		var rec []byte
		rec = append(rec, 0) // attributes
		rec = appendVarint(rec, r.TimestampDelta)
		rec = appendVarint(rec, r.OffsetDelta)
		rec = appendVarBytes(rec, r.Key)
		rec = appendVarBytes(rec, r.Value)
		rec = appendVarint(rec, int64(len(r.Headers)))
		for _, h := range r.Headers {
			rec = appendVarBytes(rec, h[0])
			rec = appendVarBytes(rec, h[1])
		}
		body = appendVarint(body, int64(len(rec)))
		body = append(body, rec...)
		lastDelta = max(lastDelta, r.OffsetDelta)
		maxTS = max(maxTS, baseTS+r.TimestampDelta)
	}
	body = recCompress(t, codec, body)
	b := binary.BigEndian.AppendUint64(nil, uint64(baseOffset))
	b = binary.BigEndian.AppendUint32(b, 0)          // batch length, set below
	b = binary.BigEndian.AppendUint32(b, 0xffffffff) // partition leader epoch
	b = append(b, 2)                                 // magic
	b = binary.BigEndian.AppendUint32(b, 0)          // crc, set below
	b = binary.BigEndian.AppendUint16(b, uint16(attrs))
	b = binary.BigEndian.AppendUint32(b, uint32(lastDelta))
	b = binary.BigEndian.AppendUint64(b, uint64(baseTS))
	b = binary.BigEndian.AppendUint64(b, uint64(maxTS))
	b = binary.BigEndian.AppendUint64(b, 0xffffffffffffffff) // producer id
	b = binary.BigEndian.AppendUint16(b, 0xffff)             // producer epoch
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)         // base sequence
	b = binary.BigEndian.AppendUint32(b, uint32(len(recs)))
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func TestRecordBuiltRoundTrip(t *testing.T) {
	var recs []recRecord
	for i := range 50 {
		r := recRecord{OffsetDelta: int64(i), TimestampDelta: int64(i * 7),
			Key: []byte(fmt.Sprintf("key-%d", i)), Value: bytes.Repeat([]byte{'a' + byte(i%26)}, i*3)}
		if i%10 == 3 {
			r.Value = nil
			r.Headers = [][2][]byte{{[]byte("h"), nil}, {[]byte("trace"), []byte("x")}}
		}
		recs = append(recs, r)
	}
	var d Decoder
	var want []recView
	for c := CodecNone; c <= CodecZstd; c++ {
		t.Run(c.String(), func(t *testing.T) {
			b := recBuild(t, c, 1000, 1700000000000, recs)
			batch := recBatch(t, recDecode(t, &d, b))
			if errs := recErrors(batch); len(errs) > 0 {
				t.Fatal(errs)
			}
			got := recViews(t, batch)
			if len(got) != 50 || got[49].Offset != 1049 || got[49].Timestamp != 1700000000000+49*7 ||
				got[13].Value != "<null>" || got[13].Headers != "h=<null>,trace=x" || got[2].Value != "cccccc" {
				t.Fatalf("records %+v", got)
			}
			if want == nil {
				want = got
			} else if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%v records differ from uncompressed", c)
			}
		})
	}
}

// notAllDecoded is the note of compressed bytes withheld because what they
// hold was not all decoded.
const notAllDecoded = "compressed bytes withheld: what they hold was not all decoded, so it cannot be told free of credentials"

func TestRecordBomb(t *testing.T) {
	zeros := make([]byte, 1<<20)
	claims := map[Codec]string{
		CodecGzip:   "; the gzip trailer (ISIZE, modulo 2^32) says 1048589 bytes",
		CodecSnappy: "; the xerial chunks' lengths say 1048589 bytes",
		CodecLZ4:    "", // the writer gives no content size
		CodecZstd:   "",
	}
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		t.Run(c.String(), func(t *testing.T) {
			b := recBuild(t, c, 0, 0, []recRecord{{Value: zeros}})
			d := Decoder{MaxDecompressed: 64 << 10}
			tr := recDecode(t, &d, b)
			recs := recBatch(t, tr).Child("Records")
			// The compressed bytes of records not all decoded are withheld.
			want := fmt.Sprintf("decompression bomb: %s data of %d bytes inflates past the 64 KiB cap on a frame's decompressed bytes; only its first 65536 bytes decoded%s; %s",
				c, len(b)-61, claims[c], notAllDecoded)
			if recs.Flags&FlagError == 0 || recs.Flags&FlagRedacted == 0 || recs.Note != want {
				t.Fatalf("Records flags %b note %q, want %q", recs.Flags, recs.Note, want)
			}
			if tr.Limits != LimitDecompressed {
				t.Errorf("limits %b", tr.Limits)
			}
			// What came before the cap is decoded: the record, cut short.
			if len(tr.Spaces) != 2 || tr.Spaces[1].Size() != 64<<10 {
				t.Fatalf("%d spaces after a capped decompression", len(tr.Spaces))
			}
			if len(recs.Children) != 1 || recs.Children[0].Name != "[0]" || recs.Children[0].Flags&FlagTruncated == 0 {
				t.Errorf("Records children %+v", recs.Children)
			}
			// The same batch fits under the default cap.
			d.MaxDecompressed = 0
			tr = recDecode(t, &d, b)
			if errs := recErrors(tr.Root); len(errs) > 0 {
				t.Errorf("default cap: %v", errs)
			}
		})
	}
	if got := (capError{DefaultMaxDecompressed}).Error(); got != "decompressed size exceeds the 256 MiB cap" {
		t.Errorf("default cap message %q", got)
	}
}

func TestRecordBudgetSharedByTree(t *testing.T) {
	// Three batches each inflating to ~40 KiB under a 100 KiB cap: the
	// third exceeds what the first two left.
	one := recBuild(t, CodecZstd, 0, 0, []recRecord{{Value: make([]byte, 40<<10)}})
	in := bytes.Repeat(one, 3)
	d := Decoder{MaxDecompressed: 100 << 10}
	tr := recDecode(t, &d, in)
	if len(tr.Root.Children) != 3 {
		t.Fatalf("%d batches", len(tr.Root.Children))
	}
	for i, b := range tr.Root.Children {
		recs := b.Child("Records")
		bad := recs.Flags&FlagError != 0
		if bad != (i == 2) {
			t.Errorf("batch %d: error %v (%q)", i, bad, recs.Note)
		}
	}
	left := 100<<10 - 2*tr.Spaces[1].Size()
	want := fmt.Sprintf("decompression bomb: zstd data of 32 bytes inflates past the 100 KiB cap on a frame's decompressed bytes for all batches of this frame together (%d bytes were left); only its first %d bytes decoded; the zstd frame header (Frame_Content_Size) says %d bytes; %s",
		left, left, tr.Spaces[1].Size(), notAllDecoded)
	if n := tr.Root.Children[2].Child("Records").Note; n != want {
		t.Errorf("note %q\nwant %q", n, want)
	}
}

func TestRecordControlValues(t *testing.T) {
	// A KRaft LEADER_CHANGE control record: key version 0, type 2; the value
	// is LeaderChangeMessage v0 (flexible), whose first field is Version.
	//
	//	0000        key version 0
	//	0002        type LEADER_CHANGE
	leaderKey := mustHex("0000" + "0002")
	//	0000        Version 0
	//	00000003    LeaderId 3
	//	02          Voters: compact array of 1
	//	00000003 00   VoterId 3, no tagged fields
	//	02          GrantingVoters: compact array of 1
	//	00000003 00   VoterId 3, no tagged fields
	//	00          no tagged fields
	leaderValue := mustHex("0000" + "00000003" + "02" + "0000000300" + "02" + "0000000300" + "00")
	//	0000 0000   key version 0, type ABORT
	//	0000        EndTxnMarker value version 0
	//	00000005    CoordinatorEpoch 5
	abortKey, abortValue := mustHex("00000000"), mustHex("0000"+"00000005")
	//	0000 0007   key version 0, type 7 (unknown)
	unknownKey := mustHex("00000007")

	b := recBuildAttrs(t, 0x30, 10, 1700000000000, []recRecord{
		{Key: leaderKey, Value: leaderValue},
		{OffsetDelta: 1, Key: abortKey, Value: abortValue},
		{OffsetDelta: 2, Key: unknownKey, Value: []byte("?")},
	})
	var d Decoder
	recs := recBatch(t, recDecode(t, &d, b)).Child("Records").Children
	if len(recs) != 3 {
		t.Fatalf("%d records", len(recs))
	}
	lk, lv := recs[0].Child("Key"), recs[0].Child("Value")
	if lk.Child("Type").Note != "LEADER_CHANGE" || lv.Type != "LeaderChangeMessage" {
		t.Fatalf("leader change key %q value type %q", lk.Child("Type").Note, lv.Type)
	}
	if lv.Flags&FlagError != 0 {
		t.Fatalf("LeaderChangeMessage: %s", lv.Note)
	}
	if id := lv.Child("LeaderId"); id == nil || id.Int != 3 || id.Off != lv.End()-len(lv.Raw)+2 {
		t.Errorf("LeaderId %+v", id)
	}
	if v := lv.Child("Voters"); v == nil || len(v.Children) != 1 {
		t.Errorf("Voters %+v", v)
	}
	ak, av := recs[1].Child("Key"), recs[1].Child("Value")
	if ak.Child("Type").Note != "ABORT" || av.Child("CoordinatorEpoch") == nil || av.Child("CoordinatorEpoch").Int != 5 {
		t.Errorf("abort marker: key %q value %+v", ak.Child("Type").Note, av.Children)
	}
	uk, uv := recs[2].Child("Key"), recs[2].Child("Value")
	if uk.Child("Type").Note != "UNKNOWN(7)" || uv.Type != "bytes" || string(uv.Raw) != "?" {
		t.Errorf("unknown control type: key %q value %s %q", uk.Child("Type").Note, uv.Type, uv.Raw)
	}
}

// --- legacy message sets ------------------------------------------------

// legacyPlainV0 is a magic 0 message set of two messages.
//
//	00000000 00000005   offset 5
//	00000012            message size 18
//	87105cac            crc32 (IEEE) of magic..value
//	00                  magic 0
//	00                  attributes: no compression
//	00000001 6b         key "k"
//	00000003 763031     value "v01"
//	00000000 00000006   offset 6
//	00000011            message size 17
//	ce54d4ee            crc32
//	00 00               magic 0, attributes
//	ffffffff            key null
//	00000003 763032     value "v02"
var legacyPlainV0 = mustHex(
	"0000000000000005" + "00000012" + "87105cac" + "00" + "00" + "000000016b" + "00000003763031" +
		"0000000000000006" + "00000011" + "ce54d4ee" + "00" + "00" + "ffffffff" + "00000003763032")

// legacyPlainV1 is one magic 1 message with a timestamp.
//
//	00000000 0000002a   offset 42
//	0000001d            message size 29
//	5dc8f2e5            crc32 (IEEE) of magic..value
//	01                  magic 1
//	00                  attributes: no compression, CreateTime
//	0000018bcfe56800    timestamp 1700000000000
//	ffffffff            key null
//	00000007 6c656761637931  value "legacy1"
var legacyPlainV1 = mustHex(
	"000000000000002a" + "0000001d" + "5dc8f2e5" + "01" + "00" + "0000018bcfe56800" + "ffffffff" + "000000076c656761637931")

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// legacyMessage encodes one magic 0 or 1 message (protocol guide, "Message
// Sets") with a correct CRC.
func legacyMessage(offset int64, magic, attrs int8, ts int64, key, value []byte) []byte {
	body := []byte{byte(magic), byte(attrs)}
	if magic >= 1 {
		body = binary.BigEndian.AppendUint64(body, uint64(ts))
	}
	for _, v := range [][]byte{key, value} {
		if v == nil {
			body = binary.BigEndian.AppendUint32(body, 0xffffffff)
		} else {
			body = binary.BigEndian.AppendUint32(body, uint32(len(v)))
			body = append(body, v...)
		}
	}
	b := binary.BigEndian.AppendUint64(nil, uint64(offset))
	b = binary.BigEndian.AppendUint32(b, uint32(4+len(body)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(body))
	return append(b, body...)
}

func TestLegacyPlain(t *testing.T) {
	var d Decoder
	tr := recDecode(t, &d, legacyPlainV0)
	if errs := recErrors(tr.Root); len(errs) > 0 {
		t.Fatal(errs)
	}
	ms := tr.Root.Children
	if len(ms) != 2 || ms[0].Name != "Message" || ms[0].Len != 30 || ms[1].Off != 30 {
		t.Fatalf("messages %+v", ms)
	}
	if c := ms[0].Child("Crc"); c.Note != "ok" || ms[1].Child("Crc").Note != "ok" {
		t.Errorf("crc %q %q", c.Note, ms[1].Child("Crc").Note)
	}
	if ms[0].Child("Offset").Int != 5 || bytesView(ms[0].Child("Key")) != "k" || bytesView(ms[0].Child("Value")) != "v01" {
		t.Errorf("message 0: %+v", ms[0].Children)
	}
	if ms[1].Child("Offset").Int != 6 || bytesView(ms[1].Child("Key")) != "<null>" || ms[1].Child("Timestamp") != nil {
		t.Errorf("message 1: %+v", ms[1].Children)
	}

	tr = recDecode(t, &d, legacyPlainV1)
	m := tr.Root.Children[0]
	if m.Child("Crc").Note != "ok" || m.Child("Magic").Int != 1 || bytesView(m.Child("Value")) != "legacy1" {
		t.Errorf("v1 message %+v", m.Children)
	}
	if ts := m.Child("Timestamp"); ts.Note != "1700000000000 (2023-11-14T22:13:20.000Z)" {
		t.Errorf("timestamp %q", ts.Note)
	}

	bad := bytes.Clone(legacyPlainV1)
	bad[len(bad)-1] ^= 1
	m = recDecode(t, &d, bad).Root.Children[0]
	if c := m.Child("Crc"); c.Flags&FlagError == 0 || !strings.HasPrefix(c.Note, "bad: got 0x5dc8f2e5") {
		t.Errorf("flipped byte: crc %q", c.Note)
	}
}

// legacyWrapped builds a magic 1 wrapper at offset 102 around three inner
// messages with relative offsets 0, 1, 2, compressed with codec.
func legacyWrapped(t testing.TB, codec Codec, compressed func([]byte) []byte) []byte {
	var inner []byte
	for i, v := range []string{"a", "bb", "ccc"} {
		inner = append(inner, legacyMessage(int64(i), 1, 0, 1700000000000+int64(i), nil, []byte(v))...)
	}
	if compressed == nil {
		compressed = func(b []byte) []byte { return recCompress(t, codec, b) }
	}
	return legacyMessage(102, 1, int8(codec), 1700000000002, nil, compressed(inner))
}

func TestLegacyCompressed(t *testing.T) {
	var d Decoder
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4} {
		t.Run(c.String(), func(t *testing.T) {
			tr := recDecode(t, &d, legacyWrapped(t, c, nil))
			if errs := recErrors(tr.Root); len(errs) > 0 {
				t.Fatal(errs)
			}
			w := tr.Root.Children[0]
			set := w.Child("MessageSet")
			if set == nil || set.Space != 1 || len(set.Children) != 3 {
				t.Fatalf("wrapper children %+v", w.Children)
			}
			if want := c.String() + "-decompressed message set of message at 0x0"; tr.Spaces[1].Name != want {
				t.Errorf("space %q", tr.Spaces[1].Name)
			}
			for i, m := range set.Children {
				if m.Space != 1 || m.Child("Crc").Note != "ok" {
					t.Errorf("inner %d: space %d crc %q", i, m.Space, m.Child("Crc").Note)
				}
				// Absolute = wrapper offset 102 - last relative 2 + relative i.
				if want := fmt.Sprintf("relative; offset %d", 100+i); m.Child("Offset").Note != want {
					t.Errorf("inner %d offset note %q, want %q", i, m.Child("Offset").Note, want)
				}
			}
			if got := bytesView(set.Children[2].Child("Value")); got != "ccc" {
				t.Errorf("inner value %q", got)
			}
		})
	}
	t.Run("LogAppendTime wrapper", func(t *testing.T) {
		inner := legacyMessage(0, 1, 0, 5, nil, []byte("x"))
		w := legacyMessage(9, 1, int8(CodecGzip)|0x08, 1700000000000, nil, recCompress(t, CodecGzip, inner))
		tr := recDecode(t, &d, w)
		if a := tr.Root.Children[0].Child("Attributes").Note; a != "codec=gzip timestampType=LogAppendTime" {
			t.Errorf("wrapper attributes %q", a)
		}
		ts := tr.Root.Children[0].Child("MessageSet").Children[0].Child("Timestamp")
		if want := "1970-01-01T00:00:00.005Z; LogAppendTime: the wrapper's timestamp 1700000000000 (2023-11-14T22:13:20.000Z) applies"; ts.Note != want {
			t.Errorf("inner timestamp %q", ts.Note)
		}
	})
	t.Run("nested too deep", func(t *testing.T) {
		msg := legacyMessage(0, 1, 0, 0, nil, []byte("x"))
		for range maxLegacyDepth + 1 {
			msg = legacyMessage(0, 1, int8(CodecGzip), 0, nil, recCompress(t, CodecGzip, msg))
		}
		tr := recDecode(t, &d, msg)
		n, depth := tr.Root.Children[0], 0
		for n.Child("MessageSet") != nil {
			n, depth = n.Child("MessageSet").Children[0], depth+1
		}
		if depth != maxLegacyDepth || n.Flags&FlagError == 0 || !strings.Contains(n.Note, "nesting too deep") {
			t.Errorf("stopped at depth %d: %q", depth, n.Note)
		}
	})
}

func TestLegacyLZ4BrokenHeaderChecksum(t *testing.T) {
	var frame []byte
	msg := legacyWrapped(t, CodecLZ4, func(b []byte) []byte {
		frame = recCompress(t, CodecLZ4, b)
		// Rewrite the header checksum the way Kafka 0.8/0.9 did: over the
		// 4 magic bytes too. This frame has no content size or dictionary
		// ID, so the descriptor is FLG and BD and HC is byte 6.
		if frame[4]&0x09 != 0 {
			t.Fatalf("unexpected FLG %#x", frame[4])
		}
		frame[6] = byte(xxh32(frame[:6], 0) >> 8)
		return frame
	})
	if _, _, err := Decompress(CodecLZ4, frame, 0, 2); err == nil {
		t.Fatal("a magic 2 payload with the broken checksum decoded: the test frame is not broken")
	}
	var d Decoder
	tr := recDecode(t, &d, msg)
	if errs := recErrors(tr.Root); len(errs) > 0 {
		t.Fatal(errs)
	}
	w := tr.Root.Children[0]
	if !strings.Contains(w.Note, "KAFKA-1493") || len(w.Child("MessageSet").Children) != 3 {
		t.Errorf("wrapper note %q children %d", w.Note, len(w.Child("MessageSet").Children))
	}
	if !bytes.Equal(tr.Spaces[0].Data, msg) {
		t.Error("decoding modified the input")
	}
}

// benchRecords returns the 100 records of BenchmarkRecordBatch.
func benchRecords() []recRecord {
	var recs []recRecord
	for i := range 100 {
		recs = append(recs, recRecord{
			OffsetDelta: int64(i), TimestampDelta: int64(i),
			Key:     []byte(fmt.Sprintf("user-%04d", i)),
			Value:   []byte(fmt.Sprintf(`{"id":%d,"name":"user %d","email":"user%d@example.com","active":true,"score":%d}`, i, i, i, i*37)),
			Headers: [][2][]byte{{[]byte("trace-id"), []byte(fmt.Sprintf("%016x", i*7919))}},
		})
	}
	return recs
}

// TestRecordAllocBudget keeps decoding's allocations per record small:
// nodes come from slabs, the records' notes (absolute timestamp and
// offset) from shared chunks (38 allocations for the batch, was 236
// when each note was a string of its own).
func TestRecordAllocBudget(t *testing.T) {
	batch := recBuild(t, CodecNone, 0, 1700000000000, benchRecords())
	var d Decoder
	allocs := testing.AllocsPerRun(20, func() { d.DecodeRecordBatches(batch) })
	if budget := 60.0; allocs > budget {
		t.Errorf("%v allocations for a 100-record batch, budget %v", allocs, budget)
	}
}

// BenchmarkRecordBatch decodes a 100-record batch (about 12 KiB of
// records) per codec; SetBytes counts the batch as it is on the wire.
func BenchmarkRecordBatch(b *testing.B) {
	recs := benchRecords()
	for c := CodecNone; c <= CodecZstd; c++ {
		batch := recBuild(b, c, 0, 1700000000000, recs)
		b.Run(c.String(), func(b *testing.B) {
			var d Decoder
			b.ReportAllocs()
			b.SetBytes(int64(len(batch)))
			for b.Loop() {
				tr := d.DecodeRecordBatches(batch)
				if len(tr.Root.Children) != 1 {
					b.Fatal("no batch")
				}
			}
		})
	}
}

// TestRecordsInsideProduce decodes a RECORDS field through the schema
// interpreter: spans are in the body's space, decompressed records in a
// space appended to the same tree.
func TestRecordsInsideProduce(t *testing.T) {
	batch := recBuild(t, CodecGzip, 0, 1700000000000, []recRecord{{Key: []byte("k"), Value: []byte("v")}})
	// ProduceRequest v3:
	//	ffff           TransactionalId null
	//	0001           Acks 1
	//	00007530       TimeoutMs 30000
	//	00000001       TopicData: 1
	//	0001 74          Name "t"
	//	00000001         PartitionData: 1
	//	00000000           Index 0
	//	LLLLLLLL ...       Records: int32 length, the batch
	body := mustHex("ffff" + "0001" + "00007530" + "00000001" + "000174" + "00000001" + "00000000")
	recOff := len(body) + 4
	body = binary.BigEndian.AppendUint32(body, uint32(len(batch)))
	body = append(body, batch...)

	d := Decoder{Records: true}
	tr := d.DecodeBody(0, 3, false, body)
	if tr.Err != nil {
		t.Fatal(tr.Err)
	}
	recCheckTree(t, tr)
	var records *Node
	var find func(n *Node)
	find = func(n *Node) {
		if n.Kind == KindRecords {
			records = n
		}
		for _, c := range n.Children {
			find(c)
		}
	}
	find(tr.Root)
	if records == nil || len(records.Children) != 1 {
		t.Fatalf("records node %+v", records)
	}
	b := records.Children[0]
	if b.Name != "RecordBatch" || b.Space != 0 || b.Off != recOff || b.Len != len(batch) {
		t.Fatalf("batch %s at %d/[%d,%d), want space 0 [%d,%d)", b.Name, b.Space, b.Off, b.End(), recOff, recOff+len(batch))
	}
	if b.Child("Crc").Note != "ok" {
		t.Errorf("crc %q", b.Child("Crc").Note)
	}
	if len(tr.Spaces) != 2 || tr.Spaces[1].Name != fmt.Sprintf("gzip-decompressed records of batch at %#x", recOff) {
		t.Fatalf("spaces %d, %q", len(tr.Spaces), tr.Spaces[len(tr.Spaces)-1].Name)
	}
	if rs := recViews(t, b); len(rs) != 1 || rs[0].Key != "k" || rs[0].Value != "v" {
		t.Errorf("records %+v", rs)
	}
	// With Records off the field stays a raw span.
	d.Records = false
	tr = d.DecodeBody(0, 3, false, body)
	records = nil
	find(tr.Root)
	if records == nil || len(records.Children) != 0 || len(tr.Spaces) != 1 {
		t.Errorf("Records off: %+v", records)
	}
}

func TestRecordsNodeNotAliasing(t *testing.T) {
	batch := recBuild(t, CodecNone, 5, 0, []recRecord{{Value: []byte("x")}})
	// A caller-built node whose Raw is a copy, not a view of its space.
	tr := &Tree{Spaces: []Space{{Name: "frame", Data: append([]byte{0, 0, 0, 0}, batch...)}}}
	n := &Node{Name: "Records", Kind: KindRecords, Off: 0, Len: 4 + len(batch), Raw: bytes.Clone(batch)}
	tr.Root = n
	var d Decoder
	d.decodeRecords(tr, n)
	recCheckTree(t, tr)
	if len(tr.Spaces) != 2 || len(n.Children) != 1 || n.Children[0].Space != 1 || n.Children[0].Child("BaseOffset").Int != 5 {
		t.Errorf("spaces %d, children %+v", len(tr.Spaces), n.Children)
	}
}

// --- fixtures in testdata/records ----------------------------------------

var updateRecordFixtures = flag.Bool("update-records", false, "rewrite testdata/records/*.hex")

// recFixture is a RECORDS value kept in testdata/records as plain hex (32
// bytes a line), for the CLI's tests and for people to try; check asserts
// what decoding it must show.
type recFixture struct {
	file  string
	build func(t *testing.T) []byte
	check func(t *testing.T, tr *Tree)
}

var recFixtures = []recFixture{
	{"legacy-v0-plain.hex", func(*testing.T) []byte { return legacyPlainV0 },
		func(t *testing.T, tr *Tree) {
			if len(tr.Root.Children) != 2 || bytesView(tr.Root.Children[1].Child("Value")) != "v02" {
				t.Errorf("children %+v", tr.Root.Children)
			}
		}},
	{"legacy-v1-gzip.hex", func(t *testing.T) []byte { return legacyWrapped(t, CodecGzip, nil) },
		func(t *testing.T, tr *Tree) {
			set := tr.Root.Children[0].Child("MessageSet")
			if set == nil || len(set.Children) != 3 || set.Children[0].Child("Offset").Note != "relative; offset 100" {
				t.Errorf("inner set %+v", set)
			}
		}},
	{"legacy-v1-lz4-kafka1493.hex", func(t *testing.T) []byte {
		return legacyWrapped(t, CodecLZ4, func(b []byte) []byte {
			f := recCompress(t, CodecLZ4, b)
			f[6] = byte(xxh32(f[:6], 0) >> 8)
			return f
		})
	}, func(t *testing.T, tr *Tree) {
		w := tr.Root.Children[0]
		if !strings.Contains(w.Note, "KAFKA-1493") || w.Child("MessageSet") == nil {
			t.Errorf("wrapper %q", w.Note)
		}
	}},
	{"v2-snappy-xerial-3-chunks.hex", func(t *testing.T) []byte {
		return recBuild(t, CodecSnappy, 0, 1700000000000, []recRecord{{Key: []byte("big"), Value: bytes.Repeat([]byte("0123456789abcdef"), 70<<10/16)}})
	}, func(t *testing.T, tr *Tree) {
		recs := tr.Root.Children[0].Child("Records")
		if !strings.Contains(recs.Note, "xerial framing, 3 chunks") || len(recs.Children) != 1 {
			t.Errorf("records %q, %d children", recs.Note, len(recs.Children))
		}
	}},
	{"v2-zstd-bomb-1MiB.hex", func(t *testing.T) []byte {
		return recBuild(t, CodecZstd, 0, 0, []recRecord{{Value: make([]byte, 1<<20)}})
	}, func(t *testing.T, tr *Tree) {
		// Under the default cap it decodes; TestRecordFixtures also tries a
		// 64 KiB cap.
		if recs := tr.Root.Children[0].Child("Records"); len(recs.Children) != 1 || len(recs.Children[0].Child("Value").Raw) != 1<<20 {
			t.Errorf("records %q", recs.Note)
		}
	}},
	{"v2-then-partial.hex", func(t *testing.T) []byte {
		b := recBuild(t, CodecNone, 40, 1700000000000, []recRecord{{Value: []byte("whole")}})
		return append(b, recBuild(t, CodecNone, 41, 1700000000000, []recRecord{{Value: []byte("cut")}})[:30]...)
	}, func(t *testing.T, tr *Tree) {
		if k := tr.Root.Children; len(k) != 2 || k[1].Flags&FlagPartial == 0 || !strings.HasPrefix(k[1].Note, "partial batch (normal): 30 of 71 bytes, base offset 41") {
			t.Errorf("children %+v", k[len(k)-1])
		}
	}},
}

func TestRecordFixtures(t *testing.T) {
	for _, f := range recFixtures {
		t.Run(f.file, func(t *testing.T) {
			path := filepath.Join("testdata", "records", f.file)
			if *updateRecordFixtures {
				b := f.build(t)
				var sb strings.Builder
				for len(b) > 0 {
					n := min(len(b), 32)
					sb.WriteString(hex.EncodeToString(b[:n]) + "\n")
					b = b[n:]
				}
				if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-records to create it)", err)
			}
			b, err := hex.DecodeString(strings.ReplaceAll(string(text), "\n", ""))
			if err != nil {
				t.Fatal(err)
			}
			var d Decoder
			tr := recDecode(t, &d, b)
			f.check(t, tr)
			for _, e := range recErrors(tr.Root) {
				if !strings.Contains(f.file, "partial") {
					t.Errorf("error in fixture: %s", e)
				}
			}
			if strings.Contains(f.file, "bomb") {
				d.MaxDecompressed = 64 << 10
				tr = recDecode(t, &d, b)
				if n := tr.Root.Children[0].Child("Records").Note; !strings.HasPrefix(n, "decompression bomb: zstd data of 146 bytes inflates past the 64 KiB cap on a frame's decompressed bytes; only its first 65536 bytes decoded") {
					t.Errorf("under a 64 KiB cap: %q", n)
				}
				if tr.Limits != LimitDecompressed {
					t.Errorf("limits %b", tr.Limits)
				}
			}
		})
	}
}

func TestRecordCRCNoteDigits(t *testing.T) {
	vs := recVectors(t)
	b := bytes.Clone(recVectorByName(t, vs, "gzip")) // its CRC is 0x00c4241f
	b[17+3] ^= 0xff                                  // corrupt the stored CRC, not the data
	var d Decoder
	c := recBatch(t, recDecode(t, &d, b)).Child("Crc")
	if c.Note != "bad: got 0x00c424e0, computed 0x00c4241f" {
		t.Errorf("note %q", c.Note)
	}
}

// TestRecordKmsgDifferential holds batch headers and records against
// franz-go's kmsg, an independent reader of the same format.
func TestRecordKmsgDifferential(t *testing.T) {
	inputs := map[string][]byte{}
	for _, v := range fuzzVectorSeeds() {
		inputs[fmt.Sprintf("vector %d", len(inputs))] = v
	}
	for c := CodecNone; c <= CodecZstd; c++ {
		inputs["built "+c.String()] = recBuild(t, c, 77, 1700000000000, benchRecords()[:20])
	}
	var d Decoder
	compared := 0
	for name, b := range inputs {
		tr := recDecode(t, &d, b)
		n := recBatch(t, tr)
		var kb kmsg.RecordBatch
		if err := kb.ReadFrom(b); err != nil {
			t.Fatalf("%s: kmsg: %v", name, err)
		}
		for _, f := range []struct {
			field string
			want  int64
		}{
			{"BaseOffset", kb.FirstOffset}, {"BatchLength", int64(kb.Length)},
			{"PartitionLeaderEpoch", int64(kb.PartitionLeaderEpoch)}, {"Magic", int64(kb.Magic)},
			{"Crc", int64(uint32(kb.CRC))}, {"Attributes", int64(kb.Attributes)},
			{"LastOffsetDelta", int64(kb.LastOffsetDelta)}, {"BaseTimestamp", kb.FirstTimestamp},
			{"MaxTimestamp", kb.MaxTimestamp}, {"ProducerId", kb.ProducerID},
			{"ProducerEpoch", int64(kb.ProducerEpoch)}, {"BaseSequence", int64(kb.FirstSequence)},
			{"Records", int64(kb.NumRecords)},
		} {
			if got := n.Child(f.field).Int; got != f.want {
				t.Errorf("%s: %s = %d, kmsg %d", name, f.field, got, f.want)
			}
		}
		for _, r := range n.Child("Records").Children {
			var kr kmsg.Record
			if err := kr.ReadFrom(tr.Spaces[r.Space].Data[r.Off:r.End()]); err != nil {
				t.Fatalf("%s %s: kmsg: %v", name, r.Name, err)
			}
			if r.Child("Length").Int != int64(kr.Length) || r.Child("Attributes").Int != int64(kr.Attributes) ||
				r.Child("TimestampDelta").Int != kr.TimestampDelta64 || r.Child("OffsetDelta").Int != int64(kr.OffsetDelta) {
				t.Errorf("%s %s: fixed fields differ from kmsg %+v", name, r.Name, kr)
			}
			same := func(n *Node, want []byte) bool {
				return n.Flags&FlagNull != 0 == (want == nil) && bytes.Equal(n.Raw, want)
			}
			if !same(r.Child("Key"), kr.Key) || !same(r.Child("Value"), kr.Value) {
				t.Errorf("%s %s: key/value differ from kmsg", name, r.Name)
			}
			hs := r.Child("Headers").Children
			if len(hs) != len(kr.Headers) {
				t.Fatalf("%s %s: %d headers, kmsg %d", name, r.Name, len(hs), len(kr.Headers))
			}
			for i, h := range kr.Headers {
				if string(hs[i].Child("Key").Raw) != h.Key || !same(hs[i].Child("Value"), h.Value) {
					t.Errorf("%s %s header %d differs from kmsg", name, r.Name, i)
				}
			}
			compared++
		}
	}
	if compared < 100 {
		t.Errorf("only %d records compared", compared)
	}
}

func TestControlTypeNamesMatchKmsg(t *testing.T) {
	for typ := int16(0); typ <= 6; typ++ {
		want := kmsg.ControlRecordKeyType(typ).String()
		if typ == 2 {
			want = "LEADER_CHANGE" // kmsg keeps the pre-3.0 name QUORUM_REASSIGNMENT
		}
		if got := ControlTypeName(typ); got != want {
			t.Errorf("type %d: %q, kmsg %q", typ, got, want)
		}
	}
}

// TestRecordConcurrentDecode shares one Decoder (and the codec pools)
// between goroutines; run with -race.
func TestRecordConcurrentDecode(t *testing.T) {
	var batches [][]byte
	for c := CodecGzip; c <= CodecZstd; c++ {
		batches = append(batches, recBuild(t, c, 0, 0, benchRecords()[:10]))
	}
	batches = append(batches, legacyWrapped(t, CodecLZ4, nil))
	var d Decoder
	done := make(chan string)
	for g := range 4 {
		go func() {
			msg := ""
			for i := range 20 {
				b := batches[(g+i)%len(batches)]
				if errs := recErrors(d.DecodeRecordBatches(b).Root); len(errs) > 0 {
					msg = fmt.Sprint(errs)
				}
			}
			done <- msg
		}()
	}
	for range 4 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}

// Record notes are the same text whether built or given again: a
// record's timestamp note is reused for the next record of the same
// instant only, under LogAppendTime only in a batch of the same
// MaxTimestamp; offset notes are carved from a shared arena.
func TestRecordNotes(t *testing.T) {
	deltas := []int64{0, 0, 5, 5, 0, 7, 7, 7}
	var recs []recRecord
	for i, d := range deltas {
		recs = append(recs, recRecord{OffsetDelta: int64(i), TimestampDelta: d, Key: []byte("k"), Value: []byte("v")})
	}
	const ts = 1700000000000
	for _, attrs := range []int16{0, 0x08} { // CreateTime, LogAppendTime
		// Two batches of one call: the second's MaxTimestamp differs.
		b := append(recBuildAttrs(t, attrs, 100, ts, recs), recBuildAttrs(t, attrs, 200, ts, recs[:4])...)
		var d Decoder
		tr := recDecode(t, &d, b)
		if len(tr.Root.Children) != 2 {
			t.Fatalf("%d batches, want 2", len(tr.Root.Children))
		}
		for bi, batch := range tr.Root.Children {
			base := batch.Child("BaseOffset").Int
			maxTS := batch.Child("MaxTimestamp").Int
			for i, r := range batch.Child("Records").Children {
				want := "timestamp " + string(appendTimestamp(nil, ts+deltas[i]))
				if attrs&0x08 != 0 {
					want += "; LogAppendTime: the batch's MaxTimestamp " + string(appendTimestamp(nil, maxTS)) + " applies"
				}
				if got := r.Child("TimestampDelta").Note; got != want {
					t.Errorf("attrs %#x batch %d record %d: TimestampDelta note %q, want %q", attrs, bi, i, got, want)
				}
				if got, want := r.Child("OffsetDelta").Note, fmt.Sprintf("offset %d", base+int64(i)); got != want {
					t.Errorf("attrs %#x batch %d record %d: OffsetDelta note %q, want %q", attrs, bi, i, got, want)
				}
			}
		}
	}
}
