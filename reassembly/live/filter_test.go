package live

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/bpf"
)

// pkt is a packet for the filter VM: an IP header (IPv4 or IPv6 by the
// source address) and a TCP or UDP header.
type pkt struct {
	src, dst       string
	sport, dport   uint16
	proto          byte // 6 TCP (default), 17 UDP
	fragOff        uint16
	ipOptions      int  // IPv4 option bytes (multiple of 4)
	ipv6NextHeader byte // overrides the IPv6 next header (an extension header)
}

func (p pkt) bytes() []byte {
	src, dst := netip.MustParseAddr(p.src), netip.MustParseAddr(p.dst)
	proto := p.proto
	if proto == 0 {
		proto = 6
	}
	l4 := make([]byte, 20)
	binary.BigEndian.PutUint16(l4[0:], p.sport)
	binary.BigEndian.PutUint16(l4[2:], p.dport)
	if src.Is4() {
		//  0: version 4, IHL
		//  6: flags + fragment offset
		//  9: protocol
		// 12: source address, 16: destination address
		ihl := 20 + p.ipOptions
		h := make([]byte, ihl)
		h[0] = 0x40 | byte(ihl/4)
		binary.BigEndian.PutUint16(h[2:], uint16(ihl+len(l4)))
		binary.BigEndian.PutUint16(h[6:], p.fragOff)
		h[8] = 64
		h[9] = proto
		copy(h[12:], src.AsSlice())
		copy(h[16:], dst.AsSlice())
		return append(h, l4...)
	}
	//  0: version 6
	//  4: payload length, 6: next header, 7: hop limit
	//  8: source address, 24: destination address
	h := make([]byte, 40)
	h[0] = 0x60
	binary.BigEndian.PutUint16(h[4:], uint16(len(l4)))
	h[6] = proto
	if p.ipv6NextHeader != 0 {
		h[6] = p.ipv6NextHeader
	}
	h[7] = 64
	copy(h[8:], src.AsSlice())
	copy(h[24:], dst.AsSlice())
	return append(h, l4...)
}

func runFilter(t *testing.T, expr string, p pkt) bool {
	t.Helper()
	n, err := parseFilter(expr)
	if err != nil {
		t.Fatalf("parseFilter(%q): %v", expr, err)
	}
	return runNode(t, n, p)
}

func runNode(t *testing.T, n *node, p pkt) bool {
	t.Helper()
	insns, err := program{expr: n, snaplen: 65535}.compile()
	if err != nil {
		t.Fatalf("compile(%s): %v", n, err)
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatalf("NewVM(%s): %v", n, err)
	}
	got, err := vm.Run(p.bytes())
	if err != nil {
		t.Fatalf("Run(%s): %v", n, err)
	}
	return got > 0
}

var (
	v4a = pkt{src: "10.0.0.1", dst: "10.0.0.2", sport: 40000, dport: 9092}
	v4b = pkt{src: "192.168.1.5", dst: "10.0.0.2", sport: 9093, dport: 51000}
	v6a = pkt{src: "fd00::1", dst: "fd00::2", sport: 40000, dport: 9092}
	v6b = pkt{src: "2001:db8::7", dst: "fd00::2", sport: 9093, dport: 51000}
)

