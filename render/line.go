package render

import (
	"github.com/kwire/kwire/render/termsafe"
	"io"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render/units"
)

var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// LineUnread are the roles whose facts neither Line nor SummaryCounts
// reads: the API version ranges and features an ApiVersions response
// advertises (what kwire versions and the findings read). A caller that
// writes only lines and counts may decode with protocol.Decoder Sparse
// and SparseDrop LineUnread: the trees keep what the lines need, and an
// ApiVersions response is a few nodes instead of hundreds.
var LineUnread = protocol.NewRoleSet(protocol.RoleAPIRanges, protocol.RoleSupportedFeatures, protocol.RoleFinalizedFeatures)

// Line writes e as one line (the default output of kwire read):
//
//	12:01:02.345 10.0.0.5:53412 → 10.0.0.9:9092 Produce v9 corr=7 client=app 2.41ms 1234B/56B orders[0@100+3 gzip 512B] errors: NOT_LEADER_OR_FOLLOWER×2
//
// Fields, space-separated: the request's capture time (the response's for
// orphans) in UTC with milliseconds; client → broker; the API name and
// version; the correlation ID; the client ID ("client=null" when null,
// client="" when empty, quoted when it has spaces or is the string
// "null"); the latency (units.Duration: ms with three
// significant digits below 1s, "1.25s" above); request/response sizes
// (units.Size), length prefix included; the
// Subject; the SASL mechanism and user when the dissector found them; the
// Errors, each with its count when above one, where it occurred (topics
// and partitions, members, groups: up to three, then +N) and the
// response's ErrorMessage beside it when there is one (quoted, cut to 60
// characters);
// the dissector's notes and any
// decoding error in brackets. Unanswered requests and requests that
// expect no response say so in place of the latency ("unanswered",
// "no-response"), orphans before the API name ("orphan response", and
// "Metadata v12 (guess)" when the response was decoded as the only API
// version that fits it, dissect.Guess), SASL
// token exchanges in its place ("SASL token"): kind words are lowercase,
// as in the summary and in --filter's kind.
func Line(w io.Writer, e *dissect.Exchange, opts Options) error {
	bp := linePool.Get().(*[]byte)
	b := appendLine((*bp)[:0], e, &opts)
	b = append(b, '\n')
	_, err := w.Write(b)
	*bp = b
	linePool.Put(bp)
	return err
}

func appendLine(b []byte, e *dissect.Exchange, o *Options) []byte {
	c := o.Color
	var t time.Time
	switch {
	case e.Request != nil:
		t = e.Request.Time
	case e.Response != nil:
		t = e.Response.Time
	}
	b = appendFilePrefix(b, o)
	if o.FrameNumbers {
		b = appendFrameNumbers(b, e)
	}
	b = appendTime(b, t, o)
	b = append(b, ' ')
	b = appendAddr(b, e.Client)
	b = append(b, " → "...)
	b = appendAddr(b, e.Broker)
	b = append(b, ' ')

	if e.Kind == dissect.KindSASL {
		b = paint(b, c, roleAPI, "SASL")
		b = append(b, " token "...)
		b = appendSizes(b, e)
		b = appendSASL(b, e)
		return appendNotesList(b, e, o)
	}
	if e.Kind == dissect.KindOrphan {
		b = paint(b, c, roleError, "orphan")
		b = append(b, " response"...)
	}
	if name := APIName(e); name != "" {
		ver := e.APIVersion
		guess := e.Kind == dissect.KindOrphan && e.Guess != nil && e.Guess.Decoded
		if e.Kind == dissect.KindOrphan {
			b = append(b, ' ')
		}
		if guess {
			ver = e.Guess.APIVersion // what the response was decoded as
		}
		b = paint(b, c, roleAPI, name)
		b = append(b, " v"...)
		b = strconv.AppendInt(b, int64(ver), 10)
		if guess {
			b = paint(b, c, roleNote, " (guess)")
		}
	}
	b = append(b, " corr="...)
	b = strconv.AppendInt(b, int64(e.CorrelationID), 10)
	if e.Kind != dissect.KindOrphan {
		b = append(b, " client="...)
		switch {
		case e.ClientIDNotCaptured:
			b = paint(b, c, roleFaint, "<not captured>") // cut inside the request header
		case e.ClientIDNull:
			b = append(b, "null"...)
		case e.ClientID == "" || e.ClientID == "null":
			b = strconv.AppendQuote(b, e.ClientID) // not null: "" and "null" as themselves
		default:
			b = appendWordValue(b, e.ClientID)
		}
	}
	b = append(b, ' ')
	switch e.Kind {
	case dissect.KindPaired:
		if e.Reordered {
			b = paint(b, c, roleFaint, "reordered") // latency not measured
			break
		}
		b = paint(b, c, roleLatency, units.Duration(e.Latency()))
	case dissect.KindNoResponse:
		b = paint(b, c, roleFaint, "no-response")
	case dissect.KindUnanswered:
		if e.InFlight {
			b = paint(b, c, roleFaint, "in-flight-at-stop")
		} else {
			b = paint(b, c, roleError, "unanswered")
		}
	case dissect.KindOrphan:
		b = paint(b, c, roleFaint, "-")
	}
	b = append(b, ' ')
	b = appendSizes(b, e)
	if c {
		if s := Subject(e); s != "" {
			b = append(b, ' ')
			b = paint(b, c, roleValue, s)
		}
	} else {
		n := len(b)
		b = appendSubject(append(b, ' '), e)
		if len(b) == n+1 {
			b = b[:n] // no subject
		}
	}
	b = appendSASL(b, e)
	b = appendErrorsPart(b, e.Facts(), c)
	return appendNotesList(b, e, o)
}

