package protocol

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Fuzz targets for record batches and codecs. Run each for a bounded time,
// e.g.
//
//	go test ./protocol -run '^$' -fuzz FuzzRecordBatches -fuzztime 30s
//	go test ./protocol -run '^$' -fuzz FuzzDecompress -fuzztime 30s

// fuzzCap is the decompression cap under fuzzing: small, so a bomb found by
// the fuzzer costs little, and every tree must stay within it.
const fuzzCap = 1 << 20

// fuzzVectorSeeds returns Kafka's record vectors when ../shared is there,
// and nothing otherwise: seeding must not skip the target.
func fuzzVectorSeeds() [][]byte {
	dir := os.Getenv("KWIRE_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "kafka-vectors", "records.json"))
	if err != nil {
		return nil
	}
	var file struct{ Vectors []struct{ Hex string } }
	if json.Unmarshal(raw, &file) != nil {
		return nil
	}
	var out [][]byte
	for _, v := range file.Vectors {
		if b, err := hex.DecodeString(v.Hex); err == nil {
			out = append(out, b)
		}
	}
	return out
}

func FuzzRecordBatches(f *testing.F) {
	for _, b := range fuzzVectorSeeds() {
		f.Add(b)
	}
	recs := []recRecord{
		{Key: []byte("k"), Value: []byte("v"), Headers: [][2][]byte{{[]byte("h"), nil}}},
		{OffsetDelta: 1, TimestampDelta: 5, Value: make([]byte, 300)},
	}
	for c := CodecNone; c <= CodecZstd; c++ {
		b := recBuild(f, c, 7, 1700000000000, recs)
		f.Add(b)
		f.Add(append(b, b[:20]...)) // with a partial tail
	}
	f.Add(legacyPlainV0)
	f.Add(legacyPlainV1)
	for _, c := range []Codec{CodecGzip, CodecSnappy, CodecLZ4} {
		f.Add(legacyWrapped(f, c, nil))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := Decoder{MaxDecompressed: fuzzCap}
		tr := d.DecodeRecordBatches(data)
		recCheckTree(t, tr)
		// The top level covers the input exactly, in order.
		at := 0
		for _, n := range tr.Root.Children {
			if n.Space != 0 || n.Off != at {
				t.Fatalf("top-level %s at %d/%d, want space 0 offset %d", n.Name, n.Space, n.Off, at)
			}
			at = n.End()
		}
		if at != len(data) {
			t.Fatalf("top level covers %d of %d bytes", at, len(data))
		}
		total := 0
		for _, s := range tr.Spaces[1:] {
			total += len(s.Data)
		}
		if total > fuzzCap {
			t.Fatalf("%d decompressed bytes exceed the %d cap", total, fuzzCap)
		}
	})
}

func FuzzDecompress(f *testing.F) {
	sample := codecSample(3000, 11)
	for c := CodecNone; c <= CodecZstd; c++ {
		f.Add(byte(c), recCompress(f, c, sample))
		f.Add(byte(c)|0x10, recCompress(f, c, sample)) // magic 1
	}
	f.Add(byte(CodecSnappy), append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 3, 2, 4, 'x'))
	f.Add(byte(CodecLZ4), []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82})
	f.Fuzz(func(t *testing.T, sel byte, data []byte) {
		// The low 3 bits pick the codec (5-7 are unknown), bits 4-5 the magic.
		c, magic := Codec(sel&0x07), int8(sel>>4&0x03)
		const max = 64 << 10
		out, _, err := Decompress(c, data, max, magic)
		if err == nil && len(out) > max {
			t.Fatalf("%v: %d bytes out under a %d cap", c, len(out), max)
		}
		if err != nil && out != nil {
			t.Fatalf("%v: data returned with error %v", c, err)
		}
	})
}
