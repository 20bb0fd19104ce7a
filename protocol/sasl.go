package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// This file splits SASL tokens into their parts and says which parts are
// secrets. Tokens travel in SaslAuthenticateRequest/Response AuthBytes
// (KIP-152) and, after a SaslHandshake v0, as raw length-prefixed frames
// (KIP-43). The mechanisms and their messages:
//
//	PLAIN (RFC 4616)        client: [authzid] NUL username NUL password
//	                        broker: empty
//	SCRAM-SHA-256/512       client-first: gs2-header n=user,r=cnonce[,ext]
//	(RFC 5802, RFC 7677;    broker-first: [m=..,]r=nonce,s=salt,i=count[,ext]
//	 KIP-84; delegation     client-final: c=binding,r=nonce[,ext],p=proof
//	 tokens KIP-48:         broker-final: v=signature | e=error [,ext]
//	 tokenauth=true)
//	OAUTHBEARER (RFC 7628,  client: gs2-header ^A key=value^A ... ^A (auth, host,
//	 KIP-255, KIP-342)              port, and SASL extensions); a lone ^A after an error
//	                        broker: empty, or a JSON error object
//	GSSAPI (RFC 4752)       Kerberos tokens both ways
//
// Secrets: the PLAIN password, the SCRAM client proof p= and server
// signature v= (each, with the salt, iteration count and nonces that are
// not secret, would let an eavesdropper test password guesses offline),
// the OAUTHBEARER auth value (the bearer token) and the values of SASL
// extensions kwire does not know (they are the client's to define;
// SCRAM's reserved m= too). A token that is not a well-formed message of
// its mechanism (every part of the grammar of its RFC, nothing before or
// after: a length field too large makes a token swallow the next frame,
// and a lenient split would show that frame's password in a part that is
// not secret), a GSSAPI token, a non-empty token of any other mechanism
// (AWS_MSK_IAM, a vendor's) and anything kwire cannot tell (a token of an
// unknown mechanism that two mechanisms could be, or none) is withheld
// whole: SASLToken.Withheld.
//
// What is not secret, and shown: user names, authorization ids, the
// delegation token's ID (a SCRAM user name with tokenauth=true: Kafka
// lists token IDs in DescribeDelegationToken; the HMAC is the password),
// nonces, the salt and the iteration count of a SCRAM server-first
// message (the broker sends them, before any proof, to whoever names the
// user), channel bindings, and the broker's errors.

// SASLPart is one field of a SASL token, as split by ParseSASLToken.
type SASLPart struct {
	// Name is the part's name: PLAIN "authzid", "username", "password";
	// SCRAM "gs2Header", then the attributes by RFC 5802's names
	// ("username", "nonce", "salt", "iterations", "channelBinding",
	// "proof", "verifier", "error", "reserved", "authzid"), an extension by
	// its key ("tokenauth"); OAUTHBEARER "gs2Header", then each key
	// ("auth", "host", "port", an extension's key); the broker's error
	// "error".
	Name   string
	Off    int    // offset of the value in the token
	Len    int    // length of the value in bytes
	Value  string // the value's text
	Secret bool   // the value is a secret (see the file comment)
}

// SASLMessage says which message of its mechanism a token is.
type SASLMessage uint8

// SASL messages.
const (
	SASLNotParsed        SASLMessage = iota // not recognised: withheld whole
	SASLEmpty                               // an empty token (PLAIN's and OAUTHBEARER's success, a SCRAM-less broker reply)
	SASLPlain                               // RFC 4616 client message
	SASLScramClientFirst                    // RFC 5802 client-first-message
	SASLScramServerFirst                    // RFC 5802 server-first-message
	SASLScramClientFinal                    // RFC 5802 client-final-message
	SASLScramServerFinal                    // RFC 5802 server-final-message
	SASLOAuthClient                         // RFC 7628 client initial response
	SASLOAuthClientAck                      // RFC 7628 the client's lone ^A after a broker error
	SASLOAuthServerError                    // RFC 7628 the broker's JSON error
	SASLGSSAPI                              // a Kerberos token (RFC 4752): withheld whole
)

