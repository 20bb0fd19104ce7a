package protocol

import (
	"bytes"
	"encoding/base64"
	"errors"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
)

// This file says which schema fields hold secrets: one table
// (secretRules) and the config values that roles.go finds, applied once
// when the package initialises to every generation of every message in
// Schemas, setting Field.Secret. The
// decoder (interp.go) marks the nodes of those fields FlagRedacted,
// unless Decoder.ShowSecrets, and empties their values; renderers withhold
// what is so marked. Nothing outside this package decides what is secret.
//
// The table covers every secret-bearing field of every API key in the
// schema: SASL tokens (sasl.go decides which parts are secret, per
// mechanism), delegation-token HMACs, SCRAM credentials being written,
// the values of sensitive configs wherever configs travel, and the two
// Envelope fields that carry a whole forwarded request or response.
// TestSecretFields lists every field so marked and fails when a schema
// adds a field whose name or "about" text looks secret (password, secret,
// HMAC, token, credential, salt, key material, ...) that is neither in
// the table nor in notSecret (secrets_test.go), where each look-alike is
// justified.
//
// Beyond fields, the decoder withholds, in a message that carries secrets
// in some version (MessageSchema's secret versions, KeyCarriesSecrets):
// the raw body of a version kwire does not know, the bytes left undecoded
// after a failure or left over after the message, and unknown tagged
// fields. Those bytes could hold a secret kwire cannot locate.
//
// To add a secret field: add a rule below, run
// `go test ./protocol -run TestSecretFields -update` and read the diff of
// testdata/secrets.txt.

// Secrecy says whether, and when, a field's value is a secret.
type Secrecy uint8

// Field secrecy.
const (
	NotSecret Secrecy = iota
	// SecretAlways: the value is a credential (a delegation-token HMAC, a
	// salted SCRAM password).
	SecretAlways
	// SecretSASL: the value is a SASL token; its secret parts are
	// withheld, and the whole token when kwire cannot parse it (sasl.go).
	SecretSASL
	// SecretConfigValue: a config value, secret when its entry is
	// sensitive: the broker says so (IsSensitive, ConfigType PASSWORD) or
	// the config's name does (ConfigNameSensitive). A sensitive
	// DescribeConfigs entry withholds its synonyms' values too.
	SecretConfigValue
	// SecretOpaque: bytes holding a whole forwarded request or response
	// (KIP-590 Envelope), which may carry any secret above; withheld
	// unless decoded into a tree of their own, whose secrets are marked.
	SecretOpaque
	// SecretURL: a URL a peer advertises (a Kafka Connect worker's REST
	// URL, protocol/schemas), withheld whole when it holds an '@' (a
	// userinfo, "http://user:password@host:8083/", RFC 3986 section
	// 3.2.1, or something kwire cannot tell from one), shown otherwise.
	SecretURL
)

var secrecyNames = [...]string{
	NotSecret:         "not secret",
	SecretAlways:      "always",
	SecretSASL:        "sasl",
	SecretConfigValue: "config value",
	SecretOpaque:      "opaque",
	SecretURL:         "url userinfo",
}

// String names s as testdata/secrets.txt writes it.
func (s Secrecy) String() string {
	if int(s) < len(secrecyNames) {
		return secrecyNames[s]
	}
	return "Secrecy(?)"
}

// secretRule marks one field: the message, the path of field names from
// the message down ("Upsertions.Salt"), and the secrecy.
type secretRule struct {
	msg, path string
	secrecy   Secrecy
}

// Config values are not listed: every field whose Role is
// RoleConfigValue (roles.go: wherever configs travel: AlterConfigs,
// IncrementalAlterConfigs, DescribeConfigs with its synonyms, CreateTopics
// request and response, the KIP-1071 streams groups' topic configs) is
// SecretConfigValue, its entry's RoleConfigName, RoleConfigSensitive and
// RoleConfigType fields deciding.
var secretRules = []secretRule{
	// SASL tokens (SaslAuthenticateRequest.json, SaslAuthenticateResponse.json, KIP-152).
	{msg: "SaslAuthenticateRequest", path: "AuthBytes", secrecy: SecretSASL},
	{msg: "SaslAuthenticateResponse", path: "AuthBytes", secrecy: SecretSASL},

	// Delegation tokens (KIP-48): the HMAC is the token's password (the
	// SCRAM password a client authenticates with, tokenauth=true).
	{msg: "CreateDelegationTokenResponse", path: "Hmac", secrecy: SecretAlways},
	{msg: "DescribeDelegationTokenResponse", path: "Tokens.Hmac", secrecy: SecretAlways},
	{msg: "RenewDelegationTokenRequest", path: "Hmac", secrecy: SecretAlways},
	{msg: "ExpireDelegationTokenRequest", path: "Hmac", secrecy: SecretAlways},

	// SCRAM credentials written by an admin client (KIP-554): the salted
	// password is what a SCRAM server derives StoredKey and ServerKey
	// from, as good as the password for authenticating; the salt is the
	// rest of the stored credential.
	{msg: "AlterUserScramCredentialsRequest", path: "Upsertions.Salt", secrecy: SecretAlways},
	{msg: "AlterUserScramCredentialsRequest", path: "Upsertions.SaltedPassword", secrecy: SecretAlways},

	// KIP-590 Envelope: a forwarded request (decoded when it can be: its
	// own secrets are then marked) and its response (never decoded: the
	// response does not say which API it answers).
	{msg: "EnvelopeRequest", path: "RequestData", secrecy: SecretOpaque},
	{msg: "EnvelopeResponse", path: "ResponseData", secrecy: SecretOpaque},

	// Kafka Connect's group protocol (kwire's own definitions,
	// protocol/schemas): a worker's REST URL and its leader's, which a
	// worker configured with rest.advertised.* may give with a userinfo.
	{msg: "ConnectProtocolMetadata", path: "Url", secrecy: SecretURL},
	{msg: "ConnectProtocolAssignment", path: "LeaderUrl", secrecy: SecretURL},
}

