package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestWireTextNeverControlsTheTerminal: a group ID and a topic name from
// the wire carrying a window-title sequence, a newline, a carriage return,
// a C1 CSI and a byte that is not UTF-8 (each replacement keeps the
// string's length, so the capture's frames stay whole) reach no output
// mode as a control character, and make no line of their own; the
// escapes show what was there.
func TestWireTextNeverControlsTheTerminal(t *testing.T) {
	src, err := os.ReadFile("../../pcaps/group-rebalance-kafkapython.pcap")
	if err != nil {
		t.Fatal(err)
	}
	group := []byte("kafkapy\nFAKE\rL\x1b]0\u009b\xffX") // as long as kafkapython-rebalance
	topic := []byte("cap\u202e\x7f\x1b]0;pwn\a\x9b")     // as long as capgen-rebalance; a right-to-left override and a DEL too
	if len(group) != len("kafkapython-rebalance") || len(topic) != len("capgen-rebalance") {
		t.Fatalf("replacements of %d and %d bytes", len(group), len(topic))
	}
	b := bytes.ReplaceAll(src, []byte("kafkapython-rebalance"), group)
	b = bytes.ReplaceAll(b, []byte("capgen-rebalance"), topic)
	if bytes.Equal(b, src) {
		t.Fatal("the capture no longer names kafkapython-rebalance and capgen-rebalance")
	}
	pcap := filepath.Join(t.TempDir(), "hostile-names.pcap")
	if err := os.WriteFile(pcap, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range [][]string{
		{"read"}, {"read", "-V"}, {"read", "-x"}, {"read", "--verbose"}, {"read", "--findings"},
		{"read", "--json"}, {"read", "--color=always"}, {"read", "-V", "--color=always"},
		{"stats"}, {"stats", "--json"}, {"stats", "--color=always"}, {"groups"}, {"groups", "--json"},
		{"txns"}, {"versions"}, {"read", "--normalize"},
	} {
		args := append(append([]string(nil), m...), pcap)
		out := runCapture(t, args)
		name := "kwire " + strings.Join(m, " ")
		color := strings.Contains(name, "--color=always")
		if m[0] != "versions" && !strings.Contains(out, `\x1b]0`) && !strings.Contains(out, `\u001b]0`) {
			t.Errorf("%s: the escaped sequence is not shown", name)
		}
		bad := 0
		for i, line := range strings.Split(out, "\n") {
			if bad > 3 {
				break
			}
			if strings.HasPrefix(line, "FAKE") {
				t.Errorf("%s: line %d starts with the group ID's second line: %q", name, i+1, line)
			}
			for j := 0; j < len(line); {
				r, size := utf8.DecodeRuneInString(line[j:])
				switch {
				case r == 0x1b && color && strings.HasPrefix(line[j:], "\x1b["):
					// kwire's own colours (termsafe.Writer checks their parameters)
				case r < 0x20 && r != '\t', r == 0x7f, r >= 0x80 && r < 0xa0, r == utf8.RuneError && size == 1,
					r == 0x202e:
					t.Errorf("%s: line %d holds control %q: %.200q", name, i+1, line[j:j+size], line)
					bad++
					j = len(line)
					continue
				}
				j += size
			}
		}
	}
}