var saslMessageNames = [...]string{
	SASLNotParsed:        "not parsed",
	SASLEmpty:            "empty",
	SASLPlain:            "PLAIN",
	SASLScramClientFirst: "SCRAM client-first",
	SASLScramServerFirst: "SCRAM server-first",
	SASLScramClientFinal: "SCRAM client-final",
	SASLScramServerFinal: "SCRAM server-final",
	SASLOAuthClient:      "OAUTHBEARER client response",
	SASLOAuthClientAck:   "OAUTHBEARER client ack",
	SASLOAuthServerError: "OAUTHBEARER error",
	SASLGSSAPI:           "GSSAPI token",
}

// String names the message ("SCRAM client-final").
func (m SASLMessage) String() string {
	if int(m) < len(saslMessageNames) {
		return saslMessageNames[m]
	}
	return "SASLMessage(?)"
}

// SASLToken is a SASL token split by ParseSASLToken.
type SASLToken struct {
	Message SASLMessage
	// Parts are the token's fields in order, nil when Withheld. Bytes
	// between them (separators, attribute names) belong to no part.
	Parts []SASLPart
	// Withheld says that no part of the token may be shown: it is a
	// secret whole (GSSAPI) or could not be parsed. Reason says why, in
	// words fit for a note ("not a SCRAM-SHA-256 client message").
	Withheld bool
	Reason   string
}

// HasSecret reports whether the token holds a secret: it is withheld, or
// one of its parts is a secret.
func (t SASLToken) HasSecret() bool {
	if t.Withheld {
		return true
	}
	for _, p := range t.Parts {
		if p.Secret {
			return true
		}
	}
	return false
}

// ParseSASLToken splits b, a SASL token sent by the client (fromClient)
// or by the broker, as a message of mechanism mech (SaslHandshake's
// Mechanism: "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER",
// "GSSAPI", ...; case does not matter). A token is split only when every
// part of it matches its mechanism's grammar exactly (the RFCs' ABNF:
// see plainToken, scramToken, oauthToken); anything else is withheld
// whole, so that bytes a length field too large swallowed (a later
// frame's password) never land in a part that is shown.
//
// When mech is empty (the handshake was not captured, or kwire decode),
// every mechanism is tried (guessToken): the token is split only when
// exactly one mechanism claims it, by its grammar or by its shape, and
// that mechanism's grammar accepts it; a token two mechanisms could be
// (two NULs, as PLAIN has, in an OAUTHBEARER message) or none is
// withheld, with a reason that says so. An empty token is SASLEmpty
// whatever the mechanism.
func ParseSASLToken(mech string, fromClient bool, b []byte) SASLToken {
	if len(b) == 0 {
		return SASLToken{Message: SASLEmpty}
	}
	m := strings.ToUpper(mech)
	switch {
	case m == "":
		return guessToken(fromClient, b)
	case m == "PLAIN":
		return plainToken(fromClient, b)
	case strings.HasPrefix(m, "SCRAM-"):
		return scramToken(m, fromClient, b)
	case m == "OAUTHBEARER":
		return oauthToken(fromClient, b)
	case m == "GSSAPI":
		return gssapiToken()
	}
	return withheldToken("a token of the " + mech + " mechanism, which kwire does not parse")
}

func withheldToken(reason string) SASLToken {
	return SASLToken{Message: SASLNotParsed, Withheld: true, Reason: reason}
}

func gssapiToken() SASLToken {
	return SASLToken{Message: SASLGSSAPI, Withheld: true, Reason: "a GSSAPI (Kerberos) token"}
}

// saslGuess is a mechanism family guessToken tries: claims says whether
// a token has the family's shape (what a message of it starts with or
// must hold, well-formed or not); parse is the family's strict parser.
type saslGuess struct {
	name   string
	claims func(fromClient bool, b []byte) bool
	parse  func(fromClient bool, b []byte) SASLToken
}

