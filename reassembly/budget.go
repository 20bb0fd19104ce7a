package reassembly

import "time"

// Holes given up by the out-of-order budget: segments that arrive ahead
// of a hole are held in the assembler's pages (PageSize bytes each) until
// the hole is filled. When holding the next one would pass
// Options.MaxBufferedPagesPerConn or MaxBufferedPagesTotal, the assembler
// gives up the connection's oldest hole and delivers what it held behind
// it. Those bytes may well be in the capture, later (a retransmission, or
// thousands of tiny segments reordered): they were not lost, the budget
// gave them up. They are reported apart from bytes lost: to a
// BudgetHandler as GivenUp, to any other Handler as a Gap.

// BudgetHandler is a Handler that is told apart of the holes the
// out-of-order budget gave up: GivenUp reports n bytes of direction d
// that were still missing when the segments buffered behind them reached
// Options.MaxBufferedPagesPerConn or MaxBufferedPagesTotal. They are a
// hole all the same (counted in ConnStats.Gaps and GapBytes, and in
// ConnStats.GivenUp), and the next Data follows it, as after a Gap; but
// they may have been captured: a larger budget would have waited for
// them. A Handler that is no BudgetHandler gets a Gap instead.
type BudgetHandler interface {
	Handler
	GivenUp(c *Conn, d Dir, n int64, t time.Time)
}

// givenUp reports a hole the budget gave up to h: as GivenUp when h is a
// BudgetHandler, else as a Gap.
func givenUp(h Handler, c *Conn, d Dir, n int64, t time.Time) {
	if bh, ok := h.(BudgetHandler); ok {
		bh.GivenUp(c, d, n, t)
		return
	}
	h.Gap(c, d, n, t)
}

func (r *runner) callGivenUp(s *stream, d Dir, n int64, t time.Time) {
	if r.rec == nil {
		givenUp(r.h, s.conn, d, n, t)
		return
	}
	r.rec.add(s, call{kind: evGivenUp, dir: d, n: n, t: t}, nil)
}

func (r *runner) emitGivenUp(s *stream, d Dir, n int64, t time.Time) {
	if r.holding(s, d) {
		r.holdEvent(s, event{s: s, kind: evGivenUp, dir: d, n: n, t: t}, nil)
		return
	}
	if !r.deferring {
		r.callGivenUp(s, d, n, t)
		return
	}
	r.events = append(r.events, event{s: s, kind: evGivenUp, dir: d, n: n, t: t})
}
