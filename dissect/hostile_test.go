package dissect

import (
	"testing"

	"github.com/kwire/kwire/reassembly"
)

// A request whose header does not parse past its correlation ID (Produce
// v99, whose header version kwire guesses as 2, written with header v1)
// still pairs with its response: the response is not an orphan "whose
// request was not captured", and the request's tree shows the error.
func TestUnparsableHeaderStillPairs(t *testing.T) {
	r := newRig(t, Options{}, true)
	// Produce v99, correlation ID 4, header v1 (client id "kwire"), body
	// 09 09 09: read as header v2, the tagged-field count 9 does not fit.
	//	00000012 0000 0063 00000004 0005 6b77697265 090909
	req := frame(t, "00000012 0000 0063 00000004 0005 6b77697265 090909")
	r.client(req)
	r.broker(respFrame(4, false, []byte{7, 7}))
	r.d.Close(r.c, reassembly.CloseFIN, pktTime(3))

	if len(r.sink.ex) != 1 {
		t.Fatalf("kinds %v, want one paired exchange", r.sink.kinds())
	}
	e := r.sink.ex[0]
	wantExchange(t, e, KindPaired, 0, 99, 4)
	if e.Request.Tree == nil || e.Request.Tree.Err == nil {
		t.Errorf("request tree %+v: want the header error shown", e.Request.Tree)
	}
	if e.ClientID != "kwire" {
		t.Errorf("client id %q", e.ClientID)
	}
}
