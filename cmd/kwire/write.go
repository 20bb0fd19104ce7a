package main

// read -w: the packets of the exchanges shown, written as a new pcapng,
// with their connections' handshakes, so that a large capture can be cut
// down to the exchanges that matter. The read itself notes, per
// connection, the packet ranges of every exchange shown; after it, a
// second pass over the files finds each connection's last handshake
// (SYN, SYN-ACK, ACK) before its first selected packet, and a third
// writes, in capture order, the packets of those connections inside the
// ranges and the handshakes.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
)

// selKey is one connection of one capture: the file (0 when the files are
// merged) and the two endpoints, client first.
type selKey struct {
	file           int
	client, broker netip.AddrPort
}

// selConn is what is written of one connection.
type selConn struct {
	ranges    []frameRange // packet ranges of the exchanges shown
	sorted    bool
	handshake []int64     // frames of the last handshake before the first range
	closing   []int64     // its first FIN and RST packets after the last range (at most maxClosing)
	cut       [2]cutState // per direction, client's first, while writing
}

// cutState follows one direction of a connection while it is written, to
// mark the packet written after bytes left out (reassembly.CutComment):
// what was written up to, and the payload left out since.
type cutState struct {
	written    bool   // end is where the written bytes end (SYN: its sequence number + 1)
	end        uint32 // next sequence number after what was written
	left       bool   // payload was left out since
	from, upTo uint32 // its sequence numbers: from the first to past the last
}

// skip notes payload of n bytes at seq that is not written.
func (c *cutState) skip(seq uint32, n int) {
	if n <= 0 {
		return
	}
	end := seq + uint32(n)
	switch {
	case !c.left:
		c.left, c.from, c.upTo = true, seq, end
		if c.written {
			c.from = c.end
		}
	case int32(end-c.upTo) > 0:
		c.upTo = end
	}
}

// take returns the cut to mark on the next packet written, and clears it.
func (c *cutState) take() reassembly.Cut {
	if !c.left {
		return reassembly.Cut{}
	}
	c.left = false
	if n := int32(c.upTo - c.from); n > 0 {
		return reassembly.Cut{From: c.from, Bytes: int64(n)}
	}
	return reassembly.Cut{} // only bytes written already (retransmissions)
}

// wrote notes a packet written: payload of n bytes at seq, SYN set or not.
func (c *cutState) wrote(seq uint32, n int, syn bool) {
	end := seq + uint32(n)
	if syn {
		end++
	}
	if !c.written || int32(end-c.end) > 0 {
		c.written, c.end = true, end
	}
}

// packetSelection collects the exchanges shown for -w. Its memory is a
// few dozen bytes per exchange shown (ranges of adjacent exchanges are
// merged), not per packet.
type packetSelection struct {
	conns map[selKey]*selConn
	file  int // the file being read (-1 before the first)
	n     int // exchanges added
}

func newPacketSelection() *packetSelection {
	return &packetSelection{conns: map[selKey]*selConn{}, file: -1}
}

// nextFile marks the start of the next file read on its own.
func (s *packetSelection) nextFile() { s.file++ }

// add notes the packets of an exchange shown.
func (s *packetSelection) add(ex *dissect.Exchange) {
	k := selKey{file: max(s.file, 0), client: ex.Client, broker: ex.Broker}
	c := s.conns[k]
	if c == nil {
		c = &selConn{}
		s.conns[k] = c
	}
	for _, fr := range [...]*dissect.Frame{ex.Request, ex.Response} {
		if fr == nil {
			continue
		}
		r := frameRange{First: fr.FirstPacket, Last: fr.LastPacket}
		if n := len(c.ranges); n > 0 && c.ranges[n-1].First <= r.First && r.First <= c.ranges[n-1].Last+1 {
			c.ranges[n-1].Last = max(c.ranges[n-1].Last, r.Last)
			continue
		}
		c.ranges = append(c.ranges, r)
		c.sorted = false
	}
	s.n++
}

// lookup returns the selected connection of a TCP packet, if any.
func (s *packetSelection) lookup(file int, p *reassembly.Packet) *selConn {
	c, _ := s.lookupDir(file, p)
	return c
}

// lookupDir is lookup, with the packet's direction: 0 from the client, 1
// from the broker.
func (s *packetSelection) lookupDir(file int, p *reassembly.Packet) (*selConn, int) {
	if c := s.conns[selKey{file, p.Src, p.Dst}]; c != nil {
		return c, 0
	}
	return s.conns[selKey{file, p.Dst, p.Src}], 1
}

// prepare sorts and merges each connection's ranges.
func (s *packetSelection) prepare() {
	for _, c := range s.conns {
		slices.SortFunc(c.ranges, func(a, b frameRange) int { return int(a.First - b.First) })
		out := c.ranges[:0]
		for _, r := range c.ranges {
			if n := len(out); n > 0 && r.First <= out[n-1].Last+1 {
				out[n-1].Last = max(out[n-1].Last, r.Last)
				continue
			}
			out = append(out, r)
		}
		c.ranges = out
		c.sorted = true
	}
}

