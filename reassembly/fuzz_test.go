package reassembly

import (
	"context"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// pattern is the byte each sender puts at sequence number seq: every
// delivered byte can be checked against the sequence number it claims.
func pattern(port uint16, seq uint32) byte {
	return byte((seq*2654435761)>>24) ^ byte(port)
}

// scriptSource turns fuzz bytes into the segments of one connection,
// 4 bytes per segment: [flags/direction] [sequence step] [length] [cut].
type scriptSource struct {
	script []byte
	high   [2]uint32 // highest sequence number sent so far per side
	frame  [1600]byte
	at     time.Time
}

var scriptPorts = [2]uint16{40000, 9092}

func (s *scriptSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if len(s.script) < 4 {
		return nil, gopacket.CaptureInfo{}, 0, io.EOF
	}
	op, step, n, cut := s.script[0], int8(s.script[1]), int(s.script[2]), s.script[3]
	s.script = s.script[4:]
	side := int(op & 1)
	seq := s.high[side] + uint32(int32(step)*8)
	var flags byte = 0x10 // ACK
	switch op >> 5 {
	case 1:
		flags |= 0x08 // PSH
	case 2:
		flags = 0x02 // SYN
		n = 0
	case 3:
		flags |= 0x01 // FIN
	case 4:
		flags = 0x04 // RST
		n = 0
	}
	if end := seq + uint32(n); int32(end-s.high[side]) > 0 {
		s.high[side] = end
	}
	ack := s.high[1-side]
	if op&2 != 0 {
		ack -= uint32(cut)
	}
	b := s.frame[:40+n]
	clear(b[:40])
	b[0] = 0x45
	binary.BigEndian.PutUint16(b[2:], uint16(40+n))
	b[8], b[9] = 64, 6
	copy(b[12:16], []byte{10, 0, 0, byte(1 + side)})
	copy(b[16:20], []byte{10, 0, 0, byte(2 - side)})
	t := b[20:]
	binary.BigEndian.PutUint16(t[0:], scriptPorts[side])
	binary.BigEndian.PutUint16(t[2:], scriptPorts[1-side])
	binary.BigEndian.PutUint32(t[4:], seq)
	binary.BigEndian.PutUint32(t[8:], ack)
	t[12] = 5 << 4
	t[13] = flags
	first := seq
	if flags&0x02 != 0 {
		first++
	}
	for i := range n {
		b[40+i] = pattern(scriptPorts[side], first+uint32(i))
	}
	s.at = s.at.Add(time.Duration(op>>1&15) * time.Second)
	ci := gopacket.CaptureInfo{Timestamp: s.at, CaptureLength: len(b), Length: len(b)}
	if cut&0x80 != 0 && int(cut&0x7f) < n {
		b = b[:40+int(cut&0x7f)]
		ci.CaptureLength = len(b)
	}
	return b, ci, layers.LinkTypeRaw, nil
}

// checker verifies every delivered byte against pattern and the handler
// contract with invariants.
type checker struct {
	invariants
	t *testing.T
}

func (c *checker) Data(conn *Conn, d Dir, ch Chunk) {
	c.invariants.Data(conn, d, ch)
	port := conn.A.Port()
	if d == BtoA {
		port = conn.B.Port()
	}
	for i, b := range ch.Data {
		if want := pattern(port, ch.Seq+uint32(i)); b != want {
			c.t.Fatalf("conn %d dir %d frame %d: byte %d (seq %d) = %#x, want %#x", conn.Index, d, ch.Frame, i, ch.Seq+uint32(i), b, want)
		}
	}
}

// FuzzSegments drives one connection with arbitrary segments (loss,
// overlaps, reordering, retransmission, SYN/FIN/RST anywhere, snap cuts,
// sequence wrap) and checks that every byte delivered is the byte the
// sender put at that sequence number, at the offset the gaps imply.
func FuzzSegments(f *testing.F) {
	f.Add([]byte{0x40, 0, 0, 0, 0x41, 0, 0, 0, 0x20, 0, 10, 0, 0x21, 0, 20, 0, 0x20, 2, 10, 0, 0x20, 0xfe, 30, 0, 0x60, 0, 0, 0, 0x61, 0, 0, 0})
	f.Add([]byte{0x20, 0, 100, 0, 0x20, 0, 100, 0x85, 0x20, 0xf0, 200, 0, 0x23, 0, 50, 3, 0x80, 0, 0, 0, 0x20, 0, 5, 0})
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 4*400 {
			return
		}
		src := &scriptSource{script: script, at: t0}
		src.high = [2]uint32{4294967000, 77}
		c := &checker{t: t, invariants: invariants{t: t, open: map[*Conn]bool{}, next: map[*Conn]*[2]int64{}}}
		sum, err := Run(context.Background(), src, Options{MaxBufferedPagesPerConn: 4, FlushInterval: time.Second, BufferTimeout: 5 * time.Second}, c)
		if err != nil {
			t.Fatal(err)
		}
		if c.opened != c.closed || c.opened != sum.Connections {
			t.Fatalf("opened %d closed %d summary %d", c.opened, c.closed, sum.Connections)
		}
	})
}
