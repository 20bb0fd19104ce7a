package dissect

import (
	"time"

	"github.com/kwire/kwire/reassembly"
)

// TCP timing of frames: the Dissector is a reassembly.SegmentHandler; it
// keeps the last few segment marks of each direction (retransmissions,
// out-of-order arrivals, zero windows, full windows) and, per frame, the
// capture times of the packets that carried it, so that every Frame says
// how its bytes travelled (Frame.TCP) and a slow exchange can be split
// between the network and the broker without looking at packets again.
//
// Attribution is at packet granularity: a frame ends inside the packet
// that completed it, and a mark counts for a frame when it covers bytes
// before the end of that packet and falls in the frame's time window (a
// request's: from its first byte to its response's first byte, or to its
// exchange's end; a response's: from its first byte to its last). A
// retransmission of an earlier frame's bytes inside that window counts
// too: TCP delivers in order, so it held this frame back as well.

// TCPTiming is what the TCP segments say about how one frame travelled.
// Zero values mean nothing was seen.
type TCPTiming struct {
	// Earliest and Latest are the earliest and latest capture times of
	// the packets that first carried the frame's bytes. Earliest is
	// before Frame.Time, or Latest after Frame.End, when bytes arrived
	// out of order: later bytes first, the ones before them lost before
	// the capture point and sent again.
	Earliest, Latest time.Time
	// Retransmissions counts the segments of the frame's direction seen
	// again within its window (see above); LastRetransmission is the
	// latest one's capture time and RetransmissionFrame its packet.
	Retransmissions     int
	LastRetransmission  time.Time
	RetransmissionFrame int64
	// OutOfOrder counts its direction's segments that arrived ahead of a
	// hole within the window.
	OutOfOrder int
	// WindowFull counts its direction's segments that filled the
	// receiver's advertised window within the window (the sender had to
	// wait for an ACK); ZeroWindows the zero receive windows the
	// receiver advertised then (it was not reading), ZeroWindowAt the
	// first one's capture time.
	WindowFull, ZeroWindows int
	ZeroWindowAt            time.Time
	// Uncaptured counts the packets its sender sent within the window,
	// before bytes of the frame, that the capture does not hold, told by
	// their IPv4 identifications (reassembly.SegUncaptured);
	// UncapturedSince is the capture time of the sender's packet before
	// the earliest of them (they left after it). A response whose first
	// copy was lost beyond the capture point arrives once, as its
	// retransmission, with such a gap before it.
	Uncaptured      int
	UncapturedSince time.Time
}

// TCPOf returns f's TCP timing: f.TCP, or when it is nil (nothing to say)
// its own packet times.
func (f *Frame) TCPOf() TCPTiming {
	if f.TCP != nil {
		return *f.TCP
	}
	return TCPTiming{Earliest: f.Time, Latest: f.End}
}

// maxMarks bounds the segment marks kept per direction of a connection:
// the attribution needs those of the exchanges in flight.
const maxMarks = 32

// tcpState is a connection's segment marks and per-frame packet times.
type tcpState struct {
	dir [2]tcpDir
	// The first FIN or RST: who ended the connection, and when.
	closer   reassembly.Dir
	closed   bool
	closedAt time.Time
}

type tcpDir struct {
	marks []reassembly.Segment // the last maxMarks, oldest first (a ring once full)
	next  int                  // the oldest's index once full
	// end is the stream offset after the packet being fed, when endSet
	// (not for bytes replayed after the connection was recognised, nor
	// for TLS plaintext).
	end    int64
	endSet bool
	// Packet times since the packet that completed the last frame
	// (lastFrame, at lastTime): the bytes of the next frame.
	lo, hi    time.Time
	lastFrame int64
	lastTime  time.Time
}

// Segment implements reassembly.SegmentHandler.
func (d *Dissector) Segment(rc *reassembly.Conn, dir reassembly.Dir, s reassembly.Segment) {
	c := d.conn(rc)
	t := &c.tcp
	switch s.Kind {
	case reassembly.SegFIN, reassembly.SegRST:
		if !t.closed {
			t.closed, t.closer, t.closedAt = true, dir, s.Time
		}
		return
	}
	td := &t.dir[dir]
	if len(td.marks) < maxMarks {
		td.marks = append(td.marks, s)
		return
	}
	td.marks[td.next] = s
	td.next = (td.next + 1) % maxMarks
}

// streamEnd says that the next packet fed in direction dir ends at
// stream offset end (reassembly's Chunk.Offset plus its length).
func (t *tcpState) streamEnd(dir reassembly.Dir, end int64) {
	t.dir[dir].end, t.dir[dir].endSet = end, true
}

// packet records a packet of direction dir about to be fed to its
// splitter (its stream end set by streamEnd just before, or unknown).
func (t *tcpState) packet(dir reassembly.Dir, at time.Time) {
	td := &t.dir[dir]
	if !td.endSet {
		td.end = -1
	}
	td.endSet = false
	if td.lo.IsZero() || at.Before(td.lo) {
		td.lo = at
	}
	if at.After(td.hi) {
		td.hi = at
	}
}

