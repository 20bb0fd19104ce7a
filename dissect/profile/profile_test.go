package profile

import (
	"strings"
	"testing"
)

// TestSequenceSteps: repeats of periodic APIs are not counted, a repeat of
// another API is marked once, heartbeats and telemetry are left out, and
// a sequence is cut at MaxSequence steps.
func TestSequenceSteps(t *testing.T) {
	for _, c := range []struct {
		keys []int16
		want string
	}{
		{[]int16{18, 3, 0, 0, 0, 1, 1, 1, 12, 1, 72}, "ApiVersions Metadata Produce+ Fetch"},
		{[]int16{18, 11, 12, 12, 14, 12, 1, 8, 1, 8}, "ApiVersions JoinGroup SyncGroup Fetch OffsetCommit Fetch OffsetCommit"},
		{[]int16{12, 12, 71}, ""},
	} {
		cn := &connAcc{lastKey: -1}
		for _, k := range c.keys {
			cn.step(k)
		}
		if got := strings.Join(cn.steps, " "); got != c.want {
			t.Errorf("%v: %q, want %q", c.keys, got, c.want)
		}
	}
	cn := &connAcc{lastKey: -1}
	for i := range 200 {
		cn.step(int16(i % 2 * 19)) // Produce, CreateTopics, ...
	}
	if len(cn.steps) != MaxSequence+1 || cn.steps[MaxSequence] != "…" {
		t.Errorf("%d steps, last %q", len(cn.steps), cn.steps[len(cn.steps)-1])
	}
}

func TestValidIgnore(t *testing.T) {
	for _, p := range []string{"latency", "error:*NOT_COORDINATOR", "client:capgen-*", "topic:tmp-[0-9]*"} {
		if err := ValidIgnore(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"latencies", "topic:[", ""} {
		if ValidIgnore(p) == nil {
			t.Errorf("%q accepted", p)
		}
	}
}
