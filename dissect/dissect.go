package dissect

import (
	"cmp"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/tlsdec"
)

// Defaults for Options.
const (
	// DefaultPort is the broker port assumed when Options.Ports is nil.
	DefaultPort = 9092
	// DefaultMaxFrame is the largest frame payload accepted: 100 MiB, the
	// default of the broker's socket.request.max.bytes (104857600).
	DefaultMaxFrame = 100 << 20
	// DefaultPartialMemory is Options.PartialMemory's default: 256 MiB.
	DefaultPartialMemory = 256 << 20
)

// preLimit bounds the bytes held per connection while deciding whether it
// is Kafka; past it the decision is made with what is there.
const preLimit = 64 << 10

// Options configure a Dissector.
type Options struct {
	// Ports are the broker ports: a connection with an endpoint on one of
	// them is Kafka unless its bytes are clearly something else (TLS, HTTP).
	// nil means {DefaultPort}; an empty non-nil slice means none.
	Ports []uint16
	// Detect recognises Kafka on any port from the client's first bytes: a
	// plausible request frame (length within MaxFrame, API key and version
	// known to the schema table, printable client id that fits, the next
	// frame consistent when present).
	Detect bool
	// MaxFrame is the largest frame payload in bytes; 0 means
	// DefaultMaxFrame. Longer lengths are diagnosed as not Kafka.
	MaxFrame int
	// Decoder decodes frames into trees (its options: record batches,
	// decompression cap, ShowSecrets, which also un-redacts raw SASL tokens).
	Decoder protocol.Decoder
	// Decode, when not nil, says whether frames of an API key and version
	// are decoded into trees; when it returns false Frame.Tree stays nil
	// (pairing, acks, ApiVersions ranges and SASL still work).
	Decode func(apiKey, version int16) bool
	// DeferDecode leaves decoding to the sink: exchanges arrive with their
	// frames' Tree nil, and Exchange.Decode decodes them, possibly on other
	// goroutines (kwire read decodes and renders on every core while the
	// Dissector reads on). SaslAuthenticate requests and responses (whose
	// tokens are split by the connection's SASL mechanism) and requests
	// whose header does not parse are still decoded before the sink sees
	// them. Summary counts the frames Exchange.Decode decodes too.
	DeferDecode bool
	// PendingMemory bounds, in bytes, the memory that requests awaiting
	// their responses take, over all connections: their frames' bytes
	// and, for each, about 768 bytes of bookkeeping (the Exchange and
	// its index); 0 means DefaultPendingMemory, a negative value no
	// bound. Past it, request frames (of 512 bytes or more) are written
	// to a temporary file and read back when their exchange is emitted:
	// the exchanges are the same. When the bookkeeping and the frames
	// that stay in memory still need more, pending requests are given up
	// (KindUnanswered, with a note), oldest first, from the connection
	// holding the most, and counted in Problems.Evicted: with the default
	// 16 MiB that happens past about 20,000 requests pending at once.
	// Each connection keeps up to 32 while their floors fit in 1.5 MiB
	// (or PendingMemory, when larger), fewer when more connections hold
	// requests, and at least its newest: the memory taken is thus at most
	// PendingMemory plus one request (its bookkeeping and, under 512
	// bytes, its frame) per connection holding requests. When the file cannot be created or
	// written the frames stay in memory, and the first exchange concerned
	// has a note saying so.
	PendingMemory int64
	// PartialMemory bounds, in bytes, what the connections' splitters
	// hold at once over all connections: frames partly arrived and the
	// windows of resyncs over bytes that are not Kafka. Past it the
	// connection whose bytes passed it gives up the frame it is building
	// (EventTruncated, "cut by the bound on frames being reassembled",
	// the frame's first bytes kept as a cut frame is, the rest skipped by
	// its length) or the oldest bytes of its resync window (skipped),
	// counted in Problems.PartialCapped. 0 means DefaultPartialMemory; a
	// negative value, no bound.
	PartialMemory int64
	// SpillDir is the directory of that file; "" means os.TempDir(). The
	// file is removed from it at once where the OS allows (else at Finish).
	SpillDir string
	// TLSKeys, when not nil, are the secrets TLS connections are
	// decrypted with (package tlsdec: a key log, looked up by client
	// random). With keys, TLS connections on any port are decrypted and
	// their plaintext dissected like a plaintext connection's (Kafka
	// detected by content with Detect); without, TLS on a Kafka port is
	// reported (EventTLS) and elsewhere skipped. The TLS layer's buffers
	// count against PendingMemory.
	TLSKeys tlsdec.Keys
	// TLSWait holds TLS records whose keys are not in TLSKeys yet, and
	// looks again with each new record and at the connection's end
	// (kwire live: clients append to the key log file during the
	// handshake). The records held count against PendingMemory; past it
	// the connection is reported without a key.
	TLSWait bool
	// Stopped, when not nil, reports whether the read was stopped before
	// the end of its input (kwire read -c): connections that end of the
	// input closes (reassembly.CloseEOF) are then closed as by Stop.
	// Called on the Dissector's goroutine.
	Stopped func() bool
}

