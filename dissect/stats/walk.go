package stats

import (
	"encoding/binary"
	"strings"

	"github.com/kwire/kwire/protocol"
)

// This file reads the few facts stats needs out of decoded frames
// (protocol.Tree, protocol/node.go): the message body, error codes, topic
// and partition records, ApiVersions fields. It relies only on the node
// names the schema table gives (Kafka's JSON field names), on array
// elements being KindStruct children of a KindArray, on tagged fields
// being children of a KindTaggedFields node, and on the record batch
// layout documented in protocol/records.go.

// maxWalkDepth bounds recursion over a tree; the decoder's own bound on
// struct nesting is lower, so this only protects against a broken tree.
const maxWalkDepth = 64

// Body returns the message node of a decoded frame: the root itself when
// it is a request or response body (protocol.DecodeBody), else the body
// child of a frame root (protocol.FrameParts). nil when there is none or
// the body was not decoded as a struct (unknown API key or version).
func Body(t *protocol.Tree) *protocol.Node {
	if t == nil || t.Root == nil {
		return nil
	}
	if isBody(t.Root) {
		return t.Root
	}
	if _, _, b := protocol.FrameParts(t.Root); isBody(b) {
		return b
	}
	return nil
}

func isBody(n *protocol.Node) bool {
	return n != nil && n.Kind == protocol.KindStruct && (n.Type == "request" || n.Type == "response")
}

// Field returns n's field called name: a direct child, or a known tagged
// field inside one of n's KindTaggedFields children. nil when absent.
func Field(n *protocol.Node, name string) *protocol.Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	for _, c := range n.Children {
		if c.Kind == protocol.KindTaggedFields {
			if f := c.Child(name); f != nil {
				return f
			}
		}
	}
	return nil
}

// Elements returns the struct elements of array field name of n.
func Elements(n *protocol.Node, name string) []*protocol.Node {
	a := Field(n, name)
	if a == nil || a.Kind != protocol.KindArray {
		return nil
	}
	return a.Children
}

// Int returns the integer value of n's field name.
func Int(n *protocol.Node, name string) (int64, bool) {
	f := Field(n, name)
	if f == nil || (f.Kind != protocol.KindInt && f.Kind != protocol.KindBool) {
		return 0, false
	}
	return f.Int, true
}

// Str returns the string value of n's field name ("" when absent or null).
func Str(n *protocol.Node, name string) string {
	f := Field(n, name)
	if f == nil || f.Kind != protocol.KindString {
		return ""
	}
	return f.Str
}

// UUID returns the value of n's uuid field name.
func UUID(n *protocol.Node, name string) ([16]byte, bool) {
	var u [16]byte
	f := Field(n, name)
	if f == nil || f.Kind != protocol.KindUUID || len(f.Raw) != 16 {
		return u, false
	}
	copy(u[:], f.Raw)
	return u, true
}

// ErrorCodes calls fn for every non-zero Kafka error code in the tree under
// n: every integer field whose name ends in "ErrorCode" (top-level,
// per-topic, per-partition, ...). Record batches are not entered.
func ErrorCodes(n *protocol.Node, fn func(code int16)) {
	errorCodes(n, fn, 0)
}

func errorCodes(n *protocol.Node, fn func(int16), depth int) {
	if n == nil || depth > maxWalkDepth {
		return
	}
	if n.Kind == protocol.KindInt && isErrorCode(n.Name) {
		if n.Int != 0 {
			fn(int16(n.Int))
		}
		return
	}
	if n.Kind == protocol.KindRecords {
		return
	}
	for _, c := range n.Children {
		errorCodes(c, fn, depth+1)
	}
}

// BatchInfo summarises the record batches of one RECORDS field.
type BatchInfo struct {
	Batches      int64
	Records      int64
	WireBytes    int64 // bytes on the wire, batch headers included
	Uncompressed int64 // bytes with every payload decompressed; counts only batches whose size is known
	Unknown      int64 // compressed batches whose decompressed size is unknown (not decoded, or failed)
	Codecs       []string
}

func (b *BatchInfo) codec(c protocol.Codec) {
	s := c.String()
	for _, x := range b.Codecs {
		if x == s {
			return
		}
	}
	b.Codecs = append(b.Codecs, s)
}

// Record batch v2 header layout (Kafka protocol guide, "Record Batch").
const (
	v2HeaderLen  = 61 // BaseOffset .. record count
	v2OffMagic   = 16
	v2OffAttrs   = 21
	v2OffCount   = 57
	logOverhead  = 12 // BaseOffset (or Offset) int64 + length int32
	legacyAttrAt = 17 // Offset int64, MessageSize int32, Crc uint32, Magic int8
)

