package secretcorpus

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"

	"github.com/kwire/kwire/protocol"
)

// Secret is a value the corpus hides: no default output may show it, in
// any encoding; --show-secrets shows it.
type Secret struct {
	Case  string // the case that holds it
	Value []byte
	// Text says the value is printable ASCII (outputs may quote it as
	// text); other values are binary (HMACs, salted passwords).
	Text bool
	// Whole says to look for the whole value only, not for windows of
	// it: for secrets of little entropy that share parts with what may be
	// shown ("capgen-secret" and the client ID "capgen-sasl").
	Whole bool
}

// Seg is one TCP segment of a connection, or a gap: Lost client bytes
// never captured (the sequence numbers jump).
type Seg struct {
	FromClient bool
	Data       []byte
	Lost       int
}

// Conn is one TCP connection to a broker on port 9092, from its own client
// port: handshake, the segments, and a FIN from the client unless Cut
// (the capture ends while a frame is still arriving).
type Conn struct {
	Name string
	Segs []Seg
	Cut  bool
}

// Frame is one whole frame, for kwire decode: a request frame (decode
// HEX), or a response frame to Key version Ver (decode --frame --response
// --api Key --version Ver). Raw marks a raw SASL token, which kwire
// decode cannot take.
type Frame struct {
	Case     string
	Bytes    []byte
	Response bool
	Key, Ver int16
}

// Corpus is the hostile corpus.
type Corpus struct {
	Conns   []Conn
	Frames  []Frame
	Secrets []Secret
	// Visible are values of the corpus that are not secrets and that
	// kwire read -V must show: user names, config names and a benign
	// config value, a SCRAM salt, a delegation token's ID (controls: a
	// redaction that withheld everything would pass the rest).
	Visible []string

	rng *rand.Rand
}

// Build returns the corpus. It is deterministic.
func Build() *Corpus {
	c := &Corpus{rng: rand.New(rand.NewPCG(1, 2))}
	c.fieldCases()
	c.configCases()
	c.saslCases()
	c.rawSASLCases()
	c.envelopeCases()
	c.unparsedCases()
	c.cutCases()
	c.lossCases()
	c.metadataLogCases()
	return c
}

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// text returns a new printable secret of n characters for case name.
func (c *Corpus) text(name string, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[c.rng.IntN(len(alnum))]
	}
	copy(b, "kwS")
	c.Secrets = append(c.Secrets, Secret{Case: name, Value: b, Text: true})
	return b
}

// binary returns a new binary secret of n bytes for case name.
func (c *Corpus) binary(name string, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(c.rng.Uint32())
	}
	c.Secrets = append(c.Secrets, Secret{Case: name, Value: b})
	return b
}

// exchange adds a connection holding one exchange (request and, when not
// nil, response frames) and the frames for decode.
func (c *Corpus) exchange(name string, key, ver int16, req, resp []byte) {
	conn := Conn{Name: name, Segs: []Seg{{FromClient: true, Data: req}}}
	c.Frames = append(c.Frames, Frame{Case: name, Bytes: req, Key: key, Ver: ver})
	if resp != nil {
		conn.Segs = append(conn.Segs, Seg{Data: resp})
		c.Frames = append(c.Frames, Frame{Case: name, Bytes: resp, Response: true, Key: key, Ver: ver})
	}
	c.Conns = append(c.Conns, conn)
}

// encode encodes key's request (response false) or response at ver.
func encode(key, ver int16, response bool, fill Fill, tags ...Tag) []byte {
	m := protocol.Lookup(key, response, ver)
	if m == nil {
		panic(fmt.Sprintf("secretcorpus: no schema for key %d v%d response %v", key, ver, response))
	}
	return Encode(m, ver, fill, tags...)
}

// pair returns a request and a response frame of key at ver, with corr 1.
func pair(key, ver int16, reqFill, respFill Fill) (req, resp []byte) {
	req = RequestFrame(key, ver, 1, "kwire-corpus", encode(key, ver, false, reqFill))
	resp = ResponseFrame(key, ver, 1, encode(key, ver, true, respFill))
	return req, resp
}

// hasSecret reports whether fields, in version v, hold a field of secrecy s.
func hasSecret(fields []protocol.Field, v int16, s protocol.Secrecy) bool {
	for i := range fields {
		f := &fields[i]
		if !f.Versions.Contains(v) {
			continue
		}
		if f.Secret == s || hasSecret(f.Fields, v, s) {
			return true
		}
	}
	return false
}

// fieldCases: every field that is always a secret, in every version that
// has it.
func (c *Corpus) fieldCases() {
	for _, m := range protocol.Schemas {
		if m.APIKey < 0 {
			continue
		}
		for v := m.ValidVersions.Min; v <= m.ValidVersions.Max; v++ {
			if !hasSecret(m.Fields, v, protocol.SecretAlways) {
				continue
			}
			name := fmt.Sprintf("%s v%d", m.Name, v)
			fill := func(path string, f *protocol.Field) (any, bool) {
				switch {
				case f.Secret == protocol.SecretAlways:
					return c.binary(name+" "+path, 24), true
				case f.Name == "TokenId":
					id := "kwtoken-" + strings.ReplaceAll(path, ".", "-")
					c.Visible = append(c.Visible, id)
					return id, true
				}
				return nil, false
			}
			resp := m.Type == protocol.TypeResponse
			var req, res []byte
			if resp {
				req, res = pair(m.APIKey, v, nil, fill)
			} else {
				req, res = pair(m.APIKey, v, fill, nil)
			}
			c.exchange(name, m.APIKey, v, req, res)
		}
	}
}

