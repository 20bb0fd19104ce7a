package main

// read -w: the packets of the exchanges shown, written as a new pcapng,
// with their connections' handshakes, so that a large capture can be cut
// down to the exchanges that matter. The read itself notes, per
// connection, the packet ranges of every exchange shown; after it, a
// second pass over the files finds each connection's last handshake
// (SYN, SYN-ACK, ACK) before its first selected packet, and a third
// writes, in capture order, the packets of those connections inside the
// ranges and the handshakes. A segment that came in IP fragments is
// written with all its fragments: when the second pass met one, a pass
// between the second and the third finds the fragments of the segments
// written (a segment is known whole only at its last fragment, too late
// to write the ones before it).

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
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
	// whole says the connection is TLS: its records cannot be cut (each
	// is decrypted with the ones before it), so every packet up to its
	// last range is written.
	whole bool
	// hulls are, per direction, the sequence numbers the packets of each
	// range span, first to last byte: a packet outside the ranges whose
	// bytes lie within one (a segment that arrived out of order, or was
	// sent again after a loss, numbered before or after the range) holds
	// bytes of a frame written, and is written too.
	hulls [2][]span
}

// cutState follows one direction of a connection while it is written, to
// mark the packets written after bytes left out (reassembly.CutComment):
// where the written bytes end, and the spans of sequence numbers left out
// since, each exactly what skipped packets carried (a hole the original
// capture had stays a hole: the reader reports it as a gap).
type cutState struct {
	written bool   // end is where the written bytes end
	end     uint32 // next sequence number after what was written (SYN, FIN count one)
	spans   []span // left out, not yet marked, in sequence order, disjoint
}

// span is sequence numbers [from, to).
type span struct{ from, to uint32 }

// before reports a < b in sequence space (RFC 9293 section 3.4).
func before(a, b uint32) bool { return int32(a-b) < 0 }

// skip notes a packet not written: n bytes of payload at seq, and its FIN.
func (c *cutState) skip(seq uint32, n int, fin bool) {
	to := seq + uint32(n)
	if fin {
		to++
	}
	if c.written && before(seq, c.end) {
		seq = c.end // what was written already: a retransmission
	}
	if !before(seq, to) {
		return
	}
	// Merge into the spans (few: a writer marks them at its next packet).
	out := c.spans[:0:0]
	added := false
	for _, sp := range c.spans {
		switch {
		case before(sp.to, seq): // wholly before
			out = append(out, sp)
		case before(to, sp.from): // wholly after
			if !added {
				out, added = append(out, span{seq, to}), true
			}
			out = append(out, sp)
		default: // touching or overlapping: merge
			if before(sp.from, seq) {
				seq = sp.from
			}
			if before(to, sp.to) {
				to = sp.to
			}
		}
	}
	if !added {
		out = append(out, span{seq, to})
	}
	if len(out) > reassemblyMaxCuts {
		out = out[len(out)-reassemblyMaxCuts:] // the oldest are left as gaps
	}
	c.spans = out
}

// reassemblyMaxCuts is how many spans one comment carries (reassembly's
// bound on a comment's cuts is 16 for both directions together).
const reassemblyMaxCuts = 8

// take returns the spans that end at or before upTo, as cuts to mark,
// and forgets them.
func (c *cutState) take(upTo uint32) []reassembly.Cut {
	var out []reassembly.Cut
	kept := c.spans[:0]
	for _, sp := range c.spans {
		if before(upTo, sp.to) {
			kept = append(kept, sp)
			continue
		}
		if n := int64(sp.to - sp.from); n > 0 && n < 1<<30 {
			out = append(out, reassembly.Cut{From: sp.from, Bytes: n})
		}
	}
	c.spans = kept
	return out
}

// wrote notes a packet written: payload of n bytes at seq, SYN and FIN
// set or not.
func (c *cutState) wrote(seq uint32, n int, syn, fin bool) {
	end := seq + uint32(n)
	if syn {
		end++
	}
	if fin {
		end++
	}
	if !c.written || before(c.end, end) {
		c.written, c.end = true, end
	}
}