// cfgPart marks the fields of a config entry that its value's secrecy
// depends on.
type cfgPart uint8

const (
	cfgNone      cfgPart = iota
	cfgName              // the config's name
	cfgValue             // the config's value (Secret is SecretConfigValue)
	cfgSensitive         // the broker's IsSensitive
	cfgType              // the broker's ConfigType (9 is PASSWORD)
)

// configTypePassword is DescribeConfigsResponse ConfigType PASSWORD
// (KIP-336; DescribeConfigsResponse.java ConfigType).
const configTypePassword = 9

var secretsOnce sync.Once

// initSecrets applies secretRules to Schemas. It panics when a rule
// matches no field, so that a rule outliving its field fails every test.
func initSecrets() {
	secretsOnce.Do(func() {
		initRoles() // config entries are found by their fields' roles
		used := make([]bool, len(secretRules))
		for _, m := range Schemas {
			markSecrets(m, "", m.Fields, used, 0)
			if h := secretHull(m.Fields, NoVersions, 0); !h.Empty() {
				m.secretVers = &h
			}
		}
		for i, ok := range used {
			if !ok {
				r := secretRules[i]
				panic("protocol: secret rule " + r.msg + " " + r.path + " matches no field")
			}
		}
	})
}

func init() { initSecrets() }

// markSecrets sets Secret (and the config entry marks) on the fields of
// message m at path (a dotted prefix, "" at the top).
func markSecrets(m *MessageSchema, path string, fields []Field, used []bool, depth int) {
	if depth > maxDepth {
		return
	}
	entry := false
	for i := range fields {
		entry = entry || fields[i].Role == RoleConfigValue
	}
	for i := range fields {
		f := &fields[i]
		p := f.Name
		if path != "" {
			p = path + "." + f.Name
		}
		for k, r := range secretRules {
			if r.msg == m.Name && pathMatches(r.path, p) {
				used[k] = true
				f.Secret = r.secrecy
			}
		}
		if entry {
			switch f.Role {
			case RoleConfigValue:
				f.Secret, f.cfg = SecretConfigValue, cfgValue
			case RoleConfigName:
				f.cfg = cfgName
			case RoleConfigSensitive:
				f.cfg = cfgSensitive
			case RoleConfigType:
				f.cfg = cfgType
			}
		}
		markSecrets(m, p, f.Fields, used, depth+1)
	}
}

// pathMatches reports whether a rule's path matches field path p.
func pathMatches(rule, p string) bool {
	if rest, ok := strings.CutPrefix(rule, "*."); ok {
		return p == rest || strings.HasSuffix(p, "."+rest)
	}
	return rule == p
}

// secretHull returns the smallest version range holding every version in
// which some field under fields carries a secret; within is the range of
// versions the enclosing fields exist in.
func secretHull(fields []Field, acc Versions, depth int) Versions {
	if depth > maxDepth {
		return acc
	}
	for i := range fields {
		f := &fields[i]
		if f.Secret != NotSecret {
			acc = hull(acc, f.Versions)
		}
		acc = secretHull(f.Fields, acc, depth+1)
	}
	return acc
}

func hull(a, b Versions) Versions {
	switch {
	case a.Empty():
		return b
	case b.Empty():
		return a
	}
	return Versions{min(a.Min, b.Min), max(a.Max, b.Max)}
}

// carriesSecrets reports whether version v of m has a field that can hold
// a secret (within the hull of such versions).
func (m *MessageSchema) carriesSecrets(v int16) bool {
	initSecrets()
	return m.secretVers != nil && m.secretVers.Contains(v)
}

// KeyCarriesSecrets reports whether some version of the requests
// (response false) or responses of API key key, in any schema generation,
// has a field that can hold a secret: bytes of such a message that kwire
// cannot decode (an unknown version, a frame cut short) are withheld.
func KeyCarriesSecrets(key int16, response bool) bool {
	initSecrets()
	t := TypeRequest
	if response {
		t = TypeResponse
	}
	for _, m := range schemasByKey(key) {
		if m.Type == t && m.secretVers != nil {
			return true
		}
	}
	return false
}

