package reassembly

// Link, IP and TCP header demultiplexing.
//
// This is a small hand-written decoder rather than a
// gopacket.DecodingLayerParser: it needs to tell a non-first IPv6 fragment
// (behind any extension header) from a TCP segment, to read both byte orders
// of BSD loopback headers, and to know the TCP segment length from the IP
// header when the snap length cut the payload. It allocates nothing; every
// length is checked against the captured bytes before it is used. The TCP
// header itself is decoded by layers.TCP.DecodeFromBytes, because the
// assembler takes a *layers.TCP.
//
// To add a link type: add a case to decodeFrame that strips the link header
// and hands the rest to decodeEtherType (or decodeIPv4, decodeIPv6), and
// add a test case in decode_test.go and a capture in quirks_test.go.
// Tunnels (tunnel.go) hand their inner packet back to the same functions.

import (
	"encoding/binary"

	"github.com/gopacket/gopacket/layers"
)

// Link types that have no constant in gopacket/layers (tcpdump.org
// link-layer header types list).
const (
	linkTypeIPv4     layers.LinkType = 228 // LINKTYPE_IPV4: raw IPv4, no link header
	linkTypeIPv6     layers.LinkType = 229 // LINKTYPE_IPV6: raw IPv6, no link header
	linkTypeRawDLT12 layers.LinkType = 12  // DLT_RAW as written by some old BSD/Linux writers
	linkTypeRawDLT14 layers.LinkType = 14  // DLT_RAW on OpenBSD
	linkTypeSLL2     layers.LinkType = 276 // LINKTYPE_LINUX_SLL2
)

// decodeResult classifies one captured frame.
type decodeResult uint8

const (
	resTCP             decodeResult = iota // a TCP segment; see decoded
	resNotTCP                              // not IP, or IP carrying another protocol
	resFragment                            // an IP fragment; see decoded.frag
	resShort                               // the capture ends inside a header
	resMalformed                           // a header contradicts itself
	resUnsupportedLink                     // a link type this package does not read
	resTooDeep                             // tunnels nest deeper than Options.MaxTunnelDepth
	resTooManyTags                         // more VLAN tags than maxVLANTags
	resTooManyLabels                       // more MPLS labels than maxMPLSLabels
	resTooManyHeaders                      // more IPv6 extension headers than maxIPv6ExtHeaders
)

// EtherTypes (IEEE 802 numbers) this decoder follows.
const (
	etherTypeIPv4   = 0x0800
	etherTypeIPv6   = 0x86DD
	etherTypeDot1Q  = 0x8100 // 802.1Q C-tag
	etherTypeDot1AD = 0x88A8 // 802.1ad S-tag (QinQ)
	etherTypeQinQ1  = 0x9100 // pre-standard QinQ
	etherTypeQinQ2  = 0x9200
	etherTypeMPLS   = 0x8847 // MPLS unicast (RFC 3032)
	etherTypeMPLSMC = 0x8848 // MPLS multicast
	etherTypePPPoE  = 0x8864 // PPPoE session stage (RFC 2516)
)

// PPP protocol numbers (RFC 1661, RFC 5072) of the IP a PPPoE session
// carries.
const (
	pppIPv4 = 0x0021
	pppIPv6 = 0x0057
)

// maxMPLSLabels bounds the label stack walked; a frame with more is
// counted in Summary.TooManyLabels.
const maxMPLSLabels = 16

// The parsing limits, for messages about the frames past them
// (Summary.TooManyTags, TooManyLabels, TooManyHeaders).
const (
	MaxVLANTags       = maxVLANTags
	MaxMPLSLabels     = maxMPLSLabels
	MaxIPv6ExtHeaders = maxIPv6ExtHeaders
)

// maxVLANTags bounds the tag stack we walk; real networks use one or two.
// A frame with more is counted in Summary.TooManyTags.
const maxVLANTags = 8

// maxIPv6ExtHeaders bounds the extension header chain we walk; a packet
// with more is counted in Summary.TooManyHeaders.
const maxIPv6ExtHeaders = 16

// decoded is what decodeFrame found. The slices alias the frame bytes.
type decoded struct {
	srcIP, dstIP []byte // 4 or 16 bytes
	// seg is the captured part of the TCP segment (header and payload),
	// never longer than the IP header says.
	seg []byte
	// segLen is the TCP segment length (header + payload) the IP header
	// declares; it exceeds len(seg) when the snap length cut the frame.
	segLen int
	// frag describes an IP fragment (resFragment); srcIP and dstIP are set.
	frag fragment
	// ipID is the IPv4 identification of the (innermost) header before
	// the TCP segment, -1 for IPv6 and for a datagram rebuilt from
	// fragments (segments.go: packets a sender sent and the capture
	// missed).
	ipID int32
	// depth counts the tunnels the frame came through (tunnel.go).
	depth int
	tunnelLayers
	// tun is the tunnel configuration, set once by the runner.
	tun tunnelConfig
}

