package units

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{-1, "-"},
		{400 * time.Nanosecond, "<0.001ms"},
		{850 * time.Nanosecond, "0.001ms"},
		{84 * time.Microsecond, "0.084ms"},
		{209 * time.Microsecond, "0.209ms"},
		{2410 * time.Microsecond, "2.41ms"},
		{35200 * time.Microsecond, "35.2ms"},
		{512 * time.Millisecond, "512ms"},
		{999400 * time.Microsecond, "999ms"},
		{999600 * time.Microsecond, "1.00s"},
		{1250 * time.Millisecond, "1.25s"},
		{125 * time.Second, "125s"},
		{3725 * time.Second, "3725s"},
	} {
		if got := Duration(tc.d); got != tc.want {
			t.Errorf("Duration(%d) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestSize(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0B"},
		{512, "512B"},
		{10239, "10239B"},
		{10240, "10.0KiB"},
		{1500145, "1.43MiB"},
		{1023 * 1024, "1023KiB"},
		{1024 * 1024 * 1000, "1000MiB"},
		{3 << 30, "3.00GiB"},
		{-5, "-"},
	} {
		if got := Size(tc.n); got != tc.want {
			t.Errorf("Size(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
