package dissect

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

type cstate uint8

const (
	csUndecided cstate = iota // bytes held until the client's first request shows
	csKafka
	csSkipped
	csTLS
)

// preChunk is a packet's bytes (or a gap) held while a connection is
// undecided.
type preChunk struct {
	dir   reassembly.Dir
	data  []byte
	frame int64
	time  time.Time
	gap   bool
	kind  gapKind // the gap's
	why   string  // the gap's, for gapSnapped (snapWhy)
	n     int64
}

// gapKind says what made a gap.
type gapKind uint8

const (
	gapLost    gapKind = iota // bytes lost, or not known why they are missing
	gapCut                    // left out by the capture's writer (Dissector.Cut)
	gapSnapped                // kept out of the capture by its snap length (Dissector.Snapped)
	gapGivenUp                // given up by the out-of-order budget (Dissector.GivenUp)
)

// conn is the per-connection state: classification, both splitters,
// pending requests, advertised versions and SASL state.
type conn struct {
	d            *Dissector
	c            *reassembly.Conn
	busyAt       int // index in Dissector.busy; -1 when it holds no pending request
	state        cstate
	portA, portB bool // the endpoint is on a Kafka port
	client       reassembly.Dir
	split        [2]*splitter
	// lastCorr is the correlation ID of the latest request whose header
	// was read, if corrSeen: a resync weighs its candidates by it
	// (splitter.corrFits).
	lastCorr   int32
	corrSeen   bool
	pre        []preChunk
	preBytes   int
	preCounted int       // of preBytes, what counts in Dissector.partial
	last       time.Time // time of the latest packet

	pending  pendingQueue // requests awaiting responses, oldest first
	clientID string       // the latest request's client id, reused by the next (ParseRequestHeaderReusing)
	adv      *BrokerVersions
	// used is the latest version requested of each API key on this
	// connection, for guessing what orphans answer; guessed are the APIs
	// and versions earlier orphans on it were found to answer.
	used    []protocol.APIVersion // one per key, in the order first requested
	guessed []protocol.APIVersion
	sasl    saslState
	mech    string // SASL mechanism negotiated by SaslHandshake
	// hsV0: the latest request is a SaslHandshake v0 awaiting its
	// response, asking for mechanism hsMech: the client's next bytes are
	// its first raw token (KIP-43), whether or not the broker has answered.
	hsV0   bool
	hsMech string
	// hsAsked is the mechanism of a SaslHandshake request (any version)
	// not answered yet: a SaslAuthenticate sent before its answer
	// (pipelined) is a token of that mechanism.
	hsAsked string
	tlsSeen bool
	frames  int64    // frames cut on this connection
	tls     *tlsConn // the TLS layer, when the connection is TLS
	tcp     tcpState // segment marks and packet times (tcptiming.go)

	// held are gap events in the broker's bytes waiting for the next
	// response to tell which pending requests they swallowed (gap);
	// gapNote names the gap for the requests lost in it.
	held    []*Event
	gapNote string
	// lossy: bytes were lost, skipped or cut on the connection, or its
	// requests given up, so an orphan response may be explained by that
	// (Problems.Unexplained).
	lossy bool
}

func (c *conn) addrs() (client, broker netip.AddrPort) {
	if c.client == reassembly.AtoB {
		return c.c.A, c.c.B
	}
	return c.c.B, c.c.A
}

// openDetail is the Detail of the connection's EventOpen: "Kafka (how):
// client ADDR:PORT, broker ADDR:PORT", built with one allocation (an event
// per connection, most never shown).
func (c *conn) openDetail(how string) string {
	cl, br := c.addrs()
	var buf [128]byte
	b := append(buf[:0], "Kafka ("...)
	b = append(b, how...)
	b = append(b, "): client "...)
	b = cl.AppendTo(b)
	b = append(b, ", broker "...)
	b = br.AppendTo(b)
	return string(b)
}

// releasePre stops counting the bytes held before the decision in the
// Dissector's partial bytes (they were passed on or dropped).
func (c *conn) releasePre() {
	c.d.partial -= int64(c.preCounted)
	c.preCounted = 0
}

func (c *conn) skip(short, detail string) {
	c.skipWith(short, detail, nil)
}

