package analysis

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// This file follows producers: transactional IDs (KIP-98) and idempotent
// producers — InitProducerId (with KIP-360's epoch bump by the producer
// itself), AddPartitionsToTxn (batched from v4, KIP-890), AddOffsetsToTxn,
// TxnOffsetCommit, EndTxn (v5 bumps the epoch per transaction: KIP-890's
// transactions v2, where Produce v12+ adds partitions itself) and the
// sequence numbers of their Produce batches; and what consumers were told
// about them: the aborted transactions a read_committed Fetch response
// lists and the control batches (COMMIT and ABORT markers) they fetch.
//
// A producer instance is one InitProducerId result: a producer ID and
// epoch, followed through its EndTxn bumps. Requests find their instance
// by producer ID and epoch. An InitProducerId of the same transactional ID
// by another client (another client ID or address) that gets a newer
// epoch fences the older instance: its requests are then answered
// PRODUCER_FENCED, INVALID_PRODUCER_EPOCH or INVALID_TXN_STATE.

// Producer error codes the transaction logic gives meaning to.
const (
	errOutOfOrderSequence = 45
	errDuplicateSequence  = 46
	errInvalidEpoch       = 47
	errInvalidTxnState    = 48
	errProducerFenced     = 90
	errTxnAuthorization   = 53
)

// Errors a transactional producer retries its EndTxn on (Kafka's
// TransactionManager: the coordinator moved, is loading, or is still
// completing the transaction before).
const (
	errCoordinatorLoading      = 14
	errCoordinatorNotAvailable = 15
	errConcurrentTransactions  = 51
) // and errNotCoordinator (groups.go)

// endRetried reports whether an EndTxn answered code (or not answered)
// leaves its transaction to a retry: the transaction is not over.
func endRetried(answered bool, code int16) bool {
	switch {
	case !answered:
		return true
	case code == errCoordinatorLoading, code == errCoordinatorNotAvailable, code == errNotCoordinator, code == errConcurrentTransactions:
		return true
	}
	return false
}

// fencingCode reports whether an error tells a producer it was fenced.
func fencingCode(code int16) bool {
	return code == errProducerFenced || code == errInvalidEpoch || code == errInvalidTxnState
}

type pe struct {
	pid   int64
	epoch int16
}

type txnTracker struct {
	mem  *budget
	cut  bool                     // the capture left bytes out: a cut file (dissect.EventCut) or a gap (dissect.EventGap)
	cuts map[*reassembly.Conn]int // cuts and gaps per open connection
	// file is the capture file being read (Analyzer.SetFile); producers,
	// byPE, byPID and consumers find what it has seen, each file a
	// capture of its own: order and corder keep every file's.
	file      int
	producers map[string]*producer
	order     producerList // every file's, first seen first
	byPE      map[pe]*instance
	byPID     map[int64]*producer
	consumers map[string]*consumerAcc
	corder    []*consumerAcc
	dropped   TxnsDropped
}

// nextFile starts capture file number file, a capture of its own: its
// producer IDs, transactional IDs and consumers are new ones.
func (t *txnTracker) nextFile(file int) {
	t.file = file
	t.producers = map[string]*producer{}
	t.byPE = map[pe]*instance{}
	t.byPID = map[int64]*producer{}
	t.consumers = map[string]*consumerAcc{}
}

type producer struct {
	lk        link[producer] // in txnTracker.order
	file      int            // its capture file (Analyzer.SetFile)
	key       string
	txnID     string
	hasTxn    bool
	pids      []int64
	instances []*instance
	txns      []*txn
	seqs      map[seqKey]*seqState
	written   map[tpKey]*txnRecords // batches written outside transactions
	worder    []tpKey
	issues    []SeqIssue
	described []DescribedState // what DescribeProducers responses said of it (KIP-664), the first maxDescribed
	errs      map[int16]int64
	nTxns     int64
	first     time.Time
	last      time.Time
}

type instance struct {
	p           *producer
	clientID    string
	addr        string
	at          time.Time
	pid         int64
	epoch       int16
	epochs      []EpochChange
	reqPID      int64
	reqEpoch    int16
	timeoutMs   int32
	ref         Ref
	err         int16
	fencedBy    *instance
	fencedAt    time.Time
	fencedFile  int   // the capture file of the fencing InitProducerId
	fencedEpoch int16 // its epoch when fenced
	fences      *instance
	cur         *txn
	bump        bool // KIP-360: it asked for a bump of its own producer ID and epoch
}

type txn struct {
	inst        *instance
	pid         int64
	epoch       int16
	start, end  time.Time
	added       []tpKey
	groups      []string
	offsets     int
	records     map[tpKey]*txnRecords
	rorder      []tpKey
	outcome     string
	endError    int16
	produceErr  int16
	addErr      *TxnError
	commitAsked int8 // EndTxn's request: 1 commit, 0 abort, -1 none
	refs        []Ref
	endRef      Ref
}

type txnRecords struct {
	batches, records int64
	firstSeq         int32
	lastSeq          int32
	hasSeq           bool
}

// seqKey is a producer ID's partition; seqState its sequences at the
// latest epoch seen (a new epoch starts again from 0, KIP-98).
type seqKey struct {
	pid int64
	tp  tpKey
}

type seqState struct {
	epoch             int16
	lastBase, lastEnd int32 // the last batch written (answered without error)
	written           bool
	sentBase          int32 // the last batch sent
	sentFrame         int64
	sent              bool
	// conn and cuts are the connection of the last batch written and the
	// cuts it had then (txnTracker.cuts): in a cut file, a gap after it
	// on the same connection with no cut since is a real one.
	conn *reassembly.Conn
	cuts int
	// writtenAt is the capture time of the request of the last batch
	// written: a batch whose request was captured before it is an earlier
	// send read late (its exchange completed after, as one whose response
	// the capture lost does at its connection's end), not a duplicate.
	writtenAt time.Time
}

type consumerAcc struct {
	file      int // its capture file (Analyzer.SetFile)
	clientID  string
	isolation map[string]bool
	fetches   int64
	topics    map[string]bool
	aborted   []AbortedTxnReport
	markers   []MarkerReport
	commits   int64
	aborts    int64
	txnBatch  int64
	first     time.Time
}

func newTxnTracker(mem *budget) *txnTracker {
	return &txnTracker{mem: mem, producers: map[string]*producer{}, byPE: map[pe]*instance{}, byPID: map[int64]*producer{},
		consumers: map[string]*consumerAcc{}}
}

