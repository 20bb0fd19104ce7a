package reassembly

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// cutRec is a rec that is also a CutHandler.
type cutRec struct{ *rec }

func (r cutRec) Cut(c *Conn, d Dir, n int64, t time.Time) {
	r.log = append(r.log, fmt.Sprintf("cut %d %d %d", c.Index, d, n))
}

func TestCutCommentRoundTrip(t *testing.T) {
	for _, c := range []struct{ sent, received []Cut }{
		{[]Cut{{1003, 63}}, []Cut{{2001, 794}}},
		{[]Cut{{4294967290, 20}, {5, 7}}, nil},
		{nil, []Cut{{7, 1}}},
	} {
		m, ok := cutOf(CutComment(c.sent, c.received))
		if !ok || fmt.Sprint(m.sent) != fmt.Sprint(c.sent) || fmt.Sprint(m.received) != fmt.Sprint(c.received) {
			t.Errorf("%+v: parsed %+v %v", c, m, ok)
		}
	}
	for _, s := range []string{"", "a comment", "kwire-cut:", "kwire-cut: sent x+1", "kwire-cut: sent 5+0", "kwire-cut: sent 5+-3",
		"kwire-cut: sent 99999999999+3", "kwire-cut: sent 5+1073741824"} {
		if m, ok := cutOf(s); ok {
			t.Errorf("%q parsed as a cut: %+v", s, m)
		}
	}
}

// A pcapng whose packet after a hole carries CutComment: the hole (in the
// packet's direction and, through its ACK, in its peer's) is a cut; a hole
// the comment does not cover stays a gap; a Handler that is no
// CutHandler gets gaps.
func TestCutMarkedHoles(t *testing.T) {
	v := newConv("10.0.0.1:40000", "10.0.0.2:9092", 1000, 5000)
	v.handshake()
	v.send(true, "req-1.")
	v.send(false, "resp-1.")
	cutC, cutS := v.cseq, v.sseq
	v.next(true, "left-out-request")   // not written
	v.next(false, "left-out-response") // not written
	marked := len(v.segs)
	v.send(true, "req-2.")
	v.send(false, "resp-2.")
	v.next(false, "lost!") // a loss the comment does not cover
	v.send(false, "resp-3.")
	v.close()

	p := ngWithComments(t, v.segs, map[int][]string{marked: {"an analyst's note",
		CutComment([]Cut{{cutC, int64(len("left-out-request"))}}, []Cut{{cutS, int64(len("left-out-response"))}})}})

	h := cutRec{newRec()}
	if _, err := ReadFiles(context.Background(), []string{p}, Options{}, h); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(h.filter("cut "), h.filter("gap "))
	if want := "[cut 0 1 17 cut 0 0 16] [gap 0 1 5]"; got != want { // the ACK passes over the peer's hole first
		t.Errorf("got %s, want %s\n%v", got, want, h.log)
	}
	if s := h.stream(0, AtoB); s != "req-1.req-2." {
		t.Errorf("client bytes %q", s)
	}
	plain := newRec()
	if _, err := ReadFiles(context.Background(), []string{p}, Options{}, plain); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(plain.filter("gap ")); got != "[gap 0 1 17 gap 0 0 16 gap 0 1 5]" {
		t.Errorf("a Handler without Cut: %s", got)
	}
}

