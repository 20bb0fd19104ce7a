package stats

import (
	"encoding/base64"
	"math"
	"strconv"
	"time"

	"github.com/kwire/kwire/facts"
)

// This file defines the Report that Collector.Report returns. Its JSON
// form (the tags) is the `kwire stats --json` output; a test in
// render/statsview pins its field set. It follows kwire's JSON vocabulary
// (docs/json.md): keys in lowerCamelCase, durations kept in nanoseconds
// and written in milliseconds (Millis; keys ending in Ms), times RFC 3339
// capture timestamps with nanoseconds, in UTC.

// Report is the whole statistics of a capture.
type Report struct {
	// First and Last are the capture times of the first and last Kafka
	// frame or connection event seen; empty when nothing was seen.
	First string `json:"first,omitempty"`
	Last  string `json:"last,omitempty"`

	Exchanges   int64 `json:"exchanges"`  // requests, orphan responses and SASL token exchanges
	Orphans     int64 `json:"orphans"`    // responses whose request was not captured
	SASLTokens  int64 `json:"saslTokens"` // raw SASL token exchanges (after SaslHandshake v0)
	SkippedConn int64 `json:"skippedConnections"`
	// CutFrames counts the exchanges' frames of which the capture holds
	// only the first bytes (a gap, the capture's snap length or its end
	// cut them: dissect.Frame.Cut), and NotCapturedBytes the bytes of
	// theirs it does not hold. The APIs' and connections' bytes count
	// such frames at the size their length prefix gives (on the wire).
	CutFrames        int64 `json:"cutFrames"`
	NotCapturedBytes int64 `json:"notCapturedBytes"`
	// TLS counts the capture's TLS connections, those skipped as not
	// Kafka (dissect.SkipTLS: not on a Kafka port, not decrypted)
	// included; absent when it had none.
	TLS *TLSCounts `json:"tls,omitempty"`

	APIs        []APIStats       `json:"apis"`
	Clients     []ClientStats    `json:"clients"`
	Partitions  []PartitionStats `json:"partitions"`
	Connections []ConnStats      `json:"connections"`
	// FoldedConnections totals the connections that have no row in
	// Connections (Options.MaxMemory); absent when every one has.
	FoldedConnections *FoldedConns `json:"foldedConnections,omitempty"`
	// FoldedClients totals the requests of the client IDs that have no
	// row in Clients, and FoldedPartitions the record batches of the
	// partitions that have none in Partitions: past Options.MaxMemory
	// the rows of clients and partitions (client IDs and topic-partitions
	// are the peers' to make up) are not kept, their counts are. Absent
	// when every one has its row. Their ClientID and Topic are empty,
	// Partition -1.
	FoldedClients    *ClientStats     `json:"foldedClients,omitempty"`
	FoldedPartitions *PartitionStats  `json:"foldedPartitions,omitempty"`
	Latency          []LatencyOverAPI `json:"latency"`
	Slowest          []SlowExchange   `json:"slowest"`
	// ErrorPlaces counts every non-zero error code of the responses by
	// API and where it was: topic and partition (facts.Error), most
	// frequent first. ErrorPlacesFolded counts the errors of places not
	// kept (Options.MaxMemory/8 bounds them); they are still in the APIs'
	// and clients' Errors.
	ErrorPlaces       []ErrorPlace `json:"errorPlaces"`
	ErrorPlacesFolded int64        `json:"errorPlacesFolded"`
}

// TLSCounts says how many TLS connections were decrypted and how many
// were not, by why (dissect.TLSStatus.Reason: "no key log", "no key for
// the client random", "no key for the client random, with secrets
// dropped past --max-tls-key-memory", "handshake not captured", "wrong
// key", "unsupported", "not TLS", "handshake incomplete").
type TLSCounts struct {
	Connections  int64 `json:"connections"`  // Decrypted + NotDecrypted
	Decrypted    int64 `json:"decrypted"`    // read like plaintext
	NotDecrypted int64 `json:"notDecrypted"` // the sum of Reasons' counts
	// Reasons are the connections not decrypted by reason, sorted by
	// reason; [] when all were decrypted.
	Reasons []TLSReason `json:"reasons"`
}

// TLSReason is how many TLS connections were not decrypted for one
// reason.
type TLSReason struct {
	Reason string `json:"reason"`
	Count  int64  `json:"count"`
}

