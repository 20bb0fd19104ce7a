package stats

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"net/netip"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Test helpers: frames are encoded with franz-go's kmsg (an independent
// encoder) and decoded with kwire's protocol decoder, so the trees stats
// walks are the real ones.

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var dec = &protocol.Decoder{Records: true}

func reqFrame(t *testing.T, cid int32, clientID string, r kmsg.Request) *dissect.Frame {
	t.Helper()
	b := kmsg.NewRequestFormatter(kmsg.FormatterClientID(clientID)).AppendRequest(nil, r, cid)
	tr := dec.DecodeRequest(b)
	if tr.Err != nil && protocol.Lookup(r.Key(), false, r.GetVersion()) != nil {
		t.Fatalf("decoding %T v%d: %v", r, r.GetVersion(), tr.Err)
	}
	return &dissect.Frame{Bytes: b, Tree: tr}
}

func respFrame(t *testing.T, cid int32, r kmsg.Response) *dissect.Frame {
	t.Helper()
	b := binary.BigEndian.AppendUint32(make([]byte, 4), uint32(cid))
	if r.IsFlexible() && r.Key() != 18 { // ApiVersions responses keep header v0
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	tr := dec.DecodeResponse(b, r.Key(), r.GetVersion())
	if tr.Err != nil {
		t.Fatalf("decoding %T v%d: %v", r, r.GetVersion(), tr.Err)
	}
	return &dissect.Frame{Bytes: b, Tree: tr}
}

// batch encodes a record batch v2 of n records with value val each,
// compressed with gzip when gz is set. It returns the batch and its size
// with the records uncompressed.
func batch(n int, val string, gz bool) (b []byte, uncompressed int) {
	var recs []byte
	for i := range n {
		var body []byte
		body = append(body, 0)                     // attributes
		body = binary.AppendVarint(body, 0)        // timestamp delta
		body = binary.AppendVarint(body, int64(i)) // offset delta
		body = binary.AppendVarint(body, -1)       // null key
		body = binary.AppendVarint(body, int64(len(val)))
		body = append(body, val...)
		body = binary.AppendVarint(body, 0) // no headers
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	uncompressed = 61 + len(recs)
	rb := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(n - 1), NumRecords: int32(n),
		ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1, Records: recs}
	if gz {
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(recs)
		w.Close()
		rb.Records = buf.Bytes()
		rb.Attributes = 1
	}
	rb.Length = int32(49 + len(rb.Records))
	b = rb.AppendTo(nil)
	crc := crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(b[17:], crc)
	return b, uncompressed
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// xchg builds a paired exchange on conn c with the request at frame rf,
// time t0+at, answered after lat.
func xchg(c *reassembly.Conn, clientID string, req *dissect.Frame, resp *dissect.Frame,
	key, ver int16, cid int32, rf int64, at, lat time.Duration) *dissect.Exchange {
	x := &dissect.Exchange{Conn: c, Client: c.A, Broker: c.B, Kind: dissect.KindPaired,
		APIKey: key, APIVersion: ver, CorrelationID: cid, ClientID: clientID,
		Request: req, Response: resp}
	req.FirstPacket, req.LastPacket = rf, rf
	req.Time, req.End = t0.Add(at), t0.Add(at)
	if resp != nil {
		resp.FirstPacket, resp.LastPacket = rf+1, rf+1
		resp.Time, resp.End = t0.Add(at+lat), t0.Add(at+lat)
	} else {
		x.Kind = dissect.KindUnanswered
	}
	return x
}
