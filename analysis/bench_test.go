package analysis

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/reassembly"
)

// recorded is a capture's exchanges and events, dissected once.
type recorded struct {
	ex []*dissect.Exchange
	ev []*dissect.Event
	// order: true for an exchange, false for an event, in emit order
	order []bool
}

func (r *recorded) Exchange(x *dissect.Exchange) {
	x.Facts()
	r.ex, r.order = append(r.ex, x), append(r.order, true)
}

func (r *recorded) Event(e *dissect.Event) { r.ev, r.order = append(r.ev, e), append(r.order, false) }

func record(b *testing.B, name string) *recorded {
	b.Helper()
	r := &recorded{}
	d := dissect.New(dissect.Options{Ports: pcaps.BrokerPorts(), Detect: true, Decoder: dissectDecoder}, r)
	if _, err := reassembly.ReadFiles(context.Background(), []string{filepath.Join("..", "pcaps", name)}, reassembly.Options{}, d); err != nil {
		b.Skipf("%s: %v", name, err)
	}
	d.Finish()
	return r
}

// BenchmarkAnalyzer measures the analysis alone (the exchanges are
// dissected and their facts computed before the timer starts), all three
// reports built at the end, per exchange.
func BenchmarkAnalyzer(b *testing.B) {
	for _, name := range []string{"group-rebalance-kgo.pcap", "lossy-network.pcap", "txn-fenced.pcap"} {
		b.Run(name, func(b *testing.B) {
			r := record(b, name)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				a := New(Options{})
				i, j := 0, 0
				for _, isEx := range r.order {
					if isEx {
						a.Exchange(r.ex[i])
						i++
					} else {
						a.Event(r.ev[j])
						j++
					}
				}
				a.Groups()
				a.Transactions()
				a.Findings()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(r.ex)), "ns/exchange")
		})
	}
}
