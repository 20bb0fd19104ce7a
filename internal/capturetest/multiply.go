package capturetest

import (
	"container/heap"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// MultiplyOptions says how Multiply copies a capture.
type MultiplyOptions struct {
	Copies int           // copies of the source, 1 to MaxCopies
	Gap    time.Duration // time between the starts of two consecutive copies, ≥ 0
	// Ports are the broker's TCP ports, which tell client from broker
	// on connections whose SYN is not in the source; nil: the ports the
	// source's SYNs went to.
	Ports []uint16
}

// MaxCopies keeps copy addresses inside 10.0.0.0/8 (k+1 < 2^24).
const MaxCopies = 1<<24 - 2

// Multiply writes a capture shaped like a broker's real traffic
// (thousands of client connections, most exchanges small) made from the
// small pcap or pcapng capture in src by copying it o.Copies times, each
// copy from its own client address and shifted in time, as one pcap file
// to w.
//
// Copy k (0-based) is the source with every client address replaced by
// 10.0.0.0 + k + 1 (IPv4; fd00::k+1 for IPv6) and every timestamp moved
// k × o.Gap later; the copies are merged in time order (ties by copy), so
// with a gap shorter than the source's duration many copies are open at
// once, as clients of a real broker are. Broker addresses and ports, and
// client ports, are kept; IPv4 header and TCP checksums are recomputed
// (gopacket's serialization). The client of a connection is the side
// that sent its SYN; connections whose start is not in the source are
// told apart by o.Ports (an error names a connection neither tells).
// Packets other than TCP over IP, IP fragments and IPv6 with extension
// headers are copied unchanged. The output has the source's link type,
// snapshot length and timestamp resolution; the same source and options
// always give the same bytes. Memory is the source's packets, decoded.
// The many-N benchmark captures (mk/bench.mk, internal/capturetest/mkmany)
// and cmd/kwire's TestManyConnections are made with it.

// MultiplyStats says what the source held.
type MultiplyStats struct {
	Packets int64 // packets per copy
	Conns   int   // TCP connections per copy
}

// srcPacket is one packet of the source, decoded once.
type srcPacket struct {
	ci   gopacket.CaptureInfo
	data []byte
	// For TCP over IP (ip4 or ip6 set): the link-layer bytes before the
	// network layer, the bytes after the IP packet (link padding), the
	// TCP layer and its payload, and which address is the client's.
	link, trailer []byte
	ip4           *layers.IPv4
	ip6           *layers.IPv6
	tcp           *layers.TCP
	payload       []byte
	clientIsSrc   bool
}

// flowKey names a TCP connection whatever the direction.
type flowKey struct{ a, b string }

func flowOf(srcIP, dstIP net.IP, sport, dport layers.TCPPort) (flowKey, bool) {
	s := net.JoinHostPort(srcIP.String(), strconv.Itoa(int(sport)))
	d := net.JoinHostPort(dstIP.String(), strconv.Itoa(int(dport)))
	if s < d {
		return flowKey{s, d}, true
	}
	return flowKey{d, s}, false
}

// packetSource is pcapgo's pcap or pcapng reader.
type packetSource interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	LinkType() layers.LinkType
}

