package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render/statsview"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// captureFlags are the connection flags stats and versions share with
// read: which connections are Kafka.
type captureFlags struct {
	Ports    []int
	Detect   bool
	MaxFrame int
}

func (o *captureFlags) addFlags(f *pflag.FlagSet) {
	f.IntSliceVar(&o.Ports, "port", []int{int(dissect.DefaultPort)}, "Kafka broker TCP `ports`, comma-separated")
	f.BoolVar(&o.Detect, "detect", false, "also recognise Kafka on other ports by the first bytes of a connection")
	f.IntVar(&o.MaxFrame, "max-frame", 0, "largest frame `bytes` accepted as Kafka (0: the dissector's default)")
}

func (o *captureFlags) dissectOptions() (dissect.Options, error) {
	opts := dissect.Options{Detect: o.Detect, MaxFrame: o.MaxFrame, Ports: make([]uint16, 0, len(o.Ports)),
		Decoder: protocol.Decoder{Records: true}}
	for _, p := range o.Ports {
		if p <= 0 || p > 65535 {
			return opts, usageErrorf("--port %d is not a TCP port", p)
		}
		opts.Ports = append(opts.Ports, uint16(p))
	}
	if o.MaxFrame < 0 {
		return opts, usageErrorf("--max-frame must not be negative")
	}
	if len(opts.Ports) == 0 && !o.Detect {
		return opts, usageErrorf("no --port given: add one or use --detect")
	}
	return opts, nil
}

// captureRun totals what dissecting some files found.
type captureRun struct {
	kafka, conns int
	decodeErrors int64
	fileErrs     []error
}

// dissectFiles feeds every file to sink through a fresh dissector each (as
// kwire read does: frame numbers and connection indexes restart per file);
// before each file, onFile (when not nil) is called with its path.
func dissectFiles(ctx context.Context, paths []string, dopts dissect.Options, sink dissect.Sink, onFile func(string)) captureRun {
	if ctx == nil {
		ctx = context.Background()
	}
	var run captureRun
	for _, path := range paths {
		if onFile != nil {
			onFile(path)
		}
		d := dissect.New(dopts, sink)
		sum, err := reassembly.ReadFiles(ctx, []string{path}, reassembly.Options{}, d)
		d.Finish()
		ds := d.Summary()
		run.kafka += ds.Kafka
		run.conns += sum.Connections
		run.decodeErrors += ds.DecodeErrors
		if err != nil {
			run.fileErrs = append(run.fileErrs, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return run
}

// status reports input problems on errw and returns the exit error: 2 when
// a file could not be read, 1 when one ended early or was corrupt, or a
// frame did not decode; the same rules as kwire read.
func (run *captureRun) status(errw io.Writer) error {
	code := exitOK
	for _, err := range run.fileErrs {
		var fe *reassembly.FileError
		switch {
		case errors.As(err, &fe) && (errors.Is(err, reassembly.ErrTruncated) || errors.Is(err, reassembly.ErrCorrupt)):
			fmt.Fprintf(errw, "kwire: warning: %v (everything before it is counted)\n", err)
			code = max(code, exitData)
		case errors.Is(err, context.Canceled):
			fmt.Fprintf(errw, "kwire: interrupted\n")
			code = max(code, exitData)
		default:
			fmt.Fprintf(errw, "kwire: %v\n", err)
			code = exitUsage
		}
	}
	if run.kafka == 0 && code != exitUsage {
		fmt.Fprintf(errw, "kwire: no Kafka connections found (%d TCP connections; try --detect or --port)\n", run.conns)
	}
	if run.decodeErrors > 0 {
		fmt.Fprintf(errw, "kwire: warning: %d frames could not be fully decoded\n", run.decodeErrors)
		code = max(code, exitData)
	}
	if code != exitOK {
		return silentExit(code)
	}
	return nil
}

type statsOptions struct {
	capture captureFlags
	JSON    bool
	Top     int
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
               addresses, connections, APIs and versions used, errors
  PARTITIONS   per topic-partition: record batches, records, wire and
               uncompressed bytes in Produce requests and Fetch responses,
               codecs; topic IDs resolved to names through Metadata
  CONNECTIONS  per TCP connection: endpoints, duration, frames, gaps,
               retransmissions, orphans, unanswered, decode failures
  LATENCY      per API a histogram (power-of-two bins) and latency over
               time (one character per time bin, its height the bin's
               maximum)
  SLOWEST      with --top N, the N slowest exchanges and their frame
               numbers, for kwire read --frame N

Percentiles are exact up to 4096 answered requests per API version, then
read from log-linear buckets (within 6.25 %, marked "~"). With several
files, each is a capture of its own (frame numbers restart); the numbers
are totals.

--json prints one JSON document: {"first","last","exchanges","orphans",
"sasl_tokens","skipped_connections","apis":[...],"clients":[...],
"partitions":[...],"connections":[...],"latency":[...],"slowest":[...]};
durations are integer nanoseconds (fields ending in _ns).

Exit status as for kwire read: 1 when a capture was cut short or some
frame could not be decoded (the numbers still cover everything else).`,
		Example: `  kwire stats kafka.pcapng
  kwire stats --top 10 --port 9092,9093 kafka.pcap
  kwire stats --json kafka.pcap | jq '.apis[] | select(.name == "Produce") | .latency'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStats(cmd.Context(), o, s, g.colorEnabled(s), args)
		},
	}
	f := cmd.Flags()
	o.capture.addFlags(f)
	f.BoolVar(&o.JSON, "json", false, "print one JSON document instead of tables")
	f.IntVar(&o.Top, "top", 0, "list the `N` slowest exchanges with their frame numbers")
	return cmd
}

func runStats(ctx context.Context, o *statsOptions, s *ioStreams, color bool, paths []string) error {
	dopts, err := o.capture.dissectOptions()
	if err != nil {
		return err
	}
	if o.Top < 0 {
		return usageErrorf("--top must not be negative")
	}
	col := stats.NewCollector(stats.Options{Top: o.Top})
	run := dissectFiles(ctx, paths, dopts, col, func(p string) {
		if len(paths) > 1 {
			col.SetFile(p)
		}
	})
	rep := col.Report()
	w := bufio.NewWriter(s.Out)
	if o.JSON {
		err = statsview.WriteStatsJSON(w, rep)
	} else {
		err = statsview.WriteStats(w, rep, statsview.Options{Color: color})
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return dataErrorf("writing output: %v", err)
	}
	return run.status(s.ErrOut)
}
