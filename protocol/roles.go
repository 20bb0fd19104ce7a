package protocol

import (
	"strings"
	"sync"
)

// This file gives every schema field its Role: what the field means to an
// operator (a topic name, a partition index, an error code, a producer
// epoch...), beyond its name and type. Roles are the identity that kwire's
// facts (package facts), its filters and its statistics are derived from,
// so that nothing outside this package recognises a field by its name.
//
// Roles come from two sources, applied once when the package initialises
// (assignRoles), to every field of every message in Schemas and to the
// record-batch fields of recordfields.go:
//
//  1. The schema's own marking: Kafka's JSON gives "entityType" to the
//     fields that name a topic, group, transactional ID, producer ID or
//     broker (topicName, groupId, transactionalId, producerId, brokerId).
//  2. The rules in roleRules below, for meanings the JSON does not mark:
//     error codes, topic IDs, partition indexes, offsets, member IDs and
//     epochs, config and ACL resources, the embedded consumer-protocol
//     and Kafka Connect structs. Each rule names the field (by its name, optionally the
//     message and the path within it) and the Kafka type it must have.
//
// Partition indexes need structure as well as a name: a field is a
// partition index (RolePartition) when it is an int32 named like one
// inside a struct that names a topic, or inside an element of an array
// held by such a struct, or an []int32 array named like a list of
// partitions held by a struct that names a topic. (StreamsGroupHeartbeat's
// StateChangelogTopics.Partitions is an int32 count, and TaskIds'
// Partitions belong to a subtopology: neither is a partition index.)
//
// TestRoles pins the role of every field in testdata/roles.txt: a new
// schema that adds or changes a role shows up there in review.
//
// To add a role: add its constant and its name in roleNames, a rule (or
// an entityType) that assigns it, regenerate testdata/roles.txt with
// `go test ./protocol -run TestRoles -update`, and read the diff.

// Role is the meaning of a schema field. The zero Role means the field has
// no meaning kwire's facts rely on.
type Role uint8