// Bounds of the errors part of a line: places listed per error, and
// partitions listed per place, before "+N".
const (
	maxErrorPlaces = 3
	maxErrorParts  = 8
)

// appendErrorsPart appends " errors: NAME×N places \"message\", ..." for
// fx's errors, by code in order of first appearance, without allocating
// (a line is written for every exchange). Places are runs of errors at
// one topic (with its partitions) or one scope, in wire order: the
// decoder reads a topic's partitions together.
func appendErrorsPart(b []byte, fx *facts.Exchange, c bool) []byte {
	errs := fx.Errors
	if len(errs) == 0 {
		return b
	}
	var codesBuf [8]int16
	codes := codesBuf[:0]
	for i := range errs {
		if !slices.Contains(codes, errs[i].Code) {
			codes = append(codes, errs[i].Code)
		}
	}
	b = append(b, " errors: "...)
	for ci, code := range codes {
		if ci > 0 {
			b = append(b, ", "...)
		}
		count, msg, name := 0, "", ""
		for i := range errs {
			if errs[i].Code == code {
				if count == 0 {
					name = errs[i].Name
				}
				count++
				if msg == "" {
					msg = errs[i].Message
				}
			}
		}
		b = paint(b, c, roleError, name)
		if count > 1 {
			b = append(b, units.Times...)
			b = strconv.AppendInt(b, int64(count), 10)
		}
		b = appendErrorPlaces(b, fx, code)
		if m := shortMessage(msg); m != "" {
			b = append(b, ' ')
			b = strconv.AppendQuote(b, m)
		}
	}
	return b
}

