package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/bombs"
)

// The head may always take memory; the jobs behind it share what is left
// once the head's part is kept aside, and one refused is aborted until it
// retries; when the head leaves, the next job's memory stops counting
// against the share.
func TestFlightMemory(t *testing.T) {
	var f flight
	f.setMemory(400)
	if f.share != 200 {
		t.Fatalf("share %d, want 200 (half of 400: the head's two frames take a quarter each)", f.share)
	}
	var ma, mb, mc jobMem
	a, b, c := f.admit(0, &ma), f.admit(0, &mb), f.admit(0, &mc)
	if !a.Reserve(1000) || a.wasAborted() {
		t.Error("the head was refused")
	}
	if !b.Reserve(150) || !c.Reserve(50) {
		t.Error("jobs behind the head refused within the share")
	}
	if c.Reserve(1) || !c.wasAborted() || c.Reserve(1) {
		t.Error("a job past the share was not refused and aborted")
	}
	c.Reserve(-50)
	c.retry()
	if c.wasAborted() {
		t.Error("retry left the job aborted")
	}
	a.Reserve(-1000)
	f.release(0, a) // b is the head: its 150 bytes are its own
	if f.used != 0 || !b.head() {
		t.Errorf("after the head left: share used %d, b head %v", f.used, b.head())
	}
	if !c.Reserve(200) {
		t.Error("c refused the share b no longer takes")
	}
	f.release(0, b)
	f.release(0, c)
	if len(f.queue) != 0 || f.jobs != 0 {
		t.Errorf("%d jobs, %d queued after all left", f.jobs, len(f.queue))
	}
}

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
		before := flightRefusals.Load()
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
		if flightRefusals.Load() == before {
			t.Errorf("%s: no work was refused memory: the test tests nothing", mode)
		}
	}
}
