//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// exitBrokenPipe is the exit status of a process a SIGPIPE ended, as a
// shell reports it (128 + 13).
const exitBrokenPipe = 128 + int(syscall.SIGPIPE)

// watchBrokenPipe makes a write to a closed pipe (kwire read -V x.pcap |
// head) end kwire only after the profiles are written. Without it the Go
// runtime ends the process at once on a write to a broken standard
// output or error, and the CPU and memory profiles were left empty. With
// it the write fails (EPIPE) and the SIGPIPE comes here: the profiles
// are stopped and written, and kwire exits with the status a SIGPIPE
// gives, saying nothing, as it does unprofiled. It returns the function
// that ends the watch (profiler.stop calls it).
func (p *profiler) watchBrokenPipe() func() {
	ch := make(chan os.Signal, 1)
	done := make(chan struct{})
	signal.Notify(ch, syscall.SIGPIPE)
	go func() {
		select {
		case <-ch:
		case <-done:
			return
		}
		// Still watching: the command goes on writing (each write
		// fails) while the profiles are written, and a SIGPIPE not
		// watched for would end the process there.
		p.mu.Lock()
		if err := p.stopLocked(); err != nil {
			fmt.Fprintf(os.Stderr, "kwire: %v\n", err)
		}
		os.Exit(exitBrokenPipe)
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}

// brokenPipe reports whether err is a write to a closed pipe (EPIPE).
func brokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }
