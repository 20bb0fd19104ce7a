package main

import (
	"bufio"
	"context"
	"io"
	"runtime"

	"github.com/kwire/kwire/analysis"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/pipeline"
	"github.com/kwire/kwire/render/statsview"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type statsOptions struct {
	capture   captureFlags
	files     fileFlags
	analysis  analysisFlags
	JSON      bool
	JSONInt64 jsonInt64
	Top       int
	Findings  bool
	Rows      int
	All       bool
	StatsMem  byteSize // --max-stats-memory
}

func newStatsCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	o := &statsOptions{}
	cmd := &cobra.Command{
		Use:   "stats [flags] FILE...",
		Short: "Summarise the Kafka traffic in captures: APIs, latency, errors, clients, partitions",
		Long: `Read pcap or pcapng captures (- reads standard input) and summarise their
Kafka traffic:

  APIS         per API key and version: requests, responses, unanswered,
               requests needing no response (acks=0), bytes each way,
               latency min/p50/p90/p99/max from capture timestamps, and
               Kafka error counts by name, per-partition errors included
  CLIENTS      per client ID: software name/version (ApiVersions v3+),
               addresses, connections, APIs and versions used, errors;
               past --max-stats-memory (the clients' and partitions' own
               share, as large) further client IDs are counted in one
               line, as further partitions are under PARTITIONS
  ERRORS       each Kafka error by API and where it was answered: topic
               and partition (or "-": the request, a group, a member...),
               most frequent first; past an eighth of --max-stats-memory
               the places not kept are counted in one line
  PARTITIONS   per topic-partition: record batches, records, wire and
               uncompressed bytes in Produce requests and Fetch responses,
               codecs; topic IDs resolved to names through Metadata
  CONNECTIONS  per TCP connection: endpoints, duration, frames, gaps,
               retransmissions, orphans, unanswered, decode failures;
               past --max-stats-memory (4MiB, 6,000-8,192 rows) the
               connections that ended with the fewest problems, then
               frames, are folded into one line of totals
  LATENCY      per API a histogram (power-of-two bins) and latency over
               time (one character per time bin, its height the bin's
               maximum)
  SLOWEST      with --top N, the N slowest exchanges and their packet
               numbers, for kwire read --frame N: ranked by the time
               beyond the wait the request asked for (BEYOND: LATENCY
               less WAIT ASKED, a Fetch's MaxWaitMs, so a long poll
               answered at its wait comes after a slow Produce), then by
               latency
  FINDINGS     what to look at, one line each in time order, by the rules
               of docs/findings.md (version mismatches, throttling,
               metadata storms, retries, leadership moves, timeouts, slow
               exchanges split between broker and network, batch sizes,
               connection churn, SASL failures, fencing, expired group
               members...), with the packets they rest on; first, after
               the summary lines (--findings=false leaves them out)

The CLIENTS, ERRORS, PARTITIONS, CONNECTIONS and FINDINGS tables show
--rows rows (10): clients with errors, then the busiest; the most
frequent errors; partitions with the most bytes; connections with
problems, then the busiest; findings by severity, then the most frequent
(each with its first 5 packets, "+N" counting the packets not listed);
LATENCY draws the 3 APIs whose slowest answers took longest. A line
under each says how many were left out; --all shows everything, --json
lists it all.

Percentiles are exact up to 4096 answered requests per API version, then
read from log-linear buckets (within 6.25 %, marked "~"). With several
files, each is a capture of its own (packet numbers restart); the numbers
are totals.

--json prints one JSON document: {"first","last","exchanges","orphans",
"saslTokens","skippedConnections","apis":[...],"clients":[...],
"partitions":[...],"connections":[...],"foldedConnections":{...} (when
some were folded),"latency":[...],"slowest":[...] (empty without --top),
"errorPlaces":[...],"errorPlacesFolded","findings":[...],"findingsDropped"},
in kwire's JSON vocabulary (docs/json.md): durations are milliseconds
(keys ending in Ms), times RFC 3339.

Connections are found as by kwire read: by content on any port (--detect,
on by default) and on the --port ports (default 9092).

Exit status as for kwire read: 0 fully dissected (unknown API keys and
versions are data); 1 the captures could not be fully dissected (a file
cut short, gaps, resyncs, bad or truncated frames, frames that failed to
decode: the numbers still cover everything else); 2 usage error or a file
that is not a capture.`,
		Example: `  kwire stats kafka.pcapng
  kwire stats --top 10 --port 9092,9093 kafka.pcap
  kwire stats --json kafka.pcap | jq '.apis[] | select(.api == "Produce") | .latency'`,
		Args: captureArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := jsonInt64Needs(cmd, o.JSON); err != nil {
				return err
			}
			return runStats(cmd.Context(), o, s, g.colorEnabled(s), args)
		},
	}
	f := cmd.Flags()
	o.capture.addFlags(f, true, 0)
	o.analysis.addFlags(f, true)
	o.files.addFlags(f)
	f.BoolVar(&o.JSON, "json", false, "print one JSON document instead of tables")
	addJSONInt64Flag(f, &o.JSONInt64)
	f.IntVar(&o.Top, "top", 0, "list the `N` slowest exchanges with their packet numbers")
	addStatsMemoryFlag(f, &o.StatsMem)
	f.BoolVar(&o.Findings, "findings", true, "add the findings (docs/findings.md)")
	f.IntVar(&o.Rows, "rows", statsview.DefaultRows, "rows of the CLIENTS, ERRORS, PARTITIONS, CONNECTIONS and FINDINGS tables: those with problems or errors first, then the busiest (-1: all, as --all)")
	f.BoolVar(&o.All, "all", false, "every row of every table, and the latency of every API")
	return cmd
}

