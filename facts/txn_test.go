package facts

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// controlBatch encodes a magic 2 control batch at offset base holding one
// marker of producer pid, epoch: COMMIT when commit, else ABORT.
func controlBatch(base, pid int64, epoch int16, commit bool) []byte {
	typ := int16(0)
	if commit {
		typ = 1
	}
	key := binary.BigEndian.AppendUint16(nil, 0) // control record version 0
	key = binary.BigEndian.AppendUint16(key, uint16(typ))
	val := []byte{0, 0, 0, 0, 0, 0} // version, coordinator epoch
	var body []byte
	body = append(body, 0)              // attributes
	body = binary.AppendVarint(body, 0) // timestamp delta
	body = binary.AppendVarint(body, 0) // offset delta
	body = binary.AppendVarint(body, int64(len(key)))
	body = append(body, key...)
	body = binary.AppendVarint(body, int64(len(val)))
	body = append(body, val...)
	body = binary.AppendVarint(body, 0) // no headers
	recs := binary.AppendVarint(nil, int64(len(body)))
	recs = append(recs, body...)
	rb := kmsg.RecordBatch{FirstOffset: base, Magic: 2, Attributes: 0x30, LastOffsetDelta: 0, NumRecords: 1,
		ProducerID: pid, ProducerEpoch: epoch, FirstSequence: -1, Records: recs}
	rb.Length = int32(49 + len(recs))
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// producerBatch encodes a transactional batch of n records from producer
// pid, epoch starting at sequence seq.
func producerBatch(base, pid int64, epoch int16, seq int32, n int) []byte {
	b, _ := batch(base, n, "v", false)
	binary.BigEndian.PutUint16(b[21:], 0x10)          // attributes: transactional
	binary.BigEndian.PutUint64(b[43:], uint64(pid))   // producer ID
	binary.BigEndian.PutUint16(b[51:], uint16(epoch)) // producer epoch
	binary.BigEndian.PutUint32(b[53:], uint32(seq))   // base sequence
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// A read_committed Fetch response: the aborted transactions it lists (by
// producer and first offset), the transactional batch's producer and
// sequence range, and its control batches as markers.
func TestFetchTransactionFacts(t *testing.T) {
	data := producerBatch(10, 7001, 3, 40, 4)
	data = append(data, controlBatch(14, 7001, 3, false)...)
	data = append(data, controlBatch(15, 7002, 1, true)...)
	resp := kmsg.NewFetchResponse()
	resp.Version = 11
	p := kmsg.NewFetchResponseTopicPartition()
	p.Partition, p.HighWatermark, p.LastStableOffset = 0, 16, 16
	p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 7001, FirstOffset: 10}, {ProducerID: 7003, FirstOffset: 2}}
	p.RecordBatches = data
	resp.Topics = []kmsg.FetchResponseTopic{{Topic: "t", Partitions: []kmsg.FetchResponseTopicPartition{p}}}
	tr := dec.DecodeResponse(frameOf(resp.AppendTo(nil), 9), protocol.KeyFetch, 11)
	if tr.Err != nil {
		t.Fatal(tr.Err)
	}
	fx := Of(protocol.KeyFetch, 11, nil, tr)
	if len(fx.Topics) != 1 || len(fx.Topics[0].Partitions) != 1 {
		t.Fatalf("topics %+v", fx.Topics)
	}
	pa := fx.Topics[0].Partitions[0]
	if pa.AbortedTxns != 2 || len(pa.Aborted) != 2 || pa.Aborted[0] != (AbortedTxn{7001, 10}) || pa.Aborted[1] != (AbortedTxn{7003, 2}) {
		t.Errorf("aborted %d %+v", pa.AbortedTxns, pa.Aborted)
	}
	r := pa.Records
	if r == nil || !r.HasProducer || r.ProducerID != 7001 || r.ProducerEpoch != 3 || r.BaseSequence != 40 || r.ProducerRecords != 4 {
		t.Fatalf("records %+v", r)
	}
	want := []Marker{{7001, 3, 14, false}, {7002, 1, 15, true}}
	if r.Aborts != 1 || r.Commits != 1 || len(r.Markers) != 2 || r.Markers[0] != want[0] || r.Markers[1] != want[1] {
		t.Errorf("markers %+v (commits %d aborts %d), want %+v", r.Markers, r.Commits, r.Aborts, want)
	}
}

// frameOf puts a response header (v0: correlation ID only) before body.
func frameOf(body []byte, corr int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(4+len(body)))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	return append(b, body...)
}

// The KIP-848 heartbeat response's interval is the group's
// HeartbeatIntervalMs; other exchanges say -1.
func TestHeartbeatInterval(t *testing.T) {
	resp := kmsg.NewConsumerGroupHeartbeatResponse()
	resp.Version = 0
	resp.MemberID, resp.MemberEpoch, resp.HeartbeatIntervalMillis = kmsg.StringPtr("m"), 3, 5000
	fx := Of(protocol.KeyConsumerGroupHeartbeat, 0, nil, response(t, &resp))
	if g := fx.Group; g.HeartbeatIntervalMs != 5000 || g.AssignedEpoch != 3 || !g.HasAssigned || g.AssignedMemberID != "m" {
		t.Errorf("%+v", g)
	}
	hb := kmsg.NewHeartbeatRequest()
	hb.Version = 4
	hb.Group, hb.Generation, hb.MemberID = "g", 2, "m"
	if fx := Of(protocol.KeyHeartbeat, 4, request(t, &hb), nil); fx.Group.HeartbeatIntervalMs != -1 || fx.Group.Generation != 2 {
		t.Errorf("%+v", fx.Group)
	}
}

// A Produce's producer is its first record batch's with one.
func TestProduceProducer(t *testing.T) {
	req := kmsg.NewProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 1000
	p := kmsg.NewProduceRequestTopicPartition()
	p.Partition, p.Records = 0, producerBatch(0, 7001, 3, 40, 2)
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{p}}}
	tr := dec.DecodeBody(protocol.KeyProduce, 9, false, req.AppendTo(nil))
	if tr.Err != nil {
		t.Fatal(tr.Err)
	}
	fx := Of(protocol.KeyProduce, 9, tr, nil)
	if pr := fx.Producer; !pr.HasID || pr.ID != 7001 || !pr.HasEpoch || pr.Epoch != 3 {
		t.Errorf("%+v", pr)
	}
}
