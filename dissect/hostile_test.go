package dissect

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/kwire/kwire/protocol"

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

// Pending requests hold their bytes, not their decoded trees: a request is
// decoded when its exchange is emitted, so that many pipelined requests
// whose records inflate a hundredfold (or that are bombs up to the
// decoder's caps) do not all sit in memory as trees at once.
func TestPendingRequestsNotDecoded(t *testing.T) {
	r := newRig(t, Options{Decoder: protocol.Decoder{Records: true}}, true)
	req := frame(t, apiVersionsV3Req) // correlation ID 1
	for corr := byte(1); corr <= 3; corr++ {
		b := append([]byte(nil), req...)
		b[11] = corr
		r.client(b)
	}
	pending := r.d.conns[r.c].pending.q
	if len(pending) != 3 {
		t.Fatalf("%d pending", len(pending))
	}
	for _, p := range pending {
		if p.Request.Tree != nil {
			t.Fatalf("pending request %d already decoded", p.CorrelationID)
		}
	}
	resp := frame(t, apiVersionsV3Resp)
	r.broker(resp)
	r.d.Close(r.c, reassembly.CloseFIN, pktTime(9))
	if len(r.sink.ex) != 3 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	wantExchange(t, r.sink.ex[0], KindPaired, 18, 3, 1)
	wantExchange(t, r.sink.ex[2], KindUnanswered, 18, 3, 3)
	for _, e := range r.sink.ex {
		tr := e.Request.Tree
		if tr == nil || tr.Err != nil || e.Request.lazy.set {
			t.Fatalf("request %d emitted undecoded (tree %v)", e.CorrelationID, tr)
		}
		if _, h, _ := protocol.FrameParts(tr.Root); h.Child("CorrelationId").Int != int64(e.CorrelationID) {
			t.Errorf("request %d: tree of another frame", e.CorrelationID)
		}
	}
}

// The bytes a resync skips travel with its event (the first 64 KiB), so
// that they can be shown with --show-secrets: garbage between frames, and
// garbage at the end. (By default they are withheld:
// TestResyncWithheld.)
func TestResyncEventCarriesBytes(t *testing.T) {
	r := newRig(t, Options{Decoder: protocol.Decoder{ShowSecrets: true}}, true)
	req := frame(t, apiVersionsV3Req)
	garbage := bytes.Repeat([]byte{0xff, 0xfe, 0x01}, 4) // a negative length, then noise
	second := append([]byte(nil), req...)
	second[11] = 2 // correlation ID 2
	r.client(req, garbage, second)
	tail := bytes.Repeat([]byte{0xee}, maxEventData+100)
	r.client(tail)
	r.d.Close(r.c, reassembly.CloseFIN, pktTime(9))

	ev := r.sink.events(EventResync)
	if len(ev) != 2 {
		t.Fatalf("%d resync events, want 2", len(ev))
	}
	if ev[0].Bytes != int64(len(garbage)) || !bytes.Equal(ev[0].Data, garbage) {
		t.Errorf("first resync: %d bytes, data %x, want %x", ev[0].Bytes, ev[0].Data, garbage)
	}
	if ev[1].Bytes != int64(len(tail)) || len(ev[1].Data) != maxEventData || !bytes.Equal(ev[1].Data, tail[:maxEventData]) {
		t.Errorf("trailing resync: %d bytes, %d kept", ev[1].Bytes, len(ev[1].Data))
	}
	if len(r.sink.ex) != 2 || r.sink.ex[1].CorrelationID != 2 {
		t.Errorf("exchanges %v", r.sink.kinds())
	}
}

// A skipped connection's event says when and where it started (it was
// reported with no time and no packet: the bytes it came from were
// dropped before it was built).
func TestSkippedEventHasTimeAndFrame(t *testing.T) {
	sink := &recSink{}
	d := New(Options{Detect: true}, sink)
	c := connOn(d, 0, "10.0.0.1:40000", "10.0.0.2:8080", true)
	d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), Frame: 4, Time: pktTime(4)})
	d.Finish()
	sk := sink.events(EventSkipped)
	if len(sk) != 1 || sk[0].Frame != 4 || !sk[0].Time.Equal(pktTime(4)) {
		t.Fatalf("skipped events %+v", sk)
	}
}

// A frame whose record batch cannot be decoded counts as a decode error in
// the summary (the exit status follows it), though the decoder keeps such
// problems on the batch's nodes and leaves Tree.Err nil.
func TestRecordErrorCounted(t *testing.T) {
	r := newRig(t, Options{Decoder: protocol.Decoder{Records: true}}, true)
	// Record batch: offset 0, length 57, epoch 0, magic 2, CRC 0 (wrong
	// too), attributes 1 (gzip), ..., 1 record, then 8 bytes that are not
	// gzip.
	batch := hx(t, `
		00 00 00 00 00 00 00 00  00 00 00 39  00 00 00 00  02  00 00 00 00
		00 01  00 00 00 00  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00
		ff ff ff ff ff ff ff ff  ff ff  ff ff ff ff  00 00 00 01
		01 02 03 04 05 06 07 08`)
	// ProduceRequest v3: TransactionalId null, Acks 1, TimeoutMs 1000,
	// topic "t", partition 0, the batch.
	body := cat(hx(t, `ff ff 00 01 00 00 03 e8 00 00 00 01 00 01 74 00 00 00 01 00 00 00 00`),
		binary.BigEndian.AppendUint32(nil, uint32(len(batch))), batch)
	r.client(reqFrame(0, 3, 7, body))
	r.broker(respFrame(7, false, hx(t, `00 00 00 00 00 00 00 00`)))
	r.d.Finish()
	if len(r.sink.ex) != 1 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	tr := r.sink.ex[0].Request.Tree
	if tr == nil || tr.Err != nil || tr.FirstError() == nil {
		t.Fatalf("request tree: %+v", tr)
	}
	if s := r.d.Summary(); s.DecodeErrors != 1 {
		t.Errorf("decode errors %d, want 1 (the request's batch)", s.DecodeErrors)
	}
}
