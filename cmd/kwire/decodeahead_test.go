package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/pipeline"
	"github.com/kwire/kwire/render/statsview"
)

// statsReportJSON reads paths into a fresh collector, through decodeAhead
// with the given number of workers (0: synchronously, decoding in the
// dissector), and returns the report's JSON and the malformed count.
func statsReportJSON(t *testing.T, paths []string, workers int) (string, int64) {
	t.Helper()
	col := stats.NewCollector(stats.Options{Top: 10})
	o := captureFlags{Ports: portsFlag{ports: []uint16{9092}}, Detect: true, MaxDecompressed: 256 << 20, MaxDecodeMemory: defaultMaxDecodeMemory}
	dopts, err := o.dissectOptions(valuesNotShown)
	if err != nil {
		t.Fatal(err)
	}
	cr := &captureReader{opts: dopts}
	var run captureRun
	if workers == 0 {
		cr.onFile = col.SetFile
		run = cr.read(context.Background(), paths, col)
	} else {
		cr.opts.DeferDecode = true
		ahead := pipeline.NewDecodeAhead(col, workers, 64<<20)
		cr.onFile = func(p string) { ahead.Sync(); col.SetFile(p) }
		cr.drain = ahead.Sync
		run = cr.read(context.Background(), paths, ahead)
		ahead.Close()
	}
	var b bytes.Buffer
	if err := statsview.WriteStatsJSON(&b, &statsview.StatsDoc{Report: *col.Report()}, statsview.Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String(), run.lost.DecodeErrors
}

// TestDecodeAheadSameReport: the stats report and the count of frames
// that failed to decode are the same whether exchanges are decoded in the
// dissector or ahead on several workers, for each golden capture and for
// all of them read as several files.
func TestDecodeAheadSameReport(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "pcaps", "*.pcap"))
	if err != nil || len(paths) == 0 {
		t.Skipf("no golden captures: %v", err)
	}
	malformed := int64(0)
	check := func(name string, ps []string) {
		want, wantBad := statsReportJSON(t, ps, 0)
		for _, workers := range []int{1, 3} {
			got, gotBad := statsReportJSON(t, ps, workers)
			if got != want || gotBad != wantBad {
				t.Errorf("%s, %d workers: report differs (%d bytes vs %d) or malformed %d vs %d", name, workers, len(got), len(want), gotBad, wantBad)
			}
		}
		if len(ps) == 1 {
			malformed += wantBad
		}
	}
	for _, p := range paths {
		check(filepath.Base(p), []string{p})
	}
	check("all", paths)
	// Damaged copies of the captures: bytes flipped past the file header,
	// so that some frames fail to decode, some of them frames the
	// Dissector decodes itself (request headers, ApiVersions).
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for _, orig := range paths {
		b0, err := os.ReadFile(orig)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 6 {
			b := bytes.Clone(b0)
			for range 20 {
				b[100+rng.IntN(len(b)-100)] ^= byte(1 + rng.IntN(255))
			}
			p := filepath.Join(dir, fmt.Sprintf("%s.damaged%d.pcap", filepath.Base(orig), i))
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			check(filepath.Base(p), []string{p})
		}
	}
	if malformed == 0 {
		t.Error("no capture had a frame that failed to decode: the malformed count was not checked")
	}
}
