package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// recConsumer writes, for each exchange, its key, correlation ID, the
// decoded nodes of its frames' trees (so that a job rendered before it
// was decoded shows) and which goroutine-independent facts it has; and a
// line for each event.
type recConsumer struct {
	out  *bufio.Writer
	done int
}

func (c *recConsumer) Prepare(ex *dissect.Exchange) (any, bool) { return nil, true }
func (c *recConsumer) Render(w Writer, ex *dissect.Exchange, _ any) error {
	nodes := 0
	for _, f := range [...]*dissect.Frame{ex.Request, ex.Response} {
		if f != nil && f.Tree != nil {
			var count func(n *protocol.Node)
			count = func(n *protocol.Node) {
				nodes++
				for _, ch := range n.Children {
					count(ch)
				}
			}
			count(f.Tree.Root)
		}
	}
	_, err := fmt.Fprintf(w, "%s v%d corr=%d nodes=%d topics=%d\n", protocol.APIName(ex.APIKey), ex.APIVersion, ex.CorrelationID, nodes, len(ex.Facts().Topics))
	return err
}
func (c *recConsumer) Lines() bool                                            { return false }
func (c *recConsumer) AppendLine(b []byte, _ *dissect.Exchange, _ any) []byte { return b }
func (c *recConsumer) Done(*dissect.Exchange, bool, error)                    { c.done++ }
func (c *recConsumer) Event(ev *dissect.Event) {
	fmt.Fprintf(c.out, "event %v packet %d\n", ev.Kind, ev.Frame)
}
func (c *recConsumer) Out() *bufio.Writer { return c.out }

// TestOrderedInline: exchanges done on the caller's goroutine while
// nothing is in flight (every small exchange of a capture of small ones)
// give byte for byte the output of the four stages, in emit order, with
// events between them where they were emitted; with InlineBytes negative
// none is.
func TestOrderedInline(t *testing.T) {
	run := func(inline int64) (string, int64) {
		var buf bytes.Buffer
		c := &recConsumer{out: bufio.NewWriter(&buf)}
		p := NewOrdered(c, 2, 64<<20)
		p.InlineBytes = inline
		d := dissect.New(dissect.Options{Ports: []uint16{19092}, DeferDecode: true}, p)
		if _, err := reassembly.ReadFiles(context.Background(), []string{"../pcaps/kgo-produce-consume.pcap"}, reassembly.Options{}, d); err != nil {
			t.Fatal(err)
		}
		d.Finish()
		p.Close()
		c.out.Flush()
		if c.done != 143 {
			t.Fatalf("inline %d: %d exchanges done, want 143", inline, c.done)
		}
		return buf.String(), p.Inlined()
	}
	staged, n := run(-1)
	if n != 0 {
		t.Fatalf("InlineBytes -1: %d inlined", n)
	}
	inlined, n := run(InlineBytes)
	if n < 100 {
		t.Errorf("%d of 143 exchanges inlined: the capture's exchanges are small", n)
	}
	if inlined != staged {
		t.Errorf("inlined output differs from the staged one:\n%s\n---\n%s", inlined, staged)
	}
	if !bytes.Contains([]byte(staged), []byte("Produce v")) || !bytes.Contains([]byte(staged), []byte("nodes=")) {
		t.Errorf("output %q", staged[:min(200, len(staged))])
	}
}
