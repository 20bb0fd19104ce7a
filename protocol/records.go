package protocol

// This file decodes the value of a RECORDS field: a sequence of record
// batches (magic 2; Kafka protocol guide "Record Batch", KIP-98) or of
// legacy messages (magic 0 and 1; protocol guide "Message Sets", KIP-32),
// possibly compressed (codec.go), possibly ending with a partial batch.
//
// Node layout (names are stable; renderers rely on them):
//
//	RecordBatch (KindStruct, magic 2)
//	  BaseOffset int64, BatchLength int32, PartitionLeaderEpoch int32,
//	  Magic int8, Crc uint32 (Note "ok" | "bad: got X, computed Y"),
//	  Attributes int16 (Note "codec=... timestampType=... isTransactional=...
//	  isControl=... hasDeleteHorizon=..."), LastOffsetDelta int32 (Note
//	  "last offset N"), BaseTimestamp int64, MaxTimestamp int64 (Notes
//	  "timestamp MS (RFC3339)"), ProducerId int64, ProducerEpoch int16,
//	  BaseSequence int32,
//	  Records (KindArray, Int = declared count, span = count + payload;
//	      for a compressed batch its children lie in a Space of their own)
//	    [i] Record (KindStruct)
//	      Length varint, Attributes int8, TimestampDelta varlong (Note
//	      "timestamp ..."), OffsetDelta varint (Note "offset N"),
//	      Key bytes, Value bytes (KindBytes, Raw = the data, span includes
//	      the varint length; FlagNull when -1),
//	      Headers (KindArray) [j] Header: Key bytes, Value bytes
//	  In a control batch the record Key (Type "ControlRecordKey") has
//	  children Version int16 and Type int16 (Note "COMMIT", ...); the Value
//	  stays KindBytes with Type set to its data struct and the struct's
//	  fields as children, decoded through the schema table: a COMMIT/ABORT
//	  Value (Type "EndTxnMarker") has Version int16 and CoordinatorEpoch
//	  int32; LeaderChangeMessage, SnapshotHeaderRecord, SnapshotFooterRecord,
//	  KRaftVersionRecord and VotersRecord values have their own fields.
//	Other annotations: "undecoded" (a failure; FlagError) and "leftover"
//	  (bytes past the declared end) KindRaw children; "Compressed" (a
//	  payload that would not decompress; the Records Note says why).
//	Message (KindStruct, magic 0 and 1)
//	  Offset int64, MessageSize int32, Crc uint32, Magic int8,
//	  Attributes int8, Timestamp int64 (magic 1), Key bytes, Value bytes
//	  (int32 lengths), and for a compressed wrapper a last child
//	  MessageSet (KindStruct, in a Space of its own) holding the inner
//	  Messages.
//	a KindRaw tail: "PartialBatch" (FlagPartial, Note "partial batch
//	  (normal)") when the input ends inside a batch, as Fetch responses do.
//
// Problems are annotations (FlagError, FlagTruncated, Note), never a reason
// to stop: the next batch is found from the batch length.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"sync"
	"unsafe"
)

// Record batch v2 header layout (offsets from the batch start).
const (
	v2OffCRC        = 17 // after BaseOffset, BatchLength, PartitionLeaderEpoch, Magic
	v2OffAttributes = 21 // the CRC covers Attributes to the end of the batch
	v2OffCount      = 57
	v2HeaderLen     = 61 // up to and including the record count
	logOverhead     = 12 // BaseOffset (or Offset) int64 + length int32
	magicOff        = 16 // the magic byte sits here in every format
)

// maxLegacyDepth bounds the nesting of compressed legacy wrapper messages.
// Kafka writes one level; a few more tolerate odd producers without letting
// a crafted input recurse without end.
const maxLegacyDepth = 4

// minRecordLen is the smallest record: Length, Attributes, TimestampDelta,
// OffsetDelta, Key length, Value length and Headers count, one byte each.
const minRecordLen = 7

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Control record types: the Type of a control record's key
// (ControlRecordType.java, ControlRecordTypeSchema.json; KIP-98 for the
// transaction markers, KIP-595, KIP-630 and KIP-853 for KRaft). Type 2 was
// named QUORUM_REASSIGNMENT before Kafka 3.0 (KAFKA-12952).
var controlTypes = []string{
	0: "ABORT",
	1: "COMMIT",
	2: "LEADER_CHANGE",
	3: "SNAPSHOT_HEADER",
	4: "SNAPSHOT_FOOTER",
	5: "KRAFT_VERSION",
	6: "KRAFT_VOTERS",
}

// controlValueTypes names the data struct a control record's value holds,
// by control type.
var controlValueTypes = []string{
	0: "EndTxnMarker",
	1: "EndTxnMarker",
	2: "LeaderChangeMessage",
	3: "SnapshotHeaderRecord",
	4: "SnapshotFooterRecord",
	5: "KRaftVersionRecord",
	6: "VotersRecord",
}

// ControlTypeName returns the name of control record type typ ("COMMIT"),
// or "UNKNOWN(typ)".
func ControlTypeName(typ int16) string {
	if typ >= 0 && int(typ) < len(controlTypes) && controlTypes[typ] != "" {
		return controlTypes[typ]
	}
	return fmt.Sprintf("UNKNOWN(%d)", typ)
}

// DecodeRecordBatches decodes b, the bytes of a RECORDS field (record
// batches or a legacy message set), on its own. The Tree's Root is a
// KindRecords node over all of b (space 0, named "records") whose children
// are the batches; decompressed records live in further spaces. Problems
// are annotated on the nodes; Tree.Err stays nil.
func (d *Decoder) DecodeRecordBatches(b []byte) *Tree {
	t := d.newTree(b, "records")
	t.Root = &Node{Name: "Records", Type: "records", Kind: KindRecords, Len: len(b), Raw: b}
	d.decodeRecords(t, t.Root)
	if !d.ShowSecrets && d.Records && metadataLogShape(t.Root) {
		// No topic says whether these are the KRaft metadata log's
		// records: their shape does.
		withholdMetadataRecords(t.Root, 0)
	}
	return t
}

