package reassembly

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// feedSegs runs segs through r packet by packet, calling after (if not nil)
// after each.
func feedSegs(t *testing.T, r *runner, segs []seg, after func(i int)) {
	t.Helper()
	src := newSliceSource(t, layers.LinkTypeEthernet, segs)
	for i := 0; ; i++ {
		data, ci, link, err := src.ReadPacket()
		if err == io.EOF {
			break
		}
		r.packet(data, ci, link)
		if after != nil {
			after(i)
		}
	}
}

// TestHeldResponseFollowsLateRequest: a response written before its
// request (merged captures, multi-queue NICs), the request split in two
// segments written out of order as well: the hole its acknowledgement
// shows is held, the response's calls wait, and the handler sees the
// request's bytes, then the response's, each with its own packet and
// capture time; no gap.
func TestHeldResponseFollowsLateRequest(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	first := v.next(true, "request, first half; ")
	second := v.next(true, "second half")
	v.send(false, "the response") // frame 4, acknowledging both halves
	v.add(second)                 // frame 5
	v.add(first)                  // frame 6
	v.send(true, "next request")  // frame 7
	v.send(false, "next response")
	for _, sync := range []bool{false, true} {
		h, sum := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{Synchronous: sync})
		want := []string{"open 0 10.0.0.1:1>10.0.0.2:2",
			`data 0 0 f6 "request, first half; "`, `data 0 0 f5 "second half"`,
			`data 0 1 f4 "the response"`,
			`data 0 0 f7 "next request"`, `data 0 1 f8 "next response"`, "close 0 end of capture"}
		if !slices.Equal(h.log, want) {
			t.Errorf("sync=%v: log\n%s\nwant\n%s", sync, strings.Join(h.log, "\n"), strings.Join(want, "\n"))
		}
		if st := h.conns[0].Stats; st.Gaps != 0 || st.GapBytes != 0 {
			t.Errorf("sync=%v: gaps %d (%d bytes)", sync, st.Gaps, st.GapBytes)
		}
		// The response keeps its own capture time, before the request's.
		if resp, req := h.chunks[2], h.chunks[0]; resp.frame != 4 || !resp.time.Before(req.time) || resp.offset != 0 {
			t.Errorf("sync=%v: response chunk %+v, request %+v", sync, resp, req)
		}
		if sum.TCPPackets != int64(len(v.segs)) {
			t.Errorf("sync=%v: %d TCP packets", sync, sum.TCPPackets)
		}
	}
}

// TestHeldHoleLostReportedAfterWindow: a request the capture really lost
// is a gap all the same: once Options.ReorderWindow of capture time has
// passed (a packet of another connection shows it), stamped with the time
// of the acknowledgement, before the response's bytes.
func TestHeldHoleLostReportedAfterWindow(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.next(true, "lost request")
	v.send(false, "its response")
	w := newConv("10.0.0.3:3", "10.0.0.2:2", 5000, 7000)
	w.at = v.at
	w.step = 3 * time.Millisecond
	w.handshake()         // at +3, +6, +9 ms: within the window
	w.send(true, "other") // +12 ms: past it
	segs := append(slices.Clone(v.segs), w.segs...)
	h := newRec()
	r := newRunner(Options{Synchronous: true}, h)
	gapAt := -1
	feedSegs(t, r, segs, func(i int) {
		if gapAt < 0 && slices.Contains(h.log, "gap 0 0 12") {
			gapAt = i
		}
	})
	if gapAt != len(segs)-1 {
		t.Fatalf("gap reported after packet %d, want %d (log %v)", gapAt, len(segs)-1, h.log)
	}
	i := slices.Index(h.log, "gap 0 0 12")
	if h.log[i+1] != `data 0 1 f4 "its response"` {
		t.Errorf("after the gap: %v", h.log[i+1:])
	}
	r.flushAll()
	if st := h.conns[0].Stats; st.Gaps != 1 || st.GapBytes != 12 {
		t.Errorf("gaps %d (%d bytes)", st.Gaps, st.GapBytes)
	}
}

// TestHoldBounded: a peer that keeps acknowledging bytes never sent while
// it sends (hostile, or a capture of one direction's loss) holds no more
// than Options.MaxHeldBytes (and one segment) of its calls, and no longer
// than holdPackets packets when the capture's clock stands still; every
// byte it sent is delivered, in order, after one gap.
func TestHoldBounded(t *testing.T) {
	const bound = 64 << 10
	const n = 2000
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.step = 0        // the clock stands still
	v.cseq += 1 << 20 // acknowledged, never sent
	payload := strings.Repeat("x", 1000)
	for range n {
		v.send(false, payload)
	}
	h := newRec()
	r := newRunner(Options{Synchronous: true, MaxHeldBytes: bound}, h)
	var peak int64
	feedSegs(t, r, v.segs, func(int) { peak = max(peak, r.heldBytes) })
	r.flushAll()
	if peak > bound+1000+heldEventCost {
		t.Errorf("held %d bytes at most, bound %d", peak, bound)
	}
	if peak == 0 {
		t.Errorf("nothing held")
	}
	if got := h.stream(0, BtoA); len(got) != n*1000 {
		t.Errorf("delivered %d bytes of %d", len(got), n*1000)
	}
	if gaps := h.filter("gap 0 0"); len(gaps) != 1 || gaps[0] != "gap 0 0 1048576" {
		t.Errorf("gaps %v", gaps)
	}
	if r.heldBytes != 0 || len(r.holds) != 0 {
		t.Errorf("after the end: %d bytes held by %d", r.heldBytes, len(r.holds))
	}

	// Acknowledgements alone, the clock standing still: given up after
	// holdPackets packets.
	v = newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.step = 0
	v.cseq += 1000
	for range 2 * holdPackets {
		v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "A"})
	}
	h = newRec()
	r = newRunner(Options{Synchronous: true}, h)
	gapAt := -1
	feedSegs(t, r, v.segs, func(i int) {
		if gapAt < 0 && len(h.filter("gap")) > 0 {
			gapAt = i
		}
	})
	if gapAt < 0 || gapAt > holdPackets+10 {
		t.Errorf("gap after packet %d of %d, want about %d", gapAt, len(v.segs), holdPackets+3)
	}
}

