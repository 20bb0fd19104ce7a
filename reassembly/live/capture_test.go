//go:build linux

package live

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kwire/kwire/reassembly"
)

// openOrSkip opens a capture, skipping the test without the privilege.
func openOrSkip(t *testing.T, cfg Config) *Source {
	t.Helper()
	s, err := Open(cfg)
	if errors.Is(err, ErrPermission) {
		t.Skipf("live capture needs root or CAP_NET_RAW: %v", err)
	}
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// echoServer accepts connections on addr and echoes what it reads.
func echoServer(t *testing.T, network, addr string) (netip.AddrPort, func()) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("listen %s %s: %v", network, addr, err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.Copy(c, c)
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).AddrPort(), func() { ln.Close(); wg.Wait() }
}

// talk sends msg to addr, reads the echo and closes.
func talk(t *testing.T, addr netip.AddrPort, msg string) {
	t.Helper()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	c.Close()
	if err != nil || string(got) != msg {
		t.Fatalf("echo = %q, %v", got, err)
	}
}

// collector is a reassembly.Handler that keeps each connection's bytes.
type collector struct {
	conns []*reassembly.Conn
	data  map[*reassembly.Conn]*[2]bytes.Buffer
	gaps  int
}

func (c *collector) Open(rc *reassembly.Conn) {
	c.conns = append(c.conns, rc)
	c.data[rc] = new([2]bytes.Buffer)
}
func (c *collector) Data(rc *reassembly.Conn, d reassembly.Dir, ch reassembly.Chunk) {
	c.data[rc][d].Write(ch.Data)
}
func (c *collector) Gap(*reassembly.Conn, reassembly.Dir, int64, time.Time) { c.gaps++ }
func (c *collector) Close(*reassembly.Conn, string, time.Time)              {}

// capture runs traffic while src captures, then stops src and returns
// what reassembly made of it.
func capture(t *testing.T, src *Source, cancel func(), traffic func()) (*collector, reassembly.Summary) {
	t.Helper()
	col := &collector{data: make(map[*reassembly.Conn]*[2]bytes.Buffer)}
	done := make(chan reassembly.Summary)
	go func() {
		sum, err := reassembly.Run(context.Background(), src, reassembly.Options{}, col)
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- sum
	}()
	traffic()
	time.Sleep(100 * time.Millisecond) // let the kernel hand over the last block
	cancel()
	select {
	case sum := <-done:
		return col, sum
	case <-time.After(5 * time.Second):
		t.Fatal("the capture did not stop within 5 s of its context's end")
		return nil, reassembly.Summary{}
	}
}

// TestLoopback captures on lo: a connection on the Kafka port is captured
// once (not twice: the outgoing copies are dropped), one on another port
// not at all (the kernel filter), with IPv4 and IPv6.
func TestLoopback(t *testing.T) {
	for _, tc := range []struct{ name, network, addr string }{
		{"IPv4", "tcp4", "127.0.0.1:0"},
		{"IPv6", "tcp6", "[::1]:0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kafka, stop1 := echoServer(t, tc.network, tc.addr)
			defer stop1()
			other, stop2 := echoServer(t, tc.network, tc.addr)
			defer stop2()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			src := openOrSkip(t, Config{Context: ctx, Interface: "lo", Ports: []uint16{kafka.Port()}})
			msg := strings.Repeat("kafka-bytes ", 1000) // several segments
			col, sum := capture(t, src, cancel, func() {
				talk(t, other, "not this one")
				talk(t, kafka, msg)
				talk(t, other, "nor this one")
			})
			if src.Stopped() != StopContext {
				t.Errorf("Stopped = %q, want %q", src.Stopped(), StopContext)
			}
			if len(col.conns) != 1 {
				t.Fatalf("%d connections captured, want 1 (the filter passes only port %d)", len(col.conns), kafka.Port())
			}
			c := col.conns[0]
			if c.B != kafka || !c.SawSYN {
				t.Errorf("connection %v → %v (SYN %v), want to %v with its SYN", c.A, c.B, c.SawSYN, kafka)
			}
			d := col.data[c]
			if d[0].String() != msg || d[1].String() != msg {
				t.Errorf("captured %d bytes to the server and %d back, want %d each", d[0].Len(), d[1].Len(), len(msg))
			}
			if c.Stats.Retransmissions != 0 {
				t.Errorf("%d retransmissions: loopback packets were captured twice", c.Stats.Retransmissions)
			}
			if col.gaps != 0 {
				t.Errorf("%d gaps", col.gaps)
			}
			if sum.NonTCP != 0 || sum.Filtered != 0 {
				t.Errorf("summary %+v: non-TCP or filtered packets got through the kernel filter", sum)
			}
			st := src.Stats()
			if st.Packets != sum.Packets || st.Packets != int64(c.Stats.Packets) {
				t.Errorf("Stats.Packets = %d, reassembly read %d, the connection has %d", st.Packets, sum.Packets, c.Stats.Packets)
			}
			if st.Dropped != 0 {
				t.Errorf("%d packets dropped", st.Dropped)
			}
			if st.Received < st.Packets {
				t.Errorf("Stats.Received = %d < Packets %d", st.Received, st.Packets)
			}
		})
	}
}

