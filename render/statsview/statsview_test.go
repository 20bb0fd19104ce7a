package statsview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/analysis"
	"github.com/kwire/kwire/dissect/profile"
	"github.com/kwire/kwire/dissect/stats"
)

func sampleReport() *StatsDoc {
	return &StatsDoc{Report: stats.Report{
		First: "2026-01-02T03:04:05Z", Last: "2026-01-02T03:04:06.5Z",
		Exchanges: 3, Orphans: 1, SASLTokens: 0, SkippedConn: 2,
		APIs: []stats.APIStats{{Key: 0, Name: "Produce", Version: 9, Requests: 2, Responses: 1, Unanswered: 1,
			RequestBytes: 300, ResponseBytes: 60,
			Latency: stats.LatencySummary{Count: 1, Min: 5e6, P50: 5e6, P90: 5e6, P99: 5e6, Max: 5e6, Mean: 5e6, Exact: true},
			Errors:  []stats.ErrorCount{{Name: "NOT_LEADER_OR_FOLLOWER", Code: 6, Count: 2}}}},
		Clients: []stats.ClientStats{{ClientID: ptr("app"), Software: []string{"kgo/1.0"}, Addresses: []string{"10.0.0.1"},
			Connections: 1, Requests: 2, APIs: []stats.APIUse{{Key: 0, Name: "Produce", Versions: []int16{9}, Requests: 2}},
			Errors: []stats.ErrorCount{{Name: "NOT_LEADER_OR_FOLLOWER", Code: 6, Count: 2}}}},
		Partitions: []stats.PartitionStats{{Topic: "orders", TopicID: "AQIDBAUGBwgJCgsMDQ4PEA", Partition: 1,
			Produce: stats.FlowStats{Batches: 1, Records: 5, WireBytes: 120, UncompressedBytes: 400, UnknownSize: 1},
			Codecs:  []string{"gzip"}}},
		Connections: []stats.ConnStats{{File: "a.pcap", Index: 0, Client: "10.0.0.1:5000", Broker: "10.0.0.9:9092",
			First: "2026-01-02T03:04:05Z", Last: "2026-01-02T03:04:06.5Z", Duration: 1.5e9, RequestFrames: 2,
			ResponseFrames: 2, Gaps: 1, GapBytes: 10, Retransmissions: 3, Orphans: 1, Closed: true}},
		Latency: []stats.LatencyOverAPI{{Key: 0, Name: "Produce", Count: 3,
			Distribution: []stats.DistBin{{Lo: 1 << 20, Hi: 1 << 21, Count: 2}, {Lo: 1 << 21, Hi: 1 << 22}, {Lo: 1 << 22, Hi: 1 << 23, Count: 1}},
			Origin:       "2026-01-02T03:04:05Z", BinWidth: 1e7,
			OverTime: []stats.TimeBin{{Count: 1, Mean: 1e6, Max: 1e6}, {}, {Count: 2, Mean: 5e6, Max: 8e6}}}},
		Slowest: []stats.SlowExchange{{Latency: 5e6, Key: 0, Name: "Produce", Version: 9, CorrelationID: 7,
			ClientID: ptr("app"), Client: "10.0.0.1:5000", Broker: "10.0.0.9:9092", RequestFrame: 12, ResponseFrame: 14,
			Time: "2026-01-02T03:04:05Z", File: "a.pcap"}},
	}, Findings: []analysis.Finding{sampleFinding()}}
}

