package statsview

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports: statsview formats reports and never decodes or reads
// captures, so it imports neither protocol, dissect (but for its stats
// reports) nor reassembly.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, im := range af.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			switch {
			case p == "github.com/kwire/kwire/dissect/stats":
			case p == "github.com/kwire/kwire/protocol", p == "github.com/kwire/kwire/reassembly",
				p == "github.com/kwire/kwire/dissect", strings.HasPrefix(p, "github.com/kwire/kwire/cmd"):
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
