package main

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/internal/capturetest"
)

// manyConnections writes pcaps/kgo-produce-consume.pcap 1000 times over,
// each copy 50 ms after the last with its clients on addresses of their
// own (capturetest.Multiply): 41,000 connections, up to about 2,500 open
// at once; 143,000 exchanges in 117 MB.
func manyConnections(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("the ×1000 capture takes a while (-short)")
	}
	src, err := os.Open(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	p := filepath.Join(t.TempDir(), "kgo-x1000.pcap")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if _, err := capturetest.Multiply(src, bw, capturetest.MultiplyOptions{Copies: 1000, Gap: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// peakHeap runs fn while sampling the heap in use, and returns its
// highest sample.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	fn()
	close(done)
	wg.Wait()
	return peak.Load()
}

// TestManyConnections: on a capture of 41,000 connections kwire stats
// fits two screens by default, and read --sort time prints the requests
// in capture order with a reorder window that stays within its bound.
func TestManyConnections(t *testing.T) {
	pcap := manyConnections(t)

	out, errOut, code := kwireInProcess(t, "stats", "--port", "19092", pcap)
	if code != 0 {
		t.Fatalf("stats: exit %d: %s", code, errOut)
	}
	lines := strings.Count(out, "\n")
	t.Logf("kwire stats: %d lines", lines)
	// Two screens (120 lines) and the FINDINGS section: at most 10
	// findings of two lines each, the heading and the "N of M" line. 31
	// findings: one per rule and subject (connection churn and metadata
	// storms of 12 clients, 4 produce retries, 2 tiny batches, a fetch
	// retry); the copies' transactional producers share their epochs,
	// which fences none.
	if lines > 120+22 || !strings.Contains(out, "10 of 41000 connections shown: ") ||
		!strings.Contains(out, "10 of 31 findings shown: ") {
		t.Errorf("kwire stats printed %d lines (want at most two screens, 120, and 22 of findings):\n%s", lines, out)
	}

	if !strings.Contains(out, "10 of 41000 connections shown: those with problems, then the busiest (--all and --json show the ") ||
		!strings.Contains(out, " connections folded into these totals, without rows (--max-stats-memory 4MiB): ended, ") {
		t.Errorf("kwire stats does not say that connections were folded:\n%s", out)
	}
	statsFolded(t, pcap)

	var sorted, unsorted string
	var code2 int
	const budget = 8 << 20
	peakSorted := peakHeap(func() {
		sorted, errOut, code2 = kwireInProcess(t, "read", "--sort", "time", "--sort-memory", "8MiB", "--frame-numbers", "--port", "19092", pcap)
	})
	if code2 != 0 || strings.Contains(errOut, "printed after a later one") {
		t.Fatalf("read --sort time: exit %d: %s", code2, errOut)
	}
	peakPlain := peakHeap(func() {
		unsorted, _, _ = kwireInProcess(t, "read", "--frame-numbers", "--port", "19092", pcap)
	})
	t.Logf("peak heap: %d MiB sorted, %d MiB not", peakSorted>>20, peakPlain>>20)
	// The output itself is held by the test (two strings of ~25 MB): the
	// reorder window adds at most its budget and the entries' bookkeeping.
	if peakSorted > peakPlain+uint64(len(sorted))+4*budget {
		t.Errorf("peak heap %d MiB with --sort time, %d MiB without (budget %d MiB)", peakSorted>>20, peakPlain>>20, budget>>20)
	}
	n, outOfOrder := 0, 0
	var prev int64
	sc := bufio.NewScanner(strings.NewReader(sorted))
	for sc.Scan() {
		l := sc.Text()
		req, _, ok := strings.Cut(l, "/")
		f, err := strconv.ParseInt(req, 10, 64)
		if !ok || err != nil || !strings.Contains(l, " → ") {
			continue // the summary
		}
		n++
		if f < prev {
			outOfOrder++
		}
		prev = f
	}
	if n != 143000 || outOfOrder != 0 {
		t.Errorf("--sort time: %d exchange lines (want 143000), %d out of capture order", n, outOfOrder)
	}
	// Without --sort the same lines come in completion order.
	if a, b := sortedLines(sorted), sortedLines(unsorted); !bytes.Equal([]byte(a), []byte(b)) {
		t.Error("--sort time printed other lines than the completion order")
	}
}

// statsFolded: with a budget of 1 MiB kwire stats keeps at most 2,048
// connection rows (512 bytes each; dissect/stats's
// TestConnectionRowsBounded counts what the Collector holds); the rows
// kept are the top of the rows
// without a bound (problems first, then frames), and rows plus folded
// totals are the same totals.
func statsFolded(t *testing.T, pcap string) {
	t.Helper()
	var small, all statsJSON
	var peakSmall, peakAll uint64
	for _, run := range []struct {
		mem  string
		doc  *statsJSON
		peak *uint64
	}{{"1MiB", &small, &peakSmall}, {"1GiB", &all, &peakAll}} {
		var out, errOut string
		var code int
		*run.peak = peakHeap(func() {
			out, errOut, code = kwireInProcess(t, "stats", "--json", "--findings=false", "--max-stats-memory", run.mem, "--port", "19092", pcap)
		})
		if code != 0 {
			t.Fatalf("stats --max-stats-memory %s: exit %d: %s", run.mem, code, errOut)
		}
		if err := json.Unmarshal([]byte(out), run.doc); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("peak heap: %d MiB with --max-stats-memory 1MiB, %d MiB with 1GiB", peakSmall>>20, peakAll>>20)
	if all.Folded != nil || len(all.Connections) != 41000 {
		t.Fatalf("1GiB: %d rows, folded %+v; want all 41000", len(all.Connections), all.Folded)
	}
	f := small.Folded
	if f == nil || len(small.Connections) > 2048 || len(small.Connections)+int(f.Connections) != 41000 {
		t.Fatalf("1MiB: %d rows, folded %+v; want at most 2048 rows, 41000 in all", len(small.Connections), f)
	}
	var rows, full [4]int64
	for _, c := range small.Connections {
		rows = [4]int64{rows[0] + c.RequestFrames, rows[1] + c.ResponseFrames, rows[2] + c.RequestBytes, rows[3] + c.Unanswered}
	}
	for _, c := range all.Connections {
		full = [4]int64{full[0] + c.RequestFrames, full[1] + c.ResponseFrames, full[2] + c.RequestBytes, full[3] + c.Unanswered}
	}
	got := [4]int64{rows[0] + f.RequestFrames, rows[1] + f.ResponseFrames, rows[2] + f.RequestBytes, rows[3] + f.Unanswered}
	if got != full || full[0] != 143000 {
		t.Errorf("rows + folded: %v, every row: %v (want 143000 request frames)", got, full)
	}
	// Kept: the most telling, as stats ranks them (all 1000 copies'
	// connections with an unanswered request rank first).
	want := slices.Clone(all.Connections)
	slices.SortStableFunc(want, func(a, b stats.ConnStats) int { return stats.RankConns(a, b) })
	want = want[:len(small.Connections)]
	slices.SortFunc(want, func(a, b stats.ConnStats) int { return cmp.Compare(a.Index, b.Index) })
	if !slices.EqualFunc(want, small.Connections, func(a, b stats.ConnStats) bool { return a.Index == b.Index }) {
		t.Errorf("the %d rows kept are not the top ones by stats.RankConns", len(small.Connections))
	}
	if f.MaxProblems > 1 || f.Unanswered > 0 && want[len(want)-1].Unanswered == 0 {
		t.Errorf("folded connections with problems (%+v) while a row kept had none", f)
	}
	// The clients count their connections without a set of them.
	var conns int
	for _, cl := range small.Clients {
		conns += cl.Connections
	}
	if conns != 41000 {
		t.Errorf("clients' connections: %d, want 41000", conns)
	}
}

type statsJSON struct {
	Connections []stats.ConnStats   `json:"connections"`
	Folded      *stats.FoldedConns  `json:"foldedConnections"`
	Clients     []stats.ClientStats `json:"clients"`
}

// sortedLines returns the exchange lines of out, sorted, for comparing
// two orders of the same lines.
func sortedLines(out string) string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " → ") {
			ls = append(ls, l)
		}
	}
	slicesSort(ls)
	return strings.Join(ls, "\n")
}

