package pcaps

// kwire promises that its packet numbers (request/response "frame" and
// "lastFrame", --frame N) and connection numbers ("stream", --stream N)
// are Wireshark's frame.number and tcp.stream, so that a user can look at
// the same packets in both tools. TestAgainstWireshark holds kwire to it
// with tshark on every capture. tshark is optional (CI does not install
// it): without it on PATH the test skips.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tsPacket is one packet as tshark dissects it.
type tsPacket struct {
	stream   int    // tcp.stream; -1 for a packet that is not TCP
	src, dst string // "addr:port"
	tcpLen   int    // tcp.len
	corrIDs  []int32
}

// tsCapture is tshark's reading of a capture: its packets by number
// (index 0 unused), the tcp.stream of each connection by its endpoints,
// and the packets holding a Kafka PDU by connection, direction and
// correlation ID.
type tsCapture struct {
	packets []tsPacket
	streams map[string]int   // endpoints key → tcp.stream
	pdus    map[pduKey][]int // packet numbers, ascending
}

type pduKey struct {
	stream int
	from   string // sender "addr:port"
	corrID int32
}

// endpointsKey names a connection by its two endpoints in either order.
func endpointsKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + " " + b
}

// tsharkFields are the fields TestAgainstWireshark reads, in order.
var tsharkFields = []string{
	"frame.number", "tcp.stream",
	"ip.src", "ipv6.src", "tcp.srcport",
	"ip.dst", "ipv6.dst", "tcp.dstport",
	"tcp.len", "kafka.correlation_id",
}

// readTshark runs tshark on a capture with the Kafka dissector on the
// broker ports (comma-separated).
func readTshark(t *testing.T, tshark, capture, ports string) *tsCapture {
	t.Helper()
	args := []string{"-r", capture, "-n", "-T", "fields", "-E", "separator=/t", "-E", "aggregator=,"}
	args = append(args, tsharkDecodeAs(capture, ports)...)
	for _, f := range tsharkFields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(tshark, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark %s: %v\n%s", strings.Join(args, " "), err, errb.Bytes())
	}
	tc := &tsCapture{packets: []tsPacket{{}}, streams: map[string]int{}, pdus: map[pduKey][]int{}}
	for i, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		p, err := parseTsharkLine(line)
		if err != nil {
			t.Fatalf("tshark line %d %q: %v", i+1, line, err)
		}
		if n := len(tc.packets); p.number != n {
			t.Fatalf("tshark line %d: packet %d, want %d", i+1, p.number, n)
		}
		tc.packets = append(tc.packets, p.tsPacket)
		if p.stream < 0 {
			continue
		}
		key := endpointsKey(p.src, p.dst)
		if s, ok := tc.streams[key]; !ok || p.stream > s {
			tc.streams[key] = p.stream // a reused 4-tuple: its latest connection
		}
		for _, id := range p.corrIDs {
			k := pduKey{p.stream, p.src, id}
			tc.pdus[k] = append(tc.pdus[k], p.number)
		}
	}
	return tc
}

// tsharkDecodeAs are tshark's options to read Kafka on the broker ports:
// over TCP, or for an encrypted capture over TLS with its key log (a
// pcapng's own Decryption Secrets Blocks need none).
func tsharkDecodeAs(capture, ports string) []string {
	var args []string
	proto := "tcp"
	if kl, ok := KeyLog(capture); ok {
		args = append(args, "-o", "tls.keylog_file:"+kl)
		proto = "tls"
	} else if encrypted(capture) {
		proto = "tls"
	}
	for _, p := range strings.Split(ports, ",") {
		args = append(args, "-d", proto+".port=="+p+",kafka")
	}
	return args
}

type tsLine struct {
	number int
	tsPacket
}

func parseTsharkLine(line string) (tsLine, error) {
	f := strings.Split(line, "\t")
	if len(f) != len(tsharkFields) {
		return tsLine{}, fmt.Errorf("%d fields, want %d", len(f), len(tsharkFields))
	}
	// first is the first occurrence of a field: an ICMP error quotes an
	// IP header of its own.
	first := func(s string) string { return strings.Split(s, ",")[0] }
	var p tsLine
	var err error
	if p.number, err = strconv.Atoi(f[0]); err != nil {
		return p, err
	}
	p.stream = -1
	if f[1] == "" {
		return p, nil
	}
	if p.stream, err = strconv.Atoi(first(f[1])); err != nil {
		return p, err
	}
	addr := func(v4, v6, port string) string {
		if v4 = first(v4); v4 != "" {
			return v4 + ":" + first(port)
		}
		return "[" + first(v6) + "]:" + first(port)
	}
	p.src = addr(f[2], f[3], f[4])
	p.dst = addr(f[5], f[6], f[7])
	if p.tcpLen, err = strconv.Atoi(first(f[8])); err != nil {
		return p, err
	}
	if f[9] != "" {
		for _, s := range strings.Split(f[9], ",") {
			id, err := strconv.ParseInt(s, 10, 32)
			if err != nil {
				return p, err
			}
			p.corrIDs = append(p.corrIDs, int32(id))
		}
	}
	return p, nil
}

// wsDoc is what the comparison reads of each line of kwire's --json
// stream: exchanges and events alike name their connection.
type wsDoc struct {
	kwireDoc
	From  string `json:"from"`
	Frame int64  `json:"frame"` // an event's packet
}

