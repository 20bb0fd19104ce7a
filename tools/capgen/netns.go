package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Scenarios on a network of their own (slow-broker.pcap, lossy-network.pcap).
// capgen re-executes itself under `unshare --net` (namespace A: the clients,
// tcpdump), makes a second namespace B for the broker on a thread of its
// own, and joins them with two TAP devices and a userspace wire between
// them that can delay and drop frames: netem does the same in the kernel,
// but kernels without sch_netem (this project's machines) have none, and
// the wire's drops are deterministic and logged. tcpdump captures on A's
// device, capgen-a: what the client host sees. Frames from the client are
// captured before the wire drops them (the capture holds both the lost
// segment and its retransmission); frames from the broker are captured
// after the wire (a lost one shows only as its retransmission).
//
// Addresses are in the loopback range (127.0.5.1 for the clients,
// 127.0.5.2 for the broker), allowed on the devices by route_localnet;
// both namespaces keep their own lo down, so that 127.0.0.0/8 is not local
// there. MTU 1500, no offloads (a TAP device has none): segments carry at
// most 1448 bytes of payload, as on Ethernet.

const (
	envInNetns  = "CAPGEN_SCENARIO_IN_NETNS"
	netnsClient = "127.0.5.1"
	netnsBroker = "127.0.5.2"
	tapClient   = "capgen-a"
	tapBroker   = "capgen-b"
)

// runInNetns runs scenario s in a new network namespace: capgen again,
// under unshare --net, with -only s.name.
func runInNetns(s scenario, out string) error {
	// Install before entering the namespace: it has no route out.
	for _, t := range [][2]string{{"ip", "iproute2"}, {"nsenter", "util-linux"}, {"unshare", "util-linux"}, {"sysctl", "procps"}} {
		if _, err := ensureTool(t[0], t[1]); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	args := []string{"--net", "--", self, "-only", s.name, "-out", absOut}
	if verbose {
		args = append(args, "-v")
	}
	cmd := exec.Command("unshare", args...)
	cmd.Env = append(os.Environ(), envInNetns+"=1")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s in a network namespace: %w", s.name, err)
	}
	return nil
}

// brokerNetns is network namespace B: one locked OS thread that entered
// it, running what is handed to it (creating sockets and devices there).
type brokerNetns struct {
	work chan func()
	path string // /proc/PID/task/TID/ns/net
}

func newBrokerNetns() (*brokerNetns, error) {
	n := &brokerNetns{work: make(chan func())}
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread exits with the goroutine, so no
		// other goroutine ever runs in namespace B.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare: %w", err)
			return
		}
		n.path = fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
		errc <- nil
		for f := range n.work {
			f()
		}
	}()
	if err := <-errc; err != nil {
		return nil, err
	}
	return n, nil
}

// do runs f in namespace B.
func (n *brokerNetns) do(f func()) {
	done := make(chan struct{})
	n.work <- func() { f(); close(done) }
	<-done
}

// cmd runs a command in namespace B.
func (n *brokerNetns) cmd(args ...string) error {
	return runCmd(append([]string{"nsenter", "--net=" + n.path, "--"}, args...)...)
}

// listen is a kfake.ListenFn that listens on the broker's address in
// namespace B.
func (n *brokerNetns) listen(network, address string) (net.Listener, error) {
	_, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var ln net.Listener
	n.do(func() { ln, err = net.Listen(network, net.JoinHostPort(netnsBroker, port)) })
	return ln, err
}

func (n *brokerNetns) close() { close(n.work) }

func runCmd(args ...string) error {
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
	}
	return nil
}

