package facts

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// request decodes a kmsg request as a body.
func request(t *testing.T, r kmsg.Request) *protocol.Tree {
	t.Helper()
	tr := protocol.DecodeBody(r.Key(), r.GetVersion(), false, r.AppendTo(nil))
	if tr.Err != nil {
		t.Fatalf("%T v%d: %v", r, r.GetVersion(), tr.Err)
	}
	return tr
}

// response decodes a kmsg response of the request's key and version.
func response(t *testing.T, r kmsg.Response) *protocol.Tree {
	t.Helper()
	tr := protocol.DecodeBody(r.Key(), r.GetVersion(), true, r.AppendTo(nil))
	if tr.Err != nil {
		t.Fatalf("%T v%d: %v", r, r.GetVersion(), tr.Err)
	}
	return tr
}

// TestAllTopicsStringArrays checks that topics named only in arrays of
// strings, in a consumer's subscription or as config and ACL resources
// count, and that other arrays of strings (groups), other resources
// (brokers, groups) and prefixed and wildcard ACL patterns do not.
func TestAllTopicsStringArrays(t *testing.T) {
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
		fx := Of(c.req.Key(), c.req.GetVersion(), request(t, c.req), nil)
		if got := fx.AllTopics(); !slices.Equal(got, c.want) {
			t.Errorf("%T v%d: topics %q, want %q", c.req, c.req.GetVersion(), got, c.want)
		}
	}
}

// TestTopicIndexMany: past indexFrom topics (or partitions of one) the
// builder looks them up by map and still merges repeats, in first order.
func TestTopicIndexMany(t *testing.T) {
	b := builder{fx: &Exchange{}}
	for i := range 200 {
		ti := b.topic(strings.Repeat("x", i%100+1), true, TopicID{}, false, Scope{})
		b.partition(ti, int32(i%3))
		for p := range 50 {
			b.partition(ti, int32(p))
		}
	}
	ts := b.fx.Topics
	if len(ts) != 100 || ts[0].Name != "x" || ts[99].Name != strings.Repeat("x", 100) {
		t.Fatalf("%d topics, first %q", len(ts), ts[0].Name)
	}
	for i, tp := range ts {
		// The first partition added comes first: i%3, then 0 to 49 without it.
		seen := map[int32]bool{}
		for _, p := range tp.Partitions {
			seen[p.Index] = true
		}
		if len(tp.Partitions) != 50 || len(seen) != 50 || tp.Partitions[0].Index != int32(i%3) {
			t.Fatalf("topic %q: %d partitions, %d distinct, first %d", tp.Name, len(tp.Partitions), len(seen), tp.Partitions[0].Index)
		}
	}
}

func TestNamesBounded(t *testing.T) {
	n := NewNames()
	for i := range MaxNames + 10 {
		var id TopicID
		id[0], id[1], id[2], id[15] = byte(i>>16), byte(i>>8), byte(i), 1
		n.Resolve(&Exchange{IDNames: []IDName{{ID: id, Name: "t"}}})
	}
	if n.Len() != MaxNames {
		t.Errorf("%d topic IDs remembered, want the bound %d", n.Len(), MaxNames)
	}
}

// TestNamesBytesBounded: names are the peers' to make long (the wire
// carries 32 KiB strings where Kafka allows 249 characters): what Names
// holds is bounded in bytes, MaxNamesBytes, not only in IDs. 10,000
// Metadata topics of 30 KB names held 300 MB where the flags bounded kwire
// read to 146 MiB (an adversarial trial). The names kept are copies: a
// name does not hold the buffer it was read from.
func TestNamesBytesBounded(t *testing.T) {
	long := strings.Repeat("n", 30000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	n := NewNames()
	const ids = 2000
	for i := range ids {
		var id TopicID
		id[0], id[1], id[15] = byte(i>>8), byte(i), 1
		buf := []byte(fmt.Sprintf("t%d-", i) + long + "-and-the-rest-of-the-frame" + long)
		name := string(buf)[:len(long)+8] // a name inside a larger string, as decoding gives
		if i%2 == 0 {
			n.Resolve(&Exchange{IDNames: []IDName{{ID: id, Name: name}}})
		} else {
			n.Learn(id, name)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d IDs of %d remembered, %d bytes held", n.Len(), ids, held)
	if held > MaxNamesBytes*5/4 {
		t.Errorf("%d bytes held by %d names, past %d", held, n.Len(), MaxNamesBytes)
	}
	if n.Len() == 0 || n.Len() == ids {
		t.Errorf("%d of %d IDs remembered: want some, not all", n.Len(), ids)
	}
	var first TopicID
	first[15] = 1
	if got, ok := n.Name(first); !ok || !strings.HasPrefix(got, "t0-nnn") || len(got) != len(long)+8 {
		t.Errorf("first name: %d bytes, %v", len(got), ok)
	}
	runtime.KeepAlive(n)
}

// TestGroupFacts: a leader's SyncGroup holds its plan for every member
// and its own assignment apart; a JoinGroup response lists the members
// with their subscriptions; errors name the member they belong to.
func TestGroupFacts(t *testing.T) {
	assign := func(parts ...int32) []byte {
		a := kmsg.NewConsumerMemberAssignment()
		a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "lab", Partitions: parts}}
		return a.AppendTo(nil)
	}
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Version, sg.Group, sg.Generation, sg.MemberID = 5, "g", 3, "a"
	sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	sg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{
		{MemberID: "a", MemberAssignment: assign(0, 1)}, {MemberID: "b", MemberAssignment: assign(2, 3)}}
	sgr := kmsg.NewPtrSyncGroupResponse()
	sgr.Version, sgr.ProtocolType, sgr.Protocol = 5, kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	sgr.MemberAssignment = assign(0, 1)
	fx := Of(14, 5, request(t, sg), response(t, sgr))
	g := &fx.Group
	if g.ID != "g" || g.MemberID != "a" || !g.HasGeneration || g.Generation != 3 || g.Protocol != "range" || g.ProtocolType != "consumer" {
		t.Errorf("group %+v", g)
	}
	if g.Assignment == nil || len(g.Assignment.Partitions) != 1 || !slices.Equal(g.Assignment.Partitions[0].Partitions, []int32{0, 1}) {
		t.Errorf("own assignment %+v", g.Assignment)
	}
	if len(g.Members) != 2 || g.Members[1].ID != "b" || g.Members[1].Assignment == nil ||
		!slices.Equal(g.Members[1].Assignment.Partitions[0].Partitions, []int32{2, 3}) {
		t.Errorf("plan %+v", g.Members)
	}
	if len(fx.Topics) != 0 {
		t.Errorf("assignments are not the exchange's topics: %+v", fx.Topics)
	}

	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group = 5, "g"
	lv.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "a", Reason: kmsg.StringPtr("shutting down")}, {MemberID: "b"}}
	lvr := kmsg.NewPtrLeaveGroupResponse()
	lvr.Version = 5
	lvr.Members = []kmsg.LeaveGroupResponseMember{{MemberID: "a"}, {MemberID: "b", ErrorCode: 25}}
	fx = Of(13, 5, request(t, lv), response(t, lvr))
	if len(fx.Group.Members) != 2 || fx.Group.Members[0].Reason != "shutting down" || fx.Group.Members[1].Error != 25 {
		t.Errorf("members %+v", fx.Group.Members)
	}
	if len(fx.Errors) != 1 || fx.Errors[0].Name != "UNKNOWN_MEMBER_ID" || fx.Errors[0].Scope != (Scope{Role: protocol.RoleMemberID, ID: "b"}) {
		t.Errorf("errors %+v", fx.Errors)
	}
}

