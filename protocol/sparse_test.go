package protocol

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSparseLimitsCountNodesMade: MaxNodes counts the nodes a decode
// makes (sparse.go), so an ApiVersions response of 5,000 ranges passes a
// cap of 1,000 nodes when the ranges are skimmed, and fails it, where the
// full decode does, when they are kept.
func TestSparseLimitsCountNodesMade(t *testing.T) {
	resp := kmsg.NewApiVersionsResponse()
	resp.Version = 3
	for k := range 5000 {
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: int16(k), MaxVersion: 3})
	}
	b := resp.AppendTo(nil)
	full := Decoder{MaxNodes: 1000}
	kept := Decoder{MaxNodes: 1000, Sparse: true}
	skim := Decoder{MaxNodes: 1000, Sparse: true, SparseDrop: NewRoleSet(RoleAPIRanges)}
	ft, kt, st := full.DecodeBody(KeyApiVersions, 3, true, b), kept.DecodeBody(KeyApiVersions, 3, true, b), skim.DecodeBody(KeyApiVersions, 3, true, b)
	if ft.Err == nil || !errors.Is(ft.Err, ErrTooManyNodes) || ft.Limits&LimitNodes == 0 {
		t.Fatalf("full decode: error %v, limits %v; want the node cap", ft.Err, ft.Limits)
	}
	if kt.Err == nil || kt.Err.Error() != ft.Err.Error() {
		t.Errorf("sparse decode keeping the ranges: error %v, want the full decode's %v", kt.Err, ft.Err)
	}
	if st.Err != nil || st.Limits != 0 || st.nodes > 12 {
		t.Errorf("sparse decode skimming the ranges: error %v, limits %v, %d nodes; want none, none, a handful", st.Err, st.Limits, st.nodes)
	}
}

// TestNodeCapFollowsMemory: the default node cap is DefaultMaxNodes or
// what MaxMemory pays for at nodeCost a node, whichever is more; an
// explicit MaxNodes is kept as given.
func TestNodeCapFollowsMemory(t *testing.T) {
	for _, c := range []struct {
		d    Decoder
		want int
	}{
		{Decoder{}, 0}, // DefaultMaxMemory (256 MiB) pays for about 1.3 million: set below
		{Decoder{MaxMemory: 128 << 20}, DefaultMaxNodes}, // kwire's default quarter: 645,000
		{Decoder{MaxMemory: 1 << 30}, int((1 << 30) / nodeCost)},
		{Decoder{MaxMemory: -1}, DefaultMaxNodes},
		{Decoder{MaxMemory: 1 << 30, MaxNodes: 1000}, 1000},
	} {
		want := c.want
		if c.d.MaxMemory == 0 {
			want = max(DefaultMaxNodes, int(DefaultMaxMemory/nodeCost))
		}
		if got := c.d.NodeCap(); got != want {
			t.Errorf("MaxMemory %d, MaxNodes %d: cap %d, want %d", c.d.MaxMemory, c.d.MaxNodes, got, want)
		}
	}
	if n := (&Decoder{MaxMemory: 1 << 30}).NodeCap(); n < 5_000_000 {
		t.Errorf("1 GiB pays for %d nodes, want over 5 million (nodeCost %d)", n, nodeCost)
	}
}
