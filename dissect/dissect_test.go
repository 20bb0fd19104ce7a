package dissect

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// ApiVersions v3 request, correlation ID 1 (request header v2).
const apiVersionsV3Req = `
00 00 00 1b          // length 27
00 12                // api key 18 ApiVersions
00 03                // version 3
00 00 00 01          // correlation id 1
00 05 6b 77 69 72 65 // client id "kwire"
00                   // header tagged fields
06 6b 77 69 72 65    // ClientSoftwareName "kwire" (compact)
04 30 2e 31          // ClientSoftwareVersion "0.1" (compact)
00                   // tagged fields
`

// ApiVersions v3 response to correlation ID 1 (response header v0).
const apiVersionsV3Resp = `
00 00 00 21          // length 33
00 00 00 01          // correlation id 1
00 00                // error code 0
04                   // ApiKeys: 3 entries (compact)
00 00 00 00 00 09 00 //   Produce 0-9, tagged fields
00 03 00 00 00 0c 00 //   Metadata 0-12, tagged fields
00 12 00 00 00 03 00 //   ApiVersions 0-3, tagged fields
00 00 00 00          // throttle time 0
00                   // tagged fields
`

// Metadata v12 request for all topics, correlation ID 2.
const metadataV12Req = `
00 00 00 14          // length 20
00 03                // api key 3 Metadata
00 0c                // version 12
00 00 00 02          // correlation id 2
00 05 6b 77 69 72 65 // client id "kwire"
00                   // header tagged fields
00                   // Topics: null (all)
01                   // AllowAutoTopicCreation true
00                   // IncludeTopicAuthorizedOperations false
00                   // tagged fields
`

// Metadata v12 response to correlation ID 2: one broker, no topics.
const metadataV12Resp = `
00 00 00 1e          // length 30
00 00 00 02          // correlation id 2
00                   // header tagged fields
00 00 00 00          // throttle time 0
02                   // Brokers: 1 (compact)
00 00 00 01          //   NodeId 1
03 62 31             //   Host "b1"
00 00 23 84          //   Port 9092
00                   //   Rack null
00                   //   tagged fields
00                   // ClusterId null
00 00 00 01          // ControllerId 1
01                   // Topics: 0 (compact)
00                   // tagged fields
`

func TestApiVersionsThenMetadata(t *testing.T) {
	r := newRig(t, Options{}, true)
	p1 := r.client(frame(t, apiVersionsV3Req))
	p2 := r.broker(frame(t, apiVersionsV3Resp))
	p3 := r.client(frame(t, metadataV12Req))
	p4 := r.broker(frame(t, metadataV12Resp))
	r.d.Close(r.c, reassembly.CloseFIN, pktTime(5))

	if got := r.sink.kinds(); len(got) != 2 {
		t.Fatalf("kinds %v, want two paired exchanges", got)
	}
	av, md := r.sink.ex[0], r.sink.ex[1]
	wantExchange(t, av, KindPaired, 18, 3, 1)
	wantExchange(t, md, KindPaired, 3, 12, 2)
	if av.ClientID != "kwire" || av.Client != clientAddr || av.Broker != brokerAddr {
		t.Errorf("client id %q client %v broker %v", av.ClientID, av.Client, av.Broker)
	}
	if av.Request.FirstPacket != p1 || av.Response.FirstPacket != p2 || md.Request.FirstPacket != p3 || md.Response.LastPacket != p4 {
		t.Errorf("packet numbers %d %d %d %d", av.Request.FirstPacket, av.Response.FirstPacket, md.Request.FirstPacket, md.Response.LastPacket)
	}
	if got := md.Latency(); got != time.Millisecond {
		t.Errorf("latency %v, want 1ms", got)
	}
	want := []APIRange{{Key: 0, Min: 0, Max: 9}, {Key: 3, Min: 0, Max: 12}, {Key: 18, Min: 0, Max: 3}}
	if len(av.Advertised) != len(want) {
		t.Fatalf("advertised %v, want %v", av.Advertised, want)
	}
	for i := range want {
		if av.Advertised[i] != want[i] {
			t.Errorf("advertised[%d] = %v, want %v", i, av.Advertised[i], want[i])
		}
	}
	adv := r.d.Advertised()
	if len(adv) != 1 || adv[0].Broker != brokerAddr || adv[0].RequestVersion != 3 {
		t.Fatalf("Advertised() = %+v", adv)
	}
	if rg, ok := adv[0].Range(3); !ok || rg != (protocol.Versions{Min: 0, Max: 12}) {
		t.Errorf("Range(Metadata) = %v %v", rg, ok)
	}
	for _, e := range r.sink.ex {
		for _, f := range []*Frame{e.Request, e.Response} {
			if f.Tree == nil || f.Tree.Err != nil {
				t.Errorf("%s frame did not decode: %v", protocol.APIName(e.APIKey), f.Tree.Err)
			}
		}
	}
	if len(md.Notes) != 0 {
		t.Errorf("unexpected notes %q", md.Notes)
	}
	s := r.d.Summary()
	if s.Connections != 1 || s.Kafka != 1 || s.Frames != 4 || s.Paired != 2 || s.DecodeErrors != 0 {
		t.Errorf("summary %+v", s)
	}
	if ev := r.sink.events(EventOpen); len(ev) != 1 || ev[0].Dir != reassembly.AtoB {
		t.Errorf("open events %+v", ev)
	}
}

func TestPipelined(t *testing.T) {
	r := newRig(t, Options{}, true)
	// Three Metadata v1 requests in one packet, answered in one packet.
	body := hx(t, `00 00 00 00 // Topics: 0`)
	r.client(reqFrame(3, 1, 10, body), reqFrame(3, 1, 11, body), reqFrame(3, 1, 12, body))
	r.client(reqFrame(3, 1, 13, body))
	resp := hx(t, `
		00 00 00 00 // Brokers: 0
		00 00 00 01 // ControllerId 1
		00 00 00 00 // Topics: 0`)
	r.broker(respFrame(10, false, resp), respFrame(11, false, resp), respFrame(12, false, resp)[:7])
	r.broker(respFrame(12, false, resp)[7:], respFrame(13, false, resp))
	r.d.Finish()
	if len(r.sink.ex) != 4 {
		t.Fatalf("%d exchanges, want 4", len(r.sink.ex))
	}
	lat := []time.Duration{2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond}
	for i, e := range r.sink.ex {
		wantExchange(t, e, KindPaired, 3, 1, int32(10+i))
		if e.Latency() != lat[i] {
			t.Errorf("exchange %d latency %v, want %v", i, e.Latency(), lat[i])
		}
		if e.Response.Tree == nil || e.Response.Tree.Err != nil {
			t.Errorf("response %d: %v", i, e.Response.Tree.Err)
		}
	}
	// The third response spans packets 3 and 4.
	if f := r.sink.ex[2].Response; f.FirstPacket != 3 || f.LastPacket != 4 || f.End.Sub(f.Time) != time.Millisecond {
		t.Errorf("split response packets %d-%d times %v-%v", f.FirstPacket, f.LastPacket, f.Time, f.End)
	}
}

// Produce v3 with acks=0: no response follows.
const produceAcks0 = `
00 00 00 1b          // length 27
00 00                // api key 0 Produce
00 03                // version 3
00 00 00 04          // correlation id 4
00 05 6b 77 69 72 65 // client id "kwire"
ff ff                // TransactionalId null
00 00                // Acks 0
00 00 07 d0          // TimeoutMs 2000
00 00 00 00          // TopicData: 0
`

