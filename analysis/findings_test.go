package analysis

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/reassembly"
	"reflect"
	"strconv"
)

// wantFindings is, for every golden capture, the rules that must fire on
// it; no other rule may. Each line says why its rules fire (the
// situation captures were made to show them; on the protocol captures
// they fire where the rule says they should).
var wantFindings = map[string][]string{
	"group-kip848.pcap":                {RuleMemberExpired},                     // a is killed and fenced after the session timeout
	"group-rebalance-kafkajs.pcap":     {RuleMemberExpired},                     // a is killed
	"group-rebalance-kafkapython.pcap": {RuleHeadOfLine, RuleMemberExpired},     // kafka-python sends Metadata behind its long-polling Fetch; a is killed
	"group-rebalance-kcat.pcap":        {RuleHeadOfLine, RuleMemberExpired},     // librdkafka pipelines ListOffsets behind its Fetch; a is killed
	"group-rebalance-kgo.pcap":         {RuleRebalanceStorm, RuleMemberExpired}, // 5 rebalances in 4 s; a is killed
	"group-rebalance-sarama.pcap":      {RuleMemberExpired},
	"kafkago-produce-consume.pcap":     {RuleSkippedAPIVer}, // kafka-go's Reader never asks ApiVersions under its client ID
	"kafkajs-produce-consume.pcap":     nil,
	"kafkapython-produce-consume.pcap": nil, // its later connections skip ApiVersions after the bootstrap one asked
	"kcat-produce-consume.pcap":        nil,
	"kgo-large-value.pcap":             {RuleLargeBatch}, // the 1.5 MB uncompressed record
	"kgo-produce-consume.pcap":         nil,
	"kgo-tls.pcap":                     nil,
	"leader-move.pcap":                 {RuleTinyBatches, RuleLeadership, RuleProduceRetry, RuleFetchRetry}, // one record a request every 50 ms; the moves
	"lossy-network.pcap":               {RuleSlowNetwork},                                                   // retransmissions; responses lost before the capture point told by the broker's IP ID gaps
	"metadata-storm.pcap":              {RuleMetadataStorm, RuleChurn, RuleTinyBatches},                     // sarama's 50 ms refresh; a client per record
	"mixed-versions.pcap":              {RuleDowngrade},
	"sarama-legacy-message-sets.pcap":  {RuleSkippedAPIVer}, // clients of brokers before 0.10: no ApiVersions
	"sarama-produce-consume.pcap":      nil,
	"sasl-plain.pcap":                  {RuleSASLFailed},    // the wrong password
	"sasl-scram.pcap":                  {RuleSASLFailed},    // the unknown user
	"sasl-v0-raw.pcap":                 {RuleSkippedAPIVer}, // SASL v0 sarama skips ApiVersions
	"skipped-apiversions.pcap":         {RuleSkippedAPIVer, RuleUnadvertised},
	"slow-broker.pcap":                 {RuleSlowBroker},
	"throttle.pcap":                    {RuleThrottled, RuleQuota},
	"txn-fenced.pcap":                  {RuleFenced},
	"txn-read-committed.pcap":          nil,
	"unsupported-versions.pcap":        {RuleDowngrade, RuleUnadvertised},
	// The TLS captures, decrypted with their key logs.
	"kafkajs-tls.pcap":         nil,
	"kafkapython-tls.pcap":     nil,
	"kgo-tls-cbc-openssl.pcap": nil,
	"kgo-tls-keyupdate.pcap":   nil,
	"kgo-tls-sasl-scram.pcap":  nil,
	"kgo-tls12.pcap":           nil,
	"kgo-tls13.pcap":           nil,
}

// TestFindingsCaptures runs every rule over every golden capture: the
// rules listed fire, no other does (false positives), and every finding
// is well formed (a known rule and severity, packets as evidence, a
// detail, times in order).
func TestFindingsCaptures(t *testing.T) {
	caps, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(caps) == 0 {
		t.Skip("no captures (make pcaps)")
	}
	for _, path := range caps {
		name := filepath.Base(path)
		want, ok := wantFindings[name]
		if !ok {
			t.Errorf("%s: not in wantFindings: say which rules it must raise", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			r := analyze(t, name, Options{}).Findings()
			got := map[string]bool{}
			for _, f := range r.Findings {
				got[f.Rule] = true
				checkFinding(t, &f)
			}
			for _, id := range want {
				if !got[id] {
					t.Errorf("%s did not fire", id)
				}
			}
			for id := range got {
				if !slices.Contains(want, id) {
					for _, f := range r.Findings {
						if f.Rule == id {
							t.Errorf("%s fired: %s %s: %s %v", id, f.Time, f.Subject, f.Detail, f.Packets)
						}
					}
				}
			}
			if r.Dropped != 0 {
				t.Errorf("%d findings dropped", r.Dropped)
			}
		})
	}
}

