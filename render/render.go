// Package render writes decoded Kafka frames and exchanges as text: a field
// tree (Tree), an annotated hex walk-through (Hex, HexDump), one line per
// exchange or event (Line, EventLine), end-of-run totals (Summary) and JSON
// (ExchangeJSON, TreeJSON, in kwire's JSON vocabulary: docs/json.md; the
// facts as FactsDoc). Subject and Errors are the one-line output's pieces.
// ParseHex reads hex text back into bytes (kwire decode), -x dumps
// included.
//
// Contract: render never decodes. What an exchange is about comes from its
// facts (dissect.Exchange.Facts, package facts); the tree and hex outputs
// read protocol.Tree / protocol.Node (protocol/node.go) and dissect.Exchange
// / dissect.Event (dissect/exchange.go) exactly as the decoder and
// dissector built them, recognising nodes by their schema field
// (Node.Field, its Role, the record fields of protocol/recordfields.go),
// never by name, and writes to an io.Writer.
// It never prints a value whose node carries protocol.FlagRedacted unless
// Options.ShowSecrets is set, and it prints no terminal escape codes unless
// Options.Color is set (the CLI decides: terminal, --color, NO_COLOR).
//
// To add a new output format: write one function taking the tree or exchange,
// an io.Writer and Options; reuse appendValue and appendNotes for leaf
// values so that redaction, truncation and the Values mode behave the same
// everywhere; add a golden test with exact lines, a case to TestColor (no
// escape codes with Color off) and one to TestRedaction.
package render

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"github.com/kwire/kwire/render/termsafe"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
)

// ValueMode says how bytes values (BYTES fields, record keys and values) are
// shown.
type ValueMode uint8

// Value modes.
const (
	ValuesText   ValueMode = iota // printable UTF-8 as quoted text, anything else as hex (the default)
	ValuesHex                     // always lowercase hex
	ValuesBase64                  // always standard base64 (RFC 4648 §4, padded)
	ValuesNone                    // only the length
)

var valueModeNames = [...]string{"text", "hex", "base64", "none"}

// String returns the mode's flag spelling: text, hex, base64 or none.
func (m ValueMode) String() string {
	if int(m) < len(valueModeNames) {
		return valueModeNames[m]
	}
	return "ValueMode(" + strconv.Itoa(int(m)) + ")"
}

// ParseValueMode parses a flag value: text, hex, base64 or none.
func ParseValueMode(s string) (ValueMode, error) {
	for i, n := range valueModeNames {
		if strings.EqualFold(s, n) {
			return ValueMode(i), nil
		}
	}
	return 0, fmt.Errorf("unknown value mode %q (want text, hex, base64 or none)", s)
}

// DefaultMaxValue is the default Options.MaxValue: values longer than this
// many bytes are cut, with their full length given.
const DefaultMaxValue = 256

// Options control every renderer. The zero value renders without color,
// bytes as text when printable, values cut at DefaultMaxValue bytes and
// secrets withheld.
type Options struct {
	// Color adds terminal color by role (offset, field name, value,
	// error/note, API name, latency). When false no escape code is written.
	Color bool
	// Values chooses how bytes values are shown.
	Values ValueMode
	// MaxValue is the number of bytes of a string or bytes value shown
	// before it is cut; 0 means DefaultMaxValue and a negative value means
	// no limit. The annotated hex dump (Hex) shows the first MaxValue
	// bytes of a longer BYTES value and one line for the rest.
	MaxValue int
	// ShowSecrets shows values the decoder marked protocol.FlagRedacted.
	ShowSecrets bool
	// Int64Strings writes 64-bit integers in JSON (fields of Kafka type
	// int64, record offsets and timestamps, the facts' offsets, producer
	// IDs and byte counts) as decimal strings, for tools that read JSON
	// numbers as doubles and round those beyond 2^53 (--json-int64
	// string).
	Int64Strings bool
	// Facts, when set, are the facts of the exchange whose frames are
	// rendered (dissect.Exchange.Facts, resolved by the run's
	// facts.Names): the tree names a TopicId with the topic's name.
	Facts *facts.Exchange
	// File names the capture file an exchange or event came from, when
	// several files are read as captures of their own: a line starts
	// with it ("a.pcap: "), the JSON's "file" holds it. "" when one
	// capture is read (a single file, or files merged): "file" is null.
	File string
	// FrameNumbers starts a line with the packet numbers of the request's
	// and the response's first bytes, as tshark's frame column
	// ("12/15", "-" for a missing side), for --frame and Wireshark.
	FrameNumbers bool
	// Clock says how a line gives its capture time (ClockTime: the time
	// of day in UTC; ClockUTC: date and time in UTC; ClockLocal: date,
	// time and zone offset in Location).
	Clock    ClockMode
	Location *time.Location
	// Indent is the levels of indentation (two spaces each) Tree puts
	// before every line it writes: its top-level fields are at depth
	// Indent (kwire read shows a frame's tree at 2, under the frame's
	// line), without an indenting writer copying the text again.
	Indent int
}

