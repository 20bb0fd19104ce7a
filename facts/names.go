package facts

import (
	"encoding/base64"
	"math"
	"strings"

	"github.com/kwire/kwire/protocol"
)

// Names maps topic IDs to the names that exchanges stated beside them
// (Exchange.IDNames: Metadata, CreateTopics, DescribeTopicPartitions...),
// so that topics named only by ID (Produce and Fetch v13+, KIP-516;
// KIP-848 assignments) get their names. One Names serves a whole run; its
// readers all see the same name for the same ID. It is not safe for
// concurrent use: Resolve runs in the order exchanges are emitted.
//
// Names also learns which protocol each group's members follow, from the
// APIs they use: a classic group's (JoinGroup, SyncGroup, Heartbeat)
// commit with their generation, a KIP-848 consumer group's
// (ConsumerGroupHeartbeat) and a KIP-1071 streams group's
// (StreamsGroupHeartbeat) with their member epoch. Resolve then reads an
// OffsetCommit v9+'s or TxnOffsetCommit's GenerationIdOrMemberEpoch
// (Group.GenerationOrEpoch) as the one or the other.
type Names struct {
	m     map[TopicID]string
	bytes int64 // what m holds, by nameCost
	// epochGroups maps a group ID to whether its members count member
	// epochs (true) or generations (false); groupBytes is what it holds
	// (MaxGroupBytes).
	epochGroups map[string]bool
	groupBytes  int

	// The bounds in bytes: MaxNamesBytes and MaxGroupBytes, or SetMemory's.
	maxNameBytes, maxGroupBytes int64
	refused                     int64 // names not learnt past the bounds (Refused)
}

// Refused returns how many times a name was not learnt because the bounds
// (MaxNames, the bytes SetMemory allows) were reached: its ID stays
// unresolved.
func (n *Names) Refused() int64 {
	if n == nil {
		return 0
	}
	return n.refused
}

// DefaultMaxMemory is what a Names keeps at most unless SetMemory says
// otherwise (kwire's --max-names-memory): MaxNamesBytes of topic names and
// MaxGroupBytes of group IDs.
const DefaultMaxMemory = MaxNamesBytes + MaxGroupBytes

// SetMemory bounds what n keeps to max bytes: four fifths for the names of
// topic IDs, a fifth for the group IDs whose protocol it learns; 0 lifts
// the bounds in bytes (MaxNames still bounds the IDs). Names already kept
// stay; what passes the new bounds is not learnt.
func (n *Names) SetMemory(max int64) {
	if n == nil {
		return
	}
	if max <= 0 {
		max = math.MaxInt64 / 2
	}
	n.maxGroupBytes = max / 5
	n.maxNameBytes = max - n.maxGroupBytes
}

func (n *Names) nameBudget() int64  { return n.maxNameBytes }
func (n *Names) groupBudget() int64 { return n.maxGroupBytes }

// MaxGroupBytes bounds, in bytes, the groups whose protocol a Names
// remembers: a group ID is the client's to make up, of any length; each
// costs its length and groupEntryBytes. Past the bound, further groups'
// GenerationIdOrMemberEpoch stays undecided (the line's gen/epoch=).
const MaxGroupBytes = 4 << 20

// groupEntryBytes is what a map entry of epochGroups costs beside its
// key's bytes (the string header, the bool, the map's slot).
const groupEntryBytes = 48

// MaxNames bounds the IDs a Names remembers: a cluster has at most a few
// hundred thousand partitions and far fewer topics; past the bound, new
// IDs stay unresolved (shown as the ID) rather than grow memory without
// end. MaxNamesBytes bounds the bytes they hold: names are the peers' to
// make long (Kafka allows 249 characters, Topic.MAX_NAME_LENGTH; the
// wire carries strings of 32 KiB), each entry costing its name's length
// and nameOverhead; past it, new IDs stay unresolved too. Each name kept
// is a copy, not a part of the buffer it was read from.
const (
	MaxNames      = 100_000
	MaxNamesBytes = 16 << 20
	nameOverhead  = 64 // the ID, the string's header and the map's share
)

// NewNames returns an empty Names.
func NewNames() *Names {
	return &Names{m: make(map[TopicID]string), maxNameBytes: MaxNamesBytes, maxGroupBytes: MaxGroupBytes}
}

// Name returns the name learnt for id.
func (n *Names) Name(id TopicID) (string, bool) {
	if n == nil {
		return "", false
	}
	s, ok := n.m[id]
	return s, ok
}

// Len is the number of IDs known.
func (n *Names) Len() int {
	if n == nil {
		return 0
	}
	return len(n.m)
}

// Resolve learns the ID-name pairs fx states, then names fx's topics that
// only an ID named (in Topics, the group's assignments and owned
// partitions, the members' of groups described, and transactions). It does its work once per Exchange;
// later calls return at once. n may be nil (nothing is learnt or named).
func (n *Names) Resolve(fx *Exchange) {
	if fx == nil || fx.resolved {
		return
	}
	fx.resolved = true
	if n == nil {
		return
	}
	n.learnGroup(fx)
	n.genOrEpoch(&fx.Group)
	for _, p := range fx.IDNames {
		n.learn(p.ID, p.Name)
	}
	for i := range fx.Topics {
		t := &fx.Topics[i]
		if t.Name == "" && t.HasID {
			t.Name = n.lookup(t.ID)
		}
	}
	if len(n.m) == 0 {
		return
	}
	n.resolveAll(fx.Group.Owned)
	if a := fx.Group.Assignment; a != nil {
		n.resolveAll(a.Partitions)
	}
	for i := range fx.Group.Members {
		if a := fx.Group.Members[i].Assignment; a != nil {
			n.resolveAll(a.Partitions)
		}
	}
	for i := range fx.Described {
		for j := range fx.Described[i].Members {
			m := &fx.Described[i].Members[j]
			for _, a := range [...]*Assignment{m.Assignment, m.Target} {
				if a != nil {
					n.resolveAll(a.Partitions)
				}
			}
		}
	}
	for i := range fx.Transactions {
		n.resolveAll(fx.Transactions[i].Topics)
	}
	n.resolveAll(fx.Forgotten)
}

