package dissect

import (
	"math"
	"time"

	"github.com/kwire/kwire/reassembly"
)

// The frame splitter: one small state machine per direction of a
// connection.
//
//	stLen   wait for the 4-byte big-endian length (Kafka protocol guide,
//	        "Common Request and Response Structure"); a negative length or
//	        one above Options.MaxFrame is diagnosed (TLS, HTTP, SASL token,
//	        garbage) and the splitter goes to stScan.
//	stBody  collect the frame; requests have their header checked as soon
//	        as its bytes are there (lenient: unknown keys below 512 and
//	        versions below 128 pass), an implausible one is diagnosed and
//	        rescanned from its second byte. The buffer grows with the bytes
//	        that arrive, never from the claimed length alone.
//	stScan  out of sync: look at each offset for the next plausible frame.
//	        Requests: known API key, version valid for the key, non-negative
//	        correlation ID, printable client id that fits (strict check).
//	        Responses: a plausible length and a correlation ID some pending
//	        request on the connection has. At the start of a stream captured
//	        without its SYN, a response may also start at offset 0 when its
//	        frame ends on a packet boundary or is followed by the next
//	        response. Bytes skipped are reported as one EventResync.
//	stSkip  skip the rest of a frame cut by a gap of known size, then stLen.
//	stOff   the connection turned out not to be Kafka (TLS): drop bytes.
//
// After a gap the splitter skips exactly when the gap lies inside the
// current frame and its size is known; otherwise it rescans. Only the
// unconsumed tail is kept: the frame being built (which becomes the
// Frame's Bytes without another copy) or a short scan window.

// mark records which packet delivered the bytes from offset off on.
type mark struct {
	off   int
	frame int64
	time  time.Time
}

// seg is a piece of stream bytes from one packet.
type seg struct {
	data  []byte
	frame int64
	time  time.Time
}

type sstate uint8

const (
	stLen sstate = iota
	stBody
	stScan
	stSkip
	stOff
)

// allocAhead bounds how far beyond the bytes at hand a frame buffer is
// allocated from a (validated) length: a hostile length costs at most this.
const allocAhead = 64 << 10

// frameOnce is the largest frame whose buffer is sized once from its
// length (see grow): a claimed length costs at most 256 times the bytes
// that arrived for it, within Options.PartialMemory.
const frameOnce = 16 << 20

// startWindow bounds the frame a response stream may start with when the
// capture began mid-stream and no pending request vouches for it.
const startWindow = 1 << 20

type splitter struct {
	c   *conn
	dir reassembly.Dir
	req bool // carries requests (client to broker)
	raw bool // SASL tokens after SaslHandshake v0: length prefix only
	// cutting says the gap being handled is a cut (Dissector.Cut): a
	// frame it leaves incomplete is no problem (conn.cut).
	cutting bool
	max     int // maximum payload length

	state   sstate
	lenBuf  [4]byte
	nLen    int
	first   mark   // packet of the current frame's first byte
	buf     []byte // the frame being built, length prefix included
	need    int    // the frame's total size
	checked bool   // the request header was checked
	marks   []mark // packets of buf's bytes while the header is unchecked

	scan    []byte
	smarks  []mark
	skipped int64 // bytes dropped in the current resync
	// skippedData holds the first maxEventData of them, for the
	// EventResync that reports them (Event.Data).
	skippedData []byte
	start       bool  // scanning at a stream start without SYN
	from        int   // scan window offset to resume scanning at
	skip        int64 // bytes left to skip in stSkip
	held        int64 // what buf and scan hold, as counted in Dissector.partial
}

func newSplitter(c *conn, dir reassembly.Dir, req bool, maxFrame int, synced bool) *splitter {
	s, ok := splitterPool.Get().(*splitter)
	if !ok {
		s = new(splitter)
	}
	s.c, s.dir, s.req, s.max = c, dir, req, maxFrame
	if !synced {
		s.state = stScan
		s.start = true
	}
	return s
}

// feed runs the state machine over one packet's bytes.
func (s *splitter) feed(data []byte, frame int64, t time.Time) {
	defer s.account()
	rest := s.step(seg{data, frame, t})
	for len(rest) > 0 {
		g := rest[0]
		rest = rest[1:]
		if more := s.step(g); more != nil {
			rest = append(more, rest...)
		}
	}
}

