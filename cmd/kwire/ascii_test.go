package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestASCIIWriter(t *testing.T) {
	in := "a → b ×3 trailing… é😀 ▁█ \xff end"
	var out bytes.Buffer
	w := &asciiWriter{w: &out}
	// Byte by byte: characters split across writes still come out whole.
	for i := range len(in) {
		if _, err := w.Write([]byte{in[i]}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := out.String(), `a -> b x3 trailing... \u00e9\U0001f600 .# \xff end`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestLocaleIsUTF8(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, true},
		{map[string]string{"LANG": "C.UTF-8"}, true},
		{map[string]string{"LANG": "en_US.utf8"}, true},
		{map[string]string{"LC_ALL": "C", "LANG": "C.UTF-8"}, false},
		{map[string]string{"LC_CTYPE": "POSIX"}, false},
		{map[string]string{"LANG": "de_DE.ISO-8859-1"}, false},
	} {
		if got := localeIsUTF8(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %v", c.env, got)
		}
	}
}

// TestASCIILocale: under LC_ALL=C read, stats and diff print only ASCII;
// JSON is left as it is.
func TestASCIILocale(t *testing.T) {
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	env := func(k string) string { return map[string]string{"LC_ALL": "C"}[k] }
	runEnv := func(args ...string) string {
		var out, errOut bytes.Buffer
		run(args, &ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: env})
		return out.String() + errOut.String()
	}
	for _, args := range [][]string{
		{"read", "--port", "19092", pcap},
		{"read", "-V", "--port", "19092", pcap},
		{"stats", "--port", "19092", pcap},
		{"versions", "--port", "19092", pcap},
	} {
		out := runEnv(args...)
		for i, r := range out {
			if r >= utf8.RuneSelf {
				t.Errorf("%v: non-ASCII %q at %d: %.80q", args, r, i, out[max(i-40, 0):])
				break
			}
		}
		if args[0] == "read" && !strings.Contains(out, " -> 127.0.0.1:19092 ") {
			t.Errorf("%v: no -> arrows", args)
		}
	}
	// kwire's own glyphs have ASCII forms: a \u escape is kept for the
	// capture's characters (these captures' IDs are ASCII). The groups
	// report's swim lanes mark a member's end with "✗": as "\u2717" it
	// pushed its column out of line.
	groups := goldenPcap(t, "group-rebalance-kgo.pcap")
	for _, args := range [][]string{
		{"groups", "--port", "19340", groups},
		{"txns", "--port", "19092", pcap},
		{"stats", "--port", "19092", pcap},
	} {
		out := runEnv(args...)
		if i := strings.Index(out, `\u`); i >= 0 {
			t.Errorf("%v: a glyph written as an escape: %.80q", args, out[max(i-40, 0):])
		}
		if args[0] == "groups" && !strings.Contains(out, "x expired") {
			t.Errorf("%v: no \"x expired\" in the swim lanes:\n%s", args, out)
		}
	}
	if out := runEnv("read", "--json", "--port", "19092", pcap); !strings.Contains(out, "→") {
		t.Error("--json was transliterated")
	}
	if out := runEnv("read", "--ascii=false", "--port", "19092", pcap); !strings.Contains(out, " → ") {
		t.Error("--ascii=false did not keep UTF-8")
	}
}
