package analysis

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
)

// This file follows groups: the classic protocol (JoinGroup, SyncGroup,
// Heartbeat, LeaveGroup; Kafka protocol guide, "The Consumer Group
// Protocol"; KIP-345 static members, KIP-394 MEMBER_ID_REQUIRED, KIP-800
// reasons), KIP-848 consumer groups (ConsumerGroupHeartbeat: member epochs
// and server-side assignments), share groups (KIP-932) and streams groups
// (KIP-1071) as their heartbeats show them, and the offsets groups commit
// (OffsetCommit, TxnOffsetCommit) and fetch (OffsetFetch).
//
// Exchanges come in the order they complete; a generation is known by its
// number (or a member epoch), so the order in which members' JoinGroup
// and SyncGroup responses arrive does not matter. What started each
// generation is decided when the report is built, by comparing its
// members with the previous generation's.

// Kafka error codes the group logic gives meaning to (Errors.java).
const (
	errNotCoordinator       = 16
	errIllegalGeneration    = 22
	errUnknownMemberID      = 25
	errRebalanceInProgress  = 27
	errMemberIDRequired     = 79
	errFencedInstanceID     = 82
	errFencedMemberEpoch    = 110
	errStaleMemberEpoch     = 113
	errUnreleasedInstanceID = 111
)

// Group kinds, as the report names them.
const (
	kindClassic  = "classic"
	kindConsumer = "consumer" // KIP-848
	kindShare    = "share"    // KIP-932
	kindStreams  = "streams"  // KIP-1071
)

// Member endings.
const (
	endLeft        = "left"         // LeaveGroup, or a KIP-848 heartbeat with member epoch -1
	endStaticLeave = "static-leave" // KIP-848 member epoch -2: a static member leaves for a restart
	endExpired     = "expired"      // removed without leaving: its session timed out
	endGone        = "gone"         // removed without a leave captured before its session could time out (a LeaveGroup not captured, an admin's removal)
	endReplaced    = "replaced"     // its group.instance.id was taken by a new member (KIP-345)
	endFenced      = "fenced"       // the coordinator answered it UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH or FENCED_INSTANCE_ID
)

// Generation causes (GenerationReport.Cause).
const (
	causeJoin         = "join"          // a new member joined
	causeLeave        = "leave"         // a member left (LeaveGroup, epoch -1 or -2)
	causeTimeout      = "timeout"       // a member was removed without leaving: its session timed out
	causeStaticRejoin = "static-rejoin" // a static member's successor took its place (KIP-345)
	causeSubscription = "subscription"  // the same members, a subscription changed
	causeRejoin       = "rejoin"        // the same members joined again (metadata change, a member's own rejoin)
	causeUnknown      = "unknown"       // the previous generation was not captured
)

type tpKey struct {
	topic string
	part  int32
}

type groupTracker struct {
	mem    *budget
	groups map[string]*group // the groups of the capture being read
	// done are the groups of the captures read before (Analyzer.SetFile:
	// each file a capture of its own), in file order, by group ID; a
	// group evicted whole stays in it (evicted, emptied) until those are
	// half of it (doneDead counts them).
	done     []*group
	doneDead int
	cur      *groupScope
	// held are the commits holding a TxnOffsetCommit's offset, by
	// transactional ID, until its EndTxn.
	held map[string][]*commit
	// fifo holds an item per event, generation and commit kept, oldest
	// first; ended the members kept that are done with their group
	// (memberList). The two together, by seq, are the eviction order:
	// past the budget the oldest item or ended member goes first. Members
	// still in their group are in neither: keeping one costs no eviction
	// pass, and a budget full of them evicts nothing.
	fifo  []evictItem
	head  int
	ended memberList
	seq   uint64
	// lru are the groups kept, least recently active first (by
	// group.seq: the seq of its latest exchange, item or ended member).
	// Past the budget, and past minKept, the first goes whole when it
	// is older than the oldest item and ended member: by then those of
	// its own have gone. active is the group of the exchange being
	// taken, which does not go.
	lru    groupList
	active *group
	// notKept counts the groups evicted whole. evictedIDs counts them by
	// a 64-bit hash of their ID (idHash), for the groups of the
	// current capture, at most maxEvictedIDs of them (charged): a group
	// made again under an ID evicted before says so
	// (Dropped.Evicted). forgot: an ID evicted was not remembered, the
	// table being full; evictedBloom, a Bloom filter of every ID evicted
	// (charged), then says which new groups may have been evicted before
	// (Dropped.MaybeEvicted), and which were not.
	notKept      int64
	evictedIDs   map[uint64]int64
	evictedBloom []uint64
	forgot       bool
	// noTimeline: the groups report is not built (only the findings,
	// which rest on generations and members): timeline events are not
	// kept.
	noTimeline bool
}

// groupScope is what the groups of one capture share: one file, or
// every file with --merge. Read without --merge, each file is a capture
// of its own: its connections, packet numbers and groups are its own.
type groupScope struct {
	file     int                       // its capture file (Analyzer.SetFile), 0 for one
	byClient map[string]*clientMembers // client ID -> members (fetch positions)
	hw       map[tpKey]hwMark          // latest high watermark seen per partition
	coords   map[string]string         // group -> coordinator host:port (FindCoordinator)
	latest   time.Time                 // the latest exchange seen: the end of the capture, for members still in their group
}

func newGroupScope(file int) *groupScope {
	return &groupScope{file: file, byClient: map[string]*clientMembers{}, hw: map[tpKey]hwMark{}, coords: map[string]string{}}
}

type hwMark struct {
	hw int64
	at time.Time
}

// clientMembers are the members of a client ID, in the order they got
// it; dead counts those dropped since (still in ms until it is compacted,
// once they are half of it: a drop costs O(1) amortised).
type clientMembers struct {
	ms   []*member
	dead int
}

// evictItem is an event, generation or commit of g kept at seq: the
// oldest of its kind in g, as those go in the order they came.
type evictItem struct {
	g    *group
	kind uint8
	seq  uint64
}

const (
	itemEvent uint8 = iota
	itemGen
	itemCommit
)

type group struct {
	sc          *groupScope
	id          string
	kind        string
	ptype       string
	protocol    string
	state       string // as its latest describe said (maxStateLen bytes at most)
	first, last time.Time

	members map[string]*member
	// order are the members by first appearance; a member dropped stays
	// in it (kept false) until the dropped are half of it (dead counts
	// them), when it is compacted.
	order   []*member
	dead    int
	gens    []*gen
	events  []Event
	errs    map[int16]int64
	commits map[tpKey]*commit
	corder  []tpKey

	// joinStart is the earliest JoinGroup since the last generation was
	// created: when the next rebalance began.
	joinStart time.Time
	// signaled are the members told REBALANCE_IN_PROGRESS since the last
	// generation began.
	signaled []*member
	// nGens counts the generations (or epochs) seen, kept or dropped, by
	// number: a static member's rejoin without a rebalance (KIP-345),
	// which gives an entry of the same number, counts in nStatic.
	nGens, nStatic int64
	// rebalances and rebalanceTime total the rebalances (generations
	// that followed another one) and the time they took, kept or
	// dropped (gen.account).
	rebalances    int64
	rebalanceTime time.Duration
	dropped       Dropped
	// genParked: the item of its only generation came up for eviction
	// (the latest stays); it goes back in the eviction order with the
	// next generation.
	genParked bool
	// byInstance is the member kept that last took each group instance
	// ID (KIP-345), for a LeaveGroup by instance ID; byNum the latest
	// entry of each generation (member epoch) number kept, for
	// genNum: neither a scan per request.
	byInstance map[string]*member
	byNum      map[genKey]*gen
	// lk links it in groupTracker.lru, seq its place there. evicted: it
	// went whole (groupTracker.evictGroup); it is emptied, in no map.
	lk      link[group]
	seq     uint64
	evicted bool
}

// genKey is a generation's number, or a member epoch's (KIP-848).
type genKey struct {
	num   int32
	epoch bool
}

type member struct {
	g        *group
	id       string
	instance string
	clientID string
	addr     string

	first, last time.Time
	file        int // the capture file of its latest exchange
	joined      time.Time
	left        time.Time
	leaveReason string
	leaveRef    Ref
	end         string
	endAt       time.Time

	sessionMs, rebalanceMs, intervalMs int32

	heartbeats     int64
	lastLive       time.Time // its last sign of life to the coordinator
	lastHeartbeat  time.Time
	lastHBRef      Ref
	maxGap         time.Duration
	late, missed   int64
	assignment     []facts.TopicPartitions
	hasAssignment  bool
	epoch          int32
	hasEpoch       bool
	errs           map[int16]int64
	fetch          map[tpKey]int64
	subscription   []string
	lastGeneration int32
	// connect is what a Kafka Connect worker's group protocol said last
	// (a "connect" group); nil for other members.
	connect *connectState

	// kept: the member is in its group's members (and order), counted in
	// the budget. unfollowed: it never was, the budget being full of
	// members still in their groups (groupTracker.member): it is in no
	// list and no generation.
	kept, unfollowed bool
	// out: the leader's JoinGroup response listed the group's latest
	// generation without it (classic), or a describe (KIP-848) did not
	// list it, silent since before (outIdx -1): it is done with the
	// group, as a member whose end is set is, until a generation lists
	// it again (or it heartbeats again).
	// outIdx is that generation (gen.idx), outAt its start: the report
	// decides how it went from them (and its own last sign of life) when
	// the generation before was dropped.
	out    bool
	outIdx int64
	outAt  time.Time
	// In groupTracker.ended while evictable (kept, and ended or out):
	// lk links it there, seq is when it got there.
	lk  link[member]
	seq uint64
	// signaled: it is in its group's signaled; inClient: in its
	// client ID's byClient list.
	signaled, inClient bool
}

