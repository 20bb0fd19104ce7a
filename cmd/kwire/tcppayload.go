package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/kwire/kwire/render"
)

// tcpPayloads replaces each frame that is a whole packet, as tcpdump -X
// (an IP packet) and -XX or Wireshark's packet bytes (an Ethernet frame)
// dump one, by its TCP payload, and drops a packet that carries none (an
// ACK), each with a note on w. The payload of the next packet of the same
// flow (addresses and ports) completes a frame its length says is longer
// than the packet held (a frame over several segments, dumped in order;
// no reassembly beyond that: kwire read takes the capture itself). A packet is one when its IPv4 total length
// (RFC 791) or IPv6 payload length (RFC 8200) counts its bytes exactly
// and it carries TCP: a Kafka frame cannot start so (its length would be
// 1 GiB or more). The headers are read by gopacket.
func tcpPayloads(frames []render.HexFrame, w io.Writer) []render.HexFrame {
	out := frames[:0:0]
	noted, empty := 0, 0
	lastFlow := "" // the flow of out's last frame, when a packet's
	note := func(format string, a ...any) {
		if noted++; noted <= maxPacketNotes {
			fmt.Fprintf(w, "kwire: "+format+"\n", a...)
		}
	}
	for _, f := range frames {
		payload, flow, ok := tcpPayload(f.Data)
		if !ok {
			out = append(out, f)
			lastFlow = ""
			continue
		}
		if len(payload) == 0 {
			empty++
			note("line %d: skipped a packet with no TCP payload (%s)", f.Line, flow)
			continue
		}
		if n := len(out) - 1; n >= 0 && lastFlow == flow && short(out[n].Data) {
			// The rest of a frame the packet before on this flow began.
			note("line %d: the bytes are a packet (%s): its TCP payload, %d bytes, continues the frame of line %d", f.Line, flow, len(payload), out[n].Line)
			out[n].Data = append(out[n].Data, payload...)
			continue
		}
		note("line %d: the bytes are a packet (%s): decoding its TCP payload, %d bytes", f.Line, flow, len(payload))
		out = append(out, render.HexFrame{Data: slices.Clip(payload), Line: f.Line})
		lastFlow = flow
	}
	if noted > maxPacketNotes {
		fmt.Fprintf(w, "kwire: … %d more packets, not noted (%d packets without a TCP payload skipped in all)\n", noted-maxPacketNotes, empty)
	}
	return out
}

// short reports whether b is less than the frame its first 4 bytes
// announce (Kafka's Size): the rest is in the next segment.
func short(b []byte) bool {
	return len(b) < 4 || int64(binary.BigEndian.Uint32(b)) > int64(len(b))-4
}

// maxPacketNotes bounds the notes tcpPayloads writes, one a packet.
const maxPacketNotes = 32

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