// Kafka's configs of type PASSWORD (ConfigDef.Type.PASSWORD), which the
// broker reports as sensitive and never returns in DescribeConfigs:
// clients/.../config/SslConfigs.java and SaslConfigs.java (and the same
// names in BrokerSecurityConfigs.java, also behind a listener prefix
// "listener.name.NAME." and, for sasl.jaas.config, a mechanism
// "NAME.MECHANISM."), server-common/.../PasswordEncoderConfigs.java,
// server/.../DelegationTokenManagerConfigs.java and ZkConfigs.java; the
// OAuth client-credentials secret and assertion passphrase of KIP-1139.
// Names are normalised (normalizeConfigName) before they are matched.
var passwordConfigs = []string{
	"ssl.keystore.password",
	"ssl.key.password",
	"ssl.keystore.key",
	"ssl.keystore.certificate.chain",
	"ssl.truststore.password",
	"ssl.truststore.certificates",
	"sasl.jaas.config",
	"password.encoder.secret",
	"password.encoder.old.secret",
	"delegation.token.secret.key",
	"delegation.token.master.key", // the older name of delegation.token.secret.key
	"zookeeper.ssl.keystore.password",
	"zookeeper.ssl.truststore.password",
	"sasl.oauthbearer.client.credentials.client.secret",
	"sasl.oauthbearer.assertion.private.key.passphrase",
	// Credentials of the clients around Kafka, PASSWORD configs of their
	// own, behind any prefix ("schema.registry.", "producer.override.",
	// "source.cluster." in MirrorMaker 2, "CONNECT_" in environment
	// variables):
	"user.info",        // Schema Registry's client (SchemaRegistryClientConfig, AbstractKafkaSchemaSerDeConfig): basic.auth.user.info, "user:password"
	"credentials.json", // Confluent's GCS connectors: gcs.credentials.json, the service account's key
	"keyfile",          // Confluent's BigQuery sink: a service account key (or its path)
}

// sensitiveLast are last name segments that make a config sensitive
// whatever comes before (a plugin's "connection.password", a custom
// "my.api.secret", "aws.secret.access.key"): a config named like a secret
// is treated as one, as Kafka treats configs it does not know
// (KafkaConfig.maybeSensitive).
var sensitiveLast = []string{
	"password", "passwd", "pwd", "passphrase", "secret", "secrets",
	"credential", "credentials", "token", "key", "apikey",
	"certificates",     // Kafka's ssl.truststore.certificates is a PASSWORD
	"userinfo",         // "user:password" (http.auth.basic.userinfo, a URL's userinfo)
	"sig", "signature", // an Azure SAS token's signature (?sig=), a request signature
	"authorization", // an HTTP Authorization header's value
	// Short and other names of credentials: a password (pass, pw), a PIN
	// or one-time password, a JSON Web Token, a bearer token, a client
	// assertion (a signed JWT, RFC 7523), a cookie.
	"pass", "pw", "pin", "otp", "jwt", "bearer", "assertion", "cookie",
	"keytab",  // a Kerberos keytab: the principal's keys (or the path to them)
	"license", // a product's license key: Confluent's confluent.license is a PASSWORD config
	// Short names connectors give a credential: "redis.auth" (Redis's AUTH
	// password), "mqtt.cred", "api.creds". A last segment "auth" names
	// a secret but in "client.auth": Kafka's ssl.client.auth says
	// whether TLS client certificates are required (nameSensitive).
	"auth", "cred", "creds",
}

// genericLast are last segments that say how a value is written, not what
// it is: the segment before them names the config's kind.
var genericLast = map[string]bool{
	"value": true, "string": true, "data": true, "text": true, "content": true,
	"base64": true, "b64": true, "hex": true, "raw": true, "encoded": true, "plain": true, "pem": true,
}

// normalizeConfigName returns the form of a config name that
// ConfigNameSensitive matches: lower case, "_" and "-" read as ".", as
// configs given by environment variables (KAFKA_SSL_KEYSTORE_PASSWORD,
// CONNECT_SASL_JAAS_CONFIG) or by a mechanism's name
// ("scram-sha-256.") spell them, without NULs, whitespace or other control
// characters (a name padded with a NUL or a space is the same config to
// whoever reads it loosely, and no real config name has one), without
// format characters (Unicode Cf: a zero-width space or a soft hyphen
// inside "pass\u200bword" hides nothing from a reader), in Unicode's
// compatibility form (NFKC: a fullwidth "ｐａｓｓｗｏｒｄ" is "password"),
// and without dots at either end ("ssl.key.password.").
func normalizeConfigName(name string) string {
	b := make([]byte, 0, len(name))
	for _, r := range norm.NFKC.String(name) {
		switch {
		case r == '_' || r == '-':
			b = append(b, '.')
		case unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError:
		default:
			b = utf8.AppendRune(b, unicode.ToLower(r))
		}
	}
	return strings.Trim(string(b), ".")
}

// ConfigNameSensitive reports whether a config name names a secret: one
// of Kafka's PASSWORD configs or the credentials of Schema Registry's
// and Connect's clients (passwordConfigs; also behind a prefix,
// "listener.name.x.", "x.scram-sha-256.", "schema.registry.",
// "producer.override."), a name ending in ".jaas.config" or
// ".certificate.chain", or whose last segment is a secret's word
// (password, secret, credentials, token, key, passphrase, userinfo, ...)
// or ends in one ("clientSecret"). The name is normalised first
// (normalizeConfigName): case, "_" and "-" against ".", NULs, whitespace
// and control characters do not matter. "delegation.token.max.lifetime.ms"
// is not sensitive: only the last segment counts.
func ConfigNameSensitive(name string) bool {
	if len(name) > sensitiveMemoName {
		return configNameSensitive(name)
	}
	slot := &sensitiveMemo[maphash.String(sensitiveSeed, name)%uint64(len(sensitiveMemo))]
	if m := slot.Load(); m != nil && m.name == name {
		return m.sensitive
	}
	s := configNameSensitive(name)
	slot.Store(&sensitiveAnswer{name: strings.Clone(name), sensitive: s})
	return s
}

