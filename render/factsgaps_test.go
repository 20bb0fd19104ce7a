package render

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/internal/secretcorpus"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kexchange builds the paired exchange of req and resp (resp at req's
// version), both encoded by kmsg and decoded by kwire.
func kexchange(t *testing.T, req kmsg.Request, resp kmsg.Response) *dissect.Exchange {
	t.Helper()
	resp.SetVersion(req.GetVersion())
	return &dissect.Exchange{Conn: &reassembly.Conn{A: testClient, B: testBroker}, Client: testClient, Broker: testBroker,
		Kind: dissect.KindPaired, APIKey: req.Key(), APIVersion: req.GetVersion(), CorrelationID: 1, ClientID: "app",
		Request: kreq(t, req), Response: kresp(t, resp)}
}

// lineSubject returns the subject part of e's line: what follows its sizes.
func lineSubject(t *testing.T, e *dissect.Exchange) string {
	t.Helper()
	var b bytes.Buffer
	if err := Line(&b, e, Options{}); err != nil {
		t.Fatal(err)
	}
	line := strings.TrimSuffix(b.String(), "\n")
	// "... 1.25ms 60B/40B subject": the subject follows the sizes.
	i := strings.Index(line, "ms ")
	if i < 0 {
		t.Fatalf("no latency in %q", line)
	}
	rest := line[i+3:]
	if j := strings.IndexByte(rest, ' '); j >= 0 {
		return rest[j+1:]
	}
	return ""
}

// factsOf returns e's JSON line's facts, decoded into v.
func factsOf(t *testing.T, e *dissect.Exchange, v any) {
	t.Helper()
	var out bytes.Buffer
	if err := ExchangeJSONLine(&out, e, Options{}); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Facts json.RawMessage
	}
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatalf("%v: %s", err, out.Bytes())
	}
	if err := json.Unmarshal(d.Facts, v); err != nil {
		t.Fatalf("%v: %s", err, d.Facts)
	}
}

// DeleteRecords: the offset each partition is cut at (the request's
// Offset, -1 the high watermark) and the log start after (the response's
// LowWatermark), on the line and in JSON.
func TestDeleteRecordsDeletionOffset(t *testing.T) {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version = 2
	req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: "logs", Partitions: []kmsg.DeleteRecordsRequestTopicPartition{
		{Partition: 0, Offset: 100}, {Partition: 1, Offset: -1}, {Partition: 2, Offset: 7}}}}
	resp := kmsg.NewPtrDeleteRecordsResponse()
	resp.Topics = []kmsg.DeleteRecordsResponseTopic{{Topic: "logs", Partitions: []kmsg.DeleteRecordsResponseTopicPartition{
		{Partition: 0, LowWatermark: 100}, {Partition: 1, LowWatermark: 57}, {Partition: 2, LowWatermark: -1, ErrorCode: 1}}}}
	e := kexchange(t, req, resp)
	if got, want := lineSubject(t, e), "logs[0 before 100→100,1 before high-watermark→57,2 before 7] errors: OFFSET_OUT_OF_RANGE logs[2]"; got != want {
		t.Errorf("line\n got  %s\n want %s", got, want)
	}
	var fx struct {
		Topics []struct {
			Partitions []struct {
				Partition      int32
				DeletionOffset *int64
				LowWatermark   *int64
			}
		}
	}
	factsOf(t, e, &fx)
	var got []string
	for _, p := range fx.Topics[0].Partitions {
		got = append(got, itoa(int64(p.Partition))+":"+optI64(p.DeletionOffset)+"/"+optI64(p.LowWatermark))
	}
	if g, want := strings.Join(got, " "), "0:100/100 1:-1/57 2:7/-1"; g != want {
		t.Errorf("JSON deletionOffset/lowWatermark %s, want %s", g, want)
	}
}

func optI64(p *int64) string {
	if p == nil {
		return "null"
	}
	return itoa(*p)
}