func (t *txnTracker) producer(key, txnID string, hasTxn bool, at time.Time) *producer {
	p := t.producers[key]
	if p == nil {
		p = &producer{file: t.file, key: key, txnID: txnID, hasTxn: hasTxn, seqs: map[seqKey]*seqState{}, errs: map[int16]int64{}}
		t.producers[key] = p
		t.order.push(p)
		t.mem.take(costProducer + int64(len(key)))
		t.evictProducers(p)
	}
	if p.first.IsZero() || at.Before(p.first) {
		p.first = at
	}
	if at.After(p.last) {
		p.last = at
	}
	return p
}

func (p *producer) addPID(pid int64) {
	if pid >= 0 && !slices.Contains(p.pids, pid) {
		p.pids = append(p.pids, pid)
	}
}

// producerOf finds the producer of a transactional ID, else of a
// producer ID; nil when neither is known.
func (t *txnTracker) producerOf(fx *facts.Exchange, pid int64, at time.Time) *producer {
	if fx.Producer.HasTxnID && fx.Producer.TransactionalID != "" {
		return t.producer("txn:"+fx.Producer.TransactionalID, fx.Producer.TransactionalID, true, at)
	}
	if p := t.byPID[pid]; p != nil && pid >= 0 {
		return t.producer(p.key, p.txnID, p.hasTxn, at)
	}
	if pid >= 0 {
		p := t.producer("pid:"+strconv.FormatInt(pid, 10), "", false, at)
		p.addPID(pid)
		t.byPID[pid] = p
		return p
	}
	return nil
}

// instanceOf finds the instance that uses pid at epoch, else the latest
// of p; nil when p has none.
func (t *txnTracker) instanceOf(p *producer, pid int64, epoch int16, e *xinfo) *instance {
	if in := t.byPE[pe{pid, epoch}]; in != nil && in.p == p {
		return in
	}
	for i := len(p.instances) - 1; i >= 0; i-- {
		if in := p.instances[i]; in.pid == pid && in.clientID == e.x.ClientID {
			return in
		}
	}
	if pid < 0 && len(p.instances) > 0 {
		return p.instances[len(p.instances)-1]
	}
	// Not initialized in the capture: an instance of its own.
	in := &instance{p: p, clientID: e.x.ClientID, addr: addrOf(e), at: e.at, pid: pid, epoch: epoch, reqPID: -1, reqEpoch: -1, timeoutMs: -1}
	p.instances = append(p.instances, in)
	t.mem.take(costProducer)
	if pid >= 0 {
		t.byPE[pe{pid, epoch}] = in
	}
	return in
}

// hostOf is the address of "host:port" (the string itself when it is
// none).
func hostOf(addr string) string {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return ap.Addr().String()
	}
	return addr
}

func addrOf(e *xinfo) string {
	if e.x.Client.IsValid() {
		return e.x.Client.String()
	}
	return ""
}

func (t *txnTracker) exchange(e *xinfo) {
	fx := e.fx
	switch e.x.APIKey {
	case protocol.KeyInitProducerId:
		t.initProducer(e)
	case protocol.KeyProduce:
		t.produce(e)
	case protocol.KeyAddPartitionsToTxn:
		t.addPartitions(e)
	case protocol.KeyAddOffsetsToTxn, protocol.KeyTxnOffsetCommit:
		t.addOffsets(e)
	case protocol.KeyEndTxn:
		t.endTxn(e)
	case protocol.KeyFetch:
		t.fetch(e)
	case protocol.KeyDescribeProducers:
		t.describeProducers(e)
	}
	_ = fx
}

func (t *txnTracker) initProducer(e *xinfo) {
	fx := e.fx
	pr := &fx.Producer
	code := e.topError()
	if !pr.HasTxnID && (!pr.HasNew || pr.NewID < 0) {
		return
	}
	var p *producer
	if pr.HasTxnID && pr.TransactionalID != "" {
		p = t.producer("txn:"+pr.TransactionalID, pr.TransactionalID, true, e.at)
	} else {
		p = t.producerOf(fx, pr.NewID, e.at)
	}
	if p == nil {
		return
	}
	if code != 0 {
		p.errs[code]++
	}
	// A retry of an attempt the coordinator put off (CONCURRENT_TRANSACTIONS,
	// a coordinator moving or loading) or left unanswered is the same
	// instance, not another one.
	var in *instance
	if n := len(p.instances); n > 0 {
		// The retry goes to another broker when the coordinator moved: the
		// same client is the same client ID from the same host.
		if last := p.instances[n-1]; last.pid < 0 && last.clientID == e.x.ClientID && hostOf(last.addr) == hostOf(addrOf(e)) && endRetried(last.err != 0, last.err) {
			in = last
			in.ref, in.err = e.ref, code
		}
	}
	fresh := in == nil
	if fresh {
		in = &instance{p: p, clientID: e.x.ClientID, addr: addrOf(e), at: e.at, pid: -1, epoch: -1, reqPID: -1, reqEpoch: -1,
			ref: e.ref, err: code, timeoutMs: -1}
	}
	if pr.HasID {
		in.reqPID = pr.ID
	}
	if pr.HasEpoch {
		in.reqEpoch = pr.Epoch
	}
	in.bump = in.reqPID >= 0
	if pr.HasNew && code == 0 {
		in.pid, in.epoch = pr.NewID, pr.NewEpoch
		in.epochs = append(in.epochs, EpochChange{Time: Time(e.done), ProducerID: pr.NewID, Epoch: pr.NewEpoch, By: "InitProducerId", Ref: e.ref})
		p.addPID(pr.NewID)
		if !p.hasTxn {
			t.byPID[pr.NewID] = p
		}
		// An older live instance of the same transactional ID, of another
		// client, is fenced by a newer epoch (or another producer ID,
		// given when the epoch is exhausted). The same epoch again is no
		// fencing: the same producer seen twice (a capture replayed or
		// merged with itself), or one that cannot be told from it.
		if p.hasTxn {
			for _, old := range p.instances {
				newer := in.pid != old.pid || in.epoch > old.epoch
				if old.fencedBy == nil && old.pid >= 0 && newer && (old.clientID != in.clientID || old.addr != in.addr) && !in.bump {
					old.fencedBy, old.fencedAt, old.fencedEpoch, old.fencedFile = in, e.done, old.epoch, e.file
					if in.fences == nil {
						in.fences = old
					}
				}
			}
		}
		// KIP-939: asked to keep the transaction it had prepared, the
		// coordinator names it (OngoingTxnProducerId and Epoch): the
		// producer that fenced its preparer completes it, with its own
		// ID and epoch. It is that instance's open transaction now, not
		// one left open by the one fenced.
		if pr.KeepPrepared && pr.HasOngoing && pr.OngoingID >= 0 {
			if old := t.byPE[pe{pr.OngoingID, pr.OngoingEpoch}]; old != nil && old != in && old.p == p && old.cur != nil && in.cur == nil {
				in.cur, old.cur = old.cur, nil
			}
		}
		t.byPE[pe{in.pid, in.epoch}] = in
	}
	if fresh {
		p.instances = append(p.instances, in)
		t.mem.take(costProducer + int64(len(in.clientID)))
	}
}

