package main

import (
	"sync"

	"github.com/kwire/kwire/dissect"
)

// decodeAhead is a dissect.Sink for consumers that need every exchange
// decoded but print nothing per exchange (kwire stats): the Dissector
// hands exchanges over undecoded (dissect.Options.DeferDecode), workers
// decode them on every core, and one goroutine passes them and the events
// between them to next in emit order, then hands their trees and frame
// buffers back to the pools (next must copy what it keeps, as
// stats.Collector does). What is in flight is bounded as in parallelSink:
// parallelBudget frame bytes (one exchange always passes) and parallelJobs
// jobs.
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
	decoded chan struct{} // closed by the worker
}

func newDecodeAhead(next dissect.Sink, workers int) *decodeAhead {
	a := &decodeAhead{
		next:  next,
		work:  make(chan *aheadJob, parallelJobs),
		order: make(chan *aheadJob, parallelJobs),
		done:  make(chan struct{}),
	}
	for range workers {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			for j := range a.work {
				j.ex.Decode()
				j.ex.Facts() // computed here, on every core; resolved in emit order
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
	a.admit(j.size)
	a.order <- j
	a.work <- j
}

func (a *decodeAhead) Event(ev *dissect.Event) {
	a.admit(0)
	a.order <- &aheadJob{ev: ev}
}

// sync waits until next has seen everything emitted so far.
func (a *decodeAhead) sync() {
	a.admit(0)
	j := &aheadJob{barrier: make(chan struct{})}
	a.order <- j
	<-j.barrier
}

func (a *decodeAhead) consume() {
	defer close(a.done)
	for j := range a.order {
		switch {
		case j.ex != nil:
			<-j.decoded
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
		a.release(j.size)
	}
}

// close waits until next has seen everything and the workers have ended.
func (a *decodeAhead) close() {
	close(a.work)
	close(a.order)
	a.wg.Wait()
	<-a.done
}
