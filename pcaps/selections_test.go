package pcaps

// Selected nested fields of Produce, Fetch and Metadata, summarised the
// same way from kmsg's structs and from kwire's JSON (Kafka's field names:
// ProduceRequest.json, ProduceResponse.json, FetchRequest.json,
// FetchResponse.json, MetadataRequest.json, MetadataResponse.json), so that
// the two summaries must be equal line for line. A field enters a summary
// only at the versions that carry it.

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// selections by kmsg type name.
var selections = map[string]*selectionFor{
	"ProduceRequest":   {"topics, partitions and record batches", produceReqKmsg, produceReqJSON},
	"ProduceResponse":  {"topics, partitions, error codes and base offsets", produceRespKmsg, produceRespJSON},
	"FetchRequest":     {"topics, partitions and offsets", fetchReqKmsg, fetchReqJSON},
	"FetchResponse":    {"partitions, error codes, high watermarks and record batches", fetchRespKmsg, fetchRespJSON},
	"MetadataRequest":  {"topics", metadataReqKmsg, metadataReqJSON},
	"MetadataResponse": {"brokers and topics", metadataRespKmsg, metadataRespJSON},
}

// selectionFor is a selection whose functions take the message version.
type selectionFor struct {
	what     string
	fromKmsg func(msg any) []string
	fromJSON func(body map[string]any, version int16) []string
}

func uuid(b [16]byte) string { return base64.RawURLEncoding.EncodeToString(b[:]) }

// JSON accessors: a missing key reads as the zero of its kind, which the
// kmsg side gives for fields a version lacks only where the summaries do
// not print it.

func jArr(m map[string]any, k string) []map[string]any {
	a, _ := m[k].([]any)
	out := make([]map[string]any, 0, len(a))
	for _, e := range a {
		o, _ := e.(map[string]any)
		out = append(out, o)
	}
	return out
}

func jNum(m map[string]any, k string) string {
	if n, ok := m[k].(json.Number); ok {
		return string(n)
	}
	return fmt.Sprintf("missing(%s)", k)
}

func jStr(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case nil:
		if _, ok := m[k]; ok {
			return "null"
		}
	}
	return fmt.Sprintf("missing(%s)", k)
}

func jID(m map[string]any, k string) string {
	if s, ok := m[k].(string); ok {
		return s
	}
	return fmt.Sprintf("missing(%s)", k)
}

func kStr(s *string) string {
	if s == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *s)
}

// topicLabel names a topic by name before v13 and by ID from v13 (Produce
// and Fetch, KIP-516).
func topicLabel(version int16, name, id string) string {
	if version >= 13 {
		return "topic id " + id
	}
	return "topic " + name
}

// batchesFromBytes summarises a RECORDS field's record batches (or legacy
// messages) from the raw bytes: each entry is an INT64 offset, an INT32
// size and the rest; the magic byte is at offset 16 in both formats.
func batchesFromBytes(b []byte) []string {
	var out []string
	for len(b) > 0 {
		if len(b) < 17 {
			return append(out, "partial")
		}
		size := int64(int32(binary.BigEndian.Uint32(b[8:12])))
		if size < 5 || 12+size > int64(len(b)) {
			return append(out, "partial")
		}
		entry := b[:12+size]
		b = b[12+size:]
		magic := int8(entry[16])
		if magic != 2 {
			if len(entry) < 18 {
				return append(out, "partial")
			}
			out = append(out, fmt.Sprintf("message@%d magic %d %s", int64(binary.BigEndian.Uint64(entry)), magic, codec(int64(entry[17]&7))))
			continue
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(entry); err != nil {
			out = append(out, "kmsg error: "+err.Error())
			continue
		}
		out = append(out, fmt.Sprintf("batch@%d magic 2 %s records=%d pid=%d txn=%v control=%v",
			rb.FirstOffset, codec(int64(rb.Attributes&7)), rb.NumRecords, rb.ProducerID, rb.Attributes&0x10 != 0, rb.Attributes&0x20 != 0))
	}
	return out
}

var codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

func codec(c int64) string {
	if c >= 0 && int(c) < len(codecs) {
		return codecs[c]
	}
	return fmt.Sprintf("codec(%d)", c)
}

// batchesFromJSON summarises kwire's typed RECORDS value the same way.
func batchesFromJSON(v any) []string {
	var out []string
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return []string{"undecoded records (base64)"}
	case []any:
		for _, e := range x {
			o, _ := e.(map[string]any)
			if _, ok := o["undecoded"]; ok {
				out = append(out, "partial")
				continue
			}
			magic := jNum(o, "magic")
			if magic != "2" {
				out = append(out, fmt.Sprintf("message@%s magic %s %s", jNum(o, "offset"), magic, o["compression"]))
				continue
			}
			recs, _ := o["records"].([]any)
			out = append(out, fmt.Sprintf("batch@%s magic 2 %s records=%d pid=%s txn=%v control=%v",
				jNum(o, "baseOffset"), o["compression"], len(recs), jNum(o, "producerId"), o["transactional"], o["control"]))
		}
		return out
	}
	return []string{fmt.Sprintf("unexpected records value %T", v)}
}

