package reassembly

// The pipeline: Run and ReadFiles use three goroutines unless
// Options.Synchronous is set.
//
//	reader     src.ReadPacket → decoder.decode (link, IP, defragmentation,
//	           TCP header) → pkt descriptors in a pktBatch
//	assembler  runner.assemble → gopacket's Assembler → handler calls
//	           recorded (recorder) into a callBatch
//	caller     callBatch replayed on the Handler, in recorded order
//
// Batches travel on channels and come back on free lists: a fixed number
// of batches per stage bounds the memory in flight (a few MiB) and the
// steady state allocates nothing. The order of handler calls is the order
// of recording, which is that of the synchronous mode.
//
// Packets are copied once, into their batch (gopacket/pcapgo's readers
// reuse their buffer from one packet to the next). Data that lies in a
// packet batch is handed to the handler from there, the call batch holding
// a reference to the packet batch until it has been replayed (pins); other
// Data (out-of-order data from the assembler's pages) is copied into the
// call batch.
//
// Promptness for live sources: the reader cannot know whether ReadPacket
// will block, so a source that is not a capture file shares the batch it
// fills under a mutex, and the assembler takes it, however small, when it
// has nothing else to do (feed.next). The assembler hands its recorded
// calls over before it waits for packets.

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// pkt is one decoded TCP segment on its way to the assembler.
type pkt struct {
	ci     gopacket.CaptureInfo // without AncillaryData
	frame  int64                // frame number (of the last fragment)
	frames int64                // frames the segment came in (IP fragments)
	file   int                  // Conn.File of a connection it opens
	src    []byte               // source IP address, 4 or 16 bytes
	dst    []byte               // destination IP address
	seg    []byte               // TCP header and captured payload
	hl     int                  // TCP header length
	ipID   int32                // IPv4 identification, -1 none (decoded.ipID)
	plen   int                  // payload length declared by the IP header; 0 for a RST
	flush  bool                 // a flush pass is due before it
	cut    *cutMark             // the cuts before it (CutComment), nil none
}

// decoder is the reading stage: it numbers frames, decodes link, IP and
// TCP headers, rebuilds fragmented datagrams, keeps the counts of
// Summary that concern frames and runs the flush clock.
type decoder struct {
	sum       Summary
	frame     int64
	dec       decoded
	defrag    defragmenter
	file      int          // Conn.File, unless files is set
	files     *multiSource // set with Options.Concatenate
	now       time.Time    // capture time of the last TCP segment
	lastFlush time.Time

	flushEvery    time.Duration
	bufferTimeout time.Duration

	// keepFrames has decode note, in frames, the frame numbers of the
	// IP fragments a segment came in (EachPacket: a cut file writes them
	// all); own is the frame of the fragment at hand.
	keepFrames bool
	frames     []int64
	own        [1]int64
	// addrs holds the addresses of a fragment found inside a rebuilt
	// datagram (source, then destination, 16 bytes each).
	addrs [32]byte
}

// configure sets up a decoder as a runner with opts and bufferTimeout
// (Options.BufferTimeout or its default) decodes.
func (d *decoder) configure(opts Options, bufferTimeout time.Duration) {
	d.bufferTimeout, d.flushEvery = bufferTimeout, opts.FlushInterval
	d.dec.tun = opts.tunnelConfig()
	d.defrag.maxBytes = opts.MaxFragmentMemory
	if d.defrag.maxBytes <= 0 {
		d.defrag.maxBytes = DefaultMaxFragmentMemory
	}
	if d.flushEvery <= 0 {
		d.flushEvery = DefaultFlushInterval
	}
}

