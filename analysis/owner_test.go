package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// AddPartitionsToTxn v4+ batches transactions (KIP-890): the error of one
// entry is that transaction's alone, and a partition refused is not
// listed as added. v3's single transaction likewise.
func TestTxnsBatchedAddPartitions(t *testing.T) {
	s := newSynth(t, Options{Transactions: true})
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	for i, id := range []string{"tx-a", "tx-b"} {
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch = id, int64(1000+i), 3
		tx.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "alpha", Partitions: []int32{0, 1}}}
		req.Transactions = append(req.Transactions, tx)
		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = id
		rtt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
		rtt.Topic = "alpha"
		for p := range int32(2) {
			rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
			rp.Partition = p
			if i == 1 && p == 1 {
				rp.ErrorCode = 48 // INVALID_TXN_STATE
			}
			rtt.Partitions = append(rtt.Partitions, rp)
		}
		rt.Topics = []kmsg.AddPartitionsToTxnResponseTransactionTopic{rtt}
		resp.Transactions = append(resp.Transactions, rt)
	}
	s.ex("broker", 0, time.Millisecond, req, resp)

	v3 := kmsg.NewPtrAddPartitionsToTxnRequest()
	v3.Version, v3.TransactionalID, v3.ProducerID, v3.ProducerEpoch = 3, "tx-c", 3000, 1
	v3.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "gamma", Partitions: []int32{0}}}
	v3r := kmsg.NewPtrAddPartitionsToTxnResponse()
	v3r.Topics = []kmsg.AddPartitionsToTxnResponseTopic{{Topic: "gamma", Partitions: []kmsg.AddPartitionsToTxnResponseTopicPartition{{Partition: 0, ErrorCode: 48}}}}
	s.ex("app", time.Second, time.Millisecond, v3, v3r)

	got := map[string]string{}
	for _, p := range s.a.Transactions().Producers {
		if p.TransactionalID == nil || len(p.Transactions) != 1 {
			t.Fatalf("%+v", p)
		}
		x := p.Transactions[0]
		e := "-"
		if x.AddError != nil {
			e = x.AddError.API + " " + x.AddError.Error
		}
		got[*p.TransactionalID] = fmt.Sprintf("added %v errors %v add error %s", x.Added, len(p.Errors), e)
	}
	want := map[string]string{
		"tx-a": "added [{alpha [0 1]}] errors 0 add error -",
		"tx-b": "added [{alpha [0]}] errors 1 add error AddPartitionsToTxn INVALID_TXN_STATE",
		"tx-c": "added [] errors 1 add error AddPartitionsToTxn INVALID_TXN_STATE",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// OffsetFetch v8+ batches groups (KIP-709): each group's committed
// offsets are its own, however many groups ask for the same partition.
func TestGroupsBatchedOffsetFetch(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	for _, g := range []string{"g1", "g2"} {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Version, hb.Group, hb.Generation, hb.MemberID = 4, g, 1, "m-"+g
		s.ex("c", 0, time.Millisecond, hb, kmsg.NewPtrHeartbeatResponse())
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version = 8
	resp := kmsg.NewPtrOffsetFetchResponse()
	for i, g := range []string{"g1", "g2"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{{Topic: "alpha", Partitions: []int32{0}}}
		req.Groups = append(req.Groups, rg)
		sg := kmsg.NewOffsetFetchResponseGroup()
		sg.Group = g
		p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		p.Partition, p.Offset = 0, int64(104-97*i)
		sg.Topics = []kmsg.OffsetFetchResponseGroupTopic{{Topic: "alpha", Partitions: []kmsg.OffsetFetchResponseGroupTopicPartition{p}}}
		resp.Groups = append(resp.Groups, sg)
	}
	s.ex("c", time.Second, time.Millisecond, req, resp)
	got := map[string]string{}
	for _, g := range s.a.Groups().Groups {
		for _, c := range g.Commits {
			got[g.GroupID] += fmt.Sprintf("%s[%d]@%d fetched=%v ", c.Topic, c.Partition, c.Offset, c.Fetched)
		}
	}
	if want := map[string]string{"g1": "alpha[0]@104 fetched=true ", "g2": "alpha[0]@7 fetched=true "}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// A config change that only validated, or that the broker refused, did
// not change max.message.bytes: batches past it raise nothing.
func TestBatchTooLargeUnchangedConfigs(t *testing.T) {
	s := newSynth(t, Options{Findings: true})
	v := "1000"
	ac := kmsg.NewPtrAlterConfigsRequest()
	ac.Version, ac.ValidateOnly = 2, true
	ac.Resources = []kmsg.AlterConfigsRequestResource{{ResourceType: 2, ResourceName: "alpha",
		Configs: []kmsg.AlterConfigsRequestResourceConfig{{Name: "max.message.bytes", Value: &v}}}}
	s.ex("admin", 0, time.Millisecond, ac, kmsg.NewPtrAlterConfigsResponse())
	ic := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ic.Version = 1
	ic.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: 2, ResourceName: "beta",
		Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "max.message.bytes", Value: &v}}}}
	icr := kmsg.NewPtrIncrementalAlterConfigsResponse()
	icr.Resources = []kmsg.IncrementalAlterConfigsResponseResource{{ResourceType: 2, ResourceName: "beta", ErrorCode: 44}} // POLICY_VIOLATION
	s.ex("admin", time.Millisecond, time.Millisecond, ic, icr)
	ok := kmsg.NewPtrIncrementalAlterConfigsRequest()
	ok.Version = 1
	ok.Resources = []kmsg.IncrementalAlterConfigsRequestResource{{ResourceType: 2, ResourceName: "gamma",
		Configs: []kmsg.IncrementalAlterConfigsRequestResourceConfig{{Name: "max.message.bytes", Value: &v}}}}
	okr := kmsg.NewPtrIncrementalAlterConfigsResponse()
	okr.Resources = []kmsg.IncrementalAlterConfigsResponseResource{{ResourceType: 2, ResourceName: "gamma"}}
	s.ex("admin", 2*time.Millisecond, time.Millisecond, ok, okr)
	for i, topic := range []string{"alpha", "beta", "gamma"} {
		s.ex("p", time.Second+time.Duration(i)*time.Millisecond, time.Millisecond, produce(topic, 30000, batch(5000, -1, -1, 1)), produced(topic, 0))
	}
	var got []string
	for _, f := range s.findings(RuleBatchTooLarge) {
		got = append(got, *f.Topic)
	}
	if fmt.Sprint(got) != "[gamma]" {
		t.Errorf("batch-too-large on %v, want gamma only (alpha only validated, beta refused)", got)
	}
}

