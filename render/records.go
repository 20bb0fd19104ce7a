package render

import (
	"strconv"
	"strings"

	"github.com/kwire/kwire/protocol"
)

// Record batch facts used for display (Kafka protocol guide, "Record Batch";
// KIP-98 for the attribute bits): the low three bits of a batch's (or legacy
// message's) attributes are the codec, bit 3 the timestamp type (1 =
// LogAppendTime, every record's timestamp is the batch's MaxTimestamp), bit 4
// transactional, bit 5 control. The nodes are recognised by the fields they
// are values of (protocol.Batch, protocol.Record, protocol.Message).
const (
	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

// CodecName names a compression codec id from a batch's attributes.
func CodecName(attributes int64) string {
	return protocol.Codec(attributes & attrCodecMask).String()
}

// fieldInt returns the integer value of n's child of field f.
func fieldInt(n *protocol.Node, f *protocol.Field) (int64, bool) {
	return intOf(n.ChildOf(f))
}

// isBatch reports whether n is a record batch (magic 2) or a legacy
// message (magic 0 or 1).
func isBatch(n *protocol.Node) bool {
	return n != nil && n.Kind == protocol.KindStruct && (n.Field == protocol.Batch.Batch || n.Field == protocol.Message.Message)
}

// isRecord reports whether n is a record inside a magic 2 batch.
func isRecord(n *protocol.Node) bool {
	return n != nil && n.Kind == protocol.KindStruct && n.Field != nil && n.Field == protocol.Batch.Records.ElemField()
}

// isMessageSet reports whether n is the inner message set of a compressed
// legacy message (protocol/records.go).
func isMessageSet(n *protocol.Node) bool {
	return n.Kind == protocol.KindStruct && n.Flags&protocol.FlagNull == 0 && n.Field == protocol.Message.MessageSet
}

// batchPos is what recordPosition needs from the batch last asked about,
// found once per batch rather than once per record.
type batchPos struct {
	batch *protocol.Node
	ts    int64 // BaseTimestamp, or MaxTimestamp under LogAppendTime
	logAp bool

	// The last record time formatted (records mostly share their
	// millisecond), whatever the batch.
	text   []byte
	textMs int64
}

// appendTime appends appendMsTime(ms) to b.
func (p *batchPos) appendTime(b []byte, ms int64) []byte {
	if len(p.text) == 0 || p.textMs != ms {
		p.text, p.textMs = appendMsTime(p.text[:0], ms), ms
	}
	return append(b, p.text...)
}

// position returns record rec's absolute offset (the decoder's, Node.Int
// with FlagAbsOffset) and timestamp (ms since the epoch): the batch's
// BaseTimestamp plus the record's TimestampDelta, or the batch's
// MaxTimestamp under LogAppendTime.
func (p *batchPos) position(batch, rec *protocol.Node) (off, ts int64, ok bool) {
	if rec.Flags&protocol.FlagAbsOffset == 0 {
		return 0, 0, false
	}
	if batch != p.batch {
		p.batch = batch
		attrs, _ := fieldInt(batch, protocol.Batch.Attributes)
		p.logAp = attrs&attrLogAppendTime != 0
		if p.logAp {
			p.ts, _ = fieldInt(batch, protocol.Batch.MaxTimestamp)
		} else {
			p.ts, _ = fieldInt(batch, protocol.Batch.BaseTimestamp)
		}
	}
	ts = p.ts
	if !p.logAp {
		td, _ := fieldInt(rec, protocol.Record.TimestampDelta)
		ts += td
	}
	return rec.Int, ts, true
}

// controlTypeOf returns a control record's type name (COMMIT, ABORT, ...)
// from its key, or "".
func controlTypeOf(rec *protocol.Node) string {
	key := rec.ChildOf(protocol.Record.Key)
	if t := key.ChildOf(protocol.Record.ControlType); t != nil {
		return protocol.ControlTypeName(int16(t.Int))
	}
	return ""
}

// batchInfo is what the tree and JSON renderers need from a batch.
type batchInfo struct {
	baseOffset int64 // the first record's (legacy: message's) absolute offset
	count      int64 // records (legacy: messages), -1 when unknown
	codec      string
	wrapper    bool // a compressed legacy message: count and baseOffset are its inner messages'
}

func batchSummary(b *protocol.Node) batchInfo {
	bi := batchInfo{count: -1}
	if b.Field == protocol.Message.Message {
		bi.baseOffset, _ = fieldInt(b, protocol.Message.Offset)
		attrs, _ := fieldInt(b, protocol.Message.Attributes)
		bi.codec = CodecName(attrs)
		bi.legacyMessages(b)
		return bi
	}
	bi.baseOffset, _ = fieldInt(b, protocol.Batch.BaseOffset)
	attrs, _ := fieldInt(b, protocol.Batch.Attributes)
	bi.codec = CodecName(attrs)
	if r := b.ChildOf(protocol.Batch.Records); r != nil {
		switch {
		case r.Int >= 0:
			bi.count = r.Int
		case len(r.Children) > 0:
			bi.count = int64(len(r.Children))
		}
	}
	if bi.count < 0 {
		if d, ok := fieldInt(b, protocol.Batch.LastOffsetDelta); ok {
			bi.count = d + 1
		}
	}
	return bi
}

// legacyMessages fills in the first absolute offset and the message count
// of legacy message b (magic 0 or 1; protocol guide "Message Sets"): a
// message without an inner MessageSet is one message at its own offset; a
// compressed wrapper counts its inner messages (recursively, for wrappers
// nested inside), and its first offset is the first inner message's
// absolute offset, which the decoder computed (Node.Int with
// FlagAbsOffset); without it the wrapper's own offset (the last inner
// message's, KIP-31) stands in. A wrapper whose payload did not
// decompress has an unknown count (-1).
func (bi *batchInfo) legacyMessages(b *protocol.Node) {
	set := b.ChildOf(protocol.Message.MessageSet)
	if set == nil {
		if bi.codec == "none" {
			bi.count = 1
		}
		return
	}
	bi.wrapper = true
	first, found := int64(0), false
	var walk func(set *protocol.Node, depth int) int64
	walk = func(set *protocol.Node, depth int) int64 {
		var n int64
		for _, m := range set.Children {
			if m.Field != protocol.Message.Message {
				continue
			}
			if inner := m.ChildOf(protocol.Message.MessageSet); inner != nil && depth < 8 {
				n += walk(inner, depth+1)
				continue
			}
			if !found && m.Flags&protocol.FlagAbsOffset != 0 {
				first, found = m.Int, true
			}
			n++
		}
		return n
	}
	bi.count = walk(set, 0)
	if found {
		bi.baseOffset = first
	}
}

// msTime formats milliseconds since the epoch as RFC 3339 UTC with
// milliseconds; -1 (Kafka's "no timestamp") gives "-1".
func msTime(ms int64) string {
	return string(appendMsTime(make([]byte, 0, 24), ms))
}

// appendMsTime appends msTime(ms) to b.
func appendMsTime(b []byte, ms int64) []byte {
	if ms < 0 {
		return strconv.AppendInt(b, ms, 10)
	}
	return protocol.AppendMillisUTC(b, ms)
}

// crcNote returns the decoder's verdict on a batch's or message's CRC
// ("ok", "bad: ..."), or "".
func crcNote(b *protocol.Node) string {
	c := b.ChildOf(protocol.Batch.Crc)
	if c == nil {
		c = b.ChildOf(protocol.Message.Crc)
	}
	if c == nil {
		return ""
	}
	return c.Note
}

// batchDescription is the text after a batch's name in the tree.
func batchDescription(b *protocol.Node) string {
	bi := batchSummary(b)
	var sb strings.Builder
	legacy := b.Field == protocol.Message.Message
	if legacy {
		magic, _ := fieldInt(b, protocol.Message.Magic)
		sb.WriteString("v" + itoa(magic) + " ")
		// The message's own Offset (a wrapper's is its last inner
		// message's), then the inner messages a wrapper holds.
		off, _ := fieldInt(b, protocol.Message.Offset)
		sb.WriteString("offset " + itoa(off))
		if bi.wrapper && bi.count == 1 {
			sb.WriteString(", 1 message")
		} else if bi.wrapper && bi.count >= 0 {
			sb.WriteString(", " + itoa(bi.count) + " messages")
		}
	} else {
		sb.WriteString("offset " + itoa(bi.baseOffset))
		if last, ok := fieldInt(b, protocol.Batch.LastOffsetDelta); ok && last > 0 {
			sb.WriteString("-" + itoa(bi.baseOffset+last))
		}
		switch {
		case bi.count == 1:
			sb.WriteString(", 1 record")
		case bi.count >= 0:
			sb.WriteString(", " + itoa(bi.count) + " records")
		}
	}
	if bi.codec == "none" {
		sb.WriteString(", uncompressed")
	} else {
		sb.WriteString(", " + bi.codec)
	}
	if !legacy {
		attrs, _ := fieldInt(b, protocol.Batch.Attributes)
		if attrs&attrTransactional != 0 {
			sb.WriteString(", transactional")
		}
		if attrs&attrControl != 0 {
			sb.WriteString(", control")
		}
		if attrs&attrLogAppendTime != 0 {
			sb.WriteString(", LogAppendTime")
		}
		if ts, ok := fieldInt(b, protocol.Batch.BaseTimestamp); ok {
			sb.WriteString(", " + msTime(ts))
		}
	}
	if note := crcNote(b); note != "" {
		sb.WriteString(", crc " + note)
	}
	return sb.String()
}