// step consumes g. When a resync finds a frame inside bytes already
// buffered, it returns those bytes, split by packet, to be stepped again.
func (s *splitter) step(g seg) []seg {
	data := g.data
	for len(data) > 0 {
		switch s.state {
		case stOff:
			return nil
		case stSkip:
			k := min(int64(len(data)), s.skip)
			data = data[k:]
			s.skip -= k
			if s.skip == 0 {
				s.state = stLen
			}
		case stScan:
			return s.scanAppend(data, g.frame, g.time)
		case stLen:
			if s.nLen == 0 {
				s.first = mark{frame: g.frame, time: g.time}
				// Fast path: a whole valid frame in this packet is copied
				// once (append does not zero what it copies).
				if len(data) >= 4 {
					n := frameLength(data)
					if s.lengthOK(n) && int64(len(data)) >= 4+n && (s.checkedKind() || s.headerOK(data[:4+n]) == vYes) {
						fb := append(s.c.d.spill.pool.take(int(4+n)), data[:4+n]...)
						data = data[4+n:]
						s.c.frame(s, fb, s.first, s.first)
						continue
					}
				}
			}
			k := copy(s.lenBuf[s.nLen:], data)
			s.nLen += k
			data = data[k:]
			if s.nLen < 4 {
				return nil
			}
			n := frameLength(s.lenBuf[:])
			if !s.lengthOK(n) {
				var peek [64]byte
				copy(peek[copy(peek[:], s.lenBuf[:]):], data)
				pl := min(len(peek), 4+len(data))
				if !s.c.badFrame(s, diagnose(peek[:pl], false), s.first) {
					return nil
				}
				s.toScan()
				s.drop(s.lenBuf[:1])
				s.smarks = append(s.smarks, mark{0, s.first.frame, s.first.time})
				s.scan = append(s.scan, s.lenBuf[1:]...)
				continue
			}
			total := 4 + int(n)
			// A buffer of a spilled frame costs nothing more: it may hold
			// the whole frame at once.
			if s.buf = s.c.d.spill.pool.take(total); s.buf == nil {
				s.buf = make([]byte, 0, min(total, 4+len(data)+allocAhead))
			}
			s.buf = append(s.buf, s.lenBuf[:]...)
			s.need = total
			s.state = stBody
			s.nLen = 0
			s.checked = s.checkedKind()
			s.marks = append(s.marks[:0], mark{0, s.first.frame, s.first.time})
			if total == 4 {
				s.complete(g)
			}
		case stBody:
			k := min(len(data), s.need-len(s.buf))
			if !s.checked {
				s.marks = append(s.marks, mark{len(s.buf), g.frame, g.time})
			}
			s.grow(k)
			s.buf = append(s.buf, data[:k]...)
			data = data[k:]
			if !s.checked {
				v := s.checkHeader()
				if v == vMore && len(s.buf) < s.need {
					continue
				}
				if v != vYes {
					if !s.c.badFrame(s, diagnose(s.buf[:min(len(s.buf), 64)], true), s.first) {
						return nil
					}
					b, m := s.buf[1:], s.marks
					s.drop(s.buf[:1])
					s.buf = nil
					s.toScan()
					s.scan = append(s.scan, b...)
					for _, mk := range m {
						s.smarks = append(s.smarks, mark{max(mk.off-1, 0), mk.frame, mk.time})
					}
					if rest := s.rescan(); rest != nil {
						if len(data) > 0 {
							rest = append(rest, seg{data, g.frame, g.time})
						}
						return rest
					}
					continue
				}
				s.checked = true
			}
			if len(s.buf) == s.need {
				s.complete(g)
			}
		}
	}
	return nil
}

// complete hands the finished frame to the connection.
func (s *splitter) complete(g seg) {
	fb := s.buf
	s.buf = nil
	s.state = stLen
	s.nLen = 0
	s.c.frame(s, fb, s.first, mark{frame: g.frame, time: g.time})
}

func (s *splitter) lengthOK(n int64) bool {
	switch {
	case n > int64(s.max):
		return false
	case s.raw:
		return n >= 0
	case s.req:
		return n >= minRequestLen
	default:
		return n >= minResponseLen
	}
}

// checkHeader checks the header of the request being built (lenient). A
// payload starting with 0x60 passes: it is a raw GSSAPI token (RFC 2743
// section 3.1), which the connection labels as such.
func (s *splitter) checkHeader() verdict { return s.headerOK(s.buf) }

func (s *splitter) headerOK(b []byte) verdict {
	if len(b) > 4 && b[4] == 0x60 {
		return vYes
	}
	v := checkRequest(b, s.max, false)
	if v == vNo && int64(len(b)) == 4+frameLength(b) && looksSASL(b[4:]) {
		return vYes // a raw SASL token whose SaslHandshake was not captured
	}
	if v == vNo && s.c.hsV0 {
		// The client's first raw token after its SaslHandshake v0, sent
		// before the broker's answer and not all here yet (a token longer
		// than a segment): conn.request reads it as one when it is whole.
		return vYes
	}
	return v
}

