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

// conflictsOf reads v's capture with opts and returns the conflicts
// reported, the client's bytes delivered and its connection's stats.
func conflictsOf(t *testing.T, v *conv, opts Options) ([]string, string, ConnStats) {
	t.Helper()
	h := conflictRec{newRec()}
	sum, err := ReadFiles(t.Context(), []string{writeFile(t, "c", pcapBytes(t, layers.LinkTypeEthernet, v.segs))}, opts, h)
	if err != nil || sum.Connections != 1 {
		t.Fatal(err, sum.Connections)
	}
	h.checkSane(t)
	return h.filter("conflict"), h.stream(0, AtoB), h.conns[0].Stats
}

// resend adds a retransmission by the client of p at off bytes into the
// stream whose first byte has sequence number isn.
func resend(v *conv, isn uint32, off int, p string) {
	v.add(seg{src: v.c, dst: v.s, seq: isn + uint32(off), ack: v.sseq, flags: "PA", payload: []byte(p)})
}

// TestConflictResegmented: a retransmission is compared byte for byte
// with the bytes delivered however it is cut: covering part of one piece,
// spanning two, a few bytes in the middle of a 3000-byte piece, running
// past the bytes delivered. The Conflict names the delivered piece that
// holds the first byte that differs (its stream offset, length and
// packet). The same bytes re-segmented are no conflict. Pieces: "hello"
// (f4, offset 0), "world" (f5, offset 5), 3000 bytes (f6, offset 10); the
// retransmission is f7.
func TestConflictResegmented(t *testing.T) {
	big := []byte(strings.Repeat("0123456789", 300))
	for _, tc := range []struct {
		name  string
		off   int
		p     string
		want  []string
		bytes string // delivered after the 3000 bytes
	}{
		{"part of one piece", 1, "eLl", []string{"conflict 0 0 off=0 n=5 f7 first=f4"}, ""},
		{"spans two, second differs", 3, "loWor", []string{"conflict 0 0 off=5 n=5 f7 first=f5"}, ""},
		{"spans two, first differs", 3, "Lowor", []string{"conflict 0 0 off=0 n=5 f7 first=f4"}, ""},
		{"spans three", 8, "ld" + string(big[:1000]) + "X", []string{"conflict 0 0 off=10 n=3000 f7 first=f6"}, ""},
		{"middle of a large piece", 10 + 1000, string(big[1000:1500]) + "#" + string(big[1501:2000]), []string{"conflict 0 0 off=10 n=3000 f7 first=f6"}, ""},
		{"same bytes re-segmented", 3, "loworld" + string(big[:2000]), nil, ""},
		{"same bytes, then new ones", 2000 + 10, string(big[2000:]) + "tail", nil, "tail"},
		{"other bytes, then new ones", 2999 + 10, "!tail", []string{"conflict 0 0 off=10 n=3000 f7 first=f6"}, "tail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
			v.handshake()
			isn := v.cseq
			v.send(true, "hello")
			v.send(true, "world")
			v.send(true, string(big))
			resend(v, isn, tc.off, tc.p)
			v.send(false, "ok")
			v.close()
			got, stream, st := conflictsOf(t, v, Options{})
			if !slices.Equal(got, tc.want) {
				t.Errorf("%q, want %q", got, tc.want)
			}
			if want := "helloworld" + string(big) + tc.bytes; stream != want {
				t.Errorf("delivered %d bytes ending %q, want %d ending %q", len(stream), stream[max(len(stream)-8, 0):], len(want), want[len(want)-8:])
			}
			if st.Retransmissions != 1 || st.Conflicts != len(tc.want) {
				t.Errorf("%d conflicts of %d retransmissions, want %d of 1", st.Conflicts, st.Retransmissions, len(tc.want))
			}
		})
	}
}

