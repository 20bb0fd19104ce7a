package render

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/internal/jsonint64"
)

// referenceExchangeLine is the line of e as encoding/json writes its
// ExchangeDoc (the facts with jsonint64.Strings under Int64Strings).
func referenceExchangeLine(t *testing.T, d *ExchangeDoc, int64s bool) []byte {
	t.Helper()
	fx := d.Facts
	d.Facts = nil
	line := stdJSON(t, d, false)
	d.Facts = fx
	const tail = `"facts":null}`
	if !bytes.HasSuffix(line, []byte(tail)) {
		t.Fatalf("the exchange document does not end with its facts: %s", line)
	}
	var v any = fx
	if int64s {
		v = jsonint64.Strings(fx)
	}
	line = append(line[:len(line)-len(tail)], `"facts":`...)
	line = append(line, stdJSON(t, v, false)...)
	return append(line, "}\n"...)
}

// AppendExchangeJSON, the line kwire read --json writes, is encoding/json's
// for the exchange's ExchangeDoc, on every exchange of the golden
// captures (secrets withheld and shown), under the options that change
// it (64-bit integers as strings, secrets, value forms, a file name).
func TestExchangeLineMatchesEncodingJSON(t *testing.T) {
	n := 0
	for _, f := range goldenCaptures(t) {
		for _, show := range []bool{false, true} {
			for i, e := range captureExchanges(t, f, show) {
				for _, o := range []Options{{}, converterOptions[3], {Values: ValuesNone}, {File: "<a&b>.pcap"}} {
					want := referenceExchangeLine(t, NewExchangeDoc(e, o), o.Int64Strings)
					if got := AppendExchangeJSON(nil, e, o); !bytes.Equal(got, want) {
						t.Fatalf("%s exchange %d (%+v):\n got %s\nwant %s", filepath.Base(f), i, o, got, want)
					}
					n++
				}
			}
		}
	}
	t.Logf("%d lines compared", n)
}

// AppendExchangeJSON's allocations on kgo-produce-consume.pcap's
// exchanges: what the facts document (NewFactsDoc), the topic list
// (facts.Exchange.AllTopics) and the subject need, and nothing for the
// line itself: no ExchangeDoc, MessageDoc, formatted time, address or
// client ID string, copy of the options, jsonWriter (pooled) or Object
// tree.
func TestAppendExchangeJSONAllocs(t *testing.T) {
	exs := captureExchanges(t, filepath.Join("..", "pcaps", "kgo-produce-consume.pcap"), false)
	buf := make([]byte, 0, 16<<20)
	for _, e := range exs {
		buf = AppendExchangeJSON(buf[:0], e, Options{}) // facts computed, pools filled
	}
	line := testing.AllocsPerRun(5, func() {
		for _, e := range exs {
			buf = AppendExchangeJSON(buf[:0], e, Options{})
		}
	})
	parts := testing.AllocsPerRun(5, func() {
		for _, e := range exs {
			fx := e.Facts()
			_ = NewFactsDoc(fx)
			_ = fx.AllTopics()
		}
	})
	var doc bytes.Buffer
	value := testing.AllocsPerRun(2, func() {
		for _, e := range exs {
			doc.Reset()
			if err := writeJSONLine(&doc, NewExchangeDoc(e, Options{})); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Logf("%d exchanges: %.0f allocations (facts document and topics %.0f; through an ExchangeDoc and encoding/json %.0f)", len(exs), line, parts, value)
	// Besides those, the subject's strings (topic IDs, short member IDs:
	// 60 here) and no more.
	if line > parts+float64(len(exs))/2 {
		t.Errorf("%d exchanges: %.0f allocations, want at most the %.0f of their facts documents and topic lists and %d for subjects", len(exs), line, parts, len(exs)/2)
	}
}