// EndTxn answered CONCURRENT_TRANSACTIONS (or not answered) is retried:
// one transaction, committed by the retry.
func TestTxnsEndTxnRetried(t *testing.T) {
	for _, first := range []kmsg.Response{nil, &kmsg.EndTxnResponse{ErrorCode: 51}} {
		s := newSynth(t, Options{Transactions: true})
		ip := kmsg.NewPtrInitProducerIDRequest()
		ip.Version, ip.TransactionalID = 4, kmsg.StringPtr("tx-r")
		ipr := kmsg.NewPtrInitProducerIDResponse()
		ipr.ProducerID, ipr.ProducerEpoch = 7000, 0
		s.ex("app", 0, time.Millisecond, ip, ipr)
		ap := kmsg.NewPtrAddPartitionsToTxnRequest()
		ap.Version, ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = 3, "tx-r", 7000, 0
		ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "alpha", Partitions: []int32{0}}}
		apr := kmsg.NewPtrAddPartitionsToTxnResponse()
		apr.Topics = []kmsg.AddPartitionsToTxnResponseTopic{{Topic: "alpha", Partitions: []kmsg.AddPartitionsToTxnResponseTopicPartition{{Partition: 0}}}}
		s.ex("app", time.Millisecond, time.Millisecond, ap, apr)
		for i, resp := range []kmsg.Response{first, kmsg.NewPtrEndTxnResponse()} {
			et := kmsg.NewPtrEndTxnRequest()
			et.Version, et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = 3, "tx-r", 7000, 0, true
			s.ex("app", time.Duration(10+i)*time.Millisecond, time.Millisecond, et, resp)
		}
		r := s.a.Transactions()
		if len(r.Producers) != 1 || len(r.Producers[0].Transactions) != 1 || r.Producers[0].Transactions[0].Outcome != "commit" {
			t.Errorf("first EndTxn %T: %+v", first, r.Producers)
		}
	}
}