func sampleFinding() analysis.Finding {
	at := analysis.Time(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	rtt := analysis.Millis(40e6)
	return analysis.Finding{Rule: analysis.RuleSlowNetwork, Severity: analysis.SevWarning, Time: at, Last: at,
		Subject: "app Produce broker 10.0.0.9:9092", ClientID: ptr("app"), Broker: ptr("10.0.0.9:9092"), API: ptr("Produce"),
		Count: 2, Detail: "2 exchanges of 100ms or more", Packets: []int64{12, 14}, MorePackets: 3, File: "a.pcap",
		Split: &analysis.Split{Time: at, Frame: 12, TotalMs: 375e6, BrokerMs: 1e6, NetworkMs: 374e6, RoundTripMs: &rtt,
			RequestMs: 334e6, RetransmittedMs: &rtt, ResponseMs: 0, Retransmissions: 1, Verdict: "network"}}
}

func ptr[T any](v T) *T { return &v }

func sampleVersions() *stats.VersionsReport {
	prod := stats.Range{Key: 0, Name: "Produce", Min: 0, Max: 11}
	return &stats.VersionsReport{
		Brokers: []stats.BrokerVersions{{Broker: "10.0.0.9:9092", Effective: 0, Advertisements: []stats.Advertisement{{
			RequestVersion: 3, Error: "NONE", Ranges: []stats.Range{prod},
			SupportedFeatures: []stats.Feature{{Name: "metadata.version", Min: 1, Max: 20}},
			FinalizedFeatures: []stats.FinalizedFeature{{Name: "metadata.version", Min: 20, Max: 20}}, FinalizedEpoch: 3,
			FirstPacket: 2, Conn: 0, Count: 1}}}},
		Clients: []stats.ClientVersions{{ClientID: ptr("app"), Software: []string{"kgo/1.0"},
			APIs: []stats.APIUse{{Key: 0, Name: "Produce", Versions: []int16{12}, Requests: 1}}}},
		Matrix: []stats.MatrixRow{{Key: 0, API: "Produce", ClientID: ptr("app"), Broker: "10.0.0.9:9092", Versions: []int16{12},
			Requests: 1, Advertised: &prod, Listed: true, Status: "outside", Flags: []stats.FlagKind{stats.FlagOutOfRange}}},
		Flags: []stats.Flag{{Kind: stats.FlagOutOfRange, Key: 0, API: "Produce", Version: 12, ClientID: "app",
			Broker: "10.0.0.9:9092", Frame: 5, Count: 1, Detail: "Produce v12 used, the broker advertises v0-11"}},
	}
}

// jsonKeys lists every object key path in a JSON document ("apis[].latency.p50Ms").
func jsonKeys(t *testing.T, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	set := map[string]bool{}
	var walk func(string, any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				q := k
				if p != "" {
					q = p + "." + k
				}
				set[q] = true
				walk(q, c)
			}
		case []any:
			for _, c := range x {
				walk(p+"[]", c)
			}
		}
	}
	walk("", v)
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestStatsJSONFields(t *testing.T) {
	var b bytes.Buffer
	d := sampleReport()
	d.FoldedConnections = &stats.FoldedConns{Connections: 1}
	d.Clients[0].AddressesCapped = true
	if err := WriteStatsJSON(&b, d, Options{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"apis", "apis[].errors", "apis[].errors[].code", "apis[].errors[].count", "apis[].errors[].name",
		"apis[].apiKey", "apis[].latency", "apis[].latency.count", "apis[].latency.exact", "apis[].latency.maxMs",
		"apis[].latency.meanMs", "apis[].latency.minMs", "apis[].latency.p50Ms", "apis[].latency.p90Ms",
		"apis[].latency.p99Ms", "apis[].api", "apis[].noResponse", "apis[].requestBytes", "apis[].requests",
		"apis[].responseBytes", "apis[].responses", "apis[].unanswered", "apis[].apiVersion",
		"clients", "clients[].addresses", "clients[].apis", "clients[].apis[].apiKey", "clients[].apis[].api",
		"clients[].apis[].requests", "clients[].apis[].versions", "clients[].clientId", "clients[].clientIdNotCaptured", "clients[].connections",
		"clients[].errors", "clients[].errors[].code", "clients[].errors[].count", "clients[].errors[].name",
		"clients[].addressesCapped", "clients[].requests", "clients[].software",
		"connections", "connections[].badFrames", "connections[].broker", "connections[].client", "connections[].closed",
		"connections[].conflicts", "connections[].decodeFailures", "connections[].durationMs", "connections[].file", "connections[].first",
		"connections[].gapBytes", "connections[].gaps", "connections[].stream", "connections[].last",
		"connections[].orphans", "connections[].outOfOrder", "connections[].requestBytes", "connections[].requestFrames",
		"connections[].responseBytes", "connections[].responseFrames", "connections[].resyncs",
		"connections[].retransmissions", "connections[].truncated", "connections[].unanswered",
		"errorPlaces", "errorPlacesFolded", "exchanges", "first", "last",
		"foldedConnections", "foldedConnections.badFrames", "foldedConnections.conflicts", "foldedConnections.connections", "foldedConnections.decodeFailures",
		"foldedConnections.first", "foldedConnections.gapBytes", "foldedConnections.gaps", "foldedConnections.last",
		"foldedConnections.maxMemoryBytes", "foldedConnections.maxProblems", "foldedConnections.orphans", "foldedConnections.outOfOrder",
		"foldedConnections.requestBytes", "foldedConnections.requestFrames", "foldedConnections.responseBytes",
		"foldedConnections.responseFrames", "foldedConnections.resyncs", "foldedConnections.retransmissions",
		"foldedConnections.tls", "foldedConnections.tlsDecrypted", "foldedConnections.truncated", "foldedConnections.unanswered",
		"findings", "findings[].api", "findings[].broker", "findings[].clientId", "findings[].count", "findings[].detail",
		"findings[].file", "findings[].groupId", "findings[].last", "findings[].moreFrames", "findings[].frames",
		"findings[].partition", "findings[].rule", "findings[].severity", "findings[].split", "findings[].split.brokerMs",
		"findings[].split.requestFrame", "findings[].split.networkMs", "findings[].split.outOfOrder", "findings[].split.queuedMs",
		"findings[].split.requestMs", "findings[].split.responseMs", "findings[].split.retransmissions",
		"findings[].split.retransmittedMs", "findings[].split.roundTripMs", "findings[].split.time", "findings[].split.totalMs", "findings[].split.uncaptured",
		"findings[].split.verdict", "findings[].split.windowFull", "findings[].split.zeroWindows", "findings[].subject",
		"findings[].first", "findings[].topic", "findingsDropped",
		"latency", "latency[].binWidthMs", "latency[].count", "latency[].distribution", "latency[].distribution[].count",
		"latency[].distribution[].hiMs", "latency[].distribution[].loMs", "latency[].apiKey", "latency[].api",
		"latency[].startTime", "latency[].overTime", "latency[].overTime[].count", "latency[].overTime[].maxMs",
		"latency[].overTime[].meanMs",
		"orphans", "cutFrames", "notCapturedBytes",
		"partitions", "partitions[].codecs", "partitions[].fetch", "partitions[].fetch.batches", "partitions[].fetch.records",
		"partitions[].fetch.uncompressedBytes", "partitions[].fetch.unknownSizeBatches", "partitions[].fetch.wireBytes",
		"partitions[].partition", "partitions[].produce", "partitions[].produce.batches", "partitions[].produce.records",
		"partitions[].produce.uncompressedBytes", "partitions[].produce.unknownSizeBatches", "partitions[].produce.wireBytes",
		"partitions[].topic", "partitions[].topicId",
		"saslTokens", "skippedConnections",
		"slowest", "slowest[].broker", "slowest[].client", "slowest[].clientId", "slowest[].clientIdNotCaptured", "slowest[].stream",
		"slowest[].correlationId", "slowest[].file", "slowest[].apiKey", "slowest[].latencyMs", "slowest[].api",
		"slowest[].requestFrame", "slowest[].responseFrame", "slowest[].time", "slowest[].apiVersion", "slowest[].waitMs",
	}
	sort.Strings(want)
	if got := jsonKeys(t, b.Bytes()); !reflect.DeepEqual(got, want) {
		t.Errorf("stats JSON fields changed:\n got %q\nwant %q", got, want)
	}
}

func TestVersionsJSONFields(t *testing.T) {
	var b bytes.Buffer
	r := sampleVersions()
	r.Folded = &stats.VersionsFolded{MaxMemory: 1}
	r.Clients[0].Capped = true
	if err := WriteVersionsJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"brokers", "brokers[].advertisements", "brokers[].advertisements[].stream", "brokers[].advertisements[].count",
		"brokers[].advertisements[].error", "brokers[].advertisements[].finalizedFeatures",
		"brokers[].advertisements[].finalizedFeatures[].maxVersionLevel", "brokers[].advertisements[].finalizedFeatures[].minVersionLevel",
		"brokers[].advertisements[].finalizedFeatures[].name", "brokers[].advertisements[].finalizedFeaturesEpoch",
		"brokers[].advertisements[].frame", "brokers[].advertisements[].ranges",
		"brokers[].advertisements[].ranges[].apiKey", "brokers[].advertisements[].ranges[].maxVersion",
		"brokers[].advertisements[].ranges[].minVersion", "brokers[].advertisements[].ranges[].api",
		"brokers[].advertisements[].requestVersion", "brokers[].advertisements[].supportedFeatures",
		"brokers[].advertisements[].supportedFeatures[].maxVersion", "brokers[].advertisements[].supportedFeatures[].minVersion",
		"brokers[].advertisements[].supportedFeatures[].name", "brokers[].broker", "brokers[].effective",
		"clients", "clients[].apis", "clients[].apis[].apiKey", "clients[].apis[].api", "clients[].apis[].requests",
		"clients[].apis[].versions", "clients[].capped", "clients[].clientId", "clients[].clientIdNotCaptured", "clients[].software",
		"flags", "flags[].api", "flags[].broker", "flags[].clientId", "flags[].count", "flags[].detail", "flags[].frame",
		"flags[].apiKey", "flags[].kind", "flags[].apiVersion",
		"folded", "folded.advertisements", "folded.anomalies", "folded.brokerResponses", "folded.clientRequests",
		"folded.matrixRequests", "folded.maxMemoryBytes",
		"matrix", "matrix[].advertised", "matrix[].advertised.apiKey", "matrix[].advertised.maxVersion", "matrix[].advertised.minVersion",
		"matrix[].advertised.api", "matrix[].api", "matrix[].broker", "matrix[].clientId", "matrix[].clientIdNotCaptured", "matrix[].flags",
		"notCapturedAdvertisements",
		"matrix[].apiKey", "matrix[].listed", "matrix[].requests", "matrix[].status", "matrix[].versions",
	}
	sort.Strings(want)
	if got := jsonKeys(t, b.Bytes()); !reflect.DeepEqual(got, want) {
		t.Errorf("versions JSON fields changed:\n got %q\nwant %q", got, want)
	}
}

