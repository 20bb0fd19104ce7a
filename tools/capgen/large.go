package main

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

const (
	largeTopic     = "capgen-large"
	largeValueSize = 1_500_000 // bytes, above the 1 MiB default limits
	largeMaxBytes  = 4 << 20
)

// largeValue is a deterministic value of n bytes.
func largeValue(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = 'a' + byte(x%26)
	}
	return b
}

// runLargeValue produces one uncompressed 1.5 MB record between two small
// ones and fetches them back, so one produce and one fetch span many TCP
// segments.
func runLargeValue(ports []int) error {
	port := ports[0]
	c, err := newCluster(port, kfake.BrokerConfigs(map[string]string{"message.max.bytes": fmt.Sprint(largeMaxBytes)}))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.CreateTopic(largeTopic, 1, map[string]string{"max.message.bytes": fmt.Sprint(largeMaxBytes)}); err != nil {
		return err
	}
	seed := kgo.SeedBrokers(addr(port))
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	rs := []*kgo.Record{
		{Topic: largeTopic, Key: []byte("small-before"), Value: []byte("a small record before the large one")},
		{Topic: largeTopic, Key: []byte("large"), Value: largeValue(largeValueSize)},
		{Topic: largeTopic, Key: []byte("small-after"), Value: []byte("a small record after the large one")},
	}
	for _, r := range rs {
		if err := produceKgo(ctx, []kgo.Opt{seed, kgo.ClientID("capgen-kgo-large"),
			kgo.ProducerBatchCompression(kgo.NoCompression()),
			kgo.ProducerBatchMaxBytes(largeMaxBytes)}, []*kgo.Record{r}); err != nil {
			return fmt.Errorf("produce %s: %w", r.Key, err)
		}
	}
	return consumeKgo(ctx, len(rs), seed, kgo.ClientID("capgen-kgo-large"),
		kgo.ConsumeTopics(largeTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxBytes(largeMaxBytes), kgo.FetchMaxPartitionBytes(largeMaxBytes))
}
