package reassembly

// Tunnels: the encapsulations that captures on Kubernetes nodes, cloud
// hosts and mirror ports hold, decapsulated so that the inner TCP
// connection is reassembled under its inner addresses and ports:
//
//	IP in IP       IPv4 or IPv6 inside IPv4 or IPv6 (protocols 4 and 41;
//	               RFC 2003, RFC 4213; Calico's IPIP mode)
//	GRE            RFC 2784/2890 (version 0) carrying IPv4, IPv6,
//	               Ethernet (transparent Ethernet bridging, 0x6558),
//	               ERSPAN type I and II (0x88BE) or type III (0x22EB)
//	VXLAN          RFC 7348, on UDP ports Options.VXLANPorts (4789, and
//	               8472, the Linux kernel's default used by flannel and
//	               Cilium)
//	Geneve         RFC 8926, on UDP ports Options.GenevePorts (6081)
//
// and any nesting of them up to Options.MaxTunnelDepth. The headers are
// decoded with gopacket/layers (GRE, ERSPANII, VXLAN, Geneve, UDP); the
// ERSPAN type III header, which gopacket does not have, is read here
// (draft-foschiano-erspan-03 section 4.3).
//
// To add a tunnel: decode its header in decodeTunnel (or from
// decodeUDP by its port), hand the inner packet to decodeEthernet,
// decodeEtherType, decodeIPv4 or decodeIPv6, and add it to tunnel_test.go,
// which wraps a golden capture in it.

