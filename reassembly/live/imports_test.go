package live

import (
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package at its layer: it captures packets and
// imports no kwire package (it knows nothing about Kafka or the CLI), and
// only files built with the pcap tag use libpcap (cgo), so that the
// default build needs neither.
func TestImports(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"github.com/kwire/kwire/", "github.com/spf13/", "github.com/google/gopacket"}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		needsPcapTag := false
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if strings.HasPrefix(path, bad) {
					t.Errorf("%s imports %s", name, path)
				}
			}
			if path == "C" || path == "github.com/gopacket/gopacket/pcap" {
				needsPcapTag = true
			}
		}
		if needsPcapTag && !requiresTag(f.Comments, "pcap") {
			t.Errorf("%s uses libpcap or cgo without the pcap build tag", name)
		}
	}
}

// requiresTag reports whether the file's //go:build line is false
// without tag.
func requiresTag(groups []*ast.CommentGroup, tag string) bool {
	for _, g := range groups {
		for _, c := range g.List {
			if !constraint.IsGoBuild(c.Text) {
				continue
			}
			expr, err := constraint.Parse(c.Text)
			if err != nil {
				return false
			}
			return !expr.Eval(func(t string) bool { return t != tag })
		}
	}
	return false
}
