package reassembly

// The engine: one runner per capture drives a gopacket reassembly.Assembler
// with synchronous callbacks (no goroutine or channel per stream), with
// the segments the decoder (pipeline.go) made of the captured frames; its
// handler calls go to the Handler, or to the recorder that replays them on
// the caller's goroutine (pipeline.go).
//
// Bookkeeping beside the assembler:
//   - a table of connections by 4-tuple, for Conn.Index, the filter, the
//     packets that follow a close (the last ACK of a FIN exchange must not
//     open a new connection) and 4-tuple reuse by a new SYN;
//   - per direction, the sequence number of the next byte to deliver, so
//     that each piece of a scatter-gather is attributed to the packet it
//     came from (frame number, capture time) and snap-length cuts become
//     gaps;
//   - events produced while the assembler flushes (it walks its
//     connections in map order) are buffered and replayed sorted by
//     Conn.Index, so output never depends on map order;
//   - holes the peer has acknowledged are held a while, the peer's calls
//     held back (hold.go), then given up (skipAckedHoles, giveUpAcked):
//     the assembler has no per-connection flush, so segments of our own are
//     injected (inject) under a lowered page limit, and a per-direction
//     bias tracks where the assembler's idea of the next sequence number
//     differs from ours.

import (
	"hash/maphash"
	"net/netip"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	gpr "github.com/gopacket/gopacket/reassembly"
)

// invalidSeq is the assembler's "no sequence number yet" (its unexported
// invalidSequence), passed to Stream.Accept before a direction starts.
const invalidSeq gpr.Sequence = -1

// pktCtx is the assembler context of one packet. The assembler keeps it
// with buffered pages, so the scatter-gather can tell which packet every
// byte came from: CaptureInfo(offset).AncillaryData[0] is the *pktCtx.
type pktCtx struct {
	ci       gopacket.CaptureInfo
	anc      [1]any
	frame    int64
	seq      gpr.Sequence // sequence number of the first payload byte
	length   int          // payload length according to the IP header
	captured int          // payload bytes actually captured (<= length)
	rst      bool
}

func newPktCtx() *pktCtx {
	c := &pktCtx{}
	c.anc[0] = c
	c.ci.AncillaryData = c.anc[:]
	return c
}

// GetCaptureInfo implements gpr.AssemblerContext.
func (c *pktCtx) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

func asCtx(ac gpr.AssemblerContext) *pktCtx {
	c, _ := ac.(*pktCtx)
	return c
}

func ctxAt(sg gpr.ScatterGather, off int) *pktCtx {
	ci := sg.CaptureInfo(off)
	if len(ci.AncillaryData) == 0 {
		return nil
	}
	c, _ := ci.AncillaryData[0].(*pktCtx)
	return c
}

// connKey is a 4-tuple in canonical order (lower endpoint first).
type connKey struct{ lo, hi netip.AddrPort }

func makeKey(a, b netip.AddrPort) connKey {
	if a.Compare(b) <= 0 {
		return connKey{a, b}
	}
	return connKey{b, a}
}

// event is a handler call buffered during a flush.
type event struct {
	s      *stream
	kind   uint8
	dir    Dir
	n      int64 // gap size
	t      time.Time
	ch     Chunk // Data is resolved from the arena at replay
	start  int   // arena span of the data
	end    int
	reason string
	snap   SnapCut // evSnapped
}

const (
	evData uint8 = iota
	evGap
	evClose
	evCut
	evSnapped
	evGivenUp
	evConflict
)

type runner struct {
	opts          Options
	h             Handler
	segs          SegmentHandler // h, when it wants segment marks (segments.go)
	dec           decoder        // the decoding stage (the reader goroutine's when pipelined)
	p             pkt            // synchronous mode: the current segment
	rec           *recorder      // pipelined mode: where handler calls go
	pool          *gpr.StreamPool
	asm           *gpr.Assembler
	sum           Summary
	bufferTimeout time.Duration

	frame int64
	ipID  int32 // the current packet's IPv4 identification, -1 none
	// hostIDs are the hosts' latest identifications (segments.go).
	hostIDs hostIDs
	now     time.Time // capture time of the current packet
	tcp     layers.TCP
	hdr     [20]byte // the fixed TCP header of the current packet
	pad     []byte   // payload padded to its IP length after a snap-length cut
	ctx     *pktCtx  // context for the next packet
	// ctxKept is set by Accept when the assembler may buffer the packet
	// (and keep its context): the next packet then gets a new one.
	ctxKept bool
	// finHalf is set by Accept to the direction of a FIN segment (see
	// halfState.bias).
	finHalf *halfState
	// pastCut is set by Accept for a segment beyond a hole its
	// direction's cuts cover whole (CutComment): the hole is given up
	// once the assembler has buffered it.
	pastCut bool

	conns     map[connKey]*stream // open connections and recently closed ones
	deletes   int                 // deletions from conns (deleteConn), to know a lookup is still good
	closed    []*stream           // recently closed, in close order
	pending   pendingConn         // the connection the current packet opens
	nextIndex int
	open      int
	maxOpen   int // Options.MaxConnectionMemory in connections; 0: no bound

	// retired keeps the Index of connections closed by FIN or RST and
	// forgotten from conns (closedLinger later, or once maxClosed others
	// closed), by 4-tuple, for packets that
	// come after: for Wireshark a later packet on the 4-tuple other than a
	// SYN is still the same tcp.stream. At most maxRetired are kept, oldest
	// out first: retiredRing holds them in retiring order, the oldest at
	// retiredNext once full.
	retired     map[connKey]retiredConn
	retiredRing []retiredConn
	retiredNext int
	retiredGen  int

	// reset holds connections one direction of which ended with a RST,
	// in RST order: resetLinger later (or at the next flush) the other
	// direction is closed too (the delay lets packets already in flight
	// from the peer be delivered).
	reset []*stream

	synthetic   bool         // feeding the assembler a packet of our own
	seed        maphash.Seed // hashes of delivered pieces (conflict.go)
	wins        windows      // the bytes last delivered (window.go)
	feeding     bool         // feeding the assembler a captured packet (assemble): a skip then is the budget's (budget.go)
	synTCP      layers.TCP
	synCtx      *pktCtx
	forceReason string

	// holds are the connections holding an acknowledged hole (hold.go),
	// heldBytes what their held calls cost, maxHeld its bound
	// (Options.MaxHeldBytes; 0: none), reorderWindow how long a hold
	// lasts (negative: holes are given up at once).
	holds         holdQueue
	lastAccepted  *stream // the stream of the last packet Accept counted (expireHolds)
	heldBytes     int64
	maxHeld       int64
	reorderWindow time.Duration

	flushing  string // close reason while the assembler flushes
	deferring bool
	events    []event
	arena     []byte
}

