package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/dissect/profile"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/render/statsview"
	"github.com/spf13/cobra"
)

type diffOptions struct {
	capture captureFlags
	files   fileFlags
	JSON    bool
	Ignore  []string

	LatencyRatio float64
	LatencyMin   float64
	ProfileMem   byteSize // --max-profile-memory
}

func newDiffCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	o := &diffOptions{LatencyRatio: profile.DefaultOptions.LatencyRatio, LatencyMin: profile.DefaultOptions.LatencyMinMs}
	cmd := &cobra.Command{
		Use:   "diff [flags] BEFORE AFTER",
		Short: "What changed between two captures: clients' APIs, versions, request sequences, errors, topics",
		Long: `Compare the Kafka traffic of two captures (BEFORE and AFTER: each a
capture file, several comma-separated, or a snapshot written by kwire read
--normalize --json) and print what changed, per client (by client ID,
with its software, KIP-511) and per broker:

  client      a client ID seen on one side only
  software    its software name/version
  api         an API it used on one side only
  version     an API it used with other versions
  sequence    a connection's request sequence, normalised
  error       a Kafka error it got, per API ("Produce NOT_LEADER_OR_FOLLOWER")
  topic       a topic it named
  config      a config resource or name it asked about or changed
  codec       a compression codec it produced with
  format      a record format (v0, v1, v2: the batch magic) it produced
  acks        a Produce acks setting
  latency     an API's p99 latency, beyond --latency-ratio and --latency-min
              (an API answered at least 10 times on each side: a p99 of
              fewer says little)
  broker      a broker address seen on one side only (its errors too)
  advertised  an API's cluster version range (what every broker accepts)
  lostVersion versions a client used before that the cluster after refuses
              (and some broker before accepted, when any advertised),
              with the impact: "will negotiate down to vN" (the client can
              go on with a lower version), "version removed" (it needs a
              newer client) or "API removed" (kwire versions --against)

What changes from run to run of the same work is left out: ports,
correlation IDs, member and producer IDs, timestamps, sizes, and the
repeat counts of periodic requests (Fetch, Metadata, ListOffsets,
OffsetCommit repeat freely; heartbeats and telemetry, whose timing
decides whether they happen, are left out of sequences). A sequence is
the APIs a connection sent, in order, repeats of the same API as one
("Produce+" when a non-periodic API was sent again at once: a retry or a
second batch). Topics named only by an ID no Metadata of the capture
resolved are left out.

--ignore leaves out what a team accepts as noise: a kind (latency), a
kind and an item pattern (error:*REBALANCE_IN_PROGRESS, topic:tmp-*), or
client:ID-PATTERN for every change of some clients. The text groups the
changes by client: "- " only before, "+ " only after, "~ " changed.

Exit status, as diff(1): 0 no differences, 1 differences, 2 usage error
or a capture that cannot be read. A capture that is not fully dissected
gives a warning and is compared as far as it was read.

--max-profile-memory (64MiB) bounds what each side's profile keeps: a
client seen on one side only, when the other side folded client IDs
past it, and a change of a client whose profile is capped, carry a note
saying the difference may be only what the budget left out.`,
		Example: `  # Before and after a client library upgrade
  kwire diff --port 9092 before.pcap after.pcap

  # In CI: the traffic of this build against the snapshot of the last release
  kwire read --normalize --json golden.pcap > golden.json
  kwire diff --ignore latency golden.json new.pcap

  # A broker upgrade, over the captures of three brokers
  kwire diff b1-old.pcap,b2-old.pcap,b3-old.pcap b1-new.pcap,b2-new.pcap,b3-new.pcap`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return &exitError{code: exitUsage, full: true,
					err: fmt.Errorf("%s: want BEFORE and AFTER (each a capture, comma-separated captures, or a --normalize --json snapshot), got %d argument%s", cmd.CommandPath(), len(args), plural(len(args)))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDiff(cmd.Context(), o, s, g.colorEnabled(s), args[0], args[1])
		},
	}
	f := cmd.Flags()
	o.capture.addFlags(f, true, 0)
	o.files.addFlags(f)
	f.BoolVar(&o.JSON, "json", false, `print one JSON document: {"before","after","equal","changes":[{"kind","client","broker","item","before","after","note"}]}`)
	f.StringSliceVar(&o.Ignore, "ignore", nil, "leave out changes of this `KIND[:ITEM]` (item a glob pattern), or client:ID; repeatable, comma-separated")
	f.Float64Var(&o.LatencyRatio, "latency-ratio", o.LatencyRatio, "report an API's p99 latency when it changed by more than this `FACTOR` (0: never)")
	f.Float64Var(&o.LatencyMin, "latency-min", o.LatencyMin, "... and by more than this many `ms`")
	addProfileMemoryFlag(f, &o.ProfileMem)
	return cmd
}

// side is BEFORE or AFTER: captures, or a snapshot.
type side struct {
	arg   string
	paths []string
}

func splitSide(arg string) side {
	var ps []string
	for _, p := range strings.Split(arg, ",") {
		if p = strings.TrimSpace(p); p != "" {
			ps = append(ps, p)
		}
	}
	return side{arg: arg, paths: ps}
}

