package dissect

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"sync"

	"container/heap"

	"github.com/kwire/kwire/internal/poison"
	"github.com/kwire/kwire/protocol"
)

// Spilling. Requests awaiting their responses are the only frames the
// Dissector holds for long: a producer pipelining 1 MiB Produce requests
// to a slow broker keeps dozens of them pending, a client pipelining
// small requests thousands. What they take in memory is counted: their
// frames' bytes (spiller.held) and, for each, pendingCost bytes of
// bookkeeping (spiller.meta: the Exchange, the Frame, the queue's index).
// Past Options.PendingMemory each new request frame of at least spillMin
// bytes (and a large one past a quarter of it: spillLarge) is written to a
// temporary file and its buffer let go; the frame is
// read back into memory when its exchange is emitted (response, close,
// eviction, end of capture), before its lazy decode, so nothing the sink
// sees changes. When what cannot go to the file (bookkeeping, small
// frames, requests that can carry secrets) still exceeds the bound, the
// connection's oldest pending requests are given up (pair.go register):
// the bound holds, and the loss is counted (Problems.Evicted).
//
// The file is cut into spillBlock-byte blocks with a free list: a frame
// takes the blocks it needs and gives them back when read, so the file
// grows to what is spilled at once, not to what the capture holds. It is
// created in Options.SpillDir (os.TempDir() by default) on the first
// spill, removed from its directory at once where the OS allows it (else
// at Finish) and closed at Finish. When it cannot be created or written,
// frames stay in memory and the first exchange concerned carries a note
// saying so; a frame that cannot be read back keeps its first bytes (its
// header) and is shown as incomplete with a note.

// DefaultPendingMemory is the default of Options.PendingMemory: 16 MiB.
const DefaultPendingMemory = 16 << 20

// spillBlock is the unit of space in the spill file: a frame of spillMin
// bytes takes at most 8 times its size on disk; the free list costs 4
// bytes of memory per block of the file.
const spillBlock = 4 << 10

// spillMin is the smallest frame spilled: smaller ones stay in memory
// (counted in spiller.held), where they cost less than their bookkeeping.
const spillMin = 512

// Large frames (spillLarge bytes or more: Produce requests of big
// batches) stay in memory only while those held take at most a
// largeShare-th of the budget; past it they go to the file even when the
// budget has room. The budget is a ceiling, not a target: a few large
// requests awaiting their responses cost the collector as much as
// thousands of small ones, and are read back with one pread each, while
// the room left keeps small requests and the bookkeeping of many
// connections (which cannot go to the file) from being given up. On a
// capture of producers pipelining 1 MiB requests this took 7 MiB off
// read --json's peak RSS and 17% off its CPU time (docs/performance.md).
const (
	spillLarge = 64 << 10
	largeShare = 4
)

// pendingFloor is how many requests a connection may have pending before
// any is given up for the bound on pending memory, while few connections
// hold requests: a client's usual pipeline
// (max.in.flight.requests.per.connection is 5 by default in the Java
// client) pairs whatever the bound. The floors of all connections share
// floorShare (or the bound, when larger): with many connections holding
// requests each keeps fewer, down to one (floor), so that the memory the
// bound does not cover is at most pendingCost per connection holding a
// request, not 24 KiB.
const (
	pendingFloor = 32
	floorShare   = 64 * pendingFloor * pendingCost // 1.5 MiB: 64 connections at the full floor
)

// overPartial reports whether the splitters and undecided connections hold
// more than Options.PartialMemory.
func (d *Dissector) overPartial() bool { return d.maxPartial > 0 && d.partial > d.maxPartial }

// busyHeap is a max-heap of connections by pending requests
// (container/heap); conn.busyAt is each one's index, -1 when out.
type busyHeap []*conn

func (h busyHeap) Len() int           { return len(h) }
func (h busyHeap) Less(i, j int) bool { return h[i].pending.len() > h[j].pending.len() }
func (h busyHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].busyAt, h[j].busyAt = i, j
}
func (h *busyHeap) Push(x any) {
	c := x.(*conn)
	c.busyAt = len(*h)
	*h = append(*h, c)
}
func (h *busyHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	c.busyAt = -1
	return c
}

// update puts c in its place after its pending queue changed length.
func (h *busyHeap) update(c *conn) {
	switch n := c.pending.len(); {
	case n == 0 && c.busyAt >= 0:
		heap.Remove(h, c.busyAt)
	case n > 0 && c.busyAt < 0:
		heap.Push(h, c)
	case c.busyAt >= 0:
		heap.Fix(h, c.busyAt)
	}
}

