package pcaps

// TestAgainstKmsg decodes every capture independently (wire_test.go's
// reader, franz-go's kmsg for the messages) and compares the result with
// kwire's --json output, exchange by exchange: kind, header, the packets
// and size of each frame, every field at every depth, the non-zero error
// codes and the "errors" list, and (selections_test.go) the topics,
// partitions and record batches of Produce, Fetch and Metadata.
// TestSummaryCounts checks the text summary against the same reading.

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// indepExchange is a request and its response as the independent reading
// sees them.
type indepExchange struct {
	client, server netip.AddrPort
	key, version   int16
	corr           int32
	clientID       *string

	req      kmsg.Request // nil for an unknown key
	reqErr   error        // kmsg's decoding error; errVersion beyond kmsg's range
	resp     kmsg.Response
	respErr  error
	answered bool

	reqFrame, respFrame []byte // with the size prefix
	reqPackets          [2]int // first and last packet of the request frame
	respPackets         [2]int
}

var errVersion = errors.New("version beyond kmsg's range: not decoded")

// indepCapture is a capture's exchanges as the independent reading sees
// them.
type indepCapture struct {
	exchanges  []*indepExchange
	saslTokens int // raw SASL tokens sent after SaslHandshake v0
	orphans    int // responses to no captured request
	tlsConns   int
}

// Kafka API keys and error codes the independent reading needs (protocol
// guide, "Api Keys" and "Error Codes").
const (
	keyProduce         = 0
	keyFetch           = 1
	keySaslHandshake   = 17
	keyApiVersions     = 18
	keyControlledShut  = 7
	errUnsupportedVers = 35
)

// decodeIndependently pairs and decodes the Kafka exchanges of conns.
func decodeIndependently(t *testing.T, conns []*tcpConn) *indepCapture {
	ic := &indepCapture{}
	for _, c := range conns {
		if len(c.c2s) > 0 && c.c2s[0] == 0x16 { // a TLS handshake record
			ic.tlsConns++
			continue
		}
		reqFrames, rest := splitFrames(c.c2s)
		if len(rest) > 0 {
			t.Errorf("%v → %v: %d bytes after the last whole request frame", c.client, c.server, len(rest))
		}
		pending := map[int32]*indepExchange{}
		var order []*indepExchange
		token := false
		for _, f := range reqFrames {
			if token { // the raw token after a SaslHandshake v0
				ic.saslTokens++
				token = false
				continue
			}
			ex, err := parseRequest(f.bytes[4:])
			if err != nil {
				t.Errorf("%v → %v: request header: %v", c.client, c.server, err)
				continue
			}
			ex.client, ex.server = c.client, c.server
			ex.reqFrame = f.bytes
			ex.reqPackets = [2]int{packetAt(c.c2sAt, f.off), packetAt(c.c2sAt, f.off+int64(len(f.bytes))-1)}
			if _, dup := pending[ex.corr]; dup {
				t.Errorf("%v → %v: correlation ID %d used twice", c.client, c.server, ex.corr)
			}
			pending[ex.corr] = ex
			order = append(order, ex)
			token = ex.key == keySaslHandshake && ex.version == 0
		}
		respFrames, rest := splitFrames(c.s2c)
		if len(rest) > 0 {
			t.Errorf("%v → %v: %d bytes after the last whole response frame", c.server, c.client, len(rest))
		}
		reply := false
		for _, f := range respFrames {
			if reply { // the broker's raw reply to a SASL v0 token
				reply = false
				continue
			}
			if len(f.bytes) < 8 {
				t.Errorf("%v → %v: response of %d bytes", c.server, c.client, len(f.bytes)-4)
				continue
			}
			corr := int32(binary.BigEndian.Uint32(f.bytes[4:]))
			ex := pending[corr]
			if ex == nil || ex.answered {
				ic.orphans++
				continue
			}
			ex.answered = true
			ex.respFrame = f.bytes
			ex.respPackets = [2]int{packetAt(c.s2cAt, f.off), packetAt(c.s2cAt, f.off+int64(len(f.bytes))-1)}
			parseResponse(ex, f.bytes[4:])
			reply = ex.key == keySaslHandshake && ex.version == 0
		}
		ic.exchanges = append(ic.exchanges, order...)
	}
	return ic
}

