package stats

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

var topicID = [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

func strp(s string) *string { return &s }

// scenario feeds a Collector a small hand-built session and returns what
// it fed, for the assertions to compute expectations from.
type scenario struct {
	c1, c2        *reassembly.Conn
	b0, b1, b2    []byte // produce p0, produce p1 (gzip), fetch p0
	u0, u1, u2    int    // their uncompressed sizes
	produceReq    int
	produceResp   int
	fetchResp     int
	unansweredReq int
}

func feed(t *testing.T, col *Collector) *scenario {
	t.Helper()
	s := &scenario{
		c1: &reassembly.Conn{Index: 0, A: ap("10.0.0.1:50000"), B: ap("10.0.0.9:9092"), SawSYN: true},
		c2: &reassembly.Conn{Index: 1, A: ap("10.0.0.2:40000"), B: ap("10.0.0.9:9092")},
	}
	s.c1.Stats.Retransmissions = 2
	col.Event(&dissect.Event{Kind: dissect.EventOpen, Conn: s.c1, Time: t0})

	// ApiVersions v3 with the client's software (KIP-511).
	avReq := kmsg.NewPtrApiVersionsRequest()
	avReq.Version = 3
	avReq.ClientSoftwareName, avReq.ClientSoftwareVersion = "kgo", "1.2.3"
	avResp := kmsg.NewPtrApiVersionsResponse()
	avResp.Version = 3
	avResp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MinVersion: 0, MaxVersion: 11}}
	col.Exchange(xchg(s.c1, "app", reqFrame(t, 1, "app", avReq), respFrame(t, 1, avResp), 18, 3, 1, 1, 0, time.Millisecond))

	// Metadata v12 maps the topic ID to "orders".
	mdReq := kmsg.NewPtrMetadataRequest()
	mdReq.Version = 12
	mdResp := kmsg.NewPtrMetadataResponse()
	mdResp.Version = 12
	mdResp.Topics = []kmsg.MetadataResponseTopic{{Topic: strp("orders"), TopicID: topicID}}
	col.Exchange(xchg(s.c1, "app", reqFrame(t, 2, "app", mdReq), respFrame(t, 2, mdResp), 3, 12, 2, 3, 10*time.Millisecond, 2*time.Millisecond))

	// Produce v9 to orders/0 (3 records) and orders/1 (5 records, gzip);
	// the broker answers NOT_LEADER_OR_FOLLOWER for partition 1.
	s.b0, s.u0 = batch(3, "hello", false)
	s.b1, s.u1 = batch(5, "compressible compressible compressible", true)
	prReq := kmsg.NewPtrProduceRequest()
	prReq.Version = 9
	prReq.Acks = -1
	prReq.Topics = []kmsg.ProduceRequestTopic{{Topic: "orders", Partitions: []kmsg.ProduceRequestTopicPartition{
		{Partition: 0, Records: s.b0}, {Partition: 1, Records: s.b1}}}}
	prResp := kmsg.NewPtrProduceResponse()
	prResp.Version = 9
	prResp.Topics = []kmsg.ProduceResponseTopic{{Topic: "orders", Partitions: []kmsg.ProduceResponseTopicPartition{
		{Partition: 0}, {Partition: 1, ErrorCode: 6}}}}
	pq, pr := reqFrame(t, 3, "app", prReq), respFrame(t, 3, prResp)
	s.produceReq, s.produceResp = pq.Size(), pr.Size()
	col.Exchange(xchg(s.c1, "app", pq, pr, 0, 9, 3, 5, 20*time.Millisecond, 5*time.Millisecond))

	// Fetch v13 by topic ID: 2 records from partition 0, and
	// NOT_LEADER_OR_FOLLOWER again for partition 1.
	s.b2, s.u2 = batch(2, "x", false)
	fReq := kmsg.NewPtrFetchRequest()
	fReq.Version = 13
	fResp := kmsg.NewPtrFetchResponse()
	fResp.Version = 13
	fResp.Topics = []kmsg.FetchResponseTopic{{TopicID: topicID, Partitions: []kmsg.FetchResponseTopicPartition{
		{Partition: 0, RecordBatches: s.b2}, {Partition: 1, ErrorCode: 6}}}}
	fr := respFrame(t, 4, fResp)
	s.fetchResp = fr.Size()
	col.Exchange(xchg(s.c1, "app", reqFrame(t, 4, "app", fReq), fr, 1, 13, 4, 7, 30*time.Millisecond, 100*time.Millisecond))

	// An unanswered Produce, a gap and the close.
	uq := reqFrame(t, 5, "app", prReq)
	s.unansweredReq = uq.Size()
	col.Exchange(xchg(s.c1, "app", uq, nil, 0, 9, 5, 9, 200*time.Millisecond, 0))
	col.Event(&dissect.Event{Kind: dissect.EventGap, Conn: s.c1, Time: t0.Add(250 * time.Millisecond), Bytes: 100})
	col.Event(&dissect.Event{Kind: dissect.EventClose, Conn: s.c1, Time: t0.Add(300 * time.Millisecond)})

	// A second connection with a null client ID: Metadata for a missing
	// topic (UNKNOWN_TOPIC_OR_PARTITION) and an orphan response.
	md2 := kmsg.NewPtrMetadataResponse()
	md2.Version = 12
	md2.Topics = []kmsg.MetadataResponseTopic{{Topic: strp("missing"), ErrorCode: 3}}
	x := xchg(s.c2, "", reqFrame(t, 1, "", mdReq), respFrame(t, 1, md2), 3, 12, 1, 20, 40*time.Millisecond, 3*time.Millisecond)
	x.ClientIDNull = true
	col.Exchange(x)
	orphan := respFrame(t, 9, md2)
	orphan.FirstPacket, orphan.Time = 22, t0.Add(50*time.Millisecond)
	col.Exchange(&dissect.Exchange{Conn: s.c2, Client: s.c2.A, Broker: s.c2.B, Kind: dissect.KindOrphan,
		APIKey: -1, CorrelationID: 9, Response: orphan})
	col.Event(&dissect.Event{Kind: dissect.EventSkipped, Detail: "not Kafka"})
	return s
}