// TestConflictPastWindow: bytes older than a direction's window (64 KiB),
// or in a direction without one (Options.MaxRecentBytes negative), are
// compared as before the window existed: a retransmission covering one of
// the last 8 pieces delivered whole is compared with its hash, one
// covering a piece in part is not compared (a known limit).
func TestConflictPastWindow(t *testing.T) {
	build := func(resends func(v *conv, isn uint32)) *conv {
		v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
		v.handshake()
		isn := v.cseq
		v.send(true, "hello") // f4
		for i := range 5 {    // f5-f9: 80 KiB
			v.send(true, strings.Repeat(string(rune('a'+i)), 16<<10))
		}
		resends(v, isn)
		v.send(false, "ok")
		v.close()
		return v
	}
	whole := build(func(v *conv, isn uint32) { resend(v, isn, 0, "HELLO") })      // f10
	part := build(func(v *conv, isn uint32) { resend(v, isn, 1, "ELL") })         // f10
	recent := build(func(v *conv, isn uint32) { resend(v, isn, 5+70000, "EEE") }) // f10: in the window
	for _, tc := range []struct {
		name string
		v    *conv
		opts Options
		want []string
	}{
		{"whole piece past the window: hash", whole, Options{}, []string{"conflict 0 0 off=0 n=5 f10 first=f4"}},
		{"part of a piece past the window: not compared", part, Options{}, nil},
		{"part of a piece in the window", recent, Options{}, []string{"conflict 0 0 off=65541 n=16384 f10 first=f9"}},
		{"no window: whole piece, hash", whole, Options{MaxRecentBytes: -1}, []string{"conflict 0 0 off=0 n=5 f10 first=f4"}},
		{"no window: part of a piece, not compared", recent, Options{MaxRecentBytes: -1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _, _ := conflictsOf(t, tc.v, tc.opts)
			if !slices.Equal(got, tc.want) {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

// windowsCheck runs segs through a runner with opts packet by packet and
// fails when the windows ever take more than their budget, or their
// accounting disagrees with the windows listed. It returns the
// conflicts reported and the most the windows held.
func windowsCheck(t *testing.T, segs []seg, opts Options) (conflicts []string, peak int64) {
	t.Helper()
	h := conflictRec{newRec()}
	r := newRunner(opts, h)
	src := newSliceSource(t, layers.LinkTypeEthernet, segs)
	for i := 0; ; i++ {
		data, ci, link, err := src.ReadPacket()
		if err == io.EOF {
			break
		}
		r.packet(data, ci, link)
		if r.wins.bytes > r.wins.max {
			t.Fatalf("packet %d: windows hold %d bytes, budget %d", i+1, r.wins.bytes, r.wins.max)
		}
		peak = max(peak, r.wins.bytes)
		if i%1000 == 0 {
			var sum int64
			for w := r.wins.head; w != nil; w = w.next {
				if w.owner == nil || w.owner.win != w {
					t.Fatalf("packet %d: a listed window has no owner", i+1)
				}
				sum += w.cost()
			}
			if sum != r.wins.bytes {
				t.Fatalf("packet %d: windows listed cost %d, counted %d", i+1, sum, r.wins.bytes)
			}
		}
	}
	return h.filter("conflict"), peak
}

// TestWindowBudget: the windows of all connections stay within
// Options.MaxRecentBytes whatever a capture does: 2,000 connections left
// open that each deliver 20 KiB and then flood 30 retransmissions of other bytes
// (each one reported: the connection retransmitting delivered last, so
// its window is kept), one connection of 20,000 one-byte segments, each
// retransmitted with another byte. The direction that delivered least
// recently loses its window: its retransmission of part of a piece is
// then no longer compared, one of a whole recent piece still is.
func TestWindowBudget(t *testing.T) {
	const budget = 256 << 10
	opts := Options{MaxRecentBytes: budget, MaxConnectionMemory: -1}
	var segs []seg
	const conns, floods = 2000, 30
	for i := range conns {
		v := newConv(fmt.Sprintf("10.1.%d.%d:%d", i/250, i%250+1, 30000+i), "10.0.0.2:9092", uint32(i)*7919, 5)
		v.at = time.Duration(i) * time.Second
		v.handshake()
		isn := v.cseq
		for range 20 {
			v.send(true, strings.Repeat("k", 1024))
		}
		for j := range floods {
			resend(v, isn, 20*1024-100+j, "K")
		}
		segs = append(segs, v.segs...) // left open: its windows stay unless taken

	}
	got, peak := windowsCheck(t, segs, opts)
	if len(got) != conns*floods || got[0] != "conflict 0 0 off=19456 n=1024 f24 first=f23" {
		t.Errorf("%d conflicts (first %q), want %d", len(got), got[:min(len(got), 1)], conns*floods)
	}
	t.Logf("2,000 connections: windows peaked at %d bytes of %d", peak, budget)

	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	isn := v.cseq
	for i := range 20000 {
		v.send(true, string(rune('a'+i%26)))
		resend(v, isn, i, "#")
	}
	v.close()
	got, peak = windowsCheck(t, v.segs, opts)
	if len(got) != 20000 || got[19999] != "conflict 0 0 off=19999 n=1 f40003 first=f40002" {
		t.Errorf("%d conflicts (last %q), want 20000", len(got), got[max(len(got)-1, 0):])
	}
	t.Logf("one-byte segments: windows peaked at %d bytes", peak)

	// Three connections share a budget of two windows of 1 KiB: the first
	// to deliver loses its window to the third.
	small := Options{MaxRecentBytes: 2 * windowCost(minWindow)}
	var vs []*conv
	var isns []uint32
	for i := range 3 {
		v := newConv(fmt.Sprintf("10.0.0.%d:1", i+1), "10.0.0.9:2", 100, 900)
		v.handshake()
		isns = append(isns, v.cseq)
		v.send(true, "hello") // f4, f8, f12
		vs = append(vs, v)
	}
	var abc []seg
	for _, v := range vs {
		abc = append(abc, v.segs...)
	}
	for i, v := range vs {
		v.segs = nil
		resend(v, isns[i], 1, "ELL") // part of the piece: f13, f15, f17
		resend(v, isns[i], 0, "HELLO")
		abc = append(abc, v.segs...)
	}
	got, _ = windowsCheck(t, abc, small)
	want := []string{
		"conflict 0 0 off=0 n=5 f14 first=f4", // the first: by hash only
		"conflict 1 0 off=0 n=5 f15 first=f8", "conflict 1 0 off=0 n=5 f16 first=f8",
		"conflict 2 0 off=0 n=5 f17 first=f12", "conflict 2 0 off=0 n=5 f18 first=f12",
	}
	if !slices.Equal(got, want) {
		t.Errorf("LRU: %q, want %q", got, want)
	}
}

// TestWindowSize: a direction's window keeps what its peer has not
// acknowledged, at least minWindow bytes: a client whose 1400-byte
// segments the broker acknowledges one by one keeps 4 KiB however much
// it sends; one whose bytes are not acknowledged (100 KiB sent), or that
// retransmitted (and sent 100 KiB more), keeps maxWindow.
func TestWindowSize(t *testing.T) {
	sizes := func(acked, resent bool) int {
		v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
		v.handshake()
		isn := v.cseq
		for range 70 {
			v.send(true, strings.Repeat("p", 1400))
			if acked {
				v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "A"})
			}
		}
		if resent {
			resend(v, isn, 70*1400-10, strings.Repeat("p", 10))
			for range 70 {
				v.send(true, strings.Repeat("p", 1400))
				v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "A"})
			}
		}
		r := newRunner(Options{}, nopHandler{})
		src := newSliceSource(t, layers.LinkTypeEthernet, v.segs)
		for {
			data, ci, link, err := src.ReadPacket()
			if err == io.EOF {
				break
			}
			r.packet(data, ci, link)
		}
		for _, s := range r.conns {
			if w := s.half[AtoB].win; w != nil {
				return len(w.buf)
			}
		}
		return 0
	}
	if got := sizes(true, false); got != minWindow {
		t.Errorf("acknowledged: window of %d bytes, want %d", got, minWindow)
	}
	if got := sizes(false, false); got != maxWindow {
		t.Errorf("not acknowledged: window of %d bytes, want %d", got, maxWindow)
	}
	if got := sizes(true, true); got != maxWindow {
		t.Errorf("acknowledged, resent: window of %d bytes, want %d", got, maxWindow)
	}
}

// TestConflictAfterRST: a client's request, its RST, then the request
// again at the same sequence numbers with other bytes, one shorter,
// answered by the broker: the capture mixes two streams, and the resend
// is a Conflict (it was dropped unseen, the direction being closed). The
// same bytes resent are counted as a retransmission, no conflict.
func TestConflictAfterRST(t *testing.T) {
	for _, tc := range []struct {
		resent string
		want   []string
	}{
		{"topic afterrst", []string{"conflict 0 0 off=0 n=15 f6 first=f4"}},
		{"topic before", nil},
	} {
		v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
		v.handshake()
		isn := v.cseq
		v.send(true, "topic beforerst") // f4
		v.add(seg{src: v.c, dst: v.s, seq: v.cseq, flags: "R"})
		resend(v, isn, 0, tc.resent) // f6
		v.send(false, "ok")
		got, stream, st := conflictsOf(t, v, Options{})
		if !slices.Equal(got, tc.want) || stream != "topic beforerst" || st.Retransmissions != 1 {
			t.Errorf("%q: %q, delivered %q, %d retransmissions; want %q, the first copy, 1", tc.resent, got, stream, st.Retransmissions, tc.want)
		}
	}
}
