// Package bombs builds hostile captures for kwire's memory bounds, from
// parameters, never from committed blobs: record batches whose compressed
// payloads inflate thousands of times (decompression bombs of every codec
// Kafka defines), records with values of hundreds of megabytes, lying
// length and size fields (gzip ISIZE, zstd frame content size, LZ4 content
// size, raw snappy length, record counts and lengths) and legacy message
// sets nesting compressed wrappers, carried in Produce requests and Fetch
// responses of a pcap file (Corpus, WritePcap). cmd/kwire's tests run kwire
// on them under a memory limit; `make bench-bombs` writes the full-size
// corpus (cmd mkbombs) and measures every mode on it.
//
// The payloads are made without materialising what they inflate to: the
// decompressed content is a Stream of literal pieces and runs of zero
// bytes, and each encoder writes a run of zeros as repeated blocks (zstd
// RLE blocks, one deflate segment, one LZ4 block, one snappy chunk, snappy
// copy elements), so a 4 GiB zstd bomb costs 128 KiB and a few
// milliseconds to build.
package bombs

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"sync"

	"github.com/OneOfOne/xxhash"
	"github.com/klauspost/compress/snappy"
	"github.com/pierrec/lz4/v4"
)

// Piece is a part of a Stream: Lit bytes, or Zeros zero bytes (when Lit is
// nil).
type Piece struct {
	Lit   []byte
	Zeros int64
}

// Stream is decompressed content, described rather than held.
type Stream []Piece

// Lit appends literal bytes.
func (s Stream) Lit(b []byte) Stream { return append(s, Piece{Lit: b}) }

// Zeros appends n zero bytes.
func (s Stream) Zeros(n int64) Stream {
	if n <= 0 {
		return s
	}
	return append(s, Piece{Zeros: n})
}

// Size is the stream's length in bytes.
func (s Stream) Size() int64 {
	var n int64
	for _, p := range s {
		if p.Lit != nil {
			n += int64(len(p.Lit))
		} else {
			n += p.Zeros
		}
	}
	return n
}

// Bytes materialises the stream (for small ones only).
func (s Stream) Bytes() []byte {
	out := make([]byte, 0, s.Size())
	for _, p := range s {
		if p.Lit != nil {
			out = append(out, p.Lit...)
		} else {
			out = append(out, make([]byte, p.Zeros)...)
		}
	}
	return out
}

var zeroMiB = make([]byte, 1<<20)

// crc32IEEE is the IEEE CRC-32 of the stream (the gzip trailer's).
func (s Stream) crc32IEEE() uint32 {
	var c uint32
	for _, p := range s {
		if p.Lit != nil {
			c = crc32.Update(c, crc32.IEEETable, p.Lit)
			continue
		}
		for n := p.Zeros; n > 0; n -= int64(len(zeroMiB)) {
			c = crc32.Update(c, crc32.IEEETable, zeroMiB[:min(n, int64(len(zeroMiB)))])
		}
	}
	return c
}

// Zstd encodes s as one zstd frame (RFC 8878): literal pieces as raw
// blocks, zero runs as RLE blocks of up to 128 KiB (4 bytes each), window
// 128 KiB. fcs, when not nil, is written as the frame content size (it
// may lie); otherwise the header gives none.
func Zstd(s Stream, fcs *uint64) []byte {
	const maxBlock = 128 << 10
	b := []byte{0x28, 0xb5, 0x2f, 0xfd} // magic
	if fcs != nil {
		b = append(b, 0xc0, (17-10)<<3) // content size in 8 bytes; window 2^17
		b = binary.LittleEndian.AppendUint64(b, *fcs)
	} else {
		b = append(b, 0x00, (17-10)<<3)
	}
	type block struct {
		rle  bool
		lit  []byte
		size int
	}
	var blocks []block
	for _, p := range s {
		if p.Lit != nil {
			for l := p.Lit; len(l) > 0; {
				n := min(len(l), maxBlock)
				blocks = append(blocks, block{lit: l[:n], size: n})
				l = l[n:]
			}
			continue
		}
		for n := p.Zeros; n > 0; n -= maxBlock {
			blocks = append(blocks, block{rle: true, size: int(min(n, maxBlock))})
		}
	}
	if len(blocks) == 0 {
		blocks = append(blocks, block{})
	}
	for i, bl := range blocks {
		h := uint32(bl.size) << 3
		if i == len(blocks)-1 {
			h |= 1 // last block
		}
		if bl.rle {
			h |= 1 << 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
		if bl.rle {
			b = append(b, 0)
		} else {
			b = append(b, bl.lit...)
		}
	}
	return b
}

// deflateZeros is a deflate segment (ending byte-aligned) that inflates
// to 1 MiB of zeros after at least 32 KiB of zeros: all back references.
var deflateZeros = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(zeroMiB)
	w.Flush()
	buf.Reset()
	w.Write(zeroMiB)
	w.Flush()
	return bytes.Clone(buf.Bytes())
})

