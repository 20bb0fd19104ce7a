package reassembly

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// basicConv is a handshake, two requests with responses, and a FIN close.
func basicConv(c, s string) *conv {
	v := newConv(c, s, 1000, 5000)
	v.handshake()
	v.send(true, "hello")
	v.send(false, "world!")
	v.send(true, "second request")
	v.send(false, "second response")
	v.close()
	return v
}

func TestLinkTypes(t *testing.T) {
	type tc struct {
		name string
		link layers.LinkType
		c, s string
		mod  func(*seg)
	}
	cases := []tc{
		{"ethernet", layers.LinkTypeEthernet, "10.0.0.1:40000", "10.0.0.2:9092", nil},
		{"ethernet-vlan", layers.LinkTypeEthernet, "10.0.0.1:40000", "10.0.0.2:9092", func(s *seg) { s.vlans = []uint16{100} }},
		{"ethernet-qinq", layers.LinkTypeEthernet, "10.0.0.1:40000", "10.0.0.2:9092", func(s *seg) { s.vlans = []uint16{10, 20} }},
		{"ethernet-ipv6", layers.LinkTypeEthernet, "[2001:db8::1]:40000", "[2001:db8::2]:9092", nil},
		{"ethernet-ipv6-ext", layers.LinkTypeEthernet, "[2001:db8::1]:40000", "[2001:db8::2]:9092", func(s *seg) { s.v6ext = true }},
		{"sll", layers.LinkTypeLinuxSLL, "10.0.0.1:40000", "10.0.0.2:9092", nil},
		{"sll-ipv6", layers.LinkTypeLinuxSLL, "[::1]:40000", "[::1]:9092", nil},
		{"sll2", linkTypeSLL2, "10.0.0.1:40000", "10.0.0.2:9092", nil},
		{"null-le", layers.LinkTypeNull, "127.0.0.1:40000", "127.0.0.1:9092", nil},
		{"null-be", layers.LinkTypeNull, "127.0.0.1:40000", "127.0.0.1:9092", func(s *seg) { s.nullBE = true }},
		{"null-ipv6", layers.LinkTypeNull, "[::1]:40000", "[::1]:9092", nil},
		{"loop", layers.LinkTypeLoop, "127.0.0.1:40000", "127.0.0.1:9092", nil},
		{"raw-ipv4", layers.LinkTypeRaw, "10.0.0.1:40000", "10.0.0.2:9092", nil},
		{"raw-ipv6", layers.LinkTypeRaw, "[2001:db8::1]:40000", "[2001:db8::2]:9092", nil},
		{"ipv4", linkTypeIPv4, "10.0.0.1:40000", "10.0.0.2:9092", nil},
		{"ipv6", linkTypeIPv6, "[2001:db8::1]:40000", "[2001:db8::2]:9092", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := basicConv(c.c, c.s)
			if c.mod != nil {
				for i := range v.segs {
					c.mod(&v.segs[i])
				}
			}
			h, sum := mustRead(t, pcapBytes(t, c.link, v.segs), Options{})
			if sum.Packets != int64(len(v.segs)) || sum.TCPPackets != sum.Packets {
				t.Fatalf("packets %d, TCP %d, want %d (summary %+v)", sum.Packets, sum.TCPPackets, len(v.segs), sum)
			}
			if len(h.conns) != 1 {
				t.Fatalf("%d connections, want 1: %v", len(h.conns), h.log)
			}
			conn := h.conns[0]
			if conn.A != ap(c.c) || conn.B != ap(c.s) || !conn.SawSYN || !h.sawSYNAtOpen[0] || conn.Index != 0 {
				t.Errorf("conn = %+v", conn)
			}
			if got := h.stream(0, AtoB); got != "hellosecond request" {
				t.Errorf("A>B = %q", got)
			}
			if got := h.stream(0, BtoA); got != "world!second response" {
				t.Errorf("B>A = %q", got)
			}
			wantFrames := []int64{4, 5, 6, 7}
			var frames []int64
			for _, ch := range h.chunks {
				frames = append(frames, ch.frame)
				if want := t0.Add(time.Duration(ch.frame) * time.Millisecond); !ch.time.Equal(want.Truncate(time.Microsecond)) {
					t.Errorf("frame %d time %v, want %v", ch.frame, ch.time, want)
				}
			}
			if !slices.Equal(frames, wantFrames) {
				t.Errorf("frames %v, want %v", frames, wantFrames)
			}
			if h.closed[0] != CloseFIN {
				t.Errorf("close reason %q, want %q", h.closed[0], CloseFIN)
			}
			if conn.Stats.Packets != len(v.segs) {
				t.Errorf("Stats.Packets = %d, want %d", conn.Stats.Packets, len(v.segs))
			}
			if conn.Stats.Bytes != [2]int64{19, 21} {
				t.Errorf("Stats.Bytes = %v", conn.Stats.Bytes)
			}
		})
	}
}

func TestChunkOffsetsAndSeq(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []recChunk{
		{0, AtoB, "hello", time.Time{}, 4, 1001, 0},
		{0, BtoA, "world!", time.Time{}, 5, 5001, 0},
		{0, AtoB, "second request", time.Time{}, 6, 1006, 5},
		{0, BtoA, "second response", time.Time{}, 7, 5007, 6},
	}
	if len(h.chunks) != len(want) {
		t.Fatalf("chunks %v", h.chunks)
	}
	for i, w := range want {
		g := h.chunks[i]
		g.time = time.Time{}
		if g != w {
			t.Errorf("chunk %d = %+v, want %+v", i, g, w)
		}
	}
}

func TestPcapNGTwoInterfacesNanos(t *testing.T) {
	// One connection seen on two interfaces of different link types: the
	// requests on an Ethernet interface, the responses on a raw IP one.
	v := basicConv("10.1.1.1:50000", "10.1.1.2:9092")
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{Name: "eth0", LinkType: layers.LinkTypeEthernet, TimestampResolution: 9}, pcapgo.DefaultNgWriterOptions)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := w.AddInterface(pcapgo.NgInterface{Name: "tun0", LinkType: layers.LinkTypeRaw, TimestampResolution: 9})
	if err != nil {
		t.Fatal(err)
	}
	var times []time.Time
	for i, s := range v.segs {
		link, iface := layers.LinkTypeEthernet, 0
		if s.src == v.s {
			link, iface = layers.LinkTypeRaw, raw
		}
		b := frame(t, link, s)
		ts := t0.Add(time.Duration(i)*time.Second + time.Duration(i*7+1)) // odd nanoseconds
		times = append(times, ts)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(b), Length: len(b), InterfaceIndex: iface}, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	h, sum := mustRead(t, buf.Bytes(), Options{})
	if h.stream(0, AtoB) != "hellosecond request" || h.stream(0, BtoA) != "world!second response" {
		t.Fatalf("streams %q %q", h.stream(0, AtoB), h.stream(0, BtoA))
	}
	for _, ch := range h.chunks {
		if !ch.time.Equal(times[ch.frame-1]) {
			t.Errorf("frame %d: time %v, want %v", ch.frame, ch.time.Format(time.RFC3339Nano), times[ch.frame-1].Format(time.RFC3339Nano))
		}
	}
	f := sum.Files[0]
	if f.Format != "pcapng" || f.Compressed || !slices.Equal(f.LinkTypes, []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeRaw}) {
		t.Errorf("file info %+v", f)
	}
}

