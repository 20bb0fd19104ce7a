package stats

import (
	"math/rand/v2"
	"testing"
	"time"
)

func TestLatencyExactPercentiles(t *testing.T) {
	var l Latency
	// 1..100 ms in a shuffled order: nearest rank gives p ms for p%.
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(100) {
		l.Add(time.Duration(i+1) * time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {90, 90 * time.Millisecond}, {99, 99 * time.Millisecond},
		{100, 100 * time.Millisecond}, {0.5, time.Millisecond}, {99.5, 100 * time.Millisecond}} {
		if got := l.Percentile(c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if l.Min() != time.Millisecond || l.Max() != 100*time.Millisecond || l.Count() != 100 || !l.Exact() {
		t.Errorf("min %v max %v count %d exact %v", l.Min(), l.Max(), l.Count(), l.Exact())
	}
	if l.Mean() != 50500*time.Microsecond {
		t.Errorf("mean %v", l.Mean())
	}
	// Few samples: p50 of {10, 20, 30} is 20, p90 is 30.
	var s Latency
	for _, d := range []time.Duration{30, 10, 20} {
		s.Add(d)
	}
	if s.Percentile(50) != 20 || s.Percentile(90) != 30 || s.Percentile(33) != 10 {
		t.Errorf("small: p50 %v p90 %v p33 %v", s.Percentile(50), s.Percentile(90), s.Percentile(33))
	}
	var empty Latency
	if empty.Percentile(50) != 0 || empty.Distribution() != nil {
		t.Error("empty Latency not zero")
	}
	var neg Latency
	neg.Add(-5)
	if neg.Min() != 0 || neg.Max() != 0 {
		t.Errorf("negative duration not clamped: %v %v", neg.Min(), neg.Max())
	}
}

func TestLatencyBucketed(t *testing.T) {
	var l Latency
	const n = 3 * ExactSamples
	for i := 1; i <= n; i++ {
		l.Add(time.Duration(i) * time.Microsecond)
	}
	if l.Exact() || l.Count() != n || l.Min() != time.Microsecond || l.Max() != n*time.Microsecond {
		t.Fatalf("exact %v count %d min %v max %v", l.Exact(), l.Count(), l.Min(), l.Max())
	}
	for _, p := range []float64{50, 90, 99} {
		want := time.Duration(p/100*n) * time.Microsecond
		got := l.Percentile(p)
		if got < want || float64(got-want) > float64(want)/16 {
			t.Errorf("p%v = %v, want %v within 1/16 above", p, got, want)
		}
	}
	var total int64
	for _, b := range l.Distribution() {
		total += b.Count
	}
	if total != n {
		t.Errorf("distribution holds %d, want %d", total, n)
	}
}

func TestBuckets(t *testing.T) {
	vals := []time.Duration{0, 1, 15, 16, 17, 31, 32, 33, 1000, 123456789, 1 << 40, 1<<62 + 12345}
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		vals = append(vals, time.Duration(r.Int64N(1<<50)))
	}
	for _, v := range vals {
		i := bucketOf(v)
		lo, hi := bucketLower(i), bucketUpper(i)
		if v < lo || v > hi || i < 0 || i >= numBuckets {
			t.Fatalf("%d in bucket %d [%d,%d]", v, i, lo, hi)
		}
		if lo >= subBuckets && float64(hi-lo+1) > float64(lo)/subBuckets {
			t.Fatalf("bucket %d [%d,%d] wider than 1/%d", i, lo, hi, subBuckets)
		}
		if i > 0 && bucketUpper(i-1)+1 != lo {
			t.Fatalf("bucket %d does not follow %d", i, i-1)
		}
	}
}

func TestLatencyDistribution(t *testing.T) {
	var l Latency
	for _, d := range []time.Duration{3, 5, 6, 40} { // bins [2,4) [4,8) [8,16) [16,32) [32,64)
		l.Add(d)
	}
	got := l.Distribution()
	want := []Bin{{2, 4, 1}, {4, 8, 2}, {8, 16, 0}, {16, 32, 0}, {32, 64, 1}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("bin %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestLatencyMerge(t *testing.T) {
	var a, b, all Latency
	for i := 1; i <= ExactSamples; i++ {
		d := time.Duration(i) * time.Millisecond
		if i%3 == 0 {
			a.Add(d)
		} else {
			b.Add(d)
		}
		all.Add(d)
	}
	a.merge(&b)
	if !a.Exact() || a.Count() != all.Count() || a.Percentile(50) != all.Percentile(50) || a.Min() != all.Min() {
		t.Errorf("merged exact: %v %d %v", a.Exact(), a.Count(), a.Percentile(50))
	}
	a.merge(&b) // now past ExactSamples: folds
	if a.Exact() || a.Count() != all.Count()+b.Count() {
		t.Errorf("merged folded: %v %d", a.Exact(), a.Count())
	}
}

func TestSeries(t *testing.T) {
	s := Series{Origin: t0}
	s.Add(t0, 5)
	s.Add(t0.Add(15*time.Millisecond), 7)
	s.Add(t0.Add(-time.Second), 1) // before the origin: first bin
	if s.Width != 10*time.Millisecond || len(s.Bins) != 2 || s.Bins[0] != (SeriesBin{2, 6, 5}) || s.Bins[1] != (SeriesBin{1, 7, 7}) {
		t.Fatalf("series %+v", s)
	}
	// A sample 1s in: 100 bins of 10ms do not fit in 64, so the width
	// doubles to 20ms (50 bins) and the first two bins merge.
	s.Add(t0.Add(time.Second), 9)
	if s.Width != 20*time.Millisecond || len(s.Bins) != 51 || s.Bins[0] != (SeriesBin{3, 13, 7}) || s.Bins[50] != (SeriesBin{1, 9, 9}) {
		t.Fatalf("folded series width %v len %d first %+v", s.Width, len(s.Bins), s.Bins[0])
	}
	s.Add(t0.Add(time.Hour), 1)
	if len(s.Bins) > SeriesBins {
		t.Fatalf("series grew to %d bins", len(s.Bins))
	}
}
