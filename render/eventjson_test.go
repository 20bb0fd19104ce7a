package render

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
)

func sortedKeys(t *testing.T, line []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

// TestEventJSONFields pins EventDoc's key set, its key order and values.
func TestEventJSONFields(t *testing.T) {
	conn := &reassembly.Conn{Index: 2, A: netip.MustParseAddrPort("10.0.0.2:9092"), B: netip.MustParseAddrPort("10.0.0.1:5000")}
	ev := &dissect.Event{Kind: dissect.EventResync, Conn: conn, Dir: reassembly.BtoA, Frame: 7,
		Time: time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC), Bytes: 3, Data: []byte{0xde, 0xad, 0x01}, Detail: "skipped"}
	var b bytes.Buffer
	if err := EventJSON(&b, ev, conn.B, conn.A, ""); err != nil {
		t.Fatal(err)
	}
	if got, want := sortedKeys(t, b.Bytes()), "broker,bytes,client,detail,file,frame,from,hex,kind,stream,time,tls"; got != want {
		t.Errorf("event keys %s\nwant %s", got, want)
	}
	want := `{"kind":"resync","stream":2,"file":null,"client":"10.0.0.1:5000","broker":"10.0.0.2:9092","from":"10.0.0.1:5000","frame":7,"time":"2026-01-02T03:04:05.000006Z","bytes":3,"detail":"skipped","hex":"dead01","tls":null}` + "\n"
	if b.String() != want {
		t.Errorf("got  %s\nwant %s", b.String(), want)
	}
	// Without roles (no OPEN seen, e.g. TLS) the connection's endpoints
	// stand in; no time and no bytes are null.
	b.Reset()
	ev = &dissect.Event{Kind: dissect.EventTLS, Conn: conn, Detail: "TLS 1.3, not decrypted: no key log",
		TLS: &dissect.TLSStatus{Reason: dissect.TLSNoKey, Version: "TLS 1.3", Suite: "TLS_AES_128_GCM_SHA256", SNI: "b1"}}
	if err := EventJSON(&b, ev, netip.AddrPort{}, netip.AddrPort{}, ""); err != nil {
		t.Fatal(err)
	}
	want = `{"kind":"tls","stream":2,"file":null,"client":"10.0.0.2:9092","broker":"10.0.0.1:5000","from":"10.0.0.2:9092","frame":0,"time":null,"bytes":null,"detail":"TLS 1.3, not decrypted: no key log","hex":"",` +
		`"tls":{"decrypted":false,"reason":"no key for the client random","version":"TLS 1.3","suite":"TLS_AES_128_GCM_SHA256","sni":"b1","alpn":"","resumed":false}}` + "\n"
	if b.String() != want {
		t.Errorf("got  %s\nwant %s", b.String(), want)
	}
	// No connection: stream -1, empty addresses; an unknown kind is "event".
	b.Reset()
	if err := EventJSON(&b, &dissect.Event{Kind: dissect.EventTLSNote + 100}, netip.AddrPort{}, netip.AddrPort{}, ""); err != nil {
		t.Fatal(err)
	}
	want = `{"kind":"event","stream":-1,"file":null,"client":"","broker":"","from":"","frame":0,"time":null,"bytes":null,"detail":"","hex":"","tls":null}` + "\n"
	if b.String() != want {
		t.Errorf("got  %s\nwant %s", b.String(), want)
	}
	for k := dissect.EventOpen; k <= dissect.EventTLSNote; k++ {
		if s, ok := EventKindName(k); !ok || s == "" || s == "event" {
			t.Errorf("event kind %d has no JSON name (%q)", k, s)
		}
	}
}

// TestExchangeJSONTopicsAndFacts: the exchange document ends with the
// topics the exchange names ([] when none) and its facts.
func TestExchangeJSONTopicsAndFacts(t *testing.T) {
	e := produceExchange(0, 6)
	var out bytes.Buffer
	if err := ExchangeJSONLine(&out, e, Options{}); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Topics []string
		Facts  struct {
			Topics []struct {
				Name       string
				Partitions []struct {
					Partition  int32
					Error      *string
					BaseOffset *int64
				}
			}
			Errors []struct {
				Name      string
				Topic     string
				Partition int32
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatalf("%v: %s", err, out.Bytes())
	}
	if !slices.Equal(d.Topics, []string{"orders"}) || len(d.Facts.Topics) != 1 || len(d.Facts.Topics[0].Partitions) != 2 {
		t.Fatalf("topics %q, facts %+v", d.Topics, d.Facts)
	}
	p0, p3 := d.Facts.Topics[0].Partitions[0], d.Facts.Topics[0].Partitions[1]
	if p0.Partition != 0 || p0.BaseOffset == nil || *p0.BaseOffset != 100 || p0.Error != nil ||
		p3.Partition != 3 || p3.Error == nil || *p3.Error != "NOT_LEADER_OR_FOLLOWER" {
		t.Errorf("partitions %+v %+v", p0, p3)
	}
	if len(d.Facts.Errors) != 1 || d.Facts.Errors[0].Name != "NOT_LEADER_OR_FOLLOWER" || d.Facts.Errors[0].Topic != "orders" ||
		d.Facts.Errors[0].Partition != 3 {
		t.Errorf("errors %+v", d.Facts.Errors)
	}
}

// TestJSONInt64Strings: with Options.Int64Strings every 64-bit integer of
// the line is a decimal string — fields of Kafka type int64 in the bodies,
// the records' offsets and timestamps, the facts' offsets — and nothing
// else is.
func TestJSONInt64Strings(t *testing.T) {
	e := produceExchange(0, 6)
	var num, str bytes.Buffer
	if err := ExchangeJSONLine(&num, e, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := ExchangeJSONLine(&str, e, Options{Int64Strings: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ num, str string }{
		{`"baseOffset":100,`, `"baseOffset":"100",`},                   // ProduceResponse BaseOffset (int64) and the facts'
		{`"timestamp":1764417600010,`, `"timestamp":"1764417600010",`}, // a record's
		{`"producerId":-1,`, `"producerId":"-1",`},                     // a batch's
		{`"apiVersion":9,`, `"apiVersion":9,`},                         // an int16 stays a number
		{`"partition":3,`, `"partition":3,`},                           // an int32 too
	} {
		if !strings.Contains(num.String(), c.num) || !strings.Contains(str.String(), c.str) {
			t.Errorf("%s / %s:\nnumbers %s\nstrings %s", c.num, c.str, num.String(), str.String())
		}
	}
	var v any
	if err := json.Unmarshal(str.Bytes(), &v); err != nil {
		t.Errorf("not JSON: %v", err)
	}
}
