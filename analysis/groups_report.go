package analysis

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
)

// GroupsReport is `kwire groups --json`: every group seen, by group ID.
type GroupsReport struct {
	Groups []GroupReport `json:"groups"`
	// MaxMemoryBytes is the budget the reports were kept within
	// (--max-analysis-memory).
	MaxMemoryBytes int64 `json:"maxMemoryBytes"`
	// GroupsNotKept counts the groups evicted whole to stay within it
	// (the least recently active first; Dropped.Evicted): they are not
	// in Groups, and one seen again after is a report of what came
	// after.
	GroupsNotKept int64 `json:"groupsNotKept"`
	// CutExchanges counts the exchanges whose request or response a gap,
	// the capture's snap length or its end cut (dissect.Frame.Cut): not
	// decoded, so what they said of groups is not in Groups.
	CutExchanges int64 `json:"cutExchanges"`
}

// GroupReport is one group.
type GroupReport struct {
	GroupID string `json:"groupId"`
	// File is the capture file the group was seen in when several were
	// read, each a capture of its own (without --merge): a group in two
	// files is two reports, their packet numbers each its file's.
	File string `json:"file,omitempty"`
	// Protocol is how the group is run, Kafka's GroupType (ListGroups
	// v5+, KIP-848): "classic" (JoinGroup/SyncGroup), "consumer"
	// (KIP-848 ConsumerGroupHeartbeat), "share" (KIP-932), "streams"
	// (KIP-1071).
	Protocol     string  `json:"groupType"`
	ProtocolType *string `json:"protocolType" jsonschema:"nullable"` // classic: "consumer", "connect", ...
	Assignor     *string `json:"protocolName" jsonschema:"nullable"` // ProtocolName: the assignor last chosen
	Coordinator  *string `json:"coordinator" jsonschema:"nullable"`  // host:port FindCoordinator named
	// State is the group's state as the latest describe of it said
	// (DescribeGroups, ConsumerGroupDescribe...: "Stable",
	// "PreparingRebalance", "Empty", ...); null when none was captured.
	State *string `json:"state" jsonschema:"nullable"`
	First Time    `json:"first"`
	Last  Time    `json:"last"`
	// GenerationCount counts the distinct generations (member epochs)
	// seen, kept or dropped: a static member taking its predecessor's
	// place without a rebalance (KIP-345) gives an entry of the same
	// number in Generations, counted in StaticRejoins instead. A group
	// deleted and made anew numbers its generations again: those count
	// again. Rebalances counts the generations, kept or dropped, that
	// followed another one and were seen to complete.
	GenerationCount int64 `json:"generationCount"`
	StaticRejoins   int64 `json:"staticRejoins"`
	Rebalances      int64 `json:"rebalances"`
	// RebalanceMs is the time all those rebalances took together (first
	// JoinGroup to last SyncGroup response of each; KIP-848: the first
	// heartbeat answered with the epoch to the last that reconciled),
	// kept or dropped.
	RebalanceMs Millis `json:"rebalanceMs"`

	Members     []MemberReport     `json:"members"`
	Generations []GenerationReport `json:"generations"`
	Commits     []CommitReport     `json:"commits"`
	Errors      []ErrorCount       `json:"errors"`
	Timeline    []Event            `json:"timeline"`
	Dropped     Dropped            `json:"dropped"`
}

// Dropped counts what the memory budget made a group's report leave out:
// the oldest events, generations (all but the latest) and commits, and
// members done with the group (ended, or left out of the latest
// generation's listing), oldest first. Unfollowed counts the sightings of
// members not followed at all: new members still in their group met
// with the budget full of members still in theirs (nothing left to
// evict); they are in no list and no generation, and one seen in several
// exchanges counts once per exchange (its ID is not kept either), so it
// is a count of sightings, not of members; absent when none.
//
// Evicted counts the times a group of its ID (in its capture) was
// evicted whole before this one was made: past the budget, and past
// 1 MiB, the least recently active group goes whole once its own oldest
// events, generations, commits and ended members have (GroupsReport's
// GroupsNotKept counts them all); seen again, it starts afresh. This
// report then holds what came after only: its counts, generations,
// members and commits are not the group's whole history. The IDs
// evicted are remembered by a 64-bit hash, in a thirty-second of the
// budget (of 1 MiB at least); past that, a Bloom filter of them all (in
// a sixteenth) says which may have been: MaybeEvicted, how often
// unknown (a group never evicted is said to maybe have been in a few
// cases, more as evictions pass the filter's size; never the other way
// round). Both absent when not.
type Dropped struct {
	Events       int64 `json:"events"`
	Generations  int64 `json:"generations"`
	Members      int64 `json:"members"`
	Commits      int64 `json:"commits"`
	Unfollowed   int64 `json:"unfollowed,omitempty"`
	Evicted      int64 `json:"evicted,omitempty"`
	MaybeEvicted bool  `json:"maybeEvicted,omitempty"`
}

// Any reports whether anything was dropped.
func (d Dropped) Any() bool { return d != Dropped{} }

