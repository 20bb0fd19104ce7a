package reassembly

// Compressed capture files: gzip, zstd, xz, bzip2 and lz4 (frame
// format), each detected by its magic number, never by the file name, so
// that standard input works too. Wireshark reads the same.
//
// Memory: gzip (32 KiB window), bzip2 (at most 900 kB blocks) and lz4
// (at most 4 MiB blocks) are bounded by their formats. zstd and xz let
// the file choose its window (zstd up to 3.75 TB, xz up to 4 GiB), so
// both are refused beyond Options.MaxCaptureWindow: zstd by its decoder
// (the window is in each frame header), xz by xzGuard, which follows the
// container on the way into the decoder and refuses a block header whose
// LZMA2 dictionary is too large before the decoder can allocate it.
//
// To add a codec: a magic in codecs, its reader in openCodec, the
// meaning of its errors in codecError, and a case in compress_test.go.

import (
	"bytes"
	"compress/bzip2"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

// DefaultMaxCaptureWindow is Options.MaxCaptureWindow's default: 128 MiB,
// the largest window the zstd tool decodes without --long (2^27 bytes)
// and twice xz's largest preset dictionary (xz -9, 64 MiB).
const DefaultMaxCaptureWindow = 128 << 20

// codecs are the compression formats by their first bytes.
var codecs = []struct {
	name  string
	magic []byte
}{
	{"gzip", []byte{0x1f, 0x8b}},
	{"zstd", []byte{0x28, 0xb5, 0x2f, 0xfd}},
	{"xz", []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}},
	{"bzip2", []byte{'B', 'Z', 'h'}},
	{"lz4", []byte{0x04, 0x22, 0x4d, 0x18}},
}

// codecOf names the compression of a stream that starts with head, or "".
func codecOf(head []byte) string {
	for _, c := range codecs {
		if bytes.HasPrefix(head, c.magic) {
			if c.name == "bzip2" && (len(head) < 4 || head[3] < '1' || head[3] > '9') {
				continue
			}
			return c.name
		}
	}
	return ""
}

// openCodec returns the decompressed stream of r. window bounds the
// decompression window of zstd and xz in bytes.
func openCodec(name string, r io.Reader, window int64) (io.Reader, func(), error) {
	var (
		zr    io.Reader
		close = func() {}
	)
	switch name {
	case "gzip":
		g, err := gzip.NewReader(r)
		if err != nil {
			return nil, nil, err
		}
		zr = g
	case "zstd":
		d, err := zstd.NewReader(r,
			zstd.WithDecoderConcurrency(1), // no goroutines of its own, one block in flight
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(uint64(max(window, zstd.MinWindowSize))),
			zstd.WithDecoderMaxMemory(uint64(max(window, zstd.MinWindowSize))))
		if err != nil {
			return nil, nil, err
		}
		zr, close = d, d.Close
	case "xz":
		g := &xzGuard{r: r, limit: window}
		x, err := xz.NewReader(g)
		if err != nil {
			return nil, nil, err
		}
		zr = x
	case "bzip2":
		zr = bzip2.NewReader(r)
	case "lz4":
		zr = lz4.NewReader(r)
	default:
		return nil, nil, fmt.Errorf("unknown codec %q", name)
	}
	return &codecReader{r: zr, name: name}, close, nil
}

// codecReader makes a decompressor's errors codecErrors, and sticky.
type codecReader struct {
	r    io.Reader
	name string
	err  error
}

func (c *codecReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	if err != nil && err != io.EOF {
		err = &codecError{codec: c.name, err: err}
		c.err = err
	}
	return n, err
}

// codecError is a decompressor's error, said in words by text.
type codecError struct {
	codec string
	err   error
}

func (e *codecError) Error() string { return e.text() }
func (e *codecError) Unwrap() error { return e.err }

// kind classifies the error: ErrTruncated (the compressed data was cut),
// ErrLimit (a window beyond Options.MaxCaptureWindow) or ErrCorrupt.
func (e *codecError) kind() error {
	var we *windowError
	switch {
	case errors.Is(e.err, io.ErrUnexpectedEOF), errors.Is(e.err, io.EOF):
		return ErrTruncated
	case errors.As(e.err, &we), errors.Is(e.err, zstd.ErrWindowSizeExceeded), errors.Is(e.err, zstd.ErrDecoderSizeExceeded):
		return ErrLimit
	}
	return ErrCorrupt
}