// appendErrorPlaces appends where the errors of code occurred: each run
// of them at one topic once, with its partitions (t[0,3], up to
// maxErrorParts, then +N), or at the member, group, transaction or
// resource of those outside topics; up to maxErrorPlaces places, then +N.
func appendErrorPlaces(b []byte, fx *facts.Exchange, code int16) []byte {
	errs := fx.Errors
	places, extra, parts, more := 0, 0, 0, 0
	open, skipping := false, false
	var prev *facts.Error
	finish := func() {
		if open {
			if more > 0 {
				b = append(b, ",+"...)
				b = strconv.AppendInt(b, int64(more), 10)
			}
			b = append(b, ']')
			open = false
		}
	}
	for i := range errs {
		e := &errs[i]
		if e.Code != code || e.Topic < 0 && e.Scope.Role == protocol.RoleNone {
			continue
		}
		same := prev != nil && (e.Topic >= 0 && e.Topic == prev.Topic || e.Topic < 0 && prev.Topic < 0 && e.Scope == prev.Scope)
		prev = e
		if !same {
			finish()
			if places == maxErrorPlaces {
				extra++
				skipping = true
				continue
			}
			places++
			parts, more, skipping = 0, 0, false
			b = append(b, ' ')
			if e.Topic < 0 {
				b = appendScope(b, e.Scope)
			} else {
				t := &fx.Topics[e.Topic]
				if t.Owner.Role != protocol.RoleNone && fx.Owners() {
					b = append(appendScope(b, t.Owner), ' ') // which entry of a batch
				}
				b = termsafe.AppendQuote(b, t.Label())
			}
		} else if skipping {
			continue
		}
		if e.Topic < 0 || e.Partition < 0 {
			continue
		}
		switch {
		case parts == maxErrorParts:
			more++
		case parts == 0:
			b = append(b, '[')
			open = true
			b = strconv.AppendInt(b, int64(e.Partition), 10)
			parts++
		default:
			b = append(b, ',')
			b = strconv.AppendInt(b, int64(e.Partition), 10)
			parts++
		}
	}
	finish()
	if extra > 0 {
		b = append(b, " +"...)
		b = strconv.AppendInt(b, int64(extra), 10)
		b = append(b, " more"...)
	}
	return b
}

// appendScope appends the entity an error belongs to (scopePlace).
func appendScope(b []byte, sc facts.Scope) []byte {
	switch sc.Role {
	case protocol.RoleMemberID:
		return appendWordValue(append(b, "member="...), shortID(sc.ID))
	case protocol.RoleGroupInstanceID:
		return appendWordValue(append(b, "instance="...), sc.ID)
	case protocol.RoleGroupID:
		return appendWordValue(append(b, "group="...), sc.ID)
	case protocol.RoleTransactionalID:
		return appendWordValue(append(b, "txn="...), sc.ID)
	case protocol.RoleCoordinatorKey:
		return appendWordValue(append(b, "key="...), sc.ID)
	case protocol.RoleProducerID:
		return appendWordValue(append(b, "pid="...), sc.ID)
	}
	return appendWordValue(b, sc.ID)
}

// appendSASL appends the SASL mechanism and user the dissector found.
func appendSASL(b []byte, e *dissect.Exchange) []byte {
	if e.Mechanism != "" {
		b = appendWordValue(append(b, " mechanism="...), e.Mechanism)
	}
	if e.User != "" {
		b = appendWordValue(append(b, " user="...), e.User)
	}
	return b
}

// appendNotesList appends decoding errors and the dissector's notes in
// brackets.
func appendNotesList(b []byte, e *dissect.Exchange, o *Options) []byte {
	var n int
	add := func(r role, s string) {
		if n == 0 {
			b = append(b, " ["...)
		} else {
			b = append(b, "; "...)
		}
		n++
		b = paint(b, o.Color, r, termsafe.Escape(s))
	}
	var unknown string
	for _, f := range [...]*dissect.Frame{e.Request, e.Response} {
		switch {
		case f == nil || f.Tree == nil:
		case f.Tree.Err != nil:
			if l, ok := unknownLabel(f.Tree); ok {
				if l != unknown { // a response of the same unknown version says it once
					add(roleNote, l)
				}
				unknown = l
				continue
			}
			add(roleError, "decode error: "+f.Tree.Err.Error())
		default:
			// Record batches report their problems on their nodes, not
			// in Tree.Err (a corrupt or oversized compressed batch, a bad
			// CRC, records past the node cap): name the first.
			if n := f.Tree.FirstError(); n != nil {
				add(roleError, "record error: "+n.Name+": "+n.Note)
			}
		}
	}
	for _, s := range e.Notes {
		add(roleNote, s)
	}
	if n > 0 {
		b = append(b, ']')
	}
	return b
}

