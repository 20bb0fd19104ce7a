package reassembly

// IP reassembly (RFC 791 section 3.2 for IPv4, RFC 8200 section 4.5 for
// IPv6): a TCP segment that travelled in IP fragments is handed on when
// its last missing fragment arrives, under that packet's frame number, as
// Wireshark shows it. Pending datagrams are bounded in number and bytes
// and given up after Options.BufferTimeout of capture time.

import (
	"bytes"
	"net/netip"
	"slices"
	"time"
)

// DefaultMaxFragmentMemory is Options.MaxFragmentMemory's default:
// 16 MiB, 256 datagrams of 64 KiB waiting for their last fragment.
const DefaultMaxFragmentMemory = 16 << 20

const (
	// maxFragDatagrams bounds the datagrams waiting for fragments: a
	// bound of the work per fragment (lookups in order), the memory is
	// bounded by defragmenter.maxBytes.
	maxFragDatagrams = 1024
	// fragDatagramCost and fragPartCost are what a datagram and one of
	// its fragments cost beyond their bytes (structs, map entry, slice
	// header), counted against the memory bound.
	fragDatagramCost = 160
	fragPartCost     = 48
	// maxDatagram is the largest datagram payload rebuilt: the 16-bit
	// length of IPv4 and of IPv6 without jumbograms.
	maxDatagram = 65535
)

// fragKey identifies a datagram (RFC 791: source, destination, protocol
// and identification; RFC 8200: source, destination and identification).
type fragKey struct {
	src, dst netip.Addr
	id       uint32
	proto    byte
}

// fragDatagram collects the fragments of one datagram.
type fragDatagram struct {
	key   fragKey
	parts []fragPart
	end   int // payload length, known from the last fragment; -1 before
	bytes int
	frags int       // fragments held
	first time.Time // capture time of its first fragment
	dead  bool      // given up (a cut or oversized fragment): drop the rest
	// frames are its fragments' fragment.frames, in the order they came
	// (nil unless the caller keeps them). They are not counted in bytes:
	// 8 bytes a fragment, against the fragment's own bytes and
	// fragPartCost, and a count that differed from the reader's would
	// give up other datagrams than the reader does.
	frames []int64
}

type fragPart struct {
	off  int
	data []byte
}

// defragmenter rebuilds fragmented datagrams.
type defragmenter struct {
	pending map[fragKey]*fragDatagram
	order   []*fragDatagram // by first fragment, oldest first
	bytes   int
	out     []byte // the last datagram rebuilt, reused
	// frames are the frame numbers of the last datagram rebuilt
	// (fragment.frames of its fragments), in increasing order, each
	// once, reused; nil unless the caller keeps them.
	frames []int64
	// maxBytes bounds bytes (fragments and their costs), all datagrams
	// together: Options.MaxFragmentMemory (0: the default).
	maxBytes int64
	// lost counts the fragments of datagrams given up (incomplete at a
	// timeout, evicted by the bounds, or holding a fragment the snap
	// length cut), until takeLost.
	lost int64
	// conflicts counts, of lost, the fragments of datagrams given up
	// because two of their fragments overlap with different bytes, until
	// takeConflicts.
	conflicts int64
}

