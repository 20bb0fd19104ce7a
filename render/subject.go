package render

import (
	"strconv"
	"strings"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/render/units"
)

// ErrorCount is one Kafka error name seen in a response and how often.
type ErrorCount struct {
	Name  string `json:"name"`  // Kafka's name ("NOT_LEADER_OR_FOLLOWER"), or UNKNOWN(code)
	Code  int64  `json:"code"`  // the error code as on the wire
	Count int    `json:"count"` // how many ErrorCode fields carried it
}

// Errors returns the non-zero error codes of e's response, from every
// integer field whose name ends in "ErrorCode" (the top-level ErrorCode and
// per-topic, per-partition ones alike), named by the decoder's Note, in
// order of first appearance. It returns nil when the response has none or
// was not decoded.
func Errors(e *dissect.Exchange) []ErrorCount {
	return appendErrors(nil, e)
}

// appendErrors appends e's error counts to out (see Errors).
func appendErrors(out []ErrorCount, e *dissect.Exchange) []ErrorCount {
	if e == nil || e.Response == nil || e.Response.Tree == nil || e.Response.Tree.Root == nil {
		return out
	}
	return walkErrors(out, e.Response.Tree.Root, 0)
}

func walkErrors(out []ErrorCount, n *protocol.Node, depth int) []ErrorCount {
	if depth > 64 || n.Kind == protocol.KindRecords {
		return out // record batches hold no error codes
	}
	if isErrorCode(n) && n.Int != 0 && n.Flags&protocol.FlagNull == 0 {
		for i := range out {
			if out[i].Code == n.Int {
				out[i].Count++
				return out
			}
		}
		name := n.Note
		if name == "" {
			name = "UNKNOWN(" + itoa(n.Int) + ")"
		}
		return append(out, ErrorCount{Name: name, Code: n.Int, Count: 1})
	}
	for _, c := range n.Children {
		out = walkErrors(out, c, depth+1)
	}
	return out
}

// subjectTopic collects what one topic contributes to a subject.
type subjectTopic struct {
	name   string
	parts  []subjectPart
	partAt map[int64]int // index in parts by partition, once there are many
}

type subjectPart struct {
	index   int64
	hasBase bool
	base    int64
	count   int64 // records; -1 unknown
	codec   string
	bytes   int
	batches int
	partial bool
	// ListOffsets: the timestamp asked and the offset answered.
	hasTS, hasOffset bool
	ts, offset       int64
}

type subject struct {
	api      string            // APIName of the exchange
	names    map[string]string // topic ID → name
	topics   []subjectTopic
	topicAt  map[string]int // index in topics by name, once there are many
	group    string
	txn      string
	producer int64
	hasPID   bool
}

// Subject describes what e is about, for the one-line output: its topics
// with partitions ("orders[0,3]"), for record-carrying partitions the base
// offset, record count, codec and size ("orders[0@100+3 gzip 512B]"; the
// base offset comes from the response's BaseOffset in Produce and from the
// batches in Fetch), then group=ID, txn=TRANSACTIONAL_ID and pid=PRODUCER_ID
// when the request (or the response, for orphans) carries them at top
// level; then what the API is about (see subjectapi.go: the coordinator
// found, member and generation, COMMIT or ABORT, the isolation level, the
// SASL user; ListOffsets "orders[0 latest→42]"). Topics are taken from
// arrays of structs with a Name, Topic, TopicName or TopicId field, arrays
// of strings named like topics, embedded structs (a consumer's
// subscription in JoinGroup, its assignment in SyncGroup) and config and
// ACL resources (TopicResource); Fetch v13+ topics show as their base64url
// IDs. It returns "" when nothing applies.
func Subject(e *dissect.Exchange) string {
	return string(appendSubject(nil, e, nil))
}

// SubjectNamed is Subject with topic IDs named by names (topic ID in
// Kafka's base64url form → topic name); unknown IDs stay IDs.
func SubjectNamed(e *dissect.Exchange, names map[string]string) string {
	return string(appendSubject(nil, e, names))
}

// appendSubject appends SubjectNamed(e, names) to b.
func appendSubject(b []byte, e *dissect.Exchange, names map[string]string) []byte {
	if e == nil {
		return b
	}
	s := subject{names: names, api: APIName(e)}
	var topics [4]subjectTopic
	s.topics = topics[:0]
	if e.Request != nil && e.Request.Tree != nil {
		s.collect(bodyOf(e.Request.Tree), true)
	}
	if e.Response != nil && e.Response.Tree != nil {
		s.collect(bodyOf(e.Response.Tree), false)
	}
	start := len(b)
	b = s.appendTo(b)
	return s.appendAPISubject(b, start, e)
}

// bodyOf returns the body node of a decoded frame: the root's child named
// "body" or, failing that, its last struct child that is not the header; a
// root without a header is itself the body.
func bodyOf(t *protocol.Tree) *protocol.Node {
	if t == nil || t.Root == nil {
		return nil
	}
	if !isFrameRoot(t.Root) {
		return t.Root
	}
	_, _, b := protocol.FrameParts(t.Root)
	return b
}

