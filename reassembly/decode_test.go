package reassembly

import (
	"bytes"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/kwire/kwire/internal/capturetest"
)

// ipv4TCP is an IPv4 header (20 bytes, total length 44) and a TCP header
// (20 bytes) carrying "abcd".
func ipv4TCP() []byte {
	return []byte{
		0x45, 0x00, 0x00, 44, // version 4, IHL 5, total length 44
		0x00, 0x01, 0x40, 0x00, // id 1, DF, offset 0
		64, 6, 0, 0, // TTL, protocol TCP, checksum (unchecked)
		10, 0, 0, 1, // source
		10, 0, 0, 2, // destination
		0x9c, 0x40, 0x23, 0x84, // ports 40000 > 9092
		0, 0, 0, 1, 0, 0, 0, 0, // seq 1, ack 0
		0x50, 0x18, 0xff, 0xff, // data offset 5, PSH ACK, window
		0, 0, 0, 0, // checksum, urgent
		'a', 'b', 'c', 'd',
	}
}

func TestDecodeFrameIPv4(t *testing.T) {
	pkt := ipv4TCP()
	var d decoded
	if r := decodeFrame(layers.LinkTypeRaw, pkt, &d); r != resTCP {
		t.Fatalf("result %d", r)
	}
	if !bytes.Equal(d.srcIP, []byte{10, 0, 0, 1}) || !bytes.Equal(d.dstIP, []byte{10, 0, 0, 2}) || d.segLen != 24 || len(d.seg) != 24 {
		t.Errorf("decoded %+v", d)
	}
	// Ethernet padding after the IP packet is not payload.
	eth := append(append(make([]byte, 12), 0x08, 0x00), pkt...)
	eth = append(eth, 0, 0, 0, 0, 0, 0)
	if r := decodeFrame(layers.LinkTypeEthernet, eth, &d); r != resTCP || len(d.seg) != 24 {
		t.Errorf("padded: result %d, seg %d bytes", r, len(d.seg))
	}
	// Snap-length cut: the segment length still comes from the IP header.
	if r := decodeFrame(layers.LinkTypeRaw, pkt[:42], &d); r != resTCP || len(d.seg) != 22 || d.segLen != 24 {
		t.Errorf("cut: result %d, seg %d of %d", r, len(d.seg), d.segLen)
	}
	// TSO: total length 0 means "the captured length".
	tso := ipv4TCP()
	tso[2], tso[3] = 0, 0
	if r := decodeFrame(layers.LinkTypeRaw, tso, &d); r != resTCP || d.segLen != 24 {
		t.Errorf("tso: result %d, segLen %d", r, d.segLen)
	}
}

func TestDecodeFrameHostile(t *testing.T) {
	mod := func(f func(b []byte) []byte) []byte { return f(ipv4TCP()) }
	cases := []struct {
		name string
		link layers.LinkType
		data []byte
		want decodeResult
	}{
		{"empty raw", layers.LinkTypeRaw, nil, resShort},
		{"short ethernet", layers.LinkTypeEthernet, make([]byte, 13), resShort},
		{"short sll", layers.LinkTypeLinuxSLL, make([]byte, 15), resShort},
		{"short sll2", linkTypeSLL2, make([]byte, 19), resShort},
		{"short null", layers.LinkTypeNull, []byte{2, 0}, resShort},
		{"null unknown family", layers.LinkTypeNull, []byte{7, 0, 0, 0, 0x45}, resNotTCP},
		{"raw version 5", layers.LinkTypeRaw, []byte{0x50, 0, 0, 0}, resMalformed},
		{"ihl below 5", layers.LinkTypeRaw, mod(func(b []byte) []byte { b[0] = 0x44; return b }), resMalformed},
		{"total below ihl", layers.LinkTypeRaw, mod(func(b []byte) []byte { b[3] = 10; return b }), resMalformed},
		{"ihl beyond capture", layers.LinkTypeRaw, mod(func(b []byte) []byte { b[0] = 0x4f; b[3] = 200; return b[:30] }), resShort},
		{"fragment offset", layers.LinkTypeRaw, mod(func(b []byte) []byte { b[7] = 1; return b }), resFragment},
		{"udp", layers.LinkTypeRaw, mod(func(b []byte) []byte { b[9] = 17; return b }), resNotTCP},
		{"unknown link", layers.LinkType(147), ipv4TCP(), resUnsupportedLink},
		{"vlan stack too deep", layers.LinkTypeEthernet, append(make([]byte, 12), bytes.Repeat([]byte{0x81, 0x00, 0, 1}, 10)...), resTooManyTags},
		{"vlan stack of 8, then short IPv4", layers.LinkTypeEthernet, append(append(make([]byte, 12), bytes.Repeat([]byte{0x81, 0x00, 0, 1}, 7)...), 0x81, 0x00, 0, 1, 0x08, 0x00), resShort},
		{"vlan cut", layers.LinkTypeEthernet, append(make([]byte, 12), 0x81, 0x00, 0), resShort},
		{"arp", layers.LinkTypeEthernet, append(make([]byte, 12), 0x08, 0x06), resNotTCP},
		{"ipv6 short", layers.LinkTypeRaw, append([]byte{0x60}, make([]byte, 38)...), resShort},
	}
	for _, c := range cases {
		var d decoded
		if got := decodeFrame(c.link, c.data, &d); got != c.want {
			t.Errorf("%s: result %d, want %d", c.name, got, c.want)
		}
	}
	if _, r := tcpHeaderLen(make([]byte, 20), 19); r != resMalformed {
		t.Errorf("segment below 20 bytes: %d", r)
	}
	bad := make([]byte, 20)
	bad[12] = 0x40 // data offset 4
	if _, r := tcpHeaderLen(bad, 20); r != resMalformed {
		t.Errorf("data offset 4: %d", r)
	}
	bad[12] = 0xf0 // data offset 60 bytes, 20 captured of 100
	if _, r := tcpHeaderLen(bad, 100); r != resShort {
		t.Errorf("options beyond capture: %d", r)
	}
}

