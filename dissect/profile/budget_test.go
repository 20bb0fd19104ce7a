package profile

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// metadataX is a Metadata v12 exchange of client id on c, answered in 1ms
// (no bytes: the profile reads its header and latency).
func metadataX(c *reassembly.Conn, id string, at time.Duration) *dissect.Exchange {
	return &dissect.Exchange{Conn: c, Client: c.A, Broker: c.B, Kind: dissect.KindPaired, APIKey: 3, APIVersion: 12,
		ClientID: id, Request: &dissect.Frame{Time: t0.Add(at)}, Response: &dissect.Frame{Time: t0.Add(at + time.Millisecond)}}
}

// TestProfileBudget: past its budget a Collector keeps no new client ID,
// counts their requests and connections, and keeps the clients it lists
// exact; a client kept that does more than fits is marked capped; a diff
// against a profile that folded clients says they may be among them.
func TestProfileBudget(t *testing.T) {
	const clients, budget = 1000, 32 << 10
	all, v := NewCollector(nil), NewBoundedCollector(nil, budget)
	for i := range clients {
		c := &reassembly.Conn{Index: i, A: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 40000),
			B: netip.MustParseAddrPort("10.1.0.1:9092")}
		x := metadataX(c, fmt.Sprintf("client-%04d", i), time.Duration(i)*time.Second)
		for _, col := range []*Collector{all, v} {
			col.Exchange(x)
			col.Event(&dissect.Event{Kind: dissect.EventClose, Conn: c})
		}
	}
	if p := all.Profile(); p.Folded != nil || len(p.Clients) != clients {
		t.Fatalf("default budget: %d clients, folded %+v", len(p.Clients), p.Folded)
	}
	p := v.Profile()
	if v.mem > budget {
		t.Errorf("kept %d bytes, budget %d", v.mem, budget)
	}
	f := p.Folded
	if f == nil || f.MaxMemory != budget || len(p.Clients) == 0 || len(p.Clients) == clients ||
		int64(len(p.Clients))+f.Requests != clients || int64(len(p.Clients))+f.Connections != clients || f.BrokerExchanges != 0 {
		t.Fatalf("%d clients kept, folded %+v", len(p.Clients), f)
	}
	for i, cl := range p.Clients {
		if cl.ClientID != fmt.Sprintf("client-%04d", i) || cl.Connections != 1 || cl.Capped ||
			len(cl.APIs) != 1 || !slices.Equal(cl.APIs[0].Versions, []int16{12}) ||
			len(cl.Latency) != 1 || cl.Latency[0].Count != 1 || cl.Latency[0].P99Ms != 1 ||
			len(cl.Sequences) != 1 || cl.Sequences[0].Sequence != "Metadata" {
			t.Fatalf("client %d: %+v", i, cl)
		}
	}
	changes := Compare(all.Profile(), p, DefaultOptions)
	if len(changes) != clients-len(p.Clients) || changes[0].Kind != KindClient || !strings.Contains(changes[0].Note, "may be among them") {
		t.Errorf("%d changes, first %+v", len(changes), changes[0])
	}

	// One client whose exact latencies outgrow the budget: capped, its
	// count short, the budget kept.
	big, bigAll := NewBoundedCollector(nil, 16<<10), NewCollector(nil)
	c := &reassembly.Conn{A: netip.MustParseAddrPort("10.0.0.1:40000"), B: netip.MustParseAddrPort("10.1.0.1:9092")}
	for i := range 3000 {
		x := metadataX(c, "big", time.Duration(i)*time.Second)
		big.Exchange(x)
		bigAll.Exchange(x)
	}
	x := metadataX(c, "big", time.Hour)
	x.APIKey = 19 // CreateTopics
	big.Exchange(x)
	bigAll.Exchange(x)
	x = metadataX(c, "big", 2*time.Hour)
	x.APIKey = 20 // DeleteTopics: one only the full profile has
	bigAll.Exchange(x)
	bp := big.Profile()
	if big.mem > 16<<10 || len(bp.Clients) != 1 || !bp.Clients[0].Capped || bp.Folded != nil ||
		bp.Clients[0].Latency[0].Count >= 3000 || bp.Clients[0].Latency[0].Count < 500 {
		t.Errorf("kept %d bytes; %+v", big.mem, bp.Clients)
	}
	d := Compare(bigAll.Profile(), bp, Options{})
	// CreateTopics did not fit either: every change says it may be the
	// budget's doing.
	if len(d) != 3 || d[1].Kind != KindAPI || d[1].Item != "DeleteTopics" {
		t.Errorf("changes %+v", d)
	}
	for _, ch := range d {
		if ch.Note != CappedNote {
			t.Errorf("change of a capped client without its note: %+v", ch)
		}
	}
}
