package dissect

import (
	"time"

	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/tlsdec"
)

// TLS. A connection whose first bytes are a TLS record goes through a
// tlsdec.Conn: its decrypted application data (with the packet numbers
// and times of the records that carried it) takes the path of a plaintext
// connection's bytes (conn.plain): detection of Kafka by content, the
// splitters, pairing. Each TLS connection gets one EventTLS with its
// TLSStatus: decrypted (version, suite, SNI, ALPN) or why not; alerts,
// key updates and what was not decrypted after a failure are
// EventTLSNote. Data lost to the record layer (a record that fails
// authentication, a TCP gap inside or across records) is a gap of the
// plaintext stream, reported as EventGap.

// Reasons a TLS connection was not decrypted (TLSStatus.Reason; the
// Summary's TLSReasons). Without a key for its client random, the reason
// says where the key would have come from: no key source was given
// (TLSNoKeyLog: no key log, no Decryption Secrets Block), the keys given
// lack it (TLSNoKey), or secrets were dropped past their memory bound
// before it came (TLSKeyDropped: it may be one of them).
const (
	TLSNoKeyLog    = "no key log"
	TLSNoKey       = "no key for the client random"
	TLSKeyDropped  = "no key for the client random, with secrets dropped past --max-tls-key-memory"
	TLSNoHandshake = "handshake not captured"
	TLSWrongKey    = "wrong key"
	TLSUnsupported = "unsupported"
	TLSMalformed   = "not TLS"
	TLSIncomplete  = "handshake incomplete"
)

// TLSStatus is what EventTLS tells of a TLS connection.
type TLSStatus struct {
	Decrypted bool
	// Reason is why the connection was not decrypted (TLSNoKey...); ""
	// when it was.
	Reason  string
	Version string // "TLS 1.3"; "" unknown
	Suite   string // IANA name, e.g. "TLS_AES_128_GCM_SHA256"; "" unknown
	SNI     string // server_name of the ClientHello
	ALPN    string // the protocol the server chose, else the client's first offer
	Resumed bool   // a resumed session
}

// tlsConn is one connection's TLS layer.
type tlsConn struct {
	c     *conn
	dec   *tlsdec.Conn
	told  bool        // EventTLS was emitted
	why   [2]string   // what ended decryption of a direction, for its gap
	first tlsdec.Mark // the connection's first TLS bytes: where EventTLS points
}

// tlsKeys reports whether keys may be available: a key source was given.
func (d *Dissector) tlsKeys() bool {
	return d.opts.TLSKeys != nil && (d.opts.TLSWait || d.keysGiven())
}

// keysGiven reports whether secrets were given: some are kept, or all
// were dropped past their memory bound (tlsdec.Dropper): a connection
// then has no key because it was dropped, not because no key log was
// given, and its handshake is still read to say so.
func (d *Dissector) keysGiven() bool {
	k := d.opts.TLSKeys
	if k == nil {
		return false
	}
	if k.Len() > 0 {
		return true
	}
	dr, ok := k.(tlsdec.Dropper)
	return ok && dr.Dropped() > 0
}

// noKeyReason is why a connection with no key for its client random was
// not decrypted: TLSNoKeyLog when no key source was given (nor awaited:
// Options.TLSWait), TLSKeyDropped when secrets were dropped past their
// memory bound (tlsdec.Dropper), TLSNoKey otherwise.
func (d *Dissector) noKeyReason() string {
	switch k := d.opts.TLSKeys; {
	case !d.keysGiven() && !d.opts.TLSWait:
		return TLSNoKeyLog
	case k != nil:
		if dr, ok := k.(tlsdec.Dropper); ok && dr.Dropped() > 0 {
			return TLSKeyDropped
		}
	}
	return TLSNoKey
}

// reserveTLS counts the TLS layer's buffers with the pending requests'
// (Options.PendingMemory): requests spill sooner, and records held for
// keys are refused past the bound.
func (d *Dissector) reserveTLS(n int64) bool {
	sp := &d.spill
	sp.held += n
	return n <= 0 || sp.budget < 0 || sp.held <= sp.budget
}

