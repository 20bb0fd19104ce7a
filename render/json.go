package render

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"math"
	"net/netip"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
)

// ExchangeDoc is the JSON document ExchangeJSON writes for one exchange, one
// per line (NDJSON). Every key is always present (null or empty when it
// does not apply) so that jq filters need no guards; TestExchangeJSONFields
// pins the key set.
type ExchangeDoc struct {
	Stream        int     `json:"stream"`                         // TCP stream index (reassembly.Conn.Index), -1 unknown
	File          *string `json:"file" jsonschema:"nullable"`     // the capture file, when several are read as captures of their own (Options.File); null for one capture
	Client        string  `json:"client"`                         // "ip:port" of the side sending requests
	Broker        string  `json:"broker"`                         // "ip:port" of the broker
	Kind          string  `json:"kind"`                           // paired | noResponse | unanswered | orphan | sasl | inFlight (ExchangeKind)
	API           string  `json:"api"`                            // "Produce"; "" when unknown (orphans)
	APIKey        int16   `json:"apiKey"`                         // request header RequestApiKey
	APIVersion    int16   `json:"apiVersion"`                     // request header RequestApiVersion
	CorrelationID int32   `json:"correlationId"`                  // header CorrelationId
	ClientID      *string `json:"clientId" jsonschema:"nullable"` // request header ClientId; null when null, not captured or no request
	// ClientIDNotCaptured is true when the request's header was cut
	// before its ClientId ended (a gap, the capture's snap length:
	// dissect.Exchange.ClientIDNotCaptured): the client ID is not known,
	// and clientId is null. False otherwise: a null clientId is then the
	// header's null ClientId (or, for an orphan, no request).
	ClientIDNotCaptured bool        `json:"clientIdNotCaptured"`
	Request             *MessageDoc `json:"request" jsonschema:"nullable"`   // null for orphans
	Response            *MessageDoc `json:"response" jsonschema:"nullable"`  // null unless answered (or orphan)
	LatencyMs           *float64    `json:"latencyMs" jsonschema:"nullable"` // ms from the request's first packet to the response's first; null without both
	SASL                *SASLDoc    `json:"sasl" jsonschema:"nullable"`      // SASL mechanism and user; null when neither is known
	Guess               *GuessDoc   `json:"guess" jsonschema:"nullable"`     // for an orphan, what it probably answers; null otherwise
	Subject             string      `json:"subject"`                         // Subject(e)
	Errors              []string    `json:"errors"`                          // distinct Kafka error names in the response, in order
	Notes               []string    `json:"notes"`                           // the dissector's notes
	// Topics are the topics the request and response name, in order of
	// appearance (facts.Exchange.AllTopics): names, or the topic ID
	// (base64url) where no earlier exchange of the capture named it; []
	// when none.
	Topics []string `json:"topics"`
	// Facts is what the exchange says, typed (FactsDoc).
	Facts *FactsDoc `json:"facts" jsonschema:"nullable"`
}

// SASLDoc names the SASL mechanism (from SaslHandshake, or of a raw token
// exchange) and the user a client token carried (dissect.Exchange
// Mechanism and User); never a password or proof.
type SASLDoc struct {
	Mechanism string `json:"mechanism" expr:"mechanism"` // "PLAIN", "SCRAM-SHA-256", "GSSAPI"; "" unknown
	User      string `json:"user" expr:"user"`           // user name from a PLAIN or SCRAM client token; "" unknown
}

// SASLOf is the exchange's "sasl": the dissector's mechanism and user (a
// handshake, a raw token), else what a SaslAuthenticate token says (fx,
// e's facts), as the line shows them; nil when neither is known.
func SASLOf(e *dissect.Exchange, fx *facts.Exchange) *SASLDoc {
	m, u := e.Mechanism, e.User
	if fx != nil {
		m, u = cmp.Or(m, fx.SASL.Mechanism), cmp.Or(u, fx.SASL.User)
	}
	if m == "" && u == "" {
		return nil
	}
	return &SASLDoc{Mechanism: m, User: u}
}

// GuessOf is the exchange's "guess" (dissect.Exchange.Guess); nil when it
// has none.
func GuessOf(e *dissect.Exchange) *GuessDoc {
	g := e.Guess
	if g == nil {
		return nil
	}
	return &GuessDoc{API: protocol.APIName(g.APIKey), APIKey: g.APIKey, APIVersion: g.APIVersion,
		Candidates: g.Candidates, Decoded: g.Decoded, Partial: g.Partial}
}

// GuessDoc is what an orphan response probably answers (dissect.Guess):
// the response schemas that decode its whole frame. With one candidate
// the response's header and body are decoded as it ("decoded": true) —
// a guess, not what a request said.
type GuessDoc struct {
	API        string `json:"api" expr:"api"`               // "Metadata": the only candidate, or the likeliest
	APIKey     int16  `json:"apiKey" expr:"apiKey"`         // its API key
	APIVersion int16  `json:"apiVersion" expr:"apiVersion"` // its version
	Candidates int    `json:"candidates" expr:"candidates"` // how many (API key, version) pairs decode the whole frame
	Decoded    bool   `json:"decoded" expr:"decoded"`       // the response was decoded as api/apiVersion
	Partial    bool   `json:"partial" expr:"partial"`       // only what earlier orphans on the connection answered was tried
}