// An OffsetCommit v9+ of a group no exchange before showed the protocol
// of says gen/epoch=: a classic generation or a KIP-848 member epoch;
// before v9 it is a generation. JSON keeps the value as sent in
// generationIdOrMemberEpoch and says which it is when it is known.
func TestOffsetCommitGenOrEpoch(t *testing.T) {
	for _, c := range []struct {
		ver  int16
		line string
		gen  string
	}{
		{8, "t[0@5] group=g member=m gen=4", "4 null 4"},
		{9, "t[0@5] group=g member=m gen/epoch=4", "null null 4"},
	} {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.Generation, oc.MemberID = c.ver, "g", 4, "m"
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5}}}}
		resp := kmsg.NewPtrOffsetCommitResponse()
		resp.Topics = []kmsg.OffsetCommitResponseTopic{{Topic: "t", Partitions: []kmsg.OffsetCommitResponseTopicPartition{{Partition: 0}}}}
		e := kexchange(t, oc, resp)
		if got := lineSubject(t, e); got != c.line {
			t.Errorf("v%d: line %q, want %q", c.ver, got, c.line)
		}
		var fx struct {
			Group struct {
				GenerationID, MemberEpoch, GenerationIDOrMemberEpoch *int64
			}
		}
		factsOf(t, e, &fx)
		g := &fx.Group
		if got := optI64(g.GenerationID) + " " + optI64(g.MemberEpoch) + " " + optI64(g.GenerationIDOrMemberEpoch); got != c.gen {
			t.Errorf("v%d: JSON generationId memberEpoch generationIdOrMemberEpoch = %s, want %s", c.ver, got, c.gen)
		}
	}
}

// A ConsumerGroupDescribe (KIP-848) lists its groups' members: the line
// counts them per group ("-" for a group refused) with the group's epoch
// when it describes one; JSON facts.described has each member with its
// epoch, assignment and target.
func TestConsumerGroupDescribeMembers(t *testing.T) {
	tid := [16]byte{9: 7}
	m1 := kmsg.NewConsumerGroupDescribeResponseGroupMember()
	m1.MemberID, m1.MemberEpoch = "m1", 7
	m1.Assignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{TopicID: tid, Topic: "t", Partitions: []int32{0, 1}}}
	m1.TargetAssignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{TopicID: tid, Topic: "t", Partitions: []int32{0, 1, 2}}}
	m2 := kmsg.NewConsumerGroupDescribeResponseGroupMember()
	m2.MemberID, m2.MemberEpoch = "m2", 6
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group, g.Epoch, g.AssignmentEpoch, g.Members = "g", 7, 6, []kmsg.ConsumerGroupDescribeResponseGroupMember{m1, m2}
	gone := kmsg.NewConsumerGroupDescribeResponseGroup()
	gone.Group, gone.ErrorCode = "gone", 69

	for _, c := range []struct {
		groups []kmsg.ConsumerGroupDescribeResponseGroup
		line   string
	}{
		{[]kmsg.ConsumerGroupDescribeResponseGroup{g}, "groups=g members: 2 group-epoch=7"},
		{[]kmsg.ConsumerGroupDescribeResponseGroup{g, gone}, "groups=g,gone members: 2,- errors: GROUP_ID_NOT_FOUND group=gone"},
	} {
		req := kmsg.NewPtrConsumerGroupDescribeRequest()
		resp := kmsg.NewPtrConsumerGroupDescribeResponse()
		for _, x := range c.groups {
			req.Groups = append(req.Groups, x.Group)
		}
		resp.Groups = c.groups
		e := kexchange(t, req, resp)
		if got := lineSubject(t, e); got != c.line {
			t.Errorf("line %q, want %q", got, c.line)
		}
		var fx struct {
			Described []struct {
				GroupID                     string
				Error                       *string
				GroupEpoch, AssignmentEpoch *int64
				Members                     []struct {
					MemberID         string
					MemberEpoch      *int64
					Assignment       []struct{ Partitions []int32 }
					TargetAssignment []struct{ Partitions []int32 }
				}
			}
		}
		factsOf(t, e, &fx)
		var got []string
		for _, d := range fx.Described {
			s := d.GroupID + " " + optI64(d.GroupEpoch) + "/" + optI64(d.AssignmentEpoch)
			if d.Error != nil {
				s += " " + *d.Error
			}
			for _, m := range d.Members {
				s += " " + m.MemberID + "@" + optI64(m.MemberEpoch)
				for _, a := range m.Assignment {
					s += " has" + fmtInts(a.Partitions)
				}
				for _, a := range m.TargetAssignment {
					s += " to" + fmtInts(a.Partitions)
				}
			}
			got = append(got, s)
		}
		want := "g 7/6 m1@7 has0,1 to0,1,2 m2@6"
		if len(c.groups) == 2 {
			want += "|gone 0/0 GROUP_ID_NOT_FOUND"
		}
		if g := strings.Join(got, "|"); g != want {
			t.Errorf("JSON described %s, want %s", g, want)
		}
	}
}

