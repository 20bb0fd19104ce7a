package protocol

import "strings"

// Named values of integer fields that Kafka's message JSON declares as
// plain int8/int16/int32/int64 but whose values have fixed meanings,
// from Kafka's protocol guide and the Java enums they mirror
// (IsolationLevel, AclOperation, AclPermissionType, PatternType,
// ResourceType, ConfigResource.Type, ConfigSource, ConfigType,
// AlterConfigOp.OpType, FindCoordinatorRequest.CoordinatorType).

// enumTable maps a value to its name.
type enumTable map[int64]string

var (
	enumIsolation = enumTable{0: "read_uncommitted", 1: "read_committed"} // KIP-98
	enumAcks      = enumTable{-1: "all", 0: "none", 1: "leader"}
	// ListOffsets special timestamps: KIP-79 (-1, -2), KIP-734 (-3),
	// KIP-1005 (-4, -5).
	enumListOffsetsTS = enumTable{-1: "latest", -2: "earliest", -3: "max_timestamp", -4: "earliest_local",
		-5: "latest_tiered"}
	enumCoordinator = enumTable{0: "group", 1: "transaction", 2: "share"} // KIP-932 for share
	// ACL resource types (CreateAcls, DescribeAcls, DeleteAcls; KIP-140).
	enumACLResource = enumTable{0: "unknown", 1: "any", 2: "topic", 3: "group", 4: "cluster", 5: "transactional_id",
		6: "delegation_token", 7: "user"}
	// Config resource types (DescribeConfigs, AlterConfigs,
	// IncrementalAlterConfigs; KIP-714 client metrics, KIP-848 group).
	enumConfigResource = enumTable{0: "unknown", 2: "topic", 4: "broker", 8: "broker_logger", 16: "client_metrics",
		32: "group"}
	enumPattern    = enumTable{0: "unknown", 1: "any", 2: "match", 3: "literal", 4: "prefixed"} // KIP-290
	enumOperation  = enumTable{0: "unknown", 1: "any", 2: "all", 3: "read", 4: "write", 5: "create", 6: "delete", 7: "alter", 8: "describe", 9: "cluster_action", 10: "describe_configs", 11: "alter_configs", 12: "idempotent_write", 13: "create_tokens", 14: "describe_tokens"}
	enumPermission = enumTable{0: "unknown", 1: "any", 2: "deny", 3: "allow"}
	// DescribeConfigs ConfigSource and synonyms' Source (KIP-226).
	enumConfigSource = enumTable{0: "unknown", 1: "dynamic_topic_config", 2: "dynamic_broker_config",
		3: "dynamic_default_broker_config", 4: "static_broker_config", 5: "default_config",
		6: "dynamic_broker_logger_config", 7: "client_metrics_config", 8: "group_config"}
	enumConfigType = enumTable{0: "unknown", 1: "boolean", 2: "string", 3: "int", 4: "short", 5: "long", 6: "double",
		7: "list", 8: "class", 9: "password"} // KIP-336
	enumConfigOp = enumTable{0: "set", 1: "delete", 2: "append", 3: "subtract"} // KIP-339
	// KIP-848 (and KIP-932, KIP-1071) heartbeat request member epochs: 0
	// joins, -1 leaves, -2 a static member leaves (its instance ID is
	// kept). Other values are the epoch the member is at.
	enumHeartbeatEpoch = enumTable{0: "join", -1: "leave", -2: "static leave"}
	// A Kafka Connect assignment's Error (ConnectProtocol.Assignment's
	// NO_ERROR and CONFIG_MISMATCH: the worker's config offset is not the
	// leader's). Connect's own codes, not Kafka error codes.
	enumConnectError = enumTable{0: "NONE", 1: "CONFIG_MISMATCH"}
)

// authorizedOperationsOmitted is the AuthorizedOperations of a response to
// a request that did not ask for them (Integer.MIN_VALUE in Kafka's
// clients: MetadataResponse, DescribeGroups, ... KIP-430).
const authorizedOperationsOmitted = -2147483648

// valueNamer names the values of one field.
type valueNamer interface {
	name(v int64) string
}

func (t enumTable) name(v int64) string { return t[v] }

// authorizedOps names an AuthorizedOperations bit field (KIP-430): the
// operations whose bit (1 << AclOperation code) is set, comma-separated,
// or "not requested" for Integer.MIN_VALUE.
type authorizedOps struct{}