// evictProducers drops the oldest producers with no open transaction
// (but keep) while the budget is exceeded, and counts them. Dropping one
// costs what it holds, not what the tracker holds: it leaves order (a
// list) in constant time, and byPE by the keys of its own instances
// (an instance is found there by its producer ID and epoch, the key
// moving with them, endTxn). Once the budget is exceeded every new
// producer drops one: a scan of order or byPE per drop made 160,000
// InitProducerIds take 470 s.
func (t *txnTracker) evictProducers(keep *producer) {
	for p := t.order.first; t.mem.over() && p != nil; {
		next := next[producer](p)
		if p == keep || p.open() {
			p = next
			continue
		}
		t.order.remove(p)
		if t.producers[p.key] == p { // not another file's
			delete(t.producers, p.key)
		}
		for _, pid := range p.pids {
			if t.byPID[pid] == p {
				delete(t.byPID, pid)
			}
		}
		for _, in := range p.instances {
			if k := (pe{in.pid, in.epoch}); t.byPE[k] == in {
				delete(t.byPE, k)
			}
		}
		t.mem.give(p.cost())
		t.dropped.Producers++
		p = next
	}
}

// producerList is the list of producers txnTracker.order holds.
type producerList = list[producer, *producer]

func (p *producer) link() *link[producer] { return &p.lk }

// open reports whether one of p's instances is in a transaction.
func (p *producer) open() bool {
	for _, in := range p.instances {
		if in.cur != nil {
			return true
		}
	}
	return false
}

// cost is what p was charged, about.
func (p *producer) cost() int64 {
	n := int64(costProducer+len(p.key)) + int64(len(p.instances))*costProducer + int64(len(p.seqs))*costState +
		int64(len(p.issues))*costEvent + int64(len(p.worder))*costTP + int64(len(p.described))*costEvent
	for _, x := range p.txns {
		n += costTxn + int64(len(x.rorder))*costTP
	}
	return n
}

// maxDescribed bounds a producer's DescribedState entries: an admin may
// describe its partitions over and over.
const maxDescribed = 16

// describeProducers takes what a DescribeProducers response (KIP-664)
// says of each producer active on a partition: the producer instance
// with that ID and epoch, else the producer of that ID, else a producer
// of its own (one the capture holds no other exchange of) gets the
// partition's state as the broker holds it — its epoch, last sequence
// and, when it has one, where its open transaction began.
func (t *txnTracker) describeProducers(e *xinfo) {
	if !e.answered {
		return
	}
	fx := e.fx
	for i := range fx.Topics {
		tp := &fx.Topics[i]
		for j := range tp.Partitions {
			part := &tp.Partitions[j]
			if part.Error != 0 {
				continue
			}
			for _, ap := range part.Producers {
				if ap.ProducerID < 0 {
					continue
				}
				var p *producer
				if ap.ProducerEpoch >= 0 && ap.ProducerEpoch <= math.MaxInt16 {
					if in := t.byPE[pe{ap.ProducerID, int16(ap.ProducerEpoch)}]; in != nil {
						p = in.p
					}
				}
				if p == nil {
					p = t.byPID[ap.ProducerID]
				}
				if p == nil {
					p = t.producerOf(&facts.Exchange{}, ap.ProducerID, e.at)
				}
				if p == nil || len(p.described) >= maxDescribed {
					continue
				}
				p.described = append(p.described, DescribedState{Time: Time(e.at), ClientID: strp(e.x.ClientID), Topic: tp.Label(),
					Partition: part.Index, ProducerID: ap.ProducerID, ProducerEpoch: ap.ProducerEpoch, LastSequence: ap.LastSequence,
					LastTimestamp: ap.LastTimestamp, CoordinatorEpoch: ap.CoordinatorEpoch, CurrentTxnStartOffset: ap.CurrentTxnStartOffset,
					Ref: e.ref})
				t.mem.take(costEvent + int64(len(tp.Label())+len(e.x.ClientID)))
			}
		}
	}
}

// txnOf returns the open transaction of instance in, begun by e when none.
func (t *txnTracker) txnOf(in *instance, e *xinfo, epoch int16) *txn {
	if in.cur != nil {
		return in.cur
	}
	x := &txn{inst: in, pid: in.pid, epoch: epoch, start: e.at, records: map[tpKey]*txnRecords{}, commitAsked: -1}
	in.cur = x
	p := in.p
	p.txns = append(p.txns, x)
	p.nTxns++
	t.mem.take(costTxn)
	t.trim(p)
	return x
}

// trim drops p's oldest closed transactions while the budget is exceeded.
func (t *txnTracker) trim(p *producer) {
	for t.mem.over() && len(p.txns) > 1 && p.txns[0].outcome != "" {
		t.mem.give(costTxn + int64(len(p.txns[0].rorder))*costTP)
		p.txns = slices.Delete(p.txns, 0, 1)
		t.dropped.Transactions++
	}
}

func (x *txn) ref(r Ref) {
	if len(x.refs) < 16 {
		x.refs = append(x.refs, r)
	}
}

func (t *txnTracker) produce(e *xinfo) {
	fx := e.fx
	for i := range fx.Topics {
		tp := &fx.Topics[i]
		for j := range tp.Partitions {
			pa := &tp.Partitions[j]
			r := pa.Records
			if r == nil || !r.HasProducer || r.ProducerID < 0 {
				continue
			}
			p := t.producerOf(fx, r.ProducerID, e.at)
			if p == nil {
				continue
			}
			p.addPID(r.ProducerID)
			k := tpKey{tp.Label(), pa.Index}
			code := pa.Error
			if code == 0 {
				code = e.topError()
			}
			if code != 0 {
				p.errs[code]++
			}
			t.sequence(p, e, k, r, code)
			if r.Transactional == 0 {
				if code == 0 && e.answered {
					t.written(p, k, r)
				}
				continue
			}
			in := t.instanceOf(p, r.ProducerID, r.ProducerEpoch, e)
			x := t.txnOf(in, e, r.ProducerEpoch)
			x.ref(e.ref)
			if code != 0 {
				if x.produceErr == 0 {
					x.produceErr = code
				}
				continue
			}
			if !e.answered {
				continue
			}
			tr := x.records[k]
			if tr == nil {
				tr = &txnRecords{}
				x.records[k] = tr
				x.rorder = append(x.rorder, k)
				t.mem.take(costTP)
			}
			tr.add(r)
		}
	}
}

