package reassembly

import (
	"bytes"

	gpr "github.com/gopacket/gopacket/reassembly"
)

// Delivered bytes kept for comparison (conflict.go): each direction keeps
// the last bytes it delivered in a window, a ring indexed by sequence
// number, so that a retransmission is compared with them byte for byte
// whatever its segmentation: one that covers part of a delivered piece,
// spans several, or differs in the middle of a long one. A window starts
// at minWindow bytes and grows, by doubling, up to maxWindow only as far
// as its bytes could still be resent: those the peer has not
// acknowledged, or all it may once the direction retransmitted or when
// no acknowledgement of the peer was seen (windowWant). Each keeps the
// packets that carried its pieces, 16 bytes a piece for at most one
// piece in 64 bytes (at least 16): past that its oldest bytes go. All
// windows together cost at most Options.MaxRecentBytes: a window grows
// only into what is left of it, and a direction that has none takes the
// window of the direction that delivered least recently (LRU), which
// then compares as without one (conflict.go) until it delivers again. A window starts anew after a gap. Each byte delivered
// is copied once into its window: on a capture of 1400-byte segments
// that cost less than the noise of kwire read (docs/performance.md).

const (
	minWindow = 4 << 10
	maxWindow = 64 << 10
	// spareWindows is how many released windows of minWindow bytes are
	// kept for reuse (not counted: about 140 KiB).
	spareWindows = 32
)

// DefaultMaxRecentBytes is Options.MaxRecentBytes's default.
const DefaultMaxRecentBytes = 16 << 20

// winPiece is where a piece delivered into a window starts and the
// packet that carried it.
type winPiece struct {
	seq   gpr.Sequence
	frame int64
}

// window is the last n bytes delivered in one direction, ending at
// sequence number end: the byte at sequence number x is buf[x&mask].
type window struct {
	buf   []byte
	mask  uint32
	n     int
	end   gpr.Sequence
	valid bool // end is set: a byte was kept
	// pcs is a ring of the pieces kept, oldest at pcs[ph], pn of them:
	// the first may start before the window's first byte.
	pcs        []winPiece
	ph, pn     int
	owner      *halfState
	prev, next *window // the runner's LRU list, most recent first
}

// cost is what w counts against Options.MaxRecentBytes.
func (w *window) cost() int64 { return int64(len(w.buf)) + int64(len(w.pcs))*16 }

func newWindow(size int) *window {
	return &window{buf: make([]byte, size), mask: uint32(size - 1), pcs: make([]winPiece, max(size/64, 16))}
}

func windowCost(size int) int64 { return int64(size) + int64(max(size/64, 16))*16 }

// windows is the runner's LRU list of windows and what they cost.
type windows struct {
	head, tail *window
	bytes, max int64 // max 0: no windows
	spare      []*window
}

func (l *windows) unlink(w *window) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.prev, w.next = nil, nil
}

func (l *windows) pushFront(w *window) {
	w.next = l.head
	if l.head != nil {
		l.head.prev = w
	} else {
		l.tail = w
	}
	l.head = w
}

// touch makes w the most recently used.
func (l *windows) touch(w *window) {
	if l.head != w {
		l.unlink(w)
		l.pushFront(w)
	}
}

// release takes w from its owner and the list.
func (l *windows) release(w *window) {
	l.unlink(w)
	l.bytes -= w.cost()
	w.owner.win = nil
	w.owner = nil
	if len(w.buf) == minWindow && len(l.spare) < spareWindows {
		l.spare = append(l.spare, w)
	}
}

// makeRoom releases the least recently used windows until need more
// bytes fit; it reports whether they do.
func (l *windows) makeRoom(need int64) bool {
	for l.bytes+need > l.max {
		if l.tail == nil {
			return false
		}
		l.release(l.tail)
	}
	return true
}

// acquire gives h a window of minWindow bytes, nil when none fits.
func (l *windows) acquire(h *halfState) *window {
	c := windowCost(minWindow)
	if l.max < c || !l.makeRoom(c) {
		return nil
	}
	var w *window
	if k := len(l.spare); k > 0 {
		w = l.spare[k-1]
		l.spare = l.spare[:k-1]
		w.n, w.valid, w.ph, w.pn = 0, false, 0, 0
	} else {
		w = newWindow(minWindow)
	}
	w.owner = h
	h.win = w
	l.bytes += c
	l.pushFront(w)
	return w
}

