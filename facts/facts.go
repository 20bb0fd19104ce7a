// Package facts says what each Kafka exchange is about, in one typed model
// computed once from its decoded frames: the topics and partitions it
// names, with their offsets, records and errors; the group, member,
// generation or member epoch and assignments; the transactional ID,
// producer ID and epoch; the config and ACL resources; the coordinators
// found. kwire's readers — the one-line subject, the JSON, the filters,
// stats and versions — read these facts and walk no tree for meaning.
//
// Everything here is derived from the identity of each decoded field, as
// the schema gives it: protocol.Node.Field and its protocol.Role
// (protocol/roles.go), and the record-batch fields of
// protocol/recordfields.go. Nothing matches field names or parses note
// text.
//
// Building: Of builds an Exchange from the request and response trees of
// one exchange (either may be nil), knowing its API key and version. It is
// pure and may run on any goroutine, for several exchanges at once. Topics
// that only an ID names (Produce and Fetch v13+, KIP-516) get their names
// from a Names, which learns the ID-name pairs every exchange states; a
// run keeps one Names and calls Names.Resolve once per exchange, in the
// order exchanges are emitted, so that every reader sees the same name for
// the same ID.
//
// Ownership: an Exchange keeps no node, tree or frame byte: its strings
// are the decoder's (which stay valid after protocol.Tree.Release) and its
// slices its own.
package facts

import (
	"encoding/base64"

	"github.com/kwire/kwire/protocol"
)

// Exchange is what one exchange says. Slices are in wire order: the
// request's first, then the response's; a topic or partition named by
// both is one entry.
type Exchange struct {
	Key     int16 // API key (RequestApiKey)
	Version int16 // API version

	// Topics are the topics the exchange names, with the partitions named
	// under each, except those named only inside a group member's
	// subscription or assignment (Group).
	Topics []Topic
	// Errors are the non-zero error codes of the response, each with what
	// it belongs to.
	Errors []Error

	// ThrottleMs is the response's ThrottleTimeMs (KIP-219); -1 when it
	// has none.
	ThrottleMs int32

	// Group is the consumer, share or streams group the exchange is about
	// (zero when none).
	Group Group
	// Groups are other group IDs it names: DescribeGroups, DeleteGroups,
	// ConsumerGroupDescribe lists, OffsetFetch v8+ batches, ListGroups
	// answers; each once, in order.
	Groups []string
	// Described are the groups a describe response describes, with their
	// members: DescribeGroups (classic), ConsumerGroupDescribe (KIP-848),
	// ShareGroupDescribe (KIP-932), StreamsGroupDescribe (KIP-1071); in
	// wire order.
	Described []DescribedGroup

	// Producer is the transactional ID, producer ID and epoch the
	// exchange names at its top level (Produce, InitProducerId,
	// AddPartitionsToTxn v0-3, AddOffsetsToTxn, EndTxn, TxnOffsetCommit).
	Producer Producer
	// Transactions are the transactions a batched AddPartitionsToTxn
	// (v4+, KIP-890) or DescribeTransactions/ListTransactions names.
	Transactions []Transaction
	// Commit is an EndTxn request's outcome: 1 COMMIT, 0 ABORT, -1 not an
	// EndTxn (or not captured).
	Commit int8
	// ValidateOnly: the request asked the broker only to check it
	// (ValidateOnly of CreateTopics, AlterConfigs, IncrementalAlterConfigs,
	// CreatePartitions, ...): nothing it names was changed.
	ValidateOnly bool
	// Forgotten are the partitions an incremental Fetch tells the broker
	// to drop from its session (FetchRequest ForgottenTopicsData,
	// KIP-227): not fetched, and not among Topics.
	Forgotten []TopicPartitions

	// Coordinators are the FindCoordinator keys asked and what each
	// resolved to.
	Coordinators []Coordinator
	// Resources are the config and ACL resources named (DescribeConfigs,
	// AlterConfigs, IncrementalAlterConfigs, CreateTopics configs, the ACL
	// APIs).
	Resources []Resource

	// Isolation is a Fetch or ListOffsets request's IsolationLevel (0
	// read_uncommitted, 1 read_committed; KIP-98), -1 when none;
	// IsolationName Kafka's name for it.
	Isolation     int8
	IsolationName string
	// Acks is a Produce request's Acks (-1 all, 0 none, 1 leader); Acks is
	// meaningless unless HasAcks.
	Acks    int16
	HasAcks bool
	// TimeoutMs is the request's TimeoutMs (Produce, CreateTopics, ...)
	// and MaxWaitMs a Fetch's MaxWaitMs; -1 when none.
	TimeoutMs, MaxWaitMs int32

	// SASL is what a SaslAuthenticate request's token says: its mechanism
	// family (PLAIN, SCRAM, OAUTHBEARER) and the user it names; zero for
	// other exchanges and for tokens withheld whole.
	SASL SASLFacts

	// Software is the client software an ApiVersions request names
	// (KIP-511); zero otherwise.
	Software Software
	// ClusterID is the cluster a Metadata (v2+) or DescribeCluster
	// response says the broker belongs to; "" otherwise.
	ClusterID string
	// APIVersions is what an ApiVersions response advertises; nil for
	// other exchanges and when the response was not decoded.
	APIVersions *APIVersions

	// IDNames are the topic ID–name pairs the exchange states: structs
	// that name a topic by both (Metadata, CreateTopics,
	// DescribeTopicPartitions responses...). Names.Resolve learns them.
	IDNames []IDName

	resolved bool
}