// The answers ConfigNameSensitive gave lately, in a fixed table: a capture
// names the same few hundred configs again and again, and each answer
// costs a Unicode normalisation and a confusables skeleton. A slot holds
// one name of at most sensitiveMemoName bytes (longer names are not kept),
// so the table never holds more than about len(sensitiveMemo) ×
// (sensitiveMemoName + 40) bytes (about 0.7 MiB), whatever the peers send;
// a name that collides with another's slot replaces it. Safe for
// concurrent use: slots are replaced whole, atomically.
const sensitiveMemoName = 128

var (
	sensitiveMemo [4096]atomic.Pointer[sensitiveAnswer]
	sensitiveSeed = maphash.MakeSeed()
)

type sensitiveAnswer struct {
	name      string
	sensitive bool
}

// configNameSensitive is ConfigNameSensitive, computed.
func configNameSensitive(name string) bool {
	n := normalizeConfigName(name)
	if n == "" {
		return false
	}
	if nameSensitive(n) {
		return true
	}
	// Letters that only look like others (a Cyrillic "а" in "pаssword"):
	// the name's skeleton (Unicode TR39 confusables, as the secret
	// words' own skeletons compare) decides too.
	sk := strings.ToLower(confusables.Skeleton(n)) // "passw0rd": the skeleton's "O" for a 0
	return sk != n && nameSensitive(confusableForm(sk))
}

// confusableForm undoes the skeleton's multi-letter prototypes that no
// secret word needs ("rn" for "m": "masterkey"), so that a skeleton is
// matched against the words as written.
func confusableForm(sk string) string {
	return strings.ReplaceAll(sk, "rn", "m")
}

// nameSensitive is ConfigNameSensitive for a normalised name n.
func nameSensitive(n string) bool {
	for _, p := range passwordConfigs {
		if n == p || len(n) > len(p) && n[len(n)-len(p)-1] == '.' && strings.HasSuffix(n, p) {
			return true
		}
	}
	if strings.HasSuffix(n, ".jaas.config") || strings.HasSuffix(n, ".certificate.chain") {
		return true
	}
	last := n
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		last = n[i+1:]
		// "oauth.client.secret.value", "api.token.base64": a last segment
		// that only says how the value is written leaves the word before it
		// to decide.
		if genericLast[last] {
			n = n[:i]
			last = n[strings.LastIndexByte(n, '.')+1:]
		}
	}
	prev := "" // the segment before last: "pass" in "pass-word"
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		prev = n[strings.LastIndexByte(n[:i], '.')+1 : i]
	}
	for _, s := range sensitiveLast {
		if last == s && !(s == "auth" && prev == "client") || prev != "" && prev+last == s {
			return true
		}
	}
	// "keystorepassword", "clientSecret", "basicAuthUserInfo",
	// "accessToken", "secretAccessKey": a word at the end of the segment
	// (a bare "key" or "token" only as a segment of its own, above).
	for _, s := range [...]string{"password", "passwd", "secret", "passphrase", "credentials", "apikey", "privatekey", "userinfo",
		"token", "secretkey", "accesskey", "accountkey", "signingkey", "encryptionkey", "masterkey", "sessionkey", "sharedkey"} {
		// The word may straddle the last separator: "pass-word",
		// "client_sec.ret".
		if strings.HasSuffix(last, s) || prev != "" && len(last) < len(s) && strings.HasSuffix(prev+last, s) {
			return true
		}
	}
	return false
}

// TextHoldsCredential reports whether s, free text from kwire's input
// that an output would quote (the text of a log line before a hex dump
// given to kwire decode), holds a credential as a config value can: a
// URL's password, a parameter named like a secret ("password=PW",
// "token: T"), an HTTP credential or a private key (configURLSecret).
// In free text a secret may also follow its name after a space alone
// ("token T", "ssl.keystore.password PW", "secret S"): a word named like
// a secret (ConfigNameSensitive) with a word after it counts too, which
// withholds some text that holds none ("token sent").
func TextHoldsCredential(s string) bool {
	if configURLSecret(s) {
		return true
	}
	words := strings.FieldsFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ':' || r == '=' || r == ',' || r == ';' || r == '"' || r == '\'' || r == '[' || r == ']' || r == '(' || r == ')'
	})
	for i := 0; i+1 < len(words) && i < 256; i++ {
		if len(words[i]) <= 128 && ConfigNameSensitive(words[i]) {
			return true
		}
	}
	return false
}

