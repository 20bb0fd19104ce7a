package pcaps

// TestViewsAgree holds kwire's views of one capture to one another: they
// all read the same facts (package facts), so what one says about a topic,
// an error or a partition the others must say too. For every capture:
//
//   - an exchange's "topics" are the topics of its facts, and its "errors"
//     the distinct names of its facts' errors;
//   - the line subject --json gives is the one the text line shows;
//   - `kwire stats` counts, per API and version, as many errors of each
//     code as the exchanges' facts hold, and per topic-partition as many
//     produced and fetched batches and records;
//   - `read --topic T` and `read --filter '"T" in topics'` select exactly
//     the exchanges whose "topics" hold T.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
)

// agreeDoc is the part of an exchange's --json object the views share.
type agreeDoc struct {
	Kind       string   `json:"kind"`
	API        string   `json:"api"`
	APIVersion int16    `json:"apiVersion"`
	Subject    string   `json:"subject"`
	Topics     []string `json:"topics"`
	Errors     []string `json:"errors"`
	SASL       *struct {
		Mechanism string `json:"mechanism"`
		User      string `json:"user"`
	} `json:"sasl"`
	Guess *struct {
		API string `json:"api"`
	} `json:"guess"`
	Facts *struct {
		Topics []struct {
			Name       *string `json:"name"`
			TopicID    *string `json:"topicId"`
			Partitions []struct {
				Partition int32 `json:"partition"`
				Records   *struct {
					Batches        int    `json:"batches"`
					Count          *int64 `json:"count"`
					ControlBatches int    `json:"controlBatches"`
					Commits        int    `json:"commits"`
					Aborts         int    `json:"aborts"`
					Markers        []struct {
						Type string `json:"type"`
					} `json:"markers"`
				} `json:"records"`
				AbortedTransactions *int32 `json:"abortedTransactions"`
				Aborted             []struct {
					ProducerID int64 `json:"producerId"`
				} `json:"aborted"`
			} `json:"partitions"`
		} `json:"topics"`
		Errors []struct {
			Code int16  `json:"code"`
			Name string `json:"name"`
		} `json:"errors"`
		Group any `json:"group"`
	} `json:"facts"`
}

// agreeDocs reads the exchanges of a --json stream.
func agreeDocs(t *testing.T, out []byte) []*agreeDoc {
	t.Helper()
	var docs []*agreeDoc
	for i, line := range bytes.Split(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		d := &agreeDoc{}
		if err := json.Unmarshal(line, d); err != nil {
			t.Fatalf("--json line %d: %v", i+1, err)
		}
		if slices.Contains(eventKinds, d.Kind) {
			continue
		}
		if d.Facts == nil {
			t.Fatalf("--json line %d (%s): no facts", i+1, d.API)
		}
		docs = append(docs, d)
	}
	return docs
}

// agreeStats is the part of `kwire stats --json` the test compares.
type agreeStats struct {
	APIs []struct {
		Name    string `json:"api"`
		Version int16  `json:"apiVersion"`
		Errors  []struct {
			Code  int16 `json:"code"`
			Count int64 `json:"count"`
		} `json:"errors"`
	} `json:"apis"`
	Partitions []struct {
		Topic     string `json:"topic"`
		TopicID   string `json:"topicId"`
		Partition int32  `json:"partition"`
		Produce   struct {
			Batches int   `json:"batches"`
			Records int64 `json:"records"`
		} `json:"produce"`
		Fetch struct {
			Batches int   `json:"batches"`
			Records int64 `json:"records"`
		} `json:"fetch"`
	} `json:"partitions"`
}

// flow is what a topic-partition carried in one direction.
type flow struct {
	batches int
	records int64
}

