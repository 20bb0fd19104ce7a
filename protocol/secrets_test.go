package protocol

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

var updateSecrets = flag.Bool("update", false, "rewrite testdata/secrets.txt from the schema table")

// looksSecret matches field names and "about" texts that suggest a
// secret. A field it matches must be in secretRules or in notSecret.
var looksSecret = regexp.MustCompile(`(?i)password|passwd|secret|hmac|token|credential|salt|key material|private key|sasl|auth ?bytes|authentication bytes|jaas|signature|proof|nonce|sensitive|config(uration)? value|value of the config`)

// notSecret lists the fields that look secret (looksSecret matches their
// name or their "about" text in Kafka's JSON) but hold none, each with the
// reason. A schema that adds a field looking like these makes
// TestSecretFields fail until it is decided here or in secretRules.
var notSecret = map[string]string{
	// Quotas are floats (bytes per second, percentages), not configs of a
	// ConfigDef: there is no PASSWORD quota.
	"AlterClientQuotasRequest Entries.Ops.Remove":       "a bool: remove the quota",
	"DescribeClientQuotasResponse Entries.Values.Value": "a float64 quota value",

	// SCRAM credentials being managed (KIP-554): the arrays and the
	// credential's name, mechanism and iteration count are not secret;
	// Upsertions.Salt and SaltedPassword are (secretRules).
	"AlterUserScramCredentialsRequest Deletions":                              "user names and mechanisms to delete",
	"AlterUserScramCredentialsRequest Upsertions":                             "the array; its Salt and SaltedPassword are marked",
	"DescribeUserScramCredentialsResponse Results.CredentialInfos":            "mechanisms and iteration counts",
	"DescribeUserScramCredentialsResponse Results.CredentialInfos.Iterations": "an iteration count, which a SCRAM broker sends any client naming the user (server-first)",

	// Delegation tokens (KIP-48): the HMAC is the token's password
	// (secretRules); its ID is public: the SCRAM user name a client
	// authenticates with (tokenauth=true), listed by
	// DescribeDelegationToken. Principals are identities, and timestamps
	// and lifetimes are times.
	"CreateDelegationTokenRequest MaxLifetimeMs":                         "a lifetime in ms",
	"CreateDelegationTokenRequest OwnerPrincipalName":                    "a principal name",
	"CreateDelegationTokenRequest OwnerPrincipalType":                    "a principal type",
	"CreateDelegationTokenRequest Renewers":                              "principals allowed to renew",
	"CreateDelegationTokenResponse ExpiryTimestampMs":                    "a timestamp",
	"CreateDelegationTokenResponse IssueTimestampMs":                     "a timestamp",
	"CreateDelegationTokenResponse MaxTimestampMs":                       "a timestamp",
	"CreateDelegationTokenResponse PrincipalName":                        "a principal name",
	"CreateDelegationTokenResponse PrincipalType":                        "a principal type",
	"CreateDelegationTokenResponse TokenId":                              "the token's public ID (its SCRAM user name)",
	"CreateDelegationTokenResponse TokenRequesterPrincipalName":          "a principal name",
	"CreateDelegationTokenResponse TokenRequesterPrincipalType":          "a principal type",
	"DescribeDelegationTokenRequest Owners":                              "principals",
	"DescribeDelegationTokenResponse Tokens":                             "the array; its Hmac is marked",
	"DescribeDelegationTokenResponse Tokens.ExpiryTimestamp":             "a timestamp",
	"DescribeDelegationTokenResponse Tokens.IssueTimestamp":              "a timestamp",
	"DescribeDelegationTokenResponse Tokens.MaxTimestamp":                "a timestamp",
	"DescribeDelegationTokenResponse Tokens.PrincipalName":               "a principal name",
	"DescribeDelegationTokenResponse Tokens.PrincipalType":               "a principal type",
	"DescribeDelegationTokenResponse Tokens.Renewers":                    "principals allowed to renew",
	"DescribeDelegationTokenResponse Tokens.TokenId":                     "the token's public ID (its SCRAM user name)",
	"DescribeDelegationTokenResponse Tokens.TokenRequesterPrincipalName": "a principal name",
	"DescribeDelegationTokenResponse Tokens.TokenRequesterPrincipalType": "a principal type",
	"ExpireDelegationTokenResponse ExpiryTimestampMs":                    "a timestamp",
	"RenewDelegationTokenResponse ExpiryTimestampMs":                     "a timestamp",
	"DefaultPrincipalData TokenAuthenticated":                            "a bool: the principal used a delegation token",

	// The broker's flags that decide whether a config value is secret
	// (secrets.go reads them); not secrets themselves.
	"CreateTopicsResponse Topics.Configs.IsSensitive":     "the broker's flag",
	"DescribeConfigsResponse Results.Configs.IsSensitive": "the broker's flag",
	"DescribeConfigsResponse Results.Configs.ConfigType":  "the config's type (9 is PASSWORD)",

	// KIP-1071 streams groups reuse the KeyValue struct ("value of the
	// config") for a member's client tags (rack-aware task assignment):
	// labels, not configs. Their TopicConfigs are configs (secretRules).
	"StreamsGroupHeartbeatRequest ClientTags.Value":                "a client tag's value",
	"StreamsGroupDescribeResponse Groups.Members.ClientTags.Value": "a client tag's value",

	// The name of a SASL mechanism ("PLAIN", "SCRAM-SHA-256").
	"SaslHandshakeRequest Mechanism": "a mechanism name",
}

// schemaField is one field of the table, by message and path.
type schemaField struct {
	msg, path string
	f         *Field
}

