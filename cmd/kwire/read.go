package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/analysis"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/internal/jsonint64"
	"github.com/kwire/kwire/pipeline"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render"
	"github.com/kwire/kwire/render/statsview"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

type readOptions struct {
	capture captureFlags
	files   fileFlags // --merge, -f (not live)

	Tree    bool // -V
	HexDump bool // -x
	JSON    bool
	Verbose bool
	out     outputOptions

	APIs      []string
	Topics    []string
	ClientIDs []string
	Errors    bool
	Stream    int
	Frames    []string // --frame
	Filter    string
	Since     string
	Until     string
	Count     int // -c: stop after this many exchanges shown

	FrameNumbers bool   // --frame-numbers
	UTC          bool   // --utc
	Local        bool   // --local
	Sort         string // --sort: "" (completion) or "time"
	SortWindow   time.Duration
	SortMemory   byteSize
	Normalize    bool
	Write        string // -w

	Stats bool // --stats: kwire stats's report after the summary
	Top   int  // --top, with --stats
	// StatsMem is --max-stats-memory, with --stats.
	StatsMem byteSize
	// ProfileMem is --max-profile-memory, with --normalize.
	ProfileMem byteSize

	Findings bool // --findings: one line per finding after the exchanges
	analysis analysisFlags

	topicSet    bool // --topic was given
	statsMemSet bool // --max-stats-memory was given
	start       *captureStart
}

func newReadCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	o := &readOptions{Stream: -1}
	cmd := &cobra.Command{
		Use:   "read [flags] FILE...",
		Short: "Dissect the Kafka traffic in pcap or pcapng captures",
		Long: `Read pcap or pcapng captures (plain or compressed with gzip, zstd, xz,
bzip2 or lz4; - reads standard input), reassemble their TCP connections, and print every Kafka request and
its response: one line per exchange, with -V the decoded trees, with -x the
annotated hex dumps, with --json one JSON object per line (NDJSON).

A line reads:

  12:01:02.345 10.0.0.5:53412 → 10.0.0.9:9092 Produce v9 corr=7 client=app
      2.41ms 327B/90B orders[0@100+2 132B,3+2 gzip 145B] errors: ...

the request's capture time (UTC), client → broker, API and version,
correlation ID, client ID, latency (from the request's first packet to the
response's first packet: a large request's sending is in it, a large
response's receiving is not; Wireshark shows each message at the packet
that completes it), request and response sizes, then the subject: here
topic "orders", partition 0 with 2 records in 132 bytes written at base
offset 100 (@: the base offset the response gave, a fetch's first batch, or
an offset committed or fetched for a group, @none when the group has none
committed; no @ for a partition answered with an error, whose offsets are
no result), partition 3 with 2 gzip-compressed records in 145 bytes; other
APIs name their groups, members, transactional IDs, offsets asked and
answered. Kafka's error names follow, with counts (×N) and the broker's
error message. Lines come in the order exchanges complete: a long-polling
Fetch follows the requests sent while it waited, and requests never
answered come when their connection ends.

The --json stream mixes exchanges and connection events, in the order of
the lines (exchanges as they complete); consumers tell them apart by
"kind": an exchange's is paired, noResponse,
unanswered, orphan or sasl (inFlight: waiting for its response when -c
stopped the read) (with "topics", names where a Metadata or
CreateTopics response of the capture gave a topic ID's name); an event's
is gap, resync, badFrame, tls, truncated or conflict (a TCP retransmission
with different data) (and, with --verbose, open,
close, skipped, tlsNote and cut: bytes a -w file left out), with "stream", "client", "broker", "from" (the
side whose bytes it concerns), "frame", "time", "bytes", "detail", "hex"
(the bytes a resync skipped) and "tls" (a tls event's status: decrypted,
reason, version, suite, sni, alpn, resumed; null for other events). E.g.
jq 'select(.kind == "gap")'. An exchange's "facts" say what it is about,
typed: topics, partitions with offsets, records and errors, errors with
their place, the group, the producer, ... Every JSON document follows
one vocabulary (docs/json.md; schemas in docs/schema). Integers are JSON
numbers with every digit, as Kafka's JsonConverter writes them; tools
that read numbers as doubles (jq before 1.7, JavaScript) round those
beyond 2^53, such as producer IDs: --json-int64 string writes them as
strings.

Connections are Kafka when their first request decodes as one, header and
body, on any port (--detect, on by default), or when one side uses a
--port (default 9092; lists and ranges: 9092,19092-19094): there content
cannot tell, e.g. a capture that starts in the middle of a connection.
--detect=false keeps to the --port connections. --verbose also lists the
connections that were skipped and why, naming the protocol where its
first bytes tell (ZooKeeper, PostgreSQL, Redis, Cassandra, AMQP, MQTT,
Java RMI, Thrift, HTTP and the REST services around Kafka, gRPC, TLS).

Bytes missing from a connection are a GAP: lost ("740 bytes lost"), or,
in a capture taken with a snap length (tcpdump -s 120), not captured: the
packet that carried them was cut ("740 bytes not captured: the snap
length cut packet 6 to 120 of its 860 bytes"); the summary counts both
("200 gaps (49741 bytes not captured: the snap length cut 200 packets to
120 bytes)"). Capture with -s 0 to keep whole packets. A frame cut so is
shown at its size on the wire, as its length prefix says (the note says
how many bytes were captured: "14 of 49 bytes captured"), and a request
cut inside its header before the end of its client ID says
client=<not captured> (--json: clientId null, clientIdNotCaptured
true; stats and versions list such requests under "<not captured>"),
never client="". Bytes still missing
when the segments behind them fill --max-out-of-order are given up ("3728
bytes given up (budget)"): a larger --max-out-of-order waits for them.

A TCP retransmission whose bytes differ from those it resends is a
CONFLICT naming both packets and the stream offset: the first copy is
decoded (as Linux's receiver keeps it), but the receiver may have kept the
other; exit status 1.

A response whose request was not captured is an orphan; when exactly one
API and version decode its whole frame, it is decoded as that guess and
says so ("orphan response DescribeGroups v5 (guess)", "guess" in JSON).

TLS: with --tls-keylog (the clients' key log: SSLKEYLOGFILE, Go's
KeyLogWriter, openssl -keylogfile, a Java key-log agent) or the Decryption
Secrets Blocks of a pcapng capture (editcap --inject-secrets), TLS 1.2 and
1.3 connections on any port are decrypted and read like plaintext: Kafka
is recognised inside by content, lines and -x keep the packet numbers and
times of the records that carried each byte ("decrypted from TLS" in -V
and -x headings). Each TLS connection has one tls event: decrypted
(version, cipher suite, SNI, ALPN) or why not (no key log; no key for
its client random and how many keys were loaded, with secrets dropped
past --max-tls-key-memory or not; handshake not captured, wrong key,
unsupported version or suite); in --json its "tls" object says the same
(its "reason": "no key log", "no key for the client random", ...), as
does the skipped event of TLS not on a Kafka port.
--verbose adds alerts (close_notify), key updates and renegotiations
(tlsNote). A record
that fails authentication once decryption began is a gap: the rest of that
direction is lost, never shown as garbage. When keys were given, a TLS
connection that could not be decrypted makes the exit status 1.

Record batches: the one-line mode reads each batch's header and verifies
its CRC (base offset, record count, codec and size per partition) without
decompressing it; -V, -x and --json decode every record, so a batch whose
CRC is valid but whose records are malformed is reported there. Values
inflated from compressed batches are kept as far as they are shown
(--max-value). A frame whose batches inflate past --max-decompressed is a
decompression bomb: its records up to the cap are decoded, its note says
what its codec claimed, and the exit status is 1; one that needs more than
a quarter of --max-decode-memory is decoded as far as that goes. Memory is
bounded by the flags whatever the capture holds (README, "Memory").

Secrets are withheld unless --show-secrets: SASL passwords, proofs and
tokens (a token kwire cannot parse whole), delegation-token HMACs, SCRAM
credentials, sensitive config values, and undecodable bytes of messages
that can carry them. -V and decode print <redacted>, --json "<redacted>"
(the 10 bytes "<redacted>" in place of a secret inside a base64 value),
-x a line with <redacted> in the hex column, after which offsets count
from the withheld span's end (+0004), so that no output gives a secret's
length but the frame's size does, less the other fields'.

Each file is a capture of its own, as Wireshark opens it: packet and
stream numbers (--frame, --stream) restart at every file, and with
several files every line starts with its file's name ("a.pcap: ") and
every JSON object says it ("file"; null for one capture). --merge reads
the files as one capture in packet-time order instead: the files of a
tcpdump -C/-G ring buffer, whose connections span files, or the two
halves of a capture split by direction; numbers then count through the
merge. On a terminal, a progress bar on stderr tracks inputs larger than
50 MB.

Selections, as tshark users have them: -f FILTER reads only the packets a
tcpdump-syntax filter passes (the pure-Go subset of kwire live -f; the
others are skipped before numbering, and the summary counts them). As
tcpdump -r's, it sees each packet as captured: a tunnel's outer headers
(-f 'port 4789' passes VXLAN, host takes the outer addresses), each IP
fragment (host passes every fragment, port only the first, which holds
the ports); unlike tcpdump's it looks through VLAN tags; --since and --until keep the
exchanges whose request was captured in a time window (RFC 3339, or an
offset from the capture's first packet: 90s, +1m30s); --frame takes
packet numbers and ranges (12, 100-200, 5000-); -c N stops after N
exchanges; -w FILE writes the packets of the exchanges shown, with their
connections' handshakes, as a new pcapng: a 20 GB capture cut down to the
one slow Fetch for a bug report. The first packet written after bytes
left out says so in a packet comment ("kwire-cut: ..."), and read again
those holes are cuts, not losses (a summary line counts them; --verbose
shows each); bytes the original capture had lost stay gaps; the
exchanges keep their times, retransmissions and segments out of order
(the round trip and the windows advertised are measured from the
packets written). A segment that came in IP fragments is written with
all of them. FILE must not be one of the captures read (exit status
2). A TLS connection is written whole up to its last exchange shown (a
record is decrypted with the ones before it), without its keys (a
pcapng's decryption secrets are not copied: a file for a bug report
carries no keys, and a note says so when they decrypted exchanges
written); read it again with --tls-keylog. The file's section
comment keeps the names of the topic IDs its exchanges use
("kwire-topic-ids: ..."), which the Metadata left out stated; kwire
reads them back. The packets are written as captured, credentials in
them included (a capture, unlike kwire's output, is not safe to paste):
a note says when exchanges written can hold credentials (SASL tokens,
sensitive configs, delegation tokens, SCRAM credentials, the KRaft
metadata log's records; not Kafka Connect's configuration records,
which only decoding the records tells), and when
packets written also carry frames of exchanges not shown that can (a
SaslAuthenticate sharing a segment with the request shown).

Lines: --frame-numbers starts each with the packet numbers of its
request and response (REQ/RESP, tshark's frame column); --utc and --local
give each line's date (without them, a line says when the date changes);
--sort time prints exchanges in capture order (of their requests) rather
than as they complete, through a reorder window of --sort-window capture
time and --sort-memory bytes: an exchange answered later than the window
is printed when it completes, and counted on stderr. When the locale is
not UTF-8 (LC_ALL=C), text is plain ASCII (-> for →, x for ×; --ascii).

--normalize prints, in place of the exchanges, what stays the same when
the same clients do the same work again (a snapshot for golden-file tests
in other projects; kwire diff compares snapshots and captures; see kwire
diff --help): per client its software, APIs and versions, request
sequences, errors, topics, configs, codecs; per broker what it
advertised. With --json it is one JSON document. --max-profile-memory
(64MiB) bounds what it keeps: past it new client IDs and brokers are
not kept, a client already kept that adds more is marked capped, and a
last line ("folded" in --json) counts the requests, connections and
exchanges left out.

A summary follows the exchanges: packets; TCP connections, how many were
Kafka, how many were skipped and why; frames; exchanges by kind (paired;
no-response: a Produce with acks=0, which the broker never answers;
unanswered: a request whose response the capture does not hold when its
connection or the capture ends; orphan responses whose request was not
captured; SASL: raw tokens after a SaslHandshake v0); the Kafka error
codes seen; anomalies (decode errors, gaps, resyncs, bad or truncated
frames, out-of-order responses, TLS connections not decrypted and why,
packets that could not be read);
with filters or -c, how many exchanges were shown. It goes to
stdout in text mode and to stderr with --json, so that stdout stays pure
NDJSON.

--stats adds kwire stats's report after the summary (APIs, latency,
errors, clients, partitions, connections, findings; --top N the slowest
exchanges). It counts every exchange and event, filtered out or not,
like the summary: the tables on stdout, or with --json a last NDJSON
record on stdout, {"kind":"stats","stats":{...}} (kwire stats --json's
document), while the summary's text goes to stderr.

--findings adds, after the exchanges, one line per finding in time
order: what an operator should look at, by the rules of
docs/findings.md, with the packets it rests on (version mismatches,
throttling, metadata storms, retries, leadership moves, timeouts, slow
exchanges split between broker and network, batch sizes, connection
churn, SASL failures, fencing, expired group members...); with --json one
{"kind":"finding",...} line each. Like --stats it sees every exchange,
filtered out or not.

Filters (all given ones must hold):
  --api LIST         API names or keys, comma-separated (Produce,Fetch,3)
  --topic NAME       exchanges naming the topic, by name or topic ID
                     (repeatable)
  --client-id ID     requests from the client ID (repeatable)
  --errors           responses with a non-zero error code anywhere
  --stream N         TCP connection N (Wireshark's tcp.stream)
  --frame N          the exchange holding packet N (for a TCP
                     retransmission whose bytes came first in another
                     packet, the exchange that waited for it is named)
  --filter EXPR      an expression (https://expr-lang.org) over the
                     exchange's --json object, by the same names

--filter sees an exchange as --json writes it (docs/json.md), e.g.
  api, apiKey, apiVersion, correlationId, clientId (null when null),
  latencyMs (null without a response), kind (paired, noResponse,
  unanswered, orphan, sasl; no-response is accepted too), stream,
  client, broker, topics, errors (names), notes, subject,
  request.size, request.frame, request.time, response.size, ...
  facts: what the exchange says, typed, e.g.
    facts.topics[].name, .topicId, .error, .partitions[].partition,
      .error, .baseOffset, .highWatermark, .committedOffset,
      .records.count, .records.wireBytes, .records.codecs
    facts.errors[].name, .topic, .partition, .message
    facts.group.groupId, .memberId, .generationId, .memberEpoch
    facts.producer.transactionalId, .producerId, .producerEpoch
    facts.throttleTimeMs, facts.isolationLevel, facts.acks
  request.body and response.body: the message in Kafka's JsonConverter
  form (request.body.acks == 0); read only when the expression names
  them. A path no API's schema has, in any version (a misspelt field),
  is refused with the nearest names; an expression that is not true or
  false (latencyMs) is refused with what to compare.
A comparison through null is false (facts.group.groupId == "g" where the
exchange has no group); facts.group?.groupId reads it as nil. The filter names of
earlier kwire (latency_ms, client_id, ...) are refused with the new
name.

Exit status (the same for stats and versions):
  0  the captures were fully dissected; also when no Kafka connection was
     found (a note on stderr says why: also when -f passed no packet), when frames name an unknown API
     key or version (they are data, kept raw), and when Ctrl-C stopped
     the reading (at the next packet: press it twice to stop an idle live
     capture at once)
  1  the captures could not be fully dissected: a file cut short or
     corrupt, bytes lost (GAP) or not captured (a GAP whose packet the
     snap length cut), garbage skipped (RESYNC, BAD-FRAME),
     TRUNCATED frames, or a frame that failed to decode; everything else
     is still printed, and a warning on stderr says what happened
  2  usage error, a bad --filter, or a file that cannot be read or is not
     a pcap/pcapng capture`,
		Example: `  # One line per request/response
  kwire read kafka.pcapng

  # Also Kafka that content cannot tell (mid-stream) on these broker ports
  kwire read --port 9092,9093,19092 kafka.pcap

  # Only the connections on port 9092, no detection by content
  kwire read --detect=false kafka.pcap

  # Full trees of the slow Fetch requests
  kwire read -V --filter 'api == "Fetch" && latencyMs > 100' kafka.pcap

  # Produce requests from one client that touched "orders" and failed
  kwire read --filter 'api == "Produce" && clientId startsWith "billing" && "orders" in topics && len(errors) > 0' kafka.pcap

  # Fetches that returned records from partition 0 of orders
  kwire read --filter 'api == "Fetch" && any(facts.topics, {.name == "orders" && any(.partitions, {.partition == 0 && .records?.count > 0})})' kafka.pcap

  # Produce requests sent with acks=0, by their body
  kwire read --filter 'api == "Produce" && request.body.acks == 0' kafka.pcap

  # Every exchange, then the statistics of kwire stats
  kwire read --stats --top 5 kafka.pcap

  # A tcpdump -C 100 -W 10 ring buffer as one capture, in capture order
  kwire read --merge --sort time ring.pcap*

  # Cut a large capture down to the slow Fetches of one minute, for a bug report
  kwire read --since 2026-11-29T12:00:00Z --until 2026-11-29T12:01:00Z \
      --filter 'api == "Fetch" && latencyMs > 500' -w slow-fetch.pcapng big.pcap

  # Only one client's packets, as tcpdump -r big.pcap 'host 10.0.0.5' would read them
  kwire read -f 'host 10.0.0.5' big.pcap

  # A snapshot for a golden-file test
  kwire read --normalize --json kafka.pcap > golden.json

  # Errors on one topic, as NDJSON
  kwire read --topic orders --errors --json kafka.pcap | jq .

  # Live, from tcpdump
  tcpdump -i any -w - port 9092 | kwire read -`,
		Args: captureArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.topicSet = cmd.Flags().Changed("topic")
			o.statsMemSet = cmd.Flags().Changed("max-stats-memory")
			if err := o.flagsNeeded(cmd.Flags()); err != nil {
				return err
			}
			return runRead(cmd.Context(), o, s, g.colorEnabled(s), args)
		},
	}
	o.addFlags(cmd, true, 0)
	o.files.addFlags(cmd.Flags())
	o.addReadFlags(cmd)
	return cmd
}

