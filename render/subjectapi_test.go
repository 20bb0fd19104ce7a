package render

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
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
	check("DescribeConfigs", dc, kmsg.NewPtrDescribeConfigsResponse(), "orders")
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
	check("OffsetCommit", oc, kmsg.NewPtrOffsetCommitResponse(), "group=g member=abc gen=7")

	et := kmsg.NewPtrEndTxnRequest()
	et.Version, et.TransactionalID, et.ProducerID, et.Commit = 3, "pay-txn", 5, false
	check("EndTxn abort", et, kmsg.NewPtrEndTxnResponse(), "txn=pay-txn pid=5 ABORT")
	et.Commit = true
	check("EndTxn commit", et, kmsg.NewPtrEndTxnResponse(), "txn=pay-txn pid=5 COMMIT")

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
		"uCP2JFDQ3Qvs2idgEHGu_g==": "uCP2JFDQ…", "trailing-": "trailing…"} {
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
	if !strings.HasPrefix(got, want) || !strings.Contains(got, " errors: NOT_LEADER_OR_FOLLOWER×2\n") {
		t.Errorf("got  %swant %s... errors: NOT_LEADER_OR_FOLLOWER×2", got, want)
	}
}

// TestSubjectIndexMany: past indexFrom topics (or partitions of one) the
// subject looks them up by map and still merges repeats, in first order.
func TestSubjectIndexMany(t *testing.T) {
	var s subject
	for i := range 200 {
		tp := s.topic(strings.Repeat("x", i%100+1))
		tp.part(int64(i % 3))
		for p := range 50 {
			tp.part(int64(p))
		}
	}
	if len(s.topics) != 100 || s.topics[0].name != "x" || s.topics[99].name != strings.Repeat("x", 100) {
		t.Fatalf("%d topics, first %q", len(s.topics), s.topics[0].name)
	}
	for i, tp := range s.topics {
		// The first partition added comes first: i%3, then 0 to 49 without it.
		seen := map[int64]bool{}
		for _, p := range tp.parts {
			seen[p.index] = true
		}
		if len(tp.parts) != 50 || len(seen) != 50 || tp.parts[0].index != int64(i%3) {
			t.Fatalf("topic %q: %d partitions, %d distinct, first %d", tp.name, len(tp.parts), len(seen), tp.parts[0].index)
		}
	}
}
