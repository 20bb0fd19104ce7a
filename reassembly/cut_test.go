package reassembly

import (
	"bytes"
	"context"
	"fmt"
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
	for _, c := range []struct{ sent, received Cut }{
		{Cut{1003, 63}, Cut{2001, 794}},
		{Cut{4294967290, 20}, Cut{}},
		{Cut{}, Cut{7, 1}},
	} {
		m, ok := cutOf(CutComment(c.sent, c.received))
		if !ok || m.sent != c.sent || m.received != c.received {
			t.Errorf("%+v: parsed %+v %v", c, m, ok)
		}
	}
	for _, s := range []string{"", "a comment", "kwire-cut:", "kwire-cut: sent x+1", "kwire-cut: sent 5+0", "kwire-cut: sent 5+-3", "kwire-cut: sent 99999999999+3"} {
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

	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet, TimestampResolution: 9}, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range v.segs {
		b := frame(t, layers.LinkTypeEthernet, s)
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(s.at), CaptureLength: len(b), Length: len(b)}
		var opts pcapgo.NgPacketOptions
		if i == marked {
			opts.Comments = []string{"an analyst's note", CutComment(Cut{cutC, int64(len("left-out-request"))}, Cut{cutS, int64(len("left-out-response"))})}
		}
		if err := w.WritePacketWithOptions(ci, b, opts); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, "cut.pcapng", buf.Bytes())

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
