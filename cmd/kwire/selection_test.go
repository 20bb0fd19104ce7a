package main

import (
	"bufio"
	"bytes"
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
