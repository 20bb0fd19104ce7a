package protocol

import (
	"bytes"
	"testing"
)

// TestConnectConfigRecordsWithheld: Kafka Connect's configuration records
// (a connector's or task's config, the session key) have their values
// withheld by their shape, whatever the topic, compressed or not; its
// other records, and records that only look alike, keep theirs; with
// --show-secrets every value shows.
func TestConnectConfigRecordsWithheld(t *testing.T) {
	const pw = "Qz-CONNECT-PW-61d2"
	recs := []recRecord{
		{Key: []byte("connector-pg"), Value: []byte(`{"properties":{"connector.class":"io.debezium.connector.postgresql.PostgresConnector","database.password":"` + pw + `"}}`)},
		{Key: []byte("task-pg-0"), Value: []byte(` {"properties":{"database.password":"` + pw + `"}}`)},
		{Key: []byte("session-key"), Value: []byte(`{"key":"` + pw + `","algorithm":"HmacSHA256","creation-timestamp":1}`)},
		{Key: []byte("commit-pg"), Value: []byte(`{"tasks":1}`)},
		{Key: []byte("target-state-pg"), Value: []byte(`{"state":"STARTED"}`)},
		{Key: []byte("connector-pg"), Value: []byte(`not json properties`)},
		{Key: []byte("order-17"), Value: []byte(`{"properties":{"colour":"blue"}}`)},
	}
	withheld := []bool{true, true, true, false, false, false, false}
	for _, codec := range []Codec{CodecNone, CodecGzip} {
		b := recBuild(t, codec, 0, 0, recs)
		for _, show := range []bool{false, true} {
			tr := (&Decoder{Records: true, ShowSecrets: show}).DecodeRecordBatches(b)
			var values []*Node
			var walk func(n *Node)
			walk = func(n *Node) {
				if n.Field == Record.Value {
					values = append(values, n)
				}
				for _, c := range n.Children {
					walk(c)
				}
			}
			walk(tr.Root)
			if len(values) != len(recs) {
				t.Fatalf("%v: %d values, want %d", codec, len(values), len(recs))
			}
			for i, v := range values {
				red := v.Flags&FlagRedacted != 0
				if want := withheld[i] && !show; red != want {
					t.Errorf("%v show=%v record %q: withheld %v, want %v (%q)", codec, show, recs[i].Key, red, want, v.Note)
				}
				if red && bytes.Contains(v.Raw, []byte(pw)) {
					t.Errorf("%v record %q: withheld but its bytes are kept", codec, recs[i].Key)
				}
				if !red && !bytes.Equal(v.Raw, recs[i].Value) {
					t.Errorf("%v show=%v record %q: value %q, want %q", codec, show, recs[i].Key, v.Raw, recs[i].Value)
				}
			}
		}
	}
}