// Field roles. Unless a comment says otherwise, a role applies to the
// field's value; for arrays of primitives (a []string of topic names, an
// []int32 of partitions) to each element.
const (
	RoleNone Role = iota

	// Topics and partitions.
	RoleTopicName // a topic name (entityType topicName; ConsumerProtocolSubscription.Topics)
	RoleTopicID   // a topic ID (uuid TopicId, KIP-516)
	RolePartition // a partition index of the topic named by the enclosing struct

	// Errors.
	RoleErrorCode    // a Kafka error code (int16 ...ErrorCode); 0 is no error
	RoleErrorMessage // the broker's message beside an error code

	// Groups (classic protocol, KIP-848 consumer groups, share and streams groups).
	RoleGroupID            // a group ID (entityType groupId)
	RoleMemberID           // a group member ID
	RoleGroupInstanceID    // a static member's group.instance.id (KIP-345)
	RoleGenerationID       // a classic group generation
	RoleMemberEpoch        // a KIP-848 member epoch (-1 leaves the group, -2 a static leave)
	RoleGenerationOrEpoch  // OffsetCommit/TxnOffsetCommit GenerationIdOrMemberEpoch
	RoleGroupProtocolType  // ProtocolType ("consumer", "connect", ...)
	RoleGroupProtocolName  // the chosen or offered assignor ("range", "cooperative-sticky", ...)
	RoleGroupLeader        // JoinGroupResponse Leader: the member ID of the leader
	RoleGroupReason        // JoinGroup/LeaveGroup Reason (KIP-800)
	RoleSessionTimeout     // SessionTimeoutMs
	RoleRebalanceTimeout   // RebalanceTimeoutMs
	RoleHeartbeatInterval  // a heartbeat response's HeartbeatIntervalMs: how often the broker wants heartbeats (KIP-848, KIP-932, KIP-1071)
	RoleSubscription       // bytes holding a ConsumerProtocolSubscription (JoinGroup metadata)
	RoleAssignment         // bytes holding a ConsumerProtocolAssignment (SyncGroup)
	RoleOwnedPartitions    // an array of topic-partitions a member says it owns
	RoleAssignedPartitions // an array of topic-partitions assigned to a member
	RoleTargetPartitions   // ConsumerGroupDescribe TargetAssignment's: the topic-partitions a member is to have once others released them (KIP-848)
	RoleGroupEpoch         // a KIP-848 (share, streams) group's epoch, as a describe response states it
	RoleAssignmentEpoch    // the epoch of such a group's target assignment
	RoleGroupState         // a group's state as the coordinator states it (GroupState: "Stable", "PreparingRebalance", "Empty", ...)
	RoleMemberClientID     // a described member's ClientId: the client ID of its latest join (or heartbeat)

	// Kafka Connect's group protocol (kwire's ConnectProtocolMetadata and
	// ConnectProtocolAssignment, protocol/schemas).
	RoleWorkerURL          // a Connect worker's REST URL (ConnectProtocolMetadata Url)
	RoleConfigOffset       // the config topic offset a worker has read to, or an assignment was made at
	RoleWorkerAllocation   // ConnectProtocolMetadata Allocation: bytes holding the worker's current ConnectProtocolAssignment (v1+)
	RoleConnectError       // a Connect assignment's Error: 0 NONE, 1 CONFIG_MISMATCH (Connect's codes, not Kafka's)
	RoleConnectLeader      // a Connect assignment's Leader: the member ID of the leader worker
	RoleConnectLeaderURL   // its LeaderUrl: the leader worker's REST URL
	RoleConnectorsAssigned // a Connect assignment's Assignment: the connectors, and their tasks, assigned
	RoleConnectorsRevoked  // its Revoked: the connectors, and their tasks, revoked (v1+)
	RoleConnectorName      // a connector's name in those
	RoleConnectorTasks     // its task IDs (-1: the connector instance itself)
	RoleRebalanceDelay     // a Connect assignment's Delay: milliseconds until a scheduled rebalance (v1+)

	// Transactions and producers.
	RoleTransactionalID      // a transactional ID (entityType transactionalId)
	RoleProducerID           // a producer ID (entityType producerId)
	RoleProducerEpoch        // a producer epoch (KIP-98; bumped per transaction by KIP-890)
	RoleTxnCommitted         // EndTxn Committed: true commits, false aborts
	RoleTxnVerifyOnly        // AddPartitionsToTxn v4+ VerifyOnly: a broker checks the partitions are in the transaction, adds none (KIP-890)
	RoleActiveProducers      // DescribeProducersResponse ActiveProducers: the producers with state on a partition (KIP-664)
	RoleLastSequence         // an active producer's LastSequence: the last sequence number it wrote
	RoleLastTimestamp        // an active producer's LastTimestamp: the timestamp of its last write
	RoleCoordinatorEpoch     // an active producer's CoordinatorEpoch: the epoch of its transaction coordinator
	RoleTxnStartOffset       // an active producer's CurrentTxnStartOffset: where its open transaction began (-1: none)
	RoleTxnEnable2PC         // InitProducerId v6+ Enable2Pc: the producer takes part in two-phase commits (KIP-939)
	RoleTxnKeepPrepared      // InitProducerId v6+ KeepPreparedTxn: keep the transaction it prepared, not abort it (KIP-939)
	RoleOngoingProducerID    // InitProducerIdResponse OngoingTxnProducerId: the producer ID of the prepared transaction kept (KIP-939)
	RoleOngoingProducerEpoch // InitProducerIdResponse OngoingTxnProducerEpoch: its epoch

	// Brokers and coordinators.
	RoleBrokerID       // a broker (node) ID (entityType brokerId)
	RoleHost           // a host name
	RolePort           // a TCP port
	RoleCoordinatorKey // FindCoordinator Key / CoordinatorKeys: a group or transactional ID
	RoleCoordinatorType

	// Records.
	RoleRecords // a RECORDS field: record batches or a legacy message set

	// Offsets, per partition.
	RoleBaseOffset       // ProduceResponse BaseOffset: the first offset the broker assigned
	RoleFetchOffset      // FetchRequest FetchOffset: where the fetch starts
	RoleHighWatermark    // the partition's high watermark
	RoleLastStableOffset // the last stable offset (KIP-98)
	RoleLogStartOffset   // the log start offset
	RoleCommittedOffset  // an offset a group committed or fetched
	RoleCommittedMeta    // the metadata string committed with it
	RoleListTimestamp    // ListOffsetsRequest Timestamp: the time asked (-1 latest, -2 earliest, ...)
	RoleListedOffset     // ListOffsetsResponse Offset: the offset answered
	RoleEndOffset        // OffsetForLeaderEpochResponse EndOffset: where the epoch asked for ends (KIP-101)
	RoleLowWatermark     // DeleteRecordsResponse LowWatermark: the log start after the deletion (KIP-107)
	RoleDeletionOffset   // DeleteRecordsRequest Offset: the records before it are deleted (-1: the high watermark; KIP-107)
	RoleLeaderEpoch      // a partition leader epoch (KIP-101, KIP-320)
	RoleAbortedTxns      // FetchResponse AbortedTransactions: the aborted transactions in the range
	RoleAbortedFirst     // an aborted transaction's FirstOffset: where its first batch is (KIP-98)

	// Request settings.
	RoleThrottle       // ThrottleTimeMs: how long the broker throttled the client (KIP-219)
	RoleAcks           // ProduceRequest Acks
	RoleRequestTimeout // a request's TimeoutMs (Produce, CreateTopics, ...)
	RoleMaxWait        // FetchRequest MaxWaitMs
	RoleIsolation      // IsolationLevel (Fetch, ListOffsets; KIP-98)
	RoleValidateOnly   // ValidateOnly (CreateTopics, AlterConfigs, CreatePartitions, ...): the broker only checks, changes nothing
	RoleForgotten      // FetchRequest ForgottenTopicsData: partitions an incremental fetch session drops (KIP-227), not fetched

	// Config and ACL resources.
	RoleResourceType    // a config or ACL resource type (or ACL filter)
	RoleResourceName    // its name (a topic name when the type is TOPIC)
	RolePatternType     // an ACL resource pattern type (KIP-290)
	RoleConfigName      // a config name
	RoleConfigValue     // a config value
	RoleConfigSensitive // DescribeConfigs/CreateTopics IsSensitive
	RoleConfigType      // DescribeConfigs ConfigType (KIP-336; 9 is PASSWORD)

	// ApiVersions (KIP-35, KIP-511, KIP-584).
	RoleClusterID             // MetadataResponse, DescribeClusterResponse ClusterId: the cluster the broker belongs to
	RoleClientSoftwareName    // ApiVersionsRequest ClientSoftwareName
	RoleClientSoftwareVersion // ApiVersionsRequest ClientSoftwareVersion
	RoleAPIRanges             // ApiVersionsResponse ApiKeys: the versions the broker supports per key
	RoleAPIKey                // an API key (a request header's, or one in such a range)
	RoleMinVersion            // a range's lowest version (or feature level)
	RoleMaxVersion            // a range's highest version (or feature level)
	RoleSupportedFeatures     // ApiVersionsResponse SupportedFeatures
	RoleFinalizedFeatures     // ApiVersionsResponse FinalizedFeatures
	RoleFeatureName           // a feature's name
	RoleFeaturesEpoch         // FinalizedFeaturesEpoch

	// SASL.
	RoleSASLUser // the user name a SASL token carries (PLAIN, SCRAM; protocol/sasl.go)

	numRoles
)