// checkedKind tells whether frames of this direction need no header check
// (responses, raw SASL tokens).
func (s *splitter) checkedKind() bool { return !s.req || s.raw }

// account counts what the splitter holds in the Dissector's partial bytes
// and, past Options.PartialMemory, sheds it: the frame being built is
// cut (reported as a cut frame is, its first bytes kept) and the rest of
// it skipped by its length, or a resync window's oldest bytes are
// skipped.
func (s *splitter) account() {
	d := s.c.d
	n := int64(cap(s.buf) + cap(s.scan))
	d.partial += n - s.held
	s.held = n
	if !d.overPartial() {
		return
	}
	switch {
	case s.state == stBody && len(s.buf) > 0:
		part := s.buf
		s.buf = nil
		s.c.cut(s, part, s.need, s.first, "the bound on frames being reassembled")
		d.sum.PartialCapped++
		if s.skip = int64(s.need - len(part)); s.skip > 0 {
			s.state = stSkip
		} else {
			s.state = stLen
		}
		s.nLen, s.checked = 0, false
		s.marks = s.marks[:0]
	case s.state == stScan && len(s.scan) > 8:
		s.keep(len(s.scan) - 8)
		s.scan = append([]byte(nil), s.scan...) // let the large window go
		d.sum.PartialCapped++
	default:
		return
	}
	n = int64(cap(s.buf) + cap(s.scan))
	d.partial += n - s.held
	s.held = n
}

// toScan drops any partial frame and starts resynchronising; callers
// count the bytes they drop in s.skipped.
func (s *splitter) toScan() {
	s.state = stScan
	s.from = 0
	s.nLen = 0
	s.buf = nil
	s.start = false
	s.scan = s.scan[:0]
	s.smarks = s.smarks[:0]
}

// scanAppend adds a packet's bytes to the scan window and rescans.
func (s *splitter) scanAppend(data []byte, frame int64, t time.Time) []seg {
	s.smarks = append(s.smarks, mark{len(s.scan), frame, t})
	s.scan = append(s.scan, data...)
	return s.rescan()
}

// rescan looks for the next plausible frame in the scan window, from
// s.from on (offsets before it were ruled out when the window was shorter:
// a response that starts in earlier bytes answers a request registered
// before those bytes arrived).
func (s *splitter) rescan() []seg {
	b := s.scan
	i := s.from
	hold := false // offset 0 may still start the stream's first response
	if s.start && !s.req && !s.raw {
		switch s.checkStartResponse(b) {
		case vYes:
			return s.found(0)
		case vMore:
			hold = true
		default:
			s.start = false
		}
		i = max(i, 1)
	}
	hi := byte(s.max >> 24) // the highest first byte a valid length can have
	for ; i < len(b); i++ {
		if b[i] > hi {
			continue
		}
		var v verdict
		switch {
		case s.raw:
			v = vNo
			if len(b)-i < 4 {
				v = vMore
			} else if s.lengthOK(frameLength(b[i:])) {
				v = vYes
			}
		case s.req:
			v = checkRequest(b[i:], s.max, true)
			if v == vNo && wholeSASLToken(b[i:]) {
				v = vYes
			}
		default:
			v = checkResponse(b[i:], s.max, &s.c.pending)
		}
		switch v {
		case vMore:
			if hold {
				s.from = i
				return nil
			}
			s.keep(i)
			return nil
		case vYes:
			if s.chained(b[i:]) && (!s.req || s.corrFits(b[i:])) {
				return s.found(i)
			}
		}
	}
	if hold {
		s.from = len(b)
		return nil
	}
	s.keep(len(b))
	return nil
}

// maxRawToken bounds the raw SASL tokens a resync recognises: PLAIN is at
// most 767 bytes (RFC 4616), SCRAM messages are short, but a client may
// send a longer password or an OAUTHBEARER token of kilobytes; a token
// not recognised would be shown as skipped bytes.
const maxRawToken = 64 << 10

// wholeSASLToken reports whether b starts with a whole frame (at most
// maxRawToken bytes) holding a raw PLAIN or SCRAM token, as after a
// SaslHandshake v0 that was not captured.
func wholeSASLToken(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	n := int(frameLength(b))
	return n > 0 && n <= maxRawToken && len(b) >= 4+n && looksSASL(b[4:4+n])
}

