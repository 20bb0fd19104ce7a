package pipeline

import (
	"bufio"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/kwire/kwire/dissect"
)

// Writer is what a Consumer renders to: the output itself, or an Output.
type Writer interface {
	io.Writer
	io.ByteWriter
}

// Consumer is what an Ordered pipeline hands each exchange and event to,
// stage by stage (kwire read's sink for trees and JSON).
type Consumer interface {
	// Prepare runs in emit order once ex is decoded and does what depends
	// on the exchanges before it (topic IDs learnt, a filter): it returns
	// what Render needs and whether ex is shown.
	Prepare(ex *dissect.Exchange) (view any, show bool)
	// Render writes ex's output to w, on any goroutine: w is Out itself
	// for the oldest exchange in flight, else an Output.
	Render(w Writer, ex *dissect.Exchange, view any) error
	// Lines says the output of an exchange is one line built whole
	// (JSON), which AppendLine appends to b.
	Lines() bool
	AppendLine(b []byte, ex *dissect.Exchange, view any) []byte
	// Done runs in emit order once ex's output, if shown, is written; err
	// is the rendering's or the write's.
	Done(ex *dissect.Exchange, shown bool, err error)
	// Event takes an event, in emit order.
	Event(ev *dissect.Event)
	// Out is the output the pipeline writes to, in emit order.
	Out() *bufio.Writer
}

// Ordered is a dissect.Sink that decodes and renders exchanges on every
// core and writes them in emit order (kwire read's trees and JSON): the
// Dissector hands over exchanges undecoded (DeferDecode) and they go
// through four stages:
//
//  1. workers decode them (Exchange.Decode), in any order;
//  2. a sequencer, in emit order, does what depends on the exchanges
//     before (Consumer.Prepare: topic IDs learnt, the filter);
//  3. workers render them into buffers, in any order;
//  4. a writer, in emit order, writes them and the events between them
//     to the output (Consumer.Done, Consumer.Event).
//
// The output is byte for byte what the consumer writes alone. Exchanges
// in flight are bounded by their frame bytes (OrderedBytes), their number
// (OrderedJobs) and, with a memory bound, the memory decoding and
// rendering them takes (Flight): a job whose decode or rendering the
// memory refuses has that work thrown away and done again when it is the
// oldest in flight, by stage 2 (decoding) or 4 (rendering straight to the
// output, as the oldest job's rendering always goes).
type Ordered struct {
	k      Consumer
	decode chan *readJob // stage 1
	seq    chan *readJob // stage 2, emit order
	render chan *readJob // stage 3
	write  chan *readJob // stage 4, emit order
	wg     sync.WaitGroup
	done   chan struct{} // closed when the writer is finished
	free   chan *readJob // jobs written, for the next ones (newJob)

	// InlineBytes is the most frame bytes of an exchange done on the
	// caller's goroutine when nothing is in flight (set before the first
	// Exchange; NewOrdered sets InlineBytes, the const; negative: none).
	InlineBytes int64
	inlined     atomic.Int64 // exchanges done inline (Inlined)

	// Recycle says the consumer keeps nothing of an exchange once Done
	// returns but what its facts hold (set before the first Exchange):
	// the exchange, its frames, trees and facts are then reused for later
	// ones (dissect.Exchange.Recycle).
	Recycle bool

	Flight // jobs not yet written and their frame bytes
}

// Inlined returns how many exchanges were done on the caller's goroutine.
func (p *Ordered) Inlined() int64 { return p.inlined.Load() }

// Bounds of what is in flight: frame bytes (one exchange is always let
// in, however large; trees and rendered text are a few times their frame
// bytes) and jobs (exchanges and events; every channel holds that many, so
// no stage ever blocks on a send). 2 MiB lets the next exchange of 1 MB
// Produce requests be read and decoded while one is rendered; at 4 MiB
// the larger heap costs more collections (under kwire's soft memory
// limit) than the overlap saves. 16 jobs keep two cores busy; with 256,
// on a capture of small exchanges (many-250: 35,750 exchanges, most under
// 1 KB), -V, --json and stats took 40-50% more CPU time than with 16 and
// more than on one core: every job's trees, facts and text went cold
// between the stages, and the collector had more to mark.
const (
	OrderedBytes = 2 << 20
	OrderedJobs  = 16
)

// readJob is one exchange or event on its way to the output, or a
// barrier that sync waits for.
type readJob struct {
	job
	direct bool // rendered straight to the output, or (not yet) by stage 4
	wrote  bool // stage 3 wrote it to the output itself (it was the oldest)

	view    any // set by stage 2
	show    bool
	ready   chan struct{} // sent on once out and err are set (stage 3) or nothing is to be rendered
	out     Output
	line    []byte // the JSON line instead of out, from GetLine
	lineMem int64  // the memory reserved for it
	err     error
}