func TestFilterMatches(t *testing.T) {
	tests := []struct {
		expr string
		p    pkt
		want bool
	}{
		{"tcp", v4a, true},
		{"tcp", v6a, true},
		{"port 9092", v4a, true},
		{"port 9092", v4b, false},
		{"tcp port 9092", v6a, true},
		{"tcp port 9092", v6b, false},
		{"port 9093", v4b, true}, // source side
		{"src port 9093", v4b, true},
		{"dst port 9093", v4b, false},
		{"dst port 9092", v4a, true},
		{"src port 9092", v4a, false},
		{"tcp src port 9093", v6b, true},
		{"port 9092 or port 9093", v4b, true},
		{"port 9092 || port 9093", v6b, true},
		{"port 9092 and port 9093", v4b, false},
		{"port 9093 && dst port 51000", v4b, true},
		{"not port 9092", v4a, false},
		{"not port 9092", v4b, true},
		{"! port 9092", v6a, false},
		{"!(port 9092 or port 9093)", v6b, false},
		{"not (port 1 or port 2)", v6b, true},
		{"portrange 9090-9099", v4a, true},
		{"portrange 9099-9090", v4a, true}, // reversed, as tcpdump takes it
		{"portrange 9093-9099", v4a, false},
		{"portrange 9093-9093", v4b, true},
		{"src portrange 9000-9100", v4a, false},
		{"dst portrange 9000-9100", v6a, true},
		{"portrange 50000-52000", v6b, true},
		{"host 10.0.0.1", v4a, true},
		{"host 10.0.0.2", v4b, true},
		{"src host 10.0.0.2", v4b, false},
		{"dst host 10.0.0.2", v4b, true},
		{"host 10.0.0.3", v4a, false},
		{"host fd00::2", v6a, true},
		{"host fd00::2", v4a, false}, // another family never matches
		{"host 10.0.0.1", v6a, false},
		{"src host 2001:db8::7", v6b, true},
		{"dst host 2001:db8::7", v6b, false},
		{"host ::ffff:10.0.0.1", v4a, true}, // mapped addresses are IPv4
		{"net 10.0.0.0/8", v4a, true},
		{"net 10.0.0.0/30", v4b, true},
		{"src net 10.0.0.0/30", v4b, false},
		{"net 192.168.0.0/16", v4a, false},
		{"net 0.0.0.0/0", v4a, true},
		{"net 0.0.0.0/0", v6a, false},
		{"net 2001:db8::/32", v6b, true},
		{"net 2001:db8::/32", v6a, false},
		{"net fc00::/7", v6a, true},
		{"net fd00::/125", v6a, true},
		{"net fd00::8/125", v6a, false},
		{"ip", v4a, true},
		{"ip", v6a, false},
		{"ip6", v6a, true},
		{"ip6 and port 9092", v4a, false},
		{"ip and host 10.0.0.1 and (port 9092 or port 19092)", v4a, true},
		{"(ip6 and port 9093) or (ip and port 9092)", v6b, true},
		{"tcp and not host 10.0.0.1", v4a, false},

		// Only TCP passes, as kwire reads nothing else.
		{"port 9092", pkt{src: "10.0.0.1", dst: "10.0.0.2", sport: 1, dport: 9092, proto: 17}, false},
		{"tcp", pkt{src: "fd00::1", dst: "fd00::2", sport: 1, dport: 9092, proto: 17}, false},
		// IPv4 header options: ports are found after them.
		{"dst port 9092", pkt{src: "10.0.0.1", dst: "10.0.0.2", sport: 1, dport: 9092, ipOptions: 8}, true},
		{"src port 9092", pkt{src: "10.0.0.1", dst: "10.0.0.2", sport: 1, dport: 9092, ipOptions: 8}, false},
		// A later fragment has no TCP header: dropped. The first passes.
		{"tcp", pkt{src: "10.0.0.1", dst: "10.0.0.2", sport: 1, dport: 9092, fragOff: 0x0010}, false},
		{"tcp", pkt{src: "10.0.0.1", dst: "10.0.0.2", sport: 1, dport: 9092, fragOff: 0x2000}, true},
		// IPv6 extension headers are not walked.
		{"tcp", pkt{src: "fd00::1", dst: "fd00::2", sport: 1, dport: 9092, ipv6NextHeader: 0}, true},
		{"tcp", pkt{src: "fd00::1", dst: "fd00::2", sport: 1, dport: 9092, ipv6NextHeader: 43}, false},
	}
	for _, tt := range tests {
		if got := runFilter(t, tt.expr, tt.p); got != tt.want {
			t.Errorf("%q on %s:%d → %s:%d = %v, want %v", tt.expr, tt.p.src, tt.p.sport, tt.p.dst, tt.p.dport, got, tt.want)
		}
	}
}

func TestFilterShortPacketsDropped(t *testing.T) {
	n, _ := parseFilter("port 9092")
	insns, err := program{expr: n, snaplen: 100}.compile()
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(insns)
	if err != nil {
		t.Fatal(err)
	}
	full := v4a.bytes()
	if got, _ := vm.Run(full); got != 100 {
		t.Fatalf("full packet: accepted %d bytes, want the snap length 100", got)
	}
	for _, cut := range []int{0, 1, 10, 20, 21, 23} {
		if got, _ := vm.Run(full[:cut]); got != 0 {
			t.Errorf("packet cut to %d bytes: accepted %d", cut, got)
		}
	}
}

func TestFilterSnaplen(t *testing.T) {
	insns, err := program{expr: portsFilter(nil), snaplen: 30}.compile()
	if err != nil {
		t.Fatal(err)
	}
	vm, _ := bpf.NewVM(insns)
	if got, _ := vm.Run(v6a.bytes()); got != 30 {
		t.Errorf("accepted %d bytes, want the snap length 30", got)
	}
}