// learnGroup learns the protocol of fx's group from the API fx is, when
// the broker did not refuse it. A classic member of a consumer group
// (KIP-848's upgrade path) commits with its member epoch too: a group
// once seen with member epochs keeps them.
func (n *Names) learnGroup(fx *Exchange) {
	id := fx.Group.ID
	if id == "" || len(fx.Errors) > 0 {
		return
	}
	var epochs bool
	switch fx.Key {
	case protocol.KeyJoinGroup, protocol.KeySyncGroup, protocol.KeyHeartbeat:
	case protocol.KeyConsumerGroupHeartbeat, protocol.KeyStreamsGroupHeartbeat:
		epochs = true
	default:
		return
	}
	old, known := n.epochGroups[id]
	switch {
	case known:
		if epochs && !old {
			n.epochGroups[id] = true
		}
	case int64(n.groupBytes+len(id)+groupEntryBytes) <= n.groupBudget():
		if n.epochGroups == nil {
			n.epochGroups = map[string]bool{}
		}
		n.epochGroups[strings.Clone(id)] = epochs // a copy: id may be part of a larger string
		n.groupBytes += len(id) + groupEntryBytes
	}
}

// genOrEpoch decides an undecided GenerationIdOrMemberEpoch by the
// protocol learnt for the group.
func (n *Names) genOrEpoch(g *Group) {
	if !g.HasGenOrEpoch || g.HasGeneration || g.HasEpoch {
		return
	}
	epochs, known := n.epochGroups[g.ID]
	switch {
	case !known:
	case epochs:
		g.MemberEpoch, g.HasEpoch = g.GenerationOrEpoch, true
	default:
		g.Generation, g.HasGeneration = g.GenerationOrEpoch, true
	}
}

func (n *Names) resolveAll(tps []TopicPartitions) {
	n.ResolvePartitions(tps)
}

// ResolvePartitions names the entries of tps that only an ID names and
// whose name n knows, and reports whether it named any: a report made at
// the end of a capture names what a Metadata stated after the exchanges
// it kept.
func (n *Names) ResolvePartitions(tps []TopicPartitions) bool {
	if n == nil {
		return false
	}
	named := false
	for i := range tps {
		if tp := &tps[i]; tp.Topic == "" && tp.HasID {
			tp.Topic = n.lookup(tp.ID)
			named = named || tp.Topic != ""
		}
	}
	return named
}

// NameOfLabel returns the name of the topic an ID label stands for (the
// base64url of a topic ID, as Topic.Label writes a topic known by ID
// alone), when n knows it; label itself otherwise.
func (n *Names) NameOfLabel(label string) string {
	if n == nil || len(label) != 22 {
		return label
	}
	var id TopicID
	if k, err := base64.RawURLEncoding.Decode(id[:], []byte(label)); err != nil || k != len(id) {
		return label
	}
	if name := n.lookup(id); name != "" {
		return name
	}
	return label
}

// MetadataTopicID is the KRaft metadata log's topic ID, Uuid(0, 1)
// (Uuid.METADATA_TOPIC_ID, KIP-595), which no exchange names beside its
// name in Fetch v13+ between controllers and brokers.
var MetadataTopicID = TopicID{15: 1}

// MetadataTopic is the KRaft metadata log's topic name.
const MetadataTopic = "__cluster_metadata"

// lookup returns the name learnt for id, or the metadata log's for its
// well-known ID; "" when neither.
func (n *Names) lookup(id TopicID) string {
	if s, ok := n.m[id]; ok {
		return s
	}
	if id == MetadataTopicID {
		return MetadataTopic
	}
	return ""
}

// Learn records name for id, as an exchange stating both would (a cut
// file's own record of the names the exchanges it left out stated:
// cmd/kwire's read -w). It keeps the bounds MaxNames and MaxNamesBytes
// (or SetMemory's).
func (n *Names) Learn(id TopicID, name string) {
	if n == nil || name == "" {
		return
	}
	n.learn(id, name)
}

// learn records name for id within MaxNames and MaxNamesBytes: a new ID
// past them stays unresolved, a known one keeps its name when the new one
// would pass MaxNamesBytes.
func (n *Names) learn(id TopicID, name string) {
	old, ok := n.m[id]
	if ok && old == name {
		return
	}
	cost := int64(len(name))
	if ok {
		cost -= int64(len(old))
	} else {
		cost += nameOverhead
	}
	if !ok && len(n.m) >= MaxNames || n.bytes+cost > n.nameBudget() {
		n.refused++
		return
	}
	n.m[id] = strings.Clone(name)
	n.bytes += cost
}

// Range calls f for every ID known and its name, in no particular order.
func (n *Names) Range(f func(id TopicID, name string)) {
	if n == nil {
		return
	}
	for id, name := range n.m {
		f(id, name)
	}
}