// NewOrdered returns the pipeline feeding k: workers goroutines decode
// and render, their memory bounded by mem bytes (0: not bounded). Close
// ends it.
func NewOrdered(k Consumer, workers int, mem int64) *Ordered {
	p := &Ordered{
		k:      k,
		decode: make(chan *readJob, OrderedJobs),
		seq:    make(chan *readJob, OrderedJobs),
		render: make(chan *readJob, OrderedJobs),
		write:  make(chan *readJob, OrderedJobs),
		done:   make(chan struct{}),
		free:   make(chan *readJob, OrderedJobs),

		InlineBytes: InlineBytes,
	}
	p.Jobs, p.Bytes = OrderedJobs, OrderedBytes
	p.SetMemory(mem)
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	go p.sequence()
	go p.writeOut()
	return p
}

// newJob returns a job from the free list, or a new one: a job is
// recycled once written (writeOut), with its channels (each signalled by
// one send and emptied by its one receive) and its output's list of
// chunks: on a capture of small exchanges a fresh job and two channels
// for each exchange and event were a tenth of -V's allocated bytes.
func (p *Ordered) newJob() *readJob {
	select {
	case j := <-p.free:
		return j
	default:
		return &readJob{job: job{decoded: make(chan struct{}, 1)}, ready: make(chan struct{}, 1)}
	}
}

// recycle puts j, written and released from the flight, on the free list.
func (p *Ordered) recycle(j *readJob) {
	*j = readJob{job: job{decoded: j.decoded}, ready: j.ready, out: Output{chunks: j.out.chunks[:0]}}
	select {
	case p.free <- j:
	default:
	}
}

// InlineBytes is the most frame bytes an exchange may have to be done on
// the caller's goroutine when nothing is in flight (Ordered.Exchange):
// decoding and rendering a small exchange costs about what handing it
// between four goroutines and two cores does. On many-1000 (41,000
// connections, 143,000 exchanges of a few hundred bytes) read -V took 57%
// more CPU time on two cores than on one for no shorter wall time; done
// inline, the second core still reads and reassembles the packets.
const InlineBytes = 8 << 10

// Exchange implements dissect.Sink: it waits for room in the flight. An
// exchange of at most InlineBytes frame bytes that arrives when nothing is
// in flight is decoded, rendered and written at once, on the caller's
// goroutine (the stages are idle: what they did for the exchanges before
// is done), as the head would be.
func (p *Ordered) Exchange(ex *dissect.Exchange) {
	j := p.newJob()
	j.ex = ex
	j.size = ex.FrameBytes()
	if j.size <= p.InlineBytes && p.admitIdle(j) {
		p.inlined.Add(1)
		p.inline(j)
		return
	}
	j.mem = p.Admit(j.size, &j.memv)
	j.out.SetMemory(j.mem)
	p.seq <- j
	p.decode <- j
}

// Event implements dissect.Sink; an event when nothing is in flight is
// passed on at once.
func (p *Ordered) Event(ev *dissect.Event) {
	j := p.newJob()
	j.ev = ev
	if p.InlineBytes >= 0 && p.admitIdle(j) {
		p.k.Event(ev)
		p.Release(0, j.mem)
		p.recycle(j)
		return
	}
	j.mem = p.Admit(0, &j.memv)
	p.seq <- j
}

// admitIdle admits j if nothing is in flight, and reports whether it did.
func (p *Ordered) admitIdle(j *readJob) bool {
	if !p.Idle() {
		return false
	}
	j.mem = p.Admit(j.size, &j.memv) // at once: it is the only job
	return true
}

// inline does the four stages of exchange job j, admitted alone, on the
// caller's goroutine, as the head: decode, Prepare, Render to the output,
// Done, and the releases writeOut does.
func (p *Ordered) inline(j *readJob) {
	j.decode()
	if j.redo {
		j.redecode(&p.Flight)
	}
	j.view, j.show = p.k.Prepare(j.ex)
	var err error
	if j.show {
		err = p.k.Render(p.k.Out(), j.ex, j.view)
	}
	p.k.Done(j.ex, j.show, err)
	j.ex.Done(p.Recycle)
	p.Release(j.size, j.mem)
	p.recycle(j)
}

// Sync waits until everything emitted so far is written.
func (p *Ordered) Sync() {
	j := &readJob{job: job{barrier: make(chan struct{})}}
	j.mem = p.Admit(0, &j.memv)
	p.seq <- j
	<-j.barrier
}