type pendingConn struct {
	key      connKey
	src, dst netip.AddrPort
	index    int // the Index of the connection: -1 for the next one
	file     int // Conn.File
}

// retiredConn is an entry of runner.retired (and of its ring).
type retiredConn struct {
	key   connKey
	index int
	gen   int // when it was retired: an older order entry is stale
}

// maxClosed bounds the connections closed by FIN or RST that stay in the
// connection table (runner.closed), so that a late packet without bytes
// (the last ACK, a retransmitted FIN) still counts to its connection's
// Stats: the oldest is forgotten (moved to runner.retired) once more are
// closed, or closedLinger after it closed, whichever comes first. A closed
// stream, its Conn and the handler's copy take about 700 bytes, so these
// hold under 1 MiB however many connections a capture opens; a late
// packet without bytes on a forgotten 4-tuple is not counted, one with
// bytes opens the connection again under its Index.
const maxClosed = 1024

// maxRetired bounds runner.retired (about 100 bytes an entry): a 4-tuple
// forgotten before that many others is numbered anew if it shows up again.
const maxRetired = 1 << 14

// forget removes s, closed by FIN or RST closedLinger ago (or maxClosed
// connections ago), from the
// connection table and remembers its Index for its 4-tuple.
func (r *runner) forget(s *stream) {
	if r.conns[s.key] != s {
		return
	}
	r.deleteConn(s.key)
	if r.retired == nil {
		r.retired = make(map[connKey]retiredConn)
	}
	r.retiredGen++
	rc := retiredConn{key: s.key, index: s.conn.Index, gen: r.retiredGen}
	if len(r.retiredRing) < maxRetired {
		r.retiredRing = append(r.retiredRing, rc)
	} else {
		old := r.retiredRing[r.retiredNext]
		if r.retired[old.key].gen == old.gen {
			delete(r.retired, old.key)
		}
		r.retiredRing[r.retiredNext] = rc
		r.retiredNext = (r.retiredNext + 1) % maxRetired
	}
	r.retired[s.key] = rc
}

func newRunner(opts Options, h Handler) *runner {
	segs, _ := h.(SegmentHandler)
	r := &runner{
		opts:          opts,
		h:             h,
		segs:          segs,
		conns:         make(map[connKey]*stream),
		ctx:           newPktCtx(),
		synCtx:        newPktCtx(),
		bufferTimeout: opts.BufferTimeout,
		seed:          maphash.MakeSeed(),
	}
	if r.bufferTimeout <= 0 {
		r.bufferTimeout = DefaultBufferTimeout
	}
	r.dec.configure(opts, r.bufferTimeout)
	r.reorderWindow = opts.ReorderWindow
	if r.reorderWindow == 0 {
		r.reorderWindow = DefaultReorderWindow
	}
	switch m := opts.MaxRecentBytes; {
	case m == 0:
		r.wins.max = DefaultMaxRecentBytes
	case m > 0:
		r.wins.max = m
	}
	switch m := opts.MaxHeldBytes; {
	case m == 0:
		r.maxHeld = DefaultMaxHeldBytes
	case m > 0:
		r.maxHeld = m
	}
	switch m := opts.MaxConnectionMemory; {
	case m == 0:
		r.maxOpen = int(DefaultMaxConnectionMemory / ConnCost)
	case m > 0:
		r.maxOpen = int(max(m/ConnCost, 16))
	}
	r.pool = gpr.NewStreamPool(r)
	r.asm = gpr.NewAssembler(r.pool)
	r.asm.MaxBufferedPagesPerConnection = limit(opts.MaxBufferedPagesPerConn, DefaultMaxBufferedPagesPerConn)
	r.asm.MaxBufferedPagesTotal = limit(opts.MaxBufferedPagesTotal, DefaultMaxBufferedPagesTotal)
	return r
}

func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0 // the assembler's "no limit"
	}
	return v
}

