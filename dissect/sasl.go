package dissect

import (
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
// Each token's tree comes from protocol.Decoder.DecodeSASLToken, which
// marks its secrets (PLAIN passwords, SCRAM proofs and signatures,
// OAUTHBEARER tokens, GSSAPI and unparsable tokens whole)
// protocol.FlagRedacted unless Options.Decoder.ShowSecrets. Frame.Bytes
// keep the bytes as captured: outputs show a frame through its tree.

type saslState struct {
	active bool
	mech   string
	// guessed says mech was told from the first token's shape, the
	// handshake not captured: tokens are parsed as of an unknown
	// mechanism (protocol.ParseSASLToken), which withholds one that
	// another mechanism could claim too.
	guessed bool
	note    string
	rounds  int
	tok     *Exchange // client token awaiting the broker's
	// early: the client sent its first token before the broker answered
	// its SaslHandshake v0 (in one segment with the request, or ahead of
	// a late response): the client's bytes are raw, the broker's stay
	// Kafka until that response pairs (handshakeAnswered).
	early bool
}

func (c *conn) enterSASL(mech, note string) {
	c.sasl = saslState{active: true, mech: mech, note: note}
	for _, s := range c.split {
		s.raw = true
	}
}

// enterSASLEarly switches the client's bytes to raw SASL tokens while the
// SaslHandshake v0 request asking for mech still awaits its response.
func (c *conn) enterSASLEarly(mech string) {
	c.sasl = saslState{active: true, mech: mech, early: true}
	for _, s := range c.split {
		s.raw = s.req
	}
}

// handshakeAnswered takes the response to a SaslHandshake v0 request
// (code its error code): accepted, the broker's bytes are raw tokens from
// here on, as the client's are; refused, a client that went raw early
// sent its token in vain, and Kafka framing resumes.
func (c *conn) handshakeAnswered(mech string, code int16) {
	c.hsV0 = false
	switch {
	case code == 0 && c.sasl.active && c.sasl.early:
		c.sasl.early = false
		for _, s := range c.split {
			s.raw = true
		}
	case code == 0:
		c.enterSASL(mech, "")
	case c.sasl.early:
		c.leaveSASL()
	}
}

func (c *conn) leaveSASL() {
	if tok := c.sasl.tok; tok != nil {
		tok.Notes = append(tok.Notes, "no broker token")
		c.emit(tok)
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
		c.sasl.guessed = true
		switch tok := fr.Bytes[4:]; {
		case looksPLAIN(tok):
			c.sasl.mech = "PLAIN"
		case looksOAUTHBEARER(tok):
			c.sasl.mech = "OAUTHBEARER"
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
		c.emit(tok)
	}
	cl, br := c.addrs()
	ex := newExchange(Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindSASL, APIKey: -1, APIVersion: -1, CorrelationID: -1,
		Mechanism: c.sasl.mech, Request: fr})
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
		ex = newExchange(Exchange{Conn: c.c, Client: cl, Broker: br, Kind: KindSASL, APIKey: -1, APIVersion: -1, CorrelationID: -1,
			Mechanism: c.sasl.mech, Notes: []string{"broker token without a client token"}})
	}
	ex.Response = fr
	c.token(ex, fr, false)
	c.sasl.rounds++
	c.emit(ex)
	mech := strings.ToUpper(c.sasl.mech)
	if mech == "PLAIN" && c.sasl.rounds >= 1 || isSCRAM(mech) && c.sasl.rounds >= 2 {
		c.leaveSASL()
	}
}

// token decodes a raw SASL token (protocol.Decoder.DecodeSASLToken: its
// parts, secrets marked and withheld) and takes the user name from a
// client's PLAIN or SCRAM client-first message.
func (c *conn) token(ex *Exchange, fr *Frame, client bool) {
	mech := c.sasl.mech
	if c.sasl.guessed {
		mech = "" // told by the shape: each token is parsed as of an unknown mechanism
	}
	fr.Tree = c.d.opts.Decoder.DecodeSASLToken(fr.Bytes, mech, client)
	message := "" // the message, or why the token is withheld
	if root := fr.Tree.Root; root != nil {
		message = root.Note
		note := c.sasl.mech + " token from the broker"
		if client {
			note = c.sasl.mech + " token from the client"
		}
		if root.Note != "" && !strings.EqualFold(root.Note, c.sasl.mech) {
			note += ": " + root.Note
		}
		root.Note = note
	}
	if !client || len(fr.Bytes) < 4 {
		return
	}
	if ex.User == "" {
		ex.User = ex.Facts().SASL.User // the client token's user, from its parts (package facts)
	}
	if !c.d.opts.Decoder.ShowSecrets && withheldAny(fr.Tree.Root) {
		ex.Notes = append(ex.Notes, "SASL secret withheld ("+message+")")
	}
}

// withheldAny reports whether a node of the tree under n is withheld.
func withheldAny(n *protocol.Node) bool {
	if n == nil {
		return false
	}
	if n.Flags&protocol.FlagRedacted != 0 {
		return true
	}
	for _, c := range n.Children {
		if withheldAny(c) {
			return true
		}
	}
	return false
}
