package main

// This file is the floor sink of -frames and -inflate: the dissector as
// kwire read's one-line mode runs it (frames cut, paired, decoded with
// record batch headers and CRCs), then either nothing more (-frames) or
// the decompression of every compressed magic 2 record batch on every
// core (-inflate), the least that read -V and read --json must do on top.

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
)

// floorBudget bounds the frame bytes of the exchanges queued for or being
// inflated by the workers (one exchange is always let in, however large),
// and floorJobs their number, so memory does not grow with the capture.
// They are kwire read's own bounds for its parallel sink (2 MiB, 256).
const (
	floorBudget = 2 << 20
	floorJobs   = 256
)

// codecTotal counts the magic 2 record batches of one codec: how many,
// their records payload in bytes (after the 61-byte batch header) and,
// with -inflate, what it decompressed to (equal to the payload for
// CodecNone).
type codecTotal struct {
	Batches      int64
	Compressed   int64
	Decompressed int64
}

// floorTimes are the wall times the workers spent in protocol.Decompress,
// by codec (summed over workers; a worker descheduled mid-call counts
// the wait too).
type floorTimes [protocol.CodecZstd + 1]time.Duration

// floorTotals are what the floor sink counted.
type floorTotals struct {
	Exchanges int64
	Batches   [protocol.CodecZstd + 1]codecTotal // by protocol.Codec
	BadCRC    int64                              // batches whose Crc node is flagged as an error
	Errors    int64                              // compressed batches that failed to decompress (-inflate)
	Times     floorTimes                         // time in protocol.Decompress (-inflate)
}

func (t *floorTotals) add(o *floorTotals) {
	t.Exchanges += o.Exchanges
	for i := range t.Batches {
		t.Batches[i].Batches += o.Batches[i].Batches
		t.Batches[i].Compressed += o.Batches[i].Compressed
		t.Batches[i].Decompressed += o.Batches[i].Decompressed
	}
	t.BadCRC += o.BadCRC
	t.Errors += o.Errors
	for i := range t.Times {
		t.Times[i] += o.Times[i]
	}
}

// batchCount is the number of batches of every codec.
func (t *floorTotals) batchCount() (all, compressed int64) {
	for c, b := range t.Batches {
		all += b.Batches
		if c != int(protocol.CodecNone) {
			compressed += b.Batches
		}
	}
	return all, compressed
}

// floorSink is the dissect.Sink of -frames and -inflate. Without inflate
// it counts batch headers on the Dissector's goroutine and hands each
// exchange's trees and frame buffers back at once, as read's one-line
// mode does once a line is written. With inflate, workers (GOMAXPROCS of
// them) take the exchanges from a bounded queue, in no particular order,
// and decompress their compressed batches with protocol.Decompress.
type floorSink struct {
	inflate bool
	tot     floorTotals // the Dissector goroutine's counts

	jobs chan *dissect.Exchange // to the workers; nil without inflate
	wg   sync.WaitGroup
	mu   sync.Mutex
	cond sync.Cond
	held int64 // frame bytes of the exchanges queued or being inflated
	n    int   // and their number
	wtot floorTotals
}

func newFloorSink(inflate bool) *floorSink {
	s := &floorSink{inflate: inflate}
	s.cond.L = &s.mu
	if !inflate {
		return s
	}
	s.jobs = make(chan *dissect.Exchange, floorJobs)
	for range max(runtime.GOMAXPROCS(0), 1) {
		s.wg.Add(1)
		go s.work()
	}
	return s
}

// Exchange implements dissect.Sink.
func (s *floorSink) Exchange(ex *dissect.Exchange) {
	s.tot.Exchanges++
	if !s.inflate {
		eachBatch(ex, func(b batchRef) { s.tot.count(b) })
		release(ex)
		return
	}
	size := ex.FrameBytes()
	s.mu.Lock()
	for s.n >= floorJobs || s.held > 0 && s.held+size > floorBudget {
		s.cond.Wait()
	}
	s.held += size
	s.n++
	s.mu.Unlock()
	s.jobs <- ex
}

// Event implements dissect.Sink: events cost nothing to the floor.
func (s *floorSink) Event(*dissect.Event) {}

// work inflates exchanges until the queue is closed, then adds its
// counts to wtot.
func (s *floorSink) work() {
	defer s.wg.Done()
	var t floorTotals
	for ex := range s.jobs {
		size := ex.FrameBytes()
		eachBatch(ex, func(b batchRef) {
			t.count(b)
			if b.codec == protocol.CodecNone {
				return
			}
			start := time.Now()
			out, _, err := protocol.Decompress(b.codec, b.payload, b.left, 2)
			t.Times[b.codec] += time.Since(start)
			if err != nil {
				t.Errors++
				*b.budget = 0 // as the decoder: nothing more for this frame
				return
			}
			*b.budget -= int64(len(out))
			t.Batches[b.codec].Decompressed += int64(len(out))
		})
		release(ex)
		s.mu.Lock()
		s.held -= size
		s.n--
		s.cond.Broadcast()
		s.mu.Unlock()
	}
	s.mu.Lock()
	s.wtot.add(&t)
	s.mu.Unlock()
}