// decode reads one frame. It reports whether the frame completes a TCP
// segment, described in p; p's slices alias data (or the defragmenter's
// buffer) and are valid until the next call.
func (d *decoder) decode(data []byte, ci gopacket.CaptureInfo, link layers.LinkType, p *pkt) bool {
	d.frame++
	d.sum.Packets++
	d.sum.Bytes += int64(len(data))
	if ci.Length > len(data) {
		d.sum.Truncated++
		d.sum.TruncatedAt = max(d.sum.TruncatedAt, len(data))
	}
	d.dec.ipID = -1
	res := decodeFrame(link, data, &d.dec)
	frames := int64(1) // the frames this segment came in: its fragments
	whole := false     // the frame completes a fragmented datagram
	d.frames = d.frames[:0]
	for res == resFragment {
		proto := d.dec.frag.proto
		switch proto {
		case 6, ipprotoIPIP, ipprotoIPv6, ipprotoGRE, ipprotoUDP: // TCP and tunnels
		default:
			d.sum.Fragments++
			return false
		}
		if whole {
			// A fragment inside a tunnel datagram just rebuilt: its
			// addresses lie in the defragmenter's buffer, which
			// rebuilding its own datagram reuses.
			n := copy(d.addrs[:16], d.dec.srcIP)
			m := copy(d.addrs[16:], d.dec.dstIP)
			d.dec.srcIP, d.dec.dstIP = d.addrs[:n:n], d.addrs[16:16+m:16+m]
		}
		if d.keepFrames {
			// An inner fragment came in its tunnel datagram's frames.
			d.own[0] = d.frame
			d.dec.frag.frames = d.own[:]
			if whole {
				d.dec.frag.frames = d.frames
			}
		}
		seg, n, ok := d.defrag.add(d.dec.srcIP, d.dec.dstIP, &d.dec.frag, ci.Timestamp)
		d.sum.Fragments += d.defrag.takeLost()
		d.sum.FragmentConflicts += d.defrag.takeConflicts()
		if !ok {
			return false
		}
		frames = int64(n)
		whole = true
		if d.keepFrames {
			d.frames = append(d.frames[:0], d.defrag.frames...)
		}
		// The segment belongs to the frame of its last fragment, where
		// Wireshark shows it. A tunnel's datagram is decapsulated now,
		// which may end in a fragment of the inner packet.
		res = decodeIPPayload(proto, seg, len(seg), &d.dec)
	}
	if res == resNotTCP && whole {
		d.sum.Fragments += frames // fragments of UDP that is no tunnel
		return false
	}
	if d.dec.depth > 0 && res == resTCP {
		d.sum.Tunnelled++
	}
	var hl int
	if res == resTCP {
		hl, res = tcpHeaderLen(d.dec.seg, d.dec.segLen)
	}
	switch {
	case res == resTCP:
	case whole:
		d.sum.DecodeErrors += frames // a rebuilt segment with a bad header
		return false
	case res == resNotTCP:
		d.sum.NonTCP++
		return false
	case res == resUnsupportedLink:
		d.sum.UnsupportedLink++
		return false
	case res == resTooDeep:
		d.sum.TooDeep++
		d.sum.DecodeErrors++
		return false
	case res == resTooManyTags:
		d.sum.TooManyTags++
		d.sum.DecodeErrors++
		return false
	case res == resTooManyLabels:
		d.sum.TooManyLabels++
		d.sum.DecodeErrors++
		return false
	case res == resTooManyHeaders:
		d.sum.TooManyHeaders++
		d.sum.DecodeErrors++
		return false
	default:
		d.sum.DecodeErrors++
		if res == resShort && ci.Length > len(data) {
			d.sum.HeadersSnapped++ // the snap length cut it, not a bad header
		}
		return false
	}
	// tcpHeaderLen checked what layers.TCP.DecodeFromBytes can reject.
	d.sum.TCPPackets += frames

	seg := d.dec.seg
	plen := d.dec.segLen - hl
	if seg[13]&tcpFlagRST != 0 {
		plen = 0 // a RST's payload is diagnostic text, not stream data (RFC 9293 3.5.3)
	}
	captured := min(len(seg)-hl, plen)

	now := ci.Timestamp
	d.now = now
	p.flush = false
	switch since := now.Sub(d.lastFlush); {
	case d.lastFlush.IsZero() || since < -d.flushEvery:
		// The first packet, or the clock went back (a bad timestamp
		// before): restart the flush clock rather than never flush again.
		d.lastFlush = now
	case since >= d.flushEvery:
		p.flush = true
		d.defrag.expire(now.Add(-d.bufferTimeout))
		d.sum.Fragments += d.defrag.takeLost()
		d.lastFlush = now
	}

	p.ci = gopacket.CaptureInfo{Timestamp: now, CaptureLength: ci.CaptureLength, Length: ci.Length, InterfaceIndex: ci.InterfaceIndex}
	p.cut = nil
	written := false
	if len(ci.AncillaryData) > 0 {
		p.cut, written = markedCut(&ci)
	}
	p.frame = d.frame
	p.frames = frames
	p.file = d.file
	if d.files != nil {
		p.file = d.files.current()
	}
	p.src, p.dst = d.dec.srcIP, d.dec.dstIP
	p.seg = seg[:hl+captured]
	p.hl = hl
	p.plen = plen
	p.ipID = d.dec.ipID
	if whole || written {
		p.ipID = -1
	}
	return true
}

