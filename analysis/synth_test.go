package analysis

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Exchanges built from kmsg messages, for the rules no golden capture
// shows: requests past their timeout, batches near max.message.bytes,
// SASL re-authentication, idle closes, broken sequences.

var s0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

var recordsDecoder = &protocol.Decoder{Records: true}

type synth struct {
	// closing marks the unanswered exchanges fed as ones a FIN or RST
	// left unanswered (dissect.Exchange.Closed), as dissect marks them.
	closing bool
	t       *testing.T
	a       *Analyzer
	frame   int64
	conn    *reassembly.Conn
	port    uint16
	broker  netip.AddrPort
}

func newSynth(t *testing.T, opts Options) *synth {
	s := &synth{t: t, a: New(opts), broker: netip.MustParseAddrPort("10.0.0.9:9092"), port: 40000}
	s.newConn()
	return s
}

func (s *synth) newConn() *reassembly.Conn {
	s.port++
	s.conn = &reassembly.Conn{Index: int(s.port - 40000), A: netip.AddrPortFrom(netip.MustParseAddr("10.0.0.5"), s.port), B: s.broker, SawSYN: true}
	return s.conn
}

// ex feeds an exchange of req sent at `at` and answered lat later (resp
// nil: unanswered).
func (s *synth) ex(clientID string, at, lat time.Duration, req kmsg.Request, resp kmsg.Response) *dissect.Exchange {
	s.t.Helper()
	s.frame++
	x := &dissect.Exchange{Conn: s.conn, Client: s.conn.A, Broker: s.conn.B, Kind: dissect.KindUnanswered,
		APIKey: req.Key(), APIVersion: req.GetVersion(), ClientID: clientID, Closed: s.closing && resp == nil}
	rt := recordsDecoder.DecodeBody(req.Key(), req.GetVersion(), false, req.AppendTo(nil))
	if rt.Err != nil {
		s.t.Fatalf("%T: %v", req, rt.Err)
	}
	x.Request = &dissect.Frame{FirstPacket: s.frame, LastPacket: s.frame, Time: s0.Add(at), End: s0.Add(at), Tree: rt}
	if resp != nil {
		resp.SetVersion(req.GetVersion())
		s.frame++
		pt := recordsDecoder.DecodeBody(req.Key(), req.GetVersion(), true, resp.AppendTo(nil))
		if pt.Err != nil {
			s.t.Fatalf("%T: %v", resp, pt.Err)
		}
		x.Kind = dissect.KindPaired
		x.Response = &dissect.Frame{FirstPacket: s.frame, LastPacket: s.frame, Time: s0.Add(at + lat), End: s0.Add(at + lat), Tree: pt}
	}
	s.a.Exchange(x)
	return x
}

// close ends the current connection at `at`, its first FIN from the
// broker when byBroker.
func (s *synth) close(at time.Duration, byBroker bool) {
	s.frame++
	ev := &dissect.Event{Kind: dissect.EventClose, Conn: s.conn, Time: s0.Add(at), Frame: s.frame, ClosedAt: s0.Add(at), ClosedBy: reassembly.AtoB}
	if byBroker {
		ev.ClosedBy = reassembly.BtoA
	}
	s.a.Event(ev)
}

func (s *synth) findings(rule string) []Finding { return findingsOf(s.a.Findings(), rule) }

// batch encodes a magic 2 batch of one record with a value of n bytes
// (producer pid at sequence seq when pid >= 0).
func batch(n int, pid int64, seq int32, records int) []byte {
	var recs []byte
	for i := range records {
		val := make([]byte, n/records)
		var body []byte
		body = append(body, 0)
		body = binary.AppendVarint(body, 0)
		body = binary.AppendVarint(body, int64(i))
		body = binary.AppendVarint(body, -1)
		body = binary.AppendVarint(body, int64(len(val)))
		body = append(body, val...)
		body = binary.AppendVarint(body, 0)
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(records - 1), NumRecords: int32(records),
		ProducerID: pid, ProducerEpoch: 0, FirstSequence: seq, Records: recs}
	if pid < 0 {
		rb.ProducerEpoch, rb.FirstSequence = -1, -1
	}
	rb.Length = int32(49 + len(recs))
	b := rb.AppendTo(nil)
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func produce(topic string, timeoutMs int32, records []byte) *kmsg.ProduceRequest {
	r := kmsg.NewPtrProduceRequest()
	r.Version, r.Acks, r.TimeoutMillis = 9, -1, timeoutMs
	p := kmsg.NewProduceRequestTopicPartition()
	p.Records = records
	r.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{p}}}
	return r
}

func produced(topic string, code int16) *kmsg.ProduceResponse {
	r := kmsg.NewPtrProduceResponse()
	p := kmsg.NewProduceResponseTopicPartition()
	p.ErrorCode = code
	r.Topics = []kmsg.ProduceResponseTopic{{Topic: topic, Partitions: []kmsg.ProduceResponseTopicPartition{p}}}
	return r
}

