package termsafe

import (
	"encoding/binary"
	"io"
	"unicode/utf8"
)

// Writer is the net under the renderers (see the package documentation):
// it passes what it is given to W, but for the characters a terminal
// would act on, which it writes as escapes. A character or colour
// sequence split across two writes is held until the rest comes; Flush
// writes what is held when the output ends.
type Writer struct {
	W io.Writer
	// JSON writes escapes as JSON does (\u001b), for output that is JSON
	// text: a JSON string never holds a raw control character (RFC 8259
	// escapes them), so in JSON this changes only C1 controls and DEL,
	// which JSON allows raw and terminals read as controls, into escapes
	// that mean the same characters.
	JSON bool
	// Colors lets kwire's own colour sequences through: ESC [ params m,
	// every param one of the SGR parameters of Colors.
	Colors bool

	held []byte // the start of a character or sequence split across writes
	buf  []byte
}

// sgrParams are the SGR parameters kwire's colours use (fatih/color, by
// role in render and render/statsview): reset, bold, faint, normal
// intensity, the foreground colours red to cyan and the default
// foreground. Black, white, the backgrounds, reverse, conceal and
// blinking are not among them: a sequence with one is escaped, so a
// value cannot hide or disguise what follows it.
var sgrParams = map[string]bool{
	"0": true, "1": true, "2": true, "22": true,
	"31": true, "32": true, "33": true, "34": true, "35": true, "36": true, "39": true,
}

// maxSGR bounds a colour sequence kwire writes: ESC [ 35;1 m is 6 bytes.
const maxSGR = 16

// sgrLen returns the length of the allowed colour sequence at the start
// of p (which starts with ESC), 0 when p does not start with one, or -1
// when p ends before it could tell.
func sgrLen(p []byte) int {
	if len(p) < 2 {
		return -1
	}
	if p[1] != '[' {
		return 0
	}
	start := 2
	for i := 2; i < len(p) && i < maxSGR; i++ {
		switch c := p[i]; {
		case c >= '0' && c <= '9':
		case c == ';' || c == 'm':
			if !sgrParams[string(p[start:i])] {
				return 0
			}
			if c == 'm' {
				return i + 1
			}
			start = i + 1
		default:
			return 0
		}
	}
	if len(p) < maxSGR {
		return -1
	}
	return 0
}

