package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"

	"github.com/kwire/kwire/internal/poison"
)

// lz4Frame compresses in as one LZ4 frame with the given options.
func lz4Frame(tb testing.TB, in []byte, opts ...lz4.Option) []byte {
	tb.Helper()
	var buf bytes.Buffer
	w := lz4.NewWriter(&buf)
	if err := w.Apply(opts...); err != nil {
		tb.Fatal(err)
	}
	if _, err := w.Write(in); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// Every LZ4 frame layout the writer makes decodes to its input, and a cap
// below the input's size is reported as too large.
func TestLZ4FrameLayouts(t *testing.T) {
	for _, bs := range []lz4.BlockSize{lz4.Block64Kb, lz4.Block256Kb, lz4.Block1Mb, lz4.Block4Mb} {
		for _, sums := range []bool{false, true} {
			for _, size := range []bool{false, true} {
				for _, n := range []int{0, 1, 100, 70 << 10, 300 << 10} {
					in := codecSample(n, uint64(n))
					opts := []lz4.Option{lz4.BlockSizeOption(bs), lz4.ChecksumOption(sums), lz4.BlockChecksumOption(sums)}
					if size {
						opts = append(opts, lz4.SizeOption(uint64(n)))
					}
					frame := lz4Frame(t, in, opts...)
					name := fmt.Sprintf("%v/sums=%v/size=%v/%d", bs, sums, size, n)
					var m treeMem
					out, _, err := decompress(CodecLZ4, frame, DefaultMaxDecompressed, 2, &m)
					if err != nil || !bytes.Equal(out, in) {
						t.Errorf("%s: got %d bytes, err %v; want the %d input bytes", name, len(out), err, n)
					}
					if n > 1 {
						if _, _, err := decompress(CodecLZ4, frame, int64(n-1), 2, &m); !errors.Is(err, ErrDecompressedTooLarge) {
							t.Errorf("%s: cap %d: err %v, want ErrDecompressedTooLarge", name, n-1, err)
						}
					}
				}
			}
		}
	}
}

// benchValues is a batch payload like the benchmark captures': records of
// a short key and a 1000-byte text value.
func benchValues() []byte {
	var b []byte
	for i := range 1000 {
		b = fmt.Appendf(b, "p3-%d", i)
		b = append(b, strings.Repeat("capgen benchmark value ", 44)[:1000]...)
	}
	return b
}

// BenchmarkDecompress inflates a 1 MB payload per codec, allocating its
// output (Decompress) or taking it from a tree's pools (pooled, as kwire
// read's workers do); bytes are the inflated ones.
func BenchmarkDecompress(b *testing.B) {
	in := benchValues()
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		comp := recCompress(b, c, in)
		if c == CodecZstd {
			// As franz-go compresses: a whole batch at once, with its
			// content size in the frame header.
			enc, err := zstd.NewWriter(nil)
			if err != nil {
				b.Fatal(err)
			}
			comp = enc.EncodeAll(in, nil)
		}
		b.Run(c.String(), func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				if out, _, err := Decompress(c, comp, 0, 2); err != nil || len(out) != len(in) {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.String()+"/pooled", func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				var m treeMem
				if out, _, err := decompress(c, comp, DefaultMaxDecompressed, 2, &m); err != nil || len(out) != len(in) {
					b.Fatal(err)
				}
				m.release()
			}
		})
	}
}

// Trees decoded after others were released, from pooled memory, equal
// trees decoded from fresh memory; a released tree is empty.
func TestTreeRelease(t *testing.T) {
	var batches [][]byte
	for c := CodecNone; c <= CodecZstd; c++ {
		batches = append(batches, recBuild(t, c, 100, 1700000000000, benchRecords()))
	}
	var d Decoder
	var fresh []string
	for _, b := range batches {
		fresh = append(fresh, fmt.Sprintf("%+v", dumpTree(d.DecodeRecordBatches(b).Root)))
	}
	for round := range 3 {
		for i, b := range batches {
			tr := d.DecodeRecordBatches(b)
			if got := fmt.Sprintf("%+v", dumpTree(tr.Root)); got != fresh[i] {
				t.Fatalf("round %d, batch %d: pooled tree differs from a fresh one", round, i)
			}
			tr.Release()
			if tr.Root != nil || tr.Spaces != nil || tr.FirstError() != nil {
				t.Fatalf("released tree not empty: %+v", tr)
			}
		}
	}
}

// dumpTree flattens a tree into comparable values.
func dumpTree(n *Node) []string {
	var out []string
	var walk func(n *Node, depth int)
	walk = func(n *Node, depth int) {
		out = append(out, fmt.Sprintf("%d %s %s %d %d %d %d %d %d %v %q %x %q", depth, n.Name, n.Type, n.Kind, n.Flags, n.Space, n.Off, n.Len, n.Int, n.Float, n.Str, n.Raw, n.Note))
		for _, c := range n.Children {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return out
}

// TestReleasePoisons: with released memory poisoned (internal/poison, as
// the kwirepoison golden runs do), a node, a Children slice or a
// decompressed record value kept past Tree.Release reads as RELEASED
// instead of a value, so a use after release shows in any output; and
// nothing poisoned comes back from the pools for the next tree.
func TestReleasePoisons(t *testing.T) {
	defer func(was bool) { poison.Released = was }(poison.Released)
	poison.Released = true
	var d Decoder
	b := recBuild(t, CodecGzip, 100, 1700000000000, benchRecords())
	fresh := fmt.Sprintf("%+v", dumpTree(d.DecodeRecordBatches(b).Root))
	tr := d.DecodeRecordBatches(b)
	var value *Node // the first record's Value, in decompressed bytes
	var find func(n *Node)
	find = func(n *Node) {
		if value == nil && n.Name == "Value" && len(n.Raw) > 0 {
			value = n
		}
		for _, c := range n.Children {
			find(c)
		}
	}
	find(tr.Root)
	if value == nil {
		t.Fatal("no record Value in the tree")
	}
	raw, kids := value.Raw, tr.Root.Children // the root itself is not pooled
	tr.Release()
	if value.Str != poison.Marker || kids[0].Name != poison.Marker {
		t.Errorf("kept nodes after Release: value %q, child %q; want %q", value.Str, kids[0].Name, poison.Marker)
	}
	for i, c := range raw {
		if c != poison.Byte {
			t.Fatalf("kept Value byte %d after Release: %#x, want %#x", i, c, poison.Byte)
		}
	}
	if got := fmt.Sprintf("%+v", dumpTree(d.DecodeRecordBatches(b).Root)); got != fresh {
		t.Error("a tree decoded after a poisoned release differs from a fresh one")
	}
}
