package reassembly

import (
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestImports keeps the package at its layer: it reads captures and TCP,
// and imports no other kwire package (it knows nothing about Kafka), no
// CLI and no libpcap (it must build with CGO_ENABLED=0).
func TestImports(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"github.com/kwire/kwire/", "github.com/spf13/", "github.com/gopacket/gopacket/pcap", "github.com/google/gopacket", "C"}
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || (strings.HasSuffix(bad, "/") && strings.HasPrefix(path, bad)) || (bad == "github.com/gopacket/gopacket/pcap" && path == bad) {
					t.Errorf("%s imports %s", name, path)
				}
			}
		}
	}
}
