package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kwire/kwire/reassembly/live"
	"github.com/spf13/cobra"
)

// The live tests capture on loopback. They need root (or CAP_NET_RAW) and
// skip without; the one with a Kafka client also needs the go command, to
// build tools/capgen (a module of its own, which keeps kfake and kgo out
// of kwire's go.mod).

// syncBuffer is a bytes.Buffer safe for a writer and a poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitFor polls until s() contains want, or fails after d.
func waitFor(t *testing.T, what string, d time.Duration, s func() string, want string) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if strings.Contains(s(), want) {
			return
		}
	}
	t.Fatalf("no %q in %s after %v:\n%s", want, what, d, s())
}

// liveRoot is the root command with live, registered here when root.go
// does not register it (yet).
func liveRoot(s *ioStreams) *cobra.Command {
	root := newRootCmd(s)
	if c, _, err := root.Find([]string{"live"}); err != nil || c.Name() != "live" {
		root.AddCommand(newLiveCmd(s, &globalOptions{Color: "never"}))
	}
	return root
}

// liveRun is a kwire live running in-process.
type liveRun struct {
	out, errOut syncBuffer
	cancel      context.CancelFunc
	done        chan int
}

// startLive runs kwire with args in-process. It skips the test when
// capturing is not permitted and returns once the capture has started.
func startLive(t *testing.T, args ...string) *liveRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &liveRun{cancel: cancel, done: make(chan int, 1)}
	s := &ioStreams{In: strings.NewReader(""), Out: &r.out, ErrOut: &r.errOut, Getenv: func(string) string { return "" }}
	root := liveRoot(s)
	root.SetArgs(args)
	go func() { r.done <- exitCode(root.ExecuteContext(ctx), &r.errOut) }()
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		select {
		case code := <-r.done:
			cancel()
			if strings.Contains(r.errOut.String(), "(needs ") {
				t.Skipf("live capture needs root or CAP_NET_RAW: %s", r.errOut.String())
			}
			t.Fatalf("kwire %s: exit %d before capturing:\n%s", strings.Join(args, " "), code, r.errOut.String())
		default:
		}
		if strings.Contains(r.errOut.String(), "kwire: capturing on") {
			return r
		}
		if time.Now().After(end) {
			cancel()
			t.Fatalf("kwire %s did not start capturing:\n%s", strings.Join(args, " "), r.errOut.String())
		}
	}
}

// stop ends the capture as Ctrl-C does and returns the exit code.
func (r *liveRun) stop(t *testing.T) int {
	t.Helper()
	r.cancel()
	return r.wait(t)
}

func (r *liveRun) wait(t *testing.T) int {
	t.Helper()
	select {
	case code := <-r.done:
		return code
	case <-time.After(10 * time.Second):
		t.Fatal("kwire live did not stop within 10 s")
		return -1
	}
}

// requireCapture skips the test when this process may not capture.
func requireCapture(t *testing.T) {
	t.Helper()
	src, err := live.Open(live.Config{Interface: "lo"})
	if errors.Is(err, live.ErrPermission) {
		t.Skipf("live capture needs root or CAP_NET_RAW: %v", err)
	}
	if err != nil {
		t.Skipf("cannot capture on lo: %v", err)
	}
	src.Close()
}

// trafficReport is the JSON line capgen -traffic prints at the end.
type trafficReport struct {
	Broker    string `json:"broker"`
	Topic     string `json:"topic"`
	Rounds    int    `json:"rounds"`
	Produced  int    `json:"produced"`
	Fetched   int    `json:"fetched"`
	KeyPrefix string `json:"keyPrefix"`
}

var (
	capgenOnce sync.Once
	capgenBin  string
	capgenErr  error
)

