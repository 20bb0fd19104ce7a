package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// The node cap (Decoder.MaxNodes) bounds a tree's memory whatever the
// frame claims: millions of empty records in a small compressed batch, or
// millions of minimal array elements, stop at the cap and the rest stays
// raw (and is still covered by a node, so nothing is lost).

// TestNodeCapRecords: a gzip batch of 100,000 empty records (700 KB
// inflated from about 1 KB) under a cap of 1000 nodes.
func TestNodeCapRecords(t *testing.T) {
	recs := make([]recRecord, 100000)
	b := recBuild(t, CodecGzip, 0, 0, recs)
	d := Decoder{MaxNodes: 1000}
	tr := recDecode(t, &d, b)
	if n := countNodes(tr.Root); n > 1000+8 {
		t.Fatalf("%d nodes under a cap of 1000", n)
	}
	rs := recBatch(t, tr).Child("Records")
	if rs.Flags&FlagError == 0 || !strings.Contains(rs.Note, "not decoded: more than 1000 fields in one frame") {
		t.Fatalf("Records flags %b note %q", rs.Flags, rs.Note)
	}
	last := rs.Children[len(rs.Children)-1]
	if last.Name != nameUndecoded || last.Space != 1 || last.End() != len(tr.Spaces[1].Data) {
		t.Fatalf("last child %s [%d,%d) of space %d, want undecoded up to %d", last.Name, last.Off, last.End(), last.Space, len(tr.Spaces[1].Data))
	}
	// The records before it were decoded whole.
	if prev := rs.Children[len(rs.Children)-2]; prev.Type != "Record" || prev.Flags&FlagError != 0 || prev.End() != last.Off {
		t.Fatalf("record before the cut: %+v", prev)
	}
	// Under the default cap the same batch decodes fully.
	d.MaxNodes = 0
	if errs := recErrors(recDecode(t, &d, b).Root); len(errs) > 0 {
		t.Fatalf("default cap: %v", errs[:1])
	}
}

// TestNodeCapManyBatches: many small batches, each cheap, together over
// the cap; and many headers in one record.
func TestNodeCapManyBatches(t *testing.T) {
	one := recBuild(t, CodecNone, 0, 0, []recRecord{{}})
	var in []byte
	for range 500 {
		in = append(in, one...)
	}
	d := Decoder{MaxNodes: 300}
	tr := recDecode(t, &d, in)
	if n := countNodes(tr.Root); n > 300+30 {
		t.Fatalf("%d nodes under a cap of 300", n)
	}
	last := tr.Root.Children[len(tr.Root.Children)-1]
	if last.Name != nameUndecoded || last.End() != len(in) || !strings.Contains(last.Note, "node cap") {
		t.Fatalf("last child %s [%d,%d) %q", last.Name, last.Off, last.End(), last.Note)
	}

	hs := make([][2][]byte, 5000)
	for i := range hs {
		hs[i] = [2][]byte{{}, {}}
	}
	b := recBuild(t, CodecNone, 0, 0, []recRecord{{Headers: hs}})
	tr = recDecode(t, &d, b)
	if n := countNodes(tr.Root); n > 300+30 {
		t.Fatalf("headers: %d nodes under a cap of 300", n)
	}
	rec := recBatch(t, tr).Child("Records").Children[0]
	if rec.Flags&FlagError == 0 || !strings.Contains(rec.Note, "node cap") || rec.Children[len(rec.Children)-1].Name != nameUndecoded {
		t.Fatalf("record %q, children %d", rec.Note, len(rec.Children))
	}
}