// Write writes p, escaped, to W. It returns len(p) when W took it all.
func (w *Writer) Write(p []byte) (int, error) {
	n := len(p)
	if len(w.held) > 0 {
		p = append(w.held, p...)
		w.held = nil
	}
	out, rest := w.escape(p)
	if len(rest) > 0 {
		w.held = append([]byte(nil), rest...)
	}
	if len(out) > 0 {
		if _, err := w.W.Write(out); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Flush writes what is held (the unfinished end of the output), escaped:
// a colour sequence or a character that did not end is not one.
func (w *Writer) Flush() error {
	var out []byte
	for p := w.held; len(p) > 0; {
		w.held = nil
		out = w.appendByte(out, p[0]) // what was held starts undecided
		done, rest := w.escape(p[1:])
		out = append(out, done...)
		p = rest
	}
	w.held = nil
	if len(out) == 0 {
		return nil
	}
	_, err := w.W.Write(out)
	return err
}

// escape returns p escaped and the end of p that cannot be decided yet.
// When nothing in p needs an escape, the result is p itself: runs that
// need none are copied whole, or not at all.
func (w *Writer) escape(p []byte) (out, rest []byte) {
	w.buf = w.buf[:0]
	copied := 0 // p[:copied] is in w.buf, escaped
	escaped := false
	// flush copies p[copied:i] as it is, once an escape is to follow.
	flush := func(i int) {
		w.buf = append(w.buf, p[copied:i]...)
		copied, escaped = i, true
	}
	i := 0
	for {
		i += w.clean(p[i:])
		if i == len(p) {
			break
		}
		c := p[i]
		switch {
		case c == 0x1b && w.Colors:
			k := sgrLen(p[i:])
			if k < 0 {
				return w.finish(p, copied, i, escaped), p[i:]
			}
			if k > 0 {
				i += k
				continue
			}
			flush(i)
			w.buf = w.appendByte(w.buf, c)
			i++
		case c < utf8.RuneSelf:
			flush(i)
			w.buf = w.appendByte(w.buf, c)
			i++
		default:
			if !utf8.FullRune(p[i:]) {
				return w.finish(p, copied, i, escaped), p[i:]
			}
			r, size := utf8.DecodeRune(p[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				flush(i)
				w.buf = w.appendByte(w.buf, c)
			case r < 0xa0: // C1
				flush(i)
				w.buf = w.appendRune(w.buf, r)
			case w.JSON && bidi(r):
				// JSON allows them raw; escaped they mean the same
				// characters and no longer reorder what a terminal shows.
				flush(i)
				w.buf = appendJSONEscape(w.buf, r)
			default:
				i += size
				continue
			}
			i += size
		}
		copied = i
	}
	return w.finish(p, copied, len(p), escaped), nil
}

// finish returns the output of escape for p[:end]: p itself when nothing
// was escaped, else w.buf with the rest from copied.
func (w *Writer) finish(p []byte, copied, end int, escaped bool) []byte {
	if !escaped {
		return p[:end]
	}
	w.buf = append(w.buf, p[copied:end]...)
	return w.buf
}

// appendByte appends the escape of a control byte or of a byte that is
// not UTF-8.
func (w *Writer) appendByte(b []byte, c byte) []byte {
	if w.JSON {
		if c >= utf8.RuneSelf {
			return append(b, `\ufffd`...)
		}
		return w.appendRune(b, rune(c))
	}
	return appendHexByte(b, c)
}

// bidi reports whether r is one of Unicode's bidirectional formatting
// characters (UAX #9: the marks U+061C, U+200E and U+200F, the embeddings,
// overrides and isolates U+202A to U+202E and U+2066 to U+2069), which
// reorder the text around them as it is shown.
func bidi(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// appendJSONEscape appends r as a JSON \uXXXX escape (r below U+10000).
func appendJSONEscape(b []byte, r rune) []byte {
	const digits = "0123456789abcdef"
	return append(b, '\\', 'u', digits[r>>12&15], digits[r>>8&15], digits[r>>4&15], digits[r&15])
}

// appendRune appends the escape of control character r (below U+00A0).
func (w *Writer) appendRune(b []byte, r rune) []byte {
	const digits = "0123456789abcdef"
	if !w.JSON && r < 0x80 {
		return appendHexByte(b, byte(r))
	}
	return append(b, '\\', 'u', '0', '0', digits[r>>4&15], digits[r&15])
}

// clean returns the length of the prefix of p that needs no escape and
// no look: printable ASCII, newline and tab; it stops at the first other
// byte (a control, or a byte above
// 0x7f, which the slow path decodes: most are characters). Eight bytes at
// a time (dirty; in JSON, where a newline ends each line only, any
// control character stops the eight-byte test); a word that holds a
// newline or a tab is looked at a byte at a time, and the eight-byte
// test takes up again after it.
func (w *Writer) clean(p []byte) int {
	i := 0
	for {
		if w.JSON {
			// JSON's output is mostly long runs (record values): four
			// words, one test.
			for len(p)-i >= 32 {
				q := p[i : i+32]
				if dirtyJSON(binary.LittleEndian.Uint64(q))|dirtyJSON(binary.LittleEndian.Uint64(q[8:]))|
					dirtyJSON(binary.LittleEndian.Uint64(q[16:]))|dirtyJSON(binary.LittleEndian.Uint64(q[24:])) != 0 {
					break
				}
				i += 32
			}
			for len(p)-i >= 8 && dirtyJSON(binary.LittleEndian.Uint64(p[i:])) == 0 {
				i += 8
			}
		} else {
			for len(p)-i >= 8 && dirty(binary.LittleEndian.Uint64(p[i:])) == 0 {
				i += 8
			}
		}
		for end := min(i+8, len(p)); i < end; i++ {
			if c := p[i]; c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
				return i
			}
		}
		if i == len(p) {
			return i
		}
	}
}

const (
	ones = 0x0101010101010101
	low7 = 0x7f7f7f7f7f7f7f7f
	high = 0x8080808080808080
)

// dirtyJSON has the high bit set of every byte of x that is a control
// character, DEL or above 0x7f.
func dirtyJSON(x uint64) uint64 { return (^(x&low7 + ones*0x60) | (x&low7 + ones) | x) & high }

// dirty has the high bit set of every byte of x that clean stops at: a
// control character other than newline (a tab stops it too, and is then
// let through one byte at a time), DEL, or a byte above 0x7f. The tests are
// exact per byte: no carry crosses into the next byte, as the low seven
// bits are added to at most 0x7f (Hacker's Delight, 6-1).
func dirty(x uint64) uint64 {
	below := ^(x&low7 + ones*0x60) // low seven bits below 0x20
	y := x ^ (ones * '\n')
	nl := ^((y&low7 + low7) | y) // newline
	del := x&low7 + ones         // low seven bits 0x7f
	return (below&^nl | del | x) & high
}