var roleNames = [numRoles]string{
	RoleNone:                 "",
	RoleTopicName:            "topic-name",
	RoleTopicID:              "topic-id",
	RolePartition:            "partition",
	RoleErrorCode:            "error-code",
	RoleErrorMessage:         "error-message",
	RoleGroupID:              "group-id",
	RoleMemberID:             "member-id",
	RoleGroupInstanceID:      "group-instance-id",
	RoleGenerationID:         "generation-id",
	RoleMemberEpoch:          "member-epoch",
	RoleGenerationOrEpoch:    "generation-or-member-epoch",
	RoleGroupProtocolType:    "protocol-type",
	RoleGroupProtocolName:    "protocol-name",
	RoleGroupLeader:          "group-leader",
	RoleGroupReason:          "reason",
	RoleSessionTimeout:       "session-timeout",
	RoleRebalanceTimeout:     "rebalance-timeout",
	RoleHeartbeatInterval:    "heartbeat-interval",
	RoleSubscription:         "subscription",
	RoleAssignment:           "assignment",
	RoleOwnedPartitions:      "owned-partitions",
	RoleAssignedPartitions:   "assigned-partitions",
	RoleTargetPartitions:     "target-partitions",
	RoleGroupEpoch:           "group-epoch",
	RoleAssignmentEpoch:      "assignment-epoch",
	RoleGroupState:           "group-state",
	RoleMemberClientID:       "member-client-id",
	RoleWorkerURL:            "worker-url",
	RoleConfigOffset:         "config-offset",
	RoleWorkerAllocation:     "worker-allocation",
	RoleConnectError:         "connect-error",
	RoleConnectLeader:        "connect-leader",
	RoleConnectLeaderURL:     "connect-leader-url",
	RoleConnectorsAssigned:   "connectors-assigned",
	RoleConnectorsRevoked:    "connectors-revoked",
	RoleConnectorName:        "connector-name",
	RoleConnectorTasks:       "connector-tasks",
	RoleRebalanceDelay:       "rebalance-delay",
	RoleTransactionalID:      "transactional-id",
	RoleProducerID:           "producer-id",
	RoleProducerEpoch:        "producer-epoch",
	RoleTxnCommitted:         "txn-committed",
	RoleTxnVerifyOnly:        "txn-verify-only",
	RoleActiveProducers:      "active-producers",
	RoleLastSequence:         "last-sequence",
	RoleLastTimestamp:        "last-timestamp",
	RoleCoordinatorEpoch:     "coordinator-epoch",
	RoleTxnStartOffset:       "txn-start-offset",
	RoleTxnEnable2PC:         "txn-enable-2pc",
	RoleTxnKeepPrepared:      "txn-keep-prepared",
	RoleOngoingProducerID:    "ongoing-producer-id",
	RoleOngoingProducerEpoch: "ongoing-producer-epoch",
	RoleBrokerID:             "broker-id",
	RoleHost:                 "host",
	RolePort:                 "port",
	RoleCoordinatorKey:       "coordinator-key",
	RoleCoordinatorType:      "coordinator-type",
	RoleRecords:              "records",
	RoleBaseOffset:           "base-offset",
	RoleFetchOffset:          "fetch-offset",
	RoleHighWatermark:        "high-watermark",
	RoleLastStableOffset:     "last-stable-offset",
	RoleLogStartOffset:       "log-start-offset",
	RoleCommittedOffset:      "committed-offset",
	RoleCommittedMeta:        "committed-metadata",
	RoleListTimestamp:        "list-timestamp",
	RoleListedOffset:         "listed-offset",
	RoleEndOffset:            "end-offset",
	RoleLowWatermark:         "low-watermark",
	RoleDeletionOffset:       "deletion-offset",
	RoleLeaderEpoch:          "leader-epoch",
	RoleAbortedTxns:          "aborted-transactions",
	RoleAbortedFirst:         "aborted-first-offset",
	RoleThrottle:             "throttle",
	RoleAcks:                 "acks",
	RoleRequestTimeout:       "request-timeout",
	RoleMaxWait:              "max-wait",
	RoleIsolation:            "isolation-level",
	RoleValidateOnly:         "validate-only",
	RoleForgotten:            "forgotten-topics",
	RoleResourceType:         "resource-type",
	RoleResourceName:         "resource-name",
	RolePatternType:          "pattern-type",
	RoleConfigName:           "config-name",
	RoleConfigValue:          "config-value",
	RoleConfigSensitive:      "config-sensitive",
	RoleConfigType:           "config-type",

	RoleClusterID:             "cluster-id",
	RoleClientSoftwareName:    "client-software-name",
	RoleClientSoftwareVersion: "client-software-version",
	RoleAPIRanges:             "api-ranges",
	RoleAPIKey:                "api-key",
	RoleMinVersion:            "min-version",
	RoleMaxVersion:            "max-version",
	RoleSupportedFeatures:     "supported-features",
	RoleFinalizedFeatures:     "finalized-features",
	RoleFeatureName:           "feature-name",
	RoleFeaturesEpoch:         "features-epoch",
	RoleSASLUser:              "sasl-user",
}

