package render

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/netip"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
)

// This file writes the JSON of ExchangeJSON and of converter without going
// through encoding/json's Marshal. encoding/json scans the output of every
// MarshalJSON method and RawMessage again to compact it, once per level of
// nesting (protocol.Object marshals its members one by one), so the typed
// records of a large Fetch response were scanned several times over: most
// of the time of kwire read --json. The bytes written are exactly those
// encoding/json writes for the same values (TestFastJSONMatchesEncodingJSON
// compares them); a value of a type not handled here falls back to
// encoding/json.

// appendStdString appends s as encoding/json encodes a string: '"' and '\\'
// escaped, \b \f \n \r \t by name, other control bytes as \u00XX, invalid
// UTF-8 as \ufffd, U+2028 and U+2029 escaped, and with html also '<', '>'
// and '&' as \u003c, \u003e and \u0026.
func appendStdString(b []byte, s string, html bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if len(s)-i >= 8 && jsonPlain8(load64(s[i:]), html) {
			i += 8 // printable ASCII with nothing to escape
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendStdFloat appends f as encoding/json encodes a float64: the
// shortest representation, in exponent form below 1e-6 and from 1e21 on
// (with a one-digit negative exponent not zero-padded). NaN and ±Inf, which
// encoding/json rejects, return false.
func appendStdFloat(b []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// appendCompactRaw appends raw, compact JSON as encoding/json copies a
// RawMessage: with html, '<', '>' and '&' (which can only occur inside
// strings) become \u003c, \u003e and \u0026, and U+2028 and U+2029 are
// escaped. raw must be valid JSON without insignificant white space, as
// jsonWriter.value writes it.
func appendCompactRaw(b, raw []byte, html bool) []byte {
	if !html {
		return append(b, raw...)
	}
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			b = append(b, raw[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			start = i + 1
		case c == 0xe2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xa8:
			b = append(b, raw[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xf])
			i += 2
			start = i + 1
		}
	}
	return append(b, raw[start:]...)
}

// typedRecords stands for the typed form of a decoded RECORDS field in the
// value patch returns: appendAnyJSON writes it straight into its output,
// encoding/json (the fallback) marshals it like the RawMessage it used to
// be.
type typedRecords struct {
	j    *jsonWriter
	n    *protocol.Node
	path string
}

func (r typedRecords) MarshalJSON() ([]byte, error) {
	return r.j.value(nil, r.n, r.path, nil, false), nil
}

// needsHTMLEscape reports whether appendCompactRaw with html would change
// raw.
func needsHTMLEscape(raw []byte) bool {
	for i, c := range raw {
		if c == '<' || c == '>' || c == '&' || c == 0xe2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xa8 {
			return true
		}
	}
	return false
}

// appendAnyJSON appends v, a value made by protocol.BodyJSON and patched
// by jsonWriter.patch (protocol.Object, []any, string, int64, float64,
// bool, nil, json.RawMessage), as json.Marshal would with html escaping
// on. It returns false for anything else, or a float JSON cannot hold.
func appendAnyJSON(b []byte, v any, html bool) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, x), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case float64:
		return appendStdFloat(b, x)
	case string:
		return appendStdString(b, x, html), true
	case json.RawMessage:
		if x == nil {
			return append(b, "null"...), true
		}
		return appendCompactRaw(b, x, html), true
	case protocol.RecordsBase64:
		// Standard base64 needs no escaping.
		b = append(b, '"')
		b = append(b, x.String()...)
		return append(b, '"'), true
	case typedRecords:
		if html && !x.j.html {
			// Written with HTML escaping rather than escaped after.
			x.j.html = true
			b = x.j.value(b, x.n, x.path, nil, false)
			x.j.html = false
			return b, true
		}
		start := len(b)
		b = x.j.value(b, x.n, x.path, nil, false)
		if html && needsHTMLEscape(b[start:]) {
			raw := append([]byte(nil), b[start:]...)
			b = appendCompactRaw(b[:start], raw, true)
		}
		return b, true
	case protocol.Object:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '{')
		for i, m := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendStdString(b, m.Key, html)
			b = append(b, ':')
			var ok bool
			if b, ok = appendAnyJSON(b, m.Value, html); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case []any:
		if x == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var ok bool
			if b, ok = appendAnyJSON(b, e, html); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}