// MemberReport is one group member (a member ID).
type MemberReport struct {
	MemberID        string  `json:"memberId"`
	Name            string  `json:"name"` // how the text output names it: its client ID, made unique
	GroupInstanceID *string `json:"groupInstanceId" jsonschema:"nullable"`
	ClientID        *string `json:"clientId" jsonschema:"nullable"`
	Client          *string `json:"client" jsonschema:"nullable"` // host:port of its connection to the coordinator
	First           Time    `json:"first"`
	Last            Time    `json:"last"`
	Joined          Time    `json:"joinTime"`  // its first JoinGroup (or heartbeat with epoch 0)
	Left            Time    `json:"leaveTime"` // its LeaveGroup (or epoch -1/-2 heartbeat)
	LeaveReason     *string `json:"leaveReason" jsonschema:"nullable"`
	// End is how its membership ended: "left", "static-leave" (KIP-848
	// epoch -2), "expired" (removed without leaving: session timeout),
	// "gone" (removed before its session could time out, without a
	// leave the capture holds: a LeaveGroup not captured, an admin's
	// removal), "replaced" (a new member took its group.instance.id),
	// "fenced";
	// null when it was still a member at the end of the capture.
	End                 *string `json:"end" jsonschema:"nullable"`
	EndTime             Time    `json:"endTime"`
	SessionTimeoutMs    *int32  `json:"sessionTimeoutMs" jsonschema:"nullable"`
	RebalanceTimeoutMs  *int32  `json:"rebalanceTimeoutMs" jsonschema:"nullable"`
	HeartbeatIntervalMs *int32  `json:"heartbeatIntervalMs" jsonschema:"nullable"` // KIP-848: the broker's
	Heartbeats          int64   `json:"heartbeats"`
	// MaxHeartbeatGapMs is the longest time between two of its signs of
	// life (heartbeat requests, join and sync answers), the last of them
	// included: from its last sign of life to the end of its membership
	// (EndTime: expired, left, replaced) or, still a member, to the end
	// of the capture (its latest exchange). LateHeartbeats counts gaps of
	// half the session timeout or more (KIP-848, whose session timeout
	// is the broker's and not on the wire: twice the heartbeat interval
	// the broker asked for) that are not missed, MissedHeartbeats gaps of
	// the session timeout or more and the gap that ended in its expiry:
	// each gap is counted in one of them at most.
	MaxHeartbeatGapMs *Millis          `json:"maxHeartbeatGapMs" jsonschema:"nullable"`
	LateHeartbeats    int64            `json:"lateHeartbeats"`
	MissedHeartbeats  int64            `json:"missedHeartbeats"`
	LastHeartbeat     Time             `json:"lastHeartbeatTime"`
	LastHeartbeatRef  *Ref             `json:"lastHeartbeatRef" jsonschema:"nullable"`
	MemberEpoch       *int32           `json:"memberEpoch" jsonschema:"nullable"`  // KIP-848: the latest
	Generation        *int32           `json:"generationId" jsonschema:"nullable"` // classic: the latest it joined
	Assignment        []TopicPartition `json:"assignment" jsonschema:"nullable"`   // the latest; null when never assigned
	Subscription      []string         `json:"subscription" jsonschema:"nullable"`
	// Connect is what a Kafka Connect worker (a group of protocol type
	// "connect") said last; null for other members.
	Connect *ConnectWorker `json:"connect" jsonschema:"nullable"`
	Errors  []ErrorCount   `json:"errors"`
	file    int            // the capture file of its latest exchange
}

// ConnectWorker is what a Kafka Connect worker's group protocol said
// last: its metadata (JoinGroup, DescribeGroups: ConnectProtocolMetadata)
// and its assignment (SyncGroup, the leader's plan, DescribeGroups:
// ConnectProtocolAssignment). The members of a null field were not seen.
type ConnectWorker struct {
	// URL is the worker's REST URL, "<redacted>" when it held a userinfo
	// (user:password@) and was withheld; ConfigOffset the config topic
	// offset it had read to.
	URL          *string `json:"url" jsonschema:"nullable"`
	ConfigOffset *int64  `json:"configOffset" jsonschema:"nullable"`
	// Assignment is its latest assignment; null when none was seen.
	Assignment *ConnectAssignment `json:"assignment" jsonschema:"nullable"`
}

// ConnectAssignment is a Kafka Connect worker's assignment.
type ConnectAssignment struct {
	// Version is the assignment's version: 0 ("default", eager), 1
	// ("compatible", KIP-415), 2 ("sessioned", KIP-507).
	Version int16 `json:"version"`
	// Error is Connect's own code, by name: "NONE", "CONFIG_MISMATCH"
	// (the worker's config offset is not the leader's), else the number.
	Error string `json:"error"`
	// Leader is the leader worker's member ID, LeaderURL its REST URL
	// ("<redacted>" when withheld).
	Leader    string `json:"leader"`
	LeaderURL string `json:"leaderUrl"`
	// ConfigOffset is the config topic offset the assignment was made at.
	ConfigOffset int64 `json:"configOffset"`
	// Connectors are the connectors and tasks assigned, Revoked those
	// revoked (v1+; null when null or v0). Task -1 is the connector
	// instance itself.
	Connectors []ConnectorTasks `json:"connectors"`
	Revoked    []ConnectorTasks `json:"revoked" jsonschema:"nullable"`
	// DelayMs is the delay before a scheduled rebalance (v1+; 0: none).
	DelayMs int32 `json:"delayMs"`
}

