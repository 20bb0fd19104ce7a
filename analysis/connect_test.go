package analysis

import (
	"slices"
	"testing"
	"time"

	"github.com/kwire/kwire/internal/connecttest"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestGroupsConnectWorkers: kwire groups followed a Kafka Connect group
// through JoinGroup and SyncGroup with its workers' bytes raw: members
// without URL or assignment. Now each worker has its URL (withheld when it
// holds a userinfo) and config offset, and its latest assignment: leader
// and leader URL, config offset, connectors and tasks (-1 the connector
// instance), revoked, the scheduled delay, Connect's error; the SyncGroup
// event names the connectors. The state is charged to the budget.
func TestGroupsConnectWorkers(t *testing.T) {
	s, before := connectGroup(t)
	if s.a.mem.used <= before {
		t.Errorf("assignments not charged: %d bytes before, %d after", before, s.a.mem.used)
	}

	rep := s.a.Groups()
	if len(rep.Groups) != 1 || len(rep.Groups[0].Members) != 2 {
		t.Fatalf("groups %+v", rep.Groups)
	}
	byID := map[string]*MemberReport{}
	for i := range rep.Groups[0].Members {
		byID[rep.Groups[0].Members[i].MemberID] = &rep.Groups[0].Members[i]
	}
	w1, w2 := byID["w1"].Connect, byID["w2"].Connect
	if w1 == nil || w2 == nil || w1.URL == nil || w2.URL == nil {
		t.Fatalf("workers %+v %+v", w1, w2)
	}
	if *w1.URL != "http://w1:8083/" || *w1.ConfigOffset != 42 || *w2.URL != "<redacted>" || *w2.ConfigOffset != 40 {
		t.Errorf("urls %q %q, offsets %d %d", *w1.URL, *w2.URL, *w1.ConfigOffset, *w2.ConfigOffset)
	}
	x1, x2 := w1.Assignment, w2.Assignment
	if x1 == nil || x1.Version != 2 || x1.Leader != "w1" || x1.LeaderURL != "http://w1:8083/" || x1.ConfigOffset != 42 || x1.Error != "NONE" ||
		len(x1.Connectors) != 1 || x1.Connectors[0].Connector != "pg-sink" || !slices.Equal(x1.Connectors[0].Tasks, []int32{-1, 0, 1}) || x1.Revoked != nil || x1.DelayMs != 0 {
		t.Errorf("w1 assignment %+v", x1)
	}
	if x2 == nil || x2.Error != "CONFIG_MISMATCH" || x2.DelayMs != 300000 || len(x2.Revoked) != 1 || !slices.Equal(x2.Revoked[0].Tasks, []int32{2}) ||
		ConnectorsText(x2.Connectors) != "s3[0]" || ConnectorsText(x1.Connectors) != "pg-sink[connector,0,1]" {
		t.Errorf("w2 assignment %+v", x2)
	}
	var syncs []string
	for _, ev := range rep.Groups[0].Timeline {
		if ev.Kind == "sync" {
			syncs = append(syncs, ev.Detail)
		}
	}
	if want := []string{"generation 3: assigned pg-sink[connector,0,1] (the leader's plan for 2 members)", "generation 3: assigned s3[0], revoked pg-sink[2]"}; !slices.Equal(syncs, want) {
		t.Errorf("sync events %q, want %q", syncs, want)
	}
}

// connectGroup feeds a Connect group of two workers (w1 the leader, w2
// with a URL holding a userinfo) through JoinGroup and SyncGroup, and
// returns the budget used before the SyncGroups.
func connectGroup(t *testing.T) (*synth, int64) {
	s := newSynth(t, Options{Groups: true})
	a1 := connecttest.Assignment{Version: 2, Leader: "w1", LeaderURL: "http://w1:8083/", ConfigOffset: 42,
		Assigned: []connecttest.Connector{{Name: "pg-sink", Tasks: []int32{1, -1, 0}}}, NullRevoked: true}
	a2 := connecttest.Assignment{Version: 2, Error: 1, Leader: "w1", LeaderURL: "http://w1:8083/", ConfigOffset: 42,
		Assigned: []connecttest.Connector{{Name: "s3", Tasks: []int32{0}}}, Revoked: []connecttest.Connector{{Name: "pg-sink", Tasks: []int32{2}}}, Delay: 300000}
	md1 := connecttest.Metadata(2, "http://w1:8083/", 42, nil)
	md2 := connecttest.Metadata(2, "http://ops:Pw-42@w2:8083/", 40, a1.Bytes())
	join := func(id string, md []byte, members bool) {
		j := kmsg.NewPtrJoinGroupRequest()
		j.Version, j.Group, j.MemberID, j.ProtocolType = 7, "connect-cluster", id, "connect"
		j.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "sessioned", Metadata: md}}
		jr := kmsg.NewPtrJoinGroupResponse()
		jr.Generation, jr.LeaderID, jr.MemberID = 3, "w1", id
		jr.ProtocolType, jr.Protocol = kmsg.StringPtr("connect"), kmsg.StringPtr("sessioned")
		if members {
			jr.Members = []kmsg.JoinGroupResponseMember{{MemberID: "w1", ProtocolMetadata: md1}, {MemberID: "w2", ProtocolMetadata: md2}}
		}
		s.ex(id, 0, time.Millisecond, j, jr)
	}
	join("w1", md1, true)
	join("w2", md2, false)
	sync := func(id string, plan bool, mine []byte) {
		sg := kmsg.NewPtrSyncGroupRequest()
		sg.Version, sg.Group, sg.Generation, sg.MemberID = 5, "connect-cluster", 3, id
		sg.ProtocolType, sg.Protocol = kmsg.StringPtr("connect"), kmsg.StringPtr("sessioned")
		if plan {
			sg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: "w1", MemberAssignment: a1.Bytes()}, {MemberID: "w2", MemberAssignment: a2.Bytes()}}
		}
		sr := kmsg.NewPtrSyncGroupResponse()
		sr.ProtocolType, sr.Protocol = kmsg.StringPtr("connect"), kmsg.StringPtr("sessioned")
		sr.MemberAssignment = mine
		s.ex(id, 10*time.Millisecond, time.Millisecond, sg, sr)
	}
	before := s.a.mem.used
	sync("w1", true, a1.Bytes())
	sync("w2", false, a2.Bytes())
	return s, before
}
