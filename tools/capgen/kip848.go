package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A KIP-848 consumer group (group-kip848.pcap): kgo members with the
// "consumer" group protocol (kgo.ServerSideBalancer), which speak
// ConsumerGroupHeartbeat instead of JoinGroup/SyncGroup/Heartbeat and get
// their assignment from the broker's "uniform" assignor, incrementally.
// Members join one by one, one leaves (member epoch -1), a static member
// leaves for a restart (member epoch -2) and its successor takes its
// partitions back, one is killed and fenced after the session timeout.
// Each member's assignment is what kgo's OnPartitionsAssigned and
// OnPartitionsRevoked reported, added up; its member epoch is kgo's
// GroupMetadata.

const kip848Group = "capgen-kgo-848-rebalance"

// member848 is a kgo KIP-848 member.
type member848 struct {
	base *memberBase
	km   *kgoMember

	mu       sync.Mutex
	assigned map[string][]int32
}

func (m *member848) current() map[string][]int32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return cloneAssignment(m.assigned)
}

func (m *member848) update(kind string, ps map[string][]int32) {
	m.mu.Lock()
	for t, parts := range ps {
		for _, p := range parts {
			switch kind {
			case "assigned":
				if !slices.Contains(m.assigned[t], p) {
					m.assigned[t] = append(m.assigned[t], p)
				}
			default:
				m.assigned[t] = slices.DeleteFunc(m.assigned[t], func(q int32) bool { return q == p })
			}
		}
	}
	m.mu.Unlock()
}

