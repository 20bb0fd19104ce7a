package protocol

// This file inflates the compressed payloads of record batches (magic 2) and
// of legacy wrapper messages (magic 0 and 1). The codec is the low three bits
// of the attributes (Kafka protocol guide, "Record Batch" and "Message Sets";
// KIP-110 added zstd for magic 2 only).
//
// Every codec streams what it inflates into a keeper (keep.go), which
// holds the stream to the cap the caller gives (a decompression bomb is cut
// there: ErrDecompressedTooLarge) and keeps of it what the decoder needs;
// the memory a decompressor holds while it runs (windows, blocks) is
// reserved from the tree's first. No codec allocates from a size the data
// declares without checking it against the cap and what the data can
// hold. What the data claims of its size (a gzip trailer, a zstd frame
// header, an LZ4 descriptor, snappy lengths) is returned beside, for the
// note of a bomb.
//
// To add a new codec:
//  1. add its Codec constant (the attribute value Kafka assigns) and its name
//     in Codec.String;
//  2. write a func(src []byte, k *keeper) (detail string, claim, error) that
//     writes what it inflates to k (io.Writer: stop when Write fails, and
//     return the keeper's reason, stopped) or reads it with k.readFrom,
//     reserves its own state from k.m first, and pools its decoder only
//     when it ended cleanly;
//  3. add it to the switch in inflate and sizeHint, and a case to
//     FuzzDecompress, TestDecompressRoundTrip in codec_test.go and the
//     corpus of internal/bombs.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
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

// decompress is Decompress taking its output buffer from m's pools (a
// tree's; nil for none) and noting it in m for Tree.Release.
func decompress(c Codec, src []byte, max int64, magic int8, m *treeMem) ([]byte, string, error) {
	if max < 1 {
		max = DefaultMaxDecompressed
	}
	if c == CodecNone {
		if int64(len(src)) > max {
			return nil, "", capError{max}
		}
		return src, "", nil
	}
	k := new(keeper)
	k.reset(m, max, 0, 0, true, sizeHint(c, src), 0, math.MaxInt64)
	detail, _, err := inflate(c, src, magic, k)
	out, _ := k.finish()
	if err != nil {
		putBuf(out)
		return nil, "", err
	}
	m.keep(out)
	return out, detail, nil
}

// claim is what compressed data says it inflates to: size bytes, as what
// says ("the gzip trailer (ISIZE, modulo 2^32) says"); size < 0 when it
// says nothing.
type claim struct {
	size int64
	what string
}

var noClaim = claim{size: -1}

// inflate streams src, compressed with codec c, into k, taking the
// decompressor's state from k's tree's memory (reserved while it runs).
// It returns a detail as Decompress does, what the compressed data claims
// to inflate to, and an error: k's reason for cutting the stream (the cap,
// memory, the node cap) when it did, a capError when the data claims more
// than the cap before anything is inflated (raw snappy), else one
// wrapping ErrCorrupt or ErrUnknownCodec.
func inflate(c Codec, src []byte, magic int8, k *keeper) (string, claim, error) {
	switch c {
	case CodecGzip:
		return gunzip(src, k)
	case CodecSnappy:
		return unsnappy(src, k)
	case CodecLZ4:
		return unlz4(src, magic, k)
	case CodecZstd:
		return unzstd(src, k)
	}
	return "", noClaim, fmt.Errorf("%w %d", ErrUnknownCodec, int8(c))
}

// sizeHint guesses the inflated size of src for the first buffer: what
// the data says of itself, trusted as far as the codec can expand, else 4
// times the input.
func sizeHint(c Codec, src []byte) int {
	switch c {
	case CodecGzip:
		return gzipHint(src)
	case CodecZstd:
		return zstdHint(src)
	case CodecSnappy:
		if cl := snappyClaim(src); cl.size > 0 && cl.size <= snappyMaxRatio*int64(len(src)) {
			return int(cl.size)
		}
	case CodecLZ4:
		if cl, _ := lz4Claim(src); cl.size > 0 && cl.size <= 256*int64(len(src)) {
			return int(cl.size)
		}
	}
	return 4 * len(src)
}