// buildCapgen builds tools/capgen once per test binary.
func buildCapgen(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not available to build tools/capgen: skipping the Kafka traffic test")
	}
	capgenOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kwire-live-capgen")
		if err != nil {
			capgenErr = err
			return
		}
		capgenBin = filepath.Join(dir, "capgen")
		cmd := exec.Command(gobin, "build", "-o", capgenBin, ".")
		cmd.Dir = filepath.Join("..", "..", "tools", "capgen")
		if out, err := cmd.CombinedOutput(); err != nil {
			capgenErr = fmt.Errorf("go build tools/capgen: %v\n%s", err, out)
		}
	})
	if capgenErr != nil {
		t.Fatal(capgenErr)
	}
	return capgenBin
}

// startTraffic starts capgen -traffic on a free port: the broker is up
// when it returns; the clients start when go is called, and go returns
// capgen's report.
func startTraffic(t *testing.T, args ...string) (port string, run func() trafficReport) {
	t.Helper()
	bin := buildCapgen(t)
	cmd := exec.Command(bin, append([]string{"-traffic", "-port", "0", "-wait-stdin"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "broker ")
	if err != nil || !ok {
		t.Fatalf("capgen -traffic: %q, %v\n%s", line, err, stderr.String())
	}
	_, port, _ = strings.Cut(addr, ":")
	return port, func() trafficReport {
		t.Helper()
		if _, err := io.WriteString(stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(br)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("capgen -traffic: %v\n%s", err, stderr.String())
		}
		var rep trafficReport
		if err := json.Unmarshal(bytes.TrimSpace(rest), &rep); err != nil {
			t.Fatalf("capgen -traffic report %q: %v", rest, err)
		}
		return rep
	}
}

// exchangeJSON is the part of render.ExchangeDoc the tests look at.
type exchangeJSON struct {
	Kind     string       `json:"kind"`
	API      string       `json:"api"`
	ClientID *string      `json:"clientId"`
	Request  *messageJSON `json:"request"`
	Response *messageJSON `json:"response"`
}

type messageJSON struct {
	Body json.RawMessage `json:"body"`
}

// Bodies, as far as the tests need them (Kafka's JsonConverter names).
type (
	metadataResponse struct {
		Topics []struct {
			Name    string `json:"name"`
			TopicID string `json:"topicId"`
		} `json:"topics"`
	}
	produceRequest struct {
		TopicData []struct {
			Name          string `json:"name"`
			TopicID       string `json:"topicId"`
			PartitionData []struct {
				Records []batchJSON `json:"records"`
			} `json:"partitionData"`
		} `json:"topicData"`
	}
	fetchResponse struct {
		Responses []struct {
			Topic      string `json:"topic"`
			TopicID    string `json:"topicId"`
			Partitions []struct {
				Records []batchJSON `json:"records"`
			} `json:"partitions"`
		} `json:"responses"`
	}
	batchJSON struct {
		Records []struct {
			Key string `json:"key"`
		} `json:"records"`
	}
)

func parseExchanges(t *testing.T, ndjson string) []exchangeJSON {
	t.Helper()
	var exs []exchangeJSON
	for line := range strings.SplitSeq(strings.TrimSpace(ndjson), "\n") {
		if line == "" {
			continue
		}
		var ex exchangeJSON
		if err := json.Unmarshal([]byte(line), &ex); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, line)
		}
		if isEventKind(ex.Kind) {
			continue // an event, not an exchange
		}
		exs = append(exs, ex)
	}
	return exs
}

func keysOf(bs []batchJSON) []string {
	var keys []string
	for _, b := range bs {
		for _, r := range b.Records {
			keys = append(keys, r.Key)
		}
	}
	return keys
}

