package dissect

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"runtime"
	"testing"

	"github.com/kwire/kwire/reassembly"
)

// apiVersionsReq is an ApiVersions v3 request as librdkafka sends it
// (client id "rdkafka", ClientSoftwareName "librdkafka", version "2.3.0").
func apiVersionsReq(corr int32) []byte {
	body := []byte{11}
	body = append(body, "librdkafka"...)
	body = append(body, 6)
	body = append(body, "2.3.0"...)
	body = append(body, 0) // tagged fields
	b := reqFrame(18, 3, corr, body)
	return b
}

// apiVersionsResp is an ApiVersions v3 response to corr (response header
// v0, KIP-511) advertising ApiVersions 0-3.
func apiVersionsResp(corr int32) []byte {
	return respFrame(corr, false, []byte{
		0, 0, // error code 0
		2,                    // ApiKeys: 1 entry (compact)
		0, 18, 0, 0, 0, 3, 0, //   ApiVersions 0-3, tagged fields
		0, 0, 0, 0, // throttle time 0
		0, // tagged fields
	})
}

// pipeline sends n ApiVersions requests, all before any response, in
// packets of at most 1448 bytes, then their n responses, and ends the
// connection with a FIN.
func pipeline(t testing.TB, opts Options, n int) *rig {
	r := newRig(t, opts, true)
	send := func(dir reassembly.Dir, frame func(int32) []byte) {
		var pkt []byte
		for i := range n {
			f := frame(int32(i))
			if len(pkt)+len(f) > 1448 {
				r.send(dir, pkt)
				pkt = pkt[:0]
			}
			pkt = append(pkt, f...)
		}
		r.send(dir, pkt)
	}
	send(reassembly.AtoB, apiVersionsReq)
	send(reassembly.BtoA, apiVersionsResp)
	r.d.Close(r.c, reassembly.CloseFIN, pktTime(r.pkt+1))
	return r
}

// More requests pipelined than the old bound of 512 per connection pair,
// within the default bound on pending memory: 1,000 (tshark pairs them
// all; librdkafka's max.in.flight allows a million).
func TestPipelineThousand(t *testing.T) {
	r := pipeline(t, Options{}, 1000)
	s := r.d.Summary()
	if s.Paired != 1000 || s.Unanswered != 0 || s.Orphans != 0 || s.Problems.Any() {
		t.Fatalf("summary %+v", s)
	}
	for i, e := range r.sink.ex {
		wantExchange(t, e, KindPaired, 18, 3, int32(i))
		if e.Request.Tree == nil || e.Request.Tree.Err != nil || e.Response.Tree == nil || e.Response.Tree.Err != nil {
			t.Fatalf("exchange %d not decoded: %+v", i, e)
		}
	}
	if r.d.spill.held != 0 || r.d.spill.meta != 0 {
		t.Errorf("pending memory left counted: %d + %d bytes", r.d.spill.held, r.d.spill.meta)
	}
}

// 100,000 pipelined requests need more than the default 16 MiB: the
// oldest are given up, each counted and noted; with a larger bound (or
// none) they all pair.
func TestPipelineHundredThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 exchanges")
	}
	const n = 100_000
	noDecode := func(int16, int16) bool { return false } // pairing is what is tested
	r := pipeline(t, Options{Decode: noDecode}, n)
	s := r.d.Summary()
	fit := DefaultPendingMemory / (pendingCost + int64(len("kwire")+len(apiVersionsReq(0))))
	if s.Evicted == 0 || s.Evicted != s.Unanswered || s.Paired+s.Evicted != n || s.Paired < fit-1 || s.Paired > fit+pendingFloor {
		t.Fatalf("default bound: %d paired, %d evicted, %d unanswered, %d orphans (about %d fit)", s.Paired, s.Evicted, s.Unanswered, s.Orphans, fit)
	}
	// The given-up requests are the oldest; their responses are orphans
	// then, and say so.
	if s.Orphans != s.Evicted {
		t.Errorf("%d orphans for %d evicted", s.Orphans, s.Evicted)
	}
	first := r.sink.ex[0]
	wantExchange(t, first, KindUnanswered, 18, 3, 0)
	if !hasNote(first, "given up unanswered: the requests awaiting responses needed more than the 16 MiB of memory allowed") {
		t.Errorf("notes %q", first.Notes)
	}
	for _, opts := range []Options{{PendingMemory: 128 << 20, Decode: noDecode}, {PendingMemory: -1, Decode: noDecode}} {
		r := pipeline(t, opts, n)
		if s := r.d.Summary(); s.Paired != n || s.Problems.Any() {
			t.Errorf("PendingMemory %d: %d paired, problems %+v", opts.PendingMemory, s.Paired, s.Problems)
		}
	}
}