// ClockMode is how a line writes its capture time.
type ClockMode uint8

// Clock modes.
const (
	ClockTime  ClockMode = iota // 15:04:05.000 (UTC)
	ClockUTC                    // 2006-01-02T15:04:05.000Z
	ClockLocal                  // 2006-01-02T15:04:05.000-07:00 in Options.Location
)

func (o *Options) maxValue() int {
	switch {
	case o.MaxValue == 0:
		return DefaultMaxValue
	case o.MaxValue < 0:
		return int(^uint(0) >> 1)
	}
	return o.MaxValue
}

// role is what a piece of output is, for coloring.
type role uint8

const (
	roleOffset role = iota
	roleName
	roleValue
	roleError
	roleNote
	roleAPI
	roleLatency
	roleFaint
	numRoles
)

// escapes holds the escape sequences fatih/color writes around a string for
// each role, taken once from color instances with color forced on.
var escapes = func() (e [numRoles][2]string) {
	attrs := [numRoles][]color.Attribute{
		roleOffset:  {color.FgCyan},
		roleName:    {color.FgBlue},
		roleValue:   {color.FgGreen},
		roleError:   {color.FgRed, color.Bold},
		roleNote:    {color.FgYellow},
		roleAPI:     {color.FgMagenta, color.Bold},
		roleLatency: {color.FgCyan},
		roleFaint:   {color.Faint},
	}
	for r, a := range attrs {
		c := color.New(a...)
		c.EnableColor()
		pre, post, _ := strings.Cut(c.Sprint("\x00"), "\x00")
		e[r] = [2]string{pre, post}
	}
	return e
}()

// paint appends s to b, wrapped in the role's color when on.
func paint(b []byte, on bool, r role, s string) []byte {
	if !on || s == "" {
		return append(b, s...)
	}
	b = append(b, escapes[r][0]...)
	b = append(b, s...)
	return append(b, escapes[r][1]...)
}

const redacted = "<redacted>"

// isRedacted reports whether n's value must be withheld.
func isRedacted(n *protocol.Node, o *Options) bool {
	return n.Flags&protocol.FlagRedacted != 0 && !o.ShowSecrets
}

// needsQuote reports whether a word's value must be quoted: it has
// spaces or quotes, or is not printable text (termsafe.Safe: control
// characters, tabs and newlines included, or bytes that are not UTF-8). A
// value of printable ASCII without spaces and quotes (most client ids,
// users, group and member ids) is told at once, byte by byte, before any
// other test.
func needsQuote(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '"' {
			return strings.ContainsAny(s, " \"") || !termsafe.Safe(s)
		}
	}
	return false
}

// appendWordValue appends a word's value from the wire (a client id, a
// SASL mechanism or user, a group, member or transactional id): as it is
// when it is printable text without spaces or quotes, else quoted Go's way
// (needsQuote), so that it can neither act on the terminal nor pass for
// more words of the line.
func appendWordValue(b []byte, v string) []byte {
	if needsQuote(v) {
		return strconv.AppendQuote(b, v)
	}
	return append(b, v...)
}