// packetSelection collects the exchanges shown for -w. Its memory is a
// few dozen bytes per exchange shown (ranges of adjacent exchanges are
// merged), not per packet.
type packetSelection struct {
	conns map[selKey]*selConn
	// topicIDs are the topic IDs the exchanges shown name (at most
	// maxCutNames): their names go in the file (topicIDsComment).
	topicIDs map[facts.TopicID]bool
	file     int // the file being read (-1 before the first)
	n        int // exchanges added
	// fragmented says a selected connection has a segment that came in
	// IP fragments; fragments are the frames of the fragments of those
	// written, each but the last (which is the segment's own packet).
	fragmented bool
	fragments  map[fileFrame]bool
	// secrets are the packet ranges of exchanges not selected that can
	// hold credentials (SASL tokens, sensitive configs, delegation
	// tokens, SCRAM credentials, the KRaft metadata log's records:
	// credentialAPI), at most
	// maxSecretRanges of them (secretsCapped past it): a packet written
	// for a selected exchange may carry their bytes too (a segment
	// holding two frames), which the file then holds as captured.
	secrets       []secretRange
	secretsCapped bool
	// held counts the exchanges selected that can hold credentials (as
	// passOver's), heldAPIs names their APIs: the file holds them as
	// captured.
	held     int
	heldAPIs []string
	// tls counts the exchanges selected that were decrypted from TLS:
	// the file holds them encrypted, and no keys (read's note when the
	// keys came from the input's Decryption Secrets Blocks).
	tls int
}

// secretRange is the packets of a frame not selected that can hold
// credentials, on the connection of key.
type secretRange struct {
	key selKey
	r   frameRange
	api string
}

// maxSecretRanges bounds the ranges secrets keeps (40 bytes each).
const maxSecretRanges = 1 << 14

// passOver notes an exchange not selected: when it can hold credentials,
// the packets of its frames, to tell whether the file also holds them
// (neighbours).
func (s *packetSelection) passOver(ex *dissect.Exchange) {
	api, ok := credentialAPI(ex)
	if !ok {
		return
	}
	k := selKey{file: max(s.file, 0), client: ex.Client, broker: ex.Broker}
	for _, fr := range [...]*dissect.Frame{ex.Request, ex.Response} {
		if fr == nil {
			continue
		}
		if len(s.secrets) >= maxSecretRanges {
			s.secretsCapped = true
			return
		}
		s.secrets = append(s.secrets, secretRange{k, frameRange{First: min(fr.FirstPacket, fr.LastPacket), Last: max(fr.FirstPacket, fr.LastPacket)}, api})
	}
}

// credentialAPI names the API of an exchange that can hold credentials (a
// raw SASL token, an API key protocol.KeyCarriesSecrets says can, or
// records of the KRaft metadata log: facts.Exchange.MetadataLogRecords),
// and reports whether it can.
func credentialAPI(ex *dissect.Exchange) (string, bool) {
	switch {
	case ex.Kind == dissect.KindSASL:
		return "a raw SASL token", true
	case protocol.KeyCarriesSecrets(ex.APIKey, false) || protocol.KeyCarriesSecrets(ex.APIKey, true):
		return protocol.APIName(ex.APIKey), true
	case ex.Facts().MetadataLogRecords():
		return protocol.APIName(ex.APIKey) + " of the KRaft metadata log's records", true
	}
	return "", false
}

// neighbours returns the APIs of the exchanges not selected that can hold
// credentials and share packets with those written (after prepare), and
// how many such frames.
func (s *packetSelection) neighbours() (apis []string, n int) {
	for _, sr := range s.secrets {
		c := s.conns[sr.key]
		if c == nil || !c.overlaps(sr.r) {
			continue
		}
		n++
		if !slices.Contains(apis, sr.api) {
			apis = append(apis, sr.api)
		}
	}
	return apis, n
}

// overlaps reports whether some packet of r is in one of c's ranges
// (sorted and merged: prepare).
func (c *selConn) overlaps(r frameRange) bool {
	i, _ := slices.BinarySearchFunc(c.ranges, r.First, func(x frameRange, f int64) int {
		if x.Last < f {
			return -1
		}
		return 1
	})
	return i < len(c.ranges) && c.ranges[i].First <= r.Last
}

// fileFrame is a packet: its file (as selKey's) and frame number.
type fileFrame struct {
	file  int
	frame int64
}

func newPacketSelection() *packetSelection {
	return &packetSelection{conns: map[selKey]*selConn{}, file: -1}
}

// nextFile marks the start of the next file read on its own.
func (s *packetSelection) nextFile() { s.file++ }