// tableFields lists every field of every message in Schemas, once per
// generation.
func tableFields() []schemaField {
	var out []schemaField
	var walk func(m *MessageSchema, path string, fs []Field, depth int)
	walk = func(m *MessageSchema, path string, fs []Field, depth int) {
		for i := range fs {
			f := &fs[i]
			p := f.Name
			if path != "" {
				p = path + "." + f.Name
			}
			out = append(out, schemaField{m.Name, p, f})
			if depth < maxDepth {
				walk(m, p, f.Fields, depth+1)
			}
		}
	}
	for _, m := range Schemas {
		walk(m, "", m.Fields, 0)
	}
	return out
}

// aboutTexts reads the "about" text of every field from Kafka's message
// JSON (both generations), keyed "Message path"; nil without ../shared.
func aboutTexts(t *testing.T) map[string]string {
	shared := schemaSharedDir(t)
	if shared == "" {
		return nil
	}
	type jf struct {
		Name   string `json:"name"`
		Type   string `json:"type"`
		About  string `json:"about"`
		Fields []jf   `json:"fields"`
	}
	type jm struct {
		Name          string `json:"name"`
		Fields        []jf   `json:"fields"`
		CommonStructs []struct {
			Name   string `json:"name"`
			Fields []jf   `json:"fields"`
		} `json:"commonStructs"`
	}
	comment := regexp.MustCompile(`(?m)^\s*//.*$`)
	about := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(shared, "kafka-schemas", "*", "*.json"))
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var m jm
		if err := json.Unmarshal(comment.ReplaceAll(src, nil), &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		common := map[string][]jf{}
		for _, c := range m.CommonStructs {
			common[c.Name] = c.Fields
		}
		var walk func(path string, fs []jf, depth int)
		walk = func(path string, fs []jf, depth int) {
			for _, f := range fs {
				p := f.Name
				if path != "" {
					p = path + "." + f.Name
				}
				if _, ok := about[m.Name+" "+p]; !ok {
					about[m.Name+" "+p] = f.About
				}
				sub := f.Fields
				if sub == nil {
					sub = common[strings.TrimPrefix(f.Type, "[]")]
				}
				if depth < maxDepth {
					walk(p, sub, depth+1)
				}
			}
		}
		walk("", m.Fields, 0)
	}
	return about
}

// TestSecretFields pins the list of secret fields (testdata/secrets.txt)
// and fails on any field whose name or about text looks secret that is
// neither marked nor listed in notSecret, and on a notSecret entry that
// no longer names such a field.
func TestSecretFields(t *testing.T) {
	about := aboutTexts(t)
	if about == nil {
		t.Log("../shared/kafka-schemas not found (set KWIRE_SHARED): field names checked, about texts not")
	}
	used := map[string]bool{}
	var lines []string
	for _, sf := range tableFields() {
		key := sf.msg + " " + sf.path
		if sf.f.Secret != NotSecret {
			lines = append(lines, fmt.Sprintf("%s %s %s", key, versionsText(sf.f.Versions), sf.f.Secret))
			if _, ok := notSecret[key]; ok {
				t.Errorf("%s is marked secret and listed in notSecret", key)
			}
			continue
		}
		if !looksSecret.MatchString(sf.f.Name) && !looksSecret.MatchString(about[key]) {
			continue
		}
		if _, ok := notSecret[key]; ok {
			used[key] = true
			continue
		}
		t.Errorf("%s (%s: %q) looks like a secret: mark it in secrets.go's secretRules, or list it in notSecret with the reason it is none",
			key, sf.f.Type, about[key])
	}
	for key := range notSecret {
		// Without the about texts, entries listed for theirs go unused.
		if !used[key] && about != nil {
			t.Errorf("notSecret lists %s, which is no field that looks secret", key)
		}
	}
	lines = slices.Compact(slices.Sorted(slices.Values(lines)))
	got := strings.Join(lines, "\n") + "\n"
	path := filepath.Join("testdata", "secrets.txt")
	if *updateSecrets {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./protocol -run TestSecretFields -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("the secret fields changed (go test ./protocol -run TestSecretFields -update rewrites %s); now:\n%s", path, got)
	}
}

func versionsText(v Versions) string {
	switch {
	case v.Max == MaxVersion:
		return fmt.Sprintf("v%d+", v.Min)
	case v.Min == v.Max:
		return fmt.Sprintf("v%d", v.Min)
	}
	return fmt.Sprintf("v%d-%d", v.Min, v.Max)
}

func TestConfigNameSensitive(t *testing.T) {
	for name, want := range map[string]bool{
		"ssl.keystore.password":                                 true,
		"SSL.KEY.PASSWORD":                                      true,
		"ssl.keystore.key":                                      true,
		"ssl.keystore.certificate.chain":                        true,
		"ssl.truststore.certificates":                           true,
		"sasl.jaas.config":                                      true,
		"listener.name.internal.scram-sha-256.sasl.jaas.config": true,
		"listener.name.external.ssl.truststore.password":        true,
		"password.encoder.secret":                               true,
		"delegation.token.secret.key":                           true,
		"delegation.token.master.key":                           true,
		"confluent.license":                                     true,
		"confluent.license.topic":                               false,
		"redis.auth":                                            true,
		"auth":                                                  true,
		"mqtt.cred":                                             true,
		"api.creds":                                             true,
		"ssl.client.auth":                                       false, // required, requested or none
		"listener.name.internal.ssl.client.auth":                false,
		"http.authentication.type":                              false,
		// Letters that only look like others (TR39 skeletons): Cyrillic
		// "а", "о", "р", "ѕ" in a secret word.
		"ssl.key.pаsswоrd":            true,
		"db.passw0rd":                 true, // a digit for a letter
		"db.раssword":                 true,
		"api.ѕecret":                  true,
		"ssl.keystore.tyре":           false, // a confusable, but not a secret word
		"delegation.token.mаster.key": true,
		// A secret word split across the last separator.
		"pass-word":                  true,
		"db.pass_word":               true,
		"oauth.client.sec.ret":       true,
		"ssl.enabled.protocols":      false,
		"sasl.kerberos.keytab":       true, // a principal's keys (or their path)
		"sasl.kerberos.service.name": false,
		"sasl.oauthbearer.client.credentials.client.secret": true,
		"connection.password":                               true,
		"my.plugin.api_token":                               true,
		"aws.secret.access.key":                             true,
		"db.clientSecret":                                   true,
		// Normalised: case, "_" and "-" as ".", NUL, whitespace and
		// control characters dropped.
		"sasl_jaas_config":                  true,
		"SSL_KEYSTORE_PASSWORD":             true,
		"KAFKA_SASL_JAAS_CONFIG":            true,
		"CONNECT_PRODUCER_SSL_KEY_PASSWORD": true,
		"sasl.jaas.config\x00":              true,
		" sasl.jaas.config":                 true,
		"ssl.keystore.password ":            true,
		"sasl.jaas\x00.config":              true,
		"ssl-truststore-password":           true,
		"Ssl.KeyStore.Password":             true,
		"sasl.jaas.config\t\r\n":            true,
		"SSL_KEYSTORE_TYPE":                 false,
		"retention_ms\x00":                  false,
		// The user-info family ("user:password") and the credentials of
		// Schema Registry's and Connect's clients.
		"basic.auth.user.info":                      true,
		"schema.registry.basic.auth.user.info":      true,
		"BASIC_AUTH_USER_INFO":                      true,
		"http.auth.basic.userinfo":                  true,
		"basicAuthUserInfo":                         true,
		"confluent.metadata.basic.auth.user.info":   true,
		"bearer.auth.token":                         true,
		"schema.registry.bearer.auth.client.secret": true,
		"schema.registry.ssl.key.password":          true,
		"gcs.credentials.json":                      true,
		"keyfile":                                   true,
		"source.cluster.sasl.jaas.config":           true,
		"target.cluster.ssl.truststore.password":    true,
		"producer.override.sasl.jaas.config":        true,
		"mqtt.password":                             true,
		"salesforce.password.token":                 true,
		"snowflake.private.key.passphrase":          true,
		// camelCase secrets of connectors and applications, and names
		// dressed up: format characters, fullwidth letters, a dot at
		// the end (an adversarial trial's cases).
		"sasl.oauthbearer.accessToken":        true,
		"my.authToken":                        true,
		"bearerToken":                         true,
		"camel.kamelet.aws-s3-sink.secretKey": true,
		"aws.secretAccessKey":                 true,
		"azure.storage.accountKey":            true,
		"ssl.key.pass\u200bword":              true,
		"SSL.KEY.PASSWORD\u200b":              true,
		"pa\u00adssword":                      true,
		"ssl.key.password.":                   true,
		"ｓｓｌ.ｋｅｙ.ｐａｓｓｗｏｒｄ":                    true,
		"oauth.client.secret.value":           true,
		"secret.value":                        true,
		"token.value":                         true,
		"api.key.base64":                      true,
		"private.key.pem":                     true,
		"sasl.oauthbearer.assertion":          true,
		"auth.bearer":                         true,
		"db.pass":                             true,
		"jwt":                                 true,
		"session.cookie":                      true,
		"accessKeyId":                         false,
		"session.id":                          false,
		"aws.access.key.id":                   false,
		"retention.value":                     false,
		"basic.auth.credentials.source":       false,
		"bearer.auth.credentials.source":      false,
		"schema.registry.url":                 false,
		"connection.url":                      false,
		"connection.user":                     false,
		"gcs.credentials.path":                false,
		"key.converter.schema.registry.url":   false,
		"ssl.truststore.type":                 false,
		"sasl.mechanism":                      false,
		"user.info.topic":                     false,
		"retention.ms":                        false,
		"delegation.token.max.lifetime.ms":    false,
		"ssl.keystore.type":                   false,
		"ssl.keystore.location":               false,
		"sasl.oauthbearer.token.endpoint.url": false,
		"key.converter":                       false,
		"cleanup.policy":                      false,
		"":                                    false,
		// Past the memo's longest name: computed every time.
		strings.Repeat("producer.override.", 8) + "ssl.key.password": true,
		strings.Repeat("producer.override.", 8) + "ssl.key.location": false,
	} {
		// Twice: the second answer comes from the memo.
		for range 2 {
			if got := ConfigNameSensitive(name); got != want {
				t.Errorf("ConfigNameSensitive(%q) = %v, want %v", name, got, want)
			}
		}
	}
}

