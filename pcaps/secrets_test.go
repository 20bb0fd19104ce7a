package pcaps

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/secretcorpus"
)

// The passwords capgen authenticates the SASL captures with
// (tools/capgen/sasl.go: saslPass, saslWrongPass).
var capgenPasswords = []string{"capgen-secret", "capgen-wrong-password"}

// SCRAM's proofs and server signatures on the wire (RFC 5802: client-final
// ",p=", server-final "v="), each of which lets whoever has it test
// password guesses offline.
var (
	scramProof     = regexp.MustCompile(`,p=([A-Za-z0-9+/]{20,}=*)`)
	scramSignature = regexp.MustCompile(`(?:^|[^A-Za-z0-9+/=])v=([A-Za-z0-9+/]{20,}=*)`)
)

// saslSecrets returns the secrets of a SASL capture: capgen's passwords
// and the SCRAM proofs and signatures its connections carry (read from the
// capture's TCP payloads by the independent reader, not by kwire).
func saslSecrets(t *testing.T, capture string) []secretcorpus.Secret {
	var out []secretcorpus.Secret
	for _, p := range capgenPasswords {
		out = append(out, secretcorpus.Secret{Case: capture + " password", Value: []byte(p), Text: true, Whole: true})
	}
	for _, c := range info(t, capture).conns {
		for _, m := range scramProof.FindAllSubmatch(c.c2s, -1) {
			out = append(out, secretcorpus.Secret{Case: capture + " SCRAM proof", Value: m[1], Text: true})
		}
		for _, m := range scramSignature.FindAllSubmatch(c.s2c, -1) {
			out = append(out, secretcorpus.Secret{Case: capture + " SCRAM server signature", Value: m[1], Text: true})
		}
	}
	return out
}

// TestGoldenSecrets: the SASL captures' secrets (PLAIN passwords right
// and wrong, SCRAM proofs and server signatures) appear in none of their
// golden files and in no output of any mode, and do with --show-secrets.
func TestGoldenSecrets(t *testing.T) {
	for _, capture := range []string{"sasl-plain.pcap", "sasl-scram.pcap", "sasl-v0-raw.pcap"} {
		t.Run(capture, func(t *testing.T) {
			secrets := saslSecrets(t, capture)
			if capture == "sasl-scram.pcap" && len(secrets) < len(capgenPasswords)+2 {
				t.Fatalf("no SCRAM proof or signature found on the wire: %d secrets", len(secrets))
			}
			idx := secretcorpus.NewIndex(secrets)
			base := strings.TrimSuffix(capture, ".pcap")
			goldens, _ := filepath.Glob(filepath.Join("golden", base+".*.golden"))
			if len(goldens) == 0 {
				t.Fatalf("no golden files for %s", base)
			}
			for _, g := range goldens {
				b, err := os.ReadFile(g)
				if err != nil {
					t.Fatal(err)
				}
				if leaks := idx.Find(string(b)); len(leaks) > 0 {
					t.Errorf("%s holds secrets:\n%s", g, strings.Join(leaks, "\n"))
				}
			}
			ports := info(t, capture).ports
			var shown strings.Builder
			for _, flags := range [][]string{
				{"read"}, {"read", "-V"}, {"read", "-x"}, {"read", "--json"}, {"read", "--verbose", "-V", "-x", "--values", "hex"},
				{"read", "--stats"}, {"read", "--json", "--values", "base64"}, {"stats"}, {"stats", "--json"}, {"versions"}, {"versions", "--json"},
			} {
				args := append(append(append([]string(nil), flags...), "--port", ports), capture)
				r := kwire(t, args...)
				if leaks := idx.Find(string(r.stdout) + string(r.stderr)); len(leaks) > 0 {
					t.Errorf("kwire %s shows secrets:\n%s", strings.Join(args, " "), strings.Join(leaks, "\n"))
				}
				if flags[0] == "read" {
					r := kwire(t, append(append([]string(nil), flags...), "--show-secrets", "--port", ports, capture)...)
					shown.Write(r.stdout)
				}
			}
			present := idx.Present(shown.String())
			for _, s := range secrets {
				if s.Case == capture+" password" && capture == "sasl-scram.pcap" {
					continue // SCRAM never sends the password
				}
				if !secretcorpus.AppearsWhole(present, s) {
					t.Errorf("%s %q not shown with --show-secrets", s.Case, s.Value)
				}
			}
		})
	}
}
