package analysis

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/internal/capturetest"
	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/reassembly"
)

// openCounter is a Sink in front of an Analyzer that follows how many
// connections are open (between their first exchange or event and their
// EventClose) and how many per-connection states the findings hold.
type openCounter struct {
	a                    *Analyzer
	seen                 map[*reassembly.Conn]bool
	open, maxOpen, maxSt int
	closed               int
}

func (o *openCounter) conn(c *reassembly.Conn) {
	if c != nil && !o.seen[c] {
		o.seen[c] = true
		o.open++
		o.maxOpen = max(o.maxOpen, o.open)
	}
}

func (o *openCounter) Exchange(x *dissect.Exchange) {
	o.conn(x.Conn)
	o.a.Exchange(x)
	o.maxSt = max(o.maxSt, len(o.a.find.conns))
}

func (o *openCounter) Event(e *dissect.Event) {
	o.conn(e.Conn)
	o.a.Event(e)
	if e.Kind == dissect.EventClose && e.Conn != nil {
		delete(o.seen, e.Conn)
		o.open--
		o.closed++
	}
	o.maxSt = max(o.maxSt, len(o.a.find.conns))
}

// TestFindingsConnStateReleased: on 100 copies of a capture (4,100
// connections, about 250 open at once) the findings hold a state for at
// most the connections open at once and none after the last close.
func TestFindingsConnStateReleased(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	src, err := os.Open(filepath.Join("..", "pcaps", "kgo-produce-consume.pcap"))
	if err != nil {
		t.Skipf("%v (make pcaps)", err)
	}
	defer src.Close()
	p := filepath.Join(t.TempDir(), "x100.pcap")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	st, err := capturetest.Multiply(src, bw, capturetest.MultiplyOptions{Copies: 100, Gap: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	a := New(Options{Findings: true})
	o := &openCounter{a: a, seen: map[*reassembly.Conn]bool{}}
	d := dissect.New(dissect.Options{Ports: pcaps.BrokerPorts(), Decoder: dissectDecoder}, o)
	if _, err := reassembly.ReadFiles(context.Background(), []string{p}, reassembly.Options{}, d); err != nil {
		t.Fatal(err)
	}
	d.Finish()
	t.Logf("%d connections, at most %d open at once, at most %d findings states", o.closed, o.maxOpen, o.maxSt)
	if o.closed != 100*st.Conns || o.maxOpen >= o.closed/4 {
		t.Fatalf("%d connections closed, %d open at once; want %d, far fewer open", o.closed, o.maxOpen, 100*st.Conns)
	}
	if o.maxSt > o.maxOpen || len(a.find.conns) != 0 {
		t.Errorf("findings held up to %d connection states (%d open at most), %d at the end; want at most the open ones, none at the end",
			o.maxSt, o.maxOpen, len(a.find.conns))
	}
}

// TestFencedOnePerSubject: three copies of txn-fenced.pcap, one after
// another (the same transactional IDs fenced again in each, and across
// copies), give one producer-fenced finding per client and transactional
// ID, counting every instance fenced, as a single copy gives one per
// fenced producer.
func TestFencedOnePerSubject(t *testing.T) {
	src, err := os.Open(filepath.Join("..", "pcaps", "txn-fenced.pcap"))
	if err != nil {
		t.Skipf("%v (make pcaps)", err)
	}
	defer src.Close()
	p := filepath.Join(t.TempDir(), "x3.pcap")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	if _, err := capturetest.Multiply(src, bw, capturetest.MultiplyOptions{Copies: 3, Gap: time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	one := findingsOf(analyze(t, "txn-fenced.pcap", Options{Findings: true}).Findings(), RuleFenced)

	a := New(Options{Findings: true})
	d := dissect.New(dissect.Options{Ports: pcaps.BrokerPorts(), Detect: true, Decoder: dissectDecoder}, a)
	if _, err := reassembly.ReadFiles(context.Background(), []string{p}, reassembly.Options{}, d); err != nil {
		t.Fatal(err)
	}
	d.Finish()
	three := findingsOf(a.Findings(), RuleFenced)
	if len(one) == 0 || len(three) != len(one) {
		t.Fatalf("%d fenced findings on three copies, %d on one; want as many, one per subject:\n%+v", len(three), len(one), three)
	}
	seen := map[string]bool{}
	for _, x := range three {
		if seen[x.Subject] {
			t.Errorf("two findings for %q", x.Subject)
		}
		seen[x.Subject] = true
		if x.Count < 3 || !strings.HasPrefix(x.Detail, strconv.Itoa(int(x.Count))+" producer instances fenced; the latest: ") {
			t.Errorf("%s: count %d, detail %q", x.Subject, x.Count, x.Detail)
		}
	}
}
