package dissect

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kwire/kwire/reassembly"
)

// pipelineStreams builds n Produce v7 requests (acks=1, a payload of size
// bytes each) and their responses, as two byte streams.
func pipelineStreams(n, size int) (client, broker []byte) {
	for i := range n {
		body := make([]byte, 0, size+16)
		body = append(body, 0xff, 0xff)       // TransactionalId null
		body = append(body, 0, 1)             // Acks 1
		body = append(body, 0, 0, 0x75, 0x30) // TimeoutMs 30000
		body = append(body, 0, 0, 0, 0)       // TopicData: 0
		body = append(body, make([]byte, size)...)
		client = append(client, reqFrame(0, 7, int32(i), body)...)
		broker = append(broker, respFrame(int32(i), false, []byte{0, 0, 0, 0, 0, 0, 0, 0})...)
	}
	return client, broker
}

// feedStreams sends the streams in MSS-sized packets, alternating a batch
// of requests and the responses to it.
func feedStreams(d *Dissector, c *reassembly.Conn, client, broker []byte, n int) {
	const mss = 1448
	var pkt int64
	ci, bi := 0, 0
	for ci < len(client) || bi < len(broker) {
		for k := 0; k < 8 && ci < len(client); k++ {
			end := min(ci+mss, len(client))
			pkt++
			d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: client[ci:end], Frame: pkt, Time: pktTime(pkt)})
			ci = end
		}
		// Answer only the requests sent completely (frames are equal-sized).
		answered := ci / (len(client) / n) * (len(broker) / n)
		for bi < answered {
			end := min(bi+mss, answered)
			pkt++
			d.Data(c, reassembly.BtoA, reassembly.Chunk{Data: broker[bi:end], Frame: pkt, Time: pktTime(pkt)})
			bi = end
		}
	}
}

type countSink struct{ n int }

func (s *countSink) Exchange(*Exchange) { s.n++ }
func (s *countSink) Event(*Event)       {}

// BenchmarkSplitter measures splitting and pairing (no body decoding) of
// pipelined 1 KiB Produce requests and their responses in MSS packets.
func BenchmarkSplitter(b *testing.B) {
	client, broker := pipelineStreams(1000, 1024)
	b.SetBytes(int64(len(client) + len(broker)))
	b.ReportAllocs()
	for b.Loop() {
		sink := &countSink{}
		d := New(Options{Decode: func(int16, int16) bool { return false }}, sink)
		c := &reassembly.Conn{A: clientAddr, B: brokerAddr, SawSYN: true}
		d.Open(c)
		feedStreams(d, c, client, broker, 1000)
		d.Finish()
		if sink.n != 1000 {
			b.Fatalf("%d exchanges", sink.n)
		}
	}
}

// BenchmarkDissect is BenchmarkSplitter with every frame decoded.
func BenchmarkDissect(b *testing.B) {
	client, broker := pipelineStreams(1000, 1024)
	b.SetBytes(int64(len(client) + len(broker)))
	b.ReportAllocs()
	for b.Loop() {
		sink := &countSink{}
		d := New(Options{}, sink)
		c := &reassembly.Conn{A: clientAddr, B: brokerAddr, SawSYN: true}
		d.Open(c)
		feedStreams(d, c, client, broker, 1000)
		d.Finish()
		if sink.n != 1000 {
			b.Fatalf("%d exchanges", sink.n)
		}
	}
}

func TestPipelineStreamsPair(t *testing.T) {
	client, broker := pipelineStreams(50, 3000)
	sink := &recSink{}
	d := New(Options{}, sink)
	c := &reassembly.Conn{A: clientAddr, B: brokerAddr, SawSYN: true}
	d.Open(c)
	feedStreams(d, c, client, broker, 50)
	d.Finish()
	if len(sink.ex) != 50 {
		t.Fatalf("%d exchanges", len(sink.ex))
	}
	for i, e := range sink.ex {
		wantExchange(t, e, KindPaired, 0, 7, int32(i))
		if e.Request.Size() != 4+int(binary.BigEndian.Uint32(e.Request.Bytes)) || e.Request.LastPacket <= e.Request.FirstPacket {
			t.Fatalf("request %d: %d bytes over packets %d-%d", i, e.Request.Size(), e.Request.FirstPacket, e.Request.LastPacket)
		}
	}
	if s := d.Summary(); s.Resyncs != 0 || s.BadFrames != 0 || s.Frames != 100 {
		t.Errorf("summary %+v", s)
	}
}

