// Package stats aggregates dissected Kafka traffic into the numbers
// operators ask for: per API key and version (counts, bytes, latency
// percentiles, Kafka errors), per client, per topic-partition (records,
// batches, bytes, codecs), per connection (frames, gaps, retransmissions,
// orphans, decode failures), latency over time and the slowest exchanges
// (Collector); and which API versions brokers advertised and clients used,
// with the anomalies that break upgrades (VersionCollector, Compare).
//
// Both collectors implement dissect.Sink: hand them to the dissector and
// call Report when the input ends. They read dissect.Exchange and
// dissect.Event and the decoded trees they carry (protocol.Tree) and never
// print; render/statsview turns their reports into text tables and JSON.
//
// Memory is bounded per entity: a fixed-size latency structure per API key
// and version (exact samples up to ExactSamples, then log-linear buckets;
// see Latency), a fixed number of time bins per API key (Series), the N
// slowest exchanges, and maps keyed by API, client ID, topic-partition
// and broker. Per connection, in bytes: the rows of connections that
// ended and the clients' addresses are bounded by Options.MaxMemory,
// past which the least telling rows are folded into totals
// (FoldedConns) and addresses are no longer kept; open connections keep
// an accumulator each. No exchange, frame or reassembly.Conn is retained.
//
// Reports are deterministic: every list is sorted, no map is iterated into
// the output unsorted, and times come from the capture, never the clock.
package stats
