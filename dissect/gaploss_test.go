package dissect

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/kwire/kwire/reassembly"
)

// orderSink records exchanges and events in the order they come.
type orderSink struct {
	recSink
	log []string
}

func (s *orderSink) Exchange(e *Exchange) {
	s.recSink.Exchange(e)
	s.log = append(s.log, fmt.Sprintf("%s corr=%d", [...]string{"paired", "no-response", "unanswered", "orphan", "sasl"}[e.Kind], e.CorrelationID))
}

func (s *orderSink) Event(e *Event) {
	s.recSink.Event(e)
	s.log = append(s.log, [...]string{"open", "skipped", "gap", "resync", "tls", "close", "bad-frame", "truncated"}[e.Kind])
}

func newOrderRig(t *testing.T) (*rig, *orderSink) {
	r := newRig(t, Options{}, true)
	s := &orderSink{}
	r.d.sink = s
	return r, s
}

// A response lost whole in a gap from the broker, and the capture ends:
// the request says so, and comes before the gap, which it precedes in
// time.
func TestResponseLostInGapAtEnd(t *testing.T) {
	r, s := newOrderRig(t)
	r.client(apiVersionsReq(1))
	r.d.Gap(r.c, reassembly.BtoA, int64(len(apiVersionsResp(1))), pktTime(2))
	r.d.Finish()
	if want := []string{"open", "unanswered corr=1", "gap", "close"}; !slices.Equal(s.log, want) {
		t.Errorf("order %q, want %q", s.log, want)
	}
	e := s.ex[0]
	if !hasNote(e, "no response before the end of the capture: probably lost in the gap of 23 bytes in the broker's bytes") {
		t.Errorf("notes %q", e.Notes)
	}
	// The same, ended by a FIN.
	r, s = newOrderRig(t)
	r.client(apiVersionsReq(1))
	r.d.Gap(r.c, reassembly.BtoA, -1, pktTime(2))
	r.d.Close(r.c, reassembly.CloseFIN, pktTime(3))
	if !hasNote(s.ex[0], "connection closed with no response: probably lost in the gap of unknown size in the broker's bytes") {
		t.Errorf("notes %q", s.ex[0].Notes)
	}
}

// Three pipelined requests; the first response is lost in a gap, the
// next two arrive: the first request is unanswered, lost in the gap (not
// "out of order", not left to the end of the capture), before the gap.
func TestResponseLostInGapThenNext(t *testing.T) {
	r, s := newOrderRig(t)
	r.client(apiVersionsReq(1), apiVersionsReq(2), apiVersionsReq(3))
	r.d.Gap(r.c, reassembly.BtoA, int64(len(apiVersionsResp(1))), pktTime(2))
	r.broker(apiVersionsResp(2), apiVersionsResp(3))
	r.d.Finish()
	if want := []string{"open", "unanswered corr=1", "gap", "paired corr=2", "paired corr=3", "close"}; !slices.Equal(s.log, want) {
		t.Errorf("order %q, want %q", s.log, want)
	}
	if !hasNote(s.ex[0], "response lost in the gap of 23 bytes in the broker's bytes") {
		t.Errorf("notes %q", s.ex[0].Notes)
	}
	if sum := r.d.Summary(); sum.OutOfOrder != 0 || sum.Gaps != 1 || sum.Unanswered != 1 || sum.Paired != 2 {
		t.Errorf("summary %+v", sum)
	}
	for _, e := range s.ex[1:] {
		if len(e.Notes) != 0 {
			t.Errorf("corr %d notes %q", e.CorrelationID, e.Notes)
		}
	}
}

// A gap inside a response (its start captured) cuts that response only:
// it pairs as incomplete, nothing else is marked, the order is as before.
func TestGapInsideResponse(t *testing.T) {
	r, s := newOrderRig(t)
	r.client(apiVersionsReq(1), apiVersionsReq(2))
	resp := apiVersionsResp(1)
	r.broker(resp[:10])
	r.d.Gap(r.c, reassembly.BtoA, int64(len(resp)-10), pktTime(3))
	r.broker(apiVersionsResp(2))
	r.d.Finish()
	if want := []string{"open", "gap", "truncated", "paired corr=1", "paired corr=2", "close"}; !slices.Equal(s.log, want) {
		t.Errorf("order %q, want %q", s.log, want)
	}
	if !hasNote(s.ex[0], "response frame incomplete (cut by a gap)") {
		t.Errorf("notes %q", s.ex[0].Notes)
	}
}