// headerOf returns the header node of a decoded frame, or nil.
func headerOf(t *protocol.Tree) *protocol.Node {
	if t == nil || t.Root == nil || !isFrameRoot(t.Root) {
		return nil
	}
	_, h, _ := protocol.FrameParts(t.Root)
	return h
}

func (s *subject) collect(body *protocol.Node, request bool) {
	if body == nil {
		return
	}
	for _, c := range body.Children {
		if c.Flags&protocol.FlagNull != 0 {
			continue
		}
		switch {
		case s.group == "" && c.Kind == protocol.KindString && strings.EqualFold(c.Name, "GroupId"):
			s.group = c.Str
		case s.txn == "" && c.Kind == protocol.KindString && strings.EqualFold(c.Name, "TransactionalId"):
			s.txn = c.Str
		case !s.hasPID && c.Kind == protocol.KindInt && strings.EqualFold(c.Name, "ProducerId") && c.Int >= 0:
			s.producer, s.hasPID = c.Int, true
		}
	}
	if t := TopicResource(body); t != "" {
		s.topic(t) // DescribeAcls: the filter is the body itself
	}
	s.walk(body, request, 0)
}

func (s *subject) walk(n *protocol.Node, request bool, depth int) {
	if depth > 8 {
		return
	}
	for _, c := range n.Children {
		switch {
		case c.Kind == protocol.KindArray && isTopicArray(c):
			for _, el := range c.Children {
				s.addTopic(el, request)
			}
		case c.Kind == protocol.KindArray && len(c.Children) > 0 && c.Children[0].Kind == protocol.KindString &&
			containsFold(c.Name, "topic"):
			for _, el := range c.Children {
				if el.Flags&protocol.FlagNull == 0 {
					s.topic(el.Str)
				}
			}
		case c.Kind == protocol.KindStruct || c.Kind == protocol.KindArray:
			if t := TopicResource(c); t != "" {
				s.topic(t)
			}
			s.walk(c, request, depth+1)
		case c.Kind == protocol.KindBytes && len(c.Children) > 0:
			s.walk(c, request, depth+1) // an embedded struct: a consumer's subscription or assignment
		}
	}
}

// Kafka's resource types and pattern types (ResourceType, PatternType in
// DescribeConfigs, AlterConfigs, IncrementalAlterConfigs and the ACL APIs).
const (
	resourceTopic  = 2
	patternLiteral = 3
)

// TopicResource returns the topic that struct n names as a config or ACL
// resource (ResourceType 2 with its ResourceName, or the ...Filter fields
// of DescribeAcls and DeleteAcls), unless its pattern type makes the name
// a prefix or a match, or the name is the wildcard "*"; "" otherwise.
func TopicResource(n *protocol.Node) string {
	typ := child(n, "ResourceType", "ResourceTypeFilter")
	name := child(n, "ResourceName", "ResourceNameFilter")
	if typ == nil || name == nil || typ.Kind != protocol.KindInt || typ.Int != resourceTopic ||
		name.Kind != protocol.KindString || name.Flags&protocol.FlagNull != 0 {
		return ""
	}
	if p := child(n, "PatternType", "ResourcePatternType", "PatternTypeFilter"); p != nil && p.Kind == protocol.KindInt && p.Int != patternLiteral {
		return ""
	}
	if name.Str == "*" {
		return "" // Kafka's wildcard resource: every topic
	}
	return name.Str
}

// topicName returns the topic name (or base64url topic ID) of a topic
// element, or "".
func topicName(el *protocol.Node) string {
	if c := child(el, "Name", "Topic", "TopicName"); c != nil && c.Kind == protocol.KindString && c.Flags&protocol.FlagNull == 0 {
		return c.Str
	}
	if c := child(el, "TopicId"); c != nil && c.Kind == protocol.KindUUID {
		return UUIDString(c.Raw)
	}
	return ""
}

// partitionArray returns the first array child of a topic element whose
// name mentions partitions.
func partitionArray(el *protocol.Node) *protocol.Node {
	for _, c := range el.Children {
		if c.Kind == protocol.KindArray && containsFold(c.Name, "partition") {
			return c
		}
	}
	return nil
}

func isTopicArray(a *protocol.Node) bool {
	if len(a.Children) == 0 || a.Children[0].Kind != protocol.KindStruct {
		return false
	}
	el := a.Children[0]
	if topicName(el) == "" && child(el, "Name", "Topic", "TopicName", "TopicId") == nil {
		return false
	}
	return containsFold(a.Name, "topic") || partitionArray(el) != nil
}

// indexFrom is the count of topics (or of one topic's partitions) from
// which they are looked up by map rather than by scanning: a Metadata or
// DeleteTopics frame may name a hundred thousand.
const indexFrom = 32