func TestProduceAcks0(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, produceAcks0))
	acks1 := frame(t, strings.Replace(produceAcks0, "00 00                // Acks 0", "00 01 // Acks 1", 1))
	acks1[11] = 5 // correlation id 5
	r.client(acks1)
	r.broker(respFrame(5, false, hx(t, `
		00 00 00 00 // Responses: 0
		00 00 00 00 // ThrottleTimeMs 0`)))
	r.d.Finish()
	if len(r.sink.ex) != 2 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	wantExchange(t, r.sink.ex[0], KindNoResponse, 0, 3, 4)
	if !hasNote(r.sink.ex[0], "acks=0") || r.sink.ex[0].Latency() != -1 {
		t.Errorf("acks=0 exchange notes %q latency %v", r.sink.ex[0].Notes, r.sink.ex[0].Latency())
	}
	wantExchange(t, r.sink.ex[1], KindPaired, 0, 3, 5)
	if s := r.d.Summary(); s.NoResponse != 1 || s.Paired != 1 || s.Unanswered != 0 {
		t.Errorf("summary %+v", s)
	}
}

func TestResponseSplitAcrossManyChunks(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, metadataV12Req))
	resp := frame(t, metadataV12Resp)
	first := r.pkt + 1
	for i := range resp {
		r.broker(resp[i : i+1])
	}
	if len(r.sink.ex) != 1 {
		t.Fatalf("%d exchanges", len(r.sink.ex))
	}
	e := r.sink.ex[0]
	wantExchange(t, e, KindPaired, 3, 12, 2)
	f := e.Response
	if f.FirstPacket != first || f.LastPacket != first+int64(len(resp))-1 || !bytes.Equal(f.Bytes, resp) {
		t.Errorf("frame packets %d-%d (want %d-%d), bytes equal %v", f.FirstPacket, f.LastPacket, first, first+int64(len(resp))-1, bytes.Equal(f.Bytes, resp))
	}
	if !f.Time.Equal(pktTime(first)) || !f.End.Equal(pktTime(r.pkt)) {
		t.Errorf("times %v %v", f.Time, f.End)
	}
	if e.Latency() != time.Millisecond {
		t.Errorf("latency %v", e.Latency())
	}
}

func TestMidStreamRequestDirection(t *testing.T) {
	// No SYN: the client's first packet ends a frame whose start was not
	// captured, then a whole request follows.
	r := newRig(t, Options{}, false)
	tail := hx(t, `00 00 01 00 02 00 00 00 17 41 42 43 44 45 00 00 00`)
	r.client(tail, frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	r.d.Finish()
	if len(r.sink.ex) != 1 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	wantExchange(t, r.sink.ex[0], KindPaired, 3, 12, 2)
	rs := r.sink.events(EventResync)
	if len(rs) != 1 || rs[0].Bytes != int64(len(tail)) || rs[0].Dir != reassembly.AtoB {
		t.Fatalf("resync events %+v", rs)
	}
}

func TestMidStreamResponseDirection(t *testing.T) {
	// No SYN: the broker's first packet holds the end of a response to an
	// uncaptured request, then the answer to the request we saw.
	r := newRig(t, Options{}, false)
	r.client(frame(t, metadataV12Req))
	tail := hx(t, `00 01 00 00 00 00 7f ff ff ff 00 00 00 03 00 00`)
	r.broker(tail, frame(t, metadataV12Resp)[:10])
	r.broker(frame(t, metadataV12Resp)[10:])
	r.d.Finish()
	if len(r.sink.ex) != 1 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	e := r.sink.ex[0]
	wantExchange(t, e, KindPaired, 3, 12, 2)
	if e.Response.FirstPacket != 2 || e.Response.LastPacket != 3 {
		t.Errorf("response packets %d-%d", e.Response.FirstPacket, e.Response.LastPacket)
	}
	rs := r.sink.events(EventResync)
	if len(rs) != 1 || rs[0].Bytes != int64(len(tail)) || rs[0].Dir != reassembly.BtoA {
		t.Fatalf("resync events %+v", rs)
	}
}

func TestGapInsideFrameThenRecovery(t *testing.T) {
	r := newRig(t, Options{}, true)
	req := frame(t, metadataV12Req)
	// The request's last 3 bytes are lost (known size): the splitter skips
	// exactly, registers the cut request from its header, and stays in sync.
	r.client(req[:len(req)-3])
	r.d.Gap(r.c, reassembly.AtoB, 3, pktTime(2))
	body := hx(t, `00 00 00 00 // Topics: 0`)
	r.client(reqFrame(3, 1, 3, body))
	r.broker(frame(t, metadataV12Resp))
	r.broker(respFrame(3, false, hx(t, `00 00 00 00 00 00 00 01 00 00 00 00`)))
	// Then a gap of unknown size in the response direction: resync.
	r.client(reqFrame(3, 1, 4, body))
	r.broker(respFrame(99, false, hx(t, `00 00 00 00 00 00 00 01 00 00 00 00`))[:9])
	r.d.Gap(r.c, reassembly.BtoA, -1, pktTime(7))
	r.broker(hx(t, `01 02 03`), respFrame(4, false, hx(t, `00 00 00 00 00 00 00 01 00 00 00 00`)))
	r.d.Finish()

	if got := r.sink.kinds(); len(got) != 4 {
		t.Fatalf("kinds %v", got)
	}
	cut := r.sink.ex[0]
	wantExchange(t, cut, KindPaired, 3, 12, 2)
	if !hasNote(cut, "request frame incomplete") || len(cut.Request.Bytes) != len(req)-3 || cut.Request.Tree != nil {
		t.Errorf("cut request: notes %q, %d bytes", cut.Notes, len(cut.Request.Bytes))
	}
	wantExchange(t, r.sink.ex[1], KindPaired, 3, 1, 3)
	// The response cut by the unknown gap answers no request: an orphan
	// with the 9 bytes captured.
	if o := r.sink.ex[2]; o.Kind != KindOrphan || o.CorrelationID != 99 || o.Request != nil ||
		len(o.Response.Bytes) != 9 || !hasNote(o, "no request with this correlation ID was recognised") || !hasNote(o, "response frame incomplete") {
		t.Errorf("cut orphan: kind %v corr %d notes %q", o.Kind, o.CorrelationID, o.Notes)
	}
	wantExchange(t, r.sink.ex[3], KindPaired, 3, 1, 4)
	s := r.d.Summary()
	if s.Gaps != 2 || s.GapBytes != 3 || s.Resyncs != 1 || s.ResyncBytes != 3 || s.Truncated != 2 || s.Orphans != 1 {
		t.Errorf("summary gaps %d/%d resyncs %d/%d truncated %d orphans %d", s.Gaps, s.GapBytes, s.Resyncs, s.ResyncBytes, s.Truncated, s.Orphans)
	}
}

func TestGarbageLength(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, apiVersionsV3Req))
	r.broker(frame(t, apiVersionsV3Resp))
	// A negative length and junk, a good request, a length above MaxFrame
	// and junk, a good request.
	r.client(hx(t, `ff ff ff f0 00 01 02`), frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	md := frame(t, metadataV12Req)
	md[11] = 3 // correlation id 3
	r.client(hx(t, `7f 00 00 00 11 22`), md)
	mr := frame(t, metadataV12Resp)
	mr[7] = 3
	r.broker(mr)
	r.d.Finish()
	if len(r.sink.ex) != 3 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	wantExchange(t, r.sink.ex[1], KindPaired, 3, 12, 2)
	wantExchange(t, r.sink.ex[2], KindPaired, 3, 12, 3)
	bad := r.sink.events(EventBadFrame)
	if len(bad) != 2 || !strings.Contains(bad[0].Detail, "negative frame length -16") || !strings.Contains(bad[1].Detail, "out of range") {
		t.Fatalf("bad frames %+v", bad)
	}
	if bad[0].Frame != 3 || bad[1].Frame != 5 {
		t.Errorf("bad frame packets %d %d", bad[0].Frame, bad[1].Frame)
	}
	rs := r.sink.events(EventResync)
	if len(rs) != 2 || rs[0].Bytes != 7 || rs[1].Bytes != 6 {
		t.Errorf("resyncs %+v", rs)
	}
}