// configEntry is one config a case puts in a message.
type configEntry struct {
	name      string
	byName    bool   // its name says it is a secret
	sensitive bool   // the broker says so: IsSensitive
	password  bool   // the broker says so: ConfigType PASSWORD
	synonym   string // its synonym's name (DescribeConfigs)
	url       bool   // its value is a JDBC URL whose userinfo holds the secret
	value     string // a benign value to show (a URL without a password)
}

// configEntries are the configs of every config case. Which are secrets
// is stated here, not asked of the code under test.
var configEntries = []configEntry{
	{name: "ssl.keystore.password", byName: true},
	{name: "retention.ms", synonym: "log.retention.ms"},
	{name: "listener.name.internal.scram-sha-256.sasl.jaas.config", byName: true, synonym: "sasl.jaas.config"},
	{name: "listener.name.external.ssl.key.password", byName: true},
	{name: "my.plugin.api.secret", byName: true},
	{name: "confluent.tier.s3.aws.secret.access.key", byName: true},
	{name: "ssl.keystore.key", byName: true},
	{name: "kwire.custom.setting", sensitive: true, synonym: "kwire.custom.setting"},
	{name: "kwire.other.setting", password: true},
	// Names that normalise to a secret's (case, "_" and "-" as ".", a NUL
	// or whitespace around), and the user-info family ("user:password":
	// Schema Registry's and Connect's clients).
	{name: "sasl_jaas_config", byName: true},
	{name: "SSL_KEYSTORE_PASSWORD", byName: true},
	{name: "sasl.jaas.config\x00", byName: true},
	{name: " ssl.key.password\t", byName: true},
	{name: "basic.auth.user.info", byName: true},
	{name: "schema.registry.basic.auth.user.info", byName: true},
	{name: "http.auth.basic.userinfo", byName: true},
	{name: "bearer.auth.token", byName: true},
	// A value that holds a password in its URL form, and one that does
	// not.
	{name: "connection.url", url: true},
	{name: "schema.registry.url", value: "https://kw-registry.example.com:8081"},
}

// configCases: configs in every message that carries them, in every
// version: sensitive by name (Kafka's PASSWORD configs, behind listener
// and mechanism prefixes, a plugin's secret-looking name), by the
// broker's IsSensitive and by ConfigType PASSWORD, and benign ones, whose
// values stay visible.
func (c *Corpus) configCases() {
	c.Visible = append(c.Visible, "retention.ms", "604800000", "kwire.custom.setting", "ssl.keystore.password",
		"basic.auth.user.info", "connection.url", "https://kw-registry.example.com:8081")
	for _, m := range protocol.Schemas {
		if m.APIKey < 0 {
			continue
		}
		for v := m.ValidVersions.Min; v <= m.ValidVersions.Max; v++ {
			if !hasSecret(m.Fields, v, protocol.SecretConfigValue) {
				continue
			}
			name := fmt.Sprintf("%s v%d configs", m.Name, v)
			type entries struct{ sensitive, ctype bool } // the broker's flags in this version
			arrays := map[string]entries{}
			has := func(fields []protocol.Field, field string) bool {
				for i := range fields {
					if fields[i].Name == field && fields[i].Versions.Contains(v) {
						return true
					}
				}
				return false
			}
			fill := func(path string, f *protocol.Field) (any, bool) {
				if f.Kind == protocol.TypeArray && containsSecrecy(f.Fields, protocol.SecretConfigValue) {
					if f.Name == "Synonyms" {
						return 1, true
					}
					arrays[path] = entries{has(f.Fields, "IsSensitive"), has(f.Fields, "ConfigType")}
					return len(configEntries), true
				}
				for arr, flags := range arrays {
					rest, ok := strings.CutPrefix(path, arr+"[")
					if !ok {
						continue
					}
					var k int
					var field string
					if _, err := fmt.Sscanf(rest, "%d]", &k); err != nil || k >= len(configEntries) {
						return nil, false
					}
					field = rest[strings.IndexByte(rest, ']')+2:]
					e := configEntries[k]
					secret := e.byName || e.sensitive && flags.sensitive || e.password && flags.ctype || e.url
					synonym := strings.HasPrefix(field, "Synonyms[0].")
					field = strings.TrimPrefix(field, "Synonyms[0].")
					switch field {
					case "Name", "Key":
						if synonym {
							return e.synonym, true
						}
						return e.name, true
					case "Value":
						switch {
						case e.url:
							// The password in the URL is the secret; the
							// whole value is withheld.
							return "jdbc:postgresql://kwadmin:" + string(c.text(name+" "+path, 24)) + "@db.example.com:5432/orders", true
						case e.value != "":
							return e.value, true
						case secret && strings.HasSuffix(e.name, "jaas.config") && !synonym:
							// The password inside a JAAS line is the
							// secret; the whole value is withheld.
							return `org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="` +
								string(c.text(name+" "+path, 24)) + `";`, true
						case secret:
							return string(c.text(name+" "+path, 24)), true
						case k == 1:
							return "604800000", true
						}
						c.Visible = append(c.Visible, fmt.Sprintf("kwire-visible-%d", k))
						return fmt.Sprintf("kwire-visible-%d", k), true
					case "IsSensitive":
						return e.sensitive, true
					case "ConfigType":
						if e.password {
							return int64(9), true // PASSWORD
						}
						return int64(2), true // STRING
					}
					return nil, false
				}
				return nil, false
			}
			var req, res []byte
			if m.Type == protocol.TypeResponse {
				req, res = pair(m.APIKey, v, nil, fill)
			} else {
				req, res = pair(m.APIKey, v, fill, nil)
			}
			c.exchange(name, m.APIKey, v, req, res)
		}
	}
}

