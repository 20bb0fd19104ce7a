package analysis

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// Findings: what in a capture an operator should look at, by rule. Each
// rule has an ID, a severity, a one-line summary and says what evidence
// it rests on; every finding lists the packets of that evidence (the
// first maxEvidence; kwire read --frame N shows each). A finding gathers
// every occurrence of its rule for one subject (a client and API, a
// partition and broker, a connection...), with the first and last time
// and a count; its detail gives the numbers.
//
// To add a rule: add it to Rules (ID, severity, summary, evidence, in
// report order), raise it in findEngine (as exchanges arrive, at a
// connection's close, or in report from the group and transaction
// trackers), and add its case to findings_test.go: a capture (or built
// exchanges) that shows it, and the captures that must not.

// Severities.
const (
	SevError   = "error"
	SevWarning = "warning"
	SevInfo    = "info"
)

// Rule is one kind of finding.
type Rule struct {
	ID       string `json:"id"`
	Severity string `json:"severity"`
	Summary  string `json:"summary"`
	Evidence string `json:"evidence"`
}

// Rule IDs.
const (
	RuleUnadvertised   = "unadvertised-version"
	RuleSkippedAPIVer  = "skipped-apiversions"
	RuleDowngrade      = "apiversions-downgrade"
	RuleThrottled      = "throttled"
	RuleQuota          = "quota-exceeded"
	RuleMetadataStorm  = "metadata-storm"
	RuleProduceRetry   = "produce-retry"
	RuleFetchRetry     = "fetch-retry"
	RuleLeadership     = "leadership-change"
	RuleTimeout        = "request-timeout"
	RuleSlowBroker     = "slow-broker"
	RuleSlowNetwork    = "slow-network"
	RuleHeadOfLine     = "head-of-line"
	RuleLargeBatch     = "large-uncompressed-batch"
	RuleTinyBatches    = "tiny-batches"
	RuleBatchTooLarge  = "batch-too-large"
	RuleChurn          = "connection-churn"
	RuleSASLFailed     = "sasl-auth-failed"
	RuleSASLReauth     = "sasl-reauth-failed"
	RuleIdleClose      = "idle-close"
	RuleFenced         = "producer-fenced"
	RuleSequence       = "sequence-error"
	RuleMemberExpired  = "member-expired"
	RuleRebalanceStorm = "rebalance-storm"
)

// Thresholds of the rules (documented with each rule in Rules).
const (
	metadataWindow    = 3 * time.Second
	metadataPerWindow = 30 // Metadata requests of one client in one window: 10 a second, sustained
	tinyWindow        = time.Second
	tinyPerWindow     = 15 // Produce requests of one client in one window, all batches tiny
	tinyRecords       = 2  // records per batch at most, for a tiny batch
	tinyBytes         = 1024
	largeBatch        = 256 << 10 // bytes of an uncompressed batch
	defaultMaxMessage = 1048588   // Kafka's max.message.bytes default (1 MiB + 12)
	nearLimit         = 0.9
	churnLife         = 2 * time.Second
	churnConns        = 50
	idleClose         = 10 * time.Second
	timeoutGrace      = time.Second
	rebalanceStorm    = 5 // rebalances of one group within stormWindow
	stormWindow       = time.Minute
	maxEvidence       = 20
)

// Rules are the rules findings come from, in report order.
var Rules = []Rule{
	{RuleUnadvertised, SevWarning, "a request at a version (or of an API) the broker did not advertise on that connection, or, when none was asked there, on another connection to it (KIP-35)",
		"the request; the ApiVersions response it is held against"},
	{RuleSkippedAPIVer, SevInfo, "a connection whose first request is not ApiVersions, from a client that never asked that broker's versions before in the capture (KIP-35): it guesses",
		"each connection's first request"},
	{RuleDowngrade, SevInfo, "ApiVersions answered UNSUPPORTED_VERSION and asked again at a lower version on the same connection (KIP-511): the client is newer than the broker",
		"the refused ApiVersions; the retry"},
	{RuleThrottled, SevWarning, "responses with ThrottleTimeMs > 0: the broker throttled the client for a quota (KIP-219), per client and API",
		"each throttled response's request"},
	{RuleQuota, SevError, "THROTTLING_QUOTA_EXCEEDED: a topic mutation refused for the client's mutation quota (KIP-599)",
		"each refused request"},
	{RuleMetadataStorm, SevWarning, fmt.Sprintf("a client ID sent %d or more Metadata requests within %s (a refresh loop: metadata.max.age.ms too low, or retries on errors)", metadataPerWindow, metadataWindow),
		"the Metadata requests of the busiest window"},
	{RuleProduceRetry, SevWarning, "an idempotent producer sent the same base sequence to a partition again: a retry after a lost or failed answer",
		"the first send; each retry"},
	{RuleFetchRetry, SevInfo, "a consumer fetched the same partition at the same offset again after a fetch answered with an error for it (leadership moved, the broker was not ready)",
		"the failed fetch; the retry"},
	{RuleLeadership, SevWarning, "NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH or LEADER_NOT_AVAILABLE for a partition: its leadership moved (clients refresh metadata and retry)",
		"each response with the error"},
	{RuleTimeout, SevError, fmt.Sprintf("a request answered later than its own timeout (Produce and admin TimeoutMs, Fetch MaxWaitMs) plus %s, or never answered while its connection lived that long", timeoutGrace),
		"the request (and its response)"},
	{RuleSlowBroker, SevWarning, fmt.Sprintf("an exchange slower than the slow threshold (default %s; not a Fetch within its MaxWaitMs, JoinGroup or SyncGroup) whose time went mostly to the broker: from the request fully received to the first response byte, less the network's round trip", DefaultSlow),
		"the slow exchanges (request and response packets)"},
	{RuleSlowNetwork, SevWarning, "an exchange as slow whose time went mostly to the network: the round trip, retransmissions, bytes arriving out of order, full or zero windows, a request or response spread over time",
		"the slow exchanges; the retransmitted segments"},
	{RuleHeadOfLine, SevInfo, "a request that waited the slow threshold or more behind an earlier request on its connection (a broker answers one request per connection at a time, in order): e.g. a Metadata request queued behind a long-polling Fetch",
		"the queued request; the request it waited for"},
	{RuleLargeBatch, SevInfo, fmt.Sprintf("a Produce batch of %d KiB or more sent uncompressed: a codec would cut bytes on the wire and on disk", largeBatch>>10),
		"each such Produce request"},
	{RuleTinyBatches, SevInfo, fmt.Sprintf("a producer sent %d or more Produce requests within %s carrying only batches of at most %d records and %d bytes: no batching (linger.ms 0, batch.size too small, or flush per record)", tinyPerWindow, tinyWindow, tinyRecords, tinyBytes),
		"the Produce requests of the busiest window"},
	{RuleBatchTooLarge, SevWarning, fmt.Sprintf("a Produce batch within %d%% of the topic's max.message.bytes (from configs in the capture, else Kafka's default %d bytes unless a larger batch was accepted), or refused with MESSAGE_TOO_LARGE or RECORD_LIST_TOO_LARGE", int(100-100*nearLimit), defaultMaxMessage),
		"each such Produce request"},
	{RuleChurn, SevWarning, fmt.Sprintf("a client opened %d or more connections that each lived less than %s: a client per request, or a reconnect loop", churnConns, churnLife),
		"each short connection's first request"},
	{RuleSASLFailed, SevError, "SaslAuthenticate answered with an error: wrong credentials, unknown user or mechanism",
		"each failed SaslAuthenticate"},
	{RuleSASLReauth, SevError, "SaslAuthenticate failed on a connection that had authenticated before: a re-authentication (KIP-368) was refused; the broker closes the connection",
		"the failed re-authentication; the first authentication"},
	{RuleIdleClose, SevInfo, fmt.Sprintf("the broker closed (sent the first FIN or RST on) a connection that had no request in flight and was idle %s or more (connections.max.idle.ms)", idleClose),
		"the connection's last exchange; the closing segment"},
	{RuleFenced, SevWarning, "a transactional producer was fenced: another instance with the same transactional ID initialized a newer epoch, and the old one's requests were refused",
		"the fencing InitProducerId; the fenced producer's refused requests"},
	{RuleSequence, SevError, "an idempotent producer's sequence numbers broke: OUT_OF_ORDER_SEQUENCE_NUMBER, DUPLICATE_SEQUENCE_NUMBER, or a gap between the batches written to a partition",
		"each batch out of line"},
	{RuleMemberExpired, SevWarning, "a group member was removed without leaving: its session timed out (no heartbeat for the session timeout), and the group rebalanced without it",
		"its last heartbeat; the first JoinGroup of the generation without it"},
	{RuleRebalanceStorm, SevWarning, fmt.Sprintf("a group rebalanced %d or more times within %s", rebalanceStorm, stormWindow),
		"the first JoinGroup of each rebalance"},
}