func findAPI(t *testing.T, r *Report, key, ver int16) APIStats {
	t.Helper()
	for _, a := range r.APIs {
		if a.Key == key && a.Version == ver {
			return a
		}
	}
	t.Fatalf("no API %d v%d in %+v", key, ver, r.APIs)
	return APIStats{}
}

func TestCollectorAPIs(t *testing.T) {
	col := NewCollector(Options{Top: 2})
	s := feed(t, col)
	r := col.Report()

	if r.Exchanges != 7 || r.Orphans != 1 || r.SkippedConn != 1 {
		t.Errorf("exchanges/orphans/skipped = %d/%d/%d, want 7/1/1", r.Exchanges, r.Orphans, r.SkippedConn)
	}
	var keys [][2]int16
	for _, a := range r.APIs {
		keys = append(keys, [2]int16{a.Key, a.Version})
	}
	if want := [][2]int16{{0, 9}, {1, 13}, {3, 12}, {18, 3}}; !reflect.DeepEqual(keys, want) {
		t.Errorf("API rows %v, want %v", keys, want)
	}

	p := findAPI(t, r, 0, 9)
	if p.Requests != 2 || p.Responses != 1 || p.Unanswered != 1 {
		t.Errorf("Produce v9 requests/responses/unanswered = %d/%d/%d, want 2/1/1", p.Requests, p.Responses, p.Unanswered)
	}
	if p.RequestBytes != int64(s.produceReq+s.unansweredReq) || p.ResponseBytes != int64(s.produceResp) {
		t.Errorf("Produce bytes %d/%d, want %d/%d", p.RequestBytes, p.ResponseBytes, s.produceReq+s.unansweredReq, s.produceResp)
	}
	if want := []ErrorCount{{"NOT_LEADER_OR_FOLLOWER", 6, 1}}; !reflect.DeepEqual(p.Errors, want) {
		t.Errorf("Produce errors %+v, want %+v", p.Errors, want)
	}
	if p.Latency.Count != 1 || p.Latency.P50 != Millis(5*time.Millisecond) {
		t.Errorf("Produce latency %+v", p.Latency)
	}
	// The per-partition error inside the Fetch response counts, not only
	// the (zero) top-level ErrorCode.
	f := findAPI(t, r, 1, 13)
	if want := []ErrorCount{{"NOT_LEADER_OR_FOLLOWER", 6, 1}}; !reflect.DeepEqual(f.Errors, want) {
		t.Errorf("Fetch errors %+v, want %+v", f.Errors, want)
	}
	m := findAPI(t, r, 3, 12)
	if m.Requests != 2 || m.Latency.Min != Millis(2*time.Millisecond) || m.Latency.Max != Millis(3*time.Millisecond) {
		t.Errorf("Metadata %+v", m)
	}
	if want := []ErrorCount{{"UNKNOWN_TOPIC_OR_PARTITION", 3, 1}}; !reflect.DeepEqual(m.Errors, want) {
		t.Errorf("Metadata errors %+v, want %+v", m.Errors, want)
	}

	// --top 2: the Fetch (100ms), then the Produce (5ms), with frames.
	if len(r.Slowest) != 2 || r.Slowest[0].Name != "Fetch" || r.Slowest[0].RequestFrame != 7 ||
		r.Slowest[0].ResponseFrame != 8 || r.Slowest[0].Latency != Millis(100*time.Millisecond) ||
		r.Slowest[1].Name != "Produce" || r.Slowest[1].RequestFrame != 5 {
		t.Errorf("slowest %+v", r.Slowest)
	}
}

