package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
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
// extensions kwire does not know (they are the client's to define). A
// token that is not a well-formed message of its mechanism, a GSSAPI
// token, a non-empty token of any other mechanism (AWS_MSK_IAM, a
// vendor's) and anything kwire cannot tell is withheld whole:
// SASLToken.Withheld.
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
// "GSSAPI", ...; case does not matter). When mech is empty (the handshake
// was not captured) the token's shape decides: a GSSAPI token starts with
// 0x60, a PLAIN client message has exactly two NULs, an OAUTHBEARER one a
// GS2 header and ^A, a SCRAM one a GS2 header and "n=" or "c=", a SCRAM
// broker message "r=", "m=", "v=" or "e="; anything else is withheld. An
// empty token is SASLEmpty whatever the mechanism.
func ParseSASLToken(mech string, fromClient bool, b []byte) SASLToken {
	if len(b) == 0 {
		return SASLToken{Message: SASLEmpty}
	}
	m := strings.ToUpper(mech)
	if m == "" {
		m = guessMechanism(fromClient, b)
		if m == "" {
			return withheldToken("a token of a mechanism kwire cannot tell (the SaslHandshake was not captured)")
		}
	}
	switch {
	case m == "PLAIN":
		if !fromClient {
			return withheldToken("a PLAIN broker token should be empty")
		}
		return plainToken(b)
	case strings.HasPrefix(m, "SCRAM-"):
		return scramToken(m, fromClient, b)
	case m == "OAUTHBEARER":
		return oauthToken(fromClient, b)
	case m == "GSSAPI":
		return SASLToken{Message: SASLGSSAPI, Withheld: true, Reason: "a GSSAPI (Kerberos) token"}
	}
	return withheldToken("a " + mech + " token (kwire does not parse that mechanism)")
}

func withheldToken(reason string) SASLToken {
	return SASLToken{Message: SASLNotParsed, Withheld: true, Reason: reason}
}

// guessMechanism tells a token's mechanism by its shape, or "".
func guessMechanism(fromClient bool, b []byte) string {
	if b[0] == 0x60 {
		return "GSSAPI" // RFC 2743 section 3.1: [APPLICATION 0] InitialContextToken
	}
	if !fromClient {
		if len(b) >= 2 && b[1] == '=' && bytes.IndexByte([]byte("rmve"), b[0]) >= 0 {
			return "SCRAM-"
		}
		return ""
	}
	if bytes.Count(b, []byte{0}) == 2 {
		return "PLAIN"
	}
	if bytes.HasPrefix(b, []byte("c=")) {
		return "SCRAM-"
	}
	if n := gs2HeaderLen(b); n > 0 {
		switch {
		case n < len(b) && b[n] == 0x01:
			return "OAUTHBEARER"
		case bytes.HasPrefix(b[n:], []byte("n=")):
			return "SCRAM-"
		}
	}
	return ""
}

// plainToken splits an RFC 4616 message: authzid NUL authcid NUL passwd.
// Everything after the second NUL is the password, NULs included (RFC
// 4616 forbids them; a client that sends one still sent a secret).
func plainToken(b []byte) SASLToken {
	i := bytes.IndexByte(b, 0)
	if i < 0 {
		return withheldToken("not a PLAIN message (no NUL)")
	}
	j := bytes.IndexByte(b[i+1:], 0)
	if j < 0 {
		return withheldToken("not a PLAIN message (one NUL)")
	}
	j += i + 1
	return SASLToken{Message: SASLPlain, Parts: []SASLPart{
		{Name: "authzid", Off: 0, Len: i, Value: string(b[:i])},
		{Name: "username", Off: i + 1, Len: j - i - 1, Value: string(b[i+1 : j])},
		{Name: "password", Off: j + 1, Len: len(b) - j - 1, Value: string(b[j+1:]), Secret: true},
	}}
}

// gs2HeaderLen returns the length of the GS2 header that b starts with
// (RFC 5801 section 4: "n," "y," or "p=cb-name," then an optional
// "a=authzid", then ","), or 0.
func gs2HeaderLen(b []byte) int {
	switch {
	case len(b) >= 2 && (b[0] == 'n' || b[0] == 'y') && b[1] == ',':
	case bytes.HasPrefix(b, []byte("p=")):
	default:
		return 0
	}
	i := bytes.IndexByte(b, ',')
	if i < 0 {
		return 0
	}
	j := bytes.IndexByte(b[i+1:], ',')
	if j < 0 {
		return 0
	}
	if a := b[i+1 : i+1+j]; len(a) > 0 && !bytes.HasPrefix(a, []byte("a=")) {
		return 0
	}
	return i + 1 + j + 1
}

