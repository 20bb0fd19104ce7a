package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/kwire/kwire/facts"
	"io"
	"io/fs"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/internal/memtune"
	"github.com/kwire/kwire/pipeline"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render"
	"github.com/kwire/kwire/tlsdec"
	"github.com/spf13/pflag"
)

// This file is what read, stats and versions share: which connections are
// Kafka (captureFlags), feeding capture files through reassembly and a
// dissector (readCaptures), and turning what went wrong into messages and
// an exit status (captureRun.status).

// captureFlags are the connection flags of every command that reads
// captures.
type captureFlags struct {
	Ports           portsFlag // --port
	Detect          bool
	MaxFrame        byteSize
	MaxPending      byteSize      // --max-pending-memory
	MaxPartial      byteSize      // --max-reassembly-memory
	MaxOutOfOrder   byteSize      // --max-out-of-order
	IdleTimeout     time.Duration // --idle-timeout
	ReorderWindow   time.Duration // --reorder-window
	MaxDecompressed byteSize      // --max-decompressed
	MaxDecodeMemory byteSize      // --max-decode-memory
	// What a hostile capture file can make kwire hold or walk.
	MaxCaptureWindow  byteSize // --max-capture-window
	MaxFragmentMemory byteSize // --max-fragment-memory
	MaxConnMemory     byteSize // --max-connection-memory
	MaxNamesMemory    byteSize // --max-names-memory
	MaxTunnelDepth    int      // --max-tunnel-depth
	TLSKeyLogs        []string // --tls-keylog
	MaxTLSKeyMemory   byteSize // --max-tls-key-memory

	keys   *tlsKeys // loaded by dissectOptions
	follow bool     // re-read the key logs as they grow (live)
}

// defaultMaxDecodeMemory is --max-decode-memory's default: one frame may
// take a quarter, 128 MiB, what a 50 MiB Fetch response (fetch.max.bytes'
// default) of 1 KiB records takes decoded whole (about 90 MiB).
const defaultMaxDecodeMemory = 512 << 20

// defaultMaxOutOfOrder is --max-out-of-order's default, in bytes. The
// bound counts reassembly pages (reassembly.PageSize bytes, one or more
// per segment); what they cost in memory is about twice that, more when
// many connections give up their holes at once, so 16 MiB keeps kwire
// within about 100 MB (82 MB measured with 100 connections each holding
// 2 MB behind a hole).
const defaultMaxOutOfOrder = 16 << 20

// addFlags adds --port, --detect, --max-frame, --max-pending-memory,
// --max-out-of-order and --idle-timeout. detect is --detect's default:
// true for files (read, stats, versions), false for live, which captures
// only the --port traffic unless told otherwise. idle is --idle-timeout's
// default.
func (o *captureFlags) addFlags(f *pflag.FlagSet, detect bool, idle time.Duration) {
	o.Ports = portsFlag{ports: []uint16{dissect.DefaultPort}}
	f.Var(&o.Ports, "port",
		"broker TCP `ports`: a list, ranges or both (9092,9093 or 19092-19094), repeatable; their connections are Kafka even when the content cannot tell (mid-stream starts)")
	usage := "also recognise Kafka on any port by the first bytes of each connection"
	if detect {
		usage += " (--detect=false: only on --port)"
	}
	f.BoolVar(&o.Detect, "detect", detect, usage)
	f.Var(&o.MaxFrame, "max-frame", fmt.Sprintf(
		"largest frame accepted as Kafka, e.g. 200MiB (K, M, G: powers of 1024; 0: %s, the broker's default socket.request.max.bytes)", byteSize(dissect.DefaultMaxFrame)))
	o.MaxPending = dissect.DefaultPendingMemory
	f.Var(&o.MaxPending, "max-pending-memory",
		"memory for requests awaiting their responses, e.g. 64MiB (K, M, G: powers of 1024), counting their frames and about 768 bytes of bookkeeping each; past it their frames wait in a temporary file in $TMPDIR, deleted at once, and are read back when shown: the output is the same. When the bookkeeping alone needs more (about 20,000 requests pending at once for 16MiB), the oldest requests beyond a connection's first 32 are given up as unanswered, with a warning and exit status 1 (0: no bound; if no file can be made they stay in memory with a warning)")
	o.MaxPartial = dissect.DefaultPartialMemory
	f.Var(&o.MaxPartial, "max-reassembly-memory",
		"memory for Kafka frames partly arrived and resync windows, over all connections, e.g. 512MiB (K, M, G: powers of 1024); past it the connection whose bytes passed it gives up the frame it is building (shown cut, the rest skipped by its length), with a warning and exit status 1 (0: no bound)")
	o.MaxOutOfOrder = defaultMaxOutOfOrder
	f.Var(&o.MaxOutOfOrder, "max-out-of-order",
		"TCP segments that arrive ahead of a missing one may wait for it in this much memory, e.g. 64MiB (K, M, G: powers of 1024), counted in pages of 1900 bytes (a segment takes one or more), all connections together (one may take it all); past it the oldest missing bytes of the connection that gets the next segment are given up and reported as a gap \"given up (budget)\", with exit status 1 (0: no bound). As much again keeps the bytes each direction delivered last (up to 64KiB a direction, those that delivered least recently give theirs up first), to compare retransmissions with byte for byte (CONFLICT)")
	f.DurationVar(&o.ReorderWindow, "reorder-window", reassembly.DefaultReorderWindow,
		"how long, in capture time, bytes a peer acknowledged but the capture has not shown yet are awaited before they are reported lost (at most 256 packets of their connection, and while the peer's bytes held back meanwhile fit in --max-out-of-order): a capture merged from two capture points (mergecap), or taken on several NIC queues or a bonded link, may write a response before its request; such a pair is marked reordered, its latency not measured (0: reported lost at once)")
	o.IdleTimeout = idle
	usage = "close a connection after this long without a packet, in capture time (e.g. 10m; checked every half timeout, but at least every 10s and no more often than every 1ms); a later packet starts a new connection, with a stream number of its own unlike Wireshark's tcp.stream (0: never"
	if idle == 0 {
		usage += ", as Wireshark: connections whose end was not captured are kept to the end of the input"
	}
	f.DurationVar(&o.IdleTimeout, "idle-timeout", idle, usage+")")
	o.MaxCaptureWindow = reassembly.DefaultMaxCaptureWindow
	f.Var(&o.MaxCaptureWindow, "max-capture-window",
		"largest decompression window a compressed capture file (zstd, xz) may ask for, e.g. 512MiB (K, M, G: powers of 1024); a file asking for more is refused there, the packets before it are shown")
	o.MaxFragmentMemory = reassembly.DefaultMaxFragmentMemory
	f.Var(&o.MaxFragmentMemory, "max-fragment-memory",
		"memory for IP fragments waiting for the rest of their packet, e.g. 64MiB (K, M, G: powers of 1024); past it the oldest incomplete packet is given up")
	o.MaxConnMemory = reassembly.DefaultMaxConnectionMemory
	f.Var(&o.MaxConnMemory, "max-connection-memory",
		fmt.Sprintf("memory for the state of the TCP connections open at once (about %d KiB each, not the data they hold), e.g. 512MiB (K, M, G: powers of 1024); past it the connections idle longest are closed, with a warning (0: no bound)", reassembly.ConnCost>>10))
	o.MaxNamesMemory = facts.DefaultMaxMemory
	f.Var(&o.MaxNamesMemory, "max-names-memory",
		"memory for the names of topic IDs learnt from Metadata (and, a fifth of it, the group IDs whose protocol tells a GenerationIdOrMemberEpoch's meaning), e.g. 64MiB (K, M, G: powers of 1024); past it further IDs are shown unresolved (with a warning), check fails the checks that read topic names as undecided, and further groups' commits read gen/epoch= (0: no bound)")
	f.IntVar(&o.MaxTunnelDepth, "max-tunnel-depth", reassembly.DefaultMaxTunnelDepth,
		"most tunnels one packet may nest (VXLAN, Geneve, GRE, ERSPAN, IP in IP), all decapsulated; deeper packets are counted and not dissected (0: no decapsulation)")
	usage = "decrypt TLS with the secrets of this NSS key log `file` (SSLKEYLOGFILE, Go's KeyLogWriter, openssl -keylogfile; repeatable); TLS 1.2 and 1.3, Kafka recognised inside by content; a pcapng capture's own Decryption Secrets Blocks are used without it"
	if idle != 0 {
		usage += "; read again as clients append to it (it may be empty or not exist yet)"
	} else {
		usage += "; one with no key (empty) is refused"
	}
	f.StringArrayVar(&o.TLSKeyLogs, "tls-keylog", nil, usage)
	o.MaxTLSKeyMemory = defaultMaxTLSKeyMemory
	f.Var(&o.MaxTLSKeyMemory, "max-tls-key-memory", fmt.Sprintf(
		"memory for the TLS secrets of the key logs and of a pcapng capture's Decryption Secrets Blocks, e.g. 256MiB (K, M, G: powers of 1024), about %d bytes a TLS 1.2 connection's and %d a TLS 1.3 one's; past it the secrets read first are dropped, with a warning, and the connections that needed them are not decrypted (0: no bound)",
		tlsdec.KeyCost+48, tlsdec.KeyCost+4*48))
	addDecodeFlags(f, &o.MaxDecompressed, &o.MaxDecodeMemory)
}