// configURLSecret reports whether v, a config's value, is a URL or a
// connection string that carries a password: a userinfo with a password
// ("jdbc:postgresql://admin:PW@db:5432/x", "mongodb://u:PW@h",
// "https://u:PW@h"; RFC 3986 section 3.2.1: "user:password" in userinfo
// is deprecated, and still used), Oracle's "jdbc:oracle:thin:user/PW@host",
// or, in any value, a parameter named like a secret (ConfigNameSensitive)
// among parameters separated by "?", "&", ";" or white space
// ("?user=u&password=PW", ";password=PW", ADO.NET's and Azure's
// "Server=db;User Id=sa;Password=PW;", "AccountKey=K", libpq's "host=db
// password=PW", a JAAS line's password="PW"). Such a value is withheld
// whole (endConfig): the config is no secret by its name, its value holds
// one.
func configURLSecret(v string) bool {
	l := strings.ToLower(v)
	if i := strings.Index(l, "://"); i >= 0 {
		// A userinfo with a ":" before an "@": looked for up to the query,
		// not only up to the path, as a password may hold a "/".
		rest := l[i+3:]
		if q := strings.IndexAny(rest, "?#"); q >= 0 {
			rest = rest[:q]
		}
		if at := strings.LastIndexByte(rest, '@'); at >= 0 && strings.IndexByte(rest[:at], ':') >= 0 {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(l, "jdbc:oracle:"); ok {
		// jdbc:oracle:thin:user/password@host:1521:sid (and oci, oci8).
		if c := strings.IndexByte(rest, ':'); c >= 0 {
			if at := strings.IndexByte(rest[c+1:], '@'); at > 0 && strings.IndexByte(rest[c+1:c+1+at], '/') >= 0 {
				return true
			}
		}
	}
	if strings.IndexByte(l, '%') >= 0 {
		// "password%3DPW": parameters percent-encoded once more.
		if d := percentDecode(l); d != l && configURLSecret(d) {
			return true
		}
	}
	// A private key in PEM ("-----BEGIN PRIVATE KEY-----", RSA, EC,
	// ENCRYPTED, OPENSSH ...), whatever the config's name.
	if i := strings.Index(l, "-----begin "); i >= 0 && strings.Contains(l[i:], "private key-----") {
		return true
	}
	if httpCredential(v, l) || bareUserinfo(l) {
		return true
	}
	// Parameters named like a secret, in any of the forms a value holds
	// them: name=value separated by "?", "&", ";" or white space (JDBC
	// drivers' properties, connection strings, libpq, JAAS), with spaces
	// around the "=" (ADO.NET), name: value (YAML, HTTP headers), and
	// "name": "value" (JSON).
	return secretParam(l)
}

// httpCredential reports whether v (l its lower case) holds an HTTP
// credential as an Authorization header's value writes it, with or
// without the header's name ("Bearer T" in a config "http.auth.header"):
// a bearer token (RFC 6750 section 2.1: "Bearer" and a token68 of at
// least 8 characters) or Basic credentials (RFC 7617: "Basic" and the
// base64 of "user:password").
func httpCredential(v, l string) bool {
	for _, scheme := range [...]string{"bearer ", "basic "} {
		for i := 0; ; {
			j := strings.Index(l[i:], scheme)
			if j < 0 {
				break
			}
			start := i + j
			i = start + len(scheme)
			if start > 0 && isWordByte(l[start-1]) {
				continue // "unbearer ": not the scheme
			}
			k := i
			for k < len(v) && v[k] == ' ' {
				k++
			}
			end := k
			for end < len(v) && isToken68(v[end]) {
				end++
			}
			tok := v[k:end]
			switch scheme {
			case "bearer ":
				if len(tok) >= 8 {
					return true
				}
			case "basic ":
				if b, err := base64.StdEncoding.DecodeString(tok); err == nil && bytes.IndexByte(b, ':') > 0 {
					return true
				}
			}
		}
	}
	return false
}

// bareUserinfo reports whether l is a URL's authority without its scheme
// that holds a password, "user:password@host", "user:pw@db:5432/x": no
// white space, a user and a password (neither with a "/", the password
// without a ":") before the one "@", a host name after it (letters,
// digits, "." and "-"), a port and a path allowed.
func bareUserinfo(l string) bool {
	at := strings.IndexByte(l, '@')
	if at < 0 || strings.IndexByte(l[at+1:], '@') >= 0 || strings.ContainsAny(l, " \t\r\n") || strings.Contains(l, "://") {
		return false // a URL with its scheme is configURLSecret's own case
	}
	user, pw, ok := strings.Cut(l[:at], ":")
	if !ok || user == "" || pw == "" || strings.ContainsAny(user, "/") || strings.ContainsAny(pw, ":/") {
		return false // "jdbc:oracle:thin:@host": no user and password
	}
	host := l[at+1:]
	if i := strings.IndexAny(host, ":/"); i >= 0 {
		host = host[:i]
	}
	if host == "" {
		return false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !isWordByte(c) && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

// isWordByte reports whether c is an ASCII letter or digit.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isToken68 reports whether c may be in a token68 (RFC 7235 section 2.1).
func isToken68(c byte) bool {
	return isWordByte(c) || strings.IndexByte("-._~+/=", c) >= 0
}

// secretParam reports whether l (lower case) holds a name that
// ConfigNameSensitive takes for a secret's, right before an "=" or a ":"
// (white space and quotes between them allowed): the name is the run of
// letters, digits, ".", "_" and "-" that ends there.
func secretParam(l string) bool {
	for i := 0; i < len(l); i++ {
		if c := l[i]; c != '=' && c != ':' {
			continue
		}
		if l[i] == ':' && strings.HasPrefix(l[i:], "://") {
			continue // a URL's scheme
		}
		j := i
		for j > 0 && (l[j-1] == ' ' || l[j-1] == '\t' || l[j-1] == '"' || l[j-1] == '\'') {
			j--
		}
		k := j
		for k > 0 && (l[k-1] >= 'a' && l[k-1] <= 'z' || l[k-1] >= '0' && l[k-1] <= '9' || l[k-1] == '.' || l[k-1] == '_' || l[k-1] == '-') {
			k--
		}
		if k < j && ConfigNameSensitive(l[k:j]) {
			return true
		}
	}
	return false
}

// percentDecode decodes the %XX escapes of s (RFC 3986 section 2.1),
// leaving a "%" not followed by two hex digits as it is.
func percentDecode(s string) string {
	unhex := func(c byte) (byte, bool) {
		switch {
		case '0' <= c && c <= '9':
			return c - '0', true
		case 'a' <= c && c <= 'f':
			return c - 'a' + 10, true
		case 'A' <= c && c <= 'F':
			return c - 'A' + 10, true
		}
		return 0, false
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b = append(b, hi<<4|lo)
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// configEntry collects, while a config entry struct is decoded, the nodes
// its value's secrecy depends on. Entries nest (DescribeConfigs synonyms
// inside their config): an inner entry's values go to its outer entry too,
// to be withheld with it.
type configEntry struct {
	name, sensitive, ctype *Node
	values                 []*Node // this entry's value, then its synonyms' values
}

func (e *configEntry) note(f *Field, c *Node) {
	if c == nil {
		return
	}
	switch f.cfg {
	case cfgName:
		e.name = c
	case cfgValue:
		e.values = append(e.values, c)
	case cfgSensitive:
		e.sensitive = c
	case cfgType:
		e.ctype = c
	}
}

// isSensitive reports whether the entry is a sensitive config.
func (e *configEntry) isSensitive() bool {
	if e.name != nil && e.name.Kind == KindString && ConfigNameSensitive(e.name.Str) {
		return true
	}
	if e.sensitive != nil && e.sensitive.Kind == KindBool && e.sensitive.Int != 0 {
		return true
	}
	return e.ctype != nil && e.ctype.Kind == KindInt && e.ctype.Int == configTypePassword
}

// isConfigEntry reports whether fields are those of a config entry.
func isConfigEntry(fields []Field) bool {
	for i := range fields {
		if fields[i].cfg == cfgValue {
			return true
		}
	}
	return false
}

// beginConfig starts collecting a config entry and returns its index in
// ip.cfgs.
func (ip *interp) beginConfig() int {
	ip.cfgs = append(ip.cfgs, configEntry{})
	return len(ip.cfgs) - 1
}

// endConfig ends the innermost config entry: its values are withheld when
// it is sensitive, each value that is a URL holding a password
// (configURLSecret) when it is not, and handed to the enclosing entry,
// whose sensitivity (a DescribeConfigs entry's IsSensitive covers its
// synonyms) may withhold them still.
func (ip *interp) endConfig() {
	e := ip.cfgs[len(ip.cfgs)-1]
	ip.cfgs = ip.cfgs[:len(ip.cfgs)-1]
	if ip.d.ShowSecrets {
		return
	}
	if e.isSensitive() {
		for _, v := range e.values {
			withhold(v)
		}
	} else {
		for _, v := range e.values {
			if v.Kind == KindString && v.Flags&FlagRedacted == 0 && configURLSecret(v.Str) {
				withhold(v)
				if v.Note != "" {
					v.Note += "; "
				}
				v.Note += "withheld: a URL or connection string holding a password"
			}
		}
	}
	if k := len(ip.cfgs); k > 0 {
		ip.cfgs[k-1].values = append(ip.cfgs[k-1].values, e.values...)
	}
}

// withhold marks n and everything under it FlagRedacted and empties their
// values, so that no consumer of the tree can show them. A null value
// holds no secret and is left as it is.
func withhold(n *Node) {
	withholdDepth(n, 0)
}

func withholdDepth(n *Node, depth int) {
	if n == nil || n.Flags&FlagNull != 0 || depth > 4*maxDepth {
		return
	}
	n.Flags |= FlagRedacted
	n.Str = ""
	n.Int, n.Float = 0, 0
	if n.Kind != KindRecords || len(n.Children) == 0 {
		n.Raw = nil
	}
	for _, c := range n.Children {
		withholdDepth(c, depth+1)
	}
}

// secretField applies field f's secrecy to c, the node just decoded for
// it, in a request (fromClient) or response.
func (ip *interp) secretField(f *Field, c *Node) {
	if c == nil {
		return
	}
	switch f.Secret {
	case SecretAlways:
		if !ip.d.ShowSecrets {
			withhold(c)
		}
	case SecretSASL:
		if c.Kind == KindBytes {
			ip.saslNode(c, ip.msg == nil || ip.msg.Type != TypeResponse)
		} else if !ip.d.ShowSecrets {
			withhold(c)
		}
	case SecretURL:
		if !ip.d.ShowSecrets && c.Kind == KindString && c.Flags&FlagNull == 0 {
			switch {
			case strings.IndexByte(c.Str, '@') >= 0:
				withhold(c)
				c.Note = "withheld: a URL holding a userinfo (user:password@)"
			case configURLSecret(c.Str):
				// "http://h:8083/?access_token=T": a parameter named
				// like a secret, as in a config's URL value.
				withhold(c)
				c.Note = "withheld: a URL holding a parameter named like a secret"
			}
		}
	case SecretOpaque:
		// Marked now; embedRequest unmarks it when it decodes the bytes.
		if !ip.d.ShowSecrets && c.Flags&FlagNull == 0 && (c.Kind != KindBytes || len(c.Raw) > 0) {
			c.Flags |= FlagRedacted
		}
	}
}

// withholdRaw marks n, a span of bytes kwire did not decode into fields
// (the rest of a message after a failure, a leftover, an unknown tagged
// field, the body of an API key or version no schema knows), as withheld,
// unless --show-secrets. Whatever the message, such bytes may hold a
// credential: a length field too large swallows the frames after it, a
// damaged one starts a frame inside another, a lost segment leaves a
// frame without its header, so any request's bytes (a SaslAuthenticate
// token, an AlterConfigs password, a delegation token's HMAC) can end up
// in a span of any frame. The span itself (where, how long, why it was
// not decoded) is still shown.
func (ip *interp) withholdRaw(n *Node) {
	if n == nil || n.Flags&FlagRedacted != 0 {
		return
	}
	ip.withhold(n, "bytes not decoded may hold credentials")
}

// withholdMisplaced withholds every string and bytes value of message n,
// which failed to decode or left bytes over: a length or count that does
// not fit its bytes means the fields after it, or before it, were not read
// where the sender wrote them, and a config value or an HMAC can then sit
// in any string (a DescribeConfigs response whose ErrorMessage length was
// damaged shows a sensitive value as its ResourceName; an AlterConfigs
// request whose API key was damaged reads as a DescribeConfigs request
// whose ConfigurationKeys hold the password). Integers are kept (in a
// message that can carry secrets, those of two bytes or less), and the
// message's shape. A frame stopped by kwire's own limits (node cap,
// memory) was read where it was written, and keeps its values; so does a
// message of an API that carries no secret in input that may simply end
// early (ip.short: kwire decode of a frame or body cut short; frames of
// a capture are decoded only whole) when it failed for want of bytes
// (cutShort). Bytes left over, a negative length or a broken varint are
// no early end, and withhold the values there too.
func (ip *interp) withholdMisplaced(n *Node) {
	ip.withholdMisplacedAs(n, "withheld: the message did not decode, so a credential may be misplaced here")
}

// withholdMisplacedAs is withholdMisplaced with note on each value withheld.
func (ip *interp) withholdMisplacedAs(n *Node, note string) {
	if ip.d.ShowSecrets || ip.t.Limits != 0 || ip.probe || ip.short && !ip.secret && ip.cutShort() {
		return
	}
	ip.withholdValues(n, note, 0)
}

// cutShort reports whether the message failed for want of bytes: a value,
// or a length or count, running past the end of the input (ErrShort,
// ErrLength, a varint unterminated at the end), as input cut short does.
func (ip *interp) cutShort() bool { return CutShort(ip.r.Err()) }

// CutShort reports whether err says a decode ran out of bytes: a value,
// or a length or count, running past the end of the input (ErrShort,
// ErrLength), or a varint unterminated at the end (ErrVarint "runs past
// the end"), as input cut short does; not an overlong varint, a negative
// length or bytes left over.
func CutShort(err error) bool {
	var v *varintError
	return errors.Is(err, ErrShort) || errors.Is(err, ErrLength) || errors.As(err, &v) && v.ended
}

func (ip *interp) withholdValues(n *Node, note string, depth int) {
	if n == nil || depth > 4*maxDepth {
		return
	}
	switch n.Kind {
	case KindString, KindBytes, KindRecords:
		if n.Flags&(FlagRedacted|FlagNull) == 0 {
			withhold(n)
			n.Note = strings.TrimPrefix(n.Note+"; "+note, "; ")
		}
		return
	case KindInt, KindFloat, KindUUID:
		// In a message that carries secrets, a value of four bytes or
		// more read out of place holds that many bytes of whatever was
		// written there, a token's or a password's (a SaslAuthenticate
		// response whose AuthBytes length was damaged reads its
		// SessionLifetimeMs from the token): withheld too. Counts,
		// lengths and the shorter fields (error codes, flags) stay: they
		// give the message's shape.
		if ip.secret && n.Len >= 4 && n.Flags&(FlagRedacted|FlagNull) == 0 && n.Field != nil {
			withhold(n)
			n.Note = strings.TrimPrefix(n.Note+"; "+note, "; ")
		}
		return
	}
	for _, c := range n.Children {
		ip.withholdValues(c, note, depth+1)
	}
}

// The KRaft metadata log (KIP-500, KIP-595): the topic __cluster_metadata,
// whose topic ID is Uuid(0, 1) (Uuid.METADATA_TOPIC_ID), carried by Fetch
// and FetchSnapshot between controllers and brokers. Its records are the
// cluster's metadata records, ConfigRecord values of sensitive configs
// (sasl.jaas.config, ssl.*.password) and UserScramCredentialRecord's
// StoredKey and ServerKey among them, which kwire's schemas do not
// describe: every key, value and header of its records is withheld, and
// the batches' bytes (a compressed batch holds them too); the batches'
// headers (offsets, counts, epochs) are shown.
const metadataLogTopic = "__cluster_metadata"

var metadataLogTopicID = [16]byte{15: 1}

// MetadataLogTopic reports whether a topic named name, or with ID id
// (hasID), is the KRaft metadata log, whose records the decoder withholds
// (they carry the cluster's sensitive configs and SCRAM credentials): for
// what says an exchange's records can hold credentials without decoding
// them (kwire read -w's note).
func MetadataLogTopic(name string, id [16]byte, hasID bool) bool {
	return name == metadataLogTopic || hasID && id == metadataLogTopicID
}

// connectConfigRecord reports whether a record is one of Kafka Connect's
// configuration records, by its own shape rather than its topic's name
// (config.storage.topic is the worker's to choose): a key
// "connector-NAME" or "task-NAME-N" whose value is a JSON object holding
// "properties" (a connector's or task's config, its database.password,
// sasl.jaas.config and the like in the clear unless a config provider
// hides them), or the key "session-key" (the key that signs the
// workers' internal requests). Such a record's value is withheld;
// Connect's other records (commit-, target-state-, restart-) hold no
// secret. Source: Kafka's KafkaConfigBackingStore.
func connectConfigRecord(key, value []byte) bool {
	if len(key) < 5 || len(value) < 2 {
		return false
	}
	session := string(key) == "session-key"
	if !session && !bytes.HasPrefix(key, []byte("connector-")) && !bytes.HasPrefix(key, []byte("task-")) {
		return false
	}
	v := bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimLeft(value, " \t\r\n"), []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(v) == 0 || v[0] != '{' {
		return false
	}
	// "properties" as Connect writes it, or spelled with JSON escapes
	// ("\u0070roperties"), which a JSON reader takes for the same key.
	return session || bytes.Contains(v, []byte(`"properties"`)) ||
		bytes.Contains(v, []byte(`\u`)) && bytes.Contains(unescapeJSONText(v), []byte(`"properties"`))
}

// maybeConnectKey reports whether key, the bytes kept of a record's key
// (all of it when whole), is or may be the key of a Kafka Connect
// configuration record (connectConfigRecord): "connector-", "task-" or
// "session-key", or a beginning of one when the rest was not kept.
func maybeConnectKey(key []byte, whole bool) bool {
	for _, k := range [...]string{"connector-", "task-", "session-key"} {
		if bytes.HasPrefix(key, []byte(k)) && (k != "session-key" || len(key) == len(k)) ||
			!whole && strings.HasPrefix(k, string(key)) {
			return true
		}
	}
	return false
}

// unescapeJSONText replaces the \uXXXX escapes of JSON text b by the
// characters they stand for (below U+0080; others, and a lone "\u", are
// left as they are): enough to read a key spelled with escapes.
func unescapeJSONText(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' && i+5 < len(b) && b[i+1] == 'u' {
			var r int
			ok := true
			for _, c := range b[i+2 : i+6] {
				switch {
				case '0' <= c && c <= '9':
					r = r<<4 | int(c-'0')
				case 'a' <= c && c <= 'f':
					r = r<<4 | int(c-'a'+10)
				case 'A' <= c && c <= 'F':
					r = r<<4 | int(c-'A'+10)
				default:
					ok = false
				}
			}
			if ok && r < 0x80 {
				out = append(out, byte(r))
				i += 5
				continue
			}
		}
		out = append(out, b[i])
	}
	return out
}

// metadataLog follows, in the struct being decoded, the topic its fields
// name (c, just decoded for field f): a topic name or ID of the metadata
// log makes the struct's records (ip.metaLog, restored when the struct
// ends) withheld, and withholds c when it is records.
func (ip *interp) metadataLog(f *Field, c *Node) {
	switch {
	case f.Role == RoleTopicName && c.Kind == KindString:
		ip.metaLog = c.Str == metadataLogTopic
	case f.Role == RoleTopicID && c.Kind == KindUUID:
		ip.metaLog = [16]byte(c.Raw) == metadataLogTopicID
	case f.Kind == TypeRecords && ip.metaLog && !ip.d.ShowSecrets:
		withholdMetadataRecords(c, 0)
	}
}

// metadataLogShape reports whether the records under n (record batches
// decoded on their own, whose topic is not known: kwire decode --type
// RecordBatch) have the KRaft metadata log's shape: at least one record,
// every one with a null key and a value framed as the metadata log frames
// its records (AbstractApiMessageSerde: an unsigned varint frame version,
// 1, or 0 as KRaft's 2.8 preview wrote it, then the record's API key and
// version, small unsigned varints), or a control record. Records of
// another topic can have that shape (null keys, values in Confluent's
// framing start 00 00 00): withheld too, which --show-secrets undoes.
func metadataLogShape(n *Node) bool {
	records := 0
	var walk func(n *Node, depth int) bool
	walk = func(n *Node, depth int) bool {
		if depth > 4*maxDepth {
			return false
		}
		if n.Field == Batch.Records.elem {
			key, value := n.Child("Key"), n.Child("Value")
			if key == nil || value == nil || key.Flags&FlagNull == 0 {
				return false
			}
			records++
			v := value.Raw
			return len(v) >= 3 && v[0] <= 1 && v[1] < 0x80 && v[2] < 0x40
		}
		if n.Field == Batch.Batch {
			if a := n.Child("Attributes"); a != nil && a.Int&0x20 != 0 {
				return true // a control batch (LeaderChange, snapshot markers)
			}
		}
		for _, c := range n.Children {
			if !walk(c, depth+1) {
				return false
			}
		}
		return true
	}
	return walk(n, 0) && records > 0
}

// withholdMetadataRecords withholds the keys, values and headers of every record
// under n, and every span of batch bytes (a batch not decoded, a
// compressed payload), keeping the batches' and records' integer fields.
func withholdMetadataRecords(n *Node, depth int) {
	if n == nil || depth > 4*maxDepth || n.Flags&(FlagRedacted|FlagNull) != 0 {
		return
	}
	switch {
	case n.Kind == KindString || n.Kind == KindBytes || n.Kind == KindRaw || n.Kind == KindRecords && len(n.Children) == 0:
		withhold(n)
		n.Note = strings.TrimPrefix(n.Note+"; withheld: a record of the KRaft metadata log (it holds configs and SCRAM credentials)", "; ")
		return
	case n.Kind == KindRecords:
		n.Raw = nil // its batches are shown as decoded
		n.Flags |= FlagRedacted
	}
	for _, c := range n.Children {
		withholdMetadataRecords(c, depth+1)
	}
}

// withhold marks n redacted, drops its bytes and says why in its note,
// unless --show-secrets.
func (ip *interp) withhold(n *Node, why string) {
	if ip.d.ShowSecrets {
		return
	}
	n.Flags |= FlagRedacted
	n.Raw = nil
	if n.Note != "" {
		n.Note += "; "
	}
	n.Note += "withheld: " + why
}
