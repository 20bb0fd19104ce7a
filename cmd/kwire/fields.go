package main

import (
	"slices"
	"strings"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
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
	Kind          string   `expr:"kind"`           // paired, no-response, unanswered, orphan or sasl
}

var kindNames = map[dissect.Kind]string{
	dissect.KindPaired:     "paired",
	dissect.KindNoResponse: "no-response",
	dissect.KindUnanswered: "unanswered",
	dissect.KindOrphan:     "orphan",
	dissect.KindSASL:       "sasl",
}

// fieldsOf collects an exchange's filterable fields.
func fieldsOf(ex *dissect.Exchange) *exchangeFields {
	f := &exchangeFields{
		API:           protocol.APIName(ex.APIKey),
		APIKey:        int(ex.APIKey),
		Version:       int(ex.APIVersion),
		CorrelationID: int(ex.CorrelationID),
		ClientID:      ex.ClientID,
		LatencyMS:     -1,
		Kind:          kindNames[ex.Kind],
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
		f.Topics = appendTopics(f.Topics, treeRoot(ex.Request), "")
	}
	if ex.Response != nil {
		f.ResponseSize = ex.Response.Size()
		f.Topics = appendTopics(f.Topics, treeRoot(ex.Response), "")
		f.Errors = appendErrors(f.Errors, treeRoot(ex.Response))
	}
	return f
}

func treeRoot(fr *dissect.Frame) *protocol.Node {
	if fr == nil || fr.Tree == nil {
		return nil
	}
	return fr.Tree.Root
}

// appendTopics appends the topic names under n that are not in dst yet. A
// topic name is a string field called Topic or TopicName, or one called
// Name inside an array whose name has "Topic" in it (Topics, TopicData,
// CreatableTopic...). arr is the name of the nearest enclosing array.
func appendTopics(dst []string, n *protocol.Node, arr string) []string {
	if n == nil {
		return dst
	}
	if n.Kind == protocol.KindString && n.Flags&protocol.FlagNull == 0 && n.Str != "" {
		if n.Name == "Topic" || n.Name == "TopicName" || n.Name == "Name" && strings.Contains(arr, "Topic") {
			if !slices.Contains(dst, n.Str) {
				dst = append(dst, n.Str)
			}
		}
		return dst
	}
	if n.Kind == protocol.KindArray {
		arr = n.Name
	}
	for _, c := range n.Children {
		dst = appendTopics(dst, c, arr)
	}
	return dst
}

// appendErrors appends the names of non-zero error codes under n (fields
// called ErrorCode or ending in it) that are not in dst yet.
func appendErrors(dst []string, n *protocol.Node) []string {
	if n == nil {
		return dst
	}
	if n.Kind == protocol.KindInt && strings.HasSuffix(n.Name, "ErrorCode") {
		if n.Int != 0 {
			name := protocol.KafkaErrorName(int16(n.Int))
			if !slices.Contains(dst, name) {
				dst = append(dst, name)
			}
		}
		return dst
	}
	for _, c := range n.Children {
		dst = appendErrors(dst, c)
	}
	return dst
}