// stopped returns k's reason for cutting the stream, if it cut it: the
// error a decompressor returns then is the keeper's own Write error (or
// follows from it).
func stopped(k *keeper, _ error) error {
	if k.stop != nil {
		return k.stop
	}
	return nil
}

// Memory the decompressors take while they run, reserved from the tree's
// (Decoder.MaxMemory): gzip's inflate state and 32 KiB window, and zstd's
// block buffers beside its window (RFC 8878's Block_Maximum_Size, 128
// KiB, for the block and its literals).
const (
	gzipState  = 96 << 10
	zstdBlocks = 2 * 128 << 10
)

var gzipPool sync.Pool // of *gzip.Reader

func gunzip(src []byte, k *keeper) (string, claim, error) {
	cl := noClaim
	if len(src) >= 18 {
		cl = claim{int64(binary.LittleEndian.Uint32(src[len(src)-4:])), "the gzip trailer (ISIZE, modulo 2^32) says"}
	}
	if !k.m.reserve(gzipState) {
		return "", cl, memoryLimitError{k.m.limit}
	}
	defer k.m.unreserve(gzipState)
	var zr *gzip.Reader
	var err error
	if v := gzipPool.Get(); v != nil {
		zr = v.(*gzip.Reader)
		err = zr.Reset(bytes.NewReader(src))
	} else {
		zr, err = gzip.NewReader(bytes.NewReader(src))
	}
	if err != nil {
		return "", cl, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
	}
	// Read, not WriteTo: the gzip reader's WriteTo makes a CRC writer
	// and a MultiWriter each time.
	err = k.readFrom(zr)
	if err == nil {
		// Only a reader that ended cleanly goes back: one that failed on
		// damaged data, or that the keeper stopped, may keep state that
		// would make the next stream's result depend on which reader it
		// got.
		gzipPool.Put(zr)
	}
	if s := stopped(k, err); s != nil {
		return "", cl, s
	}
	if err != nil {
		return "", cl, fmt.Errorf("%w: gzip: %v", ErrCorrupt, err)
	}
	return "", cl, nil
}