func fetch(maxWait int32) (*kmsg.FetchRequest, *kmsg.FetchResponse) {
	r := kmsg.NewPtrFetchRequest()
	r.Version, r.MaxWaitMillis = 11, maxWait
	p := kmsg.NewFetchRequestTopicPartition()
	r.Topics = []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{p}}}
	resp := kmsg.NewPtrFetchResponse()
	rp := kmsg.NewFetchResponseTopicPartition()
	resp.Topics = []kmsg.FetchResponseTopic{{Topic: "t", Partitions: []kmsg.FetchResponseTopicPartition{rp}}}
	return r, resp
}

func TestRuleRequestTimeout(t *testing.T) {
	s := newSynth(t, Options{Findings: true})
	small := batch(10, -1, -1, 1)
	s.ex("late", 0, 3*time.Second, produce("t", 1000, small), produced("t", 0)) // answered 2 s after its 1 s timeout
	s.newConn()
	s.ex("ok", 0, 1500*time.Millisecond, produce("t", 1000, small), produced("t", 0)) // within the grace
	s.newConn()
	fr, fresp := fetch(500)
	s.ex("poll", 0, 600*time.Millisecond, fr, fresp) // a long poll answered on time
	fr2, _ := fetch(500)
	s.ex("poll", time.Second, 0, fr2, nil)
	s.close(5*time.Second, false) // the poll outlived its MaxWaitMs by 3.5 s
	s.newConn()
	s.ex("lost", time.Second, 0, produce("t", 1000, small), nil)
	s.close(5*time.Second, false) // the Produce outlived its timeout
	s.newConn()
	fr3, _ := fetch(500)
	s.ex("closing", 0, 0, fr3, nil)
	s.close(200*time.Millisecond, false) // a consumer closing mid poll
	got := map[string]string{}
	for _, f := range s.findings(RuleTimeout) {
		got[*f.ClientID] = f.Detail
	}
	if len(got) != 3 || !strings.Contains(got["late"], "answered 3.00s after its TimeoutMs of 1.00s") ||
		!strings.Contains(got["lost"], "never answered") || !strings.Contains(got["poll"], "MaxWaitMs") {
		t.Errorf("%q", got)
	}
}

func TestRuleBatchTooLarge(t *testing.T) {
	s := newSynth(t, Options{Findings: true})
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.Version = 5
	v := "100000"
	ctt := kmsg.NewCreateTopicsRequestTopic()
	ctt.Topic, ctt.NumPartitions, ctt.ReplicationFactor = "small", 1, 1
	ctt.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "max.message.bytes", Value: &v}}
	ct.Topics = []kmsg.CreateTopicsRequestTopic{ctt}
	s.ex("admin", 0, time.Millisecond, ct, kmsg.NewPtrCreateTopicsResponse())
	s.ex("p", time.Second, time.Millisecond, produce("small", 30000, batch(95000, -1, -1, 1)), produced("small", 0))    // 95 % of the topic's limit
	s.ex("p", time.Second, time.Millisecond, produce("small", 30000, batch(50000, -1, -1, 1)), produced("small", 0))    // half
	s.ex("p", 2*time.Second, time.Millisecond, produce("other", 30000, batch(980000, -1, -1, 1)), produced("other", 0)) // near the default
	s.ex("p", 3*time.Second, time.Millisecond, produce("big", 30000, batch(980000, -1, -1, 1)), produced("big", 0))
	s.ex("p", 4*time.Second, time.Millisecond, produce("big", 30000, batch(1500000, -1, -1, 1)), produced("big", 0)) // accepted: big's limit is larger
	s.ex("p", 5*time.Second, time.Millisecond, produce("refused", 30000, batch(2000, -1, -1, 1)), produced("refused", 10))
	topics := map[string]string{}
	for _, f := range s.findings(RuleBatchTooLarge) {
		topics[*f.Topic] = f.Detail
	}
	if len(topics) != 3 || !strings.Contains(topics["small"], "max.message.bytes 100000") || !strings.Contains(topics["other"], "default") ||
		!strings.Contains(topics["refused"], "MESSAGE_TOO_LARGE") {
		t.Errorf("%q", topics)
	}
	if lb := s.findings(RuleLargeBatch); len(lb) != 2 { // other and big
		t.Errorf("large batches %+v", lb)
	}
}

func saslAuth(code int16) (*kmsg.SASLAuthenticateRequest, *kmsg.SASLAuthenticateResponse) {
	r := kmsg.NewPtrSASLAuthenticateRequest()
	r.Version, r.SASLAuthBytes = 2, []byte("\x00u\x00p")
	resp := kmsg.NewPtrSASLAuthenticateResponse()
	resp.ErrorCode = code
	return r, resp
}