func TestDecodeIPv6ExtensionsAndFragments(t *testing.T) {
	hdr := func(next byte, ext []byte) []byte {
		b := []byte{0x60, 0, 0, 0, 0, byte(len(ext) + 20), next, 64}
		b = append(b, make([]byte, 32)...)
		b = append(b, ext...)
		tcp := make([]byte, 20)
		tcp[12] = 0x50
		return append(b, tcp...)
	}
	var d decoded
	// hop-by-hop (8 bytes) then routing (16 bytes) then TCP
	ext := []byte{43, 0, 1, 4, 0, 0, 0, 0, 6, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if r := decodeFrame(linkTypeIPv6, hdr(0, ext), &d); r != resTCP || d.segLen != 20 || len(d.seg) != 20 {
		t.Errorf("extensions: result %d, segLen %d", r, d.segLen)
	}
	// An atomic fragment (offset 0, M clear) is a whole packet.
	if r := decodeFrame(linkTypeIPv6, hdr(44, []byte{6, 0, 0, 0, 0, 0, 0, 1}), &d); r != resTCP {
		t.Errorf("atomic fragment: %d", r)
	}
	// First fragment (M set) and a later one (offset 8).
	if r := decodeFrame(linkTypeIPv6, hdr(44, []byte{6, 0, 0, 1, 0, 0, 0, 1}), &d); r != resFragment {
		t.Errorf("first fragment: %d", r)
	}
	if r := decodeFrame(linkTypeIPv6, hdr(44, []byte{6, 0, 0, 0x40, 0, 0, 0, 1}), &d); r != resFragment {
		t.Errorf("later fragment: %d", r)
	}
	// An extension header longer than the payload length.
	if r := decodeFrame(linkTypeIPv6, hdr(0, []byte{6, 200, 0, 0, 0, 0, 0, 0}), &d); r != resMalformed {
		t.Errorf("oversized extension: %d", r)
	}
	// No next header.
	if r := decodeFrame(linkTypeIPv6, hdr(59, nil), &d); r != resNotTCP {
		t.Errorf("no next header: %d", r)
	}
	// 16 destination options headers are read, 17 are past the limit.
	chain := func(n int) []byte {
		var b []byte
		for i := range n {
			next := byte(60)
			if i == n-1 {
				next = 6
			}
			b = append(b, next, 0, 1, 4, 0, 0, 0, 0)
		}
		return b
	}
	if r := decodeFrame(linkTypeIPv6, hdr(60, chain(maxIPv6ExtHeaders)), &d); r != resTCP || d.segLen != 20 {
		t.Errorf("%d extension headers: result %d, segLen %d", maxIPv6ExtHeaders, r, d.segLen)
	}
	if r := decodeFrame(linkTypeIPv6, hdr(60, chain(maxIPv6ExtHeaders+1)), &d); r != resTooManyHeaders {
		t.Errorf("%d extension headers: result %d, want %d", maxIPv6ExtHeaders+1, r, resTooManyHeaders)
	}
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(uint16(layers.LinkTypeRaw), ipv4TCP())
	f.Add(uint16(layers.LinkTypeEthernet), append(append(make([]byte, 12), 0x81, 0x00, 0, 1, 0x08, 0x00), ipv4TCP()...))
	f.Add(uint16(linkTypeSLL2), append(append([]byte{0x86, 0xdd}, make([]byte, 18)...), 0x60))
	// Tunnels: the same segment in each of them, and nested.
	eth := append(append(make([]byte, 12), 0x08, 0x00), ipv4TCP()...)
	for _, tuns := range [][]capturetest.Tunnel{{capturetest.VXLAN}, {capturetest.Geneve}, {capturetest.GREIP}, {capturetest.ERSPAN2},
		{capturetest.ERSPAN3}, {capturetest.IP4in6}, {capturetest.VXLAN, capturetest.GRETEB, capturetest.VLAN}} {
		w, err := capturetest.Wrap(eth, tuns...)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(layers.LinkTypeEthernet), w)
	}
	f.Fuzz(func(t *testing.T, link uint16, data []byte) {
		d := decoded{tun: (&Options{}).tunnelConfig()}
		r := decodeFrame(layers.LinkType(link), data, &d)
		if r != resTCP {
			return
		}
		if len(d.seg) > d.segLen || (len(d.srcIP) != 4 && len(d.srcIP) != 16) || len(d.srcIP) != len(d.dstIP) {
			t.Fatalf("decoded %+v", d)
		}
		if hl, r := tcpHeaderLen(d.seg, d.segLen); r == resTCP && (hl < 20 || hl > len(d.seg)) {
			t.Fatalf("header length %d of %d", hl, len(d.seg))
		}
	})
}

