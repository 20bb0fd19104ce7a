package main

import (
	"context"
	"fmt"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
)

const saramaTopic = "capgen-sarama"

func saramaCodec(name string) sarama.CompressionCodec {
	switch name {
	case "gzip":
		return sarama.CompressionGZIP
	case "snappy":
		return sarama.CompressionSnappy
	case "lz4":
		return sarama.CompressionLZ4
	case "zstd":
		return sarama.CompressionZSTD
	}
	return sarama.CompressionNone
}

func saramaConfig(clientID string) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = clientID
	cfg.Version = sarama.V2_1_0_0
	cfg.Metadata.AllowAutoTopicCreation = false
	return cfg
}

// runSarama creates a topic with sarama's ClusterAdmin, produces once per
// codec (Kafka 2.1 protocol versions) and consumes in a consumer group.
func runSarama(ports []int) error {
	port := ports[0]
	c, err := newCluster(port, kfake.GroupMinSessionTimeout(time.Second))
	if err != nil {
		return err
	}
	defer c.Close()
	brokers := []string{addr(port)}

	adm, err := sarama.NewClusterAdmin(brokers, saramaConfig("capgen-sarama-admin"))
	if err != nil {
		return fmt.Errorf("cluster admin: %w", err)
	}
	if err := adm.CreateTopic(saramaTopic, &sarama.TopicDetail{NumPartitions: 1, ReplicationFactor: 1}, false); err != nil {
		adm.Close()
		return fmt.Errorf("create topic: %w", err)
	}
	if _, err := adm.DescribeTopics([]string{saramaTopic}); err != nil {
		adm.Close()
		return fmt.Errorf("describe topics: %w", err)
	}
	adm.Close()

	want := 0
	for _, codec := range codecs {
		cfg := saramaConfig("capgen-sarama-" + codec)
		cfg.Producer.Compression = saramaCodec(codec)
		cfg.Producer.RequiredAcks = sarama.WaitForAll
		cfg.Producer.Return.Successes = true
		cfg.Producer.Flush.Frequency = 20 * time.Millisecond
		if codec == "zstd" {
			cfg.Producer.Idempotent = true
			cfg.Net.MaxOpenRequests = 1
		}
		p, err := sarama.NewSyncProducer(brokers, cfg)
		if err != nil {
			return fmt.Errorf("producer %s: %w", codec, err)
		}
		var msgs []*sarama.ProducerMessage
		for _, r := range codecRecords("sarama", codec, saramaTopic) {
			m := &sarama.ProducerMessage{Topic: saramaTopic}
			if r.Key != nil {
				m.Key = sarama.ByteEncoder(r.Key)
			}
			if r.Value != nil {
				m.Value = sarama.ByteEncoder(r.Value)
			}
			for _, h := range r.Headers {
				m.Headers = append(m.Headers, sarama.RecordHeader{Key: []byte(h.Key), Value: h.Value})
			}
			msgs = append(msgs, m)
		}
		want += len(msgs)
		err = p.SendMessages(msgs)
		p.Close()
		if err != nil {
			return fmt.Errorf("produce %s: %w", codec, err)
		}
	}

	cfg := saramaConfig("capgen-sarama-group")
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Group.Heartbeat.Interval = 200 * time.Millisecond
	cfg.Consumer.Group.Session.Timeout = 6 * time.Second
	cfg.Consumer.Offsets.AutoCommit.Interval = 200 * time.Millisecond
	g, err := sarama.NewConsumerGroup(brokers, "capgen-sarama-group", cfg)
	if err != nil {
		return fmt.Errorf("consumer group: %w", err)
	}
	ctx, cancel := withTimeout(stepTimeout)
	defer cancel()
	h := &saramaHandler{want: want, done: cancel}
	for ctx.Err() == nil {
		if err := g.Consume(ctx, []string{saramaTopic}, h); err != nil {
			g.Close()
			return fmt.Errorf("consume: %w", err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if err := g.Close(); err != nil {
		return fmt.Errorf("close group: %w", err)
	}
	if h.got < want {
		return fmt.Errorf("consumed %d of %d records", h.got, want)
	}
	return nil
}

type saramaHandler struct {
	want, got int
	done      context.CancelFunc
}

func (*saramaHandler) Setup(sarama.ConsumerGroupSession) error   { return nil }
func (*saramaHandler) Cleanup(sarama.ConsumerGroupSession) error { return nil }

func (h *saramaHandler) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for m := range claim.Messages() {
		s.MarkMessage(m, "")
		h.got++
		if h.got >= h.want {
			s.Commit()
			time.Sleep(500 * time.Millisecond) // a few heartbeats
			h.done()
			return nil
		}
	}
	return nil
}
