package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kwire/kwire/internal/capturetest"
)

// kwireInProcess runs kwire in-process and returns stdout, stderr and the exit
// code.
func kwireInProcess(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }})
	return out.String(), errOut.String(), code
}

// goldenPcap returns the path of a capture in pcaps/, skipping when it
// is missing.
func goldenPcap(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "pcaps", name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("pcaps/%s is missing: %v", name, err)
	}
	return p
}

// capturedPacket is one packet of a capture read whole.
type capturedPacket struct {
	ci   gopacket.CaptureInfo
	data []byte
}

// readPackets reads every packet of a pcap file.
func readPackets(t *testing.T, path string) ([]capturedPacket, layers.LinkType) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []capturedPacket
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, capturedPacket{ci, data})
	}
	return out, r.LinkType()
}

// writePackets writes packets as a pcap file in dir and returns its path.
func writePackets(t *testing.T, dir, name string, link layers.LinkType, pkts []capturedPacket) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(262144, link); err != nil {
		t.Fatal(err)
	}
	for _, pk := range pkts {
		if err := w.WritePacket(pk.ci, pk.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMergeSplitCaptures: a capture cut into three files by time (a ring
// buffer: connections span the files) and one split by direction, read
// with --merge, give the exchanges of the whole capture; read without it,
// each file is a capture of its own and every line says which.
func TestMergeSplitCaptures(t *testing.T) {
	whole := goldenPcap(t, "kgo-produce-consume.pcap")
	pkts, link := readPackets(t, whole)
	dir := t.TempDir()
	n := len(pkts) / 3
	ring := []string{
		writePackets(t, dir, "ring2.pcap", link, pkts[2*n:]), // out of order: the merge orders by time
		writePackets(t, dir, "ring0.pcap", link, pkts[:n]),
		writePackets(t, dir, "ring1.pcap", link, pkts[n:2*n]),
	}
	var toBroker, fromBroker []capturedPacket
	for _, pk := range pkts {
		p := gopacket.NewPacket(pk.data, link, gopacket.Default)
		if tcp, ok := p.TransportLayer().(*layers.TCP); ok && tcp.DstPort == 19092 {
			toBroker = append(toBroker, pk)
		} else {
			fromBroker = append(fromBroker, pk)
		}
	}
	split := []string{
		writePackets(t, dir, "from-broker.pcap", link, fromBroker),
		writePackets(t, dir, "to-broker.pcap", link, toBroker),
	}
	want, _, code := kwireInProcess(t, "read", "--json", "--port", "19092", whole)
	if code != 0 {
		t.Fatalf("whole: exit %d", code)
	}
	for name, files := range map[string][]string{"ring": ring, "split": split} {
		t.Run(name, func(t *testing.T) {
			got, errOut, code := kwireInProcess(t, append([]string{"read", "--json", "--merge", "--port", "19092"}, files...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got != want {
				t.Errorf("merged output differs from the whole capture's:\n%s", firstLineDiff(want, got))
			}
		})
	}
	// Without --merge every line and object names its file.
	out, _, _ := kwireInProcess(t, "read", "--port", "19092", ring[1], ring[2])
	if !strings.HasPrefix(out, ring[1]+": ") || !strings.Contains(out, "\n"+ring[2]+": ") {
		t.Errorf("lines without their file:\n%.500s", out)
	}
	out, _, _ = kwireInProcess(t, "read", "--json", "--port", "19092", ring[1], ring[2])
	files := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var d struct{ File *string }
		if err := json.Unmarshal([]byte(l), &d); err != nil || d.File == nil {
			t.Fatalf("no file: %s", l)
		}
		files[*d.File]++
	}
	if len(files) != 2 || files[ring[1]] == 0 || files[ring[2]] == 0 {
		t.Errorf("files %v", files)
	}
}

func firstLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + "\nwant " + a + "\ngot  " + b
		}
	}
	return ""
}

// jsonExchanges returns the exchange objects of read --json's output.
func jsonExchanges(t *testing.T, out string) []map[string]any {
	t.Helper()
	var exs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		if k, _ := m["kind"].(string); !isEventKind(k) {
			exs = append(exs, m)
		}
	}
	return exs
}

