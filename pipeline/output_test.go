package pipeline

import "testing"

// A line's buffer holds at least its hint up to lineMax, so that a large
// line is not grown there by append; a pooled buffer too small for a
// hint stays pooled for a smaller line.
func TestGetLineHint(t *testing.T) {
	for _, hint := range []int64{0, 100, 5 << 10, 64 << 10, 1 << 20, 1<<20 + 1, 3 << 20, lineMax} {
		b := GetLine(hint)
		if len(b) != 0 || int64(cap(b)) < hint {
			t.Errorf("GetLine(%d): len %d cap %d", hint, len(b), cap(b))
		}
		PutLine(b)
	}
	if b := GetLine(lineMax * 4); cap(b) > lineMax*2 {
		t.Errorf("GetLine(%d): cap %d, want at most what a line past lineMax starts with", lineMax*4, cap(b))
	}
	// Drain the largest class, put back one 1 MiB buffer, ask for 2 MiB:
	// a new buffer, and the small one still there for a 1 MiB line.
	for {
		select {
		case <-freeLines[len(lineClasses)-1]:
			continue
		default:
		}
		break
	}
	small := make([]byte, 0, 1<<20)
	PutLine(small)
	if b := GetLine(2 << 20); cap(b) < 2<<20 {
		t.Fatalf("GetLine(2 MiB) = cap %d", cap(b))
	}
	if b := GetLine(1 << 20); cap(b) != 1<<20 || &b[:1][0] != &small[:1][0] {
		t.Errorf("GetLine(1 MiB) did not return the pooled 1 MiB buffer (cap %d)", cap(b))
	}
}
