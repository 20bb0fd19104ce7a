package protocol

import (
	"slices"
	"testing"

	"github.com/kwire/kwire/internal/poison"
)

// TestTreeRecycle: a recycled Tree is handed out again by a later decode
// (one allocation fewer a tree than Release), as a fresh one: the next
// tree decoded into it is the one a fresh Tree gets.
func TestTreeRecycle(t *testing.T) {
	if poison.Released {
		t.Skip("kwirepoison: released memory is poisoned, never reused")
	}
	for _, c := range benchBodies() {
		fresh := DecodeBody(c.key, c.ver, c.response, c.body)
		want := dumpTree(fresh.Root)
		released := testing.AllocsPerRun(50, func() { DecodeBody(c.key, c.ver, c.response, c.body).Release() })
		recycled := testing.AllocsPerRun(50, func() { DecodeBody(c.key, c.ver, c.response, c.body).Recycle() })
		if recycled > released-1 {
			t.Errorf("%s: %v allocations a decode recycled, %v released: want one fewer (the Tree)", c.name, recycled, released)
		}
		again := DecodeBody(c.key, c.ver, c.response, c.body)
		if got := dumpTree(again.Root); !slices.Equal(got, want) || again.Err != nil || again.FirstError() != nil || again.KeptBytes() != fresh.KeptBytes() {
			t.Errorf("%s: a tree decoded into a recycled Tree differs:\n%s\nwant\n%s", c.name, got, want)
		}
		again.Recycle()
	}
}

// TestTreeRecyclePoisons: with released memory poisoned, a recycled
// Tree's root reads as RELEASED and the Tree is not handed out again.
func TestTreeRecyclePoisons(t *testing.T) {
	defer func(was bool) { poison.Released = was }(poison.Released)
	poison.Released = true
	c := benchBodies()[0]
	tr := DecodeBody(c.key, c.ver, c.response, c.body)
	tr.Recycle()
	if tr.Root == nil || tr.Root.Name != poison.Marker {
		t.Fatalf("recycled root %+v", tr.Root)
	}
	for range 10 {
		if DecodeBody(c.key, c.ver, c.response, c.body) == tr {
			t.Fatal("a poisoned tree was handed out again")
		}
	}
}