func ruleOf(id string) Rule {
	for _, r := range Rules {
		if r.ID == id {
			return r
		}
	}
	return Rule{ID: id, Severity: SevInfo}
}

// Finding is one rule's occurrences for one subject.
type Finding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Time     Time   `json:"first"` // the first occurrence
	Last     Time   `json:"last"`  // the last
	// Subject says what it is about, in words ("capgen-app Produce to
	// 127.0.0.1:9092"); the fields after it the same, typed (null when
	// not about one).
	Subject   string  `json:"subject"`
	ClientID  *string `json:"clientId" jsonschema:"nullable"`
	Broker    *string `json:"broker" jsonschema:"nullable"`
	API       *string `json:"api" jsonschema:"nullable"`
	Group     *string `json:"groupId" jsonschema:"nullable"`
	Topic     *string `json:"topic" jsonschema:"nullable"`
	Partition *int32  `json:"partition" jsonschema:"nullable"`
	Count     int64   `json:"count"`
	Detail    string  `json:"detail"`
	// Packets are the packet numbers (frames, as kwire read --frame takes
	// them) of the evidence (the first 20, in the order found),
	// MorePackets how many more there are.
	Packets     []int64 `json:"frames"`
	MorePackets int64   `json:"moreFrames"`
	File        string  `json:"file,omitempty"`
	// Split is the worst exchange's time split, for slow-broker and
	// slow-network.
	Split *Split `json:"split" jsonschema:"nullable"`
}

// FindingsReport is the findings section of kwire stats --json, and the
// stream of kwire read --findings.
type FindingsReport struct {
	Findings []Finding `json:"findings"`
	// Dropped counts the occurrences of findings not kept for the memory
	// budget: a finding not kept is counted each time it recurs, as
	// telling its recurrences apart would mean keeping it.
	Dropped int64 `json:"dropped"`
}

type finding struct {
	Finding
	worst   time.Duration
	file    int
	errs    map[string]int64 // leadership-change: errors by name
	clients []string         // leadership-change: the clients told
	first   string           // skipped-apiversions: the first connection's first request
}

type connState struct {
	client, broker netip.AddrPort
	clientID       string
	hasClientID    bool
	sawSYN         bool
	first          *xinfoLite
	opened         time.Time
	last           time.Time // the latest request or response
	exchanges      int
	ranges         []facts.APIRange
	adRef          Ref
	unsupported    int16 // ApiVersions version answered UNSUPPORTED_VERSION, -1 none
	unsupportedRef Ref
	answeredUntil  time.Time // the latest response end emitted so far
	answeredRef    Ref
	authenticated  bool
	authRef        Ref
	pending        []pendingTimeout
}

type xinfoLite struct {
	key, ver int16
	at       time.Time
	ref      Ref
	clientID string
}

type pendingTimeout struct {
	at      time.Time
	timeout time.Duration
	what    string
	key     int16
	ver     int16
	ref     Ref
}

// learntAt is when a client learnt a broker's versions: the ApiVersions
// response's file, packet and time.
type learntAt struct {
	file  int
	frame int64
	at    time.Time
}

// before reports whether l came before the packet frame of file at time
// at: by packet number in the same file (packet times may step back),
// else by time.
func (l learntAt) before(file int, frame int64, at time.Time) bool {
	if l.file == file && l.frame > 0 && frame > 0 {
		return l.frame < frame
	}
	return l.at.Before(at)
}

type clientBroker struct {
	clientID string
	broker   netip.AddrPort
}

type fetchKey struct {
	clientID string
	tp       tpKey
}

type fetchState struct {
	offset int64
	failed bool
	ref    Ref
}