// FuzzSplitter feeds arbitrary bytes, cut into packets of arbitrary sizes,
// in both directions of a Kafka-port connection and checks invariants:
// no panic, every frame's length prefix matches its size, packet numbers
// and times are ordered, every exchange has a request or a response.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte{}, uint8(7), false)
	f.Add(cat(hx(f, apiVersionsV3Req), hx(f, metadataV12Req)), uint8(5), true)
	f.Add(cat(hx(f, saslHandshakeV0Req), hx(f, saslHandshakeV0Resp), hx(f, plainToken)), uint8(13), true)
	f.Add(cat(hx(f, `ff ff ff ff 00 01`), hx(f, produceAcks0)), uint8(1), false)
	f.Fuzz(fuzzSplit)
}

func fuzzSplit(t *testing.T, data []byte, cut uint8, syn bool) {
	{
		sink := &recSink{}
		d := New(Options{PendingMemory: 8 * pendingCost}, sink) // a few pending requests: evictions
		c := &reassembly.Conn{A: clientAddr, B: brokerAddr, SawSYN: syn}
		d.Open(c)
		step := int(cut%32) + 1
		var pkt int64
		for i := 0; i < len(data); i += step {
			end := min(i+step, len(data))
			pkt++
			dir := reassembly.Dir((i / step) % 2 & int(cut>>7))
			if cut&0x40 != 0 && pkt%5 == 0 {
				d.Gap(c, dir, int64(cut%9)-1, pktTime(pkt))
			}
			d.Data(c, dir, reassembly.Chunk{Data: data[i:end], Frame: pkt, Time: pktTime(pkt)})
		}
		d.Finish()
		for _, e := range sink.ex {
			if e.Request == nil && e.Response == nil {
				t.Fatalf("empty exchange %+v", e)
			}
			for _, fr := range []*Frame{e.Request, e.Response} {
				if fr == nil {
					continue
				}
				if fr.FirstPacket > fr.LastPacket || fr.End.Before(fr.Time) || len(fr.Bytes) < 4 {
					t.Fatalf("frame packets %d-%d times %v-%v size %d", fr.FirstPacket, fr.LastPacket, fr.Time, fr.End, len(fr.Bytes))
				}
				if n := int(binary.BigEndian.Uint32(fr.Bytes)); n != len(fr.Bytes)-4 && !hasNote(e, "incomplete") {
					t.Fatalf("length prefix %d, %d payload bytes", n, len(fr.Bytes)-4)
				}
			}
		}
		s := d.Summary()
		if s.Exchanges != int64(len(sink.ex)) || s.Paired+s.NoResponse+s.Unanswered+s.Orphans+s.SASL != s.Exchanges {
			t.Fatalf("summary counts %+v for %d exchanges", s, len(sink.ex))
		}
		for _, ev := range sink.events(EventResync) {
			if ev.Withheld && len(ev.Data) > 0 || !ev.Withheld && int64(len(ev.Data)) != min(ev.Bytes, maxEventData) {
				t.Fatalf("resync of %d bytes carries %d", ev.Bytes, len(ev.Data))
			}
		}
	}
	fuzzRecycled(t, data, cut, syn)
}

