package secretcorpus

import (
	"io"
	"net"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// BrokerPort is the broker port of every corpus connection (kwire's
// default --port).
const BrokerPort = 9092

// WritePcap writes conns to w as a classic pcap file (Ethernet, IPv4,
// TCP): connection i goes from 10.0.0.1:(40000+i) to 10.0.0.2:9092, with
// a three-way handshake, one packet per segment (1 ms apart), and a FIN
// from each side at the end unless the connection is Cut.
func WritePcap(w io.Writer, conns []Conn) error {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(262144, layers.LinkTypeEthernet); err != nil {
		return err
	}
	t := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i, c := range conns {
		s := &stream{pw: pw, t: &t, cport: uint16(40000 + i), seq: [2]uint32{1000, 900000}}
		s.packet(true, tcpSYN, nil)
		s.packet(false, tcpSYN|tcpACK, nil)
		s.packet(true, tcpACK, nil)
		for _, sg := range c.Segs {
			if sg.Lost > 0 {
				s.seq[0] += uint32(sg.Lost)
				continue
			}
			s.packet(sg.FromClient, tcpPSH|tcpACK, sg.Data)
		}
		if !c.Cut {
			s.packet(true, tcpFIN|tcpACK, nil)
			s.packet(false, tcpFIN|tcpACK, nil)
			s.packet(true, tcpACK, nil)
		}
		if s.err != nil {
			return s.err
		}
	}
	return nil
}

const (
	tcpFIN = 1 << iota
	tcpSYN
	_
	tcpPSH
	tcpACK
)

type stream struct {
	pw    *pcapgo.Writer
	t     *time.Time
	cport uint16
	seq   [2]uint32 // next sequence number: client, broker
	err   error
}

var (
	clientIP = net.IPv4(10, 0, 0, 1).To4()
	brokerIP = net.IPv4(10, 0, 0, 2).To4()
	macA     = net.HardwareAddr{2, 0, 0, 0, 0, 1}
	macB     = net.HardwareAddr{2, 0, 0, 0, 0, 2}
)

func (s *stream) packet(fromClient bool, flags int, payload []byte) {
	if s.err != nil {
		return
	}
	d := 0
	eth := &layers.Ethernet{SrcMAC: macA, DstMAC: macB, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: clientIP, DstIP: brokerIP}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(s.cport), DstPort: BrokerPort, Window: 65535}
	if !fromClient {
		d = 1
		eth.SrcMAC, eth.DstMAC = macB, macA
		ip.SrcIP, ip.DstIP = brokerIP, clientIP
		tcp.SrcPort, tcp.DstPort = BrokerPort, layers.TCPPort(s.cport)
	}
	tcp.Seq, tcp.Ack = s.seq[d], s.seq[1-d]
	tcp.FIN, tcp.SYN, tcp.PSH, tcp.ACK = flags&tcpFIN != 0, flags&tcpSYN != 0, flags&tcpPSH != 0, flags&tcpACK != 0
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		s.err = err
		return
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		s.err = err
		return
	}
	s.seq[d] += uint32(len(payload))
	if flags&(tcpSYN|tcpFIN) != 0 {
		s.seq[d]++
	}
	*s.t = s.t.Add(time.Millisecond)
	data := buf.Bytes()
	s.err = s.pw.WritePacket(gopacket.CaptureInfo{Timestamp: *s.t, CaptureLength: len(data), Length: len(data)}, data)
}
