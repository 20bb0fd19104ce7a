package reassembly

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"runtime"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// PageSize is the size in bytes of one buffer page of the assembler
// (gopacket/reassembly's page): out-of-order data is held in pages of up to
// this many bytes, one or more per buffered segment.
const PageSize = 1900

// Defaults for Options fields left zero.
const (
	// DefaultMaxBufferedPagesPerConn bounds the out-of-order data held for
	// one connection: 2048 pages, about 3.7 MiB, enough for a lost segment
	// in the middle of a multi-megabyte Kafka fetch response to be
	// retransmitted before the data behind it is given up (BudgetHandler).
	// kwire's --max-out-of-order sets both bounds to its bytes.
	DefaultMaxBufferedPagesPerConn = 2048
	// DefaultMaxBufferedPagesTotal bounds all buffered out-of-order data:
	// 32768 pages, about 59 MiB.
	DefaultMaxBufferedPagesTotal = 32768
	// DefaultBufferTimeout is how long (in capture time) out-of-order data
	// waits for a missing segment: longer than TCP's usual retransmission
	// timeouts.
	DefaultBufferTimeout = time.Minute
	// DefaultFlushInterval is the capture time between two flush passes.
	DefaultFlushInterval = 10 * time.Second
)

// closedLinger is how long (capture time) packets on the 4-tuple of a
// connection closed by FIN or RST are still counted to it rather than
// starting a new connection: a generous TIME_WAIT (2 × MSL of 2 minutes),
// for at most maxClosed connections at once.
const closedLinger = 4 * time.Minute