// TestAnyInterface captures on all interfaces: loopback packets still
// appear once.
func TestAnyInterface(t *testing.T) {
	kafka, stop := echoServer(t, "tcp4", "127.0.0.1:0")
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := openOrSkip(t, Config{Context: ctx, Interface: "any", Filter: "tcp port " + strconv.Itoa(int(kafka.Port()))})
	if src.Interface() != AnyInterface {
		t.Errorf("Interface = %q", src.Interface())
	}
	col, _ := capture(t, src, cancel, func() { talk(t, kafka, "hello over any") })
	if len(col.conns) != 1 {
		t.Fatalf("%d connections, want 1", len(col.conns))
	}
	c := col.conns[0]
	if got := col.data[c][0].String(); got != "hello over any" || c.Stats.Retransmissions != 0 {
		t.Errorf("got %q with %d retransmissions", got, c.Stats.Retransmissions)
	}
}

// TestStopByCountAndDuration checks that a capture ends by itself.
func TestStopByCountAndDuration(t *testing.T) {
	kafka, stop := echoServer(t, "tcp4", "127.0.0.1:0")
	defer stop()

	src := openOrSkip(t, Config{Interface: "lo", Ports: []uint16{kafka.Port()}, Count: 3})
	talk(t, kafka, "count me")
	for i := range 4 {
		_, _, _, err := src.ReadPacket()
		if i < 3 && err != nil {
			t.Fatalf("packet %d: %v", i+1, err)
		}
		if i == 3 && err != io.EOF {
			t.Fatalf("packet 4: err %v, want io.EOF", err)
		}
	}
	if src.Stopped() != StopCount || src.Stats().Packets != 3 {
		t.Errorf("Stopped %q after %d packets, want %q after 3", src.Stopped(), src.Stats().Packets, StopCount)
	}

	src = openOrSkip(t, Config{Interface: "lo", Ports: []uint16{kafka.Port()}, Duration: 300 * time.Millisecond})
	start := time.Now()
	for {
		if _, _, _, err := src.ReadPacket(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
	}
	if el := time.Since(start); el < 250*time.Millisecond || el > 300*time.Millisecond+time.Second {
		t.Errorf("a 300 ms capture on an idle port ended after %v", el)
	}
	if src.Stopped() != StopDuration {
		t.Errorf("Stopped = %q, want %q", src.Stopped(), StopDuration)
	}
}

// TestRecord checks that the pcapng recording reads back to the same
// streams.
func TestRecord(t *testing.T) {
	kafka, stop := echoServer(t, "tcp4", "127.0.0.1:0")
	defer stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var rec bytes.Buffer
	src := openOrSkip(t, Config{Context: ctx, Interface: "lo", Ports: []uint16{kafka.Port()}, Record: &rec})
	msg := strings.Repeat("recorded ", 3000)
	live, sum := capture(t, src, cancel, func() { talk(t, kafka, msg) })
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "live.pcapng")
	if err := os.WriteFile(path, rec.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	back := &collector{data: make(map[*reassembly.Conn]*[2]bytes.Buffer)}
	fsum, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, back)
	if err != nil {
		t.Fatalf("reading the recording: %v", err)
	}
	if fsum.Packets != sum.Packets || fsum.Files[0].Format != "pcapng" {
		t.Errorf("recording: %d packets (%s), live %d", fsum.Packets, fsum.Files[0].Format, sum.Packets)
	}
	if len(back.conns) != 1 || len(live.conns) != 1 {
		t.Fatalf("connections: %d read back, %d live", len(back.conns), len(live.conns))
	}
	for d := range 2 {
		if got, want := back.data[back.conns[0]][d].String(), live.data[live.conns[0]][d].String(); got != want || got != msg {
			t.Errorf("direction %d: read back %d bytes, live %d, sent %d", d, len(got), len(want), len(msg))
		}
	}
}

