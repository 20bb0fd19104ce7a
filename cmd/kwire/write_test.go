package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/internal/bombs"
	"github.com/kwire/kwire/internal/capturetest"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// selectedIDs are the exchanges of read --json's output as
// "client api corr" strings, sorted.
func selectedIDs(t *testing.T, out string) []string {
	var ids []string
	for _, e := range jsonExchanges(t, out) {
		ids = append(ids, e["client"].(string)+" "+e["api"].(string)+" "+strconv.Itoa(int(e["correlationId"].(float64))))
	}
	slices.Sort(ids)
	return ids
}

// topicsOf is the topics of read --json's exchanges, sorted, each once.
func topicsOf(t *testing.T, out string) []string {
	var ts []string
	for _, e := range jsonExchanges(t, out) {
		if l, ok := e["topics"].([]any); ok {
			for _, x := range l {
				if s, ok := x.(string); ok && !slices.Contains(ts, s) {
					ts = append(ts, s)
				}
			}
		}
	}
	slices.Sort(ts)
	return ts
}

// TestWriteSelection: read -w writes the packets of the exchanges shown;
// read again, with --port or without (by content), the file holds exactly
// those exchanges (the bytes of the connections left out between a
// handshake and a selected exchange are cuts, marked by packet comments),
// and tshark, when installed, finds the same Kafka requests.
func TestWriteSelection(t *testing.T) {
	for _, c := range []struct {
		name, capture string
		args          []string
	}{
		{"produce", "kgo-produce-consume.pcap", []string{"--api", "Produce"}},
		{"fetches", "kgo-produce-consume.pcap", []string{"--filter", `api == "Fetch" && len(topics) > 0`, "-c", "3"}},
		{"frames", "kgo-produce-consume.pcap", []string{"--frame", "200-260"}},
		{"one", "kgo-produce-consume.pcap", []string{"--api", "Metadata", "-c", "1"}},
		// Segments lost and sent again, out of their frames' packet
		// ranges: written with them; a FIN between two exchanges written
		// is a cut's last sequence number.
		{"lossy", "lossy-network.pcap", []string{"--api", "Fetch"}},
		{"fin", "slow-broker.pcap", []string{"--api", "Fetch"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pcap := goldenPcap(t, c.capture)
			ports := []string{"--port", "19092"}
			if c.capture != "kgo-produce-consume.pcap" {
				ports = nil // by content
			}
			read := func(args ...string) []string { return append(append([]string{"read"}, ports...), args...) }
			out := filepath.Join(t.TempDir(), "cut.pcapng")
			sel, errOut, code := kwireInProcess(t, append(read("--json", "-w", out, pcap), c.args...)...)
			if code != 0 || !strings.Contains(errOut, "written: ") {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			want := selectedIDs(t, sel)
			if len(want) == 0 {
				t.Fatal("nothing selected")
			}
			back, errOut, code := kwireInProcess(t, read("--json", out)...)
			if got := selectedIDs(t, back); !slices.Equal(got, want) {
				t.Errorf("re-read:\n%v\nwant\n%v\n%s", got, want, errOut)
			}
			// Topics named only by ID keep the names the original's
			// Metadata stated (the file's kwire-topic-ids comment).
			if got, want := topicsOf(t, back), topicsOf(t, sel); !slices.Equal(got, want) {
				t.Errorf("re-read topics %v, want %v", got, want)
			}
			// The holes the selection left are marked (reassembly.CutComment)
			// and read back as cuts: no gap, no warning, exit status 0.
			if code != 0 || strings.Contains(errOut, "warning") {
				t.Errorf("re-read: exit %d: %s", code, errOut)
			}
			text, _, _ := kwireInProcess(t, read("--verbose", out)...)
			if gaps, cuts := strings.Count(text, " GAP "), strings.Count(text, " CUT "); gaps != 0 || cuts == 0 || !strings.Contains(text, "\ncut: ") {
				t.Errorf("re-read: %d gaps, %d cuts; want none and some, and the summary's cut line:\n%s", gaps, cuts, text)
			}
			// Every connection of kgo-produce-consume ends with a FIN: so
			// do the cut file's, whose close packets are written too.
			closes, _, _ := kwireInProcess(t, read("--verbose", out)...)
			if fin, eof := strings.Count(closes, " CLOSE (fin)"), strings.Count(closes, " CLOSE (end of capture)"); ports != nil && (fin == 0 || eof != 0) {
				t.Errorf("re-read: %d connections closed by FIN, %d by the end of the capture; want all by FIN", fin, eof)
			}
			// Without --port, by content: the first bytes after each
			// connection's gap start a frame, and are recognised as a
			// connection's first bytes are (read --help's promise).
			back, errOut, _ = kwireInProcess(t, "read", "--json", out)
			if got := selectedIDs(t, back); !slices.Equal(got, want) {
				t.Errorf("re-read without --port:\n%v\nwant\n%v\n%s", got, want, errOut)
			}
			tshark, err := exec.LookPath("tshark")
			if ports == nil {
				return // tshark's check below is for the broker port 19092
			}
			if err != nil {
				t.Log("tshark is not installed: the -w output is checked by kwire only")
				return
			}
			// tshark's Kafka dissector on the broker port: one request
			// per selected exchange with a request.
			cmd := exec.Command(tshark, "-n", "-r", out, "-d", "tcp.port==19092,kafka", "-Y", "kafka && tcp.dstport == 19092", "-T", "fields", "-e", "kafka.correlation_id")
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("tshark: %v", err)
			}
			var corr []string
			for _, l := range strings.Fields(string(b)) {
				corr = append(corr, strings.Split(l, ",")...)
			}
			var wantCorr []string
			for _, id := range want {
				wantCorr = append(wantCorr, id[strings.LastIndexByte(id, ' ')+1:])
			}
			slices.Sort(corr)
			slices.Sort(wantCorr)
			if !slices.Equal(corr, wantCorr) {
				t.Errorf("tshark's Kafka requests: correlation IDs %v, want %v", corr, wantCorr)
			}
		})
	}
	if _, errOut, code := kwireInProcess(t, "read", "-w", filepath.Join(t.TempDir(), "x"), "-"); code != 2 || !strings.Contains(errOut, "standard input") {
		t.Errorf("-w with stdin: exit %d %s", code, errOut)
	}
}