// openTap creates TAP device name in the calling thread's network
// namespace and returns it, non-blocking and pollable.
func openTap(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("/dev/net/tun: %w", err)
	}
	var req struct {
		name  [unix.IFNAMSIZ]byte
		flags uint16
		_     [22]byte
	}
	copy(req.name[:], name)
	req.flags = unix.IFF_TAP | unix.IFF_NO_PI
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&req))); errno != 0 {
		unix.Close(fd)
		return nil, fmt.Errorf("TUNSETIFF %s: %w", name, errno)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// netTopology is the two namespaces and the wire between them.
type netTopology struct {
	b          *brokerNetns
	tapA, tapB *os.File
	w          *wire
}

// setupNetTopology builds it with the wire's delay and loss, configured
// by cfg; the broker's kfake must listen with topo.b.listen.
func setupNetTopology(x *expectation, cfg wireConfig) (*netTopology, error) {
	t := &netTopology{}
	var err error
	if t.b, err = newBrokerNetns(); err != nil {
		return nil, err
	}
	if t.tapA, err = openTap(tapClient); err != nil {
		t.close()
		return nil, err
	}
	t.b.do(func() { t.tapB, err = openTap(tapBroker) })
	if err != nil {
		t.close()
		return nil, err
	}
	conf := func(run func(...string) error, dev, mac, ip string) error {
		for _, args := range [][]string{
			{"sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1"},
			{"sysctl", "-qw", "net.ipv4.conf." + dev + ".route_localnet=1"},
			{"ip", "link", "set", "dev", dev, "address", mac, "mtu", "1500"},
			{"ip", "addr", "add", ip + "/24", "dev", dev},
			{"ip", "link", "set", "dev", dev, "up"},
		} {
			if err := run(args...); err != nil {
				return err
			}
		}
		return nil
	}
	if err := conf(runCmd, tapClient, "02:00:7f:00:05:01", netnsClient); err != nil {
		t.close()
		return nil, err
	}
	if err := conf(t.b.cmd, tapBroker, "02:00:7f:00:05:02", netnsBroker); err != nil {
		t.close()
		return nil, err
	}
	t.w = newWire(x, cfg, t.tapA, t.tapB)
	return t, nil
}

func (t *netTopology) close() {
	if t.tapA != nil {
		t.tapA.Close()
	}
	if t.tapB != nil {
		t.tapB.Close()
	}
	if t.w != nil {
		t.w.wg.Wait() // closing the devices ends the pipes
	}
	if t.b != nil {
		t.b.close()
	}
}

// wireConfig is how the wire treats frames.
type wireConfig struct {
	delay time.Duration // one way, each direction
	// dropEvery drops the dropEvery-th TCP segment with payload of each
	// direction (counting from dropFirst), never the same segment twice;
	// 0 drops nothing.
	dropEvery, dropFirst int
}

// wire copies Ethernet frames between the two TAP devices.
type wire struct {
	x    *expectation
	cfg  wireConfig
	wg   sync.WaitGroup
	mu   sync.Mutex
	isn  map[string]uint32 // "sport-dport" → initial sequence number
	seen map[string]bool   // segments already dropped once
	inj  map[bool]*expectInjection
}

func newWire(x *expectation, cfg wireConfig, a, b *os.File) *wire {
	w := &wire{x: x, cfg: cfg, isn: map[string]uint32{}, seen: map[string]bool{}, inj: map[bool]*expectInjection{}}
	if cfg.delay > 0 {
		for _, dir := range []string{"to-broker", "to-client"} {
			x.inject(&expectInjection{Kind: "net-delay", Direction: dir, DelayMs: int32(cfg.delay.Milliseconds()),
				Note: "one-way delay of every frame on the userspace wire"})
		}
	}
	if cfg.dropEvery > 0 {
		w.inj[true] = x.inject(&expectInjection{Kind: "drop", Direction: "to-broker",
			Note: fmt.Sprintf("every %dth TCP segment with payload from the clients, from the %dth, each segment at most once; captured before the drop", cfg.dropEvery, cfg.dropFirst)})
		w.inj[false] = x.inject(&expectInjection{Kind: "drop", Direction: "to-client",
			Note: fmt.Sprintf("every %dth TCP segment with payload from the broker, from the %dth, each segment at most once; dropped before the capture point", cfg.dropEvery, cfg.dropFirst)})
	}
	w.wg.Add(2)
	go w.pipe(a, b, true)
	go w.pipe(b, a, false)
	return w
}

// pipe moves frames from src to dst: toBroker says the direction.
func (w *wire) pipe(src, dst *os.File, toBroker bool) {
	defer w.wg.Done()
	type frame struct {
		b  []byte
		at time.Time
	}
	q := make(chan frame, 4096)
	go func() {
		for f := range q {
			if d := time.Until(f.at); d > 0 {
				time.Sleep(d)
			}
			dst.Write(f.b)
		}
	}()
	defer close(q)
	n := 0
	buf := make([]byte, 65536)
	for {
		k, err := src.Read(buf)
		if err != nil {
			return
		}
		b := append([]byte(nil), buf[:k]...)
		if seg, ok := w.segment(b); ok && seg.payload > 0 {
			n++
			if w.cfg.dropEvery > 0 && n >= w.cfg.dropFirst && (n-w.cfg.dropFirst)%w.cfg.dropEvery == 0 && w.dropOnce(seg, toBroker) {
				continue
			}
		}
		q <- frame{b, time.Now().Add(w.cfg.delay)}
	}
}

// tcpSegment is what the wire reads of a frame.
type tcpSegment struct {
	sport, dport uint16
	seq          uint32
	syn          bool
	payload      int
}

// segment parses an Ethernet/IPv4/TCP frame and notes initial sequence
// numbers.
func (w *wire) segment(b []byte) (tcpSegment, bool) {
	var s tcpSegment
	if len(b) < 14+20 || binary.BigEndian.Uint16(b[12:]) != 0x0800 {
		return s, false
	}
	ip := b[14:]
	ihl := int(ip[0]&0xf) * 4
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if ip[9] != 6 || ihl < 20 || total > len(ip) || total < ihl+20 {
		return s, false
	}
	tcp := ip[ihl:total]
	doff := int(tcp[12]>>4) * 4
	if doff < 20 || doff > len(tcp) {
		return s, false
	}
	s.sport, s.dport = binary.BigEndian.Uint16(tcp), binary.BigEndian.Uint16(tcp[2:])
	s.seq = binary.BigEndian.Uint32(tcp[4:])
	s.syn = tcp[13]&0x02 != 0
	s.payload = len(tcp) - doff
	if s.syn {
		w.mu.Lock()
		w.isn[fmt.Sprintf("%d-%d", s.sport, s.dport)] = s.seq
		w.mu.Unlock()
	}
	return s, true
}

// dropOnce reports whether seg may be dropped (it never was) and logs it.
func (w *wire) dropOnce(seg tcpSegment, toBroker bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	key := fmt.Sprintf("%d-%d-%d", seg.sport, seg.dport, seg.seq)
	if w.seen[key] {
		return false
	}
	w.seen[key] = true
	isn, ok := w.isn[fmt.Sprintf("%d-%d", seg.sport, seg.dport)]
	if !ok {
		return false // a connection that began before the wire: leave it
	}
	client := int(seg.sport)
	if !toBroker {
		client = int(seg.dport)
	}
	in := w.inj[toBroker]
	rel := seg.seq - isn - 1
	in.Segments = append(in.Segments, expectSegment{ClientPort: client, RelSeq: rel, Len: seg.payload, Captured: toBroker})
	in.Count++
	w.x.logf("capgen-wire", "dropped a %d-byte segment %s (client port %d, relative seq %d)", seg.payload,
		map[bool]string{true: "to the broker", false: "to the client"}[toBroker], client, rel)
	return true
}
