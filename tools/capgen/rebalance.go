package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Consumer groups that rebalance on purpose (pcaps/README.md,
// group-rebalance-*.pcap): one capture per client library, each with one
// classic group of members of that library on a 4-partition topic. The
// members join one by one, one leaves with LeaveGroup, a static member
// (group.instance.id, where the library has it) restarts and takes its
// assignment back without a rebalance, and one member is killed (its
// connections close without a LeaveGroup) so that the broker expires it
// after the session timeout. Each member reports every assignment through
// its library's own callback (kgo OnPartitionsAssigned, sarama
// ConsumerGroupHandler.Setup, kafka-python on_partitions_assigned, KafkaJS
// GROUP_JOIN, kcat's "rebalanced" line); the expectation file holds those
// reports generation by generation.

const (
	rebalanceTopic      = "capgen-rebalance"
	rebalancePartitions = 4
	rebalanceSession    = 3 * time.Second
	rebalanceHeartbeat  = 300 * time.Millisecond
	// rebalanceWait bounds one step (join, leave, session timeout).
	rebalanceWait = 40 * time.Second
)

// memberEvent is one report of a member's library.
type memberEvent struct {
	kind       string // assigned, revoked, lost
	memberID   string
	generation int32 // -1: the library does not say
	assigned   map[string][]int32
	at         time.Time
}

// groupMember is a running member of a group.
type groupMember interface {
	// leave closes the member as its library does on a normal close:
	// with LeaveGroup, or without for a static member.
	leave() error
	// kill makes the member vanish: its connections close, nothing more
	// is sent.
	kill() error
}

// memberBase is what every member implementation records.
type memberBase struct {
	name       string
	clientID   string
	instanceID *string
	x          *expectation

	mu     sync.Mutex
	events []memberEvent
}

func (m *memberBase) record(ev memberEvent) {
	ev.at = time.Now()
	ev.assigned = cloneAssignment(ev.assigned)
	m.mu.Lock()
	m.events = append(m.events, ev)
	m.mu.Unlock()
	m.x.logf(m.clientID, "%s member=%s generation=%d %s", ev.kind, ev.memberID, ev.generation, formatAssignment(ev.assigned))
}

// assignedSince returns the member's last assignment reported at or after
// t, or nil.
func (m *memberBase) assignedSince(t time.Time) *memberEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.events) - 1; i >= 0; i-- {
		ev := m.events[i]
		if ev.at.Before(t) {
			return nil
		}
		if ev.kind == "assigned" {
			return &ev
		}
	}
	return nil
}

// lastAssigned returns the member's last assignment.
func (m *memberBase) lastAssigned() *memberEvent {
	return m.assignedSince(time.Time{})
}