var escape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestColor: no escape code without Color; with it, removing the escapes
// gives the uncolored output byte for byte (alignment does not move).
func TestColor(t *testing.T) {
	writers := map[string]func(*bytes.Buffer, Options) error{
		"stats":    func(b *bytes.Buffer, o Options) error { return WriteStats(b, sampleReport(), o) },
		"versions": func(b *bytes.Buffer, o Options) error { return WriteVersions(b, sampleVersions(), o) },
		"compare": func(b *bytes.Buffer, o Options) error {
			return WriteComparison(b, "a", "b", stats.Compare(sampleVersions(), sampleVersions()), o)
		},
	}
	for name, write := range writers {
		var plain, colored bytes.Buffer
		if err := write(&plain, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := write(&colored, Options{Color: true}); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(plain.Bytes(), []byte("\x1b")) {
			t.Errorf("%s: escape code with Color off", name)
		}
		if !bytes.Contains(colored.Bytes(), []byte("\x1b[")) {
			t.Errorf("%s: no color with Color on", name)
		}
		if got := escape.ReplaceAllString(colored.String(), ""); got != plain.String() {
			t.Errorf("%s: colored output differs once escapes are removed:\n%s\n---\n%s", name, got, plain.String())
		}
	}
}

func TestStatsText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteStats(&b, sampleReport(), Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"capture: 2026-01-02T03:04:05Z to 2026-01-02T03:04:06.5Z (1.50s)\n",
		"exchanges: 3 (of which orphan responses: 1, SASL token exchanges: 0), connections: 1 Kafka, 2 skipped\n",
		"API      VER  REQ/RESP  UNANS  NO-RESP     BYTES     P50     P99     MAX  ERRORS\n",
		"Produce    9       2/1      1        0  300B/60B  5.00ms  5.00ms  5.00ms  NOT_LEADER_OR_FOLLOWER×2\n",
		"CLIENT ID  SOFTWARE  ADDRESSES  CONNS  REQS  ERRORS\n",
		"app        kgo/1.0   10.0.0.1       1     2  NOT_LEADER_OR_FOLLOWER×2\n  APIs: Produce v9\n\n",
		"orders  1           1       5    120B     400B+?        0       0      0B         0B  gzip\n",
		"#  CLIENT         BROKER         DURATION  REQ FR  RESP FR  STATE   PROBLEMS\n",
		"0  10.0.0.1:5000  10.0.0.9:9092     1.50s       2        2  closed  1 gap, 3 retransmissions, 1 orphan\n",
		"  1.05ms  < 2.10ms  ██████████████████████████████  2\n",
		"       …\n",
		"  over time, max per 10.0ms from 2026-01-02T03:04:05Z (peak 8.00ms):\n  ▁·█\n",
		"5.00ms   5.00ms           -  Produce    9        7  app        10.0.0.1:5000  10.0.0.9:9092     0       12        14\n",
		"FINDINGS (docs/findings.md; kwire read --frame N shows a packet's exchange)\n" +
			"03:04:05.000 warning slow-network app Produce broker 10.0.0.9:9092 ×2\n    2 exchanges of 100ms or more [a.pcap packets 12,14 +3]\n\nAPIS\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(l, " ") {
			t.Errorf("trailing space: %q", l)
		}
	}
}

