package pcaps

// What the golden captures must hold, read from kwire's --json output
// (issue 4): produce and fetch with each codec from at least two client
// libraries, a committed and an aborted transaction (control batches),
// null keys and values, record headers and a value over 1 MB. A failure
// names what is missing: a finding for the captures (tools/capgen) or for
// kwire's decoding, whichever the golden outputs show.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// library names the client library from capgen's client IDs,
// "capgen-<library>-<role>" (README.md): "capgen-kgo-gzip" → "kgo".
func library(clientID *string) string {
	if clientID == nil {
		return "?"
	}
	parts := strings.Split(*clientID, "-")
	if len(parts) < 2 || parts[0] != "capgen" {
		return *clientID
	}
	return parts[1]
}

// features collects "what" → the set of libraries (or captures) seen.
type features map[string]map[string]bool

func (f features) add(what, who string) {
	if f[what] == nil {
		f[what] = map[string]bool{}
	}
	f[what][who] = true
}

func (f features) list(what string) string {
	var l []string
	for k := range f[what] {
		l = append(l, k)
	}
	sort.Strings(l)
	return strings.Join(l, ",")
}

// batchesIn returns every record batch (or legacy message) object under v:
// objects with "compression" and "magic".
func batchesIn(v any, out *[]map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["compression"]; ok {
			if _, ok := x["magic"]; ok {
				*out = append(*out, x)
				return
			}
		}
		for _, e := range x {
			batchesIn(e, out)
		}
	case []any:
		for _, e := range x {
			batchesIn(e, out)
		}
	}
}

// recordsOf returns a batch's records: the records of a v2 batch, the
// message itself for an uncompressed legacy message, the inner messages
// of a compressed one.
func recordsOf(b map[string]any) []map[string]any {
	if m, _ := b["magic"].(json.Number); m == "2" {
		return jArr(b, "records")
	}
	if b["compression"] == "none" {
		return []map[string]any{b}
	}
	var inner []map[string]any
	batchesIn(b["messageSet"], &inner)
	return inner
}

func TestCapturesHoldIssue4Records(t *testing.T) {
	f := features{}
	for _, c := range captures(t) {
		res := kwire(t, readArgs(t, c, modes[3])...)
		for _, d := range parseNDJSON(t, res.stdout) {
			lib := library(d.ClientID)
			var side string
			var msg *kwireMsg
			switch d.APIKey {
			case keyProduce:
				side, msg = "produce", d.Request
			case keyFetch:
				side, msg = "fetch", d.Response
			default:
				continue
			}
			if msg == nil {
				continue
			}
			body, err := bodyValue(msg.Body)
			if err != nil {
				t.Fatalf("%s: corr %d: %v", c, d.CorrelationID, err)
			}
			var batches []map[string]any
			batchesIn(body, &batches)
			for _, b := range batches {
				codec, _ := b["compression"].(string)
				f.add(side+" "+codec, lib)
				if b["control"] == true {
					for _, r := range recordsOf(b) {
						if ct, ok := r["controlType"].(string); ok {
							f.add(side+" control "+ct, c)
						}
					}
				}
				if b["transactional"] == true && b["control"] != true {
					f.add(side+" transactional data", c)
				}
				for _, r := range recordsOf(b) {
					if b["control"] == true {
						continue
					}
					if v, ok := r["key"]; ok && v == nil {
						f.add(side+" null key", lib)
					}
					if v, ok := r["value"]; ok && v == nil {
						f.add(side+" null value", lib)
					}
					if len(jArr(r, "headers")) > 0 {
						f.add(side+" headers", lib)
					}
					if n, ok := r["valueSize"].(json.Number); ok {
						if size, err := n.Int64(); err == nil && size > 1<<20 {
							f.add(side+" value over 1 MiB", lib)
						}
					}
				}
			}
		}
	}
	var missing []string
	need := func(what string, n int) {
		if len(f[what]) < n {
			missing = append(missing, fmt.Sprintf("%s: from %d, want %d (seen: %q)", what, len(f[what]), n, f.list(what)))
		}
	}
	for _, side := range []string{"produce", "fetch"} {
		for _, codec := range []string{"gzip", "snappy", "lz4", "zstd"} {
			need(side+" "+codec, 2) // libraries
		}
		need(side+" null key", 1)
		need(side+" null value", 1)
		need(side+" headers", 1)
		need(side+" value over 1 MiB", 1)
		need(side+" transactional data", 1)
	}
	need("fetch control COMMIT", 1)
	need("fetch control ABORT", 1)
	for _, m := range missing {
		t.Errorf("the captures lack %s", m)
	}
	for what := range f {
		t.Logf("%s: %s", what, f.list(what))
	}
}

