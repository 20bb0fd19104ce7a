package main

import (
	"syscall"
	"time"
)

// threadCPU is the CPU time (user+system) the calling OS thread has used:
// what a benchmark costs on a machine whose cores other work shares, where
// wall time mostly measures the waiting (the caller locks its goroutine to
// its thread).
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