// addFlags adds the dissection, output and filter flags that read and
// live share; detect is --detect's default, idle --idle-timeout's.
func (o *readOptions) addFlags(cmd *cobra.Command, detect bool, idle time.Duration) {
	f := cmd.Flags()
	o.capture.addFlags(f, detect, idle)
	f.BoolVarP(&o.Tree, "tree", "V", false, "print each exchange's decoded request and response trees")
	f.BoolVarP(&o.HexDump, "hex", "x", false, "print each frame's annotated hex dump")
	f.BoolVar(&o.JSON, "json", false, "print one JSON object per exchange (NDJSON)")
	f.BoolVar(&o.Verbose, "verbose", false, "also list connection events and skipped connections with reasons")
	o.out.addFlags(f)
	f.StringSliceVar(&o.APIs, "api", nil, "only these APIs (names or keys, comma-separated)")
	f.StringSliceVar(&o.Topics, "topic", nil, "only exchanges naming one of these topics (names, or topic IDs in base64url or UUID form)")
	f.StringSliceVar(&o.ClientIDs, "client-id", nil, "only requests from these client IDs")
	f.BoolVar(&o.Errors, "errors", false, "only exchanges whose response has a non-zero error code")
	f.IntVar(&o.Stream, "stream", -1, "only TCP connection `N` (numbered from 0 as Wireshark's tcp.stream; -1: all)")
	f.StringSliceVar(&o.Frames, "frame", nil, "only the exchanges with a packet in `N[-M]`: packet numbers (from 1) and ranges, comma-separated (12, 100-200, 5000-: to the end)")
	f.StringVar(&o.Since, "since", "", "only exchanges whose request was captured at or after `TIME`: RFC 3339 (2026-11-29T12:51:40Z) or an offset from the capture's first packet (90s, +1m30s)")
	f.StringVar(&o.Until, "until", "", "only exchanges whose request was captured before `TIME` (as --since)")
	f.BoolVar(&o.FrameNumbers, "frame-numbers", false, "start each line with the packet numbers of its request and response (REQ/RESP, as tshark's frame column)")
	f.BoolVar(&o.UTC, "utc", false, "give each line's date and time in UTC (2026-11-29T12:51:39.752Z), not only the time of day")
	f.BoolVar(&o.Local, "local", false, "give each line's date, time and zone offset in the local time zone ($TZ)")
	f.StringVar(&o.Filter, "filter", "", "only exchanges for which the `EXPR` is true (see kwire read --help)")
	f.BoolVar(&o.Stats, "stats", false, "also print kwire stats's report of all the exchanges after the summary (with --json: a last record {\"kind\":\"stats\",\"stats\":{...}} on stdout)")
	f.IntVar(&o.Top, "top", 0, "with --stats, list the `N` slowest exchanges with their packet numbers")
	addStatsMemoryFlag(f, &o.StatsMem)
	f.BoolVar(&o.Findings, "findings", false, "also print the findings (docs/findings.md), one line each, after the exchanges")
	o.analysis.addFlags(f, true)
	exclusiveFlags(cmd, [2]string{"tree", "json"}, [2]string{"hex", "json"})
}

// addReadFlags adds the flags of read that live has not.
func (o *readOptions) addReadFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVarP(&o.Count, "count", "c", 0, "stop after `N` exchanges shown (0: no limit)")
	f.StringVar(&o.Sort, "sort", "", "`time`: print exchanges in the order of their requests' packets (capture order), not as they complete, through a reorder window (--sort-window, --sort-memory)")
	f.DurationVar(&o.SortWindow, "sort-window", 10*time.Second, "with --sort time, how long (capture time) an exchange waits for earlier requests still unanswered; one answered later than this is printed when it completes, and counted")
	o.SortMemory = 64 << 20
	f.Var(&o.SortMemory, "sort-memory", "with --sort time, the memory the reorder window may hold, e.g. 64MiB (K, M, G: powers of 1024); past it the oldest exchange is printed early")
	f.BoolVar(&o.Normalize, "normalize", false, "print only what stays the same when the same clients do the same work again (a snapshot for golden-file tests; kwire diff compares them): per client its software, APIs and versions, request sequences, errors, topics, configs, codecs; per broker what it advertised; with --json one JSON document")
	addProfileMemoryFlag(f, &o.ProfileMem)
	f.StringVarP(&o.Write, "write", "w", "", "also write the packets of the exchanges shown, with their connections' handshakes, to `FILE` as pcapng (a capture cut down to what matters; the first packet after bytes left out says so in a packet comment, and kwire reads those holes as cuts, not losses)")
}