// written counts an idempotent batch written outside a transaction.
func (t *txnTracker) written(p *producer, k tpKey, r *facts.Records) {
	if p.written == nil {
		p.written = map[tpKey]*txnRecords{}
	}
	w := p.written[k]
	if w == nil {
		w = &txnRecords{}
		p.written[k] = w
		p.worder = append(p.worder, k)
		t.mem.take(costTP + int64(len(k.topic)))
	}
	w.add(r)
}

func (w *txnRecords) add(r *facts.Records) {
	w.batches++
	if r.Count > 0 {
		w.records += r.Count
	}
	if r.BaseSequence >= 0 {
		if !w.hasSeq {
			w.firstSeq, w.hasSeq = r.BaseSequence, true
		}
		w.lastSeq = r.BaseSequence + max(r.ProducerRecords-1, 0)
	}
}

// sequence checks a batch's sequence numbers against what the producer
// sent and wrote to the partition before (KIP-98: each batch continues
// from the last one written, per producer ID, epoch and partition).
func (t *txnTracker) sequence(p *producer, e *xinfo, k tpKey, r *facts.Records, code int16) {
	if r.BaseSequence < 0 {
		return
	}
	sk := seqKey{r.ProducerID, k}
	s := p.seqs[sk]
	switch {
	case s == nil:
		s = &seqState{epoch: r.ProducerEpoch}
		p.seqs[sk] = s
		t.mem.take(costState + int64(len(k.topic)))
	case s.epoch != r.ProducerEpoch:
		*s = seqState{epoch: r.ProducerEpoch}
	}
	n := max(r.ProducerRecords, 1)
	end := r.BaseSequence + n - 1
	issue := func(kind, detail string, first int64) {
		if len(p.issues) >= 256 {
			t.dropped.SequenceIssues++
			return
		}
		p.issues = append(p.issues, SeqIssue{Time: Time(e.at), Kind: kind, ClientID: strp(e.x.ClientID), Topic: k.topic, Partition: k.part,
			ProducerID: r.ProducerID, ProducerEpoch: r.ProducerEpoch, BaseSequence: r.BaseSequence, Records: n, Detail: detail, Ref: e.ref, file: e.file, first: first})
		t.mem.take(costEvent)
	}
	switch {
	case s.sent && r.BaseSequence == s.sentBase:
		issue(seqRetry, fmt.Sprintf("sequence %d sent again (first at packet %d)", r.BaseSequence, s.sentFrame), s.sentFrame)
	case s.written && r.BaseSequence <= s.lastEnd && r.BaseSequence >= 0 && !e.at.Before(s.writtenAt):
		issue(seqDuplicate, fmt.Sprintf("sequence %d-%d overlaps what was written (up to %d)", r.BaseSequence, end, s.lastEnd), 0)
	case s.written && r.BaseSequence > s.lastEnd+1 && (!t.cut || s.conn == e.x.Conn && s.cuts == t.cuts[e.x.Conn]):
		// (In a cut file, kwire read -w's, or a capture with bytes
		// lost, the batches between may be in exchanges left out or
		// cut by a gap, unless none was cut between them.)
		issue(seqGap, fmt.Sprintf("sequence %d follows %d: %d missing (lost, or sent on a connection not captured)", r.BaseSequence, s.lastEnd, r.BaseSequence-s.lastEnd-1), 0)
	}
	switch code {
	case errOutOfOrderSequence:
		issue(seqOutOfOrder, fmt.Sprintf("the broker refused sequence %d: %s", r.BaseSequence, errorMeaning(code)), 0)
	case errDuplicateSequence:
		issue(seqDuplicate, fmt.Sprintf("the broker had sequence %d already: %s", r.BaseSequence, errorMeaning(code)), 0)
	}
	if !s.sent || r.BaseSequence != s.sentBase {
		// A new sequence: its first send. A retry keeps the first's packet.
		s.sentBase, s.sentFrame = r.BaseSequence, e.ref.Frame
	}
	s.sent = true
	if code == 0 && e.answered && (!s.written || !e.at.Before(s.writtenAt)) {
		// (An earlier send read late does not move the last written
		// batch back.)
		s.written, s.lastBase, s.lastEnd = true, r.BaseSequence, end
		s.conn, s.cuts = e.x.Conn, t.cuts[e.x.Conn]
		s.writtenAt = e.at
	}
}

func (t *txnTracker) txnRequest(e *xinfo) (*instance, *producer) {
	pr := &e.fx.Producer
	if !pr.HasTxnID || pr.TransactionalID == "" {
		return nil, nil
	}
	p := t.producer("txn:"+pr.TransactionalID, pr.TransactionalID, true, e.at)
	pid, epoch := int64(-1), int16(-1)
	if pr.HasID {
		pid = pr.ID
	}
	if pr.HasEpoch {
		epoch = pr.Epoch
	}
	p.addPID(pid)
	return t.instanceOf(p, pid, epoch, e), p
}