// appendStrings appends a []string as encoding/json does without html
// escaping (nil is null).
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendStdString(b, s, false)
	}
	return append(b, ']')
}

// appendMessageDoc appends m as json.Encoder with SetEscapeHTML(false)
// encodes it inside an ExchangeDoc.
func appendMessageDoc(b []byte, m *MessageDoc) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	b = appendMessageStart(b, m)
	b = append(b, `,"header":`...)
	b, _ = appendAnyJSON(b, m.Header, false)
	b = append(b, `,"body":`...)
	b, _ = appendAnyJSON(b, m.Body, false)
	return appendMessageEnd(b, m)
}

// appendMessageStart appends m's keys before "header".
func appendMessageStart(b []byte, m *MessageDoc) []byte {
	b = append(b, `{"frame":`...)
	b = strconv.AppendInt(b, m.Frame, 10)
	b = append(b, `,"lastFrame":`...)
	b = strconv.AppendInt(b, m.LastPacket, 10)
	b = append(b, `,"time":`...)
	b = appendStdString(b, m.Time, false)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(m.Size), 10)
	b = append(b, `,"capturedBytes":`...)
	return strconv.AppendInt(b, int64(m.CapturedBytes), 10)
}

// appendMessageEnd appends m's keys after "body" and the closing brace.
func appendMessageEnd(b []byte, m *MessageDoc) []byte {
	b = append(b, `,"error":`...)
	b = appendStdString(b, m.Error, false)
	b = append(b, `,"unknown":`...)
	if m.Unknown == nil {
		b = append(b, "null"...)
	} else {
		b = appendStdString(b, *m.Unknown, false)
	}
	b = append(b, `,"unknownTaggedFields":`...)
	if m.UnknownTaggedFields == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, u := range m.UnknownTaggedFields {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"path":`...)
			b = appendStdString(b, u.Path, false)
			b = append(b, `,"tag":`...)
			b = strconv.AppendInt(b, u.Tag, 10)
			b = append(b, `,"size":`...)
			b = strconv.AppendInt(b, int64(u.Size), 10)
			b = append(b, `,"offset":`...)
			b = strconv.AppendInt(b, int64(u.Offset), 10)
			b = append(b, `,"space":`...)
			b = strconv.AppendInt(b, int64(u.Space), 10)
			b = append(b, `,"hex":`...)
			b = appendStdString(b, u.Hex, false)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendExchangeDoc appends d and a newline as json.Encoder with
// SetEscapeHTML(false) encodes it; false when a value cannot be written
// here (the caller then uses encoding/json).
func appendExchangeDoc(b []byte, d *ExchangeDoc) ([]byte, bool) {
	b = append(b, `{"stream":`...)
	b = strconv.AppendInt(b, int64(d.Stream), 10)
	b = append(b, `,"file":`...)
	if d.File == nil {
		b = append(b, "null"...)
	} else {
		b = appendStdString(b, *d.File, false)
	}
	b = append(b, `,"client":`...)
	b = appendStdString(b, d.Client, false)
	b = append(b, `,"broker":`...)
	b = appendStdString(b, d.Broker, false)
	b = append(b, `,"kind":`...)
	b = appendStdString(b, d.Kind, false)
	b = append(b, `,"api":`...)
	b = appendStdString(b, d.API, false)
	b = append(b, `,"apiKey":`...)
	b = strconv.AppendInt(b, int64(d.APIKey), 10)
	b = append(b, `,"apiVersion":`...)
	b = strconv.AppendInt(b, int64(d.APIVersion), 10)
	b = append(b, `,"correlationId":`...)
	b = strconv.AppendInt(b, int64(d.CorrelationID), 10)
	b = append(b, `,"clientId":`...)
	if d.ClientID == nil {
		b = append(b, "null"...)
	} else {
		b = appendStdString(b, *d.ClientID, false)
	}
	b = append(b, `,"clientIdNotCaptured":`...)
	b = strconv.AppendBool(b, d.ClientIDNotCaptured)
	b = append(b, `,"request":`...)
	b = appendMessageDoc(b, d.Request)
	b = append(b, `,"response":`...)
	b = appendMessageDoc(b, d.Response)
	b = append(b, `,"latencyMs":`...)
	if d.LatencyMs == nil {
		b = append(b, "null"...)
	} else {
		var ok bool
		if b, ok = appendStdFloat(b, *d.LatencyMs); !ok {
			return b, false
		}
	}
	b = append(b, `,"sasl":`...)
	b = appendSASLDoc(b, d.SASL)
	b = append(b, `,"guess":`...)
	b = appendGuessDoc(b, d.Guess)
	b = append(b, `,"subject":`...)
	b = appendStdString(b, d.Subject, false)
	b = append(b, `,"errors":`...)
	b = appendStrings(b, d.Errors)
	b = append(b, `,"notes":`...)
	b = appendStrings(b, d.Notes)
	b = append(b, `,"topics":`...)
	b = appendStrings(b, d.Topics)
	b = append(b, `,"facts":`...)
	var ok bool
	if b, ok = appendFactsDoc(b, d.Facts, false); !ok {
		return b, false
	}
	return append(b, "}\n"...), true
}

// AppendExchangeJSON appends what ExchangeJSON writes to b: for callers
// that write the line themselves. It writes the ExchangeDoc's keys
// straight from e (appendExchange) rather than from a document built
// first; TestExchangeLineMatchesEncodingJSON holds the two to the same
// bytes.
func AppendExchangeJSON(b []byte, e *dissect.Exchange, opts Options) []byte {
	start := len(b)
	out, ok := appendExchange(b, e, &opts)
	if !ok {
		// A value only encoding/json writes (none in practice).
		var buf bytes.Buffer
		writeJSONLine(&buf, NewExchangeDoc(e, opts))
		return append(out[:start], buf.Bytes()...)
	}
	return out
}

// appendExchange appends e's ExchangeDoc and a newline as
// appendExchangeDoc writes NewExchangeDoc(e, *o) (with the facts' 64-bit
// integers as o says), each value written from e, its frames by
// appendMessageDirect; false when a value cannot be written here.
func appendExchange(b []byte, e *dissect.Exchange, o *Options) ([]byte, bool) {
	b = append(b, `{"stream":`...)
	stream := -1
	if e.Conn != nil {
		stream = e.Conn.Index
	}
	b = strconv.AppendInt(b, int64(stream), 10)
	b = append(b, `,"file":`...)
	if o.File == "" {
		b = append(b, "null"...)
	} else {
		b = appendStdString(b, o.File, false)
	}
	b = append(b, `,"client":`...)
	b = appendAddrJSON(b, e.Client)
	b = append(b, `,"broker":`...)
	b = appendAddrJSON(b, e.Broker)
	b = append(b, `,"kind":`...)
	if k := ExchangeKind(e); k != "" {
		b = appendStdString(b, k, false)
	} else {
		b = append(b, `"kind(`...)
		b = strconv.AppendInt(b, int64(e.Kind), 10)
		b = append(b, `)"`...)
	}
	b = append(b, `,"api":`...)
	b = appendStdString(b, APIName(e), false)
	b = append(b, `,"apiKey":`...)
	b = strconv.AppendInt(b, int64(e.APIKey), 10)
	b = append(b, `,"apiVersion":`...)
	b = strconv.AppendInt(b, int64(e.APIVersion), 10)
	b = append(b, `,"correlationId":`...)
	b = strconv.AppendInt(b, int64(e.CorrelationID), 10)
	b = append(b, `,"clientId":`...)
	if e.ClientIDKnown() && !e.ClientIDNull {
		b = appendStdString(b, e.ClientID, false)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"clientIdNotCaptured":`...)
	b = strconv.AppendBool(b, e.ClientIDNotCaptured)
	b = append(b, `,"request":`...)
	b = appendMessageDirect(b, e.Request, o)
	b = append(b, `,"response":`...)
	b = appendMessageDirect(b, e.Response, o)
	b = append(b, `,"latencyMs":`...)
	if l := e.Latency(); l >= 0 {
		var ok bool
		if b, ok = appendStdFloat(b, float64(l)/float64(time.Millisecond)); !ok {
			return b, false
		}
	} else {
		b = append(b, "null"...)
	}
	fx := e.Facts()
	b = append(b, `,"sasl":`...)
	b = appendSASLDoc(b, SASLOf(e, fx))
	b = append(b, `,"guess":`...)
	b = appendGuessDoc(b, GuessOf(e))
	b = append(b, `,"subject":"`...)
	start := len(b)
	b = appendSubject(b, e)
	if !stdPlain(b[start:]) {
		s := string(b[start:])
		b = appendStdString(b[:start-1], s, false)
	} else {
		b = append(b, '"')
	}
	b = append(b, `,"errors":[`...)
	for i := range fx.Errors {
		er := &fx.Errors[i]
		first := true // the first error of its code: errorCounts' name for it
		for j := range fx.Errors[:i] {
			if fx.Errors[j].Code == er.Code {
				first = false
				break
			}
		}
		if first {
			if b[len(b)-1] != '[' {
				b = append(b, ',')
			}
			b = appendStdString(b, er.Name, false)
		}
	}
	b = append(b, `],"notes":`...)
	if len(e.Notes) == 0 {
		b = append(b, "[]"...)
	} else {
		b = appendStrings(b, e.Notes)
	}
	b = append(b, `,"topics":`...)
	if topics := fx.AllTopics(); topics == nil {
		b = append(b, "[]"...)
	} else {
		b = appendStrings(b, topics)
	}
	b = append(b, `,"facts":`...)
	var ok bool
	if b, ok = appendFactsDoc(b, NewFactsDoc(fx), o.Int64Strings); !ok {
		return b, false
	}
	return append(b, "}\n"...), true
}

// stdPlain reports whether appendStdString without html writes s as it
// is: valid UTF-8 without control bytes, '"', '\\', U+2028 or U+2029 (a
// subject's "×" and "→" are).
func stdPlain(s []byte) bool {
	i := plainJSONPrefix(s, &jsonSafe)
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c == 0xe2 && i+2 < len(s) && s[i+1] == 0x80 && s[i+2]&^1 == 0xa8 {
			return false
		}
	}
	return utf8.Valid(s)
}

// appendAddrJSON appends a as a JSON string as ExchangeDoc gives it
// (addrString: "" when not valid).
func appendAddrJSON(b []byte, a netip.AddrPort) []byte {
	if !a.IsValid() {
		return append(b, `""`...)
	}
	b = append(b, '"')
	start := len(b)
	b = a.AppendTo(b)
	if plainJSONPrefix(b[start:], &jsonSafe) < len(b)-start {
		return appendStdString(b[:start-1], a.String(), false) // a zone to escape
	}
	return append(b, '"')
}

// appendSASLDoc appends s as encoding/json writes it.
func appendSASLDoc(b []byte, s *SASLDoc) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"mechanism":`...)
	b = appendStdString(b, s.Mechanism, false)
	b = append(b, `,"user":`...)
	b = appendStdString(b, s.User, false)
	return append(b, '}')
}

// appendGuessDoc appends g as encoding/json writes it.
func appendGuessDoc(b []byte, g *GuessDoc) []byte {
	if g == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"api":`...)
	b = appendStdString(b, g.API, false)
	b = append(b, `,"apiKey":`...)
	b = strconv.AppendInt(b, int64(g.APIKey), 10)
	b = append(b, `,"apiVersion":`...)
	b = strconv.AppendInt(b, int64(g.APIVersion), 10)
	b = append(b, `,"candidates":`...)
	b = strconv.AppendInt(b, int64(g.Candidates), 10)
	b = append(b, `,"decoded":`...)
	b = strconv.AppendBool(b, g.Decoded)
	b = append(b, `,"partial":`...)
	b = strconv.AppendBool(b, g.Partial)
	return append(b, '}')
}

// jsonLinePool recycles line buffers of ExchangeJSON; buffers above
// jsonLineKeep bytes are let go. The line of a Fetch response of 1 MB
// batches is about 2 MB: such lines are kept (a sync.Pool lets go of
// what it holds at the next collections, so this holds no memory for
// long).
var jsonLinePool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const jsonLineKeep = 4 << 20

// writeExchangeJSON writes d as one line, as writeJSONLine would.
func writeExchangeJSON(w io.Writer, d *ExchangeDoc) error {
	bp := jsonLinePool.Get().(*[]byte)
	b, ok := appendExchangeDoc((*bp)[:0], d)
	if !ok {
		jsonLinePool.Put(bp)
		return writeJSONLine(w, d)
	}
	_, err := w.Write(b)
	if cap(b) <= jsonLineKeep {
		*bp = b[:0]
		jsonLinePool.Put(bp)
	}
	return err
}
