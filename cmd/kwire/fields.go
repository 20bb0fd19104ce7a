package main

import (
	"encoding/base64"
	"slices"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/render"
)

// exchangeFields is what --filter expressions see of one exchange: the
// keys of kwire read --json's exchange object, by the same names
// (docs/json.md), with the same values — null where the JSON has null
// (a path through null, e.g. facts.group.groupId of an exchange without a
// group, makes the expression false; facts.group?.groupId reads nil).
// Request and response bodies and headers, in Kafka's JsonConverter form,
// are there only when the expression names them (request.body.acks == 0):
// they are built for the exchanges the other conditions let through.
type exchangeFields struct {
	Kind          string  `expr:"kind"`          // paired, noResponse, unanswered, orphan or sasl
	Stream        int     `expr:"stream"`        // connection index, as Wireshark's tcp.stream
	Client        string  `expr:"client"`        // "10.0.0.1:53422"
	Broker        string  `expr:"broker"`        // "10.0.0.2:9092"
	API           string  `expr:"api"`           // "Produce"; "" for an orphan whose API is not known
	APIKey        int     `expr:"apiKey"`        // 0
	APIVersion    int     `expr:"apiVersion"`    // the request's API version
	CorrelationID int     `expr:"correlationId"` // from the request header (or the orphan response)
	ClientID      *string `expr:"clientId"`      // nil when null, not captured or without a request
	// ClientIDNotCaptured is true when the request header was cut before
	// its ClientId ended (render.ExchangeDoc); ClientID is then nil.
	ClientIDNotCaptured bool             `expr:"clientIdNotCaptured"`
	LatencyMs           *float64         `expr:"latencyMs"` // response time minus request time; nil without both
	Request             *frameFields     `expr:"request"`   // nil for orphans
	Response            *frameFields     `expr:"response"`  // nil unless answered (or orphan)
	SASL                *render.SASLDoc  `expr:"sasl"`      // mechanism and user; nil when neither is known
	Guess               *render.GuessDoc `expr:"guess"`     // for an orphan, what it probably answers; nil otherwise
	Subject             string           `expr:"subject"`   // the one-line subject
	Errors              []string         `expr:"errors"`    // names of the response's non-zero error codes
	Notes               []string         `expr:"notes"`     // the dissector's notes
	Topics              []string         `expr:"topics"`    // topic names (or IDs) in the request and response
	Facts               *render.FactsDoc `expr:"facts"`     // what the exchange says, typed (render.FactsDoc)

	fx    *facts.Exchange
	names *facts.Names // the topic IDs learnt so far: --topic ID matches the topic by name too
}

// frameFields is one frame of an exchange, as "request" and "response"
// are in the JSON.
type frameFields struct {
	Frame      int64  `expr:"frame"`     // capture packet number of the frame's first byte
	LastPacket int64  `expr:"lastFrame"` // and of its last
	Time       string `expr:"time"`      // RFC 3339 with nanoseconds, UTC
	Size       int    `expr:"size"`      // bytes on the wire, length prefix included
	// CapturedBytes is how many of them the capture holds (fewer than
	// Size for a frame a gap or the snap length cut).
	CapturedBytes int    `expr:"capturedBytes"`
	Header        any    `expr:"header"` // JsonConverter form; only when the expression names it
	Body          any    `expr:"body"`   // JsonConverter form; only when the expression names it
	Error         string `expr:"error"`  // the decoding error, "" when none
}

// fieldsOf collects an exchange's filterable fields from its facts, which
// names has resolved. Without full, the fields --topic, --api and the
// other flags read only (no facts document, subject or frames); bodies
// adds the frames' headers and bodies.
func fieldsOf(ex *dissect.Exchange, names *facts.Names, full, bodies bool) *exchangeFields {
	fx := ex.Facts()
	f := &exchangeFields{Topics: fx.AllTopics(), fx: fx, names: names}
	for i := range fx.Errors {
		if n := fx.Errors[i].Name; !slices.Contains(f.Errors, n) {
			f.Errors = append(f.Errors, n)
		}
	}
	if !full {
		return f
	}
	f.fill(ex, bodies)
	return f
}

