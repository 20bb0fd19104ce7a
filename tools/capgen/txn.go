package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Transactions on purpose: a transactional producer fenced by a second
// instance with its transactional ID (txn-fenced.pcap), and an aborted
// transaction read by read_committed and read_uncommitted consumers
// (txn-read-committed.pcap). Producer IDs and epochs are what kgo's
// ProducerID reported after each step; outcomes and errors are what
// EndTransaction and ProduceSync returned.

const (
	txnInTopic  = "capgen-txn-in"
	txnOutTopic = "capgen-txn-out"
	txnGroup    = "capgen-txn-group"
	txnFencedID = "capgen-txn-fenced"
	txnV2ID     = "capgen-txn-v2"
	txnRCTopic  = "capgen-txn-rc"
	txnRCID     = "capgen-txn-rc"
)

// kgoLogger passes kgo's log lines that keep holds to the expectation log.
type kgoLogger struct {
	x      *expectation
	source string
	keep   func(msg string) bool
}

func (l kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelInfo }

func (l kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if level > kgo.LogLevelInfo || !l.keep(msg) {
		return
	}
	var b strings.Builder
	b.WriteString(msg)
	for i := 0; i+1 < len(keyvals); i += 2 {
		fmt.Fprintf(&b, " %v=%v", keyvals[i], keyvals[i+1])
	}
	l.x.logf(l.source, "kgo %s: %s", strings.ToLower(level.String()), b.String())
}

func txnLogKeep(msg string) bool {
	for _, w := range []string{"producer id", "transaction", "AddOffsetsToTxn", "TxnOffsetCommit", "fenced", "epoch"} {
		if strings.Contains(strings.ToLower(msg), strings.ToLower(w)) {
			return true
		}
	}
	return false
}

// errName is Kafka's name of the error err carries, or err's text.
func errName(err error) *string {
	if err == nil {
		return nil
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return strp(ke.Message)
	}
	return strp(err.Error())
}

// txnRecords are n records for one transaction.
func txnRecords(topic, word string, n int) []*kgo.Record {
	var rs []*kgo.Record
	for i := 0; i < n; i++ {
		rs = append(rs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("%s-%d", word, i)),
			Value: []byte("this record is " + word)})
	}
	return rs
}

// txnRecorder keeps one producer's expectation up to date.
type txnRecorder struct {
	x  *expectation
	p  *expectProducer
	cl *kgo.Client
}

func newTxnRecorder(x *expectation, clientID, txnID, version string) *txnRecorder {
	p := &expectProducer{ClientID: clientID, TransactionalID: strp(txnID), TxnVersion: version}
	x.Producers = append(x.Producers, p)
	return &txnRecorder{x: x, p: p}
}

// epoch records the client's current producer ID and epoch.
func (r *txnRecorder) epoch(ctx context.Context) error {
	id, epoch, err := r.cl.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("%s: producer ID: %w", r.p.ClientID, err)
	}
	r.p.ProducerID = id
	if n := len(r.p.Epochs); n == 0 || r.p.Epochs[n-1] != epoch {
		r.p.Epochs = append(r.p.Epochs, epoch)
	}
	r.x.logf(r.p.ClientID, "producer ID %d, epoch %d", id, epoch)
	return nil
}

// txn records one transaction.
func (r *txnRecorder) txn(epoch int16, rs []*kgo.Record, group *string, outcome string, err error) *expectTxn {
	t := &expectTxn{Epoch: epoch, Records: map[string]map[int32]int{}, Group: group, Outcome: outcome, Error: errName(err)}
	for _, rec := range rs {
		if t.Records[rec.Topic] == nil {
			t.Records[rec.Topic] = map[int32]int{}
		}
		t.Records[rec.Topic][rec.Partition]++
	}
	r.p.Transactions = append(r.p.Transactions, t)
	e := "ok"
	if err != nil {
		e = *t.Error
	}
	r.x.logf(r.p.ClientID, "transaction at epoch %d: %d records, outcome %s (%s)", epoch, len(rs), outcome, e)
	return t
}

func (r *txnRecorder) lastEpoch() int16 { return r.p.Epochs[len(r.p.Epochs)-1] }

