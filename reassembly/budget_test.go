package reassembly

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// budgetRec is a rec that is told of holes the budget gave up.
type budgetRec struct{ *rec }

func (r budgetRec) GivenUp(c *Conn, d Dir, n int64, t time.Time) {
	r.log = append(r.log, fmt.Sprintf("givenup %d %d %d", c.Index, d, n))
}

// reversed returns a conversation whose client sends n segments of size
// bytes each (segment i filled with letter i%26) in reverse order, the
// first one last, then closes; and the bytes in stream order.
func reversed(n, size int) (*conv, string) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	segs := make([]seg, n)
	var want strings.Builder
	for i := range segs {
		p := strings.Repeat(string(rune('a'+i%26)), size)
		want.WriteString(p)
		segs[i] = v.next(true, p)
	}
	for i := n - 1; i >= 0; i-- {
		v.add(segs[i])
	}
	v.close()
	return v, want.String()
}

func TestBudgetGivesUpAsSuch(t *testing.T) {
	// 3000 segments of 8 bytes in reverse order: 2999 pages wait for the
	// first. With room for them every byte is delivered, each with its
	// own packet (frame numbers: the handshake takes 1-3, segment i is
	// frame 3+n-i); with room for 1000, the first hole is given up by the
	// budget, told apart from a loss, although its bytes come later.
	const n = 3000
	v, want := reversed(n, 8)
	b := pcapBytes(t, layers.LinkTypeEthernet, v.segs)
	for _, sync := range []bool{false, true} {
		h := budgetRec{newRec()}
		sum, err := ReadFiles(t.Context(), []string{writeFile(t, "c", b)}, Options{MaxBufferedPagesPerConn: 4000, MaxBufferedPagesTotal: 4000, Synchronous: sync}, h)
		if err != nil || sum.Connections != 1 {
			t.Fatal(err, sum.Connections)
		}
		h.checkSane(t)
		if got := h.stream(0, AtoB); got != want {
			t.Errorf("sync %v: delivered %d bytes, want %d", sync, len(got), len(want))
		}
		if g := append(h.filter("gap"), h.filter("givenup")...); len(g) != 0 {
			t.Errorf("sync %v: holes %v", sync, g)
		}
		var frames []int64
		for _, c := range h.chunks {
			frames = append(frames, c.frame)
		}
		if len(frames) != n || frames[0] != 3+n || frames[1] != 3+n-1 || frames[n-1] != 4 {
			t.Errorf("sync %v: %d chunks, frames %v…%v", sync, len(frames), frames[:min(3, len(frames))], frames[max(len(frames)-3, 0):])
		}

		h = budgetRec{newRec()}
		sum, err = ReadFiles(t.Context(), []string{writeFile(t, "c", b)}, Options{MaxBufferedPagesPerConn: 1000, MaxBufferedPagesTotal: 1000, Synchronous: sync}, h)
		if err != nil {
			t.Fatal(err)
		}
		h.checkSane(t)
		// Once the 1000 last segments in stream order are buffered, the
		// hole before them (the 2000 first, 8 bytes each) is given up.
		if g := h.filter("givenup"); !slices.Equal(g, []string{fmt.Sprintf("givenup 0 0 %d", 8*(n-1000))}) {
			t.Errorf("sync %v: given up %v", sync, g)
		}
		if g := h.filter("gap"); len(g) != 0 {
			t.Errorf("sync %v: gaps %v", sync, g)
		}
		if c := h.conns[0]; c.Stats.GivenUp != 1 || c.Stats.Gaps != 1 || c.Stats.GapBytes != 8*(n-1000) {
			t.Errorf("sync %v: stats %+v", sync, c.Stats)
		}

		// A Handler that is no BudgetHandler gets a Gap.
		r := newRec()
		if _, err := ReadFiles(t.Context(), []string{writeFile(t, "c", b)}, Options{MaxBufferedPagesPerConn: 1000, MaxBufferedPagesTotal: 1000, Synchronous: sync}, r); err != nil {
			t.Fatal(err)
		}
		if g := r.filter("gap"); !slices.Equal(g, []string{fmt.Sprintf("gap 0 0 %d", 8*(n-1000))}) {
			t.Errorf("sync %v: plain handler's gaps %v", sync, g)
		}
	}
}

func TestBudgetLossIsLoss(t *testing.T) {
	// A segment never captured, acknowledged by the peer: lost, not given
	// up, whatever the budget.
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.next(true, strings.Repeat("L", 100))
	v.send(true, strings.Repeat("x", 50))
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "A"})
	v.close()
	h := budgetRec{newRec()}
	if _, err := ReadFiles(t.Context(), []string{writeFile(t, "c", pcapBytes(t, layers.LinkTypeEthernet, v.segs))}, Options{MaxBufferedPagesPerConn: 4, MaxBufferedPagesTotal: 4}, h); err != nil {
		t.Fatal(err)
	}
	if g := h.filter("g"); !slices.Equal(g, []string{"gap 0 0 100"}) {
		t.Errorf("holes %v", g)
	}
}
