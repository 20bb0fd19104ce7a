package main

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"
)

// The diff captures (pcaps/diff/*.pcap) are one small client application
// run four times for kwire diff's tests: twice as it is (the two must
// diff as equal: ports, correlation IDs, timestamps and fetch counts
// differ), once with its client capped at Kafka 2.8's API versions, and
// once without its second topic. Every run uses broker port 19390, one
// after the other, so that the broker's address is the same in all four.

const (
	diffPort       = 19390
	diffOrders     = "capgen-diff-orders"
	diffAudit      = "capgen-diff-audit"
	diffClientID   = "capgen-diff-app"
	diffAdminID    = "capgen-diff-admin"
	diffRecordsPer = 5
)

// diffVariant says how one run differs from the base.
type diffVariant struct {
	capped  bool // the app's client stops at Kafka 2.8's versions
	noAudit bool // the app neither creates nor uses the audit topic
}

func diffScenarios() []scenario {
	mk := func(name, file string, v diffVariant) scenario {
		return scenario{name: name, file: file, ports: []int{diffPort}, run: func(ports []int) error { return runDiffApp(ports[0], v) }}
	}
	return []scenario{
		mk("diff-base", "diff/diff-base.pcap", diffVariant{}),
		mk("diff-again", "diff/diff-again.pcap", diffVariant{}),
		mk("diff-capped", "diff/diff-capped.pcap", diffVariant{capped: true}),
		mk("diff-no-audit", "diff/diff-no-audit.pcap", diffVariant{noAudit: true}),
	}
}

// runDiffApp creates the topics, produces a few records to each (gzip)
// and reads them back from their partitions, with a client that sends
// ApiVersions, Metadata, Produce, ListOffsets and Fetch.
func runDiffApp(port int, v diffVariant) error {
	c, err := newCluster(port)
	if err != nil {
		return err
	}
	defer c.Close()
	seed := kgo.SeedBrokers(addr(port))
	topics := []string{diffOrders, diffAudit}
	if v.noAudit {
		topics = topics[:1]
	}
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()

	admCl, err := kgo.NewClient(seed, kgo.ClientID(diffAdminID))
	if err != nil {
		return err
	}
	adm := kadm.NewClient(admCl)
	if _, err := adm.CreateTopics(ctx, 1, 1, nil, topics...); err != nil {
		admCl.Close()
		return fmt.Errorf("create topics: %w", err)
	}
	admCl.Close()

	opts := []kgo.Opt{seed, kgo.ClientID(diffClientID), kgo.ProducerBatchCompression(kgo.GzipCompression()),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DisableIdempotentWrite(), kgo.DisableClientMetrics()}
	if v.capped {
		opts = append(opts, kgo.MaxVersions(kversion.V2_8_0()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	// One topic after the other: one Produce request each, whatever the
	// timing.
	total := 0
	for _, t := range topics {
		var rs []*kgo.Record
		for i := range diffRecordsPer {
			rs = append(rs, &kgo.Record{Topic: t, Partition: 0, Value: value("kgo", "gzip", i)})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			return fmt.Errorf("produce: %w", err)
		}
		total += len(rs)
	}
	parts := map[string]map[int32]kgo.Offset{}
	for _, t := range topics {
		parts[t] = map[int32]kgo.Offset{0: kgo.NewOffset().AtStart()}
	}
	cons, err := kgo.NewClient(append(opts, kgo.ConsumePartitions(parts))...)
	if err != nil {
		return err
	}
	defer cons.Close()
	for got := 0; got < total; {
		fs := cons.PollFetches(ctx)
		if err := fs.Err0(); err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		got += fs.NumRecords()
	}
	return nil
}
