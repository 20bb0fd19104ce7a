package dissect

import (
	"testing"

	"github.com/kwire/kwire/internal/poison"
	"github.com/kwire/kwire/reassembly"
)

// recycleSink recycles every exchange once its facts are built, as kwire
// read's one-line mode does.
type recycleSink struct{ n int }

func (s *recycleSink) Exchange(ex *Exchange) { s.n++; ex.Facts(); ex.Recycle() }
func (s *recycleSink) Event(*Event)          {}

// releaseSink releases every exchange's trees and buffers once its facts
// are built, as kwire read did before it recycled them.
type releaseSink struct{ n int }

func (s *releaseSink) Exchange(ex *Exchange) {
	s.n++
	ex.Facts()
	for _, f := range [...]*Frame{ex.Request, ex.Response} {
		if f != nil {
			f.Tree.Release()
		}
	}
	ex.Release()
}
func (s *releaseSink) Event(*Event) {}

// TestRecycleAllocBudget pins the allocations per exchange of splitting,
// pairing and decoding small exchanges (ApiVersions and Metadata, taken
// in turn on one connection) when the sink recycles them: the Exchange,
// its facts, its two Frames and their two Trees are reused, 6
// allocations fewer than when the sink releases them (both reuse the
// frames' buffers).
func TestRecycleAllocBudget(t *testing.T) {
	if poison.Released {
		t.Skip("kwirepoison: released memory is poisoned, never reused")
	}
	const n = 100
	pairs := [][2][]byte{{frame(t, apiVersionsV3Req), frame(t, apiVersionsV3Resp)}, {frame(t, metadataV12Req), frame(t, metadataV12Resp)}}
	run := func(sink Sink) float64 {
		return testing.AllocsPerRun(5, func() {
			d := New(Options{}, sink)
			c := &reassembly.Conn{A: clientAddr, B: brokerAddr, SawSYN: true}
			d.Open(c)
			for i := range int64(n) {
				p := pairs[i%2]
				d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: p[0], Frame: 2 * i, Time: pktTime(2 * i)})
				d.Data(c, reassembly.BtoA, reassembly.Chunk{Data: p[1], Frame: 2*i + 1, Time: pktTime(2*i + 1)})
			}
			d.Finish()
		}) / n
	}
	released, recycled := run(&releaseSink{}), run(&recycleSink{})
	t.Logf("%.2f allocations per exchange released, %.2f recycled", released, recycled)
	if recycled > released-5.9 || recycled > 3.5 {
		t.Errorf("%.2f allocations per exchange recycled (%.2f released): want 6 fewer (the Exchange, its facts, two Frames, two Trees), at most 3.5", recycled, released)
	}
}

// TestRecyclePoisoned: with released memory poisoned, a recycled exchange
// and its frames show the poison and are not reused.
func TestRecyclePoisoned(t *testing.T) {
	defer func(p bool) { poison.Released = p }(poison.Released)
	poison.Released = true
	r := newRig(t, Options{}, true)
	r.client(frame(t, apiVersionsV3Req))
	r.broker(frame(t, apiVersionsV3Resp))
	r.d.Finish()
	if len(r.sink.ex) != 1 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	ex := r.sink.ex[0]
	req := ex.Request
	fx := ex.Facts()
	ex.Recycle()
	if ex.ClientID != poison.Marker || ex.APIKey != -0x5a5a || len(ex.Notes) != 1 || ex.Facts() != fx ||
		fx.Key != -0x5a5a || len(fx.Topics) != 1 || fx.Topics[0].Name != poison.Marker {
		t.Errorf("recycled exchange %+v", ex)
	}
	if req.Tree != nil || len(req.Bytes) == 0 || req.Bytes[0] != poison.Byte || ex.Request.Bytes[0] != poison.Byte {
		t.Errorf("recycled request %+v", req)
	}
	for range 10 {
		if e := newExchange(Exchange{}); e == ex {
			t.Fatal("a poisoned exchange was reused")
		}
		if f := newFrame(Frame{}); f == req {
			t.Fatal("a poisoned frame was reused")
		}
	}
}

// TestConnRecycleAllocBudget pins the allocations of a short connection
// (an ApiVersions and a Metadata exchange and their facts, then a FIN)
// whose state is recycled when it closes: the conn and its two
// splitters, with their first slices, are those of the connection
// before.
func TestConnRecycleAllocBudget(t *testing.T) {
	if poison.Released {
		t.Skip("kwirepoison: released memory is poisoned, never reused")
	}
	const n = 100
	avReq, avResp := frame(t, apiVersionsV3Req), frame(t, apiVersionsV3Resp)
	mdReq, mdResp := frame(t, metadataV12Req), frame(t, metadataV12Resp)
	d := New(Options{}, &recycleSink{})
	conns := make([]reassembly.Conn, n)
	for i := range conns {
		conns[i] = reassembly.Conn{Index: i, A: clientAddr, B: brokerAddr, SawSYN: true}
	}
	i := 0
	per := testing.AllocsPerRun(n-1, func() {
		c := &conns[i]
		i++
		d.Open(c)
		for k, b := range [][]byte{avReq, avResp, mdReq, mdResp} {
			d.Data(c, reassembly.Dir(k%2), reassembly.Chunk{Data: b, Frame: int64(k), Time: pktTime(int64(k))})
		}
		d.Close(c, reassembly.CloseFIN, pktTime(5))
	})
	t.Logf("%.2f allocations per connection", per)
	if per > 13 {
		t.Errorf("%.2f allocations per connection of two exchanges and their facts, budget 13", per)
	}
}