func checkFinding(t *testing.T, f *Finding) {
	t.Helper()
	r := ruleOf(f.Rule)
	if r.Summary == "" || f.Severity != r.Severity {
		t.Errorf("%s: unknown rule or severity %q", f.Rule, f.Severity)
	}
	if len(f.Packets) == 0 || f.Detail == "" || f.Subject == "" || f.Count < 1 || f.Time.IsZero() || time.Time(f.Last).Before(time.Time(f.Time)) {
		t.Errorf("%s: malformed %+v", f.Rule, f)
	}
	for _, p := range f.Packets {
		if p <= 0 {
			t.Errorf("%s: packet %d", f.Rule, p)
		}
	}
}

func findingsOf(r *FindingsReport, rule string) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

// The findings of the situation captures hold against what capgen
// injected and the clients reported.
func TestFindingsExpectations(t *testing.T) {
	t.Run("throttle", func(t *testing.T) {
		x := readExpect(t, "throttle.pcap")
		r := analyze(t, "throttle.pcap", Options{Findings: true}).Findings()
		th := findingsOf(r, RuleThrottled)
		for _, in := range x.Injections {
			if in.ThrottleMs == 0 {
				continue
			}
			found := false
			for _, f := range th {
				if *f.ClientID == in.ClientID && *f.API == in.API {
					found = true
					if f.Count != int64(in.Count) || !strings.Contains(f.Detail, units(time.Duration(in.ThrottleMs)*time.Millisecond)) {
						t.Errorf("%s %s: %d throttled (%s), injected %d of %dms", in.ClientID, in.API, f.Count, f.Detail, in.Count, in.ThrottleMs)
					}
				}
			}
			if !found {
				t.Errorf("%s %s: throttled %d times, no finding", in.ClientID, in.API, in.Count)
			}
		}
		for _, f := range th {
			if strings.Contains(*f.ClientID, "unthrottled") {
				t.Errorf("unthrottled client throttled: %+v", f)
			}
		}
		if q := findingsOf(r, RuleQuota); len(q) != 1 || *q[0].ClientID != "capgen-kgo-throttle-admin" || q[0].Count != 1 {
			t.Errorf("quota findings %+v", q)
		}
	})
	t.Run("slow-broker", func(t *testing.T) {
		x := readExpect(t, "slow-broker.pcap")
		r := analyze(t, "slow-broker.pcap", Options{Findings: true}).Findings()
		sb := findingsOf(r, RuleSlowBroker)
		if len(sb) != 1 || *sb[0].API != "Produce" || sb[0].Count != int64(x.Wire.SlowResponses["Produce"]) || sb[0].Split == nil {
			t.Fatalf("slow-broker findings %+v", sb)
		}
		delay := time.Duration(x.Injections[0].DelayMs) * time.Millisecond
		sp := sb[0].Split
		if sp.Verdict != verdictBroker || sp.BrokerMs.Duration() < delay || sp.NetworkMs.Duration() > 5*time.Millisecond || sp.Retransmissions != 0 {
			t.Errorf("split %+v, want the broker's %s", sp, delay)
		}
	})
	t.Run("lossy-network", func(t *testing.T) {
		x := readExpect(t, "lossy-network.pcap")
		r := analyze(t, "lossy-network.pcap", Options{Findings: true}).Findings()
		var net int64
		for _, f := range findingsOf(r, RuleSlowNetwork) {
			net += f.Count
			sp := f.Split
			if sp.Verdict != verdictNetwork || sp.RoundTripMs == nil || sp.RoundTripMs.Duration() < 40*time.Millisecond || sp.Retransmissions+sp.OutOfOrder == 0 {
				t.Errorf("%s: split %+v", f.Subject, sp)
			}
		}
		// A response lost before the capture point (the client's side)
		// arrives once, late, as its retransmission: the broker (Linux)
		// numbers its packets one by one, and the number the lost copy
		// took is missing before it, so its time is the network's.
		var broker int64
		for _, f := range findingsOf(r, RuleSlowBroker) {
			broker += f.Count
		}
		hidden, told := 0, 0
		for _, in := range x.Injections {
			for _, s := range in.Segments {
				if !s.Captured {
					hidden++
				}
			}
		}
		for _, f := range findingsOf(r, RuleSlowNetwork) {
			if sp := f.Split; sp.Uncaptured > 0 {
				told++
				if sp.BrokerMs.Duration() > 10*time.Millisecond || sp.NetworkMs.Duration() < 200*time.Millisecond {
					t.Errorf("%s: a response lost beyond the capture point: split %+v", f.Subject, sp)
				}
			}
		}
		if net < 3 || broker != 0 || hidden == 0 || told == 0 {
			t.Errorf("%d slow-network (%d told by an IP ID gap), %d slow-broker (%d segments lost before the capture point)", net, told, broker, hidden)
		}
	})
	t.Run("leader-move", func(t *testing.T) {
		x := readExpect(t, "leader-move.pcap")
		r := analyze(t, "leader-move.pcap", Options{Findings: true}).Findings()
		lc := findingsOf(r, RuleLeadership)
		brokers := map[string]bool{}
		for _, f := range lc {
			if *f.Topic != "capgen-leader" || *f.Partition != 0 {
				t.Errorf("leadership change of %s", f.Subject)
			}
			brokers[*f.Broker] = true
		}
		for _, in := range x.Injections {
			if in.Kind == "error" && in.Error == "FENCED_LEADER_EPOCH" {
				n := 0
				for _, f := range lc {
					if strings.Contains(f.Detail, "FENCED_LEADER_EPOCH×") {
						n += int(f.Count)
					}
				}
				if n != in.Count {
					t.Errorf("%d FENCED_LEADER_EPOCH, injected %d", n, in.Count)
				}
			}
		}
		if len(brokers) != 3 {
			t.Errorf("leadership findings at %v, want each of the 3 brokers (two moves, then the fault)", brokers)
		}
	})
	t.Run("skipped-apiversions", func(t *testing.T) {
		x := readExpect(t, "skipped-apiversions.pcap")
		r := analyze(t, "skipped-apiversions.pcap", Options{Findings: true}).Findings()
		for _, c := range x.Wire.SkipsApiVersions {
			found := false
			for _, f := range findingsOf(r, RuleSkippedAPIVer) {
				found = found || *f.ClientID == c
			}
			if !found {
				t.Errorf("%s skipped ApiVersions: no finding", c)
			}
		}
		// The request the detail names is the first connection's, whose
		// packet the finding lists first (packet 4: Metadata v7).
		for _, f := range findingsOf(r, RuleSkippedAPIVer) {
			if len(f.Packets) > 0 && f.Packets[0] == 4 && !strings.Contains(f.Detail, "(the first: Metadata v7)") {
				t.Errorf("%s", f.Detail)
			}
		}
		for _, u := range x.Wire.Unadvertised {
			found := false
			for _, f := range findingsOf(r, RuleUnadvertised) {
				found = found || *f.API == u
			}
			if !found {
				t.Errorf("%s was unadvertised: no finding", u)
			}
		}
		// The broker closed the connection on each unadvertised
		// Metadata: dissect marks them Closed, and the detail says so.
		for _, f := range findingsOf(r, RuleUnadvertised) {
			if strings.HasPrefix(*f.API, "Metadata") && !strings.HasSuffix(f.Detail, "; the connection closed with it unanswered (as a broker answers a version it does not support)") {
				t.Errorf("%s: %s", *f.API, f.Detail)
			}
		}
	})
	t.Run("metadata-storm", func(t *testing.T) {
		x := readExpect(t, "metadata-storm.pcap")
		r := analyze(t, "metadata-storm.pcap", Options{Findings: true}).Findings()
		ms := findingsOf(r, RuleMetadataStorm)
		if len(ms) != 1 || *ms[0].ClientID != "capgen-sarama-metadata-storm" || ms[0].Count < int64(x.Wire.MinRequests["capgen-sarama-metadata-storm Metadata"]) {
			t.Errorf("metadata storms %+v", ms)
		}
		ch := findingsOf(r, RuleChurn)
		if len(ch) != 1 || *ch[0].ClientID != "capgen-kgo-churn" || ch[0].Count < int64(x.Wire.MinConnections["capgen-kgo-churn"]) {
			t.Errorf("churn %+v", ch)
		}
	})
	t.Run("txn-fenced", func(t *testing.T) {
		x := readExpect(t, "txn-fenced.pcap")
		r := analyze(t, "txn-fenced.pcap", Options{Findings: true}).Findings()
		fe := findingsOf(r, RuleFenced)
		n := 0
		for _, p := range x.Producers {
			if p.FencedBy == nil {
				continue
			}
			n++
			found := false
			for _, f := range fe {
				found = found || *f.ClientID == p.ClientID && strings.HasPrefix(f.Detail, *p.FencedBy+"'s InitProducerId")
			}
			if !found {
				t.Errorf("%s fenced by %s: no finding in %+v", p.ClientID, *p.FencedBy, fe)
			}
		}
		if len(fe) != n {
			t.Errorf("%d fenced findings, want %d", len(fe), n)
		}
	})
	t.Run("groups", func(t *testing.T) {
		for _, capture := range []string{"group-rebalance-kafkapython.pcap", "group-rebalance-kgo.pcap", "group-rebalance-sarama.pcap",
			"group-rebalance-kafkajs.pcap", "group-rebalance-kcat.pcap", "group-kip848.pcap"} {
			x := readExpect(t, capture)
			r := analyze(t, capture, Options{Findings: true}).Findings()
			ex := findingsOf(r, RuleMemberExpired)
			killed := 0
			for _, g := range x.Groups {
				for _, m := range g.Members {
					if m.End != "kill" {
						continue
					}
					killed++
					found := false
					for _, f := range ex {
						found = found || strings.Contains(f.Detail, m.MemberID)
					}
					if !found {
						t.Errorf("%s: %s was killed: no finding", capture, m.MemberID)
					}
				}
			}
			if len(ex) != killed {
				t.Errorf("%s: %d expiries, %d killed", capture, len(ex), killed)
			}
		}
	})
}

