package render

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/internal/connecttest"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render/units"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Frames here are encoded with franz-go's kmsg (an independent encoder)
// and decoded with kwire's protocol decoder, so the trees the subject
// reads are real ones.

var kdec = &protocol.Decoder{Records: true}

func kreq(t *testing.T, r kmsg.Request) *dissect.Frame {
	t.Helper()
	b := kmsg.NewRequestFormatter(kmsg.FormatterClientID("app")).AppendRequest(nil, r, 1)
	tr := kdec.DecodeRequest(b)
	if tr.Err != nil {
		t.Fatalf("decoding %T v%d: %v", r, r.GetVersion(), tr.Err)
	}
	return &dissect.Frame{Bytes: b, Tree: tr, Time: testT0, End: testT0}
}

func kresp(t *testing.T, r kmsg.Response) *dissect.Frame {
	t.Helper()
	b := binary.BigEndian.AppendUint32(make([]byte, 4), 1)
	if r.IsFlexible() && r.Key() != 18 {
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	tr := kdec.DecodeResponse(b, r.Key(), r.GetVersion())
	if tr.Err != nil {
		t.Fatalf("decoding %T v%d: %v", r, r.GetVersion(), tr.Err)
	}
	at := testT0.Add(1250 * time.Microsecond)
	return &dissect.Frame{Bytes: b, Tree: tr, Time: at, End: at}
}

// kline builds the exchange of req and resp and returns its one line, and
// the line expected for the given subject and errors text.
func kline(t *testing.T, req kmsg.Request, resp kmsg.Response, tail string) (got, want string) {
	t.Helper()
	resp.SetVersion(req.GetVersion())
	rq, rp := kreq(t, req), kresp(t, resp)
	e := &dissect.Exchange{Conn: &reassembly.Conn{A: testClient, B: testBroker}, Client: testClient, Broker: testBroker,
		Kind: dissect.KindPaired, APIKey: req.Key(), APIVersion: req.GetVersion(), CorrelationID: 1, ClientID: "app",
		Request: rq, Response: rp}
	var b bytes.Buffer
	if err := Line(&b, e, Options{}); err != nil {
		t.Fatal(err)
	}
	name := protocol.APIName(req.Key())
	want = "12:01:02.345 10.0.0.5:53412 → 10.0.0.9:9092 " + name + " v" + itoa(int64(req.GetVersion())) +
		" corr=1 client=app 1.25ms " + units.Size(int64(len(rq.Bytes))) + "/" + units.Size(int64(len(rp.Bytes))) +
		" " + tail + "\n"
	return b.String(), want
}

func TestSubjectPerAPI(t *testing.T) {
	check := func(name string, req kmsg.Request, resp kmsg.Response, tail string) {
		t.Helper()
		if got, want := kline(t, req, resp, tail); got != want {
			t.Errorf("%s:\n got  %s want %s", name, got, want)
		}
	}

	// FindCoordinator v6: batched keys, the coordinator from the response.
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorKeys = 6, []string{"orders-group"}
	fcr := kmsg.NewPtrFindCoordinatorResponse()
	co := kmsg.NewFindCoordinatorResponseCoordinator()
	co.Key, co.NodeID, co.Host, co.Port = "orders-group", 3, "b3.example", 9093
	fcr.Coordinators = append(fcr.Coordinators, co)
	check("FindCoordinator v6", fc, fcr, "group=orders-group → node 3 b3.example:9093")

	// FindCoordinator v2: a transactional ID, the answer at top level.
	fc2 := kmsg.NewPtrFindCoordinatorRequest()
	fc2.Version, fc2.CoordinatorKey, fc2.CoordinatorType = 2, "pay-txn", 1
	fcr2 := kmsg.NewPtrFindCoordinatorResponse()
	fcr2.NodeID, fcr2.Host, fcr2.Port = 1, "b1", 9092
	check("FindCoordinator v2 txn", fc2, fcr2, "txn=pay-txn → node 1 b1:9092")

	// FindCoordinator that failed: no coordinator, the error message.
	fcr3 := kmsg.NewPtrFindCoordinatorResponse()
	fcr3.ErrorCode, fcr3.NodeID = 15, -1
	msg := "the coordinator is not available yet, the group metadata topic is still loading on this broker"
	fcr3.ErrorMessage = &msg
	fc3 := kmsg.NewPtrFindCoordinatorRequest()
	fc3.Version, fc3.CoordinatorKey = 2, "g"
	check("FindCoordinator error", fc3, fcr3,
		`group=g errors: COORDINATOR_NOT_AVAILABLE "the coordinator is not available yet, the group metadata to…"`)

	// Config and ACL resources name topics: DescribeConfigs in an array,
	// DescribeAcls in the body itself; a broker resource does not.
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Version = 4
	dc.Resources = []kmsg.DescribeConfigsRequestResource{
		{ResourceType: kmsg.ConfigResourceTypeTopic, ResourceName: "orders"},
		{ResourceType: kmsg.ConfigResourceTypeBroker, ResourceName: "1"},
	}
	check("DescribeConfigs", dc, kmsg.NewPtrDescribeConfigsResponse(), "orders broker:1")
	da := kmsg.NewPtrDescribeACLsRequest()
	da.Version, da.ResourceType, da.ResourcePatternType, da.Operation, da.PermissionType = 1, kmsg.ACLResourceTypeTopic, kmsg.ACLResourcePatternTypeLiteral, kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	da.ResourceName = kmsg.StringPtr("payments")
	check("DescribeAcls", da, kmsg.NewPtrDescribeACLsResponse(), "payments")

	dg := kmsg.NewPtrDescribeGroupsRequest()
	dg.Version, dg.Groups = 5, []string{"a", "b", "c", "d", "e"}
	check("DescribeGroups", dg, kmsg.NewPtrDescribeGroupsResponse(), "groups=a,b,c,+2")

	lg := kmsg.NewPtrListGroupsRequest()
	lg.Version = 4
	lgr := kmsg.NewPtrListGroupsResponse()
	for _, g := range []string{"a", "b"} {
		x := kmsg.NewListGroupsResponseGroup()
		x.Group = g
		lgr.Groups = append(lgr.Groups, x)
	}
	check("ListGroups", lg, lgr, "groups: 2")

	// JoinGroup: the member ID comes from the response on a first join.
	jg := kmsg.NewPtrJoinGroupRequest()
	jg.Version, jg.Group, jg.ProtocolType = 9, "g", "consumer"
	jgr := kmsg.NewPtrJoinGroupResponse()
	jgr.Generation, jgr.MemberID = 4, "app-0123456789abcdef"
	check("JoinGroup", jg, jgr, "group=g member=01234567… gen=4")

	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.Generation, hb.MemberID = 4, "g", 3, "sarama-5f0e-4c1d-9abc-1234567890ab"
	check("Heartbeat", hb, kmsg.NewPtrHeartbeatResponse(), "group=g member=12345678… gen=3")

	lv := kmsg.NewPtrLeaveGroupRequest()
	lv.Version, lv.Group = 5, "g"
	m := kmsg.NewLeaveGroupRequestMember()
	m.MemberID = "short"
	lv.Members = append(lv.Members, m)
	check("LeaveGroup", lv, kmsg.NewPtrLeaveGroupResponse(), "group=g member=short")
	// A batch names every member: an admin removing static members by
	// instance ID (KIP-345), the broker answering with the member IDs it
	// knew.
	lvb := kmsg.NewPtrLeaveGroupRequest()
	lvb.Version, lvb.Group = 5, "g"
	lvbr := kmsg.NewPtrLeaveGroupResponse()
	lvbr.Version = 5
	for _, inst := range []string{"i-1", "i-2", "i-9"} {
		m := kmsg.NewLeaveGroupRequestMember()
		m.InstanceID = kmsg.StringPtr(inst)
		lvb.Members = append(lvb.Members, m)
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.InstanceID = kmsg.StringPtr(inst)
		if inst == "i-9" {
			rm.ErrorCode = 25 // UNKNOWN_MEMBER_ID
		} else {
			rm.MemberID = "m" + inst[2:]
		}
		lvbr.Members = append(lvbr.Members, rm)
	}
	check("LeaveGroup batch", lvb, lvbr, "group=g members=m1,m2 instances=i-9 errors: UNKNOWN_MEMBER_ID instance=i-9")

	of := kmsg.NewPtrOffsetFetchRequest()
	of.Version = 8
	for _, g := range []string{"g1", "g2"} {
		x := kmsg.NewOffsetFetchRequestGroup()
		x.Group = g
		of.Groups = append(of.Groups, x)
	}
	check("OffsetFetch v8", of, kmsg.NewPtrOffsetFetchResponse(), "group=g1,g2")

	oc := kmsg.NewPtrOffsetCommitRequest()
	oc.Version, oc.Group, oc.Generation, oc.MemberID = 8, "g", 7, "m-abc"
	check("OffsetCommit", oc, kmsg.NewPtrOffsetCommitResponse(), "group=g member=m-abc gen=7")

	et := kmsg.NewPtrEndTxnRequest()
	et.Version, et.TransactionalID, et.ProducerID, et.Commit = 3, "pay-txn", 5, false
	check("EndTxn abort", et, kmsg.NewPtrEndTxnResponse(), "txn=pay-txn pid=5 epoch=0 ABORT")
	et.Commit = true
	check("EndTxn commit", et, kmsg.NewPtrEndTxnResponse(), "txn=pay-txn pid=5 epoch=0 COMMIT")

	// ListOffsets: per partition the timestamp asked and the offset found.
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 7
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "orders"
	lor := kmsg.NewPtrListOffsetsResponse()
	rt := kmsg.NewListOffsetsResponseTopic()
	rt.Topic = "orders"
	for i, c := range [][2]int64{{-1, 42}, {-2, 0}, {-3, 7}, {1700000000000, 5}} {
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Partition, p.Timestamp = int32(i), c[0]
		lt.Partitions = append(lt.Partitions, p)
		rp := kmsg.NewListOffsetsResponseTopicPartition()
		rp.Partition, rp.Offset = int32(i), c[1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	lo.Topics = append(lo.Topics, lt)
	lor.Topics = append(lor.Topics, rt)
	check("ListOffsets", lo, lor, "orders[0 latest→42,1 earliest→0,2 max-timestamp→7,3 2023-11-14T22:13:20.000Z→5]")

	fe := kmsg.NewPtrFetchRequest()
	fe.Version, fe.IsolationLevel = 11, 1
	check("Fetch", fe, kmsg.NewPtrFetchResponse(), "read_committed")
	// An incremental fetch (KIP-227) that drops partitions from its
	// session: they are not fetched.
	fe = kmsg.NewPtrFetchRequest()
	fe.Version = 12
	fe.Topics = []kmsg.FetchRequestTopic{{Topic: "alpha", Partitions: []kmsg.FetchRequestTopicPartition{{Partition: 0, FetchOffset: 10}}}}
	fe.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{{Topic: "beta", Partitions: []int32{0, 1}}}
	check("Fetch forgetting", fe, kmsg.NewPtrFetchResponse(), "alpha[0] forgot=beta[0,1] read_uncommitted")

	// SaslAuthenticate: the user from a PLAIN token, the failure's message.
	sa := kmsg.NewPtrSASLAuthenticateRequest()
	sa.Version, sa.SASLAuthBytes = 2, []byte("\x00alice\x00secret")
	sar := kmsg.NewPtrSASLAuthenticateResponse()
	bad := "Authentication failed: Invalid username or password"
	sar.ErrorCode, sar.ErrorMessage = 58, &bad
	check("SaslAuthenticate PLAIN", sa, sar,
		`mechanism=PLAIN user=alice errors: SASL_AUTHENTICATION_FAILED "Authentication failed: Invalid username or password"`)
	sa.SASLAuthBytes = []byte("n,,n=bob,r=fyko+d2lbbFgONRv9qkxdawL")
	check("SaslAuthenticate SCRAM", sa, kmsg.NewPtrSASLAuthenticateResponse(), "mechanism=SCRAM user=bob")

	// SyncGroup from the leader: its own assignment (the response's),
	// not the union of the plan it sends for every member.
	assign := func(parts ...int32) []byte {
		a := kmsg.NewConsumerMemberAssignment()
		a.Version = 0
		a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "lab", Partitions: parts}}
		return a.AppendTo(nil)
	}
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Version, sg.Group, sg.Generation, sg.MemberID = 5, "lab-group", 3, "a"
	sg.ProtocolType, sg.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	sg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{
		{MemberID: "a", MemberAssignment: assign(0, 1)}, {MemberID: "b", MemberAssignment: assign(2, 3)}}
	sgr := kmsg.NewPtrSyncGroupResponse()
	sgr.Version, sgr.ProtocolType, sgr.Protocol = 5, kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	sgr.MemberAssignment = assign(0, 1)
	check("SyncGroup leader", sg, sgr, "lab[0,1] assigns 2 members group=lab-group member=a gen=3")

	// A Kafka Connect leader's SyncGroup: its own connectors and tasks
	// (-1 the connector instance), the revoked ones, and the workers it
	// assigns; a worker's SyncGroup without a plan.
	ca := connecttest.Assignment{Version: 1, Leader: "w1", LeaderURL: "http://w1:8083/", ConfigOffset: 9,
		Assigned: []connecttest.Connector{{Name: "pg-sink", Tasks: []int32{-1, 0}}}, Revoked: []connecttest.Connector{{Name: "s3", Tasks: []int32{2}}}}
	csg := kmsg.NewPtrSyncGroupRequest()
	csg.Version, csg.Group, csg.Generation, csg.MemberID = 5, "connect-cluster", 7, "w1"
	csg.ProtocolType, csg.Protocol = kmsg.StringPtr("connect"), kmsg.StringPtr("compatible")
	csg.GroupAssignment = []kmsg.SyncGroupRequestGroupAssignment{{MemberID: "w1", MemberAssignment: ca.Bytes()}, {MemberID: "w2", MemberAssignment: ca.Bytes()}}
	csgr := kmsg.NewPtrSyncGroupResponse()
	csgr.Version, csgr.ProtocolType, csgr.Protocol = 5, kmsg.StringPtr("connect"), kmsg.StringPtr("compatible")
	csgr.MemberAssignment = ca.Bytes()
	check("SyncGroup Connect leader", csg, csgr, "pg-sink[connector,0] revoked=s3[2] assigns 2 workers group=connect-cluster member=w1 gen=7")
	csg.GroupAssignment, csg.MemberID = nil, "w2"
	check("SyncGroup Connect worker", csg, csgr, "pg-sink[connector,0] revoked=s3[2] group=connect-cluster member=w2 gen=7")

	// JoinGroup: the partitions a cooperative member owns say so.
	sub := kmsg.NewConsumerMemberMetadata()
	sub.Version, sub.Topics = 1, []string{"lab"}
	sub.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "lab", Partitions: []int32{2, 3}}}
	jg2 := kmsg.NewPtrJoinGroupRequest()
	jg2.Version, jg2.Group, jg2.MemberID, jg2.ProtocolType = 7, "lab-group", "b", "consumer"
	jg2.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "cooperative-sticky", Metadata: sub.AppendTo(nil)}}
	jgr2 := kmsg.NewPtrJoinGroupResponse()
	jgr2.Version, jgr2.Generation, jgr2.MemberID, jgr2.LeaderID = 7, 4, "b", "a"
	check("JoinGroup owned", jg2, jgr2, "lab owned=lab[2,3] group=lab-group member=b gen=4")

	// AddPartitionsToTxn: v3 at the top level, v4+ batched.
	ap3 := kmsg.NewPtrAddPartitionsToTxnRequest()
	ap3.Version, ap3.TransactionalID, ap3.ProducerID, ap3.ProducerEpoch = 3, "tx", 9, 2
	ap3.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0}}}
	check("AddPartitionsToTxn v3", ap3, kmsg.NewPtrAddPartitionsToTxnResponse(), "t[0] txn=tx pid=9 epoch=2")
	ap4 := kmsg.NewPtrAddPartitionsToTxnRequest()
	ap4.Version = 4
	for i, id := range []string{"tx1", "tx2"} {
		x := kmsg.NewAddPartitionsToTxnRequestTransaction()
		x.TransactionalID, x.ProducerID, x.ProducerEpoch = id, int64(10+i), 1
		x.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "t" + id, Partitions: []int32{int32(i)}}}
		ap4.Transactions = append(ap4.Transactions, x)
	}
	ap4r := kmsg.NewPtrAddPartitionsToTxnResponse()
	ap4r.Version = 4
	check("AddPartitionsToTxn v4", ap4, ap4r, "txn=tx1 ttx1[0] txn=tx2 ttx2[1]")
	// WriteTxnMarkers: each producer's markers are its own, however many
	// name the same partition.
	wm := kmsg.NewPtrWriteTxnMarkersRequest()
	wm.Version = 1
	wmr := kmsg.NewPtrWriteTxnMarkersResponse()
	for i, pid := range []int64{100, 200} {
		wm.Markers = append(wm.Markers, kmsg.WriteTxnMarkersRequestMarker{ProducerID: pid, ProducerEpoch: 1, Committed: i == 0,
			Topics: []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "alpha", Partitions: []int32{0}}}})
		wmr.Markers = append(wmr.Markers, kmsg.WriteTxnMarkersResponseMarker{ProducerID: pid,
			Topics: []kmsg.WriteTxnMarkersResponseMarkerTopic{{Topic: "alpha", Partitions: []kmsg.WriteTxnMarkersResponseMarkerTopicPartition{{Partition: 0, ErrorCode: int16(47 * i)}}}}})
	}
	check("WriteTxnMarkers", wm, wmr, "pid=100 alpha[0] pid=200 alpha[0] errors: INVALID_PRODUCER_EPOCH pid=200 alpha[0]")
	ap4.Transactions = ap4.Transactions[:1]
	check("AddPartitionsToTxn v4, one", ap4, ap4r, "ttx1[0] txn=tx1 pid=10 epoch=1")

	// Offsets committed and fetched.
	oc2 := kmsg.NewPtrOffsetCommitRequest()
	oc2.Version, oc2.Group, oc2.Generation, oc2.MemberID = 8, "g", 7, "m-abc"
	oct := kmsg.NewOffsetCommitRequestTopic()
	oct.Topic = "t"
	for _, c := range [][2]int64{{0, 42}, {1, 7}} {
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Partition, p.Offset = int32(c[0]), c[1]
		oct.Partitions = append(oct.Partitions, p)
	}
	oc2.Topics = append(oc2.Topics, oct)
	check("OffsetCommit offsets", oc2, kmsg.NewPtrOffsetCommitResponse(), "t[0@42,1@7] group=g member=m-abc gen=7")
	of2 := kmsg.NewPtrOffsetFetchRequest()
	of2.Version, of2.Group = 7, "g"
	ofr := kmsg.NewPtrOffsetFetchResponse()
	ofr.Version = 7
	oft := kmsg.NewOffsetFetchResponseTopic()
	oft.Topic = "t"
	for _, c := range [][2]int64{{0, 42}, {1, -1}} {
		p := kmsg.NewOffsetFetchResponseTopicPartition()
		p.Partition, p.Offset = int32(c[0]), c[1]
		oft.Partitions = append(oft.Partitions, p)
	}
	ofr.Topics = append(ofr.Topics, oft)
	check("OffsetFetch offsets", of2, ofr, "t[0@42,1@none] group=g")
	// OffsetFetch v8+ batches groups (KIP-709): each group before its
	// topics, its own offsets and errors; a group asking for every topic
	// and answered none stays in the list.
	of8 := kmsg.NewPtrOffsetFetchRequest()
	of8.Version = 8
	of8r := kmsg.NewPtrOffsetFetchResponse()
	of8r.Version = 8
	for i, g := range []string{"g1", "g2", "g3"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		if i < 2 {
			rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: "alpha", Partitions: []int32{0}}}
			rsg := kmsg.NewOffsetFetchResponseGroup()
			rsg.Group = g
			p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
			p.Partition, p.Offset, p.ErrorCode = 0, int64(104-97*i), int16(i*25) // g2: UNKNOWN_MEMBER_ID
			rsg.Topics = []kmsg.OffsetFetchResponseGroupTopic{{Topic: "alpha", Partitions: []kmsg.OffsetFetchResponseGroupTopicPartition{p}}}
			of8r.Groups = append(of8r.Groups, rsg)
		}
		of8.Groups = append(of8.Groups, rg)
	}
	check("OffsetFetch v8 groups", of8, of8r, "group=g1 alpha[0@104] group=g2 alpha[0] group=g3 errors: UNKNOWN_MEMBER_ID group=g2 alpha[0]")

	// An offset that comes with the partition's error is no result: a
	// refused Produce wrote nothing at its BaseOffset (a broker sends -1,
	// kfake and others 0: pcaps/leader-move), a refused commit committed
	// nothing, a failed ListOffsets or OffsetFetch found nothing.
	pr := kmsg.NewPtrProduceRequest()
	pr.Version, pr.Acks = 9, -1
	prt := kmsg.NewProduceRequestTopic()
	prt.Topic = "t"
	prr := kmsg.NewPtrProduceResponse()
	prrt := kmsg.NewProduceResponseTopic()
	prrt.Topic = "t"
	for i, c := range [][2]int64{{0, 17}, {6, 0}} { // error code, base offset
		p := kmsg.NewProduceRequestTopicPartition()
		p.Partition = int32(i)
		prt.Partitions = append(prt.Partitions, p)
		rp := kmsg.NewProduceResponseTopicPartition()
		rp.Partition, rp.ErrorCode, rp.BaseOffset = int32(i), int16(c[0]), c[1]
		prrt.Partitions = append(prrt.Partitions, rp)
	}
	pr.Topics = append(pr.Topics, prt)
	prr.Topics = append(prr.Topics, prrt)
	check("Produce refused", pr, prr, "t[0@17,1] errors: NOT_LEADER_OR_FOLLOWER t[1]")
	for i := range rt.Partitions {
		rt.Partitions[i].ErrorCode = int16(6 * (i % 2))
	}
	lor.Topics = []kmsg.ListOffsetsResponseTopic{rt}
	check("ListOffsets refused", lo, lor, "orders[0 latest→42,1 earliest,2 max-timestamp→7,3 2023-11-14T22:13:20.000Z] errors: NOT_LEADER_OR_FOLLOWER×2 orders[1,3]")
	ocr := kmsg.NewPtrOffsetCommitResponse()
	ocrt := kmsg.NewOffsetCommitResponseTopic()
	ocrt.Topic = "t"
	ocrt.Partitions = []kmsg.OffsetCommitResponseTopicPartition{{Partition: 0}, {Partition: 1, ErrorCode: 22}}
	ocr.Topics = append(ocr.Topics, ocrt)
	check("OffsetCommit refused", oc2, ocr, "t[0@42,1] group=g member=m-abc gen=7 errors: ILLEGAL_GENERATION t[1]")
	oft.Partitions[0].ErrorCode = 3
	ofr.Topics = []kmsg.OffsetFetchResponseTopic{oft}
	check("OffsetFetch refused", of2, ofr, "t[0,1@none] group=g errors: UNKNOWN_TOPIC_OR_PARTITION t[0]")

	// Which topic an error belongs to.
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	for _, n := range []string{"small-msgs", "no-such-topic"} {
		x := kmsg.NewMetadataRequestTopic()
		x.Topic = kmsg.StringPtr(n)
		md.Topics = append(md.Topics, x)
	}
	mdr := kmsg.NewPtrMetadataResponse()
	mdr.Version = 12
	ok := kmsg.NewMetadataResponseTopic()
	ok.Topic = kmsg.StringPtr("small-msgs")
	ok.Partitions = []kmsg.MetadataResponseTopicPartition{{Partition: 0, Leader: 1}}
	missing := kmsg.NewMetadataResponseTopic()
	missing.Topic, missing.ErrorCode = kmsg.StringPtr("no-such-topic"), 3
	mdr.Topics = []kmsg.MetadataResponseTopic{ok, missing}
	check("Metadata error place", md, mdr, "small-msgs[0] no-such-topic errors: UNKNOWN_TOPIC_OR_PARTITION no-such-topic")

	// KIP-848: member and epoch; a leave is epoch -1.
	cgh := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	cgh.Version, cgh.Group, cgh.MemberID, cgh.MemberEpoch = 0, "g", "uCP2JFDQ-xyz", -1
	cghr := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	cghr.MemberID, cghr.MemberEpoch = kmsg.StringPtr("uCP2JFDQ-xyz"), -1
	check("ConsumerGroupHeartbeat leave", cgh, cghr, "group=g member=uCP2JFDQ… epoch=-1 leave")

	dgs := kmsg.NewPtrDeleteGroupsRequest()
	dgs.Version, dgs.Groups = 2, []string{"a", "b"}
	check("DeleteGroups", dgs, kmsg.NewPtrDeleteGroupsResponse(), "groups=a,b")

	lt2 := kmsg.NewPtrListTransactionsRequest()
	lt2.Version = 1
	ltr := kmsg.NewPtrListTransactionsResponse()
	ltr.Version = 1
	for _, id := range []string{"a", "b"} {
		x := kmsg.NewListTransactionsResponseTransactionState()
		x.TransactionalID, x.ProducerID = id, 1
		ltr.TransactionStates = append(ltr.TransactionStates, x)
	}
	check("ListTransactions", lt2, ltr, "txns: 2")
	dt := kmsg.NewPtrDescribeTransactionsRequest()
	dt.TransactionalIDs = []string{"a", "b"}
	check("DescribeTransactions", dt, kmsg.NewPtrDescribeTransactionsResponse(), "txns=a,b")

	iac := kmsg.NewPtrIncrementalAlterConfigsRequest()
	iac.Version = 1
	for _, r := range []struct {
		t kmsg.ConfigResourceType
		n string
	}{{kmsg.ConfigResourceTypeBroker, "1"}, {kmsg.ConfigResourceType(32), "g1"}} {
		x := kmsg.NewIncrementalAlterConfigsRequestResource()
		x.ResourceType, x.ResourceName = r.t, r.n
		iac.Resources = append(iac.Resources, x)
	}
	check("IncrementalAlterConfigs", iac, kmsg.NewPtrIncrementalAlterConfigsResponse(), "broker:1 group:g1")
}

