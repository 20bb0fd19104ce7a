package render

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
)

// undecodedOf returns the "_undecoded" array of a JSON body object.
func undecodedOf(t *testing.T, body json.RawMessage) []map[string]any {
	t.Helper()
	var obj struct {
		Undecoded []map[string]any `json:"_undecoded"`
	}
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	return obj.Undecoded
}

// Bytes the decoder could not read are in the JSON too: the rest of a body
// after a failure, a leftover after the message, and a frame that was not
// decoded at all; withheld by default (what, where and how many bytes,
// "hex": "<redacted>"), their bytes with --show-secrets.
func TestJSONKeepsUndecodedBytes(t *testing.T) {
	show := &protocol.Decoder{ShowSecrets: true}
	// FetchRequest v1 cut inside MaxWaitMs:
	//	0000001b                 Length 27
	//	0001 0001 00000007       Fetch v1, correlation ID 7
	//	0007 686f7374696c65      ClientId "hostile"
	//	ffffffff                 ReplicaId -1
	//	218265                   MaxWaitMs: 3 of 4 bytes
	frame := mustHex(t, "0000001a"+"00010001"+"00000007"+"0007686f7374696c65"+"ffffffff"+"218265")
	e := &dissect.Exchange{Kind: dissect.KindUnanswered, APIKey: 1, APIVersion: 1, CorrelationID: 7,
		Request: &dissect.Frame{Tree: protocol.DecodeRequest(frame), Bytes: frame}}
	if u := undecodedOf(t, NewExchangeDoc(e, Options{}).Request.Body); len(u) != 1 || u[0]["hex"] != "<redacted>" || u[0]["size"] != 3.0 ||
		u[0]["undecoded"] != "undecoded" {
		t.Fatalf("request body by default: %v", u)
	}
	tr := show.DecodeRequest(frame)
	if tr.Err == nil {
		t.Fatal("cut body decoded without error")
	}
	e.Request = &dissect.Frame{Tree: tr, Bytes: frame}
	doc := NewExchangeDoc(e, Options{ShowSecrets: true})
	u := undecodedOf(t, doc.Request.Body)
	if len(u) != 1 || u[0]["hex"] != "218265" || u[0]["size"] != 3.0 || u[0]["undecoded"] != "undecoded" {
		t.Fatalf("request body %s", doc.Request.Body)
	}
	if doc.Request.Error == "" {
		t.Error("no error with the undecoded bytes")
	}

	// A frame cut by the end of the capture is not decoded: its bytes.
	cut := frame[:9]
	e.Request = &dissect.Frame{Bytes: cut}
	doc = NewExchangeDoc(e, Options{})
	var body map[string]any
	if err := json.Unmarshal(doc.Request.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body["undecoded"] != "frame" || body["hex"] != "0000001a0001000100" || body["size"] != 9.0 {
		t.Fatalf("undecoded frame body %s", doc.Request.Body)
	}
	// The document stays valid NDJSON.
	var buf bytes.Buffer
	if err := ExchangeJSON(&buf, e, Options{}); err != nil || !json.Valid(buf.Bytes()) {
		t.Fatalf("ExchangeJSON: %v %s", err, buf.Bytes())
	}

	// kwire decode --json: a leftover after the message.
	frame = mustHex(t, apiVersionsHex+"dead")
	frame[3] += 2
	var td TreeDoc
	out := render(t, func(w *bytes.Buffer) error { return TreeJSON(w, show.DecodeRequest(frame), Options{ShowSecrets: true}) })
	if err := json.Unmarshal([]byte(out), &td); err != nil {
		t.Fatal(err)
	}
	if u := undecodedOf(t, td.Body); len(u) != 1 || u[0]["hex"] != "dead" || u[0]["undecoded"] != "leftover" {
		t.Fatalf("TreeJSON body %s", td.Body)
	}
}

// A record batch that cannot be decoded (here gzip data that is not gzip)
// leaves Tree.Err nil, the decoder annotating the batch instead: the line
// still says so, rather than showing the batch as if it were fine.
func TestLineRecordError(t *testing.T) {
	// Record batch, magic 2, attributes 1 (gzip), 1 record, whose 8
	// "compressed" bytes are not gzip.
	var batch []byte
	body := mustHex(t, "0001"+"00000000"+"0000000000000000"+"0000000000000000"+
		"ffffffffffffffff"+"ffff"+"ffffffff"+"00000001"+"0102030405060708")
	batch = binary.BigEndian.AppendUint64(batch, 0)                   // BaseOffset
	batch = binary.BigEndian.AppendUint32(batch, uint32(9+len(body))) // BatchLength
	batch = binary.BigEndian.AppendUint32(batch, 0)                   // PartitionLeaderEpoch
	batch = append(batch, 2)                                          // Magic
	batch = binary.BigEndian.AppendUint32(batch, crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	batch = append(batch, body...)
	// ProduceRequest v3: TransactionalId null, Acks 1, TimeoutMs 1000,
	// one topic "t", partition 0, the batch.
	var b []byte
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 9, 0, 1, 'k') // length (set below), Produce v3, corr 9, client "k"
	b = append(b, mustHex(t, "ffff"+"0001"+"000003e8"+"00000001"+"000174"+"00000001"+"00000000")...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(batch)))
	b = append(b, batch...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))

	tr := (&protocol.Decoder{Records: true}).DecodeRequest(b)
	if tr.Err != nil {
		t.Fatalf("Tree.Err %v: the test wants a record-level error only", tr.Err)
	}
	e := &dissect.Exchange{Kind: dissect.KindUnanswered, APIKey: 0, APIVersion: 3, CorrelationID: 9,
		Request: &dissect.Frame{Tree: tr, Bytes: b}}
	line := render(t, func(w *bytes.Buffer) error { return Line(w, e, Options{}) })
	if !strings.Contains(line, "[record error: Records: corrupt compressed data: gzip") {
		t.Errorf("line does not name the record error: %s", line)
	}
	// The summary's count of it is the dissector's (dissect.Problems),
	// tested there.
}