// parseRequest reads a request frame's header (v0 for ControlledShutdown
// v0, v2 for flexible versions, v1 otherwise) and decodes its body with
// kmsg when kmsg knows the key and version.
func parseRequest(f []byte) (*indepExchange, error) {
	r := &wireReader{b: f}
	ex := &indepExchange{key: r.int16(), version: r.int16(), corr: r.int32()}
	ex.req = kmsg.RequestForKey(ex.key)
	flexible := false
	if ex.req != nil {
		ex.req.SetVersion(ex.version)
		flexible = ex.req.IsFlexible()
	}
	if !(ex.key == keyControlledShut && ex.version == 0) {
		if s, ok := r.nullableString(); ok {
			ex.clientID = &s
		}
	}
	if flexible {
		r.skipTags()
	}
	if r.err != nil {
		return nil, r.err
	}
	switch {
	case ex.req == nil:
		ex.reqErr = errVersion
	case ex.version < 0 || ex.version > ex.req.MaxVersion():
		ex.reqErr = errVersion
	default:
		ex.reqErr = ex.req.ReadFrom(r.b)
	}
	return ex, nil
}

// parseResponse decodes a response frame for its request: header v1
// (tagged fields) for flexible versions except ApiVersions, whose header is
// always v0; an ApiVersions response carrying UNSUPPORTED_VERSION has a v0
// body (KIP-511).
func parseResponse(ex *indepExchange, f []byte) {
	if ex.req == nil || ex.reqErr == errVersion && ex.key != keyApiVersions {
		ex.respErr = errVersion
		return
	}
	ex.resp = ex.req.ResponseKind()
	ex.resp.SetVersion(ex.version)
	r := &wireReader{b: f[4:]}
	if ex.resp.IsFlexible() && ex.key != keyApiVersions {
		r.skipTags()
	}
	if r.err != nil {
		ex.respErr = r.err
		return
	}
	body := r.b
	if ex.key == keyApiVersions && len(body) >= 2 && int16(binary.BigEndian.Uint16(body)) == errUnsupportedVers {
		ex.resp.SetVersion(0)
	} else if ex.reqErr == errVersion {
		ex.respErr = errVersion
		return
	}
	ex.respErr = ex.resp.ReadFrom(body)
}

// kwireDoc is the part of kwire's ExchangeDoc the comparison reads.
type kwireDoc struct {
	Stream        int       `json:"stream"`
	Client        string    `json:"client"`
	Broker        string    `json:"broker"`
	Kind          string    `json:"kind"`
	API           string    `json:"api"`
	APIKey        int16     `json:"apiKey"`
	APIVersion    int16     `json:"apiVersion"`
	CorrelationID int32     `json:"correlationId"`
	ClientID      *string   `json:"clientId"`
	Request       *kwireMsg `json:"request"`
	Response      *kwireMsg `json:"response"`
	Errors        []string  `json:"errors"`
}

type kwireMsg struct {
	Frame      int64           `json:"frame"`
	LastPacket int64           `json:"lastFrame"`
	Size       int             `json:"size"`
	Header     json.RawMessage `json:"header"`
	Body       json.RawMessage `json:"body"`
	Error      string          `json:"error"`
	Unknown    *string         `json:"unknown"` // a version kwire's schemas do not define either
}

// eventKinds are the "kind" values of the events in kwire's --json
// stream; every other kind is an exchange's.
var eventKinds = []string{"open", "skipped", "gap", "resync", "tls", "close", "badFrame", "truncated", "tlsNote"}

// parseNDJSON reads the exchanges of kwire's --json output.
func parseNDJSON(t *testing.T, out []byte) []*kwireDoc {
	t.Helper()
	docs, _ := parseStream(t, out)
	return docs
}

