//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/kwire/kwire/facts"
)

// A pipe given as a capture (<(zcat cut.pcapng.gz)) is not read ahead for
// names: its bytes are the read's.
func TestCutNamesLeavesPipes(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cutNames([]string{fifo}, facts.DefaultMaxMemory) // must not open it: nothing writes to it yet
	done := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			done <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		done <- b
	}()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("\x0a\x0d\x0d\x0a0123456789"))
	w.Close()
	if got := <-done; string(got) != "\x0a\x0d\x0d\x0a0123456789" {
		t.Errorf("the pipe gave %q", got)
	}
}