// TestLiveKafka captures a kfake broker and a kgo producer and consumer on
// loopback and checks the exchanges: the APIs, the topic, every produced
// record in the Produce requests and again in the Fetch responses. Then
// the -w recording must read back (kwire read) to the same output.
func TestLiveKafka(t *testing.T) {
	requireCapture(t)
	port, traffic := startTraffic(t, "-duration", "400ms", "-interval", "100ms", "-records", "7")
	pcapng := filepath.Join(t.TempDir(), "live.pcapng")
	r := startLive(t, "live", "-i", "lo", "--port", port, "--json", "-w", pcapng)
	rep := traffic()
	time.Sleep(150 * time.Millisecond) // the last packets reach the capture
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d after Ctrl-C, want 0; stderr:\n%s", code, r.errOut.String())
	}
	out, errOut := r.out.String(), r.errOut.String()
	if rep.Produced < 7 || rep.Fetched != rep.Produced {
		t.Fatalf("capgen report %+v", rep)
	}

	exs := parseExchanges(t, out)
	apis := map[string]int{}
	topicIDs := map[string]bool{} // IDs of rep.Topic in Metadata responses
	var produced, fetched []string
	for _, ex := range exs {
		apis[ex.API]++
		if ex.Kind != "paired" || ex.Request == nil || ex.Response == nil {
			continue
		}
		switch ex.API {
		case "Metadata":
			var md metadataResponse
			if err := json.Unmarshal(ex.Response.Body, &md); err != nil {
				t.Fatalf("Metadata response: %v", err)
			}
			for _, tp := range md.Topics {
				if tp.Name == rep.Topic {
					topicIDs[tp.TopicID] = true
				}
			}
		case "Produce":
			var pr produceRequest
			if err := json.Unmarshal(ex.Request.Body, &pr); err != nil {
				t.Fatalf("Produce request: %v", err)
			}
			for _, td := range pr.TopicData {
				if td.Name != rep.Topic && !topicIDs[td.TopicID] {
					t.Errorf("Produce to topic %q (ID %s), want %s (IDs %v)", td.Name, td.TopicID, rep.Topic, topicIDs)
				}
				for _, pd := range td.PartitionData {
					produced = append(produced, keysOf(pd.Records)...)
				}
			}
		case "Fetch":
			var fr fetchResponse
			if err := json.Unmarshal(ex.Response.Body, &fr); err != nil {
				t.Fatalf("Fetch response: %v", err)
			}
			for _, tr := range fr.Responses {
				for _, p := range tr.Partitions {
					keys := keysOf(p.Records)
					if len(keys) > 0 && tr.Topic != rep.Topic && !topicIDs[tr.TopicID] {
						t.Errorf("Fetch from topic %q (ID %s), want %s", tr.Topic, tr.TopicID, rep.Topic)
					}
					fetched = append(fetched, keys...)
				}
			}
		}
	}
	for _, api := range []string{"ApiVersions", "Metadata", "Produce", "Fetch"} {
		if apis[api] == 0 {
			t.Errorf("no %s exchange captured; APIs seen: %v", api, apis)
		}
	}
	if len(topicIDs) == 0 {
		t.Errorf("no Metadata response named topic %s", rep.Topic)
	}
	var want []string
	for i := range rep.Produced {
		want = append(want, rep.KeyPrefix+strconv.Itoa(i)) // printable keys are JSON text
	}
	if !slices.Equal(produced, want) {
		t.Errorf("record keys in Produce requests:\n got %v\nwant %v", produced, want)
	}
	if !slices.Equal(fetched, want) {
		t.Errorf("record keys in Fetch responses:\n got %v\nwant %v", fetched, want)
	}
	if !strings.Contains(errOut, "capture: ") || !strings.Contains(errOut, " 0 dropped by the kernel") {
		t.Errorf("no capture statistics in the summary (stderr with --json):\n%s", errOut)
	}
	if !strings.Contains(errOut, "kwire: interrupted") {
		t.Errorf("stderr does not say the capture was interrupted:\n%s", errOut)
	}

	// The recording reads back to the same exchanges, byte for byte.
	var back, backErr bytes.Buffer
	s := &ioStreams{In: strings.NewReader(""), Out: &back, ErrOut: &backErr, Getenv: func(string) string { return "" }}
	if code := run([]string{"read", "--port", port, "--json", pcapng}, s); code != exitOK {
		t.Fatalf("kwire read of the recording: exit %d\n%s", code, backErr.String())
	}
	if back.String() != out {
		t.Errorf("kwire read of the -w recording differs from the live output:\nlive:\n%s\nread:\n%s", out, back.String())
	}
}