// memBase is the memory kwire takes whatever its flags (README
// "Memory"): the Go runtime, the schema table, buffer pools (frames,
// output chunks, JSON lines), a few megabytes of frames in the decode
// pipeline, connection state, and the collector's slack.
const memBase = 64 << 20

// defaultMaxTLSKeyMemory is --max-tls-key-memory's default: the secrets
// of about 90,000 TLS 1.3 connections (a key log a client appended to for
// months), 140,000 TLS 1.2 ones.
const defaultMaxTLSKeyMemory = 48 << 20

// memoryBound is what the flags bound kwire's memory to, in bytes (README
// "Memory"): memBase + --max-pending-memory + 4 × --max-out-of-order (a
// page costs about twice its bytes; as much again holds a peer's bytes
// while an acknowledged hole waits, --reorder-window; as much again keeps
// the bytes last delivered, reassembly.Options.MaxRecentBytes) + --max-fragment-memory +
// --max-capture-window + --max-decode-memory + 2 × --max-frame (the
// frames of one exchange in transit) + --max-connection-memory +
// --max-reassembly-memory (the frames partly arrived on every
// connection) + 3 × --max-names-memory (a run's readers share one
// facts.Names, diff's sides one each: the count is an upper bound) +
// --max-tls-key-memory; 0 when a flag lifts its bound. 1620 MiB with the
// defaults (TestDefaultMemoryBound).
func (o *captureFlags) memoryBound() int64 {
	if o.MaxPending == 0 || o.MaxOutOfOrder == 0 || o.MaxDecodeMemory == 0 || o.MaxFragmentMemory == 0 || o.MaxCaptureWindow == 0 || o.MaxConnMemory == 0 || o.MaxPartial == 0 || o.MaxNamesMemory == 0 || o.MaxTLSKeyMemory == 0 {
		return 0
	}
	frame := int64(o.MaxFrame)
	if frame <= 0 {
		frame = dissect.DefaultMaxFrame
	}
	return memBase + int64(o.MaxPending) + 4*int64(o.MaxOutOfOrder) + int64(o.MaxFragmentMemory) + int64(o.MaxCaptureWindow) +
		int64(o.MaxDecodeMemory) + 2*frame + int64(o.MaxConnMemory) + int64(o.MaxPartial) + 3*int64(o.MaxNamesMemory) + int64(o.MaxTLSKeyMemory)
}

