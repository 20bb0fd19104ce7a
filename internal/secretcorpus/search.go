package secretcorpus

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// This file finds secrets in kwire's output: as text, as hex (spaced or
// not, either case, across the 8 + 8 split and the lines of a dump) and as
// base64 (standard or URL, at each of the three alignments a value can
// have inside a larger one), by windows short enough that a leak of a
// secret of 16 bytes or more puts a whole window on one line.

// Window sizes of the searches: a leak of a secret (16 bytes at least)
// puts at least this much of it on one line of any output.
const (
	textWindow = 8 // characters of a printable secret
	hexWindow  = 6 // bytes, as hex
	b64Groups  = 2 // base64 groups (of 4 characters) of secret bytes only
)

// Index finds windows of the corpus's secrets, in every encoding,
// in a text in one pass per window length.
type Index struct {
	byLen map[int]map[string]string // needle length → needle → what it is
	lower map[int]map[string]string // hex needles, searched in the lower-cased text
}

// NewIndex indexes secrets.
func NewIndex(secrets []Secret) *Index {
	x := &Index{byLen: map[int]map[string]string{}, lower: map[int]map[string]string{}}
	add := func(m map[int]map[string]string, needle, what string) {
		if m[len(needle)] == nil {
			m[len(needle)] = map[string]string{}
		}
		m[len(needle)][needle] = what
	}
	for _, s := range secrets {
		for _, e := range encodings(s) {
			switch e.kind {
			case "hex", "hex spaced":
				add(x.lower, e.needle, s.Case+": "+e.kind)
			default:
				add(x.byLen, e.needle, s.Case+": "+e.kind)
			}
		}
	}
	return x
}

type encoding struct{ kind, needle string }

// encodings returns the windows of s to search for: of the window sizes
// above, or the whole value when s.Whole.
func encodings(s Secret) []encoding {
	v := s.Value
	tw, hw, bg := textWindow, hexWindow, b64Groups
	if s.Whole {
		tw, hw, bg = len(v), len(v), max(1, (len(v)-2)/3)
	}
	var out []encoding
	if s.Text {
		for i := 0; i+tw <= len(v); i++ {
			out = append(out, encoding{"text", string(v[i : i+tw])})
		}
	}
	for i := 0; i+hw <= len(v); i++ {
		w := v[i : i+hw]
		out = append(out, encoding{"hex", hex.EncodeToString(w)})
		out = append(out, encoding{"hex spaced", spacedHex(w)})
	}
	for _, e := range base64Windows(v, bg) {
		out = append(out, encoding{"base64", e})
		out = append(out, encoding{"base64url", strings.NewReplacer("+", "-", "/", "_").Replace(e)})
	}
	return out
}

func spacedHex(b []byte) string {
	var sb strings.Builder
	for i, c := range b {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%02x", c)
	}
	return sb.String()
}

func windowGroups(s Secret) int {
	if s.Whole {
		return max(1, (len(s.Value)-2)/3)
	}
	return b64Groups
}

// base64Windows returns, for each of the three alignments the secret can
// have inside a larger base64 value, the windows of b64Groups whole
// groups that encode the secret's bytes alone.
func base64Windows(v []byte, groupsPerWindow int) []string {
	var out []string
	for a := 0; a < 3; a++ {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, a), v...))
		first := 0
		if a > 0 {
			first = 1 // the first group mixes in the bytes before
		}
		groups := (a + len(v)) / 3 // whole groups; a partial last one mixes in the bytes after
		for g := first; g+groupsPerWindow <= groups; g++ {
			out = append(out, enc[4*g:4*(g+groupsPerWindow)])
		}
	}
	return out
}

// normalize lower-cases text and collapses whitespace runs to one space,
// so that hex split 8 + 8 by a dump, or across lines, still matches.
func normalize(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(s)), " ")
}

// Find returns what of the secrets out shows, at most ten findings.
func (x *Index) Find(out string) []string {
	var found []string
	seen := map[string]bool{}
	scan := func(text string, m map[int]map[string]string) {
		for n, needles := range m {
			for i := 0; i+n <= len(text) && len(found) < 10; i++ {
				if what, ok := needles[text[i:i+n]]; ok && !seen[what] {
					seen[what] = true
					lo, hi := max(0, i-60), min(len(text), i+n+60)
					found = append(found, fmt.Sprintf("  %s: %q in …%s…", what, text[i:i+n], text[lo:hi]))
				}
			}
		}
	}
	scan(out, x.byLen)
	scan(normalize(out), x.lower)
	return found
}

// Present returns the needles of x found in out.
func (x *Index) Present(out string) map[string]bool {
	found := map[string]bool{}
	scan := func(text string, m map[int]map[string]string) {
		for n, needles := range m {
			for i := 0; i+n <= len(text); i++ {
				if _, ok := needles[text[i:i+n]]; ok {
					found[text[i:i+n]] = true
				}
			}
		}
	}
	scan(out, x.byLen)
	scan(normalize(out), x.lower)
	return found
}

// AppearsWhole reports whether every window of s, in one of its
// encodings (for base64, at one alignment), is present.
func AppearsWhole(present map[string]bool, s Secret) bool {
	families := map[string][]string{}
	for _, e := range encodings(s) {
		if !strings.HasPrefix(e.kind, "base64") {
			families[e.kind] = append(families[e.kind], e.needle)
		}
	}
	for a := 0; a < 3; a++ {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, a), s.Value...))
		for _, w := range base64Windows(s.Value, windowGroups(s)) {
			if strings.Contains(enc, w) {
				families["base64 "+strconv.Itoa(a)] = append(families["base64 "+strconv.Itoa(a)], w)
			}
		}
	}
	for _, ws := range families {
		all := len(ws) > 0
		for _, w := range ws {
			all = all && present[w]
		}
		if all {
			return true
		}
	}
	return false
}
