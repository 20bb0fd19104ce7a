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
// transactional, bit 5 control.
const (
	attrCodecMask     = 0x07
	attrLogAppendTime = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
)

var codecNames = [...]string{"none", "gzip", "snappy", "lz4", "zstd"}

// CodecName names a compression codec id from a batch's attributes.
func CodecName(attributes int64) string {
	c := attributes & attrCodecMask
	if int(c) < len(codecNames) {
		return codecNames[c]
	}
	return "codec(" + itoa(c) + ")"
}

// isBatch reports whether n is a record batch (magic 2) or a legacy message
// set entry as the decoder builds them: a struct with BaseOffset (or Offset)
// and Magic children.
func isBatch(n *protocol.Node) bool {
	return n != nil && n.Kind == protocol.KindStruct &&
		child(n, "Magic") != nil && child(n, "BaseOffset", "Offset") != nil
}

// structFacts is what isBatch, isRecord and recordPosition look for
// among a node's children, found in one pass: the first child of each
// name, ignoring case.
type structFacts struct {
	magic, offset, baseOffset, offsetDelta, timestampDelta, key *protocol.Node
}

func factsOf(n *protocol.Node) (f structFacts) {
	set := func(p **protocol.Node, c *protocol.Node, name string) {
		if *p == nil && equalFold(c.Name, name) {
			*p = c
		}
	}
	for _, c := range n.Children {
		if !ascii(c.Name) {
			set(&f.magic, c, "Magic")
			set(&f.offset, c, "Offset")
			set(&f.baseOffset, c, "BaseOffset")
			set(&f.offsetDelta, c, "OffsetDelta")
			set(&f.timestampDelta, c, "TimestampDelta")
			set(&f.key, c, "Key")
			continue
		}
		// ASCII names match only names of their own length.
		switch len(c.Name) {
		case len("Magic"):
			set(&f.magic, c, "Magic")
		case len("Offset"):
			set(&f.offset, c, "Offset")
		case len("BaseOffset"):
			set(&f.baseOffset, c, "BaseOffset")
		case len("OffsetDelta"):
			set(&f.offsetDelta, c, "OffsetDelta")
		case len("TimestampDelta"):
			set(&f.timestampDelta, c, "TimestampDelta")
		case len("Key"):
			set(&f.key, c, "Key")
		}
	}
	return f
}

// batchPos is what recordPosition needs from the batch last asked
// about, found once per batch rather than once per record.
type batchPos struct {
	batch         *protocol.Node
	base, ts      int64 // BaseOffset; BaseTimestamp, or MaxTimestamp under LogAppendTime
	baseOK, logAp bool
}

// position is recordPosition(batch, the record rec describes).
func (p *batchPos) position(batch *protocol.Node, rec *structFacts) (off, ts int64, ok bool) {
	if batch != p.batch {
		p.batch = batch
		p.base, p.baseOK = intChild(batch, "BaseOffset")
		attrs, _ := intChild(batch, "Attributes")
		p.logAp = attrs&attrLogAppendTime != 0
		if p.logAp {
			p.ts, _ = intChild(batch, "MaxTimestamp")
		} else {
			p.ts, _ = intChild(batch, "BaseTimestamp")
		}
	}
	delta, ok2 := intOf(rec.offsetDelta)
	if !p.baseOK || !ok2 {
		return 0, 0, false
	}
	ts = p.ts
	if !p.logAp {
		td, _ := intOf(rec.timestampDelta)
		ts += td
	}
	return p.base + delta, ts, true
}

// isBatch is the package's isBatch from n's facts.
func (f *structFacts) isBatch(n *protocol.Node) bool {
	return n.Kind == protocol.KindStruct && f.magic != nil && (f.baseOffset != nil || f.offset != nil)
}

// isRecord is the package's isRecord from n's facts.
func (f *structFacts) isRecord(n *protocol.Node) bool {
	return n.Kind == protocol.KindStruct && f.offsetDelta != nil
}

// batchRecords returns the node holding a batch's records, or nil.
func batchRecords(b *protocol.Node) *protocol.Node {
	return child(b, "Records")
}

// batchInfo is what the one-line and JSON renderers need from a batch.
type batchInfo struct {
	baseOffset int64 // the first record's (legacy: message's) absolute offset
	count      int64 // records (legacy: messages), -1 when unknown
	codec      string
	bytes      int // the batch's size on the wire
	partial    bool
	wrapper    bool // a compressed legacy message: count and baseOffset are its inner messages'
}

func batchSummary(b *protocol.Node) batchInfo {
	bi := batchInfo{count: -1, bytes: b.Len}
	bi.baseOffset, _ = intChild(b, "BaseOffset", "Offset")
	attrs, _ := intChild(b, "Attributes")
	bi.codec = CodecName(attrs)
	bi.partial = b.Flags&protocol.FlagPartial != 0 // partial batches are KindRaw "PartialBatch" nodes in protocol
	if magic, ok := intChild(b, "Magic"); ok && magic < 2 {
		bi.legacyMessages(b)
		return bi
	}
	if r := batchRecords(b); r != nil {
		switch {
		case r.Kind == protocol.KindArray && r.Int >= 0:
			bi.count = r.Int
		case len(r.Children) > 0:
			bi.count = int64(len(r.Children))
		}
	}
	if bi.count < 0 {
		if c, ok := intChild(b, "RecordsCount", "RecordCount"); ok {
			bi.count = c
		} else if d, ok := intChild(b, "LastOffsetDelta"); ok && !bi.partial {
			bi.count = d + 1
		}
	}
	return bi
}