// assemble hands one decoded TCP segment (see decoder.decode) to the
// assembler, after a flush pass when one is due.
func (r *runner) assemble(p *pkt) {
	r.frame, r.ipID = p.frame, p.ipID
	// The fixed header only: the assembler uses no option, and parsing
	// them (layers.TCP.DecodeFromBytes) is a good part of its cost.
	copy(r.hdr[:], p.seg[:20])
	r.hdr[12] = 5<<4 | r.hdr[12]&0x0F
	if err := r.tcp.DecodeFromBytes(r.hdr[:], gopacket.NilDecodeFeedback); err != nil {
		// Not expected: decode checked the header.
		r.sum.DecodeErrors += p.frames
		r.sum.TCPPackets -= p.frames
		return
	}
	r.tcp.DataOffset = uint8(p.hl / 4)
	r.tcp.Contents, r.tcp.Payload = p.seg[:p.hl], p.seg[p.hl:]
	plen := p.plen
	if len(r.tcp.Payload) > plen {
		r.tcp.Payload = r.tcp.Payload[:plen]
	}
	captured := len(r.tcp.Payload)

	ci := p.ci
	now := ci.Timestamp
	r.now = now
	if last := r.lastAccepted; len(r.holds) > 0 || last != nil {
		r.lastAccepted = nil
		r.expireHolds(now, last)
	}
	if p.flush {
		r.flush(now)
	} else if len(r.reset) > 0 {
		r.closeReset(now.Add(-resetLinger))
	}

	src := netip.AddrPortFrom(addrFrom(p.src), uint16(r.tcp.SrcPort))
	dst := netip.AddrPortFrom(addrFrom(p.dst), uint16(r.tcp.DstPort))
	key := makeKey(src, dst)
	syn := r.tcp.SYN && !r.tcp.ACK
	index := -1
	s := r.conns[key]
	deletes := r.deletes
	if s == nil {
		if r.opts.Filter != nil && !r.opts.Filter(src, dst) {
			r.sum.Filtered++
			return
		}
		if r.maxOpen > 0 && r.open >= r.maxOpen {
			r.evictIdle(now)
			s, deletes = r.conns[key], r.deletes
		}
	}
	if s == nil {
		if rc, ok := r.retired[key]; ok && !syn {
			// A late packet of a forgotten connection: without bytes (the
			// last ACK, a retransmitted FIN, a RST) it has nothing to
			// deliver; with bytes the connection opens again under its
			// Index, as Wireshark keeps its tcp.stream.
			if plen == 0 {
				return
			}
			index = rc.index
			delete(r.retired, key)
		}
	} else if s.done {
		if !syn {
			// The end of a closed connection (last ACK, retransmitted FIN).
			s.conn.Stats.Packets++
			r.emitStats(s)
			return
		}
		r.deleteConn(key)
	} else if syn && s.reusedBy(src, gpr.Sequence(r.tcp.Seq)) {
		r.closeReused(s)
	} else {
		if p.cut != nil {
			// Cuts before this packet (CutComment): known before its
			// ACK passes over its peer's. Its own end by its sequence
			// number, its peer's by what it acknowledges.
			d := AtoB
			if src != s.conn.A {
				d = BtoA
			}
			s.half[d].addCuts(p.cut.sent, gpr.Sequence(r.tcp.Seq))
			if r.tcp.ACK {
				s.half[1-d].addCuts(p.cut.received, gpr.Sequence(r.tcp.Ack))
			}
		}
		if s.hold.on {
			d := AtoB
			if src != s.conn.A {
				d = BtoA
			}
			if d == s.hold.dir && !s.half[d].started {
				// The first packet of the awaited direction: it starts
				// there, nothing before will be delivered.
				start := gpr.Sequence(r.tcp.Seq)
				if r.tcp.SYN {
					start = start.Add(1)
				}
				r.releaseBefore(s, start)
			}
		}
		if r.tcp.ACK {
			d := BtoA // the direction this packet acknowledges
			if src != s.conn.A {
				d = AtoB
			}
			r.skipAckedHoles(s, d, gpr.Sequence(r.tcp.Ack))
		}
	}
	r.pending = pendingConn{key: key, src: src, dst: dst, index: index, file: p.file}
	cur := s // nil for a new connection
	if r.deletes != deletes {
		cur = r.conns[key]
	}
	if cur != nil && cur.hold.on {
		d := AtoB
		if src != cur.conn.A {
			d = BtoA
		}
		r.holdBudget(cur, d, plen)
	}

	// A snap-length cut: the payload is padded back to the length the IP
	// header gives (at most 64 KiB), so that the stream's sequence space
	// stays whole and delivery goes on; the padding is reported as a Gap,
	// never delivered. Not when the segment is ahead of the stream, to be
	// buffered: the assembler may copy a buffered segment's bytes over
	// another's, and padding must never reach a buffer. There the cut
	// leaves a hole, given up as any other.
	if plen > captured && !cur.ahead(src, gpr.Sequence(r.tcp.Seq)) {
		r.pad = append(r.pad[:0], r.tcp.Payload...)
		r.pad = slices.Grow(r.pad, plen-captured)[:plen]
		clear(r.pad[captured:])
		r.tcp.Payload = r.pad
	} else {
		plen = captured
	}

	c := r.ctx
	c.ci.Timestamp = now
	c.ci.CaptureLength = ci.CaptureLength
	c.ci.Length = ci.Length
	c.ci.InterfaceIndex = ci.InterfaceIndex
	c.frame = r.frame
	c.seq = gpr.Sequence(r.tcp.Seq)
	if r.tcp.SYN {
		c.seq = c.seq.Add(1)
	}
	c.length = plen
	c.captured = captured
	c.rst = r.tcp.RST

	r.ctxKept = false
	r.finHalf = nil
	r.pastCut = false
	sgs := 0
	if cur != nil {
		sgs = cur.half[0].sgs + cur.half[1].sgs
	}
	r.feeding = true
	r.asm.AssembleWithContext(flowOf(p.src, p.dst), &r.tcp, c)
	r.feeding = false
	if r.ctxKept {
		if cur != nil && !cur.done {
			d := AtoB
			if src != cur.conn.A {
				d = BtoA
			}
			cur.keep(d, c)
		}
		r.ctx = newPktCtx()
	}
	if h := r.finHalf; h != nil && !h.closed && cur != nil && cur.half[0].sgs+cur.half[1].sgs != sgs {
		h.bias++
	}
	if cur != nil && cur.hold.on && !cur.done {
		// The awaited direction may have started (a pure ACK) or
		// reached its marks without bytes delivered.
		r.releaseReached(cur)
	}
	if cur != nil && r.pastCut && !cur.done {
		// A segment after bytes the capture's writer left out: they
		// will not come, the segment is the next to deliver. The hole
		// is a cut (gap, holeParts), given up now rather than when the
		// peer acknowledges it or a flush, so that the segment's bytes
		// are delivered with its own time and frame, not with those of
		// a copy of it that comes before then (a retransmission).
		d := AtoB
		if src != cur.conn.A {
			d = BtoA
		}
		r.skipHoles(cur, d, c.seq, true)
	}
	if cur != nil && r.ctxKept && !cur.done {
		// A segment right at our next byte that the assembler buffered
		// because it still waits for bytes already reported missing (see
		// skipAckedHoles): deliver it now.
		d := AtoB
		if src != cur.conn.A {
			d = BtoA
		}
		if h := &cur.half[d]; h.bias < 0 && h.next == c.seq {
			r.skipHoles(cur, d, c.seq.Add(c.length), true)
		}
	}
}

// ahead reports whether a segment from src starting at seq is beyond the
// next byte its direction expects, so that the assembler will buffer it.
func (s *stream) ahead(src netip.AddrPort, seq gpr.Sequence) bool {
	if s == nil || s.done {
		return false
	}
	d := AtoB
	if src != s.conn.A {
		d = BtoA
	}
	h := &s.half[d]
	if !h.started || h.closed {
		return false
	}
	return h.next.Add(h.bias).Difference(seq) > 0
}

func addrFrom(b []byte) netip.Addr {
	if len(b) == 4 {
		return netip.AddrFrom4([4]byte(b))
	}
	return netip.AddrFrom16([16]byte(b))
}

func flowOf(src, dst []byte) gopacket.Flow {
	if len(src) == 4 {
		return gopacket.NewFlow(layers.EndpointIPv4, src, dst)
	}
	return gopacket.NewFlow(layers.EndpointIPv6, src, dst)
}

// New implements gpr.StreamFactory: the first packet of a connection.
func (r *runner) New(_, _ gopacket.Flow, tcp *layers.TCP, _ gpr.AssemblerContext) gpr.Stream {
	if r.synthetic {
		return nil
	}
	s := &stream{r: r, key: r.pending.key, holdIdx: -1}
	s.conn = &Conn{Index: r.pending.index, File: r.pending.file, A: r.pending.src, B: r.pending.dst, SawSYN: tcp.SYN && !tcp.ACK}
	if tcp.SYN && tcp.ACK {
		// A SYN-ACK before the SYN it answers (a capture merged from two
		// capture points, or written out of order): A is the client all
		// the same, the SYN-ACK's receiver; the assembler's directions
		// are the other way round (stream.flipped).
		s.conn.A, s.conn.B = s.conn.B, s.conn.A
		s.flipped = true
	}
	if s.conn.Index < 0 {
		s.conn.Index = r.nextIndex
		r.nextIndex++
	}
	r.open++
	r.sum.Connections++
	r.sum.PeakOpenConnections = max(r.sum.PeakOpenConnections, r.open)
	r.conns[s.key] = s
	r.emitOpen(s)
	return s
}