// text says what went wrong in the user's words.
func (e *codecError) text() string {
	var (
		we *windowError
		ce flate.CorruptInputError
		se bzip2.StructuralError
	)
	switch {
	case e.kind() == ErrTruncated:
		return fmt.Sprintf("the %s data was cut short", e.codec)
	case errors.As(e.err, &we):
		return fmt.Sprintf("the %s data needs a %s dictionary to decompress, more than --max-capture-window allows (%s): raise it, or decompress the file first", e.codec, sizeText(we.need), sizeText(we.limit))
	case e.kind() == ErrLimit:
		return fmt.Sprintf("the %s data needs a decompression window larger than --max-capture-window allows: raise it, or decompress the file first", e.codec)
	case errors.Is(e.err, gzip.ErrChecksum), errors.Is(e.err, zstd.ErrCRCMismatch),
		errors.Is(e.err, lz4.ErrInvalidBlockChecksum), errors.Is(e.err, lz4.ErrInvalidFrameChecksum),
		errors.Is(e.err, lz4.ErrInvalidHeaderChecksum):
		return fmt.Sprintf("the %s data fails its checksum: the file is damaged", e.codec)
	case errors.As(e.err, &ce), errors.As(e.err, &se):
		return fmt.Sprintf("the %s data is corrupt: the file is damaged", e.codec)
	}
	return fmt.Sprintf("the %s data is corrupt: the file is damaged", e.codec)
}

// windowError: an xz block needs a dictionary beyond the limit.
type windowError struct{ need, limit int64 }

func (e *windowError) Error() string {
	return fmt.Sprintf("dictionary of %d bytes above the limit of %d", e.need, e.limit)
}

// sizeText writes a byte count for people: "128 MiB", "1.5 GiB", "700 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// xzGuard follows the xz container (tukaani.org "The .xz File Format"
// 1.2.1) on its way into the decoder, which reads exactly the bytes it
// needs, and fails the read that would complete a block header whose
// LZMA2 dictionary is larger than limit: ulikunitz/xz allocates the
// dictionary a block header asks for, up to 4 GiB. It skips chunk data
// by the LZMA2 chunk headers' sizes, so it decodes nothing. A byte it
// does not expect (the file is damaged) is the decoder's to report: the
// guard steps aside from then on and passes the bytes through, and the
// decoder fails on them.
type xzGuard struct {
	r     io.Reader
	limit int64

	st      xzState
	need    int    // bytes to collect (hdr) or skip in this state
	hdr     []byte // the bytes of the header being collected
	check   int    // size of each block's check in this stream
	data    int64  // compressed bytes of the current block, for its padding
	index   int64  // bytes of the index so far, for its padding
	count   uint64 // varints of the index left, once counted
	counted bool   // the index's record count was read
	off     bool   // stepped aside
}

type xzState uint8

const (
	xzStreamHeader  xzState = iota // collecting 12 bytes
	xzBlockOrIndex                 // one byte: a block header's size, or 0 for the index
	xzBlockHeader                  // collecting the rest of a block header
	xzChunk                        // an LZMA2 chunk's control byte
	xzChunkHeader                  // collecting the rest of a chunk header
	xzSkip                         // skipping need bytes, then xzChunk
	xzBlockEnd                     // skipping padding and check, then xzBlockOrIndex
	xzIndexVarints                 // the index's record count then its records' two varints each
	xzIndexEnd                     // skipping padding, CRC32 and the stream footer
	xzStreamPadding                // zero bytes between streams, or a new stream
)

func (g *xzGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if g.off {
		return n, err
	}
	for i := 0; i < n; {
		adv, gerr := g.feed(p[i:n])
		if gerr != nil {
			return 0, gerr
		}
		i += adv
	}
	return n, err
}