func containsSecrecy(fields []protocol.Field, s protocol.Secrecy) bool {
	for i := range fields {
		if fields[i].Secret == s {
			return true
		}
	}
	return false
}

// saslStep is one SaslAuthenticate round: the client's token and the
// broker's.
type saslStep struct{ client, broker []byte }

// saslCases: SaslHandshake v1 then SaslAuthenticate rounds of every
// mechanism and message, at every SaslAuthenticate version, and tokens
// that do not parse.
func (c *Corpus) saslCases() {
	for v := int16(0); v <= 2; v++ {
		add := func(label, mech string, steps func(name string) []saslStep) {
			name := fmt.Sprintf("SASL %s v%d", label, v)
			c.saslConn(name, mech, v, steps(name))
		}
		add("PLAIN", "PLAIN", func(n string) []saslStep {
			c.Visible = append(c.Visible, "kw-plain-user")
			return []saslStep{{client: cat("\x00kw-plain-user\x00", c.text(n, 24)), broker: nil}}
		})
		add("PLAIN with authzid", "PLAIN", func(n string) []saslStep {
			return []saslStep{{client: cat("admin\x00kw-plain-user\x00", c.text(n, 24))}}
		})
		add("PLAIN with a NUL in the password", "PLAIN", func(n string) []saslStep {
			return []saslStep{{client: cat("\x00kw-plain-user\x00", c.text(n, 16), "\x00", c.text(n, 16))}}
		})
		add("PLAIN after a SCRAM handshake", "SCRAM-SHA-256", func(n string) []saslStep {
			return []saslStep{{client: cat("\x00kw-plain-user\x00", c.text(n, 24))}}
		})
		add("SCRAM-SHA-256", "SCRAM-SHA-256", func(n string) []saslStep {
			c.Visible = append(c.Visible, "kw-scram-user", "kwsalt0123456789")
			return []saslStep{
				{client: []byte("n,,n=kw-scram-user,r=cnonce0123456789"), broker: []byte("r=cnonce0123456789snonce,s=kwsalt0123456789,i=4096")},
				{client: cat("c=biws,r=cnonce0123456789snonce,p=", c.text(n, 44)), broker: cat("v=", c.text(n, 44))},
			}
		})
		add("SCRAM-SHA-512 delegation token", "SCRAM-SHA-512", func(n string) []saslStep {
			c.Visible = append(c.Visible, "kwTokenId42")
			return []saslStep{
				{client: []byte("n,,n=kwTokenId42,r=cnonceABCDEF,tokenauth=true"), broker: []byte("r=cnonceABCDEFsnonce,s=c2FsdHNhbHQ=,i=4096")},
				{client: cat("c=biws,r=cnonceABCDEFsnonce,p=", c.text(n, 88)), broker: cat("v=", c.text(n, 88))},
			}
		})
		add("SCRAM malformed client-final", "SCRAM-SHA-256", func(n string) []saslStep {
			return []saslStep{{client: cat("c=biws,,p=", c.text(n, 44)), broker: []byte("e=invalid-encoding")}}
		})
		add("SCRAM unknown extension", "SCRAM-SHA-256", func(n string) []saslStep {
			return []saslStep{{client: cat("n,,n=kw-scram-user,r=cnonce,kwext=", c.text(n, 24)), broker: []byte("e=extensions-not-supported")}}
		})
		add("SCRAM server-final with extension", "SCRAM-SHA-256", func(n string) []saslStep {
			return []saslStep{{client: []byte("n,,n=kw-scram-user,r=abc"), broker: cat("v=", c.text(n, 44), ",kwx=", c.text(n, 20))}}
		})
		add("OAUTHBEARER", "OAUTHBEARER", func(n string) []saslStep {
			jwt := cat("eyJhbGciOiJSUzI1NiJ9.", c.text(n, 40), ".", c.text(n, 40))
			return []saslStep{{client: cat("n,,\x01auth=Bearer ", jwt, "\x01\x01")}}
		})
		add("OAUTHBEARER with extensions and an error", "OAUTHBEARER", func(n string) []saslStep {
			c.Visible = append(c.Visible, "kafka.example.com", "invalid_token")
			return []saslStep{
				{client: cat("n,a=kw-oauth-user,\x01host=kafka.example.com\x01port=9093\x01auth=Bearer ", c.text(n, 60), "\x01traceId=", c.text(n, 20), "\x01\x01"),
					broker: []byte(`{"status":"invalid_token","scope":"kafka","openid-configuration":"https://idp.example.com/.well-known/openid-configuration"}`)},
				{client: []byte("\x01")},
			}
		})
		add("OAUTHBEARER malformed", "OAUTHBEARER", func(n string) []saslStep {
			return []saslStep{{client: cat("n,,\x01auth=Bearer ", c.text(n, 40))}}
		})
		add("OAUTHBEARER unknown broker JSON", "OAUTHBEARER", func(n string) []saslStep {
			return []saslStep{{client: []byte("n,,\x01auth=Bearer x\x01\x01"), broker: cat(`{"status":"invalid_token","session":"`, c.text(n, 24), `"}`)}}
		})
		// Tokens that are not well-formed messages of their mechanism,
		// secrets in parts that would be shown if they were split
		// leniently: withheld whole.
		add("SCRAM client-final whose channel binding swallowed a frame", "SCRAM-SHA-256", func(n string) []saslStep {
			return []saslStep{{client: cat("c=\x00\x00\x000\x00$\x00\x01\x00\x00\x00\x04\x00\x03adv\x00\x00\x00\x1f\x00alice\x00", c.text(n, 24), ",r=abc,p=cHJvb2Y=")}}
		})
		add("SCRAM client-final with a damaged comma", "SCRAM-SHA-256", func(n string) []saslStep {
			return []saslStep{{client: cat("c=biws,r=cnonce0123456789snonce\x00p=", c.text(n, 44))}}
		})
		add("SCRAM server-final swallowing a frame", "SCRAM-SHA-256", func(n string) []saslStep {
			return []saslStep{{client: []byte("n,,n=kw-scram-user,r=abc"), broker: cat("e=x\x00\x00\x00\x19\x00\x24\x00\x01", c.text(n, 24))}}
		})
		add("OAUTHBEARER with a damaged separator", "OAUTHBEARER", func(n string) []saslStep {
			return []saslStep{{client: cat("n,,\x01host=h\x00auth=Bearer ", c.text(n, 40), "\x01ext=v\x01\x01")}}
		})
		add("PLAIN swallowing a frame", "PLAIN", func(n string) []saslStep {
			return []saslStep{{client: cat("\x00kw-plain-user\x00x\x00\x00\x00\x19\x00\x24\x00\x01\x00\x00\x00\x03\x00\x03adv\x00\x00\x00\x1f\x00alice\x00", c.text(n, 24))}}
		})
		add("OAUTHBEARER with two NULs without a captured handshake", "", func(n string) []saslStep {
			return []saslStep{{client: cat("n,,\x01auth=Bearer eyJhbGciOiJIUzI1NiJ9.", c.text(n, 40), "\x01ext=a\x00b\x00c\x01\x01")}}
		})
		add("SCRAM client-final with two NULs without a captured handshake", "", func(n string) []saslStep {
			return []saslStep{{client: cat("c=biws,r=abc,p=", c.text(n, 44), "\x00kw-plain-user\x00x")}}
		})
		add("GSSAPI", "GSSAPI", func(n string) []saslStep {
			return []saslStep{{client: cat("\x60\x82\x01\x00\x06\x09\x2a\x86\x48\x86\xf7\x12\x01\x02\x02", c.binary(n, 32)),
				broker: cat("\x60\x81\x80\x06\x09\x2a\x86\x48\x86\xf7\x12\x01\x02\x02", c.binary(n, 32))}}
		})
		add("unknown mechanism", "AWS_MSK_IAM", func(n string) []saslStep {
			return []saslStep{{client: cat(`{"version":"2020_10_22","x-amz-signature":"`, c.text(n, 32), `"}`), broker: cat(`{"version":"2020_10_22","request-id":"`, c.text(n, 24), `"}`)}}
		})
		add("PLAIN without a captured handshake", "", func(n string) []saslStep {
			return []saslStep{{client: cat("\x00kw-plain-user\x00", c.text(n, 24))}}
		})
		add("SCRAM without a captured handshake", "", func(n string) []saslStep {
			return []saslStep{
				{client: []byte("n,,n=kw-scram-user,r=abc"), broker: []byte("r=abcdef,s=kwsalt0123456789,i=4096")},
				{client: cat("c=biws,r=abcdef,p=", c.text(n, 44)), broker: cat("v=", c.text(n, 44))},
			}
		})
		add("OAUTHBEARER without a captured handshake", "", func(n string) []saslStep {
			return []saslStep{{client: cat("n,,\x01auth=Bearer ", c.text(n, 40), "\x01\x01")}}
		})
		add("binary token without a captured handshake", "", func(n string) []saslStep {
			return []saslStep{{client: c.binary(n, 32), broker: c.binary(n, 32)}}
		})
	}
}

