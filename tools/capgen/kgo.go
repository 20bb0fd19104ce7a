package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

const (
	kgoCodecTopic = "capgen-codecs"
	kgoTxnTopic   = "capgen-txn"
	kgoDoomed     = "capgen-doomed"
	kgoAcks0Topic = "capgen-acks0"
	kgoMissing    = "capgen-missing"
)

// runKgo drives franz-go through admin calls, a produce per codec, a classic
// and a KIP-848 consumer group, a committed and an aborted transaction, and a
// handful of requests that fail with error codes.
func runKgo(ports []int) error {
	port := ports[0]
	c, err := newCluster(port)
	if err != nil {
		return err
	}
	defer c.Close()
	seed := kgo.SeedBrokers(addr(port))

	admCl, err := kgo.NewClient(seed, kgo.ClientID("capgen-kgo-admin"))
	if err != nil {
		return err
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()

	retention := "3600000"
	if _, err := adm.CreateTopics(ctx, 1, 1, map[string]*string{"retention.ms": &retention}, kgoCodecTopic); err != nil {
		return fmt.Errorf("create %s: %w", kgoCodecTopic, err)
	}
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, kgoTxnTopic, kgoDoomed, kgoAcks0Topic); err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	md, err := adm.Metadata(ctx)
	if err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	if _, err := adm.DescribeTopicConfigs(ctx, kgoCodecTopic); err != nil {
		return fmt.Errorf("describe topic configs: %w", err)
	}
	if _, err := adm.DescribeBrokerConfigs(ctx); err != nil {
		return fmt.Errorf("describe broker configs: %w", err)
	}

	// One producer per codec; "none" is also the non-idempotent acks=1
	// producer, the others are idempotent with acks=all.
	for _, codec := range codecs {
		opts := []kgo.Opt{seed, kgo.ClientID("capgen-kgo-" + codec),
			kgo.ProducerBatchCompression(kgoCodec(codec)), kgo.ProducerLinger(50 * time.Millisecond)}
		if codec == "none" {
			opts = append(opts, kgo.DisableIdempotentWrite(), kgo.RequiredAcks(kgo.LeaderAck()))
		}
		if err := produceKgo(ctx, opts, codecRecords("kgo", codec, kgoCodecTopic)); err != nil {
			return fmt.Errorf("produce %s: %w", codec, err)
		}
	}
	want := len(codecs) * len(codecRecords("kgo", "none", kgoCodecTopic))

	// acks=0: Produce requests that get no response at all.
	if err := produceKgo(ctx, []kgo.Opt{seed, kgo.ClientID("capgen-kgo-acks0"), kgo.DisableIdempotentWrite(),
		kgo.RequiredAcks(kgo.NoAck()), kgo.ProducerBatchCompression(kgo.NoCompression())},
		codecRecords("kgo", "acks0", kgoAcks0Topic)); err != nil {
		return fmt.Errorf("produce acks=0: %w", err)
	}

	if _, err := adm.ListStartOffsets(ctx, kgoCodecTopic); err != nil {
		return fmt.Errorf("list start offsets: %w", err)
	}
	if _, err := adm.ListEndOffsets(ctx, kgoCodecTopic); err != nil {
		return fmt.Errorf("list end offsets: %w", err)
	}

	// Classic group: JoinGroup, SyncGroup, Heartbeat, OffsetFetch,
	// OffsetCommit, LeaveGroup.
	if err := consumeKgo(ctx, want, seed, kgo.ClientID("capgen-kgo-group"),
		kgo.ConsumerGroup("capgen-kgo-group"), kgo.ConsumeTopics(kgoCodecTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(), kgo.HeartbeatInterval(200*time.Millisecond),
		kgo.SessionTimeout(6*time.Second)); err != nil {
		return fmt.Errorf("classic group: %w", err)
	}
	// KIP-848 group: ConsumerGroupHeartbeat.
	if err := consumeKgo(ctx, want, seed, kgo.ClientID("capgen-kgo-848"),
		kgo.ConsumerGroup("capgen-kgo-848"), kgo.ConsumeTopics(kgoCodecTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(),
		kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer())); err != nil {
		log.Printf("kgo: KIP-848 group (optional) failed: %v", err)
	}
	if _, err := adm.DescribeGroups(ctx, "capgen-kgo-group"); err != nil {
		return fmt.Errorf("describe groups: %w", err)
	}
	if _, err := adm.FetchOffsets(ctx, "capgen-kgo-group"); err != nil {
		return fmt.Errorf("fetch offsets: %w", err)
	}

	if err := kgoTransactions(ctx, seed); err != nil {
		return fmt.Errorf("transactions: %w", err)
	}

	if err := kgoErrors(ctx, port, admCl, adm, md); err != nil {
		return fmt.Errorf("error cases: %w", err)
	}
	admCl.Close()
	return nil
}

// produceKgo produces rs synchronously with a fresh client built from opts.
func produceKgo(ctx context.Context, opts []kgo.Opt, rs []*kgo.Record) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	return cl.ProduceSync(ctx, rs...).FirstErr()
}

// consumeKgo polls with a fresh client until it has want records, commits
// in group mode, lets a few heartbeats pass and closes (leaving the group).
func consumeKgo(ctx context.Context, want int, opts ...kgo.Opt) error {
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, stepTimeout)
	defer cancel()
	got := 0
	for got < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("got %d of %d records: %w", got, want, err)
		}
		fs.EachError(func(t string, p int32, err error) {
			log.Printf("fetch error %s/%d: %v", t, p, err)
		})
		got += fs.NumRecords()
	}
	if member, _ := cl.GroupMetadata(); member != "" {
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		time.Sleep(700 * time.Millisecond)
	}
	return nil
}

