package reassembly

import (
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
// direction (the response's bytes, its gaps, its close) are held back in
// order, so that the handler sees the request first, as it was sent. The
// hold ends
//   - when the hole's direction reaches the acknowledged sequence number
//     (the late segments arrived): the held calls are made, in order;
//   - after Options.ReorderWindow of capture time, or holdPackets packets
//     of the connection, whichever comes first: the hole is given up as
//     before (a Gap, stamped with the time the acknowledgement was seen),
//     then the held calls are made;
//   - when a segment of the hole's direction starts at or past the
//     acknowledged sequence number: it was sent after the missing bytes,
//     so they were lost, not late (the next request after a lost one);
//   - when the held calls would pass Options.MaxHeldBytes (all connections
//     together): the hole is given up then;
//   - when the connection closes.
//
// A direction whose first packet (its SYN too) comes after its peer's
// acknowledgement of its bytes is waited for the same way, once a
// connection: the hold ends when it starts past them (a capture that
// began mid-stream) or reaches them.
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

// holdPackets bounds a hold in packets of its connection: a capture whose
// timestamps stand still (or a hostile one) gives its hole up all the
// same.
const holdPackets = 256

// heldEventCost is what a held call costs besides its bytes: its event
// and its share of the slices holding it.
const heldEventCost = 160

// holdState is a connection's hold (see above).
type holdState struct {
	on    bool
	dir   Dir          // the direction whose acknowledged bytes are awaited
	ack   gpr.Sequence // the highest acknowledgement of them seen
	since time.Time    // capture time of the first acknowledgement
	pkts  int          // the connection's Stats.Packets then
	// events are the held calls of the other direction, in order; the
	// bytes of their data in arena. cost is what they count against
	// Options.MaxHeldBytes.
	events []event
	arena  []byte
	cost   int64
}

// holding reports whether the calls of direction d of s are held.
func (r *runner) holding(s *stream, d Dir) bool {
	return s.hold.on && s.hold.dir != d
}

// holdEvent holds e (its data is data) until the hold ends.
func (r *runner) holdEvent(s *stream, e event, data []byte) {
	hs := &s.hold
	if len(data) > 0 {
		e.start = len(hs.arena)
		hs.arena = append(hs.arena, data...)
		e.end = len(hs.arena)
	}
	hs.events = append(hs.events, e)
	c := int64(len(data)) + heldEventCost
	hs.cost += c
	r.heldBytes += c
}

// holdAcked starts or extends the hold of direction d of s up to ack, and
// reports whether the hole is held (else it is to be given up now).
func (r *runner) holdAcked(s *stream, d Dir, ack gpr.Sequence) bool {
	if r.reorderWindow < 0 {
		return false
	}
	hs := &s.hold
	if hs.on {
		if hs.dir != d {
			return false // one direction at a time
		}
		if hs.ack.Difference(ack) > 0 {
			hs.ack = ack
		}
		return true
	}
	h := &s.half[d]
	if h.started && h.cutCovers(h.next, ack) {
		return false // left out on purpose: will not come
	}
	if r.maxHeld > 0 && r.heldBytes+heldEventCost > r.maxHeld {
		return false
	}
	*hs = holdState{on: true, dir: d, ack: ack, since: r.now, pkts: s.conn.Stats.Packets, events: hs.events[:0], arena: hs.arena[:0]}
	r.holds = append(r.holds, s)
	return true
}

// holdFilled reports whether the hole s holds is filled (or can no longer
// be): its direction reached the acknowledged sequence number, its FIN, or
// was closed.
func (s *stream) holdFilled() bool {
	hs := &s.hold
	h := &s.half[hs.dir]
	if h.closed {
		return true
	}
	if !h.started {
		return false
	}
	end := hs.ack
	if h.finSeen && h.finEnd.Difference(end) > 0 {
		end = h.finEnd
	}
	return h.next.Difference(end) <= 0
}

// release ends the hold of s: its held calls are made (or, during a
// flush, queued after the flush's own calls of s), in order.
func (r *runner) release(s *stream) {
	hs := &s.hold
	if !hs.on {
		return
	}
	hs.on = false
	if i := slices.Index(r.holds, s); i >= 0 {
		r.holds = slices.Delete(r.holds, i, i+1)
	}
	r.heldBytes -= hs.cost
	for i := range hs.events {
		e := hs.events[i]
		data := hs.arena[e.start:e.end]
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
	clear(hs.events)
	hs.events, hs.arena, hs.cost = hs.events[:0], hs.arena[:0], 0
	if cap(hs.arena) > 64<<10 || cap(hs.events) > 256 {
		hs.events, hs.arena = nil, nil // let a large one go
	}
}

// giveUpHold gives up the hole s holds, as skipAckedHoles did without a
// hold, then makes the held calls.
func (r *runner) giveUpHold(s *stream) {
	hs := &s.hold
	if !hs.on {
		return
	}
	if !s.done && s.half[hs.dir].started && !s.holdFilled() {
		r.giveUpAcked(s, hs.dir, hs.ack, hs.since)
	}
	r.release(s)
}

// expireHolds gives up the holds past Options.ReorderWindow at capture
// time now, or past holdPackets packets of their connection.
func (r *runner) expireHolds(now time.Time) {
	for i := 0; i < len(r.holds); {
		s := r.holds[i]
		hs := &s.hold
		if s.done || now.Sub(hs.since) > r.reorderWindow || s.conn.Stats.Packets-hs.pkts > holdPackets {
			r.giveUpHold(s) // removes it from r.holds
			if i < len(r.holds) && r.holds[i] == s {
				i++ // not expected
			}
			continue
		}
		i++
	}
}

// holdBudget gives up the hold of s before a segment of plen bytes of
// its held direction would take the held calls past Options.MaxHeldBytes.
func (r *runner) holdBudget(s *stream, d Dir, plen int) {
	hs := &s.hold
	if !hs.on || plen == 0 || r.maxHeld <= 0 || d == hs.dir {
		return
	}
	if r.heldBytes+int64(plen)+heldEventCost > r.maxHeld {
		r.giveUpHold(s)
	}
}

// holdPassed gives up the hole s holds before a segment of plen bytes of
// its direction d starting at seq, at or past the acknowledged bytes: the
// sender sent them before it, from the same capture point; they were lost.
func (r *runner) holdPassed(s *stream, d Dir, plen int, seq gpr.Sequence) {
	hs := &s.hold
	if hs.on && d == hs.dir && plen > 0 && hs.ack.Difference(seq) >= 0 {
		r.giveUpHold(s)
	}
}
