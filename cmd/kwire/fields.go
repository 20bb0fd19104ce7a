package main

import (
	"encoding/base64"
	"slices"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/render"
)

// exchangeFields are the facts about one exchange that filters look at.
// The field names after "expr:" are the names --filter expressions use;
// keep them in step with the read command's help.
type exchangeFields struct {
	API           string   `expr:"api"`            // "Produce"; UNKNOWN(n) for unknown keys
	APIKey        int      `expr:"api_key"`        // 0
	Version       int      `expr:"version"`        // request API version
	CorrelationID int      `expr:"correlation_id"` // from the request header (or the orphan response)
	ClientID      string   `expr:"client_id"`      // "" when null
	LatencyMS     float64  `expr:"latency_ms"`     // response time minus request time; -1 without a response
	RequestSize   int      `expr:"request_size"`   // bytes, length prefix included; 0 without a request
	ResponseSize  int      `expr:"response_size"`  // bytes, length prefix included; 0 without a response
	Topics        []string `expr:"topics"`         // topic names in the request and response, in order of appearance
	Errors        []string `expr:"errors"`         // names of the non-zero error codes in the response
	Stream        int      `expr:"stream"`         // connection index, as Wireshark's tcp.stream
	Client        string   `expr:"client"`         // "10.0.0.1:53422"
	Broker        string   `expr:"broker"`         // "10.0.0.2:9092"
	Kind          string   `expr:"kind"`           // paired, noResponse, unanswered, orphan or sasl (as in --json)

	fx    *facts.Exchange
	names *facts.Names // the topic IDs learnt so far: --topic ID matches the topic by name too
}

// fieldsOf collects an exchange's filterable fields from its facts, which
// names has resolved.
func fieldsOf(ex *dissect.Exchange, names *facts.Names) *exchangeFields {
	fx := ex.Facts()
	f := &exchangeFields{
		API:           protocol.APIName(ex.APIKey),
		APIKey:        int(ex.APIKey),
		Version:       int(ex.APIVersion),
		CorrelationID: int(ex.CorrelationID),
		ClientID:      ex.ClientID,
		LatencyMS:     -1,
		Kind:          render.KindName(ex.Kind), // as --json spells it
		Topics:        fx.AllTopics(),
		fx:            fx,
		names:         names,
	}
	if f.Kind == "" {
		f.Kind = "unknown"
	}
	if d := ex.Latency(); d >= 0 {
		f.LatencyMS = float64(d.Microseconds()) / 1000
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
	if ex.Request != nil {
		f.RequestSize = ex.Request.Size()
	}
	if ex.Response != nil {
		f.ResponseSize = ex.Response.Size()
	}
	for i := range fx.Errors {
		if n := fx.Errors[i].Name; !slices.Contains(f.Errors, n) {
			f.Errors = append(f.Errors, n)
		}
	}
	return f
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
