package reassembly

import (
	"container/heap"
	"slices"
	"time"

	gpr "github.com/gopacket/gopacket/reassembly"
)

// Holding an acknowledged hole. A segment that acknowledges bytes of its
// peer's direction not captured yet is most often a sign of loss (the
// capture missed them), but not always: in a capture merged from two
// capture points (mergecap of a client's and a broker's capture, whose
// clocks differ by a few hundred microseconds), in one taken on several
// NIC queues or CPUs, or on a bonded link, a broker's response can be
// written before the request it answers. Giving the hole up at once made
// the request a gap and its response an orphan.
//
// So the hole is held: the direction whose bytes were acknowledged (the
// hole's) keeps waiting for them, and the handler calls of the other
// direction (the response's bytes, its gaps) are held back in order, so
// that the handler sees the request first, as it was sent. Each higher
// acknowledgement seen is a mark: the calls made after it wait for the
// bytes it acknowledged, no more (a client pipelining requests through a
// skewed merge is always behind its broker's latest acknowledgement, and
// its responses still go out as their requests arrive). A mark ends
//   - when the hole's direction reaches its sequence number (the late
//     segments arrived): the calls held behind it are made, in order;
//   - after Options.ReorderWindow of capture time, or holdPackets packets
//     of the connection, whichever comes first: the hole is given up up to
//     it as before (a Gap, stamped with the time the acknowledgement was
//     seen), then its held calls are made;
//   - when the held calls would pass Options.MaxHeldBytes (all connections
//     together): every mark of the connection is given up then;
//   - when the connection closes (all of them).
//
// A direction whose first packet (its SYN too) comes after its peer's
// acknowledgement of its bytes is waited for the same way, once a
// connection: the hold ends when it starts past them (a capture that
// began mid-stream) or reaches them.
//
// A segment of the hole's direction past the acknowledged bytes does not
// end the hold: on several NIC queues a sender's own segments are written
// out of order too (the assembler buffers it behind the hole, as any).
//
// A connection holds one direction at a time: a segment of the held
// direction that acknowledges bytes its peer has not sent yet gives its own
// hole up at once (its Gap is held with its other calls, in order).

// DefaultReorderWindow is Options.ReorderWindow's default: much more than
// the clock skew of two capture points synchronised by NTP or PTP on one
// network, or the reordering of a multi-queue NIC (microseconds), and
// still soon enough that a hole really lost is reported promptly.
const DefaultReorderWindow = 10 * time.Millisecond

// DefaultMaxHeldBytes is Options.MaxHeldBytes's default.
const DefaultMaxHeldBytes = 16 << 20

// holdPackets bounds a mark in packets of its connection: a capture whose
// timestamps stand still (or a hostile one) gives its hole up all the
// same.
const holdPackets = 256

// heldEventCost is what a held call costs besides its bytes (its event
// and its share of the slices holding it), heldMarkCost what a mark
// costs: both count against Options.MaxHeldBytes.
const (
	heldEventCost = 160
	heldMarkCost  = 48
)

// holdState is a connection's hold (see above).
type holdState struct {
	on  bool
	dir Dir          // the direction whose acknowledged bytes are awaited
	ack gpr.Sequence // the highest acknowledgement of them seen (the last mark's)
	// marks are the acknowledgements awaited, in order, each with the
	// calls held behind it (from events[first] to the next mark's first).
	marks []holdMark
	// events are the held calls of the other direction, in order; the
	// bytes of their data in arena. cost is what they and the marks count
	// against Options.MaxHeldBytes.
	events []event
	arena  []byte
	cost   int64
}

// holdMark is one acknowledgement awaited.
type holdMark struct {
	ack   gpr.Sequence
	at    time.Time // capture time it was seen
	pkts  int       // the connection's Stats.Packets then
	first int       // the first of hs.events held behind it
}

// holding reports whether the calls of direction d of s are held.
func (r *runner) holding(s *stream, d Dir) bool {
	return s.hold.on && s.hold.dir != d
}

// holdEvent holds e (its data is data) behind the last mark.
func (r *runner) holdEvent(s *stream, e event, data []byte) {
	hs := &s.hold
	if len(data) > 0 {
		e.start = len(hs.arena)
		hs.arena = append(hs.arena, data...)
		e.end = len(hs.arena)
	}
	hs.events = append(hs.events, e)
	r.charge(s, int64(len(data))+heldEventCost)
}

