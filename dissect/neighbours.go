package dissect

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
)

// Neighbours: the protocols that share hosts and networks with Kafka
// brokers, named from the first bytes of a connection that is not Kafka,
// so that a skipped connection says what it probably was (kwire read
// --verbose). Each check reads only the few fixed bytes its protocol's
// specification puts first; none decodes anything further. These are
// facts of the other protocols, not Kafka's: they are read with
// encoding/binary, not protocol.Reader.
//
// To add a neighbour: give the layout of what its client (or server)
// sends first and where it is specified, write a check that needs only
// those bytes, add it to neighbours, and a conversation of it to
// TestNeighboursAreNotKafka.

// neighbour is one protocol check: name and what the first bytes b of
// one direction say about it ("" when they are not that protocol).
type neighbour struct {
	name  string
	check func(b []byte) string
}

var neighbours = []neighbour{
	{"ZooKeeper", zooKeeper},
	{"PostgreSQL", postgres},
	{"Redis", redis},
	{"Cassandra", cassandra},
	{"AMQP", amqp},
	{"MQTT", mqtt},
	{"Java RMI", jrmp},
	{"Thrift", thrift},
	{"SSH", ssh},
}

// identify returns the name of the protocol whose first bytes b are and
// a description, or "", "".
func identify(b []byte) (name, detail string) {
	if len(b) == 0 {
		return "", ""
	}
	if isHTTP(b) {
		return "HTTP", httpDetail(b)
	}
	for _, n := range neighbours {
		if d := n.check(b); d != "" {
			return n.name, d
		}
	}
	return "", ""
}

var be = binary.BigEndian

// zooKeeper recognises a ZooKeeper client's ConnectRequest or a server's
// ConnectResponse (zookeeper.jute: proto.ConnectRequest is an int32
// protocolVersion, an int64 lastZxidSeen, an int32 timeOut, an int64
// sessionId and a buffer passwd, then since 3.4 a boolean readOnly;
// ConnectResponse has protocolVersion, timeOut, sessionId, passwd,
// readOnly), each after an int32 length, and the client's ping (an
// RequestHeader of xid -2, type 11, alone in its frame).
func zooKeeper(b []byte) string {
	if len(b) < 12 {
		return ""
	}
	n := int(be.Uint32(b))
	if n == 8 && int32(be.Uint32(b[4:])) == -2 && be.Uint32(b[8:]) == 11 {
		return "ZooKeeper client ping"
	}
	if be.Uint32(b[4:]) != 0 { // protocolVersion 0
		return ""
	}
	// ConnectRequest: passwd's length at 4+4+8+4+8.
	if len(b) >= 32 {
		if pl := int(be.Uint32(b[28:])); pl >= 0 && pl <= 64 && (n == 28+pl || n == 29+pl) {
			return "ZooKeeper client (ConnectRequest)"
		}
	}
	// ConnectResponse: passwd's length at 4+4+4+8.
	if len(b) >= 24 {
		if pl := int(be.Uint32(b[20:])); pl >= 0 && pl <= 64 && (n == 20+pl || n == 21+pl) {
			return "ZooKeeper server (ConnectResponse)"
		}
	}
	return ""
}

// postgres recognises what a PostgreSQL client sends first (PostgreSQL
// documentation, "Frontend/Backend Protocol", Message Formats): an Int32
// length that counts itself, then the protocol version 3.0 (196608) of a
// StartupMessage, or the request codes of SSLRequest (80877103),
// GSSENCRequest (80877104) and CancelRequest (80877102).
func postgres(b []byte) string {
	if len(b) < 8 {
		return ""
	}
	n, code := be.Uint32(b), be.Uint32(b[4:])
	switch {
	case code == 196608 && n >= 9 && n < 10000:
		return "PostgreSQL client (StartupMessage, protocol 3.0)"
	case code == 80877103 && n == 8:
		return "PostgreSQL client (SSLRequest)"
	case code == 80877104 && n == 8:
		return "PostgreSQL client (GSSENCRequest)"
	case code == 80877102 && n == 16:
		return "PostgreSQL client (CancelRequest)"
	}
	return ""
}

// redis recognises a RESP command (Redis serialization protocol
// specification): an array, "*" and its count, CRLF, then a bulk string
// "$" and its length.
func redis(b []byte) string {
	if len(b) < 4 || b[0] != '*' {
		return ""
	}
	i := 1
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 1 || i > 8 || !bytes.HasPrefix(b[i:], []byte("\r\n$")) {
		return ""
	}
	return "Redis client (RESP)"
}