func TestPcapNanosecondTimestamps(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	for i := range v.segs {
		v.segs[i].at += time.Duration(i*111 + 3)
	}
	var buf bytes.Buffer
	writePcap(t, &buf, layers.LinkTypeEthernet, true, v.segs)
	h, _ := mustRead(t, buf.Bytes(), Options{})
	for _, ch := range h.chunks {
		if want := t0.Add(v.segs[ch.frame-1].at); !ch.time.Equal(want) {
			t.Errorf("frame %d time %v, want %v", ch.frame, ch.time, want)
		}
	}
	if len(h.chunks) != 4 {
		t.Errorf("chunks %d", len(h.chunks))
	}
}

func TestGzipDetectedByMagic(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	plain := pcapBytes(t, layers.LinkTypeEthernet, v.segs)
	var ng bytes.Buffer
	w, err := pcapgo.NewNgWriter(&ng, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range v.segs {
		b := frame(t, layers.LinkTypeEthernet, s)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: t0.Add(s.at), CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	for _, c := range []struct {
		name, format string
		data         []byte
	}{
		{"capture.pcap", "pcap", gzipBytes(t, plain)},
		{"capture.pcapng", "pcapng", gzipBytes(t, ng.Bytes())},
	} {
		t.Run(c.format, func(t *testing.T) {
			p := writeFile(t, c.name, c.data) // no .gz suffix
			h := newRec()
			sum, err := ReadFiles(context.Background(), []string{p}, Options{}, h)
			if err != nil {
				t.Fatal(err)
			}
			if h.stream(0, AtoB) != "hellosecond request" || h.stream(0, BtoA) != "world!second response" {
				t.Errorf("streams %q %q", h.stream(0, AtoB), h.stream(0, BtoA))
			}
			if f := sum.Files[0]; !f.Compressed || f.Format != c.format || f.Packets != int64(len(v.segs)) {
				t.Errorf("file info %+v", f)
			}
		})
	}
}

func TestStdin(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	data := gzipBytes(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs))
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = pr
	defer func() { os.Stdin = old; pr.Close() }()
	go func() {
		pw.Write(data)
		pw.Close()
	}()
	h := newRec()
	if _, err := ReadFiles(context.Background(), []string{"-"}, Options{}, h); err != nil {
		t.Fatal(err)
	}
	if h.stream(0, AtoB) != "hellosecond request" {
		t.Errorf("A>B %q", h.stream(0, AtoB))
	}
}

func TestLostSegmentIsGap(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "aaaa")
	v.next(true, "0123456789") // lost: never captured
	after := v.send(true, "bbbb")
	v.send(false, "ok")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{`data 0 0 f4 "aaaa"`, "gap 0 0 10", `data 0 0 f5 "bbbb"`, `data 0 1 f6 "ok"`}
	got := slices.DeleteFunc(slices.Clone(h.log), func(l string) bool { return strings.HasPrefix(l, "open") || strings.HasPrefix(l, "close") })
	if !slices.Equal(got, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	st := h.conns[0].Stats
	if st.Gaps != 1 || st.GapBytes != 10 || st.OutOfOrder != 1 {
		t.Errorf("stats %+v", st)
	}
	if c := h.chunks[1]; c.offset != 14 || c.seq != after.seq {
		t.Errorf("chunk after gap: offset %d seq %d, want 14 %d", c.offset, c.seq, after.seq)
	}
}

func TestLostSegmentBeforeFIN(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "aaaa")
	v.next(true, "lost!") // lost: never captured
	v.close()
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	if g := h.filter("gap"); !slices.Equal(g, []string{"gap 0 0 5"}) {
		t.Errorf("gaps %v (log %v)", g, h.log)
	}
	if h.closed[0] != CloseFIN {
		t.Errorf("close %q", h.closed[0])
	}
}

func TestLostSegmentAckedAtEnd(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "aaaa")
	v.next(true, "lost") // lost; the server's ACK shows it was sent
	v.send(false, "resp")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	if g := h.filter("gap"); !slices.Equal(g, []string{"gap 0 0 4"}) {
		t.Errorf("gaps %v (log %v)", g, h.log)
	}
	if h.closed[0] != CloseEOF {
		t.Errorf("close %q", h.closed[0])
	}
}

func TestDuplicateDeliveredOnce(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	a := v.send(true, "aaaa")
	v.add(a) // retransmission
	v.send(true, "bbbb")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	if got := h.stream(0, AtoB); got != "aaaabbbb" {
		t.Errorf("A>B %q", got)
	}
	if st := h.conns[0].Stats; st.Retransmissions != 1 || st.Gaps != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestReorderedSegments(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	first := v.next(true, "first-")
	second := v.next(true, "second")
	v.add(second) // frame 4
	v.add(first)  // frame 5
	v.send(true, "-third")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	if got := h.stream(0, AtoB); got != "first-second-third" {
		t.Errorf("A>B %q", got)
	}
	want := []string{`data 0 0 f5 "first-"`, `data 0 0 f4 "second"`, `data 0 0 f6 "-third"`}
	if got := h.filter("data"); !slices.Equal(got, want) {
		t.Errorf("data %v, want %v", got, want)
	}
	if h.chunks[1].time != t0.Add(4*time.Millisecond) {
		t.Errorf("time of the reordered chunk %v", h.chunks[1].time)
	}
	if st := h.conns[0].Stats; st.OutOfOrder != 1 || st.Gaps != 0 || st.Retransmissions != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestStaleRSTAndFINDoNotCutStream(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "before")
	// A RST and a FIN from the past (sequence numbers already delivered),
	// and a RST far ahead of the stream: a receiver drops all of them.
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq - 3, flags: "R"})
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq - 6, ack: v.sseq, flags: "FA"})
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq + 100000, flags: "R"})
	v.send(true, "after")
	v.send(false, "reply")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	if got := h.stream(0, AtoB); got != "beforeafter" {
		t.Errorf("A>B %q", got)
	}
	if got := h.stream(0, BtoA); got != "reply" {
		t.Errorf("B>A %q", got)
	}
	if len(h.conns) != 1 || h.closed[0] != CloseEOF {
		t.Errorf("conns %d, close %q; log %v", len(h.conns), h.closed[0], h.log)
	}
}

func TestRSTCloses(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "req")
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq, flags: "R"})
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq, flags: "R"})
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq, ack: v.sseq, flags: "PA", payload: []byte("zombie")})
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	if h.closed[0] != CloseRST || len(h.conns) != 1 || h.stream(0, AtoB) != "req" {
		t.Errorf("log %v", h.log)
	}
	if h.conns[0].Stats.Packets != len(v.segs) {
		t.Errorf("packets %d, want %d", h.conns[0].Stats.Packets, len(v.segs))
	}
}

func TestMidStreamStart(t *testing.T) {
	v := newConv("10.0.0.1:33333", "10.0.0.2:9092", 7000, 8000)
	v.send(false, "tail of a response") // the server speaks first
	v.send(true, "request")
	v.send(false, "response")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	c := h.conns[0]
	if c.SawSYN || h.sawSYNAtOpen[0] || c.A != v.s || c.B != v.c {
		t.Errorf("conn %+v", c)
	}
	if h.stream(0, AtoB) != "tail of a responseresponse" || h.stream(0, BtoA) != "request" {
		t.Errorf("streams %q %q", h.stream(0, AtoB), h.stream(0, BtoA))
	}
	if h.chunks[0].offset != 0 || h.chunks[0].seq != 8000 || len(h.filter("gap")) != 0 {
		t.Errorf("chunks %+v log %v", h.chunks, h.log)
	}
}

