package protocol

// This file inflates the compressed payloads of record batches (magic 2) and
// of legacy wrapper messages (magic 0 and 1). The codec is the low three bits
// of the attributes (Kafka protocol guide, "Record Batch" and "Message Sets";
// KIP-110 added zstd for magic 2 only).
//
// Every codec reads through a limit: the output may never grow beyond the
// cap the caller passes, whatever sizes the input declares, so a
// decompression bomb costs at most the cap in memory and ends with
// ErrDecompressedTooLarge.
//
// To add a new codec:
//  1. add its Codec constant (the attribute value Kafka assigns) and its name
//     in Codec.String;
//  2. write a func(src []byte, max int64) ([]byte, string, error) that never
//     produces more than max bytes and never allocates from a declared size
//     without checking it against max first;
//  3. add it to the switch in Decompress, and a case to FuzzDecompress and to
//     TestDecompressRoundTrip in codec_test.go.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/OneOfOne/xxhash"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Codec is a record batch's compression codec: attributes & 0x07.
type Codec int8

// Compression codecs, numbered as in the batch attributes.
const (
	CodecNone   Codec = 0
	CodecGzip   Codec = 1 // RFC 1952 gzip members
	CodecSnappy Codec = 2 // xerial-framed (Java client) or raw snappy blocks
	CodecLZ4    Codec = 3 // LZ4 frame format (magic 0x184D2204)
	CodecZstd   Codec = 4 // zstd frames (RFC 8878); record batch magic 2 only (KIP-110)
)

