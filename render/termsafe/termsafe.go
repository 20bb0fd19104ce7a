// Package termsafe keeps what a capture says from acting on the terminal
// that shows it.
//
// Topic names, group, member, client and transactional IDs, reasons,
// hosts and record values come from the wire, and Kafka limits the
// characters of few of them (a topic name is [a-zA-Z0-9._-], a group ID
// anything). Written raw, an ESC starts a terminal control sequence (set
// the window title, move the cursor, rewrite what is on the screen,
// OSC 52 writes the clipboard), a carriage return or a newline makes a
// line that kwire did not write, and a C1 control (U+0080 to U+009F, or
// the byte 0x9b in an 8-bit terminal) is a control sequence too.
//
// Two layers, so that nothing depends on every renderer remembering:
//
//   - Quote and Escape, for renderers, at the point where a value from
//     the wire enters text: Quote gives a value that is not plain
//     printable text in Go's quoted form ("a\x1bb", as the one-line
//     output quotes client IDs), Escape writes its unprintable characters
//     as Go escapes in place (for text composed around such values);
//   - Writer, on the command's output stream, as a net under them: it
//     lets through text, newlines, tabs and the colour sequences kwire
//     writes itself (SGR, with the parameters of Colors), and writes every
//     other control character, C1 control and byte that is not UTF-8 as
//     an escape: Go's (\x1b, \u009b, \xff) for text, JSON's (\u001b) in
//     JSON output.
//
// What is unsafe: the C0 controls (U+0000 to U+001F) but where a layer
// allows tab and newline, DEL (U+007F), the C1 controls (U+0080 to
// U+009F), bytes that are not UTF-8, and, for Quote and Escape, every
// other character Go does not count as printable (unicode.IsPrint: the
// bidirectional overrides U+202A to U+202E among them, which reorder what
// is shown; the renderers quote or escape the values they write, Writer
// lets such characters through, as JSON and record values may hold them).
package termsafe

import (
	"encoding/binary"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Safe reports whether s is printable text: valid UTF-8, every
// character printable (unicode.IsPrint), so no control character at all,
// tab and newline included. Printable ASCII is checked 8 bytes at a time.
func Safe(s string) bool {
	i := 0
	for len(s)-i >= 8 {
		if notPrintASCII(binary.LittleEndian.Uint64([]byte(s[i:i+8]))) != 0 {
			break
		}
		i += 8
	}
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !unicode.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}

// Quote returns s as it is when Safe, else in Go's double-quoted form
// (strconv.Quote: control characters, non-printable characters and bytes
// that are not UTF-8 as escapes).
func Quote(s string) string {
	if Safe(s) {
		return s
	}
	return strconv.Quote(s)
}

// AppendQuote appends Quote(s) to b.
func AppendQuote(b []byte, s string) []byte {
	if Safe(s) {
		return append(b, s...)
	}
	return strconv.AppendQuote(b, s)
}

// Escape returns s with every character that is not printable written as
// its Go escape (\n, \x1b, \u202e, \xff for a byte that is not UTF-8),
// without quotes; s itself when Safe.
func Escape(s string) string {
	if Safe(s) {
		return s
	}
	return string(AppendEscape(make([]byte, 0, len(s)+16), s))
}

// AppendEscape appends Escape(s) to b.
func AppendEscape(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = appendHexByte(b, c)
		case c < utf8.RuneSelf || !unicode.IsPrint(r):
			q := strconv.QuoteRune(r) // '\x1b', '\u202e'
			b = append(b, q[1:len(q)-1]...)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}

func appendHexByte(b []byte, c byte) []byte {
	const digits = "0123456789abcdef"
	return append(b, '\\', 'x', digits[c>>4], digits[c&15])
}

// notPrintASCII is zero when the 8 bytes of x are all printable ASCII
// (0x20 to 0x7e) (Hacker's Delight's "has less" and "has more" tests).
func notPrintASCII(x uint64) uint64 {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	return ((x-ones*0x20)&^x | (x + ones) | x) & high
}
