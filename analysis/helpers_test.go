package analysis

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/tlsdec"
)

// analyze runs a golden capture through reassembly, the dissector and an
// Analyzer with opts; it skips when the capture is missing.
func analyze(t testing.TB, name string, opts Options) *Analyzer {
	t.Helper()
	path := filepath.Join("..", "pcaps", name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s: %v (make pcaps)", path, err)
	}
	a := New(opts)
	dopts := dissect.Options{Ports: pcaps.BrokerPorts(), Detect: true, Decoder: dissectDecoder}
	if kl, ok := pcaps.KeyLog(path); ok {
		// The TLS captures' key logs: their Kafka is dissected.
		b, err := os.ReadFile(kl)
		if err != nil {
			t.Fatal(err)
		}
		keys := &tlsdec.KeyLog{}
		keys.Write(b)
		keys.Flush()
		dopts.TLSKeys = keys
	}
	d := dissect.New(dopts, a)
	if _, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, d); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	d.Finish()
	return a
}

var dissectDecoder = protocol.Decoder{Records: true}
