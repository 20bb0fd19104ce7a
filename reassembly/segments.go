package reassembly

import (
	"net/netip"
	"time"

	"github.com/gopacket/gopacket/layers"
	gpr "github.com/gopacket/gopacket/reassembly"
)

// TCP timing beside the byte streams: the segments that say something
// about how the bytes travelled (a retransmission, a segment that came
// ahead of a hole, a zero receive window, a sender that filled its peer's
// window, the first FIN or RST of a direction), reported to a Handler
// that implements SegmentHandler, and the round-trip time seen at the
// capture point (ConnStats.MinRTT). The dissector attaches them to the
// frames whose bytes they carried or delayed, so that a slow exchange can
// be split between the network and the peer (Wireshark's
// tcp.analysis.retransmission, .out_of_order, .zero_window,
// .window_full and .ack_rtt are the same observations).
//
// Nothing here changes what Data and Gap deliver, and a Handler that is
// not a SegmentHandler costs nothing more than the counters.

// SegmentKind says what a noteworthy TCP segment shows.
type SegmentKind uint8

// Segment kinds.
const (
	// SegRetransmission: the segment carries bytes of its direction that
	// were already delivered (all or some); Offset and Len are its
	// payload. Seen at the capture point, the first copy may still have
	// been lost beyond it.
	SegRetransmission SegmentKind = iota + 1
	// SegOutOfOrder: the segment arrived ahead of a hole (bytes before it
	// are missing); it is delivered once the hole is filled, with its own
	// capture time, or the hole becomes a Gap. The bytes that fill the
	// hole come later than the bytes after them: lost before the capture
	// point and sent again, or reordered.
	SegOutOfOrder
	// SegZeroWindow: the segment's sender advertises a zero receive
	// window (RFC 9293 section 3.8.6): the peer must stop sending until a
	// window update. Reported when the window drops to zero, not for
	// every segment while it stays there.
	SegZeroWindow
	// SegWindowFull: the segment's payload fills the receive window the
	// peer last advertised: its sender must wait for an ACK before it can
	// send more. Known only when both SYNs were captured (window
	// scaling, RFC 7323).
	SegWindowFull
	// SegFIN and SegRST: the first FIN, or a RST, of the direction: its
	// sender ends the connection.
	SegFIN
	SegRST
	// SegUncaptured: the segment's sender sent Len packets on the
	// connection just before it that the capture does not hold, told by
	// the IPv4 identification: a sender that numbers each connection's
	// packets one by one (Linux, for TCP with DF set) skipped Len numbers
	// since its previous packet, captured at Since. Lost beyond the
	// capture point (a segment dropped there is sent again, later), or
	// dropped by the capture itself. A direction's first gap is taken on
	// trust (a connection's first response may be the one lost); later
	// ones while its steps have mostly been one (idOtherRatio,
	// idGapRatio). Never after a packet larger than the peer's MSS, or
	// than the sender's own when its SYN announced less (a TSO/GSO packet
	// captured before segmentation takes one number a segment), nor when a
	// packet of the same host on another connection took a number inside
	// the gap (one counter for all its traffic, as Windows keeps; on a
	// capture of one connection such a counter cannot be told from loss).
	SegUncaptured
)

var segmentNames = [...]string{"", "retransmission", "out-of-order", "zero-window", "window-full", "fin", "rst", "uncaptured"}

// String names the kind ("retransmission", "zero-window").
func (k SegmentKind) String() string {
	if int(k) < len(segmentNames) {
		return segmentNames[k]
	}
	return "segment"
}

// Segment is one noteworthy TCP segment of a direction.
type Segment struct {
	Kind  SegmentKind
	Time  time.Time // capture time of the packet
	Frame int64     // its 1-based packet number
	// Offset is the position in the direction's stream (as Chunk.Offset
	// counts) of the segment's first payload byte, or of the next byte to
	// deliver when it carries none; Len is its payload length.
	Offset int64
	Len    int
	// Since is, for SegUncaptured, the capture time of the sender's
	// packet before the ones missing: they were sent between it and
	// Time.
	Since time.Time
}