func TestMaxFrameBoundsAllocation(t *testing.T) {
	r := newRig(t, Options{}, true)
	// A request claiming 100 MiB (the maximum) of which 20 bytes arrive.
	r.client(hx(t, `06 40 00 00 00 03 00 0c 00 00 00 02 00 05 6b 77 69 72 65 00 00 01 00 00`))
	s := r.d.conns[r.c].split[reassembly.AtoB]
	if s.state != stBody || cap(s.buf) > allocAhead+64 {
		t.Fatalf("state %d, buffer capacity %d for a 100 MiB claim", s.state, cap(s.buf))
	}
	r.d.Finish()
	if tr := r.sink.events(EventTruncated); len(tr) != 1 || !strings.Contains(tr[0].Detail, "24 of 104857604") {
		t.Errorf("truncated %+v", tr)
	}
	if k := r.sink.kinds(); len(k) != 1 || k[0] != KindUnanswered {
		t.Errorf("kinds %v", k)
	}
}

func TestDuplicateCorrelationID(t *testing.T) {
	r := newRig(t, Options{}, true)
	body := hx(t, `00 00 00 00 // Topics: 0`)
	resp := hx(t, `00 00 00 00 00 00 00 01 00 00 00 00`)
	r.client(reqFrame(3, 1, 7, body))
	r.client(reqFrame(3, 1, 7, body))
	r.broker(respFrame(7, false, resp))
	r.broker(respFrame(7, false, resp))
	r.d.Finish()
	if len(r.sink.ex) != 2 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	a, b := r.sink.ex[0], r.sink.ex[1]
	if a.Request.FirstPacket != 1 || a.Response.FirstPacket != 3 || b.Request.FirstPacket != 2 || b.Response.FirstPacket != 4 {
		t.Errorf("FIFO pairing broken: %d→%d, %d→%d", a.Request.FirstPacket, a.Response.FirstPacket, b.Request.FirstPacket, b.Response.FirstPacket)
	}
	if hasNote(a, "duplicate") || !hasNote(b, "duplicate correlation ID 7 in flight") {
		t.Errorf("notes %q / %q", a.Notes, b.Notes)
	}
	if r.d.Summary().DuplicateIDs != 1 {
		t.Errorf("summary %+v", r.d.Summary())
	}
}

func TestOutOfOrderResponse(t *testing.T) {
	r := newRig(t, Options{}, true)
	body := hx(t, `00 00 00 00 // Topics: 0`)
	resp := hx(t, `00 00 00 00 00 00 00 01 00 00 00 00`)
	r.client(reqFrame(3, 1, 1, body), reqFrame(3, 1, 2, body))
	r.broker(respFrame(2, false, resp))
	r.broker(respFrame(1, false, resp))
	r.d.Finish()
	if len(r.sink.ex) != 2 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	wantExchange(t, r.sink.ex[0], KindPaired, 3, 1, 2)
	wantExchange(t, r.sink.ex[1], KindPaired, 3, 1, 1)
	if !hasNote(r.sink.ex[0], "out of order: correlation ID 1 was expected first") || r.d.Summary().OutOfOrder != 1 {
		t.Errorf("notes %q summary %+v", r.sink.ex[0].Notes, r.d.Summary())
	}
}

func TestOrphanGuess(t *testing.T) {
	// The request was lost in a gap of unknown size; its Metadata v12
	// response arrives in sync and is an orphan.
	r := newRig(t, Options{}, true)
	r.client(frame(t, metadataV12Req)[:6])
	r.d.Gap(r.c, reassembly.AtoB, -1, pktTime(2))
	r.broker(frame(t, metadataV12Resp))
	r.d.Finish()
	if len(r.sink.ex) != 1 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	e := r.sink.ex[0]
	if e.Kind != KindOrphan || e.CorrelationID != 2 || e.Request != nil || e.Response.Tree != nil || e.APIKey != -1 {
		t.Fatalf("orphan %+v", e)
	}
	var guess string
	for _, n := range e.Notes {
		if strings.HasPrefix(n, "probably ") {
			guess = n
		}
	}
	// v11 and v12 lay out an empty-topics response identically; every
	// other version and API key fails on these bytes.
	if guess != "probably Metadata v11-v12: the only API whose response decodes the whole frame (2 of its versions do); not decoded" || e.Guess == nil ||
		e.Guess.Candidates != 2 || !e.Guess.OneAPI || e.Guess.Decoded || e.Guess.APIKey != 3 || e.Guess.APIVersion != 11 {
		t.Errorf("guess %q (notes %q)", guess, e.Notes)
	}
	if s := r.d.Summary(); s.Orphans != 1 {
		t.Errorf("summary %+v", s)
	}
}

func TestOrphanAtStreamStart(t *testing.T) {
	// No SYN: the broker's first packet is a whole response to a request
	// sent before the capture began; it ends on a packet boundary.
	r := newRig(t, Options{}, false)
	early := frame(t, metadataV12Resp)
	early[7] = 1 // correlation id 1
	r.broker(early)
	r.client(frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	r.d.Finish()
	if len(r.sink.ex) != 2 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	o := r.sink.ex[0]
	if o.Kind != KindOrphan || o.CorrelationID != 1 || !hasNote(o, "probably Metadata v11-v12") {
		t.Errorf("orphan kind %d corr %d notes %q", o.Kind, o.CorrelationID, o.Notes)
	}
	wantExchange(t, r.sink.ex[1], KindPaired, 3, 12, 2)
	if len(r.sink.events(EventResync)) != 0 {
		t.Errorf("unexpected resync %+v", r.sink.events(EventResync))
	}
}

// ApiVersions v99 (unknown to the broker), correlation ID 5.
const apiVersionsV99Req = `
00 00 00 11          // length 17
00 12                // api key 18 ApiVersions
00 63                // version 99
00 00 00 05          // correlation id 5
00 05 6b 77 69 72 65 // client id "kwire"
00                   // header tagged fields
00                   // tagged fields
`

// The broker's KIP-511 answer: an ApiVersions v0 body with error 35.
const apiVersionsV0Err35 = `
00 00 00 10          // length 16
00 00 00 05          // correlation id 5
00 23                // error code 35 UNSUPPORTED_VERSION
00 00 00 01          // ApiKeys: 1
00 12 00 00 00 03    //   ApiVersions 0-3
`

func TestApiVersionsUnsupportedVersion(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, apiVersionsV99Req))
	r.broker(frame(t, apiVersionsV0Err35))
	r.d.Finish()
	if len(r.sink.ex) != 1 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	e := r.sink.ex[0]
	wantExchange(t, e, KindPaired, 18, 99, 5)
	if !hasNote(e, "UNSUPPORTED_VERSION") || !hasNote(e, "v0 body (KIP-511)") {
		t.Errorf("notes %q", e.Notes)
	}
	tr := e.Response.Tree
	if tr == nil || tr.Err != nil {
		t.Fatalf("response tree error %v", tr.Err)
	}
	_, _, body := protocol.FrameParts(tr.Root)
	if body == nil || body.Child("ErrorCode") == nil || body.Child("ErrorCode").Int != 35 {
		t.Errorf("body %+v", body)
	}
	if e.Advertised != nil || len(r.d.Advertised()) != 0 {
		t.Errorf("an error response must not set advertised ranges: %v", e.Advertised)
	}
}