func (t *txnTracker) addPartitions(e *xinfo) {
	fx := e.fx
	// v4+ batches transactions (from brokers, KIP-890): each names its own,
	// and its topics, errors and partitions are its entry's
	// (facts.Topic.Owner, facts.Error.Scope).
	for i := range fx.Transactions {
		tr := &fx.Transactions[i]
		if tr.VerifyOnly {
			// A broker checking a produce against the transaction
			// (KIP-890): it adds nothing and starts no transaction; its
			// errors (INVALID_TXN_STATE: a late or zombie produce) count
			// for the producer when it is known.
			if p := t.producers["txn:"+tr.TransactionalID]; p != nil {
				owner := facts.Scope{Role: protocol.RoleTransactionalID, ID: tr.TransactionalID}
				for j := range fx.Errors {
					if er := &fx.Errors[j]; er.Scope == owner || er.Topic >= 0 && fx.Topics[er.Topic].Owner == owner {
						p.errs[er.Code]++
					}
				}
			}
			continue
		}
		sub := *fx
		sub.Producer = facts.Producer{TransactionalID: tr.TransactionalID, HasTxnID: true, ID: tr.ProducerID, HasID: tr.HasProducer,
			Epoch: tr.ProducerEpoch, HasEpoch: tr.HasProducer}
		se := *e
		se.fx = &sub
		in, p := t.txnRequest(&se)
		if in == nil {
			continue
		}
		owner := facts.Scope{Role: protocol.RoleTransactionalID, ID: tr.TransactionalID}
		x := t.txnOf(in, e, in.epoch)
		x.ref(e.ref)
		// An error of the whole request (v4's top-level ErrorCode) is
		// every transaction's, and adds nothing.
		whole := false
		for j := range fx.Errors {
			er := &fx.Errors[j]
			top := er.Topic < 0 && er.Scope.Role == protocol.RoleNone
			if top || er.Scope == owner || er.Topic >= 0 && fx.Topics[er.Topic].Owner == owner {
				p.errs[er.Code]++
				x.addError(e, er.Code)
				whole = whole || top
			}
		}
		for j := range fx.Topics {
			if tp := &fx.Topics[j]; tp.Owner == owner && !whole {
				x.addTopic(tp)
			}
		}
	}
	if len(fx.Transactions) > 0 {
		return
	}
	in, p := t.txnRequest(e)
	if in == nil {
		return
	}
	p.countErrs(e)
	x := t.txnOf(in, e, e.fx.Producer.Epoch)
	x.ref(e.ref)
	for i := range fx.Topics {
		x.addTopic(&fx.Topics[i])
	}
	for i := range fx.Errors {
		x.addError(e, fx.Errors[i].Code)
	}
}

// addTopic adds the partitions of tp its AddPartitionsToTxn did not
// refuse: a partition with an error was not added.
func (x *txn) addTopic(tp *facts.Topic) {
	for _, part := range tp.Partitions {
		if part.Error == 0 && tp.Error == 0 {
			x.add(tpKey{tp.Label(), part.Index})
		}
	}
}

// addError keeps the first error a request adding to the transaction
// (AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit) was answered.
func (x *txn) addError(e *xinfo, code int16) {
	if code != 0 && x.addErr == nil {
		x.addErr = &TxnError{API: protocol.APIName(e.x.APIKey), Error: protocol.KafkaErrorName(code), Ref: e.ref}
	}
}

func (p *producer) countErrs(e *xinfo) {
	for i := range e.fx.Errors {
		p.errs[e.fx.Errors[i].Code]++
	}
}

func (x *txn) add(k tpKey) {
	if !slices.Contains(x.added, k) {
		x.added = append(x.added, k)
	}
}

func (t *txnTracker) addOffsets(e *xinfo) {
	in, p := t.txnRequest(e)
	if in == nil {
		return
	}
	p.countErrs(e)
	x := t.txnOf(in, e, e.fx.Producer.Epoch)
	x.ref(e.ref)
	if g := e.fx.Group.ID; g != "" && !slices.Contains(x.groups, g) {
		x.groups = append(x.groups, g)
	}
	for i := range e.fx.Errors {
		x.addError(e, e.fx.Errors[i].Code)
	}
	if e.x.APIKey == protocol.KeyTxnOffsetCommit {
		for i := range e.fx.Topics {
			x.offsets += len(e.fx.Topics[i].Partitions)
		}
	}
}

func (t *txnTracker) endTxn(e *xinfo) {
	in, p := t.txnRequest(e)
	if in == nil {
		return
	}
	code := e.topError()
	if code != 0 {
		p.errs[code]++
	}
	x := t.txnOf(in, e, e.fx.Producer.Epoch)
	x.ref(e.ref)
	x.end, x.endRef, x.endError, x.commitAsked = e.done, e.ref, code, e.fx.Commit
	if x.end.IsZero() {
		x.end = e.at
	}
	switch {
	case !e.answered:
		x.outcome = outcomeUnanswered
	case code == 0 && e.fx.Commit == 1:
		x.outcome = outcomeCommit
	case code == 0:
		x.outcome = outcomeAbort
	case fencingCode(code) && in.fencedBy != nil:
		x.outcome = outcomeFenced
	default:
		x.outcome = outcomeFailed
	}
	if endRetried(e.answered, code) {
		// Not over: the producer sends EndTxn again (on this connection or
		// another), and the transaction goes on to that answer.
		t.trim(p)
		return
	}
	in.cur = nil
	// KIP-890: EndTxn v5+ answers with the epoch of the next transaction.
	if pr := &e.fx.Producer; pr.HasNew && code == 0 && pr.NewEpoch >= 0 {
		delete(t.byPE, pe{in.pid, in.epoch})
		if pr.NewID >= 0 {
			in.pid = pr.NewID
			p.addPID(pr.NewID)
		}
		in.epoch = pr.NewEpoch
		in.epochs = append(in.epochs, EpochChange{Time: Time(e.done), ProducerID: in.pid, Epoch: in.epoch, By: "EndTxn", Ref: e.ref})
		t.byPE[pe{in.pid, in.epoch}] = in
	}
	t.trim(p)
}

// fetch follows what consumers are told about transactions.
func (t *txnTracker) fetch(e *xinfo) {
	if !e.answered {
		return
	}
	fx := e.fx
	var c *consumerAcc
	get := func() *consumerAcc {
		if c == nil {
			id := e.x.ClientID
			c = t.consumers[id]
			if c == nil {
				c = &consumerAcc{file: t.file, clientID: id, isolation: map[string]bool{}, topics: map[string]bool{}, first: e.at}
				t.consumers[id] = c
				t.corder = append(t.corder, c)
				t.mem.take(costProducer + int64(len(id)))
			}
		}
		return c
	}
	iso := fx.IsolationName
	for i := range fx.Topics {
		tp := &fx.Topics[i]
		for j := range tp.Partitions {
			pa := &tp.Partitions[j]
			r := pa.Records
			hasTxn := r != nil && (r.Transactional > 0 || r.Control > 0)
			if !hasTxn && len(pa.Aborted) == 0 && fx.Isolation != 1 {
				continue
			}
			c := get()
			c.topics[tp.Label()] = true
			for _, a := range pa.Aborted {
				ar := AbortedTxnReport{Topic: tp.Label(), Partition: pa.Index, ProducerID: a.ProducerID, FirstOffset: a.FirstOffset, Ref: e.ref}
				if !slices.ContainsFunc(c.aborted, func(x AbortedTxnReport) bool {
					return x.Topic == ar.Topic && x.Partition == ar.Partition && x.ProducerID == ar.ProducerID && x.FirstOffset == ar.FirstOffset
				}) && len(c.aborted) < 256 {
					c.aborted = append(c.aborted, ar)
					t.mem.take(costEvent)
				}
			}
			if r == nil {
				continue
			}
			c.txnBatch += int64(r.Transactional)
			for _, m := range r.Markers {
				mr := MarkerReport{Topic: tp.Label(), Partition: pa.Index, ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
					Offset: m.Offset, Commit: m.Commit, Ref: e.ref}
				if !slices.ContainsFunc(c.markers, func(x MarkerReport) bool {
					return x.Topic == mr.Topic && x.Partition == mr.Partition && x.Offset == mr.Offset
				}) {
					if m.Commit {
						c.commits++
					} else {
						c.aborts++
					}
					if len(c.markers) < 256 {
						c.markers = append(c.markers, mr)
						t.mem.take(costEvent)
					}
				}
			}
		}
	}
	if c != nil {
		c.fetches++
		if iso != "" {
			c.isolation[iso] = true
		}
	}
}

