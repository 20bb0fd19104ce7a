package layering

import (
	"go/build"
	"strings"
	"testing"
)

const module = "github.com/kwire/kwire"

// forbidden lists, per package (and its subpackages), import paths or path
// prefixes it must never depend on, directly or transitively.
var forbidden = map[string][]string{
	// Pure Kafka knowledge: no I/O, networking, CLI or output code.
	"protocol": {"os", "os/exec", "net", "net/http", "log", "github.com/spf13/cobra", "github.com/fatih/color",
		module + "/render", module + "/dissect", module + "/reassembly", module + "/cmd"},
	// TCP only: nothing about Kafka.
	"reassembly": {module + "/protocol", module + "/dissect", module + "/render", module + "/cmd", "github.com/spf13/cobra"},
	// Kafka framing and pairing: no output code, no CLI.
	"dissect": {module + "/render", module + "/cmd", "github.com/spf13/cobra", "github.com/fatih/color"},
	// Renderers never read captures (they see reassembly only through
	// dissect's Exchange type: see forbiddenDirect) and are not CLI code.
	"render": {module + "/cmd", "github.com/spf13/cobra", "github.com/gopacket/gopacket/pcapgo"},
}

// forbiddenDirect lists imports a package (and its subpackages) must not
// name itself, though a package it uses may.
var forbiddenDirect = map[string][]string{
	"render": {module + "/reassembly", "github.com/gopacket/gopacket"},
}

func TestLayeringDirect(t *testing.T) {
	for pkg, bad := range forbiddenDirect {
		root := module + "/" + pkg
		bp, err := build.Default.Import(root, "", 0)
		if err != nil {
			t.Fatalf("%s: %v", root, err)
		}
		if len(bp.Imports) == 0 {
			t.Fatalf("%s: no imports found; is the lookup broken?", root)
		}
		for _, imp := range bp.Imports {
			for _, b := range bad {
				if imp == b || strings.HasPrefix(imp, b+"/") {
					t.Errorf("%s imports %s directly (forbidden)", pkg, imp)
				}
			}
		}
	}
}

func TestLayering(t *testing.T) {
	ctx := build.Default
	for pkg, bad := range forbidden {
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
}