func startMember848(port int, x *expectation, name string, static bool) (*member848, error) {
	m := &member848{base: &memberBase{name: name, clientID: "capgen-kgo-848-" + name, x: x}, assigned: map[string][]int32{}}
	role := "KIP-848 group member " + name
	if static {
		m.base.instanceID = strp("capgen-kgo-848-static")
		role = "static KIP-848 group member " + name + " (group.instance.id capgen-kgo-848-static)"
	}
	x.client(m.base.clientID, "franz-go kgo v1.22.3", role)
	d := &killDialer{}
	report := func(kind string) func(context.Context, *kgo.Client, map[string][]int32) {
		return func(_ context.Context, cl *kgo.Client, ps map[string][]int32) {
			mid, epoch := cl.GroupMetadata()
			m.update(kind, ps)
			x.logf(m.base.clientID, "%s member=%s epoch=%d %s, now %s", kind, mid, epoch, formatAssignment(cloneAssignment(ps)), formatAssignment(m.current()))
		}
	}
	opts := []kgo.Opt{kgo.SeedBrokers(addr(port)), kgo.ClientID(m.base.clientID), kgo.Dialer(d.DialContext),
		kgo.ConsumerGroup(kip848Group), kgo.ConsumeTopics(rebalanceTopic), kgo.ServerSideBalancer(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.AutoCommitInterval(time.Second),
		kgo.OnPartitionsAssigned(report("assigned")), kgo.OnPartitionsRevoked(report("revoked")),
		kgo.OnPartitionsLost(report("lost"))}
	if static {
		opts = append(opts, kgo.InstanceID(*m.base.instanceID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m.km = &kgoMember{cl: cl, d: d, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(m.km.done)
		for ctx.Err() == nil {
			if fs := cl.PollFetches(ctx); fs.IsClientClosed() {
				return
			}
		}
	}()
	return m, nil
}

func runKIP848(ports []int, x *expectation) error {
	port := ports[0]
	c, err := newCluster(port, kfake.SeedTopics(rebalancePartitions, rebalanceTopic),
		kfake.BrokerConfigs(map[string]string{
			"group.consumer.heartbeat.interval.ms": fmt.Sprint(rebalanceHeartbeat.Milliseconds()),
			"group.consumer.session.timeout.ms":    fmt.Sprint(rebalanceSession.Milliseconds()),
		}))
	if err != nil {
		return err
	}
	defer c.Close()
	x.Brokers = []expectBroker{{0, addr(port)}}
	x.About = "A KIP-848 consumer group (ConsumerGroupHeartbeat, server-side uniform assignor) of kgo members on " +
		rebalanceTopic + " (4 partitions): a, b and a static member s join one by one, b leaves (member epoch -1), " +
		"s leaves for a restart (member epoch -2) and s2 takes its partitions back, a is killed and fenced after the 3 s session timeout, s2 closes."
	x.Varies = []string{"member IDs (client-chosen UUIDs)", "timestamps and TCP ports",
		"the number of heartbeats, fetches and commits", "the intermediate epochs a member passes through while partitions move"}
	if err := seedRecords(port, x, rebalanceTopic, rebalancePartitions, 2); err != nil {
		return err
	}
	g := &expectGroup{Group: kip848Group, Protocol: "consumer", Assignor: "uniform",
		SessionTimeoutMs: int32(rebalanceSession.Milliseconds()), HeartbeatIntervalMs: int32(rebalanceHeartbeat.Milliseconds()),
		Topics: []string{rebalanceTopic}}
	x.Groups = []*expectGroup{g}

	var live []*member848
	em := map[*member848]*expectMember{}
	defer func() {
		for _, m := range live {
			m.km.kill()
		}
	}()
	lastEpoch := int32(0)
	settle := func(cause string, allowSame bool) error {
		ctx, cancel := context.WithTimeout(context.Background(), rebalanceWait)
		defer cancel()
		for {
			info := c.GroupInfo(kip848Group)
			if gen, ok := settled848(info, live, lastEpoch, allowSame); ok {
				gen.Cause = cause
				g.Generations = append(g.Generations, gen)
				lastEpoch = info.Epoch
				x.logf("capgen", "group %s settled: group epoch %d (%s)", kip848Group, info.Epoch, cause)
				for _, m := range live {
					mid, _ := m.km.cl.GroupMetadata()
					em[m].MemberID = mid
				}
				return nil
			}
			select {
			case <-ctx.Done():
				state := "no group"
				if info != nil {
					state = fmt.Sprintf("%s, epoch %d, %d members", info.State, info.Epoch, len(info.Members))
				}
				return fmt.Errorf("%s: group did not settle with %d members (%s)", cause, len(live), state)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	add := func(name string, static bool) error {
		m, err := startMember848(port, x, name, static)
		if err != nil {
			return err
		}
		live = append(live, m)
		em[m] = &expectMember{Name: name, ClientID: m.base.clientID, InstanceID: m.base.instanceID}
		g.Members = append(g.Members, em[m])
		if static && name == "s2" {
			return settle("static-rejoin s2", true)
		}
		return settle("join "+name, false)
	}
	drop := func(m *member848) { live = slices.DeleteFunc(live, func(o *member848) bool { return o == m }) }

	for _, n := range []string{"a", "b", "s"} {
		if err := add(n, n == "s"); err != nil {
			return err
		}
	}
	b, s, a := live[1], live[2], live[0]
	x.logf("capgen", "member b leaves (ConsumerGroupHeartbeat with member epoch -1)")
	b.km.leave()
	drop(b)
	em[b].End = "leave"
	if err := settle("leave b", false); err != nil {
		return err
	}
	x.logf("capgen", "static member s leaves for a restart (member epoch -2); s2 starts with the same group.instance.id")
	s.km.leave()
	drop(s)
	em[s].End = "static-leave"
	if err := add("s2", true); err != nil {
		return err
	}
	x.logf("capgen", "member a is killed (connections closed, no leave heartbeat)")
	a.km.kill()
	drop(a)
	em[a].End = "kill"
	if err := settle("timeout a", false); err != nil {
		return err
	}
	s2 := live[0]
	x.logf("capgen", "member s2 closes (member epoch -2)")
	s2.km.leave()
	drop(s2)
	em[s2].End = "static-leave"
	time.Sleep(300 * time.Millisecond)

	x.requests("ConsumerGroupHeartbeat v1", "OffsetCommit v10", "Fetch v18")
	x.Wire.Features = []string{"(ConsumerGroupHeartbeat with member epoch 0)", "(ConsumerGroupHeartbeat with member epoch -1)",
		"(ConsumerGroupHeartbeat with member epoch -2)"}
	return nil
}

// settled848 reports whether the group is stable with the live members,
// each at the group epoch with the broker's assignment for it, and the
// partitions spread over them, and returns the generation if so.
// allowSame: the epoch may stay (a static member's successor takes its
// partitions at the group's epoch).
func settled848(info *kfake.GroupInfo, live []*member848, lastEpoch int32, allowSame bool) (*expectGeneration, bool) {
	if info == nil || info.State != "Stable" || len(info.Members) != len(live) ||
		info.Epoch < lastEpoch || info.Epoch == lastEpoch && !allowSame {
		return nil, false
	}
	gen := &expectGeneration{Generation: info.Epoch, GenerationSource: "client"}
	var union []string
	for _, m := range live {
		mid, epoch := m.km.cl.GroupMetadata()
		if epoch != info.Epoch {
			return nil, false
		}
		a := m.current()
		var bm *kfake.GroupMember
		for i := range info.Members {
			if info.Members[i].MemberID == mid {
				bm = &info.Members[i]
			}
		}
		if bm == nil || !sameAssignment(bm.Assignment, a) {
			return nil, false
		}
		for t, ps := range a {
			for _, p := range ps {
				union = append(union, fmt.Sprintf("%s/%d", t, p))
			}
		}
		via := "heartbeat"
		if info.Epoch == lastEpoch && m.base.name == "s2" {
			via = "static-rejoin"
		}
		gen.Members = append(gen.Members, &expectAssignment{Name: m.base.name, MemberID: mid, MemberEpoch: i32p(epoch),
			Via: via, Assigned: a})
	}
	sort.Strings(union)
	if len(union) != rebalancePartitions || len(slices.Compact(union)) != rebalancePartitions {
		return nil, false
	}
	return gen, true
}