// String returns the role's name as testdata/roles.txt writes it
// ("topic-name"), "" for RoleNone.
func (r Role) String() string {
	if r < numRoles {
		return roleNames[r]
	}
	return "role(" + itoaSmall(int(r)) + ")"
}

func itoaSmall(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoaSmall(i/10) + string(rune('0'+i%10))
}

// entityRoles maps the JSON's entityType values to roles.
var entityRoles = map[string]Role{
	"topicName":       RoleTopicName,
	"groupId":         RoleGroupID,
	"transactionalId": RoleTransactionalID,
	"producerId":      RoleProducerID,
	"brokerId":        RoleBrokerID,
}

// roleRule assigns role to the fields named name (a trailing "*" matches
// any suffix, a leading "*" any prefix) whose Kafka type kind is kind (or
// any kind when kind is TypeInvalid; for arrays, the element kind, with
// array set). msg, when set, limits the rule to messages of that name;
// path, when set, to that dotted path of field names within the message
// (the field's own name last). The first matching rule wins; an
// entityType wins over every rule but those with overEntity, which name
// a field whose entityType is too broad for its meaning (KIP-939's
// OngoingTxnProducerId is a producer ID, but not the one the response
// gives the producer).
type roleRule struct {
	msg, path, name string
	kind            TypeKind
	array           bool
	role            Role
	overEntity      bool
}

