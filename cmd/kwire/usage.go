package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// This file holds usage checks whose messages cobra's own would phrase
// less plainly ("if any flags in the group [json tree] are set none of
// the others can be", "requires at least 1 arg(s), only received 0").

// exclusiveFlags makes each pair of flags of cmd mutually exclusive:
// giving both is a usage error "-V and --json cannot be combined". It
// chains cmd's PreRunE.
func exclusiveFlags(cmd *cobra.Command, pairs ...[2]string) {
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		f := c.Flags()
		for _, p := range pairs {
			if f.Changed(p[0]) && f.Changed(p[1]) {
				return usageErrorf("%s and %s cannot be combined", flagName(f.Lookup(p[0])), flagName(f.Lookup(p[1])))
			}
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}

// flagName is how messages name a flag: its shorthand when it has one.
func flagName(fl *pflag.Flag) string {
	if fl.Shorthand != "" {
		return "-" + fl.Shorthand
	}
	return "--" + fl.Name
}

// captureArgs requires at least one capture file argument.
func captureArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return &exitError{code: exitUsage, full: true,
			err: fmt.Errorf("%s: no capture file given (use - for standard input)", cmd.CommandPath())}
	}
	return nil
}
