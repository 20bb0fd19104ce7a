package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/compress"
)

const kafkagoTopic = "capgen-kafkago"

func kafkagoCodec(name string) compress.Compression {
	switch name {
	case "gzip":
		return kafka.Gzip
	case "snappy":
		return kafka.Snappy
	case "lz4":
		return kafka.Lz4
	case "zstd":
		return kafka.Zstd
	}
	return 0
}

// runKafkaGo creates a topic, writes once per codec with kafka-go's Writer
// and reads everything back with a group Reader.
func runKafkaGo(ports []int) error {
	port := ports[0]
	c, err := newCluster(port)
	if err != nil {
		return err
	}
	defer c.Close()
	transport := &kafka.Transport{ClientID: "capgen-kafkago"}
	defer transport.CloseIdleConnections()
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()

	cl := &kafka.Client{Addr: kafka.TCP(addr(port)), Transport: transport}
	cr, err := cl.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{
		{Topic: kafkagoTopic, NumPartitions: 1, ReplicationFactor: 1}}})
	if err != nil {
		return fmt.Errorf("create topics: %w", err)
	}
	if err := cr.Errors[kafkagoTopic]; err != nil {
		return fmt.Errorf("create topic: %w", err)
	}

	want := 0
	for _, codec := range codecs {
		w := &kafka.Writer{
			Addr:         kafka.TCP(addr(port)),
			Topic:        kafkagoTopic,
			Compression:  kafkagoCodec(codec),
			RequiredAcks: kafka.RequireAll,
			BatchTimeout: 10 * time.Millisecond,
			Transport:    transport,
		}
		var msgs []kafka.Message
		for _, r := range codecRecords("kafkago", codec, "") {
			m := kafka.Message{Key: r.Key, Value: r.Value}
			for _, h := range r.Headers {
				m.Headers = append(m.Headers, kafka.Header{Key: h.Key, Value: h.Value})
			}
			msgs = append(msgs, m)
		}
		want += len(msgs)
		err := w.WriteMessages(ctx, msgs...)
		w.Close()
		if err != nil {
			return fmt.Errorf("write %s: %w", codec, err)
		}
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           []string{addr(port)},
		GroupID:           "capgen-kafkago-group",
		Topic:             kafkagoTopic,
		Dialer:            &kafka.Dialer{ClientID: "capgen-kafkago-reader", Timeout: 5 * time.Second},
		StartOffset:       kafka.FirstOffset,
		HeartbeatInterval: 200 * time.Millisecond,
		SessionTimeout:    6 * time.Second,
		MaxWait:           200 * time.Millisecond,
	})
	rctx, rcancel := context.WithTimeout(ctx, stepTimeout)
	defer rcancel()
	for got := 0; got < want; got++ {
		if _, err := r.ReadMessage(rctx); err != nil {
			r.Close()
			return fmt.Errorf("read %d of %d: %w", got, want, err)
		}
	}
	time.Sleep(500 * time.Millisecond)
	if err := r.Close(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("close reader: %w", err)
	}
	return nil
}
