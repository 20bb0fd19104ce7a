package render

import (
	"encoding/hex"
	"io"
	"net/netip"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
)

// EventDoc is the JSON document EventJSON writes for one connection event
// (kwire read --json, mixed with the exchanges' documents in capture
// order). It follows ExchangeDoc's conventions: every key is always
// present, addresses are "ip:port", times RFC 3339 with nanoseconds, UTC.
// TestEventJSONFields pins the key set.
type EventDoc struct {
	Kind   string  `json:"kind"`                        // EventKindName: open, skipped, gap, resync, tls, close, badFrame, truncated, tlsNote, cut, conflict
	Stream int     `json:"stream"`                      // TCP stream index (reassembly.Conn.Index), -1 unknown
	File   *string `json:"file" jsonschema:"nullable"`  // the capture file, as ExchangeDoc's
	Client string  `json:"client"`                      // the side sending requests; before the connection is known to be Kafka (tls, skipped), the sender of its first packet (the client when its SYN was captured)
	Broker string  `json:"broker"`                      // the other side
	From   string  `json:"from"`                        // the side whose bytes the event concerns
	Frame  int64   `json:"frame"`                       // packet number where it happened (1-based), 0 unknown
	Time   *string `json:"time" jsonschema:"nullable"`  // capture time; null unknown
	Bytes  *int64  `json:"bytes" jsonschema:"nullable"` // bytes involved (lost, skipped, captured); null unknown or none
	Detail string  `json:"detail"`                      // what happened, as in the text output (dissect.Event.Detail)
	// Hex holds a resync's skipped bytes (dissect.Event.Data: the first
	// 64 KiB), lowercase hex; "<redacted>" when they were withheld as
	// possibly secret (dissect.Event.Withheld); "" for other events.
	Hex string `json:"hex"`
	// TLS is a tls event's connection status (dissect.TLSStatus), or a
	// skipped TLS connection's; null for other events.
	TLS *TLSDoc `json:"tls" jsonschema:"nullable"`
}

// TLSDoc is a TLS connection's status in EventDoc: decrypted, or the
// reason it was not (dissect.TLSNoKeyLog...: "no key log", "no key for
// the client random", "no key for the client random, with secrets
// dropped past --max-tls-key-memory", "handshake not captured", "wrong
// key", "unsupported", "not TLS", "handshake incomplete"), with what the
// handshake said. A skipped event of a TLS connection (not on a Kafka
// port, not decrypted) has one too, saying why. Every key is
// always present; "" where unknown.
type TLSDoc struct {
	Decrypted bool   `json:"decrypted"`
	Reason    string `json:"reason"`
	Version   string `json:"version"` // "TLS 1.3"
	Suite     string `json:"suite"`   // IANA name
	SNI       string `json:"sni"`
	ALPN      string `json:"alpn"`
	Resumed   bool   `json:"resumed"`
}

// eventKinds are EventDoc's "kind" values.
var eventKinds = map[dissect.EventKind]string{
	dissect.EventOpen:      "open",
	dissect.EventSkipped:   "skipped",
	dissect.EventGap:       "gap",
	dissect.EventResync:    "resync",
	dissect.EventTLS:       "tls",
	dissect.EventClose:     "close",
	dissect.EventBadFrame:  "badFrame",
	dissect.EventTruncated: "truncated",
	dissect.EventTLSNote:   "tlsNote",
	dissect.EventCut:       "cut",
	dissect.EventConflict:  "conflict",
}

// EventKindName returns k's "kind" in EventDoc ("gap", "badFrame"), and
// false (with "event") for a kind it does not know.
func EventKindName(k dissect.EventKind) (string, bool) {
	if s, ok := eventKinds[k]; ok {
		return s, true
	}
	return "event", false
}

