// Command kwire-baseline reads captures and reassembles their TCP
// connections exactly as kwire read does (reassembly.ReadFiles, one file
// at a time, default options), with a handler that only counts the
// delivered bytes. It is the floor of kwire's benchmarks (make bench-e2e,
// docs/performance.md): what reading and reassembling costs before any
// Kafka framing, decoding or output.
//
// Usage: kwire-baseline [-sync] FILE...
//
// -sync reads with reassembly.Options.Synchronous (reading, reassembly and
// the handler on one goroutine), to compare with the default pipeline.
//
// It prints one line per file: packets, TCP connections, delivered bytes
// by direction, gaps. Exit status 1 when a file could not be read to its
// end, 2 on usage errors.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kwire/kwire/reassembly"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	var opts reassembly.Options
	if len(args) > 0 && args[0] == "-sync" {
		opts.Synchronous = true
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: kwire-baseline [-sync] FILE...")
		return 2
	}
	status := 0
	for _, path := range args {
		var c counter
		sum, err := reassembly.ReadFiles(context.Background(), []string{path}, opts, &c)
		fmt.Fprintf(stdout, "%s: %d packets, %d connections, %d+%d bytes, %d gaps (%d bytes)\n",
			path, sum.Packets, sum.Connections, c.bytes[reassembly.AtoB], c.bytes[reassembly.BtoA], c.gaps, c.gapBytes)
		if err != nil {
			fmt.Fprintf(stderr, "kwire-baseline: %v\n", err)
			status = 1
		}
	}
	return status
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
