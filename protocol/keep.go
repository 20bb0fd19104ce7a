package protocol

// This file keeps what the decoder needs of a decompressed stream. The
// codecs push what they inflate into a keeper (an io.Writer, fed by the
// decompressors' WriteTo) a few kilobytes at a time; the keeper parses the
// records' layout as the bytes arrive (Kafka protocol guide, "Record":
// length, attributes, timestamp and offset deltas, key, value, headers)
// and keeps every byte but the tails of keys, values and header keys and
// values longer than Decoder.KeepValue, which it omits (Space.Omitted), so
// that a record holding a 250 MiB value costs KeepValue bytes of memory,
// not 250 MiB, however it was compressed. The record decoder then reads
// the kept bytes with the stream's own offsets (Reader.ResetSpace,
// SpanKept).
//
// The keeper also enforces what bounds a decompressed stream: its length
// (Decoder.MaxDecompressed: past it the stream is cut and the rest never
// inflated) and the memory one frame may take (Decoder.MaxMemory,
// Decoder.Budget): its buffer is reserved before it grows, and it stops
// before a record whose nodes (estimated) would not fit, or past the node
// cap. What it cannot split safely it keeps whole, bounded the same way:
// legacy message sets (magic 0 and 1, whose inner messages carry CRCs over
// their whole value) and control batches (whose values the decoder reads
// through the schema table).

import (
	"io"
	"math"
)

// keepWindow bounds the bytes taken into a keeper's buffer ahead of its
// parser: what omitting the rest of a value may have to take back.
const keepWindow = 64 << 10

type kstate uint8

const (
	kAll     kstate = iota // keep everything
	kRecLen                // a record's length varint
	kRecHead               // attributes, timestamp and offset deltas
	kField                 // the length of a key, value, header key or value, or the header count
	kKeep                  // keep want bytes, omit then (negative: the rest of the stream), go to next
	kKeepTo                // keep up to stream offset end (a record too short for anything to omit)
	kRecRest               // the rest of the record: a value's worth kept, the rest omitted
	kDone                  // everything left is omitted
)

// Fields of a record kField reads, in order.
const (
	fKey = iota
	fValue
	fHeaders
	fHeaderKey
	fHeaderValue
)

// keeper receives a decompressed stream; see the file comment.
type keeper struct {
	m *treeMem
	// buf holds the bytes kept, buf[:w], then (from p on) the pending
	// bytes the parser has not decided on; between w and p lie bytes
	// decided on since the last compaction (kept ones were copied down to
	// w, omitted ones are dropped): omitting a value's tail moves nothing.
	buf   []byte
	w     int // end of the bytes kept
	p     int // parse position in buf
	shift int // bytes omitted so far: buf[p] is at stream offset w+shift
	omit  []Span
	skip  int64 // input bytes still to drop
	rest  bool  // the last span runs to the end of the stream
	total int64 // stream bytes taken
	max   int64 // the stream cap
	resv  int   // the size of buf reserved (its capacity may be larger)
	keep  int   // bytes kept of a long value (0: all; negative: none)
	hint  int   // the expected stream size, for the first allocation

	// nodes estimates the nodes the kept records will make (recordNodes
	// each), checked against maxNodes and, at nodeCost each, against what
	// the frame's memory has left.
	nodes, maxNodes int64
	base            int64 // nodes when the keeper started (their memory is reserved already)
	stop            error // why the stream was cut short (capError, memoryLimitError, nodeLimitError)
	frozen          bool  // stopped before the pending bytes: the space ends at the parser

	st    kstate
	next  kstate // the state after kKeep
	count int64  // records still to come
	end   int    // stream offset where the current record ends
	field int    // kField: which field
	hdrs  int64  // headers left in the record
	want  int    // kKeep: bytes still to keep
	then  int64  // kKeep: bytes to omit after them
}

// reset readies k for a stream capped at max bytes. With keep 0 or all it
// keeps everything; otherwise it parses count records (magic 2) and omits
// the tails of their long values. nodes is the tree's node count so far,
// maxNodes its cap.
func (k *keeper) reset(m *treeMem, max int64, keep int, count int64, all bool, hint int, nodes, maxNodes int64) {
	*k = keeper{m: m, max: max, keep: keep, count: count, hint: hint, nodes: nodes, base: nodes, maxNodes: maxNodes, st: kRecLen}
	if keep == 0 || all {
		k.st = kAll
	}
}