// TestAPIVersionsFacts: the ranges and features an ApiVersions response
// advertises, and the client software its request names.
func TestAPIVersionsFacts(t *testing.T) {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version, req.ClientSoftwareName, req.ClientSoftwareVersion = 3, "kgo", "1.22.3"
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 3
	resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MinVersion: 3, MaxVersion: 13}, {ApiKey: 18, MaxVersion: 4}}
	resp.SupportedFeatures = []kmsg.ApiVersionsResponseSupportedFeature{{Name: "metadata.version", MinVersion: 1, MaxVersion: 25}}
	resp.FinalizedFeaturesEpoch = 7
	resp.FinalizedFeatures = []kmsg.ApiVersionsResponseFinalizedFeature{{Name: "metadata.version", MinVersionLevel: 21, MaxVersionLevel: 21}}
	fx := Of(18, 3, request(t, req), response(t, resp))
	if fx.Software != (Software{"kgo", "1.22.3"}) {
		t.Errorf("software %+v", fx.Software)
	}
	av := fx.APIVersions
	if av == nil || av.Error != 0 || len(av.Ranges) != 2 || av.Ranges[0] != (APIRange{0, 3, 13}) || av.Ranges[1] != (APIRange{18, 0, 4}) {
		t.Fatalf("ranges %+v", av)
	}
	if av.FinalizedEpoch != 7 || len(av.SupportedFeatures) != 1 || av.SupportedFeatures[0] != (Feature{"metadata.version", 1, 25}) ||
		len(av.FinalizedFeatures) != 1 || av.FinalizedFeatures[0] != (Feature{"metadata.version", 21, 21}) {
		t.Errorf("features %+v", av)
	}
}

// TestPartitionResult: an offset that answers the request is no result
// when the partition has an error; offsets asked are kept; Get keeps what
// the wire said.
func TestPartitionResult(t *testing.T) {
	var p Partition
	for k, v := range map[OffsetKind]int64{OffsetBase: 0, OffsetFetch: 5, OffsetHighWatermark: 9, OffsetLastStable: 9, OffsetLogStart: 1,
		OffsetCommitted: 4, OffsetListed: 3, OffsetListTimestamp: -1, OffsetLeaderEpoch: 2, OffsetEnd: 7, OffsetLowWatermark: 6, OffsetDeletion: 8} {
		p.Offsets.Set(k, v)
	}
	for _, k := range OffsetKinds() {
		if _, ok := p.Result(k); !ok {
			t.Errorf("no error: %v is no result", k)
		}
	}
	p.Error = 6 // NOT_LEADER_OR_FOLLOWER
	for _, k := range OffsetKinds() {
		v, ok := p.Result(k)
		asked := k == OffsetFetch || k == OffsetListTimestamp || k == OffsetLeaderEpoch || k == OffsetDeletion
		if ok != asked {
			t.Errorf("error: %v: result %v (%d)", k, ok, v)
		}
		if _, ok := p.Offsets.Get(k); !ok {
			t.Errorf("error: Get(%v) lost the wire's value", k)
		}
	}
}