// The bound counts frames and bookkeeping: with room for pendingFloor+2
// pending requests, two more give up the two oldest.
func TestPendingEvictionByBytes(t *testing.T) {
	size := int64(len("kwire") + len(apiVersionsReq(0))) // the client id counts too
	const fit = pendingFloor + 2
	r := newRig(t, Options{PendingMemory: fit * (pendingCost + size)}, true)
	for i := range fit + 2 {
		r.client(apiVersionsReq(int32(i)))
	}
	if len(r.sink.ex) != 2 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	for i, e := range r.sink.ex {
		wantExchange(t, e, KindUnanswered, 18, 3, int32(i))
		if !hasNote(e, "given up unanswered") {
			t.Errorf("notes %q", e.Notes)
		}
	}
	if n := r.d.Summary().Evicted; n != 2 {
		t.Errorf("evicted %d", n)
	}
	// The others still pair.
	for i := 2; i < fit+2; i++ {
		r.broker(apiVersionsResp(int32(i)))
	}
	if s := r.d.Summary(); s.Paired != fit || s.Orphans != 0 {
		t.Errorf("summary %+v", s)
	}
	// However small the bound, a connection's first pendingFloor pending
	// requests are kept.
	r = newRig(t, Options{PendingMemory: 1, SpillDir: t.TempDir()}, true)
	for i := range pendingFloor {
		r.client(apiVersionsReq(int32(i)))
	}
	if len(r.sink.ex) != 0 {
		t.Errorf("%d exchanges given up below the floor", len(r.sink.ex))
	}
}

// TestPendingCost measures what a pending request takes in memory besides
// its frame: it must stay below pendingCost, which the bound relies on.
// Frames of spillMin bytes and more are spilled (their records stay), the
// smaller ones are counted as they are.
func TestPendingCost(t *testing.T) {
	const n = 20_000
	for _, spill := range []bool{false, true} {
		body := []byte{0, 0, 0, 0} // Metadata v1: Topics empty
		if spill {
			body = append(body, make([]byte, spillMin)...) // left over: fine for pairing
		}
		frames := make([][]byte, n)
		for i := range frames {
			frames[i] = reqFrame(3, 1, int32(i), body)
		}
		opts := Options{PendingMemory: -1}
		if spill {
			// Room for the bookkeeping only: the frames are spilled.
			opts = Options{PendingMemory: n * (pendingCost + int64(len("kwire"))), SpillDir: t.TempDir()}
		}
		r := newRig(t, opts, true)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for _, f := range frames {
			r.client(f)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if r.d.pending() != n {
			t.Fatalf("%d pending", r.d.pending())
		}
		// Frame bytes in memory, and the small buffers the spilled
		// frames left in the pool (at most smallPoolBytes in all, not
		// per request).
		kept := r.d.spill.held + int64(r.d.spill.pool.smallBytes)
		per := (int64(after.HeapAlloc) - int64(before.HeapAlloc) - kept) / n
		t.Logf("spill %v: %d bytes per pending request besides its frame", spill, per)
		if per > pendingCost {
			t.Errorf("spill %v: %d bytes per pending request, pendingCost says %d", spill, per, pendingCost)
		}
		if spill && r.d.spill.frames < n/2 {
			t.Errorf("%d frames spilled", r.d.spill.frames)
		}
		r.d.Finish()
		runtime.KeepAlive(frames)
	}
}

func (d *Dissector) pending() int {
	n := 0
	for _, c := range d.conns {
		n += c.pending.len()
	}
	return n
}

// With many connections each holding requests, the floors share the
// bound: each connection keeps fewer than pendingFloor (down to its
// newest), so that what the bound does not cover is one request per
// connection, not pendingFloor of them (30,000 connections × 32 requests
// took 870 MB against a 16 MiB bound).
func TestPendingFloorShared(t *testing.T) {
	const conns, each = 2000, 32
	sink := &recSink{}
	d := New(Options{PendingMemory: 64 << 10, SpillDir: t.TempDir()}, sink)
	var pkt int64
	for i := range conns {
		c := &reassembly.Conn{Index: i, A: netip.AddrPortFrom(clientAddr.Addr(), uint16(10000+i)), B: brokerAddr, SawSYN: true}
		d.Open(c)
		for j := range each {
			pkt++
			d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: apiVersionsReq(int32(j)), Time: pktTime(pkt), Frame: pkt})
		}
	}
	held := d.spill.held + d.spill.meta
	// One request per connection: its bookkeeping, its client ID and its
	// frame (smaller than spillMin, held in memory).
	one := int64(pendingCost + len("librdkafka") + len(apiVersionsReq(0)))
	if bound := d.spill.budget + conns*one; held > bound {
		t.Errorf("pending requests hold %d bytes, past the bound and one request per connection, %d", held, bound)
	}
	if len(d.busy) != conns {
		t.Errorf("%d connections counted holding requests, want %d", len(d.busy), conns)
	}
	s := d.Summary()
	if s.Evicted == 0 || d.floor() != 1 {
		t.Errorf("evicted %d, floor %d: want requests given up and a floor of 1", s.Evicted, d.floor())
	}
	d.Finish()
	if len(d.busy) != 0 {
		t.Errorf("%d connections still counted after Finish", len(d.busy))
	}
}

