package protocol

// This file holds the peeks: the few values of a frame that the dissector
// must know before (and whether or not) the frame is decoded, read with
// the decoder's cursor (Reader), schema table and header rules, so that
// nothing outside this package reads a Kafka field by hand:
//
//	PeekProduceAcks          ProduceRequest.Acks (acks=0: no response follows)
//	PeekSaslHandshake        SaslHandshakeRequest.Mechanism
//	PeekErrorCode            a response body's top-level ErrorCode
//	PeekAPIVersions          ApiVersionsResponse.ApiKeys (KIP-35)
//
// A peek skips the header (its version from RequestHeaderVersion or
// ResponseHeaderVersion) and the body's top-level fields before the one it
// wants, each by its schema type and the interpreter's encoding rules
// (compactIn, fixedSize), and reads that one; nothing after it is read, so
// a peek works on a frame cut short after its field, and it builds no
// tree and allocates nothing (the dissector peeks at every Produce
// request). Only fields after fixed-size, string and bytes fields can be
// peeked this way; PeekAPIVersions reads the array of fixed-size structs
// that follows them. Each reports ok false when the frame does not hold the
// value (too short, malformed, another API, an unknown version).
//
// To add a peek: name the message and field as Kafka's message JSON does,
// call skimTo with them, read the field with the Reader, and test it on a
// frame of every version range the field has.

import "encoding/binary"

// API keys the peeks read.
const (
	keyProduce       = 0
	keySaslHandshake = 17
)

// skimTo positions a Reader over frame (a request when !response, else a
// response to key at version ver) at the body's top-level field named
// field, and returns the field and whether it is compact. ok is false when
// the version is unknown, the field is absent in ver (or tagged), a field
// before it is a struct or an array, or the bytes run out first.
func skimTo(r *Reader, frame []byte, response bool, key, ver int16, field string) (f *Field, compact, ok bool) {
	m, known := servingSchema(key, response, ver)
	if !known {
		return nil, false, false
	}
	r.Reset(frame, 0, len(frame))
	size := int(r.Int32())
	if r.err != nil || size < 0 {
		return nil, false, false
	}
	r.SetEnd(min(len(frame), 4+size))
	var hv int16
	if response {
		hv = ResponseHeaderVersion(key, ver)
	} else {
		hv = RequestHeaderVersion(key, ver)
		r.Int16() // RequestApiKey
		r.Int16() // RequestApiVersion
	}
	r.Int32() // CorrelationId
	if !response && hv >= 1 {
		if n := r.StringLen(); n > 0 {
			r.Span(n) // ClientId: a classic string in every header version
		}
	}
	if response && hv >= 1 || !response && hv >= 2 {
		r.TaggedFields(nil)
	}
	flex := m.FlexibleVersions.Contains(ver)
	for i := range m.Fields {
		g := &m.Fields[i]
		if !g.Versions.Contains(ver) || g.TaggedVersions.Contains(ver) {
			continue
		}
		c := compactIn(g, flex, ver)
		if g.Name == field {
			return g, c, r.err == nil
		}
		switch n := fixedSize(g.Kind); {
		case n > 0:
			r.Span(n)
		case g.Kind == TypeString && !c:
			r.Span(max(r.StringLen(), 0))
		case g.Kind == TypeString || g.Kind == TypeBytes && c:
			r.Span(max(r.CompactLen(), 0))
		case g.Kind == TypeBytes:
			r.Span(max(r.BytesLen(), 0))
		default:
			return nil, false, false // a struct, array or records: not skimmed
		}
		if r.err != nil {
			return nil, false, false
		}
	}
	return nil, false, false
}

// requestKey reads the API key and version at the start of a request
// frame (after its 4-byte length).
func requestKey(frame []byte) (key, ver int16, ok bool) {
	var r Reader
	r.Reset(frame, 4, len(frame))
	if r.Remaining() < 4 {
		return 0, 0, false
	}
	key, ver = r.Int16(), r.Int16()
	return key, ver, r.err == nil
}

// PeekProduceAcks returns the Acks of a ProduceRequest frame
// (ProduceRequest.json: after TransactionalId, v3+); ok is false when the
// frame is not a Produce request of a known version or is cut before Acks.
func PeekProduceAcks(frame []byte) (acks int16, ok bool) {
	key, ver, ok := requestKey(frame)
	if !ok || key != keyProduce {
		return 0, false
	}
	var r Reader
	f, _, ok := skimTo(&r, frame, false, key, ver, "Acks")
	if !ok || f.Kind != TypeInt16 {
		return 0, false
	}
	acks = r.Int16()
	return acks, r.err == nil
}

// PeekSaslHandshake returns the Mechanism of a SaslHandshakeRequest frame
// (SaslHandshakeRequest.json, v0-v1).
func PeekSaslHandshake(frame []byte) (mechanism string, ok bool) {
	key, ver, ok := requestKey(frame)
	if !ok || key != keySaslHandshake {
		return "", false
	}
	var r Reader
	f, c, ok := skimTo(&r, frame, false, key, ver, "Mechanism")
	if !ok || f.Kind != TypeString {
		return "", false
	}
	if c {
		mechanism = r.CompactString()
	} else {
		mechanism = r.String()
	}
	return mechanism, r.err == nil
}

