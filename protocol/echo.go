package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"regexp"
	"strings"
)

// This file withholds a broker's error message that repeats a secret of
// the request it answers. Secret-ness is the request's: the values the
// decoder withheld from it (secrets.go, sasl.go: a PLAIN password, a
// SCRAM proof, a bearer token, a GSSAPI or unparsed token whole, a
// sensitive config value, a span not decoded). A broker's
// SaslAuthenticate ErrorMessage written by a custom callback handler
// ("Invalid credentials: \x00alice\x00hunter2"), or a config validator's
// ConfigException ("Invalid value hunter2 for configuration
// my.db.password") in an AlterConfigs, IncrementalAlterConfigs or
// CreateTopics response, would otherwise show the credential the
// request's redaction hid.

// echoWindow is the shortest run of a withheld value's bytes that, found
// in an error message, withholds it when the value is not there whole: a
// token quoted in part. Shorter runs are no sign: a password
// "capgen-wrong-password" shares "password" with the broker's own
// "Invalid username or password". (16 let a message quoting the first 15
// bytes of a 23-byte password through.)
const echoWindow = 12

// echoMaxMessage is the longest error message searched: past it (64 KiB
// of a broker's error text, beside a request holding secrets) the message
// is withheld without searching.
const echoMaxMessage = 64 << 10

// echoMaxValues bounds the withheld values of one request looked for:
// past it every error message of the response is withheld.
const echoMaxValues = 256

// EchoNote is the note of a value withheld by WithholdEchoes.
const EchoNote = "withheld: it repeats a secret of the request (--show-secrets shows it)"

// WithholdEchoes withholds (marks FlagRedacted, value emptied, Note
// EchoNote) every error message (RoleErrorMessage) of resp, the response
// to req, and every part shown of a SASL token in it, that holds a value
// the decoder withheld from req's frame whole, or a run of echoWindow of
// its bytes (echoes), and returns how many it withheld. Nothing is done
// when either tree is nil or req withheld nothing (a decoder with
// ShowSecrets withholds nothing).
func WithholdEchoes(req, resp *Tree) int {
	if req == nil || resp == nil || req.Root == nil || resp.Root == nil || len(req.Spaces) == 0 {
		return 0
	}
	var vals [][]byte
	over := false
	collectWithheld(req.Root, req.Spaces[0].Data, &vals, &over, 0)
	if len(vals) == 0 && !over {
		return 0
	}
	n := 0
	withholdEchoing(resp.Root, nil, vals, over, &n, 0)
	return n
}

// collectWithheld appends to vals the bytes of the withheld values under
// n in frame (space 0): the innermost nodes marked FlagRedacted, less
// their length prefix.
func collectWithheld(n *Node, frame []byte, vals *[][]byte, over *bool, depth int) {
	if n == nil || depth > 4*maxDepth || *over {
		return
	}
	if n.Flags&FlagRedacted != 0 {
		inner := false
		for _, c := range n.Children {
			if c.Flags&FlagRedacted != 0 {
				inner = true
				break
			}
		}
		if !inner {
			if n.Space != 0 || n.Off < 0 || n.End() > len(frame) {
				return
			}
			v := withoutPrefix(n.Type, frame[n.Off:n.End()])
			if len(v) == 0 {
				return
			}
			if len(*vals) >= echoMaxValues {
				*over = true
				return
			}
			*vals = append(*vals, v)
			return
		}
	}
	for _, c := range n.Children {
		collectWithheld(c, frame, vals, over, depth+1)
	}
}

// withoutPrefix returns the value of span b, a field of wire type typ
// (wireTypeName), without its length prefix; other spans (a SASL part, a
// span not decoded) are their value.
func withoutPrefix(typ string, b []byte) []byte {
	var p int
	switch {
	case strings.HasPrefix(typ, "compact_"):
		_, k := binary.Uvarint(b)
		if k <= 0 {
			return b
		}
		p = k
	case typ == "string" || typ == "nullable_string":
		p = 2
	case typ == "bytes" || typ == "nullable_bytes":
		p = 4
	}
	if p > len(b) {
		return nil
	}
	return b[p:]
}

