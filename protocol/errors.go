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
