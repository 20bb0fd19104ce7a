package dissect

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/kwire/kwire/protocol"
)

// Pairing. Kafka answers the requests of one connection in order (Kafka
// protocol guide, "Network": "the server guarantees that on a single TCP
// connection, requests will be processed in the order they are sent and
// responses will return in that order"), so a response pairs with the
// oldest pending request, and its correlation ID is verified; on a
// mismatch the pending requests are searched by ID and the anomaly noted.
// The request is registered from its header before its body is decoded, so
// a body that fails to decode never un-pairs its response.

// API keys with pairing semantics.
const (
	keyProduce          = 0
	keySaslHandshake    = 17
	keyApiVersions      = 18
	keySaslAuthenticate = 36
)

// errUnsupportedVersion is Kafka's UNSUPPORTED_VERSION error code (35).
const errUnsupportedVersion = 35

// request handles a complete request frame.
func (c *conn) request(fr *Frame) {
	d := c.d
	b := fr.Bytes
	if c.hsV0 && checkRequest(b, d.opts.MaxFrame, true) != vYes {
		// The client's first token after its SaslHandshake v0, sent
		// before the broker's answer was seen.
		c.hsV0 = false
		c.enterSASLEarly(c.hsMech)
		c.saslClient(fr)
		return
	}
	if b[4] == 0x60 {
		// A GSSAPI token (RFC 2743 section 3.1 InitialContextToken) where
		// a header is expected: Kafka 0.9 clients sent Kerberos tokens
		// without SaslHandshake.
		c.enterSASL("GSSAPI", "raw GSSAPI token without SaslHandshake (Kafka 0.9 style)")
		c.saslClient(fr)
		return
	}
	if checkRequest(b, d.opts.MaxFrame, false) == vNo && looksSASL(b[4:]) {
		c.enterSASL("", "raw SASL token; its SaslHandshake v0 was not captured")
		c.saslClient(fr)
		return
	}
	d.sum.Requests++
	h, err := protocol.ParseRequestHeaderReusing(b[4:], c.clientID)
	if err == nil || len(b) >= 12 {
		c.lastCorr, c.corrSeen = h.CorrelationID, true
	}
	if err == nil {
		c.clientID = ""
		if len(h.ClientID) <= maxKeptClientID {
			c.clientID = h.ClientID
		}
	}
	if err != nil && len(b) >= 12 {
		// The key, version and correlation ID were read; the client id or
		// the tagged fields were not (e.g. an unknown version whose header
		// version was guessed wrong). The response can still pair: a
		// request left unregistered would make it an orphan, "not
		// captured", which it was.
		notes := []string{"request header does not parse: " + err.Error()}
		if d.wantDecode(h.APIKey, h.APIVersion) {
			fr.Tree = d.opts.Decoder.DecodeRequest(b)
			d.decoded(fr)
			notes = nil // the tree's error says it, with frame offsets
		} else {
			d.undecoded(fr)
		}
		c.register(fr, h, notes, false, false)
		return
	}
	if err != nil {
		cl, br := c.addrs()
		ex := newExchange(Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindUnanswered, APIKey: h.APIKey, APIVersion: h.APIVersion,
			CorrelationID: h.CorrelationID, Request: fr, Notes: []string{"request header does not parse: " + err.Error()}})
		c.emit(ex)
		return
	}
	var notes []string
	if adv := c.advertised(); adv != nil && h.APIKey != keyApiVersions && adv.Holds(h.APIKey) {
		if r, ok := adv.Range(h.APIKey); !ok {
			d.sum.Unsupported++
			notes = append(notes, fmt.Sprintf("API key %d (%s) not advertised by the broker", h.APIKey, protocol.APIName(h.APIKey)))
		} else if !r.Contains(h.APIVersion) {
			d.sum.Unsupported++
			notes = append(notes, fmt.Sprintf("version %d outside the broker's advertised range %d-%d", h.APIVersion, r.Min, r.Max))
		}
	}
	if packet, dup := c.pending.has(h.CorrelationID); dup {
		d.sum.DuplicateIDs++
		notes = append(notes, fmt.Sprintf("duplicate correlation ID %d in flight (also the request in packet %d)", h.CorrelationID, packet))
	}
	// The request is decoded when its exchange is emitted, not now: a
	// pending request then holds its bytes only, not a tree that can be
	// hundreds of times larger (decompressed records and their nodes), so
	// that many pipelined requests cannot exhaust memory.
	mech := c.mech
	if h.APIKey == keySaslAuthenticate && c.hsAsked != "" {
		// Sent before the broker answered the SaslHandshake before it
		// (pipelined): the mechanism the client asked for is the one
		// its token is of, not the one negotiated before.
		mech = c.hsAsked
	}
	fr.lazy = lazyRequest{set: true, h: h, mech: mech, unknown: !knownKey(h.APIKey)}
	if h.APIKey == keyProduce {
		if acks, ok := protocol.PeekProduceAcks(b); ok && acks == 0 {
			cl, br := c.addrs()
			ex := newExchange(Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindNoResponse, APIKey: h.APIKey, APIVersion: h.APIVersion,
				CorrelationID: h.CorrelationID, ClientID: h.ClientID, ClientIDNull: h.ClientIDNull, Request: fr,
				Notes: append(notes, "acks=0: the broker sends no response")})
			c.emit(ex)
			return
		}
	}
	c.register(fr, h, notes, true, false)
}