// A broker's AddPartitionsToTxn v4 with VerifyOnly adds nothing and starts
// no transaction; a whole-request error is every transaction's and adds
// nothing either.
func TestTxnsVerifyOnlyAndWholeError(t *testing.T) {
	s := newSynth(t, Options{Transactions: true})
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.Version = 4
	tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
	tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = "tx-v", 500, 0, true
	tx.Topics = []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "alpha", Partitions: []int32{0}}}
	req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{tx}
	s.ex("broker-3", 0, time.Millisecond, req, kmsg.NewPtrAddPartitionsToTxnResponse())
	if r := s.a.Transactions(); len(r.Producers) != 0 {
		t.Errorf("a verification made %+v", r.Producers)
	}
	req.Transactions[0].VerifyOnly = false
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.ErrorCode = 31 // CLUSTER_AUTHORIZATION_FAILED
	s.ex("broker-3", time.Second, time.Millisecond, req, resp)
	r := s.a.Transactions()
	if len(r.Producers) != 1 || len(r.Producers[0].Transactions) != 1 {
		t.Fatalf("%+v", r.Producers)
	}
	if x := r.Producers[0].Transactions[0]; len(x.Added) != 0 || x.AddError == nil || x.AddError.Error != "CLUSTER_AUTHORIZATION_FAILED" {
		t.Errorf("added %v, error %+v", x.Added, x.AddError)
	}
}

