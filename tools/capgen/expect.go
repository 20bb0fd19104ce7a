package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"sync"
	"time"
)

// Expectation files: pcaps/<capture>.expect.json, written by the scenario
// that records the capture, from what its clients reported (callbacks,
// log lines, return values) and from capgen's own injection points
// (control hooks, the connection shaper, the userspace wire). They say what
// happened from the clients' side, so that kwire's group, transaction and
// finding commands can be tested against something that is not kwire.
// pcaps/README.md ("Expectation files") documents the schema; the types
// below are it. TestExpectations checks each file against its capture at
// the wire level with the kmsg-based summarizer.

// expectSchema is the version of the schema below.
const expectSchema = 1

// expectation is one .expect.json file.
type expectation struct {
	Schema   int    `json:"schema"`
	Capture  string `json:"capture"`
	Scenario string `json:"scenario"`
	// What is the scenario, in a sentence or two.
	About string `json:"about"`
	// Brokers lists node IDs and the addresses they listened on.
	Brokers []expectBroker `json:"brokers"`
	// Clients lists every client ID in the capture and the library
	// behind it.
	Clients []expectClient `json:"clients"`
	// Groups are the consumer groups, generation by generation.
	Groups []*expectGroup `json:"groups,omitempty"`
	// Producers are the transactional producers.
	Producers []*expectProducer `json:"producers,omitempty"`
	// Consumers are what non-group consumers read (read_committed vs
	// read_uncommitted).
	Consumers []*expectConsumer `json:"consumers,omitempty"`
	// Injections are what capgen did to the broker or the network.
	Injections []*expectInjection `json:"injections,omitempty"`
	// Wire is what the capture must hold, checked by TestExpectations.
	Wire expectWire `json:"wire"`
	// Varies names what changes from run to run.
	Varies []string `json:"varies"`
	// Log is the clients' and injection points' own account, in time
	// order, milliseconds from the scenario's start.
	Log []expectLogLine `json:"log"`

	mu    sync.Mutex
	start time.Time
}

type expectBroker struct {
	NodeID int32  `json:"nodeId"`
	Addr   string `json:"addr"`
}

type expectClient struct {
	ClientID string `json:"clientId"`
	Library  string `json:"library"`
	Role     string `json:"role"`
}

// expectGroup is one consumer group.
type expectGroup struct {
	Group string `json:"group"`
	// Protocol is "classic" (JoinGroup/SyncGroup) or "consumer" (KIP-848
	// ConsumerGroupHeartbeat).
	Protocol string `json:"protocol"`
	// Assignor is the partition assignor: the classic protocol name the
	// members offered (chosen by the leader) or the KIP-848 server
	// assignor.
	Assignor         string `json:"assignor"`
	SessionTimeoutMs int32  `json:"sessionTimeoutMs"`
	// HeartbeatIntervalMs is the members' configured interval (classic)
	// or the broker's (KIP-848).
	HeartbeatIntervalMs int32           `json:"heartbeatIntervalMs"`
	Topics              []string        `json:"topics"`
	Members             []*expectMember `json:"members"`
	// Generations are the classic generations (GenerationID) or the
	// KIP-848 group epochs, in order, each with what every member was
	// assigned in it.
	Generations []*expectGeneration `json:"generations"`
}

// expectMember is one member process of a group (a static member that
// restarts is two members with the same InstanceID).
type expectMember struct {
	Name       string  `json:"name"`
	ClientID   string  `json:"clientId"`
	InstanceID *string `json:"instanceId"`
	// MemberID is the member ID the client reported.
	MemberID string `json:"memberId"`
	// End is how the member went: "leave" (LeaveGroup, or a KIP-848
	// heartbeat with member epoch -1), "static-leave" (KIP-848 epoch
	// -2), "close-static" (a static classic member that closes without
	// LeaveGroup), "kill" (process or connections gone without a word:
	// the broker expires it after the session timeout), "end" (still a
	// member when the scenario ended, then closed).
	End string `json:"end"`
	// LeaveReason is the KIP-800 reason the library sends with its
	// LeaveGroup, from its source; null when it sends none (or its
	// LeaveGroup version has no reason field).
	LeaveReason *string `json:"leaveReason"`
}

// expectGeneration is one generation (or KIP-848 group epoch).
type expectGeneration struct {
	Generation int32 `json:"generation"`
	// GenerationSource is "client" when every member logged the
	// generation itself, "broker" when the library does not say and the
	// number is kfake's (kfake.Cluster.GroupInfo).
	GenerationSource string `json:"generationSource"`
	// Cause is what started it: "join a", "leave b", "timeout a"
	// (session timeout after a kill), "static-rejoin s".
	Cause string `json:"cause"`
	// Members are the members of this generation and what each was
	// assigned, as each client logged it.
	Members []*expectAssignment `json:"members"`
}