// decodeRecords decodes the record batches (or legacy message sets) held in
// the RECORDS node n, adding them as n's children. n.Raw is the field's
// data, the tail of n's span (which may begin with the field's length) in
// space n.Space. Decompressed bytes are appended to t.Spaces; all of a
// tree's decompressed bytes together are capped by MaxDecompressed, so a
// frame full of small bombs is bounded too. A batch cut short at the end is
// marked partial (normal in Fetch responses; the caller knows the context).
func (d *Decoder) decodeRecords(t *Tree, n *Node) {
	bd, space, off := d.recordsDecoder(t, n)
	if bd == nil {
		return
	}
	bd.set(n, space, off, off+len(n.Raw), 0, nil)
	t.mem.used(bd.slab)
	t.mem.usedPtrs(bd.ptrs)
}

// recordsDecoder returns a batch decoder for the RECORDS node n of t and
// where n's bytes are (space, offset); nil when n is nil or t has no
// spaces.
func (d *Decoder) recordsDecoder(t *Tree, n *Node) (bd *batchDecoder, space, off int) {
	if n == nil || len(t.Spaces) == 0 {
		return nil, 0, 0
	}
	// n's span may start with the field's length; Raw is its tail.
	space, off = n.Space, n.End()-len(n.Raw)
	if space < 0 || space >= len(t.Spaces) || off < n.Off || n.Off < 0 ||
		n.End() > len(t.Spaces[space].Data) ||
		len(n.Raw) > 0 && &t.Spaces[space].Data[off] != &n.Raw[0] {
		// The node does not point at its bytes; decode its Raw in a space of
		// its own rather than guess.
		t.Spaces = append(t.Spaces, Space{Name: "records", Data: n.Raw})
		space, off = len(t.Spaces)-1, 0
	}
	max := d.MaxDecompressed
	if max < 1 {
		max = DefaultMaxDecompressed
	}
	used := int64(0)
	for i := range t.Spaces[1:] {
		used += int64(t.Spaces[1+i].Size())
	}
	return &batchDecoder{d: d, t: t, max: max, budget: max - used}, space, off
}

// batchDecoder holds the state of one decodeRecords call.
// notes reports whether header fields get their informational notes (the
// codec and timestamp type, times, the last offset): not in a sparse
// decode (Decoder.Sparse), whose facts never read notes and whose lines
// show only error notes, which every decode keeps.
func (bd *batchDecoder) notes() bool { return !bd.d.Sparse }

type batchDecoder struct {
	d      *Decoder
	t      *Tree
	r      Reader
	max    int64 // the configured cap
	budget int64 // decompressed bytes the tree may still take
	slab   []Node
	ptrs   []*Node
	note   []byte // scratch for building notes
	// connect counts the Kafka Connect configuration records withheld
	// (connectConfig): a compressed payload that held one is withheld too,
	// as its bytes may carry the record in the clear (literals).
	connect int

	// Record notes: a batch's records mostly share their timestamp (a
	// producer stamps many records in one millisecond), so the last
	// timestamp note is kept and given again for the same instant; the
	// offset notes are carved from arena, one allocation for many.
	tsNote      string
	tsMs, tsMax int64 // the instant and MaxTimestamp tsNote was built for
	tsLogAppend bool  // and whether under LogAppendTime
	tsValid     bool
	arena       []byte
}

// noteArena is the size of the chunks record notes are carved from; a
// decodeRecords call's first chunk is noteArenaFirst, and each next twice
// the last, up to noteArena: most frames of a broker's traffic carry a
// batch of a few records (a record's notes take about 50 bytes), and a
// whole chunk for each was a sixth of the bytes read -V allocated on
// many-250.
const (
	noteArena      = 4 << 10
	noteArenaFirst = 256
)

// noteString returns b as a string whose bytes are carved from bd's arena:
// the arena's bytes are only ever appended to, never written again, so
// the string is immutable as strings must be; a chunk lives as long as
// any note carved from it.
func (bd *batchDecoder) noteString(b []byte) string {
	if len(b) == 0 || len(b) > noteArena/16 {
		return string(b)
	}
	if cap(bd.arena)-len(bd.arena) < len(b) {
		bd.arena = make([]byte, 0, min(max(2*cap(bd.arena), noteArenaFirst), noteArena))
	}
	start := len(bd.arena)
	bd.arena = append(bd.arena, b...)
	return unsafe.String(&bd.arena[start], len(b))
}

// timestampNote is the note of a record's TimestampDelta whose timestamp
// is ms in a batch of context ctx.
func (bd *batchDecoder) timestampNote(ctx recordContext, ms int64) string {
	if bd.tsValid && bd.tsMs == ms && bd.tsLogAppend == ctx.logAppend && (!ctx.logAppend || bd.tsMax == ctx.maxTS) {
		return bd.tsNote
	}
	bd.note = appendTimestamp(append(bd.note[:0], "timestamp "...), ms)
	if ctx.logAppend {
		bd.note = append(bd.note, "; LogAppendTime: the batch's MaxTimestamp "...)
		bd.note = append(appendTimestamp(bd.note, ctx.maxTS), " applies"...)
	}
	bd.tsNote, bd.tsValid = bd.noteString(bd.note), true
	bd.tsMs, bd.tsMax, bd.tsLogAppend = ms, ctx.maxTS, ctx.logAppend
	return bd.tsNote
}

// keepers are the keepers inflate streams through: a decompressor's
// writer escapes, and one from the pool spares a batch an allocation.
var keepers = sync.Pool{New: func() any { return new(keeper) }}

// add appends a copy of v, allocated from a slab, to parent's children.
func (bd *batchDecoder) add(parent *Node, v Node) *Node {
	if len(bd.slab) == cap(bd.slab) {
		bd.slab = bd.t.mem.slab(cap(bd.slab))
	}
	bd.slab = append(bd.slab, v)
	bd.t.nodes++
	bd.t.reserveNode() // a refusal shows at the next full()
	n := &bd.slab[len(bd.slab)-1]
	parent.Children = append(parent.Children, n)
	return n
}

// full reports whether the tree has reached the decoder's node cap
// (Decoder.MaxNodes) or its memory cap (Decoder.MaxMemory): callers then
// leave the rest of their bytes raw (fullError says why).
func (bd *batchDecoder) full() bool {
	switch {
	case bd.t.nodes >= bd.d.maxNodes():
		bd.t.Limits |= LimitNodes
	case bd.t.mem.denied:
		bd.t.Limits |= LimitMemory
	default:
		return false
	}
	return true
}

// fullError is why full is true.
func (bd *batchDecoder) fullError() error {
	if bd.t.nodes >= bd.d.maxNodes() {
		return nodeLimitError{bd.d.maxNodes()}
	}
	return memoryLimitError{bd.t.mem.limit}
}

