package reassembly

// Compressed captures, made in the test from a golden capture (no
// compressed blob is committed).

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/capturetest"
)

// compressed returns b compressed with codec, skipping the test when the
// codec's tool is not installed (bzip2 has no Go writer).
func compressed(t *testing.T, codec string, b []byte) []byte {
	t.Helper()
	z, err := capturetest.Compress(codec, b)
	if errors.Is(err, capturetest.ErrNoTool) {
		t.Skipf("%s: %v (install bzip2)", codec, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// rawGoError reports text that reads like a library's error, not words
// for the user.
func rawGoError(s string) bool {
	for _, w := range []string{"flate:", "gzip:", "zstd:", "xz:", "lz4:", "bzip2", "invalid input", "unexpected EOF", "magic number mismatch"} {
		if strings.Contains(s, w) && !strings.Contains(s, "the bzip2 data") {
			return true
		}
	}
	return false
}

// TestCompressedCaptures reads a golden capture compressed with each
// codec: the streams are those of the plain file; a cut file gives the
// packets of the blocks before the cut and ErrTruncated; a damaged one
// ErrCorrupt (or ErrTruncated), in words.
func TestCompressedCaptures(t *testing.T) {
	pkts := goldenPackets(t)["kgo-produce-consume.pcap"]
	plain := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts)
	want, _ := mustRead(t, plain.Bytes, Options{})
	for _, codec := range capturetest.Codecs {
		t.Run(codec, func(t *testing.T) {
			z := compressed(t, codec, plain.Bytes)
			got, sum, err := readBytes(t, z, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if f := sum.Files[0]; f.Compression != codec || !f.Compressed || f.Packets != int64(len(pkts)) {
				t.Errorf("file info %+v", f)
			}
			compareStreams(t, codec, want, got)

			// Cut: the packets of the whole blocks before the cut.
			for _, frac := range []int{20, 50, 90} {
				cut := z[:len(z)*frac/100]
				n, _, err := readAll(cut, sourceOptions{})
				var fe *FileError
				if !errors.Is(err, ErrTruncated) || !errors.As(err, &fe) {
					t.Fatalf("cut at %d%%: %v, want ErrTruncated", frac, err)
				}
				msg := fe.Err.Error()
				if !strings.Contains(msg, "the "+codec+" data") || rawGoError(msg) {
					t.Errorf("cut at %d%%: %q", frac, msg)
				}
				if frac == 90 && n == 0 && codec != "bzip2" {
					t.Errorf("cut at 90%%: no packet before the cut")
				}
				// Exactly the packets of the plain file's first n records.
				prefix := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts[:n])
				wantPrefix, _ := mustRead(t, prefix.Bytes, Options{})
				gotCut, _, _ := readBytes(t, cut, Options{})
				compareStreams(t, codec+" cut", wantPrefix, gotCut)
			}

			// Damage in the middle of the compressed data.
			bad := bytes.Clone(z)
			for i := len(bad) / 2; i < len(bad)/2+8; i++ {
				bad[i] ^= 0x5a
			}
			_, _, err = readAll(bad, sourceOptions{})
			var fe *FileError
			if !errors.As(err, &fe) || !(errors.Is(err, ErrCorrupt) || errors.Is(err, ErrTruncated)) {
				t.Fatalf("damaged: %v, want ErrCorrupt", err)
			}
			if rawGoError(err.Error()) {
				t.Errorf("damaged: %q", err)
			}
		})
	}
}

// zstdFrame is a zstd frame of one raw block holding b, whose header asks
// for a window of 2^log bytes.
func zstdFrame(log int, b []byte) []byte {
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, byte(log-10) << 3}
	h := uint32(1) | uint32(len(b))<<3 // last block, raw, size
	f = append(f, byte(h), byte(h>>8), byte(h>>16))
	return append(f, b...)
}

// TestCompressedWindowBound: a zstd frame or an xz block that asks for a
// window above Options.MaxCaptureWindow is refused (ErrLimit, in words)
// before anything of that size is allocated, also when it comes after
// packets were read; under a larger bound it reads.
func TestCompressedWindowBound(t *testing.T) {
	pkts := firstPackets(t, 10)
	plain := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts).Bytes

	z := zstdFrame(23, plain) // 8 MiB window
	_, _, err := readAll(z, sourceOptions{window: 4 << 20})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "the zstd data needs a decompression window larger than --max-capture-window allows") {
		t.Errorf("zstd 8 MiB window, 4 MiB bound: %v", err)
	}
	if n, _, err := readAll(z, sourceOptions{window: 16 << 20}); err != nil || n != 10 {
		t.Errorf("zstd 8 MiB window, 16 MiB bound: %d packets, %v", n, err)
	}
	// 1 TiB asked for: refused at the default bound.
	if _, _, err := readAll(zstdFrame(40, plain), sourceOptions{}); !errors.Is(err, ErrLimit) {
		t.Errorf("zstd 1 TiB window: %v", err)
	}

	// xz: a second stream whose block asks for a 1 GiB dictionary, after a
	// first stream holding the file's first part.
	first, err := capturetest.Compress("xz", plain[:800])
	if err != nil {
		t.Fatal(err)
	}
	second, err := capturetest.Compress("xz", plain[800:])
	if err != nil {
		t.Fatal(err)
	}
	setXZDict(t, second, 1<<30)
	n, _, err := readAll(append(bytes.Clone(first), second...), sourceOptions{})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "the xz data needs a 1 GiB dictionary to decompress, more than --max-capture-window allows (128 MiB)") {
		t.Errorf("xz 1 GiB dictionary: %v", err)
	}
	if want := int64(capturetest.Pcap(capturetest.PcapOptions{}, pkts).PrefixPackets(800)); n != want || n == 0 {
		t.Errorf("xz: %d packets before the refused block, want %d", n, want)
	}
	setXZDict(t, second, 8<<20)
	if n, _, err := readAll(append(bytes.Clone(first), second...), sourceOptions{window: 16 << 20}); err != nil || n != 10 {
		t.Errorf("xz 8 MiB dictionary, 16 MiB bound: %d packets, %v", n, err)
	}
}

