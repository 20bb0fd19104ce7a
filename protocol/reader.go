package protocol

import (
	"encoding/binary"
	"fmt"
	"math"
)

// This file is kwire's one cursor over Kafka's primitive types, named after
// the "Protocol Primitive Types" section of the Kafka protocol guide
// (https://kafka.apache.org/protocol#protocol_types) and KIP-482 (compact
// strings, bytes and arrays; tagged fields).
//
// Contract:
//   - Offsets are indexes into the byte slice given to NewReader (or Reset);
//     the cursor reads from Offset() up to a limit (End()) that may be
//     lowered to read inside a tagged field.
//   - The first failure is sticky: it records the offset of the primitive
//     that failed and its cause; every later read returns a zero value and
//     leaves the cursor where it is.
//   - Every length and count is checked against the bytes that remain
//     before any allocation: a string or bytes length must fit, an array of
//     N elements needs at least N*minElem bytes.
//   - Fixed-size reads do not allocate; byte values alias the input.

// Reader reads Kafka primitive types from a byte slice.
type Reader struct {
	b      []byte
	off    int
	end    int
	err    error
	errOff int

	// lim is where reading must stop: end, or the next omitted span if
	// it starts before. Over a Space with omitted spans (ResetSpace),
	// offsets are the space's own and b holds the bytes kept: shift is
	// the number of bytes omitted before off, next the offset where the
	// next omitted span starts (math.MaxInt when none does), omit[oi:] the
	// spans from there on, and size the space's length.
	lim   int
	shift int
	next  int
	omit  []Span
	oi    int
	size  int
}

// NewReader returns a Reader over all of b.
func NewReader(b []byte) *Reader {
	return &Reader{b: b, end: len(b), lim: len(b), next: math.MaxInt, size: len(b)}
}

// Reset points r at b[off:end], clearing any error. off and end are
// clamped into [0, len(b)].
func (r *Reader) Reset(b []byte, off, end int) {
	end = max(0, min(end, len(b)))
	off = max(0, min(off, end))
	*r = Reader{b: b, off: off, end: end, lim: end, next: math.MaxInt, size: len(b)}
}

// ResetSpace points r at [off, end) of s, whose offsets count the bytes
// s omitted (Space.Omitted): reading a fixed-size value or a length that
// reaches into an omitted span fails with ErrOmitted; SpanKept reads a
// value whose tail was omitted.
func (r *Reader) ResetSpace(s *Space, off, end int) {
	if len(s.Omitted) == 0 {
		r.Reset(s.Data, off, end)
		return
	}
	size := s.Size()
	end = max(0, min(end, size))
	off = max(0, min(off, end))
	*r = Reader{b: s.Data, off: off, end: end, omit: s.Omitted, size: size}
	r.sync()
}

// Restart clears r's error and points it at [off, end) of the same
// input (clamped to it), as Reset or ResetSpace would, without going over
// the omitted spans before it again when off is ahead of where r is.
func (r *Reader) Restart(off, end int) {
	back := off < r.off
	r.err, r.errOff = nil, 0
	r.end = max(0, min(end, r.size))
	r.off = max(0, min(off, r.end))
	r.lim = r.end
	if r.omit != nil {
		if back {
			r.oi, r.shift = 0, 0
		}
		r.sync()
	}
}

// sync moves past the omitted spans that end at or before off, so that
// next is the start of the first span after it.
func (r *Reader) sync() {
	for r.oi < len(r.omit) && r.omit[r.oi].Off+r.omit[r.oi].Len <= r.off {
		r.shift += r.omit[r.oi].Len
		r.oi++
	}
	r.next = math.MaxInt
	if r.oi < len(r.omit) {
		r.next = r.omit[r.oi].Off
	}
	r.lim = min(r.end, r.next)
}

// omittedError says a read reached bytes the decoder did not keep.
type omittedError struct{ off int }