// children returns an empty child slice of capacity n carved from a shared
// chunk; appending past n reallocates as usual.
func (bd *batchDecoder) children(n int) []*Node {
	if n > 64 {
		bd.t.mem.reserve(8 * int64(n))
		return make([]*Node, 0, n)
	}
	if cap(bd.ptrs)-len(bd.ptrs) < n {
		bd.t.mem.usedPtrs(bd.ptrs)
		bd.ptrs = bd.t.mem.ptrChunk(cap(bd.ptrs), n)
	}
	l := len(bd.ptrs)
	bd.ptrs = bd.ptrs[:l+n]
	return bd.ptrs[l : l : l+n]
}

// wrapper describes the compressed legacy message an inner message set
// came from.
type wrapper struct {
	offset     int64 // the wrapper's offset: the last inner message's absolute offset
	magic      int8
	lastInner  int64 // the last inner message's offset as written
	logAppend  bool  // the wrapper says LogAppendTime: its timestamp applies
	timestamp  int64
	hasLastOff bool
}

// set decodes batches or messages in [off, end) of space, appending them to
// parent. depth counts enclosing compressed legacy wrappers (w, when not nil,
// is the innermost).
func (bd *batchDecoder) set(parent *Node, space, off, end, depth int, w *wrapper) {
	data := bd.t.Spaces[space].Data
	for off < end {
		if bd.full() {
			bd.raw(parent, nameUndecoded, space, off, end, FlagError, bd.fullError().Error())
			return
		}
		left := end - off
		size := int64(-1)
		if left >= logOverhead {
			size = int64(int32(binary.BigEndian.Uint32(data[off+8:])))
		}
		switch {
		case left >= logOverhead && size < 0:
			bd.raw(parent, "Invalid", space, off, end, FlagError,
				fmt.Sprintf("negative batch length %d", size))
			return
		case left < logOverhead || logOverhead+size > int64(left):
			if w == nil {
				bd.partial(parent, space, off, end, size)
			} else {
				bd.raw(parent, "Truncated", space, off, end, FlagTruncated|FlagError,
					fmt.Sprintf("message cut short: %d of %d bytes", left, logOverhead+max(size, 0)))
			}
			return
		case size < magicOff-logOverhead+1:
			bd.raw(parent, "Invalid", space, off, off+logOverhead+int(size), FlagError,
				fmt.Sprintf("batch length %d leaves no room for the magic byte", size))
			off += logOverhead + int(size)
			continue
		}
		total := logOverhead + int(size)
		switch magic := int8(data[off+magicOff]); magic {
		case 2:
			if w != nil {
				bd.raw(parent, "UnexpectedRecordBatch", space, off, off+total, FlagError,
					"record batch (magic 2) inside a legacy message set")
			} else {
				bd.batchV2(parent, space, off, total)
			}
		case 0, 1:
			bd.legacy(parent, space, off, total, depth, w)
		default:
			bd.raw(parent, "UnknownBatch", space, off, off+total, FlagError|FlagUnknown,
				fmt.Sprintf("unknown magic %d", magic))
		}
		off += total
	}
}

// partial appends the partial batch that ends a fetch's records, over [off,
// end) of space: size is the batch length its header claims (-1 when its
// first 12 bytes are not all there). Its records are cut short, so
// whether they hold credentials (a Kafka Connect configuration record, a
// KRaft metadata record's SCRAM credential) cannot be told from them:
// its bytes are withheld unless ShowSecrets, and the note says what of
// the batch is there.
func (bd *batchDecoder) partial(parent *Node, space, off, end int, size int64) {
	note := "partial batch (normal)"
	if size >= 0 {
		data := bd.t.Spaces[space].Data
		note = fmt.Sprintf("partial batch (normal): %d of %d bytes, base offset %d",
			end-off, logOverhead+size, int64(binary.BigEndian.Uint64(data[off:])))
	}
	n := bd.raw(parent, "PartialBatch", space, off, end, FlagPartial, note)
	if !bd.d.ShowSecrets && end > off {
		withhold(n)
		n.Note = joinNote(n.Note, "withheld: records cut short cannot be told free of credentials (--show-secrets shows them)")
	}
}

// raw appends a KindRaw node over [off, end) of space (its Raw the bytes
// kept of them: up to the first omitted one).
func (bd *batchDecoder) raw(parent *Node, name string, space, off, end int, f Flags, note string) *Node {
	n := bd.add(parent, Node{Name: name, Type: "bytes", Kind: KindRaw, Flags: f, Space: space, Off: off, Len: end - off,
		Raw: bd.t.Spaces[space].Kept(off, end), Note: note})
	if f&FlagError != 0 && !bd.d.ShowSecrets {
		// Bytes a failure left undecoded may be records all the same (a
		// count too low leaves them over), of a store that holds
		// credentials (Kafka Connect's configs, the KRaft metadata log):
		// withheld as every span kwire failed to decode is, and as a
		// fetch's partial batch at the end is (partial).
		withhold(n)
		n.Note = joinNote(n.Note, "withheld: bytes not decoded may hold credentials")
	}
	return n
}

// num appends a KindInt node holding v over [off, r.Offset()) of space
// unless the reader has failed; it returns the node or nil.
func (bd *batchDecoder) num(parent *Node, f *Field, space, off int, v int64) *Node {
	if bd.r.Err() != nil {
		return nil
	}
	return bd.add(parent, Node{Name: f.Name, Type: f.Type, Kind: KindInt, Field: f, Space: space, Off: off, Len: bd.r.Offset() - off, Int: v})
}

// pos returns the reader's offset, or where it failed: a container's end
// after a failure inside it, so that it never overlaps the undecoded node.
func (bd *batchDecoder) pos() int {
	if bd.r.Err() != nil {
		return bd.r.ErrOffset()
	}
	return bd.r.Offset()
}