// deleteConn removes a connection from the table.
func (r *runner) deleteConn(k connKey) {
	delete(r.conns, k)
	r.deletes++
}

// closeReused ends s because a SYN with a new initial sequence number
// arrived on its 4-tuple (the port was reused and s's end was not
// captured).
func (r *runner) closeReused(s *stream) {
	r.forceReason = CloseReused
	if s.half[AtoB].rst || s.half[BtoA].rst {
		// Reset, and reused before the reset's linger ran out: the RST
		// ended it (abort's own RSTs come after this).
		r.forceReason = CloseRST
	}
	r.abort(s)
	r.forceReason = ""
	if !s.done {
		// Not expected; forget it so that the new connection is numbered.
		r.deleteConn(s.key)
	}
}

// abort delivers what is buffered for s (holes become gaps) and closes
// it. The assembler cannot close one connection on request, so each open
// direction gets a RST at its next expected sequence number.
func (r *runner) abort(s *stream) {
	for d := AtoB; d <= BtoA; d++ {
		h := &s.half[d]
		if h.closed || s.done {
			continue
		}
		var seq gpr.Sequence
		if h.started {
			r.skipHoles(s, d, h.next, false)
			seq = h.next.Add(h.bias)
		}
		r.inject(s, d, seq, tcpFlagRST)
	}
}

// skipAckedHoles gives up the holes of direction d of s that the peer has
// acknowledged (ack): the receiver has those bytes, so no retransmission
// will fill them and the capture simply missed them, unless it wrote
// them late (a capture merged from two capture points, or taken on
// several queues): the hole is held a while first (hold.go). The data
// buffered behind them is delivered then rather than at the next flush.
func (r *runner) skipAckedHoles(s *stream, d Dir, ack gpr.Sequence) {
	h := &s.half[d]
	if !h.started && !h.closed {
		// Not a packet of d yet (its SYN too may come late): the peer's
		// bytes wait for its first, once a connection.
		if !s.heldUnstarted || (s.hold.on && s.hold.dir == d) {
			s.heldUnstarted = true
			if r.holdAcked(s, d, ack) && r.overBudget() {
				r.giveUpAll(s)
			}
		}
		return
	}
	if !h.started || h.closed || h.next.Difference(ack) <= 0 {
		return
	}
	if h.holeValid && h.holeEnd.Difference(ack) < 0 {
		return // the first hole is not acknowledged in full
	}
	if r.holdAcked(s, d, ack) {
		if r.overBudget() {
			r.giveUpAll(s)
		}
		return
	}
	r.giveUpAcked(s, d, ack, r.now)
}

// giveUpAcked gives up the holes of direction d of s up to ack, which the
// peer acknowledged at capture time t.
func (r *runner) giveUpAcked(s *stream, d Dir, ack gpr.Sequence, t time.Time) {
	h := &s.half[d]
	if !h.started || h.closed || h.next.Difference(ack) <= 0 {
		return
	}
	if h.holeValid && h.holeEnd.Difference(ack) < 0 {
		return // the first hole is not acknowledged in full
	}
	r.skipHoles(s, d, ack, true)
	// What is still missing below ack was sent, never captured, and no
	// data behind it is buffered: report it now, in capture order, rather
	// than when the next segment arrives. The assembler does not know: its
	// next sequence number stays behind ours (bias).
	end := ack
	if h.finSeen && h.finEnd.Difference(end) > 0 {
		end = h.finEnd // the FIN takes a sequence number, not a byte
	}
	if n := h.next.Difference(end); n > 0 && n < 1<<30 && !h.closed {
		s.gap(d, int64(n), t)
		h.next = end
		h.bias -= n
	}
}

// skipHoles gives up holes of direction d of s, delivering the data
// buffered behind each, until the stream reaches upTo (when bounded) or
// nothing is buffered.
//
// The assembler has no per-connection flush, but it gives up a
// connection's oldest hole when its page limit is reached: the limit is
// lowered to one page for an empty segment fed just ahead of the hole.
func (r *runner) skipHoles(s *stream, d Dir, upTo gpr.Sequence, bounded bool) {
	h := &s.half[d]
	saved := r.asm.MaxBufferedPagesPerConnection
	r.asm.MaxBufferedPagesPerConnection = 1
	for {
		sgs := h.sgs
		r.inject(s, d, h.next.Add(h.bias+1), 0)
		if h.sgs == sgs || h.closed || (bounded && h.next.Difference(upTo) <= 0) {
			break
		}
	}
	r.asm.MaxBufferedPagesPerConnection = saved
}

// TCP flags (RFC 9293 section 3.1) used by inject.
const tcpFlagRST = 0x04

// inject feeds the assembler a payload-less segment of our own in
// direction d of s. The stream does not count it.
func (r *runner) inject(s *stream, d Dir, seq gpr.Sequence, flags byte) {
	from, to := s.conn.A, s.conn.B
	if d == BtoA {
		from, to = to, from
	}
	var hdr [20]byte
	hdr[0], hdr[1] = byte(from.Port()>>8), byte(from.Port())
	hdr[2], hdr[3] = byte(to.Port()>>8), byte(to.Port())
	hdr[4], hdr[5], hdr[6], hdr[7] = byte(seq>>24), byte(seq>>16), byte(seq>>8), byte(seq)
	hdr[12] = 5 << 4
	hdr[13] = flags
	if err := r.synTCP.DecodeFromBytes(hdr[:], gopacket.NilDecodeFeedback); err != nil {
		return
	}
	c := r.synCtx
	c.ci.Timestamp = s.lastSeen
	c.frame = r.frame
	c.seq = seq
	c.length, c.captured = 0, 0
	c.rst = flags&tcpFlagRST != 0
	fa, ta := from.Addr(), to.Addr()
	var flow gopacket.Flow
	if fa.Is4() {
		a, b := fa.As4(), ta.As4()
		flow = gopacket.NewFlow(layers.EndpointIPv4, a[:], b[:])
	} else {
		a, b := fa.As16(), ta.As16()
		flow = gopacket.NewFlow(layers.EndpointIPv6, a[:], b[:])
	}
	r.synthetic = true
	r.asm.AssembleWithContext(flow, &r.synTCP, c)
	r.synthetic = false
}

