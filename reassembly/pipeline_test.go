package reassembly

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// callLog records every handler call with every argument, and the Stats
// the handler sees at each call.
type callLog struct {
	lines []string
	conns []*Conn
}

func (l *callLog) add(c *Conn, format string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf("#%d f%d %v>%v syn=%v %+v ", c.Index, c.File, c.A, c.B, c.SawSYN, c.Stats)+fmt.Sprintf(format, args...))
}

func (l *callLog) Open(c *Conn) {
	l.conns = append(l.conns, c)
	l.add(c, "open")
}

func (l *callLog) Data(c *Conn, d Dir, ch Chunk) {
	l.add(c, "data %v %q t=%v f=%d seq=%d off=%d", d, ch.Data, ch.Time.UnixNano(), ch.Frame, ch.Seq, ch.Offset)
}

func (l *callLog) Gap(c *Conn, d Dir, n int64, t time.Time) {
	l.add(c, "gap %v %d t=%v", d, n, t.UnixNano())
}

func (l *callLog) Close(c *Conn, reason string, t time.Time) {
	l.add(c, "close %s t=%v", reason, t.UnixNano())
}

// final returns the connections' Stats after the run.
func (l *callLog) final() []string {
	var out []string
	for _, c := range l.conns {
		out = append(out, fmt.Sprintf("#%d %+v syn=%v", c.Index, c.Stats, c.SawSYN))
	}
	return out
}

// sameCalls reads paths in both modes and compares every call, the
// summaries, the errors and the final Stats.
func sameCalls(t *testing.T, paths []string, opts Options) int {
	t.Helper()
	var logs [2]*callLog
	var sums [2]string
	var errs [2]string
	for i, sync := range []bool{true, false} {
		o := opts
		o.Synchronous = sync
		logs[i] = &callLog{}
		sum, err := ReadFiles(context.Background(), paths, o, logs[i])
		sums[i] = fmt.Sprintf("%+v", sum)
		errs[i] = fmt.Sprint(err)
	}
	if sums[0] != sums[1] || errs[0] != errs[1] {
		t.Errorf("synchronous: %+v %s\npipelined:   %+v %s", sums[0], errs[0], sums[1], errs[1])
	}
	compareLines(t, "calls", logs[0].lines, logs[1].lines)
	compareLines(t, "final stats", logs[0].final(), logs[1].final())
	return len(logs[0].lines)
}

func compareLines(t *testing.T, what string, a, b []string) {
	t.Helper()
	if len(a) != len(b) {
		t.Errorf("%s: %d synchronous, %d pipelined", what, len(a), len(b))
	}
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			t.Errorf("%s: first difference at %d:\nsynchronous %s\npipelined   %s", what, i, a[i], b[i])
			return
		}
	}
}

func goldenCaptures(t *testing.T) []string {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap*"))
	if len(paths) == 0 {
		t.Skip("no captures in ../pcaps")
	}
	return paths
}

// TestPipelineSameCalls: the pipelined mode makes the same calls as the
// synchronous one on the golden captures, mangled (loss, duplicates,
// reordering, snap-length cuts), concatenated, and with tiny buffers and
// flush intervals that make flushes and idle closes frequent.
func TestPipelineSameCalls(t *testing.T) {
	paths := goldenCaptures(t)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			if n := sameCalls(t, []string{path}, Options{}); n < 5 {
				t.Errorf("only %d calls", n)
			}
			sameCalls(t, []string{mangle(t, path)}, Options{MaxBufferedPagesPerConn: 4, FlushInterval: time.Millisecond, BufferTimeout: time.Millisecond, IdleTimeout: 50 * time.Millisecond})
		})
	}
	t.Run("concatenated", func(t *testing.T) {
		// pcap, pcapng and gzip-compressed files mixed.
		ng, gz := pcapngOf(t, paths[0]), ""
		if b, err := os.ReadFile(paths[1]); err == nil {
			gz = writeFile(t, "capture.pcap.gz", gzipBytes(t, b))
		}
		all := append(paths, ng, "/nonexistent.pcap", gz, paths[0], ng)
		sameCalls(t, all, Options{Concatenate: true})
		sameCalls(t, all, Options{})
	})
}

