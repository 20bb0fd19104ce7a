package protocol

import (
	"strconv"
	"sync"
)

// FetchSnapshot chunks (KIP-630; FetchSnapshotResponse.json). A follower
// or broker fetches a KRaft snapshot in chunks: each partition of the
// response gives the snapshot's Size, the Position (a byte offset in the
// snapshot) its bytes start at, and the bytes, UnalignedRecords, a RECORDS
// field "which may not be aligned on an offset boundary". The leader
// serves a chunk of up to the request's MaxBytes from the position asked
// (KafkaRaftClient reads the snapshot file as a byte range): the chunk at
// position 0 starts with the snapshot's first batch and is decoded as
// records (the batch the chunk cuts is a partial batch, as at a fetch's
// end), but a chunk past 0 starts wherever the previous one ended, most
// often inside a batch. Its bytes are not record batches: decoded as
// such, they gave a negative batch length (a decode error) or a "partial
// batch" with a length and base offset read from record bytes. Such a
// chunk is one KindRaw child of the field, "UnalignedChunk", whose note
// says what it is; like every span kwire does not decode it is withheld
// unless ShowSecrets (the snapshot is the KRaft metadata log's, which
// holds configs and SCRAM credentials: metadataLog withholds it too).

// snapPart is a field's part in a FetchSnapshot chunk.
type snapPart uint8

const (
	snapNone     snapPart = iota
	snapPosition          // FetchSnapshotResponse Topics.Partitions.Position
	snapChunk             // FetchSnapshotResponse Topics.Partitions.UnalignedRecords
)

var snapOnce sync.Once

// initSnapshot marks, once, the Position and UnalignedRecords fields of
// every generation's FetchSnapshotResponse partitions.
func initSnapshot() {
	snapOnce.Do(func() {
		for _, m := range Schemas {
			if m.Name != "FetchSnapshotResponse" {
				continue
			}
			for _, p := range fieldPath(m.Fields, "Topics", "Partitions") {
				switch f := &p[0]; {
				case f.Name == "Position" && f.Kind == TypeInt64:
					f.snap = snapPosition
				case f.Name == "UnalignedRecords" && f.Kind == TypeRecords:
					f.snap = snapChunk
				}
			}
		}
	})
}

func init() { initSnapshot() }

// fieldPath returns, one a slice of length 1, the fields of the struct
// reached from fields by the named struct or array fields.
func fieldPath(fields []Field, names ...string) [][]Field {
	for _, name := range names {
		var next []Field
		for i := range fields {
			if fields[i].Name == name {
				next = fields[i].Fields
			}
		}
		fields = next
	}
	out := make([][]Field, len(fields))
	for i := range fields {
		out[i] = fields[i : i+1]
	}
	return out
}

// unalignedChunk makes the bytes of n, the UnalignedRecords of a
// FetchSnapshot partition at position pos > 0, one KindRaw child
// "UnalignedChunk" over the same bytes, not decoded, withheld unless
// ShowSecrets.
func (d *Decoder) unalignedChunk(t *Tree, n *Node, pos int64) {
	bd, space, off := d.recordsDecoder(t, n)
	if bd == nil {
		return
	}
	note := "the snapshot's bytes from position " + strconv.FormatInt(pos, 10) +
		" (a FetchSnapshot chunk, KIP-630): not aligned to a record batch, not decoded"
	c := bd.raw(n, "UnalignedChunk", space, off, off+len(n.Raw), 0, note)
	if !d.ShowSecrets {
		withhold(c)
		c.Note = joinNote(c.Note, "withheld: records not decoded cannot be told free of credentials (--show-secrets shows them)")
	}
	t.mem.used(bd.slab)
	t.mem.usedPtrs(bd.ptrs)
}