// TestTreeEnums: integer fields with Kafka-defined meanings show their
// names beside the value.
func TestTreeEnums(t *testing.T) {
	tree := func(r kmsg.Request) string {
		t.Helper()
		return render(t, func(b *bytes.Buffer) error { return Tree(b, kreq(t, r).Tree, Options{}) })
	}
	fe := kmsg.NewPtrFetchRequest()
	fe.Version, fe.IsolationLevel = 11, 1
	lo := kmsg.NewPtrListOffsetsRequest()
	lo.Version = 7
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = "t"
	p := kmsg.NewListOffsetsRequestTopicPartition()
	p.Timestamp = -3
	lt.Partitions = append(lt.Partitions, p)
	lo.Topics = append(lo.Topics, lt)
	pr := kmsg.NewPtrProduceRequest()
	pr.Version, pr.Acks = 9, -1
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.Version, fc.CoordinatorType, fc.CoordinatorKey = 3, 1, "x"
	ca := kmsg.NewPtrCreateACLsRequest()
	ca.Version = 2
	cr := kmsg.NewCreateACLsRequestCreation()
	cr.ResourceType, cr.ResourceName, cr.ResourcePatternType = kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypePrefixed
	cr.Principal, cr.Host, cr.Operation, cr.PermissionType = "User:alice", "*", kmsg.ACLOperationWrite, kmsg.ACLPermissionTypeAllow
	ca.Creations = append(ca.Creations, cr)
	dc := kmsg.NewPtrDescribeConfigsRequest()
	dc.Version = 4
	rs := kmsg.NewDescribeConfigsRequestResource()
	rs.ResourceType, rs.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
	dc.Resources = append(dc.Resources, rs)

	for _, tc := range []struct {
		r    kmsg.Request
		want []string
	}{
		{fe, []string{"\n  IsolationLevel: 1 (read_committed)\n"}},
		{lo, []string{"\n          Timestamp: -3 (max_timestamp)\n", "\n  IsolationLevel: 0 (read_uncommitted)\n"}},
		{pr, []string{"\n  Acks: -1 (all)\n"}},
		{fc, []string{"\n  KeyType: 1 (transaction)\n"}},
		{ca, []string{"ResourceType: 2 (topic)\n", "ResourcePatternType: 4 (prefixed)\n", "Operation: 4 (write)\n",
			"PermissionType: 3 (allow)\n"}},
		{dc, []string{"ResourceType: 4 (broker)\n"}},
	} {
		got := tree(tc.r)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%T: missing %q in\n%s", tc.r, w, got)
			}
		}
	}
}

