// Package units formats durations, byte sizes and counts the same way in
// every kwire output (kwire read lines and summaries, kwire stats and
// versions tables), so that one quantity never appears in two styles.
//
// It imports only the standard library: both package render and package
// render/statsview use it.
package units

import (
	"strconv"
	"time"
)

// Times is the multiplication sign of a count ("NOT_LEADER_OR_FOLLOWER×3").
const Times = "×"

// Duration formats d for display: "0" when zero, "-" when negative, in
// milliseconds with three significant digits but at most three decimals
// below one second ("0.209ms", "0.084ms", "2.41ms", "35.2ms", "512ms"; a
// capture's clock counts microseconds, so finer digits would be noise;
// "<0.001ms" below 500ns), in seconds above ("1.25s", "12.3s", "125s",
// "3725s").
func Duration(d time.Duration) string {
	var tmp [24]byte
	return string(AppendDuration(tmp[:0], d))
}

// AppendDuration appends Duration(d) to b.
func AppendDuration(b []byte, d time.Duration) []byte {
	switch {
	case d < 0:
		return append(b, '-')
	case d == 0:
		return append(b, '0')
	}
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case d < 500*time.Nanosecond:
		return append(b, "<0.001ms"...)
	case ms < 0.9995:
		b = strconv.AppendFloat(b, ms, 'f', 3, 64)
		return append(b, "ms"...)
	case ms < 999.5:
		b = AppendSig3(b, ms)
		return append(b, "ms"...)
	}
	b = AppendSig3(b, ms/1000)
	return append(b, 's')
}

// AppendSig3 appends f (>= 0) with three significant digits ("123",
// "12.3", "1.23", "0.123", "0.00123"); at or above 999.5 it is rounded to
// an integer ("1234").
func AppendSig3(b []byte, f float64) []byte {
	prec := 0
	switch {
	case f <= 0:
		return append(b, '0')
	case f < 0.9995:
		prec = 3
		for g := f; g < 0.09995 && prec < 12; g *= 10 {
			prec++
		}
	case f < 9.995:
		prec = 2
	case f < 99.95:
		prec = 1
	}
	return strconv.AppendFloat(b, f, 'f', prec, 64)
}

// Size formats a byte count: exact below 10 KiB ("512B", "10239B"), else
// in KiB, MiB, GiB or TiB with three significant digits, up to 1023 of
// a unit ("12.3KiB",
// "1.43MiB", "456KiB"); "-" when negative.
func Size(n int64) string {
	var tmp [24]byte
	return string(AppendSize(tmp[:0], n))
}

// AppendSize appends Size(n) to b.
func AppendSize(b []byte, n int64) []byte {
	switch {
	case n < 0:
		return append(b, '-')
	case n < 10<<10:
		b = strconv.AppendInt(b, n, 10)
		return append(b, 'B')
	}
	f := float64(n) / 1024
	unit := "KiB"
	for _, u := range [...]string{"MiB", "GiB", "TiB"} {
		if f < 1023.5 {
			break
		}
		f /= 1024
		unit = u
	}
	b = AppendSig3(b, f)
	return append(b, unit...)
}
