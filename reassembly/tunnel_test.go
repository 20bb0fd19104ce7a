package reassembly

// Tunnels: every packet of a golden capture wrapped in each tunnel, and
// in nested ones, gives the inner connections with their own addresses
// and ports and the same bytes as the plain capture.

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/capturetest"
)

// tunnelled wraps every packet of pkts (after fn, when not nil).
func tunnelled(t testing.TB, pkts []capturetest.Packet, fn func([]byte) ([]byte, error), tunnels ...capturetest.Tunnel) []capturetest.Packet {
	t.Helper()
	out := make([]capturetest.Packet, len(pkts))
	for i, p := range pkts {
		data := p.Data
		var err error
		if fn != nil {
			if data, err = fn(data); err != nil {
				t.Fatal(err)
			}
		}
		if data, err = capturetest.Wrap(data, tunnels...); err != nil {
			t.Fatal(err)
		}
		out[i] = capturetest.Packet{Time: p.Time, Data: data, Length: len(data)}
	}
	return out
}

func TestTunnels(t *testing.T) {
	pkts := goldenPackets(t)["kgo-produce-consume.pcap"]
	pcap := func(p []capturetest.Packet) []byte {
		return capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, p).Bytes
	}
	want, wsum := mustRead(t, pcap(pkts), Options{})
	v6 := func(b []byte) ([]byte, error) { return capturetest.ToIPv6(b) }
	T := func(ts ...capturetest.Tunnel) []capturetest.Tunnel { return ts }
	for _, c := range []struct {
		tunnels []capturetest.Tunnel
		inner6  bool // the inner packets are IPv6
	}{
		{T(capturetest.VXLAN), false},
		{T(capturetest.VXLAN8472), false},
		{T(capturetest.VXLAN6), false},
		{T(capturetest.Geneve), false},
		{T(capturetest.GeneveIP), false},
		{T(capturetest.GREIP), false},
		{T(capturetest.GREIP), true},
		{T(capturetest.GRETEB), false},
		{T(capturetest.ERSPAN1), false},
		{T(capturetest.ERSPAN2), false},
		{T(capturetest.ERSPAN3), false},
		{T(capturetest.IPIP), false},
		{T(capturetest.IP6in4), true},
		{T(capturetest.IP4in6), false},
		{T(capturetest.IP6in6), true},
		// Nested: a mirrored overlay, IPIP inside VXLAN, Geneve inside
		// VXLAN over a VLAN, and four levels.
		{T(capturetest.VXLAN, capturetest.ERSPAN2), false},
		{T(capturetest.IPIP, capturetest.VXLAN8472), false},
		{T(capturetest.Geneve, capturetest.VXLAN6, capturetest.VLAN), false},
		{T(capturetest.IP6in4, capturetest.GRETEB, capturetest.VXLAN, capturetest.ERSPAN3), true},
	} {
		var fn func([]byte) ([]byte, error)
		if c.inner6 {
			fn = v6
		}
		name := fmt.Sprint(c.tunnels)
		if c.inner6 {
			name += " (inner IPv6)"
		}
		got, sum, err := readBytes(t, pcap(tunnelled(t, pkts, fn, c.tunnels...)), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		compareStreams(t, name, want, got)
		if sum.Tunnelled != wsum.TCPPackets || sum.TCPPackets != wsum.TCPPackets || sum.DecodeErrors != 0 {
			t.Errorf("%s: %d TCP packets, %d tunnelled, %d decode errors; want %d", name, sum.TCPPackets, sum.Tunnelled, sum.DecodeErrors, wsum.TCPPackets)
		}
		// Identified by the inner addresses, never the tunnel's.
		for i, conn := range got.conns {
			if c.inner6 {
				if !strings.HasPrefix(conn.A.Addr().String(), "2001:db8::") {
					t.Errorf("%s: connection %d is %v > %v", name, i, conn.A, conn.B)
				}
			} else if conn.A != want.conns[i].A || conn.B != want.conns[i].B {
				t.Errorf("%s: connection %d is %v > %v, want %v > %v", name, i, conn.A, conn.B, want.conns[i].A, want.conns[i].B)
			}
		}
	}
}