// txnV1 caps a client at Kafka 3.9: transactions without KIP-890's
// second part (AddPartitionsToTxn before producing, EndTxn v4 without an
// epoch bump).
func txnV1() *kversion.Versions { return kversion.V3_9_0() }

func runTxnFenced(ports []int, x *expectation) error {
	port := ports[0]
	c, err := newCluster(port, kfake.SeedTopics(1, txnInTopic, txnOutTopic))
	if err != nil {
		return err
	}
	defer c.Close()
	x.Brokers = []expectBroker{{0, addr(port)}}
	x.About = "Transactional producers fenced by a second instance with the same transactional ID: " +
		"capgen-kgo-txn-a (Kafka 3.9 versions: AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit) commits a consume-transform-produce " +
		"transaction, aborts one, opens a third and is fenced by capgen-kgo-txn-b's InitProducerID; then capgen-kgo-txn-v2 " +
		"(newest versions, KIP-890: EndTxn v5 bumps the epoch per transaction) commits, aborts, commits and is fenced by capgen-kgo-txn-v2-fencer."
	x.Varies = []string{"producer IDs (kfake hands them out in order, so usually the same)", "member IDs", "timestamps and TCP ports",
		"the number of heartbeats and fetches"}
	seed := kgo.SeedBrokers(addr(port))
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()

	// Input records for the consume-transform-produce transaction.
	x.client("capgen-setup-producer", "franz-go kgo v1.22.3", "produces 4 records to "+txnInTopic+" first")
	if err := produceKgo(ctx, []kgo.Opt{seed, kgo.ClientID("capgen-setup-producer"), kgo.ProducerBatchCompression(kgo.NoCompression())},
		txnRecords(txnInTopic, "input", 4)); err != nil {
		return err
	}

	// A: a consume-transform-produce session capped at Kafka 3.9.
	x.client("capgen-kgo-txn-a", "franz-go kgo v1.22.3 (versions of Kafka 3.9)", "transactional producer in a group transact session, fenced")
	a := newTxnRecorder(x, "capgen-kgo-txn-a", txnFencedID, "v1")
	sess, err := kgo.NewGroupTransactSession(seed, kgo.ClientID("capgen-kgo-txn-a"), kgo.MaxVersions(txnV1()),
		kgo.TransactionalID(txnFencedID), kgo.ConsumerGroup(txnGroup), kgo.ConsumeTopics(txnInTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.RequireStableFetchOffsets(),
		kgo.WithLogger(kgoLogger{x, "capgen-kgo-txn-a", txnLogKeep}))
	if err != nil {
		return err
	}
	defer sess.Close()
	a.cl = sess.Client()
	if err := a.epoch(ctx); err != nil {
		return err
	}
	// 1. Consume the 4 input records, produce 4 transformed ones, commit
	// both in one transaction.
	if err := sess.Begin(); err != nil {
		return err
	}
	var in []*kgo.Record
	pctx, pcancel := context.WithTimeout(ctx, stepTimeout)
	for len(in) < 4 && pctx.Err() == nil {
		in = append(in, sess.PollFetches(pctx).Records()...)
	}
	pcancel()
	if len(in) < 4 {
		return fmt.Errorf("txn-a consumed %d of 4 input records", len(in))
	}
	var out []*kgo.Record
	for _, r := range in {
		out = append(out, &kgo.Record{Topic: txnOutTopic, Key: r.Key, Value: []byte("transformed: " + string(r.Value))})
	}
	if err := sess.ProduceSync(ctx, out...).FirstErr(); err != nil {
		return fmt.Errorf("txn-a produce: %w", err)
	}
	committed, err := sess.End(ctx, kgo.TryCommit)
	if err != nil || !committed {
		return fmt.Errorf("txn-a commit: committed=%v, %v", committed, err)
	}
	a.txn(a.lastEpoch(), out, strp(txnGroup), "commit", nil)
	if err := a.epoch(ctx); err != nil {
		return err
	}
	// 2. Abort one.
	if err := sess.Begin(); err != nil {
		return err
	}
	rs := txnRecords(txnOutTopic, "txn-a-aborted", 2)
	if err := sess.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("txn-a produce: %w", err)
	}
	if _, err := sess.End(ctx, kgo.TryAbort); err != nil {
		return fmt.Errorf("txn-a abort: %w", err)
	}
	a.txn(a.lastEpoch(), rs, nil, "abort", nil)
	if err := a.epoch(ctx); err != nil {
		return err
	}
	// 3. Open a third, then B takes the transactional ID over.
	if err := sess.Begin(); err != nil {
		return err
	}
	open := txnRecords(txnOutTopic, "txn-a-open", 2)
	if err := sess.ProduceSync(ctx, open...).FirstErr(); err != nil {
		return fmt.Errorf("txn-a produce: %w", err)
	}
	x.client("capgen-kgo-txn-b", "franz-go kgo v1.22.3 (versions of Kafka 3.9)", "second instance of "+txnFencedID+": fences capgen-kgo-txn-a")
	b := newTxnRecorder(x, "capgen-kgo-txn-b", txnFencedID, "v1")
	bcl, err := kgo.NewClient(seed, kgo.ClientID("capgen-kgo-txn-b"), kgo.MaxVersions(txnV1()),
		kgo.TransactionalID(txnFencedID), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.WithLogger(kgoLogger{x, "capgen-kgo-txn-b", txnLogKeep}))
	if err != nil {
		return err
	}
	defer bcl.Close()
	b.cl = bcl
	x.logf("capgen", "capgen-kgo-txn-b initializes %s while capgen-kgo-txn-a has a transaction open", txnFencedID)
	if err := b.epoch(ctx); err != nil {
		return err
	}
	a.p.FencedBy = strp("capgen-kgo-txn-b")
	// A goes on: its next produce and its commit are refused.
	late := txnRecords(txnOutTopic, "txn-a-late", 1)
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	perr := sess.ProduceSync(lctx, late...).FirstErr()
	lcancel()
	x.logf("capgen-kgo-txn-a", "produce after the fence: %v", perr)
	ectx, ecancel := context.WithTimeout(ctx, 5*time.Second)
	committed, eerr := sess.End(ectx, kgo.TryCommit)
	ecancel()
	x.logf("capgen-kgo-txn-a", "commit after the fence: committed=%v, %v", committed, eerr)
	if committed {
		return errors.New("txn-a committed after being fenced")
	}
	if eerr == nil || perr == nil {
		return fmt.Errorf("txn-a after being fenced: produce %v, commit %v; want both to fail", perr, eerr)
	}
	a.txn(a.lastEpoch(), open, nil, "fenced", eerr).ProduceError = errName(perr)
	sess.Close()
	// B commits one of its own.
	if err := bcl.BeginTransaction(); err != nil {
		return err
	}
	rs = txnRecords(txnOutTopic, "txn-b-committed", 2)
	if err := bcl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		return fmt.Errorf("txn-b produce: %w", err)
	}
	if err := bcl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return fmt.Errorf("txn-b commit: %w", err)
	}
	b.txn(b.lastEpoch(), rs, nil, "commit", nil)
	bcl.Close()

	// C: newest versions (transactions v2): each EndTxn bumps the epoch.
	x.client("capgen-kgo-txn-v2", "franz-go kgo v1.22.3", "transactional producer (KIP-890 transactions v2), fenced")
	cr := newTxnRecorder(x, "capgen-kgo-txn-v2", txnV2ID, "v2")
	ccl, err := kgo.NewClient(seed, kgo.ClientID("capgen-kgo-txn-v2"), kgo.TransactionalID(txnV2ID),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.WithLogger(kgoLogger{x, "capgen-kgo-txn-v2", txnLogKeep}))
	if err != nil {
		return err
	}
	defer ccl.Close()
	cr.cl = ccl
	if err := cr.epoch(ctx); err != nil {
		return err
	}
	for i, end := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort, kgo.TryCommit} {
		word := map[kgo.TransactionEndTry]string{kgo.TryCommit: "commit", kgo.TryAbort: "abort"}[end]
		if err := ccl.BeginTransaction(); err != nil {
			return err
		}
		rs := txnRecords(txnOutTopic, fmt.Sprintf("txn-v2-%d-%s", i+1, word), 2)
		if err := ccl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			return fmt.Errorf("txn-v2 produce: %w", err)
		}
		epoch := cr.lastEpoch()
		if err := ccl.EndTransaction(ctx, end); err != nil {
			return fmt.Errorf("txn-v2 %s: %w", word, err)
		}
		cr.txn(epoch, rs, nil, word, nil)
		if err := cr.epoch(ctx); err != nil {
			return err
		}
	}
	if err := ccl.BeginTransaction(); err != nil {
		return err
	}
	open = txnRecords(txnOutTopic, "txn-v2-open", 2)
	if err := ccl.ProduceSync(ctx, open...).FirstErr(); err != nil {
		return fmt.Errorf("txn-v2 produce: %w", err)
	}
	x.client("capgen-kgo-txn-v2-fencer", "franz-go kgo v1.22.3", "second instance of "+txnV2ID+": fences capgen-kgo-txn-v2")
	d := newTxnRecorder(x, "capgen-kgo-txn-v2-fencer", txnV2ID, "v2")
	dcl, err := kgo.NewClient(seed, kgo.ClientID("capgen-kgo-txn-v2-fencer"), kgo.TransactionalID(txnV2ID),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.WithLogger(kgoLogger{x, "capgen-kgo-txn-v2-fencer", txnLogKeep}))
	if err != nil {
		return err
	}
	defer dcl.Close()
	d.cl = dcl
	x.logf("capgen", "capgen-kgo-txn-v2-fencer initializes %s while capgen-kgo-txn-v2 has a transaction open", txnV2ID)
	if err := d.epoch(ctx); err != nil {
		return err
	}
	cr.p.FencedBy = strp("capgen-kgo-txn-v2-fencer")
	ectx, ecancel = context.WithTimeout(ctx, 5*time.Second)
	eerr = ccl.EndTransaction(ectx, kgo.TryCommit)
	ecancel()
	x.logf("capgen-kgo-txn-v2", "commit after the fence: %v", eerr)
	if eerr == nil {
		return errors.New("txn-v2 committed after being fenced")
	}
	cr.txn(cr.lastEpoch(), open, nil, "fenced", eerr)
	ccl.Close()
	dcl.Close()

	x.requests("InitProducerID", "AddPartitionsToTxn", "AddOffsetsToTxn", "TxnOffsetCommit", "EndTxn", "EndTxn v5",
		"Produce v11", "Produce v13", "FindCoordinator", "JoinGroup", "SyncGroup", "OffsetFetch")
	x.Wire.Errors["EndTxn: PRODUCER_FENCED (90)"] = 1
	x.Wire.Errors["Produce: INVALID_TXN_STATE (48)"] = 1
	x.Wire.Errors["EndTxn: INVALID_TXN_STATE (48)"] = 1
	return nil
}

