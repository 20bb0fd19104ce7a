package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/capturetest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary run as "kwire" inside the scripts.
func TestMain(m *testing.M) {
	if os.Getenv(asKwire) != "" {
		mainForTest() // a child process of a test: kwire itself (runKwire)
	}
	testscript.Main(m, map[string]func(){"kwire": main})
}

// TestScripts runs the CLI scripts in testdata/script. Besides the standard
// testscript commands they have:
//
//	exitcode N prog args...   run prog and expect exit status N
//	jsonlines stdout|FILE     every non-empty line is a JSON value (NDJSON)
//	jsondoc stdout|FILE       the whole file is one JSON value
//	everyline stdout|FILE SEL WANT
//	                          every line matching regexp SEL matches WANT
//	                          too, and at least one line matches SEL
//	headbytes SRC N DST       copy the first N bytes of SRC to DST
//	compress CODEC SRC DST    compress SRC into DST (gzip, zstd, xz, lz4,
//	                          bzip2: guard it with [exec:bzip2])
//	tcppcap OUT [link=N] PORT SEG...
//	                          write a pcap of one TCP connection from
//	                          10.0.0.1:40000 to 10.0.0.2:PORT (handshake
//	                          first): SEG is c:HEX (client to broker),
//	                          b:HEX (broker to client), gap:N (N client
//	                          bytes never captured), bgap:N (N broker
//	                          bytes never captured), fin:c or fin:b (a FIN
//	                          from the client or broker) or wait:S (the next
//	                          packets come S seconds later; packets are
//	                          1 ms apart otherwise); link=N writes only
//	                          the header and two packets of link type N
//	pipelinepcap OUT PORT N   write a pcap of one connection on which N
//	                          ApiVersions requests are all sent before
//	                          their N responses
//
// the condition [pcap:NAME], true when pcaps/NAME exists, and $PCAPS, the
// absolute path of the repository's pcaps directory.
func TestScripts(t *testing.T) {
	pcaps, err := filepath.Abs(filepath.Join("..", "..", "pcaps"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv("PCAPS", pcaps)
			env.Setenv("NO_COLOR", "")
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if name, ok := strings.CutPrefix(cond, "pcap:"); ok {
				_, err := os.Stat(filepath.Join(pcaps, name))
				return err == nil, nil
			}
			return false, errors.New("unknown condition " + cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":     cmdExitCode,
			"jsonlines":    func(ts *testscript.TestScript, neg bool, args []string) { cmdJSON(ts, neg, args, true) },
			"jsondoc":      func(ts *testscript.TestScript, neg bool, args []string) { cmdJSON(ts, neg, args, false) },
			"everyline":    cmdEveryLine,
			"headbytes":    cmdHeadBytes,
			"compress":     cmdCompress,
			"tcppcap":      cmdTCPPcap,
			"pipelinepcap": cmdPipelinePcap,
		},
	})
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

func cmdJSON(ts *testscript.TestScript, neg bool, args []string, lines bool) {
	if len(args) != 1 {
		ts.Fatalf("usage: jsonlines|jsondoc stdout|FILE")
	}
	data := ts.ReadFile(args[0])
	var bad error
	if lines {
		sc := bufio.NewScanner(strings.NewReader(data))
		sc.Buffer(nil, 64<<20)
		n := 0
		for sc.Scan() {
			n++
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 && !json.Valid(l) {
				bad = errors.New("line " + strconv.Itoa(n) + " is not JSON")
				break
			}
		}
	} else if !json.Valid([]byte(data)) {
		bad = errors.New("not one JSON document")
	}
	if bad != nil && !neg {
		ts.Fatalf("%s: %v", args[0], bad)
	}
	if bad == nil && neg {
		ts.Fatalf("%s: valid JSON", args[0])
	}
}

func cmdEveryLine(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: everyline stdout|FILE SELECT WANT")
	}
	sel, err := regexp.Compile(args[1])
	ts.Check(err)
	want, err := regexp.Compile(args[2])
	ts.Check(err)
	n := 0
	for _, l := range strings.Split(ts.ReadFile(args[0]), "\n") {
		if !sel.MatchString(l) {
			continue
		}
		n++
		if !want.MatchString(l) {
			ts.Fatalf("%s: line %q does not match %q", args[0], l, args[2])
		}
	}
	if n == 0 {
		ts.Fatalf("%s: no line matches %q", args[0], args[1])
	}
}

