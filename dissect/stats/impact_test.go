package stats

import "testing"

func TestLostImpact(t *testing.T) {
	r := &Range{Min: 3, Max: 9}
	for _, c := range []struct {
		lost  []int16
		after *Range
		want  string
		text  string
	}{
		{[]int16{10, 11}, r, ImpactNegotiateDown, "will negotiate down to v9"},
		{[]int16{1, 10}, r, ImpactVersionRemoved, "version removed: needs v3 or later"},
		{[]int16{2}, nil, ImpactAPIRemoved, "API removed"},
	} {
		got := LostImpact(c.lost, c.after)
		if got != c.want || ImpactText(got, c.after) != c.text {
			t.Errorf("%v against %v: %s %q, want %s %q", c.lost, c.after, got, ImpactText(got, c.after), c.want, c.text)
		}
	}
}

// TestLostAPINotEveryBroker: an API that one broker after advertises and
// another does not is not in the cluster range after, and a client that
// used it meets it on some brokers only: "apiNotOnEveryBroker", not
// "apiRemoved", which is kept for an API no broker after advertises.
func TestLostAPINotEveryBroker(t *testing.T) {
	ad := func(ranges ...Range) BrokerVersions {
		return BrokerVersions{Effective: 0, Advertisements: []Advertisement{{Error: "NONE", Ranges: ranges}}}
	}
	before := &VersionsReport{Brokers: []BrokerVersions{ad(Range{68, "ConsumerGroupHeartbeat", 0, 1}, Range{72, "PushTelemetry", 0, 0})},
		Clients: []ClientVersions{{APIs: []APIUse{{68, "ConsumerGroupHeartbeat", []int16{1}, 1}, {72, "PushTelemetry", []int16{0}, 2}}}}}
	after := &VersionsReport{Brokers: []BrokerVersions{ad(Range{68, "ConsumerGroupHeartbeat", 0, 1}), ad()}}
	got := map[string]string{}
	for _, l := range Compare(before, after).Lost {
		got[l.API] = l.Impact + " / " + ImpactText(l.Impact, l.After)
	}
	if got["ConsumerGroupHeartbeat"] != "apiNotOnEveryBroker / API not advertised by every broker" || got["PushTelemetry"] != "apiRemoved / API removed" || len(got) != 2 {
		t.Errorf("lost %q", got)
	}
}
