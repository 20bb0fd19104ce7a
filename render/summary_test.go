package render

import (
	"strings"
	"testing"

	"github.com/kwire/kwire/dissect"
)

// TestGapBytes: the bytes of gaps are said as lost, as not captured
// (the snap length cut their packets), as given up by the out-of-order
// budget, or as a mix.
func TestGapBytes(t *testing.T) {
	for _, c := range []struct {
		p    dissect.Problems
		want string
	}{
		{dissect.Problems{Gaps: 2, GapBytes: 1460}, "1460 bytes lost"},
		{dissect.Problems{Gaps: 200, GapBytes: 49741, Snapped: 200, SnappedBytes: 49741},
			"49741 bytes not captured: the snap length cut 431 packets to 120 bytes"},
		{dissect.Problems{Gaps: 201, GapBytes: 50000, Snapped: 200, SnappedBytes: 49741},
			"50000 bytes: 259 lost, 49741 not captured: the snap length cut 431 packets to 120 bytes"},
		{dissect.Problems{Gaps: 1, GapBytes: 3728, GivenUp: 1, GivenUpBytes: 3728},
			"3728 bytes given up (budget: --max-out-of-order)"},
		{dissect.Problems{Gaps: 4, GapBytes: 4000, GivenUp: 2, GivenUpBytes: 3000, Snapped: 1, SnappedBytes: 700},
			"4000 bytes: 300 lost, 3000 given up (budget: --max-out-of-order), 700 not captured: the snap length cut 431 packets to 120 bytes"},
		{dissect.Problems{Gaps: 2, GapBytes: 3000, GivenUp: 1, GivenUpBytes: 2000, Snapped: 1, SnappedBytes: 1000},
			"3000 bytes: 2000 given up (budget: --max-out-of-order), 1000 not captured: the snap length cut 431 packets to 120 bytes"},
	} {
		if got := GapBytes(c.p, 431, 120, " lost"); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
	if got := GapBytes(dissect.Problems{Gaps: 1, GapBytes: 8, Snapped: 1, SnappedBytes: 8}, 1, 66, ""); got != "8 bytes not captured: the snap length cut 1 packet to 66 bytes" {
		t.Errorf("one packet: %q", got)
	}
	// The summary line says just "bytes" when all were lost, "lost" when
	// some were not captured.
	if got := GapBytes(dissect.Problems{Gaps: 64, GapBytes: 33699, Snapped: 63, SnappedBytes: 33634}, 63, 300, ""); got != "33699 bytes: 65 lost, 33634 not captured: the snap length cut 63 packets to 300 bytes" {
		t.Errorf("summary line: %q", got)
	}
}

// TestSummaryTLS: the summary says how many TLS connections were
// decrypted and why the others were not, counted from their events: on a
// Kafka port (anomalies), and skipped as not on one (the connections
// line), each by reason.
func TestSummaryTLS(t *testing.T) {
	var s SummaryCounts
	s.Connections = 6
	for _, st := range []*dissect.TLSStatus{{Decrypted: true}, {Decrypted: true}, {Reason: dissect.TLSNoKey}, {Reason: dissect.TLSNoHandshake}, {Reason: dissect.TLSNoKey}} {
		s.Event(&dissect.Event{Kind: dissect.EventTLS, TLS: st})
	}
	s.Event(&dissect.Event{Kind: dissect.EventSkipped, TLS: &dissect.TLSStatus{Reason: dissect.TLSNoKeyLog}})
	s.SkipReasons = []dissect.Reason{{Reason: dissect.SkipTLS, Count: 1}}
	var b strings.Builder
	if err := Summary(&b, &s, Options{}); err != nil {
		t.Fatal(err)
	}
	want := "packets 0, connections 6 (0 Kafka, 2 decrypted from TLS, 1 skipped: 1 TLS not decrypted (1 no key log))\n" +
		"exchanges 0\n" +
		"anomalies: 3 TLS connections not decrypted (1 handshake not captured, 2 no key for the client random)\n"
	if b.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", b.String(), want)
	}
	if got := TLSReasonsText(s.TLSReasons); got != "1 handshake not captured, 2 no key for the client random" {
		t.Errorf("TLSReasonsText %q", got)
	}
}
