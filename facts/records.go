package facts

import (
	"github.com/kwire/kwire/protocol"
)

// Record batch attribute bits (Kafka protocol guide, "Record Batch";
// KIP-98): the codec in the low three bits, then LogAppendTime,
// transactional and control.
const (
	attrCodec         = 0x07
	attrTransactional = 0x10
	attrControl       = 0x20
)

// Control record types (ControlRecordType.java): 0 ABORT, 1 COMMIT.
const (
	controlAbort  = 0
	controlCommit = 1
)

// v2HeaderLen is a magic 2 batch's header up to its record count, which a
// compressed batch's decompressed space does not hold.
const v2HeaderLen = 61

// summarize reads the RECORDS node rec of tree t: its record batches or
// legacy messages as the decoder built them (protocol/records.go), found
// by their fields' identity (protocol.Batch, protocol.Message). Batches
// the decoder left raw (Decoder.Records off) count as bytes only.
func summarize(t *protocol.Tree, rec *protocol.Node) *Records {
	r := &Records{}
	decoded := false
	for _, c := range rec.Children {
		switch {
		case c.Field == protocol.Batch.Batch:
			decoded = true
			r.Bytes += int64(c.Len)
			r.batch(t, c)
		case c.Field == protocol.Message.Message:
			decoded = true
			r.Bytes += int64(c.Len)
			r.Batches++
			r.legacy(t, c, true, 0)
		case c.Flags&protocol.FlagPartial != 0:
			r.Partial = true
		case c.Flags&protocol.FlagError != 0:
			r.Damaged++
		}
	}
	if !decoded {
		r.Bytes = int64(len(rec.Raw)) // not decoded: the field's bytes
	}
	return r
}

// batch adds a magic 2 record batch.
func (r *Records) batch(t *protocol.Tree, b *protocol.Node) {
	r.Batches++
	r.Magics |= 1 << 2
	var base, last, attrs, count int64
	var hasBase, hasLast, hasCount bool
	var pid, epoch, seq int64 = -1, -1, -1
	var recs *protocol.Node
	for _, c := range b.Children {
		switch c.Field {
		case protocol.Batch.BaseOffset:
			base, hasBase = c.Int, true
		case protocol.Batch.LastOffsetDelta:
			last, hasLast = c.Int, true
		case protocol.Batch.Attributes:
			attrs = c.Int
		case protocol.Batch.ProducerId:
			pid = c.Int
		case protocol.Batch.ProducerEpoch:
			epoch = c.Int
		case protocol.Batch.BaseSequence:
			seq = c.Int
		case protocol.Batch.Crc:
			if c.Flags&protocol.FlagError != 0 {
				r.CRCErrors++
			}
		case protocol.Batch.Records:
			recs = c
		}
	}
	if b.Flags&protocol.FlagError != 0 {
		r.Damaged++
	}
	codec := protocol.Codec(attrs & attrCodec)
	r.Codecs.Add(codec)
	if attrs&attrTransactional != 0 {
		r.Transactional++
	}
	control := attrs&attrControl != 0
	if control {
		r.Control++
	}
	if pid >= 0 && !r.HasProducer {
		r.ProducerID, r.ProducerEpoch, r.BaseSequence, r.HasProducer = pid, int16(epoch), int32(seq), true
		r.ProducerRecords = -1
		if hasLast {
			r.ProducerRecords = int32(last + 1)
		}
	}
	if recs != nil && recs.Kind == protocol.KindArray {
		count, hasCount = max(recs.Int, 0), recs.Int >= 0
		if recs.Flags&protocol.FlagTruncated != 0 {
			// "only N of M records present": count those that are.
			count = 0
			for _, c := range recs.Children {
				if c.Field == protocol.Batch.Records.ElemField() {
					count++
				}
			}
		}
		if recs.Flags&protocol.FlagError != 0 && b.Flags&protocol.FlagError == 0 {
			r.Damaged++
		}
	} else if hasLast {
		count, hasCount = last+1, true
	}
	if hasCount && r.Count >= 0 {
		r.Count += count
	} else if !hasCount {
		r.Count = -1
	}
	if hasBase {
		end := base
		if hasLast {
			end = base + last
		}
		r.offsets(base, end)
	}
	switch {
	case codec == protocol.CodecNone:
		r.Uncompressed += int64(b.Len)
	default:
		if n, ok := inflated(t, b, recs); ok {
			r.Uncompressed += v2HeaderLen + n
		} else {
			r.UnknownSize++
		}
	}
	if control && recs != nil {
		for _, rec := range recs.Children {
			r.controlRecord(rec, pid, int16(epoch), base)
		}
	}
}

// inflated returns the decompressed size of compressed batch b whose
// records recs lie in a space of their own.
func inflated(t *protocol.Tree, b, recs *protocol.Node) (int64, bool) {
	if recs == nil || t == nil {
		return 0, false
	}
	for _, c := range recs.Children {
		if c.Space != b.Space && c.Space > 0 && c.Space < len(t.Spaces) {
			return int64(t.Spaces[c.Space].Size()), true
		}
	}
	return 0, false
}