// NewEventDoc builds the document EventJSON writes for ev. client and
// broker, when either is valid, are the connection's roles as learnt by
// the caller (from its open event or its exchanges); otherwise the
// connection's endpoints stand in, Conn.A as the client.
func NewEventDoc(ev *dissect.Event, client, broker netip.AddrPort) *EventDoc {
	d := &EventDoc{Stream: -1, Frame: ev.Frame, Detail: ev.Detail}
	d.Kind, _ = EventKindName(ev.Kind)
	if c := ev.Conn; c != nil {
		d.Stream = c.Index
		d.Client, d.Broker = addrString(c.A), addrString(c.B)
		if client.IsValid() || broker.IsValid() {
			d.Client, d.Broker = addrString(client), addrString(broker)
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
		if ev.Withheld {
			d.Hex = redacted
		}
	}
	if st := ev.TLS; st != nil {
		d.TLS = &TLSDoc{Decrypted: st.Decrypted, Reason: st.Reason, Version: st.Version, Suite: st.Suite,
			SNI: st.SNI, ALPN: st.ALPN, Resumed: st.Resumed}
	}
	return d
}

// EventJSON writes ev as one line of JSON, an EventDoc (NewEventDoc with
// client and broker, and file as Options.File); it returns w's error.
func EventJSON(w io.Writer, ev *dissect.Event, client, broker netip.AddrPort, file string) error {
	d := NewEventDoc(ev, client, broker)
	if file != "" {
		d.File = &file
	}
	return writeJSONLine(w, d)
}

// lineHint is the size e's JSON line is expected to take, as
// pipeline.LineHint reckons it: three quarters of what its trees hold,
// at most lineHintMax (past it a line grows as it must: a guess that
// large is not worth allocating ahead).
func lineHint(e *dissect.Exchange) int {
	n := 0
	for _, f := range [...]*dissect.Frame{e.Request, e.Response} {
		if f != nil {
			n += f.Tree.KeptBytes()
		}
	}
	return min(n/4*3, lineHintMax)
}

const lineHintMax = 16 << 20

// ExchangeJSONLine writes e as one line of JSON (ExchangeJSON), with a
// line buffer from a pool; it returns w's error.
func ExchangeJSONLine(w io.Writer, e *dissect.Exchange, opts Options) error {
	if h := lineHint(e); h > bigLineMin {
		return bigExchangeJSONLine(w, e, opts, h)
	}
	bp := jsonLinePool.Get().(*[]byte)
	b := (*bp)[:0]
	if h := lineHint(e); cap(b) < h {
		// A large line starts at about its size rather than grow there
		// from the pool's buffer, copied on the way.
		b = make([]byte, 0, h)
	}
	b = AppendExchangeJSON(b, e, opts)
	_, err := w.Write(b)
	if cap(b) <= jsonLineKeep && cap(b) >= cap(*bp) {
		*bp = b[:0]
	}
	jsonLinePool.Put(bp)
	return err
}

// bigLine holds one buffer for large lines (the lines of Produce and
// Fetch exchanges of large batches, a few MB each), kept across
// collections: a sync.Pool lets its buffers go at every other one, and
// kwire read --json then made a fresh line of megabytes for an exchange
// in nine (250 MB of them on big-1g). One is enough: kwire read writes
// lines of its own one at a time (the head of its pipeline; the others
// are built into pipeline.GetLine's), and another caller at the same
// moment makes its own. At most jsonLineKeep bytes stay held.
var bigLine = make(chan []byte, 1)

// bigLineMin is the hint from which a line takes bigLine's buffer.
const bigLineMin = 256 << 10

// bigExchangeJSONLine is ExchangeJSONLine for a line expected to take
// hint bytes, past bigLineMin.
func bigExchangeJSONLine(w io.Writer, e *dissect.Exchange, opts Options, hint int) error {
	var b []byte
	select {
	case b = <-bigLine:
	default:
	}
	if cap(b) < hint {
		b = make([]byte, 0, hint) // the smaller one goes
	}
	b = AppendExchangeJSON(b[:0], e, opts)
	_, err := w.Write(b)
	if cap(b) <= jsonLineKeep {
		select {
		case bigLine <- b[:0]:
		default:
		}
	}
	return err
}
