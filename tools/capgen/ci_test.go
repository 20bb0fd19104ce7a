package main

import (
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIExample runs docs/ci.md's example job end to end: the client
// under test (the diff-base scenario's kgo application, with its kfake
// broker on port 19391) runs under tcpdump through
// scripts/kafka-ci-check.sh, then kwire check checks the capture against
// docs/examples/kafka-checks.yaml and writes a JUnit report; a spec that
// the traffic breaks fails with exit 1 and a JUnit failure.
func TestCIExample(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("capturing on loopback needs root (tcpdump)")
	}
	if _, err := exec.LookPath("tcpdump"); err != nil {
		t.Skip("tcpdump is not installed (.ci/run installs it)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kwire, capgen := filepath.Join(dir, "kwire"), filepath.Join(dir, "capgen")
	build := exec.Command("go", "build", "-o", kwire, "./cmd/kwire")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kwire: %v\n%s", err, out)
	}
	if out, err := exec.Command("go", "build", "-o", capgen, ".").CombinedOutput(); err != nil {
		t.Fatalf("building capgen: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "out")
	script := filepath.Join(root, "scripts", "kafka-ci-check.sh")
	spec := filepath.Join(root, "docs", "examples", "kafka-checks.yaml")
	cmd := exec.Command(script, "-p", "19391", "-s", spec, "-o", out, "-k", kwire, "--", capgen, "-traffic-only", "diff-base", "-port", "19391")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the example job failed: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "all 10 checks passed") {
		t.Errorf("output:\n%s", b)
	}
	type junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	read := func(path string) junit {
		x, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var j junit
		if err := xml.Unmarshal(x, &j); err != nil {
			t.Fatalf("JUnit: %v\n%s", err, x)
		}
		return j
	}
	if j := read(filepath.Join(out, "kwire-junit.xml")); j.Tests != 10 || j.Failures != 0 || len(j.Suites) != 1 || len(j.Suites[0].Cases) != 10 {
		t.Errorf("JUnit %+v", j)
	}

	// The same capture against a spec it breaks.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("checks:\n  - name: produces with Produce v14\n    expect: 'api == \"Produce\" && apiVersion >= 14'\n  - name: fetches at most once\n    expect: 'api == \"Fetch\"'\n    atMost: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junitBad := filepath.Join(dir, "bad.xml")
	b, err = exec.Command(kwire, "check", "--port", "19391", "--junit", junitBad, bad, filepath.Join(out, "kafka.pcap")).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(b), "FAIL produces with Produce v14: 0 exchanges match") {
		t.Errorf("bad spec: %v\n%s", err, b)
	}
	if j := read(junitBad); j.Tests != 2 || j.Failures != 2 || j.Suites[0].Cases[0].Failure == nil {
		t.Errorf("bad JUnit %+v", j)
	}
}