// A gap from the broker with nothing pending is reported at once; one
// from the client is not held either.
func TestGapNotHeld(t *testing.T) {
	r, s := newOrderRig(t)
	r.client(apiVersionsReq(1))
	r.broker(apiVersionsResp(1))
	r.d.Gap(r.c, reassembly.BtoA, 10, pktTime(3))
	r.d.Gap(r.c, reassembly.AtoB, 10, pktTime(4))
	if want := []string{"open", "paired corr=1", "gap", "gap"}; !slices.Equal(s.log, want) {
		t.Errorf("order %q, want %q", s.log, want)
	}
}

// offPortRig is a rig whose connection is on no Kafka port (Options.Ports
// is 9092, the broker listens on 19092), so only content can tell
// (Options.Detect, as kwire read has it).
func offPortRig(t *testing.T) *rig {
	r := &rig{t: t, sink: &recSink{}}
	r.d = New(Options{Detect: true}, r.sink)
	r.c = &reassembly.Conn{Index: 0, A: clientAddr, B: netip.MustParseAddrPort("10.0.0.2:19092"), SawSYN: true}
	r.d.Open(r.c)
	return r
}

// A capture cut down to one exchange (read -w): the handshake, then a
// gap in each direction where the exchanges left out were, then a
// request and its response that start on frame boundaries. Off the Kafka
// ports, content alone must recognise it as it would at the start of a
// connection.
func TestDetectAfterLeadingGap(t *testing.T) {
	r := offPortRig(t)
	r.d.Gap(r.c, reassembly.AtoB, 62, pktTime(1))
	r.d.Gap(r.c, reassembly.BtoA, 794, pktTime(1))
	r.client(apiVersionsReq(7))
	r.broker(apiVersionsResp(7))
	r.d.Finish()
	sum := r.d.Summary()
	if sum.Kafka != 1 || sum.Skipped != 0 || sum.Paired != 1 || sum.Gaps != 2 || sum.GapBytes != 856 {
		t.Fatalf("summary %+v, want 1 Kafka connection, 1 paired exchange, 2 gaps of 856 bytes", sum)
	}
	wantExchange(t, r.sink.ex[0], KindPaired, keyApiVersions, 3, 7)
	open := r.sink.events(EventOpen)
	if len(open) != 1 || open[0].Frame != 1 || !strings.Contains(open[0].Detail, "Kafka (detected)") {
		t.Fatalf("open events %+v, want one at packet 1, detected", open)
	}
}

// Bytes after a leading gap that do not start on a frame boundary (the
// gap ended inside a frame) are not taken for Kafka off the Kafka ports,
// and the skip says what was seen: never "no payload" when bytes were
// captured.
func TestSkipAfterLeadingGapNotNoPayload(t *testing.T) {
	r := offPortRig(t)
	r.d.Gap(r.c, reassembly.AtoB, 30, pktTime(1))
	req := apiVersionsReq(7)
	r.client(req[5:]) // a frame's tail, then the next frame
	r.client(apiVersionsReq(8))
	r.d.Finish()
	sk := r.sink.events(EventSkipped)
	if len(sk) != 1 {
		t.Fatalf("skipped events %+v, want 1", sk)
	}
	if d := sk[0].Detail; strings.Contains(d, "no payload") || !strings.HasPrefix(d, "not Kafka: the first bytes are not a Kafka request") {
		t.Errorf("skip detail %q, want not Kafka from its first bytes", d)
	}
	if sum := r.d.Summary(); sum.Kafka != 0 || sum.Skipped != 1 {
		t.Errorf("summary %+v", sum)
	}
}

// A connection of which only lost bytes are known (a gap, no payload)
// is skipped for no payload, saying the bytes were lost, not that only
// the handshake was there.
func TestSkipOnlyGap(t *testing.T) {
	r := offPortRig(t)
	r.d.Gap(r.c, reassembly.AtoB, 30, pktTime(1))
	r.d.Close(r.c, reassembly.CloseFIN, pktTime(2))
	sk := r.sink.events(EventSkipped)
	if len(sk) != 1 || sk[0].Detail != "no payload captured: 30 bytes lost after the TCP handshake, nothing else" {
		t.Fatalf("skipped events %+v", sk)
	}
}