// Dissector turns reassembled TCP streams into Kafka exchanges. It
// implements reassembly.Handler; all methods must be called from one
// goroutine. Call Finish after the last packet.
type Dissector struct {
	opts  Options
	sink  Sink
	conns map[*reassembly.Conn]*conn
	// busy are the connections holding requests that await their
	// responses, the one holding the most first: the floors of the
	// pending bound share its memory, and past it requests are given up
	// from the fullest.
	busy busyHeap
	// partial is what the splitters hold (frames being built, resync
	// windows), in all; maxPartial its bound (0: none).
	partial, maxPartial int64
	// eventHeld is what the splitters keep of skipped bytes for their
	// resync events, in all (maxEventHeld).
	eventHeld    int64
	sum          Summary
	reasons      map[string]int
	brokers      map[netip.AddrPort]*BrokerVersions
	guesses      int             // orphans guessed in full so far (guessFull)
	guessedBytes int64           // bytes of the orphans guessed in full (guessFullBytes)
	prober       protocol.Prober // what guess tries response schemas with
	spill        spiller

	sessions   tlsdec.Sessions // TLS 1.2 sessions, for resumed connections
	tlsReasons map[string]int  // TLS connections not decrypted, by reason
	// decodes counts the frames decoded so far, on any goroutine
	// (Exchange.Decode): Summary's DecodeErrors and Unknown.
	decodes  *decodeCounts
	ports    *[1024]uint64 // Options.Ports as a set
	stopping bool          // Stop: partial frames are the stop's, not the capture's
}

// New returns a Dissector that reports to sink.
func New(opts Options, sink Sink) *Dissector {
	if opts.Ports == nil {
		opts.Ports = []uint16{DefaultPort}
	}
	if opts.MaxFrame <= 0 {
		opts.MaxFrame = DefaultMaxFrame
	}
	if opts.PendingMemory == 0 {
		opts.PendingMemory = DefaultPendingMemory
	}
	maxPartial := opts.PartialMemory
	switch {
	case maxPartial == 0:
		maxPartial = DefaultPartialMemory
	case maxPartial < 0:
		maxPartial = 0
	}
	pool := &framePool{max: poolBytes}
	if opts.Decoder.BatchHeadersOnly {
		pool.max = poolBytesHeaders
	}
	return &Dissector{
		maxPartial: maxPartial,
		spill:      spiller{budget: opts.PendingMemory, dir: opts.SpillDir, pool: pool},
		opts:       opts,
		sink:       sink,
		conns:      make(map[*reassembly.Conn]*conn),
		reasons:    make(map[string]int),
		brokers:    make(map[netip.AddrPort]*BrokerVersions),

		tlsReasons: make(map[string]int),
		decodes:    new(decodeCounts),
		ports:      portSet(opts.Ports),
	}
}

// portSet returns ports as a bit set (a --port range may name thousands).
func portSet(ports []uint16) *[1024]uint64 {
	s := new([1024]uint64)
	for _, p := range ports {
		s[p/64] |= 1 << (p % 64)
	}
	return s
}

var (
	_ reassembly.SnapHandler     = (*Dissector)(nil)
	_ reassembly.BudgetHandler   = (*Dissector)(nil)
	_ reassembly.ConflictHandler = (*Dissector)(nil)
)

func (d *Dissector) isPort(p uint16) bool { return d.ports[p/64]&(1<<(p%64)) != 0 }

// Open implements reassembly.Handler.
func (d *Dissector) Open(rc *reassembly.Conn) {
	if _, ok := d.conns[rc]; ok {
		return
	}
	d.sum.Connections++
	c := d.newConn(rc)
	c.portA, c.portB = d.isPort(rc.A.Port()), d.isPort(rc.B.Port())
	d.conns[rc] = c
	if !c.portA && !c.portB && !d.opts.Detect {
		c.skip("not on a Kafka port", fmt.Sprintf("no endpoint on a Kafka port (%s)", d.portList()))
	}
}