// TestHoldPipelined: a client pipelining requests through a merge whose
// client side is 3 ms late, each answered 0.5 ms after it was sent: the
// capture shows every response 2.5 ms before its request, and the broker's
// latest acknowledgement is always ahead of the client's bytes; each
// response is delivered right after its own request all the same, with
// no gap, though the hold never ends before the last.
func TestHoldPipelined(t *testing.T) {
	const n = 20
	c, s := ap("10.0.0.1:1"), ap("10.0.0.2:2")
	var segs []seg
	cseq, sseq := uint32(100), uint32(900)
	segs = append(segs, seg{src: c, dst: s, seq: cseq, flags: "S"}, seg{src: s, dst: c, seq: sseq, ack: cseq + 1, flags: "SA"},
		seg{src: c, dst: s, seq: cseq + 1, ack: sseq + 1, flags: "A"})
	for i := range segs {
		segs[i].at = time.Duration(i) * time.Microsecond
	}
	cseq, sseq = cseq+1, sseq+1
	for i := range n {
		req, resp := fmt.Sprintf("request %02d", i), fmt.Sprintf("response %02d", i)
		sent := time.Millisecond + time.Duration(i)*time.Millisecond
		segs = append(segs,
			seg{src: c, dst: s, seq: cseq, ack: sseq, flags: "PA", payload: []byte(req), at: sent + 3*time.Millisecond},
			seg{src: s, dst: c, seq: sseq, ack: cseq + uint32(len(req)), flags: "PA", payload: []byte(resp), at: sent + 500*time.Microsecond})
		cseq += uint32(len(req))
		sseq += uint32(len(resp))
	}
	slices.SortStableFunc(segs, func(a, b seg) int { return int(a.at - b.at) })
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, segs), Options{})
	var got []string
	for _, l := range h.log {
		if strings.HasPrefix(l, "data") || strings.HasPrefix(l, "gap") {
			got = append(got, l[strings.Index(l, `"`)+1:len(l)-1])
		}
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("request %02d", i), fmt.Sprintf("response %02d", i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("delivered\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if st := h.conns[0].Stats; st.Gaps != 0 {
		t.Errorf("%d gaps", st.Gaps)
	}
}

// TestSynAckFirst: a merge whose client side is late writes the broker's
// SYN-ACK, its acknowledgement of the request and its FIN before the
// client's SYN: A is the client all the same, the request is delivered
// from A to B, before the broker's response, and the connection closes
// by FIN with no gap.
func TestSynAckFirst(t *testing.T) {
	v := newConv("10.0.0.1:40000", "10.0.0.2:9092", 100, 900)
	v.handshake()
	v.send(true, "request")
	v.send(false, "response")
	v.fin(false)
	v.fin(true)
	// Broker's packets first, in their order, then the client's.
	var broker, client []seg
	for _, x := range v.segs {
		if x.src == v.s {
			broker = append(broker, x)
		} else {
			client = append(client, x)
		}
	}
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, append(broker, client...)), Options{})
	if c := h.conns[0]; c.A != v.c || c.B != v.s || !c.SawSYN {
		t.Errorf("A %v B %v SawSYN %v", c.A, c.B, c.SawSYN)
	}
	want := []string{"open 0 10.0.0.1:40000>10.0.0.2:9092", `data 0 0 f6 "request"`, `data 0 1 f2 "response"`, "close 0 fin"}
	if !slices.Equal(h.log, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}
}

// TestSynAfterData: on several NIC queues a client's SYN can be written
// after its first ACK and request, the broker's SYN-ACK after its ACK of
// the request: one connection (the late SYN is its own, not a reuse of
// the 4-tuple), the request before the response, no gap.
func TestSynAfterData(t *testing.T) {
	v := newConv("10.0.0.1:40000", "10.0.0.2:9092", 100, 900)
	v.handshake()
	v.send(true, "request")
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "A"})
	v.send(false, "response")
	syn, synAck, ack, req, reqAck, resp := v.segs[0], v.segs[1], v.segs[2], v.segs[3], v.segs[4], v.segs[5]
	segs := []seg{ack, req, syn, reqAck, synAck, resp}
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, segs), Options{})
	want := []string{"open 0 10.0.0.1:40000>10.0.0.2:9092", `data 0 0 f2 "request"`, `data 0 1 f6 "response"`, "close 0 end of capture"}
	if !slices.Equal(h.log, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}
	if c := h.conns[0]; !c.SawSYN || c.Stats.Gaps != 0 {
		t.Errorf("SawSYN %v, %d gaps", c.SawSYN, c.Stats.Gaps)
	}
}
