package pcaps

// TestRecordsAgainstKmsg compares every record of every v2 record batch
// in Produce requests and Fetch responses with kwire's JSON, record by
// record: offset and timestamp deltas, key, value and headers byte for
// byte. The batches are decompressed here (Kafka protocol guide, "Record
// Batch"; KIP-110 for zstd; snappy in raw or xerial framing, LZ4 in the
// frame format) and the records read with kmsg.Record.

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maxInflate bounds a decompressed batch in this test (the captures'
// largest is 1.5 MB).
const maxInflate = 64 << 20

// inflate decompresses a batch's records by codec (the low three bits of
// the attributes).
func inflate(codec int16, b []byte) ([]byte, error) {
	var r io.Reader
	switch codec {
	case 0:
		return b, nil
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		r = zr
	case 2:
		return unsnappy(b)
	case 3:
		r = lz4.NewReader(bytes.NewReader(b))
	case 4:
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("codec %d", codec)
	}
	out, err := io.ReadAll(io.LimitReader(r, maxInflate+1))
	if len(out) > maxInflate {
		return nil, errors.New("decompresses beyond the test's bound")
	}
	return out, err
}

// xerialMagic starts snappy-java's framing: the magic, then INT32 version
// and compatible version, then blocks of INT32 size and raw snappy data.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

func unsnappy(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, xerialMagic) {
		return snappy.Decode(nil, b)
	}
	if len(b) < 16 {
		return nil, errors.New("short xerial header")
	}
	b = b[16:]
	var out []byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, errors.New("short xerial block size")
		}
		n := binary.BigEndian.Uint32(b)
		if uint64(n) > uint64(len(b)-4) {
			return nil, errors.New("xerial block beyond the data")
		}
		blk, err := snappy.Decode(nil, b[4:4+n])
		if err != nil {
			return nil, err
		}
		out = append(out, blk...)
		if len(out) > maxInflate {
			return nil, errors.New("decompresses beyond the test's bound")
		}
		b = b[4+n:]
	}
	return out, nil
}

// recordsFromBytes summarises the records of every v2 batch in a RECORDS
// field's bytes, one line per record (legacy messages are skipped).
func recordsFromBytes(b []byte) []string {
	var out []string
	for len(b) >= 17 {
		size := int64(int32(binary.BigEndian.Uint32(b[8:12])))
		if size < 5 || 12+size > int64(len(b)) {
			break // a partial batch at the end
		}
		entry := b[:12+size]
		b = b[12+size:]
		if entry[16] != 2 {
			continue
		}
		var rb kmsg.RecordBatch
		if err := rb.ReadFrom(entry); err != nil {
			return append(out, "kmsg: "+err.Error())
		}
		raw, err := inflate(rb.Attributes&7, rb.Records)
		if err != nil {
			return append(out, fmt.Sprintf("batch at %d: decompressing: %v", rb.FirstOffset, err))
		}
		for i := int32(0); i < rb.NumRecords; i++ {
			n, w := binary.Varint(raw)
			if w <= 0 || n < 0 || n > int64(len(raw)-w) {
				return append(out, fmt.Sprintf("batch at %d: record %d: bad length", rb.FirstOffset, i))
			}
			var rec kmsg.Record
			if err := rec.ReadFrom(raw[:w+int(n)]); err != nil {
				return append(out, fmt.Sprintf("batch at %d: record %d: %v", rb.FirstOffset, i, err))
			}
			raw = raw[w+int(n):]
			var hs []string
			for _, h := range rec.Headers {
				hs = append(hs, hex.EncodeToString([]byte(h.Key))+"="+hexOrNull(h.Value))
			}
			out = append(out, fmt.Sprintf("batch %d record +%d ts+%d key %s value %s headers [%s]",
				rb.FirstOffset, rec.OffsetDelta, rec.TimestampDelta64, hexOrNull(rec.Key), hexOrNull(rec.Value), strings.Join(hs, " ")))
		}
		if len(raw) > 0 {
			out = append(out, fmt.Sprintf("batch at %d: %d bytes after the last record", rb.FirstOffset, len(raw)))
		}
	}
	return out
}

