package reassembly

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// segRec is a rec that also records Segment calls.
type segRec struct {
	*rec
	segs []string
}

func (r *segRec) Segment(c *Conn, d Dir, s Segment) {
	r.segs = append(r.segs, fmt.Sprintf("%d %v %s f%d @%d+%d %v", c.Index, d, s.Kind, s.Frame, s.Offset, s.Len, s.Time.Sub(t0)))
	r.log = append(r.log, "segment "+s.Kind.String())
}

// TestSegments holds every segment mark, with its packet, stream offset
// and time, and the round-trip times, in both the synchronous and the
// pipelined mode.
func TestSegments(t *testing.T) {
	c, s := ap("10.0.0.1:40000"), ap("10.0.0.2:9092")
	ms := time.Millisecond
	segs := []seg{
		{at: 1 * ms, src: c, dst: s, seq: 1000, flags: "S", opts: []byte{3, 3, 7, 1}},                         // f1 window scale 7
		{at: 3 * ms, src: s, dst: c, seq: 5000, ack: 1001, flags: "SA", opts: []byte{3, 3, 2, 1}},             // f2 window scale 2: RTT 2ms
		{at: 4 * ms, src: c, dst: s, seq: 1001, ack: 5001, flags: "A"},                                        // f3 the broker's RTT sample: 1ms
		{at: 10 * ms, src: c, dst: s, seq: 1001, ack: 5001, flags: "PA", payload: []byte("hello")},            // f4
		{at: 12 * ms, src: c, dst: s, seq: 1001, ack: 5001, flags: "PA", payload: []byte("hello")},            // f5 retransmission
		{at: 20 * ms, src: s, dst: c, seq: 5001, ack: 1006, flags: "A", win: 4},                               // f6 window 4<<2 = 16 bytes; no RTT (Karn)
		{at: 21 * ms, src: c, dst: s, seq: 1006, ack: 5001, flags: "PA", payload: []byte("0123456789abcdef")}, // f7 fills it
		{at: 25 * ms, src: s, dst: c, seq: 5001, ack: 1022, flags: "A", win: -1},                              // f8 zero window (RTT 4ms)
		{at: 26 * ms, src: s, dst: c, seq: 5001, ack: 1022, flags: "A", win: -1},                              // f9 still zero: no mark
		{at: 30 * ms, src: s, dst: c, seq: 5001, ack: 1022, flags: "A", win: 100},                             // f10 open again
		{at: 31 * ms, src: c, dst: s, seq: 1025, ack: 5001, flags: "PA", payload: []byte("xyz")},              // f11 ahead of a hole
		{at: 32 * ms, src: c, dst: s, seq: 1022, ack: 5001, flags: "PA", payload: []byte("abc")},              // f12 fills it
		{at: 40 * ms, src: c, dst: s, seq: 1028, ack: 5001, flags: "FA"},                                      // f13
		{at: 41 * ms, src: s, dst: c, seq: 5001, flags: "R"},                                                  // f14
	}
	want := []string{
		"0 A>B retransmission f5 @0+5 12ms",
		"0 A>B window-full f7 @5+16 21ms",
		"0 B>A zero-window f8 @0+0 25ms",
		"0 A>B out-of-order f11 @24+3 31ms",
		"0 A>B fin f13 @27+0 40ms",
		"0 B>A rst f14 @0+0 41ms",
	}
	for _, sync := range []bool{true, false} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			h := &segRec{rec: newRec()}
			p := writeFile(t, "capture", pcapBytes(t, layers.LinkTypeEthernet, segs))
			if _, err := ReadFiles(context.Background(), []string{p}, Options{Synchronous: sync}, h); err != nil {
				t.Fatal(err)
			}
			h.checkSane(t)
			if !slices.Equal(h.segs, want) {
				t.Errorf("segments\n%q\nwant\n%q", h.segs, want)
			}
			if got := h.stream(0, AtoB); got != "hello0123456789abcdefabcxyz" {
				t.Errorf("stream %q", got)
			}
			// The retransmission's mark comes before nothing is
			// delivered; the out-of-order one before the bytes that
			// fill the hole.
			i := slices.Index(h.log, "segment out-of-order")
			if i < 0 || !slices.ContainsFunc(h.log[i:], func(l string) bool { return l == `data 0 0 f12 "abc"` }) {
				t.Errorf("order: %q", h.log)
			}
			st := h.conns[0].Stats
			if st.MinRTT[AtoB] != 2*ms || st.MinRTT[BtoA] != 1*ms {
				t.Errorf("MinRTT %v, want [2ms 1ms]", st.MinRTT)
			}
			if st.Retransmissions != 1 || st.OutOfOrder != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// A handler that is not a SegmentHandler gets the same calls as before
// and the round-trip times.
func TestSegmentsPlainHandler(t *testing.T) {
	v := newConv("10.0.0.1:40000", "10.0.0.2:9092", 100, 900)
	v.handshake()
	v.send(true, "ping")
	v.send(false, "pong")
	v.close()
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	if got := h.stream(0, AtoB) + h.stream(0, BtoA); got != "pingpong" {
		t.Errorf("%q", got)
	}
	if rtt := h.conns[0].Stats.MinRTT; rtt[AtoB] != time.Millisecond || rtt[BtoA] != time.Millisecond {
		t.Errorf("MinRTT %v, want 1ms each way (one step per segment)", rtt)
	}
}

// windowScale reads the option among others and refuses malformed ones.
func TestWindowScale(t *testing.T) {
	for _, c := range []struct {
		opts []byte
		want int8
	}{
		{[]byte{2, 4, 5, 180, 1, 3, 3, 7}, 7}, // MSS, NOP, window scale
		{[]byte{1, 1, 3, 3, 20}, 14},          // capped at 14 (RFC 7323)
		{[]byte{2, 4, 5, 180}, -1},
		{[]byte{0, 3, 3, 7}, -1},    // end of options first
		{[]byte{3, 9, 7}, -1},       // length past the end
		{[]byte{5, 1, 3, 3, 7}, -1}, // length below 2
	} {
		if got := windowScale(c.opts); got != c.want {
			t.Errorf("%v: %d, want %d", c.opts, got, c.want)
		}
	}
}

// TestSegmentsUncaptured: a sender that numbers its packets one by one in
// their IPv4 identification and skips numbers sent packets the capture
// does not hold; not after its SYN (Linux numbers a SYN-ACK 0), nor after
// a packet larger than the peer's MSS (one number a segment), nor for a
// jump too large to be a few packets.
// TestSegmentsUncapturedOwnMSS: a sender's segments are no longer than
// the MSS its own SYN announced, when the peer's is larger (a jumbo-frame
// client, a broker on a 1500-byte path): a packet captured above it is a
// TSO/GSO send of several numbers (a capture on the broker's host), and
// the next number's step is no gap.
func TestSegmentsUncapturedOwnMSS(t *testing.T) {
	c, s := ap("10.0.0.1:40000"), ap("10.0.0.2:9092")
	ms := time.Millisecond
	tso := bytes.Repeat([]byte("t"), 2920) // two segments of 1460
	segs := []seg{
		{at: 1 * ms, src: c, dst: s, seq: 1000, flags: "S", opts: []byte{2, 4, 0x23, 0x00}, id: 100},           // MSS 8960
		{at: 2 * ms, src: s, dst: c, seq: 5000, ack: 1001, flags: "SA", opts: []byte{2, 4, 0x05, 0xb4}, id: 0}, // MSS 1460
		{at: 3 * ms, src: c, dst: s, seq: 1001, ack: 5001, flags: "A", id: 101},
		{at: 4 * ms, src: c, dst: s, seq: 1001, ack: 5001, flags: "PA", payload: []byte("r1"), id: 102},
		{at: 5 * ms, src: s, dst: c, seq: 5001, ack: 1003, flags: "A", id: 7000},
		{at: 6 * ms, src: s, dst: c, seq: 5001, ack: 1003, flags: "PA", payload: []byte("a1"), id: 7001},
		{at: 7 * ms, src: s, dst: c, seq: 5003, ack: 1003, flags: "PA", payload: []byte("a2"), id: 7002},
		{at: 8 * ms, src: s, dst: c, seq: 5005, ack: 1003, flags: "PA", payload: []byte("a3"), id: 7003},
		{at: 9 * ms, src: s, dst: c, seq: 5007, ack: 1003, flags: "PA", payload: []byte("a4"), id: 7004},
		{at: 10 * ms, src: s, dst: c, seq: 5009, ack: 1003, flags: "PA", payload: []byte("a5"), id: 7005},
		{at: 11 * ms, src: s, dst: c, seq: 5011, ack: 1003, flags: "PA", payload: tso, id: 7006},           // two numbers
		{at: 300 * ms, src: s, dst: c, seq: 7931, ack: 1003, flags: "PA", payload: []byte("a6"), id: 7008}, // no mark
	}
	h := &segRec{rec: newRec()}
	p := writeFile(t, "capture", pcapBytes(t, layers.LinkTypeEthernet, segs))
	if _, err := ReadFiles(context.Background(), []string{p}, Options{Synchronous: true}, h); err != nil {
		t.Fatal(err)
	}
	for _, sg := range h.segs {
		if strings.Contains(sg, "uncaptured") {
			t.Errorf("segment %q: the TSO send's second number read as a packet not captured", sg)
		}
	}
}

func TestSegmentsUncaptured(t *testing.T) {
	c, s := ap("10.0.0.1:40000"), ap("10.0.0.2:9092")
	ms := time.Millisecond
	big := bytes.Repeat([]byte("b"), 1200)
	segs := []seg{
		{at: 1 * ms, src: c, dst: s, seq: 1000, flags: "S", opts: []byte{2, 4, 3, 0xe8}, id: 100},          // f1 MSS 1000
		{at: 2 * ms, src: s, dst: c, seq: 5000, ack: 1001, flags: "SA", id: 0},                             // f2
		{at: 3 * ms, src: c, dst: s, seq: 1001, ack: 5001, flags: "A", id: 101},                            // f3
		{at: 4 * ms, src: c, dst: s, seq: 1001, ack: 5001, flags: "PA", payload: []byte("r1"), id: 102},    // f4
		{at: 5 * ms, src: s, dst: c, seq: 5001, ack: 1003, flags: "A", id: 7000},                           // f5 after the SYN-ACK's 0: no mark
		{at: 6 * ms, src: s, dst: c, seq: 5001, ack: 1003, flags: "PA", payload: []byte("a1"), id: 7001},   // f6
		{at: 7 * ms, src: c, dst: s, seq: 1003, ack: 5003, flags: "PA", payload: []byte("r2"), id: 103},    // f7
		{at: 8 * ms, src: s, dst: c, seq: 5003, ack: 1005, flags: "A", id: 7002},                           // f8
		{at: 300 * ms, src: s, dst: c, seq: 5003, ack: 1005, flags: "PA", payload: []byte("a2"), id: 7004}, // f9 7003 not captured
		{at: 301 * ms, src: s, dst: c, seq: 5005, ack: 1005, flags: "PA", payload: big, id: 7005},          // f10 larger than the MSS: two numbers
		{at: 302 * ms, src: s, dst: c, seq: 6205, ack: 1005, flags: "PA", payload: []byte("a3"), id: 7007}, // f11 no mark
		{at: 303 * ms, src: s, dst: c, seq: 6207, ack: 1005, flags: "PA", payload: []byte("a4"), id: 7008}, // f12
		{at: 304 * ms, src: s, dst: c, seq: 6209, ack: 1005, flags: "PA", payload: []byte("a5"), id: 7011}, // f13 two skipped: 4 steps of one, 1 gap before
		{at: 305 * ms, src: s, dst: c, seq: 6211, ack: 1005, flags: "PA", payload: []byte("a6"), id: 7013}, // f14 a third gap, too soon: no mark
		{at: 306 * ms, src: s, dst: c, seq: 6213, ack: 1005, flags: "PA", payload: []byte("a7"), id: 9000}, // f15 a jump: no mark
	}
	want := []string{
		"0 B>A uncaptured f9 @2+1 300ms",
		"0 B>A uncaptured f13 @1208+2 304ms",
	}
	for _, sync := range []bool{true, false} {
		t.Run(fmt.Sprintf("sync=%v", sync), func(t *testing.T) {
			h := &segRec{rec: newRec()}
			p := writeFile(t, "capture", pcapBytes(t, layers.LinkTypeEthernet, segs))
			if _, err := ReadFiles(context.Background(), []string{p}, Options{Synchronous: sync}, h); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(h.segs, want) {
				t.Errorf("segments\n%q\nwant\n%q", h.segs, want)
			}
		})
	}
}

// TestSegmentsSharedCounter: a host that numbers all its packets from one
// counter skips, on each connection, the numbers its other connections
// took: a gap with a number of another connection of the host inside is
// no packet missed, and the direction's later gaps are not taken either.
func TestSegmentsSharedCounter(t *testing.T) {
	c1, c2, s := ap("10.0.0.1:40000"), ap("10.0.0.1:40001"), ap("10.0.0.2:9092")
	ms := time.Millisecond
	segs := []seg{
		{at: 1 * ms, src: c1, dst: s, seq: 1000, ack: 5000, flags: "PA", payload: []byte("r1"), id: 10},
		{at: 2 * ms, src: s, dst: c1, seq: 5000, ack: 1002, flags: "PA", payload: []byte("a1"), id: 300}, // f2
		{at: 3 * ms, src: c2, dst: s, seq: 2000, ack: 6000, flags: "PA", payload: []byte("q1"), id: 20},
		{at: 4 * ms, src: s, dst: c2, seq: 6000, ack: 2002, flags: "PA", payload: []byte("b1"), id: 301}, // f4: the host's next number
		{at: 5 * ms, src: s, dst: c1, seq: 5002, ack: 1002, flags: "PA", payload: []byte("a2"), id: 302}, // f5: 301 went to c2
		{at: 6 * ms, src: s, dst: c1, seq: 5004, ack: 1002, flags: "PA", payload: []byte("a3"), id: 304}, // f6: no longer trusted
	}
	h := &segRec{rec: newRec()}
	p := writeFile(t, "capture", pcapBytes(t, layers.LinkTypeEthernet, segs))
	if _, err := ReadFiles(context.Background(), []string{p}, Options{}, h); err != nil {
		t.Fatal(err)
	}
	for _, sg := range h.segs {
		if strings.Contains(sg, "uncaptured") {
			t.Errorf("segment %s", sg)
		}
	}
	// The same two connections with a counter each: c1's gap is one.
	segs[3].id, segs[4].id, segs[5].id = 9000, 302, 303
	h = &segRec{rec: newRec()}
	p = writeFile(t, "capture", pcapBytes(t, layers.LinkTypeEthernet, segs))
	if _, err := ReadFiles(context.Background(), []string{p}, Options{}, h); err != nil {
		t.Fatal(err)
	}
	if want := []string{"0 B>A uncaptured f5 @2+1 5ms"}; !slices.Equal(h.segs, want) {
		t.Errorf("segments %q, want %q", h.segs, want)
	}
}
