package stats

import (
	"fmt"
	"net/netip"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// manyConns feeds col n short connections, each from its own client
// address: one Metadata exchange each (two on every seventh connection),
// a gap on every hundredth, then its close. The connections overlap: up
// to open of them are open at once.
func manyConns(t *testing.T, col *Collector, n, open int) {
	t.Helper()
	mdReq := kmsg.NewPtrMetadataRequest()
	mdReq.Version = 12
	mdResp := kmsg.NewPtrMetadataResponse()
	mdResp.Version = 12
	req, resp := reqFrame(t, 1, "app", mdReq), respFrame(t, 1, mdResp)
	conns := make([]*reassembly.Conn, n)
	closeConn := func(i int) {
		col.Event(&dissect.Event{Kind: dissect.EventClose, Conn: conns[i], Time: t0.Add(time.Duration(i)*time.Millisecond + 50*time.Millisecond)})
	}
	for i := range n {
		a := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 40000)
		c := &reassembly.Conn{Index: i, A: a, B: ap("10.255.0.1:9092"), SawSYN: true}
		conns[i] = c
		at := time.Duration(i) * time.Millisecond
		col.Event(&dissect.Event{Kind: dissect.EventOpen, Conn: c, Time: t0.Add(at)})
		for k := range 1 + btoi(i%7 == 0) {
			q, r := *req, *resp // the trees are only read
			col.Exchange(xchg(c, "app", &q, &r, 3, 12, int32(k), int64(10*i+2*k+1), at+time.Duration(k)*time.Millisecond, time.Duration(1+i%5)*time.Millisecond))
		}
		if i%100 == 0 {
			col.Event(&dissect.Event{Kind: dissect.EventGap, Conn: c, Time: t0.Add(at), Bytes: 10})
		}
		if i >= open {
			closeConn(i - open)
		}
	}
	for i := max(n-open, 0); i < n; i++ {
		closeConn(i)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestConnectionRowsBounded: past Options.MaxMemory the rows of the
// least telling connections that ended are folded into totals; the rows
// kept are those RankConns puts first, the same rows as without a
// bound, and every total stays exact.
func TestConnectionRowsBounded(t *testing.T) {
	const n, open = 5000, 40
	const budget = 128 << 10
	full := NewCollector(Options{MaxMemory: 1 << 30})
	manyConns(t, full, n, open)
	col := NewCollector(Options{MaxMemory: budget})
	manyConns(t, col, n, open)

	// What stays in memory: the rows kept cost at most the budget, their
	// number at most budget/costConnRow; none holds its reassembly.Conn.
	if len(col.conns) != 0 || col.ended.Len() > budget/costConnRow || col.mem+col.addrMem > budget {
		t.Errorf("kept %d open and %d ended rows costing %d + %d addresses bytes (budget %d: at most %d rows)",
			len(col.conns), col.ended.Len(), col.mem, col.addrMem, budget, budget/costConnRow)
	}
	for _, a := range col.ended {
		if a.c != nil || a.clients != nil {
			t.Fatalf("row of connection %d still holds its Conn or client set", a.index)
		}
	}

	fr, r := full.Report(), col.Report()
	if fr.FoldedConnections != nil || len(fr.Connections) != n {
		t.Fatalf("unbounded: %d rows, folded %+v; want %d rows", len(fr.Connections), fr.FoldedConnections, n)
	}
	f := r.FoldedConnections
	if f == nil {
		t.Fatal("no connection folded")
	}
	// 128 KiB holds 256 rows, less the addresses' quarter of it: 192.
	if len(r.Connections) != 192 || f.Connections != n-192 || f.MaxMemory != budget {
		t.Errorf("%d rows, %d folded (budget %d); want 192 and %d", len(r.Connections), f.Connections, f.MaxMemory, n-192)
	}
	// The rows kept are the top of the full report by RankConns (ties in
	// the report's order): the 50 with a gap, then those with 2 frames.
	want := slices.Clone(fr.Connections)
	slices.SortStableFunc(want, RankConns)
	want = want[:len(r.Connections)]
	slices.SortFunc(want, compareConnOrder)
	if !reflect.DeepEqual(r.Connections, want) {
		t.Errorf("rows kept are not the top %d by RankConns:\n got %v\nwant %v", len(want), indexes(r.Connections), indexes(want))
	}
	// Totals: rows plus folded are the full report's.
	var sum FoldedConns
	for i := range r.Connections {
		s := r.Connections[i]
		sum.RequestFrames += s.RequestFrames
		sum.ResponseFrames += s.ResponseFrames
		sum.RequestBytes += s.RequestBytes
		sum.ResponseBytes += s.ResponseBytes
		sum.Gaps += s.Gaps
	}
	var all FoldedConns
	for _, s := range fr.Connections {
		all.RequestFrames += s.RequestFrames
		all.ResponseFrames += s.ResponseFrames
		all.RequestBytes += s.RequestBytes
		all.ResponseBytes += s.ResponseBytes
		all.Gaps += s.Gaps
	}
	got := [5]int64{sum.RequestFrames + f.RequestFrames, sum.ResponseFrames + f.ResponseFrames,
		sum.RequestBytes + f.RequestBytes, sum.ResponseBytes + f.ResponseBytes, sum.Gaps + f.Gaps}
	wantTot := [5]int64{all.RequestFrames, all.ResponseFrames, all.RequestBytes, all.ResponseBytes, all.Gaps}
	if got != wantTot || all.RequestFrames != n+(n+6)/7 || all.Gaps != n/100 {
		t.Errorf("totals rows+folded %v, unbounded %v (want %d request frames, %d gaps)", got, wantTot, n+(n+6)/7, n/100)
	}
	// Connection 0 (a gap) is kept: the first folded is connection 1's
	// open, the last connection 4999's close (one exchange, folded).
	first, last := timeString(t0.Add(time.Millisecond)), timeString(t0.Add(4999*time.Millisecond+50*time.Millisecond))
	if f.Gaps != 0 || f.MaxProblems != 0 || f.First != first || f.Last != last {
		t.Errorf("folded: %d gaps, max problems %d, first %q last %q; want none with a problem, %q to %q",
			f.Gaps, f.MaxProblems, f.First, f.Last, first, last)
	}
	// Everything else is the same report.
	fr.Connections, r.Connections, r.FoldedConnections = nil, nil, nil
	fc, c := fr.Clients, r.Clients
	fr.Clients, r.Clients = nil, nil
	if !reflect.DeepEqual(fr, r) {
		t.Errorf("reports differ beyond connections and clients:\n got %+v\nwant %+v", r, fr)
	}
	// The client counts its connections exactly; its addresses are
	// capped at a quarter of the budget, and it says so.
	if len(c) != 1 || len(fc) != 1 || c[0].Connections != n || fc[0].Connections != n || c[0].Requests != fc[0].Requests {
		t.Fatalf("clients %+v, unbounded %+v; want one with %d connections", c, fc, n)
	}
	if len(c[0].Addresses) != budget/4/costAddr || !c[0].AddressesCapped || len(fc[0].Addresses) != n || fc[0].AddressesCapped {
		t.Errorf("%d addresses kept (capped %v), unbounded %d (capped %v); want %d, capped, and %d",
			len(c[0].Addresses), c[0].AddressesCapped, len(fc[0].Addresses), fc[0].AddressesCapped, budget/4/costAddr, n)
	}
}

func indexes(cs []ConnStats) string {
	out := make([]int, len(cs))
	for i, c := range cs {
		out[i] = c.Index
	}
	return fmt.Sprint(out)
}

// TestOpenConnectionsKept: a connection still open keeps its row
// whatever the budget (its count is reassembly's to bound), and a
// second report after more traffic still adds up.
func TestOpenConnectionsKept(t *testing.T) {
	col := NewCollector(Options{MaxMemory: 1})
	manyConns(t, col, 10, 0) // each closed at once
	c := &reassembly.Conn{Index: 10, A: ap("10.0.1.1:1"), B: ap("10.255.0.1:9092")}
	col.Event(&dissect.Event{Kind: dissect.EventOpen, Conn: c, Time: t0})
	r := col.Report()
	if len(r.Connections) != 1 || r.Connections[0].Index != 10 || r.FoldedConnections == nil || r.FoldedConnections.Connections != 10 {
		t.Fatalf("rows %v, folded %+v; want the open connection 10 and 10 folded", indexes(r.Connections), r.FoldedConnections)
	}
	col.Event(&dissect.Event{Kind: dissect.EventClose, Conn: c, Time: t0})
	r = col.Report()
	if len(r.Connections) != 0 || r.FoldedConnections.Connections != 11 {
		t.Fatalf("after the close: rows %v, folded %d; want none and 11", indexes(r.Connections), r.FoldedConnections.Connections)
	}
}