func TestSnapLengthCutIsGap(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	cut := v.send(true, "0123456789abcdefghij") // 20 bytes; 12 captured
	v.segs[len(v.segs)-1].snap = 14 + 20 + 20 + 12
	v.send(true, "next")
	h, sum := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{`data 0 0 f4 "0123456789ab"`, "gap 0 0 8", `data 0 0 f5 "next"`}
	got := slices.DeleteFunc(slices.Clone(h.log), func(l string) bool { return !strings.HasPrefix(l, "data") && !strings.HasPrefix(l, "gap") })
	if !slices.Equal(got, want) {
		t.Errorf("log %v, want %v", got, want)
	}
	if sum.Truncated != 1 || h.chunks[1].offset != 20 || h.chunks[1].seq != cut.seq+20 {
		t.Errorf("truncated %d, chunks %+v", sum.Truncated, h.chunks)
	}
}

func TestSnapLengthCutOutOfOrder(t *testing.T) {
	// The cut segment arrives after the one behind it: the missing bytes
	// are still a gap in the right place.
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	a := v.next(true, "0123456789")
	a.snap = 14 + 20 + 20 + 4
	b := v.next(true, "tail")
	v.add(b)
	v.add(a)
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{`data 0 0 f5 "0123"`, "gap 0 0 6", `data 0 0 f4 "tail"`}
	got := slices.DeleteFunc(slices.Clone(h.log), func(l string) bool { return !strings.HasPrefix(l, "data") && !strings.HasPrefix(l, "gap") })
	if !slices.Equal(got, want) {
		t.Errorf("log %v, want %v", got, want)
	}
}

func TestTruncatedFile(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	full := pcapBytes(t, layers.LinkTypeEthernet, v.segs)
	// Cut inside the 6th packet (second request): keep its record header
	// and part of its data.
	off := 24
	for i := 0; i < 5; i++ {
		off += 16 + int(binaryLE32(full[off+8:]))
	}
	cut := full[:off+16+30]
	// The same capture as pcapng, cut inside the 6th enhanced packet block.
	var ng bytes.Buffer
	w, err := pcapgo.NewNgWriter(&ng, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	var ends []int
	for _, s := range v.segs {
		b := frame(t, layers.LinkTypeEthernet, s)
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: t0.Add(s.at), CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		ends = append(ends, ng.Len())
	}
	ngCut := ng.Bytes()[:ends[4]+40]
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"plain", cut},
		{"gzip", gzipBytes(t, cut)},
		{"pcapng", ngCut},
		{"gzip-stream-cut", gzipBytes(t, cut)[:len(gzipBytes(t, cut))-12]},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, sum, err := readBytes(t, c.data, Options{})
			if !errors.Is(err, ErrTruncated) {
				t.Fatalf("err = %v, want ErrTruncated", err)
			}
			var fe *FileError
			if !errors.As(err, &fe) || fe.Packets != 5 || !strings.HasSuffix(fe.Path, "capture") {
				t.Errorf("FileError %+v", fe)
			}
			if !strings.Contains(err.Error(), "after packet 5") {
				t.Errorf("message %q", err)
			}
			if h.stream(0, AtoB) != "hello" || h.stream(0, BtoA) != "world!" || sum.Packets != 5 {
				t.Errorf("delivered %q %q, %d packets", h.stream(0, AtoB), h.stream(0, BtoA), sum.Packets)
			}
			if h.closed[0] != CloseEOF || !errors.Is(sum.Files[0].Err, ErrTruncated) {
				t.Errorf("close %q, file err %v", h.closed[0], sum.Files[0].Err)
			}
		})
	}
}

func binaryLE32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func TestNotACapture(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
	}{
		{"text", "hello, this is a text file\n", "not a pcap or pcapng file (magic 0x68656c6c, which starts as text: \"hello, this is a text fi\")"},
		{"short", "ab", "not a pcap or pcapng file (the file holds only 2 bytes)"},
		{"empty", "", "not a pcap or pcapng file (the file is empty)"},
		{"gzip-text", string(gzipBytes(t, []byte("plain text inside gzip"))), "magic 0x706c6169, which starts as text: \"plain text inside gzip\""},
		// Bytes that are not text get no hint: 7 printable bytes are not
		// enough to call them text.
		{"binary", "\x01\x02\x03\x04\x05\x06\x07\x08", "not a pcap or pcapng file (magic 0x01020304)"},
		{"short text run", "abcdefg\x00\x01", "not a pcap or pcapng file (magic 0x61626364)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, sum, err := readBytes(t, []byte(c.data), Options{})
			if !errors.Is(err, ErrNotCapture) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want ErrNotCapture with %q", err, c.want)
			}
			if len(h.log) != 0 || sum.Packets != 0 || len(sum.Files) != 1 {
				t.Errorf("log %v summary %+v", h.log, sum)
			}
		})
	}
	_, err := ReadFiles(context.Background(), []string{"/nonexistent/file.pcap"}, Options{}, newRec())
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestMultipleFiles(t *testing.T) {
	v1 := basicConv("10.0.0.1:1", "10.0.0.2:2")
	v2 := basicConv("10.0.0.3:3", "10.0.0.4:4")
	v3 := basicConv("10.0.0.5:5", "10.0.0.6:6")
	p1 := writeFile(t, "a", pcapBytes(t, layers.LinkTypeEthernet, v1.segs))
	p2 := writeFile(t, "b", pcapBytes(t, layers.LinkTypeEthernet, append(v2.segs, v3.segs...)))
	bad := writeFile(t, "c", []byte("not a capture at all"))

	t.Run("separate", func(t *testing.T) {
		h := newRec()
		sum, err := ReadFiles(context.Background(), []string{p1, bad, p2}, Options{}, h)
		if !errors.Is(err, ErrNotCapture) {
			t.Errorf("err %v", err)
		}
		if len(h.conns) != 3 {
			t.Fatalf("conns %d", len(h.conns))
		}
		var idx, files []int
		for _, c := range h.conns {
			idx = append(idx, c.Index)
			files = append(files, c.File)
		}
		if !slices.Equal(idx, []int{0, 0, 1}) || !slices.Equal(files, []int{0, 2, 2}) {
			t.Errorf("indexes %v files %v", idx, files)
		}
		if h.chunks[0].frame != 4 || h.chunks[4].frame != 4 {
			t.Errorf("frames restart per file: %d %d", h.chunks[0].frame, h.chunks[4].frame)
		}
		if sum.Connections != 3 || sum.Packets != int64(3*len(v1.segs)) || len(sum.Files) != 3 || sum.Files[1].Err == nil {
			t.Errorf("summary %+v", sum)
		}
		// Every connection of file 0 is closed before file 2 opens one.
		if i := slices.Index(h.log, "close 0 fin"); i < 0 || i > slices.Index(h.log, "open 0 10.0.0.3:3>10.0.0.4:4") {
			t.Errorf("log %v", h.log)
		}
	})
	t.Run("concatenate", func(t *testing.T) {
		h := newRec()
		sum, err := ReadFiles(context.Background(), []string{p1, bad, p2}, Options{Concatenate: true}, h)
		if !errors.Is(err, ErrNotCapture) {
			t.Errorf("err %v", err)
		}
		var idx, files []int
		for _, c := range h.conns {
			idx = append(idx, c.Index)
			files = append(files, c.File)
		}
		if !slices.Equal(idx, []int{0, 1, 2}) || !slices.Equal(files, []int{0, 2, 2}) {
			t.Errorf("indexes %v files %v", idx, files)
		}
		n := int64(len(v1.segs))
		if h.chunks[4].frame != n+4 {
			t.Errorf("frames continue: %d, want %d", h.chunks[4].frame, n+4)
		}
		if len(sum.Files) != 3 || sum.Files[2].Packets != 2*n {
			t.Errorf("files %+v", sum.Files)
		}
	})
}

