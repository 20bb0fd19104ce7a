package pcaps

// TestAnswersAgainstClients holds the answers of kwire read's lines and
// facts against what the clients themselves reported while the capture
// was recorded (the <capture>.expect.json files, tools/capgen/expect.go):
//
//   - classic groups: for every generation, each member that got its
//     assignment in a rebalance has a SyncGroup whose response gives it
//     exactly the partitions the client logged, and the line shows them;
//   - KIP-848 groups: each member's assignment at each member epoch is in
//     a ConsumerGroupHeartbeat response at that epoch, and on its line;
//   - producers: the producer ID and the epochs (InitProducerId, the
//     KIP-890 bumps of EndTxn v5+) the client was given, and each
//     transaction's EndTxn in order: epoch, commit or abort, the error
//     that ended a fenced one.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// clientsSay is the part of an expectation file the test reads.
type clientsSay struct {
	Groups []struct {
		Group       string `json:"group"`
		Protocol    string `json:"protocol"`
		Generations []struct {
			Generation int32 `json:"generation"`
			Members    []struct {
				Name        string             `json:"name"`
				MemberID    string             `json:"memberId"`
				MemberEpoch *int32             `json:"memberEpoch"`
				Via         string             `json:"via"`
				Assigned    map[string][]int32 `json:"assigned"`
			} `json:"members"`
		} `json:"generations"`
	} `json:"groups"`
	Producers []struct {
		ClientID        string  `json:"clientId"`
		TransactionalID *string `json:"transactionalId"`
		ProducerID      int64   `json:"producerId"`
		Epochs          []int16 `json:"epochs"`
		Transactions    []struct {
			Epoch   int16   `json:"epoch"`
			Outcome string  `json:"outcome"`
			Error   *string `json:"error"`
		} `json:"transactions"`
	} `json:"producers"`
}

// answerDoc is the part of an exchange's --json object the test reads.
type answerDoc struct {
	Kind     string   `json:"kind"`
	API      string   `json:"api"`
	ClientID *string  `json:"clientId"`
	Subject  string   `json:"subject"`
	Errors   []string `json:"errors"`
	Response *struct {
		Size int `json:"size"`
	} `json:"response"`
	Facts *struct {
		Group *struct {
			GroupID       *string `json:"groupId"`
			MemberID      *string `json:"memberId"`
			GenerationID  *int32  `json:"generationId"`
			AssignedEpoch *int32  `json:"assignedEpoch"`
			// Assignment is nil when the response carries none (a
			// KIP-848 heartbeat whose assignment did not change).
			Assignment *[]struct {
				Topic      *string `json:"topic"`
				TopicID    *string `json:"topicId"`
				Partitions []int32 `json:"partitions"`
			} `json:"assignment"`
		} `json:"group"`
		Producer *struct {
			TransactionalID  *string `json:"transactionalId"`
			ProducerID       *int64  `json:"producerId"`
			ProducerEpoch    *int16  `json:"producerEpoch"`
			NewProducerID    *int64  `json:"newProducerId"`
			NewProducerEpoch *int16  `json:"newProducerEpoch"`
		} `json:"producer"`
		Commit *bool `json:"commit"`
	} `json:"facts"`
}

func TestAnswersAgainstClients(t *testing.T) {
	files, _ := filepath.Glob("*.expect.json")
	if len(files) == 0 {
		t.Fatal("no *.expect.json in the package directory")
	}
	for _, f := range files {
		c := strings.TrimSuffix(f, ".expect.json") + ".pcap"
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var say clientsSay
			if err := json.Unmarshal(raw, &say); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			r := kwire(t, "read", "--color=never", "--port", info(t, c).ports, "--json", c)
			var docs []*answerDoc
			for i, line := range strings.Split(string(r.stdout), "\n") {
				if line == "" {
					continue
				}
				d := &answerDoc{}
				if err := json.Unmarshal([]byte(line), d); err != nil {
					t.Fatalf("--json line %d: %v", i+1, err)
				}
				if d.Facts != nil && d.Response != nil {
					docs = append(docs, d)
				}
			}
			checkGroups(t, &say, docs)
			checkProducers(t, &say, docs)
		})
	}
}