// SegmentHandler is a Handler that is also told of noteworthy segments.
// Segment is called on the Handler's goroutine, in capture order with the
// other calls: before the Data call of the bytes the segment delivers, if
// any.
type SegmentHandler interface {
	Handler
	Segment(c *Conn, d Dir, s Segment)
}

// flowState is the per-direction state behind the segment marks and the
// round-trip time.
type flowState struct {
	// The window this direction's sender last advertised (unscaled), and
	// its window scale shift (RFC 7323) from its SYN, -1 when none.
	win      uint32
	winKnown bool
	zero     bool // it advertised a zero window and has not opened it since
	wscale   int8
	finNoted bool
	// An RTT sample in flight: this direction's segment ending at rttEnd,
	// sent at rttAt, awaiting the peer's ACK (Karn's algorithm: a
	// retransmission cancels it).
	rttOn  bool
	rttEnd gpr.Sequence
	rttAt  time.Time
	// mss is the maximum segment size this direction's SYN offered (RFC
	// 9293 section 3.7.1, option kind 2): the most the peer sends in one
	// segment; 0 when not seen.
	mss uint16
	// The IPv4 identification of this direction's last packet (idKnown),
	// its capture time, and whether it took one number (idOne: its
	// payload fit in one segment); idInOrder counts the packets that
	// came one number after the one before, idOther those that did not
	// (SegUncaptured).
	idLast    uint16
	idKnown   bool
	idOne     bool
	idAt      time.Time
	idInOrder int32
	idGaps    int32
	idOther   int32
	idShared  bool // a gap was numbered into by another connection of the host
}

// Identification steps (SegUncaptured): a gap of at most idMaxGap
// numbers is reported while at most one step in idOtherRatio of the
// direction's was neither one nor a gap reported (a larger jump, a number
// repeated or going back: a counter shared with other traffic, or none),
// and while the gaps reported, this one included, are at most one more
// than one in idGapRatio of the steps that were one (a sender whose
// numbers often skip a few shares its counter). The first step after
// the SYN may be a gap: Linux starts a connection's numbers anew after
// its SYN-ACK (numbered 0).
const (
	idOtherRatio = 16
	idGapRatio   = 4
	idMaxGap     = 64
)

// hostID is the latest IPv4 identification seen from a host, and on which
// connection: a number another connection of the same host took inside a
// gap tells a counter shared by all the host's traffic.
type hostID struct {
	addr netip.Addr
	conn int
	id   uint16
	set  bool
}

// shared reports whether h, the latest packet of host addr before one of
// connection conn numbered to, came from another connection and took a
// number between from and to.
func (h *hostID) shared(addr netip.Addr, conn int, from, to uint16) bool {
	return h.set && h.addr == addr && h.conn != conn && h.id-from < to-from && h.id != from
}

// hostIDs keeps the latest identification of the hosts seen, in a fixed
// table (hostSlots entries, about 64 KiB; a host whose slot another took
// is forgotten, and its gaps read as without it).
type hostIDs [hostSlots]hostID

const hostSlots = 1024

// at returns addr's slot.
func (t *hostIDs) at(addr netip.Addr) *hostID {
	b := addr.As16()
	h := uint32(2166136261)
	for _, c := range b[12:] {
		h = (h ^ uint32(c)) * 16777619
	}
	return &t[h%hostSlots]
}

// minMSS is the segment size assumed when the peer's SYN was not captured
// (RFC 9293 section 3.7.1: 536 bytes unless told otherwise).
const minMSS = 536

// maxSegment returns the maximum segment size a SYN's options give (RFC
// 9293 section 3.7.1, kind 2), 0 when none.
func maxSegment(opts []byte) uint16 {
	for len(opts) > 0 {
		switch opts[0] {
		case 0:
			return 0
		case 1:
			opts = opts[1:]
			continue
		}
		if len(opts) < 2 || int(opts[1]) < 2 || int(opts[1]) > len(opts) {
			return 0
		}
		if opts[0] == 2 && opts[1] == 4 {
			return uint16(opts[2])<<8 | uint16(opts[3])
		}
		opts = opts[opts[1]:]
	}
	return 0
}

