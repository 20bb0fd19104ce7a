package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/kwire/kwire/render"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// outputOptions are the rendering flags decode and read share.
type outputOptions struct {
	Values      string // text, hex, base64 or none
	MaxValue    int
	ShowSecrets bool
	JSONInt64   jsonInt64
}

// jsonInt64 is the value of --json-int64: false for "number", true for
// "string".
type jsonInt64 bool

func (j *jsonInt64) String() string {
	if *j {
		return "string"
	}
	return "number"
}

func (j *jsonInt64) Set(s string) error {
	switch s {
	case "number":
		*j = false
	case "string":
		*j = true
	default:
		return fmt.Errorf("%q is neither number nor string", s)
	}
	return nil
}

func (j *jsonInt64) Type() string { return "number|string" }

// jsonInt64Needs refuses --json-int64 given without --json (json false):
// it would change nothing.
func jsonInt64Needs(cmd *cobra.Command, json bool) error {
	if !json && cmd.Flags().Changed("json-int64") {
		return usageErrorf("--json-int64 needs --json")
	}
	return nil
}

// addJSONInt64Flag adds --json-int64.
func addJSONInt64Flag(fs *pflag.FlagSet, j *jsonInt64) {
	fs.Var(j, "json-int64", "with --json, write 64-bit integers (int64 fields, offsets, timestamps, producer IDs) as a `number` with every digit or as a decimal `string`, for tools that round numbers beyond 2^53 (jq before 1.7, JavaScript)")
}

func (o *outputOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Values, "values", "text", "show bytes values (record keys and values, BYTES fields) as text, hex, base64 or none")
	fs.IntVar(&o.MaxValue, "max-value", render.DefaultMaxValue, "cut string and bytes values after this many `bytes` (0 or -1: never)")
	addJSONInt64Flag(fs, &o.JSONInt64)
	fs.BoolVar(&o.ShowSecrets, "show-secrets", false, "show secrets (SASL passwords, proofs and tokens, delegation-token HMACs, SCRAM credentials, sensitive config values) instead of withholding them")
}

// renderOptions validates the flags and builds render.Options.
func (o *outputOptions) renderOptions(color bool) (render.Options, error) {
	mode, err := render.ParseValueMode(o.Values)
	if err != nil {
		return render.Options{}, usageErrorf("--values: %v", err)
	}
	limit := o.MaxValue
	if limit < -1 {
		return render.Options{}, usageErrorf("--max-value must be a number of bytes, or 0 or -1 for values never cut")
	}
	if limit == 0 {
		limit = -1 // "--max-value 0" reads as "no limit", not "the default"
	}
	return render.Options{Color: color, Values: mode, MaxValue: limit, ShowSecrets: o.ShowSecrets, Int64Strings: bool(o.JSONInt64)}, nil
}

// checkWritable makes sure an output file a flag names can be written
// before the command does its work: a path in a missing directory or
// without permission is a usage error (exit 2), not a failure found at
// the end that would read as "part of the capture could not be
// dissected" or "a check failed". The file is created if it does not
// exist (as tcpdump -w does) and left as it is otherwise.
//
// An output that is one of the command's inputs (a capture, a spec) is a
// usage error too, found before anything is opened for writing: writing
// it would truncate what is still to be read (read -w reads its captures
// again). Inputs are compared by file identity (os.SameFile), so another
// path to the same file, a symbolic or hard link, is caught; "-"
// (standard input) and inputs that cannot be stated (the read reports
// them) are passed over.
func checkWritable(flag, path string, inputs ...string) error {
	if out, err := os.Stat(path); err == nil {
		for _, in := range inputs {
			if in == "-" {
				continue
			}
			if st, err := os.Stat(in); err == nil && os.SameFile(out, st) {
				if in == path {
					return usageErrorf("%s %s: the output is an input file: writing it would destroy it", flag, path)
				}
				return usageErrorf("%s %s: the output is the input file %s: writing it would destroy it", flag, path, in)
			}
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		return usageErrorf("%s %s: %v", flag, path, errors.Unwrap(err))
	}
	return f.Close()
}
