package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"testing"
)

// TestRunModes: the default pipeline and -sync print the same counts, and
// they are real counts.
func TestRunModes(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "pcaps", "*.pcap"))
	if len(paths) == 0 {
		t.Skip("no captures in ../../pcaps")
	}
	var out [2]bytes.Buffer
	for i, args := range [][]string{paths, append([]string{"-sync"}, paths...)} {
		var stderr bytes.Buffer
		if st := run(args, &out[i], &stderr); st != 0 {
			t.Fatalf("%v: status %d, %s", args[:1], st, stderr.String())
		}
	}
	if out[0].String() != out[1].String() {
		t.Errorf("pipelined:\n%s\nsynchronous:\n%s", out[0].String(), out[1].String())
	}
	lines := regexp.MustCompile(`(?m)^.*: [1-9]\d* packets, [1-9]\d* connections, [1-9]\d*\+[1-9]\d* bytes, \d+ gaps \(\d+ bytes\)$`).FindAllString(out[0].String(), -1)
	if len(lines) != len(paths) {
		t.Errorf("%d lines with counts for %d files:\n%s", len(lines), len(paths), out[0].String())
	}
	var stderr bytes.Buffer
	if st := run([]string{"-sync"}, &out[0], &stderr); st != 2 {
		t.Errorf("no file: status %d, want 2", st)
	}
}