func TestRuleSASL(t *testing.T) {
	s := newSynth(t, Options{Findings: true})
	q, p := saslAuth(0)
	s.ex("app", 0, time.Millisecond, q, p)
	q, p = saslAuth(58)
	s.ex("app", time.Hour, time.Millisecond, q, p) // the session's re-authentication (KIP-368)
	s.newConn()
	q, p = saslAuth(58)
	s.ex("other", 0, time.Millisecond, q, p)
	re, first := s.findings(RuleSASLReauth), s.findings(RuleSASLFailed)
	if len(re) != 1 || *re[0].ClientID != "app" || len(re[0].Packets) != 3 || len(first) != 1 || *first[0].ClientID != "other" {
		t.Errorf("re-authentication %+v, first %+v", re, first)
	}
}

func TestRuleIdleClose(t *testing.T) {
	s := newSynth(t, Options{Findings: true})
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 7
	for i, c := range []struct {
		closeAt  time.Duration
		byBroker bool
	}{{30 * time.Second, true}, {30 * time.Second, false}, {2 * time.Second, true}} {
		if i > 0 {
			s.newConn()
		}
		s.ex("app", 0, time.Millisecond, md, kmsg.NewPtrMetadataResponse())
		s.close(c.closeAt, c.byBroker)
	}
	if ic := s.findings(RuleIdleClose); len(ic) != 1 || ic[0].Count != 1 || !strings.Contains(ic[0].Detail, "after 30.0s") {
		t.Errorf("%+v", ic)
	}
}

func TestRuleSequence(t *testing.T) {
	s := newSynth(t, Options{Findings: true})
	s.ex("idem", 0, time.Millisecond, produce("t", 30000, batch(50, 7, 0, 5)), produced("t", 0))               // 0-4
	s.ex("idem", time.Second, time.Millisecond, produce("t", 30000, batch(50, 7, 5, 5)), produced("t", 0))     // 5-9
	s.ex("idem", 2*time.Second, time.Millisecond, produce("t", 30000, batch(50, 7, 20, 1)), produced("t", 45)) // a gap, refused
	s.ex("idem", 3*time.Second, time.Millisecond, produce("t", 30000, batch(50, 7, 10, 1)), nil)
	s.ex("idem", 4*time.Second, time.Millisecond, produce("t", 30000, batch(50, 7, 10, 1)), produced("t", 0)) // the retry
	s.ex("idem", 5*time.Second, time.Millisecond, produce("t", 30000, batch(50, 7, 10, 1)), produced("t", 0)) // and another
	seq, retry := s.findings(RuleSequence), s.findings(RuleProduceRetry)
	if len(seq) != 1 || seq[0].Count != 2 || len(retry) != 1 || retry[0].Count != 2 || !strings.Contains(retry[0].Detail, "sequence 10 sent again") {
		t.Fatalf("sequence %+v\nretry %+v", seq, retry)
	}
	// The retries name the first send, not the one before them, and the
	// evidence starts with it: the first send, then each retry.
	if ps := retry[0].Packets; len(ps) != 3 || !slices.IsSorted(ps) || !strings.Contains(retry[0].Detail, fmt.Sprintf("(first at packet %d)", ps[0])) {
		t.Errorf("retry evidence %v, detail %q", retry[0].Packets, retry[0].Detail)
	}
	r := s.a.Transactions()
	if len(r.Producers) != 1 || len(r.Producers[0].Sequences) != 4 {
		t.Fatalf("%+v", r.Producers)
	}
	kinds := []string{}
	for _, is := range r.Producers[0].Sequences {
		kinds = append(kinds, is.Kind)
	}
	if strings.Join(kinds, ",") != "gap,out-of-order,retry,retry" {
		t.Errorf("issues %v", kinds)
	}
}

// A slow exchange is split from its frames' TCP timing: a request whose
// segment was retransmitted 300 ms later is the network's, a request
// answered 300 ms after it arrived the broker's.
func TestSplit(t *testing.T) {
	at := func(ms float64) time.Time { return s0.Add(time.Duration(ms * float64(time.Millisecond))) }
	x := &dissect.Exchange{
		Request: &dissect.Frame{Time: at(0), End: at(1), RTT: 40 * time.Millisecond,
			TCP: &dissect.TCPTiming{Earliest: at(0), Latest: at(1), Retransmissions: 1, LastRetransmission: at(301)}},
		Response: &dissect.Frame{Time: at(342), End: at(345), TCP: &dissect.TCPTiming{Earliest: at(342), Latest: at(345)}},
	}
	sp := splitOf(x, 0)
	if sp.Verdict != verdictNetwork || sp.BrokerMs.Duration() != time.Millisecond || sp.NetworkMs.Duration() != 344*time.Millisecond ||
		sp.RetransmittedMs.Duration() != 300*time.Millisecond {
		t.Errorf("%+v", sp)
	}
	y := &dissect.Exchange{
		Request: &dissect.Frame{Time: at(0), End: at(0), RTT: time.Millisecond,
			TCP: &dissect.TCPTiming{Earliest: at(0), Latest: at(0), ZeroWindows: 1}},
		Response: &dissect.Frame{Time: at(301), End: at(301)},
	}
	sp = splitOf(y, 0)
	if sp.Verdict != verdictBroker || sp.BrokerMs.Duration() != 300*time.Millisecond || !strings.Contains(sp.Text(), "1 zero window (") {
		t.Errorf("%+v %s", sp, sp.Text())
	}
	// Nothing seen on the wire: the text does not claim more than the
	// capture point can tell.
	z := &dissect.Exchange{
		Request:  &dissect.Frame{Time: at(0), End: at(0), RTT: time.Millisecond, TCP: &dissect.TCPTiming{Earliest: at(0), Latest: at(0)}},
		Response: &dissect.Frame{Time: at(250), End: at(250)},
	}
	if sz := splitOf(z, 0); !strings.Contains(sz.Text(), "no retransmission seen at the capture point; one beyond it would count as broker time") {
		t.Errorf("no retransmission: %s", sz.Text())
	}
	// Behind a long poll on the same connection: queued, not the broker.
	sp = splitOf(y, 250*time.Millisecond)
	if sp.BrokerMs.Duration() != 50*time.Millisecond || sp.QueuedMs.Duration() != 250*time.Millisecond {
		t.Errorf("queued: %+v", sp)
	}
}