// Gzip encodes s as one gzip member (RFC 1952) holding one deflate stream;
// zero runs past their first 2 MiB are a repeated deflate segment (about
// 1 KiB per MiB). isize, when not nil, replaces the trailer's ISIZE (the
// input size modulo 2^32) with a lie.
func Gzip(s Stream, isize *uint32) []byte {
	out := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff} // header: deflate, no flags, OS unknown
	buf := bytes.NewBuffer(out)
	w, _ := flate.NewWriter(buf, flate.BestCompression)
	for _, p := range s {
		if p.Lit != nil {
			w.Write(p.Lit)
			continue
		}
		n := p.Zeros
		warm := min(n, 2<<20)
		for k := warm; k > 0; k -= int64(len(zeroMiB)) {
			w.Write(zeroMiB[:min(k, int64(len(zeroMiB)))])
		}
		n -= warm
		if n >= 1<<20 {
			w.Flush()
			seg := deflateZeros()
			for ; n >= 1<<20; n -= 1 << 20 {
				buf.Write(seg)
			}
		}
		if n > 0 {
			w.Write(zeroMiB[:n])
		}
	}
	w.Close()
	size := uint32(s.Size())
	if isize != nil {
		size = *isize
	}
	out = binary.LittleEndian.AppendUint32(buf.Bytes(), s.crc32IEEE())
	return binary.LittleEndian.AppendUint32(out, size)
}

// lz4ZeroBlock is an independent LZ4 block of 4 MiB of zeros.
var lz4ZeroBlock = sync.OnceValue(func() []byte {
	src := make([]byte, 4<<20)
	dst := make([]byte, lz4.CompressBlockBound(len(src)))
	n, err := lz4.CompressBlock(src, dst, nil)
	if err != nil || n == 0 {
		panic("bombs: lz4 block of zeros: " + errString(err))
	}
	return dst[:n]
})

func errString(err error) string {
	if err == nil {
		return "incompressible"
	}
	return err.Error()
}

// LZ4 encodes s as one LZ4 frame (lz4_Frame_format.md: magic 0x184D2204,
// independent blocks of up to 4 MiB, no checksums): literal pieces as
// uncompressed blocks, zero runs as compressed blocks of 4 MiB (about
// 16 KiB each). contentSize, when not nil, is written in the frame
// descriptor (it may lie).
func LZ4(s Stream, contentSize *uint64) []byte {
	const maxBlock = 4 << 20
	b := []byte{0x04, 0x22, 0x4d, 0x18}
	flg := byte(0x60) // version 01, independent blocks
	if contentSize != nil {
		flg |= 0x08
	}
	desc := []byte{flg, 7 << 4} // block maximum size 4 MiB
	if contentSize != nil {
		desc = binary.LittleEndian.AppendUint64(desc, *contentSize)
	}
	b = append(b, desc...)
	b = append(b, byte(xxhash.Checksum32S(desc, 0)>>8))
	raw := func(l []byte) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(l))|1<<31)
		b = append(b, l...)
	}
	for _, p := range s {
		if p.Lit != nil {
			for l := p.Lit; len(l) > 0; {
				n := min(len(l), maxBlock)
				raw(l[:n])
				l = l[n:]
			}
			continue
		}
		n := p.Zeros
		for ; n >= maxBlock; n -= maxBlock {
			blk := lz4ZeroBlock()
			b = binary.LittleEndian.AppendUint32(b, uint32(len(blk)))
			b = append(b, blk...)
		}
		if n > 0 {
			src := make([]byte, n)
			dst := make([]byte, lz4.CompressBlockBound(int(n)))
			k, err := lz4.CompressBlock(src, dst, nil)
			if err != nil || k == 0 {
				raw(src)
				continue
			}
			b = binary.LittleEndian.AppendUint32(b, uint32(k))
			b = append(b, dst[:k]...)
		}
	}
	return binary.LittleEndian.AppendUint32(b, 0) // end mark
}

// snappyZeroChunk is a raw snappy block of 1 MiB of zeros.
var snappyZeroChunk = sync.OnceValue(func() []byte { return snappy.Encode(nil, zeroMiB) })

// Xerial encodes s in snappy-java's framing (the Java client's snappy):
// the 16-byte header, then chunks of a 4-byte big-endian length and a raw
// snappy block; zero runs are 1 MiB chunks (about 48 KiB each).
func Xerial(s Stream) []byte {
	b := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}
	chunk := func(blk []byte) {
		b = binary.BigEndian.AppendUint32(b, uint32(len(blk)))
		b = append(b, blk...)
	}
	for _, p := range s {
		if p.Lit != nil {
			for l := p.Lit; len(l) > 0; {
				n := min(len(l), 32<<10)
				chunk(snappy.Encode(nil, l[:n]))
				l = l[n:]
			}
			continue
		}
		n := p.Zeros
		for ; n >= 1<<20; n -= 1 << 20 {
			chunk(snappyZeroChunk())
		}
		if n > 0 {
			chunk(snappy.Encode(nil, zeroMiB[:n]))
		}
	}
	return b
}

// RawSnappy encodes s as one raw snappy block (as librdkafka writes
// snappy), element by element: literals, and zero runs as a literal zero
// followed by copies of 64 bytes at offset 1 (3 bytes each). declared,
// when not nil, replaces the block's preamble (the decoded length) with a
// lie.
func RawSnappy(s Stream, declared *uint64) []byte {
	n := uint64(s.Size())
	if declared != nil {
		n = *declared
	}
	b := binary.AppendUvarint(nil, n)
	lit := func(l []byte) {
		for len(l) > 0 {
			k := min(len(l), 1<<16)
			switch {
			case k <= 60:
				b = append(b, byte(k-1)<<2)
			default:
				b = append(b, 61<<2, byte(k-1), byte((k-1)>>8))
			}
			b = append(b, l[:k]...)
			l = l[k:]
		}
	}
	for _, p := range s {
		if p.Lit != nil {
			lit(p.Lit)
			continue
		}
		z := p.Zeros
		lit([]byte{0})
		z--
		for ; z >= 64; z -= 64 {
			b = append(b, 63<<2|2, 1, 0) // copy, 2-byte offset: length 64, offset 1
		}
		if z > 0 {
			b = append(b, byte(z-1)<<2|2, 1, 0)
		}
	}
	return b
}