// portList words the Kafka ports, consecutive ones as a range.
func (d *Dissector) portList() string {
	var b strings.Builder
	for p := 0; p < 65536; p++ {
		if !d.isPort(uint16(p)) {
			continue
		}
		q := p
		for q+1 < 65536 && d.isPort(uint16(q+1)) {
			q++
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, p)
		if q > p {
			fmt.Fprintf(&b, "-%d", q)
		}
		p = q
	}
	return b.String()
}

func (d *Dissector) conn(rc *reassembly.Conn) *conn {
	c := d.conns[rc]
	if c == nil {
		d.Open(rc)
		c = d.conns[rc]
	}
	return c
}

// Data implements reassembly.Handler.
func (d *Dissector) Data(rc *reassembly.Conn, dir reassembly.Dir, ch reassembly.Chunk) {
	if len(ch.Data) == 0 {
		return
	}
	c := d.conn(rc)
	c.last = ch.Time
	if c.tls != nil {
		if c.state == csUndecided || c.state == csKafka {
			c.tls.dec.Data(tlsdec.Dir(dir), ch.Data, tlsdec.Mark{Frame: ch.Frame, Time: ch.Time})
		}
		return
	}
	c.tcp.streamEnd(dir, ch.Offset+int64(len(ch.Data)))
	c.plain(dir, ch.Data, ch.Frame, ch.Time)
}

// Gap implements reassembly.Handler.
func (d *Dissector) Gap(rc *reassembly.Conn, dir reassembly.Dir, n int64, t time.Time) {
	c := d.conn(rc)
	if c.tlsGap(dir, n, t) {
		return
	}
	c.plainGap(dir, n, t, "")
}

// Snapped implements reassembly.SnapHandler: n bytes of direction dir
// that the capture's snap length kept out of packet sc.Frame are handled
// as a gap (EventGap, counted in Problems.Gaps), whose detail says they
// were not captured, not lost: "740 bytes not captured: the snap length
// cut packet 6 to 120 of its 874 bytes". TLS records cannot be followed
// across them either.
func (d *Dissector) Snapped(rc *reassembly.Conn, dir reassembly.Dir, n int64, t time.Time, sc reassembly.SnapCut) {
	c := d.conn(rc)
	if c.tlsGap(dir, n, t) {
		return
	}
	why := snapWhy(n, sc)
	switch c.state {
	case csKafka:
		c.gapOf(dir, n, t, why, gapSnapped)
	case csUndecided:
		c.pre = append(c.pre, preChunk{dir: dir, gap: true, kind: gapSnapped, why: why, n: n, time: t})
	}
}

// snapWhy is the detail of a gap the snap length made.
func snapWhy(n int64, sc reassembly.SnapCut) string {
	return fmt.Sprintf("%s not captured: the snap length cut packet %d to %d of its %d bytes", lostWords(n), sc.Frame, sc.Captured, sc.Length)
}

// GivenUp implements reassembly.BudgetHandler: n bytes of direction dir
// that the out-of-order budget gave up (the segments buffered behind them
// reached it) are handled as a gap (EventGap, counted in Problems.Gaps
// and Problems.GivenUp), whose detail says they were given up, not lost,
// and which flag raises the budget (givenUpWhy).
func (d *Dissector) GivenUp(rc *reassembly.Conn, dir reassembly.Dir, n int64, t time.Time) {
	c := d.conn(rc)
	if c.tlsGap(dir, n, t) {
		return
	}
	why := givenUpWhy(n)
	switch c.state {
	case csKafka:
		c.gapOf(dir, n, t, why, gapGivenUp)
	case csUndecided:
		c.pre = append(c.pre, preChunk{dir: dir, gap: true, kind: gapGivenUp, why: why, n: n, time: t})
	}
}

// givenUpWhy is the detail of a gap of n bytes the out-of-order budget
// gave up: "3728 bytes given up (budget): the segments that arrived ahead
// of them filled the out-of-order budget before they came (maybe captured
// later); a larger --max-out-of-order waits for them".
func givenUpWhy(n int64) string {
	return fmt.Sprintf("%s given up (budget): the segments that arrived ahead of them filled the out-of-order budget before they came (maybe captured later); a larger --max-out-of-order waits for them", lostWords(n))
}