// A long capture of one group's members joining and leaving stays within
// the memory budget: the oldest events and generations go, and the
// report says how many.
func TestGroupsBudget(t *testing.T) {
	s := newSynth(t, Options{Groups: true, MaxMemory: 256 << 10})
	for i := range 5000 {
		at := time.Duration(i) * time.Second
		j := kmsg.NewPtrJoinGroupRequest()
		j.Version, j.Group, j.MemberID, j.ProtocolType, j.SessionTimeoutMillis, j.RebalanceTimeoutMillis = 5, "g", "m-"+itoa(i), "consumer", 10000, 30000
		j.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
		jr := kmsg.NewPtrJoinGroupResponse()
		jr.Generation, jr.LeaderID, jr.MemberID, jr.Protocol = int32(i+1), "m-"+itoa(i), "m-"+itoa(i), kmsg.StringPtr("range")
		s.ex("c", at, time.Millisecond, j, jr)
		l := kmsg.NewPtrLeaveGroupRequest()
		l.Version, l.Group, l.MemberID = 2, "g", "m-"+itoa(i)
		s.ex("c", at+500*time.Millisecond, time.Millisecond, l, kmsg.NewPtrLeaveGroupResponse())
	}
	r := s.a.Groups()
	g := r.Groups[0]
	if g.GenerationCount != 5000 || g.Dropped.Events == 0 || g.Dropped.Generations == 0 || g.Dropped.Members == 0 {
		t.Errorf("generations %d, dropped %+v", g.GenerationCount, g.Dropped)
	}
	if used := s.a.mem.used; used > s.a.mem.max+64<<10 {
		t.Errorf("%d bytes kept, budget %d", used, s.a.mem.max)
	}
	last := g.Generations[len(g.Generations)-1]
	if last.Generation != 5000 || last.Cause != causeLeave || len(last.Members) != 1 || last.Members[0].MemberID != "m-4999" {
		t.Errorf("last generation %+v", last)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// A group deleted and made anew restarts its generations at 1: the new
// generations are entries of their own, not the old ones again.
func TestGroupsRestart(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	at := time.Duration(0)
	for round := range 2 {
		for gen := int32(1); gen <= 3; gen++ {
			at += time.Second
			id := fmt.Sprintf("m%d-%d", round, gen)
			j := kmsg.NewPtrJoinGroupRequest()
			j.Version, j.Group, j.MemberID, j.ProtocolType = 5, "g", id, "consumer"
			j.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
			jr := kmsg.NewPtrJoinGroupResponse()
			jr.Generation, jr.LeaderID, jr.MemberID = gen, id, id
			s.ex("c", at, time.Millisecond, j, jr)
		}
	}
	g := s.a.Groups().Groups[0]
	var nums []int32
	for _, gn := range g.Generations {
		nums = append(nums, gn.Generation)
	}
	if fmt.Sprint(nums) != "[1 2 3 1 2 3]" || g.GenerationCount != 6 {
		t.Errorf("generations %v (%d)", nums, g.GenerationCount)
	}
}

// Many idempotent producers over a long capture stay within the budget:
// the oldest, done with, are dropped and counted; KIP-890's epoch bumps
// do not pile up sequence state.
func TestTxnsBudget(t *testing.T) {
	s := newSynth(t, Options{Transactions: true, MaxMemory: 64 << 10})
	for i := range 2000 {
		s.ex("p", time.Duration(i)*time.Millisecond, time.Millisecond, produce("t", 30000, batch(10, int64(i+1), 0, 1)), produced("t", 0))
	}
	r := s.a.Transactions()
	if r.Dropped.Producers == 0 || len(r.Producers) == 0 || len(r.Producers) > 1000 {
		t.Errorf("%d producers kept, %d dropped", len(r.Producers), r.Dropped.Producers)
	}
	if used := s.a.mem.used; used > s.a.mem.max+16<<10 {
		t.Errorf("%d bytes kept, budget %d", used, s.a.mem.max)
	}
	// One producer through 500 epochs: one sequence state per partition.
	s = newSynth(t, Options{Transactions: true})
	for e := range 500 {
		b := batch(10, 9, 0, 1)
		binary.BigEndian.PutUint16(b[51:], uint16(e)) // producer epoch
		binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
		s.ex("p", time.Duration(e)*time.Millisecond, time.Millisecond, produce("t", 30000, b), produced("t", 0))
	}
	if p := s.a.txns.producers["pid:9"]; p == nil || len(p.seqs) != 1 || len(p.issues) != 0 {
		t.Errorf("%+v", p)
	}
}

// The same members joining again with a changed subscription: the cause
// says so, and names who was told REBALANCE_IN_PROGRESS.
func TestGroupsSubscriptionCause(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	join := func(at time.Duration, gen int32, topics ...string) {
		sub := kmsg.NewConsumerMemberMetadata()
		sub.Topics = topics
		j := kmsg.NewPtrJoinGroupRequest()
		j.Version, j.Group, j.MemberID, j.ProtocolType = 5, "g", "m", "consumer"
		j.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: sub.AppendTo(nil)}}
		jr := kmsg.NewPtrJoinGroupResponse()
		jr.Generation, jr.LeaderID, jr.MemberID = gen, "m", "m"
		s.ex("c", at, time.Millisecond, j, jr)
	}
	join(0, 1, "a")
	hb := kmsg.NewPtrHeartbeatRequest()
	hb.Version, hb.Group, hb.MemberID, hb.Generation = 4, "g", "m", 1
	hr := kmsg.NewPtrHeartbeatResponse()
	hr.ErrorCode = 27
	s.ex("c", time.Second, time.Millisecond, hb, hr)
	join(2*time.Second, 2, "a", "b")
	gs := s.a.Groups().Groups[0].Generations
	if len(gs) != 2 || gs[1].Cause != causeSubscription || !strings.Contains(gs[1].CauseDetail, "c's subscription changed from a to a,b") ||
		!strings.Contains(gs[1].CauseDetail, "told by REBALANCE_IN_PROGRESS: c") {
		t.Errorf("%+v", gs)
	}
}

