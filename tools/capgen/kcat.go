package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
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