func hexOrNull(b []byte) string {
	if b == nil {
		return "null"
	}
	return hex.EncodeToString(b)
}

// recordsFromJSON summarises kwire's records (--values hex, --max-value 0)
// the same way.
func recordsFromJSON(v any) []string {
	var out []string
	bs, _ := v.([]any)
	for _, e := range bs {
		b, _ := e.(map[string]any)
		if jNum(b, "magic") != "2" {
			continue
		}
		for _, r := range jArr(b, "records") {
			var hs []string
			for _, h := range jArr(r, "headers") {
				hs = append(hs, jHex(h, "key")+"="+jHex(h, "value"))
			}
			out = append(out, fmt.Sprintf("batch %s record +%s ts+%s key %s value %s headers [%s]",
				jNum(b, "baseOffset"), jNum(r, "offsetDelta"), jNum(r, "timestampDelta"), jHex(r, "key"), jHex(r, "value"), strings.Join(hs, " ")))
		}
	}
	return out
}

func jHex(m map[string]any, k string) string {
	switch v := m[k].(type) {
	case string:
		return v
	case nil:
		if _, ok := m[k]; ok {
			return "null"
		}
	}
	return fmt.Sprintf("missing(%s)", k)
}

func TestRecordsAgainstKmsg(t *testing.T) {
	for _, c := range captures(t) {
		t.Run(strings.TrimSuffix(c, ".pcap"), func(t *testing.T) {
			ic := decodeIndependently(t, info(t, c).conns)
			args := readArgs(t, c, mode{"json", []string{"--json", "--values", "hex", "--max-value", "0"}})
			docs := map[string]*kwireDoc{}
			for _, d := range parseNDJSON(t, kwire(t, args...).stdout) {
				docs[fmt.Sprintf("%s %s %d", d.Client, d.Broker, d.CorrelationID)] = d
			}
			records := 0
			for _, ex := range ic.exchanges {
				d := docs[fmt.Sprintf("%s %s %d", ex.client, ex.server, ex.corr)]
				if d == nil {
					continue // TestAgainstKmsg reports it
				}
				var raw [][]byte
				var body json.RawMessage
				switch {
				case ex.key == keyProduce && ex.reqErr == nil && d.Request != nil:
					for _, tp := range ex.req.(*kmsg.ProduceRequest).Topics {
						for _, p := range tp.Partitions {
							raw = append(raw, p.Records)
						}
					}
					body = d.Request.Body
				case ex.key == keyFetch && ex.answered && ex.respErr == nil && d.Response != nil:
					for _, tp := range ex.resp.(*kmsg.FetchResponse).Topics {
						for _, p := range tp.Partitions {
							raw = append(raw, p.RecordBatches)
						}
					}
					body = d.Response.Body
				default:
					continue
				}
				m, err := bodyValue(body)
				if err != nil || m == nil {
					t.Errorf("corr %d: kwire body: %v", ex.corr, err)
					continue
				}
				var fields []any
				recordsFields(m, &fields)
				if len(fields) != len(raw) {
					t.Errorf("%s corr %d: kwire has %d RECORDS fields, kmsg %d", d.Client, ex.corr, len(fields), len(raw))
					continue
				}
				for i := range raw {
					want := recordsFromBytes(raw[i])
					got := recordsFromJSON(fields[i])
					records += len(want)
					if !reflect.DeepEqual(want, got) {
						t.Errorf("%s corr %d %s v%d, partition #%d: records differ:\n kwire: %s\n  kmsg: %s", d.Client, ex.corr,
							apiName(ex.key), ex.version, i, clip(strings.Join(got, "\n        ")), clip(strings.Join(want, "\n        ")))
					}
				}
			}
			t.Logf("%d records compared", records)
		})
	}
}

// recordsFields collects the values of every "records" key holding
// batches (an array or null), in document order of Produce's
// topicData[].partitionData[] and Fetch's responses[].partitions[].
func recordsFields(m map[string]any, out *[]any) {
	for _, tk := range []string{"topicData", "responses"} {
		for _, tp := range jArr(m, tk) {
			for _, pk := range []string{"partitionData", "partitions"} {
				for _, p := range jArr(tp, pk) {
					*out = append(*out, p["records"])
				}
			}
		}
	}
}
