package analysis

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	Log        []struct {
		Ms     int64  `json:"ms"`
		Source string `json:"source"`
		Line   string `json:"line"`
	} `json:"log"`
	Wire struct {
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
	if len(g.Generations) != len(eg.Generations) {
		var got []int32
		for _, gr := range g.Generations {
			got = append(got, gr.Generation)
		}
		t.Fatalf("%d generations %v, want %d", len(got), got, len(eg.Generations))
	}
	for i, eg := range eg.Generations {
		gr := &g.Generations[i]
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

// TestTxnsExpectations holds kwire txns against what the producers
// reported (InitProducerID results and every epoch, each transaction's
// records, group, outcome and errors, who fenced whom) and what the
// consumers were told: read_committed fetches list the aborted
// transaction by its producer ID, read_uncommitted ones do not, and every
// consumer fetched the control markers.
func TestTxnsExpectations(t *testing.T) {
	for _, capture := range []string{"txn-fenced.pcap", "txn-read-committed.pcap"} {
		t.Run(capture, func(t *testing.T) {
			x := readExpect(t, capture)
			r := analyze(t, capture, Options{Transactions: true}).Transactions()
			for _, ep := range x.Producers {
				checkProducer(t, &ep, r)
			}
			pids := map[int64]bool{}
			for _, ep := range x.Producers {
				pids[ep.ProducerID] = true
			}
			for _, ec := range x.Consumers {
				var c *ConsumerReport
				for i := range r.Consumers {
					if deref(r.Consumers[i].ClientID) == ec.ClientID {
						c = &r.Consumers[i]
					}
				}
				if c == nil {
					t.Errorf("consumer %s not found", ec.ClientID)
					continue
				}
				if !slices.Equal(c.IsolationLevels, []string{ec.IsolationLevel}) {
					t.Errorf("%s: isolation %v, want %s", ec.ClientID, c.IsolationLevels, ec.IsolationLevel)
				}
				// Every transaction ends with a marker the consumer fetched.
				ended := 0
				for _, ep := range x.Producers {
					for _, tx := range ep.Transactions {
						if tx.Outcome == "commit" || tx.Outcome == "abort" {
							ended++
						}
					}
				}
				if int(c.Commits+c.Aborts) != ended {
					t.Errorf("%s: %d commit and %d abort markers, want %d", ec.ClientID, c.Commits, c.Aborts, ended)
				}
				aborted := 0
				for _, a := range c.AbortedTransactions {
					if !pids[a.ProducerID] || a.TransactionalID == nil {
						t.Errorf("%s: aborted transaction of producer %d (%v) is not the capture's", ec.ClientID, a.ProducerID, a.TransactionalID)
					}
					aborted++
				}
				if ec.IsolationLevel == "read_committed" && aborted == 0 {
					t.Errorf("%s: read_committed, no aborted transaction listed", ec.ClientID)
				}
				if ec.IsolationLevel == "read_uncommitted" && aborted != 0 {
					t.Errorf("%s: read_uncommitted, %d aborted transactions listed", ec.ClientID, aborted)
				}
			}
		})
	}
}

func checkProducer(t *testing.T, ep *expectProducer, r *TxnsReport) {
	t.Helper()
	var p *ProducerReport
	for i := range r.Producers {
		if tid := r.Producers[i].TransactionalID; tid != nil && ep.TransactionalID != nil && *tid == *ep.TransactionalID {
			p = &r.Producers[i]
		}
	}
	if p == nil {
		t.Fatalf("producer %v not found", ep.TransactionalID)
	}
	var in *InstanceReport
	for i := range p.Instances {
		if c := p.Instances[i].ClientID; c != nil && *c == ep.ClientID {
			in = &p.Instances[i]
		}
	}
	if in == nil {
		t.Fatalf("%s: no InitProducerId", ep.ClientID)
	}
	if in.ProducerID != ep.ProducerID {
		t.Errorf("%s: producer ID %d, want %d", ep.ClientID, in.ProducerID, ep.ProducerID)
	}
	var epochs []int16
	for _, e := range in.Epochs {
		epochs = append(epochs, e.Epoch)
		if e.ProducerID != ep.ProducerID {
			t.Errorf("%s: epoch %d with producer ID %d", ep.ClientID, e.Epoch, e.ProducerID)
		}
	}
	if !slices.Equal(epochs, ep.Epochs) {
		t.Errorf("%s: epochs %v, want %v", ep.ClientID, epochs, ep.Epochs)
	}
	switch {
	case ep.FencedBy == nil && in.FencedBy != nil:
		t.Errorf("%s: fenced by %s, want not fenced", ep.ClientID, deref(in.FencedBy.ClientID))
	case ep.FencedBy != nil && (in.FencedBy == nil || deref(in.FencedBy.ClientID) != *ep.FencedBy):
		t.Errorf("%s: fenced by %v, want %s", ep.ClientID, in.FencedBy, *ep.FencedBy)
	}
	var txns []TxnReport
	for _, tx := range p.Transactions {
		if tx.ClientID != nil && *tx.ClientID == ep.ClientID {
			txns = append(txns, tx)
		}
	}
	if len(txns) != len(ep.Transactions) {
		t.Fatalf("%s: %d transactions, want %d", ep.ClientID, len(txns), len(ep.Transactions))
	}
	for i, et := range ep.Transactions {
		tx := &txns[i]
		if tx.ProducerEpoch != et.Epoch || tx.Outcome != et.Outcome {
			t.Errorf("%s #%d: epoch %d %s, want %d %s", ep.ClientID, i, tx.ProducerEpoch, tx.Outcome, et.Epoch, et.Outcome)
		}
		if (tx.Error == nil) != (et.Error == nil) || et.Error != nil && *tx.Error != *et.Error {
			t.Errorf("%s #%d: EndTxn error %v, want %v", ep.ClientID, i, tx.Error, et.Error)
		}
		if (tx.ProduceError == nil) != (et.ProduceError == nil) || et.ProduceError != nil && *tx.ProduceError != *et.ProduceError {
			t.Errorf("%s #%d: produce error %v, want %v", ep.ClientID, i, tx.ProduceError, et.ProduceError)
		}
		wantGroups := []string{}
		if et.Group != nil {
			wantGroups = []string{*et.Group}
		}
		if !slices.Equal(tx.Groups, wantGroups) {
			t.Errorf("%s #%d: groups %v, want %v", ep.ClientID, i, tx.Groups, wantGroups)
		}
		got := map[string]map[string]int64{}
		for _, rr := range tx.Records {
			if got[rr.Topic] == nil {
				got[rr.Topic] = map[string]int64{}
			}
			got[rr.Topic][strconv.Itoa(int(rr.Partition))] += rr.Records
			if rr.FirstSeq == nil || rr.LastSequence == nil || int64(*rr.LastSequence-*rr.FirstSeq+1) != rr.Records {
				t.Errorf("%s #%d: %s-%d sequences %v-%v for %d records", ep.ClientID, i, rr.Topic, rr.Partition, rr.FirstSeq, rr.LastSequence, rr.Records)
			}
		}
		if !maps.EqualFunc(got, et.Records, maps.Equal) {
			t.Errorf("%s #%d: records %v, want %v", ep.ClientID, i, got, et.Records)
		}
		// v1 transactions add their partitions; v2 (KIP-890) do not.
		if (len(tx.Added) > 0) != (ep.TxnVersion == "v1") {
			t.Errorf("%s #%d: added %v with transactions %s", ep.ClientID, i, tx.Added, ep.TxnVersion)
		}
		if tx.Outcome != outcomeOpen && tx.DurationMs == nil {
			t.Errorf("%s #%d: no duration", ep.ClientID, i)
		}
	}
}

// assignedLine is a client's own log line of an assignment (its rebalance
// callback, as capgen logged it): "assigned member=ID generation=N
// topic[0 1 2]" (generation -1 when the library does not say).
var assignedLine = regexp.MustCompile(`^assigned member=(\S+) generation=(-?\d+) (.*)$`)

var topicParts = regexp.MustCompile(`(\S+)\[([\d ]*)\]`)

// TestGroupsAgainstClientLogs holds each member's assignments, in order,
// against the lines its own rebalance callback logged (the expectation
// files' log): the member's generations in kwire groups give the same
// partitions in the same order, at the generation the client named when
// it names one.
func TestGroupsAgainstClientLogs(t *testing.T) {
	for _, capture := range []string{"group-rebalance-kafkapython.pcap", "group-rebalance-kgo.pcap", "group-rebalance-sarama.pcap",
		"group-rebalance-kafkajs.pcap", "group-rebalance-kcat.pcap"} {
		t.Run(capture, func(t *testing.T) {
			x := readExpect(t, capture)
			r := analyze(t, capture, Options{Groups: true}).Groups()
			type assignment struct {
				gen int32
				tps map[string][]int32
			}
			logged := map[string][]assignment{}
			var order []string
			for _, l := range x.Log {
				m := assignedLine.FindStringSubmatch(l.Line)
				if m == nil {
					continue
				}
				gen, _ := strconv.Atoi(m[2])
				tps := map[string][]int32{}
				for _, tp := range topicParts.FindAllStringSubmatch(m[3], -1) {
					for _, p := range strings.Fields(tp[2]) {
						n, _ := strconv.Atoi(p)
						tps[tp[1]] = append(tps[tp[1]], int32(n))
					}
				}
				if _, ok := logged[m[1]]; !ok {
					order = append(order, m[1])
				}
				logged[m[1]] = append(logged[m[1]], assignment{int32(gen), tps})
			}
			if len(logged) == 0 {
				t.Fatal("no assignment logged")
			}
			for _, id := range order {
				var got []assignment
				for _, g := range r.Groups {
					for _, gn := range g.Generations {
						if gn.Cause == causeStaticRejoin && gn.DurationMs == nil && !slices.Contains(gn.CauseMembers, id) {
							continue // a static successor took a place: the others kept theirs, told nothing
						}
						for _, gm := range gn.Members {
							if gm.MemberID == id && gm.Assigned != nil {
								got = append(got, assignment{gn.Generation, assigned(gm.Assigned)})
							}
						}
					}
				}
				want := logged[id]
				if len(got) != len(want) {
					t.Errorf("%s: %d assignments, the client logged %d", id, len(got), len(want))
					continue
				}
				for i := range want {
					if !sameAssigned(got[i].tps, want[i].tps) || want[i].gen >= 0 && got[i].gen != want[i].gen {
						t.Errorf("%s #%d: generation %d %v, the client logged generation %d %v", id, i, got[i].gen, got[i].tps, want[i].gen, want[i].tps)
					}
				}
			}
		})
	}
}
