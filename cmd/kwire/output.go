package main

import (
	"github.com/kwire/kwire/render"
	"github.com/spf13/pflag"
)

// outputOptions are the rendering flags decode and read share.
type outputOptions struct {
	Values      string // text, hex, base64 or none
	MaxValue    int
	ShowSecrets bool
	JSONInt64   string // number or string
}

func (o *outputOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Values, "values", "text", "show bytes values (record keys and values, BYTES fields) as text, hex, base64 or none")
	fs.IntVar(&o.MaxValue, "max-value", render.DefaultMaxValue, "cut string and bytes values after this many `bytes` (0 or -1: never)")
	fs.StringVar(&o.JSONInt64, "json-int64", "number", "with --json, write 64-bit integers (int64 fields, offsets, timestamps, producer IDs) as a `number` with every digit or as a decimal `string`, for tools that round numbers beyond 2^53 (jq before 1.7, JavaScript)")
	fs.BoolVar(&o.ShowSecrets, "show-secrets", false, "show secrets (SASL passwords, proofs and tokens, delegation-token HMACs, SCRAM credentials, sensitive config values) instead of withholding them")
}

// renderOptions validates the flags and builds render.Options.
func (o *outputOptions) renderOptions(color bool) (render.Options, error) {
	mode, err := render.ParseValueMode(o.Values)
	if err != nil {
		return render.Options{}, usageErrorf("--values: %v", err)
	}
	limit := o.MaxValue
	if limit == 0 {
		limit = -1 // "--max-value 0" reads as "no limit", not "the default"
	}
	var int64s bool
	switch o.JSONInt64 {
	case "number", "":
	case "string":
		int64s = true
	default:
		return render.Options{}, usageErrorf("--json-int64: %q is neither number nor string", o.JSONInt64)
	}
	return render.Options{Color: color, Values: mode, MaxValue: limit, ShowSecrets: o.ShowSecrets, Int64Strings: int64s}, nil
}