// lazyRequest is what decoding a request frame later needs.
type lazyRequest struct {
	set  bool
	h    protocol.RequestHeader
	mech string // the connection's SASL mechanism when the request arrived
	// unknown: no schema knows the key: the frame is withheld undecoded.
	unknown bool
}

// finishRequest decodes a request frame registered with a lazyRequest;
// emit calls it just before the exchange goes to the sink.
func (d *Dissector) finishRequest(fr *Frame) {
	l := fr.lazy
	fr.lazy = lazyRequest{}
	h, b := l.h, fr.Bytes
	if l.unknown && d.withholdUnknown(fr) {
		return
	}
	if d.wantDecode(h.APIKey, h.APIVersion) {
		dec := &d.opts.Decoder
		if h.APIKey == keySaslAuthenticate && l.mech != "" && dec.SASLMechanism == "" {
			dd := *dec
			dd.SASLMechanism = l.mech
			dec = &dd
		}
		fr.Tree = dec.DecodeRequest(b)
		d.decoded(fr)
	} else {
		d.undecoded(fr)
	}
}

// undecoded notes that frame fr stays without a tree (cut short, or not
// decoded): its bytes are withheld unless --show-secrets, as every span
// kwire does not decode is (protocol's withholdRaw): whatever its API, a
// frame's bytes may hold another frame's credentials (a length field too
// large swallows the frames after it).
func (d *Dissector) undecoded(fr *Frame) {
	fr.Withheld = !d.opts.Decoder.ShowSecrets
}

// withholdUnknown withholds frame fr, of an API key no schema knows,
// undecoded, and reports whether it did (not with --show-secrets): its
// body would be shown raw, and a SaslAuthenticate whose key was damaged
// reads as an unknown API, its token with it.
func (d *Dissector) withholdUnknown(fr *Frame) bool {
	if d.opts.Decoder.ShowSecrets {
		return false
	}
	fr.Withheld = true
	return true
}

