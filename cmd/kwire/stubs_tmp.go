package main

import "github.com/spf13/cobra"

func newDecodeCmd(s *ioStreams, g *globalOptions) *cobra.Command { return &cobra.Command{Use: "decode"} }
func newReadCmd(s *ioStreams, g *globalOptions) *cobra.Command   { return &cobra.Command{Use: "read"} }
