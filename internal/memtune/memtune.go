// Package memtune paces Go's garbage collector for kwire: the heap may grow
// to about 40 MiB over what is live, a soft memory limit backs that up,
// and a command can set a ceiling (the bound its flags give) with a
// warning should the live heap pass it. docs/performance.md has the
// measurements.
package memtune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
)

// What kwire holds at once is bounded by the captured traffic (requests
// awaiting their responses, up to --max-pending-memory; frames being
// reassembled; the exchanges being decoded and rendered), not by the size
// of the capture. Go's default garbage collector pacing (GOGC=100) lets
// the heap grow to twice what is live. After every collection the tuner
// sets the pacing from the live heap instead: the heap may grow to
// heapTarget, so by up to 200% of what is live when little is live and by
// at least minGCPercent when much is. (Up to 100% made the one-line mode
// on 41,000 connections, with 14 MiB live, collect 38 times where 20
// suffice: 10% more CPU for 16 MB less peak RSS, 49 against 65 MB.) A soft memory limit of memBackstop
// (or live + live/memHeadroom when more is live) backs it up.
//
// The pacing does the work, not the memory limit: a binding limit makes
// the runtime return freed pages to the OS as soon as they are free, and
// the decoder's short-lived trees then fault them back in (hundreds of
// thousands of page faults on a 1 GB capture).
// The commands that read captures also set a ceiling (SetCeiling): the
// bound their flags give, lowered to the
// container's memory limit when there is one; the soft limit never goes
// above it. Should the live heap pass it (kwire's accounting of what is
// in flight is an estimate), a warning says so once: an allocation may
// then fail.
//
// GOMEMLIMIT or GOGC in the environment turn this off.
// docs/performance.md has the measurements.
const (
	heapTarget   = 40 << 20
	minGCPercent = 25
	maxGCPercent = 200
	memBackstop  = 72 << 20
	memHeadroom  = 4 // the limit is at least live + live/memHeadroom
)

// Start sets the adaptive pacing and soft memory limit unless the
// environment sets GOMEMLIMIT or GOGC. It is called once, first thing.
func Start() {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != "" {
		return
	}
	t := &memTuner{limit: memBackstop, percent: maxGCPercent}
	t.sample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	debug.SetMemoryLimit(t.limit)
	debug.SetGCPercent(t.percent)
	tuner = t
	t.arm()
}

type memTuner struct {
	limit   int64        // the soft limit set
	percent int          // the GC percent set
	tuned   atomic.Int32 // collections seen (read by tests)
	stop    atomic.Bool  // set by tests: no more tuning
	sample  []metrics.Sample

	ceiling atomic.Int64 // the soft limit's ceiling; 0: none
	warned  atomic.Bool
	warn    atomic.Pointer[func(live, ceiling int64)] // says that live passed the ceiling
}

// tuner is the process's memTuner, nil when the environment turned it off.
var tuner *memTuner

// SetCeiling caps the soft memory limit at bound bytes (or the
// container's limit, if lower) and has warn called once, with the live
// heap and the ceiling in bytes, if the live heap ever passes it (warn
// runs on the runtime's finalizer goroutine). Without Start it does
// nothing.
func SetCeiling(bound int64, warn func(live, ceiling int64)) {
	t := tuner
	if t == nil || bound <= 0 {
		return
	}
	if c := cgroupLimit(); c > 0 && c-c/10 < bound {
		bound = c - c/10
	}
	t.warn.Store(&warn)
	t.ceiling.Store(bound)
	if debug.SetMemoryLimit(-1) > bound { // the limit now; the tuner follows at the next collection
		debug.SetMemoryLimit(bound)
	}
}

// cgroupLimit is the memory limit of the process's cgroup (v2), or 0.
func cgroupLimit() int64 {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0 // "max": none
	}
	return n
}

// memLimitFor is the soft memory limit for a live heap of live bytes.
func memLimitFor(live int64) int64 {
	return max(memBackstop, live+live/memHeadroom)
}

// gcPercentFor is the GC percent (GOGC) for a live heap of live bytes: the
// heap may grow to heapTarget, by minGCPercent to maxGCPercent of live.
func gcPercentFor(live int64) int {
	if live <= 0 {
		return maxGCPercent
	}
	return int(min(max((heapTarget-live)*100/live, minGCPercent), maxGCPercent))
}

// arm schedules t.tune after the next garbage collection: the finalizer of
// an unreachable object runs after the collection that found it.
func (t *memTuner) arm() {
	s := new(gcSentinel)
	runtime.SetFinalizer(s, func(*gcSentinel) { t.tune() })
}

// gcSentinel is big enough not to be batched with other tiny objects
// (whose finalizers may never run).
type gcSentinel struct{ _ [32]byte }

func (t *memTuner) tune() {
	if t.stop.Load() {
		return
	}
	t.tuned.Add(1)
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live := int64(t.sample[0].Value.Uint64())
		want := memLimitFor(live)
		if c := t.ceiling.Load(); c > 0 {
			want = min(want, c)
			if live > c && !t.warned.Swap(true) {
				if w := t.warn.Load(); w != nil && *w != nil {
					(*w)(live, c)
				}
			}
		}
		if want != t.limit {
			t.limit = want
			debug.SetMemoryLimit(want)
		}
		if want := gcPercentFor(live); want != t.percent {
			t.percent = want
			debug.SetGCPercent(want)
		}
	}
	t.arm()
}
