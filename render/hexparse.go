package render

// This file turns hex text, as people paste it, into bytes. Accepted:
//
//   - bare digits, with any whitespace, commas or colons between them:
//     "00 00 00 13", "0000:0013", xxd -p output;
//   - 0x-prefixed tokens and \x escapes: "0x00, 0x13" (xxd -i), "\x00\x13";
//   - dumps whose lines start with an offset: hexdump -C
//     ("00000000  00 00 00 13 ...  |....|", "*" for repeated lines and a
//     final offset-only line), xxd ("00000000: 0000 0013 ...  ....") and
//     Wireshark's "Copy as Hex Dump" ("0000   00 00 00 13 ...   ....") and
//     kwire read -x ("000e  63 61 70 67 65 6e 2d 6b  67 6f  RequestHeader.ClientId ...",
//     with its "request, packet N:" lines; a dump that withholds a secret,
//     "<redacted>" and then "+0004" offsets, is refused with a message
//     saying so).
//     Offsets, the ASCII column and -x's field names are dropped; each
//     line's offset must follow from the bytes before it, which catches an
//     ASCII column read as hex;
//   - lines of bare hex after some text, as a log line writes them
//     ("[2026-05-01 12:00:00,123] DEBUG payload=00000013..."): the text
//     before a space, '=' or ':' that only hex follows is skipped, a
//     port or offset and its colon with it ("10.0.0.5:9092: 0000...")
//     (ParseHexNoting says what it skipped);
//   - a dump whose lines a logger prefixed with its own text, after a
//     heading line or not ("... [thrd:b1]: 00000000: 00 00 00 2a ...  ...*"):
//     the text before each dump line, and lines with no bytes before
//     and after the dump, are skipped (logDumpLines).

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// hexError is a problem with hex input, located by line and column
// (both 1-based).
type hexError struct {
	Line, Col int
	Msg       string
}

