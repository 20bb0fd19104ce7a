package pcaps

// An independent reading of the golden captures, sharing no code with
// kwire's reassembly or dissect packages: pcapgo for the file, gopacket's
// layer decoders for Ethernet/IPv4/IPv6/TCP, and a minimal reassembly that
// is enough for capgen's clean loopback recordings (every connection starts
// with its SYN; no loss). Kafka framing and headers follow the protocol
// guide ("Requests and responses", "Request header" v0-v2, "Response
// header" v0-v1).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// tcpConn is one TCP connection of a capture, its two directions
// reassembled.
type tcpConn struct {
	client, server netip.AddrPort // the client sent the first SYN
	c2s, s2c       []byte         // payload bytes in sequence order
	c2sAt, s2cAt   []span         // which packet brought which bytes
}

type segment struct {
	rel    int64 // offset from the direction's first data byte
	data   []byte
	packet int // 1-based packet number in the file
}

// span says that the bytes from off on came in packet (until the next
// span).
type span struct {
	off    int64
	packet int
}

// packetAt returns the number of the packet that brought byte off.
func packetAt(spans []span, off int64) int {
	i := sort.Search(len(spans), func(i int) bool { return spans[i].off > off })
	if i == 0 {
		return 0
	}
	return spans[i-1].packet
}

type halfConn struct {
	base    uint32 // sequence number of the first data byte
	haveISN bool
	segs    []segment
}

type connBuild struct {
	conn     *tcpConn
	c2s, s2c halfConn
}

// readConns reads a pcap file and returns its TCP connections in the order
// of their SYNs and the number of packets. It fails on segments it cannot
// place (a gap), on packets before a connection's SYN, and on link types
// other than Ethernet and BSD loopback.
func readConns(path string) ([]*tcpConn, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var r interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
		LinkType() layers.LinkType
	}
	if strings.HasSuffix(path, ".pcapng") {
		r, err = pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	} else {
		r, err = pcapgo.NewReader(f)
	}
	if err != nil {
		return nil, 0, err
	}
	var first gopacket.LayerType
	switch r.LinkType() {
	case layers.LinkTypeEthernet:
		first = layers.LayerTypeEthernet
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		first = layers.LayerTypeLoopback
	default:
		return nil, 0, fmt.Errorf("%s: link type %v not handled by the test", path, r.LinkType())
	}
	var (
		eth   layers.Ethernet
		loop  layers.Loopback
		ip4   layers.IPv4
		ip6   layers.IPv6
		tcp   layers.TCP
		parse = gopacket.NewDecodingLayerParser(first, &eth, &loop, &ip4, &ip6, &tcp)
		found []gopacket.LayerType
		live  = map[[2]netip.AddrPort]*connBuild{} // by (client, server)
		all   []*connBuild
	)
	parse.IgnoreUnsupported = true
	n := 1
	for ; ; n++ {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s: packet %d: %w", path, n, err)
		}
		if err := parse.DecodeLayers(data, &found); err != nil {
			return nil, 0, fmt.Errorf("%s: packet %d: %w", path, n, err)
		}
		var src, dst netip.Addr
		isTCP := false
		for _, l := range found {
			switch l {
			case layers.LayerTypeIPv4:
				src, _ = netip.AddrFromSlice(ip4.SrcIP)
				dst, _ = netip.AddrFromSlice(ip4.DstIP)
			case layers.LayerTypeIPv6:
				src, _ = netip.AddrFromSlice(ip6.SrcIP)
				dst, _ = netip.AddrFromSlice(ip6.DstIP)
			case layers.LayerTypeTCP:
				isTCP = true
			}
		}
		if !isTCP {
			continue
		}
		from := netip.AddrPortFrom(src.Unmap(), uint16(tcp.SrcPort))
		to := netip.AddrPortFrom(dst.Unmap(), uint16(tcp.DstPort))
		if tcp.SYN && !tcp.ACK {
			cb := &connBuild{conn: &tcpConn{client: from, server: to}}
			cb.c2s = halfConn{base: tcp.Seq + 1, haveISN: true}
			live[[2]netip.AddrPort{from, to}] = cb // a reused 4-tuple starts afresh
			all = append(all, cb)
			continue
		}
		cb, c2s := live[[2]netip.AddrPort{from, to}], true
		if cb == nil {
			cb, c2s = live[[2]netip.AddrPort{to, from}], false
		}
		if cb == nil {
			return nil, 0, fmt.Errorf("%s: packet %d: %v → %v before any SYN", path, n, from, to)
		}
		h := &cb.c2s
		if !c2s {
			h = &cb.s2c
		}
		if tcp.SYN {
			h.base, h.haveISN = tcp.Seq+1, true
			continue
		}
		if tcp.RST || len(tcp.Payload) == 0 {
			continue // a RST's payload is no stream data
		}
		if !h.haveISN {
			return nil, 0, fmt.Errorf("%s: packet %d: data before the SYN of its direction", path, n)
		}
		h.segs = append(h.segs, segment{
			rel:    int64(uint32(tcp.Seq - h.base)),
			data:   append([]byte(nil), tcp.Payload...),
			packet: n,
		})
	}
	conns := make([]*tcpConn, 0, len(all))
	for _, cb := range all {
		var err error
		if cb.conn.c2s, cb.conn.c2sAt, err = cb.c2s.bytes(); err != nil {
			return nil, 0, fmt.Errorf("%s: %v → %v: %w", path, cb.conn.client, cb.conn.server, err)
		}
		if cb.conn.s2c, cb.conn.s2cAt, err = cb.s2c.bytes(); err != nil {
			return nil, 0, fmt.Errorf("%s: %v → %v: %w", path, cb.conn.server, cb.conn.client, err)
		}
		conns = append(conns, cb.conn)
	}
	return conns, n - 1, nil
}