func runTxnReadCommitted(ports []int, x *expectation) error {
	port := ports[0]
	if _, err := ensureTool("kcat", "kcat"); err != nil {
		return err
	}
	c, err := newCluster(port, kfake.SeedTopics(1, txnRCTopic))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := advertiseFromV0(c, port); err != nil {
		return err
	}
	x.client("capgen-setup", "capgen raw client", "reads the broker's ApiVersions to widen its Produce and Fetch ranges for kcat (kcat.go)")
	x.Brokers = []expectBroker{{0, addr(port)}}
	x.About = "A transactional producer commits 3 records, aborts 3, commits 2 on " + txnRCTopic +
		"; a kgo read_committed consumer, a kcat (librdkafka) read_committed consumer and a kgo read_uncommitted consumer then read the partition from the start: " +
		"the read_committed Fetch responses list the aborted transaction, and every consumer gets the control batches."
	x.Varies = []string{"the producer ID", "timestamps and TCP ports", "how many Fetch requests each consumer needs"}
	seed := kgo.SeedBrokers(addr(port))
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()

	x.client("capgen-kgo-txn-rc", "franz-go kgo v1.22.3", "transactional producer: commit, abort, commit")
	r := newTxnRecorder(x, "capgen-kgo-txn-rc", txnRCID, "v2")
	cl, err := kgo.NewClient(seed, kgo.ClientID("capgen-kgo-txn-rc"), kgo.TransactionalID(txnRCID),
		kgo.DefaultProduceTopic(txnRCTopic), kgo.ProducerBatchCompression(kgo.NoCompression()),
		kgo.WithLogger(kgoLogger{x, "capgen-kgo-txn-rc", txnLogKeep}))
	if err != nil {
		return err
	}
	defer cl.Close()
	r.cl = cl
	if err := r.epoch(ctx); err != nil {
		return err
	}
	var committed, all []string
	for i, step := range []struct {
		end  kgo.TransactionEndTry
		word string
		n    int
	}{{kgo.TryCommit, "commit", 3}, {kgo.TryAbort, "abort", 3}, {kgo.TryCommit, "commit", 2}} {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		rs := txnRecords(txnRCTopic, fmt.Sprintf("txn-%d-%s", i+1, step.word), step.n)
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			return err
		}
		epoch := r.lastEpoch()
		if err := cl.EndTransaction(ctx, step.end); err != nil {
			return err
		}
		r.txn(epoch, rs, nil, step.word, nil)
		for _, rec := range rs {
			all = append(all, string(rec.Key))
			if step.end == kgo.TryCommit {
				committed = append(committed, string(rec.Key))
			}
		}
		if err := r.epoch(ctx); err != nil {
			return err
		}
	}
	cl.Close()

	for _, cons := range []struct {
		id    string
		level kgo.IsolationLevel
		name  string
		want  []string
	}{{"capgen-kgo-read-committed", kgo.ReadCommitted(), "read_committed", committed},
		{"capgen-kgo-read-uncommitted", kgo.ReadUncommitted(), "read_uncommitted", all}} {
		x.client(cons.id, "franz-go kgo v1.22.3", cons.name+" consumer (no group)")
		keys, err := consumeKeys(ctx, len(cons.want), seed, kgo.ClientID(cons.id), kgo.ConsumeTopics(txnRCTopic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(cons.level), kgo.FetchMaxWait(500*time.Millisecond))
		if err != nil {
			return fmt.Errorf("%s: %w", cons.id, err)
		}
		if strings.Join(keys, ",") != strings.Join(cons.want, ",") {
			return fmt.Errorf("%s read %v, want %v", cons.id, keys, cons.want)
		}
		x.logf(cons.id, "read %d records: %s", len(keys), strings.Join(keys, " "))
		x.Consumers = append(x.Consumers, &expectConsumer{ClientID: cons.id, IsolationLevel: cons.name, Topic: txnRCTopic, Keys: keys})
	}
	x.client("capgen-kcat-read-committed", "kcat 1.7.1, librdkafka 2.0.2 (Debian)", "read_committed consumer (no group)")
	outb, err := kcat([]string{"-b", addr(port), "-X", "client.id=capgen-kcat-read-committed", "-X", "broker.address.family=v4"},
		nil, "-C", "-t", txnRCTopic, "-o", "beginning", "-e", "-X", "isolation.level=read_committed", "-f", "%k\n")
	if err != nil {
		return err
	}
	keys := strings.Fields(string(outb))
	if strings.Join(keys, ",") != strings.Join(committed, ",") {
		return fmt.Errorf("kcat read_committed read %v, want %v", keys, committed)
	}
	x.logf("capgen-kcat-read-committed", "read %d records: %s", len(keys), strings.Join(keys, " "))
	x.Consumers = append(x.Consumers, &expectConsumer{ClientID: "capgen-kcat-read-committed", IsolationLevel: "read_committed", Topic: txnRCTopic, Keys: keys})

	x.requests("InitProducerID", "EndTxn v5", "Produce v13", "Fetch v18", "Fetch v11")
	x.Wire.Features = []string{"(Fetch partition listing aborted transactions)"}
	x.Wire.NoOtherErrors = true
	return nil
}

// consumeKeys reads want records with a fresh client and returns their
// keys in order.
func consumeKeys(ctx context.Context, want int, opts ...kgo.Opt) ([]string, error) {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	var keys []string
	for len(keys) < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return keys, fmt.Errorf("got %d of %d records: %w", len(keys), want, err)
		}
		fs.EachRecord(func(r *kgo.Record) { keys = append(keys, string(r.Key)) })
	}
	// One more poll: nothing else may come (the aborted records, for
	// read_committed).
	pctx, pcancel := context.WithTimeout(ctx, time.Second)
	cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { keys = append(keys, string(r.Key)) })
	pcancel()
	return keys, nil
}
