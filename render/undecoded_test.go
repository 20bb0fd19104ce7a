package render

import (
	"bytes"
	"encoding/json"
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
// decoded at all.
func TestJSONKeepsUndecodedBytes(t *testing.T) {
	// FetchRequest v1 cut inside MaxWaitMs:
	//	0000001b                 Length 27
	//	0001 0001 00000007       Fetch v1, correlation ID 7
	//	0007 686f7374696c65      ClientId "hostile"
	//	ffffffff                 ReplicaId -1
	//	218265                   MaxWaitMs: 3 of 4 bytes
	frame := mustHex(t, "0000001a"+"00010001"+"00000007"+"0007686f7374696c65"+"ffffffff"+"218265")
	tr := protocol.DecodeRequest(frame)
	if tr.Err == nil {
		t.Fatal("cut body decoded without error")
	}
	e := &dissect.Exchange{Kind: dissect.KindUnanswered, APIKey: 1, APIVersion: 1, CorrelationID: 7,
		Request: &dissect.Frame{Tree: tr, Bytes: frame}}
	doc := NewExchangeDoc(e, Options{})
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
	out := render(t, func(w *bytes.Buffer) error { return TreeJSON(w, protocol.DecodeRequest(frame), Options{}) })
	if err := json.Unmarshal([]byte(out), &td); err != nil {
		t.Fatal(err)
	}
	if u := undecodedOf(t, td.Body); len(u) != 1 || u[0]["hex"] != "dead" || u[0]["undecoded"] != "leftover" {
		t.Fatalf("TreeJSON body %s", td.Body)
	}
}