func produceReqKmsg(msg any) []string {
	r := msg.(*kmsg.ProduceRequest)
	var out []string
	for _, tp := range r.Topics {
		out = append(out, topicLabel(r.Version, fmt.Sprintf("%q", tp.Topic), uuid(tp.TopicID)))
		for _, p := range tp.Partitions {
			out = append(out, fmt.Sprintf("  partition %d", p.Partition))
			for _, b := range batchesFromBytes(p.Records) {
				out = append(out, "    "+b)
			}
		}
	}
	return out
}

func produceReqJSON(body map[string]any, v int16) []string {
	var out []string
	for _, tp := range jArr(body, "topicData") {
		out = append(out, topicLabel(v, jStr(tp, "name"), jID(tp, "topicId")))
		for _, p := range jArr(tp, "partitionData") {
			out = append(out, "  partition "+jNum(p, "index"))
			for _, b := range batchesFromJSON(p["records"]) {
				out = append(out, "    "+b)
			}
		}
	}
	return out
}

func produceRespKmsg(msg any) []string {
	r := msg.(*kmsg.ProduceResponse)
	var out []string
	for _, tp := range r.Topics {
		out = append(out, topicLabel(r.Version, fmt.Sprintf("%q", tp.Topic), uuid(tp.TopicID)))
		for _, p := range tp.Partitions {
			out = append(out, fmt.Sprintf("  partition %d error %d base offset %d", p.Partition, p.ErrorCode, p.BaseOffset))
		}
	}
	return out
}

func produceRespJSON(body map[string]any, v int16) []string {
	var out []string
	for _, tp := range jArr(body, "responses") {
		out = append(out, topicLabel(v, jStr(tp, "name"), jID(tp, "topicId")))
		for _, p := range jArr(tp, "partitionResponses") {
			out = append(out, fmt.Sprintf("  partition %s error %s base offset %s", jNum(p, "index"), jNum(p, "errorCode"), jNum(p, "baseOffset")))
		}
	}
	return out
}

func fetchReqKmsg(msg any) []string {
	r := msg.(*kmsg.FetchRequest)
	var out []string
	for _, tp := range r.Topics {
		out = append(out, topicLabel(r.Version, fmt.Sprintf("%q", tp.Topic), uuid(tp.TopicID)))
		for _, p := range tp.Partitions {
			out = append(out, fmt.Sprintf("  partition %d offset %d max %d", p.Partition, p.FetchOffset, p.PartitionMaxBytes))
		}
	}
	return out
}

func fetchReqJSON(body map[string]any, v int16) []string {
	var out []string
	for _, tp := range jArr(body, "topics") {
		out = append(out, topicLabel(v, jStr(tp, "topic"), jID(tp, "topicId")))
		for _, p := range jArr(tp, "partitions") {
			out = append(out, fmt.Sprintf("  partition %s offset %s max %s", jNum(p, "partition"), jNum(p, "fetchOffset"), jNum(p, "partitionMaxBytes")))
		}
	}
	return out
}

func fetchRespKmsg(msg any) []string {
	r := msg.(*kmsg.FetchResponse)
	var out []string
	for _, tp := range r.Topics {
		out = append(out, topicLabel(r.Version, fmt.Sprintf("%q", tp.Topic), uuid(tp.TopicID)))
		for _, p := range tp.Partitions {
			s := fmt.Sprintf("  partition %d error %d high watermark %d", p.Partition, p.ErrorCode, p.HighWatermark)
			if r.Version >= 4 {
				s += fmt.Sprintf(" last stable %d aborted %d", p.LastStableOffset, len(p.AbortedTransactions))
			}
			out = append(out, s)
			for _, b := range batchesFromBytes(p.RecordBatches) {
				out = append(out, "    "+b)
			}
		}
	}
	return out
}