// ConnectorTasks is a connector and task IDs of it (-1: the connector
// instance itself), sorted.
type ConnectorTasks struct {
	Connector string  `json:"connector"`
	Tasks     []int32 `json:"tasks"`
}

// TopicPartition is a topic and some of its partitions.
type TopicPartition struct {
	Topic      string  `json:"topic"` // the name, else the topic ID
	Partitions []int32 `json:"partitions"`
}

// GenerationReport is one generation of a classic group, or one member
// epoch of a KIP-848 (share, streams) group, as a whole: a static member
// that takes its predecessor's place without a rebalance gives an entry
// of its own with the same number.
type GenerationReport struct {
	Generation int32 `json:"generationIdOrMemberEpoch"`
	// Epoch says Generation is a KIP-848 member epoch, not a classic
	// generation ID.
	Epoch bool `json:"epoch"`
	// Cause is what started it: "join", "leave", "timeout",
	// "static-rejoin", "subscription" (the same members, a subscription
	// changed), "rejoin" (the same members: a metadata change, a member's
	// own rejoin), "unknown" (the previous one was not captured);
	// CauseMembers the members concerned (member IDs) and CauseDetail the
	// whole story in words, with the members told REBALANCE_IN_PROGRESS
	// before it began.
	Cause        string   `json:"cause"`
	CauseMembers []string `json:"causeMembers"`
	CauseDetail  string   `json:"causeDetail"`
	Leader       *string  `json:"leader" jsonschema:"nullable"`
	Protocol     *string  `json:"protocolName" jsonschema:"nullable"` // ProtocolName: the assignor chosen
	// Start is its first JoinGroup (KIP-848: the first heartbeat answered
	// with the epoch), End its last SyncGroup response (heartbeat
	// answer); DurationMs the time between, for a classic rebalance.
	Start      Time               `json:"startTime"`
	End        Time               `json:"endTime"`
	DurationMs *Millis            `json:"durationMs" jsonschema:"nullable"`
	Members    []GenerationMember `json:"members"`
	// Moved are the partitions whose owner changed since the previous
	// entry (from or to null: unowned).
	Moved    []Move `json:"moved"`
	Refs     []Ref  `json:"refs"`     // JoinGroup, SyncGroup (heartbeat) exchanges, the first 16
	StartRef Ref    `json:"startRef"` // the exchange it began with (its first JoinGroup)
	file     int    // the capture file it began in
}

// GenerationMember is one member of a generation and what it was given.
type GenerationMember struct {
	MemberID string `json:"memberId"`
	Name     string `json:"name"`
	// Via is "rebalance" (classic), "heartbeat" (KIP-848) or
	// "static-rejoin".
	Via         string `json:"via"`
	MemberEpoch *int32 `json:"memberEpoch" jsonschema:"nullable"`
	Leader      bool   `json:"leader"`
	// Assigned is what its SyncGroup response (heartbeat) gave it; Plan
	// what the leader's SyncGroup request planned for it; null when not
	// captured.
	Assigned []TopicPartition `json:"assigned" jsonschema:"nullable"`
	Plan     []TopicPartition `json:"plan" jsonschema:"nullable"`
}

// Move is a partition that changed owner between two entries.
type Move struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	From      *string `json:"from" jsonschema:"nullable"`
	To        *string `json:"to" jsonschema:"nullable"`
}

// CommitReport is one partition's committed offset.
type CommitReport struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Offset    int64   `json:"offset"`
	Metadata  *string `json:"metadata" jsonschema:"nullable"`
	// Generation is the commit's GenerationIdOrMemberEpoch; null for a
	// commit outside the group's generations (-1) or an offset known
	// from an OffsetFetch only.
	Generation    *int32  `json:"generationIdOrMemberEpoch" jsonschema:"nullable"`
	MemberID      *string `json:"memberId" jsonschema:"nullable"`
	Time          Time    `json:"time"`
	Commits       int64   `json:"commits"`
	Stale         int64   `json:"stale"`  // commits from a generation (epoch) the group had left behind, or refused as such
	Errors        int64   `json:"errors"` // commits answered with an error for the partition
	LastError     *string `json:"lastError" jsonschema:"nullable"`
	Fetched       bool    `json:"fetched"`       // known from an OffsetFetch answer, not a commit
	Transactional bool    `json:"transactional"` // by TxnOffsetCommit
	// HighWatermark is the latest a Fetch response gave for the
	// partition, and Lag that minus Offset; FetchOffset the latest
	// position its owner fetched from, FetchLag HighWatermark minus it.
	HighWatermark     *int64 `json:"highWatermark" jsonschema:"nullable"`
	HighWatermarkTime Time   `json:"highWatermarkTime"`
	Lag               *int64 `json:"lag" jsonschema:"nullable"`
	FetchOffset       *int64 `json:"fetchOffset" jsonschema:"nullable"`
	FetchLag          *int64 `json:"fetchLag" jsonschema:"nullable"`
	Ref               Ref    `json:"ref"`
}