func TestEnumName(t *testing.T) {
	for _, tc := range []struct {
		msg, field string
		v          int64
		want       string
	}{
		{"FetchRequest", "IsolationLevel", 1, "read_committed"},
		{"ListOffsetsRequest", "Timestamp", -2, "earliest"},
		{"ListOffsetsResponse", "Timestamp", -1, ""}, // a time in responses
		{"DescribeConfigsResponse", "ConfigSource", 5, "default_config"},
		{"DescribeConfigsRequest", "ResourceType", 2, "topic"},
		{"DescribeAclsRequest", "ResourceTypeFilter", 5, "transactional_id"},
		{"DeleteAclsRequest", "PatternTypeFilter", 1, "any"},
		{"IncrementalAlterConfigsRequest", "ConfigOperation", 2, "append"},
		{"FindCoordinatorRequest", "KeyType", 2, "share"},
		{"ProduceRequest", "Acks", 7, ""},
		{"MetadataRequest", "IsolationLevel", 1, ""},
	} {
		if got := protocol.EnumName(tc.msg, tc.field, tc.v); got != tc.want {
			t.Errorf("EnumName(%s, %s, %d) = %q, want %q", tc.msg, tc.field, tc.v, got, tc.want)
		}
	}
}

func TestShortIDAndTimestamp(t *testing.T) {
	for id, want := range map[string]string{"": "", "abc": "abc", "capgen-kgo-group-03353442990c3b8ce0662786a1a505e0": "03353442…",
		"uCP2JFDQ3Qvs2idgEHGu_g==": "uCP2JFDQ…", "trailing-": "trailing…",
		// A KIP-848 Uuid with a dash in its base64 keeps its start.
		"u1kRNUezqK_FpFxppm-wgA==": "u1kRNUez…", "Yf59ukghc0bhRFzaTFH-Ow==": "Yf59ukgh…",
		// A Java coordinator's member ID: client ID, "-", a dashed UUID.
		"consumer-g-1-3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b": "0c1d2e3f…"} {
		if got := shortID(id); got != want {
			t.Errorf("shortID(%q) = %q, want %q", id, got, want)
		}
	}
	for ts, want := range map[int64]string{-1: "latest", -2: "earliest", -3: "max-timestamp", -9: "-9", 0: "1970-01-01T00:00:00.000Z"} {
		if got := ListOffsetsTimestamp(ts); got != want {
			t.Errorf("ListOffsetsTimestamp(%d) = %q, want %q", ts, got, want)
		}
	}
}

// TestLineUnits: one format for sizes, latencies and counts (render/units):
// sizes above 10 KiB in binary units, latencies from one second in
// seconds, counts with "×".
func TestLineUnits(t *testing.T) {
	e := produceExchange(6, 6)
	e.Request.Bytes = make([]byte, 1500145)
	e.Response.Time = e.Request.Time.Add(1250 * time.Millisecond)
	got := render(t, func(b *bytes.Buffer) error { return Line(b, e, Options{}) })
	want := "12:01:02.345 10.0.0.5:53412 → 10.0.0.9:9092 Produce v9 corr=7 client=app 1.25s 1.43MiB/"
	if !strings.HasPrefix(got, want) || !strings.Contains(got, " errors: NOT_LEADER_OR_FOLLOWER×2 orders[0,3]\n") {
		t.Errorf("got  %swant %s... errors: NOT_LEADER_OR_FOLLOWER×2", got, want)
	}
}
