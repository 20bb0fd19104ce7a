package main

import (
	"slices"
	"strings"

	"github.com/kwire/kwire/dissect"
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

	topicIDs []string // the topic IDs named, resolved or not: --topic matches them too
	ids      topicIDs // the topic IDs learnt so far: --topic ID matches the topic by name too
}

// topicIDs maps topic IDs (Kafka's base64url form) to the names that
// Metadata, CreateTopics and other responses gave them earlier in the
// capture, so that Produce v13+ and Fetch v13+ (which name topics by ID
// only) still match --topic.
type topicIDs map[string]string

// maxTopicIDs bounds the topic IDs remembered: a cluster has at most a few
// hundred thousand partitions and far fewer topics; past the bound, new IDs
// stay unresolved (shown as the ID) rather than growing without end.
const maxTopicIDs = 100_000

// learn records every struct under n that holds both a topic name and a
// topic ID.
func (ids topicIDs) learn(n *protocol.Node, depth int) {
	if n == nil || depth > 64 || n.Kind == protocol.KindRecords {
		return
	}
	if n.Kind == protocol.KindStruct {
		var name, id string
		for _, c := range n.Children {
			switch {
			case c.Kind == protocol.KindString && (c.Name == "Name" || c.Name == "Topic" || c.Name == "TopicName"):
				name = c.Str
			case c.Kind == protocol.KindUUID && c.Name == "TopicId":
				id = render.UUIDString(c.Raw)
			}
		}
		if name != "" && id != "" && id != zeroUUID {
			if _, ok := ids[id]; ok || len(ids) < maxTopicIDs {
				ids[id] = name
			}
		}
	}
	for _, c := range n.Children {
		ids.learn(c, depth+1)
	}
}

// zeroUUID is the all-zero UUID in Kafka's form: no topic ID.
const zeroUUID = "AAAAAAAAAAAAAAAAAAAAAA"

