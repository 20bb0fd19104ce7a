package render

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// treeBuilder writes Kafka-encoded bytes and the matching Node tree at the
// same time, so hand-built test trees have exact spans over real bytes.
type treeBuilder struct {
	data  []byte
	stack []*protocol.Node
	space int
}

// newBuilder starts a tree shaped as protocol's decoder shapes frames
// (protocol/decode.go): a root "RequestFrame" of Type "frame".
func newBuilder() *treeBuilder {
	return &treeBuilder{stack: []*protocol.Node{{Name: "RequestFrame", Type: "frame", Kind: protocol.KindStruct}}}
}

func (b *treeBuilder) top() *protocol.Node { return b.stack[len(b.stack)-1] }

// add appends raw as the span of n, a child of the open container.
func (b *treeBuilder) add(n *protocol.Node, raw []byte) *protocol.Node {
	n.Off, n.Len, n.Space = len(b.data), len(raw), b.space
	b.data = append(b.data, raw...)
	b.top().Children = append(b.top().Children, n)
	return n
}

func be(size int, v int64) []byte {
	out := make([]byte, 8)
	binary.BigEndian.PutUint64(out, uint64(v))
	return out[8-size:]
}

func uvarint(v uint64) []byte { return binary.AppendUvarint(nil, v) }
func varint(v int64) []byte   { return binary.AppendVarint(nil, v) }

func (b *treeBuilder) int(name, typ string, size int, v int64) *protocol.Node {
	return b.add(&protocol.Node{Name: name, Type: typ, Kind: protocol.KindInt, Int: v}, be(size, v))
}

func (b *treeBuilder) varint(name string, v int64) *protocol.Node {
	return b.add(&protocol.Node{Name: name, Type: "varint", Kind: protocol.KindInt, Int: v}, varint(v))
}

// str writes a STRING (int16 length) or COMPACT_STRING (uvarint length+1).
func (b *treeBuilder) str(name, s string, compact bool) *protocol.Node {
	var raw []byte
	typ := "string"
	if compact {
		raw = uvarint(uint64(len(s) + 1))
		typ = "compact_string"
	} else {
		raw = be(2, int64(len(s)))
	}
	return b.add(&protocol.Node{Name: name, Type: typ, Kind: protocol.KindString, Str: s}, append(raw, s...))
}

// varBytes writes a record key/value: varint length (-1 null) and data.
func (b *treeBuilder) varBytes(name string, v []byte) *protocol.Node {
	if v == nil {
		return b.add(&protocol.Node{Name: name, Type: "varbytes", Kind: protocol.KindBytes, Flags: protocol.FlagNull}, varint(-1))
	}
	raw := append(varint(int64(len(v))), v...)
	n := b.add(&protocol.Node{Name: name, Type: "varbytes", Kind: protocol.KindBytes}, raw)
	n.Raw = b.data[n.End()-len(v) : n.End()]
	return n
}

// bytes writes BYTES (int32 length) or COMPACT_BYTES.
func (b *treeBuilder) bytes(name string, v []byte, compact bool) *protocol.Node {
	var raw []byte
	if compact {
		raw = uvarint(uint64(len(v) + 1))
	} else {
		raw = be(4, int64(len(v)))
	}
	raw = append(raw, v...)
	n := b.add(&protocol.Node{Name: name, Type: "bytes", Kind: protocol.KindBytes}, raw)
	n.Raw = b.data[n.End()-len(v) : n.End()]
	return n
}

func (b *treeBuilder) uuid(name string, v [16]byte) *protocol.Node {
	n := b.add(&protocol.Node{Name: name, Type: "uuid", Kind: protocol.KindUUID}, v[:])
	n.Raw = b.data[n.Off:n.End()]
	return n
}

// open starts a container whose span begins with prefix.
func (b *treeBuilder) open(n *protocol.Node, prefix []byte) *protocol.Node {
	n.Off, n.Space = len(b.data), b.space
	b.data = append(b.data, prefix...)
	b.top().Children = append(b.top().Children, n)
	b.stack = append(b.stack, n)
	return n
}

// array opens an ARRAY (int32 count) or COMPACT_ARRAY.
func (b *treeBuilder) array(name string, count int, compact bool) *protocol.Node {
	p := be(4, int64(count))
	if compact {
		p = uvarint(uint64(count + 1))
	}
	return b.open(&protocol.Node{Name: name, Kind: protocol.KindArray, Int: int64(count)}, p)
}

