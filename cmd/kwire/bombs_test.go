package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/bombs"
	"github.com/kwire/kwire/internal/memtune"
	"github.com/spf13/pflag"
)

// asKwire in the environment makes the test binary run as kwire
// (TestMain); asKwireHWM names the file where it then writes its peak
// resident set size.
const (
	asKwire    = "KWIRE_TEST_AS_KWIRE"
	asKwireHWM = "KWIRE_TEST_HWM"
)

// mainForTest is main, writing the process's peak resident set size in
// bytes to the file $KWIRE_TEST_HWM names before it exits. The peak is
// the kernel's VmHWM: that of the process since it became kwire (the
// rusage of a child counts the parent's memory too, which the child
// shared until its exec).
func mainForTest() {
	memtune.Start()
	code := run(os.Args[1:], systemIO())
	if f := os.Getenv(asKwireHWM); f != "" {
		os.WriteFile(f, []byte(strconv.FormatInt(vmHWM(), 10)), 0o644)
	}
	os.Exit(code)
}

// vmHWM is the process's peak resident set size in bytes, from
// /proc/self/status (0 when the OS does not say).
func vmHWM() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}

// kwireRun is what a child kwire did: its exit status, output, and peak
// resident set size in bytes (0 where the OS does not say).
type kwireRun struct {
	code           int
	stdout, stderr string
	maxRSS         int64
}

// runKwire runs kwire (this test binary, as kwire) with args and env in a
// child process.
func runKwire(t testing.TB, env []string, args ...string) kwireRun {
	t.Helper()
	hwm := filepath.Join(t.TempDir(), "hwm")
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), asKwire+"=1", asKwireHWM+"="+hwm, "NO_COLOR=1"), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("kwire %v: %v", args, err)
	}
	r := kwireRun{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errb.String()}
	if b, err := os.ReadFile(hwm); err == nil {
		r.maxRSS, _ = strconv.ParseInt(string(b), 10, 64)
	}
	return r
}

// The flags the hostile corpus is read with: caps lowered to its Small
// scale, so that every bomb passes them quickly.
var bombFlags = []string{"--max-decompressed", "16MiB", "--max-decode-memory", "64MiB",
	"--max-pending-memory", "4MiB", "--max-out-of-order", "1MiB", "--max-frame", "8388608",
	"--max-fragment-memory", "1MiB", "--max-capture-window", "8MiB", "--max-connection-memory", "1MiB", "--max-reassembly-memory", "8MiB", "--max-names-memory", "1MiB", "--max-tls-key-memory", "1MiB"}

// bombBound is what bombFlags bound kwire's memory to (memoryBound, the
// README's formula), the flags parsed as the command parses them.
func bombBound() int64 {
	return flagsBound(bombFlags...)
}

// flagsBound is memoryBound of the capture flags args give, the others at
// their defaults.
func flagsBound(args ...string) int64 {
	var o captureFlags
	fs := pflag.NewFlagSet("bound", pflag.PanicOnError)
	o.addFlags(fs, true, 0)
	fs.Parse(args)
	return o.memoryBound()
}

// What each capture of the corpus gives in the modes that decode records
// (-V, -x, --json, stats; the one-line mode and versions read batch
// headers only): the exit status and a line of stderr. Every capture ends
// with an ordinary exchange, which every mode must still show.
var bombWant = map[string]struct {
	code    int    // in the modes that decode records
	headers int    // in the modes that read batch headers only
	stderr  string // in the modes that decode records ("" with code 0: nothing)
}{
	"zstd-8x12MiB":              {0, 0, ""},
	"gzip-12MiB-x1":             {0, 0, ""},
	"gzip-12MiB-x4":             {0, 0, ""},
	"gzip-12MiB-x16":            {0, 0, ""},
	"gzip-1MiB-batches-x16":     {0, 0, ""},
	"gzip-256MiB":               {1, 0, "2 frames inflate past --max-decompressed (16MiB): decompression bombs"},
	"lz4-256MiB":                {1, 0, "2 frames inflate past --max-decompressed (16MiB): decompression bombs"},
	"zstd-256MiB":               {1, 0, "2 frames inflate past --max-decompressed (16MiB): decompression bombs"},
	"xerial-32MiB":              {1, 0, "2 frames inflate past --max-decompressed (16MiB): decompression bombs"},
	"snappy-raw-32MiB":          {1, 0, "2 frames inflate past --max-decompressed (16MiB): decompression bombs"},
	"gzip-isize-lie":            {1, 0, "2 frames inflate past --max-decompressed (16MiB): decompression bombs"},
	"zstd-fcs-lie":              {1, 0, "2 frames that failed to decode"},
	"lz4-size-lie":              {1, 0, "2 frames inflate past --max-decompressed (16MiB): decompression bombs"},
	"snappy-raw-length-lie":     {1, 0, "2 frames inflate past --max-decompressed (16MiB): decompression bombs"},
	"record-count-lie":          {1, 0, "2 frames need more than the 16MiB of memory one frame may take"},
	"record-length-lie":         {1, 0, "2 frames that failed to decode"},
	"zstd-many-4MiB":            {1, 0, "8 frames inflate past --max-decompressed (16MiB): decompression bombs"},
	"legacy-nested-gzip":        {1, 1, "2 frames need more than the 16MiB of memory one frame may take"},
	"legacy-nested-gzip-magic0": {1, 1, "2 frames need more than the 16MiB of memory one frame may take"},
}