func TestAgainstWireshark(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark is not on PATH (apt-get install tshark): kwire's frame and stream numbers are not checked against Wireshark's")
	}
	for _, c := range captures(t) {
		t.Run(strings.TrimSuffix(c, ".pcap"), func(t *testing.T) {
			ports := info(t, c).ports
			tc := readTshark(t, tshark, c, ports)
			res := kwire(t, readArgs(t, c, mode{"json", []string{"--json"}})...)
			if want := fmt.Sprintf("packets %d,", len(tc.packets)-1); !bytes.Contains(res.stderr, []byte(want)) {
				t.Errorf("kwire's summary does not say %q (tshark's packet count):\n%s", want, res.stderr)
			}
			var docs []*wsDoc
			for i, line := range bytes.Split(res.stdout, []byte("\n")) {
				if len(line) == 0 {
					continue
				}
				d := &wsDoc{}
				if err := json.Unmarshal(line, d); err != nil {
					t.Fatalf("--json line %d: %v", i+1, err)
				}
				docs = append(docs, d)
			}
			s := compareWireshark(t, tc, docs)
			t.Logf("%d packets, %d tshark streams; kwire: %d connections, %d exchanges, %d events; %d messages' lastFrame matched to tshark's Kafka PDUs, %d not compared (%s)",
				len(tc.packets)-1, len(tc.streams), len(s.conns), s.exchanges, s.events, s.matched, s.skipped, strings.Join(s.why, ", "))
			if s.exchanges > 0 && s.matched == 0 {
				t.Error("no kwire message was matched to a Kafka PDU of tshark's")
			}
			if len(s.conns) == 0 {
				t.Error("kwire names no connection")
			}
		})
	}
}

type wsStats struct {
	conns             map[int]bool
	exchanges, events int
	matched, skipped  int
	why               []string
}

func (s *wsStats) skip(reason string) {
	s.skipped++
	if !slices.Contains(s.why, reason) {
		s.why = append(s.why, reason)
	}
}

// compareWireshark checks kwire's documents against tshark's reading.
func compareWireshark(t *testing.T, tc *tsCapture, docs []*wsDoc) *wsStats {
	t.Helper()
	s := &wsStats{conns: map[int]bool{}}
	// inStream checks that packet n belongs to connection stream and, when
	// from is set, was sent by from and carries TCP payload.
	inStream := func(label string, n int64, stream int, from string) {
		if n < 1 || n >= int64(len(tc.packets)) {
			t.Errorf("%s: packet %d is not in the capture (%d packets)", label, n, len(tc.packets)-1)
			return
		}
		p := tc.packets[n]
		switch {
		case p.stream != stream:
			t.Errorf("%s: packet %d is in tcp.stream %d for tshark, kwire says stream %d", label, n, p.stream, stream)
		case from != "" && (p.src != from || p.tcpLen == 0):
			t.Errorf("%s: packet %d is %s → %s with %d payload bytes for tshark, want payload from %s", label, n, p.src, p.dst, p.tcpLen, from)
		}
	}
	for i, d := range docs {
		label := fmt.Sprintf("--json line %d (%s %s corr=%d)", i+1, d.Kind, d.API, d.CorrelationID)
		if d.Client == "" || d.Broker == "" {
			t.Errorf("%s: no client or broker", label)
			continue
		}
		want, ok := tc.streams[endpointsKey(d.Client, d.Broker)]
		if !ok {
			t.Errorf("%s: tshark has no TCP connection %s – %s", label, d.Client, d.Broker)
			continue
		}
		if d.Stream != want {
			t.Errorf("%s: stream %d, tshark's tcp.stream for %s – %s is %d", label, d.Stream, d.Client, d.Broker, want)
		}
		s.conns[d.Stream] = true
		if slices.Contains(eventKinds, d.Kind) {
			s.events++
			if d.Frame != 0 {
				inStream(label, d.Frame, d.Stream, "")
			}
			continue
		}
		s.exchanges++
		for _, m := range []struct {
			role string
			msg  *kwireMsg
			from string
		}{{"request", d.Request, d.Client}, {"response", d.Response, d.Broker}} {
			if m.msg == nil {
				continue
			}
			ml := label + " " + m.role
			if m.msg.Frame > m.msg.LastPacket {
				t.Errorf("%s: frame %d after lastFrame %d", ml, m.msg.Frame, m.msg.LastPacket)
			}
			inStream(ml+" frame", m.msg.Frame, d.Stream, m.from)
			inStream(ml+" lastFrame", m.msg.LastPacket, d.Stream, m.from)
			if d.Kind == "sasl" {
				s.skip("raw SASL tokens have no Kafka header")
				continue
			}
			pdus := tc.pdus[pduKey{d.Stream, m.from, d.CorrelationID}]
			if len(pdus) == 0 {
				s.skip("tshark decoded no PDU with the correlation ID")
				continue
			}
			if !slices.Contains(pdus, int(m.msg.LastPacket)) {
				t.Errorf("%s: lastFrame %d, tshark's Kafka PDUs with correlation ID %d from %s end in packets %v",
					ml, m.msg.LastPacket, d.CorrelationID, m.from, pdus)
				continue
			}
			s.matched++
		}
	}
	return s
}
