package analysis

import (
	"fmt"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect"
)

// Network or broker: an exchange's time, from its request's first byte to
// its response's last, split between the broker and the network from the
// TCP timing of its frames (dissect.Frame.TCP), as seen where the capture
// was taken.
//
//	request     first byte → fully sent: the last packet carrying its
//	            bytes, a retransmission of them included (a segment lost
//	            on the way is held up until it is sent again)
//	broker      fully sent → first response byte (the earliest packet
//	            carrying the response's bytes), less the network's round
//	            trip at the capture point (ConnStats.MinRTT: captured at
//	            the client, the whole round trip to the broker; at the
//	            broker, about none)
//	response    first response byte → last
//
// The network's share is the request's and the response's spread plus
// the round trip; the broker's the rest. A response lost beyond the
// capture point and sent again by the broker arrives once, late: it
// looks, from the client's side, like a broker that answered late (a
// capture at the broker shows it), unless the broker numbers its
// packets one by one in their IPv4 identification (Linux does, for TCP)
// and the capture holds the packet it sent before: a number skipped
// before the response (reassembly.SegUncaptured) says a packet left
// then, and the broker's time is counted only to the packet before the
// gap (a lower bound: the skipped packet may have been something else,
// an ACK). A client that writes its request slowly looks like a spread
// request (without a retransmission, full or zero window, the text says
// so).

// Verdicts of a split.
const (
	verdictBroker  = "broker"
	verdictNetwork = "network"
)

// Split is where one exchange's time went.
type Split struct {
	Time    Time   `json:"time"`         // the request's capture time
	Frame   int64  `json:"requestFrame"` // the request's first packet
	TotalMs Millis `json:"totalMs"`      // request's first byte to response's last
	// BrokerMs is from the request fully sent to the first response
	// byte, less RoundTripMs; NetworkMs the rest.
	BrokerMs  Millis `json:"brokerMs"`
	NetworkMs Millis `json:"networkMs"`
	// QueuedMs is the time it waited for the broker to answer earlier
	// requests on its connection (answered one at a time, in order).
	QueuedMs Millis `json:"queuedMs"`
	// RoundTripMs is the connection's round trip at the capture point;
	// null when not measured.
	RoundTripMs *Millis `json:"roundTripMs" jsonschema:"nullable"`
	// RequestMs is the request's first byte to fully sent (with
	// RetransmittedMs of it waiting for a retransmission); ResponseMs
	// the response's first byte to last.
	RequestMs       Millis  `json:"requestMs"`
	RetransmittedMs *Millis `json:"retransmittedMs" jsonschema:"nullable"`
	ResponseMs      Millis  `json:"responseMs"`
	// The TCP evidence, both frames together.
	Retransmissions int `json:"retransmissions"`
	OutOfOrder      int `json:"outOfOrder"`
	ZeroWindows     int `json:"zeroWindows"`
	WindowFull      int `json:"windowFull"`
	// Uncaptured counts the broker's packets sent before the response's
	// first captured byte that the capture does not hold (told by their
	// IPv4 identifications; dissect.TCPTiming.Uncaptured): the response
	// may have left before, its first copy lost beyond the capture point.
	// The broker's time is then counted to the earliest it can have left
	// (after the broker's packet before them), a lower bound.
	Uncaptured int `json:"uncaptured"`
	// Verdict is "broker" or "network": where most of the time went.
	Verdict string `json:"verdict"`
}