// Transaction outcomes (TxnReport.Outcome).
const (
	outcomeCommit     = "commit"
	outcomeAbort      = "abort"
	outcomeFenced     = "fenced"     // EndTxn refused because another instance took over
	outcomeFailed     = "failed"     // EndTxn answered with another error
	outcomeUnanswered = "unanswered" // EndTxn sent, no answer captured
	outcomeOpen       = "open"       // no EndTxn captured
)

// Sequence issues (SeqIssue.Kind).
const (
	seqRetry      = "retry"        // the same base sequence sent again (a producer retry)
	seqDuplicate  = "duplicate"    // a sequence already written (or DUPLICATE_SEQUENCE_NUMBER)
	seqGap        = "gap"          // sequences skipped
	seqOutOfOrder = "out-of-order" // OUT_OF_ORDER_SEQUENCE_NUMBER
)

// TxnsReport is `kwire txns --json`.
type TxnsReport struct {
	Producers      []ProducerReport `json:"producers"`
	Consumers      []ConsumerReport `json:"consumers"`
	Dropped        TxnsDropped      `json:"dropped"`
	MaxMemoryBytes int64            `json:"maxMemoryBytes"`
	// CutExchanges counts the exchanges whose request or response a gap,
	// the capture's snap length or its end cut (dissect.Frame.Cut): not
	// decoded, so what they said of producers is not in the report.
	CutExchanges int64 `json:"cutExchanges"`
}

// TxnsDropped counts what the memory budget made the report leave out.
type TxnsDropped struct {
	Producers      int64 `json:"producers"`
	Transactions   int64 `json:"transactions"`
	SequenceIssues int64 `json:"sequenceIssues"`
}

// Any reports whether anything was dropped.
func (d TxnsDropped) Any() bool { return d != TxnsDropped{} }

// ProducerReport is one transactional ID, or one idempotent producer ID.
type ProducerReport struct {
	TransactionalID *string `json:"transactionalId" jsonschema:"nullable"`
	// File is the capture file the producer was seen in when several
	// were read, each a capture of its own (without --merge).
	File string `json:"file,omitempty"`
	// ProducerIDs are the producer IDs it had, in order.
	ProducerIDs  []int64          `json:"producerIds"`
	First        Time             `json:"first"`
	Last         Time             `json:"last"`
	Instances    []InstanceReport `json:"instances"`
	Transactions []TxnReport      `json:"transactions"`
	// TransactionCount counts the transactions seen, kept or dropped.
	TransactionCount int64 `json:"transactionCount"`
	// Records are the batches it wrote outside transactions (an
	// idempotent producer's), per partition, with their sequences.
	Records   []TxnRecordsReport `json:"records"`
	Sequences []SeqIssue         `json:"sequenceIssues"`
	// Described is what an admin's DescribeProducers responses (KIP-664)
	// said of it, partition by partition: the first 16.
	Described []DescribedState `json:"described"`
	Errors    []ErrorCount     `json:"errors"`
}

// DescribedState is a producer's state on a partition as a
// DescribeProducers response gives it (KIP-664).
type DescribedState struct {
	Time      Time    `json:"time"`
	ClientID  *string `json:"clientId" jsonschema:"nullable"` // the admin's; null when null or empty
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	// ProducerID and ProducerEpoch are the broker's; LastSequence is the
	// last sequence number it wrote there and LastTimestamp that write's
	// time (ms since the epoch), -1 none; CoordinatorEpoch its
	// transaction coordinator's epoch (-1 none); CurrentTxnStartOffset
	// the offset its open transaction began at, -1 when none (one open
	// long is what KIP-664 calls hanging).
	ProducerID            int64 `json:"producerId"`
	ProducerEpoch         int32 `json:"producerEpoch"`
	LastSequence          int32 `json:"lastSequence"`
	LastTimestamp         int64 `json:"lastTimestamp"`
	CoordinatorEpoch      int32 `json:"coordinatorEpoch"`
	CurrentTxnStartOffset int64 `json:"currentTxnStartOffset"`
	Ref                   Ref   `json:"ref"`
}

// InstanceReport is one InitProducerId result (or a producer first seen
// in its requests), followed through its epochs.
type InstanceReport struct {
	ClientID *string `json:"clientId" jsonschema:"nullable"`
	Client   *string `json:"client" jsonschema:"nullable"`
	Time     Time    `json:"time"`
	// ProducerID and ProducerEpoch are what it was given (its first);
	// RequestedProducerID and RequestedEpoch what it asked (KIP-360: a
	// producer bumping its own epoch names them; -1 otherwise).
	ProducerID          int64         `json:"producerId"`
	ProducerEpoch       int16         `json:"producerEpoch"`
	RequestedProducerID int64         `json:"requestedProducerId"`
	RequestedEpoch      int16         `json:"requestedProducerEpoch"`
	Error               *string       `json:"error" jsonschema:"nullable"`
	Epochs              []EpochChange `json:"epochs"`
	// FencedBy is the instance (its client ID and epoch) whose
	// InitProducerId fenced this one; Fences the one it fenced.
	FencedBy *FenceRef `json:"fencedBy" jsonschema:"nullable"`
	Fences   *FenceRef `json:"fences" jsonschema:"nullable"`
	Ref      Ref       `json:"ref"`
}

// FenceRef names a producer instance.
type FenceRef struct {
	ClientID      *string `json:"clientId" jsonschema:"nullable"` // null when null or empty
	Client        string  `json:"client"`
	ProducerEpoch int16   `json:"producerEpoch"`
	Time          Time    `json:"time"`
}