// Options configure Run and ReadFiles. The zero value is ready to use.
type Options struct {
	// MaxBufferedPagesPerConn bounds the pages (PageSize bytes each) of
	// out-of-order data buffered for one connection. When it is reached,
	// the oldest hole is given up: a GivenUp (BudgetHandler) or Gap, then
	// the data behind it. 0 means
	// DefaultMaxBufferedPagesPerConn, negative means no limit.
	MaxBufferedPagesPerConn int
	// MaxBufferedPagesTotal bounds the buffered pages of all connections.
	// When it is reached every connection that gets a packet gives up its
	// oldest hole. 0 means DefaultMaxBufferedPagesTotal, negative no limit.
	MaxBufferedPagesTotal int
	// Filter selects connections by the sender (a) and receiver (b) of
	// their first packet; packets of rejected connections are counted in
	// Summary.Filtered and otherwise ignored. nil accepts all TCP.
	Filter func(a, b netip.AddrPort) bool
	// BufferTimeout is how long, in capture time, out-of-order data waits
	// for a missing segment before the hole is reported as a Gap. 0 means
	// DefaultBufferTimeout.
	BufferTimeout time.Duration
	// IdleTimeout closes (CloseIdle) a connection that has had no packet
	// for this long in capture time; a later packet on its 4-tuple starts
	// a new connection. 0 or negative: connections stay open until FIN,
	// RST or the end of input, as in Wireshark, and memory grows with the
	// number of connections whose end was not captured. A live capture
	// should set it.
	IdleTimeout time.Duration
	// MaxConnectionMemory bounds, in bytes, the state of the connections
	// open at once, ConnCost bytes each (this package's, gopacket's
	// assembler's and the Handler's own per connection: see ConnCost);
	// when a new connection would pass it, the tenth of the open
	// connections idle longest are closed (CloseFull), counted in
	// Summary.Evicted. 0 means DefaultMaxConnectionMemory; negative, no
	// bound (a capture of a million SYNs then takes gigabytes).
	MaxConnectionMemory int64
	// ReorderWindow is how long, in capture time, a hole its peer has
	// acknowledged waits for its bytes before it is reported as a Gap,
	// the calls of the peer's direction held back meanwhile (see
	// hold.go): a capture merged from two capture points, or taken on
	// several NIC queues, may write a response before its request. At
	// most 256 packets of the connection either way. 0 means
	// DefaultReorderWindow; negative gives such holes up at once.
	ReorderWindow time.Duration
	// MaxHeldBytes bounds, in bytes, the calls held back while holes
	// wait (ReorderWindow), all connections together (their data and
	// about 160 bytes a call); past it the hole is given up. One
	// delivery of buffered segments may pass it by what the
	// out-of-order bound holds. 0 means DefaultMaxHeldBytes; negative,
	// no bound.
	MaxHeldBytes int64
	// MaxRecentBytes bounds, in bytes, the bytes each direction keeps of
	// those it delivered last (up to 64 KiB a direction), all
	// connections together, to compare retransmissions with them byte
	// for byte (Conflict; window.go): past it the directions that
	// delivered least recently lose theirs, and compare only the
	// retransmissions that cover whole one of their last 8 pieces. 0
	// means DefaultMaxRecentBytes; negative keeps none.
	MaxRecentBytes int64
	// FlushInterval is the capture time between two flush passes (buffer
	// timeouts, idle timeouts, forgetting closed 4-tuples). 0 means
	// DefaultFlushInterval.
	FlushInterval time.Duration
	// Synchronous makes Run and ReadFiles do everything on the calling
	// goroutine: reading, reassembly and the Handler calls, which then
	// get the connection's own *Conn. By default reading and decoding,
	// reassembly, and the Handler each have a goroutine (the Handler the
	// caller's), which is faster with more than one core; the calls,
	// their order and their arguments are the same (see the package
	// documentation, Goroutines). The synchronous mode costs less CPU
	// time in all (5 to 15% less): for tiny inputs, or to compare. It is
	// also used when GOMAXPROCS is 1.
	Synchronous bool
	// MaxTunnelDepth bounds how many tunnels (IP in IP, GRE, ERSPAN,
	// VXLAN, Geneve: see tunnel.go) one packet may nest; a deeper packet
	// counts in Summary.TooDeep. 0 means DefaultMaxTunnelDepth; negative
	// turns decapsulation off (tunnelled packets count as NonTCP).
	MaxTunnelDepth int
	// VXLANPorts and GenevePorts are the UDP destination ports read as
	// VXLAN and Geneve; nil means DefaultVXLANPorts and
	// DefaultGenevePorts, empty none.
	VXLANPorts, GenevePorts []uint16
	// MaxFragmentMemory bounds, in bytes, the IP fragments held while
	// their datagrams wait for the rest (a fixed cost per datagram
	// counts too); past it the oldest datagram is given up (its
	// fragments count in Summary.Fragments). 0 means
	// DefaultMaxFragmentMemory.
	MaxFragmentMemory int64
	// MaxCaptureWindow bounds, in bytes, the decompression window a
	// compressed capture file may ask for (a zstd frame's window, an xz
	// block's dictionary): past it the file ends with ErrLimit. 0 means
	// DefaultMaxCaptureWindow.
	MaxCaptureWindow int64
	// Secrets, when set, is called with the content of each pcapng
	// Decryption Secrets Block (TLS key logs and others; see
	// DecryptionSecrets), in file order, before any packet after the
	// block is decoded. It is called on the goroutine that reads the
	// file, which, unless Synchronous is set, is not the Handler's:
	// Handler calls for earlier packets may run at the same time.
	Secrets func(DecryptionSecrets)
	// Concatenate makes ReadFiles treat its files as one capture, in the
	// order given: frame numbers and Conn.Index continue from one file to
	// the next and a connection may span files. Otherwise each file is a
	// capture of its own (see ReadFiles).
	Concatenate bool
	// Merge makes ReadFiles treat its files as one capture ordered by
	// packet time: every file is open at once, and the next packet is the
	// earliest of the files' next packets (on a tie, the one of the file
	// given first). Frame numbers and Conn.Index count through the merged
	// capture, so that a connection spanning the files of a ring buffer
	// (tcpdump -C/-G) stays one connection and the two halves of a
	// capture split by direction pair up. Each file's own packets keep
	// their order. It takes precedence over Concatenate; memory grows
	// with the number of files (one read buffer, 256 KiB, each).
	Merge bool
	// PacketFilter, when set, is called with every packet read, before it
	// is numbered or decoded (on the reading goroutine): a packet it
	// rejects is skipped as if it were not in the capture, as a tcpdump
	// filter on a file does (frame numbers count the packets it keeps).
	// IPHeader finds the IP header for filters that start there.
	PacketFilter func(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) bool
}