// TestLiveStopsByItself checks --duration and --count, text output, the
// capture statistics line and that an idle interface ends on time.
func TestLiveStopsByItself(t *testing.T) {
	start := time.Now()
	r := startLive(t, "live", "-i", "lo", "--port", "1", "--duration", "500ms")
	code := r.wait(t)
	el := time.Since(start)
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, r.errOut.String())
	}
	if el < 500*time.Millisecond || el > 5*time.Second {
		t.Errorf("a 500 ms capture took %v", el)
	}
	out := r.out.String()
	for _, want := range []string{"packets 0, connections 0", "capture: 0 packets, 0 dropped by the kernel\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the output:\n%s", want, out)
		}
	}
	if strings.Contains(r.errOut.String(), "interrupted") {
		t.Errorf("--duration reported as an interruption:\n%s", r.errOut.String())
	}
	// The note names the interface and filter nothing passed, and what
	// to change (a file's "the capture holds no packets" told a live
	// user nothing).
	if !strings.Contains(r.errOut.String(), `no Kafka connections found: no packet on lo passed the capture filter "tcp port 1": a broker on other ports needs --port`) {
		t.Errorf("no note about the missing Kafka traffic:\n%s", r.errOut.String())
	}
}

// TestLiveErrors checks the errors that come before any capture.
func TestLiveErrors(t *testing.T) {
	tests := []struct {
		args []string
		want []string // in stderr
	}{
		{[]string{"-i", "kwire-nosuch0"}, []string{`no interface "kwire-nosuch0"; available: `, "lo"}},
		{[]string{"-i", "lo", "--duration", "-1s"}, []string{"--duration must not be negative"}},
		{[]string{"-i", "lo", "-c", "-5"}, []string{"--count must not be negative"}},
		{[]string{"-i", "lo", "-s", "10"}, []string{"--snaplen must be from 64"}},
		{[]string{"-i", "lo", "-B", "0"}, []string{"--buffer-size must be from 1"}},
		{[]string{"-i", "lo", "--port", "70000"}, []string{"70000 is not a TCP port (1-65535)"}},
		{[]string{"-i", "lo", "--filter", "latncy_ms > 1"}, []string{"unknown name latncy_ms"}},
		{[]string{"-i", "lo", "--json", "-V"}, []string{"-V and --json cannot be combined"}},
		{[]string{"extra-arg"}, []string{"unknown command"}},
		{[]string{"-i", "lo", "-w", filepath.Join(t.TempDir(), "no", "such", "dir.pcapng")}, []string{"no such file or directory"}},
	}
	if live.Backend != "libpcap" {
		tests = append(tests,
			struct {
				args []string
				want []string
			}{[]string{"-i", "lo", "-f", "udp port 53"}, []string{`capture filter "udp port 53"`, "unsupported primitive", "-tags pcap"}},
			struct {
				args []string
				want []string
			}{[]string{"-i", "lo", "-f", "port 1 and"}, []string{`capture filter "port 1 and"`, "expected a primitive"}},
		)
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		s := &ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
		root := liveRoot(s)
		root.SetArgs(append([]string{"live"}, tt.args...))
		code := exitCode(root.Execute(), &errOut)
		if code != exitUsage {
			t.Errorf("kwire live %v: exit %d, want 2; stderr:\n%s", tt.args, code, errOut.String())
		}
		for _, w := range tt.want {
			if !strings.Contains(errOut.String(), w) {
				t.Errorf("kwire live %v: no %q in stderr:\n%s", tt.args, w, errOut.String())
			}
		}
		if out.Len() > 0 {
			t.Errorf("kwire live %v: stdout %q", tt.args, out.String())
		}
	}
}

