package memtune

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestMemLimitFor(t *testing.T) {
	for _, c := range []struct{ live, want int64 }{
		{0, memBackstop},
		{40 << 20, memBackstop},
		{memBackstop, memBackstop + memBackstop/memHeadroom},
		{200 << 20, 250 << 20},
	} {
		if got := memLimitFor(c.live); got != c.want {
			t.Errorf("memLimitFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live int64
		want int
	}{
		{0, maxGCPercent},
		{4 << 20, maxGCPercent},   // 12 MiB heap: far below heapTarget
		{10 << 20, maxGCPercent},  // 30 MiB heap: 300% would reach heapTarget
		{14 << 20, 185},           // 40 MiB: heapTarget
		{20 << 20, 100},           // 40 MiB: heapTarget
		{32 << 20, 25},            // 40 MiB: 8 MiB more
		{30 << 20, 33},            // 40 MiB: 10 MiB more
		{100 << 20, minGCPercent}, // more live than the target
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// The tuner runs after collections and sets the limit from the live heap.
func TestMemTunerFollowsCollections(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old) // runs after stop is set
	oldPercent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(oldPercent)
	mt := &memTuner{limit: -1, percent: -2, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
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
	if got := debug.SetMemoryLimit(-1); got != memBackstop {
		t.Errorf("limit = %d with %d MiB held, want %d", got, len(hold), memBackstop)
	}
	// The tuner set the percent it computed from some live heap, which
	// holds at least what the test holds.
	mt.stop.Store(true)
	got := debug.SetGCPercent(100)
	if got != mt.percent || got < minGCPercent || got > gcPercentFor(int64(len(hold))<<20) {
		t.Errorf("GC percent = %d (tuner: %d) with %d MiB held, want %d-%d", got, mt.percent, len(hold), minGCPercent, gcPercentFor(int64(len(hold))<<20))
	}
}
