package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func TestColorEnabled(t *testing.T) {
	tests := []struct {
		mode     string
		tty      bool
		noColor  string
		term     string
		want     bool
		wantDesc string
	}{
		{"auto", true, "", "xterm", true, "terminal"},
		{"auto", false, "", "xterm", false, "pipe"},
		{"auto", true, "1", "xterm", false, "NO_COLOR set"},
		{"auto", true, "", "dumb", false, "dumb terminal"},
		{"always", false, "", "", true, "forced on a pipe"},
		{"always", true, "1", "", true, "--color=always beats NO_COLOR"},
		{"never", true, "", "xterm", false, "forced off"},
	}
	for _, tt := range tests {
		env := map[string]string{"NO_COLOR": tt.noColor, "TERM": tt.term}
		s := &ioStreams{OutTTY: tt.tty, Getenv: func(k string) string { return env[k] }}
		g := &globalOptions{Color: tt.mode}
		if got := g.colorEnabled(s); got != tt.want {
			t.Errorf("%s (%s): colorEnabled = %v, want %v", tt.mode, tt.wantDesc, got, tt.want)
		}
	}
}

// runWith runs kwire in-process with buffers for its streams.
func runWith(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	s := &ioStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" }}
	code = run(args, s)
	return code, out.String(), errOut.String()
}

// seedHex is an ApiVersions v0 request: length 19, key 18, version 0,
// correlation ID 0x01020304, client ID "wire-read".
const seedHex = "0000001300120000010203040009776972652d72656164"

func TestRunInjectedIO(t *testing.T) {
	code, out, errOut := runWith(t, seedHex+"\n", "decode")
	if code != exitOK || errOut != "" {
		t.Fatalf("decode: exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, `ClientId: "wire-read"`) || strings.Contains(out, "\x1b[") {
		t.Errorf("decode output (uncoloured, with the client ID) =\n%s", out)
	}

	code, out, _ = runWith(t, seedHex, "--color=always", "decode")
	if code != exitOK || !strings.Contains(out, "\x1b[") {
		t.Errorf("--color=always: exit %d, output without escapes:\n%s", code, out)
	}

	code, out, errOut = runWith(t, "00 0", "decode")
	if code != exitUsage || out != "" || errOut != "kwire: bad hex input: odd number of hex digits (3): the last byte is incomplete\n" {
		t.Errorf("odd hex: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestExitCode(t *testing.T) {
	tests := []struct {
		err     error
		want    int
		wantMsg string
	}{
		{nil, 0, ""},
		{usageErrorf("bad flag"), 2, "kwire: bad flag\n"},
		{dataErrorf("decode error: x"), 1, "kwire: decode error: x\n"},
		{silentExit(1), 1, ""},
		{errors.New(`unknown command "x" for "kwire"`), 2, "kwire: unknown command \"x\" for \"kwire\"\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if got := exitCode(tt.err, &b); got != tt.want || b.String() != tt.wantMsg {
			t.Errorf("exitCode(%v) = %d, %q; want %d, %q", tt.err, got, b.String(), tt.want, tt.wantMsg)
		}
	}
}

// Every kwire command documents itself with a long help text and examples.
func TestHelpAndExamples(t *testing.T) {
	root := newRootCmd(&ioStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}})
	cmds := append([]*cobra.Command{root}, root.Commands()...)
	seen := 0
	for _, c := range cmds {
		if c.Name() == "help" {
			continue // cobra's
		}
		seen++
		if c.Short == "" || c.Long == "" && c.Name() != "completion" {
			t.Errorf("%s: missing Short or Long help", c.CommandPath())
		}
		if !strings.Contains(c.Example, "kwire") {
			t.Errorf("%s: no example", c.CommandPath())
		}
	}
	if seen != 13 { // kwire, version, apis, decode, read, stats, versions, groups, txns, diff, check, live, completion
		t.Errorf("checked %d commands, want 13", seen)
	}
}
