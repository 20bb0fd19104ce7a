package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// errDropped reports a capture that lost packets; the scenario is rerun.
var errDropped = errors.New("incomplete capture")

var (
	capturedRE = regexp.MustCompile(`(\d+) packets? captured`)
	receivedRE = regexp.MustCompile(`(\d+) packets? received by filter`)
	droppedRE  = regexp.MustCompile(`(\d+) packets? dropped by kernel`)
)

// checkCounts reads tcpdump's closing statistics. On loopback the kernel
// hands every packet to the socket twice (outgoing and incoming) and
// libpcap keeps one copy, so a complete capture has exactly half the
// packets the filter received; fewer means tcpdump stopped before reading
// them all.
func checkCounts(summary string, loopback bool) error {
	count := func(re *regexp.Regexp) int {
		m := re.FindStringSubmatch(summary)
		if m == nil {
			return -1
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	captured, received, dropped := count(capturedRE), count(receivedRE), count(droppedRE)
	if dropped > 0 {
		return fmt.Errorf("%w: %d packets dropped by kernel", errDropped, dropped)
	}
	if loopback && captured >= 0 && received >= 0 && captured*2 < received {
		return fmt.Errorf("%w: %d packets captured of %d received (loopback counts each twice)", errDropped, captured, received)
	}
	return nil
}

// capture is one running tcpdump writing a pcap file.
type capture struct {
	cmd   *exec.Cmd
	file  string
	ring  bool // tcpdump -C/-W: the files are file0, file1, ...
	iface string
	done  chan error
	errs  strings.Builder
}

// captureFilter builds a BPF filter matching TCP traffic on any of ports.
func captureFilter(ports []int) string {
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprintf("tcp port %d", p)
	}
	return strings.Join(parts, " or ")
}

// startCapture runs tcpdump on iface, writing whole packets (-s 0) of the
// given TCP ports to file, and returns once tcpdump reports that it listens.
func startCapture(tcpdump, iface, file string, ports []int) (*capture, error) {
	return startCaptureBuffer(tcpdump, iface, file, ports, 64<<10)
}

// startCaptureBuffer is startCapture with the kernel capture buffer size in
// KiB (tcpdump -B).
func startCaptureBuffer(tcpdump, iface, file string, ports []int, bufferKiB int) (*capture, error) {
	return startCaptureArgs(tcpdump, iface, file, ports, bufferKiB)
}

// startRing captures into a ring buffer of files of sizeMB megabytes,
// at most count of them (tcpdump -C sizeMB -W count): file0, file1, ...
func startRing(tcpdump, file string, port, sizeMB, count int) (*capture, error) {
	c, err := startCaptureArgs(tcpdump, "lo", file, []int{port}, 64<<10, "-C", strconv.Itoa(sizeMB), "-W", strconv.Itoa(count))
	if c != nil {
		c.ring = true
	}
	return c, err
}

func startCaptureArgs(tcpdump, iface, file string, ports []int, bufferKiB int, extra ...string) (*capture, error) {
	args := []string{"-i", iface, "-s", "0", "-U", "--immediate-mode", "-B", strconv.Itoa(bufferKiB), "-n", "-w", file}
	args = append(args, extra...)
	if os.Geteuid() == 0 {
		args = append(args, "-Z", "root") // keep the file ours, not tcpdump's user's
	}
	args = append(args, captureFilter(ports))
	cmd := exec.Command(tcpdump, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", tcpdump, err)
	}
	c := &capture{cmd: cmd, file: file, iface: iface, done: make(chan error, 1)}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			c.errs.WriteString(line + "\n")
			if !signalled && strings.Contains(line, "listening on") {
				signalled = true
				close(ready)
			}
		}
		if !signalled {
			close(ready)
		}
		c.done <- cmd.Wait()
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		return nil, errors.New("tcpdump did not report listening within 10s")
	}
	if cmd.ProcessState != nil {
		return nil, fmt.Errorf("tcpdump exited early: %s", c.errs.String())
	}
	// tcpdump prints "listening on" after the filter is attached; give the
	// kernel a moment all the same.
	time.Sleep(200 * time.Millisecond)
	return c, nil
}

// stop lets in-flight packets land, then stops tcpdump with SIGINT and waits
// for it to flush and exit.
func (c *capture) stop() error {
	// With -U every packet is flushed to the file as tcpdump handles it;
	// a loaded machine can leave tcpdump behind the kernel's ring, and
	// SIGINT drops what it has not read yet. Wait for the file to settle.
	last, still := int64(-1), 0
	for deadline := time.Now().Add(15 * time.Second); still < 3 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		size := int64(-1)
		if st, err := os.Stat(c.file); err == nil {
			size = st.Size()
		}
		if c.ring {
			files, _ := filepath.Glob(c.file + "[0-9]*")
			for _, f := range files {
				if st, err := os.Stat(f); err == nil {
					size += st.Size()
				}
			}
		}
		if size == last {
			still++
		} else {
			last, still = size, 0
		}
	}
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return err
	}
	select {
	case err := <-c.done:
		if err != nil {
			return fmt.Errorf("tcpdump: %w: %s", err, c.errs.String())
		}
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		return errors.New("tcpdump did not exit after SIGINT")
	}
	if verbose {
		log.Printf("tcpdump: %s", strings.TrimSpace(c.errs.String()))
	}
	if err := checkCounts(c.errs.String(), c.iface == "lo"); err != nil {
		return err
	}
	file := c.file
	if c.ring {
		file += "0"
	}
	st, err := os.Stat(file)
	if err != nil {
		return err
	}
	if st.Size() <= 24 {
		return fmt.Errorf("%s: no packets captured", file)
	}
	return nil
}

// withTimeout is a context bounded by d, for scenario steps.
func withTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