// addDecodeFlags adds --max-decompressed and --max-decode-memory (read,
// stats, versions, live and decode).
func addDecodeFlags(f *pflag.FlagSet, maxDecompressed, maxMemory *byteSize) {
	*maxDecompressed = protocol.DefaultMaxDecompressed
	f.Var(maxDecompressed, "max-decompressed",
		"the most one frame's compressed record batches may inflate to, all together, e.g. 1GiB (K, M, G: powers of 1024): past it the batch is reported as a decompression bomb, with the size its codec claims, and its records up to the cap are decoded (this bounds time; memory is --max-decode-memory's)")
	*maxMemory = defaultMaxDecodeMemory
	f.Var(maxMemory, "max-decode-memory",
		"memory for decoding and rendering the exchanges in flight, all together, e.g. 256MiB: decompressed bytes kept (value bytes past --max-value are not kept), decoded fields, rendered output; one frame may take a quarter of it, past which the rest of it stays undecoded, with a note (0: no bound)")
}

// decoderLimits sets d's caps from --max-decompressed and
// --max-decode-memory, and what it keeps of long values from the output's
// options: the bytes shown (render.Options.MaxValue), none when values are
// not shown, all when they are never cut.
func decoderLimits(d *protocol.Decoder, maxDecompressed, maxMemory byteSize, ropts render.Options) error {
	if maxDecompressed <= 0 {
		return usageErrorf("--max-decompressed must be positive")
	}
	if maxMemory < 0 {
		return usageErrorf("--max-decode-memory must not be negative")
	}
	d.MaxDecompressed = int64(maxDecompressed)
	d.MaxMemory = pipeline.FrameMemory(int64(maxMemory))
	if maxMemory == 0 {
		d.MaxMemory = -1 // no bound
	} else if d.MaxMemory < 1<<20 {
		return usageErrorf("--max-decode-memory %v is too small: one frame may take a quarter of it, and needs at least 1MiB", maxMemory)
	}
	switch {
	case ropts.Values == render.ValuesNone:
		d.KeepValue = -1
	case ropts.MaxValue < 0:
		d.KeepValue = 0
	default:
		d.KeepValue = max(ropts.MaxValue, 1)
		if ropts.MaxValue == 0 {
			d.KeepValue = render.DefaultMaxValue
		}
	}
	return nil
}

// portsFlag is --port: TCP ports given as a comma-separated list of ports
// and inclusive ranges ("9092,9093", "19092-19094", "9092,19092-19094"),
// the flag repeatable; the first --port replaces the default.
type portsFlag struct {
	ports []uint16
	set   bool
}

func (p *portsFlag) Set(s string) error {
	if !p.set {
		p.ports, p.set = nil, true
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := tcpPort(lo)
		if err != nil {
			return err
		}
		b := a
		if isRange {
			if b, err = tcpPort(hi); err != nil {
				return err
			}
			if a > b {
				a, b = b, a // as tcpdump reads portrange 9094-9092
			}
		}
		for q := int(a); q <= int(b); q++ {
			p.ports = append(p.ports, uint16(q))
		}
	}
	return nil
}

// tcpPort parses a TCP port number, 1 to 65535.
func tcpPort(s string) (uint16, error) {
	if s == "" {
		return 0, errors.New("a port is missing (ports are comma-separated; a range is LOW-HIGH)")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a port number", s)
	}
	if n < 1 || n > 65535 {
		return 0, fmt.Errorf("%d is not a TCP port (1-65535)", n)
	}
	return uint16(n), nil
}

func (p *portsFlag) String() string {
	var b strings.Builder
	for i, r := range portRuns(p.ports) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(r[0])))
		if r[1] != r[0] {
			b.WriteString("-" + strconv.Itoa(int(r[1])))
		}
	}
	return b.String()
}

func (p *portsFlag) Type() string { return "ports" }

// portRuns groups ports, in their order, into runs of consecutive ones.
func portRuns(ports []uint16) [][2]uint16 {
	var out [][2]uint16
	for _, q := range ports {
		if n := len(out); n > 0 && q == out[n-1][1]+1 {
			out[n-1][1] = q
			continue
		}
		out = append(out, [2]uint16{q, q})
	}
	return out
}

// reassemblyOptions are the reassembly bounds the flags set: out-of-order
// data in pages (at least one) for all connections, and for one no more
// than that nor than reassembly's per-connection default (giving up a hole
// costs the library time quadratic in the pages behind it: a connection
// holding 256 MiB took minutes), and the idle timeout, checked at least twice per timeout (by
// default every reassembly.DefaultFlushInterval of capture time).
func (o *captureFlags) reassemblyOptions() reassembly.Options {
	opts := reassembly.Options{
		IdleTimeout:       o.IdleTimeout,
		MaxCaptureWindow:  max(int64(o.MaxCaptureWindow), 1),
		MaxFragmentMemory: max(int64(o.MaxFragmentMemory), 1),
		MaxTunnelDepth:    o.MaxTunnelDepth,
		// 0 lifts the bound: reassembly's "no bound" is negative.
		MaxConnectionMemory: cmp.Or(int64(o.MaxConnMemory), -1),
	}
	if o.MaxTunnelDepth == 0 {
		opts.MaxTunnelDepth = -1 // reassembly's "no decapsulation"
	}
	if o.keys != nil {
		opts.Secrets = o.keys.secrets
	}
	if t := o.IdleTimeout; t > 0 && t < 2*reassembly.DefaultFlushInterval {
		opts.FlushInterval = max(t/2, time.Millisecond)
	}
	opts.ReorderWindow = o.ReorderWindow
	if o.ReorderWindow <= 0 {
		opts.ReorderWindow = -1 // reassembly's "at once"
	}
	// The peer's bytes held back while an acknowledged hole waits have
	// a budget of the same size.
	opts.MaxHeldBytes = cmp.Or(int64(o.MaxOutOfOrder), -1)
	// So do the bytes kept to compare retransmissions with (0, no bound,
	// leaves reassembly's default: the windows need one to share).
	opts.MaxRecentBytes = int64(o.MaxOutOfOrder)
	switch n := int64(o.MaxOutOfOrder); {
	case n == 0:
		opts.MaxBufferedPagesTotal = -1
		opts.MaxBufferedPagesPerConn = -1
	default:
		// The bound is the flag's bytes, for one connection as for all:
		// a fixed count of pages per connection gave up holes that a
		// budget of any size would have waited for (thousands of tiny
		// segments reordered).
		pages := int(min((n+reassembly.PageSize-1)/reassembly.PageSize, math.MaxInt32))
		opts.MaxBufferedPagesTotal = pages
		opts.MaxBufferedPagesPerConn = pages
	}
	return opts
}