// Batches summarises the RECORDS node rec of tree t. When the decoder
// decoded the batches (Decoder.Records), their nodes are read, and the
// decompressed size comes from the space holding the inflated records;
// otherwise the batch headers are read straight from rec.Raw.
func Batches(t *protocol.Tree, rec *protocol.Node) BatchInfo {
	var bi BatchInfo
	if rec == nil || rec.Kind != protocol.KindRecords || rec.Flags&protocol.FlagNull != 0 {
		return bi
	}
	decoded := false
	for _, b := range rec.Children {
		switch b.Name {
		case "RecordBatch":
			decoded = true
			batchNode(t, b, &bi)
		case "Message":
			decoded = true
			messageNode(t, b, &bi)
		}
	}
	if !decoded {
		rawBatches(rec.Raw, &bi)
	}
	return bi
}

func batchNode(t *protocol.Tree, b *protocol.Node, bi *BatchInfo) {
	bi.Batches++
	bi.WireBytes += int64(b.Len)
	attrs, _ := Int(b, "Attributes")
	codec := protocol.Codec(attrs & 7)
	bi.codec(codec)
	recs := b.Child("Records")
	if recs == nil {
		return
	}
	n := max(recs.Int, 0)
	if recs.Flags&protocol.FlagTruncated != 0 {
		// "only N of M records present": the declared count claims
		// records that are not there; count those that are.
		n = 0
		for _, r := range recs.Children {
			if r.Type == "Record" {
				n++
			}
		}
	}
	bi.Records += n
	if codec == protocol.CodecNone {
		bi.Uncompressed += int64(b.Len)
		return
	}
	for _, r := range recs.Children {
		if r.Space != b.Space && r.Space > 0 && t != nil && r.Space < len(t.Spaces) {
			bi.Uncompressed += v2HeaderLen + int64(len(t.Spaces[r.Space].Data))
			return
		}
	}
	bi.Unknown++
}

// messageNode counts a legacy (magic 0/1) message: a batch of one record,
// or, for a compressed wrapper, of the messages in its inner MessageSet.
func messageNode(t *protocol.Tree, m *protocol.Node, bi *BatchInfo) {
	bi.Batches++
	bi.WireBytes += int64(m.Len)
	attrs, _ := Int(m, "Attributes")
	codec := protocol.Codec(attrs & 7)
	bi.codec(codec)
	if codec == protocol.CodecNone {
		bi.Records++
		bi.Uncompressed += int64(m.Len)
		return
	}
	set := m.Child("MessageSet")
	if set == nil || t == nil || set.Space <= 0 || set.Space >= len(t.Spaces) {
		bi.Unknown++
		return
	}
	for _, c := range set.Children {
		if c.Name == "Message" {
			bi.Records++
		}
	}
	bi.Uncompressed += int64(len(t.Spaces[set.Space].Data))
}

// rawBatches reads batch headers from undecoded RECORDS bytes. A trailing
// partial batch (normal at the end of a Fetch response) is not counted.
func rawBatches(b []byte, bi *BatchInfo) {
	for len(b) >= logOverhead {
		size := int64(int32(binary.BigEndian.Uint32(b[8:12])))
		total := logOverhead + size
		if size < 0 || total > int64(len(b)) || total <= v2OffMagic {
			return
		}
		batch := b[:total]
		b = b[total:]
		bi.Batches++
		bi.WireBytes += total
		switch batch[v2OffMagic] {
		case 2:
			if total < v2HeaderLen {
				continue
			}
			codec := protocol.Codec(binary.BigEndian.Uint16(batch[v2OffAttrs:]) & 7)
			bi.codec(codec)
			bi.Records += max(int64(int32(binary.BigEndian.Uint32(batch[v2OffCount:]))), 0)
			if codec == protocol.CodecNone {
				bi.Uncompressed += total
			} else {
				bi.Unknown++
			}
		default:
			if total <= legacyAttrAt {
				continue
			}
			codec := protocol.Codec(batch[legacyAttrAt] & 7)
			bi.codec(codec)
			if codec == protocol.CodecNone {
				bi.Records++
				bi.Uncompressed += total
			} else {
				bi.Unknown++
			}
		}
	}
}

// isErrorCode reports whether a field name names a Kafka error code
// ("ErrorCode", "PartitionErrorCode", ...), ignoring case.
func isErrorCode(name string) bool {
	const suffix = "errorcode"
	return len(name) >= len(suffix) && strings.EqualFold(name[len(name)-len(suffix):], suffix)
}
