package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/spf13/pflag"
)

// This file is what read, stats and versions share: which connections are
// Kafka (captureFlags), feeding capture files through reassembly and a
// dissector (readCaptures), and turning what went wrong into messages and
// an exit status (captureRun.status).

// captureFlags are the connection flags of every command that reads
// captures.
type captureFlags struct {
	Ports    []int
	Detect   bool
	MaxFrame int
}

func (o *captureFlags) addFlags(f *pflag.FlagSet) {
	f.IntSliceVar(&o.Ports, "port", []int{dissect.DefaultPort}, "Kafka broker TCP `ports`, comma-separated")
	f.BoolVar(&o.Detect, "detect", false, "also recognise Kafka on other ports by the first bytes of a connection")
	f.IntVar(&o.MaxFrame, "max-frame", 0, fmt.Sprintf(
		"largest frame accepted as Kafka, in `bytes` (0: %d, the broker's default socket.request.max.bytes)", dissect.DefaultMaxFrame))
}

// dissectOptions validates the flags. Frames are decoded with record
// batches; secrets stay redacted unless showSecrets.
func (o *captureFlags) dissectOptions(showSecrets bool) (dissect.Options, error) {
	opts := dissect.Options{
		Ports:    make([]uint16, 0, len(o.Ports)),
		Detect:   o.Detect,
		MaxFrame: o.MaxFrame,
		Decoder:  protocol.Decoder{Records: true, ShowSecrets: showSecrets},
	}
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

// captureRun totals what reading some capture files found.
type captureRun struct {
	packets      int64
	conns        int   // TCP connections
	kafka        int   // of them Kafka
	decodeErrors int64 // frames that did not decode completely
	readAny      bool  // some file was a capture
	fileErrs     []error
	interrupted  bool
}

// add merges another run's totals (kwire versions --against).
func (r *captureRun) add(o captureRun) {
	r.packets += o.packets
	r.conns += o.conns
	r.kafka += o.kafka
	r.decodeErrors += o.decodeErrors
	r.readAny = r.readAny || o.readAny
	r.fileErrs = append(r.fileErrs, o.fileErrs...)
	r.interrupted = r.interrupted || o.interrupted
}

// captureReader feeds capture files to a dissect.Sink.
type captureReader struct {
	opts dissect.Options
	// onFile, when not nil, is called before each file with its path.
	onFile func(path string)
	// wrap, when not nil, wraps each file's dissector (progress
	// accounting).
	wrap func(reassembly.Handler) reassembly.Handler
	// after, when not nil, is called after each file with the
	// dissector's and the reassembly's totals for it.
	after func(dissect.Summary, reassembly.Summary)
}

// read reads every file with a fresh dissector: each file is a capture of
// its own, as Wireshark opens it, so packet numbers and connection indexes
// restart. Problems are collected in the result, not returned.
func (c *captureReader) read(ctx context.Context, paths []string, sink dissect.Sink) captureRun {
	if ctx == nil {
		ctx = context.Background()
	}
	var run captureRun
	for _, path := range paths {
		if c.onFile != nil {
			c.onFile(path)
		}
		d := dissect.New(c.opts, sink)
		var h reassembly.Handler = d
		if c.wrap != nil {
			h = c.wrap(d)
		}
		sum, err := reassembly.ReadFiles(ctx, []string{path}, reassembly.Options{}, h)
		d.Finish()
		ds := d.Summary()
		if c.after != nil {
			c.after(ds, sum)
		}
		run.packets += sum.Packets
		run.conns += sum.Connections
		run.kafka += ds.Kafka
		run.decodeErrors += ds.DecodeErrors
		for _, f := range sum.Files {
			run.readAny = run.readAny || f.Format != ""
		}
		if err != nil {
			run.fileErrs = append(run.fileErrs, err)
		}
		if ctx.Err() != nil {
			run.interrupted = true
			break
		}
	}
	return run
}

// status reports input problems on errw and returns the exit error:
//
//   - 2 when a file could not be read at all (missing, not a capture);
//   - 1 when a capture ended early or was corrupt, or some frame did not
//     decode (everything else has been shown or counted);
//   - 0 otherwise, with a note when no Kafka connection was found, and
//     after Ctrl-C (the way a live capture ends).
func (r *captureRun) status(errw io.Writer) error {
	if r.interrupted {
		fmt.Fprintln(errw, "kwire: interrupted; the output covers the packets read so far")
		return nil
	}
	code := exitOK
	for _, err := range r.fileErrs {
		var fe *reassembly.FileError
		if errors.As(err, &fe) && (errors.Is(err, reassembly.ErrTruncated) || errors.Is(err, reassembly.ErrCorrupt)) {
			fmt.Fprintf(errw, "kwire: warning: %v (everything before it is shown)\n", err)
			code = max(code, exitData)
			continue
		}
		fmt.Fprintf(errw, "kwire: %v\n", err)
		code = exitUsage
	}
	if r.kafka == 0 && code != exitUsage {
		fmt.Fprintf(errw, "kwire: no Kafka connections found (%d TCP connection%s skipped; try --detect or --port)\n",
			r.conns, plural(r.conns))
	}
	if r.decodeErrors > 0 {
		fmt.Fprintf(errw, "kwire: warning: %d frame%s could not be fully decoded\n", r.decodeErrors, plural(int(r.decodeErrors)))
		code = max(code, exitData)
	}
	if code != exitOK {
		return silentExit(code)
	}
	return nil
}

// inputSize returns the total size of the named files, for the progress
// bar; standard input and files that cannot be read count as 0 (reading
// them reports the problem).
func inputSize(paths []string) int64 {
	var total int64
	for _, p := range paths {
		if st, err := os.Stat(p); p != "-" && err == nil && st.Mode().IsRegular() {
			total += st.Size()
		}
	}
	return total
}