// SkipTLS is the reason (Summary.SkipReasons) of a TLS connection
// skipped as not Kafka: not on a Kafka port and not decrypted; its
// EventSkipped's TLS says why not.
const SkipTLS = "TLS"

// skipTLS skips a TLS connection not decrypted (st says why) as not
// Kafka (SkipTLS).
func (c *conn) skipTLS(st *TLSStatus, detail string) {
	c.skipWith(SkipTLS, detail, st)
}

func (c *conn) skipWith(short, detail string, st *TLSStatus) {
	ev := &Event{Kind: EventSkipped, Conn: c.c, Frame: c.firstFrame(), Time: c.firstTime(), Detail: detail, TLS: st}
	c.state = csSkipped
	c.pre = nil
	c.releasePre()
	c.d.sum.Skipped++
	c.d.reasons[short]++
	c.event(ev)
}

// firstFrame is the packet number of the first bytes held (gaps have
// none), 0 when none are.
func (c *conn) firstFrame() int64 {
	for _, p := range c.pre {
		if !p.gap {
			return p.frame
		}
	}
	return 0
}

func (c *conn) firstTime() time.Time {
	if len(c.pre) > 0 {
		return c.pre[0].time
	}
	return c.last
}

// heldGapBytes sums the bytes lost in the gaps held, -1 when one's size
// is unknown, 0 when none is held.
func (c *conn) heldGapBytes() int64 {
	var n int64
	for _, p := range c.pre {
		switch {
		case !p.gap:
		case p.n < 0:
			return -1
		default:
			n += p.n
		}
	}
	return n
}

