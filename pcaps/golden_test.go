package pcaps

// Golden outputs of `kwire read` for every capture in this directory and
// every output mode, in the manner of go/printer's golden tests:
//
//	go test ./pcaps/            compare with golden/<capture>.<mode>.golden
//	go test ./pcaps/ -update    rewrite them (and delete stale ones)
//
// A golden file starts with "# " lines: the command, its exit status and
// its standard error; the rest is the command's standard output verbatim.
//
// To add a capture: drop it into this directory, run with -update, read
// the new goldens, and commit them with the capture. Regenerated captures
// (make pcaps) change timestamps, ports and IDs: rerun -update with them.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/kwire/kwire/internal/poison"
)

var update = flag.Bool("update", false, "rewrite the golden files in golden/")

// kwireBin is the kwire binary TestMain builds.
var kwireBin string

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pcaps:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "kwire-golden-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "pcaps:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	kwireBin = filepath.Join(dir, "kwire")
	args := []string{"build", "-o", kwireBin}
	if poison.Released {
		// go test -tags kwirepoison: the kwire under test poisons what it
		// releases too, so that a use after release changes its output.
		args = append(args, "-tags", "kwirepoison")
	}
	build := exec.Command("go", append(args, "./cmd/kwire")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "pcaps: building kwire: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// moduleRoot walks up from the working directory to the go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// mode is one output mode of kwire read.
type mode struct {
	name  string   // in the golden file name
	flags []string // added to kwire read
}

var modes = []mode{
	{"text", nil},
	{"V", []string{"-V"}},
	{"x", []string{"-x"}},
	{"json", []string{"--json"}},
}

// skipGolden lists the capture/mode pairs without a golden file, and why.
var skipGolden = map[string]string{
	"kgo-large-value.x": "the annotated hex dump shows every byte of the 1.5 MB Produce request " +
		"and Fetch response (about 12 MB of text; -x does not honour --max-value)",
}

// omitGolden says whether a capture/mode pair has no golden file, and why:
// skipGolden's pairs, and the annotated hex dumps of the captures with an
// expectation file (operators' situations, tools/capgen/expect.go: about
// 13 MB of dumps whose bytes TestHexDumpBytes still checks against the
// wire; their exchanges are in the text, V and json goldens).
func omitGolden(base string, m mode) (string, bool) {
	if reason, ok := skipGolden[base+"."+m.name]; ok {
		return reason, true
	}
	if _, err := os.Stat(base + ".expect.json"); err == nil && m.name == "x" {
		return "a situation capture (it has " + base + ".expect.json): its hex dump is checked by TestHexDumpBytes, not kept", true
	}
	return "", false
}

// goldenFlags narrows the output of some capture/mode pairs to keep their
// golden files under about 2 MB. The dropped exchanges are dumped in the
// other captures' goldens; TestHexDumpBytes still reads the unfiltered
// dump.
var goldenFlags = map[string][]string{
	// 41 ApiVersions exchanges (794-byte responses) make 1.6 of the 2.4 MB.
	"kgo-produce-consume.x": {"--filter", `api != "ApiVersions"`},
	// 20 connections each: ApiVersions is half the dump.
	"kgo-tls12.x": {"--filter", `api != "ApiVersions"`},
	"kgo-tls13.x": {"--filter", `api != "ApiVersions"`},
}

// captures returns the .pcap files of this directory, sorted.
func captures(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.pcap")
	if err != nil {
		t.Fatal(err)
	}
	ng, _ := filepath.Glob("*.pcapng")
	files = append(files, ng...)
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no *.pcap in the package directory")
	}
	return files
}

// captureInfo is what the independent reader learnt about a capture.
type captureInfo struct {
	conns   []*tcpConn
	packets int
	ports   string // the server ports, comma-separated: kwire's --port
	err     error
}

var (
	infoMu    sync.Mutex
	infoCache = map[string]*captureInfo{}
)

// info reads a capture once with the independent reader.
func info(t *testing.T, capture string) *captureInfo {
	t.Helper()
	infoMu.Lock()
	defer infoMu.Unlock()
	ci := infoCache[capture]
	if ci == nil {
		ci = &captureInfo{}
		ci.conns, ci.packets, ci.err = readConns(capture)
		var ps []string
		for _, p := range serverPorts(ci.conns) {
			ps = append(ps, strconv.Itoa(int(p)))
		}
		ci.ports = strings.Join(ps, ",")
		infoCache[capture] = ci
	}
	if ci.err != nil {
		t.Fatalf("independent reading: %v", ci.err)
	}
	return ci
}

// result is one run of kwire.
type result struct {
	args           []string
	stdout, stderr []byte
	exit           int
}

// readArgs are the arguments of `kwire read` for a capture in a mode. The
// capture's broker ports are given with --port: capgen's ports are not
// 9092, and --detect alone misses unsupported-versions.pcap (its first
// request is ApiVersions v99) and cannot recognise the TLS capture.
func readArgs(t *testing.T, capture string, m mode) []string {
	args := []string{"read", "--color=never", "--port", info(t, capture).ports}
	if kl, ok := KeyLog(capture); ok {
		args = append(args, "--tls-keylog", kl)
	}
	args = append(args, m.flags...)
	return append(args, capture)
}