// readNgPackets reads every packet of a pcapng file.
func readNgPackets(t *testing.T, path string) []capturedPacket {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewNgReader(f, pcapgo.DefaultNgReaderOptions)
	if err != nil {
		t.Fatal(err)
	}
	var out []capturedPacket
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, capturedPacket{ci, data})
	}
}

// ipv4Datagram is the datagram an IPv4 packet in an Ethernet frame belongs
// to (source, destination, identification), and whether it is a fragment.
func ipv4Datagram(frame []byte) (id string, fragment bool) {
	if len(frame) < 34 || binary.BigEndian.Uint16(frame[12:]) != 0x0800 {
		return "", false
	}
	ip := frame[14:]
	return string(ip[12:20]) + string(ip[4:6]), binary.BigEndian.Uint16(ip[6:])&0x3fff != 0
}

// TestWriteSelectionFragments: a segment that came in IP fragments is
// written with every one of its fragments, in the capture's order and
// with their timestamps: the cut of a capture whose large packets are
// fragmented (some with their last fragment first) reads back with the
// exchanges selected, no gap and exit 0. The fragments were left out
// (written: 61 packets; read back: 7 of 10 Produce exchanges, 6 gaps).
func TestWriteSelectionFragments(t *testing.T) {
	_, pkts, err := capturetest.ReadPcap(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	var frags []capturedPacket
	n := 0
	for _, p := range pkts {
		parts := [][]byte{p.Data}
		if len(p.Data) > 14+20+400 {
			if parts, err = capturetest.FragmentIPv4(p.Data, 200); err != nil {
				t.Fatal(err)
			}
			if n++; n%2 == 0 {
				parts[0], parts[1] = parts[1], parts[0]
			}
		}
		for i, f := range parts {
			ci := gopacket.CaptureInfo{Timestamp: p.Time.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(f), Length: len(f)}
			frags = append(frags, capturedPacket{ci, f})
		}
	}
	dir := t.TempDir()
	orig := writePackets(t, dir, "frag.pcap", layers.LinkTypeEthernet, frags)
	out := filepath.Join(dir, "cut.pcapng")
	sel, errOut, code := kwireInProcess(t, "read", "--json", "--api", "Produce", "-w", out, orig)
	want := selectedIDs(t, sel)
	if code != 0 || len(want) != 10 {
		t.Fatalf("exit %d, %d exchanges: %s", code, len(want), errOut)
	}
	back, errOut, code := kwireInProcess(t, "read", "--json", out)
	if got := selectedIDs(t, back); !slices.Equal(got, want) || code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("re-read: exit %d, %s\n%v\nwant\n%v", code, errOut, got, want)
	}
	if text, _, _ := kwireInProcess(t, "read", "--verbose", out); strings.Contains(text, " GAP ") {
		t.Errorf("re-read: gaps:\n%s", text)
	}
	// Every packet written is one of the capture's, bytes and time, in
	// its order; every fragment of a datagram written is.
	cut := readNgPackets(t, out)
	written := map[string]int{} // fragments written, by datagram
	i := 0
	for _, c := range cut {
		for i < len(frags) && !(bytes.Equal(frags[i].data, c.data) && frags[i].ci.Timestamp.Equal(c.ci.Timestamp)) {
			i++
		}
		if i == len(frags) {
			t.Fatalf("a packet written (%d bytes at %v) is not in the capture, or not in its order", len(c.data), c.ci.Timestamp)
		}
		if id, frag := ipv4Datagram(c.data); frag {
			written[id]++
		}
	}
	if len(written) == 0 {
		t.Fatal("no fragment written")
	}
	for id, n := range written {
		if n != 2 {
			t.Errorf("datagram %x: %d of its 2 fragments written", id, n)
		}
	}
}