var roleRules = []roleRule{
	// Errors.
	{name: "*ErrorCode", kind: TypeInt16, role: RoleErrorCode},
	{name: "ErrorMessage", kind: TypeString, role: RoleErrorMessage},
	{name: "BatchIndexErrorMessage", kind: TypeString, role: RoleErrorMessage},
	{name: "AcknowledgeErrorMessage", kind: TypeString, role: RoleErrorMessage},

	// Topics. ConsumerProtocolSubscription.Topics is the one list of topic
	// names without an entityType.
	{name: "TopicId", kind: TypeUUID, role: RoleTopicID},
	{msg: "ConsumerProtocolSubscription", path: "Topics", kind: TypeString, array: true, role: RoleTopicName},

	// Groups.
	{name: "MemberId", kind: TypeString, role: RoleMemberID},
	{name: "GroupInstanceId", kind: TypeString, role: RoleGroupInstanceID},
	{msg: "ConsumerGroupHeartbeatRequest", name: "InstanceId", kind: TypeString, role: RoleGroupInstanceID},
	{msg: "StreamsGroupHeartbeatRequest", name: "InstanceId", kind: TypeString, role: RoleGroupInstanceID},
	{msg: "ConsumerGroupDescribeResponse", path: "Groups.Members.InstanceId", kind: TypeString, role: RoleGroupInstanceID},
	{msg: "StreamsGroupDescribeResponse", path: "Groups.Members.InstanceId", kind: TypeString, role: RoleGroupInstanceID},
	{path: "Groups.GroupEpoch", kind: TypeInt32, role: RoleGroupEpoch},
	{path: "Groups.AssignmentEpoch", kind: TypeInt32, role: RoleAssignmentEpoch},
	{path: "Groups.GroupState", kind: TypeString, role: RoleGroupState},
	{path: "Groups.Members.ClientId", kind: TypeString, role: RoleMemberClientID},
	// A classic group described (DescribeGroups): the assignor chosen is
	// its ProtocolData; each member's metadata and assignment are its
	// consumer-protocol subscription and assignment (for ProtocolType
	// "consumer", protocol/embedded.go).
	{msg: "DescribeGroupsResponse", path: "Groups.ProtocolData", kind: TypeString, role: RoleGroupProtocolName},
	{msg: "DescribeGroupsResponse", path: "Groups.Members.MemberMetadata", kind: TypeBytes, role: RoleSubscription},
	{msg: "DescribeGroupsResponse", path: "Groups.Members.MemberAssignment", kind: TypeBytes, role: RoleAssignment},
	{name: "GenerationId", kind: TypeInt32, role: RoleGenerationID},
	{name: "MemberEpoch", kind: TypeInt32, role: RoleMemberEpoch},
	{name: "GenerationIdOrMemberEpoch", kind: TypeInt32, role: RoleGenerationOrEpoch},
	{name: "ProtocolType", kind: TypeString, role: RoleGroupProtocolType},
	{name: "ProtocolName", kind: TypeString, role: RoleGroupProtocolName},
	{msg: "JoinGroupRequest", path: "Protocols.Name", kind: TypeString, role: RoleGroupProtocolName},
	{msg: "JoinGroupResponse", path: "Leader", kind: TypeString, role: RoleGroupLeader},
	{msg: "JoinGroupRequest", path: "Reason", kind: TypeString, role: RoleGroupReason},
	{msg: "LeaveGroupRequest", path: "Members.Reason", kind: TypeString, role: RoleGroupReason},
	{name: "SessionTimeoutMs", kind: TypeInt32, role: RoleSessionTimeout},
	{name: "RebalanceTimeoutMs", kind: TypeInt32, role: RoleRebalanceTimeout},
	{name: "HeartbeatIntervalMs", kind: TypeInt32, role: RoleHeartbeatInterval},
	{msg: "JoinGroupRequest", path: "Protocols.Metadata", kind: TypeBytes, role: RoleSubscription},
	{msg: "JoinGroupResponse", path: "Members.Metadata", kind: TypeBytes, role: RoleSubscription},
	{msg: "SyncGroupRequest", path: "Assignments.Assignment", kind: TypeBytes, role: RoleAssignment},
	{msg: "SyncGroupResponse", path: "Assignment", kind: TypeBytes, role: RoleAssignment},
	{msg: "ConsumerProtocolSubscription", path: "OwnedPartitions", kind: TypeStruct, array: true, role: RoleOwnedPartitions},
	{msg: "ConsumerProtocolAssignment", path: "AssignedPartitions", kind: TypeStruct, array: true, role: RoleAssignedPartitions},
	// Kafka Connect (protocol/schemas): a worker's metadata and its
	// assignment, which a v1+ metadata's Allocation holds too.
	{msg: "ConnectProtocolMetadata", path: "Url", kind: TypeString, role: RoleWorkerURL},
	{msg: "ConnectProtocolMetadata", path: "ConfigOffset", kind: TypeInt64, role: RoleConfigOffset},
	{msg: "ConnectProtocolMetadata", path: "Allocation", kind: TypeBytes, role: RoleWorkerAllocation},
	{msg: "ConnectProtocolAssignment", path: "Error", kind: TypeInt16, role: RoleConnectError},
	{msg: "ConnectProtocolAssignment", path: "Leader", kind: TypeString, role: RoleConnectLeader},
	{msg: "ConnectProtocolAssignment", path: "LeaderUrl", kind: TypeString, role: RoleConnectLeaderURL},
	{msg: "ConnectProtocolAssignment", path: "ConfigOffset", kind: TypeInt64, role: RoleConfigOffset},
	{msg: "ConnectProtocolAssignment", path: "Assignment", kind: TypeStruct, array: true, role: RoleConnectorsAssigned},
	{msg: "ConnectProtocolAssignment", path: "Revoked", kind: TypeStruct, array: true, role: RoleConnectorsRevoked},
	{msg: "ConnectProtocolAssignment", path: "*.Connector", kind: TypeString, role: RoleConnectorName},
	{msg: "ConnectProtocolAssignment", path: "*.Tasks", kind: TypeInt32, array: true, role: RoleConnectorTasks},
	{msg: "ConnectProtocolAssignment", path: "Delay", kind: TypeInt32, role: RoleRebalanceDelay},
	// KIP-848: the request's TopicPartitions are what the member owns, the
	// response's Assignment.TopicPartitions what it is given.
	{msg: "ConsumerGroupHeartbeatRequest", path: "TopicPartitions", kind: TypeStruct, array: true, role: RoleOwnedPartitions},
	{msg: "ConsumerGroupHeartbeatResponse", path: "Assignment.TopicPartitions", kind: TypeStruct, array: true, role: RoleAssignedPartitions},
	{msg: "ShareGroupHeartbeatResponse", path: "Assignment.TopicPartitions", kind: TypeStruct, array: true, role: RoleAssignedPartitions},
	// A describe response's members: what each has, and (KIP-848) what
	// it is to have.
	{msg: "ConsumerGroupDescribeResponse", path: "Groups.Members.Assignment.TopicPartitions", kind: TypeStruct, array: true, role: RoleAssignedPartitions},
	{msg: "ConsumerGroupDescribeResponse", path: "Groups.Members.TargetAssignment.TopicPartitions", kind: TypeStruct, array: true, role: RoleTargetPartitions},
	{msg: "ShareGroupDescribeResponse", path: "Groups.Members.Assignment.TopicPartitions", kind: TypeStruct, array: true, role: RoleAssignedPartitions},

	// Transactions and producers.
	{name: "ProducerEpoch", kind: TypeInt16, role: RoleProducerEpoch},
	{name: "V3AndBelowProducerEpoch", kind: TypeInt16, role: RoleProducerEpoch},
	{msg: "InitProducerIdResponse", path: "OngoingTxnProducerId", kind: TypeInt64, role: RoleOngoingProducerID, overEntity: true},
	{msg: "InitProducerIdResponse", path: "OngoingTxnProducerEpoch", kind: TypeInt16, role: RoleOngoingProducerEpoch},
	{msg: "InitProducerIdRequest", path: "Enable2Pc", kind: TypeBool, role: RoleTxnEnable2PC},
	{msg: "InitProducerIdRequest", path: "KeepPreparedTxn", kind: TypeBool, role: RoleTxnKeepPrepared},
	{msg: "EndTxnRequest", path: "Committed", kind: TypeBool, role: RoleTxnCommitted},
	{msg: "AddPartitionsToTxnRequest", path: "Transactions.VerifyOnly", kind: TypeBool, role: RoleTxnVerifyOnly},
	{msg: "DescribeProducersResponse", path: "Topics.Partitions.ActiveProducers", kind: TypeStruct, array: true, role: RoleActiveProducers},
	{msg: "DescribeProducersResponse", path: "Topics.Partitions.ActiveProducers.ProducerEpoch", kind: TypeInt32, role: RoleProducerEpoch},
	{msg: "DescribeProducersResponse", path: "Topics.Partitions.ActiveProducers.LastSequence", kind: TypeInt32, role: RoleLastSequence},
	{msg: "DescribeProducersResponse", path: "Topics.Partitions.ActiveProducers.LastTimestamp", kind: TypeInt64, role: RoleLastTimestamp},
	{msg: "DescribeProducersResponse", path: "Topics.Partitions.ActiveProducers.CoordinatorEpoch", kind: TypeInt32, role: RoleCoordinatorEpoch},
	{msg: "DescribeProducersResponse", path: "Topics.Partitions.ActiveProducers.CurrentTxnStartOffset", kind: TypeInt64, role: RoleTxnStartOffset},

	// Brokers and coordinators.
	{name: "Host", kind: TypeString, role: RoleHost},
	{name: "Port", kind: TypeInt32, role: RolePort},
	{msg: "FindCoordinatorRequest", path: "Key", kind: TypeString, role: RoleCoordinatorKey},
	{msg: "FindCoordinatorRequest", path: "CoordinatorKeys", kind: TypeString, array: true, role: RoleCoordinatorKey},
	{msg: "FindCoordinatorResponse", path: "Coordinators.Key", kind: TypeString, role: RoleCoordinatorKey},
	{msg: "FindCoordinatorRequest", path: "KeyType", kind: TypeInt8, role: RoleCoordinatorType},

	// Offsets.
	{msg: "ProduceResponse", name: "BaseOffset", kind: TypeInt64, role: RoleBaseOffset},
	{name: "FetchOffset", kind: TypeInt64, role: RoleFetchOffset},
	{name: "HighWatermark", kind: TypeInt64, role: RoleHighWatermark},
	{name: "LastStableOffset", kind: TypeInt64, role: RoleLastStableOffset},
	{name: "LogStartOffset", kind: TypeInt64, role: RoleLogStartOffset},
	{name: "CommittedOffset", kind: TypeInt64, role: RoleCommittedOffset},
	{name: "CommittedMetadata", kind: TypeString, role: RoleCommittedMeta},
	{msg: "OffsetFetchResponse", name: "Metadata", kind: TypeString, role: RoleCommittedMeta},
	{msg: "ListOffsetsRequest", path: "Topics.Partitions.Timestamp", kind: TypeInt64, role: RoleListTimestamp},
	{msg: "ListOffsetsResponse", path: "Topics.Partitions.Offset", kind: TypeInt64, role: RoleListedOffset},
	{msg: "ListOffsetsResponse", path: "Topics.Partitions.OldStyleOffsets", kind: TypeInt64, array: true, role: RoleListedOffset},
	{msg: "MetadataResponse", path: "ClusterId", kind: TypeString, role: RoleClusterID},
	{msg: "DescribeClusterResponse", path: "ClusterId", kind: TypeString, role: RoleClusterID},
	{msg: "OffsetForLeaderEpochResponse", path: "Topics.Partitions.EndOffset", kind: TypeInt64, role: RoleEndOffset},
	{msg: "DeleteRecordsResponse", path: "Topics.Partitions.LowWatermark", kind: TypeInt64, role: RoleLowWatermark},
	{msg: "DeleteRecordsRequest", path: "Topics.Partitions.Offset", kind: TypeInt64, role: RoleDeletionOffset},
	{name: "LeaderEpoch", kind: TypeInt32, role: RoleLeaderEpoch},
	{name: "CurrentLeaderEpoch", kind: TypeInt32, role: RoleLeaderEpoch},
	{name: "CommittedLeaderEpoch", kind: TypeInt32, role: RoleLeaderEpoch},
	{msg: "FetchResponse", path: "Responses.Partitions.AbortedTransactions", kind: TypeStruct, array: true, role: RoleAbortedTxns},
	{msg: "FetchResponse", path: "Responses.Partitions.AbortedTransactions.FirstOffset", kind: TypeInt64, role: RoleAbortedFirst},

	// Records.
	{kind: TypeRecords, role: RoleRecords},

	// Request settings.
	{name: "ThrottleTimeMs", kind: TypeInt32, role: RoleThrottle},
	{msg: "ProduceRequest", path: "Acks", kind: TypeInt16, role: RoleAcks},
	{name: "TimeoutMs", kind: TypeInt32, role: RoleRequestTimeout},
	{name: "timeoutMs", kind: TypeInt32, role: RoleRequestTimeout},
	{msg: "FetchRequest", path: "MaxWaitMs", kind: TypeInt32, role: RoleMaxWait},
	{name: "IsolationLevel", kind: TypeInt8, role: RoleIsolation},
	{name: "ValidateOnly", kind: TypeBool, role: RoleValidateOnly},
	{name: "validateOnly", kind: TypeBool, role: RoleValidateOnly}, // CreateTopicsRequest
	{msg: "FetchRequest", path: "ForgottenTopicsData", kind: TypeStruct, array: true, role: RoleForgotten},

	// Config and ACL resources.
	{name: "ResourceType", kind: TypeInt8, role: RoleResourceType},
	{name: "ResourceTypeFilter", kind: TypeInt8, role: RoleResourceType},
	{name: "ResourceName", kind: TypeString, role: RoleResourceName},
	{name: "ResourceNameFilter", kind: TypeString, role: RoleResourceName},
	{name: "PatternType", kind: TypeInt8, role: RolePatternType},
	{name: "ResourcePatternType", kind: TypeInt8, role: RolePatternType},
	{name: "PatternTypeFilter", kind: TypeInt8, role: RolePatternType},
	{path: "*Configs.Name", kind: TypeString, role: RoleConfigName},
	{path: "*Configs.Value", kind: TypeString, role: RoleConfigValue},
	{path: "*Configs.IsSensitive", kind: TypeBool, role: RoleConfigSensitive},
	{path: "*Configs.ConfigType", kind: TypeInt8, role: RoleConfigType},
	{path: "*Configs.Synonyms.Name", kind: TypeString, role: RoleConfigName},
	{path: "*Configs.Synonyms.Value", kind: TypeString, role: RoleConfigValue},
	{path: "*TopicConfigs.Key", kind: TypeString, role: RoleConfigName}, // KIP-1071 streams groups' KeyValue

	// ApiVersions.
	{msg: "ApiVersionsRequest", path: "ClientSoftwareName", kind: TypeString, role: RoleClientSoftwareName},
	{msg: "ApiVersionsRequest", path: "ClientSoftwareVersion", kind: TypeString, role: RoleClientSoftwareVersion},
	{msg: "ApiVersionsResponse", path: "ApiKeys", kind: TypeStruct, array: true, role: RoleAPIRanges},
	{msg: "ApiVersionsResponse", path: "ApiKeys.ApiKey", kind: TypeInt16, role: RoleAPIKey},
	{msg: "RequestHeader", path: "RequestApiKey", kind: TypeInt16, role: RoleAPIKey},
	{msg: "ApiVersionsResponse", path: "*.MinVersion", kind: TypeInt16, role: RoleMinVersion},
	{msg: "ApiVersionsResponse", path: "*.MaxVersion", kind: TypeInt16, role: RoleMaxVersion},
	{msg: "ApiVersionsResponse", path: "*.MinVersionLevel", kind: TypeInt16, role: RoleMinVersion},
	{msg: "ApiVersionsResponse", path: "*.MaxVersionLevel", kind: TypeInt16, role: RoleMaxVersion},
	{msg: "ApiVersionsResponse", path: "SupportedFeatures", kind: TypeStruct, array: true, role: RoleSupportedFeatures},
	{msg: "ApiVersionsResponse", path: "FinalizedFeatures", kind: TypeStruct, array: true, role: RoleFinalizedFeatures},
	{msg: "ApiVersionsResponse", path: "*Features.Name", kind: TypeString, role: RoleFeatureName},
	{msg: "ApiVersionsResponse", path: "FinalizedFeaturesEpoch", kind: TypeInt64, role: RoleFeaturesEpoch},
}