import (
	"slices"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// IP protocol numbers of tunnels (IANA "Assigned Internet Protocol
// Numbers").
const (
	ipprotoIPIP = 4  // IPv4 encapsulation
	ipprotoIPv6 = 41 // IPv6 encapsulation
	ipprotoGRE  = 47
	ipprotoUDP  = 17
)

// EtherTypes of GRE payloads without a gopacket constant.
const etherTypeERSPAN3 = 0x22EB

// Tunnel defaults.
const (
	// DefaultMaxTunnelDepth is Options.MaxTunnelDepth's default: real
	// captures nest two or three (a mirrored VXLAN overlay carrying IPIP).
	DefaultMaxTunnelDepth = 8
)

// DefaultVXLANPorts are the UDP ports read as VXLAN by default: the IANA
// port and the Linux kernel's historical default (flannel, Cilium).
var DefaultVXLANPorts = []uint16{4789, 8472}

// DefaultGenevePorts are the UDP ports read as Geneve by default.
var DefaultGenevePorts = []uint16{6081}

// tunnelConfig is what the decoder takes from Options.
type tunnelConfig struct {
	maxDepth int // 0: no decapsulation
	vxlan    []uint16
	geneve   []uint16
}

func (o *Options) tunnelConfig() tunnelConfig {
	c := tunnelConfig{maxDepth: o.MaxTunnelDepth, vxlan: o.VXLANPorts, geneve: o.GenevePorts}
	switch {
	case c.maxDepth == 0:
		c.maxDepth = DefaultMaxTunnelDepth
	case c.maxDepth < 0:
		c.maxDepth = 0
	}
	if c.vxlan == nil {
		c.vxlan = DefaultVXLANPorts
	}
	if c.geneve == nil {
		c.geneve = DefaultGenevePorts
	}
	return c
}

// tunnelLayers are the gopacket layers a frame's tunnels are decoded
// into, kept in decoded so that decoding allocates nothing.
type tunnelLayers struct {
	udp    layers.UDP
	gre    layers.GRE
	erspan layers.ERSPANII
	vxlan  layers.VXLAN
	geneve layers.Geneve
}

// decodeTunnel decapsulates the payload p of an IP packet of protocol
// proto (IP in IP, GRE, or UDP carrying VXLAN or Geneve).
func decodeTunnel(proto byte, p []byte, d *decoded) decodeResult {
	if proto == ipprotoUDP {
		return decodeUDP(p, d)
	}
	if d.depth >= d.tun.maxDepth {
		if d.tun.maxDepth == 0 {
			return resNotTCP
		}
		return resTooDeep
	}
	d.depth++
	switch proto {
	case ipprotoIPIP:
		return decodeIPv4(p, d)
	case ipprotoIPv6:
		return decodeIPv6(p, d)
	case ipprotoGRE:
		return decodeGRE(p, d)
	}
	return resNotTCP
}

// decodeUDP follows a UDP datagram to VXLAN or Geneve by its destination
// port; any other UDP is not TCP.
func decodeUDP(p []byte, d *decoded) decodeResult {
	u := &d.udp
	if u.DecodeFromBytes(p, gopacket.NilDecodeFeedback) != nil {
		return resNotTCP
	}
	port := uint16(u.DstPort)
	vxlan, geneve := slices.Contains(d.tun.vxlan, port), slices.Contains(d.tun.geneve, port)
	if !vxlan && !geneve {
		return resNotTCP
	}
	if d.depth >= d.tun.maxDepth {
		if d.tun.maxDepth == 0 {
			return resNotTCP
		}
		return resTooDeep
	}
	d.depth++
	if vxlan {
		v := &d.vxlan
		if v.DecodeFromBytes(u.Payload, gopacket.NilDecodeFeedback) != nil {
			return resShort
		}
		return decodeEthernet(v.Payload, d)
	}
	g := &d.geneve
	if g.DecodeFromBytes(u.Payload, gopacket.NilDecodeFeedback) != nil {
		return resShort
	}
	if g.Version != 0 {
		return resNotTCP
	}
	if g.Protocol == layers.EthernetTypeTransparentEthernetBridging {
		return decodeEthernet(g.Payload, d)
	}
	return decodeEtherType(uint16(g.Protocol), g.Payload, d)
}

// decodeGRE reads a GRE header (version 0) and its payload.
func decodeGRE(p []byte, d *decoded) decodeResult {
	g := &d.gre
	if g.DecodeFromBytes(p, gopacket.NilDecodeFeedback) != nil {
		return resShort
	}
	if g.Version != 0 { // version 1 is PPTP's enhanced GRE, carrying PPP
		return resNotTCP
	}
	switch g.Protocol {
	case layers.EthernetTypeTransparentEthernetBridging:
		return decodeEthernet(g.Payload, d)
	case layers.EthernetTypeERSPAN:
		if !g.SeqPresent {
			// ERSPAN type I: the mirrored frame follows the GRE header.
			return decodeEthernet(g.Payload, d)
		}
		e := &d.erspan
		if e.DecodeFromBytes(g.Payload, gopacket.NilDecodeFeedback) != nil {
			if len(g.Payload) < 8 {
				return resShort
			}
			return resMalformed
		}
		return decodeEthernet(e.Payload, d)
	case etherTypeERSPAN3:
		return decodeERSPAN3(g.Payload, d)
	}
	return decodeEtherType(uint16(g.Protocol), g.Payload, d)
}

// decodeERSPAN3 reads an ERSPAN type III header: 12 bytes, then an
// 8-byte platform-specific subheader when its O flag (the last bit) is
// set, then the mirrored frame, Ethernet when the frame type (FT, 5
// bits of the third word) is 0, IP when it is 2.
func decodeERSPAN3(p []byte, d *decoded) decodeResult {
	if len(p) < 12 {
		return resShort
	}
	if p[0]>>4 != 2 { // version 2 is type III
		return resMalformed
	}
	hl := 12
	if p[11]&1 != 0 {
		hl += 8
	}
	if len(p) < hl {
		return resShort
	}
	switch ft := be16(p[10:12]) >> 10 & 0x1F; ft {
	case 0:
		return decodeEthernet(p[hl:], d)
	case 2:
		inner := p[hl:]
		if len(inner) == 0 {
			return resShort
		}
		if inner[0]>>4 == 6 {
			return decodeIPv6(inner, d)
		}
		return decodeIPv4(inner, d)
	}
	return resNotTCP
}

// decodeEthernet strips an Ethernet header: dst(6) src(6) ethertype(2).
func decodeEthernet(p []byte, d *decoded) decodeResult {
	if len(p) < 14 {
		return resShort
	}
	if n := int(be16(p[12:14])); n <= 1500 {
		// An IEEE 802.3 length, not an EtherType: LLC (and SNAP) follows,
		// within those n bytes (the frame may be padded past them).
		return decodeLLC(p[14:min(len(p), 14+n)], d)
	}
	return decodeEtherType(be16(p[12:14]), p[14:], d)
}