// close waits for the workers and returns the totals. The sink must not
// be used afterwards.
func (s *floorSink) close() floorTotals {
	if s.jobs != nil {
		close(s.jobs)
		s.wg.Wait()
	}
	t := s.tot
	t.add(&s.wtot)
	return t
}

// count adds one batch's header counts (not its decompressed size).
func (t *floorTotals) count(b batchRef) {
	c := &t.Batches[b.codec]
	c.Batches++
	c.Compressed += int64(len(b.payload))
	if b.codec == protocol.CodecNone {
		c.Decompressed += int64(len(b.payload))
	}
	if b.badCRC {
		t.BadCRC++
	}
}

// batchRef is one magic 2 record batch found in a decoded frame.
type batchRef struct {
	codec   protocol.Codec
	payload []byte // the records after the batch header, aliasing the frame
	badCRC  bool
	// left is what the frame's decompression budget has left when the
	// batch is reached (protocol.DefaultMaxDecompressed for all the
	// batches of a frame together, as the decoder counts); budget points
	// at it for the caller to lower.
	left   int64
	budget *int64
}

// recordsCountLen is the 4-byte records count that ends a magic 2
// batch's 61-byte header (Kafka protocol guide, "Record Batch"): the
// decoder's "Records" node starts with it, the records payload after it.
const recordsCountLen = 4

// eachBatch calls fn for every magic 2 record batch of a known codec in
// ex's decoded frames whose records the decoder left undecoded
// (Decoder.BatchHeadersOnly), in wire order. Batches with a negative
// record count or spans outside their space are skipped.
func eachBatch(ex *dissect.Exchange, fn func(batchRef)) {
	for _, f := range [...]*dissect.Frame{ex.Request, ex.Response} {
		if f == nil || f.Tree == nil || f.Tree.Root == nil {
			continue
		}
		budget := int64(protocol.DefaultMaxDecompressed)
		walkBatches(f.Tree, f.Tree.Root, 0, func(b batchRef) {
			b.left, b.budget = budget, &budget
			fn(b)
		})
	}
}

// maxDepth bounds the walk; Kafka messages nest a few levels deep.
const maxDepth = 64

func walkBatches(t *protocol.Tree, n *protocol.Node, depth int, fn func(batchRef)) {
	if depth > maxDepth {
		return
	}
	if n.Field == protocol.Batch.Batch {
		if b, ok := batchOf(t, n); ok {
			fn(b)
		}
		return
	}
	for _, c := range n.Children {
		walkBatches(t, c, depth+1, fn)
	}
}

// batchOf reads a RecordBatch node's codec, CRC verdict and records
// payload.
func batchOf(t *protocol.Tree, n *protocol.Node) (batchRef, bool) {
	magic, attrs, recs := n.ChildOf(protocol.Batch.Magic), n.ChildOf(protocol.Batch.Attributes), n.ChildOf(protocol.Batch.Records)
	if magic == nil || magic.Int != 2 || attrs == nil || recs == nil || recs.Int < 0 || recs.Flags&protocol.FlagError != 0 {
		return batchRef{}, false
	}
	codec := protocol.Codec(attrs.Int & 0x07)
	if codec > protocol.CodecZstd {
		return batchRef{}, false
	}
	if recs.Space < 0 || recs.Space >= len(t.Spaces) {
		return batchRef{}, false
	}
	data := t.Spaces[recs.Space].Data
	from, to := recs.Off+recordsCountLen, recs.End()
	if recs.Off < 0 || from > to || to > len(data) {
		return batchRef{}, false
	}
	crc := n.ChildOf(protocol.Batch.Crc)
	return batchRef{codec: codec, payload: data[from:to], badCRC: crc != nil && crc.Flags&protocol.FlagError != 0}, true
}

// release hands ex's trees and frame buffers back to their pools.
func release(ex *dissect.Exchange) {
	for _, f := range [...]*dissect.Frame{ex.Request, ex.Response} {
		if f != nil {
			f.Tree.Release()
		}
	}
	ex.Release()
}

// printFloor writes one file's line for -frames or -inflate.
func printFloor(w io.Writer, path string, inflate bool, packets int64, conns int, ds dissect.Summary, t *floorTotals) {
	all, compressed := t.batchCount()
	fmt.Fprintf(w, "%s: %d packets, %d connections, %d frames, %d exchanges, %d batches (%d compressed, %d bad CRC)",
		path, packets, conns, ds.Frames, t.Exchanges, all, compressed, t.BadCRC)
	if inflate {
		var in, out int64
		for c := protocol.CodecGzip; c <= protocol.CodecZstd; c++ {
			in += t.Batches[c].Compressed
			out += t.Batches[c].Decompressed
		}
		fmt.Fprintf(w, ", %d -> %d bytes", in, out)
		for c := protocol.CodecGzip; c <= protocol.CodecZstd; c++ {
			b := t.Batches[c]
			fmt.Fprintf(w, "; %s %d: %d -> %d (%.0f ms)", c, b.Batches, b.Compressed, b.Decompressed, t.Times[c].Seconds()*1000)
		}
		fmt.Fprintf(w, "; %d errors", t.Errors)
	}
	fmt.Fprintln(w)
}