// fieldsOf collects an exchange's filterable fields. ids, when not nil,
// resolves topic IDs to names; unresolved IDs are listed as the ID.
func fieldsOf(ex *dissect.Exchange, ids topicIDs) *exchangeFields {
	f := &exchangeFields{
		API:           protocol.APIName(ex.APIKey),
		APIKey:        int(ex.APIKey),
		Version:       int(ex.APIVersion),
		CorrelationID: int(ex.CorrelationID),
		ClientID:      ex.ClientID,
		LatencyMS:     -1,
		Kind:          render.KindName(ex.Kind), // as --json spells it
		ids:           ids,
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
	var topics, tids nameSet
	if ex.Request != nil {
		f.RequestSize = ex.Request.Size()
		collectTopics(&topics, &tids, treeRoot(ex.Request), "", ids, 0)
	}
	if ex.Response != nil {
		f.ResponseSize = ex.Response.Size()
		collectTopics(&topics, &tids, treeRoot(ex.Response), "", ids, 0)
		f.Errors = appendErrors(f.Errors, treeRoot(ex.Response), 0)
	}
	f.Topics, f.topicIDs = topics.list, tids.list
	return f
}

// hasTopic reports whether the exchange names topic t, by name or by ID;
// a t that is the ID of a topic whose name has been learnt matches the
// exchanges that name the topic, by name or by ID alike.
func (f *exchangeFields) hasTopic(t string) bool {
	if slices.Contains(f.Topics, t) || slices.Contains(f.topicIDs, t) {
		return true
	}
	name, ok := f.ids[t]
	return ok && slices.Contains(f.Topics, name)
}

func treeRoot(fr *dissect.Frame) *protocol.Node {
	if fr == nil || fr.Tree == nil {
		return nil
	}
	return fr.Tree.Root
}

// nameSet is a list of names in the order first added, each once.
type nameSet struct {
	list []string
	seen map[string]struct{} // from nameSetIndexed names on: a frame may name 100,000 topics
}

const nameSetIndexed = 32

// add appends t unless it is empty or already in s.
func (s *nameSet) add(t string) {
	if t == "" {
		return
	}
	if s.seen != nil {
		if _, ok := s.seen[t]; ok {
			return
		}
		s.seen[t] = struct{}{}
	} else if slices.Contains(s.list, t) {
		return
	} else if len(s.list)+1 >= nameSetIndexed {
		s.seen = make(map[string]struct{}, 2*nameSetIndexed)
		for _, x := range s.list {
			s.seen[x] = struct{}{}
		}
		s.seen[t] = struct{}{}
	}
	s.list = append(s.list, t)
}

// collectTopics adds the topics under n to topics, and the topic IDs
// under n to idsSeen. A topic is a string field called Topic
// or TopicName, one called Name inside an array whose name has "Topic" in
// it (Topics, TopicData, CreatableTopic...), an element of an array of
// strings whose name ends in Topics or TopicNames (a consumer's
// subscription in JoinGroup, DeleteTopics v0-5, SubscribedTopicNames of
// KIP-848 heartbeats), a topic named as a config or ACL resource
// (render.TopicResource), or a TopicId UUID (resolved through ids when possible).
// arr is the name of the nearest enclosing array.
func collectTopics(topics, idsSeen *nameSet, n *protocol.Node, arr string, ids topicIDs, depth int) {
	if n == nil || depth > 64 || n.Kind == protocol.KindRecords {
		return
	}
	add := topics.add
	switch n.Kind {
	case protocol.KindString:
		if n.Flags&protocol.FlagNull == 0 &&
			(n.Name == "Topic" || n.Name == "TopicName" || n.Name == "Name" && strings.Contains(arr, "Topic") ||
				strings.HasPrefix(n.Name, "[") && (strings.HasSuffix(arr, "Topics") || strings.HasSuffix(arr, "TopicNames"))) {
			add(n.Str)
		}
		return
	case protocol.KindUUID:
		if n.Name == "TopicId" {
			if id := render.UUIDString(n.Raw); id != zeroUUID {
				idsSeen.add(id)
				if name, ok := ids[id]; ok {
					add(name)
				} else {
					add(id)
				}
			}
		}
		return
	case protocol.KindArray:
		arr = n.Name
	case protocol.KindStruct:
		// The all-zero ID is "no ID" beside a name (Metadata by name),
		// but where it is all that names the topic (Produce v13 from a
		// client that does not know the ID, answered UNKNOWN_TOPIC_ID)
		// it is the topic as the line shows it.
		if onlyZeroTopicID(n) {
			add(zeroUUID)
			idsSeen.add(zeroUUID)
		}
		add(render.TopicResource(n))
	}
	for _, c := range n.Children {
		collectTopics(topics, idsSeen, c, arr, ids, depth+1)
	}
}

// onlyZeroTopicID reports whether struct n names its topic by the all-zero
// topic ID alone: a TopicId of zero and no topic name beside it.
func onlyZeroTopicID(n *protocol.Node) bool {
	zero := false
	for _, c := range n.Children {
		switch {
		case c.Kind == protocol.KindString && (c.Name == "Name" || c.Name == "Topic" || c.Name == "TopicName"):
			return false
		case c.Kind == protocol.KindUUID && c.Name == "TopicId":
			zero = render.UUIDString(c.Raw) == zeroUUID
		}
	}
	return zero
}

// appendErrors appends the names of non-zero error codes under n (fields
// called ErrorCode or ending in it) that are not in dst yet.
func appendErrors(dst []string, n *protocol.Node, depth int) []string {
	if n == nil || depth > 64 || n.Kind == protocol.KindRecords {
		return dst
	}
	if n.Kind == protocol.KindInt && strings.HasSuffix(n.Name, "ErrorCode") {
		if n.Int != 0 && n.Flags&protocol.FlagNull == 0 {
			name := protocol.KafkaErrorName(int16(n.Int))
			if !slices.Contains(dst, name) {
				dst = append(dst, name)
			}
		}
		return dst
	}
	for _, c := range n.Children {
		dst = appendErrors(dst, c, depth+1)
	}
	return dst
}
