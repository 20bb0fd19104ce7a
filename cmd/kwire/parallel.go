package main

import (
	"bufio"
	"bytes"
	"sync"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/render"
)

// parallelSink is the dissect.Sink of kwire read for trees and JSON: the
// Dissector hands over exchanges undecoded (DeferDecode) and they go
// through four stages:
//
//  1. workers decode them (Exchange.Decode), in any order;
//  2. a sequencer, in emit order, does what depends on the exchanges
//     before (readSink.prepare: topic IDs learnt, the filter);
//  3. workers render them into buffers, in any order;
//  4. a writer, in emit order, counts them and writes them and the events
//     between them to the output.
//
// The output is byte for byte what readSink alone writes. Exchanges in
// flight are bounded by their frame bytes (parallelBudget) and their
// number (parallelJobs), so memory stays bounded.
type parallelSink struct {
	k      *readSink
	decode chan *readJob // stage 1
	seq    chan *readJob // stage 2, emit order
	render chan *readJob // stage 3
	write  chan *readJob // stage 4, emit order
	wg     sync.WaitGroup
	done   chan struct{} // closed when the writer is finished

	flight // jobs not yet written and their frame bytes
}

// Bounds of what is in flight: frame bytes (one exchange is always let
// in, however large; trees and rendered text are a few times their frame
// bytes) and jobs (exchanges and events; every channel holds that many, so
// no stage ever blocks on a send). 2 MiB lets the next exchange of 1 MB
// Produce requests be read and decoded while one is rendered; at 4 MiB
// the larger heap costs more collections (under kwire's soft memory
// limit) than the overlap saves.
const (
	parallelBudget = 2 << 20
	parallelJobs   = 256
)

// readJob is one exchange or event on its way to the output, or a
// barrier that sync waits for.
type readJob struct {
	ex      *dissect.Exchange
	ev      *dissect.Event
	barrier chan struct{}
	size    int64

	decoded chan struct{} // closed by stage 1
	view    exchangeView  // set by stage 2
	show    bool
	ready   chan struct{} // closed when out and err are set (stage 3) or nothing is to be rendered
	out     chunkBuf
	line    []byte // the JSON line instead of out, from getLine
	err     error
}

func newParallelSink(k *readSink, workers int) *parallelSink {
	p := &parallelSink{
		k:      k,
		decode: make(chan *readJob, parallelJobs),
		seq:    make(chan *readJob, parallelJobs),
		render: make(chan *readJob, parallelJobs),
		write:  make(chan *readJob, parallelJobs),
		done:   make(chan struct{}),
	}
	for range workers {
		p.wg.Add(1)
		go p.work()
	}
	go p.sequence()
	go p.writeOut()
	return p
}

func (p *parallelSink) Exchange(ex *dissect.Exchange) {
	j := &readJob{ex: ex, decoded: make(chan struct{}), ready: make(chan struct{})}
	j.size = ex.FrameBytes()
	p.admit(j.size)
	p.seq <- j
	p.decode <- j
}

func (p *parallelSink) Event(ev *dissect.Event) {
	p.admit(0)
	p.seq <- &readJob{ev: ev}
}

// sync waits until everything emitted so far is written.
func (p *parallelSink) sync() {
	p.admit(0)
	j := &readJob{barrier: make(chan struct{})}
	p.seq <- j
	<-j.barrier
}

// chunkBuf is a worker's output: fixed-size chunks from a free list, so
// that the text of a large exchange (megabytes for a Produce of a
// thousand records) costs neither the doublings of one growing buffer nor
// fresh memory each time.
type chunkBuf struct {
	chunks [][]byte // full chunks
	cur    []byte
}

// Output chunks: their size (larger than the output's 64 KiB buffer, so
// that bufio writes a full chunk directly rather than copying it), and how
// many the free list keeps between exchanges (4 MiB); a free list rather
// than a sync.Pool, which every garbage collection empties.
const (
	chunkSize = 128 << 10
	freeKeep  = 32
)

var freeChunks = make(chan []byte, freeKeep)

func getChunk() []byte {
	select {
	case c := <-freeChunks:
		return c
	default:
		return make([]byte, 0, chunkSize)
	}
}

func putChunk(c []byte) {
	select {
	case freeChunks <- c[:0]:
	default:
	}
}

// JSON lines: the free list keeps lineKeep of them, each up to lineMax
// bytes (the line of a Produce of a thousand 1 KB records is about 600 KB).
const (
	lineKeep = 4
	lineMax  = 4 << 20
)

var freeLines = make(chan []byte, lineKeep)

func getLine() []byte {
	select {
	case b := <-freeLines:
		return b
	default:
		return make([]byte, 0, chunkSize)
	}
}

