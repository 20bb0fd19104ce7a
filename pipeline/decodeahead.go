package pipeline

import (
	"sync"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
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
	work  chan *aheadJob // to the workers
	order chan *aheadJob // emit order, to the consumer
	wg    sync.WaitGroup // the workers
	done  chan struct{}  // closed when the consumer is finished

	fl Flight // jobs not yet passed on and their frame bytes
}

type aheadJob struct {
	ex      *dissect.Exchange
	ev      *dissect.Event
	barrier chan struct{}
	size    int64
	mem     *JobMem // its memory in the flight (nil: not bounded): memv
	memv    JobMem
	dec     protocol.Decoder
	redo    bool          // the worker's decode was refused memory: the consumer decodes again
	decoded chan struct{} // closed by the worker
}

// NewDecodeAhead returns the pipeline: workers goroutines decode, at most
// DefaultJobs exchanges and DefaultBytes frame bytes are in flight, and
// their decoding memory is bounded by mem bytes (0: not bounded). Close
// ends it.
func NewDecodeAhead(next dissect.Sink, workers int, mem int64) *DecodeAhead {
	a := &DecodeAhead{
		next:  next,
		work:  make(chan *aheadJob, DefaultJobs),
		order: make(chan *aheadJob, DefaultJobs),
		done:  make(chan struct{}),
	}
	a.fl.SetMemory(mem)
	for range workers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for j := range a.work {
				j.ex.DecodeWith(j.budget(), &j.dec)
				if j.mem != nil && j.mem.Aborted() {
					j.ex.Undecode()
					j.redo = true
				} else {
					j.ex.Facts() // computed here, on every core; resolved in emit order
				}
				close(j.decoded)
			}
		}()
	}
	go a.consume()
	return a
}

// Exchange implements dissect.Sink: it waits for room in the flight.
func (a *DecodeAhead) Exchange(ex *dissect.Exchange) {
	j := &aheadJob{ex: ex, decoded: make(chan struct{})}
	j.size = ex.FrameBytes()
	j.mem = a.fl.Admit(j.size, &j.memv)
	a.order <- j
	a.work <- j
}

// budget is the job's memory as a protocol.Budget (nil when not bounded).
func (j *aheadJob) budget() protocol.Budget {
	if j.mem == nil {
		return nil
	}
	return j.mem
}

// Event implements dissect.Sink: next sees it after the exchanges before
// it.
func (a *DecodeAhead) Event(ev *dissect.Event) {
	j := &aheadJob{ev: ev}
	j.mem = a.fl.Admit(0, &j.memv)
	a.order <- j
}

// Sync waits until next has seen everything emitted so far.
func (a *DecodeAhead) Sync() {
	j := &aheadJob{barrier: make(chan struct{})}
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
				a.fl.WaitHead(j.mem) // it is: the jobs before it are passed on
				j.mem.Retry()
				j.ex.DecodeWith(j.budget(), &j.dec)
				j.ex.Facts()
			}
			a.next.Exchange(j.ex)
			for _, f := range [...]*dissect.Frame{j.ex.Request, j.ex.Response} {
				if f != nil {
					f.Tree.Release()
				}
			}
			j.ex.Release()
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
