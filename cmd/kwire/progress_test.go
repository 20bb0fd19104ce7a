package main

import (
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// The bar speaks bytes per second ("MiB/s", never pb's "p/s"), shows a
// placeholder before the first figures, and keeps its width as the
// figures appear and change.
func TestProgressBarLayout(t *testing.T) {
	bar := newBar(1 << 30).SetWidth(100).SetWriter(io.Discard)
	var lines []string
	lines = append(lines, bar.String()) // nothing read, no speed yet
	bar.Start()
	for _, n := range []int64{40 << 20, 400 << 20, 1000 << 20} {
		time.Sleep(20 * time.Millisecond)
		bar.SetCurrent(n)
		lines = append(lines, bar.String())
	}
	bar.SetCurrent(1 << 30)
	bar.Finish()
	lines = append(lines, bar.String())
	width := utf8.RuneCountInString(lines[0])
	for i, l := range lines {
		if strings.Contains(l, "p/s") || strings.Contains(l, "?") {
			t.Errorf("line %d: %q", i, l)
		}
		if n := utf8.RuneCountInString(l); n != width {
			t.Errorf("line %d is %d wide, the first %d:\n%q\n%q", i, n, width, lines[0], l)
		}
	}
	if !strings.Contains(lines[0], "-- B/s") || !strings.Contains(lines[0], "ETA --") {
		t.Errorf("no placeholders before the first figures: %q", lines[0])
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "iB/s in ") {
		t.Errorf("the finished bar has no speed in bytes per second or time taken: %q", last)
	}
	t.Logf("\n%s", strings.Join(lines, "\n"))
}
