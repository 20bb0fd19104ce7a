package pcaps

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// TestAnalysisJSONValid validates what kwire groups --json, kwire txns
// --json and kwire read --findings --json write for every capture
// against their schemas (docs/schema: groups, txns, finding), and checks
// that the finding lines follow the exchanges, in time order.
func TestAnalysisJSONValid(t *testing.T) {
	schemas := compileSchemas(t)
	findings := 0
	for _, c := range captures(t) {
		args := []string{"--port", info(t, c).ports}
		if kl, ok := KeyLog(c); ok {
			args = append(args, "--tls-keylog", kl)
		}
		for _, cmd := range []string{"groups", "txns"} {
			r := kwire(t, append(append([]string{cmd, "--json"}, args...), c)...)
			if r.exit != 0 {
				t.Errorf("kwire %s %s: exit %d: %s", cmd, c, r.exit, r.stderr)
				continue
			}
			validate(t, schemas[cmd], cmd+" "+c, r.stdout)
		}
		r := kwire(t, append(append([]string{"read", "--json", "--findings"}, args...), c)...)
		sc := bufio.NewScanner(bytes.NewReader(r.stdout))
		sc.Buffer(nil, 64<<20)
		seen, last := false, ""
		for n := 1; sc.Scan(); n++ {
			var k struct{ Kind, Time string }
			if err := json.Unmarshal(sc.Bytes(), &k); err != nil {
				t.Fatalf("%s:%d: %v", c, n, err)
			}
			if k.Kind != "finding" {
				if seen {
					t.Errorf("%s:%d: a %s line after the findings", c, n, k.Kind)
				}
				continue
			}
			seen = true
			findings++
			validate(t, schemas["finding"], c+":"+strconv.Itoa(n), sc.Bytes())
			if k.Time < last {
				t.Errorf("%s:%d: finding at %s after one at %s", c, n, k.Time, last)
			}
			last = k.Time
		}
	}
	if findings == 0 {
		t.Error("no finding validated")
	}
}

// TestTxnsEpochLegend: the legend of EPOCHS' * (an epoch bumped by EndTxn,
// KIP-890) follows a table that shows one, and only such a table:
// txn-fenced's capgen-txn-fenced (epochs 0 and 1 from InitProducerId)
// printed it with no * in sight, capgen-txn-v2 (0 1* 2* 3*) needs it.
func TestTxnsEpochLegend(t *testing.T) {
	const capture = "txn-fenced.pcap"
	r := kwire(t, "txns", "--port", info(t, capture).ports, capture)
	out := string(r.stdout)
	const legend = "  EPOCHS: * = bumped by EndTxn (KIP-890)\n"
	sections := strings.Split(out, "\nTRANSACTIONAL ID ")
	var seen []string
	for _, s := range sections[1:] {
		id, _, _ := strings.Cut(s, " ")
		has := strings.Contains(s, legend)
		star := strings.Contains(s, "1* 2* 3*")
		seen = append(seen, id)
		if has != star {
			t.Errorf("%s: legend %v, bumped epochs shown %v:\n%s", id, has, star, s)
		}
	}
	if strings.Join(seen, ",") != "capgen-txn-fenced,capgen-txn-v2" || strings.Count(out, legend) != 1 {
		t.Errorf("want the legend once, under capgen-txn-v2 of capgen-txn-fenced,capgen-txn-v2 (%v):\n%s", seen, out)
	}
}