// frameTiming is what a frame's packets and TCP segments say of its
// travel: its first and last byte's capture times and dissect.TCPTiming.
type frameTiming struct {
	Time, End time.Time
	TCP       dissect.TCPTiming
}

// exchangeTiming is an exchange's latency and its frames' timing.
type exchangeTiming struct {
	Latency           time.Duration
	Request, Response frameTiming
}

// timingOf is a frame's timing; packet numbers left out (they differ
// between a capture and its cut).
func timingOf(f *dissect.Frame) frameTiming {
	if f == nil {
		return frameTiming{}
	}
	t := frameTiming{f.Time, f.End, f.TCPOf()}
	t.TCP.RetransmissionFrame = 0
	return t
}

// timingSink keeps the timing of every exchange with a request, by
// client, API key, correlation ID and request time.
type timingSink map[string]exchangeTiming

func (s timingSink) Exchange(e *dissect.Exchange) {
	if e.Request == nil {
		return
	}
	k := e.Client.String() + " " + strconv.Itoa(int(e.APIKey)) + " " + strconv.Itoa(int(e.CorrelationID)) + " " + e.Request.Time.Format(time.RFC3339Nano)
	s[k] = exchangeTiming{e.Latency(), timingOf(e.Request), timingOf(e.Response)}
}

func (timingSink) Event(*dissect.Event) {}

// timingsOf dissects a capture whose broker listens on port and returns
// its exchanges' timing.
func timingsOf(t *testing.T, path string, port uint16) timingSink {
	t.Helper()
	s := timingSink{}
	d := dissect.New(dissect.Options{Ports: []uint16{port}}, s)
	if _, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, d); err != nil {
		t.Fatal(err)
	}
	d.Finish()
	return s
}

