package reassembly

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	gpr "github.com/gopacket/gopacket/reassembly"
)

// Cuts: a capture cut down by a tool (kwire read -w writes the packets of
// the exchanges it selected) has holes in its TCP sequence space that no
// loss explains. The tool marks the first packet it writes after bytes
// it left out with a pcapng packet comment (opt_comment; the pcapng
// specification, draft-ietf-opsawg-pcapng, "Enhanced Packet Block"):
// CutComment names the sequence numbers left out, of the packet's own
// direction (sent: all before its sequence number) and of its peer's
// (received: all its acknowledgement number covers), and holes within
// them are reported to a CutHandler rather than as gaps. Both directions
// ride on one packet because its acknowledgement number may already pass
// over its peer's hole. A hole only partly within a cut is a gap for the
// rest: bytes the original capture had lost stay lost.
//
// A segment right after a hole its cuts cover whole is in order, as it
// was in the capture cut: the hole is given up as it arrives, not when
// the peer acknowledges it, so that its bytes keep its time and frame
// (a retransmission of it written after it is one, not the copy that
// delivers them), and neither it nor the next segment after a cut of
// the peer's bytes counts as out of order.

// cutPrefix starts CutComment.
const cutPrefix = "kwire-cut:"

// Cut is a span of sequence numbers left out of one direction: Bytes
// bytes (a FIN counts one) from sequence number From.
type Cut struct {
	From  uint32
	Bytes int64
}

// maxCutBytes bounds a Cut: a TCP window is at most 1 GiB (RFC 7323), and
// a writer marks cuts as it goes, packet by packet.
const maxCutBytes = 1 << 30

// maxCuts bounds the cuts of a comment, and those a direction of a stream
// keeps waiting for their holes.
const maxCuts = 16

// CutComment is the pcapng packet comment that marks a packet written
// after bytes left out: sent are the spans of the packet's own direction
// (each ending at or before its sequence number), received those of its
// peer's (each ending at or before its acknowledgement number). An
// example: "kwire-cut: sent 1003+63 received 2001+794 (sequence
// numbers+bytes left out before this packet by kwire read -w)".
func CutComment(sent, received []Cut) string {
	var b strings.Builder
	b.WriteString(cutPrefix)
	for _, c := range sent {
		fmt.Fprintf(&b, " sent %d+%d", c.From, c.Bytes)
	}
	for _, c := range received {
		fmt.Fprintf(&b, " received %d+%d", c.From, c.Bytes)
	}
	b.WriteString(" (sequence numbers+bytes left out before this packet by kwire read -w)")
	return b.String()
}

// cutOf parses a comment made by CutComment; a comment that is not one,
// or that breaks its bounds, is none.
func cutOf(comment string) (m cutMark, ok bool) {
	rest, found := strings.CutPrefix(comment, cutPrefix)
	if !found {
		return m, false
	}
	f := strings.Fields(rest)
	for i := 0; i+1 < len(f) && (f[i] == "sent" || f[i] == "received"); i += 2 {
		from, n, found := strings.Cut(f[i+1], "+")
		seq, err1 := strconv.ParseUint(from, 10, 32)
		bytes, err2 := strconv.ParseInt(n, 10, 64)
		if !found || err1 != nil || err2 != nil || bytes <= 0 || bytes >= maxCutBytes || len(m.sent)+len(m.received) == maxCuts {
			return cutMark{}, false
		}
		c := Cut{From: uint32(seq), Bytes: bytes}
		if f[i] == "sent" {
			m.sent = append(m.sent, c)
		} else {
			m.received = append(m.received, c)
		}
	}
	return m, len(m.sent)+len(m.received) > 0
}

// cutMark rides in a packet's CaptureInfo.AncillaryData from the pcapng
// reader to the assembly, on a packet CutComment marks.
type cutMark struct{ sent, received []Cut }

// CutApplication is the shb_userappl of the files kwire read -w writes.
const CutApplication = "kwire read -w"

// cutFile rides in the CaptureInfo.AncillaryData of every packet of a
// section CutApplication wrote: the packets left out were not lost, so
// the numbers their IPv4 identifications skip say nothing
// (SegUncaptured).
type cutFile struct{}