type gen struct {
	num        int32
	epoch      bool // a KIP-848 (share, streams) member epoch, not a classic generation
	start, end time.Time
	leader     string
	protocol   string
	members    []*genMember
	byMember   map[*member]*genMember // members, once there are memberIndexFrom
	listed     bool                   // the leader's JoinGroup response listed the members
	// notKept counts the members it was given that were not followed
	// (member.unfollowed): past the budget, with no room made.
	notKept int64
	// outMarked: markOut looked at it. before is the generation that
	// was the latest when it began, until then (or until another
	// begins): markOut compares their members even when before was
	// evicted since. Only a group's latest holds one.
	outMarked bool
	before    *gen
	// idx numbers the group's entries in the order they began, kept or
	// dropped.
	idx      int64
	static   *member // static-rejoin: the member replaced
	staticBy *member
	signaled []*member // told REBALANCE_IN_PROGRESS before it began
	refs     []Ref
	startRef Ref  // the exchange it began with
	file     int  // the capture file it began in
	complete bool // a member got its assignment
	// follows says another generation came before it in the group: it
	// is a rebalance; took is what it added to the group's
	// rebalanceTime, counted when it has a start and an end.
	follows, counted bool
	took             time.Duration
	cost             int64
}

type genMember struct {
	m            *member
	assigned     []facts.TopicPartitions
	hasAssigned  bool
	plan         []facts.TopicPartitions // the leader's SyncGroup plan
	hasPlan      bool
	via          string
	epoch        int32
	subscription []string // the topics it subscribed to at this generation
	hasSub       bool
	unfollowed   bool // of a member not followed: in no generation
}

type commit struct {
	tp tpKey
	committed
	commits     int64
	stale       int64
	errors      int64
	fetched     bool // known from an OffsetFetch only
	txn         bool // by TxnOffsetCommit
	lastError   int16
	lastErrorAt time.Time
	// held is an offset a TxnOffsetCommit wrote in a transaction not yet
	// ended: it is the group's when the transaction commits (EndTxn), and
	// is dropped when it aborts; at the report, held offsets whose end
	// the capture did not hold are shown as committed (transactional).
	held *heldOffset
}

// committed is an offset committed for a partition: by whom, when, in
// which generation (or member epoch), with its metadata.
type committed struct {
	offset     int64
	metadata   string
	generation int32
	memberID   string
	at         time.Time
	ref        Ref
}

// heldOffset is a TxnOffsetCommit's offset, held until its transaction
// ends.
type heldOffset struct {
	txnID string
	committed
}

// apply makes h the committed offset of c.
func (c *commit) apply(h *heldOffset) {
	c.committed, c.fetched = h.committed, false
	c.commits++
	c.txn = h.txnID != ""
}

func newGroupTracker(mem *budget) *groupTracker {
	return &groupTracker{mem: mem, groups: map[string]*group{}, cur: newGroupScope(0)}
}

// idHash is the 64 bits of an evicted group's ID that evictedIDs and
// evictedBloom keep: the first 8 bytes of its SHA-256, the same on every
// run (a seeded hash made which new groups the Bloom filter's false
// positives marked "may have been evicted" differ from run to run on
// the same capture), and costly to collide (a capture's group ID made
// to hash as another's would read as evicted before).
func idHash(id string) uint64 {
	sum := sha256.Sum256([]byte(id))
	return binary.LittleEndian.Uint64(sum[:8])
}

// groupList is the list of groups groupTracker.lru holds.
type groupList = list[group, *group]

func (g *group) link() *link[group] { return &g.lk }

// costEvictedID is what remembering the ID of a group evicted whole
// costs (groupTracker.evictedIDs: a map entry of a hash and a count); a
// thirty-second of the budget (or of minKept) goes to them, and a
// sixteenth to the Bloom filter of them all.
const costEvictedID = 40

func (t *groupTracker) maxEvictedIDs() int {
	return int(max(t.mem.max, minKept) / 32 / costEvictedID)
}

// bloomBits are the 4 bits of evictedBloom that hash h sets.
func (t *groupTracker) bloomBits(h uint64) [4]uint64 {
	n := uint64(len(t.evictedBloom)) * 64
	a, b := h&0xffffffff, h>>32|1
	var out [4]uint64
	for i := range out {
		out[i] = (a + uint64(i)*b) % n
	}
	return out
}

// evictedBefore says how often a group of ID id was evicted whole
// before (0: never, as far as is known), and whether it may have been
// (counts forgotten).
func (t *groupTracker) evictedBefore(id string) (int64, bool) {
	if t.evictedIDs == nil {
		return 0, false
	}
	h := idHash(id)
	if n := t.evictedIDs[h]; n > 0 || !t.forgot {
		return n, false
	}
	for _, b := range t.bloomBits(h) {
		if t.evictedBloom[b/64]&(1<<(b%64)) == 0 {
			return 0, false
		}
	}
	return 0, true
}

// rememberEvicted remembers that a group of ID id, evicted n times
// before, was evicted again.
func (t *groupTracker) rememberEvicted(id string, n int64) {
	if t.evictedIDs == nil {
		t.evictedIDs = map[uint64]int64{}
		words := max(max(t.mem.max, minKept)/16/8, 1)
		t.evictedBloom = make([]uint64, words)
		t.mem.take(8 * words)
	}
	h := idHash(id)
	for _, b := range t.bloomBits(h) {
		t.evictedBloom[b/64] |= 1 << (b % 64)
	}
	_, had := t.evictedIDs[h]
	switch {
	case had:
		t.evictedIDs[h] = n + 1
	case len(t.evictedIDs) < t.maxEvictedIDs():
		t.evictedIDs[h] = n + 1
		t.mem.take(costEvictedID)
	default:
		t.forgot = true
	}
}

// bump makes now g's latest activity: it goes to the back of t.lru.
// It returns the seq it took.
func (t *groupTracker) bump(g *group) uint64 {
	t.seq++
	g.seq = t.seq
	if !g.evicted {
		t.lru.remove(g)
		t.lru.push(g)
	}
	return t.seq
}

// nextFile starts capture file number file, a capture of its own: the
// groups so far are done (still in the eviction order, still reported).
func (t *groupTracker) nextFile(file int) {
	ids := slices.Sorted(maps.Keys(t.groups))
	for _, id := range ids {
		t.done = append(t.done, t.groups[id])
	}
	t.groups = map[string]*group{}
	t.cur = newGroupScope(file)
	// A group of the files before is not met again: their IDs need not
	// be remembered.
	t.mem.give(int64(len(t.evictedIDs))*costEvictedID + 8*int64(len(t.evictedBloom)))
	t.evictedIDs, t.evictedBloom, t.forgot = nil, nil, false
}

// all returns every group: those of earlier capture files first, then
// the current one's, each by ID.
func (t *groupTracker) all() []*group {
	out := slices.DeleteFunc(slices.Clone(t.done), func(g *group) bool { return g.evicted })
	for _, id := range slices.Sorted(maps.Keys(t.groups)) {
		out = append(out, t.groups[id])
	}
	for _, g := range out {
		g.compact() // order: the members kept
	}
	return out
}

func (t *groupTracker) group(id string, kind string, at time.Time) *group {
	g := t.groups[id]
	if g == nil {
		g = &group{sc: t.cur, id: id, members: map[string]*member{}, errs: map[int16]int64{}, commits: map[tpKey]*commit{}}
		g.dropped.Evicted, g.dropped.MaybeEvicted = t.evictedBefore(id)
		t.groups[id] = g
		t.mem.take(costMember + int64(len(id)))
		t.touch(g)
		t.shed() // others may go for it, not it
	} else {
		t.touch(g)
	}
	if kind != "" && (g.kind == "" || g.kind == kindClassic && kind != kindClassic) {
		g.kind = kind
	}
	if !at.IsZero() {
		if g.first.IsZero() || at.Before(g.first) {
			g.first = at
		}
		if at.After(g.last) {
			g.last = at
		}
	}
	return g
}

// touch makes g the group of the exchange being taken: its latest
// activity, not to be evicted while it is taken.
func (t *groupTracker) touch(g *group) {
	t.active = g
	t.bump(g)
}

// member returns group g's member id, made on first sight from exchange e.
// A new member is kept when it fits in the budget, once what can go (the
// oldest events, generations, commits and ended members) has gone; when
// it does not (the budget full of members still in their groups), it is
// counted as unfollowed and returned unkept: the caller's updates of it
// go nowhere, and a later exchange of it counts again.
func (t *groupTracker) member(g *group, id string, e *xinfo) *member {
	m := g.members[id]
	if m == nil {
		m = &member{g: g, id: id, sessionMs: -1, rebalanceMs: -1, intervalMs: -1, epoch: -1, lastGeneration: -1}
		if n := costMember + int64(len(id)); t.fits(n) {
			g.members[id] = m
			g.order = append(g.order, m)
			m.kept = true
		} else {
			m.unfollowed = true
			g.dropped.Unfollowed++
		}
	}
	if e != nil {
		if (m.end == endLeft || m.end == endStaticLeave) && e.answered && e.topError() == 0 && e.at.After(m.endAt) {
			// A leave the member went on from (one unanswered: the
			// broker never took it): it is a member again.
			t.setEnd(m, "", time.Time{})
			m.left = time.Time{}
		}
		if !e.x.ClientIDNull && !e.x.ClientIDNotCaptured {
			t.setClientID(m, e.x.ClientID)
		}
		if m.addr == "" && e.x.Client.IsValid() {
			m.addr = e.x.Client.String()
		}
		if m.first.IsZero() || e.at.Before(m.first) {
			m.first = e.at
		}
		m.file = e.file
		last := e.at
		if e.done.After(last) {
			last = e.done
		}
		if last.After(m.last) {
			m.last = last
		}
	}
	return m
}

