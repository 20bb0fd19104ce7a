package main

// Profiles for bug reports: every command takes --cpuprofile FILE,
// --memprofile FILE and --trace FILE, and KWIRE_PPROF=DIR in the
// environment does the same without changing the command line (it writes
// DIR/kwire-COMMAND-PID.cpu.pprof and .mem.pprof). The CPU profile
// covers the whole command; the memory profile is Go's allocation
// profile (runtime/pprof "allocs": every sampled allocation since the
// start, and what was still in use after a final collection), written
// when the command ends; --trace is a runtime execution trace
// (go tool trace), for where cores wait. Read them with
// `go tool pprof -top kwire FILE`. A profile that cannot be started is a
// usage error before the command runs; one that cannot be written at the
// end is reported and makes the exit status at least 1. A reader that
// goes away (kwire read ... | head, a pager quit) ends kwire as it ends
// any command, by SIGPIPE, once the profiles are written
// (watchBrokenPipe): they were left empty.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"sync"
)

// profileOptions are the profiling flags every command shares.
type profileOptions struct {
	CPU, Mem, Trace string
}

// profiler holds the profiles being written.
type profiler struct {
	mu         sync.Mutex // stop may come from the broken-pipe watch too
	cpu, trace *os.File
	mem        string
	unwatch    func() // ends watchBrokenPipe's watch
}

// startProfiles starts what opts and KWIRE_PPROF (read through getenv)
// ask for; name is the command's name, used in KWIRE_PPROF's file names.
func startProfiles(opts profileOptions, getenv func(string) string, name string) (*profiler, error) {
	if dir := getenv("KWIRE_PPROF"); dir != "" {
		base := filepath.Join(dir, "kwire-"+name+"-"+strconv.Itoa(os.Getpid()))
		if opts.CPU == "" {
			opts.CPU = base + ".cpu.pprof"
		}
		if opts.Mem == "" {
			opts.Mem = base + ".mem.pprof"
		}
	}
	p := &profiler{mem: opts.Mem}
	if opts.Mem != "" {
		// Fail now rather than after a long run.
		f, err := os.Create(opts.Mem)
		if err != nil {
			return nil, usageErrorf("--memprofile: %v", err)
		}
		f.Close()
	}
	if opts.CPU != "" {
		f, err := os.Create(opts.CPU)
		if err != nil {
			return nil, usageErrorf("--cpuprofile: %v", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, usageErrorf("--cpuprofile: %v", err)
		}
		p.cpu = f
	}
	if opts.Trace != "" {
		f, err := os.Create(opts.Trace)
		if err == nil {
			if err = trace.Start(f); err != nil {
				f.Close()
			}
		}
		if err != nil {
			p.stop()
			return nil, usageErrorf("--trace: %v", err)
		}
		p.trace = f
	}
	if p.cpu != nil || p.trace != nil || p.mem != "" {
		p.unwatch = p.watchBrokenPipe()
	}
	return p, nil
}

// stop ends the profiles and writes the memory profile. It may be called
// on a nil profiler.
func (p *profiler) stop() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unwatch != nil {
		p.unwatch()
		p.unwatch = nil
	}
	return p.stopLocked()
}

// watching reports whether watchBrokenPipe watches for p (profiles are
// being written).
func (p *profiler) watching() bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unwatch != nil
}

// stopLocked ends the profiles with p.mu held; the broken-pipe watch
// calls it as it is (still watching: a write after the watch ended would
// end the process before the profiles are written).
func (p *profiler) stopLocked() error {
	var errs []error
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.Close(); err != nil {
			errs = append(errs, fmt.Errorf("--cpuprofile: %w", err))
		}
		p.cpu = nil
	}
	if p.trace != nil {
		trace.Stop()
		if err := p.trace.Close(); err != nil {
			errs = append(errs, fmt.Errorf("--trace: %w", err))
		}
		p.trace = nil
	}
	if p.mem != "" {
		runtime.GC() // what is in use, as of now
		f, err := os.Create(p.mem)
		if err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("--memprofile: %w", err))
		}
		p.mem = ""
	}
	return errors.Join(errs...)
}