func TestCloseWithNoResponse(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, apiVersionsV3Req))
	r.broker(frame(t, apiVersionsV3Resp))
	md13 := frame(t, metadataV12Req)
	md13[7] = 13 // version 13, above the advertised 0-12
	r.client(md13)
	r.d.Close(r.c, reassembly.CloseFIN, pktTime(4))
	if len(r.sink.ex) != 2 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	e := r.sink.ex[1]
	wantExchange(t, e, KindUnanswered, 3, 13, 2)
	if !hasNote(e, "version 13 outside the broker's advertised range 0-12") ||
		!hasNote(e, "connection closed with no response — the broker's answer to an unsupported version") {
		t.Errorf("notes %q", e.Notes)
	}
	if ev := r.sink.events(EventClose); len(ev) != 1 || ev[0].Detail != reassembly.CloseFIN {
		t.Errorf("close events %+v", ev)
	}
	if s := r.d.Summary(); s.Unsupported != 1 || s.Unanswered != 1 {
		t.Errorf("summary %+v", s)
	}
}

func TestUnansweredAtEndOfCapture(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, metadataV12Req))
	r.d.Finish()
	if len(r.sink.ex) != 1 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	wantExchange(t, r.sink.ex[0], KindUnanswered, 3, 12, 2)
	if !hasNote(r.sink.ex[0], "no response before the end of the capture") {
		t.Errorf("notes %q", r.sink.ex[0].Notes)
	}
}

// SaslHandshake v0 request for PLAIN, correlation ID 3.
const saslHandshakeV0Req = `
00 00 00 16          // length 22
00 11                // api key 17 SaslHandshake
00 00                // version 0
00 00 00 03          // correlation id 3
00 05 6b 77 69 72 65 // client id "kwire"
00 05 50 4c 41 49 4e // Mechanism "PLAIN"
`

// SaslHandshake v0 response: no error, mechanisms [PLAIN].
const saslHandshakeV0Resp = `
00 00 00 11          // length 17
00 00 00 03          // correlation id 3
00 00                // error code 0
00 00 00 01          // Mechanisms: 1
00 05 50 4c 41 49 4e //   "PLAIN"
`

// A raw PLAIN token: length, then authzid "" NUL "alice" NUL "secret".
const plainToken = `
00 00 00 0d          // length 13
00                   // authzid "" and NUL
61 6c 69 63 65 00    // "alice" NUL
73 65 63 72 65 74    // "secret"
`

func TestSASLv0PlainRaw(t *testing.T) {
	for _, show := range []bool{false, true} {
		r := newRig(t, Options{Decoder: protocol.Decoder{ShowSecrets: show}}, true)
		r.client(frame(t, saslHandshakeV0Req))
		r.broker(frame(t, saslHandshakeV0Resp))
		r.client(frame(t, plainToken))
		r.broker(hx(t, `00 00 00 00 // empty token: success`))
		r.client(frame(t, metadataV12Req))
		r.broker(frame(t, metadataV12Resp))
		r.d.Finish()
		if got := r.sink.kinds(); len(got) != 3 || got[0] != KindPaired || got[1] != KindSASL || got[2] != KindPaired {
			t.Fatalf("kinds %v", got)
		}
		hs, tok, md := r.sink.ex[0], r.sink.ex[1], r.sink.ex[2]
		wantExchange(t, hs, KindPaired, 17, 0, 3)
		if hs.Mechanism != "PLAIN" {
			t.Errorf("handshake mechanism %q", hs.Mechanism)
		}
		if tok.Mechanism != "PLAIN" || tok.User != "alice" || tok.Response == nil || len(tok.Response.Bytes) != 4 {
			t.Fatalf("token exchange %+v", tok)
		}
		if hasNote(tok, "SASL secret withheld (PLAIN)") == show {
			t.Errorf("show=%v: notes %q", show, tok.Notes)
		}
		pw := tok.Request.Tree.Root.Child("Token").Child("password")
		if pw == nil || (pw.Flags&protocol.FlagRedacted != 0) == show || (pw.Str == "secret") != show || pw.Off != 11 || pw.Len != 6 {
			t.Errorf("show=%v: password node %+v", show, pw)
		}
		wantExchange(t, md, KindPaired, 3, 12, 2)
		if s := r.d.Summary(); s.SASL != 1 || s.BadFrames != 0 || s.Resyncs != 0 {
			t.Errorf("summary %+v", s)
		}
	}
}