func (e *omittedError) Error() string {
	return fmt.Sprintf("bytes from %#x on were not kept", e.off)
}
func (e *omittedError) Unwrap() error { return ErrOmitted }

// Offset returns the offset of the next byte to read.
func (r *Reader) Offset() int { return r.off }

// End returns the current read limit.
func (r *Reader) End() int { return r.end }

// SetEnd sets the read limit to end (clamped to the input) and returns the
// previous limit, to be restored with SetEnd again.
func (r *Reader) SetEnd(end int) (old int) {
	old = r.end
	r.end = max(r.off, min(end, r.size))
	r.lim = min(r.end, r.next)
	return old
}

// Remaining returns the number of bytes left before the limit.
func (r *Reader) Remaining() int { return r.end - r.off }

// Err returns the first failure's cause (wrapping one of the sentinels
// ErrShort, ErrLength, ErrNegative, ErrVarint), or nil.
func (r *Reader) Err() error { return r.err }

// ErrOffset returns the offset of the primitive that failed first; it is
// meaningful only when Err is not nil.
func (r *Reader) ErrOffset() int { return r.errOff }

// Fail records err at offset off unless a failure is already recorded.
func (r *Reader) Fail(off int, err error) {
	if r.err == nil {
		r.err, r.errOff = err, off
	}
}

// Seek moves the cursor to off, which must lie within [Offset, End].
func (r *Reader) Seek(off int) {
	if r.err == nil && off >= r.off && off <= r.end {
		r.off = off
		if r.omit != nil {
			r.sync()
		}
	}
}

// shortError says a fixed-size value runs past the end, or (omitted)
// into bytes the decoder did not keep.
type shortError struct {
	need, left int
	omitted    bool
}

func (e *shortError) Error() string {
	if e.omitted {
		return fmt.Sprintf("need %d bytes, %d left before bytes not kept", e.need, e.left)
	}
	return fmt.Sprintf("need %d bytes, %d left", e.need, e.left)
}

func (e *shortError) Unwrap() error {
	if e.omitted {
		return ErrOmitted
	}
	return ErrShort
}

// lengthError says a length or count claims more bytes than remain.
type lengthError struct {
	what       string // "length", "array count", "tagged field count"
	n, need    int64  // the claimed length or count; bytes it needs at least
	left       int
	isMinBytes bool
}

func (e *lengthError) Error() string {
	if e.isMinBytes {
		return fmt.Sprintf("%s %d needs at least %d bytes, %d left", e.what, e.n, e.need, e.left)
	}
	return fmt.Sprintf("%s %d exceeds the %d bytes left", e.what, e.n, e.left)
}
func (e *lengthError) Unwrap() error { return ErrLength }

// negativeError says a length is negative where that is not allowed.
type negativeError struct {
	n    int64
	null bool // -1 where the value is not nullable
}

func (e *negativeError) Error() string {
	if e.null {
		return fmt.Sprintf("length %d (null) where the value is not nullable", e.n)
	}
	return fmt.Sprintf("invalid negative length %d", e.n)
}
func (e *negativeError) Unwrap() error { return ErrNegative }

// varintError says a varint is overlong or unterminated.
type varintError struct {
	max   int
	ended bool
}

func (e *varintError) Error() string {
	if e.ended {
		return "varint runs past the end"
	}
	return fmt.Sprintf("varint longer than %d bytes", e.max)
}
func (e *varintError) Unwrap() error { return ErrVarint }

// take returns the next n bytes, or nil after recording ErrShort.
func (r *Reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if r.lim-r.off < n {
		r.Fail(r.off, &shortError{need: n, left: r.lim - r.off, omitted: r.lim < r.end})
		return nil
	}
	p := r.off - r.shift
	b := r.b[p : p+n : p+n]
	r.off += n
	return b
}

// ahead returns the next n bytes without reading them, or nil (recording
// nothing) when fewer are left, n is negative or r has failed.
func (r *Reader) ahead(n int) []byte {
	if r.err != nil || n < 0 || r.lim-r.off < n {
		return nil
	}
	p := r.off - r.shift
	return r.b[p : p+n : p+n]
}