// TestStatsFolded: connections folded by the Collector's budget count in
// the summary line and the "N of M" line, and their totals are given.
func TestStatsFolded(t *testing.T) {
	d := sampleReport()
	d.FoldedConnections = &stats.FoldedConns{Connections: 40990, TLS: 3, TLSDecrypted: 2, MaxMemory: 8 << 20, MaxProblems: 1,
		First: "2026-01-02T03:04:05Z", Last: "2026-01-02T03:04:06Z", RequestFrames: 120000, ResponseFrames: 119000,
		RequestBytes: 12 << 20, ResponseBytes: 30 << 20, Unanswered: 1000, Retransmissions: 1}
	var b bytes.Buffer
	if err := WriteStats(&b, d, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"connections: 40988 Kafka (2 decrypted from TLS), 3 TLS (not decrypted), 2 skipped\n",
		"1 of 40991 connections shown: those with problems, then the busiest (1 row kept, all shown)\n" +
			"+40990 connections folded into these totals, without rows (--max-stats-memory 8MiB): ended, at most 1 problem each\n" +
			"  their totals: 120000 request frames, 119000 response frames, 12.0MiB in requests/30.0MiB in responses, 1 retransmission, 1000 unanswered\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	d.Connections = nil
	b.Reset()
	if err := WriteStats(&b, d, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "CONNECTIONS\n+40990 connections folded"; !strings.Contains(b.String(), want) {
		t.Errorf("missing %q in\n%s", want, b.String())
	}
}

func TestVersionsText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteVersions(&b, sampleVersions(), Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		" * ApiVersions v3: no error, 1 API range, packet 2, conn 0, seen 1×\n",
		"     supported features: metadata.version 1-20\n",
		"     finalized features (epoch 3): metadata.version 20-20\n",
		"Produce  app        10.0.0.9:9092    12        0-11  outside  out-of-range\n",
		"out-of-range Produce: Produce v12 used, the broker advertises v0-11 [client app, broker 10.0.0.9:9092, packet 5]\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

func TestDuration(t *testing.T) {
	// The same format as kwire read's latency (render/units).
	for ns, want := range map[int64]string{0: "0", 850: "0.001ms", 1000: "0.001ms", 12500: "0.013ms", 3250000: "3.25ms",
		999999: "1.00ms", 209000: "0.209ms", 99960: "0.100ms", 1.5e9: "1.50s", 123456789: "123ms", 999.6e6: "1.00s"} {
		if got := Duration(ns); got != want {
			t.Errorf("Duration(%d) = %q, want %q", ns, got, want)
		}
	}
}

// TestStatsNarrow: long client lists are cut with "+N more" and a note, so that
// no line passes 120 columns; the JSON keeps every item.
func TestStatsNarrow(t *testing.T) {
	r := sampleReport()
	cl := &r.Clients[0]
	cl.ClientID = ptr("a-rather-long-client-id-for-width")
	cl.APIs = nil
	for i, name := range []string{"Produce", "Fetch", "ListOffsets", "Metadata", "OffsetCommit", "OffsetFetch",
		"FindCoordinator", "JoinGroup", "Heartbeat", "LeaveGroup", "SyncGroup", "DescribeGroups", "ApiVersions",
		"InitProducerId", "EndTxn", "GetTelemetrySubscriptions"} {
		cl.APIs = append(cl.APIs, stats.APIUse{Key: int16(i), Name: name, Versions: []int16{int16(i), 12}, Requests: 1})
	}
	cl.Errors = []stats.ErrorCount{{Name: "NOT_LEADER_OR_FOLLOWER", Code: 6, Count: 2},
		{Name: "UNKNOWN_TOPIC_OR_PARTITION", Code: 3, Count: 7}, {Name: "REQUEST_TIMED_OUT", Code: 7, Count: 1}}
	var b bytes.Buffer
	if err := WriteStats(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"a-rather-long-client-id-for-width  kgo/1.0   10.0.0.1       1     2  NOT_LEADER_OR_FOLLOWER×2, +2 more\n",
		"  APIs: Produce v0,v12, Fetch v1,v12, ListOffsets v2,v12, Metadata v3,v12, OffsetCommit v4,v12, +11 more\n",
		"lists ending in \"+N more\" leave N out; --json lists them all\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if n := width(l); n > 120 {
			t.Errorf("%d columns: %s", n, l)
		}
	}
	b.Reset()
	if err := WriteStatsJSON(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"GetTelemetrySubscriptions"`) || !strings.Contains(b.String(), `"REQUEST_TIMED_OUT"`) {
		t.Error("JSON lost list items")
	}
}

func TestFitList(t *testing.T) {
	for _, tc := range []struct {
		items []string
		max   int
		want  string
	}{
		{nil, 10, "-"},
		{[]string{"Produce", "Fetch"}, 20, "Produce, Fetch"},
		{[]string{"Produce", "Fetch", "Metadata", "ApiVersions"}, 29, "Produce, Fetch, +2 more"},
		{[]string{"AVeryLongApiNameIndeed", "Fetch"}, 10, "AVeryLongApiNameIndeed, +1 more"},
	} {
		if got := fitList(tc.items, tc.max); got != tc.want {
			t.Errorf("fitList(%q, %d) = %q, want %q", tc.items, tc.max, got, tc.want)
		}
	}
}

// TestVersionsReadable: the trial's complaints about kwire versions.
func TestVersionsReadable(t *testing.T) {
	prod := stats.Range{Key: 0, Name: "Produce", Min: 3, Max: 13}
	prod2 := stats.Range{Key: 0, Name: "Produce", Min: 3, Max: 7}
	av := stats.Range{Key: 18, Name: "ApiVersions", Min: 0, Max: 2}
	olde := stats.Range{Key: 23, Name: "OffsetForLeaderEpoch", Min: 3, Max: 2}
	r := &stats.VersionsReport{
		Brokers: []stats.BrokerVersions{
			{Broker: "10.0.0.8:9092", Effective: 0, Advertisements: []stats.Advertisement{{RequestVersion: 5, Error: "NONE",
				Ranges: []stats.Range{prod}, FinalizedEpoch: -1, FirstPacket: 2, Count: 1}}},
			{Broker: "10.0.0.9:9092", Effective: 1, Advertisements: []stats.Advertisement{
				{RequestVersion: 5, Error: "UNSUPPORTED_VERSION", Ranges: []stats.Range{av}, FinalizedEpoch: -1, FirstPacket: 3, Count: 4},
				{RequestVersion: 2, Error: "NONE", Ranges: []stats.Range{prod2, av, olde}, FinalizedEpoch: -1, FirstPacket: 5, Count: 1}}}},
		Clients: []stats.ClientVersions{{ClientID: ptr("app")}},
		Matrix: []stats.MatrixRow{
			{Key: 0, API: "Produce", ClientID: ptr("app"), Broker: "10.0.0.9:9092", Versions: []int16{7}, Advertised: &prod2,
				Listed: true, Status: "ok", Flags: []stats.FlagKind{stats.FlagMixed}},
			{Key: 18, API: "ApiVersions", ClientID: ptr("app"), Broker: "10.0.0.9:9092", Versions: []int16{2, 5}, Advertised: &av,
				Listed: true, Status: "downgraded", Flags: []stats.FlagKind{stats.FlagDowngrade}}},
		Flags: []stats.Flag{
			{Kind: stats.FlagNoUsable, Key: 23, API: "OffsetForLeaderEpoch", Version: -1, Broker: "10.0.0.9:9092",
				Detail: "the broker advertises v3-2: no usable version (min 3 > max 2)"},
			{Kind: stats.FlagMixed, Key: 0, API: "Produce", Version: -1, Detail: "brokers advertise different ranges"}},
	}
	var b bytes.Buffer
	if err := WriteVersions(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		" * ApiVersions v5: no error, 1 API range, packet 2, conn 0, seen 1×\n",
		"   ApiVersions v5: UNSUPPORTED_VERSION, 1 API range (KIP-511: the broker's own ApiVersions range, for the client to retry lower), packet 3, conn 0, seen 4×\n",
		" 23  OffsetForLeaderEpoch              -  3-2 (none usable)  *\n",
		"Produce      app        10.0.0.9:9092     7        3-7*  ok\n",
		"ApiVersions  app        10.0.0.9:9092   2,5         0-2  downgraded (KIP-511)  apiversions-downgrade\n",
		"* = brokers advertise different ranges for the API (mixed-cluster, see FLAGS)\n",
		"no-usable-version OffsetForLeaderEpoch: the broker advertises v3-2: no usable version (min 3 > max 2) [broker 10.0.0.9:9092]\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "NONE") || strings.Contains(out, "1 API ranges") || strings.Contains(out, "mixed-cluster\n") {
		t.Errorf("old wording in\n%s", out)
	}
}

// TestVersionsNoBrokers: an empty report says why in plain words.
func TestVersionsNoBrokers(t *testing.T) {
	for _, tc := range []struct {
		r    *stats.VersionsReport
		want string
	}{
		{&stats.VersionsReport{}, "(no ApiVersions response captured: no Kafka exchange was found at all;\n" +
			" the note on standard error says what the capture holds instead)\n"},
		{&stats.VersionsReport{Clients: []stats.ClientVersions{{ClientID: ptr("old")}}},
			"(no ApiVersions response captured: the clients did not ask for one.\n" +
				" SASL v0 clients and clients older than Kafka 0.10 skip it, or the capture\n" +
				" began after their connections opened. The brokers' ranges are unknown,\n" +
				" so MATRIX says \"unknown\")\n"},
	} {
		var b bytes.Buffer
		if err := WriteVersions(&b, tc.r, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.String(), "BROKERS\n"+tc.want) {
			t.Errorf("got\n%s\nwant it to start with\n%s", b.String(), tc.want)
		}
	}
}

// TestLatencySparkExtremes: the over-time line of a latency that a wrong
// capture clock makes decades long, or negative, does not overflow.
func TestLatencySparkExtremes(t *testing.T) {
	l := stats.LatencyOverAPI{Key: 1, Name: "Fetch", Count: 3, BinWidth: 1e9, Origin: "12:00:00",
		Distribution: []stats.DistBin{{Lo: 1, Hi: 2, Count: 3}},
		OverTime:     []stats.TimeBin{{Count: 1, Max: 1_400_000_000 * 1e9}, {Count: 1, Max: -5}, {Count: 1, Max: 1}, {}}}
	var w strings.Builder
	writeLatency(&w, Options{}, l)
	if !strings.Contains(w.String(), "█▁▁·") {
		t.Errorf("over-time line: %q", w.String())
	}
}

// TestTxnsEpochsNewProducerID: an EndTxn v5 past the last epoch gives the
// producer a new producer ID (KIP-890); the EPOCHS column names it before
// the epochs that follow, not as epochs of the first ID.
func TestTxnsEpochsNewProducerID(t *testing.T) {
	r := &analysis.TxnsReport{Producers: []analysis.ProducerReport{{
		TransactionalID: ptrTo("tx-a"),
		Instances: []analysis.InstanceReport{{ProducerID: 5000, Epochs: []analysis.EpochChange{
			{ProducerID: 5000, Epoch: 3, By: "InitProducerId"}, {ProducerID: 5000, Epoch: 4, By: "EndTxn"}, {ProducerID: 5001, Epoch: 0, By: "EndTxn"}}}},
	}}}
	var b strings.Builder
	if err := WriteTxns(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), " 3 4* pid 5001: 0* ") {
		t.Errorf("epochs:\n%s", b.String())
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestProfileJSONStreamed: WriteProfileJSON, which writes a client or
// broker at a time, writes what json.Encoder writes of the whole
// profile, with and without clients, brokers and Folded.
func TestProfileJSONStreamed(t *testing.T) {
	full := &profile.Profile{
		Clients: []profile.Client{
			{ClientID: "a<b>&", Software: []string{"kgo/1.0"}, Connections: 2, APIs: []profile.APIUse{{API: "Produce", Key: 0, Versions: []int16{9, 11}}},
				Sequences: []profile.SequenceCount{{Sequence: "ApiVersions Produce+", Connections: 2}}, Errors: []string{}, Topics: []string{"t"},
				Latency: []profile.LatencyStat{{API: "Produce", Count: 3, P50Ms: 1.5, P99Ms: 2, MaxMs: 2}}, Capped: true},
			{ClientID: "", Software: []string{}, APIs: []profile.APIUse{}},
		},
		Brokers: []profile.Broker{{Address: "10.0.0.1:9092", Advertised: []profile.APIRange{{API: "Produce", Key: 0, Min: 3, Max: 11}}, Errors: []string{"Produce NOT_LEADER_OR_FOLLOWER"}}},
	}
	folded := *full
	folded.Folded = &profile.Folded{MaxMemory: 1 << 20, Requests: 3, Connections: 1, BrokerExchanges: 2}
	for name, p := range map[string]*profile.Profile{
		"empty": {Clients: []profile.Client{}, Brokers: []profile.Broker{}}, "full": full, "folded": &folded,
		"no brokers, folded": {Clients: full.Clients, Brokers: []profile.Broker{}, Folded: folded.Folded},
	} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(p); err != nil {
			t.Fatal(err)
		}
		if err := WriteProfileJSON(&got, p); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s:\n got %s\nwant %s", name, got.String(), want.String())
		}
	}
}

// TestVersionsJSONStreamed: WriteVersionsJSON writes what json.Encoder
// writes of the whole report.
func TestVersionsJSONStreamed(t *testing.T) {
	folded := sampleVersions()
	folded.Folded = &stats.VersionsFolded{MaxMemory: 1 << 20, Advertisements: 2, BrokerResponses: 1}
	folded.Clients[0].Capped = true
	for name, r := range map[string]*stats.VersionsReport{
		"sample": sampleVersions(), "folded": folded, "nil lists": {},
		"empty": {Brokers: []stats.BrokerVersions{}, Clients: []stats.ClientVersions{}, Matrix: []stats.MatrixRow{}, Flags: []stats.Flag{}},
	} {
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		if err := WriteVersionsJSON(&got, r); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s:\n got %s\nwant %s", name, got.String(), want.String())
		}
	}
}

// maxWriter records the longest single write it was given.
type maxWriter struct {
	bytes.Buffer
	max int
}

func (m *maxWriter) WriteString(s string) (int, error) { return m.Write([]byte(s)) }

func (m *maxWriter) Write(b []byte) (int, error) {
	m.max = max(m.max, len(b))
	return m.Buffer.Write(b)
}

// TestGroupsJSONStreamed: the groups document is written a group at a
// time, as encoding/json encodes it whole: a report that
// --max-analysis-memory bounds is never held encoded all at once.
func TestGroupsJSONStreamed(t *testing.T) {
	r := &analysis.GroupsReport{MaxMemoryBytes: 1 << 40, GroupsNotKept: 12}
	for i := range 200 {
		r.Groups = append(r.Groups, analysis.GroupReport{GroupID: "g" + strconv.Itoa(i) + "-" + strings.Repeat("x", 500) + "<&>", Protocol: "consumer",
			Rebalances: int64(i) << 40})
	}
	for _, o := range []Options{{}, {Int64Strings: true}} {
		var whole bytes.Buffer
		if err := writeJSON(&whole, r, o); err != nil {
			t.Fatal(err)
		}
		var got maxWriter
		if err := WriteGroupsJSON(&got, r, o); err != nil {
			t.Fatal(err)
		}
		if got.String() != whole.String() {
			t.Fatalf("Int64Strings=%v: streamed document differs from the encoder's:\n%.600s\nwant\n%.600s", o.Int64Strings, got.String(), whole.String())
		}
		var one bytes.Buffer
		if err := writeJSON(&one, &r.Groups[0], o); err != nil {
			t.Fatal(err)
		}
		if got.max > 2*one.Len() {
			t.Errorf("Int64Strings=%v: a write of %d bytes, one group encodes to %d (the document: %d)", o.Int64Strings, got.max, one.Len(), whole.Len())
		}
		if !strings.Contains(got.String(), `"maxMemoryBytes": 1099511627776,
  "groupsNotKept": 12,
  "cutExchanges": 0
}`) && !strings.Contains(got.String(), `"maxMemoryBytes": "1099511627776",
  "groupsNotKept": "12",
  "cutExchanges": "0"
}`) || strings.Count(got.String(), `"groupId": "g`) != 200 {
			t.Errorf("document %.300s", got.String())
		}
	}
	// One group of 5,000 members, with generations, commits and a
	// timeline (and one with its lists nil): written an element at a
	// time, the same bytes.
	big := analysis.GroupReport{GroupID: "big", Protocol: "consumer", Rebalances: 1 << 40}
	gn := analysis.GenerationReport{Generation: 3, Cause: "join", Refs: []analysis.Ref{{Frame: 9}}}
	for j := range 5000 {
		id := fmt.Sprintf("m%05d", j)
		big.Members = append(big.Members, analysis.MemberReport{MemberID: id, Name: "c" + id, Heartbeats: int64(j) << 33})
		gn.Members = append(gn.Members, analysis.GenerationMember{MemberID: id, Name: "c" + id})
		big.Timeline = append(big.Timeline, analysis.Event{Kind: "join", MemberID: &id, Detail: "joined <&>"})
		big.Commits = append(big.Commits, analysis.CommitReport{Topic: "t", Partition: int32(j), Offset: int64(j) << 35})
	}
	big.Generations = []analysis.GenerationReport{gn, gn}
	nilLists := analysis.GroupReport{GroupID: "nil"}
	br := &analysis.GroupsReport{Groups: []analysis.GroupReport{big, nilLists}, GroupsNotKept: 1}
	for _, o := range []Options{{}, {Int64Strings: true}} {
		var whole bytes.Buffer
		if err := writeJSON(&whole, br, o); err != nil {
			t.Fatal(err)
		}
		var got maxWriter
		if err := WriteGroupsJSON(&got, br, o); err != nil {
			t.Fatal(err)
		}
		if got.String() != whole.String() {
			g, w := got.String(), whole.String()
			i := 0
			for i < min(len(g), len(w)) && g[i] == w[i] {
				i++
			}
			t.Fatalf("Int64Strings=%v: a group of 5,000 members differs from the encoder's at byte %d:\n%.300s\nwant\n%.300s", o.Int64Strings, i, g[max(i-100, 0):], w[max(i-100, 0):])
		}
		var gen bytes.Buffer
		if err := writeJSON(&gen, &gn, o); err != nil {
			t.Fatal(err)
		}
		if got.max > gen.Len()*3/2 || whole.Len() < 6*gen.Len() {
			t.Errorf("Int64Strings=%v: a write of %d bytes, a generation encodes to %d, the document to %d", o.Int64Strings, got.max, gen.Len(), whole.Len())
		}
	}
	var empty bytes.Buffer
	if err := WriteGroupsJSON(&empty, &analysis.GroupsReport{MaxMemoryBytes: 5}, Options{}); err != nil || empty.String() != "{\n  \"groups\": null,\n  \"maxMemoryBytes\": 5,\n  \"groupsNotKept\": 0,\n  \"cutExchanges\": 0\n}\n" {
		t.Errorf("empty report %q %v", empty.String(), err)
	}
}