func TestNonTCPAndFragments(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	udp := func() []byte {
		buf := gopacket.NewSerializeBuffer()
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Protocol: layers.IPProtocolUDP, SrcIP: []byte{1, 2, 3, 4}, DstIP: []byte{5, 6, 7, 8}}
		u := &layers.UDP{SrcPort: 53, DstPort: 53}
		u.SetNetworkLayerForChecksum(ip)
		eth := &layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeIPv4}
		gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, ip, u, gopacket.Payload("dns"))
		return buf.Bytes()
	}()
	frag := frame(t, layers.LinkTypeEthernet, seg{src: ap("10.9.9.9:1"), dst: ap("10.9.9.8:2"), seq: 1, flags: "A", payload: []byte("xxxxxxxx")})
	frag[14+6] = 0x20 // more fragments
	arp := append(make([]byte, 12), 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1)
	short := frame(t, layers.LinkTypeEthernet, seg{src: ap("10.9.9.9:1"), dst: ap("10.9.9.8:2"), seq: 1, flags: "A"})[:14+20+10]
	segs := append([]seg{{raw: udp}, {raw: frag}, {raw: arp}, {raw: short}}, v.segs...)
	h, sum := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, segs), Options{})
	if sum.NonTCP != 2 || sum.Fragments != 1 || sum.DecodeErrors != 1 || sum.TCPPackets != int64(len(v.segs)) {
		t.Errorf("summary %+v", sum)
	}
	if h.chunks[0].frame != 8 || len(h.conns) != 1 {
		t.Errorf("frame numbers count every packet: %+v", h.chunks[0])
	}
}

func TestUnsupportedLinkType(t *testing.T) {
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	w.WriteFileHeader(65535, layers.LinkTypeIEEE802_11)
	w.WritePacket(gopacket.CaptureInfo{Timestamp: t0, CaptureLength: 3, Length: 3}, []byte{1, 2, 3})
	_, sum := mustRead(t, buf.Bytes(), Options{})
	if sum.UnsupportedLink != 1 || !slices.Equal(sum.Files[0].LinkTypes, []layers.LinkType{layers.LinkTypeIEEE802_11}) {
		t.Errorf("summary %+v", sum)
	}
}

func TestConnIndexAndReuse(t *testing.T) {
	v := newConv("10.0.0.1:40000", "10.0.0.2:9092", 100, 900)
	v.handshake()
	v.send(true, "one")
	v.close() // FIN, FIN, last ACK: the ACK must not open a connection
	other := basicConv("10.0.0.7:1", "10.0.0.2:9092")
	v.segs = append(v.segs, other.segs[0])
	v.cseq, v.sseq = 5555, 7777 // same 4-tuple, new connection
	v.handshake()
	v.send(true, "two")
	// A SYN with yet another sequence number while the second connection
	// is open (its end was not captured): a third connection.
	v.cseq, v.sseq = 99999, 12345
	v.handshake()
	v.add(v.segs[len(v.segs)-3]) // a retransmitted SYN is not a new connection
	v.send(true, "three")
	h, sum := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{
		"open 0 10.0.0.1:40000>10.0.0.2:9092", "close 0 fin",
		"open 1 10.0.0.7:1>10.0.0.2:9092",
		"open 2 10.0.0.1:40000>10.0.0.2:9092", "close 2 reused",
		"open 3 10.0.0.1:40000>10.0.0.2:9092",
		"close 1 end of capture", "close 3 end of capture",
	}
	got := slices.DeleteFunc(slices.Clone(h.log), func(l string) bool { return !strings.HasPrefix(l, "open") && !strings.HasPrefix(l, "close") })
	if !slices.Equal(got, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if h.stream(0, AtoB) != "one" || h.stream(2, AtoB) != "two" || h.stream(3, AtoB) != "three" {
		t.Errorf("streams %q %q %q", h.stream(0, AtoB), h.stream(2, AtoB), h.stream(3, AtoB))
	}
	if sum.Connections != 4 || h.conns[0].Stats.Packets != 7 || h.conns[3].Stats.Packets != 5 {
		t.Errorf("connections %d, packets %d %d", sum.Connections, h.conns[0].Stats.Packets, h.conns[3].Stats.Packets)
	}
}

func TestFilter(t *testing.T) {
	v1 := basicConv("10.0.0.1:1", "10.0.0.2:9092")
	v2 := basicConv("10.0.0.1:2", "10.0.0.2:80")
	segs := append(slices.Clone(v2.segs), v1.segs...)
	h, sum := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, segs), Options{
		Filter: func(a, b netip.AddrPort) bool { return a.Port() == 9092 || b.Port() == 9092 },
	})
	if len(h.conns) != 1 || h.conns[0].B.Port() != 9092 || h.conns[0].Index != 0 || sum.Filtered != int64(len(v2.segs)) {
		t.Errorf("conns %v, summary %+v", h.log, sum)
	}
}

func TestIdleTimeout(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "early")
	v.at += 10 * time.Minute
	v.send(true, "late")
	other := newConv("10.0.0.3:1", "10.0.0.2:2", 1, 1)
	other.at = v.at
	other.send(true, "x")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, append(v.segs, other.segs...)), Options{IdleTimeout: time.Minute})
	want := []string{"open 0 10.0.0.1:1>10.0.0.2:2", "close 0 idle", "open 1 10.0.0.1:1>10.0.0.2:2", "open 2 10.0.0.3:1>10.0.0.2:2", "close 1 end of capture", "close 2 end of capture"}
	got := slices.DeleteFunc(slices.Clone(h.log), func(l string) bool { return !strings.HasPrefix(l, "open") && !strings.HasPrefix(l, "close") })
	if !slices.Equal(got, want) {
		t.Errorf("log %v, want %v", got, want)
	}
	// Without an idle timeout the connection survives the pause.
	h, _ = mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	if len(h.conns) != 1 || h.stream(0, AtoB) != "earlylate" {
		t.Errorf("log %v", h.log)
	}
}

func TestBufferTimeoutGivesUpHole(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.next(true, "lost")
	v.send(true, "held")
	other := newConv("10.0.0.3:1", "10.0.0.2:2", 1, 1)
	other.at = v.at + 2*time.Minute // capture time moves on
	other.send(true, "later")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, append(v.segs, other.segs...)), Options{BufferTimeout: 30 * time.Second})
	want := []string{"gap 0 0 4", `data 0 0 f4 "held"`, "open 1 10.0.0.3:1>10.0.0.2:2"}
	got := slices.DeleteFunc(slices.Clone(h.log), func(l string) bool { return strings.HasPrefix(l, "close") })[1:4]
	if !slices.Equal(got, want) {
		t.Errorf("log %v, want %v", h.log, want)
	}
}