func TestPortsFilter(t *testing.T) {
	n := portsFilter([]uint16{9092, 19092})
	if got, want := n.String(), "(tcp port 9092 or tcp port 19092)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	for _, tt := range []struct {
		p    pkt
		want bool
	}{
		{v4a, true},
		{v4b, false},
		{pkt{src: "fd00::1", dst: "fd00::2", sport: 19092, dport: 3}, true},
	} {
		if got := runNode(t, n, tt.p); got != tt.want {
			t.Errorf("%s on %+v = %v, want %v", n, tt.p, got, tt.want)
		}
	}
	if !runNode(t, portsFilter(nil), v4b) {
		t.Error("no ports: all TCP should pass")
	}
}

func TestFilterParseString(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"port 1 or port 2 and port 3", "(tcp port 1 or (tcp port 2 and tcp port 3))"},
		{"(port 1 or port 2) and port 3", "((tcp port 1 or tcp port 2) and tcp port 3)"},
		{"not not host 10.1.2.3", "not not host 10.1.2.3"},
		{"src net 10.0.0.0/8&&dst host ::1", "(src net 10.0.0.0/8 and dst host ::1)"},
		{"tcp dst portrange 1-2||ip6", "(tcp dst portrange 1-2 or ip6)"},
		{"!(ip)", "not ip"},
	}
	for _, tt := range tests {
		n, err := parseFilter(tt.expr)
		if err != nil {
			t.Errorf("parseFilter(%q): %v", tt.expr, err)
			continue
		}
		if got := n.String(); got != tt.want {
			t.Errorf("parseFilter(%q) = %s, want %s", tt.expr, got, tt.want)
		}
	}
}

func TestFilterErrors(t *testing.T) {
	tests := []struct {
		expr        string
		offset      int
		unsupported bool
		msg         string // a part of the message
	}{
		{"", 0, false, "empty filter"},
		{"   ", 0, false, "empty filter"},
		{"port", 4, false, "port needs a number"},
		{"port 70000", 5, false, "port needs a number"},
		{"port -1", 5, false, "port needs a number"},
		{"port http", 5, true, "port needs a number"},
		{"portrange 1", 10, false, "portrange needs N-M"},
		{"portrange a-b", 10, false, "portrange needs N-M"},
		{"host", 4, false, "host needs"},
		{"host kafka.example.com", 5, true, "not resolved"},
		{"host fe80::1%eth0", 5, true, "zone"},
		{"net 10.0.0.1/8", 4, false, "bits set beyond"},
		{"net 10.0.0.0", 4, true, "net needs ADDRESS/BITS"},
		{"net 10.0.0.0/40", 4, false, "net needs ADDRESS/BITS"},
		{"udp port 53", 0, true, "unsupported primitive"},
		{"ether host 00:11:22:33:44:55", 0, true, "unsupported primitive"},
		{"vlan 100", 0, true, "unsupported primitive"},
		{"tcp[13] & 2 != 0", 0, true, "unsupported primitive"},
		{"src or dst port 1", 4, true, "src or dst"},
		{"tcp host 10.0.0.1", 4, true, "tcp host"},
		{"port 9092 port 9093", 10, false, "expected and, or"},
		{"port 9092 9093", 10, true, "expected and, or"},
		{"port 1 and", 10, false, "expected a primitive"},
		{"port 1 or or port 2", 10, false, "expected a primitive"},
		{"(port 1", 7, false, "missing closing parenthesis"},
		{"port 1)", 6, false, "unbalanced parenthesis"},
		{"()", 1, false, "expected a primitive"},
		{"not", 3, false, "expected a primitive"},
		{"src", 3, false, "expected port, portrange, host or net"},
		{strings.Repeat("(", 100) + "tcp" + strings.Repeat(")", 100), 64, false, "nested more than"},
		{strings.Repeat("not ", 100) + "tcp", 256, false, "nested more than"},
	}
	for _, tt := range tests {
		_, err := parseFilter(tt.expr)
		var fe *FilterError
		if !errors.As(err, &fe) {
			t.Errorf("parseFilter(%q) = %v, want a *FilterError", tt.expr, err)
			continue
		}
		if fe.Offset != tt.offset || fe.Unsupported != tt.unsupported || !strings.Contains(fe.Msg, tt.msg) {
			t.Errorf("parseFilter(%q) = offset %d unsupported %v msg %q; want offset %d unsupported %v msg with %q",
				tt.expr, fe.Offset, fe.Unsupported, fe.Msg, tt.offset, tt.unsupported, tt.msg)
		}
		if got := errors.Is(err, ErrUnsupportedFilter); got != tt.unsupported {
			t.Errorf("parseFilter(%q): errors.Is(ErrUnsupportedFilter) = %v", tt.expr, got)
		}
		if tt.unsupported && !strings.Contains(err.Error(), "-tags pcap") {
			t.Errorf("parseFilter(%q): message does not point to -tags pcap: %v", tt.expr, err)
		}
	}
}