// The rules' list is documented: each rule once, with a summary and its
// evidence; docs/findings.md lists every one.
func TestRulesDocumented(t *testing.T) {
	seen := map[string]bool{}
	doc, err := os.ReadFile(filepath.Join("..", "docs", "findings.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules {
		if seen[r.ID] || r.Summary == "" || r.Evidence == "" || (r.Severity != SevError && r.Severity != SevWarning && r.Severity != SevInfo) {
			t.Errorf("rule %+v", r)
		}
		seen[r.ID] = true
		if !strings.Contains(string(doc), "`"+r.ID+"`") {
			t.Errorf("docs/findings.md does not describe %s", r.ID)
		}
	}
}

// Several files: each finding names the file its evidence is in (packet
// numbers restart with each file), the findings of a file together.
func TestFindingsFiles(t *testing.T) {
	a := New(Options{})
	var d *dissect.Dissector
	for _, name := range []string{"throttle.pcap", "txn-fenced.pcap", "group-rebalance-kgo.pcap"} {
		path := filepath.Join("..", "pcaps", name)
		if _, err := os.Stat(path); err != nil {
			t.Skip(err)
		}
		a.SetFile(name)
		d = dissect.New(dissect.Options{Ports: pcaps.BrokerPorts(), Detect: true, Decoder: dissectDecoder}, a)
		if _, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, d); err != nil {
			t.Fatal(err)
		}
		d.Finish()
	}
	want := map[string]string{RuleThrottled: "throttle.pcap", RuleQuota: "throttle.pcap", RuleFenced: "txn-fenced.pcap",
		RuleMemberExpired: "group-rebalance-kgo.pcap", RuleRebalanceStorm: "group-rebalance-kgo.pcap"}
	order := map[string]int{"throttle.pcap": 0, "txn-fenced.pcap": 1, "group-rebalance-kgo.pcap": 2}
	last := 0
	for _, f := range a.Findings().Findings {
		if w, ok := want[f.Rule]; !ok || f.File != w {
			t.Errorf("%s in %q, want %q", f.Rule, f.File, w)
		}
		if order[f.File] < last {
			t.Errorf("%s's findings after a later file's", f.File)
		}
		last = max(last, order[f.File])
	}
}