func TestUnknownInterface(t *testing.T) {
	_, err := Open(Config{Interface: "kwire-no-such0"})
	var ie *InterfaceError
	if !errors.As(err, &ie) || !errors.Is(err, ErrNoInterface) {
		t.Fatalf("Open = %v, want an *InterfaceError", err)
	}
	if !strings.Contains(err.Error(), "lo") || !strings.Contains(err.Error(), "kwire-no-such0") {
		t.Errorf("message does not name the interface and list lo: %v", err)
	}
	if !slices.Contains(Interfaces(), "lo") || !slices.Equal(Interfaces(), ie.Available) {
		t.Errorf("Interfaces() = %v, the error lists %v", Interfaces(), ie.Available)
	}
}

func TestOpenBadFilter(t *testing.T) {
	_, err := Open(Config{Interface: "lo", Filter: "udp port 53"})
	if Backend == "libpcap" {
		// libpcap knows udp; only a syntax error fails.
		_, err = Open(Config{Interface: "lo", Filter: "port port"})
		var fe *FilterError
		if !errors.As(err, &fe) && !errors.Is(err, ErrPermission) {
			t.Fatalf("Open = %v, want a *FilterError", err)
		}
		return
	}
	if !errors.Is(err, ErrUnsupportedFilter) {
		t.Fatalf("Open = %v, want ErrUnsupportedFilter", err)
	}
}

// TestPermissionDenied opens a capture without privileges: run as root,
// the test runs itself again as user nobody.
func TestPermissionDenied(t *testing.T) {
	if os.Getenv("KWIRE_LIVE_UNPRIVILEGED") == "1" {
		_, err := Open(Config{Interface: "lo"})
		var pe *PermissionError
		if !errors.As(err, &pe) || !errors.Is(err, ErrPermission) {
			t.Fatalf("Open without privileges = %v, want a *PermissionError", err)
		}
		if !strings.Contains(pe.Fix("/usr/local/bin/kwire"), "setcap cap_net_raw") {
			t.Errorf("Fix does not mention setcap: %s", pe.Fix("/usr/local/bin/kwire"))
		}
		return
	}
	if os.Geteuid() != 0 {
		_, err := Open(Config{Interface: "lo"})
		if !errors.Is(err, ErrPermission) {
			t.Skipf("not root, and capturing works (CAP_NET_RAW?): %v", err)
		}
		return
	}
	child := unprivileged(t, os.Args[0], "-test.run=^TestPermissionDenied$", "-test.v")
	child.Env = append(os.Environ(), "KWIRE_LIVE_UNPRIVILEGED=1")
	out, err := child.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestPermissionDenied") {
		t.Fatalf("the unprivileged run did not pass:\n%s", out)
	}
}

// unprivileged returns a command that runs a copy of the program name as
// user nobody (65534), from a directory that user can reach.
func unprivileged(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Skip(err)
		}
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, filepath.Base(name))
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}
