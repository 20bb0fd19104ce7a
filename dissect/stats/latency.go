package stats

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// ExactSamples is how many latencies a Latency keeps verbatim. Up to this
// many samples, percentiles are exact (nearest rank); past it the samples
// are folded into log-bucketed counts and memory stays fixed.
//
// Bound: 4096 samples × 8 bytes = 32 KiB per API key and version while
// exact; the bucket array that replaces them is subBuckets × 64 × 8 bytes =
// 8 KiB.
const ExactSamples = 4096

// subBits is the number of mantissa bits a bucket keeps: each power of two
// is split into 2^subBits buckets, so a bucket's width is at most 1/16 of
// its lower bound and a percentile read from the buckets is within 6.25 %
// of the true sample.
const (
	subBits    = 4
	subBuckets = 1 << subBits
	numBuckets = 64 * subBuckets
)

// Latency accumulates durations (response capture time minus request
// capture time) with bounded memory: exact samples up to ExactSamples, then
// a histogram of numBuckets log-linear buckets (HDR-style: 16 linear
// sub-buckets per power of two of nanoseconds). Min, max, count and sum
// are always exact. Negative durations (clock steps in the capture) count
// as 0. The zero value is ready to use.
type Latency struct {
	n        int64
	sum      time.Duration
	min, max time.Duration
	samples  []time.Duration // exact samples; nil once folded
	sorted   bool
	buckets  *[numBuckets]int64
}

// Add records one duration.
func (l *Latency) Add(d time.Duration) {
	if d < 0 {
		d = 0
	}
	if l.n == 0 || d < l.min {
		l.min = d
	}
	if d > l.max {
		l.max = d
	}
	l.n++
	l.sum += d
	if l.buckets != nil {
		l.buckets[bucketOf(d)]++
		return
	}
	l.samples = append(l.samples, d)
	l.sorted = false
	if len(l.samples) > ExactSamples {
		l.buckets = new([numBuckets]int64)
		for _, s := range l.samples {
			l.buckets[bucketOf(s)]++
		}
		l.samples = nil
	}
}

// Count returns the number of durations added.
func (l *Latency) Count() int64 { return l.n }

// Min and Max return the extremes, 0 when empty.
func (l *Latency) Min() time.Duration { return l.min }

// Max returns the largest duration added, 0 when empty.
func (l *Latency) Max() time.Duration { return l.max }

// Mean returns the arithmetic mean, 0 when empty.
func (l *Latency) Mean() time.Duration {
	if l.n == 0 {
		return 0
	}
	return l.sum / time.Duration(l.n)
}

// Exact reports whether percentiles are still computed from every sample.
func (l *Latency) Exact() bool { return l.buckets == nil }

// Percentile returns the p-th percentile (0 < p <= 100) by the nearest-rank
// method: the smallest sample such that at least p % of the samples are at
// or below it. Past ExactSamples it returns the upper bound of the bucket
// holding that rank, clamped to [Min, Max]. 0 when empty.
func (l *Latency) Percentile(p float64) time.Duration {
	if l.n == 0 {
		return 0
	}
	rank := int64(math.Ceil(p / 100 * float64(l.n)))
	rank = min(max(rank, 1), l.n)
	if l.buckets == nil {
		l.sort()
		return l.samples[rank-1]
	}
	var seen int64
	for i, c := range l.buckets {
		seen += c
		if seen >= rank {
			return min(max(bucketUpper(i), l.min), l.max)
		}
	}
	return l.max
}

func (l *Latency) sort() {
	if !l.sorted {
		slices.Sort(l.samples)
		l.sorted = true
	}
}

// Bin is one bar of a latency distribution: Count durations d with
// Lo <= d < Hi.
type Bin struct {
	Lo, Hi time.Duration
	Count  int64
}

// Distribution returns the durations counted in power-of-two bins of
// nanoseconds ([0,1), [1,2), [2,4), ... [2^k, 2^(k+1))), from the bin holding
// Min to the bin holding Max, empty bins in between included.
func (l *Latency) Distribution() []Bin {
	if l.n == 0 {
		return nil
	}
	lo, hi := pow2Index(l.min), pow2Index(l.max)
	out := make([]Bin, hi-lo+1)
	for i := range out {
		out[i].Lo, out[i].Hi = pow2Bounds(lo + i)
	}
	if l.buckets == nil {
		for _, s := range l.samples {
			out[pow2Index(s)-lo].Count++
		}
		return out
	}
	for i, c := range l.buckets {
		if c == 0 {
			continue
		}
		// A bucket lies inside one power of two: its lower bound says which.
		out[pow2Index(bucketLower(i))-lo].Count += c
	}
	return out
}