// resetLinger is how long, in capture time, a connection one direction of
// which a RST ended waits before its other direction is closed too: the
// peer's segments already in flight when the RST left (sent before it
// arrived) are captured within about a round trip, and are delivered.
// Later, the connection is closed when it was (its close is stamped with
// its last packet's time) and its exchanges left unanswered are printed
// then, not at the next flush (DefaultFlushInterval) or the end of the
// capture.
const resetLinger = 200 * time.Millisecond

// closeReset closes the other direction of the connections in r.reset
// whose RST came at or before cut (r.reset is in RST order).
func (r *runner) closeReset(cut time.Time) {
	n := 0
	for n < len(r.reset) && !r.reset[n].resetAt.After(cut) {
		if s := r.reset[n]; !s.done {
			r.abort(s)
		}
		r.reset[n] = nil
		n++
	}
	r.reset = slices.Delete(r.reset, 0, n)
}

// flush gives up holes older than BufferTimeout, closes idle connections
// and forgets closed 4-tuples, by capture time now.
func (r *runner) flush(now time.Time) {
	r.closeReset(now)
	opt := gpr.FlushOptions{T: now.Add(-r.bufferTimeout)}
	if r.opts.IdleTimeout > 0 {
		opt.TC = now.Add(-r.opts.IdleTimeout)
	}
	r.beginDefer(CloseIdle)
	r.asm.FlushWithOptions(opt)
	r.endDefer()

	cut := now.Add(-closedLinger)
	n := 0
	for n < len(r.closed) && r.closed[n].lastSeen.Before(cut) {
		r.forget(r.closed[n])
		r.closed[n] = nil
		n++
	}
	r.closed = slices.Delete(r.closed, 0, n)
}

// evictIdle closes the tenth of the open connections idle longest
// (CloseFull), so that a new one stays within Options.MaxConnectionMemory.
func (r *runner) evictIdle(now time.Time) {
	seen := make([]time.Time, 0, r.open)
	for _, s := range r.conns {
		if !s.done {
			seen = append(seen, s.lastSeen)
		}
	}
	if len(seen) == 0 {
		return
	}
	slices.SortFunc(seen, time.Time.Compare)
	cut := seen[max(len(seen)/10, 1)-1].Add(1) // those last seen up to the tenth's time
	// Holes older than the cut are given up on the connections closed;
	// on the others, only those past the buffer timeout, as a flush would.
	t := now.Add(-r.bufferTimeout)
	if t.After(cut) {
		t = cut
	}
	before := r.open
	r.beginDefer(CloseFull)
	r.asm.FlushWithOptions(gpr.FlushOptions{T: t, TC: cut})
	r.endDefer()
	r.sum.Evicted += before - r.open
}

// flushAll delivers everything buffered and closes every connection.
func (r *runner) flushAll() {
	r.beginDefer(CloseEOF)
	r.asm.FlushAll()
	r.endDefer()
	clear(r.conns)
	clear(r.closed)
	r.closed = r.closed[:0]
	clear(r.reset)
	r.reset = r.reset[:0]
}

func (r *runner) beginDefer(reason string) {
	r.flushing = reason
	r.deferring = true
}

// endDefer replays the events of a flush, ordered by connection.
func (r *runner) endDefer() {
	r.flushing = ""
	r.deferring = false
	if len(r.events) == 0 {
		return
	}
	slices.SortStableFunc(r.events, func(a, b event) int { return a.s.conn.Index - b.s.conn.Index })
	for i := range r.events {
		e := &r.events[i]
		if e.kind == evData {
			e.ch.Data = r.arena[e.start:e.end]
		}
		r.dispatch(e)
		r.events[i] = event{}
	}
	r.events = r.events[:0]
	r.arena = r.arena[:0]
}

// dispatch makes the handler call of e (its data in e.ch.Data).
func (r *runner) dispatch(e *event) {
	{
		switch e.kind {
		case evData:
			r.callData(e.s, e.dir, e.ch)
		case evGap:
			r.callGap(e.s, e.dir, e.n, e.t)
		case evCut:
			r.callCut(e.s, e.dir, e.n, e.t)
		case evSnapped:
			r.callSnapped(e.s, e.dir, e.n, e.t, e.snap)
		case evGivenUp:
			r.callGivenUp(e.s, e.dir, e.n, e.t)
		case evConflict:
			r.callConflict(e.s, e.dir, Conflict{Offset: e.ch.Offset, Bytes: int(e.n), Frame: e.ch.Frame, First: e.snap.Frame, Time: e.t})
		case evClose:
			r.callClose(e.s, e.reason, e.t)
		}
	}
}

func (r *runner) emitData(s *stream, d Dir, ch Chunk) {
	if r.holding(s, d) {
		data := ch.Data
		ch.Data = nil
		r.holdEvent(s, event{s: s, kind: evData, dir: d, ch: ch}, data)
		return
	}
	if !r.deferring {
		r.callData(s, d, ch)
		return
	}
	start := len(r.arena)
	r.arena = append(r.arena, ch.Data...)
	ch.Data = nil
	r.events = append(r.events, event{s: s, kind: evData, dir: d, ch: ch, start: start, end: len(r.arena)})
}

func (r *runner) emitGap(s *stream, d Dir, n int64, t time.Time) {
	if r.holding(s, d) {
		r.holdEvent(s, event{s: s, kind: evGap, dir: d, n: n, t: t}, nil)
		return
	}
	if !r.deferring {
		r.callGap(s, d, n, t)
		return
	}
	r.events = append(r.events, event{s: s, kind: evGap, dir: d, n: n, t: t})
}

func (r *runner) emitCut(s *stream, d Dir, n int64, t time.Time) {
	if r.holding(s, d) {
		r.holdEvent(s, event{s: s, kind: evCut, dir: d, n: n, t: t}, nil)
		return
	}
	if !r.deferring {
		r.callCut(s, d, n, t)
		return
	}
	r.events = append(r.events, event{s: s, kind: evCut, dir: d, n: n, t: t})
}

func (r *runner) emitClose(s *stream, reason string, t time.Time) {
	r.release(s) // not expected: ReassemblyComplete ended the hold
	if !r.deferring {
		r.callClose(s, reason, t)
		return
	}
	r.events = append(r.events, event{s: s, kind: evClose, reason: reason, t: t})
}

// halfState is the delivery state of one direction.
type halfState struct {
	started bool         // a packet of this direction was accepted
	closed  bool         // the assembler ended it (FIN or RST reached)
	rst     bool         // ... by a RST
	next    gpr.Sequence // sequence number of the next byte to deliver
	offset  int64        // stream offset of the next byte
	synSeen bool
	isn     gpr.Sequence // initial sequence number, if synSeen
	// synAck is the acknowledgement of the SYN-ACK this direction sent,
	// if synAckOK: the peer's initial sequence number plus one.
	synAckOK bool
	synAck   gpr.Sequence
	first    gpr.Sequence // the sequence number it started at
	finSeen  bool
	finEnd   gpr.Sequence // sequence number of the FIN
	// bias is the assembler's next sequence number minus next. It is
	// negative after skipAckedHoles reported a gap the assembler does not
	// know about. It grows by 1 after a gopacket quirk: when a FIN segment
	// leads to delivered data that does not end at the FIN (a FIN ahead of
	// a hole that the page limit gives up; a FIN followed by buffered
	// bytes beyond it), the assembler counts the FIN after that data and
	// leaves the direction open.
	bias int
	sgs  int // scatter-gathers received
	// holeEnd is the lowest sequence number buffered ahead of next, if
	// holeValid: where the first hole ends.
	holeValid bool
	holeEnd   gpr.Sequence
	// kept are the contexts of segments the assembler buffered, by their
	// first sequence number, until deliver hands their bytes on (or
	// finds them behind next once more than keptPurge are kept).
	kept      map[gpr.Sequence]*pktCtx
	keptPurge int
	// recent are the last pieces delivered, recentAt the next to
	// replace: retransmissions are compared with them (conflict.go).
	recent   [recentPieces]piece
	recentAt int
	// win holds the last bytes delivered, when the runner's budget gave
	// it one (window.go).
	win *window
	// resent: a segment of this direction was a retransmission (its
	// window then keeps all it may).
	resent  bool
	ackSeen bool
	maxAck  gpr.Sequence // highest ACK this direction's sender sent
	// cuts are the spans of sequence numbers a marked packet says were
	// left out (CutComment), until a hole passes them: a hole within one
	// is a cut. cutEnd is where the last hole given up as a cut ended,
	// when cutEndOK.
	cuts     []cutSpan
	cutEnd   gpr.Sequence
	cutEndOK bool
}

// stream is one connection; it implements gpr.Stream.
type stream struct {
	// conn and shadow are allocated on their own: handlers keep *Conn
	// after the run (the stats collector keys connections by it), and a
	// pointer into the stream would keep the stream, its runner, the
	// assembler's pools and the capture reader alive with it.
	conn *Conn
	// shadow is the Conn the handler sees in pipelined mode: the
	// handler's goroutine updates its Stats and SawSYN from the snapshot
	// carried with each call, while the assembler updates conn.
	shadow   *Conn
	r        *runner
	key      connKey
	half     [2]halfState
	flow     [2]flowState // segment marks and RTT (segments.go)
	lastSeen time.Time
	resetAt  time.Time // the capture time of the RST that put it in runner.reset
	hold     holdState // an acknowledged hole held (hold.go)
	holdIdx  int       // its index in runner.holds, -1 when not holding
	// flipped: the connection's first packet was a SYN-ACK, so A is its
	// receiver and the assembler's client-to-server direction is BtoA.
	flipped bool
	// heldUnstarted: a direction was held before its first packet
	// (skipAckedHoles), which is done once.
	heldUnstarted bool
	done          bool // Close was called
}

func dirOf(d gpr.TCPFlowDirection) Dir {
	if d == gpr.TCPDirClientToServer {
		return AtoB
	}
	return BtoA
}

// dirOf is the direction of s the assembler's direction d is.
func (s *stream) dirOf(d gpr.TCPFlowDirection) Dir {
	if s.flipped {
		return 1 - dirOf(d)
	}
	return dirOf(d)
}

// reusedBy reports whether a SYN from src with sequence number seq starts
// a new connection on s's 4-tuple rather than repeating s's own SYN.
func (s *stream) reusedBy(src netip.AddrPort, seq gpr.Sequence) bool {
	d := AtoB
	if src != s.conn.A {
		d = BtoA
	}
	h := &s.half[d]
	if !h.started {
		return false // a late SYN of this very connection
	}
	if peer := &s.half[1-d]; !h.synSeen && (peer.synAckOK && peer.synAck == seq.Add(1) || inWindow(seq.Add(1), h.first)) {
		// The SYN the peer's SYN-ACK answered, or just before the first
		// segment seen, written after the packets that followed it (a
		// capture merged from two capture points, several NIC queues).
		return false
	}
	return !(h.synSeen && h.isn == seq)
}

// inWindow reports whether b is at or at most 64 KiB after a: a new
// connection's random initial sequence number falls there by chance once
// in 65536.
func inWindow(a, b gpr.Sequence) bool {
	n := a.Difference(b)
	return n >= 0 && n < 1<<16
}

