package facts

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batch encodes a magic 2 record batch of n records of value val at base
// offset base (gzip-compressed when gz) and returns it with its size
// decompressed.
func batch(base int64, n int, val string, gz bool) (b []byte, uncompressed int) {
	var recs []byte
	for i := range n {
		var body []byte
		body = append(body, 0)                     // attributes
		body = binary.AppendVarint(body, 0)        // timestamp delta
		body = binary.AppendVarint(body, int64(i)) // offset delta
		body = binary.AppendVarint(body, -1)       // null key
		body = binary.AppendVarint(body, int64(len(val)))
		body = append(body, val...)
		body = binary.AppendVarint(body, 0) // no headers
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	uncompressed = 61 + len(recs)
	rb := kmsg.RecordBatch{FirstOffset: base, Magic: 2, LastOffsetDelta: int32(n - 1), NumRecords: int32(n),
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, Records: recs}
	if gz {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(recs)
		w.Close()
		rb.Records = buf.Bytes()
		rb.Attributes = 1
	}
	rb.Length = int32(49 + len(rb.Records))
	b = rb.AppendTo(nil)
	crc := crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(b[17:], crc)
	return b, uncompressed
}

var dec = &protocol.Decoder{Records: true}

func TestSummarizeDecoded(t *testing.T) {
	b0, u0 := batch(100, 3, "abc", false)
	b1, u1 := batch(103, 4, "compress me compress me compress me", true)
	data := append(append([]byte{}, b0...), b1...)
	data = append(data, b0[:30]...) // a partial batch, as Fetch responses end
	tr := dec.DecodeRecordBatches(data)
	r := summarize(tr, tr.Root)
	if r.Batches != 2 || r.Count != 7 || r.Bytes != int64(len(b0)+len(b1)) || r.Uncompressed != int64(u0+u1) ||
		r.UnknownSize != 0 || !r.Partial {
		t.Errorf("%+v", r)
	}
	if got := r.Codecs.Names(); len(got) != 2 || got[0] != "none" || got[1] != "gzip" {
		t.Errorf("codecs %v", got)
	}
	if !r.HasOffsets || r.FirstOffset != 100 || r.LastOffset != 106 {
		t.Errorf("offsets %d-%d (%v), want 100-106", r.FirstOffset, r.LastOffset, r.HasOffsets)
	}
	// Batch headers only: counts from the headers, sizes of compressed
	// batches unknown.
	h := &protocol.Decoder{Records: true, BatchHeadersOnly: true}
	tr = h.DecodeRecordBatches(data)
	r = summarize(tr, tr.Root)
	if r.Batches != 2 || r.Count != 7 || r.Uncompressed != int64(u0) || r.UnknownSize != 1 {
		t.Errorf("headers only: %+v", r)
	}
	// Not decoded: the field's bytes only.
	raw := &protocol.Node{Name: "Records", Kind: protocol.KindRecords, Raw: data, Len: len(data)}
	if r := summarize(nil, raw); r.Batches != 0 || r.Bytes != int64(len(data)) {
		t.Errorf("raw: %+v", r)
	}
}

// A batch whose record count claims more records than it holds counts the
// records present, not the claim (2147483647 records from a 100-byte batch).
func TestSummarizeLyingCount(t *testing.T) {
	b, _ := batch(0, 2, "ab", false)
	b[57], b[58], b[59], b[60] = 0x7f, 0xff, 0xff, 0xff // record count 2147483647
	tr := dec.DecodeRecordBatches(b)
	if r := summarize(tr, tr.Root); r.Batches != 1 || r.Count != 2 {
		t.Errorf("%+v, want 1 batch of 2 records", r)
	}
}

func FuzzSummarize(f *testing.F) {
	b0, _ := batch(0, 2, "x", false)
	b1, _ := batch(2, 2, "y", true)
	f.Add(append(b0, b1...))
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		d := &protocol.Decoder{Records: true, MaxDecompressed: 1 << 20}
		tr := d.DecodeRecordBatches(data)
		r := summarize(tr, tr.Root)
		if r.Bytes > int64(len(data)) || r.Count < -1 || r.Batches < 0 || r.Uncompressed < 0 {
			t.Fatalf("%+v for %d bytes", r, len(data))
		}
	})
}

// legacyMessage encodes one uncompressed legacy message (magic 0 or 1)
// of value val at offset off, with its CRC.
func legacyMessage(magic int8, off int64, val string) []byte {
	m := []byte{byte(magic), 0} // magic, attributes
	if magic == 1 {
		m = binary.BigEndian.AppendUint64(m, 1700000000000) // timestamp
	}
	m = binary.BigEndian.AppendUint32(m, 0xffffffff) // null key
	m = binary.BigEndian.AppendUint32(m, uint32(len(val)))
	m = append(m, val...)
	m = append(binary.BigEndian.AppendUint32(nil, crc32.ChecksumIEEE(m)), m...)
	return append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(nil, uint64(off)), uint32(len(m))), m...)
}

// TestSummarizeLegacyMagics: a legacy message set's magics are its
// messages' own: a magic 1 set read as magics 0 and 1 (--normalize's
// formats "v0, v1", JSON "magics":[0,1]).
func TestSummarizeLegacyMagics(t *testing.T) {
	b2, _ := batch(0, 1, "x", false)
	for _, c := range []struct {
		data []byte
		want uint8
	}{
		{legacyMessage(0, 0, "a"), 1 << 0},
		{append(legacyMessage(1, 0, "a"), legacyMessage(1, 1, "b")...), 1 << 1},
		{b2, 1 << 2},
	} {
		tr := dec.DecodeRecordBatches(c.data)
		if tr.Err != nil {
			t.Fatal(tr.Err)
		}
		if r := summarize(tr, tr.Root); r.Magics != c.want || r.Batches == 0 {
			t.Errorf("%x: magics %03b, batches %d; want %03b", c.data, r.Magics, r.Batches, c.want)
		}
	}
}
