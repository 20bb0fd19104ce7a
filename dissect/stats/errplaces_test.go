package stats

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produced is a Produce v9 exchange answered code for each partition of
// topic.
func produced(t *testing.T, c *reassembly.Conn, cid int32, topic string, code int16, parts ...int32) *kmsgExchange {
	req := kmsg.NewPtrProduceRequest()
	req.Version, req.Acks, req.TimeoutMillis = 9, -1, 1000
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = 9
	rt := kmsg.ProduceResponseTopic{Topic: topic}
	for _, p := range parts {
		rt.Partitions = append(rt.Partitions, kmsg.ProduceResponseTopicPartition{Partition: p, ErrorCode: code})
	}
	resp.Topics = []kmsg.ProduceResponseTopic{rt}
	return &kmsgExchange{req, resp}
}

type kmsgExchange struct {
	req  kmsg.Request
	resp kmsg.Response
}

// The ERRORS places: each error by API and partition, most frequent first;
// places past MaxMemory/8 are folded into a count, never lost from the
// APIs' totals.
func TestErrorPlaces(t *testing.T) {
	conn := &reassembly.Conn{A: ap("10.0.0.1:5000"), B: ap("10.0.0.9:9092")}
	col := NewCollector(Options{})
	for i, x := range []*kmsgExchange{produced(t, conn, 1, "a", 6, 0, 1), produced(t, conn, 2, "a", 6, 1), produced(t, conn, 3, "b", 3, 0)} {
		cid := int32(i + 1)
		col.Exchange(xchg(conn, "p", reqFrame(t, cid, "p", x.req), respFrame(t, cid, x.resp), protocol.KeyProduce, 9, cid, int64(10*i+1), time.Duration(i)*time.Millisecond, time.Millisecond))
	}
	r := col.Report()
	var got []string
	for _, ep := range r.ErrorPlaces {
		got = append(got, fmt.Sprintf("%s %s %s[%d]×%d", ep.Name, ep.API, *ep.Topic, *ep.Partition, ep.Count))
	}
	if want := "NOT_LEADER_OR_FOLLOWER Produce a[1]×2, NOT_LEADER_OR_FOLLOWER Produce a[0]×1, UNKNOWN_TOPIC_OR_PARTITION Produce b[0]×1"; strings.Join(got, ", ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, ", "), want)
	}

	small := NewCollector(Options{MaxMemory: 8 * (costErrPlace + 2)})
	for i := range 20 {
		x := produced(t, conn, int32(i), fmt.Sprintf("t%d", i%10), 6, 0)
		small.Exchange(xchg(conn, "p", reqFrame(t, int32(i), "p", x.req), respFrame(t, int32(i), x.resp), protocol.KeyProduce, 9, int32(i), int64(10*i+1), 0, time.Millisecond))
	}
	r = small.Report()
	var kept int64
	for _, ep := range r.ErrorPlaces {
		kept += ep.Count
	}
	if len(r.ErrorPlaces) != 1 || kept+r.ErrorPlacesFolded != 20 {
		t.Errorf("%d places kept with %d errors, %d folded; want 1 place and 20 errors in all", len(r.ErrorPlaces), kept, r.ErrorPlacesFolded)
	}
}