// kwireBinary returns a copy of the test binary that runs as kwire (see
// TestMain) in a directory every user can reach, when root.go registers
// live; it skips the test otherwise.
func kwireBinary(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the subprocess tests use Linux's loopback interface lo")
	}
	root := newRootCmd(&ioStreams{Out: io.Discard, ErrOut: io.Discard})
	if c, _, err := root.Find([]string{"live"}); err != nil || c.Name() != "live" {
		t.Skip("live is not registered in root.go yet")
	}
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Skip(err)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "kwire")
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// TestLiveSignals runs kwire live as a process and stops it with SIGINT
// and with SIGTERM: exit 0, with the summary.
func TestLiveSignals(t *testing.T) {
	exe := kwireBinary(t)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		var out, errOut syncBuffer
		cmd := exec.Command(exe, "live", "-i", "lo", "--port", "1")
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "stderr", 10*time.Second, func() string {
			if strings.Contains(errOut.String(), "CAP_NET_RAW") {
				cmd.Wait()
				t.Skipf("live capture needs root or CAP_NET_RAW: %s", errOut.String())
			}
			return errOut.String()
		}, "kwire: capturing on lo")
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		if err != nil {
			t.Errorf("%v: %v; stderr:\n%s", sig, err, errOut.String())
		}
		if !strings.Contains(out.String(), "capture: 0 packets, 0 dropped by the kernel") {
			t.Errorf("%v: no summary:\n%s", sig, out.String())
		}
	}
}