// TestFindingsTotalOrder: findings of one rule at one instant on one
// subject (producers fenced together) come out in one order, whatever
// order the engine's map gives them: Findings sorts on every field that
// tells them apart. Run 20 times, each with the map refilled.
func TestFindingsTotalOrder(t *testing.T) {
	at := Time(s0)
	mk := func(detail string, pkt int64, client string) *finding {
		return &finding{Finding: Finding{Rule: RuleFenced, Severity: "warning", Time: at, Subject: "transactional ID x",
			ClientID: strp(client), Detail: detail, Packets: []int64{pkt}}}
	}
	var first []Finding
	for run := range 20 {
		a := New(Options{Findings: true})
		a.find.found = map[string]*finding{}
		for i, x := range []*finding{mk("b fenced a", 7, "a"), mk("a fenced b", 7, "b"), mk("a fenced b", 5, "b"), mk("a fenced b", 5, "a")} {
			a.find.found[strconv.Itoa((i+run)%4)] = x
		}
		got := a.Findings().Findings
		if run == 0 {
			first = got
			if len(got) != 4 || got[0].Detail != "a fenced b" || got[0].Packets[0] != 5 || *got[0].ClientID != "a" || got[3].Detail != "b fenced a" {
				t.Fatalf("order %+v", got)
			}
			continue
		}
		if !reflect.DeepEqual(got, first) {
			t.Fatalf("run %d: order %+v, run 0 gave %+v", run, got, first)
		}
	}
}