// identify follows direction d's IPv4 identifications: id of a packet
// captured at ts with n payload bytes. It reports the numbers skipped
// before it (SegUncaptured) and the capture time of the packet before.
func (s *stream) identify(d Dir, id uint16, n int, ts time.Time) (skipped int, since time.Time) {
	f := &s.flow[d]
	src := s.conn.A.Addr()
	if d == BtoA {
		src = s.conn.B.Addr()
	}
	host := s.r.hostIDs.at(src)
	if f.idKnown && f.idOne {
		switch step := id - f.idLast; {
		case step == 1:
			f.idInOrder++
		case step > 1 && step <= idMaxGap && host.shared(src, s.conn.Index, f.idLast, id):
			// The sender's packet on another connection took a number
			// in between: one counter for all its traffic (Windows,
			// some BSDs), which says nothing of this connection's.
			f.idShared = true
		case step > 1 && step <= idMaxGap && !f.idShared && f.idOther*idOtherRatio <= f.idInOrder && f.idGaps <= f.idInOrder/idGapRatio:
			skipped, since = int(step-1), f.idAt
			f.idGaps++
		default:
			f.idOther++
		}
	}
	*host = hostID{addr: src, conn: s.conn.Index, id: id, set: true}
	// A segment is at most the MSS the peer announced, and in practice at
	// most the sender's own (both come of their links' MTUs): a packet
	// captured above it is a TSO/GSO send of several numbers.
	mss := int(s.flow[1-d].mss)
	if own := int(f.mss); own != 0 && own < mss {
		mss = own
	}
	if mss == 0 {
		mss = minMSS
	}
	f.idLast, f.idKnown, f.idOne, f.idAt = id, true, n <= mss, ts
	return skipped, since
}

// windowScale returns the window scale shift a SYN's options give
// (RFC 7323 section 2.2, kind 3), -1 when none.
func windowScale(opts []byte) int8 {
	for len(opts) > 0 {
		switch opts[0] {
		case 0: // end of options
			return -1
		case 1: // no-op
			opts = opts[1:]
			continue
		}
		if len(opts) < 2 || int(opts[1]) < 2 || int(opts[1]) > len(opts) {
			return -1
		}
		if opts[0] == 3 && opts[1] == 3 {
			return int8(min(opts[2], 14))
		}
		opts = opts[opts[1]:]
	}
	return -1
}

// scaled returns the window f's sender advertised, in bytes, and whether
// it is known: scaling applies when both SYNs offered it.
func (s *stream) scaled(d Dir) (uint32, bool) {
	f, p := &s.flow[d], &s.flow[1-d]
	if !f.winKnown || !s.half[d].synSeen || !s.half[1-d].synSeen {
		return 0, false // a window scale may be in use, unseen
	}
	if f.wscale >= 0 && p.wscale >= 0 {
		return f.win << uint(f.wscale), true
	}
	return f.win, true
}

