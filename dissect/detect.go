package dissect

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/kwire/kwire/protocol"
)

// This file holds the cheap, allocation-free plausibility checks used to
// recognise Kafka connections, to validate request headers while splitting
// and to find the next frame when resynchronising, and the diagnosis of
// bytes that are not Kafka frames.

// verdict is the answer of a plausibility check over a prefix of a stream.
type verdict uint8

const (
	vNo   verdict = iota // these bytes cannot start a frame
	vMore                // plausible so far; more bytes are needed to tell
	vYes                 // plausible
)

// Request header sizes (Kafka protocol guide, "Request Header v0/v1/v2"):
// header v0 is api_key INT16, api_version INT16, correlation_id INT32;
// v1 adds client_id NULLABLE_STRING (INT16 length); v2 adds tagged fields.
const (
	minRequestLen  = 8      // payload bytes of a request header v0
	minResponseLen = 4      // payload bytes of a response header v0 (correlation_id)
	fixedReqPrefix = 4 + 10 // length prefix + header v1 up to the client id's length
	clientIDCheck  = 64     // client id bytes inspected for printability
	lenientMaxKey  = 512    // API keys accepted (as unknown) in a synced stream
	lenientMaxVer  = 128    // versions accepted (as unknown) in a synced stream
)

// apiVersions maps an API key to the union of its request versions in the
// schema table (empty range for holes).
var apiVersions = sync.OnceValue(func() []protocol.Versions {
	apis := protocol.APIs()
	maxKey := int16(-1)
	for _, a := range apis {
		maxKey = max(maxKey, a.Key)
	}
	t := make([]protocol.Versions, int(maxKey)+1)
	for i := range t {
		t[i] = protocol.NoVersions
	}
	for _, a := range apis {
		if a.Key >= 0 {
			t[a.Key] = a.Versions
		}
	}
	return t
})

// frameLength reads the 4-byte length prefix at the start of b, an INT32
// (Kafka protocol guide, "Common Request and Response Structure"); b must
// hold at least 4 bytes.
func frameLength(b []byte) int64 { return int64(int32At(b, 0)) }

// int32At reads the INT32 at b[off:], which must hold it, with
// protocol.Reader: the correlation ID of a response frame is int32At(b, 4).
func int32At(b []byte, off int) int32 {
	var r protocol.Reader
	r.Reset(b, off, off+4)
	return r.Int32()
}

// int16At reads the INT16 at b[off:], which must hold it.
func int16At(b []byte, off int) int16 {
	var r protocol.Reader
	r.Reset(b, off, off+2)
	return r.Int16()
}

// knownVersion reports whether the schema table declares request version v
// of API key key.
func knownVersion(key, v int16) bool {
	t := apiVersions()
	return key >= 0 && int(key) < len(t) && t[key].Contains(v)
}

// knownKey reports whether the schema table declares API key key.
func knownKey(key int16) bool {
	t := apiVersions()
	return key >= 0 && int(key) < len(t) && !t[key].Empty()
}

// checkRequest tells whether b (starting with the 4-byte length prefix)
// can be the start of a request frame of at most maxFrame payload bytes.
// Strict checks (detection, resynchronisation) require an API key and
// version the schema table knows and a non-negative correlation ID; lenient
// checks (a stream already in sync) accept unknown keys below 512 and
// versions below 128, as Kafka adds APIs faster than captures age; strict
// checks accept any ApiVersions version below 128 (KIP-511). Both
// require the client id to fit in the frame and its first bytes to hold
// no control character; lenient checks let tabs, newlines and carriage
// returns through (a broker takes any string as a client id, and people
// write those), strict checks none. Other controls are refused even in
// sync, though Kafka would take them: a client id whose length was
// damaged swallows the binary fields after it (their lengths' zero
// bytes), a SASL token's password or bearer token among them, and shows
// them as its text. It reads only the bytes it needs and never allocates.
func checkRequest(b []byte, maxFrame int, strict bool) verdict {
	v, _ := requestVerdict(b, maxFrame, strict)
	return v
}

// rejectKind says which check a request start failed.
type rejectKind uint8

const (
	rejNone       rejectKind = iota
	rejLength                // frame length out of range
	rejKey                   // API key unknown (strict) or out of range
	rejVersion               // version unknown for the key (strict) or out of range
	rejCorr                  // negative correlation ID (strict)
	rejClientID              // client id length impossible for the frame
	rejClientText            // client id not printable
)

// rejection is why requestVerdict said vNo, with the values it read;
// String words it for a skipped connection's reason.
type rejection struct {
	kind     rejectKind
	n        int64 // the frame length
	key, ver int16
	corr     int32
	clen     int64
	max      int
}

