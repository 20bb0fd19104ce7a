package main

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Plain ASCII output when the locale's character set is not UTF-8
// (LC_ALL=C, POSIX, ISO-8859-1...): kwire's own glyphs become ASCII ("→"
// "->", "×" "x", "…" "...", the swim lanes' "✗" "x", the latency bars
// "▁▂▃▄▅▆▇█" ".:-=+*%#"), and any
// other non-ASCII character, from the capture (a client ID, a record
// value shown as text), is written as a Go escape (\u00e9), so that
// nothing is lost. JSON is left alone: it is UTF-8 by definition (RFC
// 8259). --ascii forces it, --ascii=false turns it off.

// asciiGlyphs are kwire's own non-ASCII characters and their ASCII forms.
var asciiGlyphs = map[rune]string{
	'→': "->", '×': "x", '…': "...", '–': "-", '—': "-", '·': ".", '✗': "x",
	'▁': ".", '▂': ":", '▃': "-", '▄': "=", '▅': "+", '▆': "*", '▇': "%", '█': "#",
	'≤': "<=", '≥': ">=", 'µ': "u",
}

// localeIsUTF8 reads the locale's character set as setlocale(3) would
// choose it: LC_ALL, else LC_CTYPE, else LANG. Unset, the world's default
// is taken to be UTF-8; "C" and "POSIX" are ASCII.
func localeIsUTF8(getenv func(string) string) bool {
	if getenv == nil {
		return true
	}
	loc := ""
	for _, k := range []string{"LC_ALL", "LC_CTYPE", "LANG"} {
		if v := getenv(k); v != "" {
			loc = v
			break
		}
	}
	if loc == "" {
		return true
	}
	l := strings.ToLower(loc)
	return strings.Contains(l, "utf-8") || strings.Contains(l, "utf8")
}

// asciiWriter transliterates UTF-8 to ASCII on its way to w. A character
// split across two writes is held until the rest comes.
type asciiWriter struct {
	w    io.Writer
	part []byte // the start of a split character
	buf  []byte
}

func (a *asciiWriter) Write(p []byte) (int, error) {
	n := len(p)
	a.buf = a.buf[:0]
	if len(a.part) > 0 {
		p = append(a.part, p...)
		a.part = nil
	}
	for len(p) > 0 {
		c := p[0]
		if c < utf8.RuneSelf {
			i := 1
			for i < len(p) && p[i] < utf8.RuneSelf {
				i++
			}
			a.buf = append(a.buf, p[:i]...)
			p = p[i:]
			continue
		}
		if !utf8.FullRune(p) {
			a.part = append([]byte(nil), p...)
			break
		}
		r, size := utf8.DecodeRune(p)
		p = p[size:]
		switch s, ok := asciiGlyphs[r]; {
		case ok:
			a.buf = append(a.buf, s...)
		case r == utf8.RuneError && size == 1:
			a.buf = append(a.buf, `\x`...)
			a.buf = append(a.buf, hexByte(c)...)
		default:
			a.buf = append(a.buf, quotedEscape(r)...)
		}
	}
	if _, err := a.w.Write(a.buf); err != nil {
		return 0, err
	}
	return n, nil
}

// quotedEscape is r's Go escape without quotes (\u00e9, \U0001f600).
func quotedEscape(r rune) string {
	q := strconv.QuoteRuneToASCII(r)
	return q[1 : len(q)-1]
}

func hexByte(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// useASCII wraps s's output streams in asciiWriters when the output is to
// be plain ASCII: --ascii, or a locale that is not UTF-8, and the command
// does not write JSON.
func useASCII(s *ioStreams, force, set, json bool) {
	on := set && force || !set && !localeIsUTF8(s.Getenv)
	if !on || json {
		return
	}
	s.Out = &asciiWriter{w: s.Out}
	s.ErrOut = &asciiWriter{w: s.ErrOut}
}
