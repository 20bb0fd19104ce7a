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
}

func (o *outputOptions) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Values, "values", "text", "show bytes values (record keys and values, BYTES fields) as text, hex, base64 or none")
	fs.IntVar(&o.MaxValue, "max-value", render.DefaultMaxValue, "cut string and bytes values after this many `bytes` (0 or -1: never)")
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
	return render.Options{Color: color, Values: mode, MaxValue: limit, ShowSecrets: o.ShowSecrets}, nil
}
