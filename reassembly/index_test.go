package reassembly

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
)

// indexRec records, per Open, the connection's Index, endpoints and the
// bytes it delivers; unlike rec it allows an Index to open twice.
type indexRec struct {
	opens []*Conn
	data  map[*Conn]*strings.Builder
}

func (r *indexRec) Open(c *Conn) {
	r.opens = append(r.opens, c)
	r.data[c] = &strings.Builder{}
}
func (r *indexRec) Data(c *Conn, d Dir, ch Chunk)    { r.data[c].Write(ch.Data) }
func (r *indexRec) Gap(*Conn, Dir, int64, time.Time) {}
func (r *indexRec) Close(*Conn, string, time.Time)   {}

// TestLatePacketsKeepIndex: packets on the 4-tuple of a connection closed
// longer ago than closedLinger (or closed idle) are, for Wireshark, still
// that connection's tcp.stream. Without bytes they open nothing; with
// bytes they open a Conn under the old Index. Connections after them are
// numbered as Wireshark numbers them.
func TestLatePacketsKeepIndex(t *testing.T) {
	a := newConv("10.0.0.1:40000", "10.0.0.2:9092", 100, 900)
	a.handshake()
	a.send(true, "one")
	a.close()
	// Ten minutes later: the server's FIN again (no bytes), then
	// another connection, then client bytes on a's 4-tuple without a SYN.
	late := a.at + 10*time.Minute
	segs := slices.Clone(a.segs)
	segs = append(segs, seg{at: late, src: a.s, dst: a.c, seq: a.sseq - 1, ack: a.cseq, flags: "FA"})
	b := newConv("10.0.0.3:1", "10.0.0.2:9092", 1, 1)
	b.at = late
	b.handshake()
	b.send(true, "two")
	segs = append(segs, b.segs...)
	segs = append(segs, seg{at: b.at + time.Second, src: a.c, dst: a.s, seq: a.cseq, ack: a.sseq, flags: "PA", payload: []byte("three")})
	c := newConv("10.0.0.4:1", "10.0.0.2:9092", 1, 1)
	c.at = b.at + 2*time.Second
	c.handshake()
	c.send(true, "four")
	segs = append(segs, c.segs...)

	h := &indexRec{data: map[*Conn]*strings.Builder{}}
	p := writeFile(t, "capture", pcapBytes(t, layers.LinkTypeEthernet, segs))
	if _, err := ReadFiles(context.Background(), []string{p}, Options{}, h); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range h.opens {
		got = append(got, fmt.Sprintf("%d %v %q", o.Index, o.A, h.data[o].String()))
	}
	want := []string{
		`0 10.0.0.1:40000 "one"`,
		`1 10.0.0.3:1 "two"`,
		`0 10.0.0.1:40000 "three"`,
		`2 10.0.0.4:1 "four"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("opens\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRetiredBounded: the 4-tuples remembered for late packets are bounded,
// the oldest forgotten first.
func TestRetiredBounded(t *testing.T) {
	r := newRunner(Options{}, &indexRec{data: map[*Conn]*strings.Builder{}})
	srv := ap("10.0.0.2:9092")
	var keys []connKey
	for i := 0; i < maxRetired+10; i++ {
		cl := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 1000)
		s := &stream{r: r, key: makeKey(cl, srv), conn: &Conn{Index: i}, holdIdx: -1}
		r.conns[s.key] = s
		r.forget(s)
		keys = append(keys, s.key)
	}
	if len(r.conns) != 0 || len(r.retired) != maxRetired || len(r.retiredRing) != maxRetired {
		t.Fatalf("table %d, retired %d, ring %d; want 0, %d, %d", len(r.conns), len(r.retired), len(r.retiredRing), maxRetired, maxRetired)
	}
	if _, ok := r.retired[keys[9]]; ok {
		t.Error("the 10th oldest 4-tuple is still remembered")
	}
	if rc, ok := r.retired[keys[10]]; !ok || rc.index != 10 {
		t.Errorf("the 11th oldest 4-tuple: %+v %v, want index 10", rc, ok)
	}
}