func formatAssignment(a map[string][]int32) string {
	topics := make([]string, 0, len(a))
	for t := range a {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	var b strings.Builder
	for _, t := range topics {
		fmt.Fprintf(&b, "%s%v", t, a[t])
	}
	if b.Len() == 0 {
		return "(nothing)"
	}
	return b.String()
}

// rebalanceLib is one library's group-rebalance scenario.
type rebalanceLib struct {
	lib     string // kgo, sarama, kafkapython, kafkajs, kcat
	library string // the library and version, for the expectation file
	// assignor is the protocol the members offer first.
	assignor string
	// static: the library has group.instance.id (KIP-345).
	static bool
	// clientGeneration: the library reports the generation with each
	// assignment.
	clientGeneration bool
	// leaveReason is the KIP-800 reason its LeaveGroup carries.
	leaveReason *string
	// requests that must be seen, with the library's versions.
	requests []string
	ensure   func() error
	start    func(rr *rebalanceRun, m *memberBase) (groupMember, error)
}

// rebalanceRun is the state of one group-rebalance scenario.
type rebalanceRun struct {
	lib     rebalanceLib
	c       *kfake.Cluster
	port    int
	group   string
	x       *expectation
	g       *expectGroup
	lastGen int32
}

func rebalanceLibs() []rebalanceLib {
	return []rebalanceLib{
		{lib: "kgo", library: "franz-go kgo v1.22.3", assignor: "range", static: true, clientGeneration: true,
			leaveReason: strp("client leaving group per normal operation"),
			requests:    []string{"JoinGroup v9", "SyncGroup v5", "Heartbeat v4", "LeaveGroup v5", "OffsetCommit v10"},
			start:       startKgoMember},
		{lib: "sarama", library: "IBM/sarama v1.61.1 (Version 3.6.0)", assignor: "range", static: true, clientGeneration: true,
			leaveReason: strp("the consumer is being closed"),
			requests:    []string{"JoinGroup v8", "SyncGroup v5", "Heartbeat v4", "LeaveGroup v5"},
			start:       startSaramaMember},
		{lib: "kafkapython", library: "kafka-python 2.0.2 (Debian python3-kafka)", assignor: "range", clientGeneration: true,
			requests: []string{"JoinGroup v2", "SyncGroup v1", "Heartbeat v1", "LeaveGroup v1"},
			ensure:   func() error { _, err := ensurePython(); return err },
			start:    startKafkaPythonMember},
		{lib: "kafkajs", library: "KafkaJS 2.2.4 (npm)", assignor: "RoundRobinAssigner",
			requests: []string{"JoinGroup v5", "SyncGroup v3", "Heartbeat v3", "LeaveGroup v3"},
			ensure:   func() error { _, err := ensureKafkaJS(); return err },
			start:    startKafkaJSMember},
		{lib: "kcat", library: "kcat 1.7.1, librdkafka 2.0.2 (Debian)", assignor: "range", static: true,
			requests: []string{"JoinGroup v5", "SyncGroup v3", "Heartbeat v3", "LeaveGroup v1"},
			ensure:   func() error { _, err := ensureTool("kcat", "kcat"); return err },
			start:    startKcatMember},
	}
}

// runRebalance is the group-rebalance scenario of one library.
func runRebalance(lib rebalanceLib) func(ports []int, x *expectation) error {
	return func(ports []int, x *expectation) error {
		if lib.ensure != nil {
			if err := lib.ensure(); err != nil {
				return err
			}
		}
		port := ports[0]
		c, err := newCluster(port, kfake.SeedTopics(rebalancePartitions, rebalanceTopic))
		if err != nil {
			return err
		}
		defer c.Close()
		if lib.lib == "kcat" {
			if err := advertiseFromV0(c, port); err != nil {
				return err
			}
			x.client("capgen-setup", "capgen raw client", "reads the broker's ApiVersions to widen its Produce and Fetch ranges (kcat.go)")
		}
		x.Brokers = []expectBroker{{0, addr(port)}}
		if err := seedRecords(port, x, rebalanceTopic, rebalancePartitions, 2); err != nil {
			return err
		}
		group := "capgen-" + lib.lib + "-rebalance"
		rr := &rebalanceRun{lib: lib, c: c, port: port, group: group, x: x}
		rr.g = &expectGroup{Group: group, Protocol: "classic", Assignor: lib.assignor,
			SessionTimeoutMs: int32(rebalanceSession.Milliseconds()), HeartbeatIntervalMs: int32(rebalanceHeartbeat.Milliseconds()),
			Topics: []string{rebalanceTopic}}
		x.Groups = append(x.Groups, rr.g)
		x.About = fmt.Sprintf("A classic consumer group of %s members on %s (%d partitions): members join one by one, "+
			"one leaves with LeaveGroup, %sone is killed and expires after the %v session timeout.",
			lib.library, rebalanceTopic, rebalancePartitions, map[bool]string{true: "a static member restarts and takes its assignment back, "}[lib.static], rebalanceSession)
		x.Varies = []string{"member IDs", "timestamps and TCP ports", "the number of heartbeats, fetches and commits"}
		if !lib.clientGeneration {
			x.Varies = append(x.Varies, "which member leads")
		}
		return rr.run()
	}
}

func (rr *rebalanceRun) newMember(name string, static bool) (*memberBase, groupMember, error) {
	m := &memberBase{name: name, clientID: fmt.Sprintf("capgen-%s-%s", rr.lib.lib, name), x: rr.x}
	if static {
		m.instanceID = strp(fmt.Sprintf("capgen-%s-static", rr.lib.lib))
	}
	role := "group member " + name
	if static {
		role = "static group member " + name + " (group.instance.id " + *m.instanceID + ")"
	}
	rr.x.client(m.clientID, rr.lib.library, role)
	gm, err := rr.lib.start(rr, m)
	if err != nil {
		return nil, nil, fmt.Errorf("starting member %s: %w", name, err)
	}
	return m, gm, nil
}

func (rr *rebalanceRun) run() error {
	type live struct {
		m  *memberBase
		gm groupMember
	}
	var members []*live
	var all []*live
	defer func() {
		for _, l := range members {
			l.gm.kill()
		}
	}()
	add := func(name string, static bool) (*live, error) {
		m, gm, err := rr.newMember(name, static)
		if err != nil {
			return nil, err
		}
		l := &live{m, gm}
		members = append(members, l)
		all = append(all, l)
		return l, nil
	}
	bases := func() []*memberBase {
		var out []*memberBase
		for _, l := range members {
			out = append(out, l.m)
		}
		return out
	}
	remove := func(l *live) {
		members = slices.DeleteFunc(members, func(o *live) bool { return o == l })
	}
	em := map[*memberBase]*expectMember{}
	member := func(m *memberBase) *expectMember {
		if em[m] == nil {
			em[m] = &expectMember{Name: m.name, ClientID: m.clientID, InstanceID: m.instanceID}
			rr.g.Members = append(rr.g.Members, em[m])
		}
		return em[m]
	}

	// 1. a joins alone, 2. b joins, 3. the static member s (or c) joins.
	third := "c"
	if rr.lib.static {
		third = "s"
	}
	for _, name := range []string{"a", "b", third} {
		t := time.Now()
		l, err := add(name, name == "s")
		if err != nil {
			return err
		}
		member(l.m)
		if err := rr.settle("join "+name, t, bases(), bases()); err != nil {
			return err
		}
	}
	// 4. b leaves with LeaveGroup.
	b := members[1]
	t := time.Now()
	rr.x.logf("capgen", "member b leaves (LeaveGroup)")
	if err := b.gm.leave(); err != nil {
		return fmt.Errorf("member b leaving: %w", err)
	}
	remove(b)
	member(b.m).End = "leave"
	member(b.m).LeaveReason = rr.lib.leaveReason
	if err := rr.settle("leave b", t, bases(), bases()); err != nil {
		return err
	}
	// 5. The static member restarts: it closes without LeaveGroup and a
	// new process with the same group.instance.id joins within the
	// session timeout: the broker hands it the old assignment, no
	// rebalance.
	if rr.lib.static {
		s := members[len(members)-1]
		t := time.Now()
		rr.x.logf("capgen", "static member s closes without LeaveGroup; s2 starts with the same group.instance.id")
		if err := s.gm.leave(); err != nil {
			return fmt.Errorf("member s closing: %w", err)
		}
		remove(s)
		member(s.m).End = "close-static"
		l, err := add("s2", true)
		if err != nil {
			return err
		}
		member(l.m)
		if err := rr.settleGen("static-rejoin s2", t, bases(), []*memberBase{l.m}, true); err != nil {
			return err
		}
	}
	// 6. a is killed: no LeaveGroup; the broker expires it after the
	// session timeout and the others rebalance.
	a := members[0]
	t = time.Now()
	rr.x.logf("capgen", "member a is killed (connections closed, no LeaveGroup)")
	if err := a.gm.kill(); err != nil {
		return fmt.Errorf("killing member a: %w", err)
	}
	remove(a)
	member(a.m).End = "kill"
	if err := rr.settle("timeout a", t, bases(), bases()); err != nil {
		return err
	}
	// 7. The last member closes: a static member without LeaveGroup, c
	// with one.
	last := members[0]
	rr.x.logf("capgen", "member %s closes", last.m.name)
	if err := last.gm.leave(); err != nil {
		return fmt.Errorf("member %s closing: %w", last.m.name, err)
	}
	remove(last)
	if last.m.instanceID != nil {
		member(last.m).End = "close-static"
	} else {
		member(last.m).End = "leave"
		member(last.m).LeaveReason = rr.lib.leaveReason
	}
	for _, l := range all {
		if e := member(l.m); e.MemberID == "" {
			if ev := l.m.lastAssigned(); ev != nil {
				e.MemberID = ev.memberID
			}
		}
	}
	time.Sleep(300 * time.Millisecond)

	rr.x.requests(rr.lib.requests...)
	rr.x.requests("FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup")
	rr.x.Wire.Errors["Heartbeat: REBALANCE_IN_PROGRESS (27)"] = 1
	return nil
}

// settle waits until the group is stable with exactly the members live
// and each member of reporters has reported an assignment since t (of the
// broker's generation, where the library reports generations), then
// records the generation. allowSame: the generation may stay (a static
// member's rejoin that the broker answers with the old assignment; kfake
// rebalances instead when the member's subscription metadata changed, as
// a restarted kgo member's does: it owns no partitions yet).
func (rr *rebalanceRun) settle(cause string, t time.Time, live, reporters []*memberBase) error {
	return rr.settleGen(cause, t, live, reporters, false)
}

func (rr *rebalanceRun) settleGen(cause string, t time.Time, live, reporters []*memberBase, allowSame bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), rebalanceWait)
	defer cancel()
	var info *kfake.GroupInfo
	for {
		info = rr.c.GroupInfo(rr.group)
		if rr.settled(info, live, reporters, allowSame, t) {
			break
		}
		select {
		case <-ctx.Done():
			state := "no group"
			if info != nil {
				state = fmt.Sprintf("%s, generation %d, %d members", info.State, info.Epoch, len(info.Members))
			}
			return fmt.Errorf("%s: group %s did not settle with %d members (%s)", cause, rr.group, len(live), state)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// Let stragglers' SyncGroup responses land before the next step.
	time.Sleep(200 * time.Millisecond)
	gen := &expectGeneration{Generation: info.Epoch, GenerationSource: "broker", Cause: cause}
	if rr.lib.clientGeneration {
		gen.GenerationSource = "client"
	}
	var union []string
	for _, m := range live {
		ev := m.lastAssigned()
		via := "rebalance"
		if info.Epoch == rr.lastGen && slices.Contains(reporters, m) {
			via = "static-rejoin"
		}
		gen.Members = append(gen.Members, &expectAssignment{Name: m.name, MemberID: ev.memberID, Via: via, Assigned: ev.assigned})
		// The client's report must agree with the broker's view.
		var bm *kfake.GroupMember
		for i := range info.Members {
			if info.Members[i].MemberID == ev.memberID {
				bm = &info.Members[i]
			}
		}
		if bm == nil {
			return fmt.Errorf("%s: member %s reported member ID %q, which the broker does not know", cause, m.name, ev.memberID)
		}
		if !sameAssignment(bm.Assignment, ev.assigned) {
			return fmt.Errorf("%s: member %s reported %s, the broker assigned %s", cause, m.name,
				formatAssignment(ev.assigned), formatAssignment(bm.Assignment))
		}
		for topic, ps := range ev.assigned {
			for _, p := range ps {
				union = append(union, fmt.Sprintf("%s/%d", topic, p))
			}
		}
	}
	sort.Strings(union)
	if len(union) != rebalancePartitions || len(slices.Compact(slices.Clone(union))) != rebalancePartitions {
		return fmt.Errorf("%s: generation %d assigns %v, want each of %d partitions once", cause, info.Epoch, union, rebalancePartitions)
	}
	rr.g.Generations = append(rr.g.Generations, gen)
	rr.lastGen = info.Epoch
	rr.x.logf("capgen", "group %s settled: generation %d (%s)", rr.group, info.Epoch, cause)
	return nil
}

func (rr *rebalanceRun) settled(info *kfake.GroupInfo, live, reporters []*memberBase, allowSame bool, t time.Time) bool {
	if info == nil || info.State != "Stable" || len(info.Members) != len(live) {
		return false
	}
	switch {
	case info.Epoch == rr.lastGen && !allowSame, info.Epoch < rr.lastGen:
		return false
	case info.Epoch > rr.lastGen:
		reporters = live // a rebalance: every member reports
	}
	for _, m := range reporters {
		ev := m.assignedSince(t)
		if ev == nil || (rr.lib.clientGeneration && ev.generation != info.Epoch) {
			return false
		}
	}
	for _, m := range live {
		if m.lastAssigned() == nil {
			return false
		}
	}
	return true
}

// seedRecords produces n records to each partition of topic with a
// setup client, so that group members have something to fetch and commit.
func seedRecords(port int, x *expectation, topic string, partitions, n int) error {
	x.client("capgen-setup-producer", "franz-go kgo v1.22.3", fmt.Sprintf("produces %d records to each partition of %s first", n, topic))
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr(port)), kgo.ClientID("capgen-setup-producer"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := withTimeout(stepTimeout)
	defer cancel()
	var rs []*kgo.Record
	for p := 0; p < partitions; p++ {
		for i := 0; i < n; i++ {
			rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(p), Key: []byte(fmt.Sprintf("p%d-%d", p, i)),
				Value: []byte(fmt.Sprintf("record %d of partition %d", i, p))})
		}
	}
	return cl.ProduceSync(ctx, rs...).FirstErr()
}

