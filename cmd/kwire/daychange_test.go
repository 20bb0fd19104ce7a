package main

import (
	"testing"
	"time"

	"github.com/kwire/kwire/render"
)

// TestDayChange: a line says the date changed only when its UTC date is
// not the previous line's, and never for the first line; a line of the
// same day as the one before costs no allocation.
func TestDayChange(t *testing.T) {
	k := &readSink{}
	k.ropts.Clock = render.ClockTime
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, c := range []struct{ at, note string }{
		{"1969-12-31T23:59:58Z", ""},
		{"1969-12-31T23:59:59.9Z", ""},
		{"1970-01-01T00:00:00Z", "--- 1970-01-01 (UTC) begins; the lines above are of 1969-12-31 or before (--utc gives every line its date) ---\n"},
		{"2026-12-01T23:59:59.999+00:00", "--- 2026-12-01 (UTC) begins; the lines above are of 1970-01-01 or before (--utc gives every line its date) ---\n"},
		{"2026-12-02T00:30:00+01:00", ""}, // 23:30 UTC the day before
		{"2026-12-02T00:00:00Z", "--- 2026-12-02 (UTC) begins; the lines above are of 2026-12-01 or before (--utc gives every line its date) ---\n"},
		{"2026-12-01T23:00:00Z", "--- 2026-12-01 (UTC) begins; the lines above are of 2026-12-02 or before (--utc gives every line its date) ---\n"},
		{"0001-01-01T00:00:00Z", ""}, // the zero time: no capture time
		{"2026-12-01T23:00:01Z", ""},
	} {
		if got := k.dayChange(at(c.at)); got != c.note {
			t.Errorf("%s: %q, want %q", c.at, got, c.note)
		}
	}
	same := at("2026-12-01T12:00:00Z")
	if n := testing.AllocsPerRun(100, func() { k.dayChange(same) }); n != 0 {
		t.Errorf("%.1f allocations for a line of the same day", n)
	}
}