func (authorizedOps) name(v int64) string {
	if v == authorizedOperationsOmitted {
		return "not requested"
	}
	if v < 0 {
		return ""
	}
	var b strings.Builder
	for bit := int64(0); bit < 32; bit++ {
		if v&(1<<bit) == 0 {
			continue
		}
		n := enumOperation[bit]
		if n == "" {
			n = "bit" + itoaSmall(int(bit))
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
	}
	return b.String()
}

// ValueName returns the name Kafka gives value v of schema field f (an
// IsolationLevel 1 is "read_committed", a heartbeat's MemberEpoch -1
// "leave", an AuthorizedOperations of -2147483648 "not requested"), or ""
// when the field's values have no names or v is not one of them. The
// names are attached to the fields once, when the package initialises,
// by the rules of enumFor and of valueNamerFor.
func ValueName(f *Field, v int64) string {
	if f == nil || f.values == nil {
		return ""
	}
	return f.values.name(v)
}

// valueNamerFor returns the namer of field f of message msg, or nil.
func valueNamerFor(msg string, f *Field) valueNamer {
	switch {
	case f.Kind == TypeInt32 && strings.HasSuffix(f.Name, "AuthorizedOperations"):
		return authorizedOps{}
	case f.Role == RoleMemberEpoch && (msg == "ConsumerGroupHeartbeatRequest" || msg == "ShareGroupHeartbeatRequest" ||
		msg == "StreamsGroupHeartbeatRequest"):
		return enumHeartbeatEpoch
	}
	if t := enumFor(msg, f.Name); t != nil {
		return t
	}
	return nil
}

// EnumName returns the name Kafka gives value v of field fieldName in
// message messageName ("FetchRequest", "IsolationLevel", 1 →
// "read_committed"), or "" when the field has no named values or v is not
// one of them. messageName is the message's JSON name with its Request or
// Response suffix; fieldName is the field's name in any struct of it.
//
// Covered: IsolationLevel (Fetch, ListOffsets); Acks (Produce);
// Timestamp in ListOffsets requests (-1 latest, -2 earliest, -3
// max_timestamp, -4 earliest_local, -5 latest_tiered); KeyType
// (FindCoordinator); ResourceType, ResourceTypeFilter, PatternType,
// ResourcePatternType, PatternTypeFilter, Operation, PermissionType (the
// ACL APIs); ResourceType, ConfigSource, Source, ConfigType,
// ConfigOperation (the config APIs); Error in kwire's
// ConnectProtocolAssignment (0 NONE, 1 CONFIG_MISMATCH).
func EnumName(messageName, fieldName string, v int64) string {
	if t := enumFor(messageName, fieldName); t != nil {
		return t[v]
	}
	return ""
}

func enumFor(msg, field string) enumTable {
	api := strings.TrimSuffix(strings.TrimSuffix(msg, "Request"), "Response")
	request := strings.HasSuffix(msg, "Request")
	acl := strings.HasSuffix(api, "Acls")
	config := strings.HasSuffix(api, "Configs") || api == "ListConfigResources"
	switch field {
	case "Error":
		if msg == "ConnectProtocolAssignment" {
			return enumConnectError
		}
	case "IsolationLevel":
		if api == "Fetch" || api == "ListOffsets" || api == "ShareFetch" {
			return enumIsolation
		}
	case "Acks":
		if api == "Produce" {
			return enumAcks
		}
	case "Timestamp":
		if api == "ListOffsets" && request {
			return enumListOffsetsTS
		}
	case "KeyType":
		if api == "FindCoordinator" {
			return enumCoordinator
		}
	case "ResourceType", "ResourceTypeFilter", "ResourceTypes":
		switch {
		case acl:
			return enumACLResource
		case config:
			return enumConfigResource
		}
	case "PatternType", "ResourcePatternType", "PatternTypeFilter":
		if acl {
			return enumPattern
		}
	case "Operation":
		if acl {
			return enumOperation
		}
	case "PermissionType":
		if acl {
			return enumPermission
		}
	case "ConfigSource", "Source":
		if config {
			return enumConfigSource
		}
	case "ConfigType":
		if config {
			return enumConfigType
		}
	case "ConfigOperation":
		if api == "IncrementalAlterConfigs" {
			return enumConfigOp
		}
	}
	return nil
}
