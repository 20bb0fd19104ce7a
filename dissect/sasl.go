package dissect

import (
	"bytes"
	"strings"

	"github.com/kwire/kwire/protocol"
)

// Raw SASL. After a successful SaslHandshake v0 response (KIP-43) the
// client and broker exchange SASL tokens framed only by a 4-byte length,
// without Kafka headers, in both directions. (From SaslHandshake v1,
// KIP-152, tokens travel inside SaslAuthenticate requests and are decoded
// as ordinary Kafka frames.) Each client token and the broker's reply form
// one KindSASL exchange. Kafka framing resumes:
//
//   - PLAIN (RFC 4616): after one round;
//   - SCRAM-SHA-256/512 (RFC 5802, RFC 7677): after two rounds
//     (client-first/server-first, client-final/server-final);
//   - any other mechanism (GSSAPI, OAUTHBEARER): when a client token parses
//     as a plausible Kafka request (strict check), which is then handled
//     as one.
//
// PLAIN passwords and SCRAM client proofs are redacted unless
// Options.Decoder.ShowSecrets: their bytes in Frame.Bytes are overwritten
// with '*' and their tree nodes carry protocol.FlagRedacted.

type saslState struct {
	active bool
	mech   string
	note   string
	rounds int
	tok    *Exchange // client token awaiting the broker's
}

func (c *conn) enterSASL(mech, note string) {
	c.sasl = saslState{active: true, mech: mech, note: note}
	for _, s := range c.split {
		s.raw = true
	}
}

func (c *conn) leaveSASL() {
	if tok := c.sasl.tok; tok != nil {
		tok.Notes = append(tok.Notes, "no broker token")
		c.d.emit(tok)
	}
	c.sasl = saslState{}
	for _, s := range c.split {
		s.raw = false
	}
}

func isSCRAM(mech string) bool { return strings.HasPrefix(strings.ToUpper(mech), "SCRAM-") }

// saslClient handles a client frame in raw SASL mode. It returns false when
// the frame is a Kafka request and raw mode has ended.
func (c *conn) saslClient(fr *Frame) bool {
	if c.sasl.mech == "" {
		// The handshake's mechanism was not captured: tell it by the
		// first token's shape.
		switch tok := fr.Bytes[4:]; {
		case looksPLAIN(tok):
			c.sasl.mech = "PLAIN"
		case looksSCRAM(tok):
			c.sasl.mech = "SCRAM-SHA-256"
			c.sasl.note = strings.TrimPrefix(c.sasl.note+"; SCRAM-SHA-256 or -512: the mechanism was not captured", "; ")
		case len(tok) > 0 && tok[0] == 0x60:
			c.sasl.mech = "GSSAPI"
		}
	}
	// A Kafka request ends raw SASL: always for mechanisms whose rounds are
	// not counted, and for PLAIN and SCRAM when the client speaks twice in
	// a row (the broker's token was lost).
	mech := strings.ToUpper(c.sasl.mech)
	counted := mech == "PLAIN" || isSCRAM(mech)
	if (!counted || c.sasl.tok != nil) && checkRequest(fr.Bytes, c.d.opts.MaxFrame, true) == vYes {
		c.leaveSASL()
		return false
	}
	if tok := c.sasl.tok; tok != nil {
		tok.Notes = append(tok.Notes, "no broker token before the next client token")
		c.d.emit(tok)
	}
	cl, br := c.addrs()
	ex := &Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindSASL, APIKey: -1, APIVersion: -1, CorrelationID: -1,
		Mechanism: c.sasl.mech, Request: fr}
	if c.sasl.note != "" {
		ex.Notes = append(ex.Notes, c.sasl.note)
		c.sasl.note = ""
	}
	c.token(ex, fr, true)
	c.sasl.tok = ex
	return true
}

