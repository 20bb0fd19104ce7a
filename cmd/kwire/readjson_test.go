package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
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