// errCountReached ends a read once -c exchanges were shown.
var errCountReached = errors.New("the -c count of exchanges was reached")

func runRead(ctx context.Context, o *readOptions, s *ioStreams, color bool, paths []string) error {
	ropts, err := o.out.renderOptions(color)
	if err != nil {
		return err
	}
	fl, err := o.filter()
	if err != nil {
		return err
	}
	if o.Count < 0 {
		return usageErrorf("-c must not be negative")
	}
	if o.Normalize {
		return runNormalize(ctx, o, s, color, fl, paths)
	}
	switch o.Sort {
	case "", "time":
	default:
		return usageErrorf("--sort %q: the only order is time (capture order)", o.Sort)
	}
	if o.Sort == "time" && (o.SortWindow < 0 || o.SortMemory <= 0) {
		return usageErrorf("--sort-window must not be negative and --sort-memory must be positive")
	}
	if o.UTC && o.Local {
		return usageErrorf("--utc and --local cannot be used together")
	}
	switch {
	case o.UTC:
		ropts.Clock = render.ClockUTC
	case o.Local:
		ropts.Clock, ropts.Location = render.ClockLocal, time.Local
	}
	ropts.FrameNumbers = o.FrameNumbers
	pf, err := o.files.packetFilter(o.start)
	if err != nil {
		return err
	}
	var sel *packetSelection
	if o.Write != "" {
		if slices.Contains(paths, "-") {
			return usageErrorf("-w reads the captures twice: it cannot read standard input")
		}
		if err := checkWritable("-w", o.Write, paths...); err != nil {
			return err
		}
		sel = newPacketSelection()
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	dopts, err := o.capture.dissectOptions(ropts)
	if err != nil {
		return err
	}

	// One Names for the run: the lines, --stats, --findings and -w's
	// record of the names all read the topic names learnt from the same
	// exchanges in the same order (an exchange is resolved once).
	names := cutNames(paths, o.capture.MaxNamesMemory) // a cut file's own record of its topics' names
	col, err := o.statsCollector(names)
	if err != nil {
		return err
	}
	an, err := o.analyzer(names)
	if err != nil {
		return err
	}

	// One line per exchange shows batch offsets, counts and sizes, not
	// records: skip decompressing and decoding them (--stats counts
	// records).
	dopts.Decoder.BatchHeadersOnly = !o.Tree && !o.HexDump && !o.JSON && col == nil
	// Lines, --stats and --findings read facts, not fields: decode bodies
	// sparsely (protocol.Decoder.Sparse) unless a --filter reads bodies
	// by field name, and lines alone without the facts of
	// render.LineUnread unless a --filter expression may read them.
	if !o.Tree && !o.HexDump && !o.JSON && !fl.bodies {
		dopts.Decoder.Sparse = true
		if dopts.Decoder.BatchHeadersOnly && an == nil && fl.program == nil {
			dopts.Decoder.SparseDrop = render.LineUnread
		}
	}

	w := bufio.NewWriterSize(s.Out, 64<<10)
	sink := &readSink{o: o, fl: fl, w: w, ropts: ropts, names: names, col: col, an: an, lastFlush: time.Now(),
		stop: func() { stop(errCountReached) }, sel: sel}
	var ds dissect.Sink = sink
	after := sink.addTotals
	var par *pipeline.Ordered
	var ahead *pipeline.DecodeAhead
	var drain func()
	workers := runtime.GOMAXPROCS(0)
	switch {
	case workers > 1 && (o.Tree || o.JSON) && !o.HexDump && col == nil && an == nil:
		// Trees and JSON cost far more than reading: decode and render
		// them on every core, write them in order.
		dopts.DeferDecode = true
		par = pipeline.NewOrdered(orderedRead{sink}, workers, int64(o.capture.MaxDecodeMemory))
		par.Recycle = true // the sink keeps nothing of an exchange (as when it recycles itself)
		ds = par
		drain = par.Sync // a file's totals once its exchanges are decoded and written
	case workers > 1 && col != nil && !o.HexDump:
		// --stats decodes every record: decode on every core, render and
		// count in order as the exchanges come (as kwire stats does). Not
		// for lines alone, whose decoding (record batch headers only)
		// costs about what passing each exchange between goroutines adds
		// (many-1000: 20% more CPU time for a wall time within the noise),
		// nor for hex dumps, whose text is rendered in order anyway.
		dopts.DeferDecode = true
		ahead = pipeline.NewDecodeAhead(sink, workers, int64(o.capture.MaxDecodeMemory))
		ahead.Recycle = true
		ds = ahead
		drain = ahead.Sync
	}
	bound := o.capture.memoryBound()
	if col != nil {
		bound = statsMemoryBound(bound, o.StatsMem)
	}
	if an != nil {
		bound = o.analysis.memoryBound(bound)
	}
	if o.Sort == "time" && bound > 0 {
		bound += int64(o.SortMemory) // the reorder window's
	}
	setMemoryCeiling(bound, s.ErrOut)
	var sorter *pipeline.Sorter
	if o.Sort == "time" {
		dopts.DeferDecode = true
		sorter = pipeline.NewSorter(ds, o.SortWindow, int64(o.SortMemory))
		sorter.KeepDeferred = par != nil || ahead != nil // they decode on every core
		ds = sorter
		inner := after
		after = func(d dissect.Summary, r reassembly.Summary) {
			sorter.Flush() // a capture's exchanges before its totals
			inner(d, r)
		}
	}
	bar := startProgressFor(s, paths)
	cr := &captureReader{opts: dopts, ropts: o.capture.reassemblyOptions(), wrap: bar.wrap, drain: drain, after: after,
		merge: o.files.Merge, start: o.start}
	cr.ropts.PacketFilter = pf
	if len(paths) > 1 && !o.files.Merge {
		cr.onFile = func(path string) {
			switch {
			case par != nil:
				par.Sync() // the previous file's exchanges are written with its name
			case ahead != nil:
				ahead.Sync() // and counted to it
			}
			sink.file = path
			if sel != nil {
				sel.nextFile()
			}
			if col != nil {
				col.SetFile(path)
			}
			if an != nil {
				an.SetFile(path)
			}
		}
	}
	sink.recycle = ds == dissect.Sink(sink) // not behind a pipeline that reads the exchange after
	run := cr.read(ctx, paths, ds)
	switch {
	case par != nil:
		par.Close()
	case ahead != nil:
		ahead.Close()
	}
	bar.finish()
	if sorter != nil && sorter.Late > 0 {
		fmt.Fprintf(s.ErrOut, "kwire: --sort time: %d exchange%s or event%s printed after a later one: answered after more than --sort-window %v, or the window was full (--sort-memory, %d time%s)\n",
			sorter.Late, plural(int(sorter.Late)), plural(int(sorter.Late)), o.SortWindow, sorter.Full, plural(int(sorter.Full)))
	}
	warnNamesRefused(s.ErrOut, o.capture.MaxNamesMemory, sink.names)
	if context.Cause(ctx) == errCountReached {
		fmt.Fprintf(s.ErrOut, "kwire: stopped after %d exchange%s (-c); the summary counts every packet read by then, which may go past the last exchange shown\n", o.Count, plural(o.Count))
	}

	var extra func(io.Writer) error
	var neighbours string // -w's note of credentials written beside the selection
	if sel != nil && run.readAny && !run.interrupted {
		wctx := context.WithoutCancel(ctx) // -c ended the read, not the writing
		wopts := cr.ropts
		wopts.Merge = cr.merge && len(paths) > 1 // numbered as the read numbered them
		n, err := writeSelection(wctx, paths, wopts, sel, sink.names, o.Write)
		if err != nil {
			return &exitError{code: exitData, err: fmt.Errorf("-w %s: %w", o.Write, err)}
		}
		extra = func(w io.Writer) error {
			_, err := fmt.Fprintf(w, "written: %d packet%s of %d exchange%s to %s\n", n, plural(int(n)), sel.n, plural(sel.n), o.Write)
			return err
		}
		if sel.n == 0 {
			// An empty file is what was asked for, but most likely not
			// what was meant: say so rather than leave it to be found.
			neighbours = fmt.Sprintf("kwire: warning: -w %s: no exchange was selected: the file holds no packets\n", o.Write)
		}
		if sel.held > 0 {
			neighbours += fmt.Sprintf("kwire: note: -w %s: %d exchange%s written can hold credentials (%s), which the file holds as captured: kwire's output withholds them, the file does not\n",
				o.Write, sel.held, plural(sel.held), strings.Join(sel.heldAPIs, ", "))
		}
		if sel.tls > 0 && o.capture.keys.blocks() > 0 {
			// The keys came with the input, not from a file the user
			// has: read back, the file's TLS stays encrypted.
			neighbours += fmt.Sprintf("kwire: note: -w %s: %d exchange%s written came decrypted from TLS with the keys of the input's Decryption Secrets Blocks (%d), which are not copied (a file for a bug report carries no keys): the file holds those exchanges encrypted; read it back with --tls-keylog and the clients' key log\n",
				o.Write, sel.tls, plural(sel.tls), o.capture.keys.blocks())
		}
		if apis, k := sel.neighbours(); k > 0 {
			neighbours += fmt.Sprintf("kwire: note: -w %s: packets written also carry %d frame%s of exchanges not selected that can hold credentials (%s): they share TCP segments with those selected, and the file holds every packet as captured\n",
				o.Write, k, plural(k), strings.Join(apis, ", "))
		}
	}
	if run.readAny {
		sink.summarize(s, color, extra)
		sink.noteUnmatched(s.ErrOut, &run)
	} // else nothing was read: the errors say why; no empty summary
	sink.check(w.Flush())
	if sink.err != nil {
		return &exitError{code: exitData, err: fmt.Errorf("writing output: %w", sink.err)}
	}
	io.WriteString(s.ErrOut, neighbours)
	return run.status(s.ErrOut)
}

// addTotals adds one file's totals that the sink's callbacks cannot see
// to the summary counts.
func (k *readSink) addTotals(ds dissect.Summary, rs reassembly.Summary) {
	c := &k.counts
	c.AddDissect(ds)
	c.Packets += rs.Packets
	c.FilteredOut += rs.FilteredOut
	c.Connections += rs.Connections
	c.UnsupportedLink += rs.UnsupportedLink
	c.Fragments += rs.Fragments
	c.FragmentConflicts += rs.FragmentConflicts
	c.SnapCut += rs.Truncated
	c.SnapLen = max(c.SnapLen, rs.TruncatedAt)
	c.BadPackets += rs.DecodeErrors
	c.Unparsed = addUnparsed(c.Unparsed, unparsed(rs))
	for _, f := range rs.Files {
		if errors.Is(f.Err, reassembly.ErrTruncated) && f.Packets > 0 {
			c.TruncatedFiles++
		}
	}
}

// summarize writes the closing summary: to stdout after the exchanges in
// text mode, to stderr with --json so that stdout stays NDJSON. extra,
// when not nil, adds lines after the summary's own. With --stats the
// statistics report follows, after an empty line: kwire stats's tables,
// or with --json its JSON document.
func (k *readSink) summarize(s *ioStreams, color bool, extra func(io.Writer) error) {
	if k.o.Findings && k.an != nil {
		// The findings close the exchanges' stream: lines of text, or
		// NDJSON objects of kind "finding".
		f := k.an.Findings()
		if k.o.JSON {
			k.check(statsview.WriteFindingsNDJSON(k.w, f, statsview.Options{Int64Strings: k.ropts.Int64Strings}))
		} else {
			if k.counts.Exchanges > 0 || k.shown > 0 {
				k.check(k.w.WriteByte('\n'))
			}
			k.check(statsview.WriteFindings(k.w, f, statsview.Options{Color: k.ropts.Color}))
		}
	}
	out, ropts := io.Writer(k.w), k.ropts
	if k.o.JSON {
		k.check(k.w.Flush())
		out, ropts = s.ErrOut, render.Options{Color: color && s.ErrTTY}
	} else if k.counts.Exchanges > 0 || k.shown > 0 {
		k.check(k.w.WriteByte('\n'))
	}
	k.check(render.Summary(out, &k.counts, ropts))
	if extra != nil {
		k.check(extra(out))
	}
	switch {
	case k.fl.active():
		why := "filtered"
		if k.o.Count > 0 && int64(k.shown) >= int64(k.o.Count) {
			// -c stopped the lines too: the totals count what was read
			// by then, not the whole capture.
			why += fmt.Sprintf(", -c %d", k.o.Count)
		}
		_, err := fmt.Fprintf(out, "shown: %d of %d exchanges (%s)\n", k.shown, k.counts.Exchanges, why)
		k.check(err)
	case k.o.Count > 0 && int64(k.shown) < int64(k.counts.Exchanges):
		// -c stopped the lines; the totals count what was read by then.
		_, err := fmt.Fprintf(out, "shown: %d of %d exchanges (-c %d)\n", k.shown, k.counts.Exchanges, k.o.Count)
		k.check(err)
	}
	if k.col != nil && k.o.JSON {
		// A tool reads the report as the stream's last record, not as
		// JSON mixed with the summary's text on stderr.
		var v any = statsview.StatsRecord{Kind: "stats", Stats: statsReport(k.col, k.an)}
		if k.ropts.Int64Strings {
			v = jsonint64.Strings(v)
		}
		b, err := json.Marshal(v)
		k.check(err)
		_, err = k.w.Write(append(b, '\n'))
		k.check(err)
	} else if k.col != nil {
		_, err := io.WriteString(out, "\n")
		k.check(err)
		k.check(writeStatsReport(out, k.col, k.an, false, statsview.Options{Color: ropts.Color}))
	}
}

// noteUnmatched says on w why --frame or --stream showed nothing, when
// they did: past the last packet or stream of the capture, a connection
// that is not Kafka, or no exchange there.
func (k *readSink) noteUnmatched(w io.Writer, run *captureRun) {
	fl := k.fl
	if k.shown == 0 && k.shownEvents == 0 && run.ds.Kafka > 0 {
		// --topic or --client-id alone: a name misspelt, or not the
		// capture's (as kwire groups --group says).
		alone := *fl
		alone.topics, alone.clientIDs = nil, nil
		switch {
		case alone.active():
		case len(fl.topics) > 0 && len(fl.clientIDs) == 0:
			fmt.Fprintf(w, "kwire: --topic %s matched nothing: no exchange of the capture names %s (a name matches whole, case and all; kwire read --json | jq -r '.topics[]' | sort -u lists them)\n",
				strings.Join(fl.topics, ","), pluralWord(len(fl.topics), "that topic", "those topics"))
		case len(fl.clientIDs) > 0 && len(fl.topics) == 0:
			fmt.Fprintf(w, "kwire: --client-id %s matched nothing: no request of the capture comes from %s (kwire stats lists its client IDs, CLIENTS)\n",
				strings.Join(fl.clientIDs, ","), pluralWord(len(fl.clientIDs), "that client ID", "those client IDs"))
		}
	}
	if k.shown == 0 && k.shownEvents == 0 && run.ds.Kafka > 0 && fl.window.active() && len(run.rs.Files) == 1 {
		// --since or --until alone: a window outside the capture (an
		// offset past its end, a time in another zone or day).
		alone := *fl
		alone.window = nil
		if t0, ok := fl.window.start.time(); ok && !alone.active() {
			fmt.Fprintf(w, "kwire: %s matched nothing: no exchange's request was captured in that window; the capture starts at %s (an offset such as 90s counts from there; kwire stats gives its span)\n",
				fl.window.flags(), t0.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)) // (captureStart sets the lowest bit)
		}
	}
	if k.shown > 0 || k.shownEvents > 0 || len(fl.frames) == 0 && fl.stream < 0 {
		return
	}
	others := *fl
	others.frames, others.stream = nil, -1
	filtered := ""
	if others.active() {
		filtered = " that the other filters let through"
	}
	the := "the capture has"
	if len(run.rs.Files) > 1 {
		the = "the largest capture has"
	}
	var packets int64
	for _, f := range run.rs.Files {
		packets = max(packets, f.Packets)
	}
	past := len(fl.frames) > 0
	for _, r := range fl.frames {
		past = past && r.First > packets
	}
	one := len(fl.frames) == 1 && fl.frames[0].First == fl.frames[0].Last
	switch {
	case past:
		fmt.Fprintf(w, "kwire: --frame %s matched nothing: %s %d packet%s\n", describeRanges(fl.frames), the, packets, plural(int(packets)))
	case one && k.waitedFor[0] == fl.frames[0].First:
		fmt.Fprintf(w, "kwire: --frame %d matched nothing: packet %d is a TCP retransmission (its bytes were delivered from their first copy) that the exchange at packet %d waited for; kwire read --frame %d shows it\n",
			fl.frames[0].First, fl.frames[0].First, k.waitedFor[1], k.waitedFor[1])
	case one:
		fmt.Fprintf(w, "kwire: --frame %d matched nothing: packet %d holds no part of a Kafka exchange%s\n", fl.frames[0].First, fl.frames[0].First, filtered)
	case len(fl.frames) > 0:
		fmt.Fprintf(w, "kwire: --frame %s matched nothing: those packets hold no part of a Kafka exchange%s\n", describeRanges(fl.frames), filtered)
	case fl.stream >= run.maxConns:
		last := ""
		if run.maxConns > 0 {
			last = fmt.Sprintf(" (streams 0-%d)", run.maxConns-1)
		}
		fmt.Fprintf(w, "kwire: --stream %d matched nothing: %s %d TCP connection%s%s\n", fl.stream, the, run.maxConns, plural(run.maxConns), last)
	case k.streamSkipped != "":
		fmt.Fprintf(w, "kwire: --stream %d matched nothing: the connection was skipped: %s\n", fl.stream, k.streamSkipped)
	default:
		fmt.Fprintf(w, "kwire: --stream %d matched nothing: the connection carried no Kafka exchange%s\n", fl.stream, filtered)
	}
}