// TestZeroTopicID: Kafka's all-zero topic ID is "no ID". Alone (a
// Produce v13 from a client that does not know the topic's ID) it is no
// topic's: Label says so, ZeroID tells it; beside a name (Metadata by
// name) the name names the topic.
func TestZeroTopicID(t *testing.T) {
	prod := kmsg.NewPtrProduceRequest()
	prod.Version = 13
	x := kmsg.NewProduceRequestTopic()
	x.Partitions = []kmsg.ProduceRequestTopicPartition{{Partition: 0}}
	prod.Topics = append(prod.Topics, x)
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 13
	rt := kmsg.NewProduceResponseTopic()
	rt.Partitions = []kmsg.ProduceResponseTopicPartition{{Partition: 0, ErrorCode: 100}} // UNKNOWN_TOPIC_ID
	resp.Topics = append(resp.Topics, rt)
	fx := Of(0, 13, request(t, prod), response(t, resp))
	if len(fx.Topics) != 1 || !fx.Topics[0].ZeroID() || fx.Topics[0].Label() != ZeroIDLabel || fx.Topics[0].Label() != "(zero topic ID)" {
		t.Fatalf("topics %+v", fx.Topics)
	}
	if got := fx.AllTopics(); !slices.Equal(got, []string{"(zero topic ID)"}) {
		t.Errorf("AllTopics %q", got)
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr("orders")
	md.Topics = append(md.Topics, mt)
	fx = Of(3, 12, request(t, md), nil)
	if len(fx.Topics) != 1 || fx.Topics[0].ZeroID() || fx.Topics[0].Label() != "orders" || fx.Topics[0].HasID {
		t.Errorf("topics %+v", fx.Topics)
	}
	tp := TopicPartitions{HasID: true}
	if tp.Label() != ZeroIDLabel {
		t.Errorf("TopicPartitions label %q", tp.Label())
	}
}

// TestMetadataTopicID: the KRaft metadata log's topic ID, Uuid(0, 1),
// names __cluster_metadata though no exchange states the pair; another
// unknown ID stays unnamed.
func TestMetadataTopicID(t *testing.T) {
	names := NewNames()
	fx := &Exchange{Topics: []Topic{{ID: MetadataTopicID, HasID: true}, {ID: TopicID{1}, HasID: true}}}
	names.Resolve(fx)
	if fx.Topics[0].Name != "__cluster_metadata" || fx.Topics[1].Name != "" {
		t.Errorf("topics %+v", fx.Topics)
	}
	if names.Len() != 0 {
		t.Errorf("the well-known ID was learnt as a name: %d", names.Len())
	}
}

// An offset or leader epoch both sides state is the response's: a Fetch
// request's LogStartOffset is a follower's (-1 from a consumer) and its
// CurrentLeaderEpoch the client's belief; the broker's answer is the
// fact. A response's epoch of -1 (none known) leaves the request's.
func TestResponseOffsetsWin(t *testing.T) {
	fetch := func(respEpoch int32) Partition {
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.FetchOffset, rp.LogStartOffset = 0, 7, 20, -1
		req.Topics = []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{rp}}}
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 12
		p := kmsg.NewFetchResponseTopicPartition()
		p.Partition, p.HighWatermark, p.LastStableOffset, p.LogStartOffset = 0, 30, 30, 5
		p.ErrorCode = 6 // NOT_LEADER_OR_FOLLOWER: the response names the leader (KIP-951)
		p.CurrentLeader.LeaderID, p.CurrentLeader.LeaderEpoch = 2, respEpoch
		resp.Topics = []kmsg.FetchResponseTopic{{Topic: "t", Partitions: []kmsg.FetchResponseTopicPartition{p}}}
		fx := Of(protocol.KeyFetch, 12, request(t, req), response(t, resp))
		if len(fx.Topics) != 1 || len(fx.Topics[0].Partitions) != 1 {
			t.Fatalf("topics %+v", fx.Topics)
		}
		return fx.Topics[0].Partitions[0]
	}
	get := func(p Partition, k OffsetKind) int64 {
		v, ok := p.Offsets.Get(k)
		if !ok {
			t.Fatalf("no %v", k)
		}
		return v
	}
	p := fetch(9)
	if ls, ep, fo := get(p, OffsetLogStart), get(p, OffsetLeaderEpoch), get(p, OffsetFetch); ls != 5 || ep != 9 || fo != 20 {
		t.Errorf("logStartOffset %d (want 5), leaderEpoch %d (want 9), fetchOffset %d (want 20)", ls, ep, fo)
	}
	if ep := get(fetch(-1), OffsetLeaderEpoch); ep != 7 {
		t.Errorf("a response's epoch -1: leaderEpoch %d, want the request's 7", ep)
	}
}

// A ShareFetch partition answers two things, the fetch (ErrorCode) and
// the acknowledgements the request carried (AcknowledgeErrorCode,
// KIP-932): a refused acknowledgement is an error of the partition even
// when the fetch succeeded.
func TestShareFetchAcknowledgeError(t *testing.T) {
	resp := kmsg.NewPtrShareFetchResponse()
	resp.Version = 0
	ok := kmsg.NewShareFetchResponseTopicPartition()
	ok.Partition = 0
	bad := kmsg.NewShareFetchResponseTopicPartition()
	bad.Partition, bad.AcknowledgeErrorCode, bad.AcknowledgeErrorMessage = 1, 121, kmsg.StringPtr("bad state") // INVALID_RECORD_STATE
	both := kmsg.NewShareFetchResponseTopicPartition()
	both.Partition, both.ErrorCode, both.ErrorMessage, both.AcknowledgeErrorCode = 2, 6, kmsg.StringPtr("moved"), 121
	resp.Topics = []kmsg.ShareFetchResponseTopic{{TopicID: [16]byte{1}, Partitions: []kmsg.ShareFetchResponseTopicPartition{ok, bad, both}}}
	fx := Of(protocol.KeyShareFetch, 0, nil, response(t, resp))
	var got []string
	for _, e := range fx.Errors {
		got = append(got, fmt.Sprintf("%s[%d] %s %q", fx.Topics[e.Topic].Label(), e.Partition, e.Name, e.Message))
	}
	want := `[AQAAAAAAAAAAAAAAAAAAAA[1] INVALID_RECORD_STATE "bad state" AQAAAAAAAAAAAAAAAAAAAA[2] NOT_LEADER_OR_FOLLOWER "moved" AQAAAAAAAAAAAAAAAAAAAA[2] INVALID_RECORD_STATE ""]`
	if fmt.Sprint(got) != want {
		t.Errorf("errors %v\nwant   %s", got, want)
	}
}