// setClientID gives m the client ID id, the first it is told (its own
// requests', or a describe's), and files it under it (groupScope.byClient)
// when it is kept.
func (t *groupTracker) setClientID(m *member, id string) {
	if m.clientID != "" || m.inClient {
		return // filed under the first (possibly "")
	}
	m.clientID = id
	if m.kept && !m.inClient {
		m.inClient = true
		cm := m.g.sc.byClient[m.clientID]
		if cm == nil {
			cm = &clientMembers{}
			m.g.sc.byClient[m.clientID] = cm
		}
		cm.ms = append(cm.ms, m)
	}
}

// setEnd sets how m's membership ended ("" : it is a member again), and
// puts it in the eviction order (t.ended) when it is done with its group,
// or takes it out when it is a member again. A member whose end changes
// (left, then fenced) keeps its place: it ended at the first.
func (t *groupTracker) setEnd(m *member, end string, at time.Time) {
	m.end, m.endAt = end, at
	t.reconsider(m)
}

// setOut marks m out of its group's latest generation (or back in it).
func (t *groupTracker) setOut(m *member, out bool) {
	if m.out != out {
		m.out = out
		t.reconsider(m)
	}
}

// reconsider puts m in t.ended, at the back, when it became evictable,
// and takes it out when it is not any more.
func (t *groupTracker) reconsider(m *member) {
	switch done := m.kept && (m.end != "" || m.out); {
	case done && !m.lk.on:
		m.seq = t.bump(m.g)
		t.ended.push(m)
	case !done && m.lk.on:
		t.ended.remove(m)
	}
}

// minKept is the memory members still in their groups, and whole
// groups, may take whatever the budget (--max-analysis-memory 1 keeps a
// small group's members, and the totals that rest on them: static
// rejoins, rebalance times): past the budget or this, whichever is more,
// a new member is not followed, and only then is a group evicted whole.
const minKept = 1 << 20

// fits charges n bytes for a new member, making room by evicting what can
// go, and reports whether they fit (within the budget, or minMembers);
// when they do not they are given back.
func (t *groupTracker) fits(n int64) bool {
	t.mem.take(n)
	t.shed()
	if t.mem.used > max(t.mem.max, minKept) {
		t.mem.give(n)
		return false
	}
	return true
}

// keep charges n bytes for an item of g and evicts the oldest items
// while the budget is exceeded.
func (t *groupTracker) keep(g *group, kind uint8, n int64) {
	t.mem.take(n)
	t.fifo = append(t.fifo, evictItem{g, kind, t.bump(g)})
	t.shed()
}

// shed evicts while the budget is exceeded and something can go. Each
// eviction is O(1) amortised: an item leaves the fifo once (a
// generation's twice, when it was its group's only one), an ended member
// leaves its list in constant time; nothing evictable is an empty fifo
// and list, not a pass over what is kept.
func (t *groupTracker) shed() {
	for t.mem.over() && t.evict() {
	}
	if t.head > 1024 && t.head*2 > len(t.fifo) {
		t.fifo = slices.Delete(t.fifo, 0, t.head)
		t.head = 0
	}
}

// evict drops the oldest item or ended member that can go, or, past
// minKept too, the least recently active group when it is older than
// both (whole: evictGroup); false when none can.
func (t *groupTracker) evict() bool {
	for {
		for t.head < len(t.fifo) && t.fifo[t.head].g.evicted {
			t.fifo[t.head] = evictItem{} // given back with its group
			t.head++
		}
		m := t.ended.first
		g := t.lru.first
		if g == t.active || t.mem.used <= max(t.mem.max, minKept) {
			g = nil
		}
		if g != nil && (t.head == len(t.fifo) || g.seq < t.fifo[t.head].seq) && (m == nil || g.seq < m.seq) {
			t.evictGroup(g)
			return true
		}
		if t.head == len(t.fifo) || m != nil && m.seq < t.fifo[t.head].seq {
			if m == nil {
				return false
			}
			t.dropMember(m)
			return true
		}
		it := t.fifo[t.head]
		t.fifo[t.head] = evictItem{}
		t.head++
		g = it.g
		switch it.kind {
		case itemEvent:
			if len(g.events) > 0 {
				e := g.events[0]
				g.events[0] = Event{}
				g.events = g.events[1:]
				g.dropped.Events++
				t.mem.give(eventCost(&e))
				return true
			}
		case itemGen:
			if len(g.gens) > 1 { // the latest stays: it is the group's state
				if k := (genKey{g.gens[0].num, g.gens[0].epoch}); g.byNum[k] == g.gens[0] {
					delete(g.byNum, k)
				}
				t.mem.give(g.gens[0].cost)
				g.gens[0] = nil
				g.gens = g.gens[1:]
				g.dropped.Generations++
				return true
			}
			g.genParked = true
		case itemCommit:
			if len(g.corder) > 0 {
				k := g.corder[0]
				g.corder = g.corder[1:]
				delete(g.commits, k)
				g.dropped.Commits++
				t.mem.give(costCommit + int64(len(k.topic)))
				return true
			}
		}
	}
}

// dropMember drops m, evictable, in O(1) amortised: it leaves the
// members map and t.ended at once, order and its client's list by
// tombstone (compacted once the dropped are half of it).
func (t *groupTracker) dropMember(m *member) {
	g := m.g
	t.unkeep(m)
	if g.members[m.id] == m {
		delete(g.members, m.id)
	}
	if m.instance != "" && g.byInstance[m.instance] == m {
		delete(g.byInstance, m.instance)
	}
	if g.dead++; g.dead > 32 && 2*g.dead > len(g.order) {
		g.compact()
	}
	g.dropped.Members++
	t.mem.give(costMember + int64(len(m.id)) + tpCost(m.assignment) + namesCost(m.subscription) + connectCost(m.connect))
}

// unkeep makes m, kept, not kept: off t.ended, and off its client's list
// by tombstone.
func (t *groupTracker) unkeep(m *member) {
	g := m.g
	t.ended.remove(m)
	m.kept = false
	if cm := g.sc.byClient[m.clientID]; cm != nil && m.inClient {
		if cm.dead++; 2*cm.dead > len(cm.ms) {
			cm.ms = slices.DeleteFunc(cm.ms, func(x *member) bool { return !x.kept })
			cm.dead = 0
			if len(cm.ms) == 0 {
				delete(g.sc.byClient, m.clientID)
			}
		}
	}
}

// evictGroup drops g whole, in time linear in what it keeps (each
// thing kept is given back once): its members, generations, events and
// commits, and the group itself. It is counted (t.notKept) and its ID
// remembered, so that a group made again under it says it was evicted
// before: its history is not whole.
func (t *groupTracker) evictGroup(g *group) {
	t.lru.remove(g)
	g.evicted = true
	n := costMember + int64(len(g.id))
	for _, m := range g.members {
		t.unkeep(m)
		n += costMember + int64(len(m.id)) + tpCost(m.assignment) + namesCost(m.subscription) + connectCost(m.connect)
		m.assignment, m.fetch, m.subscription, m.connect = nil, nil, nil, nil
	}
	for _, gn := range g.gens {
		n += gn.cost
	}
	for i := range g.events {
		n += eventCost(&g.events[i])
	}
	for _, k := range g.corder {
		n += costCommit + int64(len(k.topic))
	}
	t.mem.give(n)
	t.notKept++
	if g.sc == t.cur && t.groups[g.id] == g {
		delete(t.groups, g.id)
		t.rememberEvicted(g.id, g.dropped.Evicted)
	} else if t.doneDead++; 2*t.doneDead > len(t.done) {
		t.done = slices.DeleteFunc(t.done, func(x *group) bool { return x.evicted })
		t.doneDead = 0
	}
	g.members, g.order, g.gens, g.events, g.commits, g.corder, g.signaled = nil, nil, nil, nil, nil, nil, nil
	g.byInstance, g.byNum = nil, nil
}

// compact takes the dropped members out of g.order.
func (g *group) compact() {
	if g.dead > 0 {
		g.order = slices.DeleteFunc(g.order, func(x *member) bool { return !x.kept })
		g.dead = 0
	}
}

// memberList is the list of members groupTracker.ended holds.
type memberList = list[member, *member]

func (m *member) link() *link[member] { return &m.lk }

func eventCost(e *Event) int64 {
	n := int64(costEvent + len(e.Detail) + len(e.Kind))
	if e.MemberID != nil {
		n += int64(len(*e.MemberID))
	}
	return n
}

func (t *groupTracker) event(g *group, e Event) {
	if t.noTimeline {
		return
	}
	g.events = append(g.events, e)
	t.keep(g, itemEvent, eventCost(&e))
}

// groupEvent builds an event of exchange x about member m (nil: none).
func groupEvent(x *xinfo, m *member, kind, detail string) Event {
	ev := Event{Time: Time(x.at), Kind: kind, Detail: detail, Ref: x.ref, API: protocol.APIName(x.x.APIKey)}
	if m != nil {
		ev.MemberID = &m.id
	}
	if code := x.topError(); code != 0 {
		ev.Error = ptr(protocol.KafkaErrorName(code))
	}
	return ev
}

