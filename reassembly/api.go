// Package reassembly turns captured packets into ordered TCP byte streams.
//
// It reads pcap and pcapng files with gopacket's readers
// (github.com/gopacket/gopacket/pcapgo: Reader and NgReader), behind thin
// shims of kwire's that check each record and block before the reader
// sees it (capfile.go, pcap.go, pcapng.go), optionally compressed with
// gzip, zstd, xz, bzip2 or lz4 (compress.go; everything is detected by
// magic number, never by name; "-" is standard input), or any
// PacketSource, such as a live capture. It decodes Ethernet (with
// 802.1Q/QinQ tags), Linux cooked capture v1 and v2, BSD loopback (NULL,
// either byte order, and LOOP) and raw IPv4/IPv6 link types, IPv4 and
// IPv6 with extension headers, the tunnels of overlay networks and mirror
// ports (IP in IP, GRE, ERSPAN, VXLAN, Geneve: tunnel.go), and rebuilds
// both byte streams of every TCP connection, under its inner addresses
// and ports, with github.com/gopacket/gopacket/reassembly. It knows
// nothing about Kafka.
//
// # Capture files
//
// A file cut short or damaged anywhere (file header, record or block
// header, packet data, options, a compressed stream) ends with a
// *FileError whose text says where, in words; every packet before the
// problem is delivered: the shims read each record or block whole, and
// check its lengths, before pcapgo's reader is given it, so the reader
// never reads past a cut or a lying length. The departures from the
// formats that libpcap and Wireshark accept (a captured length above the
// original length or the snap length, swapped lengths of old pcap
// versions, pcapng sections of another version) are read and counted
// once per file in FileInfo.Quirks. The content of pcapng Decryption
// Secrets Blocks goes to Options.Secrets. A packet of a pcapng Simple
// Packet Block has no timestamp: its time is the zero time.Time.
//
// # Contract
//
// Consumers implement Handler. All calls are made on one goroutine, the
// one that called Run or ReadFiles, one at a time, in capture order: Open,
// then Data and Gap for either direction in sequence order, then exactly
// one Close. Each direction's bytes arrive once, in order:
// retransmissions and overlaps are dropped (and counted), out-of-order
// segments are held until the hole before them is filled. A hole that
// cannot be filled — the peer acknowledged the missing bytes, or they
// waited longer than Options.BufferTimeout, or the buffer limits were
// reached, or the input ended — is reported with Gap and its exact size,
// never papered over; so are payload bytes cut by the snap length (to a
// SnapHandler as Snapped) and holes the buffer limits gave up (to a
// BudgetHandler as GivenUp).
// Captures that start mid-connection are accepted: the first byte seen
// starts the stream.
//
// Chunk.Data aliases buffers that are reused: it is valid only during the
// Data call. A *Conn stays valid (and its Stats keep counting) after Close.
//
// Every byte is attributed to the packet that carried it: Chunk.Frame is
// the 1-based frame number as Wireshark shows it and Chunk.Time its capture
// time, also when the packet was buffered and delivered later.
//
// # Goroutines
//
// Unless Options.Synchronous is set (or GOMAXPROCS is 1), Run and
// ReadFiles work as a pipeline of three goroutines: one reads and decodes packets (link, IP with
// defragmentation, TCP header) in batches, one runs the reassembly and
// records the handler's calls in batches, and the caller's replays them on
// the Handler. Run and ReadFiles return after the last call. The calls,
// their order and their arguments are those of the synchronous mode; only
// the *Conn differs: the handler is given a copy that belongs to its
// goroutine, whose Stats and SawSYN are set, before each call, to their
// values when the call was made (and, after Run or ReadFiles returns, to
// the final counts). Options.Filter and the PacketSource are called on the
// other goroutines (one at a time). A panic there, or in the handler, ends
// both goroutines and reaches the caller. With a source other than a
// capture file (a live capture), packets go on as soon as the next stage
// is idle, without waiting for a batch to fill.
//
// # Memory
//
// Memory depends on the number of open connections and on the buffered
// out-of-order data (bounded by Options.MaxBufferedPagesPerConn and
// MaxBufferedPagesTotal), not on the size of the capture. Besides, IP
// fragments waiting for the rest of their datagram take at most
// Options.MaxFragmentMemory, a compressed file's decompressor at most
// Options.MaxCaptureWindow (zstd, xz; the other codecs' windows are a few
// MiB at most by their formats), and the reader one read buffer of
// 256 KiB plus the largest record read (at most 64 MiB, however long a
// record claims to be: only bytes really there are held), and pcapgo's
// reader a packet buffer of the file's snap length (at most 256 KiB, or
// the largest packet) and 4 KiB. Closed
// connections are forgotten a few minutes (capture time) after their
// close; Options.IdleTimeout bounds connections whose end was not captured.
// The pipeline (see Goroutines) holds at most 6 packet batches of 320 KiB
// and 4 batches of recorded calls (about 256 KiB of Data each) in flight.
//
// # Several files
//
// ReadFiles treats each file as a capture of its own unless
// Options.Concatenate is set: see ReadFiles.
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
	// starts a new connection with a new Index. Other packets on the
	// 4-tuple of a connection closed by FIN or RST stay with it, also once
	// it is forgotten (4 minutes after its last packet): without payload
	// they open nothing, with payload they open a new Conn under the same
	// Index (the one case of an Index seen twice). A connection closed by
	// Options.IdleTimeout is not remembered. With Options.Filter set,
	// only connections that pass the filter are numbered. ReadFiles numbers
	// each file from 0 unless Options.Concatenate is set.
	Index int
	// File is the index, in the paths given to ReadFiles, of the file that
	// holds the connection's first packet (0 for Run).
	File int
	// A is the sender of the first packet seen (the client when the SYN was
	// captured), or its receiver when that was a SYN-ACK (the client: the
	// SYN was not captured, or after it); B its peer.
	A, B netip.AddrPort
	// SawSYN is true when the connection's SYN was in the capture.
	SawSYN bool
	// Stats counts per connection, filled in as packets arrive.
	Stats ConnStats
}

// ConnStats are per-connection packet counters.
type ConnStats struct {
	Packets         int      // TCP packets of the connection, both directions
	Retransmissions int      // segments carrying bytes that were already delivered (all or some)
	Conflicts       int      // of the Retransmissions, those whose bytes differ from those delivered (ConflictHandler)
	OutOfOrder      int      // segments that arrived ahead of a hole and were buffered
	Gaps            int      // Gap calls
	GapBytes        int64    // bytes lost in gaps of known size, both directions
	GivenUp         int      // of the Gaps, holes the out-of-order budget gave up (BudgetHandler): maybe captured later, not waited for
	Bytes           [2]int64 // bytes delivered by Data, indexed by Dir
	// MinRTT is, per direction, the shortest time seen at the capture
	// point from a segment of that direction carrying new bytes (or its
	// SYN) to the peer's first ACK covering it (retransmitted segments
	// are not timed: Karn's algorithm); 0 when none was timed. Captured at
	// a client, MinRTT[client's direction] is the network's round trip to
	// the broker and back, and the other direction's is about zero.
	MinRTT [2]time.Duration
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
	CloseFull   = "table full"     // closed, idle longest, to keep the open connections within Options.MaxConnectionMemory
)

// Handler receives the reassembled streams. All calls happen on one
// goroutine (the caller of Run or ReadFiles), in capture order.
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

// String returns "A>B" or "B>A".
func (d Dir) String() string {
	if d == AtoB {
		return "A>B"
	}
	return "B>A"
}