// most is the connection holding the most pending requests; nil when
// none holds any.
func (h busyHeap) most() *conn {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}

// floor is how many pending requests each connection keeps however
// tight the bound: pendingFloor, fewer when the floors of the
// connections holding requests would need more than floorShare (or the
// bound), and at least one, the newest.
func (d *Dissector) floor() int {
	share := max(floorShare, d.spill.budget)
	n := int64(max(len(d.busy), 1))
	return int(min(max(share/(pendingCost*n), 1), pendingFloor))
}

// pendingCost is the memory, in bytes, that one request awaiting its
// response takes besides its frame's bytes: the Exchange and Frame structs
// with its notes and client id, its slot and index entry in the
// connection's queue, and a spilled frame's record (spilled, its runs, its
// first spillHead bytes), but for its client id, counted on top.
// TestPendingCost measures it (about 550 bytes, 700 with a spilled frame);
// this is an upper bound, so that the bound on pending memory holds.
const pendingCost = 768

// PendingCost is what one request awaiting its response takes besides its
// frame's bytes, in bytes (Options.PendingMemory counts it).
const PendingCost = pendingCost

// spillHead is how many of a spilled frame's first bytes stay in memory,
// for the note when reading the rest back fails.
const spillHead = 64

// Reusable frame buffers: the buffers of spilled frames, and those of
// exchanges a sink releases (Exchange.Release), are handed back to the
// splitters for the next large frames instead of allocating (and faulting
// in) fresh memory for each. A frame takes the smallest buffer that fits
// it (at most twice its size), so that larger buffers stay for larger
// frames. At most poolMax buffers are kept, of poolBytes in total, or
// poolBytesHeaders when record batches are decoded by their headers
// only (Decoder.BatchHeadersOnly, read's one-line mode): there an
// exchange is small once decoded and its buffers come back as soon as its
// line is written, so more of them turn over without raising the peak
// (netns-2.1, Produce requests and Fetch responses of 0.4-2 MiB: 207 of
// 234 large frames reuse a buffer with 16 MiB, 178 with 8 MiB; read
// costs 0.87x the CPU with 16 MiB, 0.96x with 8 MiB). When records are
// decoded (-V, --json) their trees hold memory while the buffers wait,
// and a 12 or 16 MiB pool raised the peak RSS by 1-5 MiB for no less
// CPU.
const (
	poolMax          = 32
	poolBytes        = 8 << 20
	poolBytesHeaders = 16 << 20
	poolMin          = 32 << 10 // smaller frames are not worth pooling
)

// Small frames (under poolMin: most of a broker's, a few hundred bytes
// each) are pooled too, in size classes: 16, 32, 48 and 64 bytes, then
// four to a power of two (80, 96, 112, 128, 160, ... 32768), so that a
// frame's buffer holds at most a quarter more than the frame (or 15
// bytes); what is pooled of them is at most smallPoolBytes. A frame that
// takes a small buffer when none is pooled gets a new one of its class's
// size, to be pooled in that class when released. On many small
// exchanges with read's one-line mode (each exchange's buffers back as
// soon as its line is written) this spares an allocation per frame, a
// sixth of what read allocated on many-1000.
const (
	smallPoolBytes = 1 << 20
	smallMin       = 16 // the smallest class
	smallClasses   = 4 + 4*(15-6)
)

// smallClass returns the smallest small class whose buffers hold n
// bytes (0 < n < poolMin) and their size: 16·k up to 64, then for n in
// (2^(e-1), 2^e] the four sizes 2^(e-1) + k·2^(e-3), k = 1..4.
func smallClass(n int) (class, size int) {
	if n <= 64 {
		k := max(n+15, smallMin) / 16
		return k - 1, 16 * k
	}
	e := bits.Len(uint(n - 1)) // 2^(e-1) < n <= 2^e
	step := 1 << (e - 3)
	k := (n - 1<<(e-1) + step - 1) / step
	return 4 + 4*(e-7) + k - 1, 1<<(e-1) + k*step
}