var saslGuesses = [...]saslGuess{
	{"PLAIN", func(c bool, b []byte) bool { return c && bytes.IndexByte(b, 0) >= 0 }, plainToken},
	{"SCRAM", scramShape, func(c bool, b []byte) SASLToken { return scramToken("SCRAM-", c, b) }},
	{"OAUTHBEARER", oauthShape, oauthToken},
	{"GSSAPI", func(c bool, b []byte) bool { return b[0] == 0x60 }, func(bool, []byte) SASLToken { return gssapiToken() }},
}

// scramShape: a SCRAM client message starts with "c=", or with a GS2
// header and "n=" or "m="; a broker message with "r=", "m=", "v=" or
// "e=".
func scramShape(fromClient bool, b []byte) bool {
	if fromClient {
		n := gs2HeaderLen(b, true)
		return bytes.HasPrefix(b, []byte("c=")) || n > 0 && (bytes.HasPrefix(b[n:], []byte("n=")) || bytes.HasPrefix(b[n:], []byte("m=")))
	}
	return len(b) >= 2 && b[1] == '=' && bytes.IndexByte([]byte("rmve"), b[0]) >= 0
}

// oauthShape: an OAUTHBEARER client message is a lone ^A or starts with a
// GS2 header flag and holds a ^A; a broker message is JSON.
func oauthShape(fromClient bool, b []byte) bool {
	if fromClient {
		return len(b) == 1 && b[0] == kvsep || gs2FlagShape(b) && bytes.IndexByte(b, kvsep) >= 0
	}
	return b[0] == '{'
}

// gs2FlagShape reports whether b starts like a GS2 header ("n,", "y,",
// "p=").
func gs2FlagShape(b []byte) bool {
	return bytes.HasPrefix(b, []byte("n,")) || bytes.HasPrefix(b, []byte("y,")) || bytes.HasPrefix(b, []byte("p="))
}

// guessToken parses b, a token of a mechanism kwire was not told, when
// exactly one mechanism family claims it (by its shape or its grammar)
// and that family's grammar accepts it; it withholds b otherwise.
func guessToken(fromClient bool, b []byte) SASLToken {
	var claimed []string
	var t SASLToken
	for _, g := range saslGuesses {
		p := g.parse(fromClient, b)
		if p.Withheld && !g.claims(fromClient, b) {
			continue
		}
		claimed = append(claimed, g.name)
		t = p
	}
	switch len(claimed) {
	case 0:
		return withheldToken("a token of a mechanism kwire cannot tell (the SaslHandshake was not captured)")
	case 1:
		return t
	}
	return withheldToken("a token that could be " + strings.Join(claimed[:len(claimed)-1], ", ") + " or " + claimed[len(claimed)-1] +
		" (the SaslHandshake was not captured)")
}

// plainToken splits an RFC 4616 message (section 2):
//
//	message = [authzid] UTF8NUL authcid UTF8NUL passwd
//	authcid = 1*SAFE, authzid = 1*SAFE, passwd = 1*SAFE
//	SAFE    = any UTF-8 encoded character but NUL
//
// Exactly two NULs, a user name and a password, all of it UTF-8; a
// broker's PLAIN token is empty.
func plainToken(fromClient bool, b []byte) SASLToken {
	if !fromClient {
		return withheldToken("a PLAIN broker token should be empty")
	}
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return withheldToken("not a PLAIN message (no NUL)")
	}
	j := bytes.IndexByte(b[i+1:], 0)
	if j < 0 {
		return withheldToken("not a PLAIN message (one NUL)")
	}
	j += i + 1
	switch {
	case bytes.IndexByte(b[j+1:], 0) >= 0:
		return withheldToken("not a PLAIN message (more than two NULs)")
	case j == i+1:
		return withheldToken("not a PLAIN message (no user name)")
	case j+1 == len(b):
		return withheldToken("not a PLAIN message (no password)")
	case !utf8.Valid(b):
		return withheldToken("not a PLAIN message (not UTF-8)")
	}
	return SASLToken{Message: SASLPlain, Parts: []SASLPart{
		{Name: "authzid", Off: 0, Len: i, Value: string(b[:i])},
		{Name: "username", Off: i + 1, Len: j - i - 1, Value: string(b[i+1 : j])},
		{Name: "password", Off: j + 1, Len: len(b) - j - 1, Value: string(b[j+1:]), Secret: true},
	}}
}