// TestFilterTooLong checks the 255-instruction limit of conditional jumps
// is reported, not miscompiled.
func TestFilterTooLong(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("host fd00::" + string(rune('1'+i%9)))
	}
	n, err := parseFilter(b.String())
	if err != nil {
		t.Fatal(err)
	}
	_, err = program{expr: n, snaplen: 1}.compile()
	if err == nil || !strings.Contains(err.Error(), "too long") {
		t.Fatalf("compile = %v, want a too-long error", err)
	}
}

// TestManyPorts checks the default filter with many broker ports: every
// port passes, others do not, in both families.
func TestManyPorts(t *testing.T) {
	var ports []uint16
	for p := uint16(9000); p < 9060; p++ {
		ports = append(ports, p)
	}
	n := portsFilter(ports)
	for _, p := range []uint16{9000, 9031, 9059} {
		for _, src := range []string{"10.0.0.1", "fd00::1"} {
			dst := "10.0.0.2"
			if src == "fd00::1" {
				dst = "fd00::2"
			}
			if !runNode(t, n, pkt{src: src, dst: dst, sport: 40000, dport: p}) {
				t.Errorf("%s → port %d dropped", src, p)
			}
			if runNode(t, n, pkt{src: src, dst: dst, sport: 40000, dport: p + 100}) {
				t.Errorf("%s → port %d passed", src, p+100)
			}
		}
	}
}

// TestKernelPrelude checks the Linux-only part assembles and has the
// expected shape; the kernel itself runs it in the capture tests.
func TestKernelPrelude(t *testing.T) {
	for _, pr := range []program{
		{expr: portsFilter([]uint16{9092}), snaplen: 100, kernel: true},
		{expr: portsFilter([]uint16{9092}), snaplen: 100, kernel: true, dropOutgoing: true},
		{expr: portsFilter(nil), snaplen: 100, kernel: true, loopbacks: []int{1, 7}},
	} {
		insns, err := pr.compile()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bpf.Assemble(insns); err != nil {
			t.Fatal(err)
		}
		var exts []bpf.Extension
		for _, in := range insns {
			if le, ok := in.(bpf.LoadExtension); ok {
				exts = append(exts, le.Num)
			}
		}
		want := []bpf.Extension{bpf.ExtProto}
		switch {
		case pr.dropOutgoing:
			want = []bpf.Extension{bpf.ExtType, bpf.ExtProto}
		case len(pr.loopbacks) > 0:
			want = []bpf.Extension{bpf.ExtType, bpf.ExtInterfaceIndex, bpf.ExtProto}
		}
		if len(exts) != len(want) {
			t.Fatalf("%+v: extensions %v, want %v", pr, exts, want)
		}
		for i := range want {
			if exts[i] != want[i] {
				t.Fatalf("%+v: extensions %v, want %v", pr, exts, want)
			}
		}
	}
}

func FuzzFilter(f *testing.F) {
	for _, s := range []string{"port 9092", "host ::1 or not (src net 10.0.0.0/8 and portrange 1-5)", "ip6 && !tcp", "(((", "port 1)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		n, err := parseFilter(expr)
		if err != nil {
			var fe *FilterError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > len(expr) {
				t.Fatalf("parseFilter(%q) = %v", expr, err)
			}
			_ = err.Error()
			return
		}
		insns, err := program{expr: n, snaplen: 1}.compile()
		if err != nil {
			return // too long
		}
		if _, err := bpf.NewVM(insns); err != nil {
			t.Fatalf("%q compiled to an invalid program: %v", expr, err)
		}
		// The normal form parses to itself.
		n2, err := parseFilter(n.String())
		if err != nil || n2.String() != n.String() {
			t.Fatalf("%q: String %q reparses to %v, %v", expr, n.String(), n2, err)
		}
	})
}

// Port ranges (kwire --port 19092-19094, or every port) compile to one
// range test per run of consecutive ports.
func TestPortRanges(t *testing.T) {
	got := portRanges([]uint16{19094, 9092, 19092, 19093, 9092, 9093, 30000})
	want := [][2]uint16{{9092, 9093}, {19092, 19094}, {30000, 30000}}
	if !slices.Equal(got, want) {
		t.Errorf("ranges %v, want %v", got, want)
	}
	all := make([]uint16, 0, 65535)
	for p := 1; p <= 65535; p++ {
		all = append(all, uint16(p))
	}
	n := portsFilter(all)
	if n.op != opPortRange || n.lo != 1 || n.hi != 65535 {
		t.Errorf("every port: %+v", n)
	}
	if !runNode(t, n, pkt{src: "10.0.0.1", dst: "10.0.0.2", sport: 40000, dport: 5}) {
		t.Error("port 5 dropped")
	}
}