// ListOffsets v0 answers with OldStyleOffsets, the offsets asked for,
// latest first: the first is the listed offset, as Offset is in v1+.
func TestListOffsetsV0Listed(t *testing.T) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 0
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.MaxNumOffsets = 0, -1, 1
	req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsRequestTopicPartition{rp}}}
	resp := kmsg.NewPtrListOffsetsResponse()
	resp.Version = 0
	p := kmsg.NewListOffsetsResponseTopicPartition()
	p.Partition, p.OldStyleOffsets = 0, []int64{4242, 17}
	resp.Topics = []kmsg.ListOffsetsResponseTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsResponseTopicPartition{p}}}
	for _, d := range []protocol.Decoder{{}, {Sparse: true}} {
		rt := d.DecodeBody(protocol.KeyListOffsets, 0, true, resp.AppendTo(nil))
		fx := Of(protocol.KeyListOffsets, 0, request(t, req), rt)
		if len(fx.Topics) != 1 || len(fx.Topics[0].Partitions) != 1 {
			t.Fatalf("sparse %v: topics %+v", d.Sparse, fx.Topics)
		}
		if v, ok := fx.Topics[0].Partitions[0].Offsets.Get(OffsetListed); !ok || v != 4242 {
			t.Errorf("sparse %v: listed offset %d, %v; want 4242", d.Sparse, v, ok)
		}
	}
}

// The topics an incremental Fetch v13+ forgets are named by ID, and named
// as the fetched ones are once a Metadata named the ID.
func TestForgottenResolved(t *testing.T) {
	names := NewNames()
	names.Resolve(&Exchange{IDNames: []IDName{{ID: TopicID{2}, Name: "beta"}}})
	req := kmsg.NewPtrFetchRequest()
	req.Version = 13
	req.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{{TopicID: [16]byte{2}, Partitions: []int32{0, 1}}}
	fx := Of(protocol.KeyFetch, 13, request(t, req), nil)
	names.Resolve(fx)
	if len(fx.Forgotten) != 1 || fx.Forgotten[0].Topic != "beta" || fmt.Sprint(fx.Forgotten[0].Partitions) != "[0 1]" {
		t.Errorf("forgotten %+v", fx.Forgotten)
	}
}

// OffsetForLeaderEpoch answers where the epoch asked for ends, and
// DeleteRecords the log start after the deletion: each partition's
// answer, none for a partition refused.
func TestEndOffsetLowWatermark(t *testing.T) {
	oe := kmsg.NewPtrOffsetForLeaderEpochResponse()
	oe.Version = 4
	oe.Topics = []kmsg.OffsetForLeaderEpochResponseTopic{{Topic: "alpha", Partitions: []kmsg.OffsetForLeaderEpochResponseTopicPartition{
		{Partition: 0, LeaderEpoch: 4, EndOffset: 999}, {Partition: 1, ErrorCode: 75, LeaderEpoch: -1, EndOffset: -1}}}}
	fx := Of(23, 4, nil, response(t, oe)) // OffsetForLeaderEpoch
	dr := kmsg.NewPtrDeleteRecordsResponse()
	dr.Version = 2
	dr.Topics = []kmsg.DeleteRecordsResponseTopic{{Topic: "beta", Partitions: []kmsg.DeleteRecordsResponseTopicPartition{{Partition: 3, LowWatermark: 100}}}}
	fd := Of(21, 2, nil, response(t, dr)) // DeleteRecords
	var got []string
	for _, c := range []struct {
		fx *Exchange
		k  OffsetKind
	}{{fx, OffsetEnd}, {fd, OffsetLowWatermark}} {
		for _, tp := range c.fx.Topics {
			for _, p := range tp.Partitions {
				v, ok := p.Result(c.k)
				got = append(got, fmt.Sprintf("%s[%d] %v=%d,%v", tp.Label(), p.Index, c.k, v, ok))
			}
		}
	}
	if want := "[alpha[0] endOffset=999,true alpha[1] endOffset=0,false beta[3] lowWatermark=100,true]"; fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %s", got, want)
	}
}

// TestMemberIndexMany: past indexFrom members the builder finds them by
// index, as the scan would: by member ID, by instance ID when one side has
// no member ID (KIP-345), the first that matches.
func TestMemberIndexMany(t *testing.T) {
	for _, n := range []int{indexFrom - 1, 5 * indexFrom} {
		b := builder{fx: &Exchange{}}
		for i := range n {
			b.member("m"+strconv.Itoa(i), "")
		}
		// Static members: known by instance ID first, then both.
		a := b.member("", "inst-a")
		if got := b.member("ma", "inst-a"); got != a {
			t.Errorf("%d members: the instance's member ID found member %d, want %d", n, got, a)
		}
		if got := b.member("ma", ""); got != a {
			t.Errorf("%d members: its member ID found member %d, want %d", n, got, a)
		}
		// Two with one instance ID and no member ID: the first is found,
		// and once it has its member ID, the second.
		c, d := len(b.fx.Group.Members), len(b.fx.Group.Members)+1
		b.fx.Group.Members = append(b.fx.Group.Members, Member{InstanceID: "inst-c"}, Member{InstanceID: "inst-c"})
		if b.members != nil {
			b.members.add(b.fx.Group.Members, c)
			b.members.add(b.fx.Group.Members, d)
		}
		if got := b.member("mc", "inst-c"); got != c {
			t.Errorf("%d members: found member %d, want %d", n, got, c)
		}
		if got := b.member("md", "inst-c"); got != d {
			t.Errorf("%d members: found member %d, want %d", n, got, d)
		}
		if got := b.member("", "inst-c"); got != c {
			t.Errorf("%d members: the instance ID alone found member %d, want the first %d", n, got, c)
		}
		if got := b.member("m7", ""); got != 7 {
			t.Errorf("%d members: m7 is member %d", n, got)
		}
		if got, want := len(b.fx.Group.Members), n+3; got != want {
			t.Errorf("%d members: %d after the lookups, want %d", n, got, want)
		}
		if ms := b.fx.Group.Members; ms[a].ID != "ma" || ms[a].InstanceID != "inst-a" || ms[c].ID != "mc" || ms[d].ID != "md" {
			t.Errorf("%d members: %+v %+v %+v", n, ms[a], ms[c], ms[d])
		}
		if indexed := b.members != nil; indexed != (len(b.fx.Group.Members) >= indexFrom) {
			t.Errorf("%d members: indexed %v", n, indexed)
		}
	}
}

