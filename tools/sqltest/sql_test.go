// Package sqltest runs docs/sql.md against a real DuckDB: kwire read
// --json of golden captures, loaded and queried with the page's own SQL,
// each answer checked against the same numbers computed in Go from the
// NDJSON. It is a module of its own so that DuckDB's cgo driver stays out
// of kwire's build (kwire builds with CGO_ENABLED=0); without cgo or a C
// compiler the test does not build here and make test says so.
package sqltest

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
)

// captures are golden captures with their broker ports.
var captures = map[string]string{
	"kgo-produce-consume.pcap":    "19092",
	"sarama-produce-consume.pcap": "19093",
	"kcat-produce-consume.pcap":   "19095",
}

// sqlBlocks returns the ```sql blocks of a Markdown file, in order.
func sqlBlocks(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	var cur *strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		switch {
		case cur == nil && strings.TrimSpace(l) == "```sql":
			cur = &strings.Builder{}
		case cur != nil && strings.TrimSpace(l) == "```":
			out = append(out, cur.String())
			cur = nil
		case cur != nil:
			cur.WriteString(l + "\n")
		}
	}
	return out
}

type exchange struct {
	Kind      string
	API       string
	ClientID  *string
	LatencyMs *float64
	Request   *struct {
		Time  string
		Frame int64
	}
	Facts struct {
		Errors []struct {
			Name  string
			Topic *string
		}
		Topics []struct {
			Name       *string
			Partitions []struct {
				Partition int32
				Records   *struct {
					WireBytes int64
					Count     *int64
				}
			}
		}
	}
}

func readNDJSON(t *testing.T, dir string) []exchange {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.ndjson"))
	var out []exchange
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var e exchange
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatal(err)
			}
			switch e.Kind {
			case "paired", "noResponse", "unanswered", "orphan", "sasl":
				out = append(out, e)
			}
		}
		fh.Close()
	}
	return out
}

// quantileCont is DuckDB's quantile_cont: linear interpolation between
// the closest ranks.
func quantileCont(xs []float64, q float64) float64 {
	slices.Sort(xs)
	h := float64(len(xs)-1) * q
	lo := math.Floor(h)
	hi := math.Ceil(h)
	return xs[int(lo)] + (h-lo)*(xs[int(hi)]-xs[int(lo)])
}

