package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"net"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// runLegacy records message sets of magic 0 and 1 (Kafka before 0.11),
// which kfake cannot serve (its Produce starts at v3). sarama pinned to
// Kafka 0.8.2 (Produce v0, Fetch v0, magic 0) and 0.10.0 (Produce v2, Fetch
// v2, magic 1 with timestamps and relative inner offsets) talks to
// legacyBroker, a small broker written here that assigns offsets the way
// Kafka does and serves the stored message sets back.
func runLegacy(ports []int) error {
	port := ports[0]
	type combo struct {
		version sarama.KafkaVersion
		tag     string
		codecs  []string
	}
	combos := []combo{
		{sarama.V0_8_2_0, "v0", []string{"none", "gzip", "snappy"}},
		{sarama.V0_10_0_0, "v1", []string{"none", "gzip", "snappy", "lz4"}},
	}
	var topics []string
	for _, c := range combos {
		for _, codec := range c.codecs {
			topics = append(topics, fmt.Sprintf("capgen-legacy-%s-%s", c.tag, codec))
		}
	}
	b, err := startLegacyBroker(port, topics)
	if err != nil {
		return err
	}
	defer b.close()

	brokers := []string{addr(port)}
	for _, c := range combos {
		for _, codec := range c.codecs {
			topic := fmt.Sprintf("capgen-legacy-%s-%s", c.tag, codec)
			cfg := sarama.NewConfig()
			cfg.ClientID = "capgen-sarama-legacy-" + c.tag
			cfg.Version = c.version
			cfg.ApiVersionsRequest = false // brokers before 0.10 do not know ApiVersions
			cfg.Producer.Compression = saramaCodec(codec)
			cfg.Producer.Return.Successes = true
			cfg.Producer.RequiredAcks = sarama.WaitForLocal
			cfg.Producer.Flush.Messages = 3 // one message set of 3
			cfg.Producer.Flush.Frequency = time.Second
			cfg.Metadata.AllowAutoTopicCreation = false
			if err := legacyRoundTrip(brokers, cfg, topic, codec); err != nil {
				return fmt.Errorf("%s: %w", topic, err)
			}
		}
	}
	return nil
}

// legacyRoundTrip produces 3 messages (one with a null key, one with a null
// value) and consumes them back with a partition consumer.
func legacyRoundTrip(brokers []string, cfg *sarama.Config, topic, codec string) error {
	p, err := sarama.NewSyncProducer(brokers, cfg)
	if err != nil {
		return err
	}
	msgs := []*sarama.ProducerMessage{
		{Topic: topic, Key: sarama.StringEncoder("legacy-" + codec + "-key-0"), Value: sarama.ByteEncoder(value("sarama-legacy", codec, 0))},
		{Topic: topic, Value: sarama.ByteEncoder(value("sarama-legacy", codec, 1))},
		{Topic: topic, Key: sarama.StringEncoder("legacy-" + codec + "-tombstone")},
	}
	err = p.SendMessages(msgs)
	p.Close()
	if err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	cons, err := sarama.NewConsumer(brokers, cfg)
	if err != nil {
		return err
	}
	defer cons.Close()
	pc, err := cons.ConsumePartition(topic, 0, sarama.OffsetOldest)
	if err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	defer pc.Close()
	timeout := time.After(stepTimeout)
	for i := int64(0); i < int64(len(msgs)); i++ {
		select {
		case m := <-pc.Messages():
			if m.Offset != i {
				return fmt.Errorf("consumed offset %d, want %d", m.Offset, i)
			}
		case err := <-pc.Errors():
			return fmt.Errorf("consume: %w", err)
		case <-timeout:
			return fmt.Errorf("consumed %d of %d", i, len(msgs))
		}
	}
	return nil
}

// legacyBroker is a one-broker, one-partition-per-topic Kafka 0.8/0.10
// lookalike: Metadata v0-1, Produce v0-2, ListOffsets v0-1, Fetch v0-3.
// Any other request closes the connection, as old brokers did.
type legacyBroker struct {
	ln   net.Listener
	port int
	mu   sync.Mutex
	logs map[string]*legacyLog
	wg   sync.WaitGroup
}

type legacyLog struct {
	sets []byte // message sets with offsets assigned
	next int64
}

var legacyMax = map[int16]int16{
	int16(kmsg.Produce):     2,
	int16(kmsg.Fetch):       3,
	int16(kmsg.ListOffsets): 1,
	int16(kmsg.Metadata):    1,
}

func startLegacyBroker(port int, topics []string) (*legacyBroker, error) {
	ln, err := net.Listen("tcp", addr(port))
	if err != nil {
		return nil, err
	}
	b := &legacyBroker{ln: ln, port: port, logs: map[string]*legacyLog{}}
	for _, t := range topics {
		b.logs[t] = &legacyLog{}
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		var conns sync.WaitGroup
		for {
			c, err := ln.Accept()
			if err != nil {
				conns.Wait()
				return
			}
			conns.Add(1)
			go func() {
				defer conns.Done()
				defer c.Close()
				b.serve(c)
			}()
		}
	}()
	return b, nil
}

