package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kwire/kwire/reassembly"
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

// holeKinds records how holes reach a Handler.
type holeKinds struct {
	reassembly.Handler
	got []string
}

func (h *holeKinds) Gap(c *reassembly.Conn, d reassembly.Dir, n int64, t time.Time) {
	h.got = append(h.got, fmt.Sprintf("gap %d", n))
}

func (h *holeKinds) Cut(c *reassembly.Conn, d reassembly.Dir, n int64, t time.Time) {
	h.got = append(h.got, fmt.Sprintf("cut %d", n))
}

func (h *holeKinds) Snapped(c *reassembly.Conn, d reassembly.Dir, n int64, t time.Time, sc reassembly.SnapCut) {
	h.got = append(h.got, fmt.Sprintf("snapped %d f%d", n, sc.Frame))
}

// TestProgressHandlerHoles: behind the progress bar the dissector still
// hears cuts and snap cuts as such; the wrapper hid them, and the
// reassembly, finding no CutHandler or SnapHandler, sent Gaps.
func TestProgressHandlerHoles(t *testing.T) {
	in := &holeKinds{}
	var h reassembly.Handler = (&progressBar{bar: newBar(1).SetWriter(io.Discard)}).wrap(in)
	c := &reassembly.Conn{}
	if ch, ok := h.(reassembly.CutHandler); ok {
		ch.Cut(c, reassembly.AtoB, 10, time.Time{})
	}
	if sh, ok := h.(reassembly.SnapHandler); ok {
		sh.Snapped(c, reassembly.AtoB, 740, time.Time{}, reassembly.SnapCut{Frame: 6, Captured: 120, Length: 860})
	}
	if want := []string{"cut 10", "snapped 740 f6"}; !slices.Equal(in.got, want) {
		t.Errorf("got %q, want %q", in.got, want)
	}
}