// BenchmarkMembers: the facts of a JoinGroup v5 response listing n
// members, per member. A member is found by index, not by a scan of
// those before it: the cost of one does not grow with n.
func BenchmarkMembers(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			resp := kmsg.NewPtrJoinGroupResponse()
			resp.SetVersion(5)
			resp.Generation, resp.Protocol, resp.LeaderID, resp.MemberID = 1, kmsg.StringPtr("range"), "m0", "m0"
			for i := range n {
				m := kmsg.NewJoinGroupResponseMember()
				m.MemberID = "consumer-" + strconv.Itoa(i) + "-0b5c2f1e-6a7d-4e8f-9a0b-1c2d3e4f5a6b"
				m.InstanceID = kmsg.StringPtr("instance-" + strconv.Itoa(i))
				m.ProtocolMetadata = []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0}
				resp.Members = append(resp.Members, m)
			}
			tree := (&protocol.Decoder{}).DecodeBody(resp.Key(), 5, true, resp.AppendTo(nil))
			if tree.Err != nil {
				b.Fatal(tree.Err)
			}
			b.ReportAllocs()
			for b.Loop() {
				fx := Of(resp.Key(), 5, nil, tree)
				if len(fx.Group.Members) != n {
					b.Fatalf("%d members, want %d", len(fx.Group.Members), n)
				}
				Recycle(fx)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/member")
		})
	}
}

// DeleteRecords asks each partition's records before an offset deleted
// (-1: before the high watermark): the request's Offset is the
// partition's deletion offset, asked and not answered, so it stays with
// a partition the broker refused.
func TestDeletionOffset(t *testing.T) {
	rq := kmsg.NewPtrDeleteRecordsRequest()
	rq.Version = 1
	rq.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "beta", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{
		{Partition: 3, Offset: 100}, {Partition: 4, Offset: -1}}}}
	rp := kmsg.NewPtrDeleteRecordsResponse()
	rp.Version = 1
	rp.Topics = []kmsg.DeleteRecordsResponseTopic{{Topic: "beta", Partitions: []kmsg.DeleteRecordsResponseTopicPartition{
		{Partition: 3, LowWatermark: 100}, {Partition: 4, LowWatermark: -1, ErrorCode: 1}}}}
	fx := Of(21, 1, request(t, rq), response(t, rp))
	var got []string
	for _, p := range fx.Topics[0].Partitions {
		d, okD := p.Result(OffsetDeletion)
		lw, okL := p.Result(OffsetLowWatermark)
		got = append(got, fmt.Sprintf("%d:%d,%v/%d,%v", p.Index, d, okD, lw, okL))
	}
	if want := "[3:100,true/100,true 4:-1,true/0,false]"; fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %s", got, want)
	}
	if OffsetDeletion.String() != "deletionOffset" {
		t.Errorf("name %q", OffsetDeletion)
	}
}

// An OffsetCommit's GenerationIdOrMemberEpoch is a generation before v9;
// from v9 (and in TxnOffsetCommit) it is a generation or a KIP-848
// member epoch as the group's protocol is, which Names learns from the
// group's own exchanges: a ConsumerGroupHeartbeat makes it an epoch, a
// JoinGroup a generation; a group never seen leaves it undecided.
func TestGenerationOrMemberEpoch(t *testing.T) {
	commit := func(ver int16, group string, gen int32) *Exchange {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.Generation, oc.MemberID = ver, group, gen, "m"
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5}}}}
		return Of(8, ver, request(t, oc), nil)
	}
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch = "new", "m", 3
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version, jg.Group, jg.ProtocolType = 5, "old", "consumer"
	jg.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.Version, tc.Group, tc.Generation, tc.MemberID, tc.TransactionalID = 3, "new", 6, "m", "tx"

	n := NewNames()
	say := func(fx *Exchange) string {
		g := &fx.Group
		return fmt.Sprintf("gen=%d,%v epoch=%d,%v raw=%d,%v", g.Generation, g.HasGeneration, g.MemberEpoch, g.HasEpoch,
			g.GenerationOrEpoch, g.HasGenOrEpoch)
	}
	var got []string
	for _, fx := range []*Exchange{
		commit(8, "new", 2),  // classic only: a generation whatever the group
		commit(10, "new", 3), // not yet known
		Of(68, 0, request(t, hb), nil),
		commit(10, "new", 4), // a consumer group: an epoch
		Of(28, 3, request(t, tc), nil),
		Of(11, 5, request(t, jg), nil),
		commit(9, "old", 7), // a classic group: a generation
		commit(9, "other", 8),
	} {
		n.Resolve(fx)
		if fx.Key == 8 || fx.Key == 28 {
			got = append(got, say(fx))
		}
	}
	want := []string{
		"gen=2,true epoch=0,false raw=2,true",
		"gen=0,false epoch=0,false raw=3,true",
		"gen=0,false epoch=4,true raw=4,true",
		"gen=0,false epoch=6,true raw=6,true",
		"gen=7,true epoch=0,false raw=7,true",
		"gen=0,false epoch=0,false raw=8,true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// The groups learnt are bounded in bytes: past MaxGroupBytes a
	// further group stays unknown.
	n = NewNames()
	big := strings.Repeat("g", MaxGroupBytes/3)
	for i := range 4 {
		hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		hb.Group, hb.MemberID = big+strconv.Itoa(i), "m"
		n.Resolve(Of(68, 0, request(t, hb), nil))
	}
	if n.groupBytes > MaxGroupBytes || len(n.epochGroups) != 2 {
		t.Errorf("%d groups in %d bytes", len(n.epochGroups), n.groupBytes)
	}
	fx := commit(10, big+"3", 9)
	n.Resolve(fx)
	if fx.Group.HasEpoch || fx.Group.HasGeneration {
		t.Errorf("a group past the bound was decided: %s", say(fx))
	}
}

