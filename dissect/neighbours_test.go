package dissect

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kwire/kwire/protocol"
)

// The protocols that run beside Kafka brokers, each conversation built
// from its protocol's own layout (the specifications named in
// neighbours.go), in a generated capture on its usual port (not a
// --port): none may be taken for Kafka, and --verbose's skip reason
// names each.

// conversation is what each side sends, in turn, client first.
type conversation struct {
	name, want string // what it is; what the skip reason must say
	port       uint16
	turns      [][]byte // client, server, client, ...
}

func u16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// lenPrefixed prefixes b with its int32 length.
func lenPrefixed(parts ...[]byte) []byte {
	b := cat(parts...)
	return append(u32(uint32(len(b))), b...)
}

// jute strings and buffers: an int32 length and the bytes.
func juteString(s string) []byte { return append(u32(uint32(len(s))), s...) }

func neighbourConversations() []conversation {
	// ZooKeeper (zookeeper.jute): ConnectRequest and ConnectResponse,
	// then a ping and a getChildren with their replies.
	zk := conversation{name: "ZooKeeper", want: "ZooKeeper client (ConnectRequest)", port: 2181, turns: [][]byte{
		lenPrefixed(u32(0), u64(0), u32(30000), u64(0), juteString(string(make([]byte, 16))), []byte{0}),
		lenPrefixed(u32(0), u32(30000), u64(0x1000001a2b3c4d5e), juteString("0123456789abcdef"), []byte{0}),
		lenPrefixed(u32(0xfffffffe), u32(11)),                              // ping: xid -2, type 11
		lenPrefixed(u32(0xfffffffe), u64(0x100), u32(0)),                   // ReplyHeader: xid, zxid, err
		lenPrefixed(u32(1), u32(8), juteString("/brokers/ids"), []byte{0}), // getChildren
		lenPrefixed(u32(1), u64(0x101), u32(0), u32(3), juteString("1"), juteString("2"), juteString("3")),
	}}
	http := func(name, want string, port uint16, req, body string) conversation {
		return conversation{name: name, want: want, port: port, turns: [][]byte{
			[]byte(req),
			[]byte("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + itoa(len(body)) + "\r\n\r\n" + body),
		}}
	}
	sr := http("Schema Registry", "HTTP/1.x GET /subjects: probably Schema Registry", 8081,
		"GET /subjects HTTP/1.1\r\nHost: schema-registry:8081\r\nAccept: application/vnd.schemaregistry.v1+json\r\n\r\n", `["orders-value"]`)
	connect := http("Kafka Connect REST", "HTTP/1.x POST /connectors: probably Kafka Connect REST", 8083,
		"POST /connectors HTTP/1.1\r\nHost: connect:8083\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n"+
			`{"name":"sink","config":{"connector.class":"X"}}`, `{"name":"sink"}`)
	// Java RMI (JRMP): magic, version 2, StreamProtocol; ProtocolAck with
	// the client's host and port; the client's endpoint; a Call with a
	// Java serialization stream.
	rmi := conversation{name: "JMX/RMI", want: "Java RMI (JRMP, e.g. JMX)", port: 1099, turns: [][]byte{
		cat([]byte("JRMI"), u16(2), []byte{0x4b}),
		cat([]byte{0x4e}, u16(9), []byte("10.0.0.1"), []byte{'0'}, u32(40000)),
		cat(u16(8), []byte("10.0.0.1"), u32(0), []byte{0x50, 0xac, 0xed, 0x00, 0x05, 0x77, 0x22}, make([]byte, 34)),
	}}
	// PostgreSQL: SSLRequest, 'N', then the StartupMessage.
	startup := cat(u32(196608), []byte("user\x00kafka\x00database\x00metrics\x00\x00"))
	pg := conversation{name: "Postgres", want: "PostgreSQL client (SSLRequest)", port: 5432, turns: [][]byte{
		cat(u32(8), u32(80877103)),
		[]byte("N"),
		cat(u32(uint32(4+len(startup))), startup),
	}}
	// Redis (RESP): PING, +PONG, GET.
	rd := conversation{name: "Redis", want: "Redis client (RESP)", port: 6379, turns: [][]byte{
		[]byte("*1\r\n$4\r\nPING\r\n"), []byte("+PONG\r\n"), []byte("*2\r\n$3\r\nGET\r\n$6\r\norders\r\n"), []byte("$-1\r\n"),
	}}
	// Cassandra (CQL native protocol v4): OPTIONS, SUPPORTED, STARTUP, READY.
	cqlStr := func(s string) []byte { return append(u16(uint16(len(s))), s...) }
	supported := cat(u16(1), cqlStr("CQL_VERSION"), u16(1), cqlStr("3.4.5"))
	startupBody := cat(u16(1), cqlStr("CQL_VERSION"), cqlStr("3.0.0"))
	cql := conversation{name: "Cassandra", want: "Cassandra client (CQL native protocol v4)", port: 9042, turns: [][]byte{
		cat([]byte{0x04, 0, 0, 0, 0x05}, u32(0)),
		cat([]byte{0x84, 0, 0, 0, 0x06}, u32(uint32(len(supported))), supported),
		cat([]byte{0x04, 0, 0, 1, 0x01}, u32(uint32(len(startupBody))), startupBody),
		cat([]byte{0x84, 0, 0, 1, 0x02}, u32(0)),
	}}
	// AMQP 0-9-1: the protocol header; Connection.Start (a method frame:
	// type 1, channel 0, size, class 10, method 10, versions 0-9, ...).
	start := cat(u16(10), u16(10), []byte{0, 9}, u32(0), u32(5), []byte("PLAIN"), u32(5), []byte("en_US"))
	amq := conversation{name: "AMQP", want: "AMQP 0-9-1", port: 5672, turns: [][]byte{
		[]byte("AMQP\x00\x00\x09\x01"),
		cat([]byte{1}, u16(0), u32(uint32(len(start))), start, []byte{0xce}),
	}}
	// MQTT 3.1.1: CONNECT (clean session, keep-alive 60, client id), CONNACK.
	vh := cat(u16(4), []byte("MQTT"), []byte{4, 0x02}, u16(60), u16(10), []byte("kwire-test"))
	mq := conversation{name: "MQTT", want: "MQTT client (CONNECT, protocol level 4)", port: 1883, turns: [][]byte{
		cat([]byte{0x10, byte(len(vh))}, vh), {0x20, 2, 0, 0},
	}}
	// gRPC: the HTTP/2 preface, a SETTINGS frame, the server's SETTINGS.
	grpc := conversation{name: "gRPC/HTTP2", want: "HTTP/2 connection preface (gRPC or another HTTP/2 service)", port: 50051, turns: [][]byte{
		cat([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), []byte{0, 0, 0, 4, 0}, u32(0)),
		cat([]byte{0, 0, 6, 4, 0}, u32(0), u16(3), u32(100)),
	}}
	// Thrift, framed binary: a call of getName, seqid 1, no arguments;
	// the reply.
	call := cat([]byte{0x80, 0x01, 0x00, 0x01}, juteString("getName"), u32(1), []byte{0})
	reply := cat([]byte{0x80, 0x01, 0x00, 0x02}, juteString("getName"), u32(1), []byte{11}, u16(0), juteString("kwire"), []byte{0, 0})
	th := conversation{name: "Thrift", want: "Thrift binary protocol (framed)", port: 9090, turns: [][]byte{
		lenPrefixed(call), lenPrefixed(reply),
	}}
	return []conversation{zk, sr, connect, rmi, pg, rd, cql, amq, mq, grpc, th}
}

func itoa(n int) string { return string(appendInt(nil, n)) }
func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}

