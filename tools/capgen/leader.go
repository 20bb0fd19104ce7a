package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Leadership moves (leader-move.pcap): a three-broker kfake cluster, one
// partition whose leader moves twice (kfake.MoveTopicPartition bumps the
// leader epoch) while a kgo producer and consumer work on it. The old
// leader answers NOT_LEADER_OR_FOLLOWER; the clients refresh Metadata and
// go to the new one. After the second move a kfake fault answers the
// consumer's next Fetch requests on the new leader with
// FENCED_LEADER_EPOCH, as a broker that learnt a newer epoch than the
// client's does.

const (
	leaderTopic   = "capgen-leader"
	leaderRecords = 30
	leaderFenced  = 3
)

func leaderLogKeep(msg string) bool {
	m := strings.ToLower(msg)
	for _, w := range []string{"leader", "metadata", "not_leader", "fenced", "moving", "migrat", "epoch"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

func runLeaderMove(ports []int, x *expectation) error {
	c, err := kfake.NewCluster(kfake.NumBrokers(3), kfake.Ports(ports...), kfake.ClusterID("capgen-cluster"),
		kfake.SeedTopics(1, leaderTopic))
	if err != nil {
		return err
	}
	defer c.Close()
	for i, p := range ports {
		x.Brokers = append(x.Brokers, expectBroker{int32(i), addr(p)})
	}
	from := c.LeaderFor(leaderTopic, 0)
	x.About = fmt.Sprintf("A three-broker cluster; %s partition 0 starts on node %d. capgen-kgo-leader-producer produces %d records, one "+
		"request each every 50 ms, and capgen-sarama-leader-producer as many beside it, while capgen-kgo-leader-consumer reads them. After the 10th record the leader moves to the next node, "+
		"after the 20th to the one after (kfake.MoveTopicPartition); the old leaders answer NOT_LEADER_OR_FOLLOWER and the clients refresh "+
		"Metadata. After the second move a fault answers the consumer's next %d Fetch requests on the new leader with FENCED_LEADER_EPOCH.",
		leaderTopic, from, leaderRecords, leaderFenced)
	x.Varies = []string{"timestamps and TCP ports", "how many requests reach an old leader before the clients refresh (timing)",
		"the number of Metadata and Fetch requests"}
	seeds := kgo.SeedBrokers(addr(ports[0]), addr(ports[1]), addr(ports[2]))
	ctx, cancel := withTimeout(2 * time.Minute)
	defer cancel()

	x.client("capgen-kgo-leader-consumer", "franz-go kgo v1.22.3", "reads the partition (no group)")
	cons, err := kgo.NewClient(seeds, kgo.ClientID("capgen-kgo-leader-consumer"), kgo.ConsumeTopics(leaderTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond),
		kgo.WithLogger(kgoLogger{x, "capgen-kgo-leader-consumer", leaderLogKeep}))
	if err != nil {
		return err
	}
	defer cons.Close()
	got := make(chan int, 2*leaderRecords)
	go func() {
		n := 0
		for ctx.Err() == nil && n < 2*leaderRecords {
			fs := cons.PollFetches(ctx)
			fs.EachError(func(t string, p int32, err error) {
				x.logf("capgen-kgo-leader-consumer", "fetch error %s/%d: %v", t, p, err)
			})
			n += fs.NumRecords()
			got <- n
		}
	}()

	x.client("capgen-kgo-leader-producer", "franz-go kgo v1.22.3", "produces one record every 50 ms")
	prod, err := kgo.NewClient(seeds, kgo.ClientID("capgen-kgo-leader-producer"), kgo.DefaultProduceTopic(leaderTopic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0),
		kgo.WithLogger(kgoLogger{x, "capgen-kgo-leader-producer", leaderLogKeep}))
	if err != nil {
		return err
	}
	defer prod.Close()
	x.client("capgen-sarama-leader-producer", "IBM/sarama v1.61.1 (Version 2.1.0)", "produces one record every 50 ms beside the kgo producer; refreshes Metadata on NOT_LEADER_OR_FOLLOWER")
	scfg := saramaConfig("capgen-sarama-leader-producer")
	scfg.Producer.Return.Successes = true
	scfg.Producer.RequiredAcks = sarama.WaitForAll
	scfg.Producer.Retry.Backoff = 50 * time.Millisecond
	sprod, err := sarama.NewSyncProducer([]string{addr(ports[0]), addr(ports[1]), addr(ports[2])}, scfg)
	if err != nil {
		return err
	}
	defer sprod.Close()
	var fault *kfake.FaultHandle
	var faultIn *expectInjection
	for i := 0; i < leaderRecords; i++ {
		if i == 10 || i == 20 {
			to := (c.LeaderFor(leaderTopic, 0) + 1) % 3
			old := c.LeaderFor(leaderTopic, 0)
			if err := c.MoveTopicPartition(leaderTopic, 0, to); err != nil {
				return err
			}
			p := int32(0)
			x.inject(&expectInjection{Kind: "leader-move", Topic: leaderTopic, Partition: &p, FromNode: i32p(old), ToNode: i32p(to),
				Count: 1, Note: fmt.Sprintf("kfake.MoveTopicPartition after record %d", i)})
			x.logf("capgen", "moved %s/0 from node %d to node %d", leaderTopic, old, to)
			if i == 20 {
				fault = c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Fetch}, Nodes: []int32{to}, Topic: leaderTopic,
					Err: kerr.FencedLeaderEpoch, Count: leaderFenced})
				faultIn = x.inject(&expectInjection{Kind: "error", API: "Fetch", ClientID: "capgen-kgo-leader-consumer",
					ErrorCode: kerr.FencedLeaderEpoch.Code, Error: "FENCED_LEADER_EPOCH", Topic: leaderTopic, Partition: &p, ToNode: i32p(to),
					Note: fmt.Sprintf("kfake fault: the next %d Fetch requests for the partition on node %d", leaderFenced, to)})
			}
		}
		t := time.Now()
		if err := prod.ProduceSync(ctx, &kgo.Record{Key: []byte(fmt.Sprintf("leader-%02d", i)), Value: []byte("moving target")}).FirstErr(); err != nil {
			return fmt.Errorf("produce %d: %w", i, err)
		}
		x.logf("capgen-kgo-leader-producer", "record leader-%02d acknowledged after %v", i, time.Since(t).Round(time.Millisecond))
		t = time.Now()
		if _, _, err := sprod.SendMessage(&sarama.ProducerMessage{Topic: leaderTopic, Key: sarama.StringEncoder(fmt.Sprintf("sarama-leader-%02d", i)),
			Value: sarama.StringEncoder("moving target")}); err != nil {
			return fmt.Errorf("sarama produce %d: %w", i, err)
		}
		x.logf("capgen-sarama-leader-producer", "record sarama-leader-%02d acknowledged after %v", i, time.Since(t).Round(time.Millisecond))
		time.Sleep(50 * time.Millisecond)
	}
	deadline := time.After(stepTimeout)
	for n := 0; n < 2*leaderRecords; {
		select {
		case n = <-got:
		case <-deadline:
			return fmt.Errorf("consumer read %d of %d records", n, 2*leaderRecords)
		}
	}
	x.logf("capgen-kgo-leader-consumer", "read %d records", 2*leaderRecords)
	if faultIn != nil {
		faultIn.Count = int(fault.Hits())
	}
	if faultIn == nil || faultIn.Count != leaderFenced {
		return fmt.Errorf("FENCED_LEADER_EPOCH fault answered %d fetches, want %d", faultIn.Count, leaderFenced)
	}
	x.requests("Produce v13", "Produce v7", "Fetch v18", "Metadata v13", "Metadata v7")
	x.Wire.Errors["Fetch: FENCED_LEADER_EPOCH (74)"] = leaderFenced
	x.Wire.Errors["Produce: NOT_LEADER_FOR_PARTITION (6)"] = 1
	return nil
}