// packet decodes and assembles one frame (synchronous mode).
func (r *runner) packet(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) {
	if r.dec.decode(data, ci, link, &r.p) {
		r.assemble(&r.p)
	}
}

// finish gives up the datagrams still waiting for fragments at the end
// of input.
func (d *decoder) finish() {
	d.defrag.dropAll()
	d.sum.Fragments += d.defrag.takeLost()
}

// Batch bounds. A pktBatch holds up to pktBatchLen segments or about
// pktBatchBytes bytes (one larger segment alone); a callBatch up to
// callBatchLen calls or about callBatchBytes bytes of Data.
const (
	pktBatchLen     = 256
	pktBatchBytes   = 320 << 10
	callBatchLen    = 512
	callBatchBytes  = 256 << 10
	batchesPerStage = 4
	// pktBatches are more: callBatches in flight pin some.
	pktBatches = 6
)

// pktBatch is a batch of segments with their bytes.
type pktBatch struct {
	pkts []pkt
	buf  []byte
	// refs counts the holders of the batch: the assembler, and each
	// callBatch whose Data calls alias buf (recorder.add). The last
	// release returns it to the free list.
	refs atomic.Int32
	// The last batch of the input carries the reader's results.
	last bool
	err  error
	dec  *decoder
}

// fits reports whether p can be added without moving buf.
func (b *pktBatch) fits(p *pkt) bool {
	if len(b.pkts) == 0 {
		return true
	}
	return len(b.pkts) < pktBatchLen && len(b.buf)+len(p.src)+len(p.dst)+len(p.seg) <= cap(b.buf)
}

// add copies p into b; fits(p) must hold.
func (b *pktBatch) add(p *pkt) {
	need := len(p.src) + len(p.dst) + len(p.seg)
	if len(b.pkts) == 0 && need > cap(b.buf) {
		b.buf = make([]byte, 0, need) // a segment above pktBatchBytes
	}
	q := *p
	n := len(b.buf)
	b.buf = append(b.buf, p.src...)
	b.buf = append(b.buf, p.dst...)
	b.buf = append(b.buf, p.seg...)
	q.src = b.buf[n : n+len(p.src) : n+len(p.src)]
	n += len(p.src)
	q.dst = b.buf[n : n+len(p.dst) : n+len(p.dst)]
	n += len(p.dst)
	q.seg = b.buf[n:len(b.buf):len(b.buf)]
	b.pkts = append(b.pkts, q)
}

func (b *pktBatch) reset() {
	clear(b.pkts)
	b.pkts = b.pkts[:0]
	b.buf = b.buf[:0]
	b.last, b.err, b.dec = false, nil, nil
}

// feed carries pktBatches from the reader to the assembler.
type feed struct {
	full chan *pktBatch
	free chan *pktBatch
	quit <-chan struct{}
	// share is set for sources other than capture files: the batch being
	// filled (cur) is shared under mu, and waiting tells the reader that
	// the assembler waits for it.
	share   bool
	mu      sync.Mutex
	cur     *pktBatch
	waiting bool
}

func newFeed(share bool, quit <-chan struct{}) *feed {
	f := &feed{
		full:  make(chan *pktBatch, pktBatches),
		free:  make(chan *pktBatch, pktBatches),
		quit:  quit,
		share: share,
	}
	for range pktBatches {
		b, _ := pktBatchPool.Get().(*pktBatch)
		if b == nil {
			b = new(pktBatch) // its buffers are made at its first use
		}
		f.free <- b
	}
	return f
}

// Batches are kept from one run to the next: ReadFiles runs a pipeline
// per file.
var pktBatchPool, callBatchPool sync.Pool

