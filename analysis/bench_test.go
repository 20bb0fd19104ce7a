package analysis

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// initProducers is n InitProducerId v1 exchanges of n transactional IDs,
// their facts computed.
func initProducers(n int) []*dissect.Exchange {
	conn := &reassembly.Conn{A: netip.MustParseAddrPort("10.0.0.5:40001"), B: netip.MustParseAddrPort("10.0.0.9:9092"), SawSYN: true}
	xs := make([]*dissect.Exchange, n)
	for i := range xs {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.SetVersion(1)
		id := fmt.Sprintf("tx%07d", i)
		req.TransactionalID = &id
		resp := kmsg.NewPtrInitProducerIDResponse()
		resp.SetVersion(1)
		resp.ProducerID, resp.ProducerEpoch = int64(1000+i), 0
		at := s0.Add(time.Duration(i) * time.Millisecond)
		xs[i] = &dissect.Exchange{Conn: conn, Client: conn.A, Broker: conn.B, Kind: dissect.KindPaired,
			APIKey: req.Key(), APIVersion: 1, ClientID: "adv",
			Request:  &dissect.Frame{FirstPacket: int64(2*i + 1), LastPacket: int64(2*i + 1), Time: at, End: at, Tree: recordsDecoder.DecodeBody(req.Key(), 1, false, req.AppendTo(nil))},
			Response: &dissect.Frame{FirstPacket: int64(2*i + 2), LastPacket: int64(2*i + 2), Time: at, End: at, Tree: recordsDecoder.DecodeBody(req.Key(), 1, true, resp.AppendTo(nil))}}
		xs[i].Facts()
	}
	return xs
}

// BenchmarkManyProducers measures the transactions report over n
// InitProducerId exchanges of n transactional IDs, per exchange, with the
// default budget (which keeps them all) and with 1 MiB (which keeps about
// 2,500, the oldest dropped as each new one comes): the cost of one must
// not grow with n (a hostile capture names 100,000).
func BenchmarkManyProducers(b *testing.B) {
	for _, budget := range []int64{0, 1 << 20} {
		for _, n := range []int{10_000, 20_000, 40_000} {
			b.Run(fmt.Sprintf("budget=%d/n=%d", budget, n), func(b *testing.B) {
				xs := initProducers(n)
				b.ReportAllocs()
				for b.Loop() {
					a := New(Options{MaxMemory: budget})
					for _, x := range xs {
						a.Exchange(x)
					}
					if r := a.Transactions(); int64(len(r.Producers))+r.Dropped.Producers != int64(n) {
						b.Fatalf("%d producers and %d dropped, want %d", len(r.Producers), r.Dropped.Producers, n)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/exchange")
			})
		}
	}
}

// BenchmarkJoinGroupMembers measures the groups report over one JoinGroup
// v5 exchange whose response lists n members, per member: finding a
// member in its generation must not scan the generation.
func BenchmarkJoinGroupMembers(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			conn := &reassembly.Conn{A: netip.MustParseAddrPort("10.0.0.5:40001"), B: netip.MustParseAddrPort("10.0.0.9:9092"), SawSYN: true}
			req := kmsg.NewPtrJoinGroupRequest()
			req.SetVersion(5)
			req.Group, req.MemberID, req.ProtocolType = "g", "m-0", "consumer"
			req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0}}}
			resp := kmsg.NewPtrJoinGroupResponse()
			resp.SetVersion(5)
			resp.Generation, resp.Protocol, resp.LeaderID, resp.MemberID = 1, kmsg.StringPtr("range"), "m-0", "m-0"
			for i := range n {
				m := kmsg.NewJoinGroupResponseMember()
				m.MemberID = "m-" + strconv.Itoa(i)
				m.ProtocolMetadata = []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0}
				resp.Members = append(resp.Members, m)
			}
			x := &dissect.Exchange{Conn: conn, Client: conn.A, Broker: conn.B, Kind: dissect.KindPaired,
				APIKey: req.Key(), APIVersion: 5, ClientID: "c",
				Request:  &dissect.Frame{FirstPacket: 1, LastPacket: 1, Time: s0, End: s0, Tree: recordsDecoder.DecodeBody(req.Key(), 5, false, req.AppendTo(nil))},
				Response: &dissect.Frame{FirstPacket: 2, LastPacket: 2, Time: s0, End: s0, Tree: recordsDecoder.DecodeBody(req.Key(), 5, true, resp.AppendTo(nil))}}
			x.Facts()
			b.ReportAllocs()
			for b.Loop() {
				a := New(Options{})
				a.Exchange(x)
				if r := a.Groups(); len(r.Groups) != 1 || len(r.Groups[0].Generations) != 1 || len(r.Groups[0].Generations[0].Members) != n {
					b.Fatalf("report: %+v", r.Groups)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/member")
		})
	}
}