// gs2HeaderLen returns the length of the GS2 header that b starts with,
// or 0 when b does not start with one (RFC 5801 section 4):
//
//	gs2-header     = gs2-cbind-flag "," [ authzid ] ","
//	gs2-cbind-flag = ("p=" cb-name) / "n" / "y"
//	cb-name        = 1*(ALPHA / DIGIT / "." / "-")
//	authzid        = "a=" saslname
//
// cb is whether the "p=" flag (channel binding) is allowed.
func gs2HeaderLen(b []byte, cb bool) int {
	i := 0
	switch {
	case len(b) >= 1 && (b[0] == 'n' || b[0] == 'y'):
		i = 1
	case cb && bytes.HasPrefix(b, []byte("p=")):
		i = 2
		for i < len(b) && (isAlphaByte(b[i]) || b[i] >= '0' && b[i] <= '9' || b[i] == '.' || b[i] == '-') {
			i++
		}
		if i == 2 {
			return 0
		}
	default:
		return 0
	}
	if i >= len(b) || b[i] != ',' {
		return 0
	}
	i++
	if bytes.HasPrefix(b[i:], []byte("a=")) {
		end := bytes.IndexByte(b[i:], ',')
		if end < 0 || !saslName(b[i+2:i+end]) {
			return 0
		}
		i += end
	}
	if i >= len(b) || b[i] != ',' {
		return 0
	}
	return i + 1
}

// The character classes of RFC 5802 section 7.

// saslName: 1*(value-safe-char / "=2C" / "=3D"), value-safe-char any
// UTF-8 character but NUL, "=" and ",".
func saslName(v []byte) bool {
	if len(v) == 0 || !utf8.Valid(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case 0, ',':
			return false
		case '=':
			if i+2 >= len(v) || v[i+1] != '2' && v[i+1] != '3' || v[i+1] == '2' && v[i+2] != 'C' || v[i+1] == '3' && v[i+2] != 'D' {
				return false
			}
			i += 2
		}
	}
	return true
}

// scramValue: 1*value-char, any UTF-8 character but NUL and ",".
func scramValue(v []byte) bool {
	return len(v) > 0 && utf8.Valid(v) && bytes.IndexByte(v, 0) < 0 && bytes.IndexByte(v, ',') < 0
}