// parseStream reads kwire's --json output: the exchanges, and how many
// events of each kind it holds.
func parseStream(t *testing.T, out []byte) ([]*kwireDoc, map[string]int) {
	t.Helper()
	var docs []*kwireDoc
	events := map[string]int{}
	for i, line := range bytes.Split(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		d := &kwireDoc{}
		if err := json.Unmarshal(line, d); err != nil {
			t.Fatalf("--json line %d: %v", i+1, err)
		}
		if slices.Contains(eventKinds, d.Kind) {
			events[d.Kind]++
			continue
		}
		docs = append(docs, d)
	}
	return docs, events
}

// bodyValue decodes a JSON body keeping numbers exact.
func bodyValue(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func TestAgainstKmsg(t *testing.T) {
	for _, c := range captures(t) {
		t.Run(strings.TrimSuffix(c, ".pcap"), func(t *testing.T) {
			if encrypted(c) {
				t.Skip("encrypted: the independent reading sees TLS records (TestTLSAgainstWireshark compares with tshark's decryption)")
			}
			ic := decodeIndependently(t, info(t, c).conns)
			// Secrets shown: kmsg sees the real SASL bytes.
			res := kwire(t, readArgs(t, c, mode{"json", []string{"--json", "--show-secrets"}})...)
			docs, events := parseStream(t, res.stdout)
			n := compareCapture(t, ic, docs)
			if events["tls"] != ic.tlsConns {
				t.Errorf("%d tls events in the --json stream, want one per TLS connection: %d", events["tls"], ic.tlsConns)
			}
			t.Logf("%d exchanges, %d with both messages compared field by field, %d raw SASL tokens, %d TLS connections",
				len(ic.exchanges), n, ic.saslTokens, ic.tlsConns)
			if len(ic.exchanges) == 0 && ic.tlsConns == 0 {
				t.Error("the independent reading found no Kafka exchange")
			}
		})
	}
}

// compareCapture compares the exchanges and returns how many had their
// request and response compared field by field.
func compareCapture(t *testing.T, ic *indepCapture, docs []*kwireDoc) (full int) {
	// Counts by kind.
	want := map[string]int{}
	for _, ex := range ic.exchanges {
		want[ex.kind()]++
	}
	if ic.saslTokens > 0 {
		want["sasl"] = ic.saslTokens
	}
	if ic.orphans > 0 {
		want["orphan"] = ic.orphans
	}
	got := map[string]int{}
	byKey := map[string][]*kwireDoc{}
	for _, d := range docs {
		got[d.Kind]++
		if d.Kind != "sasl" && d.Kind != "orphan" {
			k := d.Client + " " + d.Broker + " " + strconv.Itoa(int(d.CorrelationID))
			byKey[k] = append(byKey[k], d)
		}
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("exchanges by kind: kwire %v, independent %v", got, want)
	}
	for _, ex := range ic.exchanges {
		k := ex.client.String() + " " + ex.server.String() + " " + strconv.Itoa(int(ex.corr))
		ds := byKey[k]
		if len(ds) == 0 {
			t.Errorf("%s: kwire has no exchange %s %s v%d", k, ex.kind(), apiName(ex.key), ex.version)
			continue
		}
		d := ds[0]
		byKey[k] = ds[1:]
		if compareExchange(t, ex, d) {
			full++
		}
	}
	return full
}

func (ex *indepExchange) kind() string {
	switch {
	case ex.answered:
		return "paired"
	case ex.key == keyProduce && ex.reqErr == nil && ex.req.(*kmsg.ProduceRequest).Acks == 0:
		return "noResponse"
	}
	return "unanswered"
}

func apiName(key int16) string {
	if r := kmsg.RequestForKey(key); r != nil {
		n := reflect.TypeOf(r).Elem().Name()
		return strings.TrimSuffix(n, "Request")
	}
	return "UNKNOWN(" + strconv.Itoa(int(key)) + ")"
}

// compareExchange reports whether both messages were compared field by
// field.
func compareExchange(t *testing.T, ex *indepExchange, d *kwireDoc) bool {
	label := fmt.Sprintf("stream %d corr %d %s v%d", d.Stream, ex.corr, apiName(ex.key), ex.version)
	if d.Kind != ex.kind() || d.APIKey != ex.key || d.APIVersion != ex.version || d.CorrelationID != ex.corr {
		t.Errorf("%s: kwire says %s key %d v%d corr %d", label, d.Kind, d.APIKey, d.APIVersion, d.CorrelationID)
	}
	if !equalNullable(d.ClientID, ex.clientID) {
		t.Errorf("%s: client ID: kwire %s, independent %s", label, showNullable(d.ClientID), showNullable(ex.clientID))
	}
	if d.Request == nil {
		t.Errorf("%s: kwire shows no request", label)
		return false
	}
	comparePlace(t, label+" request", ex.reqPackets, ex.reqFrame, d.Request)
	full := compareMessage(t, label+" request", ex.reqErr, ex.req, d.Request, nil)
	if !ex.answered {
		return false
	}
	if d.Response == nil {
		t.Errorf("%s: kwire shows no response", label)
		return false
	}
	comparePlace(t, label+" response", ex.respPackets, ex.respFrame, d.Response)
	return compareMessage(t, label+" response", ex.respErr, ex.resp, d.Response, d.Errors) && full
}

// comparePlace compares the packets holding a frame's first and last
// bytes and the frame's size.
func comparePlace(t *testing.T, label string, packets [2]int, frame []byte, m *kwireMsg) {
	if m.Frame != int64(packets[0]) || m.LastPacket != int64(packets[1]) || m.Size != len(frame) {
		t.Errorf("%s: kwire: packets %d-%d, %d bytes; independent: packets %d-%d, %d bytes",
			label, m.Frame, m.LastPacket, m.Size, packets[0], packets[1], len(frame))
	}
}

func equalNullable(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func showNullable(s *string) string {
	if s == nil {
		return "null"
	}
	return strconv.Quote(*s)
}

// compareMessage compares one decoded message with kwire's JSON of it.
// errs is the exchange's "errors" list for a response, nil for a request.
// It reports whether the fields were compared.
func compareMessage(t *testing.T, label string, kerr error, msg any, m *kwireMsg, errs []string) bool {
	if kerr == errVersion {
		if m.Unknown == nil && m.Error == "" {
			t.Errorf("%s: kwire decoded a version kmsg does not know (v%d)", label, reflect.ValueOf(msg).Elem().FieldByName("Version").Int())
		}
		return false
	}
	if kerr != nil {
		t.Errorf("%s: kmsg cannot decode it (%v); kwire's error: %q", label, kerr, m.Error)
		return false
	}
	if m.Error != "" {
		t.Errorf("%s: kwire: %s; kmsg decodes it", label, m.Error)
		return false
	}
	body, err := bodyValue(m.Body)
	if err != nil || body == nil {
		t.Errorf("%s: kwire body %s: %v", label, m.Body, err)
		return false
	}
	v := reflect.ValueOf(msg).Elem()
	compareFields(t, label, "body", body, v)
	compareErrorCodes(t, label, body, v, errs)
	if sel := selections[reflect.TypeOf(msg).Elem().Name()]; sel != nil {
		want := sel.fromKmsg(msg)
		got := sel.fromJSON(body, int16(v.FieldByName("Version").Int()))
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: %s differ:\n kwire: %s\n  kmsg: %s", label, sel.what, strings.Join(got, "\n        "), strings.Join(want, "\n        "))
		}
	}
	return true
}

// kmsgName maps the JSON key of a field (Kafka's field name, first letter
// lower-cased) to kmsg's Go field name where kmsg renames it: "Type.key"
// first (Type is kmsg's struct type), then "key". Without an entry, the
// key with its first letter upper-cased is tried, then with a final "Id"
// as "ID" and a final "Ms" as "Millis". A key whose candidates all miss is
// an error: the table is complete for the captures.
var kmsgName = map[string]string{
	"throttleTimeMs":              "ThrottleMillis",
	"transactionalId":             "TransactionalID",
	"groupId":                     "Group",
	"groupInstanceId":             "InstanceID",
	"generationId":                "Generation",
	"generationIdOrMemberEpoch":   "Generation",
	"rackId":                      "Rack",
	"committed":                   "Commit",
	"leader":                      "LeaderID",
	"protocolName":                "Protocol",
	"authBytes":                   "SASLAuthBytes",
	"clusterAuthorizedOperations": "AuthorizedOperations",
	"topicAuthorizedOperations":   "AuthorizedOperations",
	"partitionIndex":              "Partition",
	"partitionIndexes":            "Partitions",
	"partitionData":               "Partitions",
	"partitionResponses":          "Partitions",
	"topicData":                   "Topics",
	"responses":                   "Topics",
	"replicaNodes":                "Replicas",
	"isrNodes":                    "ISR",
	"leaderId":                    "Leader",
	"committedOffset":             "Offset",
	"committedMetadata":           "Metadata",
	"committedLeaderEpoch":        "LeaderEpoch",
	"topicConfigErrorCode":        "ConfigErrorCode",
	"configSource":                "Source",
	"configurationKeys":           "ConfigNames",
	"index":                       "Partition",
	"logAppendTimeMs":             "LogAppendTime",

	"AddPartitionsToTxnRequest.v3AndBelowTransactionalId":         "TransactionalID",
	"AddPartitionsToTxnRequest.v3AndBelowProducerId":              "ProducerID",
	"AddPartitionsToTxnRequest.v3AndBelowProducerEpoch":           "ProducerEpoch",
	"AddPartitionsToTxnRequest.v3AndBelowTopics":                  "Topics",
	"AddPartitionsToTxnResponse.resultsByTopicV3AndBelow":         "Topics",
	"AddPartitionsToTxnResponseTopic.resultsByPartition":          "Partitions",
	"AddPartitionsToTxnResponseTopicPartition.partitionErrorCode": "ErrorCode",
	"ProduceResponse.nodeEndpoints":                               "Brokers",
	"FetchResponse.nodeEndpoints":                                 "Brokers",
	"ConsumerGroupHeartbeatRequest.rackId":                        "RackID",
	"ConsumerGroupHeartbeatRequest.topicPartitions":               "Topics",
	"ConsumerGroupHeartbeatResponseAssignment.topicPartitions":    "Topics",
	"DescribeConfigsResponse.results":                             "Resources",
	"DescribeGroupsResponseGroup.groupId":                         "Group",
	"DescribeGroupsResponseGroup.groupState":                      "State",
	"DescribeGroupsResponseGroup.protocolData":                    "Protocol",
	"FetchRequestReplicaState.replicaId":                          "ID",
	"FetchRequestReplicaState.replicaEpoch":                       "Epoch",
	"FindCoordinatorRequest.key":                                  "CoordinatorKey",
	"FetchResponseTopicPartition.records":                         "RecordBatches",
	"SyncGroupRequestGroupAssignment.assignment":                  "MemberAssignment",
	"DescribeConfigsResponseResourceConfig.synonyms":              "ConfigSynonyms",
	"FindCoordinatorRequest.keyType":                              "CoordinatorType",
	"JoinGroupResponseMember.metadata":                            "ProtocolMetadata",
	"ProduceRequest.transactionalId":                              "TransactionID",
	"SASLHandshakeResponse.mechanisms":                            "SupportedMechanisms",
	"SyncGroupRequest.assignments":                                "GroupAssignment",
	"SyncGroupResponse.assignment":                                "MemberAssignment",
}

// kmsgField finds the kmsg field for JSON key k in struct v (see
// kmsgName); ok is false when no candidate exists.
func kmsgField(v reflect.Value, k string) (f reflect.Value, name string, ok bool) {
	var cands []string
	if n, ok := kmsgName[v.Type().Name()+"."+k]; ok {
		cands = append(cands, n)
	} else if n, ok := kmsgName[k]; ok {
		cands = append(cands, n)
	}
	up := strings.ToUpper(k[:1]) + k[1:]
	cands = append(cands, up)
	if strings.HasSuffix(up, "Id") {
		cands = append(cands, strings.TrimSuffix(up, "Id")+"ID")
	}
	if strings.HasSuffix(up, "Ms") {
		cands = append(cands, strings.TrimSuffix(up, "Ms")+"Millis")
	}
	if up == "Name" {
		cands = append(cands, "Topic") // kmsg names most topic names Topic
	}
	for _, c := range cands {
		if f := v.FieldByName(c); f.IsValid() {
			return f, c, true
		}
	}
	return reflect.Value{}, cands[0], false
}

// compareFields compares kwire's JSON object with kmsg's struct v field
// by field, at every depth: scalars and lists of scalars by value, nested
// structs and arrays of structs element by element. RECORDS fields are
// left to the selections (kwire types them, kmsg keeps bytes).
func compareFields(t *testing.T, label, path string, obj map[string]any, v reflect.Value) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		jv := obj[k]
		fv, name, found := kmsgField(v, k)
		at := path + "." + k
		if a, ok := jv.([]any); ok && len(a) == 0 && !found {
			continue // an empty array: of structs, unless kmsg has the field
		}
		if !found {
			t.Errorf("%s: no kmsg field %s.%s for kwire's %s (add it to kmsgName)", label, v.Type().Name(), name, at)
			continue
		}
		if fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.Struct {
			if fv.IsNil() {
				if jv != nil {
					t.Errorf("%s: %s: kwire %s, kmsg null", label, at, clip(showJSON(jv)))
				}
				continue
			}
			fv = fv.Elem()
		}
		switch x := jv.(type) {
		case map[string]any:
			if fv.Kind() != reflect.Struct {
				t.Errorf("%s: %s: kwire has an object, kmsg a %s", label, at, fv.Type())
				continue
			}
			compareFields(t, label, at, x, fv)
			continue
		case []any:
			if fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Uint8 {
				continue // decoded RECORDS: see selections
			}
			if fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct {
				if len(x) != fv.Len() {
					t.Errorf("%s: %s: kwire %d elements, kmsg %d", label, at, len(x), fv.Len())
					continue
				}
				for i, e := range x {
					o, ok := e.(map[string]any)
					if !ok {
						t.Errorf("%s: %s[%d]: kwire %s, kmsg a %s", label, at, i, clip(showJSON(e)), fv.Type().Elem())
						continue
					}
					compareFields(t, label, fmt.Sprintf("%s[%d]", at, i), o, fv.Index(i))
				}
				continue
			}
		}
		want := kmsgJSON(fv)
		if a, ok := jv.([]any); ok && len(a) == 0 && want == nil && fv.Kind() == reflect.Slice {
			// kmsg leaves an empty non-nullable array nil (it keeps a
			// nullable one apart: empty, not nil).
			continue
		}
		if !equalJSON(jv, want) {
			t.Errorf("%s: %s: kwire %s, kmsg %s", label, at, clip(showJSON(jv)), clip(showJSON(want)))
		}
	}
}