// dissectOptions validates the flags. Frames are decoded with record
// batches, within the decoding caps, keeping of long values what ropts
// shows (decoderLimits); secrets stay redacted unless ropts.ShowSecrets.
func (o *captureFlags) dissectOptions(ropts render.Options) (dissect.Options, error) {
	opts := dissect.Options{
		Ports:         slices.Clone(o.Ports.ports),
		Detect:        o.Detect,
		MaxFrame:      int(o.MaxFrame),
		Decoder:       protocol.Decoder{Records: true, ShowSecrets: ropts.ShowSecrets},
		PendingMemory: int64(o.MaxPending),
		PartialMemory: cmp.Or(int64(o.MaxPartial), -1), // 0 lifts the bound
	}
	if err := decoderLimits(&opts.Decoder, o.MaxDecompressed, o.MaxDecodeMemory, ropts); err != nil {
		return opts, err
	}
	if o.MaxPending == 0 {
		opts.PendingMemory = -1 // no bound
	}
	if o.MaxFrame > math.MaxInt32 {
		return opts, usageErrorf("--max-frame %s is past what a frame's INT32 length can say (%s)", o.MaxFrame, byteSize(math.MaxInt32))
	}
	if o.IdleTimeout < 0 {
		return opts, usageErrorf("--idle-timeout must not be negative")
	}
	if o.MaxTunnelDepth < 0 {
		return opts, usageErrorf("--max-tunnel-depth must not be negative")
	}
	if len(opts.Ports) == 0 && !o.Detect {
		return opts, usageErrorf("no --port given: add one or use --detect")
	}
	if o.MaxTLSKeyMemory < 0 {
		return opts, usageErrorf("--max-tls-key-memory must not be negative")
	}
	keys, err := loadTLSKeys(o.TLSKeyLogs, o.follow, int64(o.MaxTLSKeyMemory))
	if err != nil {
		return opts, err
	}
	o.keys = keys
	opts.TLSKeys = keys
	opts.TLSWait = o.follow
	return opts, nil
}

// captureRun totals what reading some capture files found.
type captureRun struct {
	ds     dissect.Summary    // the dissectors' totals (SkipReasons merged)
	rs     reassembly.Summary // the reassemblies' totals (Files appended)
	lost   dissect.Problems   // what kept the dissection from being complete (the dissectors' counts)
	detect bool               // Kafka was recognised by content too
	ports  []uint16
	dec    protocol.Decoder // the decoder's options, for what its bounds were
	// pendingMemory is the bound on pending requests' memory in bytes
	// (dissect.Options.PendingMemory), for the warning when it was hit.
	pendingMemory int64
	// connMemory is the bound on open connections' state in bytes
	// (reassembly.Options.MaxConnectionMemory).
	connMemory int64
	// maxConns is the most TCP connections one file held (stream
	// numbers restart with each file).
	maxConns int

	readAny bool // some file was a capture
	// oneWay are the captures (file names, or "" for the captures read
	// as one) whose Kafka requests got not one response, with how many
	// went unanswered: a broker that answered nothing, or one direction
	// of the connections captured (tcpdump -Q out, files split by
	// direction and read without --merge).
	oneWay []oneWayCapture
	// several is whether several files were read without --merge.
	several     bool
	fileErrs    []error
	interrupted bool
	keys        *tlsKeys // the TLS keys, when any source could give some
	// liveCapture names, for kwire live, the interface and the capture
	// filter the packets had to pass ("lo", "tcp port 9092"); "" for
	// files.
	liveIface, liveFilter string
}

// oneWayCapture is a capture whose Kafka requests got not one response
// (captureRun.oneWay).
type oneWayCapture struct {
	file       string // "" for the only capture, or several read as one
	unanswered int64
}

// add merges another run's totals (kwire versions --against).
func (r *captureRun) add(o captureRun) {
	r.addSummaries(o.ds, o.rs)
	r.lost.Add(o.lost)
	r.readAny = r.readAny || o.readAny
	r.fileErrs = append(r.fileErrs, o.fileErrs...)
	r.interrupted = r.interrupted || o.interrupted
}

// addSummaries adds one file's (or run's) totals.
func (r *captureRun) addSummaries(ds dissect.Summary, rs reassembly.Summary) {
	t := &r.ds
	r.lost.Add(ds.Problems)
	r.maxConns = max(r.maxConns, ds.Connections)
	t.Connections += ds.Connections
	t.Kafka += ds.Kafka
	t.Skipped += ds.Skipped
	t.TLS += ds.TLS
	t.TLSDecrypted += ds.TLSDecrypted
	for _, sr := range ds.TLSReasons {
		i := slices.IndexFunc(t.TLSReasons, func(x dissect.Reason) bool { return x.Reason == sr.Reason })
		if i < 0 {
			t.TLSReasons = append(t.TLSReasons, sr)
		} else {
			t.TLSReasons[i].Count += sr.Count
		}
	}
	t.Frames += ds.Frames
	t.Exchanges += ds.Exchanges
	t.Cuts += ds.Cuts
	t.CutBytes += ds.CutBytes
	if t.SpillError == nil {
		t.SpillError = ds.SpillError
	}
	for _, sr := range ds.SkipReasons {
		i := slices.IndexFunc(t.SkipReasons, func(x dissect.Reason) bool { return x.Reason == sr.Reason })
		if i < 0 {
			t.SkipReasons = append(t.SkipReasons, sr)
		} else {
			t.SkipReasons[i].Count += sr.Count
		}
	}
	r.rs.Packets += rs.Packets
	r.rs.FilteredOut += rs.FilteredOut
	r.rs.Fragments += rs.Fragments
	r.rs.FragmentConflicts += rs.FragmentConflicts
	r.rs.TCPPackets += rs.TCPPackets
	r.rs.NonTCP += rs.NonTCP
	r.rs.UnsupportedLink += rs.UnsupportedLink
	r.rs.Connections += rs.Connections
	r.rs.Tunnelled += rs.Tunnelled
	r.rs.TooDeep += rs.TooDeep
	r.rs.TooManyTags += rs.TooManyTags
	r.rs.TooManyLabels += rs.TooManyLabels
	r.rs.TooManyHeaders += rs.TooManyHeaders
	r.rs.DecodeErrors += rs.DecodeErrors
	r.rs.HeadersSnapped += rs.HeadersSnapped
	r.rs.Truncated += rs.Truncated
	r.rs.TruncatedAt = max(r.rs.TruncatedAt, rs.TruncatedAt)
	r.rs.Evicted += rs.Evicted
	r.rs.Files = append(r.rs.Files, rs.Files...)
}

