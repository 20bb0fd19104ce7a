package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/netip"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render"
)

// This file is kwire read --json's stream: one JSON object per line
// (NDJSON), exchanges and events mixed in capture order. An exchange's
// "kind" is paired, noResponse, unanswered, orphan or sasl (render's
// ExchangeDoc); an event's is one of eventKinds. Consumers pick what they
// want by "kind", e.g. jq 'select(.kind == "gap")'.

// exchangeOut is render's ExchangeDoc plus the exchange's topics.
type exchangeOut struct {
	*render.ExchangeDoc
	// Topics are the topics the request and response name, in order of
	// appearance: names, or the topic ID (base64url) where no earlier
	// response of the capture gave the ID's name.
	Topics []string `json:"topics"`
}

// topicList returns the exchange's topics, never nil (JSON []).
func (f *exchangeFields) topicList() []string {
	if f == nil || f.Topics == nil {
		return []string{}
	}
	return f.Topics
}

// eventKinds are the "kind" values of events in --json output.
var eventKinds = map[dissect.EventKind]string{
	dissect.EventOpen:      "open",
	dissect.EventSkipped:   "skipped",
	dissect.EventGap:       "gap",
	dissect.EventResync:    "resync",
	dissect.EventTLS:       "tls",
	dissect.EventClose:     "close",
	dissect.EventBadFrame:  "badFrame",
	dissect.EventTruncated: "truncated",
}

// eventJSON is one connection event in the --json stream. render has no
// JSON form for events; this one follows ExchangeDoc's conventions: every
// key present, addresses "ip:port", times RFC 3339 with nanoseconds, UTC.
type eventJSON struct {
	Kind   string  `json:"kind"`   // one of eventKinds
	Stream int     `json:"stream"` // TCP stream index, -1 unknown
	Client string  `json:"client"` // the side sending requests; before the connection is known to be Kafka (tls, skipped), the sender of its first packet (the client when its SYN was captured)
	Broker string  `json:"broker"` // the other side
	From   string  `json:"from"`   // the side whose bytes the event concerns
	Frame  int64   `json:"frame"`  // packet number where it happened, 0 unknown
	Time   *string `json:"time"`   // capture time; null unknown
	Bytes  *int64  `json:"bytes"`  // bytes involved (lost, skipped, captured); null unknown or none
	Detail string  `json:"detail"` // what happened, as in the text output
	// Hex holds a resync's skipped bytes (the first 64 KiB), lowercase
	// hex; "" for other events.
	Hex string `json:"hex"`
}

// newEventJSON builds ev's document. client, when valid, is the address
// of the side sending requests, learnt from the connection's exchanges.
func newEventJSON(ev *dissect.Event, roles map[*reassembly.Conn][2]string) *eventJSON {
	d := &eventJSON{Kind: eventKinds[ev.Kind], Stream: -1, Frame: ev.Frame, Detail: ev.Detail}
	if d.Kind == "" {
		d.Kind = "event"
	}
	if c := ev.Conn; c != nil {
		d.Stream = c.Index
		d.Client, d.Broker = addrString(c.A), addrString(c.B)
		if r, ok := roles[c]; ok {
			d.Client, d.Broker = r[0], r[1]
		}
		from := c.A
		if ev.Dir == reassembly.BtoA {
			from = c.B
		}
		d.From = addrString(from)
	}
	if !ev.Time.IsZero() {
		t := ev.Time.UTC().Format(time.RFC3339Nano)
		d.Time = &t
	}
	if ev.Bytes > 0 {
		n := ev.Bytes
		d.Bytes = &n
	}
	if ev.Kind == dissect.EventResync {
		d.Hex = hex.EncodeToString(ev.Data)
	}
	return d
}

func addrString(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// writeJSONLine writes v as one line of JSON, HTML characters unescaped.
func writeJSONLine(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