// saslServer handles a broker frame in raw SASL mode.
func (c *conn) saslServer(fr *Frame) {
	ex := c.sasl.tok
	c.sasl.tok = nil
	if ex == nil {
		cl, br := c.addrs()
		ex = &Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindSASL, APIKey: -1, APIVersion: -1, CorrelationID: -1,
			Mechanism: c.sasl.mech, Notes: []string{"broker token without a client token"}}
	}
	ex.Response = fr
	c.token(ex, fr, false)
	c.sasl.rounds++
	c.d.emit(ex)
	mech := strings.ToUpper(c.sasl.mech)
	if mech == "PLAIN" && c.sasl.rounds >= 1 || isSCRAM(mech) && c.sasl.rounds >= 2 {
		c.leaveSASL()
	}
}

// token reads a raw SASL token: user names, redaction, and a small tree.
func (c *conn) token(ex *Exchange, fr *Frame, client bool) {
	b := fr.Bytes
	tok := b[4:]
	show := c.d.opts.Decoder.ShowSecrets
	root := &protocol.Node{Name: "SaslToken", Type: "sasl", Kind: protocol.KindStruct, Len: len(b),
		Note: c.sasl.mech + " token from the " + map[bool]string{true: "client", false: "broker"}[client]}
	root.Children = append(root.Children, &protocol.Node{Name: "Length", Type: "int32", Kind: protocol.KindInt, Len: 4, Int: int64(len(tok))})
	mech := strings.ToUpper(c.sasl.mech)
	switch {
	case len(tok) == 0:
	case client && c.clientParts(ex, root, tok, mech, show):
	case isSCRAM(mech) || looksSCRAM(tok):
		off := 4
		for _, part := range bytes.Split(tok, []byte(",")) {
			n := &protocol.Node{Name: "attribute", Type: "sasl", Kind: protocol.KindString, Off: off, Len: len(part), Str: string(part)}
			if len(part) >= 2 && part[1] == '=' {
				n.Name = string(part[:1])
			}
			root.Children = append(root.Children, n)
			off += len(part) + 1
		}
	default:
		n := &protocol.Node{Name: "Token", Type: "bytes", Kind: protocol.KindBytes, Off: 4, Len: len(tok), Raw: tok}
		if tok[0] == 0x60 {
			n.Note = "GSSAPI token (RFC 2743 InitialContextToken)"
		}
		root.Children = append(root.Children, n)
	}
	fr.Tree = &protocol.Tree{Root: root, Spaces: []protocol.Space{{Name: "frame", Data: b}}}
}

// clientParts splits a PLAIN or SCRAM client token with
// protocol.SASLToken, sets the user name and redacts secrets; false when the
// token is neither.
func (c *conn) clientParts(ex *Exchange, root *protocol.Node, tok []byte, mech string, show bool) bool {
	parts, ok := protocol.SASLToken(mech, tok, show)
	if !ok {
		return false
	}
	for _, p := range parts {
		if p.Off < 0 || p.Len < 0 || p.Off+p.Len > len(tok) {
			continue
		}
		n := &protocol.Node{Name: p.Name, Type: "sasl", Kind: protocol.KindString, Off: 4 + p.Off, Len: p.Len, Str: p.Value}
		if p.Name == "username" && ex.User == "" {
			ex.User = p.Value
			if isSCRAM(mech) {
				ex.User = scramName(p.Value)
			}
		}
		if p.Secret && !show {
			n.Str = ""
			n.Flags |= protocol.FlagRedacted
			n.Note = "redacted"
			mask(tok[p.Off : p.Off+p.Len])
			ex.Notes = append(ex.Notes, "SASL "+p.Name+" redacted")
		}
		root.Children = append(root.Children, n)
	}
	return true
}

// scramName decodes a SCRAM saslname (RFC 5802 section 5.1: "=2C" is ','
// and "=3D" is '=').
func scramName(s string) string {
	return strings.NewReplacer("=2C", ",", "=3D", "=").Replace(s)
}

func mask(b []byte) {
	for i := range b {
		b[i] = '*'
	}
}