// ErrorCount is a Kafka error seen, with what it means here.
type ErrorCount struct {
	Name    string `json:"name"`
	Code    int16  `json:"code"`
	Count   int64  `json:"count"`
	Meaning string `json:"meaning"`
}

// Event is one line of a group's timeline.
type Event struct {
	Time Time `json:"time"`
	// Kind is "join", "sync", "heartbeat", "leave", "epoch" (KIP-848:
	// the member's epoch or assignment changed), "commit" (stale or
	// failed), "expired", "generation" (a new one began), "describe"
	// (an admin's ConsumerGroupDescribe, KIP-848, listed the members).
	Kind       string  `json:"kind"`
	API        string  `json:"api"`
	MemberID   *string `json:"memberId" jsonschema:"nullable"`
	Member     *string `json:"member" jsonschema:"nullable"` // its name
	Error      *string `json:"error" jsonschema:"nullable"`
	Detail     string  `json:"detail"`
	Generation *int32  `json:"generationIdOrMemberEpoch" jsonschema:"nullable"` // a "generation" event's: a generation ID, or a KIP-848 member epoch
	Ref        Ref     `json:"ref"`
}

// Groups returns the groups report so far, every group's report built
// and held at once (GroupReports builds them one at a time).
func (a *Analyzer) Groups() *GroupsReport {
	r := a.GroupsFrame()
	for gr := range a.GroupReports(nil) {
		r.Groups = append(r.Groups, *gr)
	}
	return r
}

// GroupsFrame returns the groups report so far without its groups
// (Groups empty): what is said of them all.
func (a *Analyzer) GroupsFrame() *GroupsReport {
	r := &GroupsReport{Groups: []GroupReport{}, MaxMemoryBytes: a.opts.MaxMemory, CutExchanges: a.cut}
	if a.groups != nil {
		r.GroupsNotKept = a.groups.notKept
	}
	return r
}

// GroupIDs returns the IDs of the groups kept, in the order of their
// reports (GroupReports): those of earlier capture files first, then by
// ID; an ID is there once per file it is in.
func (a *Analyzer) GroupIDs() []string {
	if a.groups == nil {
		return nil
	}
	gs := a.groups.all()
	ids := make([]string, len(gs))
	for i, g := range gs {
		ids[i] = g.id
	}
	return ids
}

// GroupReports yields the report of every group kept whose ID keep
// accepts (nil: all), in the order of GroupIDs, each built when it is
// asked for: a writer that writes each before asking for the next holds
// one at a time.
func (a *Analyzer) GroupReports(keep func(id string) bool) iter.Seq[*GroupReport] {
	return func(yield func(*GroupReport) bool) {
		if a.groups == nil {
			return
		}
		t := a.groups
		t.resolveNames(a.opts.Names)
		for _, g := range t.all() {
			if keep != nil && !keep(g.id) {
				continue
			}
			gr := t.report(g)
			if a.files > 1 {
				gr.File = a.fileNames[g.sc.file]
			}
			if !yield(&gr) {
				return
			}
		}
	}
}

func tpsReport(tps []facts.TopicPartitions) []TopicPartition {
	out := []TopicPartition{}
	for _, tp := range cloneTPs(tps) {
		if len(tp.Partitions) == 0 {
			continue
		}
		out = append(out, TopicPartition{Topic: tp.Label(), Partitions: tp.Partitions})
	}
	return out
}

// connectReport is the report of a Connect worker's state, nil for none.
func connectReport(c *connectState) *ConnectWorker {
	if c == nil {
		return nil
	}
	r := &ConnectWorker{}
	if c.hasWorker {
		u := c.url
		if c.urlWithheld {
			u = redactedMark
		}
		r.URL, r.ConfigOffset = &u, &c.configOffset
	}
	if a := c.asg; a != nil {
		ra := &ConnectAssignment{Version: a.Version, Error: ConnectErrorName(a.Error), Leader: a.Leader, LeaderURL: a.LeaderURL,
			ConfigOffset: a.ConfigOffset, Connectors: connectorsReport(a.Connectors), DelayMs: a.DelayMs}
		if a.LeaderURLWithheld {
			ra.LeaderURL = redactedMark
		}
		if a.Revoked != nil {
			ra.Revoked = connectorsReport(a.Revoked)
		}
		r.Assignment = ra
	}
	return r
}

// redactedMark stands for a value withheld as a credential.
const redactedMark = "<redacted>"

