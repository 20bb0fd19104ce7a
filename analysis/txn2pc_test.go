package analysis

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/internal/secretcorpus"
	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// exBodies feeds an exchange of API key at version ver whose request and
// response bodies are given encoded.
func (s *synth) exBodies(clientID string, at, lat time.Duration, key, ver int16, req, resp []byte) {
	s.t.Helper()
	s.frame++
	x := &dissect.Exchange{Conn: s.conn, Client: s.conn.A, Broker: s.conn.B, Kind: dissect.KindPaired,
		APIKey: key, APIVersion: ver, ClientID: clientID}
	rt := recordsDecoder.DecodeBody(key, ver, false, req)
	pt := recordsDecoder.DecodeBody(key, ver, true, resp)
	if rt.Err != nil || pt.Err != nil {
		s.t.Fatalf("key %d v%d: %v, %v", key, ver, rt.Err, pt.Err)
	}
	x.Request = &dissect.Frame{FirstPacket: s.frame, LastPacket: s.frame, Time: s0.Add(at), End: s0.Add(at), Tree: rt}
	s.frame++
	x.Response = &dissect.Frame{FirstPacket: s.frame, LastPacket: s.frame, Time: s0.Add(at + lat), End: s0.Add(at + lat), Tree: pt}
	s.a.Exchange(x)
}

// encode encodes message key (request or response) at version ver from
// kwire's schemas with the top-level values vals (the others 0, false,
// "x" or null).
func encode(t *testing.T, key int16, response bool, ver int16, vals map[string]any) []byte {
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

// KIP-939: a producer that takes over a transactional ID asking to keep
// the transaction its predecessor prepared (InitProducerId v6
// KeepPreparedTxn) completes that transaction: its EndTxn commits the
// partitions the predecessor added, and the predecessor's transaction is
// not left open. The response's OngoingTxnProducerId and Epoch name the
// prepared transaction, not the producer's new ID and epoch.
func TestTxnsKeepPreparedTxn(t *testing.T) {
	s := newSynth(t, Options{Transactions: true})
	init5 := kmsg.NewPtrInitProducerIDRequest()
	init5.Version, init5.TransactionalID, init5.TransactionTimeoutMillis = 5, kmsg.StringPtr("tx"), 60000
	init5.ProducerID, init5.ProducerEpoch = -1, -1
	init5r := kmsg.NewPtrInitProducerIDResponse()
	init5r.ProducerID, init5r.ProducerEpoch = 100, 0
	s.ex("a", time.Second, time.Millisecond, init5, init5r)
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.Version, add.TransactionalID, add.ProducerID, add.ProducerEpoch = 3, "tx", 100, 0
	add.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0}}}
	addr := kmsg.NewPtrAddPartitionsToTxnResponse()
	addr.Topics = []kmsg.AddPartitionsToTxnResponseTopic{{Topic: "t", Partitions: []kmsg.AddPartitionsToTxnResponseTopicPartition{{Partition: 0}}}}
	s.ex("a", 2*time.Second, time.Millisecond, add, addr)

	// The successor, another client, keeps the prepared transaction.
	s.newConn()
	s.exBodies("b", 3*time.Second, time.Millisecond, protocol.KeyInitProducerId, 6,
		encode(t, protocol.KeyInitProducerId, false, 6, map[string]any{"TransactionalId": "tx", "TransactionTimeoutMs": int64(60000),
			"ProducerId": int64(-1), "ProducerEpoch": int64(-1), "Enable2Pc": true, "KeepPreparedTxn": true}),
		encode(t, protocol.KeyInitProducerId, true, 6, map[string]any{"ProducerId": int64(100), "ProducerEpoch": int64(1),
			"OngoingTxnProducerId": int64(100), "OngoingTxnProducerEpoch": int64(0)}))
	end := kmsg.NewPtrEndTxnRequest()
	end.Version, end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = 4, "tx", 100, 1, true
	s.ex("b", 4*time.Second, time.Millisecond, end, kmsg.NewPtrEndTxnResponse())

	rep := s.a.Transactions()
	if len(rep.Producers) != 1 {
		t.Fatalf("%d producers", len(rep.Producers))
	}
	p := rep.Producers[0]
	var got []string
	for _, x := range p.Transactions {
		got = append(got, fmt.Sprintf("pid=%d epoch=%d added=%v outcome=%s", x.ProducerID, x.ProducerEpoch, x.Added, x.Outcome))
	}
	if want := []string{"pid=100 epoch=0 added=[{t [0]}] outcome=commit"}; !slices.Equal(got, want) {
		t.Errorf("transactions\n got  %q\n want %q", got, want)
	}
	var inst []string
	for _, in := range p.Instances {
		s := fmt.Sprintf("%s pid=%d epoch=%d", *in.ClientID, in.ProducerID, in.ProducerEpoch)
		if in.FencedBy != nil {
			s += " fenced by " + deref(in.FencedBy.ClientID)
		}
		inst = append(inst, s)
	}
	if want := []string{"a pid=100 epoch=0 fenced by b", "b pid=100 epoch=1"}; !slices.Equal(inst, want) {
		t.Errorf("instances\n got  %q\n want %q", inst, want)
	}
}

