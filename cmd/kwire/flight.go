package main

import "sync"

// flight bounds what a pipeline of exchanges holds at once: parallelJobs
// jobs and parallelBudget frame bytes (one job always enters, however
// large, so that a frame above the budget cannot stall the pipeline).
// The zero value is ready to use.
type flight struct {
	mu    sync.Mutex
	cond  sync.Cond
	bytes int64 // frame bytes of the jobs admitted and not released
	jobs  int   // jobs admitted and not released
}

// admit waits until a job of size frame bytes may enter.
func (f *flight) admit(size int64) {
	f.mu.Lock()
	if f.cond.L == nil {
		f.cond.L = &f.mu
	}
	for f.jobs >= parallelJobs || f.bytes > 0 && f.bytes+size > parallelBudget {
		f.cond.Wait()
	}
	f.bytes += size
	f.jobs++
	f.mu.Unlock()
}

// release lets another job in after one of size frame bytes has left.
func (f *flight) release(size int64) {
	f.mu.Lock()
	f.bytes -= size
	f.jobs--
	if f.cond.L != nil {
		f.cond.Broadcast()
	}
	f.mu.Unlock()
}