func Multiply(src io.ReadSeeker, w io.Writer, o MultiplyOptions) (MultiplyStats, error) {
	var st MultiplyStats
	if o.Copies < 1 || o.Copies > MaxCopies || o.Gap < 0 {
		return st, fmt.Errorf("%d copies %v apart: want 1 to %d copies, a gap of 0 or more", o.Copies, o.Gap, MaxCopies)
	}
	var r packetSource
	snaplen, nanos := uint32(262144), false
	if pr, err := pcapgo.NewReader(src); err == nil {
		r, snaplen, nanos = pr, pr.Snaplen(), pr.Resolution() == gopacket.TimestampResolutionNanosecond
	} else {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return st, err
		}
		nr, nerr := pcapgo.NewNgReader(src, pcapgo.DefaultNgReaderOptions)
		if nerr != nil {
			return st, fmt.Errorf("not a pcap (%v) nor a pcapng file (%v)", err, nerr)
		}
		r = nr
	}
	link := r.LinkType()
	var pkts []*srcPacket
	clientOf := map[flowKey]bool{} // flow → client is the flow's first endpoint (a)
	synDst := map[uint16]bool{}
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return st, err
		}
		p := &srcPacket{ci: ci, data: append([]byte(nil), data...)}
		pkts = append(pkts, p)
		pk := gopacket.NewPacket(p.data, link, gopacket.DecodeOptions{NoCopy: true})
		tcp, _ := pk.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if tcp == nil {
			continue
		}
		var srcIP, dstIP net.IP
		var ipLen int
		switch ip := pk.NetworkLayer().(type) {
		case *layers.IPv4:
			if ip.Flags&layers.IPv4MoreFragments != 0 || ip.FragOffset != 0 {
				continue // fragments are copied as they are
			}
			p.ip4, srcIP, dstIP = ip, ip.SrcIP, ip.DstIP
			ipLen = len(ip.Contents) + len(ip.Payload)
		case *layers.IPv6:
			if len(ip.Contents) != 40 {
				continue // extension headers: copied as they are
			}
			p.ip6, srcIP, dstIP = ip, ip.SrcIP, ip.DstIP
			ipLen = len(ip.Contents) + len(ip.Payload)
		default:
			continue
		}
		// NoCopy: the layer's bytes are a subslice of p.data, running
		// to its end, so their capacities give the offset.
		contents := pk.NetworkLayer().LayerContents()
		netOff := cap(p.data) - cap(contents)
		if len(contents) == 0 || netOff < 0 || netOff+ipLen > len(p.data) || &p.data[netOff] != &contents[0] {
			p.ip4, p.ip6 = nil, nil
			continue
		}
		p.link = p.data[:netOff]
		p.trailer = p.data[min(netOff+ipLen, len(p.data)):]
		p.tcp, p.payload = tcp, tcp.Payload
		key, srcIsA := flowOf(srcIP, dstIP, tcp.SrcPort, tcp.DstPort)
		if tcp.SYN && !tcp.ACK {
			clientOf[key] = srcIsA
			synDst[uint16(tcp.DstPort)] = true
		}
	}
	brokers := map[uint16]bool{}
	for _, p := range o.Ports {
		brokers[p] = true
	}
	if len(brokers) == 0 {
		brokers = synDst
	}
	flows := map[flowKey]bool{}
	for _, p := range pkts {
		if p.tcp == nil {
			continue
		}
		srcIP, dstIP := p.addrs()
		key, srcIsA := flowOf(srcIP, dstIP, p.tcp.SrcPort, p.tcp.DstPort)
		flows[key] = true
		aIsClient, ok := clientOf[key]
		if !ok {
			sb, db := brokers[uint16(p.tcp.SrcPort)], brokers[uint16(p.tcp.DstPort)]
			if sb == db {
				return st, fmt.Errorf("connection %s - %s: no SYN in the source and -ports does not tell its broker", key.a, key.b)
			}
			aIsClient = db == srcIsA
			clientOf[key] = aIsClient
		}
		p.clientIsSrc = aIsClient == srcIsA
	}
	st.Packets, st.Conns = int64(len(pkts)), len(flows)

	pw := pcapgo.NewWriter(w)
	if nanos {
		pw = pcapgo.NewWriterNanos(w)
	}
	if err := pw.WriteFileHeader(snaplen, link); err != nil {
		return st, err
	}
	if len(pkts) == 0 {
		return st, nil
	}
	buf := gopacket.NewSerializeBuffer()
	var out []byte
	m := &mergeHeap{pkts: pkts, gap: o.Gap}
	for k := range o.Copies {
		m.c = append(m.c, cursor{copy: k})
	}
	heap.Init(m)
	for m.Len() > 0 {
		c := &m.c[0]
		p := pkts[c.next]
		ci := p.ci
		ci.Timestamp = ci.Timestamp.Add(time.Duration(c.copy) * o.Gap)
		data := p.data
		if p.tcp != nil {
			var err error
			out, err = p.rewrite(buf, out[:0], c.copy)
			if err != nil {
				return st, err
			}
			data = out
			ci.CaptureLength = len(data)
		}
		if err := pw.WritePacket(ci, data); err != nil {
			return st, err
		}
		if c.next++; c.next == len(pkts) {
			heap.Pop(m)
		} else {
			heap.Fix(m, 0)
		}
	}
	return st, nil
}