// grow makes w size bytes when that fits in what the budget has left,
// and reports whether it did: the bytes and pieces kept stay. It takes
// no other window: directions taking turns to grow into each other's
// room (thousands delivering at once, none acknowledged) allocated a
// window at almost every delivery.
func (l *windows) grow(w *window, size int) bool {
	extra := windowCost(size) - w.cost()
	if l.bytes+extra > l.max {
		return false
	}
	nw := newWindow(size)
	start := w.end.Add(-w.n)
	for i := 0; i < w.n; {
		x := uint32(start.Add(i))
		k := copy(nw.buf[x&nw.mask:], w.buf[x&w.mask:min(int(x&w.mask)+w.n-i, len(w.buf))])
		i += k
	}
	for i := range w.pn {
		nw.pcs[i] = w.pcs[(w.ph+i)%len(w.pcs)]
	}
	w.buf, w.mask, w.pcs, w.ph = nw.buf, nw.mask, nw.pcs, 0
	l.bytes += extra
	return true
}

// keepBytes copies b, delivered at seq by packet frame, into h's window,
// grown when it is full up to want bytes (windowWant).
func (l *windows) keepBytes(h *halfState, seq gpr.Sequence, b []byte, frame int64, want int) {
	if l.max == 0 || len(b) == 0 {
		return
	}
	w := h.win
	if w == nil {
		if w = l.acquire(h); w == nil {
			return
		}
	} else {
		l.touch(w)
	}
	if !w.valid || w.end != seq {
		w.n, w.ph, w.pn, w.valid = 0, 0, 0, true // a gap: start anew
	}
	if need := min(w.n+len(b), want, maxWindow); need > len(w.buf) {
		size := len(w.buf)
		for size < need {
			size *= 2
		}
		l.grow(w, size)
	}
	if w.pn == len(w.pcs) {
		w.ph = (w.ph + 1) % len(w.pcs)
		w.pn--
		// The bytes before the oldest piece left have no packet.
		w.n = min(w.n, w.pcs[w.ph].seq.Difference(w.end))
	}
	w.pcs[(w.ph+w.pn)%len(w.pcs)] = winPiece{seq: seq, frame: frame}
	w.pn++
	end := seq.Add(len(b))
	if len(b) > len(w.buf) {
		seq, b = seq.Add(len(b)-len(w.buf)), b[len(b)-len(w.buf):]
	}
	x := uint32(seq) & w.mask
	k := copy(w.buf[x:], b)
	copy(w.buf, b[k:])
	w.end = end
	w.n = min(w.n+len(b), len(w.buf))
	// Pieces wholly before the window's first byte.
	start := w.end.Add(-w.n)
	for w.pn > 1 && start.Difference(w.pcs[(w.ph+1)%len(w.pcs)].seq) <= 0 {
		w.ph = (w.ph + 1) % len(w.pcs)
		w.pn--
	}
}

// windowWant is how many bytes direction d's window should hold once n
// more are delivered: those its peer has not acknowledged (a sender
// resends only these, or, spuriously, those acknowledged last), all it
// may once d retransmitted or when no acknowledgement was seen.
func (s *stream) windowWant(d Dir, n int) int {
	h, peer := &s.half[d], &s.half[1-d]
	if h.resent || !peer.ackSeen {
		return maxWindow
	}
	if in := peer.maxAck.Difference(h.next.Add(n)); in > 0 {
		return min(in, maxWindow)
	}
	return 0
}

// span returns the part of the window from sequence number seq, at most
// n bytes, that lies in one run of buf.
func (w *window) span(seq gpr.Sequence, n int) []byte {
	x := uint32(seq) & w.mask
	return w.buf[x:min(int(x)+n, len(w.buf))]
}

// differ compares b, a retransmission's bytes at seq, with the bytes of
// the window at the same sequence numbers. It returns the sequence
// number of the first byte that differs, and the range it compared
// ([from, to) of b, from == to when none).
func (w *window) differ(seq gpr.Sequence, b []byte) (at gpr.Sequence, diff bool, from, to int) {
	if w == nil || !w.valid || w.n == 0 {
		return 0, false, 0, 0
	}
	start := w.end.Add(-w.n)
	from = max(0, seq.Difference(start))
	to = min(len(b), seq.Difference(w.end))
	for i := from; i < to; {
		kept := w.span(seq.Add(i), to-i)
		got := b[i : i+len(kept)]
		if !bytes.Equal(got, kept) {
			for j := range got {
				if got[j] != kept[j] {
					return seq.Add(i + j), true, from, to
				}
			}
		}
		i += len(kept)
	}
	return 0, false, from, max(from, to)
}

// pieceAt returns the start, length and packet of the piece kept that
// holds the byte at sequence number x.
func (w *window) pieceAt(x gpr.Sequence) (seq gpr.Sequence, n int, frame int64) {
	end := w.end
	for i := w.pn - 1; i >= 0; i-- {
		p := w.pcs[(w.ph+i)%len(w.pcs)]
		if p.seq.Difference(x) >= 0 || i == 0 {
			return p.seq, p.seq.Difference(end), p.frame
		}
		end = p.seq
	}
	return x, 0, 0
}