// TestDecodeEncapsulations: MPLS (RFC 3032, a stack of two labels), a
// PPPoE session (RFC 2516, PPP IPv4 and IPv6) and IEEE 802.3 LLC/SNAP
// (RFC 1042) frames reach the TCP segment inside; what they carry that is
// not IP is no TCP, and cut short is short.
func TestDecodeEncapsulations(t *testing.T) {
	eth := func(et ...byte) []byte { return append(make([]byte, 12), et...) }
	mpls := append(eth(0x88, 0x47, 0, 0x01, 0x00, 64, 0, 0x02, 0x01, 64), ipv4TCP()...) // labels 16 and 32, the second the bottom
	pppoe := append(eth(0x88, 0x64, 0x11, 0, 0x12, 0x34, 0, 46, 0x00, 0x21), ipv4TCP()...)
	snapFrame := eth(0, 52, 0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00)
	snap := append(snapFrame, ipv4TCP()...)
	for _, c := range []struct {
		name string
		data []byte
		want decodeResult
	}{
		{"mpls", mpls, resTCP},
		{"mpls cut in its stack", mpls[:17], resShort},
		{"mpls no bottom", append(eth(0x88, 0x47), bytes.Repeat([]byte{0, 0x01, 0x00, 64}, 17)...), resTooManyLabels},
		{"mpls control word", append(eth(0x88, 0x47, 0, 0x01, 0x01, 64), 0, 0, 0, 0), resNotTCP},
		{"pppoe", pppoe, resTCP},
		{"pppoe discovery", eth(0x88, 0x64, 0x11, 0x09, 0, 0, 0, 0, 0, 0), resNotTCP},
		{"pppoe lcp", eth(0x88, 0x64, 0x11, 0, 0x12, 0x34, 0, 4, 0xc0, 0x21), resNotTCP},
		{"llc snap", snap, resTCP},
		{"llc snap padded", append(snap, 0, 0, 0, 0), resTCP},
		{"llc not snap", eth(0, 3, 0x42, 0x42, 0x03), resShort},
		{"llc stp", eth(0, 38, 0x42, 0x42, 0x03, 0, 0, 0, 0, 0), resNotTCP},
	} {
		var d decoded
		got := decodeFrame(layers.LinkTypeEthernet, c.data, &d)
		if got != c.want {
			t.Errorf("%s: result %d, want %d", c.name, got, c.want)
			continue
		}
		if got == resTCP && (d.segLen != 24 || !bytes.Equal(d.srcIP, []byte{10, 0, 0, 1})) {
			t.Errorf("%s: segment of %d bytes from %v", c.name, d.segLen, d.srcIP)
		}
	}
	v6 := append(eth(0x88, 0x64, 0x11, 0, 0, 1, 0, 2, 0x00, 0x57), 0x60)
	var d decoded
	if got := decodeFrame(layers.LinkTypeEthernet, v6, &d); got != resShort {
		t.Errorf("pppoe ipv6 cut: %d", got)
	}
}
