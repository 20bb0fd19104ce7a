package protocol

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
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
		// The same key spelled with a JSON escape, or after a byte order
		// mark: a JSON reader takes them for Connect's own.
		{Key: []byte("connector-pg"), Value: []byte(`{"\u0070roperties":{"database.password":"` + pw + `"}}`)},
		{Key: []byte("connector-pg"), Value: []byte("\xef\xbb\xbf" + `{"properties":{"database.password":"` + pw + `"}}`)},
	}
	withheld := []bool{true, true, true, false, false, false, false, true, true}
	for _, codec := range []Codec{CodecNone, CodecGzip} {
		b := recBuild(t, codec, 0, 0, recs)
		for _, show := range []bool{false, true} {
			tr := (&Decoder{Records: true, ShowSecrets: show}).DecodeRecordBatches(b)
			values := nodesOfField(tr.Root, Record.Value)
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

// TestConnectConfigLegacyWithheld: in a legacy message set (magic 0 and
// 1) too, a Connect configuration record's value is withheld.
func TestConnectConfigLegacyWithheld(t *testing.T) {
	const pw = "Qz-LEGACY-PW-93c1"
	for _, magic := range []int8{0, 1} {
		b := append(legacyMessage(0, magic, 0, 0, []byte("connector-db"), []byte(`{"properties":{"database.password":"`+pw+`"}}`)),
			legacyMessage(1, magic, 0, 0, []byte("order-1"), []byte(`{"properties":{"x":"`+pw+`"}}`))...)
		tr := (&Decoder{Records: true}).DecodeRecordBatches(b)
		values := nodesOfField(tr.Root, Message.Value)
		if len(values) != 2 {
			t.Fatalf("magic %d: %d values", magic, len(values))
		}
		if values[0].Flags&FlagRedacted == 0 || bytes.Contains(values[0].Raw, []byte(pw)) {
			t.Errorf("magic %d: the connector's config is shown: %q", magic, values[0].Raw)
		}
		if values[1].Flags&FlagRedacted != 0 {
			t.Errorf("magic %d: an ordinary record is withheld", magic)
		}
	}
}

// TestConnectConfigCompressedPayloadWithheld: a compressed batch holding a
// Kafka Connect configuration record has its compressed bytes withheld
// (the Records node redacted; a codec's literals carry the record as it
// is), its records still decoded; a batch without one keeps its bytes.
func TestConnectConfigCompressedPayloadWithheld(t *testing.T) {
	cfg := []recRecord{{Key: []byte("connector-pg"), Value: []byte(`{"properties":{"database.password":"Qz-PAYLOAD"}}`)}}
	plain := []recRecord{{Key: []byte("order-1"), Value: []byte(`{"properties":{"colour":"blue"}}`)}}
	for _, codec := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		for _, c := range []struct {
			recs []recRecord
			want bool
		}{{cfg, true}, {plain, false}} {
			tr := (&Decoder{Records: true}).DecodeRecordBatches(recBuild(t, codec, 0, 0, c.recs))
			recs := tr.Root.Children[0].Child("Records")
			if recs == nil || len(recs.Children) != 1 {
				t.Fatalf("%v: Records %+v", codec, recs)
			}
			if got := recs.Flags&FlagRedacted != 0; got != c.want {
				t.Errorf("%v key %q: compressed bytes withheld %v, want %v (%q)", codec, c.recs[0].Key, got, c.want, recs.Note)
			}
			shown := (&Decoder{Records: true, ShowSecrets: true}).DecodeRecordBatches(recBuild(t, codec, 0, 0, c.recs))
			if shown.Root.Children[0].Child("Records").Flags&FlagRedacted != 0 {
				t.Errorf("%v: withheld with --show-secrets", codec)
			}
		}
	}
}

// A legacy wrapper message whose compressed message set holds a Connect
// configuration record has its value (the compressed bytes) withheld.
func TestConnectConfigLegacyWrapperWithheld(t *testing.T) {
	inner := legacyMessage(0, 1, 0, 0, []byte("connector-db"), []byte(`{"properties":{"database.password":"Qz-WRAPPED"}}`))
	for _, codec := range []Codec{CodecGzip, CodecSnappy, CodecLZ4} {
		b := legacyMessage(0, 1, int8(codec), 0, nil, recCompress(t, codec, inner))
		tr := (&Decoder{Records: true}).DecodeRecordBatches(b)
		v := tr.Root.Children[0].Child("Value")
		if v == nil || v.Flags&FlagRedacted == 0 {
			t.Errorf("%v: the wrapper's compressed value is shown: %+v", codec, v)
		}
	}
}

// TestRecordLeftoverWithheld: record bytes a failure left undecoded (a
// count too low leaves the records over) are withheld by default, as every
// span kwire failed to decode is; --show-secrets shows them.
func TestRecordLeftoverWithheld(t *testing.T) {
	const pw = "Qz-LEFTOVER-PW"
	b := recBuild(t, CodecNone, 0, 0, []recRecord{{Key: []byte("connector-db"), Value: []byte(`{"properties":{"database.password":"` + pw + `"}}`)}})
	binary.BigEndian.PutUint32(b[v2HeaderLen-4:], 0) // record count 0: the record is left over
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[v2OffAttributes:], castagnoli))
	for _, show := range []bool{false, true} {
		tr := (&Decoder{Records: true, ShowSecrets: show}).DecodeRecordBatches(b)
		n := tr.FirstError()
		if n == nil || n.Kind != KindRaw {
			t.Fatalf("show=%v: first error %+v, want the leftover", show, n)
		}
		if got := bytes.Contains(n.Raw, []byte(pw)); got != show {
			t.Errorf("show=%v: leftover shows the record's bytes: %v", show, got)
		}
	}
}