func TestFlushOrderIsDeterministic(t *testing.T) {
	// Many connections each with a hole pending at the end of input: the
	// flush walks the assembler's map, the handler must see Index order.
	var segs []seg
	for i := 0; i < 40; i++ {
		v := newConv("10.0.0.1:"+itoa(1000+i), "10.0.0.2:9092", 100, 900)
		v.at = time.Duration(i) * time.Millisecond
		v.step = time.Microsecond
		v.handshake()
		v.next(true, "lost")
		v.send(true, "held-"+itoa(i))
		segs = append(segs, v.segs...)
	}
	slices.SortStableFunc(segs, func(a, b seg) int { return int(a.at - b.at) })
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, segs), Options{})
	var order []string
	for _, l := range h.log {
		if !strings.HasPrefix(l, "open") {
			order = append(order, l)
		}
	}
	for i := 0; i < 40; i++ {
		w := []string{"gap " + itoa(i) + " 0 4", "data " + itoa(i) + " 0 f" + itoa(4*i+4) + ` "held-` + itoa(i) + `"`, "close " + itoa(i) + " end of capture"}
		if !slices.Equal(order[3*i:3*i+3], w) {
			t.Fatalf("events of conn %d: %v, want %v", i, order[3*i:3*i+3], w)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestMemoryBoundedManyConnections(t *testing.T) {
	// 3000 short connections, one after the other, over 50 minutes of
	// capture time: open connections and remembered 4-tuples stay few.
	var segs []seg
	for i := 0; i < 3000; i++ {
		v := newConv("10.1."+itoa(i/250)+"."+itoa(i%250+1)+":"+itoa(20000+i), "10.0.0.2:9092", uint32(i*1000), 7)
		v.at = time.Duration(i) * time.Second
		v.handshake()
		v.send(true, "req")
		v.send(false, "resp")
		v.close()
		segs = append(segs, v.segs...)
	}
	src := newSliceSource(t, layers.LinkTypeEthernet, segs)
	h := newRec()
	r := newRunner(Options{}, h)
	maxTable := 0
	for {
		data, ci, link, err := src.ReadPacket()
		if err == io.EOF {
			break
		}
		r.packet(data, ci, link)
		maxTable = max(maxTable, len(r.conns))
	}
	if r.open != 0 {
		t.Errorf("%d connections open before the final flush, want 0", r.open)
	}
	// Closed 4-tuples are remembered for closedLinger (4 min = 240
	// connections here) plus one flush interval.
	if maxTable > 260 {
		t.Errorf("connection table grew to %d", maxTable)
	}
	r.flushAll()
	if r.open != 0 || len(r.conns) != 0 || r.sum.PeakOpenConnections != 1 || r.sum.Connections != 3000 {
		t.Errorf("open %d, table %d, peak %d, conns %d", r.open, len(r.conns), r.sum.PeakOpenConnections, r.sum.Connections)
	}
	if n := r.asm.FlushAll(); n != 0 {
		t.Errorf("assembler still holds %d connections", n)
	}
	for i := 0; i < 3000; i++ {
		if h.closed[i] != CloseFIN || h.stream(i, AtoB) != "req" {
			t.Fatalf("conn %d: %q %q", i, h.closed[i], h.stream(i, AtoB))
		}
	}
}

// TestClosedBoundedByCount: 3000 connections closed within 30 seconds of
// capture time (far less than closedLinger): the closed ones kept in the
// connection table are bounded by count (maxClosed), and the last ACK of
// each FIN exchange still counts to its connection.
func TestClosedBoundedByCount(t *testing.T) {
	var segs []seg
	for i := 0; i < 3000; i++ {
		v := newConv("10.1."+itoa(i/250)+"."+itoa(i%250+1)+":"+itoa(20000+i), "10.0.0.2:9092", uint32(i*1000), 7)
		v.at = time.Duration(i) * 10 * time.Millisecond
		v.handshake()
		v.send(true, "req")
		v.send(false, "resp")
		v.close()
		segs = append(segs, v.segs...)
	}
	slices.SortStableFunc(segs, func(a, b seg) int { return int(a.at - b.at) })
	src := newSliceSource(t, layers.LinkTypeEthernet, segs)
	h := newRec()
	r := newRunner(Options{Synchronous: true}, h)
	maxTable := 0
	for {
		data, ci, link, err := src.ReadPacket()
		if err == io.EOF {
			break
		}
		r.packet(data, ci, link)
		maxTable = max(maxTable, len(r.conns))
	}
	// maxClosed (1024) closed ones and the one or two open.
	if maxTable > 1026 {
		t.Errorf("connection table grew to %d, want at most 1024 closed and the open ones", maxTable)
	}
	r.flushAll()
	if len(h.conns) != 3000 {
		t.Fatalf("%d connections, want 3000", len(h.conns))
	}
	for i, c := range h.conns {
		if c.Stats.Packets != 8 || h.closed[c.Index] != CloseFIN {
			t.Fatalf("conn %d: %d packets, closed %q; want 8 (the last ACK included) and FIN", i, c.Stats.Packets, h.closed[c.Index])
		}
	}
}

func TestBufferedPagesBounded(t *testing.T) {
	// A hole followed by more data than the per-connection buffer holds:
	// the hole is given up as a gap and everything behind it delivered.
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.next(true, strings.Repeat("L", 1000))
	var want strings.Builder
	for i := 0; i < 30; i++ {
		p := strings.Repeat(string(rune('a'+i%26)), 1000)
		want.WriteString(p)
		v.send(true, p)
	}
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{MaxBufferedPagesPerConn: 4})
	if got := h.stream(0, AtoB); got != want.String() {
		t.Errorf("delivered %d bytes, want %d", len(got), want.Len())
	}
	if g := h.filter("gap"); !slices.Equal(g, []string{"gap 0 0 1000"}) {
		t.Errorf("gaps %v", g)
	}
	// The gap came before the end of the capture: not at the final flush.
	if i, j := slices.Index(h.log, "gap 0 0 1000"), len(h.log); i > j-20 {
		t.Errorf("gap at %d of %d events", i, j)
	}
}

func TestContextCancel(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	h := newRec()
	_, err := Run(ctx, newSliceSource(t, layers.LinkTypeEthernet, v.segs), Options{}, h)
	if !errors.Is(err, context.Canceled) || len(h.log) != 0 {
		t.Errorf("err %v log %v", err, h.log)
	}
}

func TestRunPacketSource(t *testing.T) {
	v := basicConv("[2001:db8::1]:1", "[2001:db8::2]:2")
	h := newRec()
	sum, err := Run(context.Background(), newSliceSource(t, layers.LinkTypeLinuxSLL, v.segs), Options{}, h)
	if err != nil || sum.Connections != 1 || sum.Files != nil || h.stream(0, BtoA) != "world!second response" {
		t.Errorf("err %v summary %+v", err, sum)
	}
}

func TestInOrderDeliveryAllocs(t *testing.T) {
	// The steady state of an in-order stream allocates nothing per packet.
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	for i := 0; i < 200; i++ {
		v.send(true, "request payload")
		v.send(false, "response payload")
	}
	src := newSliceSource(t, layers.LinkTypeEthernet, v.segs)
	r := newRunner(Options{}, discard{})
	for i := 0; i < 3; i++ {
		r.packet(src.frames[i], src.cis[i], src.link)
	}
	i := 3
	allocs := testing.AllocsPerRun(len(src.frames)-4, func() {
		r.packet(src.frames[i], src.cis[i], src.link)
		i++
	})
	if allocs != 0 {
		t.Errorf("%.2f allocations per packet, want 0", allocs)
	}
}

type discard struct{}

func (discard) Open(*Conn)                       {}
func (discard) Data(*Conn, Dir, Chunk)           {}
func (discard) Gap(*Conn, Dir, int64, time.Time) {}
func (discard) Close(*Conn, string, time.Time)   {}

func TestAckedHoleSkippedOnlyWhenFullyAcked(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "aaaa")
	lost := v.next(true, "0123456789") // not captured yet
	v.send(true, "bbbb")
	// The receiver acknowledges only half of the hole: a retransmission
	// of the rest may still come, so the data stays buffered.
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: lost.seq + 5, flags: "A"})
	rest := lost
	rest.seq += 5
	rest.payload = rest.payload[5:]
	v.add(rest) // frame 7: the retransmitted second half
	v.send(true, "cccc")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{`data 0 0 f4 "aaaa"`, "gap 0 0 5", `data 0 0 f7 "56789"`, `data 0 0 f5 "bbbb"`, `data 0 0 f8 "cccc"`}
	got := slices.DeleteFunc(slices.Clone(h.log), func(l string) bool { return !strings.HasPrefix(l, "data") && !strings.HasPrefix(l, "gap") })
	if !slices.Equal(got, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestOneSidedRSTCloses(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "req")
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq, flags: "R"})
	v.send(true, "in flight") // sent before the client saw the RST
	other := newConv("10.0.0.3:1", "10.0.0.2:2", 1, 1)
	other.at = v.at + 20*time.Second
	other.send(true, "x")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, append(v.segs, other.segs...)), Options{})
	want := []string{"open 0 10.0.0.1:1>10.0.0.2:2", `data 0 0 f4 "req"`, `data 0 0 f6 "in flight"`, "close 0 rst",
		"open 1 10.0.0.3:1>10.0.0.2:2", `data 1 0 f7 "x"`, "close 1 end of capture"}
	if !slices.Equal(h.log, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}
}