// add takes one fragment and returns the datagram's payload when it is
// complete (valid until the next call, as f.frames then is) and how many
// fragments it took.
func (f *defragmenter) add(src, dst []byte, fr *fragment, now time.Time) ([]byte, int, bool) {
	if f.pending == nil {
		f.pending = make(map[fragKey]*fragDatagram)
	}
	k := fragKey{src: addrFrom(src), dst: addrFrom(dst), id: fr.id, proto: fr.proto}
	dg := f.pending[k]
	if dg == nil {
		if len(f.order) >= maxFragDatagrams {
			f.drop(f.order[0])
		}
		dg = &fragDatagram{key: k, end: -1, first: now, bytes: fragDatagramCost}
		f.bytes += fragDatagramCost
		f.pending[k] = dg
		f.order = append(f.order, dg)
	}
	if dg.dead {
		f.lost++
		return nil, 0, false
	}
	if fr.cut || fr.off+len(fr.data) > maxDatagram || (!fr.more && dg.end >= 0 && dg.end != fr.off+len(fr.data)) {
		// Given up; the datagram stays, empty, to absorb its other
		// fragments until it expires.
		f.lost += int64(dg.frags) + 1
		f.bytes -= dg.bytes - fragDatagramCost
		dg.dead, dg.parts, dg.bytes, dg.frags, dg.frames = true, nil, fragDatagramCost, 0, nil
		return nil, 0, false
	}
	cost := len(fr.data) + fragPartCost
	limit := f.maxBytes
	if limit <= 0 {
		limit = DefaultMaxFragmentMemory
	}
	for int64(f.bytes+cost) > limit && len(f.order) > 0 && f.order[0] != dg {
		f.drop(f.order[0])
	}
	if int64(f.bytes+cost) > limit {
		// Alone beyond the bound: give the datagram up.
		f.lost += int64(dg.frags) + 1
		f.remove(dg)
		return nil, 0, false
	}
	if !fr.more {
		dg.end = fr.off + len(fr.data)
	}
	dg.parts = append(dg.parts, fragPart{off: fr.off, data: slices.Clone(fr.data)})
	dg.frames = append(dg.frames, fr.frames...)
	dg.bytes += cost
	dg.frags++
	f.bytes += cost
	if dg.end < 0 {
		return nil, 0, false
	}
	// Complete when the parts, by offset, cover [0, end) without a hole.
	slices.SortStableFunc(dg.parts, func(a, b fragPart) int { return a.off - b.off })
	covered := 0
	for _, p := range dg.parts {
		if p.off > covered {
			return nil, 0, false
		}
		covered = max(covered, p.off+len(p.data))
	}
	if covered < dg.end {
		return nil, 0, false
	}
	// Overlaps must repeat the bytes already there (a duplicate
	// fragment): a datagram two of whose fragments overlap with different
	// bytes is discarded whole, as Linux (4.19+) and RFC 5722 (IPv6) have
	// receivers do, since which copy a receiver keeps differs between
	// systems (the overlapping-fragment evasions). Its bytes become a gap
	// of the TCP stream, unless a retransmission fills it.
	f.out = slices.Grow(f.out[:0], dg.end)[:dg.end]
	covered = 0
	for _, p := range dg.parts {
		d := p.data[:max(0, min(len(p.data), dg.end-p.off))]
		if n := min(covered-p.off, len(d)); n > 0 && !bytes.Equal(d[:n], f.out[p.off:p.off+n]) {
			f.lost += int64(dg.frags)
			f.conflicts += int64(dg.frags)
			f.remove(dg)
			return nil, 0, false
		}
		if p.off+len(d) > covered {
			copy(f.out[covered:p.off+len(d)], d[covered-p.off:])
			covered = p.off + len(d)
		}
	}
	f.frames = append(f.frames[:0], dg.frames...)
	slices.Sort(f.frames)
	f.frames = slices.Compact(f.frames)
	f.remove(dg)
	return f.out, dg.frags, true
}

// expire gives up the datagrams whose first fragment came before cut.
func (f *defragmenter) expire(cut time.Time) {
	for len(f.order) > 0 && f.order[0].first.Before(cut) {
		f.drop(f.order[0])
	}
}

// dropAll gives up every datagram still waiting (the end of input).
func (f *defragmenter) dropAll() {
	for len(f.order) > 0 {
		f.drop(f.order[0])
	}
}

// drop gives up an incomplete datagram.
func (f *defragmenter) drop(dg *fragDatagram) {
	f.lost += int64(dg.frags)
	f.remove(dg)
}

// takeConflicts returns the fragments given up since the last call
// because their datagram's fragments overlap with different bytes (they
// are counted by takeLost too).
func (f *defragmenter) takeConflicts() int64 {
	n := f.conflicts
	f.conflicts = 0
	return n
}

// takeLost returns the fragments lost since the last call.
func (f *defragmenter) takeLost() int64 {
	n := f.lost
	f.lost = 0
	return n
}

func (f *defragmenter) remove(dg *fragDatagram) {
	f.bytes -= dg.bytes
	delete(f.pending, dg.key)
	if i := slices.Index(f.order, dg); i >= 0 {
		f.order = slices.Delete(f.order, i, i+1)
	}
}