// pos is the stream offset of buf[p].
func (k *keeper) pos() int { return k.w + k.shift }

// at is the stream offset of buf[i], i >= p.
func (k *keeper) at(i int) int { return k.w + k.shift + i - k.p }

// keepN keeps the next n pending bytes.
func (k *keeper) keepN(n int) {
	if k.w != k.p {
		copy(k.buf[k.w:], k.buf[k.p:k.p+n])
	}
	k.w += n
	k.p += n
}

// compact moves the pending bytes down to the end of the kept ones, so
// that the buffer grows with what is kept only.
func (k *keeper) compact() {
	if k.p > k.w {
		n := copy(k.buf[k.w:], k.buf[k.p:])
		k.buf = k.buf[:k.w+n]
		k.p = k.w
	}
}

// Write takes the next bytes of the stream. Once the stream must be cut
// (the cap, the memory, the node cap) it fails with the reason, which
// stops the decompressor.
func (k *keeper) Write(c []byte) (int, error) {
	n := len(c)
	if k.stop != nil {
		return 0, k.stop
	}
	if left := k.max - k.total; int64(len(c)) > left {
		c = c[:left]
		k.stop = capError{k.max}
	}
	k.total += int64(len(c))
	for len(c) > 0 && !k.frozen {
		if k.skip > 0 {
			d := int(min(k.skip, int64(len(c))))
			k.skip -= int64(d)
			c = c[d:]
			continue
		}
		n := min(len(c), keepWindow)
		k.compact()
		if !k.room(n) {
			break
		}
		k.buf = append(k.buf, c[:n]...)
		c = c[n:]
		k.parse()
	}
	if k.stop != nil {
		return n - len(c), k.stop
	}
	return n, nil
}