func fmtInts(xs []int32) string {
	var s []string
	for _, x := range xs {
		s = append(s, itoa(int64(x)))
	}
	return strings.Join(s, ",")
}

// DescribeProducers (KIP-664): each partition's active producers are
// counted on the line (none for a partition refused) and listed in JSON.
func TestDescribeProducersLine(t *testing.T) {
	req := kmsg.NewPtrDescribeProducersRequest()
	req.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "t", Partitions: []int32{0, 1, 2}}}
	resp := kmsg.NewPtrDescribeProducersResponse()
	resp.Topics = []kmsg.DescribeProducersResponseTopic{{Topic: "t", Partitions: []kmsg.DescribeProducersResponseTopicPartition{
		{Partition: 0, ActiveProducers: []kmsg.DescribeProducersResponseTopicPartitionActiveProducer{
			{ProducerID: 100, ProducerEpoch: 3, LastSequence: 41, LastTimestamp: 1700000000123, CoordinatorEpoch: 2, CurrentTxnStartOffset: 500},
			{ProducerID: 200, ProducerEpoch: 0, LastSequence: 9, LastTimestamp: 1700000000456, CoordinatorEpoch: -1, CurrentTxnStartOffset: -1}}},
		{Partition: 1},
		{Partition: 2, ErrorCode: 6}}}}
	e := kexchange(t, req, resp)
	if got, want := lineSubject(t, e), "t[0 producers=2,1 producers=0,2] errors: NOT_LEADER_OR_FOLLOWER t[2]"; got != want {
		t.Errorf("line\n got  %s\n want %s", got, want)
	}
	var fx struct {
		Topics []struct {
			Partitions []struct {
				ActiveProducers *int64
				Producers       []map[string]int64
			}
		}
	}
	factsOf(t, e, &fx)
	ps := fx.Topics[0].Partitions
	if len(ps) != 3 || optI64(ps[0].ActiveProducers) != "2" || len(ps[0].Producers) != 2 || optI64(ps[1].ActiveProducers) != "0" {
		t.Fatalf("partitions %+v", ps)
	}
	p := ps[0].Producers[0]
	if p["producerId"] != 100 || p["producerEpoch"] != 3 || p["lastSequence"] != 41 || p["lastTimestamp"] != 1700000000123 ||
		p["coordinatorEpoch"] != 2 || p["currentTxnStartOffset"] != 500 || ps[0].Producers[1]["currentTxnStartOffset"] != -1 {
		t.Errorf("producers %v", ps[0].Producers)
	}
}

