package main

import (
	"io"

	"github.com/cheggaaa/pb/v3"
	"github.com/kwire/kwire/reassembly"
)

// progressBar shows how much of the input has been read. It writes to
// stderr only, and only when stderr is a terminal.
type progressBar struct {
	bar *pb.ProgressBar
}

func startProgress(w io.Writer, total int64) *progressBar {
	bar := pb.New64(total).
		Set(pb.Bytes, true).
		SetWriter(w).
		SetTemplate(pb.Full)
	bar.Start()
	return &progressBar{bar: bar}
}

func (p *progressBar) add(n int) { p.bar.Add(n) }

// finish fills the bar (the count below is an estimate) and stops it.
func (p *progressBar) finish() {
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
	h.bar.add(len(ch.Data))
	h.Handler.Data(c, d, ch)
}