func putLine(b []byte) {
	if cap(b) > lineMax {
		return
	}
	select {
	case freeLines <- b[:0]:
	default:
	}
}

func (c *chunkBuf) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if len(c.cur) == cap(c.cur) {
			c.next()
		}
		k := copy(c.cur[len(c.cur):cap(c.cur)], p)
		c.cur = c.cur[:len(c.cur)+k]
		p = p[k:]
	}
	return n, nil
}

// writePrefixed writes p with prefix before every line that is not
// empty, as indentWriter does; bol says whether p starts a line, and the
// result whether the next write does.
func (c *chunkBuf) writePrefixed(p []byte, prefix string, bol bool) bool {
	for len(p) > 0 {
		if bol && p[0] != '\n' {
			c.writeString(prefix)
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			c.Write(p)
			return false
		}
		c.Write(p[:i+1])
		bol = true
		p = p[i+1:]
	}
	return bol
}

func (c *chunkBuf) writeString(s string) {
	if cap(c.cur)-len(c.cur) < len(s) {
		c.Write([]byte(s))
		return
	}
	c.cur = append(c.cur, s...)
}

func (c *chunkBuf) WriteByte(b byte) error {
	if len(c.cur) == cap(c.cur) {
		c.next()
	}
	c.cur = append(c.cur, b)
	return nil
}

func (c *chunkBuf) next() {
	if c.cur != nil {
		c.chunks = append(c.chunks, c.cur)
	}
	c.cur = getChunk()
}

// writeTo writes the chunks to w and hands them back to the free list.
// Full chunks go to w's writer directly, not copied through its buffer.
func (c *chunkBuf) writeTo(w *bufio.Writer) error {
	var err error
	if len(c.chunks) > 0 {
		err = w.Flush()
	}
	for _, b := range append(c.chunks, c.cur) {
		if err == nil && len(b) > 0 {
			_, err = w.Write(b)
		}
		if b != nil {
			putChunk(b)
		}
	}
	*c = chunkBuf{}
	return err
}

// work decodes and renders exchanges (stages 1 and 3).
func (p *parallelSink) work() {
	defer p.wg.Done()
	decode, renders := p.decode, p.render
	for decode != nil || renders != nil {
		select {
		case j, ok := <-decode:
			if !ok {
				decode = nil
				continue
			}
			j.ex.Decode()
			j.ex.Facts() // computed here, on every core; resolved in emit order
			close(j.decoded)
		case j, ok := <-renders:
			if !ok {
				renders = nil
				continue
			}
			if p.k.o.JSON {
				// The line is written as built: no copy into chunks.
				j.line = render.AppendExchangeJSON(getLine(), j.ex, j.view.ropts)
			} else {
				j.err = p.k.render(&j.out, j.ex, j.view)
			}
			close(j.ready)
		}
	}
}

// sequence is stage 2.
func (p *parallelSink) sequence() {
	for j := range p.seq {
		if j.ex != nil {
			<-j.decoded
			j.view, j.show = p.k.prepare(j.ex, true)
			if j.show {
				p.render <- j
			} else {
				close(j.ready)
			}
		}
		p.write <- j
	}
	close(p.render)
	close(p.write)
}

// writeOut is stage 4: in emit order, what readSink does with each
// exchange and event, with the rendering already done.
func (p *parallelSink) writeOut() {
	defer close(p.done)
	k := p.k
	for j := range p.write {
		switch {
		case j.barrier != nil:
			close(j.barrier)
		case j.ev != nil:
			k.Event(j.ev)
		default:
			<-j.ready
			k.counts.Exchange(j.ex)
			if k.col != nil {
				k.col.Exchange(j.ex)
			}
			if j.show {
				k.shown++
				var err error
				if j.line != nil {
					if len(j.line) >= k.w.Size() {
						err = k.w.Flush() // then the line goes out directly
					}
					_, werr := k.w.Write(j.line)
					err = firstError(err, werr)
					putLine(j.line)
					j.line = nil
				} else {
					err = j.out.writeTo(k.w)
				}
				k.check(firstError(j.err, err))
				k.maybeFlush()
			}
			// Nothing reads the exchange once written and counted: its
			// trees' nodes and decompressed bytes go back to protocol's
			// pools, its frame buffers to the dissector's.
			for _, f := range [...]*dissect.Frame{j.ex.Request, j.ex.Response} {
				if f != nil {
					f.Tree.Release()
				}
			}
			j.ex.Release()
		}
		p.release(j.size)
	}
}

// close waits for everything emitted to be written.
func (p *parallelSink) close() {
	close(p.decode)
	close(p.seq)
	p.wg.Wait()
	<-p.done
}
