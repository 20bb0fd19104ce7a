package main

import (
	"bufio"
	"context"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/dissect/profile"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/render/statsview"
	"github.com/spf13/pflag"
)

// addProfileMemoryFlag adds --max-profile-memory, the budget of the
// profile's clients and brokers (profile.NewBoundedCollector).
func addProfileMemoryFlag(f *pflag.FlagSet, v *byteSize) {
	*v = profile.DefaultMaxMemory
	f.Var(v, "max-profile-memory",
		"with --normalize (and in kwire diff, each side), memory for the clients and brokers of the profile, e.g. 256MiB (K, M, G: powers of 1024; more than 0); past it new client IDs and brokers are not kept and the profile counts their requests, connections and exchanges, and a client kept that adds more is marked capped")
}

// profileMemoryBound adds n profiles' budgets to a memory bound
// (captureFlags.memoryBound; 0: none): twice each, which counts the
// entries, not the maps around them.
func profileMemoryBound(bound int64, mem byteSize, n int) int64 {
	if bound <= 0 {
		return bound
	}
	return bound + 2*int64(n)*int64(mem)
}

// runNormalize is kwire read --normalize: the captures' profile (package
// profile) as text, or with --json the snapshot kwire diff reads. The
// filters choose the exchanges it is made of.
func runNormalize(ctx context.Context, o *readOptions, s *ioStreams, color bool, fl *exchangeFilter, paths []string) error {
	if o.Tree || o.HexDump || o.Stats || o.Findings || o.Write != "" || o.Count > 0 {
		return usageErrorf("--normalize prints a profile: -V, -x, --stats, --findings, -w and -c do not apply")
	}
	dopts, err := o.capture.dissectOptions(valuesNotShown)
	if err != nil {
		return err
	}
	dopts.Decoder.BatchHeadersOnly = !fl.bodies
	dopts.Decoder.Sparse = !fl.bodies // a profile is made of facts
	pf, err := o.files.packetFilter(o.start)
	if err != nil {
		return err
	}
	if o.ProfileMem <= 0 {
		return usageErrorf("--max-profile-memory must be positive")
	}
	setMemoryCeiling(profileMemoryBound(o.capture.memoryBound(), o.ProfileMem, 1), s.ErrOut)
	names := cutNames(paths, o.capture.MaxNamesMemory) // the filter's and the profile's: an exchange is resolved once
	col := profile.NewBoundedCollector(names, int64(o.ProfileMem))
	var sink dissect.Sink = col
	if fl.active() {
		sink = &filteredSink{next: col, fl: fl, names: names}
	}
	bar := startProgressFor(s, paths)
	cr := &captureReader{opts: dopts, ropts: o.capture.reassemblyOptions(), wrap: bar.wrap, merge: o.files.Merge, start: o.start}
	cr.ropts.PacketFilter = pf
	run := cr.read(ctx, paths, sink)
	bar.finish()
	if !run.readAny {
		return run.status(s.ErrOut)
	}
	warnNamesRefusedFor(s.ErrOut, o.capture.MaxNamesMemory, "the snapshot holds those IDs, which kwire diff compares as topics other than their names", names)
	w := bufio.NewWriter(s.Out)
	p := col.Profile()
	if o.JSON {
		err = statsview.WriteProfileJSON(w, p)
	} else {
		err = statsview.WriteProfile(w, p, statsview.Options{Color: color})
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		return dataErrorf("writing output: %w", err)
	}
	return run.status(s.ErrOut)
}

// filteredSink passes on the exchanges a filter lets through, and every
// event.
type filteredSink struct {
	next  dissect.Sink
	fl    *exchangeFilter
	names *facts.Names
}

func (f *filteredSink) Exchange(ex *dissect.Exchange) {
	f.names.Resolve(ex.Facts())
	if f.fl.match(ex, fieldsOf(ex, f.names, f.fl.program != nil, f.fl.bodies)) {
		f.next.Exchange(ex)
	}
}

func (f *filteredSink) Event(ev *dissect.Event) { f.next.Event(ev) }