// EpochChange is an epoch a producer instance was given.
type EpochChange struct {
	Time       Time   `json:"time"`
	ProducerID int64  `json:"producerId"`
	Epoch      int16  `json:"producerEpoch"`
	By         string `json:"by"` // "InitProducerId", "EndTxn" (KIP-890 bump)
	Ref        Ref    `json:"ref"`
}

// TxnReport is one transaction.
type TxnReport struct {
	ClientID      *string `json:"clientId" jsonschema:"nullable"`
	ProducerID    int64   `json:"producerId"`
	ProducerEpoch int16   `json:"producerEpoch"`
	Start         Time    `json:"startTime"` // its first AddPartitionsToTxn, AddOffsetsToTxn or transactional Produce
	End           Time    `json:"endTime"`   // its EndTxn response
	DurationMs    *Millis `json:"durationMs" jsonschema:"nullable"`
	// Outcome is "commit", "abort", "fenced" (refused: another instance
	// took over), "failed" (another error), "unanswered" or "open".
	Outcome string `json:"outcome"`
	// EndTxn is what its EndTxn asked: "COMMIT" or "ABORT"; null when
	// none was captured.
	EndTxn       *string            `json:"endTxn" jsonschema:"nullable"`
	Error        *string            `json:"error" jsonschema:"nullable"`        // EndTxn's
	ProduceError *string            `json:"produceError" jsonschema:"nullable"` // the first of its Produce responses
	AddError     *TxnError          `json:"addError" jsonschema:"nullable"`     // the first error adding to it
	Added        []TopicPartition   `json:"added"`                              // AddPartitionsToTxn (v1 transactions)
	Groups       []string           `json:"groups"`                             // AddOffsetsToTxn, TxnOffsetCommit
	Offsets      int                `json:"offsets"`                            // partitions whose offsets TxnOffsetCommit committed
	Records      []TxnRecordsReport `json:"records"`                            // written (answered without error)
	Refs         []Ref              `json:"refs"`
}

// TxnError is the first error a request adding to a transaction was
// answered: AddPartitionsToTxn (its partition was not added),
// AddOffsetsToTxn or TxnOffsetCommit (the offsets were not committed).
type TxnError struct {
	API   string `json:"api"`   // Kafka's name for the request: "AddPartitionsToTxn"
	Error string `json:"error"` // the error's name: "INVALID_TXN_STATE"
	Ref   Ref    `json:"ref"`
}

// TxnRecordsReport is what a transaction wrote to one partition.
type TxnRecordsReport struct {
	Topic        string `json:"topic"`
	Partition    int32  `json:"partition"`
	Batches      int64  `json:"batches"`
	Records      int64  `json:"records"`
	FirstSeq     *int32 `json:"firstSequence" jsonschema:"nullable"`
	LastSequence *int32 `json:"lastSequence" jsonschema:"nullable"`
}

// SeqIssue is a sequence number out of line.
type SeqIssue struct {
	Time          Time    `json:"time"`
	Kind          string  `json:"kind"`                           // "retry", "duplicate", "gap", "out-of-order"
	ClientID      *string `json:"clientId" jsonschema:"nullable"` // null when null or empty
	Topic         string  `json:"topic"`
	Partition     int32   `json:"partition"`
	ProducerID    int64   `json:"producerId"`
	ProducerEpoch int16   `json:"producerEpoch"`
	BaseSequence  int32   `json:"baseSequence"`
	Records       int32   `json:"records"`
	Detail        string  `json:"detail"`
	Ref           Ref     `json:"ref"`
	file          int
	first         int64 // a retry's first send: its packet (0 for other kinds)
}

// ConsumerReport is what one client ID's Fetch responses said about
// transactions.
type ConsumerReport struct {
	ClientID *string `json:"clientId" jsonschema:"nullable"` // null when null or empty
	// File is the capture file of these fetches when several were read,
	// each a capture of its own (without --merge).
	File string `json:"file,omitempty"`
	// IsolationLevels are the Fetch isolation levels it used
	// ("read_committed", "read_uncommitted").
	IsolationLevels      []string           `json:"isolationLevels"`
	Fetches              int64              `json:"fetches"`
	Topics               []string           `json:"topics"`
	TransactionalBatches int64              `json:"transactionalBatches"`
	Commits              int64              `json:"commits"` // COMMIT markers fetched
	Aborts               int64              `json:"aborts"`  // ABORT markers fetched
	AbortedTransactions  []AbortedTxnReport `json:"abortedTransactions"`
	Markers              []MarkerReport     `json:"markers"`
}

// AbortedTxnReport is one aborted transaction a read_committed Fetch
// response listed.
type AbortedTxnReport struct {
	Topic           string  `json:"topic"`
	Partition       int32   `json:"partition"`
	ProducerID      int64   `json:"producerId"`
	TransactionalID *string `json:"transactionalId" jsonschema:"nullable"` // when the capture shows whose producer ID it is
	FirstOffset     int64   `json:"firstOffset"`
	Ref             Ref     `json:"ref"`
}

// MarkerReport is one control record fetched.
type MarkerReport struct {
	Topic           string  `json:"topic"`
	Partition       int32   `json:"partition"`
	ProducerID      int64   `json:"producerId"`
	ProducerEpoch   int16   `json:"producerEpoch"`
	TransactionalID *string `json:"transactionalId" jsonschema:"nullable"`
	Offset          int64   `json:"offset"`
	Commit          bool    `json:"commit"`
	Ref             Ref     `json:"ref"`
}