func (t *groupTracker) exchange(e *xinfo) {
	fx := e.fx
	t.cur.latest = maxTime(t.cur.latest, maxTime(e.at, e.done))
	switch e.x.APIKey {
	case protocol.KeyFindCoordinator:
		for _, c := range fx.Coordinators {
			if c.KeyType == 0 && c.Found {
				t.cur.coords[c.Key] = fmt.Sprintf("%s:%d", c.Host, c.Port)
			}
		}
		return
	case protocol.KeyFetch:
		t.fetch(e)
		return
	case protocol.KeyEndTxn:
		t.endTxn(e)
		return
	case protocol.KeyDescribeGroups:
		t.described(e, kindClassic)
		return
	case protocol.KeyConsumerGroupDescribe:
		t.described(e, kindConsumer)
		return
	case protocol.KeyShareGroupDescribe:
		t.described(e, kindShare)
		return
	case protocol.KeyStreamsGroupDescribe:
		t.described(e, kindStreams)
		return
	}
	id := fx.Group.ID
	if id == "" {
		return
	}
	switch e.x.APIKey {
	case protocol.KeyJoinGroup:
		t.joinGroup(t.group(id, kindClassic, e.at), e)
	case protocol.KeySyncGroup:
		t.syncGroup(t.group(id, kindClassic, e.at), e)
	case protocol.KeyHeartbeat:
		t.heartbeat(t.group(id, kindClassic, e.at), e)
	case protocol.KeyLeaveGroup:
		t.leaveGroup(t.group(id, kindClassic, e.at), e)
	case protocol.KeyConsumerGroupHeartbeat:
		t.epochHeartbeat(t.group(id, kindConsumer, e.at), e)
	case protocol.KeyShareGroupHeartbeat:
		t.epochHeartbeat(t.group(id, kindShare, e.at), e)
	case protocol.KeyStreamsGroupHeartbeat:
		t.epochHeartbeat(t.group(id, kindStreams, e.at), e)
	case protocol.KeyOffsetCommit, protocol.KeyTxnOffsetCommit:
		t.commit(t.group(id, "", e.at), e)
	case protocol.KeyOffsetFetch:
		t.offsetFetch(e)
	}
}

// setTimeouts records the timeouts a member's request states.
func (m *member) setTimeouts(fg *facts.Group) {
	if fg.SessionTimeoutMs >= 0 {
		m.sessionMs = fg.SessionTimeoutMs
	}
	if fg.RebalanceTimeoutMs >= 0 {
		m.rebalanceMs = fg.RebalanceTimeoutMs
	}
	if fg.HeartbeatIntervalMs > 0 {
		m.intervalMs = fg.HeartbeatIntervalMs
	}
	if fg.InstanceID != "" {
		m.setInstance(fg.InstanceID)
	}
}

// setInstance makes id m's group instance ID; kept, m is its group's
// member of that ID (group.byInstance).
func (m *member) setInstance(id string) {
	m.instance = id
	if !m.kept {
		return
	}
	if m.g.byInstance == nil {
		m.g.byInstance = map[string]*member{}
	}
	m.g.byInstance[id] = m
}

func (m *member) err(code int16) {
	if code == 0 {
		return
	}
	if m.errs == nil {
		m.errs = map[int16]int64{}
	}
	m.errs[code]++
}

// live records a sign of life of m at time at (a heartbeat request when
// beat, else the answer to a join or sync): the gap since the previous
// one is checked against the session timeout (classic) or the heartbeat
// interval (KIP-848).
func (m *member) live(at time.Time, beat bool) {
	if at.IsZero() {
		return
	}
	if beat {
		m.heartbeats++
		m.lastHeartbeat = at
		if !m.lastLive.IsZero() && at.After(m.lastLive) {
			gap := at.Sub(m.lastLive)
			m.maxGap = max(m.maxGap, gap)
			late, missed := m.gapIs(gap, false)
			m.late += b2i(late)
			m.missed += b2i(missed)
		}
	}
	if at.After(m.lastLive) {
		m.lastLive = at
	}
}

// gapIs says whether a gap of silence of m is late or missed: late when it
// is half the session timeout or more (KIP-848, where the session
// timeout is the broker's and not on the wire: twice the heartbeat
// interval the broker asked for), missed when it is the session timeout
// or more, or when it ended in m's expiry (the coordinator's own verdict
// that the session timed out).
func (m *member) gapIs(gap time.Duration, expired bool) (late, missed bool) {
	session := time.Duration(m.sessionMs) * time.Millisecond
	switch {
	case expired, m.sessionMs > 0 && gap >= session:
		return false, true
	case m.sessionMs > 0:
		return gap >= session/2, false
	case m.intervalMs > 0:
		return gap >= 2*time.Duration(m.intervalMs)*time.Millisecond, false
	}
	return false, false
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (g *group) errCount(code int16) {
	if code != 0 {
		g.errs[code]++
	}
}

func (g *group) lastGen() *gen {
	if len(g.gens) == 0 {
		return nil
	}
	return g.gens[len(g.gens)-1]
}

// genNum returns the latest generation entry numbered num.
func (g *group) genNum(num int32, epoch bool) *gen { return g.byNum[genKey{num, epoch}] }

// memberIndexFrom is the count of a generation's members from which
// they are found by map: a JoinGroup response may list 100,000, and a
// scan per member made that quadratic.
const memberIndexFrom = 32

func (gn *gen) member(m *member) *genMember {
	if gn.byMember != nil {
		return gn.byMember[m]
	}
	for _, gm := range gn.members {
		if gm.m == m {
			return gm
		}
	}
	return nil
}

// addGenMember returns m's entry in gn, made when it has none. A member
// not followed (member.unfollowed) gets none: gn counts it in notKept,
// and the entry returned, in no generation, takes the caller's updates.
func (t *groupTracker) addGenMember(g *group, gn *gen, m *member, via string) *genMember {
	if m.unfollowed {
		gn.notKept++
		return &genMember{m: m, via: via, epoch: -1, unfollowed: true}
	}
	if m.out && gn == g.lastGen() {
		t.setOut(m, false) // in the latest generation again
	}
	if gm := gn.member(m); gm != nil {
		return gm
	}
	gm := &genMember{m: m, via: via, epoch: -1}
	gn.members = append(gn.members, gm)
	switch {
	case gn.byMember != nil:
		gn.byMember[m] = gm
	case len(gn.members) >= memberIndexFrom:
		gn.byMember = make(map[*member]*genMember, 2*len(gn.members))
		for _, x := range gn.members {
			if _, ok := gn.byMember[x.m]; !ok {
				gn.byMember[x.m] = x
			}
		}
	}
	gn.cost += costGenMember
	t.mem.take(costGenMember)
	return gm
}

// assign makes tps m's assignment, charged to the budget while m is kept.
func (t *groupTracker) assign(m *member, tps []facts.TopicPartitions) {
	if m.kept {
		t.mem.give(tpCost(m.assignment))
	}
	m.assignment, m.hasAssignment = cloneTPs(tps), true
	if m.kept {
		t.mem.take(tpCost(m.assignment))
	}
}

// subscribe makes topics m's subscription, charged to the budget while m
// is kept (a peer's JoinGroup or DescribeGroups can list many long names
// for each of many members).
func (t *groupTracker) subscribe(m *member, topics []string) {
	if m.kept {
		t.mem.give(namesCost(m.subscription))
	}
	m.subscription = slices.Clone(topics)
	if m.kept {
		t.mem.take(namesCost(m.subscription))
		t.shed()
	}
}

// connectState is what a Kafka Connect worker said last: its metadata
// (JoinGroup, DescribeGroups: URL, config offset) and its assignment
// (SyncGroup, the leader's plan, DescribeGroups).
type connectState struct {
	url          string
	urlWithheld  bool
	configOffset int64
	hasWorker    bool
	asg          *facts.ConnectAssignment // a copy of its own; nil until one is seen
}

// costConnect is what a connectState costs beside its strings and lists.
const costConnect = 128

// connectCost is what c costs: its strings and its connectors' names and
// task lists (a peer's assignment can name many connectors and tasks).
func connectCost(c *connectState) int64 {
	if c == nil {
		return 0
	}
	n := costConnect + int64(len(c.url))
	if a := c.asg; a != nil {
		n += int64(len(a.Leader)+len(a.LeaderURL)) + connectorsCost(a.Connectors) + connectorsCost(a.Revoked)
	}
	return n
}

func connectorsCost(cs []facts.ConnectorTasks) int64 {
	n := int64(0)
	for _, c := range cs {
		n += costTP + int64(len(c.Connector)) + 4*int64(len(c.Tasks))
	}
	return n
}

// setWorker makes w m's Connect worker metadata; setConnectAssignment a
// its Connect assignment. Both are charged to the budget while m is kept.
func (t *groupTracker) setWorker(m *member, w *facts.Worker) {
	if w == nil {
		return
	}
	t.updateConnect(m, func(c *connectState) {
		c.url, c.urlWithheld = strings.Clone(w.URL), w.URLWithheld
		c.configOffset, c.hasWorker = w.ConfigOffset, true
	})
}

func (t *groupTracker) setConnectAssignment(m *member, a *facts.ConnectAssignment) {
	if a == nil {
		return
	}
	t.updateConnect(m, func(c *connectState) { c.asg = cloneConnect(a) })
}

func (t *groupTracker) updateConnect(m *member, f func(*connectState)) {
	if m.kept {
		t.mem.give(connectCost(m.connect))
	}
	if m.connect == nil {
		m.connect = &connectState{}
	}
	f(m.connect)
	if m.kept {
		t.mem.take(connectCost(m.connect))
		t.shed()
	}
}

// cloneConnect copies a, its connectors' task lists sorted (the connector
// instance, -1, first).
func cloneConnect(a *facts.ConnectAssignment) *facts.ConnectAssignment {
	c := *a
	c.Leader, c.LeaderURL = strings.Clone(a.Leader), strings.Clone(a.LeaderURL)
	c.Connectors, c.Revoked = cloneConnectors(a.Connectors), cloneConnectors(a.Revoked)
	return &c
}

func cloneConnectors(cs []facts.ConnectorTasks) []facts.ConnectorTasks {
	if cs == nil {
		return nil
	}
	out := make([]facts.ConnectorTasks, 0, len(cs))
	for _, c := range cs {
		ts := slices.Clone(c.Tasks)
		slices.Sort(ts)
		out = append(out, facts.ConnectorTasks{Connector: strings.Clone(c.Connector), Tasks: ts})
	}
	slices.SortFunc(out, func(a, b facts.ConnectorTasks) int { return cmp.Compare(a.Connector, b.Connector) })
	return out
}

// ConnectorsString writes Connect connectors and their tasks as
// "pg-sink[connector,0-2] s3[1]" (task -1 is the connector instance),
// "nothing" when there are none.
func ConnectorsString(cs []facts.ConnectorTasks) string {
	var b strings.Builder
	for _, c := range cloneConnectors(cs) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.Connector)
		b.WriteByte('[')
		ts := c.Tasks
		if len(ts) > 0 && ts[0] == -1 {
			b.WriteString("connector")
			ts = slices.DeleteFunc(ts, func(x int32) bool { return x == -1 })
			if len(ts) > 0 {
				b.WriteByte(',')
			}
		}
		b.WriteString(PartitionRanges(ts))
		b.WriteByte(']')
	}
	if b.Len() == 0 {
		return "nothing"
	}
	return b.String()
}