// fragment is one IP fragment: a piece of the payload of the datagram
// (ID, protocol) from srcIP to dstIP.
type fragment struct {
	id    uint32 // IPv4 identification (16 bits) or IPv6 fragment header ID
	proto byte   // the protocol of the datagram's payload (6: TCP)
	off   int    // offset of data in the datagram's payload, in bytes
	more  bool   // the more-fragments flag: not the last fragment
	data  []byte // the fragment's payload as captured
	// cut is set when the snap length cut the fragment: the datagram
	// cannot be rebuilt.
	cut bool
	// frames are the frame numbers the fragment came in, when the caller
	// keeps them (decoder.keepFrames): its own, or those of the
	// fragments of the tunnel datagram it was inside; nil otherwise.
	frames []int64
}

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

// decodeFrame strips link and IP headers from one frame of the given link
// type.
func decodeFrame(link layers.LinkType, data []byte, d *decoded) decodeResult {
	d.depth = 0
	switch link {
	case layers.LinkTypeEthernet:
		return decodeEthernet(data, d)
	case layers.LinkTypeLinuxSLL:
		// packet type(2) ARPHRD(2) addr len(2) addr(8) protocol(2)
		if len(data) < 16 {
			return resShort
		}
		return decodeEtherType(be16(data[14:16]), data[16:], d)
	case linkTypeSLL2:
		// protocol(2) reserved(2) ifindex(4) ARPHRD(2) packet type(1)
		// addr len(1) addr(8)
		if len(data) < 20 {
			return resShort
		}
		return decodeEtherType(be16(data[0:2]), data[20:], d)
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		// A 4-byte address family: in the capturing host's byte order for
		// NULL, in network byte order for LOOP. A family is below 256, so
		// two leading zero bytes mean big-endian.
		if len(data) < 4 {
			return resShort
		}
		var fam uint32
		if link == layers.LinkTypeLoop || (data[0] == 0 && data[1] == 0) {
			fam = binary.BigEndian.Uint32(data[:4])
		} else {
			fam = binary.LittleEndian.Uint32(data[:4])
		}
		switch fam {
		case 2: // AF_INET everywhere
			return decodeIPv4(data[4:], d)
		case 10, 24, 28, 30: // AF_INET6: Linux, NetBSD/OpenBSD, FreeBSD, Darwin
			return decodeIPv6(data[4:], d)
		}
		return resNotTCP
	case layers.LinkTypeRaw, linkTypeRawDLT12, linkTypeRawDLT14:
		return decodeIPVersion(data, d, resMalformed)
	case linkTypeIPv4:
		return decodeIPv4(data, d)
	case linkTypeIPv6:
		return decodeIPv6(data, d)
	}
	return resUnsupportedLink
}

// decodeEtherType follows VLAN tags to an IP header.
func decodeEtherType(et uint16, data []byte, d *decoded) decodeResult {
	for range maxVLANTags + 1 { // the tags, then what they carry
		switch et {
		case etherTypeIPv4:
			return decodeIPv4(data, d)
		case etherTypeIPv6:
			return decodeIPv6(data, d)
		case etherTypeDot1Q, etherTypeDot1AD, etherTypeQinQ1, etherTypeQinQ2:
			// TCI(2) ethertype(2)
			if len(data) < 4 {
				return resShort
			}
			et, data = be16(data[2:4]), data[4:]
		case etherTypeMPLS, etherTypeMPLSMC:
			return decodeMPLS(data, d)
		case etherTypePPPoE:
			// ver/type(1) code(1) session(2) length(2), then the PPP
			// protocol(2) of a session packet (code 0).
			if len(data) < 8 {
				return resShort
			}
			if data[0] != 0x11 || data[1] != 0 {
				return resNotTCP // discovery, or a version this is not
			}
			switch be16(data[6:8]) {
			case pppIPv4:
				return decodeIPv4(data[8:], d)
			case pppIPv6:
				return decodeIPv6(data[8:], d)
			}
			return resNotTCP
		default:
			return resNotTCP
		}
	}
	return resTooManyTags
}

// decodeMPLS walks an MPLS label stack (RFC 3032: 4 bytes a label, the
// bottom one with its S bit set) to the IP packet under it, told by its
// version nibble (RFC 4385's pseudowire control word, first nibble 0, is
// not IP).
func decodeMPLS(data []byte, d *decoded) decodeResult {
	for range maxMPLSLabels {
		if len(data) < 4 {
			return resShort
		}
		bottom := data[2]&0x01 != 0
		data = data[4:]
		if !bottom {
			continue
		}
		return decodeIPVersion(data, d, resNotTCP)
	}
	return resTooManyLabels
}

// decodeIPVersion reads an IPv4 or IPv6 packet told by its version
// nibble; other, when the nibble is neither.
func decodeIPVersion(data []byte, d *decoded, other decodeResult) decodeResult {
	if len(data) < 1 {
		return resShort
	}
	switch data[0] >> 4 {
	case 4:
		return decodeIPv4(data, d)
	case 6:
		return decodeIPv6(data, d)
	}
	return other
}

