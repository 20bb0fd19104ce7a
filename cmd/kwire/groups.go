package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/kwire/kwire/analysis"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/pipeline"
	"github.com/kwire/kwire/render/statsview"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// analysisFlags are the flags of the commands that build package
// analysis's reports: groups, txns, stats, read --findings.
type analysisFlags struct {
	MaxMemory byteSize      // --max-analysis-memory
	Slow      time.Duration // --slow
}

func (o *analysisFlags) addFlags(f *pflag.FlagSet, slow bool) {
	o.MaxMemory = analysis.DefaultMaxMemory
	f.Var(&o.MaxMemory, "max-analysis-memory",
		"memory for what the group, transaction and finding reports keep, e.g. 256MiB (K, M, G: powers of 1024); past it the oldest timeline events, generations and transactions, then members that left, are dropped, and the reports count them; a new member still in its group that does not fit (nor in 1MiB) is not followed, and counted")
	if slow {
		f.DurationVar(&o.Slow, "slow", analysis.DefaultSlow,
			"latency from which an exchange is slow and split between broker and network (findings slow-broker, slow-network, head-of-line)")
	}
}

// memoryBound adds what the reports may keep to the memory bound of the
// capture flags (captureFlags.memoryBound; 0: none): twice the budget,
// which counts the reports' content, not the maps and slices around it.
func (o *analysisFlags) memoryBound(bound int64) int64 {
	if bound <= 0 {
		return bound
	}
	return bound + 2*int64(o.MaxMemory)
}

func (o *analysisFlags) options() (analysis.Options, error) {
	if o.MaxMemory <= 0 {
		return analysis.Options{}, usageErrorf("--max-analysis-memory must be positive")
	}
	if o.Slow < 0 {
		return analysis.Options{}, usageErrorf("--slow must not be negative")
	}
	return analysis.Options{MaxMemory: int64(o.MaxMemory), Slow: o.Slow}, nil
}

// teeSink passes exchanges and events to every sink in turn.
type teeSink []dissect.Sink

func (t teeSink) Exchange(x *dissect.Exchange) {
	for _, s := range t {
		s.Exchange(x)
	}
}

func (t teeSink) Event(e *dissect.Event) {
	for _, s := range t {
		s.Event(e)
	}
}

// analyze reads the captures into an Analyzer: exchanges decoded on every
// core (record batch headers only unless records), fed in emit order.
// Several files are each a capture of its own, unless files says
// --merge.
func analyze(ctx context.Context, s *ioStreams, capture *captureFlags, files *fileFlags, af *analysisFlags, aopts analysis.Options, records bool, paths []string) (*analysis.Analyzer, captureRun, error) {
	dopts, err := capture.dissectOptions(valuesNotShown)
	if err != nil {
		return nil, captureRun{}, err
	}
	dopts.Decoder.BatchHeadersOnly = !records
	dopts.Decoder.Sparse = true // the analysis reads facts
	cr := &captureReader{opts: dopts, ropts: capture.reassemblyOptions()}
	if err := files.apply(cr); err != nil {
		return nil, captureRun{}, err
	}
	an := analysis.New(aopts)
	cr.opts.DeferDecode = true
	ahead := pipeline.NewDecodeAhead(an, max(runtime.GOMAXPROCS(0), 1), int64(capture.MaxDecodeMemory))
	ahead.Recycle = true // the analysis keeps what the facts hold, not the exchange
	setMemoryCeiling(af.memoryBound(capture.memoryBound()), s.ErrOut)
	bar := startProgressFor(s, paths)
	cr.wrap, cr.drain = bar.wrap, ahead.Sync
	if len(paths) > 1 && !files.Merge {
		cr.onFile = func(path string) {
			ahead.Sync()
			an.SetFile(path)
		}
	}
	run := cr.read(ctx, paths, ahead)
	ahead.Close()
	bar.finish()
	return an, run, nil
}

type groupsOptions struct {
	capture   captureFlags
	files     fileFlags
	analysis  analysisFlags
	JSON      bool
	JSONInt64 jsonInt64
	Groups    []string
	Timeline  bool
}

func newGroupsCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	o := &groupsOptions{}
	cmd := &cobra.Command{
		Use:   "groups [flags] FILE...",
		Short: "Show consumer groups: members, generations and assignments, rebalances and their causes, commits",
		Long: `Read pcap or pcapng captures and follow every consumer group in them: classic
groups (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), KIP-848 consumer groups
(ConsumerGroupHeartbeat), and share and streams groups as far as their
heartbeats show; an admin's ConsumerGroupDescribe (share, streams: their
describes) adds the members it lists, with their member epochs and
assignments where newer than their heartbeats said. Per group:

  MEMBERS       each member under the name every table gives it (MEMBER:
                its client ID, #2, #3 for further members with the same
                one; without one, its member ID), its member ID, group
                instance ID (static members, KIP-345), address (CLIENT:
                its connection to the coordinator), when it joined and
                how it went
                (left, with its KIP-800 reason; expired: removed without
                leaving after its session timeout; gone: removed before
                its session could time out, by a leave or an admin's
                removal the capture does not hold; replaced by a static
                successor; fenced), session timeout, heartbeats and the
                longest gap between its signs of life (the last one up to
                its expiry, leave or replacement, or to the end of the
                capture), late (half the session timeout or more; KIP-848:
                twice the heartbeat interval) and missed (the session
                timeout or more, or the silence that ended in its expiry)
                heartbeats: a gap counts once, as missed or as late, so a
                member that expired may show LATE 0, MISSED 1
  GENERATIONS   each generation (KIP-848: member epoch): when it began, how
                long the rebalance took (first JoinGroup to last SyncGroup
                response), what started it (join, leave, timeout,
                static-rejoin, rejoin, unknown) and who, the leader, and
                every member's assignment (its SyncGroup response, else the
                leader's plan; KIP-848: its heartbeat responses); what moved
  SWIM LANES    a row per member, a column per generation: its partitions
                (4' after 4: the same generation or epoch again, a static
                member's rejoin in its predecessor's place, KIP-345)
  COMMITS       per partition the last committed offset, generation
                (GEN; KIP-848: the member epoch, EPOCH), member,
                commits, stale ones (from a generation the group had
                left behind, or refused as such), errors, and lag where
                a Fetch response gave the high watermark
  TIMELINE      one line per event with its packet number (--timeline=false
                leaves it out)

The heading counts distinct generations (member epochs; a static member's
rejoin in its predecessor's place, KIP-345, is counted apart), rebalances
and their time, and members: totals of the whole capture, even when
--max-analysis-memory drops the detail.

Several files are each a capture of its own (as stats and read take
them): a group is reported per file, its heading naming the file whose
packet numbers it gives, and a note on stderr names a group seen in
several files. The files of a ring buffer (tcpdump -C/-G) are pieces of
one capture: --merge reads them as one, by packet time, so that
rebalances and members spanning files are followed whole.

--json prints one JSON document: {"groups":[...],"maxMemoryBytes"}, in kwire's
JSON vocabulary (docs/json.md). Memory is bounded by --max-analysis-memory:
past it the oldest events go first; the report counts what it dropped.

Exit status as for kwire read.`,
		Example: `  kwire groups capture.pcap
  kwire groups --merge ring_*.pcap
  kwire groups --group orders-consumers --timeline=false capture.pcapng
  kwire groups --json capture.pcap | jq '.groups[].generations[] | {generationIdOrMemberEpoch, cause}'`,
		Args: captureArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := jsonInt64Needs(cmd, o.JSON); err != nil {
				return err
			}
			return runGroups(cmd.Context(), o, s, g.colorEnabled(s), args)
		},
	}
	f := cmd.Flags()
	o.capture.addFlags(f, true, 0)
	o.files.addFlags(f)
	o.analysis.addFlags(f, false)
	f.BoolVar(&o.JSON, "json", false, "print one JSON document instead of text")
	addJSONInt64Flag(f, &o.JSONInt64)
	f.StringSliceVar(&o.Groups, "group", nil, "only these `groups` (IDs, comma-separated or repeated)")
	f.BoolVar(&o.Timeline, "timeline", true, "print each group's timeline, one line per event")
	return cmd
}

func runGroups(ctx context.Context, o *groupsOptions, s *ioStreams, color bool, paths []string) error {
	aopts, err := o.analysis.options()
	if err != nil {
		return err
	}
	aopts.Groups = true
	aopts.Names = cutNames(paths, o.capture.MaxNamesMemory)
	an, run, err := analyze(ctx, s, &o.capture, &o.files, &o.analysis, aopts, false, paths)
	if err != nil {
		return err
	}
	if !run.readAny {
		return run.status(s.ErrOut)
	}
	warnNamesRefused(s.ErrOut, o.capture.MaxNamesMemory, aopts.Names)
	// The reports are built and written a group at a time: a report of
	// 100,000 members is not held whole, nor its text.
	r := an.GroupsFrame()
	ids := an.GroupIDs()
	var missing string
	var keep func(string) bool
	if len(o.Groups) > 0 {
		missing = notInCapture("--group", "group", o.Groups, ids)
		keep = func(id string) bool { return slices.Contains(o.Groups, id) }
		ids = slices.DeleteFunc(ids, func(id string) bool { return !keep(id) })
	}
	inSeveralFiles(s, "group", ids)
	groups := an.GroupReports(keep)
	return writeAnalysis(s, &run, missing, len(ids) > 0, o.JSON,
		func(w io.Writer) error {
			return statsview.WriteGroupsJSONSeq(w, r, groups, statsview.Options{Int64Strings: bool(o.JSONInt64)})
		},
		func(w io.Writer) error {
			return statsview.WriteGroupsSeq(w, r, groups, statsview.GroupsOptions{Options: statsview.Options{Color: color}, Timeline: o.Timeline})
		})
}