func cat(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch x := p.(type) {
		case string:
			b = append(b, x...)
		case []byte:
			b = append(b, x...)
		}
	}
	return b
}

// saslConn adds a connection: SaslHandshake v1 naming mech (left out when
// mech is ""), then a SaslAuthenticate v exchange per step.
func (c *Corpus) saslConn(name, mech string, v int16, steps []saslStep) {
	conn := Conn{Name: name}
	corr := int32(1)
	if mech != "" {
		req := RequestFrame(17, 1, corr, "kwire-corpus", encode(17, 1, false, func(p string, f *protocol.Field) (any, bool) {
			return mech, f.Name == "Mechanism"
		}))
		resp := ResponseFrame(17, 1, corr, encode(17, 1, true, func(p string, f *protocol.Field) (any, bool) {
			if strings.HasPrefix(p, "Mechanisms[") {
				return mech, true
			}
			return nil, false
		}))
		conn.Segs = append(conn.Segs, Seg{FromClient: true, Data: req}, Seg{Data: resp})
		corr++
	}
	for _, s := range steps {
		client, broker := s.client, s.broker
		req := RequestFrame(36, v, corr, "kwire-corpus", encode(36, v, false, func(p string, f *protocol.Field) (any, bool) {
			return client, f.Name == "AuthBytes"
		}))
		resp := ResponseFrame(36, v, corr, encode(36, v, true, func(p string, f *protocol.Field) (any, bool) {
			switch f.Name {
			case "AuthBytes":
				return broker, true
			case "ErrorMessage":
				return nil, true
			}
			return nil, false
		}))
		conn.Segs = append(conn.Segs, Seg{FromClient: true, Data: req}, Seg{Data: resp})
		c.Frames = append(c.Frames, Frame{Case: name, Bytes: req, Key: 36, Ver: v},
			Frame{Case: name, Bytes: resp, Response: true, Key: 36, Ver: v})
		corr++
	}
	c.Conns = append(c.Conns, conn)
}

