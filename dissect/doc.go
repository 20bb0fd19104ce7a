// Package dissect turns reassembled TCP byte streams into Kafka exchanges.
//
// Per connection and direction a frame splitter cuts the stream on Kafka's
// 4-byte big-endian length prefix (Kafka protocol guide, "Common Request and
// Response Structure"), diagnosing and resynchronising after garbage, gaps
// and mid-frame starts. Requests and responses are paired by correlation ID
// before any body is decoded, so every response decodes with its request's
// API key and version.
package dissect