// kwire decode bounds one frame as read does: a bomb's frame pasted as
// hex is decoded up to the cap and reported (exit 1), in little memory.
func TestDecodeBomb(t *testing.T) {
	b := bombs.Batch{Codec: bombs.ZstdC, Count: 1,
		Payload: bombs.Zstd(bombs.Records(bombs.Record{Key: []byte("k"), ValueZeros: 1 << 30}), nil)}.Encode()
	frame := bombs.ProduceRequest(3, 7, []bombs.Partition{{Topic: "bombs", Records: b}})
	hexFile := filepath.Join(t.TempDir(), "frame.hex")
	if err := os.WriteFile(hexFile, []byte(hex.EncodeToString(frame)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mode := range [][]string{nil, {"-x"}, {"--json"}} {
		args := append([]string{"decode", "-f", hexFile, "--max-decompressed", "64MiB"}, mode...)
		r := runKwire(t, nil, args...)
		if r.code != 1 || !strings.Contains(r.stderr, "decompression bomb: zstd data of") {
			t.Errorf("decode %v: exit %d, stderr %q", mode, r.code, r.stderr)
		}
		if mode == nil && !strings.Contains(r.stdout, "only its first 67108864 bytes decoded") {
			t.Errorf("decode: the note does not say how far it got:\n%.2000s", r.stdout)
		}
		if r.maxRSS > 100<<20 {
			t.Errorf("decode %v: peak RSS %d MiB", mode, r.maxRSS>>20)
		}
	}
}

// TestBombCorpus reads every capture of the hostile corpus (package
// bombs, at its Small scale) in every mode, each in a child process, and
// checks the exit status (1 for a bomb, never 2), the warning naming the
// bound that was reached, that the exchange after the bombs is still
// decoded, and that the child's peak RSS stays under the bound the flags
// give (memoryBound). The trees are the same with one worker or four.
func TestBombCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("decompresses a few gigabytes")
	}
	dir := t.TempDir()
	bound := bombBound()
	corpus := bombs.Corpus(bombs.Small)
	if len(corpus) != len(bombWant) {
		t.Errorf("%d captures in the corpus, %d expected", len(corpus), len(bombWant))
	}
	for _, c := range corpus {
		want, ok := bombWant[c.Name]
		if !ok {
			t.Errorf("no expectation for %s", c.Name)
			continue
		}
		path := filepath.Join(dir, c.Name+".pcap")
		if err := os.WriteFile(path, c.Pcap(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			var trees [2][32]byte
			for _, m := range []struct {
				name    string
				args    []string
				env     []string
				headers bool // batch headers only
				tail    string
			}{
				{"read", []string{"read"}, nil, true, "after[0@0+3 gzip"},
				{"versions", []string{"versions"}, nil, true, ""},
				{"read-V", []string{"read", "-V"}, []string{"GOMAXPROCS=4"}, false, `Value: "still decoded"`},
				{"read-V-1", []string{"read", "-V"}, []string{"GOMAXPROCS=1"}, false, `Value: "still decoded"`},
				{"read-x", []string{"read", "-x"}, nil, false, `"still decoded"`},
				{"read-json", []string{"read", "--json"}, nil, false, `"value":"still decoded"`},
				{"stats", []string{"stats", "--all"}, nil, false, "after"}, // --all: the default shows the 10 partitions with the most bytes
			} {
				r := runKwire(t, m.env, append(append(m.args, bombFlags...), path)...)
				code, stderr := want.code, want.stderr
				if m.headers {
					code, stderr = want.headers, ""
					if code != 0 {
						stderr = "that failed to decode"
					}
				}
				if r.code != code {
					t.Errorf("%s: exit status %d, want %d; stderr:\n%s", m.name, r.code, code, r.stderr)
				}
				if stderr == "" && r.stderr != "" && !strings.Contains(r.stderr, "packets") {
					t.Errorf("%s: stderr %q", m.name, r.stderr)
				}
				if stderr != "" && !strings.Contains(r.stderr, stderr) {
					t.Errorf("%s: stderr %q, want it to say %q", m.name, r.stderr, stderr)
				}
				if strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "panic") {
					t.Errorf("%s: %s", m.name, r.stderr)
				}
				if m.tail != "" && !strings.Contains(r.stdout, m.tail) {
					t.Errorf("%s: the exchange after the bombs is not shown (no %q)", m.name, m.tail)
				}
				if r.maxRSS > bound {
					t.Errorf("%s: peak RSS %d MiB, over the %d MiB the flags bound it to", m.name, r.maxRSS>>20, bound>>20)
				}
				t.Logf("%-9s exit %d, peak RSS %3d MiB (bound %d MiB)", m.name, r.code, r.maxRSS>>20, bound>>20)
				switch m.name {
				case "read-V":
					trees[0] = sha256.Sum256([]byte(r.stdout))
				case "read-V-1":
					trees[1] = sha256.Sum256([]byte(r.stdout))
				}
			}
			if trees[0] != trees[1] {
				t.Errorf("-V differs with one worker and with four")
			}
		})
	}
}