// describeResponse is a ConsumerGroupDescribe response describing group
// g (epoch 7, target assignment epoch 6) with two members, and group
// "gone", refused.
func describeResponse() *kmsg.ConsumerGroupDescribeResponse {
	tid := [16]byte{9: 7}
	r := kmsg.NewPtrConsumerGroupDescribeResponse()
	m1 := kmsg.NewConsumerGroupDescribeResponseGroupMember()
	m1.MemberID, m1.InstanceID, m1.MemberEpoch, m1.SubscribedTopics = "m1", kmsg.StringPtr("i1"), 7, []string{"t"}
	m1.Assignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{TopicID: tid, Topic: "t", Partitions: []int32{0, 1}}}
	m1.TargetAssignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{TopicID: tid, Topic: "t", Partitions: []int32{0, 1, 2}}}
	m2 := kmsg.NewConsumerGroupDescribeResponseGroupMember()
	m2.MemberID, m2.MemberEpoch = "m2", 6
	m2.Assignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{TopicID: tid, Topic: "t", Partitions: []int32{2}}}
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group, g.Epoch, g.AssignmentEpoch, g.Members = "g", 7, 6, []kmsg.ConsumerGroupDescribeResponseGroupMember{m1, m2}
	gone := kmsg.NewConsumerGroupDescribeResponseGroup()
	gone.Group, gone.ErrorCode = "gone", 69
	r.Groups = []kmsg.ConsumerGroupDescribeResponseGroup{g, gone}
	return r
}

// sayDescribed writes the groups a describe response describes.
func sayDescribed(ds []DescribedGroup) string {
	var b strings.Builder
	tps := func(a *Assignment) string {
		if a == nil {
			return "-"
		}
		var s []string
		for _, tp := range a.Partitions {
			s = append(s, fmt.Sprintf("%s%v", tp.Label(), tp.Partitions))
		}
		return strings.Join(s, " ")
	}
	for _, d := range ds {
		fmt.Fprintf(&b, "%s err=%d epoch=%d/%d:", d.ID, d.Error, d.Epoch, d.AssignmentEpoch)
		for _, m := range d.Members {
			var sub []string
			if m.Subscription != nil {
				sub = m.Subscription.Topics
			}
			fmt.Fprintf(&b, " [%s inst=%s epoch=%d,%v sub=%v has=%s target=%s]", m.ID, m.InstanceID, m.Epoch, m.HasEpoch, sub,
				tps(m.Assignment), tps(m.Target))
		}
		b.WriteString("; ")
	}
	return b.String()
}

// A describe response's groups are facts with their members: a KIP-848
// member's epoch, instance, subscription, assignment and target; a
// classic DescribeGroups' members; none for a group refused.
func TestDescribedGroups(t *testing.T) {
	rq := kmsg.NewPtrConsumerGroupDescribeRequest()
	rq.Groups = []string{"g", "gone"}
	fx := Of(69, 0, request(t, rq), response(t, describeResponse()))
	want := "g err=0 epoch=7/6: [m1 inst=i1 epoch=7,true sub=[t] has=t[0 1] target=t[0 1 2]] [m2 inst= epoch=6,true sub=[] has=t[2] target=]; gone err=69 epoch=0/0:; "
	if got := sayDescribed(fx.Described); got != want {
		t.Errorf("ConsumerGroupDescribe\n got  %s\n want %s", got, want)
	}
	if got, want := fmt.Sprint(fx.AllTopics(), fx.TopicIDs(), fx.Groups), fmt.Sprint([]string{"t"}, []string{TopicID{9: 7}.String()}, []string{"g", "gone"}); got != want {
		t.Errorf("topics, IDs, groups: %s, want %s", got, want)
	}

	dq := kmsg.NewPtrDescribeGroupsRequest()
	dq.Version, dq.Groups = 5, []string{"c"}
	dr := kmsg.NewPtrDescribeGroupsResponse()
	dr.Version = 5
	dr.Groups = []kmsg.DescribeGroupsResponseGroup{{Group: "c", Members: []kmsg.DescribeGroupsResponseGroupMember{
		{MemberID: "a", InstanceID: kmsg.StringPtr("ia")}, {MemberID: "b"}}}}
	fx = Of(15, 5, request(t, dq), response(t, dr))
	want = "c err=0 epoch=-1/-1: [a inst=ia epoch=0,false sub=[] has=- target=-] [b inst= epoch=0,false sub=[] has=- target=-]; "
	if got := sayDescribed(fx.Described); got != want {
		t.Errorf("DescribeGroups\n got  %s\n want %s", got, want)
	}
}

