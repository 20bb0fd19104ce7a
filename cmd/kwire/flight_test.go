package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/bombs"
	"github.com/kwire/kwire/pipeline"
)

// manyRecordsCapture is a capture of n Produce requests whose batch holds
// records small records: each frame's decoded fields take megabytes.
func manyRecordsCapture(t *testing.T, n, records int) string {
	t.Helper()
	var recs []bombs.Record
	for i := range records {
		recs = append(recs, bombs.Record{Key: []byte{byte(i)}, Value: []byte("v")})
	}
	b := bombs.Batch{Codec: bombs.GzipC, Count: int32(records), Payload: bombs.Gzip(bombs.Records(recs...), nil)}.Encode()
	var exs []bombs.Exchange
	for i := range n {
		parts := []bombs.Partition{{Topic: "many", Index: int32(i % 3), Records: b}}
		exs = append(exs, bombs.Exchange{Request: bombs.ProduceRequest(3, int32(i+1), parts), Response: bombs.ProduceResponse(int32(i+1), parts)})
	}
	var buf bytes.Buffer
	if err := bombs.WritePcap(&buf, exs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "many.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runIn runs kwire in this process with GOMAXPROCS procs and returns its
// exit status, stdout and stderr.
func runIn(t *testing.T, procs int, args ...string) (int, string, string) {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	var out, errb bytes.Buffer
	s := &ioStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errb, Getenv: func(string) string { return "" }}
	code := run(args, s)
	return code, out.String(), errb.String()
}

// When the memory behind the head is too little for the exchanges being
// decoded and rendered at once, the refused work is done again at the
// head, and the output is byte for byte what one goroutine writes: a
// frame's decoding depends on its own caps only. Each frame here needs
// more than its cap (8 MiB of a 32 MiB bound), so that every one stops at
// the same record whatever else is in flight.
func TestFlightRefusedWorkRedone(t *testing.T) {
	path := manyRecordsCapture(t, 12, 8000)
	for _, mode := range []string{"-V", "--json"} {
		args := []string{"read", mode, "--max-decode-memory", "32MiB", path}
		before := pipeline.Refusals.Load()
		code1, out1, err1 := runIn(t, 1, args...)
		code4, out4, err4 := runIn(t, 4, args...)
		if code1 != 1 || code4 != 1 {
			t.Errorf("%s: exit %d and %d, want 1 (frames past their memory)", mode, code1, code4)
		}
		if !strings.Contains(err4, "12 frames need more than the 8MiB of memory one frame may take") {
			t.Errorf("%s: stderr %q", mode, err4)
		}
		if out1 != out4 || err1 != err4 {
			t.Errorf("%s: output with four workers differs from one goroutine's", mode)
		}
		if pipeline.Refusals.Load() == before {
			t.Errorf("%s: no work was refused memory: the test tests nothing", mode)
		}
	}
}