// fuzzRecycled: recycling exchanges and connections changes nothing the
// sink sees. The bytes go through a connection that is then closed, with
// a sink that keeps every exchange; and through two such connections one
// after the other, with a sink that recycles each exchange once it has
// noted what it holds (exchangeDigest), so that the second connection
// reuses the first one's state and both reuse recycled exchanges, frames,
// trees and facts.
func fuzzRecycled(t *testing.T, data []byte, cut uint8, syn bool) {
	feed := func(d *Dissector, index int) {
		c := &reassembly.Conn{Index: index, A: clientAddr, B: brokerAddr, SawSYN: syn}
		d.Open(c)
		step := int(cut%32) + 1
		var pkt int64
		for i := 0; i < len(data); i += step {
			end := min(i+step, len(data))
			pkt++
			dir := reassembly.Dir((i / step) % 2 & int(cut>>7))
			if cut&0x40 != 0 && pkt%5 == 0 {
				d.Gap(c, dir, int64(cut%9)-1, pktTime(pkt))
			}
			d.Data(c, dir, reassembly.Chunk{Data: data[i:end], Frame: pkt, Time: pktTime(pkt)})
		}
		d.Close(c, reassembly.CloseFIN, pktTime(pkt+1))
	}
	kept := &recSink{}
	feed(New(Options{PendingMemory: 8 * pendingCost}, kept), 0)
	var want []string
	for _, e := range kept.ex {
		want = append(want, exchangeDigest(e))
	}
	rec := &digestSink{}
	d := New(Options{PendingMemory: 8 * pendingCost}, rec)
	for round := range 2 {
		rec.got = rec.got[:0]
		feed(d, round)
		if !slices.Equal(rec.got, want) {
			t.Fatalf("connection %d, exchanges recycled:\n%s\nkept:\n%s", round, strings.Join(rec.got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// digestSink notes each exchange's digest, then recycles it.
type digestSink struct{ got []string }

func (s *digestSink) Exchange(e *Exchange) { s.got = append(s.got, exchangeDigest(e)); e.Recycle() }
func (s *digestSink) Event(*Event)         {}

// exchangeDigest says what an exchange holds: its kind, header, notes,
// frames (packets, times, bytes, how they decoded) and facts.
func exchangeDigest(e *Exchange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d v%d corr=%d client=%q/%v mech=%q user=%q tls=%v adv=%v guess=%+v notes=%q",
		e.Kind, e.APIKey, e.APIVersion, e.CorrelationID, e.ClientID, e.ClientIDNull, e.Mechanism, e.User, e.TLS, e.Advertised, e.Guess, e.Notes)
	for _, f := range [...]*Frame{e.Request, e.Response} {
		if f == nil {
			b.WriteString(" -")
			continue
		}
		fmt.Fprintf(&b, " [%d-%d %v %v %x withheld=%v failed=%v unknown=%v", f.FirstPacket, f.LastPacket, f.Time, f.End, f.Bytes, f.Withheld, f.Failed(), f.Unknown())
		if f.Tree != nil {
			fmt.Fprintf(&b, " err=%v first=%v", f.Tree.Err, f.Tree.FirstError() != nil)
		}
		b.WriteString("]")
	}
	fx := e.Facts()
	fmt.Fprintf(&b, " facts=%d/%d topics=%+v errors=%+v group=%q", fx.Key, fx.Version, fx.Topics, fx.Errors, fx.Group.ID)
	return b.String()
}

// TestSplitterAllocBudget pins the allocations per exchange of splitting
// and pairing (no decoding): each frame's buffer and Frame, the Exchange,
// and amortised queue growth.
func TestSplitterAllocBudget(t *testing.T) {
	const n = 200
	client, broker := pipelineStreams(n, 512)
	allocs := testing.AllocsPerRun(5, func() {
		d := New(Options{Decode: func(int16, int16) bool { return false }}, &countSink{})
		c := &reassembly.Conn{A: clientAddr, B: brokerAddr, SawSYN: true}
		d.Open(c)
		feedStreams(d, c, client, broker, n)
		d.Finish()
	})
	if per := allocs / n; per > 7 {
		t.Errorf("%.1f allocations per exchange, budget 7", per)
	}
}

func TestDecodeFilter(t *testing.T) {
	r := newRig(t, Options{Decode: func(key, _ int16) bool { return key != 3 }}, true)
	r.client(frame(t, apiVersionsV3Req))
	r.broker(frame(t, apiVersionsV3Resp))
	r.client(frame(t, metadataV12Req))
	r.broker(frame(t, metadataV12Resp))
	r.d.Finish()
	if len(r.sink.ex) != 2 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	av, md := r.sink.ex[0], r.sink.ex[1]
	if av.Request.Tree == nil || av.Response.Tree == nil || md.Request.Tree != nil || md.Response.Tree != nil {
		t.Errorf("trees: ApiVersions %v/%v, Metadata %v/%v", av.Request.Tree != nil, av.Response.Tree != nil, md.Request.Tree != nil, md.Response.Tree != nil)
	}
	if len(av.Advertised) != 3 {
		t.Errorf("advertised ranges need no tree: %v", av.Advertised)
	}
}