// Conflict implements reassembly.ConflictHandler: a retransmission on a
// Kafka connection (or one not yet decided) whose bytes differ from those
// delivered before is an EventConflict, counted in Problems.Conflicts: the
// exchange shown holds the first copy, which the receiver may not have
// kept. Connections that are not Kafka are not told.
func (d *Dissector) Conflict(rc *reassembly.Conn, dir reassembly.Dir, cf reassembly.Conflict) {
	c := d.conn(rc)
	if c.state != csKafka && c.state != csUndecided {
		return
	}
	d.sum.Conflicts++
	c.event(&Event{Kind: EventConflict, Conn: rc, Dir: dir, Frame: cf.Frame, Time: cf.Time, Bytes: int64(cf.Bytes), Offset: cf.Offset,
		Detail: fmt.Sprintf("retransmission with different data: packet %d resends %s at stream offset %d that packet %d carried, with other bytes; the first copy is decoded", cf.Frame, lostWords(int64(cf.Bytes)), cf.Offset, cf.First)})
}

// Cut implements reassembly.CutHandler: n bytes of direction dir left out
// of the capture on purpose are handled as a gap (the next frame is found
// after them) but reported as EventCut, and counted in Summary.Cuts, not
// as a loss.
func (d *Dissector) Cut(rc *reassembly.Conn, dir reassembly.Dir, n int64, t time.Time) {
	c := d.conn(rc)
	if c.tlsGap(dir, n, t) {
		return
	}
	switch c.state {
	case csKafka:
		c.gapOf(dir, n, t, "", gapCut)
	case csUndecided:
		c.pre = append(c.pre, preChunk{dir: dir, gap: true, kind: gapCut, n: n, time: t})
	}
}

// Close implements reassembly.Handler.
func (d *Dissector) Close(rc *reassembly.Conn, reason string, t time.Time) {
	c := d.conns[rc]
	if c == nil {
		return
	}
	if reason == reassembly.CloseEOF && d.opts.Stopped != nil && d.opts.Stopped() {
		d.stopping, reason = true, closeStopped
	}
	c.close(reason, t)
	delete(d.conns, rc)
	c.recycle()
}

// Finish flushes every connection still open at the end of the input: a
// partial frame is reported (EventTruncated), requests still awaiting a
// response become KindUnanswered exchanges, and each connection gets an
// EventClose. Connections are flushed in order of Conn.File, Conn.Index.
// The spill file (Options.PendingMemory), if any, is closed and removed.
func (d *Dissector) Finish() {
	d.finish(reassembly.CloseEOF)
}

// closeStopped is the close reason of the connections open when the read
// was stopped (Stop).
const closeStopped = "stopped"

// Stop is Finish for a read stopped before the end of its input (kwire
// read -c): requests still awaiting a response are in flight, not
// unanswered (Exchange.InFlight, with a note), and a frame partly
// arrived is dropped without an event: the stop cut it, not the capture.
func (d *Dissector) Stop() {
	d.stopping = true
	d.finish(closeStopped)
}

func (d *Dissector) finish(reason string) {
	open := make([]*conn, 0, len(d.conns))
	for _, c := range d.conns {
		open = append(open, c)
	}
	slices.SortFunc(open, func(a, b *conn) int {
		return cmp.Or(cmp.Compare(a.c.File, b.c.File), cmp.Compare(a.c.Index, b.c.Index))
	})
	for _, c := range open {
		c.close(reason, c.last)
		delete(d.conns, c.c)
	}
	d.spill.close()
}

func (d *Dissector) event(e *Event) {
	if d.sink != nil {
		d.sink.Event(e)
	}
}