// TestTxnsEvictProducers: past the budget, each new transactional ID
// drops the oldest producer: the report keeps the newest, in first-seen
// order, counts the others, and no index (byPE, byPID, producers) keeps
// a dropped one.
func TestTxnsEvictProducers(t *testing.T) {
	const n = 3000
	a := New(Options{Transactions: true, MaxMemory: 256 << 10})
	for _, x := range initProducers(n) {
		a.Exchange(x)
	}
	tr := a.txns
	kept := tr.order.all()
	if len(kept) == 0 || len(kept) >= n || tr.dropped.Producers != int64(n-len(kept)) || tr.order.n != len(kept) {
		t.Fatalf("%d kept (list of %d), %d dropped, of %d", len(kept), tr.order.n, tr.dropped.Producers, n)
	}
	for i, p := range kept {
		if want := fmt.Sprintf("tx%07d", n-len(kept)+i); p.txnID != want {
			t.Fatalf("kept producer %d is %s, want %s (the newest, in order)", i, p.txnID, want)
		}
	}
	live := map[*producer]bool{}
	for _, p := range kept {
		live[p] = true
	}
	if len(tr.producers) != len(kept) || len(tr.byPE) != len(kept) {
		t.Errorf("%d producers and %d (producer ID, epoch) keys indexed, want %d", len(tr.producers), len(tr.byPE), len(kept))
	}
	for k, in := range tr.byPE {
		if !live[in.p] {
			t.Errorf("byPE %v: a dropped producer's instance", k)
		}
	}
	r := a.Transactions()
	if len(r.Producers) != len(kept) || r.Dropped.Producers != int64(n-len(kept)) || r.Producers[0].TransactionalID == nil || *r.Producers[0].TransactionalID != kept[0].txnID {
		t.Errorf("report: %d producers, %d dropped", len(r.Producers), r.Dropped.Producers)
	}
}