func TestCollectorClients(t *testing.T) {
	col := NewCollector(Options{})
	feed(t, col)
	r := col.Report()
	if len(r.Clients) != 2 {
		t.Fatalf("clients %+v", r.Clients)
	}
	app, null := r.Clients[0], r.Clients[1]
	if app.ClientID == nil || *app.ClientID != "app" || null.ClientID != nil {
		t.Fatalf("client order %v, %v", app.ClientID, null.ClientID)
	}
	if !reflect.DeepEqual(app.Software, []string{"kgo/1.2.3"}) || app.Connections != 1 ||
		!reflect.DeepEqual(app.Addresses, []string{"10.0.0.1"}) || app.Requests != 5 {
		t.Errorf("app %+v", app)
	}
	want := []APIUse{
		{0, "Produce", []int16{9}, 2}, {1, "Fetch", []int16{13}, 1},
		{3, "Metadata", []int16{12}, 1}, {18, "ApiVersions", []int16{3}, 1},
	}
	if !reflect.DeepEqual(app.APIs, want) {
		t.Errorf("app APIs %+v, want %+v", app.APIs, want)
	}
	if want := []ErrorCount{{"NOT_LEADER_OR_FOLLOWER", 6, 2}}; !reflect.DeepEqual(app.Errors, want) {
		t.Errorf("app errors %+v, want %+v", app.Errors, want)
	}
	if len(null.Software) != 0 || null.Requests != 1 {
		t.Errorf("null client %+v", null)
	}
	// JSON says a null client ID as exchanges do: null, not "" and a flag.
	for _, c := range []struct {
		cl   ClientStats
		want string
	}{{app, `{"clientId":"app",`}, {null, `{"clientId":null,`}} {
		b, err := json.Marshal(c.cl)
		if err != nil || !strings.HasPrefix(string(b), c.want) || strings.Contains(string(b), "clientIdNull") {
			t.Errorf("JSON %s (%v), want it to start %s", b, err, c.want)
		}
	}
}