// TestFINThenRSTCloses: a client that closed (FIN) and then got data it
// no longer reads answers with a RST (pcaps/group-rebalance-kafkapython:
// packets 296 and 299). The assembler drops a RST on a direction its FIN
// closed; the connection still ends there, by RST, with the peer's bytes
// sent before it delivered, and is closed resetLinger later, not at the
// next flush (10 s) or the end of the capture.
func TestFINThenRSTCloses(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "req")
	v.fin(true)
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "A"})
	v.send(false, "late answer")
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq, flags: "R"})
	rstAt := v.at
	other := newConv("10.0.0.3:1", "10.0.0.2:2", 1, 1)
	other.at = v.at + resetLinger/2
	other.send(true, "x") // within the linger: the connection stays
	other.at = v.at + resetLinger + time.Millisecond
	other.send(true, "y") // past it: closed before this is delivered
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, append(v.segs, other.segs...)), Options{})
	want := []string{"open 0 10.0.0.1:1>10.0.0.2:2", `data 0 0 f4 "req"`, `data 0 1 f7 "late answer"`,
		"open 1 10.0.0.3:1>10.0.0.2:2", `data 1 0 f9 "x"`, "close 0 rst", `data 1 0 f10 "y"`, "close 1 end of capture"}
	if !slices.Equal(h.log, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}
	if closedAt := h.closedAt[0]; !closedAt.Equal(t0.Add(rstAt)) {
		t.Errorf("closed at %v, the RST at %v", closedAt, t0.Add(rstAt))
	}
	// A RST out of the window (not at the FIN's sequence number or the
	// one after) is dropped by the receiver: the connection goes on.
	v = newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "req")
	v.fin(true)
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq + 5000, flags: "R"})
	v.at += 2 * resetLinger
	v.send(false, "answer")
	h, _ = mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	if got := h.stream(0, BtoA); got != "answer" || h.closed[0] != CloseEOF {
		t.Errorf("B>A %q, close %q", got, h.closed[0])
	}
}

func TestReuseDeliversBufferedData(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.next(true, "lost")
	v.send(true, "held")
	v.cseq, v.sseq = 777777, 888888
	v.handshake()
	v.send(true, "new")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{"open 0 10.0.0.1:1>10.0.0.2:2", "gap 0 0 4", `data 0 0 f4 "held"`, "close 0 reused",
		"open 1 10.0.0.1:1>10.0.0.2:2", `data 1 0 f8 "new"`, "close 1 end of capture"}
	if !slices.Equal(h.log, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}
}

// TestResetThenReuse: a connection reset mid-frame and reconnected on
// the same addresses before the reset's linger ran out closed as "reused",
// so its frame cut short and its requests read as ended by the reuse, not
// by the RST that ended them.
func TestResetThenReuse(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "half")
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq, flags: "R"})
	v.cseq, v.sseq = 777777, 888888
	v.handshake()
	v.send(true, "new")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{"open 0 10.0.0.1:1>10.0.0.2:2", `data 0 0 f4 "half"`, "close 0 rst",
		"open 1 10.0.0.1:1>10.0.0.2:2", `data 1 0 f9 "new"`, "close 1 end of capture"}
	if !slices.Equal(h.log, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}
}

func TestLargeSegmentsReorderedOneDataPerPacket(t *testing.T) {
	// Segments larger than a buffer page, reordered, one cut by the snap
	// length, across the 2^32 sequence wrap.
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 4294960000, 900)
	v.handshake()
	mk := func(c byte, n int) string { return strings.Repeat(string(c), n) }
	a := v.next(true, mk('a', 5000))
	b := v.next(true, mk('b', 4000)) // crosses the wrap
	c := v.next(true, mk('c', 3000))
	c.snap = 14 + 20 + 20 + 2500
	d := v.next(true, mk('d', 100))
	for _, x := range []seg{d, b, c, a} {
		v.add(x)
	}
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	var got []string
	for _, l := range h.log {
		if strings.HasPrefix(l, "data") {
			l = l[:strings.Index(l, `"`)] + strconv.Itoa(len(l)-strings.Index(l, `"`)-2)
		}
		got = append(got, l)
	}
	want := []string{"open 0 10.0.0.1:1>10.0.0.2:2", "data 0 0 f7 5000", "data 0 0 f5 4000", "data 0 0 f6 2500", "gap 0 0 500", "data 0 0 f4 100", "close 0 end of capture"}
	if !slices.Equal(got, want) {
		t.Errorf("log %v, want %v", got, want)
	}
	if s := h.stream(0, AtoB); s != mk('a', 5000)+mk('b', 4000)+mk('c', 2500)+mk('d', 100) {
		t.Errorf("stream of %d bytes", len(s))
	}
	if h.chunks[1].seq != b.seq || h.chunks[2].seq != c.seq || c.seq != 1705 || h.chunks[3].offset != 12000 {
		t.Errorf("chunks seq %d %d offset %d", h.chunks[1].seq, h.chunks[2].seq, h.chunks[3].offset)
	}
}