// feed consumes bytes of b (at least one) and returns how many.
func (g *xzGuard) feed(b []byte) (int, error) {
	if g.off {
		return len(b), nil
	}
	collect := func(k int) bool { // gathers k bytes of header into hdr
		take := min(k-len(g.hdr), len(b))
		g.hdr = append(g.hdr, b[:take]...)
		return len(g.hdr) == k
	}
	switch g.st {
	case xzStreamHeader:
		before := len(g.hdr)
		if !collect(12) {
			return len(b), nil
		}
		h := g.hdr
		if !bytes.Equal(h[:6], []byte{0xfd, '7', 'z', 'X', 'Z', 0}) {
			g.off = true
			return 12 - before, nil
		}
		g.check = xzCheckSize(h[7] & 0x0F)
		g.hdr, g.st = g.hdr[:0], xzBlockOrIndex
		return 12 - before, nil
	case xzBlockOrIndex:
		if b[0] == 0 {
			g.st, g.index, g.counted, g.hdr = xzIndexVarints, 1, false, g.hdr[:0]
			return 1, nil
		}
		g.hdr = append(g.hdr[:0], b[0])
		g.need = (int(b[0]) + 1) * 4
		g.st = xzBlockHeader
		return 1, nil
	case xzBlockHeader:
		before := len(g.hdr)
		if !collect(g.need) {
			return len(b), nil
		}
		if dict, ok := xzDictSize(g.hdr); !ok {
			g.off = true
		} else if dict > g.limit {
			return 0, &windowError{need: dict, limit: g.limit}
		}
		g.hdr, g.data, g.st = g.hdr[:0], 0, xzChunk
		return g.need - before, nil
	case xzChunk:
		c := b[0]
		g.data++
		switch {
		case c == 0: // end of LZMA2 data: padding to 4, then the check
			g.need = int((4-g.data%4)%4) + g.check
			g.st = xzBlockEnd
		case c == 1 || c == 2: // uncompressed chunk: 2 bytes of size
			g.hdr, g.need, g.st = append(g.hdr[:0], c), 3, xzChunkHeader
		case c >= 0x80: // LZMA chunk: 4 bytes of sizes, props when reset >= 2
			g.need = 5
			if c >= 0xC0 {
				g.need = 6
			}
			g.hdr, g.st = append(g.hdr[:0], c), xzChunkHeader
		default:
			g.off = true
		}
		if g.st == xzBlockEnd && g.need == 0 {
			g.st = xzBlockOrIndex
		}
		return 1, nil
	case xzChunkHeader:
		before := len(g.hdr)
		if !collect(g.need) {
			g.data += int64(len(b))
			return len(b), nil
		}
		took := g.need - before
		g.data += int64(took)
		h := g.hdr
		if h[0] < 0x80 {
			g.need = int(h[1])<<8 | int(h[2]) + 1
		} else {
			g.need = int(h[3])<<8 | int(h[4]) + 1
		}
		g.hdr, g.st = g.hdr[:0], xzSkip
		return took, nil
	case xzSkip, xzBlockEnd, xzIndexEnd:
		k := min(g.need, len(b))
		g.need -= k
		if g.st == xzSkip {
			g.data += int64(k)
		}
		if g.need == 0 {
			switch g.st {
			case xzSkip:
				g.st = xzChunk
			case xzBlockEnd:
				g.st = xzBlockOrIndex
			case xzIndexEnd:
				g.st = xzStreamPadding
			}
		}
		return k, nil
	case xzIndexVarints:
		// The record count, then two varints (unpadded and uncompressed
		// size) per record; a varint is 7 bits a byte, the high bit set on
		// all but its last byte.
		c := b[0]
		g.index++
		g.hdr = append(g.hdr, c)
		if c&0x80 != 0 {
			if len(g.hdr) > 9 {
				g.off = true
			}
			return 1, nil
		}
		v := xzVarint(g.hdr)
		g.hdr = g.hdr[:0]
		if !g.counted {
			if v > 1<<40 {
				g.off = true
				return 1, nil
			}
			g.counted, g.count = true, 2*v
		} else {
			g.count--
		}
		if g.count == 0 {
			g.endIndex()
		}
		return 1, nil
	case xzStreamPadding:
		if b[0] == 0 {
			return 1, nil
		}
		g.hdr, g.st = g.hdr[:0], xzStreamHeader
		return 0, nil // the same byte starts the next stream
	}
	g.off = true
	return len(b), nil
}

// endIndex moves past the index's padding, its CRC32 and the footer.
func (g *xzGuard) endIndex() {
	g.need = int((4-g.index%4)%4) + 4 + 12
	g.st = xzIndexEnd
}

// xzCheckSize is the size of a block check of the given type.
func xzCheckSize(t byte) int {
	switch {
	case t == 0:
		return 0
	case t <= 3:
		return 4
	case t <= 6:
		return 8
	case t <= 9:
		return 16
	case t <= 12:
		return 32
	}
	return 64
}

// xzVarint decodes a multibyte integer (little-endian base 128).
func xzVarint(b []byte) uint64 {
	var v uint64
	for i, c := range b {
		if i >= 9 {
			break
		}
		v |= uint64(c&0x7F) << (7 * i)
	}
	return v
}

// xzDictSize returns the LZMA2 dictionary size of a block header, and
// false when the header is not one it can read.
func xzDictSize(h []byte) (int64, bool) {
	if len(h) < 2 {
		return 0, false
	}
	flags := h[1]
	nf := int(flags&3) + 1
	b := h[2:]
	varint := func() (uint64, bool) {
		for i, c := range b {
			if i >= 9 {
				return 0, false
			}
			if c&0x80 == 0 {
				v := xzVarint(b[:i+1])
				b = b[i+1:]
				return v, true
			}
		}
		return 0, false
	}
	if flags&0x40 != 0 { // compressed size
		if _, ok := varint(); !ok {
			return 0, false
		}
	}
	if flags&0x80 != 0 { // uncompressed size
		if _, ok := varint(); !ok {
			return 0, false
		}
	}
	var dict int64 = -1
	for range nf {
		id, ok := varint()
		if !ok {
			return 0, false
		}
		size, ok := varint()
		if !ok || size > uint64(len(b)) {
			return 0, false
		}
		props := b[:size]
		b = b[size:]
		if id == 0x21 && size == 1 { // LZMA2
			c := props[0]
			switch {
			case c > 40:
				return 0, false
			case c == 40:
				dict = 1<<32 - 1
			default:
				dict = int64(2|c&1) << (c/2 + 11)
			}
		}
	}
	return dict, dict >= 0
}