// add notes the packets of an exchange shown.
func (s *packetSelection) add(ex *dissect.Exchange, fx *facts.Exchange) {
	if fx != nil {
		// Every topic ID it names: its topics', its group's assignments'
		// and owned partitions' (KIP-848), its transactions'.
		for _, s64 := range fx.TopicIDs() {
			var id facts.TopicID
			if b, err := base64.RawURLEncoding.DecodeString(s64); err == nil && len(b) == len(id) && len(s.topicIDs) < maxCutNames {
				copy(id[:], b)
				if id.IsZero() {
					continue
				}
				if s.topicIDs == nil {
					s.topicIDs = map[facts.TopicID]bool{}
				}
				s.topicIDs[id] = true
			}
		}
	}
	if api, ok := credentialAPI(ex); ok {
		s.held++
		if !slices.Contains(s.heldAPIs, api) {
			s.heldAPIs = append(s.heldAPIs, api)
		}
	}
	k := selKey{file: max(s.file, 0), client: ex.Client, broker: ex.Broker}
	c := s.conns[k]
	if c == nil {
		c = &selConn{}
		s.conns[k] = c
	}
	c.whole = c.whole || ex.TLS
	if ex.TLS {
		s.tls++
	}
	for _, fr := range [...]*dissect.Frame{ex.Request, ex.Response} {
		if fr == nil {
			continue
		}
		// A frame whose bytes came out of order ends in a packet numbered
		// before its first (corr 2's second half first): its range is
		// both.
		r := frameRange{First: min(fr.FirstPacket, fr.LastPacket), Last: max(fr.FirstPacket, fr.LastPacket)}
		if n := len(c.ranges); n > 0 && c.ranges[n-1].First <= r.First && r.First <= c.ranges[n-1].Last+1 {
			c.ranges[n-1].Last = max(c.ranges[n-1].Last, r.Last)
			continue
		}
		c.ranges = append(c.ranges, r)
		c.sorted = false
	}
	s.n++
}

// lookupDir returns the selected connection of a TCP packet, if any, and
// the packet's direction: 0 from the client, 1 from the broker.
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
	return c.rangeOf(f) >= 0
}

// inHull reports whether payload of n bytes at seq of direction dir lies
// within the bytes a range's packets span.
func (c *selConn) inHull(dir int, seq uint32, n int) bool {
	if n <= 0 {
		return false
	}
	end := seq + uint32(n)
	for _, h := range c.hulls[dir] {
		if h.from != h.to && before(seq, h.to) && before(h.from, end) {
			return true
		}
	}
	return false
}

// hull widens direction dir's hull of range r to payload of n bytes at
// seq.
func (c *selConn) hull(dir, r int, seq uint32, n int) {
	if n <= 0 {
		return
	}
	hs := c.hulls[dir]
	for len(hs) <= r {
		hs = append(hs, span{})
	}
	end := seq + uint32(n)
	switch h := &hs[r]; {
	case h.from == h.to:
		*h = span{seq, end}
	default:
		if before(seq, h.from) {
			h.from = seq
		}
		if before(h.to, end) {
			h.to = end
		}
	}
	c.hulls[dir] = hs
}

// keeps reports whether TCP packet p of direction dir of c is written:
// inside a range or its hull, part of the handshake or the close, or of
// a TLS connection up to its last range.
func (c *selConn) keeps(p *reassembly.Packet, dir int) bool {
	if c.whole && len(c.ranges) > 0 && p.Frame <= c.ranges[len(c.ranges)-1].Last {
		// A TLS connection ends at its last range: its close after a
		// cut would be a hole the records cannot be followed across.
		return true
	}
	return c.in(p.Frame) || c.inHull(dir, p.Seq, p.Payload) || slices.Contains(c.handshake, p.Frame) ||
		!c.whole && slices.Contains(c.closing, p.Frame)
}

