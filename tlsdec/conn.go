package tlsdec

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"time"
)

// Record layer limits (RFC 8446 section 5.2; RFC 5246 section 6.2.3): a
// TLSCiphertext fragment is at most 2^14 + 2048 bytes (TLS 1.3 allows
// 2^14 + 256); a longer length is not TLS.
const (
	MaxRecord = 1<<14 + 2048
	hdrLen    = 5
	// maxHandshake bounds a handshake message kept whole (the hellos,
	// EncryptedExtensions): 64 KiB holds any real ClientHello, post-quantum
	// key shares included. Longer ones, and every message kwire does not
	// read (certificates), are skipped by their length without being held.
	maxHandshake = 64 << 10
)

// Record content types (RFC 8446 section 5.1).
const (
	ctChangeCipherSpec = 20
	ctAlert            = 21
	ctHandshake        = 22
	ctApplicationData  = 23
	ctHeartbeat        = 24
)

// Dir is a direction of a connection, 0 or 1 in the caller's numbering.
type Dir uint8

// Mark says where bytes came from: the 1-based packet number and the
// capture time of the packet that carried them.
type Mark struct {
	Frame int64
	Time  time.Time
}

// Handler receives a connection's decrypted application data and what
// happened to it, synchronously from Conn's methods.
type Handler interface {
	// Plaintext delivers the next application data bytes of direction
	// dir, all carried (encrypted) by the packet at. data is valid only
	// during the call.
	Plaintext(dir Dir, data []byte, at Mark)
	// Lost says n bytes of dir's application data will not be delivered
	// (n < 0: an unknown number); the next Plaintext follows them, if any
	// comes.
	Lost(dir Dir, n int64, at Mark)
	// Event reports what the record layer learnt or could not do.
	Event(ev *Event)
}

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds.
const (
	// EventDecrypting: the first record of the connection authenticated
	// with the logged keys; Info says version, suite, SNI and ALPN.
	EventDecrypting EventKind = iota + 1
	// EventNoKey: the key log has no secrets for the connection's client
	// random (Detail says how many keys were loaded).
	EventNoKey
	// EventNoHandshake: encrypted records came before any captured
	// ClientHello and ServerHello (the capture began mid-connection).
	EventNoHandshake
	// EventAuthFailed: a record failed authentication (wrong key, lost
	// records, corrupt data); the rest of Dir is lost.
	EventAuthFailed
	// EventAlert: a TLS alert (Detail names it: "close_notify").
	EventAlert
	// EventUnsupported: a version, cipher suite or feature kwire does not
	// decrypt (Detail says which).
	EventUnsupported
	// EventMalformed: bytes that break the record layer (a length over
	// MaxRecord, a bad handshake message); the rest of Dir is lost.
	EventMalformed
	// EventKeyUpdate: a TLS 1.3 KeyUpdate, Dir's next records use the
	// next traffic secret; or a TLS 1.2 renegotiation followed, each
	// direction's records after its next ChangeCipherSpec use its keys.
	EventKeyUpdate
	// EventGapLost: a TCP gap could not be resynchronised on; the rest of
	// Dir is lost.
	EventGapLost
	// EventUndecrypted: at Close, how many bytes of Dir's records were
	// not decrypted (Bytes) after one of the failures above.
	EventUndecrypted
)

// Event is something the record layer reports about a connection.
type Event struct {
	Kind   EventKind
	Dir    Dir
	At     Mark
	Bytes  int64  // EventUndecrypted: ciphertext bytes not decrypted
	Alert  byte   // EventAlert: AlertDescription (RFC 8446 section 6; 0 close_notify)
	Fatal  bool   // EventAlert: AlertLevel fatal (2)
	Detail string // in plain words
	Info   *Info  // EventDecrypting, EventNoKey: the connection as known
}

// Info describes a connection as its handshake shows it.
type Info struct {
	Version      uint16   // negotiated protocol version (VersionTLS12, VersionTLS13); 0 unknown
	Suite        uint16   // negotiated cipher suite; 0 unknown
	SNI          string   // ClientHello server_name (RFC 6066)
	ALPN         string   // the protocol the server chose (RFC 7301), "" none
	OfferedALPN  []string // the protocols the client offered
	ClientRandom [32]byte
	Client       Dir  // the direction of the ClientHello
	Resumed      bool // an abbreviated (session ID or ticket) or PSK handshake
	EMS          bool // TLS 1.2 extended master secret (RFC 7627)
	ETM          bool // TLS 1.2 encrypt-then-MAC (RFC 7366)
}

// Summary words i: "TLS 1.3 TLS_AES_128_GCM_SHA256 SNI broker1 ALPN kafka".
func (i *Info) Summary() string {
	s := VersionName(i.Version) + " " + SuiteName(i.Suite)
	if i.SNI != "" {
		s += " SNI " + i.SNI
	}
	if i.ALPN != "" {
		s += " ALPN " + i.ALPN
	}
	if i.Resumed {
		s += " resumed"
	}
	if i.EMS && i.Version == VersionTLS12 {
		s += " EMS"
	}
	if i.ETM && i.Version == VersionTLS12 {
		s += " encrypt-then-MAC"
	}
	return s
}

// Options configure a Conn.
type Options struct {
	// Keys look up secrets by client random; nil is an empty key log.
	Keys Keys
	// Wait holds records whose keys are not yet in Keys, looking them up
	// again with each new record and at Close, instead of reporting
	// EventNoKey at once: a live capture sees a handshake before the
	// client appends its secrets to the key log file. So for a TLS 1.2
	// renegotiation: the records after each side's ChangeCipherSpec wait
	// for the key log's line of its client random.
	Wait bool
	// Reserve, when not nil, accounts the bytes a Conn holds: the record
	// being reassembled, a handshake message reassembled across records,
	// records held by Wait. It is called with a positive n before
	// holding more and a negative n when letting go; the bytes count
	// either way. For records held by Wait, a false answer refuses them
	// (their bytes are given back at once) and the wait ends with
	// EventNoKey. Record and handshake buffers, bounded by MaxRecord and
	// 64 KiB per direction, are held anyway.
	Reserve func(n int64) bool
	// Sessions, when not nil, is where TLS 1.2 master secrets are kept
	// for connections that resume a session (shared by one capture's
	// Conns).
	Sessions *Sessions
}

