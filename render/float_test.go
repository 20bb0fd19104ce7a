package render

import (
	"math"
	"testing"

	"github.com/kwire/kwire/protocol"
)

// TestFloatValues: a FLOAT64 (a client quota's value, DescribeClientQuotas
// and AlterClientQuotas) reads the same in the tree and in every JSON form:
// as encoding/json writes a float64 (1048576, not 1.048576e+06; 1e+21
// and 1e-7 in exponent form), NaN and the infinities by name.
func TestFloatValues(t *testing.T) {
	for _, c := range []struct {
		f          float64
		text, json string
	}{
		{1048576, "1048576", "1048576"},
		{1e6, "1000000", "1000000"},
		{0.5, "0.5", "0.5"},
		{1e21, "1e+21", "1e+21"},
		{1e-7, "1e-7", "1e-7"},
		{-2.25, "-2.25", "-2.25"},
		{0, "0", "0"},
		{math.NaN(), "NaN", `"NaN"`},
		{math.Inf(1), "+Inf", `"Infinity"`},
		{math.Inf(-1), "-Inf", `"-Infinity"`},
	} {
		n := &protocol.Node{Kind: protocol.KindFloat, Float: c.f}
		if got := string(appendValue(nil, n, &Options{}, false)); got != c.text {
			t.Errorf("text of %v: %q, want %q", c.f, got, c.text)
		}
		j := &jsonWriter{o: &Options{}}
		if got := string(j.value(nil, n, "", nil, false)); got != c.json {
			t.Errorf("JSON of %v: %q, want %q", c.f, got, c.json)
		}
	}
}