// read is the reader goroutine: it decodes src into batches until the
// end of input, an error, ctx's end or quit.
func (f *feed) read(ctx context.Context, src PacketSource, d *decoder) {
	var p pkt
	err := eachPacket(ctx, src, func(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) bool {
		return !d.decode(data, ci, link, &p) || f.put(&p)
	})
	if err == errStopped {
		return // quit
	}
	d.finish()
	f.end(d, err)
}

// put adds p to the current batch. It returns false on quit.
func (f *feed) put(p *pkt) bool {
	if f.share {
		f.mu.Lock()
		defer f.mu.Unlock()
	}
	if f.cur != nil && !f.cur.fits(p) {
		f.full <- f.cur // never blocks: the channel holds every batch
		f.cur = nil
	}
	if f.cur == nil && !f.get() {
		return false
	}
	f.cur.add(p)
	if f.waiting || len(f.cur.pkts) == pktBatchLen {
		f.full <- f.cur
		f.cur, f.waiting = nil, false
	}
	return true
}

// get sets cur to a free batch. With share set, f.mu is held, and
// released while waiting: only the reader sets cur.
func (f *feed) get() bool {
	if f.share {
		f.mu.Unlock()
	}
	var b *pktBatch
	select {
	case b = <-f.free:
	case <-f.quit:
	}
	if f.share {
		f.mu.Lock()
	}
	if b == nil {
		return false
	}
	b.refs.Store(1) // the assembler's
	if cap(b.buf) == 0 {
		b.buf = make([]byte, 0, pktBatchBytes)
		b.pkts = make([]pkt, 0, pktBatchLen)
	}
	f.cur = b
	return true
}

// end sends the last batch, with the decoder and the input's error.
func (f *feed) end(d *decoder, err error) {
	if f.share {
		f.mu.Lock()
		defer f.mu.Unlock()
	}
	if f.cur == nil && !f.get() {
		return
	}
	f.cur.last, f.cur.err, f.cur.dec = true, err, d
	f.full <- f.cur
	f.cur = nil
}

// next returns the next batch for the assembler, or nil on quit. idle is
// called before it waits.
func (f *feed) next(idle func()) *pktBatch {
	select {
	case b := <-f.full:
		return b
	default:
	}
	if f.share {
		idle()
		f.mu.Lock()
		select {
		case b := <-f.full:
			f.mu.Unlock()
			return b
		default:
		}
		if b := f.cur; b != nil && len(b.pkts) > 0 {
			f.cur = nil
			f.mu.Unlock()
			return b
		}
		f.waiting = true
		f.mu.Unlock()
	} else {
		idle()
	}
	select {
	case b := <-f.full:
		return b
	case <-f.quit:
		return nil
	}
}

// release drops a hold on b.
func (f *feed) release(b *pktBatch) {
	if b.refs.Add(-1) == 0 {
		b.reset()
		f.free <- b // never blocks
	}
}

// within reports whether b lies in buf's array (up to its capacity).
func within(b, buf []byte) bool {
	if len(b) == 0 || cap(buf) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= lo && p+uintptr(len(b)) <= lo+uintptr(cap(buf))
}

// Kinds of recorded calls, beside evData, evGap, evClose, evCut,
// evSnapped, evGivenUp and evConflict (its Conflict in n, t, ch and
// snap: conflictOf).
const (
	evOpen uint8 = iota + evConflict + 1
	evStats
	evSegment
)

// call is one recorded handler call.
type call struct {
	c      *Conn
	kind   uint8
	dir    Dir
	sawSYN bool
	sk     SegmentKind // evSegment: the segment's kind (its time, frame and offset in ch, length in n)
	n      int64
	t      time.Time
	ch     Chunk // Data in arena or in a pinned pktBatch
	reason string
	stats  ConnStats
	snap   SnapCut // evSnapped
}

// callBatch is a batch of calls with their Data bytes: copied into
// arena, or left where they are in the pktBatches the batch pins.
type callBatch struct {
	calls []call
	arena []byte
	pins  []*pktBatch
	bytes int // Data bytes, in arena or pinned
	last  bool
}

func (b *callBatch) reset() {
	clear(b.calls)
	b.calls = b.calls[:0]
	b.arena = b.arena[:0]
	clear(b.pins)
	b.pins = b.pins[:0]
	b.bytes = 0
	b.last = false
}