// describeProducers is a DescribeProducers response: t[0] with two
// active producers (100 in a transaction begun at offset 500, 200
// idempotent), t[1] with none, t[2] refused (NOT_LEADER_OR_FOLLOWER).
func describeProducers() *kmsg.DescribeProducersResponse {
	r := kmsg.NewPtrDescribeProducersResponse()
	r.Topics = []kmsg.DescribeProducersResponseTopic{{Topic: "t", Partitions: []kmsg.DescribeProducersResponseTopicPartition{
		{Partition: 0, ActiveProducers: []kmsg.DescribeProducersResponseTopicPartitionActiveProducer{
			{ProducerID: 100, ProducerEpoch: 3, LastSequence: 41, LastTimestamp: 1700000000123, CoordinatorEpoch: 2, CurrentTxnStartOffset: 500},
			{ProducerID: 200, ProducerEpoch: 0, LastSequence: 9, LastTimestamp: 1700000000456, CoordinatorEpoch: -1, CurrentTxnStartOffset: -1}}},
		{Partition: 1, ActiveProducers: []kmsg.DescribeProducersResponseTopicPartitionActiveProducer{}},
		{Partition: 2, ErrorCode: 6}}}}
	return r
}

// DescribeProducers' active producers are facts of their partition
// (KIP-664), not the exchange's producer.
func TestActiveProducers(t *testing.T) {
	rq := kmsg.NewPtrDescribeProducersRequest()
	rq.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "t", Partitions: []int32{0, 1, 2}}}
	fx := Of(61, 0, request(t, rq), response(t, describeProducers()))
	var got []string
	for _, p := range fx.Topics[0].Partitions {
		got = append(got, fmt.Sprintf("%d err=%d n=%d %v", p.Index, p.Error, p.ActiveProducers, p.Producers))
	}
	want := []string{
		"0 err=0 n=2 [{100 3 41 1700000000123 2 500} {200 0 9 1700000000456 -1 -1}]",
		"1 err=0 n=0 []",
		"2 err=6 n=0 []",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !fx.Producer.IsZero() || len(fx.Topics) != 1 || fx.Topics[0].Owner != (Scope{}) {
		t.Errorf("producer %+v, topics %+v", fx.Producer, fx.Topics)
	}
}

// TestNamesSetMemory: SetMemory (kwire's --max-names-memory) bounds what
// a Names learns: four fifths of it for topic names, a fifth for group
// IDs; past each, further IDs stay unresolved and further groups
// undecided, and the names and groups kept before stay.
func TestNamesSetMemory(t *testing.T) {
	n := NewNames()
	n.SetMemory(10 << 10) // 8 KiB of names, 2 KiB of groups
	name := strings.Repeat("n", 1000)
	for i := range 20 {
		var id TopicID
		id[0], id[15] = byte(i), 1
		n.Learn(id, fmt.Sprintf("%02d", i)+name)
	}
	// Each costs 1002 bytes and nameOverhead: seven fit in 8,192 bytes.
	if n.Len() != 7 || n.bytes > 8<<10 {
		t.Errorf("%d names in %d bytes, want 7 in at most 8192", n.Len(), n.bytes)
	}
	var first, eighth TopicID
	first[15], eighth[0], eighth[15] = 1, 7, 1
	if got, ok := n.Name(first); !ok || got != "00"+name {
		t.Errorf("first name %q, %v", got[:min(len(got), 8)], ok)
	}
	if _, ok := n.Name(eighth); ok {
		t.Error("the eighth name was learnt past the bound")
	}
	commit := func(group string, gen int32) *Exchange {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.Generation, oc.MemberID = 10, group, gen, "m"
		return Of(8, 10, request(t, oc), nil)
	}
	say := func(fx *Exchange) string {
		g := &fx.Group
		return fmt.Sprintf("gen=%d,%v epoch=%d,%v", g.Generation, g.HasGeneration, g.MemberEpoch, g.HasEpoch)
	}
	big := strings.Repeat("g", 900)
	for i := range 4 {
		hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		hb.Group, hb.MemberID = big+strconv.Itoa(i), "m"
		n.Resolve(Of(68, 0, request(t, hb), nil))
	}
	// Each group costs 901 bytes and groupEntryBytes: two fit in 2,048.
	if len(n.epochGroups) != 2 || n.groupBytes > 2<<10 {
		t.Errorf("%d groups in %d bytes, want 2 in at most 2048", len(n.epochGroups), n.groupBytes)
	}
	fx := commit(big+"1", 9)
	n.Resolve(fx)
	if !fx.Group.HasEpoch || fx.Group.MemberEpoch != 9 {
		t.Errorf("a group kept was not decided: %s", say(fx))
	}
	fx = commit(big+"2", 9)
	n.Resolve(fx)
	if fx.Group.HasEpoch || fx.Group.HasGeneration {
		t.Errorf("a group past the bound was decided: %s", say(fx))
	}
	// 0 lifts the bounds in bytes.
	u := NewNames()
	u.SetMemory(0)
	for i := range 20 {
		var id TopicID
		id[0], id[15] = byte(i), 1
		u.Learn(id, fmt.Sprintf("%02d", i)+name)
	}
	if u.Len() != 20 {
		t.Errorf("SetMemory(0): %d of 20 names learnt", u.Len())
	}
	// Without SetMemory the defaults hold.
	if d := NewNames(); d.nameBudget() != MaxNamesBytes || d.groupBudget() != MaxGroupBytes || DefaultMaxMemory != MaxNamesBytes+MaxGroupBytes {
		t.Errorf("default budgets %d/%d", d.nameBudget(), d.groupBudget())
	}
}