// Conn decrypts the two directions of one TLS connection. It is not safe
// for concurrent use; its Handler is called synchronously.
type Conn struct {
	opts Options
	h    Handler
	half [2]half

	info    Info
	state   connState
	ch, sh  *hello
	secrets Secrets
	keyed   bool // secrets were found
	// reCH is the ClientHello of a TLS 1.2 renegotiation (sent under the
	// connection's keys) until its ServerHello; reNoKey says the last
	// renegotiation's keys are not in the key log: each direction's
	// records after its next ChangeCipherSpec are not decrypted.
	reCH    *hello
	reNoKey bool
	// reWait is a renegotiation whose key is awaited (Options.Wait): the
	// records after a side's ChangeCipherSpec are held (half.reHold)
	// until it is in Keys, or Close gives up.
	reWait   *reneg
	told     bool // EventDecrypting or the reason it cannot come was reported
	waiting  []held
	waitSize int64
	early    bool   // 0-RTT data was reported
	ticket   []byte // TLS 1.2 NewSessionTicket.ticket
}

type connState uint8

const (
	csStart     connState = iota // no ClientHello yet
	csHello                      // ClientHello seen
	csNegotiate                  // ServerHello seen: version and suite known
	csNoKey                      // no secrets: records are counted, not decrypted
	csBroken                     // no handshake, unsupported: not decrypted
)

// held is a record waiting for its keys; lost marks a record lost in a
// gap while they were awaited (its length in n), whose sequence number
// counts.
type held struct {
	dir   Dir
	hdr   [5]byte
	frag  []byte
	marks []pmark
	lost  bool
	n     int
	at    Mark
}

// reneg is a TLS 1.2 renegotiation's handshake: its hellos and where its
// ServerHello was (for the event told when its keys come).
type reneg struct {
	ch, sh *hello
	s      *suite
	dir    Dir
	at     Mark
}

// pmark says which packet carried a record's fragment bytes from off on.
type pmark struct {
	off int
	at  Mark
}

// half is one direction's record layer.
type half struct {
	dir Dir

	hdr   [hdrLen]byte
	nhdr  int
	hdrAt Mark
	frag  []byte
	need  int
	marks []pmark
	skip  int64 // bytes of a record cut by a gap still to skip
	cap   int64 // bytes reserved for frag

	prot    *protection // nil: records are plaintext
	next    *protection // TLS 1.2: takes over at ChangeCipherSpec
	secret  []byte      // TLS 1.3: the traffic secret of prot
	app     []byte      // TLS 1.3: the application traffic secret, for after Finished
	inHS    bool        // TLS 1.3: prot is the handshake key
	decrypt int64       // records decrypted under any key

	hs     []byte // handshake bytes not yet parsed (messages kept whole)
	hsSkip int    // bytes of a skipped handshake message still to come
	hsCap  int64

	records  int  // records seen
	dead     bool // the rest of this direction is not decrypted
	quiet    bool // for a reason reported for the connection (no key): no EventUndecrypted
	deadWhy  string
	deadSize int64
	earlyOK  bool // TLS 1.3 client: the first handshake-key record decrypted
	waitCCS  bool // TLS 1.2: a ChangeCipherSpec is held: so are the records after it
	reHold   bool // TLS 1.2: past a renegotiation's ChangeCipherSpec whose keys are awaited (Conn.reWait)
	pt       []byte
	one      [1]pmark
}

// NewConn returns a Conn that reports to h.
func NewConn(opts Options, h Handler) *Conn {
	c := &Conn{opts: opts, h: h}
	c.half[0].dir, c.half[1].dir = 0, 1
	return c
}

// Info returns what the handshake told so far.
func (c *Conn) Info() Info { return c.info }

// Decrypting reports whether records of the connection authenticated.
func (c *Conn) Decrypting() bool { return c.half[0].decrypt+c.half[1].decrypt > 0 }

func (c *Conn) reserve(n int64) bool {
	if c.opts.Reserve == nil || n == 0 {
		return true
	}
	return c.opts.Reserve(n)
}

func (c *Conn) event(ev *Event) {
	if c.h != nil {
		c.h.Event(ev)
	}
}

// Data delivers the next bytes of direction dir, all carried by the
// packet at.
func (c *Conn) Data(dir Dir, data []byte, at Mark) {
	h := &c.half[dir&1]
	if len(c.waiting) > 0 {
		c.retryKeys(false)
	}
	for len(data) > 0 {
		if h.dead {
			h.deadSize += int64(len(data))
			return
		}
		if h.skip > 0 {
			k := min(int64(len(data)), h.skip)
			data = data[k:]
			h.skip -= k
			continue
		}
		if h.nhdr < hdrLen {
			if h.nhdr == 0 {
				h.hdrAt = at
				// Fast path: a whole record in this packet is opened in
				// place, without copying it.
				if len(data) >= hdrLen {
					hdr := [5]byte(data[:hdrLen])
					if !c.header(h, hdr) {
						continue // dead now
					}
					if n := int(binary.BigEndian.Uint16(data[3:])); len(data) >= hdrLen+n {
						h.one[0] = pmark{0, at}
						c.record(h, hdr, data[hdrLen:hdrLen+n], h.one[:], false)
						data = data[hdrLen+n:]
						continue
					}
				}
			}
			k := copy(h.hdr[h.nhdr:], data)
			h.nhdr += k
			data = data[k:]
			if h.nhdr < hdrLen {
				return
			}
			if !c.header(h, h.hdr) {
				continue // dead now
			}
			h.need = int(binary.BigEndian.Uint16(h.hdr[3:]))
			h.frag = h.frag[:0]
			h.marks = h.marks[:0]
			if want := int64(h.need); want > h.cap {
				c.reserve(want - h.cap)
				h.cap = want
			}
		}
		k := min(len(data), h.need-len(h.frag))
		if k > 0 {
			if cap(h.frag) < h.need {
				nb := make([]byte, len(h.frag), h.need)
				copy(nb, h.frag)
				h.frag = nb
			}
			h.marks = append(h.marks, pmark{len(h.frag), at})
			h.frag = append(h.frag, data[:k]...)
			data = data[k:]
		}
		if len(h.frag) == h.need {
			h.nhdr = 0
			c.record(h, h.hdr, h.frag, h.marks, true)
		}
	}
}

