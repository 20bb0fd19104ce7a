package reassembly

import (
	"hash/maphash"
	"math/bits"
	"time"

	gpr "github.com/gopacket/gopacket/reassembly"
)

// Retransmissions with different bytes: a segment that carries bytes
// already delivered is a retransmission, dropped (the receiver keeps the
// first copy, as Linux does). When its bytes differ from those delivered
// (Wireshark: "retransmission with different data"), the stream kwire
// shows may not be the one the receiver used: the peers disagree, or the
// capture mixes two streams. Each direction keeps its last delivered
// bytes in a window (window.go, bounded by Options.MaxRecentBytes): a
// retransmission is compared with them byte for byte, whatever its
// segmentation. Before the window, or in a direction whose window the
// budget took, each direction remembers a hash of the last recentPieces
// pieces delivered (their sequence numbers, lengths, packets), and a
// retransmission is compared with the pieces it covers whole only; a
// piece it covers in part, or one older than those remembered, is not
// compared. To keep the cost of delivery low, a piece of more than
// wholeMax bytes is hashed by its length and its first and last
// sampleEdge bytes (a difference confined to its middle passes unseen
// there).

// recentPieces is how many delivered pieces a direction remembers.
const recentPieces = 8

// piece is one delivered piece remembered: its first sequence number,
// its length, the packet that carried it and a hash of its bytes.
type piece struct {
	seq   gpr.Sequence
	n     int32
	frame int64
	sum   uint64
}

// Conflict is a retransmission whose bytes differ from the bytes
// delivered before at the same sequence numbers.
type Conflict struct {
	Offset int64     // stream offset (as Chunk.Offset) of the delivered piece whose bytes differ
	Bytes  int       // its length
	Frame  int64     // the retransmitted packet, numbered as Chunk.Frame
	First  int64     // the packet whose bytes were delivered
	Time   time.Time // the retransmitted packet's capture time
}

// ConflictHandler is a Handler that is told of retransmissions whose
// bytes differ from those delivered (counted in ConnStats.Conflicts
// either way): the delivered bytes stay, the retransmitted ones are
// dropped. Conflict is called in capture order with the other calls.
type ConflictHandler interface {
	Handler
	Conflict(c *Conn, d Dir, cf Conflict)
}

// A piece of up to wholeMax bytes is hashed whole (sum); a longer one by
// its length and its head and tail of sampleEdge bytes each.
const (
	wholeMax   = 512
	sampleEdge = 64
)

// sum hashes b whole when it is short (a response of a few hundred bytes
// whose topic was renamed differs in its middle), else its length, head
// and tail. It runs on every piece delivered: hashing 1448-byte segments
// whole, or a sample of their words, cost 5-7% of kwire read's
// instructions on a capture of them; head and tail miss a difference only
// when all of it lies in the middle of a long piece.
func sum(seed maphash.Seed, b []byte) uint64 {
	if len(b) <= wholeMax {
		return maphash.Bytes(seed, b)
	}
	return maphash.Bytes(seed, b[:sampleEdge]) ^ bits.RotateLeft64(maphash.Bytes(seed, b[len(b)-sampleEdge:]), 29) ^ uint64(len(b))
}

// remember records a delivered piece of direction d.
func (h *halfState) remember(seed maphash.Seed, seq gpr.Sequence, b []byte, frame int64) {
	h.recent[h.recentAt] = piece{seq: seq, n: int32(len(b)), frame: frame, sum: sum(seed, b)}
	h.recentAt = (h.recentAt + 1) % recentPieces
}

// compare compares the captured bytes b of a retransmitted segment of
// direction d starting at seq with those delivered, and reports the first
// delivered piece that differs: byte for byte with the bytes its window
// keeps (window.go), whatever the segmentation; before the window (or
// without one), with the hashes of the remembered pieces b covers whole.
func (s *stream) compare(d Dir, seq gpr.Sequence, b []byte, frame int64, t time.Time) {
	h := &s.half[d]
	w := h.win
	at, diff, from, to := w.differ(seq, b)
	if diff {
		ps, n, first := w.pieceAt(at)
		s.conflictAt(d, ps, n, frame, first, t)
		return
	}
	for i := range h.recent {
		p := &h.recent[i]
		if p.n == 0 {
			continue
		}
		off := seq.Difference(p.seq)
		if off < 0 || off+int(p.n) > len(b) {
			continue
		}
		if from < to && off >= from && off+int(p.n) <= to {
			continue // compared byte for byte
		}
		if sum(s.r.seed, b[off:off+int(p.n)]) == p.sum {
			continue
		}
		s.conflictAt(d, p.seq, int(p.n), frame, p.frame, t)
		return
	}
}

// conflictAt reports a Conflict over the delivered piece of n bytes at
// seq that packet first carried, resent by packet frame.
func (s *stream) conflictAt(d Dir, seq gpr.Sequence, n int, frame, first int64, t time.Time) {
	h := &s.half[d]
	s.conn.Stats.Conflicts++
	s.r.emitConflict(s, d, Conflict{
		Offset: h.offset - int64(seq.Difference(h.next)),
		Bytes:  n,
		Frame:  frame,
		First:  first,
		Time:   t,
	})
}

// conflict reports cf to h when h is a ConflictHandler.
func conflict(h Handler, c *Conn, d Dir, cf Conflict) {
	if ch, ok := h.(ConflictHandler); ok {
		ch.Conflict(c, d, cf)
	}
}

func (r *runner) callConflict(s *stream, d Dir, cf Conflict) {
	if r.rec == nil {
		conflict(r.h, s.conn, d, cf)
		return
	}
	r.rec.add(s, call{kind: evConflict, dir: d, n: int64(cf.Bytes), t: cf.Time,
		ch: Chunk{Frame: cf.Frame, Offset: cf.Offset}, snap: SnapCut{Frame: cf.First}}, nil)
}

// conflictOf rebuilds the Conflict callConflict recorded in e.
func conflictOf(e *call) Conflict {
	return Conflict{Offset: e.ch.Offset, Bytes: int(e.n), Frame: e.ch.Frame, First: e.snap.Frame, Time: e.t}
}

func (r *runner) emitConflict(s *stream, d Dir, cf Conflict) {
	if r.holding(s, d) {
		r.holdEvent(s, event{s: s, kind: evConflict, dir: d, n: int64(cf.Bytes), t: cf.Time,
			ch: Chunk{Frame: cf.Frame, Offset: cf.Offset}, snap: SnapCut{Frame: cf.First}}, nil)
		return
	}
	if !r.deferring {
		r.callConflict(s, d, cf)
		return
	}
	r.events = append(r.events, event{s: s, kind: evConflict, dir: d, n: int64(cf.Bytes), t: cf.Time,
		ch: Chunk{Frame: cf.Frame, Offset: cf.Offset}, snap: SnapCut{Frame: cf.First}})
}