// SASLFacts is the mechanism family and user of a SASL token.
type SASLFacts struct {
	Mechanism, User string
}

// Software is a client's name and version (ApiVersionsRequest
// ClientSoftwareName and ClientSoftwareVersion, KIP-511).
type Software struct {
	Name, Version string
}

// APIVersions is an ApiVersions response (KIP-35; features KIP-584).
type APIVersions struct {
	// Error is the response's error code (35 UNSUPPORTED_VERSION when the
	// broker did not know the request's version, KIP-511).
	Error int16
	// Ranges are the version ranges the broker supports, per API key, in
	// wire order.
	Ranges []APIRange
	// SupportedFeatures and FinalizedFeatures are the broker's feature
	// ranges and the cluster's finalized levels; FinalizedEpoch is -1
	// when not stated.
	SupportedFeatures, FinalizedFeatures []Feature
	FinalizedEpoch                       int64
}

// APIRange is one API key's supported versions.
type APIRange struct {
	Key, Min, Max int16
}

// RangeOf returns the range ranges give for key and whether they list it.
// A key listed more than once (only a broken broker does so) takes its
// last listing, as Kafka's clients do: NodeApiVersions puts each listing
// into a map by key, so a later one replaces an earlier one.
func RangeOf(ranges []APIRange, key int16) (APIRange, bool) {
	for i := len(ranges) - 1; i >= 0; i-- {
		if ranges[i].Key == key {
			return ranges[i], true
		}
	}
	return APIRange{}, false
}

// Feature is a feature's name and version range (or finalized levels).
type Feature struct {
	Name     string
	Min, Max int16
}

// TopicID is a Kafka topic ID (a UUID, KIP-516).
type TopicID [16]byte

// String returns the ID in Kafka's form: URL-safe base64 without padding
// ("TPmVKIH5EnVP0PVya1sZSg"), as kafka-topics.sh prints it.
func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// IsZero reports whether the ID is all zeros: Kafka's "no ID".
func (id TopicID) IsZero() bool { return id == TopicID{} }

// IDName is one topic ID with its name.
type IDName struct {
	ID   TopicID
	Name string
}

// Topic is one topic an exchange names.
type Topic struct {
	// Name is the topic's name; "" when only an ID names it and no
	// exchange before stated its name (see Names).
	Name  string
	ID    TopicID
	HasID bool // the wire named the topic by ID (possibly all zeros)
	// Partitions are the partitions named under the topic, each once, in
	// order of first appearance.
	Partitions []Partition
	// Error is the first non-zero error code at the topic's own level
	// (not a partition's); 0 when none.
	Error int16
	// Resource says the topic is named only as a config or ACL resource.
	Resource bool
	// Owner is the batch entry that lists the topic, when the message
	// batches entries of several groups or transactions: the group
	// (OffsetFetch v8+ Groups, KIP-709; ConsumerGroupDescribe Groups) or
	// the transactional ID (AddPartitionsToTxn v4+ Transactions, KIP-890),
	// or the producer ID (WriteTxnMarkers Markers: Role RoleProducerID, ID
	// the decimal producer ID).
	// Topics of two entries are kept apart even when they share a name:
	// each entry's partitions, offsets and errors are its own. The zero
	// Scope for a topic of the exchange as a whole.
	Owner Scope

	partAt map[int32]int // index in Partitions by partition, once there are many
}

// MetadataLogRecords reports whether the exchange carries record batches
// of the KRaft metadata log (protocol.MetadataLogTopic: by name or by
// ID), whose records hold the cluster's sensitive configs and SCRAM
// credentials: its topic named, and a partition with a RECORDS field.
func (x *Exchange) MetadataLogRecords() bool {
	for i := range x.Topics {
		t := &x.Topics[i]
		if !protocol.MetadataLogTopic(t.Name, t.ID, t.HasID) {
			continue
		}
		for j := range t.Partitions {
			if t.Partitions[j].Records != nil {
				return true
			}
		}
	}
	return false
}

// Owners reports whether the exchange's topics belong to more than one
// batch entry (Topic.Owner): output then names each topic's entry.
func (fx *Exchange) Owners() bool {
	for i := 1; i < len(fx.Topics); i++ {
		if fx.Topics[i].Owner != fx.Topics[0].Owner {
			return true
		}
	}
	return false
}

