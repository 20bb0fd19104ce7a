package main

import (
	"time"

	"github.com/cheggaaa/pb/v3"
	"github.com/kwire/kwire/reassembly"
)

// progressBar shows how much of the input has been read. It writes to
// stderr only, and only when stderr is a terminal.
type progressBar struct {
	bar *pb.ProgressBar
}

// startProgressFor starts a progress bar on stderr when stderr is a
// terminal and the named files are larger than progressThreshold; it
// returns nil otherwise. A nil *progressBar does nothing.
func startProgressFor(s *ioStreams, paths []string) *progressBar {
	total := inputSize(paths)
	if !s.ErrTTY || total <= progressThreshold {
		return nil
	}
	out := s.Progress
	if out == nil {
		out = s.ErrOut
	}
	bar := newBar(total).SetWriter(out)
	bar.Start()
	return &progressBar{bar: bar}
}

// progressTemplate is the bar's layout: the bytes read and the total, the
// bar, the percentage, the speed in bytes per second and the time left,
// each of the variable parts padded to its widest form ("1023.99 MiB/s",
// "ETA 59m59s"), so that the line keeps its width as the figures change,
// and with a placeholder of the same width while there is no figure yet.
// (pb's own Full preset writes "40.58 MiB p/s", "? p/s" and "?".)
const progressTemplate = `{{printf "%23s" (counters . )}} {{bar . }} {{printf "%7s" (percent . )}} {{printf "%13s" (speed . "%s/s" "-- B/s")}} {{printf "%-12s" (rtime . "ETA %s" "in %s" "ETA --")}}`

// newBar returns the progress bar of an input of total bytes.
func newBar(total int64) *pb.ProgressBar {
	return pb.New64(total).Set(pb.Bytes, true).SetTemplateString(progressTemplate)
}

// progressThreshold is the total input size above which a progress bar is
// shown.
const progressThreshold = 50 << 20

// wrap returns h with progress accounting, or h itself without a bar.
func (p *progressBar) wrap(h reassembly.Handler) reassembly.Handler {
	if p == nil {
		return h
	}
	return &progressHandler{Handler: h, bar: p}
}

// finish fills the bar (the count is an estimate) and stops it.
func (p *progressBar) finish() {
	if p == nil {
		return
	}
	p.bar.SetCurrent(p.bar.Total())
	p.bar.Finish()
}

// progressHandler advances the bar by the TCP payload delivered. The
// reassembly package does not report file offsets, so the bar runs behind
// the true position by the packets' headers and non-TCP traffic, and jumps
// to full at the end.
type progressHandler struct {
	reassembly.Handler
	bar *progressBar
}

func (h *progressHandler) Data(c *reassembly.Conn, d reassembly.Dir, ch reassembly.Chunk) {
	h.bar.bar.Add(len(ch.Data))
	h.Handler.Data(c, d, ch)
}

// Snapped passes on bytes the snap length kept out as such, not as a
// Gap: the embedded Handler's method set hides the dissector's.
func (h *progressHandler) Snapped(c *reassembly.Conn, d reassembly.Dir, n int64, t time.Time, sc reassembly.SnapCut) {
	if sh, ok := h.Handler.(reassembly.SnapHandler); ok {
		sh.Snapped(c, d, n, t, sc)
		return
	}
	h.Handler.Gap(c, d, n, t)
}

// Cut passes on bytes the capture's writer left out as such (see
// Snapped).
func (h *progressHandler) Cut(c *reassembly.Conn, d reassembly.Dir, n int64, t time.Time) {
	if ch, ok := h.Handler.(reassembly.CutHandler); ok {
		ch.Cut(c, d, n, t)
		return
	}
	h.Handler.Gap(c, d, n, t)
}

// GivenUp passes on holes the out-of-order budget gave up as such (see
// Snapped).
func (h *progressHandler) GivenUp(c *reassembly.Conn, d reassembly.Dir, n int64, t time.Time) {
	if bh, ok := h.Handler.(reassembly.BudgetHandler); ok {
		bh.GivenUp(c, d, n, t)
		return
	}
	h.Handler.Gap(c, d, n, t)
}