// header checks a record header; a bad one kills the direction.
func (c *Conn) header(h *half, hdr [5]byte) bool {
	n := int(binary.BigEndian.Uint16(hdr[3:]))
	switch {
	case hdr[0] < ctChangeCipherSpec || hdr[0] > ctHeartbeat || hdr[1] != 3:
		bad := hdr // only this copy escapes, and only here
		c.kill(h, EventMalformed, fmt.Sprintf("not a TLS record header (% x)", bad[:]), h.hdrAt)
		return false
	case n > MaxRecord:
		c.kill(h, EventMalformed, fmt.Sprintf("TLS record length %d over the maximum %d", n, MaxRecord), h.hdrAt)
		return false
	}
	return true
}

// kill ends decryption of h: what follows is counted, not decrypted.
func (c *Conn) kill(h *half, kind EventKind, detail string, at Mark) {
	if h.dead {
		return
	}
	h.dead = true
	h.deadWhy = detail
	h.nhdr = 0
	h.frag = nil
	h.hs = nil
	c.reserve(-h.cap - h.hsCap)
	h.cap, h.hsCap = 0, 0
	if kind != 0 {
		c.event(&Event{Kind: kind, Dir: h.dir, At: at, Detail: detail})
	}
	if c.h != nil {
		c.h.Lost(h.dir, -1, at)
	}
}

// Gap reports n bytes of dir lost (n < 0: unknown) at capture time t.
// Within a record whose end is known the record is lost and the next one
// is read in step; otherwise the rest of the direction is lost.
func (c *Conn) Gap(dir Dir, n int64, t time.Time) {
	h := &c.half[dir&1]
	if h.dead {
		return
	}
	at := Mark{Time: t}
	if h.skip > 0 {
		if n >= 0 && n < h.skip {
			h.skip -= n
			return
		}
		c.kill(h, EventGapLost, "a TCP gap across TLS records: the records after it cannot be told apart", at)
		return
	}
	inRecord := h.nhdr == hdrLen
	if inRecord && n >= 0 && n < int64(h.need-len(h.frag)) {
		// The record is lost, the next one starts where it ends.
		h.skip = int64(h.need-len(h.frag)) - n
		h.nhdr = 0
		c.lostRecord(h, h.hdr, h.need, at)
		return
	}
	if c.state <= csHello && h.records == 0 {
		// Nothing of this direction was read yet: its first record may
		// still come whole (a handshake record after a lost SYN).
		h.nhdr = 0
		return
	}
	c.kill(h, EventGapLost, "a TCP gap across TLS records: the records after it cannot be told apart", at)
}

// lostRecord accounts a record lost in a gap: its sequence number is
// used; its plaintext is lost to the handler.
func (c *Conn) lostRecord(h *half, hdr [5]byte, n int, at Mark) {
	if h.reHold {
		// Under a renegotiation's keys still awaited: its sequence
		// number counts when they come, in its place among those held.
		c.waiting = append(c.waiting, held{dir: h.dir, hdr: hdr, lost: true, n: n, at: at})
		return
	}
	h.records++
	if h.prot == nil || c.info.Version == VersionTLS13 && hdr[0] != ctApplicationData {
		// A record in the clear: a handshake message it continued is
		// not kept.
		h.hs, h.hsSkip = h.hs[:0], 0
		return
	}
	if h.inHS {
		// A handshake record may hold the Finished that changes keys.
		c.kill(h, EventGapLost, "a TCP gap inside the encrypted handshake: the key change cannot be followed", at)
		return
	}
	h.prot.seq++
	if hdr[0] == ctApplicationData || c.info.Version == VersionTLS13 {
		lost := int64(n - h.prot.offset() - h.prot.overheadAfter())
		if c.info.Version == VersionTLS13 {
			lost-- // the inner content type
		}
		if h.prot.block != nil || lost < 0 {
			lost = -1 // CBC padding is unknown
		}
		if c.h != nil {
			c.h.Lost(h.dir, lost, at)
		}
	}
}

// overheadAfter is the bytes after the plaintext in an AEAD record (the
// tag); 0 for CBC (unknown).
func (p *protection) overheadAfter() int {
	if p.aead != nil {
		return p.aead.Overhead()
	}
	return 0
}

// Close ends the connection: records still waiting for keys are given a
// last chance, then reported.
func (c *Conn) Close() {
	if len(c.waiting) > 0 || c.reWait != nil {
		c.retryKeys(true)
	}
	for i := range c.half {
		h := &c.half[i]
		if h.dead && h.deadSize > 0 && !h.quiet {
			c.event(&Event{Kind: EventUndecrypted, Dir: h.dir, Bytes: h.deadSize,
				Detail: fmt.Sprintf("%d bytes of TLS records not decrypted after: %s", h.deadSize, h.deadWhy)})
		}
		c.reserve(-h.cap - h.hsCap)
		h.cap, h.hsCap = 0, 0
		h.frag, h.hs = nil, nil
	}
}