// MessageDoc is one frame of an exchange in ExchangeDoc.
type MessageDoc struct {
	Frame      int64  `json:"frame"`     // capture packet number of the frame's first byte (1-based)
	LastPacket int64  `json:"lastFrame"` // capture packet number of its last byte
	Time       string `json:"time"`      // capture time of the first byte, RFC 3339 with nanoseconds, UTC
	Size       int    `json:"size"`      // frame size in bytes on the wire, 4-byte length prefix included (what the prefix says for a cut frame)
	// CapturedBytes is how many of the frame's bytes the capture holds:
	// size for a frame captured whole, fewer for one a gap, the capture's
	// snap length or its end cut (dissect.Frame.Captured).
	CapturedBytes int `json:"capturedBytes"`
	// Header is the request or response header in Kafka's JsonConverter form
	// ({"requestApiKey":18,...}); null when not decoded.
	Header json.RawMessage `json:"header"`
	// Body is the message body in JsonConverter form (protocol.BodyJSON:
	// field names with the first letter lower-cased, int64 as numbers,
	// UUIDs base64url, bytes base64, tagged fields by name, null as null);
	// for a frame that was not decoded (cut by a gap or the end of the
	// capture) {"undecoded": "frame", "note": "not decoded", "size", "hex"}
	// with the bytes captured; except that a decoded RECORDS field is an
	// array with one object per batch or legacy message:
	//
	//	{"compression": "none|gzip|snappy|lz4|zstd",
	//	 "timestampType": "CreateTime|LogAppendTime", "transactional": bool,
	//	 "control": bool (magic 2 only), "crcValid": bool,
	//	 "baseOffset", "batchLength", "partitionLeaderEpoch", "magic", "crc",
	//	 "attributes", "lastOffsetDelta", "baseTimestamp", "maxTimestamp",
	//	 "producerId", "producerEpoch", "baseSequence": numbers,
	//	 "records": [{"offset": absolute, "timestamp": absolute ms,
	//	   "controlType": "COMMIT" (control records only), "length",
	//	   "attributes", "timestampDelta", "offsetDelta",
	//	   "key", "keySize", "value", "valueSize",
	//	   "headers": [{"key", "keySize", "value", "valueSize"}]}]}
	//
	// (legacy messages: "offset" (as on the wire: relative inside a magic 1
	// wrapper), "messageSize", "crc", "magic", "attributes", "timestamp",
	// "key", "value", ..., and for a compressed wrapper "messageSet": an
	// array of its inner messages in this same form), with a partial batch
	// at the end as {"undecoded": "PartialBatch", "note", "size", "hex"}.
	// No object repeats a key: undecoded spans inside an object (leftovers,
	// the rest after a failure) are an array "_undecoded" of such
	// {"undecoded", ...} objects (with "truncated": true when the decoder
	// kept only the first bytes of an undecodable span it inflated: "hex"
	// holds those, "size" the span's), and a field the tree holds twice (a tag
	// repeated on the wire) keeps its first value, the others going to
	// "_repeated": [{"name", "value"}].
	// A bytes field holding a withheld secret (SaslAuthenticate authBytes
	// with a PLAIN password or SCRAM proof; see protocol.SASLToken) is the
	// base64 of its bytes with each secret replaced by the 10 bytes
	// "<redacted>" (the whole value when it has no parts), so that neither
	// the secret nor its length shows; a string secret is "<redacted>".
	// Keys, values and header values are strings (null when null or with
	// Options.Values none) in the encoding "<name>Encoding" names: "text"
	// (Options.Values text, the bytes valid UTF-8), "base64" (standard,
	// padded: --values base64, or text that is not UTF-8) or "hex"; past
	// Options.MaxValue bytes they are cut and "<name>Truncated": true is
	// added. "<name>Size" is always the full length.
	Body  json.RawMessage `json:"body"`
	Error string          `json:"error"` // decoding error, "" when none (an unknown API key or version is not one)
	// Unknown marks a body whose API key or version kwire's schemas do
	// not define, kept raw in Body ({"undecoded": ...}): not a decode
	// error, which Error is "" for ("unknown version: ApiVersions v99 is
	// beyond what kwire's schemas define (v0-4); body withheld (...)", as the
	// line says it); null otherwise.
	Unknown             *string         `json:"unknown" jsonschema:"nullable"`
	UnknownTaggedFields []UnknownTagDoc `json:"unknownTaggedFields"` // tagged fields no schema names
}

// UnknownTagDoc is one tagged field the schema does not know.
type UnknownTagDoc struct {
	Path   string `json:"path"`   // path of the struct holding it ("ApiVersionsRequest", "FetchResponse.Responses[0]")
	Tag    int64  `json:"tag"`    // the tag number
	Size   int    `json:"size"`   // data size in bytes; -1 when withheld (a tag in a message that carries secrets)
	Offset int    `json:"offset"` // offset of the field's first byte in its space
	Space  int    `json:"space"`  // 0 for the frame, else a decoder-made space
	Hex    string `json:"hex"`    // the data, lowercase hex; "<redacted>" when withheld
}

// TreeDoc is the document TreeJSON writes for one decoded frame or body.
type TreeDoc struct {
	Length              *int64          `json:"length,omitempty" jsonschema:"nullable"` // the frame's length prefix, when a frame
	Message             string          `json:"message,omitempty"`                      // "ApiVersionsRequest", when known
	Header              json.RawMessage `json:"header,omitempty"`                       // JsonConverter form, when a frame
	Body                json.RawMessage `json:"body"`                                   // JsonConverter form (records as base64)
	UnknownTaggedFields []UnknownTagDoc `json:"unknownTaggedFields,omitempty"`          // tagged fields no schema names
	Error               string          `json:"error,omitempty"`                        // the decoding error (protocol.DecodeError text)
	Unknown             string          `json:"unknown,omitempty"`                      // an API key or version kwire's schemas do not define, kept raw: not an error (MessageDoc.Unknown)
}

// kindNames are ExchangeDoc's "kind" values.
var kindNames = map[dissect.Kind]string{
	dissect.KindPaired:     "paired",
	dissect.KindNoResponse: "noResponse",
	dissect.KindUnanswered: "unanswered",
	dissect.KindOrphan:     "orphan",
	dissect.KindSASL:       "sasl",
}

// KindName returns k as ExchangeDoc's "kind" spells it (paired,
// noResponse, unanswered, orphan, sasl); "" for a kind it does not know
// (ExchangeDoc then writes "kind(N)").
func KindName(k dissect.Kind) string { return kindNames[k] }

// ExchangeKind is e's "kind" in ExchangeDoc: KindName's, or "inFlight"
// for a request in flight when the read stopped (Exchange.InFlight).
func ExchangeKind(e *dissect.Exchange) string {
	if e.Kind == dissect.KindUnanswered && e.InFlight {
		return "inFlight"
	}
	return kindNames[e.Kind]
}

