package main

import (
	"slices"
	"testing"

	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAppendTopicsStringArrays checks that topics named only in arrays of
// strings count (--topic, the JSON "topics" list), and that other arrays
// of strings (groups, regular expressions) do not.
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
	} {
		tr := protocol.DecodeBody(c.req.Key(), c.req.GetVersion(), false, c.req.AppendTo(nil))
		if tr.Err != nil {
			t.Fatalf("%T: %v", c.req, tr.Err)
		}
		got, _ := appendTopics(nil, nil, tr.Root, "", nil, 0)
		if !slices.Equal(got, c.want) {
			t.Errorf("%T v%d: topics %q, want %q", c.req, c.req.GetVersion(), got, c.want)
		}
	}
}
