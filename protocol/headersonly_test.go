package protocol

import (
	"bytes"
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