// record handles one whole record; frag and marks are valid during the
// call only. owned says frag is the half's buffer, which may be
// overwritten.
func (c *Conn) record(h *half, hdr [5]byte, frag []byte, marks []pmark, owned bool) {
	h.records++
	at := marks[0].at
	if c.state == csNoKey || c.state == csBroken {
		c.killQuiet(h, int64(hdrLen+len(frag)))
		return
	}
	if c.state == csNegotiate && !c.keyed && (h.waitCCS || hdr[0] == ctApplicationData) {
		// Encrypted records whose keys are missing: wait, or give up.
		if c.opts.Wait && c.hold(h, hdr, frag, marks) {
			return
		}
		c.noKey(at)
		c.killQuiet(h, int64(hdrLen+len(frag)))
		return
	}
	if h.reHold {
		// Under a renegotiation's keys: once they are in the key log,
		// the records held before this one are read first.
		if len(c.waiting) > 0 {
			c.retryRenegKeys(false)
		} else {
			c.renegKeys()
		}
		if h.reHold {
			if c.hold(h, hdr, frag, marks) {
				return
			}
			c.renegNoKey(h, at, int64(hdrLen+len(frag)))
			return
		}
	}
	if h.prot == nil || c.info.Version == VersionTLS13 && hdr[0] != ctApplicationData {
		// In the clear; TLS 1.3 protects only application_data records.
		c.plainRecord(h, hdr, frag, at)
		return
	}
	dst := h.pt[:0]
	if owned && h.prot.aead != nil {
		// The record is in the half's own buffer: open it in place
		// (cipher.AEAD allows ciphertext[:0] as dst).
		dst = frag[h.prot.explicit:h.prot.explicit]
	}
	pt, typ, err := h.prot.open(dst, hdr, frag)
	if !owned && cap(pt) > cap(h.pt) {
		h.pt = pt[:0]
	}
	if err != nil {
		h.prot.seq-- // open advanced it
		if c.earlyData(h, err) {
			c.h.Lost(h.dir, -1, at)
			return
		}
		c.authFailed(h, err, int64(hdrLen+len(frag)), at)
		return
	}
	h.decrypt++
	if h.inHS {
		h.earlyOK = true
	}
	if !c.told && (c.info.Version != VersionTLS13 || h.dir != c.info.Client || typ == ctApplicationData) {
		// In TLS 1.3 the server's first record holds EncryptedExtensions,
		// whose ALPN the event tells: it waits for that record.
		if typ == ctHandshake && c.info.Version == VersionTLS13 {
			if alpn, ok := peekEE(pt); ok {
				c.info.ALPN = alpn
			}
		}
		c.decrypting(at)
	}
	switch typ {
	case ctApplicationData:
		c.deliver(h, pt, h.prot.offset(), marks)
	case ctHandshake:
		c.handshake(h, pt, at, true)
	case ctAlert:
		c.alert(h, pt, at)
	case ctChangeCipherSpec:
		// TLS 1.3 never encrypts one (ignored); in TLS 1.2 it ends a
		// renegotiation: its keys take over.
		if c.info.Version != VersionTLS12 {
			break
		}
		switch {
		case h.next == nil && c.reWait != nil && !c.renegKeys():
			// Its key is awaited: the records after are held.
			h.reHold = true
		case h.next != nil:
			h.prot, h.next = h.next, nil
		case c.reNoKey:
			c.kill(h, EventUnsupported, renegNoKeyDetail, at)
		}
	}
}

// renegNoKeyDetail is the event of a side's records after a
// renegotiation's ChangeCipherSpec when its key is not in the key log.
const renegNoKeyDetail = "TLS renegotiation with no key for its client random: the records after its ChangeCipherSpec are not decrypted"

// renegotiated takes the ServerHello of a TLS 1.2 renegotiation (c.reCH
// its ClientHello): the new keys, from the key log's master secret for
// the new client random, wait in each half's next for its
// ChangeCipherSpec. With no key, or a version or suite kwire does not
// decrypt, the records after it are not decrypted (reNoKey), and an event
// says why; with no key and Options.Wait, the key is awaited (reWait) as
// a connection's first is: the records after each side's
// ChangeCipherSpec are held until it comes or Close gives up.
func (c *Conn) renegotiated(h *half, body []byte, at Mark) {
	ch := c.reCH
	c.reCH = nil
	c.reWait = nil
	sh, err := parseHello(body, false)
	if err != nil {
		c.kill(h, EventMalformed, "malformed TLS ServerHello (renegotiation)", at)
		return
	}
	s := suiteByID(sh.suite)
	if sh.version != VersionTLS12 || s == nil || s.tls13 {
		c.renegFails(fmt.Sprintf("TLS renegotiation to %s %s, which kwire does not decrypt", VersionName(sh.version), SuiteName(sh.suite)), h.dir, at)
		return
	}
	r := &reneg{ch: ch, sh: sh, s: s, dir: h.dir, at: at}
	if master := c.renegMaster(r); master != nil {
		c.renegSetKeys(r, master)
		return
	}
	if c.opts.Wait {
		c.reNoKey = false
		for i := range c.half {
			c.half[i].next = nil
		}
		c.reWait = r
		return
	}
	c.renegFails(fmt.Sprintf("TLS renegotiation: no key for its client random %s", hex.EncodeToString(ch.random[:4])+"…"), h.dir, at)
}

// renegMaster is the master secret of a renegotiation: the key log's for
// its client random, or a resumed session's; nil when neither is known.
func (c *Conn) renegMaster(r *reneg) []byte {
	if c.opts.Keys != nil {
		if sec, ok := c.opts.Keys.Lookup(r.ch.random); ok && sec.Master != nil {
			return sec.Master
		}
	}
	if len(r.sh.sessionID) > 0 && string(r.sh.sessionID) == string(r.ch.sessionID) {
		return c.opts.Sessions.get(sessionKey('i', r.sh.sessionID)) // resumed
	}
	return nil
}

// renegFails says why a renegotiation's records are not decrypted: those
// after each side's ChangeCipherSpec are not (reNoKey).
func (c *Conn) renegFails(detail string, dir Dir, at Mark) {
	c.reNoKey = true
	for i := range c.half {
		c.half[i].next = nil
	}
	c.event(&Event{Kind: EventUnsupported, Dir: dir, At: at, Detail: detail + ": the records after its ChangeCipherSpec are not decrypted"})
}

// renegSetKeys puts a renegotiation's keys in each half's next, for its
// ChangeCipherSpec, and tells the renegotiation.
func (c *Conn) renegSetKeys(r *reneg, master []byte) bool {
	ch, sh, s := r.ch, r.sh, r.s
	cl, sv := &c.half[c.info.Client], &c.half[1-c.info.Client]
	etm := sh.etm && ch.etm
	cMAC, sMAC, cKey, sKey, cIV, sIV := keyBlock12(s, master, ch.random, sh.random)
	cp, err := newProtection(s, false, cKey, cIV, cMAC, etm)
	var sp *protection
	if err == nil {
		sp, err = newProtection(s, false, sKey, sIV, sMAC, etm)
	}
	if err != nil {
		c.reNoKey = true
		c.event(&Event{Kind: EventUnsupported, Dir: r.dir, At: r.at, Detail: "TLS renegotiation: cipher setup failed: " + err.Error()})
		return false
	}
	cl.next, sv.next = cp, sp
	c.reNoKey = false
	if len(sh.sessionID) > 0 {
		c.opts.Sessions.add(sessionKey('i', sh.sessionID), master)
	}
	c.event(&Event{Kind: EventKeyUpdate, Dir: r.dir, At: r.at,
		Detail: fmt.Sprintf("TLS renegotiation (client random %s, %s): each side's records after its next ChangeCipherSpec use the new keys", hex.EncodeToString(ch.random[:4])+"…", SuiteName(sh.suite))})
	return true
}