func runStats(ctx context.Context, o *statsOptions, s *ioStreams, color bool, paths []string) error {
	dopts, err := o.capture.dissectOptions(valuesNotShown)
	if err != nil {
		return err
	}
	dopts.Decoder.Sparse = true // the tables and findings are made of facts
	if o.Rows == 0 || o.Rows < -1 {
		return usageErrorf("--rows must be 1 or more, or -1 for all")
	}
	// One Names for the tables and the findings: an exchange is resolved
	// once, by the first to read it.
	names := cutNames(paths, o.capture.MaxNamesMemory)
	col, err := newStatsCollector(o.Top, o.StatsMem, names)
	if err != nil {
		return err
	}
	var an *analysis.Analyzer
	var sink dissect.Sink = col
	if o.Findings {
		aopts, err := o.analysis.options()
		if err != nil {
			return err
		}
		aopts.Findings = true
		aopts.Names = names
		an = analysis.New(aopts)
		sink = teeSink{col, an}
	}
	// Every record is counted: decode the exchanges on every core, feed
	// them to the collector in order.
	dopts.DeferDecode = true
	ahead := pipeline.NewDecodeAhead(sink, max(runtime.GOMAXPROCS(0), 1), int64(o.capture.MaxDecodeMemory))
	ahead.Recycle = true // the collector and the analysis copy what they keep (as in kwire read --stats)
	bound := statsMemoryBound(o.capture.memoryBound(), o.StatsMem)
	if an != nil {
		bound = o.analysis.memoryBound(bound)
	}
	setMemoryCeiling(bound, s.ErrOut)
	bar := startProgressFor(s, paths)
	cr := &captureReader{opts: dopts, ropts: o.capture.reassemblyOptions(), wrap: bar.wrap, drain: ahead.Sync}
	if err := o.files.apply(cr); err != nil {
		return err
	}
	if len(paths) > 1 && !o.files.Merge {
		cr.onFile = func(path string) {
			ahead.Sync() // the previous file's exchanges are counted to it
			col.SetFile(path)
			if an != nil {
				an.SetFile(path)
			}
		}
	}
	run := cr.read(ctx, paths, ahead)
	ahead.Close()
	bar.finish()
	if !run.readAny {
		return run.status(s.ErrOut)
	}
	w := bufio.NewWriter(s.Out)
	rows := o.Rows
	if o.All {
		rows = -1
	}
	warnNamesRefused(s.ErrOut, o.capture.MaxNamesMemory, names)
	err = writeStatsReport(w, col, an, o.JSON, statsview.Options{Color: color, Rows: rows, Int64Strings: bool(o.JSONInt64)})
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return dataErrorf("writing output: %w", err)
	}
	return run.status(s.ErrOut)
}

// addStatsMemoryFlag adds --max-stats-memory, the budget of the
// collector's per-connection detail (stats.Options.MaxMemory).
func addStatsMemoryFlag(f *pflag.FlagSet, v *byteSize) {
	*v = stats.DefaultMaxMemory
	f.Var(v, "max-stats-memory",
		"memory for the per-connection rows of the statistics and the clients' addresses, e.g. 64MiB (K, M, G: powers of 1024; more than 0), and as much again for the rows of clients and partitions; past it the rows of the connections that ended with the fewest problems and frames are folded into totals, and further client IDs and partitions are counted without rows, which the report says")
}

// statsMemoryBound adds the collector's detail to a memory bound
// (captureFlags.memoryBound; 0: none): twice its budgets (the
// connections' rows and the clients' and partitions' rows, each mem),
// which count the rows, not the runtime's slack around them.
func statsMemoryBound(bound int64, mem byteSize) int64 {
	if bound <= 0 {
		return bound
	}
	return bound + 4*int64(mem)
}

// newStatsCollector validates --top and --max-stats-memory and returns
// an empty Collector that keeps the top slowest exchanges.
func newStatsCollector(top int, mem byteSize, names *facts.Names) (*stats.Collector, error) {
	if top < 0 {
		return nil, usageErrorf("--top must not be negative")
	}
	if mem <= 0 {
		return nil, usageErrorf("--max-stats-memory must be positive")
	}
	return stats.NewCollector(stats.Options{Top: top, MaxMemory: int64(mem), Names: names}), nil
}

// statsReport is col's report so far, with an's findings when an is not
// nil.
func statsReport(col *stats.Collector, an *analysis.Analyzer) *statsview.StatsDoc {
	d := &statsview.StatsDoc{Report: *col.Report()}
	if an != nil {
		f := an.Findings()
		d.Findings, d.FindingsDropped = f.Findings, f.Dropped
	}
	return d
}

// writeStatsReport writes col's report so far, with an's findings when
// an is not nil: the tables of kwire stats, or with asJSON one indented
// JSON document; rows is how many rows the long tables show
// (statsview.Options.Rows).
func writeStatsReport(w io.Writer, col *stats.Collector, an *analysis.Analyzer, asJSON bool, o statsview.Options) error {
	r := statsReport(col, an)
	if asJSON {
		return statsview.WriteStatsJSON(w, r, o)
	}
	return statsview.WriteStats(w, r, o)
}