// writeConversations writes a capture with one TCP connection per
// conversation (handshake, the turns in segments of at most 1448 bytes,
// FIN both ways), from 10.0.0.1:40000+i to 10.0.0.2:port.
func writeConversations(t *testing.T, convs []conversation) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "neighbours.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := pcapgo.NewWriter(f)
	if err := w.WriteFileHeader(65535, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for i, cv := range convs {
		client := [4]byte{10, 0, 0, 1}
		server := [4]byte{10, 0, 0, 2}
		cport := uint16(40000 + i)
		seq := [2]uint32{1000, 9000}
		send := func(fromClient bool, syn, ack, fin bool, payload []byte) {
			src, dst, sp, dp, d := client, server, cport, cv.port, 0
			if !fromClient {
				src, dst, sp, dp, d = server, client, cv.port, cport, 1
			}
			eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4}
			ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IP(src[:]), DstIP: net.IP(dst[:])}
			tcp := &layers.TCP{SrcPort: layers.TCPPort(sp), DstPort: layers.TCPPort(dp), Seq: seq[d], Ack: seq[1-d],
				SYN: syn, ACK: ack, FIN: fin, PSH: len(payload) > 0, Window: 65535}
			if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
				t.Fatal(err)
			}
			buf := gopacket.NewSerializeBuffer()
			if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
				eth, ip, tcp, gopacket.Payload(payload)); err != nil {
				t.Fatal(err)
			}
			seq[d] += uint32(len(payload))
			if syn || fin {
				seq[d]++
			}
			ts = ts.Add(time.Millisecond)
			b := buf.Bytes()
			if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(b), Length: len(b)}, b); err != nil {
				t.Fatal(err)
			}
		}
		send(true, true, false, false, nil)
		send(false, true, true, false, nil)
		send(true, false, true, false, nil)
		for k, turn := range cv.turns {
			for len(turn) > 0 {
				n := min(len(turn), 1448)
				send(k%2 == 0, false, true, false, turn[:n])
				turn = turn[n:]
			}
		}
		send(true, false, true, true, nil)
		send(false, false, true, true, nil)
	}
	return path
}

