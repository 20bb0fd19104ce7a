package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runLongLived produces about 3 MB to one topic over one producer
// connection kept open for a few seconds: traffic that a tcpdump ring
// buffer of 1 MB files splits across files mid-connection.
func runLongLived(port int) error {
	c, err := newCluster(port)
	if err != nil {
		return err
	}
	defer c.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr(port)), kgo.ClientID("capgen-ring"), kgo.DefaultProduceTopic("capgen-ring"),
		kgo.DisableClientMetrics(), kgo.ProducerBatchMaxBytes(64<<10), kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	if _, err := kadm.NewClient(cl).CreateTopics(ctx, 1, 1, nil, "capgen-ring"); err != nil {
		return err
	}
	val := bytes.Repeat([]byte("ring buffer record "), 160) // about 3 KB
	for i := range 50 {
		var rs []*kgo.Record
		for j := range 20 {
			rs = append(rs, &kgo.Record{Key: []byte(fmt.Sprintf("k%03d-%02d", i, j)), Value: val})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			return err
		}
		time.Sleep(40 * time.Millisecond)
	}
	return nil
}

// buildKwire builds kwire from the repository into dir.
func buildKwire(t *testing.T, dir string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	kwire := filepath.Join(dir, "kwire")
	build := exec.Command("go", "build", "-o", kwire, "./cmd/kwire")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kwire: %v\n%s", err, out)
	}
	return kwire
}

// TestRingBufferMerge: the same traffic captured by one tcpdump into one
// file and by another into a ring buffer of 1 MB files (tcpdump -C 1
// -W 5), whose one long-lived connection spans the files: kwire read
// --merge of the ring's files gives the single file's exchanges, and
// without --merge it cannot (each file on its own cuts the connection).
func TestRingBufferMerge(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("capturing on loopback needs root (tcpdump)")
	}
	tcpdump, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Skip("tcpdump is not installed (.ci/run installs it)")
	}
	dir := t.TempDir()
	kwire := buildKwire(t, dir)
	const port = 19392
	single := filepath.Join(dir, "single.pcap")
	ring := filepath.Join(dir, "ring.pcap")
	c1, err := startCaptureBuffer(tcpdump, "lo", single, []int{port}, 64<<10)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := startRing(tcpdump, ring, port, 1, 5)
	if err != nil {
		c1.stop()
		t.Fatal(err)
	}
	runErr := runLongLived(port)
	err1, err2 := c1.stop(), c2.stop()
	if runErr != nil || err1 != nil || err2 != nil {
		t.Fatalf("traffic %v, captures %v, %v", runErr, err1, err2)
	}
	files, _ := filepath.Glob(ring + "[0-9]")
	if len(files) < 2 || len(files) > 5 {
		t.Fatalf("ring files %v: want 2 to 5 (about 3 MB in 1 MB files)", files)
	}
	read := func(args ...string) string {
		out, err := exec.Command(kwire, append([]string{"read", "--port", "19392"}, args...)...).Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			t.Fatalf("kwire read %v: %v", args, err)
		}
		// Two tcpdumps stamp the same packet a few microseconds apart:
		// compare the lines without their time and latency.
		var lines []string
		for _, l := range strings.Split(string(out), "\n") {
			if f := strings.Fields(l); len(f) > 9 && f[2] == "→" {
				l = strings.Join(append(f[1:8:8], f[9:]...), " ")
			}
			lines = append(lines, l)
		}
		return strings.Join(lines, "\n")
	}
	want := read(single)
	got := read(append([]string{"--merge"}, files...)...)
	if got != want {
		g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Errorf("--merge of %d ring files differs from the single capture at line %d:\n%s\nwant\n%s", len(files), i+1, g[i], w[i])
				break
			}
		}
		t.Errorf("lines %d and %d", len(g), len(w))
	}
	if n := strings.Count(want, " Produce v"); n < 50 {
		t.Errorf("%d Produce exchanges, want 50", n)
	}
	if apart := read(files...); apart == want {
		t.Error("the ring's files read apart give the single capture's output: the connection did not span files")
	}
}