// renegKeys looks an awaited renegotiation's key up (c.reWait): once it
// is there, the keys are set, and each side past its ChangeCipherSpec
// switches to them. It reports whether they were set.
func (c *Conn) renegKeys() bool {
	r := c.reWait
	if r == nil {
		return false
	}
	master := c.renegMaster(r)
	if master == nil {
		return false
	}
	c.reWait = nil
	if !c.renegSetKeys(r, master) {
		for i := range c.half {
			if h := &c.half[i]; h.reHold {
				h.reHold = false
				c.kill(h, 0, "TLS renegotiation: cipher setup failed", r.at)
			}
		}
		return false
	}
	for i := range c.half {
		if h := &c.half[i]; h.reHold {
			h.reHold = false
			h.prot, h.next = h.next, nil
		}
	}
	return true
}

// renegNoKey gives up an awaited renegotiation's key (at Close, or when
// a record of h, n bytes, passes the bound on those held; h nil at
// Close): as without Options.Wait, an event says so, and each side past
// its ChangeCipherSpec is not decrypted, its records held (and the n
// bytes) counted as such.
func (c *Conn) renegNoKey(h0 *half, at Mark, n int64) {
	r := c.reWait
	if r == nil {
		return
	}
	c.reWait = nil
	c.renegFails(fmt.Sprintf("TLS renegotiation: no key for its client random %s", hex.EncodeToString(r.ch.random[:4])+"…"), r.dir, r.at)
	held := [2]int64{}
	for _, w := range c.waiting {
		if !w.lost {
			held[w.dir&1] += int64(hdrLen + len(w.frag))
		}
	}
	c.dropWaiting()
	for i := range c.half {
		if h := &c.half[i]; h.reHold {
			h.reHold = false
			c.kill(h, EventUnsupported, renegNoKeyDetail, at)
			h.deadSize += held[i]
		}
	}
	if h0 != nil {
		h0.deadSize += n
	}
}

// killQuiet stops h without an event of its own (the connection-level
// reason was reported).
func (c *Conn) killQuiet(h *half, n int64) {
	if !h.dead {
		h.dead = true
		h.quiet = true
		switch c.state {
		case csNoKey:
			h.deadWhy = "no key for the client random"
		default:
			h.deadWhy = "no decryptable handshake"
		}
		c.reserve(-h.cap - h.hsCap)
		h.cap, h.hsCap = 0, 0
		h.frag, h.hs = nil, nil
		h.nhdr = 0
	}
	h.deadSize += n
}

// earlyData reports whether a record that failed under the client's
// handshake key is 0-RTT early data (the client offered it and no record
// decrypted under the handshake key yet): lost, not a failure.
func (c *Conn) earlyData(h *half, err error) bool {
	if err != errAuth || c.ch == nil || !c.ch.earlyData || h.dir != c.info.Client || !h.inHS || h.earlyOK || h.records > 64 {
		return false
	}
	c.tellEarly(h)
	return true
}

// tellEarly reports, once, that 0-RTT data is not decrypted.
func (c *Conn) tellEarly(h *half) {
	if !c.early {
		c.early = true
		c.event(&Event{Kind: EventUnsupported, Dir: h.dir, At: h.hdrAt, Detail: "0-RTT early data is not decrypted"})
	}
}

func (c *Conn) authFailed(h *half, err error, n int64, at Mark) {
	why := "a TLS record failed authentication (wrong key or corrupt data): the rest of this direction is not decrypted"
	if err == errShort {
		why = "a TLS record is shorter than its cipher's overhead (corrupt data): the rest of this direction is not decrypted"
	}
	if h.decrypt == 0 && c.half[1-h.dir].decrypt == 0 {
		why = "the first encrypted TLS record failed authentication: the key logged for this client random is wrong (or the data is corrupt)"
		c.told = true
	}
	c.kill(h, EventAuthFailed, why, at)
	h.deadSize += n
}

// decrypting reports EventDecrypting once.
func (c *Conn) decrypting(at Mark) {
	if c.told {
		return
	}
	c.told = true
	info := c.info
	c.event(&Event{Kind: EventDecrypting, Dir: c.info.Client, At: at, Info: &info, Detail: "decrypted: " + info.Summary()})
}

// deliver hands plaintext to the handler, cut at the packets that carried
// its bytes: plaintext byte i is fragment byte off+i.
func (c *Conn) deliver(h *half, pt []byte, off int, marks []pmark) {
	if c.h == nil || len(pt) == 0 {
		return
	}
	for i, m := range marks {
		from := m.off - off
		to := len(pt)
		if i+1 < len(marks) {
			to = min(marks[i+1].off-off, len(pt))
		}
		from = max(from, 0)
		if from < to {
			c.h.Plaintext(h.dir, pt[from:to], m.at)
		}
	}
}

// plainRecord handles a record sent in the clear.
func (c *Conn) plainRecord(h *half, hdr [5]byte, frag []byte, at Mark) {
	switch hdr[0] {
	case ctHandshake:
		c.handshake(h, frag, at, false)
	case ctAlert:
		c.alert(h, frag, at)
	case ctChangeCipherSpec:
		c.changeCipherSpec(h, at)
	case ctApplicationData:
		switch {
		case c.state == csStart:
			c.state = csBroken
			c.told = true
			c.event(&Event{Kind: EventNoHandshake, Dir: h.dir, At: at,
				Detail: "TLS handshake not captured (the capture began mid-connection): not decryptable"})
			c.killQuiet(h, int64(hdrLen+len(frag)))
		case c.state == csHello && h.dir == c.info.Client && c.ch != nil && c.ch.earlyData:
			// 0-RTT data before the ServerHello.
			c.tellEarly(h)
			if c.h != nil {
				c.h.Lost(h.dir, -1, at)
			}
		default:
			c.state = csBroken
			c.told = true
			c.event(&Event{Kind: EventNoHandshake, Dir: h.dir, At: at,
				Detail: "TLS ServerHello not captured: not decryptable"})
			c.killQuiet(h, int64(hdrLen+len(frag)))
		}
	}
}