func TestSASLv0ScramRaw(t *testing.T) {
	r := newRig(t, Options{}, true)
	hs := frame(t, `
		00 00 00 1e          // length 30
		00 11 00 00          // SaslHandshake v0
		00 00 00 01          // correlation id 1
		00 05 6b 77 69 72 65 // client id "kwire"
		00 0d 53 43 52 41 4d 2d 53 48 41 2d 32 35 36 // "SCRAM-SHA-256"`)
	r.client(hs)
	r.broker(respFrame(1, false, hx(t, `00 00 00 00 00 00 // no error, no mechanisms`)))
	for _, m := range []struct {
		client bool
		s      string
	}{
		{true, "n,,n=bob=2Cjr,r=abc"}, {false, "r=abcdef,s=c2FsdA==,i=4096"},
		{true, "c=biws,r=abcdef,p=cHJvb2Y="}, {false, "v=c2lnbmF0dXJl"},
	} {
		b := binary.BigEndian.AppendUint32(nil, uint32(len(m.s)))
		b = append(b, m.s...)
		if m.client {
			r.client(b)
		} else {
			r.broker(b)
		}
	}
	r.client(frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	r.d.Finish()
	if got := r.sink.kinds(); len(got) != 4 || got[1] != KindSASL || got[2] != KindSASL || got[3] != KindPaired {
		t.Fatalf("kinds %v", got)
	}
	first, final := r.sink.ex[1], r.sink.ex[2]
	if first.User != "bob,jr" || first.Mechanism != "SCRAM-SHA-256" {
		t.Errorf("user %q mechanism %q", first.User, first.Mechanism)
	}
	proof := final.Request.Tree.Root.Child("Token").Child("proof")
	if proof == nil || proof.Flags&protocol.FlagRedacted == 0 || proof.Str != "" || !hasNote(final, "SASL secret withheld (SCRAM client-final)") {
		t.Errorf("proof not redacted: %+v %q", proof, final.Notes)
	}
	verifier := final.Response.Tree.Root.Child("Token").Child("verifier")
	if verifier == nil || verifier.Flags&protocol.FlagRedacted == 0 || verifier.Str != "" {
		t.Errorf("server signature not redacted: %+v", verifier)
	}
	if salt := first.Response.Tree.Root.Child("Token").Child("salt"); salt == nil || salt.Str != "c2FsdA==" || salt.Flags&protocol.FlagRedacted != 0 {
		t.Errorf("the salt of server-first is not a secret: %+v", salt)
	}
	wantExchange(t, r.sink.ex[3], KindPaired, 3, 12, 2)
}

func TestRawGSSAPIToken(t *testing.T) {
	// A Kafka 0.9 client on a Kerberos listener sends a GSSAPI token
	// (0x60, ASN.1 [APPLICATION 0]) with no SaslHandshake.
	r := newRig(t, Options{}, true)
	r.client(hx(t, `00 00 00 0a 60 82 01 00 06 09 2a 86 48 86`))
	r.broker(hx(t, `00 00 00 06 60 04 06 02 2a 86`))
	r.client(frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	r.d.Finish()
	if got := r.sink.kinds(); len(got) != 2 || got[0] != KindSASL || got[1] != KindPaired {
		t.Fatalf("kinds %v", got)
	}
	g := r.sink.ex[0]
	if g.Mechanism != "GSSAPI" || !hasNote(g, "GSSAPI") || g.Response == nil {
		t.Errorf("gssapi exchange %+v", g)
	}
	if s := r.d.Summary(); s.BadFrames != 0 || s.SASL != 1 {
		t.Errorf("summary %+v", s)
	}
}

func TestResyncRejectsCandidateInsideData(t *testing.T) {
	r := newRig(t, Options{}, true)
	body := hx(t, `00 00 00 00 // Topics: 0`)
	resp := hx(t, `00 00 00 00 00 00 00 01 00 00 00 00`)
	r.client(reqFrame(3, 1, 4, body))
	r.d.Gap(r.c, reassembly.BtoA, -1, pktTime(1))
	r.broker(hx(t, `
		00 00 00 06 00 00 00 04 aa bb // looks like a response to 4...
		ff ff ff ff 01                // ...but is not followed by a valid length`),
		respFrame(4, false, resp))
	r.d.Finish()
	if len(r.sink.ex) != 1 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	e := r.sink.ex[0]
	wantExchange(t, e, KindPaired, 3, 1, 4)
	if e.Response.Size() != 4+4+len(resp) {
		t.Errorf("paired with a %d-byte response", e.Response.Size())
	}
	if rs := r.sink.events(EventResync); len(rs) != 1 || rs[0].Bytes != 15 {
		t.Errorf("resyncs %+v", rs)
	}
}

func TestSASLTokenWithoutCapturedHandshake(t *testing.T) {
	r := newRig(t, Options{}, true)
	hs := frame(t, saslHandshakeV0Req)
	r.d.Gap(r.c, reassembly.AtoB, int64(len(hs)), pktTime(0)) // the handshake was lost
	r.broker(frame(t, saslHandshakeV0Resp))
	r.client(frame(t, plainToken))
	r.broker(hx(t, `00 00 00 00 // empty token: success`))
	r.client(frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	r.d.Finish()
	if got := r.sink.kinds(); len(got) != 3 || got[0] != KindOrphan || got[1] != KindSASL || got[2] != KindPaired {
		t.Fatalf("kinds %v", got)
	}
	tok := r.sink.ex[1]
	if tok.Mechanism != "PLAIN" || tok.User != "alice" || !hasNote(tok, "SaslHandshake v0 was not captured") || !hasNote(tok, "SASL secret withheld (PLAIN)") {
		t.Errorf("token exchange: mechanism %q user %q notes %q", tok.Mechanism, tok.User, tok.Notes)
	}
	wantExchange(t, r.sink.ex[2], KindPaired, 3, 12, 2)
	if s := r.d.Summary(); s.BadFrames != 0 {
		t.Errorf("summary %+v", s)
	}
}

// TestOpenWithoutData: a connection on a Kafka port that carried no payload
// (a handshake, then silence) opens and closes at its close's time, not at
// the zero time.
func TestOpenWithoutData(t *testing.T) {
	r := newRig(t, Options{Ports: []uint16{brokerAddr.Port()}}, true)
	r.d.Close(r.c, reassembly.CloseIdle, pktTime(7))
	r.d.Finish()
	for _, k := range []EventKind{EventOpen, EventClose} {
		evs := r.sink.events(k)
		if len(evs) != 1 || !evs[0].Time.Equal(pktTime(7)) {
			t.Errorf("%v events %+v, want one at %v", k, evs, pktTime(7))
		}
	}
}

// TestCutByEndNoOrphan: a response frame cut by the end of the capture,
// with nothing lost before it, that no request awaits is reported as
// truncated only (more likely a misread length than a real response).
func TestCutByEndNoOrphan(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	r.broker(respFrame(77, false, hx(t, `00 00 00 00 00 00 00 01 00 00 00 00`))[:10])
	r.d.Finish()
	if got := r.sink.kinds(); len(got) != 1 || got[0] != KindPaired {
		t.Fatalf("kinds %v, want one paired exchange", got)
	}
	if s := r.d.Summary(); s.Truncated != 1 || s.Orphans != 0 {
		t.Errorf("truncated %d orphans %d", s.Truncated, s.Orphans)
	}
}

// TestLatencyNeedsBothTimes: a frame without a capture time (the zero
// time of a pcapng Simple Packet Block) gives no latency, not a
// difference with year 1.
func TestLatencyNeedsBothTimes(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		req, resp time.Time
		want      time.Duration
	}{
		{at, at.Add(3 * time.Millisecond), 3 * time.Millisecond},
		{time.Time{}, at, -1},
		{at, time.Time{}, -1},
		{time.Time{}, time.Time{}, -1},
	} {
		e := &Exchange{Request: &Frame{Time: tc.req}, Response: &Frame{Time: tc.resp}}
		if got := e.Latency(); got != tc.want {
			t.Errorf("request at %v, response at %v: latency %v, want %v", tc.req, tc.resp, got, tc.want)
		}
	}
}

// TestRawPLAINOddPasswords: raw PLAIN tokens whose SaslHandshake v0 was
// not captured are told by their identities, whatever the password holds
// (a NUL, a control byte, non-ASCII, more than 1 KiB): each is a SASL
// token exchange, with its user when the token is a well-formed PLAIN
// message (RFC 4616: a password with a NUL is not one, and is withheld
// whole), and no byte of any password reaches an event (a resync's
// skipped bytes are shown as hex).
func TestRawPLAINOddPasswords(t *testing.T) {
	for name, pw := range map[string]string{
		"nul":      "SEKRETaa\x00SEKRETbb",
		"tab":      "SEKRET\tb",
		"control":  "SEKRET\xc3\xa9\x01",
		"long":     "SEKRET" + strings.Repeat("z", 1100),
		"nulfirst": "\x00SEKRETxx",
	} {
		t.Run(name, func(t *testing.T) {
			user, note := "alice", "SASL secret withheld (PLAIN)"
			if strings.Contains(pw, "\x00") {
				user, note = "", "SASL secret withheld (not a PLAIN message (more than two NULs))"
			}
			r := newRig(t, Options{}, true)
			tok := "\x00alice\x00" + pw
			r.client(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...))
			r.broker(hx(t, `00 00 00 00 // empty token: success`))
			r.client(frame(t, metadataV12Req))
			r.broker(frame(t, metadataV12Resp))
			r.d.Finish()
			for _, e := range r.sink.ex {
				t.Logf("ex kind %d corr %d notes %q", e.Kind, e.CorrelationID, e.Notes)
			}
			for _, e := range r.sink.ev {
				t.Logf("ev %+v", *e)
			}
			if got := r.sink.kinds(); len(got) != 2 || got[0] != KindSASL || got[1] != KindPaired {
				t.Fatalf("kinds %v, events %d", got, len(r.sink.ev))
			}
			if ex := r.sink.ex[0]; ex.Mechanism != "PLAIN" || ex.User != user || !hasNote(ex, note) {
				t.Errorf("token exchange: mechanism %q user %q notes %q", ex.Mechanism, ex.User, ex.Notes)
			}
			for _, ev := range r.sink.ev {
				if bytes.Contains(ev.Data, []byte("SEKRET")) {
					t.Errorf("%v event shows the password", ev.Kind)
				}
			}
		})
	}
}

// TestRawOAUTHBEARERWithoutHandshake: an OAUTHBEARER initial response
// shares SCRAM's GS2 header; told apart by its 0x01-separated pairs, it
// is one token exchange, and the Metadata request after it is Kafka (not
// a second SCRAM round).
func TestRawOAUTHBEARERWithoutHandshake(t *testing.T) {
	r := newRig(t, Options{}, true)
	tok := "n,,\x01auth=Bearer SEKRET.jwt.sig\x01\x01"
	r.client(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...))
	r.broker(hx(t, `00 00 00 00 // empty token: success`))
	r.client(frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	r.d.Finish()
	if got := r.sink.kinds(); len(got) != 2 || got[0] != KindSASL || got[1] != KindPaired {
		t.Fatalf("kinds %v", got)
	}
	if ex := r.sink.ex[0]; ex.Mechanism != "OAUTHBEARER" {
		t.Errorf("mechanism %q, notes %q", ex.Mechanism, ex.Notes)
	}
	wantExchange(t, r.sink.ex[1], KindPaired, 3, 12, 2)
}

// TestRawTokenTwoMechanisms: a raw token whose SaslHandshake v0 was not
// captured, told PLAIN by its two NULs though it starts as a SCRAM
// client-final, is parsed as of an unknown mechanism and withheld whole
// (split as PLAIN, its authzid would show the proof), and framing goes on.
func TestRawTokenTwoMechanisms(t *testing.T) {
	r := newRig(t, Options{}, true)
	tok := "c=biws,r=abc,p=SEKRETcHJvb2Y=\x00alice\x00x"
	r.client(append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...))
	r.broker(hx(t, `00 00 00 00 // empty token: success`))
	r.client(frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	r.d.Finish()
	if got := r.sink.kinds(); len(got) != 2 || got[0] != KindSASL || got[1] != KindPaired {
		t.Fatalf("kinds %v", got)
	}
	ex := r.sink.ex[0]
	if ex.User != "" || !hasNote(ex, "SASL secret withheld (a token that could be PLAIN or SCRAM (the SaslHandshake was not captured))") {
		t.Errorf("token exchange: user %q notes %q", ex.User, ex.Notes)
	}
	if n := ex.Request.Tree.Root.Child("Token"); n == nil || n.Flags&protocol.FlagRedacted == 0 || len(n.Children) != 0 {
		t.Errorf("token not withheld whole: %+v", n)
	}
}

// A large frame that arrives in pieces gets its buffer at most twice: the
// first holds allocAhead bytes beyond the first piece, the second, once
// that is full, the whole frame (up to frameOnce, and when the bound on
// partial frames has room for it); otherwise it grows in steps, and past
// the bound it is cut as before.
func TestFrameBufferSizedOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		partial int64
		allocs  int  // buffers the frame was built in; 0: more than 2
		cut     bool // cut by the bound on partial frames (before its whole buffer)
	}{
		{"room", 1 << 20, 0, 2, false},
		{"room within half the bound", 1 << 20, 2<<20 + 128, 2, false},
		{"room, but not half the bound: grown as it arrives", 1 << 20, 1<<20 + 64, 0, false},
		{"no room", 1 << 20, 512 << 10, 2, true},
		{"above frameOnce", frameOnce + 1, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Options{PartialMemory: tc.partial}, true)
			resp := respFrame(1, false, bytes.Repeat([]byte{7}, tc.size))
			r.client(reqFrame(3, 1, 1, nil))
			s := r.d.conns[r.c].split[reassembly.BtoA]
			caps := map[int]bool{}
			for off := 0; off < len(resp); off += 1500 {
				r.broker(resp[off:min(off+1500, len(resp))])
				if s.state == stBody {
					caps[cap(s.buf)] = true
				}
				if r.d.partial > r.d.maxPartial && r.d.maxPartial > 0 {
					t.Fatalf("partial frames hold %d bytes, bound %d", r.d.partial, r.d.maxPartial)
				}
			}
			if capped := r.d.sum.PartialCapped; tc.cut != (capped > 0) {
				t.Fatalf("cut by the bound %d times, want cut %v", capped, tc.cut)
			}
			if !tc.cut && (len(r.sink.ex) != 1 || !bytes.Equal(r.sink.ex[0].Response.Bytes, resp)) {
				t.Fatalf("%d exchanges (kinds %v), or the response is not its bytes", len(r.sink.ex), r.sink.kinds())
			}
			if tc.allocs > 0 && len(caps) != tc.allocs || tc.allocs == 0 && len(caps) <= 2 {
				t.Errorf("the frame was built in %d buffers (capacities %v), want %d (0: more than 2)", len(caps), caps, tc.allocs)
			}
			if tc.allocs > 0 && tc.cut == caps[len(resp)] {
				t.Errorf("a buffer of the frame's size %d: %v, want %v", len(resp), caps, !tc.cut)
			}
			for c := range caps {
				if c > len(resp) {
					t.Errorf("a buffer of %d bytes for a frame of %d", c, len(resp))
				}
			}
		})
	}
}

