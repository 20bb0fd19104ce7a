package pcaps

// TestLegacyMessagesAgainstWire compares the legacy message sets (magic 0
// and 1, Kafka protocol guide "Message sets", KIP-31/KIP-32) of
// sarama-legacy-message-sets.pcap, read here from the wire bytes, with
// kwire's JSON: every message, and the inner messages of every compressed
// wrapper, in order. kwire's JSON is read with a decoder that keeps
// repeated keys apart (see TestJSONNoDuplicateKeys).

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kv is one member of a JSON object read in order.
type kv struct {
	key string
	val any
}

// decodeOrdered reads one JSON value: objects become []kv in document
// order (repeated keys kept); numbers are json.Number when dec uses
// UseNumber.
func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		var obj []kv
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			ks, _ := k.(string)
			obj = append(obj, kv{ks, v})
		}
		_, err := dec.Token()
		return obj, err
	case json.Delim('['):
		var arr []any
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}

// get returns the first member named k, and all of them.
func get(obj any, k string) (first any, all []any) {
	o, _ := obj.([]kv)
	for _, m := range o {
		if m.key == k {
			all = append(all, m.val)
		}
	}
	if len(all) > 0 {
		first = all[0]
	}
	return first, all
}

func getArr(obj any, k string) []any {
	v, _ := get(obj, k)
	a, _ := v.([]any)
	return a
}

func oStr(obj any, k string) string {
	v, all := get(obj, k)
	switch x := v.(type) {
	case json.Number:
		return string(x)
	case string:
		return x
	case nil:
		if len(all) > 0 {
			return "null"
		}
	}
	return fmt.Sprintf("missing(%s)", k)
}

// legacyFromJSON summarises the legacy messages of kwire's RECORDS value
// (--values hex, --max-value 0).
func legacyFromJSON(records any, indent string) []string {
	var out []string
	arr, _ := records.([]any)
	for _, m := range arr {
		out = append(out, legacyLineJSON(m, indent)...)
	}
	return out
}

func legacyLineJSON(m any, indent string) []string {
	if oStr(m, "magic") == "2" {
		return nil
	}
	line := fmt.Sprintf("%smessage offset %s magic %s attributes %s", indent, oStr(m, "offset"), oStr(m, "magic"), oStr(m, "attributes"))
	if oStr(m, "magic") == "1" {
		line += " timestamp " + oStr(m, "timestamp")
	}
	line += fmt.Sprintf(" crc %s key %s value %s", oStr(m, "crc"), oStr(m, "key"), oStr(m, "value"))
	out := []string{line}
	set, _ := get(m, "messageSet")
	inner, _ := set.([]any) // a compressed wrapper's inner messages
	for _, im := range inner {
		out = append(out, legacyLineJSON(im, indent+"  ")...)
	}
	return out
}

// legacyFromBytes summarises a message set read from its bytes: INT64
// offset, INT32 size, then CRC (uint32), magic, attributes, a timestamp
// for magic 1, INT32-prefixed key and value (-1: null). A compressed
// wrapper's value is the compressed inner message set.
func legacyFromBytes(b []byte, indent string) []string {
	var out []string
	for len(b) >= 12 {
		size := int64(int32(binary.BigEndian.Uint32(b[8:12])))
		if size < 0 || 12+size > int64(len(b)) {
			break // a partial message at the end
		}
		msg := b[:12+size]
		b = b[12+size:]
		r := &wireReader{b: msg}
		offset := int64(binary.BigEndian.Uint64(r.take(8)))
		r.take(4)
		crc := uint32(r.int32())
		magic := int8(r.take(1)[0])
		if magic == 2 {
			continue
		}
		attrs := int8(r.take(1)[0])
		line := fmt.Sprintf("%smessage offset %d magic %d attributes %d", indent, offset, magic, attrs)
		if magic == 1 {
			line += fmt.Sprintf(" timestamp %d", int64(binary.BigEndian.Uint64(r.take(8))))
		}
		key := r.bytes32()
		value := r.bytes32()
		if r.err != nil {
			return append(out, indent+"bad message: "+r.err.Error())
		}
		out = append(out, line+fmt.Sprintf(" crc %d key %s value %s", crc, hexOrNull(key), hexOrNull(value)))
		if codec := int16(attrs & 7); codec != 0 {
			inner, err := inflate(codec, value)
			if err != nil {
				out = append(out, indent+"  decompressing: "+err.Error())
				continue
			}
			out = append(out, legacyFromBytes(inner, indent+"  ")...)
		}
	}
	return out
}

