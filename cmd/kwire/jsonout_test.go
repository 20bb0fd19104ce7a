package main

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
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

// TestExchangeJSONKeys checks that read --json's exchange object is
// render's ExchangeDoc with "topics" added, names resolved.
func TestExchangeJSONKeys(t *testing.T) {
	ex := testExchange()
	var doc, out bytes.Buffer
	if err := render.ExchangeJSON(&doc, ex, render.Options{}); err != nil {
		t.Fatal(err)
	}
	f := fieldsOf(ex, nil)
	if err := writeJSONLine(&out, &exchangeOut{ExchangeDoc: render.NewExchangeDoc(ex, render.Options{}), Topics: f.topicList()}); err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(append(jsonKeys(t, doc.Bytes()), "topics")))
	if got := jsonKeys(t, out.Bytes()); !slices.Equal(got, want) {
		t.Errorf("keys %q, want %q", got, want)
	}
	var v struct{ Topics []string }
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || !slices.Equal(v.Topics, []string{"orders", "audit"}) {
		t.Errorf("topics %q (%v), want [orders audit]", v.Topics, err)
	}
}

// TestEventJSON pins the event object's keys and values.
func TestEventJSON(t *testing.T) {
	conn := &reassembly.Conn{Index: 2, A: netip.MustParseAddrPort("10.0.0.2:9092"), B: netip.MustParseAddrPort("10.0.0.1:5000")}
	ev := &dissect.Event{Kind: dissect.EventResync, Conn: conn, Dir: reassembly.BtoA, Frame: 7,
		Time: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), Bytes: 3, Data: []byte{0xde, 0xad, 0x01}, Detail: "skipped"}
	roles := map[*reassembly.Conn][2]string{conn: {"10.0.0.1:5000", "10.0.0.2:9092"}}
	var b bytes.Buffer
	if err := writeJSONLine(&b, newEventJSON(ev, roles)); err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"resync","stream":2,"client":"10.0.0.1:5000","broker":"10.0.0.2:9092","from":"10.0.0.1:5000","frame":7,"time":"2026-01-02T03:04:05.000006Z","bytes":3,"detail":"skipped","hex":"dead01"}` + "\n"
	if b.String() != want {
		t.Errorf("got  %s\nwant %s", b.String(), want)
	}
	// Without roles (no OPEN seen, e.g. TLS) the connection's endpoints
	// stand in; no time and no bytes are null.
	b.Reset()
	ev = &dissect.Event{Kind: dissect.EventTLS, Conn: conn, Detail: "TLS, not decrypted"}
	if err := writeJSONLine(&b, newEventJSON(ev, nil)); err != nil {
		t.Fatal(err)
	}
	want = `{"kind":"tls","stream":2,"client":"10.0.0.2:9092","broker":"10.0.0.1:5000","from":"10.0.0.2:9092","frame":0,"time":null,"bytes":null,"detail":"TLS, not decrypted","hex":""}` + "\n"
	if b.String() != want {
		t.Errorf("got  %s\nwant %s", b.String(), want)
	}
	for k := dissect.EventOpen; k <= dissect.EventTruncated; k++ {
		if eventKinds[k] == "" {
			t.Errorf("event kind %d has no JSON name", k)
		}
	}
}