// raw returns a raw SASL v0 token frame: a 4-byte length and the token.
func raw(tok []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(tok))), tok...)
}

// rawSASLCases: SaslHandshake v0, then raw tokens (KIP-43), of PLAIN,
// SCRAM and GSSAPI (without a handshake, Kafka 0.9 style), and a raw
// token the splitter must resynchronise over.
func (c *Corpus) rawSASLCases() {
	v0 := func(name, mech string, toks ...Seg) {
		conn := Conn{Name: name}
		if mech != "" {
			req := RequestFrame(17, 0, 1, "kwire-corpus", encode(17, 0, false, func(p string, f *protocol.Field) (any, bool) {
				return mech, f.Name == "Mechanism"
			}))
			resp := ResponseFrame(17, 0, 1, encode(17, 0, true, func(p string, f *protocol.Field) (any, bool) {
				if strings.HasPrefix(p, "Mechanisms[") {
					return mech, true
				}
				return nil, false
			}))
			conn.Segs = append(conn.Segs, Seg{FromClient: true, Data: req}, Seg{Data: resp})
		}
		conn.Segs = append(conn.Segs, toks...)
		// Kafka framing resumes: a Metadata request and response.
		req, resp := pair(3, 1, nil, nil)
		conn.Segs = append(conn.Segs, Seg{FromClient: true, Data: req}, Seg{Data: resp})
		c.Conns = append(c.Conns, conn)
	}
	n := "raw SASL PLAIN"
	v0(n, "PLAIN", Seg{FromClient: true, Data: raw(cat("\x00kw-raw-user\x00", c.text(n, 24)))}, Seg{Data: raw(nil)})
	n = "raw SASL SCRAM-SHA-256"
	v0(n, "SCRAM-SHA-256",
		Seg{FromClient: true, Data: raw([]byte("n,,n=kw-raw-user,r=abc"))}, Seg{Data: raw([]byte("r=abcdef,s=kwsalt0123456789,i=4096"))},
		Seg{FromClient: true, Data: raw(cat("c=biws,r=abcdef,p=", c.text(n, 44)))}, Seg{Data: raw(cat("v=", c.text(n, 44)))})
	n = "raw SASL OAUTHBEARER"
	v0(n, "OAUTHBEARER", Seg{FromClient: true, Data: raw(cat("n,,\x01auth=Bearer ", c.text(n, 40), "\x01\x01"))}, Seg{Data: raw(nil)})
	n = "raw SASL PLAIN malformed"
	v0(n, "PLAIN", Seg{FromClient: true, Data: raw(cat("kw-raw-user-", c.text(n, 24)))}, Seg{Data: raw(nil)})
	n = "raw GSSAPI without a handshake"
	v0(n, "", Seg{FromClient: true, Data: raw(cat("\x60\x82\x01\x00\x06\x09\x2a\x86\x48\x86\xf7\x12\x01\x02\x02", c.binary(n, 32)))},
		Seg{Data: raw(cat("\x60\x81\x80\x06\x09\x2a\x86\x48\x86\xf7\x12\x01\x02\x02", c.binary(n, 32)))})
	// Tokens whose SaslHandshake v0 was not captured, told by their
	// shape alone, whatever the password holds.
	n = "raw SASL PLAIN without a handshake, a NUL in the password"
	v0(n, "", Seg{FromClient: true, Data: raw(cat("\x00kw-raw-user\x00", c.text(n, 16), "\x00", c.text(n, 16)))}, Seg{Data: raw(nil)})
	n = "raw SASL PLAIN without a handshake, control bytes in the password"
	v0(n, "", Seg{FromClient: true, Data: raw(cat("\x00kw-raw-user\x00", c.text(n, 16), "\t\x01", c.text(n, 16)))}, Seg{Data: raw(nil)})
	n = "raw SASL PLAIN without a handshake, a password over 1 KiB"
	v0(n, "", Seg{FromClient: true, Data: raw(cat("\x00kw-raw-user\x00", c.text(n, 1500)))}, Seg{Data: raw(nil)})
	n = "raw SASL OAUTHBEARER without a handshake"
	v0(n, "", Seg{FromClient: true, Data: raw(cat("n,,\x01auth=Bearer ", c.text(n, 40), "\x01\x01"))}, Seg{Data: raw(nil)})
	n = "raw SASL OAUTHBEARER with two NULs without a handshake"
	v0(n, "", Seg{FromClient: true, Data: raw(cat("n,,\x01auth=Bearer eyJhbGciOiJIUzI1NiJ9.", c.text(n, 40), "\x01ext=a\x00b\x00c\x01\x01"))}, Seg{Data: raw(nil)})
	n = "raw SASL SCRAM client-final with two NULs without a handshake"
	v0(n, "", Seg{FromClient: true, Data: raw(cat("c=biws,r=abc,p=", c.text(n, 44), "\x00kw-raw-user\x00x"))}, Seg{Data: raw(nil)})
	n = "raw SASL PLAIN resync"
	// A length no token has, then bytes that cannot start one (printable
	// ASCII read as a length is over 100 MiB): skipped to the next token.
	v0(n, "PLAIN", Seg{FromClient: true, Data: cat("\xff\xff\xff\xff", c.text(n, 24))},
		Seg{FromClient: true, Data: raw(cat("\x00kw-raw-user\x00", c.text(n, 24)))}, Seg{Data: raw(nil)})
}