// TestLivePermission runs kwire live as user nobody: exit 2 and a message
// that says how to get the permission, no stack trace.
func TestLivePermission(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run kwire as user nobody")
	}
	exe := kwireBinary(t)
	cmd := exec.Command(exe, "live", "-i", "lo")
	cmd.Dir = filepath.Dir(exe)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
		t.Fatalf("as nobody: %v, want exit status 2; stderr:\n%s", err, errOut.String())
	}
	msg := errOut.String()
	for _, want := range []string{"kwire: capturing on lo: ", "(needs CAP_NET_RAW)", "run kwire as root", "sudo setcap cap_net_raw", "+ep " + exe + "\n"} {
		if !strings.Contains(msg, want) {
			t.Errorf("no %q in:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "goroutine") || out.Len() > 0 {
		t.Errorf("stdout %q, stderr:\n%s", out.String(), msg)
	}
}

// TestLiveUnanswered stops a capture while a request awaits its response:
// the request is listed as unanswered, as at the end of a capture file.
// The connection is chosen by --port, or by -f alone (Kafka is then
// recognised by content).
func TestLiveUnanswered(t *testing.T) {
	for _, by := range []string{"--port", "-f"} {
		t.Run(by, func(t *testing.T) {
			ln, err := net.Listen("tcp4", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err == nil {
					io.Copy(io.Discard, c) // a broker that never answers
					c.Close()
				}
			}()
			port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
			args := []string{"live", "-i", "lo", "--port", port}
			if by == "-f" {
				args = []string{"live", "-i", "lo", "-f", "dst port " + port + " or src port " + port}
			}
			r := startLive(t, args...)
			c, err := net.Dial("tcp4", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// ApiVersions v0 request: length 11, api key 18, version 0,
			// correlation ID 7, client ID "t".
			if _, err := c.Write([]byte{0, 0, 0, 11, 0, 18, 0, 0, 0, 0, 0, 7, 0, 1, 't'}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(150 * time.Millisecond)
			if code := r.stop(t); code != exitOK {
				t.Fatalf("exit %d:\n%s", code, r.errOut.String())
			}
			out := r.out.String()
			var line string
			for l := range strings.SplitSeq(out, "\n") {
				if strings.Contains(l, "ApiVersions v0 corr=7") {
					line = l
				}
			}
			if !strings.Contains(line, "client=t") || !strings.Contains(strings.ToLower(line), "unanswered") {
				t.Errorf("no unanswered ApiVersions line in:\n%s", out)
			}
			if !strings.Contains(out, "1 unanswered") {
				t.Errorf("the summary does not count the unanswered request:\n%s", out)
			}
		})
	}
}

// TestLiveStats captures kfake traffic with --stats --top 2: the exchange
// lines come first, then the summary and the capture's counts, then kwire
// stats's report, whose APIS table counts as many Produce and Fetch
// requests as there were Produce and Fetch exchange lines.
func TestLiveStats(t *testing.T) {
	requireCapture(t)
	port, traffic := startTraffic(t, "-duration", "300ms", "-interval", "100ms", "-records", "5")
	r := startLive(t, "live", "-i", "lo", "--port", port, "--stats", "--top", "2")
	rep := traffic()
	time.Sleep(150 * time.Millisecond) // the last packets reach the capture
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d after Ctrl-C, want 0; stderr:\n%s", code, r.errOut.String())
	}
	if rep.Produced < 5 {
		t.Fatalf("capgen report %+v", rep)
	}
	out := r.out.String()
	lines := strings.Split(out, "\n")

	// Exchange lines: "TIME CLIENT → BROKER API vN ..." (orphans have
	// "orphan response" where the API name is).
	shown := map[string]int64{}
	capture, apis := -1, -1
	for i, l := range lines {
		f := strings.Fields(l)
		switch {
		case len(f) > 5 && f[2] == "→" && strings.HasPrefix(f[5], "v") && apis < 0:
			shown[f[4]]++
		case strings.HasPrefix(l, "capture: ") && strings.Contains(l, " dropped by the kernel"):
			capture = i
		case l == "APIS":
			apis = i
		}
	}
	if capture < 0 || apis < capture {
		t.Fatalf("want the capture's counts, then the APIS table (lines %d, %d):\n%s", capture, apis, out)
	}

	// APIS rows: "NAME VER REQ/RESP ...", up to the legend under them.
	requests := map[string]int64{}
	for _, l := range lines[apis+2:] {
		if l == "" || strings.HasPrefix(l, "REQ/RESP = ") {
			break
		}
		f := strings.Fields(l)
		if len(f) < 3 {
			t.Fatalf("APIS row %q: no requests/responses column", l)
		}
		req, _, ok := strings.Cut(f[2], "/")
		n, err := strconv.ParseInt(req, 10, 64)
		if !ok || err != nil {
			t.Fatalf("APIS row %q: no requests/responses column", l)
		}
		requests[f[0]] += n
	}
	for _, api := range []string{"Produce", "Fetch"} {
		if requests[api] == 0 || requests[api] != shown[api] {
			t.Errorf("%s: %d requests in APIS, %d exchange lines; want equal and > 0\n%s", api, requests[api], shown[api], out)
		}
	}
	if !strings.Contains(out, "\nSLOWEST 2, ") {
		t.Errorf("no SLOWEST 2 table for --top 2:\n%s", out)
	}
}

// TestLiveTLS captures kfake over TLS while its clients append their
// secrets to a key log that does not exist, or is empty, when kwire
// starts: kwire live says so once, reads it as it grows, holds the
// records until their keys are there, and decrypts every connection.
func TestLiveTLS(t *testing.T) {
	requireCapture(t)
	for _, start := range []string{"missing", "empty"} {
		t.Run(start, func(t *testing.T) { liveTLS(t, start) })
	}
}

func liveTLS(t *testing.T, start string) {
	keylog := filepath.Join(t.TempDir(), "keys.log")
	note := "kwire: note: --tls-keylog " + keylog + " does not exist yet: it is read once it does, as it grows (TLS connections are decrypted once their keys are in it)\n"
	if start == "empty" {
		if err := os.WriteFile(keylog, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		note = "kwire: note: --tls-keylog " + keylog + " is empty: it is read again as it grows (TLS connections are decrypted once their keys are in it)\n"
	}
	port, traffic := startTraffic(t, "-records", "4", "-keylog", keylog)
	r := startLive(t, "live", "-i", "lo", "--port", port, "--json", "--tls-keylog", keylog)
	rep := traffic()
	time.Sleep(150 * time.Millisecond)
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d after Ctrl-C, want 0; stderr:\n%s", code, r.errOut.String())
	}
	if n := strings.Count(r.errOut.String(), note); n != 1 {
		t.Errorf("the note %q %d times in:\n%s", note, n, r.errOut.String())
	}
	out := r.out.String()
	decrypted, notDecrypted := 0, 0
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(line, `"kind":"tls"`) && strings.Contains(line, `"decrypted":true`):
			decrypted++
		case strings.Contains(line, `"kind":"tls"`):
			notDecrypted++
			t.Errorf("not decrypted: %s", line)
		}
	}
	apis := map[string]int{}
	for _, ex := range parseExchanges(t, out) {
		if ex.Kind == "paired" {
			apis[ex.API]++
		}
	}
	if decrypted == 0 || apis["Produce"] == 0 || apis["Fetch"] == 0 || rep.Produced != 4 {
		t.Errorf("%d TLS connections decrypted, paired exchanges %v, report %+v\nstderr:\n%s", decrypted, apis, rep, r.errOut.String())
	}
}