// captureReader feeds capture files to a dissect.Sink.
type captureReader struct {
	opts dissect.Options
	// ropts are the reassembly options (captureFlags.reassemblyOptions).
	ropts reassembly.Options
	// onFile, when not nil, is called before each file with its path.
	onFile func(path string)
	// wrap, when not nil, wraps each file's dissector (progress
	// accounting).
	wrap func(reassembly.Handler) reassembly.Handler
	// drain, when not nil, is called after each file before its
	// dissector's totals are read: it waits until the sink has decoded
	// every exchange handed to it (dissect.Options.DeferDecode), so that
	// the totals count the frames that failed to decode.
	drain func()
	// after, when not nil, is called after each file with the
	// dissector's and the reassembly's totals for it.
	after func(dissect.Summary, reassembly.Summary)
	// merge reads the files as one capture, merged by packet time
	// (--merge): onFile is not called.
	merge bool
	// start, when not nil, is reset before each capture (--since and
	// --until offsets count from each one's first packet).
	start *captureStart
}

// read reads every file with a fresh dissector: each file is a capture of
// its own, as Wireshark opens it, so packet numbers and connection indexes
// restart. Problems are collected in the result, not returned.
func (c *captureReader) read(ctx context.Context, paths []string, sink dissect.Sink) captureRun {
	if ctx == nil {
		ctx = context.Background()
	}
	run := captureRun{detect: c.opts.Detect, ports: c.opts.Ports, dec: c.opts.Decoder, pendingMemory: c.opts.PendingMemory,
		connMemory: c.ropts.MaxConnectionMemory}
	if k, ok := c.opts.TLSKeys.(*tlsKeys); ok {
		run.keys = k
	}
	groups := make([][]string, 0, len(paths))
	for _, path := range paths {
		groups = append(groups, []string{path})
	}
	ropts := c.ropts
	if c.merge && len(paths) > 1 {
		groups = [][]string{paths}
		ropts.Merge = true
	}
	run.several = len(groups) > 1
	for _, group := range groups {
		if c.onFile != nil && !ropts.Merge {
			c.onFile(group[0])
		}
		if c.start != nil {
			c.start.reset()
		}
		dopts := c.opts
		dopts.Stopped = func() bool { return context.Cause(ctx) == errCountReached }
		d := dissect.New(dopts, sink)
		var h reassembly.Handler = d
		if c.wrap != nil {
			h = c.wrap(d)
		}
		sum, err := reassembly.ReadFiles(ctx, group, ropts, h)
		if context.Cause(ctx) == errCountReached {
			d.Stop() // -c: what was in flight is not unanswered
		} else {
			d.Finish()
		}
		if c.drain != nil {
			c.drain()
		}
		ds := d.Summary()
		if c.after != nil {
			c.after(ds, sum)
		}
		if ds.Unanswered > 0 && ds.Responses == 0 && context.Cause(ctx) != errCountReached {
			name := ""
			if len(groups) > 1 {
				name = group[0]
			}
			run.oneWay = append(run.oneWay, oneWayCapture{name, ds.Unanswered})
		}
		run.addSummaries(ds, sum)
		for _, f := range sum.Files {
			// A capture, or a compressed file cut short or damaged before
			// its format could be told (its first bytes): read as a
			// capture that holds no packets, as a plain file cut inside
			// its header is.
			damaged := f.Compressed && (errors.Is(f.Err, reassembly.ErrTruncated) || errors.Is(f.Err, reassembly.ErrCorrupt))
			run.readAny = run.readAny || f.Format != "" || damaged
		}
		if context.Cause(ctx) == errCountReached {
			break // not a problem: -c asked for no more
		}
		if err != nil {
			run.fileErrs = append(run.fileErrs, err)
		}
		if ctx.Err() != nil {
			run.interrupted = true
			break
		}
	}
	return run
}