// register adds a request to the pending queue. When the requests
// awaiting responses need more memory than Options.PendingMemory allows
// (their frames beyond it go to the spill file; their bookkeeping,
// pendingCost bytes each, cannot), the connection's oldest are given up,
// counted in Problems.Evicted, until they fit or only the connection's
// floor is left (floor).
// idCut says the frame was cut inside its header, before the end of its
// ClientId (Exchange.ClientIDNotCaptured).
func (c *conn) register(fr *Frame, h protocol.RequestHeader, notes []string, whole, idCut bool) {
	d := c.d
	cl, br := c.addrs()
	ex := newExchange(Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindPaired, APIKey: h.APIKey, APIVersion: h.APIVersion,
		CorrelationID: h.CorrelationID, ClientID: h.ClientID, ClientIDNull: h.ClientIDNull, ClientIDNotCaptured: idCut, Request: fr, Notes: notes})
	if h.APIKey == keySaslHandshake && whole {
		ex.Mechanism, _ = protocol.PeekSaslHandshake(fr.Bytes)
	}
	c.hsV0, c.hsMech = h.APIKey == keySaslHandshake && h.APIVersion == 0 && whole, keptMechanism(ex.Mechanism)
	if h.APIKey == keySaslHandshake {
		c.hsAsked = keptMechanism(ex.Mechanism)
	}
	c.requested(h.APIKey, h.APIVersion)
	if note := d.hold(fr, h.APIKey, len(h.ClientID)); note != "" {
		ex.Notes = append(ex.Notes, note)
	}
	c.pending.push(ex)
	d.spill.relieve() // its bookkeeping may need the room of held frames
	for d.spill.over() {
		// The connection's own oldest, else those of the connection
		// holding the most: each keeps its floor.
		v := c
		if v.pending.len() <= d.floor() {
			if v = d.busy.most(); v == nil || v.pending.len() <= d.floor() {
				break
			}
		}
		old := v.pending.popOldest()
		old.Kind = KindUnanswered
		old.Notes = append(old.Notes, d.spill.evictNote())
		d.sum.Evicted++
		v.lossy = true
		v.emit(old)
	}
}

// take removes and returns the pending request with correlation ID corr,
// preferring the oldest; nil when none has it. Taking any but the oldest is
// noted as out of order.
func (c *conn) take(corr int32) *Exchange {
	if _, ok := c.pending.has(corr); !ok {
		return nil
	}
	if ex := c.pending.oldest(); ex.CorrelationID == corr {
		return c.pending.popOldest()
	}
	first := c.pending.oldest().CorrelationID
	ex := c.pending.remove(corr)
	c.d.sum.OutOfOrder++
	ex.Notes = append(ex.Notes, fmt.Sprintf("response out of order: correlation ID %d was expected first", first))
	return ex
}

// pendingQueue is a connection's requests awaiting responses, oldest
// first. Most clients keep a few in flight: up to pendingScan, finding one
// is a look along the queue. Past that the queue is indexed by correlation
// ID, so that finding one costs the same however deep the client
// pipelines (librdkafka allows a million in flight).
type pendingQueue struct {
	q []*Exchange
	// ids indexes q once it has held more than pendingScan requests; nil
	// until then, and again once it is empty.
	ids map[int32]pendingID
	// c is the queue's connection: the Dissector keeps the connections
	// holding requests in a heap by how many (Dissector.busy), which the
	// queue keeps up to date as it changes.
	c *conn
	// marked is how many of the oldest were pending when bytes were
	// lost from the broker (conn.gap): their responses may be lost.
	marked int
}

// pendingScan is how many pending requests a queue searches rather than
// indexes; a queue no longer than this keeps its backing array when it
// empties (a connection with requests in flight holds it anyway).
const pendingScan = 8

// mark marks every pending request as pending at a gap.
func (p *pendingQueue) mark() { p.marked = len(p.q) }

// index returns the position of the oldest pending request with
// correlation ID corr, or -1.
func (p *pendingQueue) index(corr int32) int {
	if p.ids != nil {
		if _, ok := p.ids[corr]; !ok {
			return -1
		}
	}
	return slices.IndexFunc(p.q, func(e *Exchange) bool { return e.CorrelationID == corr })
}

// pendingID is how many pending requests have a correlation ID, and the
// packet of the latest.
type pendingID struct {
	n      int32
	packet int64
}