// PeekErrorCode returns the top-level ErrorCode of a response frame to API
// key key at version ver (ApiVersionsResponse, SaslHandshakeResponse and
// every other response whose body has one before any array), read after
// the response header that ResponseHeaderVersion gives (v0 for
// ApiVersions, KIP-511), at the layout errorCodeVersion gives (an unknown
// version of ApiVersionsResponse is read as v0, KIP-511).
func PeekErrorCode(frame []byte, key, ver int16) (code int16, ok bool) {
	ver = errorCodeVersion(key, ver)
	var r Reader
	f, _, ok := skimTo(&r, frame, true, key, ver, "ErrorCode")
	if !ok || f.Kind != TypeInt16 {
		return 0, false
	}
	code = r.Int16()
	return code, r.err == nil
}

// APIRange is one API key's version range as a broker advertises it in an
// ApiVersionsResponse (ApiVersionsResponse.json ApiKeys: ApiKey,
// MinVersion, MaxVersion; KIP-35).
type APIRange struct {
	Key      int16 // API key
	Min, Max int16 // inclusive version range
}

// PeekAPIVersions reads an ApiVersionsResponse frame of version ver: its
// ErrorCode and ApiKeys, in wire order, each element's fields by their
// schema names (ApiKey, MinVersion, MaxVersion: fixed-size, so the array
// is read without building a tree), skipping each element's tagged
// fields. ok is false when the frame is cut or malformed before the end
// of ApiKeys; a null or empty ApiKeys gives no ranges.
func PeekAPIVersions(frame []byte, ver int16) (code int16, ranges []APIRange, ok bool) {
	var r Reader
	if _, _, ok := skimTo(&r, frame, true, keyApiVersions, ver, "ErrorCode"); !ok {
		return 0, nil, false
	}
	code = r.Int16()
	f, compact, ok := skimTo(&r, frame, true, keyApiVersions, ver, "ApiKeys")
	if !ok || f.Kind != TypeArray || f.Elem != TypeStruct {
		return code, nil, false
	}
	flex := Lookup(keyApiVersions, true, ver).FlexibleVersions.Contains(ver)
	var n int
	if compact {
		n = r.CompactArrayLen(6)
	} else {
		n = r.ArrayLen(6)
	}
	if r.err != nil {
		return code, nil, false
	}
	// Which of each element's fields go where, worked out once: an
	// element is then read with no look at the schema, at once with the
	// others when the layout is the usual one (readStdRanges), else its k
	// INT16s into vals; ApiKey, MinVersion and MaxVersion are
	// vals[keyAt], vals[minAt] and vals[maxAt], or the last slot, which
	// stays 0, when the version lacks one.
	var vals [9]int16
	keyAt, minAt, maxAt := len(vals)-1, len(vals)-1, len(vals)-1
	k := 0
	for i := range f.Fields {
		g := &f.Fields[i]
		if !g.Versions.Contains(ver) || g.TaggedVersions.Contains(ver) {
			continue
		}
		if g.Kind != TypeInt16 || k == len(vals)-1 {
			return code, nil, false // not the layout this reads
		}
		switch g.Name {
		case "ApiKey":
			keyAt = k
		case "MinVersion":
			minAt = k
		case "MaxVersion":
			maxAt = k
		}
		k++
	}
	ranges = make([]APIRange, 0, max(n, 0))
	if k == 3 && keyAt == 0 && minAt == 1 && maxAt == 2 && readStdRanges(&r, n, flex, &ranges) {
		return code, ranges, true
	}
	for range n {
		for i := range k {
			vals[i] = r.Int16()
		}
		if flex {
			r.TaggedFields(nil)
		}
		if r.err != nil {
			return code, nil, false
		}
		ranges = append(ranges, APIRange{Key: vals[keyAt], Min: vals[minAt], Max: vals[maxAt]})
	}
	return code, ranges, true
}

// readStdRanges reads n ApiKeys elements of the layout of every version
// so far (ApiKey, MinVersion, MaxVersion: 6 bytes, and when flexible a
// tagged-field count) into *ranges from their bytes at once, when all of
// them are there and none has tagged fields (the count a single 0 byte,
// as brokers send them), and reports whether it did; otherwise it reads
// nothing and the caller reads them field by field.
func readStdRanges(r *Reader, n int, flex bool, ranges *[]APIRange) bool {
	if n < 0 {
		return false // null: nothing to read
	}
	width := 6
	if flex {
		width = 7
	}
	b := r.ahead(n * width)
	if b == nil {
		return false
	}
	out := (*ranges)[:n]
	for i := range out {
		e := (*[6]byte)(b[i*width:]) // one bound check; none for its bytes
		if flex && b[i*width+6] != 0 {
			return false
		}
		out[i] = APIRange{Key: int16(binary.BigEndian.Uint16(e[0:])), Min: int16(binary.BigEndian.Uint16(e[2:])),
			Max: int16(binary.BigEndian.Uint16(e[4:]))}
	}
	r.take(n * width)
	*ranges = out
	return true
}