// startTLS sends the connection's bytes through a tlsdec.Conn from now
// on, starting with those held while it was undecided.
func (c *conn) startTLS() {
	d := c.d
	t := &tlsConn{c: c}
	var keys tlsdec.Keys
	if d.opts.TLSKeys != nil {
		keys = d.opts.TLSKeys
	}
	t.dec = tlsdec.NewConn(tlsdec.Options{Keys: keys, Wait: d.opts.TLSWait, Reserve: d.reserveTLS, Sessions: &d.sessions}, t)
	c.tls = t
	pre := c.pre
	c.pre, c.preBytes = nil, 0
	c.releasePre()
	for _, p := range pre {
		if !p.gap && t.first.Time.IsZero() {
			t.first = tlsdec.Mark{Frame: p.frame, Time: p.time}
		}
		if c.state != csUndecided && c.state != csKafka {
			return
		}
		if p.gap {
			t.dec.Gap(tlsdec.Dir(p.dir), p.n, p.time)
			continue
		}
		t.dec.Data(tlsdec.Dir(p.dir), p.data, tlsdec.Mark{Frame: p.frame, Time: p.time})
	}
}

// Plaintext implements tlsdec.Handler.
func (t *tlsConn) Plaintext(dir tlsdec.Dir, b []byte, at tlsdec.Mark) {
	t.c.plain(reassembly.Dir(dir), b, at.Frame, at.Time)
}

// Lost implements tlsdec.Handler: a gap in the plaintext, once there is
// plaintext.
func (t *tlsConn) Lost(dir tlsdec.Dir, n int64, at tlsdec.Mark) {
	if !t.dec.Decrypting() {
		return
	}
	tm := at.Time
	if tm.IsZero() {
		tm = t.c.last
	}
	why := t.why[dir&1]
	if why == "" {
		why = "a TLS record was lost"
	}
	t.c.plainGap(reassembly.Dir(dir), n, tm, why)
}

// Event implements tlsdec.Handler.
func (t *tlsConn) Event(ev *tlsdec.Event) {
	dir := reassembly.Dir(ev.Dir)
	switch ev.Kind {
	case tlsdec.EventDecrypting:
		t.report(true, "", ev)
		return
	case tlsdec.EventNoKey:
		t.report(false, t.c.d.noKeyReason(), ev)
		return
	case tlsdec.EventNoHandshake:
		t.report(false, TLSNoHandshake, ev)
		return
	case tlsdec.EventUnsupported:
		if !t.told {
			t.report(false, TLSUnsupported, ev)
			return
		}
	case tlsdec.EventMalformed:
		t.why[ev.Dir&1] = ev.Detail
		if !t.told {
			t.report(false, TLSMalformed, ev)
			return
		}
		t.c.d.sum.BadFrames++
		t.c.event(&Event{Kind: EventBadFrame, Conn: t.c.c, Dir: dir, Frame: ev.At.Frame, Time: t.time(ev.At), Detail: ev.Detail})
		return
	case tlsdec.EventAuthFailed:
		t.why[ev.Dir&1] = ev.Detail
		if !t.told {
			t.report(false, TLSWrongKey, ev)
			return
		}
		// The rest of the direction is reported lost (Lost: EventGap).
		return
	case tlsdec.EventGapLost:
		t.why[ev.Dir&1] = ev.Detail
		return
	}
	note := TLSNoteUnsupported
	switch {
	case ev.Kind == tlsdec.EventAlert && ev.Alert == 0:
		note = TLSNoteClose
	case ev.Kind == tlsdec.EventAlert:
		note = TLSNoteAlert
	case ev.Kind == tlsdec.EventKeyUpdate:
		note = TLSNoteKeyUpdate
	case ev.Kind == tlsdec.EventUndecrypted:
		note = TLSNoteUndecrypted
	}
	t.c.event(&Event{Kind: EventTLSNote, Conn: t.c.c, Dir: dir, Frame: ev.At.Frame, Time: t.time(ev.At), Bytes: ev.Bytes,
		Detail: ev.Detail, Note: note})
}

// TLSNote says what an EventTLSNote reports.
type TLSNote uint8

