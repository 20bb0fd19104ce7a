package facts

import (
	"fmt"
	"testing"

	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ownedLabel is how a test names a topic of a batch: owner/topic.
func ownedLabel(t *Topic) string {
	if t.Owner.Role == protocol.RoleNone {
		return t.Label()
	}
	return t.Owner.ID + "/" + t.Label()
}

// OffsetFetch v8+ batches groups (KIP-709): two groups asking for the same
// partition each get their own topic, with their own committed offset and
// error; one group's answer is never written over the other's.
func TestOffsetFetchGroupsKeptApart(t *testing.T) {
	req := kmsg.NewOffsetFetchRequest()
	req.Version = 8
	for _, g := range []string{"g1", "g2"} {
		rg := kmsg.NewOffsetFetchRequestGroup()
		rg.Group = g
		rt := kmsg.NewOffsetFetchRequestGroupTopic()
		rt.Topic, rt.Partitions = "alpha", []int32{0}
		rg.Topics = append(rg.Topics, rt)
		req.Groups = append(req.Groups, rg)
	}
	resp := kmsg.NewOffsetFetchResponse()
	resp.Version = 8
	for _, x := range []struct {
		g    string
		off  int64
		code int16
	}{{"g1", 104, 0}, {"g2", -1, 16}} {
		rg := kmsg.NewOffsetFetchResponseGroup()
		rg.Group = x.g
		rt := kmsg.NewOffsetFetchResponseGroupTopic()
		rt.Topic = "alpha"
		p := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		p.Partition, p.Offset, p.ErrorCode = 0, x.off, x.code
		rt.Partitions = append(rt.Partitions, p)
		rg.Topics = append(rg.Topics, rt)
		resp.Groups = append(resp.Groups, rg)
	}
	fx := Of(protocol.KeyOffsetFetch, 8, request(t, &req), response(t, &resp))
	if len(fx.Topics) != 2 {
		t.Fatalf("topics %+v, want g1/alpha and g2/alpha", fx.Topics)
	}
	var got []string
	for i := range fx.Topics {
		tp := &fx.Topics[i]
		for j := range tp.Partitions {
			p := &tp.Partitions[j]
			off, _ := p.Result(OffsetCommitted)
			got = append(got, fmt.Sprintf("%s[%d@%d err=%d]", ownedLabel(tp), p.Index, off, p.Error))
		}
	}
	if want := "[g1/alpha[0@104 err=0] g2/alpha[0@0 err=16]]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	if !fx.Owners() {
		t.Error("Owners() false for two groups' topics")
	}
	if len(fx.Errors) != 1 || fx.Errors[0].Topic != 1 || fx.Errors[0].Scope != (Scope{protocol.RoleGroupID, "g2"}) {
		t.Errorf("errors %+v, want one under g2/alpha", fx.Errors)
	}
	if fx.Group.ID != "g1" || fmt.Sprint(fx.Groups) != "[g1 g2]" {
		t.Errorf("group %q groups %v", fx.Group.ID, fx.Groups)
	}
}

// AddPartitionsToTxn v4+ batches transactions (KIP-890): two transactions
// adding the same partition are two topics, and the one refused is the
// one whose entry holds the error.
func TestAddPartitionsToTxnBatchKeptApart(t *testing.T) {
	req := kmsg.NewAddPartitionsToTxnRequest()
	req.Version = 4
	resp := kmsg.NewAddPartitionsToTxnResponse()
	resp.Version = 4
	for i, id := range []string{"tx-a", "tx-b"} {
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch = id, int64(1000+i), 3
		tt := kmsg.NewAddPartitionsToTxnRequestTransactionTopic()
		tt.Topic, tt.Partitions = "alpha", []int32{0}
		tx.Topics = append(tx.Topics, tt)
		req.Transactions = append(req.Transactions, tx)

		rt := kmsg.NewAddPartitionsToTxnResponseTransaction()
		rt.TransactionalID = id
		rtt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
		rtt.Topic = "alpha"
		p := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
		p.Partition, p.ErrorCode = 0, int16(48*i) // tx-b: INVALID_TXN_STATE
		rtt.Partitions = append(rtt.Partitions, p)
		rt.Topics = append(rt.Topics, rtt)
		resp.Transactions = append(resp.Transactions, rt)
	}
	fx := Of(protocol.KeyAddPartitionsToTxn, 4, request(t, &req), response(t, &resp))
	var got []string
	for i := range fx.Topics {
		tp := &fx.Topics[i]
		for j := range tp.Partitions {
			got = append(got, fmt.Sprintf("%s[%d err=%d]", ownedLabel(tp), tp.Partitions[j].Index, tp.Partitions[j].Error))
		}
	}
	if want := "[tx-a/alpha[0 err=0] tx-b/alpha[0 err=48]]"; fmt.Sprint(got) != want {
		t.Errorf("got %v, want %s", got, want)
	}
	if len(fx.Errors) != 1 || fx.Errors[0].Scope != (Scope{protocol.RoleTransactionalID, "tx-b"}) || fx.Topics[fx.Errors[0].Topic].Owner.ID != "tx-b" {
		t.Errorf("errors %+v, want one in tx-b's entry", fx.Errors)
	}
}

// A message with one entity has no owners to tell apart: OffsetFetch v8
// for one group and v7's single group give the same topics, and the line
// and JSON name no owner twice.
func TestOneOwner(t *testing.T) {
	req := kmsg.NewOffsetFetchRequest()
	req.Version = 8
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = "g1"
	for _, name := range []string{"a", "b"} {
		rt := kmsg.NewOffsetFetchRequestGroupTopic()
		rt.Topic, rt.Partitions = name, []int32{0}
		rg.Topics = append(rg.Topics, rt)
	}
	req.Groups = append(req.Groups, rg)
	fx := Of(protocol.KeyOffsetFetch, 8, request(t, &req), nil)
	if len(fx.Topics) != 2 || fx.Owners() || fx.Topics[0].Owner != (Scope{protocol.RoleGroupID, "g1"}) {
		t.Errorf("topics %+v owners %v", fx.Topics, fx.Owners())
	}
}

// WriteTxnMarkers batches producers' markers: an error is the producer's
// whose marker the broker refused, as the topic is (Error.Scope), so that
// one producer's failure on a partition is told from another's success
// on it.
func TestWriteTxnMarkersErrorScope(t *testing.T) {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	resp.Version = 1
	for i, pid := range []int64{5000, 7000} {
		req.Markers = append(req.Markers, kmsg.WriteTxnMarkersRequestMarker{ProducerID: pid, ProducerEpoch: 1, Committed: true,
			Topics: []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: "alpha", Partitions: []int32{0}}}})
		resp.Markers = append(resp.Markers, kmsg.WriteTxnMarkersResponseMarker{ProducerID: pid,
			Topics: []kmsg.WriteTxnMarkersResponseMarkerTopic{{Topic: "alpha", Partitions: []kmsg.WriteTxnMarkersResponseMarkerTopicPartition{{Partition: 0, ErrorCode: int16(6 * i)}}}}})
	}
	fx := Of(27, 1, // WriteTxnMarkers
		request(t, req), response(t, resp))
	if len(fx.Errors) != 1 {
		t.Fatalf("errors %+v", fx.Errors)
	}
	if e := fx.Errors[0]; e.Scope != (Scope{protocol.RoleProducerID, "7000"}) || e.Name != "NOT_LEADER_OR_FOLLOWER" || ownedLabel(&fx.Topics[e.Topic]) != "7000/alpha" {
		t.Errorf("error %+v on %s", e, ownedLabel(&fx.Topics[e.Topic]))
	}
}