// TestPipelineSameCallsMessy: crafted inputs with the awkward cases:
// fragments, lost and reordered segments, late packets after close (whose
// Stats must keep counting), 4-tuple reuse, RST.
func TestPipelineSameCallsMessy(t *testing.T) {
	var segs []seg
	v := newConv("10.0.0.1:1000", "10.0.0.2:9092", 100, 900)
	v.handshake()
	v.send(true, "first")
	lost := v.next(true, "lost")
	v.send(true, "after the hole")
	v.send(false, "reply")
	v.add(lost)
	v.close()
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq, ack: v.sseq, flags: "A"}) // late ACK
	segs = append(segs, v.segs...)
	w := newConv("10.0.0.1:1000", "10.0.0.2:9092", 5000, 7000) // reuses the 4-tuple
	w.at = time.Second
	w.handshake()
	w.send(true, strings.Repeat("x", 3000))
	w.add(seg{src: w.s, dst: w.c, seq: w.sseq, ack: w.cseq, flags: "R"})
	segs = append(segs, w.segs...)
	// Several MB (many packet batches) over two connections: every 7th
	// segment in IP fragments (in reverse order, the two halves far
	// apart), every 11th cut by the snap length, every 13th lost.
	x := newConv("[2001:db8::1]:5", "[2001:db8::2]:6", 1, 2)
	x.handshake()
	y := newConv("10.9.9.9:7", "10.0.0.2:9092", 3, 4)
	y.handshake()
	segs = append(append(segs, x.segs...), y.segs...)
	var held []seg
	for i := range 6000 {
		v := x
		if i%2 == 1 {
			v = y
		}
		sg := v.next(i%3 != 0, strings.Repeat(string(rune('a'+i%26)), 1+i*37%1400))
		sg.at = time.Duration(i) * time.Millisecond
		switch {
		case i%13 == 12:
			continue
		case i%11 == 10:
			sg.snap = 70
		case i%7 == 6 && len(sg.payload) > 100:
			fr := fragments(t, frame(t, layers.LinkTypeRaw, sg), uint32(i), 48)
			held = append(held, seg{at: sg.at, raw: fr[1], link: layers.LinkTypeRaw})
			sg = seg{at: sg.at, raw: fr[0], link: layers.LinkTypeRaw}
		}
		segs = append(segs, sg)
		if len(held) > 0 && i%50 == 0 {
			segs = append(segs, held...)
			held = held[:0]
		}
	}
	segs = append(segs, held...)
	p := writeFile(t, "messy.pcap", pcapBytes(t, layers.LinkTypeRaw, segs))
	if st, _ := os.Stat(p); st.Size() < 3*pktBatchBytes {
		t.Fatalf("capture of %d bytes: too small for several batches", st.Size())
	}
	if n := sameCalls(t, []string{p}, Options{}); n < 5000 {
		t.Errorf("only %d calls", n)
	}
	sameCalls(t, []string{p}, Options{MaxBufferedPagesPerConn: 1, IdleTimeout: 2 * time.Second})
	ng := pcapngOf(t, p)
	sameCalls(t, []string{ng, p, ng}, Options{Concatenate: true})
	// Cut anywhere: in a record header, in a packet, across the buffers.
	whole, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{30, pktBatchBytes - 5, pktBatchBytes + 7, len(whole) / 2, len(whole) - 3} {
		c := writeFile(t, fmt.Sprintf("cut%d.pcap", cut), whole[:cut])
		sameCalls(t, []string{c, p}, Options{})
		sameCalls(t, []string{c, p}, Options{Concatenate: true})
	}
}

// blockingSource delivers its packets, then blocks (as a quiet live
// capture does) until release is closed, then ends.
type blockingSource struct {
	*sliceSource
	blocked chan struct{}
	release chan struct{}
}

func (s *blockingSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if s.i >= len(s.frames) {
		close(s.blocked)
		<-s.release
		return nil, gopacket.CaptureInfo{}, 0, io.EOF
	}
	return s.sliceSource.ReadPacket()
}

// promptHandler signals when it has seen want bytes.
type promptHandler struct {
	discard
	n    int
	want int
	got  chan struct{}
}

func (h *promptHandler) Data(_ *Conn, _ Dir, ch Chunk) {
	h.n += len(ch.Data)
	if h.n == h.want {
		close(h.got)
	}
}

