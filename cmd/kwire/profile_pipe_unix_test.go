//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestProfileBrokenPipe: a reader that goes away early (kwire read -V
// ... | head -1) still gets profiles that name kwire's code, and kwire
// still ends as a SIGPIPE ends it (exit status 141, nothing on stderr).
// Before, the runtime ended the process at the first write to the broken
// pipe and both profile files were empty.
func TestProfileBrokenPipe(t *testing.T) {
	capture := filepath.Join("..", "..", "pcaps", "kgo-produce-consume.pcap")
	if _, err := os.Stat(capture); err != nil {
		t.Skipf("no capture: %v", err)
	}
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.pprof"), filepath.Join(dir, "mem.pprof")
	// -V of this capture is some megabytes: far more than a pipe holds,
	// so kwire is still writing when the reader closes its end.
	cmd := exec.Command(os.Args[0], "read", "-V", "--cpuprofile", cpu, "--memprofile", mem, capture)
	cmd.Env = append(os.Environ(), asKwire+"=1", "NO_COLOR=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 100)
	if _, err := out.Read(first); err != nil {
		t.Fatalf("no output: %v", err)
	}
	out.Close()
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitBrokenPipe || errb.Len() != 0 {
		t.Errorf("exit status %d, want %d; stderr %q", code, exitBrokenPipe, errb.String())
	}
	b, err := os.ReadFile(cpu)
	if err != nil || len(b) == 0 || !isPprof(t, b, "nanoseconds") {
		t.Errorf("--cpuprofile: %d bytes, err %v: not a CPU profile", len(b), err)
	}
	b, err = os.ReadFile(mem)
	if err != nil || len(b) == 0 || !isPprof(t, b, "github.com/kwire/kwire/") {
		t.Errorf("--memprofile: %d bytes, err %v: not an allocation profile of kwire's code", len(b), err)
	}
}