// rawExchange builds a paired exchange of a flexible API version from
// its request and response bodies (request header v2, response header
// v1).
func rawExchange(t *testing.T, key, ver int16, req, resp []byte) *dissect.Exchange {
	t.Helper()
	rb := binary.BigEndian.AppendUint32(nil, 0)
	rb = binary.BigEndian.AppendUint16(rb, uint16(key))
	rb = binary.BigEndian.AppendUint16(rb, uint16(ver))
	rb = binary.BigEndian.AppendUint32(rb, 1)
	rb = binary.BigEndian.AppendUint16(rb, 3)
	rb = append(append(rb, "app"...), 0)
	rb = append(rb, req...)
	binary.BigEndian.PutUint32(rb, uint32(len(rb)-4))
	rt := kdec.DecodeRequest(rb)
	pb := binary.BigEndian.AppendUint32(nil, 0)
	pb = binary.BigEndian.AppendUint32(pb, 1)
	pb = append(append(pb, 0), resp...)
	binary.BigEndian.PutUint32(pb, uint32(len(pb)-4))
	pt := kdec.DecodeResponse(pb, key, ver)
	if rt.Err != nil || pt.Err != nil {
		t.Fatalf("decoding key %d v%d: %v, %v", key, ver, rt.Err, pt.Err)
	}
	at := testT0.Add(1250 * time.Microsecond)
	return &dissect.Exchange{Conn: &reassembly.Conn{A: testClient, B: testBroker}, Client: testClient, Broker: testBroker,
		Kind: dissect.KindPaired, APIKey: key, APIVersion: ver, CorrelationID: 1, ClientID: "app",
		Request:  &dissect.Frame{Bytes: rb, Tree: rt, Time: testT0, End: testT0},
		Response: &dissect.Frame{Bytes: pb, Tree: pt, Time: at, End: at}}
}

// encodeBody encodes message key at version ver from kwire's schemas
// with the top-level values vals.
func encodeBody(t *testing.T, key int16, response bool, ver int16, vals map[string]any) []byte {
	t.Helper()
	m := protocol.Lookup(key, response, ver)
	if m == nil {
		t.Fatalf("no schema for key %d v%d", key, ver)
	}
	return secretcorpus.Encode(m, ver, func(path string, f *protocol.Field) (any, bool) {
		v, ok := vals[path]
		return v, ok
	})
}

// InitProducerId v6 (KIP-939): the line names a two-phase-commit
// producer keeping its prepared transaction and that transaction's ID
// and epoch, apart from the new ones; JSON has them under Kafka's names.
func TestInitProducerIdV6(t *testing.T) {
	e := rawExchange(t, protocol.KeyInitProducerId, 6,
		encodeBody(t, protocol.KeyInitProducerId, false, 6, map[string]any{"TransactionalId": "tx", "TransactionTimeoutMs": int64(60000),
			"ProducerId": int64(-1), "ProducerEpoch": int64(-1), "Enable2Pc": true, "KeepPreparedTxn": true}),
		encodeBody(t, protocol.KeyInitProducerId, true, 6, map[string]any{"ProducerId": int64(100), "ProducerEpoch": int64(8),
			"OngoingTxnProducerId": int64(77), "OngoingTxnProducerEpoch": int64(7)}))
	if got, want := lineSubject(t, e), "txn=tx pid=100 epoch=8 2pc keep-prepared ongoing-pid=77 ongoing-epoch=7"; got != want {
		t.Errorf("line\n got  %s\n want %s", got, want)
	}
	var fx struct {
		Producer struct {
			NewProducerID, NewProducerEpoch               *int64
			Enable2Pc, KeepPreparedTxn                    bool
			OngoingTxnProducerID, OngoingTxnProducerEpoch *int64
		}
	}
	factsOf(t, e, &fx)
	p := &fx.Producer
	if got := optI64(p.NewProducerID) + "/" + optI64(p.NewProducerEpoch) + " " + optI64(p.OngoingTxnProducerID) + "/" +
		optI64(p.OngoingTxnProducerEpoch); got != "100/8 77/7" || !p.Enable2Pc || !p.KeepPreparedTxn {
		t.Errorf("JSON producer %s %+v", got, *p)
	}
}