// TestConnStateCost: what dissect holds for an open connection (its conn,
// frame splitters, addresses), besides the data other bounds count (the
// frame being reassembled, pending requests), stays within half of
// reassembly.ConnCost: the other half is reassembly's and gopacket's
// (reassembly's TestConnCost).
func TestConnStateCost(t *testing.T) {
	const n = 20000
	d := New(Options{}, &recSink{})
	req := apiVersionsReq(1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	conns := make([]*reassembly.Conn, n)
	for i := range conns {
		c := &reassembly.Conn{Index: i, A: netip.AddrPortFrom(clientAddr.Addr(), uint16(10000+i%50000)), B: brokerAddr, SawSYN: true}
		conns[i] = c
		d.Open(c)
		// A request's first bytes: the connection is Kafka, its splitter
		// waits for the rest.
		d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: req[:6], Time: pktTime(int64(i)), Frame: int64(i + 1)})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes per open connection (dissect)", per)
	if per > reassembly.ConnCost/2 {
		t.Errorf("%d bytes per open connection, past %d", per, reassembly.ConnCost/2)
	}
	runtime.KeepAlive(conns)
	runtime.KeepAlive(d)
}

// TestResyncBytesBounded: connections that resynchronise over garbage
// keep the skipped bytes they show in their events within maxEventHeld in
// all, however many there are; each event still counts every byte.
func TestResyncBytesBounded(t *testing.T) {
	const conns = 400
	d := New(Options{Ports: []uint16{brokerAddr.Port()}}, &recSink{})
	garbage := bytes.Repeat([]byte{0xff}, maxEventData)
	cs := make([]*reassembly.Conn, conns)
	for i := range cs {
		c := &reassembly.Conn{Index: i, A: netip.AddrPortFrom(clientAddr.Addr(), uint16(10000+i)), B: brokerAddr, SawSYN: true}
		cs[i] = c
		d.Open(c)
		d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: garbage, Time: pktTime(int64(i)), Frame: int64(i + 1)})
	}
	if d.eventHeld > maxEventHeld {
		t.Errorf("%d bytes kept for resync events, past %d", d.eventHeld, maxEventHeld)
	}
	d.Finish()
	if d.eventHeld != 0 {
		t.Errorf("%d bytes still counted after Finish", d.eventHeld)
	}
	if s := d.Summary(); s.ResyncBytes != conns*maxEventData {
		t.Errorf("resync bytes %d, want %d", s.ResyncBytes, conns*maxEventData)
	}
}

// TestPartialMemoryBound: frames partly arrived on many connections at
// once stay within Options.PartialMemory in all: past it the connection
// whose bytes passed it gives its frame up as cut (counted in
// Problems.PartialCapped), and skips the rest of it by its length, so the
// next frame on it is read again.
func TestPartialMemoryBound(t *testing.T) {
	const conns, bound = 200, 1 << 20
	d := New(Options{PartialMemory: bound}, &recSink{})
	big := reqFrame(3, 12, 1, make([]byte, 60<<10)) // a Metadata request of 60 KiB
	cs := make([]*reassembly.Conn, conns)
	for i := range cs {
		c := &reassembly.Conn{Index: i, A: netip.AddrPortFrom(clientAddr.Addr(), uint16(10000+i)), B: brokerAddr, SawSYN: true}
		cs[i] = c
		d.Open(c)
		d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: big[:30<<10], Time: pktTime(int64(i)), Frame: int64(i + 1)})
		if d.partial > bound+64<<10 {
			t.Fatalf("connection %d: %d bytes held, past the bound", i, d.partial)
		}
	}
	s := d.Summary()
	if s.PartialCapped == 0 || s.Truncated != s.PartialCapped {
		t.Errorf("partial capped %d, truncated %d: want frames given up, each reported cut", s.PartialCapped, s.Truncated)
	}
	// The rest of a frame given up is skipped; the request after it is
	// read (the last connection's was given up: its bytes passed the
	// bound).
	c := cs[conns-1]
	before := d.Summary().Requests
	d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: big[30<<10:], Time: pktTime(1000), Frame: 1000})
	d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: apiVersionsReq(7), Time: pktTime(1001), Frame: 1001})
	if got := d.Summary(); got.Requests != before+1 || got.BadFrames != 0 || got.Resyncs != 0 {
		t.Errorf("after the frame given up: %+v", got.Problems)
	}
	d.Finish()
	if d.partial != 0 {
		t.Errorf("%d bytes still counted after Finish", d.partial)
	}
}