// pluralWord is one for n == 1, else many.
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// analyzer returns the Analyzer of --findings (and of --stats's
// findings), nil without them; it names topic IDs with names, the run's.
func (o *readOptions) analyzer(names *facts.Names) (*analysis.Analyzer, error) {
	if !o.Findings && !o.Stats {
		return nil, nil
	}
	aopts, err := o.analysis.options()
	if err != nil {
		return nil, err
	}
	aopts.Findings = true
	aopts.Names = names
	return analysis.New(aopts), nil
}

// flagsNeeded refuses a flag given without the flag it works with: it
// would change nothing, and saying so beats a silent no-op (--top and
// --max-stats-memory without --stats are refused in statsCollector).
func (o *readOptions) flagsNeeded(fs *pflag.FlagSet) error {
	for _, c := range []struct {
		flag, needs string
		ok          bool
	}{
		{"sort-window", "--sort time", o.Sort == "time"},
		{"sort-memory", "--sort time", o.Sort == "time"},
		{"json-int64", "--json", o.JSON},
		{"slow", "--findings or --stats", o.Findings || o.Stats},
		{"max-analysis-memory", "--findings or --stats", o.Findings || o.Stats},
	} {
		if fs.Lookup(c.flag) != nil && fs.Changed(c.flag) && !c.ok {
			return usageErrorf("--%s needs %s", c.flag, c.needs)
		}
	}
	return nil
}