// bytes32 reads INT32-prefixed bytes; nil for -1.
func (r *wireReader) bytes32() []byte {
	n := r.int32()
	if n < 0 || r.err != nil {
		return nil
	}
	v := r.take(int(n))
	if v == nil {
		return []byte{}
	}
	return v
}

func TestLegacyMessagesAgainstWire(t *testing.T) {
	const c = "sarama-legacy-message-sets.pcap"
	ic := decodeIndependently(t, info(t, c).conns)
	args := readArgs(t, c, mode{"json", []string{"--json", "--values", "hex", "--max-value", "0"}})
	docs := map[string][]byte{}
	for _, line := range bytes.Split(kwire(t, args...).stdout, []byte("\n")) {
		var d kwireDoc
		if len(line) == 0 || json.Unmarshal(line, &d) != nil {
			continue
		}
		docs[fmt.Sprintf("%s %s %d", d.Client, d.Broker, d.CorrelationID)] = line
	}
	messages := 0
	for _, ex := range ic.exchanges {
		line := docs[fmt.Sprintf("%s %s %d", ex.client, ex.server, ex.corr)]
		if line == nil {
			continue // TestAgainstKmsg reports it
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.UseNumber()
		doc, err := decodeOrdered(dec)
		if err != nil {
			t.Fatal(err)
		}
		var raw [][]byte
		var fields []any
		switch {
		case ex.key == keyProduce && ex.reqErr == nil:
			for _, tp := range ex.req.(*kmsg.ProduceRequest).Topics {
				for _, p := range tp.Partitions {
					raw = append(raw, p.Records)
				}
			}
			req, _ := get(doc, "request")
			body, _ := get(req, "body")
			for _, tp := range getArr(body, "topicData") {
				for _, p := range getArr(tp, "partitionData") {
					v, _ := get(p, "records")
					fields = append(fields, v)
				}
			}
		case ex.key == keyFetch && ex.answered && ex.respErr == nil:
			for _, tp := range ex.resp.(*kmsg.FetchResponse).Topics {
				for _, p := range tp.Partitions {
					raw = append(raw, p.RecordBatches)
				}
			}
			resp, _ := get(doc, "response")
			body, _ := get(resp, "body")
			for _, tp := range getArr(body, "responses") {
				for _, p := range getArr(tp, "partitions") {
					v, _ := get(p, "records")
					fields = append(fields, v)
				}
			}
		default:
			continue
		}
		if len(raw) != len(fields) {
			t.Errorf("corr %d: kwire has %d RECORDS fields, the wire %d", ex.corr, len(fields), len(raw))
			continue
		}
		for i := range raw {
			want := legacyFromBytes(raw[i], "")
			got := legacyFromJSON(fields[i], "")
			messages += len(want)
			if !reflect.DeepEqual(want, got) {
				t.Errorf("%v corr %d %s v%d, partition #%d: messages differ:\n kwire: %s\n  wire: %s", ex.client, ex.corr,
					apiName(ex.key), ex.version, i, strings.Join(got, "\n        "), strings.Join(want, "\n        "))
			}
		}
	}
	if messages == 0 {
		t.Fatal("no legacy message found in the capture")
	}
	t.Logf("%d legacy messages compared (wrappers and inner messages)", messages)
}