type findEngine struct {
	mem      *budget
	slow     time.Duration
	found    map[string]*finding
	dropped  int64
	conns    map[*reassembly.Conn]*connState
	learnt   map[clientBroker]learntAt     // an ApiVersions answered to the client by the broker, first
	brokerAd map[netip.AddrPort]*connState // the latest ApiVersions of each broker
	fetches  map[fetchKey]*fetchState      // the last fetch of each partition by each client
	limits   map[string]int64              // topic -> max.message.bytes from configs
	accepted map[string]int64              // topic -> largest batch accepted
	cut      map[*reassembly.Conn]bool     // open connections a cut or a gap left holes in (dissect.EventCut, EventGap)
	nearCand map[string][]nearCandidate    // topic -> batches near the default limit
	churn    map[string]*churnState        // client -> its short connections
	rates    map[string]*rateState         // rate rules' windows, by finding key
}

type churnState struct {
	conns, short int64
	refs         []int64
	first, last  time.Time
	file         int
	broker       string
}

type nearCandidate struct {
	clientID, broker string
	bytes            int64
	at               time.Time
	ref              Ref
	file             int
}

func newFindEngine(mem *budget, slow time.Duration) *findEngine {
	return &findEngine{mem: mem, slow: slow, found: map[string]*finding{}, conns: map[*reassembly.Conn]*connState{},
		learnt: map[clientBroker]learntAt{}, brokerAd: map[netip.AddrPort]*connState{}, fetches: map[fetchKey]*fetchState{},
		limits: map[string]int64{}, accepted: map[string]int64{}, nearCand: map[string][]nearCandidate{}, churn: map[string]*churnState{},
		rates: map[string]*rateState{}}
}

// subject names a finding's subject and its typed fields.
type subject struct {
	clientID, broker, api, group, topic string
	partition                           int32
	hasPartition                        bool
}

func (s subject) key() string {
	return strings.Join([]string{s.clientID, s.broker, s.api, s.group, s.topic, strconv.Itoa(int(s.partition)), strconv.FormatBool(s.hasPartition)}, "\x00")
}

func (s subject) text() string {
	var parts []string
	if s.clientID != "" {
		parts = append(parts, s.clientID)
	}
	if s.group != "" {
		parts = append(parts, "group "+s.group)
	}
	if s.api != "" {
		parts = append(parts, s.api)
	}
	if s.topic != "" {
		tp := s.topic
		if s.hasPartition {
			tp += "[" + strconv.Itoa(int(s.partition)) + "]" // as a line writes it
		}
		parts = append(parts, tp)
	}
	if s.broker != "" {
		parts = append(parts, "broker "+s.broker)
	}
	return strings.Join(parts, " ")
}

// raise records an occurrence of rule for subj at time at, with evidence
// packets; detail, when not "", replaces the finding's detail.
func (f *findEngine) raise(rule string, subj subject, file int, at time.Time, detail string, packets ...int64) *finding {
	k := rule + "\x00" + strconv.Itoa(file) + "\x00" + subj.key()
	x := f.found[k]
	if x == nil {
		if !f.mem.take(costFinding + int64(len(k)+len(detail))) {
			f.mem.give(costFinding + int64(len(k)+len(detail)))
			f.dropped++
			return &finding{} // counted, not kept
		}
		r := ruleOf(rule)
		x = &finding{Finding: Finding{Rule: rule, Severity: r.Severity, Time: Time(at), Subject: subj.text(),
			ClientID: strp(subj.clientID), Broker: strp(subj.broker), API: strp(subj.api), Group: strp(subj.group), Topic: strp(subj.topic),
			Packets: []int64{}}, file: file}
		if subj.hasPartition {
			x.Partition = ptr(subj.partition)
		}
		f.found[k] = x
	}
	x.Count++
	if at.Before(time.Time(x.Time)) || x.Time.IsZero() {
		x.Time = Time(at)
	}
	if at.After(time.Time(x.Last)) {
		x.Last = Time(at)
	}
	if detail != "" {
		x.Detail = detail
	}
	x.evidence(packets...)
	return x
}

func (x *finding) evidence(packets ...int64) {
	for _, p := range packets {
		if p <= 0 || slices.Contains(x.Packets, p) {
			continue
		}
		if len(x.Packets) < maxEvidence {
			x.Packets = append(x.Packets, p)
		} else {
			x.MorePackets++
		}
	}
}

func (f *findEngine) conn(e *xinfo) *connState {
	rc := e.x.Conn
	if rc == nil {
		return nil
	}
	c := f.conns[rc]
	if c == nil {
		c = &connState{client: e.x.Client, broker: e.x.Broker, sawSYN: rc.SawSYN, unsupported: -1}
		f.conns[rc] = c
		f.mem.take(costState)
	}
	if !c.hasClientID && e.x.ClientIDKnown() && !e.x.ClientIDNull {
		c.clientID, c.hasClientID = e.x.ClientID, true
	}
	if c.opened.IsZero() || e.at.Before(c.opened) {
		c.opened = e.at
	}
	return c
}