// Transactions returns the transactions report so far.
func (a *Analyzer) Transactions() *TxnsReport {
	r := &TxnsReport{Producers: []ProducerReport{}, Consumers: []ConsumerReport{}, MaxMemoryBytes: a.opts.MaxMemory, CutExchanges: a.cut}
	if a.txns == nil {
		return r
	}
	t := a.txns
	r.Dropped = t.dropped
	// A producer ID names a transactional ID within its capture file.
	type filePID struct {
		file int
		pid  int64
	}
	txnOfPID := map[filePID]string{}
	for p := t.order.first; p != nil; p = next[producer](p) {
		if p.hasTxn {
			for _, pid := range p.pids {
				txnOfPID[filePID{p.file, pid}] = p.txnID
			}
		}
	}
	fileName := func(i int) string {
		if a.files > 1 {
			return a.fileNames[i]
		}
		return ""
	}
	// By file, then transactional ID (idempotent producers first), then
	// first sight.
	ps := t.order.all()
	slices.SortStableFunc(ps, func(a, b *producer) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.txnID, b.txnID), a.first.Compare(b.first))
	})
	for _, p := range ps {
		if len(p.instances) == 0 && len(p.txns) == 0 && len(p.issues) == 0 && len(p.written) == 0 && len(p.described) == 0 {
			continue
		}
		pr := p.report()
		pr.File = fileName(p.file)
		r.Producers = append(r.Producers, pr)
	}
	cs := slices.Clone(t.corder)
	slices.SortStableFunc(cs, func(a, b *consumerAcc) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.clientID, b.clientID))
	})
	for _, c := range cs {
		cr := ConsumerReport{ClientID: strp(c.clientID), File: fileName(c.file), IsolationLevels: []string{}, Fetches: c.fetches, Topics: []string{},
			TransactionalBatches: c.txnBatch, Commits: c.commits, Aborts: c.aborts,
			AbortedTransactions: slices.Clone(c.aborted), Markers: slices.Clone(c.markers)}
		for k := range c.isolation {
			cr.IsolationLevels = append(cr.IsolationLevels, k)
		}
		slices.Sort(cr.IsolationLevels)
		for k := range c.topics {
			cr.Topics = append(cr.Topics, k)
		}
		slices.Sort(cr.Topics)
		for i := range cr.AbortedTransactions {
			if id, ok := txnOfPID[filePID{c.file, cr.AbortedTransactions[i].ProducerID}]; ok {
				cr.AbortedTransactions[i].TransactionalID = &id
			}
		}
		for i := range cr.Markers {
			if id, ok := txnOfPID[filePID{c.file, cr.Markers[i].ProducerID}]; ok {
				cr.Markers[i].TransactionalID = &id
			}
		}
		if cr.AbortedTransactions == nil {
			cr.AbortedTransactions = []AbortedTxnReport{}
		}
		if cr.Markers == nil {
			cr.Markers = []MarkerReport{}
		}
		r.Consumers = append(r.Consumers, cr)
	}
	r.resolveNames(a.opts.Names)
	return r
}

func recordsReport(order []tpKey, m map[tpKey]*txnRecords) []TxnRecordsReport {
	out := []TxnRecordsReport{}
	for _, k := range order {
		rr := m[k]
		tx := TxnRecordsReport{Topic: k.topic, Partition: k.part, Batches: rr.batches, Records: rr.records}
		if rr.hasSeq {
			tx.FirstSeq, tx.LastSequence = ptr(rr.firstSeq), ptr(rr.lastSeq)
		}
		out = append(out, tx)
	}
	return out
}

func fenceRef(in *instance) *FenceRef {
	if in == nil {
		return nil
	}
	e := in.epoch
	if len(in.epochs) > 0 {
		e = in.epochs[0].Epoch
	}
	return &FenceRef{ClientID: strp(in.clientID), Client: in.addr, ProducerEpoch: e, Time: Time(in.at)}
}

func (p *producer) report() ProducerReport {
	r := ProducerReport{ProducerIDs: slices.Clone(p.pids), First: Time(p.first), Last: Time(p.last),
		Instances: []InstanceReport{}, Transactions: []TxnReport{}, TransactionCount: p.nTxns, Records: recordsReport(p.worder, p.written),
		Sequences: slices.Clone(p.issues), Described: slices.Clone(p.described), Errors: errorCounts(p.errs)}
	if r.Described == nil {
		r.Described = []DescribedState{}
	}
	if p.hasTxn {
		r.TransactionalID = &p.txnID
	}
	if r.ProducerIDs == nil {
		r.ProducerIDs = []int64{}
	}
	if r.Sequences == nil {
		r.Sequences = []SeqIssue{}
	}
	for _, in := range p.instances {
		ir := InstanceReport{ClientID: strp(in.clientID), Client: strp(in.addr), Time: Time(in.at), ProducerID: in.pid,
			ProducerEpoch: in.epoch, RequestedProducerID: in.reqPID, RequestedEpoch: in.reqEpoch,
			Epochs: slices.Clone(in.epochs), FencedBy: fenceRef(in.fencedBy), Fences: fenceRef(in.fences), Ref: in.ref}
		if len(in.epochs) > 0 {
			ir.ProducerID, ir.ProducerEpoch = in.epochs[0].ProducerID, in.epochs[0].Epoch
		}
		if in.err != 0 {
			ir.Error = ptr(protocol.KafkaErrorName(in.err))
		}
		if ir.Epochs == nil {
			ir.Epochs = []EpochChange{}
		}
		r.Instances = append(r.Instances, ir)
	}
	for _, x := range p.txns {
		tr := TxnReport{ClientID: strp(x.inst.clientID), ProducerID: x.pid, ProducerEpoch: x.epoch, Start: Time(x.start), End: Time(x.end),
			Outcome: x.outcome, Added: []TopicPartition{}, Groups: slices.Clone(x.groups), Offsets: x.offsets,
			Records: []TxnRecordsReport{}, Refs: slices.Clone(x.refs)}
		if tr.Outcome == "" {
			tr.Outcome = outcomeOpen
		}
		if !x.end.IsZero() {
			tr.DurationMs = ms(x.end.Sub(x.start))
		}
		switch x.commitAsked {
		case 1:
			tr.EndTxn = ptr("COMMIT")
		case 0:
			tr.EndTxn = ptr("ABORT")
		}
		if x.endError != 0 {
			tr.Error = ptr(protocol.KafkaErrorName(x.endError))
		}
		if x.produceErr != 0 {
			tr.ProduceError = ptr(protocol.KafkaErrorName(x.produceErr))
		}
		if x.addErr != nil {
			tr.AddError = ptr(*x.addErr)
		}
		if tr.Groups == nil {
			tr.Groups = []string{}
		}
		byTopic := map[string][]int32{}
		var topics []string
		for _, k := range x.added {
			if _, ok := byTopic[k.topic]; !ok {
				topics = append(topics, k.topic)
			}
			byTopic[k.topic] = append(byTopic[k.topic], k.part)
		}
		for _, tn := range topics {
			ps := slices.Sorted(slices.Values(byTopic[tn]))
			tr.Added = append(tr.Added, TopicPartition{Topic: tn, Partitions: ps})
		}
		tr.Records = recordsReport(x.rorder, x.records)
		if tr.Refs == nil {
			tr.Refs = []Ref{}
		}
		r.Transactions = append(r.Transactions, tr)
	}
	return r
}