// TestSASLv0TokenBeforeHandshakeResponse: a client's first raw token seen
// before the broker's SaslHandshake v0 response (sent with the request in
// one segment, or ahead of a response delayed or retransmitted) is a
// token, and the response still pairs with the handshake.
func TestSASLv0TokenBeforeHandshakeResponse(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(r *rig, hs, tok []byte)
	}{
		{"one segment", func(r *rig, hs, tok []byte) { r.client(append(append([]byte(nil), hs...), tok...)) }},
		{"two segments", func(r *rig, hs, tok []byte) { r.client(hs); r.client(tok) }},
		{"token across segments", func(r *rig, hs, tok []byte) {
			// A token longer than a segment (an OAUTHBEARER JWT, a long
			// PLAIN password): the first part of it rides with the
			// handshake and fails a request header's check.
			r.client(append(append([]byte(nil), hs...), tok[:10]...))
			r.client(tok[10:])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Options{}, true)
			tc.send(r, frame(t, saslHandshakeV0Req), frame(t, plainToken))
			r.broker(frame(t, saslHandshakeV0Resp))
			r.broker(hx(t, `00 00 00 00 // empty token: success`))
			r.client(frame(t, metadataV12Req))
			r.broker(frame(t, metadataV12Resp))
			r.d.Finish()
			if got := r.sink.kinds(); len(got) != 3 || got[0] != KindPaired || got[1] != KindSASL || got[2] != KindPaired {
				t.Fatalf("kinds %v", got)
			}
			hs, tok := r.sink.ex[0], r.sink.ex[1]
			wantExchange(t, hs, KindPaired, 17, 0, 3)
			if tok.Mechanism != "PLAIN" || tok.User != "alice" || tok.Response == nil || len(tok.Response.Bytes) != 4 {
				t.Errorf("token exchange %+v", tok)
			}
			if hasNote(tok, "not captured") || !hasNote(tok, "SASL secret withheld (PLAIN)") {
				t.Errorf("token notes %q", tok.Notes)
			}
			wantExchange(t, r.sink.ex[2], KindPaired, 3, 12, 2)
			if s := r.d.Summary(); s.SASL != 1 || s.BadFrames != 0 || s.Resyncs != 0 || s.OutOfOrder != 0 {
				t.Errorf("summary %+v", s)
			}
		})
	}
	t.Run("response inside the token", func(t *testing.T) {
		// The broker answers while the rest of the token is in flight.
		r := newRig(t, Options{}, true)
		tok := frame(t, plainToken)
		r.client(append(frame(t, saslHandshakeV0Req), tok[:10]...))
		r.broker(frame(t, saslHandshakeV0Resp))
		r.client(tok[10:])
		r.broker(hx(t, `00 00 00 00 // empty token: success`))
		r.client(frame(t, metadataV12Req))
		r.broker(frame(t, metadataV12Resp))
		r.d.Finish()
		if got := r.sink.kinds(); len(got) != 3 || got[0] != KindPaired || got[1] != KindSASL || got[2] != KindPaired {
			t.Fatalf("kinds %v", got)
		}
		if tok := r.sink.ex[1]; tok.User != "alice" || tok.Response == nil || !hasNote(tok, "SASL secret withheld (PLAIN)") {
			t.Errorf("token %+v", tok)
		}
		if s := r.d.Summary(); s.BadFrames != 0 || s.Resyncs != 0 {
			t.Errorf("summary %+v", s)
		}
	})
	t.Run("refused", func(t *testing.T) {
		// UNSUPPORTED_SASL_MECHANISM: the token was sent in vain and Kafka
		// framing resumes on both sides.
		r := newRig(t, Options{}, true)
		r.client(append(frame(t, saslHandshakeV0Req), frame(t, plainToken)...))
		r.broker(respFrame(3, false, hx(t, `00 21 00 00 00 01 00 05 47 53 53 41 50 49 // error 33, [GSSAPI]`)))
		r.client(frame(t, metadataV12Req))
		r.broker(frame(t, metadataV12Resp))
		r.d.Finish()
		if got := r.sink.kinds(); len(got) != 3 || got[0] != KindSASL || got[1] != KindPaired || got[2] != KindPaired {
			t.Fatalf("kinds %v", got)
		}
		if tok := r.sink.ex[0]; tok.Response != nil || !hasNote(tok, "no broker token") {
			t.Errorf("token %+v", tok)
		}
		wantExchange(t, r.sink.ex[1], KindPaired, 17, 0, 3)
		wantExchange(t, r.sink.ex[2], KindPaired, 3, 12, 2)
	})
}