// framePool holds reusable frame buffers. Sinks may release exchanges on
// other goroutines than the Dissector's.
type framePool struct {
	mu    sync.Mutex
	bufs  [][]byte
	bytes int
	max   int // bytes the pool may hold: poolBytes or poolBytesHeaders

	small      [smallClasses][][]byte // small buffers by class (smallClass)
	smallBytes int                    // their capacity in all
}

// spillRun is n blocks of the spill file from block start on.
type spillRun struct{ start, n int32 }

// spilled says where a spilled frame's bytes are.
type spilled struct {
	n    int        // the frame's size
	runs []spillRun // its blocks, in order
	head []byte     // its first spillHead bytes
}

// spiller holds the pending request frames' accounting and the spill file
// of one Dissector.
type spiller struct {
	budget int64 // Options.PendingMemory; < 0: no bound
	dir    string
	held   int64 // bytes of pending request frames in memory
	large  int64 // of held, the bytes of frames of spillLarge bytes or more
	meta   int64 // pendingCost for each pending request
	// spillable lists the pending frames held in memory that may go to
	// the file (spillMin bytes or more, none that can carry secrets), oldest
	// first: relieve spills the newest when the bookkeeping of later
	// requests needs their room.
	spillable frameList

	f      *os.File
	name   string  // the file's name while it could not be removed
	blocks int32   // blocks in the file
	free   []int32 // free blocks, the next to use last
	err    error   // the file could not be created or written, and frames stayed in memory past the bound
	// fileErr: the file could not be created or written (the first
	// error); no frame goes to it any more.
	fileErr error
	noted   bool // err was noted on an exchange

	frames, bytes int64 // spilled so far (tests)
	peak          int32 // most blocks in use at once (tests)
	used          int32

	pool *framePool
}

// hold counts a pending request frame, its bookkeeping and its client id
// of clientID bytes, and spills it when they exceed the budget. It
// returns a note when the frame stays in memory because the spill file
// failed (once per Dissector).
func (d *Dissector) hold(fr *Frame, key int16, clientID int) string {
	sp := &d.spill
	n := int64(len(fr.Bytes))
	fr.meta = pendingCost + int32(clientID)
	sp.meta += int64(fr.meta)
	// Requests that can carry secrets (SASL tokens, passwords in configs,
	// delegation-token HMACs: protocol.KeyCarriesSecrets) never go to
	// the file.
	canSpill := !protocol.KeyCarriesSecrets(key, false) && n >= spillMin
	fits := sp.held+sp.meta+n <= sp.budget && (n < spillLarge || sp.large+n <= sp.budget/largeShare)
	if sp.budget < 0 || fits || !canSpill {
		sp.keep(fr, n)
		if canSpill && sp.budget >= 0 {
			sp.spillable.push(fr)
		}
		return ""
	}
	if sp.err == nil && sp.fileErr == nil {
		err := sp.write(fr)
		if err == nil {
			return ""
		}
		sp.fileErr = err
	}
	// The file failed. Within the bound (a large frame past its share
	// only), the frame stays in memory with nothing to say; past it, the
	// bound is passed, which the first exchange concerned and the run's
	// warning (Summary.SpillError) say.
	sp.keep(fr, n)
	if sp.held+sp.meta <= sp.budget {
		return ""
	}
	sp.err = sp.fileErr
	if sp.noted {
		return ""
	}
	sp.noted = true
	unit := "bytes"
	if sp.budget == 1 {
		unit = "byte"
	}
	return fmt.Sprintf("request kept in memory past the bound on pending requests (%d %s): the spill file failed: %v", sp.budget, unit, sp.err)
}

// relieve spills held frames, newest first (they are answered last), while
// the requests awaiting responses take more memory than the budget.
func (sp *spiller) relieve() {
	for sp.over() {
		fr := sp.spillable.popNewest()
		if fr == nil {
			return
		}
		n := int64(len(fr.Bytes))
		if sp.fileErr != nil {
			sp.err = sp.fileErr // past the bound: over is false from now on
			sp.spillable.push(fr)
			return
		}
		if err := sp.write(fr); err != nil {
			sp.fileErr = err
			sp.err = err // over is false from now on
			sp.spillable.push(fr)
			return
		}
		sp.unkeep(fr, n)
	}
}

// keep counts fr's n bytes as held in memory.
func (sp *spiller) keep(fr *Frame, n int64) {
	fr.held = true
	sp.held += n
	if n >= spillLarge {
		sp.large += n
	}
}