// ConnectErrorName names a Connect assignment's error code as the schema's
// Error field does (protocol.EnumName: "NONE", "CONFIG_MISMATCH"), else
// the number.
func ConnectErrorName(code int16) string {
	if n := protocol.EnumName("ConnectProtocolAssignment", "Error", int64(code)); n != "" {
		return n
	}
	return fmt.Sprint(code)
}

// ConnectorsText writes connectors as ConnectorsString does.
func ConnectorsText(cs []ConnectorTasks) string {
	fc := make([]facts.ConnectorTasks, len(cs))
	for i, c := range cs {
		fc[i] = facts.ConnectorTasks{Connector: c.Connector, Tasks: c.Tasks}
	}
	return ConnectorsString(fc)
}

func connectorsReport(cs []facts.ConnectorTasks) []ConnectorTasks {
	out := []ConnectorTasks{}
	for _, c := range cs {
		ts := c.Tasks
		if ts == nil {
			ts = []int32{}
		}
		out = append(out, ConnectorTasks{Connector: c.Connector, Tasks: ts})
	}
	return out
}

func errorCounts(m map[int16]int64) []ErrorCount {
	out := []ErrorCount{}
	for code, n := range m {
		out = append(out, ErrorCount{Name: protocol.KafkaErrorName(code), Code: code, Count: n, Meaning: errorMeaning(code)})
	}
	slices.SortFunc(out, func(a, b ErrorCount) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Code, b.Code)) })
	return out
}

func i32p(v int32) *int32 {
	if v < 0 {
		return nil
	}
	return &v
}

// names gives every member a name: its client ID, with "#2", "#3" for
// later members of the same client ID; its member ID when it has none.
func names(g *group) map[*member]string {
	ms := slices.Clone(g.order)
	slices.SortStableFunc(ms, func(a, b *member) int { return a.first.Compare(b.first) })
	out := make(map[*member]string, len(ms))
	seen := map[string]int{}
	for _, m := range ms {
		n := m.clientID
		if n == "" {
			n = m.id
		}
		seen[n]++
		if seen[n] > 1 {
			n = fmt.Sprintf("%s#%d", n, seen[n])
		}
		out[m] = n
	}
	return out
}

// cause decides what started gn, given the entry before it (nil: none
// kept), and the members that were removed without a word (expired).
func cause(prev, gn *gen, first bool, alias map[*member]string) (kind string, who []*member, detail string, expired, replaced, quiet []*member) {
	in := func(x *gen, m *member) bool { return x != nil && x.member(m) != nil }
	if gn.static != nil {
		return causeStaticRejoin, []*member{gn.staticBy}, fmt.Sprintf("static member %s: %s took the place of %s without a rebalance (KIP-345)",
			gn.staticBy.instance, alias[gn.staticBy], alias[gn.static]), nil, nil, nil
	}
	var joined, gone []*member
	for _, gm := range gn.members {
		if !in(prev, gm.m) {
			joined = append(joined, gm.m)
		}
	}
	if prev != nil {
		for _, gm := range prev.members {
			m := gm.m
			if in(gn, m) {
				continue
			}
			if gn.epoch && m.last.After(gn.start) && m.end == "" {
				continue // still heartbeating: its epoch lags the group's
			}
			gone = append(gone, m)
		}
	}
	if prev == nil {
		if first && gn.num <= 1 {
			return causeJoin, joined, "the group formed: " + nameList(joined, alias) + " joined", nil, nil, nil
		}
		if first && len(joined) > 0 && allJoinedAt(joined, gn) {
			// Its members all joined here, but a group at generation N
			// had N-1 before it: it did not form here.
			return causeJoin, joined, fmt.Sprintf("the %ss before were not captured; %s joined", genWord(gn), nameList(joined, alias)), nil, nil, nil
		}
		return causeUnknown, nil, fmt.Sprintf("the %s before was not captured", genWord(gn)), nil, nil, nil
	}
	var parts []string
	kind = ""
	// Static members replaced by a newcomer with their instance ID.
	// Each newcomer takes the first gone member of its instance ID not
	// taken yet (found by map: thousands of static members each side
	// made a scan of gone per newcomer quadratic).
	var statics []*member
	var byInstance map[string][]int // gone members by instance ID, in order
	for i, o := range gone {
		if o.instance != "" {
			if byInstance == nil {
				byInstance = map[string][]int{}
			}
			byInstance[o.instance] = append(byInstance[o.instance], i)
		}
	}
	taken := map[*member]bool{} // gone members replaced, and their successors
	for _, n := range joined {
		idx := byInstance[n.instance]
		if n.instance == "" || len(idx) == 0 {
			continue
		}
		o := gone[idx[0]]
		byInstance[n.instance] = idx[1:]
		statics = append(statics, n)
		replaced = append(replaced, o)
		parts = append(parts, fmt.Sprintf("static member %s: %s replaced %s", n.instance, alias[n], alias[o]))
		taken[o], taken[n] = true, true
	}
	if len(taken) > 0 {
		gone = slices.DeleteFunc(gone, func(m *member) bool { return taken[m] })
		joined = slices.DeleteFunc(joined, func(m *member) bool { return taken[m] })
	}
	// Members in both whose subscription changed.
	var changed []*member
	for _, gm := range gn.members {
		if old := prev.member(gm.m); old != nil && old.hasSub && gm.hasSub && !slices.Equal(old.subscription, gm.subscription) {
			changed = append(changed, gm.m)
			parts = append(parts, fmt.Sprintf("%s's subscription changed from %s to %s", alias[gm.m],
				strings.Join(old.subscription, ","), strings.Join(gm.subscription, ",")))
		}
	}
	var left []*member
	for _, m := range gone {
		if !m.left.IsZero() && !m.left.After(maxTime(gn.end, gn.start)) {
			left = append(left, m)
			r := "left"
			switch {
			case m.end == endStaticLeave:
				r = "left for a restart (member epoch -2)"
			case m.leaveReason != "":
				r = "left (" + m.leaveReason + ")"
			}
			parts = append(parts, alias[m]+" "+r)
			continue
		}
		if session := time.Duration(m.sessionMs) * time.Millisecond; m.sessionMs > 0 && !m.lastLive.IsZero() && gn.start.Sub(m.lastLive) < session {
			// Gone before its session could time out: it left, or an
			// admin removed it, by a request the capture does not hold.
			left = append(left, m)
			quiet = append(quiet, m)
			parts = append(parts, fmt.Sprintf("%s left without a LeaveGroup captured (its last sign of life %s before, within its session timeout %s)",
				alias[m], units(gn.start.Sub(m.lastLive)), units(session)))
			continue
		}
		expired = append(expired, m)
		w := alias[m] + " was removed without leaving"
		if !m.lastLive.IsZero() {
			w += fmt.Sprintf(": its last sign of life was %s before", units(gn.start.Sub(m.lastLive)))
			if m.sessionMs > 0 {
				w += fmt.Sprintf(" (session timeout %s)", units(time.Duration(m.sessionMs)*time.Millisecond))
			}
		}
		parts = append(parts, w)
	}
	if len(joined) > 0 {
		parts = append(parts, nameList(joined, alias)+" joined")
	}
	switch {
	case len(statics) > 0:
		kind, who = causeStaticRejoin, statics
	case len(left) > 0:
		kind, who = causeLeave, left
	case len(expired) > 0:
		kind, who = causeTimeout, expired
	case len(joined) > 0:
		kind, who = causeJoin, joined
	case len(changed) > 0:
		kind, who = causeSubscription, changed
	default:
		kind = causeRejoin
		parts = append(parts, "the same members joined again (a member rejoined: a metadata change, or a lost heartbeat)")
	}
	if len(gn.signaled) > 0 {
		parts = append(parts, "told by REBALANCE_IN_PROGRESS: "+nameList(gn.signaled, alias))
	}
	return kind, who, strings.Join(parts, "; "), expired, replaced, quiet
}