// TestLiveNamesWarning: kwire live warns, as read does, when
// --max-names-memory kept topic names from being learnt: the consumer's
// Fetch v13+ names its topic by ID, shown unresolved.
func TestLiveNamesWarning(t *testing.T) {
	requireCapture(t)
	port, traffic := startTraffic(t, "-duration", "300ms", "-interval", "100ms", "-records", "5")
	r := startLive(t, "live", "-i", "lo", "--port", port, "--max-names-memory", "1")
	traffic()
	time.Sleep(150 * time.Millisecond) // the last packets reach the capture
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d after Ctrl-C, want 0; stderr:\n%s", code, r.errOut.String())
	}
	if errOut := r.errOut.String(); !strings.Contains(errOut, "not kept past --max-names-memory (1): their topic IDs are shown unresolved; raise it") {
		t.Errorf("stderr:\n%s", errOut)
	}
}

// TestLiveWriteCredentialsNote: live -w records every packet, credentials
// included, and says so as read -w does: a SaslAuthenticate request
// (PLAIN, password "kwLivePW") captured with --api Metadata, which selects
// none, still gives the note naming SaslAuthenticate; the file holds the
// password, the output does not.
func TestLiveWriteCredentialsNote(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	file := filepath.Join(t.TempDir(), "live.pcapng")
	r := startLive(t, "live", "-i", "lo", "--port", port, "--api", "Metadata", "-w", file)
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// SaslAuthenticate v0 request: api key 36, version 0, correlation ID
	// 2, client ID "t", AuthBytes (int32 length 14) "\x00u\x00kwLivePW".
	tok := "\x00u\x00kwLivePW"
	msg := append([]byte{0, 36, 0, 0, 0, 0, 0, 2, 0, 1, 't', 0, 0, 0, byte(len(tok))}, tok...)
	if _, err := c.Write(append([]byte{0, 0, 0, byte(len(msg))}, msg...)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	if code := r.stop(t); code != exitOK {
		t.Fatalf("exit %d:\n%s", code, r.errOut.String())
	}
	errOut := r.errOut.String()
	if !strings.Contains(errOut, "-w "+file+": 1 exchange captured can hold credentials (SaslAuthenticate)") {
		t.Errorf("no note of the credentials written:\n%s", errOut)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "kwLivePW") {
		t.Errorf("the file does not hold the password as captured (%d bytes)", len(b))
	}
	if strings.Contains(r.out.String()+errOut, "kwLivePW") {
		t.Errorf("the output shows the password")
	}
}
