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
// loss explains. The tool marks the first packet it writes after a hole
// with a pcapng packet comment (opt_comment; the pcapng specification,
// draft-ietf-opsawg-pcapng, "Enhanced Packet Block"): CutComment names
// the sequence numbers left out in each direction, the packet's own
// (sent) and its peer's (received), and those holes are reported to a
// CutHandler rather than as gaps. Both directions ride on one packet
// because its acknowledgement number already passes over the peer's hole.

// cutPrefix starts CutComment.
const cutPrefix = "kwire-cut:"

// Cut is the sequence space a cut left out of one direction: Bytes bytes
// from sequence number From.
type Cut struct {
	From  uint32
	Bytes int64
}

// CutComment is the pcapng packet comment that marks a packet written
// after a cut: sent is what was left out of the packet's own direction
// just before it, received what was of its peer's (Bytes 0: nothing).
// An example: "kwire-cut: sent 1003+63 received 2001+794 (sequence
// numbers+bytes left out before this packet by kwire read -w)".
func CutComment(sent, received Cut) string {
	var b strings.Builder
	b.WriteString(cutPrefix)
	for _, c := range [...]struct {
		name string
		cut  Cut
	}{{"sent", sent}, {"received", received}} {
		if c.cut.Bytes > 0 {
			fmt.Fprintf(&b, " %s %d+%d", c.name, c.cut.From, c.cut.Bytes)
		}
	}
	b.WriteString(" (sequence numbers+bytes left out before this packet by kwire read -w)")
	return b.String()
}

// cutOf parses a comment made by CutComment.
func cutOf(comment string) (m cutMark, ok bool) {
	rest, found := strings.CutPrefix(comment, cutPrefix)
	if !found {
		return m, false
	}
	f := strings.Fields(rest)
	for i := 0; i+1 < len(f); i += 2 {
		var c *Cut
		switch f[i] {
		case "sent":
			c = &m.sent
		case "received":
			c = &m.received
		default:
			return m, m.sent.Bytes > 0 || m.received.Bytes > 0
		}
		from, n, found := strings.Cut(f[i+1], "+")
		seq, err1 := strconv.ParseUint(from, 10, 32)
		bytes, err2 := strconv.ParseInt(n, 10, 64)
		if !found || err1 != nil || err2 != nil || bytes <= 0 || bytes >= 1<<30 {
			return cutMark{}, false
		}
		*c = Cut{From: uint32(seq), Bytes: bytes}
	}
	return m, m.sent.Bytes > 0 || m.received.Bytes > 0
}

// cutMark rides in a packet's CaptureInfo.AncillaryData from the pcapng
// reader to the assembly, on a packet CutComment marks.
type cutMark struct{ sent, received Cut }

// markedCut returns the cut a packet's capture info carries.
func markedCut(ci *gopacket.CaptureInfo) (*cutMark, bool) {
	for _, a := range ci.AncillaryData {
		if m, ok := a.(*cutMark); ok {
			return m, true
		}
	}
	return nil, false
}

// setCut notes in h the cut c of its direction.
func (h *halfState) setCut(c Cut) {
	if c.Bytes > 0 {
		h.cutFrom, h.cutBytes = gpr.Sequence(c.From), c.Bytes
	}
}

// isCut reports whether the n bytes from h.next lie within h's cut.
func (h *halfState) isCut(n int64) bool {
	if h.cutBytes <= 0 || n <= 0 {
		return false
	}
	start := int64(h.cutFrom.Difference(h.next)) // where the hole starts within the cut
	return start >= 0 && start+n <= h.cutBytes
}

// CutHandler is a Handler that is told of cuts apart from gaps: Cut
// reports n bytes of direction d that the capture's writer left out on
// purpose (CutComment), not lost; the next Data follows the hole, as
// after a Gap. A Handler that is no CutHandler gets a Gap instead.
type CutHandler interface {
	Handler
	Cut(c *Conn, d Dir, n int64, t time.Time)
}