// lostWords words a count of bytes lost (n < 0: unknown).
func lostWords(n int64) string {
	if n < 0 {
		return "bytes (count unknown)"
	}
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// goTLS marks a Kafka-port connection as TLS, reported once.
func (c *conn) goTLS(dir reassembly.Dir, frame int64, t time.Time) {
	if c.tlsSeen {
		return
	}
	c.tlsSeen = true
	c.state = csTLS
	c.pre = nil
	c.releasePre()
	c.d.sum.TLS++
	for _, s := range c.split {
		if s != nil {
			s.state = stOff
			s.buf, s.scan = nil, nil
		}
	}
	c.d.tlsReasons[TLSNoHandshake]++
	c.event(&Event{Kind: EventTLS, Conn: c.c, Dir: dir, Frame: frame, Time: t,
		Detail: "not decrypted: TLS records with no handshake before them (the capture began mid-connection)",
		TLS:    &TLSStatus{Reason: TLSNoHandshake}})
}

// plain takes the next bytes of the connection's (plaintext or
// decrypted) stream in direction dir, from packet frame at time t.
func (c *conn) plain(dir reassembly.Dir, data []byte, frame int64, t time.Time) {
	switch c.state {
	case csKafka:
		c.tcp.packet(dir, t)
		c.split[dir].feed(data, frame, t)
	case csUndecided:
		c.tcp.dir[dir].endSet = false // held: its stream offset is not kept
		c.pre = append(c.pre, preChunk{dir: dir, data: append([]byte(nil), data...), frame: frame, time: t})
		c.preBytes += len(data)
		c.preCounted += len(data)
		c.d.partial += int64(len(data))
		c.decide(false)
	}
}

// plainGap reports n bytes of the stream lost (n < 0: unknown); why, if
// not "", says what lost them.
func (c *conn) plainGap(dir reassembly.Dir, n int64, t time.Time, why string) {
	switch c.state {
	case csKafka:
		c.gapWhy(dir, n, t, why)
	case csUndecided:
		c.pre = append(c.pre, preChunk{dir: dir, gap: true, n: n, time: t})
	}
}

// prefix returns direction dir's bytes held so far, up to the first gap
// that follows some of them (cut says there was one). Gaps before the
// direction's first byte are passed over: a capture cut down to one
// exchange (read -w) keeps a connection's handshake and then, after the
// sequence numbers of the exchanges left out, a frame that starts on a
// frame boundary, which is judged as a connection's first bytes are.
func (c *conn) prefix(dir reassembly.Dir) (b []byte, frame int64, t time.Time, cut bool) {
	first := true
	for _, p := range c.pre {
		if p.dir != dir {
			continue
		}
		if p.gap {
			if first {
				continue // nothing held before it in this direction
			}
			cut = true
			break
		}
		if first {
			frame, t, first = p.frame, p.time, false
		}
		b = append(b, p.data...)
	}
	return b, frame, t, cut
}

// firstRequest checks that b starts with a plausible request (strict) and
// that the next frame, when its first bytes are there, is one too; why
// says what failed when the answer is vNo.
//
// On a connection off the Kafka ports, recognised by content alone, the
// first request's body must decode as well: a header that parses is not
// enough (a ZooKeeper ConnectRequest's first bytes parse as a Produce v0
// header). The body is decoded once the frame is whole or, when ended (no
// more bytes will come before the decision: a gap, the close, preLimit),
// as far as it goes, where running out of bytes is all it may fail on.
// Record batches are not decoded; an ApiVersions version the schema does
// not know passes on its header (KIP-511).
func (c *conn) firstRequest(b []byte, ended bool) (v verdict, why string) {
	v, rej := requestVerdict(b, c.d.opts.MaxFrame, true)
	if v != vYes {
		if v == vNo {
			why = rej.String()
		}
		return v, why
	}
	n := 4 + int(rej.n)
	if !c.portA && !c.portB {
		if len(b) < n && !ended {
			return vMore, ""
		}
		if why := bodyFails(b[:min(n, len(b))], len(b) < n); why != "" {
			return vNo, fmt.Sprintf("%s v%d whose body does not decode: %s", protocol.APIName(rej.key), rej.ver, why)
		}
	}
	if len(b) > n {
		if v, rej := requestVerdict(b[n:], c.d.opts.MaxFrame, true); v == vNo {
			return vNo, "a first request followed by bytes that are not one: " + rej.String()
		}
	}
	return vYes, ""
}

// bodyFails decodes a request frame (cut short when cut) and says why its
// body is not that request's, or "".
func bodyFails(frame []byte, cut bool) string {
	t := detectDecoder.DecodeRequest(frame)
	defer t.Release()
	switch err := t.Err; {
	case err == nil:
		return ""
	case errors.Is(err, protocol.ErrUnknownVers) && len(frame) >= 6 && int16At(frame, 4) == keyApiVersions:
		return ""
	case cut && protocol.CutShort(err):
		// The bytes ran out where the frame was cut: a value, a length,
		// or a varint (a flexible version's tagged fields) cut short.
		return ""
	default:
		return err.Error()
	}
}

// detectDecoder decodes first requests for detection: bodies, not record
// batches, sparsely (only the error is read: a sparse decode fails where
// and as a full one does, at a fraction of the nodes; its node cap counts
// the nodes made, so a first request of thousands of array elements that
// mean nothing to the facts, which a full decode's cap turned away, is
// recognised as the Kafka it is).
var detectDecoder = protocol.Decoder{MaxNodes: 1 << 12, Sparse: true}

// decide classifies the connection from the bytes held; final forces a
// decision (connection closing, or too many bytes held).
func (c *conn) decide(final bool) {
	final = final || c.preBytes >= preLimit || c.d.overPartial()
	var (
		pfx   [2][]byte
		frame [2]int64
		tm    [2]time.Time
		v     [2]verdict
		why   [2]string
	)
	for d := range 2 {
		var cut bool
		pfx[d], frame[d], tm[d], cut = c.prefix(reassembly.Dir(d))
		v[d], why[d] = c.firstRequest(pfx[d], cut || final)
		if cut && v[d] == vMore {
			// More bytes will not come before the gap: a start that
			// passed every check its bytes allow (API key, version and
			// correlation ID at least) counts as a request.
			v[d] = vNo
			if len(pfx[d]) >= 12 {
				v[d] = vYes
			}
		}
	}
	port := c.portA || c.portB
	for d := range 2 {
		if c.tls == nil && isTLS(pfx[d]) {
			if port || c.d.tlsKeys() {
				c.startTLS()
			} else {
				c.skipTLS(&TLSStatus{Reason: TLSNoKeyLog}, "TLS on a port not in the Kafka port list (no key log to decrypt it)")
			}
			return
		}
	}
	how := "detected"
	if port {
		how = "on a Kafka port"
	}
	if c.tls != nil {
		how += ", inside TLS"
	}
	for d := range 2 {
		if isHTTP(pfx[d]) {
			c.skip("HTTP", "HTTP, not Kafka: "+httpDetail(pfx[d]))
			return
		}
	}
	// The client is the side that sends requests. A response can look like
	// a request (an ApiVersions response parses as Produce v1), so the
	// expected client speaks first: the side not on a Kafka port, else the
	// sender of the SYN. The other side is the client only when the
	// expected one's bytes are not a request and its are.
	cand, known := reassembly.AtoB, false
	switch {
	case c.portA != c.portB:
		cand, known = reassembly.BtoA, true
		if c.portB {
			cand = reassembly.AtoB
		}
	case c.c.SawSYN:
		known = true
	}
	other := 1 - cand
	if known {
		switch {
		case v[cand] == vYes:
			c.kafka(cand, true, how)
		case v[cand] == vNo && len(pfx[cand]) > 0 && v[other] == vYes:
			c.kafka(other, true, how)
		case !final && (len(pfx[cand]) == 0 || v[cand] == vMore || v[other] == vMore && len(pfx[other]) > 0):
			// wait for the client to speak, or for the other side's
			// first frame to tell
		case port:
			c.kafka(cand, false, how)
		default:
			c.skipNotKafka(pfx, why, cand)
		}
		return
	}
	// No SYN and no port to tell: wait for both sides, then the side whose
	// bytes are a request; when both are, the one with a client id.
	decided := v[0] == vYes && v[1] == vNo && len(pfx[1]) > 0 || v[1] == vYes && v[0] == vNo && len(pfx[0]) > 0
	if !final && !decided && (len(pfx[0]) == 0 || len(pfx[1]) == 0 || v[0] == vMore || v[1] == vMore) {
		return
	}
	switch {
	case v[0] == vYes && v[1] == vYes:
		if clientIDLen(pfx[0]) <= 0 && clientIDLen(pfx[1]) > 0 {
			c.kafka(reassembly.BtoA, true, how)
		} else {
			c.kafka(reassembly.AtoB, true, how)
		}
	case v[0] == vYes:
		c.kafka(reassembly.AtoB, true, how)
	case v[1] == vYes:
		c.kafka(reassembly.BtoA, true, how)
	case port:
		c.kafka(reassembly.AtoB, false, how)
	default:
		c.skipNotKafka(pfx, why, cand)
	}
}

// clientIDLen returns the client id length of a request frame start, -2
// when too short.
func clientIDLen(b []byte) int {
	if len(b) < fixedReqPrefix {
		return -2
	}
	return int(int16At(b, 12))
}

// skipNotKafka skips a connection that is not Kafka, saying why: it
// carried no payload, or it is a protocol identify names (its name is
// the skip reason), or its first bytes are not a Kafka request (why[d]
// for the direction that was to send requests, first the one expected to).
func (c *conn) skipNotKafka(pfx [2][]byte, why [2]string, first reassembly.Dir) {
	if c.tls != nil && len(pfx[0]) == 0 && len(pfx[1]) == 0 {
		c.skip("TLS without data", "TLS connection that carried no application data")
		return
	}
	if len(pfx[0]) == 0 && len(pfx[1]) == 0 {
		if lost := c.heldGapBytes(); lost != 0 {
			// The sequence numbers say bytes were sent: none was
			// captured.
			c.skip("no payload", "no payload captured: "+lostWords(lost)+" lost after the TCP handshake, nothing else")
			return
		}
		c.skip("no payload", "no payload: nothing but the TCP handshake or close was captured")
		return
	}
	order := [2]reassembly.Dir{first, 1 - first}
	for _, d := range order {
		if name, detail := identify(pfx[d]); name != "" {
			c.skip(name, "not Kafka: "+detail)
			return
		}
	}
	for _, d := range order {
		if len(pfx[d]) == 0 {
			continue
		}
		w := why[d]
		if w == "" {
			w = diagnose(pfx[d][:min(len(pfx[d]), 64)], false)
		}
		c.skip("not Kafka", "not Kafka: the first bytes are not a Kafka request ("+w+")")
		return
	}
}

// kafka starts dissecting with client as the request direction; reqAt0
// says the client's first held byte starts a request.
func (c *conn) kafka(client reassembly.Dir, reqAt0 bool, how string) {
	d := c.d
	c.state = csKafka
	c.client = client
	synced := c.c.SawSYN
	c.split[client] = newSplitter(c, client, true, d.opts.MaxFrame, synced || reqAt0)
	c.split[1-client] = newSplitter(c, 1-client, false, d.opts.MaxFrame, synced)
	d.sum.Kafka++
	c.event(&Event{Kind: EventOpen, Conn: c.c, Dir: client, Frame: c.firstFrame(), Time: c.firstTime(),
		Detail: c.openDetail(how)})
	pre := c.pre
	c.pre = nil
	c.releasePre()
	for _, p := range pre {
		if c.state != csKafka {
			return
		}
		if p.gap {
			c.gapOf(p.dir, p.n, p.time, p.why, p.kind)
			continue
		}
		c.last = p.time
		c.tcp.packet(p.dir, p.time)
		c.split[p.dir].feed(p.data, p.frame, p.time)
	}
}

func (c *conn) gapWhy(dir reassembly.Dir, n int64, t time.Time, why string) {
	c.gapOf(dir, n, t, why, gapLost)
}

// gapOf handles n bytes lost in direction dir (n < 0: unknown); why,
// when not "", says what lost them.
//
// Bytes lost from the broker while requests are pending may have held
// their responses. The requests pending then are marked (pendingQueue
// marked); the first response that arrives after the gap tells which of
// them were answered inside it (those before it, as Kafka answers in
// order), and those are emitted as unanswered, "lost in the gap", at once
// — before the GAP event, which is held until then, so that the output
// stays in time order: the request, then the gap that swallowed its
// answer. Anything else happening on the connection meanwhile lets the
// event go first; requests still marked at the close are said to be
// probably lost in it.
//
// A cut (Dissector.Cut) is handled the same way but reported as EventCut
// and counted in Summary.Cuts: the capture's writer left the bytes out.
// Bytes the snap length kept out (kind gapSnapped, why from snapWhy) are
// a gap whose detail says so, counted in Problems.Snapped too; so are
// bytes the out-of-order budget gave up (kind gapGivenUp, why from
// givenUpWhy), counted in Problems.GivenUp.
func (c *conn) gapOf(dir reassembly.Dir, n int64, t time.Time, why string, kind gapKind) {
	d := c.d
	var ev *Event
	cut := kind == gapCut
	switch {
	case kind == gapSnapped:
		d.sum.Gaps++
		d.sum.GapBytes += n
		d.sum.Snapped++
		d.sum.SnappedBytes += n
		ev = &Event{Kind: EventGap, Conn: c.c, Dir: dir, Time: t, Bytes: n, Detail: why}
	case kind == gapGivenUp:
		d.sum.Gaps++
		d.sum.GapBytes += n
		d.sum.GivenUp++
		d.sum.GivenUpBytes += n
		ev = &Event{Kind: EventGap, Conn: c.c, Dir: dir, Time: t, Bytes: n, Detail: why}
	case cut:
		d.sum.Cuts++
		d.sum.CutBytes += n
		ev = &Event{Kind: EventCut, Conn: c.c, Dir: dir, Time: t, Bytes: n, Detail: "left out on purpose by the capture's writer, kwire read -w: exchanges not selected"}
	default:
		d.sum.Gaps++
		if n > 0 {
			d.sum.GapBytes += n
		}
		detail := fmt.Sprintf("%d bytes lost", n)
		if n < 0 {
			detail = "bytes lost (count unknown)"
		}
		if why != "" {
			detail += ": " + why
		}
		ev = &Event{Kind: EventGap, Conn: c.c, Dir: dir, Time: t, Bytes: n, Detail: detail}
	}
	c.lossy = true
	c.tcp.gap(dir)
	sp := c.split[dir]
	sp.cutting = cut // a frame it leaves incomplete was cut by the writer (conn.cut)
	defer func() { sp.cutting = false }()
	if dir == c.client || c.pending.len() == 0 || sp.raw {
		c.event(ev)
		sp.gap(n)
		return
	}
	c.flushHeld()
	c.held = append(c.held, ev)
	if sp.gap(n) { // past the frame being built: whole responses may be in it
		c.pending.mark()
		switch {
		case cut:
			c.gapNote = fmt.Sprintf("the broker's bytes the capture's writer left out (kwire read -w: %d bytes)", n)
		case n < 0:
			c.gapNote = "the gap of unknown size in the broker's bytes"
		default:
			c.gapNote = fmt.Sprintf("the gap of %d bytes in the broker's bytes", n)
		}
	}
	if c.pending.marked == 0 {
		c.flushHeld()
	}
}

// flushHeld emits the gap events held for a resolution (gap).
func (c *conn) flushHeld() {
	held := c.held
	c.held = nil
	for _, ev := range held {
		c.d.event(ev)
	}
}

// resolveGap runs when a response with correlation ID corr starts after a
// gap in the broker's bytes: the marked requests before it were answered
// in the gap. They are emitted as unanswered, then the held gap events.
func (c *conn) resolveGap(corr int32) {
	if m := c.pending.marked; m > 0 {
		if i := c.pending.index(corr); i >= 0 {
			for range min(i, m) {
				ex := c.pending.popOldest()
				ex.Kind = KindUnanswered
				ex.Notes = append(ex.Notes, "response lost in "+c.gapNote)
				c.d.emit(ex) // before the held gap events
			}
			c.pending.marked = 0
		}
	}
	c.flushHeld()
}

// emit emits an exchange of the connection, after any held gap events.
func (c *conn) emit(ex *Exchange) {
	c.flushHeld()
	c.d.emit(ex)
}

// event emits an event of the connection, after any held gap events.
func (c *conn) event(ev *Event) {
	switch ev.Kind {
	case EventGap, EventResync, EventBadFrame, EventTruncated:
		c.lossy = true
	}
	c.flushHeld()
	c.d.event(ev)
}

// badFrame reports a diagnosed frame; it returns false when the
// connection stopped being dissected (TLS).
func (c *conn) badFrame(s *splitter, detail string, at mark) bool {
	if strings.HasPrefix(detail, "TLS") && c.frames == 0 && c.tls == nil {
		// Kafka never switches to TLS mid-connection: only a connection
		// that has carried no frame yet is taken for TLS.
		c.goTLS(s.dir, at.frame, at.time)
		return false
	}
	c.d.sum.BadFrames++
	c.event(&Event{Kind: EventBadFrame, Conn: c.c, Dir: s.dir, Frame: at.frame, Time: at.time, Detail: detail})
	return true
}

func (c *conn) resync(s *splitter, n int64, at mark) {
	c.d.sum.Resyncs++
	c.d.sum.ResyncBytes += n
	ev := &Event{Kind: EventResync, Conn: c.c, Dir: s.dir, Frame: at.frame, Time: at.time, Bytes: n,
		Data:   s.skippedData,
		Detail: fmt.Sprintf("skipped %d bytes to the next plausible %s", n, s.what())}
	c.withholdSkipped(ev)
	c.event(ev)
}

func (c *conn) trailing(s *splitter, n int64) {
	c.d.sum.Resyncs++
	c.d.sum.ResyncBytes += n
	ev := &Event{Kind: EventResync, Conn: c.c, Dir: s.dir, Time: c.last, Bytes: n,
		Data:   s.skippedData,
		Detail: fmt.Sprintf("%d bytes at the end never formed a plausible %s", n, s.what())}
	c.withholdSkipped(ev)
	c.event(ev)
}

// withholdSkipped drops the bytes a resync skipped, unless --show-secrets:
// they are the rest of frames whose start was lost or damaged, and any
// frame's bytes may hold a credential (a SaslAuthenticate token, an
// AlterConfigs password, a delegation token's HMAC) that kwire can no
// longer place. The event still says how many bytes, from where.
func (c *conn) withholdSkipped(ev *Event) {
	if c.d.opts.Decoder.ShowSecrets || len(ev.Data) == 0 {
		return
	}
	ev.Data, ev.Withheld = nil, true
}

func (s *splitter) what() string {
	switch {
	case s.raw:
		return "SASL token"
	case s.req:
		return "request"
	}
	return "response"
}

// cut reports a frame of which only part was captured (need < 0: its
// length prefix was incomplete). A request whose header is there is still
// registered, so its response pairs; a response is paired by its
// correlation ID. Neither is decoded.
func (c *conn) cut(s *splitter, part []byte, need int, at mark, why string) {
	d := c.d
	if d.stopping {
		return // cut by the stop of the read, not by the capture (Stop)
	}
	kind := EventTruncated
	if s.cutting {
		// A frame that shares a packet with one written, the rest left
		// out by the capture's writer: data, not a problem.
		why, kind = "the capture's writer, kwire read -w", EventCut
	} else {
		d.sum.Truncated++
	}
	if !s.req && !s.raw && len(part) >= 8 {
		c.resolveGap(int32At(part, 4))
	}
	detail := fmt.Sprintf("%s frame cut by %s: %d of %d bytes captured", s.what(), why, len(part), need)
	if need < 0 {
		detail = fmt.Sprintf("%s frame cut by %s inside its length prefix", s.what(), why)
	}
	c.event(&Event{Kind: kind, Conn: c.c, Dir: s.dir, Frame: at.frame, Time: at.time, Bytes: int64(len(part)), Detail: detail})
	if s.raw && s.req && len(part) >= 12 && c.sasl.mech != "PLAIN" && !isSCRAM(c.sasl.mech) &&
		checkRequest(part, c.d.opts.MaxFrame, true) != vNo {
		c.leaveSASL() // a Kafka request: raw SASL is over
	}
	if need < 0 || s.raw || len(part) < 8 {
		return
	}
	fr := newFrame(Frame{FirstPacket: at.frame, LastPacket: at.frame, Time: at.time, End: at.time, Bytes: append([]byte(nil), part...)})
	if need > len(part) {
		fr.Wire = need // what its length prefix says was sent
	}
	note := fmt.Sprintf("frame incomplete (cut by %s): %d of %d bytes captured", why, len(part), need)
	if s.req {
		if len(part) < 12 {
			return
		}
		notes := []string{"request " + note}
		notCaptured := false
		h, err := protocol.ParseRequestHeader(part[4:])
		if err != nil {
			// The header itself is cut: key, version and correlation ID
			// are there (ParseRequestHeader read them), the client id is
			// not.
			h.ClientID, h.ClientIDNull = "", false
			notCaptured = true
			notes = append(notes, "client id not captured")
		}
		if !knownVersion(h.APIKey, h.APIVersion) && h.APIKey != keyApiVersions {
			return
		}
		d.undecoded(fr)
		d.sum.Requests++
		if h.APIKey == keyProduce && err == nil {
			if acks, ok := protocol.PeekProduceAcks(part); ok && acks == 0 {
				cl, br := c.addrs()
				c.emit(newExchange(Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindNoResponse, APIKey: h.APIKey, APIVersion: h.APIVersion,
					CorrelationID: h.CorrelationID, ClientID: h.ClientID, ClientIDNull: h.ClientIDNull, ClientIDNotCaptured: notCaptured, Request: fr,
					Notes: append(notes, "acks=0: the broker sends no response")}))
				return
			}
		}
		c.register(fr, h, notes, false, notCaptured)
		return
	}
	d.sum.Responses++
	corr := int32At(part, 4)
	if ex := c.take(corr); ex != nil {
		d.undecoded(fr)
		ex.Response = fr
		ex.Kind = KindPaired
		ex.Notes = append(ex.Notes, "response "+note)
		c.emit(ex)
		return
	}
	// No request waits for it. Cut by a gap, it is a response whose
	// request went unrecognised (lost whole, e.g. a second request in a
	// segment cut by the snap length, or cut too short to be checked): an
	// orphan, as a whole response would be, but too short to guess what it
	// answers. Cut by the end of the connection or capture with nothing
	// lost, a frame nobody asked for is more likely a misread length: the
	// TRUNCATED event says enough.
	if why != "a gap" {
		return
	}
	cl, br := c.addrs()
	c.emit(newExchange(Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindOrphan, APIKey: -1, APIVersion: -1,
		CorrelationID: corr, Response: fr, Notes: []string{"no request with this correlation ID was recognised", "response " + note}}))
}