// killDialer dials TCP and can close every connection it made at once and
// refuse new ones, which is what the network sees when a client process
// is killed (its kernel closes the sockets; nothing more is sent).
type killDialer struct {
	mu    sync.Mutex
	dead  bool
	conns []net.Conn
	d     net.Dialer
}

var errKilled = errors.New("member killed")

func (k *killDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	k.mu.Lock()
	dead := k.dead
	k.mu.Unlock()
	if dead {
		return nil, errKilled
	}
	c, err := k.d.DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.dead {
		c.Close()
		return nil, errKilled
	}
	k.conns = append(k.conns, c)
	return c, nil
}

// Dial is DialContext for sarama's proxy.Dialer.
func (k *killDialer) Dial(network, address string) (net.Conn, error) {
	return k.DialContext(context.Background(), network, address)
}

func (k *killDialer) kill() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.dead = true
	for _, c := range k.conns {
		c.Close()
	}
	k.conns = nil
}

// kgoMember is a kgo group member.
type kgoMember struct {
	cl     *kgo.Client
	d      *killDialer
	cancel context.CancelFunc
	done   chan struct{}
}

func startKgoMember(rr *rebalanceRun, m *memberBase) (groupMember, error) {
	d := &killDialer{}
	report := func(kind string) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, cl *kgo.Client, a map[string][]int32) {
			mid, gen := cl.GroupMetadata()
			m.record(memberEvent{kind: kind, memberID: mid, generation: gen, assigned: a})
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(addr(rr.port)), kgo.ClientID(m.clientID), kgo.Dialer(d.DialContext),
		kgo.ConsumerGroup(rr.group), kgo.ConsumeTopics(rebalanceTopic), kgo.Balancers(kgo.RangeBalancer()),
		kgo.SessionTimeout(rebalanceSession), kgo.HeartbeatInterval(rebalanceHeartbeat),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.AutoCommitInterval(time.Second),
		kgo.OnPartitionsAssigned(report("assigned")), kgo.OnPartitionsRevoked(report("revoked")),
		kgo.OnPartitionsLost(report("lost"))}
	if m.instanceID != nil {
		opts = append(opts, kgo.InstanceID(*m.instanceID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	km := &kgoMember{cl: cl, d: d, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(km.done)
		for ctx.Err() == nil {
			if fs := cl.PollFetches(ctx); fs.IsClientClosed() {
				return
			}
		}
	}()
	return km, nil
}

func (km *kgoMember) leave() error {
	km.cancel()
	<-km.done
	km.cl.Close() // LeaveGroup, except for a static member
	return nil
}

func (km *kgoMember) kill() error {
	km.d.kill()
	km.cancel()
	go km.cl.Close() // its dials fail: nothing reaches the wire
	return nil
}

// saramaMember is a sarama consumer group member.
type saramaMember struct {
	g      sarama.ConsumerGroup
	d      *killDialer
	cancel context.CancelFunc
	done   chan struct{}
}

func startSaramaMember(rr *rebalanceRun, m *memberBase) (groupMember, error) {
	d := &killDialer{}
	cfg := sarama.NewConfig()
	cfg.ClientID = m.clientID
	cfg.Version = sarama.V3_6_0_0
	cfg.Metadata.AllowAutoTopicCreation = false
	cfg.Net.Proxy.Enable = true
	cfg.Net.Proxy.Dialer = d
	cfg.Consumer.Offsets.Initial = sarama.OffsetOldest
	cfg.Consumer.Offsets.AutoCommit.Interval = time.Second
	cfg.Consumer.Group.Session.Timeout = rebalanceSession
	cfg.Consumer.Group.Heartbeat.Interval = rebalanceHeartbeat
	cfg.Consumer.Group.Rebalance.GroupStrategies = []sarama.BalanceStrategy{sarama.NewBalanceStrategyRange()}
	cfg.Consumer.MaxWaitTime = 500 * time.Millisecond
	if m.instanceID != nil {
		cfg.Consumer.Group.InstanceId = *m.instanceID
	}
	g, err := sarama.NewConsumerGroup([]string{addr(rr.port)}, rr.group, cfg)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	sm := &saramaMember{g: g, d: d, cancel: cancel, done: make(chan struct{})}
	h := &saramaReporter{m: m}
	go func() {
		defer close(sm.done)
		for ctx.Err() == nil {
			if err := g.Consume(ctx, []string{rebalanceTopic}, h); err != nil {
				if errors.Is(err, sarama.ErrClosedConsumerGroup) {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}()
	return sm, nil
}

// saramaReporter reports each session's claims.
type saramaReporter struct{ m *memberBase }

func (h *saramaReporter) Setup(s sarama.ConsumerGroupSession) error {
	h.m.record(memberEvent{kind: "assigned", memberID: s.MemberID(), generation: s.GenerationID(), assigned: s.Claims()})
	return nil
}

func (h *saramaReporter) Cleanup(s sarama.ConsumerGroupSession) error {
	h.m.record(memberEvent{kind: "revoked", memberID: s.MemberID(), generation: s.GenerationID(), assigned: s.Claims()})
	return nil
}

func (h *saramaReporter) ConsumeClaim(s sarama.ConsumerGroupSession, claim sarama.ConsumerGroupClaim) error {
	for msg := range claim.Messages() {
		s.MarkMessage(msg, "")
	}
	return nil
}

func (sm *saramaMember) leave() error {
	sm.cancel()
	<-sm.done
	return sm.g.Close() // LeaveGroup, except for a static member
}

func (sm *saramaMember) kill() error {
	sm.d.kill()
	sm.cancel()
	go sm.g.Close()
	return nil
}