// status reports input problems on errw and returns the exit error:
//
//   - 2 when a file could not be read at all (missing, not a capture);
//   - 1 when the captures could not be fully dissected: a file cut short
//     or corrupt, packets that could not be parsed (malformed, past a
//     parsing limit, of a link type kwire does not read), bytes lost in a
//     gap, garbage skipped (resync, bad frame), a truncated frame, or a
//     frame that failed to decode (unknown API keys and versions are
//     data, not failures);
//   - 0 otherwise, with a note saying why when no Kafka connection was
//     found, and after Ctrl-C (the way a live capture ends).
func (r *captureRun) status(errw io.Writer) error {
	if r.interrupted {
		fmt.Fprintln(errw, "kwire: interrupted; the output covers the packets read so far")
		return nil
	}
	code, saidEmpty := exitOK, false
	for _, err := range r.fileErrs {
		var fe *reassembly.FileError
		if errors.As(err, &fe) && (errors.Is(err, reassembly.ErrTruncated) || errors.Is(err, reassembly.ErrCorrupt) || errors.Is(err, reassembly.ErrLimit)) {
			if fe.Packets == 0 && r.rs.Packets == 0 {
				fmt.Fprintf(errw, "kwire: warning: %v: the capture holds no packets\n", err)
				saidEmpty = true
			} else {
				fmt.Fprintf(errw, "kwire: warning: %v (everything before it is shown)\n", err)
			}
			code = max(code, exitData)
			continue
		}
		fmt.Fprintf(errw, "kwire: %v\n", fileErrorText(err))
		code = exitUsage
	}
	for _, f := range r.rs.Files {
		for _, q := range f.Quirks {
			// A writer's quirk, read as libpcap and Wireshark do: said
			// once per file, not per packet.
			what, first := "note", fmt.Sprintf(" (the first: packet %d)", q.First)
			if q.Quirk.Lost() {
				what, first = "warning", ""
				code = max(code, exitData)
			}
			fmt.Fprintf(errw, "kwire: %s: %s: %d %s%s %s%s\n", what, fileName(f.Path), q.Count, q.Quirk.Unit(), plural(int(q.Count)), q.Quirk, first)
		}
	}
	if t := render.UnparsedText(unparsed(r.rs)); t != "" {
		// Packets kwire could not read: whatever they carried is not in
		// the output, and a capture all of whose packets are past a limit
		// of kwire's own (a deep VLAN stack) would otherwise read as one
		// without Kafka.
		hint := ""
		if r.rs.TooDeep > 0 {
			hint = "; raise --max-tunnel-depth to read those in deeper tunnels"
		}
		fmt.Fprintf(errw, "kwire: warning: %s: not dissected%s\n", t, hint)
		code = max(code, exitData)
	}
	if r.rs.FilteredOut > 0 && r.rs.Fragments > 0 {
		// -f 'port N' on fragmented datagrams: tcpdump's semantics, but
		// the fragments it skips leave the others incomplete.
		fmt.Fprintf(errw, "kwire: note: %d IP fragment%s could not be reassembled, and -f skipped %d packet%s: a port filter passes the first fragment of a datagram only (the later ones hold no ports), as tcpdump's does; filter by host or net to keep every fragment\n",
			r.rs.Fragments, plural(int(r.rs.Fragments)), r.rs.FilteredOut, plural(int(r.rs.FilteredOut)))
	}
	if n := r.rs.FragmentConflicts; n > 0 {
		// Which copy of an overlap a receiver keeps differs between
		// systems: the stream kwire would rebuild may not be the one the
		// receiver read.
		fmt.Fprintf(errw, "kwire: warning: %d IP fragment%s discarded: fragments of their datagrams overlap with different bytes, and receivers discard such datagrams (Linux, RFC 5722), since which copy one would keep differs between systems; their bytes are a gap unless a retransmission carried them\n",
			n, pluralWas(n))
		code = max(code, exitData)
	}
	if r.ds.Kafka == 0 && code != exitUsage && r.readAny && !saidEmpty {
		fmt.Fprintf(errw, "kwire: %s\n", r.noKafkaHint())
	}
	for _, o := range r.oneWay {
		what := "the capture holds"
		if o.file != "" {
			what = fileName(o.file) + " holds"
		}
		merge := ""
		if r.several {
			merge = "; files split by direction are read together with --merge"
		}
		fmt.Fprintf(errw, "kwire: note: %s Kafka requests and not one response (%d unanswered): a broker that answered nothing, or a capture of one direction only (tcpdump -Q out%s)\n",
			what, o.unanswered, merge)
	}
	r.keys.warnings(errw)
	if r.ds.SpillError != nil {
		// Nothing is lost (the requests stayed in memory), but the
		// bound the user relies on did not hold.
		fmt.Fprintf(errw, "kwire: warning: requests awaiting responses were kept in memory past --max-pending-memory: %v (set TMPDIR to a writable directory)\n", r.ds.SpillError)
	}
	r.limitHints(errw)
	if n := r.rs.Evicted; n > 0 {
		fmt.Fprintf(errw, "kwire: warning: %d connection%s closed early, those idle longest: the connections open at once needed more than --max-connection-memory allows (%v, about %d KiB each); raise it, e.g. --max-connection-memory %v, or 0 for no bound\n",
			n, pluralWas(int64(n)), byteSize(r.connMemory), reassembly.ConnCost>>10, byteSize(4*r.connMemory))
		code = max(code, exitData)
	}
	if n := r.lost.Evicted; n > 0 {
		fmt.Fprintf(errw, "kwire: warning: %d request%s given up unanswered: the requests awaiting responses needed more memory than --max-pending-memory allows (%s); raise it, e.g. --max-pending-memory %s, or 0 for no bound\n",
			n, pluralWas(n), r.pendingBound(), r.pendingHint(n))
	}
	if p := r.problems(); p != "" {
		fmt.Fprintf(errw, "kwire: warning: the capture could not be fully dissected: %s\n", p)
		code = max(code, exitData)
	}
	if code != exitOK {
		return silentExit(code)
	}
	return nil
}

// limitHints says which of the decoder's bounds frames reached, and the
// flag that sets it.
func (r *captureRun) limitHints(errw io.Writer) {
	l := &r.lost
	// frames says "1 frame needs", "2 frames need".
	frames := func(n int64, one, many string) string {
		if n == 1 {
			return "1 frame " + one
		}
		return fmt.Sprintf("%d frames %s", n, many)
	}
	if l.DecompressCapped > 0 {
		fmt.Fprintf(errw, "kwire: warning: %s past --max-decompressed (%v): decompression bombs, whose records are decoded up to that cap (their notes give the sizes their codecs claim)\n",
			frames(l.DecompressCapped, "inflates", "inflate"), byteSize(r.dec.MaxDecompressed))
	}
	if l.MemoryCapped > 0 {
		fmt.Fprintf(errw, "kwire: warning: %s more than the %v of memory one frame may take (a quarter of --max-decode-memory): the rest of each is not decoded (kept raw); a larger --max-decode-memory decodes more\n",
			frames(l.MemoryCapped, "needs", "need"), byteSize(r.dec.MaxMemory))
	}
	if l.NodeCapped > 0 {
		fmt.Fprintf(errw, "kwire: warning: %s more than %d fields (the decoder's node cap): the rest of each is not decoded (kept raw); a larger --max-decode-memory raises the cap\n",
			frames(l.NodeCapped, "holds", "hold"), r.dec.NodeCap())
	}
}