// A ConsumerGroupDescribe's members are the group's: one its own
// heartbeats never showed is a member with its epoch and assignment, one
// they did takes the newer epoch and assignment the coordinator states;
// the describe is an event of the group.
func TestGroupsDescribedMembers(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	hb.Group, hb.MemberID, hb.MemberEpoch, hb.SubscribedTopicNames = "g", "m1", 0, []string{"t"}
	hbr := kmsg.NewPtrConsumerGroupHeartbeatResponse()
	hbr.MemberID, hbr.MemberEpoch = kmsg.StringPtr("m1"), 5
	hbr.Assignment = &kmsg.ConsumerGroupHeartbeatResponseAssignment{Topics: []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic{
		{TopicID: [16]byte{1}, Partitions: []int32{0}}}}
	s.ex("c1", time.Second, time.Millisecond, hb, hbr)

	m1 := kmsg.NewConsumerGroupDescribeResponseGroupMember()
	m1.MemberID, m1.MemberEpoch = "m1", 7
	m1.Assignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{TopicID: [16]byte{1}, Topic: "t", Partitions: []int32{0, 1}}}
	m2 := kmsg.NewConsumerGroupDescribeResponseGroupMember()
	m2.MemberID, m2.MemberEpoch, m2.InstanceID = "m2", 6, kmsg.StringPtr("i2")
	m2.Assignment.TopicPartitions = []kmsg.AssignmentTopicPartition{{TopicID: [16]byte{1}, Topic: "t", Partitions: []int32{2}}}
	g := kmsg.NewConsumerGroupDescribeResponseGroup()
	g.Group, g.Epoch, g.AssignmentEpoch, g.Members = "g", 7, 7, []kmsg.ConsumerGroupDescribeResponseGroupMember{m1, m2}
	dq := kmsg.NewPtrConsumerGroupDescribeRequest()
	dq.Groups = []string{"g"}
	dr := kmsg.NewPtrConsumerGroupDescribeResponse()
	dr.Groups = []kmsg.ConsumerGroupDescribeResponseGroup{g}
	s.ex("admin", 2*time.Second, time.Millisecond, dq, dr)

	rep := s.a.Groups()
	if len(rep.Groups) != 1 {
		t.Fatalf("%d groups", len(rep.Groups))
	}
	gr := rep.Groups[0]
	var got []string
	for _, m := range gr.Members {
		x := m.MemberID + " epoch=" + fmt.Sprint(*m.MemberEpoch) + " assigned="
		for _, tp := range m.Assignment {
			x += fmt.Sprint(tp.Topic, tp.Partitions)
		}
		if m.GroupInstanceID != nil {
			x += " instance=" + *m.GroupInstanceID
		}
		got = append(got, x)
	}
	slices.Sort(got)
	if want := []string{"m1 epoch=7 assigned=t[0 1]", "m2 epoch=6 assigned=t[2] instance=i2"}; !slices.Equal(got, want) {
		t.Errorf("members\n got  %q\n want %q", got, want)
	}
	var described []string
	for _, ev := range gr.Timeline {
		if ev.Kind == "describe" {
			described = append(described, ev.Detail)
		}
	}
	if want := []string{"described: 2 members at group epoch 7, target assignment epoch 7"}; !slices.Equal(described, want) {
		t.Errorf("describe events %q, want %q", described, want)
	}
}