// writeAnalysis writes a report of kwire groups or txns (asJSON: its
// JSON document, else its text) and returns the run's status. missing
// names the IDs asked for that the capture does not have, found says
// whether the report holds any: in text, missing stands in place of an
// empty report (which would say the capture has none); otherwise it is a
// warning on standard error.
func writeAnalysis(s *ioStreams, run *captureRun, missing string, found, asJSON bool, writeJSON, writeText func(io.Writer) error) error {
	w := bufio.NewWriter(s.Out)
	var err error
	switch {
	case missing != "" && !found && !asJSON:
		_, err = fmt.Fprintln(w, missing)
	case asJSON:
		err = writeJSON(w)
	default:
		err = writeText(w)
	}
	if missing != "" && (found || asJSON) {
		fmt.Fprintf(s.ErrOut, "kwire: warning: %s\n", missing)
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return dataErrorf("writing output: %w", err)
	}
	return run.status(s.ErrOut)
}

type txnsOptions struct {
	capture   captureFlags
	files     fileFlags
	analysis  analysisFlags
	JSON      bool
	JSONInt64 jsonInt64
	IDs       []string
}

func newTxnsCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	o := &txnsOptions{}
	cmd := &cobra.Command{
		Use:   "txns [flags] FILE...",
		Short: "Show transactional and idempotent producers: epochs, transactions, fencing, sequences",
		Long: `Read pcap or pcapng captures and follow every transactional ID and idempotent
producer in them:

  INIT          each InitProducerId: client, producer ID, and every epoch it
                had (* bumped by EndTxn v5, KIP-890's transactions v2), a
                KIP-360 bump it asked for, and who fenced it (another
                client's InitProducerId of the same transactional ID with a
                newer epoch); one that asked to keep the transaction its
                predecessor prepared (InitProducerId v6 KeepPreparedTxn,
                KIP-939) completes that transaction
  transactions  each transaction: start (its first AddPartitionsToTxn,
                AddOffsetsToTxn or transactional Produce), duration to its
                EndTxn response, epoch, outcome (commit, abort, fenced,
                failed, unanswered, open), the records written per
                partition with their sequence numbers, the partitions and
                groups added, and the errors of EndTxn and Produce
  sequences     batches out of line: a base sequence sent again (a
                retry), a duplicate, a gap, OUT_OF_ORDER_SEQUENCE_NUMBER
  described     what an admin's DescribeProducers (KIP-664) said of the
                producer on a partition: its epoch, last sequence and
                where its open transaction began (a producer ID seen only
                there is a producer of its own)
  CONSUMERS     what each client's Fetch responses said of transactions:
                isolation level, the fetches counted (every read_committed
                one; a read_uncommitted one only when it carried
                transactional batches or markers), transactional batches,
                COMMIT and ABORT markers fetched, and the aborted
                transactions a read_committed fetch was told to skip, by
                producer

Each producer's heading gives its time span, its instances (its
InitProducerId exchanges, one INIT row each: a producer that started,
restarted or took over; "instances" in --json) and its transactions.

Several files are each a capture of its own (as stats and read take
them): a transactional ID or consumer is reported per file, naming the
file whose packet numbers it gives, and a note on stderr names a
transactional ID seen in several files. The files of a ring buffer
(tcpdump -C/-G) are pieces of one capture: --merge reads them as one.

--json prints one JSON document: {"producers":[...],"consumers":[...],
"dropped","maxMemoryBytes"}, in kwire's JSON vocabulary (docs/json.md).
Producer IDs are 64-bit: for jq before 1.7 or JavaScript, which round
numbers beyond 2^53, add --json-int64 string.

Exit status as for kwire read.`,
		Example: `  kwire txns capture.pcap
  kwire txns --merge ring_*.pcap
  kwire txns --transactional-id payments-tx capture.pcap
  kwire txns --json --json-int64 string capture.pcap | jq '.producers[].transactions[] | select(.outcome != "commit")'`,
		Args: captureArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := jsonInt64Needs(cmd, o.JSON); err != nil {
				return err
			}
			return runTxns(cmd.Context(), o, s, g.colorEnabled(s), args)
		},
	}
	f := cmd.Flags()
	o.capture.addFlags(f, true, 0)
	o.files.addFlags(f)
	o.analysis.addFlags(f, false)
	f.BoolVar(&o.JSON, "json", false, "print one JSON document instead of text")
	addJSONInt64Flag(f, &o.JSONInt64)
	f.StringSliceVar(&o.IDs, "transactional-id", nil, "only these transactional `IDs` (comma-separated or repeated)")
	return cmd
}

