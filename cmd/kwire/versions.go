package main

import (
	"bufio"
	"context"
	"slices"
	"strings"

	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/render/statsview"
	"github.com/spf13/cobra"
)

type versionsOptions struct {
	capture captureFlags
	files   fileFlags
	JSON    bool
	Against []string
	MaxMem  byteSize // --max-versions-memory
}

func newVersionsCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	o := &versionsOptions{}
	cmd := &cobra.Command{
		Use:   "versions [flags] FILE...",
		Short: "Show the API versions brokers advertised and clients used, and what does not fit",
		Long: `Read pcap or pcapng captures and report, from the ApiVersions exchanges
and the requests in them:

  BROKERS     every ApiVersions response each broker endpoint sent (the
              effective one, the latest without an error, marked *), with
              supported and finalized features (ApiVersions v3+, KIP-584)
  ADVERTISED  the effective ranges, API x broker; * where brokers differ
  CLIENTS     per client ID: software name/version (KIP-511) and the
              versions it used per API
  MATRIX      API x client x broker: versions used, the broker's range,
              ok / outside / unknown (no ApiVersions response captured)
  FLAGS       out-of-range             a version outside the advertised range
              apiversions-downgrade    ApiVersions retried lower after
                                       UNSUPPORTED_VERSION (KIP-511)
              closed-after-unsupported-version
                                       the broker closed the connection,
                                       unanswered, after a request at a
                                       version it does not support: outside
                                       the range it advertised, or defined
                                       by no Kafka release
              mixed-cluster            brokers of one cluster advertising
                                       different ranges (clusters are told
                                       apart by the ClusterId their Metadata
                                       responses name)
              no-usable-version        a broker advertised a range whose
                                       minimum is above its maximum (e.g.
                                       3-2): no version can be used with it
              advertised-but-rejected  a version inside the range answered
                                       UNSUPPORTED_VERSION, and Produce v0-2
                                       on Kafka 4.x brokers (KAFKA-18659)

--against FILE compares with a second capture (before: the FILE arguments;
after: the --against files, e.g. after an upgrade): which APIs' cluster
ranges (what every broker accepts) moved, and which clients of the first
capture would lose a version they use (one some broker before accepted,
when any advertised: refused by every broker before too is no loss). "removed" is said of that
intersection: an API that one broker of a mixed cluster lacks shows as
removed, although the other brokers serve it. The exit status stays
kwire read's (0 when the captures were read whole, whatever was lost);
to fail a CI job on it, use kwire diff BEFORE AFTER, which reports the
same lost versions (lostVersion) and exits 1.

Record batches are read as in kwire read's one-line mode: header and CRC,
not the records (versions are in headers and ApiVersions bodies), so a
batch whose CRC is valid but whose records are malformed is reported by
kwire read -V or kwire stats, not here.

--json prints one JSON document: {"brokers","clients","matrix","flags"};
with --against {"before","after","comparison":{"beforeBrokers",
"afterBrokers","ranges","lost"},"beforeReport","afterReport"}.

--max-versions-memory (16MiB) bounds what the report keeps: brokers'
advertisements (about 6 KiB for 90 API ranges), client IDs and matrix
cells (about 800 bytes for a client with one cell, beside the ID). Past it new ones are not
kept: a last line (and "folded" in --json) counts the ApiVersions
responses and requests left out; what is listed stays exact.

Connections are found as by kwire read: by content on any port (--detect,
on by default) and on the --port ports (default 9092).

Exit status as for kwire read: 0 fully dissected (unknown API keys and
versions are data); 1 the captures could not be fully dissected (a file
cut short, gaps, resyncs, bad or truncated frames, frames that failed to
decode); 2 usage error or a file that is not a capture.`,
		Example: `  kwire versions kafka.pcapng
  kwire versions --port 9092,9093 --json kafka.pcap | jq '.flags'
  kwire versions --against after-upgrade.pcap before-upgrade.pcap`,
		Args: captureArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersions(cmd.Context(), o, s, g.colorEnabled(s), args)
		},
	}
	f := cmd.Flags()
	o.capture.addFlags(f, true, 0)
	o.files.addFlags(f)
	f.BoolVar(&o.JSON, "json", false, "print one JSON document instead of tables")
	f.StringSliceVar(&o.Against, "against", nil, "compare with this `FILE` (a capture taken after a change; repeatable)")
	o.MaxMem = stats.DefaultVersionsMemory
	f.Var(&o.MaxMem, "max-versions-memory",
		"memory for the brokers' advertisements, client IDs and matrix cells the report keeps (each side of --against), e.g. 64MiB (K, M, G: powers of 1024; more than 0); past it new ones are not kept and the report counts the responses and requests left out")
	return cmd
}

func runVersions(ctx context.Context, o *versionsOptions, s *ioStreams, color bool, paths []string) error {
	dopts, err := o.capture.dissectOptions(valuesNotShown)
	if err != nil {
		return err
	}
	// Versions are in headers and ApiVersions bodies: record batches are
	// read by header and CRC only, as in kwire read's one-line mode.
	dopts.Decoder.BatchHeadersOnly = true
	dopts.Decoder.Sparse = true // versions are facts (ApiVersions ranges included)
	if o.MaxMem <= 0 {
		return usageErrorf("--max-versions-memory must be positive")
	}
	bound := o.capture.memoryBound()
	if bound > 0 {
		// Each side's collector keeps up to its budget; twice that
		// counts the maps around what the budget counts.
		bound += 4 * int64(o.MaxMem)
	}
	setMemoryCeiling(bound, s.ErrOut)
	bar := startProgressFor(s, append(slices.Clip(paths), o.Against...))
	cr := &captureReader{opts: dopts, ropts: o.capture.reassemblyOptions(), wrap: bar.wrap}
	if err := o.files.apply(cr); err != nil {
		return err
	}
	before := stats.NewBoundedVersionCollector(int64(o.MaxMem))
	run := cr.read(ctx, paths, before)
	var after *stats.VersionCollector
	if len(o.Against) > 0 {
		after = stats.NewBoundedVersionCollector(int64(o.MaxMem))
		run2 := cr.read(ctx, o.Against, after)
		kafka := min(run.ds.Kafka, run2.ds.Kafka) // note when either side has no Kafka
		readAny := run.readAny && run2.readAny
		run.add(run2)
		run.ds.Kafka, run.readAny = kafka, readAny
	}
	bar.finish()
	if !run.readAny {
		return run.status(s.ErrOut)
	}

	w := bufio.NewWriter(s.Out)
	vo := statsview.Options{Color: color}
	switch {
	case after == nil && o.JSON:
		err = statsview.WriteVersionsJSON(w, before.Report())
	case after == nil:
		err = statsview.WriteVersions(w, before.Report(), vo)
	default:
		br, ar := before.Report(), after.Report()
		cmp := stats.Compare(br, ar)
		bn, an := strings.Join(paths, ", "), strings.Join(o.Against, ", ")
		if o.JSON {
			err = statsview.WriteComparisonJSON(w, &statsview.ComparisonJSON{Before: bn, After: an,
				Comparison: cmp, BeforeRep: br, AfterRep: ar})
		} else {
			err = statsview.WriteComparison(w, bn, an, cmp, vo)
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return dataErrorf("writing output: %w", err)
	}
	return run.status(s.ErrOut)
}
