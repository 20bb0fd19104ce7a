package main

import (
	"github.com/kwire/kwire/render/termsafe"
	"github.com/spf13/cobra"
)

// useTermSafe puts a termsafe.Writer under what a command writes to its
// error stream, and to its output unless the output is a tree or a hex
// dump (read and live with -V or -x, decode without --json), so that a value from the
// capture (a topic name, a group ID) never reaches the terminal as a
// control character, whichever line of text it is in (package termsafe).
// On the output it lets kwire's colours through when they are on, and
// escapes as JSON does when the command writes JSON; the progress bar
// keeps the error stream as it was (it redraws its line with a carriage
// return). flushOut writes what they hold at the end.
//
// Trees and hex dumps write every value from the wire escaped as they
// write it (quoted strings, hex or base64 bytes), and their output is
// often larger than the capture: the net would cost them 5-8% of their
// CPU time for nothing (read -V on many-250: 155 MB of text). JSON keeps
// it: its strings may hold C1 controls, which JSON allows raw; the net's
// test for JSON is cheaper (no raw control character is to be let
// through).
func useTermSafe(s *ioStreams, cmd *cobra.Command, json, color bool) {
	if _, ok := s.ErrOut.(*termsafe.Writer); ok {
		return // a command run again in the same streams (tests)
	}
	s.Progress = s.ErrOut
	s.ErrOut = &termsafe.Writer{W: s.ErrOut}
	if json || !treeOutput(cmd) {
		s.Out = &termsafe.Writer{W: s.Out, JSON: json, Colors: color}
	}
}

// treeOutput reports whether cmd writes trees or hex dumps: decode, or read
// and live with -V or -x.
func treeOutput(cmd *cobra.Command) bool {
	switch cmd.Name() {
	case "decode":
		return true
	case "read", "live":
		for _, f := range []string{"tree", "hex"} {
			if fl := cmd.Flags().Lookup(f); fl != nil && fl.Value.String() == "true" {
				return true
			}
		}
	}
	return false
}

// flushOut flushes the streams' termsafe.Writers.
func flushOut(s *ioStreams) {
	for _, w := range []any{s.Out, s.ErrOut} {
		if t, ok := w.(*termsafe.Writer); ok {
			t.Flush()
		}
	}
}