func TestPartialOverlapDeliversOnlyNewBytes(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	a := v.send(true, "0123456789")
	more := v.next(true, "abcde")
	// A retransmission that repeats the last 5 bytes and carries 5 new.
	v.add(seg{src: v.c, dst: v.s, seq: a.seq + 5, ack: v.sseq, flags: "PA", payload: []byte("56789abcde")})
	v.send(true, "!")
	v.add(seg{src: v.c, dst: v.s, seq: v.cseq, ack: v.sseq, flags: "RA", payload: []byte("diagnostic")})
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{`data 0 0 f4 "0123456789"`, `data 0 0 f5 "abcde"`, `data 0 0 f6 "!"`}
	if got := h.filter("data"); !slices.Equal(got, want) {
		t.Errorf("data %v, want %v", got, want)
	}
	if c := h.chunks[1]; c.seq != more.seq || c.offset != 10 {
		t.Errorf("chunk %+v", c)
	}
	if st := h.conns[0].Stats; st.Retransmissions != 1 || st.Gaps != 0 {
		t.Errorf("stats %+v", st)
	}
	if h.closed[0] != CloseRST {
		t.Errorf("close %q", h.closed[0])
	}
}

// bigEndian rewrites a little-endian pcap file in big-endian byte order.
func bigEndian(le []byte) []byte {
	be := bytes.Clone(le)
	swap32 := func(b []byte) { b[0], b[1], b[2], b[3] = b[3], b[2], b[1], b[0] }
	swap16 := func(b []byte) { b[0], b[1] = b[1], b[0] }
	swap32(be[0:4])
	swap16(be[4:6])
	swap16(be[6:8])
	for i := 8; i < 24; i += 4 {
		swap32(be[i : i+4])
	}
	for off := 24; off+16 <= len(be); {
		n := int(binaryLE32(le[off+8:]))
		for i := 0; i < 16; i += 4 {
			swap32(be[off+i : off+i+4])
		}
		off += 16 + n
	}
	return be
}

func TestBigEndianPcap(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	for i := range v.segs {
		v.segs[i].at += time.Duration(i*1000 + 7)
	}
	for _, nanos := range []bool{false, true} {
		var le bytes.Buffer
		writePcap(t, &le, layers.LinkTypeEthernet, nanos, v.segs)
		h, sum := mustRead(t, bigEndian(le.Bytes()), Options{})
		if h.stream(0, AtoB) != "hellosecond request" || sum.Files[0].Format != "pcap" {
			t.Fatalf("nanos=%v: %q %+v", nanos, h.stream(0, AtoB), sum)
		}
		want := t0.Add(v.segs[3].at)
		if !nanos {
			want = want.Truncate(time.Microsecond)
		}
		if got := h.chunks[0].time; !got.Equal(want) {
			t.Errorf("nanos=%v: time %v, want %v", nanos, got, want)
		}
	}
}

func TestAckedUnseenSegmentReportedAtTheAck(t *testing.T) {
	// The first request is not captured; the response acknowledges it.
	// The gap is reported once Options.ReorderWindow has passed (here at
	// the end of the capture), stamped with the ACK's time, then the
	// response held behind it, then the next request, buffered behind the
	// hole.
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.next(true, "first request")
	v.send(false, "first response")
	v.send(true, "second request")
	v.send(false, "second response")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{"open 0 10.0.0.1:1>10.0.0.2:2", "gap 0 0 13", `data 0 1 f4 "first response"`,
		`data 0 0 f5 "second request"`, `data 0 1 f6 "second response"`, "close 0 end of capture"}
	if !slices.Equal(h.log, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}
	if c := h.chunks[1]; c.offset != 13 || c.seq != 114 {
		t.Errorf("chunk %+v", c)
	}
	// The request captured later, within Options.ReorderWindow (a
	// capture merged from two capture points): no gap, delivered before
	// the response that acknowledged it (hold.go).
	v2 := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v2.handshake()
	late := v2.next(true, "first request")
	v2.send(false, "first response")
	v2.add(late)
	v2.send(true, "second request")
	h, _ = mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v2.segs), Options{})
	want = []string{"open 0 10.0.0.1:1>10.0.0.2:2", `data 0 0 f5 "first request"`, `data 0 1 f4 "first response"`,
		`data 0 0 f6 "second request"`, "close 0 end of capture"}
	if !slices.Equal(h.log, want) {
		t.Errorf("late request: log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}
	// Past the window (a retransmission of a request the capture lost):
	// its bytes were reported missing, they are not delivered.
	v3 := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v3.handshake()
	lost := v3.next(true, "first request")
	v3.send(false, "first response")
	v3.at += DefaultReorderWindow
	v3.add(lost)
	v3.send(true, "second request")
	h, _ = mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v3.segs), Options{})
	if got := h.filter("data 0 0"); !slices.Equal(got, []string{`data 0 0 f6 "second request"`}) {
		t.Errorf("client data %v (log %v)", got, h.log)
	}
	if h.log[1] != "gap 0 0 13" || h.log[2] != `data 0 1 f4 "first response"` {
		t.Errorf("lost request: log %v", h.log)
	}
	// And with no window, as before it: given up at the acknowledgement.
	h, _ = mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v2.segs), Options{ReorderWindow: -1})
	if got := h.filter("data 0 0"); !slices.Equal(got, []string{`data 0 0 f6 "second request"`}) || h.log[1] != "gap 0 0 13" {
		t.Errorf("no window: log %v", h.log)
	}
}

// TestConnectionMemoryBound: connections that never end (a SYN flood, a
// capture of a broker's thousands of clients) stay within
// Options.MaxConnectionMemory: past it the tenth idle longest are closed
// (CloseFull), counted in Summary.Evicted, and the newest keep their data.
func TestConnectionMemoryBound(t *testing.T) {
	const n = 2000
	var segs []seg
	for i := 0; i < n; i++ {
		v := newConv("10.2."+itoa(i/250)+"."+itoa(i%250+1)+":"+itoa(30000+i), "10.0.0.2:9092", uint32(i*1000), 7)
		v.at = time.Duration(i) * time.Millisecond
		v.handshake()
		v.send(true, "req-"+itoa(i))
		segs = append(segs, v.segs...)
	}
	const bound = 100 * ConnCost // 100 connections
	src := newSliceSource(t, layers.LinkTypeEthernet, segs)
	h := newRec()
	r := newRunner(Options{MaxConnectionMemory: bound}, h)
	peak := 0
	for {
		data, ci, link, err := src.ReadPacket()
		if err == io.EOF {
			break
		}
		r.packet(data, ci, link)
		peak = max(peak, r.open)
	}
	if peak > 100 {
		t.Errorf("%d connections open at once, past the bound's 100", peak)
	}
	r.flushAll()
	full := 0
	for i := 0; i < n; i++ {
		if h.stream(i, AtoB) != "req-"+itoa(i) {
			t.Fatalf("conn %d delivered %q", i, h.stream(i, AtoB))
		}
		if h.closed[i] == CloseFull {
			full++
		}
	}
	if full != r.sum.Evicted || full < n-100 || full > n-90 {
		t.Errorf("%d closed as table full, %d counted evicted; want about %d", full, r.sum.Evicted, n-100)
	}
	// The newest stay open to the end.
	if h.closed[n-1] != CloseEOF {
		t.Errorf("the newest connection closed %q", h.closed[n-1])
	}
	// Without a bound none is closed early.
	h, _ = mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, segs), Options{MaxConnectionMemory: -1})
	for i := 0; i < n; i++ {
		if h.closed[i] != CloseEOF {
			t.Fatalf("conn %d closed %q without a bound", i, h.closed[i])
		}
	}
}