// partitionNames are the names an int32 partition index has; listNames
// those of an []int32 list of them.
var (
	partitionNames = []string{"PartitionIndex", "Partition", "PartitionId", "Index"}
	partitionLists = []string{"Partitions", "PartitionIndexes"}
)

// matchName reports whether name matches pattern p: exact, or with a
// leading or trailing "*" standing for any prefix or suffix.
func matchName(p, name string) bool {
	switch {
	case p == "":
		return true
	case strings.HasPrefix(p, "*"):
		return strings.HasSuffix(name, p[1:])
	case strings.HasSuffix(p, "*"):
		return strings.HasPrefix(name, p[:len(p)-1])
	}
	return p == name
}

func (r *roleRule) match(msg, path string, f *Field) bool {
	if r.msg != "" && r.msg != msg {
		return false
	}
	if r.path != "" && !matchName(r.path, path) {
		return false
	}
	if r.name != "" && !matchName(r.name, f.Name) {
		return false
	}
	kind := f.Kind
	if f.Kind == TypeArray {
		if !r.array {
			return false
		}
		kind = f.Elem
	} else if r.array {
		return false
	}
	return r.kind == TypeInvalid || r.kind == kind
}

// ruleRole returns the role the schema and roleRules give field f at path
// in message msg.
func ruleRole(msg, path string, f *Field) Role {
	if r, ok := entityRoles[f.EntityType]; ok {
		for i := range roleRules {
			if roleRules[i].overEntity && roleRules[i].match(msg, path, f) {
				return roleRules[i].role
			}
		}
		return r
	}
	for i := range roleRules {
		if roleRules[i].match(msg, path, f) {
			return roleRules[i].role
		}
	}
	return RoleNone
}