// kmsgJSON turns a kmsg value into what kwire's JSON should say for it:
// integers as json.Number, UUIDs base64url without padding, bytes base64.
func kmsgJSON(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		return json.Number(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return json.Number(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float64, reflect.Float32:
		return json.Number(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	case reflect.Bool:
		return v.Bool()
	case reflect.String:
		return v.String()
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return kmsgJSON(v.Elem())
	case reflect.Array:
		if v.Len() == 16 && v.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, 16)
			reflect.Copy(reflect.ValueOf(b), v)
			return base64.RawURLEncoding.EncodeToString(b)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.IsNil() {
				return nil
			}
			return base64.StdEncoding.EncodeToString(v.Bytes())
		}
		if v.IsNil() {
			return nil
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = kmsgJSON(v.Index(i))
		}
		return out
	}
	return fmt.Sprintf("<%s>", v.Type())
}

func equalJSON(a, b any) bool {
	if x, ok := a.(json.Number); ok {
		if y, ok := b.(json.Number); ok {
			if fx, err := x.Float64(); err == nil && strings.ContainsAny(string(x)+string(y), ".eE") {
				fy, _ := y.Float64()
				return fx == fy
			}
			return x == y
		}
		return false
	}
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.DeepEqual(a, b)
}

func showJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// compareErrorCodes compares every non-zero error code anywhere in the
// message (fields whose name ends in "ErrorCode"), located by their array
// indexes, and, for a response, the number of distinct non-zero codes with
// kwire's "errors" list.
func compareErrorCodes(t *testing.T, label string, body map[string]any, v reflect.Value, errs []string) {
	var got, want []string
	jsonErrorCodes(body, "", &got)
	kmsgErrorCodes(v, "", &want)
	sort.Strings(got)
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: non-zero error codes: kwire %v, kmsg %v", label, got, want)
	}
	if errs == nil {
		return
	}
	distinct := map[string]bool{}
	for _, w := range want {
		distinct[w[strings.LastIndex(w, "=")+1:]] = true
	}
	if len(distinct) != len(errs) {
		t.Errorf("%s: errors list %v, but the response holds %d distinct non-zero codes %v", label, errs, len(distinct), want)
	}
}