// snapshot reads a kwire read --normalize --json document, or returns
// nil when the file is not one (a capture).
func readSnapshot(path string) (*profile.Profile, error) {
	if path == "-" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil // reading it as a capture says why
	}
	defer f.Close()
	br := bufio.NewReader(f)
	head, _ := br.Peek(64)
	t := bytes.TrimLeft(head, " \t\r\n")
	if bytes.HasPrefix(t, []byte("client ")) || bytes.HasPrefix(t, []byte("broker ")) {
		// kwire read --normalize's text (statsview.WriteProfile): what
		// it leaves out (latency, counts) a diff needs; read as a
		// capture it would be "not a pcap or pcapng file (magic ...)".
		return nil, usageErrorf("%s: a kwire read --normalize text snapshot; kwire diff reads the JSON one: write it with kwire read --normalize --json", path)
	}
	if len(t) == 0 || t[0] != '{' {
		return nil, nil
	}
	var p profile.Profile
	dec := json.NewDecoder(br)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, usageErrorf("%s: not a kwire read --normalize --json snapshot: %v", path, err)
	}
	return &p, nil
}

// profileOf reads one side; names is the Names its topic IDs were
// resolved with (nil for a snapshot).
func (o *diffOptions) profileOf(ctx context.Context, sd side, dopts dissect.Options, bar *progressBar) (*profile.Profile, *facts.Names, captureRun, error) {
	if len(sd.paths) == 1 {
		p, err := readSnapshot(sd.paths[0])
		if err != nil || p != nil {
			return p, nil, captureRun{readAny: true, ds: dissect.Summary{Kafka: 1}}, err
		}
	}
	names := cutNames(sd.paths, o.capture.MaxNamesMemory)
	col := profile.NewBoundedCollector(names, int64(o.ProfileMem))
	cr := &captureReader{opts: dopts, ropts: o.capture.reassemblyOptions(), wrap: bar.wrap}
	if err := o.files.apply(cr); err != nil {
		return nil, nil, captureRun{}, err
	}
	run := cr.read(ctx, sd.paths, col)
	return col.Profile(), names, run, nil
}

func runDiff(ctx context.Context, o *diffOptions, s *ioStreams, color bool, beforeArg, afterArg string) error {
	for _, p := range o.Ignore {
		if err := profile.ValidIgnore(p); err != nil {
			return usageErrorf("--ignore %v", err)
		}
	}
	if o.LatencyRatio < 0 || o.LatencyMin < 0 {
		return usageErrorf("--latency-ratio and --latency-min must not be negative")
	}
	if o.ProfileMem <= 0 {
		return usageErrorf("--max-profile-memory must be positive")
	}
	setMemoryCeiling(profileMemoryBound(o.capture.memoryBound(), o.ProfileMem, 2), s.ErrOut)
	dopts, err := o.capture.dissectOptions(valuesNotShown)
	if err != nil {
		return err
	}
	// Record batches are read by header and CRC only: codecs and formats
	// are in their headers.
	dopts.Decoder.BatchHeadersOnly = true
	dopts.Decoder.Sparse = true // profiles are made of facts
	before, after := splitSide(beforeArg), splitSide(afterArg)
	bar := startProgressFor(s, append(append([]string{}, before.paths...), after.paths...))
	bp, bnames, run, err := o.profileOf(ctx, before, dopts, bar)
	if err != nil {
		return err
	}
	ap, anames, run2, err := o.profileOf(ctx, after, dopts, bar)
	if err != nil {
		return err
	}
	bar.finish()
	// A topic one side names and the other knows by its ID alone differs
	// by that only: said before the changes, which may hold such topics.
	warnNamesRefusedFor(s.ErrOut, o.capture.MaxNamesMemory, "a topic one side names and the other does not reads as changed", bnames, anames)
	kafka := min(run.ds.Kafka, run2.ds.Kafka)
	readAll := run.readAny && run2.readAny
	run.add(run2)
	run.ds.Kafka, run.readAny = kafka, readAll
	if !readAll || hasUnreadable(&run) {
		if err := run.status(s.ErrOut); err != nil {
			return err
		}
		return silentExit(exitUsage)
	}
	opts := profile.DefaultOptions
	opts.LatencyRatio, opts.LatencyMinMs, opts.Ignore = o.LatencyRatio, o.LatencyMin, o.Ignore
	changes := profile.Compare(bp, ap, opts)
	w := bufio.NewWriter(s.Out)
	if o.JSON {
		err = statsview.WriteDiffJSON(w, statsview.NewDiffJSON(before.paths, after.paths, changes))
	} else {
		err = statsview.WriteDiff(w, beforeArg, afterArg, changes, statsview.Options{Color: color})
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return dataErrorf("writing output: %w", err)
	}
	// Problems reading the captures are warnings here: the exit status
	// says whether they differ.
	run.status(s.ErrOut)
	if len(changes) > 0 {
		return silentExit(exitData)
	}
	return nil
}

// hasUnreadable reports whether some file could not be read at all (exit
// status 2 of the captures alone).
func hasUnreadable(r *captureRun) bool {
	c := *r
	c.interrupted = false
	var ee *exitError
	return errors.As(c.status(io.Discard), &ee) && ee.code == exitUsage
}