// recorder is the assembler's side of the handler calls.
type recorder struct {
	full chan *callBatch
	free chan *callBatch
	quit <-chan struct{}
	cur  *callBatch
	// pkts is the pktBatch being assembled: Data in its bytes is not
	// copied, the batch is pinned instead.
	pkts *pktBatch
	// stopped is set on quit: calls are dropped from then on.
	stopped bool
}

func newRecorder(quit <-chan struct{}) *recorder {
	c := &recorder{
		full: make(chan *callBatch, batchesPerStage),
		free: make(chan *callBatch, batchesPerStage),
		quit: quit,
	}
	for range batchesPerStage {
		b, _ := callBatchPool.Get().(*callBatch)
		if b == nil {
			b = new(callBatch) // its buffers are made at its first use
		}
		c.free <- b
	}
	return c
}

// get sets cur to a free batch; it returns false on quit.
func (c *recorder) get() bool {
	if c.stopped {
		return false
	}
	select {
	case c.cur = <-c.free:
		if cap(c.cur.calls) == 0 {
			c.cur.calls = make([]call, 0, callBatchLen)
		}
		return true
	case <-c.quit:
		c.stopped = true
		return false
	}
}

// add records one call of s; data is copied.
func (c *recorder) add(s *stream, e call, data []byte) {
	if c.cur == nil && !c.get() {
		return
	}
	b := c.cur
	e.c = s.shadow
	e.stats, e.sawSYN = s.conn.Stats, s.conn.SawSYN
	if e.kind == evData {
		b.bytes += len(data)
		if pk := c.pkts; pk != nil && within(data, pk.buf) {
			if n := len(b.pins); n == 0 || b.pins[n-1] != pk {
				pk.refs.Add(1)
				b.pins = append(b.pins, pk)
			}
			e.ch.Data = data[:len(data):len(data)]
		} else {
			// The arena may move when it grows; the bytes of earlier
			// calls stay where they were.
			n := len(b.arena)
			b.arena = append(b.arena, data...)
			e.ch.Data = b.arena[n:len(b.arena):len(b.arena)]
		}
	}
	b.calls = append(b.calls, e)
	if len(b.calls) == callBatchLen || b.bytes >= callBatchBytes {
		// Bounded by the Data bytes, copied or pinned: a batch that
		// pinned every packet batch would stop the reader until the
		// handler had seen it.
		c.flush()
	}
}

// flush hands the current batch to the handler's goroutine.
func (c *recorder) flush() {
	if c.cur != nil && len(c.cur.calls) > 0 {
		c.full <- c.cur // never blocks
		c.cur = nil
	}
}

// finish sends the last batch.
func (c *recorder) finish() {
	if c.cur == nil && !c.get() {
		return
	}
	c.cur.last = true
	c.full <- c.cur
	c.cur = nil
}

// replay makes the calls of b on h.
func replay(h Handler, b *callBatch) {
	for i := range b.calls {
		e := &b.calls[i]
		c := e.c
		c.Stats, c.SawSYN = e.stats, e.sawSYN
		switch e.kind {
		case evOpen:
			h.Open(c)
		case evData:
			h.Data(c, e.dir, e.ch)
		case evGap:
			h.Gap(c, e.dir, e.n, e.t)
		case evCut:
			cut(h, c, e.dir, e.n, e.t)
		case evSnapped:
			snapped(h, c, e.dir, e.n, e.t, e.snap)
		case evGivenUp:
			givenUp(h, c, e.dir, e.n, e.t)
		case evConflict:
			conflict(h, c, e.dir, conflictOf(e))
		case evClose:
			h.Close(c, e.reason, e.t)
		case evSegment:
			if sh, ok := h.(SegmentHandler); ok {
				sh.Segment(c, e.dir, segmentOf(e))
			}
		}
	}
}

// The runner's handler calls: direct in synchronous mode, recorded
// otherwise.

func (r *runner) emitOpen(s *stream) {
	if r.rec == nil {
		r.h.Open(s.conn)
		return
	}
	s.shadow = new(Conn)
	*s.shadow = *s.conn // before the handler's goroutine can see it
	r.rec.add(s, call{kind: evOpen}, nil)
}

