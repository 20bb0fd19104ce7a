package live

import (
	"errors"
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
	if _, err := FileFilter("udp port 53"); !errors.Is(err, ErrUnsupportedFilter) {
		t.Errorf("udp: %v", err)
	}
	f, _ := FileFilter("port 9092")
	if f(p[:10]) {
		t.Error("a cut packet passed")
	}
}
