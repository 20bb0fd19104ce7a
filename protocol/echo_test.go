package protocol

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
)

// A broker's error message that quotes a secret of the request it answers
// (a SASL callback's "Invalid credentials: ...", a config validator's
// "Invalid value ... for configuration ...") is withheld, marked; one that
// does not is shown, and --show-secrets shows both.
func TestWithholdEchoes(t *testing.T) {
	str := func(s string) string { return fmt.Sprintf("%04x%x", len(s), s) }
	byts := func(s string) string { return fmt.Sprintf("%08x%x", len(s), s) }
	// SaslAuthenticateResponse v1: ErrorCode 58, ErrorMessage, AuthBytes
	// empty, SessionLifetimeMs 0.
	saslResp := func(msg string) string { return "003a" + str(msg) + "00000000" + "0000000000000000" }
	proof := "dGhpc2lzdGhlcHJvb2ZvZmFsaWNlMTIzNA=="
	for _, c := range []struct {
		name     string
		mech     string
		reqKey   int16
		reqBody  string // hex; SaslAuthenticate v1 or AlterConfigs v0
		respBody string
		withheld []bool // per error message, in order
	}{
		{"plain password quoted", "PLAIN", 36, byts("\x00alice\x00hunter2pw"),
			saslResp("Invalid credentials: \x00alice\x00hunter2pw"), []bool{true}},
		{"plain short password quoted", "PLAIN", 36, byts("\x00alice\x00pw1"),
			saslResp("bad password pw1 for alice"), []bool{true}},
		{"plain broker's own words", "PLAIN", 36, byts("\x00alice\x00hunter2pw"),
			saslResp("Authentication failed: Invalid username or password"), []bool{false}},
		{"scram proof quoted in part", "SCRAM-SHA-256", 36, byts("c=biws,r=abcdefXYZ,p=" + proof),
			saslResp("proof " + proof[4:24] + " does not verify"), []bool{true}},
		{"scram nonce quoted", "SCRAM-SHA-256", 36, byts("c=biws,r=abcdefXYZ,p=" + proof),
			saslResp("nonce abcdefXYZ is stale"), []bool{false}},
		{"gssapi token quoted in part", "GSSAPI", 36, byts("\x60\x82kerberos-ticket-bytes-0123"),
			saslResp("bad token: os-ticket-bytes-01"), []bool{true}},
		{"plain password sharing a word", "PLAIN", 36, byts("\x00capgen\x00capgen-wrong-password"),
			saslResp("Authentication failed: Invalid username or password"), []bool{false}},
		// Encoded or case-folded quotes, and a 15-byte prefix: shown before.
		{"plain password in base64", "PLAIN", 36, byts("\x00alice\x00kw-Echo-0123456789abcdef"),
			saslResp("bad: a3ctRWNoby0wMTIzNDU2Nzg5YWJjZGVm"), []bool{true}},
		{"plain token in base64", "PLAIN", 36, byts("\x00alice\x00kw-Echo-0123456789abcdef"),
			saslResp("bad token AGFsaWNlAGt3LUVjaG8tMDEyMzQ1Njc4OWFiY2RlZg=="), []bool{true}},
		{"plain password in hex", "PLAIN", 36, byts("\x00alice\x00kw-Echo-0123456789abcdef"),
			saslResp("bad: 6b772d4563686f2d30313233343536373839616263646566"), []bool{true}},
		{"plain password upper case", "PLAIN", 36, byts("\x00alice\x00kw-Echo-0123456789abcdef"),
			saslResp("bad: KW-ECHO-0123456789ABCDEF"), []bool{true}},
		{"plain password percent-encoded", "PLAIN", 36, byts("\x00alice\x00kw/Echo/0123456789"),
			saslResp("bad: kw%2FEcho%2F0123456789"), []bool{true}},
		{"plain password prefix of 15", "PLAIN", 36, byts("\x00alice\x00kw-Echo-0123456789abcdef"),
			saslResp("bad: kw-Echo-0123456"), []bool{true}},
		{"plain base64 of other words", "PLAIN", 36, byts("\x00alice\x00kw-Echo-0123456789abcdef"),
			saslResp("bad: SW52YWxpZCB1c2VybmFtZSBvciBwYXNzd29yZA== deadbeefdeadbeef"), []bool{false}},
		// An OAUTHBEARER broker error (RFC 7628 section 3.2.2) in the
		// response's AuthBytes quoting the bearer token: the AuthBytes
		// hold no ErrorMessage, their "error" part is withheld.
		{"oauth error quoting the token", "OAUTHBEARER", 36, byts("n,,\x01auth=Bearer eyJhbGciOiJIUzI1NiJ9.kwOAuthTok\x01\x01"),
			"003a" + str("invalid") + byts(`{"status":"invalid_token eyJhbGciOiJIUzI1NiJ9.kwOAuthTok"}`) + "0000000000000000",
			[]bool{false, true}},
		// AlterConfigsRequest v0: Resources [2]: (ResourceType 2, "t",
		// Configs [1]: my.db.password = hunter2pw), (2, "u", Configs [1]:
		// retention.ms = 1000); ValidateOnly false. The response v0:
		// ThrottleTimeMs, Responses [2]: ErrorCode 40, ErrorMessage,
		// ResourceType, ResourceName.
		{"config value quoted", "", 33,
			"00000002" + "02" + str("t") + "00000001" + str("my.db.password") + str("hunter2pw") +
				"02" + str("u") + "00000001" + str("retention.ms") + str("1000") + "00",
			"00000000" + "00000002" +
				"0028" + str("Invalid value hunter2pw for configuration my.db.password") + "02" + str("t") +
				"0028" + str("Invalid value 1000 for configuration retention.ms") + "02" + str("u"),
			[]bool{true, false}},
	} {
		for _, show := range []bool{false, true} {
			d := &Decoder{ShowSecrets: show, SASLMechanism: c.mech}
			rb, err := hex.DecodeString(c.reqBody)
			if err != nil {
				t.Fatal(err)
			}
			sb, err := hex.DecodeString(c.respBody)
			if err != nil {
				t.Fatal(err)
			}
			ver := int16(1)
			if c.reqKey == 33 {
				ver = 0
			}
			req := d.DecodeBody(c.reqKey, ver, false, rb)
			resp := d.DecodeBody(c.reqKey, ver, true, sb)
			if req.Err != nil || resp.Err != nil {
				t.Fatalf("%s: %v %v", c.name, req.Err, resp.Err)
			}
			var msgs []*Node
			var walk func(n *Node)
			walk = func(n *Node) {
				if n.Field != nil && n.Field.Role == RoleErrorMessage || n.Type == "sasl" {
					msgs = append(msgs, n)
				}
				for _, ch := range n.Children {
					walk(ch)
				}
			}
			walk(resp.Root)
			before := make([]string, len(msgs))
			for i, m := range msgs {
				before[i] = m.Str
			}
			got := WithholdEchoes(req, resp)
			want := 0
			for i, m := range msgs {
				w := c.withheld[i] && !show
				if w {
					want++
				}
				if w != (m.Flags&FlagRedacted != 0) || w != (m.Str == "") || w != (m.Note == EchoNote) {
					t.Errorf("%s show=%v: message %d %q: withheld %v, want %v (%+v)", c.name, show, i, before[i], m.Flags&FlagRedacted != 0, w, m)
				}
				if !w && m.Str != before[i] {
					t.Errorf("%s show=%v: message %d changed to %q", c.name, show, i, m.Str)
				}
			}
			if got != want {
				t.Errorf("%s show=%v: %d withheld, want %d", c.name, show, got, want)
			}
			if strings.Contains(c.name, "config") && !show {
				if v := req.Root.Child("Resources").Child("[0]").Child("Configs").Child("[0]").Child("Value"); v.Flags&FlagRedacted == 0 {
					t.Fatalf("%s: the request's value itself is not withheld: %+v", c.name, v)
				}
			}
		}
	}
}