// printableNonce: 1*printable, %x21-2B / %x2D-7E (printable ASCII but
// ",").
func printableNonce(v []byte) bool {
	for _, c := range v {
		if c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return len(v) > 0
}

// base64Value: *base64-4 [base64-3 / base64-2], the standard alphabet
// with its padding.
func base64Value(v []byte) bool {
	if len(v)%4 != 0 {
		return false
	}
	for i, c := range v {
		switch {
		case isAlphaByte(c) || c >= '0' && c <= '9' || c == '+' || c == '/':
		case c == '=' && (i == len(v)-1 || i == len(v)-2 && v[i+1] == '='):
		default:
			return false
		}
	}
	return true
}

// positNumber: %x31-39 *DIGIT.
func positNumber(v []byte) bool {
	if len(v) == 0 || v[0] < '1' || v[0] > '9' {
		return false
	}
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isAlphaByte(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isAlpha(b []byte) bool {
	for _, c := range b {
		if !isAlphaByte(c) {
			return false
		}
	}
	return len(b) > 0
}

// scramAttr is one attribute of RFC 5802 section 5.1: its name as a part,
// the grammar of its value, and whether the value is a secret.
type scramAttr struct {
	name   string
	valid  func([]byte) bool
	secret bool
}

var scramAttrs = map[string]scramAttr{
	"a": {"authzid", saslName, false},
	"n": {"username", saslName, false},
	"m": {"reserved", scramValue, true}, // a mandatory extension kwire cannot know
	"r": {"nonce", printableNonce, false},
	"c": {"channelBinding", base64Value, false},
	"s": {"salt", base64Value, false},
	"i": {"iterations", positNumber, false},
	"p": {"proof", base64Value, true},    // ClientProof: with the salt, count and nonces, tests password guesses
	"v": {"verifier", base64Value, true}, // ServerSignature: the same
	"e": {"error", scramValue, false},
}

// scramToken splits a SCRAM message (RFC 5802 section 7; Kafka's
// ScramMessages):
//
//	client-first = gs2-header [reserved-mext ","] username "," nonce ["," extensions]
//	server-first = [reserved-mext ","] nonce "," salt "," iteration-count ["," extensions]
//	client-final = channel-binding "," nonce ["," extensions] "," proof
//	server-final = (server-error / verifier) ["," extensions]
//	extensions   = attr-val *("," attr-val), attr-val = 1*ALPHA "=" value
//
// The attributes in that order, each value of its grammar (saslname,
// printable, base64, posit-number, value), nothing before or after.
// Extensions are keyed by letters RFC 5802 does not use for its own
// attributes (Kafka's "tokenauth" is longer than one, KIP-48); their
// values are withheld but tokenauth's "true" or "false".
func scramToken(mech string, fromClient bool, b []byte) SASLToken {
	var t SASLToken
	off := 0
	var want []string // the mandatory attributes, in order; "m" optional first
	switch {
	case fromClient && bytes.HasPrefix(b, []byte("c=")):
		t.Message, want = SASLScramClientFinal, []string{"c", "r"}
	case fromClient:
		n := gs2HeaderLen(b, true)
		if n == 0 {
			return withheldToken("not a " + mechName(mech) + " client message")
		}
		t.Message, want = SASLScramClientFirst, []string{"n", "r"}
		t.Parts = append(t.Parts, SASLPart{Name: "gs2Header", Off: 0, Len: n, Value: string(b[:n])})
		off = n
	case bytes.HasPrefix(b, []byte("r=")) || bytes.HasPrefix(b, []byte("m=")):
		t.Message, want = SASLScramServerFirst, []string{"r", "s", "i"}
	case bytes.HasPrefix(b, []byte("v=")):
		t.Message, want = SASLScramServerFinal, []string{"v"}
	case bytes.HasPrefix(b, []byte("e=")):
		t.Message, want = SASLScramServerFinal, []string{"e"}
	default:
		return withheldToken("not a " + mechName(mech) + " broker message")
	}
	bad := withheldToken("not a well-formed " + mechName(mech) + " " + strings.TrimPrefix(t.Message.String(), "SCRAM ") + " message")
	var attrs [][3]int // key start, value start, end
	for {
		end := bytes.IndexByte(b[off:], ',')
		if end < 0 {
			end = len(b)
		} else {
			end += off
		}
		eq := bytes.IndexByte(b[off:end], '=')
		if eq <= 0 || !isAlpha(b[off:off+eq]) {
			return bad
		}
		attrs = append(attrs, [3]int{off, off + eq + 1, end})
		if end == len(b) {
			break
		}
		off = end + 1
	}
	key := func(a [3]int) string { return string(b[a[0] : a[1]-1]) }
	k := 0
	if (t.Message == SASLScramClientFirst || t.Message == SASLScramServerFirst) && key(attrs[0]) == "m" {
		k = 1 // reserved-mext
		want = append([]string{"m"}, want...)
	}
	for _, w := range want[k:] {
		if k >= len(attrs) || key(attrs[k]) != w {
			return bad
		}
		k++
	}
	last := len(attrs)
	if t.Message == SASLScramClientFinal {
		if last <= k || key(attrs[last-1]) != "p" {
			return bad
		}
	}
	for i, a := range attrs {
		name, v := key(a), b[a[1]:a[2]]
		var p SASLPart
		if i < k || i == last-1 && t.Message == SASLScramClientFinal {
			sa := scramAttrs[name]
			if !sa.valid(v) {
				return bad
			}
			p = SASLPart{Name: sa.name, Secret: sa.secret}
		} else {
			// An extension: a key RFC 5802 does not give an attribute.
			if _, own := scramAttrs[name]; own || !scramValue(v) {
				return bad
			}
			p = SASLPart{Name: name, Secret: name != "tokenauth" || !bytes.EqualFold(v, []byte("true")) && !bytes.EqualFold(v, []byte("false"))}
		}
		p.Off, p.Len, p.Value = a[1], a[2]-a[1], string(v)
		t.Parts = append(t.Parts, p)
	}
	return t
}

func mechName(m string) string {
	if m == "SCRAM-" {
		return "SCRAM"
	}
	return m
}

// kvsep separates OAUTHBEARER's key-value pairs (RFC 7628 section 3.1).
const kvsep = 0x01

// oauthToken splits an OAUTHBEARER message (RFC 7628 section 3.1):
//
//	client-resp = (gs2-header kvsep *kvpair kvsep) / kvsep
//	kvpair      = key "=" value kvsep
//	key         = 1*ALPHA
//	value       = *(VCHAR / SP / HTAB / CR / LF)
//
// with exactly one "auth" pair, whose value is "Bearer" 1*SP b64token
// (RFC 6750 section 2.1), a "port" that is a decimal number without
// leading zeros, no key twice, and a GS2 header without channel binding.
// The auth value (the bearer token) and the values of other keys than
// host and port (SASL extensions, KIP-342: the client's to define) are
// secrets. A broker's message is its JSON error (oauthError).
func oauthToken(fromClient bool, b []byte) SASLToken {
	if !fromClient {
		return oauthError(b)
	}
	if len(b) == 1 && b[0] == kvsep {
		return SASLToken{Message: SASLOAuthClientAck}
	}
	bad := withheldToken("not a well-formed OAUTHBEARER client message")
	n := gs2HeaderLen(b, false)
	if n == 0 || n >= len(b) || b[n] != kvsep {
		return withheldToken("not an OAUTHBEARER client message")
	}
	t := SASLToken{Message: SASLOAuthClient, Parts: []SASLPart{{Name: "gs2Header", Off: 0, Len: n, Value: string(b[:n])}}}
	auths := 0
	off := n + 1
	for off != len(b)-1 || b[off] != kvsep {
		end := bytes.IndexByte(b[off:], kvsep)
		if end < 0 {
			return bad
		}
		end += off
		eq := bytes.IndexByte(b[off:end], '=')
		if eq <= 0 || !isAlpha(b[off:off+eq]) {
			return bad
		}
		key, v := string(b[off:off+eq]), b[off+eq+1:end]
		if !oauthValue(v) {
			return bad
		}
		for _, p := range t.Parts[1:] {
			if p.Name == key {
				return bad
			}
		}
		switch key {
		case "auth":
			auths++
			if !bearerCredentials(v) {
				return bad
			}
		case "port":
			if !positNumber(v) {
				return bad
			}
		}
		vo := off + eq + 1
		t.Parts = append(t.Parts, SASLPart{Name: key, Off: vo, Len: end - vo, Value: string(v), Secret: key != "host" && key != "port"})
		off = end + 1
		if off >= len(b) {
			return bad // no final kvsep
		}
	}
	if auths != 1 {
		return bad
	}
	return t
}

// oauthValue: *(VCHAR / SP / HTAB / CR / LF).
func oauthValue(v []byte) bool {
	for _, c := range v {
		if (c < 0x21 || c > 0x7e) && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

// bearerCredentials: "Bearer" 1*SP b64token (RFC 6750 section 2.1; the
// scheme's case does not matter, RFC 7235), b64token = 1*( ALPHA / DIGIT
// / "-" / "." / "_" / "~" / "+" / "/" ) *"=".
func bearerCredentials(v []byte) bool {
	if len(v) < 7 || !bytes.EqualFold(v[:6], []byte("bearer")) || v[6] != ' ' {
		return false
	}
	tok := bytes.TrimLeft(v[6:], " ")
	i := 0
	for i < len(tok) && (isAlphaByte(tok[i]) || tok[i] >= '0' && tok[i] <= '9' || bytes.IndexByte([]byte("-._~+/"), tok[i]) >= 0) {
		i++
	}
	if i == 0 {
		return false
	}
	for i < len(tok) && tok[i] == '=' {
		i++
	}
	return i == len(tok)
}

// oauthErrorKeys are the members of the broker's error (RFC 7628 section
// 3.2.2): a JSON object of strings, "status" required.
var oauthErrorKeys = map[string]bool{"status": true, "scope": true, "openid-configuration": true}

func oauthError(b []byte) SASLToken {
	var obj map[string]json.RawMessage
	if b[0] != '{' || !utf8.Valid(b) || json.Unmarshal(b, &obj) != nil {
		return withheldToken("not an OAUTHBEARER broker message")
	}
	if _, ok := obj["status"]; !ok {
		return withheldToken("an OAUTHBEARER broker error without a status")
	}
	for k, v := range obj {
		var s string
		if !oauthErrorKeys[k] {
			return withheldToken("an OAUTHBEARER broker error with a member RFC 7628 does not define")
		}
		if json.Unmarshal(v, &s) != nil {
			return withheldToken("an OAUTHBEARER broker error whose " + k + " is not a string")
		}
	}
	return SASLToken{Message: SASLOAuthServerError, Parts: []SASLPart{{Name: "error", Off: 0, Len: len(b), Value: string(b)}}}
}

// saslNode splits n, a SASL token (the AuthBytes of a SaslAuthenticate
// request, fromClient, or response), into KindString children, one per
// part, and marks it and its secret parts FlagRedacted unless
// ShowSecrets; a token ParseSASLToken withholds is marked whole, without
// children. n's Note says which message the token is.
func (ip *interp) saslNode(n *Node, fromClient bool) {
	if n.Flags&FlagNull != 0 {
		return
	}
	t := ParseSASLToken(ip.d.SASLMechanism, fromClient, n.Raw)
	ip.saslParts(n, t, n.End()-len(n.Raw))
}

// saslParts gives n the parts of t, whose first byte is at offset base.
func (ip *interp) saslParts(n *Node, t SASLToken, base int) {
	show := ip.d.ShowSecrets
	switch {
	case t.Message == SASLEmpty:
		return
	case t.Withheld:
		n.Note = t.Reason
		if !show {
			n.Flags |= FlagRedacted
			n.Raw = nil
		}
		return
	}
	n.Note = t.Message.String()
	for _, p := range t.Parts {
		c := ip.newNode()
		c.Name, c.Type, c.Kind, c.Str = p.Name, "sasl", KindString, p.Value
		c.Field = saslPartField(t.Message, p.Name)
		c.Off, c.Len = base+p.Off, p.Len
		if p.Secret && !show {
			c.Str = ""
			c.Flags |= FlagRedacted
			n.Flags |= FlagRedacted
		}
		n.Children = append(n.Children, c)
	}
}

// The fields SASL token parts are values of: one per mechanism family and
// part name, made when first asked for, so that readers know a part by
// identity (SASLMechanismOf; Role RoleSASLUser for a user name).
var (
	saslFieldsMu sync.Mutex
	saslFields   = map[[2]string]*Field{}
	saslFamilies = map[*Field]string{}
)

// saslFamily is the mechanism family of a message kind.
func saslFamily(m SASLMessage) string {
	switch m {
	case SASLPlain:
		return "PLAIN"
	case SASLScramClientFirst, SASLScramServerFirst, SASLScramClientFinal, SASLScramServerFinal:
		return "SCRAM"
	case SASLOAuthClient, SASLOAuthClientAck, SASLOAuthServerError:
		return "OAUTHBEARER"
	case SASLGSSAPI:
		return "GSSAPI"
	}
	return ""
}

func saslPartField(m SASLMessage, name string) *Field {
	k := [2]string{saslFamily(m), name}
	saslFieldsMu.Lock()
	defer saslFieldsMu.Unlock()
	if f, ok := saslFields[k]; ok {
		return f
	}
	role := RoleNone
	if name == "username" {
		role = RoleSASLUser
	}
	f := rf(name, "sasl", TypeString, role)
	saslFields[k] = f
	saslFamilies[f] = k[0]
	return f
}

// SASLMechanismOf returns the mechanism family ("PLAIN", "SCRAM",
// "OAUTHBEARER") of the SASL token a part node's field belongs to, or ""
// for a field that is not a SASL part.
func SASLMechanismOf(f *Field) string {
	if f == nil || f.Type != "sasl" {
		return ""
	}
	saslFieldsMu.Lock()
	defer saslFieldsMu.Unlock()
	return saslFamilies[f]
}

// DecodeSASLToken decodes frame, a raw SASL token as sent after a
// SaslHandshake v0 (KIP-43: a 4-byte length, then the token, with no
// Kafka header), by the client (fromClient) or the broker, as a token of
// mechanism mech (see ParseSASLToken). Root is a "SaslToken" KindStruct
// (Note "SCRAM client-final", or why the token is withheld) with a
// "Length" int32 and a "Token" KindBytes node holding the parts as
// children, secrets marked FlagRedacted unless ShowSecrets; a token
// withheld whole is a "Token" node marked FlagRedacted with no children.
// An empty token has no "Token" node.
func (d *Decoder) DecodeSASLToken(frame []byte, mech string, fromClient bool) *Tree {
	var ip interp
	ip.reset(d, frame, "frame")
	root := ip.newNode()
	root.Name, root.Type, root.Kind, root.Len = "SaslToken", "sasl", KindStruct, len(frame)
	ip.t.Root = root
	if len(frame) < 4 {
		root.Note = "shorter than its 4-byte length"
		root.Flags |= FlagError
		if !d.ShowSecrets && len(frame) > 0 {
			u := ip.rawNode(nameUndecoded, 0, len(frame))
			u.Flags |= FlagRedacted
			u.Raw = nil
			root.Children = append(root.Children, u)
		}
		return ip.tree()
	}
	ln := ip.newNode()
	size := int32(uint32(frame[0])<<24 | uint32(frame[1])<<16 | uint32(frame[2])<<8 | uint32(frame[3]))
	ln.Name, ln.Type, ln.Kind, ln.Len, ln.Int = NameLength, "int32", KindInt, 4, int64(size)
	root.Children = append(root.Children, ln)
	tok := frame[4:]
	if len(tok) == 0 {
		root.Note = "empty token"
		return ip.tree()
	}
	n := ip.newNode()
	n.Name, n.Type, n.Kind, n.Off, n.Len, n.Raw = "Token", "bytes", KindBytes, 4, len(tok), tok
	root.Children = append(root.Children, n)
	t := ParseSASLToken(mech, fromClient, tok)
	if int64(size) != int64(len(tok)) {
		// A token cut short (or padded): its parts cannot be trusted.
		t = withheldToken("a token whose length prefix says " + strconv.Itoa(int(size)) + " bytes")
		n.Flags |= FlagTruncated
	}
	ip.saslParts(n, t, 4)
	root.Note = n.Note
	n.Note = ""
	return ip.tree()
}