// TestTunnelBounds: nesting beyond Options.MaxTunnelDepth counts in
// Summary.TooDeep; a negative depth turns decapsulation off; a UDP port
// that is not a tunnel's is plain UDP; Options.VXLANPorts adds one.
func TestTunnelBounds(t *testing.T) {
	pkts := firstPackets(t, 10)
	pcap := func(p []capturetest.Packet) []byte {
		return capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, p).Bytes
	}
	deep := tunnelled(t, pkts, nil, capturetest.GREIP, capturetest.GREIP, capturetest.GREIP)
	_, sum := mustRead(t, pcap(deep), Options{MaxTunnelDepth: 2})
	if sum.TooDeep != 10 || sum.DecodeErrors != 10 || sum.Connections != 0 {
		t.Errorf("depth 3, bound 2: %d too deep, %d decode errors, %d connections", sum.TooDeep, sum.DecodeErrors, sum.Connections)
	}
	if _, sum := mustRead(t, pcap(deep), Options{MaxTunnelDepth: 3}); sum.TooDeep != 0 || sum.Tunnelled != 10 {
		t.Errorf("depth 3, bound 3: %d too deep, %d tunnelled", sum.TooDeep, sum.Tunnelled)
	}
	if _, sum := mustRead(t, pcap(tunnelled(t, pkts, nil, capturetest.VXLAN)), Options{MaxTunnelDepth: -1}); sum.NonTCP != 10 || sum.Connections != 0 {
		t.Errorf("decapsulation off: %d non-TCP, %d connections", sum.NonTCP, sum.Connections)
	}
	// VXLAN on port 4789 read as VXLAN only where asked.
	vx := pcap(tunnelled(t, pkts, nil, capturetest.VXLAN))
	if _, sum := mustRead(t, vx, Options{VXLANPorts: []uint16{}}); sum.NonTCP != 10 {
		t.Errorf("no VXLAN ports: %d non-TCP", sum.NonTCP)
	}
	if _, sum := mustRead(t, vx, Options{VXLANPorts: []uint16{4789}}); sum.Tunnelled != 10 {
		t.Errorf("VXLAN port 4789 given: %d tunnelled", sum.Tunnelled)
	}
}

// fragmentIPv4 splits the IPv4 packet of an Ethernet frame into two
// fragments at an 8-byte boundary near the middle of its payload.
func fragmentIPv4(frame []byte) [][]byte {
	ip := frame[14:]
	ihl := int(ip[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	payload := ip[ihl:total]
	if len(payload) < 16 {
		return [][]byte{frame}
	}
	cut := len(payload) / 2 &^ 7
	mk := func(off int, part []byte, more bool) []byte {
		h := append([]byte(nil), frame[:14+ihl]...)
		iph := h[14:]
		binary.BigEndian.PutUint16(iph[2:], uint16(ihl+len(part)))
		ff := uint16(off / 8)
		if more {
			ff |= 0x2000
		}
		binary.BigEndian.PutUint16(iph[6:], ff)
		return append(h, part...)
	}
	return [][]byte{mk(0, payload[:cut], true), mk(cut, payload[cut:], false)}
}

// TestFragmentedTunnel: a VXLAN datagram whose outer IP packet travelled
// in two fragments is rebuilt, then decapsulated.
func TestFragmentedTunnel(t *testing.T) {
	pkts := goldenPackets(t)["kgo-produce-consume.pcap"]
	want, _ := mustRead(t, capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts).Bytes, Options{})
	var frags []capturetest.Packet
	for _, p := range tunnelled(t, pkts, nil, capturetest.VXLAN) {
		for _, f := range fragmentIPv4(p.Data) {
			frags = append(frags, capturetest.Packet{Time: p.Time, Data: f, Length: len(f)})
		}
	}
	got, sum := mustRead(t, capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, frags).Bytes, Options{})
	compareStreams(t, "fragmented VXLAN", want, got)
	if sum.Fragments != 0 || sum.Tunnelled == 0 {
		t.Errorf("%d fragments not rebuilt, %d tunnelled", sum.Fragments, sum.Tunnelled)
	}
}

// TestFragmentInFragmentedTunnel: an IP fragment carried in an IP-in-IP
// packet that was itself fragmented keeps its own addresses: they lay in
// the buffer of the tunnel datagram rebuilt, which rebuilding the inner
// datagram reused (its segment went to a connection between addresses
// made of TCP bytes: kwire read found 57 connections, 16 gaps and 16
// orphans in kgo-produce-consume so carried, instead of 41 and none).
func TestFragmentInFragmentedTunnel(t *testing.T) {
	pkts := goldenPackets(t)["kgo-produce-consume.pcap"]
	want, _ := mustRead(t, capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts).Bytes, Options{})
	var frags []capturetest.Packet
	n := 0
	for _, p := range pkts {
		parts := [][]byte{p.Data}
		if len(p.Data) > 14+20+400 {
			inner, err := capturetest.FragmentIPv4(p.Data, 200)
			if err != nil {
				t.Fatal(err)
			}
			parts = nil
			for _, f := range inner {
				w, err := capturetest.Wrap(f, capturetest.IPIP)
				if err != nil {
					t.Fatal(err)
				}
				outer, err := capturetest.FragmentIPv4(w, 104)
				if err != nil {
					t.Fatal(err)
				}
				parts = append(parts, outer...)
			}
			n++
		}
		for _, f := range parts {
			frags = append(frags, capturetest.Packet{Time: p.Time, Data: f, Length: len(f)})
		}
	}
	got, sum := mustRead(t, capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, frags).Bytes, Options{})
	compareStreams(t, "fragments in fragmented IPIP", want, got)
	if n < 9 || sum.Fragments != 0 || sum.Tunnelled == 0 || len(got.conns) != len(want.conns) {
		t.Errorf("%d packets fragmented: %d fragments not rebuilt, %d tunnelled, %d connections, want %d", n, sum.Fragments, sum.Tunnelled, len(got.conns), len(want.conns))
	}
}