func TestViewsAgree(t *testing.T) {
	for _, c := range captures(t) {
		t.Run(c, func(t *testing.T) {
			t.Parallel()
			ports := []string{"--color=never", "--port", info(t, c).ports}
			if kl, ok := KeyLog(c); ok {
				ports = append(ports, "--tls-keylog", kl)
			}
			js := kwire(t, append(append([]string{"read"}, ports...), "--json", c)...)
			docs := agreeDocs(t, js.stdout)
			if len(docs) == 0 {
				if _, ok := KeyLog(c); !ok && strings.Contains(c, "tls") {
					t.Skipf("%s is TLS without a key log: no exchange to compare", c)
				}
				t.Fatalf("no exchanges in kwire read --json %s", c)
			}
			text := kwire(t, append(append([]string{"read"}, ports...), c)...)

			apiErrs := map[string]int64{} // "api vN code" → count
			prod := map[string]flow{}     // "topic/partition" → produced
			fetch := map[string]flow{}    // fetched
			selected := map[string]int{}  // topic → exchanges naming it
			for i, d := range docs {
				where := fmt.Sprintf("exchange %d (%s v%d)", i+1, d.API, d.APIVersion)
				var topics, errs []string
				for _, tp := range d.Facts.Topics {
					name := ""
					switch {
					case tp.Name != nil:
						name = *tp.Name
					case tp.TopicID != nil && *tp.TopicID == "AAAAAAAAAAAAAAAAAAAAAA":
						name = "(zero topic ID)" // Kafka's "no ID" (docs/json.md)
					case tp.TopicID != nil:
						name = *tp.TopicID
					}
					if name != "" && !slices.Contains(topics, name) {
						topics = append(topics, name)
					}
					for _, p := range tp.Partitions {
						// The lists are the counts' first 64.
						if n := len(p.Aborted); (p.AbortedTransactions == nil && n != 0) ||
							(p.AbortedTransactions != nil && n != min(int(*p.AbortedTransactions), 64)) {
							t.Errorf("%s %s[%d]: %d aborted transactions listed, abortedTransactions %v", where, name, p.Partition, n, p.AbortedTransactions)
						}
						if p.Records == nil {
							continue
						}
						commits, aborts := 0, 0
						for _, m := range p.Records.Markers {
							switch m.Type {
							case "COMMIT":
								commits++
							case "ABORT":
								aborts++
							default:
								t.Errorf("%s %s[%d]: marker type %q", where, name, p.Partition, m.Type)
							}
						}
						if r := p.Records; commits+aborts != min(r.Commits+r.Aborts, 64) ||
							(commits+aborts < 64 && (commits != r.Commits || aborts != r.Aborts)) ||
							(commits+aborts > 0 && r.ControlBatches == 0) {
							t.Errorf("%s %s[%d]: markers %d COMMIT %d ABORT, counted %d and %d in %d control batches",
								where, name, p.Partition, commits, aborts, r.Commits, r.Aborts, r.ControlBatches)
						}
						key := fmt.Sprintf("%s/%d", name, p.Partition)
						var m map[string]flow
						switch d.API {
						case "Produce":
							m = prod
						case "Fetch":
							m = fetch
						default:
							continue
						}
						f := m[key]
						f.batches += p.Records.Batches
						if p.Records.Count != nil {
							f.records += *p.Records.Count
						}
						m[key] = f
					}
				}
				groupTopics(d.Facts.Group, func(name string) {
					if !slices.Contains(topics, name) {
						topics = append(topics, name)
					}
				})
				for _, e := range d.Facts.Errors {
					if !slices.Contains(errs, e.Name) {
						errs = append(errs, e.Name)
					}
					apiErrs[fmt.Sprintf("%s v%d %d", d.API, d.APIVersion, e.Code)]++
				}
				if !sameSet(topics, d.Topics) {
					t.Errorf("%s: topics %q, its facts name %q", where, d.Topics, topics)
				}
				if !sameSet(errs, d.Errors) {
					t.Errorf("%s: errors %q, its facts hold %q", where, d.Errors, errs)
				}
				if d.Subject != "" && !bytes.Contains(text.stdout, []byte(d.Subject)) {
					t.Errorf("%s: subject %q is on no text line", where, clip(d.Subject))
				}
				for _, tp := range d.Topics {
					selected[tp]++
				}
			}

			st := kwire(t, append(append([]string{"stats"}, ports...), "--json", c)...)
			var rep agreeStats
			if err := json.Unmarshal(st.stdout, &rep); err != nil {
				t.Fatalf("kwire stats --json: %v\n%s", err, clip(string(st.stderr)))
			}
			statErrs := map[string]int64{}
			for _, a := range rep.APIs {
				for _, e := range a.Errors {
					statErrs[fmt.Sprintf("%s v%d %d", a.Name, a.Version, e.Code)] += e.Count
				}
			}
			if !maps.Equal(statErrs, apiErrs) {
				t.Errorf("stats errors per API/version/code:\n  stats %v\n  facts %v", statErrs, apiErrs)
			}
			statProd, statFetch := map[string]flow{}, map[string]flow{}
			for _, p := range rep.Partitions {
				name := p.Topic
				if name == "" {
					name = p.TopicID
				}
				key := fmt.Sprintf("%s/%d", name, p.Partition)
				if p.Produce.Batches > 0 {
					statProd[key] = flow{p.Produce.Batches, p.Produce.Records}
				}
				if p.Fetch.Batches > 0 {
					statFetch[key] = flow{p.Fetch.Batches, p.Fetch.Records}
				}
			}
			dropEmpty(prod)
			dropEmpty(fetch)
			if !maps.Equal(statProd, prod) {
				t.Errorf("produced per partition:\n  stats %v\n  facts %v", statProd, prod)
			}
			if !maps.Equal(statFetch, fetch) {
				t.Errorf("fetched per partition:\n  stats %v\n  facts %v", statFetch, fetch)
			}

			// The selections, for the three topics named most often (a
			// topic ID stands for an unnamed topic: --topic takes both).
			names := slices.Collect(maps.Keys(selected))
			sort.Slice(names, func(i, j int) bool {
				if selected[names[i]] != selected[names[j]] {
					return selected[names[i]] > selected[names[j]]
				}
				return names[i] < names[j]
			})
			// sasl and guess, by the JSON's names in the filter language.
			sasl, guess := map[string]int{}, 0
			for _, d := range docs {
				if d.SASL != nil {
					sasl[d.SASL.Mechanism+"/"+d.SASL.User]++
				}
				if d.Guess != nil {
					guess++
				}
			}
			for mu, n := range sasl {
				m, u, _ := strings.Cut(mu, "/")
				expr := fmt.Sprintf("sasl?.mechanism == %q && sasl?.user == %q", m, u)
				if got := agreeDocs(t, kwire(t, append(append([]string{"read"}, ports...), "--json", "--filter", expr, c)...).stdout); len(got) != n {
					t.Errorf("--filter %s selects %d exchanges, the JSON has %d", expr, len(got), n)
				}
			}
			if got := agreeDocs(t, kwire(t, append(append([]string{"read"}, ports...), "--json", "--filter", "guess != nil", c)...).stdout); len(got) != guess {
				t.Errorf("--filter 'guess != nil' selects %d exchanges, the JSON has %d with a guess", len(got), guess)
			}

			for _, name := range names[:min(3, len(names))] {
				byFlag := agreeDocs(t, kwire(t, append(append([]string{"read"}, ports...), "--json", "--topic", name, c)...).stdout)
				expr := fmt.Sprintf("%q in topics", name)
				byExpr := agreeDocs(t, kwire(t, append(append([]string{"read"}, ports...), "--json", "--filter", expr, c)...).stdout)
				if len(byFlag) != selected[name] || len(byExpr) != selected[name] {
					t.Errorf("topic %q: %d exchanges name it, --topic selects %d, --filter %s selects %d",
						name, selected[name], len(byFlag), expr, len(byExpr))
				}
				for _, d := range byFlag {
					if !slices.Contains(d.Topics, name) {
						t.Errorf("--topic %s selected %s v%d naming %q", name, d.API, d.APIVersion, d.Topics)
					}
				}
			}
		})
	}
}

// sameSet says whether two lists hold the same strings.
func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y)) && len(a) == len(b)
}

// groupTopics calls add with each topic a group's facts name: the
// subscriptions' topic lists and every topic-partitions list (assignments,
// owned partitions), by name or else by topic ID.
func groupTopics(v any, add func(string)) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["partitions"]; ok {
			if s, ok := v["topic"].(string); ok {
				add(s)
			} else if s, ok := v["topicId"].(string); ok {
				add(s)
			}
		}
		if ts, ok := v["topics"].([]any); ok {
			for _, t := range ts {
				if s, ok := t.(string); ok {
					add(s)
				}
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			groupTopics(v[k], add)
		}
	case []any:
		for _, e := range v {
			groupTopics(e, add)
		}
	}
}

// dropEmpty removes the partitions that carried no batch.
func dropEmpty(m map[string]flow) {
	maps.DeleteFunc(m, func(_ string, f flow) bool { return f.batches == 0 })
}