// statsCollector returns the Collector for --stats, nil without it; it
// names topic IDs with names, the run's.
func (o *readOptions) statsCollector(names *facts.Names) (*stats.Collector, error) {
	if !o.Stats {
		if o.Top != 0 {
			return nil, usageErrorf("--top needs --stats")
		}
		if o.statsMemSet {
			return nil, usageErrorf("--max-stats-memory needs --stats")
		}
		return nil, nil
	}
	return newStatsCollector(o.Top, o.StatsMem, names)
}

// topicArgs are the --topic values as exchanges name them: a topic ID
// given in the RFC 4122 form -V prints beside it
// ("4cf99528-81f9-1275-4fd0-f5726b5b194a") becomes Kafka's base64url form
// ("TPmVKIH5EnVP0PVya1sZSg"); names, and IDs given that way, stay.
func topicArgs(topics []string) []string {
	out := make([]string, 0, len(topics))
	for _, t := range topics {
		if len(t) == 36 && t[8] == '-' && t[13] == '-' && t[18] == '-' && t[23] == '-' {
			if raw, err := hex.DecodeString(strings.ReplaceAll(t, "-", "")); err == nil && len(raw) == 16 {
				t = render.UUIDString(raw)
			}
		}
		out = append(out, t)
	}
	return out
}

// filter builds the exchange filter from the flags.
func (o *readOptions) filter() (*exchangeFilter, error) {
	fl := &exchangeFilter{topics: o.Topics, clientIDs: o.ClientIDs, errors: o.Errors, stream: o.Stream}
	if o.Stream < -1 {
		return nil, usageErrorf("--stream must be a connection's number (0 or more), or -1 for all")
	}
	frames, err := parseFrameRanges(o.Frames)
	if err != nil {
		return nil, err
	}
	fl.frames = frames
	since, err := parseTimeBound("--since", o.Since)
	if err != nil {
		return nil, err
	}
	until, err := parseTimeBound("--until", o.Until)
	if err != nil {
		return nil, err
	}
	if err := checkWindow(since, until); err != nil {
		return nil, err
	}
	if since.set || until.set {
		// The capture's start: what an offset counts from, and what the
		// note of a window that matched nothing gives.
		o.start = &captureStart{}
		fl.window = &timeWindow{since: since, until: until, start: o.start}
	}
	if o.topicSet && (len(o.Topics) == 0 || slices.Contains(o.Topics, "")) {
		return nil, usageErrorf("--topic: a topic name or ID cannot be empty")
	}
	fl.topics = topicArgs(o.Topics)
	if len(o.APIs) > 0 {
		keys, err := parseAPIList(o.APIs)
		if err != nil {
			return nil, usageErrorf("--api: %v", err)
		}
		fl.apis = keys
	}
	if o.Filter != "" {
		p, bodies, err := compileFilter(o.Filter)
		if err != nil {
			return nil, &exitError{code: exitUsage, err: err}
		}
		fl.program, fl.bodies = p, bodies
	}
	return fl, nil
}

