package protocol

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// gzipHint sizes the output buffer from the gzip trailer, trusting it only
// as far as DEFLATE can expand; whatever the trailer says, the output is
// the same.
func TestGzipHint(t *testing.T) {
	plain := bytes.Repeat([]byte("kafka "), 50000) // 300,000 bytes
	gz := recCompress(t, CodecGzip, plain)
	if got, want := gzipHint(gz), len(plain)+bytes.MinRead; got != want {
		t.Errorf("hint %d, want %d (ISIZE + MinRead)", got, want)
	}

	// A trailer claiming 4 GiB - 1 from a few hundred bytes: beyond what
	// DEFLATE can produce, so ignored.
	lying := bytes.Clone(gz)
	binary.LittleEndian.PutUint32(lying[len(lying)-4:], 0xffffffff)
	if got := gzipHint(lying); got != 4*len(lying) {
		t.Errorf("lying trailer: hint %d, want %d", got, 4*len(lying))
	}
	// Decoding does not depend on the hint: a trailer too small (a second
	// gzip member's ISIZE) still inflates everything.
	two := append(bytes.Clone(gz), recCompress(t, CodecGzip, []byte("x"))...)
	out, _, err := Decompress(CodecGzip, two, 0, 2)
	if err != nil || len(out) != len(plain)+1 {
		t.Fatalf("two members: %d bytes, %v", len(out), err)
	}
	// A cap below the trailer's claim still fails with the cap error.
	if _, _, err := Decompress(CodecGzip, gz, 1000, 2); err == nil || err.Error() != "decompressed size exceeds the 1000 bytes cap" {
		t.Errorf("capped: %v", err)
	}
	for _, short := range [][]byte{nil, gz[:10]} {
		if got := gzipHint(short); got != 4*len(short) {
			t.Errorf("%d bytes: hint %d", len(short), got)
		}
	}
}