// legacyMessages fills in the first absolute offset and the message count
// of legacy message b (magic 0 or 1; protocol guide "Message Sets"): a
// message without an inner MessageSet is one message at its own offset; a
// compressed wrapper counts its inner messages (recursively, for wrappers
// nested inside), and its first offset is the first inner message's. Inner
// offsets of a magic 0 wrapper are absolute; those of a magic 1 wrapper are
// relative and the decoder notes their absolute value ("relative; offset
// N", protocol/records.go); without that note the wrapper's own offset (the
// last inner message's, KIP-31) stands in. A wrapper whose payload did not
// decompress has an unknown count (-1).
func (bi *batchInfo) legacyMessages(b *protocol.Node) {
	set := child(b, "MessageSet")
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
			if !isBatch(m) {
				continue
			}
			if inner := child(m, "MessageSet"); inner != nil && depth < 8 {
				n += walk(inner, depth+1)
				continue
			}
			if !found {
				first, found = innerOffset(m, bi.baseOffset), true
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

// innerOffset returns the absolute offset of inner message m of a legacy
// wrapper whose own offset is wrapperOffset.
func innerOffset(m *protocol.Node, wrapperOffset int64) int64 {
	o := child(m, "Offset")
	if o == nil || o.Kind != protocol.KindInt {
		return wrapperOffset
	}
	if !strings.HasPrefix(o.Note, "relative") {
		return o.Int // magic 0: inner offsets are absolute
	}
	if rest, ok := strings.CutPrefix(o.Note, "relative; offset "); ok {
		if end := strings.IndexAny(rest, " ;"); end >= 0 {
			rest = rest[:end]
		}
		if v, err := strconv.ParseInt(rest, 10, 64); err == nil {
			return v
		}
	}
	return wrapperOffset
}

// recordPosition returns a v2 record's absolute offset and timestamp (ms
// since the epoch) from its batch: BaseOffset+OffsetDelta, and
// BaseTimestamp+TimestampDelta or the batch's MaxTimestamp under
// LogAppendTime.
func recordPosition(batch, rec *protocol.Node) (off, ts int64, ok bool) {
	base, ok1 := intChild(batch, "BaseOffset")
	delta, ok2 := intChild(rec, "OffsetDelta")
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	off = base + delta
	attrs, _ := intChild(batch, "Attributes")
	if attrs&attrLogAppendTime != 0 {
		ts, _ = intChild(batch, "MaxTimestamp")
	} else {
		bt, _ := intChild(batch, "BaseTimestamp")
		td, _ := intChild(rec, "TimestampDelta")
		ts = bt + td
	}
	return off, ts, true
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

// batchDescription is the text after a batch's name in the tree.
func batchDescription(b *protocol.Node) string {
	bi := batchSummary(b)
	var sb strings.Builder
	magic, _ := intChild(b, "Magic")
	switch {
	case magic < 2:
		sb.WriteString("v" + itoa(magic) + " ")
	case !containsFold(b.Name, "batch"):
		sb.WriteString("record batch ")
	}
	switch {
	case magic < 2:
		// The message's own Offset (a wrapper's is its last inner
		// message's), then the inner messages a wrapper holds.
		off, _ := intChild(b, "Offset")
		sb.WriteString("offset " + itoa(off))
		if bi.wrapper && bi.count == 1 {
			sb.WriteString(", 1 message")
		} else if bi.wrapper && bi.count >= 0 {
			sb.WriteString(", " + itoa(bi.count) + " messages")
		}
	default:
		sb.WriteString("offset " + itoa(bi.baseOffset))
		if last, ok := intChild(b, "LastOffsetDelta"); ok && last > 0 {
			sb.WriteString("-" + itoa(bi.baseOffset+last))
		}
	}
	switch {
	case magic < 2:
	case bi.count == 1:
		sb.WriteString(", 1 record")
	case bi.count >= 0:
		sb.WriteString(", " + itoa(bi.count) + " records")
	}
	if bi.codec == "none" {
		sb.WriteString(", uncompressed")
	} else {
		sb.WriteString(", " + bi.codec)
	}
	attrs, _ := intChild(b, "Attributes")
	if magic >= 2 {
		if attrs&attrTransactional != 0 {
			sb.WriteString(", transactional")
		}
		if attrs&attrControl != 0 {
			sb.WriteString(", control")
		}
		if attrs&attrLogAppendTime != 0 {
			sb.WriteString(", LogAppendTime")
		}
		if ts, ok := intChild(b, "BaseTimestamp"); ok {
			sb.WriteString(", " + msTime(ts))
		}
	}
	if c := child(b, "CRC", "Crc"); c != nil && c.Note != "" {
		sb.WriteString(", crc " + c.Note)
	}
	return sb.String()
}