// setXZDict rewrites the LZMA2 dictionary size of the first block of an
// xz stream (and the block header's CRC32).
func setXZDict(t *testing.T, x []byte, dict int64) {
	t.Helper()
	h := x[12:]
	size := (int(h[0]) + 1) * 4
	if h[1]&0xC0 != 0 || h[2] != 0x21 || h[3] != 1 {
		t.Fatalf("unexpected xz block header % x", h[:size])
	}
	var code byte
	for c := byte(0); c < 40; c++ {
		if int64(2|c&1)<<(c/2+11) == dict {
			code = c
		}
	}
	h[4] = code
	binary.LittleEndian.PutUint32(h[size-4:], crc32.ChecksumIEEE(h[:size-4]))
}

// TestXZGuardFollowsContainer: the guard follows multi-block, multi-stream
// xz files with padding to their end without stepping aside.
func TestXZGuardFollowsContainer(t *testing.T) {
	data := bytes.Repeat([]byte("kafka wire capture "), 20000) // several 64 KiB blocks
	a, err := capturetest.Compress("xz", data)
	if err != nil {
		t.Fatal(err)
	}
	stream := append(append(bytes.Clone(a), 0, 0, 0, 0), a...) // stream padding between streams
	g := &xzGuard{r: bytes.NewReader(stream), limit: 1 << 20}
	for i := 0; i < len(stream); {
		n, err := g.feed(stream[i:min(i+7, len(stream))]) // odd chunks
		if err != nil {
			t.Fatal(err)
		}
		i += n
		if g.off {
			t.Fatalf("stepped aside at byte %d (state %d)", i, g.st)
		}
	}
	if g.st != xzStreamPadding {
		t.Errorf("ended in state %d", g.st)
	}
}
