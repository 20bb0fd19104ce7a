package pcaps

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeSample: the lines README.md shows for its first command are
// what kwire prints for the capture it names, verbatim.
func TestReadmeSample(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	const cmd = "kwire read pcaps/kgo-produce-consume.pcap"
	if !strings.Contains(readme, cmd) {
		t.Fatalf("README.md no longer shows %q", cmd)
	}
	_, block, ok := strings.Cut(readme, "which prints one line per request/response pair, e.g.\n\n```\n")
	block, _, _ = strings.Cut(block, "```")
	if !ok || strings.TrimSpace(block) == "" {
		t.Fatal("README.md: no sample lines after the first command")
	}
	out := string(kwire(t, "read", "--color=never", "kgo-produce-consume.pcap").stdout)
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("README.md's sample line is not in kwire's output:\n%s", line)
		}
	}
}

// TestFindingsSample: docs/findings.md's sample finding is what kwire
// read --findings prints for the capture it names.
func TestFindingsSample(t *testing.T) {
	b, err := os.ReadFile("../docs/findings.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "`kwire read --findings pcaps/lossy-network.pcap`:\n\n```\n")
	sample, _, _ := strings.Cut(rest, "```")
	if !ok || strings.TrimSpace(sample) == "" {
		t.Fatal("docs/findings.md: no sample after its command")
	}
	out := string(kwire(t, "read", "--color=never", "--findings", "lossy-network.pcap").stdout)
	for _, line := range strings.Split(strings.TrimSpace(sample), "\n") {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("docs/findings.md's sample is not in kwire's output:\n%s", line)
		}
	}
}
