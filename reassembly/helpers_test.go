package reassembly

// Test helpers: synthetic captures built with gopacket layers and pcapgo
// writers, and a Handler that records every call.

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

var t0 = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

// seg is one TCP segment to put in a capture.
type seg struct {
	at      time.Duration // after t0
	src     netip.AddrPort
	dst     netip.AddrPort
	seq     uint32
	ack     uint32
	flags   string // any of S A F R P
	payload []byte
	snap    int             // cut the frame to this many bytes (0: whole)
	link    layers.LinkType // 0: the capture's default
	vlans   []uint16        // 802.1Q tags (Ethernet only)
	v6ext   bool            // IPv6 hop-by-hop + destination options headers
	raw     []byte          // a ready-made frame instead of a TCP segment
	nullBE  bool            // NULL link header in big-endian
	win     int             // the advertised window: 0 means 65535, -1 a zero window
	opts    []byte          // TCP options (padded to 4 bytes)
	id      uint16          // the IPv4 identification
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

func windowOf(w int) uint16 {
	switch {
	case w == 0:
		return 65535
	case w < 0:
		return 0
	}
	return uint16(w)
}

// frame serializes s for link type link.
func frame(t testing.TB, link layers.LinkType, s seg) []byte {
	t.Helper()
	if s.raw != nil {
		return s.raw
	}
	tcp := &layers.TCP{
		SrcPort: layers.TCPPort(s.src.Port()),
		DstPort: layers.TCPPort(s.dst.Port()),
		Seq:     s.seq,
		Ack:     s.ack,
		Window:  windowOf(s.win),
		SYN:     strings.Contains(s.flags, "S"),
		ACK:     strings.Contains(s.flags, "A"),
		FIN:     strings.Contains(s.flags, "F"),
		RST:     strings.Contains(s.flags, "R"),
		PSH:     strings.Contains(s.flags, "P"),
	}
	if len(s.opts) > 0 {
		tcp.Options = []layers.TCPOption{{OptionType: layers.TCPOptionKind(s.opts[0]), OptionLength: uint8(len(s.opts)), OptionData: s.opts[2:]}}
	}
	var ls []gopacket.SerializableLayer
	v6 := s.src.Addr().Is6()
	var et layers.EthernetType
	if v6 {
		ip := &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: layers.IPProtocolTCP,
			SrcIP: net.IP(s.src.Addr().AsSlice()), DstIP: net.IP(s.dst.Addr().AsSlice())}
		if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, ip)
		if s.v6ext {
			ip.NextHeader = layers.IPProtocolIPv6HopByHop
			// hop-by-hop (8 bytes: next=60, len 0, PadN of 4) then
			// destination options (8 bytes: next=TCP, len 0, PadN).
			ext := []byte{60, 0, 1, 4, 0, 0, 0, 0, 6, 0, 1, 4, 0, 0, 0, 0}
			ls = append(ls, gopacket.Payload(ext))
		}
		et = layers.EthernetTypeIPv6
	} else {
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolTCP, Flags: layers.IPv4DontFragment, Id: s.id,
			SrcIP: net.IP(s.src.Addr().AsSlice()), DstIP: net.IP(s.dst.Addr().AsSlice())}
		if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, ip)
		et = layers.EthernetTypeIPv4
	}
	ipBuf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if s.v6ext {
		// The extension headers are opaque payload to gopacket: serialize
		// TCP alone, then the IPv6 header around ext+TCP.
		tb := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(tb, opts, tcp, gopacket.Payload(s.payload)); err != nil {
			t.Fatal(err)
		}
		if err := gopacket.SerializeLayers(ipBuf, opts, ls[0], ls[1], gopacket.Payload(tb.Bytes())); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := gopacket.SerializeLayers(ipBuf, opts, ls[0], tcp, gopacket.Payload(s.payload)); err != nil {
			t.Fatal(err)
		}
	}
	ipb := ipBuf.Bytes()
	var out []byte
	switch link {
	case layers.LinkTypeEthernet:
		out = append(out, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
		for _, v := range s.vlans {
			out = binary.BigEndian.AppendUint16(out, 0x8100)
			out = binary.BigEndian.AppendUint16(out, v)
		}
		out = binary.BigEndian.AppendUint16(out, uint16(et))
	case layers.LinkTypeLinuxSLL:
		out = append(out, 0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0)
		out = binary.BigEndian.AppendUint16(out, uint16(et))
	case linkTypeSLL2:
		out = binary.BigEndian.AppendUint16(out, uint16(et))
		out = append(out, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0)
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		fam := uint32(2)
		if v6 {
			fam = 30
		}
		if s.nullBE || link == layers.LinkTypeLoop {
			out = binary.BigEndian.AppendUint32(out, fam)
		} else {
			out = binary.LittleEndian.AppendUint32(out, fam)
		}
	case layers.LinkTypeRaw, linkTypeIPv4, linkTypeIPv6:
	default:
		t.Fatalf("no frame builder for link type %d", link)
	}
	out = append(out, ipb...)
	return out
}

