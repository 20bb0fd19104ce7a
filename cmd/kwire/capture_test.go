package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/reassembly"
	"github.com/spf13/pflag"
)

// TestReassemblyOptions checks how --max-out-of-order and --idle-timeout
// become reassembly bounds: bytes round up to whole pages, one connection
// may hold them all (a fixed count of pages per connection gave up holes
// whatever the flag said), 0 lifts the bound; short idle timeouts are
// checked every half timeout.
func TestReassemblyOptions(t *testing.T) {
	const page = reassembly.PageSize
	for _, c := range []struct {
		size      int64
		idle      time.Duration
		total, pc int
		flush     time.Duration // 0: reassembly's default (10s)
	}{
		{defaultMaxOutOfOrder, 0, 8831, 8831, 0}, // 16 MiB / 1900 = 8830.1
		{1, time.Minute, 1, 1, 0},
		{1, 100 * time.Millisecond, 1, 1, 50 * time.Millisecond},
		{1, 10 * time.Second, 1, 1, 5 * time.Second},
		{1, time.Microsecond, 1, 1, time.Millisecond},
		{page, 0, 1, 1, 0},
		{4*page + 1, 0, 5, 5, 0},
		{1 << 20, 0, 552, 552, 0},                 // 1 MiB / 1900 = 551.9
		{1 << 30, 0, 565_128, 565_128, 0},         // 1 GiB
		{1 << 40, 0, 578_690_331, 578_690_331, 0}, // 1 TiB / 1900, rounded up
		{0, 0, -1, -1, 0},
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

// defaultCaptureFlags is captureFlags as a command's flag set leaves it
// when no flag is given: every default of addFlags.
func defaultCaptureFlags() captureFlags {
	var o captureFlags
	o.addFlags(pflag.NewFlagSet("defaults", pflag.ContinueOnError), true, 0)
	return o
}

// TestDefaultMemoryBound checks the bound the default flags give against
// the README's ("Memory": 1620 MiB, 64 MiB + P + 4·O + G + W + D + 2·F + C
// + R + 3·T + K), and that every term of it is counted: a flag added to the formula
// but left out of a hand-built captureFlags made memoryBound 0 ("no
// bound"), and BenchmarkBombs failed every run against a 0 MiB bound.
func TestDefaultMemoryBound(t *testing.T) {
	o := defaultCaptureFlags()
	if got, want := o.memoryBound(), int64(1620)<<20; got != want {
		t.Fatalf("default memory bound %d MiB, README says %d MiB", got>>20, want>>20)
	}
	// Each term lifted alone (0: no bound) lifts the whole bound.
	for name, f := range map[string]*byteSize{
		"--max-pending-memory": &o.MaxPending, "--max-out-of-order": &o.MaxOutOfOrder,
		"--max-decode-memory": &o.MaxDecodeMemory, "--max-fragment-memory": &o.MaxFragmentMemory,
		"--max-capture-window": &o.MaxCaptureWindow, "--max-connection-memory": &o.MaxConnMemory,
		"--max-reassembly-memory": &o.MaxPartial,
		"--max-names-memory":      &o.MaxNamesMemory,
		"--max-tls-key-memory":    &o.MaxTLSKeyMemory,
	} {
		old := *f
		*f = 0
		if b := o.memoryBound(); b != 0 {
			t.Errorf("%s 0: bound %d MiB, want 0 (none)", name, b>>20)
		}
		*f = old
	}
	// --max-frame 0 is its default, 100 MiB, counted twice.
	o.MaxFrame = 200 << 20
	if got, want := o.memoryBound(), int64(1620+200)<<20; got != want {
		t.Errorf("--max-frame 200MiB: bound %d MiB, want %d", got>>20, want>>20)
	}
}

// TestTLSKeyMemoryBound: the secrets kept are bounded by
// --max-tls-key-memory; past it those read first are dropped, and a
// connection that needed them says so (exit status 1), with a warning that
// names the flag. Read last, the same keys decrypt every connection.
func TestTLSKeyMemoryBound(t *testing.T) {
	real, err := os.ReadFile(goldenPcap(t, "kgo-tls13.keylog"))
	if err != nil {
		t.Fatal(err)
	}
	var junk strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&junk, "CLIENT_RANDOM %064x %s\n", i, strings.Repeat("11", 48))
	}
	dir := t.TempDir()
	first, last := filepath.Join(dir, "first.keylog"), filepath.Join(dir, "last.keylog")
	os.WriteFile(first, append(slices.Clone(real), junk.String()...), 0o644)
	os.WriteFile(last, append([]byte(junk.String()), real...), 0o644)
	capture := goldenPcap(t, "kgo-tls13.pcap")

	out, errOut, code := kwireInProcess(t, "read", "--max-tls-key-memory", "64KiB", "--tls-keylog", first, capture)
	// 64 KiB keep 178 client randoms (368 bytes each): the capture's 20
	// and 1,842 of the others, those read first, are dropped.
	if code != exitData || !strings.Contains(out, "not decrypted: no key for client random") || !strings.Contains(out, "(178 keys loaded, 1842 older ones dropped past the key log's memory bound)") {
		t.Errorf("keys first: exit %d, stdout %q", code, out)
	}
	if !strings.Contains(errOut, "kwire: warning: the secrets of 1842 TLS client randoms, those read first, were dropped: the key logs and Decryption Secrets Blocks hold more than --max-tls-key-memory keeps (64KiB, 178 client randoms)") ||
		!strings.Contains(errOut, "raise it, e.g. --max-tls-key-memory 1MiB") {
		t.Errorf("keys first: stderr %q", errOut)
	}

	out, errOut, code = kwireInProcess(t, "read", "--max-tls-key-memory", "64KiB", "--tls-keylog", last, capture)
	if code != exitOK || !strings.Contains(out, "connections 20 (20 Kafka, 20 decrypted from TLS)") || !strings.Contains(errOut, "the secrets of 1847 TLS client randoms") { // the capture's TLS 1.3 randoms take more room each
		t.Errorf("keys last: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A bound that keeps none: the key log was given and its keys
	// dropped, not missing. It read as a capture with no key log: "give
	// the clients' TLS key log with --tls-keylog", the handshakes not read
	// (no reason), exit status 0.
	out, errOut, code = kwireInProcess(t, "read", "--max-tls-key-memory", "1", "--tls-keylog", first, capture)
	if code != exitData || !strings.Contains(out, "(0 keys loaded, 2080 older ones dropped past the key log's memory bound)") ||
		!strings.Contains(out, "\nanomalies: 20 TLS connections not decrypted (20 no key for the client random, with secrets dropped past --max-tls-key-memory)\n") ||
		!strings.Contains(errOut, "no Kafka connections found: 20 TLS connections (not decrypted: 20 no key for the client random, with secrets dropped past --max-tls-key-memory)") ||
		!strings.Contains(errOut, "the capture could not be fully dissected: 20 TLS connections not decrypted") ||
		strings.Contains(errOut, "give the clients' TLS key log") {
		t.Errorf("none kept: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// No bound: nothing dropped, no warning.
	out, errOut, code = kwireInProcess(t, "read", "--max-tls-key-memory", "0", "--tls-keylog", first, capture)
	if code != exitOK || !strings.Contains(out, "20 decrypted from TLS") || strings.Contains(errOut, "dropped") {
		t.Errorf("no bound: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestTLSKeyLogUTF16: a key log that Windows PowerShell's > wrote as
// UTF-16 with a byte order mark (or a UTF-8 one) is read as the mark says.
func TestTLSKeyLogUTF16(t *testing.T) {
	keys, err := os.ReadFile(goldenPcap(t, "kgo-tls12.keylog"))
	if err != nil {
		t.Fatal(err)
	}
	le := []byte{0xff, 0xfe}
	for _, r := range string(keys) {
		le = append(le, byte(r), byte(r>>8))
	}
	be := []byte{0xfe, 0xff}
	for _, r := range string(keys) {
		be = append(be, byte(r>>8), byte(r))
	}
	dir := t.TempDir()
	// Without the mark (Out-File -Encoding Unicode in some versions,
	// editors saving "UTF-16 LE"), both byte orders: every other byte
	// NUL tells it; it was refused ("none of its 40 lines is an NSS key
	// log line").
	files := map[string][]byte{"utf16le": le, "utf16be": be, "utf8bom": append([]byte("\ufeff"), keys...),
		"utf16le-nobom": le[2:], "utf16be-nobom": be[2:]}
	for name, b := range files {
		path := filepath.Join(dir, name+".keylog")
		os.WriteFile(path, b, 0o644)
		out, errOut, code := kwireInProcess(t, "read", "--tls-keylog", path, goldenPcap(t, "kgo-tls12.pcap"))
		if code != exitOK || !strings.Contains(out, "(20 Kafka, 20 decrypted from TLS)") || errOut != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", name, code, out, errOut)
		}
	}
	// kwire live reads a growing key log as written: a UTF-16 one is
	// refused at the start with how to convert it, rather than read as
	// lines of NULs.
	for name, want := range map[string]string{
		"utf16le-nobom": "is UTF-16 (little-endian, no byte order mark), which kwire live does not read as it grows: convert it to UTF-8 (iconv -f UTF-16LE -t UTF-8 ",
		"utf16be-nobom": "is UTF-16 (big-endian, no byte order mark), which kwire live does not read as it grows: convert it to UTF-8 (iconv -f UTF-16BE -t UTF-8 ",
		"utf16le":       "is UTF-16 (little-endian, with a byte order mark), which kwire live does not read as it grows: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8 ",
	} {
		path := filepath.Join(dir, name+".keylog")
		k, err := loadTLSKeys([]string{path}, true, 0)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "--tls-keylog "+path+" "+want) {
			t.Errorf("live, %s: %v", name, err)
		}
		if k != nil {
			k.close()
		}
	}
	k, err := loadTLSKeys([]string{filepath.Join(dir, "utf8bom.keylog")}, true, 0)
	if err != nil || k.Len() != 1 { // kgo-tls12.keylog holds one line
		t.Errorf("live, utf8bom: %v", err)
	} else {
		k.close()
	}
}

// TestKeyLogUTF16Sniff: a key log is UTF-16 by its byte order mark, or
// without one by a NUL in every other byte (nine in ten 16-bit units at
// least: a comment may hold a character past U+00FF); UTF-8, ASCII, a
// capture given by mistake and a file too short to tell are not.
func TestKeyLogUTF16Sniff(t *testing.T) {
	utf16 := func(s string, big bool) []byte {
		var b []byte
		for _, u := range s {
			if big {
				b = append(b, byte(u>>8), byte(u))
			} else {
				b = append(b, byte(u), byte(u>>8))
			}
		}
		return b
	}
	line := "CLIENT_RANDOM 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef 00112233\n"
	for _, c := range []struct {
		name string
		head []byte
		want string // utf16Form.String, "" for not UTF-16
	}{
		{"ascii", []byte(line), ""},
		{"utf-8 comment", []byte("# clé € " + line), ""},
		{"utf-16le", utf16(line, false), "little-endian, no byte order mark"},
		{"utf-16be", utf16(line, true), "big-endian, no byte order mark"},
		{"utf-16le with a mark", append([]byte{0xff, 0xfe}, utf16(line, false)...), "little-endian, with a byte order mark"},
		{"utf-16be with a mark", append([]byte{0xfe, 0xff}, utf16(line, true)...), "big-endian, with a byte order mark"},
		{"utf-16le, a euro sign in a comment", utf16("# € "+line, false), "little-endian, no byte order mark"},
		{"one unit", []byte("C\x00"), ""},
		{"two units", []byte("#\x00\n\x00"), "little-endian, no byte order mark"},
		{"pcap header", []byte{0xd4, 0xc3, 0xb2, 0xa1, 0x02, 0x00, 0x04, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0}, ""},
		{"empty", nil, ""},
	} {
		e, ok := keyLogUTF16(c.head)
		got := ""
		if ok {
			got = e.String()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestTLSSummarySaysWhy: the summary and stats say how many TLS
// connections were decrypted and, by reason, how many were not, in text
// and JSON: a key log holding the keys of 10 of kgo-tls13's 20 client
// randoms decrypts 10, and the other 10 have no key for their client
// random (exit status 1: keys were given).
func TestTLSSummarySaysWhy(t *testing.T) {
	real, err := os.ReadFile(goldenPcap(t, "kgo-tls13.keylog"))
	if err != nil {
		t.Fatal(err)
	}
	var randoms []string
	var half strings.Builder
	for l := range strings.Lines(string(real)) {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		if !slices.Contains(randoms, f[1]) {
			if len(randoms) == 10 {
				continue
			}
			randoms = append(randoms, f[1])
		}
		half.WriteString(l)
	}
	keys := filepath.Join(t.TempDir(), "half.keylog")
	if err := os.WriteFile(keys, []byte(half.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	capture := goldenPcap(t, "kgo-tls13.pcap")
	out, errOut, code := kwireInProcess(t, "read", "--tls-keylog", keys, capture)
	if code != exitData || !strings.Contains(out, "\npackets 386, connections 20 (10 Kafka, 10 decrypted from TLS)\n") ||
		!strings.Contains(out, "\nanomalies: 10 TLS connections not decrypted (10 no key for the client random)\n") ||
		!strings.Contains(errOut, "the capture could not be fully dissected: 10 TLS connections not decrypted (10 no key for the client random)") {
		t.Errorf("read: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, _, _ = kwireInProcess(t, "stats", "--tls-keylog", keys, capture)
	if !strings.Contains(out, "\ntls: 20 connections, 10 decrypted, 10 not decrypted (10 no key for the client random)\n") {
		t.Errorf("stats:\n%s", out)
	}
	out, _, _ = kwireInProcess(t, "stats", "--json", "--tls-keylog", keys, capture)
	var doc struct{ TLS *stats.TLSCounts }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	want := &stats.TLSCounts{Connections: 20, Decrypted: 10, NotDecrypted: 10, Reasons: []stats.TLSReason{{Reason: "no key for the client random", Count: 10}}}
	if !reflect.DeepEqual(doc.TLS, want) {
		t.Errorf("stats --json tls = %+v, want %+v", doc.TLS, want)
	}
	// All of them: no reason, and no anomaly.
	out, _, _ = kwireInProcess(t, "stats", "--json", "--tls-keylog", goldenPcap(t, "kgo-tls13.keylog"), capture)
	doc.TLS = nil
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if want := (&stats.TLSCounts{Connections: 20, Decrypted: 20, Reasons: []stats.TLSReason{}}); !reflect.DeepEqual(doc.TLS, want) {
		t.Errorf("stats --json tls with every key = %+v, want %+v", doc.TLS, want)
	}
}