// TestUnnamed: an exchange is unnamed when a topic it names is known by a
// non-zero ID alone, wherever AllTopics finds it; a name beside the ID,
// learnt or stated, or the all-zero ID (no topic) is not.
func TestUnnamed(t *testing.T) {
	id := TopicID{1, 2, 3}
	byID := []TopicPartitions{{ID: id, HasID: true, Partitions: []int32{0}}}
	for _, c := range []struct {
		name string
		fx   Exchange
		want bool
	}{
		{"nothing", Exchange{}, false},
		{"topic by ID", Exchange{Topics: []Topic{{ID: id, HasID: true}}}, true},
		{"topic by ID and name", Exchange{Topics: []Topic{{Name: "orders", ID: id, HasID: true}}}, false},
		{"zero ID", Exchange{Topics: []Topic{{HasID: true}}}, false},
		{"topic by name", Exchange{Topics: []Topic{{Name: "orders"}}}, false},
		{"assignment", Exchange{Group: Group{Assignment: &Assignment{Partitions: byID}}}, true},
		{"owned", Exchange{Group: Group{Owned: byID}}, true},
		{"member's subscription", Exchange{Group: Group{Members: []Member{{Subscription: &Subscription{Owned: byID}}}}}, true},
		{"described target", Exchange{Described: []DescribedGroup{{Members: []Member{{Target: &Assignment{Partitions: byID}}}}}}, true},
		{"transaction", Exchange{Transactions: []Transaction{{Topics: byID}}}, true},
		{"forgotten", Exchange{Forgotten: byID}, true},
	} {
		if got := c.fx.Unnamed(); got != c.want {
			t.Errorf("%s: Unnamed %v, want %v", c.name, got, c.want)
		}
	}
	fx := Exchange{Topics: []Topic{{ID: id, HasID: true}}, IDNames: []IDName{{ID: id, Name: "orders"}}}
	NewNames().Resolve(&fx)
	if fx.Unnamed() {
		t.Errorf("resolved: still unnamed: %+v", fx.Topics)
	}
}

// TestDescribeGroupsFacts: a classic DescribeGroups response's groups are
// Described, from their fields' roles: state, protocol type and assignor
// (ProtocolData), and members with client ID, instance ID and, for the
// "consumer" protocol type, the subscription and assignment their
// MemberMetadata and MemberAssignment hold; a "connect" group's bytes are
// not read as the consumer protocol's.
func TestDescribeGroupsFacts(t *testing.T) {
	sub := kmsg.ConsumerMemberMetadata{Version: 1, Topics: []string{"orders"}, Generation: -1,
		OwnedPartitions: []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "orders", Partitions: []int32{2}}}}
	asg := kmsg.ConsumerMemberAssignment{Version: 1, Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "orders", Partitions: []int32{2, 3}}}}
	m := kmsg.NewDescribeGroupsResponseGroupMember()
	m.MemberID, m.ClientID, m.InstanceID = "c1-1", "c1", kmsg.StringPtr("i1")
	m.ProtocolMetadata, m.MemberAssignment = sub.AppendTo(nil), asg.AppendTo(nil)
	g := kmsg.NewDescribeGroupsResponseGroup()
	g.Group, g.State, g.ProtocolType, g.Protocol = "cg", "Stable", "consumer", "cooperative-sticky"
	g.Members = []kmsg.DescribeGroupsResponseGroupMember{m}
	wm := m
	wm.MemberID, wm.InstanceID = "w-1", nil
	wg := g
	wg.Group, wg.ProtocolType, wg.Protocol = "wg", "connect", "sessioned"
	wg.Members = []kmsg.DescribeGroupsResponseGroupMember{wm}
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Version = 5
	req.Groups = []string{"cg", "wg"}
	resp := kmsg.NewPtrDescribeGroupsResponse()
	resp.Version = 5
	resp.Groups = []kmsg.DescribeGroupsResponseGroup{g, wg}
	fx := Of(protocol.KeyDescribeGroups, 5, request(t, req), response(t, resp))
	if len(fx.Described) != 2 {
		t.Fatalf("described %+v", fx.Described)
	}
	d := fx.Described[0]
	if d.ID != "cg" || d.State != "Stable" || d.ProtocolType != "consumer" || d.Protocol != "cooperative-sticky" || d.Epoch != -1 || len(d.Members) != 1 {
		t.Fatalf("cg: %+v", d)
	}
	dm := d.Members[0]
	if dm.ID != "c1-1" || dm.ClientID != "c1" || dm.InstanceID != "i1" || dm.HasEpoch ||
		dm.Subscription == nil || !slices.Equal(dm.Subscription.Topics, []string{"orders"}) ||
		len(dm.Subscription.Owned) != 1 || dm.Subscription.Owned[0].Topic != "orders" || !slices.Equal(dm.Subscription.Owned[0].Partitions, []int32{2}) ||
		dm.Assignment == nil || len(dm.Assignment.Partitions) != 1 || !slices.Equal(dm.Assignment.Partitions[0].Partitions, []int32{2, 3}) {
		t.Errorf("cg member: %+v (subscription %+v, assignment %+v)", dm, dm.Subscription, dm.Assignment)
	}
	w := fx.Described[1]
	if w.ID != "wg" || w.ProtocolType != "connect" || len(w.Members) != 1 || w.Members[0].ClientID != "c1" ||
		w.Members[0].Subscription != nil || w.Members[0].Assignment != nil {
		t.Errorf("wg: %+v", w)
	}
	if got := fx.AllTopics(); !slices.Equal(got, []string{"orders"}) {
		t.Errorf("topics %q", got)
	}
}
