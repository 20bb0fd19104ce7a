// Command mkmany writes a many-connection benchmark capture made from a
// small one by capturetest.Multiply: N copies, each from its own client
// address (10/8, fd00::/64), each -gap after the last, merged in time
// order. make bench-captures makes many-250.pcap and many-1000.pcap with
// it from pcaps/kgo-produce-consume.pcap (docs/performance.md).
//
//	go run ./internal/capturetest/mkmany [-copies N] [-gap D] [-ports P,...] -o OUT.pcap SOURCE.pcap
//
// The file is written under OUT.tmp and renamed, so that an interrupted
// run leaves no half file that looks finished. Exit status 2 for a usage
// error, 1 when the source cannot be read or copied.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/internal/capturetest"
)

func main() { os.Exit(run()) }

func run() int {
	var o capturetest.MultiplyOptions
	flag.IntVar(&o.Copies, "copies", 250, "copies of the source capture")
	flag.DurationVar(&o.Gap, "gap", 40*time.Millisecond, "time between the starts of two consecutive copies")
	ports := flag.String("ports", "", "broker TCP ports, comma-separated (default: the destination ports of the source's SYNs)")
	out := flag.String("o", "", "output pcap `file` (required)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: mkmany [-copies N] [-gap D] [-ports P,...] -o OUT.pcap SOURCE.pcap")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || *out == "" || o.Copies < 1 || o.Copies > capturetest.MaxCopies || o.Gap < 0 {
		flag.Usage()
		return 2
	}
	for _, p := range strings.Split(*ports, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil || n == 0 {
			fmt.Fprintf(os.Stderr, "mkmany: -ports: %q is not a TCP port\n", p)
			return 2
		}
		o.Ports = append(o.Ports, uint16(n))
	}
	log.SetFlags(log.Ltime)
	log.SetPrefix("mkmany: ")
	src, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Print(err)
		return 1
	}
	defer src.Close()
	tmp := *out + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		log.Print(err)
		return 1
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	st, err := capturetest.Multiply(src, bw, o)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, *out)
	}
	if err != nil {
		os.Remove(tmp)
		log.Print(err)
		return 1
	}
	log.Printf("wrote %s: %d copies of %d packets (%d TCP connections each), %d packets", *out, o.Copies, st.Packets, st.Conns, st.Packets*int64(o.Copies))
	return 0
}
