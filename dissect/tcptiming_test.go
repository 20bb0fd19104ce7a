package dissect

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kwire/kwire/reassembly"
)

// droppedSegments reads the segments capgen's wire dropped on their way
// to the broker (pcaps/lossy-network.expect.json: "drop" injections).
func droppedSegments(t *testing.T, name string) (toBroker []uint16) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "pcaps", name))
	if err != nil {
		t.Skipf("%v", err)
	}
	var x struct {
		Injections []struct {
			Kind, Direction string
			Segments        []struct {
				ClientPort uint16
				RelSeq     uint32
			}
		}
	}
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	for _, in := range x.Injections {
		if in.Kind == "drop" && in.Direction == "to-broker" {
			for _, s := range in.Segments {
				toBroker = append(toBroker, s.ClientPort)
			}
		}
	}
	return toBroker
}

// On the lossy network every segment the wire dropped on its way to the
// broker (the capture holds the lost copy, then its retransmission) is a
// retransmission of some request of its connection, seen while the
// request awaited its answer; the round trip is the wire's 40 ms. On the
// slow broker's clean network there is no retransmission, the round trip
// is below a millisecond, and every response came in order.
func TestTCPTimingCaptures(t *testing.T) {
	lossy := dissectCapture(t, "lossy-network.pcap")
	retrans := map[uint16]int{} // client port -> requests with a retransmission
	for _, e := range lossy.sink.ex {
		if e.Request == nil {
			continue
		}
		if rt := e.Request.TCPOf(); rt.Retransmissions > 0 {
			retrans[e.Client.Port()] += rt.Retransmissions
			if !rt.LastRetransmission.After(e.Request.Time) || e.Response != nil && rt.LastRetransmission.After(e.Response.Time) {
				t.Errorf("%d v%d corr %d: retransmission at %v outside the exchange", e.APIKey, e.APIVersion, e.CorrelationID, rt.LastRetransmission)
			}
		}
		if rtt := e.Request.RTT; e.Response != nil && (rtt < 39*time.Millisecond || rtt > 60*time.Millisecond) {
			t.Errorf("%d v%d corr %d: RTT %v, want the wire's 40ms", e.APIKey, e.APIVersion, e.CorrelationID, rtt)
		}
	}
	drops := droppedSegments(t, "lossy-network.expect.json")
	if len(drops) == 0 {
		t.Fatal("no drops in the expectation")
	}
	for _, port := range drops {
		if retrans[port] == 0 {
			t.Errorf("a segment from port %d was dropped; no request of that connection saw a retransmission (%v)", port, retrans)
		}
	}
	// Segments from the broker that were lost before the capture point
	// make later bytes arrive first: some response saw it.
	ooo := 0
	for _, e := range lossy.sink.ex {
		if r := e.Response; r != nil && r.TCPOf().OutOfOrder > 0 {
			ooo++
			if rt := r.TCPOf(); !rt.Latest.After(r.End) && !rt.Earliest.Before(r.Time) {
				t.Errorf("%d v%d: out of order but packet times %v..%v within %v..%v", e.APIKey, e.APIVersion, rt.Earliest, rt.Latest, r.Time, r.End)
			}
		}
	}
	if ooo == 0 {
		t.Error("no response saw bytes out of order")
	}

	slow := dissectCapture(t, "slow-broker.pcap")
	produce := 0
	for _, e := range slow.sink.ex {
		for _, f := range []*Frame{e.Request, e.Response} {
			if f == nil {
				continue
			}
			if f.TCP != nil {
				t.Errorf("%d v%d corr %d: %+v (frame %v..%v): the clean network says something", e.APIKey, e.APIVersion, e.CorrelationID, *f.TCP, f.Time, f.End)
			}
		}
		if e.APIKey == 0 && e.Response != nil {
			produce++
			if rtt := e.Request.RTT; rtt <= 0 || rtt > time.Millisecond {
				t.Errorf("Produce corr %d: RTT %v", e.CorrelationID, rtt)
			}
		}
	}
	if produce != 20 {
		t.Errorf("%d Produce exchanges, want 20", produce)
	}
}

// attribute counts a mark for a frame only inside its time window and,
// for marks of its own direction, before its end; the peer's zero windows
// count whatever their offset.
func TestTCPAttribute(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	var st tcpState
	d := reassembly.AtoB
	marks := []struct {
		dir reassembly.Dir
		s   reassembly.Segment
	}{
		{d, reassembly.Segment{Kind: reassembly.SegRetransmission, Time: at(5), Frame: 7, Offset: 100, Len: 10}},    // before the window
		{d, reassembly.Segment{Kind: reassembly.SegRetransmission, Time: at(20), Frame: 9, Offset: 190, Len: 10}},   // counts
		{d, reassembly.Segment{Kind: reassembly.SegRetransmission, Time: at(30), Frame: 11, Offset: 300, Len: 10}},  // after the frame's end offset
		{d, reassembly.Segment{Kind: reassembly.SegRetransmission, Time: at(35), Frame: 12, Offset: 150, Len: 10}},  // counts, the latest
		{d, reassembly.Segment{Kind: reassembly.SegWindowFull, Time: at(15), Frame: 8, Offset: 200, Len: 50}},       // counts
		{1 - d, reassembly.Segment{Kind: reassembly.SegZeroWindow, Time: at(25), Frame: 10, Offset: 0}},             // counts
		{1 - d, reassembly.Segment{Kind: reassembly.SegZeroWindow, Time: at(60), Frame: 20, Offset: 0}},             // after the window
		{1 - d, reassembly.Segment{Kind: reassembly.SegRetransmission, Time: at(20), Frame: 9, Offset: 0, Len: 10}}, // the other direction's
	}
	for _, m := range marks {
		td := &st.dir[m.dir]
		td.marks = append(td.marks, m.s)
	}
	var tt TCPTiming
	st.attribute(&tt, d, at(10), at(50), 250)
	if tt.Retransmissions != 2 || tt.RetransmissionFrame != 12 || !tt.LastRetransmission.Equal(at(35)) ||
		tt.WindowFull != 1 || tt.ZeroWindows != 1 || !tt.ZeroWindowAt.Equal(at(25)) {
		t.Errorf("%+v", tt)
	}
	// The ring keeps the last maxMarks.
	dis := &Dissector{conns: map[*reassembly.Conn]*conn{}}
	rc := &reassembly.Conn{}
	c := &conn{d: dis, c: rc}
	dis.conns[rc] = c
	for i := range maxMarks + 5 {
		dis.Segment(rc, d, reassembly.Segment{Kind: reassembly.SegOutOfOrder, Frame: int64(i)})
	}
	if n := len(c.tcp.dir[d].marks); n != maxMarks {
		t.Fatalf("%d marks kept", n)
	}
	low := int64(1 << 30)
	for _, m := range c.tcp.dir[d].marks {
		low = min(low, m.Frame)
	}
	if low != 5 {
		t.Errorf("oldest kept %d, want 5", low)
	}
}
