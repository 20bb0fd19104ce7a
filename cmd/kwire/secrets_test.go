package main

import (
	"bytes"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/secretcorpus"
)

// TestSecretsNeverShown runs every output mode of every command over the
// hostile corpus (internal/secretcorpus: a secret in every secret-bearing
// field of every version, SASL tokens of every mechanism, sensitive
// configs, Envelopes, unknown versions, leftovers, unknown tags, cut
// frames, orphans) and fails when any secret appears in the output, as
// text, as hex (spaced or not, either case) or as base64 (standard or
// URL, at any 3-byte alignment); then, with --show-secrets, that every
// secret does appear; and that the corpus's non-secrets (user names,
// config names, a benign config value, a SCRAM salt) stay visible.
func TestSecretsNeverShown(t *testing.T) {
	c := secretcorpus.Build()
	dir := t.TempDir()
	pcap := filepath.Join(dir, "secrets.pcap")
	f, err := os.Create(pcap)
	if err != nil {
		t.Fatal(err)
	}
	if err := secretcorpus.WritePcap(f, c.Conns); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	idx := secretcorpus.NewIndex(c.Secrets)
	t.Logf("corpus: %d connections, %d frames, %d secrets", len(c.Conns), len(c.Frames), len(c.Secrets))

	modes := [][]string{
		{"read"}, {"read", "--verbose"}, {"read", "-V"}, {"read", "-x"}, {"read", "-V", "-x", "--verbose"},
		{"read", "--json"}, {"read", "--json", "--verbose"}, {"read", "--stats"}, {"read", "-V", "--values", "hex"},
		{"read", "-V", "--values", "base64"}, {"read", "--json", "--values", "hex"}, {"read", "-x", "--max-value", "0"},
		{"stats"}, {"stats", "--json"}, {"stats", "--top", "100"}, {"versions"}, {"versions", "--json"},
	}
	shown := map[string]string{} // mode → output with --show-secrets
	for _, m := range modes {
		args := append(append([]string(nil), m...), pcap)
		out := runCapture(t, args)
		if leaks := idx.Find(out); len(leaks) > 0 {
			t.Errorf("kwire %s shows secrets:\n%s", strings.Join(args, " "), strings.Join(leaks, "\n"))
		}
		if m[0] == "read" {
			shown[strings.Join(m, " ")] = runCapture(t, append(append([]string(nil), m...), "--show-secrets", pcap))
		}
	}
	tree := runCapture(t, []string{"read", "-V", pcap})
	for _, v := range c.Visible {
		if !strings.Contains(tree, v) {
			t.Errorf("kwire read -V does not show %q, which is no secret", v)
		}
	}

	// decode, frame by frame, in each of its modes.
	decodeShown := &strings.Builder{}
	for _, fr := range c.Frames {
		base := []string{"decode"}
		if fr.Response {
			base = append(base, "--frame", "--response", "--api", strconv.Itoa(int(fr.Key)), "--version", strconv.Itoa(int(fr.Ver)))
		}
		for _, m := range [][]string{nil, {"--json"}, {"-x"}, {"--values", "hex"}} {
			args := append(append(append([]string(nil), base...), m...), hex.EncodeToString(fr.Bytes))
			out := runCapture(t, args)
			if leaks := idx.Find(out); len(leaks) > 0 {
				t.Errorf("kwire %s (%s) shows secrets:\n%s", strings.Join(args[:len(args)-1], " "), fr.Case, strings.Join(leaks, "\n"))
			}
			decodeShown.WriteString(runCapture(t, append(args[:len(args)-1:len(args)-1], "--show-secrets", args[len(args)-1])))
		}
	}
	shown["decode"] = decodeShown.String()

	// The reverse: with --show-secrets every secret appears whole.
	var all strings.Builder
	for _, out := range shown {
		all.WriteString(out)
	}
	present := idx.Present(all.String())
	for _, s := range c.Secrets {
		if !secretcorpus.AppearsWhole(present, s) {
			t.Errorf("%s: secret %q (%x) not shown with --show-secrets", s.Case, s.Value, s.Value)
		}
	}
}

// runCapture runs kwire with args and returns its stdout and stderr.
func runCapture(t *testing.T, args []string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	s := &ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
	code := run(args, s)
	if code == exitUsage && !strings.Contains(errOut.String(), "--version") {
		t.Errorf("kwire %s: exit %d: %s", strings.Join(args[:min(len(args), 8)], " "), code, errOut.String())
	}
	return out.String() + errOut.String()
}