// printable reports whether b is UTF-8 text worth showing as text: valid,
// and without control characters other than tab, newline and carriage return.
// Runs of printable ASCII are checked 32 and 8 bytes at a time: record
// values are often kilobytes long.
func printable(b []byte) bool {
	i := 0
	for len(b)-i >= 32 {
		p := b[i : i+32]
		if notASCIIPrint(binary.LittleEndian.Uint64(p))|notASCIIPrint(binary.LittleEndian.Uint64(p[8:]))|
			notASCIIPrint(binary.LittleEndian.Uint64(p[16:]))|notASCIIPrint(binary.LittleEndian.Uint64(p[24:])) != 0 {
			break
		}
		i += 32
	}
	for i < len(b) {
		if len(b)-i >= 8 && notASCIIPrint(binary.LittleEndian.Uint64(b[i:])) == 0 {
			i += 8
			continue
		}
		c := b[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 || !unicode.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}

// notASCIIPrint is zero when the 8 bytes of x are all printable ASCII
// (0x20 to 0x7e): no byte below 0x20 and none above 0x7e (Hacker's
// Delight's "has less" and "has more" tests).
func notASCIIPrint(x uint64) uint64 {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	return ((x-ones*0x20)&^x | (x + ones) | x) & high
}

// hasByte is nonzero when one of the 8 bytes of x is c (the "has zero
// byte" test of x^c in every byte: exact as to whether one is).
func hasByte(x uint64, c byte) uint64 {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	y := x ^ (ones * uint64(c))
	return (y - ones) &^ y & high
}

// hasControl is nonzero when one of the 8 bytes of x is below 0x20.
func hasControl(x uint64) uint64 {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	return (x - ones*0x20) &^ x & high
}

// cutText cuts s to at most max bytes on a rune boundary.
func cutText(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}

// appendQuoted appends s quoted (Go syntax, which escapes control
// characters), cut at max bytes with the full length given.
func appendQuoted(b []byte, s string, max int) []byte {
	t, cut := cutText(s, max)
	if plainASCII(t) {
		// Nothing to escape (client IDs, topics, groups, hosts): the
		// quotes around it are what strconv.AppendQuote would give.
		b = append(b, '"')
		b = append(b, t...)
		b = append(b, '"')
	} else {
		b = strconv.AppendQuote(b, t)
	}
	if cut {
		b = append(b, "... ("...)
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, " bytes)"...)
	}
	return b
}

// plainASCII reports whether s is printable ASCII (0x20 to 0x7e) without
// '"' or '\\': Go quoting leaves every byte of it as it is.
func plainASCII(s string) bool {
	i := 0
	for ; len(s)-i >= 8; i += 8 {
		t := s[i : i+8]
		x := uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
			uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
		if notASCIIPrint(x)|hasByte(x, '"')|hasByte(x, '\\') != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// appendQuotedPrintable is appendQuoted for bytes that passed printable:
// every rune but tab, newline and carriage return is printable, so
// strconv's quoting reduces to escaping those three, '"' and '\\'.
func appendQuotedPrintable(b []byte, v []byte, total, max int) []byte {
	t := shownText(v, max)
	return appendQuotedText(b, t, plainQuotedPrefix(t), total)
}

// appendQuotedText appends t, shown text of a value of total bytes that
// passed printable, quoted as appendQuotedPrintable does; t[:plain]
// needs no escape (plainQuotedPrefix).
func appendQuotedText(b []byte, t []byte, plain, total int) []byte {
	b = append(b, '"')
	start := 0
	for i := plain; i < len(t); i++ {
		// Runs of 8 bytes with nothing to escape are skipped whole.
		for len(t)-i >= 8 {
			x := binary.LittleEndian.Uint64(t[i:])
			if hasControl(x)|hasByte(x, '"')|hasByte(x, '\\') != 0 {
				break
			}
			i += 8
		}
		if i == len(t) {
			break
		}
		c := t[i]
		var esc byte
		switch c {
		case '"', '\\':
			esc = c
		case '\t':
			esc = 't'
		case '\n':
			esc = 'n'
		case '\r':
			esc = 'r'
		default:
			continue
		}
		b = append(b, t[start:i]...)
		b = append(b, '\\', esc)
		start = i + 1
	}
	b = append(b, t[start:]...)
	b = append(b, '"')
	if len(t) < total {
		b = append(b, "... ("...)
		b = strconv.AppendInt(b, int64(total), 10)
		b = append(b, " bytes)"...)
	}
	return b
}

// notQuotedPlain is zero when the 8 bytes of x are printable ASCII other
// than '"' and '\\': bytes that Go quoting leaves as they are.
func notQuotedPlain(x uint64) uint64 {
	return notASCIIPrint(x) | hasByte(x, '"') | hasByte(x, '\\')
}

// plainQuotedPrefix is the length of the run at the start of t that is
// printable ASCII without '"' or '\\' (printable, and left as it is by
// quoting), tested 32 and 8 bytes at a time: record values are mostly
// such a run, which is then scanned once, not once by printable and again
// by the quoting.
func plainQuotedPrefix(t []byte) int {
	i := 0
	for len(t)-i >= 32 {
		p := t[i : i+32]
		if notQuotedPlain(binary.LittleEndian.Uint64(p))|notQuotedPlain(binary.LittleEndian.Uint64(p[8:]))|
			notQuotedPlain(binary.LittleEndian.Uint64(p[16:]))|notQuotedPlain(binary.LittleEndian.Uint64(p[24:])) != 0 {
			break
		}
		i += 32
	}
	for len(t)-i >= 8 && notQuotedPlain(binary.LittleEndian.Uint64(t[i:])) == 0 {
		i += 8
	}
	return i
}

// shownText is the part of v shown as text when cut at max bytes: its
// first max bytes, less the start of a rune they cut.
func shownText(v []byte, max int) []byte {
	if len(v) <= max {
		return v
	}
	i := max
	for i > 0 && !utf8.RuneStart(v[i]) {
		i--
	}
	return v[:i]
}

// appendBytesValue appends a bytes value of total bytes, of which v holds
// the first ones (all, unless the decoder omitted the rest:
// protocol.Node.RawLen), in mode m, cut at max bytes. Whether it shows as
// text depends on the bytes shown only, so a value reads the same whether
// the decoder kept all of it or not.
func appendBytesValue(b []byte, v []byte, total int, m ValueMode, max int) []byte {
	if m == ValuesNone {
		b = strconv.AppendInt(b, int64(total), 10)
		return append(b, " bytes"...)
	}
	if m == ValuesText {
		// One scan for the plain run that starts most values; printable
		// looks at the rest only (the run is ASCII: it ends on a rune).
		t := shownText(v, max)
		if n := plainQuotedPrefix(t); n == len(t) || printable(t[n:]) {
			return appendQuotedText(b, t, n, total)
		}
	}
	t := v
	if len(t) > max {
		t = t[:max]
	}
	switch m {
	case ValuesBase64:
		b = base64.StdEncoding.AppendEncode(b, t)
	default:
		b = append(b, "0x"...)
		b = hex.AppendEncode(b, t)
	}
	if len(t) < total {
		b = append(b, "... ("...)
		b = strconv.AppendInt(b, int64(total), 10)
		b = append(b, " bytes)"...)
	}
	return b
}

// UUIDString returns Kafka's form of a UUID: unpadded base64url of its 16
// bytes (org.apache.kafka.common.Uuid.toString). Other lengths give hex.
func UUIDString(raw []byte) string {
	if len(raw) != 16 {
		return hex.EncodeToString(raw)
	}
	return base64.RawURLEncoding.EncodeToString(raw)
}

// uuidHex returns the RFC 4122 hex form 8-4-4-4-12.
func uuidHex(raw []byte) string {
	if len(raw) != 16 {
		return hex.EncodeToString(raw)
	}
	h := hex.EncodeToString(raw)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// appendUUID appends UUIDString(raw) to b.
func appendUUID(b, raw []byte) []byte {
	if len(raw) != 16 {
		return hex.AppendEncode(b, raw)
	}
	return base64.RawURLEncoding.AppendEncode(b, raw)
}

// appendUUIDHex appends uuidHex(raw) to b.
func appendUUIDHex(b, raw []byte) []byte {
	if len(raw) != 16 {
		return hex.AppendEncode(b, raw)
	}
	b = hex.AppendEncode(b, raw[:4])
	for _, r := range [...][2]int{{4, 6}, {6, 8}, {8, 10}, {10, 16}} {
		b = append(b, '-')
		b = hex.AppendEncode(b, raw[r[0]:r[1]])
	}
	return b
}

// isCRC reports whether n is a record batch's or a legacy message's CRC
// field, shown in hex.
func isCRC(n *protocol.Node) bool {
	return n.Field == protocol.Batch.Crc || n.Field == protocol.Message.Crc
}

// isErrorCode reports whether n is a Kafka error code field.
func isErrorCode(n *protocol.Node) bool {
	return n.Kind == protocol.KindInt && n.Role() == protocol.RoleErrorCode
}

// appendValue appends the one-line value of a leaf node (no notes or
// flags): null, <redacted>, numbers, quoted strings, bytes per mode, UUIDs,
// array counts. long adds the UUID's hex form.
func appendValue(b []byte, n *protocol.Node, o *Options, long bool) []byte {
	if isRedacted(n, o) {
		return append(b, redacted...)
	}
	if n.Flags&protocol.FlagNull != 0 {
		return append(b, "null"...)
	}
	max := o.maxValue()
	switch n.Kind {
	case protocol.KindInt:
		if isCRC(n) && n.Int >= 0 && n.Int <= 0xffffffff {
			b = append(b, "0x"...) // a CRC-32 reads as its 8 hex digits
			for sh := 28; sh >= 0; sh -= 4 {
				b = append(b, hexDigits[n.Int>>sh&0xf])
			}
			return b
		}
		return appendInt(b, n.Int)
	case protocol.KindBool:
		return strconv.AppendBool(b, n.Int != 0)
	case protocol.KindFloat:
		// As JSON writes it (a quota of 1048576 bytes/s reads 1048576,
		// not 1.048576e+06); NaN and the infinities by their names.
		if out, ok := appendStdFloat(b, n.Float); ok {
			return out
		}
		return strconv.AppendFloat(b, n.Float, 'g', -1, 64)
	case protocol.KindString:
		return appendQuoted(b, n.Str, max)
	case protocol.KindBytes:
		return appendBytesValue(b, n.Raw, n.RawLen(), o.Values, max)
	case protocol.KindUUID:
		b = appendUUID(b, n.Raw)
		if long {
			b = append(b, " ("...)
			b = appendUUIDHex(b, n.Raw)
			b = append(b, ')')
		}
		return b
	case protocol.KindArray:
		b = append(b, '[')
		b = appendInt(b, n.Int)
		return append(b, ']')
	case protocol.KindRecords:
		size := len(n.Raw)
		if n.Raw == nil {
			size = n.Len
		}
		b = strconv.AppendInt(b, int64(size), 10)
		return append(b, " bytes"...)
	case protocol.KindUnknownTag:
		b = append(b, "tag "...)
		b = appendInt(b, n.Int)
		b = append(b, ", "...)
		b = strconv.AppendInt(b, int64(len(n.Raw)), 10)
		b = append(b, " bytes: "...)
		t := n.Raw
		if len(t) > max {
			t = t[:max]
		}
		b = hex.AppendEncode(b, t)
		if len(t) < len(n.Raw) {
			b = append(b, "..."...)
		}
		return b
	case protocol.KindRaw:
		b = strconv.AppendInt(b, int64(n.Len), 10)
		return append(b, " bytes not decoded"...)
	case protocol.KindTaggedFields:
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(len(n.Children)), 10)
		return append(b, ']')
	}
	return b
}

// isMessage reports whether n is a message, header or data struct node as
// the decoder builds them: its Note is its version ("v9").
func isMessage(n *protocol.Node) bool {
	if n.Kind != protocol.KindStruct || n.Field != nil {
		return false
	}
	switch n.Type {
	case "request", "response", "header", "data":
		return true
	}
	return false
}

// noteOf returns n's note, or for an API key field without one the API's
// name from the schema table.
func noteOf(n *protocol.Node) string {
	if n.Note == "" && n.Kind == protocol.KindInt && n.Int >= 0 && n.Int <= 0x7fff && n.Role() == protocol.RoleAPIKey {
		return protocol.APIName(int16(n.Int))
	}
	return n.Note
}

// trimValueNote returns an integer's note without the value v it repeats:
// "1700000000000 (2023-11-14T22:13:20.000Z)" beside the value
// 1700000000000 says the number twice.
func trimValueNote(note string, v int64) string {
	if len(note) <= 3 || note[0] != '-' && (note[0] < '0' || note[0] > '9') {
		return note // the usual note (an API or error name) cannot start with v
	}
	var tmp [24]byte
	d := strconv.AppendInt(tmp[:0], v, 10)
	if k := len(d); len(note) >= k+3 && note[:k] == string(d) && note[k:k+2] == " (" && note[len(note)-1] == ')' {
		return note[k+2 : len(note)-1]
	}
	return note
}

// appendNotes appends n's note and flag marks, colored by role. A message
// version note shows bare (" v9"), other notes in parentheses.
func appendNotes(b []byte, n *protocol.Node, o *Options) []byte {
	c := o.Color
	note := noteOf(n)
	if n.Kind == protocol.KindInt && !isRedacted(n, o) {
		note = trimValueNote(note, n.Int)
	}
	if note != "" && isMessage(n) && note == n.Note {
		b = append(b, ' ')
		b = paint(b, c, roleAPI, termsafe.Escape(note))
	} else if note != "" {
		b = append(b, ' ')
		r := roleNote
		switch {
		case n.Flags&protocol.FlagError != 0:
			r = roleError
		case isErrorCode(n):
			r = roleFaint
			if n.Int != 0 {
				r = roleError
			}
		}
		b = append(b, '(')
		b = paint(b, c, r, termsafe.Escape(note))
		b = append(b, ')')
	}
	const marked = protocol.FlagTagged | protocol.FlagUnknown | protocol.FlagTruncated |
		protocol.FlagLenient | protocol.FlagError | protocol.FlagPartial
	if n.Flags&marked == 0 {
		return b
	}
	marks := [...]struct {
		f protocol.Flags
		s string
		r role
	}{
		{protocol.FlagTagged, "[tagged]", roleFaint},
		{protocol.FlagUnknown, "[unknown]", roleNote},
		{protocol.FlagTruncated, "[truncated]", roleError},
		{protocol.FlagLenient, "[lenient]", roleNote},
		{protocol.FlagError, "[error]", roleError},
		{protocol.FlagPartial, "[partial batch]", roleNote},
	}
	for _, m := range marks {
		if m.f == protocol.FlagPartial && strings.Contains(note, "partial") {
			continue // the note says so already
		}
		if n.Flags&m.f != 0 {
			b = append(b, ' ')
			b = paint(b, c, m.r, m.s)
		}
	}
	return b
}

// lowerCamel lower-cases the first letter of a schema field name, as Kafka's
// JsonConverter names JSON fields ("ClientId" → "clientId").
func lowerCamel(s string) string {
	if s == "" {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	if unicode.IsLower(r) {
		return s
	}
	return string(unicode.ToLower(r)) + s[size:]
}

// camelKey turns a field name into a lower camel-case JSON key for kwire's
// own objects (record batches and records): a leading run of capitals is
// lower-cased as a word ("CRC" → "crc", "BaseOffset" → "baseOffset",
// "HTTPServer" → "httpServer").
func camelKey(s string) string {
	i := 0
	for i < len(s) && s[i] >= 'A' && s[i] <= 'Z' {
		i++
	}
	switch {
	case i == 0:
		return s
	case i == len(s):
		return strings.ToLower(s)
	case i > 1 && s[i] >= 'a' && s[i] <= 'z':
		i-- // the last capital starts the next word
	}
	return strings.ToLower(s[:i]) + s[i:]
}

// intOf returns the integer value of c, a child found by name, and
// whether it has one.
func intOf(c *protocol.Node) (int64, bool) {
	if c == nil || (c.Kind != protocol.KindInt && c.Kind != protocol.KindBool) || c.Flags&protocol.FlagNull != 0 {
		return 0, false
	}
	return c.Int, true
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// appendInt is strconv.AppendInt(b, v, 10) with the values most fields
// hold (0 to 99: error codes, partition indexes, versions, counts) written
// directly: strconv formats every value in a buffer of its own and copies
// it, a tenth of read -V's rendering on captures of small exchanges.
func appendInt(b []byte, v int64) []byte {
	switch {
	case v >= 0 && v < 10:
		return append(b, byte('0'+v))
	case v >= 10 && v < 100:
		return append(b, byte('0'+v/10), byte('0'+v%10))
	}
	return strconv.AppendInt(b, v, 10)
}