func (d *Dissector) emit(ex *Exchange) {
	if c := d.conns[ex.Conn]; c != nil {
		c.timing(ex)
	}
	if f := ex.Request; f != nil && (f.held || f.spill != nil) {
		d.unhold(ex, f)
	}
	if f := ex.Request; f != nil && f.lazy.set {
		if ex.APIKey == keySaslAuthenticate && ex.Mechanism == "" {
			// The mechanism that SaslHandshake negotiated on this connection.
			ex.Mechanism = f.lazy.mech
		}
		if h := f.lazy.h; f.lazy.unknown && d.withholdUnknown(f) {
			f.lazy = lazyRequest{}
		} else if d.opts.DeferDecode && h.APIKey != keySaslAuthenticate && d.wantDecode(h.APIKey, h.APIVersion) {
			// Left to Exchange.Decode (SaslAuthenticate requests are
			// decoded here, with the connection's SASL mechanism).
			f.lazy = lazyRequest{}
			f.deferred = deferredDecode{dec: &d.opts.Decoder, counts: d.decodes}
		} else {
			d.finishRequest(f)
		}
		ex.withholdEchoes()
	}
	if c := d.conns[ex.Conn]; c != nil && c.tls != nil {
		ex.TLS = true
	}
	d.sum.Exchanges++
	switch ex.Kind {
	case KindPaired:
		d.sum.Paired++
	case KindNoResponse:
		d.sum.NoResponse++
	case KindUnanswered:
		d.sum.Unanswered++
	case KindOrphan:
		d.sum.Orphans++
	case KindSASL:
		d.sum.SASL++
	}
	if d.sink != nil {
		d.sink.Exchange(ex)
	}
}

// wantDecode applies Options.Decode.
func (d *Dissector) wantDecode(key, ver int16) bool {
	return d.opts.Decode == nil || d.opts.Decode(key, ver)
}

// decoded classifies a frame the Dissector decoded and counts it.
func (d *Dissector) decoded(f *Frame) { f.outcome = d.decodes.count(f.Tree) }

// Summary counts what a Dissector saw. Connection counts are final after
// Finish.
type Summary struct {
	Connections int      // TCP connections handed to the Dissector
	Kafka       int      // connections recognised as Kafka
	Skipped     int      // connections not dissected
	SkipReasons []Reason // why, sorted by reason
	// TLS counts the TLS connections reported with EventTLS (on a Kafka
	// port, or decrypted anywhere); TLS not on a Kafka port that could not
	// be decrypted is a skip reason ("TLS") instead.
	TLS          int
	TLSDecrypted int      // of them, decrypted
	TLSReasons   []Reason // the others, by TLSStatus.Reason, sorted

	Frames    int64 // frames cut (requests, responses, raw SASL tokens)
	Requests  int64 // Kafka request frames
	Responses int64 // Kafka response frames

	Exchanges  int64 // exchanges emitted, all kinds
	Paired     int64
	NoResponse int64 // Produce with acks=0
	Unanswered int64
	Orphans    int64
	SASL       int64 // KindSASL exchanges (raw tokens after SaslHandshake v0)

	// Problems are what kept the dissection from being complete, each
	// counted where it happened: the summary, the exit status and stats
	// read these numbers.
	Problems

	// Unknown counts decoded frames of an API key or version the schema
	// table does not know (Frame.Unknown): kept raw, data rather than a
	// problem.
	Unknown int64

	// Cuts count the holes the capture's writer left on purpose
	// (EventCut: kwire read -w wrote only the exchanges it selected),
	// CutBytes their bytes: data, not a problem.
	Cuts, CutBytes int64

	OutOfOrder   int64 // responses that did not answer the oldest pending request
	Reordered    int64 // pairs whose response was captured before its request ended (Exchange.Reordered): data, not a problem
	DuplicateIDs int64 // requests sent while another with the same correlation ID was pending
	Unsupported  int64 // requests outside the broker's advertised version range

	// SpillError is why request frames past Options.PendingMemory could
	// not go to the temporary file and were kept in memory; nil when
	// none had to be.
	SpillError error
}