// readSink renders exchanges and events as they come and counts all of
// them for the summary.
//
// With --json its output is one JSON object per line (NDJSON), exchanges
// and events mixed in capture order: an exchange is render's TopicsDoc
// ("kind" paired, noResponse, unanswered, orphan or sasl), an event
// render's EventDoc (render.EventKindName). Consumers pick what they want
// by "kind", e.g. jq 'select(.kind == "gap")'.
type readSink struct {
	o      *readOptions
	fl     *exchangeFilter
	w      *bufio.Writer
	ropts  render.Options
	counts render.SummaryCounts
	shown  int
	// shownEvents counts the events written; streamSkipped is why the
	// --stream connection was skipped, "" when it was not.
	shownEvents   int
	streamSkipped string
	err           error                                  // first write error
	names         *facts.Names                           // topic names by ID, learnt in emit order
	file          string                                 // the file being read, when several are read as captures of their own
	stop          func()                                 // ends the reading (-c)
	picked        int                                    // exchanges selected so far (-c), in emit order
	day           string                                 // the UTC date of the last line shown (ClockTime)
	dayNum        int64                                  // that date as days since 1970-01-01, when day is set
	recycle       bool                                   // the Dissector calls Exchange itself: the exchange may be recycled after
	sel           *packetSelection                       // -w: the packets of the exchanges shown
	col           *stats.Collector                       // --stats: every exchange and event, filters or not
	an            *analysis.Analyzer                     // --findings, --stats: likewise
	roles         map[*reassembly.Conn][2]netip.AddrPort // --json: client and broker of each open Kafka connection

	lastFlush time.Time

	// waitedFor is, when --frame names a TCP retransmission that no
	// exchange's frames hold (the packet's bytes were delivered from
	// their first copy), the first retransmission seen in --frame's
	// ranges that an exchange the other filters let through waited for
	// (dissect.TCPTiming.RetransmissionFrame) and that exchange's first
	// packet: what "matched nothing" points to.
	waitedFor [2]int64
}

// flushEvery bounds how long output may sit in the buffer, so that
// reading a live capture from stdin shows exchanges as they happen.
const flushEvery = 200 * time.Millisecond

// retransmissionIn records in k.waitedFor a retransmission in --frame's
// ranges that ex, which --frame did not select, waited for, when the
// other filters let ex through (f: its fields, when they need them).
func (k *readSink) retransmissionIn(ex *dissect.Exchange, f *exchangeFields) {
	for _, fr := range [...]*dissect.Frame{ex.Request, ex.Response} {
		if fr == nil || fr.TCP == nil || fr.TCP.RetransmissionFrame <= 0 {
			continue
		}
		n := fr.TCP.RetransmissionFrame
		if !slices.ContainsFunc(k.fl.frames, func(r frameRange) bool { return n >= r.First && (r.Last == 0 || n <= r.Last) }) {
			continue
		}
		others := *k.fl
		others.frames = nil
		if others.active() && !others.match(ex, f) {
			return
		}
		first := ex.Request
		if first == nil {
			first = ex.Response
		}
		k.waitedFor = [2]int64{n, first.FirstPacket}
		return
	}
}

func (k *readSink) Exchange(ex *dissect.Exchange) {
	k.counts.Exchange(ex)
	if k.col != nil {
		k.col.Exchange(ex)
	}
	if k.an != nil {
		k.an.Exchange(ex)
	}
	v, show := k.prepare(ex, false)
	if show {
		k.shown++
		k.check(k.render(k.w, ex, v))
		k.maybeFlush()
	}
	// Nothing holds on to the frames once rendered (the counters and the
	// stats collector copy what they keep, the facts hold no node): their
	// trees' nodes go back to protocol's pools, their buffers can hold the
	// next frames. When the Dissector hands exchanges to this sink itself
	// (recycle), nothing holds on to the exchange either (the analyzer
	// keeps its facts, which are not reused): it and its frames and trees
	// are reused for the next ones.
	ex.Done(k.recycle)
}

// exchangeView is what rendering an exchange needs beyond its facts: the
// render options, with the exchange's facts (topic names resolved in emit
// order) for the tree.
// orderedRead is read's sink as the consumer of a pipeline.Ordered: the
// exchanges decoded and rendered on every core, written in order, byte
// for byte as the sink alone writes them.
type orderedRead struct{ k *readSink }

func (r orderedRead) Prepare(ex *dissect.Exchange) (any, bool) { return r.k.prepare(ex, true) }

func (r orderedRead) Render(w pipeline.Writer, ex *dissect.Exchange, view any) error {
	return r.k.render(w, ex, view.(exchangeView))
}

func (r orderedRead) Lines() bool { return r.k.o.JSON }

func (r orderedRead) AppendLine(b []byte, ex *dissect.Exchange, view any) []byte {
	return render.AppendExchangeJSON(b, ex, view.(exchangeView).ropts)
}

func (r orderedRead) Done(ex *dissect.Exchange, shown bool, err error) {
	k := r.k
	k.counts.Exchange(ex)
	if k.col != nil {
		k.col.Exchange(ex)
	}
	if shown {
		k.shown++
		k.check(err)
		k.maybeFlush()
	}
}

func (r orderedRead) Event(ev *dissect.Event) { r.k.Event(ev) }
func (r orderedRead) Out() *bufio.Writer      { return r.k.w }

type exchangeView struct {
	ropts   render.Options
	dayNote string // a line before the exchange's saying that the date changed
}

// prepare does what must be done in emit order before an exchange is
// rendered: it learns topic IDs from it and applies the filter. It
// returns the exchange's view and whether it is shown. With snapshot
// (rendering on other goroutines) the view's topic names are a copy that
// later learning leaves alone.
func (k *readSink) prepare(ex *dissect.Exchange, snapshot bool) (exchangeView, bool) {
	v, shown := k.choose(ex, snapshot)
	if !shown && k.sel != nil {
		k.sel.passOver(ex)
	}
	return v, shown
}

// choose is prepare but for -w's note of the exchanges passed over.
func (k *readSink) choose(ex *dissect.Exchange, snapshot bool) (exchangeView, bool) {
	// Topic IDs are learnt from every exchange, in emit order, so that the
	// line, the trees and the JSON name the topics of Produce v13+ and
	// Fetch v13+ alike (facts.Names).
	fx := ex.Facts()
	k.names.Resolve(fx)
	var f *exchangeFields
	if k.fl.active() {
		f = fieldsOf(ex, k.names, k.fl.program != nil, k.fl.bodies)
	}
	if k.fl.active() && !k.fl.match(ex, f) {
		if len(k.fl.frames) > 0 && k.waitedFor[0] == 0 {
			k.retransmissionIn(ex, f)
		}
		return exchangeView{}, false
	}
	if k.o.Count > 0 {
		if k.picked >= k.o.Count {
			return exchangeView{}, false
		}
		if k.picked++; k.picked == k.o.Count {
			k.stop()
		}
	}
	if k.sel != nil {
		k.sel.add(ex, fx)
	}
	v := exchangeView{ropts: k.ropts}
	v.ropts.Facts = fx
	v.ropts.File = k.file
	if !k.o.JSON {
		v.dayNote = k.dayChange(ex.Time())
	}
	return v, true
}

const secondsPerDay = 24 * 60 * 60

// dayChange returns the line that says the date changed before a line of
// time t, "" when it did not: lines give only the time of day unless
// --utc or --local. The first line's date is said only once the capture
// reaches a second day.
func (k *readSink) dayChange(t time.Time) string {
	if k.ropts.Clock != render.ClockTime || t.IsZero() {
		return ""
	}
	// The date is formatted only when it changes: the day's number says
	// whether it did (a line's Format cost as much as the rest of its
	// time of day).
	n := t.Unix() / secondsPerDay
	if t.Unix() < 0 && t.Unix()%secondsPerDay != 0 {
		n-- // before 1970: the day that began before t
	}
	if k.day != "" && n == k.dayNum {
		return ""
	}
	day := t.UTC().Format(time.DateOnly)
	prev := k.day
	k.day, k.dayNum = day, n
	if prev == "" || prev == day {
		return ""
	}
	return "--- " + day + " (UTC) begins; the lines above are of " + prev + " or before (--utc gives every line its date) ---\n"
}

