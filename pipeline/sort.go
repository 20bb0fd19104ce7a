package pipeline

import (
	"container/heap"
	"time"

	"github.com/kwire/kwire/dissect"
)

// sortEntryCost is what an entry costs beyond its frames' bytes: the
// Exchange or Event, its Frames and trees' headers, the heap slot.
const sortEntryCost = 512

// Sorter is a dissect.Sink that passes exchanges and events on by packet
// number (kwire read --sort time): in the order of their requests'
// packets, not of their completion. It holds each exchange (and event)
// until every exchange that could still come before it has come: one
// whose request is older than the latest capture time seen minus the
// window is passed on. An exchange whose response took longer than the
// window, or that came when the buffer was full, is passed on as late as
// it came, and counted (Late, Full). The buffer's memory is bounded in
// bytes (frames held plus a fixed cost per entry): exchanges wait
// undecoded (dissect.Options.DeferDecode) and are decoded as they leave
// (unless KeepDeferred).
type Sorter struct {
	next   dissect.Sink
	window time.Duration
	budget int64

	h       sortHeap
	held    int64
	seq     int64
	latest  time.Time // the latest capture time seen
	emitted int64     // packet number of the last entry passed on
	// Late counts entries passed on after a later packet's, Full those
	// passed on early because the buffer was full; Peak is the most
	// bytes held.
	Late, Full, Peak int64
	// KeepDeferred leaves decoding to the next sink (one that decodes
	// on every core and counts the failures).
	KeepDeferred bool
}

type sortEntry struct {
	frame int64
	t     time.Time
	seq   int64 // arrival, for ties
	ex    *dissect.Exchange
	ev    *dissect.Event
	cost  int64
}

type sortHeap []sortEntry

func (h sortHeap) Len() int { return len(h) }
func (h sortHeap) Less(i, j int) bool {
	if h[i].frame != h[j].frame {
		return h[i].frame < h[j].frame
	}
	return h[i].seq < h[j].seq
}
func (h sortHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *sortHeap) Push(x any)   { *h = append(*h, x.(sortEntry)) }
func (h *sortHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = sortEntry{}
	*h = old[:len(old)-1]
	return e
}

// NewSorter returns a Sorter that holds an exchange until the capture
// has gone window past its request, in at most budget bytes.
func NewSorter(next dissect.Sink, window time.Duration, budget int64) *Sorter {
	return &Sorter{next: next, window: window, budget: budget}
}

// Exchange implements dissect.Sink.
func (s *Sorter) Exchange(ex *dissect.Exchange) {
	frame := int64(0)
	switch {
	case ex.Request != nil:
		frame = ex.Request.FirstPacket
	case ex.Response != nil:
		frame = ex.Response.FirstPacket
	}
	t := ex.Time()
	done := t
	if ex.Response != nil && ex.Response.End.After(done) {
		done = ex.Response.End
	}
	s.add(sortEntry{frame: frame, t: t, ex: ex, cost: sortEntryCost + ex.FrameBytes()}, done)
}

// Event implements dissect.Sink.
func (s *Sorter) Event(ev *dissect.Event) {
	frame := ev.Frame
	if frame == 0 {
		frame = s.emitted // an event of unknown place goes where the output is
	}
	s.add(sortEntry{frame: frame, t: ev.Time, ev: ev, cost: sortEntryCost + int64(len(ev.Data))}, ev.Time)
}

// add holds an entry; seen is the latest capture time it tells of.
func (s *Sorter) add(e sortEntry, seen time.Time) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.h, e)
	s.held += e.cost
	s.Peak = max(s.Peak, s.held)
	if seen.After(s.latest) {
		s.latest = seen
	}
	horizon := s.latest.Add(-s.window)
	for s.h.Len() > 0 {
		top := s.h[0]
		switch {
		case !top.t.IsZero() && top.t.Before(horizon):
		case s.held > s.budget:
			s.Full++
		default:
			return
		}
		s.pop()
	}
}

func (s *Sorter) pop() {
	e := heap.Pop(&s.h).(sortEntry)
	s.held -= e.cost
	if e.frame < s.emitted {
		s.Late++
	}
	s.emitted = max(s.emitted, e.frame)
	if e.ex != nil {
		// Held undecoded (its bytes are what the budget counts), decoded
		// now: trees of many exchanges would cost far more.
		if !s.KeepDeferred {
			e.ex.Decode() // its problems count where they are found (dissect.Problems)
		}
		s.next.Exchange(e.ex)
	} else {
		s.next.Event(e.ev)
	}
}

// Flush passes on everything held (the end of a capture).
func (s *Sorter) Flush() {
	for s.h.Len() > 0 {
		s.pop()
	}
	s.emitted, s.latest = 0, time.Time{}
}