type expectAssignment struct {
	Name     string `json:"name"`
	MemberID string `json:"memberId"`
	// MemberEpoch is the KIP-848 member epoch the client reported.
	MemberEpoch *int32 `json:"memberEpoch,omitempty"`
	// Via is "rebalance", or "static-rejoin" for a static member that
	// took over its predecessor's assignment without a rebalance.
	Via      string             `json:"via"`
	Assigned map[string][]int32 `json:"assigned"`
}

// expectProducer is one transactional (or idempotent) producer.
type expectProducer struct {
	ClientID        string  `json:"clientId"`
	TransactionalID *string `json:"transactionalId"`
	// ProducerID and Epochs are what InitProducerID gave the client
	// (and, with KIP-890 transactions v2, each EndTxn's bump), as the
	// client reported them.
	ProducerID int64   `json:"producerId"`
	Epochs     []int16 `json:"epochs"`
	// Transactions in order.
	Transactions []*expectTxn `json:"transactions"`
	// FencedBy names the client ID whose InitProducerID fenced this one.
	FencedBy *string `json:"fencedBy"`
	// Versions is "v2" (KIP-890: Produce v12+ adds partitions itself,
	// EndTxn v5 bumps the epoch) or "v1" (AddPartitionsToTxn).
	TxnVersion string `json:"txnVersion"`
}

type expectTxn struct {
	Epoch int16 `json:"epoch"`
	// Records produced in it, by topic and partition.
	Records map[string]map[int32]int `json:"records"`
	// Group whose offsets were added (AddOffsetsToTxn, TxnOffsetCommit).
	Group *string `json:"group"`
	// Outcome is "commit", "abort" or "fenced".
	Outcome string `json:"outcome"`
	// Error is the error ending the transaction gave the client
	// (Kafka's name), or null.
	Error *string `json:"error"`
	// ProduceError is the error a produce in the transaction gave the
	// client, or null.
	ProduceError *string `json:"produceError"`
}

// expectConsumer is what one consumer (not in a group) read.
type expectConsumer struct {
	ClientID       string `json:"clientId"`
	IsolationLevel string `json:"isolationLevel"` // read_committed, read_uncommitted
	Topic          string `json:"topic"`
	// Keys are the record keys it read, in order.
	Keys []string `json:"keys"`
}

// expectInjection is one thing capgen did to the broker or the network.
type expectInjection struct {
	// Kind: "throttle" (ThrottleMillis set in responses), "delay"
	// (broker answers late), "error" (an error code in place of the real
	// answer), "leader-move" (kfake.MoveTopicPartition), "net-delay"
	// (one-way delay on the userspace wire), "drop" (a segment the wire
	// dropped), "unadvertised-version" (a raw client's request above the
	// range the broker advertised).
	Kind       string `json:"kind"`
	API        string `json:"api,omitempty"`
	ClientID   string `json:"clientId,omitempty"`
	Count      int    `json:"count"`
	ThrottleMs int32  `json:"throttleMs,omitempty"`
	DelayMs    int32  `json:"delayMs,omitempty"`
	ErrorCode  int16  `json:"errorCode,omitempty"`
	Error      string `json:"error,omitempty"`
	Topic      string `json:"topic,omitempty"`
	Partition  *int32 `json:"partition,omitempty"`
	FromNode   *int32 `json:"fromNode,omitempty"`
	ToNode     *int32 `json:"toNode,omitempty"`
	// Direction for wire injections: "to-broker" or "to-client".
	Direction string `json:"direction,omitempty"`
	// Segments lists dropped TCP segments: client port, sequence number
	// relative to the connection's first, payload length.
	Segments []expectSegment `json:"segments,omitempty"`
	Note     string          `json:"note,omitempty"`
}

type expectSegment struct {
	ClientPort int    `json:"clientPort"`
	RelSeq     uint32 `json:"relSeq"`
	Len        int    `json:"len"`
	// Captured says whether the capture holds the dropped copy (the wire
	// drops after the capture point for segments to the broker, before
	// it for segments to the client).
	Captured bool `json:"captured"`
}