func TestNeighboursAreNotKafka(t *testing.T) {
	convs := neighbourConversations()
	path := writeConversations(t, convs)
	r := dissectFileOpts(t, path, Options{Detect: true})
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.sum.Kafka != 0 || len(r.sink.ex) != 0 || r.sum.Skipped != len(convs) {
		t.Fatalf("%d Kafka connections, %d exchanges, %d skipped of %d", r.sum.Kafka, len(r.sink.ex), r.sum.Skipped, len(convs))
	}
	skipped := r.sink.events(EventSkipped)
	for i, cv := range convs {
		var ev *Event
		for _, e := range skipped {
			if e.Conn.Index == i {
				ev = e
			}
		}
		if ev == nil || !strings.Contains(ev.Detail, cv.want) {
			t.Errorf("%s: skipped %+v, want the reason to say %q", cv.name, ev, cv.want)
		}
	}
}

// A header that parses does not make a connection off the port list
// Kafka when its body does not decode; on a --port connection the same
// bytes are Kafka whose body fails to decode, paired as before.
func TestZooKeeperOnItsPortAndOnAKafkaPort(t *testing.T) {
	zk := neighbourConversations()[0]
	// The ConnectRequest's first bytes are a Produce v0 header.
	if v, _ := requestVerdict(zk.turns[0], DefaultMaxFrame, true); v != vYes {
		t.Fatalf("the test wants a ConnectRequest whose header parses as Kafka's: %v", v)
	}
	path := writeConversations(t, []conversation{zk})
	on := dissectFileOpts(t, path, Options{Ports: []uint16{2181}})
	if on.sum.Kafka != 1 || on.sum.DecodeErrors == 0 {
		t.Errorf("--port 2181: %d Kafka, %d decode errors", on.sum.Kafka, on.sum.DecodeErrors)
	}
}