func (r *runner) charge(s *stream, n int64) {
	s.hold.cost += n
	r.heldBytes += n
}

// holdAcked starts the hold of direction d of s up to ack, or adds a mark
// to it, and reports whether the hole is held (else it is to be given up
// now). The caller gives it up when that passed Options.MaxHeldBytes
// (overBudget).
func (r *runner) holdAcked(s *stream, d Dir, ack gpr.Sequence) bool {
	if r.reorderWindow < 0 {
		return false
	}
	hs := &s.hold
	mark := holdMark{ack: ack, at: r.now, pkts: s.conn.Stats.Packets, first: len(hs.events)}
	if hs.on {
		if hs.dir != d {
			return false // one direction at a time
		}
		if hs.ack.Difference(ack) > 0 {
			hs.ack = ack
			hs.marks = append(hs.marks, mark)
			r.charge(s, heldMarkCost)
		}
		return true
	}
	h := &s.half[d]
	if h.started && h.cutCovers(h.next, ack) {
		return false // left out on purpose: will not come
	}
	hs.on, hs.dir, hs.ack = true, d, ack
	hs.marks = append(hs.marks[:0], mark)
	r.charge(s, heldMarkCost)
	heap.Push(&r.holds, s)
	return true
}

// overBudget reports whether the held calls passed Options.MaxHeldBytes.
func (r *runner) overBudget() bool {
	return r.maxHeld > 0 && r.heldBytes > r.maxHeld
}

// reached reports whether direction h reached ack: its next byte, or its
// FIN, or its end.
func reached(h *halfState, ack gpr.Sequence) bool {
	if !h.started {
		return false
	}
	if h.closed {
		return true
	}
	if h.finSeen && h.finEnd.Difference(ack) > 0 {
		ack = h.finEnd
	}
	return h.next.Difference(ack) <= 0
}

// releaseReached makes the calls held behind the marks the hole's
// direction reached; when it reached them all, the hold ends.
func (r *runner) releaseReached(s *stream) {
	hs := &s.hold
	if !hs.on {
		return
	}
	h := &s.half[hs.dir]
	n := 0
	for n < len(hs.marks) && reached(h, hs.marks[n].ack) {
		n++
	}
	r.releaseMarks(s, n)
}

// releaseBefore makes the calls held behind the marks of s at or before
// seq.
func (r *runner) releaseBefore(s *stream, seq gpr.Sequence) {
	hs := &s.hold
	n := 0
	for n < len(hs.marks) && hs.marks[n].ack.Difference(seq) >= 0 {
		n++
	}
	r.releaseMarks(s, n)
}

// releaseMarks ends the first n marks of s's hold, making the calls held
// behind them; all of them ends the hold.
func (r *runner) releaseMarks(s *stream, n int) {
	hs := &s.hold
	if n == 0 {
		return
	}
	if n >= len(hs.marks) {
		r.release(s)
		return
	}
	upto := hs.marks[n].first
	r.dispatchHeld(s, upto)
	hs.marks = slices.Delete(hs.marks, 0, n)
	for i := range hs.marks {
		hs.marks[i].first -= upto
	}
	r.charge(s, -int64(n)*heldMarkCost)
	if s.holdIdx >= 0 {
		heap.Fix(&r.holds, s.holdIdx) // its first mark is a later one
	}
}

// dispatchHeld makes the first n held calls of s (or, during a flush,
// queues them after the flush's own calls of s), in order, and forgets
// them.
func (r *runner) dispatchHeld(s *stream, n int) {
	hs := &s.hold
	var freed int64
	for i := range n {
		e := hs.events[i]
		data := hs.arena[e.start:e.end]
		freed += int64(len(data)) + heldEventCost
		if r.deferring {
			if e.kind == evData {
				e.start = len(r.arena)
				r.arena = append(r.arena, data...)
				e.end = len(r.arena)
			}
			r.events = append(r.events, e)
			continue
		}
		e.ch.Data = data
		r.dispatch(&e)
	}
	r.charge(s, -freed)
	if n == len(hs.events) {
		clear(hs.events)
		hs.events, hs.arena = hs.events[:0], hs.arena[:0]
		return
	}
	// What is left moves to the front (at most what the budget holds).
	base := len(hs.arena)
	if k := slices.IndexFunc(hs.events[n:], func(e event) bool { return e.end > e.start }); k >= 0 {
		base = hs.events[n+k].start
	}
	rest := copy(hs.events, hs.events[n:])
	clear(hs.events[rest:])
	hs.events = hs.events[:rest]
	for i := range hs.events {
		if hs.events[i].end > hs.events[i].start {
			hs.events[i].start -= base
			hs.events[i].end -= base
		}
	}
	hs.arena = hs.arena[:copy(hs.arena, hs.arena[base:])]
}

