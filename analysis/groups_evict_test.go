package analysis

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// joinListing is a JoinGroup v5 exchange of group whose response, to
// its leader ids[0], lists ids as the members of generation gen; frame
// numbers its packets.
func joinListing(group string, gen int32, ids []string, at time.Time, frame int64) *dissect.Exchange {
	return joinListingStatic(group, gen, ids, nil, at, frame)
}

// joinListingStatic is joinListing with the members' group instance IDs
// (KIP-345): instances[i] is ids[i]'s, none when nil.
func joinListingStatic(group string, gen int32, ids, instances []string, at time.Time, frame int64) *dissect.Exchange {
	conn := &reassembly.Conn{A: netip.MustParseAddrPort("10.0.0.5:40001"), B: netip.MustParseAddrPort("10.0.0.9:9092"), SawSYN: true}
	meta := []byte{0, 1, 0, 0, 0, 1, 0, 1, 't', 0, 0, 0, 0}
	req := kmsg.NewPtrJoinGroupRequest()
	req.SetVersion(5)
	req.Group, req.MemberID, req.ProtocolType = group, ids[0], "consumer"
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 30000
	req.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: meta}}
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.SetVersion(5)
	resp.Generation, resp.Protocol, resp.LeaderID, resp.MemberID = gen, kmsg.StringPtr("range"), ids[0], ids[0]
	for i, id := range ids {
		m := kmsg.NewJoinGroupResponseMember()
		m.MemberID, m.ProtocolMetadata = id, meta
		if instances != nil {
			m.InstanceID = &instances[i]
		}
		resp.Members = append(resp.Members, m)
	}
	x := &dissect.Exchange{Conn: conn, Client: conn.A, Broker: conn.B, Kind: dissect.KindPaired,
		APIKey: req.Key(), APIVersion: 5, ClientID: "c",
		Request:  &dissect.Frame{FirstPacket: frame, LastPacket: frame, Time: at, End: at, Tree: recordsDecoder.DecodeBody(req.Key(), 5, false, req.AppendTo(nil))},
		Response: &dissect.Frame{FirstPacket: frame + 1, LastPacket: frame + 1, Time: at, End: at, Tree: recordsDecoder.DecodeBody(req.Key(), 5, true, resp.AppendTo(nil))}}
	x.Facts()
	return x
}

// memberIDs are n member IDs "m<i>-<tag>".
func memberIDs(n int, tag string) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = "m" + strconv.Itoa(i) + "-" + tag
	}
	return ids
}

// TestGroupsLiveMembersBounded: a JoinGroup response listing more members
// than the budget holds keeps the first ones listed, within the budget,
// and counts the others as unfollowed sightings, in the group and in the
// generation: it does not keep them all past the budget, and it does not
// pass over every member kept for each one that comes (a budget full of
// members still in their group made 100,000 take longer than minutes).
func TestGroupsLiveMembersBounded(t *testing.T) {
	const n = 10000
	a := New(Options{Groups: true, MaxMemory: 2 << 20})
	a.Exchange(joinListing("g", 1, memberIDs(n, "a"), s0, 1))
	if a.mem.used > a.mem.max {
		t.Errorf("%d bytes kept, budget %d", a.mem.used, a.mem.max)
	}
	g := a.Groups().Groups[0]
	kept := len(g.Members)
	if kept < 100 || kept >= n || g.Dropped.Unfollowed != int64(n-kept) || g.Dropped.Members != 0 {
		t.Fatalf("%d members kept, dropped %+v, of %d", kept, g.Dropped, n)
	}
	// The first listed, all still in the group.
	ids := map[string]bool{}
	for _, m := range g.Members {
		if m.End != nil {
			t.Errorf("%s ended %s", m.MemberID, *m.End)
		}
		ids[m.MemberID] = true
	}
	for _, id := range memberIDs(kept, "a") {
		if !ids[id] {
			t.Fatalf("%s not kept", id)
		}
	}
	gn := g.Generations[0]
	if len(gn.Members) != kept || !strings.Contains(gn.CauseDetail, fmt.Sprintf("; %d sightings of members not followed (--max-analysis-memory)", n-kept)) {
		t.Errorf("generation: %d members, %q", len(gn.Members), gn.CauseDetail)
	}
}

