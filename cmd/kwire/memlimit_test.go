package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestMemLimitFor(t *testing.T) {
	for _, c := range []struct{ live, want int64 }{
		{0, softMemoryLimit},
		{40 << 20, softMemoryLimit},
		{softMemoryLimit, softMemoryLimit + softMemoryLimit/memHeadroom},
		{200 << 20, 250 << 20},
	} {
		if got := memLimitFor(c.live); got != c.want {
			t.Errorf("memLimitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// The tuner runs after collections and sets the limit from the live heap.
func TestMemTunerFollowsCollections(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old) // runs after stop is set
	mt := &memTuner{limit: -1, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	defer mt.stop.Store(true)
	mt.arm()
	hold := make([][]byte, 0, 128)
	for i := 0; i < 100 && mt.tuned.Load() < 2; i++ {
		hold = append(hold, make([]byte, 1<<20))
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := mt.tuned.Load(); n < 2 {
		t.Fatalf("tuner ran %d times after 100 collections", n)
	}
	if got := debug.SetMemoryLimit(-1); got != softMemoryLimit {
		t.Errorf("limit = %d with %d MiB held, want %d", got, len(hold), softMemoryLimit)
	}
}