func (e *hexError) Error() string {
	if e.Line == 0 {
		return "bad hex input: " + e.Msg
	}
	return fmt.Sprintf("bad hex input: line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

var (
	// dumpLineRE is a dump line: an offset of 4 to 16 hex digits followed by
	// ": " (xxd) or two or more spaces (hexdump -C, Wireshark), then data.
	dumpLineRE = regexp.MustCompile(`^([0-9a-fA-F]{4,16})(?::[ \t]+|[ \t]{2,})(\S.*)$`)
	// offsetOnly is a dump's closing line: just the offset of the end.
	offsetOnly = regexp.MustCompile(`^([0-9a-fA-F]{4,16}):?$`)
	// asciiGap separates a dump line's hex from its ASCII column.
	asciiGap = regexp.MustCompile(`[ \t]{2,}`)
	// eightBytes is the first half of a 16-byte row that splits its bytes
	// 8 + 8 with two spaces (hexdump -C, kwire read -x); halfBytes is the
	// second half, 1 to 8 bytes, followed by the ASCII column or field name.
	eightBytes = regexp.MustCompile(`^[0-9a-fA-F]{2}(?: [0-9a-fA-F]{2}){7}$`)
	halfBytes  = regexp.MustCompile(`^[0-9a-fA-F]{2}(?: [0-9a-fA-F]{2}){0,7}(?:[ \t]{2,}|$)`)
	// section is kwire -x's heading of the decompressed records printed
	// after a frame's own rows: the frame's bytes end before it.
	section = regexp.MustCompile(`^-- .* --$`)
	// elided is kwire -x's line for the bytes of a value cut at --max-value.
	elided = regexp.MustCompile(`^… (\d+) more bytes of `)
	// frameHeading is a line kwire read -x puts before each frame's rows:
	// the exchange's summary line, then "request, packet N:".
	frameHeading = regexp.MustCompile(`^(?:(?:request|response), packets? [0-9-]+:|\d\d:\d\d:\d\d\.\d{3} .* → .*)$`)
)

// base64Hint adds to a hex error on text that is base64 as a whole (as
// JSON carries bytes: kwire read --json's bodies, Kafka's JsonConverter)
// a hint to turn it into hex first; it is err as it was otherwise. Hex
// with a stray character or two is not taken for base64.
func base64Hint(err error, text string) error {
	var he *hexError
	t := strings.Join(strings.Fields(text), "")
	// Hex with a typo or two is not base64, though its digits are in
	// base64's alphabet: want several characters hex has not.
	other := 0
	for _, r := range t {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			other++
		}
	}
	if !errors.As(err, &he) || len(t) < 8 || other < 3 || other*10 < len(t) {
		return err
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if _, derr := enc.DecodeString(t); derr == nil {
			h := *he
			h.Msg += " (the input looks like base64, as JSON gives bytes: decode takes hex; base64 -d | xxd -p turns one into the other)"
			return &h
		}
	}
	return err
}

// maxRepeat bounds the bytes a hexdump "*" line may stand for: Kafka's
// largest frame by default (socket.request.max.bytes, 100 MiB).
const maxRepeat = 100 << 20

// maxOffset bounds a dump line's offset (1 TiB), so that offset arithmetic
// cannot overflow.
const maxOffset = 1 << 40

// ParseHex decodes hex text in any of the layouts described at the top of
// this file.
func ParseHex(text string) ([]byte, error) {
	b, _, err := ParseHexNoting(text)
	return b, err
}

// ParseHexNoting is ParseHex, also accepting lines of plain hex that
// follow some text, as in a log line ("[2026-05-01 12:00:00,123] DEBUG
// sent payload=0000001300120000..."): the text is skipped when what
// follows a space, '=' or ':' after it is all hex, of at least
// minTailDigits digits; notes says what was skipped, line by line.
func ParseHexNoting(text string) ([]byte, []string, error) {
	var notes []string
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\n")
	isDump := false
	for _, l := range lines {
		if dumpLineRE.MatchString(strings.TrimSpace(l)) {
			isDump = true
			break
		}
	}
	var out []byte
	if !isDump {
		for i, l := range lines {
			b, err := appendHexDigits(out, l, i+1, 1)
			if err != nil {
				at, ok := hexTail(l)
				if !ok {
					if stripped, logNotes, ok := logDumpLines(lines); ok {
						// A dump inside log lines: each line's log text
						// before it, and lines with no bytes, left out.
						b, err := parseDump(stripped)
						if err != nil {
							return nil, nil, err
						}
						return b, logNotes, nil
					}
					return nil, nil, base64Hint(err, text)
				}
				if b, err = appendHexDigits(out, l[at:], i+1, at+1); err != nil {
					return nil, nil, err
				}
				notes = append(notes, fmt.Sprintf("line %d: skipped %q before the hex", i+1, clipText(l[:at], 60)))
			}
			out = b
		}
		b, err := finishHex(out)
		return b, notes, err
	}
	b, err := parseDump(lines)
	return b, nil, err
}

// logDumpLines finds a dump (as dumpLineRE reads its lines) written
// inside log lines, each behind the logger's own text
// ("%7|1700000000.123|PROTOHEXDUMP|rdkafka#producer-1| [thrd:b]: 0000: 00 00 00 2a ...  ...*"):
// on each line, the dump line starts after a space, ':', '=', '|' or
// ']', where the rest reads as one; the first such place, or the same
// place as on the line before when that reads as one too, and on the
// first line one with offset 0 (a frame's dump starts there) when there
// is one. The text before is turned into spaces, so that the columns
// of errors stay the line's. Lines without a dump line before the first
// and after the last (a heading: "Sent MetadataRequest (v12, 46
// bytes)") are left out; one between two is kept, for parseDump to
// refuse. parseDump's check that each line's offset follows from the
// bytes before it catches a place chosen wrong. ok is false when no
// line holds a dump line after some text.
func logDumpLines(lines []string) (out []string, notes []string, ok bool) {
	// Each place tried reads the rest of the line: only the first
	// maxLogPrefix bytes are tried, so that a long line costs linear time.
	starts := make([]int, len(lines))
	prev := -1
	first, last := -1, -1
	for i, l := range lines {
		starts[i] = -1
		var cands []int
		for j := 1; j < min(len(l), maxLogPrefix); j++ {
			if !strings.ContainsRune(" \t:=|]", rune(l[j-1])) || unhex(l[j]) < 0 {
				continue
			}
			if dumpLineRE.MatchString(strings.TrimRight(l[j:], " \t")) {
				cands = append(cands, j)
			}
		}
		if len(cands) == 0 {
			continue
		}
		at := cands[0]
		switch {
		case prev >= 0 && slices.Contains(cands, prev):
			at = prev
		case first < 0:
			for _, c := range cands {
				if m := dumpLineRE.FindStringSubmatch(l[c:]); m != nil && strings.Trim(m[1], "0") == "" {
					at = c
					break
				}
			}
		}
		starts[i], prev = at, at
		if first < 0 {
			first = i
		}
		last = i
	}
	if first < 0 {
		return nil, nil, false
	}
	out = make([]string, len(lines))
	for i, l := range lines {
		switch {
		case starts[i] >= 0:
			out[i] = strings.Repeat(" ", starts[i]) + l[starts[i]:]
		case (i < first || i > last) && strings.TrimSpace(l) != "":
			notes = append(notes, fmt.Sprintf("line %d: skipped %q: no dump bytes on it", i+1, clipText(strings.TrimSpace(l), 60)))
		case i < first || i > last:
		default:
			out[i] = l
		}
	}
	notes = append(notes, fmt.Sprintf("lines %d-%d: skipped the text before each dump line (%q on line %d)", first+1, last+1, clipText(lines[first][:starts[first]], 100), first+1))
	return out, notes, true
}

// maxLogPrefix is the longest text logDumpLines skips before a dump line.
const maxLogPrefix = 512

// minTailDigits is the fewest hex digits a line's tail must hold for the
// text before it to be skipped (a frame's length prefix alone has 8).
const minTailDigits = 8

// hexTail returns where the hex at the end of line l starts when l is
// some text, a space, '=' or ':', then only hex (as appendHexDigits reads
// it) of at least minTailDigits digits: the leftmost such start.
//
// A tail that reads as hex holds no '=', and its spaces and colons are
// appendHexDigits' separators: every later start in it reads as hex too.
// So the leftmost start that reads is found by bisection, and the starts
// after it are tried only while a port or an offset (labelled) is before
// the hex, at most maxLabelTries: a line is read a logarithmic number of
// times, not once for each space in it (a 300 KB line of short hex words
// and a word that is not took 45 s).
func hexTail(l string) (int, bool) {
	var seps []int
	for i := 0; i < len(l); i++ {
		if c := l[i]; c == ' ' || c == '\t' || c == '=' || c == ':' {
			seps = append(seps, i+1)
		}
	}
	first := sort.Search(len(seps), func(k int) bool { return hexDigitsIn(l[seps[k]:]) >= 0 })
	for k := first; k < len(seps) && k < first+maxLabelTries; k++ {
		tail := l[seps[k]:]
		if hexDigitsIn(tail) < minTailDigits {
			return 0, false
		}
		if !labelled(tail) {
			return seps[k], true
		}
	}
	return 0, false
}

// maxLabelTries bounds the starts hexTail tries after a port or an
// offset before the hex.
const maxLabelTries = 8

// hexDigitsIn returns how many hex digits s holds as appendHexDigits
// reads it, or -1 when it does not read as hex.
func hexDigitsIn(s string) int {
	d, err := appendHexDigits(nil, s, 0, 0)
	if err != nil {
		return -1
	}
	return len(d)
}

// labelled reports whether tail starts with a group of digits and a
// colon, and its groups are not all of one length (the last may be
// shorter): a port or an offset before the hex ("9092: 00000013...",
// "0000: 00 00 00 13"), part of the text, not of the bytes. Hex written
// with colons ("00:00:00:13") has groups of one length.
func labelled(tail string) bool {
	groups := strings.FieldsFunc(tail, func(r rune) bool { return r == ' ' || r == '\t' || r == ':' || r == ',' || r == ';' })
	first := strings.TrimLeft(tail, " \t")
	if len(groups) < 2 || !strings.HasPrefix(first[len(groups[0]):], ":") {
		return false
	}
	for i, g := range groups[1:] {
		if len(g) != len(groups[0]) && (i < len(groups)-2 || len(g) > len(groups[0])) {
			return true
		}
	}
	return false
}

// hexRun is 8 or more bytes of hex in text skipped: a frame's bytes
// (a SASL password among them) when the hex read was another run.
var hexRun = regexp.MustCompile(`[0-9a-fA-F]{2}(?:[ :,]?[0-9a-fA-F]{2}){7,}`)

// clipText cuts s, text skipped, to n bytes for a message, with its
// runs of hex withheld ("<hex, N bytes>"): skipped text is not what was
// decoded, and its bytes are not shown undecoded (a log line whose hex
// is followed by a hex trace ID quoted the frame, password and all).
func clipText(s string, n int) string {
	s = hexRun.ReplaceAllStringFunc(s, func(h string) string {
		return fmt.Sprintf("<hex, %d bytes>", hexDigitsIn(h)/2)
	})
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// parseDump decodes the lines of an offset-prefixed dump.
func parseDump(lines []string) ([]byte, error) {
	var (
		out      []byte
		base     = -1   // offset of the first line
		prevLine []byte // the last data line's bytes, for "*"
		repeat   bool   // a "*" line is pending
		redacted int    // the line of a kwire -x row whose bytes were withheld
	)
	// reach checks that a line at offset off follows the bytes so far,
	// expanding a pending "*" by repeating the previous line.
	reach := func(off, lineNo int) error {
		if off > maxOffset {
			return &hexError{Line: lineNo, Col: 1, Msg: fmt.Sprintf("offset %#x is beyond any dump of a frame", off)}
		}
		if base < 0 {
			base = off
			return nil
		}
		have := base + len(out)
		if repeat && off-have > maxRepeat {
			return &hexError{Line: lineNo, Col: 1, Msg: fmt.Sprintf(
				"\"*\" would repeat %d bytes, more than the %d a frame can hold", off-have, maxRepeat)}
		}
		if off-base > maxRepeat {
			return &hexError{Line: lineNo, Col: 1, Msg: fmt.Sprintf(
				"offset %#x is %d bytes past the first, more than the %d a frame can hold", off, off-base, maxRepeat)}
		}
		if repeat && len(prevLine) > 0 {
			if off > have {
				out = slices.Grow(out, off-have+len(prevLine)) // at once: a line at a time would double the slice over and over
			}
			for have < off {
				out = append(out, prevLine...)
				have += len(prevLine)
			}
			repeat = false
		}
		if off == base && have > base {
			return &hexError{Line: lineNo, Col: 1, Msg: fmt.Sprintf(
				"offset %#x starts over: a second dump begins here (e.g. a response after its request); decode one frame at a time", off)}
		}
		if have != off && redacted > 0 {
			return withheld(redacted)
		}
		if have != off {
			return &hexError{Line: lineNo, Col: 1, Msg: fmt.Sprintf(
				"offset %#x does not follow the %d bytes before it (expected %#x); is the ASCII column being read as hex?",
				off, have-base, have)}
		}
		return nil
	}
	for i, raw := range lines {
		lineNo := i + 1
		l := strings.TrimSpace(raw)
		indent := strings.Index(raw, l)
		if m := elided.FindStringSubmatch(l); m != nil {
			return nil, &hexError{Line: lineNo, Col: indent + 1, Msg: fmt.Sprintf(
				"the dump leaves out %s bytes here (values are cut at --max-value): rerun kwire read -x with --max-value 0 to decode the frame", m[1])}
		}
		if section.MatchString(l) && len(out) > 0 {
			break // the rest is decompressed records, not the frame's bytes
		}
		switch {
		case l == "" || frameHeading.MatchString(l) || strings.HasPrefix(l, "error: ") ||
			strings.HasPrefix(l, "unknown version: ") || strings.HasPrefix(l, "unknown API: "):
			continue
		case l == "*":
			repeat = true
			continue
		}
		if strings.HasPrefix(l, "+") && redacted > 0 {
			// kwire -x after a withheld secret: offsets count from its
			// end, whose length the dump does not give.
			return nil, withheld(redacted)
		}
		if m := offsetOnly.FindStringSubmatch(l); m != nil {
			off, _ := strconv.ParseUint(m[1], 16, 63)
			if err := reach(int(off), lineNo); err != nil {
				return nil, err
			}
			continue
		}
		m := dumpLineRE.FindStringSubmatchIndex(l)
		if m == nil {
			return nil, &hexError{Line: lineNo, Col: indent + 1, Msg: "not a dump line (expected an offset, then hex bytes)"}
		}
		off, _ := strconv.ParseUint(l[m[2]:m[3]], 16, 63)
		if err := reach(int(off), lineNo); err != nil {
			return nil, err
		}
		data := l[m[4]:]
		col := indent + m[4] + 1
		if tok, _, _ := strings.Cut(data, " "); len(tok) > 2 && strings.Trim(tok, "0123456789abcdefABCDEF") != "" {
			// An offset and field names, no bytes (kwire read -x: an
			// empty struct, or a secret withheld).
			if strings.Contains(data, "<redacted>") {
				redacted = lineNo
			}
			continue
		}
		if j := strings.IndexByte(data, '|'); j >= 0 {
			data = data[:j] // hexdump -C: |ASCII|
		} else if loc := asciiGap.FindStringIndex(data); loc != nil {
			cut := loc[0] // xxd, Wireshark: two or more spaces, then ASCII
			// hexdump -C and kwire -x split a row's 16 bytes 8 + 8 with
			// exactly two spaces; xxd -g1, tshark -x and Wireshark put
			// a wider gap before the ASCII column of a short row.
			if loc[1]-loc[0] == 2 && eightBytes.MatchString(data[:loc[0]]) {
				if h := halfBytes.FindString(data[loc[1]:]); h != "" {
					cut = loc[1] + len(strings.TrimRight(h, " \t")) // 8 + 8 bytes, then ASCII or names
				}
			}
			data = data[:cut]
		}
		digits, err := appendHexDigits(nil, data, lineNo, col)
		if err != nil {
			return nil, err
		}
		if len(digits)%2 != 0 {
			return nil, &hexError{Line: lineNo, Col: col, Msg: fmt.Sprintf("odd number of hex digits (%d) on the line", len(digits))}
		}
		prevLine = pairDigits(digits)
		out = append(out, prevLine...)
	}
	if redacted > 0 {
		return nil, withheld(redacted)
	}
	if len(out) == 0 {
		return nil, &hexError{Msg: "no hex digits"}
	}
	return out, nil
}

// withheld is the error for a kwire -x dump whose row at line holds a
// secret's field name but not its bytes.
func withheld(line int) *hexError {
	return &hexError{Line: line, Col: 1, Msg: "the dump withholds a secret's bytes here (<redacted>): rerun kwire read -x with --show-secrets to decode the frame"}
}

// appendHexDigits appends the hex digits of s, one digit per byte, to dst
// (pairDigits makes bytes of them). Separators and 0x / \x prefixes are
// skipped; anything else is an error located at line, col+index.
func appendHexDigits(dst []byte, s string, line, col int) ([]byte, error) {
	tokenStart := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == ',' || c == ':' || c == ';':
			tokenStart = true
			continue
		case c == '\\' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X'):
			i++
			tokenStart = false
			continue
		case tokenStart && c == '0' && i+1 < len(s) && (s[i+1] == 'x' || s[i+1] == 'X'):
			i++
			tokenStart = false
			continue
		}
		tokenStart = false
		if unhex(c) < 0 {
			return nil, &hexError{Line: line, Col: col + i, Msg: fmt.Sprintf("%q is not a hex digit", rune(c))}
		}
		dst = append(dst, c)
	}
	return dst, nil
}

// finishHex pairs the collected digits into bytes.
func finishHex(digits []byte) ([]byte, error) {
	if len(digits) == 0 {
		return nil, &hexError{Msg: "no hex digits"}
	}
	if len(digits)%2 != 0 {
		return nil, &hexError{Msg: fmt.Sprintf("odd number of hex digits (%d): the last byte is incomplete", len(digits))}
	}
	return pairDigits(digits), nil
}

// pairDigits turns an even number of hex digits into bytes, in place.
func pairDigits(digits []byte) []byte {
	out := digits[:len(digits)/2]
	for i := range out {
		out[i] = byte(unhex(digits[2*i])<<4 | unhex(digits[2*i+1]))
	}
	return out
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}