// gzipHint guesses the inflated size of src for the output buffer: the
// last member's ISIZE trailer (RFC 1952 section 2.3.1: the input size
// modulo 2^32), trusted only as far as DEFLATE can expand (at most 1032
// to 1, RFC 1951's longest match of 258 bytes in about 2 bits), so that a
// lying trailer costs no more than the data could; 4 times the input when
// the trailer is out of that range. An exact first guess spares the
// output buffer the doublings that made a large batch cost three times
// its size.
func gzipHint(src []byte) int {
	guess := 4 * len(src)
	if len(src) < 18 { // header 10 + trailer 8
		return guess
	}
	isize := int64(binary.LittleEndian.Uint32(src[len(src)-4:]))
	if isize > 0 && isize <= 1032*int64(len(src)) {
		// bytes.Buffer.ReadFrom wanted MinRead bytes free before each
		// read; the slack costs little and keeps the hint's tests.
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

// snappyMaxRatio bounds how far a raw snappy block can expand: a 3-byte
// copy element makes at most 64 bytes. A block declaring more than that
// of its size lies, and is refused before anything is allocated for it.
const snappyMaxRatio = 22

// snappyClaim is what snappy data says it inflates to: a raw block's
// length, or the sum of an xerial framing's chunk lengths.
func snappyClaim(src []byte) claim {
	if !bytes.HasPrefix(src, xerialMagic) {
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return noClaim
		}
		return claim{int64(n), "the snappy block's length says"}
	}
	cl := claim{0, "the xerial chunks' lengths say"}
	for p := xerialHeaderLen; p < len(src); {
		n := 0
		if len(src)-p >= 4 {
			n = int(binary.BigEndian.Uint32(src[p:]))
		}
		if len(src)-p < 4 || n > len(src)-p-4 {
			return noClaim
		}
		d, err := snappy.DecodedLen(src[p+4 : p+4+n])
		if err != nil {
			return noClaim
		}
		cl.size += int64(d)
		p += 4 + n
	}
	return cl
}

func unsnappy(src []byte, k *keeper) (string, claim, error) {
	var scratch *[]byte
	defer func() { putSnappyScratch(scratch) }()
	if !bytes.HasPrefix(src, xerialMagic) {
		n, err := snappy.DecodedLen(src)
		if err != nil {
			return "raw snappy", noClaim, fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
		}
		cl := snappyClaim(src)
		if err := snappyBlock(src, n, k, &scratch); err != nil {
			return "raw snappy", cl, err
		}
		return "raw snappy", cl, nil
	}
	// The version fields are not checked: writers disagree on them, and
	// the magic alone identifies the framing.
	if len(src) < xerialHeaderLen {
		return "", noClaim, fmt.Errorf("%w: snappy: xerial header cut short at %d bytes", ErrCorrupt, len(src))
	}
	cl := snappyClaim(src) // what the chunks declare, all together
	chunks := 0
	for p := xerialHeaderLen; p < len(src); chunks++ {
		if len(src)-p < 4 {
			return "", cl, fmt.Errorf("%w: snappy: xerial chunk length cut short at %#x", ErrCorrupt, p)
		}
		n := int64(binary.BigEndian.Uint32(src[p:]))
		p += 4
		if n > int64(len(src)-p) {
			return "", cl, fmt.Errorf("%w: snappy: xerial chunk at %#x claims %d bytes, %d remain", ErrCorrupt, p-4, n, len(src)-p)
		}
		block := src[p : p+int(n)]
		d, err := snappy.DecodedLen(block)
		if err != nil {
			return "", cl, fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
		}
		if err := snappyBlock(block, d, k, &scratch); err != nil {
			return "", cl, err
		}
		p += int(n)
	}
	return fmt.Sprintf("xerial framing, %d chunk%s", chunks, plural(chunks)), cl, nil
}

// snappyBlock decodes one raw snappy block declaring n bytes into k. A raw
// snappy block is not streamable (a copy may reach back to its start), so
// it is decoded whole, into memory reserved for it and given back once k
// has what it keeps: a declared length past the cap is refused before
// that, as is one the block's size cannot hold.
func snappyBlock(block []byte, n int, k *keeper, scratch **[]byte) error {
	if int64(n) > k.max-k.total {
		// Inflating it would pass the cap: take what fits of nothing.
		if k.stop == nil {
			k.stop = capError{k.max}
		}
		return k.stop
	}
	if int64(n) > snappyMaxRatio*int64(len(block))+64 {
		return fmt.Errorf("%w: snappy: a block of %d bytes declares %d, more than it can hold", ErrCorrupt, len(block), n)
	}
	if !k.m.reserve(int64(n)) {
		return memoryLimitError{k.m.limit}
	}
	if *scratch == nil || cap(**scratch) < n {
		putSnappyScratch(*scratch)
		*scratch = snappyScratch(n)
	}
	buf := (**scratch)[:n]
	out, err := snappy.Decode(buf, block)
	if err == nil && len(out) > 0 && &out[0] != &buf[0] {
		err = errors.New("decoded length changed")
	}
	if err == nil {
		_, err = k.Write(out)
	}
	k.m.unreserve(int64(n))
	if s := stopped(k, err); s != nil {
		return s
	}
	if err != nil {
		return fmt.Errorf("%w: snappy: %v", ErrCorrupt, err)
	}
	return nil
}

// snappyScratches are the buffers snappy blocks are decoded into before
// the keeper takes what it keeps: a chunk of the Java client's xerial
// framing is 32 KiB, so one buffer serves a whole batch; those up to 1 MiB
// are pooled.
var snappyScratches sync.Pool // of *[]byte

func snappyScratch(n int) *[]byte {
	if p, ok := snappyScratches.Get().(*[]byte); ok && cap(*p) >= n {
		return p
	}
	b := make([]byte, n, max(n, 64<<10))
	return &b
}

func putSnappyScratch(p *[]byte) {
	if p != nil && cap(*p) <= 1<<20 {
		snappyScratches.Put(p)
	}
}

// lz4FrameMagic is the little-endian LZ4 frame magic 0x184D2204.
var lz4FrameMagic = []byte{0x04, 0x22, 0x4d, 0x18}

var lz4Pool sync.Pool // of *lz4.Reader

// lz4Claim returns what an LZ4 frame's descriptor says of it: the
// content size when it gives one, and the block maximum size (64 KiB to
// 4 MiB; the reader holds a block and its compressed form).
func lz4Claim(src []byte) (claim, int) {
	cl, block := noClaim, 4<<20
	if len(src) < 7 || !bytes.HasPrefix(src, lz4FrameMagic) {
		return cl, block
	}
	if bd := (src[5] >> 4) & 7; bd >= 4 {
		block = 64 << 10 << (2 * (bd - 4))
	}
	if src[4]&0x08 != 0 && len(src) >= 14 {
		cl = claim{int64(binary.LittleEndian.Uint64(src[6:])), "the LZ4 frame descriptor (Content Size) says"}
	}
	return cl, block
}

func unlz4(src []byte, magic int8, k *keeper) (string, claim, error) {
	var r io.Reader = bytes.NewReader(src)
	detail := ""
	if magic < 2 {
		if fixed, note := repairLZ4Header(src); fixed != nil {
			r = io.MultiReader(bytes.NewReader(fixed), bytes.NewReader(src[len(fixed):]))
			detail = note
		}
	}
	cl, block := lz4Claim(src)
	state := int64(2*block + 64<<10)
	if !k.m.reserve(state) {
		return detail, cl, memoryLimitError{k.m.limit}
	}
	defer k.m.unreserve(state)
	var zr *lz4.Reader
	if v := lz4Pool.Get(); v != nil {
		zr = v.(*lz4.Reader)
		zr.Reset(r)
	} else {
		zr = lz4.NewReader(r)
	}
	_, err := zr.WriteTo(k)
	if err == nil {
		zr.Reset(nil)
		lz4Pool.Put(zr) // only readers that ended cleanly (see gunzip)
	}
	if s := stopped(k, err); s != nil {
		return detail, cl, s
	}
	if err != nil {
		return detail, cl, fmt.Errorf("%w: lz4: %v", ErrCorrupt, err)
	}
	return detail, cl, nil
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
// --long=27), and Kafka's producers use far less (the Java client's
// level 3 stream keeps 2 MiB). The window is memory the decoder holds
// while it runs, reserved from the frame's (Decoder.MaxMemory).
const zstdMaxWindow = 128 << 20

// zstdPoolWindow is the largest window a pooled decoder may have used:
// one that kept more goes to the collector rather than stay in the pool.
const zstdPoolWindow = 8 << 20

func unzstd(src []byte, k *keeper) (string, claim, error) {
	cl := noClaim
	var h zstd.Header
	window := uint64(zstd.MinWindowSize)
	if h.Decode(src) == nil {
		if h.HasFCS {
			cl = claim{int64(h.FrameContentSize), "the zstd frame header (Frame_Content_Size) says"}
		}
		window = max(window, h.WindowSize)
		if h.SingleSegment && h.HasFCS {
			window = max(window, h.FrameContentSize) // the whole frame is its window
		}
	}
	if window > zstdMaxWindow {
		return "", cl, fmt.Errorf("%w: zstd: the frame asks for a window of %d bytes, more than the %s kwire allows", ErrCorrupt, window, FormatSize(zstdMaxWindow))
	}
	state := int64(window) + zstdBlocks
	if !k.m.reserve(state) {
		return "", cl, memoryLimitError{k.m.limit}
	}
	defer k.m.unreserve(state)
	// Later frames of the payload may not ask for more than the first:
	// that is what was reserved.
	opts := []zstd.DOption{zstd.WithDecoderMaxMemory(max(window, 1<<20)), zstd.WithDecoderMaxWindow(window)}
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
		return "", cl, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	_, err = zr.WriteTo(k)
	if rerr := zr.Reset(nil); rerr == nil && err == nil && window <= zstdPoolWindow {
		zstdPool.Put(zr) // only decoders that ended cleanly (see gunzip)
	} else {
		zr.Close()
	}
	if s := stopped(k, err); s != nil {
		return "", cl, s
	}
	if err != nil {
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrWindowSizeExceeded) {
			return "", cl, fmt.Errorf("%w: zstd: a later frame asks for a larger window than the first (%d bytes): %v", ErrCorrupt, window, err)
		}
		return "", cl, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	return "", cl, nil
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