// String returns the codec's name as Kafka's compression.type spells it, or
// "codec(N)" for an unknown value.
func (c Codec) String() string {
	switch c {
	case CodecNone:
		return "none"
	case CodecGzip:
		return "gzip"
	case CodecSnappy:
		return "snappy"
	case CodecLZ4:
		return "lz4"
	case CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("codec(%d)", int8(c))
}

// Errors returned by Decompress, tested with errors.Is.
var (
	// ErrDecompressedTooLarge means the output would exceed the cap; the
	// wrapping error's text says which cap ("decompressed size exceeds the
	// 256 MiB cap").
	ErrDecompressedTooLarge = errors.New("decompressed size exceeds the cap")
	// ErrUnknownCodec means the attributes name a codec Kafka does not define.
	ErrUnknownCodec = errors.New("unknown compression codec")
	// ErrCorrupt means the compressed bytes are malformed; it wraps the
	// codec library's error.
	ErrCorrupt = errors.New("corrupt compressed data")
)

// capError is ErrDecompressedTooLarge with the cap spelled out.
type capError struct{ max int64 }

func (e capError) Error() string {
	return "decompressed size exceeds the " + FormatSize(e.max) + " cap"
}

func (e capError) Is(target error) bool { return target == ErrDecompressedTooLarge }

// FormatSize spells a byte count the way kwire's notes do: "256 MiB",
// "64 KiB" when it is a whole number of those units, else "1234 bytes".
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Decompress inflates src, compressed with codec c, and returns the bytes,
// a short detail for the reader ("xerial framing, 2 chunks", "LZ4 frame
// header checksum written the KAFKA-1493 way; repaired") or "", and an
// error.
//
// max caps the output in bytes (values below 1 mean DefaultMaxDecompressed);
// exceeding it returns an error matching ErrDecompressedTooLarge and no
// data. magic is the batch or message magic the payload came from: for
// magic 0 and 1 an LZ4 frame whose header checksum was computed over the
// frame magic too, as Kafka before 0.10 wrote it (KAFKA-1493, KIP-57), is
// repaired before decoding. Other failures wrap ErrCorrupt or
// ErrUnknownCodec. src is never modified.
func Decompress(c Codec, src []byte, max int64, magic int8) ([]byte, string, error) {
	return decompress(c, src, max, magic, nil)
}

// decompress is Decompress taking its output buffers from m's pools (a
// tree's; nil for none) and noting them in m for Tree.Release.
func decompress(c Codec, src []byte, max int64, magic int8, m *treeMem) ([]byte, string, error) {
	if max < 1 {
		max = DefaultMaxDecompressed
	}
	switch c {
	case CodecNone:
		if int64(len(src)) > max {
			return nil, "", capError{max}
		}
		return src, "", nil
	case CodecGzip:
		return kept(m)(gunzip(src, max, m))
	case CodecSnappy:
		return kept(m)(unsnappy(src, max, m))
	case CodecLZ4:
		return kept(m)(unlz4(src, max, magic, m))
	case CodecZstd:
		return kept(m)(unzstd(src, max, m))
	}
	return nil, "", fmt.Errorf("%w %d", ErrUnknownCodec, int8(c))
}

// kept returns a function passing a codec's results through, noting a
// successful output in m.
func kept(m *treeMem) func([]byte, string, error) ([]byte, string, error) {
	return func(out []byte, detail string, err error) ([]byte, string, error) {
		if err == nil {
			m.keep(out)
		}
		return out, detail, err
	}
}

// readCapped reads r to its end, failing with capError once more than max
// bytes come out. It never asks r for more than max+1 bytes. Its buffer
// comes from m (see treeMem.buf).
func readCapped(r io.Reader, max int64, hint int, m *treeMem) ([]byte, error) {
	if hint < 512 {
		hint = 512
	}
	if int64(hint) > max+1 {
		hint = int(max + 1)
	}
	buf := bytes.NewBuffer(m.buf(hint))
	_, err := buf.ReadFrom(io.LimitReader(r, max+1))
	if int64(buf.Len()) > max {
		return nil, capError{max}
	}
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var gzipPool sync.Pool // of *gzip.Reader

func gunzip(src []byte, max int64, m *treeMem) ([]byte, string, error) {
	var zr *gzip.Reader
	var err error
	if v := gzipPool.Get(); v != nil {
		zr = v.(*gzip.Reader)
		err = zr.Reset(bytes.NewReader(src))
	} else {
		zr, err = gzip.NewReader(bytes.NewReader(src))
	}
	if err != nil {
		return nil, "", fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
	}
	out, err := readCapped(zr, max, gzipHint(src), m)
	if err == nil {
		// Only a reader that ended cleanly goes back: one that failed on
		// damaged data may keep state that would make the next stream's
		// result depend on which reader it got.
		gzipPool.Put(zr)
	}
	if err != nil {
		if errors.Is(err, ErrDecompressedTooLarge) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
	}
	return out, "", nil
}

// gzipHint guesses the inflated size of src for the output buffer: the
// last member's ISIZE trailer (RFC 1952 section 2.3.1: the input size
// modulo 2^32), trusted only as far as DEFLATE can expand (at most 1032
// to 1, RFC 1951's longest match of 258 bytes in about 2 bits), so that a
// lying trailer costs no more than the data could; 4 times the input when
// the trailer is out of that range. An exact first guess spares
// readCapped the doublings that made a large batch cost three times its
// size.
func gzipHint(src []byte) int {
	guess := 4 * len(src)
	if len(src) < 18 { // header 10 + trailer 8
		return guess
	}
	isize := int64(binary.LittleEndian.Uint32(src[len(src)-4:]))
	if isize > 0 && isize <= 1032*int64(len(src)) {
		// bytes.Buffer.ReadFrom wants MinRead bytes free before each read,
		// the last (which finds the end) included.
		return int(isize) + bytes.MinRead
	}
	return guess
}

// xerialMagic opens a payload written by snappy-java's SnappyOutputStream,
// which the Java client uses; a 4-byte version and a 4-byte compatible
// version follow, then blocks of a 4-byte big-endian length and a raw snappy
// block.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderLen = 16

func unsnappy(src []byte, max int64, m *treeMem) ([]byte, string, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		out, err := snappyBlock(nil, src, max, m)
		return out, "raw snappy", err
	}
	// The version fields are not checked: writers disagree on them, and
	// the magic alone identifies the framing.
	if len(src) < xerialHeaderLen {
		return nil, "", fmt.Errorf("%w: snappy: xerial header cut short at %d bytes", ErrCorrupt, len(src))
	}
	if out, chunks, ok := xerialDirect(src, max, m); ok {
		return out, fmt.Sprintf("xerial framing, %d chunk%s", chunks, plural(chunks)), nil
	}
	var out []byte
	chunks := 0
	for p := xerialHeaderLen; p < len(src); chunks++ {
		if len(src)-p < 4 {
			return nil, "", fmt.Errorf("%w: snappy: xerial chunk length cut short at %#x", ErrCorrupt, p)
		}
		n := int64(binary.BigEndian.Uint32(src[p:]))
		p += 4
		if n > int64(len(src)-p) {
			return nil, "", fmt.Errorf("%w: snappy: xerial chunk at %#x claims %d bytes, %d remain", ErrCorrupt, p-4, n, len(src)-p)
		}
		var err error
		out, err = snappyBlock(out, src[p:p+int(n)], max, m)
		if err != nil {
			return nil, "", err
		}
		p += int(n)
	}
	return out, fmt.Sprintf("xerial framing, %d chunk%s", chunks, plural(chunks)), nil
}

// xerialDirect decodes the chunks of xerial-framed src (header checked by
// the caller) into one buffer allocated at their total size, when the
// framing is whole, every chunk declares its size and all fit under max;
// false otherwise, or when a chunk does not decode, for unsnappy's chunk
// by chunk loop to find the error. (That loop grows its output chunk by
// chunk: a 1 MB batch cost 5 MB.)
func xerialDirect(src []byte, max int64, m *treeMem) ([]byte, int, bool) {
	var sizes []int
	total := int64(0)
	for p := xerialHeaderLen; p < len(src); {
		if len(src)-p < 4 {
			return nil, 0, false
		}
		n := int64(binary.BigEndian.Uint32(src[p:]))
		p += 4
		if n > int64(len(src)-p) {
			return nil, 0, false
		}
		d, err := snappy.DecodedLen(src[p : p+int(n)])
		if err != nil {
			return nil, 0, false
		}
		if total += int64(d); total > max {
			return nil, 0, false
		}
		sizes = append(sizes, d)
		p += int(n)
	}
	out := m.buf(int(total))[:total]
	at := 0
	for i, p := 0, xerialHeaderLen; p < len(src); i++ {
		n := int(binary.BigEndian.Uint32(src[p:]))
		p += 4
		dec, err := snappy.Decode(out[at:at+sizes[i]], src[p:p+n])
		if err != nil || len(dec) != sizes[i] || len(dec) > 0 && &dec[0] != &out[at] {
			return nil, 0, false
		}
		at += sizes[i]
		p += n
	}
	return out, len(sizes), true
}

// snappyBlock appends the decoding of one raw snappy block to dst, checking
// its declared length against what the cap leaves before allocating.
func snappyBlock(dst, block []byte, max int64, m *treeMem) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return nil, fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
	}
	if int64(n) > max-int64(len(dst)) {
		return nil, capError{max}
	}
	if len(dst) == 0 {
		out, err := snappy.Decode(m.buf(n)[:n], block)
		if err != nil {
			return nil, fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
		}
		return out, nil
	}
	grown := append(dst, make([]byte, n)...)
	out, err := snappy.Decode(grown[len(dst):], block)
	if err != nil {
		return nil, fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
	}
	return grown[:len(dst)+len(out)], nil
}

