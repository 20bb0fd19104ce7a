package reassembly

import "time"

// Snap-length cuts: a capture taken with a snap length (tcpdump -s 120)
// keeps the first bytes of each packet, and its record says how long the
// packet was on the wire (pcap orig_len, pcapng Original Packet Length;
// gopacket's CaptureInfo.Length beside CaptureLength). The payload bytes
// past the cut were sent and received; the capture did not keep them.
// The engine pads the payload back to the length its IP header gives,
// so that delivery goes on after it, and reports the padding as a hole
// of its own (assemble.go): to a SnapHandler as Snapped, to any other
// Handler as a Gap. A cut segment that arrives ahead of a hole is not
// padded (padding must never reach the assembler's buffers): its missing
// bytes end up in an ordinary Gap.

// SnapCut names the packet whose bytes a snap length kept out of the
// capture.
type SnapCut struct {
	Frame    int64 // the packet, numbered as Chunk.Frame
	Captured int   // bytes of it the capture kept (CaptureInfo.CaptureLength), link header included
	Length   int   // its length on the wire (CaptureInfo.Length)
}

// SnapHandler is a Handler that is told apart of the payload bytes a
// snap length kept out of the capture: Snapped reports n bytes of
// direction d that packet sc.Frame carried but the capture did not keep.
// They are a hole all the same (counted in ConnStats.Gaps and GapBytes),
// and the next Data follows it, as after a Gap; but nothing was lost on
// the network. A Handler that is no SnapHandler gets a Gap instead.
type SnapHandler interface {
	Handler
	Snapped(c *Conn, d Dir, n int64, t time.Time, sc SnapCut)
}

// snapped reports a snap-length hole to h: as Snapped when h is a
// SnapHandler, else as a Gap.
func snapped(h Handler, c *Conn, d Dir, n int64, t time.Time, sc SnapCut) {
	if sh, ok := h.(SnapHandler); ok {
		sh.Snapped(c, d, n, t, sc)
		return
	}
	h.Gap(c, d, n, t)
}

func (r *runner) callSnapped(s *stream, d Dir, n int64, t time.Time, sc SnapCut) {
	if r.rec == nil {
		snapped(r.h, s.conn, d, n, t, sc)
		return
	}
	r.rec.add(s, call{kind: evSnapped, dir: d, n: n, t: t, snap: sc}, nil)
}

func (r *runner) emitSnapped(s *stream, d Dir, n int64, t time.Time, sc SnapCut) {
	if r.holding(s, d) {
		r.holdEvent(s, event{s: s, kind: evSnapped, dir: d, n: n, t: t, snap: sc}, nil)
		return
	}
	if !r.deferring {
		r.callSnapped(s, d, n, t, sc)
		return
	}
	r.events = append(r.events, event{s: s, kind: evSnapped, dir: d, n: n, t: t, snap: sc})
}

// snapGap reports n bytes of direction d that the snap length cut from
// the packet of c: a hole, counted as one, reported as Snapped.
func (s *stream) snapGap(d Dir, n int64, c *pktCtx) {
	st := &s.conn.Stats
	st.Gaps++
	st.GapBytes += n
	s.half[d].offset += n
	s.r.emitSnapped(s, d, n, c.ci.Timestamp, SnapCut{Frame: c.frame, Captured: c.ci.CaptureLength, Length: c.ci.Length})
}