// work decodes and renders exchanges (stages 1 and 3).
func (p *Ordered) work() {
	defer p.wg.Done()
	decode, renders := p.decode, p.render
	for decode != nil || renders != nil {
		select {
		case j, ok := <-decode:
			if !ok {
				decode = nil
				continue
			}
			j.decode()
			j.decoded <- struct{}{}
		case j, ok := <-renders:
			if !ok {
				renders = nil
				continue
			}
			p.renderJob(j)
			j.ready <- struct{}{}
		}
	}
}

// renderJob is stage 3 for one job. The oldest job in flight (the head)
// is written straight to the output: the writer waits for it and has
// written everything before it. Another job's rendering is kept for the
// writer, in chunks reserved from the flight's memory, or left to the
// writer to do when it is the head if the memory refused it.
func (p *Ordered) renderJob(j *readJob) {
	if j.mem != nil && j.mem.Head() {
		j.err, j.wrote = p.k.Render(p.k.Out(), j.ex, j.view), true
		return
	}
	if p.k.Lines() {
		// The line is written as built: no copy into chunks. It is
		// built whole (an object's keys are checked against each other),
		// so its memory is reserved first, guessed from the trees' (a
		// record's fields take more memory than their JSON, but for
		// values full of escapes), then set to what it took.
		var guess int64
		if j.mem != nil {
			if guess = j.mem.Held() + LineGuess; !j.mem.Reserve(guess) {
				j.direct = true
				return
			}
		}
		j.line = p.k.AppendLine(GetLine(LineHint(j.ex)), j.ex, j.view)
		if j.mem != nil {
			j.lineMem = guess
			if d := int64(cap(j.line)) - guess; j.mem.Reserve(d) {
				j.lineMem += d // a refusal leaves the guess: the line is made
			}
		}
		return
	}
	j.err = p.k.Render(&j.out, j.ex, j.view)
	if errors.Is(j.err, ErrOverBudget) {
		j.out.Discard()
		j.err, j.direct = nil, true
	}
}

// LineHint is the size a JSON line of ex is expected to take: three
// quarters of what its trees hold (frames and inflated records), which the
// lines of large Produce and Fetch exchanges come to within a quarter
// (their records' JSON is about the size of the records; the compressed
// bytes are not shown); small exchanges' lines are several times their
// frames, and grow from the smallest class.
func LineHint(ex *dissect.Exchange) int64 {
	var n int64
	for _, f := range [...]*dissect.Frame{ex.Request, ex.Response} {
		if f != nil {
			n += int64(f.Tree.KeptBytes())
		}
	}
	return n / 4 * 3
}

// sequence is stage 2.
func (p *Ordered) sequence() {
	for j := range p.seq {
		if j.ex != nil {
			<-j.decoded
			if j.redo {
				j.redecode(&p.Flight)
			}
			j.view, j.show = p.k.Prepare(j.ex)
			if j.show {
				p.render <- j
			} else {
				j.ready <- struct{}{}
			}
		}
		p.write <- j
	}
	close(p.render)
	close(p.write)
}

// writeOut is stage 4: in emit order, what the consumer does with each
// exchange and event, with the rendering already done.
func (p *Ordered) writeOut() {
	defer close(p.done)
	k, w := p.k, p.k.Out()
	for j := range p.write {
		switch {
		case j.barrier != nil:
			close(j.barrier)
		case j.ev != nil:
			k.Event(j.ev)
		default:
			<-j.ready
			var err error
			if j.show {
				switch {
				case j.wrote: // stage 3 wrote it, as the head
				case j.direct: // the memory refused it a buffer: now it is the head
					if j.mem != nil {
						j.mem.Retry()
					}
					err = k.Render(w, j.ex, j.view)
				case j.line != nil:
					if len(j.line) >= w.Size() {
						err = w.Flush() // then the line goes out directly
					}
					if _, werr := w.Write(j.line); err == nil {
						err = werr
					}
					if j.mem != nil {
						j.mem.Reserve(-j.lineMem)
					}
					PutLine(j.line)
					j.line = nil
				default:
					err = j.out.WriteTo(w)
				}
				if j.err != nil {
					err = j.err
				}
			}
			k.Done(j.ex, j.show, err)
			// Nothing reads the exchange once written and counted.
			j.ex.Done(p.Recycle)
		}
		p.Release(j.size, j.mem)
		if j.barrier == nil {
			p.recycle(j)
		}
	}
}

// Close waits for everything emitted to be written.
func (p *Ordered) Close() {
	close(p.decode)
	close(p.seq)
	p.wg.Wait()
	<-p.done
}
