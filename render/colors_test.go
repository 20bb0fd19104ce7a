package render

import (
	"bytes"
	"testing"

	"github.com/kwire/kwire/render/termsafe"
)

// TestColorsPassTheNet: every colour kwire writes reaches the terminal
// through termsafe.Writer unchanged (it lets through only the SGR
// parameters it knows: a colour added here must be added there).
func TestColorsPassTheNet(t *testing.T) {
	for r := range numRoles {
		in := escapes[r][0] + "text" + escapes[r][1]
		var out bytes.Buffer
		w := &termsafe.Writer{W: &out, Colors: true}
		w.Write([]byte(in))
		w.Flush()
		if out.String() != in {
			t.Errorf("role %d: %q became %q", r, in, out.String())
		}
	}
}