func (s *subject) topic(name string) *subjectTopic {
	return lookup(&s.topics, &s.topicAt, name, func(t *subjectTopic) string { return t.name },
		func() subjectTopic { return subjectTopic{name: name} })
}

func (t *subjectTopic) part(idx int64) *subjectPart {
	return lookup(&t.parts, &t.partAt, idx, func(p *subjectPart) int64 { return p.index },
		func() subjectPart { return subjectPart{index: idx, count: -1} })
}

// lookup returns the element of *list whose key is k, appending mk()
// when there is none. Past indexFrom elements it keeps *at, an index by
// key, instead of scanning.
func lookup[K comparable, T any](list *[]T, at *map[K]int, k K, key func(*T) K, mk func() T) *T {
	if *at != nil {
		if i, ok := (*at)[k]; ok {
			return &(*list)[i]
		}
	} else {
		for i := range *list {
			if key(&(*list)[i]) == k {
				return &(*list)[i]
			}
		}
	}
	*list = append(*list, mk())
	switch n := len(*list); {
	case *at != nil:
		(*at)[k] = n - 1
	case n >= indexFrom:
		m := map[K]int{}
		for i := range *list {
			m[key(&(*list)[i])] = i
		}
		*at = m
	}
	return &(*list)[len(*list)-1]
}

func (s *subject) addTopic(el *protocol.Node, request bool) {
	name := topicName(el)
	if name == "" {
		return
	}
	if n, ok := s.names[name]; ok && n != "" && child(el, "Name", "Topic", "TopicName") == nil {
		name = n
	}
	t := s.topic(name)
	pa := partitionArray(el)
	if pa == nil {
		return
	}
	for _, p := range pa.Children {
		if p.Kind == protocol.KindInt {
			t.part(p.Int)
			continue
		}
		idx, ok := intChild(p, "PartitionIndex", "Partition", "Index", "PartitionId")
		if !ok {
			continue
		}
		sp := t.part(idx)
		if !request {
			if base, ok := intChild(p, "BaseOffset"); ok && base >= 0 {
				sp.hasBase, sp.base = true, base
			}
		}
		if s.api == "ListOffsets" {
			if ts, ok := intChild(p, "Timestamp"); ok && request {
				sp.hasTS, sp.ts = true, ts
			}
			if off, ok := intChild(p, "Offset"); ok && !request {
				sp.hasOffset, sp.offset = true, off
			}
		}
		rec := child(p, "Records")
		if rec == nil || rec.Kind != protocol.KindRecords || rec.Flags&protocol.FlagNull != 0 {
			continue
		}
		if len(rec.Children) == 0 {
			if len(rec.Raw) > 0 {
				sp.bytes += len(rec.Raw)
			}
			continue
		}
		for _, b := range rec.Children {
			if b.Flags&protocol.FlagPartial != 0 {
				sp.partial = true
			}
			if !isBatch(b) {
				continue
			}
			bi := batchSummary(b)
			if sp.batches == 0 {
				if !request && !sp.hasBase {
					sp.hasBase, sp.base = true, bi.baseOffset
				}
				sp.codec = bi.codec
			} else if sp.codec != bi.codec {
				sp.codec = "mixed"
			}
			sp.batches++
			if bi.count >= 0 {
				sp.count = max(sp.count, 0) + bi.count
			}
			sp.bytes += bi.bytes
			sp.partial = sp.partial || bi.partial
		}
	}
}

func (s *subject) appendTo(b []byte) []byte {
	start := len(b)
	for i, t := range s.topics {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, t.name...)
		if len(t.parts) == 0 {
			continue
		}
		b = append(b, '[')
		for j, p := range t.parts {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, p.index, 10)
			if p.hasTS {
				b = append(b, ' ')
				b = append(b, ListOffsetsTimestamp(p.ts)...)
			}
			if p.hasOffset {
				b = append(b, "→"...)
				b = strconv.AppendInt(b, p.offset, 10)
			}
			if p.hasBase {
				b = append(b, '@')
				b = strconv.AppendInt(b, p.base, 10)
			}
			if p.count >= 0 {
				b = append(b, '+')
				b = strconv.AppendInt(b, p.count, 10)
			}
			if p.bytes > 0 {
				b = append(b, ' ')
				if p.codec != "" && p.codec != "none" {
					b = append(b, p.codec...)
					b = append(b, ' ')
				}
				b = units.AppendSize(b, int64(p.bytes))
			}
			if p.partial {
				b = append(b, " partial"...)
			}
		}
		b = append(b, ']')
	}
	add := func(k, v string) {
		if len(b) > start {
			b = append(b, ' ')
		}
		b = append(b, k...)
		b = append(b, v...)
	}
	if s.group != "" {
		add("group=", s.group)
	}
	if s.txn != "" {
		add("txn=", s.txn)
	}
	if s.hasPID {
		add("pid=", "")
		b = strconv.AppendInt(b, s.producer, 10)
	}
	return b
}
