package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kwire/kwire/dissect/stats"
)

// TestCollectorRetainsLittle: the stats collector keeps every
// connection's *reassembly.Conn, so what a Conn points to must not keep a
// file's reassembly (assembler pools, capture reader buffers) alive: the
// heap after reading a capture 30 times as 30 files stays near what one
// file needs, not 30 times it (each file's reassembly is several MB).
func TestCollectorRetainsLittle(t *testing.T) {
	path := filepath.Join("..", "..", "pcaps", "kgo-large-value.pcap")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("golden capture missing: %v", err)
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // sync.Pool's victim cache too
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	read := func(n int) *stats.Collector {
		paths := make([]string, n)
		for i := range paths {
			paths[i] = path
		}
		col := stats.NewCollector(stats.Options{Top: 10})
		o := captureFlags{Ports: portsFlag{ports: []uint16{9092}}, Detect: true, MaxDecompressed: 256 << 20, MaxDecodeMemory: defaultMaxDecodeMemory}
		dopts, err := o.dissectOptions(valuesNotShown)
		if err != nil {
			t.Fatal(err)
		}
		cr := &captureReader{opts: dopts, onFile: col.SetFile}
		cr.read(context.Background(), paths, col)
		return col
	}
	base := heap()
	one := read(1)
	h1 := heap() - min(base, heap())
	runtime.KeepAlive(one)
	one = nil
	base = heap()
	many := read(30)
	h30 := heap() - min(base, heap())
	runtime.KeepAlive(many)
	t.Logf("heap kept by the collector: %d KB after 1 file, %d KB after 30", h1>>10, h30>>10)
	if h30 > 8<<20 {
		t.Errorf("the collector keeps %d KB after 30 files (%d KB after 1): something a Conn points to keeps each file's reassembly alive", h30>>10, h1>>10)
	}
}