func (b *treeBuilder) strct(name, typ string) *protocol.Node {
	return b.open(&protocol.Node{Name: name, Type: typ, Kind: protocol.KindStruct}, nil)
}

// tags writes an empty tagged-field buffer.
func (b *treeBuilder) tags() *protocol.Node {
	return b.add(&protocol.Node{Name: "TaggedFields", Type: "tagged_fields", Kind: protocol.KindTaggedFields}, []byte{0})
}

func (b *treeBuilder) close() *protocol.Node {
	n := b.top()
	n.Len = len(b.data) - n.Off
	b.stack = b.stack[:len(b.stack)-1]
	return n
}

// setRaw points Raw of n at its span minus the first skip bytes.
func (b *treeBuilder) setRaw(n *protocol.Node, skip int) {
	n.Raw = b.data[n.Off+skip : n.End()]
}

// frame finishes a frame whose first child is a 4-byte length: it patches
// the length and returns the tree.
func (b *treeBuilder) frame() *protocol.Tree {
	root := b.stack[0]
	root.Len = len(b.data)
	l := root.Children[0]
	l.Int = int64(len(b.data) - 4)
	copy(b.data[0:4], be(4, l.Int))
	// Raw fields alias b.data, which may have moved while growing.
	fixRaw(root, b.data)
	attachFields(root, nil, 0)
	return &protocol.Tree{Root: root, Spaces: []protocol.Space{{Name: "frame", Data: b.data}}}
}

// attachFields gives hand-built nodes the schema fields the decoder gives
// its nodes (protocol.Node.Field), by name: a message node's children are
// looked up in the schema of its name and version ("v9" in its Note), an
// array's elements get its element field, record batches, records and
// legacy messages the fields of protocol/recordfields.go. Only tests
// match field names; the renderers read Field.
func attachFields(n *protocol.Node, fields []protocol.Field, depth int) {
	if depth > 64 {
		return
	}
	if (n.Type == "request" || n.Type == "response" || n.Type == "header") && n.Kind == protocol.KindStruct {
		v, _ := strconv.Atoi(strings.TrimPrefix(n.Note, "v"))
		n.Ver = int16(v)
		fields = nil
		if m := protocol.LookupName(n.Name, int16(v)); m != nil {
			fields = m.Fields
		}
	}
	switch n.Type {
	case "RecordBatch":
		attachRecords(n, depth)
		return
	}
	for _, c := range n.Children {
		f := fieldNamed(fields, c.Name)
		if f == nil && n.Field != nil && n.Field.ElemOf != nil {
			f = fieldNamed(n.Field.Fields, c.Name)
		}
		if f != nil && c.Field == nil {
			c.Field = f
		}
		switch {
		case c.Kind == protocol.KindArray && c.Field != nil:
			for _, e := range c.Children {
				if e.Field == nil {
					e.Field = c.Field.ElemField()
				}
				attachFields(e, c.Field.Fields, depth+1)
			}
		case c.Kind == protocol.KindRecords:
			for _, bn := range c.Children {
				attachFields(bn, nil, depth+1)
			}
		case c.Field != nil:
			attachFields(c, c.Field.Fields, depth+1)
		default:
			attachFields(c, nil, depth+1)
		}
	}
}

func fieldNamed(fields []protocol.Field, name string) *protocol.Field {
	for i := range fields {
		if fields[i].Name == name {
			return &fields[i]
		}
	}
	return nil
}