// TestWriteSelectionTCPTiming: the exchanges of a cut file travelled as
// they did in the capture: the same latency, first and last bytes'
// times, retransmissions (and the last one's time), segments out of
// order and full windows. A packet written after bytes left out was
// held as out of order until the peer acknowledged the hole, so a
// retransmission of it written after it delivered the bytes (a Fetch of
// lossy-network stamped 42.0ms, not 290ms, with no slow-network
// finding), and the segments after a cut counted as out of order (a
// Produce's 1 retransmission read as 4 segments out of order).
func TestWriteSelectionTCPTiming(t *testing.T) {
	pcap := goldenPcap(t, "lossy-network.pcap")
	orig := timingsOf(t, pcap, 19353)
	slowFetch := `api == "Fetch" && latencyMs > 200 && clientId == "capgen-kgo-net-consumer"`
	for _, c := range []struct {
		filter string
		n      int // exchanges selected
		// retransmissions and out-of-order segments of the selected
		// requests in the capture: the cut must have what was there.
		retrans, ooo int
	}{
		{slowFetch, 2, 1, 0},
		{`api == "Produce" && latencyMs > 300`, 2, 2, 0},
		{`api == "Produce" || api == "Fetch"`, 24, 5, 0},
		{`latencyMs > 200`, 10, 6, 0},
	} {
		out := filepath.Join(t.TempDir(), "cut.pcapng")
		sel, errOut, code := kwireInProcess(t, "read", "--json", "--filter", c.filter, "-w", out, pcap)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.filter, code, errOut)
		}
		cut := timingsOf(t, out, 19353)
		n, retrans, ooo := 0, 0, 0
		for _, e := range jsonExchanges(t, sel) {
			req := e["request"].(map[string]any)
			k := e["client"].(string) + " " + strconv.Itoa(int(e["apiKey"].(float64))) + " " + strconv.Itoa(int(e["correlationId"].(float64))) + " " + req["time"].(string)
			want, ok := orig[k]
			if !ok {
				t.Fatalf("%s: exchange %s not in the capture's", c.filter, k)
			}
			n++
			retrans += want.Request.TCP.Retransmissions
			ooo += want.Request.TCP.OutOfOrder
			// Packets the capture missed, told by the numbers their
			// IPv4 identifications skip, are not told in a cut: the
			// packets it leaves out skip numbers too.
			for _, tt := range []*dissect.TCPTiming{&want.Request.TCP, &want.Response.TCP} {
				tt.Uncaptured, tt.UncapturedSince = 0, time.Time{}
			}
			if got := cut[k]; got != want {
				t.Errorf("%s: exchange %s in the cut:\n%+v\nwant\n%+v", c.filter, k, got, want)
			}
		}
		if n != c.n || retrans != c.retrans || ooo != c.ooo {
			t.Errorf("%s: %d exchanges, %d retransmissions, %d out of order in the capture; want %d, %d, %d", c.filter, n, retrans, ooo, c.n, c.retrans, c.ooo)
		}
	}
	// The slow Fetch's finding reads back as it was.
	out := filepath.Join(t.TempDir(), "cut.pcapng")
	if _, errOut, code := kwireInProcess(t, "read", "--filter", slowFetch, "-w", out, pcap); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "290ms at 15:45:57.274: broker 0.21ms (request fully sent → first response byte, less the round trip), network 289ms (round trip 42ms; the request waited 248ms for a retransmission; 1 retransmitted segment)"
	for _, path := range []string{pcap, out} {
		text, _, _ := kwireInProcess(t, "read", "--findings", path)
		if !strings.Contains(text, "slow-network capgen-kgo-net-consumer Fetch broker 127.0.5.2:19353: 1 exchange of 100ms or more; the slowest, "+want) {
			t.Errorf("%s: no slow-network finding of the Fetch, or another one:\n%s", filepath.Base(path), text)
		}
	}
}

// An output file that cannot be created is a usage error before any work
// (exit 2), for -w and check's --junit: exit 1 would read as a capture
// not dissected or a check failed.
func TestOutputFileNotWritable(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "missing", "out")
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	for _, args := range [][]string{
		{"read", "-w", bad, pcap},
		{"check", "--junit", bad, "../../docs/examples/kafka-checks.yaml", pcap},
	} {
		out, errOut, code := kwireInProcess(t, args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, bad+": no such file or directory") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and the path's error before any output", args[:2], code, out, errOut)
		}
	}
}

// An output file that is one of the inputs is refused before anything is
// written (exit 2): by the same path, another path to it, a symbolic or a
// hard link, with --merge, and for check's --junit; the capture is left
// as it was. Writing it would truncate the capture the write reads again.
func TestOutputFileIsInput(t *testing.T) {
	orig, err := os.ReadFile(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	victim, other := filepath.Join(dir, "victim.pcap"), filepath.Join(dir, "other.pcap")
	for _, p := range []string{victim, other} {
		if err := os.WriteFile(p, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	symlink, hardlink := filepath.Join(dir, "sym.pcap"), filepath.Join(dir, "hard.pcap")
	if err := os.Symlink(victim, symlink); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Link(victim, hardlink); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	spec := filepath.Join("..", "..", "docs", "examples", "kafka-checks.yaml")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"same path", []string{"read", "--api", "Produce", "-w", victim, victim}},
		{"another path", []string{"read", "--api", "Produce", "-w", filepath.Join(dir, ".", "..", filepath.Base(dir), "victim.pcap"), victim}},
		{"symbolic link", []string{"read", "--api", "Produce", "-w", symlink, victim}},
		{"hard link", []string{"read", "--api", "Produce", "-w", hardlink, victim}},
		{"second file", []string{"read", "-w", victim, other, victim}},
		{"merge", []string{"read", "--merge", "-w", hardlink, other, victim}},
		{"junit", []string{"check", "--junit", symlink, spec, victim}},
	} {
		out, errOut, code := kwireInProcess(t, c.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "the output is") || !strings.Contains(errOut, "input file") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and the output named an input", c.name, code, out, errOut)
		}
		for _, p := range []string{victim, other} {
			if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, orig) {
				t.Fatalf("%s: %s changed: %d bytes, want %d (%v)", c.name, filepath.Base(p), len(b), len(orig), err)
			}
		}
	}
	// A new file beside the inputs is written as before.
	out := filepath.Join(dir, "cut.pcapng")
	if text, errOut, code := kwireInProcess(t, "read", "--api", "Produce", "-w", out, victim); code != 0 || !strings.Contains(text, "written: ") {
		t.Errorf("a new output: exit %d, stderr %q, output:\n%s", code, errOut, text)
	}
}