// splitOf splits exchange x (answered), of which queued was spent
// waiting for the broker to answer earlier requests on the connection.
func splitOf(x *dissect.Exchange, queued time.Duration) Split {
	req, resp := x.Request, x.Response
	rtv, ptv := req.TCPOf(), resp.TCPOf()
	rt, pt := &rtv, &ptv
	reqStart := earliest(req.Time, rt.Earliest)
	reqDone := latest(req.End, rt.Latest, rt.LastRetransmission)
	respFirst := earliest(resp.Time, pt.Earliest)
	respDone := latest(resp.End, pt.Latest)
	respLeft := respFirst // the earliest the response can have left the broker, as seen
	if pt.Uncaptured > 0 {
		// After the broker's last packet captured before the gap, and
		// after the request.
		if at := latest(pt.UncapturedSince, reqDone); at.Before(respFirst) {
			respLeft = at
		}
	}
	rtt := req.RTT
	total := respDone.Sub(reqStart)
	broker := max(respLeft.Sub(reqDone)-rtt-queued, 0)
	s := Split{Time: Time(req.Time), Frame: req.FirstPacket, TotalMs: Millis(total), BrokerMs: Millis(broker),
		QueuedMs: Millis(queued), NetworkMs: Millis(max(total-broker-queued, 0)), RequestMs: Millis(reqDone.Sub(reqStart)), ResponseMs: Millis(respDone.Sub(respFirst)),
		Retransmissions: rt.Retransmissions + pt.Retransmissions, OutOfOrder: rt.OutOfOrder + pt.OutOfOrder,
		ZeroWindows: rt.ZeroWindows + pt.ZeroWindows, WindowFull: rt.WindowFull + pt.WindowFull, Uncaptured: pt.Uncaptured}
	if rtt > 0 {
		s.RoundTripMs = ms(rtt)
	}
	if rt.Retransmissions > 0 && rt.LastRetransmission.After(req.End) {
		s.RetransmittedMs = ms(rt.LastRetransmission.Sub(req.End))
	}
	s.Verdict = verdictBroker
	if s.NetworkMs > s.BrokerMs {
		s.Verdict = verdictNetwork
	}
	return s
}

func earliest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if !t.IsZero() && (out.IsZero() || t.Before(out)) {
			out = t
		}
	}
	return out
}

func latest(ts ...time.Time) time.Time {
	var out time.Time
	for _, t := range ts {
		if t.After(out) {
			out = t
		}
	}
	return out
}

// Text says the split in words: "broker 250ms (request received → first
// response byte, less the 0.02ms round trip), network 0.5ms (...)".
func (s *Split) Text() string {
	var net []string
	if s.RoundTripMs != nil {
		net = append(net, "round trip "+units(s.RoundTripMs.Duration()))
	}
	if s.RetransmittedMs != nil {
		net = append(net, fmt.Sprintf("the request waited %s for a retransmission", units(s.RetransmittedMs.Duration())))
	} else if s.RequestMs.Duration() >= time.Millisecond {
		net = append(net, "request sent over "+units(s.RequestMs.Duration()))
	}
	if s.ResponseMs.Duration() >= time.Millisecond {
		net = append(net, "response received over "+units(s.ResponseMs.Duration()))
	}
	if s.Retransmissions > 0 {
		net = append(net, plural(s.Retransmissions, "retransmitted segment"))
	}
	if s.OutOfOrder > 0 {
		net = append(net, plural(s.OutOfOrder, "segment")+" out of order (bytes before them lost and sent again)")
	}
	if s.ZeroWindows > 0 {
		net = append(net, plural(s.ZeroWindows, "zero window")+" (a side stopped reading)")
	}
	if s.WindowFull > 0 {
		net = append(net, plural(s.WindowFull, "full window"))
	}
	if s.Uncaptured > 0 {
		net = append(net, fmt.Sprintf("%s of the broker's before the response not captured (its IP ID skipped): the response's first copy may have been lost beyond the capture point; broker time counted to the earliest it can have left", plural(s.Uncaptured, "packet")))
	}
	if s.Retransmissions+s.OutOfOrder+s.ZeroWindows+s.WindowFull+s.Uncaptured == 0 {
		// A response lost beyond the capture point and sent again arrives
		// once, late: it looks like broker time (docs/findings.md).
		net = append(net, "no retransmission seen at the capture point; one beyond it would count as broker time")
	}
	q := ""
	if s.QueuedMs > 0 {
		q = fmt.Sprintf(", queued %s behind earlier requests on the connection", units(s.QueuedMs.Duration()))
	}
	return fmt.Sprintf("broker %s (request fully sent → first response byte, less the round trip%s), network %s (%s)",
		units(s.BrokerMs.Duration()), q, units(s.NetworkMs.Duration()), strings.Join(net, "; "))
}