// Problems count what kept a dissection from being complete (exit status
// 1 of kwire's commands), one counter per kind of loss, each incremented
// where the loss happens. Except for DecodeErrors and Evicted, each count
// is one Event of the matching kind, so a sink that counts events per
// connection (stats) agrees with these totals.
type Problems struct {
	Gaps        int64 // EventGap: bytes lost in one direction of a Kafka connection
	GapBytes    int64 // bytes lost in gaps of known size
	Resyncs     int64 // EventResync: garbage skipped to the next plausible frame, or left at the end
	ResyncBytes int64 // bytes skipped while resynchronising
	BadFrames   int64 // EventBadFrame: lengths or headers diagnosed as not Kafka
	Truncated   int64 // EventTruncated: frames cut by a gap or by the end of a connection
	// Snapped counts the gaps of bytes the capture's snap length kept
	// out (Dissector.Snapped), SnappedBytes their bytes; they count in
	// Gaps and GapBytes too. They were not lost on the network.
	Snapped      int64
	SnappedBytes int64
	// Conflicts counts retransmissions whose bytes differ from those
	// delivered (EventConflict): the exchanges show the first copy.
	Conflicts int64
	// GivenUp counts the gaps the out-of-order budget gave up
	// (Dissector.GivenUp: --max-out-of-order), GivenUpBytes their bytes;
	// they count in Gaps and GapBytes too. They may have been captured.
	GivenUp      int64
	GivenUpBytes int64

	// DecodeErrors counts frames whose decoding failed (Frame.Failed: the
	// tree has an error, or a record batch in it has), whoever decoded
	// them: the Dissector, or Exchange.Decode on another goroutine. Frames
	// of an unknown API key or version are not failures (Summary.Unknown).
	DecodeErrors int64
	// Evicted counts requests given up unanswered because those awaiting
	// responses needed more memory than Options.PendingMemory allows.
	Evicted int64
	// PartialCapped counts frames given up half-reassembled, and resync
	// windows cut, because the splitters of all connections needed more
	// than Options.PartialMemory.
	PartialCapped int64
	// Unexplained counts orphan responses on connections captured from
	// their SYN with nothing lost, skipped or given up before them: a
	// response that no captured request explains where every request
	// should have been captured (a correlation ID the client never sent, a
	// response sent twice). Orphans of connections caught mid-stream, or
	// after a gap, are not counted: their requests went before the capture
	// began, or in the gap.
	Unexplained int64

	// The decoded frames that reached one of the decoder's bounds
	// (protocol.Tree.Limits), each also a failure (DecodeErrors):
	// DecompressCapped the decompression cap (Decoder.MaxDecompressed,
	// --max-decompressed), MemoryCapped the memory one frame may take
	// (Decoder.MaxMemory, --max-decode-memory), NodeCapped the node cap.
	DecompressCapped int64
	MemoryCapped     int64
	NodeCapped       int64
}

// Any reports whether any problem was counted.
func (p Problems) Any() bool { return p != Problems{} }

// Add adds o's counts to p.
func (p *Problems) Add(o Problems) {
	p.Gaps += o.Gaps
	p.GapBytes += o.GapBytes
	p.Resyncs += o.Resyncs
	p.ResyncBytes += o.ResyncBytes
	p.BadFrames += o.BadFrames
	p.Truncated += o.Truncated
	p.Snapped += o.Snapped
	p.SnappedBytes += o.SnappedBytes
	p.GivenUp += o.GivenUp
	p.Conflicts += o.Conflicts
	p.GivenUpBytes += o.GivenUpBytes
	p.DecodeErrors += o.DecodeErrors
	p.Evicted += o.Evicted
	p.PartialCapped += o.PartialCapped
	p.Unexplained += o.Unexplained
	p.DecompressCapped += o.DecompressCapped
	p.MemoryCapped += o.MemoryCapped
	p.NodeCapped += o.NodeCapped
}

// decodeCounts counts decoded frames by outcome and by the decoder bounds
// they reached, on any goroutine.
type decodeCounts struct {
	failed, unknown                atomic.Int64
	decompressed, memory, nodeCaps atomic.Int64
}

// count classifies t (outcome) and counts it.
func (c *decodeCounts) count(t *protocol.Tree) outcome {
	return c.add(classify(t), t, 1)
}

// uncount takes back what count counted of a tree about to be dropped
// (Exchange.Undecode) that gave outcome o.
func (c *decodeCounts) uncount(o outcome, t *protocol.Tree) {
	c.add(o, t, -1)
}

func (c *decodeCounts) add(o outcome, t *protocol.Tree, n int64) outcome {
	switch o {
	case outcomeFailed:
		c.failed.Add(n)
	case outcomeUnknown:
		c.unknown.Add(n)
	}
	if t != nil {
		if t.Limits&protocol.LimitDecompressed != 0 {
			c.decompressed.Add(n)
		}
		if t.Limits&protocol.LimitMemory != 0 {
			c.memory.Add(n)
		}
		if t.Limits&protocol.LimitNodes != 0 {
			c.nodeCaps.Add(n)
		}
	}
	return o
}

// outcome is what decoding a frame gave.
type outcome uint8

const (
	outcomeNone    outcome = iota // not decoded
	outcomeOK                     // decoded without error
	outcomeUnknown                // an API key or version the schema table does not know: kept raw
	outcomeFailed                 // an error in the tree (Tree.Err) or in a record batch (Tree.FirstError)
)