func jsonErrorCodes(v any, path string, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "records" {
				continue // record batches hold no error codes
			}
			if strings.HasSuffix(strings.ToLower(k), "errorcode") {
				if n, ok := e.(json.Number); ok && n != "0" {
					*out = append(*out, path+"="+string(n))
				}
				continue
			}
			jsonErrorCodes(e, path, out)
		}
	case []any:
		for i, e := range x {
			jsonErrorCodes(e, path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

func kmsgErrorCodes(v reflect.Value, path string, out *[]string) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if strings.HasSuffix(f.Name, "ErrorCode") && v.Field(i).Kind() == reflect.Int16 {
				if c := v.Field(i).Int(); c != 0 {
					*out = append(*out, path+"="+strconv.FormatInt(c, 10))
				}
				continue
			}
			kmsgErrorCodes(v.Field(i), path, out)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			kmsgErrorCodes(v.Elem(), path, out)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			kmsgErrorCodes(v.Index(i), path+"["+strconv.Itoa(i)+"]", out)
		}
	}
}

var (
	summaryPackets   = regexp.MustCompile(`(?m)^packets (\d+), connections (\d+) \((\d+) Kafka`)
	summaryExchanges = regexp.MustCompile(`(?m)^(?:frames \d+, )?exchanges (\d+)(?::(.*))?$`)
)

