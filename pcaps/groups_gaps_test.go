package pcaps

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// groupsDoc is the part of kwire groups --json these tests read.
type groupsDoc struct {
	Groups []struct {
		GroupID         string  `json:"groupId"`
		GenerationCount int64   `json:"generationCount"`
		StaticRejoins   int64   `json:"staticRejoins"`
		Rebalances      int64   `json:"rebalances"`
		RebalanceMs     float64 `json:"rebalanceMs"`
		Members         []struct {
			Name              string   `json:"name"`
			End               *string  `json:"end"`
			SessionTimeoutMs  *int32   `json:"sessionTimeoutMs"`
			MaxHeartbeatGapMs *float64 `json:"maxHeartbeatGapMs"`
			LateHeartbeats    int64    `json:"lateHeartbeats"`
			MissedHeartbeats  int64    `json:"missedHeartbeats"`
		} `json:"members"`
		Generations []struct {
			Generation int32 `json:"generationIdOrMemberEpoch"`
		} `json:"generations"`
		Dropped struct {
			Generations int64 `json:"generations"`
		} `json:"dropped"`
	} `json:"groups"`
}

func groupsJSON(t *testing.T, capture string, args ...string) *groupsDoc {
	t.Helper()
	r := kwire(t, append(append([]string{"groups", "--json", "--port", info(t, capture).ports}, args...), capture)...)
	if r.exit != 0 {
		t.Fatalf("kwire %v: exit %d: %s", r.args, r.exit, r.stderr)
	}
	var d groupsDoc
	if err := json.Unmarshal(r.stdout, &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Groups) != 1 {
		t.Fatalf("%d groups, want 1", len(d.Groups))
	}
	return &d
}

// TestGroupsSilenceBeforeExpiry: a member killed (its heartbeats stop)
// and expired after the 3 s session timeout has, as its longest gap, the
// silence from its last sign of life to its expiry (the 3.04 s the
// generation that removed it tells), and that gap is a missed one; the
// members that kept beating and left have neither.
func TestGroupsSilenceBeforeExpiry(t *testing.T) {
	for _, c := range []struct{ capture, expired string }{
		{"group-rebalance-kafkapython.pcap", "capgen-kafkapython-a"},
		{"group-kip848.pcap", "capgen-kgo-848-a"},
	} {
		t.Run(c.capture, func(t *testing.T) {
			g := groupsJSON(t, c.capture).Groups[0]
			for _, m := range g.Members {
				if m.MaxHeartbeatGapMs == nil {
					t.Fatalf("%s: no max gap", m.Name)
				}
				gap := *m.MaxHeartbeatGapMs
				if m.Name == c.expired {
					if m.End == nil || *m.End != "expired" || gap < 3000 || gap > 3100 || m.MissedHeartbeats != 1 || m.LateHeartbeats != 0 {
						t.Errorf("%s: end %v, max gap %.3fms, late %d, missed %d; want expired after a gap of 3000-3100ms, 1 missed",
							m.Name, m.End, gap, m.LateHeartbeats, m.MissedHeartbeats)
					}
					continue
				}
				if gap >= 1500 || m.MissedHeartbeats != 0 || m.LateHeartbeats != 0 {
					t.Errorf("%s: max gap %.3fms, late %d, missed %d; want under half the session timeout, none late or missed",
						m.Name, gap, m.LateHeartbeats, m.MissedHeartbeats)
				}
			}
		})
	}
}

// TestGroupsEpochCount: group-kip848's entries are member epochs
// 1, 2, 3, 4, 4 again (s2 taking s's place, KIP-345) and 5: five epochs
// and one static rejoin, not six epochs.
func TestGroupsEpochCount(t *testing.T) {
	g := groupsJSON(t, "group-kip848.pcap").Groups[0]
	var nums []int32
	for _, gn := range g.Generations {
		nums = append(nums, gn.Generation)
	}
	if !slices.Equal(nums, []int32{1, 2, 3, 4, 4, 5}) || g.GenerationCount != 5 || g.StaticRejoins != 1 || g.Rebalances != 4 {
		t.Errorf("entries %v: %d epochs, %d static rejoins, %d rebalances; want 5 epochs, 1 static rejoin, 4 rebalances",
			nums, g.GenerationCount, g.StaticRejoins, g.Rebalances)
	}
	r := kwire(t, "groups", "--port", info(t, "group-kip848.pcap").ports, "group-kip848.pcap")
	if !strings.Contains(string(r.stdout), ": 5 member epochs (+1 static rejoin), 4 rebalances (") {
		t.Errorf("header:\n%s", r.stdout)
	}
}

// TestGroupsTotalsWhenDropped: with a budget too small to keep more than
// the latest generation, the group's totals (generations, static rejoins,
// rebalances and their time, members) are those of the whole capture.
func TestGroupsTotalsWhenDropped(t *testing.T) {
	const capture = "group-rebalance-sarama.pcap"
	full := groupsJSON(t, capture).Groups[0]
	cut := groupsJSON(t, capture, "--max-analysis-memory", "1").Groups[0]
	if full.Rebalances != 4 || full.GenerationCount != 5 || full.StaticRejoins != 1 {
		t.Fatalf("full: %d generations, %d static rejoins, %d rebalances", full.GenerationCount, full.StaticRejoins, full.Rebalances)
	}
	if cut.Dropped.Generations < 4 {
		t.Fatalf("--max-analysis-memory 1 kept %d generations, dropped %d", len(cut.Generations), cut.Dropped.Generations)
	}
	if cut.Rebalances != full.Rebalances || cut.RebalanceMs != full.RebalanceMs ||
		cut.GenerationCount != full.GenerationCount || cut.StaticRejoins != full.StaticRejoins {
		t.Errorf("dropped: %d generations, %d static, %d rebalances (%.3fms); want %d, %d, %d (%.3fms)",
			cut.GenerationCount, cut.StaticRejoins, cut.Rebalances, cut.RebalanceMs,
			full.GenerationCount, full.StaticRejoins, full.Rebalances, full.RebalanceMs)
	}
	r := kwire(t, "groups", "--max-analysis-memory", "1", "--port", info(t, capture).ports, capture)
	if !strings.Contains(string(r.stdout), "5 generations (+1 static rejoin), 4 rebalances (1.75s in all), 4 members") {
		t.Errorf("header:\n%s", r.stdout)
	}
}

// TestGroupsCommitsColumn: the COMMITS table's third column is the
// commit's GenerationIdOrMemberEpoch, headed as the GENERATIONS table
// heads it: GEN for a classic group, EPOCH for a KIP-848 one (it read GEN
// under an EPOCH table).
func TestGroupsCommitsColumn(t *testing.T) {
	for _, c := range []struct{ capture, head, row string }{
		{"group-kip848.pcap", "  PARTITION            OFFSET  EPOCH  MEMBER ",
			"  capgen-rebalance[1]       2      4  capgen-kgo-848-s2 "},
		{"group-rebalance-kafkapython.pcap", "  PARTITION            OFFSET  GEN  MEMBER ",
			"  capgen-rebalance[0]       2    5  capgen-kafkapython-c "},
	} {
		r := kwire(t, "groups", "--timeline=false", "--port", info(t, c.capture).ports, c.capture)
		out := string(r.stdout)
		_, commits, ok := strings.Cut(out, "  COMMITS\n")
		if !ok || !strings.HasPrefix(commits, c.head) || !strings.Contains(commits, "\n"+c.row) {
			t.Errorf("%s: want COMMITS headed %q with row %q:\n%s", c.capture, c.head, c.row, out)
		}
	}
}
