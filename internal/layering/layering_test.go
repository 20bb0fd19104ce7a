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
	// Renderers are not CLI code. (They use reassembly's Conn and Dir
	// types through dissect's Exchange, so reassembly is allowed.)
	"render": {module + "/cmd", "github.com/spf13/cobra"},
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