// chained checks a resync candidate against what follows it: when the
// window holds the next frame's length prefix, that length must be valid
// too. It weeds out candidates inside a frame body (a correlation ID's
// bytes are common in record data).
func (s *splitter) chained(b []byte) bool {
	end := 4 + frameLength(b)
	if int64(len(b)) < end+4 {
		return true
	}
	return s.lengthOK(frameLength(b[end:]))
}

// maxCorrStep is how far past the connection's latest correlation ID a
// resync candidate's may be when nothing after it can vouch for it:
// clients number their requests one by one (a gap may hide thousands).
const maxCorrStep = 1 << 16

// corrFits weighs a request candidate of a resync whose frame the window
// does not hold whole with its next frame's length (chained cannot check
// it): on a connection whose requests were read, its correlation ID must
// follow the latest one, by at most maxCorrStep (corrStep: past 2^31-1
// to 0 too). A plausible header inside a bad frame's bytes (a length of
// 65,536 read from a header's key and version) swallowed the requests after it, the frame it
// claimed never ending.
func (s *splitter) corrFits(b []byte) bool {
	c := s.c
	if !c.corrSeen || len(b) < 12 || int64(len(b)) >= 4+frameLength(b)+4 {
		return true
	}
	return corrStep(c.lastCorr, int32At(b, 8))
}

// corrStep reports whether next may follow last on one connection: after
// it by 1 to maxCorrStep, counting past 2^31-1 to 0 as clients wrap
// (Java's NetworkClient, kafka-python). A resync takes no negative
// correlation ID (rejCorr), so one numbered through -2^31 is not weighed.
func corrStep(last, next int32) bool {
	step := int64(next) - int64(last)
	if step <= 0 {
		step += math.MaxInt32 + 1
	}
	return step > 0 && step <= maxCorrStep
}

// checkStartResponse accepts a response at the very start of a stream
// captured mid-way when a pending request has its correlation ID, or when
// it is a plausible frame (at most startWindow bytes, non-negative
// correlation ID) that ends on a packet boundary or is followed by a
// plausible response with the next correlation ID or a pending one.
func (s *splitter) checkStartResponse(b []byte) verdict {
	if v := checkResponse(b, s.max, &s.c.pending); v != vNo || len(b) < 8 {
		return v // with fewer than 8 bytes, vNo means an invalid length
	}
	n := frameLength(b)
	corr := int32At(b, 4)
	if n < minResponseLen || n > int64(min(s.max, startWindow)) || corr < 0 {
		return vNo
	}
	end := 4 + int(n)
	switch {
	case end > len(b):
		return vMore
	case end == len(b):
		return vYes
	}
	for _, m := range s.smarks {
		if m.off == end {
			return vYes
		}
	}
	if len(b) < end+8 {
		return vMore
	}
	next := b[end:]
	nn := frameLength(next)
	nc := int32At(next, 4)
	if nn >= minResponseLen && nn <= int64(s.max) && nc == corr+1 {
		return vYes
	}
	return checkResponse(next, s.max, &s.c.pending)
}

// maxEventData bounds the skipped bytes an EventResync carries (Event.Data):
// enough to see what the garbage was (a stray protocol, a lost frame's
// tail), not a copy of a long run of it.
const maxEventData = 64 << 10

// maxEventHeld bounds the skipped bytes all connections keep at once for
// their resync events: with thousands of connections resynchronising
// (garbage on every one), maxEventData each would be gigabytes. Past it
// an event shows fewer of its first bytes (its count is still whole).
const maxEventHeld = 16 << 20

// drop counts b as skipped in the current resync and keeps its bytes while
// the first maxEventData are not kept yet (and all connections keep less
// than maxEventHeld).
func (s *splitter) drop(b []byte) {
	s.skipped += int64(len(b))
	d := s.c.d
	room := min(maxEventData-len(s.skippedData), int(maxEventHeld-d.eventHeld))
	if room > 0 && len(b) > 0 {
		k := min(len(b), room)
		s.skippedData = append(s.skippedData, b[:k]...)
		d.eventHeld += int64(k)
	}
}

// forgetSkipped lets the skipped bytes go (their event was emitted).
func (s *splitter) forgetSkipped() {
	s.c.d.eventHeld -= int64(len(s.skippedData))
	s.skippedData = nil
}

// keep drops the first i bytes of the scan window.
func (s *splitter) keep(i int) {
	if i == 0 {
		return
	}
	s.drop(s.scan[:i])
	s.start = false
	s.from = 0
	n := copy(s.scan, s.scan[i:])
	s.scan = s.scan[:n]
	s.smarks = shiftMarks(s.smarks, i)
}