// ErrorPlace is how often one error code was answered to one API at one
// place: a partition, a topic (Partition null), or no topic (Topic null:
// the request, a group, a member, a transaction, a resource).
type ErrorPlace struct {
	Name      string  `json:"name"` // protocol.KafkaErrorName
	Code      int16   `json:"code"`
	API       string  `json:"api"`
	Topic     *string `json:"topic" jsonschema:"nullable"` // the name, else the topic ID
	Partition *int32  `json:"partition" jsonschema:"nullable"`
	Count     int64   `json:"count"`
}

// APIStats is one API key and version. Sorted by Key, then Version.
type APIStats struct {
	Key     int16  `json:"apiKey"`
	Name    string `json:"api"`
	Version int16  `json:"apiVersion"`

	Requests   int64 `json:"requests"`   // requests captured
	Responses  int64 `json:"responses"`  // of which answered
	Unanswered int64 `json:"unanswered"` // still waiting at close or end of capture
	NoResponse int64 `json:"noResponse"` // needing none (Produce acks=0)

	RequestBytes  int64 `json:"requestBytes"`  // client to broker, length prefixes included
	ResponseBytes int64 `json:"responseBytes"` // broker to client

	Latency LatencySummary `json:"latency"`
	// Errors counts every non-zero error code in the responses, at any
	// level (top-level, per topic, per partition, ...). Sorted by name.
	Errors []ErrorCount `json:"errors"`
}

// LatencySummary gives response time minus request time, from capture
// timestamps. Exact is false when percentiles came from the log-linear
// buckets (more than ExactSamples samples; within 6.25 %).
type LatencySummary struct {
	Count int64  `json:"count"`
	Min   Millis `json:"minMs"`
	P50   Millis `json:"p50Ms"`
	P90   Millis `json:"p90Ms"`
	P99   Millis `json:"p99Ms"`
	Max   Millis `json:"maxMs"`
	Mean  Millis `json:"meanMs"`
	Exact bool   `json:"exact"`
}

// ErrorCount is how often one Kafka error code was seen.
type ErrorCount struct {
	Name  string `json:"name"` // protocol.KafkaErrorName
	Code  int16  `json:"code"`
	Count int64  `json:"count"`
}

// ClientStats is one client ID. Sorted by ClientID (null last, then the
// requests whose client ID was not captured).
type ClientStats struct {
	ClientID *string `json:"clientId" jsonschema:"nullable"` // the request header's ClientId; null when it was null or not captured
	// ClientIDNotCaptured is true for the row of the requests whose
	// header was cut before its ClientId ended (a gap, the capture's snap
	// length): their client ID is not known (clientId null), not "".
	// That row comes last.
	ClientIDNotCaptured bool `json:"clientIdNotCaptured"`
	// Software lists "name/version" pairs from ApiVersions v3+ requests
	// (ClientSoftwareName, ClientSoftwareVersion; KIP-511). Sorted.
	Software  []string `json:"software"`
	Addresses []string `json:"addresses"` // client IP addresses (no port), sorted
	// AddressesCapped says Addresses leaves some out: the addresses of all
	// clients cost more than a quarter of Options.MaxMemory.
	AddressesCapped bool `json:"addressesCapped,omitempty"`
	// DetailCapped says APIs, Errors or Software leave some out: the
	// rows of all clients and partitions cost more than
	// Options.MaxMemory (Requests stays exact).
	DetailCapped bool         `json:"detailCapped,omitempty"`
	Connections  int          `json:"connections"`
	Requests     int64        `json:"requests"`
	APIs         []APIUse     `json:"apis"`
	Errors       []ErrorCount `json:"errors"`
}

// APIUse is one API a client called: the versions it used and how often.
type APIUse struct {
	Key      int16   `json:"apiKey"`
	Name     string  `json:"api"`
	Versions []int16 `json:"versions"`
	Requests int64   `json:"requests"`
}

// PartitionStats is one topic-partition. Topic is the name, resolved from
// a Metadata response when the wire carried only a topic ID; TopicID is
// Kafka's form of the ID (unpadded base64url, as Uuid.toString prints
// it) when one was seen. Sorted by Topic, TopicID, Partition.
type PartitionStats struct {
	Topic     string    `json:"topic"`
	TopicID   string    `json:"topicId,omitempty"`
	Partition int32     `json:"partition"`
	Produce   FlowStats `json:"produce"` // record batches in Produce requests
	Fetch     FlowStats `json:"fetch"`   // record batches in Fetch responses
	Codecs    []string  `json:"codecs"`  // compression codecs seen, sorted
}

// FlowStats counts record batches in one direction.
type FlowStats struct {
	Batches           int64 `json:"batches"`
	Records           int64 `json:"records"`
	WireBytes         int64 `json:"wireBytes"`
	UncompressedBytes int64 `json:"uncompressedBytes"` // batches of known decompressed size only
	UnknownSize       int64 `json:"unknownSizeBatches"`
}

func (f *FlowStats) add(r *facts.Records) {
	f.Batches += int64(r.Batches)
	f.Records += max(r.Count, 0)
	f.WireBytes += r.Bytes
	f.UncompressedBytes += r.Uncompressed
	f.UnknownSize += int64(r.UnknownSize)
}

// ConnStats is one TCP connection that carried Kafka. Sorted by file,
// Index, then endpoints.
type ConnStats struct {
	File    string `json:"file,omitempty"` // the capture file (Collector.SetFile)
	fileIdx int
	Index   int    `json:"stream"` // reassembly.Conn.Index (Wireshark's tcp.stream)
	Client  string `json:"client"` // the side sending requests (A when unknown)
	Broker  string `json:"broker"`
	First   string `json:"first"` // earliest capture time of its frames and events, RFC 3339 with nanoseconds, UTC; "" unknown
	Last    string `json:"last"`  // latest, likewise
	// Duration is Last minus First.
	Duration Millis `json:"durationMs"`

	RequestFrames  int64 `json:"requestFrames"`
	ResponseFrames int64 `json:"responseFrames"`
	RequestBytes   int64 `json:"requestBytes"`
	ResponseBytes  int64 `json:"responseBytes"`

	Gaps            int64 `json:"gaps"`
	GapBytes        int64 `json:"gapBytes"`
	Retransmissions int   `json:"retransmissions"`
	Conflicts       int   `json:"conflicts"` // retransmissions whose bytes differ from those delivered (reassembly.ConnStats.Conflicts, dissect.EventConflict)
	OutOfOrder      int   `json:"outOfOrder"`
	Orphans         int64 `json:"orphans"`
	Unanswered      int64 `json:"unanswered"`
	DecodeFailures  int64 `json:"decodeFailures"` // frames that failed to decode (dissect.Frame.Failed: an error in the tree or a record batch; unknown API keys and versions are not failures)
	Resyncs         int64 `json:"resyncs"`
	BadFrames       int64 `json:"badFrames"`
	Truncated       int64 `json:"truncated"`
	TLS             bool  `json:"tls,omitempty"` // a TLS connection (EventTLS)
	Closed          bool  `json:"closed"`

	// The TLS connection's status (dissect.TLSStatus): decrypted, or the
	// reason it was not; what its handshake said. Empty for plaintext.
	TLSDecrypted bool   `json:"tlsDecrypted,omitempty"`
	TLSReason    string `json:"tlsReason,omitempty"`
	TLSVersion   string `json:"tlsVersion,omitempty"`
	TLSSuite     string `json:"tlsSuite,omitempty"`
	TLSSNI       string `json:"tlsSni,omitempty"`
	TLSALPN      string `json:"tlsAlpn,omitempty"`
}

// FoldedConns totals the connections whose rows a report does not keep:
// connections that ended, the least telling by RankConns, folded while
// the rows kept cost more than MaxMemory bytes (Options.MaxMemory,
// kwire's --max-stats-memory). Every connection in it is closed; its
// counts are sums over its connections, so Report.Connections plus
// FoldedConns give the capture's exact totals.
type FoldedConns struct {
	Connections  int64  `json:"connections"`
	TLS          int64  `json:"tls"`            // of which TLS connections not decrypted
	TLSDecrypted int64  `json:"tlsDecrypted"`   // of which decrypted from TLS
	MaxMemory    int64  `json:"maxMemoryBytes"` // the budget, in bytes
	MaxProblems  int64  `json:"maxProblems"`    // the most problems (ConnStats.Problems) of one of them
	First        string `json:"first"`          // the earliest First of them
	Last         string `json:"last"`           // the latest Last

	RequestFrames  int64 `json:"requestFrames"`
	ResponseFrames int64 `json:"responseFrames"`
	RequestBytes   int64 `json:"requestBytes"`
	ResponseBytes  int64 `json:"responseBytes"`

	Gaps            int64 `json:"gaps"`
	GapBytes        int64 `json:"gapBytes"`
	Retransmissions int64 `json:"retransmissions"`
	Conflicts       int64 `json:"conflicts"`
	OutOfOrder      int64 `json:"outOfOrder"`
	Orphans         int64 `json:"orphans"`
	Unanswered      int64 `json:"unanswered"`
	DecodeFailures  int64 `json:"decodeFailures"`
	Resyncs         int64 `json:"resyncs"`
	BadFrames       int64 `json:"badFrames"`
	Truncated       int64 `json:"truncated"`

	first, last time.Time
}