// kgoTransactions commits one transaction and aborts another, then reads
// the topic read_committed so the fetch carries aborted transactions and
// control batches.
func kgoTransactions(ctx context.Context, seed kgo.Opt) error {
	cl, err := kgo.NewClient(seed, kgo.ClientID("capgen-kgo-txn"),
		kgo.TransactionalID("capgen-kgo-txn"), kgo.DefaultProduceTopic(kgoTxnTopic),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer cl.Close()
	for _, commit := range []kgo.TransactionEndTry{kgo.TryCommit, kgo.TryAbort} {
		if err := cl.BeginTransaction(); err != nil {
			return err
		}
		word := "committed"
		if commit == kgo.TryAbort {
			word = "aborted"
		}
		var rs []*kgo.Record
		for i := 0; i < 3; i++ {
			rs = append(rs, &kgo.Record{Key: []byte(fmt.Sprintf("txn-%s-%d", word, i)),
				Value: []byte(fmt.Sprintf("this record is %s", word))})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			return err
		}
		if err := cl.EndTransaction(ctx, commit); err != nil {
			return fmt.Errorf("end transaction (%s): %w", word, err)
		}
	}
	cl.Close()
	return consumeKgo(ctx, 3, seed, kgo.ClientID("capgen-kgo-read-committed"),
		kgo.ConsumeTopics(kgoTxnTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
}

// kgoErrors issues requests that fail: a produce to and a delete of a
// missing topic, a create of an existing topic, and a fetch past the end.
func kgoErrors(ctx context.Context, port int, cl *kgo.Client, adm *kadm.Client, md kadm.Metadata) error {
	// Auto-creation is off: the producer's metadata requests see
	// UNKNOWN_TOPIC_OR_PARTITION until it gives up.
	pctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	perr := cl.ProduceSync(pctx, &kgo.Record{Topic: kgoMissing, Value: []byte("nobody home")}).FirstErr()
	cancel()
	if perr == nil {
		return errors.New("produce to a missing topic succeeded")
	}

	// Raw produces to the missing topic, so ProduceResponses carry the
	// error code too: v13 names topics by ID (UNKNOWN_TOPIC_ID), v12 by
	// name (UNKNOWN_TOPIC_OR_PARTITION).
	v12 := kversion.Stable()
	v12.SetMaxKeyVersion(0, 12)
	cl12, err := kgo.NewClient(kgo.SeedBrokers(addr(port)), kgo.ClientID("capgen-kgo-admin-produce-v12"), kgo.MaxVersions(v12))
	if err != nil {
		return err
	}
	defer cl12.Close()
	for _, pcl := range []*kgo.Client{cl, cl12} {
		if err := rawProduceMissing(ctx, pcl); err != nil {
			return err
		}
	}

	// Fetch at an offset far past the end: OFFSET_OUT_OF_RANGE.
	freq := kmsg.NewPtrFetchRequest()
	freq.MaxWaitMillis = 100
	freq.MaxBytes = 1 << 20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = kgoCodecTopic
	ft.TopicID = md.Topics[kgoCodecTopic].ID
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.FetchOffset = 1000
	fp.PartitionMaxBytes = 1 << 20
	ft.Partitions = append(ft.Partitions, fp)
	freq.Topics = append(freq.Topics, ft)
	resp, err := cl.Broker(0).Request(ctx, freq)
	if err != nil {
		return fmt.Errorf("raw fetch: %w", err)
	}
	fr := resp.(*kmsg.FetchResponse)
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 ||
		fr.Topics[0].Partitions[0].ErrorCode != kerr.OffsetOutOfRange.Code {
		return fmt.Errorf("out-of-range fetch did not fail as expected: %+v", fr.Topics)
	}

	// TOPIC_ALREADY_EXISTS, then UNKNOWN_TOPIC_OR_PARTITION on delete.
	ct, err := adm.CreateTopics(ctx, 1, 1, nil, kgoCodecTopic)
	if err != nil {
		return err
	}
	if !errors.Is(ct[kgoCodecTopic].Err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("create of an existing topic: %v", ct[kgoCodecTopic].Err)
	}
	dt, err := adm.DeleteTopics(ctx, kgoMissing)
	if err != nil {
		return err
	}
	if !errors.Is(dt[kgoMissing].Err, kerr.UnknownTopicOrPartition) {
		return fmt.Errorf("delete of a missing topic: %v", dt[kgoMissing].Err)
	}
	if _, err := adm.DeleteTopics(ctx, kgoDoomed); err != nil {
		return err
	}
	return nil
}

// rawProduceMissing sends a produce request for a topic that does not exist
// and checks that it fails.
func rawProduceMissing(ctx context.Context, cl *kgo.Client) error {
	preq := kmsg.NewPtrProduceRequest()
	preq.Acks = -1
	preq.TimeoutMillis = 5000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = kgoMissing
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = rawBatch(time.UnixMilli(1700000000000), [2][]byte{[]byte("k"), []byte("raw produce to a missing topic")})
	pt.Partitions = append(pt.Partitions, pp)
	preq.Topics = append(preq.Topics, pt)
	presp, err := cl.Broker(0).Request(ctx, preq)
	if err != nil {
		return fmt.Errorf("raw produce: %w", err)
	}
	pr := presp.(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 || pr.Topics[0].Partitions[0].ErrorCode == 0 {
		return fmt.Errorf("produce to a missing topic did not fail: %+v", pr.Topics)
	}
	if verbose {
		log.Printf("kgo: raw produce v%d to %s: error code %d", pr.Version, kgoMissing, pr.Topics[0].Partitions[0].ErrorCode)
	}
	return nil
}