// classify says what a decoded tree's outcome is: the one definition of a
// frame that failed to decode.
func classify(t *protocol.Tree) outcome {
	switch {
	case t == nil:
		return outcomeNone
	case t.Err != nil && (errors.Is(t.Err, protocol.ErrUnknownAPI) || errors.Is(t.Err, protocol.ErrUnknownVers)):
		return outcomeUnknown
	case t.Err != nil || t.FirstError() != nil:
		return outcomeFailed
	}
	return outcomeOK
}

// Reason is a skip reason and how many connections it applied to.
type Reason struct {
	Reason string
	Count  int
}

// Summary returns the counts so far. DecodeErrors and Unknown include the
// frames that Exchange.Decode has decoded on other goroutines by the time
// of the call: read the Summary once they are done.
func (d *Dissector) Summary() Summary {
	s := d.sum
	s.DecodeErrors = d.decodes.failed.Load()
	s.Unknown = d.decodes.unknown.Load()
	s.DecompressCapped = d.decodes.decompressed.Load()
	s.MemoryCapped = d.decodes.memory.Load()
	s.NodeCapped = d.decodes.nodeCaps.Load()
	s.SpillError = d.spill.err
	s.SkipReasons = make([]Reason, 0, len(d.reasons))
	for r, n := range d.reasons {
		s.SkipReasons = append(s.SkipReasons, Reason{r, n})
	}
	slices.SortFunc(s.SkipReasons, func(a, b Reason) int { return cmp.Compare(a.Reason, b.Reason) })
	s.TLSReasons = make([]Reason, 0, len(d.tlsReasons))
	for r, n := range d.tlsReasons {
		s.TLSReasons = append(s.TLSReasons, Reason{r, n})
	}
	slices.SortFunc(s.TLSReasons, func(a, b Reason) int { return cmp.Compare(a.Reason, b.Reason) })
	return s
}

// BrokerVersions is what one broker advertised in its latest ApiVersions
// response seen in the capture (KIP-35).
type BrokerVersions struct {
	Broker netip.AddrPort
	Conn   int       // reassembly.Conn.Index of the connection it came from
	Frame  int64     // packet number of the response's first byte
	Time   time.Time // capture time of the response
	// RequestVersion is the ApiVersions version the client asked with.
	RequestVersion int16
	Ranges         []APIRange // sorted by API key, one a key (see maxKeptRanges)
	// Capped says the broker listed more keys than were kept: keys above
	// the last of Ranges are not known (Holds).
	Capped bool
}

// Holds reports whether the ranges kept answer for key: it is not above
// the last key kept of an advertisement Capped.
func (b *BrokerVersions) Holds(key int16) bool {
	return !b.Capped || len(b.Ranges) > 0 && key <= b.Ranges[len(b.Ranges)-1].Key
}

// Range returns the advertised range for key, and false when the broker did
// not list the key.
func (b *BrokerVersions) Range(key int16) (protocol.Versions, bool) {
	i, ok := slices.BinarySearchFunc(b.Ranges, key, func(r APIRange, k int16) int { return cmp.Compare(r.Key, k) })
	if !ok {
		return protocol.NoVersions, false
	}
	return protocol.Versions{Min: b.Ranges[i].Min, Max: b.Ranges[i].Max}, true
}

// Advertised returns, per broker address, the version ranges of the latest
// ApiVersions response seen, sorted by broker address. It is what
// `kwire versions` compares the clients' requests against.
func (d *Dissector) Advertised() []BrokerVersions {
	out := make([]BrokerVersions, 0, len(d.brokers))
	for _, b := range d.brokers {
		out = append(out, *b)
	}
	slices.SortFunc(out, func(a, b BrokerVersions) int { return a.Broker.Compare(b.Broker) })
	return out
}

// tlsGap hands a gap of n bytes of direction dir to c's TLS decryption,
// when c is TLS (records cannot be followed across it; once c is decided
// not to be Kafka nothing is), and reports whether c is: Gap, Snapped,
// GivenUp and Cut have nothing more to do then.
func (c *conn) tlsGap(dir reassembly.Dir, n int64, t time.Time) bool {
	if c.tls == nil {
		return false
	}
	if c.state == csUndecided || c.state == csKafka {
		c.tls.dec.Gap(tlsdec.Dir(dir), n, t)
	}
	return true
}
