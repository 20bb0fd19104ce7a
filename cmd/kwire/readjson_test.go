package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/render"
)

func jsonKeys(t *testing.T, line []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return slices.Sorted(maps.Keys(m))
}

// isEventKind reports whether a --json line's "kind" is an event's
// (render.EventKindName), not an exchange's.
func isEventKind(kind string) bool {
	for k := dissect.EventOpen; k <= dissect.EventTruncated; k++ {
		if s, _ := render.EventKindName(k); s == kind {
			return true
		}
	}
	return false
}

// TestExchangeJSONKeys checks that read --json's exchange object is
// render's ExchangeDoc, with its topics and facts.
func TestExchangeJSONKeys(t *testing.T) {
	ex := testExchange()
	var doc, out bytes.Buffer
	if err := render.ExchangeJSON(&doc, ex, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := render.ExchangeJSONLine(&out, ex, render.Options{}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc.Bytes(), out.Bytes()) {
		t.Errorf("ExchangeJSONLine %s\nExchangeJSON     %s", out.Bytes(), doc.Bytes())
	}
	if got := jsonKeys(t, out.Bytes()); !slices.Contains(got, "topics") || !slices.Contains(got, "facts") {
		t.Errorf("keys %q lack topics or facts", got)
	}
	var v struct{ Topics []string }
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || !slices.Equal(v.Topics, []string{"orders", "audit"}) {
		t.Errorf("topics %q (%v), want [orders audit]", v.Topics, err)
	}
}

// TestJSONInt64StringsEveryCommand: --json-int64 string writes the
// producer ID as a decimal string in read --json and txns --json, changes
// stats --json and groups --json (byte counts, times), and leaves no
// number of 16 digits or more — absent tagged fields' defaults included.
func TestJSONInt64StringsEveryCommand(t *testing.T) {
	pcap := goldenPcap(t, "txn-read-committed.pcap")
	const pid = "4692485416233264874" // the capture's transactional producer
	for _, args := range [][]string{
		{"read", "--json"},
		{"read", "--json", "--stats"},
		{"stats", "--json"},
		{"txns", "--json"},
		{"groups", "--json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			num, _, code := kwireInProcess(t, append(args, pcap)...)
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			str, _, code := kwireInProcess(t, append(args, "--json-int64", "string", pcap)...)
			if code != 0 {
				t.Fatalf("exit %d with --json-int64 string", code)
			}
			switch args[0] {
			case "read", "txns":
				if !regexp.MustCompile(`:\s*`+pid).MatchString(num) || !regexp.MustCompile(`:\s*"`+pid+`"`).MatchString(str) {
					t.Errorf("producer ID %s: not a number without the flag or not a string with it", pid)
				}
			default: // no producer ID: the byte counts and the like are int64
				if num == str {
					t.Errorf("the same output with --json-int64 string")
				}
			}
			if big := regexp.MustCompile(`:\s*-?\d{16,}\b`).FindString(str); big != "" {
				t.Errorf("a 64-bit number left as a number: %s", big)
			}
			if len(num) == 0 || strings.Count(num, "\n") != strings.Count(str, "\n") {
				t.Errorf("lines: %d as numbers, %d as strings", strings.Count(num, "\n"), strings.Count(str, "\n"))
			}
		})
	}
}