// An orphan response that no schema decodes for sure is not decoded; -V
// and -x say so, its bytes withheld by default (they may hold any frame's
// credentials) and shown with --show-secrets (the JSON's "hex" too):
// nothing the capture holds is dropped from the output.
func TestUndecodedOrphanShown(t *testing.T) {
	resp := []byte{0, 0, 0, 16, 0, 0, 0, 77, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	var buf bytes.Buffer
	if err := bombs.WritePcap(&buf, []bombs.Exchange{{Response: resp}}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "orphan.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"-V", "-x"} {
		out, errOut, code := kwireInProcess(t, "read", mode, path)
		want := "  response, packet 4:\n    not decoded; <redacted>: withheld, it may hold a secret (--show-secrets shows it)\n"
		// exit 1: the connection was captured from its SYN, so no
		// captured request explaining the response is a loss.
		if code != 1 || !strings.Contains(errOut, "1 response no captured request explains") || !strings.Contains(out, want) || strings.Contains(out, "00 00 00 4d") {
			t.Errorf("read %s: exit %d, stderr %q, output:\n%s\nwant it to hold:\n%s", mode, code, errOut, out, want)
		}
		out, errOut, code = kwireInProcess(t, "read", mode, "--show-secrets", path)
		want = "  response, packet 4:\n    not decoded: 20 bytes\n" +
			"    00000000  00 00 00 10 00 00 00 4d  00 00 00 00 00 00 00 00  |.......M........|\n"
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("read %s --show-secrets: exit %d, stderr %q, output:\n%s\nwant it to hold:\n%s", mode, code, errOut, out, want)
		}
	}
}