// assignedAs writes an assignment as the test compares it: topics in
// order of name, each with its partitions in order ("t[0,1] u[2]").
func assignedAs(m map[string][]int32) string {
	var parts []string
	for _, topic := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		ps := slices.Clone(m[topic])
		slices.Sort(ps)
		parts = append(parts, topic+partitionList(ps))
	}
	return strings.Join(parts, " ")
}

// partitionList writes partitions as the line does: "[0,1,2]".
func partitionList(ps []int32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// ownAssignment is an exchange's own assignment (the member's, in the
// response) in assignedAs's form, and whether it carries one.
func ownAssignment(d *answerDoc) (string, bool) {
	g := d.Facts.Group
	if g == nil || g.Assignment == nil {
		return "", false
	}
	m := map[string][]int32{}
	for _, a := range *g.Assignment {
		name := ""
		switch {
		case a.Topic != nil:
			name = *a.Topic
		case a.TopicID != nil:
			name = *a.TopicID
		}
		m[name] = append(m[name], a.Partitions...)
	}
	return assignedAs(m), true
}

// lineShows says whether a line's subject shows a topic's partitions
// in any order: want is one "topic[0,1]" part of assignedAs.
func lineShows(subject, want string) bool {
	topic, _, _ := strings.Cut(want, "[")
	for rest := subject; ; {
		i := strings.Index(rest, topic+"[")
		if i < 0 {
			return false
		}
		rest = rest[i+len(topic)+1:]
		list, _, ok := strings.Cut(rest, "]")
		if !ok {
			return false
		}
		var ps []int32
		for _, f := range strings.Split(list, ",") {
			var p int32
			if _, err := fmt.Sscan(f, &p); err == nil {
				ps = append(ps, p)
			}
		}
		slices.Sort(ps)
		if topic+partitionList(ps) == want {
			return true
		}
	}
}

func checkGroups(t *testing.T, say *clientsSay, docs []*answerDoc) {
	t.Helper()
	for _, g := range say.Groups {
		// held[member][epoch] are the assignments a KIP-848 member held
		// at a member epoch, response by response: a response without an
		// assignment leaves the last one in force.
		held := map[string]map[int32][]string{}
		current := map[string]string{}
		holder := map[string]*answerDoc{} // the first line giving an assignment at an epoch
		key := func(id string, e int32, own string) string { return fmt.Sprint(id, "\x00", e, "\x00", own) }
		for _, d := range docs {
			fg := d.Facts.Group
			if g.Protocol != "consumer" || d.API != "ConsumerGroupHeartbeat" || fg == nil || fg.GroupID == nil ||
				*fg.GroupID != g.Group || fg.MemberID == nil || fg.AssignedEpoch == nil {
				continue
			}
			id, e := *fg.MemberID, *fg.AssignedEpoch
			if own, ok := ownAssignment(d); ok {
				current[id] = own
				if holder[key(id, e, own)] == nil {
					holder[key(id, e, own)] = d
				}
			}
			if held[id] == nil {
				held[id] = map[int32][]string{}
			}
			held[id][e] = append(held[id][e], current[id])
		}
		for _, gen := range g.Generations {
			for _, m := range gen.Members {
				want := assignedAs(m.Assigned)
				where := fmt.Sprintf("group %s generation %d member %s (%s)", g.Group, gen.Generation, m.Name, m.Via)
				var found *answerDoc
				var seen []string
				switch g.Protocol {
				case "classic":
					if m.Via != "rebalance" {
						continue // a static rejoin: no SyncGroup of its own
					}
					for _, d := range docs {
						fg := d.Facts.Group
						if d.API != "SyncGroup" || fg == nil || fg.GroupID == nil || *fg.GroupID != g.Group ||
							fg.MemberID == nil || *fg.MemberID != m.MemberID || fg.GenerationID == nil || *fg.GenerationID != gen.Generation {
							continue
						}
						own, _ := ownAssignment(d)
						seen = append(seen, own)
						if own == want && found == nil {
							found = d
						}
					}
				case "consumer":
					if m.MemberEpoch == nil {
						t.Errorf("%s: no member epoch in the expectation", where)
						continue
					}
					seen = held[m.MemberID][*m.MemberEpoch]
					if !slices.Contains(seen, want) {
						break
					}
					// The line to look at is the last response that gave
					// this assignment at or before the epoch.
					for e := *m.MemberEpoch; e >= 0 && found == nil; e-- {
						found = holder[key(m.MemberID, e, want)]
					}
					if found == nil {
						t.Errorf("%s: no line shows %s", where, want)
						continue
					}
				default:
					t.Fatalf("group %s: protocol %q", g.Group, g.Protocol)
				}
				if found == nil {
					t.Errorf("%s: the client logged %s; the responses assign %q", where, want, seen)
					continue
				}
				for _, part := range strings.Split(want, " ") {
					if !lineShows(found.Subject, part) {
						t.Errorf("%s: the line %q does not show %s", where, found.Subject, part)
					}
				}
			}
		}
	}
}

func checkProducers(t *testing.T, say *clientsSay, docs []*answerDoc) {
	t.Helper()
	for _, p := range say.Producers {
		var epochs []int16
		var ends []*answerDoc
		for _, d := range docs {
			pr := d.Facts.Producer
			if pr == nil || d.ClientID == nil || *d.ClientID != p.ClientID {
				continue
			}
			switch d.API {
			case "InitProducerId":
				if pr.NewProducerID == nil || *pr.NewProducerID < 0 {
					continue
				}
				if *pr.NewProducerID != p.ProducerID {
					t.Errorf("%s: InitProducerId gave producer ID %d, the client logged %d", p.ClientID, *pr.NewProducerID, p.ProducerID)
				}
			case "EndTxn":
				ends = append(ends, d)
			default:
				continue
			}
			if e := pr.NewProducerEpoch; e != nil && *e >= 0 && !slices.Contains(epochs, *e) {
				epochs = append(epochs, *e)
			}
		}
		if !slices.Equal(epochs, p.Epochs) {
			t.Errorf("%s: the wire gave epochs %v, the client logged %v", p.ClientID, epochs, p.Epochs)
		}
		if len(ends) != len(p.Transactions) {
			t.Errorf("%s: %d EndTxn on the wire, the client logged %d transactions", p.ClientID, len(ends), len(p.Transactions))
			continue
		}
		for i, tx := range p.Transactions {
			d, pr := ends[i], ends[i].Facts.Producer
			where := fmt.Sprintf("%s transaction %d (%s at epoch %d)", p.ClientID, i+1, tx.Outcome, tx.Epoch)
			if pr.ProducerEpoch == nil || *pr.ProducerEpoch != tx.Epoch {
				t.Errorf("%s: EndTxn at epoch %s", where, showPtr(pr.ProducerEpoch))
			}
			if pr.ProducerID == nil || *pr.ProducerID != p.ProducerID {
				t.Errorf("%s: EndTxn of producer %s", where, showPtr(pr.ProducerID))
			}
			if !strings.Contains(d.Subject, fmt.Sprintf("epoch=%d", tx.Epoch)) {
				t.Errorf("%s: the line %q does not show the epoch", where, d.Subject)
			}
			switch tx.Outcome {
			case "commit", "abort":
				if d.Facts.Commit == nil || *d.Facts.Commit != (tx.Outcome == "commit") || len(d.Errors) > 0 {
					t.Errorf("%s: EndTxn commit=%s errors=%q", where, showPtr(d.Facts.Commit), d.Errors)
				}
				word := strings.ToUpper(tx.Outcome)
				if !strings.Contains(d.Subject, word) {
					t.Errorf("%s: the line %q does not say %s", where, d.Subject, word)
				}
			case "fenced":
				if tx.Error == nil || !slices.Contains(d.Errors, *tx.Error) {
					t.Errorf("%s: EndTxn errors %q, the client was told %v", where, d.Errors, tx.Error)
				}
			default:
				t.Errorf("%s: outcome %q", where, tx.Outcome)
			}
		}
	}
}

// showPtr writes a JSON value that may be null.
func showPtr[T any](p *T) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}
