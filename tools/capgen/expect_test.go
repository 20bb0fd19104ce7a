package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestExpectations checks every pcaps/*.expect.json against its capture
// at the wire level, with the kmsg-based summarizer (not kwire): the
// client IDs, requests, error codes, throttles, groups generation by
// generation (each member's SyncGroup assignment, or its KIP-848
// heartbeat assignment at its member epoch), leaves and their reasons,
// transactional producers' IDs, epochs and outcomes, isolation levels,
// injected delays and dropped segments. CAPGEN_PCAPS_DIR checks a fresh
// run instead (go run . -out DIR).
func TestExpectations(t *testing.T) {
	dir := filepath.Join("..", "..", "pcaps")
	if d := os.Getenv("CAPGEN_PCAPS_DIR"); d != "" {
		dir = d
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.expect.json"))
	if len(files) == 0 {
		t.Skipf("no expectation files in %s", dir)
	}
	want := map[string]bool{}
	for _, s := range situationScenarios() {
		want[expectFile(s.file)] = true
	}
	for _, f := range files {
		if !want[filepath.Base(f)] {
			t.Errorf("%s: no scenario writes it", f)
		}
		delete(want, filepath.Base(f))
	}
	for f := range want {
		t.Errorf("%s: missing", f)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".expect.json"), func(t *testing.T) {
			x, err := readExpectation(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := summarize(filepath.Join(dir, x.Capture))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range checkExpectation(s, x) {
				t.Error(e)
			}
		})
	}
}

// TestCheckExpectationFails makes sure the checker can fail: a capture
// checked against another capture's expectations, and an expectation
// with one assignment changed.
func TestCheckExpectationFails(t *testing.T) {
	dir := filepath.Join("..", "..", "pcaps")
	x, err := readExpectation(filepath.Join(dir, "group-rebalance-kafkapython.expect.json"))
	if err != nil {
		t.Skip(err)
	}
	s, err := summarize(filepath.Join(dir, x.Capture))
	if err != nil {
		t.Fatal(err)
	}
	if errs := checkExpectation(s, x); len(errs) != 0 {
		t.Fatalf("the real expectation fails: %v", errs)
	}
	g := x.Groups[0].Generations[1].Members[0]
	g.Assigned = map[string][]int32{rebalanceTopic: {3}}
	if errs := checkExpectation(s, x); len(errs) == 0 {
		t.Error("a changed assignment passes")
	}
	other, err := summarize(filepath.Join(dir, "group-rebalance-kcat.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if errs := checkExpectation(other, x); len(errs) == 0 {
		t.Error("another capture passes")
	}
}

// checkExpectation returns what in x the capture summarized by s does not
// hold.
func checkExpectation(s *summary, x *expectation) []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	// Client IDs: exactly those the expectation names.
	var have, want []string
	for id := range s.clientIDs {
		have = append(have, id)
	}
	for _, c := range x.Clients {
		want = append(want, c.ClientID)
	}
	sort.Strings(have)
	sort.Strings(want)
	if !slices.Equal(have, want) {
		fail("client IDs %v, expected %v", have, want)
	}
	for _, r := range x.Wire.Requests {
		if !s.hasRequest(r) {
			fail("no %s request", r)
		}
	}
	for k, n := range x.Wire.Errors {
		if s.errs[k] < n {
			fail("%d of %q, want at least %d (have %v)", s.errs[k], k, n, s.errs)
		}
	}
	if x.Wire.NoOtherErrors {
		for k := range s.errs {
			if _, ok := x.Wire.Errors[k]; !ok {
				fail("unexpected error %q", k)
			}
		}
	}
	for _, f := range x.Wire.Features {
		if s.apis[f] == 0 {
			fail("no %q", f)
		}
	}
	errs = append(errs, checkThrottles(s, x)...)
	for _, id := range x.Wire.SkipsApiVersions {
		skipped := false
		for _, c := range s.list {
			if c.clientID == id && c.firstAPI != "" && c.firstAPI != "ApiVersions" {
				skipped = true
			}
		}
		if !skipped {
			fail("%s opens every connection with ApiVersions", id)
		}
	}
	for id, n := range x.Wire.MinConnections {
		got := 0
		for _, c := range s.list {
			if c.clientID == id {
				got++
			}
		}
		if got < n {
			fail("%s opened %d connections, want at least %d", id, got, n)
		}
	}
	for k, n := range x.Wire.MinRequests {
		id, api, _ := strings.Cut(k, " ")
		got := 0
		for _, e := range s.exchanges {
			if e.clientID == id && kmsg.NameForKey(e.key) == api {
				got++
			}
		}
		if got < n {
			fail("%s sent %d %s requests, want at least %d", id, got, api, n)
		}
	}
	for _, u := range x.Wire.Unadvertised {
		found := false
		for _, e := range s.exchanges {
			if fmt.Sprintf("%s v%d", kmsg.NameForKey(e.key), e.version) != u || e.conn.advertised == nil {
				continue
			}
			if max, ok := e.conn.advertised[e.key]; !ok || e.version > max {
				found = true
			}
		}
		if !found {
			fail("no %s above the range advertised on its connection", u)
		}
	}
	if s.retrans < x.Wire.MinRetransmissions {
		fail("%d retransmitted segments, want at least %d", s.retrans, x.Wire.MinRetransmissions)
	}
	if m := x.Wire.MaxRetransmissions; m != nil && s.retrans+s.late > *m {
		fail("%d retransmitted and %d out-of-order segments, want at most %d", s.retrans, s.late, *m)
	}
	for api, n := range x.Wire.SlowResponses {
		got := 0
		for _, e := range s.exchanges {
			if kmsg.NameForKey(e.key) == api && e.resp != nil && e.respStart.Sub(e.reqEnd).Milliseconds() >= int64(x.Wire.SlowMs) {
				got++
			}
		}
		if got < n {
			fail("%d %s responses came %d ms or more after their request, want at least %d", got, api, x.Wire.SlowMs, n)
		}
	}
	errs = append(errs, checkDrops(s, x)...)
	for _, g := range x.Groups {
		if g.Protocol == "consumer" {
			errs = append(errs, checkGroup848(s, g)...)
		} else {
			errs = append(errs, checkClassicGroup(s, g)...)
		}
	}
	errs = append(errs, checkProducers(s, x)...)
	for _, c := range x.Consumers {
		level := int8(0)
		if c.IsolationLevel == "read_committed" {
			level = 1
		}
		n := 0
		for _, e := range s.exchanges {
			if f, ok := e.req.(*kmsg.FetchRequest); ok && e.clientID == c.ClientID {
				n++
				if f.IsolationLevel != level {
					fail("%s fetched with isolation level %d, want %s", c.ClientID, f.IsolationLevel, c.IsolationLevel)
					break
				}
			}
		}
		if n == 0 {
			fail("%s sent no Fetch", c.ClientID)
		}
	}
	return errs
}

// hasRequest reports whether the capture holds a request "API vN" (or
// "API", any version).
func (s *summary) hasRequest(r string) bool {
	if strings.Contains(r, " v") {
		return s.apis[r] > 0
	}
	for _, e := range s.exchanges {
		if kmsg.NameForKey(e.key) == r {
			return true
		}
	}
	return false
}

type throttler interface{ Throttle() (int32, bool) }

// checkThrottles counts responses with ThrottleMillis > 0 per API and
// client, against the throttle injections and x.Wire.ThrottledResponses.
func checkThrottles(s *summary, x *expectation) []string {
	var errs []string
	got := map[string]int{} // "API clientID"
	perAPI := map[string]int{}
	for _, e := range s.exchanges {
		if t, ok := e.resp.(throttler); ok {
			if ms, _ := t.Throttle(); ms > 0 {
				got[kmsg.NameForKey(e.key)+" "+e.clientID]++
				perAPI[kmsg.NameForKey(e.key)]++
			}
		}
	}
	expected := map[string]int{}
	for _, in := range x.Injections {
		if in.ThrottleMs > 0 {
			expected[in.API+" "+in.ClientID] += in.Count
		}
	}
	for k, n := range got {
		if expected[k] != n {
			errs = append(errs, fmt.Sprintf("%d throttled responses for %q, injected %d", n, k, expected[k]))
		}
	}
	for k, n := range expected {
		if got[k] != n {
			errs = append(errs, fmt.Sprintf("%d throttled responses for %q, injected %d", got[k], k, n))
		}
	}
	for api, n := range x.Wire.ThrottledResponses {
		if perAPI[api] < n {
			errs = append(errs, fmt.Sprintf("%d throttled %s responses, want at least %d", perAPI[api], api, n))
		}
	}
	return errs
}

// checkDrops finds each segment the wire dropped: twice in the capture
// when it was captured before the drop, at least once (the
// retransmission) when not.
func checkDrops(s *summary, x *expectation) []string {
	var errs []string
	for _, in := range x.Injections {
		if in.Kind != "drop" {
			continue
		}
		if len(in.Segments) != in.Count {
			errs = append(errs, fmt.Sprintf("drop %s: %d segments listed, count %d", in.Direction, len(in.Segments), in.Count))
		}
		for _, seg := range in.Segments {
			var c *conn
			for _, o := range s.list {
				if o.client == fmt.Sprint(seg.ClientPort) {
					c = o
				}
			}
			if c == nil {
				errs = append(errs, fmt.Sprintf("dropped segment: no connection from client port %d", seg.ClientPort))
				continue
			}
			h := &c.down
			if in.Direction == "to-broker" {
				h = &c.up
			}
			n, min := h.copies(seg.RelSeq, seg.Len), 1
			if seg.Captured {
				min = 2
			}
			if n < min {
				errs = append(errs, fmt.Sprintf("segment %s at %d+%d on port %d captured %d times, want at least %d",
					in.Direction, seg.RelSeq, seg.Len, seg.ClientPort, n, min))
			}
		}
	}
	return errs
}

// checkClassicGroup finds each generation's assignments in SyncGroup
// responses and each member's leave (or its absence).
func checkClassicGroup(s *summary, g *expectGroup) []string {
	var errs []string
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Sprintf("group %s: ", g.Group)+fmt.Sprintf(format, args...))
	}
	for _, gen := range g.Generations {
		for _, m := range gen.Members {
			var got map[string][]int32
			found := false
			for _, e := range s.exchanges {
				req, ok := e.req.(*kmsg.SyncGroupRequest)
				resp, ok2 := e.resp.(*kmsg.SyncGroupResponse)
				if !ok || !ok2 || req.Group != g.Group || req.Generation != gen.Generation || req.MemberID != m.MemberID || resp.ErrorCode != 0 {
					continue
				}
				var a kmsg.ConsumerMemberAssignment
				if err := a.ReadFrom(resp.MemberAssignment); err != nil && len(resp.MemberAssignment) > 0 {
					fail("SyncGroup assignment of %s does not decode: %v", m.MemberID, err)
					continue
				}
				got = map[string][]int32{}
				for _, t := range a.Topics {
					got[t.Topic] = t.Partitions
				}
				found = true
			}
			if !found {
				fail("generation %d: no SyncGroup response for member %s (%s)", gen.Generation, m.Name, m.MemberID)
			} else if !sameAssignment(got, m.Assigned) {
				fail("generation %d: member %s was assigned %s on the wire, %s by its client", gen.Generation, m.Name,
					formatAssignment(got), formatAssignment(m.Assigned))
			}
		}
	}
	for _, m := range g.Members {
		var leaves []kmsg.LeaveGroupRequestMember
		joinsStatic := false
		for _, e := range s.exchanges {
			switch req := e.req.(type) {
			case *kmsg.LeaveGroupRequest:
				if req.Group != g.Group {
					continue
				}
				if req.MemberID == m.MemberID && req.Version < 3 {
					leaves = append(leaves, kmsg.LeaveGroupRequestMember{MemberID: req.MemberID})
				}
				for _, lm := range req.Members {
					if lm.MemberID == m.MemberID {
						leaves = append(leaves, lm)
					}
				}
			case *kmsg.JoinGroupRequest:
				if req.Group == g.Group && e.clientID == m.ClientID && req.InstanceID != nil && m.InstanceID != nil && *req.InstanceID == *m.InstanceID {
					joinsStatic = true
				}
			}
		}
		switch m.End {
		case "leave":
			if len(leaves) == 0 {
				fail("member %s (%s) left without a LeaveGroup on the wire", m.Name, m.MemberID)
			} else if m.LeaveReason != nil && (leaves[0].Reason == nil || *leaves[0].Reason != *m.LeaveReason) {
				fail("member %s: LeaveGroup reason %v, want %q", m.Name, leaves[0].Reason, *m.LeaveReason)
			}
		default:
			if len(leaves) > 0 {
				fail("member %s (%s, end %s) sent a LeaveGroup", m.Name, m.MemberID, m.End)
			}
		}
		if m.InstanceID != nil && !joinsStatic {
			fail("member %s: no JoinGroup with group instance ID %s", m.Name, *m.InstanceID)
		}
	}
	return errs
}

// checkGroup848 follows each member's ConsumerGroupHeartbeat responses:
// the assignment its client reported at an epoch must be one it held on
// the wire at that epoch (a member keeps its epoch while it gives up
// partitions, so it holds several).
func checkGroup848(s *summary, g *expectGroup) []string {
	var errs []string
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Sprintf("group %s: ", g.Group)+fmt.Sprintf(format, args...))
	}
	names := s.topicNames()
	type state struct {
		assigned map[string][]int32
		byEpoch  map[int32][]map[string][]int32
		leaves   []int32
	}
	members := map[string]*state{}
	for _, e := range s.exchanges {
		req, ok := e.req.(*kmsg.ConsumerGroupHeartbeatRequest)
		if !ok || req.Group != g.Group {
			continue
		}
		st := members[req.MemberID]
		if st == nil {
			st = &state{byEpoch: map[int32][]map[string][]int32{}}
			members[req.MemberID] = st
		}
		if req.MemberEpoch < 0 {
			st.leaves = append(st.leaves, req.MemberEpoch)
		}
		resp, ok := e.resp.(*kmsg.ConsumerGroupHeartbeatResponse)
		if !ok || resp.ErrorCode != 0 {
			continue
		}
		if resp.Assignment != nil {
			st.assigned = map[string][]int32{}
			for _, t := range resp.Assignment.Topics {
				st.assigned[names[t.TopicID]] = t.Partitions
			}
		}
		if resp.MemberEpoch > 0 {
			st.byEpoch[resp.MemberEpoch] = append(st.byEpoch[resp.MemberEpoch], st.assigned)
		}
	}
	for _, gen := range g.Generations {
		for _, m := range gen.Members {
			st := members[m.MemberID]
			if st == nil {
				fail("no ConsumerGroupHeartbeat from member %s (%s)", m.Name, m.MemberID)
				continue
			}
			if m.MemberEpoch == nil {
				fail("member %s has no member epoch in the expectation", m.Name)
				continue
			}
			held, ok := st.byEpoch[*m.MemberEpoch]
			if !ok {
				fail("member %s never given epoch %d", m.Name, *m.MemberEpoch)
			} else if !slices.ContainsFunc(held, func(a map[string][]int32) bool { return sameAssignment(a, m.Assigned) }) {
				var hs []string
				for _, a := range held {
					hs = append(hs, formatAssignment(a))
				}
				fail("epoch %d: member %s held %v on the wire, never %s as its client reported", *m.MemberEpoch, m.Name,
					hs, formatAssignment(m.Assigned))
			}
		}
	}
	for _, m := range g.Members {
		st := members[m.MemberID]
		if st == nil {
			fail("no ConsumerGroupHeartbeat from member %s (%s)", m.Name, m.MemberID)
			continue
		}
		want := map[string]int32{"leave": -1, "static-leave": -2}[m.End]
		switch {
		case want != 0 && !slices.Contains(st.leaves, want):
			fail("member %s (end %s): no heartbeat with member epoch %d (have %v)", m.Name, m.End, want, st.leaves)
		case want == 0 && len(st.leaves) > 0:
			fail("member %s (end %s) sent a leave heartbeat %v", m.Name, m.End, st.leaves)
		}
	}
	return errs
}

// topicNames maps topic IDs to names from the capture's Metadata
// responses.
func (s *summary) topicNames() map[[16]byte]string {
	out := map[[16]byte]string{}
	for _, e := range s.exchanges {
		if md, ok := e.resp.(*kmsg.MetadataResponse); ok {
			for _, t := range md.Topics {
				if t.Topic != nil {
					out[t.TopicID] = *t.Topic
				}
			}
		}
	}
	return out
}

// checkProducers follows each transactional producer's InitProducerID and
// EndTxn exchanges.
func checkProducers(s *summary, x *expectation) []string {
	var errs []string
	for _, p := range x.Producers {
		fail := func(format string, args ...any) {
			errs = append(errs, fmt.Sprintf("producer %s: ", p.ClientID)+fmt.Sprintf(format, args...))
		}
		initOK := false
		var ends []*exchange
		adds, offsets := 0, map[string]int{}
		for _, e := range s.exchanges {
			if e.clientID != p.ClientID {
				continue
			}
			switch req := e.req.(type) {
			case *kmsg.InitProducerIDRequest:
				resp, ok := e.resp.(*kmsg.InitProducerIDResponse)
				if ok && resp.ErrorCode == 0 && req.TransactionalID != nil && *req.TransactionalID == *p.TransactionalID &&
					resp.ProducerID == p.ProducerID && len(p.Epochs) > 0 && resp.ProducerEpoch == p.Epochs[0] {
					initOK = true
				}
			case *kmsg.EndTxnRequest:
				ends = append(ends, e)
			case *kmsg.AddPartitionsToTxnRequest:
				adds++
			case *kmsg.AddOffsetsToTxnRequest:
				offsets[req.Group]++
			case *kmsg.TxnOffsetCommitRequest:
				offsets[req.Group]++
			}
		}
		if !initOK {
			fail("no InitProducerID answered with producer ID %d epoch %v", p.ProducerID, p.Epochs)
		}
		switch p.TxnVersion {
		case "v1":
			if adds == 0 && len(p.Transactions) > 0 {
				fail("no AddPartitionsToTxn")
			}
		case "v2":
			if adds > 0 {
				fail("%d AddPartitionsToTxn with transactions v2", adds)
			}
		}
		if len(ends) != len(p.Transactions) {
			fail("%d EndTxn requests, %d transactions", len(ends), len(p.Transactions))
			continue
		}
		for i, t := range p.Transactions {
			e := ends[i]
			req := e.req.(*kmsg.EndTxnRequest)
			if req.TransactionalID != *p.TransactionalID || req.ProducerID != p.ProducerID || req.ProducerEpoch != t.Epoch {
				fail("transaction %d: EndTxn for %s %d epoch %d, want epoch %d", i+1, req.TransactionalID, req.ProducerID, req.ProducerEpoch, t.Epoch)
			}
			wantCommit := t.Outcome != "abort"
			if req.Commit != wantCommit {
				fail("transaction %d (%s): EndTxn commit %v", i+1, t.Outcome, req.Commit)
			}
			resp, ok := e.resp.(*kmsg.EndTxnResponse)
			if !ok {
				fail("transaction %d: EndTxn not answered", i+1)
				continue
			}
			gotErr := ""
			if resp.ErrorCode != 0 {
				gotErr = kerr.ErrorForCode(resp.ErrorCode).(*kerr.Error).Message
			}
			if wantErr := deref(t.Error); gotErr != wantErr {
				fail("transaction %d: EndTxn answered %q, the client got %q", i+1, gotErr, wantErr)
			}
			if t.Group != nil && offsets[*t.Group] < 2 {
				fail("transaction %d: no AddOffsetsToTxn and TxnOffsetCommit for group %s", i+1, *t.Group)
			}
			// KIP-890: EndTxn v5 answers the next epoch.
			if req.Version >= 5 && resp.ErrorCode == 0 {
				next := slices.Index(p.Epochs, t.Epoch) + 1
				if next <= 0 || next >= len(p.Epochs) || resp.ProducerEpoch != p.Epochs[next] {
					fail("transaction %d: EndTxn v5 bumped the epoch to %d, the client reported %v", i+1, resp.ProducerEpoch, p.Epochs)
				}
			}
		}
	}
	return errs
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
