package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

const mixedTopic = "capgen-mixed"

// runMixedVersions starts two one-broker clusters: ports[0] advertises
// kfake's newest versions, ports[1] is capped at Kafka 2.1. The same
// client software talks to both, so one capture holds two ApiVersions
// ranges for the same API keys (Produce v13 vs v7, Fetch v18 vs v10, ...).
// Against the capped cluster kgo's first ApiVersions (v4) is answered with
// a v0 UNSUPPORTED_VERSION response and retried at v2 (KIP-511).
func runMixedVersions(ports []int) error {
	newest, err := newCluster(ports[0], kfake.ClusterID("capgen-newest"), kfake.SeedTopics(1, mixedTopic))
	if err != nil {
		return err
	}
	defer newest.Close()
	old, err := newCluster(ports[1], kfake.ClusterID("capgen-kafka-2.1"), kfake.SeedTopics(1, mixedTopic),
		kfake.MaxVersions(kversion.V2_1_0()))
	if err != nil {
		return err
	}
	defer old.Close()
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	for i, port := range ports {
		seed := kgo.SeedBrokers(addr(port))
		rs := []*kgo.Record{{Topic: mixedTopic, Key: []byte(fmt.Sprintf("cluster-%d", i)),
			Value: value("kgo", "gzip", i)}}
		if err := produceKgo(ctx, []kgo.Opt{seed, kgo.ClientID("capgen-kgo-mixed"),
			kgo.ProducerBatchCompression(kgo.GzipCompression())}, rs); err != nil {
			return fmt.Errorf("produce to %s: %w", addr(port), err)
		}
		if err := consumeKgo(ctx, 1, seed, kgo.ClientID("capgen-kgo-mixed"), kgo.ConsumeTopics(mixedTopic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())); err != nil {
			return fmt.Errorf("consume from %s: %w", addr(port), err)
		}
	}
	return nil
}

// rawConn is a minimal Kafka client connection for requests no library
// sends: versions past the broker's range and SASL v0 raw tokens.
type rawConn struct {
	conn net.Conn
	rd   *bufio.Reader
	fmt  *kmsg.RequestFormatter
	corr int32
}

func dialRaw(port int, clientID string) (*rawConn, error) {
	conn, err := net.DialTimeout("tcp", addr(port), 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(stepTimeout))
	return &rawConn{conn: conn, rd: bufio.NewReader(conn),
		fmt: kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID))}, nil
}

// send writes req, framed with a request header for its key and version.
func (c *rawConn) send(req kmsg.Request) (int32, error) {
	c.corr++
	_, err := c.conn.Write(c.fmt.AppendRequest(nil, req, c.corr))
	return c.corr, err
}

// readFrame reads one length-prefixed frame and returns its body.
func (c *rawConn) readFrame() ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c.rd, size[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > 64<<20 {
		return nil, fmt.Errorf("frame of %d bytes", n)
	}
	body := make([]byte, n)
	_, err := io.ReadFull(c.rd, body)
	return body, err
}

// roundTrip sends req and decodes its response as version respVersion
// (the request's own version unless the broker downgrades, as ApiVersions
// does). flexibleHeader says whether the response header has tagged fields.
func (c *rawConn) roundTrip(req kmsg.Request, resp kmsg.Response, flexibleHeader bool) error {
	corr, err := c.send(req)
	if err != nil {
		return err
	}
	body, err := c.readFrame()
	if err != nil {
		return err
	}
	if len(body) < 4 || int32(binary.BigEndian.Uint32(body)) != corr {
		return fmt.Errorf("response does not carry correlation ID %d", corr)
	}
	body = body[4:]
	if flexibleHeader {
		if len(body) < 1 || body[0] != 0 {
			return errors.New("unexpected response header tags")
		}
		body = body[1:]
	}
	return resp.ReadFrom(body)
}

func (c *rawConn) close() { c.conn.Close() }

// runUnsupportedVersions sends, on one raw connection, ApiVersions v99
// (answered with a v0 response, UNSUPPORTED_VERSION and the broker's
// ApiVersions range), then ApiVersions at the advertised version, then
// Metadata v99, which the broker answers by closing the connection.
func runUnsupportedVersions(ports []int) error {
	port := ports[0]
	c, err := newCluster(port, kfake.SeedTopics(1, "capgen-unsupported"))
	if err != nil {
		return err
	}
	defer c.Close()
	rc, err := dialRaw(port, "capgen-raw")
	if err != nil {
		return err
	}
	defer rc.close()

	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 99
	req.ClientSoftwareName = "capgen-raw"
	req.ClientSoftwareVersion = "1.0.0"
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	if err := rc.roundTrip(req, resp, false); err != nil {
		return fmt.Errorf("ApiVersions v99: %w", err)
	}
	if resp.ErrorCode != kerr.UnsupportedVersion.Code || len(resp.ApiKeys) != 1 {
		return fmt.Errorf("ApiVersions v99: error %d with %d keys, want %d with 1", resp.ErrorCode, len(resp.ApiKeys), kerr.UnsupportedVersion.Code)
	}

	req.Version = resp.ApiKeys[0].MaxVersion
	resp = kmsg.NewPtrApiVersionsResponse()
	resp.Version = req.Version
	if err := rc.roundTrip(req, resp, false); err != nil {
		return fmt.Errorf("ApiVersions v%d: %w", req.Version, err)
	}
	if resp.ErrorCode != 0 {
		return fmt.Errorf("ApiVersions v%d: error %d", req.Version, resp.ErrorCode)
	}

	md := kmsg.NewPtrMetadataRequest()
	md.Version = 99
	if _, err := rc.send(md); err != nil {
		return err
	}
	if body, err := rc.readFrame(); err == nil {
		return fmt.Errorf("Metadata v99 got a %d-byte response, want the connection closed", len(body))
	}
	return nil
}