// rangeOf returns the index of the range holding frame f, -1 when none.
func (c *selConn) rangeOf(f int64) int {
	i, found := slices.BinarySearchFunc(c.ranges, f, func(r frameRange, f int64) int {
		switch {
		case r.Last < f:
			return -1
		case r.First > f:
			return 1
		}
		return 0
	})
	if !found {
		return -1
	}
	return i
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
func writeSelection(ctx context.Context, paths []string, ropts reassembly.Options, sel *packetSelection, names *facts.Names, path string) (int64, error) {
	section := pcapgo.NgSectionInfo{Application: reassembly.CutApplication, Comment: topicIDsComment(sel.topicIDs, names)}
	sel.prepare()
	fileOf := func(p *reassembly.Packet) int {
		if ropts.Merge && len(paths) > 1 {
			return 0
		}
		return p.File
	}
	// Pass 2: each connection's last handshake before its first packet
	// written, its close after its last (the cut file's connections end
	// as they did), and the sequence numbers each range's packets span. Its only errors are the files' own, which the
	// read reported.
	_ = reassembly.EachPacket(ctx, paths, ropts, func(p *reassembly.Packet) error {
		if !p.TCP {
			return nil
		}
		c, dir := sel.lookupDir(fileOf(p), p)
		if c == nil || len(c.ranges) == 0 {
			return nil
		}
		if len(p.Fragments) > 0 {
			sel.fragmented = true
		}
		if r := c.rangeOf(p.Frame); r >= 0 {
			c.hull(dir, r, p.Seq, p.Payload)
		}
		if p.Flags&(tcpSYN|tcpACK|tcpFIN|tcpRST) == 0 {
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
	if sel.fragmented {
		// The fragments of the segments written, known now that the
		// hulls are.
		_ = reassembly.EachPacket(ctx, paths, ropts, func(p *reassembly.Packet) error {
			if !p.TCP || len(p.Fragments) == 0 {
				return nil
			}
			if c, dir := sel.lookupDir(fileOf(p), p); c != nil && c.keeps(p, dir) {
				if sel.fragments == nil {
					sel.fragments = map[fileFrame]bool{}
				}
				for _, fr := range p.Fragments {
					if fr != p.Frame {
						sel.fragments[fileFrame{fileOf(p), fr}] = true
					}
				}
			}
			return nil
		})
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	var w *pcapgo.NgWriter
	ifaces := map[layers.LinkType]int{}
	var written int64
	// write writes a packet, with its options.
	write := func(p *reassembly.Packet, opts pcapgo.NgPacketOptions) error {
		id, ok := ifaces[p.Link]
		if !ok {
			var err error
			intf := pcapgo.NgInterface{Name: fmt.Sprintf("kwire-%d", len(ifaces)), LinkType: p.Link,
				Comment: "packets of the exchanges kwire read selected", TimestampResolution: 9}
			if w == nil {
				w, err = pcapgo.NewNgWriterInterface(bw, intf, pcapgo.NgWriterOptions{
					SectionInfo: section})
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
	}
	err = reassembly.EachPacket(ctx, paths, ropts, func(p *reassembly.Packet) error {
		if !p.TCP {
			if sel.fragments[fileFrame{fileOf(p), p.Frame}] {
				// A fragment of a segment written (the segment's
				// own packet, its last, is written below, marked).
				return write(p, pcapgo.NgPacketOptions{})
			}
			return nil
		}
		c, dir := sel.lookupDir(fileOf(p), p)
		if c == nil {
			return nil
		}
		// A cut file cut again: the holes it marks are holes of this
		// one too, marked on the next packet written.
		if sent, received := reassembly.PacketCuts(p); sent != nil || received != nil {
			for _, cu := range sent {
				c.cut[dir].skip(cu.From, int(cu.Bytes), false)
			}
			for _, cu := range received {
				c.cut[1-dir].skip(cu.From, int(cu.Bytes), false)
			}
		}
		if !c.keeps(p, dir) {
			c.cut[dir].skip(p.Seq, p.Payload, p.Flags&tcpFIN != 0)
			return nil
		}
		// A packet written after bytes left out says so, for its own
		// direction (up to its sequence number) and its peer's (up to
		// what it acknowledges), so that kwire reads the holes as cuts,
		// not losses.
		var opts pcapgo.NgPacketOptions
		sent := c.cut[dir].take(p.Seq)
		var received []reassembly.Cut
		if p.Flags&tcpACK != 0 {
			received = c.cut[1-dir].take(p.Ack)
		}
		if len(sent) > 0 || len(received) > 0 {
			opts.Comments = []string{reassembly.CutComment(sent, received)}
		}
		c.cut[dir].wrote(p.Seq, p.Payload, p.Flags&tcpSYN != 0, p.Flags&tcpFIN != 0)
		return write(p, opts)
	})
	var we *writeError
	if err != nil && !errors.As(err, &we) {
		err = nil // the read reported the files' problems already
	}
	if err == nil && w == nil {
		// Nothing selected: still a valid, empty capture.
		w, err = pcapgo.NewNgWriterInterface(bw, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet, TimestampResolution: 9},
			pcapgo.NgWriterOptions{SectionInfo: section})
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