// TestResyncCandidateMustFitCorrelation: a request frame declaring 2 GB
// (past --max-frame) is a bad frame; the resync after it used to stop 6
// bytes in, where the bad header's key, version and correlation ID read
// as a ListOffsets v3 request of 65,536 bytes (correlation ID 0x61647600,
// the client id "adv"), which swallowed every request after it: 1
// paired, 1 unanswered, the responses orphans. A candidate the window
// cannot check against the frame after it must follow the connection's
// correlation IDs; the bad frame's 117 bytes are skipped and the 5
// requests after it pair.
func TestResyncCandidateMustFitCorrelation(t *testing.T) {
	r := newRig(t, Options{}, true)
	body := hx(t, `00 00 00 01 00 06 6f 72 64 65 72 73 // Topics: [orders]`)
	resp := hx(t, `00 00 00 00 00 00 00 00`)
	r.client(reqFrame(3, 1, 1, body))
	r.broker(respFrame(1, false, resp))
	bad := hx(t, `7f ff ff ff 00 03 00 01 00 00 00 02 00 03 61 64 76`)
	bad = append(bad, make([]byte, 100)...)
	r.client(bad)
	for corr := int32(3); corr <= 7; corr++ {
		r.client(reqFrame(3, 1, corr, body))
		r.broker(respFrame(corr, false, resp))
	}
	r.d.Finish()
	if got := r.sink.kinds(); len(got) != 6 || slices.ContainsFunc(got, func(k Kind) bool { return k != KindPaired }) {
		t.Fatalf("kinds %v, want 6 paired", got)
	}
	for i, e := range r.sink.ex {
		want := int32(1)
		if i > 0 {
			want = int32(i) + 2
		}
		wantExchange(t, e, KindPaired, 3, 1, want)
	}
	if rs := r.sink.events(EventResync); len(rs) != 1 || rs[0].Bytes != 117 {
		t.Errorf("resyncs %+v", rs)
	}
	if bf := r.sink.events(EventBadFrame); len(bf) != 1 {
		t.Errorf("bad frames %+v", bf)
	}

}

// TestResyncCorrelationWraps: clients number their requests around the
// int32 range, to 0 after 2^31-1 (Java's NetworkClient, kafka-python): a resync after a bad frame whose
// candidate is a request too long for the window to check by the frame
// after it must accept a correlation ID that wrapped since the latest
// one read. Before, the step from 2^31-1 to 0 read as going backwards:
// the Metadata request of 3,000 bytes was skipped as garbage, with its
// response an orphan.
func TestResyncCorrelationWraps(t *testing.T) {
	for _, tc := range []struct {
		name       string
		last, next int32
	}{
		{"to-zero", math.MaxInt32, 0},
		{"to-zero-after-gap", math.MaxInt32 - 5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, Options{}, true)
			small := hx(t, `00 00 00 01 00 06 6f 72 64 65 72 73 // Topics: [orders]`)
			resp := hx(t, `00 00 00 00 00 00 00 00`)
			r.client(reqFrame(3, 1, tc.last, small))
			r.broker(respFrame(tc.last, false, resp))
			bad := hx(t, `7f ff ff ff 00 03 00 01 00 00 00 02 00 03 61 64 76`)
			bad = append(bad, bytes.Repeat([]byte{0xff}, 100)...) // not zeros: a correlation ID 0 follows 2^31-1
			r.client(bad)
			// a Metadata v1 request of 500 topics sent in pieces: the
			// window never holds it whole with the next frame's length
			var big []byte
			big = binary.BigEndian.AppendUint32(big, 500)
			for i := range 500 {
				big = binary.BigEndian.AppendUint16(big, 4)
				big = fmt.Appendf(big, "t%03d", i)
			}
			f := reqFrame(3, 1, tc.next, big)
			for off := 0; off < len(f); off += 512 {
				r.client(f[off:min(off+512, len(f))])
			}
			r.broker(respFrame(tc.next, false, resp))
			r.d.Finish()
			if got := r.sink.kinds(); len(got) != 2 || slices.ContainsFunc(got, func(k Kind) bool { return k != KindPaired }) {
				t.Fatalf("kinds %v, want 2 paired", got)
			}
			wantExchange(t, r.sink.ex[1], KindPaired, 3, 1, tc.next)
			if rs := r.sink.events(EventResync); len(rs) != 1 || rs[0].Bytes != 117 {
				t.Errorf("resyncs %+v", rs)
			}
		})
	}
}

