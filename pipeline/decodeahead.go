package pipeline

import (
	"sync"

	"github.com/kwire/kwire/dissect"
)

// DecodeAhead is a dissect.Sink for consumers that need every exchange
// decoded but print nothing per exchange (kwire stats): the Dissector
// hands exchanges over undecoded (dissect.Options.DeferDecode), workers
// decode them on every core, and one goroutine passes them and the events
// between them to next in emit order, then hands their trees and frame
// buffers back to the pools (next must copy what it keeps, as
// stats.Collector does). What is in flight is bounded by a Flight: frame
// bytes (one exchange always passes), jobs and memory (a decode it
// refused is done again, in order, by the consumer).
type DecodeAhead struct {
	next  dissect.Sink
	work  chan *job      // to the workers
	order chan *job      // emit order, to the consumer
	wg    sync.WaitGroup // the workers
	done  chan struct{}  // closed when the consumer is finished

	fl Flight // jobs not yet passed on and their frame bytes

	// Recycle says next keeps nothing of an exchange once its Exchange
	// returns but what the exchange's facts hold (set before the first
	// Exchange): the exchange, its frames, trees and facts are then
	// reused for later ones (dissect.Exchange.Recycle).
	Recycle bool
}

// NewDecodeAhead returns the pipeline: workers goroutines decode, at most
// DefaultJobs exchanges and DefaultBytes frame bytes are in flight, and
// their decoding memory is bounded by mem bytes (0: not bounded). Close
// ends it.
func NewDecodeAhead(next dissect.Sink, workers int, mem int64) *DecodeAhead {
	a := &DecodeAhead{
		next:  next,
		work:  make(chan *job, DefaultJobs),
		order: make(chan *job, DefaultJobs),
		done:  make(chan struct{}),
	}
	a.fl.SetMemory(mem)
	for range workers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for j := range a.work {
				j.decode()
				close(j.decoded)
			}
		}()
	}
	go a.consume()
	return a
}

// Exchange implements dissect.Sink: it waits for room in the flight.
func (a *DecodeAhead) Exchange(ex *dissect.Exchange) {
	j := &job{ex: ex, decoded: make(chan struct{})}
	j.size = ex.FrameBytes()
	j.mem = a.fl.Admit(j.size, &j.memv)
	a.order <- j
	a.work <- j
}

// Event implements dissect.Sink: next sees it after the exchanges before
// it.
func (a *DecodeAhead) Event(ev *dissect.Event) {
	j := &job{ev: ev}
	j.mem = a.fl.Admit(0, &j.memv)
	a.order <- j
}

// Sync waits until next has seen everything emitted so far.
func (a *DecodeAhead) Sync() {
	j := &job{barrier: make(chan struct{})}
	j.mem = a.fl.Admit(0, &j.memv)
	a.order <- j
	<-j.barrier
}

func (a *DecodeAhead) consume() {
	defer close(a.done)
	for j := range a.order {
		switch {
		case j.ex != nil:
			<-j.decoded
			if j.redo {
				j.redecode(&a.fl) // the jobs before it are passed on
				j.ex.Facts()
			}
			a.next.Exchange(j.ex)
			j.ex.Done(a.Recycle)
		case j.ev != nil:
			a.next.Event(j.ev)
		default:
			close(j.barrier)
		}
		a.fl.Release(j.size, j.mem)
	}
}

// Close waits until next has seen everything and the workers have ended.
func (a *DecodeAhead) Close() {
	close(a.work)
	close(a.order)
	a.wg.Wait()
	<-a.done
}
