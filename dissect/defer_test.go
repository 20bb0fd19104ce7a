package dissect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

type deferSink struct {
	deferred bool
	redo     bool // decode, Undecode, decode again (a refused decode redone)
	wg       sync.WaitGroup
	got      []*deferResult // per exchange, in emit order
}

type deferResult struct {
	dump string
	errs int
}

func (s *deferSink) Exchange(ex *Exchange) {
	r := new(deferResult)
	s.got = append(s.got, r)
	if !s.deferred {
		r.dump = dumpExchange(ex)
		return
	}
	s.wg.Add(1)
	go func() { // decoded elsewhere, as kwire read's workers do
		defer s.wg.Done()
		if s.redo {
			ex.Decode()
			ex.Undecode()
		}
		r.errs = ex.Decode()
		r.dump = dumpExchange(ex)
	}()
}

func (s *deferSink) Event(*Event) {}

func dumpExchange(ex *Exchange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %d v%d corr=%d %q\n", ex.Kind, ex.APIKey, ex.APIVersion, ex.CorrelationID, ex.Notes)
	for _, f := range []*Frame{ex.Request, ex.Response} {
		if f == nil {
			b.WriteString("-\n")
			continue
		}
		fmt.Fprintf(&b, "frame %d-%d %d bytes\n", f.FirstPacket, f.LastPacket, len(f.Bytes))
		if f.Tree != nil {
			fmt.Fprintf(&b, "err %v\n", f.Tree.Err)
			dumpNode(&b, f.Tree.Root, 0)
		}
	}
	return b.String()
}

func dumpNode(b *strings.Builder, n *protocol.Node, depth int) {
	if n == nil {
		return
	}
	fmt.Fprintf(b, "%*s%s %s %d+%d %d %q %q %x %d\n", 2*depth, "", n.Name, n.Type, n.Off, n.Len, n.Int, n.Str, n.Note, n.Raw, n.Flags)
	for _, c := range n.Children {
		dumpNode(b, c, depth+1)
	}
}

// With DeferDecode the sink decodes each exchange, on another goroutine,
// into exactly the trees the Dissector makes itself, and the Dissector's
// Summary counts the same problems and unknown versions either way.
func TestDeferDecode(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(files) == 0 {
		t.Skip("no golden captures in ../pcaps")
	}
	ports := pcaps.BrokerPorts()
	total, unknown := 0, int64(0)
	for _, f := range files {
		run := func(deferred bool) (*deferSink, Summary) {
			s := &deferSink{deferred: deferred}
			d := New(Options{Ports: ports, Decoder: protocol.Decoder{Records: true}, DeferDecode: deferred}, s)
			if _, err := reassembly.ReadFiles(context.Background(), []string{f}, reassembly.Options{}, d); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			d.Finish()
			s.wg.Wait()
			return s, d.Summary()
		}
		now, nsum := run(false)
		later, lsum := run(true)
		if len(now.got) != len(later.got) {
			t.Fatalf("%s: %d exchanges, deferred %d", f, len(now.got), len(later.got))
		}
		errs := 0
		for i := range now.got {
			if now.got[i].dump != later.got[i].dump {
				t.Errorf("%s exchange %d:\n%s\ndeferred:\n%s", f, i, now.got[i].dump, later.got[i].dump)
			}
			errs += later.got[i].errs
		}
		// One count, wherever the frames were decoded.
		if lsum.Problems != nsum.Problems || lsum.Unknown != nsum.Unknown || int64(errs) > lsum.DecodeErrors {
			t.Errorf("%s: problems %+v unknown %d, deferred %+v unknown %d (%d from Decode)", f, nsum.Problems, nsum.Unknown, lsum.Problems, lsum.Unknown, errs)
		}
		total += len(now.got)
		unknown += nsum.Unknown
	}
	if total < 100 {
		t.Errorf("only %d exchanges", total)
	}
	if unknown == 0 {
		t.Error("no frame of an unknown version: Summary.Unknown was not checked")
	}
}

// A decode undone (Exchange.Undecode, for a decode the memory budget
// refused) and done again counts once: the problems, unknown versions and
// the frames that reached the decompression cap are those of one decode.
func TestUndecodeCountsOnce(t *testing.T) {
	f := filepath.Join("..", "pcaps", "kgo-produce-consume.pcap")
	if _, err := os.Stat(f); err != nil {
		t.Skip("no golden capture ../pcaps/kgo-produce-consume.pcap")
	}
	run := func(redo bool) Summary {
		s := &deferSink{deferred: true, redo: redo}
		// A cap every compressed batch passes: each is a bomb.
		dec := protocol.Decoder{Records: true, MaxDecompressed: 16}
		d := New(Options{Ports: pcaps.BrokerPorts(), Decoder: dec, DeferDecode: true}, s)
		if _, err := reassembly.ReadFiles(context.Background(), []string{f}, reassembly.Options{}, d); err != nil {
			t.Fatal(err)
		}
		d.Finish()
		s.wg.Wait()
		return d.Summary()
	}
	once, twice := run(false), run(true)
	if once.DecompressCapped == 0 || once.DecodeErrors < once.DecompressCapped {
		t.Fatalf("a 16-byte cap: %d frames capped, %d failed; want some, each a failure", once.DecompressCapped, once.DecodeErrors)
	}
	if twice.Problems != once.Problems || twice.Unknown != once.Unknown {
		t.Errorf("decoded once: %+v unknown %d; undone and redone: %+v unknown %d", once.Problems, once.Unknown, twice.Problems, twice.Unknown)
	}
}