// namesTopic reports whether fields, the fields of one struct, name a topic
// (a field with RoleTopicName or RoleTopicID).
func namesTopic(fields []Field) bool {
	for i := range fields {
		f := &fields[i]
		if f.Kind != TypeArray && (f.Role == RoleTopicName || f.Role == RoleTopicID) {
			return true
		}
	}
	return false
}

// assignRoles sets Role on fields (the fields of one struct of message msg
// at path prefix) and on everything below them. topicAbove says the
// struct is an element of an array held by a struct that names a topic.
func assignRoles(msg, prefix string, fields []Field, topicAbove bool, depth int) {
	if depth > maxDepth {
		return
	}
	for i := range fields {
		f := &fields[i]
		f.Role = ruleRole(msg, prefix+f.Name, f)
	}

	topicHere := namesTopic(fields)
	for i := range fields {
		f := &fields[i]
		if f.Role != RoleNone {
			continue
		}
		switch {
		case f.Kind == TypeInt32 && (topicHere || topicAbove) && oneOf(f.Name, partitionNames):
			f.Role = RolePartition
		case f.Kind == TypeArray && f.Elem == TypeInt32 && topicHere && oneOf(f.Name, partitionLists):
			f.Role = RolePartition
		}
	}
	for i := range fields {
		fields[i].values = valueNamerFor(msg, &fields[i])
	}
	for i := range fields {
		f := &fields[i]
		if len(f.Fields) > 0 {
			assignRoles(msg, prefix+f.Name+".", f.Fields, topicHere && f.Kind == TypeArray, depth+1)
		}
		if f.Kind == TypeArray {
			f.elem = elemFieldOf(f)
		}
	}
}