// Label is how output names the topic: its name, else its ID
// (TopicID.String), else ZeroIDLabel.
func (t *Topic) Label() string {
	return idLabel(t.Name, t.ID, t.HasID)
}

// ZeroID reports whether only the all-zero topic ID names the topic (no
// name): Label gives ZeroIDLabel, and the topic has no ID to key by.
func (t *Topic) ZeroID() bool { return t.Name == "" && t.HasID && t.ID.IsZero() }

// ZeroIDLabel names a topic that only the all-zero topic ID names:
// Kafka's Uuid.ZERO_UUID is "no ID" (a client that does not know the
// topic's ID: the broker answers UNKNOWN_TOPIC_ID), not a topic. Beside a
// name the zero ID is ignored (the name names the topic).
const ZeroIDLabel = "(zero topic ID)"

func idLabel(name string, id TopicID, hasID bool) string {
	switch {
	case name != "" || !hasID:
		return name
	case id.IsZero():
		return ZeroIDLabel
	}
	return id.String()
}

// Partition is one partition of a topic an exchange names.
type Partition struct {
	Index int32
	// Error is the partition's first non-zero error code; 0 when none.
	Error int16
	// Offsets are the offsets and epochs the exchange states for it.
	Offsets Offsets
	// Records summarises the record batches of its RECORDS field; nil
	// when it has none (a null or absent field).
	Records *Records
	// AbortedTxns is how many aborted transactions a read_committed Fetch
	// response lists for the partition (KIP-98); -1 when the field is
	// absent or null.
	AbortedTxns int32
	// Aborted are the first MaxAborted of them, in wire order: each
	// aborted transaction's producer and the offset of its first batch
	// (FetchResponse AbortedTransactions).
	Aborted []AbortedTxn
	// ActiveProducers is how many producers a DescribeProducers response
	// lists as active on the partition (ActiveProducers, KIP-664: the
	// producers with state in its log, an open transaction or not); -1
	// when not stated. Producers are the first MaxProducers of them, in
	// wire order.
	ActiveProducers int32
	Producers       []ActiveProducer
}

// ActiveProducer is one producer a DescribeProducers response lists on a
// partition (DescribeProducersResponse ProducerState, KIP-664).
type ActiveProducer struct {
	ProducerID int64
	// ProducerEpoch is its epoch (an int32 on this wire; epochs are
	// int16 elsewhere).
	ProducerEpoch int32
	// LastSequence is the last sequence number it wrote, LastTimestamp
	// the timestamp of that write (ms since the epoch); -1 when none.
	LastSequence  int32
	LastTimestamp int64
	// CoordinatorEpoch is the epoch of its transaction coordinator (-1:
	// none); CurrentTxnStartOffset the offset its open transaction began
	// at, -1 when it has none: a transaction open long is one KIP-664
	// calls hanging.
	CoordinatorEpoch      int32
	CurrentTxnStartOffset int64
}

// MaxAborted bounds Partition.Aborted, MaxMarkers Records.Markers and
// MaxProducers Partition.Producers: a response may list thousands; the
// counts (AbortedTxns, Commits, Aborts, ActiveProducers) keep the rest.
const (
	MaxAborted   = 64
	MaxMarkers   = 64
	MaxProducers = 64
)

// AbortedTxn is one aborted transaction a Fetch response lists (KIP-98):
// a consumer reading read_committed skips that producer's records from
// FirstOffset up to its ABORT marker.
type AbortedTxn struct {
	ProducerID  int64
	FirstOffset int64
}

// Marker is one control record (a transaction's COMMIT or ABORT marker,
// KIP-98) of a control batch.
type Marker struct {
	ProducerID    int64
	ProducerEpoch int16
	// Offset is the marker's absolute offset (its batch's base offset
	// plus its offset delta; the batch's base offset when the record's is
	// unknown).
	Offset int64
	Commit bool // COMMIT (control type 1); false: ABORT (0)
}

// OffsetKind names one of the offsets a partition may carry.
type OffsetKind uint8

// Offset kinds, each from the field role of the same meaning.
const (
	OffsetBase          OffsetKind = iota // ProduceResponse BaseOffset
	OffsetFetch                           // FetchRequest FetchOffset
	OffsetHighWatermark                   // HighWatermark
	OffsetLastStable                      // LastStableOffset
	OffsetLogStart                        // LogStartOffset
	OffsetCommitted                       // CommittedOffset (OffsetCommit, TxnOffsetCommit, OffsetFetch)
	OffsetListed                          // ListOffsetsResponse Offset
	OffsetListTimestamp                   // ListOffsetsRequest Timestamp: the time asked
	OffsetLeaderEpoch                     // a leader epoch (CurrentLeaderEpoch, LeaderEpoch, ...)
	OffsetEnd                             // OffsetForLeaderEpochResponse EndOffset: where the epoch ends (KIP-101)
	OffsetLowWatermark                    // DeleteRecordsResponse LowWatermark: the log start after the deletion (KIP-107)
	OffsetDeletion                        // DeleteRecordsRequest Offset: delete the records before it (-1: before the high watermark; KIP-107)
	numOffsetKinds
)

var offsetNames = [numOffsetKinds]string{"baseOffset", "fetchOffset", "highWatermark", "lastStableOffset",
	"logStartOffset", "committedOffset", "listedOffset", "listTimestamp", "leaderEpoch", "endOffset", "lowWatermark", "deletionOffset"}

// String names the kind as the JSON does ("highWatermark").
func (k OffsetKind) String() string {
	if k < numOffsetKinds {
		return offsetNames[k]
	}
	return "offset"
}

// OffsetKinds lists every kind, in order.
func OffsetKinds() []OffsetKind {
	out := make([]OffsetKind, numOffsetKinds)
	for i := range out {
		out[i] = OffsetKind(i)
	}
	return out
}

// Offsets are the offsets a partition carries, each present or not.
type Offsets struct {
	has      uint16
	answered uint16 // kinds the response stated (Answer)
	vals     [numOffsetKinds]int64
	// CommittedMetadata is the metadata string committed or fetched with
	// the committed offset; "" when none.
	CommittedMetadata string
}

// Get returns the offset of kind k and whether the exchange stated it.
func (o *Offsets) Get(k OffsetKind) (int64, bool) {
	if k >= numOffsetKinds || o.has&(1<<k) == 0 {
		return 0, false
	}
	return o.vals[k], true
}

// Set records the offset of kind k (the first statement wins).
func (o *Offsets) Set(k OffsetKind, v int64) {
	if k >= numOffsetKinds || o.has&(1<<k) != 0 {
		return
	}
	o.has |= 1 << k
	o.vals[k] = v
}

// Answer records the offset of kind k as the response states it: it
// replaces what the request said of the same kind (a Fetch request's
// LogStartOffset is a follower's, -1 from a consumer; its
// CurrentLeaderEpoch is what the client believes, the response's
// LeaderEpoch the broker's), and the response's first statement wins.
// A leader epoch of -1 (none known) replaces nothing.
func (o *Offsets) Answer(k OffsetKind, v int64) {
	if k >= numOffsetKinds || o.answered&(1<<k) != 0 || k == OffsetLeaderEpoch && v < 0 && o.has&(1<<k) != 0 {
		return
	}
	o.has |= 1 << k
	o.answered |= 1 << k
	o.vals[k] = v
}

// Any reports whether any offset is present.
func (o *Offsets) Any() bool { return o.has != 0 }

// answers marks the kinds that answer the request: what the broker
// wrote (a Produce's base offset), has (a Fetch's watermarks and log
// start, ListOffsets' offset, OffsetFetch's committed offset) or took
// (the offset an OffsetCommit or TxnOffsetCommit commits). The others are
// asked (FetchOffset, ListOffsets' timestamp) or are epochs.
const answers = 1<<OffsetBase | 1<<OffsetHighWatermark | 1<<OffsetLastStable | 1<<OffsetLogStart |
	1<<OffsetCommitted | 1<<OffsetListed | 1<<OffsetEnd | 1<<OffsetLowWatermark

// Result returns offset k as a result of the exchange for the partition:
// as Offsets.Get, except that an offset that answers the request (a
// base offset, watermark, listed or committed offset) is no result when
// the partition has an error. A broker refusing a Produce partition
// (NOT_LEADER_OR_FOLLOWER) still sends a BaseOffset, -1 or 0; a refused
// commit's offset was not committed; a failed ListOffsets' or
// OffsetFetch's offset is a placeholder. Get still gives what the wire
// said.
func (p *Partition) Result(k OffsetKind) (int64, bool) {
	if p.Error != 0 && k < numOffsetKinds && answers&(1<<k) != 0 {
		return 0, false
	}
	return p.Offsets.Get(k)
}

// Codecs is a set of compression codecs, one bit per protocol.Codec.
type Codecs uint8

// Add adds codec c (0 none .. 4 zstd; others are not kept).
func (s *Codecs) Add(c protocol.Codec) {
	if c >= 0 && c < 8 {
		*s |= 1 << uint(c)
	}
}

// Has reports whether c is in the set.
func (s Codecs) Has(c protocol.Codec) bool { return c >= 0 && c < 8 && s&(1<<uint(c)) != 0 }

// List returns the codecs in the set, by number.
func (s Codecs) List() []protocol.Codec {
	var out []protocol.Codec
	for c := protocol.Codec(0); c < 8; c++ {
		if s.Has(c) {
			out = append(out, c)
		}
	}
	return out
}

// Names returns the codecs' names ("none", "gzip", ...), by number.
func (s Codecs) Names() []string {
	var out []string
	for _, c := range s.List() {
		out = append(out, c.String())
	}
	return out
}

// Records summarises the record batches (magic 2) or legacy messages
// (magic 0 and 1) of one RECORDS field (Kafka protocol guide, "Record
// Batch", "Message Sets").
type Records struct {
	// Batches counts magic 2 batches and top-level legacy messages (a
	// compressed wrapper is one).
	Batches int
	// Count is the number of records (legacy: of messages, a wrapper's
	// inner ones); -1 when some batch's count is unknown (a compressed
	// legacy wrapper that did not decompress).
	Count int64
	// Bytes is the size on the wire of the whole batches (a partial
	// batch at the end is not counted), or of the field's data when its
	// batches were not decoded; Uncompressed the size with every payload
	// decompressed, counting only the batches whose decompressed size is
	// known (UnknownSize counts the others: not decompressed, or failed).
	Bytes, Uncompressed int64
	UnknownSize         int
	// Codecs are the compression codecs of the batches.
	Codecs Codecs
	// Magics is the set of batch magics seen (bit 0, 1, 2).
	Magics uint8
	// FirstOffset and LastOffset are the first and last records' absolute
	// offsets, when HasOffsets.
	FirstOffset, LastOffset int64
	HasOffsets              bool
	// Partial says the field ends in a partial batch (normal in a Fetch
	// response: the broker cuts at the byte limit).
	Partial bool
	// Transactional and Control count batches with those attribute bits
	// (KIP-98); Commits and Aborts the control records of those types.
	Transactional, Control int
	Commits, Aborts        int
	// The first batch's producer (idempotent or transactional producers;
	// -1 ID none), when HasProducer, and how many records that batch
	// holds (LastOffsetDelta+1): its sequence numbers are BaseSequence to
	// BaseSequence+ProducerRecords-1 (wrapping at 2^31, KIP-98). A
	// Produce request (v3+) carries one batch per partition.
	ProducerID      int64
	ProducerEpoch   int16
	BaseSequence    int32
	ProducerRecords int32
	HasProducer     bool
	// Markers are the first MaxMarkers control records of the control
	// batches, in wire order: which producer's transaction committed or
	// aborted where.
	Markers []Marker
	// CRCErrors counts batches whose stored CRC does not match; Damaged
	// those (or their records) with any other decoding problem.
	CRCErrors, Damaged int
}

// WithheldMessage is Error.Message when the broker's message was withheld
// as a secret: the mark JSON gives every withheld string.
const WithheldMessage = "<redacted>"

// Error is one non-zero error code of a response, with what it belongs to.
type Error struct {
	Code int16
	// Name is Kafka's name for the code ("NOT_LEADER_OR_FOLLOWER"), or
	// "UNKNOWN(code)".
	Name string
	// Message is the broker's ErrorMessage beside the code; "" when none,
	// null or empty; WithheldMessage when the decoder withheld it (it
	// repeats a secret of the request: protocol.WithholdEchoes).
	Message string
	// Topic is the index in Exchange.Topics of the topic the error is
	// under, -1 when none; Partition its partition, -1 when the error is
	// at the topic's level or above.
	Topic     int
	Partition int32
	// Scope names the other entity the error belongs to, when the struct
	// holding the code names one: a group, member, transaction, resource
	// or coordinator key (Role is the role of the field naming it).
	Scope Scope
}

// Scope is an entity an error belongs to: the value of the field with
// role Role in the struct holding the error code or one enclosing it.
type Scope struct {
	Role protocol.Role // protocol.RoleGroupID, RoleMemberID, RoleTransactionalID, RoleResourceName, RoleCoordinatorKey, RoleProducerID (Topic.Owner); RoleNone: none
	ID   string
}

// Group is what an exchange says about the group it is about.
type Group struct {
	ID string
	// MemberID is the member the request speaks for ("" on a first
	// JoinGroup), AssignedMemberID the one the response gives (JoinGroup,
	// ConsumerGroupHeartbeat).
	MemberID, AssignedMemberID string
	InstanceID                 string // group.instance.id of a static member (KIP-345)
	// Generation is a classic group's generation (the request's, or the
	// response's for JoinGroup), when HasGeneration; MemberEpoch a KIP-848
	// member epoch (the request's: -1 leaves, -2 a static member leaves;
	// AssignedEpoch the response's), when HasEpoch.
	Generation, MemberEpoch, AssignedEpoch int32
	HasGeneration, HasEpoch, HasAssigned   bool
	// GenerationOrEpoch is an OffsetCommit's or TxnOffsetCommit's
	// GenerationIdOrMemberEpoch as the wire gives it, when HasGenOrEpoch:
	// the generation of a classic group's member or the member epoch of
	// a KIP-848 consumer (or KIP-1071 streams) group's. OffsetCommit
	// before v9 is classic only (OffsetCommitRequest.json: v9 is the
	// first a consumer-protocol member may use), so there it is also
	// Generation; from v9, and in TxnOffsetCommit (v3+), the exchange
	// alone does not say which: Names.Resolve makes it Generation or
	// MemberEpoch once an exchange of the group showed the group's
	// protocol, and leaves it undecided otherwise.
	GenerationOrEpoch int32
	HasGenOrEpoch     bool
	// ProtocolType is "consumer", "connect", ...; Protocol the assignor
	// chosen (JoinGroup/SyncGroup response, SyncGroup request) and
	// Protocols those a JoinGroup request offers.
	ProtocolType, Protocol string
	Protocols              []string
	Leader                 string // JoinGroupResponse Leader: the leader's member ID
	Reason                 string // JoinGroup/LeaveGroup reason (KIP-800)
	// SessionTimeoutMs and RebalanceTimeoutMs are -1 when not stated;
	// HeartbeatIntervalMs is a heartbeat response's interval (KIP-848,
	// share and streams groups), -1 when not stated.
	SessionTimeoutMs, RebalanceTimeoutMs, HeartbeatIntervalMs int32
	// Subscription is what this member subscribes to (JoinGroup request;
	// the KIP-848 heartbeat's subscribed topics).
	Subscription *Subscription
	// Assignment is what this member is given (SyncGroup response; the
	// KIP-848 heartbeat response's assignment).
	Assignment *Assignment
	// Owned are the partitions this member says it owns (the KIP-848
	// heartbeat request's TopicPartitions).
	Owned []TopicPartitions
	// Members are the members the exchange lists: a JoinGroup response's
	// (the leader's view, with subscriptions), a SyncGroup request's plan
	// (the leader's, with each member's assignment), LeaveGroup v3+'s
	// members. (The members of groups a describe response describes are
	// in Exchange.Described.)
	Members []Member
}

// IsZero reports whether the exchange names no group.
func (g *Group) IsZero() bool {
	return g.ID == "" && g.MemberID == "" && g.AssignedMemberID == "" && len(g.Members) == 0 &&
		!g.HasGeneration && !g.HasEpoch
}

// Member is one member a group exchange lists.
type Member struct {
	ID, InstanceID string
	// ClientID is a described member's client ID (the describe response's
	// ClientId); "" elsewhere.
	ClientID     string
	Reason       string
	Subscription *Subscription
	Assignment   *Assignment
	Error        int16
	// Epoch is a KIP-848 (share, streams) member's epoch as a describe
	// response states it (MemberEpoch), when HasEpoch.
	Epoch    int32
	HasEpoch bool
	// Target is the assignment a KIP-848 member is to have once the
	// partitions it is given are released by the others (the describe
	// response's TargetAssignment, whose epoch is the group's
	// AssignmentEpoch); Assignment is what it has now. nil when not
	// stated.
	Target *Assignment
}

// DescribedGroup is one group of a describe response (DescribeGroups,
// ConsumerGroupDescribe, ShareGroupDescribe, StreamsGroupDescribe).
type DescribedGroup struct {
	ID string
	// Error is the group's error code (GROUP_ID_NOT_FOUND, ...); 0 when
	// none.
	Error int16
	// State is the group's state as the coordinator describes it
	// (GroupState: classic "Stable", "PreparingRebalance",
	// "CompletingRebalance", "Empty", "Dead"; KIP-848 "Stable",
	// "Assigning", "Reconciling", "Empty"); "" when not stated.
	State string
	// ProtocolType and Protocol are a classic group's (DescribeGroups
	// ProtocolType, ProtocolData): "consumer", "connect"...; the assignor
	// chosen ("range", "cooperative-sticky"...). "" when not stated or
	// empty.
	ProtocolType, Protocol string
	// Epoch is a KIP-848 (share, streams) group's epoch (GroupEpoch) and
	// AssignmentEpoch its target assignment's; -1 when not stated (a
	// classic group).
	Epoch, AssignmentEpoch int32
	// Members are its members, in wire order; a KIP-848 member with its
	// epoch, its assignment and its target, a subscription of its
	// SubscribedTopicNames; a classic consumer group's (DescribeGroups,
	// ProtocolType "consumer") with the subscription and assignment its
	// MemberMetadata and MemberAssignment hold.
	Members []Member
}

// Subscription is a member's subscription (ConsumerProtocolSubscription,
// KIP-429 for owned partitions, KIP-341 generation, KIP-881 rack).
type Subscription struct {
	Version int16
	Topics  []string
	// Owned are the partitions the member owns (cooperative rebalancing).
	Owned []TopicPartitions
	// Generation is the generation the owned partitions are from; -1 when
	// not stated.
	Generation int32
	Rack       string
	// Worker is a Kafka Connect worker's metadata (a "connect" group's
	// ConnectProtocolMetadata), nil for a consumer's subscription.
	Worker *Worker
}

// Assignment is a member's assignment (ConsumerProtocolAssignment, or a
// KIP-848 heartbeat's).
type Assignment struct {
	Version    int16
	Partitions []TopicPartitions
	// Connect is a Kafka Connect worker's assignment (a "connect"
	// group's ConnectProtocolAssignment), nil for a consumer's.
	Connect *ConnectAssignment
}

// Worker is what a Kafka Connect worker's group metadata says
// (ConnectProtocolMetadata, kwire's protocol/schemas, after Kafka's
// ConnectProtocol.java and IncrementalCooperativeConnectProtocol.java).
type Worker struct {
	// URL is the worker's REST URL; "" with URLWithheld when it held a
	// userinfo and was withheld.
	URL         string
	URLWithheld bool
	// ConfigOffset is the config topic offset the worker has read to.
	ConfigOffset int64
	// Allocation is the worker's current assignment (v1+), nil when null
	// or not stated.
	Allocation *ConnectAssignment
}

// ConnectAssignment is a Kafka Connect worker's assignment
// (ConnectProtocolAssignment).
type ConnectAssignment struct {
	Version int16
	// Error is Connect's own code: 0 NONE, 1 CONFIG_MISMATCH (the
	// worker's config offset is behind the leader's); not a Kafka error
	// code.
	Error int16
	// Leader is the leader worker's member ID, LeaderURL its REST URL
	// ("" with LeaderURLWithheld when withheld).
	Leader            string
	LeaderURL         string
	LeaderURLWithheld bool
	// ConfigOffset is the config topic offset the assignment was made at.
	ConfigOffset int64
	// Connectors are the connectors and tasks assigned, Revoked those
	// revoked (v1+; nil when null or not stated). Task -1 is the
	// connector instance itself.
	Connectors, Revoked []ConnectorTasks
	// DelayMs is the delay before a scheduled rebalance (v1+), 0 when
	// none.
	DelayMs int32
}

// ConnectorTasks is a connector and some of its task IDs (-1: the
// connector instance itself).
type ConnectorTasks struct {
	Connector string
	Tasks     []int32
}

// TaskCount is the number of connector instances and tasks in cs.
func TaskCount(cs []ConnectorTasks) int {
	n := 0
	for _, c := range cs {
		n += len(c.Tasks)
	}
	return n
}

// TopicPartitions is one topic and some of its partitions.
type TopicPartitions struct {
	Topic      string // "" when only an ID names it and its name is unknown
	ID         TopicID
	HasID      bool
	Partitions []int32
}

// Label is the topic's name, else its ID, else ZeroIDLabel.
func (tp *TopicPartitions) Label() string {
	return idLabel(tp.Topic, tp.ID, tp.HasID)
}

// Producer is a transactional ID and producer ID and epoch.
type Producer struct {
	TransactionalID string
	HasTxnID        bool
	// ID and Epoch are the request's (-1 when it asks for new ones; a
	// Produce's are its first record batch's with a producer);
	// NewID and NewEpoch the response's (InitProducerId; EndTxn v5+,
	// KIP-890), when HasNew.
	ID, NewID       int64
	Epoch, NewEpoch int16
	HasID, HasEpoch bool
	HasNew          bool
	// Enable2PC and KeepPrepared are an InitProducerId v6+ request's
	// Enable2Pc and KeepPreparedTxn (KIP-939): the producer takes part in
	// two-phase commits, and asks that the transaction it prepared be
	// kept for it to complete, not aborted.
	Enable2PC, KeepPrepared bool
	// OngoingID and OngoingEpoch are an InitProducerId v6+ response's
	// OngoingTxnProducerId and OngoingTxnProducerEpoch, when HasOngoing:
	// the producer ID and epoch of the prepared transaction kept (-1:
	// none), which the producer completes with NewID and NewEpoch. They
	// are not the producer's new ID and epoch.
	OngoingID    int64
	OngoingEpoch int16
	HasOngoing   bool
}

// IsZero reports whether no producer is named.
func (p *Producer) IsZero() bool { return !p.HasTxnID && !p.HasID && !p.HasEpoch && !p.HasNew }

// Transaction is one transaction of a batched request or a listing.
type Transaction struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	HasProducer     bool
	Topics          []TopicPartitions
	// VerifyOnly: a broker asked whether the partitions are in the
	// transaction (AddPartitionsToTxn v4+ VerifyOnly, KIP-890), adding
	// none.
	VerifyOnly bool
}

// Coordinator is a FindCoordinator key and what it resolved to.
type Coordinator struct {
	// KeyType is 0 group, 1 transaction, 2 share (KIP-932); KeyTypeName
	// Kafka's name for it.
	KeyType     int8
	KeyTypeName string
	Key         string
	// NodeID, Host and Port are the coordinator, when Found.
	NodeID int32
	Host   string
	Port   int32
	Found  bool
	Error  int16
}

// Resource is a config or ACL resource an exchange names.
type Resource struct {
	// Type is the resource type (2 is a topic for both configs and ACLs;
	// 4 broker, 32 group, ...), TypeName Kafka's name for it ("broker",
	// "group", "cluster"; "" when unknown).
	Type     int8
	TypeName string
	Name     string
	// Pattern is an ACL pattern type (3 literal, 4 prefixed, ...), -1
	// when the resource has none (configs); PatternName Kafka's name for
	// it.
	Pattern     int8
	PatternName string
	Configs     []Config
}

// Config is one config entry of a resource.
type Config struct {
	Name  string
	Value string
	Null  bool // the value is null (a delete, or withheld by the broker)
	// Sensitive says the broker marks it sensitive (IsSensitive) or it is
	// of type PASSWORD (ConfigType 9, KIP-336); Redacted that kwire
	// withheld its value (Value is then "").
	Sensitive, Redacted bool
}

// AllTopics returns every topic the exchange names, each once, in order:
// Topics, then the topics only a group's subscriptions, assignments or
// owned partitions name, then those only a transaction names. Each is a
// name, or the ID (TopicID.String) where no name is known (Label).
func (fx *Exchange) AllTopics() []string {
	var out []string
	var seen map[string]bool
	add := func(s string) {
		if s == "" {
			return
		}
		if seen == nil {
			seen = make(map[string]bool)
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for i := range fx.Topics {
		add(fx.Topics[i].Label())
	}
	addTPs := func(tps []TopicPartitions) {
		for i := range tps {
			add(tps[i].Label())
		}
	}
	addSub := func(s *Subscription) {
		if s != nil {
			for _, t := range s.Topics {
				add(t)
			}
			addTPs(s.Owned)
		}
	}
	g := &fx.Group
	addSub(g.Subscription)
	if g.Assignment != nil {
		addTPs(g.Assignment.Partitions)
	}
	addTPs(g.Owned)
	for i := range g.Members {
		addSub(g.Members[i].Subscription)
		if a := g.Members[i].Assignment; a != nil {
			addTPs(a.Partitions)
		}
	}
	for i := range fx.Described {
		for j := range fx.Described[i].Members {
			m := &fx.Described[i].Members[j]
			addSub(m.Subscription)
			for _, a := range [...]*Assignment{m.Assignment, m.Target} {
				if a != nil {
					addTPs(a.Partitions)
				}
			}
		}
	}
	for i := range fx.Transactions {
		addTPs(fx.Transactions[i].Topics)
	}
	return out
}

// Unnamed reports whether a topic the exchange names where AllTopics
// looks (and in a fetch session's forgotten topics) is known by a
// non-zero topic ID alone: no name beside it, none learnt (Names). Its
// label in AllTopics is then the ID, not the name.
func (fx *Exchange) Unnamed() bool {
	byID := func(tps []TopicPartitions) bool {
		for i := range tps {
			if tp := &tps[i]; tp.Topic == "" && tp.HasID && !tp.ID.IsZero() {
				return true
			}
		}
		return false
	}
	for i := range fx.Topics {
		if t := &fx.Topics[i]; t.Name == "" && t.HasID && !t.ID.IsZero() {
			return true
		}
	}
	sub := func(s *Subscription) bool { return s != nil && byID(s.Owned) }
	assigned := func(a *Assignment) bool { return a != nil && byID(a.Partitions) }
	g := &fx.Group
	if sub(g.Subscription) || assigned(g.Assignment) || byID(g.Owned) || byID(fx.Forgotten) {
		return true
	}
	for i := range g.Members {
		if sub(g.Members[i].Subscription) || assigned(g.Members[i].Assignment) {
			return true
		}
	}
	for i := range fx.Described {
		for j := range fx.Described[i].Members {
			m := &fx.Described[i].Members[j]
			if sub(m.Subscription) || assigned(m.Assignment) || assigned(m.Target) {
				return true
			}
		}
	}
	for i := range fx.Transactions {
		if byID(fx.Transactions[i].Topics) {
			return true
		}
	}
	return false
}

// TopicIDs returns the topic IDs the exchange names (TopicID.String),
// each once, resolved to a name or not.
func (fx *Exchange) TopicIDs() []string {
	var out []string
	seen := map[TopicID]bool{}
	add := func(has bool, id TopicID) {
		if has && !seen[id] {
			seen[id] = true
			out = append(out, id.String())
		}
	}
	for i := range fx.Topics {
		add(fx.Topics[i].HasID, fx.Topics[i].ID)
	}
	g := &fx.Group
	for i := range g.Owned {
		add(g.Owned[i].HasID, g.Owned[i].ID)
	}
	addTPs := func(a *Assignment) {
		if a != nil {
			for i := range a.Partitions {
				add(a.Partitions[i].HasID, a.Partitions[i].ID)
			}
		}
	}
	addTPs(g.Assignment)
	for i := range fx.Described {
		for j := range fx.Described[i].Members {
			addTPs(fx.Described[i].Members[j].Assignment)
			addTPs(fx.Described[i].Members[j].Target)
		}
	}
	return out
}