// frame receives a complete frame from a splitter.
func (c *conn) frame(s *splitter, b []byte, first, last mark) {
	c.d.sum.Frames++
	c.frames++
	fr := newFrame(Frame{FirstPacket: first.frame, LastPacket: last.frame, Time: first.time, End: last.time, Bytes: b, pool: c.d.spill.pool})
	c.tcp.frameDone(s.dir, fr, first)
	switch {
	case s.raw && s.req:
		if c.saslClient(fr) {
			return
		}
		c.request(fr)
	case s.raw:
		c.saslServer(fr)
	case s.req:
		c.request(fr)
	default:
		c.response(fr)
	}
}

// closeWhy words a Close reason (reassembly.Close*) for notes.
func closeWhy(reason string) (why string, closed bool) {
	switch reason {
	case reassembly.CloseFIN:
		return "the connection closed (FIN)", true
	case reassembly.CloseRST:
		return "the connection closed (RST)", true
	case reassembly.CloseIdle:
		return "the connection went idle", false
	case reassembly.CloseReused:
		return "the reuse of the connection's addresses", false
	case reassembly.CloseFull:
		return "the connection was closed early, idle longest when the open connections filled their memory bound", false
	case reassembly.CloseEOF, "":
		return "the end of the capture", false
	case closeStopped:
		return "the read stopped (-c)", false
	}
	return "the end of the connection (" + reason + ")", false
}

