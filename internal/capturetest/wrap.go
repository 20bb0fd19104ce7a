package capturetest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"os/exec"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/ulikunitz/xz"
)

var be = binary.BigEndian

// Tunnel is an encapsulation Wrap applies.
type Tunnel string

// Tunnels. Each takes an Ethernet frame and returns one: outer Ethernet,
// outer IP (192.0.2.1 → 192.0.2.2, or 2001:db8:ffff::1 → ::2), the tunnel
// headers, then the inner frame, or its IP packet for tunnels that carry
// IP.
const (
	VXLAN     Tunnel = "vxlan"      // UDP 4789, VXLAN, Ethernet
	VXLAN8472 Tunnel = "vxlan-8472" // UDP 8472 (flannel), VXLAN, Ethernet
	VXLAN6    Tunnel = "vxlan6"     // as VXLAN over IPv6
	Geneve    Tunnel = "geneve"     // UDP 6081, Geneve with one option, Ethernet
	GeneveIP  Tunnel = "geneve-ip"  // UDP 6081, Geneve, the IP packet
	GREIP     Tunnel = "gre-ip"     // GRE (with a key), the IP packet
	GRETEB    Tunnel = "gre-teb"    // GRE transparent Ethernet bridging, Ethernet
	ERSPAN1   Tunnel = "erspan1"    // GRE 0x88BE without sequence number, Ethernet
	ERSPAN2   Tunnel = "erspan2"    // GRE 0x88BE with sequence number, ERSPAN II, Ethernet
	ERSPAN3   Tunnel = "erspan3"    // GRE 0x22EB, ERSPAN III with its optional subheader, Ethernet
	IPIP      Tunnel = "ipip"       // IPv4 in IPv4 (the inner frame must be IPv4)
	IP6in4    Tunnel = "6in4"       // IPv6 in IPv4 (the inner frame must be IPv6)
	IP4in6    Tunnel = "4in6"       // IPv4 in IPv6
	IP6in6    Tunnel = "6in6"       // IPv6 in IPv6
	VLAN      Tunnel = "vlan"       // an 802.1Q tag in the frame's Ethernet header
)

// Tunnels lists every tunnel Wrap knows.
var Tunnels = []Tunnel{VXLAN, VXLAN8472, VXLAN6, Geneve, GeneveIP, GREIP, GRETEB, ERSPAN1, ERSPAN2, ERSPAN3, IPIP, IP6in4, IP4in6, IP6in6, VLAN}

// Wrap encapsulates an Ethernet frame in the tunnels, innermost first:
// Wrap(f, VXLAN, GREIP) is GRE(VXLAN(f)).
func Wrap(frame []byte, tunnels ...Tunnel) ([]byte, error) {
	for _, t := range tunnels {
		var err error
		if frame, err = wrap1(frame, t); err != nil {
			return nil, err
		}
	}
	return frame, nil
}

func ethernet(et uint16, payload []byte) []byte {
	b := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, byte(et >> 8), byte(et)}
	return append(b, payload...)
}

// etherPayload returns a frame's EtherType and payload, past VLAN tags.
func etherPayload(frame []byte) (uint16, []byte, error) {
	if len(frame) < 14 {
		return 0, nil, errors.New("frame shorter than an Ethernet header")
	}
	et, p := be.Uint16(frame[12:]), frame[14:]
	for et == 0x8100 || et == 0x88a8 {
		if len(p) < 4 {
			return 0, nil, errors.New("cut VLAN tag")
		}
		et, p = be.Uint16(p[2:]), p[4:]
	}
	return et, p, nil
}

func checksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(be.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

func ipv4(proto byte, payload []byte) []byte {
	h := make([]byte, 20)
	h[0] = 0x45
	be.PutUint16(h[2:], uint16(20+len(payload)))
	be.PutUint16(h[4:], 0x1234)
	h[6] = 0x40 // DF
	h[8], h[9] = 64, proto
	copy(h[12:], []byte{192, 0, 2, 1})
	copy(h[16:], []byte{192, 0, 2, 2})
	be.PutUint16(h[10:], checksum(h))
	return append(h, payload...)
}

func ipv6(next byte, payload []byte) []byte {
	h := make([]byte, 40)
	h[0] = 0x60
	be.PutUint16(h[4:], uint16(len(payload)))
	h[6], h[7] = next, 64
	copy(h[8:], []byte{0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 14: 0, 15: 1})
	copy(h[24:], []byte{0x20, 0x01, 0x0d, 0xb8, 0xff, 0xff, 14: 0, 15: 2})
	return append(h, payload...)
}

func udp(dport uint16, payload []byte) []byte {
	h := make([]byte, 8)
	be.PutUint16(h[0:], 49152+uint16(len(payload)%1024)) // source ports vary, as flow entropy
	be.PutUint16(h[2:], dport)
	be.PutUint16(h[4:], uint16(8+len(payload)))
	return append(h, payload...)
}

var greSeq uint32

func wrap1(frame []byte, t Tunnel) ([]byte, error) {
	et, ip, err := etherPayload(frame)
	if err != nil {
		return nil, err
	}
	ipProto := func() (byte, error) {
		switch et {
		case 0x0800:
			return 4, nil
		case 0x86dd:
			return 41, nil
		}
		return 0, fmt.Errorf("%s needs an IP packet inside, not EtherType 0x%04x", t, et)
	}
	vxlan := func(port uint16) []byte {
		h := []byte{0x08, 0, 0, 0, 0, 0x12, 0x34, 0} // I flag, VNI 0x1234
		return udp(port, append(h, frame...))
	}
	switch t {
	case VXLAN:
		return ethernet(0x0800, ipv4(17, vxlan(4789))), nil
	case VXLAN8472:
		return ethernet(0x0800, ipv4(17, vxlan(8472))), nil
	case VXLAN6:
		return ethernet(0x86dd, ipv6(17, vxlan(4789))), nil
	case Geneve, GeneveIP:
		// version 0, options 2 words; protocol; VNI; one option: class
		// 0x0102, type 0x80, 1 word of data.
		h := []byte{0x02, 0, 0x65, 0x58, 0, 0x56, 0x78, 0, 0x01, 0x02, 0x80, 0x01, 0xde, 0xad, 0xbe, 0xef}
		inner := frame
		if t == GeneveIP {
			be.PutUint16(h[2:], et)
			inner = ip
		}
		return ethernet(0x0800, ipv4(17, udp(6081, append(h, inner...)))), nil
	case GREIP:
		h := []byte{0x20, 0, byte(et >> 8), byte(et), 0, 0, 0, 42} // K flag, key 42
		return ethernet(0x0800, ipv4(47, append(h, ip...))), nil
	case GRETEB:
		return ethernet(0x0800, ipv4(47, append([]byte{0, 0, 0x65, 0x58}, frame...))), nil
	case ERSPAN1:
		return ethernet(0x0800, ipv4(47, append([]byte{0, 0, 0x88, 0xbe}, frame...))), nil
	case ERSPAN2:
		greSeq++
		h := []byte{0x10, 0, 0x88, 0xbe, 0, 0, 0, 0}
		be.PutUint32(h[4:], greSeq)
		// version 1, VLAN 5; COS 0, encap 0, T 0, session 7; index 9
		h = append(h, 0x10, 0x05, 0x00, 0x07, 0, 0, 0, 9)
		return ethernet(0x0800, ipv4(47, append(h, frame...))), nil
	case ERSPAN3:
		greSeq++
		h := []byte{0x10, 0, 0x22, 0xeb, 0, 0, 0, 0}
		be.PutUint32(h[4:], greSeq)
		// version 2, VLAN 5; session 7; timestamp; SGT 0; P 0, FT 0
		// (Ethernet), HW ID 3, D 0, Gra 1, O 1 (0x0033); the platform
		// specific subheader the O flag announces.
		h = append(h, 0x20, 0x05, 0x00, 0x07, 0, 0, 1, 0, 0, 0, 0x00, 0x33, 0x10, 0, 0, 0, 0, 0, 0, 1)
		return ethernet(0x0800, ipv4(47, append(h, frame...))), nil
	case IPIP, IP6in4:
		p, err := ipProto()
		if err != nil {
			return nil, err
		}
		if (t == IPIP) != (p == 4) {
			return nil, fmt.Errorf("%s: inner packet is not IPv%d", t, map[bool]int{true: 4, false: 6}[t == IPIP])
		}
		return ethernet(0x0800, ipv4(p, ip)), nil
	case IP4in6, IP6in6:
		p, err := ipProto()
		if err != nil {
			return nil, err
		}
		if (t == IP4in6) != (p == 4) {
			return nil, fmt.Errorf("%s: inner packet is of the other IP version", t)
		}
		return ethernet(0x86dd, ipv6(p, ip)), nil
	case VLAN:
		out := append([]byte(nil), frame[:12]...)
		out = append(out, 0x81, 0x00, 0x00, 0x64) // VLAN 100
		return append(out, frame[12:]...), nil
	}
	return nil, fmt.Errorf("unknown tunnel %q", t)
}

// ToIPv6 rewrites an Ethernet frame carrying IPv4 into one carrying the
// same payload over IPv6, with 2001:db8::A.B.C.D for each address.
func ToIPv6(frame []byte) ([]byte, error) {
	et, ip, err := etherPayload(frame)
	if err != nil {
		return nil, err
	}
	if et != 0x0800 || len(ip) < 20 {
		return nil, errors.New("not an IPv4 frame")
	}
	ihl := int(ip[0]&0x0f) * 4
	total := int(be.Uint16(ip[2:]))
	if total > len(ip) || total < ihl {
		total = len(ip)
	}
	h := make([]byte, 40)
	h[0] = 0x60
	be.PutUint16(h[4:], uint16(total-ihl))
	h[6], h[7] = ip[9], ip[8]
	copy(h[8:], []byte{0x20, 0x01, 0x0d, 0xb8})
	copy(h[20:], ip[12:16])
	copy(h[24:], []byte{0x20, 0x01, 0x0d, 0xb8})
	copy(h[36:], ip[16:20])
	return ethernet(0x86dd, append(h, ip[ihl:total]...)), nil
}

// Link types Relink writes (tcpdump.org link-layer header types).
const (
	LinkNull     = 0   // BSD loopback, host byte order (little-endian here)
	LinkEthernet = 1   // Ethernet
	LinkRaw12    = 12  // raw IP as old writers numbered it
	LinkRaw14    = 14  // raw IP on OpenBSD
	LinkRaw      = 101 // raw IP
	LinkLoop     = 108 // OpenBSD loopback, network byte order
	LinkSLL      = 113 // Linux cooked capture
	LinkIPv4     = 228 // raw IPv4
	LinkIPv6     = 229 // raw IPv6
	LinkSLL2     = 276 // Linux cooked capture v2
	// LinkNullBE is link type 0 with the family in big-endian, as a
	// big-endian host writes it.
	LinkNullBE = 1 << 16
)

// Relink re-frames an Ethernet frame for another link type.
func Relink(frame []byte, link uint32) ([]byte, error) {
	et, ip, err := etherPayload(frame)
	if err != nil {
		return nil, err
	}
	v6 := et == 0x86dd
	switch link {
	case LinkEthernet:
		return frame, nil
	case LinkRaw, LinkRaw12, LinkRaw14, LinkIPv4, LinkIPv6:
		return ip, nil
	case LinkNull, LinkNullBE, LinkLoop:
		fam := uint32(2)
		if v6 {
			fam = 30 // Darwin's AF_INET6
		}
		h := make([]byte, 4)
		if link == LinkNull {
			binary.LittleEndian.PutUint32(h, fam)
		} else {
			be.PutUint32(h, fam)
		}
		return append(h, ip...), nil
	case LinkSLL:
		// packet type 0 (to us), ARPHRD_ETHER, address length 6, address, protocol
		h := []byte{0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, byte(et >> 8), byte(et)}
		return append(h, ip...), nil
	case LinkSLL2:
		// protocol, reserved, interface index, ARPHRD_ETHER, packet type, address length, address
		h := []byte{byte(et >> 8), byte(et), 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0}
		return append(h, ip...), nil
	}
	return nil, fmt.Errorf("unknown link type %d", link)
}

// ErrNoTool: a codec needs a command that is not installed.
var ErrNoTool = errors.New("compressor not installed")

// Codecs lists the codecs Compress knows.
var Codecs = []string{"gzip", "zstd", "xz", "bzip2", "lz4"}

// Compress compresses b. The block sizes are small (64 KiB at most), so
// that a cut in the compressed file leaves whole blocks before it.
// bzip2 runs the bzip2 command (-1: 100 kB blocks); it fails with
// ErrNoTool when it is not installed.
func Compress(codec string, b []byte) ([]byte, error) {
	var out bytes.Buffer
	switch codec {
	case "gzip":
		w := gzip.NewWriter(&out)
		w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	case "zstd":
		w, err := zstd.NewWriter(&out, zstd.WithWindowSize(1<<16), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	case "xz":
		w, err := xz.WriterConfig{DictCap: 1 << 16, BlockSize: 1 << 16}.NewWriter(&out)
		if err != nil {
			return nil, err
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	case "lz4":
		w := lz4.NewWriter(&out)
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			return nil, err
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			return nil, err
		}
	case "bzip2":
		path, err := exec.LookPath("bzip2")
		if err != nil {
			return nil, ErrNoTool
		}
		cmd := exec.Command(path, "-1", "-c")
		cmd.Stdin = bytes.NewReader(b)
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown codec %q", codec)
	}
	return out.Bytes(), nil
}

// FragmentIPv4 splits the IPv4 packet of an Ethernet frame (no VLAN tag)
// into IP fragments (RFC 791 section 3.2) of its payload at the offsets
// cuts, each a multiple of 8, increasing, inside the payload; each
// fragment keeps the packet's identification, its don't-fragment flag is
// cleared and its header's checksum computed again. A frame that is not
// IPv4, or whose payload the cuts do not fit, is an error.
func FragmentIPv4(frame []byte, cuts ...int) ([][]byte, error) {
	if len(frame) < 14+20 || be.Uint16(frame[12:]) != 0x0800 || frame[14]>>4 != 4 {
		return nil, errors.New("not an IPv4 packet in an Ethernet frame")
	}
	ip := frame[14:]
	ihl, total := int(ip[0]&0x0f)*4, int(be.Uint16(ip[2:]))
	if ihl < 20 || total < ihl || total > len(ip) {
		return nil, errors.New("IPv4 header and captured bytes disagree")
	}
	payload := ip[ihl:total]
	bounds := append(append([]int{0}, cuts...), len(payload))
	var out [][]byte
	for i := 0; i+1 < len(bounds); i++ {
		off, end := bounds[i], bounds[i+1]
		if off%8 != 0 || end <= off {
			return nil, fmt.Errorf("fragment [%d, %d) of a %d-byte payload", off, end, len(payload))
		}
		f := append([]byte(nil), frame[:14+ihl]...)
		h := f[14:]
		be.PutUint16(h[2:], uint16(ihl+end-off))
		ff := uint16(off / 8) // don't-fragment clear
		if i+2 < len(bounds) {
			ff |= 0x2000 // more fragments
		}
		be.PutUint16(h[6:], ff)
		be.PutUint16(h[10:], 0)
		be.PutUint16(h[10:], checksum(h))
		out = append(out, append(f, payload[off:end]...))
	}
	return out, nil
}
