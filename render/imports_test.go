package render

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// render never decodes: its non-test code calls no decoder entry point of
// package protocol and imports no capture or CLI package.
func TestNeverDecodes(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	forbiddenImports := []string{"os", "net", "github.com/spf13/cobra", "github.com/kwire/kwire/cmd", "github.com/gopacket/gopacket"}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		checked++
		fs := token.NewFileSet()
		file, err := parser.ParseFile(fs, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			for _, bad := range forbiddenImports {
				if path == bad || strings.Contains(bad, ".") && strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s", f, path)
				}
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "protocol" &&
				(strings.HasPrefix(sel.Sel.Name, "Decode") || sel.Sel.Name == "SASLToken" || sel.Sel.Name == "Decompress") {
				t.Errorf("%s: calls protocol.%s at %s", f, sel.Sel.Name, fs.Position(sel.Pos()))
			}
			return true
		})
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}
