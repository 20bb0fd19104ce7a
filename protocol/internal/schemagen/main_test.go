package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const msg = `// comment
{ "apiKey": 3, "type": "request", "name": "MetadataRequest", "validVersions": "0-1", "flexibleVersions": "none",
  "fields": [ { "name": "A", "type": "int32", "versions": "0+" } ] }`

func writeGen(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "MetadataRequest.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunWriteAndCheck(t *testing.T) {
	in := writeGen(t, msg)
	out := filepath.Join(t.TempDir(), "zz.go")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-dir", "mine=" + in, "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("run = %d, stderr %s", code, stderr.String())
	}
	src, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(src, []byte(`Generation:       "mine"`)) {
		t.Errorf("generation name not recorded:\n%s", src)
	}
	if code := run([]string{"-dir", "mine=" + in, "-out", out, "-check"}, &stdout, &stderr); code != 0 {
		t.Errorf("-check on a fresh file = %d, stderr %s", code, stderr.String())
	}
	// The base name is the default generation name, so the output changes.
	stderr.Reset()
	if code := run([]string{"-dir", in, "-out", out, "-check"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "out of date") {
		t.Errorf("-check on a stale file = %d, stderr %q", code, stderr.String())
	}
	after, _ := os.ReadFile(out)
	if !bytes.Equal(after, src) {
		t.Error("-check wrote the output file")
	}
}

func TestRunErrors(t *testing.T) {
	bad := writeGen(t, strings.Replace(msg, `"int32"`, `"int33"`, 1))
	out := filepath.Join(t.TempDir(), "zz.go")
	for _, args := range [][]string{
		{"-dir", bad, "-out", out},
		{"-dir", filepath.Join(bad, "missing"), "-out", out},
		{"-dir", "=" + bad, "-out", out},
		{"-dir", writeGen(t, msg), "-out", filepath.Join(out, "nodir", "zz.go")},
		{"-dir", writeGen(t, msg), "-out", out + ".none", "-check"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "schemagen: ") {
			t.Errorf("run(%q) = %d, stderr %q; want 1 and a message", args, code, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-dir", bad, "-out", out}, &stdout, &stderr); !strings.Contains(stderr.String(), `unknown type "int33"`) {
		t.Errorf("run with an unknown type = %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("output written despite errors")
	}
	if code := run([]string{"-nosuchflag"}, &stdout, &stderr); code != 2 {
		t.Errorf("bad flag: run = %d, want 2", code)
	}
}

// TestDefaultInputsCheck runs the generator as `go generate` would, from
// the protocol folder, in -check mode against the committed table.
func TestDefaultInputsCheck(t *testing.T) {
	shared := os.Getenv("KWIRE_SHARED")
	if shared == "" {
		shared = filepath.Join("..", "..", "..", "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(shared, "kafka-schemas")); err != nil {
		t.Skip("../shared/kafka-schemas not found (set KWIRE_SHARED): cannot check the committed table")
	}
	abs, err := filepath.Abs(shared)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("KWIRE_SHARED", abs)
	t.Chdir(filepath.Join("..", ".."))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-check"}, &stdout, &stderr); code != 0 {
		t.Errorf("schemagen -check = %d: %s", code, stderr.String())
	}
}