func allJoinedAt(ms []*member, gn *gen) bool {
	for _, m := range ms {
		if m.joined.IsZero() || m.joined.After(maxTime(gn.end, gn.start)) {
			return false
		}
	}
	return true
}

func genWord(gn *gen) string {
	if gn.epoch {
		return "epoch"
	}
	return "generation"
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func nameList(ms []*member, alias map[*member]string) string {
	var ns []string
	for _, m := range ms {
		ns = append(ns, alias[m])
	}
	return strings.Join(ns, ", ")
}

func (t *groupTracker) report(g *group) GroupReport {
	alias := names(g)
	// A member dropped (--max-analysis-memory) that a generation kept
	// still names: by its member ID.
	for _, gn := range g.gens {
		for _, gm := range gn.members {
			if _, ok := alias[gm.m]; !ok {
				alias[gm.m] = gm.m.id
			}
		}
		for _, m := range append([]*member{gn.static, gn.staticBy}, gn.signaled...) {
			if _, ok := alias[m]; !ok && m != nil {
				alias[m] = m.id
			}
		}
	}
	r := GroupReport{GroupID: g.id, Protocol: g.kind, ProtocolType: strp(g.ptype), Assignor: strp(g.protocol), State: strp(g.state),
		First: Time(g.first), Last: Time(g.last), GenerationCount: g.nGens, StaticRejoins: g.nStatic,
		Rebalances: g.rebalances, RebalanceMs: Millis(g.rebalanceTime),
		Members: make([]MemberReport, 0, len(g.order)), Generations: []GenerationReport{}, Commits: []CommitReport{},
		Errors: errorCounts(g.errs), Dropped: g.dropped}
	if r.Protocol == "" {
		r.Protocol = kindClassic
	}
	if c, ok := g.sc.coords[g.id]; ok {
		r.Coordinator = &c
	}
	timeline := slices.Clone(g.events)
	expiredAt := map[*member]time.Time{}
	goneAt := map[*member]time.Time{} // left without a leave captured, within its session timeout
	replacedAt := map[*member]time.Time{}
	var prev *gen
	for i, gn := range g.gens {
		kind, who, detail, expired, repl, quiet := cause(prev, gn, i == 0 && g.dropped.Generations == 0, alias)
		if gn.notKept > 0 {
			detail += fmt.Sprintf("; %d sightings of members not followed (--max-analysis-memory)", gn.notKept)
		}
		for _, m := range quiet {
			if _, ok := goneAt[m]; !ok {
				goneAt[m] = gn.start
			}
		}
		for _, m := range expired {
			if _, ok := expiredAt[m]; !ok {
				expiredAt[m] = gn.start
			}
		}
		for _, m := range repl {
			if _, ok := replacedAt[m]; !ok {
				replacedAt[m] = gn.start
			}
		}
		gr := GenerationReport{Generation: gn.num, Epoch: gn.epoch, Cause: kind, CauseMembers: []string{}, CauseDetail: detail,
			Leader: strp(gn.leader), Protocol: strp(gn.protocol), Start: Time(gn.start), End: Time(gn.end),
			Members: make([]GenerationMember, 0, len(gn.members)), Moved: []Move{}, Refs: slices.Clone(gn.refs), StartRef: gn.startRef, file: gn.file}
		if gr.Refs == nil {
			gr.Refs = []Ref{}
		}
		for _, m := range who {
			gr.CauseMembers = append(gr.CauseMembers, m.id)
		}
		if !gn.end.IsZero() && !gn.start.IsZero() && gn.static == nil {
			gr.DurationMs = ms(gn.end.Sub(gn.start))
		}
		for _, gm := range gn.members {
			x := GenerationMember{MemberID: gm.m.id, Name: alias[gm.m], Via: gm.via, MemberEpoch: i32p(gm.epoch),
				Leader: gn.leader != "" && gn.leader == gm.m.id}
			if gm.hasAssigned {
				x.Assigned = tpsReport(gm.assigned)
			}
			if gm.hasPlan {
				x.Plan = tpsReport(gm.plan)
			}
			gr.Members = append(gr.Members, x)
		}
		slices.SortFunc(gr.Members, func(a, b GenerationMember) int { return cmp.Compare(a.Name, b.Name) })
		if prev != nil {
			gr.Moved = moves(prev, gn)
		}
		r.Generations = append(r.Generations, gr)
		num := gn.num
		timeline = append(timeline, Event{Time: Time(gn.start), Kind: "generation", Generation: &num,
			Detail: fmt.Sprintf("%s %d begins: %s (%s)", genWord(gn), gn.num, kind, detail), Ref: gn.startRef})
		prev = gn
	}
	// A member a generation left out whose generation before was
	// dropped (--max-analysis-memory): no kept pair of generations says
	// how it went; what it kept does, as cause would have.
	if len(g.gens) > 0 {
		instances := map[string]bool{} // of the first entry kept: static successors
		for _, gm := range g.gens[0].members {
			if gm.m.instance != "" {
				instances[gm.m.instance] = true
			}
		}
		for _, m := range g.order {
			if !m.out || m.end != "" || m.outIdx > g.gens[0].idx {
				continue
			}
			_, e := expiredAt[m]
			_, q := goneAt[m]
			_, r := replacedAt[m]
			if e || q || r {
				continue
			}
			switch session := time.Duration(m.sessionMs) * time.Millisecond; {
			case m.instance != "" && m.outIdx == g.gens[0].idx && instances[m.instance]:
				replacedAt[m] = m.outAt
			case m.sessionMs > 0 && !m.lastLive.IsZero() && m.outAt.Sub(m.lastLive) < session:
				goneAt[m] = m.outAt
			default:
				expiredAt[m] = m.outAt
			}
		}
	}
	for _, m := range g.order {
		mr := MemberReport{MemberID: m.id, Name: alias[m], GroupInstanceID: strp(m.instance), ClientID: strp(m.clientID),
			Client: strp(m.addr), First: Time(m.first), Last: Time(m.last), Joined: Time(m.joined), Left: Time(m.left),
			LeaveReason: strp(m.leaveReason), EndTime: Time(m.endAt),
			SessionTimeoutMs: i32p(m.sessionMs), RebalanceTimeoutMs: i32p(m.rebalanceMs), HeartbeatIntervalMs: i32p(m.intervalMs),
			Heartbeats: m.heartbeats, LateHeartbeats: m.late, MissedHeartbeats: m.missed, LastHeartbeat: Time(m.lastHeartbeat),
			Subscription: m.subscription, Errors: errorCounts(m.errs), file: m.file}
		if m.lastHBRef.Frame > 0 {
			mr.LastHeartbeatRef = ptr(m.lastHBRef)
		}
		end := m.end
		if at, ok := expiredAt[m]; ok && (end == "" || end == endFenced) {
			end = endExpired
			mr.EndTime = Time(at)
			id := m.id
			timeline = append(timeline, Event{Time: Time(at), Kind: "expired", MemberID: &id,
				Detail: "removed from the group without leaving (session timeout)"})
		}
		if at, ok := goneAt[m]; ok && end == "" {
			end = endGone
			mr.EndTime = Time(at)
		}
		if at, ok := replacedAt[m]; ok && end == "" {
			end = endReplaced
			mr.EndTime = Time(at)
		}
		mr.End = strp(end)
		// The silence after its last sign of life, up to how its
		// membership ended (expiry, leave, replacement) or, still a
		// member, the end of the capture, is a gap like the others.
		maxGap := m.maxGap
		until := time.Time(mr.EndTime)
		if end == "" || until.IsZero() {
			until = g.sc.latest
		}
		if !m.lastLive.IsZero() && until.After(m.lastLive) {
			gap := until.Sub(m.lastLive)
			maxGap = max(maxGap, gap)
			late, missed := m.gapIs(gap, end == endExpired)
			mr.LateHeartbeats += b2i(late)
			mr.MissedHeartbeats += b2i(missed)
		}
		if maxGap > 0 {
			mr.MaxHeartbeatGapMs = ms(maxGap)
		}
		if m.hasEpoch {
			mr.MemberEpoch = i32p(m.epoch)
		}
		mr.Generation = i32p(m.lastGeneration)
		if m.hasAssignment {
			mr.Assignment = tpsReport(m.assignment)
		}
		mr.Connect = connectReport(m.connect)
		r.Members = append(r.Members, mr)
	}
	slices.SortStableFunc(r.Members, func(a, b MemberReport) int {
		return cmp.Or(time.Time(a.First).Compare(time.Time(b.First)), cmp.Compare(a.Name, b.Name))
	})
	r.Commits = t.commitReports(g)
	for i := range timeline {
		if id := timeline[i].MemberID; id != nil {
			if m := g.members[*id]; m != nil {
				n := alias[m]
				timeline[i].Member = &n
			}
		}
	}
	slices.SortStableFunc(timeline, func(a, b Event) int {
		return cmp.Or(time.Time(a.Time).Compare(time.Time(b.Time)), cmp.Compare(a.Ref.Frame, b.Ref.Frame))
	})
	r.Timeline = timeline
	if r.Timeline == nil {
		r.Timeline = []Event{}
	}
	return r
}

// moves lists the partitions whose owner differs between prev and gn.
func moves(prev, gn *gen) []Move {
	owners := func(x *gen) map[tpKey]string {
		o := map[tpKey]string{}
		for _, gm := range x.members {
			for _, tp := range gm.assigned {
				for _, p := range tp.Partitions {
					o[tpKey{tp.Label(), p}] = gm.m.id
				}
			}
		}
		return o
	}
	a, b := owners(prev), owners(gn)
	keys := map[tpKey]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	out := []Move{}
	for k := range keys {
		if a[k] != b[k] {
			out = append(out, Move{Topic: k.topic, Partition: k.part, From: strp(a[k]), To: strp(b[k])})
		}
	}
	slices.SortFunc(out, func(x, y Move) int {
		return cmp.Or(cmp.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
	})
	return out
}

func (t *groupTracker) commitReports(g *group) []CommitReport {
	out := []CommitReport{}
	// The fetch position of each partition: its owner's, the last
	// member in order that owns it (once over the members, not once per
	// commit: 100,000 members times 10,000 partitions).
	var fetched map[tpKey]int64
	for _, m := range g.order {
		for k, off := range m.fetch {
			if m.owns(k) {
				if fetched == nil {
					fetched = map[tpKey]int64{}
				}
				fetched[k] = off
			}
		}
	}
	for _, k := range g.corder {
		c := g.commits[k]
		if c == nil {
			continue
		}
		if c.held != nil {
			cv := *c
			cv.apply(c.held) // its transaction's end is not in the capture
			c = &cv
		}
		cr := CommitReport{Topic: k.topic, Partition: k.part, Offset: c.offset, Metadata: strp(c.metadata),
			Generation: i32p(c.generation), MemberID: strp(c.memberID), Time: Time(c.at), Commits: c.commits,
			Stale: c.stale, Errors: c.errors, Fetched: c.fetched, Transactional: c.txn, Ref: c.ref}
		if c.fetched {
			cr.Generation = nil
		}
		if c.lastError != 0 {
			cr.LastError = ptr(protocol.KafkaErrorName(c.lastError))
		}
		if hw, ok := g.sc.hw[k]; ok {
			cr.HighWatermark, cr.HighWatermarkTime = ptr(hw.hw), Time(hw.at)
			if c.offset >= 0 {
				cr.Lag = ptr(max(hw.hw-c.offset, 0))
			}
		}
		if off, ok := fetched[k]; ok {
			cr.FetchOffset = ptr(off)
			if cr.HighWatermark != nil {
				cr.FetchLag = ptr(max(*cr.HighWatermark-off, 0))
			}
		}
		out = append(out, cr)
	}
	slices.SortFunc(out, func(a, b CommitReport) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// units formats a duration as kwire's outputs do ("3.41s", "250ms").
func units(d time.Duration) string {
	switch {
	case d >= 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.0fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.2fms", float64(d)/1e6)
}