// controlRecord counts a control record's type (its key's Type) and
// keeps it as a Marker of producer pid, epoch, in a batch at offset base.
func (r *Records) controlRecord(rec *protocol.Node, pid int64, epoch int16, base int64) {
	off := base
	typ := int64(-1)
	for _, c := range rec.Children {
		switch c.Field {
		case protocol.Record.OffsetDelta:
			off = base + c.Int
		case protocol.Record.Key:
			for _, k := range c.Children {
				if k.Field == protocol.Record.ControlType {
					typ = k.Int
				}
			}
		}
	}
	switch typ {
	case controlAbort:
		r.Aborts++
	case controlCommit:
		r.Commits++
	default:
		return
	}
	if len(r.Markers) < MaxMarkers {
		r.Markers = append(r.Markers, Marker{ProducerID: pid, ProducerEpoch: epoch, Offset: off, Commit: typ == controlCommit})
	}
}

// legacy adds a magic 0 or 1 message; a compressed wrapper adds its inner
// messages (top says m is a top-level message, counted as a batch by the
// caller).
func (r *Records) legacy(t *protocol.Tree, m *protocol.Node, top bool, depth int) {
	if depth > 8 {
		return
	}
	var attrs, magic int64
	var set *protocol.Node
	for _, c := range m.Children {
		switch c.Field {
		case protocol.Message.Attributes:
			attrs = c.Int
		case protocol.Message.Magic:
			magic = c.Int
		case protocol.Message.MessageSet:
			set = c
		case protocol.Message.Crc:
			if c.Flags&protocol.FlagError != 0 {
				r.CRCErrors++
			}
		}
	}
	if magic == 0 || magic == 1 {
		// Its own magic: a magic 1 message set read as magics 0 and 1
		// (formats "v0, v1" in --normalize, "magics":[0,1]).
		r.Magics |= 1 << magic
	}
	codec := protocol.Codec(attrs & attrCodec)
	if top {
		r.Codecs.Add(codec)
		if codec == protocol.CodecNone {
			r.Uncompressed += int64(m.Len)
		} else if set != nil && t != nil && set.Space > 0 && set.Space < len(t.Spaces) {
			r.Uncompressed += int64(t.Spaces[set.Space].Size())
		} else {
			r.UnknownSize++
		}
	}
	if set == nil {
		if codec != protocol.CodecNone {
			r.Count = -1 // a wrapper that did not decompress
			if m.Flags&protocol.FlagError != 0 {
				r.Damaged++
			}
			return
		}
		if r.Count >= 0 {
			r.Count++
		}
		if m.Flags&protocol.FlagAbsOffset != 0 {
			r.offsets(m.Int, m.Int)
		}
		return
	}
	for _, c := range set.Children {
		if c.Field == protocol.Message.Message {
			r.legacy(t, c, false, depth+1)
		}
	}
}

// offsets widens the range of record offsets seen to [first, last].
func (r *Records) offsets(first, last int64) {
	if !r.HasOffsets {
		r.FirstOffset, r.LastOffset, r.HasOffsets = first, last, true
		return
	}
	r.FirstOffset = min(r.FirstOffset, first)
	r.LastOffset = max(r.LastOffset, last)
}

// merge adds o, the records of another RECORDS field of the same
// partition, to r.
func (r *Records) merge(o *Records) {
	r.Batches += o.Batches
	if r.Count >= 0 && o.Count >= 0 {
		r.Count += o.Count
	} else {
		r.Count = -1
	}
	r.Bytes += o.Bytes
	r.Uncompressed += o.Uncompressed
	r.UnknownSize += o.UnknownSize
	r.Codecs |= o.Codecs
	r.Magics |= o.Magics
	if o.HasOffsets {
		if r.HasOffsets {
			r.offsets(o.FirstOffset, o.LastOffset)
		} else {
			r.FirstOffset, r.LastOffset, r.HasOffsets = o.FirstOffset, o.LastOffset, true
		}
	}
	r.Partial = r.Partial || o.Partial
	r.Transactional += o.Transactional
	r.Control += o.Control
	r.Commits += o.Commits
	r.Aborts += o.Aborts
	if !r.HasProducer && o.HasProducer {
		r.ProducerID, r.ProducerEpoch, r.BaseSequence, r.HasProducer = o.ProducerID, o.ProducerEpoch, o.BaseSequence, true
		r.ProducerRecords = o.ProducerRecords
	}
	for _, m := range o.Markers {
		if len(r.Markers) < MaxMarkers {
			r.Markers = append(r.Markers, m)
		}
	}
	r.CRCErrors += o.CRCErrors
	r.Damaged += o.Damaged
}