// Packets kwire could not read as TCP are counted in the summary, so that
// a capture of an unsupported link type or of IP fragments does not look
// like a capture without Kafka.
func TestSummaryUnreadPackets(t *testing.T) {
	s := SummaryCounts{Packets: 12, UnsupportedLink: 9, Fragments: 2, BadPackets: 1}
	got := render(t, func(b *bytes.Buffer) error { return Summary(b, &s, Options{}) })
	checkLines(t, got, []string{
		"packets 12, connections 0 (0 Kafka)",
		"exchanges 0",
		"anomalies: 9 packets of an unsupported link type (not read), 2 IP fragments (not reassembled), 1 malformed packet",
	})
	s = SummaryCounts{Packets: 1, UnsupportedLink: 1}
	got = render(t, func(b *bytes.Buffer) error { return Summary(b, &s, Options{}) })
	if !strings.Contains(got, "anomalies: 1 packet of an unsupported link type (not read)\n") {
		t.Errorf("one packet: %s", got)
	}
}

// EventHex shows the bytes a resync skipped under its line.
func TestEventHex(t *testing.T) {
	ev := &dissect.Event{Kind: dissect.EventResync, Time: testT0, Bytes: 20,
		Data: []byte("GET / HTTP/1.1\r\nHo"), Detail: "skipped"}
	got := render(t, func(b *bytes.Buffer) error { return EventHex(b, ev, Options{}) })
	checkLines(t, got, []string{
		"12:01:02.345 RESYNC 20 bytes (skipped)",
		"    0000  47 45 54 20 2f 20 48 54  54 50 2f 31 2e 31 0d 0a  |GET / HTTP/1.1..|",
		"    0010  48 6f                                             |Ho|",
		"    … 2 more bytes skipped, not kept",
	})
	// Without bytes, the line alone.
	ev.Data, ev.Bytes = nil, 0
	if got := render(t, func(b *bytes.Buffer) error { return EventHex(b, ev, Options{}) }); got != "12:01:02.345 RESYNC (skipped)\n" {
		t.Errorf("no data: %q", got)
	}
}
