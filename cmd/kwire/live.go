package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/reassembly/live"
	"github.com/spf13/cobra"
)

// liveOptions are kwire live's flags: read's dissection, output and
// exchange filters, plus the capture's.
type liveOptions struct {
	read readOptions

	Interface     string
	CaptureFilter string // -f, tcpdump syntax (a subset in the pure-Go build)
	Write         string // -w, pcapng
	Duration      time.Duration
	Count         int64
	Snaplen       int
	BufferMiB     int
	Promiscuous   bool

	portSet bool // --port was given
}

// liveIdleTimeout closes a connection that has been silent this long, so
// that a capture running for days does not keep every connection whose
// end it missed. Kafka clients talk at least every few seconds (fetch
// long-polls, heartbeats, metadata refreshes), so a connection this quiet
// is gone or idle; if it speaks again it is dissected as a new one.
const liveIdleTimeout = 15 * time.Minute

func newLiveCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	o := &liveOptions{read: readOptions{Stream: -1}}
	cmd := &cobra.Command{
		Use:   "live [flags]",
		Short: "Dissect the Kafka traffic on a network interface as it happens",
		Long: `Capture TCP packets on a network interface and print every Kafka request
and its response as it completes, exactly as kwire read prints a capture
file: one line per exchange, -V trees, -x hex dumps or --json NDJSON, with
the same filters. Output is flushed line by line, so kwire live | grep
works.

Only the Kafka ports (--port, default 9092) are captured, filtered in the
kernel so that a busy interface does not drown kwire; --detect captures
all TCP and recognises Kafka by content; -f sets the capture filter
yourself, in tcpdump syntax. On a loopback interface every packet is
seen once.

On Linux the default build captures in pure Go (AF_PACKET, no libpcap
needed) and its -f understands a subset of tcpdump's syntax:
  [tcp] [src|dst] port N, [tcp] [src|dst] portrange N-M,
  [src|dst] host ADDR, [src|dst] net ADDR/BITS, tcp, ip, ip6,
  and (&&), or (||), not (!), parentheses
A build with -tags pcap captures through libpcap: it takes any tcpdump
filter and works on macOS and the BSDs too (e.g. -i lo0).

With -f and no --port, Kafka is recognised by content (as with --detect)
in whatever the filter captures.

-w FILE also writes the captured packets to a pcapng file, for kwire read
or Wireshark later: every byte as captured, credentials included (SASL
passwords, sensitive configs, delegation tokens: a capture, unlike
kwire's output, is not safe to paste); a note at the end counts the
exchanges captured that can hold them, filtered out or not.

The capture runs until Ctrl-C (or SIGTERM), --duration or --count. Then
pending data is flushed, requests still awaiting a response are listed
as unanswered, and the summary is printed, with the packets the kernel
dropped: a drop is a hole in some TCP stream (enlarge --buffer-size or
narrow the filter).

--stats also feeds every exchange and event, filtered out or not, to the
statistics of kwire stats (APIs, latency, errors, clients, partitions,
connections; --top N the slowest exchanges) and prints its report after
the summary: the tables on stdout, or with --json one last NDJSON line
on stdout, {"kind":"stats","stats":{...}}, as kwire read --json --stats
writes it.

Capturing needs root or the CAP_NET_RAW capability:
  sudo setcap cap_net_raw+ep "$(command -v kwire)"

Exit status: 0 the capture ended (Ctrl-C, --duration, --count); 1 some
frame could not be decoded, or the capture failed while running (e.g.
-w's disk is full); 2 usage error, an unknown interface, a bad capture
filter, or no permission to capture.`,
		Example: `  # Kafka on the default port, on every interface
  sudo kwire live

  # A local broker on another port, for ten seconds
  kwire live -i lo --port 19092 --duration 10s

  # Failed requests only, and keep the packets for later
  kwire live -i eth0 --errors -w kafka.pcapng
  kwire read kafka.pcapng

  # Kafka found by content, excluding one noisy host
  kwire live -i eth0 --detect -f 'not host 10.0.0.7'

  # A minute of traffic, then kwire stats's report of it
  kwire live -i eth0 --duration 1m --stats --top 5

  # Slow fetches as NDJSON, piped on as they come
  kwire live --json --filter 'api == "Fetch" && latencyMs > 100' | jq .`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.portSet = cmd.Flags().Changed("port")
			o.read.topicSet = cmd.Flags().Changed("topic")
			o.read.statsMemSet = cmd.Flags().Changed("max-stats-memory")
			if err := o.read.flagsNeeded(cmd.Flags()); err != nil {
				return err
			}
			return runLive(cmd.Context(), o, s, g.colorEnabled(s))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Interface, "interface", "i", live.AnyInterface, "capture on the interface `NAME` (any: all interfaces, Linux)")
	f.StringVarP(&o.CaptureFilter, "capture-filter", "f", "", "capture filter `EXPR` in tcpdump syntax, instead of the --port filter (see above)")
	f.StringVarP(&o.Write, "write", "w", "", "also write the captured packets to `FILE` (pcapng)")
	f.DurationVar(&o.Duration, "duration", 0, "stop after this long (e.g. 30s, 5m; 0: until Ctrl-C)")
	f.Int64VarP(&o.Count, "count", "c", 0, "stop after `N` packets (0: no limit)")
	f.IntVarP(&o.Snaplen, "snaplen", "s", live.DefaultSnaplen, "keep at most `N` bytes of each packet")
	f.IntVarP(&o.BufferMiB, "buffer-size", "B", live.DefaultBufferSize>>20, "kernel capture buffer in `MiB`")
	f.BoolVar(&o.Promiscuous, "promisc", false, "put the interface in promiscuous mode (traffic of other hosts, e.g. on a mirror port)")

	// The dissection, output and filter flags of kwire read.
	o.read.addFlags(cmd, false, liveIdleTimeout)
	_ = cmd.RegisterFlagCompletionFunc("interface", completeInterfaces)
	return cmd
}

