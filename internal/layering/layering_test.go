package layering

import (
	"go/ast"
	"go/build"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/protocol"
)

const module = "github.com/kwire/kwire"

// forbidden lists, per package (and its subpackages, but for internal
// tools such as protocol/internal/schemagen), import paths or path
// prefixes it must never depend on, directly or transitively.
var forbidden = map[string][]string{
	// Pure Kafka knowledge: no I/O, networking, CLI or output code.
	"protocol": {"os", "os/exec", "net", "net/http", "log", "github.com/spf13/cobra", "github.com/fatih/color",
		module + "/render", module + "/dissect", module + "/reassembly", module + "/cmd", module + "/facts"},
	// What exchanges say, from the decoder's trees: Kafka knowledge and
	// nothing else (no connections, no output, no CLI, no I/O).
	"facts": {"os", "os/exec", "net", "net/http", "log", "github.com/spf13/cobra", "github.com/fatih/color",
		module + "/render", module + "/dissect", module + "/reassembly", module + "/cmd"},
	// TCP only: nothing about Kafka.
	"reassembly": {module + "/protocol", module + "/facts", module + "/dissect", module + "/render", module + "/cmd", "github.com/spf13/cobra"},
	// Kafka framing and pairing: no output code, no CLI.
	// (The analysis of a capture builds on dissect, never the reverse.)
	"dissect": {module + "/render", module + "/cmd", module + "/analysis", module + "/pipeline", "github.com/spf13/cobra", "github.com/fatih/color"},
	// TLS record decryption: nothing of Kafka, no I/O, no capture code.
	"tlsdec": {"os", "os/exec", "net", "net/http", "log", "github.com/spf13/cobra",
		module + "/protocol", module + "/dissect", module + "/render", module + "/reassembly", module + "/cmd"},
	// Renderers are not CLI code. (They use reassembly's Conn and Dir
	// types through dissect's Exchange, so reassembly is allowed.)
	"render": {module + "/cmd", "github.com/spf13/cobra"},
	// Pipelines of exchanges between the Dissector and its consumers:
	// no output, no CLI (files only through dissect's spill).
	"pipeline": {"os/exec", "net/http", "log", module + "/render", module + "/cmd", "github.com/spf13/cobra", "github.com/fatih/color"},
	// What the exchanges of a capture mean to an operator (groups,
	// transactions, findings), from facts and frames' TCP timing: no
	// output, no CLI (files only through dissect's spill).
	"analysis": {"os/exec", "net/http", "log", module + "/render", module + "/cmd", "github.com/spf13/cobra", "github.com/fatih/color"},
}

func TestLayering(t *testing.T) {
	ctx := build.Default
	for pkg, bad := range forbidden {
		for _, sub := range packagesUnder(t, pkg) {
			checkDeps(t, ctx, sub, bad)
		}
	}
}

// packagesUnder lists pkg and the package directories below it (with a
// non-test .go file), skipping internal, testdata and hidden directories.
func packagesUnder(t *testing.T, pkg string) []string {
	t.Helper()
	var pkgs []string
	root := filepath.Join("..", "..", filepath.FromSlash(pkg))
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); path != root && (n == "internal" || n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
			return filepath.SkipDir
		}
		if m, _ := filepath.Glob(filepath.Join(path, "*.go")); slices.ContainsFunc(m, func(f string) bool { return !strings.HasSuffix(f, "_test.go") }) {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			pkgs = append(pkgs, strings.TrimSuffix(pkg+"/"+filepath.ToSlash(rel), "/."))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) == 0 {
		t.Fatalf("%s: no packages found", pkg)
	}
	return pkgs
}

// checkDeps reports every package pkg depends on, directly or not, that
// bad names (exactly or as a path prefix).
func checkDeps(t *testing.T, ctx build.Context, pkg string, bad []string) {
	t.Helper()
	root := module + "/" + pkg
	deps := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		if deps[p] {
			return
		}
		deps[p] = true
		bp, err := ctx.Import(p, "", 0)
		if err != nil {
			return // standard library and modules outside the tree: only their own path counts
		}
		if !strings.HasPrefix(p, module) {
			return
		}
		for _, imp := range bp.Imports {
			walk(imp)
		}
	}
	walk(root)
	for dep := range deps {
		for _, b := range bad {
			if dep == b || strings.HasPrefix(dep, b+"/") {
				t.Errorf("%s depends on %s (forbidden)", pkg, dep)
			}
		}
	}
	if len(deps) < 2 {
		t.Errorf("%s: no imports found; is the package walk broken?", pkg)
	}
}