func slicesSort(s []string) { slices.Sort(s) }

// containsLines reports whether every line of lines is a line of out.
func containsLines(out, lines string) bool {
	for _, l := range strings.SplitAfter(lines, "\n") {
		if l != "" && !strings.Contains(out, l) {
			return false
		}
	}
	return true
}

// TestStatsAll: --all shows every connection and every API's latency;
// --rows sets how many rows.
func TestStatsAll(t *testing.T) {
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	def, _, _ := kwireInProcess(t, "stats", "--port", "19092", pcap)
	all, _, _ := kwireInProcess(t, "stats", "--all", "--port", "19092", pcap)
	if !strings.Contains(def, "10 of 41 connections shown: those with problems, then the busiest (--all shows every row, --json lists them all)\n") ||
		!strings.Contains(def, "3 of 21 APIs shown: the slowest (--all shows every one)\n") {
		t.Errorf("default stats:\n%s", def)
	}
	if strings.Contains(all, " shown: ") || strings.Count(all, "closed") < 41 || strings.Count(all, " answered)\n") != 21 {
		t.Errorf("stats --all:\n%s", all)
	}
	// --max-stats-memory: 4 KiB keep 7 rows (8 of 512 bytes, less the
	// addresses'); the rest is folded, in stats and read --stats. The
	// clients' and partitions' rows have as much again: past it, the
	// requests of further client IDs and the batches of further
	// partitions are counted, not listed.
	folded := "7 of 41 connections shown: those with problems, then the busiest (7 rows kept, all shown)\n" +
		"+34 connections folded into these totals, without rows (--max-stats-memory 4KiB): ended, none with a problem\n" +
		"  their totals: 92 request frames, 91 response frames, 12.2KiB in requests/31.8KiB in responses\n"
	small, _, _ := kwireInProcess(t, "stats", "--max-stats-memory", "4KiB", "--port", "19092", pcap)
	read, _, _ := kwireInProcess(t, "read", "--stats", "--max-stats-memory", "4KiB", "--port", "19092", pcap)
	further := "100 requests of further client IDs have no row (--max-stats-memory: clients and partitions past it are counted, not listed)\n" +
		"5 batches in Produce requests and 4 batches in Fetch responses of further partitions have no row (--max-stats-memory)\n"
	if !strings.Contains(small, folded) || !strings.Contains(small, "connections: 41 Kafka") || !strings.Contains(read, folded) ||
		!containsLines(small, further) {
		t.Errorf("--max-stats-memory 4KiB: stats\n%s\nread --stats\n%s", small, read)
	}
	if _, errOut, code := kwireInProcess(t, "stats", "--max-stats-memory", "0", pcap); code != 2 || !strings.Contains(errOut, "--max-stats-memory must be positive") {
		t.Errorf("--max-stats-memory 0: exit %d, %q; want 2 and a usage error", code, errOut)
	}
	rows, _, _ := kwireInProcess(t, "stats", "--rows", "2", "--port", "19092", pcap)
	if !strings.Contains(rows, "2 of 41 connections shown") || !strings.Contains(rows, "2 of 12 clients shown") {
		t.Errorf("--rows 2:\n%s", rows)
	}
}