// render writes an exchange in the output mode: a JSON line, or a summary
// line followed with -V and -x by the frames' details and an empty line.
// It reads only k's options and v, so workers may call it at once.
func (k *readSink) render(w byteWriter, ex *dissect.Exchange, v exchangeView) error {
	if k.o.JSON {
		return render.ExchangeJSONLine(w, ex, v.ropts)
	}
	var err error
	if v.dayNote != "" {
		_, err = io.WriteString(w, v.dayNote)
	}
	err = firstError(err, render.Line(w, ex, v.ropts))
	if k.o.Tree || k.o.HexDump {
		err = firstError(err, k.frameDetail(w, v.ropts, "request", ex.Request, ex.TLS))
		resp := "response"
		if g := ex.Guess; g != nil && g.Decoded {
			resp = fmt.Sprintf("response (no request captured: decoded as %s v%d, a guess)", protocol.APIName(g.APIKey), g.APIVersion)
		}
		err = firstError(err, k.frameDetail(w, v.ropts, resp, ex.Response, ex.TLS))
		err = firstError(err, w.WriteByte('\n'))
	}
	return err
}

// byteWriter is what render writes to: the output's bufio.Writer, or a
// worker's buffer.
type byteWriter interface {
	io.Writer
	io.ByteWriter
}

func firstError(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// frameDetail writes a frame's tree (-V) and annotated hex (-x) under a
// "  request, packet 12:" heading, indented by four spaces; tls says the
// frame was decrypted ("  request, packet 12, decrypted from TLS:": the
// offsets and bytes are the plaintext's, the packets those that carried
// its records).
func (k *readSink) frameDetail(w io.Writer, ropts render.Options, what string, fr *dissect.Frame, tls bool) error {
	if fr == nil || fr.Tree == nil && len(fr.Bytes) == 0 && !fr.Withheld {
		return nil
	}
	// The heading is built on the stack: frameDetail runs twice for
	// every exchange -V shows.
	var hb [96]byte
	h := append(hb[:0], "  "...)
	h = append(h, what...)
	h = append(h, ", packet"...)
	if fr.LastPacket != fr.FirstPacket {
		h = append(h, 's')
	}
	h = append(h, ' ')
	h = strconv.AppendInt(h, fr.FirstPacket, 10)
	if fr.LastPacket != fr.FirstPacket {
		h = append(h, '-')
		h = strconv.AppendInt(h, fr.LastPacket, 10)
	}
	if tls {
		h = append(h, ", decrypted from TLS"...)
	}
	h = append(h, ":\n"...)
	if _, err := w.Write(h); err != nil {
		return err
	}
	if fr.Tree == nil {
		return render.UndecodedFrame(&indentWriter{w: w, prefix: "    ", bol: true}, fr)
	}
	if k.o.Tree {
		topts := ropts
		topts.Indent = 2 // the tree indents itself, as the indent writer the rest
		if err := render.Tree(w, fr.Tree, topts); err != nil {
			return err
		}
	}
	if k.o.HexDump {
		return render.Hex(&indentWriter{w: w, prefix: "    ", bol: true}, fr.Tree, ropts)
	}
	return nil
}

func (k *readSink) Event(ev *dissect.Event) {
	k.counts.Event(ev)
	if k.col != nil {
		k.col.Event(ev)
	}
	if ev.Kind == dissect.EventSkipped && ev.Conn != nil && ev.Conn.Index == k.fl.stream && k.streamSkipped == "" {
		k.streamSkipped = ev.Detail
	}
	if k.an != nil {
		k.an.Event(ev)
	}
	if k.o.JSON {
		k.jsonEvent(ev)
		return
	}
	if !k.showEvent(ev) {
		return
	}
	k.shownEvents++
	ropts := k.ropts
	ropts.File = k.file
	if k.o.HexDump {
		k.check(render.EventHex(k.w, ev, ropts)) // with the bytes a resync skipped
	} else {
		k.check(render.EventLine(k.w, ev, ropts))
	}
	k.maybeFlush()
}

// jsonEvent writes an event shown as a line of the NDJSON stream, keeping
// track of which side of each open Kafka connection is the client.
func (k *readSink) jsonEvent(ev *dissect.Event) {
	if ev.Conn != nil {
		switch ev.Kind {
		case dissect.EventOpen:
			if k.roles == nil {
				k.roles = make(map[*reassembly.Conn][2]netip.AddrPort)
			}
			client, broker := ev.Conn.A, ev.Conn.B
			if ev.Dir == reassembly.BtoA {
				client, broker = broker, client
			}
			k.roles[ev.Conn] = [2]netip.AddrPort{client, broker}
		case dissect.EventClose:
			defer delete(k.roles, ev.Conn)
		}
	}
	if k.showEvent(ev) {
		k.shownEvents++
		r := k.roles[ev.Conn]
		k.check(render.EventJSON(k.w, ev, r[0], r[1], k.file))
		k.maybeFlush()
	}
}

// showEvent decides whether an event is printed. With --verbose every
// event is (on the --stream asked for); otherwise opens, closes,
// skipped connections and cuts (kwire read -w's: the summary counts them)
// are not, and anomalies (gaps, resyncs, TLS, frames
// that are not Kafka) are unless a filter other than --stream narrows the
// output to some exchanges.
func (k *readSink) showEvent(ev *dissect.Event) bool {
	if k.fl.stream >= 0 && (ev.Conn == nil || ev.Conn.Index != k.fl.stream) {
		return false
	}
	if k.o.Verbose {
		return true
	}
	switch ev.Kind {
	case dissect.EventOpen, dissect.EventClose, dissect.EventSkipped, dissect.EventCut:
		return false
	case dissect.EventTLSNote:
		if ev.Note == dissect.TLSNoteClose || ev.Note == dissect.TLSNoteKeyUpdate {
			return false // routine TLS: with --verbose
		}
	}
	others := *k.fl
	others.stream = -1
	return !others.active()
}

func (k *readSink) check(err error) {
	if err != nil && k.err == nil {
		k.err = err
	}
}

func (k *readSink) maybeFlush() {
	if now := time.Now(); now.Sub(k.lastFlush) >= flushEvery {
		k.check(k.w.Flush())
		k.lastFlush = now
	}
}

// indentWriter prefixes every line written through it.
type indentWriter struct {
	w      io.Writer
	prefix string
	bol    bool // at the beginning of a line
	buf    []byte
}

func (iw *indentWriter) Write(p []byte) (int, error) {
	n := len(p)
	if c, ok := iw.w.(*pipeline.Output); ok {
		// A worker's chunks: the lines go straight in, not through buf.
		iw.bol = c.WritePrefixed(p, iw.prefix, iw.bol)
		return n, nil
	}
	iw.buf = iw.buf[:0]
	for len(p) > 0 {
		if iw.bol && p[0] != '\n' {
			iw.buf = append(iw.buf, iw.prefix...)
		}
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			iw.buf = append(iw.buf, p...)
			iw.bol = false
			break
		}
		iw.buf = append(iw.buf, p[:i+1]...)
		iw.bol = true
		p = p[i+1:]
	}
	if _, err := iw.w.Write(iw.buf); err != nil {
		return 0, err
	}
	return n, nil
}