func (r rejection) String() string {
	switch r.kind {
	case rejLength:
		if r.n < 0 {
			return fmt.Sprintf("negative frame length %d", r.n)
		}
		if r.n < minRequestLen {
			return fmt.Sprintf("frame length %d is shorter than a request header", r.n)
		}
		return fmt.Sprintf("frame length %d (%#08x) above the largest frame accepted (--max-frame %d)", r.n, uint32(r.n), r.max)
	case rejKey:
		return fmt.Sprintf("API key %d is not one kwire knows", r.key)
	case rejVersion:
		vs := protocol.NoVersions
		if t := apiVersions(); r.key >= 0 && int(r.key) < len(t) {
			vs = t[r.key]
		}
		if vs.Empty() {
			return fmt.Sprintf("%s version %d is not one kwire knows", protocol.APIName(r.key), r.ver)
		}
		return fmt.Sprintf("%s v%d is not a version kwire knows (v%d-v%d)", protocol.APIName(r.key), r.ver, vs.Min, vs.Max)
	case rejCorr:
		return fmt.Sprintf("%s v%d with a negative correlation ID %d", protocol.APIName(r.key), r.ver, r.corr)
	case rejClientID:
		return fmt.Sprintf("%s v%d whose client id length %d does not fit its %d-byte frame", protocol.APIName(r.key), r.ver, r.clen, r.n)
	case rejClientText:
		return fmt.Sprintf("%s v%d whose client id is not text", protocol.APIName(r.key), r.ver)
	}
	return "not a request"
}

// requestVerdict is checkRequest, with the reason of a vNo. The header is
// read with protocol.Reader, its version from protocol.RequestHeaderVersion
// (header v0, without a client id, where protocol/headers.go says). Every
// read is preceded by a length check, so the reader never fails (and never
// allocates an error) on a prefix that is merely short.
func requestVerdict(b []byte, maxFrame int, strict bool) (verdict, rejection) {
	var r protocol.Reader
	r.Reset(b, 0, len(b))
	rej := rejection{max: maxFrame}
	no := func(k rejectKind) (verdict, rejection) {
		rej.kind = k
		return vNo, rej
	}
	if r.Remaining() < 4 {
		return vMore, rej
	}
	rej.n = int64(r.Int32())
	if rej.n < minRequestLen || rej.n > int64(maxFrame) {
		return no(rejLength)
	}
	if r.Remaining() < 2 {
		return vMore, rej
	}
	rej.key = r.Int16()
	if strict && !knownKey(rej.key) || rej.key < 0 || rej.key >= lenientMaxKey {
		return no(rejKey)
	}
	if r.Remaining() < 2 {
		return vMore, rej
	}
	rej.ver = r.Int16()
	// Clients send ApiVersions at the newest version they know, which may
	// be newer than the schema (KIP-511): any version passes for key 18.
	if strict && rej.key != keyApiVersions && !knownVersion(rej.key, rej.ver) || rej.ver < 0 || rej.ver >= lenientMaxVer {
		return no(rejVersion)
	}
	if r.Remaining() < 4 {
		return vMore, rej
	}
	rej.corr = r.Int32()
	if strict && rej.corr < 0 {
		return no(rejCorr)
	}
	if protocol.RequestHeaderVersion(rej.key, rej.ver) == 0 {
		return vYes, rej // no client id
	}
	if rej.n < 10 {
		rej.clen = -2
		return no(rejClientID)
	}
	if r.Remaining() < 2 {
		return vMore, rej
	}
	rej.clen = int64(r.Int16())
	if rej.clen < -1 || 10+max(rej.clen, 0) > rej.n {
		return no(rejClientID)
	}
	if rej.clen <= 0 {
		return vYes, rej
	}
	check := int(min(rej.clen, clientIDCheck))
	have := min(check, r.Remaining())
	for _, c := range r.Span(have) {
		if c < 0x20 && (strict || c != '\t' && c != '\n' && c != '\r') || c == 0x7f {
			return no(rejClientText)
		}
	}
	if have < check {
		return vMore, rej
	}
	return vYes, rej
}

// checkResponse tells whether b (starting with the 4-byte length prefix)
// can start a response frame answering one of the pending correlation IDs.
func checkResponse(b []byte, maxFrame int, pending *pendingQueue) verdict {
	if len(b) < 4 {
		return vMore
	}
	n := frameLength(b)
	if n < minResponseLen || n > int64(maxFrame) {
		return vNo
	}
	if len(b) < 8 {
		return vMore
	}
	corr := int32At(b, 4)
	if _, ok := pending.has(corr); ok {
		return vYes
	}
	return vNo
}

