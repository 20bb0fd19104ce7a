// Package reassembly turns captured packets into ordered TCP byte streams.
//
// It reads pcap and pcapng files (optionally gzip-compressed) or a live
// packet source, decodes link, IP and TCP layers, and rebuilds each
// connection's two byte streams with github.com/gopacket/gopacket/reassembly.
// It knows nothing about Kafka: consumers implement Handler and receive
// in-order bytes, gaps and closes, synchronously, in capture order.
package reassembly

import (
	"net/netip"
	"time"
)

// Dir is the direction of bytes on a connection, relative to the first
// packet seen on it: AtoB flows from Conn.A to Conn.B.
type Dir uint8

// Directions.
const (
	AtoB Dir = iota
	BtoA
)

// Conn identifies one TCP connection.
type Conn struct {
	// Index numbers connections from 0 in the order their first packet
	// appears, as Wireshark's tcp.stream does. A SYN on a 4-tuple whose
	// connection was closed (or that carries a new initial sequence number)
	// starts a new connection with a new Index. With Options.Filter set,
	// only connections that pass the filter are numbered. ReadFiles numbers
	// each file from 0 unless Options.Concatenate is set.
	Index int
	// File is the index, in the paths given to ReadFiles, of the file that
	// holds the connection's first packet (0 for Run).
	File int
	// A is the sender of the first packet seen (the client when the SYN was
	// captured), B its peer.
	A, B netip.AddrPort
	// SawSYN is true when the connection's SYN was in the capture.
	SawSYN bool
	// Stats counts per connection, filled in as packets arrive.
	Stats ConnStats
}

// ConnStats are per-connection packet counters.
type ConnStats struct {
	Packets         int // TCP packets of the connection, both directions
	Retransmissions int // segments carrying bytes that were already delivered (all or some)
	OutOfOrder      int // segments that arrived ahead of a hole and were buffered
	Gaps            int // Gap calls
	GapBytes        int64
	Bytes           [2]int64 // bytes delivered by Data, indexed by Dir
}

// Chunk is a contiguous piece of one direction's byte stream that came from
// one captured packet.
type Chunk struct {
	Data  []byte    // valid only during the callback
	Time  time.Time // capture time of the packet
	Frame int64     // 1-based packet number in the capture, as Wireshark numbers frames
	// Seq is the TCP sequence number of Data[0].
	Seq uint32
	// Offset is the position of Data[0] in this direction's stream: 0 is
	// the first byte after the SYN, or the first byte seen when the capture
	// starts mid-connection. Gaps count.
	Offset int64
}

// Close reasons passed to Handler.Close.
const (
	CloseFIN    = "fin"            // both directions ended with FIN
	CloseRST    = "rst"            // a RST ended the connection
	CloseIdle   = "idle"           // no packet for Options.IdleTimeout
	CloseReused = "reused"         // a SYN with a new sequence number reused the 4-tuple
	CloseEOF    = "end of capture" // the input ended with the connection open
)

// Handler receives the reassembled streams. All calls happen on one
// goroutine, in capture order.
type Handler interface {
	// Open is called before the first Data, Gap or Close of a connection.
	Open(c *Conn)
	// Data delivers the next in-order bytes of direction d.
	Data(c *Conn, d Dir, ch Chunk)
	// Gap reports n bytes of direction d that were never captured (lost
	// segments, snap-length cuts, a capture starting mid-stream is not a
	// gap). The next Data follows the hole. n is -1 when unknown.
	Gap(c *Conn, d Dir, n int64, t time.Time)
	// Close reports the end of a connection: FIN/RST seen, idle timeout,
	// 4-tuple reuse, or the end of the capture; reason is one of the Close*
	// constants and t the capture time of the connection's last packet.
	// No call for c follows.
	Close(c *Conn, reason string, t time.Time)
}
