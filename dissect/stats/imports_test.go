package stats

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package's place in the layering: stats aggregates
// and never prints or renders, so it imports neither render nor cmd, nor
// os or io (the output belongs to render/statsview).
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
			if p == "os" || p == "io" || strings.HasPrefix(p, "github.com/kwire/kwire/render") ||
				strings.HasPrefix(p, "github.com/kwire/kwire/cmd") || strings.Contains(p, "cobra") {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