// writePcap writes segs as a pcap file (nanosecond timestamps when nanos).
func writePcap(t testing.TB, w io.Writer, link layers.LinkType, nanos bool, segs []seg) {
	t.Helper()
	var pw *pcapgo.Writer
	if nanos {
		pw = pcapgo.NewWriterNanos(w)
	} else {
		pw = pcapgo.NewWriter(w)
	}
	if err := pw.WriteFileHeader(262144, link); err != nil {
		t.Fatal(err)
	}
	for _, s := range segs {
		b := frame(t, link, s)
		ci := gopacket.CaptureInfo{Timestamp: t0.Add(s.at), CaptureLength: len(b), Length: len(b)}
		if s.snap > 0 && s.snap < len(b) {
			b = b[:s.snap]
			ci.CaptureLength = s.snap
		}
		if err := pw.WritePacket(ci, b); err != nil {
			t.Fatal(err)
		}
	}
}

func pcapBytes(t testing.TB, link layers.LinkType, segs []seg) []byte {
	var buf bytes.Buffer
	writePcap(t, &buf, link, false, segs)
	return buf.Bytes()
}

func gzipBytes(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeFile(t testing.TB, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// conv builds a client/server conversation with running sequence numbers.
type conv struct {
	c, s       netip.AddrPort
	cseq, sseq uint32
	at         time.Duration
	step       time.Duration
	segs       []seg
}

func newConv(c, s string, cisn, sisn uint32) *conv {
	return &conv{c: ap(c), s: ap(s), cseq: cisn, sseq: sisn, step: time.Millisecond}
}

func (v *conv) add(x seg) seg {
	v.at += v.step
	x.at = v.at
	v.segs = append(v.segs, x)
	return x
}

func (v *conv) handshake() {
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq, flags: "S"})
	v.cseq++
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "SA"})
	v.sseq++
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq, ack: v.sseq, flags: "A"})
}

// next returns (without adding) the segment the client (or server) would
// send with payload p, and advances the sequence number.
func (v *conv) next(client bool, p string) seg {
	if client {
		x := seg{src: v.c, dst: v.s, seq: v.cseq, ack: v.sseq, flags: "PA", payload: []byte(p)}
		v.cseq += uint32(len(p))
		return x
	}
	x := seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "PA", payload: []byte(p)}
	v.sseq += uint32(len(p))
	return x
}

func (v *conv) send(client bool, p string) seg { return v.add(v.next(client, p)) }

func (v *conv) fin(client bool) {
	if client {
		v.add(seg{src: v.c, dst: v.s, seq: v.cseq, ack: v.sseq, flags: "FA"})
		v.cseq++
	} else {
		v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "FA"})
		v.sseq++
	}
}

func (v *conv) close() {
	v.fin(true)
	v.fin(false)
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq, ack: v.sseq, flags: "A"})
}

// rec records every Handler call.
type rec struct {
	sawSYNAtOpen []bool
	conns        []*Conn
	log          []string
	chunks       []recChunk
	bytes        map[int]*[2]bytes.Buffer
	closed       map[int]string
	closedAt     map[int]time.Time
}

type recChunk struct {
	conn   int
	dir    Dir
	data   string
	time   time.Time
	frame  int64
	seq    uint32
	offset int64
}