// expectWire is what the capture must hold at the wire level.
type expectWire struct {
	// Requests that must appear at least once ("JoinGroup v9").
	Requests []string `json:"requests"`
	// Errors maps "API: NAME (code)" to the least number of times it
	// must appear.
	Errors map[string]int `json:"errors"`
	// NoOtherErrors says no other error code may appear.
	NoOtherErrors bool `json:"noOtherErrors"`
	// ThrottledResponses maps an API to the least number of responses
	// with ThrottleMillis > 0.
	ThrottledResponses map[string]int `json:"throttledResponses,omitempty"`
	// Features are summarizer counters that must be nonzero
	// ("(Fetch partition listing aborted transactions)").
	Features []string `json:"features,omitempty"`
	// SkipsApiVersions lists client IDs whose first request on some
	// connection is not ApiVersions.
	SkipsApiVersions []string `json:"skipsApiVersions,omitempty"`
	// MinConnections maps a client ID to the least number of TCP
	// connections it opened.
	MinConnections map[string]int `json:"minConnections,omitempty"`
	// MinRequests maps "clientId API" to the least number of requests.
	MinRequests map[string]int `json:"minRequests,omitempty"`
	// Unadvertised lists "API vN" requests sent above the maximum the
	// broker advertised on that connection.
	Unadvertised []string `json:"unadvertised,omitempty"`
	// MinRetransmissions is the least number of TCP segments seen twice.
	MinRetransmissions int `json:"minRetransmissions,omitempty"`
	// MaxRetransmissions bounds them (0 with MaxRetransmissionsSet: none).
	MaxRetransmissions *int `json:"maxRetransmissions,omitempty"`
	// SlowResponses maps an API to the least number of responses whose
	// first byte came at least SlowMs after the request's last byte.
	SlowResponses map[string]int `json:"slowResponses,omitempty"`
	SlowMs        int            `json:"slowMs,omitempty"`
}

type expectLogLine struct {
	Ms     int64  `json:"ms"`
	Source string `json:"source"`
	Line   string `json:"line"`
}

func newExpectation(s scenario) *expectation {
	return &expectation{Schema: expectSchema, Capture: s.file, Scenario: s.name, start: time.Now(),
		Wire: expectWire{Errors: map[string]int{}}}
}

// logf adds a line to the log, from source.
func (x *expectation) logf(source, format string, args ...any) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.Log = append(x.Log, expectLogLine{Ms: time.Since(x.start).Milliseconds(), Source: source,
		Line: fmt.Sprintf(format, args...)})
	if verbose {
		fmt.Fprintf(os.Stderr, "%6d %-28s %s\n", time.Since(x.start).Milliseconds(), source, fmt.Sprintf(format, args...))
	}
}

func (x *expectation) client(clientID, library, role string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, c := range x.Clients {
		if c.ClientID == clientID {
			return
		}
	}
	x.Clients = append(x.Clients, expectClient{clientID, library, role})
}

func (x *expectation) inject(in *expectInjection) *expectInjection {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.Injections = append(x.Injections, in)
	return in
}

// count adds one to in.Count under the expectation's lock.
func (x *expectation) count(in *expectInjection) {
	x.mu.Lock()
	in.Count++
	x.mu.Unlock()
}

func (x *expectation) requests(rs ...string) { x.Wire.Requests = append(x.Wire.Requests, rs...) }

func (x *expectation) write(file string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	sort.SliceStable(x.Log, func(i, j int) bool { return x.Log[i].Ms < x.Log[j].Ms })
	sort.Slice(x.Clients, func(i, j int) bool { return x.Clients[i].ClientID < x.Clients[j].ClientID })
	x.Wire.Requests = slices.Compact(slices.Sorted(slices.Values(x.Wire.Requests)))
	b, err := json.MarshalIndent(x, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// readExpectation loads an .expect.json file.
func readExpectation(file string) (*expectation, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	x := new(expectation)
	if err := json.Unmarshal(b, x); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if x.Schema != expectSchema {
		return nil, fmt.Errorf("%s: schema %d, want %d", file, x.Schema, expectSchema)
	}
	return x, nil
}

// cloneAssignment copies a topic → partitions map, partitions sorted.
func cloneAssignment(m map[string][]int32) map[string][]int32 {
	out := make(map[string][]int32, len(m))
	for t, ps := range m {
		if len(ps) == 0 {
			continue
		}
		c := slices.Clone(ps)
		slices.Sort(c)
		out[t] = c
	}
	return out
}

// sameAssignment compares two assignments, ignoring empty topics.
func sameAssignment(a, b map[string][]int32) bool {
	a, b = cloneAssignment(a), cloneAssignment(b)
	return maps.EqualFunc(a, b, slices.Equal)
}

func strp(s string) *string { return &s }
func i32p(v int32) *int32   { return &v }