// Summary counts what a run read. Counts are of frames (captured packets).
type Summary struct {
	Packets    int64 // frames read
	Bytes      int64 // captured bytes of those frames
	TCPPackets int64 // frames holding a TCP segment
	// NonTCP counts frames that are not TCP over IPv4/IPv6: ARP, UDP,
	// ICMP, other EtherTypes.
	NonTCP int64
	// Fragments counts IP fragments that were not reassembled into TCP:
	// of other protocols than TCP and tunnels, or of datagrams that
	// stayed incomplete for BufferTimeout or to the end of input, went
	// beyond the bounds (1024 datagrams, Options.MaxFragmentMemory) or had
	// a fragment cut by the snap length (their bytes become a Gap). A TCP datagram whose fragments are all
	// captured is rebuilt and handled as the packet of its last fragment,
	// as Wireshark numbers it; its fragments count in TCPPackets.
	Fragments int64
	// FragmentConflicts counts, of Fragments, those of datagrams
	// discarded because two of their fragments overlap with different
	// bytes (as Linux and RFC 5722 discard them: which copy a receiver
	// would keep differs between systems).
	FragmentConflicts int64
	// DecodeErrors counts frames whose link, IP, tunnel or TCP header
	// is malformed, or cut by the snap length before the TCP payload,
	// and those of TooDeep, TooManyTags, TooManyLabels and
	// TooManyHeaders.
	DecodeErrors int64
	// HeadersSnapped counts, of DecodeErrors, the frames whose link, IP,
	// tunnel or TCP header the snap length cut (captured length below
	// the length on the wire, the capture ending inside a header): a
	// capture taken with too small a snap length, not malformed packets.
	HeadersSnapped int64
	// TooManyTags, TooManyLabels and TooManyHeaders count the frames
	// past this package's own parsing limits: more than MaxVLANTags
	// VLAN tags, MaxMPLSLabels MPLS labels, MaxIPv6ExtHeaders IPv6
	// extension headers. They are not read.
	TooManyTags, TooManyLabels, TooManyHeaders int64
	// Tunnelled counts the TCP frames that came out of a tunnel (see
	// Options.MaxTunnelDepth); they count in TCPPackets too.
	Tunnelled int64
	// TooDeep counts frames whose tunnels nest deeper than
	// Options.MaxTunnelDepth.
	TooDeep int64
	// Truncated counts frames cut short by the snap length (captured
	// length below the length on the wire). Missing TCP payload bytes are
	// reported with SnapHandler.Snapped (or Handler.Gap).
	Truncated int64
	// TruncatedAt is the largest captured length of those frames: the
	// snap length they were cut at (the largest, when a pcapng file's
	// interfaces had different ones).
	TruncatedAt int
	// UnsupportedLink counts frames of link types this package does not
	// read (see FileInfo.LinkTypes).
	UnsupportedLink int64
	// Filtered counts TCP frames of connections Options.Filter rejected.
	Filtered int64
	// FilteredOut counts the packets Options.PacketFilter rejected:
	// skipped before numbering, they are not in Packets (nor in any
	// other count here).
	FilteredOut int64
	// Connections counts connections opened (Handler.Open calls).
	Connections int
	// PeakOpenConnections is the most connections open at once.
	PeakOpenConnections int
	// Evicted counts connections closed early (CloseFull) to keep the
	// open ones within Options.MaxConnectionMemory.
	Evicted int
	// Files describes each input of ReadFiles, in order (nil for Run).
	Files []FileInfo
}

func (s *Summary) add(o Summary) {
	s.Packets += o.Packets
	s.Bytes += o.Bytes
	s.TCPPackets += o.TCPPackets
	s.NonTCP += o.NonTCP
	s.Fragments += o.Fragments
	s.FragmentConflicts += o.FragmentConflicts
	s.DecodeErrors += o.DecodeErrors
	s.HeadersSnapped += o.HeadersSnapped
	s.Tunnelled += o.Tunnelled
	s.TooDeep += o.TooDeep
	s.TooManyTags += o.TooManyTags
	s.TooManyLabels += o.TooManyLabels
	s.TooManyHeaders += o.TooManyHeaders
	s.Truncated += o.Truncated
	s.TruncatedAt = max(s.TruncatedAt, o.TruncatedAt)
	s.UnsupportedLink += o.UnsupportedLink
	s.Filtered += o.Filtered
	s.FilteredOut += o.FilteredOut
	s.Connections += o.Connections
	s.PeakOpenConnections = max(s.PeakOpenConnections, o.PeakOpenConnections)
	s.Evicted += o.Evicted
}

// Run reads src to its end, reassembles its TCP connections and calls h
// in capture order on the calling goroutine; it returns after h's last
// call. Frames are numbered from 1 and connections from 0. At the end of
// input (or when ctx is cancelled, or src fails) buffered data is
// flushed: remaining holes become Gaps and every open connection gets
// Close(CloseEOF). The error is src's (anything but io.EOF) or ctx's; the
// summary is valid either way. Cancellation is checked between packets,
// so a source blocked in a read is not interrupted.
//
// src is read on a goroutine of its own (one call at a time), unless
// opts.Synchronous is set; the packets of a source that is not a capture
// file reach h as soon as the stages after the read are idle, without
// waiting for a batch to fill, so that a live capture is shown as it
// happens (see the package documentation, Goroutines).
func Run(ctx context.Context, src PacketSource, opts Options, h Handler) (Summary, error) {
	r := newRunner(opts, h)
	err := r.runFiltered(ctx, src)
	return r.sum, err
}