// TestConnStatePeerSized: what an open connection keeps of what its peers
// chose the size of (the client id reused by its next request, the SASL
// mechanism a SaslHandshake named, the ranges an ApiVersions response
// advertised, also kept per broker) stays within ConnCost's half that is
// dissect's, however long the peers made them: 32 KiB client ids and
// mechanisms and an advertisement of 20,000 ranges cost 200 KiB a
// connection (an adversarial trial: 4,000 such connections took 312 MB
// where the flags bounded kwire to 104 MiB).
func TestConnStatePeerSized(t *testing.T) {
	connStateCost(t, 5, 90) // the allocations made once (schemas, pools)
	normal, _, _ := connStateCost(t, 5, 90)
	per, d, conns := connStateCost(t, 30000, 20000)
	t.Logf("%d bytes per open connection (dissect), %d with a client id and mechanism of 5 bytes and 90 ranges", per, normal)
	if per > normal+peerSizedSlack {
		t.Errorf("%d bytes per open connection, past %d (%d with a client id and mechanism of 5 bytes and 90 ranges)", per, normal+peerSizedSlack, normal)
	}
	// What is kept still answers: the mechanism's kind, the ranges of the
	// keys a request can have.
	cs := d.conns[conns[0]]
	if cs == nil {
		t.Fatal("no state for the first connection")
	}
	if got := len(cs.mech); got > maxKeptMechanism+len("…") {
		t.Errorf("mechanism kept: %d bytes", got)
	}
	if adv := cs.advertised(); adv == nil || !adv.Holds(3) || !adv.Holds(0) {
		t.Errorf("advertisement kept: %+v", adv)
	} else if r, ok := adv.Range(3); !ok || r.Max != 3 {
		t.Errorf("Metadata range kept: %v %v", r, ok)
	} else if adv.Holds(lenientMaxKey - 1) {
		t.Errorf("a capped advertisement answers for key %d past its last kept key %d", lenientMaxKey-1, adv.Ranges[len(adv.Ranges)-1].Key)
	}
	runtime.KeepAlive(conns)
	runtime.KeepAlive(d)
}

// peerSizedSlack is what a connection's peers may add to its state by
// making their strings and advertisements long: the mechanism's kept
// bytes and the ranges kept past the 90 a broker advertises.
const peerSizedSlack = maxKeptMechanism + 16 + (maxKeptRanges-90)*6

// connStateCost opens 300 connections, each to a broker of its own (the
// broker table keeps its advertisement too) and on each a SaslHandshake
// v1 naming a mechanism of strLen bytes with a client id as long, answered
// with no error, and an ApiVersions v0 answered with nRanges ranges (every
// key repeated), and returns the heap each connection holds.
func connStateCost(t *testing.T, strLen, nRanges int) (int64, *Dissector, []*reassembly.Conn) {
	const n = 300
	long := bytes.Repeat([]byte{'x'}, strLen)
	hs := []byte{0, 0, 0, 0, 0, 17, 0, 1, 0, 0, 0, 1, byte(len(long) >> 8), byte(len(long))}
	hs = append(hs, long...)
	hs = append(hs, byte(len(long)>>8), byte(len(long)))
	hs = append(hs, long...)
	binary.BigEndian.PutUint32(hs, uint32(len(hs)-4))
	hsResp := respFrame(1, false, []byte{0, 0, 0, 0, 0, 1, 0, 5, 'P', 'L', 'A', 'I', 'N'})
	body := binary.BigEndian.AppendUint16(nil, 0)
	body = binary.BigEndian.AppendUint32(body, uint32(nRanges))
	for i := range nRanges {
		body = binary.BigEndian.AppendUint16(body, uint16(i%lenientMaxKey))
		body = append(body, 0, 0, 0, 3)
	}
	avReq := reqFrame(18, 0, 2, nil)
	avResp := respFrame(2, false, body)

	d := New(Options{}, &countSink{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	conns := make([]*reassembly.Conn, n)
	for i := range conns {
		br := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 9, byte(i >> 8), byte(i)}), 9092)
		c := &reassembly.Conn{Index: i, A: netip.AddrPortFrom(clientAddr.Addr(), uint16(10000+i)), B: br, SawSYN: true}
		conns[i] = c
		d.Open(c)
		f := int64(4 * i)
		d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: hs, Time: pktTime(f), Frame: f + 1})
		d.Data(c, reassembly.BtoA, reassembly.Chunk{Data: hsResp, Time: pktTime(f + 1), Frame: f + 2})
		d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: avReq, Time: pktTime(f + 2), Frame: f + 3})
		d.Data(c, reassembly.BtoA, reassembly.Chunk{Data: avResp, Time: pktTime(f + 3), Frame: f + 4})
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	return (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n, d, conns
}