// direct lists, per package directory (its subpackages have their own
// entries), the imports its non-test .go files must not name themselves,
// whatever their build tags: an entry is an exact import path, or a path
// ending in "/..." for that path and everything below it. These are
// stricter than forbidden where a package may reach a dependency only
// through another package (render reaches os through dissect).
var direct = map[string][]string{
	// Reads captures and TCP; knows no other kwire package, no CLI, and
	// must build with CGO_ENABLED=0 (no libpcap, no cgo).
	"reassembly": {module + "/...", "github.com/spf13/...", "github.com/gopacket/gopacket/pcap", "github.com/google/gopacket/...", "C"},
	// Captures packets; knows no kwire package. libpcap and cgo only in
	// files built with the pcap tag (TestPcapNeedsTag).
	"reassembly/live": {module + "/...", "github.com/spf13/...", "github.com/google/gopacket/..."},
	// Aggregates and never prints: no os or io (output belongs to
	// render/statsview), no render, no CLI.
	"dissect/stats": {"os", "io", module + "/render/...", module + "/cmd/...", "github.com/spf13/cobra/..."},
	// Profiles and compares captures from facts: the same as stats.
	"dissect/profile": {"os", "io", module + "/render/...", module + "/cmd/...", "github.com/spf13/cobra/..."},
	// Renders trees; never opens files or sockets or reads captures.
	"render": {"os", "net", "github.com/spf13/cobra/...", module + "/cmd/...", "github.com/gopacket/gopacket/..."},
	// Formats stats reports: never decodes or reads captures, so of
	// dissect only its stats reports.
	"render/statsview": {module + "/protocol", module + "/reassembly", module + "/dissect", module + "/cmd/..."},
}

// matches reports whether import path p is named by entry e of direct.
func matches(p, e string) bool {
	if base, ok := strings.CutSuffix(e, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == e
}

// sources parses the non-test .go files of package directory pkg
// (relative to the module root), with comments.
func sources(t *testing.T, pkg string) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	dir := filepath.Join("..", "..", filepath.FromSlash(pkg))
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files[pkg+"/"+name] = f
	}
	if len(files) == 0 {
		t.Fatalf("%s: no source files found", pkg)
	}
	return fset, files
}

func TestDirectImports(t *testing.T) {
	for pkg, bad := range direct {
		_, files := sources(t, pkg)
		for name, f := range files {
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, e := range bad {
					if matches(p, e) {
						t.Errorf("%s imports %s (forbidden by %q)", name, p, e)
					}
				}
			}
		}
	}
}

// TestPcapNeedsTag: in reassembly/live only files built with the pcap tag
// use libpcap or cgo, so that the default build needs neither.
func TestPcapNeedsTag(t *testing.T) {
	_, files := sources(t, "reassembly/live")
	for name, f := range files {
		needsTag := false
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == "C" || p == "github.com/gopacket/gopacket/pcap" {
				needsTag = true
			}
		}
		if needsTag && !requiresTag(f.Comments, "pcap") {
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

// TestRenderNeverDecodes: render's non-test code calls no decoder entry
// point of package protocol (Decode*, SASLToken, Decompress).
func TestRenderNeverDecodes(t *testing.T) {
	fset, files := sources(t, "render")
	for name, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "protocol" &&
				(strings.HasPrefix(sel.Sel.Name, "Decode") || sel.Sel.Name == "SASLToken" || sel.Sel.Name == "Decompress") {
				t.Errorf("%s: calls protocol.%s at %s", name, sel.Sel.Name, fset.Position(sel.Pos()))
			}
			return true
		})
	}
}

// fieldNameReaders are the packages that read what exchanges say: they
// find fields by identity (protocol.Node.Field, roles, facts), never by
// spelling a schema field's name.
var fieldNameReaders = []string{"render", "dissect", "dissect/stats", "cmd/kwire", "cmd/kwire-baseline", "reassembly", "tlsdec"}

// notFieldNames are literals in the readers that spell a field's name
// without meaning the field ("file literal" → why).
var notFieldNames = map[string]string{
	"render/json.go Size":             "the suffix of kwire's own JSON keys (valueSize, keySize): docs/json.md",
	"render/factsdoc.go timeoutMs":    "a key of kwire's own facts document (FactsDoc.TimeoutMs), written by appendFactsDoc: docs/json.md",
	"render/factsdoc.go validateOnly": "a key of kwire's own facts document (FactsDoc.ValidateOnly, from the role protocol.RoleValidateOnly), written by appendFactsDoc: docs/json.md",
}

// TestNoFieldNameLiterals: no string literal in the readers' non-test
// code is the name of a field of Kafka's message schemas or of the
// record batch (protocol.Schemas, protocol.Batch, protocol.Record,
// protocol.Message). Meaning is decided in protocol and facts.
func TestNoFieldNameLiterals(t *testing.T) {
	names := map[string]bool{}
	var walk func(fs []protocol.Field)
	walk = func(fs []protocol.Field) {
		for i := range fs {
			names[fs[i].Name] = true
			walk(fs[i].Fields)
		}
	}
	for _, m := range protocol.Schemas {
		walk(m.Fields)
	}
	for _, set := range []any{protocol.Batch, protocol.Record, protocol.Message} {
		v := reflect.ValueOf(set)
		for i := 0; i < v.NumField(); i++ {
			if f, ok := v.Field(i).Interface().(*protocol.Field); ok && f != nil {
				names[f.Name] = true
			}
		}
	}
	if len(names) < 400 || !names["PartitionIndex"] || !names["ProducerEpoch"] {
		t.Fatalf("%d field names collected: the schema walk is broken", len(names))
	}
	for _, pkg := range fieldNameReaders {
		fset, files := sources(t, pkg)
		for name, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if s, err := strconv.Unquote(lit.Value); err == nil && names[s] && notFieldNames[name+" "+s] == "" {
					t.Errorf("%s: the field name %q at %s (find the field by identity)", name, s, fset.Position(lit.Pos()))
				}
				return true
			})
		}
	}
}
