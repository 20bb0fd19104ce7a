package protocol

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"
)

// BatchHeadersOnly: the batch header nodes of a full decode, the Records
// node with its declared count and span but no records, the CRC checked.
func TestBatchHeadersOnly(t *testing.T) {
	recs := []recRecord{{Value: []byte("one")}, {Value: []byte("two")}, {Value: []byte("three")}}
	for _, codec := range []Codec{CodecNone, CodecGzip, CodecLZ4} {
		b := recBuild(t, codec, 0, 0, recs)
		full := (&Decoder{Records: true}).DecodeRecordBatches(b)
		head := (&Decoder{Records: true, BatchHeadersOnly: true}).DecodeRecordBatches(b)
		if len(head.Spaces) != 1 {
			t.Errorf("%v: %d spaces, want only the input (nothing decompressed)", codec, len(head.Spaces))
		}
		fb, hb := full.Root.Children[0], head.Root.Children[0]
		if len(fb.Children) != len(hb.Children) {
			t.Fatalf("%v: %d batch children, full decode %d", codec, len(hb.Children), len(fb.Children))
		}
		for i, hc := range hb.Children {
			fc := fb.Children[i]
			if hc.Name != fc.Name || hc.Off != fc.Off || hc.Len != fc.Len || hc.Int != fc.Int || hc.Note != fc.Note && hc.Name != "Records" {
				t.Errorf("%v: child %d %s %d+%d %d %q, full decode %s %d+%d %d %q", codec, i,
					hc.Name, hc.Off, hc.Len, hc.Int, hc.Note, fc.Name, fc.Off, fc.Len, fc.Int, fc.Note)
			}
		}
		r := hb.Child("Records")
		if r == nil || r.Int != int64(len(recs)) || len(r.Children) != 0 {
			t.Fatalf("%v: Records node %+v, want count %d and no children", codec, r, len(recs))
		}
		if c := hb.Child("Crc"); c == nil || c.Note != "ok" {
			t.Errorf("%v: Crc %+v, want checked", codec, c)
		}

		bad := bytes.Clone(b)
		bad[len(bad)-1] ^= 0xff
		n := (&Decoder{Records: true, BatchHeadersOnly: true}).DecodeRecordBatches(bad).FirstError()
		if n == nil || n.Name != "Crc" {
			t.Errorf("%v: damaged batch: first error %+v, want the Crc", codec, n)
		}
	}
}

// A count the records' bytes cannot hold is an error in BatchHeadersOnly
// too (the one-line mode shows counts without decoding records): an
// uncompressed batch of three records claiming 2^30 or 2^31-1 records,
// its CRC made right. A compressed batch's count is not bounded by its
// wire bytes (a hundred thousand empty records compress to little).
func TestBatchHeadersOnlyCount(t *testing.T) {
	recs := []recRecord{{}, {}, {}}
	for _, c := range []struct {
		codec Codec
		count int32
		bad   bool
	}{
		{CodecNone, 3, false},
		{CodecNone, 1 << 30, true},
		{CodecNone, 2147483647, true},
		{CodecGzip, 2147483647, false},
	} {
		b := recBuild(t, c.codec, 0, 0, recs)
		binary.BigEndian.PutUint32(b[v2HeaderLen-4:], uint32(c.count))
		binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[v2OffAttributes:], castagnoli))
		n := (&Decoder{Records: true, BatchHeadersOnly: true}).DecodeRecordBatches(b).FirstError()
		if got := n != nil; got != c.bad {
			t.Errorf("%v count %d: first error %+v, want an error %v", c.codec, c.count, n, c.bad)
		}
		if c.bad && (n.Name != "Records" || !strings.Contains(n.Note, "does not fit")) {
			t.Errorf("%v count %d: error on %s %q, want the Records' count", c.codec, c.count, n.Name, n.Note)
		}
	}
}