// completeInterfaces completes -i with the interfaces that exist.
func completeInterfaces(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return live.Interfaces(), cobra.ShellCompDirectiveNoFileComp
}

// captureConfig validates the capture flags.
func (o *liveOptions) captureConfig(dopts dissect.Options) (live.Config, error) {
	cfg := live.Config{
		Interface:   o.Interface,
		Filter:      o.CaptureFilter,
		Snaplen:     o.Snaplen,
		BufferSize:  o.BufferMiB << 20,
		Promiscuous: o.Promiscuous,
		Duration:    o.Duration,
		Count:       o.Count,
	}
	switch {
	case o.Duration < 0:
		return cfg, usageErrorf("--duration must not be negative")
	case o.Count < 0:
		return cfg, usageErrorf("--count must not be negative")
	case o.Snaplen < 64 || o.Snaplen > live.DefaultSnaplen:
		return cfg, usageErrorf("--snaplen must be from 64 to %d bytes", live.DefaultSnaplen)
	case o.BufferMiB < 1 || o.BufferMiB > 4096:
		return cfg, usageErrorf("--buffer-size must be from 1 to 4096 MiB")
	}
	if !dopts.Detect {
		cfg.Ports = dopts.Ports // --detect leaves it empty: all TCP
	}
	return cfg, nil
}