// problems lists what kept the dissection from being complete, or "".
func (r *captureRun) problems() string {
	var p []string
	add := func(n int64, one, many, extra string) {
		if n == 0 {
			return
		}
		what := one
		if n != 1 {
			what = many
		}
		p = append(p, fmt.Sprintf("%d %s%s", n, what, extra))
	}
	l := &r.lost
	gapBytes := ""
	if l.GapBytes > 0 {
		gapBytes = " (" + render.GapBytes(*l, r.rs.Truncated, r.rs.TruncatedAt, " lost") + ")"
	}
	skipped := ""
	if l.ResyncBytes > 0 {
		skipped = fmt.Sprintf(" (%d bytes skipped)", l.ResyncBytes)
	}
	add(l.Gaps, "gap", "gaps", gapBytes)
	add(l.Resyncs, "resync", "resyncs", skipped)
	add(l.BadFrames, "bad frame", "bad frames", "")
	add(l.Truncated, "truncated frame", "truncated frames", "")
	add(l.Conflicts, "retransmission with different data (the first copy is decoded)", "retransmissions with different data (the first copy is decoded)", "")
	add(l.DecodeErrors, "frame that failed to decode", "frames that failed to decode", "")
	add(l.Evicted, "request given up past --max-pending-memory", "requests given up past --max-pending-memory", "")
	add(l.PartialCapped, "frame given up half-reassembled past --max-reassembly-memory", "frames given up half-reassembled past --max-reassembly-memory", "")
	add(l.Unexplained, "response no captured request explains", "responses no captured request explains", " (orphans on connections captured from their start)")
	if r.keys.given() {
		// Keys were given: a TLS connection on a Kafka port that could
		// not be decrypted is part of the capture not dissected.
		undone := int64(r.ds.TLS - r.ds.TLSDecrypted)
		add(undone, "TLS connection not decrypted", "TLS connections not decrypted", " ("+r.tlsReasons()+")")
	}
	return strings.Join(p, ", ")
}

// tlsReasons lists why TLS connections were not decrypted, as the
// connections' lines say (dissect.TLSNoKeyLog...): "2 no key for the
// client random, 1 handshake not captured".
func (r *captureRun) tlsReasons() string {
	return render.TLSReasonsText(r.ds.TLSReasons)
}

// pendingBound words the --max-pending-memory in effect.
func (r *captureRun) pendingBound() string {
	return byteSize(r.pendingMemory).String()
}

// pendingHint suggests a --max-pending-memory, in the flag's own syntax,
// for evicted requests given up: the bound plus their bookkeeping (each
// took at least dissect.PendingCost), rounded up to a power of two
// mebibytes and at least twice the bound — what the capture needed at
// the least, as a value to try.
func (r *captureRun) pendingHint(evicted int64) string {
	need := max(r.pendingMemory, 1<<20) + evicted*dissect.PendingCost
	b := int64(1 << 20)
	for b < need || b < 2*r.pendingMemory {
		b *= 2
	}
	return byteSize(b).String()
}

func pluralWas(n int64) string {
	if n == 1 {
		return " was"
	}
	return "s were"
}