// ApiVersions v3 response to correlation ID 1 listing Metadata twice: 0-7,
// then 0-12 (only a broken broker does this).
const apiVersionsV3RespDup = `
00 00 00 28          // length 40
00 00 00 01          // correlation id 1
00 00                // error code 0
05                   // ApiKeys: 4 entries (compact)
00 00 00 00 00 09 00 //   Produce 0-9, tagged fields
00 03 00 00 00 07 00 //   Metadata 0-7, tagged fields
00 12 00 00 00 03 00 //   ApiVersions 0-3, tagged fields
00 03 00 00 00 0c 00 //   Metadata again 0-12, tagged fields
00 00 00 00          // throttle time 0
00                   // tagged fields
`

// TestApiVersionsDuplicateKeyLastWins: of an API key listed twice, the
// broker's advertisement keeps the last listing, as Kafka's clients do
// (NodeApiVersions maps each listing by key); it kept the first, so a
// Metadata v12 request read as unadvertised (0-7) where a Java client
// would have sent it.
func TestApiVersionsDuplicateKeyLastWins(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, apiVersionsV3Req))
	r.broker(frame(t, apiVersionsV3RespDup))
	r.d.Close(r.c, reassembly.CloseFIN, pktTime(5))
	if got := r.sink.kinds(); len(got) != 1 {
		t.Fatalf("kinds %v, want one paired exchange", got)
	}
	if got := len(r.sink.ex[0].Advertised); got != 4 {
		t.Errorf("Exchange.Advertised has %d ranges, want the 4 listed", got)
	}
	adv := r.d.Advertised()
	if len(adv) != 1 {
		t.Fatalf("Advertised() = %+v", adv)
	}
	if rg, ok := adv[0].Range(3); !ok || rg != (protocol.Versions{Min: 0, Max: 12}) {
		t.Errorf("Range(Metadata) = %v %v, want 0-12 (the last listing)", rg, ok)
	}
	if rg, ok := adv[0].Range(18); !ok || rg != (protocol.Versions{Min: 0, Max: 3}) {
		t.Errorf("Range(ApiVersions) = %v %v, want 0-3", rg, ok)
	}
}

// TestReorderedPair: reassembly hands a request captured after its
// response (hold.go) first, each chunk with its own capture time: the pair
// is made by correlation ID, marked Reordered, its latency not measured;
// a request whose second half was captured after the response is
// reordered too; an ordinary pair is not.
func TestReorderedPair(t *testing.T) {
	r := newRig(t, Options{}, true)
	body := hx(t, `00 00 00 00 // Topics: 0`)
	resp := hx(t, `00 00 00 00 00 00 00 01 00 00 00 00`)
	at := func(dir reassembly.Dir, ms, frame int64, data []byte) {
		r.d.Data(r.c, dir, reassembly.Chunk{Data: data, Time: pktTime(ms), Frame: frame})
	}
	// corr 7: the request at 5 ms, its response at 3 ms.
	at(reassembly.AtoB, 5, 2, reqFrame(3, 1, 7, body))
	at(reassembly.BtoA, 3, 1, respFrame(7, false, resp))
	// corr 8: the request's first half at 6 ms, the response at 7 ms, the
	// request's second half at 8 ms.
	req := reqFrame(3, 1, 8, body)
	at(reassembly.AtoB, 6, 3, req[:6])
	at(reassembly.AtoB, 8, 5, req[6:])
	at(reassembly.BtoA, 7, 4, respFrame(8, false, resp))
	// corr 9: in order.
	at(reassembly.AtoB, 9, 6, reqFrame(3, 1, 9, body))
	at(reassembly.BtoA, 11, 7, respFrame(9, false, resp))
	r.d.Finish()
	if len(r.sink.ex) != 3 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	for i, corr := range []int32{7, 8, 9} {
		e := r.sink.ex[i]
		wantExchange(t, e, KindPaired, 3, 1, corr)
		if want := corr != 9; e.Reordered != want || hasNote(e, "reordered: response captured") != want {
			t.Errorf("corr %d: reordered %v, notes %q", corr, e.Reordered, e.Notes)
		}
	}
	if l := r.sink.ex[0].Latency(); l != -1 {
		t.Errorf("reordered latency %v", l)
	}
	if !hasNote(r.sink.ex[0], "captured 2ms before the end of its request") || !hasNote(r.sink.ex[1], "captured 1ms before") {
		t.Errorf("notes %q, %q", r.sink.ex[0].Notes, r.sink.ex[1].Notes)
	}
	if l := r.sink.ex[2].Latency(); l != 2*time.Millisecond {
		t.Errorf("in-order latency %v", l)
	}
	if s := r.d.Summary(); s.Reordered != 2 || s.Paired != 3 || s.Unexplained != 0 || s.Gaps != 0 {
		t.Errorf("summary %+v", s)
	}
}

// TestSASLAuthenticatePipelined: a SaslAuthenticate sent before the
// broker answered the SaslHandshake before it is a token of the mechanism
// that handshake asked for: a PLAIN-shaped token after a SCRAM-SHA-512
// handshake is withheld whole as not SCRAM, not read as PLAIN (it showed
// "mechanism=PLAIN user=u").
func TestSASLAuthenticatePipelined(t *testing.T) {
	r := newRig(t, Options{}, true)
	mech := "SCRAM-SHA-512"
	// SaslHandshake v1 request: Mechanism; response: ErrorCode 0,
	// Mechanisms [mech].
	hsBody := append([]byte{0, byte(len(mech))}, mech...)
	hsResp := append([]byte{0, 0, 0, 0, 0, 1, 0, byte(len(mech))}, mech...)
	// SaslAuthenticate v1 request: AuthBytes "\x00u\x00kwPipePW";
	// response: ErrorCode 0, ErrorMessage null, AuthBytes empty,
	// SessionLifetimeMs 0.
	tok := "\x00u\x00kwPipePW"
	authBody := append([]byte{0, 0, 0, byte(len(tok))}, tok...)
	authResp := []byte{0, 0, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	r.client(reqFrame(17, 1, 1, hsBody), reqFrame(36, 1, 2, authBody))
	r.broker(respFrame(1, false, hsResp), respFrame(2, false, authResp))
	r.d.Finish()
	if len(r.sink.ex) != 2 {
		t.Fatalf("%d exchanges", len(r.sink.ex))
	}
	auth := r.sink.ex[1]
	wantExchange(t, auth, KindPaired, 36, 1, 2)
	if auth.Mechanism != mech || auth.User != "" {
		t.Errorf("mechanism %q user %q, want %q and none", auth.Mechanism, auth.User, mech)
	}
	n := auth.Request.Tree.Root.Child("SaslAuthenticateRequest").Child("AuthBytes")
	if n == nil || n.Flags&protocol.FlagRedacted == 0 || len(n.Children) != 0 || !strings.Contains(n.Note, "SCRAM") {
		t.Errorf("AuthBytes %+v, want withheld whole as no SCRAM message", n)
	}
}