// Accept implements gpr.Stream. It accepts every packet (and forces the
// start of a direction at its first packet, SYN or not) and keeps the
// counters.
func (s *stream) Accept(tcp *layers.TCP, ci gopacket.CaptureInfo, dir gpr.TCPFlowDirection, nextSeq gpr.Sequence, start *bool, ac gpr.AssemblerContext) bool {
	if nextSeq == invalidSeq {
		*start = true
	}
	r := s.r
	if r.synthetic {
		return true
	}
	d := s.dirOf(dir)
	h := &s.half[d]
	st := &s.conn.Stats
	st.Packets++
	if s.hold.on {
		r.lastAccepted = s
	}
	if ci.Timestamp.After(s.lastSeen) {
		s.lastSeen = ci.Timestamp
	}
	seq := gpr.Sequence(tcp.Seq)
	if tcp.SYN {
		if !tcp.ACK {
			s.conn.SawSYN = true
		}
		if !h.synSeen {
			h.synSeen, h.isn = true, seq
			if tcp.ACK {
				h.synAckOK, h.synAck = true, gpr.Sequence(tcp.Ack)
			}
		}
		seq = seq.Add(1)
	}
	if tcp.ACK {
		ack := gpr.Sequence(tcp.Ack)
		if !h.ackSeen || h.maxAck.Difference(ack) > 0 {
			h.ackSeen, h.maxAck = true, ack
		}
	}
	if h.closed {
		// A RST after this direction's FIN (a client that closed, then
		// got data it no longer reads: Linux answers with a RST) aborts
		// the connection, the peer's direction too (RFC 9293 3.10.7.4);
		// the assembler drops it, the half being closed. At the FIN's
		// sequence number or the one after (RFC 5961: in the window),
		// it closes the other direction resetLinger later, as a RST at
		// the stream's next byte does (ReassembledSG).
		if tcp.RST && h.finSeen && !h.rst && (seq == h.finEnd || seq == h.finEnd.Add(1)) {
			h.rst = true
			if !s.half[1-d].closed {
				s.resetAt = r.now
				r.reset = append(r.reset, s)
			}
		}
		// Bytes resent after the direction ended (a RST, then the
		// request again with other bytes, answered: the capture
		// mixes two streams) are compared with those delivered too.
		resent := false
		if n := len(tcp.Payload); n > 0 && !tcp.RST && seq.Difference(h.next) > 0 {
			st.Retransmissions++
			resent = true
			if c := asCtx(ac); c != nil {
				s.compare(d, seq, tcp.Payload[:min(n, c.captured)], c.frame, ci.Timestamp)
			}
		}
		s.observe(tcp, ci.Timestamp, d, seq, 0, resent, false)
		return true
	}
	n := len(tcp.Payload)
	var retrans, beyond bool // for the segment marks (segments.go)
	if nextSeq == invalidSeq {
		if !h.started {
			h.started, h.next, h.first = true, seq, seq
		}
	} else {
		// h.next is kept by ReassembledSG, not copied from nextSeq: the
		// assembler's count can be one too high (see halfState.bias).
		if tcp.FIN {
			r.finHalf = h
		}
		if n > 0 {
			ahead := nextSeq.Difference(seq)
			switch {
			case ahead < 0 || nextSeq.Difference(seq.Add(n)) <= 0:
				st.Retransmissions++
				retrans = true
				h.resent = true
				if c := asCtx(ac); c != nil {
					// Its captured bytes, not the padding of a snap cut.
					s.compare(d, seq, tcp.Payload[:min(n, c.captured)], c.frame, ci.Timestamp)
				}
			case ahead > 0 && h.bias < 0 && seq == h.next && h.cutEndOK && h.cutEnd == seq:
				// Right after a hole given up as a cut without the
				// assembler (skipAckedHoles): in order, as it was in
				// the capture cut; the assembler buffers it, packet
				// delivers it.
				r.ctxKept = true
			case ahead > 0 && h.bias < 0 && seq == h.next:
				// Right after a hole given up at once because the
				// peer acknowledged it (skipAckedHoles: sent, never
				// captured): the next bytes of the stream, held up by
				// no retransmission, so not out of order; the
				// assembler buffers it, packet delivers it.
				r.ctxKept = true
			case ahead > 0 && h.cutCovers(h.next, seq):
				// Beyond bytes left out on purpose, not lost: in
				// order, as it was in the capture cut; assemble
				// gives the hole up once the assembler buffered it.
				r.pastCut = true
				r.ctxKept = true
				if !h.holeValid || h.holeEnd.Difference(seq) < 0 {
					h.holeValid, h.holeEnd = true, seq
				}
			case ahead > 0:
				st.OutOfOrder++
				beyond = true
				r.ctxKept = true
				if !h.holeValid || h.holeEnd.Difference(seq) < 0 {
					h.holeValid, h.holeEnd = true, seq
				}
			}
		}
	}
	if tcp.FIN && (nextSeq == invalidSeq || nextSeq.Difference(seq.Add(n)) >= 0) {
		h.finSeen, h.finEnd = true, seq.Add(n)
	}
	s.observe(tcp, ci.Timestamp, d, seq, n, retrans, beyond)
	return true
}

// ReassembledSG implements gpr.Stream: in-order bytes of one direction,
// possibly after a hole, from one or more packets.
func (s *stream) ReassembledSG(sg gpr.ScatterGather, ac gpr.AssemblerContext) {
	dir, _, end, skip := sg.Info()
	d := s.dirOf(dir)
	h := &s.half[d]
	total, _ := sg.Lengths()
	h.sgs++
	// The sequence number of the first byte: the assembler counts skip
	// from its own next sequence number, h.next+h.bias. A negative skip
	// means it has none yet (never after the forced start).
	first := h.next
	if skip >= 0 {
		first = h.next.Add(h.bias + skip)
	}
	off := 0
	// The peer's calls held behind what this direction already reached
	// go first: its bytes from here may answer them (hold.go).
	held := s.hold.on && s.hold.dir == d
	if held {
		s.r.releaseReached(s)
	}
	switch n := h.next.Difference(first); {
	case n > 0:
		t := s.lastSeen
		if c := s.ctxOf(sg, total, ac); c != nil {
			t = c.ci.Timestamp
		}
		// A skip during a captured packet's assembly is the assembler
		// giving up the oldest hole: the out-of-order budget was
		// reached (budget.go). Our own skips (inject) and flushes are
		// not made while feeding.
		s.gapBy(d, int64(n), t, skip > 0 && s.r.feeding && !s.r.synthetic)
		h.next = first
		if held {
			s.r.releaseReached(s)
		}
	case n < 0:
		// Bytes before the next expected one: delivered already, or
		// reported as a gap already (see skipAckedHoles).
		off = min(-n, total)
	}
	if off < total {
		s.deliver(sg, d, off, total)
	}
	h.bias = h.next.Difference(first.Add(total)) // the assembler's next minus ours
	if h.holeValid && h.next.Difference(h.holeEnd) <= 0 {
		h.holeValid = false
	}
	if end {
		h.closed = true
		if c := asCtx(ac); c != nil && c.rst {
			h.rst = true
			if !s.half[1-d].closed && !s.r.synthetic {
				s.resetAt = s.r.now
				s.r.reset = append(s.r.reset, s)
			}
		}
	}
	if s.hold.on && s.hold.dir == d {
		s.r.releaseReached(s) // the late bytes arrived: the held calls follow them
	}
}

// ctxOf returns the context of the first byte of sg, or ac's.
func (s *stream) ctxOf(sg gpr.ScatterGather, total int, ac gpr.AssemblerContext) *pktCtx {
	if total > 0 {
		if c := ctxAt(sg, 0); c != nil {
			return c
		}
	}
	return asCtx(ac)
}