// attachRecords gives a hand-built record batch its fields.
func attachRecords(b *protocol.Node, depth int) {
	bf := map[string]*protocol.Field{
		"BaseOffset": protocol.Batch.BaseOffset, "BatchLength": protocol.Batch.BatchLength,
		"PartitionLeaderEpoch": protocol.Batch.PartitionLeaderEpoch, "Magic": protocol.Batch.Magic,
		"Crc": protocol.Batch.Crc, "Attributes": protocol.Batch.Attributes, "LastOffsetDelta": protocol.Batch.LastOffsetDelta,
		"BaseTimestamp": protocol.Batch.BaseTimestamp, "MaxTimestamp": protocol.Batch.MaxTimestamp,
		"ProducerId": protocol.Batch.ProducerId, "ProducerEpoch": protocol.Batch.ProducerEpoch,
		"BaseSequence": protocol.Batch.BaseSequence, "Records": protocol.Batch.Records,
	}
	rf := map[string]*protocol.Field{
		"Length": protocol.Record.Length, "Attributes": protocol.Record.Attributes,
		"TimestampDelta": protocol.Record.TimestampDelta, "OffsetDelta": protocol.Record.OffsetDelta,
		"Key": protocol.Record.Key, "Value": protocol.Record.Value, "Headers": protocol.Record.Headers,
	}
	b.Field = protocol.Batch.Batch
	var base int64
	for _, c := range b.Children {
		c.Field = bf[c.Name]
		if c.Field == protocol.Batch.BaseOffset {
			base = c.Int
		}
	}
	for _, c := range b.Children {
		if c.Field != protocol.Batch.Records {
			continue
		}
		for _, r := range c.Children {
			if r.Kind != protocol.KindStruct {
				continue
			}
			r.Field = protocol.Batch.Records.ElemField()
			for _, f := range r.Children {
				f.Field = rf[f.Name]
				if f.Field == protocol.Record.OffsetDelta {
					r.Flags |= protocol.FlagAbsOffset
					r.Int = base + f.Int
				}
				if f.Field == protocol.Record.Headers {
					for _, h := range f.Children {
						h.Field = protocol.Record.Headers.ElemField()
						for _, hf := range h.Children {
							if hf.Name == "Key" {
								hf.Field = protocol.Record.HeaderKey
							} else if hf.Name == "Value" {
								hf.Field = protocol.Record.HeaderValue
							}
						}
					}
				}
			}
		}
	}
}

func fixRaw(n *protocol.Node, data []byte) {
	if n.Raw != nil && n.Space == 0 {
		n.Raw = data[n.End()-len(n.Raw) : n.End()]
	}
	for _, c := range n.Children {
		fixRaw(c, data)
	}
}

// apiVersionsV0 is the ApiVersions v0 request of the task description:
//
//	00 00 00 13                     length 19
//	00 12                           RequestApiKey 18
//	00 00                           RequestApiVersion 0
//	01 02 03 04                     CorrelationId 16909060
//	00 09 77 69 72 65 2d 72 65 61 64  ClientId "wire-read"
//	                                (empty body)
func apiVersionsV0() *protocol.Tree {
	b := newBuilder()
	b.int("Length", "int32", 4, 0)
	h := b.strct("RequestHeader", "header")
	h.Note = "v1"
	b.int("RequestApiKey", "int16", 2, 18)
	b.int("RequestApiVersion", "int16", 2, 0)
	b.int("CorrelationId", "int32", 4, 0x01020304)
	b.str("ClientId", "wire-read", false)
	b.close()
	body := b.strct("ApiVersionsRequest", "request")
	body.Note = "v0"
	b.close()
	return b.frame()
}

// record describes one test record.
type record struct {
	key, value []byte
	headers    [][2]string
}

// batch writes a v2 record batch with the given records into the open
// container; when compress is set its records go to a second space as the
// decoder's decompressed bytes, and the wire carries stand-in bytes.
func (b *treeBuilder) batch(name string, baseOffset, baseTS int64, recs []record, attrs int64) (*protocol.Node, []byte) {
	bn := b.strct(name, "RecordBatch")
	b.int("BaseOffset", "int64", 8, baseOffset)
	bl := b.int("BatchLength", "int32", 4, 0)
	b.int("PartitionLeaderEpoch", "int32", 4, 0)
	b.int("Magic", "int8", 1, 2)
	b.int("Crc", "uint32", 4, 0x1234abcd).Note = "ok"
	b.int("Attributes", "int16", 2, attrs)
	b.int("LastOffsetDelta", "int32", 4, int64(len(recs)-1))
	b.int("BaseTimestamp", "int64", 8, baseTS)
	b.int("MaxTimestamp", "int64", 8, baseTS+int64(len(recs)-1)*10)
	b.int("ProducerId", "int64", 8, -1)
	b.int("ProducerEpoch", "int16", 2, -1)
	b.int("BaseSequence", "int32", 4, -1)
	var decompressed []byte
	if attrs&attrCodecMask != 0 {
		// Records come from a decompressed space built separately.
		inner := newBuilder()
		inner.space = 1
		inner.writeRecords(recs)
		fixRaw1(inner.stack[0], inner.data)
		decompressed = inner.data
		ra := b.open(&protocol.Node{Name: "Records", Type: "Record", Kind: protocol.KindArray, Int: int64(len(recs))}, be(4, int64(len(recs))))
		// Stand-in compressed bytes: a gzip magic and filler; render never
		// decompresses, so only their span matters.
		stand := append([]byte{0x1f, 0x8b, 0x08, 0x00}, make([]byte, 80)...)
		b.data = append(b.data, stand...)
		ra.Children = inner.stack[0].Children
		b.close()
	} else {
		b.open(&protocol.Node{Name: "Records", Kind: protocol.KindArray, Int: int64(len(recs))}, be(4, int64(len(recs))))
		b.writeRecords(recs)
		b.close()
	}
	b.close()
	bl.Int = int64(bn.Len - 12)
	copy(b.data[bl.Off:bl.End()], be(4, bl.Int))
	return bn, decompressed
}