// bytes concatenates the segments in sequence order; a retransmission
// (bytes already placed) is dropped, a partial overlap contributes its new
// tail, a hole is an error. The spans say which packet brought which
// bytes.
func (h *halfConn) bytes() ([]byte, []span, error) {
	sort.SliceStable(h.segs, func(i, j int) bool { return h.segs[i].rel < h.segs[j].rel })
	var out []byte
	var at []span
	for _, s := range h.segs {
		end := int64(len(out))
		switch {
		case s.rel > end:
			return out, at, fmt.Errorf("hole of %d bytes at stream offset %d", s.rel-end, end)
		case s.rel+int64(len(s.data)) <= end:
			// retransmission
		default:
			at = append(at, span{end, s.packet})
			out = append(out, s.data[end-s.rel:]...)
		}
	}
	return out, at, nil
}

// wireFrame is one Kafka frame of a direction: its bytes with the 4-byte
// size prefix, and its place in the stream.
type wireFrame struct {
	off   int64
	bytes []byte
}

// splitFrames cuts b at Kafka's 4-byte big-endian size prefixes. rest is
// what remains when the last frame is incomplete (or its size negative).
func splitFrames(b []byte) (frames []wireFrame, rest []byte) {
	var off int64
	for len(b) >= 4 {
		n := int32(binary.BigEndian.Uint32(b))
		if n < 0 || int64(n) > int64(len(b)-4) {
			break
		}
		frames = append(frames, wireFrame{off, b[:4+n]})
		b = b[4+n:]
		off += 4 + int64(n)
	}
	return frames, b
}

// serverPorts returns the distinct ports the capture's connections were
// opened to, ascending.
func serverPorts(conns []*tcpConn) []uint16 {
	seen := map[uint16]bool{}
	var ports []uint16
	for _, c := range conns {
		if p := c.server.Port(); !seen[p] {
			seen[p] = true
			ports = append(ports, p)
		}
	}
	sort.Slice(ports, func(i, j int) bool { return ports[i] < ports[j] })
	return ports
}

// wireReader is a tiny cursor over a header's primitives.
type wireReader struct {
	b   []byte
	err error
}

func (r *wireReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		if r.err == nil {
			r.err = fmt.Errorf("need %d bytes, %d left", n, len(r.b))
		}
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *wireReader) int16() int16 {
	if v := r.take(2); v != nil {
		return int16(binary.BigEndian.Uint16(v))
	}
	return 0
}

func (r *wireReader) int32() int32 {
	if v := r.take(4); v != nil {
		return int32(binary.BigEndian.Uint32(v))
	}
	return 0
}

func (r *wireReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("bad unsigned varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

// nullableString reads an INT16-prefixed string; ok is false for null.
func (r *wireReader) nullableString() (s string, ok bool) {
	n := r.int16()
	if n < 0 {
		return "", false
	}
	return string(r.take(int(n))), true
}

// skipTags skips a tagged-field section.
func (r *wireReader) skipTags() {
	for n := r.uvarint(); n > 0 && r.err == nil; n-- {
		r.uvarint()
		r.take(int(r.uvarint()))
	}
}