// Random length-prefixed streams are not Kafka: fully random bytes after
// a length, and random bodies after a header that parses (a known API
// key and version, a correlation ID and a printable client id).
func TestRandomLengthPrefixedStreamsAreNotKafka(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	apis := protocol.APIs()
	var convs []conversation
	for i := range 300 {
		var turns [][]byte
		for range 2 {
			var frame []byte
			if i%2 == 0 {
				frame = lenPrefixed(randBytes(rng, 8+rng.IntN(300)))
			} else {
				a := apis[rng.IntN(len(apis))]
				ver := a.Versions.Min + int16(rng.IntN(int(a.Versions.Max-a.Versions.Min)+1))
				frame = reqFrame(a.Key, ver, int32(rng.IntN(1000)), randBytes(rng, 16+rng.IntN(300)))
			}
			turns = append(turns, frame, lenPrefixed(randBytes(rng, 8+rng.IntN(100))))
		}
		convs = append(convs, conversation{port: uint16(20000 + i), turns: turns})
	}
	path := writeConversations(t, convs)
	r := dissectFileOpts(t, path, Options{Detect: true})
	if r.sum.Kafka != 0 || len(r.sink.ex) != 0 {
		for _, e := range r.sink.events(EventOpen) {
			t.Logf("taken for Kafka: stream %d: %x", e.Conn.Index, convs[e.Conn.Index].turns[0][:min(24, len(convs[e.Conn.Index].turns[0]))])
		}
		t.Fatalf("%d of %d random streams taken for Kafka", r.sum.Kafka, len(convs))
	}
	// The headers that parse were rejected for their bodies.
	bodies := 0
	for _, e := range r.sink.events(EventSkipped) {
		if strings.Contains(e.Detail, "whose body does not decode") {
			bodies++
		}
	}
	if bodies < 100 {
		t.Errorf("only %d streams rejected for their body", bodies)
	}
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// TestHTTPDetailWithholdsCredentials: the skipped HTTP connection's
// detail (read --verbose) shows the request's method and path, not the
// userinfo of an absolute-form URL nor the query, where tokens and API
// keys travel (both were shown: an adversarial trial).
func TestHTTPDetailWithholdsCredentials(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"GET /topics?access_token=Qz-TOKEN-1&x=1 HTTP/1.1", "HTTP/1.x GET /topics?<redacted>: probably REST Proxy"},
		{"GET http://admin:Qz-PASS-2@registry:8081/subjects HTTP/1.1", "HTTP/1.x GET http://<redacted>@registry:8081/subjects"},
		{"POST /oauth/token#client_secret=Qz-CS-3 HTTP/1.1", "HTTP/1.x POST /oauth/token#<redacted>"},
		{"GET /subjects/orders-value/versions HTTP/1.1", "HTTP/1.x GET /subjects/orders-value/versions: probably Schema Registry"},
		{"GET http://registry:8081/subjects HTTP/1.1", "HTTP/1.x GET http://registry:8081/subjects"},
		{"GET //admin:Qz-PASS-4@registry:8081/subjects HTTP/1.1", "HTTP/1.x GET //<redacted>@registry:8081/subjects"},
		// A token as the password, longer than the 256 bytes the
		// request line was read from: its '@' was past them and the
		// token's start was shown.
		{"GET http://token:Qz-" + strings.Repeat("T", 300) + "@registry:8081/subjects HTTP/1.1", "HTTP/1.x GET http://<redacted>@registry:8081/subjects"},
	} {
		got := httpDetail([]byte(c.line + "\r\nHost: x\r\n\r\n"))
		if got != c.want || strings.Contains(got, "Qz-") {
			t.Errorf("%q: detail %q, want %q", c.line, got, c.want)
		}
	}
	// Past the 8 KiB read, or where the bytes held end, an authority
	// with no '@' yet is withheld whole: it may be a userinfo cut short.
	for _, b := range []string{"GET http://token:Qz-" + strings.Repeat("T", 9000) + "@registry/ HTTP/1.1\r\n", "GET http://token:Qz-TTTT"} {
		if got := httpDetail([]byte(b)); got != "HTTP/1.x GET http://<redacted>@" {
			t.Errorf("%.40q: detail %q", b, got)
		}
	}
}