// pow2Index numbers the power-of-two bin of d: 0 for 0ns, k+1 for
// [2^k, 2^(k+1)).
func pow2Index(d time.Duration) int { return bits.Len64(uint64(d)) }

func pow2Bounds(i int) (lo, hi time.Duration) {
	if i == 0 {
		return 0, 1
	}
	lo = time.Duration(1) << (i - 1)
	if i >= 63 {
		return lo, math.MaxInt64
	}
	return lo, time.Duration(1) << i
}

// bucketOf returns the log-linear bucket of d >= 0: values below
// subBuckets have a bucket each; above, the top subBits+1 bits select it.
func bucketOf(d time.Duration) int {
	v := uint64(d)
	if v < subBuckets {
		return int(v)
	}
	e := bits.Len64(v) - 1 // 2^e <= v
	sub := (v >> (e - subBits)) & (subBuckets - 1)
	return (e-subBits+1)*subBuckets + int(sub)
}

// bucketLower is the smallest duration in bucket i.
func bucketLower(i int) time.Duration {
	if i < subBuckets {
		return time.Duration(i)
	}
	e := i/subBuckets + subBits - 1
	sub := uint64(i % subBuckets)
	return time.Duration((1<<e | sub<<(e-subBits)))
}

// bucketUpper is the largest duration in bucket i.
func bucketUpper(i int) time.Duration {
	if i+1 >= numBuckets {
		return math.MaxInt64
	}
	return bucketLower(i+1) - 1
}

// SeriesBins is the most bins a Series keeps; when a sample falls past the
// last bin, the bin width doubles and neighbouring bins merge, so memory
// stays fixed whatever the capture's length.
const SeriesBins = 64

// initialSeriesWidth is a Series' first bin width.
const initialSeriesWidth = 10 * time.Millisecond

// SeriesBin is one time slice of a latency series: the exchanges whose
// request was captured in [Start, Start+Width) relative to the series'
// origin.
type SeriesBin struct {
	Count int64
	Sum   time.Duration
	Max   time.Duration
}

// Series is latency over time: SeriesBins bins of equal width from an
// origin, the width doubling as needed (10ms, 20ms, 40ms, ...). Times
// before the origin go into the first bin.
type Series struct {
	Origin time.Time
	Width  time.Duration
	Bins   []SeriesBin // trailing empty bins are not kept
}

// Add records latency d of an exchange whose request was captured at t.
func (s *Series) Add(t time.Time, d time.Duration) {
	if s.Width == 0 {
		s.Width = initialSeriesWidth
	}
	off := t.Sub(s.Origin)
	if off < 0 {
		off = 0
	}
	i := int(off / s.Width)
	for i >= SeriesBins {
		s.fold()
		i = int(off / s.Width)
	}
	for len(s.Bins) <= i {
		s.Bins = append(s.Bins, SeriesBin{})
	}
	b := &s.Bins[i]
	b.Count++
	b.Sum += d
	b.Max = max(b.Max, d)
}

// fold doubles the width, merging bin pairs.
func (s *Series) fold() {
	s.Width *= 2
	n := (len(s.Bins) + 1) / 2
	for i := range n {
		b := s.Bins[2*i]
		if 2*i+1 < len(s.Bins) {
			c := s.Bins[2*i+1]
			b.Count += c.Count
			b.Sum += c.Sum
			b.Max = max(b.Max, c.Max)
		}
		s.Bins[i] = b
	}
	s.Bins = s.Bins[:n]
}

// merge adds every duration of o to l.
func (l *Latency) merge(o *Latency) {
	if o.n == 0 {
		return
	}
	if l.n == 0 || o.min < l.min {
		l.min = o.min
	}
	l.max = max(l.max, o.max)
	l.n += o.n
	l.sum += o.sum
	if l.buckets == nil && o.buckets == nil && len(l.samples)+len(o.samples) <= ExactSamples {
		l.samples = append(l.samples, o.samples...)
		l.sorted = false
		return
	}
	if l.buckets == nil {
		l.buckets = new([numBuckets]int64)
		for _, s := range l.samples {
			l.buckets[bucketOf(s)]++
		}
		l.samples = nil
	}
	if o.buckets != nil {
		for i, c := range o.buckets {
			l.buckets[i] += c
		}
		return
	}
	for _, s := range o.samples {
		l.buckets[bucketOf(s)]++
	}
}
