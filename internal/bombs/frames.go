package bombs

import (
	"encoding/binary"
	"io"
	"net"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Partition is one partition's records in a Produce request or a Fetch
// response.
type Partition struct {
	Topic   string
	Index   int32
	Records []byte // record batches or a legacy message set
}

type enc struct{ b []byte }

func (e *enc) i8(v int8)    { e.b = append(e.b, byte(v)) }
func (e *enc) i16(v int16)  { e.b = binary.BigEndian.AppendUint16(e.b, uint16(v)) }
func (e *enc) i32(v int32)  { e.b = binary.BigEndian.AppendUint32(e.b, uint32(v)) }
func (e *enc) i64(v int64)  { e.b = binary.BigEndian.AppendUint64(e.b, uint64(v)) }
func (e *enc) str(s string) { e.i16(int16(len(s))); e.b = append(e.b, s...) }
func (e *enc) bytes(b []byte) {
	e.i32(int32(len(b)))
	e.b = append(e.b, b...)
}

// frame prefixes e's bytes with their length.
func (e *enc) frame() []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(e.b))), e.b...)
}

func requestHeader(key, version int16, corr int32) *enc {
	e := &enc{}
	e.i16(key)
	e.i16(version)
	e.i32(corr)
	e.str("bombs")
	return e
}

// byTopic groups partitions by topic, in order of first appearance.
func byTopic(parts []Partition) [][]Partition {
	var out [][]Partition
	for _, p := range parts {
		if n := len(out); n > 0 && out[n-1][0].Topic == p.Topic {
			out[n-1] = append(out[n-1], p)
			continue
		}
		out = append(out, []Partition{p})
	}
	return out
}

// ProduceRequest is a Produce request frame (v3 for record batches, v2
// for legacy message sets; acks 1; ProduceRequest.json).
func ProduceRequest(version int16, corr int32, parts []Partition) []byte {
	e := requestHeader(0, version, corr)
	if version >= 3 {
		e.i16(-1) // TransactionalId null
	}
	e.i16(1)     // Acks
	e.i32(30000) // TimeoutMs
	topics := byTopic(parts)
	e.i32(int32(len(topics)))
	for _, t := range topics {
		e.str(t[0].Topic)
		e.i32(int32(len(t)))
		for _, p := range t {
			e.i32(p.Index)
			e.bytes(p.Records)
		}
	}
	return e.frame()
}

// ProduceResponse answers ProduceRequest (v2 and v3 have the same body).
func ProduceResponse(corr int32, parts []Partition) []byte {
	e := &enc{}
	e.i32(corr)
	topics := byTopic(parts)
	e.i32(int32(len(topics)))
	for _, t := range topics {
		e.str(t[0].Topic)
		e.i32(int32(len(t)))
		for _, p := range t {
			e.i32(p.Index)
			e.i16(0)  // ErrorCode
			e.i64(0)  // BaseOffset
			e.i64(-1) // LogAppendTimeMs
		}
	}
	e.i32(0) // ThrottleTimeMs
	return e.frame()
}

// FetchRequest is a Fetch v4 request for parts' partitions.
func FetchRequest(corr int32, parts []Partition) []byte {
	e := requestHeader(1, 4, corr)
	e.i32(-1)       // ReplicaId
	e.i32(500)      // MaxWaitMs
	e.i32(1)        // MinBytes
	e.i32(52428800) // MaxBytes
	e.i8(0)         // IsolationLevel
	topics := byTopic(parts)
	e.i32(int32(len(topics)))
	for _, t := range topics {
		e.str(t[0].Topic)
		e.i32(int32(len(t)))
		for _, p := range t {
			e.i32(p.Index)
			e.i64(0)       // FetchOffset
			e.i32(1048576) // PartitionMaxBytes
		}
	}
	return e.frame()
}

// FetchResponse is a Fetch v4 response carrying parts' records
// (FetchResponse.json).
func FetchResponse(corr int32, parts []Partition) []byte {
	e := &enc{}
	e.i32(corr)
	e.i32(0) // ThrottleTimeMs
	topics := byTopic(parts)
	e.i32(int32(len(topics)))
	for _, t := range topics {
		e.str(t[0].Topic)
		e.i32(int32(len(t)))
		for _, p := range t {
			e.i32(p.Index)
			e.i16(0)  // ErrorCode
			e.i64(1)  // HighWatermark
			e.i64(1)  // LastStableOffset
			e.i32(-1) // AbortedTransactions: null
			e.bytes(p.Records)
		}
	}
	return e.frame()
}

// Exchange is a request and its response (nil: none).
type Exchange struct {
	Request, Response []byte
}