// envelopeCases: KIP-590 Envelope requests forwarding an AlterConfigs
// request with a password (decoded: the password withheld inside) and
// bytes that are no request (withheld whole), and a response.
func (c *Corpus) envelopeCases() {
	n := "Envelope forwarding AlterConfigs"
	inner := RequestFrame(33, 2, 7, "kwire-forwarded", encode(33, 2, false, func(p string, f *protocol.Field) (any, bool) {
		switch {
		case f.Name == "Configs":
			return 1, true
		case strings.HasSuffix(p, "Configs[0].Name"):
			return "ssl.truststore.password", true
		case strings.HasSuffix(p, "Configs[0].Value"):
			return string(c.text(n, 24)), true
		}
		return nil, false
	}))[4:]
	envelope := func(data []byte) Fill {
		return func(p string, f *protocol.Field) (any, bool) {
			switch f.Name {
			case "RequestData":
				return data, true
			case "ClientHostAddress":
				return []byte{10, 0, 0, 1}, true
			}
			return nil, false
		}
	}
	req, resp := pair(58, 0, envelope(inner), func(p string, f *protocol.Field) (any, bool) {
		if f.Name == "ResponseData" {
			return c.binary(n+" response", 32), true
		}
		return nil, false
	})
	c.exchange(n, 58, 0, req, resp)
	n = "Envelope forwarding bytes that are no request"
	req, resp = pair(58, 0, envelope(cat("\xff\xff\xff\xff", c.text(n, 32))), nil)
	c.exchange(n, 58, 0, req, resp)
}

// unparsedCases: bytes of secret-bearing messages kwire cannot decode: an
// unknown SaslAuthenticate version, bytes left over after a
// SaslAuthenticate request, unknown tagged fields, and a message that
// fails in the middle of a config value.
func (c *Corpus) unparsedCases() {
	n := "SaslAuthenticate unknown version"
	req := RequestFrame(36, 9, 1, "kwire-corpus", cat("\x1a\x00kw-plain-user\x00", c.text(n, 24), "\x00"))
	resp := ResponseFrame(36, 9, 1, cat("\x00\x00\x00\x30v=", c.text(n, 44), "\x00"))
	c.exchange(n, 36, 9, req, resp)

	n = "SaslAuthenticate leftover"
	body := encode(36, 1, false, func(p string, f *protocol.Field) (any, bool) {
		return []byte("\x00kw-plain-user\x00x"), f.Name == "AuthBytes"
	})
	req = RequestFrame(36, 1, 1, "kwire-corpus", cat(body, c.text(n, 24)))
	resp = ResponseFrame(36, 1, 1, encode(36, 1, true, nil))
	c.exchange(n, 36, 1, req, resp)

	n = "SaslAuthenticate unknown tag"
	body = encode(36, 2, false, func(p string, f *protocol.Field) (any, bool) {
		return []byte("\x00kw-plain-user\x00x"), f.Name == "AuthBytes"
	}, Tag{Tag: 77, Data: c.text(n, 24)})
	req = RequestFrame(36, 2, 1, "kwire-corpus", body)
	resp = ResponseFrame(36, 2, 1, encode(36, 2, true, nil))
	c.exchange(n, 36, 2, req, resp)

	n = "CreateTopics unknown tag"
	body = encode(19, 7, false, nil, Tag{Tag: 99, Data: c.text(n, 24)})
	req, resp = RequestFrame(19, 7, 1, "kwire-corpus", body), ResponseFrame(19, 7, 1, encode(19, 7, true, nil))
	c.exchange(n, 19, 7, req, resp)

	n = "AlterConfigs cut inside a value"
	full := c.text(n, 40)
	body = encode(33, 0, false, func(p string, f *protocol.Field) (any, bool) {
		switch {
		case f.Name == "Configs":
			return 1, true
		case strings.HasSuffix(p, "Configs[0].Name"):
			return "kwire.harmless", true
		case strings.HasSuffix(p, "Configs[0].Value"):
			return string(full), true
		}
		return nil, false
	})
	i := strings.Index(string(body), string(full))
	c.Secrets[len(c.Secrets)-1].Value = full[:24] // what the frame holds
	req = RequestFrame(33, 0, 1, "kwire-corpus", body[:i+24])
	resp = ResponseFrame(33, 0, 1, encode(33, 0, true, nil))
	c.exchange(n, 33, 0, req, resp)
}