// Int8 reads an INT8.
func (r *Reader) Int8() int8 {
	if b := r.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

// Bool reads a BOOLEAN: 0 is false, anything else true (as Kafka reads it).
func (r *Reader) Bool() bool {
	if b := r.take(1); b != nil {
		return b[0] != 0
	}
	return false
}

// Int16 reads a big-endian INT16.
func (r *Reader) Int16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

// Uint16 reads a big-endian UINT16.
func (r *Reader) Uint16() uint16 {
	if b := r.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

// Int32 reads a big-endian INT32.
func (r *Reader) Int32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// Uint32 reads a big-endian UINT32.
func (r *Reader) Uint32() uint32 {
	if b := r.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

// Int64 reads a big-endian INT64.
func (r *Reader) Int64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// Float64 reads a FLOAT64: an IEEE 754 binary64 value, big-endian.
func (r *Reader) Float64() float64 {
	if b := r.take(8); b != nil {
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	return 0
}

// Uuid reads a UUID: 16 bytes, most significant first.
func (r *Reader) Uuid() (u [16]byte) {
	if b := r.take(16); b != nil {
		copy(u[:], b)
	}
	return u
}

// uvarint reads an unsigned LEB128 varint of at most maxLen bytes.
func (r *Reader) uvarint(maxLen int) uint64 {
	if r.err != nil {
		return 0
	}
	var x uint64
	var s uint
	for i := 0; ; i++ {
		if i == maxLen {
			r.Fail(r.off, &varintError{max: maxLen})
			return 0
		}
		if r.off+i >= r.lim {
			if r.off+i >= r.end {
				r.Fail(r.off, &varintError{max: maxLen, ended: true})
			} else {
				r.Fail(r.lim, &omittedError{off: r.lim})
			}
			return 0
		}
		c := r.b[r.off+i-r.shift]
		x |= uint64(c&0x7f) << s
		if c < 0x80 {
			r.off += i + 1
			return x
		}
		s += 7
	}
}

// UnsignedVarint reads an UNSIGNED_VARINT: at most 5 bytes; bits beyond
// the 32nd in the fifth byte are dropped, as Kafka's ByteUtils does.
func (r *Reader) UnsignedVarint() uint32 { return uint32(r.uvarint(5)) }

// Varint reads a VARINT: a zig-zag encoded 32-bit integer, at most 5 bytes.
func (r *Reader) Varint() int32 {
	u := uint32(r.uvarint(5))
	return int32(u>>1) ^ -int32(u&1)
}

// Varlong reads a VARLONG: a zig-zag encoded 64-bit integer, at most 10
// bytes.
func (r *Reader) Varlong() int64 {
	u := r.uvarint(10)
	return int64(u>>1) ^ -int64(u&1)
}

// checkLen records ErrLength at off when n bytes do not remain.
func (r *Reader) checkLen(off int, n int64) bool {
	if n > int64(r.end-r.off) {
		r.Fail(off, &lengthError{what: "length", n: n, left: r.end - r.off})
		return false
	}
	return true
}

// StringLen reads the INT16 length of a STRING or NULLABLE_STRING and
// checks it against the bytes left. It returns -1 for null; a length below
// -1 fails with ErrNegative.
func (r *Reader) StringLen() int {
	off := r.off
	n := int64(r.Int16())
	return r.lenResult(off, n)
}

// BytesLen reads the INT32 length of BYTES, NULLABLE_BYTES or RECORDS, as
// StringLen does.
func (r *Reader) BytesLen() int {
	off := r.off
	n := int64(r.Int32())
	return r.lenResult(off, n)
}

// CompactLen reads the UNSIGNED_VARINT length+1 of a COMPACT_STRING,
// COMPACT_BYTES or COMPACT_RECORDS (and their nullable forms) and checks
// it against the bytes left. It returns -1 for null (a stored 0).
func (r *Reader) CompactLen() int {
	off := r.off
	n := int64(r.UnsignedVarint()) - 1
	return r.lenResult(off, n)
}

func (r *Reader) lenResult(off int, n int64) int {
	switch {
	case r.err != nil:
		return 0
	case n < -1:
		r.Fail(off, &negativeError{n: n})
		return 0
	case n == -1:
		return -1
	case !r.checkLen(off, n):
		return 0
	}
	return int(n)
}

// Span returns the next n bytes (aliasing the input) and advances. A
// negative n or one beyond the bytes left fails.
func (r *Reader) Span(n int) []byte {
	if n < 0 {
		r.Fail(r.off, &negativeError{n: int64(n)})
		return nil
	}
	if !r.checkLen(r.off, int64(n)) {
		return nil
	}
	return r.take(n)
}

// SpanKept is Span for a value whose tail may have been omitted (see
// ResetSpace): it returns the bytes kept of the next n and how many after
// them were omitted, and advances past all n. An omitted span that starts
// inside the value must end with it; anything else fails with
// ErrOmitted.
func (r *Reader) SpanKept(n int) (kept []byte, omitted int) {
	if r.err != nil || n < 0 || r.off+n <= r.next {
		return r.Span(n), 0
	}
	if !r.checkLen(r.off, int64(n)) {
		return nil, 0
	}
	s := r.omit[r.oi]
	if s.Off < r.off || s.Off+s.Len != r.off+n {
		r.Fail(s.Off, &omittedError{off: s.Off})
		return nil, 0
	}
	p := r.off - r.shift
	q := p + s.Off - r.off
	kept = r.b[p:q:q]
	r.off += n
	r.sync()
	return kept, s.Len
}

// nonNull fails with ErrNegative when a non-nullable length is -1.
func (r *Reader) nonNull(off, n int) int {
	if n == -1 && r.err == nil {
		r.Fail(off, &negativeError{n: -1, null: true})
	}
	return n
}

// String reads a STRING (INT16 length, not nullable).
func (r *Reader) String() string {
	off := r.off
	n := r.nonNull(off, r.StringLen())
	return string(r.Span(max(n, 0)))
}

// NullableString reads a NULLABLE_STRING; null reports a -1 length.
func (r *Reader) NullableString() (s string, null bool) {
	n := r.StringLen()
	if n < 0 {
		return "", r.err == nil
	}
	return string(r.Span(n)), false
}

// nullableStringLike is NullableString, returning like itself when the
// string's bytes are like's.
func (r *Reader) nullableStringLike(like string) (s string, null bool) {
	n := r.StringLen()
	if n < 0 {
		return "", r.err == nil
	}
	if b := r.Span(n); string(b) != like {
		return string(b), false
	}
	return like, false
}

// CompactString reads a COMPACT_STRING (UNSIGNED_VARINT length+1, not
// nullable).
func (r *Reader) CompactString() string {
	off := r.off
	n := r.nonNull(off, r.CompactLen())
	return string(r.Span(max(n, 0)))
}

// CompactNullableString reads a COMPACT_NULLABLE_STRING.
func (r *Reader) CompactNullableString() (s string, null bool) {
	n := r.CompactLen()
	if n < 0 {
		return "", r.err == nil
	}
	return string(r.Span(n)), false
}

// Bytes reads BYTES (INT32 length, not nullable), aliasing the input.
func (r *Reader) Bytes() []byte {
	off := r.off
	n := r.nonNull(off, r.BytesLen())
	return r.Span(max(n, 0))
}

// NullableBytes reads NULLABLE_BYTES; null is returned as nil.
func (r *Reader) NullableBytes() []byte {
	n := r.BytesLen()
	if n < 0 {
		return nil
	}
	return r.Span(n)
}

// CompactBytes reads COMPACT_BYTES (not nullable), aliasing the input.
func (r *Reader) CompactBytes() []byte {
	off := r.off
	n := r.nonNull(off, r.CompactLen())
	return r.Span(max(n, 0))
}

// CompactNullableBytes reads COMPACT_NULLABLE_BYTES; null is nil.
func (r *Reader) CompactNullableBytes() []byte {
	n := r.CompactLen()
	if n < 0 {
		return nil
	}
	return r.Span(n)
}

// checkCount records ErrLength at off when n elements of at least minElem
// bytes each cannot fit in the bytes left. minElem below 1 counts as 1, so
// a count never exceeds the bytes left: this bounds allocation by input
// size.
func (r *Reader) checkCount(off int, what string, n int64, minElem int) bool {
	minElem = max(minElem, 1)
	left := r.end - r.off
	if need := n * int64(minElem); need > int64(left) {
		r.Fail(off, &lengthError{what: what, n: n, need: need, left: left, isMinBytes: minElem > 1})
		return false
	}
	return true
}

// ArrayLen reads a classic ARRAY's INT32 count and checks that count
// elements of at least minElem bytes each fit in the bytes left. It returns
// -1 for a null array; a count below -1 fails with ErrNegative.
func (r *Reader) ArrayLen(minElem int) int {
	off := r.off
	n := int64(r.Int32())
	return r.countResult(off, n, minElem)
}

// CompactArrayLen reads a COMPACT_ARRAY's UNSIGNED_VARINT count+1, as
// ArrayLen does; a stored 0 is a null array (-1).
func (r *Reader) CompactArrayLen(minElem int) int {
	off := r.off
	n := int64(r.UnsignedVarint()) - 1
	return r.countResult(off, n, minElem)
}

func (r *Reader) countResult(off int, n int64, minElem int) int {
	switch {
	case r.err != nil:
		return 0
	case n < -1:
		r.Fail(off, &negativeError{n: n})
		return 0
	case n == -1:
		return -1
	case !r.checkCount(off, "array count", n, minElem):
		return 0
	}
	return int(n)
}

// TaggedFieldCount reads the UNSIGNED_VARINT number of fields in a tagged
// field buffer (KIP-482) and checks that each can fit in two bytes at least
// (a tag and a size).
func (r *Reader) TaggedFieldCount() int {
	if r.noTags() {
		return 0
	}
	off := r.off
	n := int64(r.UnsignedVarint())
	if r.err != nil || !r.checkCount(off, "tagged field count", n, 2) {
		return 0
	}
	return int(n)
}

// noTags reads a count of 0 tagged fields, the one byte most buffers
// are, and reports whether it did; on any other byte, after a failure,
// or where TaggedFieldCount would fail (no byte before lim, or none
// before end: inside a tagged field, whose data end narrows end but
// not lim, a read may have passed end), it reads nothing. It is small
// enough to be inlined where every struct of a flexible version ends
// with a buffer.
func (r *Reader) noTags() bool {
	if r.err == nil && r.off < r.lim && r.off < r.end && r.b[r.off-r.shift] == 0 {
		r.off++
		return true
	}
	return false
}

// TaggedField reads one tagged field's UNSIGNED_VARINT tag and size and
// returns its data, aliasing the input.
func (r *Reader) TaggedField() (tag uint32, data []byte) {
	tag = r.UnsignedVarint()
	off := r.off
	n := int64(r.UnsignedVarint())
	if r.err != nil || !r.checkLen(off, n) {
		return 0, nil
	}
	return tag, r.take(int(n))
}

// TaggedFields reads a whole tagged field buffer, calling fn for each
// field in wire order. It stops at the first failure.
func (r *Reader) TaggedFields(fn func(tag uint32, data []byte)) {
	if r.noTags() {
		return
	}
	n := r.TaggedFieldCount()
	for i := 0; i < n && r.err == nil; i++ {
		tag, data := r.TaggedField()
		if r.err == nil && fn != nil {
			fn(tag, data)
		}
	}
}