// nodesOfField returns the nodes under n decoded for field f, in order.
func nodesOfField(n *Node, f *Field) []*Node {
	var out []*Node
	if n.Field == f {
		out = append(out, n)
	}
	for _, c := range n.Children {
		out = append(out, nodesOfField(c, f)...)
	}
	return out
}

// TestCompressedBytesWithheldUnlessAllDecoded: the compressed bytes of a
// batch (or of a legacy wrapper's message set) are shown only when every
// record they hold was decoded and checked: a count too low (the Connect
// record left over), the decompression cap reached before it, a key that
// may be Connect's with its value kept only in part (KeepValue), an inner
// message set cut short, and a legacy wrapper whose codec is unknown
// each withhold them; --show-secrets shows them all.
func TestCompressedBytesWithheldUnlessAllDecoded(t *testing.T) {
	const pw = "Qz-NOT-ALL-DECODED"
	cfg := recRecord{Key: []byte("connector-db"), Value: []byte(`{"properties":{"database.password":"` + pw + `"}}`)}
	plain := recRecord{Key: []byte("order-1"), Value: bytes.Repeat([]byte("x"), 4096)}
	lowCount := func(t *testing.T, codec Codec) []byte {
		b := recBuild(t, codec, 0, 0, []recRecord{plain, cfg})
		binary.BigEndian.PutUint32(b[v2HeaderLen-4:], 1) // one record: the Connect record is left over
		binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[v2OffAttributes:], castagnoli))
		return b
	}
	for _, codec := range []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd} {
		for _, c := range []struct {
			name     string
			b        []byte
			d        Decoder
			withheld bool
		}{
			{"all decoded", recBuild(t, codec, 0, 0, []recRecord{plain}), Decoder{}, false},
			{"values kept in part, no Connect key", recBuild(t, codec, 0, 0, []recRecord{plain}), Decoder{KeepValue: 8}, false},
			{"count too low", lowCount(t, codec), Decoder{}, true},
			{"cap before the Connect record", recBuild(t, codec, 0, 0, []recRecord{plain, cfg}), Decoder{MaxDecompressed: 4000}, true},
			{"Connect key, value kept in part", recBuild(t, codec, 0, 0, []recRecord{cfg}), Decoder{KeepValue: 8}, true},
			{"values not kept", recBuild(t, codec, 0, 0, []recRecord{cfg}), Decoder{KeepValue: -1}, true},
		} {
			for _, show := range []bool{false, true} {
				d := c.d
				d.Records, d.ShowSecrets = true, show
				tr := d.DecodeRecordBatches(c.b)
				recs := tr.Root.Children[0].Child("Records")
				// Withheld as the Records node's own bytes, or as the raw
				// span covering a payload that was not decompressed.
				got := recs.Flags&FlagRedacted != 0 ||
					len(recs.Children) == 1 && recs.Children[0].Kind == KindRaw && recs.Children[0].Flags&FlagRedacted != 0
				if got != (c.withheld && !show) {
					t.Errorf("%v %s show=%v: compressed bytes withheld %v (%q)", codec, c.name, show, got, recs.Note)
				}
			}
		}
	}

	// A Connect key whose value was kept in part: the value is withheld
	// too (what was kept cannot say it is not a config).
	tr := (&Decoder{Records: true, KeepValue: 8}).DecodeRecordBatches(recBuild(t, CodecGzip, 0, 0, []recRecord{cfg}))
	if v := nodesOfField(tr.Root, Record.Value); len(v) != 1 || v[0].Flags&FlagRedacted == 0 {
		t.Errorf("a Connect key's value kept in part is shown: %+v", v)
	}

	// Legacy wrappers: an inner message set cut short, an unknown codec.
	inner := legacyMessage(0, 1, 0, 0, []byte("connector-db"), []byte(`{"properties":{"database.password":"`+pw+`"}}`))
	for _, c := range []struct {
		name  string
		codec int8
		set   []byte
	}{
		{"inner set cut short", int8(CodecSnappy), recCompress(t, CodecSnappy, inner[:len(inner)-4])},
		{"unknown codec", 5, inner},
	} {
		for _, show := range []bool{false, true} {
			tr := (&Decoder{Records: true, ShowSecrets: show}).DecodeRecordBatches(legacyMessage(0, 1, c.codec, 0, nil, c.set))
			v := tr.Root.Children[0].Child("Value")
			if v == nil {
				t.Fatalf("%s: no wrapper value", c.name)
			}
			if got := v.Flags&FlagRedacted != 0; got != !show {
				t.Errorf("%s show=%v: the wrapper's value withheld %v (%q)", c.name, show, got, v.Note)
			}
			if !show && bytes.Contains(v.Raw, []byte(pw)) {
				t.Errorf("%s: withheld but its bytes are kept", c.name)
			}
		}
	}
}