func addr(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

func refPackets(r Ref) []int64 {
	if r.ResponseFrame > 0 {
		return []int64{r.Frame, r.ResponseFrame}
	}
	return []int64{r.Frame}
}

func (f *findEngine) exchange(e *xinfo) {
	x, fx := e.x, e.fx
	c := f.conn(e)
	if x.Request == nil {
		return
	}
	api := protocol.APIName(x.APIKey)
	broker := addr(x.Broker)
	base := subject{clientID: x.ClientID, broker: broker, api: api}
	if c != nil {
		c.exchanges++
		// The first on the wire, by packet number: exchanges come as they
		// complete, and packet times may step back (a clock step,
		// interfaces merged unsorted).
		if c.first == nil || e.ref.Frame < c.first.ref.Frame || e.ref.Frame == c.first.ref.Frame && e.at.Before(c.first.at) {
			c.first = &xinfoLite{key: x.APIKey, ver: x.APIVersion, at: e.at, ref: e.ref, clientID: x.ClientID}
		}
		end := e.at
		if e.done.After(end) {
			end = e.done
		}
		if end.After(c.last) {
			c.last = end
		}
	}
	f.versions(e, c, base)
	if fx.ThrottleMs > 0 {
		d := time.Duration(fx.ThrottleMs) * time.Millisecond
		fd := f.raise(RuleThrottled, base, e.file, e.at, "", refPackets(e.ref)...)
		fd.worst = max(fd.worst, d)
		fd.Detail = fmt.Sprintf("%s throttled, up to %s (KIP-219: the client waits, the broker stops reading its connection for as long)", plural(int(fd.Count), "response"), units(fd.worst))
	}
	for i := range fx.Errors {
		er := &fx.Errors[i]
		switch er.Code {
		case 89:
			f.raise(RuleQuota, base, e.file, e.at, errorMeaning(er.Code), refPackets(e.ref)...)
		case 5, 6, 74, 75:
			if er.Topic >= 0 {
				tp := &fx.Topics[er.Topic]
				s := subject{broker: broker, topic: tp.Label(), partition: er.Partition, hasPartition: er.Partition >= 0}
				fd := f.raise(RuleLeadership, s, e.file, e.at, "", refPackets(e.ref)...)
				fd.leader(x.ClientID, protocol.KafkaErrorName(er.Code))
			}
		case 10, 18:
			if x.APIKey == protocol.KeyProduce && er.Topic >= 0 {
				s := subject{clientID: x.ClientID, broker: broker, api: api, topic: fx.Topics[er.Topic].Label()}
				f.raise(RuleBatchTooLarge, s, e.file, e.at, "refused: "+errorMeaning(er.Code), refPackets(e.ref)...)
			}
		}
	}
	switch x.APIKey {
	case protocol.KeyMetadata:
		f.rate(RuleMetadataStorm, subject{clientID: x.ClientID}, e, metadataWindow, metadataPerWindow,
			func(best int, total int64) string {
				return fmt.Sprintf("%s, up to %d within %s", plural(int(total), "Metadata request"), best, units(metadataWindow))
			})
	case protocol.KeyProduce:
		f.produce(e, base)
	case protocol.KeyFetch:
		f.fetch(e)
	case protocol.KeySaslAuthenticate:
		f.sasl(e, c, base)
	case protocol.KeyCreateTopics, protocol.KeyDescribeConfigs, protocol.KeyAlterConfigs, protocol.KeyIncrementalAlterConfigs:
		f.configs(e)
	}
	f.timeout(e, c, base)
	f.slowness(e, c, base)
	if c != nil && x.Response != nil {
		if end := latest(x.Response.End, x.Response.TCPOf().Latest); end.After(c.answeredUntil) {
			c.answeredUntil, c.answeredRef = end, e.ref
		}
	}
}

// leader counts a leadership error told to clientID.
func (x *finding) leader(clientID, errName string) {
	if x.errs == nil {
		x.errs = map[string]int64{}
	}
	x.errs[errName]++
	if clientID != "" && !slices.Contains(x.clients, clientID) && len(x.clients) < 16 {
		x.clients = append(x.clients, clientID)
	}
	var parts []string
	for _, k := range slices.Sorted(mapKeys(x.errs)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, x.errs[k]))
	}
	x.Detail = fmt.Sprintf("%s between %s and %s: leadership moved; told to %s",
		strings.Join(parts, ", "), clock(time.Time(x.Time)), clock(time.Time(x.Last)), strings.Join(x.clients, ", "))
}

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// clock formats a capture time as the timelines do: 15:04:05.000 UTC.
func clock(t time.Time) string { return t.UTC().Format("15:04:05.000") }

type rateState struct {
	times []time.Time // the requests in the current window, in time order
	refs  []int64
	best  int
	total int64
}

// rate raises rule when the exchange's client sent n or more requests of
// its kind within window w; the finding keeps the busiest window's
// packets.
func (f *findEngine) rate(rule string, s subject, e *xinfo, w time.Duration, n int, detail func(best int, total int64) string) {
	k := rule + "\x00" + strconv.Itoa(e.file) + "\x00" + s.key()
	st := f.rates[k]
	if st == nil {
		st = &rateState{}
		f.rates[k] = st
		f.mem.take(costState + int64(len(k)))
	}
	i, _ := slices.BinarySearchFunc(st.times, e.at, func(a, b time.Time) int { return a.Compare(b) })
	st.times = slices.Insert(st.times, i, e.at)
	st.refs = slices.Insert(st.refs, i, e.ref.Frame)
	last := st.times[len(st.times)-1]
	for len(st.times) > 0 && last.Sub(st.times[0]) > w {
		st.times, st.refs = st.times[1:], st.refs[1:]
	}
	st.total++
	fd := f.found[rule+"\x00"+strconv.Itoa(e.file)+"\x00"+s.key()]
	if len(st.times) >= n && len(st.times) > st.best {
		st.best = len(st.times)
		fd = f.raise(rule, s, e.file, st.times[0], "")
		fd.Packets = slices.Clone(st.refs[:min(len(st.refs), maxEvidence)])
		fd.MorePackets = int64(max(len(st.refs)-maxEvidence, 0))
	}
	if fd != nil {
		fd.Count = st.total
		if e.at.After(time.Time(fd.Last)) {
			fd.Last = Time(e.at)
		}
		fd.Detail = detail(st.best, st.total)
	}
}

// versions checks a request against the versions its broker advertised
// (KIP-35) and follows KIP-511 downgrades.
func (f *findEngine) versions(e *xinfo, c *connState, s subject) {
	x, fx := e.x, e.fx
	if x.APIKey == protocol.KeyApiVersions {
		if c == nil {
			return
		}
		av := fx.APIVersions
		switch {
		case av != nil && av.Error == 35:
			c.unsupported, c.unsupportedRef = x.APIVersion, e.ref
		case av != nil && av.Error == 0 && len(av.Ranges) > 0:
			if c.unsupported > x.APIVersion {
				f.raise(RuleDowngrade, s, e.file, e.at, fmt.Sprintf("ApiVersions v%d answered UNSUPPORTED_VERSION, asked again at v%d: the client is newer than the broker",
					c.unsupported, x.APIVersion), c.unsupportedRef.Frame, e.ref.Frame)
			}
			c.unsupported = -1
			c.ranges, c.adRef = av.Ranges, e.ref
			f.brokerAd[x.Broker] = c
			k := clientBroker{x.ClientID, x.Broker}
			if l, ok := f.learnt[k]; !ok || (learntAt{e.file, e.ref.ResponseFrame, e.done}).before(l.file, l.frame, l.at) {
				f.learnt[k] = learntAt{e.file, e.ref.ResponseFrame, e.done}
				f.mem.take(costState + int64(len(x.ClientID)))
			}
		}
		return
	}
	var ad *connState
	where := "on this connection"
	switch {
	case c != nil && c.ranges != nil:
		ad = c
	case f.brokerAd[x.Broker] != nil:
		ad = f.brokerAd[x.Broker]
		where = "on another connection"
	default:
		return
	}
	if r, ok := facts.RangeOf(ad.ranges, x.APIKey); ok {
		if x.APIVersion < r.Min || x.APIVersion > r.Max {
			s.api = fmt.Sprintf("%s v%d", s.api, x.APIVersion)
			f.raise(RuleUnadvertised, s, e.file, e.at, fmt.Sprintf("%s v%d sent; the broker advertised %d-%d %s (packet %d)%s",
				protocol.APIName(x.APIKey), x.APIVersion, r.Min, r.Max, where, ad.adRef.ResponseFrame, closedUnanswered(x)), e.ref.Frame, ad.adRef.ResponseFrame)
		}
		return
	}
	s.api = fmt.Sprintf("%s v%d", s.api, x.APIVersion)
	f.raise(RuleUnadvertised, s, e.file, e.at, fmt.Sprintf("%s sent; the broker did not advertise the API %s (packet %d)%s",
		protocol.APIName(x.APIKey), where, ad.adRef.ResponseFrame, closedUnanswered(x)), e.ref.Frame, ad.adRef.ResponseFrame)
}

