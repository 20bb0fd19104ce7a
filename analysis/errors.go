package analysis

import "github.com/kwire/kwire/protocol"

// What Kafka's errors mean to the groups, producers and clients these
// reports follow, by error code (Errors.java and the KIPs named). Codes
// not listed are given by name only.
var meanings = map[int16]string{
	5:   "the partition has no leader right now (election in progress): the client refreshes metadata and retries",
	6:   "the broker is not the partition's leader (any more): the client refreshes metadata and retries on the new leader",
	7:   "the broker did not finish the request within its timeout (acks=all: the replicas did not confirm in time)",
	10:  "a record batch is larger than the topic's max.message.bytes",
	12:  "the committed metadata string is longer than offset.metadata.max.bytes",
	14:  "the coordinator is still loading the group's or transaction's state: retry",
	15:  "no coordinator is available for the group or transaction right now: retry",
	16:  "the broker is not the coordinator of this group or transaction (it moved): the client looks it up again",
	18:  "the request's record batches exceed the broker's limits",
	22:  "the member's generation is stale: the group moved on to a new generation without it, and it must rejoin",
	23:  "the member's protocols have none in common with the group's",
	25:  "the coordinator does not know the member ID (it expired or was removed): the member must rejoin with an empty member ID",
	26:  "the session timeout is outside the broker's group.min/max.session.timeout.ms",
	27:  "the group is rebalancing: the member must send JoinGroup to take part",
	28:  "the committed offset is too large",
	30:  "the client may not use this group (ACL)",
	35:  "the broker does not support this request version (KIP-511: ApiVersions answers with the versions it does)",
	45:  "the batch's sequence number is not the next one the broker expects from this producer: records were lost or reordered (KIP-98)",
	46:  "the batch's sequence number was already written: a retry of a batch the broker has (KIP-98)",
	47:  "the producer's epoch is older than the broker's: another instance with the same transactional ID took over, or the producer was reset",
	48:  "the request does not fit the transaction's state (e.g. a produce or EndTxn after the transaction was aborted or fenced)",
	49:  "the producer ID does not belong to this transactional ID",
	51:  "the previous transaction of this producer is still completing: retry",
	53:  "the client may not use this transactional ID (ACL)",
	58:  "SASL authentication failed: wrong credentials, unknown user or mechanism",
	59:  "the broker no longer knows the producer ID (its state expired)",
	69:  "the group does not exist",
	74:  "the client's leader epoch is older than the broker's: leadership moved, the client refreshes metadata (KIP-320)",
	75:  "the client's leader epoch is newer than the broker's: the broker lags behind (KIP-320)",
	79:  "a new member's first JoinGroup: the coordinator assigns a member ID and the member joins again with it (KIP-394)",
	81:  "the group has group.max.size members already",
	82:  "another member with the same group.instance.id took over: this one is fenced (static membership, KIP-345)",
	89:  "the request exceeds the client's quota for topic mutations: it is throttled (KIP-599)",
	90:  "another producer with the same transactional ID initialized a newer epoch: this one is fenced (KIP-588)",
	110: "the member's epoch is stale (KIP-848): it must rejoin with member epoch 0",
	111: "the static member's group.instance.id is still held by a member that has not left (KIP-848)",
	112: "the group's server-side assignor is not supported (KIP-848)",
	113: "the member epoch of the commit is older than the member's (KIP-848)",
	120: "the transaction must be aborted (KIP-890)",
}

// errorMeaning returns "NAME: what it means" for code, or the name alone.
func errorMeaning(code int16) string {
	name := protocol.KafkaErrorName(code)
	if m, ok := meanings[code]; ok {
		return name + ": " + m
	}
	return name
}