func TestCollectorPartitions(t *testing.T) {
	col := NewCollector(Options{})
	s := feed(t, col)
	r := col.Report()
	id := TopicIDString(topicID)
	// The Fetch by topic ID merges into the Produce rows by name, through
	// the Metadata response's mapping.
	want := []PartitionStats{
		{Topic: "orders", TopicID: id, Partition: 0,
			Produce: FlowStats{Batches: 1, Records: 3, WireBytes: int64(len(s.b0)), UncompressedBytes: int64(s.u0)},
			Fetch:   FlowStats{Batches: 1, Records: 2, WireBytes: int64(len(s.b2)), UncompressedBytes: int64(s.u2)},
			Codecs:  []string{"none"}},
		{Topic: "orders", TopicID: id, Partition: 1,
			Produce: FlowStats{Batches: 1, Records: 5, WireBytes: int64(len(s.b1)), UncompressedBytes: int64(s.u1)},
			Codecs:  []string{"gzip"}},
	}
	// The unanswered Produce is counted too: it was sent.
	want[0].Produce = doubled(want[0].Produce)
	want[1].Produce = doubled(want[1].Produce)
	if !reflect.DeepEqual(r.Partitions, want) {
		t.Errorf("partitions\n got %+v\nwant %+v", r.Partitions, want)
	}
	if s.u1 <= len(s.b1) {
		t.Fatalf("test batch did not compress: %d -> %d", s.u1, len(s.b1))
	}
}

func doubled(f FlowStats) FlowStats {
	return FlowStats{f.Batches * 2, f.Records * 2, f.WireBytes * 2, f.UncompressedBytes * 2, f.UnknownSize * 2}
}

func TestCollectorUnmappedTopicID(t *testing.T) {
	col := NewCollector(Options{})
	c := &reassembly.Conn{A: ap("10.0.0.1:1"), B: ap("10.0.0.2:9092")}
	b, u := batch(1, "v", false)
	fResp := kmsg.NewPtrFetchResponse()
	fResp.Version = 13
	fResp.Topics = []kmsg.FetchResponseTopic{{TopicID: topicID, Partitions: []kmsg.FetchResponseTopicPartition{{Partition: 4, RecordBatches: b}}}}
	fReq := kmsg.NewPtrFetchRequest()
	fReq.Version = 13
	col.Exchange(xchg(c, "x", reqFrame(t, 1, "x", fReq), respFrame(t, 1, fResp), 1, 13, 1, 1, 0, time.Millisecond))
	r := col.Report()
	want := []PartitionStats{{TopicID: TopicIDString(topicID), Partition: 4,
		Fetch: FlowStats{Batches: 1, Records: 1, WireBytes: int64(len(b)), UncompressedBytes: int64(u)}, Codecs: []string{"none"}}}
	if !reflect.DeepEqual(r.Partitions, want) {
		t.Errorf("got %+v, want %+v", r.Partitions, want)
	}
}

func TestCollectorConnections(t *testing.T) {
	col := NewCollector(Options{})
	s := feed(t, col)
	r := col.Report()
	if len(r.Connections) != 2 {
		t.Fatalf("connections %+v", r.Connections)
	}
	c := r.Connections[0]
	if c.Index != 0 || c.Client != "10.0.0.1:50000" || c.Broker != "10.0.0.9:9092" ||
		c.RequestFrames != 5 || c.ResponseFrames != 4 || c.Gaps != 1 || c.GapBytes != 100 ||
		c.Retransmissions != 2 || c.Unanswered != 1 || !c.Closed || c.Orphans != 0 ||
		c.Duration != Millis(300*time.Millisecond) {
		t.Errorf("conn 0 %+v", c)
	}
	_ = s
	c = r.Connections[1]
	if c.Index != 1 || c.Orphans != 1 || c.RequestFrames != 1 || c.ResponseFrames != 2 || c.Closed {
		t.Errorf("conn 1 %+v", c)
	}
	if r.First != "2026-01-02T03:04:05Z" || r.Last != "2026-01-02T03:04:05.3Z" {
		t.Errorf("first/last %s %s", r.First, r.Last)
	}
}

