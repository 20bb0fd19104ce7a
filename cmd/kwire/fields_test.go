package main

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAppendTopicsStringArrays checks that topics named only in arrays of
// strings or as config and ACL resources count (--topic, the JSON "topics"
// list), and that other arrays of strings (groups), other resources
// (brokers, groups) and prefixed ACL patterns do not.
func TestAppendTopicsStringArrays(t *testing.T) {
	sub := kmsg.NewConsumerMemberMetadata()
	sub.Topics = []string{"orders", "payments"}
	join := kmsg.NewJoinGroupRequest()
	join.Version = 5
	join.Group, join.ProtocolType = "g", "consumer"
	join.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: sub.AppendTo(nil)}}

	del := kmsg.NewDeleteTopicsRequest()
	del.Version = 4
	del.TopicNames = []string{"old-a", "old-b"}

	hb := kmsg.NewConsumerGroupHeartbeatRequest()
	hb.Version = 0
	hb.Group, hb.MemberEpoch = "g", 0
	hb.SubscribedTopicNames = []string{"clicks"}

	cfg := kmsg.NewDescribeConfigsRequest()
	cfg.Version = 4
	cfg.Resources = []kmsg.DescribeConfigsRequestResource{
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "orders"},
		{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1"},
	}

	acls := kmsg.NewCreateACLsRequest()
	acls.Version = 3
	acls.Creations = []kmsg.CreateACLsRequestCreation{
		{ResourceType: kmsg.ACLResourceTypeTopic, ResourceName: "payments", ResourcePatternType: kmsg.ACLResourcePatternTypeLiteral, Principal: "User:a", Host: "*"},
		{ResourceType: kmsg.ACLResourceTypeTopic, ResourceName: "pay-", ResourcePatternType: kmsg.ACLResourcePatternTypePrefixed, Principal: "User:a", Host: "*"},
		{ResourceType: kmsg.ACLResourceTypeGroup, ResourceName: "g", ResourcePatternType: kmsg.ACLResourcePatternTypeLiteral, Principal: "User:a", Host: "*"},
		{ResourceType: kmsg.ACLResourceTypeTopic, ResourceName: "*", ResourcePatternType: kmsg.ACLResourcePatternTypeLiteral, Principal: "User:a", Host: "*"},
	}

	groups := kmsg.NewDescribeGroupsRequest()
	groups.Version = 5
	groups.Groups = []string{"not-a-topic"}

	for _, c := range []struct {
		req  kmsg.Request
		want []string
	}{
		{&join, []string{"orders", "payments"}},
		{&del, []string{"old-a", "old-b"}},
		{&hb, []string{"clicks"}},
		{&groups, nil},
		{&cfg, []string{"orders"}},
		{&acls, []string{"payments"}},
	} {
		tr := protocol.DecodeBody(c.req.Key(), c.req.GetVersion(), false, c.req.AppendTo(nil))
		if tr.Err != nil {
			t.Fatalf("%T: %v", c.req, tr.Err)
		}
		var got, ids nameSet
		collectTopics(&got, &ids, tr.Root, "", nil, 0)
		if !slices.Equal(got.list, c.want) {
			t.Errorf("%T v%d: topics %q, want %q", c.req, c.req.GetVersion(), got.list, c.want)
		}
	}
}

// TestNameSetMany: past nameSetIndexed names the set switches to a map and
// still keeps each name once, in the order first added.
func TestNameSetMany(t *testing.T) {
	var s nameSet
	var want []string
	for i := range 100 {
		name := fmt.Sprintf("t%d", i%70)
		if i < 70 {
			want = append(want, name)
		}
		s.add(name)
		s.add("")
	}
	if !slices.Equal(s.list, want) {
		t.Errorf("names %q, want %q", s.list, want)
	}
}