// unkeep stops counting fr's n bytes as held in memory.
func (sp *spiller) unkeep(fr *Frame, n int64) {
	fr.held = false
	sp.held -= n
	if n >= spillLarge {
		sp.large -= n
	}
}

// frameList is a doubly linked list of frames through Frame.prev and
// Frame.next: removing a frame when its exchange is emitted costs O(1).
type frameList struct{ head, tail *Frame }

func (l *frameList) push(f *Frame) {
	f.prev, f.next, f.listed = l.tail, nil, true
	if l.tail != nil {
		l.tail.next = f
	} else {
		l.head = f
	}
	l.tail = f
}

func (l *frameList) remove(f *Frame) {
	if !f.listed {
		return
	}
	if f.prev != nil {
		f.prev.next = f.next
	} else {
		l.head = f.next
	}
	if f.next != nil {
		f.next.prev = f.prev
	} else {
		l.tail = f.prev
	}
	f.prev, f.next, f.listed = nil, nil, false
}

func (l *frameList) popNewest() *Frame {
	f := l.tail
	if f != nil {
		l.remove(f)
	}
	return f
}

// over reports whether the requests awaiting responses take more memory
// than the budget allows, with what could be spilled spilled. When the
// spill file failed, frames are kept in memory past the bound (with a
// warning, Summary.SpillError) rather than given up: it is never over.
func (sp *spiller) over() bool {
	return sp.budget >= 0 && sp.err == nil && sp.held+sp.meta > sp.budget
}

// evictNote says why a pending request was given up.
func (sp *spiller) evictNote() string {
	return fmt.Sprintf("given up unanswered: the requests awaiting responses needed more than the %s of memory allowed for them (each takes about %d bytes besides what of its frame stays in memory)",
		protocol.FormatSize(sp.budget), pendingCost)
}

// write spills fr's bytes to the file and lets its buffer go.
func (sp *spiller) write(fr *Frame) error {
	if sp.f == nil {
		if err := sp.open(); err != nil {
			return err
		}
	}
	b := fr.Bytes
	k := int32((len(b) + spillBlock - 1) / spillBlock)
	runs := sp.alloc(k)
	off := 0
	for _, r := range runs {
		end := min(off+int(r.n)*spillBlock, len(b))
		if _, err := sp.f.WriteAt(b[off:end], int64(r.start)*spillBlock); err != nil {
			sp.release(runs)
			return fmt.Errorf("writing %s: %w", sp.f.Name(), err)
		}
		off = end
	}
	fr.spill = &spilled{n: len(b), runs: runs, head: append([]byte(nil), b[:spillHead]...)}
	fr.Bytes = nil
	sp.frames++
	sp.bytes += int64(len(b))
	sp.pool.put(b)
	return nil
}

func (sp *spiller) open() error {
	f, err := os.CreateTemp(sp.dir, "kwire-pending-*")
	if err != nil {
		return err
	}
	sp.f = f
	if os.Remove(f.Name()) != nil {
		sp.name = f.Name() // removed by close
	}
	return nil
}

// alloc takes k blocks, free ones first (in the order they were freed, so
// that a frame's blocks tend to be contiguous), and returns them as runs.
func (sp *spiller) alloc(k int32) []spillRun {
	var runs []spillRun
	add := func(b int32) {
		if n := len(runs); n > 0 && runs[n-1].start+runs[n-1].n == b {
			runs[n-1].n++
			return
		}
		runs = append(runs, spillRun{b, 1})
	}
	for ; k > 0 && len(sp.free) > 0; k-- {
		b := sp.free[len(sp.free)-1]
		sp.free = sp.free[:len(sp.free)-1]
		add(b)
		sp.used++
	}
	if k > 0 {
		if n := len(runs); n > 0 && runs[n-1].start+runs[n-1].n == sp.blocks {
			runs[n-1].n += k
		} else {
			runs = append(runs, spillRun{sp.blocks, k})
		}
		sp.blocks += k
		sp.used += k
	}
	sp.peak = max(sp.peak, sp.used)
	return runs
}

// release gives blocks back; the first block of the first run is the next
// one alloc takes.
func (sp *spiller) release(runs []spillRun) {
	for i := len(runs) - 1; i >= 0; i-- {
		r := runs[i]
		for b := r.start + r.n - 1; b >= r.start; b-- {
			sp.free = append(sp.free, b)
		}
		sp.used -= r.n
	}
}

