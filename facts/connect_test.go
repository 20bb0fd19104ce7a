package facts

import (
	"slices"
	"testing"

	"github.com/kwire/kwire/internal/connecttest"
	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestConnectGroupFacts: a Kafka Connect group's JoinGroup metadata,
// SyncGroup assignments and DescribeGroups members give each member's
// Worker (URL, config offset, allocation) and Connect assignment (error,
// leader, leader URL, config offset, connectors and tasks, revoked,
// delay), from the fields' roles; a URL holding a userinfo is withheld,
// and said to be.
func TestConnectGroupFacts(t *testing.T) {
	a1 := connecttest.Assignment{Version: 1, Leader: "w-1", LeaderURL: "http://w1:8083/", ConfigOffset: 42,
		Assigned:    []connecttest.Connector{{Name: "pg-sink", Tasks: []int32{-1, 0}}, {Name: "s3", Tasks: []int32{2}}},
		NullRevoked: true, Delay: 0}
	a2 := connecttest.Assignment{Version: 2, Error: 1, Leader: "w-1", LeaderURL: "http://w1:8083/", ConfigOffset: 42,
		Assigned: []connecttest.Connector{}, Revoked: []connecttest.Connector{{Name: "s3", Tasks: []int32{1}}}, Delay: 300000}

	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version, jg.Group, jg.ProtocolType = 7, "connect-cluster", "connect"
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{
		{Name: "sessioned", Metadata: connecttest.Metadata(2, "http://ops:pw@w2:8083/", 40, a1.Bytes())},
		{Name: "default", Metadata: connecttest.Metadata(0, "http://ops:pw@w2:8083/", 40, nil)}}
	jgr := kmsg.NewPtrJoinGroupResponse()
	jgr.Version, jgr.Generation, jgr.LeaderID, jgr.MemberID = 7, 4, "w-1", "w-1"
	jgr.ProtocolType, jgr.Protocol = kmsg.StringPtr("connect"), kmsg.StringPtr("sessioned")
	jgr.Members = []kmsg.JoinGroupResponseMember{
		{MemberID: "w-1", ProtocolMetadata: connecttest.Metadata(2, "http://w1:8083/", 42, nil)},
		{MemberID: "w-2", ProtocolMetadata: connecttest.Metadata(1, "http://w2:8083/", 40, a1.Bytes())}}
	fx := Of(protocol.KeyJoinGroup, 7, request(t, jg), response(t, jgr))
	s := fx.Group.Subscription
	if s == nil || s.Worker == nil || s.Worker.URL != "" || !s.Worker.URLWithheld || s.Worker.ConfigOffset != 40 || s.Worker.Allocation == nil {
		t.Fatalf("request's worker %+v", s)
	}
	if al := s.Worker.Allocation; al.Leader != "w-1" || len(al.Connectors) != 2 || !slices.Equal(al.Connectors[0].Tasks, []int32{-1, 0}) || al.Revoked != nil {
		t.Errorf("allocation %+v", al)
	}
	if len(fx.Group.Members) != 2 {
		t.Fatalf("members %+v", fx.Group.Members)
	}
	if w := fx.Group.Members[0].Subscription.Worker; w.URL != "http://w1:8083/" || w.URLWithheld || w.ConfigOffset != 42 || w.Allocation != nil {
		t.Errorf("member w-1 worker %+v", w)
	}
	if w := fx.Group.Members[1].Subscription.Worker; w.Allocation == nil || w.Allocation.Connectors[1].Connector != "s3" {
		t.Errorf("member w-2 worker %+v", w)
	}
	if len(fx.Group.Members[0].Subscription.Topics) != 0 || len(fx.Topics) != 0 {
		t.Errorf("a worker subscribes to no topics: %+v %+v", fx.Group.Members[0].Subscription, fx.Topics)
	}

	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Version, sg.Group, sg.Generation, sg.MemberID = 5, "connect-cluster", 4, "w-1"
	sg.ProtocolType, sg.Protocol = kmsg.StringPtr("connect"), kmsg.StringPtr("sessioned")
	sg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: "w-1", MemberAssignment: a1.Bytes()}, {MemberID: "w-2", MemberAssignment: a2.Bytes()}}
	sgr := kmsg.NewPtrSyncGroupResponse()
	sgr.Version, sgr.ProtocolType, sgr.Protocol = 5, kmsg.StringPtr("connect"), kmsg.StringPtr("sessioned")
	sgr.MemberAssignment = a1.Bytes()
	fx = Of(protocol.KeySyncGroup, 5, request(t, sg), response(t, sgr))
	ga := fx.Group.Assignment
	if ga == nil || ga.Connect == nil || ga.Connect.Version != 1 || ga.Connect.LeaderURL != "http://w1:8083/" || ga.Connect.ConfigOffset != 42 || TaskCount(ga.Connect.Connectors) != 3 {
		t.Fatalf("own assignment %+v", ga)
	}
	if len(fx.Group.Members) != 2 {
		t.Fatalf("plan %+v", fx.Group.Members)
	}
	c2 := fx.Group.Members[1].Assignment.Connect
	if c2 == nil || c2.Version != 2 || c2.Error != 1 || c2.DelayMs != 300000 || len(c2.Connectors) != 0 ||
		len(c2.Revoked) != 1 || c2.Revoked[0].Connector != "s3" || !slices.Equal(c2.Revoked[0].Tasks, []int32{1}) {
		t.Errorf("w-2 assignment %+v", c2)
	}

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups = 5, []string{"connect-cluster"}
	dgr := kmsg.NewPtrDescribeGroupsResponse()
	dgr.Version = 5
	g := kmsg.NewDescribeGroupsResponseGroup()
	g.Group, g.State, g.ProtocolType, g.Protocol = "connect-cluster", "Stable", "connect", "sessioned"
	g.Members = []kmsg.DescribeGroupsResponseGroupMember{{MemberID: "w-2", ClientID: "connect-2", ClientHost: "/10.0.0.2",
		ProtocolMetadata: connecttest.Metadata(2, "http://w2:8083/", 40, nil), MemberAssignment: a2.Bytes()}}
	dgr.Groups = []kmsg.DescribeGroupsResponseGroup{g}
	fx = Of(protocol.KeyDescribeGroups, 5, request(t, dg), response(t, dgr))
	dm := fx.Described[0].Members[0]
	if dm.Subscription == nil || dm.Subscription.Worker == nil || dm.Subscription.Worker.URL != "http://w2:8083/" ||
		dm.Assignment == nil || dm.Assignment.Connect == nil || dm.Assignment.Connect.Error != 1 {
		t.Errorf("described worker %+v %+v", dm.Subscription, dm.Assignment)
	}
}