// TestPipelineLivePrompt: a source that is not a file and has no packet
// ready must not hold back the packets it gave: the handler gets them
// while ReadPacket blocks.
func TestPipelineLivePrompt(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 1, 2)
	v.handshake()
	v.send(true, "request")
	v.send(false, "response")
	src := &blockingSource{sliceSource: newSliceSource(t, layers.LinkTypeEthernet, v.segs), blocked: make(chan struct{}), release: make(chan struct{})}
	h := &promptHandler{want: len("request") + len("response"), got: make(chan struct{})}
	done := make(chan error)
	go func() {
		_, err := Run(context.Background(), src, Options{}, h)
		done <- err
	}()
	<-src.blocked
	select {
	case <-h.got:
	case <-time.After(10 * time.Second):
		t.Fatal("the handler did not get the bytes while the source waited")
	}
	close(src.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// cancelAt cancels its context at the n-th Data call.
type cancelAt struct {
	discard
	n      int
	cancel context.CancelFunc
	closes int
}

func (h *cancelAt) Data(*Conn, Dir, Chunk) {
	h.n--
	if h.n == 0 {
		h.cancel()
	}
}

func (h *cancelAt) Close(*Conn, string, time.Time) { h.closes++ }

// TestPipelineCancel: cancelling mid-file returns ctx's error promptly,
// with every connection closed and no goroutine left behind.
func TestPipelineCancel(t *testing.T) {
	data, _ := benchCapture(t)
	p := writeFile(t, "bench.pcap", data)
	before := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := &cancelAt{n: 10, cancel: cancel}
	start := time.Now()
	sum, err := ReadFiles(ctx, []string{p}, Options{}, h)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	// In flight at the cancel: every packet batch, and the packets whose
	// calls fill every call batch.
	if sum.Packets == 0 || sum.Packets > int64(pktBatches*pktBatchLen+batchesPerStage*callBatchLen) {
		t.Errorf("read %d packets after the cancel at the 10th Data call", sum.Packets)
	}
	if h.closes != sum.Connections {
		t.Errorf("%d closes, %d connections", h.closes, sum.Connections)
	}
	noLeak(t, before)
}

// noLeak waits a little for the goroutines to be back to before.
func noLeak(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

type panicky struct{ discard }

func (panicky) Data(*Conn, Dir, Chunk) { panic("handler failed") }

// TestPipelineHandlerPanic: a handler's panic reaches the caller, as in
// the synchronous mode, and the goroutines end.
func TestPipelineHandlerPanic(t *testing.T) {
	data, _ := benchCapture(t)
	p := writeFile(t, "bench.pcap", data)
	before := runtime.NumGoroutine()
	func() {
		defer func() {
			if r := recover(); r != "handler failed" {
				t.Errorf("recovered %v", r)
			}
		}()
		ReadFiles(context.Background(), []string{p}, Options{}, panicky{})
		t.Error("no panic")
	}()
	noLeak(t, before)
}

// pcapngOf rewrites a pcap file as pcapng.
func pcapngOf(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := pcapgo.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w, err := pcapgo.NewNgWriter(&out, r.LinkType())
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, filepath.Base(path)+"ng", out.Bytes())
}

// panicSource fails in ReadPacket after a few packets.
type panicSource struct{ *sliceSource }

func (s panicSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if s.i == 3 {
		panic("source failed")
	}
	return s.sliceSource.ReadPacket()
}

// TestPipelineGoroutinePanic: a panic in the source (reading goroutine)
// or in Options.Filter (reassembly goroutine) reaches the caller.
func TestPipelineGoroutinePanic(t *testing.T) {
	data, _ := benchCapture(t)
	p := writeFile(t, "bench.pcap", data)
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	before := runtime.NumGoroutine()
	for _, tc := range []struct {
		want string
		run  func()
	}{
		{"filter failed", func() {
			ReadFiles(context.Background(), []string{p}, Options{Filter: func(a, b netip.AddrPort) bool { panic("filter failed") }}, discard{})
		}},
		{"source failed", func() {
			Run(context.Background(), panicSource{newSliceSource(t, layers.LinkTypeEthernet, v.segs)}, Options{}, discard{})
		}},
	} {
		func() {
			defer func() {
				if r := recover(); r != tc.want {
					t.Errorf("recovered %v, want %q", r, tc.want)
				}
			}()
			tc.run()
			t.Errorf("no panic, want %q", tc.want)
		}()
	}
	noLeak(t, before)
}

// stackSource notes whether it is read on the pipeline's reading
// goroutine.
type stackSource struct {
	*sliceSource
	pipelined bool
}

func (s *stackSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	buf := make([]byte, 4096)
	s.pipelined = s.pipelined || strings.Contains(string(buf[:runtime.Stack(buf, false)]), "(*feed).read")
	return s.sliceSource.ReadPacket()
}

// TestPipelineModes: the pipeline by default, not with Synchronous nor
// with a single P, and the same calls in all three.
func TestPipelineModes(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	var logs []string
	for _, tc := range []struct {
		name      string
		sync      bool
		procs     int
		pipelined bool
	}{{"default", false, max(procs, 2), true}, {"Synchronous", true, max(procs, 2), false}, {"GOMAXPROCS=1", false, 1, false}} {
		runtime.GOMAXPROCS(tc.procs)
		src := &stackSource{sliceSource: newSliceSource(t, layers.LinkTypeEthernet, v.segs)}
		h := &callLog{}
		if _, err := Run(context.Background(), src, Options{Synchronous: tc.sync}, h); err != nil {
			t.Fatal(err)
		}
		if src.pipelined != tc.pipelined {
			t.Errorf("%s: read on the pipeline's goroutine: %v, want %v", tc.name, src.pipelined, tc.pipelined)
		}
		logs = append(logs, strings.Join(h.lines, "\n"))
	}
	if logs[0] != logs[1] || logs[0] != logs[2] || strings.Count(logs[0], "\n") < 5 {
		t.Errorf("calls differ or are too few:\n%s\n--\n%s\n--\n%s", logs[0], logs[1], logs[2])
	}
}
