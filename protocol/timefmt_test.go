package protocol

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// AppendMillisUTC writes what package time writes, everywhere.
func TestAppendMillisUTC(t *testing.T) {
	ms := []int64{0, -1, 1, 999, 1000, -1000, -1001, 86399999, 86400000, -86400000, -86400001,
		951782400000,  // 2000-02-29
		951868800000,  // 2000-03-01
		4107542400000, // 2100-03-01
		1795957235867, // a bench capture's
		minFastMillis, minFastMillis - 1, maxFastMillis, maxFastMillis + 1,
		-62167219200000, // 0000-01-01
		math.MaxInt64 / 2, math.MinInt64 / 2}
	r := rand.New(rand.NewPCG(5, 6))
	for range 200000 {
		ms = append(ms, minFastMillis+r.Int64N(maxFastMillis-minFastMillis+1))
	}
	for range 2000 {
		ms = append(ms, r.Int64()>>r.IntN(30))
	}
	for d := int64(-800000); d < 3000000; d += 17 { // every few days, years 0-9999
		ms = append(ms, d*millisPerDay+r.Int64N(millisPerDay))
	}
	for _, v := range ms {
		want := time.UnixMilli(v).UTC().AppendFormat(nil, "2006-01-02T15:04:05.000Z07:00")
		if got := AppendMillisUTC(nil, v); string(got) != string(want) {
			t.Fatalf("%d: got %s, want %s", v, got, want)
		}
	}
}

func BenchmarkAppendMillisUTC(b *testing.B) {
	buf := make([]byte, 0, 64)
	for i := int64(0); b.Loop(); i++ {
		buf = AppendMillisUTC(buf[:0], 1795957235867+i)
	}
}