// alert reports an alert record (RFC 8446 section 6).
func (c *Conn) alert(h *half, b []byte, at Mark) {
	if len(b) < 2 {
		c.event(&Event{Kind: EventAlert, Dir: h.dir, At: at, Alert: 0xff, Detail: "malformed TLS alert"})
		return
	}
	level := "warning"
	if b[0] == 2 {
		level = "fatal"
	}
	d := alertName(b[1])
	detail := "TLS alert " + d
	if d != "close_notify" {
		detail = fmt.Sprintf("TLS alert %s (%s)", d, level)
	}
	c.event(&Event{Kind: EventAlert, Dir: h.dir, At: at, Alert: b[1], Fatal: b[0] == 2, Detail: detail})
}

var alertNames = map[byte]string{
	0: "close_notify", 10: "unexpected_message", 20: "bad_record_mac", 21: "decryption_failed",
	22: "record_overflow", 40: "handshake_failure", 42: "bad_certificate", 43: "unsupported_certificate",
	44: "certificate_revoked", 45: "certificate_expired", 46: "certificate_unknown", 47: "illegal_parameter",
	48: "unknown_ca", 49: "access_denied", 50: "decode_error", 51: "decrypt_error", 70: "protocol_version",
	71: "insufficient_security", 80: "internal_error", 86: "inappropriate_fallback", 90: "user_canceled",
	100: "no_renegotiation", 109: "missing_extension", 110: "unsupported_extension", 112: "unrecognized_name",
	113: "bad_certificate_status_response", 115: "unknown_psk_identity", 116: "certificate_required",
	120: "no_application_protocol",
}

func alertName(d byte) string {
	if n, ok := alertNames[d]; ok {
		return n
	}
	return fmt.Sprintf("alert(%d)", d)
}

// handshake feeds handshake bytes of h (plaintext or decrypted) to the
// message reassembly and handles each message completed.
func (c *Conn) handshake(h *half, b []byte, at Mark, encrypted bool) {
	for len(b) > 0 && !h.dead {
		if h.hsSkip > 0 {
			k := min(len(b), h.hsSkip)
			b = b[k:]
			h.hsSkip -= k
			continue
		}
		// Complete the 4-byte header, then the message if kept.
		if len(h.hs) < 4 {
			k := min(len(b), 4-len(h.hs))
			h.growHS(c, 4)
			h.hs = append(h.hs, b[:k]...)
			b = b[k:]
			if len(h.hs) < 4 {
				return
			}
		}
		typ := h.hs[0]
		n := int(h.hs[1])<<16 | int(h.hs[2])<<8 | int(h.hs[3])
		if !keepMessage(typ) || n > maxHandshake {
			if typ == hsFinished || typ == hsKeyUpdate {
				// Too long to be either: not a real handshake stream.
				c.kill(h, EventMalformed, fmt.Sprintf("TLS handshake message type %d of %d bytes", typ, n), at)
				return
			}
			h.hs = h.hs[:0]
			h.hsSkip = n
			continue
		}
		k := min(len(b), 4+n-len(h.hs))
		h.growHS(c, 4+n)
		h.hs = append(h.hs, b[:k]...)
		b = b[k:]
		if len(h.hs) < 4+n {
			return
		}
		c.message(h, typ, h.hs[4:], at, encrypted)
		if h.hs != nil {
			h.hs = h.hs[:0]
		}
	}
}

// growHS accounts the handshake buffer growing to n bytes.
func (h *half) growHS(c *Conn, n int) {
	if int64(n) > h.hsCap {
		c.reserve(int64(n) - h.hsCap)
		h.hsCap = int64(n)
	}
}

// keepMessage says whether a handshake message type is read (kept whole).
func keepMessage(typ byte) bool {
	switch typ {
	case hsClientHello, hsServerHello, hsEncryptedExtensions, hsFinished, hsKeyUpdate, hsEndOfEarlyData, hsNewSessionTicket:
		return true
	}
	return false
}

