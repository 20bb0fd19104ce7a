package main

import "github.com/spf13/cobra"

// Placeholders until the decoder, renderer and capture reader land.

func newDecodeCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	return &cobra.Command{Use: "decode"}
}
func newReadCmd(s *ioStreams, g *globalOptions) *cobra.Command { return &cobra.Command{Use: "read"} }