func (b *legacyBroker) close() {
	b.ln.Close()
	b.wg.Wait()
}

func (b *legacyBroker) serve(c net.Conn) {
	rd := bufio.NewReader(c)
	for {
		_ = c.SetReadDeadline(time.Now().Add(stepTimeout))
		var size [4]byte
		if _, err := io.ReadFull(rd, size[:]); err != nil {
			return
		}
		n := binary.BigEndian.Uint32(size[:])
		if n < 10 || n > 16<<20 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(rd, body); err != nil {
			return
		}
		key, ver := int16(binary.BigEndian.Uint16(body)), int16(binary.BigEndian.Uint16(body[2:]))
		corr := body[4:8]
		if max, ok := legacyMax[key]; !ok || ver > max {
			return
		}
		idLen := int(int16(binary.BigEndian.Uint16(body[8:])))
		rest := body[10:]
		if idLen > 0 {
			if idLen > len(rest) {
				return
			}
			rest = rest[idLen:]
		}
		req := kmsg.RequestForKey(key)
		req.SetVersion(ver)
		if err := req.ReadFrom(rest); err != nil {
			return
		}
		resp, ok := b.handle(req)
		if !ok {
			continue // acks=0 produce
		}
		out := append([]byte{0, 0, 0, 0}, corr...)
		out = resp.AppendTo(out)
		binary.BigEndian.PutUint32(out, uint32(len(out)-4))
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

func (b *legacyBroker) handle(req kmsg.Request) (kmsg.Response, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch r := req.(type) {
	case *kmsg.MetadataRequest:
		resp := r.ResponseKind().(*kmsg.MetadataResponse)
		br := kmsg.NewMetadataResponseBroker()
		br.NodeID, br.Host, br.Port = 0, "127.0.0.1", int32(b.port)
		resp.Brokers = append(resp.Brokers, br)
		resp.ControllerID = 0
		names := make([]string, 0, len(r.Topics))
		for _, t := range r.Topics {
			if t.Topic != nil {
				names = append(names, *t.Topic)
			}
		}
		if len(r.Topics) == 0 {
			for t := range b.logs {
				names = append(names, t)
			}
		}
		for _, name := range names {
			t := kmsg.NewMetadataResponseTopic()
			t.Topic = kmsg.StringPtr(name)
			if _, ok := b.logs[name]; !ok {
				t.ErrorCode = 3 // UNKNOWN_TOPIC_OR_PARTITION
			} else {
				p := kmsg.NewMetadataResponseTopicPartition()
				p.Leader, p.Replicas, p.ISR = 0, []int32{0}, []int32{0}
				t.Partitions = append(t.Partitions, p)
			}
			resp.Topics = append(resp.Topics, t)
		}
		return resp, true
	case *kmsg.ProduceRequest:
		resp := r.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition = p.Partition
				rp.LogAppendTime = -1
				l := b.logs[t.Topic]
				if l == nil || p.Partition != 0 {
					rp.ErrorCode = 3
				} else if set, n, err := assignOffsets(p.Records, l.next); err != nil {
					log.Printf("legacy broker: %s: %v", t.Topic, err)
					rp.ErrorCode = 2 // CORRUPT_MESSAGE
				} else {
					rp.BaseOffset = l.next
					l.sets = append(l.sets, set...)
					l.next += n
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, r.Acks != 0
	case *kmsg.ListOffsetsRequest:
		resp := r.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, t := range r.Topics {
			rt := kmsg.NewListOffsetsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewListOffsetsResponseTopicPartition()
				rp.Partition = p.Partition
				l := b.logs[t.Topic]
				if l == nil || p.Partition != 0 {
					rp.ErrorCode = 3
				} else {
					off := int64(0)
					if p.Timestamp == -1 {
						off = l.next
					}
					rp.Offset, rp.Timestamp = off, -1
					rp.OldStyleOffsets = []int64{off}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp, true
	case *kmsg.FetchRequest:
		resp := r.ResponseKind().(*kmsg.FetchResponse)
		empty := true
		for _, t := range r.Topics {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewFetchResponseTopicPartition()
				rp.Partition = p.Partition
				l := b.logs[t.Topic]
				switch {
				case l == nil || p.Partition != 0:
					rp.ErrorCode = 3
				case p.FetchOffset > l.next:
					rp.ErrorCode = 1 // OFFSET_OUT_OF_RANGE
				default:
					rp.HighWatermark = l.next
					if p.FetchOffset < l.next {
						rp.RecordBatches = l.sets
						empty = false
					}
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		if empty {
			// Long poll: nothing new will come; wait a little, as a
			// broker waits MaxWaitMillis, without holding the lock.
			b.mu.Unlock()
			time.Sleep(min(time.Duration(r.MaxWaitMillis)*time.Millisecond, 100*time.Millisecond))
			b.mu.Lock()
		}
		return resp, true
	}
	return nil, false
}

// assignOffsets gives the messages of a magic 0/1 message set the offsets
// first, first+1, ... as a broker does, and reports how many it holds. A
// compressed wrapper takes the offset of its last inner message; inner
// messages keep relative offsets with magic 1, and get absolute ones with
// magic 0 (decompressed, renumbered, recompressed, new CRC).
func assignOffsets(set []byte, first int64) ([]byte, int64, error) {
	var out []byte
	next := first
	for len(set) > 0 {
		if len(set) < 12 {
			return nil, 0, errors.New("short message set entry")
		}
		size := int(int32(binary.BigEndian.Uint32(set[8:])))
		if size < 14 || 12+size > len(set) {
			return nil, 0, fmt.Errorf("message size %d", size)
		}
		msg := set[12 : 12+size]
		set = set[12+size:]
		magic, attr := msg[4], msg[5]
		codec := attr & 7
		if magic > 1 {
			return nil, 0, fmt.Errorf("magic %d", magic)
		}
		if codec == 0 {
			out = binary.BigEndian.AppendUint64(out, uint64(next))
			out = binary.BigEndian.AppendUint32(out, uint32(size))
			out = append(out, msg...)
			next++
			continue
		}
		valOff := 6
		if magic == 1 {
			valOff += 8
		}
		k, rest, err := legacyBytes(msg[valOff:])
		if err != nil {
			return nil, 0, err
		}
		val, _, err := legacyBytes(rest)
		if err != nil {
			return nil, 0, err
		}
		inner, err := decompressLegacy(codec, val)
		if err != nil {
			return nil, 0, err
		}
		m, err := countMessages(inner)
		if err != nil {
			return nil, 0, err
		}
		if m == 0 {
			return nil, 0, errors.New("empty compressed message set")
		}
		if magic == 0 {
			if inner, _, err = assignOffsets(inner, next); err != nil {
				return nil, 0, err
			}
			if val, err = compressLegacy(codec, inner); err != nil {
				return nil, 0, err
			}
			nm := append([]byte{0, 0, 0, 0}, msg[4:valOff]...)
			nm = appendLegacyBytes(nm, k)
			nm = appendLegacyBytes(nm, val)
			binary.BigEndian.PutUint32(nm, crc32.ChecksumIEEE(nm[4:]))
			msg, size = nm, len(nm)
		}
		out = binary.BigEndian.AppendUint64(out, uint64(next+m-1))
		out = binary.BigEndian.AppendUint32(out, uint32(size))
		out = append(out, msg...)
		next += m
	}
	return out, next - first, nil
}

// legacyBytes splits an int32-length-prefixed byte string (-1 is null).
func legacyBytes(b []byte) (v, rest []byte, err error) {
	if len(b) < 4 {
		return nil, nil, errors.New("short bytes length")
	}
	n := int(int32(binary.BigEndian.Uint32(b)))
	if n < 0 {
		return nil, b[4:], nil
	}
	if n > len(b)-4 {
		return nil, nil, errors.New("bytes past the message")
	}
	return b[4 : 4+n], b[4+n:], nil
}

func appendLegacyBytes(dst, v []byte) []byte {
	if v == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(v)))
	return append(dst, v...)
}

func countMessages(set []byte) (int64, error) {
	var n int64
	for len(set) > 0 {
		if len(set) < 12 {
			return 0, errors.New("short inner entry")
		}
		size := int(int32(binary.BigEndian.Uint32(set[8:])))
		if size < 0 || 12+size > len(set) {
			return 0, errors.New("inner message past the set")
		}
		set = set[12+size:]
		n++
	}
	return n, nil
}

const legacyMaxInflate = 16 << 20

func decompressLegacy(codec byte, b []byte) ([]byte, error) {
	var r io.Reader
	switch codec {
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		r = zr
	case 2:
		return xerial.DecodeCapped(make([]byte, 0, legacyMaxInflate), b)
	case 3:
		r = lz4.NewReader(bytes.NewReader(b))
	default:
		return nil, fmt.Errorf("codec %d", codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, legacyMaxInflate+1))
	if err == nil && len(out) > legacyMaxInflate {
		err = errors.New("inflates past 16 MiB")
	}
	return out, err
}

func compressLegacy(codec byte, b []byte) ([]byte, error) {
	switch codec {
	case 1:
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(b); err != nil {
			return nil, err
		}
		err := zw.Close()
		return buf.Bytes(), err
	case 2:
		return xerial.Encode(nil, b), nil
	}
	return nil, fmt.Errorf("recompressing codec %d is not needed for magic 0", codec)
}
