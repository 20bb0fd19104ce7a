package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// stepTimeout bounds each client step so a stuck scenario fails instead of
// hanging the whole run.
const stepTimeout = 20 * time.Second

// newCluster starts a one-broker kfake cluster on 127.0.0.1:port.
func newCluster(port int, opts ...kfake.Opt) (*kfake.Cluster, error) {
	base := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ClusterID("capgen-cluster"),
		kfake.GroupMinSessionTimeout(time.Second),
	}
	c, err := kfake.NewCluster(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("kfake on port %d: %w", port, err)
	}
	return c, nil
}

// addr is the loopback host:port of a broker.
func addr(port int) string { return fmt.Sprintf("127.0.0.1:%d", port) }

// value is a deterministic, compressible record value.
func value(lib, codec string, i int) []byte {
	line := fmt.Sprintf("%s %s record %d: the quick brown fox jumps over the lazy dog. ", lib, codec, i)
	return []byte(strings.Repeat(line, 4))
}

// codecRecords are the records produced per codec: keyed records with
// headers, one with a null key and one with a null value.
func codecRecords(lib, codec, topic string) []*kgo.Record {
	var rs []*kgo.Record
	for i := 0; i < 4; i++ {
		rs = append(rs, &kgo.Record{
			Topic: topic,
			Key:   []byte(fmt.Sprintf("%s-%s-key-%d", lib, codec, i)),
			Value: value(lib, codec, i),
			Headers: []kgo.RecordHeader{
				{Key: "codec", Value: []byte(codec)},
				{Key: "seq", Value: []byte(fmt.Sprint(i))},
			},
		})
	}
	rs = append(rs,
		&kgo.Record{Topic: topic, Key: nil, Value: value(lib, codec, 4)},
		&kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("%s-%s-tombstone", lib, codec)), Value: nil},
	)
	return rs
}

// codecs is the codec matrix every producing scenario goes through.
var codecs = []string{"none", "gzip", "snappy", "lz4", "zstd"}

func kgoCodec(name string) kgo.CompressionCodec {
	switch name {
	case "gzip":
		return kgo.GzipCompression()
	case "snappy":
		return kgo.SnappyCompression()
	case "lz4":
		return kgo.Lz4Compression()
	case "zstd":
		return kgo.ZstdCompression()
	}
	return kgo.NoCompression()
}