// noKafkaHint says why no Kafka connection was found.
func (r *captureRun) noKafkaHint() string {
	switch {
	case r.rs.Packets == 0 && r.rs.FilteredOut > 0:
		return fmt.Sprintf("no Kafka connections found: -f passed none of the %d packet%s read", r.rs.FilteredOut, plural(int(r.rs.FilteredOut)))
	case r.rs.Packets == 0 && r.liveFilter != "":
		// kwire live: nothing came through the filter on the interface.
		return fmt.Sprintf("no Kafka connections found: no packet on %s passed the capture filter %q: a broker on other ports needs --port (9092,9093) or -f, one reached through another interface -i (any: all of them)",
			r.liveIface, r.liveFilter)
	case r.rs.Packets == 0:
		return "no Kafka connections found: the capture holds no packets"
	case r.rs.UnsupportedLink == r.rs.Packets:
		return fmt.Sprintf("no Kafka connections found: the %d packet%s are of link type %s, which kwire does not read",
			r.rs.Packets, plural(int(r.rs.Packets)), r.linkTypes())
	case r.rs.Connections == 0 && r.rs.DecodeErrors+r.rs.UnsupportedLink > 0:
		return fmt.Sprintf("no Kafka connections found: no TCP connections in %d packet%s, %d of which could not be parsed", r.rs.Packets, plural(int(r.rs.Packets)), r.rs.DecodeErrors+r.rs.UnsupportedLink)
	case r.rs.Connections == 0:
		return fmt.Sprintf("no Kafka connections found: no TCP connections in %d packet%s", r.rs.Packets, plural(int(r.rs.Packets)))
	}
	// TLS is counted as TLS on a --port (or decrypted), and as a skip
	// reason elsewhere.
	var parts []string
	tls := r.ds.TLS - r.ds.TLSDecrypted
	for _, sr := range r.ds.SkipReasons {
		if sr.Reason == dissect.SkipTLS {
			tls += sr.Count
		}
	}
	if tls > 0 {
		why := "not decrypted"
		if rs := r.tlsReasons(); rs != "" {
			why += ": " + rs
		}
		parts = append(parts, fmt.Sprintf("%d TLS connection%s (%s)", tls, plural(tls), why))
	}
	if n := r.ds.TLSDecrypted; n > 0 {
		parts = append(parts, fmt.Sprintf("%d decrypted TLS connection%s that are not Kafka", n, plural(n)))
	}
	for _, sr := range r.ds.SkipReasons {
		switch sr.Reason {
		case dissect.SkipTLS:
		case "not on a Kafka port":
			parts = append(parts, fmt.Sprintf("%d connection%s not on port %s", sr.Count, plural(sr.Count), r.portList()))
		default:
			parts = append(parts, fmt.Sprintf("%d connection%s skipped: %s", sr.Count, plural(sr.Count), sr.Reason))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%d TCP connection%s", r.rs.Connections, plural(r.rs.Connections)))
	}
	hint := "no Kafka connections found: " + strings.Join(parts, ", ")
	has := func(reason string) bool {
		return slices.ContainsFunc(r.ds.SkipReasons, func(x dissect.Reason) bool { return x.Reason == reason })
	}
	noKey := len(r.ds.TLSReasons) > 0 && !slices.ContainsFunc(r.ds.TLSReasons, func(x dissect.Reason) bool { return x.Reason != dissect.TLSNoKey })
	switch {
	case tls > 0 && !r.keys.given():
		hint += "; give the clients' TLS key log with --tls-keylog to decrypt them"
	case tls > 0 && r.ds.TLSDecrypted == 0 && noKey && r.keys.kl.Dropped() == 0:
		// Keys were loaded, but none is for these connections: the key
		// log of another run, or of other clients (none dropped past
		// --max-tls-key-memory, whose own warning says what to do).
		hint += "; the key log holds none of their client randoms: give the one their clients wrote while this capture was taken"
	case has("not on a Kafka port"):
		hint += "; drop --detect=false to recognise Kafka by content, or give its broker ports with --port"
	case has("not Kafka") && r.rs.Truncated > 0 && r.rs.TruncatedAt < 128:
		// A payload of a few bytes a packet cannot be told apart.
		hint += fmt.Sprintf("; the snap length kept %d bytes of each packet, too few to recognise Kafka: capture with a larger one (tcpdump -s 0), or give the broker ports with --port", r.rs.TruncatedAt)
	case has("not Kafka"):
		hint += "; if it is Kafka seen from the middle of its connections, give its broker ports with --port"
	}
	return hint
}

func (r *captureRun) portList() string {
	p := portsFlag{ports: r.ports}
	return p.String()
}

// linkTypes names the link types of the files read, e.g. "USB (189)".
func (r *captureRun) linkTypes() string {
	var names []string
	for _, f := range r.rs.Files {
		for _, lt := range f.LinkTypes {
			n := fmt.Sprintf("%s (%d)", lt, int(lt))
			if strings.HasPrefix(lt.String(), "Unknown") || strings.HasPrefix(lt.String(), "LinkType(") {
				n = fmt.Sprintf("%d", int(lt))
			}
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return "unknown"
	}
	return strings.Join(names, ", ")
}

// fileErrorText is a file's error without the path twice: an *os.PathError
// under a reassembly.FileError already names it.
func fileErrorText(err error) string {
	var fe *reassembly.FileError
	var pe *fs.PathError
	if errors.As(err, &fe) && fe.Kind == nil && errors.As(fe.Err, &pe) {
		return fmt.Sprintf("%s: %v", fileName(fe.Path), pe.Err)
	}
	return err.Error()
}

// fileName is how messages name an input path.
func fileName(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}

// inputSize returns the total size of the named files, for the progress
// bar; standard input and files that cannot be read count as 0 (reading
// them reports the problem).
func inputSize(paths []string) int64 {
	var total int64
	for _, p := range paths {
		if st, err := os.Stat(p); p != "-" && err == nil && st.Mode().IsRegular() {
			total += st.Size()
		}
	}
	return total
}

// valuesNotShown are the output options of the commands that show no
// record value (stats, versions): the decoder keeps none of their bytes.
var valuesNotShown = render.Options{Values: render.ValuesNone}

// setMemoryCeiling bounds the process's soft memory limit at bound bytes
// (memtune.SetCeiling); should the live heap pass it, a warning goes to
// errw once.
func setMemoryCeiling(bound int64, errw io.Writer) {
	memtune.SetCeiling(bound, func(live, ceiling int64) {
		fmt.Fprintf(errw, "kwire: warning: %d MiB of memory are in use, past the %d MiB the flags bound it to (kwire's estimate of what it holds was short): an allocation may fail; a lower --max-decode-memory keeps it within bounds\n",
			live>>20, ceiling>>20)
	})
}

// unparsed says why packets of rs could not be parsed: past a limit of
// the reassembly's own, tunnels nested past --max-tunnel-depth,
// malformed, of a link type kwire does not read.
func unparsed(rs reassembly.Summary) []render.Unparsed {
	limits := rs.TooManyTags + rs.TooManyLabels + rs.TooManyHeaders + rs.TooDeep + rs.HeadersSnapped
	return []render.Unparsed{
		{Count: rs.HeadersSnapped, Why: fmt.Sprintf("with headers cut by the snap length (%d bytes captured of each packet at most): capture with a larger one, e.g. tcpdump -s 0", rs.TruncatedAt)},
		{Count: rs.TooManyTags, Why: fmt.Sprintf("with more than %d VLAN tags", reassembly.MaxVLANTags)},
		{Count: rs.TooManyLabels, Why: fmt.Sprintf("with more than %d MPLS labels", reassembly.MaxMPLSLabels)},
		{Count: rs.TooManyHeaders, Why: fmt.Sprintf("with more than %d IPv6 extension headers", reassembly.MaxIPv6ExtHeaders)},
		{Count: rs.TooDeep, Why: "with tunnels nested deeper than --max-tunnel-depth"},
		{Count: rs.DecodeErrors - limits, Why: "malformed (a link, IP, tunnel or TCP header that contradicts itself or is cut short)"},
		{Count: rs.UnsupportedLink, Why: "of a link type kwire does not read"},
	}
}

// addUnparsed adds the counts of b to those of a (the same reasons in
// the same order, as unparsed gives them).
func addUnparsed(a, b []render.Unparsed) []render.Unparsed {
	if a == nil {
		return b
	}
	for i := range a {
		a[i].Count += b[i].Count
	}
	return a
}