func reqField(m map[string]any, key string) any {
	r, _ := m["request"].(map[string]any)
	if r == nil {
		return nil
	}
	return r[key]
}

// TestSelections: --since and --until by time and offset, -c, --frame
// ranges and -f select what they say.
func TestSelections(t *testing.T) {
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	all, _, _ := kwireInProcess(t, "read", "--json", "--port", "19092", pcap)
	exs := jsonExchanges(t, all)
	if len(exs) < 100 {
		t.Fatalf("%d exchanges", len(exs))
	}
	times := make([]string, 0, len(exs))
	for _, e := range exs {
		if s, ok := reqField(e, "time").(string); ok {
			times = append(times, s)
		}
	}
	slices.Sort(times)
	mid := times[len(times)/2]

	t.Run("since-until", func(t *testing.T) {
		out, _, code := kwireInProcess(t, "read", "--json", "--port", "19092", "--since", mid, pcap)
		got := jsonExchanges(t, out)
		if code != 0 || len(got) == 0 || len(got) >= len(exs) {
			t.Fatalf("exit %d, %d of %d exchanges", code, len(got), len(exs))
		}
		for _, e := range got {
			if s, _ := reqField(e, "time").(string); s < mid {
				t.Errorf("request at %s before --since %s", s, mid)
			}
		}
		out2, _, _ := kwireInProcess(t, "read", "--json", "--port", "19092", "--until", mid, pcap)
		before := jsonExchanges(t, out2)
		if len(before)+len(got) != len(exs) {
			t.Errorf("--until %d + --since %d != %d", len(before), len(got), len(exs))
		}
		// An offset: nothing is a day after the start, everything after +0s.
		out, _, _ = kwireInProcess(t, "read", "--json", "--port", "19092", "--since", "24h", pcap)
		if n := len(jsonExchanges(t, out)); n != 0 {
			t.Errorf("--since 24h: %d exchanges", n)
		}
		out, _, _ = kwireInProcess(t, "read", "--json", "--port", "19092", "--since", "+0s", pcap)
		if n := len(jsonExchanges(t, out)); n != len(exs) {
			t.Errorf("--since +0s: %d exchanges, want %d", n, len(exs))
		}
		if _, errOut, code := kwireInProcess(t, "read", "--since", "yesterday", pcap); code != 2 || !strings.Contains(errOut, "RFC 3339") {
			t.Errorf("bad --since: exit %d %s", code, errOut)
		}
	})
	t.Run("count", func(t *testing.T) {
		out, errOut, code := kwireInProcess(t, "read", "--port", "19092", "-c", "5", pcap)
		lines := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3} `).FindAllString(out, -1)
		if code != 0 || len(lines) != 5 || !strings.Contains(errOut, "stopped after 5 exchanges (-c)") {
			t.Errorf("exit %d, %d lines, stderr %q", code, len(lines), errOut)
		}
		// The summary counts what was read by then; a line says how
		// many of those were shown.
		if !regexp.MustCompile(`\nshown: 5 of \d+ exchanges \(-c 5\)\n`).MatchString(out) {
			t.Errorf("no shown line for -c:\n%s", out)
		}
		// With a filter, -c still says it stopped the lines (it read
		// "(filtered)" alone); a filter that passes fewer than N does not.
		out, _, _ = kwireInProcess(t, "read", "--port", "19092", "--api", "ApiVersions", "-c", "2", pcap)
		if !regexp.MustCompile(`\nshown: 2 of \d+ exchanges \(filtered, -c 2\)\n`).MatchString(out) {
			t.Errorf("no -c in the shown line of a filtered read:\n%s", out)
		}
		out, _, _ = kwireInProcess(t, "read", "--port", "19092", "--api", "ApiVersions", "-c", "100000", pcap)
		if !regexp.MustCompile(`\nshown: \d+ of \d+ exchanges \(filtered\)\n`).MatchString(out) {
			t.Errorf("-c not reached, yet named in the shown line:\n%s", out)
		}
	})
	t.Run("frames", func(t *testing.T) {
		out, _, _ := kwireInProcess(t, "read", "--json", "--port", "19092", "--frame", "1-60,500-", pcap)
		got := jsonExchanges(t, out)
		if len(got) == 0 {
			t.Fatal("nothing selected")
		}
		for _, e := range got {
			var in bool
			for _, side := range []string{"request", "response"} {
				m, _ := e[side].(map[string]any)
				if m == nil {
					continue
				}
				f, l := m["frame"].(float64), m["lastFrame"].(float64)
				in = in || l >= 1 && f <= 60 || l >= 500
			}
			if !in {
				t.Errorf("exchange outside the ranges: %v %v", e["request"], e["response"])
			}
		}
	})
	t.Run("read-filter", func(t *testing.T) {
		// The first connection's client port: only its exchanges pass.
		client := exs[0]["client"].(string)
		port := client[strings.LastIndexByte(client, ':')+1:]
		out, errOut, code := kwireInProcess(t, "read", "--json", "--port", "19092", "-f", "tcp port "+port, pcap)
		got := jsonExchanges(t, out)
		if code != 0 || len(got) == 0 {
			t.Fatalf("exit %d, %d exchanges: %s", code, len(got), errOut)
		}
		for _, e := range got {
			if e["client"] != client {
				t.Errorf("client %v passed -f 'tcp port %s'", e["client"], port)
			}
		}
		if _, errOut, code := kwireInProcess(t, "read", "-f", "udp port 53", pcap); code != 2 || !strings.Contains(errOut, "pure-Go") {
			t.Errorf("udp filter: exit %d %s", code, errOut)
		}
		// An exchange expression given to -f: said to be --filter's.
		// One that is neither only lists the tcpdump syntax.
		if _, errOut, code := kwireInProcess(t, "read", "-f", `api == "Produce"`, pcap); code != 2 || !strings.Contains(errOut, `kwire: 'api == "Produce"' is an expression over exchanges: give it with --filter`) {
			t.Errorf("an exchange expression given to -f: exit %d %s", code, errOut)
		}
		if _, errOut, code := kwireInProcess(t, "read", "-f", "prot 9092", pcap); code != 2 || !strings.Contains(errOut, "pure-Go") || strings.Contains(errOut, "--filter") {
			t.Errorf("a misspelt -f: exit %d %s", code, errOut)
		}
	})
}

// TestJSONStatsRecord: read --json --stats ends its NDJSON with one
// record holding kwire stats --json's document.
func TestJSONStatsRecord(t *testing.T) {
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	out, errOut, code := kwireInProcess(t, "read", "--json", "--stats", "--port", "19092", pcap)
	if code != 0 || strings.Contains(errOut, "{") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var last struct {
		Kind  string
		Stats any
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last.Kind != "stats" {
		t.Fatalf("last line %v: %.200s", err, lines[len(lines)-1])
	}
	doc, _, _ := kwireInProcess(t, "stats", "--json", "--port", "19092", pcap)
	var want any
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(last.Stats, want) {
		t.Error("the stats record differs from kwire stats --json")
	}
}

// A --since at or after --until of the same kind is a usage error; of
// different kinds (an offset and a time) it is resolved against the
// capture and not judged in advance.
func TestCheckWindow(t *testing.T) {
	b := func(s string) timeBound {
		v, err := parseTimeBound("--x", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		since, until string
		ok           bool
	}{
		{"1s", "3s", true},
		{"3s", "1s", false},
		{"2s", "2s", false},
		{"2026-11-29T12:51:40Z", "2026-11-29T12:51:41Z", true},
		{"2026-11-29T12:51:41Z", "2026-11-29T12:51:40Z", false},
		{"30s", "2026-11-29T12:51:40Z", true},
		{"", "1s", true},
	} {
		if err := checkWindow(b(c.since), b(c.until)); (err == nil) != c.ok {
			t.Errorf("--since %q --until %q: %v, want ok %v", c.since, c.until, err, c.ok)
		}
	}
}

// TestGroupsTxnsRing: groups and txns over a capture cut every 100
// packets (editcap -c 100, as a tcpdump ring leaves it). With --merge the
// reports are the whole capture's, rebalance times and join times
// included (cut apart, kafka-python's third member joined at 15:44:58.343
// in one file and its generation formed in the next); without it each
// file is a capture of its own: every group and producer names its file,
// its packet numbers are that file's, and a note suggests --merge. (The
// whole txn-fenced.pcap: capgen-kgo-txn-a, initialised at packet 61 at
// epoch 0, fenced by capgen-kgo-txn-b; cut apart, neither file has both.)
func TestGroupsTxnsRing(t *testing.T) {
	for _, tc := range []struct {
		cmd, pcap, want, what string
	}{
		{"groups", "group-rebalance-kafkapython.pcap", ": 5 generations, 4 rebalances (450ms in all), 3 members;", "group capgen-kafkapython-rebalance is in 4 files"},
		{"txns", "txn-fenced.pcap", "0       capgen-kgo-txn-b (epoch 1) 15:45:25.479      61\n", "transactional ID capgen-txn-fenced is in 2 files"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			whole := goldenPcap(t, tc.pcap)
			pkts, link := readPackets(t, whole)
			dir := t.TempDir()
			var ring []string
			for i := 0; i < len(pkts); i += 100 {
				ring = append(ring, writePackets(t, dir, "ring_"+strconv.Itoa(i/100)+".pcap", link, pkts[i:min(i+100, len(pkts))]))
			}
			want, _, code := kwireInProcess(t, tc.cmd, whole)
			if code != 0 || !strings.Contains(want, tc.want) {
				t.Fatalf("whole capture: exit %d, no %q:\n%s", code, tc.want, want)
			}
			got, errOut, code := kwireInProcess(t, append([]string{tc.cmd, "--merge"}, ring...)...)
			if code != 0 || errOut != "" {
				t.Fatalf("--merge: exit %d: %s", code, errOut)
			}
			if got != want {
				t.Errorf("--merge differs from the whole capture:\n%s", firstLineDiff(want, got))
			}

			out, errOut, _ := kwireInProcess(t, append([]string{tc.cmd}, ring...)...)
			if !strings.Contains(errOut, "kwire: note: "+tc.what+", each file read as a capture of its own") || !strings.Contains(errOut, "--merge reads them as one") {
				t.Errorf("no note suggesting --merge: %q", errOut)
			}
			if strings.Contains(out, tc.want) {
				t.Errorf("without --merge, a file's report claims the whole capture's %q", tc.want)
			}
			heads := regexp.MustCompile(`(?m)^(GROUP|TRANSACTIONAL ID|IDEMPOTENT PRODUCER) .*\nin (\S+) \(a capture of its own: packet numbers are this file's\)$`).FindAllStringSubmatch(out, -1)
			if len(heads) < 2 || len(heads) != strings.Count(out, "\nin ")+b2i(strings.HasPrefix(out, "in ")) {
				t.Errorf("reports without their file (%d):\n%s", len(heads), out)
			}

			out, _, _ = kwireInProcess(t, append([]string{tc.cmd, "--json"}, ring...)...)
			var doc struct {
				Groups, Producers []struct {
					File     string
					Timeline []struct {
						Ref struct {
							Frame, ResponseFrame int64
							File                 string
						}
					}
					Instances []struct {
						Ref struct {
							Frame, ResponseFrame int64
							File                 string
						}
					}
				}
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			reports := append(doc.Groups, doc.Producers...)
			if len(reports) < 2 {
				t.Fatalf("%d reports", len(reports))
			}
			events := 0
			for _, r := range reports {
				if !slices.Contains(ring, r.File) {
					t.Errorf("report of file %q", r.File)
				}
				for _, e := range append(r.Timeline, r.Instances...) {
					events++
					if e.Ref.Frame > 0 && (e.Ref.File != r.File || e.Ref.Frame > 100 || e.Ref.ResponseFrame > 100) {
						t.Errorf("a report of %s cites packet %d/%d of %q", r.File, e.Ref.Frame, e.Ref.ResponseFrame, e.Ref.File)
					}
				}
			}
			if events == 0 {
				t.Error("no timeline events or instances")
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestReadFilterTunnels: -f sees each packet of a file as captured, as
// tcpdump -r FILE FILTER does: a VXLAN-wrapped capture passes ip, not
// host X and its outer address whole (it passed nothing: the program let
// TCP through only), its inner address not; a filter that passes none
// says so, not that the capture is empty, with exit status 0 (as when no
// Kafka is found; tcpdump exits 0 too).
func TestReadFilterTunnels(t *testing.T) {
	link, pkts, err := capturetest.ReadPcap(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil || link != 1 {
		t.Fatalf("link %d: %v", link, err)
	}
	for i := range pkts {
		w, err := capturetest.Wrap(pkts[i].Data, capturetest.VXLAN)
		if err != nil {
			t.Fatal(err)
		}
		pkts[i].Data, pkts[i].Length = w, len(w)
	}
	path := writeTemp(t, "vxlan.pcap", pcapOf(pkts).Bytes)
	for _, f := range []string{"ip", "not host 1.2.3.4", "host 192.0.2.1", "port 4789"} {
		out, errOut, code := kwireInProcess(t, "read", "-f", f, path)
		if want := "packets 648, connections 41 (41 Kafka)\n"; code != 0 || errOut != "" || !strings.Contains(out, want) {
			t.Errorf("-f %q: exit %d, stderr %q, stdout does not hold %q:\n%s", f, code, errOut, want, out)
		}
	}
	out, errOut, code := kwireInProcess(t, "read", "-f", "host 127.0.0.1", path)
	if want := "packets 0 (648 more skipped by -f), connections 0 (0 Kafka)\n"; !strings.HasPrefix(out, want) {
		t.Errorf("-f 'host 127.0.0.1': stdout %q, want it to start %q", out, want)
	}
	if want := "kwire: no Kafka connections found: -f passed none of the 648 packets read\n"; code != 0 || errOut != want {
		t.Errorf("-f 'host 127.0.0.1': exit %d, stderr %q, want 0, %q", code, errOut, want)
	}
}

// fragment splits the IPv4 packet of each Ethernet frame whose payload
// is longer than 400 bytes into two fragments, at 200 bytes.
func fragment(t *testing.T, pkts []capturetest.Packet) []capturetest.Packet {
	t.Helper()
	var out []capturetest.Packet
	for _, p := range pkts {
		eth, ip := p.Data[:14], p.Data[14:]
		ihl := int(ip[0]&15) * 4
		payload := ip[ihl:binary.BigEndian.Uint16(ip[2:])]
		if len(payload) <= 400 {
			out = append(out, p)
			continue
		}
		for i, part := range [][]byte{payload[:200], payload[200:]} {
			h := slices.Clone(ip[:ihl])
			binary.BigEndian.PutUint16(h[2:], uint16(ihl+len(part)))
			binary.BigEndian.PutUint16(h[6:], uint16(1-i)<<13|uint16(i*200/8)) // MF on the first; offset in 8 bytes
			binary.BigEndian.PutUint16(h[10:], 0)
			var sum uint32
			for j := 0; j < len(h); j += 2 {
				sum += uint32(binary.BigEndian.Uint16(h[j:]))
			}
			for sum > 0xffff {
				sum = sum>>16 + sum&0xffff
			}
			binary.BigEndian.PutUint16(h[10:], ^uint16(sum))
			d := slices.Concat(eth, h, part)
			out = append(out, capturetest.Packet{Time: p.Time, Data: d, Length: len(d)})
		}
	}
	return out
}

// TestReadFragmentOverlap: an IP fragment sent again with other bytes
// (an overlapping-fragment evasion, a broken middlebox) gets its
// datagram discarded, as a receiver does, and said, exit status 1: kwire
// rebuilt the segment from the later copy, unsaid, exit 0.
func TestReadFragmentOverlap(t *testing.T) {
	_, pkts, err := capturetest.ReadPcap(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	frags := fragment(t, pkts)
	// A first fragment (more fragments, offset 0), sent again before the
	// datagram's last.
	i := slices.IndexFunc(frags, func(p capturetest.Packet) bool { return binary.BigEndian.Uint16(p.Data[14+6:]) == 0x2000 })
	if i < 0 {
		t.Fatal("no first fragment")
	}
	changed := slices.Clone(frags[i].Data)
	changed[len(changed)-1] ^= 0xff
	dup := frags[i]
	frags = slices.Insert(frags, i+1, capturetest.Packet{Time: dup.Time, Data: changed, Length: len(changed)})
	path := writeTemp(t, "overlap.pcap", pcapOf(frags).Bytes)
	out, errOut, code := kwireInProcess(t, "read", path)
	if want := "3 IP fragments (not reassembled; 3 of datagrams whose fragments overlap with different bytes, discarded)"; code != exitData || !strings.Contains(out, want) {
		t.Errorf("exit %d, stdout does not hold %q:\n%s", code, want, out)
	}
	if want := "kwire: warning: 3 IP fragments were discarded: fragments of their datagrams overlap with different bytes"; !strings.Contains(errOut, want) {
		t.Errorf("stderr %q, want %q", errOut, want)
	}
	// The same fragment repeated as it was is a duplicate: read as before.
	frags[i+1] = dup
	path = writeTemp(t, "dup.pcap", pcapOf(frags).Bytes)
	if out, errOut, code := kwireInProcess(t, "read", path); code != 0 || errOut != "" || strings.Contains(out, "anomalies") {
		t.Errorf("duplicate fragment: exit %d, stderr %q:\n%s", code, errOut, out)
	}
}

// TestReadFilterFragments: -f host passes every IP fragment, as tcpdump
// -r does (it passed the first fragments only: 49 gaps, exit 1); -f port
// passes the first fragments only, as tcpdump's does, and a note says
// why the others are missing.
func TestReadFilterFragments(t *testing.T) {
	link, pkts, err := capturetest.ReadPcap(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil || link != 1 {
		t.Fatalf("link %d: %v", link, err)
	}
	frags := fragment(t, pkts)
	if len(frags) != 697 {
		t.Fatalf("%d packets, want 697 (648 and 49 second fragments)", len(frags))
	}
	path := writeTemp(t, "frag.pcap", pcapOf(frags).Bytes)
	out, errOut, code := kwireInProcess(t, "read", "-f", "host 127.0.0.1", path)
	if want := "packets 697, connections 41 (41 Kafka)\n"; code != 0 || errOut != "" || !strings.Contains(out, want) || strings.Contains(out, "anomalies") {
		t.Errorf("-f 'host 127.0.0.1': exit %d, stderr %q, stdout does not hold %q or has anomalies:\n%s", code, errOut, want, out)
	}
	out, errOut, code = kwireInProcess(t, "read", "-f", "port 19092", path)
	if want := "packets 648 (49 more skipped by -f), "; code != exitData || !strings.Contains(out, want) {
		t.Errorf("-f 'port 19092': exit %d, stdout does not hold %q:\n%s", code, want, out)
	}
	if want := "kwire: note: 49 IP fragments could not be reassembled, and -f skipped 49 packets: a port filter passes the first fragment of a datagram only"; !strings.HasPrefix(errOut, want) {
		t.Errorf("-f 'port 19092': stderr %q, want it to start %q", errOut, want)
	}
}