// closedUnanswered says, for a request outside what its broker
// advertised, that its connection closed with it unanswered: what the
// client saw of it (a broker closes the connection on a version it does
// not support, with no error to read; dissect.Exchange.Closed).
func closedUnanswered(x *dissect.Exchange) string {
	if x.Kind != dissect.KindUnanswered || !x.Closed {
		return ""
	}
	return "; the connection closed with it unanswered (as a broker answers a version it does not support)"
}

// produce checks the batches of a Produce request: compression, size,
// batching.
func (f *findEngine) produce(e *xinfo, s subject) {
	fx := e.fx
	tiny := true
	batches := 0
	for i := range fx.Topics {
		tp := &fx.Topics[i]
		for j := range tp.Partitions {
			p := &tp.Partitions[j]
			r := p.Records
			if r == nil || r.Batches == 0 {
				continue
			}
			batches += r.Batches
			per := r.Bytes / int64(r.Batches)
			if r.Count < 0 || r.Count > int64(tinyRecords*r.Batches) || per > tinyBytes {
				tiny = false
			}
			topic := tp.Label()
			if r.Codecs == 0 || r.Codecs.Names()[0] == "none" && len(r.Codecs.List()) == 1 {
				if per >= largeBatch {
					ts := s
					ts.topic = topic
					fd := f.raise(RuleLargeBatch, ts, e.file, e.at, "", e.ref.Frame)
					fd.worst = max(fd.worst, time.Duration(per))
					fd.Detail = fmt.Sprintf("%s, the largest %s", plural(int(fd.Count), "uncompressed batch"), bytesText(int64(fd.worst)))
				}
			}
			if p.Error == 0 && e.answered {
				f.accepted[topic] = max(f.accepted[topic], per)
			}
			if lim, ok := f.limits[topic]; ok {
				if float64(per) >= nearLimit*float64(lim) {
					ts := s
					ts.topic = topic
					f.raise(RuleBatchTooLarge, ts, e.file, e.at, fmt.Sprintf("a batch of %s against max.message.bytes %d", bytesText(per), lim), e.ref.Frame)
				}
			} else if float64(per) >= nearLimit*defaultMaxMessage && len(f.nearCand[topic]) < maxEvidence {
				f.nearCand[topic] = append(f.nearCand[topic], nearCandidate{clientID: e.x.ClientID, broker: s.broker, bytes: per, at: e.at, ref: e.ref, file: e.file})
			}
		}
	}
	if batches > 0 && tiny {
		f.rate(RuleTinyBatches, subject{clientID: e.x.ClientID}, e, tinyWindow, tinyPerWindow, func(best int, total int64) string {
			return fmt.Sprintf("%s of tiny batches, up to %d within %s, each batch of %d records or fewer", plural(int(total), "Produce request"), best, units(tinyWindow), tinyRecords)
		})
	}
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 10<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// configs learns topics' max.message.bytes from config resources: those
// a DescribeConfigs response states, and those a CreateTopics or
// AlterConfigs request set and its response accepted (not ValidateOnly,
// not refused for the resource or as a whole).
func (f *findEngine) configs(e *xinfo) {
	fx := e.fx
	if e.x.APIKey != protocol.KeyDescribeConfigs && (fx.ValidateOnly || !e.answered) {
		return
	}
	for _, r := range fx.Resources {
		if r.Type != 2 || r.Name == "" || refused(fx, r.Name) {
			continue
		}
		for _, c := range r.Configs {
			if c.Name == "max.message.bytes" && !c.Null {
				if v, err := strconv.ParseInt(c.Value, 10, 64); err == nil && v > 0 {
					f.limits[r.Name] = v
				}
			}
		}
	}
}

// refused reports whether fx's response refused the topic named name: an
// error of the resource, of the topic, or of the whole request.
func refused(fx *facts.Exchange, name string) bool {
	for i := range fx.Errors {
		er := &fx.Errors[i]
		switch {
		case er.Scope.Role == protocol.RoleResourceName && er.Scope.ID == name,
			er.Topic >= 0 && fx.Topics[er.Topic].Name == name,
			er.Topic < 0 && er.Scope.Role == protocol.RoleNone:
			return true
		}
	}
	return false
}

// fetch follows each client's fetch offsets per partition.
func (f *findEngine) fetch(e *xinfo) {
	fx := e.fx
	for i := range fx.Topics {
		tp := &fx.Topics[i]
		for j := range tp.Partitions {
			p := &tp.Partitions[j]
			off, ok := p.Offsets.Get(facts.OffsetFetch)
			if !ok {
				continue
			}
			k := fetchKey{e.x.ClientID, tpKey{tp.Label(), p.Index}}
			st := f.fetches[k]
			if st == nil {
				if n := costState + int64(len(k.clientID)+len(k.tp.topic)); !f.mem.take(n) {
					f.mem.give(n) // past the budget: partitions not followed yet are not
					continue
				}
				st = &fetchState{offset: -1}
				f.fetches[k] = st
			}
			if st.failed && st.offset == off {
				s := subject{clientID: e.x.ClientID, api: "Fetch", topic: k.tp.topic, partition: k.tp.part, hasPartition: true}
				fd := f.raise(RuleFetchRetry, s, e.file, e.at, "", st.ref.Frame, e.ref.Frame)
				fd.Detail = fmt.Sprintf("%s at an offset again after an error for the partition (the latest at offset %d)", plural(int(fd.Count), "fetch"), off)
			}
			st.offset, st.ref = off, e.ref
			st.failed = e.answered && p.Error != 0
		}
	}
}

// sasl follows SaslAuthenticate results per connection.
func (f *findEngine) sasl(e *xinfo, c *connState, s subject) {
	if !e.answered {
		return
	}
	code := e.topError()
	if code == 0 {
		if c != nil && !c.authenticated {
			c.authenticated, c.authRef = true, e.ref
		}
		return
	}
	if c != nil && c.authenticated {
		f.raise(RuleSASLReauth, s, e.file, e.at, fmt.Sprintf("re-authentication refused: %s (first authenticated at packet %d)", errorMeaning(code), c.authRef.Frame),
			e.ref.Frame, e.ref.ResponseFrame, c.authRef.Frame)
		return
	}
	detail := errorMeaning(code)
	if e.fx.SASL.User != "" {
		detail = fmt.Sprintf("user %s: %s", e.fx.SASL.User, detail)
	}
	f.raise(RuleSASLFailed, s, e.file, e.at, detail, e.ref.Frame, e.ref.ResponseFrame)
}

// timeoutOf returns the time the broker has to answer e by the client's
// own request: Produce (acks != 0) and admin TimeoutMs, Fetch MaxWaitMs.
func timeoutOf(e *xinfo) (time.Duration, string, bool) {
	fx := e.fx
	switch {
	case e.x.Kind == dissect.KindNoResponse:
		return 0, "", false
	case fx.MaxWaitMs >= 0 && e.x.APIKey == protocol.KeyFetch:
		return time.Duration(fx.MaxWaitMs) * time.Millisecond, "MaxWaitMs", true
	case fx.TimeoutMs >= 0 && e.x.APIKey != protocol.KeyJoinGroup:
		return time.Duration(fx.TimeoutMs) * time.Millisecond, "TimeoutMs", true
	}
	return 0, "", false
}

// timeout checks an answered request against its own timeout; an
// unanswered one waits for its connection's end.
func (f *findEngine) timeout(e *xinfo, c *connState, s subject) {
	d, what, ok := timeoutOf(e)
	if !ok {
		return
	}
	if !e.answered {
		if c != nil && len(c.pending) < 64 {
			c.pending = append(c.pending, pendingTimeout{at: e.at, timeout: d, what: what, key: e.x.APIKey, ver: e.x.APIVersion, ref: e.ref})
		}
		return
	}
	if lat := e.done.Sub(e.at); lat > d+timeoutGrace {
		fd := f.raise(RuleTimeout, s, e.file, e.at, "", e.ref.Frame, e.ref.ResponseFrame)
		if lat-d > fd.worst {
			fd.worst = lat - d
			fd.Detail = fmt.Sprintf("answered %s after its %s of %s (%s)", units(lat), what, units(d), plural(int(fd.Count), "such request"))
		}
	}
}

// slowness splits a slow exchange between network and broker.
func (f *findEngine) slowness(e *xinfo, c *connState, s subject) {
	x := e.x
	if x.Response == nil || x.Request == nil {
		return
	}
	lat := x.Latency()
	if lat < f.slow {
		return
	}
	// A broker reads a connection's next request once it has answered
	// the one before (responses in order): time behind an earlier
	// exchange is queueing, not the broker's nor the network's.
	var queued time.Duration
	if c != nil && c.answeredUntil.After(x.Request.Time) {
		queued = earliest(c.answeredUntil, x.Response.Time).Sub(x.Request.Time)
		if queued >= f.slow {
			fd := f.raise(RuleHeadOfLine, s, e.file, e.at, "", e.ref.Frame, c.answeredRef.Frame)
			fd.worst = max(fd.worst, queued)
			fd.Detail = fmt.Sprintf("%s waited behind an earlier request on the connection, up to %s", plural(int(fd.Count), "request"), units(fd.worst))
		}
		if lat-queued < f.slow {
			return
		}
	}
	switch x.APIKey {
	case protocol.KeyJoinGroup, protocol.KeySyncGroup, protocol.KeyShareFetch:
		return // they wait by design: for the group, for records
	case protocol.KeyFetch:
		if mw := e.fx.MaxWaitMs; mw < 0 || lat <= time.Duration(mw)*time.Millisecond+f.slow {
			return // a long poll
		}
	}
	if t := e.fx.ThrottleMs; t > 0 && lat <= time.Duration(t)*time.Millisecond+f.slow {
		return // throttled (a broker before KIP-219 delays the answer)
	}
	sp := splitOf(x, queued)
	rule := RuleSlowBroker
	if sp.Verdict == verdictNetwork {
		rule = RuleSlowNetwork
	}
	fd := f.raise(rule, s, e.file, e.at, "", e.ref.Frame, e.ref.ResponseFrame)
	if rt := x.Request.TCPOf(); rt.RetransmissionFrame > 0 {
		fd.evidence(rt.RetransmissionFrame)
	}
	if lat > fd.worst {
		fd.worst = lat
		fd.Split = &sp
	}
	fd.Detail = fmt.Sprintf("%s of %s or more; the slowest, %s at %s: %s", plural(int(fd.Count), "exchange"), units(f.slow), units(fd.worst),
		clock(time.Time(fd.Split.Time)), fd.Split.Text())
}

// event follows connections' ends: their first requests, lifetimes,
// idle closes and requests left unanswered past their timeout.
func (f *findEngine) event(ev *dissect.Event, file int, name string) {
	if (ev.Kind == dissect.EventCut || ev.Kind == dissect.EventGap) && ev.Conn != nil {
		// A connection a cut file holds in part (kwire read -w), or
		// whose bytes the capture lost or did not keep (a gap, a snap
		// length): its first request and its answers may be in what is
		// missing, so neither a first request other than ApiVersions
		// nor a request left unanswered says what the client or the
		// broker did.
		if f.cut == nil {
			f.cut = map[*reassembly.Conn]bool{}
		}
		if !f.cut[ev.Conn] {
			f.cut[ev.Conn] = true
			f.mem.take(costCut)
		}
		return
	}
	if ev.Kind != dissect.EventClose || ev.Conn == nil {
		return
	}
	cut := f.cut[ev.Conn]
	if cut {
		delete(f.cut, ev.Conn)
		f.mem.give(costCut)
	}
	c := f.conns[ev.Conn]
	if c == nil {
		return
	}
	delete(f.conns, ev.Conn)
	f.mem.give(costState)
	s := subject{clientID: c.clientID, broker: addr(c.broker)}
	end := ev.Time
	if !ev.ClosedAt.IsZero() {
		end = ev.ClosedAt
	}
	// Requests unanswered past their own timeout while the connection
	// lived on.
	for _, p := range c.pending {
		if end.Sub(p.at) > p.timeout+timeoutGrace && !cut {
			ps := s
			ps.api = protocol.APIName(p.key)
			fd := f.raise(RuleTimeout, ps, file, p.at, "", p.ref.Frame)
			fd.Detail = fmt.Sprintf("never answered: its %s was %s, the connection lived %s more (%s)",
				p.what, units(p.timeout), units(end.Sub(p.at)), plural(int(fd.Count), "such request"))
		}
	}
	// The first request, when the connection's start was captured.
	if c.sawSYN && c.first != nil && c.first.key != protocol.KeyApiVersions && !cut {
		k := clientBroker{c.first.clientID, c.broker}
		if l, ok := f.learnt[k]; !ok || !l.before(file, c.first.ref.Frame, c.first.at) {
			fs := s
			fs.clientID = c.first.clientID
			fd := f.raise(RuleSkippedAPIVer, fs, file, c.first.at, "", c.first.ref.Frame)
			if fd.first == "" {
				// The first connection's, whose packet the finding lists first.
				fd.first = fmt.Sprintf("%s v%d", protocol.APIName(c.first.key), c.first.ver)
			}
			fd.Detail = fmt.Sprintf("%s began with a request other than ApiVersions (the first: %s) before the client had asked this broker's versions",
				plural(int(fd.Count), "connection"), fd.first)
		}
	}
	// Short-lived connections, by client.
	closed := !ev.ClosedAt.IsZero()
	if closed && c.hasClientID && c.first != nil {
		cs := f.churn[c.clientID]
		if cs == nil {
			cs = &churnState{file: file, broker: addr(c.broker)}
			f.churn[c.clientID] = cs
			f.mem.take(costState + int64(len(c.clientID)))
		}
		cs.conns++
		if end.Sub(c.opened) < churnLife {
			cs.short++
			if len(cs.refs) < maxEvidence {
				cs.refs = append(cs.refs, c.first.ref.Frame)
			}
			if cs.first.IsZero() || c.opened.Before(cs.first) {
				cs.first = c.opened
			}
			cs.last = maxTime(cs.last, c.opened)
		}
	}
	// Idle connections the broker closed.
	if closed && ev.ClosedBy != clientDir(ev.Conn, c) && c.exchanges > 0 && len(c.pending) == 0 && !c.last.IsZero() {
		if idle := ev.ClosedAt.Sub(c.last); idle >= idleClose {
			fd := f.raise(RuleIdleClose, s, file, ev.ClosedAt, "", c.first.ref.Frame, ev.Frame)
			fd.Detail = fmt.Sprintf("closed by the broker after %s without a request (%s)", units(idle), plural(int(fd.Count), "such connection"))
		}
	}
}

// clientDir is the direction of the client's bytes on rc.
func clientDir(rc *reassembly.Conn, c *connState) reassembly.Dir {
	if c.client == rc.B {
		return reassembly.BtoA
	}
	return reassembly.AtoB
}

// Findings returns the findings so far, in time order.
func (a *Analyzer) Findings() *FindingsReport {
	r := &FindingsReport{Findings: []Finding{}}
	f := a.find
	if f == nil {
		return r
	}
	r.Dropped = f.dropped
	out := make([]*finding, 0, len(f.found))
	for _, x := range f.found {
		if x.Rule != "" {
			out = append(out, x)
		}
	}
	out = append(out, f.reportChurn(a)...)
	out = append(out, f.reportNear(a)...)
	if a.txns != nil {
		out = append(out, f.reportProducers(a)...)
	}
	if a.groups != nil {
		out = append(out, f.reportGroups(a)...)
	}
	// A total order: findings of one rule at one instant on one subject
	// (producers fenced together) come out in the same order every run,
	// whatever order the maps behind them gave.
	slices.SortFunc(out, func(a, b *finding) int {
		return cmp.Or(cmp.Compare(a.file, b.file), time.Time(a.Time).Compare(time.Time(b.Time)), cmp.Compare(ruleIndex(a.Rule), ruleIndex(b.Rule)),
			cmp.Compare(a.Subject, b.Subject), cmp.Compare(a.Detail, b.Detail), slices.Compare(a.Packets, b.Packets),
			cmp.Compare(deref(a.ClientID), deref(b.ClientID)), cmp.Compare(deref(a.Broker), deref(b.Broker)),
			time.Time(a.Last).Compare(time.Time(b.Last)), cmp.Compare(a.Count, b.Count))
	})
	for _, x := range out {
		fd := x.Finding
		if fd.Last.IsZero() {
			fd.Last = fd.Time
		}
		if a.files > 1 && x.file < len(a.fileNames) {
			fd.File = a.fileNames[x.file]
		}
		r.Findings = append(r.Findings, fd)
	}
	return r
}

func ruleIndex(id string) int {
	for i, r := range Rules {
		if r.ID == id {
			return i
		}
	}
	return len(Rules)
}

func (f *findEngine) reportChurn(a *Analyzer) []*finding {
	var out []*finding
	for id, cs := range f.churn {
		if cs.short < churnConns {
			continue
		}
		r := ruleOf(RuleChurn)
		x := &finding{Finding: Finding{Rule: RuleChurn, Severity: r.Severity, Time: Time(cs.first), Last: Time(cs.last), Subject: id,
			ClientID: strp(id), Count: cs.short, Packets: slices.Clone(cs.refs), MorePackets: max(cs.short-int64(len(cs.refs)), 0),
			Detail: fmt.Sprintf("%d of its %d connections lived less than %s", cs.short, cs.conns, units(churnLife))}, file: cs.file}
		out = append(out, x)
	}
	return out
}

func (f *findEngine) reportNear(a *Analyzer) []*finding {
	var out []*finding
	for topic, cs := range f.nearCand {
		if _, ok := f.limits[topic]; ok || f.accepted[topic] > defaultMaxMessage {
			continue // a config says the limit, or a larger batch was accepted: the limit is larger
		}
		r := ruleOf(RuleBatchTooLarge)
		for _, c := range cs {
			x := &finding{Finding: Finding{Rule: RuleBatchTooLarge, Severity: r.Severity, Time: Time(c.at), Last: Time(c.at),
				Subject: subject{clientID: c.clientID, broker: c.broker, api: "Produce", topic: topic}.text(), ClientID: strp(c.clientID),
				Broker: strp(c.broker), API: ptr("Produce"), Topic: strp(topic), Count: 1, Packets: []int64{c.ref.Frame},
				Detail: fmt.Sprintf("a batch of %s against Kafka's default max.message.bytes %d (no topic config in the capture)", bytesText(c.bytes), defaultMaxMessage)},
				file: c.file}
			out = append(out, x)
		}
	}
	return out
}

func (f *findEngine) reportProducers(a *Analyzer) []*finding {
	var out []*finding
	latest := map[*finding]string{} // a fencing finding's latest instance, described
	t := a.txns
	for p := t.order.first; p != nil; p = next[producer](p) {
		for _, in := range p.instances {
			if in.fencedBy == nil {
				continue
			}
			by := in.fencedBy
			subj := in.clientID + " transactional ID " + p.txnID
			detail := fmt.Sprintf("%s's InitProducerId (epoch %d) fenced %s (at epoch %d)", by.clientID, firstEpoch(by), in.clientID, in.fencedEpoch)
			// One finding per subject: the instances of one client fenced
			// under one transactional ID, counted, the latest described.
			var x *finding
			for _, o := range out {
				if o.Rule == RuleFenced && o.Subject == subj && o.file == in.fencedFile {
					x = o
				}
			}
			if x == nil {
				r := ruleOf(RuleFenced)
				x = &finding{Finding: Finding{Rule: RuleFenced, Severity: r.Severity, Time: Time(in.fencedAt), Last: Time(in.fencedAt),
					Subject: subj, ClientID: strp(in.clientID), Packets: []int64{}}, file: in.fencedFile}
				out = append(out, x)
			}
			x.Count++
			if time.Time(x.Time).After(in.fencedAt) {
				x.Time = Time(in.fencedAt)
			}
			if !in.fencedAt.Before(time.Time(x.Last)) || latest[x] == "" {
				x.Last = Time(in.fencedAt)
				latest[x] = detail
			}
			x.evidence(by.ref.Frame)
			for _, tx := range p.txns {
				if tx.inst == in && (fencingCode(tx.endError) || fencingCode(tx.produceErr)) {
					x.evidence(tx.endRef.Frame)
					for _, rf := range tx.refs {
						x.evidence(rf.Frame)
					}
				}
			}
		}
		for _, is := range p.issues {
			rule := RuleSequence
			if is.Kind == seqRetry {
				rule = RuleProduceRetry
			}
			s := subject{clientID: deref(is.ClientID), api: "Produce", topic: is.Topic, partition: is.Partition, hasPartition: true}
			k := rule + "\x00" + s.key()
			var x *finding
			for _, o := range out {
				if o.Rule == rule && o.Subject == s.text() && o.file == is.file && k != "" {
					x = o
				}
			}
			if x == nil {
				r := ruleOf(rule)
				x = &finding{Finding: Finding{Rule: rule, Severity: r.Severity, Time: is.Time, Subject: s.text(), ClientID: is.ClientID,
					API: ptr("Produce"), Topic: strp(is.Topic), Partition: ptr(is.Partition), Packets: []int64{}}, file: is.file}
				out = append(out, x)
			}
			x.Count++
			x.Last = is.Time
			if is.first > 0 {
				x.evidence(is.first) // the first send, then the retry
			}
			x.evidence(is.Ref.Frame)
			x.Detail = fmt.Sprintf("%s; the latest: producer %d epoch %d: %s", plural(int(x.Count), "batch"), is.ProducerID, is.ProducerEpoch, is.Detail)
		}
	}
	for x, d := range latest {
		x.Detail = d
		if x.Count > 1 {
			x.Detail = fmt.Sprintf("%d producer instances fenced; the latest: %s", x.Count, d)
		}
	}
	return out
}

func firstEpoch(in *instance) int16 {
	if len(in.epochs) > 0 {
		return in.epochs[0].Epoch
	}
	return in.epoch
}

func (f *findEngine) reportGroups(a *Analyzer) []*finding {
	var out []*finding
	for g := range a.GroupReports(nil) { // one at a time
		var starts []Time
		var refs []int64
		var files []int
		for i, gn := range g.Generations {
			if i > 0 && gn.DurationMs != nil {
				starts = append(starts, gn.Start)
				refs = append(refs, gn.StartRef.Frame)
				files = append(files, gn.file)
			}
		}
		for i := range starts {
			j := i
			for j+1 < len(starts) && files[j+1] == files[i] && time.Time(starts[j+1]).Sub(time.Time(starts[i])) <= stormWindow {
				j++
			}
			if j-i+1 >= rebalanceStorm {
				r := ruleOf(RuleRebalanceStorm)
				x := &finding{Finding: Finding{Rule: RuleRebalanceStorm, Severity: r.Severity, Time: starts[i], Last: starts[j],
					Subject: "group " + g.GroupID, Group: strp(g.GroupID), Count: int64(j - i + 1), Packets: []int64{},
					Detail: fmt.Sprintf("%d rebalances within %s", j-i+1, units(time.Time(starts[j]).Sub(time.Time(starts[i]))))}, file: files[i]}
				x.evidence(refs[i : j+1]...)
				out = append(out, x)
				break
			}
		}
		for _, m := range g.Members {
			if m.End == nil || *m.End != endExpired {
				continue
			}
			r := ruleOf(RuleMemberExpired)
			x := &finding{Finding: Finding{Rule: RuleMemberExpired, Severity: r.Severity, Time: m.EndTime, Last: m.EndTime,
				Subject: m.Name + " group " + g.GroupID, ClientID: m.ClientID, Group: strp(g.GroupID), Count: 1, Packets: []int64{}}, file: m.file}
			detail := fmt.Sprintf("member %s left no word", m.MemberID)
			if !m.LastHeartbeat.IsZero() {
				detail = fmt.Sprintf("member %s: last heartbeat at %s, removed by %s", m.MemberID, clock(time.Time(m.LastHeartbeat)), clock(time.Time(m.EndTime)))
			}
			if m.SessionTimeoutMs != nil {
				detail += fmt.Sprintf(" (session timeout %s)", units(time.Duration(*m.SessionTimeoutMs)*time.Millisecond))
			}
			x.Detail = detail
			if m.LastHeartbeatRef != nil {
				x.evidence(m.LastHeartbeatRef.Frame)
			}
			for _, gn := range g.Generations {
				if slices.Contains(gn.CauseMembers, m.MemberID) && gn.Cause == causeTimeout {
					x.evidence(gn.StartRef.Frame)
				}
			}
			out = append(out, x)
		}
	}
	return out
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
