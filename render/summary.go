package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/render/units"
)

// SummaryCounts are the end-of-run totals Summary prints. The CLI fills it,
// most simply by passing every exchange and event to Exchange and Event
// (it then satisfies dissect.Sink), plus the packet and connection counts
// it gets from reassembly.
type SummaryCounts struct {
	Packets     int64 // packets read
	Connections int   // TCP connections seen
	Kafka       int   // connections recognised as Kafka (EventOpen)

	Exchanges  int // every exchange, all kinds
	Paired     int // by dissect.Kind: KindPaired
	NoResponse int // KindNoResponse (Produce acks=0)
	Unanswered int // KindUnanswered
	InFlight   int // KindUnanswered in flight when the read stopped (dissect.Exchange.InFlight: -c)
	Orphans    int // KindOrphan
	SASL       int // KindSASL

	TLS          int // EventTLS of connections not decrypted
	TLSDecrypted int // EventTLS of connections decrypted
	Skipped      int // EventSkipped: connections that are not Kafka
	// TLSReasons counts the connections of TLS by why they were not
	// decrypted (dissect.TLSStatus.Reason: dissect.TLSNoKeyLog...), and
	// SkippedTLS those of the EventSkipped of TLS connections
	// (dissect.SkipTLS), sorted by reason.
	TLSReasons, SkippedTLS []dissect.Reason

	// Filled by AddDissect from dissect.Summary: what went wrong is
	// counted once, by the dissector, where it happened (the exit status
	// reads the same numbers).
	dissect.Problems
	Unknown      int64            // frames of an API key or version the schema does not know (kept raw)
	Cuts         int64            // holes the capture's writer left on purpose (dissect.EventCut: kwire read -w)
	CutBytes     int64            // their bytes
	Frames       int64            // frames cut (requests, responses, raw SASL tokens)
	OutOfOrder   int64            // responses that did not answer the oldest pending request
	Reordered    int64            // pairs whose response was captured before its request (dissect.Exchange.Reordered)
	DuplicateIDs int64            // requests sent while another with the same correlation ID was pending
	Unsupported  int64            // requests outside the broker's advertised version range
	SkipReasons  []dissect.Reason // why connections were skipped, sorted by reason

	// Errors counts Kafka error names over every response, in order of
	// first appearance.
	Errors []ErrorCount

	// Set by the caller from reassembly.Summary (render sees reassembly
	// only through dissect): packets whose TCP bytes never reached the
	// dissector, so that a capture of an unsupported link type or of IP
	// fragments does not look like one without Kafka.
	UnsupportedLink int64 // packets of a link type kwire does not read (Summary.UnsupportedLink)
	FilteredOut     int64 // packets -f skipped before numbering, not in Packets (Summary.FilteredOut)
	Fragments       int64 // IP fragments, not reassembled (Summary.Fragments)
	// FragmentConflicts counts, of Fragments, those discarded because
	// they overlap with different bytes (Summary.FragmentConflicts).
	FragmentConflicts int64
	// SnapCut counts the packets the capture's snap length cut short
	// (Summary.Truncated), SnapLen the length they were cut to
	// (Summary.TruncatedAt): the gaps of Problems.Snapped are their
	// bytes past it.
	SnapCut    int64
	SnapLen    int
	BadPackets int64 // malformed link, IP or TCP headers (Summary.DecodeErrors)
	// Unparsed says why packets could not be parsed, for the anomalies
	// line ("6006 packets could not be parsed (6006 with more than 8 VLAN
	// tags)"): set by the caller, it words BadPackets and UnsupportedLink
	// when it is not empty.
	Unparsed []Unparsed
	// TruncatedFiles counts capture files that end inside a packet
	// record (FileInfo.Err is reassembly.ErrTruncated): what follows the
	// last whole packet is not read.
	TruncatedFiles int64
}

// Unparsed is a count of packets that could not be parsed and why: "with
// more than 8 VLAN tags", "of an unsupported link type".
type Unparsed struct {
	Count int64
	Why   string
}

