package main

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// ioStreams is the I/O a command uses. Commands never touch os.Stdin,
// os.Stdout or os.Stderr directly, so tests can inject buffers.
type ioStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Progress is where the progress bar is drawn: ErrOut as it was
	// before useTermSafe (nil: ErrOut).
	Progress io.Writer

	// InTTY, OutTTY and ErrTTY report whether In, Out and ErrOut are
	// terminals.
	InTTY, OutTTY, ErrTTY bool
	// Getenv reads the environment (NO_COLOR, TERM).
	Getenv func(string) string
}

// systemIO returns the process's standard streams with terminal detection.
func systemIO() *ioStreams {
	return &ioStreams{
		In:     os.Stdin,
		Out:    os.Stdout,
		ErrOut: os.Stderr,
		InTTY:  isTerminal(os.Stdin),
		OutTTY: isTerminal(os.Stdout),
		ErrTTY: isTerminal(os.Stderr),
		Getenv: os.Getenv,
	}
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}