// TestSecretsWithheld checks that no golden output shows the SASL
// passwords of sasl-plain.pcap and sasl-v0-raw.pcap (README.md), plainly or
// as the base64 of the PLAIN token, and that --show-secrets does show them
// (so that the check can fail).
func TestSecretsWithheld(t *testing.T) {
	secrets := []string{"capgen-secret", "capgen-wrong-password"}
	var forms []string
	for _, s := range secrets {
		forms = append(forms, s, base64.StdEncoding.EncodeToString([]byte("\x00capgen\x00"+s)))
	}
	for _, c := range []string{"sasl-plain.pcap", "sasl-v0-raw.pcap"} {
		shown := false
		for _, m := range modes {
			if _, skip := skipGolden[strings.TrimSuffix(c, ".pcap")+"."+m.name]; skip {
				continue
			}
			out := kwire(t, readArgs(t, c, m)...).golden()
			for _, s := range forms {
				if strings.Contains(string(out), s) {
					t.Errorf("%s %s: the output shows the secret %q", c, m.name, s)
				}
			}
			withSecrets := kwire(t, append(readArgs(t, c, m), "--show-secrets")...).golden()
			shown = shown || strings.Contains(string(withSecrets), secrets[0])
		}
		if !shown {
			t.Errorf("%s: --show-secrets shows %q in no mode: the capture (or this test) no longer holds it", c, secrets[0])
		}
	}
}

// TestDetect checks that `kwire read` with no flags (detection by content
// is the default) and with --detect, without the capture's ports, finds
// the same exchanges as with them. The TLS capture is exempt: content
// detection cannot see Kafka in it.
func TestDetect(t *testing.T) {
	for _, c := range captures(t) {
		if info(t, c).conns != nil && decodeIndependentlyCount(info(t, c).conns) == 0 {
			continue // no plaintext Kafka (TLS)
		}
		t.Run(strings.TrimSuffix(c, ".pcap"), func(t *testing.T) {
			ported := kwire(t, readArgs(t, c, modes[3])...)
			for _, flags := range [][]string{nil, {"--detect"}} {
				args := append([]string{"read", "--color=never", "--json"}, flags...)
				detected := kwire(t, append(args, c)...)
				if string(ported.stdout) != string(detected.stdout) || ported.exit != detected.exit {
					t.Errorf("%v (exit %d, %d lines) and --port %s (exit %d, %d lines) differ; %v says:\n%s",
						flags, detected.exit, len(parseNDJSON(t, detected.stdout)), info(t, c).ports,
						ported.exit, len(parseNDJSON(t, ported.stdout)), flags, detected.stderr)
				}
			}
		})
	}
}

// decodeIndependentlyCount counts the connections that are not TLS.
func decodeIndependentlyCount(conns []*tcpConn) int {
	n := 0
	for _, c := range conns {
		if len(c.c2s) > 0 && c.c2s[0] != 0x16 {
			n++
		}
	}
	return n
}

// TestJSONNoDuplicateKeys checks every object of every --json line for
// repeated keys, which JSON parsers resolve by keeping one of them (Go and
// jq the last), losing the others.
func TestJSONNoDuplicateKeys(t *testing.T) {
	for _, c := range captures(t) {
		res := kwire(t, readArgs(t, c, modes[3])...)
		for i, line := range strings.Split(string(res.stdout), "\n") {
			if line == "" {
				continue
			}
			dec := json.NewDecoder(strings.NewReader(line))
			var dups []string
			if err := duplicateKeys(dec, "", &dups); err != nil {
				t.Errorf("%s: line %d: %v", c, i+1, err)
			}
			for _, d := range dups {
				t.Errorf("%s: line %d: key repeated: %s", c, i+1, d)
			}
		}
	}
}

// duplicateKeys reads one JSON value from dec and appends the paths of
// repeated object keys to dups.
func duplicateKeys(dec *json.Decoder, path string, dups *[]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			if seen[k] {
				*dups = append(*dups, path+"."+k)
			}
			seen[k] = true
			if err := duplicateKeys(dec, path+"."+k, dups); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := duplicateKeys(dec, fmt.Sprintf("%s[%d]", path, i), dups); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}