// A classic group seen only through an admin's DescribeGroups: its
// members (client ID, instance ID, the subscription and assignment their
// MemberMetadata and MemberAssignment hold), state, protocol type and
// assignor are the group's report, and the describe is an event. Before,
// kwire groups followed classic groups through JoinGroup, SyncGroup,
// Heartbeat and LeaveGroup alone: such a group was not in the report. A
// Connect group's member bytes are not the consumer protocol's, and
// these do not decode as Connect's (TestGroupsConnectWorkers has ones
// that do): its members are listed without subscription or assignment; a
// group the broker did not find is no group.
func TestGroupsDescribedClassic(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	meta := func(topics ...string) []byte {
		m := kmsg.ConsumerMemberMetadata{Version: 1, Topics: topics, Generation: -1}
		return m.AppendTo(nil)
	}
	assign := func(topic string, parts ...int32) []byte {
		a := kmsg.ConsumerMemberAssignment{Version: 1, Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: topic, Partitions: parts}}}
		return a.AppendTo(nil)
	}
	m1 := kmsg.NewDescribeGroupsResponseGroupMember()
	m1.MemberID, m1.ClientID, m1.ClientHost = "c1-1b2f", "c1", "/10.0.0.5"
	m1.ProtocolMetadata, m1.MemberAssignment = meta("orders", "payments"), assign("orders", 0, 1)
	m2 := kmsg.NewDescribeGroupsResponseGroupMember()
	m2.MemberID, m2.ClientID, m2.InstanceID = "c2-77aa", "c2", kmsg.StringPtr("i2")
	m2.ProtocolMetadata, m2.MemberAssignment = meta("orders", "payments"), assign("payments", 0)
	cg := kmsg.NewDescribeGroupsResponseGroup()
	cg.Group, cg.State, cg.ProtocolType, cg.Protocol = "cg", "Stable", "consumer", "range"
	cg.Members = []kmsg.DescribeGroupsResponseGroupMember{m1, m2}
	w1 := kmsg.NewDescribeGroupsResponseGroupMember()
	w1.MemberID, w1.ClientID = "connect-1-aa", "connect-1"
	w1.ProtocolMetadata, w1.MemberAssignment = []byte{0, 1, 0, 0, 0, 1, 'x'}, []byte{0, 1, 0}
	wg := kmsg.NewDescribeGroupsResponseGroup()
	wg.Group, wg.State, wg.ProtocolType, wg.Protocol = "connect-cluster", "Stable", "connect", "sessioned"
	wg.Members = []kmsg.DescribeGroupsResponseGroupMember{w1}
	gone := kmsg.NewDescribeGroupsResponseGroup()
	gone.Group, gone.ErrorCode = "nope", 69 // GROUP_ID_NOT_FOUND
	dq := kmsg.NewPtrDescribeGroupsRequest()
	dq.SetVersion(5)
	dq.Groups = []string{"cg", "connect-cluster", "nope"}
	dr := kmsg.NewPtrDescribeGroupsResponse()
	dr.Groups = []kmsg.DescribeGroupsResponseGroup{cg, wg, gone}
	s.ex("admin", time.Second, time.Millisecond, dq, dr)

	rep := s.a.Groups()
	byID := map[string]*GroupReport{}
	for i := range rep.Groups {
		byID[rep.Groups[i].GroupID] = &rep.Groups[i]
	}
	if len(rep.Groups) != 2 || byID["cg"] == nil || byID["connect-cluster"] == nil {
		t.Fatalf("groups %v", slices.Collect(maps.Keys(byID)))
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	members := func(g *GroupReport) []string {
		var out []string
		for _, m := range g.Members {
			x := m.MemberID + " client=" + str(m.ClientID) + " instance=" + str(m.GroupInstanceID) + " subscribed=" + fmt.Sprint(m.Subscription) + " assigned="
			for _, tp := range m.Assignment {
				x += fmt.Sprint(tp.Topic, tp.Partitions)
			}
			out = append(out, x)
		}
		return out
	}
	g := byID["cg"]
	if g.Protocol != "classic" || str(g.ProtocolType) != "consumer" || str(g.Assignor) != "range" || str(g.State) != "Stable" {
		t.Errorf("cg: protocol %s, type %s, assignor %s, state %s", g.Protocol, str(g.ProtocolType), str(g.Assignor), str(g.State))
	}
	if got, want := members(g), []string{
		"c1-1b2f client=c1 instance=<nil> subscribed=[orders payments] assigned=orders[0 1]",
		"c2-77aa client=c2 instance=i2 subscribed=[orders payments] assigned=payments[0]",
	}; !slices.Equal(got, want) {
		t.Errorf("cg members\n got  %q\n want %q", got, want)
	}
	var described []string
	for _, ev := range g.Timeline {
		if ev.Kind == "describe" {
			described = append(described, ev.Detail)
		}
	}
	if want := []string{"described: 2 members, state Stable, protocol type consumer, assignor range"}; !slices.Equal(described, want) {
		t.Errorf("cg describe events %q, want %q", described, want)
	}
	w := byID["connect-cluster"]
	if got, want := members(w), []string{"connect-1-aa client=connect-1 instance=<nil> subscribed=[] assigned="}; !slices.Equal(got, want) || str(w.ProtocolType) != "connect" || str(w.State) != "Stable" {
		t.Errorf("connect-cluster: type %s, state %s, members %q, want %q", str(w.ProtocolType), str(w.State), got, want)
	}
}

// TestRuleUnadvertisedClosed: a request at a version its broker did not
// advertise that the connection's close left unanswered says so (a broker
// closes the connection on a version it does not support, with no error
// to read); one still unanswered when the capture ended does not.
func TestRuleUnadvertisedClosed(t *testing.T) {
	s := newSynth(t, Options{Findings: true})
	for _, c := range []struct {
		client  string
		closing bool
	}{{"closed", true}, {"at-end", false}} {
		s.newConn()
		av := kmsg.NewPtrApiVersionsRequest()
		av.Version = 3
		avr := kmsg.NewPtrApiVersionsResponse()
		avr.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 3, MinVersion: 0, MaxVersion: 7}, {ApiKey: 18, MinVersion: 0, MaxVersion: 3}}
		s.ex(c.client, 0, time.Millisecond, av, avr)
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 8
		s.closing = c.closing
		s.ex(c.client, time.Second, 0, md, nil)
		s.closing = false
	}
	got := map[string]string{}
	for _, f := range s.findings(RuleUnadvertised) {
		got[*f.ClientID] = f.Detail
	}
	const closed = "; the connection closed with it unanswered (as a broker answers a version it does not support)"
	if len(got) != 2 || !strings.HasPrefix(got["closed"], "Metadata v8 sent; the broker advertised 0-7 on this connection (packet 2)") ||
		!strings.HasSuffix(got["closed"], closed) || strings.Contains(got["at-end"], "closed") {
		t.Errorf("%q", got)
	}
}

