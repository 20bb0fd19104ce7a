package protocol

import "bytes"

// This file holds the known quirks of clients: bytes that a released
// client sends beyond what Kafka's message JSON defines and that brokers
// accept. A quirk's bytes stay visible (a "leftover" node, FlagLenient,
// with a Note naming the client and versions) but are not a decoding
// error; any other leftover still is (ErrLeftover).
//
// To add a quirk: say which client versions send which bytes and why,
// with the source (the client's change that introduced and removed
// them), add a case to knownLeftover, and a test with those bytes.

// librdkafkaAPIVersionsV0 is what librdkafka 0.9.1 to 1.3.0 appended to
// every ApiVersionsRequest v0: an INT32 0, "Empty array: request all
// APIs", a field of an early draft of KIP-35 that the final
// ApiVersionsRequest v0 does not have. librdkafka 1.4.0 (KIP-511 support,
// ApiVersions v3) stopped writing it. Brokers read the message and ignore
// the rest.
var librdkafkaAPIVersionsV0 = []byte{0, 0, 0, 0}

// noteLibrdkafkaAPIVersionsV0 explains those bytes where they are shown.
const noteLibrdkafkaAPIVersionsV0 = "4 bytes after ApiVersionsRequest v0: the empty ApiKeys array (INT32 0) of an early KIP-35 draft that librdkafka 0.9.1 to 1.3.0 appended; brokers ignore it (a known client quirk, not an error; fixed in librdkafka 1.4.0)"

// knownLeftover returns the note for left, the bytes after a complete
// message m at version ver, when they are a known client quirk.
func knownLeftover(m *MessageSchema, ver int16, left []byte) (string, bool) {
	if m.APIKey == keyApiVersions && m.Type == TypeRequest && ver == 0 && bytes.Equal(left, librdkafkaAPIVersionsV0) {
		return noteLibrdkafkaAPIVersionsV0, true
	}
	return "", false
}