// unhold runs when fr's exchange is emitted: it stops counting fr, and
// reads a spilled frame back. A frame that cannot be read back keeps its
// first bytes, is not decoded, and its exchange says why.
func (d *Dissector) unhold(ex *Exchange, fr *Frame) {
	sp := &d.spill
	sp.meta -= int64(fr.meta)
	fr.meta = 0
	sp.spillable.remove(fr)
	if fr.held {
		sp.unkeep(fr, int64(len(fr.Bytes)))
		return
	}
	s := fr.spill
	if s == nil {
		return
	}
	fr.spill = nil
	b := sp.pool.get(s.n)
	off := 0
	var err error
	for _, r := range s.runs {
		end := min(off+int(r.n)*spillBlock, s.n)
		if _, err = sp.f.ReadAt(b[off:end], int64(r.start)*spillBlock); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			break
		}
		off = end
	}
	sp.release(s.runs)
	if err == nil {
		fr.Bytes = b
		return
	}
	fr.Bytes = s.head
	fr.lazy = lazyRequest{}
	ex.Notes = append(ex.Notes, fmt.Sprintf("request frame incomplete: reading it back from the spill file failed (%v): %d of %d bytes kept", err, len(s.head), s.n))
}

// get returns a buffer of n bytes, from the pool when one fits.
func (p *framePool) get(n int) []byte {
	if b := p.take(n); b != nil {
		return b[:n]
	}
	return make([]byte, n)
}

// take returns the smallest pooled buffer (length 0) whose capacity is at
// least n and at most twice n, or nil; for a small frame (n < poolMin), a
// buffer of n's class, pooled or new.
func (p *framePool) take(n int) []byte {
	if n < poolMin {
		return p.takeSmall(n)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	best := -1
	for i, b := range p.bufs {
		if c := cap(b); c >= n && c <= 2*n && (best < 0 || c < cap(p.bufs[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	b := p.bufs[best]
	last := len(p.bufs) - 1
	p.bufs[best] = p.bufs[last]
	p.bufs[last] = nil
	p.bufs = p.bufs[:last]
	p.bytes -= cap(b)
	return b[:0]
}

// takeSmall returns a buffer of length 0 of n's small class.
func (p *framePool) takeSmall(n int) []byte {
	class, size := smallClass(n)
	p.mu.Lock()
	if l := p.small[class]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		p.small[class] = l[:len(l)-1]
		p.smallBytes -= cap(b)
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return make([]byte, 0, size)
}

// put offers a buffer nothing else refers to for reuse.
func (p *framePool) put(b []byte) {
	if poison.Released {
		poison.Fill(b) // a reader of a released frame sees the poison
		return
	}
	c := cap(b)
	if c < poolMin {
		p.putSmall(b)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bufs) >= poolMax || p.bytes+c > p.max {
		return
	}
	p.bufs = append(p.bufs, b[:0])
	p.bytes += c
}

// Release hands the buffers of e's frames back to the Dissector that made
// them, to hold the next frames, for sinks that are done with e: after it
// e.Request and e.Response have no Bytes and no Tree (trees point into the
// bytes), and nothing may refer to either any more (strings and values
// copied out of a tree are fine). A sink that never calls it loses
// nothing but the reuse. Release may be called on any goroutine; calling
// it twice does nothing more.
func (e *Exchange) Release() {
	for _, f := range [...]*Frame{e.Request, e.Response} {
		if f != nil && f.pool != nil {
			f.pool.put(f.Bytes)
			f.Bytes, f.Tree, f.pool = nil, nil, nil
		}
	}
}

// close closes (and if need be removes) the spill file.
func (sp *spiller) close() {
	if sp.f != nil {
		sp.f.Close()
		if sp.name != "" {
			os.Remove(sp.name)
		}
		sp.f, sp.name = nil, ""
	}
	sp.free, sp.blocks, sp.used = nil, 0, 0
}

// putSmall pools b, a small buffer, in the largest class its capacity
// serves, while the small buffers pooled stay within smallPoolBytes.
func (p *framePool) putSmall(b []byte) {
	c := cap(b)
	if c < smallMin {
		return
	}
	class, size := smallClass(c)
	if size > c {
		class-- // c is between two sizes: it serves the lower one
	}
	p.mu.Lock()
	if p.smallBytes+c <= smallPoolBytes {
		p.small[class] = append(p.small[class], b[:0])
		p.smallBytes += c
	}
	p.mu.Unlock()
}
