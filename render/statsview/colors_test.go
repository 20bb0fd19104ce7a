package statsview

import (
	"bytes"
	"testing"

	"github.com/kwire/kwire/render/termsafe"
)

// TestColorsPassTheNet: every colour of the stats views reaches the
// terminal through termsafe.Writer unchanged.
func TestColorsPassTheNet(t *testing.T) {
	for r := range escapes {
		if escapes[r][0] == "" {
			continue
		}
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