func cmdHeadBytes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: headbytes SRC N DST")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	data, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), data[:min(n, len(data))], 0o644))
}

func cmdCompress(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: compress CODEC SRC DST")
	}
	data, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	z, err := capturetest.Compress(args[0], data)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), z, 0o644))
}

// tcpCapture builds a classic pcap (Ethernet, IPv4) of one TCP connection
// from 10.0.0.1:40000 to 10.0.0.2:port, handshake first; packets are 1 ms
// apart unless wait moves the clock.
type tcpCapture struct {
	port   uint16
	buf    []byte
	n      int
	secs   uint32
	seq    [2]uint32 // next sequence number: client, broker
	client [4]byte
	broker [4]byte
}

func pcapHeader(link uint32) []byte {
	le := binary.LittleEndian
	h := make([]byte, 24)
	le.PutUint32(h, 0xa1b2c3d4)
	le.PutUint16(h[4:], 2)
	le.PutUint16(h[6:], 4)
	le.PutUint32(h[16:], 65535)
	le.PutUint32(h[20:], link)
	return h
}

func newTCPCapture(port uint16, handshake bool) *tcpCapture {
	c := &tcpCapture{port: port, buf: pcapHeader(1), secs: 1_700_000_000, seq: [2]uint32{1000, 5000},
		client: [4]byte{10, 0, 0, 1}, broker: [4]byte{10, 0, 0, 2}}
	if !handshake {
		return c
	}
	const syn, ack = 0x02, 0x10
	c.packet(true, syn, nil)
	c.packet(false, syn|ack, nil)
	c.packet(true, ack, nil)
	return c
}

// record appends a pcap record holding pkt.
func (c *tcpCapture) record(pkt []byte) {
	le := binary.LittleEndian
	c.n++
	r := make([]byte, 16)
	le.PutUint32(r, c.secs+uint32(c.n/1000))
	le.PutUint32(r[4:], uint32(c.n%1000*1000))
	le.PutUint32(r[8:], uint32(len(pkt)))
	le.PutUint32(r[12:], uint32(len(pkt)))
	c.buf = append(append(c.buf, r...), pkt...)
}