func newRec() *rec {
	return &rec{bytes: map[int]*[2]bytes.Buffer{}, closed: map[int]string{}, closedAt: map[int]time.Time{}}
}

func (r *rec) Open(c *Conn) {
	if _, ok := r.bytes[c.Index]; ok {
		r.log = append(r.log, fmt.Sprintf("DUPLICATE open %d", c.Index))
	}
	r.conns = append(r.conns, c)
	r.bytes[c.Index] = &[2]bytes.Buffer{}
	r.log = append(r.log, fmt.Sprintf("open %d %v>%v", c.Index, c.A, c.B))
	r.sawSYNAtOpen = append(r.sawSYNAtOpen, c.SawSYN)
}

func (r *rec) Data(c *Conn, d Dir, ch Chunk) {
	if _, ok := r.closed[c.Index]; ok {
		r.log = append(r.log, fmt.Sprintf("DATA AFTER CLOSE %d", c.Index))
	}
	r.bytes[c.Index][d].Write(ch.Data)
	r.chunks = append(r.chunks, recChunk{c.Index, d, string(ch.Data), ch.Time, ch.Frame, ch.Seq, ch.Offset})
	r.log = append(r.log, fmt.Sprintf("data %d %d f%d %q", c.Index, d, ch.Frame, ch.Data))
}

func (r *rec) Gap(c *Conn, d Dir, n int64, t time.Time) {
	r.log = append(r.log, fmt.Sprintf("gap %d %d %d", c.Index, d, n))
}

func (r *rec) Close(c *Conn, reason string, t time.Time) {
	if _, ok := r.closed[c.Index]; ok {
		r.log = append(r.log, fmt.Sprintf("DOUBLE CLOSE %d", c.Index))
	}
	r.closed[c.Index] = reason
	r.closedAt[c.Index] = t
	r.log = append(r.log, fmt.Sprintf("close %d %s", c.Index, reason))
}

func (r *rec) stream(i int, d Dir) string {
	b, ok := r.bytes[i]
	if !ok {
		return "<no conn>"
	}
	return b[d].String()
}

// filter returns the log lines that start with prefix.
func (r *rec) filter(prefix string) []string {
	var out []string
	for _, l := range r.log {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

func (r *rec) checkSane(t testing.TB) {
	t.Helper()
	for _, l := range r.log {
		if strings.ToUpper(l[:4]) == l[:4] {
			t.Errorf("handler contract broken: %s", l)
		}
	}
}

// readBytes runs ReadFiles on a capture held in memory.
func readBytes(t testing.TB, b []byte, opts Options) (*rec, Summary, error) {
	t.Helper()
	p := writeFile(t, "capture", b)
	h := newRec()
	sum, err := ReadFiles(context.Background(), []string{p}, opts, h)
	h.checkSane(t)
	return h, sum, err
}

func mustRead(t testing.TB, b []byte, opts Options) (*rec, Summary) {
	t.Helper()
	h, sum, err := readBytes(t, b, opts)
	if err != nil {
		t.Fatalf("ReadFiles: %v", err)
	}
	return h, sum
}

// sliceSource is a PacketSource over frames in memory.
type sliceSource struct {
	frames [][]byte
	cis    []gopacket.CaptureInfo
	link   layers.LinkType
	i      int
}

func (s *sliceSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if s.i >= len(s.frames) {
		return nil, gopacket.CaptureInfo{}, 0, io.EOF
	}
	i := s.i
	s.i++
	return s.frames[i], s.cis[i], s.link, nil
}

func newSliceSource(t testing.TB, link layers.LinkType, segs []seg) *sliceSource {
	src := &sliceSource{link: link}
	for _, s := range segs {
		b := frame(t, link, s)
		src.frames = append(src.frames, b)
		src.cis = append(src.cis, gopacket.CaptureInfo{Timestamp: t0.Add(s.at), CaptureLength: len(b), Length: len(b)})
	}
	return src
}

// memFile is a capture file in memory; its Len sizes the read buffer.
type memFile struct{ *bytes.Reader }

func (memFile) Close() error { return nil }
