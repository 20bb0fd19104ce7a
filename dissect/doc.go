// Package dissect turns reassembled TCP byte streams into Kafka exchanges.
//
// A Dissector implements reassembly.Handler. Per connection it decides
// whether the bytes are Kafka (an endpoint on Options.Ports, or with
// Options.Detect a client whose first bytes parse as a plausible request;
// TLS, HTTP and anything else are reported with EventTLS or EventSkipped),
// which side is the client (the side that sends requests), and then runs
// one frame splitter per direction (splitter.go): it cuts the stream on
// Kafka's 4-byte big-endian length prefix (Kafka protocol guide, "Common
// Request and Response Structure"), diagnoses lengths that are not Kafka
// and resynchronises after garbage, gaps and mid-frame starts.
//
// Requests and responses are paired by correlation ID before any body is
// decoded (pair.go), so every response decodes with its request's API key
// and version. Produce with acks=0 has no response; ApiVersions answers
// follow KIP-511; raw SASL tokens after SaslHandshake v0 are their own
// exchanges (sasl.go).
//
// Contract:
//   - All Handler methods and Finish run on one goroutine; the Sink is
//     called synchronously from them, in capture order of each exchange's
//     completion (a paired exchange when its response ends).
//   - A Sink may keep the exchanges it gets. Frame.Bytes is a copy owned
//     by the Frame until Exchange.Release hands it back to the Dissector's
//     pool (then neither Bytes nor Tree may be used); it is as captured: secrets
//     are marked in the frame's Tree (protocol.FlagRedacted, unless
//     Options.Decoder.ShowSecrets), and a frame not decoded has
//     Frame.Withheld set (its bytes may hold any frame's secrets);
//     outputs show bytes through them.
//   - Bytes are buffered per direction only as far as needed: the frame
//     being built or a short scan window. A frame's buffer is a reused
//     one (Exchange.Release) or allocated at most 64 KiB beyond the bytes
//     at hand; once those are filled, a frame of at most 16 MiB gets its
//     whole buffer when Options.PartialMemory has room for it, a larger
//     one grows as bytes arrive.
//   - Pairing state is bounded in bytes by Options.PendingMemory, all
//     connections together: frames past it wait in a temporary file
//     (spill.go); requests given up past it are reported and counted
//     (Problems.Evicted).
//   - What an exchange says is its Facts (package facts), computed once.
//   - Nothing here panics on bad input or logs. The only file touched is
//     the spill file of pending request frames past Options.PendingMemory
//     (spill.go), in Options.SpillDir.
package dissect