func (p *srcPacket) addrs() (src, dst net.IP) {
	if p.ip4 != nil {
		return p.ip4.SrcIP, p.ip4.DstIP
	}
	return p.ip6.SrcIP, p.ip6.DstIP
}

// copyAddr is copy k's client address in the family of ip.
func copyAddr(ip net.IP, k int) net.IP {
	n := uint32(k + 1)
	if ip.To4() != nil {
		return net.IPv4(10, byte(n>>16), byte(n>>8), byte(n)).To4()
	}
	a := make(net.IP, net.IPv6len)
	a[0], a[1] = 0xfd, 0x00
	a[12], a[13], a[14], a[15] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return a
}

// rewrite appends to out copy k of p: its link-layer bytes, its IP and
// TCP headers with the client address replaced and the checksums
// computed, its payload and its trailer. The decoded layers are changed
// in place and put back before it returns.
func (p *srcPacket) rewrite(buf gopacket.SerializeBuffer, out []byte, k int) ([]byte, error) {
	opts := gopacket.SerializeOptions{ComputeChecksums: true}
	var netLayer gopacket.SerializableLayer
	var field *net.IP
	switch {
	case p.ip4 != nil:
		netLayer, field = p.ip4, &p.ip4.DstIP
		if p.clientIsSrc {
			field = &p.ip4.SrcIP
		}
		if err := p.tcp.SetNetworkLayerForChecksum(p.ip4); err != nil {
			return nil, err
		}
	default:
		netLayer, field = p.ip6, &p.ip6.DstIP
		if p.clientIsSrc {
			field = &p.ip6.SrcIP
		}
		if err := p.tcp.SetNetworkLayerForChecksum(p.ip6); err != nil {
			return nil, err
		}
	}
	orig := *field
	*field = copyAddr(orig, k)
	err := gopacket.SerializeLayers(buf, opts, netLayer, p.tcp, gopacket.Payload(p.payload))
	*field = orig
	if err != nil {
		return nil, err
	}
	out = append(out, p.link...)
	out = append(out, buf.Bytes()...)
	return append(out, p.trailer...), nil
}

// cursor is one copy's position in the source.
type cursor struct {
	copy int
	next int // index of the copy's next packet
}

// mergeHeap orders the copies' next packets by time, then copy.
type mergeHeap struct {
	pkts []*srcPacket
	gap  time.Duration
	c    []cursor
}

func (m *mergeHeap) at(i int) time.Time {
	c := m.c[i]
	return m.pkts[c.next].ci.Timestamp.Add(time.Duration(c.copy) * m.gap)
}

func (m *mergeHeap) Len() int { return len(m.c) }
func (m *mergeHeap) Less(i, j int) bool {
	a, b := m.at(i), m.at(j)
	if !a.Equal(b) {
		return a.Before(b)
	}
	return m.c[i].copy < m.c[j].copy
}
func (m *mergeHeap) Swap(i, j int) { m.c[i], m.c[j] = m.c[j], m.c[i] }
func (m *mergeHeap) Push(x any)    { m.c = append(m.c, x.(cursor)) }
func (m *mergeHeap) Pop() any {
	x := m.c[len(m.c)-1]
	m.c = m.c[:len(m.c)-1]
	return x
}