// UnparsedText words the packets us counts: "6006 packets could not be
// parsed (6000 with more than 8 VLAN tags, 6 malformed)"; "" for none.
func UnparsedText(us []Unparsed) string {
	var n int64
	var parts []string
	for _, u := range us {
		if u.Count > 0 {
			n += u.Count
			parts = append(parts, strconv.FormatInt(u.Count, 10)+" "+u.Why)
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return "1 packet could not be parsed (" + strings.Join(parts, ", ") + ")"
	}
	return strconv.FormatInt(n, 10) + " packets could not be parsed (" + strings.Join(parts, ", ") + ")"
}

// Exchange counts e.
func (s *SummaryCounts) Exchange(e *dissect.Exchange) {
	s.Exchanges++
	switch e.Kind {
	case dissect.KindPaired:
		s.Paired++
	case dissect.KindNoResponse:
		s.NoResponse++
	case dissect.KindUnanswered:
		if e.InFlight {
			s.InFlight++
		} else {
			s.Unanswered++
		}
	case dissect.KindOrphan:
		s.Orphans++
	case dissect.KindSASL:
		s.SASL++
	}
	if s.countSeen(e.Facts().Errors) {
		return
	}
	for _, er := range Errors(e) {
		found := false
		for i := range s.Errors {
			if s.Errors[i].Code == er.Code {
				s.Errors[i].Count += er.Count
				found = true
				break
			}
		}
		if !found {
			s.Errors = append(s.Errors, er)
		}
	}
}

// countSeen counts errs when every code in them was counted before (as
// Errors would count them, without grouping their places: the summary
// keeps the first exchange's) and reports whether it did; it counts
// nothing when one is new.
func (s *SummaryCounts) countSeen(errs []facts.Error) bool {
	for i := range errs {
		if s.errorIndex(errs[i].Code) < 0 {
			return false
		}
	}
	for i := range errs {
		s.Errors[s.errorIndex(errs[i].Code)].Count++
	}
	return true
}

func (s *SummaryCounts) errorIndex(code int16) int {
	for i := range s.Errors {
		if s.Errors[i].Code == int64(code) {
			return i
		}
	}
	return -1
}

// Event counts ev.
func (s *SummaryCounts) Event(ev *dissect.Event) {
	switch ev.Kind {
	case dissect.EventOpen:
		s.Kafka++
	case dissect.EventTLS:
		if ev.TLS != nil && ev.TLS.Decrypted {
			s.TLSDecrypted++
		} else {
			s.TLS++
			if ev.TLS != nil {
				s.TLSReasons = AddReason(s.TLSReasons, dissect.Reason{Reason: ev.TLS.Reason, Count: 1})
			}
		}
	case dissect.EventSkipped:
		s.Skipped++
		if ev.TLS != nil {
			s.SkippedTLS = AddReason(s.SkippedTLS, dissect.Reason{Reason: ev.TLS.Reason, Count: 1})
		}
	}
}

// AddReason adds r's count to rs, sorted by reason, and returns it.
func AddReason(rs []dissect.Reason, r dissect.Reason) []dissect.Reason {
	i, found := slices.BinarySearchFunc(rs, r.Reason, func(x dissect.Reason, reason string) int { return strings.Compare(x.Reason, reason) })
	if found {
		rs[i].Count += r.Count
		return rs
	}
	return slices.Insert(rs, i, r)
}

// TLSReasonsText words why TLS connections were not decrypted, as their
// events say (dissect.TLSNoKeyLog...): "2 no key for the client random, 1
// handshake not captured"; "" for none.
func TLSReasonsText(rs []dissect.Reason) string {
	var b []byte
	for _, r := range rs {
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(r.Count), 10)
		b = append(b, ' ')
		b = append(b, r.Reason...)
	}
	return string(b)
}

// AddDissect adds the counts of one dissector run that Exchange and Event
// do not keep: the problems (gaps, resyncs, bad and truncated frames,
// frames that failed to decode, evicted requests), frames of unknown
// versions, frames, out-of-order responses, duplicate correlation IDs,
// unsupported versions and skip reasons. It leaves every count those two
// methods keep alone, so that calling all three counts nothing twice;
// call it once per dissect.Dissector (per capture file), after the
// frames it left to Exchange.Decode are decoded.
func (s *SummaryCounts) AddDissect(d dissect.Summary) {
	s.Problems.Add(d.Problems)
	s.Unknown += d.Unknown
	s.Cuts += d.Cuts
	s.CutBytes += d.CutBytes
	s.Frames += d.Frames
	s.OutOfOrder += d.OutOfOrder
	s.Reordered += d.Reordered
	s.DuplicateIDs += d.DuplicateIDs
	s.Unsupported += d.Unsupported
	for _, r := range d.SkipReasons {
		i := 0
		for i < len(s.SkipReasons) && s.SkipReasons[i].Reason < r.Reason {
			i++
		}
		if i < len(s.SkipReasons) && s.SkipReasons[i].Reason == r.Reason {
			s.SkipReasons[i].Count += r.Count
		} else {
			s.SkipReasons = slices.Insert(s.SkipReasons, i, r)
		}
	}
}

var _ dissect.Sink = (*SummaryCounts)(nil)