// close ends the connection: partial frames, pending requests, SASL state.
// A request left unanswered by a FIN or RST is noted as closed with no
// response; when it was the last and its version is unsupported, as the
// broker's answer to that (brokers close the connection on a request
// version they do not support, except ApiVersions, KIP-511).
func (c *conn) close(reason string, t time.Time) {
	if c.last.IsZero() {
		c.last = t // no payload was seen: the close is the only time known
	}
	if c.tls != nil {
		c.closeTLS(t)
	}
	if c.state == csUndecided {
		c.decide(true)
	}
	if c.state != csKafka {
		return
	}
	why, closed := closeWhy(reason)
	// The broker's side first: a response cut at the end may tell which
	// requests a gap swallowed.
	c.split[1-c.client].end(why)
	if m := c.pending.marked; m > 0 {
		for range m {
			ex := c.pending.popOldest()
			ex.Kind = KindUnanswered
			ex.Closed = closed
			if closed {
				ex.Notes = append(ex.Notes, "connection closed with no response: probably lost in "+c.gapNote)
			} else {
				ex.Notes = append(ex.Notes, "no response before "+why+": probably lost in "+c.gapNote)
			}
			c.d.emit(ex) // before the held gap events
		}
	}
	c.flushHeld()
	c.split[c.client].end(why)
	if tok := c.sasl.tok; tok != nil {
		c.sasl.tok = nil
		tok.Notes = append(tok.Notes, "no broker token before "+why)
		c.emit(tok)
	}
	pend := c.pending.drain()
	for i, ex := range pend {
		ex.Kind = KindUnanswered
		ex.Closed = closed
		switch {
		case reason == closeStopped:
			ex.InFlight = true
			ex.Notes = append(ex.Notes, "in flight when the read stopped (-c): its response may come later in the capture")
		case !closed:
			ex.Notes = append(ex.Notes, "no response before "+why)
		case i == len(pend)-1 && c.unsupported(ex.APIKey, ex.APIVersion):
			ex.Notes = append(ex.Notes, "connection closed with no response — the broker's answer to an unsupported version")
		default:
			ex.Notes = append(ex.Notes, "connection closed with no response")
		}
		pend[i] = nil // the sink may drop ex (and its decoded trees) now
		c.emit(ex)
	}
	if cap(pend) <= pendingScan {
		c.pending.q = pend[:0] // for the connection that reuses c (recycle)
	}
	ev := &Event{Kind: EventClose, Conn: c.c, Time: t, Detail: reason}
	if c.tcp.closed {
		ev.ClosedBy, ev.ClosedAt = c.tcp.closer, c.tcp.closedAt
	}
	c.event(ev)
}

// advertised returns the broker's ranges for this connection: from an
// ApiVersions exchange on it, else from another connection to the same
// broker.
func (c *conn) advertised() *BrokerVersions {
	if c.adv != nil {
		return c.adv
	}
	_, br := c.addrs()
	return c.d.brokers[br]
}

// unsupported tells whether a request version is outside the broker's
// advertised range or, with no ApiVersions seen, unknown to the schema.
func (c *conn) unsupported(key, ver int16) bool {
	if adv := c.advertised(); adv != nil && adv.Holds(key) {
		r, ok := adv.Range(key)
		return !ok || !r.Contains(ver)
	}
	return protocol.Lookup(key, false, ver) == nil
}
