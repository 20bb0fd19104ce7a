package analysis

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// jsonKeys lists every object key path of a JSON value ("groups[].members[].memberId").
func jsonKeys(t *testing.T, v any) []string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	var walk func(string, any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				q := k
				if p != "" {
					q = p + "." + k
				}
				set[q] = true
				walk(q, c)
			}
		case []any:
			for _, c := range x {
				walk(p+"[]", c)
			}
		}
	}
	walk("", x)
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var updateKeys = flag.Bool("update", false, "rewrite testdata/keys-*.txt")

// TestJSONFields pins the key set of each report's JSON (testdata/
// keys-*.txt, rewritten by -update): a change of the documented output
// shows in review. The reports come from captures that fill every field
// the schema has: static and KIP-848 groups, Connect workers (synthetic),
// fenced and read_committed
// transactions, slow exchanges split.
func TestJSONFields(t *testing.T) {
	g := analyze(t, "group-rebalance-sarama.pcap", Options{}).Groups()
	g2 := analyze(t, "group-kip848.pcap", Options{}).Groups()
	g.Groups = append(g.Groups, g2.Groups...)
	cs, _ := connectGroup(t) // Kafka Connect workers: no capture has them
	g.Groups = append(g.Groups, cs.a.Groups().Groups...)
	tx := analyze(t, "txn-read-committed.pcap", Options{}).Transactions()
	tx2 := analyze(t, "txn-fenced.pcap", Options{}).Transactions()
	tx.Producers = append(tx.Producers, tx2.Producers...)
	f := analyze(t, "lossy-network.pcap", Options{}).Findings()
	for name, v := range map[string]any{"groups": g, "txns": tx, "findings": f} {
		keys := jsonKeys(t, v)
		for _, k := range keys {
			last := k[strings.LastIndex(k, ".")+1:]
			last = strings.TrimSuffix(last, "[]")
			if last == "" || strings.ContainsAny(last, "_-") || strings.ToLower(last[:1]) != last[:1] {
				t.Errorf("%s: key %s is not lowerCamelCase", name, k)
			}
		}
		file := filepath.Join("testdata", "keys-"+name+".txt")
		got := strings.Join(keys, "\n") + "\n"
		if *updateKeys {
			if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v (go test ./analysis -run TestJSONFields -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s: JSON keys differ from %s (rerun with -update if the change is meant):\n%s", name, file, diffLines(string(want), got))
		}
	}
}

func diffLines(a, b string) string {
	as, bs := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range bs {
		if !slices.Contains(as, l) {
			out = append(out, "+"+l)
		}
	}
	for _, l := range as {
		if !slices.Contains(bs, l) {
			out = append(out, "-"+l)
		}
	}
	return strings.Join(out, "\n")
}