// setSubscribed makes topics, sorted, gm's subscription at generation
// gn, charged to gn's cost.
func (t *groupTracker) setSubscribed(gn *gen, gm *genMember, topics []string) {
	if gm.unfollowed {
		return
	}
	n := namesCost(topics)
	t.mem.give(namesCost(gm.subscription))
	gn.cost += n - namesCost(gm.subscription)
	t.mem.take(n)
	gm.subscription, gm.hasSub = slices.Sorted(slices.Values(topics)), true
	t.shed()
}

func (t *groupTracker) setAssigned(gn *gen, gm *genMember, tps []facts.TopicPartitions) {
	if gm.unfollowed {
		return
	}
	n := tpCost(tps)
	t.mem.give(tpCost(gm.assigned))
	gn.cost += n - tpCost(gm.assigned)
	t.mem.take(n)
	gm.assigned, gm.hasAssigned = cloneTPs(tps), true
}

func (t *groupTracker) newGen(g *group, num int32, epoch bool, at time.Time) *gen {
	gn := &gen{num: num, epoch: epoch, start: at, cost: costGeneration, idx: g.nGens + g.nStatic}
	if !epoch && !g.joinStart.IsZero() && g.joinStart.Before(at) {
		gn.start = g.joinStart
	}
	g.joinStart = time.Time{}
	gn.signaled, g.signaled = g.signaled, nil
	for _, m := range gn.signaled {
		m.signaled = false
	}
	gn.follows = g.nGens+g.nStatic > 0
	if last := g.lastGen(); last != nil {
		last.before, gn.before = nil, last
	}
	g.gens = append(g.gens, gn)
	if g.byNum == nil {
		g.byNum = map[genKey]*gen{}
	}
	g.byNum[genKey{num, epoch}] = gn
	g.nGens++
	if g.genParked {
		// Its only generation's item came up while it was the only
		// one: it can go now, after those kept before this one.
		g.genParked = false
		t.fifo = append(t.fifo, evictItem{g, itemGen, t.bump(g)})
	}
	t.keep(g, itemGen, gn.cost)
	return gn
}

// account keeps the group's rebalance totals as gn's start or end moves:
// they count every rebalance, whether its entry is kept or dropped
// (--max-analysis-memory), as GroupReport.Rebalances promises.
func (g *group) account(gn *gen) {
	if !gn.follows || gn.static != nil || gn.start.IsZero() || gn.end.IsZero() {
		return
	}
	if !gn.counted {
		gn.counted = true
		g.rebalances++
	}
	took := max(gn.end.Sub(gn.start), 0)
	g.rebalanceTime += took - gn.took
	gn.took = took
}

func (gn *gen) ref(r Ref) {
	if len(gn.refs) < 16 {
		gn.refs = append(gn.refs, r)
	}
}

// classicGen returns the generation entry a JoinGroup response of
// member m gave generation num: a new one when num is new, a copy of the
// latest when m is a static member taking its predecessor's place
// without a rebalance (the coordinator answers with the same generation,
// KIP-345). Generations only grow: a JoinGroup answered with a number
// below the latest is a group made anew (deleted once empty, its
// numbering restarted), and gets an entry of its own.
func (t *groupTracker) classicGen(g *group, num int32, m *member, at time.Time) *gen {
	last := g.lastGen()
	if last != nil && !last.epoch && num < last.num {
		return t.newGen(g, num, false, at)
	}
	if last != nil && !last.epoch && last.num == num && m.instance != "" && last.member(m) == nil && last.complete {
		for _, old := range last.members {
			if old.m != m && old.m.instance == m.instance {
				return t.staticCopy(g, last, old, m, at)
			}
		}
	}
	if last != nil && !last.epoch && last.num == num {
		return last
	}
	return t.newGen(g, num, false, at)
}

// staticCopy makes the entry in which member by took old's place in last,
// with its assignment.
func (t *groupTracker) staticCopy(g *group, last *gen, old *genMember, by *member, at time.Time) *gen {
	gn := t.newGen(g, last.num, last.epoch, at)
	g.nGens--
	g.nStatic++ // the same generation, a member in another's place
	gn.start = at
	gn.leader, gn.protocol = last.leader, last.protocol
	if gn.leader == old.m.id {
		gn.leader = by.id
	}
	gn.static, gn.staticBy = old.m, by
	for _, gm := range last.members {
		if gm == old {
			continue
		}
		c := t.addGenMember(g, gn, gm.m, gm.via)
		c.epoch = gm.epoch
		if gm.hasAssigned {
			t.setAssigned(gn, c, gm.assigned)
		}
	}
	nm := t.addGenMember(g, gn, by, "static-rejoin")
	nm.epoch = old.epoch
	if old.hasAssigned {
		t.setAssigned(gn, nm, old.assigned)
	}
	if old.m.end != endStaticLeave {
		t.setEnd(old.m, endReplaced, at)
	}
	return gn
}

func (t *groupTracker) joinGroup(g *group, e *xinfo) {
	fg := &e.fx.Group
	code := e.topError()
	g.errCount(code)
	if fg.ProtocolType != "" {
		g.ptype = fg.ProtocolType
	}
	id := fg.AssignedMemberID
	if id == "" {
		id = fg.MemberID
	}
	if id == "" {
		t.event(g, groupEvent(e, nil, "join", "JoinGroup without a member ID, unanswered"))
		return
	}
	m := t.member(g, id, e)
	m.setTimeouts(fg)
	m.err(code)
	if len(fg.Protocols) > 0 && fg.Subscription != nil {
		t.subscribe(m, fg.Subscription.Topics)
		t.setWorker(m, fg.Subscription.Worker)
	}
	if code == errMemberIDRequired && (g.joinStart.IsZero() || e.at.Before(g.joinStart)) {
		// A new member's first JoinGroup: the rebalance it starts begins
		// here.
		g.joinStart = e.at
	}
	newMember := m.joined.IsZero()
	if newMember {
		m.joined = e.at
	}
	why := ""
	if fg.Reason != "" {
		why = " (reason: " + fg.Reason + ")"
	}
	switch {
	case code == errMemberIDRequired:
		t.event(g, groupEvent(e, m, "join", "new member: the coordinator gives it member ID "+id+" and asks it to join again (MEMBER_ID_REQUIRED, KIP-394)"))
		return
	case code != 0:
		t.event(g, groupEvent(e, m, "join", "JoinGroup failed: "+errorMeaning(code)))
		if code == errFencedInstanceID || code == errUnknownMemberID {
			t.setEnd(m, endFenced, e.at)
		}
		return
	case !e.answered:
		t.event(g, groupEvent(e, m, "join", "JoinGroup unanswered"+why))
		return
	}
	if m.end != "" && m.end != endReplaced {
		t.setEnd(m, "", time.Time{}) // it came back
	}
	gn := t.classicGen(g, fg.Generation, m, e.at)
	m.lastGeneration = fg.Generation
	if !e.at.After(gn.start) || gn.startRef.Frame == 0 {
		gn.start = earliest(gn.start, e.at)
		if gn.startRef.Frame == 0 || !e.at.After(gn.start) {
			gn.startRef, gn.file = e.ref, e.file
		}
		g.account(gn)
	}
	gn.ref(e.ref)
	if fg.Leader != "" {
		gn.leader = fg.Leader
	}
	if fg.Protocol != "" {
		gn.protocol = fg.Protocol
		g.protocol = fg.Protocol
	}
	via := "rebalance"
	if gn.staticBy == m {
		via = "static-rejoin"
	}
	own := t.addGenMember(g, gn, m, via)
	if fg.Subscription != nil {
		t.setSubscribed(gn, own, fg.Subscription.Topics)
	}
	if len(fg.Members) > 0 {
		gn.listed = true
		if gn.before != nil && !gn.outMarked && g.lastGen() == gn {
			// Before its members are made: those that are out can make
			// room for them.
			listed := make(map[string]bool, len(fg.Members))
			for i := range fg.Members {
				listed[fg.Members[i].ID] = true
			}
			t.markOut(g, gn, func(m *member) bool { return listed[m.id] || gn.member(m) != nil })
		}
		for i := range fg.Members {
			fm := &fg.Members[i]
			if fm.ID == "" {
				continue
			}
			if fm.ID == m.id && m.unfollowed {
				continue // counted once, as the member answered
			}
			mm := t.member(g, fm.ID, nil)
			if fm.InstanceID != "" {
				mm.setInstance(fm.InstanceID)
			}
			if fm.Subscription != nil {
				t.subscribe(mm, fm.Subscription.Topics)
				t.setWorker(mm, fm.Subscription.Worker)
			}
			gm := t.addGenMember(g, gn, mm, "rebalance")
			if fm.Subscription != nil && !gm.hasSub {
				t.setSubscribed(gn, gm, fm.Subscription.Topics)
			}
		}
	}
	m.live(e.done, false)
	detail := fmt.Sprintf("joined generation %d", fg.Generation)
	if gn.staticBy == m {
		detail = fmt.Sprintf("static member %s rejoined generation %d in place of %s, without a rebalance (KIP-345)", m.instance, fg.Generation, gn.static.id)
	}
	if fg.Leader == m.id {
		detail += ", as leader of " + plural(len(fg.Members), "member")
	}
	if fg.Protocol != "" {
		detail += ", protocol " + fg.Protocol
	}
	t.event(g, groupEvent(e, m, "join", detail+why))
}

