package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// codecSample returns n bytes mixing text and noise, so every codec has
// something to compress and something it cannot.
func codecSample(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, 0, n)
	for len(b) < n {
		if rng.IntN(3) == 0 {
			b = append(b, byte(rng.IntN(256)))
		} else {
			b = append(b, "kafka record value "[len(b)%19])
		}
	}
	return b
}

func TestDecompressRoundTrip(t *testing.T) {
	for _, c := range []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		for _, n := range []int{0, 1, 100, 70 << 10, 300 << 10} {
			t.Run(fmt.Sprintf("%v/%d", c, n), func(t *testing.T) {
				in := codecSample(n, uint64(n))
				comp := recCompress(t, c, in)
				out, detail, err := Decompress(c, comp, 0, 2)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out, in) {
					t.Fatalf("round trip changed %d bytes into %d", len(in), len(out))
				}
				if c == CodecSnappy {
					chunks := (n + 32<<10 - 1) / (32 << 10)
					if want := fmt.Sprintf("xerial framing, %d chunk%s", chunks, plural(chunks)); detail != want {
						t.Errorf("detail %q, want %q", detail, want)
					}
				}
				// Exactly at the cap is fine; one byte below is not. (A
				// streamed zstd frame declares a window, which the decoder
				// refuses when it exceeds the cap: see TestDecompressZstdWindow.)
				if n > 1 && c != CodecZstd {
					if _, _, err := Decompress(c, comp, int64(n), 2); err != nil {
						t.Errorf("cap = size: %v", err)
					}
					_, _, err := Decompress(c, comp, int64(n-1), 2)
					if !errors.Is(err, ErrDecompressedTooLarge) {
						t.Errorf("cap = size-1: %v", err)
					}
				}
			})
		}
	}
}

func TestDecompressZstdWindow(t *testing.T) {
	in := codecSample(5000, 5)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	single := enc.EncodeAll(in, nil) // one segment: window = content size
	if out, _, err := Decompress(CodecZstd, single, int64(len(in)), 2); err != nil || !bytes.Equal(out, in) {
		t.Errorf("cap = size: %v", err)
	}
	if _, _, err := Decompress(CodecZstd, single, int64(len(in)-1), 2); !errors.Is(err, ErrDecompressedTooLarge) {
		t.Errorf("cap = size-1: %v", err)
	}
}

func TestDecompressSnappyForms(t *testing.T) {
	in := codecSample(5000, 7)
	raw := snappy.Encode(nil, in)
	out, detail, err := Decompress(CodecSnappy, raw, 0, 2)
	if err != nil || !bytes.Equal(out, in) || detail != "raw snappy" {
		t.Fatalf("raw snappy: %v, %q, equal %v", err, detail, bytes.Equal(out, in))
	}
	// xerial with version fields other writers use: the magic alone decides.
	x := append([]byte(nil), xerialMagic...)
	x = append(x, 0, 0, 0, 9, 0, 0, 0, 7)
	for _, part := range [][]byte{in[:1000], in[1000:]} {
		blk := snappy.Encode(nil, part)
		x = binary.BigEndian.AppendUint32(x, uint32(len(blk)))
		x = append(x, blk...)
	}
	out, detail, err = Decompress(CodecSnappy, x, 0, 2)
	if err != nil || !bytes.Equal(out, in) || detail != "xerial framing, 2 chunks" {
		t.Fatalf("xerial: %v, %q", err, detail)
	}
	// A chunk length beyond the input is corrupt, not an allocation.
	bad := binary.BigEndian.AppendUint32(bytes.Clone(x[:16]), 1<<31)
	if _, _, err := Decompress(CodecSnappy, bad, 0, 2); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "claims") {
		t.Errorf("huge chunk length: %v", err)
	}
	if _, _, err := Decompress(CodecSnappy, x[:12], 0, 2); !errors.Is(err, ErrCorrupt) {
		t.Errorf("cut header: %v", err)
	}
}

func TestDecompressCorrupt(t *testing.T) {
	in := codecSample(2000, 3)
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		comp := recCompress(t, c, in)
		cut := comp[:len(comp)/2]
		out, _, err := Decompress(c, cut, 0, 2)
		if err == nil && bytes.Equal(out, in) {
			t.Errorf("%v: half the input decoded to the whole", c)
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v: %v does not wrap ErrCorrupt", c, err)
		}
		if _, _, err := Decompress(c, []byte("definitely not compressed"), 0, 2); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%v garbage: %v", c, err)
		}
	}
	if _, _, err := Decompress(Codec(5), nil, 0, 2); !errors.Is(err, ErrUnknownCodec) {
		t.Errorf("codec 5: %v", err)
	}
}

func TestDecompressCapMessage(t *testing.T) {
	for _, tc := range []struct {
		max  int64
		want string
	}{
		{DefaultMaxDecompressed, "decompressed size exceeds the 256 MiB cap"},
		{64 << 10, "decompressed size exceeds the 64 KiB cap"},
		{1000, "decompressed size exceeds the 1000 bytes cap"},
		{2 << 30, "decompressed size exceeds the 2 GiB cap"},
	} {
		if got := (capError{tc.max}).Error(); got != tc.want {
			t.Errorf("cap %d: %q, want %q", tc.max, got, tc.want)
		}
	}
	// The cap applies to uncompressed payloads too.
	if _, _, err := Decompress(CodecNone, make([]byte, 10), 9, 2); err == nil || err.Error() != "decompressed size exceeds the 9 bytes cap" {
		t.Errorf("none over the cap: %v", err)
	}
	// A zstd frame declaring a window larger than a small cap is refused as
	// over the cap, before any window is allocated.
	big := recCompress(t, CodecZstd, make([]byte, 4<<20))
	if _, _, err := Decompress(CodecZstd, big, 4096, 2); !errors.Is(err, ErrDecompressedTooLarge) {
		t.Errorf("zstd over a 4 KiB cap: %v", err)
	}
}

func TestXXH32(t *testing.T) {
	// Reference values of the xxHash specification's test suite.
	for _, tc := range []struct {
		in   string
		want uint32
	}{
		{"", 0x02cc5d05},
		{"abc", 0x32d153ff},
	} {
		if got := xxh32([]byte(tc.in), 0); got != tc.want {
			t.Errorf("xxh32(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
	// Against an independent implementation: an LZ4 frame's content checksum
	// is the xxh32 of the content, its header checksum the second byte of
	// the xxh32 of the descriptor.
	for _, n := range []int{1, 3, 15, 16, 17, 31, 64, 1000} {
		in := codecSample(n, uint64(n))
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.ChecksumOption(true), lz4.SizeOption(uint64(n))); err != nil {
			t.Fatal(err)
		}
		w.Write(in)
		w.Close()
		frame := buf.Bytes()
		if got, want := xxh32(in, 0), binary.LittleEndian.Uint32(frame[len(frame)-4:]); got != want {
			t.Errorf("xxh32 of %d bytes = %#x, lz4 content checksum %#x", n, got, want)
		}
		if frame[4]&0x08 == 0 {
			t.Fatalf("frame without content size: FLG %#x", frame[4])
		}
		if got, want := byte(xxh32(frame[4:14], 0)>>8), frame[14]; got != want {
			t.Errorf("header checksum %#x, frame says %#x", got, want)
		}
		if fixed, _ := repairLZ4Header(frame); fixed != nil {
			t.Errorf("repairLZ4Header changed a correct header")
		}
	}
}