// frameDone sets fr's packet times when a splitter of direction dir
// completes it; first is its first byte's packet.
func (t *tcpState) frameDone(dir reassembly.Dir, fr *Frame, first mark) {
	td := &t.dir[dir]
	lo, hi := td.lo, td.hi
	if first.frame == td.lastFrame && !td.lastTime.IsZero() {
		// The frame began in the packet that completed the one before.
		lo, hi = earlier(lo, td.lastTime), later(hi, td.lastTime)
	}
	lo, hi = earlier(lo, fr.Time), later(hi, fr.End)
	if !lo.Equal(fr.Time) || !hi.Equal(fr.End) {
		fr.TCP = &TCPTiming{Earliest: lo, Latest: hi}
	}
	fr.tcpEnd = td.end
	td.lastFrame, td.lastTime = fr.LastPacket, fr.End
	td.lo, td.hi = time.Time{}, time.Time{}
}

// gap forgets the packet times gathered in direction dir since the last
// completed frame, at a gap (bytes lost, not captured, given up, or left
// out by a cut file's writer): bytes before a gap belong to no frame
// completed after it (the frame they began is cut, or they were being
// skipped), so the next frame's TCPTiming.Earliest is after the gap.
// Kept, they made the frame after a gap look sent since the packet
// before it, and the broker's time on the frame the gap cut read as the
// next one's network time ("request sent over 252ms").
func (t *tcpState) gap(dir reassembly.Dir) {
	td := &t.dir[dir]
	td.lo, td.hi = time.Time{}, time.Time{}
	td.lastFrame, td.lastTime = 0, time.Time{}
}

func earlier(a, b time.Time) time.Time {
	if a.IsZero() || !b.IsZero() && b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// timing fills the TCP timing of ex's frames from its connection's
// marks, when ex is emitted; until is when its exchange ended (the
// capture time of the latest packet of its connection) for a request
// left unanswered.
func (c *conn) timing(ex *Exchange) {
	cl := c.client
	if req := ex.Request; req != nil {
		end := c.last
		if r := ex.Response; r != nil {
			end = earlier(r.Time, r.TCPOf().Earliest)
		}
		t := req.TCPOf()
		c.tcp.attribute(&t, cl, earlier(req.Time, t.Earliest), end, req.tcpEnd)
		req.setTCP(t)
		req.RTT = c.c.Stats.MinRTT[cl]
	}
	if resp := ex.Response; resp != nil {
		t := resp.TCPOf()
		c.tcp.attribute(&t, 1-cl, earlier(resp.Time, t.Earliest), later(resp.End, t.Latest), resp.tcpEnd)
		resp.setTCP(t)
		resp.RTT = c.c.Stats.MinRTT[1-cl]
	}
}

// setTCP keeps t as f's timing when it says more than f's packet times.
func (f *Frame) setTCP(t TCPTiming) {
	if f.TCP != nil {
		*f.TCP = t
		return
	}
	if t != (TCPTiming{Earliest: f.Time, Latest: f.End}) {
		f.TCP = new(TCPTiming) // only then: the common frame costs no allocation
		*f.TCP = t
	}
}

// attribute counts the marks that concern a frame of direction dir sent
// from `from` and awaited until `until` whose bytes end before offset end
// (-1 unknown: every offset).
func (t *tcpState) attribute(tt *TCPTiming, dir reassembly.Dir, from, until time.Time, end int64) {
	in := func(s *reassembly.Segment) bool {
		return !s.Time.Before(from) && !s.Time.After(until)
	}
	before := func(s *reassembly.Segment) bool { return end < 0 || s.Offset < end }
	for i := range t.dir[dir].marks {
		s := &t.dir[dir].marks[i]
		if !in(s) {
			continue
		}
		switch s.Kind {
		case reassembly.SegRetransmission:
			if before(s) {
				tt.Retransmissions++
				if s.Time.After(tt.LastRetransmission) {
					tt.LastRetransmission, tt.RetransmissionFrame = s.Time, s.Frame
				}
			}
		case reassembly.SegOutOfOrder:
			if before(s) {
				tt.OutOfOrder++
			}
		case reassembly.SegWindowFull:
			tt.WindowFull++
		case reassembly.SegUncaptured:
			if before(s) {
				if tt.Uncaptured == 0 || s.Since.Before(tt.UncapturedSince) {
					tt.UncapturedSince = s.Since
				}
				tt.Uncaptured += s.Len
			}
		}
	}
	for i := range t.dir[1-dir].marks {
		if s := &t.dir[1-dir].marks[i]; s.Kind == reassembly.SegZeroWindow && in(s) {
			if tt.ZeroWindows == 0 || s.Time.Before(tt.ZeroWindowAt) {
				tt.ZeroWindowAt = s.Time
			}
			tt.ZeroWindows++
		}
	}
}