// cutCases: frames the capture does not hold whole, which kwire does not
// decode: cut by the end of the capture, by lost bytes, and an orphan
// response.
func (c *Corpus) cutCases() {
	n := "SaslAuthenticate cut by the end of the capture"
	req := RequestFrame(36, 2, 2, "kwire-corpus", encode(36, 2, false, func(p string, f *protocol.Field) (any, bool) {
		return cat("\x00kw-plain-user\x00", c.text(n, 24), "\x00\x00\x00\x00\x00\x00\x00\x00"), f.Name == "AuthBytes"
	}))
	hs, hsr := pair(17, 1, func(p string, f *protocol.Field) (any, bool) { return "PLAIN", f.Name == "Mechanism" }, nil)
	c.Conns = append(c.Conns, Conn{Name: n, Cut: true, Segs: []Seg{{FromClient: true, Data: hs}, {Data: hsr}, {FromClient: true, Data: req[:len(req)-6]}}})

	n = "SaslAuthenticate cut by a gap"
	req = RequestFrame(36, 2, 2, "kwire-corpus", encode(36, 2, false, func(p string, f *protocol.Field) (any, bool) {
		return cat("\x00kw-plain-user\x00", c.text(n, 24), "\x00\x00\x00\x00\x00\x00\x00\x00"), f.Name == "AuthBytes"
	}))
	next := RequestFrame(3, 1, 3, "kwire-corpus", encode(3, 1, false, nil))
	nextResp := ResponseFrame(3, 1, 3, encode(3, 1, true, nil))
	c.Conns = append(c.Conns, Conn{Name: n, Segs: []Seg{{FromClient: true, Data: hs}, {Data: hsr},
		{FromClient: true, Data: req[:len(req)-6]}, {FromClient: true, Lost: 6}, {FromClient: true, Data: next}, {Data: nextResp}}})

	n = "CreateDelegationToken response cut by the end of the capture"
	dreq, dresp := pair(38, 3, nil, func(p string, f *protocol.Field) (any, bool) {
		if f.Name == "Hmac" {
			return c.binary(n, 24), true
		}
		return nil, false
	})
	c.Conns = append(c.Conns, Conn{Name: n, Cut: true, Segs: []Seg{{FromClient: true, Data: dreq}, {Data: dresp[:len(dresp)-3]}}})

	n = "CreateDelegationToken orphan response"
	_, dresp = pair(38, 3, nil, func(p string, f *protocol.Field) (any, bool) {
		if f.Name == "Hmac" {
			return c.binary(n, 24), true
		}
		return nil, false
	})
	md, mdr := pair(3, 1, nil, nil)
	c.Conns = append(c.Conns, Conn{Name: n, Segs: []Seg{{FromClient: true, Data: md}, {Data: mdr}, {Data: dresp}}})
}