// NewExchangeDoc builds the document ExchangeJSON writes for e.
// (AppendExchangeJSON writes the same document without building it:
// appendExchange.)
func NewExchangeDoc(e *dissect.Exchange, opts Options) *ExchangeDoc {
	d := &ExchangeDoc{
		Stream:        -1,
		Client:        addrString(e.Client),
		Broker:        addrString(e.Broker),
		Kind:          ExchangeKind(e),
		API:           APIName(e),
		APIKey:        e.APIKey,
		APIVersion:    e.APIVersion,
		CorrelationID: e.CorrelationID,
		Subject:       Subject(e),
		Errors:        []string{},
		Notes:         append([]string{}, e.Notes...),
	}
	if e.Conn != nil {
		d.Stream = e.Conn.Index
	}
	if opts.File != "" {
		d.File = strPtr(opts.File)
	}
	if d.Kind == "" {
		d.Kind = "kind(" + itoa(int64(e.Kind)) + ")"
	}
	d.Guess = GuessOf(e)
	d.ClientIDNotCaptured = e.ClientIDNotCaptured
	if e.ClientIDKnown() && !e.ClientIDNull {
		id := e.ClientID
		d.ClientID = &id
	}
	if l := e.Latency(); l >= 0 {
		ms := float64(l) / float64(time.Millisecond)
		d.LatencyMs = &ms
	}
	fx := e.Facts()
	d.SASL = SASLOf(e, fx)
	for _, er := range errorCounts(nil, fx) {
		d.Errors = append(d.Errors, er.Name)
	}
	d.Topics = fx.AllTopics()
	if d.Topics == nil {
		d.Topics = []string{}
	}
	d.Facts = NewFactsDoc(fx)
	d.Request = messageDoc(e.Request, &opts)
	d.Response = messageDoc(e.Response, &opts)
	return d
}

