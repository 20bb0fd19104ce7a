package live

import (
	"errors"
	"strings"
	"testing"
)

// ipv4TCP builds an IPv4 header and a TCP header with the given ports.
func ipv4TCP(src, dst [4]byte, sport, dport uint16) []byte {
	b := make([]byte, 40)
	b[0] = 0x45
	b[9] = 6
	copy(b[12:], src[:])
	copy(b[16:], dst[:])
	b[20], b[21] = byte(sport>>8), byte(sport)
	b[22], b[23] = byte(dport>>8), byte(dport)
	b[32] = 0x50
	return b
}

func TestFileFilter(t *testing.T) {
	p := ipv4TCP([4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, 40000, 9092)
	for _, c := range []struct {
		expr string
		want bool
	}{
		{"port 9092", true},
		{"tcp port 9093", false},
		{"src host 10.0.0.1 and dst port 9092", true},
		{"dst host 10.0.0.1", false},
		{"net 10.0.0.0/8 and not port 22", true},
		{"ip6", false},
		{"portrange 9000-9100", true},
	} {
		f, err := FileFilter(c.expr)
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		if got := f(p); got != c.want {
			t.Errorf("%q: %v, want %v", c.expr, got, c.want)
		}
	}
	if _, err := FileFilter("udp port 53"); !errors.Is(err, ErrUnsupportedFilter) || strings.Contains(err.Error(), "-tags pcap") || !strings.HasSuffix(err.Error(), "(in every build: files never go through libpcap)") {
		// Files never go through libpcap: the pcap build would not help.
		t.Errorf("udp: %v", err)
	}
	f, _ := FileFilter("port 9092")
	if f(p[:10]) {
		t.Error("a cut packet passed")
	}
}

// TestFileFilterAsCaptured: a file's filter sees each packet as it was
// captured, as tcpdump -r FILE FILTER does: a tunnel's outer headers (a
// UDP, GRE or IP-in-IP packet), every IPv4 fragment, and packets without
// IP. The wants are tcpdump 4.99's (libpcap 1.10) on the same packets.
func TestFileFilterAsCaptured(t *testing.T) {
	outer := func(proto byte, sport, dport uint16) []byte {
		p := ipv4TCP([4]byte{10, 0, 0, 1}, [4]byte{10, 0, 0, 2}, sport, dport)
		p[9] = proto
		return p
	}
	vxlan := outer(17, 54321, 4789)
	gre := outer(47, 0, 0x0800) // GRE flags, then the protocol: IPv4
	ipip := outer(4, 0, 0)
	first := ipv4TCP([4]byte{127, 0, 0, 1}, [4]byte{127, 0, 0, 1}, 40000, 19092)
	first[6] = 0x20 // more fragments
	later := ipv4TCP([4]byte{127, 0, 0, 1}, [4]byte{127, 0, 0, 1}, 0x4142, 0x4344)
	later[7] = 25 // fragment offset 200 bytes: what follows is payload, not ports
	v6 := make([]byte, 60)
	v6[0], v6[6] = 0x60, 44 // a fragment header
	v6[40] = ipProtoTCP     // the fragment header's next header
	for _, c := range []struct {
		expr string
		pkt  []byte
		name string
		want bool
	}{
		{"ip", vxlan, "VXLAN", true},
		{"ip", gre, "GRE", true},
		{"ip", ipip, "IP in IP", true},
		{"not host 1.2.3.4", vxlan, "VXLAN", true},
		{"host 10.0.0.1", gre, "GRE", true},
		{"host 127.0.0.1", ipip, "IP in IP", false}, // the inner address is not looked at
		{"port 4789", vxlan, "VXLAN", true},         // a UDP port
		{"tcp port 4789", vxlan, "VXLAN", false},
		{"tcp", vxlan, "VXLAN", false},
		{"tcp", ipip, "IP in IP", false},
		{"port 19092", gre, "GRE", false},
		{"host 127.0.0.1", first, "a first fragment", true},
		{"host 127.0.0.1", later, "a later fragment", true},
		{"tcp", later, "a later fragment", true},
		{"port 19092", first, "a first fragment", true},
		{"port 16708", later, "a later fragment", false}, // 0x4142: not a port
		{"not port 16708", later, "a later fragment", true},
		{"tcp", v6, "IPv6 fragment of TCP", true},
		{"ip6 and not ip", v6, "IPv6 fragment of TCP", true},
		{"ip", nil, "no IP", false},
		{"not host 1.2.3.4", nil, "no IP", true},
		{"not (ip or ip6)", nil, "no IP", true},
		{"not ip and port 1", nil, "no IP", false},
	} {
		f, err := FileFilter(c.expr)
		if err != nil {
			t.Fatalf("%q: %v", c.expr, err)
		}
		if got := f(c.pkt); got != c.want {
			t.Errorf("-f %q on %s: %v, want %v", c.expr, c.name, got, c.want)
		}
	}
}