var (
	runMu    sync.Mutex
	runCache = map[string]*result{}
)

// kwire runs the built binary in the package directory (so that file
// names in the output are relative), once per argument list.
func kwire(t *testing.T, args ...string) *result {
	t.Helper()
	return kwireEnv(t, nil, args...)
}

// kwireEnv runs kwire with variables added to the environment.
func kwireEnv(t *testing.T, env []string, args ...string) *result {
	t.Helper()
	key := strings.Join(env, "\x00") + "\x01" + strings.Join(args, "\x00")
	runMu.Lock()
	r := runCache[key]
	runMu.Unlock()
	if r != nil {
		return r
	}
	cmd := exec.Command(kwireBin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Env = append(os.Environ(), env...)
	err := cmd.Run()
	r = &result{args: args, stdout: out.Bytes(), stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	case err != nil:
		t.Fatalf("kwire %s: %v", strings.Join(args, " "), err)
	}
	runMu.Lock()
	runCache[key] = r
	runMu.Unlock()
	return r
}

// golden renders a result as a golden file's text.
func (r *result) golden() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# kwire %s\n# exit status %d\n", shellJoin(r.args), r.exit)
	for _, l := range strings.SplitAfter(string(r.stderr), "\n") {
		if l != "" {
			b.WriteString("# stderr: " + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	b.Write(r.stdout)
	return b.Bytes()
}

// shellJoin joins arguments as a POSIX shell would need them written.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`*?[]{}()<>|&;#~!") {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// goldenMax bounds a golden file; beyond it the capture/mode belongs in
// skipGolden (or needs --max-value).
const goldenMax = 3 << 20

func TestGolden(t *testing.T) {
	want := map[string]bool{}
	for _, c := range captures(t) {
		base := strings.TrimSuffix(strings.TrimSuffix(c, ".pcapng"), ".pcap")
		for _, m := range modes {
			name := base + "." + m.name
			if reason, ok := omitGolden(base, m); ok {
				t.Run(name, func(t *testing.T) { t.Skip(reason) })
				continue
			}
			file := filepath.Join("golden", name+".golden")
			want[file] = true
			t.Run(name, func(t *testing.T) {
				args := readArgs(t, c, m)
				args = append(args[:len(args)-1], append(goldenFlags[name], c)...)
				got := kwire(t, args...).golden()
				if len(got) > goldenMax {
					t.Fatalf("output of %d bytes is over the %d-byte bound for a golden file", len(got), goldenMax)
				}
				if *update {
					if err := os.MkdirAll("golden", 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				exp, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run go test ./pcaps -update to create it)", err)
				}
				if !bytes.Equal(got, exp) {
					t.Errorf("output differs from %s (go test ./pcaps -update rewrites it):\n%s", file, firstDiff(exp, got))
				}
			})
		}
	}
	// Stale goldens: a capture or mode that no longer exists.
	old, _ := filepath.Glob(filepath.Join("golden", "*.golden"))
	for _, f := range old {
		if want[f] {
			continue
		}
		if *update {
			if err := os.Remove(f); err != nil {
				t.Error(err)
			}
			continue
		}
		t.Errorf("%s belongs to no capture and mode (go test ./pcaps -update deletes it)", f)
	}
}

// TestDeterministic runs kwire a second time on every capture, in another
// time zone and locale, and requires the same bytes on stdout and stderr
// and the same exit status: no map order, no wall clock, no local time, no
// goroutine interleaving in the output.
func TestDeterministic(t *testing.T) {
	for _, c := range captures(t) {
		for _, m := range []mode{{"V", []string{"-V"}}, {"json", []string{"--json"}}} {
			t.Run(strings.TrimSuffix(strings.TrimSuffix(c, ".pcapng"), ".pcap")+"."+m.name, func(t *testing.T) {
				args := readArgs(t, c, m)
				a := kwire(t, args...)
				b := kwireEnv(t, []string{"TZ=Pacific/Chatham", "LC_ALL=de_DE.UTF-8", "LANG=de_DE.UTF-8"}, args...)
				if !bytes.Equal(a.stdout, b.stdout) {
					t.Errorf("stdout differs between two runs:\n%s", firstDiff(a.stdout, b.stdout))
				}
				if !bytes.Equal(a.stderr, b.stderr) || a.exit != b.exit {
					t.Errorf("stderr or exit status differs between two runs: %d %q / %d %q", a.exit, a.stderr, b.exit, b.stderr)
				}
			})
		}
	}
}

// firstDiff describes where two outputs first differ, by line.
func firstDiff(want, got []byte) string {
	wl := strings.Split(string(want), "\n")
	gl := strings.Split(string(got), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g || i >= len(wl) || i >= len(gl) {
			return fmt.Sprintf("line %d (of %d golden, %d now):\n- %s\n+ %s", i+1, len(wl), len(gl), clip(w), clip(g))
		}
	}
	return "identical lines"
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