// scramAttrs names RFC 5802's attributes (section 5.1) and says which are
// secrets; any other single-letter attribute's value is withheld.
var scramAttrs = map[string]struct {
	name   string
	secret bool
}{
	"a": {"authzid", false}, "n": {"username", false}, "r": {"nonce", false},
	"c": {"channelBinding", false}, "s": {"salt", false}, "i": {"iterations", false},
	"e": {"error", false}, "m": {"reserved", false},
	"p":         {"proof", true},      // ClientProof: with the salt, count and nonces, tests password guesses
	"v":         {"verifier", true},   // ServerSignature: the same
	"tokenauth": {"tokenauth", false}, // Kafka's extension for delegation tokens (KIP-48): "true"
}

// scramToken splits a SCRAM message. The first attribute tells which one
// it is; every attribute is "key=value" with a value free of commas.
func scramToken(mech string, fromClient bool, b []byte) SASLToken {
	var t SASLToken
	off := 0
	switch {
	case fromClient && bytes.HasPrefix(b, []byte("c=")):
		t.Message = SASLScramClientFinal
	case fromClient:
		n := gs2HeaderLen(b)
		if n == 0 || !bytes.HasPrefix(b[n:], []byte("n=")) {
			return withheldToken("not a " + mechName(mech) + " client message")
		}
		t.Message = SASLScramClientFirst
		t.Parts = append(t.Parts, SASLPart{Name: "gs2Header", Off: 0, Len: n, Value: string(b[:n])})
		off = n
	case bytes.HasPrefix(b, []byte("r=")) || bytes.HasPrefix(b, []byte("m=")):
		t.Message = SASLScramServerFirst
	case bytes.HasPrefix(b, []byte("v=")) || bytes.HasPrefix(b, []byte("e=")):
		t.Message = SASLScramServerFinal
	default:
		return withheldToken("not a " + mechName(mech) + " broker message")
	}
	for off <= len(b) {
		end := bytes.IndexByte(b[off:], ',')
		if end < 0 {
			end = len(b)
		} else {
			end += off
		}
		key, _, ok := bytes.Cut(b[off:end], []byte("="))
		if !ok || len(key) == 0 || !isAlpha(key) {
			return withheldToken("not a well-formed " + mechName(mech) + " " + t.Message.String()[len("SCRAM "):] + " message")
		}
		a, known := scramAttrs[string(key)]
		if !known {
			a.name, a.secret = string(key), true // an attribute or extension kwire does not know
		}
		vo := off + len(key) + 1
		t.Parts = append(t.Parts, SASLPart{Name: a.name, Off: vo, Len: end - vo, Value: string(b[vo:end]), Secret: a.secret})
		if end == len(b) {
			break
		}
		off = end + 1
	}
	return t
}

func mechName(m string) string {
	if m == "SCRAM-" {
		return "SCRAM"
	}
	return m
}

func isAlpha(b []byte) bool {
	for _, c := range b {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

// oauthKeys are the RFC 7628 keys whose values are not secret; "auth"
// holds the bearer token, and other keys are SASL extensions (KIP-342),
// which the client defines: both are withheld.
var oauthKeys = map[string]bool{"host": true, "port": true}

// oauthToken splits an OAUTHBEARER message (RFC 7628 section 3.1).
func oauthToken(fromClient bool, b []byte) SASLToken {
	if !fromClient {
		return oauthError(b)
	}
	if len(b) == 1 && b[0] == 0x01 {
		return SASLToken{Message: SASLOAuthClientAck}
	}
	n := gs2HeaderLen(b)
	if n == 0 || n >= len(b) || b[n] != 0x01 || !bytes.HasSuffix(b, []byte{0x01, 0x01}) || len(b) < n+2 {
		return withheldToken("not an OAUTHBEARER client message")
	}
	t := SASLToken{Message: SASLOAuthClient, Parts: []SASLPart{{Name: "gs2Header", Off: 0, Len: n, Value: string(b[:n])}}}
	off := n + 1
	for off < len(b)-1 {
		end := bytes.IndexByte(b[off:], 0x01) + off
		key, _, ok := bytes.Cut(b[off:end], []byte("="))
		if !ok || len(key) == 0 || !isAlpha(key) {
			return withheldToken("not a well-formed OAUTHBEARER client message")
		}
		vo := off + len(key) + 1
		t.Parts = append(t.Parts, SASLPart{Name: string(key), Off: vo, Len: end - vo, Value: string(b[vo:end]),
			Secret: !oauthKeys[string(key)]})
		off = end + 1
	}
	if off != len(b)-1 {
		return withheldToken("not a well-formed OAUTHBEARER client message")
	}
	return t
}

// oauthErrorKeys are the members of the broker's error (RFC 7628 section
// 3.2.2); a JSON object with any other member is withheld.
var oauthErrorKeys = map[string]bool{"status": true, "scope": true, "openid-configuration": true}

func oauthError(b []byte) SASLToken {
	var obj map[string]json.RawMessage
	if b[0] != '{' || json.Unmarshal(b, &obj) != nil {
		return withheldToken("not an OAUTHBEARER broker message")
	}
	for k := range obj {
		if !oauthErrorKeys[k] {
			return withheldToken("an OAUTHBEARER broker error with a member RFC 7628 does not define")
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