// A message that carries secrets and does not decode withholds its
// integers of four bytes or more and its UUIDs as it does its strings:
// read out of place they hold a token's bytes. SaslAuthenticateResponse v2
// "00 00 | 00 | 00 | 09 'LEAKdec' ..." read with its AuthBytes null puts
// "\x09LEAKdec" in SessionLifetimeMs (669986591311422819); the two-byte
// ErrorCode stays, as the message's shape does.
func TestMisplacedIntegersWithheld(t *testing.T) {
	body, err := hex.DecodeString("0000" + "00" + "00" + "094c45414b646563" + "35000000000000000000")
	if err != nil {
		t.Fatal(err)
	}
	for _, show := range []bool{false, true} {
		tr := (&Decoder{ShowSecrets: show}).DecodeBody(36, 2, true, body)
		if tr.Err == nil {
			t.Fatal("decoded without an error")
		}
		life, code := tr.Root.Child("SessionLifetimeMs"), tr.Root.Child("ErrorCode")
		if life == nil || code == nil {
			t.Fatalf("no SessionLifetimeMs or ErrorCode in %+v", tr.Root)
		}
		if show {
			if life.Flags&FlagRedacted != 0 || life.Int != 669986591311422819 {
				t.Errorf("shown: %+v", life)
			}
			continue
		}
		if life.Flags&FlagRedacted == 0 || life.Int != 0 || !strings.Contains(life.Note, "misplaced") {
			t.Errorf("SessionLifetimeMs not withheld: %+v", life)
		}
		if code.Flags&FlagRedacted != 0 || code.Int != 0 || code.Len != 2 {
			t.Errorf("ErrorCode: %+v", code)
		}
	}
	// A message that carries no secret keeps its integers: MetadataResponse
	// v1, Brokers [1]: NodeId 7, Host "h", Port 9092, Rack null, and no
	// ControllerId.
	md, err := hex.DecodeString("00000001" + "00000007" + "000168" + "00002384" + "ffff")
	if err != nil {
		t.Fatal(err)
	}
	tr := (&Decoder{}).DecodeBody(3, 1, true, md)
	n := tr.Root.Child("Brokers").Child("[0]").Child("NodeId")
	if tr.Err == nil || n == nil || n.Flags&FlagRedacted != 0 || n.Int != 7 {
		t.Errorf("metadata: %v %+v", tr.Err, n)
	}
}