// BenchmarkBombs reads the largest bombs of the corpus at the issue's
// scale (a 4 GiB zstd and a 4 GiB LZ4 bomb, in a Produce request and a
// Fetch response each; four frames of a 250 MiB gzip record) with the
// default flags, in -V and --json, reports the peak RSS (peak-MiB) and
// fails when it passes the bound the default flags give (README
// "Memory").
func BenchmarkBombs(b *testing.B) {
	dir := b.TempDir()
	bound := flagsBound() // the default flags
	if bound <= 0 {
		b.Fatalf("the default flags give no memory bound (%d)", bound)
	}
	want := map[string]bool{"zstd-4GiB": true, "lz4-4GiB": true, "gzip-250MiB-x4": true}
	for _, c := range bombs.Corpus(bombs.Full) {
		if !want[c.Name] {
			continue
		}
		path := filepath.Join(dir, c.Name+".pcap")
		if err := os.WriteFile(path, c.Pcap(), 0o644); err != nil {
			b.Fatal(err)
		}
		for _, mode := range []string{"-V", "--json"} {
			b.Run(c.Name+"/"+strings.TrimLeft(mode, "-"), func(b *testing.B) {
				var peak int64
				for b.Loop() {
					r := runKwire(b, nil, "read", mode, path)
					if r.code > 1 {
						b.Fatalf("exit status %d: %s", r.code, r.stderr)
					}
					peak = max(peak, r.maxRSS)
				}
				b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
				if peak > bound {
					b.Errorf("peak RSS %d MiB, over the %d MiB bound of the default flags", peak>>20, bound>>20)
				}
			})
		}
	}
}

// TestFlagsBound: flagsBound parses the flags as a command does (the
// defaults give TestDefaultMemoryBound's bound), and bombFlags' bound is
// what docs/performance.md says TestBombCorpus checks against (174 MiB).
func TestFlagsBound(t *testing.T) {
	if got, o := flagsBound(), defaultCaptureFlags(); got != o.memoryBound() || got <= 0 {
		t.Errorf("default flags bound memory to %d MiB, defaultCaptureFlags to %d", got>>20, o.memoryBound()>>20)
	}
	if got := bombBound() >> 20; got != 174 {
		t.Errorf("bombFlags bound memory to %d MiB, docs/performance.md says 174", got)
	}
}
