package protocol

// This file holds the header-version facts that Kafka's message JSON files
// do not state (Kafka protocol guide, "Headers"; ApiKeys.java;
// ../shared/kafka-schemas/README.md):
//
//   - Request header v1 for non-flexible request versions, v2 for flexible
//     ones; header v0 (no ClientId) only for ControlledShutdown v0.
//   - Response header v0 for non-flexible, v1 for flexible versions, except
//     ApiVersionsResponse, always v0 (KIP-511: a client must be able to read
//     the error code of a version it does not understand).
//   - A headerVersions map in a message's JSON wins over both rules.
//   - ApiVersionsResponse also puts ErrorCode first in every version,
//     known or not (KIP-511), so an unknown version's error code is read
//     as v0's (errorCodeVersion).
//
// To add a new header exception: add a case to requestHeaderException or
// responseHeaderException with the source (KIP or ApiKeys.java) beside it,
// and a row to TestHeaderVersions.

// API keys with header exceptions.
const (
	keyControlledShutdown = 7
	keyApiVersions        = 18
)

func requestHeaderException(key, ver int16) (int16, bool) {
	if key == keyControlledShutdown && ver == 0 {
		return 0, true // ControlledShutdown v0 predates the client id
	}
	return 0, false
}

func responseHeaderException(key, ver int16) (int16, bool) {
	if key == keyApiVersions {
		return 0, true // KIP-511
	}
	return 0, false
}

// errorCodeVersion returns the version whose layout locates the top-level
// ErrorCode of a response to key at version ver: ver itself, except for an
// ApiVersionsResponse of a version the schema does not know, whose error
// code is where v0 has it (KIP-511).
func errorCodeVersion(key, ver int16) int16 {
	if key == keyApiVersions && Lookup(key, true, ver) == nil {
		return 0
	}
	return ver
}

// servingSchema returns the definition serving version ver of key in the
// given direction or, when no generation declares that version, the
// newest definition of the key (whose open flexible range still tells
// whether the unknown version is flexible). known reports an exact match.
func servingSchema(key int16, response bool, ver int16) (m *MessageSchema, known bool) {
	if m := Lookup(key, response, ver); m != nil {
		return m, true
	}
	t := TypeRequest
	if response {
		t = TypeResponse
	}
	for _, s := range schemasByKey(key) {
		if s.Type == t && (m == nil || s.ValidVersions.Max > m.ValidVersions.Max) {
			m = s
		}
	}
	return m, false
}

// RequestHeaderVersion returns the request header version (0, 1 or 2) used
// by version ver of API key key. For an unknown key it returns 1; for an
// unknown version of a known key, 2 when the key's newest definition
// declares that version flexible (an open "N+" range), else 1.
func RequestHeaderVersion(key, ver int16) int16 {
	if hv, ok := requestHeaderException(key, ver); ok {
		return hv
	}
	m, _ := servingSchema(key, false, ver)
	if m == nil {
		return 1
	}
	if hv, ok := m.HeaderVersions[ver]; ok {
		return hv
	}
	if m.FlexibleVersions.Contains(ver) {
		return 2
	}
	return 1
}

// ResponseHeaderVersion returns the response header version (0 or 1) used
// by version ver of API key key; 0 for unknown keys.
func ResponseHeaderVersion(key, ver int16) int16 {
	if hv, ok := responseHeaderException(key, ver); ok {
		return hv
	}
	m, _ := servingSchema(key, true, ver)
	if m == nil {
		return 0
	}
	if hv, ok := m.HeaderVersions[ver]; ok {
		return hv
	}
	if m.FlexibleVersions.Contains(ver) {
		return 1
	}
	return 0
}

// ParseRequestHeader reads the request header at the start of payload, a
// request frame without its 4-byte length prefix: INT16 api key, INT16 api
// version, INT32 correlation id, then (header v1+) the ClientId as a
// classic INT16-length nullable string, then (header v2) a tagged-field
// buffer, skipped. The header version comes from RequestHeaderVersion, so
// unknown keys still parse (as header v1). It builds no tree and does not
// allocate beyond the client id. Errors are *DecodeError with offsets
// relative to payload.
func ParseRequestHeader(payload []byte) (RequestHeader, error) {
	return ParseRequestHeaderReusing(payload, "")
}

// ParseRequestHeaderReusing is ParseRequestHeader, except that when the
// client id's bytes are those of clientID, ClientID is clientID itself: a
// connection's requests name the same client, and the caller that passes
// the previous request's ClientID saves an allocation a request.
func ParseRequestHeaderReusing(payload []byte, clientID string) (RequestHeader, error) {
	var h RequestHeader
	var r Reader
	r.Reset(payload, 0, len(payload))
	h.APIKey = r.Int16()
	h.APIVersion = r.Int16()
	h.CorrelationID = r.Int32()
	if r.err != nil {
		return h, &DecodeError{Off: r.errOff, Path: "RequestHeader", Err: r.err}
	}
	h.HeaderVersion = RequestHeaderVersion(h.APIKey, h.APIVersion)
	if h.HeaderVersion >= 1 {
		h.ClientID, h.ClientIDNull = r.nullableStringLike(clientID)
		if r.err != nil {
			return h, &DecodeError{Off: r.errOff, Path: "RequestHeader v" + itoa16(h.HeaderVersion) + " clientId", Err: r.err}
		}
	}
	if h.HeaderVersion >= 2 {
		r.TaggedFields(nil)
		if r.err != nil {
			return h, &DecodeError{Off: r.errOff, Path: "RequestHeader v2 taggedFields", Err: r.err}
		}
	}
	h.Len = r.off
	return h, nil
}

func itoa16(v int16) string { return versionNote(v)[1:] }