// TestConnCost: what an open connection costs this package and gopacket's
// assembler (its stream, Conn, half states and pool entry) stays within
// half of ConnCost: the other half is the Handler's (dissect's
// TestConnStateCost). The windows of delivered bytes (window.go) are left
// out: they have a bound of their own, Options.MaxRecentBytes, whatever
// the number of connections (TestWindowBudget).
func TestConnCost(t *testing.T) {
	const n = 20000
	var segs []seg
	for i := 0; i < n; i++ {
		v := newConv("10.3."+itoa(i/250)+"."+itoa(i%250+1)+":"+itoa(30000+i%30000), "10.0.0.2:9092", uint32(i*1000), 7)
		v.at = time.Duration(i) * time.Microsecond
		v.handshake()
		v.send(true, "x")
		segs = append(segs, v.segs...)
	}
	src := newSliceSource(t, layers.LinkTypeEthernet, segs)
	r := newRunner(Options{MaxConnectionMemory: -1, MaxRecentBytes: -1}, nopHandler{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for {
		data, ci, link, err := src.ReadPacket()
		if err == io.EOF {
			break
		}
		r.packet(data, ci, link)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes per open connection (reassembly and gopacket)", per)
	if r.open != n || per > ConnCost/2 {
		t.Errorf("%d open, %d bytes each: want %d open within %d bytes", r.open, per, n, ConnCost/2)
	}
	runtime.KeepAlive(r)
}

type nopHandler struct{}

func (nopHandler) Open(*Conn)                       {}
func (nopHandler) Data(*Conn, Dir, Chunk)           {}
func (nopHandler) Gap(*Conn, Dir, int64, time.Time) {}
func (nopHandler) Close(*Conn, string, time.Time)   {}

// snapRec is a rec that is a SnapHandler.
type snapRec struct{ *rec }

func (r snapRec) Snapped(c *Conn, d Dir, n int64, t time.Time, sc SnapCut) {
	r.log = append(r.log, fmt.Sprintf("snapped %d %d %d f%d %d/%d", c.Index, d, n, sc.Frame, sc.Captured, sc.Length))
}

// TestSnapLengthCutSnapped: a SnapHandler is told the bytes a snap
// length kept out apart from bytes lost (they were a plain Gap), with the
// packet that carried them, its captured and its wire length; they still
// count as a gap of the connection. The lost segment after it stays a Gap.
func TestSnapLengthCutSnapped(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.send(true, "0123456789abcdefghij") // 20 bytes; 12 captured
	v.segs[len(v.segs)-1].snap = 14 + 20 + 20 + 12
	v.next(true, "lost")
	v.send(true, "next")
	for _, sync := range []bool{true, false} {
		h := snapRec{newRec()}
		sum, err := ReadFiles(context.Background(), []string{writeFile(t, "capture", pcapBytes(t, layers.LinkTypeEthernet, v.segs))}, Options{Synchronous: sync}, h)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{`data 0 0 f4 "0123456789ab"`, "snapped 0 0 8 f4 66/74", "gap 0 0 4", `data 0 0 f5 "next"`}
		got := slices.DeleteFunc(slices.Clone(h.log), func(l string) bool {
			return !strings.HasPrefix(l, "data") && !strings.HasPrefix(l, "gap") && !strings.HasPrefix(l, "snapped")
		})
		if !slices.Equal(got, want) {
			t.Errorf("synchronous %v: log %v, want %v", sync, got, want)
		}
		if st := h.conns[0].Stats; sum.Truncated != 1 || sum.TruncatedAt != 66 || st.Gaps != 2 || st.GapBytes != 12 {
			t.Errorf("synchronous %v: truncated %d at %d, conn gaps %d (%d bytes), want 1 at 66, 2 (12 bytes)", sync, sum.Truncated, sum.TruncatedAt, st.Gaps, st.GapBytes)
		}
	}
}

// TestBareAckBeforeItsData: a capture whose packets are out of time
// order across directions (a mirror port, several queues) holds the
// server's bare ACK of a request before the request itself. The request
// is delivered, not given up as a gap when the ACK came (the data,
// arriving next, was discarded: "13 bytes lost"). A bare ACK of bytes
// that never come is still a gap, at the ACK's time, before the next
// packet's bytes; an ACK riding on data reports its gap at once
// (TestAckedUnseenSegmentReportedAtTheAck).
func TestBareAckBeforeItsData(t *testing.T) {
	v := newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	req := v.next(true, "first request")
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "A"}) // its ACK first
	v.add(req)
	v.send(false, "first response")
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want := []string{"open 0 10.0.0.1:1>10.0.0.2:2", `data 0 0 f5 "first request"`, `data 0 1 f6 "first response"`, "close 0 end of capture"}
	if !slices.Equal(h.log, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}

	// The bytes never come: a gap, before the response's bytes.
	v = newConv("10.0.0.1:1", "10.0.0.2:2", 100, 900)
	v.handshake()
	v.next(true, "first request")
	v.add(seg{src: v.s, dst: v.c, seq: v.sseq, ack: v.cseq, flags: "A"})
	v.send(false, "first response")
	h, _ = mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, v.segs), Options{})
	want = []string{"open 0 10.0.0.1:1>10.0.0.2:2", "gap 0 0 13", `data 0 1 f5 "first response"`, "close 0 end of capture"}
	if !slices.Equal(h.log, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(h.log, "\n"), strings.Join(want, "\n"))
	}
}

// TestHoldsExpireOldestFirst: connections holding an acknowledged hole
// are given up in the order of their marks' capture time, each when the
// window has passed it, whatever the packets of other connections
// (runner.holds is a heap: each packet scanned every holding connection
// before, and 20,000 of them, then 100,000 packets at one timestamp,
// took 70 s); a connection's own packets give its hold up past
// holdPackets.
func TestHoldsExpireOldestFirst(t *testing.T) {
	var segs []seg
	convs := make([]*conv, 4)
	for i := range convs {
		v := newConv(fmt.Sprintf("10.0.0.1:%d", 100+i), "10.0.0.2:9092", 100, 900)
		v.step = 0
		v.handshake()
		v.next(true, "lost request")
		convs[i] = v
		segs = append(segs, v.segs...)
	}
	// Holds start in the order 2, 0, 1 (at 1, 2 and 3 ms); 3 holds too.
	for i, c := range []int{2, 0, 1, 3} {
		v := convs[c]
		x := v.next(false, fmt.Sprintf("response %d", c))
		x.at = time.Duration(i+1) * time.Millisecond
		segs = append(segs, x)
	}
	// 300 packets of connection 3 at 3 ms: only its hold ends.
	v := convs[3]
	for range 300 {
		segs = append(segs, seg{at: 3 * time.Millisecond, src: v.c, dst: v.s, seq: v.cseq, ack: v.sseq, flags: "A"})
	}
	// Then, past each window in turn, a packet of connection 3.
	for _, at := range []time.Duration{11500, 12500, 13500} {
		segs = append(segs, seg{at: at * time.Microsecond, src: v.c, dst: v.s, seq: v.cseq, ack: v.sseq, flags: "A"})
	}
	h, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, segs), Options{})
	var got []string
	for _, l := range h.log {
		if strings.HasPrefix(l, "gap ") || strings.HasPrefix(l, "data ") {
			got = append(got, l)
		}
	}
	want := []string{
		"gap 3 0 12", `data 3 1 f16 "response 3"`,
		"gap 2 0 12", `data 2 1 f13 "response 2"`,
		"gap 0 0 12", `data 0 1 f14 "response 0"`,
		"gap 1 0 12", `data 1 1 f15 "response 1"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("log\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