// observe updates the flow state for a segment of direction d whose first
// payload byte is at seq (n bytes; retrans says its bytes were delivered
// before, ahead that it is beyond a hole) and reports what it shows. It
// runs in Accept, before the assembler delivers the segment's bytes.
func (s *stream) observe(tcp *layers.TCP, ts time.Time, d Dir, seq gpr.Sequence, n int, retrans, ahead bool) {
	r := s.r
	f, peer := &s.flow[d], &s.flow[1-d]
	h := &s.half[d]
	if tcp.SYN {
		if len(tcp.Contents) > 20 {
			f.wscale = windowScale(tcp.Contents[20:])
			f.mss = maxSegment(tcp.Contents[20:])
		} else {
			f.wscale = -1
		}
	}
	var skipped int
	var since time.Time
	switch {
	case tcp.SYN:
		f.idKnown = false // a SYN's number may come from elsewhere (Linux: 0 for a SYN-ACK)
	case r.ipID >= 0 && r.segs != nil:
		skipped, since = s.identify(d, uint16(r.ipID), n, ts)
	}
	// The peer's RTT sample, acknowledged by this segment.
	if tcp.ACK && peer.rttOn && peer.rttEnd.Difference(gpr.Sequence(tcp.Ack)) >= 0 {
		peer.rttOn = false
		rtt := ts.Sub(peer.rttAt)
		if st := &s.conn.Stats; rtt >= 0 && (st.MinRTT[1-d] == 0 || rtt < st.MinRTT[1-d]) {
			st.MinRTT[1-d] = max(rtt, 1) // 0 means none
		}
	}
	if !tcp.SYN && !tcp.RST {
		f.win, f.winKnown = uint32(tcp.Window), true
		switch {
		case tcp.Window == 0 && !f.zero:
			f.zero = true
			r.emitSegment(s, d, Segment{Kind: SegZeroWindow, Time: ts, Frame: r.frame, Offset: h.offset})
		case tcp.Window != 0:
			f.zero = false
		}
	}
	if r.segs == nil {
		// Only the RTT is kept for other handlers.
		s.sample(f, tcp, ts, seq, n, retrans)
		return
	}
	off := h.offset + int64(h.next.Difference(seq))
	if skipped > 0 {
		r.emitSegment(s, d, Segment{Kind: SegUncaptured, Time: ts, Frame: r.frame, Offset: off, Len: skipped, Since: since})
	}
	switch {
	case n > 0 && retrans:
		r.emitSegment(s, d, Segment{Kind: SegRetransmission, Time: ts, Frame: r.frame, Offset: off, Len: n})
	case n > 0 && ahead:
		r.emitSegment(s, d, Segment{Kind: SegOutOfOrder, Time: ts, Frame: r.frame, Offset: off, Len: n})
	}
	if n > 0 && !retrans && s.half[1-d].ackSeen {
		if w, ok := s.scaled(1 - d); ok && w > 0 {
			if inflight := s.half[1-d].maxAck.Difference(seq.Add(n)); inflight >= int(w) {
				r.emitSegment(s, d, Segment{Kind: SegWindowFull, Time: ts, Frame: r.frame, Offset: off, Len: n})
			}
		}
	}
	if tcp.FIN && !f.finNoted {
		f.finNoted = true
		r.emitSegment(s, d, Segment{Kind: SegFIN, Time: ts, Frame: r.frame, Offset: off + int64(n)})
	}
	if tcp.RST {
		r.emitSegment(s, d, Segment{Kind: SegRST, Time: ts, Frame: r.frame, Offset: off})
	}
	s.sample(f, tcp, ts, seq, n, retrans)
}

// sample starts an RTT sample on a segment with new bytes (or a SYN) and
// cancels the one in flight on a retransmission (Karn).
func (s *stream) sample(f *flowState, tcp *layers.TCP, ts time.Time, seq gpr.Sequence, n int, retrans bool) {
	if retrans {
		f.rttOn = false
		return
	}
	if f.rttOn || (n == 0 && !tcp.SYN) {
		return
	}
	end := seq.Add(n)
	if tcp.SYN {
		end = gpr.Sequence(tcp.Seq).Add(1)
	}
	f.rttOn, f.rttEnd, f.rttAt = true, end, ts
}

// emitSegment reports a segment to a SegmentHandler: directly, or
// recorded for the handler's goroutine.
func (r *runner) emitSegment(s *stream, d Dir, sg Segment) {
	if r.segs == nil {
		return
	}
	if r.rec == nil {
		r.segs.Segment(s.conn, d, sg)
		return
	}
	r.rec.add(s, call{kind: evSegment, dir: d, sk: sg.Kind, n: int64(sg.Len), t: sg.Since,
		ch: Chunk{Time: sg.Time, Frame: sg.Frame, Offset: sg.Offset}}, nil)
}

// segmentOf rebuilds a recorded segment call.
func segmentOf(e *call) Segment {
	return Segment{Kind: e.sk, Time: e.ch.Time, Frame: e.ch.Frame, Offset: e.ch.Offset, Len: int(e.n), Since: e.t}
}