// lz4FrameMagic is the little-endian LZ4 frame magic 0x184D2204.
var lz4FrameMagic = []byte{0x04, 0x22, 0x4d, 0x18}

var lz4Pool sync.Pool // of *lz4.Reader

func unlz4(src []byte, max int64, magic int8, m *treeMem) ([]byte, string, error) {
	var r io.Reader = bytes.NewReader(src)
	detail := ""
	if magic < 2 {
		if fixed, note := repairLZ4Header(src); fixed != nil {
			r = io.MultiReader(bytes.NewReader(fixed), bytes.NewReader(src[len(fixed):]))
			detail = note
		}
	}
	var zr *lz4.Reader
	if v := lz4Pool.Get(); v != nil {
		zr = v.(*lz4.Reader)
		zr.Reset(r)
	} else {
		zr = lz4.NewReader(r)
	}
	out, err := readCapped(zr, max, 4*len(src), m)
	if err == nil {
		zr.Reset(nil)
		lz4Pool.Put(zr) // only readers that ended cleanly (see gunzip)
	}
	if err != nil {
		if errors.Is(err, ErrDecompressedTooLarge) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("%w: lz4: %v", ErrCorrupt, err)
	}
	return out, detail, nil
}

// repairLZ4Header returns a corrected copy of the frame header of src (magic
// to header checksum) when its checksum is wrong, or nil when it is right or
// src is not an LZ4 frame. The LZ4 frame format checksums the frame
// descriptor (FLG, BD and the optional content size and dictionary ID) as
// the second byte of its xxHash32; Kafka's KafkaLZ4BlockOutputStream before
// 0.10 included the 4 magic bytes in the hash (KAFKA-1493), and readers of
// magic 0 messages ignore the checksum.
func repairLZ4Header(src []byte) ([]byte, string) {
	if len(src) < 7 || !bytes.HasPrefix(src, lz4FrameMagic) {
		return nil, ""
	}
	flg := src[4]
	end := 6 // FLG, BD
	if flg&0x08 != 0 {
		end += 8 // content size
	}
	if flg&0x01 != 0 {
		end += 4 // dictionary ID
	}
	if len(src) <= end {
		return nil, ""
	}
	want := byte(xxh32(src[4:end], 0) >> 8)
	got := src[end]
	if got == want {
		return nil, ""
	}
	fixed := make([]byte, end+1)
	copy(fixed, src)
	fixed[end] = want
	if broken := byte(xxh32(src[:end], 0) >> 8); got == broken {
		return fixed, "LZ4 frame header checksum written the KAFKA-1493 way (over the magic too); repaired"
	}
	return fixed, fmt.Sprintf("LZ4 frame header checksum 0x%02x is wrong (want 0x%02x); ignored as legacy readers do", got, want)
}