// TestRecordsNotDecodedWithheld: with Records off (decode --records=false)
// a RECORDS field's bytes, which may hold a Connect configuration record,
// are withheld; --show-secrets shows them.
func TestRecordsNotDecodedWithheld(t *testing.T) {
	const pw = "Qz-RAW-RECORDS"
	batch := recBuild(t, CodecNone, 0, 0, []recRecord{{Key: []byte("connector-db"), Value: []byte(`{"properties":{"database.password":"` + pw + `"}}`)}})
	body := produceBody(t, batch)
	for _, show := range []bool{false, true} {
		tr := (&Decoder{ShowSecrets: show}).DecodeBody(0, 3, false, body)
		if tr.Err != nil {
			t.Fatal(tr.Err)
		}
		if got := findValue(tr.Root, pw) != nil; got != show {
			t.Errorf("show=%v: the records' bytes shown %v", show, got)
		}
	}
}

// produceBody returns a Produce v3 request body sending records to
// partition 0 of topic "configs".
func produceBody(t *testing.T, records []byte) []byte {
	t.Helper()
	b := []byte{0xff, 0xff, 0xff, 0xff} // transactional_id null (int16 -1), acks -1
	b = binary.BigEndian.AppendUint32(b, 1000)
	b = binary.BigEndian.AppendUint32(b, 1) // one topic
	b = binary.BigEndian.AppendUint16(b, uint16(len("configs")))
	b = append(b, "configs"...)
	b = binary.BigEndian.AppendUint32(b, 1) // one partition
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(len(records)))
	return append(b, records...)
}

// TestMetadataLogShapeStandalone: record batches decoded on their own (no
// topic to say so) whose records have the KRaft metadata log's shape
// (null keys, values framed with a frame version, an API key and a
// version) are withheld as that log's are; other batches are not, and
// --show-secrets shows them.
func TestMetadataLogShapeStandalone(t *testing.T) {
	const pw = "Qz-KRAFT-JAAS"
	config := append([]byte{1, 4, 0}, `sasl.jaas.config password="`+pw+`"`...) // ConfigRecord v0, framed
	for _, c := range []struct {
		name     string
		recs     []recRecord
		withheld bool
	}{
		{"metadata records", []recRecord{{Value: config}, {Value: []byte{1, 11, 0, 5, 'a'}}}, true},
		{"2.8 preview framing", []recRecord{{Value: append([]byte{0}, config[1:]...)}}, true},
		{"a keyed record", []recRecord{{Key: []byte("k"), Value: config}}, false},
		{"text values", []recRecord{{Value: []byte(`password="` + pw + `"`)}}, false},
	} {
		b := recBuild(t, CodecNone, 0, 0, c.recs)
		for _, show := range []bool{false, true} {
			tr := (&Decoder{Records: true, ShowSecrets: show}).DecodeRecordBatches(b)
			if got := findValue(tr.Root, pw) == nil; got != (c.withheld && !show) {
				t.Errorf("%s show=%v: withheld %v", c.name, show, got)
			}
		}
	}
}