// TestGroupsChurnEvictsOut: generations that each list new member IDs,
// without a LeaveGroup, leave the members of the generation before out:
// past the budget those go (the oldest first), not the new ones, which are
// all kept; nothing is unfollowed.
func TestGroupsChurnEvictsOut(t *testing.T) {
	const gens, n = 30, 1000
	a := New(Options{Groups: true, MaxMemory: 1 << 20})
	for k := 1; k <= gens; k++ {
		a.Exchange(joinListing("g", int32(k), memberIDs(n, strconv.Itoa(k)), s0.Add(time.Duration(k)*time.Second), int64(2*k)))
		if a.mem.used > a.mem.max {
			t.Fatalf("generation %d: %d bytes kept, budget %d", k, a.mem.used, a.mem.max)
		}
	}
	g := a.Groups().Groups[0]
	if g.GenerationCount != gens || g.Dropped.Unfollowed != 0 || int64(len(g.Members))+g.Dropped.Members != gens*n {
		t.Fatalf("%d generations, %d members kept, dropped %+v", g.GenerationCount, len(g.Members), g.Dropped)
	}
	last := g.Generations[len(g.Generations)-1]
	if last.Generation != gens || len(last.Members) != n {
		t.Fatalf("last generation %d with %d members", last.Generation, len(last.Members))
	}
	// The latest generation's members are all kept; what else is kept
	// is the newest of the one before.
	seen := map[string]bool{}
	for _, m := range g.Members {
		seen[m.MemberID] = true
	}
	for _, id := range memberIDs(n, strconv.Itoa(gens)) {
		if !seen[id] {
			t.Fatalf("%s of the latest generation not kept", id)
		}
	}
	for _, m := range g.Members {
		if !strings.HasSuffix(m.MemberID, "-"+strconv.Itoa(gens)) && !strings.HasSuffix(m.MemberID, "-"+strconv.Itoa(gens-1)) {
			t.Errorf("%s kept: older than the generation before the latest", m.MemberID)
		}
	}
}

// TestGroupsEvictOldestEndedFirst: members that ended go in the order
// they ended (not the order they joined), one that came back stays, and
// members still in the group stay however small the budget.
func TestGroupsEvictOldestEndedFirst(t *testing.T) {
	s := newSynth(t, Options{Findings: true}) // no timeline: members only
	s.a.Exchange(joinListing("g", 1, memberIDs(6, "a"), s0, 1))
	leave := func(at time.Duration, id string) {
		l := kmsg.NewPtrLeaveGroupRequest()
		l.Version, l.Group, l.MemberID = 2, "g", id
		s.ex("c", at, time.Millisecond, l, kmsg.NewPtrLeaveGroupResponse())
	}
	for i, id := range []string{"m3-a", "m1-a", "m5-a", "m4-a"} {
		leave(time.Duration(i+1)*time.Second, id)
	}
	// m4 comes back: a JoinGroup answered after its leave.
	j := kmsg.NewPtrJoinGroupRequest()
	j.Version, j.Group, j.MemberID, j.ProtocolType = 5, "g", "m4-a", "consumer"
	j.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range"}}
	jr := kmsg.NewPtrJoinGroupResponse()
	jr.Generation, jr.LeaderID, jr.MemberID = 1, "m0-a", "m4-a"
	s.ex("c", 10*time.Second, time.Millisecond, j, jr)

	gt := s.a.groups
	var order []string
	for {
		before := s.a.groups.groups["g"].dropped.Members
		s.a.mem.max = s.a.mem.used - 1
		gt.shed()
		g := gt.groups["g"]
		if g.dropped.Members == before {
			break
		}
		for _, m := range g.order {
			if !m.kept && !slices.Contains(order, m.id) {
				order = append(order, m.id)
			}
		}
	}
	if fmt.Sprint(order) != "[m3-a m1-a m5-a]" {
		t.Errorf("dropped in order %v, want [m3-a m1-a m5-a] (the order they left)", order)
	}
	r := s.a.Groups().Groups[0]
	var kept []string
	for _, m := range r.Members {
		kept = append(kept, m.MemberID)
	}
	slices.Sort(kept)
	if fmt.Sprint(kept) != "[m0-a m2-a m4-a]" || r.Dropped.Members != 3 || gt.ended.n != 0 {
		t.Errorf("kept %v, dropped %+v, %d still evictable", kept, r.Dropped, gt.ended.n)
	}
}