// The COMMITS table holds what the group committed: not an OffsetCommit
// unanswered or refused, not a TxnOffsetCommit whose transaction aborted;
// a TxnOffsetCommit's offset is the group's once its transaction commits.
func TestGroupsCommittedOnly(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	commit := func(at time.Duration, topic string, off int64, resp kmsg.Response) {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.Generation, oc.MemberID = 8, "g1", 1, "m1"
		oc.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: off}}}}
		s.ex("c", at, time.Millisecond, oc, resp)
	}
	ok := func(topic string, code int16) kmsg.Response {
		r := kmsg.NewPtrOffsetCommitResponse()
		r.Topics = []kmsg.OffsetCommitResponseTopic{{Topic: topic, Partitions: []kmsg.OffsetCommitResponseTopicPartition{{Partition: 0, ErrorCode: code}}}}
		return r
	}
	commit(0, "a", 10, ok("a", 0))
	commit(time.Millisecond, "a", 99, nil)           // unanswered
	commit(2*time.Millisecond, "a", 22, ok("a", 22)) // ILLEGAL_GENERATION
	txnCommit := func(at time.Duration, txn, topic string, off int64, commit bool) {
		tc := kmsg.NewPtrTxnOffsetCommitRequest()
		tc.Version, tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch = 3, txn, "g1", 7, 0
		tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: topic, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: off}}}}
		tr := kmsg.NewPtrTxnOffsetCommitResponse()
		tr.Topics = []kmsg.TxnOffsetCommitResponseTopic{{Topic: topic, Partitions: []kmsg.TxnOffsetCommitResponseTopicPartition{{Partition: 0}}}}
		s.ex("p", at, time.Millisecond, tc, tr)
		et := kmsg.NewPtrEndTxnRequest()
		et.Version, et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = 3, txn, 7, 0, commit
		s.ex("p", at+time.Millisecond, time.Millisecond, et, kmsg.NewPtrEndTxnResponse())
	}
	txnCommit(10*time.Millisecond, "tx", "b", 500, false) // aborted
	txnCommit(20*time.Millisecond, "tx", "c", 700, true)  // committed
	// A COMMIT refused: the producer was fenced, its transaction aborts.
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.Version, tc.TransactionalID, tc.Group, tc.ProducerID = 3, "tx2", "g1", 8
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "d", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 900}}}}
	tcr := kmsg.NewPtrTxnOffsetCommitResponse()
	tcr.Topics = []kmsg.TxnOffsetCommitResponseTopic{{Topic: "d", Partitions: []kmsg.TxnOffsetCommitResponseTopicPartition{{Partition: 0}}}}
	s.ex("p", 30*time.Millisecond, time.Millisecond, tc, tcr)
	et := kmsg.NewPtrEndTxnRequest()
	et.Version, et.TransactionalID, et.ProducerID, et.Commit = 3, "tx2", 8, true
	s.ex("p", 31*time.Millisecond, time.Millisecond, et, &kmsg.EndTxnResponse{ErrorCode: 90}) // PRODUCER_FENCED
	got := map[string]string{}
	for _, g := range s.a.Groups().Groups {
		for _, c := range g.Commits {
			got[c.Topic] = fmt.Sprintf("%d commits=%d errors=%d txn=%v", c.Offset, c.Commits, c.Errors, c.Transactional)
		}
	}
	want := map[string]string{"a": "10 commits=1 errors=1 txn=false", "b": "-1 commits=0 errors=0 txn=false", "c": "700 commits=1 errors=0 txn=true",
		"d": "-1 commits=0 errors=0 txn=false"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// LeaveGroup v3+ batches members: an admin removing static members by
// instance ID (KIP-345). Each member's answer is its own: the one removed
// leaves once, without the error of the one the broker did not know, and
// no member is made up for the refused entry.
func TestGroupsLeaveBatch(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	for _, m := range []struct{ id, inst string }{{"m1", "i-1"}, {"m2", "i-2"}} {
		hb := kmsg.NewPtrHeartbeatRequest()
		hb.Version, hb.Group, hb.Generation, hb.MemberID, hb.InstanceID = 4, "g", 1, m.id, kmsg.StringPtr(m.inst)
		s.ex("c-"+m.id, 0, time.Millisecond, hb, kmsg.NewPtrHeartbeatResponse())
	}
	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Version, lg.Group = 4, "g"
	lg.Members = []kmsg.LeaveGroupRequestMember{{InstanceID: kmsg.StringPtr("i-9")}, {InstanceID: kmsg.StringPtr("i-2")}}
	lgr := kmsg.NewPtrLeaveGroupResponse()
	lgr.Members = []kmsg.LeaveGroupResponseMember{{InstanceID: kmsg.StringPtr("i-9"), ErrorCode: 25}, {MemberID: "m2", InstanceID: kmsg.StringPtr("i-2")}}
	s.ex("admin", time.Second, time.Millisecond, lg, lgr)
	r := s.a.Groups()
	if len(r.Groups) != 1 {
		t.Fatalf("%+v", r.Groups)
	}
	g := r.Groups[0]
	var members, leaves []string
	for _, m := range g.Members {
		end := "-"
		if m.End != nil {
			end = *m.End
		}
		members = append(members, m.MemberID+" "+end)
	}
	for _, ev := range g.Timeline {
		if ev.Kind == "leave" {
			id := "-"
			if ev.MemberID != nil {
				id = *ev.MemberID
			}
			leaves = append(leaves, id+" "+ev.Detail)
		}
	}
	if fmt.Sprint(members) != "[m1 - m2 left]" || len(leaves) != 1 || strings.Contains(leaves[0], "UNKNOWN_MEMBER_ID") {
		t.Errorf("members %q\nleaves %q", members, leaves)
	}
}

// InitProducerId put off twice (CONCURRENT_TRANSACTIONS) then answered:
// one instance of the producer, not three.
func TestTxnsInitRetried(t *testing.T) {
	s := newSynth(t, Options{Transactions: true})
	for i, code := range []int16{51, 51, 0} {
		ip := kmsg.NewPtrInitProducerIDRequest()
		ip.Version, ip.TransactionalID = 4, kmsg.StringPtr("tx-i")
		ipr := kmsg.NewPtrInitProducerIDResponse()
		ipr.ErrorCode, ipr.ProducerID, ipr.ProducerEpoch = code, -1, -1
		if code == 0 {
			ipr.ProducerID, ipr.ProducerEpoch = 600, 3
		}
		s.ex("app", time.Duration(i)*time.Millisecond, time.Millisecond, ip, ipr)
	}
	r := s.a.Transactions()
	if len(r.Producers) != 1 || len(r.Producers[0].Instances) != 1 || r.Producers[0].Instances[0].ProducerID != 600 {
		t.Errorf("%+v", r.Producers)
	}
	// NOT_COORDINATOR, and the retry goes to the new coordinator: another
	// connection, the same client.
	s = newSynth(t, Options{Transactions: true})
	for i, code := range []int16{16, 0} {
		ip := kmsg.NewPtrInitProducerIDRequest()
		ip.Version, ip.TransactionalID = 4, kmsg.StringPtr("tx-j")
		ipr := kmsg.NewPtrInitProducerIDResponse()
		ipr.ErrorCode, ipr.ProducerID, ipr.ProducerEpoch = code, -1, -1
		if code == 0 {
			ipr.ProducerID, ipr.ProducerEpoch = 700, 0
		}
		s.ex("app", time.Duration(i)*time.Millisecond, time.Millisecond, ip, ipr)
		s.newConn()
	}
	if r := s.a.Transactions(); len(r.Producers) != 1 || len(r.Producers[0].Instances) != 1 {
		t.Errorf("retried on a new connection: %+v", r.Producers)
	}
}

// A TxnOffsetCommit names the member a transactional producer commits for
// (KIP-447): the member's client is the one of its own requests, not the
// producer's, whichever comes first.
func TestGroupsTxnCommitNotMember(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	tc := kmsg.NewPtrTxnOffsetCommitRequest()
	tc.Version, tc.TransactionalID, tc.Group, tc.ProducerID, tc.MemberID, tc.Generation = 3, "tx", "g1", 7, "m1", 1
	tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "a", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 5}}}}
	s.ex("producer", 0, time.Millisecond, tc, kmsg.NewPtrTxnOffsetCommitResponse())
	s.newConn()
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.Generation, hb.MemberID = 4, "g1", 1, "m1"
	s.ex("consumer", time.Second, time.Millisecond, hb, kmsg.NewPtrHeartbeatResponse())
	r := s.a.Groups()
	if len(r.Groups) != 1 || len(r.Groups[0].Members) != 1 {
		t.Fatalf("%+v", r.Groups)
	}
	if m := r.Groups[0].Members[0]; m.ClientID == nil || *m.ClientID != "consumer" {
		t.Errorf("member m1's client ID %v, want consumer", m.ClientID)
	}
}