// elemFieldOf builds the element field of array field f.
func elemFieldOf(f *Field) *Field {
	return &Field{
		Name:             f.Name,
		Type:             strings.TrimPrefix(f.Type, "[]"),
		Kind:             f.Elem,
		Versions:         f.Versions,
		NullableVersions: NoVersions,
		TaggedVersions:   NoVersions,
		Tag:              -1,
		FlexibleVersions: f.FlexibleVersions, HasFlexibleVersions: f.HasFlexibleVersions,
		EntityType: f.EntityType,
		StructName: f.StructName,
		Fields:     f.Fields,
		Role:       f.Role,
		ElemOf:     f,
		values:     f.values,
	}
}

func oneOf(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var rolesOnce sync.Once

// initRoles assigns the roles of every schema field once.
func initRoles() {
	rolesOnce.Do(func() {
		for _, m := range Schemas {
			assignRoles(m.Name, "", m.Fields, false, 0)
			setJSONNames(m.Fields, 0)
		}
	})
}

func init() { initRoles() }

// Role returns the role of the schema field n was decoded from, RoleNone
// for nodes that no field describes (frames, messages, undecoded spans)
// or whose field has no role. It is nil-safe.
func (n *Node) Role() Role {
	if n == nil || n.Field == nil {
		return RoleNone
	}
	return n.Field.Role
}
