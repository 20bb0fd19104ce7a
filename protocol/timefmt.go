package protocol

import "time"

// Record batches carry a timestamp per record, and the decoder notes each
// one in RFC 3339 form: the general time formatter was a noticeable part of
// decoding. AppendMillisUTC writes the same text directly.

// Range of milliseconds since the Unix epoch that AppendMillisUTC formats
// itself: years 1 to 9999. Outside it (years that need a sign or a fifth
// digit) it uses package time.
const (
	minFastMillis = -62135596800000 // 0001-01-01T00:00:00.000Z
	maxFastMillis = 253402300799999 // 9999-12-31T23:59:59.999Z
	millisPerDay  = 86400000
)

// AppendMillisUTC appends the instant ms milliseconds after the Unix epoch
// in UTC as time.UnixMilli(ms).UTC().AppendFormat(b,
// "2006-01-02T15:04:05.000Z07:00") does ("2026-11-29T13:00:35.867Z").
func AppendMillisUTC(b []byte, ms int64) []byte {
	if ms < minFastMillis || ms > maxFastMillis {
		return time.UnixMilli(ms).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	}
	days := ms / millisPerDay
	rem := ms % millisPerDay
	if rem < 0 {
		days--
		rem += millisPerDay
	}
	y, m, d := civilDate(days)
	b = append4(b, y)
	b = append(b, '-')
	b = append2(b, m)
	b = append(b, '-')
	b = append2(b, d)
	b = append(b, 'T')
	b = append2(b, int(rem/3600000))
	b = append(b, ':')
	b = append2(b, int(rem/60000%60))
	b = append(b, ':')
	b = append2(b, int(rem/1000%60))
	b = append(b, '.')
	frac := int(rem % 1000)
	b = append(b, byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
	return append(b, 'Z')
}

// civilDate returns the proleptic Gregorian year, month and day of the day
// that is days after 1970-01-01. It counts in 400-year eras (146097 days)
// starting on a 1 March, so that the leap day falls at the end of a year.
func civilDate(days int64) (year, month, day int) {
	z := days + 719468 // days from 0000-03-01
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // day of the era, 0..146096
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of the era, 0..399
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of the March-based year, 0..365
	mp := (5*doy + 2) / 153                                // month from March, 0..11
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = int(yoe + era*400)
	if month <= 2 {
		year++
	}
	return year, month, day
}

func append2(b []byte, v int) []byte {
	return append(b, byte('0'+v/10), byte('0'+v%10))
}

func append4(b []byte, v int) []byte {
	return append(b, byte('0'+v/1000), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}