// TestSummaryCounts checks the summary that ends the text output against
// the independent reading: packets, TCP connections, Kafka connections
// (all but TLS) and exchanges by kind.
func TestSummaryCounts(t *testing.T) {
	names := map[string]string{"paired": "paired", "noResponse": "no-response", "unanswered": "unanswered", "sasl": "SASL", "orphan": "orphan"}
	for _, c := range captures(t) {
		if encrypted(c) {
			continue // the independent reading sees TLS records
		}
		ci := info(t, c)
		ic := decodeIndependently(t, ci.conns)
		out := string(kwire(t, readArgs(t, c, modes[0])...).stdout)
		m := summaryPackets.FindStringSubmatch(out)
		want := []string{strconv.Itoa(ci.packets), strconv.Itoa(len(ci.conns)), strconv.Itoa(len(ci.conns) - ic.tlsConns)}
		if m == nil || !reflect.DeepEqual(m[1:], want) {
			t.Errorf("%s: summary %q; want packets, connections, Kafka connections %v", c, m, want)
		}
		kinds := map[string]int{}
		total := ic.saslTokens + ic.orphans
		for _, ex := range ic.exchanges {
			kinds[names[ex.kind()]]++
			total++
		}
		if ic.saslTokens > 0 {
			kinds["SASL"] = ic.saslTokens
		}
		if ic.orphans > 0 {
			kinds["orphan"] = ic.orphans
		}
		e := summaryExchanges.FindStringSubmatch(out)
		if e == nil || e[1] != strconv.Itoa(total) {
			t.Errorf("%s: summary %q; want %d exchanges", c, e, total)
			continue
		}
		got := map[string]int{}
		for _, part := range strings.Split(e[2], ",") {
			var n int
			var kind string
			if _, err := fmt.Sscanf(strings.TrimSpace(part), "%d %s", &n, &kind); err == nil {
				got[kind] = n
			}
		}
		if !reflect.DeepEqual(got, kinds) {
			t.Errorf("%s: summary %q; want kinds %v", c, e[0], kinds)
		}
	}
}
