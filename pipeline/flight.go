package pipeline

import (
	"sync"
	"sync/atomic"
)

// Flight bounds what a pipeline of exchanges holds at once:
//
//   - jobs and their frame bytes, at admission: at most Jobs jobs and
//     Bytes frame bytes (one job always enters, however large, so
//     that a frame above the budget cannot stall the pipeline; the frames
//     exist already, this only keeps the Dissector from reading ahead);
//   - memory: what decoding and rendering the exchanges takes (kept
//     decompressed bytes, decompressor state, trees, rendered output), at
//     most mem bytes in all (--max-decode-memory), reserved by each job as
//     it goes (JobMem, a protocol.Budget).
//
// Jobs leave in the order they entered (the writer releases them); the
// first one not yet released is the head. The head may always take
// memory: it is bounded by the decoder's own cap on each of its frames
// (protocol.Decoder.MaxMemory, a quarter of mem) and renders straight to
// the output, so it takes at most half of mem. The other jobs share the
// rest; one that asks for more than is left is refused, and its work (a
// decode, a rendering) is thrown away and done again once it is the head
// (JobMem.Aborted): what a job produces never depends on what else was in
// flight, and the head always makes progress.
//
// Jobs and Bytes are set before the first Admit (0: DefaultJobs and
// DefaultBytes); with no SetMemory, only they bound the flight.
type Flight struct {
	Jobs  int   // jobs admitted at once
	Bytes int64 // frame bytes admitted at once (one job always enters)

	mu    sync.Mutex
	cond  sync.Cond
	bytes int64 // frame bytes of the jobs admitted and not released
	jobs  int   // jobs admitted and not released

	mem   int64     // memory for all jobs; 0: not bounded
	share int64     // what the jobs behind the head may hold together (mem - headMax)
	used  int64     // memory held by the jobs behind the head
	queue []*JobMem // jobs admitted and not released, head first (with mem)
}

// Defaults of Flight.Jobs and Flight.Bytes.
const (
	DefaultJobs  = 256
	DefaultBytes = 2 << 20
)

// headShare is the part of the memory bound kept for the head: two frames
// at the decoder's per-frame cap (FrameMemory).
const headShare = 2

// FrameMemory is the decoder's cap on one frame's memory under a bound of
// mem for all work in flight: a quarter, so that the head's two frames
// take at most half and the jobs behind it share the other half.
func FrameMemory(mem int64) int64 { return mem / 4 }

// SetMemory bounds the memory of all jobs to mem bytes (0: no bound).
func (f *Flight) SetMemory(mem int64) {
	f.mem = mem
	f.share = mem - headShare*FrameMemory(mem)
}

// Admit waits until a job of size frame bytes may enter, and returns its
// memory account, m set up (the caller's, so that a job costs no
// allocation of its own), or nil when memory is not bounded.
func (f *Flight) Admit(size int64, m *JobMem) *JobMem {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cond.L == nil {
		f.cond.L = &f.mu
	}
	if f.Jobs <= 0 {
		f.Jobs = DefaultJobs
	}
	if f.Bytes <= 0 {
		f.Bytes = DefaultBytes
	}
	for f.jobs >= f.Jobs || f.bytes > 0 && f.bytes+size > f.Bytes {
		f.cond.Wait()
	}
	f.bytes += size
	f.jobs++
	if f.mem <= 0 {
		return nil
	}
	*m = JobMem{f: f}
	f.queue = append(f.queue, m)
	return m
}

// Release lets another job in after the head, of size frame bytes, has
// left: its memory must have been given back (its trees released, its
// output written). The next job becomes the head.
func (f *Flight) Release(size int64, m *JobMem) {
	f.mu.Lock()
	f.bytes -= size
	f.jobs--
	if m != nil && len(f.queue) > 0 && f.queue[0] == m {
		f.queue[0] = nil
		f.queue = f.queue[1:]
		if len(f.queue) > 0 {
			f.used -= f.queue[0].used // the new head's memory is its own
		}
		if len(f.queue) == 0 {
			f.queue = nil // let the backing array go
		}
	}
	if f.cond.L != nil {
		f.cond.Broadcast()
	}
	f.mu.Unlock()
}

// Idle reports whether no job is in flight: every job admitted was
// released, so the stages that handled them are done with them.
func (f *Flight) Idle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.jobs == 0
}

// WaitHead waits until m's job is the head.
func (f *Flight) WaitHead(m *JobMem) {
	f.mu.Lock()
	for len(f.queue) > 0 && f.queue[0] != m {
		f.cond.Wait()
	}
	f.mu.Unlock()
}

// Refusals counts the reservations every flight refused (read by tests).
var Refusals atomic.Int64

// JobMem is one job's memory in a flight: the protocol.Budget its frames
// are decoded with, and the account of its rendered output.
type JobMem struct {
	f       *Flight
	used    int64 // held by the job
	aborted bool  // a reservation was refused: the work that asked is to be done again at the head
}

// Reserve implements protocol.Budget: the head is always granted (its
// frames' own caps bound it), the other jobs while what they hold
// together stays within the flight's share; a refusal marks the job
// aborted, and refuses every later reservation until reset.
func (m *JobMem) Reserve(n int64) bool {
	f := m.f
	f.mu.Lock()
	defer f.mu.Unlock()
	head := len(f.queue) > 0 && f.queue[0] == m
	switch {
	case n <= 0:
	case m.aborted:
		return false
	case !head && f.used+n > f.share:
		m.aborted = true
		Refusals.Add(1)
		return false
	}
	m.used += n
	if !head {
		f.used += n
	}
	return true
}

// Held is what m's job holds, in bytes.
func (m *JobMem) Held() int64 {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	return m.used
}

// Head reports whether m's job is the head.
func (m *JobMem) Head() bool {
	f := m.f
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue) > 0 && f.queue[0] == m
}

// Retry clears an abort before the job's work is done again (at the head).
func (m *JobMem) Retry() {
	m.f.mu.Lock()
	m.aborted = false
	m.f.mu.Unlock()
}

// Aborted reports whether a reservation of the job was refused.
func (m *JobMem) Aborted() bool {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	return m.aborted
}