// TestGroupsSubscriptionsCharged: the topic names of a member's
// subscription (a DescribeGroups member's metadata, a JoinGroup's) are
// charged to MaxMemory, as its assignment is: 80 described groups of 10
// members each subscribing to 50 names of 100 bytes hold 4 MB of names,
// against a 1 MiB budget. They were not charged: every group was kept
// (a member costs its struct and ID), and so was every name, whatever
// the budget.
func TestGroupsSubscriptionsCharged(t *testing.T) {
	const budget = 1 << 20
	s := newSynth(t, Options{Groups: true, MaxMemory: budget})
	topics := make([]string, 50)
	for i := range topics {
		topics[i] = fmt.Sprintf("%03d", i) + strings.Repeat("t", 97)
	}
	meta := (&kmsg.ConsumerMemberMetadata{Version: 0, Topics: topics, Generation: -1}).AppendTo(nil)
	for g := range 80 {
		dg := kmsg.NewDescribeGroupsResponseGroup()
		dg.Group, dg.State, dg.ProtocolType, dg.Protocol = fmt.Sprintf("g%d", g), "Stable", "consumer", "range"
		for i := range 10 {
			m := kmsg.NewDescribeGroupsResponseGroupMember()
			m.MemberID, m.ClientID, m.ProtocolMetadata = fmt.Sprintf("m%d-%d", g, i), "c", meta
			dg.Members = append(dg.Members, m)
		}
		dq := kmsg.NewPtrDescribeGroupsRequest()
		dq.SetVersion(5)
		dq.Groups = []string{dg.Group}
		dr := kmsg.NewPtrDescribeGroupsResponse()
		dr.Groups = []kmsg.DescribeGroupsResponseGroup{dg}
		s.ex("admin", time.Duration(g+1)*time.Second, time.Millisecond, dq, dr)
	}
	rep := s.a.Groups()
	kept, members := 0, 0
	for _, g := range rep.Groups {
		for _, m := range g.Members {
			members++
			for _, name := range m.Subscription {
				kept += len(name)
			}
		}
	}
	if members == 0 || kept == 0 || kept > budget {
		t.Errorf("%d members kept with %d bytes of subscribed names, budget %d", members, kept, budget)
	}
	if used := s.a.mem.used; used > budget+16<<10 {
		t.Errorf("%d bytes charged, budget %d", used, budget)
	}
}

// TestGroupsDescribedLongStrings: a DescribeGroups group's protocol type
// and assignor longer than a peer's string is taken (256 bytes) are left
// out of the describe event as they are of the heading: the timeline
// showed a 5000-byte assignor whole.
func TestGroupsDescribedLongStrings(t *testing.T) {
	s := newSynth(t, Options{Groups: true})
	dg := kmsg.NewDescribeGroupsResponseGroup()
	dg.Group, dg.State, dg.ProtocolType, dg.Protocol = "g", "Stable", "consumer", strings.Repeat("x", 5000)
	dq := kmsg.NewPtrDescribeGroupsRequest()
	dq.SetVersion(5)
	dq.Groups = []string{"g"}
	dr := kmsg.NewPtrDescribeGroupsResponse()
	dr.Groups = []kmsg.DescribeGroupsResponseGroup{dg}
	s.ex("admin", time.Second, time.Millisecond, dq, dr)
	rep := s.a.Groups()
	if len(rep.Groups) != 1 || len(rep.Groups[0].Timeline) != 1 {
		t.Fatalf("groups %+v", rep.Groups)
	}
	g := rep.Groups[0]
	if g.Assignor != nil || g.Timeline[0].Detail != "described: 0 members, state Stable, protocol type consumer" {
		t.Errorf("assignor %v, event %q", g.Assignor, g.Timeline[0].Detail)
	}
}

// TestRuleUnadvertisedDuplicateKey: an ApiVersions response that lists a
// key twice is read as Kafka's clients read it, the last listing in
// effect: Metadata listed 0-12 then 0-7 makes v8 unadvertised, listed 0-7
// then 0-12 does not. The first listing was used.
func TestRuleUnadvertisedDuplicateKey(t *testing.T) {
	s := newSynth(t, Options{Findings: true})
	for _, c := range []struct {
		client       string
		first, later int16
	}{{"narrowed", 12, 7}, {"widened", 7, 12}} {
		s.newConn()
		av := kmsg.NewPtrApiVersionsRequest()
		av.Version = 3
		avr := kmsg.NewPtrApiVersionsResponse()
		avr.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 3, MinVersion: 0, MaxVersion: c.first},
			{ApiKey: 18, MinVersion: 0, MaxVersion: 3}, {ApiKey: 3, MinVersion: 0, MaxVersion: c.later}}
		s.ex(c.client, 0, time.Millisecond, av, avr)
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 8
		s.ex(c.client, time.Second, time.Millisecond, md, kmsg.NewPtrMetadataResponse())
	}
	got := map[string]string{}
	for _, f := range s.findings(RuleUnadvertised) {
		got[*f.ClientID] = f.Detail
	}
	if len(got) != 1 || !strings.HasPrefix(got["narrowed"], "Metadata v8 sent; the broker advertised 0-7 on this connection") {
		t.Errorf("unadvertised findings %q, want one for the client whose broker listed Metadata 0-7 last", got)
	}
}