// EventHex writes ev as EventLine does and, for an event that carries
// bytes (dissect.Event.Data: what a resync skipped), those bytes as
// hexdump -C lines indented under it, offsets from the first skipped byte,
// and a last line counting the skipped bytes that were not kept:
//
//	12:01:02.345 stream 3 10.0.0.5:53412 → 10.0.0.9:9092 RESYNC 12 bytes packet 7 (...)
//	    0000  ff fe 01 ff fe 01 ff fe  01 ff fe 01              |............|
//
// It is what kwire read -x shows for an event, so that no captured byte
// is dropped unseen.
func EventHex(w io.Writer, ev *dissect.Event, opts Options) error {
	if err := EventLine(w, ev, opts); err != nil {
		return err
	}
	if ev.Withheld {
		b := append([]byte("    "), paint(nil, opts.Color, roleNote, "<redacted>: the skipped bytes may hold a secret; --show-secrets shows them")...)
		_, err := w.Write(append(b, '\n'))
		return err
	}
	if len(ev.Data) == 0 {
		return nil
	}
	var b []byte
	for i := 0; i < len(ev.Data); i += hexPerLine {
		b = append(b, "    "...)
		b = dumpLine(b, ev.Data[i:min(i+hexPerLine, len(ev.Data))], i, 4, opts.Color)
		b = append(b, '\n')
		if len(b) > 32<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if more := ev.Bytes - int64(len(ev.Data)); more > 0 {
		b = append(b, "    … "...)
		b = strconv.AppendInt(b, more, 10)
		b = append(b, " more bytes skipped, not kept\n"...)
	}
	_, err := w.Write(b)
	return err
}

// appendSizes appends "REQ/RESP" frame sizes (units.Size: exact bytes
// below 10 KiB, "1.43MiB" above), "-" for a missing side.
func appendSizes(b []byte, e *dissect.Exchange) []byte {
	for i, f := range [...]*dissect.Frame{e.Request, e.Response} {
		if i > 0 {
			b = append(b, '/')
		}
		if f == nil {
			b = append(b, '-')
			continue
		}
		b = units.AppendSize(b, int64(f.Size()))
	}
	return b
}

// appendFilePrefix appends "FILE: " when the line is of one of several
// captures (Options.File).
func appendFilePrefix(b []byte, o *Options) []byte {
	if o.File == "" {
		return b
	}
	b = append(b, o.File...)
	return append(b, ": "...)
}

// appendFrameNumbers appends "REQ/RESP " packet numbers (the frames' first
// packets), "-" for a missing side.
func appendFrameNumbers(b []byte, e *dissect.Exchange) []byte {
	for i, f := range [...]*dissect.Frame{e.Request, e.Response} {
		if i > 0 {
			b = append(b, '/')
		}
		if f == nil {
			b = append(b, '-')
			continue
		}
		b = strconv.AppendInt(b, f.FirstPacket, 10)
	}
	return append(b, ' ')
}

// appendTime appends t as Options.Clock says.
func appendTime(b []byte, t time.Time, o *Options) []byte {
	if o.Clock == ClockTime || t.IsZero() {
		return appendClock(b, t, o.Color)
	}
	layout := "2006-01-02T15:04:05.000Z07:00"
	if o.Clock == ClockUTC {
		t = t.UTC()
	} else if o.Location != nil {
		t = t.In(o.Location)
	}
	if o.Color {
		return paint(b, true, roleOffset, t.Format(layout))
	}
	return t.AppendFormat(b, layout)
}

// appendClock appends t in UTC as 15:04:05.000, or "--:--:--.---" when zero.
func appendClock(b []byte, t time.Time, c bool) []byte {
	if t.IsZero() {
		return paint(b, c, roleOffset, "--:--:--.---")
	}
	if c {
		b = append(b, escapes[roleOffset][0]...)
	}
	// As t.UTC().AppendFormat(b, "15:04:05.000") writes it (the
	// milliseconds truncated), at a fifth of its instructions: every line
	// starts with it.
	h, m, sec := t.UTC().Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	if c {
		b = append(b, escapes[roleOffset][1]...)
	}
	return b
}

func appendAddr(b []byte, a netip.AddrPort) []byte {
	if !a.IsValid() {
		return append(b, '?')
	}
	return a.AppendTo(b)
}

// APIName returns the name of e's API ("Produce"): from the request body's
// message name, else from the schema table by API key (protocol.APIName,
// "UNKNOWN(key)" for keys no schema declares), else for orphans from the
// response body; "" when unknown (orphans the dissector could not place).
func APIName(e *dissect.Exchange) string {
	if e.Request != nil {
		if n := messageName(e.Request.Tree); n != "" {
			return strings.TrimSuffix(n, "Request")
		}
		return protocol.APIName(e.APIKey)
	}
	if e.Response != nil {
		if n := messageName(e.Response.Tree); n != "" {
			return strings.TrimSuffix(n, "Response")
		}
	}
	return ""
}

// messageName returns the message name of a decoded frame's body
// ("ProduceRequest"), or "".
func messageName(t *protocol.Tree) string {
	b := bodyOf(t)
	if b == nil {
		return ""
	}
	for _, s := range [...]string{b.Type, b.Name} {
		if strings.HasSuffix(s, "Request") || strings.HasSuffix(s, "Response") {
			return s
		}
	}
	return ""
}

var eventNames = map[dissect.EventKind]string{
	dissect.EventOpen:      "OPEN",
	dissect.EventSkipped:   "SKIPPED",
	dissect.EventGap:       "GAP",
	dissect.EventResync:    "RESYNC",
	dissect.EventTLS:       "TLS",
	dissect.EventClose:     "CLOSE",
	dissect.EventBadFrame:  "BAD-FRAME",
	dissect.EventTruncated: "TRUNCATED",
	dissect.EventTLSNote:   "TLS-NOTE",
	dissect.EventCut:       "CUT",
	dissect.EventConflict:  "CONFLICT",
}

// EventLine writes a connection event as one line:
//
//	12:01:02.345 stream 3 10.0.0.5:53412 → 10.0.0.9:9092 GAP 1460 bytes packet 57 (detail)
//
// time (UTC, ms), the TCP stream index, the direction the event concerns,
// the kind (OPEN, SKIPPED, GAP, RESYNC, TLS, CLOSE, BAD-FRAME, TRUNCATED, TLS-NOTE, CUT, CONFLICT), the bytes
// involved when any, the packet number when known and the detail.
func EventLine(w io.Writer, ev *dissect.Event, opts Options) error {
	c := opts.Color
	b := make([]byte, 0, 160)
	b = appendFilePrefix(b, &opts)
	if opts.FrameNumbers {
		if ev.Frame > 0 {
			b = strconv.AppendInt(b, ev.Frame, 10)
		} else {
			b = append(b, '-')
		}
		b = append(b, ' ')
	}
	b = appendTime(b, ev.Time, &opts)
	if ev.Conn != nil {
		b = append(b, " stream "...)
		b = strconv.AppendInt(b, int64(ev.Conn.Index), 10)
		b = append(b, ' ')
		from, to := ev.Conn.A, ev.Conn.B
		if ev.Dir == reassembly.BtoA {
			from, to = to, from
		}
		b = appendAddr(b, from)
		b = append(b, " → "...)
		b = appendAddr(b, to)
	}
	b = append(b, ' ')
	name, ok := eventNames[ev.Kind]
	if !ok {
		name = "EVENT(" + itoa(int64(ev.Kind)) + ")"
	}
	r := roleNote
	if ev.Kind == dissect.EventGap || ev.Kind == dissect.EventBadFrame || ev.Kind == dissect.EventTruncated || ev.Kind == dissect.EventConflict {
		r = roleError
	}
	b = paint(b, c, r, name)
	if ev.Bytes != 0 {
		b = append(b, ' ')
		if ev.Bytes < 0 {
			b = append(b, "unknown"...)
		} else {
			b = strconv.AppendInt(b, ev.Bytes, 10)
		}
		b = append(b, " bytes"...)
	}
	if ev.Frame > 0 {
		b = append(b, " packet "...)
		b = strconv.AppendInt(b, ev.Frame, 10)
	}
	if ev.Detail != "" {
		b = append(b, " ("...)
		// Details quote what the wire said in kwire's words (a TLS
		// ClientHello's SNI): escaped, a right-to-left override or a
		// control character in it cannot act on the terminal.
		b = termsafe.AppendEscape(b, ev.Detail)
		b = append(b, ')')
	}
	b = append(b, '\n')
	_, err := w.Write(b)
	return err
}