// add folds the row of a connection that ended.
func (f *FoldedConns) add(a *connAcc) {
	s := &a.s
	f.Connections++
	switch {
	case s.TLSDecrypted:
		f.TLSDecrypted++
	case s.TLS:
		f.TLS++
	}
	f.MaxProblems = max(f.MaxProblems, s.Problems())
	if !a.first.IsZero() && (f.first.IsZero() || a.first.Before(f.first)) {
		f.first = a.first
	}
	if a.last.After(f.last) {
		f.last = a.last
	}
	f.RequestFrames += s.RequestFrames
	f.ResponseFrames += s.ResponseFrames
	f.RequestBytes += s.RequestBytes
	f.ResponseBytes += s.ResponseBytes
	f.Gaps += s.Gaps
	f.GapBytes += s.GapBytes
	f.Retransmissions += int64(s.Retransmissions)
	f.Conflicts += int64(s.Conflicts)
	f.OutOfOrder += int64(s.OutOfOrder)
	f.Orphans += s.Orphans
	f.Unanswered += s.Unanswered
	f.DecodeFailures += s.DecodeFailures
	f.Resyncs += s.Resyncs
	f.BadFrames += s.BadFrames
	f.Truncated += s.Truncated
}

// LatencyOverAPI is one API key's latency distribution and latency over
// time, all versions together. Sorted by Key.
type LatencyOverAPI struct {
	Key          int16     `json:"apiKey"`
	Name         string    `json:"api"`
	Count        int64     `json:"count"`
	Distribution []DistBin `json:"distribution"` // power-of-two nanosecond bins from min to max
	Origin       string    `json:"startTime"`    // capture time of the first bin's start
	BinWidth     Millis    `json:"binWidthMs"`
	OverTime     []TimeBin `json:"overTime"` // bin i covers [origin+i*width, origin+(i+1)*width)
}

// DistBin counts latencies d with Lo <= d < Hi.
type DistBin struct {
	Lo    Millis `json:"loMs"`
	Hi    Millis `json:"hiMs"`
	Count int64  `json:"count"`
}

// TimeBin is one slice of latency over time, by request capture time.
type TimeBin struct {
	Count int64  `json:"count"`
	Mean  Millis `json:"meanMs"`
	Max   Millis `json:"maxMs"`
}

// SlowExchange is one of the N slowest answered exchanges (--top N):
// those whose latency beyond the wait their request asked for is longest
// (a Fetch answered at its MaxWaitMs is a long poll that found nothing,
// not a slow one), then the slowest; ties by request frame.
type SlowExchange struct {
	Latency Millis `json:"latencyMs"`
	// WaitMs is the wait the request asked for, at most its latency: a
	// Fetch's MaxWaitMs (facts.Exchange.MaxWaitMs); 0 for other requests.
	WaitMs              Millis  `json:"waitMs"`
	Key                 int16   `json:"apiKey"`
	Name                string  `json:"api"`
	Version             int16   `json:"apiVersion"`
	CorrelationID       int32   `json:"correlationId"`
	ClientID            *string `json:"clientId" jsonschema:"nullable"` // null when the header's was null or not captured
	ClientIDNotCaptured bool    `json:"clientIdNotCaptured"`            // true when the request header was cut before its ClientId ended
	Client              string  `json:"client"`
	Broker              string  `json:"broker"`
	Conn                int     `json:"stream"`
	RequestFrame        int64   `json:"requestFrame"`   // for `kwire read --frame`
	ResponseFrame       int64   `json:"responseFrame"`  // packet holding the response's first byte
	Time                string  `json:"time"`           // request capture time
	File                string  `json:"file,omitempty"` // the capture file (Collector.SetFile)
	fileIdx             int
}

// timeString formats a capture time for reports: RFC 3339 with
// nanoseconds, UTC; "" for the zero time.
func timeString(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// TopicIDString formats a topic ID as Kafka does (Uuid.toString: unpadded
// base64url of the 16 bytes).
func TopicIDString(id [16]byte) string {
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// Millis is a duration in nanoseconds that JSON writes in milliseconds,
// with a fraction (kwire's JSON vocabulary, docs/json.md: durations are
// milliseconds, keys ending in Ms).
type Millis int64

// MarshalJSON writes d as milliseconds: 1234567 ns is 1.234567.
func (d Millis) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(d)/1e6, 'f', -1, 64), nil
}

// UnmarshalJSON reads milliseconds back into nanoseconds.
func (d *Millis) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*d = Millis(math.Round(f * 1e6))
	return nil
}
