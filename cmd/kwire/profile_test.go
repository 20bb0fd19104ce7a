package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isPprof reports whether b is a gzip-compressed pprof profile that
// mentions want (a sample type name or a function in the string table).
func isPprof(t *testing.T, b []byte, want string) bool {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Errorf("not gzip: %v", err)
		return false
	}
	raw, err := io.ReadAll(zr)
	if err != nil || len(raw) == 0 {
		t.Errorf("not a pprof protobuf (%d bytes, err %v)", len(raw), err)
		return false
	}
	return bytes.Contains(raw, []byte(want))
}

// TestProfileFlags: --cpuprofile, --memprofile and --trace on a command,
// and KWIRE_PPROF on another, write profiles that name what ran; a
// profile that cannot be created is a usage error before the command.
func TestProfileFlags(t *testing.T) {
	capture := filepath.Join("..", "..", "pcaps", "kgo-produce-consume.pcap")
	if _, err := os.Stat(capture); err != nil {
		t.Skipf("no capture: %v", err)
	}
	dir := t.TempDir()
	cpu, mem, tr := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof"), filepath.Join(dir, "trace.out")
	var out, errOut bytes.Buffer
	s := &ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
	if code := run([]string{"read", "--json", "--cpuprofile", cpu, "--memprofile", mem, "--trace", tr, capture}, s); code != exitOK {
		t.Fatalf("read: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), `"api":"Produce"`) {
		t.Errorf("read --json with profiles wrote no exchanges")
	}
	b, err := os.ReadFile(cpu)
	if err != nil || !isPprof(t, b, "nanoseconds") {
		t.Errorf("--cpuprofile: %d bytes, err %v: not a CPU profile", len(b), err)
	}
	b, err = os.ReadFile(mem)
	if err != nil || !isPprof(t, b, "alloc_space") || !isPprof(t, b, "github.com/kwire/kwire/") {
		t.Errorf("--memprofile: %d bytes, err %v: not an allocation profile of kwire's code", len(b), err)
	}
	b, err = os.ReadFile(tr)
	if err != nil || !bytes.HasPrefix(b, []byte("go 1.")) {
		t.Errorf("--trace: %d bytes, err %v: not a Go execution trace", len(b), err)
	}

	pdir := t.TempDir()
	s.Getenv = func(k string) string {
		if k == "KWIRE_PPROF" {
			return pdir
		}
		return ""
	}
	out.Reset()
	if code := run([]string{"stats", capture}, s); code != exitOK {
		t.Fatalf("stats: exit %d: %s", code, errOut.String())
	}
	cpus, _ := filepath.Glob(filepath.Join(pdir, "kwire-stats-*.cpu.pprof"))
	mems, _ := filepath.Glob(filepath.Join(pdir, "kwire-stats-*.mem.pprof"))
	if len(cpus) != 1 || len(mems) != 1 {
		t.Fatalf("KWIRE_PPROF=%s: files %v %v, want one CPU and one memory profile", pdir, cpus, mems)
	}
	// A short run may take no CPU sample: the CPU profile is checked
	// for its sample type only.
	if b, err := os.ReadFile(cpus[0]); err != nil || !isPprof(t, b, "nanoseconds") {
		t.Errorf("%s: %d bytes, err %v: not a CPU profile", cpus[0], len(b), err)
	}
	if b, err := os.ReadFile(mems[0]); err != nil || !isPprof(t, b, "github.com/kwire/kwire/") {
		t.Errorf("%s: %d bytes, err %v: not an allocation profile of kwire", mems[0], len(b), err)
	}

	s.Getenv = func(string) string { return "" }
	out.Reset()
	errOut.Reset()
	if code := run([]string{"apis", "--cpuprofile", filepath.Join(dir, "missing", "cpu.pprof")}, s); code != exitUsage {
		t.Errorf("--cpuprofile into a missing directory: exit %d, want %d", code, exitUsage)
	}
	if out.Len() != 0 || !strings.Contains(errOut.String(), "--cpuprofile") {
		t.Errorf("--cpuprofile into a missing directory: stdout %q, stderr %q: want nothing run and the flag named", out.String(), errOut.String())
	}
}
