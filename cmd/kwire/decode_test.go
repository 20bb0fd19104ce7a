package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/kwire/kwire/internal/connecttest"
)

// sharedDir returns Kafka's vectors and schemas directory: $KWIRE_SHARED,
// else ../shared beside the module root; the test skips without it.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KWIRE_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(dir, "kafka-vectors")); err != nil {
		t.Skipf("Kafka's vectors not found in %s (set KWIRE_SHARED): %v", dir, err)
	}
	return dir
}

// Record batches written by Kafka's MemoryRecordsBuilder decode through
// `kwire decode --type RecordBatch`, and the value flags reach the output.
func TestDecodeRecordBatchVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "kafka-vectors", "records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct{ Name, Hex string }
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Vectors) == 0 {
		t.Fatal("records.json holds no vectors")
	}
	for _, v := range file.Vectors {
		code, out, errOut := runWith(t, "", "decode", "--type", "RecordBatch", v.Hex)
		if code != exitOK || errOut != "" {
			t.Errorf("%s: exit %d, stderr %q", v.Name, code, errOut)
			continue
		}
		if !strings.Contains(out, "RecordBatch offset ") || !strings.Contains(out, "crc ok") {
			t.Errorf("%s: no checked batch in\n%s", v.Name, out)
		}
		code, out, _ = runWith(t, "", "decode", "--type", "RecordBatch", "--json", v.Hex)
		if code != exitOK || !json.Valid([]byte(out)) {
			t.Errorf("%s --json: exit %d, invalid JSON %q", v.Name, code, out)
		}
	}

	// one_record_no_key's value is "value-one".
	var hex string
	for _, v := range file.Vectors {
		if v.Name == "one_record_no_key" {
			hex = v.Hex
		}
	}
	if hex == "" {
		t.Fatal("vector one_record_no_key missing")
	}
	for _, tt := range []struct {
		flags []string
		want  string
	}{
		{nil, `Value: "value-one"`},
		{[]string{"--values=hex"}, "76616c75652d6f6e65"},
		{[]string{"--values=base64"}, "dmFsdWUtb25l"},
		{[]string{"--values=none"}, "Value: 9 bytes"},
	} {
		args := append([]string{"decode", "--type", "RecordBatch"}, tt.flags...)
		code, out, errOut := runWith(t, "", append(args, hex)...)
		if code != exitOK || !strings.Contains(out, tt.want) {
			t.Errorf("%v: exit %d (stderr %q), output lacks %q:\n%s", tt.flags, code, errOut, tt.want, out)
		}
	}
}

// A record batch whose CRC does not match decodes with exit status 1.
func TestDecodeRecordBatchBadCRC(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "kafka-vectors", "records.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Vectors []struct{ Name, Hex string }
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	for _, v := range file.Vectors {
		if v.Name != "one_record_no_key" {
			continue
		}
		// The last bytes are the record's value and empty headers; change
		// a value byte so that the CRC no longer matches.
		bad := v.Hex[:len(v.Hex)-4] + "00" + v.Hex[len(v.Hex)-2:]
		code, out, errOut := runWith(t, "", "decode", "--type", "RecordBatch", bad)
		if code != exitData || !strings.Contains(errOut, "kwire: decode error: ") {
			t.Errorf("exit %d, stderr %q; want 1 and a decode error", code, errOut)
		}
		if !strings.Contains(out, "RecordBatch offset 0") {
			t.Errorf("the batch is not shown:\n%s", out)
		}
		return
	}
	t.Fatal("vector one_record_no_key missing")
}

// TestDecodeConnectMetadata: kwire decode --type ConnectProtocolMetadata
// decodes a worker's metadata and the assignment its allocation holds;
// the leader URL's userinfo there is withheld in the tree, -x and the
// JSON, and shown with --show-secrets.
func TestDecodeConnectMetadata(t *testing.T) {
	const pw = "Kx-DECODE-CONNECT-71"
	a := connecttest.Assignment{Version: 1, Leader: "w1", LeaderURL: "http://u:" + pw + "@w1:8083/", ConfigOffset: 42,
		Assigned: []connecttest.Connector{{Name: "pg", Tasks: []int32{-1, 0}}}, NullRevoked: true, Delay: 5000}
	h := hex.EncodeToString(connecttest.Metadata(2, "http://w2:8083/", 19, a.Bytes()))
	for _, flags := range [][]string{nil, {"-x"}, {"--json"}, {"--show-secrets"}} {
		args := append([]string{"decode", "--type", "ConnectProtocolMetadata"}, flags...)
		code, out, errOut := runWith(t, "", append(args, h)...)
		if code != exitOK || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", flags, code, errOut)
		}
		show := len(flags) > 0 && flags[0] == "--show-secrets"
		if strings.Contains(out, pw) != show {
			t.Errorf("%v: password shown %v:\n%s", flags, !show, out)
		}
		if !strings.Contains(out, "http://w2:8083/") || len(flags) == 0 && !strings.Contains(out, `Connector: "pg"`) {
			t.Errorf("%v: output lacks the URL or the allocation's connector:\n%s", flags, out)
		}
	}
}