func runLive(ctx context.Context, o *liveOptions, s *ioStreams, color bool) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// The root command turns the first Ctrl-C into ctx's end; a service
	// manager stops with SIGTERM, which ends the capture the same way.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()

	r := &o.read
	ropts, err := r.out.renderOptions(color)
	if err != nil {
		return err
	}
	fl, err := r.filter()
	if err != nil {
		return err
	}
	names := cutNames(nil, r.capture.MaxNamesMemory) // the run's: the lines', --stats' and --findings'
	col, err := r.statsCollector(names)
	if err != nil {
		return err
	}
	an, err := r.analyzer(names)
	if err != nil {
		return err
	}
	// The key logs are read again as clients append to them.
	r.capture.follow = true
	dopts, err := r.capture.dissectOptions(ropts)
	if err != nil {
		return err
	}
	defer r.capture.keys.close()
	r.capture.keys.followNotes(s.ErrOut)
	bound := r.capture.memoryBound()
	if col != nil {
		bound = statsMemoryBound(bound, r.StatsMem)
	}
	if an != nil {
		bound = r.analysis.memoryBound(bound)
	}
	setMemoryCeiling(bound, s.ErrOut)
	if o.CaptureFilter != "" && !o.portSet {
		// -f chose the traffic: its ports need not be --port's default,
		// so Kafka is recognised by content, as with --detect.
		dopts.Detect = true
	}
	cfg, err := o.captureConfig(dopts)
	if err != nil {
		return err
	}
	cfg.Context = ctx

	var file *os.File
	if o.Write != "" {
		file, err = os.Create(o.Write)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		defer file.Close()
		cfg.Record = file
	}
	src, err := live.Open(cfg)
	if err != nil {
		if file != nil {
			file.Close()
			os.Remove(o.Write)
		}
		return captureError(err)
	}
	defer src.Close()
	fmt.Fprintf(s.ErrOut, "kwire: capturing on %s with %s, filter: %s; Ctrl-C to stop\n",
		src.Interface(), live.Backend, src.Filter())

	w := bufio.NewWriterSize(s.Out, 64<<10)
	sink := &liveSink{readSink: &readSink{o: r, fl: fl, w: w, ropts: ropts, names: names, col: col, an: an, lastFlush: time.Now()},
		write: file != nil}
	d := dissect.New(dopts, sink)
	// Run's own context stays open: the source ends the input (io.EOF)
	// when ctx is done, so that Run flushes like at the end of a file.
	sum, runErr := reassembly.Run(context.Background(), src, r.capture.reassemblyOptions(), d)
	d.Finish()
	recErr := src.Close()
	if file != nil {
		recErr = errors.Join(recErr, file.Close())
	}
	stats := src.Stats()
	sink.addTotals(d.Summary(), sum)
	warnNamesRefused(s.ErrOut, r.capture.MaxNamesMemory, names)

	sink.summarize(s, color, func(w io.Writer) error { return captureStats(w, stats) })
	sink.check(w.Flush())
	if sink.err != nil {
		return &exitError{code: exitData, err: fmt.Errorf("writing output: %w", sink.err)}
	}
	if sink.held > 0 {
		fmt.Fprintf(s.ErrOut, "kwire: note: -w %s: %d exchange%s captured can hold credentials (%s), which the file holds as captured: kwire's output withholds them, the file does not\n",
			o.Write, sink.held, plural(sink.held), strings.Join(sink.heldAPIs, ", "))
	}
	if stats.Dropped+stats.IfDropped > 0 {
		fmt.Fprintf(s.ErrOut, "kwire: warning: %d packet%s dropped before kwire could read them: the dissection has gaps (try a larger --buffer-size or a narrower filter)\n",
			stats.Dropped+stats.IfDropped, plural(int(stats.Dropped+stats.IfDropped)))
	}
	if runErr != nil || recErr != nil {
		return dataErrorf("%v", errors.Join(runErr, recErr))
	}
	run := captureRun{
		pendingMemory: dopts.PendingMemory,
		connMemory:    r.capture.reassemblyOptions().MaxConnectionMemory,
		detect:        dopts.Detect,
		ports:         dopts.Ports,
		readAny:       true,
		interrupted:   src.Stopped() == live.StopContext,
		keys:          r.capture.keys,
		liveIface:     src.Interface(),
		liveFilter:    src.Filter(),
	}
	run.addSummaries(d.Summary(), sum)
	return run.status(s.ErrOut)
}

// captureStats writes the capture's own counts, after the summary:
//
//	capture: 1200 packets, 0 dropped by the kernel
func captureStats(w io.Writer, st live.Stats) error {
	_, err := fmt.Fprintf(w, "capture: %d packet%s, %d dropped by the kernel", st.Packets, plural(int(st.Packets)), st.Dropped)
	if err == nil && st.IfDropped > 0 {
		_, err = fmt.Fprintf(w, ", %d by the interface", st.IfDropped)
	}
	if err == nil {
		_, err = fmt.Fprintln(w)
	}
	return err
}

// captureError maps live.Open's errors to exit statuses and messages that
// say what to do.
func captureError(err error) error {
	var pe *live.PermissionError
	if errors.As(err, &pe) {
		exe, xerr := os.Executable()
		if xerr != nil {
			exe = "$(command -v kwire)"
		}
		return usageErrorf("%v\n%s", err, pe.Fix(exe))
	}
	return &exitError{code: exitUsage, err: err}
}

// liveSink is read's sink with output flushed after every exchange and
// event, so that a pipe sees each line as it happens.
type liveSink struct {
	*readSink
	// write: -w records every packet captured; held counts the exchanges
	// that can hold credentials (credentialAPI, selected or not: the file
	// holds them all), heldAPIs names their APIs, for the note that says
	// the file is not safe to paste as kwire's output is.
	write    bool
	held     int
	heldAPIs []string
}

func (k *liveSink) Exchange(ex *dissect.Exchange) {
	if k.write {
		if api, ok := credentialAPI(ex); ok {
			k.held++
			if !slices.Contains(k.heldAPIs, api) {
				k.heldAPIs = append(k.heldAPIs, api)
			}
		}
	}
	k.readSink.Exchange(ex)
	k.check(k.w.Flush())
}

func (k *liveSink) Event(ev *dissect.Event) {
	k.readSink.Event(ev)
	k.check(k.w.Flush())
}
