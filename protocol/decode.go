package protocol

// This file is the decoder's public entry points. The interpreter that walks
// the schema table lives in interp.go, primitives in reader.go.

// Decoder decodes Kafka frames, bodies and structs into Trees. The zero
// value is ready to use; its fields are options.
type Decoder struct {
	// Records enables decoding of RECORDS fields into record batches and
	// records (decompressing them). When false they stay raw spans.
	Records bool
	// MaxDecompressed caps the bytes one compressed batch may inflate to;
	// 0 means DefaultMaxDecompressed.
	MaxDecompressed int64
	// ShowSecrets keeps SASL passwords and SCRAM proofs visible; by default
	// they are marked FlagRedacted.
	ShowSecrets bool
}

// DefaultMaxDecompressed is the default cap on one batch's decompressed size.
const DefaultMaxDecompressed = 256 << 20

// RequestHeader holds the request header fields needed to pair and label a
// request (Kafka protocol guide, "Request Header v0/v1/v2").
type RequestHeader struct {
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	ClientID      string
	ClientIDNull  bool
	// HeaderVersion is 0, 1 or 2 as RequestHeaderVersion says.
	HeaderVersion int16
	// Len is the header's length in bytes, tagged fields included; the body
	// starts Len bytes after the 4-byte length prefix.
	Len int
}
