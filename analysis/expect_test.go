package analysis

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The expectation files (pcaps/*.expect.json) say what happened from the
// clients' side: their rebalance callbacks, their producer results, and
// capgen's injection points (tools/capgen/expect.go has the schema; only
// what these tests read is declared here).

type expectation struct {
	Capture    string           `json:"capture"`
	Clients    []expectClient   `json:"clients"`
	Groups     []expectGroup    `json:"groups"`
	Producers  []expectProducer `json:"producers"`
	Consumers  []expectConsumer `json:"consumers"`
	Injections []expectInject   `json:"injections"`
	Wire       struct {
		Requests         []string       `json:"requests"`
		Unadvertised     []string       `json:"unadvertised"`
		SkipsApiVersions []string       `json:"skipsApiVersions"`
		MinConnections   map[string]int `json:"minConnections"`
		MinRequests      map[string]int `json:"minRequests"`
		SlowResponses    map[string]int `json:"slowResponses"`
		SlowMs           int            `json:"slowMs"`
	} `json:"wire"`
}

type expectClient struct {
	ClientID string `json:"clientId"`
	Role     string `json:"role"`
}

type expectGroup struct {
	Group            string `json:"group"`
	Protocol         string `json:"protocol"`
	Assignor         string `json:"assignor"`
	SessionTimeoutMs int32  `json:"sessionTimeoutMs"`
	Members          []struct {
		Name        string  `json:"name"`
		ClientID    string  `json:"clientId"`
		InstanceID  *string `json:"instanceId"`
		MemberID    string  `json:"memberId"`
		End         string  `json:"end"`
		LeaveReason *string `json:"leaveReason"`
	} `json:"members"`
	Generations []struct {
		Generation int32  `json:"generation"`
		Cause      string `json:"cause"`
		Members    []struct {
			Name        string             `json:"name"`
			MemberID    string             `json:"memberId"`
			MemberEpoch *int32             `json:"memberEpoch"`
			Via         string             `json:"via"`
			Assigned    map[string][]int32 `json:"assigned"`
		} `json:"members"`
	} `json:"generations"`
}

type expectProducer struct {
	ClientID        string  `json:"clientId"`
	TransactionalID *string `json:"transactionalId"`
	ProducerID      int64   `json:"producerId"`
	Epochs          []int16 `json:"epochs"`
	Transactions    []struct {
		Epoch        int16                       `json:"epoch"`
		Records      map[string]map[string]int64 `json:"records"`
		Group        *string                     `json:"group"`
		Outcome      string                      `json:"outcome"`
		Error        *string                     `json:"error"`
		ProduceError *string                     `json:"produceError"`
	} `json:"transactions"`
	FencedBy   *string `json:"fencedBy"`
	TxnVersion string  `json:"txnVersion"`
}

type expectConsumer struct {
	ClientID       string   `json:"clientId"`
	IsolationLevel string   `json:"isolationLevel"`
	Topic          string   `json:"topic"`
	Keys           []string `json:"keys"`
}

type expectInject struct {
	Kind       string `json:"kind"`
	API        string `json:"api"`
	ClientID   string `json:"clientId"`
	Count      int    `json:"count"`
	ThrottleMs int32  `json:"throttleMs"`
	DelayMs    int32  `json:"delayMs"`
	ErrorCode  int16  `json:"errorCode"`
	Error      string `json:"error"`
	Topic      string `json:"topic"`
	Partition  *int32 `json:"partition"`
	Direction  string `json:"direction"`
	Segments   []struct {
		ClientPort int    `json:"clientPort"`
		RelSeq     uint32 `json:"relSeq"`
		Len        int    `json:"len"`
		Captured   bool   `json:"captured"`
	} `json:"segments"`
}

func readExpect(t *testing.T, capture string) *expectation {
	t.Helper()
	path := filepath.Join("..", "pcaps", strings.TrimSuffix(capture, ".pcap")+".expect.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("%v", err)
	}
	x := new(expectation)
	if err := json.Unmarshal(b, x); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return x
}

// assigned turns a report's assignment into the expectation's form.
func assigned(tps []TopicPartition) map[string][]int32 {
	out := map[string][]int32{}
	for _, tp := range tps {
		if len(tp.Partitions) > 0 {
			out[tp.Topic] = slices.Sorted(slices.Values(tp.Partitions))
		}
	}
	return out
}

func sameAssigned(a, b map[string][]int32) bool {
	clean := func(m map[string][]int32) map[string][]int32 {
		out := map[string][]int32{}
		for k, v := range m {
			if len(v) > 0 {
				out[k] = slices.Sorted(slices.Values(v))
			}
		}
		return out
	}
	return maps.EqualFunc(clean(a), clean(b), slices.Equal)
}

// endOf maps the expectation's member endings to the report's: a kill is
// a session expiry; a static member that closes without a word is
// replaced by its successor, or still a member when the capture ends.
var endOf = map[string][]string{
	"leave":        {endLeft},
	"static-leave": {endStaticLeave},
	"kill":         {endExpired},
	"close-static": {endReplaced, ""},
	"end":          {""},
}

// TestGroupsExpectations holds kwire groups against what every group
// capture's clients reported: generation by generation (or KIP-848 epoch
// by epoch), what started it and who was concerned, every member's
// assignment and how it got it; each member's ID, instance ID, session
// timeout, how it left and its KIP-800 reason.
func TestGroupsExpectations(t *testing.T) {
	for _, capture := range []string{"group-rebalance-kafkapython.pcap", "group-rebalance-kgo.pcap", "group-rebalance-sarama.pcap",
		"group-rebalance-kafkajs.pcap", "group-rebalance-kcat.pcap", "group-kip848.pcap"} {
		t.Run(capture, func(t *testing.T) {
			x := readExpect(t, capture)
			r := analyze(t, capture, Options{Groups: true}).Groups()
			for _, eg := range x.Groups {
				var g *GroupReport
				for i := range r.Groups {
					if r.Groups[i].GroupID == eg.Group {
						g = &r.Groups[i]
					}
				}
				if g == nil {
					t.Fatalf("group %s not found", eg.Group)
				}
				checkGroup(t, &eg, g)
			}
		})
	}
}

func checkGroup(t *testing.T, eg *expectGroup, g *GroupReport) {
	t.Helper()
	id := map[string]string{} // name -> member ID
	for _, m := range eg.Members {
		id[m.Name] = m.MemberID
	}
	wantProto := map[string]string{"classic": kindClassic, "consumer": kindConsumer}[eg.Protocol]
	if g.Protocol != wantProto {
		t.Errorf("protocol %q, want %q", g.Protocol, wantProto)
	}
	if eg.Protocol == "classic" && (g.Assignor == nil || *g.Assignor != eg.Assignor) {
		t.Errorf("assignor %v, want %s", g.Assignor, eg.Assignor)
	}
	// Members.
	for _, em := range eg.Members {
		var m *MemberReport
		for i := range g.Members {
			if g.Members[i].MemberID == em.MemberID {
				m = &g.Members[i]
			}
		}
		if m == nil {
			t.Errorf("member %s (%s) not found", em.Name, em.MemberID)
			continue
		}
		if m.ClientID == nil || *m.ClientID != em.ClientID {
			t.Errorf("%s: client ID %v, want %s", em.Name, m.ClientID, em.ClientID)
		}
		if (m.GroupInstanceID == nil) != (em.InstanceID == nil) || em.InstanceID != nil && *m.GroupInstanceID != *em.InstanceID {
			t.Errorf("%s: instance %v, want %v", em.Name, m.GroupInstanceID, em.InstanceID)
		}
		end := ""
		if m.End != nil {
			end = *m.End
		}
		if !slices.Contains(endOf[em.End], end) {
			t.Errorf("%s: end %q, want %q (%s)", em.Name, end, endOf[em.End], em.End)
		}
		if (m.LeaveReason == nil) != (em.LeaveReason == nil) || em.LeaveReason != nil && *m.LeaveReason != *em.LeaveReason {
			t.Errorf("%s: leave reason %v, want %v", em.Name, m.LeaveReason, em.LeaveReason)
		}
		if eg.Protocol == "classic" && (m.SessionTimeoutMs == nil || *m.SessionTimeoutMs != eg.SessionTimeoutMs) {
			t.Errorf("%s: session timeout %v, want %d", em.Name, m.SessionTimeoutMs, eg.SessionTimeoutMs)
		}
		if em.End == "leave" && m.Left.IsZero() {
			t.Errorf("%s: no leave time", em.Name)
		}
	}
	// Generations, in order.
	if len(g.GenerationsList) != len(eg.Generations) {
		var got []int32
		for _, gr := range g.GenerationsList {
			got = append(got, gr.Generation)
		}
		t.Fatalf("%d generations %v, want %d", len(got), got, len(eg.Generations))
	}
	for i, eg := range eg.Generations {
		gr := &g.GenerationsList[i]
		kind, who, _ := strings.Cut(eg.Cause, " ")
		if gr.Generation != eg.Generation || gr.Cause != kind {
			t.Errorf("#%d: generation %d cause %s, want %d %s", i, gr.Generation, gr.Cause, eg.Generation, eg.Cause)
		}
		if !slices.Contains(gr.CauseMembers, id[who]) {
			t.Errorf("generation %d (%s): cause members %v, want %s (%s)", eg.Generation, eg.Cause, gr.CauseMembers, who, id[who])
		}
		if len(gr.Members) != len(eg.Members) {
			t.Errorf("generation %d (%s): %d members, want %d", eg.Generation, eg.Cause, len(gr.Members), len(eg.Members))
		}
		for _, em := range eg.Members {
			var gm *GenerationMember
			for j := range gr.Members {
				if gr.Members[j].MemberID == em.MemberID {
					gm = &gr.Members[j]
				}
			}
			if gm == nil {
				t.Errorf("generation %d (%s): member %s (%s) missing", eg.Generation, eg.Cause, em.Name, em.MemberID)
				continue
			}
			if !sameAssigned(assigned(gm.Assigned), em.Assigned) {
				t.Errorf("generation %d (%s): %s assigned %v, want %v", eg.Generation, eg.Cause, em.Name, assigned(gm.Assigned), em.Assigned)
			}
			if gm.Via != em.Via {
				t.Errorf("generation %d (%s): %s via %s, want %s", eg.Generation, eg.Cause, em.Name, gm.Via, em.Via)
			}
			if em.MemberEpoch != nil && (gm.MemberEpoch == nil || *gm.MemberEpoch != *em.MemberEpoch) {
				t.Errorf("generation %d: %s epoch %v, want %d", eg.Generation, em.Name, gm.MemberEpoch, *em.MemberEpoch)
			}
		}
	}
}
