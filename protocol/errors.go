package protocol

import (
	"errors"
	"fmt"
)

// Sentinel causes of a DecodeError, tested with errors.Is.
var (
	ErrShort        = errors.New("not enough bytes")              // a fixed-size value runs past the end
	ErrLength       = errors.New("length exceeds the bytes left") // a length or count claims more than remains
	ErrNegative     = errors.New("invalid negative length")       // a negative length where null is not allowed
	ErrVarint       = errors.New("malformed varint")              // overlong or unterminated varint
	ErrUnknownAPI   = errors.New("unknown API key")
	ErrUnknownVers  = errors.New("unknown API version")
	ErrLeftover     = errors.New("bytes left over after the message")
	ErrTooDeep      = errors.New("nesting too deep")
	ErrTooManyNodes = errors.New("too many fields to decode") // Decoder.MaxNodes reached; the rest stays raw
	ErrOmitted      = errors.New("bytes not kept")            // a read reached bytes the decoder omitted (Decoder.KeepValue)
	ErrMemory       = errors.New("out of decoding memory")    // Decoder.MaxMemory or its Budget reached; the rest stays raw
)

// DecodeError locates a decoding failure: Off is the byte offset in the
// space where it happened (the frame, unless Space says otherwise), Path the
// field path such as
// "ProduceRequest v9 topicData[0].partitionData[2].records", and Err the
// cause (one of the sentinels above, possibly wrapped with detail).
type DecodeError struct {
	Off   int    // byte offset of the failure in Space
	Space int    // index into Tree.Spaces; 0 is the frame
	Path  string // field path, with the message name and version
	Err   error  // a sentinel above (errors.Is), possibly wrapped
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%s: %v (offset %#x)", e.Path, e.Err, e.Off)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// nodeLimitError is ErrTooManyNodes with the cap spelled out.
type nodeLimitError struct{ max int }

func (e nodeLimitError) Error() string {
	return fmt.Sprintf("more than %d fields in one frame (the decoder's node cap)", e.max)
}

func (e nodeLimitError) Unwrap() error { return ErrTooManyNodes }

// memoryLimitError is ErrMemory with the limit spelled out.
type memoryLimitError struct{ max int64 }

func (e memoryLimitError) Error() string {
	return "more than the " + FormatSize(e.max) + " of memory one frame may take"
}

func (e memoryLimitError) Unwrap() error { return ErrMemory }

// UnknownError is the cause (DecodeError.Err) when the schema table does
// not define what the bytes are: an API key it has no message for
// (ErrUnknownAPI), or a version of a message or versioned struct it does
// not define (ErrUnknownVers). It is not a failure to decode: the bytes
// are kept raw, as unknowns are data (the Kafka protocol guide lets a
// broker answer an ApiVersions version it does not know, KIP-511; a newer
// client sends versions older schemas lack). Errors.Is sees the sentinel.
type UnknownError struct {
	Sentinel error  // ErrUnknownAPI or ErrUnknownVers
	Key      int16  // the API key; -1 for a struct (DecodeStruct, DecodeVersioned)
	Name     string // the message or struct ("ApiVersionsRequest"); "" for an unknown API key
	Version  int16  // the version asked for
	// Known is the range of versions the schema table defines for Name
	// (all its definitions together); NoVersions for an unknown key.
	Known Versions
	text  string
}

func (e *UnknownError) Error() string { return e.text }

func (e *UnknownError) Unwrap() error { return e.Sentinel }

// unknownKey is the cause of a body of an API key the table lacks.
func unknownKey(key int16) *UnknownError {
	return &UnknownError{Sentinel: ErrUnknownAPI, Key: key, Known: NoVersions, text: fmt.Sprintf("%v %d", ErrUnknownAPI, key)}
}

// unknownVersion is the cause of version ver of name (a message of key,
// or a struct when key is -1) that the table does not define; text is
// the error's words.
func unknownVersion(key int16, name string, ver int16, text string) *UnknownError {
	return &UnknownError{Sentinel: ErrUnknownVers, Key: key, Name: name, Version: ver, Known: KnownVersions(name), text: text}
}

// KnownVersions returns the range from the lowest to the highest version
// the schema table defines for the message or struct name, over all its
// definitions; NoVersions when it defines none.
func KnownVersions(name string) Versions {
	v, found := NoVersions, false
	for _, m := range Schemas {
		if m.Name != name {
			continue
		}
		if !found {
			v, found = m.ValidVersions, true
			continue
		}
		v.Min, v.Max = min(v.Min, m.ValidVersions.Min), max(v.Max, m.ValidVersions.Max)
	}
	return v
}