// GapBytes words the bytes of the gaps p counts, telling those the snap
// length kept out of the capture (p.Snapped: snapCut packets cut to
// snapLen bytes) and those the out-of-order budget gave up (p.GivenUp,
// which --max-out-of-order raises) from those lost; lost follows the count
// when all were lost (" lost", or "" for just "bytes"):
//
//	1460 bytes[ lost]
//	49741 bytes not captured: the snap length cut 431 packets to 120 bytes
//	3728 bytes given up (budget: --max-out-of-order)
//	50000 bytes: 259 lost, 49741 not captured: the snap length cut ...
func GapBytes(p dissect.Problems, snapCut int64, snapLen int, lost string) string {
	n := strconv.FormatInt(p.GapBytes, 10)
	if p.Snapped == 0 && p.GivenUp == 0 {
		return n + " bytes" + lost
	}
	const budget = "given up (budget: --max-out-of-order)"
	packets := "packets"
	if snapCut == 1 {
		packets = "packet"
	}
	why := fmt.Sprintf("not captured: the snap length cut %d %s to %d bytes", snapCut, packets, snapLen)
	switch {
	case p.SnappedBytes == p.GapBytes && p.Snapped == p.Gaps:
		return n + " bytes " + why
	case p.GivenUpBytes == p.GapBytes && p.GivenUp == p.Gaps:
		return n + " bytes " + budget
	}
	var parts []string
	if l := p.GapBytes - p.SnappedBytes - p.GivenUpBytes; l > 0 || p.Gaps > p.Snapped+p.GivenUp {
		parts = append(parts, fmt.Sprintf("%d lost", l))
	}
	if p.GivenUp > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", p.GivenUpBytes, budget))
	}
	if p.Snapped > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", p.SnappedBytes, why))
	}
	return n + " bytes: " + strings.Join(parts, ", ")
}