func (p *pendingQueue) len() int { return len(p.q) }

// has reports whether a request with correlation ID corr is pending, and
// the packet of the latest such request.
func (p *pendingQueue) has(corr int32) (packet int64, ok bool) {
	if p.ids != nil {
		e, ok := p.ids[corr]
		return e.packet, ok
	}
	for i := len(p.q) - 1; i >= 0; i-- {
		if e := p.q[i]; e.CorrelationID == corr {
			return e.Request.FirstPacket, true
		}
	}
	return 0, false
}

// oldest returns the oldest pending request; the queue must not be empty.
func (p *pendingQueue) oldest() *Exchange { return p.q[0] }

func (p *pendingQueue) push(ex *Exchange) {
	defer p.changed()
	p.q = append(p.q, ex)
	switch {
	case p.ids != nil:
		p.index1(ex)
	case len(p.q) > pendingScan:
		p.ids = make(map[int32]pendingID, 2*len(p.q))
		for _, e := range p.q {
			p.index1(e)
		}
	}
}

// index1 adds ex to ids.
func (p *pendingQueue) index1(ex *Exchange) {
	e := p.ids[ex.CorrelationID]
	e.n++
	e.packet = ex.Request.FirstPacket
	p.ids[ex.CorrelationID] = e
}

func (p *pendingQueue) forget(corr int32) {
	switch {
	case p.ids == nil:
	case len(p.q) == 0:
		p.ids = nil
	default:
		if e := p.ids[corr]; e.n > 1 {
			e.n--
			p.ids[corr] = e
		} else {
			delete(p.ids, corr)
		}
	}
}

// popOldest removes and returns the oldest pending request.
func (p *pendingQueue) popOldest() *Exchange {
	ex := p.q[0]
	if n := len(p.q); n <= pendingScan {
		// Shifted down, so that the array is kept from its start.
		copy(p.q, p.q[1:])
		p.q[n-1] = nil
		p.q = p.q[:n-1]
	} else {
		p.q[0] = nil
		p.q = p.q[1:]
	}
	p.marked = max(p.marked-1, 0)
	if len(p.q) == 0 && cap(p.q) > pendingScan {
		p.q = nil // let a large backing array go
	}
	p.forget(ex.CorrelationID)
	p.changed()
	return ex
}

// changed tells the Dissector that the queue's length changed.
func (p *pendingQueue) changed() {
	if p.c != nil {
		p.c.d.busy.update(p.c)
	}
}

// remove removes and returns the oldest pending request with correlation
// ID corr, which has must have reported.
func (p *pendingQueue) remove(corr int32) *Exchange {
	i := slices.IndexFunc(p.q, func(e *Exchange) bool { return e.CorrelationID == corr })
	ex := p.q[i]
	p.q = slices.Delete(p.q, i, i+1)
	if i < p.marked {
		p.marked--
	}
	p.forget(corr)
	p.changed()
	return ex
}

// drain empties the queue and returns what it held, oldest first.
func (p *pendingQueue) drain() []*Exchange {
	q := p.q
	*p = pendingQueue{c: p.c}
	p.changed()
	return q
}