// A LeaveGroup left unanswered, after which the member heartbeats on
// successfully: it did not leave.
func TestGroupsLeaveNotTaken(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	hb := func(at time.Duration) {
		r := kmsg.NewPtrHeartbeatRequest()
		r.Version, r.Group, r.Generation, r.MemberID = 4, "g", 1, "m1"
		s.ex("c", at, time.Millisecond, r, kmsg.NewPtrHeartbeatResponse())
	}
	hb(0)
	lg := kmsg.NewPtrLeaveGroupRequest()
	lg.Version, lg.Group = 4, "g"
	lg.Members = []kmsg.LeaveGroupRequestMember{{MemberID: "m1"}}
	s.ex("c", time.Second, time.Millisecond, lg, nil)
	hb(2 * time.Second)
	m := s.a.Groups().Groups[0].Members[0]
	if m.End != nil && *m.End == "left" {
		t.Errorf("m1 left, though it heartbeat on after an unanswered LeaveGroup: %+v", m)
	}
}

// In a cut file (kwire read -w), what the writer left out is no finding:
// a producer's sequences skipping the batches of Produce requests left
// out, a connection whose ApiVersions was left out.
func TestCutFileFindings(t *testing.T) {
	s := newSynth(t, Options{Findings: true, Transactions: true})
	conn := s.conn
	s.a.Event(&dissect.Event{Kind: dissect.EventCut, Conn: conn, Time: s0, Bytes: 120}) // its ApiVersions left out
	s.ex("p", 0, time.Millisecond, produce("t", 30000, batch(10, 9, 0, 1)), produced("t", 0))
	s.a.Event(&dissect.Event{Kind: dissect.EventCut, Conn: conn, Time: s0.Add(time.Millisecond), Bytes: 400})
	s.ex("p", time.Second, time.Millisecond, produce("t", 30000, batch(10, 9, 5, 1)), produced("t", 0)) // 1-4 left out
	s.close(2*time.Second, false)
	if f := s.findings(RuleSequence); len(f) != 0 {
		t.Errorf("sequence findings in a cut file: %+v", f)
	}
	if f := s.findings(RuleSkippedAPIVer); len(f) != 0 {
		t.Errorf("skipped-apiversions in a cut file: %+v", f)
	}
	// A gap between two Produce on one connection with no cut between
	// them is real, cut file or not.
	s.newConn()
	s.ex("p", 3*time.Second, time.Millisecond, produce("u", 30000, batch(10, 11, 0, 1)), produced("u", 0))
	s.ex("p", 4*time.Second, time.Millisecond, produce("u", 30000, batch(10, 11, 3, 1)), produced("u", 0)) // 1-2 missing
	if f := s.findings(RuleSequence); len(f) != 1 || *f[0].Topic != "u" {
		t.Errorf("sequence findings %+v, want one on u", f)
	}
}