// inCutFile is the AncillaryData of a packet of a cut file with no cut
// before it, shared.
var inCutFile = []any{cutFile{}}

// markedCut returns the cut a packet's capture info carries, and whether
// the packet is of a cut file.
func markedCut(ci *gopacket.CaptureInfo) (m *cutMark, written bool) {
	for _, a := range ci.AncillaryData {
		switch a := a.(type) {
		case *cutMark:
			m, written = a, true
		case cutFile:
			written = true
		}
	}
	return m, written
}

// PacketCuts returns the cuts a packet's comment names (CutComment), as
// EachPacket gives the packet: what a cut file being cut again must mark
// in its turn. None when the packet carries no such comment.
func PacketCuts(p *Packet) (sent, received []Cut) {
	if m, _ := markedCut(&p.CI); m != nil {
		return m.sent, m.received
	}
	return nil, nil
}

// cutSpan is a Cut in the stream's sequence space.
type cutSpan struct{ from, end gpr.Sequence }

// addCuts notes in h the cuts cs of its direction that end at or before
// upTo (a marked packet's sequence number, or its acknowledgement number
// for its peer's): a cut past what the packet vouches for is not one.
func (h *halfState) addCuts(cs []Cut, upTo gpr.Sequence) {
	for _, c := range cs {
		sp := cutSpan{gpr.Sequence(c.From), gpr.Sequence(c.From).Add(int(c.Bytes))}
		if sp.end.Difference(upTo) < 0 {
			continue
		}
		if len(h.cuts) == maxCuts {
			h.cuts = h.cuts[1:] // the oldest: its hole was settled or never came
		}
		h.cuts = append(h.cuts, sp)
	}
}

// holeParts splits the hole of n bytes from h.next into the parts a cut
// covers and the rest, in order, calling part for each (cut or not), and
// forgets the cuts the hole passes.
func (h *halfState) holeParts(n int64, part func(n int64, cut bool)) {
	if len(h.cuts) == 0 || n <= 0 || n >= maxCutBytes {
		part(n, false)
		return
	}
	pos, end := h.next, h.next.Add(int(n))
	for pos != end {
		// The cut covering pos, else the nearest starting after it.
		next, cover := end, false
		for _, sp := range h.cuts {
			switch {
			case sp.from.Difference(pos) >= 0 && pos.Difference(sp.end) > 0: // from <= pos < end
				next = end
				if e := sp.end; e.Difference(end) > 0 { // the cut ends inside the hole
					next = e
				}
				cover = true
			case !cover && pos.Difference(sp.from) > 0 && sp.from.Difference(next) > 0: // pos < from < next
				next = sp.from
			}
			if cover {
				break
			}
		}
		part(int64(pos.Difference(next)), cover)
		if cover {
			h.cutEnd, h.cutEndOK = next, true
		}
		pos = next
	}
	kept := h.cuts[:0]
	for _, sp := range h.cuts {
		if sp.end.Difference(end) < 0 { // the hole ends before the cut does
			kept = append(kept, sp)
		}
	}
	h.cuts = kept
}

// cutCovers reports whether h's cuts cover every sequence number of
// [from, to): a hole the capture's writer left out whole, with no byte
// the original capture lost.
func (h *halfState) cutCovers(from, to gpr.Sequence) bool {
	if len(h.cuts) == 0 {
		return false
	}
	if n := from.Difference(to); n <= 0 || n >= maxCutBytes {
		return false
	}
	// Each step goes to the end of a cut covering pos: at most one step
	// a cut.
	for pos := from; pos.Difference(to) > 0; {
		next := pos
		for _, sp := range h.cuts {
			if sp.from.Difference(pos) >= 0 && pos.Difference(sp.end) > 0 { // from <= pos < end
				next = sp.end
				break
			}
		}
		if next == pos {
			return false
		}
		pos = next
	}
	return true
}

// CutHandler is a Handler that is told of cuts apart from gaps: Cut
// reports n bytes of direction d that the capture's writer left out on
// purpose (CutComment), not lost; the next Data follows the hole, as
// after a Gap. A Handler that is no CutHandler gets a Gap instead.
type CutHandler interface {
	Handler
	Cut(c *Conn, d Dir, n int64, t time.Time)
}
