package main

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/kwire/kwire/render"
)

// tcpPayloads replaces each frame that is a whole packet, as tcpdump -X
// (an IP packet) and -XX or Wireshark's packet bytes (an Ethernet frame)
// dump one, by its TCP payload, and drops a packet that carries none (an
// ACK), each with a note on w. A packet is one when its IPv4 total length
// (RFC 791) or IPv6 payload length (RFC 8200) counts its bytes exactly
// and it carries TCP: a Kafka frame cannot start so (its length would be
// 1 GiB or more). The headers are read by gopacket.
func tcpPayloads(frames []render.HexFrame, w io.Writer) []render.HexFrame {
	out := frames[:0:0]
	for _, f := range frames {
		payload, flow, ok := tcpPayload(f.Data)
		if !ok {
			out = append(out, f)
			continue
		}
		if len(payload) == 0 {
			fmt.Fprintf(w, "kwire: line %d: skipped a packet with no TCP payload (%s)\n", f.Line, flow)
			continue
		}
		fmt.Fprintf(w, "kwire: line %d: the bytes are a packet (%s): decoding its TCP payload, %d bytes\n", f.Line, flow, len(payload))
		out = append(out, render.HexFrame{Data: payload, Line: f.Line})
	}
	return out
}

// tcpPayload returns the TCP payload of data when data is a whole IPv4 or
// IPv6 packet carrying TCP, or an Ethernet frame holding one, and the
// packet's addresses; ok is false otherwise.
func tcpPayload(data []byte) (payload []byte, flow string, ok bool) {
	first := layers.LayerTypeIPv4
	ip := data
	if len(data) >= 14 && !ipPacket(data) {
		switch binary.BigEndian.Uint16(data[12:14]) {
		case uint16(layers.EthernetTypeIPv4), uint16(layers.EthernetTypeIPv6):
			first, ip = layers.LayerTypeEthernet, data[14:]
		default:
			return nil, "", false
		}
	}
	if !ipPacket(ip) {
		return nil, "", false
	}
	if first != layers.LayerTypeEthernet && ip[0]>>4 == 6 {
		first = layers.LayerTypeIPv6
	}
	p := gopacket.NewPacket(data, first, gopacket.DecodeOptions{NoCopy: true})
	tcp, _ := p.TransportLayer().(*layers.TCP)
	if tcp == nil || p.NetworkLayer() == nil {
		return nil, "", false
	}
	src, dst := p.NetworkLayer().NetworkFlow().Endpoints()
	return tcp.Payload, fmt.Sprintf("%v:%d → %v:%d", src, tcp.SrcPort, dst, tcp.DstPort), true
}

// ipPacket reports whether b is exactly one IPv4 or IPv6 packet whose next
// protocol is TCP, by its version, header and length fields.
func ipPacket(b []byte) bool {
	if len(b) < 20 {
		return false
	}
	switch b[0] >> 4 {
	case 4:
		ihl := int(b[0]&0x0f) * 4
		return ihl >= 20 && int(binary.BigEndian.Uint16(b[2:4])) == len(b) && b[9] == 6 && len(b) >= ihl+20
	case 6:
		return len(b) >= 60 && int(binary.BigEndian.Uint16(b[4:6]))+40 == len(b) && b[6] == 6
	}
	return false
}