// Connections whose end is not in the capture stay within
// --max-connection-memory: past it those idle longest are closed early,
// with a warning naming the flag and exit 1; every request is still
// shown.
func TestConnectionMemoryFlag(t *testing.T) {
	parts := []bombs.Partition{{Topic: "t", Index: 0}}
	var buf bytes.Buffer
	if err := bombs.WriteOpenConnections(&buf, 300, bombs.Exchange{Request: bombs.FetchRequest(1, parts)}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "open.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kwireInProcess(t, "read", "--max-connection-memory", "400KiB", path) // 100 connections
	if code != exitData || !strings.Contains(errOut, "connections were closed early, those idle longest: the connections open at once needed more than --max-connection-memory allows (400KiB, about 4 KiB each)") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if n := strings.Count(out, " Fetch v4 "); n != 300 {
		t.Errorf("%d Fetch lines, want 300", n)
	}
	if _, errOut, code := kwireInProcess(t, "read", path); code != 0 {
		t.Errorf("default bound: exit %d, stderr %q", code, errOut)
	}
}

// Frames partly arrived on many connections stay within
// --max-reassembly-memory: past it frames are given up as cut, with the
// flag named and exit 1.
func TestReassemblyMemoryFlag(t *testing.T) {
	req := bombs.FetchRequest(1, []bombs.Partition{{Topic: "t"}})
	partial := append(binary.BigEndian.AppendUint32(nil, 1<<20), req[4:]...) // claims 1 MiB
	partial = append(partial, make([]byte, 60<<10)...)                       // 60 KiB arrive
	var buf bytes.Buffer
	if err := bombs.WriteOpenConnections(&buf, 300, bombs.Exchange{Request: partial}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "partial.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := kwireInProcess(t, "read", "--max-reassembly-memory", "4MiB", path)
	if code != exitData || !strings.Contains(errOut, "frames given up half-reassembled past --max-reassembly-memory") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// A frame whose bytes came out of order ends in a packet numbered before
// its first: the range written holds both.
func TestSelectionOutOfOrderFrame(t *testing.T) {
	sel := newPacketSelection()
	sel.add(&dissect.Exchange{Request: &dissect.Frame{FirstPacket: 7, LastPacket: 6}, Response: &dissect.Frame{FirstPacket: 9, LastPacket: 9}}, nil)
	sel.prepare()
	for _, c := range sel.conns {
		for f, want := range map[int64]bool{5: false, 6: true, 7: true, 8: false, 9: true} {
			if c.in(f) != want {
				t.Errorf("packet %d in the selection: %v, want %v (ranges %v)", f, c.in(f), want, c.ranges)
			}
		}
	}
}

// A TLS connection is written whole up to its last exchange shown (its
// records cannot be cut) and without its close: read again with the key
// log, the exchanges shown are there, decrypted, with no gap.
func TestWriteSelectionTLS(t *testing.T) {
	pcap, keys := goldenPcap(t, "kgo-tls13.pcap"), goldenPcap(t, "kgo-tls13.keylog")
	out := filepath.Join(t.TempDir(), "cut.pcapng")
	sel, errOut, code := kwireInProcess(t, "read", "--json", "--tls-keylog", keys, "--api", "Produce", "-w", out, pcap)
	if code != 0 || !strings.Contains(errOut, "written: ") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := selectedIDs(t, sel)
	back, errOut, code := kwireInProcess(t, "read", "--json", "--tls-keylog", keys, "--api", "Produce", out)
	if got := selectedIDs(t, back); len(want) == 0 || !slices.Equal(got, want) || code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("re-read: exit %d\n%v\nwant\n%v\n%s", code, got, want, errOut)
	}
}

// A cut file cut again keeps its holes as cuts: the marks of the first
// cut are carried to the packets the second writes.
func TestWriteSelectionRecut(t *testing.T) {
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	dir := t.TempDir()
	first, second := filepath.Join(dir, "first.pcapng"), filepath.Join(dir, "second.pcapng")
	if _, errOut, code := kwireInProcess(t, "read", "--port", "19092", "--api", "Produce,Fetch", "-w", first, pcap); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	sel, errOut, code := kwireInProcess(t, "read", "--json", "--port", "19092", "--api", "Fetch", "-w", second, first)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	back, errOut, code := kwireInProcess(t, "read", "--json", "--port", "19092", second)
	if got, want := selectedIDs(t, back), selectedIDs(t, sel); len(want) == 0 || !slices.Equal(got, want) || code != 0 || strings.Contains(errOut, "warning") {
		t.Errorf("re-read: exit %d\n%v\nwant\n%v\n%s", code, got, want, errOut)
	}
}

// TestCutNamesEveryMode: every command and mode that names topics learns
// a cut file's topic names (its kwire-topic-ids comment), not only read's
// lines: the Produce v13 requests of lossy-network.pcap name their topic
// by ID alone, and the Metadata that named it is left out by the cut.
func TestCutNamesEveryMode(t *testing.T) {
	dir := t.TempDir()
	cut := filepath.Join(dir, "cut.pcapng")
	if _, errOut, code := kwireInProcess(t, "read", "--filter", `api == "Produce" && latencyMs > 300`, "-w", cut, goldenPcap(t, "lossy-network.pcap")); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte("checks:\n  - name: topic\n    expect: '\"capgen-net\" in topics'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"read", cut}, " capgen-net[0@"},
		{[]string{"read", "--findings", cut}, " capgen-net[0@"},
		{[]string{"read", "--stats", cut}, "\ncapgen-net  0 "},
		{[]string{"stats", cut}, "\ncapgen-net  0 "},
		{[]string{"check", spec, cut}, "PASS topic: 2 exchanges match"},
		{[]string{"read", "--normalize", cut}, "topics     capgen-net\n"},
	} {
		out, errOut, _ := kwireInProcess(t, c.args...)
		if !strings.Contains(out, c.want) || strings.Contains(out, "ObKBQbR9b5_BfAAEF3mWzA") {
			t.Errorf("%v: want %q, and no topic ID:\n%s%s", c.args, c.want, out, errOut)
		}
	}
}

// TestWriteNeighbourCredentials: -w writes packets as captured; when one
// holds, beside a frame shown, a frame of an exchange not shown that can
// hold credentials (a SaslAuthenticate PLAIN token in the segment of a
// Metadata request), a note says so; a selection sharing no packet with
// such a frame gets none.
func TestWriteNeighbourCredentials(t *testing.T) {
	dir := t.TempDir()
	c := newTCPCapture(9092, true)
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.SASLAuthBytes = []byte("\x00alice\x00s3cret-pw")
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	c.stream(true, append(kreqFrame(auth, 3, "app"), kreqFrame(md, 4, "app")...))
	mdResp := kmsg.NewPtrMetadataResponse()
	mdResp.Version = 12
	c.stream(false, append(krespFrame(kmsg.NewPtrSASLAuthenticateResponse(), 3), krespFrame(mdResp, 4)...))
	pcap := filepath.Join(dir, "coalesced.pcap")
	if err := os.WriteFile(pcap, c.buf, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cut.pcapng")
	_, errOut, code := kwireInProcess(t, "read", "--filter", "correlationId == 4", "-w", out, pcap)
	if code != 0 || !strings.Contains(errOut, "kwire: note: -w "+out+": packets written also carry 2 frames of exchanges not selected that can hold credentials (SaslAuthenticate)") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	_, errOut, _ = kwireInProcess(t, "read", "--api", "SaslAuthenticate", "-w", out, goldenPcap(t, "sasl-plain.pcap"))
	if _, errOut2, _ := kwireInProcess(t, "read", "--api", "Metadata", "-w", out, goldenPcap(t, "sasl-plain.pcap")); strings.Contains(errOut+errOut2, "not selected that can hold credentials") {
		t.Errorf("no packet shared: %s%s", errOut, errOut2)
	}
}

// TestWriteSelectedCredentials: exchanges selected that can hold
// credentials are written as captured, their passwords in the clear,
// and a note says so, as it does of those not selected that share their
// packets (TestWriteNeighbourCredentials): read --api SaslAuthenticate -w
// wrote the PLAIN passwords of sasl-plain.pcap unsaid (an adversarial
// trial). A selection without any says nothing.
func TestWriteSelectedCredentials(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cut.pcapng")
	_, errOut, code := kwireInProcess(t, "read", "--api", "SaslAuthenticate", "-w", out, goldenPcap(t, "sasl-plain.pcap"))
	want := "kwire: note: -w " + out + ": 7 exchanges written can hold credentials (SaslAuthenticate), which the file holds as captured"
	if code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d: %s\nwant %q", code, errOut, want)
	}
	if _, errOut, _ := kwireInProcess(t, "read", "--api", "Metadata", "-w", out, goldenPcap(t, "sasl-plain.pcap")); strings.Contains(errOut, "credentials") {
		t.Errorf("Metadata alone: %s", errOut)
	}
}

// TestWriteMetadataLogCredentials: the records of the KRaft metadata log
// (__cluster_metadata) carry the cluster's sensitive configs and SCRAM
// credentials, which kwire's output withholds; -w writes them as
// captured, and says so, as of the APIs that carry credentials in their
// fields (a controller's Fetch of the log was written unsaid: an
// adversarial trial). A Fetch of another topic says nothing.
func TestWriteMetadataLogCredentials(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		topic string
		note  bool
	}{{"__cluster_metadata", true}, {"orders", false}} {
		cp := newTCPCapture(9092, true)
		req := kmsg.NewPtrFetchRequest()
		req.Version = 12
		rt := kmsg.NewFetchRequestTopic()
		rt.Topic = c.topic
		rt.Partitions = append(rt.Partitions, kmsg.NewFetchRequestTopicPartition())
		req.Topics = append(req.Topics, rt)
		cp.stream(true, kreqFrame(req, 1, "broker-1"))
		resp := kmsg.NewPtrFetchResponse()
		resp.Version = 12
		p := kmsg.NewFetchResponseTopicPartition()
		p.HighWatermark = 1
		p.RecordBatches = oneRecordBatch([]byte("ssl.keystore.password=Qz-metadata-secret"))
		resp.Topics = []kmsg.FetchResponseTopic{{Topic: c.topic, Partitions: []kmsg.FetchResponseTopicPartition{p}}}
		cp.stream(false, krespFrame(resp, 1))
		pcap := filepath.Join(dir, c.topic+".pcap")
		if err := os.WriteFile(pcap, cp.buf, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, c.topic+"-cut.pcapng")
		want := "kwire: note: -w " + out + ": 1 exchange written can hold credentials (Fetch of the KRaft metadata log's records), which the file holds as captured"
		for _, mode := range [][]string{nil, {"-V"}, {"--json"}} {
			args := append(append([]string{"read"}, mode...), "--api", "Fetch", "-w", out, pcap)
			_, errOut, code := kwireInProcess(t, args...)
			if code != 0 || strings.Contains(errOut, want) != c.note || !c.note && strings.Contains(errOut, "credentials") {
				t.Errorf("%s %v: exit %d, note %v wanted:\n%s", c.topic, mode, code, c.note, errOut)
			}
		}
	}
}

// oneRecordBatch is a magic 2 record batch of one record whose key is
// null and whose value is value.
func oneRecordBatch(value []byte) []byte {
	rec := []byte{0, 0, 0, 1} // attributes, timestamp delta, offset delta, key length -1
	rec = binary.AppendVarint(rec, int64(len(value)))
	rec = append(rec, value...)
	rec = append(rec, 0) // no headers
	recs := append(binary.AppendVarint(nil, int64(len(rec))), rec...)
	b := binary.BigEndian.AppendUint64(nil, 0)          // base offset
	b = binary.BigEndian.AppendUint32(b, 0)             // length, below
	b = binary.BigEndian.AppendUint32(b, 0)             // partition leader epoch
	b = append(b, 2)                                    // magic
	b = binary.BigEndian.AppendUint32(b, 0)             // CRC, below
	b = binary.BigEndian.AppendUint16(b, 0)             // attributes
	b = binary.BigEndian.AppendUint32(b, 0)             // last offset delta
	b = binary.BigEndian.AppendUint64(b, 1700000000000) // first timestamp
	b = binary.BigEndian.AppendUint64(b, 1700000000000) // max timestamp
	b = binary.BigEndian.AppendUint64(b, ^uint64(0))    // producer ID -1
	b = binary.BigEndian.AppendUint16(b, ^uint16(0))    // producer epoch -1
	b = binary.BigEndian.AppendUint32(b, ^uint32(0))    // base sequence -1
	b = binary.BigEndian.AppendUint32(b, 1)             // records
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// kreqFrame is r as a request frame: length, header v1 or v2 (r's flexible
// versions use v2), body.
func kreqFrame(r kmsg.Request, corr int32, clientID string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(r.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(r.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	b = binary.BigEndian.AppendUint16(b, uint16(len(clientID)))
	b = append(b, clientID...)
	if r.IsFlexible() {
		b = append(b, 0) // no tagged fields
	}
	b = r.AppendTo(b)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// krespFrame is r as a response frame: length, header v0 (v1 for
// flexible versions but ApiVersions'), body.
func krespFrame(r kmsg.Response, corr int32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(corr))
	if r.IsFlexible() && r.Key() != 18 {
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// TestWriteTLSFromSecretsBlocks: exchanges decrypted with the keys of the
// input's Decryption Secrets Blocks are written encrypted and without the
// keys; a note says so (read back, the connection is TLS not decrypted).
// With the keys from --tls-keylog there is no such note: the user has
// them.
func TestWriteTLSFromSecretsBlocks(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cut.pcapng")
	_, errOut, code := kwireInProcess(t, "read", "--api", "Fetch", "-w", out, goldenPcap(t, "kgo-tls-dsb.pcapng"))
	want := "kwire: note: -w " + out + ": 2 exchanges written came decrypted from TLS with the keys of the input's Decryption Secrets Blocks (3), which are not copied"
	if code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d: %s\nwant %q", code, errOut, want)
	}
	back, _, _ := kwireInProcess(t, "read", out)
	if !strings.Contains(back, "connections 1 (0 Kafka, 1 skipped: 1 TLS not decrypted (1 no key log))") {
		t.Errorf("read back: %s", back)
	}
	_, errOut, code = kwireInProcess(t, "read", "--api", "Fetch", "-w", out, "--tls-keylog", goldenPcap(t, "kgo-tls13.keylog"), goldenPcap(t, "kgo-tls13.pcap"))
	if code != 0 || strings.Contains(errOut, "Decryption Secrets") {
		t.Errorf("--tls-keylog: exit %d: %s", code, errOut)
	}
}
