package main

import "github.com/spf13/cobra"

// Placeholder until the capture reader lands.

func newReadCmd(s *ioStreams, g *globalOptions) *cobra.Command { return &cobra.Command{Use: "read"} }