// An admin's DescribeProducers (KIP-664) is what the broker holds of each
// producer on a partition: the transactional producer with that ID and
// epoch gets it (its open transaction's start offset), a producer ID the
// capture shows nothing else of is a producer of its own, and a
// partition refused says nothing.
func TestTxnsDescribedProducers(t *testing.T) {
	s := newSynth(t, Options{Transactions: true})
	init5 := kmsg.NewPtrInitProducerIDRequest()
	init5.Version, init5.TransactionalID, init5.ProducerID, init5.ProducerEpoch = 5, kmsg.StringPtr("tx"), -1, -1
	init5r := kmsg.NewPtrInitProducerIDResponse()
	init5r.ProducerID, init5r.ProducerEpoch = 100, 3
	s.ex("a", time.Second, time.Millisecond, init5, init5r)

	s.newConn()
	dq := kmsg.NewPtrDescribeProducersRequest()
	dq.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "t", Partitions: []int32{0, 1}}}
	dr := kmsg.NewPtrDescribeProducersResponse()
	dr.Topics = []kmsg.DescribeProducersResponseTopic{{Topic: "t", Partitions: []kmsg.DescribeProducersResponseTopicPartition{
		{Partition: 0, ActiveProducers: []kmsg.DescribeProducersResponseTopicPartitionActiveProducer{
			{ProducerID: 100, ProducerEpoch: 3, LastSequence: 41, LastTimestamp: 1700000000123, CoordinatorEpoch: 2, CurrentTxnStartOffset: 500},
			{ProducerID: 200, ProducerEpoch: 0, LastSequence: 9, LastTimestamp: 1700000000456, CoordinatorEpoch: -1, CurrentTxnStartOffset: -1}}},
		{Partition: 1, ErrorCode: 6, ActiveProducers: []kmsg.DescribeProducersResponseTopicPartitionActiveProducer{{ProducerID: 300}}}}}}
	s.ex("admin", 2*time.Second, time.Millisecond, dq, dr)

	var got []string
	for _, p := range s.a.Transactions().Producers {
		id := fmt.Sprint(p.ProducerIDs)
		if p.TransactionalID != nil {
			id = *p.TransactionalID
		}
		for _, d := range p.Described {
			got = append(got, fmt.Sprintf("%s: %s %s[%d] pid=%d epoch=%d seq=%d ts=%d coord=%d open=%d", id, deref(d.ClientID), d.Topic, d.Partition,
				d.ProducerID, d.ProducerEpoch, d.LastSequence, d.LastTimestamp, d.CoordinatorEpoch, d.CurrentTxnStartOffset))
		}
	}
	slices.Sort(got)
	want := []string{
		"[200]: admin t[0] pid=200 epoch=0 seq=9 ts=1700000000456 coord=-1 open=-1",
		"tx: admin t[0] pid=100 epoch=3 seq=41 ts=1700000000123 coord=2 open=500",
	}
	if !slices.Equal(got, want) {
		t.Errorf("described\n got  %q\n want %q", got, want)
	}
}
