package dissect

import (
	"fmt"
	"slices"
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
