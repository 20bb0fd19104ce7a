package stats

import (
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

func TestBatchesRawAndDecoded(t *testing.T) {
	b0, u0 := batch(3, "abc", false)
	b1, u1 := batch(4, "compress me compress me compress me", true)
	data := append(append([]byte{}, b0...), b1...)
	data = append(data, b0[:30]...) // a partial batch, as Fetch responses end
	want := BatchInfo{Batches: 2, Records: 7, WireBytes: int64(len(b0) + len(b1)),
		Uncompressed: int64(u0 + u1), Codecs: []string{"none", "gzip"}}

	tr := dec.DecodeRecordBatches(data)
	got := Batches(tr, tr.Root)
	if got.Batches != want.Batches || got.Records != want.Records || got.WireBytes != want.WireBytes ||
		got.Uncompressed != want.Uncompressed || got.Unknown != 0 || len(got.Codecs) != 2 {
		t.Errorf("decoded: %+v, want %+v", got, want)
	}
	// Undecoded records: headers read from the raw bytes; the compressed
	// batch's decompressed size is unknown.
	raw := &protocol.Node{Name: "Records", Kind: protocol.KindRecords, Raw: data, Len: len(data)}
	got = Batches(nil, raw)
	if got.Batches != 2 || got.Records != 7 || got.WireBytes != want.WireBytes ||
		got.Uncompressed != int64(u0) || got.Unknown != 1 {
		t.Errorf("raw: %+v", got)
	}
	if got := Batches(nil, &protocol.Node{Kind: protocol.KindRecords, Flags: protocol.FlagNull}); got.Batches != 0 {
		t.Errorf("null records: %+v", got)
	}
}

// A batch whose record count claims more records than it holds counts the
// records present, not the claim (2147483647 records from a 100-byte batch).
func TestBatchesLyingCount(t *testing.T) {
	b, _ := batch(2, "ab", false)
	b[57], b[58], b[59], b[60] = 0x7f, 0xff, 0xff, 0xff // record count 2147483647
	tr := dec.DecodeRecordBatches(b)
	if got := Batches(tr, tr.Root); got.Batches != 1 || got.Records != 2 {
		t.Errorf("%+v, want 1 batch of 2 records", got)
	}
}

func FuzzBatches(f *testing.F) {
	b0, _ := batch(2, "x", false)
	b1, _ := batch(2, "y", true)
	f.Add(append(b0, b1...))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &protocol.Decoder{Records: true, MaxDecompressed: 1 << 20}
		tr := d.DecodeRecordBatches(data)
		for _, bi := range []BatchInfo{
			Batches(tr, tr.Root),
			Batches(nil, &protocol.Node{Kind: protocol.KindRecords, Raw: data, Len: len(data)}),
		} {
			if bi.WireBytes > int64(len(data)) || bi.Records < 0 || bi.Batches < 0 || bi.Uncompressed < 0 {
				t.Fatalf("%+v for %d bytes", bi, len(data))
			}
		}
	})
}

// A frame whose record batch could not be decoded counts as a decode
// failure of its connection, though Tree.Err stays nil.
func TestCollectorCountsRecordErrors(t *testing.T) {
	b, _ := batch(1, "v", true)
	b[len(b)-3] ^= 0xff // inside the gzip stream
	tr := (&protocol.Decoder{Records: true}).DecodeRecordBatches(b)
	if tr.Err != nil || tr.FirstError() == nil {
		t.Fatalf("want a record-level error only: Err %v", tr.Err)
	}
	c := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:50000"), B: ap("10.0.0.9:9092")}
	col := NewCollector(Options{})
	col.Exchange(xchg(c, "x", &dissect.Frame{Tree: tr, Bytes: b}, nil, 0, 3, 1, 1, 0, 0))
	if r := col.Report(); len(r.Connections) != 1 || r.Connections[0].DecodeFailures != 1 {
		t.Errorf("connections %+v", r.Connections)
	}
}