// response handles a complete response frame.
func (c *conn) response(fr *Frame) {
	d := c.d
	d.sum.Responses++
	corr := int32At(fr.Bytes, 4)
	c.resolveGap(corr)
	ex := c.take(corr)
	if ex == nil {
		c.orphan(fr, corr)
		return
	}
	ex.Response = fr
	ex.Kind = KindPaired
	if before, ok := capturedBefore(fr, ex.Request); ok {
		ex.Reordered = true
		d.sum.Reordered++
		ex.Notes = append(ex.Notes, fmt.Sprintf("reordered: response captured %s before the end of its request (packets written out of order): latency not measured", before))
	}
	key, ver := ex.APIKey, ex.APIVersion
	b := fr.Bytes
	switch {
	case key == keyApiVersions:
		// A broker that does not support the version asked answers with
		// UNSUPPORTED_VERSION and a v0 body (KIP-511).
		if code, ok := protocol.PeekErrorCode(b, key, ver); ver > 0 && ok && code == errUnsupportedVersion {
			ex.Notes = append(ex.Notes, fmt.Sprintf("UNSUPPORTED_VERSION: the broker does not support ApiVersions v%d and answered with a v0 body (KIP-511)", ver))
			ver = 0
		}
		if code, ranges, ok := protocol.PeekAPIVersions(b, ver); ok && code == 0 {
			ex.Advertised = ranges
			c.learn(ex, ranges)
		}
	case key == keySaslHandshake:
		c.hsAsked = ""
		code, ok := protocol.PeekErrorCode(b, key, ver)
		if ok && code == 0 {
			c.mech = keptMechanism(ex.Mechanism)
		}
		if ok && ver == 0 {
			c.handshakeAnswered(keptMechanism(ex.Mechanism), code)
		}
	}
	if !knownKey(key) && d.withholdUnknown(fr) {
		c.emit(ex)
		return
	}
	if d.wantDecode(key, ver) {
		if key == keySaslAuthenticate {
			// Decoded now, with the mechanism the handshake negotiated:
			// it says which parts of the broker's token are secrets.
			dec := d.opts.Decoder
			if dec.SASLMechanism == "" {
				dec.SASLMechanism = c.mech
			}
			fr.Tree = dec.DecodeResponse(b, key, ver)
			d.decoded(fr)
		} else if d.opts.DeferDecode {
			fr.deferred = deferredDecode{dec: &d.opts.Decoder, counts: d.decodes, response: true, key: key, ver: ver}
		} else {
			fr.Tree = d.opts.Decoder.DecodeResponse(b, key, ver)
			d.decoded(fr)
		}
	} else {
		d.undecoded(fr)
	}
	c.emit(ex)
}

// What a connection and the broker table keep of an advertisement, whose
// size is the broker's to choose (an ApiVersions response may list a
// range a hundred thousand times): the ranges of the API keys a request
// can have (0 to lenientMaxKey-1), one a key (the first listed), at most
// maxKeptRanges of them (the lowest keys; brokers advertise about 90), so
// that a connection's advertisement fits in its share of
// reassembly.ConnCost; and the advertisements of at most maxBrokersKept
// brokers (a capture's later brokers are checked against their own
// connections' ApiVersions only). Exchange.Advertised keeps every range
// listed: the versions report and the profile bound theirs.
const (
	maxKeptRanges  = 128
	maxBrokersKept = 1024
)

// learn records a broker's advertised ranges (see maxKeptRanges).
func (c *conn) learn(ex *Exchange, ranges []APIRange) {
	if keepAsListed(ranges) {
		c.keep(&BrokerVersions{Broker: ex.Broker, Conn: c.c.Index, Frame: ex.Response.FirstPacket, Time: ex.Response.Time,
			RequestVersion: ex.APIVersion, Ranges: ranges}) // as brokers list them: shared, as neither is changed
		return
	}
	// A key listed twice: the last listing is in effect, as Kafka's
	// clients keep it (NodeApiVersions puts each listing into a map).
	var seen [lenientMaxKey]bool
	var last [lenientMaxKey]APIRange
	distinct := 0
	for _, r := range ranges {
		if r.Key < 0 || r.Key >= lenientMaxKey {
			continue
		}
		if !seen[r.Key] {
			distinct++
		}
		seen[r.Key], last[r.Key] = true, r
	}
	kept := make([]APIRange, 0, min(distinct, maxKeptRanges))
	for k := range last {
		if seen[k] && len(kept) < maxKeptRanges {
			kept = append(kept, last[k])
		}
	}
	c.keep(&BrokerVersions{Broker: ex.Broker, Conn: c.c.Index, Frame: ex.Response.FirstPacket, Time: ex.Response.Time,
		RequestVersion: ex.APIVersion, Ranges: kept, Capped: distinct > len(kept)})
}