// readFrom reads r to its end into k, a window at a time straight into
// k's buffer (one copy, and none of a decompressor's own writer
// plumbing), handing each window to the parser as Write would; it
// returns r's error, or k's reason for cutting the stream.
func (k *keeper) readFrom(r io.Reader) error {
	for k.stop == nil {
		// Into the room there is, a window at most; more room only when
		// little is left (a stream of the size its header gave fits its
		// first buffer).
		k.compact()
		if k.resv-len(k.buf) < 512 && !k.room(keepWindow) {
			return k.stop
		}
		start := len(k.buf)
		want := min(int64(min(keepWindow, k.resv-start)), k.max-k.total+1) // one byte past the cap tells it was passed
		n, err := r.Read(k.buf[start : start+int(want)])
		if n > 0 {
			k.buf = k.buf[:start+n]
			k.took(start)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return k.stop
}

// took hands the bytes appended to buf from start on to the keeper, as
// Write does with what it is given: past the cap they are dropped, while
// omitting they are taken back out, and the rest goes to the parser.
func (k *keeper) took(start int) {
	c := k.buf[start:]
	if left := k.max - k.total; int64(len(c)) > left {
		c = c[:left]
		k.buf = k.buf[:start+len(c)]
		k.stop = capError{k.max}
	}
	k.total += int64(len(c))
	if k.skip > 0 {
		// Nothing was pending (the keeper was dropping bytes): the
		// bytes to drop are the first ones read.
		d := int(min(k.skip, int64(len(c))))
		k.skip -= int64(d)
		k.p += d
	}
	if len(k.buf) > k.p {
		k.parse()
	}
}

// room makes room for w more bytes in buf, reserving the memory first;
// false (and stopped) when the frame may not take it.
func (k *keeper) room(w int) bool {
	need := len(k.buf) + w
	if need <= k.resv {
		return true
	}
	size := max(2*k.resv, need, keepWindow)
	if k.resv == 0 && k.hint > size {
		// The stream's stated size, trusted up to 16 MiB when everything
		// is kept (a bomb's honest header costs no more than that), up to
		// 1 MiB when long values are omitted (what is kept is less).
		trust := 16 << 20
		if k.keep != 0 {
			trust = 1 << 20
		}
		size = max(min(k.hint, trust), need)
	}
	// What is reserved is the size asked for, not the capacity the pools
	// give (which may be larger): so that where the memory runs out
	// depends on the stream alone.
	if !k.m.reserve(int64(size)) {
		k.halt(memoryLimitError{k.m.limit})
		return false
	}
	nb := append(k.m.buf(size), k.buf...)
	if old := k.buf; cap(old) > 0 {
		k.m.unreserve(int64(k.resv))
		putBuf(old)
	}
	k.buf, k.resv = nb, size
	return true
}

// halt stops the stream at the parser.
func (k *keeper) halt(why error) {
	k.stop, k.frozen = why, true
}

// fits reports whether the nodes of one more record may be made, as far
// as an estimate tells; when not it stops the stream before the record.
func (k *keeper) fits() bool {
	k.nodes += recordNodes
	switch {
	case k.nodes > k.maxNodes:
		k.halt(nodeLimitError{int(k.maxNodes)})
	case !k.m.canReserve((k.nodes - k.base) * nodeCost):
		k.halt(memoryLimitError{k.m.limit})
	default:
		return true
	}
	return false
}

// recordNodes is how many nodes a record makes at least (Record, Length,
// Attributes, TimestampDelta, OffsetDelta, Key, Value, Headers).
const recordNodes = 8

// varint reads a zig-zag varint of at most maxLen bytes at buf[at:], not
// past stream offset limit. It returns the value and its size; size 0
// means more bytes are needed, -1 that the varint is malformed or runs
// past limit.
func (k *keeper) varint(at, maxLen, limit int) (int64, int) {
	var x uint64
	var s uint
	for i := 0; i < maxLen; i++ {
		if k.at(at+i) >= limit {
			return 0, -1
		}
		if at+i >= len(k.buf) {
			return 0, 0
		}
		c := k.buf[at+i]
		x |= uint64(c&0x7f) << s
		if c < 0x80 {
			return int64(x>>1) ^ -int64(x&1), i + 1
		}
		s += 7
	}
	return 0, -1
}

// keepThen keeps the first KeepValue bytes of the next n (all of them
// when n is shorter), omits the others (n < 0: the rest of the stream),
// then goes to next.
func (k *keeper) keepThen(n int64, next kstate) {
	kept := int64(k.keep)
	switch {
	case k.keep < 0:
		kept = 0
	case n >= 0 && n < kept:
		kept = n
	}
	omit := n - kept
	if n < 0 {
		omit = -1
	}
	k.want, k.then, k.next, k.st = int(kept), omit, next, kKeep
}

// opaqueKeep is how much of bytes the keeper cannot parse (a malformed
// record, the bytes after the last one) it keeps at least, whatever
// KeepValue: the decoder reads up to a varlong's 10 bytes past where a
// record head starts to go wrong, and must find there what it would
// have found in the whole stream, to report the same error.
const opaqueKeep = 32

// keepOpaque is keepThen for bytes the keeper cannot parse: it keeps at
// least opaqueKeep of them.
func (k *keeper) keepOpaque(n int64, next kstate) {
	k.keepThen(n, next)
	if k.want < opaqueKeep {
		grow := int64(opaqueKeep - k.want)
		if k.then >= 0 {
			grow = min(grow, k.then)
			k.then -= grow
		}
		k.want += int(grow)
	}
}

// omitBytes omits the n bytes at buf[p] (n < 0: the rest of the stream).
func (k *keeper) omitBytes(n int64) {
	at := k.pos()
	if n < 0 {
		k.omit = append(k.omit, Span{Off: at}) // its length is set by finish
		k.buf = k.buf[:k.p]
		k.skip, k.rest = math.MaxInt64, true
		return
	}
	if i := len(k.omit) - 1; i >= 0 && k.omit[i].Off+k.omit[i].Len == at {
		k.omit[i].Len += int(n) // adjacent to the last span: one span
	} else {
		k.omit = append(k.omit, Span{Off: at, Len: int(n)})
	}
	if a := int64(len(k.buf) - k.p); a >= n {
		k.p += int(n)
	} else {
		k.p = len(k.buf)
		k.skip = n - a
	}
	k.shift += int(n)
}

// parse decides on the pending bytes as far as it can.
func (k *keeper) parse() {
	for !k.frozen {
		avail := len(k.buf) - k.p
		switch k.st {
		case kAll:
			k.keepN(avail)
			return
		case kDone:
			k.p = len(k.buf)
			return
		case kRecLen:
			if k.count <= 0 {
				k.keepOpaque(-1, kDone) // past the records: a value's worth, then nothing
				continue
			}
			l, size := k.varint(k.p, 5, math.MaxInt)
			if size == 0 {
				return
			}
			if size < 0 || l < 0 {
				k.keepOpaque(-1, kDone) // the decoder fails here: keep what it shows
				continue
			}
			if !k.fits() {
				return
			}
			k.count--
			k.end = k.pos() + size + int(min(l, math.MaxInt32))
			k.keepN(size)
			if l <= int64(k.keep) {
				k.st = kKeepTo // nothing in it can be long
			} else {
				k.st = kRecHead
			}
		case kRecHead:
			q := k.p + 1 // attributes
			if k.at(q) > k.end {
				k.st = kRecRest
				continue
			}
			_, s1 := k.varint(q, 10, k.end) // timestamp delta
			if s1 == 0 {
				return
			}
			_, s2 := 0, -1
			if s1 > 0 {
				_, s2 = k.varint(q+s1, 5, k.end) // offset delta
				if s2 == 0 {
					return
				}
			}
			if s2 < 0 {
				k.st = kRecRest
				continue
			}
			k.keepN(q + s1 + s2 - k.p)
			k.field, k.st = fKey, kField
		case kField:
			v, size := k.varint(k.p, 5, k.end)
			if size == 0 {
				return
			}
			if size < 0 {
				k.st = kRecRest
				continue
			}
			left := int64(k.end - k.pos() - size)
			if k.field == fHeaders {
				if v < 0 || 2*v > left {
					k.st = kRecRest
					continue
				}
				k.keepN(size)
				k.hdrs, k.field = v, fHeaderKey
				if v == 0 {
					k.st = kRecRest
				}
				continue
			}
			if v < -1 || v > left {
				k.st = kRecRest
				continue
			}
			k.keepN(size)
			next := k.field + 1
			if k.field == fHeaderValue {
				next = fHeaderKey
				if k.hdrs--; k.hdrs == 0 {
					next = -1
				}
			}
			after := kField
			if next < 0 {
				after = kRecRest
			}
			k.field = next
			k.st = after
			if v > 0 {
				k.keepThen(v, after)
			}
		case kKeep:
			d := min(k.want, avail)
			k.keepN(d)
			k.want -= d
			if k.want > 0 {
				return
			}
			if k.then != 0 {
				k.omitBytes(k.then)
				k.then = 0
			}
			k.st = k.next
		case kKeepTo:
			k.keepN(min(k.end-k.pos(), avail))
			if k.pos() < k.end {
				return
			}
			k.st = kRecLen
		case kRecRest:
			k.keepOpaque(int64(max(k.end-k.pos(), 0)), kRecLen)
		}
	}
}

// finish returns the space's kept bytes and omitted spans once the
// stream has ended or was cut: at the cap the space ends there; when the
// keeper stopped for memory or the node cap it ends at the parser (the
// record that did not fit and what followed are not part of it).
func (k *keeper) finish() ([]byte, []Span) {
	if !k.frozen {
		k.keepN(len(k.buf) - k.p) // the bytes the parser waited on: the stream's last
	}
	k.buf = k.buf[:k.w]
	if n := len(k.omit) - 1; n >= 0 && !k.rest && k.skip > 0 {
		// The stream ended inside an omitted value: the span ends with it.
		k.omit[n].Len -= int(k.skip)
		k.shift -= int(k.skip)
		k.skip = 0
	}
	if n := len(k.omit) - 1; n >= 0 && k.rest {
		k.omit[n].Len = int(k.total) - k.omit[n].Off
		if k.frozen {
			k.omit[n].Len = 0
		}
		if k.omit[n].Len <= 0 {
			k.omit = k.omit[:n]
		}
	}
	return k.buf, k.omit
}

// size is the stream length the space stands for: what was taken (up to
// the cap), or where the parser stopped.
func (k *keeper) size() int {
	if k.frozen {
		return k.pos()
	}
	return int(k.total)
}
