package statsview

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kwire/kwire/analysis"
)

// lanesReport is a group of n members over three generations: member i
// has partition i in the first two, and the odd members are gone from
// the third (the even ones keep theirs).
func lanesReport(n int) *analysis.GroupReport {
	g := &analysis.GroupReport{GroupID: "g"}
	gens := make([]analysis.GenerationReport, 3)
	for i := range gens {
		gens[i].Generation = int32(i + 1)
	}
	for i := range n {
		id := "m-" + strconv.Itoa(i)
		g.Members = append(g.Members, analysis.MemberReport{MemberID: id, Name: "c" + strconv.Itoa(i)})
		tp := []analysis.TopicPartition{{Topic: "t", Partitions: []int32{int32(i)}}}
		gens[0].Members = append(gens[0].Members, analysis.GenerationMember{MemberID: id, Assigned: tp})
		gens[1].Members = append(gens[1].Members, analysis.GenerationMember{MemberID: id, Assigned: tp})
		if i%2 == 0 {
			gens[2].Members = append(gens[2].Members, analysis.GenerationMember{MemberID: id, Assigned: tp})
		}
	}
	g.Generations = gens
	return g
}

// TestWriteLanes: a row per member, a cell per generation: its partitions,
// "·" before it joined, "✗ gone" the first generation without it; a member
// listed twice in a generation shows its last entry.
func TestWriteLanes(t *testing.T) {
	g := lanesReport(3)
	late := analysis.GenerationMember{MemberID: "m-late", Assigned: []analysis.TopicPartition{{Topic: "t", Partitions: []int32{7}}}}
	g.Members = append(g.Members, analysis.MemberReport{MemberID: "m-late", Name: "late"})
	g.Generations[2].Members = append(g.Generations[2].Members, late,
		analysis.GenerationMember{MemberID: "m-0", Assigned: []analysis.TopicPartition{{Topic: "t", Partitions: []int32{9}}}})
	var w strings.Builder
	writeLanes(&w, g, GroupsOptions{}, nil)
	got := strings.Fields(strings.ReplaceAll(w.String(), "\n", " | "))
	want := strings.Fields("SWIM LANES (what each member had, generation by generation) | " +
		"MEMBER 1 2 3 | c0 0 0 9 | c1 1 1 ✗ gone | c2 2 2 2 | late · · 7 |")
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("lanes:\n%s\nwant (spacing aside):\n%s", w.String(), strings.Join(want, " "))
	}
}

// BenchmarkWriteLanes: the lanes of a group of n members, per member.
// Each row finds its member in each generation by ID: the cost of a row
// does not grow with n.
func BenchmarkWriteLanes(b *testing.B) {
	for _, n := range []int{1000, 4000, 16000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			g := lanesReport(n)
			b.ReportAllocs()
			for b.Loop() {
				var w strings.Builder
				writeLanes(&w, g, GroupsOptions{}, nil)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/member")
		})
	}
}

// TestMovedText: a generation's moves are one item per topic and pair of
// members, partitions as ranges, in the order of their first move; a
// partition with no owner before or after says "-".
func TestMovedText(t *testing.T) {
	s := func(v string) *string { return &v }
	names := map[string]string{"m-a": "a", "m-b": "b", "m-c": "c"}
	name := func(id *string) string {
		if id == nil {
			return "-"
		}
		return names[*id]
	}
	moved := []analysis.Move{
		{Topic: "t", Partition: 3, From: s("m-a"), To: s("m-b")},
		{Topic: "t", Partition: 0, From: s("m-c"), To: s("m-b")},
		{Topic: "t", Partition: 2, From: s("m-a"), To: s("m-b")},
		{Topic: "u", Partition: 2, From: s("m-a"), To: s("m-b")},
		{Topic: "t", Partition: 4, From: s("m-a"), To: s("m-b")},
		{Topic: "t", Partition: 7, From: nil, To: s("m-c")},
	}
	got := strings.Join(movedText(moved, name), ", ")
	want := "t[2-4] a→b, t[0] c→b, u[2] a→b, t[7] -→c"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
