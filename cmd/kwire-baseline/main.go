// Command kwire-baseline reads captures and reassembles their TCP
// connections exactly as kwire read does (reassembly.ReadFiles, one file
// at a time, default options), with a handler that only counts the
// delivered bytes. It is the floor of kwire's benchmarks (make bench-e2e,
// docs/performance.md): what reading and reassembling costs before any
// Kafka framing, decoding or output.
//
// Usage: kwire-baseline [-sync] [-frames | -inflate | -gopacket [-copy]] [-port PORTS] FILE...
//
// -sync reads with reassembly.Options.Synchronous (reading, reassembly and
// the handler on one goroutine), to compare with the default pipeline.
//
// -frames runs kwire read's one-line pipeline up to its output: a
// dissect.Dissector on the reassembled streams (Kafka recognised on
// -port, default 9092, and by content, as read does), frames cut and
// paired and decoded as the one-line mode decodes them (sparsely, for
// the facts alone, without render.LineUnread; record batch headers and
// CRCs: protocol.Decoder Sparse, SparseDrop, Records and
// BatchHeadersOnly), then released. It is the floor of kwire read.
// -inflate decodes every body whole, as -V and --json do, and, on
// GOMAXPROCS workers fed from a bounded queue, decompresses the records
// of every compressed magic 2 record batch with protocol.Decompress (at
// most protocol.DefaultMaxDecompressed per frame, as the decoder): the
// floor of read -V and read --json, which decompress every batch.
//
// -gopacket is the floor of the libraries alone (gopacket.go): pcapgo,
// gopacket's layer parser and its reassembly.Assembler with streams that
// only count bytes, none of kwire's code. -gopacket -copy also copies
// every reassembled byte once into a reused buffer and computes its
// CRC-32C: the least work kwire read adds to the libraries.
//
// -cpuprofile and -memprofile write pprof profiles (CPU, and the heap's
// allocations at the end).
//
// It prints one line per file. Default and -sync: packets, TCP
// connections, delivered bytes by direction, gaps. -frames: packets,
// connections, frames, exchanges, magic 2 record batches (compressed,
// bad CRC). -inflate adds the compressed -> decompressed bytes of all
// codecs, then of each (batches: compressed -> decompressed bytes, and
// the wall time the workers spent in protocol.Decompress, summed), and
// the batches that failed to decompress. Exit status 1 when a file could
// not be read to its end, 2 on usage errors.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kwire-baseline", flag.ContinueOnError)
	fs.SetOutput(stderr)
	synchronous := fs.Bool("sync", false, "read with reassembly.Options.Synchronous")
	frames := fs.Bool("frames", false, "dissect as kwire read's one-line mode does, render nothing")
	inflate := fs.Bool("inflate", false, "as -frames, and decompress every compressed record batch on every core")
	gopkt := fs.Bool("gopacket", false, "read and reassemble with pcapgo and gopacket's Assembler alone (no kwire code)")
	copyBytes := fs.Bool("copy", false, "with -gopacket, copy every reassembled byte once into a reused buffer and compute its CRC-32C")
	ports := fs.String("port", strconv.Itoa(dissect.DefaultPort), "broker TCP `ports`, comma-separated (with -frames and -inflate)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kwire-baseline [-sync] [-frames | -inflate | -gopacket [-copy]] [-port PORTS] FILE...")
		fs.PrintDefaults()
	}
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile to `file`")
	memprofile := fs.String("memprofile", "", "write an allocation profile to `file` at the end")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *memprofile != "" {
		defer func() {
			f, err := os.Create(*memprofile)
			if err == nil {
				err = pprof.Lookup("allocs").WriteTo(f, 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
			}
			if err != nil {
				fmt.Fprintf(stderr, "kwire-baseline: %v\n", err)
			}
		}()
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kwire-baseline: %v\n", err)
			return 2
		}
		defer func() {
			pprof.StopCPUProfile()
			f.Close()
		}()
	}
	if fs.NArg() == 0 || *frames && *inflate || *gopkt && (*frames || *inflate || *synchronous) || *copyBytes && !*gopkt {
		fs.Usage()
		return 2
	}
	var opts reassembly.Options
	opts.Synchronous = *synchronous
	dopts, err := dissectOptions(*ports)
	if err != nil {
		fmt.Fprintf(stderr, "kwire-baseline: %v\n", err)
		return 2
	}
	status := 0
	for _, path := range fs.Args() {
		var err error
		if *gopkt {
			var t gopacketTotals
			t, err = gopacketFloor(path, *copyBytes)
			printGopacket(stdout, path, t)
		} else if *frames || *inflate {
			var t floorTotals
			var sum reassembly.Summary
			var ds dissect.Summary
			fopts := dopts
			if !*inflate {
				fopts.Decoder.Sparse, fopts.Decoder.SparseDrop = true, render.LineUnread
			}
			t, sum, ds, err = readFloor(path, opts, fopts, *inflate)
			printFloor(stdout, path, *inflate, sum.Packets, sum.Connections, ds, &t)
		} else {
			var c counter
			var sum reassembly.Summary
			sum, err = reassembly.ReadFiles(context.Background(), []string{path}, opts, &c)
			fmt.Fprintf(stdout, "%s: %d packets, %d connections, %d+%d bytes, %d gaps (%d bytes)\n",
				path, sum.Packets, sum.Connections, c.bytes[reassembly.AtoB], c.bytes[reassembly.BtoA], c.gaps, c.gapBytes)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kwire-baseline: %v\n", err)
			status = 1
		}
	}
	return status
}

// readFloor reads one capture file through a Dissector into a floor sink
// (-frames, or -inflate when inflate) and returns its totals.
func readFloor(path string, opts reassembly.Options, dopts dissect.Options, inflate bool) (floorTotals, reassembly.Summary, dissect.Summary, error) {
	s := newFloorSink(inflate)
	d := dissect.New(dopts, s)
	sum, err := reassembly.ReadFiles(context.Background(), []string{path}, opts, d)
	d.Finish()
	return s.close(), sum, d.Summary(), err
}

// dissectOptions are kwire read's with --port ports: Kafka recognised on
// those ports and by content, default frame and pending-memory bounds,
// record batches decoded by their headers only; bodies decoded whole
// (-frames makes them sparse, as the one-line mode does).
func dissectOptions(ports string) (dissect.Options, error) {
	opts := dissect.Options{
		Detect:  true,
		Decoder: protocol.Decoder{Records: true, BatchHeadersOnly: true},
	}
	for _, p := range strings.Split(ports, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n <= 0 || n > 65535 {
			return opts, fmt.Errorf("-port %q is not a TCP port", p)
		}
		opts.Ports = append(opts.Ports, uint16(n))
	}
	return opts, nil
}

// counter is a reassembly.Handler that only counts.
type counter struct {
	bytes    [2]int64 // delivered bytes by reassembly.Dir
	gaps     int64
	gapBytes int64
}

func (c *counter) Open(*reassembly.Conn) {}

func (c *counter) Data(_ *reassembly.Conn, d reassembly.Dir, ch reassembly.Chunk) {
	c.bytes[d] += int64(len(ch.Data))
}

func (c *counter) Gap(_ *reassembly.Conn, _ reassembly.Dir, n int64, _ time.Time) {
	c.gaps++
	if n > 0 {
		c.gapBytes += n
	}
}

func (c *counter) Close(*reassembly.Conn, string, time.Time) {}