// Broker and client addresses of the capture's one connection.
var (
	ClientAddr = &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 40000}
	BrokerAddr = &net.TCPAddr{IP: net.IPv4(10, 0, 0, 2), Port: 9092}
)

// maxSegment is the TCP payload of each packet (as on loopback, where
// the MTU is 65536).
const maxSegment = 65000

// WritePcap writes a classic pcap of one TCP connection from ClientAddr
// to BrokerAddr (handshake first, FIN last) carrying the exchanges in
// order, packets 1 ms apart.
func WritePcap(w io.Writer, exs []Exchange) error {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(262144, layers.LinkTypeEthernet); err != nil {
		return err
	}
	c := &conn{pw: pw, t: time.Unix(1700000000, 0).UTC(), seq: [2]uint32{1000, 5000}}
	if err := c.handshake(); err != nil {
		return err
	}
	for _, ex := range exs {
		if err := c.send(0, ex.Request); err != nil {
			return err
		}
		if ex.Response != nil {
			if err := c.send(1, ex.Response); err != nil {
				return err
			}
		}
	}
	return c.fin()
}

// WriteOpenConnections writes a classic pcap of n TCP connections to
// BrokerAddr, each from its own client address (11.(i>>16).(i>>8).i,
// port 40000), each a handshake and then ex, none closed:
// the capture of a broker's many clients whose ends were not captured,
// or of a SYN flood. Packets are 1 ms apart.
func WriteOpenConnections(w io.Writer, n int, ex Exchange) error {
	pw := pcapgo.NewWriter(w)
	if err := pw.WriteFileHeader(262144, layers.LinkTypeEthernet); err != nil {
		return err
	}
	t := time.Unix(1700000000, 0).UTC()
	for i := range n {
		client := &net.TCPAddr{IP: net.IPv4(11, byte(i>>16), byte(i>>8), byte(i)), Port: 40000}
		c := &conn{pw: pw, t: t, seq: [2]uint32{1000, 5000}, client: client}
		if err := c.handshake(); err != nil {
			return err
		}
		if err := c.send(0, ex.Request); err != nil {
			return err
		}
		if ex.Response != nil {
			if err := c.send(1, ex.Response); err != nil {
				return err
			}
		}
		t = c.t
	}
	return nil
}

type conn struct {
	pw     *pcapgo.Writer
	t      time.Time
	seq    [2]uint32 // next sequence number: client, broker
	buf    gopacket.SerializeBuffer
	client *net.TCPAddr // nil: ClientAddr
}

func (c *conn) packet(dir int, flags func(*layers.TCP), payload []byte) error {
	src, dst := ClientAddr, BrokerAddr
	if c.client != nil {
		src = c.client
	}
	if dir == 1 {
		src, dst = dst, src
	}
	eth := &layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, byte(1 + dir)}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, byte(2 - dir)}, EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: src.IP.To4(), DstIP: dst.IP.To4()}
	tcp := &layers.TCP{SrcPort: layers.TCPPort(src.Port), DstPort: layers.TCPPort(dst.Port), Seq: c.seq[dir], Ack: c.seq[1-dir], Window: 65535}
	tcp.ACK = true
	if flags != nil {
		flags(tcp)
	}
	tcp.SetNetworkLayerForChecksum(ip)
	if c.buf == nil {
		c.buf = gopacket.NewSerializeBuffer()
	}
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(c.buf, opts, eth, ip, tcp, gopacket.Payload(payload)); err != nil {
		return err
	}
	data := c.buf.Bytes()
	c.t = c.t.Add(time.Millisecond)
	c.seq[dir] += uint32(len(payload))
	if tcp.SYN || tcp.FIN {
		c.seq[dir]++
	}
	return c.pw.WritePacket(gopacket.CaptureInfo{Timestamp: c.t, CaptureLength: len(data), Length: len(data)}, data)
}

func (c *conn) handshake() error {
	if err := c.packet(0, func(t *layers.TCP) { t.SYN, t.ACK = true, false; t.Ack = 0 }, nil); err != nil {
		return err
	}
	if err := c.packet(1, func(t *layers.TCP) { t.SYN = true }, nil); err != nil {
		return err
	}
	return c.packet(0, nil, nil)
}

func (c *conn) send(dir int, b []byte) error {
	for len(b) > 0 {
		n := min(len(b), maxSegment)
		if err := c.packet(dir, func(t *layers.TCP) { t.PSH = n == len(b) }, b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func (c *conn) fin() error {
	if err := c.packet(0, func(t *layers.TCP) { t.FIN = true }, nil); err != nil {
		return err
	}
	if err := c.packet(1, func(t *layers.TCP) { t.FIN = true }, nil); err != nil {
		return err
	}
	return c.packet(0, nil, nil)
}