// BenchmarkGroupsBudget measures the groups report, per member, over one
// JoinGroup response listing n members (live members past the budget) and
// over generations of 1,000 new members each (members out of the latest
// generation evicted), with 1 MiB: the cost of one must not grow with n.
func BenchmarkGroupsBudget(b *testing.B) {
	for _, n := range []int{10_000, 40_000, 160_000} {
		b.Run(fmt.Sprintf("listing/n=%d", n), func(b *testing.B) {
			x := joinListing("g", 1, memberIDs(n, "a"), s0, 1)
			for b.Loop() {
				a := New(Options{Groups: true, MaxMemory: 1 << 20})
				a.Exchange(x)
				if g := a.Groups().Groups[0]; int64(len(g.Members))+g.Dropped.Unfollowed != int64(n) {
					b.Fatalf("%d kept, dropped %+v", len(g.Members), g.Dropped)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/member")
		})
		b.Run(fmt.Sprintf("churn/n=%d", n), func(b *testing.B) {
			var xs []*dissect.Exchange
			for k := 1; k <= n/1000; k++ {
				xs = append(xs, joinListing("g", int32(k), memberIDs(1000, strconv.Itoa(k)), s0.Add(time.Duration(k)*time.Second), int64(2*k)))
			}
			for b.Loop() {
				a := New(Options{Groups: true, MaxMemory: 1 << 20})
				for _, x := range xs {
					a.Exchange(x)
				}
				if g := a.Groups().Groups[0]; int64(len(g.Members))+g.Dropped.Members != int64(n) {
					b.Fatalf("%d kept, dropped %+v", len(g.Members), g.Dropped)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/member")
		})
	}
}

// TestGroupsOutcomeWhenGenerationDropped: a member the next generation
// leaves out ends as it does with every generation kept (gone within its
// session timeout, expired past it), when the budget dropped the
// generation it was in: decided from what the member kept, not from the
// pair of generations no longer there.
func TestGroupsOutcomeWhenGenerationDropped(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		want  string
	}{{5 * time.Second, endGone}, {60 * time.Second, endExpired}} {
		run := func(cut bool) MemberReport {
			a := New(Options{Groups: true})
			a.Exchange(joinListing("g", 1, []string{"a", "b"}, s0, 1))
			a.Exchange(joinListing("g", 2, []string{"b"}, s0.Add(c.after), 3))
			if cut {
				// A budget just short: the oldest goes, generation 1.
				a.mem.max = a.mem.used - 1
				a.groups.shed()
			}
			g := a.Groups().Groups[0]
			if cut && (g.Dropped != Dropped{Generations: 1}) {
				t.Fatalf("dropped %+v, want the first generation only", g.Dropped)
			}
			for _, m := range g.Members {
				if m.MemberID == "a" {
					return m
				}
			}
			t.Fatalf("member a not kept")
			return MemberReport{}
		}
		full, cut := run(false), run(true)
		if full.End == nil || *full.End != c.want {
			t.Fatalf("%v: every generation kept: a ends %v, want %s", c.after, full.End, c.want)
		}
		if cut.End == nil || *cut.End != *full.End || cut.EndTime != full.EndTime || cut.MissedHeartbeats != full.MissedHeartbeats {
			t.Errorf("%v: first generation dropped: a ends %v at %v (missed %d), want %s at %v (missed %d)",
				c.after, cut.End, cut.EndTime, cut.MissedHeartbeats, *full.End, full.EndTime, full.MissedHeartbeats)
		}
	}
}

// TestGroupsStaticReplacedMany: a generation whose members all took the
// places of the previous one's static members (their group instance IDs)
// is a static rejoin of them all, each predecessor replaced, matched by
// instance ID in order (two members of one instance ID each side pair up
// first with first).
func TestGroupsStaticReplacedMany(t *testing.T) {
	const n = 2000
	inst := make([]string, n)
	for i := range inst {
		inst[i] = "i" + strconv.Itoa(i%(n-1)) // i0 twice each side
	}
	a := New(Options{Groups: true})
	a.Exchange(joinListingStatic("g", 1, memberIDs(n, "a"), inst, s0, 1))
	a.Exchange(joinListingStatic("g", 2, memberIDs(n, "b"), inst, s0.Add(time.Second), 3))
	g := a.Groups().Groups[0]
	gn := g.Generations[1]
	if gn.Cause != causeStaticRejoin || len(gn.CauseMembers) != n {
		t.Fatalf("generation 2: %s, %d members", gn.Cause, len(gn.CauseMembers))
	}
	if !strings.Contains(gn.CauseDetail, "static member i0: c#2 replaced c; ") || !strings.Contains(gn.CauseDetail, "static member i0: m1999-b replaced m1999-a") {
		t.Errorf("detail %.200s...", gn.CauseDetail)
	}
	ends := 0
	for _, m := range g.Members {
		if strings.HasSuffix(m.MemberID, "-a") && m.End != nil && *m.End == endReplaced {
			ends++
		}
	}
	if ends != n {
		t.Errorf("%d members replaced, want %d", ends, n)
	}
}

// churnID is the ID of the i-th group of a churn of groups, 300 bytes.
func churnID(i int) string { return fmt.Sprintf("g%05d-%s", i, strings.Repeat("z", 293)) }

// TestGroupsEvictWhole: thousands of groups each with a member still in
// it do not keep them all past the budget (each kept whole before): the
// least recently active go whole, counted, and what is kept stays within
// the budget; a group heard from all along stays, however old.
func TestGroupsEvictWhole(t *testing.T) {
	const n = 3000
	s := newSynth(t, Options{Groups: true, MaxMemory: 1 << 20})
	hb := func(at time.Duration) {
		h := kmsg.NewPtrHeartbeatRequest()
		h.Version, h.Group, h.Generation, h.MemberID = 4, "steady", 1, "s0"
		s.ex("c", at, time.Millisecond, h, kmsg.NewPtrHeartbeatResponse())
	}
	s.a.Exchange(joinListing("steady", 1, []string{"s0"}, s0, 1))
	for i := range n {
		at := time.Duration(i+1) * time.Millisecond
		s.a.Exchange(joinListing(churnID(i), 1, []string{"m" + strconv.Itoa(i)}, s0.Add(at), int64(10+2*i)))
		if i%50 == 0 {
			hb(at)
		}
		if s.a.mem.used > 1<<20 {
			t.Fatalf("group %d: %d bytes kept, budget %d", i, s.a.mem.used, 1<<20)
		}
	}
	r := s.a.Groups()
	kept := len(r.Groups)
	if kept < 100 || kept > 1000 || r.GroupsNotKept != int64(n+1-kept) {
		t.Fatalf("%d groups kept, %d not kept, of %d", kept, r.GroupsNotKept, n+1)
	}
	// Kept: the newest churn groups, by ID here, and "steady" last.
	if r.Groups[kept-1].GroupID != "steady" {
		t.Fatalf("last group kept %.20s, want steady (heard from every 50 groups)", r.Groups[kept-1].GroupID)
	}
	for j, g := range r.Groups[:kept-1] {
		if want := churnID(n - (kept - 1) + j); g.GroupID != want {
			t.Fatalf("group %d kept is %.10s, want %.10s: the newest", j, g.GroupID, want)
		}
		if len(g.Members) != 1 || g.GenerationCount != 1 || len(g.Generations) != 1 || g.Dropped.Evicted != 0 || g.Dropped.MaybeEvicted {
			t.Fatalf("%.10s: %d members, %d generations, dropped %+v", g.GroupID, len(g.Members), g.GenerationCount, g.Dropped)
		}
	}
	if g := r.Groups[kept-1]; len(g.Members) != 1 || g.Members[0].Heartbeats != n/50 {
		t.Errorf("steady: %d members, %d heartbeats, want 1 and %d", len(g.Members), g.Members[0].Heartbeats, n/50)
	}
	if newest := r.Groups[kept-2]; newest.Dropped != (Dropped{}) || len(newest.Timeline) != 2 {
		t.Errorf("newest group: dropped %+v, %d events", newest.Dropped, len(newest.Timeline))
	}
	// What evicted groups kept is all given back: with nothing but the
	// IDs remembered, the budget holds the kept groups alone.
	gt := s.a.groups
	for gt.lru.n > 1 {
		gt.evictGroup(gt.lru.first)
	}
	gt.evictGroup(gt.lru.first)
	rest := int64(len(gt.evictedIDs))*costEvictedID + 8*int64(len(gt.evictedBloom))
	if s.a.mem.used != rest || len(gt.groups) != 0 || gt.ended.n != 0 {
		t.Errorf("every group evicted: %d bytes kept, want %d (the IDs remembered); %d groups, %d ended members", s.a.mem.used, rest, len(gt.groups), gt.ended.n)
	}
}

// TestGroupsEvictedSeenAgain: a group evicted whole and seen again starts
// afresh, and says how often it was evicted before, its counts those of
// what came after; past the IDs remembered exactly, one evicted is still
// said to maybe have been, and a new one is not.
func TestGroupsEvictedSeenAgain(t *testing.T) {
	a := New(Options{Groups: true, MaxMemory: 1 << 20})
	frame := int64(1)
	at := s0
	join := func(id string, gen int32) {
		at = at.Add(time.Millisecond)
		frame += 2
		a.Exchange(joinListing(id, gen, []string{"m-" + id[:min(6, len(id))]}, at, frame))
	}
	churn := func(from, to int) {
		for i := from; i < to; i++ {
			join(churnID(i), 1)
		}
	}
	find := func(id string) *GroupReport {
		for _, g := range a.Groups().Groups {
			if g.GroupID == id {
				return &g
			}
		}
		return nil
	}
	join("again", 5)
	join("again", 6)
	churn(0, 1000)
	if find("again") != nil {
		t.Fatal("again kept after 1,000 newer groups")
	}
	join("again", 7)
	first := at
	g := find("again")
	if g == nil || g.Dropped.Evicted != 1 || g.Dropped.MaybeEvicted || g.GenerationCount != 1 || g.Generations[0].Generation != 7 || time.Time(g.First) != first {
		t.Fatalf("again seen again: %+v", g)
	}
	churn(1000, 2000)
	join("again", 8)
	if g := find("again"); g == nil || g.Dropped.Evicted != 2 || g.GenerationCount != 1 || g.Generations[0].Generation != 8 {
		t.Fatalf("again seen a third time: %+v", g)
	}
	// Past the IDs remembered exactly (a 32nd of 1 MiB: 819), a group
	// evicted and seen again may have been; new groups were not.
	gt := a.groups
	churn(2000, 4000)
	if !gt.forgot || len(gt.evictedIDs) != gt.maxEvictedIDs() {
		t.Fatalf("%d IDs remembered of %d evicted, forgot %v", len(gt.evictedIDs), gt.notKept, gt.forgot)
	}
	late := churnID(3990 - gt.lru.n - 100) // evicted after the table filled
	join(late, 2)
	join(churnID(10), 2) // evicted before: remembered
	for i := 5000; i < 5100; i++ {
		join(churnID(i), 1)
	}
	maybe, counted, fresh := 0, 0, 0
	for _, g := range a.Groups().Groups {
		switch {
		case g.Dropped.MaybeEvicted:
			maybe++
			if g.GroupID != late {
				t.Errorf("%.10s said to maybe have been evicted", g.GroupID)
			}
		case g.Dropped.Evicted > 0:
			counted++
		default:
			fresh++
		}
	}
	if maybe != 1 || counted != 1 {
		t.Errorf("%d groups said to maybe have been evicted, %d counted, want 1 each", maybe, counted)
	}
}

// TestGroupsLeaveByInstanceMany: a LeaveGroup v3 batch naming 1,000 of
// 2,000 static members by group instance ID alone (KIP-345) ends those,
// found by map (it was a pass over every member per member leaving), and
// no other; a SyncGroup of the older generation finds it by number.
func TestGroupsLeaveByInstanceMany(t *testing.T) {
	const n = 2000
	ids := memberIDs(n, "a")
	inst := make([]string, n)
	for i := range inst {
		inst[i] = "i" + strconv.Itoa(i)
	}
	s := newSynth(t, Options{Groups: true})
	s.a.Exchange(joinListingStatic("g", 1, ids, inst, s0, 101))
	s.a.Exchange(joinListingStatic("g", 2, ids, inst, s0.Add(time.Second), 103))
	l := kmsg.NewPtrLeaveGroupRequest()
	l.Version, l.Group = 3, "g"
	lr := kmsg.NewPtrLeaveGroupResponse()
	for i := 0; i < n; i += 2 {
		lm := kmsg.NewLeaveGroupRequestMember()
		lm.InstanceID = &inst[i]
		l.Members = append(l.Members, lm)
		rm := kmsg.NewLeaveGroupResponseMember()
		rm.InstanceID = &inst[i]
		lr.Members = append(lr.Members, rm)
	}
	s.ex("c", 2*time.Second, time.Millisecond, l, lr)
	sg := kmsg.NewPtrSyncGroupRequest()
	sg.Version, sg.Group, sg.Generation, sg.MemberID = 3, "g", 1, ids[1]
	s.ex("c", 3*time.Second, time.Millisecond, sg, kmsg.NewPtrSyncGroupResponse())
	g := s.a.Groups().Groups[0]
	left := 0
	for _, m := range g.Members {
		i, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(m.MemberID, "m"), "-a"))
		switch {
		case i%2 == 0 && (m.End == nil || *m.End != endLeft):
			t.Fatalf("%s (instance i%d) did not leave: end %v", m.MemberID, i, m.End)
		case i%2 == 1 && m.End != nil:
			t.Fatalf("%s ended %s", m.MemberID, *m.End)
		case i%2 == 0:
			left++
		}
	}
	if left != n/2 || len(g.Generations) != 2 || g.GenerationCount != 2 || len(g.Generations[0].Refs) != 2 || g.Generations[0].Refs[1].Frame != 3 { // the SyncGroup: frames 3, 4
		t.Errorf("%d left, %d generations (%d counted), generation 1 refs %v", left, len(g.Generations), g.GenerationCount, g.Generations[0].Refs)
	}
}

// TestGroupsEvictAccounting: hundreds of groups in 1 MiB, each joined,
// synced with assignments, committed to, left and rejoined at random,
// most evicted whole on the way: within the budget after every
// exchange, and, every group evicted at the end, every byte they were
// charged given back (only the IDs remembered stay).
func TestGroupsEvictAccounting(t *testing.T) {
	s := newSynth(t, Options{Groups: true, MaxMemory: 1 << 20})
	rng := uint64(7)
	rand := func(n int) int {
		rng = rng*6364136223846793005 + 1442695040888963407
		return int(rng>>33) % n
	}
	gens := map[int]int32{}
	at := time.Duration(0)
	for i := range 6000 {
		at += time.Millisecond
		k := rand(400)
		id := fmt.Sprintf("grp%03d-%s", k, strings.Repeat("q", 100+k))
		ids := memberIDs(1+rand(40), strconv.Itoa(k))
		switch op := rand(5); op {
		case 0, 1:
			gens[k]++
			s.frame += 2
			s.a.Exchange(joinListing(id, gens[k], ids, s0.Add(at), s.frame-1))
		case 2:
			sg := kmsg.NewPtrSyncGroupRequest()
			sg.Version, sg.Group, sg.Generation, sg.MemberID = 3, id, gens[k], ids[0]
			a := kmsg.NewConsumerMemberAssignment()
			a.Topics = []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t" + strconv.Itoa(rand(5)), Partitions: []int32{int32(rand(64)), int32(rand(64))}}}
			sr := kmsg.NewPtrSyncGroupResponse()
			sr.MemberAssignment = a.AppendTo(nil)
			s.ex("c", at, time.Millisecond, sg, sr)
		case 3:
			oc := kmsg.NewPtrOffsetCommitRequest()
			oc.Version, oc.Group, oc.Generation, oc.MemberID = 8, id, gens[k], ids[0]
			ot := kmsg.NewOffsetCommitRequestTopic()
			ot.Topic = "t" + strconv.Itoa(rand(5))
			for p := range 1 + rand(8) {
				pp := kmsg.NewOffsetCommitRequestTopicPartition()
				pp.Partition, pp.Offset = int32(p), int64(i)
				ot.Partitions = append(ot.Partitions, pp)
			}
			oc.Topics = []kmsg.OffsetCommitRequestTopic{ot}
			s.ex("c", at, time.Millisecond, oc, kmsg.NewPtrOffsetCommitResponse())
		case 4:
			l := kmsg.NewPtrLeaveGroupRequest()
			l.Version, l.Group, l.MemberID = 2, id, ids[rand(len(ids))]
			s.ex("c", at, time.Millisecond, l, kmsg.NewPtrLeaveGroupResponse())
		}
		if s.a.mem.used > 1<<20 {
			t.Fatalf("exchange %d: %d bytes kept, budget %d", i, s.a.mem.used, 1<<20)
		}
	}
	gt := s.a.groups
	r := s.a.Groups()
	marked := 0
	for _, g := range r.Groups {
		if g.Dropped.Evicted > 0 {
			marked++
		}
	}
	t.Logf("%d groups kept (%d marked evicted before), %d not kept, %d bytes", len(r.Groups), marked, r.GroupsNotKept, s.a.mem.used)
	if r.GroupsNotKept < 400 || len(r.Groups) < 20 || marked == 0 {
		t.Fatalf("%d groups kept (%d marked evicted before), %d not kept", len(r.Groups), marked, r.GroupsNotKept)
	}
	for gt.lru.n > 0 {
		gt.evictGroup(gt.lru.first)
	}
	rest := int64(len(gt.evictedIDs))*costEvictedID + 8*int64(len(gt.evictedBloom))
	if s.a.mem.used != rest || gt.ended.n != 0 || len(gt.groups) != 0 {
		t.Errorf("every group evicted: %d bytes kept, want %d; %d ended members, %d groups", s.a.mem.used, rest, gt.ended.n, len(gt.groups))
	}
}

// TestGroupsKIP848DescribedOut: a KIP-848 member that stops heartbeating
// without leaving, which a ConsumerGroupDescribe sent after its last
// exchange no longer lists, is out of the group (evictable, as a member
// that left is) and ends expired by the describe; one that heartbeats
// again after it is a member again.
func TestGroupsKIP848DescribedOut(t *testing.T) {
	for _, back := range []bool{false, true} {
		s := newSynth(t, Options{Groups: true})
		beat := func(id string, at time.Duration, epoch int32) {
			hb := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			hb.Group, hb.MemberID, hb.MemberEpoch, hb.SubscribedTopicNames = "g", id, epoch, []string{"t"}
			hbr := kmsg.NewPtrConsumerGroupHeartbeatResponse()
			hbr.MemberID, hbr.MemberEpoch, hbr.HeartbeatIntervalMillis = kmsg.StringPtr(id), 3, 5000
			s.ex("c-"+id, at, time.Millisecond, hb, hbr)
		}
		beat("m1", time.Second, 0)
		beat("m2", time.Second, 0)
		beat("m1", 30*time.Second, 3)
		dm := kmsg.NewConsumerGroupDescribeResponseGroupMember()
		dm.MemberID, dm.MemberEpoch = "m1", 4
		dg := kmsg.NewConsumerGroupDescribeResponseGroup()
		dg.Group, dg.Epoch, dg.AssignmentEpoch, dg.Members = "g", 4, 4, []kmsg.ConsumerGroupDescribeResponseGroupMember{dm}
		dq := kmsg.NewPtrConsumerGroupDescribeRequest()
		dq.Groups = []string{"g"}
		dr := kmsg.NewPtrConsumerGroupDescribeResponse()
		dr.Groups = []kmsg.ConsumerGroupDescribeResponseGroup{dg}
		s.ex("admin", 31*time.Second, time.Millisecond, dq, dr)
		if back {
			beat("m2", 32*time.Second, 3)
		}
		ends := map[string]string{}
		for _, m := range s.a.Groups().Groups[0].Members {
			e := "member"
			if m.End != nil {
				e = *m.End + "@" + m.EndTime.String()
			}
			ends[m.MemberID] = e
		}
		want := map[string]string{"m1": "member", "m2": "expired@12:00:31.000"}
		evictable := 1
		if back {
			want["m2"], evictable = "member", 0
		}
		if !maps.Equal(ends, want) || s.a.groups.ended.n != evictable {
			t.Errorf("back=%v: ends %v, want %v; %d evictable, want %d", back, ends, want, s.a.groups.ended.n, evictable)
		}
	}
}

// TestEvictedIDsSameEveryRun: once more groups were evicted whole than
// their IDs could be remembered, the Bloom filter of them all says which
// new groups may have been evicted before; its false positives must be
// the same on every run of the same capture. A seeded hash (maphash)
// marked other groups on each run: kwire groups --max-analysis-memory
// 1MiB on 40,000 groups of one member printed 0 and then 2 "history may
// be partial" notes.
func TestEvictedIDsSameEveryRun(t *testing.T) {
	maybe := func() []string {
		tr := newGroupTracker(&budget{max: 1 << 20})
		for i := range 100_000 {
			tr.rememberEvicted(fmt.Sprintf("evicted-%d", i), 0)
		}
		if !tr.forgot {
			t.Fatal("100,000 IDs all remembered: the filter is not asked")
		}
		if n, _ := tr.evictedBefore("evicted-7"); n != 1 {
			t.Errorf("evicted-7 evicted %d times before, want 1", n)
		}
		var out []string
		for i := range 20_000 {
			id := fmt.Sprintf("new-%d", i)
			if n, may := tr.evictedBefore(id); n > 0 {
				t.Fatalf("%s evicted %d times before, never was", id, n)
			} else if may {
				out = append(out, id)
			}
		}
		return out
	}
	a, b := maybe(), maybe()
	// 100,000 IDs of 4 bits each in 2^19 bits: about 8% false positives
	if len(a) < 800 || len(a) > 2400 {
		t.Errorf("%d of 20,000 new groups may have been evicted, want about 1,600", len(a))
	}
	if !slices.Equal(a, b) {
		t.Errorf("the groups that may have been evicted differ between two runs: %d and %d", len(a), len(b))
	}
}
