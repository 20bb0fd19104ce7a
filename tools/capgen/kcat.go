package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const kcatTopic = "capgen-kcat"

// runKcat drives librdkafka through the kcat command: metadata listing,
// a produce per codec and a plain and a group consume.
func runKcat(ports []int) error {
	port := ports[0]
	if _, err := ensureTool("kcat", "kcat"); err != nil {
		return err
	}
	c, err := newCluster(port, kfake.SeedTopics(1, kcatTopic))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := advertiseFromV0(c, port); err != nil {
		return err
	}
	base := []string{"-b", addr(port), "-X", "client.id=capgen-kcat", "-X", "broker.address.family=v4"}

	if _, err := kcat(base, nil, "-L"); err != nil {
		return err
	}
	want := 0
	for _, codec := range codecs {
		var in strings.Builder
		for i := 0; i < 4; i++ {
			fmt.Fprintf(&in, "kcat-%s-key-%d|%s\n", codec, i, value("kcat", codec, i))
		}
		want += 4
		args := []string{"-P", "-t", kcatTopic, "-K", "|", "-H", "codec=" + codec,
			"-X", "linger.ms=50", "-z", codec}
		if _, err := kcat(base, []byte(in.String()), args...); err != nil {
			return fmt.Errorf("produce %s: %w", codec, err)
		}
	}
	out, err := kcat(base, nil, "-C", "-t", kcatTopic, "-o", "beginning", "-e", "-f", "%k\n")
	if err != nil {
		return err
	}
	if n := strings.Count(string(out), "\n"); n != want {
		return fmt.Errorf("kcat -C printed %d records, want %d", n, want)
	}
	out, err = kcat(base, nil, "-G", "capgen-kcat-group", "-X", "auto.offset.reset=earliest",
		"-e", "-f", "%k\n", kcatTopic)
	if err != nil {
		return err
	}
	if n := strings.Count(string(out), "\n"); n != want {
		return fmt.Errorf("kcat -G printed %d records, want %d", n, want)
	}
	return nil
}

// kcat runs kcat with base and args, feeding it stdin, bounded in time.
func kcat(base []string, stdin []byte, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "kcat", append(append([]string{}, base...), args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("kcat %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// advertiseFromV0 makes the cluster advertise Produce and Fetch from v0, as
// real brokers before Kafka 4.0 do. kfake starts them at v3 and v4, and
// librdkafka derives its broker features from those ranges: without v2 it
// takes the broker for pre-0.10 and refuses to send gzip, snappy or lz4
// batches. Only the advertised ranges change; librdkafka still sends
// versions kfake serves.
func advertiseFromV0(c *kfake.Cluster, port int) error {
	rc, err := dialRaw(port, "capgen-setup")
	if err != nil {
		return err
	}
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 3
	req.ClientSoftwareName, req.ClientSoftwareVersion = "capgen", "1.0.0"
	real := kmsg.NewPtrApiVersionsResponse()
	real.Version = 3
	err = rc.roundTrip(req, real, false)
	rc.close()
	if err != nil {
		return fmt.Errorf("reading the broker's ApiVersions: %w", err)
	}
	c.ControlKey(int16(kmsg.ApiVersions), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if r.GetVersion() > 3 {
			return nil, nil, false
		}
		resp := *real
		resp.Version = r.GetVersion()
		resp.ApiKeys = append([]kmsg.ApiVersionsResponseApiKey(nil), real.ApiKeys...)
		for i := range resp.ApiKeys {
			if k := resp.ApiKeys[i].ApiKey; k == int16(kmsg.Produce) || k == int16(kmsg.Fetch) {
				resp.ApiKeys[i].MinVersion = 0
			}
		}
		return &resp, nil, true
	})
	return nil
}