// Summary writes the totals as a few lines:
//
//	packets 1200, connections 3 (2 Kafka, 1 skipped: 1 not on a Kafka port)
//	(with -f: "packets 1200 (300 more skipped by -f), ...")
//	(with TLS: "connections 4 (4 Kafka, 3 decrypted from TLS)" and the
//	anomaly "1 TLS connection not decrypted (1 no key for the client
//	random)"; TLS skipped as not on a Kafka port: "2 skipped: 2 TLS not
//	decrypted (2 no key log)")
//	frames 113, exchanges 57: 54 paired, 1 no-response, 1 unanswered, 1 orphan
//	errors: NOT_LEADER_OR_FOLLOWER×3
//	anomalies: 1 gap (1460 bytes), 1 resync
//	(with a snap length: "200 gaps (49741 bytes not captured: the snap
//	length cut 431 packets to 120 bytes)", see GapBytes)
//	cut: 5147 bytes in 12 holes left out by the capture's writer (kwire read -w: ...)
//
// Zero counts are left out of the exchange and anomaly lines, and the
// errors and anomalies lines are left out when there are none.
func Summary(w io.Writer, s *SummaryCounts, opts Options) error {
	c := opts.Color
	var b []byte
	b = append(b, "packets "...)
	b = strconv.AppendInt(b, s.Packets, 10)
	if s.FilteredOut > 0 {
		b = append(b, " ("...)
		b = strconv.AppendInt(b, s.FilteredOut, 10)
		b = append(b, " more skipped by -f)"...)
	}
	b = append(b, ", connections "...)
	b = strconv.AppendInt(b, int64(s.Connections), 10)
	b = append(b, " ("...)
	b = strconv.AppendInt(b, int64(s.Kafka), 10)
	b = append(b, " Kafka"...)
	if s.TLSDecrypted > 0 {
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(s.TLSDecrypted), 10)
		b = append(b, " decrypted from TLS"...)
	}
	if s.Skipped > 0 {
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(s.Skipped), 10)
		b = append(b, " skipped"...)
		for i, r := range s.SkipReasons {
			if i == 0 {
				b = append(b, ": "...)
			} else {
				b = append(b, ", "...)
			}
			b = strconv.AppendInt(b, int64(r.Count), 10)
			b = append(b, ' ')
			b = append(b, r.Reason...)
			if r.Reason == dissect.SkipTLS && len(s.SkippedTLS) > 0 {
				// TLS not on a Kafka port: why it was not decrypted
				// says whether it may be Kafka.
				b = append(b, " not decrypted ("...)
				b = append(b, TLSReasonsText(s.SkippedTLS)...)
				b = append(b, ')')
			}
		}
	}
	b = append(b, ")\n"...)

	if s.Frames > 0 {
		b = append(b, "frames "...)
		b = strconv.AppendInt(b, s.Frames, 10)
		b = append(b, ", "...)
	}
	b = append(b, "exchanges "...)
	b = strconv.AppendInt(b, int64(s.Exchanges), 10)
	sep := ": "
	item := func(n int, what string, r role) {
		if n == 0 {
			return
		}
		b = append(b, sep...)
		sep = ", "
		if n != 1 && what != "paired" && what != "unanswered" && what != "in flight at stop" && what != "no-response" && what != "SASL" {
			what += "s" // orphans, gaps, resyncs, decode errors, ...
		}
		b = paint(b, c, r, itoa(int64(n))+" "+what)
	}
	item(s.Paired, "paired", roleValue)
	item(s.NoResponse, "no-response", roleValue)
	item(s.Unanswered, "unanswered", roleNote)
	item(s.InFlight, "in flight at stop", roleNote)
	item(s.Orphans, "orphan", roleNote)
	item(s.SASL, "SASL", roleValue)
	b = append(b, '\n')

	if len(s.Errors) > 0 {
		b = append(b, "errors: "...)
		for i, er := range s.Errors {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = paint(b, c, roleError, er.Name)
			b = append(b, units.Times...)
			b = strconv.AppendInt(b, int64(er.Count), 10)
		}
		b = append(b, '\n')
	}

	sep = "anomalies: "
	start := len(b)
	item(int(s.DecodeErrors), "decode error", roleError)
	if s.Unknown > 0 {
		item(int(s.Unknown), "frame", roleNote)
		if s.Unknown == 1 {
			b = append(b, " of an unknown API key or version (kept raw)"...)
		} else {
			b = append(b, " of unknown API keys or versions (kept raw)"...)
		}
	}
	if s.Gaps > 0 {
		item(int(s.Gaps), "gap", roleError)
		b = append(b, " ("...)
		b = append(b, GapBytes(s.Problems, s.SnapCut, s.SnapLen, "")...)
		b = append(b, ')')
	}
	item(int(s.Resyncs), "resync", roleNote)
	if s.ResyncBytes > 0 {
		b = append(b, " ("...)
		b = strconv.AppendInt(b, s.ResyncBytes, 10)
		b = append(b, " bytes skipped)"...)
	}
	item(int(s.BadFrames), "bad frame", roleNote)
	item(int(s.Truncated), "truncated frame", roleNote)
	if s.Conflicts > 0 {
		item(int(s.Conflicts), "retransmission", roleError)
		b = append(b, " with different data"...)
	}
	item(int(s.OutOfOrder), "out-of-order response", roleNote)
	item(int(s.Reordered), "reordered pair", roleNote)
	item(int(s.DuplicateIDs), "duplicate correlation ID", roleNote)
	item(int(s.Evicted), "evicted request", roleNote)
	item(int(s.Unexplained), "unexplained orphan response", roleError)
	item(int(s.Unsupported), "unsupported version", roleNote)
	if s.TLS > 0 {
		item(s.TLS, "TLS connection", roleNote)
		b = append(b, " not decrypted"...)
		if t := TLSReasonsText(s.TLSReasons); t != "" {
			b = append(b, " ("...)
			b = append(b, t...)
			b = append(b, ')')
		}
	}
	if t := UnparsedText(s.Unparsed); t != "" {
		b = append(b, sep...)
		sep = ", "
		b = paint(b, c, roleError, t)
	} else if s.UnsupportedLink > 0 {
		item(int(s.UnsupportedLink), "packet", roleError)
		b = append(b, " of an unsupported link type (not read)"...)
	}
	if s.Fragments > 0 {
		item(int(s.Fragments), "IP fragment", roleError)
		if s.FragmentConflicts > 0 {
			b = fmt.Appendf(b, " (not reassembled; %d of datagrams whose fragments overlap with different bytes, discarded)", s.FragmentConflicts)
		} else {
			b = append(b, " (not reassembled)"...)
		}
	}
	if len(s.Unparsed) == 0 {
		item(int(s.BadPackets), "malformed packet", roleError)
	}
	if s.TruncatedFiles > 0 {
		item(int(s.TruncatedFiles), "capture file", roleError)
		b = append(b, " cut short (the rest not read)"...)
	}
	if len(b) > start {
		b = append(b, '\n')
	}
	if s.Cuts > 0 {
		// Not an anomaly: the capture was cut down on purpose.
		b = append(b, "cut: "...)
		b = strconv.AppendInt(b, s.CutBytes, 10)
		b = append(b, " bytes in "...)
		b = strconv.AppendInt(b, s.Cuts, 10)
		if s.Cuts == 1 {
			b = append(b, " hole"...)
		} else {
			b = append(b, " holes"...)
		}
		b = append(b, " left out by the capture's writer (kwire read -w: exchanges not selected)\n"...)
	}
	_, err := w.Write(b)
	return err
}