// markOut marks out, when gn (the latest generation) is listed by its
// leader, the members of the generation before it not in gn (in):
// they are done with the group (left, expired or replaced: the report
// decides which), and can be evicted as an ended member can. Each
// generation is looked at once.
func (t *groupTracker) markOut(g *group, gn *gen, in func(*member) bool) {
	prev := gn.before
	if gn.outMarked || prev == nil || g.lastGen() != gn {
		return
	}
	gn.outMarked, gn.before = true, nil
	if prev.epoch {
		return
	}
	for _, gm := range prev.members {
		if gm.m.kept && !in(gm.m) {
			gm.m.outIdx, gm.m.outAt = gn.idx, gn.start
			t.setOut(gm.m, true)
		}
	}
}

func (t *groupTracker) syncGroup(g *group, e *xinfo) {
	fg := &e.fx.Group
	code := e.topError()
	g.errCount(code)
	if fg.MemberID == "" {
		return
	}
	m := t.member(g, fg.MemberID, e)
	m.setTimeouts(fg)
	m.err(code)
	if !fg.HasGeneration {
		return
	}
	gn := g.genNum(fg.Generation, false)
	if gn == nil {
		gn = t.newGen(g, fg.Generation, false, e.at)
	}
	gn.ref(e.ref)
	if fg.Protocol != "" && gn.protocol == "" {
		gn.protocol = fg.Protocol
	}
	planned := 0
	for i := range fg.Members {
		fm := &fg.Members[i]
		if fm.ID == "" || fm.Assignment == nil {
			continue
		}
		pm := t.member(g, fm.ID, nil)
		gm := t.addGenMember(g, gn, pm, "rebalance")
		gm.plan, gm.hasPlan = cloneTPs(fm.Assignment.Partitions), true
		// A Connect worker's assignment is what the leader's plan gives
		// it (its own SyncGroup response says the same).
		t.setConnectAssignment(pm, fm.Assignment.Connect)
		planned++
	}
	if planned > 0 && gn.leader == "" {
		gn.leader = m.id
	}
	switch {
	case code != 0:
		t.event(g, groupEvent(e, m, "sync", "SyncGroup failed: "+errorMeaning(code)))
		return
	case !e.answered:
		t.event(g, groupEvent(e, m, "sync", "SyncGroup unanswered"))
		return
	}
	gm := gn.member(m)
	if gm == nil {
		gm = t.addGenMember(g, gn, m, "rebalance")
	}
	var tps []facts.TopicPartitions
	var ca *facts.ConnectAssignment
	if fg.Assignment != nil {
		tps, ca = fg.Assignment.Partitions, fg.Assignment.Connect
	}
	t.setAssigned(gn, gm, tps)
	t.assign(m, tps)
	t.setConnectAssignment(m, ca)
	gn.complete = true
	if e.done.After(gn.end) {
		gn.end = e.done
		g.account(gn)
	}
	m.live(e.done, false)
	detail := "assigned " + tpString(tps)
	if ca != nil {
		detail = "assigned " + ConnectorsString(ca.Connectors)
		if len(ca.Revoked) > 0 {
			detail += ", revoked " + ConnectorsString(ca.Revoked)
		}
	}
	if planned > 0 {
		detail += fmt.Sprintf(" (the leader's plan for %s)", plural(planned, "member"))
	}
	t.event(g, groupEvent(e, m, "sync", fmt.Sprintf("generation %d: %s", fg.Generation, detail)))
}

func (t *groupTracker) heartbeat(g *group, e *xinfo) {
	fg := &e.fx.Group
	if fg.MemberID == "" {
		return
	}
	code := e.topError()
	g.errCount(code)
	m := t.member(g, fg.MemberID, e)
	m.setTimeouts(fg)
	m.err(code)
	m.live(e.at, true)
	m.lastHBRef = e.ref
	switch code {
	case 0:
	case errRebalanceInProgress:
		if !m.signaled && m.kept {
			m.signaled = true
			g.signaled = append(g.signaled, m)
		}
		t.event(g, groupEvent(e, m, "heartbeat", fmt.Sprintf("generation %d: %s", fg.Generation, errorMeaning(code))))
	default:
		if code == errUnknownMemberID || code == errFencedInstanceID {
			t.setEnd(m, endFenced, e.at)
		}
		t.event(g, groupEvent(e, m, "heartbeat", fmt.Sprintf("generation %d: %s", fg.Generation, errorMeaning(code))))
	}
}

func (t *groupTracker) leaveGroup(g *group, e *xinfo) {
	fg := &e.fx.Group
	// The request's own error (not a member's: v3+ answers each member
	// of its batch with its own).
	code := int16(0)
	for i := range e.fx.Errors {
		if er := &e.fx.Errors[i]; er.Topic < 0 && er.Scope.Role == protocol.RoleNone {
			code = er.Code
			break
		}
	}
	g.errCount(code)
	type leaving struct {
		id, instance, reason string
		code                 int16
	}
	var ls []leaving
	if fg.MemberID != "" {
		ls = append(ls, leaving{fg.MemberID, fg.InstanceID, fg.Reason, code})
	}
	for i := range fg.Members {
		fm := &fg.Members[i]
		c := fm.Error
		if c == 0 {
			c = code
		} else {
			g.errCount(c)
		}
		ls = append(ls, leaving{fm.ID, fm.InstanceID, fm.Reason, c})
	}
	for _, l := range ls {
		id := l.id
		if id == "" && l.instance != "" {
			if m := g.byInstance[l.instance]; m != nil && m.kept && m.end == "" {
				id = m.id
			}
		}
		if id == "" {
			continue
		}
		if l.code != 0 && g.members[id] == nil {
			continue // refused for a member the capture never saw: none left
		}
		m := t.member(g, id, e)
		m.err(l.code)
		code := l.code
		if code == 0 { // unanswered too: a client leaving often closes at once
			m.left, m.leaveReason, m.leaveRef = e.at, l.reason, e.ref
			t.setEnd(m, endLeft, e.at)
		}
		detail := "LeaveGroup"
		switch {
		case l.reason != "":
			detail += ", reason: " + l.reason
		case e.x.APIVersion < 5:
			detail += fmt.Sprintf(" (v%d: no reason field before v5, KIP-800)", e.x.APIVersion)
		default:
			detail += ", no reason given"
		}
		if code != 0 {
			detail += ": " + errorMeaning(code)
		}
		t.event(g, groupEvent(e, m, "leave", detail))
	}
}