// lossCases: credentials whose frame lost its start or whose lengths were
// damaged, so that kwire cannot say where they are: an AlterConfigs
// request and a RenewDelegationToken request whose first segment was not
// captured (the rest is skipped by a resync), and a DescribeConfigs
// response whose ErrorMessage length was damaged (a sensitive value then
// reads as a ResourceName).
func (c *Corpus) lossCases() {
	n := "AlterConfigs whose first segment was lost"
	password := c.text(n, 24)
	ac := RequestFrame(33, 2, 2, "kwire-corpus", encode(33, 2, false, func(p string, f *protocol.Field) (any, bool) {
		switch {
		case f.Name == "Configs":
			return 1, true
		case strings.HasSuffix(p, "Configs[0].Name"):
			return "ssl.keystore.password", true
		case strings.HasSuffix(p, "Configs[0].Value"):
			return string(password), true
		}
		return nil, false
	}))
	n = "RenewDelegationToken whose first segment was lost"
	hmac := c.binary(n, 24)
	rn := RequestFrame(39, 2, 3, "kwire-corpus", encode(39, 2, false, func(p string, f *protocol.Field) (any, bool) {
		return hmac, f.Name == "Hmac"
	}))
	md, mdr := pair(3, 1, nil, nil)
	next := RequestFrame(3, 1, 4, "kwire-corpus", encode(3, 1, false, nil))
	nextResp := ResponseFrame(3, 1, 4, encode(3, 1, true, nil))
	c.Conns = append(c.Conns, Conn{Name: n, Segs: []Seg{{FromClient: true, Data: md}, {Data: mdr},
		{FromClient: true, Lost: 20}, {FromClient: true, Data: ac[20:]},
		{FromClient: true, Lost: 16}, {FromClient: true, Data: rn[16:]},
		{FromClient: true, Data: next}, {Data: nextResp}}})

	n = "DescribeConfigs response with a damaged ErrorMessage length"
	value := c.text(n, 24)
	req, resp := pair(32, 4, nil, func(p string, f *protocol.Field) (any, bool) {
		switch {
		case f.Name == "ErrorMessage":
			return "", true
		case f.Name == "Configs":
			return 1, true
		case strings.HasSuffix(p, "Configs[0].Name"):
			return "ssl.key.password", true
		case strings.HasSuffix(p, "Configs[0].Value"):
			return string(value), true
		case strings.HasSuffix(p, "Configs[0].IsSensitive"):
			return true, true
		}
		return nil, false
	})
	// The ErrorMessage's compact length (1: empty) follows the length,
	// correlation ID, header tags, ThrottleTimeMs, the results' count and
	// ErrorCode: 4+4+1+4+1+2 bytes.
	if resp[16] != 1 {
		panic("secretcorpus: DescribeConfigs v4 response layout changed")
	}
	resp[16] = 0x04
	c.exchange(n, 32, 4, req, resp)
}

// metadataLogCases: Fetch responses of the KRaft metadata log
// (__cluster_metadata, topic ID Uuid(0, 1)) whose records hold a
// sasl.jaas.config password and a SCRAM credential, by topic ID (v16),
// by name (v12), and gzip-compressed.
func (c *Corpus) metadataLogCases() {
	for _, k := range []struct {
		name  string
		ver   int16
		codec byte
	}{
		{"KRaft metadata log Fetch v16", 16, 0},
		{"KRaft metadata log Fetch v12", 12, 0},
		{"KRaft metadata log Fetch v16 gzip", 16, 1},
	} {
		n := k.name
		value := cat(`listener.name.sasl_ssl.plain.sasl.jaas.config=... password="`, c.text(n, 24), `";`)
		key := c.binary(n+" key", 16)
		batch := recordBatch(k.codec, record(key, value, [2][]byte{[]byte("h"), c.text(n+" header", 20)}))
		req, resp := pair(1, k.ver, nil, func(p string, f *protocol.Field) (any, bool) {
			switch {
			case strings.HasSuffix(p, "Responses[0].Topic"):
				return "__cluster_metadata", true
			case strings.HasSuffix(p, "Responses[0].TopicId"):
				return []byte{15: 1}, true
			case f.Kind == protocol.TypeRecords:
				return batch, true
			}
			return nil, false
		})
		c.exchange(n, 1, k.ver, req, resp)
	}
}

// record encodes one record of a v2 batch (offset and timestamp deltas
// 0) with key, value and headers.
func record(key, value []byte, headers ...[2][]byte) []byte {
	var b []byte
	b = append(b, 0, 0, 0) // attributes, timestamp delta, offset delta
	b = binary.AppendVarint(b, int64(len(key)))
	b = append(b, key...)
	b = binary.AppendVarint(b, int64(len(value)))
	b = append(b, value...)
	b = binary.AppendVarint(b, int64(len(headers)))
	for _, h := range headers {
		b = binary.AppendVarint(b, int64(len(h[0])))
		b = append(b, h[0]...)
		b = binary.AppendVarint(b, int64(len(h[1])))
		b = append(b, h[1]...)
	}
	return append(binary.AppendVarint(nil, int64(len(b))), b...)
}

// recordBatch wraps records (one) in a v2 batch, compressed with codec 0
// (none) or 1 (gzip).
func recordBatch(codec byte, records []byte) []byte {
	if codec == 1 {
		var z bytes.Buffer
		w := gzip.NewWriter(&z)
		w.Write(records)
		w.Close()
		records = z.Bytes()
	}
	b := binary.BigEndian.AppendUint64(nil, 0) // BaseOffset
	b = binary.BigEndian.AppendUint32(b, 0)    // BatchLength, set below
	b = binary.BigEndian.AppendUint32(b, 0)    // PartitionLeaderEpoch
	b = append(b, 2)                           // Magic
	b = binary.BigEndian.AppendUint32(b, 0)    // Crc, set below
	b = binary.BigEndian.AppendUint16(b, uint16(codec))
	b = binary.BigEndian.AppendUint32(b, 0)          // LastOffsetDelta
	b = binary.BigEndian.AppendUint64(b, 0)          // BaseTimestamp
	b = binary.BigEndian.AppendUint64(b, 0)          // MaxTimestamp
	b = binary.BigEndian.AppendUint64(b, ^uint64(0)) // ProducerId -1
	b = binary.BigEndian.AppendUint16(b, 0xffff)     // ProducerEpoch -1
	b = binary.BigEndian.AppendUint32(b, 0xffffffff) // BaseSequence -1
	b = binary.BigEndian.AppendUint32(b, 1)          // one record
	b = append(b, records...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}