// TestConfigNameSensitiveMemo checks that the memo never answers for a
// name another name's answer: more names than slots, so that slots are
// shared and replaced, asked from several goroutines at once.
func TestConfigNameSensitiveMemo(t *testing.T) {
	names := make([]string, 0, 3*len(sensitiveMemo))
	for i := range cap(names) / 2 {
		names = append(names, fmt.Sprintf("c%d.ssl.key.password", i), fmt.Sprintf("c%d.ssl.key.location", i))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for k := range names {
				name := names[(k+g*997)%len(names)]
				if got, want := ConfigNameSensitive(name), strings.HasSuffix(name, "password"); got != want {
					t.Errorf("ConfigNameSensitive(%q) = %v, want %v", name, got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestParseSASLToken(t *testing.T) {
	type part struct {
		name, value string
		secret      bool
	}
	for _, c := range []struct {
		mech   string
		client bool
		tok    string
		msg    SASLMessage
		parts  []part // nil: withheld whole
	}{
		{"PLAIN", true, "\x00alice\x00pw", SASLPlain, []part{{"authzid", "", false}, {"username", "alice", false}, {"password", "pw", true}}},
		{"PLAIN", true, "admin\x00alice\x00p\x01w\t", SASLPlain, []part{{"authzid", "admin", false}, {"username", "alice", false}, {"password", "p\x01w\t", true}}},
		{"PLAIN", true, "\x00al\u00efce\x00p\u00e4ss", SASLPlain, []part{{"authzid", "", false}, {"username", "al\u00efce", false}, {"password", "p\u00e4ss", true}}},
		// RFC 4616: exactly two NULs, a user name, a password, UTF-8.
		{"PLAIN", true, "admin\x00alice\x00p\x00w", SASLNotParsed, nil},
		{"PLAIN", true, "\x00alice\x00pw\x00\x00\x00\x19\x00\x24", SASLNotParsed, nil}, // a next frame swallowed
		{"PLAIN", true, "\x00\x00pw", SASLNotParsed, nil},
		{"PLAIN", true, "\x00alice\x00", SASLNotParsed, nil},
		{"PLAIN", true, "\x00alice\x00p\xffw", SASLNotParsed, nil},
		{"PLAIN", true, "\x00alice", SASLNotParsed, nil},
		{"PLAIN", true, "alice-pw", SASLNotParsed, nil},
		{"PLAIN", false, "x", SASLNotParsed, nil},
		{"plain", true, "", SASLEmpty, []part{}},
		{"SCRAM-SHA-256", true, "n,,n=alice,r=abc", SASLScramClientFirst, []part{{"gs2Header", "n,,", false}, {"username", "alice", false}, {"nonce", "abc", false}}},
		{"SCRAM-SHA-512", true, "n,a=admin,n=tok,r=abc,tokenauth=true", SASLScramClientFirst,
			[]part{{"gs2Header", "n,a=admin,", false}, {"username", "tok", false}, {"nonce", "abc", false}, {"tokenauth", "true", false}}},
		{"SCRAM-SHA-256", false, "r=abcdef,s=c2FsdA==,i=4096", SASLScramServerFirst, []part{{"nonce", "abcdef", false}, {"salt", "c2FsdA==", false}, {"iterations", "4096", false}}},
		{"SCRAM-SHA-256", true, "c=biws,r=abcdef,p=cHJvb2Y=", SASLScramClientFinal, []part{{"channelBinding", "biws", false}, {"nonce", "abcdef", false}, {"proof", "cHJvb2Y=", true}}},
		{"SCRAM-SHA-256", false, "v=c2ln", SASLScramServerFinal, []part{{"verifier", "c2ln", true}}},
		{"SCRAM-SHA-256", false, "e=invalid-proof", SASLScramServerFinal, []part{{"error", "invalid-proof", false}}},
		{"SCRAM-SHA-256", true, "n,,n=alice,r=abc,zz=secret", SASLScramClientFirst, []part{{"gs2Header", "n,,", false}, {"username", "alice", false}, {"nonce", "abc", false}, {"zz", "secret", true}}},
		{"SCRAM-SHA-256", true, "c=biws,,p=cHJvb2Y=", SASLNotParsed, nil},
		{"SCRAM-SHA-256", true, "c=biws,r=x,", SASLNotParsed, nil},
		// Valid SCRAM messages of every form.
		{"SCRAM-SHA-256", true, "y,a=ad=2Cmin,n=al=3Dice,r=a!b~", SASLScramClientFirst,
			[]part{{"gs2Header", "y,a=ad=2Cmin,", false}, {"username", "al=3Dice", false}, {"nonce", "a!b~", false}}},
		{"SCRAM-SHA-256", true, "p=tls-unique,,n=alice,r=abc", SASLScramClientFirst, []part{{"gs2Header", "p=tls-unique,,", false}, {"username", "alice", false}, {"nonce", "abc", false}}},
		{"SCRAM-SHA-256", true, "n,,m=x,n=alice,r=abc", SASLScramClientFirst,
			[]part{{"gs2Header", "n,,", false}, {"reserved", "x", true}, {"username", "alice", false}, {"nonce", "abc", false}}},
		{"SCRAM-SHA-256", true, "n,,n=alice,r=abc,tokenauth=x", SASLScramClientFirst,
			[]part{{"gs2Header", "n,,", false}, {"username", "alice", false}, {"nonce", "abc", false}, {"tokenauth", "x", true}}},
		{"SCRAM-SHA-256", false, "r=abcdef,s=c2FsdA==,i=4096,ext=x", SASLScramServerFirst,
			[]part{{"nonce", "abcdef", false}, {"salt", "c2FsdA==", false}, {"iterations", "4096", false}, {"ext", "x", true}}},
		{"SCRAM-SHA-256", true, "c=biws,r=abcdef,ext=y,p=cHJvb2Y=", SASLScramClientFinal,
			[]part{{"channelBinding", "biws", false}, {"nonce", "abcdef", false}, {"ext", "y", true}, {"proof", "cHJvb2Y=", true}}},
		{"SCRAM-SHA-256", false, "e=other-error=x", SASLScramServerFinal, []part{{"error", "other-error=x", false}}},
		// SCRAM grammar violations: each withheld whole.
		{"SCRAM-SHA-256", true, "c=\x00\x00\x000\x00$\x00\x01alice\x00Qz1bf98,r=abc,p=cHJvb2Y=", SASLNotParsed, nil}, // c= not base64
		{"SCRAM-SHA-256", true, "c=\x00\x00\x000\x00$\x00\x01\x00\x03adv\x00alice\x00Qz1bf98ff", SASLNotParsed, nil}, // a next frame swallowed
		{"SCRAM-SHA-256", true, "c=biws,r=abcdefghijklmnop\x00p=VDB8Kh7U", SASLNotParsed, nil},                       // the comma before p= damaged
		{"SCRAM-SHA-256", true, "c=biws,r=abc,p=cHJvb2Y=\x00\x00\x00\x19", SASLNotParsed, nil},                       // trailing garbage
		{"SCRAM-SHA-256", true, "c=biws,r=abc,p=cHJvb2Y", SASLNotParsed, nil},                                        // proof not base64 (padding)
		{"SCRAM-SHA-256", true, "c=biws,r=abc", SASLNotParsed, nil},                                                  // no proof
		{"SCRAM-SHA-256", true, "c=biws,p=cHJvb2Y=", SASLNotParsed, nil},                                             // no nonce
		{"SCRAM-SHA-256", true, "r=abc,c=biws,p=cHJvb2Y=", SASLNotParsed, nil},                                       // order
		{"SCRAM-SHA-256", true, "c=biws,r=abc,p=cHJvb2Y=,p=cHJvb2Y=", SASLNotParsed, nil},                            // an attribute twice
		{"SCRAM-SHA-256", true, "c=biws,r=a,b,p=cHJvb2Y=", SASLNotParsed, nil},                                       // an extension without "="
		{"SCRAM-SHA-256", true, "c=biws,r=,p=cHJvb2Y=", SASLNotParsed, nil},                                          // empty nonce
		{"SCRAM-SHA-256", true, "c=biws,r=a b,p=cHJvb2Y=", SASLNotParsed, nil},                                       // nonce not printable
		{"SCRAM-SHA-256", true, "c=biws,r=abc,e\x00t=v,p=cHJvb2Y=", SASLNotParsed, nil},                              // extension key not ALPHA
		{"SCRAM-SHA-256", true, "c=biws,r=abc,ext=v\x00w,p=cHJvb2Y=", SASLNotParsed, nil},                            // NUL in an extension
		{"SCRAM-SHA-256", true, "n,,n=alice,r=abc\x00\x00\x00\x1f\x00\x03", SASLNotParsed, nil},                      // nonce swallowed a frame
		{"SCRAM-SHA-256", true, "n,,n=al,ice,r=abc", SASLNotParsed, nil},                                             // a comma in the user name
		{"SCRAM-SHA-256", true, "n,,n=al=ice,r=abc", SASLNotParsed, nil},                                             // "=" not =2C or =3D
		{"SCRAM-SHA-256", true, "n,,n=,r=abc", SASLNotParsed, nil},                                                   // empty user name
		{"SCRAM-SHA-256", true, "n,,r=abc,n=alice", SASLNotParsed, nil},                                              // order
		{"SCRAM-SHA-256", true, "n,,n=alice", SASLNotParsed, nil},                                                    // no nonce
		{"SCRAM-SHA-256", true, "x,,n=alice,r=abc", SASLNotParsed, nil},                                              // gs2 flag
		{"SCRAM-SHA-256", true, "n,b=x,n=alice,r=abc", SASLNotParsed, nil},                                           // gs2 authzid
		{"SCRAM-SHA-256", true, "p=,,n=alice,r=abc", SASLNotParsed, nil},                                             // empty cb-name
		{"SCRAM-SHA-256", true, "n,,n=alice,r=abc,p=cHJvb2Y=", SASLNotParsed, nil},                                   // an attribute of RFC 5802 as an extension
		{"SCRAM-SHA-256", true, "n,,n=alice,r=abc,tokenauth=true,", SASLNotParsed, nil},                              // trailing comma
		{"SCRAM-SHA-256", false, "r=abc,s=c2FsdA==,i=0", SASLNotParsed, nil},                                         // iteration count not posit-number
		{"SCRAM-SHA-256", false, "r=abc,s=c2FsdA==,i=4096x", SASLNotParsed, nil},                                     // iteration count not digits
		{"SCRAM-SHA-256", false, "r=abc,s=c2Fsd!==,i=4096", SASLNotParsed, nil},                                      // salt not base64
		{"SCRAM-SHA-256", false, "r=abc,i=4096,s=c2FsdA==", SASLNotParsed, nil},                                      // order
		{"SCRAM-SHA-256", false, "r=abc,s=c2FsdA==", SASLNotParsed, nil},                                             // no iteration count
		{"SCRAM-SHA-256", false, "r=abc,s=c2FsdA==,i=4096\x00\x00\x00\x2e", SASLNotParsed, nil},                      // trailing garbage
		{"SCRAM-SHA-256", false, "v=c2ln\x00\x00\x00\x1f", SASLNotParsed, nil},                                       // verifier swallowed a frame
		{"SCRAM-SHA-256", false, "v=c2l", SASLNotParsed, nil},                                                        // verifier not base64
		{"SCRAM-SHA-256", false, "v=c2ln,e=x", SASLNotParsed, nil},                                                   // both
		{"SCRAM-SHA-256", false, "e=", SASLNotParsed, nil},                                                           // empty error
		{"SCRAM-SHA-256", false, "e=bad\x00", SASLNotParsed, nil},                                                    // NUL in the error
		{"SCRAM-SHA-256", false, "v=c2ln,ext", SASLNotParsed, nil},                                                   // extension without "="
		{"SCRAM-SHA-256", true, "\x00alice\x00pw", SASLNotParsed, nil},
		{"SCRAM-SHA-256", false, "garbage", SASLNotParsed, nil},
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer abc.def\x01\x01", SASLOAuthClient, []part{{"gs2Header", "n,,", false}, {"auth", "Bearer abc.def", true}}},
		{"OAUTHBEARER", true, "n,a=u,\x01host=h\x01port=9\x01auth=Bearer t\x01ext=v\x01\x01", SASLOAuthClient,
			[]part{{"gs2Header", "n,a=u,", false}, {"host", "h", false}, {"port", "9", false}, {"auth", "Bearer t", true}, {"ext", "v", true}}},
		{"OAUTHBEARER", true, "\x01", SASLOAuthClientAck, []part{}},
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer t", SASLNotParsed, nil},
		{"OAUTHBEARER", true, "n,,\x01=x\x01\x01", SASLNotParsed, nil},
		{"OAUTHBEARER", true, "y,,\x01auth=bearer  a-b.c_d~e+f/g==\x01host=h k\x01\x01", SASLOAuthClient,
			[]part{{"gs2Header", "y,,", false}, {"auth", "bearer  a-b.c_d~e+f/g==", true}, {"host", "h k", false}}},
		// RFC 7628 grammar violations: each withheld whole.
		{"OAUTHBEARER", true, "n,,\x01host=h\x00auth=Bearer Qz7cafc0d9\x01ext=v\x01\x01", SASLNotParsed, nil}, // the ^A after host=h damaged
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer t\x01\x01\x00\x00\x00\x19", SASLNotParsed, nil},             // trailing garbage
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer t\x01auth=Bearer u\x01\x01", SASLNotParsed, nil},            // two auth
		{"OAUTHBEARER", true, "n,,\x01host=h\x01\x01", SASLNotParsed, nil},                                    // no auth
		{"OAUTHBEARER", true, "n,,\x01auth=Basic dTpw\x01\x01", SASLNotParsed, nil},                           // not Bearer
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer\x01\x01", SASLNotParsed, nil},                               // no token
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer a b\x01\x01", SASLNotParsed, nil},                           // not a b64token
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer t\x01host=a\x01host=b\x01\x01", SASLNotParsed, nil},         // a key twice
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer t\x01port=09\x01\x01", SASLNotParsed, nil},                  // port with a leading zero
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer t\x01e1=v\x01\x01", SASLNotParsed, nil},                     // key not ALPHA
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer t\x01host=h\xc3\xa9\x01\x01", SASLNotParsed, nil},           // value not VCHAR
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer t\x01hostname\x01\x01", SASLNotParsed, nil},                 // no "="
		{"OAUTHBEARER", true, "p=tls-unique,,\x01auth=Bearer t\x01\x01", SASLNotParsed, nil},                  // channel binding
		{"OAUTHBEARER", true, "n,,auth=Bearer t\x01\x01", SASLNotParsed, nil},                                 // no kvsep after the gs2 header
		{"OAUTHBEARER", true, "n,,\x01auth=Bearer t\x01", SASLNotParsed, nil},                                 // no final kvsep
		{"OAUTHBEARER", true, "\x01\x01", SASLNotParsed, nil},
		{"OAUTHBEARER", false, `{"scope":"kafka"}`, SASLNotParsed, nil},                      // no status
		{"OAUTHBEARER", false, `{"status":1}`, SASLNotParsed, nil},                           // not a string
		{"OAUTHBEARER", false, `{"status":"invalid_token"} x`, SASLNotParsed, nil},           // trailing garbage
		{"OAUTHBEARER", false, "{\"status\":\"invalid_token\"}\x00\x00", SASLNotParsed, nil}, // trailing garbage
		{"OAUTHBEARER", false, `{"status":"invalid_token"}`, SASLOAuthServerError, []part{{"error", `{"status":"invalid_token"}`, false}}},
		{"OAUTHBEARER", false, `{"status":"invalid_token","x":"y"}`, SASLNotParsed, nil},
		{"GSSAPI", true, "\x60\x01\x02", SASLGSSAPI, nil},
		{"AWS_MSK_IAM", true, `{"version":"1"}`, SASLNotParsed, nil},
		{"", true, "\x00alice\x00pw", SASLPlain, []part{{"authzid", "", false}, {"username", "alice", false}, {"password", "pw", true}}},
		{"", true, "\x00a\x00b\x00c", SASLNotParsed, nil},
		{"", true, "n,,n=bob,r=xyz", SASLScramClientFirst, []part{{"gs2Header", "n,,", false}, {"username", "bob", false}, {"nonce", "xyz", false}}},
		{"", true, "n,,\x01auth=Bearer t\x01\x01", SASLOAuthClient, []part{{"gs2Header", "n,,", false}, {"auth", "Bearer t", true}}},
		{"", false, "v=c2ln", SASLScramServerFinal, []part{{"verifier", "c2ln", true}}},
		{"", true, "\x60\x01", SASLGSSAPI, nil},
		{"", true, "\xde\xad\xbe\xef", SASLNotParsed, nil},
		{"", false, `{"status":"invalid_token"}`, SASLOAuthServerError, []part{{"error", `{"status":"invalid_token"}`, false}}},
		{"", false, `{"version":"2020_10_22","request-id":"x"}`, SASLNotParsed, nil}, // another mechanism's JSON
		{"", true, "c=biws,r=abc,p=cHJvb2Y=", SASLScramClientFinal, []part{{"channelBinding", "biws", false}, {"nonce", "abc", false}, {"proof", "cHJvb2Y=", true}}},
		{"", false, "r=abc,s=c2FsdA==,i=4096", SASLScramServerFirst, []part{{"nonce", "abc", false}, {"salt", "c2FsdA==", false}, {"iterations", "4096", false}}},
		{"", true, "\x01", SASLOAuthClientAck, []part{}},
		// Unknown mechanism: a token two mechanisms claim, or that the one
		// claiming it does not parse, is withheld whole.
		{"", true, "n,,\x01auth=Bearer eyJhbGciOiJIUzI1NiJ9.Oauth-4\x01ext=a\x00b\x00c\x01\x01", SASLNotParsed, nil}, // OAUTHBEARER with two NULs
		{"", true, "n,,n=alice,r=abc\x00bob\x00pw", SASLNotParsed, nil},                                              // SCRAM with two NULs
		{"", true, "c=biws,r=abc,p=cHJvb2Y=\x00\x00\x00\x19", SASLNotParsed, nil},                                    // SCRAM and PLAIN
		{"", true, "`x\x00alice\x00pw", SASLNotParsed, nil},                                                          // PLAIN, or GSSAPI's 0x60
		{"", true, "c=biws,r=a b,p=cHJvb2Y=", SASLNotParsed, nil},                                                    // SCRAM's, not well-formed
		{"", true, "n,,\x01host=h\x00auth=Bearer t\x01\x01", SASLNotParsed, nil},                                     // OAUTHBEARER's (one NUL), not well-formed
		{"", false, "v=c2ln\x00\x00\x00\x1f", SASLNotParsed, nil},
	} {
		got := ParseSASLToken(c.mech, c.client, []byte(c.tok))
		name := fmt.Sprintf("%s client=%v %q", c.mech, c.client, c.tok)
		if got.Message != c.msg {
			t.Errorf("%s: message %v, want %v", name, got.Message, c.msg)
		}
		if c.parts == nil {
			if !got.Withheld || got.Parts != nil || got.Reason == "" || !got.HasSecret() {
				t.Errorf("%s: want withheld whole with a reason, got %+v", name, got)
			}
			continue
		}
		if got.Withheld || len(got.Parts) != len(c.parts) {
			t.Errorf("%s: parts %+v, want %v", name, got.Parts, c.parts)
			continue
		}
		secret := false
		for i, p := range got.Parts {
			w := c.parts[i]
			if p.Name != w.name || p.Value != w.value || p.Secret != w.secret || c.tok[p.Off:p.Off+p.Len] != w.value {
				t.Errorf("%s: part %d %+v, want %+v", name, i, p, w)
			}
			secret = secret || w.secret
		}
		if got.HasSecret() != secret {
			t.Errorf("%s: HasSecret %v", name, got.HasSecret())
		}
	}
}

// Decoded, every secret part and secret field is marked FlagRedacted and
// emptied; with ShowSecrets, nothing is.
func TestSecretFieldsDecoded(t *testing.T) {
	for _, c := range []struct {
		name     string
		key, ver int16
		response bool
		body     string // hex
		path     []string
		want     string // the value with ShowSecrets
	}{
		// RenewDelegationTokenRequest v1: Hmac (BYTES) "\x01\x02\x03", RenewPeriodMs.
		{"renew hmac", 39, 1, false, "00000003010203" + "0000000000000001", []string{"Hmac"}, "\x01\x02\x03"},
		// DescribeConfigsResponse v1: ThrottleTimeMs, Results [1]: ErrorCode,
		// ErrorMessage null, ResourceType 2, ResourceName "t", Configs [1]:
		// Name "x", Value "pw", ReadOnly, ConfigSource 1, IsSensitive true,
		// Synonyms [1]: Name "x", Value "pw", Source 1.
		{"describe configs sensitive", 32, 1, true,
			"00000000" + "00000001" + "0000" + "ffff" + "02" + "000174" + "00000001" +
				"000178" + "00027077" + "00" + "01" + "01" + "00000001" + "000178" + "00027077" + "01",
			[]string{"Results", "[0]", "Configs", "[0]", "Value"}, "pw"},
	} {
		body := unhex(t, c.body)
		for _, show := range []bool{false, true} {
			tr := (&Decoder{ShowSecrets: show}).DecodeBody(c.key, c.ver, c.response, body)
			if tr.Err != nil {
				t.Fatalf("%s: %v", c.name, tr.Err)
			}
			n := tr.Root
			for _, p := range c.path {
				n = n.Child(p)
			}
			if n == nil {
				t.Fatalf("%s: no node at %v", c.name, c.path)
			}
			val := n.Str + string(n.Raw)
			if show && (n.Flags&FlagRedacted != 0 || val != c.want) {
				t.Errorf("%s (shown): %+v", c.name, n)
			}
			if !show && (n.Flags&FlagRedacted == 0 || val != "") {
				t.Errorf("%s: not withheld: %+v", c.name, n)
			}
			if c.key == 32 {
				syn := tr.Root.Child("Results").Child("[0]").Child("Configs").Child("[0]").Child("Synonyms").Child("[0]").Child("Value")
				if (syn.Flags&FlagRedacted != 0) == show || (syn.Str == "pw") != show {
					t.Errorf("%s: synonym show=%v: %+v", c.name, show, syn)
				}
			}
		}
	}
}

// A token of an unknown mechanism that two mechanisms claim is withheld
// with a reason naming both (the capture started after the handshake, or
// kwire decode).
func TestParseSASLTokenAmbiguous(t *testing.T) {
	for tok, want := range map[string]string{
		"n,,\x01auth=Bearer eyJ.x\x01ext=a\x00b\x00c\x01\x01": "could be PLAIN or OAUTHBEARER",
		"n,,n=alice,r=abc\x00bob\x00pw":                       "could be PLAIN or SCRAM",
		"`x\x00alice\x00pw":                                   "could be PLAIN or GSSAPI",
		"\xde\xad":                                            "cannot tell",
	} {
		got := ParseSASLToken("", true, []byte(tok))
		if !got.Withheld || got.Parts != nil || !strings.Contains(got.Reason, want) {
			t.Errorf("%q: %+v, want withheld: %q", tok, got, want)
		}
	}
}

// A config value that is a URL or connection string with a password is
// withheld whatever the config's name; other URLs are shown.
func TestConfigURLSecret(t *testing.T) {
	for v, want := range map[string]bool{
		"jdbc:postgresql://admin:Qz8c424f@db:5432/x":                                                  true,
		"JDBC:MYSQL://admin:pw@db/x":                                                                  true,
		"mongodb://u:p%40ss@h1:27017,h2:27017/?replicaSet=r":                                          true,
		"mongodb+srv://u:pw@cluster.example.com/db":                                                   true,
		"https://u:pa/ss@host/path":                                                                   true,
		"jdbc:mysql://db/x?user=u&password=pw":                                                        true,
		"jdbc:sqlserver://h:1433;databaseName=x;user=u;password=pw":                                   true,
		"jdbc:postgresql://db/x?sslpassword=pw":                                                       true,
		"jdbc:oracle:thin:scott/tiger@host:1521:orcl":                                                 true,
		"jdbc:oracle:thin:scott/tiger@//host:1521/svc":                                                true,
		"https://host/api?api_key=abc":                                                                true,
		"Server=db;Database=x;User Id=sa;Password=Qz9;":                                               true,
		"DefaultEndpointsProtocol=https;AccountName=a;AccountKey=K==":                                 true,
		"host=db port=5432 password=Qz9 dbname=x":                                                     true,
		`org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b";`: true,
		"Server=db;Database=x;User Id=sa;Password = Qz9;":                                             true,
		"password\t=\tQz9":                                                                            true,
		"password: Qz9":                                                                               true,
		`{"password":"Qz9"}`:                                                                          true,
		`{"client_secret": "Qz9"}`:                                                                    true,
		"Authorization: Bearer Qz9":                                                                   true,
		"Bearer eyJhbGciOiJIUzI1NiJ9.e30.Qz9sig":                                                      true, // the header's value alone
		"bearer Qz9Qz9Qz9Qz9":                                                                         true,
		"X-Token=1, Basic dXNlcjpRejk=":                                                               true, // user:Qz9
		"Basic auth is enabled":                                                                       false,
		"Bearer token":                                                                                false, // a word, not a token
		"unbearer Qz9Qz9Qz9Qz9":                                                                       false,
		"-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----":                                true,
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE":                                                       true,
		"-----BEGIN CERTIFICATE-----\nMIIE\n-----END CERTIFICATE-----":                                false,
		`{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}`:                   false,
		"org.apache.kafka.connect.json.JsonConverter":                                                 false,
		"https://sr:8081":                                                                             false,
		"Server=db;Database=x;User Id=sa;":                                                            false,
		"host=db port=5432 dbname=x":                                                                  false,
		"jdbc:postgresql://db:5432/x":                                                                 false,
		"jdbc:postgresql://admin@db:5432/x":                                                           false,
		"jdbc:oracle:thin:@host:1521:orcl":                                                            false,
		"mongodb://h1:27017/?replicaSet=r&authSource=admin":                                           false,
		"https://idp.example.com/oauth2/token":                                                        false,
		"PLAINTEXT://:9092,SSL://broker:9093":                                                         false,
		"http://sr:8081?x=y":                                                                          false,
		"admin:pw@host":                                                                               true, // a URL's authority without its scheme
		"user:Qz9@db:5432/x":                                                                          true,
		"alice@example.com":                                                                           false, // no password
		"a:b@c d":                                                                                     false, // text, not an authority
		"604800000":                                                                                   false,
	} {
		if got := configURLSecret(v); got != want {
			t.Errorf("configURLSecret(%q) = %v, want %v", v, got, want)
		}
	}
}

// An AlterConfigs request whose config, not secret by its name, holds a
// URL with a password has that value withheld and marked; a URL without
// one is shown.
func TestConfigURLWithheld(t *testing.T) {
	// AlterConfigsRequest v0: Resources [1]: ResourceType 2, ResourceName
	// "t", Configs [2]: "connection.url" = a JDBC URL with a password,
	// "schema.registry.url" = a URL without; ValidateOnly false.
	str := func(s string) string { return fmt.Sprintf("%04x%x", len(s), s) }
	body := "00000001" + "02" + str("t") + "00000002" +
		str("connection.url") + str("jdbc:postgresql://admin:kwSecretPW@db:5432/x") +
		str("schema.registry.url") + str("https://sr:8081") + "00"
	for _, show := range []bool{false, true} {
		tr := (&Decoder{ShowSecrets: show}).DecodeBody(33, 0, false, unhex(t, body))
		if tr.Err != nil {
			t.Fatal(tr.Err)
		}
		cfgs := tr.Root.Child("Resources").Child("[0]").Child("Configs")
		url, sr := cfgs.Child("[0]").Child("Value"), cfgs.Child("[1]").Child("Value")
		if show {
			if url.Flags&FlagRedacted != 0 || !strings.Contains(url.Str, "kwSecretPW") {
				t.Errorf("shown: %+v", url)
			}
			continue
		}
		if url.Flags&FlagRedacted == 0 || url.Str != "" || !strings.Contains(url.Note, "withheld") {
			t.Errorf("not withheld: %+v", url)
		}
		if sr.Flags&FlagRedacted != 0 || sr.Str != "https://sr:8081" {
			t.Errorf("schema.registry.url: %+v", sr)
		}
	}
}

// A token of a mechanism kwire does not parse is withheld whole, its
// reason naming the mechanism whatever its first letter (it said "a
// AWS_MSK_IAM token").
func TestSASLUnparsedMechanismReason(t *testing.T) {
	for _, mech := range []string{"AWS_MSK_IAM", "X-CUSTOM"} {
		got := ParseSASLToken(mech, true, []byte(`{"version":"2020_10_22","user-agent":"x"}`))
		want := "a token of the " + mech + " mechanism, which kwire does not parse"
		if !got.Withheld || got.Message != SASLNotParsed || got.Reason != want {
			t.Errorf("%s: %+v, want withheld with reason %q", mech, got, want)
		}
	}
}