// cassandra recognises a CQL native protocol frame (native_protocol_v4.spec
// section 2; v3 and v5 alike): version (3 to 5; with 0x80 set in a
// response), flags, an int16 stream id, the opcode (a client starts with
// OPTIONS 0x05 or STARTUP 0x01; a server answers SUPPORTED 0x06, READY
// 0x02, AUTHENTICATE 0x03 or ERROR 0x00), then the body's int32 length.
func cassandra(b []byte) string {
	if len(b) < 9 {
		return ""
	}
	v, op, n := b[0], b[4], be.Uint32(b[5:])
	if n > 256<<20 {
		return ""
	}
	switch {
	case v >= 3 && v <= 5 && (op == 0x01 || op == 0x05):
		return fmt.Sprintf("Cassandra client (CQL native protocol v%d)", v)
	case v >= 0x83 && v <= 0x85 && (op == 0x00 || op == 0x02 || op == 0x03 || op == 0x06):
		return fmt.Sprintf("Cassandra server (CQL native protocol v%d)", v&0x7f)
	}
	return ""
}

// amqp recognises the AMQP protocol header (AMQP 0-9-1 section 4.2.2:
// "AMQP" 0 0 9 1; AMQP 1.0 section 2.2: "AMQP", a protocol id, 1 0 0).
func amqp(b []byte) string {
	if len(b) < 8 || !bytes.HasPrefix(b, []byte("AMQP")) {
		return ""
	}
	switch {
	case b[4] == 0 && b[5] == 0 && b[6] == 9:
		return fmt.Sprintf("AMQP 0-9-%d", b[7])
	case b[5] == 1 && b[6] == 0 && b[7] == 0:
		return "AMQP 1.0"
	}
	return ""
}

// mqtt recognises an MQTT CONNECT packet (MQTT 3.1.1 and 5.0 section
// 3.1): packet type 1 (0x10), the remaining length (a varint of 1 to 4
// bytes), then the protocol name as a length-prefixed string, "MQTT" (or
// "MQIsdp" in 3.1), and the protocol level.
func mqtt(b []byte) string {
	if len(b) < 2 || b[0] != 0x10 {
		return ""
	}
	i := 1
	for i < len(b) && i < 5 && b[i]&0x80 != 0 {
		i++
	}
	i++
	for _, name := range []string{"MQTT", "MQIsdp"} {
		p := append([]byte{0, byte(len(name))}, name...)
		if len(b) > i+len(p) && bytes.Equal(b[i:i+len(p)], p) {
			return fmt.Sprintf("MQTT client (CONNECT, protocol level %d)", b[i+len(p)])
		}
	}
	return ""
}

// jrmp recognises Java RMI's transport (Java RMI specification, "RMI
// Wire Protocol"): the client's "JRMI" magic, version 2 and protocol
// StreamProtocol (0x4b), SingleOpProtocol (0x4c) or MultiplexProtocol
// (0x4d); JMX remote connectors use it.
func jrmp(b []byte) string {
	if len(b) >= 7 && bytes.HasPrefix(b, []byte("JRMI")) && be.Uint16(b[4:]) == 2 && b[6] >= 0x4b && b[6] <= 0x4d {
		return "Java RMI (JRMP, e.g. JMX)"
	}
	return ""
}

// thrift recognises an Apache Thrift call, framed (TFramedTransport: an
// int32 frame length first) or not: TBinaryProtocol's strict message
// header, version 0x8001 and the message type (1 call, 4 oneway), or
// TCompactProtocol's protocol id 0x82 and version 1.
func thrift(b []byte) string {
	is := func(h []byte) string {
		switch {
		case len(h) >= 4 && h[0] == 0x80 && h[1] == 0x01 && h[2] == 0 && (h[3] == 1 || h[3] == 4):
			return "binary"
		case len(h) >= 2 && h[0] == 0x82 && h[1]&0x1f == 1 && (h[1]>>5 == 1 || h[1]>>5 == 4):
			return "compact"
		}
		return ""
	}
	if p := is(b); p != "" {
		return "Thrift " + p + " protocol"
	}
	if len(b) >= 8 {
		if p := is(b[4:]); p != "" && be.Uint32(b) < 256<<20 {
			return "Thrift " + p + " protocol (framed)"
		}
	}
	return ""
}

// ssh recognises the SSH identification string (RFC 4253 section 4.2).
func ssh(b []byte) string {
	if bytes.HasPrefix(b, []byte("SSH-")) {
		return "SSH"
	}
	return ""
}

// httpDetail describes an HTTP/1.x message or HTTP/2 preface, with the
// service its path suggests for the REST services around Kafka: Schema
// Registry (/subjects, /schemas, /config, /compatibility, /mode), Kafka
// Connect (/connectors, /connector-plugins) and REST Proxy (/topics,
// /consumers, /brokers, /v3/clusters).
func httpDetail(b []byte) string {
	if bytes.HasPrefix(b, []byte("PRI * HTTP/2")) {
		return "HTTP/2 connection preface (gRPC or another HTTP/2 service)"
	}
	line, _, ended := bytes.Cut(b[:min(len(b), maxRequestLine)], []byte("\r\n"))
	f := strings.Fields(string(line))
	if len(f) < 2 || strings.HasPrefix(f[0], "HTTP/") {
		return "HTTP/1.x"
	}
	// A target that runs to where the bytes held end may be cut short.
	path := httpTarget(f[1], !ended && len(f) == 2)
	for _, s := range []struct{ prefix, service string }{
		{"/subjects", "Schema Registry"}, {"/schemas", "Schema Registry"}, {"/config", "Schema Registry"},
		{"/compatibility", "Schema Registry"}, {"/mode", "Schema Registry"},
		{"/connectors", "Kafka Connect REST"}, {"/connector-plugins", "Kafka Connect REST"},
		{"/topics", "REST Proxy"}, {"/consumers", "REST Proxy"}, {"/brokers", "REST Proxy"}, {"/v3/clusters", "REST Proxy"},
	} {
		if strings.HasPrefix(path.path, s.prefix) {
			return fmt.Sprintf("HTTP/1.x %s %s: probably %s", f[0], path.clip(40), s.service)
		}
	}
	return fmt.Sprintf("HTTP/1.x %s %s", f[0], path.clip(40))
}

// target is an HTTP request-target as shown: its path, with a userinfo
// and a query withheld.
type target struct {
	path     string
	userinfo bool
	rest     byte // '?' or '#' when a query or fragment was withheld, else 0
}

// maxRequestLine is how much of an HTTP message httpDetail reads for
// its request line (8 KiB, the usual servers' limit of one).
const maxRequestLine = 8 << 10

// httpTarget splits an HTTP request-target (RFC 9112 section 3.2) into
// what is shown and what is withheld: the userinfo of an absolute-form
// URL ("http://user:password@host/", RFC 3986 section 3.2.1, or one with
// no scheme, "//user:password@host/") and the query and fragment
// ("?access_token=T&client_secret=S": tokens, API keys and signatures
// travel there) are credentials as often as not, and are withheld whole,
// marked (<redacted>); the path is shown. cut says the target may run
// past the bytes held: an authority with no '@' and no '/' after it
// then may be a userinfo cut before its '@' (a token as the password),
// and is withheld whole.
func httpTarget(t string, cut bool) target {
	var tg target
	if q := strings.IndexAny(t, "?#"); q >= 0 {
		t, tg.rest, cut = t[:q], t[q], false
	}
	start := -1
	if i := strings.Index(t, "://"); i >= 0 {
		start = i + 3
	} else if strings.HasPrefix(t, "//") {
		start = 2
	}
	if start >= 0 {
		auth := t[start:]
		slash := strings.IndexByte(auth, '/')
		if slash >= 0 {
			auth = auth[:slash]
		}
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			t, tg.userinfo = t[:start]+t[start+at+1:], true
		} else if cut && slash < 0 {
			t, tg.userinfo = t[:start], true
		}
	}
	tg.path = t
	return tg
}

// clip is the target shown, cut to n bytes of its path (clip), with the
// parts withheld marked.
func (tg target) clip(n int) string {
	p := clip(tg.path, n)
	if tg.userinfo {
		if i := strings.Index(p, "//"); i >= 0 {
			p = p[:i+2] + "<redacted>@" + p[i+2:]
		}
	}
	if tg.rest != 0 {
		p += string(tg.rest) + "<redacted>"
	}
	return p
}

// clip cuts s to n bytes, marking the cut, with anything but printable
// ASCII shown as '?'.
func clip(s string, n int) string {
	cut := len(s) > n
	b := []byte(s[:min(len(s), n)])
	for i, c := range b {
		if c < 0x20 || c >= 0x7f {
			b[i] = '?'
		}
	}
	if cut {
		return string(b) + "…"
	}
	return string(b)
}