// A connection's first request is the first on the wire (by packet
// number), not the earliest stamped: a Metadata request stamped before
// the ApiVersions sent ahead of it (a clock step, interfaces merged
// unsorted) read as the connection's first, and skipped-apiversions
// fired on a client that had asked.
func TestFirstRequestByPacketOrder(t *testing.T) {
	s := newSynth(t, Options{Findings: true})
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 3
	avr := kmsg.NewPtrApiVersionsResponse()
	avr.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 3, MaxVersion: 12}, {ApiKey: 18, MaxVersion: 3}}
	s.ex("c", 2*time.Second, time.Millisecond, av, avr)
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 1
	s.ex("c", 0, time.Millisecond, md, kmsg.NewPtrMetadataResponse()) // after it on the wire, stamped 2 s before
	s.close(3*time.Second, false)
	if f := s.findings(RuleSkippedAPIVer); len(f) != 0 {
		t.Errorf("skipped-apiversions after an ApiVersions: %+v", f)
	}
	// Its first request on the wire not ApiVersions: the finding stands,
	// naming that request, whatever came stamped later or earlier.
	s = newSynth(t, Options{Findings: true})
	s.ex("d", 2*time.Second, time.Millisecond, md, kmsg.NewPtrMetadataResponse())
	s.ex("d", 0, time.Millisecond, av, avr)
	s.close(3*time.Second, false)
	if f := s.findings(RuleSkippedAPIVer); len(f) != 1 || len(f[0].Packets) == 0 || f[0].Packets[0] != 1 {
		t.Errorf("skipped-apiversions %+v, want one on packet 1", f)
	}
}

// A commit refused as stale counts as stale on the partitions it was
// refused for: all of them when the broker refuses the whole generation,
// only those whose own error says so otherwise (the flag went to the
// partitions after the refused one).
func TestGroupsStaleCommitPartitions(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	commit := func(at time.Duration, codes map[string][]int16) {
		oc := kmsg.NewPtrOffsetCommitRequest()
		oc.Version, oc.Group, oc.Generation, oc.MemberID = 8, "g1", 1, "m1"
		r := kmsg.NewPtrOffsetCommitResponse()
		for _, topic := range []string{"alpha", "beta"} {
			ot := kmsg.OffsetCommitRequestTopic{Topic: topic}
			rt := kmsg.OffsetCommitResponseTopic{Topic: topic}
			for i, code := range codes[topic] {
				ot.Partitions = append(ot.Partitions, kmsg.OffsetCommitRequestTopicPartition{Partition: int32(i), Offset: 100})
				rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: int32(i), ErrorCode: code})
			}
			if len(ot.Partitions) > 0 {
				oc.Topics = append(oc.Topics, ot)
				r.Topics = append(r.Topics, rt)
			}
		}
		s.ex("c", at, time.Millisecond, oc, r)
	}
	stale := func() string {
		var got []string
		for _, g := range s.a.Groups().Groups {
			for _, c := range g.Commits {
				got = append(got, fmt.Sprintf("%s[%d] stale=%d errors=%d", c.Topic, c.Partition, c.Stale, c.Errors))
			}
		}
		return strings.Join(got, ", ")
	}
	commit(0, map[string][]int16{"alpha": {22, 22, 22, 22}}) // ILLEGAL_GENERATION, as Kafka answers every partition
	if got, want := stale(), "alpha[0] stale=1 errors=1, alpha[1] stale=1 errors=1, alpha[2] stale=1 errors=1, alpha[3] stale=1 errors=1"; got != want {
		t.Errorf("refused generation:\n got %s\nwant %s", got, want)
	}
	s = newSynth(t, Options{Groups: true})
	commit(0, map[string][]int16{"alpha": {0, 22}, "beta": {3}}) // one stale partition, one unknown
	if got, want := stale(), "alpha[0] stale=0 errors=0, alpha[1] stale=1 errors=1, beta[0] stale=0 errors=1"; got != want {
		t.Errorf("mixed:\n got %s\nwant %s", got, want)
	}
	var ev []string
	for _, g := range s.a.Groups().Groups {
		for _, e := range g.Timeline {
			if e.Kind == "commit" {
				ev = append(ev, e.Detail)
			}
		}
	}
	if len(ev) != 1 || !strings.HasPrefix(ev[0], "stale commit of alpha[1@100]:") {
		t.Errorf("timeline %q", ev)
	}
}