// xxh32 is xxHash32 of b with seed (github.com/OneOfOne/xxhash): the
// LZ4 frame format's header and content checksum.
func xxh32(b []byte, seed uint32) uint32 { return xxhash.Checksum32S(b, seed) }

var zstdPool sync.Pool // of *zstd.Decoder

// zstdMaxWindow bounds the history a zstd frame may ask for, whatever the
// cap: the reference encoder never uses more than 128 MiB (level 22 with
// --long=27), and Kafka's producers use far less.
const zstdMaxWindow = 128 << 20

func unzstd(src []byte, max int64, m *treeMem) ([]byte, string, error) {
	window := uint64(max)
	if window > zstdMaxWindow {
		window = zstdMaxWindow
	}
	if window < zstd.MinWindowSize {
		window = zstd.MinWindowSize
	}
	opts := []zstd.DOption{zstd.WithDecoderMaxMemory(uint64(max)), zstd.WithDecoderMaxWindow(window)}
	var zr *zstd.Decoder
	var err error
	if v := zstdPool.Get(); v != nil {
		zr = v.(*zstd.Decoder)
		err = zr.ResetWithOptions(bytes.NewReader(src), opts...)
	} else {
		opts = append(opts, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
		zr, err = zstd.NewReader(bytes.NewReader(src), opts...)
	}
	if err != nil {
		if zr != nil {
			zr.Close()
		}
		return nil, "", fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	out, err := readCapped(zr, max, zstdHint(src), m)
	if rerr := zr.Reset(nil); rerr == nil && err == nil {
		zstdPool.Put(zr) // only decoders that ended cleanly (see gunzip)
	} else {
		zr.Close()
	}
	if err != nil {
		if errors.Is(err, ErrDecompressedTooLarge) {
			return nil, "", err
		}
		// The decoder refuses a frame whose declared window exceeds the
		// cap before allocating it: that too is a frame too big for the cap.
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) ||
			errors.Is(err, zstd.ErrWindowSizeExceeded) && max <= zstdMaxWindow {
			return nil, "", capError{max}
		}
		return nil, "", fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	return out, "", nil
}

// zstdHint guesses the inflated size of src for the output buffer: the
// first frame's content size when its header gives it (RFC 8878 section
// 3.1.1.1.4; producers that compress a batch at once write it), trusted
// up to 4096 times the input (repetitive records compress past 300 to 1),
// else 4 times the input. readCapped caps it at the decompression cap.
func zstdHint(src []byte) int {
	var h zstd.Header
	if h.Decode(src) != nil || !h.HasFCS || h.FrameContentSize > 4096*uint64(len(src)) {
		return 4 * len(src)
	}
	return int(h.FrameContentSize) + bytes.MinRead // ReadFrom wants MinRead free to see the end
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