// fill sets the fields expressions read beyond Topics and Errors.
func (f *exchangeFields) fill(ex *dissect.Exchange, bodies bool) {
	*f = exchangeFields{
		Kind:          render.ExchangeKind(ex), // as --json spells it
		Stream:        -1,
		API:           render.APIName(ex),
		APIKey:        int(ex.APIKey),
		APIVersion:    int(ex.APIVersion),
		CorrelationID: int(ex.CorrelationID),
		Request:       frameOf(ex.Request, bodies),
		Response:      frameOf(ex.Response, bodies),
		Subject:       render.Subject(ex),
		Notes:         ex.Notes,
		Topics:        f.Topics,
		Errors:        f.Errors,
		Facts:         render.NewFactsDoc(f.fx),
		fx:            f.fx,
		names:         f.names,
	}
	if f.Kind == "" {
		f.Kind = "unknown"
	}
	f.ClientIDNotCaptured = ex.ClientIDNotCaptured
	if ex.ClientIDKnown() && !ex.ClientIDNull {
		id := ex.ClientID
		f.ClientID = &id
	}
	if d := ex.Latency(); d >= 0 {
		ms := float64(d) / float64(time.Millisecond)
		f.LatencyMs = &ms
	}
	if ex.Conn != nil {
		f.Stream = ex.Conn.Index
	}
	if ex.Client.IsValid() {
		f.Client = ex.Client.String()
	}
	if ex.Broker.IsValid() {
		f.Broker = ex.Broker.String()
	}
	f.SASL = render.SASLOf(ex, f.fx)
	f.Guess = render.GuessOf(ex)
	if f.Notes == nil {
		f.Notes = []string{}
	}
	if f.Errors == nil {
		f.Errors = []string{}
	}
}

// frameOf is a frame's fields (nil for no frame).
func frameOf(fr *dissect.Frame, bodies bool) *frameFields {
	if fr == nil {
		return nil
	}
	f := &frameFields{Frame: fr.FirstPacket, LastPacket: fr.LastPacket, Time: fr.Time.UTC().Format(time.RFC3339Nano), Size: fr.Size(), CapturedBytes: fr.Captured()}
	if fr.Tree == nil {
		return f
	}
	if fr.Tree.Err != nil {
		f.Error = fr.Tree.Err.Error()
	}
	if bodies && fr.Tree.Root != nil {
		if fr.Tree.Root.Type == "frame" {
			_, h, b := protocol.FrameParts(fr.Tree.Root)
			f.Header, f.Body = plainJSON(protocol.BodyJSON(h)), plainJSON(protocol.BodyJSON(b))
		} else {
			f.Body = plainJSON(protocol.BodyJSON(fr.Tree.Root))
		}
	}
	return f
}

// plainJSON turns protocol.BodyJSON's values (ordered Objects, []any,
// int64, float64, bool, string, []byte as base64) into the maps, slices
// and scalars expressions index.
func plainJSON(v any) any {
	switch x := v.(type) {
	case protocol.Object:
		m := make(map[string]any, len(x))
		for _, e := range x {
			if _, ok := m[e.Key]; !ok {
				m[e.Key] = plainJSON(e.Value)
			}
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainJSON(e)
		}
		return out
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case protocol.RecordsBase64:
		return x.String()
	}
	return v
}

// hasTopic reports whether the exchange names topic t, by name or by ID;
// a t that is the ID of a topic whose name has been learnt matches the
// exchanges that name the topic, by name or by ID alike.
func (f *exchangeFields) hasTopic(t string) bool {
	if slices.Contains(f.Topics, t) || slices.Contains(f.fx.TopicIDs(), t) {
		return true
	}
	var id facts.TopicID
	if raw, err := base64.RawURLEncoding.DecodeString(t); err == nil && len(raw) == len(id) {
		copy(id[:], raw)
		name, ok := f.names.Name(id)
		return ok && slices.Contains(f.Topics, name)
	}
	return false
}
