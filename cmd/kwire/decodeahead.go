package main

import (
	"sync"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
)

// decodeAhead is a dissect.Sink for consumers that need every exchange
// decoded but print nothing per exchange (kwire stats): the Dissector
// hands exchanges over undecoded (dissect.Options.DeferDecode), workers
// decode them on every core, and one goroutine passes them and the events
// between them to next in emit order, then hands their trees and frame
// buffers back to the pools (next must copy what it keeps, as
// stats.Collector does). What is in flight is bounded as in parallelSink:
// parallelBudget frame bytes (one exchange always passes), parallelJobs
// jobs and the flight's memory (a decode it refused is done again, in
// order, by the consumer).
type decodeAhead struct {
	next  dissect.Sink
	work  chan *aheadJob // to the workers
	order chan *aheadJob // emit order, to the consumer
	wg    sync.WaitGroup // the workers
	done  chan struct{}  // closed when the consumer is finished

	flight // jobs not yet passed on and their frame bytes
}

type aheadJob struct {
	ex      *dissect.Exchange
	ev      *dissect.Event
	barrier chan struct{}
	size    int64
	mem     *jobMem // its memory in the flight (nil: not bounded): memv
	memv    jobMem
	dec     protocol.Decoder
	redo    bool          // the worker's decode was refused memory: the consumer decodes again
	decoded chan struct{} // closed by the worker
}

// newDecodeAhead returns the pipeline, its decoding memory bounded by
// mem bytes (0: not bounded).
func newDecodeAhead(next dissect.Sink, workers int, mem int64) *decodeAhead {
	a := &decodeAhead{
		next:  next,
		work:  make(chan *aheadJob, parallelJobs),
		order: make(chan *aheadJob, parallelJobs),
		done:  make(chan struct{}),
	}
	a.setMemory(mem)
	for range workers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for j := range a.work {
				j.ex.DecodeWith(j.budget(), &j.dec)
				if j.mem != nil && j.mem.wasAborted() {
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

func (a *decodeAhead) Exchange(ex *dissect.Exchange) {
	j := &aheadJob{ex: ex, decoded: make(chan struct{})}
	j.size = ex.FrameBytes()
	j.mem = a.admit(j.size, &j.memv)
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

func (a *decodeAhead) Event(ev *dissect.Event) {
	j := &aheadJob{ev: ev}
	j.mem = a.admit(0, &j.memv)
	a.order <- j
}

// sync waits until next has seen everything emitted so far.
func (a *decodeAhead) sync() {
	j := &aheadJob{barrier: make(chan struct{})}
	j.mem = a.admit(0, &j.memv)
	a.order <- j
	<-j.barrier
}

func (a *decodeAhead) consume() {
	defer close(a.done)
	for j := range a.order {
		switch {
		case j.ex != nil:
			<-j.decoded
			if j.redo {
				a.waitHead(j.mem) // it is: the jobs before it are passed on
				j.mem.retry()
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
		a.release(j.size, j.mem)
	}
}

// close waits until next has seen everything and the workers have ended.
func (a *decodeAhead) close() {
	close(a.work)
	close(a.order)
	a.wg.Wait()
	<-a.done
}
