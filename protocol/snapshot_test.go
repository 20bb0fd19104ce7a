package protocol

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// snapshotChunk is a FetchSnapshot v0 response body for topic at
// position pos, its bytes chunk.
func snapshotChunk(topic string, size, pos int64, chunk []byte) []byte {
	resp := kmsg.NewPtrFetchSnapshotResponse()
	tp := kmsg.NewFetchSnapshotResponseTopic()
	tp.Topic = topic
	p := kmsg.NewFetchSnapshotResponseTopicPartition()
	p.SnapshotID.EndOffset, p.SnapshotID.Epoch = 4, 1
	p.Size, p.Position, p.Bytes = size, pos, chunk
	tp.Partitions = append(tp.Partitions, p)
	resp.Topics = append(resp.Topics, tp)
	return resp.AppendTo(nil)
}

// TestFetchSnapshotChunks: a snapshot of two batches served in two
// chunks cut inside the second (KIP-630). At position 0 the first batch
// is decoded and the cut one is a partial batch; at position cut > 0 the
// bytes are one UnalignedChunk, not decoded and no error, its note naming
// the position; withheld unless ShowSecrets, for the metadata log's as
// for another topic's; the same in a sparse decode.
func TestFetchSnapshotChunks(t *testing.T) {
	b1 := recBuild(t, CodecNone, 0, 1000, []recRecord{{Value: []byte{1, 2, 0, 'a'}}, {OffsetDelta: 1, Value: []byte{1, 2, 0, 'b'}}})
	b2 := recBuild(t, CodecNone, 2, 1000, []recRecord{{Value: []byte("password=hunter2")}, {OffsetDelta: 1, Value: []byte{1, 2, 0, 'd'}}})
	snap := append(append([]byte{}, b1...), b2...)
	cut := len(b1) + 20 // inside b2's header: a chunk from there reads garbage as a batch length
	size := int64(len(snap))

	for _, c := range []struct {
		name string
		d    Decoder
	}{
		{"full", Decoder{Records: true}},
		{"show secrets", Decoder{Records: true, ShowSecrets: true}},
		{"sparse", Decoder{Records: true, Sparse: true}},
	} {
		for _, topic := range []string{"__cluster_metadata", "other"} {
			// Position 0: a batch and the partial one.
			tree := c.d.DecodeBody(KeyFetchSnapshot, 0, true, snapshotChunk(topic, size, 0, snap[:cut]))
			if tree.Err != nil {
				t.Fatalf("%s %s position 0: %v", c.name, topic, tree.Err)
			}
			recs := snapshotRecords(t, tree)
			if len(recs.Children) != 2 || recs.Children[0].Kind != KindStruct || recs.Children[1].Name != "PartialBatch" || recs.Children[1].Flags&FlagPartial == 0 {
				t.Errorf("%s %s position 0: %s", c.name, topic, childNames(recs))
			}
			// Position cut: the rest, unaligned.
			chunk := snap[cut:]
			tree = c.d.DecodeBody(KeyFetchSnapshot, 0, true, snapshotChunk(topic, size, int64(cut), chunk))
			if tree.Err != nil {
				t.Fatalf("%s %s position %d: %v", c.name, topic, cut, tree.Err)
			}
			recCheckTree(t, tree)
			recs = snapshotRecords(t, tree)
			if len(recs.Children) != 1 {
				t.Fatalf("%s %s position %d: %s", c.name, topic, cut, childNames(recs))
			}
			u := recs.Children[0]
			wantNote := "the snapshot's bytes from position " + strconv.Itoa(cut) + " (a FetchSnapshot chunk, KIP-630): not aligned to a record batch, not decoded"
			if u.Name != "UnalignedChunk" || u.Kind != KindRaw || u.Flags&(FlagError|FlagPartial) != 0 || !strings.HasPrefix(u.Note, wantNote) ||
				u.Len != len(chunk) || u.End() != recs.End() {
				t.Errorf("%s %s position %d: %s %v flags %v [%d, %d) of [%d, %d): %q", c.name, topic, cut, u.Name, u.Kind, u.Flags, u.Off, u.End(), recs.Off, recs.End(), u.Note)
			}
			shown := c.d.ShowSecrets
			if shown != bytes.Equal(u.Raw, chunk) || shown == (u.Flags&FlagRedacted != 0) || !shown && len(u.Raw) != 0 {
				t.Errorf("%s %s position %d: redacted %v, raw %d bytes", c.name, topic, cut, u.Flags&FlagRedacted != 0, len(u.Raw))
			}
		}
	}
}

func snapshotRecords(t *testing.T, tree *Tree) *Node {
	t.Helper()
	var found *Node
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Kind == KindRecords {
			found = n
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tree.Root)
	if found == nil {
		t.Fatal("no UnalignedRecords")
	}
	return found
}

func childNames(n *Node) string {
	var s []string
	for _, c := range n.Children {
		s = append(s, c.Name+"("+c.Note+")")
	}
	return strings.Join(s, ", ")
}