// emitStats records the counts of a closed connection that got another
// packet, so that its Stats keep counting after Close.
func (r *runner) emitStats(s *stream) {
	if r.rec != nil {
		r.rec.add(s, call{kind: evStats}, nil)
	}
}

func (r *runner) callData(s *stream, d Dir, ch Chunk) {
	if r.rec == nil {
		r.h.Data(s.conn, d, ch)
		return
	}
	data := ch.Data
	ch.Data = nil
	r.rec.add(s, call{kind: evData, dir: d, ch: ch}, data)
}

func (r *runner) callGap(s *stream, d Dir, n int64, t time.Time) {
	if r.rec == nil {
		r.h.Gap(s.conn, d, n, t)
		return
	}
	r.rec.add(s, call{kind: evGap, dir: d, n: n, t: t}, nil)
}

func (r *runner) callCut(s *stream, d Dir, n int64, t time.Time) {
	if r.rec == nil {
		cut(r.h, s.conn, d, n, t)
		return
	}
	r.rec.add(s, call{kind: evCut, dir: d, n: n, t: t}, nil)
}

// cut reports a cut to h: as a Cut when h is a CutHandler, else as a Gap.
func cut(h Handler, c *Conn, d Dir, n int64, t time.Time) {
	if ch, ok := h.(CutHandler); ok {
		ch.Cut(c, d, n, t)
		return
	}
	h.Gap(c, d, n, t)
}

func (r *runner) callClose(s *stream, reason string, t time.Time) {
	if r.rec == nil {
		r.h.Close(s.conn, reason, t)
		return
	}
	r.rec.add(s, call{kind: evClose, reason: reason, t: t}, nil)
}

// isFile reports whether src is a capture file, whose reads never wait
// for packets to arrive.
func isFile(src PacketSource) bool {
	switch s := src.(type) {
	case *fileSource, *multiSource:
		return true
	case *filterSource:
		return isFile(s.PacketSource)
	}
	return false
}

// runPipelined is run with a reader goroutine, an assembler goroutine and
// the handler called on the calling goroutine. It returns when every
// handler call is done and both goroutines have ended.
func (r *runner) runPipelined(ctx context.Context, src PacketSource) (err error) {
	quit := make(chan struct{})
	f := newFeed(!isFile(src), quit)
	r.rec = newRecorder(quit)
	var (
		wg       sync.WaitGroup
		stopOnce sync.Once
		failOnce sync.Once
		failed   = make(chan struct{})
		panicked any
	)
	stop := func() { stopOnce.Do(func() { close(quit) }) }
	// A panic on the reading or the reassembly goroutine (in src, in
	// Options.Filter) is raised again on the caller's, as in the
	// synchronous mode.
	guard := func() {
		if v := recover(); v != nil {
			failOnce.Do(func() {
				panicked = v
				close(failed)
			})
		}
	}
	wg.Add(2)
	d := &r.dec
	go func() {
		defer wg.Done()
		defer guard()
		f.read(ctx, src, d)
	}()
	var dsum Summary
	go func() {
		defer wg.Done()
		defer guard()
		for {
			b := f.next(r.rec.flush)
			if b == nil {
				return // quit
			}
			r.rec.pkts = b
			for i := range b.pkts {
				r.assemble(&b.pkts[i])
			}
			r.rec.pkts = nil
			if b.last {
				err = b.err
				dsum = b.dec.sum
				r.frame = b.dec.frame
				f.release(b)
				break
			}
			f.release(b)
			if r.rec.stopped {
				return
			}
		}
		r.flushAll()
		r.rec.finish()
	}()
	defer func() {
		// On a panic the goroutines stop at their next batch.
		stop()
		wg.Wait()
	}()
	for {
		var b *callBatch
		select {
		case b = <-r.rec.full:
		case <-failed:
			stop()
			wg.Wait()
			panic(panicked)
		}
		replay(r.h, b)
		for _, pk := range b.pins {
			f.release(pk)
		}
		last := b.last
		b.reset()
		r.rec.free <- b // never blocks
		if last {
			break
		}
	}
	wg.Wait()
	r.sum.add(dsum)
	// Every batch is back on its free list.
	for range pktBatches {
		pktBatchPool.Put(<-f.free)
	}
	for range batchesPerStage {
		callBatchPool.Put(<-r.rec.free)
	}
	return err
}