// epochHeartbeat follows a KIP-848 (share, streams) heartbeat: member
// epoch 0 joins, -1 leaves, -2 leaves for a restart (a static member);
// the response's member epoch and assignment are the member's state.
func (t *groupTracker) epochHeartbeat(g *group, e *xinfo) {
	fg := &e.fx.Group
	code := e.topError()
	g.errCount(code)
	id := fg.AssignedMemberID
	if id == "" {
		id = fg.MemberID
	}
	if id == "" {
		if fg.HasEpoch && fg.MemberEpoch == 0 {
			t.event(g, groupEvent(e, nil, "join", "joins with member epoch 0, unanswered"))
		}
		return
	}
	m := t.member(g, id, e)
	m.setTimeouts(fg)
	m.err(code)
	reqEpoch := int32(-3)
	if fg.HasEpoch {
		reqEpoch = fg.MemberEpoch
	}
	switch reqEpoch {
	case 0:
		if m.joined.IsZero() {
			m.joined = e.at
		}
		if m.end != "" {
			t.setEnd(m, "", time.Time{})
		}
		t.event(g, groupEvent(e, m, "join", "joins with member epoch 0"))
	case -1, -2:
		m.left, m.leaveRef = e.at, e.ref
		t.setEnd(m, endLeft, e.at)
		what := "leaves (member epoch -1)"
		if reqEpoch == -2 {
			m.end = endStaticLeave
			what = "static member leaves for a restart (member epoch -2): its assignment is kept for its successor"
		}
		t.event(g, groupEvent(e, m, "leave", what))
		return
	default:
		m.live(e.at, true)
		m.lastHBRef = e.ref
	}
	if m.out && code == 0 {
		t.setOut(m, false) // heartbeating again: a describe missed it
	}
	if code != 0 {
		if code == errFencedMemberEpoch || code == errUnknownMemberID || code == errFencedInstanceID {
			t.setEnd(m, endFenced, e.at)
		}
		t.event(g, groupEvent(e, m, "heartbeat", errorMeaning(code)))
		return
	}
	if !e.answered || !fg.HasAssigned || fg.AssignedEpoch < 0 {
		return
	}
	epoch := fg.AssignedEpoch
	changed := !m.hasEpoch || epoch != m.epoch
	if a := fg.Assignment; a != nil {
		if !m.hasAssignment || !sameTPs(m.assignment, a.Partitions) {
			changed = true
			t.assign(m, a.Partitions)
		}
	}
	m.epoch, m.hasEpoch = epoch, true
	gn := t.epochGen(g, epoch, m, e.at)
	gm := gn.member(m)
	if gm == nil {
		gm = t.addGenMember(g, gn, m, "heartbeat")
	}
	gm.epoch = epoch
	// What the member holds at an epoch grows to its target as other
	// members release partitions, and shrinks while it revokes for the
	// next epoch: its assignment at the epoch is the union (the target).
	if u := unionTPs(gm.assigned, m.assignment); !gm.hasAssigned || !sameTPs(u, gm.assigned) {
		t.setAssigned(gn, gm, u)
		if e.done.After(gn.end) {
			gn.end = e.done // reconciled so far
			g.account(gn)
		}
	}
	gn.complete = true
	if gn.startRef.Frame == 0 {
		gn.startRef, gn.file = e.ref, e.file
	}
	if changed {
		gn.ref(e.ref)
		t.event(g, groupEvent(e, m, "epoch", fmt.Sprintf("member epoch %d: assigned %s", epoch, tpString(m.assignment))))
	}
}

// maxStateLen bounds a group state kept: Kafka's are at most 19 bytes
// ("CompletingRebalance"); a longer one is the peer's and is not kept.
const maxStateLen = 64

// maxDescribedClientID bounds a client ID a describe gives a member, and
// a classic group's protocol type and assignor: a longer one (the peer's
// to make up) is not taken, the member's and group's own exchanges give
// theirs.
const maxDescribedClientID = 256

// described takes what a describe response says of the groups it
// describes (facts.DescribedGroup), groups of kind kind: their state,
// and each member as one of its group's, with its instance ID and client
// ID; a KIP-848 (share, streams) member's epoch and assignment when newer
// than what its own heartbeats said (the coordinator's view at the time
// of the describe); a classic consumer group's (DescribeGroups) member's
// subscription, and its assignment when none was seen or the describe is
// later than the member's last exchange, and the group's protocol type
// and assignor. A describe is an admin's question, not the members' sign
// of life: their heartbeat gaps and generations are their own
// exchanges'. Each group described gets a "describe" event.
func (t *groupTracker) described(e *xinfo, kind string) {
	if !e.answered {
		return
	}
	for i := range e.fx.Described {
		d := &e.fx.Described[i]
		if d.ID == "" || d.Error != 0 {
			continue
		}
		g := t.group(d.ID, kind, e.at)
		if d.State != "" && len(d.State) <= maxStateLen {
			g.state = strings.Clone(d.State)
		}
		if kind == kindClassic {
			if d.ProtocolType != "" && len(d.ProtocolType) <= maxDescribedClientID {
				g.ptype = strings.Clone(d.ProtocolType)
			}
			if d.Protocol != "" && len(d.Protocol) <= maxDescribedClientID {
				g.protocol = strings.Clone(d.Protocol)
			}
		}
		listed := make(map[string]bool, len(d.Members))
		for j := range d.Members {
			listed[d.Members[j].ID] = true
		}
		// A member the coordinator no longer lists, silent since before
		// the describe was sent, is no longer in the group: the group
		// moved on without it (its session expired; for KIP-848 only the
		// broker knows it). It is out, done with the group, and ends as
		// the report decides from what it kept (expired by the
		// describe's time, as it had no session timeout on the wire).
		for _, m := range g.order {
			if m.kept && m.end == "" && !m.out && !listed[m.id] && m.last.Before(e.at) {
				m.outIdx, m.outAt = -1, e.at
				t.setOut(m, true)
			}
		}
		for j := range d.Members {
			dm := &d.Members[j]
			if dm.ID == "" {
				continue
			}
			m := t.member(g, dm.ID, nil)
			if m.first.IsZero() {
				m.first = e.at
			}
			if dm.InstanceID != "" && m.instance == "" {
				m.setInstance(dm.InstanceID)
			}
			if dm.ClientID != "" && len(dm.ClientID) <= maxDescribedClientID {
				t.setClientID(m, strings.Clone(dm.ClientID))
			}
			if s := dm.Subscription; s != nil && m.subscription == nil {
				t.subscribe(m, s.Topics)
			}
			if s := dm.Subscription; s != nil && s.Worker != nil && (m.connect == nil || !m.connect.hasWorker || e.at.After(m.last)) {
				t.setWorker(m, s.Worker)
			}
			if a := dm.Assignment; a != nil && a.Connect != nil && (m.connect == nil || m.connect.asg == nil || e.at.After(m.last)) {
				t.setConnectAssignment(m, a.Connect)
			}
			if !dm.HasEpoch {
				// Classic: no epoch says which is newer; the describe
				// is, when it came after the member's last exchange.
				if a := dm.Assignment; a != nil && (!m.hasAssignment || e.at.After(m.last) && !sameTPs(m.assignment, a.Partitions)) {
					t.assign(m, a.Partitions)
				}
				continue
			}
			if dm.Epoch < 0 || m.hasEpoch && dm.Epoch < m.epoch {
				continue
			}
			m.epoch, m.hasEpoch = dm.Epoch, true
			if a := dm.Assignment; a != nil && (!m.hasAssignment || !sameTPs(m.assignment, a.Partitions)) {
				t.assign(m, a.Partitions)
			}
		}
		detail := plural(len(d.Members), "member")
		if d.Epoch >= 0 {
			detail += fmt.Sprintf(" at group epoch %d", d.Epoch)
		}
		if d.AssignmentEpoch >= 0 {
			detail += fmt.Sprintf(", target assignment epoch %d", d.AssignmentEpoch)
		}
		if g.state != "" && g.state == d.State {
			detail += ", state " + g.state
		}
		// As the state: what was taken (a peer's string up to its
		// bound), not a longer one, which the timeline would show whole.
		if kind == kindClassic && g.ptype != "" && g.ptype == d.ProtocolType {
			detail += ", protocol type " + g.ptype
		}
		if kind == kindClassic && g.protocol != "" && g.protocol == d.Protocol {
			detail += ", assignor " + g.protocol
		}
		t.event(g, groupEvent(e, nil, "describe", "described: "+detail))
	}
}

// epochGen returns the entry of member epoch num for member m: a new one
// when num is beyond the latest, a static copy when m takes the place of
// a static member that left with epoch -2.
func (t *groupTracker) epochGen(g *group, num int32, m *member, at time.Time) *gen {
	last := g.lastGen()
	if last == nil || !last.epoch || num > last.num {
		return t.newGen(g, num, true, at)
	}
	gn := g.genNum(num, true)
	if gn == nil {
		return t.newGen(g, num, true, at)
	}
	if gn == last && m.instance != "" && gn.member(m) == nil {
		for _, old := range gn.members {
			if old.m != m && old.m.instance == m.instance && old.m.end == endStaticLeave {
				return t.staticCopy(g, gn, old, m, at)
			}
		}
	}
	return gn
}