// shiftMarks drops marks for bytes before offset i and rebases the rest.
func shiftMarks(ms []mark, i int) []mark {
	j := 0
	for j+1 < len(ms) && ms[j+1].off <= i {
		j++
	}
	out := ms[:0]
	for k := j; k < len(ms); k++ {
		m := ms[k]
		m.off = max(m.off-i, 0)
		out = append(out, m)
	}
	return out
}

// found ends a resync at offset i of the scan window: it reports the bytes
// skipped and returns the window from i on, split by packet.
func (s *splitter) found(i int) []seg {
	if !s.req && !s.raw && i+8 <= len(s.scan) {
		s.c.resolveGap(int32At(s.scan, i+4)) // before the resync it ends
	}
	s.drop(s.scan[:i])
	skipped := s.skipped
	ms := shiftMarks(s.smarks, i)
	if skipped > 0 && len(ms) > 0 {
		s.c.resync(s, skipped, ms[0])
	}
	s.forgetSkipped()
	data := append([]byte(nil), s.scan[i:]...)
	out := make([]seg, 0, len(ms))
	for k, m := range ms {
		end := len(data)
		if k+1 < len(ms) {
			end = ms[k+1].off
		}
		if end > m.off {
			out = append(out, seg{data[m.off:end], m.frame, m.time})
		}
	}
	s.skipped = 0
	s.start = false
	s.from = 0
	s.scan = s.scan[:0]
	s.smarks = s.smarks[:0]
	s.state = stLen
	s.nLen = 0
	return out
}

// gap handles n lost bytes (n < 0: unknown). It reports whether the
// bytes lost may hold whole frames: false when they lie inside the frame
// being built (or the one being skipped) and their number is known.
func (s *splitter) gap(n int64) (beyond bool) {
	defer s.account()
	switch s.state {
	case stOff:
		return false
	case stSkip:
		if n >= 0 && n <= s.skip {
			s.skip -= n
			if s.skip == 0 {
				s.state = stLen
			}
			return false
		}
		s.toScan()
	case stBody:
		left := int64(s.need - len(s.buf))
		s.c.cut(s, s.buf, s.need, s.first, "a gap")
		// In sync, a gap of known size inside the frame is skipped
		// exactly, even when the cut left the request header incomplete
		// (but not contradicted).
		if n >= 0 && n <= left && (s.checked || s.checkHeader() == vMore) {
			s.buf = nil
			s.skip = left - n
			s.state = stSkip
			if s.skip == 0 {
				s.state = stLen
			}
			return false
		}
		s.buf = nil
		s.toScan()
	case stLen:
		if s.nLen == 0 && n == 0 {
			return false
		}
		s.drop(s.lenBuf[:s.nLen])
		s.toScan()
	case stScan:
		s.drop(s.scan)
		s.scan = s.scan[:0]
		s.smarks = s.smarks[:0]
		s.start = false
		s.from = 0
	}
	return true
}

// end flushes the splitter when its connection ends: a partial frame is
// reported as cut, leftover scan bytes as skipped.
func (s *splitter) end(why string) {
	defer s.account()
	switch s.state {
	case stBody:
		s.c.cut(s, s.buf, s.need, s.first, why)
		s.buf = nil
	case stLen:
		if s.nLen > 0 {
			s.c.cut(s, s.lenBuf[:s.nLen], -1, s.first, why)
		}
	case stScan:
		s.drop(s.scan)
		if s.skipped > 0 {
			s.c.trailing(s, s.skipped)
		}
		s.forgetSkipped()
	}
	s.state = stOff
	s.scan = nil
	s.smarks = nil
}

// grow makes room for k more bytes in the frame being built. A frame of
// at most frameOnce bytes gets its whole buffer at once, when the
// partial bound keeps half its room after it (so that frames whose bytes
// stopped coming cannot take what arriving frames need: 16 stalled
// connections claiming 16 MiB each would fill the default bound, and
// every later large frame would be cut): by then its first allocAhead bytes
// arrived (the first buffer holds them), so a length that no bytes
// follow costs no more than before, and a real frame is copied once
// more, its first allocAhead bytes. Larger frames (or with no room)
// quadruple (fewer copies than doubling), never beyond the frame's size.
func (s *splitter) grow(k int) {
	b := s.buf
	if len(b)+k <= cap(b) {
		return
	}
	c := min(max(4*cap(b), len(b)+k), s.need)
	if d := s.c.d; s.need <= frameOnce && (d.maxPartial == 0 || d.partial+int64(s.need-cap(b)) <= d.maxPartial/2) {
		c = s.need
	}
	nb := make([]byte, len(b), c)
	copy(nb, b)
	s.buf = nb
}