// withholdEchoing withholds the error messages under n, and the parts of
// a SASL token the broker sent (an OAUTHBEARER error's JSON, a SCRAM
// server-first), that echo vals (every one when all); parent is n's.
func withholdEchoing(n, parent *Node, vals [][]byte, all bool, count *int, depth int) {
	if n == nil || depth > 4*maxDepth {
		return
	}
	msg := n.Field != nil && n.Field.Role == RoleErrorMessage
	part := n.Type == "sasl" && parent != nil
	if n.Kind == KindString && (msg || part) && n.Flags&(FlagNull|FlagRedacted) == 0 && n.Str != "" {
		if all || len(n.Str) > echoMaxMessage || echoes(n.Str, vals) {
			withhold(n)
			n.Note = EchoNote
			if part {
				parent.Flags |= FlagRedacted // as a token with a secret part is (saslParts)
			}
			*count++
		}
		return
	}
	for _, c := range n.Children {
		withholdEchoing(c, n, vals, all, count, depth+1)
	}
}

// echoes reports whether msg holds a value of vals whole, or a run of
// echoWindow of its bytes (at every offset of a value of up to 1 KiB; at
// every eighth, and the last, of a longer one: a run of echoWindow+7
// bytes is always found). The message's runs are put in a set once (msg
// is at most echoMaxMessage bytes), so that a long value costs a lookup
// per run looked for.
//
// The message is searched as written, ASCII case folded (values too), and
// in the forms a message quotes bytes in: percent-decoded, and each run
// of base64 (standard or URL alphabet, at each of its first four
// offsets) or of 16 hex digits or more, decoded: "bad: TEVBS3B3..." (the
// password's base64), the token's hex, "LEAKPW-..." upper-cased showed
// the password before.
func echoes(msg string, vals [][]byte) bool {
	lvals := make([][]byte, len(vals))
	for i, v := range vals {
		lvals[i] = asciiLower(v)
	}
	for _, f := range echoForms(msg) {
		if echoesIn(asciiLower(f), lvals) {
			return true
		}
	}
	return false
}

// asciiLower returns b with ASCII letters in lower case (a copy).
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

var (
	echoBase64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{12,}={0,2}`)
	echoHexRun    = regexp.MustCompile(`(?:[0-9A-Fa-f]{2}[ :]?){8,}`)
)

// echoForms returns msg and the bytes it quotes encoded (echoes); at
// most 256 runs of each kind are decoded.
func echoForms(msg string) [][]byte {
	forms := [][]byte{[]byte(msg)}
	if strings.IndexByte(msg, '%') >= 0 {
		if d := percentDecode(msg); d != msg {
			forms = append(forms, []byte(d))
		}
	}
	for _, r := range echoHexRun.FindAllString(msg, 256) {
		h := strings.NewReplacer(" ", "", ":", "").Replace(r)
		if b, err := hex.DecodeString(h[:len(h)&^1]); err == nil {
			forms = append(forms, b)
		}
	}
	for _, r := range echoBase64Run.FindAllString(msg, 256) {
		r = strings.TrimRight(r, "=")
		enc := base64.RawStdEncoding
		if strings.ContainsAny(r, "-_") {
			enc = base64.RawURLEncoding
		}
		for off := 0; off < 4 && off < len(r); off++ {
			t := r[off:]
			if len(t)%4 == 1 {
				t = t[:len(t)-1]
			}
			if b, err := enc.DecodeString(t); err == nil {
				forms = append(forms, b)
			}
		}
	}
	return forms
}

// echoesIn is echoes for one form m of the message.
func echoesIn(m []byte, vals [][]byte) bool {
	var runs map[[echoWindow]byte]struct{}
	found := func(w []byte) bool {
		if runs == nil {
			runs = make(map[[echoWindow]byte]struct{}, min(len(m)-echoWindow+1, 1024))
			for i := 0; i+echoWindow <= len(m); i++ {
				runs[[echoWindow]byte(m[i:])] = struct{}{}
			}
		}
		_, ok := runs[[echoWindow]byte(w)]
		return ok
	}
	for _, v := range vals {
		if bytes.Contains(m, v) {
			return true
		}
		if len(v) <= echoWindow || len(m) < echoWindow {
			continue
		}
		step := 1
		if len(v) > 1<<10 {
			step = 8
		}
		for i := 0; i+echoWindow <= len(v); i += step {
			if found(v[i:]) {
				return true
			}
		}
		if found(v[len(v)-echoWindow:]) {
			return true
		}
	}
	return false
}
