package statsview

import (
	"strings"
	"testing"

	"github.com/kwire/kwire/dissect/profile"
)

// TestWriteDiffGroupsByClient: a client's changes come under one heading
// whatever their order in profile.Compare's list, which gives the
// versions a client loses after the cluster's ranges; clients come
// first, then brokers, then the cluster, and a heading's changes keep
// their order.
func TestWriteDiffGroupsByClient(t *testing.T) {
	p := profile.Present
	changes := []profile.Change{
		{Kind: profile.KindClient, Client: "b", Item: "b", Before: p},
		{Kind: profile.KindTopic, Client: "c", Item: "orders", After: p},
		{Kind: profile.KindBroker, Broker: "10.0.0.9:9092", Item: "10.0.0.9:9092", Before: p},
		{Kind: profile.KindAdvertised, Item: "Produce", Before: "3-13", After: "3-7"},
		{Kind: profile.KindLost, Client: "b", Item: "Produce", Before: "v2", After: "v3-13", Note: "version removed: needs v3 or later"},
		{Kind: profile.KindLost, Client: "b", Item: "Fetch", Before: "v2", After: "v4-18"},
	}
	var w strings.Builder
	if err := WriteDiff(&w, "x.pcap", "y.pcap", changes, Options{}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(w.String()), "\n")[1:] {
		got = append(got, strings.Join(strings.Fields(l), " "))
	}
	want := []string{
		"client b",
		"- client b",
		"~ lostVersion Produce: v2 → v3-13 (version removed: needs v3 or later)",
		"~ lostVersion Fetch: v2 → v4-18",
		"client c",
		"+ topic orders",
		"broker 10.0.0.9:9092",
		"- broker 10.0.0.9:9092",
		"cluster",
		"~ advertised Produce: 3-13 → 3-7",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if changes[2].Kind != profile.KindBroker {
		t.Error("WriteDiff reordered its caller's slice")
	}
}
