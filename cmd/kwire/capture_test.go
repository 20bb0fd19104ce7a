package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/reassembly"
)

// TestReassemblyOptions checks how --max-out-of-order and --idle-timeout
// become reassembly bounds: bytes round up to whole pages, one connection
// holds no more than all nor than 2048 pages, 0 lifts the bound for all
// together; short idle timeouts are checked every half timeout.
func TestReassemblyOptions(t *testing.T) {
	const page = reassembly.PageSize
	for _, c := range []struct {
		size      int64
		idle      time.Duration
		total, pc int
		flush     time.Duration // 0: reassembly's default (10s)
	}{
		{defaultMaxOutOfOrder, 0, 8831, 2048, 0}, // 16 MiB / 1900 = 8830.1
		{1, time.Minute, 1, 1, 0},
		{1, 100 * time.Millisecond, 1, 1, 50 * time.Millisecond},
		{1, 10 * time.Second, 1, 1, 5 * time.Second},
		{1, time.Microsecond, 1, 1, time.Millisecond},
		{page, 0, 1, 1, 0},
		{4*page + 1, 0, 5, 5, 0},
		{1 << 20, 0, 552, 552, 0},          // 1 MiB / 1900 = 551.9
		{1 << 30, 0, 565_128, 2048, 0},     // 1 GiB: one connection still 2048 pages
		{1 << 40, 0, 578_690_331, 2048, 0}, // 1 TiB / 1900, rounded up
		{0, 0, -1, 2048, 0},
	} {
		o := captureFlags{MaxOutOfOrder: byteSize(c.size), IdleTimeout: c.idle}
		got := o.reassemblyOptions()
		if got.FlushInterval != c.flush {
			t.Errorf("--idle-timeout %v: flush interval %v, want %v", c.idle, got.FlushInterval, c.flush)
		}
		if got.MaxBufferedPagesTotal != c.total || got.MaxBufferedPagesPerConn != c.pc || got.IdleTimeout != c.idle {
			t.Errorf("--max-out-of-order %d --idle-timeout %v: total %d, per connection %d, idle %v; want %d, %d, %v",
				c.size, c.idle, got.MaxBufferedPagesTotal, got.MaxBufferedPagesPerConn, got.IdleTimeout, c.total, c.pc, c.idle)
		}
	}
}

// A --tls-keylog file none of whose lines is a key log line is the wrong
// file: a usage error (exit 2) naming it, not a run as if no key log had
// been given.
func TestTLSKeyLogNotAKeyLog(t *testing.T) {
	wrong := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(wrong, []byte("# keys\nthese are not keys\nCLIENT_RANDOM zz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kwireInProcess(t, "read", "--tls-keylog", wrong, goldenPcap(t, "kgo-tls13.pcap"))
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--tls-keylog "+wrong+": none of its 2 lines is an NSS key log line") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