// TestGroupsTextStreamed: the groups text is written a group at a time,
// the same bytes as the text built whole: a report of 100,000 members
// is never held as text all at once. After the groups, those not kept;
// a group evicted before says so (its history is partial).
func TestGroupsTextStreamed(t *testing.T) {
	r := &analysis.GroupsReport{MaxMemoryBytes: 1 << 20, GroupsNotKept: 3977}
	for i := range 50 {
		g := analysis.GroupReport{GroupID: "g" + strconv.Itoa(i), Protocol: "classic", First: analysis.Time(time.Date(2026, 5, 1, 12, 0, i, 0, time.UTC))}
		for j := range 40 {
			g.Members = append(g.Members, analysis.MemberReport{MemberID: fmt.Sprintf("m%d-%d", i, j), Name: fmt.Sprintf("c%d", j)})
		}
		switch i {
		case 1:
			g.Dropped.Evicted = 2
		case 2:
			g.Dropped.MaybeEvicted = true
		case 3:
			g.Dropped.Evicted, g.Dropped.Events = 1, 7
		}
		r.Groups = append(r.Groups, g)
	}
	o := GroupsOptions{Timeline: true}
	var whole strings.Builder
	for i := range r.Groups {
		writeGroup(&whole, &r.Groups[i], o, nil)
	}
	var got maxWriter
	if err := WriteGroups(&got, r, o); err != nil {
		t.Fatal(err)
	}
	const notKept = "not kept (--max-analysis-memory): 3977 groups, evicted whole, the least recently active first\n"
	if got.String() != whole.String()+notKept {
		g, w := got.String(), whole.String()+notKept
		i := 0
		for i < min(len(g), len(w)) && g[i] == w[i] {
			i++
		}
		t.Fatalf("streamed text differs from the whole at byte %d:\n%.300s\nwant\n%.300s", i, g[max(i-100, 0):], w[max(i-100, 0):])
	}
	var one strings.Builder
	writeGroup(&one, &r.Groups[0], o, nil)
	if got.max > one.Len()+300 || got.max < one.Len() { // + a history line
		t.Errorf("a write of %d bytes, one group's text is %d (all: %d)", got.max, one.Len(), got.Len())
	}
	text := got.String()
	for _, want := range []string{
		"GROUP g1  classic\n12:00:01.000 to -: 0 generations, 0 rebalances, 40 members\nhistory partial: a group of this ID was evicted whole 2 times before 12:00:01.000 (--max-analysis-memory); this report, its counts included, holds what came after\n\n  MEMBERS",
		"\nhistory may be partial: more groups were evicted whole (--max-analysis-memory) than their IDs could be remembered; this one may have been, before 12:00:02.000\n\n",
		"\nhistory partial: a group of this ID was evicted whole once before 12:00:03.000 (--max-analysis-memory); this report, its counts included, holds what came after\nnot kept (--max-analysis-memory): 7 events, 0 generations, 0 members, 0 commits\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q", want)
		}
	}
	if n := strings.Count(text, "history"); n != 3 {
		t.Errorf("%d history lines, want 3", n)
	}
	// One group of 10,000 members, in one generation: written a table,
	// and 1,024 rows, at a time, the same bytes.
	big := analysis.GroupReport{GroupID: "big", Protocol: "classic"}
	gn := analysis.GenerationReport{Generation: 1, Cause: "join"}
	for j := range 10000 {
		id := fmt.Sprintf("m%05d", j)
		big.Members = append(big.Members, analysis.MemberReport{MemberID: id, Name: "c" + id})
		gn.Members = append(gn.Members, analysis.GenerationMember{MemberID: id, Name: "c" + id, Assigned: []analysis.TopicPartition{{Topic: "t", Partitions: []int32{int32(j)}}}})
		big.Timeline = append(big.Timeline, analysis.Event{Kind: "join", MemberID: &id, Member: &id, Detail: "joined generation 1"})
	}
	big.Generations = []analysis.GenerationReport{gn}
	var bigWhole strings.Builder
	writeGroup(&bigWhole, &big, o, nil)
	var bigGot maxWriter
	if err := WriteGroups(&bigGot, &analysis.GroupsReport{Groups: []analysis.GroupReport{big}}, o); err != nil {
		t.Fatal(err)
	}
	if bigGot.String() != bigWhole.String() {
		t.Fatalf("a group of 10,000 members: the text written in pieces differs from the whole")
	}
	if bigGot.max > 200<<10 || bigWhole.Len() < 2<<20 {
		t.Errorf("a group of 10,000 members: a write of %d bytes of %d", bigGot.max, bigWhole.Len())
	}
	var none bytes.Buffer
	if err := WriteGroups(&none, &analysis.GroupsReport{GroupsNotKept: 2}, o); err != nil || none.String() != "no groups\nnot kept (--max-analysis-memory): 2 groups, evicted whole, the least recently active first\n" {
		t.Errorf("no groups: %q %v", none.String(), err)
	}
}