func fixRaw1(n *protocol.Node, data []byte) {
	if n.Raw != nil {
		n.Raw = data[n.End()-len(n.Raw) : n.End()]
	}
	for _, c := range n.Children {
		fixRaw1(c, data)
	}
}

func (b *treeBuilder) writeRecords(recs []record) {
	for i, r := range recs {
		// The record's varint length prefix counts the bytes after it;
		// build the body first in a scratch builder to learn it.
		scratch := newBuilder()
		scratch.record(i, r)
		body := scratch.data
		rn := b.strct("["+itoa(int64(i))+"]", "Record")
		b.varint("Length", int64(len(body)))
		b.record(i, r)
		b.close()
		_ = rn
	}
}

func (b *treeBuilder) record(i int, r record) {
	b.int("Attributes", "int8", 1, 0)
	b.varint("TimestampDelta", int64(i)*10)
	b.varint("OffsetDelta", int64(i))
	b.varBytes("Key", r.key)
	b.varBytes("Value", r.value)
	b.open(&protocol.Node{Name: "Headers", Kind: protocol.KindArray, Int: int64(len(r.headers))}, varint(int64(len(r.headers))))
	for j, h := range r.headers {
		b.strct("["+itoa(int64(j))+"]", "Header")
		b.varBytes("Key", []byte(h[0]))
		b.varBytes("Value", []byte(h[1]))
		b.close()
	}
	b.close()
}

// produceV9 builds a Produce v9 request (flexible: compact strings and
// arrays, tagged fields) for topic "orders" partitions 0 and 3, each with
// one batch; partition 3's batch is gzip-compressed with its records in
// space 1.
func produceV9() *protocol.Tree {
	b := newBuilder()
	b.int("Length", "int32", 4, 0)
	h := b.strct("RequestHeader", "header")
	h.Note = "v2"
	b.int("RequestApiKey", "int16", 2, 0)
	b.int("RequestApiVersion", "int16", 2, 9)
	b.int("CorrelationId", "int32", 4, 7)
	b.str("ClientId", "app", false)
	b.tags()
	b.close()
	body := b.strct("ProduceRequest", "request")
	body.Note = "v9"
	b.add(&protocol.Node{Name: "TransactionalId", Type: "compact_string", Kind: protocol.KindString, Flags: protocol.FlagNull}, []byte{0})
	b.int("Acks", "int16", 2, -1)
	b.int("TimeoutMs", "int32", 4, 30000)
	b.array("TopicData", 1, true)
	b.strct("[0]", "TopicProduceData")
	b.str("Name", "orders", true)
	b.array("PartitionData", 2, true)
	var spaces []protocol.Space
	for i, p := range []int64{0, 3} {
		b.strct("["+itoa(int64(i))+"]", "PartitionProduceData")
		b.int("Index", "int32", 4, p)
		recs := []record{
			{key: []byte("k1"), value: []byte(`{"id":1,"item":"a rather long order line"}`), headers: [][2]string{{"trace", "abc"}}},
			{key: nil, value: []byte{0xff, 0x00, 0x01}},
		}
		attrs := int64(0)
		if p == 3 {
			attrs = 1 // gzip
		}
		// COMPACT_RECORDS: uvarint length+1, then the batch.
		rn := b.open(&protocol.Node{Name: "Records", Type: "records", Kind: protocol.KindRecords}, nil)
		lenAt := len(b.data)
		b.data = append(b.data, 0, 0) // 2-byte uvarint, patched below
		bn, dec := b.batch("RecordBatch", 0, 1764417600000, recs, attrs)
		if dec != nil {
			spaces = append(spaces, protocol.Space{Name: "gzip-decompressed records of batch at 0x" + itoaHex(bn.Off), Data: dec})
		}
		b.close()
		n := uint64(bn.Len + 1)
		enc := []byte{byte(n) | 0x80, byte(n >> 7)}
		if n < 128 || n>>14 != 0 {
			panic("batch size does not fit the test's 2-byte varint: " + itoa(int64(n)))
		}
		copy(b.data[lenAt:lenAt+2], enc)
		b.setRaw(rn, 2)
		b.tags()
		b.close()
	}
	b.close() // PartitionData
	b.tags()
	b.close() // [0]
	b.close() // TopicData
	b.tags()
	b.close() // body
	t := b.frame()
	t.Spaces = append(t.Spaces, spaces...)
	return t
}

