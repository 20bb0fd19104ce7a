package protocol

import (
	"bytes"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateRoles = flag.Bool("update-roles", false, "rewrite testdata/roles.txt")

// rolesListing writes one line per schema field that has a role:
// "Message@generation Path.To.Field type role".
func rolesListing() []byte {
	var b bytes.Buffer
	var walk func(msg, prefix string, fs []Field)
	walk = func(msg, prefix string, fs []Field) {
		for i := range fs {
			f := &fs[i]
			if f.Role != RoleNone {
				fmt.Fprintf(&b, "%s %s%s %s %s\n", msg, prefix, f.Name, f.Type, f.Role)
			}
			walk(msg, prefix+f.Name+".", f.Fields)
		}
	}
	for _, m := range Schemas {
		walk(m.Name+"@"+m.Generation, "", m.Fields)
	}
	return b.Bytes()
}

// TestRoles pins every field's role: a change of the rules or of the
// schemas shows in testdata/roles.txt (-update-roles rewrites it).
func TestRoles(t *testing.T) {
	got := rolesListing()
	const file = "testdata/roles.txt"
	if *updateRoles {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./protocol -run TestRoles -update-roles to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		gs := map[string]bool{}
		for _, l := range gl {
			gs[l] = true
		}
		ws := map[string]bool{}
		for _, l := range wl {
			ws[l] = true
		}
		for _, l := range wl {
			if !gs[l] {
				t.Errorf("lost: %s", l)
			}
		}
		for _, l := range gl {
			if !ws[l] {
				t.Errorf("new:  %s", l)
			}
		}
		t.Errorf("roles differ from %s (rerun with -update-roles if the change is meant)", file)
	}
}

// TestRoleRules checks the rules that need structure and the names that
// must never be mistaken, in the current generation.
func TestRoleRules(t *testing.T) {
	cases := []struct {
		msg  string
		ver  int16
		path string
		want Role
	}{
		{"ProduceRequest", 9, "TopicData.Name", RoleTopicName},
		{"ProduceRequest", 13, "TopicData.TopicId", RoleTopicID},
		{"ProduceRequest", 9, "TopicData.PartitionData.Index", RolePartition},
		{"ProduceRequest", 9, "TransactionalId", RoleTransactionalID},
		{"ProduceResponse", 9, "Responses.PartitionResponses.BaseOffset", RoleBaseOffset},
		{"ProduceResponse", 9, "Responses.PartitionResponses.ErrorCode", RoleErrorCode},
		{"FetchRequest", 12, "Topics.Partitions.Partition", RolePartition},
		{"FetchRequest", 12, "ForgottenTopicsData.Partitions", RolePartition},
		{"FetchResponse", 12, "Responses.Partitions.HighWatermark", RoleHighWatermark},
		{"FetchResponse", 12, "Responses.Partitions.AbortedTransactions", RoleAbortedTxns},
		{"FetchResponse", 12, "Responses.Partitions.AbortedTransactions.ProducerId", RoleProducerID},
		{"OffsetFetchResponse", 8, "Groups.Topics.Partitions.PartitionIndex", RolePartition},
		{"OffsetFetchRequest", 8, "Groups.Topics.PartitionIndexes", RolePartition},
		{"AddPartitionsToTxnRequest", 4, "Transactions.Topics.Partitions", RolePartition},
		{"AddPartitionsToTxnResponse", 4, "ResultsByTransaction.TopicResults.ResultsByPartition.PartitionErrorCode", RoleErrorCode},
		{"DescribeTopicPartitionsRequest", 0, "Cursor.PartitionIndex", RolePartition},
		{"ConsumerProtocolSubscription", 3, "Topics", RoleTopicName},
		{"ConsumerProtocolSubscription", 3, "OwnedPartitions", RoleOwnedPartitions},
		{"ConsumerProtocolSubscription", 3, "OwnedPartitions.Partitions", RolePartition},
		{"ConsumerProtocolAssignment", 3, "AssignedPartitions.Topic", RoleTopicName},
		{"JoinGroupRequest", 9, "Protocols.Metadata", RoleSubscription},
		{"SyncGroupRequest", 5, "Assignments.Assignment", RoleAssignment},
		{"ConsumerGroupHeartbeatResponse", 0, "Assignment.TopicPartitions", RoleAssignedPartitions},
		{"ConsumerGroupHeartbeatResponse", 0, "Assignment.TopicPartitions.Partitions", RolePartition},
		{"InitProducerIdResponse", 5, "ProducerEpoch", RoleProducerEpoch},
		{"EndTxnRequest", 4, "Committed", RoleTxnCommitted},
		{"DescribeConfigsResponse", 4, "Results.Configs.IsSensitive", RoleConfigSensitive},
		{"DescribeAclsRequest", 3, "ResourceNameFilter", RoleResourceName},
		// Not partition indexes: a partition count, and a subtopology's tasks.
		{"StreamsGroupHeartbeatRequest", 0, "Topology.Subtopologies.StateChangelogTopics.Partitions", RoleNone},
		{"StreamsGroupHeartbeatRequest", 0, "ActiveTasks.Partitions", RoleNone},
		{"CreateTopicsRequest", 7, "Topics.NumPartitions", RoleNone},
		// Replica lists name brokers, not partitions.
		{"MetadataResponse", 12, "Topics.Partitions.ReplicaNodes", RoleBrokerID},
	}
	for _, c := range cases {
		m := LookupName(c.msg, c.ver)
		if m == nil {
			t.Errorf("%s v%d: not in the table", c.msg, c.ver)
			continue
		}
		f := fieldAt(m.Fields, strings.Split(c.path, "."))
		if f == nil {
			t.Errorf("%s v%d: no field %s", c.msg, c.ver, c.path)
			continue
		}
		if f.Role != c.want {
			t.Errorf("%s v%d %s: role %q, want %q", c.msg, c.ver, c.path, f.Role, c.want)
		}
	}
}

func fieldAt(fs []Field, path []string) *Field {
	for i := range fs {
		if fs[i].Name == path[0] {
			if len(path) == 1 {
				return &fs[i]
			}
			return fieldAt(fs[i].Fields, path[1:])
		}
	}
	return nil
}

// TestNodesKnowTheirField decodes every golden vector the decoder knows and
// checks that each node that is a value of a schema field points at it
// (same name, same kind), and that message nodes carry their version.
func TestNodesKnowTheirField(t *testing.T) {
	vs := loadVectors(t)
	d := &Decoder{Records: true, ShowSecrets: true}
	checked := 0
	for i := range vs {
		v := &vs[i]
		b, err := hex.DecodeString(v.Hex)
		if err != nil {
			t.Fatal(err)
		}
		tr := decodeVector(d, v, b)
		if tr == nil || tr.Root == nil || tr.Err != nil {
			continue
		}
		checked++
		var walk func(n *Node, depth int)
		walk = func(n *Node, depth int) {
			if depth > 80 {
				return
			}
			switch {
			case n.Kind == KindStruct && (n.Type == "request" || n.Type == "response" || n.Type == "header" || n.Type == "data"):
				if n.Field != nil {
					t.Errorf("%s: message node %s has a field", v.Name, n.Name)
				}
			case n.Kind == KindRaw || n.Kind == KindTaggedFields || n.Kind == KindUnknownTag:
			case n.Field == nil:
				t.Errorf("%s: node %s (%s) has no field", v.Name, n.Name, n.Type)
			case n.Field.ElemOf == nil && n.Field.Name != n.Name:
				t.Errorf("%s: node %s points at field %s", v.Name, n.Name, n.Field.Name)
			}
			for _, c := range n.Children {
				walk(c, depth+1)
			}
		}
		walk(tr.Root, 0)
	}
	if checked == 0 {
		t.Skip("no vectors decoded")
	}
}