// endless is a reader that never ends: line repeated forever (a NUL byte
// when line is empty, as /dev/zero); read counts the bytes handed out.
type endless struct {
	line []byte
	off  int
	read int64
}

func (e *endless) Read(p []byte) (int, error) {
	if len(e.line) == 0 {
		clear(p)
		e.read += int64(len(p))
		return len(p), nil
	}
	for i := range p {
		p[i] = e.line[e.off]
		e.off = (e.off + 1) % len(e.line)
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestDecodeInputBounded: input that never ends is read up to
// --max-input-memory and no further: zeros (no hex in the whole lines
// read) end with exit 2, a stream of frames with exit 1 after decoding the
// whole lines read; both say which flag to raise, and to what.
func TestDecodeInputBounded(t *testing.T) {
	run1 := func(in *endless, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		s := &ioStreams{In: in, Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
		return run(append([]string{"decode"}, args...), s), out.String(), errOut.String()
	}
	zeros := &endless{}
	code, out, errOut := run1(zeros, "--max-input-memory", "1MiB")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "more than --max-input-memory allows (1MiB: its text and 48 bytes a line)") ||
		!strings.Contains(errOut, "--max-input-memory 2MiB") || !strings.Contains(errOut, "no hex digits") {
		t.Errorf("zeros: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if zeros.read > 1<<20+1<<16 {
		t.Errorf("zeros: %d bytes read past a 1 MiB budget", zeros.read)
	}
	// The default budget holds for stdin too.
	zeros = &endless{}
	if code, _, errOut := run1(zeros); code != exitUsage || !strings.Contains(errOut, "(64MiB:") || zeros.read > 64<<20+1<<16 {
		t.Errorf("zeros, default budget: exit %d, %d bytes read, stderr %q", code, zeros.read, errOut)
	}
	frames := &endless{line: []byte(seedHex + "\n")}
	code, out, errOut = run1(frames, "--max-input-memory", "64KiB")
	if code != exitData || !strings.Contains(out, "CorrelationId: 16909060") || !strings.Contains(errOut, "--max-input-memory 128KiB") {
		t.Errorf("frames: exit %d, stdout %.300q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := run1(&endless{}, "--max-input-memory", "0"); code != exitUsage || !strings.Contains(errOut, "--max-input-memory must be positive") {
		t.Errorf("--max-input-memory 0: exit %d, stderr %q", code, errOut)
	}
}

// A regular file past the budget (3 MiB of hex on a line, 1 MiB of spaces):
// the value to raise it to is estimated from its size, in whole MiB.
func TestDecodeInputBoundedFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.hex")
	if err := os.WriteFile(p, []byte(strings.Repeat("00", 3<<19)+"\n"+strings.Repeat(" ", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runWith(t, "", "decode", "--max-input-memory", "1MiB", "-f", p)
	if code != exitUsage || !strings.Contains(errOut, "needs about 5MiB, more than --max-input-memory allows (1MiB") || !strings.Contains(errOut, "--max-input-memory 5MiB") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestDecodeInputLines: lines cost 48 bytes each on top of their text, so
// that input of newlines alone (1 MiB: 49 MiB of line bookkeeping and
// text) stops at the bound, with what it needs; the parser held 40 times
// such input's size (60 MB of newlines: 1.5 GB).
func TestDecodeInputLines(t *testing.T) {
	code, out, errOut := runWith(t, strings.Repeat("\n", 1<<20), "decode", "--max-input-memory", "1MiB")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "needs about 50MiB, more than --max-input-memory allows (1MiB") ||
		!strings.Contains(errOut, "--max-input-memory 50MiB") || !strings.Contains(errOut, "no hex digits") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Frames on lines within the bound are decoded whole.
	in := strings.Repeat(seedHex+"\n", 1000) // 47000 bytes of text, 48000 of lines: 93 KiB
	code, out, errOut = runWith(t, in, "decode", "--max-input-memory", "100KiB")
	if code != exitOK || strings.Count(out, "CorrelationId: 16909060") != 1000 || errOut != "" {
		t.Errorf("1000 frames: exit %d, %d frames, stderr %q", code, strings.Count(out, "CorrelationId: 16909060"), errOut)
	}
	code, out, errOut = runWith(t, in, "decode", "--max-input-memory", "64KiB")
	if n := strings.Count(out, "CorrelationId: 16909060"); code != exitData || n < 600 || n > 700 || !strings.Contains(errOut, "needs about 93KiB") || !strings.Contains(errOut, "--max-input-memory 93KiB") {
		t.Errorf("1000 frames in 64KiB: exit %d, %d frames, stderr %q", code, n, errOut)
	}
}

// decodeF1 is ApiVersions v0 from client "rdkafka", correlation ID 7.
const decodeF1 = "000000110012000000000007000772646b61666b61"

// TestDecodeLogShapes: kwire decode reads frames out of the shapes logs
// give hex in, and decodes each: API, correlation ID and client ID as the
// bytes say; several frames each under a heading, or a JSON line each.
func TestDecodeLogShapes(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", "decode", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	rdkafka := `%7|1700000000.100|SEND|rdkafka#producer-1| [thrd:localhost:9092/bootstrap]: Sent ApiVersionsRequest (v0, 21 bytes @ 0, CorrId 7)
Sent request hexdump (21 bytes):
00000000: 00 00 00 11 00 12 00 00 00 00 00 07 00 07 72 64  ..............rd
00000010: 6b 61 66 6b 61                                   kafka           
%7|1700000000.200|SEND|rdkafka#producer-1| [thrd:localhost:9092/bootstrap]: Sent ApiVersionsRequest (v0, 23 bytes @ 0, CorrId 16909060)
Sent request hexdump (23 bytes):
00000000: 00 00 00 13 00 12 00 00 01 02 03 04 00 09 77 69  ..............wi
00000010: 72 65 2d 72 65 61 64                             re-read         
`
	netty := `2026-05-01 12:00:00.123 DEBUG [id: 0x1a2b3c4d, L:/127.0.0.1:50000 - R:localhost/127.0.0.1:9092] WRITE: 21B
         +-------------------------------------------------+
         |  0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f |
+--------+-------------------------------------------------+----------------+
|00000000| 00 00 00 11 00 12 00 00 00 00 00 07 00 07 72 64 |..............rd|
|00000010| 6b 61 66 6b 61                                  |kafka           |
+--------+-------------------------------------------------+----------------+
`
	tests := []struct {
		name string
		in   string
		args []string
		code int
		want []string // in the output, in this order
		errs []string // in stderr
	}{
		{"hex inside a log line", "2026-05-01 12:00:00,123 DEBUG [Producer clientId=p1] sent " + decodeF1 + " (21 bytes) traceId=4bf92f3577b34da6", nil, exitOK,
			[]string{"RequestApiKey: 18 (ApiVersions)", "CorrelationId: 7", `ClientId: "rdkafka"`},
			[]string{`line 1: skipped "2026-05-01 12:00:00,123 DEBUG [Producer clientId=p1] sent" before and "(21 bytes) traceId=<hex, 8 bytes>" after the hex`}},
		{"two log lines", "12:00 DEBUG sent " + seedHex + "\n12:00 DEBUG sent " + decodeF1 + "\n", nil, exitOK,
			[]string{"frame 1 of 2, line 1, 23 bytes:", "CorrelationId: 16909060", `ClientId: "wire-read"`, "frame 2 of 2, line 2, 21 bytes:", "CorrelationId: 7", `ClientId: "rdkafka"`}, nil},
		{"librdkafka hexdumps", rdkafka, nil, exitOK,
			[]string{"frame 1 of 2, line 3, 21 bytes:", "CorrelationId: 7", `ClientId: "rdkafka"`, "frame 2 of 2, line 7, 23 bytes:", "CorrelationId: 16909060"},
			[]string{`lines 5-6: skipped 2 lines with no dump bytes on them`}},
		{"Netty's prettyHexDump", netty, nil, exitOK, []string{"CorrelationId: 7", `ClientId: "rdkafka"`}, nil},
		{"tcpdump -X: TCP payloads, a request and its response", read("tcpdump-x.txt"), nil, exitOK,
			[]string{"frame 1 of 2, line 17, 28 bytes:", "RequestApiKey: 18 (ApiVersions)", "CorrelationId: 1", `ClientId: "capgen-kafkago"`,
				"frame 2 of 2, line 28, 386 bytes:", "ResponseHeader v0", "CorrelationId: 1", "ApiVersionsResponse v0", "ErrorCode: 0 (NONE)", "ApiKeys [62]", "ApiKey: 0 (Produce)", "MinVersion: 3", "MaxVersion: 13"},
			[]string{"line 2: skipped a packet with no TCP payload (127.0.0.1:35348 → 127.0.0.1:19094)",
				"line 17: the bytes are a packet (127.0.0.1:35348 → 127.0.0.1:19094): decoding its TCP payload, 28 bytes",
				"frame 2 (line 28): decoded as the response to frame 1 (ApiVersions v0, correlation ID 1)"}},
		{"a request and its response in log lines", "DEBUG sent " + decodeF1 + "\nDEBUG received 0000001000000007000000000001001200000003\n" +
			"DEBUG received 0000001000000008000000000001001200000003 (no request 8)\n" +
			// Heartbeat v0 (group "g", generation 1, member "m", corr 9) and its 10-byte response.
			"DEBUG sent 0000001b000c00000000000900077264" + "6b61666b61" + "000167" + "00000001" + "00016d\n" +
			"DEBUG received 00000006000000090000\n", nil, exitData,
			[]string{"frame 1 of 5", "CorrelationId: 7", "frame 2 of 5", "ResponseHeader v0", "CorrelationId: 7", "ApiVersionsResponse v0", "ApiKey: 18 (ApiVersions)", "MaxVersion: 3", "frame 3 of 5", "RequestHeader",
				"frame 4 of 5", "RequestApiKey: 12 (Heartbeat)", `GroupId: "g"`, "GenerationId: 1", `MemberId: "m"`, "frame 5 of 5", "CorrelationId: 9", "HeartbeatResponse v0", "ErrorCode: 0 (NONE)"},
			[]string{"frame 2 (line 2): decoded as the response to frame 1 (ApiVersions v0, correlation ID 7)", "frame 3 (line 3): decode error", "decodes whole as a ApiVersions v0 response",
				"frame 5 (line 5): decoded as the response to frame 4 (Heartbeat v0, correlation ID 9)"}},
		{"tcpdump -XX: an Ethernet frame's TCP payload", read("tcpdump-xx.txt"), nil, exitOK, []string{"CorrelationId: 1", `ClientId: "capgen-kafkago"`}, nil},
		{"a response frame inside a log line", "recv 0000001000000007000000000001001200000003 (20 bytes)", []string{"--frame", "--response", "--api", "ApiVersions", "--version", "0"}, exitOK,
			[]string{"CorrelationId: 7", "ErrorCode: 0", "ApiKey: 18 (ApiVersions)", "MaxVersion: 3"}, nil},
		{"a bare body inside a log line", "body=000000000001001200000003 end", []string{"--response", "--api", "18", "--version", "0"}, exitOK,
			[]string{"ErrorCode: 0", "ApiKey: 18 (ApiVersions)", "MinVersion: 0", "MaxVersion: 3"}, []string{`line 1: skipped "body=" before and "end" after the hex`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runWith(t, tt.in, append([]string{"decode"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", code, tt.code, errOut)
			}
			rest := out
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Errorf("output lacks %q (in order):\n%s", w, out)
					break
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tt.errs {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
	// --json: a document a line, each frame's.
	code, out, errOut := runWith(t, "12:00 DEBUG sent "+seedHex+"\n12:00 DEBUG sent "+decodeF1+"\n", "decode", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != exitOK || len(lines) != 2 || strings.Count(errOut, "skipped") != 2 || !strings.Contains(lines[0], `"wire-read"`) || !strings.Contains(lines[1], `"rdkafka"`) {
		t.Errorf("--json: exit %d, %d lines:\n%s", code, len(lines), out)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("--json: invalid line %q", l)
		}
	}
	// Past 32 frames that did not decode, the rest are counted (and get
	// no hint: each tried every response schema).
	code, _, errOut = runWith(t, seedHex+"\n"+strings.Repeat("0000000600000063ffff\n", 40), "decode")
	if code != exitData || strings.Count(errOut, "kwire: frame ") != 32 || strings.Count(errOut, "kwire: the frame") != 32 ||
		!strings.Contains(errOut, "kwire: … 8 more frames did not decode (40 of 41 in all)") {
		t.Errorf("41 frames, 40 bad: exit %d, stderr %s", code, errOut)
	}
	// Flags no frame can be decoded with are said once, exit 2.
	code, out, errOut = runWith(t, seedHex+"\n"+decodeF1+"\n", "decode", "--response")
	if code != exitUsage || out != "" || strings.Count(errOut, "kwire: ") != 1 {
		t.Errorf("--response alone: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// tcpdumpX dumps a packet as tcpdump -X does, after a heading line: rows
// of 16 bytes in 4-digit groups, then the ASCII column.
func tcpdumpX(heading string, pkt []byte) string {
	var b strings.Builder
	b.WriteString(heading + "\n")
	for off := 0; off < len(pkt); off += 16 {
		row := pkt[off:min(off+16, len(pkt))]
		var h, a strings.Builder
		for i, c := range row {
			if i%2 == 0 && i > 0 {
				h.WriteByte(' ')
			}
			fmt.Fprintf(&h, "%02x", c)
			if c >= 0x20 && c < 0x7f {
				a.WriteByte(c)
			} else {
				a.WriteByte('.')
			}
		}
		fmt.Fprintf(&b, "\t0x%04x:  %-39s  %s\n", off, h.String(), a.String())
	}
	return b.String()
}

// tcpPacket is an IPv4 packet carrying a TCP segment of payload.
func tcpPacket(t *testing.T, seq uint32, payload []byte) []byte {
	t.Helper()
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2)}
	tcp := &layers.TCP{SrcPort: 50000, DstPort: 9092, Seq: seq, ACK: true, PSH: true, Window: 512}
	if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
		t.Fatal(err)
	}
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ip, tcp, gopacket.Payload(payload)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecodeTCPSegments: a frame over two TCP segments, dumped by
// tcpdump -X packet by packet (an ASCII column with '|' in it), is
// decoded whole, the second segment's payload joined to the first; a
// frame whose length the first segment holds is not joined to the next.
func TestDecodeTCPSegments(t *testing.T) {
	frame, _ := hex.DecodeString(seedHex)
	f1, _ := hex.DecodeString(decodeF1)
	pipe := []byte("\x00\x00\x00\x13\x00\x12\x00\x00\x01\x02\x03\x04\x00\x09wire-re|d")
	in := tcpdumpX("12:00:00.000001 IP 10.0.0.1.50000 > 10.0.0.2.9092: Flags [P.], length 10", tcpPacket(t, 1, pipe[:10])) +
		tcpdumpX("12:00:00.000002 IP 10.0.0.1.50000 > 10.0.0.2.9092: Flags [P.], length 13", tcpPacket(t, 11, pipe[10:])) +
		tcpdumpX("12:00:00.000003 IP 10.0.0.1.50000 > 10.0.0.2.9092: Flags [P.], length 21", tcpPacket(t, 24, f1)) +
		tcpdumpX("12:00:00.000004 IP 10.0.0.1.50000 > 10.0.0.2.9092: Flags [P.], length 23", tcpPacket(t, 45, frame))
	code, out, errOut := runWith(t, in, "decode")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	for _, w := range []string{"frame 1 of 3, line 2, 23 bytes:", `ClientId: "wire-re|d"`, "frame 2 of 3, line 12, 21 bytes:", `ClientId: "rdkafka"`, "frame 3 of 3, line 17, 23 bytes:", `ClientId: "wire-read"`} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(errOut, "line 7: the bytes are a packet (10.0.0.1:50000 → 10.0.0.2:9092): its TCP payload, 13 bytes, continues the frame of line 2") {
		t.Errorf("stderr: %s", errOut)
	}
}

// TestResponseHintBounded: a frame over responseHintMax gets no response
// hint, as every response schema is tried on it (a 1.6 MB line of
// "0000ffff00000000", which most schemas read to its end, took 9 s); a
// smaller one gets it.
func TestResponseHintBounded(t *testing.T) {
	frame := func(n int) []byte {
		// SaslAuthenticateResponse v1: ErrorCode 0, ErrorMessage null,
		// AuthBytes of n bytes, SessionLifetimeMs 0.
		b := []byte{0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0xff, 0xff}
		b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		b = append(b, bytes.Repeat([]byte{'z'}, n)...)
		b = append(b, make([]byte, 8)...)
		l := len(b) - 4
		b[0], b[1], b[2], b[3] = byte(l>>24), byte(l>>16), byte(l>>8), byte(l)
		return b
	}
	if h := responseHint(frame(1000)); !strings.Contains(h, "SaslAuthenticate v1") {
		t.Errorf("1000-byte token: hint %q", h)
	}
	if h := responseHint(frame(responseHintMax)); h != "" {
		t.Errorf("%d-byte token: hint %q", responseHintMax, h)
	}
}
