package pipeline

import "testing"

// The head may always take memory; the jobs behind it share what is left
// once the head's part is kept aside, and one refused is aborted until it
// retries; when the head leaves, the next job's memory stops counting
// against the share.
func TestFlightMemory(t *testing.T) {
	var f Flight
	f.SetMemory(400)
	if f.share != 200 {
		t.Fatalf("share %d, want 200 (half of 400: the head's two frames take a quarter each)", f.share)
	}
	var ma, mb, mc JobMem
	a, b, c := f.Admit(0, &ma), f.Admit(0, &mb), f.Admit(0, &mc)
	if !a.Reserve(1000) || a.Aborted() {
		t.Error("the head was refused")
	}
	if !b.Reserve(150) || !c.Reserve(50) {
		t.Error("jobs behind the head refused within the share")
	}
	if c.Reserve(1) || !c.Aborted() || c.Reserve(1) {
		t.Error("a job past the share was not refused and aborted")
	}
	c.Reserve(-50)
	c.Retry()
	if c.Aborted() {
		t.Error("retry left the job aborted")
	}
	a.Reserve(-1000)
	f.Release(0, a) // b is the head: its 150 bytes are its own
	if f.used != 0 || !b.Head() {
		t.Errorf("after the head left: share used %d, b head %v", f.used, b.Head())
	}
	if !c.Reserve(200) {
		t.Error("c refused the share b no longer takes")
	}
	f.Release(0, b)
	f.Release(0, c)
	if len(f.queue) != 0 || f.jobs != 0 {
		t.Errorf("%d jobs, %d queued after all left", f.jobs, len(f.queue))
	}
}
