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
//   - the dumps of other tools, rewritten into those: Netty's
//     ByteBufUtil.prettyHexDump, as Java clients and proxies log a
//     buffer ("|00000000| 00 00 00 13 ... |....|", its borders and
//     column heading dropped), and tcpdump -X and -XX
//     ("\t0x0000:  4500 0050 ...  E..P"; the bytes are then a packet,
//     whose TCP payload kwire decode takes);
//   - hex inside log lines, as a logger writes it, before more text or
//     not ("[2026-05-01 12:00:00,123] DEBUG sent 00000013... (23 bytes)"):
//     the run of hex the rule of ParseHexFrames picks is read, the text
//     around it skipped, a port or offset and its colon before it with it
//     ("10.0.0.5:9092: 0000...") (notes say what was skipped, with its
//     runs of hex withheld);
//   - a dump whose lines a logger prefixed with its own text, after a
//     heading line or not ("... [thrd:b1]: 00000000: 00 00 00 2a ...  ...*"):
//     the text before each dump line, and lines with no bytes, are
//     skipped (logDumpLines).
//
// Text may hold several frames: a dump's offset that starts over, a line
// of text between lines of hex, or (for frames) a whole frame followed
// by more hex begins the next one (ParseHexFrames).

import (
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kwire/kwire/protocol"
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
	// dumpStartRE is the start of a dump line, up to its first byte: what
	// logDumpLines matches, in a window of the line (dumpLineRE reads
	// the rest of the line, at each place tried).
	dumpStartRE = regexp.MustCompile(`^([0-9a-fA-F]{4,16})(?::[ \t]+|[ \t]{2,})\S`)
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

// HexFrame is the bytes of one frame (or body, or struct) found in hex
// text, and the line (1-based) its first byte is on.
type HexFrame struct {
	Data []byte
	Line int
}

// HexOptions says what the bytes in hex text are.
type HexOptions struct {
	// Framed: each frame starts with its 4-byte length, the count of the
	// bytes after it (Kafka's Size). A run of hex whose first 4 bytes
	// count the rest is a whole frame: it is taken before a line's other
	// runs, and hex on a later line starts the next frame.
	Framed bool
}

// ParseHex decodes hex text that holds one frame, in any of the layouts
// described at the top of this file.
func ParseHex(text string) ([]byte, error) {
	b, _, err := ParseHexNoting(text)
	return b, err
}

// ParseHexNoting is ParseHexFrames for text that holds one frame (or
// body, or struct): more than one is an error.
func ParseHexNoting(text string) ([]byte, []string, error) {
	frames, notes, err := ParseHexFrames(text, HexOptions{})
	if err != nil {
		return nil, nil, err
	}
	if len(frames) > 1 {
		return nil, nil, &hexError{Line: frames[1].Line, Col: 1, Msg: fmt.Sprintf(
			"a second frame begins here (%d in all, the first on line %d); decode one frame at a time", len(frames), frames[0].Line)}
	}
	return frames[0].Data, notes, nil
}

// ParseHexFrames reads the frames in hex text: pasted hex, dumps, and log
// lines with hex in them. notes says what was skipped, line by line, its
// runs of hex withheld. A frame ends where the text says another begins:
//
//   - in a dump, at an offset that starts over (0, or the first dump's
//     first offset), after a log line or not;
//   - elsewhere, at a line of text with no hex on it (a log line between
//     two frames), and, with opts.Framed, when the bytes so far are a
//     whole frame (their first 4 bytes count the rest).
//
// On a line that is not all hex, the hex is picked by this rule (see
// lineRuns): a run of hex bytes, as pasted hex writes them, between
// words of text; with opts.Framed, every run whose first 4 bytes count
// the rest, each a frame (up to 8 leading words of hex may be left out,
// and one word of 8 bytes or more may follow: frameEnd); else the
// longest run, which must hold at least 4 bytes at the line's
// end and 8 before more text. A line with no run and no word of text
// ("00 0g", a typo) is an error.
func ParseHexFrames(text string, opts HexOptions) ([]HexFrame, []string, error) {
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n"), "\n")
	isDump := false
	for i, l := range lines {
		lines[i] = rewriteRow(l)
		if !isDump && dumpLineRE.MatchString(strings.TrimSpace(lines[i])) {
			isDump = true
		}
	}
	if isDump {
		return parseDump(lines)
	}
	var dumpErr error
	if stripped, logNotes, ok := logDumpLines(lines); ok {
		// A dump inside log lines: each line's log text before it, and
		// lines with no bytes, left out.
		frames, notes, err := parseDump(stripped)
		if err == nil {
			return frames, append(notes, logNotes...), nil
		}
		dumpErr = err
	}
	frames, notes, err := parseLines(lines, opts)
	if err != nil && dumpErr != nil {
		return nil, nil, dumpErr
	}
	if err != nil {
		return nil, nil, base64Hint(err, text)
	}
	return frames, notes, nil
}

var (
	// nettyRow is a row of Netty's ByteBufUtil.prettyHexDump, as Java
	// clients and proxies log a buffer: "|00000000| 00 00 00 13 ... |....|";
	// nettyFrame its borders and column heading.
	nettyRow   = regexp.MustCompile(`^\s*\|([0-9a-fA-F]{8})\|((?: [0-9a-fA-F]{2}){1,16})\s*\|.*\|\s*$`)
	nettyFrame = regexp.MustCompile(`^\s*(?:\+[-+]*\+|\|(?:\s+[0-9a-f]){16}\s*\|)\s*$`)
	// tcpdumpRow is a row of tcpdump -X or -XX: "\t0x0010:  0a00 0002 ...  ....".
	tcpdumpRow = regexp.MustCompile(`^\s*0x([0-9a-fA-F]{4,8}):(\s+\S.*)$`)
)

// rewriteRow turns a row of a dump layout dumpLineRE does not read into
// one it does: Netty's rows into "offset  hex", tcpdump's into xxd's
// "offset: hex  ascii"; Netty's borders and heading become blank lines.
func rewriteRow(l string) string {
	if m := nettyRow.FindStringSubmatch(l); m != nil {
		return m[1] + "  " + strings.TrimSpace(m[2])
	}
	if nettyFrame.MatchString(l) {
		return ""
	}
	if m := tcpdumpRow.FindStringSubmatch(l); m != nil {
		return m[1] + ":" + m[2]
	}
	return l
}

// maxNotes bounds the notes of what was skipped: a long log says the
// rest as a count.
const maxNotes = 32

// noteList collects notes up to maxNotes, counting the rest.
type noteList struct {
	notes []string
	more  int
}

func (n *noteList) add(format string, a ...any) {
	if len(n.notes) >= maxNotes {
		n.more++
		return
	}
	n.notes = append(n.notes, fmt.Sprintf(format, a...))
}

// full reports whether further notes are only counted.
func (n *noteList) full() bool { return len(n.notes) >= maxNotes }

func (n *noteList) list() []string {
	if n.more > 0 {
		return append(n.notes, fmt.Sprintf("… %d more notes of text skipped left out", n.more))
	}
	return n.notes
}

// textBlock is a run of consecutive lines of text skipped, noted as one.
type textBlock struct {
	first, last int    // 1-based; first 0: none
	text        string // the first line's
	what        string // "hex", "dump bytes"
}

func (b *textBlock) add(line int, l string) {
	if b.first == 0 {
		b.first, b.text = line, strings.TrimSpace(l)
	}
	b.last = line
}

func (b *textBlock) end(n *noteList) {
	switch {
	case b.first == 0:
		return
	case n.full():
		n.more++
	case b.first == b.last:
		n.add("line %d: skipped %s: no %s on it", b.first, clipText(b.text, 60), b.what)
	default:
		n.add("lines %d-%d: skipped %d lines with no %s on them (line %d: %s)", b.first, b.last, b.last-b.first+1, b.what, b.first, clipText(b.text, 60))
	}
	b.first = 0
}

// parseLines reads lines that are not a dump: lines of hex, and log lines
// with hex in them (ParseHexFrames says how).
func parseLines(lines []string, opts HexOptions) ([]HexFrame, []string, error) {
	var (
		frames   []HexFrame
		cur      []byte // the current frame's digits
		curLine  int
		notes    noteList
		text     = textBlock{what: "hex"}
		firstErr error // the first line that is not all hex: why not
		badErr   error // the first line that is neither hex nor text
	)
	flush := func() error {
		if len(cur) == 0 {
			return nil
		}
		b, err := finishHex(cur)
		if err != nil {
			if len(frames) > 0 || curLine > 1 {
				err.(*hexError).Line, err.(*hexError).Col = curLine, 1
			}
			return err
		}
		frames = append(frames, HexFrame{Data: b, Line: curLine})
		cur = nil
		return nil
	}
	add := func(d []byte, line int) error {
		if opts.Framed && wholeFrame(cur) {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(cur) == 0 {
			curLine = line
		}
		cur = append(cur, d...)
		return nil
	}
	for i, l := range lines {
		n := i + 1
		if strings.TrimSpace(l) == "" {
			continue
		}
		d, err := appendHexDigits(nil, l, n, 1)
		if err == nil {
			text.end(&notes)
			if err := add(d, n); err != nil {
				return nil, nil, err
			}
			continue
		}
		if firstErr == nil {
			firstErr = err
		}
		runs := lineRuns(l, opts.Framed)
		if len(runs) == 0 {
			if !textLine(l) {
				if badErr == nil {
					badErr = err
				}
				continue
			}
			if err := flush(); err != nil {
				return nil, nil, err
			}
			text.add(n, l)
			continue
		}
		text.end(&notes)
		for _, r := range runs {
			if len(runs) > 1 {
				if err := flush(); err != nil {
					return nil, nil, err
				}
			}
			d, err := appendHexDigits(nil, l[r[0]:r[1]], n, r[0]+1)
			if err != nil {
				return nil, nil, err // lineRuns' runs read as hex
			}
			if err := add(d, n); err != nil {
				return nil, nil, err
			}
		}
		if notes.full() {
			notes.more++
			continue
		}
		before := strings.TrimRight(l[:runs[0][0]], " \t")
		after := strings.TrimLeft(l[runs[len(runs)-1][1]:], " \t")
		switch {
		case after == "":
			notes.add("line %d: skipped %s before the hex", n, clipText(before, 60))
		case before == "":
			notes.add("line %d: skipped %s after the hex", n, clipText(after, 60))
		default:
			notes.add("line %d: skipped %s before and %s after the hex", n, clipText(before, 60), clipText(after, 60))
		}
	}
	if err := flush(); err != nil {
		return nil, nil, err
	}
	if badErr != nil {
		return nil, nil, badErr
	}
	if len(frames) == 0 {
		if firstErr != nil {
			return nil, nil, firstErr
		}
		return nil, nil, &hexError{Msg: "no hex digits"}
	}
	text.end(&notes)
	return frames, notes.list(), nil
}

// wholeFrame reports whether digits (hex digits, one a byte) are a whole
// frame: 4 bytes or more, the first 4 counting the rest.
func wholeFrame(digits []byte) bool {
	if len(digits) < 16 || len(digits)%2 != 0 {
		return false
	}
	n, err := strconv.ParseUint(string(digits[:8]), 16, 32)
	return err == nil && int64(n) == int64(len(digits)/2-4)
}

// textLine reports whether l is text, a line that may be skipped: it has
// a word of three letters or more that is not all hex digits ("DEBUG",
// "Sent"), or no letter or digit at all (a ruler of dashes). A line of
// hex with a typo ("00 0g", "zz") is not.
func textLine(l string) bool {
	alnum := false
	for i := 0; i < len(l); {
		j := i
		for j < len(l) && isLetter(l[j]) {
			j++
		}
		if j-i >= 3 && strings.Trim(l[i:j], "abcdefABCDEF") != "" {
			return true
		}
		if j == i {
			alnum = alnum || isDigit(l[i]) || l[i] >= 0x80
			j++
		} else {
			alnum = true
		}
		i = j
	}
	return !alnum
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// isWord reports whether c belongs to a word of text: a hex token next to
// one is part of it ("123e4567-e89b", "10.0.0.5", "rdkafka#producer-1").
func isWord(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '-' || c == '+' || c == '/' || c == '#' || c == '\\' || c >= 0x80
}

// hexToken reads the hex token at l[i:]: digits, after a 0x prefix or
// as \x escapes, an even number of them, with no word character before
// or after (a '.' between two counts as one). It returns the token's end
// and its digits, or end -1.
func hexToken(l string, i int) (end, digits int) {
	if i > 0 && (isWord(l[i-1]) && l[i-1] != '\\' || l[i-1] == '.' && i > 1 && (isLetter(l[i-2]) || isDigit(l[i-2]))) {
		return -1, 0
	}
	j := i
	if l[j] == '\\' {
		for j+3 < len(l)+0 && l[j] == '\\' && (l[j+1] == 'x' || l[j+1] == 'X') && unhex(l[j+2]) >= 0 && unhex(l[j+3]) >= 0 {
			j += 4
			digits += 2
		}
	} else {
		if l[j] == '0' && j+2 < len(l) && (l[j+1] == 'x' || l[j+1] == 'X') && unhex(l[j+2]) >= 0 {
			j += 2
		}
		for j < len(l) && unhex(l[j]) >= 0 {
			j++
			digits++
		}
	}
	if digits == 0 || digits%2 != 0 {
		return -1, 0
	}
	if j < len(l) && (isWord(l[j]) || l[j] == '.' && j+1 < len(l) && (isLetter(l[j+1]) || isDigit(l[j+1]))) {
		return -1, 0
	}
	return j, digits
}

// isSep reports whether c separates the bytes of a run of hex, as
// appendHexDigits skips it.
func isSep(c byte) bool { return c == ' ' || c == '\t' || c == ',' || c == ':' || c == ';' }

// maxFrameStarts bounds the words of hex lineRuns skips at a run's start
// to find a whole frame in it, and the labels it drops.
const maxFrameStarts = 8

// lineRuns returns where the hex on line l is, by ParseHexFrames' rule:
// the runs of hex tokens (hexToken) with separators between them, less
// a leading port or offset and its colon (labelled: "9092: 0000..."), of
// which it picks, when framed, every run that is, or whose end after up
// to maxFrameStarts leading tokens is, a whole frame (frameEnd); else the
// longest run of at least 4 bytes ending the line or 8 before more text.
// Each is [start, end) in l. Its time is linear in the line's length and
// its memory in the runs it returns: a run's tokens are read as they
// are needed, not kept (a line may hold millions).
func lineRuns(l string, framed bool) [][2]int {
	var (
		wholes [][2]int
		best   [2]int
		bestN  int
	)
	consider := func(start, end int) {
		// A port or an offset and its colon before the hex are text.
		for k := 0; k < maxFrameStarts && labelled(l[start:end]); k++ {
			_, te, _, _ := runToken(l, start, end)
			start, _, _, _ = runToken(l, te, end)
		}
		if framed {
			for k, s := 0, start; k < maxFrameStarts; k++ {
				if e, ok := frameEnd(l, s, end); ok {
					wholes = append(wholes, [2]int{s, e})
					return
				}
				_, te, _, _ := runToken(l, s, end)
				var ok bool
				if s, _, _, ok = runToken(l, te, end); !ok {
					break
				}
			}
		}
		total := 0
		for p := start; ; {
			_, te, d, ok := runToken(l, p, end)
			if !ok {
				break
			}
			total, p = total+d, te
		}
		need := 16
		if strings.TrimRight(l[end:], " \t,;:") == "" {
			need = 8
		}
		if total >= need && total > bestN {
			best, bestN = [2]int{start, end}, total
		}
	}
	for i := 0; i < len(l); {
		e, _ := hexToken(l, i)
		if e < 0 {
			i++
			continue
		}
		start, end := i, e
		for {
			j := end
			for j < len(l) && isSep(l[j]) {
				j++
			}
			if j == end || j == len(l) {
				break // no separator after the token, or the line's end
			}
			e, _ := hexToken(l, j)
			if e < 0 {
				break
			}
			end = e
		}
		consider(start, end)
		i = end
	}
	if len(wholes) > 0 {
		return wholes
	}
	if bestN > 0 {
		return [][2]int{best}
	}
	return nil
}

// runToken returns the first token of a run of hex at or after p, before
// end (separators skipped): its start, end and digits; ok is false when
// there is none.
func runToken(l string, p, end int) (s, e, digits int, ok bool) {
	for p < end && isSep(l[p]) {
		p++
	}
	if p >= end {
		return end, end, 0, false
	}
	e, digits = hexToken(l, p)
	if e < 0 {
		return end, end, 0, false
	}
	return p, e, digits, true
}

// frameEnd reports whether the tokens of a run from s to end are a whole
// frame: their first 4 bytes a length, at least 4 (a response's
// correlation ID), that the tokens after make up exactly, up to the last
// or, when the last is one word of 8 bytes or more (a trace ID written
// after the frame), the one before it. It returns the end of the frame's
// last token.
func frameEnd(l string, s, end int) (int, bool) {
	var head []byte
	for p := s; len(head) < 8; {
		ts, te, _, ok := runToken(l, p, end)
		if !ok {
			return 0, false
		}
		head, _ = appendHexDigits(head, l[ts:min(te, ts+24)], 0, 0) // 8 digits are enough
		p = te
	}
	n, err := strconv.ParseUint(string(head[:8]), 16, 32)
	if err != nil || n < 4 {
		return 0, false
	}
	want, have := 2*(int64(n)+4), int64(0)
	for p := s; ; {
		_, te, d, ok := runToken(l, p, end)
		if !ok {
			return 0, false
		}
		if have += int64(d); have == want {
			// The run ends with the frame, or one word of 8 bytes or
			// more follows it (a trace or span ID).
			_, te2, d2, more := runToken(l, te, end)
			if !more {
				return te, true
			}
			if _, _, _, again := runToken(l, te2, end); d2 >= 16 && !again {
				return te, true
			}
			return 0, false
		}
		if have > want {
			return 0, false
		}
		p = te
	}
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
			if dumpStartRE.MatchString(l[j:min(len(l), j+dumpWindow)]) {
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
				if m := dumpStartRE.FindStringSubmatch(l[c:min(len(l), c+dumpWindow)]); m != nil && strings.Trim(m[1], "0") == "" {
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
		default:
			out[i] = l // for parseDump to skip as text, and note
		}
	}
	notes = append(notes, fmt.Sprintf("lines %d-%d: skipped the text before each dump line (%s on line %d)", first+1, last+1, clipText(lines[first][:starts[first]], 100), first+1))
	return out, notes, true
}

// dumpWindow is how much of a line past a place logDumpLines tries it
// reads: a dump line's offset and the spaces before its first byte.
const dumpWindow = 256

// maxLogPrefix is the longest text logDumpLines skips before a dump line.
const maxLogPrefix = 512

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
	sep := func(c byte) bool { return c == ' ' || c == '\t' || c == ':' || c == ',' || c == ';' }
	// The groups, read one at a time (a run may hold millions).
	i := 0
	next := func() (int, int) {
		for i < len(tail) && sep(tail[i]) {
			i++
		}
		s := i
		for i < len(tail) && !sep(tail[i]) {
			i++
		}
		return s, i
	}
	s0, e0 := next()
	if e0 == s0 || e0 >= len(tail) || tail[e0] != ':' {
		return false
	}
	first, groups, short := e0-s0, 1, false
	for {
		s, e := next()
		if e == s {
			break
		}
		groups++
		switch {
		case short: // a shorter group before the last
			return true
		case e-s > first:
			return true
		case e-s < first:
			short = true
		}
	}
	return false
}

// hexRun is 8 or more bytes of hex in text skipped, as bare digits,
// 0x-prefixed or \x-escaped, with up to two separators between bytes: a
// frame's bytes (a SASL password among them) when the hex read was
// another run, or a line of text with bytes in it.
var hexRun = regexp.MustCompile(`(?:(?:0[xX]|\\[xX])?[0-9a-fA-F]{2}[ \t:,;]{0,2}){7}(?:0[xX]|\\[xX])?[0-9a-fA-F]{2}(?:[ \t:,;]{0,2}(?:0[xX]|\\[xX])?[0-9a-fA-F]{2})*`)

// clipText quotes s, text skipped, cut to n bytes, for a message, with
// its runs of hex withheld ("<hex, N bytes>"): skipped text is not what was
// decoded, and its bytes are not shown undecoded (a log line whose hex
// is followed by a hex trace ID quoted the frame, password and all).
// Text that holds what a config value can hold of a credential
// ("password=PW", a URL's userinfo, an Authorization header: a logger's
// prefix may) is withheld whole, unquoted: "<N bytes withheld: ...>".
func clipText(s string, n int) string {
	if protocol.TextHoldsCredential(s) {
		return fmt.Sprintf("<%d bytes withheld: they look like they hold a credential>", len(s))
	}
	s = hexRun.ReplaceAllStringFunc(s, func(h string) string {
		if n := hexDigitsIn(h); n > 0 {
			return fmt.Sprintf("<hex, %d bytes>", n/2)
		}
		return "<hex>"
	})
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}

// parseDump decodes the lines of an offset-prefixed dump, a frame at a
// time: an offset that starts over (0, or the first line's offset) begins
// the next frame. A line that is not a dump line is skipped as text (a
// log line, a heading: noted), unless it is all hex (bytes without an
// offset); the offsets after it must still follow.
func parseDump(lines []string) ([]HexFrame, []string, error) {
	var (
		frames    []HexFrame
		out       []byte
		frameLine int
		first     = -1   // offset of the first frame's first line
		base      = -1   // offset of the frame's first line
		prevLine  []byte // the last data line's bytes, for "*"
		repeat    bool   // a "*" line is pending
		redacted  int    // the line of a kwire -x row whose bytes were withheld
		records   bool   // in kwire -x's decompressed records, until the next frame's heading
		repeated  int    // the bytes "*" lines stood for, in all frames
		notes     noteList
		text      = textBlock{what: "dump bytes"}
	)
	// reach checks that a line at offset off follows the bytes so far,
	// expanding a pending "*" by repeating the previous line.
	reach := func(off, lineNo int) error {
		if off > maxOffset {
			return &hexError{Line: lineNo, Col: 1, Msg: fmt.Sprintf("offset %#x is beyond any dump of a frame", off)}
		}
		if base >= 0 && len(out) > 0 && (off == 0 || off == first) && redacted == 0 {
			// The offset starts over: the next frame (a response after
			// its request).
			frames = append(frames, HexFrame{Data: out, Line: frameLine})
			out, base, prevLine, repeat = nil, -1, nil, false
		}
		if base < 0 {
			base, frameLine = off, lineNo
			if first < 0 {
				first = off
			}
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
				// The bytes "*" lines stand for, in all the text's
				// frames: each frame's first offset resets base.
				if repeated += off - have; repeated > maxRepeat {
					return &hexError{Line: lineNo, Col: 1, Msg: fmt.Sprintf(
						"the \"*\" lines of the dumps would repeat more than %d bytes in all", maxRepeat)}
				}
				out = slices.Grow(out, off-have+len(prevLine)) // at once: a line at a time would double the slice over and over
			}
			for have < off {
				out = append(out, prevLine...)
				have += len(prevLine)
			}
			repeat = false
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
			return nil, nil, &hexError{Line: lineNo, Col: indent + 1, Msg: fmt.Sprintf(
				"the dump leaves out %s bytes here (values are cut at --max-value): rerun kwire read -x with --max-value 0 to decode the frame", m[1])}
		}
		if section.MatchString(l) && len(out) > 0 {
			records = true // decompressed records, not the frame's bytes
			continue
		}
		if frameHeading.MatchString(l) {
			records = false
			text.end(&notes)
			continue
		}
		switch {
		case records || l == "" || strings.HasPrefix(l, "error: ") ||
			strings.HasPrefix(l, "unknown version: ") || strings.HasPrefix(l, "unknown API: "):
			continue
		case l == "*":
			repeat = true
			continue
		}
		if strings.HasPrefix(l, "+") && redacted > 0 {
			// kwire -x after a withheld secret: offsets count from its
			// end, whose length the dump does not give.
			return nil, nil, withheld(redacted)
		}
		if m := offsetOnly.FindStringSubmatch(l); m != nil {
			off, _ := strconv.ParseUint(m[1], 16, 63)
			if err := reach(int(off), lineNo); err != nil {
				return nil, nil, err
			}
			continue
		}
		m := dumpLineRE.FindStringSubmatchIndex(l)
		if m == nil {
			if _, err := appendHexDigits(nil, l, lineNo, indent+1); err == nil {
				return nil, nil, &hexError{Line: lineNo, Col: indent + 1, Msg: "not a dump line (expected an offset, then hex bytes)"}
			}
			text.add(lineNo, l) // a log line, a heading
			continue
		}
		text.end(&notes)
		off, _ := strconv.ParseUint(l[m[2]:m[3]], 16, 63)
		if err := reach(int(off), lineNo); err != nil {
			return nil, nil, err
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
		if j := strings.IndexByte(data, '|'); j >= 0 && hexDigitsIn(data[:j]) >= 0 {
			data = data[:j] // hexdump -C: |ASCII| (a '|' in xxd's or tcpdump's ASCII column is not)
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
			return nil, nil, err
		}
		if len(digits)%2 != 0 {
			return nil, nil, &hexError{Line: lineNo, Col: col, Msg: fmt.Sprintf("odd number of hex digits (%d) on the line", len(digits))}
		}
		prevLine = pairDigits(digits)
		out = append(out, prevLine...)
	}
	if redacted > 0 {
		return nil, nil, withheld(redacted)
	}
	if len(out) > 0 {
		frames = append(frames, HexFrame{Data: out, Line: frameLine})
	}
	if len(frames) == 0 {
		return nil, nil, &hexError{Msg: "no hex digits"}
	}
	text.end(&notes)
	return frames, notes.list(), nil
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