func itoaHex(v int) string {
	const d = "0123456789abcdef"
	if v == 0 {
		return "0"
	}
	var s []byte
	for ; v > 0; v >>= 4 {
		s = append([]byte{d[v&15]}, s...)
	}
	return string(s)
}

// produceResponseV9 answers produceV9: partition 0 fine at base offset 100,
// partition 3 NOT_LEADER_OR_FOLLOWER, and a throttle.
func produceResponseV9(errs ...int64) *protocol.Tree {
	b := newBuilder()
	b.stack[0].Name = "ResponseFrame"
	b.int("Length", "int32", 4, 0)
	h := b.strct("ResponseHeader", "header")
	h.Note = "v1"
	b.int("CorrelationId", "int32", 4, 7)
	b.tags()
	b.close()
	body := b.strct("ProduceResponse", "response")
	body.Note = "v9"
	b.array("Responses", 1, true)
	b.strct("[0]", "TopicProduceResponse")
	b.str("Name", "orders", true)
	b.array("PartitionResponses", len(errs), true)
	for i, code := range errs {
		b.strct("["+itoa(int64(i))+"]", "PartitionProduceResponse")
		b.int("Index", "int32", 4, []int64{0, 3, 5, 6}[i])
		ec := b.int("ErrorCode", "int16", 2, code)
		ec.Note = map[int64]string{0: "NONE", 6: "NOT_LEADER_OR_FOLLOWER", 3: "UNKNOWN_TOPIC_OR_PARTITION"}[code]
		base := int64(-1)
		if code == 0 {
			base = 100
		}
		b.int("BaseOffset", "int64", 8, base)
		b.int("LogAppendTimeMs", "int64", 8, -1)
		b.int("LogStartOffset", "int64", 8, 0)
		b.array("RecordErrors", 0, true)
		b.close()
		b.add(&protocol.Node{Name: "ErrorMessage", Type: "compact_string", Kind: protocol.KindString, Flags: protocol.FlagNull}, []byte{0})
		b.tags()
		b.close()
	}
	b.close()
	b.tags()
	b.close()
	b.close()
	b.int("ThrottleTimeMs", "int32", 4, 0)
	b.tags()
	b.close()
	return b.frame()
}

var (
	testClient = netip.MustParseAddrPort("10.0.0.5:53412")
	testBroker = netip.MustParseAddrPort("10.0.0.9:9092")
	testT0     = time.Date(2026, 11, 29, 12, 1, 2, 345_678_000, time.UTC)
)

func produceExchange(errs ...int64) *dissect.Exchange {
	req := produceV9()
	resp := produceResponseV9(errs...)
	return &dissect.Exchange{
		Conn:          &reassembly.Conn{Index: 3, A: testClient, B: testBroker},
		Client:        testClient,
		Broker:        testBroker,
		Kind:          dissect.KindPaired,
		APIKey:        0,
		APIVersion:    9,
		CorrelationID: 7,
		ClientID:      "app",
		Request:       &dissect.Frame{FirstPacket: 10, LastPacket: 11, Time: testT0, End: testT0, Bytes: req.Spaces[0].Data, Tree: req},
		Response:      &dissect.Frame{FirstPacket: 12, LastPacket: 12, Time: testT0.Add(2412 * time.Microsecond), Bytes: resp.Spaces[0].Data, Tree: resp},
	}
}