// message handles one whole handshake message.
func (c *Conn) message(h *half, typ byte, body []byte, at Mark, encrypted bool) {
	switch typ {
	case hsClientHello:
		if encrypted && c.info.Version == VersionTLS12 && c.keyed && h.dir == c.info.Client {
			// A renegotiation (RFC 5246 section 7.4.1.2, RFC 5746): a
			// new handshake under the current keys, whose keys take
			// over at each side's next ChangeCipherSpec.
			ch, err := parseHello(body, true)
			if err != nil {
				c.kill(h, EventMalformed, "malformed TLS ClientHello (renegotiation)", at)
				return
			}
			c.reCH = ch
			return
		}
		if encrypted || c.state >= csNegotiate {
			c.event(&Event{Kind: EventUnsupported, Dir: h.dir, At: at, Detail: "TLS renegotiation is not followed"})
			return
		}
		ch, err := parseHello(body, true)
		if err != nil {
			c.kill(h, EventMalformed, "malformed TLS ClientHello", at)
			return
		}
		if c.ch != nil && ch.random != c.ch.random {
			c.event(&Event{Kind: EventUnsupported, Dir: h.dir, At: at, Detail: "a second ClientHello with another random"})
		}
		c.ch = ch
		c.state = csHello
		c.info.Client = h.dir
		c.info.ClientRandom = ch.random
		c.info.SNI = ch.sni
		c.info.OfferedALPN = ch.alpn
	case hsServerHello:
		if encrypted && c.reCH != nil && h.dir != c.info.Client {
			c.renegotiated(h, body, at)
			return
		}
		if encrypted || c.ch == nil || h.dir == c.info.Client {
			if c.ch == nil {
				c.state = csBroken
				c.told = true
				c.event(&Event{Kind: EventNoHandshake, Dir: h.dir, At: at,
					Detail: "TLS ClientHello not captured: not decryptable"})
				c.killQuiet(h, 0)
			}
			return
		}
		sh, err := parseHello(body, false)
		if err != nil {
			c.kill(h, EventMalformed, "malformed TLS ServerHello", at)
			return
		}
		if sh.random == helloRetryRandom {
			return // HelloRetryRequest: a second ClientHello follows
		}
		c.serverHello(h, sh, at)
	case hsNewSessionTicket:
		if c.info.Version == VersionTLS12 && h.dir != c.info.Client && len(body) >= 6 {
			// lifetime_hint (4), ticket<0..2^16-1> (RFC 5077 section 3.3)
			n := int(body[4])<<8 | int(body[5])
			if n > 0 && 6+n <= len(body) {
				c.ticket = append([]byte(nil), body[6:6+n]...)
				if c.keyed {
					c.opts.Sessions.add(sessionKey('t', c.ticket), c.secrets.Master)
				}
			}
		}
	case hsEncryptedExtensions:
		if alpn, _ := parseEncryptedExtensions(body); alpn != "" {
			c.info.ALPN = alpn
		}
	case hsFinished:
		if c.info.Version == VersionTLS13 && h.inHS {
			// Keys change after this record (RFC 8446 section 5.1: a
			// Finished ends its record).
			h.switchTo(c, h.app)
			h.inHS = false
		}
	case hsKeyUpdate:
		if c.info.Version != VersionTLS13 || h.prot == nil || h.inHS {
			return
		}
		req := len(body) > 0 && body[0] == 1
		detail := "TLS KeyUpdate: the next records use the next traffic secret"
		if req {
			detail = "TLS KeyUpdate (update_requested): the next records use the next traffic secret"
		}
		h.switchTo(c, nextSecret13(h.prot.s, h.secret))
		c.event(&Event{Kind: EventKeyUpdate, Dir: h.dir, At: at, Detail: detail})
	}
}

