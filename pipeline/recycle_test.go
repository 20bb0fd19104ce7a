package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/internal/poison"
	"github.com/kwire/kwire/reassembly"
)

// keptConsumer is recConsumer keeping every exchange it was done with.
type keptConsumer struct {
	recConsumer
	kept []*dissect.Exchange
}

func (c *keptConsumer) Done(ex *dissect.Exchange, shown bool, err error) {
	c.recConsumer.Done(ex, shown, err)
	c.kept = append(c.kept, ex)
}

// keptSink is a dissect.Sink keeping every exchange, with the correlation
// IDs it saw.
type keptSink struct {
	kept  []*dissect.Exchange
	corrs []int32
}

func (s *keptSink) Exchange(ex *dissect.Exchange) {
	s.kept, s.corrs = append(s.kept, ex), append(s.corrs, ex.CorrelationID)
}
func (s *keptSink) Event(*dissect.Event) {}

// recycled reports whether ex was handed back by dissect.Exchange.Recycle
// once done: zeroed for reuse, or poisoned under the kwirepoison tag.
func recycled(ex *dissect.Exchange) bool {
	if poison.Released {
		return ex.CorrelationID == -0x5a5a5a5a
	}
	return ex.Request == nil && ex.Response == nil && ex.CorrelationID == 0
}

func readKgo(t *testing.T, sink dissect.Sink) {
	t.Helper()
	d := dissect.New(dissect.Options{Ports: []uint16{19092}, DeferDecode: true}, sink)
	if _, err := reassembly.ReadFiles(context.Background(), []string{"../pcaps/kgo-produce-consume.pcap"}, reassembly.Options{}, d); err != nil {
		t.Fatal(err)
	}
	d.Finish()
}

// TestOrderedRecycle: with Recycle, every exchange Ordered was done with,
// inline or through the four stages, is handed back for reuse once its
// consumer's Done returned, and the output is byte for byte the same;
// without it, the exchanges are left as they were (released, not reused).
func TestOrderedRecycle(t *testing.T) {
	run := func(recycle bool, inline int64) (string, []*dissect.Exchange) {
		var buf bytes.Buffer
		c := &keptConsumer{recConsumer: recConsumer{out: bufio.NewWriter(&buf)}}
		p := NewOrdered(c, 2, 64<<20)
		p.InlineBytes, p.Recycle = inline, recycle
		readKgo(t, p)
		p.Close()
		c.out.Flush()
		if len(c.kept) != 143 {
			t.Fatalf("recycle %v inline %d: %d exchanges done, want 143", recycle, inline, len(c.kept))
		}
		return buf.String(), c.kept
	}
	for _, inline := range []int64{-1, InlineBytes} {
		want, kept := run(false, inline)
		for i, ex := range kept {
			if recycled(ex) || ex.Request == nil && ex.Response == nil {
				t.Fatalf("inline %d, no Recycle: exchange %d was recycled (%+v)", inline, i, *ex)
			}
		}
		got, kept := run(true, inline)
		if got != want {
			t.Errorf("inline %d: output with Recycle differs:\n%s\n---\n%s", inline, got, want)
		}
		for i, ex := range kept {
			if !recycled(ex) {
				t.Fatalf("inline %d, Recycle: exchange %d (corr %d) not recycled", inline, i, ex.CorrelationID)
			}
		}
	}
}

// TestDecodeAheadRecycle: with Recycle, every exchange passed on is
// handed back for reuse once next's Exchange returned, next having seen
// each decoded and in emit order.
func TestDecodeAheadRecycle(t *testing.T) {
	for _, recycle := range []bool{false, true} {
		s := &keptSink{}
		a := NewDecodeAhead(s, 2, 64<<20)
		a.Recycle = recycle
		readKgo(t, a)
		a.Close()
		if len(s.kept) != 143 {
			t.Fatalf("recycle %v: %d exchanges, want 143", recycle, len(s.kept))
		}
		for i, ex := range s.kept {
			if recycled(ex) != recycle {
				t.Fatalf("recycle %v: exchange %d (corr %d seen) recycled: %v", recycle, i, s.corrs[i], recycled(ex))
			}
		}
	}
}