func addrString(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func messageDoc(f *dissect.Frame, o *Options) *MessageDoc {
	if f == nil {
		return nil
	}
	m := messageHead(f)
	if f.Tree == nil {
		// Not decoded (cut by a gap or the end of the capture): the bytes
		// captured, so that nothing is lost, unless they may hold a secret.
		if f.Withheld {
			m.Body = json.RawMessage(`{"undecoded":"frame","note":"not decoded; withheld: it may hold a secret","hex":"` + redacted + `"}`)
		} else if len(f.Bytes) > 0 {
			m.Body = json.RawMessage(undecodedJSON(nil, "frame", "not decoded", f.Bytes, len(f.Bytes), &jsonSafe))
		}
		return m
	}
	j := getJSONWriter(o, true)
	defer putJSONWriter(j)
	if h := headerOf(f.Tree); h != nil {
		m.Header = j.converter(h)
	}
	if b := bodyOf(f.Tree); b != nil {
		m.Body = j.converter(b)
	}
	m.setError(f.Tree)
	m.UnknownTaggedFields = append(m.UnknownTaggedFields, j.unknown...)
	return m
}

// setError sets m's Error from t's, or Unknown when it only says the
// schema table does not define the API key or version.
func (m *MessageDoc) setError(t *protocol.Tree) {
	if t.Err == nil {
		return
	}
	if l, ok := unknownLabel(t); ok {
		m.Unknown = &l
		return
	}
	m.Error = t.Err.Error()
}

// messageHead is the MessageDoc of f without header, body, error and
// unknown tagged fields.
func messageHead(f *dissect.Frame) *MessageDoc {
	return &MessageDoc{
		Frame:               f.FirstPacket,
		LastPacket:          f.LastPacket,
		Time:                f.Time.UTC().Format(time.RFC3339Nano),
		Size:                f.Size(),
		CapturedBytes:       f.Captured(),
		UnknownTaggedFields: []UnknownTagDoc{},
	}
}

// appendMessageDirect appends the JSON of messageDoc(f, o) as
// appendMessageDoc writes it, with the header and body rendered straight
// into b rather than into a json.RawMessage first, and the rest written
// from f rather than from a MessageDoc (its time formatted into b).
func appendMessageDirect(b []byte, f *dissect.Frame, o *Options) []byte {
	if f == nil || f.Tree == nil {
		return appendMessageDoc(b, messageDoc(f, o))
	}
	j := getJSONWriter(o, true)
	defer putJSONWriter(j)
	b = append(b, `{"frame":`...)
	b = strconv.AppendInt(b, f.FirstPacket, 10)
	b = append(b, `,"lastFrame":`...)
	b = strconv.AppendInt(b, f.LastPacket, 10)
	b = append(b, `,"time":"`...)
	b = f.Time.UTC().AppendFormat(b, time.RFC3339Nano) // digits and -:.TZ, nothing to escape
	b = append(b, `","size":`...)
	b = strconv.AppendInt(b, int64(f.Size()), 10)
	b = append(b, `,"capturedBytes":`...)
	b = strconv.AppendInt(b, int64(f.Captured()), 10)
	b = append(b, `,"header":`...)
	if h := headerOf(f.Tree); h != nil {
		b = j.appendConverter(b, h)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"body":`...)
	if bd := bodyOf(f.Tree); bd != nil {
		b = j.appendConverter(b, bd)
	} else {
		b = append(b, "null"...)
	}
	var m MessageDoc
	m.setError(f.Tree)
	m.UnknownTaggedFields = j.unknown
	if m.UnknownTaggedFields == nil {
		m.UnknownTaggedFields = []UnknownTagDoc{} // [], not null
	}
	return appendMessageEnd(b, &m)
}

// jsonWriters recycles the jsonWriters of appendMessageDirect, with the
// key lists and unknown tagged fields they grew.
var jsonWriters = sync.Pool{New: func() any { return new(jsonWriter) }}

// getJSONWriter returns a jsonWriter for a copy of o from the pool (o
// itself, kept by a pooled writer, would be moved to the heap with every
// line's options).
func getJSONWriter(o *Options, typedRecords bool) *jsonWriter {
	j := jsonWriters.Get().(*jsonWriter)
	j.opts = *o
	j.o, j.typedRecords = &j.opts, typedRecords
	return j
}

// putJSONWriter clears j, keeping what it grew, and gives it back to the
// pool.
func putJSONWriter(j *jsonWriter) {
	clear(j.unknown) // their strings
	*j = jsonWriter{unknown: j.unknown[:0], spans: j.spans, pos: batchPos{text: j.pos.text[:0]}}
	jsonWriters.Put(j)
}

// ExchangeJSON writes e as one line of JSON: an ExchangeDoc.
func ExchangeJSON(w io.Writer, e *dissect.Exchange, opts Options) error {
	return writeExchangeJSON(w, NewExchangeDoc(e, opts))
}

// TreeJSON writes a decoded frame (or body) as one line of JSON, a TreeDoc
// (kwire decode --json): the length, the header and the body in Kafka's
// JsonConverter form with RECORDS as base64 as JsonConverter writes them,
// the unknown tagged fields and the decoding error where they apply.
func TreeJSON(w io.Writer, t *protocol.Tree, opts Options) error {
	d := &TreeDoc{}
	if t != nil && t.Root != nil {
		j := &jsonWriter{o: &opts}
		if isFrameRoot(t.Root) {
			if l, _, _ := protocol.FrameParts(t.Root); l != nil && l.Kind == protocol.KindInt {
				v := l.Int
				d.Length = &v
			}
		}
		d.Message = messageName(t)
		if h := headerOf(t); h != nil {
			d.Header = j.converter(h)
		}
		if b := bodyOf(t); b != nil {
			d.Body = j.converter(b)
		}
		d.UnknownTaggedFields = j.unknown
	}
	if d.Body == nil {
		d.Body = json.RawMessage("null")
	}
	if t != nil && t.Err != nil {
		if l, ok := unknownLabel(t); ok {
			d.Unknown = l
		} else {
			d.Error = t.Err.Error()
		}
	}
	return writeJSONLine(w, d)
}

func writeJSONLine(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// jsonWriter turns nodes into JSON text.
type jsonWriter struct {
	o            *Options
	opts         Options // what o points to in a pooled writer (getJSONWriter)
	typedRecords bool
	unknown      []UnknownTagDoc
	pos          batchPos
	spans        [][]keySpan // key lists of finished objects, for the next
	html         bool        // strings escape '<', '>' and '&' (appendAnyJSON's html)

	genericRecords bool // every record through object (tests: the form record must match)
	fastRecords    int  // records record wrote (tests: the fast form was taken)

	odd         bool // direct met a tree it leaves to the value path (jsonconv.go)
	valuePath   bool // converter takes the value path (tests: the oracle)
	valueWrites int  // converters written by the value path (tests)
}

// keySpans returns an empty key list for an object.
func (j *jsonWriter) keySpans() []keySpan {
	if n := len(j.spans); n > 0 {
		k := j.spans[n-1]
		j.spans = j.spans[:n-1]
		return k[:0]
	}
	return make([]keySpan, 0, 16)
}

// freeKeySpans takes back the key list of a finished object.
func (j *jsonWriter) freeKeySpans(k []keySpan) { j.spans = append(j.spans, k) }

// converter returns header or body node n in Kafka's JsonConverter form
// (protocol.BodyJSON, which also withholds redacted secrets), with decoded
// RECORDS fields replaced by typed batch arrays when j.typedRecords is set,
// and collects n's unknown tagged fields. A KindRaw body (unknown API or
// version) gives {"undecodedHex": "..."}.
func (j *jsonWriter) converter(n *protocol.Node) json.RawMessage {
	return json.RawMessage(j.appendConverter(nil, n))
}

// appendConverter appends what converter returns.
func (j *jsonWriter) appendConverter(b []byte, n *protocol.Node) []byte {
	start := len(b)
	j.collectUnknown(n, n.Name, 0)
	if n.Kind == protocol.KindRaw {
		return j.value(b, n, n.Name, nil, false)
	}
	if !j.valuePath {
		if out, ok := j.direct(b, n); ok {
			return out
		}
	}
	j.valueWrites++
	// patch puts the typed form in place of the base64 of decoded
	// records: encoding them would be wasted.
	v := j.patch(protocol.BodyJSONWith(n, protocol.JSONOptions{LazyRecords: j.typedRecords, Int64Strings: j.o.Int64Strings}), n, n.Name, 0)
	out, ok := appendAnyJSON(b, v, true)
	if ok {
		return out
	}
	b = out[:start]
	raw, err := json.Marshal(v)
	if err != nil {
		// Only unmarshalable values (none that BodyJSON makes) get here;
		// fall back to kwire's own walker rather than lose the message.
		return j.value(b, n, n.Name, nil, false)
	}
	return append(b, raw...)
}

// collectUnknown records every unknown tagged field under n with its path.
func (j *jsonWriter) collectUnknown(n *protocol.Node, path string, depth int) {
	// Room for the names of a deep path: appending a level then writes
	// into this array (each level's names are done with when the walk
	// comes back) instead of allocating, for every node with children.
	names := make([]string, 1, 64)
	names[0] = path
	j.collectUnknownAt(n, names, depth)
}

// collectUnknownAt is collectUnknown with the path as the names leading to
// n, joined (joinPath) only when an unknown tagged field is found: the
// tree of a large Fetch response has a node per record field and none of
// them needs its path.
func (j *jsonWriter) collectUnknownAt(n *protocol.Node, names []string, depth int) {
	if depth > 128 {
		return
	}
	for _, c := range n.Children {
		switch {
		case c.Kind == protocol.KindUnknownTag:
			path := ""
			for _, name := range names {
				path = joinPath(path, name)
			}
			j.addUnknown(c, path)
		case c.Kind == protocol.KindTaggedFields:
			j.collectUnknownAt(c, names, depth+1)
		case len(c.Children) > 0:
			j.collectUnknownAt(c, append(names, c.Name), depth+1)
		}
	}
}

// patch walks BodyJSON's value v beside node n: it swaps the base64
// string of each decoded RECORDS field for kwire's typed form (when
// j.typedRecords) and the value of each redacted field without children
// for "<redacted>" (unless ShowSecrets), whatever the decoder did.
func (j *jsonWriter) patch(v any, n *protocol.Node, path string, depth int) any {
	if depth > 128 || !j.needsPatch(n, 0) {
		return v
	}
	if n.Kind == protocol.KindBytes && n.Flags&protocol.FlagRedacted != 0 {
		return base64.StdEncoding.EncodeToString(withheldBytes(n, j.o))
	}
	if len(n.Children) == 0 && isRedacted(n, j.o) {
		return redacted
	}
	switch n.Kind {
	case protocol.KindRecords:
		if !j.typedRecords && !holdsWithheld(n, j.o, 0) {
			return v // the base64 of their bytes, as JsonConverter writes them
		}
		return typedRecords{j: j, n: n, path: path}
	case protocol.KindArray:
		arr, ok := v.([]any)
		if !ok || len(arr) != len(n.Children) {
			return v
		}
		for i, c := range n.Children {
			arr[i] = j.patch(arr[i], c, joinPath(path, c.Name), depth+1)
		}
		return arr
	case protocol.KindStruct, protocol.KindTaggedFields:
		obj, ok := v.(protocol.Object)
		if !ok {
			return v
		}
		var raws []any
		for _, c := range n.Children {
			if c.Kind == protocol.KindTaggedFields {
				obj, _ = j.patch(obj, c, path, depth+1).(protocol.Object)
				continue
			}
			if c.Kind == protocol.KindRaw {
				// Leftovers and the rest after a failure, which BodyJSON
				// leaves out: one "_undecoded" array, as object does.
				raws = append(raws, json.RawMessage(j.value(nil, c, path, nil, false)))
				continue
			}
			key := lowerCamel(c.Name)
			for i := range obj {
				if obj[i].Key == key {
					obj[i].Value = j.patch(obj[i].Value, c, joinPath(path, c.Name), depth+1)
					break
				}
			}
		}
		if len(raws) > 0 {
			obj = append(obj, protocol.Member{Key: "_undecoded", Value: raws})
		}
		return obj
	}
	return v
}

// withheldBytes returns the bytes of a BYTES node marked
// protocol.FlagRedacted as the JSON shows them: unchanged with
// Options.ShowSecrets; otherwise each redacted child's span (a SASL PLAIN
// password, a SCRAM proof: protocol.SASLToken's parts) is replaced by the
// 10 bytes "<redacted>", and a redacted node without such children is
// those 10 bytes alone, so that the output gives no secret's length.
func withheldBytes(n *protocol.Node, o *Options) []byte {
	if o.ShowSecrets {
		return n.Raw
	}
	base := n.End() - len(n.Raw)
	var out []byte
	pos, found := 0, false
	for _, c := range n.Children {
		if c.Flags&protocol.FlagRedacted == 0 || c.Space != n.Space {
			continue
		}
		start, end := c.Off-base, c.End()-base
		if start < pos || end > len(n.Raw) || end < start {
			return []byte(redacted) // not inside the value, or overlapping: withhold it all
		}
		out = append(out, n.Raw[pos:start]...)
		out = append(out, redacted...)
		pos, found = end, true
	}
	if !found {
		return []byte(redacted)
	}
	return append(out, n.Raw[pos:]...)
}

// holdsWithheld reports whether n or a node under it is withheld
// (isRedacted): the base64 of a RECORDS field's bytes would show it.
func holdsWithheld(n *protocol.Node, o *Options, depth int) bool {
	if isRedacted(n, o) {
		return true
	}
	if depth > 4*128 {
		return true // deeper than any decoder nests: assume the worst
	}
	for _, c := range n.Children {
		if holdsWithheld(c, o, depth+1) {
			return true
		}
	}
	return false
}

// needsPatch reports whether n is or holds a RECORDS node with decoded
// batches to type, a redacted field without children, or an undecoded span
// (which BodyJSON leaves out).
func (j *jsonWriter) needsPatch(n *protocol.Node, depth int) bool {
	if n.Kind == protocol.KindRaw {
		return true
	}
	if n.Kind == protocol.KindRecords && j.typedRecords {
		return len(n.Children) > 0
	}
	if n.Kind == protocol.KindBytes && n.Flags&protocol.FlagRedacted != 0 {
		return true // BodyJSON's masking keeps the secret's length
	}
	if len(n.Children) == 0 {
		return isRedacted(n, j.o)
	}
	if depth > 128 {
		return false
	}
	for _, c := range n.Children {
		if j.needsPatch(c, depth+1) {
			return true
		}
	}
	return false
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	return appendJSONStr(b, s, &jsonSafe)
}

// appendJSONStr is appendJSONString escaping the ASCII bytes safe does
// not list (jsonSafeHTML escapes '<', '>' and '&' too, as encoding/json
// does by default).
func appendJSONStr(b []byte, s string, safe *[utf8.RuneSelf]bool) []byte {
	b = append(b, '"')
	start := 0
	html := safe == &jsonSafeHTML
	for i := 0; i < len(s); {
		if len(s)-i >= 8 && jsonPlain8(load64(s[i:]), html) {
			i += 8 // printable ASCII with nothing to escape
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if !safe[c] {
				b = append(b, s[start:i]...)
				b = appendJSONEscape(b, c)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = appendRuneEscape(b, r)
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONBytes is appendJSONStr for bytes.
func appendJSONBytes(b []byte, s []byte, safe *[utf8.RuneSelf]bool) []byte {
	b = append(b, '"')
	start := 0
	html := safe == &jsonSafeHTML
	for i := plainJSONPrefix(s, safe); i < len(s); {
		if len(s)-i >= 8 && jsonPlain8(binary.LittleEndian.Uint64(s[i:]), html) {
			i += 8 // printable ASCII with nothing to escape
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if !safe[c] {
				b = append(b, s[start:i]...)
				b = appendJSONEscape(b, c)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = appendRuneEscape(b, r)
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainJSONPrefix is the length of the run of bytes at the start of s
// that safe copies as they are (printable ASCII but '"' and '\\', and with
// jsonSafeHTML '<', '>' and '&'), tested 32 and 8 bytes at a time: a
// record value is mostly such a run.
func plainJSONPrefix(s []byte, safe *[utf8.RuneSelf]bool) int {
	i := 0
	if safe == &jsonSafeHTML {
		// As below, with '<', '>' and '&'.
		for len(s)-i >= 32 {
			p := s[i : i+32]
			if notPlainHTML(binary.LittleEndian.Uint64(p))|notPlainHTML(binary.LittleEndian.Uint64(p[8:]))|
				notPlainHTML(binary.LittleEndian.Uint64(p[16:]))|notPlainHTML(binary.LittleEndian.Uint64(p[24:])) != 0 {
				break
			}
			i += 32
		}
		for len(s)-i >= 8 && notPlainHTML(binary.LittleEndian.Uint64(s[i:])) == 0 {
			i += 8
		}
	} else {
		// notQuotedPlain inlines (jsonPlain8 does not): four words, one test.
		for len(s)-i >= 32 {
			p := s[i : i+32]
			if notQuotedPlain(binary.LittleEndian.Uint64(p))|notQuotedPlain(binary.LittleEndian.Uint64(p[8:]))|
				notQuotedPlain(binary.LittleEndian.Uint64(p[16:]))|notQuotedPlain(binary.LittleEndian.Uint64(p[24:])) != 0 {
				break
			}
			i += 32
		}
		for len(s)-i >= 8 && notQuotedPlain(binary.LittleEndian.Uint64(s[i:])) == 0 {
			i += 8
		}
	}
	for i < len(s) && s[i] < utf8.RuneSelf && safe[s[i]] {
		i++
	}
	return i
}

// notPlainHTML is zero when the 8 bytes of x are printable ASCII but '"',
// '\\', '<', '>' and '&': what jsonSafeHTML copies as it is. '"' (0x22)
// and '&' (0x26) differ in one bit, as '<' (0x3c) and '>' (0x3e) do: one
// test with that bit cleared finds either (and no other byte).
// It is notASCIIPrint and three hasByte tests written out, to inline.
func notPlainHTML(x uint64) uint64 {
	const (
		ones = 0x0101010101010101
		high = 0x8080808080808080
	)
	q := x&^(ones*4) ^ ones*'"' // zero bytes: '"' and '&'
	b := x ^ ones*'\\'          // zero bytes: '\\'
	a := x&^(ones*2) ^ ones*'<' // zero bytes: '<' and '>'
	return ((x-ones*0x20)&^x | (x + ones) | x | (q-ones)&^q | (b-ones)&^b | (a-ones)&^a) & high
}

// jsonPlain8 reports whether the 8 bytes of x are all bytes the safe
// table (jsonSafe, or jsonSafeHTML when html) copies as they are:
// printable ASCII but '"' and '\\' (and '<', '>', '&').
func jsonPlain8(x uint64, html bool) bool {
	if html {
		return notPlainHTML(x) == 0
	}
	return notQuotedPlain(x) == 0
}

// load64 is the little-endian uint64 of the first 8 bytes of s.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// jsonSafe tells the ASCII bytes appendJSONString copies as they are;
// jsonSafeHTML leaves out '<', '>' and '&' too.
var jsonSafe, jsonSafeHTML = func() (t, h [utf8.RuneSelf]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
		h[c] = t[c] && c != '<' && c != '>' && c != '&'
	}
	return t, h
}()

// safe is the table of the bytes j's strings show as they are.
func (j *jsonWriter) safe() *[utf8.RuneSelf]bool {
	if j.html {
		return &jsonSafeHTML
	}
	return &jsonSafe
}

// appendJSONEscape appends the escape of ASCII byte c.
func appendJSONEscape(b []byte, c byte) []byte {
	switch {
	case c == '"' || c == '\\':
		return append(b, '\\', c)
	case c == '\n':
		return append(b, '\\', 'n')
	case c == '\r':
		return append(b, '\\', 'r')
	case c == '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendRuneEscape appends the escape of U+2028, U+2029 or, for an
// invalid byte, U+FFFD.
func appendRuneEscape(b []byte, r rune) []byte {
	if r == utf8.RuneError {
		return append(b, `\ufffd`...)
	}
	b = append(b, `\u202`...)
	return append(b, hexDigits[r&0xf])
}

// array appends children as a JSON array; path, batch and rec are passed
// on as value takes them.
func (j *jsonWriter) array(b []byte, children []*protocol.Node, path string, batch *protocol.Node, rec bool) []byte {
	b = append(b, '[')
	for i, c := range children {
		if i > 0 {
			b = append(b, ',')
		}
		b = j.value(b, c, path, batch, rec)
	}
	return append(b, ']')
}

// appendBase64String appends v as a JSON string in standard base64.
func appendBase64String(b, v []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// value appends n's JSON form. batch is the enclosing record batch, rec
// whether n lies inside a record (bytes then follow Options.Values). path
// is passed down as given, not extended per field or element: nothing
// below reads it (unknown tagged fields get their paths from
// collectUnknown), and building a string for every record was a good part
// of kwire read --json's time.
func (j *jsonWriter) value(b []byte, n *protocol.Node, path string, batch *protocol.Node, rec bool) []byte {
	if n.Kind == protocol.KindBytes && n.Flags&protocol.FlagRedacted != 0 && n.Flags&protocol.FlagNull == 0 {
		return appendBase64String(b, withheldBytes(n, j.o))
	}
	if isRedacted(n, j.o) {
		if n.Kind == protocol.KindRaw {
			// A span not decoded, withheld: what it is, without its bytes.
			return undecodedJSON(b, n.Name, n.Note, nil, n.Len, j.safe())
		}
		return appendJSONStr(b, redacted, j.safe())
	}
	if n.Flags&protocol.FlagNull != 0 {
		return append(b, "null"...)
	}
	switch n.Kind {
	case protocol.KindStruct:
		return j.object(b, n, path, batch, rec)
	case protocol.KindArray:
		return j.array(b, n.Children, path, batch, rec)
	case protocol.KindInt, protocol.KindBool, protocol.KindFloat:
		return j.appendScalar(b, n)
	case protocol.KindString:
		return appendJSONStr(b, n.Str, j.safe())
	case protocol.KindBytes:
		if rec {
			b, _, _ = j.recordBytes(b, n.Raw, n.RawLen())
			return b
		}
		return appendBase64String(b, n.Raw)
	case protocol.KindUUID:
		return appendJSONString(b, UUIDString(n.Raw))
	case protocol.KindRecords:
		// Batches and legacy messages typed, as patch types them: always
		// with typedRecords, and otherwise when they hold what the base64
		// of their bytes would show (a withheld record value, a partial
		// batch, bytes not decoded).
		if len(n.Children) > 0 && (j.typedRecords || holdsWithheld(n, j.o, 0)) {
			return j.array(b, n.Children, path, nil, false)
		}
		return appendBase64String(b, n.Raw)
	case protocol.KindTaggedFields:
		return j.object(b, n, path, batch, rec)
	case protocol.KindUnknownTag:
		return append(b, "null"...)
	}
	// KindRaw (a partial batch, bytes not decoded) and anything unforeseen:
	// what it is and its bytes, so nothing is lost.
	return undecodedJSON(b, n.Name, n.Note, n.Raw, n.RawLen(), j.safe())
}

// appendInt64 appends a 64-bit integer: a number, or with
// Options.Int64Strings a decimal string.
// appendScalar appends the JSON of an integer, boolean or FLOAT64 node:
// an INT64 as a string with Options.Int64Strings, a float as
// encoding/json writes a float64, NaN and the infinities as the strings
// Kafka's JsonConverter writes for them.
func (j *jsonWriter) appendScalar(b []byte, n *protocol.Node) []byte {
	switch n.Kind {
	case protocol.KindInt:
		if n.Field != nil && n.Field.Kind == protocol.TypeInt64 {
			return j.appendInt64(b, n.Int)
		}
		return appendInt(b, n.Int)
	case protocol.KindBool:
		return strconv.AppendBool(b, n.Int != 0)
	}
	switch {
	case math.IsNaN(n.Float):
		return append(b, `"NaN"`...)
	case math.IsInf(n.Float, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(n.Float, -1):
		return append(b, `"-Infinity"`...)
	}
	b, _ = appendStdFloat(b, n.Float)
	return b
}

func (j *jsonWriter) appendInt64(b []byte, v int64) []byte {
	if j.o.Int64Strings {
		b = append(b, '"')
		b = strconv.AppendInt(b, v, 10)
		return append(b, '"')
	}
	return strconv.AppendInt(b, v, 10)
}

// undecodedJSON appends {"undecoded": name, "note": note, "size", "hex"}
// ("note" left out when empty) for size bytes of which raw holds the
// first (all unless the decoder omitted the rest: then "truncated": true
// follows, as for a record value cut short); raw nil is a withheld span,
// whose "hex" is "<redacted>".
func undecodedJSON(b []byte, name, note string, raw []byte, size int, safe *[utf8.RuneSelf]bool) []byte {
	b = append(b, `{"undecoded":`...)
	b = appendJSONStr(b, name, safe)
	if note != "" {
		b = append(b, `,"note":`...)
		b = appendJSONStr(b, note, safe)
	}
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(size), 10)
	if raw == nil && size > 0 {
		b = append(b, `,"hex":`...)
		b = appendJSONStr(b, redacted, safe)
		return append(b, '}')
	}
	b = append(b, `,"hex":"`...)
	b = hex.AppendEncode(b, raw)
	if len(raw) < size {
		return append(b, `","truncated":true}`...)
	}
	return append(b, `"}`...)
}

func (j *jsonWriter) addUnknown(n *protocol.Node, path string) {
	d := UnknownTagDoc{Path: path, Tag: n.Int, Size: len(n.Raw), Offset: n.Off, Space: n.Space,
		Hex: hex.EncodeToString(n.Raw)}
	if isRedacted(n, j.o) {
		d.Size, d.Hex = -1, redacted
	}
	j.unknown = append(j.unknown, d)
}

// object appends a struct's fields as a JSON object in wire order. Known
// tagged fields are inlined by name; unknown ones go to j.unknown. A record
// batch gains "compression" and "partial"; a record gains its absolute
// "offset" and "timestamp". No key appears twice: a compressed legacy
// message's MessageSet is an array of its inner messages ("messageSet"),
// the undecoded spans (KindRaw children: leftovers, a failure's rest) are
// one array ("_undecoded"), and a field the tree holds more than once (a
// tag repeated on the wire) keeps its first value under its name while the
// others go to "_repeated" as {"name", "value"} objects.
func (j *jsonWriter) object(b []byte, n *protocol.Node, path string, batch *protocol.Node, rec bool) []byte {
	if j.typedRecords && batch != nil && isRecord(n) {
		if out, ok := j.record(b, n, batch); ok {
			return out
		}
	}
	o := jsonObject{b: append(b, '{'), keys: j.keySpans()}
	defer func() { j.freeKeySpans(o.keys) }() // grown, if it did
	typed := j.typedRecords
	if typed && isBatch(n) {
		batch = n
		bi := batchSummary(n)
		o.key("compression")
		o.b = appendJSONString(o.b, bi.codec)
		if n.Field == protocol.Batch.Batch {
			attrs, _ := fieldInt(n, protocol.Batch.Attributes)
			o.key("timestampType")
			if attrs&attrLogAppendTime != 0 {
				o.b = appendJSONString(o.b, "LogAppendTime")
			} else {
				o.b = appendJSONString(o.b, "CreateTime")
			}
			o.key("transactional")
			o.b = strconv.AppendBool(o.b, attrs&attrTransactional != 0)
			o.key("control")
			o.b = strconv.AppendBool(o.b, attrs&attrControl != 0)
		}
		if note := crcNote(n); note != "" {
			o.key("crcValid")
			o.b = strconv.AppendBool(o.b, note == "ok")
		}
		if n.Field == protocol.Message.Message {
			rec = true // a legacy message: its Key and Value are record data
		}
	}
	if typed && batch != nil && isRecord(n) {
		rec = true
		if off, ts, ok := j.pos.position(batch, n); ok {
			o.key("offset")
			o.b = j.appendInt64(o.b, off)
			o.key("timestamp")
			o.b = j.appendInt64(o.b, ts)
		}
		if t := controlTypeOf(n); t != "" {
			o.key("controlType") // a control record's key: COMMIT, ABORT, ...
			o.b = appendJSONStr(o.b, t, j.safe())
		}
	}
	var raws, repeated []*protocol.Node
	for _, c := range n.Children {
		if c.Kind != protocol.KindTaggedFields {
			j.field(&o, c, &raws, &repeated, path, batch, rec)
			continue
		}
		for _, t := range c.Children {
			j.field(&o, t, &raws, &repeated, path, batch, rec)
		}
	}
	b = o.b
	if len(raws) > 0 && !o.has("_undecoded") {
		o.key("_undecoded")
		b = append(o.b, '[')
		for i, c := range raws {
			if i > 0 {
				b = append(b, ',')
			}
			b = j.value(b, c, path, batch, rec)
		}
		b = append(b, ']')
		o.b = b
	}
	if len(repeated) > 0 && !o.has("_repeated") {
		o.key("_repeated")
		b = append(o.b, '[')
		for i, c := range repeated {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendJSONStr(b, c.Name, j.safe())
			b = append(b, `,"value":`...)
			b = j.value(b, c, path, batch, rec)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// field writes child c of an object (a tagged field's buffer already
// opened): its key and value, or notes it among the undecoded spans or
// the repeated keys.
func (j *jsonWriter) field(o *jsonObject, c *protocol.Node, raws, repeated *[]*protocol.Node, path string, batch *protocol.Node, rec bool) {
	switch c.Kind {
	case protocol.KindTaggedFields:
		for _, t := range c.Children {
			j.field(o, t, raws, repeated, path, batch, rec)
		}
		return
	case protocol.KindUnknownTag:
		return // collected by collectUnknown
	case protocol.KindRaw:
		*raws = append(*raws, c)
		return
	}
	mark := o.open()
	if j.typedRecords && batch != nil {
		o.b = appendCamelKeyJSON(o.b, c.Name, j.safe()) // kwire's own record objects
	} else {
		o.b = appendLowerCamelJSON(o.b, c.Name, j.safe())
	}
	k, ok := o.commit(mark)
	if !ok {
		*repeated = append(*repeated, c)
		return
	}
	if j.typedRecords && isMessageSet(c) {
		o.b = j.messageSet(o.b, c, path)
		return
	}
	if rec && c.Kind == protocol.KindBytes && !isRedacted(c, j.o) {
		if c.Flags&protocol.FlagNull != 0 {
			o.b = append(o.b, "null"...)
			return
		}
		var cut bool
		var enc string
		o.b, cut, enc = j.recordBytes(o.b, c.Raw, c.RawLen())
		if enc != "" {
			o.suffixKey(k, "Encoding")
			o.b = append(o.b, '"')
			o.b = append(o.b, enc...)
			o.b = append(o.b, '"')
		}
		o.suffixKey(k, "Size")
		o.b = strconv.AppendInt(o.b, int64(c.RawLen()), 10)
		if cut {
			o.suffixKey(k, "Truncated")
			o.b = append(o.b, "true"...)
		}
		return
	}
	o.b = j.value(o.b, c, path, batch, rec)
}

// jsonObject is a JSON object being written: its text so far and where
// each key's escaped text lies in it, so that no key is written twice.
// Escaping is one to one, so equal escaped keys are equal keys.
type jsonObject struct {
	b    []byte
	keys []keySpan
}

type keySpan struct{ start, end int } // of the key's text between its quotes

// key writes key k and its colon.
func (o *jsonObject) key(k string) {
	mark := o.open()
	o.b = appendJSONString(o.b, k)
	o.commit(mark)
}

// open starts a key: the comma before it. The caller then appends the
// quoted key and calls commit with open's mark.
func (o *jsonObject) open() int {
	mark := len(o.b)
	if len(o.keys) > 0 {
		o.b = append(o.b, ',')
	}
	return mark
}

// commit ends the key written since mark: when the object has it already
// it is taken back and commit returns false; else its colon follows.
func (o *jsonObject) commit(mark int) (keySpan, bool) {
	start := mark + 1 // the quote
	if len(o.keys) > 0 {
		start++ // the comma
	}
	k := keySpan{start, len(o.b) - 1}
	text := o.b[k.start:k.end]
	for _, p := range o.keys {
		if string(o.b[p.start:p.end]) == string(text) {
			o.b = o.b[:mark]
			return k, false
		}
	}
	o.keys = append(o.keys, k)
	o.b = append(o.b, ':')
	return k, true
}

// has reports whether the object has key k (which JSON writes as is).
func (o *jsonObject) has(k string) bool {
	for _, p := range o.keys {
		if string(o.b[p.start:p.end]) == k {
			return true
		}
	}
	return false
}

// suffixKey writes the key made of key k (already written) and suffix
// (which JSON writes as is), and its colon.
func (o *jsonObject) suffixKey(k keySpan, suffix string) {
	start := len(o.b) + 2 // after the comma and the quote
	o.b = append(o.b, ',', '"')
	o.b = append(o.b, o.b[k.start:k.end]...)
	o.b = append(o.b, suffix...)
	o.keys = append(o.keys, keySpan{start, len(o.b)})
	o.b = append(o.b, '"', ':')
}

// plainKey reports whether name is ASCII that JSON writes as is, HTML
// escaping or not.
func plainKey(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 0x7f || !jsonSafeHTML[c] {
			return false
		}
	}
	return true
}

// appendLowerCamelJSON appends lowerCamel(name) as a JSON string.
func appendLowerCamelJSON(b []byte, name string, safe *[utf8.RuneSelf]bool) []byte {
	if name == "" || !plainKey(name) {
		return appendJSONStr(b, lowerCamel(name), safe)
	}
	b = append(b, '"')
	c := name[0]
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	b = append(b, c)
	b = append(b, name[1:]...)
	return append(b, '"')
}

// appendCamelKeyJSON appends camelKey(name) as a JSON string.
func appendCamelKeyJSON(b []byte, name string, safe *[utf8.RuneSelf]bool) []byte {
	if !plainKey(name) {
		return appendJSONStr(b, camelKey(name), safe)
	}
	i := 0
	for i < len(name) && name[i] >= 'A' && name[i] <= 'Z' {
		i++
	}
	switch {
	case i == len(name):
	case i > 1 && name[i] >= 'a' && name[i] <= 'z':
		i-- // the last capital starts the next word
	}
	b = append(b, '"')
	for _, c := range []byte(name[:i]) {
		b = append(b, c+('a'-'A'))
	}
	b = append(b, name[i:]...)
	return append(b, '"')
}

// messageSet appends a legacy wrapper's inner message set as an array of
// message objects, in the form of the RECORDS array's legacy entries (a
// KindRaw child, e.g. a partial message, is an {"undecoded", ...} element
// as in that array).
func (j *jsonWriter) messageSet(b []byte, n *protocol.Node, path string) []byte {
	b = append(b, '[')
	for i, c := range n.Children {
		if i > 0 {
			b = append(b, ',')
		}
		b = j.value(b, c, path, nil, false)
	}
	return append(b, ']')
}

// recordBytes renders a record key, value or header value per
// Options.Values as a JSON string and names its encoding: text mode gives
// the text when the bytes are valid UTF-8 and base64 otherwise; hex and
// base64 give those; none gives null and no encoding (the Size key still
// says how long). Values longer than MaxValue are cut (cut reports it).
// v holds the first bytes of the value's total (all but what the decoder
// omitted); whether it is text depends on the bytes shown only.
func (j *jsonWriter) recordBytes(b, v []byte, total int) ([]byte, bool, string) {
	max := j.o.maxValue()
	cut := total > max
	if j.o.Values == ValuesText {
		t := shownText(v, max)
		if safe := j.safe(); plainJSONPrefix(t, safe) == len(t) {
			// Plain ASCII (so valid UTF-8) with nothing to escape: one
			// pass over the value rather than a validation and an escape.
			b = append(b, '"')
			b = append(b, t...)
			return append(b, '"'), cut, "text"
		} else if utf8.Valid(t) {
			return appendJSONBytes(b, t, safe), cut, "text"
		}
	}
	if len(v) > max {
		v = v[:max]
	}
	switch j.o.Values {
	case ValuesNone:
		return append(b, "null"...), false, ""
	case ValuesHex:
		b = append(b, '"')
		b = hex.AppendEncode(b, v)
		return append(b, '"'), cut, "hex"
	}
	return appendBase64String(b, v), cut, "base64" // --values base64, or text that is not UTF-8
}