func str(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

func TestDocsSQL(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for name := range captures {
		if _, err := os.Stat(filepath.Join(root, "pcaps", name)); err != nil {
			t.Skipf("pcaps/%s is missing", name)
		}
	}
	dir := t.TempDir()
	kwire := filepath.Join(dir, "kwire")
	build := exec.Command("go", "build", "-o", kwire, "./cmd/kwire")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kwire: %v\n%s", err, out)
	}
	// 1. One kwire read --json per capture, in parallel.
	nd := filepath.Join(dir, "ndjson")
	if err := os.Mkdir(nd, 0o755); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(captures))
	for name, port := range captures {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := os.Create(filepath.Join(nd, name+".ndjson"))
			if err != nil {
				errs <- err
				return
			}
			defer out.Close()
			cmd := exec.Command(kwire, "read", "--json", "--port", port, filepath.Join(root, "pcaps", name))
			cmd.Stdout = out
			if err := cmd.Run(); err != nil {
				errs <- fmt.Errorf("%s: %v", name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	exs := readNDJSON(t, nd)

	blocks := sqlBlocks(t, filepath.Join(root, "docs", "sql.md"))
	if len(blocks) != 5 {
		t.Fatalf("docs/sql.md has %d sql blocks, want 5 (load, p99, errors, bytes, slowest)", len(blocks))
	}
	t.Chdir(dir) // the page's paths are relative: ndjson/*.ndjson
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one in-memory database
	if _, err := db.Exec(blocks[0]); err != nil {
		t.Fatalf("load: %v\n%s", err, blocks[0])
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM exchanges").Scan(&n); err != nil || n != len(exs) {
		t.Fatalf("exchanges table: %d rows (%v), want %d", n, err, len(exs))
	}

	query := func(i int) [][]any {
		rows, err := db.Query(blocks[i])
		if err != nil {
			t.Fatalf("block %d: %v\n%s", i, err, blocks[i])
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var out [][]any
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for j := range vals {
				ptrs[j] = &vals[j]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			out = append(out, vals)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	asString := func(v any) string {
		if v == nil {
			return "<null>"
		}
		return fmt.Sprint(v)
	}
	asFloat := func(v any) float64 {
		switch x := v.(type) {
		case float64:
			return x
		case int64:
			return float64(x)
		case int32:
			return float64(x)
		case *big.Int: // DuckDB's HUGEINT (sum of BIGINT)
			f, _ := new(big.Float).SetInt(x).Float64()
			return f
		}
		t.Fatalf("not a number: %T %v", v, v)
		return 0
	}

	// p99 latency per API and client.
	lat := map[string][]float64{}
	for _, e := range exs {
		if e.LatencyMs != nil {
			k := e.API + "|" + str(e.ClientID)
			lat[k] = append(lat[k], *e.LatencyMs)
		}
	}
	rows := query(1)
	if len(rows) != len(lat) {
		t.Errorf("p99: %d rows, want %d", len(rows), len(lat))
	}
	for _, r := range rows {
		k := asString(r[0]) + "|" + asString(r[1])
		xs := lat[k]
		if int(asFloat(r[2])) != len(xs) || len(xs) == 0 || math.Abs(asFloat(r[3])-quantileCont(xs, 0.99)) > 1e-9 {
			t.Errorf("p99 %s: %v, want count %d p99 %v", k, r, len(xs), quantileCont(slices.Clone(xs), 0.99))
		}
	}

	// Errors per topic.
	errCount := map[string]int{}
	for _, e := range exs {
		for _, er := range e.Facts.Errors {
			if er.Topic != nil {
				errCount[*er.Topic+"|"+er.Name]++
			}
		}
	}
	rows = query(2)
	if len(rows) != len(errCount) || len(rows) == 0 {
		t.Errorf("errors per topic: %d rows, want %d", len(rows), len(errCount))
	}
	for _, r := range rows {
		k := asString(r[0]) + "|" + asString(r[1])
		if int(asFloat(r[2])) != errCount[k] {
			t.Errorf("errors %s: %v, want %d", k, r[2], errCount[k])
		}
	}

	// Bytes produced per partition per second.
	type key struct {
		topic string
		part  int32
		sec   int64
	}
	bytes, recs := map[key]int64{}, map[key]int64{}
	for _, e := range exs {
		if e.API != "Produce" || e.Request == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, e.Request.Time)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range e.Facts.Topics {
			for _, p := range tp.Partitions {
				if p.Records == nil {
					continue
				}
				k := key{str(tp.Name), p.Partition, at.Unix()}
				bytes[k] += p.Records.WireBytes
				if p.Records.Count != nil {
					recs[k] += *p.Records.Count
				}
			}
		}
	}
	rows = query(3)
	if len(rows) != len(bytes) || len(rows) == 0 {
		t.Errorf("bytes per partition: %d rows, want %d", len(rows), len(bytes))
	}
	for _, r := range rows {
		sec, ok := r[2].(time.Time)
		if !ok {
			t.Fatalf("second: %T", r[2])
		}
		k := key{asString(r[0]), int32(asFloat(r[1])), sec.Unix()}
		if int64(asFloat(r[3])) != bytes[k] || int64(asFloat(r[4])) != recs[k] {
			t.Errorf("bytes %v: %v bytes %v records, want %d and %d", k, r[3], r[4], bytes[k], recs[k])
		}
	}

	// The slowest exchanges.
	var all []float64
	for _, e := range exs {
		if e.LatencyMs != nil {
			all = append(all, *e.LatencyMs)
		}
	}
	slices.Sort(all)
	slices.Reverse(all)
	rows = query(4)
	if len(rows) != 10 {
		t.Fatalf("slowest: %d rows", len(rows))
	}
	for i, r := range rows {
		if asFloat(r[4]) != all[i] || !strings.HasSuffix(asString(r[0]), ".ndjson") || asFloat(r[1]) < 1 {
			t.Errorf("slowest %d: %v, want latency %v", i, r, all[i])
		}
	}
}