// ngWithComments writes segs as a pcapng, the packets at the indexes of
// comments with those comments.
func ngWithComments(t *testing.T, segs []seg, comments map[int][]string) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet, TimestampResolution: 9}, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range segs {
		b := frame(t, layers.LinkTypeEthernet, s)
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(s.at), CaptureLength: len(b), Length: len(b)}
		if err := w.WritePacketWithOptions(ci, b, pcapgo.NgPacketOptions{Comments: comments[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "cut.pcapng", buf.Bytes())
}

// A cut is only what the comment names, up to the marked packet: a hole
// partly lost before the writer left bytes out is a gap for that part; a
// span claimed past the marked packet (a forged or broken comment) is no
// cut; a span is used once, not for a later hole.
func TestCutBounds(t *testing.T) {
	v := newConv("10.0.0.1:40000", "10.0.0.2:9092", 1000, 5000)
	v.handshake()
	v.send(true, "req-1.")
	v.next(true, "lost")             // lost in the original capture
	from := v.cseq                   // the writer left out from here
	v.next(true, "left-out-request") // 16 bytes, not written
	marked := len(v.segs)
	v.send(true, "req-2.")
	v.next(true, "gone!") // a later loss: the old span must not cover it
	forged := len(v.segs)
	v.send(true, "req-3.")
	v.next(true, "xyz") // claimed by a span past the packet's own sequence number
	bad := len(v.segs)
	v.send(true, "req-4.")
	v.close()
	p := ngWithComments(t, v.segs, map[int][]string{
		marked: {CutComment([]Cut{{from, 16}}, nil)},
		forged: {CutComment([]Cut{{from, 16}}, nil)}, // already passed
		bad:    {CutComment([]Cut{{v.segs[bad].seq - 3, 1000}}, nil)},
	})
	h := cutRec{newRec()}
	if _, err := ReadFiles(context.Background(), []string{p}, Options{}, h); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range h.log {
		if strings.HasPrefix(l, "cut ") || strings.HasPrefix(l, "gap ") {
			got = append(got, l)
		}
	}
	if want := "[gap 0 0 4 cut 0 0 16 gap 0 0 5 gap 0 0 3]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
}

// cutSegRec is a cutRec that also records segment marks.
type cutSegRec struct{ cutRec }

func (r cutSegRec) Segment(c *Conn, d Dir, s Segment) {
	r.log = append(r.log, fmt.Sprintf("segment %d %d %v frame %d", c.Index, d, s.Kind, s.Frame))
}

// A packet right after a hole a cut covers whole is in order, delivered
// as it arrives: a copy of it sent again later (a retransmission the cut
// kept) is a retransmission, and does not deliver its bytes; the first
// bytes after a cut of the peer's direction, given up through the ACK,
// are in order too. Both were held as out of order until the peer
// acknowledged the hole, the bytes then stamped with the retransmission.
func TestCutThenRetransmission(t *testing.T) {
	v := newConv("10.0.0.1:40000", "10.0.0.2:9092", 1000, 5000)
	v.handshake()
	cutC, cutS := v.cseq, v.sseq
	v.next(true, "left-out-request")   // not written
	v.next(false, "left-out-response") // not written
	marked := len(v.segs)
	first := v.send(true, "req-2.")
	v.step = 250 * time.Millisecond
	v.add(first) // sent again: the first copy was lost beyond the capture point
	v.step = time.Millisecond
	v.send(false, "resp-2.")
	v.close()
	p := ngWithComments(t, v.segs, map[int][]string{marked: {
		CutComment([]Cut{{cutC, int64(len("left-out-request"))}}, []Cut{{cutS, int64(len("left-out-response"))}})}})
	for _, sync := range []bool{true, false} {
		h := cutSegRec{cutRec{newRec()}}
		if _, err := ReadFiles(context.Background(), []string{p}, Options{Synchronous: sync}, h); err != nil {
			t.Fatal(err)
		}
		var marks []string
		for _, l := range h.log {
			if strings.HasPrefix(l, "segment ") && !strings.Contains(l, " fin ") {
				marks = append(marks, l)
			}
		}
		if got, want := fmt.Sprint(marks), "[segment 0 0 retransmission frame 5]"; got != want {
			t.Errorf("synchronous %v: segment marks %s, want %s\n%v", sync, got, want, h.log)
		}
		if got, want := fmt.Sprint(h.filter("cut "), h.filter("gap ")), "[cut 0 1 17 cut 0 0 16] []"; got != want {
			t.Errorf("synchronous %v: got %s, want %s", sync, got, want)
		}
		var req []recChunk
		for _, c := range h.chunks {
			if c.dir == AtoB {
				req = append(req, c)
			}
		}
		if len(req) != 1 || req[0].data != "req-2." || req[0].frame != 4 || !req[0].time.Equal(t0.Add(first.at)) {
			t.Errorf("synchronous %v: request chunks %+v, want req-2. from frame 4 at %v", sync, req, t0.Add(first.at))
		}
		if st := h.conns[0].Stats; st.Retransmissions != 1 || st.OutOfOrder != 0 || st.Gaps != 0 {
			t.Errorf("synchronous %v: stats %+v: want 1 retransmission, nothing out of order, no gap", sync, st)
		}
	}
}