func TestCollectorLatencyOverTime(t *testing.T) {
	col := NewCollector(Options{})
	feed(t, col)
	r := col.Report()
	var fetch *LatencyOverAPI
	for i := range r.Latency {
		if r.Latency[i].Name == "Fetch" {
			fetch = &r.Latency[i]
		}
	}
	if fetch == nil {
		t.Fatalf("no Fetch series in %+v", r.Latency)
	}
	// One sample of 100ms at request time t0+30ms: bin 3 of 10ms bins.
	if fetch.BinWidth != Millis(10*time.Millisecond) || len(fetch.OverTime) != 4 ||
		fetch.OverTime[3] != (TimeBin{1, Millis(100 * time.Millisecond), Millis(100 * time.Millisecond)}) {
		t.Errorf("Fetch over time %+v", fetch)
	}
	// 100ms = 100e6 ns lies in [2^26, 2^27).
	if len(fetch.Distribution) != 1 || fetch.Distribution[0] != (DistBin{1 << 26, 1 << 27, 1}) {
		t.Errorf("Fetch distribution %+v", fetch.Distribution)
	}
}

// TestCollectorBounded: many answered requests keep memory fixed: the
// latency structure folds into buckets, the series keeps SeriesBins bins
// and the slowest list Top entries; counts stay exact.
func TestCollectorBounded(t *testing.T) {
	col := NewCollector(Options{Top: 3})
	c := &reassembly.Conn{A: ap("10.0.0.1:1"), B: ap("10.0.0.2:9092")}
	const n = 3 * ExactSamples
	for i := range n {
		// No trees: frames not decoded (dissect.Options.Decode said no).
		req := &dissect.Frame{Bytes: make([]byte, 20)}
		resp := &dissect.Frame{Bytes: make([]byte, 10)}
		col.Exchange(xchg(c, "x", req, resp, 3, 12, int32(i), int64(2*i+1), time.Duration(i)*time.Second, time.Duration(i+1)*time.Microsecond))
	}
	r := col.Report()
	m := r.APIs[0]
	if m.Requests != n || m.Responses != n || m.RequestBytes != 20*n || m.Latency.Exact || m.Latency.Count != n ||
		m.Latency.Max != Millis(n*time.Microsecond) || m.Latency.Min != Millis(time.Microsecond) {
		t.Errorf("Metadata %+v", m)
	}
	if p50 := time.Duration(m.Latency.P50); p50 < n/2*time.Microsecond || p50 > n/2*time.Microsecond*17/16 {
		t.Errorf("p50 %v", p50)
	}
	if len(r.Slowest) != 3 || r.Slowest[0].Latency != Millis(n*time.Microsecond) || r.Slowest[2].Latency != Millis((n-2)*time.Microsecond) {
		t.Errorf("slowest %+v", r.Slowest)
	}
	if l := r.Latency[0]; len(l.OverTime) > SeriesBins {
		t.Errorf("%d time bins", len(l.OverTime))
	}
	var sum int64
	for _, b := range r.Latency[0].OverTime {
		sum += b.Count
	}
	if sum != n {
		t.Errorf("time bins hold %d, want %d", sum, n)
	}
}

func BenchmarkCollectorExchange(b *testing.B) {
	t := &testing.T{}
	col := NewCollector(Options{Top: 10})
	s := &reassembly.Conn{A: ap("10.0.0.1:1"), B: ap("10.0.0.2:9092")}
	bt, _ := batch(10, "benchmark value", false)
	prReq := kmsg.NewPtrProduceRequest()
	prReq.Version = 9
	prReq.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: bt}}}}
	prResp := kmsg.NewPtrProduceResponse()
	prResp.Version = 9
	prResp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: 0, ErrorCode: 6}}}}
	x := xchg(s, "bench", reqFrame(t, 1, "bench", prReq), respFrame(t, 1, prResp), 0, 9, 1, 1, 0, time.Millisecond)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		col.Exchange(x)
	}
}