// fail annotates n with the reader's failure and covers the bytes from the
// failure to end with an "undecoded" raw child.
func (bd *batchDecoder) fail(n *Node, space, end int) {
	err, at := bd.r.Err(), bd.r.ErrOffset()
	n.Flags |= FlagError
	n.Note = joinNote(n.Note, fmt.Sprintf("%v at %#x", err, at))
	if at < end && at >= n.Off {
		bd.raw(n, nameUndecoded, space, at, end, FlagError, "")
	}
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// batchV2 decodes the magic 2 batch [off, off+total) of space.
func (bd *batchDecoder) batchV2(parent *Node, space, off, total int) {
	data := bd.t.Spaces[space].Data
	end := off + total
	b := bd.add(parent, Node{Name: "RecordBatch", Type: "RecordBatch", Kind: KindStruct, Field: Batch.Batch, Space: space, Off: off, Len: total})
	b.Children = bd.children(13)
	r := &bd.r
	r.Reset(data, off, end)

	o := r.Offset()
	baseOffset := r.Int64()
	bd.num(b, Batch.BaseOffset, space, o, baseOffset)
	o = r.Offset()
	bd.num(b, Batch.BatchLength, space, o, int64(r.Int32()))
	o = r.Offset()
	bd.num(b, Batch.PartitionLeaderEpoch, space, o, int64(r.Int32()))
	o = r.Offset()
	bd.num(b, Batch.Magic, space, o, int64(r.Int8()))
	o = r.Offset()
	crcStored := r.Uint32()
	if c := bd.num(b, Batch.Crc, space, o, int64(crcStored)); c != nil {
		noteCRC(c, crcStored, crc32.Checksum(data[off+v2OffAttributes:end], castagnoli))
	}
	o = r.Offset()
	attrs := r.Int16()
	codec := Codec(attrs & 0x07)
	logAppend := attrs&0x08 != 0
	control := attrs&0x20 != 0
	horizon := attrs&0x40 != 0
	if a := bd.num(b, Batch.Attributes, space, o, int64(attrs)); a != nil && bd.notes() {
		a.Note = batchAttributesNote(attrs)
	}
	o = r.Offset()
	lastDelta := r.Int32()
	if n := bd.num(b, Batch.LastOffsetDelta, space, o, int64(lastDelta)); n != nil && bd.notes() {
		n.Note = fmt.Sprintf("last offset %d", baseOffset+int64(lastDelta))
	}
	o = r.Offset()
	baseTS := r.Int64()
	if n := bd.num(b, Batch.BaseTimestamp, space, o, baseTS); n != nil && bd.notes() {
		n.Note = FormatTimestamp(baseTS)
		if horizon {
			n.Note = "delete horizon " + n.Note
		}
	}
	o = r.Offset()
	maxTS := r.Int64()
	if n := bd.num(b, Batch.MaxTimestamp, space, o, maxTS); n != nil && bd.notes() {
		n.Note = FormatTimestamp(maxTS)
	}
	o = r.Offset()
	bd.num(b, Batch.ProducerId, space, o, r.Int64())
	o = r.Offset()
	bd.num(b, Batch.ProducerEpoch, space, o, int64(r.Int16()))
	o = r.Offset()
	bd.num(b, Batch.BaseSequence, space, o, int64(r.Int32()))
	o = r.Offset()
	count := r.Int32()
	if r.Err() != nil {
		b.Note = fmt.Sprintf("batch length %d is below the %d-byte header", total-logOverhead, v2HeaderLen-logOverhead)
		bd.fail(b, space, end)
		return
	}
	recs := bd.add(b, Node{Name: "Records", Type: "[]Record", Kind: KindArray, Field: Batch.Records, Space: space, Off: o, Len: end - o, Int: int64(count)})
	if count < 0 {
		recs.Flags |= FlagError
		recs.Note = fmt.Sprintf("negative record count %d", count)
		bd.raw(recs, nameUndecoded, space, off+v2HeaderLen, end, FlagError, "")
		return
	}
	if bd.d.BatchHeadersOnly {
		// Records not decoded: a count that the records' bytes cannot
		// hold (uncompressed, each record takes at least minRecordLen
		// bytes) is still an error, not a count to show.
		if have := int64(end - (off + v2HeaderLen)); codec == CodecNone && int64(count) > have/minRecordLen {
			recs.Flags |= FlagError
			recs.Note = fmt.Sprintf("record count %d does not fit the %d bytes of records (each takes at least %d)", count, have, minRecordLen)
		}
		return
	}
	ctx := recordContext{baseOffset: baseOffset, baseTS: baseTS, maxTS: maxTS, logAppend: logAppend, control: control}
	payload := data[off+v2HeaderLen : end]
	if codec == CodecNone {
		bd.records(recs, space, off+v2HeaderLen, end, int(count), ctx)
		return
	}
	// A control batch's values are decoded through the schema table:
	// kept whole.
	inner, ok := bd.inflate(recs, codec, payload, 2, space, off+v2HeaderLen, "records of batch", off, int64(count), control)
	if !ok {
		return
	}
	before := bd.connect
	bd.records(recs, inner, 0, bd.t.Spaces[inner].Size(), int(count), ctx)
	if note := bd.payloadWithheld(recs, recs, before); note != "" {
		recs.Flags |= FlagRedacted // its compressed bytes; the records stay shown as decoded
		recs.Note = joinNote(recs.Note, note)
	}
}

// payloadWithheld says why the compressed bytes that decoded is decoded
// from (a batch's records, a legacy wrapper message's message set, in
// another space) are to be withheld, or "" when they may be shown: a
// codec's literals carry the records' bytes as they are, so the
// compressed bytes are shown only when every record they hold was decoded
// and checked, none withheld: no Kafka Connect configuration record
// (withheld, or maybe one: counted since before), no failure or cut
// (noted, inflate's node, marked an error: the decompression cap, a
// stream cut short), no span left undecoded, no record cut short.
func (bd *batchDecoder) payloadWithheld(noted, decoded *Node, before int) string {
	switch {
	case bd.d.ShowSecrets:
		return ""
	case bd.connect > before:
		return "compressed bytes withheld: they hold a Kafka Connect configuration record"
	case noted.Flags&(FlagError|FlagTruncated) != 0 || !decodedWhole(decoded, 0):
		return "compressed bytes withheld: what they hold was not all decoded, so it cannot be told free of credentials"
	}
	return ""
}

// decodedWhole reports whether nothing under n failed, was cut short or
// was left undecoded.
func decodedWhole(n *Node, depth int) bool {
	if n.Kind == KindRaw || n.Flags&(FlagError|FlagTruncated) != 0 || depth > 4*maxDepth {
		return false
	}
	for _, c := range n.Children {
		if !decodedWhole(c, depth+1) {
			return false
		}
	}
	return true
}

// inflate decompresses payload (at payOff in space) for node n, appending
// the result as a new space named like "gzip-decompressed records of batch
// at 0x1f4": of a magic 2 batch of count records, what Decoder.KeepValue
// keeps of it (whole, for a control batch or a legacy message set); up to
// what is left of the frame's decompression cap and its memory. It notes on
// n what happened: the sizes, and for a stream cut short why and how far it
// got (a decompression bomb: past the cap, with the size the codec's own
// header or trailer claims), marking n an error then. It returns the new
// space and true when there is one to decode (a stream cut short keeps
// what came before the cut). When nothing could be inflated (corrupt data,
// no memory) it covers the payload with a raw child when n is a batch's
// Records node and returns false.
func (bd *batchDecoder) inflate(n *Node, codec Codec, payload []byte, magic int8, space, payOff int, what string, at int, count int64, whole bool) (int, bool) {
	fail := func(note string) (int, bool) {
		n.Flags |= FlagError
		n.Note = joinNote(n.Note, note)
		if n.Kind == KindArray {
			// A batch's Records node has no child over its payload yet; a
			// legacy message's Value node already holds it.
			bd.raw(n, "Compressed", space, payOff, payOff+len(payload), FlagError, codec.String()+" data")
		}
		return 0, false
	}
	m := &bd.t.mem
	if bd.budget < 1 {
		bd.t.Limits |= LimitDecompressed
		return fail(fmt.Sprintf("%v (all batches of this frame together; none was left): not decompressed", capError{bd.max}))
	}
	if codec > CodecZstd || codec < CodecNone {
		return fail(fmt.Sprintf("%v %d", ErrUnknownCodec, int8(codec)))
	}
	if !m.reserve(spaceCost) {
		bd.t.Limits |= LimitMemory
		return fail("not decompressed: " + memoryLimitError{m.limit}.Error())
	}
	k := keepers.Get().(*keeper)
	k.reset(m, bd.budget, bd.d.KeepValue, count, whole || magic < 2, sizeHint(codec, payload),
		int64(bd.t.nodes), int64(bd.d.maxNodes()))
	detail, cl, err := inflate(codec, payload, magic, k)
	data, omit := k.finish()
	size, resv, stop := k.size(), k.resv, k.stop
	*k = keeper{}
	keepers.Put(k)
	left := bd.budget
	if err != nil && stop == nil || size == 0 && err != nil {
		// Corrupt, or nothing inflated at all: no space.
		putBuf(data)
		m.unreserve(int64(resv) + spaceCost)
		var ce capError
		switch {
		case errors.As(err, &ce):
			bd.t.Limits |= LimitDecompressed
			return fail(bd.bombNote(codec, len(payload), 0, left, cl))
		case errors.Is(err, ErrMemory):
			bd.t.Limits |= LimitMemory
			return fail(fmt.Sprintf("%s: not decompressed: %v", codec, err))
		case errors.Is(err, ErrTooManyNodes):
			bd.t.Limits |= LimitNodes
			return fail(fmt.Sprintf("%s: not decompressed: %v", codec, err))
		}
		return fail(err.Error())
	}
	m.keep(data)
	bd.budget -= int64(size)
	bd.t.Spaces = append(bd.t.Spaces, Space{
		Name:    fmt.Sprintf("%s-decompressed %s at %#x", codec, what, at),
		Data:    data,
		Omitted: omit,
	})
	inner := len(bd.t.Spaces) - 1
	var note string
	var ce capError
	switch {
	case err == nil:
		note = fmt.Sprintf("%s: %d bytes decompressed to %d", codec, len(payload), size)
		if detail != "" {
			note += " (" + detail + ")"
		}
	case errors.As(err, &ce):
		bd.t.Limits |= LimitDecompressed
		note = bd.bombNote(codec, len(payload), size, left, cl)
	default: // the memory or the node cap: the records so far are decoded
		if errors.Is(err, ErrTooManyNodes) {
			bd.t.Limits |= LimitNodes
		} else {
			bd.t.Limits |= LimitMemory
		}
		note = fmt.Sprintf("%s: decompression stopped after %d bytes: %v", codec, size, err)
	}
	if err != nil {
		n.Flags |= FlagError
	}
	n.Note = joinNote(n.Note, note)
	return inner, true
}

// bombNote says that payload bytes of codec inflate past the cap, of
// which left bytes were left for them, how far they got (reached bytes,
// 0: not decompressed at all), and what their codec claimed.
func (bd *batchDecoder) bombNote(codec Codec, payload, reached int, left int64, cl claim) string {
	where := ""
	if left < bd.max {
		where = fmt.Sprintf(" for all batches of this frame together (%d bytes were left)", max(left, 0))
	}
	s := fmt.Sprintf("decompression bomb: %s data of %d bytes inflates past the %s cap on a frame's decompressed bytes%s", codec, payload, FormatSize(bd.max), where)
	if reached > 0 {
		s += fmt.Sprintf("; only its first %d bytes decoded", reached)
	} else {
		s += "; not decompressed"
	}
	if cl.size >= 0 {
		s += fmt.Sprintf("; %s %d bytes", cl.what, cl.size)
	}
	return s
}

// batchAttributesNote describes a v2 batch's attributes.
func batchAttributesNote(a int16) string {
	ts := "CreateTime"
	if a&0x08 != 0 {
		ts = "LogAppendTime"
	}
	s := fmt.Sprintf("codec=%s timestampType=%s isTransactional=%t isControl=%t hasDeleteHorizon=%t",
		Codec(a&0x07), ts, a&0x10 != 0, a&0x20 != 0, a&0x40 != 0)
	if extra := uint16(a) &^ 0x7f; extra != 0 {
		s += fmt.Sprintf(" unknownBits=0x%04x", extra)
	}
	return s
}

// FormatTimestamp renders a Kafka timestamp, milliseconds since the Unix
// epoch, as "1700000000000 (2023-11-14T22:13:20.000Z)"; -1 (no timestamp)
// as "-1 (none)".
func FormatTimestamp(ms int64) string {
	return string(appendTimestamp(nil, ms))
}

// appendTimestamp appends FormatTimestamp(ms) to b.
func appendTimestamp(b []byte, ms int64) []byte {
	b = strconv.AppendInt(b, ms, 10)
	if ms == -1 {
		return append(b, " (none)"...)
	}
	b = append(b, " ("...)
	b = AppendMillisUTC(b, ms)
	return append(b, ')')
}

// recordContext is what a record needs from its batch.
type recordContext struct {
	baseOffset, baseTS, maxTS int64
	logAppend, control        bool
}

// records decodes count records in [off, end) of space into recs.
func (bd *batchDecoder) records(recs *Node, space, off, end, count int, ctx recordContext) {
	sp := &bd.t.Spaces[space]
	r := &bd.r
	// As many records as the bytes kept can hold, at most (a lying count
	// costs nothing), and no more than the node cap allows.
	n := min(count, len(sp.Data)/minRecordLen, (end-off)/minRecordLen, bd.d.maxNodes()/recordNodes)
	bd.t.mem.reserve(8 * int64(n))
	recs.Children = make([]*Node, 0, n)
	r.ResetSpace(sp, off, end)
	for i := 0; i < count; i++ {
		if bd.full() && off < end {
			recs.Flags |= FlagError
			recs.Note = joinNote(recs.Note, fmt.Sprintf("records %d to %d not decoded: %v", i, count-1, bd.fullError()))
			bd.raw(recs, nameUndecoded, space, off, end, FlagError, "")
			return
		}
		if off >= end {
			recs.Flags |= FlagTruncated | FlagError
			recs.Note = joinNote(recs.Note, fmt.Sprintf("only %d of %d records present", i, count))
			return
		}
		r.Restart(off, end)
		off = bd.record(recs, space, i, end, ctx)
	}
	if off < end {
		bd.raw(recs, nameLeftover, space, off, end, FlagError,
			fmt.Sprintf("%d bytes after the last of %d records", end-off, count))
	}
}

// record decodes record i at the reader's offset, limited to end, and
// returns the offset just past it.
func (bd *batchDecoder) record(recs *Node, space, i, end int, ctx recordContext) int {
	r := &bd.r
	start := r.Offset()
	rec := bd.add(recs, Node{Name: indexName(i), Type: "Record", Kind: KindStruct, Field: Batch.Records.elem, Space: space, Off: start,
		Flags: FlagAbsOffset, Int: ctx.baseOffset})
	rec.Children = bd.children(7)
	length := r.Varint()
	bd.num(rec, Record.Length, space, start, int64(length))
	if r.Err() != nil {
		rec.Len = end - start
		bd.fail(rec, space, end)
		return end
	}
	body := r.Offset()
	if length < 0 || int64(length) > int64(end-body) {
		rec.Len = end - start
		rec.Flags |= FlagTruncated | FlagError
		rec.Note = fmt.Sprintf("record length %d exceeds the %d bytes left", length, end-body)
		bd.raw(rec, nameUndecoded, space, body, end, FlagError, "")
		return end
	}
	recEnd := body + int(length)
	rec.Len = recEnd - start
	r.SetEnd(recEnd)

	o := r.Offset()
	bd.num(rec, Record.Attributes, space, o, int64(r.Int8()))
	o = r.Offset()
	tsDelta := r.Varlong()
	if n := bd.num(rec, Record.TimestampDelta, space, o, tsDelta); n != nil {
		n.Note = bd.timestampNote(ctx, ctx.baseTS+tsDelta)
	}
	o = r.Offset()
	offDelta := r.Varint()
	if n := bd.num(rec, Record.OffsetDelta, space, o, int64(offDelta)); n != nil {
		rec.Int = ctx.baseOffset + int64(offDelta)
		bd.note = strconv.AppendInt(append(bd.note[:0], "offset "...), ctx.baseOffset+int64(offDelta), 10)
		n.Note = bd.noteString(bd.note)
	}
	key := bd.varBytes(rec, Record.Key, space)
	value := bd.varBytes(rec, Record.Value, space)
	if ctx.control && key != nil && value != nil {
		bd.control(key, value)
	}
	bd.connectConfig(key, value)
	o = r.Offset()
	nh := r.Varint()
	switch {
	case r.Err() != nil:
	case nh < 0:
		r.Fail(o, &negativeError{n: int64(nh)})
	case int64(nh)*2 > int64(r.Remaining()): // a header is at least 2 bytes
		r.Fail(o, &lengthError{what: "header count", n: int64(nh), need: int64(nh) * 2, left: r.Remaining(), isMinBytes: true})
	default:
		hs := bd.add(rec, Node{Name: "Headers", Type: "[]Header", Kind: KindArray, Field: Record.Headers, Space: space, Off: o, Int: int64(nh)})
		hs.Children = bd.children(int(nh))
		for j := 0; j < int(nh) && r.Err() == nil; j++ {
			if bd.full() {
				r.Fail(r.Offset(), nodeLimitError{bd.d.maxNodes()})
				break
			}
			h := bd.add(hs, Node{Name: indexName(j), Type: "Header", Kind: KindStruct, Field: Record.Headers.elem, Space: space, Off: r.Offset()})
			h.Children = bd.children(2)
			if k := bd.varBytes(h, Record.HeaderKey, space); k != nil && k.Flags&FlagNull != 0 {
				k.Flags |= FlagLenient
				k.Note = "null header key (Kafka rejects it)"
			}
			bd.varBytes(h, Record.HeaderValue, space)
			h.Len = bd.pos() - h.Off
		}
		hs.Len = bd.pos() - o
	}
	if r.Err() != nil {
		bd.fail(rec, space, recEnd)
		return recEnd
	}
	if r.Offset() < recEnd {
		bd.raw(rec, nameLeftover, space, r.Offset(), recEnd, FlagError,
			fmt.Sprintf("%d bytes after the headers, inside the record length", recEnd-r.Offset()))
	}
	return recEnd
}

// connectConfig withholds value when key and value are those of a Kafka
// Connect configuration record (connectConfigRecord), unless ShowSecrets,
// or may be: values inflated from a compressed batch are kept only in
// part (Decoder.KeepValue), and a key that is or may be Connect's with a
// value not all kept cannot be told apart.
func (bd *batchDecoder) connectConfig(key, value *Node) {
	if bd.d.ShowSecrets || key == nil || value == nil || key.Flags&FlagNull != 0 {
		return
	}
	note := "withheld: a Kafka Connect configuration record (connector and task configs hold credentials; --show-secrets shows it)"
	switch {
	case connectConfigRecord(key.Raw, value.Raw):
	case (key.Flags|value.Flags)&FlagOmitted != 0 && value.Flags&FlagNull == 0 &&
		maybeConnectKey(key.Raw, key.Flags&FlagOmitted == 0):
		note = "withheld: maybe a Kafka Connect configuration record (its key is Connect's and its value, not all kept, cannot be checked; --show-secrets shows it)"
	default:
		return
	}
	withhold(value)
	value.Note = joinNote(value.Note, note)
	bd.connect++
}

// varBytes reads a varint-length byte string (-1 for null) as a KindBytes
// child of parent; the node's span includes the length.
func (bd *batchDecoder) varBytes(parent *Node, f *Field, space int) *Node {
	r := &bd.r
	o := r.Offset()
	n := r.Varint()
	var raw []byte
	omitted := 0
	switch {
	case n < -1:
		r.Fail(o, &negativeError{n: int64(n)})
	case n >= 0:
		raw, omitted = r.SpanKept(int(n))
	}
	node := bd.bytesNode(parent, f, space, o, raw, n == -1)
	if node != nil && omitted > 0 {
		node.Flags |= FlagOmitted
	}
	return node
}

// control decodes a control record's key (version int16, type int16) as
// children of the Key node and, for the types whose value is a known data
// struct, its value (version int16, then the struct: EndTxnMarker for
// COMMIT and ABORT, LeaderChangeMessage, SnapshotHeaderRecord, ...) as
// children of the Value node, through the schema table.
func (bd *batchDecoder) control(key, value *Node) {
	if key.Flags&FlagNull != 0 {
		key.Flags |= FlagError
		key.Note = "control record without a key"
		return
	}
	if (key.Flags|value.Flags)&FlagOmitted != 0 {
		key.Note = "control record: not decoded (bytes not kept)"
		return
	}
	var kr Reader
	dataOff := key.End() - len(key.Raw)
	kr.ResetSpace(&bd.t.Spaces[key.Space], dataOff, key.End())
	kv := kr.Int16()
	typ := kr.Int16()
	if kr.Err() != nil {
		key.Flags |= FlagError
		key.Note = fmt.Sprintf("control key of %d bytes, want 4 (version int16, type int16)", len(key.Raw))
		return
	}
	key.Type = "ControlRecordKey"
	key.Children = bd.children(2)
	bd.add(key, Node{Name: "Version", Type: "int16", Kind: KindInt, Field: Record.ControlVersion, Space: key.Space, Off: dataOff, Len: 2, Int: int64(kv)})
	bd.add(key, Node{Name: "Type", Type: "int16", Kind: KindInt, Field: Record.ControlType, Space: key.Space, Off: dataOff + 2, Len: 2, Int: int64(typ),
		Note: ControlTypeName(typ)})
	key.Note = "control record " + ControlTypeName(typ)
	if kr.Remaining() > 0 {
		key.Note += fmt.Sprintf("; %d bytes after the type (a newer key version?)", kr.Remaining())
	}
	vt := ""
	if typ >= 0 && int(typ) < len(controlValueTypes) {
		vt = controlValueTypes[typ]
	}
	if value.Flags&FlagNull != 0 || vt == "" {
		return
	}
	value.Type = vt
	vOff := value.End() - len(value.Raw)
	var vr Reader
	vr.ResetSpace(&bd.t.Spaces[value.Space], vOff, value.End())
	ver := vr.Int16()
	if vr.Err() != nil {
		value.Flags |= FlagError
		value.Note = fmt.Sprintf("%s value of %d bytes, want a 2-byte version first", vt, len(value.Raw))
		return
	}
	value.Note = fmt.Sprintf("%s v%d", vt, ver)
	value.Ver = ver
	value.Children = bd.children(4)
	// An end transaction marker is a version followed by the EndTxnMarker
	// struct (EndTransactionMarker.java); the KRaft control values are
	// structs whose first field is their Version (ControlRecordUtils.java).
	body, bodyOff := value.Raw, vOff
	if vt == "EndTxnMarker" {
		bd.add(value, Node{Name: "Version", Type: "int16", Kind: KindInt, Field: Record.ValueVersion, Space: value.Space, Off: vOff, Len: 2, Int: int64(ver)})
		body, bodyOff = value.Raw[2:], vOff+2
	}
	if LookupName(vt, ver) != nil {
		st := bd.d.DecodeStruct(vt, ver, body)
		bd.t.nodes += st.nodes
		bd.t.mem.absorb(&st.mem)
		for _, c := range st.Root.Children {
			rebase(c, value.Space, bodyOff)
			value.Children = append(value.Children, c)
		}
		if st.Err != nil {
			value.Flags |= FlagError
			value.Note += "; " + st.Err.Error()
		}
		return
	}
	if vt != "EndTxnMarker" {
		value.Note += " (version not in the schema table)"
		return
	}
	// EndTxnMarker v0 is one int32; decode it even without a schema table.
	epoch := vr.Int32()
	if vr.Err() != nil {
		value.Flags |= FlagError
		value.Note += fmt.Sprintf("; %d bytes, want 6 (version int16, coordinatorEpoch int32)", len(value.Raw))
		return
	}
	bd.add(value, Node{Name: "CoordinatorEpoch", Type: "int32", Kind: KindInt, Space: value.Space, Off: vOff + 2, Len: 4, Int: int64(epoch)})
	if vr.Remaining() > 0 {
		value.Note += fmt.Sprintf("; %d bytes after CoordinatorEpoch", vr.Remaining())
	}
}

// rebase moves a node decoded from a sub-slice (space 0 of its own tree) to
// offset delta of space.
func rebase(n *Node, space, delta int) {
	n.Space = space
	n.Off += delta
	for _, c := range n.Children {
		rebase(c, space, delta)
	}
}

// legacy decodes the magic 0 or 1 message [off, off+total) of space.
func (bd *batchDecoder) legacy(parent *Node, space, off, total, depth int, w *wrapper) {
	data := bd.t.Spaces[space].Data
	end := off + total
	m := bd.add(parent, Node{Name: "Message", Type: "Message", Kind: KindStruct, Field: Message.Message, Space: space, Off: off, Len: total})
	r := &bd.r
	r.Reset(data, off, end)

	o := r.Offset()
	offset := r.Int64()
	if n := bd.num(m, Message.Offset, space, o, offset); n != nil {
		switch {
		case w == nil || w.magic == 0:
			// Top-level offsets, and those inside a magic 0 wrapper, are absolute.
			m.Flags |= FlagAbsOffset
			m.Int = offset
		case w.hasLastOff:
			// Inner offsets of a magic 1 wrapper are relative; the wrapper
			// carries the last inner message's absolute offset (KIP-31).
			m.Flags |= FlagAbsOffset
			m.Int = w.offset - w.lastInner + offset
			if bd.notes() {
				n.Note = fmt.Sprintf("relative; offset %d", m.Int)
			}
		case bd.notes():
			n.Note = "relative"
		}
	}
	o = r.Offset()
	bd.num(m, Message.MessageSize, space, o, int64(r.Int32()))
	o = r.Offset()
	crcStored := r.Uint32()
	if c := bd.num(m, Message.Crc, space, o, int64(crcStored)); c != nil {
		noteCRC(c, crcStored, crc32.ChecksumIEEE(data[off+magicOff:end]))
	}
	o = r.Offset()
	magic := r.Int8()
	bd.num(m, Message.Magic, space, o, int64(magic))
	o = r.Offset()
	attrs := r.Int8()
	codec := Codec(attrs & 0x07)
	logAppend := magic >= 1 && attrs&0x08 != 0
	if a := bd.num(m, Message.Attributes, space, o, int64(attrs)); a != nil && bd.notes() {
		a.Note = "codec=" + codec.String()
		if magic >= 1 {
			ts := "CreateTime"
			if logAppend {
				ts = "LogAppendTime"
			}
			a.Note += " timestampType=" + ts
		}
		if extra := uint8(attrs) &^ 0x0f; extra != 0 {
			a.Note += fmt.Sprintf(" unknownBits=0x%02x", extra)
		}
	}
	ts := int64(-1)
	if magic >= 1 {
		o = r.Offset()
		ts = r.Int64()
		if n := bd.num(m, Message.Timestamp, space, o, ts); n != nil && bd.notes() {
			// A message's timestamp is absolute: its note is its date, as
			// a batch's BaseTimestamp's ("1700000000000 (date)", which a
			// tree shows after the value as "(date)").
			n.Note = FormatTimestamp(ts)
			if w != nil && w.logAppend {
				date := "none"
				if ts != -1 {
					date = string(AppendMillisUTC(nil, ts))
				}
				n.Note = date + "; LogAppendTime: the wrapper's timestamp " + FormatTimestamp(w.timestamp) + " applies"
			}
		}
	}
	key := bd.int32Bytes(m, Message.Key, space)
	value := bd.int32Bytes(m, Message.Value, space)
	if r.Err() != nil {
		bd.fail(m, space, end)
		return
	}
	if codec == CodecNone {
		bd.connectConfig(key, value)
	}
	if r.Offset() < end {
		bd.raw(m, nameLeftover, space, r.Offset(), end, FlagError,
			fmt.Sprintf("%d bytes after the value, inside the message size", end-r.Offset()))
	}
	if codec == CodecNone {
		return
	}
	if codec > CodecLZ4 {
		m.Flags |= FlagError
		m.Note = joinNote(m.Note, fmt.Sprintf("%v %d for magic %d", ErrUnknownCodec, codec, magic))
		bd.withholdUndecoded(value)
		return
	}
	if value.Flags&FlagNull != 0 {
		m.Flags |= FlagError
		m.Note = joinNote(m.Note, "compressed wrapper message with a null value")
		return
	}
	if depth >= maxLegacyDepth {
		m.Flags |= FlagError
		m.Note = joinNote(m.Note, fmt.Sprintf("%v: compressed messages nested more than %d deep", ErrTooDeep, maxLegacyDepth))
		bd.withholdUndecoded(value)
		return
	}
	valOff := value.End() - len(value.Raw)
	inner, ok := bd.inflate(m, codec, value.Raw, magic, space, valOff, "message set of message", off, 0, true)
	if !ok {
		bd.withholdUndecoded(value)
		return
	}
	innerData := bd.t.Spaces[inner].Data
	set := bd.add(m, Node{Name: "MessageSet", Type: "MessageSet", Kind: KindStruct, Field: Message.MessageSet, Space: inner, Len: len(innerData)})
	iw := &wrapper{offset: offset, magic: magic, logAppend: logAppend, timestamp: ts}
	iw.lastInner, iw.hasLastOff = lastOffset(innerData)
	before := bd.connect
	bd.set(set, inner, 0, len(innerData), depth+1, iw)
	if note := bd.payloadWithheld(m, set, before); note != "" {
		// The wrapper's value is the compressed message set.
		withhold(value)
		value.Note = joinNote(value.Note, note)
	}
}

// withholdUndecoded withholds value, the compressed message set of a
// legacy wrapper message that was not decompressed (an unknown codec,
// nested too deep, corrupt data): bytes not decoded may hold credentials
// as every such span may, and a codec's literals carry them as they are.
func (bd *batchDecoder) withholdUndecoded(value *Node) {
	if !bd.d.ShowSecrets {
		withhold(value)
		value.Note = joinNote(value.Note, "compressed bytes withheld: not decoded, so they cannot be told free of credentials")
	}
}

// bytesNode adds the KindBytes child of parent that varBytes or
// int32Bytes read, spanning [o, the reader's offset); nil when the reader
// failed.
func (bd *batchDecoder) bytesNode(parent *Node, f *Field, space, o int, raw []byte, null bool) *Node {
	if bd.r.Err() != nil {
		return nil
	}
	node := bd.add(parent, Node{Name: f.Name, Type: "bytes", Kind: KindBytes, Field: f, Space: space, Off: o, Len: bd.r.Offset() - o, Raw: raw})
	if null {
		node.Flags |= FlagNull
	}
	return node
}

// int32Bytes reads an int32-length byte string (-1 for null) as a KindBytes
// child of parent; the node's span includes the length.
func (bd *batchDecoder) int32Bytes(parent *Node, f *Field, space int) *Node {
	r := &bd.r
	o := r.Offset()
	n := r.BytesLen()
	var raw []byte
	if n >= 0 {
		raw = r.Span(n)
	}
	return bd.bytesNode(parent, f, space, o, raw, n == -1)
}

// lastOffset returns the offset of the last complete message in the
// message set b, or false when it holds none.
func lastOffset(b []byte) (int64, bool) {
	var last int64
	found := false
	for p := 0; len(b)-p >= logOverhead; {
		size := int64(int32(binary.BigEndian.Uint32(b[p+8:])))
		if size < 0 || size > int64(len(b)-p-logOverhead) {
			break
		}
		last, found = int64(binary.BigEndian.Uint64(b[p:])), true
		p += logOverhead + int(size)
	}
	return last, found
}

// noteCRC notes on c, a batch's or legacy message's Crc node, whether the
// stored CRC equals the one computed over the bytes it covers (CRC-32C
// from Attributes to the end for magic 2, KIP-98; IEEE CRC-32 from Magic
// to the end for magic 0 and 1); a mismatch flags c as an error.
func noteCRC(c *Node, stored, computed uint32) {
	if computed == stored {
		c.Note = "ok"
		return
	}
	c.Flags |= FlagError
	c.Note = fmt.Sprintf("bad: got 0x%08x, computed 0x%08x", stored, computed)
}