func fetchRespJSON(body map[string]any, v int16) []string {
	var out []string
	for _, tp := range jArr(body, "responses") {
		out = append(out, topicLabel(v, jStr(tp, "topic"), jID(tp, "topicId")))
		for _, p := range jArr(tp, "partitions") {
			s := fmt.Sprintf("  partition %s error %s high watermark %s", jNum(p, "partitionIndex"), jNum(p, "errorCode"), jNum(p, "highWatermark"))
			if v >= 4 {
				s += fmt.Sprintf(" last stable %s aborted %d", jNum(p, "lastStableOffset"), len(jArr(p, "abortedTransactions")))
			}
			out = append(out, s)
			for _, b := range batchesFromJSON(p["records"]) {
				out = append(out, "    "+b)
			}
		}
	}
	return out
}

func metadataReqKmsg(msg any) []string {
	r := msg.(*kmsg.MetadataRequest)
	if r.Topics == nil {
		return []string{"all topics (null)"}
	}
	out := []string{fmt.Sprintf("%d topics", len(r.Topics))}
	for _, tp := range r.Topics {
		s := "topic " + kStr(tp.Topic)
		if r.Version >= 10 {
			s += " id " + uuid(tp.TopicID)
		}
		out = append(out, s)
	}
	return out
}

func metadataReqJSON(body map[string]any, v int16) []string {
	if body["topics"] == nil {
		return []string{"all topics (null)"}
	}
	tps := jArr(body, "topics")
	out := []string{fmt.Sprintf("%d topics", len(tps))}
	for _, tp := range tps {
		s := "topic " + jStr(tp, "name")
		if v >= 10 {
			s += " id " + jID(tp, "topicId")
		}
		out = append(out, s)
	}
	return out
}

func metadataRespKmsg(msg any) []string {
	r := msg.(*kmsg.MetadataResponse)
	var out []string
	for _, b := range r.Brokers {
		s := fmt.Sprintf("broker %d %s:%d", b.NodeID, b.Host, b.Port)
		if r.Version >= 1 {
			s += " rack " + kStr(b.Rack)
		}
		out = append(out, s)
	}
	for _, tp := range r.Topics {
		s := fmt.Sprintf("topic %s error %d", kStr(tp.Topic), tp.ErrorCode)
		if r.Version >= 10 {
			s += " id " + uuid(tp.TopicID)
		}
		out = append(out, s)
		for _, p := range tp.Partitions {
			out = append(out, fmt.Sprintf("  partition %d leader %d error %d replicas %v isr %v", p.Partition, p.Leader, p.ErrorCode, p.Replicas, p.ISR))
		}
	}
	return out
}

func metadataRespJSON(body map[string]any, v int16) []string {
	var out []string
	for _, b := range jArr(body, "brokers") {
		s := fmt.Sprintf("broker %s %s:%s", jNum(b, "nodeId"), b["host"], jNum(b, "port"))
		if v >= 1 {
			s += " rack " + jStr(b, "rack")
		}
		out = append(out, s)
	}
	for _, tp := range jArr(body, "topics") {
		s := fmt.Sprintf("topic %s error %s", jStr(tp, "name"), jNum(tp, "errorCode"))
		if v >= 10 {
			s += " id " + jID(tp, "topicId")
		}
		out = append(out, s)
		for _, p := range jArr(tp, "partitions") {
			out = append(out, fmt.Sprintf("  partition %s leader %s error %s replicas %s isr %s",
				jNum(p, "partitionIndex"), jNum(p, "leaderId"), jNum(p, "errorCode"), jInts(p, "replicaNodes"), jInts(p, "isrNodes")))
		}
	}
	return out
}

// jInts formats a JSON array of integers as fmt formats an []int32.
func jInts(m map[string]any, k string) string {
	a, _ := m[k].([]any)
	s := "["
	for i, e := range a {
		if i > 0 {
			s += " "
		}
		n, _ := e.(json.Number)
		s += string(n)
	}
	return s + "]"
}
