package reassembly

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// conflictRec is a rec that is told of retransmissions with different
// data.
type conflictRec struct{ *rec }

func (r conflictRec) Conflict(c *Conn, d Dir, cf Conflict) {
	r.log = append(r.log, fmt.Sprintf("conflict %d %d off=%d n=%d f%d first=f%d", c.Index, d, cf.Offset, cf.Bytes, cf.Frame, cf.First))
}

// TestConflicts: a retransmission is compared byte for byte with the
// bytes delivered (window.go): one whose bytes differ is a Conflict naming
// the stream offset and length of the delivered piece that differs and
// both packets, the first copy staying delivered. A piece covered in part
// (f8) and a difference in the middle of a piece over wholeMax (f11) are
// reported too: with only the hashes of whole pieces, they were not.
func TestConflicts(t *testing.T) {
	big := func(c byte) string { return string(slices.Repeat([]byte{c}, 3000)) }
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()              // frames 1-3
	a := v.send(true, "hello") // f4, offset 0
	x := a
	x.payload = []byte("HELLO")
	v.add(x)                   // f5: the same bytes, other content
	v.add(a)                   // f6: the same bytes, same content
	b := v.send(true, "world") // f7, offset 5
	part := b
	part.seq, part.payload = b.seq+1, []byte("ORL")
	v.add(part) // f8: covers part of a piece only, 'ORL' for 'orl'
	both := seg{src: v.c, dst: v.s, seq: a.seq, ack: v.sseq, flags: "PA", payload: []byte("helloWORLD")}
	v.add(both)                    // f9: covers both pieces, the second differs
	long := v.send(true, big('a')) // f10, offset 10: head and tail hashed
	mid := long
	p := slices.Repeat([]byte{'a'}, 3000)
	p[1500] = 'b'
	mid.payload = p
	v.add(mid) // f11: differs in one byte between its head and tail
	end := long
	q := slices.Repeat([]byte{'a'}, 3000)
	q[2999] = 'z'
	end.payload = q
	v.add(end) // f12: differs in its last byte
	v.send(false, "ok")
	v.close()
	b2 := pcapBytes(t, layers.LinkTypeEthernet, v.segs)
	for _, sync := range []bool{false, true} {
		h := conflictRec{newRec()}
		sum, err := ReadFiles(t.Context(), []string{writeFile(t, "c", b2)}, Options{Synchronous: sync}, h)
		if err != nil || sum.Connections != 1 {
			t.Fatal(err, sum.Connections)
		}
		h.checkSane(t)
		want := []string{
			"conflict 0 0 off=0 n=5 f5 first=f4",
			"conflict 0 0 off=5 n=5 f8 first=f7",
			"conflict 0 0 off=5 n=5 f9 first=f7",
			"conflict 0 0 off=10 n=3000 f11 first=f10",
			"conflict 0 0 off=10 n=3000 f12 first=f10",
		}
		if got := h.filter("conflict"); !slices.Equal(got, want) {
			t.Errorf("sync %v: %q, want %q", sync, got, want)
		}
		// The first copy is delivered.
		if got := h.stream(0, AtoB); got != "helloworld"+big('a') {
			t.Errorf("sync %v: delivered %.20q…", sync, got)
		}
		if c := h.conns[0]; c.Stats.Conflicts != 5 || c.Stats.Retransmissions != 6 {
			t.Errorf("sync %v: %d conflicts of %d retransmissions, want 5 of 6", sync, c.Stats.Conflicts, c.Stats.Retransmissions)
		}
	}
}