// TestWriteGroupDescribedOnly: a group an admin's DescribeGroups alone
// showed says its state in its heading and that no generation was
// captured, rather than a table header over no rows.
func TestWriteGroupDescribedOnly(t *testing.T) {
	str := func(s string) *string { return &s }
	r := &analysis.GroupsReport{Groups: []analysis.GroupReport{{GroupID: "cg", Protocol: "classic", ProtocolType: str("consumer"),
		Assignor: str("range"), State: str("Stable"), Members: []analysis.MemberReport{{MemberID: "c1-aaaa", Name: "c1", ClientID: str("c1"),
			Assignment: []analysis.TopicPartition{{Topic: "orders", Partitions: []int32{0, 1}}}}},
		Generations: []analysis.GenerationReport{}, Commits: []analysis.CommitReport{}}}}
	var b strings.Builder
	if err := WriteGroups(&b, r, GroupsOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"GROUP cg  classic, protocol type consumer, assignor range, state Stable (described)\n",
		"\n  GENERATIONS\n  (none captured)\n",
		"  c1      c1-aaaa ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestGroupsTextConnectWorker: a Kafka Connect worker's row shows its
// connectors and tasks in ASSIGNED (task -1 as "connector"), and a line
// under it its URL, config offset, leader and what else its assignment
// says; a worker whose URL was withheld shows it withheld.
func TestGroupsTextConnectWorker(t *testing.T) {
	url, off, withheld := "http://w1:8083/", int64(40), "<redacted>"
	g := analysis.GroupReport{GroupID: "connect-cluster", Protocol: "classic", Members: []analysis.MemberReport{
		{MemberID: "w1", Name: "connect-1", Connect: &analysis.ConnectWorker{URL: &url, ConfigOffset: &off,
			Assignment: &analysis.ConnectAssignment{Version: 1, Error: "CONFIG_MISMATCH", Leader: "w1", LeaderURL: url, ConfigOffset: 42,
				Connectors: []analysis.ConnectorTasks{{Connector: "pg-sink", Tasks: []int32{-1, 0, 1, 2}}, {Connector: "s3", Tasks: []int32{3}}},
				Revoked:    []analysis.ConnectorTasks{{Connector: "s3", Tasks: []int32{1}}}, DelayMs: 300000}}},
		{MemberID: "w2", Name: "connect-2", Connect: &analysis.ConnectWorker{URL: &withheld, ConfigOffset: &off}},
	}}
	var b strings.Builder
	writeGroup(&b, &g, GroupsOptions{}, nil)
	text := b.String()
	for _, want := range []string{
		"pg-sink[connector,0-2] s3[3]\n",
		"    connect worker: url http://w1:8083/, config offset 40; leader w1 (http://w1:8083/); assignment v1 at config offset 42; error CONFIG_MISMATCH; revoked s3[1]; rebalance scheduled in 300s\n",
		"    connect worker: url <redacted>, config offset 40\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
}