// in reports whether frame f is in one of c's ranges.
func (c *selConn) in(f int64) bool {
	i, found := slices.BinarySearchFunc(c.ranges, f, func(r frameRange, f int64) int {
		switch {
		case r.Last < f:
			return -1
		case r.First > f:
			return 1
		}
		return 0
	})
	_ = i
	return found
}

// maxClosing bounds the close packets kept per connection: a FIN each
// way, or an RST or two.
const maxClosing = 4

// TCP flags.
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpACK = 0x10
)

// writeSelection writes the selected packets of the captures to path as
// pcapng and returns how many it wrote. merge says the files were read
// as one capture (file indexes are then 0 in the selection).
func writeSelection(ctx context.Context, paths []string, ropts reassembly.Options, sel *packetSelection, path string) (int64, error) {
	sel.prepare()
	fileOf := func(p *reassembly.Packet) int {
		if ropts.Merge && len(paths) > 1 {
			return 0
		}
		return p.File
	}
	// Pass 2: each connection's last handshake before its first packet
	// written, and its close after its last (the cut file's connections
	// end as they did). Its only errors are the files' own, which the
	// read reported.
	_ = reassembly.EachPacket(ctx, paths, ropts, func(p *reassembly.Packet) error {
		if !p.TCP || p.Flags&(tcpSYN|tcpACK|tcpFIN|tcpRST) == 0 {
			return nil
		}
		c := sel.lookup(fileOf(p), p)
		if c == nil || len(c.ranges) == 0 {
			return nil
		}
		if last := c.ranges[len(c.ranges)-1].Last; p.Frame > last && last > 0 {
			if p.Flags&(tcpFIN|tcpRST) != 0 && len(c.closing) < maxClosing {
				c.closing = append(c.closing, p.Frame)
			}
			return nil
		}
		if p.Frame >= c.ranges[0].First {
			return nil
		}
		switch {
		case p.Flags&tcpSYN != 0 && p.Flags&tcpACK == 0:
			c.handshake = append(c.handshake[:0], p.Frame)
		case p.Flags&tcpSYN != 0 && len(c.handshake) == 1:
			c.handshake = append(c.handshake, p.Frame)
		case p.Flags == tcpACK && len(c.handshake) == 2:
			c.handshake = append(c.handshake, p.Frame)
		}
		return nil
	})
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	var w *pcapgo.NgWriter
	ifaces := map[layers.LinkType]int{}
	var written int64
	err = reassembly.EachPacket(ctx, paths, ropts, func(p *reassembly.Packet) error {
		if !p.TCP {
			return nil
		}
		c, dir := sel.lookupDir(fileOf(p), p)
		if c == nil {
			return nil
		}
		if !c.in(p.Frame) && !slices.Contains(c.handshake, p.Frame) && !slices.Contains(c.closing, p.Frame) {
			c.cut[dir].skip(p.Seq, p.Payload)
			return nil
		}
		// The first packet written after payload left out says so, for
		// both directions (its ACK passes over its peer's), so that
		// kwire reads the holes as cuts, not losses.
		var opts pcapgo.NgPacketOptions
		if sent, received := c.cut[dir].take(), c.cut[1-dir].take(); sent.Bytes > 0 || received.Bytes > 0 {
			opts.Comments = []string{reassembly.CutComment(sent, received)}
		}
		c.cut[dir].wrote(p.Seq, p.Payload, p.Flags&tcpSYN != 0)
		id, ok := ifaces[p.Link]
		if !ok {
			var err error
			intf := pcapgo.NgInterface{Name: fmt.Sprintf("kwire-%d", len(ifaces)), LinkType: p.Link,
				Comment: "packets of the exchanges kwire read selected", TimestampResolution: 9}
			if w == nil {
				w, err = pcapgo.NewNgWriterInterface(bw, intf, pcapgo.NgWriterOptions{
					SectionInfo: pcapgo.NgSectionInfo{Application: "kwire read -w"}})
			} else {
				id, err = w.AddInterface(intf)
			}
			if err != nil {
				return &writeError{err}
			}
			ifaces[p.Link] = id
		}
		ci := p.CI
		ci.InterfaceIndex = id
		ci.AncillaryData = nil
		written++
		if err := w.WritePacketWithOptions(ci, p.Data, opts); err != nil {
			return &writeError{err}
		}
		return nil
	})
	var we *writeError
	if err != nil && !errors.As(err, &we) {
		err = nil // the read reported the files' problems already
	}
	if err == nil && w == nil {
		// Nothing selected: still a valid, empty capture.
		w, err = pcapgo.NewNgWriterInterface(bw, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet, TimestampResolution: 9},
			pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "kwire read -w"}})
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return written, err
}

// writeError is a failure to write the output, not to read the input.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }
