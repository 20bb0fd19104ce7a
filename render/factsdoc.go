package render

import (
	"strconv"

	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
)

// FactsDoc is the "facts" object of kwire read --json: what an exchange
// says (package facts), in kwire's JSON vocabulary (docs/json.md). Every
// key is always present: null when the exchange does not state it, []
// for an empty list. The --filter language reaches the same fields by the
// same names (facts.topics[0].partitions[0].highWatermark).
// TestFactsDocFields pins the key set; docs/schema/exchange.json
// describes it.
type FactsDoc struct {
	Topics []TopicDoc `json:"topics" expr:"topics"`
	// Forgotten are the partitions an incremental Fetch drops from its
	// session (ForgottenTopicsData, KIP-227): not fetched, not in topics.
	Forgotten      []TopicPartitionDoc `json:"forgotten" expr:"forgotten"`
	Errors         []ErrorDoc          `json:"errors" expr:"errors"`
	ThrottleTimeMs *int32              `json:"throttleTimeMs" expr:"throttleTimeMs" jsonschema:"nullable"`
	Group          *GroupDoc           `json:"group" expr:"group" jsonschema:"nullable"`
	Groups         []string            `json:"groups" expr:"groups"`
	// Described are the groups a describe response describes, with their
	// members (DescribeGroups, ConsumerGroupDescribe, ShareGroupDescribe,
	// StreamsGroupDescribe).
	Described    []DescribedGroupDoc `json:"described" expr:"described"`
	Producer     *ProducerDoc        `json:"producer" expr:"producer" jsonschema:"nullable"`
	Transactions []TransactionDoc    `json:"transactions" expr:"transactions"`
	// Commit is an EndTxn request's outcome: true COMMIT, false ABORT.
	Commit *bool `json:"commit" expr:"commit" jsonschema:"nullable"`
	// ValidateOnly: the request only asked the broker to check it
	// (ValidateOnly of CreateTopics, AlterConfigs, ...): nothing changed.
	ValidateOnly   bool             `json:"validateOnly" expr:"validateOnly"`
	Coordinators   []CoordinatorDoc `json:"coordinators" expr:"coordinators"`
	Resources      []ResourceDoc    `json:"resources" expr:"resources"`
	IsolationLevel *string          `json:"isolationLevel" expr:"isolationLevel" jsonschema:"nullable"` // "read_committed"
	Acks           *int16           `json:"acks" expr:"acks" jsonschema:"nullable"`
	TimeoutMs      *int32           `json:"timeoutMs" expr:"timeoutMs" jsonschema:"nullable"`
	MaxWaitMs      *int32           `json:"maxWaitMs" expr:"maxWaitMs" jsonschema:"nullable"`
	ClientSoftware *SoftwareDoc     `json:"clientSoftware" expr:"clientSoftware" jsonschema:"nullable"`
	APIVersions    *APIVersionsDoc  `json:"apiVersions" expr:"apiVersions" jsonschema:"nullable"`
}

// TopicDoc is one topic an exchange names.
type TopicDoc struct {
	Name     *string `json:"name" expr:"name" jsonschema:"nullable"`       // null when only an ID names it and its name is unknown
	TopicID  *string `json:"topicId" expr:"topicId" jsonschema:"nullable"` // Kafka's base64url form; null when the wire named it by name
	Error    *string `json:"error" expr:"error" jsonschema:"nullable"`     // the topic-level error's name
	Resource bool    `json:"resource" expr:"resource"`
	// Owner is the batch entry listing the topic (facts.Topic.Owner): kind
	// group (OffsetFetch v8+, ConsumerGroupDescribe) or transactionalId
	// (AddPartitionsToTxn v4+); null for a topic of the exchange as a whole.
	Owner      *ScopeDoc      `json:"owner" expr:"owner" jsonschema:"nullable"`
	Partitions []PartitionDoc `json:"partitions" expr:"partitions"`
}

// PartitionDoc is one partition of a topic.
type PartitionDoc struct {
	Partition        int32   `json:"partition" expr:"partition"`
	Error            *string `json:"error" expr:"error" jsonschema:"nullable"`
	BaseOffset       *int64  `json:"baseOffset" expr:"baseOffset" jsonschema:"nullable"`
	FetchOffset      *int64  `json:"fetchOffset" expr:"fetchOffset" jsonschema:"nullable"`
	HighWatermark    *int64  `json:"highWatermark" expr:"highWatermark" jsonschema:"nullable"`
	LastStableOffset *int64  `json:"lastStableOffset" expr:"lastStableOffset" jsonschema:"nullable"`
	// LogStartOffset and LeaderEpoch are the response's when it states
	// them (a Fetch request's LogStartOffset is a follower's, -1 from a
	// consumer; its CurrentLeaderEpoch is what the client believes), the
	// request's otherwise; a response's leader epoch -1 leaves the request's.
	LogStartOffset    *int64  `json:"logStartOffset" expr:"logStartOffset" jsonschema:"nullable"`
	CommittedOffset   *int64  `json:"committedOffset" expr:"committedOffset" jsonschema:"nullable"`
	CommittedMetadata *string `json:"committedMetadata" expr:"committedMetadata" jsonschema:"nullable"`
	ListedOffset      *int64  `json:"listedOffset" expr:"listedOffset" jsonschema:"nullable"`
	ListTimestamp     *int64  `json:"listTimestamp" expr:"listTimestamp" jsonschema:"nullable"`
	LeaderEpoch       *int64  `json:"leaderEpoch" expr:"leaderEpoch" jsonschema:"nullable"`
	// EndOffset is where the leader epoch asked for ends
	// (OffsetForLeaderEpoch, KIP-101); LowWatermark the log start after a
	// DeleteRecords (KIP-107).
	EndOffset    *int64 `json:"endOffset" expr:"endOffset" jsonschema:"nullable"`
	LowWatermark *int64 `json:"lowWatermark" expr:"lowWatermark" jsonschema:"nullable"`
	// DeletionOffset is what a DeleteRecords request asks: delete the
	// records before it (-1: before the high watermark; KIP-107).
	DeletionOffset *int64 `json:"deletionOffset" expr:"deletionOffset" jsonschema:"nullable"`
	// ActiveProducers counts the producers a DescribeProducers response
	// lists on the partition (KIP-664), Producers the first 64 of them;
	// null for other exchanges.
	ActiveProducers     *int32              `json:"activeProducers" expr:"activeProducers" jsonschema:"nullable"`
	Producers           []ActiveProducerDoc `json:"producers" expr:"producers" jsonschema:"nullable"`
	Records             *RecordsDoc         `json:"records" expr:"records" jsonschema:"nullable"`
	AbortedTransactions *int32              `json:"abortedTransactions" expr:"abortedTransactions" jsonschema:"nullable"`
	// Aborted lists the first 64 aborted transactions of a read_committed
	// Fetch response (abortedTransactions counts them all); empty when
	// it lists none.
	Aborted []AbortedTxnDoc `json:"aborted" expr:"aborted"`
}

// AbortedTxnDoc is one aborted transaction a Fetch response lists
// (KIP-98): the consumer skips that producer's records from firstOffset
// up to its ABORT marker.
type AbortedTxnDoc struct {
	ProducerID  int64 `json:"producerId" expr:"producerId"`
	FirstOffset int64 `json:"firstOffset" expr:"firstOffset"`
}

// MarkerDoc is one control record of a control batch: a transaction's
// COMMIT or ABORT marker (KIP-98) at its absolute offset.
type MarkerDoc struct {
	Type          string `json:"type" expr:"type"` // COMMIT or ABORT
	ProducerID    int64  `json:"producerId" expr:"producerId"`
	ProducerEpoch int16  `json:"producerEpoch" expr:"producerEpoch"`
	Offset        int64  `json:"offset" expr:"offset"`
}

// RecordsDoc summarises a partition's record batches.
type RecordsDoc struct {
	Batches              int      `json:"batches" expr:"batches"`
	Count                *int64   `json:"count" expr:"count" jsonschema:"nullable"` // records; null when a compressed legacy wrapper did not decompress
	WireBytes            int64    `json:"wireBytes" expr:"wireBytes"`
	UncompressedBytes    int64    `json:"uncompressedBytes" expr:"uncompressedBytes"`
	UnknownSizeBatches   int      `json:"unknownSizeBatches" expr:"unknownSizeBatches"`
	Codecs               []string `json:"codecs" expr:"codecs"`
	Magics               []int    `json:"magics" expr:"magics"`
	FirstOffset          *int64   `json:"firstOffset" expr:"firstOffset" jsonschema:"nullable"`
	LastOffset           *int64   `json:"lastOffset" expr:"lastOffset" jsonschema:"nullable"`
	Partial              bool     `json:"partial" expr:"partial"`
	TransactionalBatches int      `json:"transactionalBatches" expr:"transactionalBatches"`
	ControlBatches       int      `json:"controlBatches" expr:"controlBatches"`
	Commits              int      `json:"commits" expr:"commits"`
	Aborts               int      `json:"aborts" expr:"aborts"`
	ProducerID           *int64   `json:"producerId" expr:"producerId" jsonschema:"nullable"`
	ProducerEpoch        *int16   `json:"producerEpoch" expr:"producerEpoch" jsonschema:"nullable"`
	BaseSequence         *int32   `json:"baseSequence" expr:"baseSequence" jsonschema:"nullable"`
	// ProducerRecords is how many records the first batch of the
	// producer holds: its sequences run baseSequence to
	// baseSequence+producerRecords-1 (null with producerId).
	ProducerRecords *int32 `json:"producerRecords" expr:"producerRecords" jsonschema:"nullable"`
	// Markers are the first 64 control records (commits and aborts
	// count them all).
	Markers   []MarkerDoc `json:"markers" expr:"markers"`
	CrcErrors int         `json:"crcErrors" expr:"crcErrors"`
	Damaged   int         `json:"damaged" expr:"damaged"`
}

// ErrorDoc is one non-zero error code of a response.
type ErrorDoc struct {
	Code      int16     `json:"code" expr:"code"`
	Name      string    `json:"name" expr:"name"`
	Message   *string   `json:"message" expr:"message" jsonschema:"nullable"`
	Topic     *string   `json:"topic" expr:"topic" jsonschema:"nullable"` // the topic it is under (its name, else its ID)
	Partition *int32    `json:"partition" expr:"partition" jsonschema:"nullable"`
	Scope     *ScopeDoc `json:"scope" expr:"scope" jsonschema:"nullable"` // the member, group, transaction, resource or key it belongs to
}

// ScopeDoc is an entity an error or a topic belongs to: kind is member,
// groupInstanceId (a LeaveGroup entry named by instance alone), group,
// transactionalId, producerId (a WriteTxnMarkers entry), resource or
// coordinatorKey.
type ScopeDoc struct {
	Kind string `json:"kind" expr:"kind"`
	ID   string `json:"id" expr:"id"`
}

// GroupDoc is what an exchange says about its group.
type GroupDoc struct {
	GroupID          *string `json:"groupId" expr:"groupId" jsonschema:"nullable"`
	MemberID         *string `json:"memberId" expr:"memberId" jsonschema:"nullable"`
	AssignedMemberID *string `json:"assignedMemberId" expr:"assignedMemberId" jsonschema:"nullable"`
	GroupInstanceID  *string `json:"groupInstanceId" expr:"groupInstanceId" jsonschema:"nullable"`
	GenerationID     *int32  `json:"generationId" expr:"generationId" jsonschema:"nullable"`
	MemberEpoch      *int32  `json:"memberEpoch" expr:"memberEpoch" jsonschema:"nullable"`
	AssignedEpoch    *int32  `json:"assignedEpoch" expr:"assignedEpoch" jsonschema:"nullable"`
	// GenerationIDOrMemberEpoch is an OffsetCommit's or TxnOffsetCommit's
	// GenerationIdOrMemberEpoch as sent; generationId or memberEpoch says
	// which it is when the API version or an exchange of the group before
	// showed its protocol (KIP-848; both null otherwise).
	GenerationIDOrMemberEpoch *int32   `json:"generationIdOrMemberEpoch" expr:"generationIdOrMemberEpoch" jsonschema:"nullable"`
	ProtocolType              *string  `json:"protocolType" expr:"protocolType" jsonschema:"nullable"`
	Protocol                  *string  `json:"protocolName" expr:"protocolName" jsonschema:"nullable"` // ProtocolName: the assignor chosen
	Protocols                 []string `json:"protocols" expr:"protocols"`
	Leader                    *string  `json:"leader" expr:"leader" jsonschema:"nullable"`
	Reason                    *string  `json:"reason" expr:"reason" jsonschema:"nullable"`
	SessionTimeoutMs          *int32   `json:"sessionTimeoutMs" expr:"sessionTimeoutMs" jsonschema:"nullable"`
	RebalanceTimeoutMs        *int32   `json:"rebalanceTimeoutMs" expr:"rebalanceTimeoutMs" jsonschema:"nullable"`
	// HeartbeatIntervalMs is the interval a KIP-848, share or streams
	// group heartbeat response asks for.
	HeartbeatIntervalMs *int32              `json:"heartbeatIntervalMs" expr:"heartbeatIntervalMs" jsonschema:"nullable"`
	Subscription        *SubscriptionDoc    `json:"subscription" expr:"subscription" jsonschema:"nullable"`
	Assignment          []TopicPartitionDoc `json:"assignment" expr:"assignment" jsonschema:"nullable"` // null when not stated
	Owned               []TopicPartitionDoc `json:"owned" expr:"owned"`
	Members             []MemberDoc         `json:"members" expr:"members"`
}

// SubscriptionDoc is a member's subscription.
type SubscriptionDoc struct {
	Version      int16               `json:"version" expr:"version"`
	Topics       []string            `json:"topics" expr:"topics"`
	Owned        []TopicPartitionDoc `json:"owned" expr:"owned"`
	GenerationID *int32              `json:"generationId" expr:"generationId" jsonschema:"nullable"`
}

// MemberDoc is one member a group exchange lists.
type MemberDoc struct {
	MemberID        string              `json:"memberId" expr:"memberId"`
	GroupInstanceID *string             `json:"groupInstanceId" expr:"groupInstanceId" jsonschema:"nullable"`
	Reason          *string             `json:"reason" expr:"reason" jsonschema:"nullable"`
	Subscription    *SubscriptionDoc    `json:"subscription" expr:"subscription" jsonschema:"nullable"`
	Assignment      []TopicPartitionDoc `json:"assignment" expr:"assignment" jsonschema:"nullable"`
	Error           *string             `json:"error" expr:"error" jsonschema:"nullable"`
	// MemberEpoch is a KIP-848 (share, streams) member's epoch and
	// TargetAssignment what it is to have (ConsumerGroupDescribe);
	// null when not stated.
	MemberEpoch      *int32              `json:"memberEpoch" expr:"memberEpoch" jsonschema:"nullable"`
	TargetAssignment []TopicPartitionDoc `json:"targetAssignment" expr:"targetAssignment" jsonschema:"nullable"`
}

// ActiveProducerDoc is one producer a DescribeProducers response lists
// (KIP-664): its ID and epoch, the last sequence it wrote and that
// write's timestamp, its coordinator's epoch, and where its open
// transaction began (-1: none).
type ActiveProducerDoc struct {
	ProducerID            int64 `json:"producerId" expr:"producerId"`
	ProducerEpoch         int32 `json:"producerEpoch" expr:"producerEpoch"`
	LastSequence          int32 `json:"lastSequence" expr:"lastSequence"`
	LastTimestamp         int64 `json:"lastTimestamp" expr:"lastTimestamp"`
	CoordinatorEpoch      int32 `json:"coordinatorEpoch" expr:"coordinatorEpoch"`
	CurrentTxnStartOffset int64 `json:"currentTxnStartOffset" expr:"currentTxnStartOffset"`
}

// DescribedGroupDoc is one group of a describe response.
type DescribedGroupDoc struct {
	GroupID string  `json:"groupId" expr:"groupId"`
	Error   *string `json:"error" expr:"error" jsonschema:"nullable"` // the group's error's name
	// GroupEpoch and AssignmentEpoch are a KIP-848 (share, streams)
	// group's epoch and its target assignment's; null for a classic group.
	GroupEpoch      *int32 `json:"groupEpoch" expr:"groupEpoch" jsonschema:"nullable"`
	AssignmentEpoch *int32 `json:"assignmentEpoch" expr:"assignmentEpoch" jsonschema:"nullable"`
	// State is the group's state as the coordinator describes it
	// (GroupState: "Stable", "PreparingRebalance", "Empty", ...); null
	// when not stated.
	State   *string     `json:"state" expr:"state" jsonschema:"nullable"`
	Members []MemberDoc `json:"members" expr:"members"`
}

// TopicPartitionDoc is a topic and some of its partitions.
type TopicPartitionDoc struct {
	Topic      *string `json:"topic" expr:"topic" jsonschema:"nullable"`
	TopicID    *string `json:"topicId" expr:"topicId" jsonschema:"nullable"`
	Partitions []int32 `json:"partitions" expr:"partitions"`
}

// ProducerDoc is a transactional ID and a producer's ID and epoch: the
// request's, and the new ones a response gives (InitProducerId, EndTxn
// v5+).
type ProducerDoc struct {
	TransactionalID  *string `json:"transactionalId" expr:"transactionalId" jsonschema:"nullable"`
	ProducerID       *int64  `json:"producerId" expr:"producerId" jsonschema:"nullable"`
	ProducerEpoch    *int16  `json:"producerEpoch" expr:"producerEpoch" jsonschema:"nullable"`
	NewProducerID    *int64  `json:"newProducerId" expr:"newProducerId" jsonschema:"nullable"`
	NewProducerEpoch *int16  `json:"newProducerEpoch" expr:"newProducerEpoch" jsonschema:"nullable"`
	// Enable2Pc and KeepPreparedTxn are an InitProducerId v6+ request's
	// (KIP-939); OngoingTxnProducerID and OngoingTxnProducerEpoch its
	// response's: the prepared transaction kept (-1: none), not the
	// producer's new ID and epoch; null when not stated.
	Enable2Pc               bool   `json:"enable2Pc" expr:"enable2Pc"`
	KeepPreparedTxn         bool   `json:"keepPreparedTxn" expr:"keepPreparedTxn"`
	OngoingTxnProducerID    *int64 `json:"ongoingTxnProducerId" expr:"ongoingTxnProducerId" jsonschema:"nullable"`
	OngoingTxnProducerEpoch *int16 `json:"ongoingTxnProducerEpoch" expr:"ongoingTxnProducerEpoch" jsonschema:"nullable"`
}

// TransactionDoc is one transaction of a batch or listing.
type TransactionDoc struct {
	TransactionalID string              `json:"transactionalId" expr:"transactionalId"`
	ProducerID      *int64              `json:"producerId" expr:"producerId" jsonschema:"nullable"`
	ProducerEpoch   *int16              `json:"producerEpoch" expr:"producerEpoch" jsonschema:"nullable"`
	Topics          []TopicPartitionDoc `json:"topics" expr:"topics"`
	VerifyOnly      bool                `json:"verifyOnly" expr:"verifyOnly"` // AddPartitionsToTxn v4+: a broker's check, adding nothing (KIP-890)
}

// CoordinatorDoc is a FindCoordinator key and its coordinator.
type CoordinatorDoc struct {
	KeyType string  `json:"keyType" expr:"keyType"` // group, transaction, share
	Key     string  `json:"key" expr:"key"`
	NodeID  *int32  `json:"nodeId" expr:"nodeId" jsonschema:"nullable"`
	Host    *string `json:"host" expr:"host" jsonschema:"nullable"`
	Port    *int32  `json:"port" expr:"port" jsonschema:"nullable"`
	Error   *string `json:"error" expr:"error" jsonschema:"nullable"`
}

// ResourceDoc is a config or ACL resource.
type ResourceDoc struct {
	Type    string      `json:"type" expr:"type"` // topic, broker, group, cluster, ...
	Name    string      `json:"name" expr:"name"`
	Pattern *string     `json:"pattern" expr:"pattern" jsonschema:"nullable"` // an ACL pattern type: literal, prefixed, ...
	Configs []ConfigDoc `json:"configs" expr:"configs"`
}

// ConfigDoc is one config entry; a redacted value is null with redacted
// true, never its bytes.
type ConfigDoc struct {
	Name      string  `json:"name" expr:"name"`
	Value     *string `json:"value" expr:"value" jsonschema:"nullable"`
	Sensitive bool    `json:"sensitive" expr:"sensitive"`
	Redacted  bool    `json:"redacted" expr:"redacted"`
}

// SoftwareDoc is a client's software name and version (KIP-511).
type SoftwareDoc struct {
	Name    string `json:"name" expr:"name"`
	Version string `json:"version" expr:"version"`
}

// APIVersionsDoc is an ApiVersions response's advertisement.
type APIVersionsDoc struct {
	Error             *string               `json:"error" expr:"error" jsonschema:"nullable"`
	Ranges            []APIRangeDoc         `json:"ranges" expr:"ranges"`
	SupportedFeatures []FeatureDoc          `json:"supportedFeatures" expr:"supportedFeatures"`
	FinalizedFeatures []FinalizedFeatureDoc `json:"finalizedFeatures" expr:"finalizedFeatures"`
	FinalizedEpoch    *int64                `json:"finalizedFeaturesEpoch" expr:"finalizedFeaturesEpoch" jsonschema:"nullable"`
}

// APIRangeDoc is one API key's supported versions.
type APIRangeDoc struct {
	APIKey     int16  `json:"apiKey" expr:"apiKey"`
	API        string `json:"api" expr:"api"`
	MinVersion int16  `json:"minVersion" expr:"minVersion"`
	MaxVersion int16  `json:"maxVersion" expr:"maxVersion"`
}

// FeatureDoc is a feature the broker supports: ApiVersionsResponse
// SupportedFeatures' Name, MinVersion and MaxVersion (KIP-584).
type FeatureDoc struct {
	Name       string `json:"name" expr:"name"`
	MinVersion int16  `json:"minVersion" expr:"minVersion"`
	MaxVersion int16  `json:"maxVersion" expr:"maxVersion"`
}

// FinalizedFeatureDoc is a feature finalized cluster-wide:
// ApiVersionsResponse FinalizedFeatures' Name, MinVersionLevel and
// MaxVersionLevel (KIP-584).
type FinalizedFeatureDoc struct {
	Name            string `json:"name" expr:"name"`
	MinVersionLevel int16  `json:"minVersionLevel" expr:"minVersionLevel"`
	MaxVersionLevel int16  `json:"maxVersionLevel" expr:"maxVersionLevel"`
}

func ptr[T any](v T) *T { return &v }

// strPtr is s's address, nil for "". (&s itself would move s to the heap
// where the call is inlined, "" or not: an allocation for every empty
// string.)
func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return ptr(s)
}

func errName(code int16) *string {
	if code == 0 {
		return nil
	}
	return ptr(protocol.KafkaErrorName(code))
}

// NewFactsDoc builds the FactsDoc of fx (resolved by the run's
// facts.Names).
func NewFactsDoc(fx *facts.Exchange) *FactsDoc {
	d := &FactsDoc{Topics: []TopicDoc{}, Errors: []ErrorDoc{}, Groups: []string{}, Described: []DescribedGroupDoc{}, Transactions: []TransactionDoc{},
		Coordinators: []CoordinatorDoc{}, Resources: []ResourceDoc{}}
	if fx == nil {
		return d
	}
	// Every list is made at its length (an ApiVersions response's 60 API
	// ranges grew its slice seven times).
	d.Topics = make([]TopicDoc, 0, len(fx.Topics))
	d.Errors = make([]ErrorDoc, 0, len(fx.Errors))
	d.Transactions = make([]TransactionDoc, 0, len(fx.Transactions))
	d.Coordinators = make([]CoordinatorDoc, 0, len(fx.Coordinators))
	d.Resources = make([]ResourceDoc, 0, len(fx.Resources))
	for i := range fx.Topics {
		t := &fx.Topics[i]
		td := TopicDoc{Name: strPtr(t.Name), Error: errName(t.Error), Resource: t.Resource, Partitions: make([]PartitionDoc, 0, len(t.Partitions))}
		if t.HasID {
			td.TopicID = ptr(t.ID.String())
		}
		if k := scopeKind(t.Owner.Role); k != "" {
			td.Owner = &ScopeDoc{Kind: k, ID: t.Owner.ID}
		}
		for j := range t.Partitions {
			td.Partitions = append(td.Partitions, partitionDoc(&t.Partitions[j]))
		}
		d.Topics = append(d.Topics, td)
	}
	for i := range fx.Errors {
		e := &fx.Errors[i]
		ed := ErrorDoc{Code: e.Code, Name: e.Name, Message: strPtr(e.Message)}
		if e.Topic >= 0 {
			ed.Topic = ptr(fx.Topics[e.Topic].Label())
		}
		if e.Partition >= 0 {
			ed.Partition = ptr(e.Partition)
		}
		if k := scopeKind(e.Scope.Role); k != "" {
			ed.Scope = &ScopeDoc{Kind: k, ID: e.Scope.ID}
		}
		d.Errors = append(d.Errors, ed)
	}
	if fx.ThrottleMs >= 0 {
		d.ThrottleTimeMs = ptr(fx.ThrottleMs)
	}
	if !fx.Group.IsZero() {
		d.Group = groupDoc(&fx.Group)
	}
	d.Groups = append(d.Groups, fx.Groups...)
	for i := range fx.Described {
		g := &fx.Described[i]
		gd := DescribedGroupDoc{GroupID: g.ID, Error: errName(g.Error), Members: make([]MemberDoc, 0, len(g.Members))}
		if g.Epoch >= 0 {
			gd.GroupEpoch = ptr(g.Epoch)
		}
		if g.AssignmentEpoch >= 0 {
			gd.AssignmentEpoch = ptr(g.AssignmentEpoch)
		}
		if g.State != "" {
			gd.State = ptr(g.State)
		}
		for j := range g.Members {
			gd.Members = append(gd.Members, memberDoc(&g.Members[j]))
		}
		d.Described = append(d.Described, gd)
	}
	if p := &fx.Producer; !p.IsZero() {
		pd := &ProducerDoc{}
		if p.HasTxnID {
			pd.TransactionalID = ptr(p.TransactionalID)
		}
		if p.HasID {
			pd.ProducerID = ptr(p.ID)
		}
		if p.HasEpoch {
			pd.ProducerEpoch = ptr(p.Epoch)
		}
		if p.HasNew {
			pd.NewProducerID, pd.NewProducerEpoch = ptr(p.NewID), ptr(p.NewEpoch)
		}
		pd.Enable2Pc, pd.KeepPreparedTxn = p.Enable2PC, p.KeepPrepared
		if p.HasOngoing {
			pd.OngoingTxnProducerID, pd.OngoingTxnProducerEpoch = ptr(p.OngoingID), ptr(p.OngoingEpoch)
		}
		d.Producer = pd
	}
	for i := range fx.Transactions {
		t := &fx.Transactions[i]
		td := TransactionDoc{TransactionalID: t.TransactionalID, Topics: tpDocs(t.Topics), VerifyOnly: t.VerifyOnly}
		if t.HasProducer {
			td.ProducerID, td.ProducerEpoch = ptr(t.ProducerID), ptr(t.ProducerEpoch)
		}
		d.Transactions = append(d.Transactions, td)
	}
	switch fx.Commit {
	case 0:
		d.Commit = ptr(false)
	case 1:
		d.Commit = ptr(true)
	}
	d.ValidateOnly = fx.ValidateOnly
	d.Forgotten = tpDocs(fx.Forgotten)
	for i := range fx.Coordinators {
		c := &fx.Coordinators[i]
		cd := CoordinatorDoc{KeyType: c.KeyTypeName, Key: c.Key, Error: errName(c.Error)}
		if cd.KeyType == "" {
			cd.KeyType = "type(" + itoa(int64(c.KeyType)) + ")"
		}
		if c.Found {
			cd.NodeID, cd.Host, cd.Port = ptr(c.NodeID), ptr(c.Host), ptr(c.Port)
		}
		d.Coordinators = append(d.Coordinators, cd)
	}
	for i := range fx.Resources {
		r := &fx.Resources[i]
		rd := ResourceDoc{Type: r.TypeName, Name: r.Name, Configs: make([]ConfigDoc, 0, len(r.Configs))}
		if rd.Type == "" {
			rd.Type = "type(" + itoa(int64(r.Type)) + ")"
		}
		if r.Pattern >= 0 {
			rd.Pattern = strPtr(r.PatternName)
			if rd.Pattern == nil {
				rd.Pattern = ptr("type(" + itoa(int64(r.Pattern)) + ")")
			}
		}
		for _, c := range r.Configs {
			cd := ConfigDoc{Name: c.Name, Sensitive: c.Sensitive, Redacted: c.Redacted}
			if !c.Null && !c.Redacted {
				cd.Value = ptr(c.Value)
			}
			rd.Configs = append(rd.Configs, cd)
		}
		d.Resources = append(d.Resources, rd)
	}
	switch {
	case fx.IsolationName != "":
		d.IsolationLevel = ptr(fx.IsolationName)
	case fx.Isolation >= 0:
		d.IsolationLevel = ptr(itoa(int64(fx.Isolation)))
	}
	if fx.HasAcks {
		d.Acks = ptr(fx.Acks)
	}
	if fx.TimeoutMs >= 0 {
		d.TimeoutMs = ptr(fx.TimeoutMs)
	}
	if fx.MaxWaitMs >= 0 {
		d.MaxWaitMs = ptr(fx.MaxWaitMs)
	}
	if s := fx.Software; s.Name != "" || s.Version != "" {
		d.ClientSoftware = &SoftwareDoc{Name: s.Name, Version: s.Version}
	}
	if av := fx.APIVersions; av != nil {
		ad := &APIVersionsDoc{Error: errName(av.Error), Ranges: make([]APIRangeDoc, 0, len(av.Ranges)),
			SupportedFeatures: make([]FeatureDoc, 0, len(av.SupportedFeatures)), FinalizedFeatures: make([]FinalizedFeatureDoc, 0, len(av.FinalizedFeatures))}
		for _, r := range av.Ranges {
			ad.Ranges = append(ad.Ranges, APIRangeDoc{APIKey: r.Key, API: protocol.APIName(r.Key), MinVersion: r.Min, MaxVersion: r.Max})
		}
		for _, f := range av.SupportedFeatures {
			ad.SupportedFeatures = append(ad.SupportedFeatures, FeatureDoc{f.Name, f.Min, f.Max})
		}
		for _, f := range av.FinalizedFeatures {
			ad.FinalizedFeatures = append(ad.FinalizedFeatures, FinalizedFeatureDoc{f.Name, f.Min, f.Max})
		}
		if av.FinalizedEpoch >= 0 {
			ad.FinalizedEpoch = ptr(av.FinalizedEpoch)
		}
		d.APIVersions = ad
	}
	return d
}

func partitionDoc(p *facts.Partition) PartitionDoc {
	pd := PartitionDoc{Partition: p.Index, Error: errName(p.Error), CommittedMetadata: strPtr(p.Offsets.CommittedMetadata)}
	o := &p.Offsets
	for _, k := range [...]struct {
		kind facts.OffsetKind
		dst  **int64
	}{
		{facts.OffsetBase, &pd.BaseOffset}, {facts.OffsetFetch, &pd.FetchOffset}, {facts.OffsetHighWatermark, &pd.HighWatermark},
		{facts.OffsetLastStable, &pd.LastStableOffset}, {facts.OffsetLogStart, &pd.LogStartOffset},
		{facts.OffsetCommitted, &pd.CommittedOffset}, {facts.OffsetListed, &pd.ListedOffset},
		{facts.OffsetListTimestamp, &pd.ListTimestamp}, {facts.OffsetLeaderEpoch, &pd.LeaderEpoch},
		{facts.OffsetEnd, &pd.EndOffset}, {facts.OffsetLowWatermark, &pd.LowWatermark},
		{facts.OffsetDeletion, &pd.DeletionOffset},
	} {
		if v, ok := o.Get(k.kind); ok {
			*k.dst = ptr(v)
		}
	}
	if p.AbortedTxns >= 0 {
		pd.AbortedTransactions = ptr(p.AbortedTxns)
	}
	if p.ActiveProducers >= 0 {
		pd.ActiveProducers = ptr(p.ActiveProducers)
		pd.Producers = make([]ActiveProducerDoc, len(p.Producers))
		for i, a := range p.Producers {
			pd.Producers[i] = ActiveProducerDoc{ProducerID: a.ProducerID, ProducerEpoch: a.ProducerEpoch, LastSequence: a.LastSequence,
				LastTimestamp: a.LastTimestamp, CoordinatorEpoch: a.CoordinatorEpoch, CurrentTxnStartOffset: a.CurrentTxnStartOffset}
		}
	}
	pd.Aborted = make([]AbortedTxnDoc, len(p.Aborted))
	for i, a := range p.Aborted {
		pd.Aborted[i] = AbortedTxnDoc{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
	}
	if r := p.Records; r != nil {
		rd := &RecordsDoc{Batches: r.Batches, WireBytes: r.Bytes, UncompressedBytes: r.Uncompressed,
			UnknownSizeBatches: r.UnknownSize, Codecs: r.Codecs.Names(), Magics: []int{}, Partial: r.Partial,
			TransactionalBatches: r.Transactional, ControlBatches: r.Control, Commits: r.Commits, Aborts: r.Aborts,
			CrcErrors: r.CRCErrors, Damaged: r.Damaged}
		if rd.Codecs == nil {
			rd.Codecs = []string{}
		}
		for m := 0; m < 3; m++ {
			if r.Magics&(1<<m) != 0 {
				rd.Magics = append(rd.Magics, m)
			}
		}
		if r.Count >= 0 {
			rd.Count = ptr(r.Count)
		}
		if r.HasOffsets {
			rd.FirstOffset, rd.LastOffset = ptr(r.FirstOffset), ptr(r.LastOffset)
		}
		if r.HasProducer {
			rd.ProducerID, rd.ProducerEpoch, rd.BaseSequence = ptr(r.ProducerID), ptr(r.ProducerEpoch), ptr(r.BaseSequence)
			rd.ProducerRecords = ptr(r.ProducerRecords)
		}
		rd.Markers = make([]MarkerDoc, len(r.Markers))
		for i, m := range r.Markers {
			t := "ABORT"
			if m.Commit {
				t = "COMMIT"
			}
			rd.Markers[i] = MarkerDoc{Type: t, ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch, Offset: m.Offset}
		}
		pd.Records = rd
	}
	return pd
}

func groupDoc(g *facts.Group) *GroupDoc {
	d := &GroupDoc{GroupID: strPtr(g.ID), MemberID: strPtr(g.MemberID), AssignedMemberID: strPtr(g.AssignedMemberID),
		GroupInstanceID: strPtr(g.InstanceID), ProtocolType: strPtr(g.ProtocolType), Protocol: strPtr(g.Protocol),
		Protocols: append([]string{}, g.Protocols...), Leader: strPtr(g.Leader), Reason: strPtr(g.Reason),
		Subscription: subscriptionDoc(g.Subscription), Owned: tpDocs(g.Owned), Members: make([]MemberDoc, 0, len(g.Members))}
	if g.HasGeneration {
		d.GenerationID = ptr(g.Generation)
	}
	if g.HasEpoch {
		d.MemberEpoch = ptr(g.MemberEpoch)
	}
	if g.HasAssigned {
		d.AssignedEpoch = ptr(g.AssignedEpoch)
	}
	if g.HasGenOrEpoch {
		d.GenerationIDOrMemberEpoch = ptr(g.GenerationOrEpoch)
	}
	if g.SessionTimeoutMs >= 0 {
		d.SessionTimeoutMs = ptr(g.SessionTimeoutMs)
	}
	if g.RebalanceTimeoutMs >= 0 {
		d.RebalanceTimeoutMs = ptr(g.RebalanceTimeoutMs)
	}
	if g.HeartbeatIntervalMs >= 0 {
		d.HeartbeatIntervalMs = ptr(g.HeartbeatIntervalMs)
	}
	if g.Assignment != nil {
		d.Assignment = tpDocs(g.Assignment.Partitions)
	}
	for i := range g.Members {
		d.Members = append(d.Members, memberDoc(&g.Members[i]))
	}
	return d
}

func memberDoc(m *facts.Member) MemberDoc {
	md := MemberDoc{MemberID: m.ID, GroupInstanceID: strPtr(m.InstanceID), Reason: strPtr(m.Reason),
		Subscription: subscriptionDoc(m.Subscription), Error: errName(m.Error)}
	if m.Assignment != nil {
		md.Assignment = tpDocs(m.Assignment.Partitions)
	}
	if m.HasEpoch {
		md.MemberEpoch = ptr(m.Epoch)
	}
	if m.Target != nil {
		md.TargetAssignment = tpDocs(m.Target.Partitions)
	}
	return md
}

func subscriptionDoc(s *facts.Subscription) *SubscriptionDoc {
	if s == nil {
		return nil
	}
	d := &SubscriptionDoc{Version: s.Version, Topics: append([]string{}, s.Topics...), Owned: tpDocs(s.Owned)}
	if s.Generation >= 0 {
		d.GenerationID = ptr(s.Generation)
	}
	return d
}

func tpDocs(tps []facts.TopicPartitions) []TopicPartitionDoc {
	out := make([]TopicPartitionDoc, 0, len(tps))
	for i := range tps {
		tp := &tps[i]
		d := TopicPartitionDoc{Topic: strPtr(tp.Topic), Partitions: append([]int32{}, tp.Partitions...)}
		if tp.HasID {
			d.TopicID = ptr(tp.ID.String())
		}
		out = append(out, d)
	}
	return out
}

// scopeKind names an error scope's role in ScopeDoc.
func scopeKind(r protocol.Role) string {
	switch r {
	case protocol.RoleMemberID:
		return "member"
	case protocol.RoleGroupInstanceID:
		return "groupInstanceId"
	case protocol.RoleGroupID:
		return "group"
	case protocol.RoleTransactionalID:
		return "transactionalId"
	case protocol.RoleResourceName:
		return "resource"
	case protocol.RoleCoordinatorKey:
		return "coordinatorKey"
	case protocol.RoleProducerID:
		return "producerId"
	}
	return ""
}

// appendFactsDoc appends d as json.Encoder with SetEscapeHTML(false)
// writes it, without the newline; with int64s, its 64-bit integers as
// decimal strings, as json.Encoder writes jsonint64.Strings(d)
// (Options.Int64Strings). It writes each document's keys itself, in
// their fields' order, rather than through encoding/json's reflection
// (a tenth of kwire read --json's CPU on small exchanges);
// TestFactsDocAppend holds it to encoding/json on every golden capture and
// on documents with every field set.
func appendFactsDoc(b []byte, d *FactsDoc, int64s bool) ([]byte, bool) {
	if d == nil {
		return append(b, "null"...), true
	}
	w := factsWriter{b: b, int64s: int64s}
	w.facts(d)
	return w.b, true
}

// factsWriter appends a FactsDoc's JSON.
type factsWriter struct {
	b      []byte
	int64s bool // 64-bit integers as decimal strings
}

func (w *factsWriter) key(first bool, k string) {
	if !first {
		w.b = append(w.b, ',')
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, k...)
	w.b = append(w.b, '"', ':')
}

func (w *factsWriter) null()         { w.b = append(w.b, "null"...) }
func (w *factsWriter) str(s string)  { w.b = appendStdString(w.b, s, false) }
func (w *factsWriter) int(v int64)   { w.b = strconv.AppendInt(w.b, v, 10) }
func (w *factsWriter) bool(v bool)   { w.b = strconv.AppendBool(w.b, v) }
func (w *factsWriter) int64(v int64) { w.b = appendInt64Doc(w.b, v, w.int64s) }
func (w *factsWriter) punct(c byte)  { w.b = append(w.b, c) }

func (w *factsWriter) comma(i int) {
	if i > 0 {
		w.b = append(w.b, ',')
	}
}

// appendInt64Doc appends a 64-bit integer: a number, or with int64s a
// decimal string.
func appendInt64Doc(b []byte, v int64, int64s bool) []byte {
	if int64s {
		b = append(b, '"')
		b = strconv.AppendInt(b, v, 10)
		return append(b, '"')
	}
	return strconv.AppendInt(b, v, 10)
}

func (w *factsWriter) optStr(p *string) {
	if p == nil {
		w.null()
		return
	}
	w.str(*p)
}

func (w *factsWriter) optInt64(p *int64) {
	if p == nil {
		w.null()
		return
	}
	w.int64(*p)
}

func optInt[T int16 | int32](w *factsWriter, p *T) {
	if p == nil {
		w.null()
		return
	}
	w.int(int64(*p))
}

// list appends a JSON array of the n elements elem appends; nil is null.
func list[T any](w *factsWriter, s []T, elem func(*T)) {
	if s == nil {
		w.null()
		return
	}
	w.punct('[')
	for i := range s {
		w.comma(i)
		elem(&s[i])
	}
	w.punct(']')
}

func (w *factsWriter) strs(s []string) { list(w, s, func(v *string) { w.str(*v) }) }

func ints[T int | int32](w *factsWriter, s []T) { list(w, s, func(v *T) { w.int(int64(*v)) }) }

func (w *factsWriter) facts(d *FactsDoc) {
	w.punct('{')
	w.key(true, "topics")
	list(w, d.Topics, w.topic)
	w.key(false, "forgotten")
	list(w, d.Forgotten, w.topicPartitions)
	w.key(false, "errors")
	list(w, d.Errors, w.error)
	w.key(false, "throttleTimeMs")
	optInt(w, d.ThrottleTimeMs)
	w.key(false, "group")
	w.group(d.Group)
	w.key(false, "groups")
	w.strs(d.Groups)
	w.key(false, "described")
	list(w, d.Described, w.described)
	w.key(false, "producer")
	w.producer(d.Producer)
	w.key(false, "transactions")
	list(w, d.Transactions, w.transaction)
	w.key(false, "commit")
	if d.Commit == nil {
		w.null()
	} else {
		w.bool(*d.Commit)
	}
	w.key(false, "validateOnly")
	w.bool(d.ValidateOnly)
	w.key(false, "coordinators")
	list(w, d.Coordinators, w.coordinator)
	w.key(false, "resources")
	list(w, d.Resources, w.resource)
	w.key(false, "isolationLevel")
	w.optStr(d.IsolationLevel)
	w.key(false, "acks")
	optInt(w, d.Acks)
	w.key(false, "timeoutMs")
	optInt(w, d.TimeoutMs)
	w.key(false, "maxWaitMs")
	optInt(w, d.MaxWaitMs)
	w.key(false, "clientSoftware")
	if s := d.ClientSoftware; s == nil {
		w.null()
	} else {
		w.punct('{')
		w.key(true, "name")
		w.str(s.Name)
		w.key(false, "version")
		w.str(s.Version)
		w.punct('}')
	}
	w.key(false, "apiVersions")
	w.apiVersions(d.APIVersions)
	w.punct('}')
}

func (w *factsWriter) topic(t *TopicDoc) {
	w.punct('{')
	w.key(true, "name")
	w.optStr(t.Name)
	w.key(false, "topicId")
	w.optStr(t.TopicID)
	w.key(false, "error")
	w.optStr(t.Error)
	w.key(false, "resource")
	w.bool(t.Resource)
	w.key(false, "owner")
	w.scope(t.Owner)
	w.key(false, "partitions")
	list(w, t.Partitions, w.partition)
	w.punct('}')
}

func (w *factsWriter) partition(p *PartitionDoc) {
	w.punct('{')
	w.key(true, "partition")
	w.int(int64(p.Partition))
	w.key(false, "error")
	w.optStr(p.Error)
	w.key(false, "baseOffset")
	w.optInt64(p.BaseOffset)
	w.key(false, "fetchOffset")
	w.optInt64(p.FetchOffset)
	w.key(false, "highWatermark")
	w.optInt64(p.HighWatermark)
	w.key(false, "lastStableOffset")
	w.optInt64(p.LastStableOffset)
	w.key(false, "logStartOffset")
	w.optInt64(p.LogStartOffset)
	w.key(false, "committedOffset")
	w.optInt64(p.CommittedOffset)
	w.key(false, "committedMetadata")
	w.optStr(p.CommittedMetadata)
	w.key(false, "listedOffset")
	w.optInt64(p.ListedOffset)
	w.key(false, "listTimestamp")
	w.optInt64(p.ListTimestamp)
	w.key(false, "leaderEpoch")
	w.optInt64(p.LeaderEpoch)
	w.key(false, "endOffset")
	w.optInt64(p.EndOffset)
	w.key(false, "lowWatermark")
	w.optInt64(p.LowWatermark)
	w.key(false, "deletionOffset")
	w.optInt64(p.DeletionOffset)
	w.key(false, "activeProducers")
	optInt(w, p.ActiveProducers)
	w.key(false, "producers")
	list(w, p.Producers, func(a *ActiveProducerDoc) {
		w.punct('{')
		w.key(true, "producerId")
		w.int64(a.ProducerID)
		w.key(false, "producerEpoch")
		w.int(int64(a.ProducerEpoch))
		w.key(false, "lastSequence")
		w.int(int64(a.LastSequence))
		w.key(false, "lastTimestamp")
		w.int64(a.LastTimestamp)
		w.key(false, "coordinatorEpoch")
		w.int(int64(a.CoordinatorEpoch))
		w.key(false, "currentTxnStartOffset")
		w.int64(a.CurrentTxnStartOffset)
		w.punct('}')
	})
	w.key(false, "records")
	w.records(p.Records)
	w.key(false, "abortedTransactions")
	optInt(w, p.AbortedTransactions)
	w.key(false, "aborted")
	list(w, p.Aborted, func(a *AbortedTxnDoc) {
		w.punct('{')
		w.key(true, "producerId")
		w.int64(a.ProducerID)
		w.key(false, "firstOffset")
		w.int64(a.FirstOffset)
		w.punct('}')
	})
	w.punct('}')
}

func (w *factsWriter) records(r *RecordsDoc) {
	if r == nil {
		w.null()
		return
	}
	w.punct('{')
	w.key(true, "batches")
	w.int(int64(r.Batches))
	w.key(false, "count")
	w.optInt64(r.Count)
	w.key(false, "wireBytes")
	w.int64(r.WireBytes)
	w.key(false, "uncompressedBytes")
	w.int64(r.UncompressedBytes)
	w.key(false, "unknownSizeBatches")
	w.int(int64(r.UnknownSizeBatches))
	w.key(false, "codecs")
	w.strs(r.Codecs)
	w.key(false, "magics")
	ints(w, r.Magics)
	w.key(false, "firstOffset")
	w.optInt64(r.FirstOffset)
	w.key(false, "lastOffset")
	w.optInt64(r.LastOffset)
	w.key(false, "partial")
	w.bool(r.Partial)
	w.key(false, "transactionalBatches")
	w.int(int64(r.TransactionalBatches))
	w.key(false, "controlBatches")
	w.int(int64(r.ControlBatches))
	w.key(false, "commits")
	w.int(int64(r.Commits))
	w.key(false, "aborts")
	w.int(int64(r.Aborts))
	w.key(false, "producerId")
	w.optInt64(r.ProducerID)
	w.key(false, "producerEpoch")
	optInt(w, r.ProducerEpoch)
	w.key(false, "baseSequence")
	optInt(w, r.BaseSequence)
	w.key(false, "producerRecords")
	optInt(w, r.ProducerRecords)
	w.key(false, "markers")
	list(w, r.Markers, func(m *MarkerDoc) {
		w.punct('{')
		w.key(true, "type")
		w.str(m.Type)
		w.key(false, "producerId")
		w.int64(m.ProducerID)
		w.key(false, "producerEpoch")
		w.int(int64(m.ProducerEpoch))
		w.key(false, "offset")
		w.int64(m.Offset)
		w.punct('}')
	})
	w.key(false, "crcErrors")
	w.int(int64(r.CrcErrors))
	w.key(false, "damaged")
	w.int(int64(r.Damaged))
	w.punct('}')
}

func (w *factsWriter) error(e *ErrorDoc) {
	w.punct('{')
	w.key(true, "code")
	w.int(int64(e.Code))
	w.key(false, "name")
	w.str(e.Name)
	w.key(false, "message")
	w.optStr(e.Message)
	w.key(false, "topic")
	w.optStr(e.Topic)
	w.key(false, "partition")
	optInt(w, e.Partition)
	w.key(false, "scope")
	w.scope(e.Scope)
	w.punct('}')
}

func (w *factsWriter) scope(s *ScopeDoc) {
	if s == nil {
		w.null()
		return
	}
	w.punct('{')
	w.key(true, "kind")
	w.str(s.Kind)
	w.key(false, "id")
	w.str(s.ID)
	w.punct('}')
}

func (w *factsWriter) group(g *GroupDoc) {
	if g == nil {
		w.null()
		return
	}
	w.punct('{')
	w.key(true, "groupId")
	w.optStr(g.GroupID)
	w.key(false, "memberId")
	w.optStr(g.MemberID)
	w.key(false, "assignedMemberId")
	w.optStr(g.AssignedMemberID)
	w.key(false, "groupInstanceId")
	w.optStr(g.GroupInstanceID)
	w.key(false, "generationId")
	optInt(w, g.GenerationID)
	w.key(false, "memberEpoch")
	optInt(w, g.MemberEpoch)
	w.key(false, "assignedEpoch")
	optInt(w, g.AssignedEpoch)
	w.key(false, "generationIdOrMemberEpoch")
	optInt(w, g.GenerationIDOrMemberEpoch)
	w.key(false, "protocolType")
	w.optStr(g.ProtocolType)
	w.key(false, "protocolName")
	w.optStr(g.Protocol)
	w.key(false, "protocols")
	w.strs(g.Protocols)
	w.key(false, "leader")
	w.optStr(g.Leader)
	w.key(false, "reason")
	w.optStr(g.Reason)
	w.key(false, "sessionTimeoutMs")
	optInt(w, g.SessionTimeoutMs)
	w.key(false, "rebalanceTimeoutMs")
	optInt(w, g.RebalanceTimeoutMs)
	w.key(false, "heartbeatIntervalMs")
	optInt(w, g.HeartbeatIntervalMs)
	w.key(false, "subscription")
	w.subscription(g.Subscription)
	w.key(false, "assignment")
	list(w, g.Assignment, w.topicPartitions)
	w.key(false, "owned")
	list(w, g.Owned, w.topicPartitions)
	w.key(false, "members")
	list(w, g.Members, w.member)
	w.punct('}')
}

func (w *factsWriter) member(m *MemberDoc) {
	w.punct('{')
	w.key(true, "memberId")
	w.str(m.MemberID)
	w.key(false, "groupInstanceId")
	w.optStr(m.GroupInstanceID)
	w.key(false, "reason")
	w.optStr(m.Reason)
	w.key(false, "subscription")
	w.subscription(m.Subscription)
	w.key(false, "assignment")
	list(w, m.Assignment, w.topicPartitions)
	w.key(false, "error")
	w.optStr(m.Error)
	w.key(false, "memberEpoch")
	optInt(w, m.MemberEpoch)
	w.key(false, "targetAssignment")
	list(w, m.TargetAssignment, w.topicPartitions)
	w.punct('}')
}

func (w *factsWriter) described(g *DescribedGroupDoc) {
	w.punct('{')
	w.key(true, "groupId")
	w.str(g.GroupID)
	w.key(false, "error")
	w.optStr(g.Error)
	w.key(false, "groupEpoch")
	optInt(w, g.GroupEpoch)
	w.key(false, "assignmentEpoch")
	optInt(w, g.AssignmentEpoch)
	w.key(false, "state")
	w.optStr(g.State)
	w.key(false, "members")
	list(w, g.Members, w.member)
	w.punct('}')
}

func (w *factsWriter) subscription(s *SubscriptionDoc) {
	if s == nil {
		w.null()
		return
	}
	w.punct('{')
	w.key(true, "version")
	w.int(int64(s.Version))
	w.key(false, "topics")
	w.strs(s.Topics)
	w.key(false, "owned")
	list(w, s.Owned, w.topicPartitions)
	w.key(false, "generationId")
	optInt(w, s.GenerationID)
	w.punct('}')
}

func (w *factsWriter) topicPartitions(tp *TopicPartitionDoc) {
	w.punct('{')
	w.key(true, "topic")
	w.optStr(tp.Topic)
	w.key(false, "topicId")
	w.optStr(tp.TopicID)
	w.key(false, "partitions")
	ints(w, tp.Partitions)
	w.punct('}')
}

func (w *factsWriter) producer(p *ProducerDoc) {
	if p == nil {
		w.null()
		return
	}
	w.punct('{')
	w.key(true, "transactionalId")
	w.optStr(p.TransactionalID)
	w.key(false, "producerId")
	w.optInt64(p.ProducerID)
	w.key(false, "producerEpoch")
	optInt(w, p.ProducerEpoch)
	w.key(false, "newProducerId")
	w.optInt64(p.NewProducerID)
	w.key(false, "newProducerEpoch")
	optInt(w, p.NewProducerEpoch)
	w.key(false, "enable2Pc")
	w.bool(p.Enable2Pc)
	w.key(false, "keepPreparedTxn")
	w.bool(p.KeepPreparedTxn)
	w.key(false, "ongoingTxnProducerId")
	w.optInt64(p.OngoingTxnProducerID)
	w.key(false, "ongoingTxnProducerEpoch")
	optInt(w, p.OngoingTxnProducerEpoch)
	w.punct('}')
}

func (w *factsWriter) transaction(t *TransactionDoc) {
	w.punct('{')
	w.key(true, "transactionalId")
	w.str(t.TransactionalID)
	w.key(false, "producerId")
	w.optInt64(t.ProducerID)
	w.key(false, "producerEpoch")
	optInt(w, t.ProducerEpoch)
	w.key(false, "topics")
	list(w, t.Topics, w.topicPartitions)
	w.key(false, "verifyOnly")
	w.bool(t.VerifyOnly)
	w.punct('}')
}

func (w *factsWriter) coordinator(c *CoordinatorDoc) {
	w.punct('{')
	w.key(true, "keyType")
	w.str(c.KeyType)
	w.key(false, "key")
	w.str(c.Key)
	w.key(false, "nodeId")
	optInt(w, c.NodeID)
	w.key(false, "host")
	w.optStr(c.Host)
	w.key(false, "port")
	optInt(w, c.Port)
	w.key(false, "error")
	w.optStr(c.Error)
	w.punct('}')
}

func (w *factsWriter) resource(r *ResourceDoc) {
	w.punct('{')
	w.key(true, "type")
	w.str(r.Type)
	w.key(false, "name")
	w.str(r.Name)
	w.key(false, "pattern")
	w.optStr(r.Pattern)
	w.key(false, "configs")
	list(w, r.Configs, func(c *ConfigDoc) {
		w.punct('{')
		w.key(true, "name")
		w.str(c.Name)
		w.key(false, "value")
		w.optStr(c.Value)
		w.key(false, "sensitive")
		w.bool(c.Sensitive)
		w.key(false, "redacted")
		w.bool(c.Redacted)
		w.punct('}')
	})
	w.punct('}')
}

func (w *factsWriter) apiVersions(a *APIVersionsDoc) {
	if a == nil {
		w.null()
		return
	}
	feature := func(f *FeatureDoc) {
		w.punct('{')
		w.key(true, "name")
		w.str(f.Name)
		w.key(false, "minVersion")
		w.int(int64(f.MinVersion))
		w.key(false, "maxVersion")
		w.int(int64(f.MaxVersion))
		w.punct('}')
	}
	finalized := func(f *FinalizedFeatureDoc) {
		w.punct('{')
		w.key(true, "name")
		w.str(f.Name)
		w.key(false, "minVersionLevel")
		w.int(int64(f.MinVersionLevel))
		w.key(false, "maxVersionLevel")
		w.int(int64(f.MaxVersionLevel))
		w.punct('}')
	}
	w.punct('{')
	w.key(true, "error")
	w.optStr(a.Error)
	w.key(false, "ranges")
	list(w, a.Ranges, func(r *APIRangeDoc) {
		w.punct('{')
		w.key(true, "apiKey")
		w.int(int64(r.APIKey))
		w.key(false, "api")
		w.str(r.API)
		w.key(false, "minVersion")
		w.int(int64(r.MinVersion))
		w.key(false, "maxVersion")
		w.int(int64(r.MaxVersion))
		w.punct('}')
	})
	w.key(false, "supportedFeatures")
	list(w, a.SupportedFeatures, feature)
	w.key(false, "finalizedFeatures")
	list(w, a.FinalizedFeatures, finalized)
	w.key(false, "finalizedFeaturesEpoch")
	w.optInt64(a.FinalizedEpoch)
	w.punct('}')
}
