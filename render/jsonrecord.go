package render

import (
	"strconv"

	"github.com/kwire/kwire/protocol"
)

// This file writes the JSON object of a record of a magic 2 batch in one
// function, as -V writes a record's lines, rather than through
// jsonWriter.object's generic walk (a key list, the repeated-key check and
// the camel-casing of every field name, a kind switch for every value):
// on a capture of large batches that walk was a quarter of kwire read
// --json's CPU. The fast form applies to a record of the shape the decoder
// gives a whole record (protocol/records.go: Length, Attributes,
// TimestampDelta, OffsetDelta, Key, Value, Headers of Key and Value, each
// once, in that order, nothing redacted); anything else (a record cut short,
// leftovers, a field missing or redacted) goes the generic way.
// TestJSONRecordFast holds the two to the same bytes.

// recordFields are the fields of a whole record's children, in order.
var recordFields = [...]*protocol.Field{
	protocol.Record.Length,
	protocol.Record.Attributes,
	protocol.Record.TimestampDelta,
	protocol.Record.OffsetDelta,
	protocol.Record.Key,
	protocol.Record.Value,
	protocol.Record.Headers,
}

// wholeRecord reports whether record n has the shape record writes.
func wholeRecord(n *protocol.Node) bool {
	if len(n.Children) != len(recordFields) {
		return false
	}
	for i, c := range n.Children {
		if c.Field != recordFields[i] || c.Name != c.Field.Name || c.Flags&protocol.FlagRedacted != 0 {
			return false
		}
		switch i {
		case 0, 1, 2, 3:
			if c.Kind != protocol.KindInt || c.Flags&protocol.FlagNull != 0 {
				return false
			}
		case 4, 5:
			if c.Kind != protocol.KindBytes {
				return false
			}
		case 6:
			if c.Kind != protocol.KindArray || c.Flags&protocol.FlagNull != 0 {
				return false
			}
			for _, h := range c.Children {
				if !wholeHeader(h) {
					return false
				}
			}
		}
	}
	return true
}

// wholeHeader reports whether header h is a Key and a Value, neither
// redacted.
func wholeHeader(h *protocol.Node) bool {
	if h.Kind != protocol.KindStruct || h.Field != protocol.Record.Headers.ElemField() ||
		h.Flags&(protocol.FlagNull|protocol.FlagRedacted) != 0 || len(h.Children) != 2 {
		return false
	}
	k, v := h.Children[0], h.Children[1]
	return k.Field == protocol.Record.HeaderKey && k.Name == k.Field.Name && k.Kind == protocol.KindBytes && k.Flags&protocol.FlagRedacted == 0 &&
		v.Field == protocol.Record.HeaderValue && v.Name == v.Field.Name && v.Kind == protocol.KindBytes && v.Flags&protocol.FlagRedacted == 0
}

// record appends record n of batch as object writes it, when n is a whole
// record (wholeRecord); false, with b unchanged, otherwise.
func (j *jsonWriter) record(b []byte, n, batch *protocol.Node) ([]byte, bool) {
	if j.genericRecords || !wholeRecord(n) {
		return b, false
	}
	j.fastRecords++
	c := n.Children
	b = append(b, '{')
	if off, ts, ok := j.pos.position(batch, n); ok {
		b = append(b, `"offset":`...)
		b = j.appendInt64(b, off)
		b = append(b, `,"timestamp":`...)
		b = j.appendInt64(b, ts)
		b = append(b, ',')
	}
	if key := c[4]; len(key.Children) > 0 {
		if t := key.ChildOf(protocol.Record.ControlType); t != nil {
			if name := protocol.ControlTypeName(int16(t.Int)); name != "" {
				b = append(b, `"controlType":`...)
				b = appendJSONStr(b, name, j.safe())
				b = append(b, ',')
			}
		}
	}
	b = append(b, `"length":`...)
	b = strconv.AppendInt(b, c[0].Int, 10)
	b = append(b, `,"attributes":`...)
	b = strconv.AppendInt(b, c[1].Int, 10)
	b = append(b, `,"timestampDelta":`...)
	b = j.appendInt64(b, c[2].Int) // a varlong: Int64Strings applies
	b = append(b, `,"offsetDelta":`...)
	b = strconv.AppendInt(b, c[3].Int, 10)
	b = j.recordBytesField(append(b, ','), "key", c[4])
	b = j.recordBytesField(append(b, ','), "value", c[5])
	b = append(b, `,"headers":[`...)
	for i, h := range c[6].Children {
		if i > 0 {
			b = append(b, ',')
		}
		b = j.recordBytesField(append(b, '{'), "key", h.Children[0])
		b = j.recordBytesField(append(b, ','), "value", h.Children[1])
		b = append(b, '}')
	}
	return append(b, "]}"...), true
}

// recordBytesField appends record bytes n under key name, as field does
// inside a record: "name": null, or its value per Options.Values, then
// "nameEncoding" (but with --values none), "nameSize" and, when cut,
// "nameTruncated". name is plain ASCII.
func (j *jsonWriter) recordBytesField(b []byte, name string, n *protocol.Node) []byte {
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, `":`...)
	if n.Flags&protocol.FlagNull != 0 {
		return append(b, "null"...)
	}
	var cut bool
	var enc string
	b, cut, enc = j.recordBytes(b, n.Raw, n.RawLen())
	if enc != "" {
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `Encoding":"`...)
		b = append(b, enc...)
		b = append(b, '"')
	}
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `Size":`...)
	b = strconv.AppendInt(b, int64(n.RawLen()), 10)
	if cut {
		b = append(b, `,"`...)
		b = append(b, name...)
		b = append(b, `Truncated":true`...)
	}
	return b
}
