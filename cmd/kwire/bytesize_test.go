package main

import "testing"

func TestByteSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		out  string
	}{
		{"16MiB", 16 << 20, "16MiB"},
		{"16M", 16 << 20, "16MiB"},
		{"512kib", 512 << 10, "512KiB"},
		{"2GB", 2 << 30, "2GiB"},
		{"1000", 1000, "1000"},
		{"1000B", 1000, "1000"},
		{"0", 0, "0"},
	} {
		var b byteSize
		if err := b.Set(c.in); err != nil || int64(b) != c.want || b.String() != c.out {
			t.Errorf("Set(%q): %d %q %v, want %d %q", c.in, int64(b), b.String(), err, c.want, c.out)
		}
	}
	for _, bad := range []string{"", "MiB", "-1MiB", "16TiB", "1.5MiB", "99999999999GiB"} {
		var b byteSize
		if err := b.Set(bad); err == nil {
			t.Errorf("Set(%q) = %d, want an error", bad, int64(b))
		}
	}
}