func runTxns(ctx context.Context, o *txnsOptions, s *ioStreams, color bool, paths []string) error {
	aopts, err := o.analysis.options()
	if err != nil {
		return err
	}
	aopts.Transactions = true
	aopts.Names = cutNames(paths, o.capture.MaxNamesMemory)
	// Control records (the transaction markers) are inside the batches:
	// records are decoded.
	an, run, err := analyze(ctx, s, &o.capture, &o.files, &o.analysis, aopts, true, paths)
	if err != nil {
		return err
	}
	if !run.readAny {
		return run.status(s.ErrOut)
	}
	warnNamesRefused(s.ErrOut, o.capture.MaxNamesMemory, aopts.Names)
	r := an.Transactions()
	var missing string
	if len(o.IDs) > 0 {
		var have []string
		for _, p := range r.Producers {
			if p.TransactionalID != nil && !slices.Contains(have, *p.TransactionalID) {
				have = append(have, *p.TransactionalID)
			}
		}
		missing = notInCapture("--transactional-id", "transactional ID", o.IDs, have)
		r.Producers = slices.DeleteFunc(r.Producers, func(p analysis.ProducerReport) bool {
			return p.TransactionalID == nil || !slices.Contains(o.IDs, *p.TransactionalID)
		})
	}
	var ids []string
	for _, p := range r.Producers {
		if p.TransactionalID != nil {
			ids = append(ids, *p.TransactionalID)
		}
	}
	inSeveralFiles(s, "transactional ID", ids)
	return writeAnalysis(s, &run, missing, len(r.Producers) > 0, o.JSON,
		func(w io.Writer) error {
			return statsview.WriteTxnsJSON(w, r, statsview.Options{Int64Strings: bool(o.JSONInt64)})
		},
		func(w io.Writer) error { return statsview.WriteTxns(w, r, statsview.Options{Color: color}) })
}

// inSeveralFiles notes on standard error the IDs (of what: "group")
// that more than one report has: read without --merge, each file is a
// capture of its own, and an ID in several files is reported once per
// file, which is right for captures of different brokers and wrong for
// the pieces of one capture (a ring buffer), which --merge reads as one.
func inSeveralFiles(s *ioStreams, what string, ids []string) {
	n := map[string]int{}
	var several []string
	for _, id := range ids {
		n[id]++
		if n[id] == 2 {
			several = append(several, id)
		}
	}
	var subject string
	switch {
	case len(several) == 0:
		return
	case len(several) == 1:
		subject = fmt.Sprintf("%s %s is in %d files", what, several[0], n[several[0]])
	case len(several) > maxNamesListed:
		subject = fmt.Sprintf("%d %ss (%s, +%d more) are each in several files", len(several), what,
			strings.Join(several[:maxNamesListed], ", "), len(several)-maxNamesListed)
	default:
		subject = fmt.Sprintf("%ss %s are each in several files", what, strings.Join(several, ", "))
	}
	fmt.Fprintf(s.ErrOut, "kwire: note: %s, each file read as a capture of its own (its own connections and packet numbers); if they are pieces of one capture (tcpdump -C/-G), --merge reads them as one\n", subject)
}

// maxNamesListed bounds the IDs notInCapture lists.
const maxNamesListed = 20

// notInCapture says which of the IDs asked for with flag are not among
// those the capture has (what names them: "group"), and lists those it
// has, sorted; "" when all are there.
func notInCapture(flag, what string, asked, have []string) string {
	var miss []string
	for _, a := range asked {
		if !slices.Contains(have, a) && !slices.Contains(miss, a) {
			miss = append(miss, a)
		}
	}
	if len(miss) == 0 {
		return ""
	}
	msg := fmt.Sprintf("%s %s: the capture has no such %s", flag, strings.Join(miss, ","), what)
	if len(miss) > 1 {
		msg += "s"
	}
	have = slices.Sorted(slices.Values(have))
	switch {
	case len(have) == 0:
		return msg + fmt.Sprintf(" (it has no %ss)", what)
	case len(have) > maxNamesListed:
		return msg + fmt.Sprintf("; its %d %ss: %s, +%d more", len(have), what, strings.Join(have[:maxNamesListed], ", "), len(have)-maxNamesListed)
	case len(have) == 1:
		return msg + fmt.Sprintf("; its one %s: %s", what, have[0])
	}
	return msg + fmt.Sprintf("; its %d %ss: %s", len(have), what, strings.Join(have, ", "))
}