// release ends the hold of s: its held calls are made, in order.
func (r *runner) release(s *stream) {
	hs := &s.hold
	if !hs.on {
		return
	}
	r.dispatchHeld(s, len(hs.events))
	hs.on = false
	if s.holdIdx >= 0 {
		heap.Remove(&r.holds, s.holdIdx)
	}
	r.heldBytes -= hs.cost
	hs.cost = 0
	hs.marks = hs.marks[:0]
	if cap(hs.arena) > 64<<10 || cap(hs.events) > 256 || cap(hs.marks) > 64 {
		hs.events, hs.arena, hs.marks = nil, nil, nil // let a large one go
	}
}

// giveUpFront gives up the hole s holds up to its first mark, as
// skipAckedHoles did without a hold, then makes the calls held behind it.
func (r *runner) giveUpFront(s *stream) {
	hs := &s.hold
	if !hs.on {
		return
	}
	m := hs.marks[0]
	if !s.done && s.half[hs.dir].started && !reached(&s.half[hs.dir], m.ack) {
		r.giveUpAcked(s, hs.dir, m.ack, m.at)
	}
	front := func() bool { return hs.on && hs.marks[0] == m }
	if front() {
		r.releaseReached(s)
	}
	if front() {
		r.releaseMarks(s, 1) // not reached (not acknowledged in full): made all the same
	}
}

// giveUpAll gives up the hole s holds up to its last mark, then makes
// the held calls.
func (r *runner) giveUpAll(s *stream) {
	hs := &s.hold
	if !hs.on {
		return
	}
	m := hs.marks[0]
	if !s.done && s.half[hs.dir].started && !reached(&s.half[hs.dir], hs.ack) {
		r.giveUpAcked(s, hs.dir, hs.ack, m.at)
	}
	r.release(s)
}

// expired reports whether m is past Options.ReorderWindow at capture time
// now, or past holdPackets packets of s.
func (r *runner) expired(s *stream, m *holdMark, now time.Time) bool {
	return now.Sub(m.at) > r.reorderWindow || s.conn.Stats.Packets-m.pkts > holdPackets
}

// expireHolds gives up the marks past Options.ReorderWindow at capture
// time now, the oldest first (r.holds is a heap by first mark's time, so
// that each packet costs no scan of every connection holding: 20,000
// connections holding, then 100,000 packets at one timestamp, took 70 s
// when each packet looked at them all), and those of last, the
// connection of the packet before, past holdPackets packets (only its
// count changed since).
func (r *runner) expireHolds(now time.Time, last *stream) {
	if last != nil {
		for hs := &last.hold; hs.on && !last.done && r.expired(last, &hs.marks[0], now); {
			r.giveUpFront(last)
		}
	}
	for len(r.holds) > 0 {
		s := r.holds[0]
		if s.done {
			r.release(s)
			continue
		}
		if !r.expired(s, &s.hold.marks[0], now) {
			return
		}
		r.giveUpFront(s)
	}
}

// holdQueue is the connections holding, a heap (container/heap) by the
// capture time of their first mark; each stream's holdIdx is its index,
// -1 when not in it.
type holdQueue []*stream

func (q holdQueue) Len() int { return len(q) }
func (q holdQueue) Less(i, j int) bool {
	return q[i].hold.marks[0].at.Before(q[j].hold.marks[0].at)
}
func (q holdQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].holdIdx, q[j].holdIdx = i, j
}
func (q *holdQueue) Push(x any) {
	s := x.(*stream)
	s.holdIdx = len(*q)
	*q = append(*q, s)
}
func (q *holdQueue) Pop() any {
	old := *q
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	s.holdIdx = -1
	return s
}

// holdBudget gives up the hold of s before a segment of plen bytes of
// its held direction would take the held calls past Options.MaxHeldBytes.
func (r *runner) holdBudget(s *stream, d Dir, plen int) {
	hs := &s.hold
	if !hs.on || plen == 0 || r.maxHeld <= 0 || d == hs.dir {
		return
	}
	if r.heldBytes+int64(plen)+heldEventCost > r.maxHeld {
		r.giveUpAll(s)
	}
}