// TestNodeCapArray: a MetadataRequest v1 naming 100,000 one-letter topics
// (300 KB) under a cap of 500: Tree.Err says why, the rest is undecoded.
func TestNodeCapArray(t *testing.T) {
	//	000186a0        Topics: 100000
	//	0001 61 ...     Name "a", 100000 times
	body := binary.BigEndian.AppendUint32(nil, 100000)
	for range 100000 {
		body = append(body, 0, 1, 'a')
	}
	d := Decoder{MaxNodes: 500}
	tr := d.DecodeBody(3, 1, false, body)
	checkSpans(t, tr)
	if tr.Err == nil || !errors.Is(tr.Err, ErrTooManyNodes) {
		t.Fatalf("Err = %v, want ErrTooManyNodes", tr.Err)
	}
	if !strings.HasPrefix(tr.Err.Path, "MetadataRequest v1 topics[") {
		t.Errorf("path %q", tr.Err.Path)
	}
	if n := countNodes(tr.Root); n > 500+8 {
		t.Fatalf("%d nodes under a cap of 500", n)
	}
	var und *Node
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Name == nameUndecoded {
			und = n
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tr.Root)
	if und == nil || und.End() != len(body) || und.Off != tr.Err.Off {
		t.Fatalf("undecoded node %+v, error at %#x", und, tr.Err.Off)
	}
	d.MaxNodes = 0
	if tr := d.DecodeBody(3, 1, false, body); tr.Err != nil {
		t.Fatalf("default cap: %v", tr.Err)
	}
}

// Tree.FirstError finds a record batch's problem, which leaves Err nil.
func TestTreeFirstError(t *testing.T) {
	good := recBuild(t, CodecGzip, 0, 0, []recRecord{{Value: []byte("v")}})
	d := Decoder{Records: true}
	if n := d.DecodeRecordBatches(good).FirstError(); n != nil {
		t.Fatalf("good batch: %s %q", n.Name, n.Note)
	}
	bad := bytes.Clone(good)
	bad[len(bad)-5] ^= 0xff // inside the gzip data: a corrupt stream (or its CRC)
	tr := d.DecodeRecordBatches(bad)
	n := tr.FirstError()
	if tr.Err != nil || n == nil || n.Flags&FlagError == 0 || n.Note == "" {
		t.Fatalf("corrupt batch: Err %v, first error %+v", tr.Err, n)
	}
	var nilTree *Tree
	if nilTree.FirstError() != nil {
		t.Error("nil tree")
	}
}

// Tree.FirstError's scan of the slabs agrees with the walk of the tree:
// on Produce requests of one to three batches, each good or damaged at
// every eighth byte (a bad CRC, a corrupt stream, a cut batch), whole and
// cut short, and on trees not the decoder's (a root of its own, which the
// scan cannot vouch for).
func TestFirstErrorScan(t *testing.T) {
	good := recBuild(t, CodecGzip, 0, 0, []recRecord{{Value: []byte("v")}, {Key: []byte("k"), Value: []byte("value")}})
	var found, none int
	check := func(tr *Tree, what string) {
		t.Helper()
		want := firstError(tr.Root, 0)
		if got := tr.FirstError(); got != want {
			t.Fatalf("%s: FirstError %p (%+v), the walk finds %p (%+v)", what, got, got, want, want)
		}
		if want != nil {
			found++
		} else {
			none++
		}
	}
	d := Decoder{Records: true}
	for batches := 1; batches <= 3; batches++ {
		for at := 0; at < len(good); at += 8 {
			for bad := range batches {
				var recs []byte
				for i := range batches {
					b := bytes.Clone(good)
					if i == bad {
						b[at] ^= 0x5a
					}
					recs = append(recs, b...)
				}
				r := kmsg.NewPtrProduceRequest()
				r.Version, r.Acks, r.TimeoutMillis = 9, -1, 1000
				tp := kmsg.NewProduceRequestTopic()
				tp.Topic = "t"
				pp := kmsg.NewProduceRequestTopicPartition()
				pp.Records = recs
				tp.Partitions = append(tp.Partitions, pp)
				r.Topics = append(r.Topics, tp)
				frame := kmsgRequestFrame(r, 1)
				check(d.DecodeRequest(frame), "produce")
				cut := frame[:len(frame)-len(recs)/2]
				binary.BigEndian.PutUint32(cut, uint32(len(cut)-4))
				check(d.DecodeRequest(cut), "produce cut short")
			}
		}
		check(d.DecodeRecordBatches(good), "records")
	}
	bad := bytes.Clone(good)
	bad[len(bad)-5] ^= 0xff
	check(d.DecodeRecordBatches(bad), "records, own root")
	if found == 0 || none == 0 {
		t.Fatalf("%d trees with an error, %d without: the test checks nothing", found, none)
	}
}