// TLS notes.
const (
	TLSNoteAlert       TLSNote = iota + 1 // an alert other than close_notify (Detail names it and its level)
	TLSNoteClose                          // close_notify: the side is done sending
	TLSNoteKeyUpdate                      // a TLS 1.3 KeyUpdate: the side's next records use the next traffic secret; or a TLS 1.2 renegotiation followed: each side's records after its next ChangeCipherSpec use its keys
	TLSNoteUndecrypted                    // Bytes of TLS records not decrypted after a failure the gap reported
	TLSNoteUnsupported                    // 0-RTT early data, a renegotiation with no key or in TLS 1.3: not followed
)

func (t *tlsConn) time(m tlsdec.Mark) time.Time {
	if m.Time.IsZero() {
		return t.c.last
	}
	return m.Time
}

// report emits the connection's EventTLS.
func (t *tlsConn) report(decrypted bool, reason string, ev *tlsdec.Event) {
	if t.told {
		return
	}
	t.told = true
	c, d := t.c, t.c.d
	st := &TLSStatus{Decrypted: decrypted, Reason: reason}
	info := t.dec.Info()
	if ev.Info != nil {
		info = *ev.Info
	}
	if info.Version != 0 {
		st.Version = tlsdec.VersionName(info.Version)
	}
	if info.Suite != 0 {
		st.Suite = tlsdec.SuiteName(info.Suite)
	}
	st.SNI, st.ALPN, st.Resumed = info.SNI, info.ALPN, info.Resumed
	if st.ALPN == "" && len(info.OfferedALPN) > 0 && !decrypted {
		st.ALPN = info.OfferedALPN[0]
	}
	detail := ev.Detail
	if !decrypted {
		if reason == TLSNoKeyLog {
			detail = TLSNoKeyLog
		}
		detail = "not decrypted: " + detail
		if what := statusWords(st); what != "" {
			detail = what + ", " + detail
		}
	}
	dir := c.client
	if info.Version != 0 || info.ClientRandom != ([32]byte{}) {
		dir = reassembly.Dir(info.Client)
	}
	if !decrypted && !c.portA && !c.portB && (!d.tlsKeys() || webALPN(info.OfferedALPN)) {
		// Not on a Kafka port and unreadable, with no keys at all or
		// offered as HTTPS: nothing says it is Kafka. With keys, other
		// TLS is reported like TLS on a Kafka port: the user asked to
		// decrypt it.
		c.skipTLS(st, "TLS on a port not in the Kafka port list, "+detail)
		return
	}
	d.sum.TLS++
	if decrypted {
		d.sum.TLSDecrypted++
	} else {
		d.tlsReasons[reason]++
		c.state = csTLS
		c.pre = nil
		c.releasePre()
	}
	// The event is the connection's: it points at its first TLS bytes.
	c.event(&Event{Kind: EventTLS, Conn: c.c, Dir: dir, Frame: t.first.Frame, Time: t.time(t.first), Detail: detail, TLS: st})
}

// statusWords is a status's version, suite and SNI, for details.
func statusWords(st *TLSStatus) string {
	s := st.Version
	if st.Suite != "" {
		s += " " + st.Suite
	}
	if st.SNI != "" {
		s += " SNI " + st.SNI
	}
	if s != "" && s[0] == ' ' {
		s = s[1:]
	}
	return s
}

// closeTLS ends the TLS layer: records still waiting for keys are
// decrypted or reported; a connection that never said whether it could be
// decrypted says so now.
func (c *conn) closeTLS(t time.Time) {
	tc := c.tls
	tc.dec.Close()
	if !tc.told {
		tc.report(false, TLSIncomplete, &tlsdec.Event{At: tlsdec.Mark{Time: t},
			Detail: "the TLS handshake did not complete in the capture"})
	}
}

// webALPN reports whether a client offered only web protocols (RFC 7301
// registry: HTTP/1.x, HTTP/2, HTTP/3): HTTPS, not Kafka, whose clients
// offer no ALPN.
func webALPN(offered []string) bool {
	for _, p := range offered {
		switch p {
		case "http/1.0", "http/1.1", "h2", "h3", "spdy/3.1":
		default:
			return false
		}
	}
	return len(offered) > 0
}