func (t *groupTracker) commit(g *group, e *xinfo) {
	fx := e.fx
	fg := &fx.Group
	code := e.topError()
	g.errCount(code)
	var m *member
	txn := e.x.APIKey == protocol.KeyTxnOffsetCommit
	switch {
	case fg.MemberID == "":
	case txn:
		// A transactional producer commits for a member (KIP-447): the
		// client is the producer's, not the member's; a member not seen
		// yet is left to its own requests.
		m = g.members[fg.MemberID]
	default:
		m = t.member(g, fg.MemberID, e)
	}
	if m != nil {
		m.err(code)
	}
	// The commit's GenerationIdOrMemberEpoch as sent: the group's kind
	// and the member's epoch below say which it is.
	genNum := int32(-1)
	switch {
	case fg.HasGenOrEpoch:
		genNum = fg.GenerationOrEpoch
	case fg.HasGeneration:
		genNum = fg.Generation
	}
	stale, why := false, ""
	if code != 0 {
		stale, why = staleCode(code), errorMeaning(code)
	}
	if last := g.lastGen(); !stale && genNum >= 0 && last != nil && !last.epoch && genNum < last.num {
		stale, why = true, fmt.Sprintf("generation %d while the group is at %d", genNum, last.num)
	}
	if !stale && genNum >= 0 && m != nil && m.hasEpoch && genNum < m.epoch {
		stale, why = true, fmt.Sprintf("member epoch %d while the member is at %d", genNum, m.epoch)
	}
	// A commit is stale as a whole (the request's error, generation or
	// epoch), or partition by partition (each partition's own error).
	var parts, staleParts []string
	perr := 0
	for i := range fx.Topics {
		tp := &fx.Topics[i]
		for j := range tp.Partitions {
			p := &tp.Partitions[j]
			off, ok := p.Offsets.Get(facts.OffsetCommitted)
			if !ok && p.Error == 0 {
				continue
			}
			k := tpKey{tp.Label(), p.Index}
			c := t.commitOf(g, k)
			// Only an answer without error commits: an unanswered or
			// refused commit leaves the group's offset as it was, and a
			// TxnOffsetCommit's waits for its transaction's end.
			if ok && e.answered && code == 0 && p.Error == 0 {
				h := &heldOffset{committed: committed{offset: off, metadata: p.Offsets.CommittedMetadata, generation: genNum, memberID: fg.MemberID, at: e.at, ref: e.ref}}
				if id := fx.Producer.TransactionalID; txn && fx.Producer.HasTxnID && id != "" {
					h.txnID = id
					if c.held == nil {
						if t.held == nil {
							t.held = map[string][]*commit{}
						}
						t.held[id] = append(t.held[id], c)
					}
					c.held = h
				} else {
					c.apply(h)
				}
			}
			pStale := stale
			if p.Error != 0 {
				c.errors++
				c.lastError, c.lastErrorAt = p.Error, e.at
				perr++
				g.errCount(p.Error)
				if m != nil {
					m.err(p.Error)
				}
				if !stale && staleCode(p.Error) {
					pStale = true
					if len(staleParts) == 0 {
						why = errorMeaning(p.Error)
					}
				}
			}
			part := fmt.Sprintf("%s[%d@%d]", k.topic, k.part, off)
			if pStale {
				c.stale++
				if !stale && len(staleParts) < 8 {
					staleParts = append(staleParts, part)
				}
			}
			if len(parts) < 8 {
				parts = append(parts, part)
			}
		}
	}
	switch {
	case stale:
		t.event(g, groupEvent(e, m, "commit", fmt.Sprintf("stale commit of %s: %s", strings.Join(parts, ","), why)))
	case len(staleParts) > 0:
		t.event(g, groupEvent(e, m, "commit", fmt.Sprintf("stale commit of %s: %s", strings.Join(staleParts, ","), why)))
	case code != 0 || perr > 0:
		t.event(g, groupEvent(e, m, "commit", fmt.Sprintf("commit of %s failed", strings.Join(parts, ","))))
	}
}

// plural writes "1 member", "3 members".
func plural(n int, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case strings.HasSuffix(what, "ch") || strings.HasSuffix(what, "s"):
		return fmt.Sprintf("%d %ses", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// staleCode reports whether an error answers a commit from a member that
// is no longer part of the current generation (or epoch).
func staleCode(code int16) bool {
	switch code {
	case errIllegalGeneration, errUnknownMemberID, errRebalanceInProgress, errFencedInstanceID, errFencedMemberEpoch, errStaleMemberEpoch:
		return true
	}
	return false
}

// endTxn ends the transaction of an EndTxn: the offsets its
// TxnOffsetCommits held become the groups' on a COMMIT answered without
// error, and are dropped otherwise. An EndTxn unanswered or put off
// (CONCURRENT_TRANSACTIONS, a coordinator moving) ends nothing: the
// producer retries it.
func (t *groupTracker) endTxn(e *xinfo) {
	pr := &e.fx.Producer
	code := e.topError()
	if endRetried(e.answered, code) || !pr.HasTxnID || t.held[pr.TransactionalID] == nil {
		return // retried: the transaction is not over
	}
	// Committed only when the COMMIT is answered without error: a COMMIT
	// refused (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, ...) leaves the
	// transaction to be aborted.
	commit := code == 0 && e.fx.Commit == 1
	for _, c := range t.held[pr.TransactionalID] {
		if h := c.held; h != nil && h.txnID == pr.TransactionalID {
			if commit {
				c.apply(h)
			}
			c.held = nil
		}
	}
	delete(t.held, pr.TransactionalID)
}

func (t *groupTracker) commitOf(g *group, k tpKey) *commit {
	c := g.commits[k]
	if c == nil {
		c = &commit{tp: k, committed: committed{generation: -1, offset: -1}}
		g.commits[k] = c
		g.corder = append(g.corder, k)
		t.keep(g, itemCommit, costCommit+int64(len(k.topic)))
	}
	return c
}

// offsetFetch records committed offsets a member (or an admin) read, for
// the partitions no commit was seen of.
// OffsetFetch v8+ batches groups: each topic counts for the group whose
// entry lists it (facts.Topic.Owner).
func (t *groupTracker) offsetFetch(e *xinfo) {
	if !e.answered {
		return
	}
	for i := range e.fx.Topics {
		tp := &e.fx.Topics[i]
		id := e.fx.Group.ID
		if tp.Owner.Role == protocol.RoleGroupID {
			id = tp.Owner.ID
		}
		g := t.groups[id]
		if g == nil {
			continue
		}
		t.touch(g)
		for j := range tp.Partitions {
			p := &tp.Partitions[j]
			off, ok := p.Offsets.Get(facts.OffsetCommitted)
			if !ok || off < 0 {
				continue
			}
			k := tpKey{tp.Label(), p.Index}
			if c := g.commits[k]; c != nil && c.commits > 0 {
				continue
			}
			c := t.commitOf(g, k)
			c.offset, c.metadata, c.at, c.ref, c.fetched = off, p.Offsets.CommittedMetadata, e.done, e.ref, true
		}
	}
}

// fetch learns high watermarks and the fetch positions of group members.
func (t *groupTracker) fetch(e *xinfo) {
	var ms []*member
	if cm := t.cur.byClient[e.x.ClientID]; cm != nil {
		ms = cm.ms
	}
	for i := range e.fx.Topics {
		tp := &e.fx.Topics[i]
		for j := range tp.Partitions {
			p := &tp.Partitions[j]
			k := tpKey{tp.Label(), p.Index}
			if hw, ok := p.Offsets.Get(facts.OffsetHighWatermark); ok && e.answered && p.Error == 0 {
				if _, had := t.cur.hw[k]; !had {
					t.mem.take(costState + int64(len(k.topic)))
				}
				t.cur.hw[k] = hwMark{hw, e.done}
			}
			if off, ok := p.Offsets.Get(facts.OffsetFetch); ok {
				for _, m := range ms {
					if m.kept && m.end == "" && m.owns(k) {
						if m.fetch == nil {
							m.fetch = map[tpKey]int64{}
						}
						m.fetch[k] = off
					}
				}
			}
		}
	}
}

func (m *member) owns(k tpKey) bool {
	for _, tp := range m.assignment {
		if tp.Label() == k.topic && slices.Contains(tp.Partitions, k.part) {
			return true
		}
	}
	return false
}

func cloneTPs(tps []facts.TopicPartitions) []facts.TopicPartitions {
	out := make([]facts.TopicPartitions, 0, len(tps))
	for _, tp := range tps {
		c := tp
		c.Partitions = slices.Clone(tp.Partitions)
		slices.Sort(c.Partitions)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b facts.TopicPartitions) int { return cmp.Compare(a.Label(), b.Label()) })
	return out
}

// unionTPs returns the partitions of a and b together.
func unionTPs(a, b []facts.TopicPartitions) []facts.TopicPartitions {
	byTopic := map[string]*facts.TopicPartitions{}
	var order []string
	for _, tps := range [2][]facts.TopicPartitions{a, b} {
		for _, tp := range tps {
			k := tp.Label()
			u := byTopic[k]
			if u == nil {
				c := tp
				c.Partitions = nil
				u = &c
				byTopic[k] = u
				order = append(order, k)
			}
			for _, p := range tp.Partitions {
				if !slices.Contains(u.Partitions, p) {
					u.Partitions = append(u.Partitions, p)
				}
			}
		}
	}
	out := make([]facts.TopicPartitions, 0, len(order))
	for _, k := range order {
		out = append(out, *byTopic[k])
	}
	return cloneTPs(out)
}

// sameTPs compares two assignments, ignoring order and empty topics.
func sameTPs(a, b []facts.TopicPartitions) bool {
	flat := func(tps []facts.TopicPartitions) []tpKey {
		var out []tpKey
		for _, tp := range tps {
			for _, p := range tp.Partitions {
				out = append(out, tpKey{tp.Label(), p})
			}
		}
		slices.SortFunc(out, func(x, y tpKey) int { return cmp.Or(cmp.Compare(x.topic, y.topic), cmp.Compare(x.part, y.part)) })
		return out
	}
	return slices.Equal(flat(a), flat(b))
}

// tpString writes an assignment as "t[0,1] u[3]", "nothing" when empty.
func tpString(tps []facts.TopicPartitions) string {
	var b strings.Builder
	for _, tp := range cloneTPs(tps) {
		if len(tp.Partitions) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(tp.Label())
		b.WriteByte('[')
		b.WriteString(PartitionRanges(tp.Partitions))
		b.WriteByte(']')
	}
	if b.Len() == 0 {
		return "nothing"
	}
	return b.String()
}

// PartitionRanges writes sorted partition indexes compactly, runs of three
// or more as ranges: "0-3,7,8". Reports and their text share it.
func PartitionRanges(ps []int32) string {
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		switch {
		case j == i:
			fmt.Fprintf(&b, "%d", ps[i])
		case j == i+1:
			fmt.Fprintf(&b, "%d,%d", ps[i], ps[j])
		default:
			fmt.Fprintf(&b, "%d-%d", ps[i], ps[j])
		}
		i = j + 1
	}
	return b.String()
}