// serverHello learns the version and suite and, for TLS 1.3, sets the
// handshake keys.
func (c *Conn) serverHello(h *half, sh *hello, at Mark) {
	c.sh = sh
	c.state = csNegotiate
	c.info.Version = sh.version
	c.info.Suite = sh.suite
	if sh.version != VersionTLS13 {
		c.info.ALPN = first(sh.alpn)
		c.info.EMS = sh.ems && c.ch.ems
		c.info.ETM = sh.etm && c.ch.etm
		c.info.Resumed = len(sh.sessionID) > 0 && string(sh.sessionID) == string(c.ch.sessionID)
	} else {
		c.info.Resumed = sh.psk
	}
	s := suiteByID(sh.suite)
	switch {
	case sh.version != VersionTLS12 && sh.version != VersionTLS13:
		c.unsupported(h, fmt.Sprintf("%s is not decrypted (TLS 1.2 and 1.3 are)", VersionName(sh.version)), at)
		return
	case s == nil || s.tls13 != (sh.version == VersionTLS13):
		c.unsupported(h, fmt.Sprintf("cipher suite %s is not decrypted", SuiteName(sh.suite)), at)
		return
	}
	if !c.lookup() {
		if !c.opts.Wait {
			c.noKey(at)
		}
		return
	}
	c.setKeys()
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func (c *Conn) unsupported(h *half, detail string, at Mark) {
	c.state = csBroken
	c.told = true
	info := c.info
	c.event(&Event{Kind: EventUnsupported, Dir: h.dir, At: at, Detail: detail, Info: &info})
}

// lookup finds the connection's secrets.
func (c *Conn) lookup() bool {
	if c.keyed {
		return true
	}
	if c.opts.Keys == nil {
		return false
	}
	s, ok := c.opts.Keys.Lookup(c.info.ClientRandom)
	if c.info.Version == VersionTLS12 && s.Master == nil && c.info.Resumed {
		// A resumed session: its master secret is that of the
		// connection that made it, if it was decrypted.
		if m := c.opts.Sessions.get(sessionKey('t', c.ch.ticket)); m != nil && len(c.ch.ticket) > 0 {
			s.Master, ok = m, true
		} else if m := c.opts.Sessions.get(sessionKey('i', c.sh.sessionID)); m != nil {
			s.Master, ok = m, true
		}
	}
	if !ok {
		return false
	}
	if c.info.Version == VersionTLS13 && (s.ClientHandshake == nil || s.ServerHandshake == nil || s.ClientTraffic == nil || s.ServerTraffic == nil) ||
		c.info.Version == VersionTLS12 && s.Master == nil {
		return false
	}
	c.secrets = s
	c.keyed = true
	if c.info.Version == VersionTLS12 {
		if len(c.sh.sessionID) > 0 {
			c.opts.Sessions.add(sessionKey('i', c.sh.sessionID), s.Master)
		}
		if c.ticket != nil {
			c.opts.Sessions.add(sessionKey('t', c.ticket), s.Master)
		}
	}
	return true
}

// noKey reports the missing key and stops decryption.
func (c *Conn) noKey(at Mark) {
	if c.state == csNoKey {
		return
	}
	c.state = csNoKey
	c.told = true
	n := 0
	if c.opts.Keys != nil {
		n = c.opts.Keys.Len()
	}
	detail := fmt.Sprintf("no key for client random %s (%d key%s loaded)", hex.EncodeToString(c.info.ClientRandom[:4])+"…", n, plural(n))
	if d, ok := c.opts.Keys.(Dropper); ok && d.Dropped() > 0 {
		detail = fmt.Sprintf("no key for client random %s (%d key%s loaded, %d older ones dropped past the key log's memory bound)", hex.EncodeToString(c.info.ClientRandom[:4])+"…", n, plural(n), d.Dropped())
	}
	if n > 0 {
		if s, ok := c.opts.Keys.Lookup(c.info.ClientRandom); ok {
			switch {
			case c.info.Version == VersionTLS13 && !s.tls13():
				detail = "the key log has only a TLS 1.2 master secret for this TLS 1.3 connection's client random"
			case c.info.Version == VersionTLS13:
				detail = "the key log lacks some TLS 1.3 traffic secrets for this client random"
			default:
				detail = "the key log has only TLS 1.3 secrets for this TLS 1.2 connection's client random"
			}
		}
	}
	info := c.info
	c.event(&Event{Kind: EventNoKey, Dir: c.info.Client, At: at, Detail: detail, Info: &info})
	for i := range c.half {
		h := &c.half[i]
		if c.info.Version == VersionTLS13 || h.prot != nil || h.next != nil {
			c.killQuiet(h, 0)
		}
	}
	c.dropWaiting()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// setKeys puts the keys in place once the secrets are known: TLS 1.3
// handshake keys for both directions; TLS 1.2 pending keys that take over
// at each direction's ChangeCipherSpec.
func (c *Conn) setKeys() {
	s := suiteByID(c.info.Suite)
	cl, sv := &c.half[c.info.Client], &c.half[1-c.info.Client]
	if c.info.Version == VersionTLS13 {
		cl.app, sv.app = c.secrets.ClientTraffic, c.secrets.ServerTraffic
		cl.switchTo(c, c.secrets.ClientHandshake)
		sv.switchTo(c, c.secrets.ServerHandshake)
		cl.inHS, sv.inHS = true, true
		return
	}
	cMAC, sMAC, cKey, sKey, cIV, sIV := keyBlock12(s, c.secrets.Master, c.info.ClientRandom, c.sh.random)
	var err error
	if cl.next, err = newProtection(s, false, cKey, cIV, cMAC, c.info.ETM); err == nil {
		sv.next, err = newProtection(s, false, sKey, sIV, sMAC, c.info.ETM)
	}
	if err != nil {
		c.unsupported(cl, "cipher setup failed: "+err.Error(), Mark{})
	}
}

// switchTo makes secret the TLS 1.3 read key of h, sequence number 0.
func (h *half) switchTo(c *Conn, secret []byte) {
	s := suiteByID(c.info.Suite)
	key, iv := trafficKeys13(s, secret)
	p, err := newProtection(s, true, key, iv, nil, false)
	if err != nil {
		c.unsupported(h, "cipher setup failed: "+err.Error(), Mark{})
		return
	}
	h.prot, h.secret = p, secret
}

// changeCipherSpec switches a TLS 1.2 direction to its keys.
func (c *Conn) changeCipherSpec(h *half, at Mark) {
	if c.info.Version == VersionTLS13 || c.state != csNegotiate {
		return // TLS 1.3 middlebox compatibility (RFC 8446 appendix D.4)
	}
	if !c.keyed && !c.lookup() {
		if c.opts.Wait {
			// Wait for the key: the records after this one are held
			// (needKeys), then decrypted from this point on.
			c.holdCCS(h)
			return
		}
		c.noKey(at)
		return
	}
	if h.next == nil {
		c.setKeys()
	}
	h.prot, h.next = h.next, nil
}

// holdCCS queues a ChangeCipherSpec while the keys are awaited.
func (c *Conn) holdCCS(h *half) {
	h.waitCCS = true
	c.waiting = append(c.waiting, held{dir: h.dir, hdr: [5]byte{ctChangeCipherSpec, 3, 3, 0, 1}, frag: []byte{1}})
}

// hold keeps a record while its keys are awaited; false when the memory
// bound refuses it.
func (c *Conn) hold(h *half, hdr [5]byte, frag []byte, marks []pmark) bool {
	n := int64(len(frag) + hdrLen)
	if !c.reserve(n) {
		c.reserve(-n)
		return false
	}
	c.waitSize += n
	c.waiting = append(c.waiting, held{dir: h.dir, hdr: hdr, frag: append([]byte(nil), frag...),
		marks: append([]pmark(nil), marks...)})
	return true
}

// retryRenegKeys is retryKeys for the records held past a
// renegotiation's ChangeCipherSpec (c.reWait): once its key is in Keys
// they are decrypted in order; final gives up when it is still missing.
func (c *Conn) retryRenegKeys(final bool) {
	if !c.renegKeys() && final {
		if r, ok := c.opts.Keys.(Refresher); ok {
			r.Refresh()
		}
	}
	if c.reWait != nil && !c.renegKeys() {
		if final {
			at := c.reWait.at
			if len(c.waiting) > 0 && len(c.waiting[0].marks) > 0 {
				at = c.waiting[0].marks[0].at
			}
			c.renegNoKey(nil, at, 0)
		}
		return
	}
	c.replayWaiting()
}

// replayWaiting reads the records held, in order, now that their keys
// are known.
func (c *Conn) replayWaiting() {
	w := c.waiting
	c.waiting = nil
	size := c.waitSize
	c.waitSize = 0
	for _, r := range w {
		h := &c.half[r.dir]
		switch {
		case h.dead:
			// Given up meanwhile (a renegotiation's cipher setup).
			if !r.lost {
				h.deadSize += int64(hdrLen + len(r.frag))
			}
		case r.lost:
			c.lostRecord(h, r.hdr, r.n, r.at)
		case r.hdr[0] == ctChangeCipherSpec && len(r.marks) == 0:
			h.waitCCS = false
			c.changeCipherSpec(h, Mark{})
		default:
			c.record(h, r.hdr, r.frag, r.marks, true)
		}
	}
	c.reserve(-size)
}

func (c *Conn) dropWaiting() {
	c.reserve(-c.waitSize)
	c.waitSize = 0
	c.waiting = nil
}

// retryKeys looks the secrets up again for the records held; final gives
// up when they are still missing.
func (c *Conn) retryKeys(final bool) {
	if c.state != csNegotiate {
		c.dropWaiting()
		return
	}
	if c.reWait != nil {
		c.retryRenegKeys(final)
		return
	}
	if !c.lookup() && final {
		if r, ok := c.opts.Keys.(Refresher); ok {
			r.Refresh()
		}
	}
	if !c.lookup() {
		if final {
			at := Mark{}
			if len(c.waiting) > 0 && len(c.waiting[0].marks) > 0 {
				at = c.waiting[0].marks[0].at
			}
			c.noKey(at)
		}
		return
	}
	if c.info.Version == VersionTLS13 && c.half[0].prot == nil {
		c.setKeys()
	}
	c.replayWaiting()
}