// deliver calls Data once per packet piece in sg[off:total].
func (s *stream) deliver(sg gpr.ScatterGather, d Dir, off, total int) {
	data := sg.Fetch(total)
	h := &s.half[d]
	seq := h.next
	// One piece (the usual in-order packet): every byte is its packet's.
	chunks := sg.Stats().Chunks
	single := chunks == 1
	// Many pieces (the segments buffered behind a hole): ctxAt walks the
	// pieces from the first, so looking each up costs time quadratic in
	// their number (minutes for 256 MiB behind a hole). The contexts of
	// buffered segments are found by their first sequence number
	// (halfState.kept) instead, ctxAt only for a piece that starts
	// elsewhere (a segment trimmed by an overlap).
	many := chunks > keptLookup && len(h.kept) > 0
	for off < total {
		var c *pktCtx
		if many {
			if k := h.kept[seq]; k != nil && k.length > 0 {
				delete(h.kept, seq)
				n := min(k.length, total-off)
				have := n
				if k.captured < k.length {
					have = min(k.captured, n)
				}
				if have > 0 {
					s.data(d, data[off:off+have], seq, k)
				}
				if n > have {
					s.snapGap(d, int64(n-have), k)
				}
				off += n
				seq = seq.Add(n)
				s.releaseAt(d, seq)
				continue
			}
		}
		c = ctxAt(sg, off)
		if c == nil {
			// Not a packet of ours: cannot happen. Deliver unattributed.
			s.data(d, data[off:total], seq, &pktCtx{ci: gopacket.CaptureInfo{Timestamp: s.lastSeen}})
			seq = seq.Add(total - off)
			break
		}
		// The piece runs to the end of c's payload: its sequence numbers
		// say where, the scatter-gather confirms.
		n, inPkt := 0, -1
		if o := c.seq.Difference(seq); o >= 0 && o < c.length {
			n = min(c.length-o, total-off)
			if single || ctxAt(sg, off+n-1) == c {
				inPkt = o
			} else {
				n = 0
			}
		}
		if n == 0 {
			n = runEnd(sg, off, total, c) - off
		}
		have := n
		if c.captured < c.length {
			if inPkt >= 0 {
				have = min(max(c.captured-inPkt, 0), n)
			} else {
				have = max(n-(c.length-c.captured), 0)
			}
		}
		if have > 0 {
			s.data(d, data[off:off+have], seq, c)
		}
		if n > have {
			s.snapGap(d, int64(n-have), c) // only padding is ever missing here
		}
		off += n
		seq = seq.Add(n)
		s.releaseAt(d, seq)
	}
	h.next = seq
	if len(h.kept) > h.keptPurge {
		// Contexts of segments delivered otherwise, or dropped as
		// overlaps: those behind the stream are of no more use.
		for k := range h.kept {
			if h.next.Difference(k) < 0 {
				delete(h.kept, k)
			}
		}
		h.keptPurge = 2*len(h.kept) + keptLookup
	}
}

// releaseAt makes, when direction d's bytes are awaited (hold.go), the
// peer's calls held behind the marks it reached at seq, between the
// pieces of one delivery: the segments buffered behind a hole are
// delivered at once, and each may answer calls held behind the one
// before.
func (s *stream) releaseAt(d Dir, seq gpr.Sequence) {
	if s.hold.on && s.hold.dir == d {
		s.half[d].next = seq
		s.r.releaseReached(s)
	}
}

// keptLookup is the number of pieces of a scatter-gather past which
// deliver finds the packets of buffered segments by sequence number
// (halfState.kept) rather than by ctxAt.
const keptLookup = 64

// keep records c, the context of a segment of direction d that the
// assembler buffered, for deliver.
func (s *stream) keep(d Dir, c *pktCtx) {
	h := &s.half[d]
	if c.length == 0 {
		return
	}
	if h.kept == nil {
		h.kept = make(map[gpr.Sequence]*pktCtx)
	}
	h.kept[c.seq] = c
}

// runEnd returns the end of the run of bytes from off that belong to c.
func runEnd(sg gpr.ScatterGather, off, total int, c *pktCtx) int {
	lo, hi := off+1, total // ctxAt(lo-1) == c; find the largest such lo
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if ctxAt(sg, mid-1) == c {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func (s *stream) data(d Dir, b []byte, seq gpr.Sequence, c *pktCtx) {
	h := &s.half[d]
	ch := Chunk{Data: b, Time: c.ci.Timestamp, Frame: c.frame, Seq: uint32(seq), Offset: h.offset}
	h.remember(s.r.seed, seq, b, c.frame)
	if s.r.wins.max > 0 {
		s.r.wins.keepBytes(h, seq, b, c.frame, s.windowWant(d, len(b)))
	}
	h.offset += int64(len(b))
	s.conn.Stats.Bytes[d] += int64(len(b))
	s.r.emitData(s, d, ch)
}

func (s *stream) gap(d Dir, n int64, t time.Time) {
	s.gapBy(d, n, t, false)
}

// gapBy reports a hole of n bytes of direction d: given up by the
// out-of-order budget when budget (BudgetHandler), else lost; the parts
// of it that the capture's writer left out are cuts either way.
func (s *stream) gapBy(d Dir, n int64, t time.Time, budget bool) {
	h := &s.half[d]
	h.holeParts(n, func(n int64, cut bool) {
		if cut {
			h.offset += n // left out on purpose (CutComment), not lost
			s.r.emitCut(s, d, n, t)
			return
		}
		st := &s.conn.Stats
		st.Gaps++
		if n > 0 {
			st.GapBytes += n
			h.offset += n
		}
		if budget {
			st.GivenUp++
			s.r.emitGivenUp(s, d, n, t)
			return
		}
		s.r.emitGap(s, d, n, t)
	})
}

// endGap reports bytes of direction d that were never captured at its end:
// up to its FIN, or else up to what the peer acknowledged.
func (s *stream) endGap(d Dir) {
	h := &s.half[d]
	if !h.started {
		return
	}
	var end gpr.Sequence
	switch peer := &s.half[1-d]; {
	case h.finSeen:
		end = h.finEnd
	case peer.ackSeen:
		end = peer.maxAck
	default:
		return
	}
	if n := h.next.Difference(end); n > 0 && n < 1<<30 {
		s.gap(d, int64(n), s.lastSeen)
		h.next = end
	}
}

// ReassemblyComplete implements gpr.Stream: both directions are closed.
func (s *stream) ReassemblyComplete(_ gpr.AssemblerContext) bool {
	if s.done {
		return true
	}
	r := s.r
	a, b := &s.half[AtoB], &s.half[BtoA]
	var reason string
	switch {
	case r.forceReason != "":
		reason = r.forceReason
	case a.rst || b.rst:
		reason = CloseRST
	case (a.closed || a.finSeen) && (b.closed || b.finSeen):
		reason = CloseFIN
	case r.flushing != "":
		reason = r.flushing
	default:
		reason = CloseEOF
	}
	s.endGap(AtoB)
	s.endGap(BtoA)
	r.release(s)
	for d := range s.half {
		if w := s.half[d].win; w != nil {
			r.wins.release(w)
		}
	}
	s.done = true
	r.open--
	r.emitClose(s, reason, s.lastSeen)
	if r.conns[s.key] == s {
		if reason == CloseFIN || reason == CloseRST {
			r.closed = append(r.closed, s)
			// Bounded by count as well as by capture time: a broker's
			// capture closes thousands of connections a minute, and each
			// closed stream kept costs about 700 bytes of live heap.
			for len(r.closed) > maxClosed {
				r.forget(r.closed[0])
				r.closed[0] = nil
				r.closed = r.closed[1:]
			}
		} else {
			r.deleteConn(s.key) // Options.IdleTimeout: later packets start a new connection
		}
	}
	return true
}