// isTLS reports whether b starts like a TLS record: content type 20-23
// (change_cipher_spec, alert, handshake, application_data), version 3.x
// with x ≤ 4 (SSL 3.0 to TLS 1.3's legacy version), a record length of at
// most 2^14+2048 (RFC 8446 section 5.2).
func isTLS(b []byte) bool {
	if len(b) < 5 || b[0] < 0x14 || b[0] > 0x17 || b[1] != 3 || b[2] > 4 {
		return false
	}
	return binary.BigEndian.Uint16(b[3:]) <= 1<<14+2048
}

// httpPrefixes are the starts of HTTP/1.x requests and responses.
var httpPrefixes = [][]byte{
	[]byte("GET "), []byte("POST "), []byte("PUT "), []byte("HEAD "),
	[]byte("DELETE "), []byte("OPTIONS "), []byte("PATCH "),
	[]byte("CONNECT "), []byte("HTTP/1."), []byte("PRI * HTTP/2"),
}

// isHTTP reports whether b starts like an HTTP/1.x message or an HTTP/2
// connection preface.
func isHTTP(b []byte) bool {
	for _, p := range httpPrefixes {
		if len(b) >= len(p) && bytes.Equal(b[:len(p)], p) ||
			len(b) >= 4 && len(b) < len(p) && bytes.Equal(b, p[:len(b)]) {
			return true
		}
	}
	return false
}

// looksPLAIN reports whether a token looks like a SASL PLAIN message
// (RFC 4616: [authzid] NUL authcid NUL passwd). The identities must be
// text of at most 255 bytes each (UTF-8, no control character); the
// password may be anything, a NUL or a control byte inside it included:
// whatever follows the second NUL is withheld as the password, so the
// shape is judged by the identities alone (tok may be a token's first
// bytes only).
func looksPLAIN(tok []byte) bool {
	i := bytes.IndexByte(tok, 0)
	if i < 0 || i > 255 {
		return false
	}
	j := bytes.IndexByte(tok[i+1:], 0)
	if j <= 0 || j > 255 {
		return false
	}
	for _, c := range tok[:i+1+j] {
		if c != 0 && (c < 0x20 || c == 0x7f) {
			return false
		}
	}
	return true
}

// looksSCRAM reports whether a token looks like a SCRAM message (RFC 5802
// section 7: client-first "n,," / "y,," / "p=", server-first "r=",
// client-final "c=", server-final "v=" or "e=").
func looksSCRAM(tok []byte) bool {
	for _, p := range []string{"n,,", "y,,", "p=", "n,a=", "y,a=", "r=", "c=", "v=", "e="} {
		if bytes.HasPrefix(tok, []byte(p)) {
			return true
		}
	}
	return false
}

// looksOAUTHBEARER reports whether a SCRAM-like token is an OAUTHBEARER
// initial client response (RFC 7628 section 3.1): the same GS2 header
// ("n,," or "n,a=user,"), then key=value pairs each ended by 0x01.
func looksOAUTHBEARER(tok []byte) bool {
	if !bytes.HasPrefix(tok, []byte("n,")) && !bytes.HasPrefix(tok, []byte("y,")) {
		return false
	}
	i := bytes.IndexByte(tok[2:], ',')
	return i >= 0 && 2+i+1 < len(tok) && tok[2+i+1] == 0x01
}

// looksSASL reports whether a frame payload is a raw PLAIN or SCRAM token.
func looksSASL(tok []byte) bool { return looksPLAIN(tok) || looksSCRAM(tok) }

// diagnose names what bytes that do not start a Kafka frame look like. b
// starts at the would-be length prefix; lengthOK says the length was in
// range and the header was what failed.
func diagnose(b []byte, lengthOK bool) string {
	switch {
	case isTLS(b):
		return fmt.Sprintf("TLS record (% x), not decrypted", b[:3])
	case isHTTP(b):
		return "HTTP, not Kafka"
	case len(b) > 0 && b[0] == 0x60:
		return "GSSAPI token (0x60) without a length prefix"
	case len(b) > 4 && b[4] == 0x60:
		return "raw GSSAPI token (0x60) where a Kafka header was expected"
	case len(b) > 4 && looksPLAIN(b[4:min(len(b), 4+1024)]):
		return "raw SASL PLAIN token where a Kafka header was expected"
	case len(b) > 4 && looksSCRAM(b[4:]):
		return "raw SASL SCRAM message where a Kafka header was expected"
	}
	if lengthOK && len(b) >= 8 {
		return fmt.Sprintf("implausible request header (API key %d, version %d): garbage",
			int16At(b, 4), int16At(b, 6))
	}
	if len(b) >= 4 {
		n := int32At(b, 0)
		if n < 0 {
			return fmt.Sprintf("negative frame length %d: garbage", n)
		}
		return fmt.Sprintf("frame length %d (%#08x) out of range: garbage", n, uint32(n))
	}
	return "garbage"
}