// TestCollectorAllocs pins the per-exchange allocation budget once the
// entities exist: a Produce exchange with one batch and an error costs a
// few small allocations (the batch summary's codec list, closures), not
// memory proportional to the traffic.
func TestCollectorAllocs(t *testing.T) {
	col := NewCollector(Options{Top: 10})
	s := &reassembly.Conn{A: ap("10.0.0.1:1"), B: ap("10.0.0.2:9092")}
	bt, _ := batch(10, "value", false)
	prReq := kmsg.NewPtrProduceRequest()
	prReq.Version = 9
	prReq.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: bt}}}}
	prResp := kmsg.NewPtrProduceResponse()
	prResp.Version = 9
	prResp.Topics = []kmsg.ProduceResponseTopic{{Topic: "t", Partitions: []kmsg.ProduceResponseTopicPartition{{Partition: 0, ErrorCode: 6}}}}
	x := xchg(s, "a", reqFrame(t, 1, "a", prReq), respFrame(t, 1, prResp), 0, 9, 1, 1, 0, time.Millisecond)
	for range ExactSamples + 1 { // past the exact samples: no more growth
		col.Exchange(x)
	}
	if n := testing.AllocsPerRun(200, func() { col.Exchange(x) }); n > 6 {
		t.Errorf("%v allocations per exchange, want at most 6", n)
	}
}

// TestCompareSlowBeyondWait: --top ranks by the time beyond the wait the
// request asked for: a Fetch answered at its MaxWaitMs (a long poll) comes
// after a slower-than-it-asked Produce, then by latency, then by frame.
func TestCompareSlowBeyondWait(t *testing.T) {
	ms := func(n int64) Millis { return Millis(n * 1e6) }
	s := []SlowExchange{
		{Name: "Fetch", Latency: ms(501), WaitMs: ms(500), RequestFrame: 1},
		{Name: "Produce", Latency: ms(281), RequestFrame: 2},
		{Name: "Fetch", Latency: ms(900), WaitMs: ms(500), RequestFrame: 3},
		{Name: "Metadata", Latency: ms(1), RequestFrame: 4},
		{Name: "Produce", Latency: ms(281), RequestFrame: 0},
	}
	slices.SortFunc(s, compareSlow)
	var got []int64
	for _, e := range s {
		got = append(got, e.RequestFrame)
	}
	if want := []int64{3, 0, 2, 1, 4}; !slices.Equal(got, want) {
		t.Errorf("order by request frame %v, want %v", got, want)
	}
}

// TestClientsPartitionsBounded: client IDs and topic-partitions are the
// peers' to make up; past MaxMemory their rows are not kept, their counts
// are (FoldedClients, FoldedPartitions), and the totals stay exact.
func TestClientsPartitionsBounded(t *testing.T) {
	const n = 2000
	col := NewCollector(Options{MaxMemory: 64 << 10})
	c := &reassembly.Conn{Index: 0, A: ap("10.0.0.1:1000"), B: ap("10.0.0.8:9092")}
	b, _ := batch(1, "x", false)
	for i := range n {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks = 9, -1
		req.Topics = []kmsg.ProduceRequestTopic{{Topic: fmt.Sprintf("t%d", i), Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: int32(i), Records: b}}}}
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = 9
		id := fmt.Sprintf("client-%d", i)
		col.Exchange(xchg(c, id, reqFrame(t, int32(i), id, req), respFrame(t, int32(i), resp), 0, 9, int32(i), int64(2*i+1), time.Duration(i)*time.Millisecond, time.Millisecond))
	}
	r := col.Report()
	if len(r.Clients) == 0 || len(r.Clients) >= n/4 || r.FoldedClients == nil || int(r.FoldedClients.Requests)+len(r.Clients) != n {
		t.Fatalf("%d client rows, folded %+v", len(r.Clients), r.FoldedClients)
	}
	if r.FoldedPartitions == nil || int(r.FoldedPartitions.Produce.Batches)+len(r.Partitions) != n {
		t.Fatalf("%d partition rows, folded %+v", len(r.Partitions), r.FoldedPartitions)
	}
	if len(r.APIs) != 1 || r.APIs[0].Requests != n {
		t.Errorf("APIs %+v", r.APIs)
	}
	// The budget itself: the rows kept cost at most MaxMemory.
	if col.tableMem > 64<<10 {
		t.Errorf("tables cost %d", col.tableMem)
	}
	// A connection with many client IDs counts each once.
	conns := 0
	for _, cl := range r.Clients {
		conns += cl.Connections
	}
	if conns != len(r.Clients) || r.FoldedClients.Connections != 1 {
		t.Errorf("connections %d over %d clients, folded %d", conns, len(r.Clients), r.FoldedClients.Connections)
	}
}