// packet appends a TCP segment with flags and payload.
func (c *tcpCapture) packet(fromClient bool, flags byte, payload []byte) {
	be := binary.BigEndian
	p := make([]byte, 54, 54+len(payload))
	p[12], p[13] = 0x08, 0x00 // IPv4
	ip := p[14:34]
	ip[0] = 0x45
	be.PutUint16(ip[2:], uint16(40+len(payload)))
	ip[8], ip[9] = 64, 6
	src, dst, sp, dp, d := c.client, c.broker, uint16(40000), c.port, 0
	if !fromClient {
		src, dst, sp, dp, d = c.broker, c.client, dp, sp, 1
	}
	copy(ip[12:], src[:])
	copy(ip[16:], dst[:])
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(be.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	be.PutUint16(ip[10:], ^uint16(sum))
	tcp := p[34:54]
	be.PutUint16(tcp, sp)
	be.PutUint16(tcp[2:], dp)
	be.PutUint32(tcp[4:], c.seq[d])
	be.PutUint32(tcp[8:], c.seq[1-d])
	tcp[12] = 5 << 4
	tcp[13] = flags
	be.PutUint16(tcp[14:], 65535)
	c.seq[d] += uint32(len(payload))
	if flags&0x02 != 0 {
		c.seq[d]++
	}
	c.record(append(p, payload...))
}

// data appends a data segment (PSH, ACK).
func (c *tcpCapture) data(fromClient bool, payload []byte) { c.packet(fromClient, 0x18, payload) }

// stream appends b as segments of at most 1448 bytes.
func (c *tcpCapture) stream(fromClient bool, b []byte) {
	for len(b) > 0 {
		n := min(len(b), 1448)
		c.data(fromClient, b[:n])
		b = b[n:]
	}
}

func cmdTCPPcap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: tcppcap OUT [link=N] [mid] PORT SEG...")
	}
	out, args := args[0], args[1:]
	// mid: no handshake, as a capture that began after the connection
	// opened.
	mid := args[0] == "mid"
	if mid {
		args = args[1:]
	}
	if l, ok := strings.CutPrefix(args[0], "link="); ok {
		link, err := strconv.Atoi(l)
		ts.Check(err)
		c := &tcpCapture{buf: pcapHeader(uint32(link)), secs: 1_700_000_000}
		c.record([]byte{1, 2, 3, 4, 5, 6, 7, 8})
		c.record([]byte{1, 2, 3, 4, 5, 6, 7, 8})
		ts.Check(os.WriteFile(ts.MkAbs(out), c.buf, 0o644))
		return
	}
	port, err := strconv.Atoi(args[0])
	ts.Check(err)
	c := newTCPCapture(uint16(port), !mid)
	for _, seg := range args[1:] {
		kind, val, _ := strings.Cut(seg, ":")
		switch kind {
		case "c", "b":
			data, err := hex.DecodeString(val)
			ts.Check(err)
			c.data(kind == "c", data)
		case "gap", "bgap":
			skip, err := strconv.Atoi(val)
			ts.Check(err)
			c.seq[map[string]int{"gap": 0, "bgap": 1}[kind]] += uint32(skip)
		case "fin":
			c.packet(val == "c", 0x11, nil) // FIN, ACK from the client (c) or broker (b)
		case "wait":
			wait, err := strconv.Atoi(val)
			ts.Check(err)
			c.secs += uint32(wait)
		default:
			ts.Fatalf("tcppcap: bad segment %q", seg)
		}
	}
	ts.Check(os.WriteFile(ts.MkAbs(out), c.buf, 0o644))
}

// cmdPipelinePcap writes a capture of one connection on which the client
// sends N ApiVersions v3 requests (correlation IDs 0 to N-1, client id
// "rdkafka", as librdkafka sends them) before the broker answers any, then
// the N responses, then both sides close (FIN).
func cmdPipelinePcap(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: pipelinepcap OUT PORT N")
	}
	port, err := strconv.Atoi(args[1])
	ts.Check(err)
	n, err := strconv.Atoi(args[2])
	ts.Check(err)
	be := binary.BigEndian
	var req, resp []byte
	for i := range n {
		f := []byte{0, 0, 0, 0, 0, 18, 0, 3}
		f = be.AppendUint32(f, uint32(i))
		f = append(f, 0, 7)
		f = append(f, "rdkafka"...)
		f = append(f, 0, 11)
		f = append(f, "librdkafka"...)
		f = append(f, 6)
		f = append(f, "2.3.0"...)
		f = append(f, 0)
		be.PutUint32(f, uint32(len(f)-4))
		req = append(req, f...)
		r := be.AppendUint32([]byte{0, 0, 0, 0}, uint32(i))
		r = append(r, 0, 0, 2, 0, 18, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0)
		be.PutUint32(r, uint32(len(r)-4))
		resp = append(resp, r...)
	}
	c := newTCPCapture(uint16(port), true)
	c.stream(true, req)
	c.stream(false, resp)
	c.packet(true, 0x11, nil) // FIN, ACK
	c.packet(false, 0x11, nil)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), c.buf, 0o644))
}