// decodeLLC reads an IEEE 802.3 frame's LLC header: with SNAP (DSAP and
// SSAP 0xAA, control 0x03, an OUI, RFC 1042) its EtherType follows; other
// LLC frames carry no IP this decoder reads.
func decodeLLC(data []byte, d *decoded) decodeResult {
	if len(data) < 8 {
		return resShort
	}
	if data[0] != 0xAA || data[1] != 0xAA || data[2] != 0x03 {
		return resNotTCP
	}
	return decodeEtherType(be16(data[6:8]), data[8:], d)
}

// decodeIPv4 reads an IPv4 header (RFC 791).
func decodeIPv4(data []byte, d *decoded) decodeResult {
	if len(data) < 20 {
		return resShort
	}
	if data[0]>>4 != 4 {
		return resMalformed
	}
	ihl := int(data[0]&0x0F) * 4
	total := int(be16(data[2:4]))
	if total == 0 {
		// TCP segmentation offload: the kernel hands the capture a
		// segment whose length field is not filled in yet.
		total = len(data)
	}
	if ihl < 20 || total < ihl {
		return resMalformed
	}
	if len(data) < ihl {
		return resShort
	}
	if ff := be16(data[6:8]); ff&0x3FFF != 0 { // more-fragments flag or an offset
		end := min(total, len(data))
		d.srcIP, d.dstIP = data[12:16], data[16:20]
		d.frag = fragment{id: uint32(be16(data[4:6])), proto: data[9], off: int(ff&0x1FFF) * 8,
			more: ff&0x2000 != 0, data: data[min(ihl, end):end], cut: len(data) < total}
		return resFragment
	}
	d.srcIP, d.dstIP = data[12:16], data[16:20]
	d.ipID = int32(be16(data[4:6]))
	end := min(total, len(data)) // drops link-layer padding
	return decodeIPPayload(data[9], data[ihl:end], total-ihl, d)
}

// decodeIPPayload follows an IP payload of protocol proto: a TCP segment
// (plen bytes, of which p was captured), or a tunnel.
func decodeIPPayload(proto byte, p []byte, plen int, d *decoded) decodeResult {
	switch proto {
	case 6: // IPPROTO_TCP
		d.seg, d.segLen = p, plen
		return resTCP
	case ipprotoIPIP, ipprotoIPv6, ipprotoGRE, ipprotoUDP:
		return decodeTunnel(proto, p, d)
	}
	return resNotTCP
}

// decodeIPv6 reads an IPv6 header and its extension headers (RFC 8200).
func decodeIPv6(data []byte, d *decoded) decodeResult {
	d.ipID = -1
	if len(data) < 40 {
		return resShort
	}
	if data[0]>>4 != 6 {
		return resMalformed
	}
	next := data[6]
	rest := data[40:]
	plen := int(be16(data[4:6]))
	if plen == 0 {
		// A jumbogram (RFC 2675) or an offloaded segment: the captured
		// bytes are all we know.
		plen = len(rest)
	}
	if len(rest) > plen {
		rest = rest[:plen]
	}
	d.srcIP, d.dstIP = data[8:24], data[24:40]
	for range maxIPv6ExtHeaders + 1 { // the headers, then what they carry
		var hlen int
		switch next {
		case 6, ipprotoIPIP, ipprotoIPv6, ipprotoGRE, ipprotoUDP: // TCP, tunnels
			return decodeIPPayload(next, rest, plen, d)
		case 0, 43, 60, 135, 139, 140: // hop-by-hop, routing, destination, mobility, HIP, shim6
			if len(rest) < 2 {
				return resShort
			}
			hlen = (int(rest[1]) + 1) * 8
		case 44: // fragment
			if len(rest) < 8 {
				return resShort
			}
			if fo := be16(rest[2:4]); fo&0xFFF9 != 0 { // an offset or the M flag
				d.frag = fragment{id: binary.BigEndian.Uint32(rest[4:8]), proto: rest[0], off: int(fo &^ 7),
					more: fo&1 != 0, data: rest[8:], cut: len(rest) < plen}
				return resFragment
			}
			hlen = 8
		case 51: // authentication header (RFC 4302): length in 4-byte units, minus 2
			if len(rest) < 2 {
				return resShort
			}
			hlen = (int(rest[1]) + 2) * 4
		default: // 59 no next header, ESP, UDP, ICMPv6, ...
			return resNotTCP
		}
		if hlen > plen {
			return resMalformed
		}
		if hlen > len(rest) {
			return resShort
		}
		next = rest[0]
		rest = rest[hlen:]
		plen -= hlen
	}
	return resTooManyHeaders
}

// tcpHeaderLen checks the TCP header in seg (RFC 9293 section 3.1) and
// returns its length. segLen is the segment length the IP header declares.
func tcpHeaderLen(seg []byte, segLen int) (int, decodeResult) {
	if segLen < 20 {
		return 0, resMalformed
	}
	if len(seg) < 20 {
		return 0, resShort
	}
	hl := int(seg[12]>>4) * 4
	if hl < 20 || hl > segLen {
		return 0, resMalformed
	}
	if hl > len(seg) {
		return 0, resShort
	}
	return hl, resTCP
}