// keepAsListed reports whether ranges are kept as the broker listed them:
// at most maxKeptRanges, by key, one a key, each a key a request can have,
// in a slice no larger than they are.
func keepAsListed(ranges []APIRange) bool {
	if len(ranges) > maxKeptRanges || cap(ranges) > maxKeptRanges {
		return false
	}
	for i, r := range ranges {
		if r.Key < 0 || r.Key >= lenientMaxKey || i > 0 && ranges[i-1].Key >= r.Key {
			return false
		}
	}
	return true
}

// keep makes bv the connection's advertisement, and its broker's while the
// table has room (maxBrokersKept).
func (c *conn) keep(bv *BrokerVersions) {
	c.adv = bv
	if _, ok := c.d.brokers[bv.Broker]; ok || len(c.d.brokers) < maxBrokersKept {
		c.d.brokers[bv.Broker] = bv
	}
}

// keptMechanism is what a connection keeps of the SASL mechanism a
// SaslHandshake named: the name, or its first maxKeptMechanism bytes and
// "…" when longer (SASL mechanism names have at most 20 characters, RFC
// 4422 section 3.1; the peer may send 32 KiB): a name cut so is no
// mechanism kwire parses tokens of, and keeps the "SCRAM-" prefix that
// tells SCRAM's rounds.
func keptMechanism(m string) string {
	if len(m) <= maxKeptMechanism {
		return m
	}
	return strings.Clone(m[:maxKeptMechanism]) + "…"
}

// maxKeptMechanism bounds the mechanism name a connection keeps
// (keptMechanism); maxKeptClientID the client id it keeps for its next
// request to reuse (ParseRequestHeaderReusing): a longer one is parsed
// anew by each request, not kept between them.
const (
	maxKeptMechanism = 64
	maxKeptClientID  = 256
)

// orphan emits a response whose request was not captured, with a guess
// at what it answers (guess.go); when exactly one API and version fit,
// the response is decoded as it.
func (c *conn) orphan(fr *Frame, corr int32) {
	d := c.d
	cl, br := c.addrs()
	ex := newExchange(Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindOrphan, APIKey: -1, APIVersion: -1,
		CorrelationID: corr, Response: fr, Notes: []string{"response without a captured request"}})
	if c.c.SawSYN && !c.lossy {
		d.sum.Unexplained++
	}
	g, note := d.guess(c, fr.Bytes)
	decoded := false
	if note != "" {
		ex.Guess = g
		ex.Notes = append(ex.Notes, note)
		if g != nil && g.Decoded && d.wantDecode(g.APIKey, g.APIVersion) {
			decoded = true
			if d.opts.DeferDecode {
				fr.deferred = deferredDecode{dec: &d.opts.Decoder, counts: d.decodes, response: true, key: g.APIKey, ver: g.APIVersion}
			} else {
				fr.Tree = d.opts.Decoder.DecodeResponse(fr.Bytes, g.APIKey, g.APIVersion)
				d.decoded(fr)
			}
		}
	}
	// Not decoded, an orphan is withheld (undecoded); decoded as its
	// guess, its tree marks its secrets.
	if !decoded {
		d.undecoded(fr)
	}
	c.emit(ex)
}

// capturedBefore reports whether response fr's first packet was captured
// before the last of its request req (the later of its first and last
// bytes' packets), and by how long (rounded to the
// microsecond): packets written out of order (Exchange.Reordered).
func capturedBefore(fr, req *Frame) (time.Duration, bool) {
	if req == nil || fr.Time.IsZero() {
		return 0, false
	}
	end := req.End // its last byte's, or its first's when captured later
	if end.IsZero() || req.Time.After(end) {
		end = req.Time
	}
	if end.IsZero() || !fr.Time.Before(end) {
		return 0, false
	}
	return end.Sub(fr.Time).Round(time.Microsecond), true
}