// ReadFiles reads capture files (pcap or pcapng, each optionally
// gzip-compressed; the format is detected from the content, never the
// name) and reassembles their TCP connections as Run does. The path "-"
// reads standard input, which need not be seekable.
//
// Unless opts.Concatenate is set, each file is a capture of its own, as
// Wireshark opens it: frame numbers restart at 1, Conn.Index at 0, all of
// a file's connections are closed (CloseEOF) before the next file is
// read, and Conn.File tells which file a connection is in. With
// Concatenate the files are read as one capture in the order given.
//
// A file that cannot be read (ErrNotCapture, an open error) or that ends
// early (ErrTruncated, ErrCorrupt) does not stop the others: everything
// before the problem is delivered, its FileInfo.Err is set, and the
// returned error wraps every such *FileError (test with errors.Is and
// errors.As). A cancelled ctx stops reading and returns ctx's error.
func ReadFiles(ctx context.Context, paths []string, opts Options, h Handler) (Summary, error) {
	var errs []error
	if opts.Concatenate || opts.Merge {
		m := &multiSource{opts: opts, paths: paths, infos: make([]FileInfo, len(paths)), merge: opts.Merge}
		r := newRunner(opts, h)
		r.dec.files = m
		err := r.runFiltered(ctx, m)
		m.close()
		sum := r.sum
		sum.Files = m.infos
		errs = append(errs, m.errs...)
		if err != nil {
			errs = append(errs, err)
		}
		return sum, joinErrors(errs)
	}
	var sum Summary
	for i, path := range paths {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		var info FileInfo
		src, err := openFile(path, &info, opts.sourceOptions(i))
		if err == nil {
			r := newRunner(opts, h)
			r.dec.file = i
			err = r.runFiltered(ctx, src)
			src.Close()
			sum.add(r.sum)
		}
		sum.Files = append(sum.Files, info)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return sum, joinErrors(errs)
}

func joinErrors(errs []error) error {
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errors.Join(errs...)
}

// runFiltered runs src through Options.PacketFilter, counting the packets
// it rejected in Summary.FilteredOut.
func (r *runner) runFiltered(ctx context.Context, src PacketSource) error {
	fs := r.opts.filtered(src)
	err := r.run(ctx, fs)
	if f, ok := fs.(*filterSource); ok {
		r.sum.FilteredOut += f.skipped // its reader has returned
	}
	return err
}

// run feeds every packet of src to the assembler, then flushes.
func (r *runner) run(ctx context.Context, src PacketSource) error {
	if !r.opts.Synchronous && runtime.GOMAXPROCS(0) > 1 {
		return r.runPipelined(ctx, src)
	}
	err := eachPacket(ctx, src, func(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) bool {
		r.packet(data, ci, link)
		return true
	})
	r.dec.finish()
	r.frame = r.dec.frame
	r.flushAll()
	r.sum.add(r.dec.sum)
	return err
}

// eachPacket calls fn with each packet of src, in order, until the input
// ends (nil), a read fails or ctx ends (that error), or fn returns false
// (errStopped). ctx is checked every 1024 packets.
func eachPacket(ctx context.Context, src PacketSource, fn func([]byte, gopacket.CaptureInfo, layers.LinkType) bool) error {
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		data, ci, link, err := src.ReadPacket()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !fn(data, ci, link) {
			return errStopped
		}
	}
}

// errStopped is eachPacket's error when its callback stopped it.
var errStopped = errors.New("stopped")

// ConnCost is what one open connection costs, in bytes, for
// Options.MaxConnectionMemory: this package's stream and Conn, gopacket's
// connection, and the Handler's own state for it (kwire's dissect
// connection and frame splitters) — not the data a connection holds,
// which other bounds count (out-of-order pages, the frame being
// reassembled, pending requests). TestConnCost measures this package's
// and gopacket's part, dissect's TestConnStateCost the Handler's.
const ConnCost = 4 << 10

// DefaultMaxConnectionMemory is Options.MaxConnectionMemory's default:
// 256 MiB, 65,536 connections open at once.
const DefaultMaxConnectionMemory = 256 << 20
