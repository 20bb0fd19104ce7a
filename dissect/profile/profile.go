// Package profile says what a capture's Kafka traffic is, in the terms
// that stay the same when the same clients do the same work again: per
// client (client ID, with its software) the APIs and versions it used,
// the request sequence of each of its connections, the errors it got,
// the topics, configs, record formats and codecs it touched and its
// latency; per broker what it advertised. Ports, correlation IDs, member
// and producer IDs, timestamps, sizes and the repeat counts of periodic
// requests (heartbeats, fetches, metadata refreshes, telemetry) are left
// out. It is what `kwire read --normalize` prints (a snapshot for
// golden-file tests) and what `kwire diff` compares (Compare).
//
// Everything is read from each exchange's facts (package facts) and
// header, never from its tree or field names. A Collector is a
// dissect.Sink: give it a run's exchanges and events in emit order, then
// call Profile. Memory grows with the clients, connections open at once
// and the distinct values seen (APIs, topics, errors), not with the
// exchanges: a connection's sequence keeps at most MaxSequence steps.
// What clients and brokers keep is bounded in bytes by the Collector's
// budget (NewBoundedCollector); past it the profile counts what it left
// out (Profile.Folded, Client.Capped).
package profile

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// MaxSequence bounds the steps kept of one connection's normalised
// request sequence; a longer one ends with a step "…" (and is still
// compared by what it kept).
const MaxSequence = 64

// Profile is the normalised view of one capture (or set of captures).
// Every list is sorted; the JSON form (encoding/json) is the snapshot
// `kwire read --normalize --json` writes.
type Profile struct {
	Clients []Client `json:"clients"` // by client ID
	Brokers []Broker `json:"brokers"` // by address
	// Folded counts what the Collector's memory budget left out; absent
	// when it left nothing out.
	Folded *Folded `json:"folded,omitempty"`
}

// Folded counts the exchanges and connections of client IDs and brokers
// a Profile does not list, its Collector's budget (--max-profile-memory)
// being spent: counted, not listed (telling the client IDs apart would
// take the memory saved). What is listed is exact, but for clients
// marked Capped.
type Folded struct {
	MaxMemory int64 `json:"maxMemoryBytes"` // the budget, in bytes
	// Requests and Connections are those of client IDs not in Clients.
	Requests    int64 `json:"requests"`
	Connections int64 `json:"connections"`
	// BrokerExchanges are the exchanges with brokers not in Brokers.
	BrokerExchanges int64 `json:"brokerExchanges"`
}

// Client is what one client ID did.
type Client struct {
	ClientID string `json:"clientId"` // "" for a null client ID too
	// Software are the client software names/versions its ApiVersions
	// requests named (KIP-511: "apache-kafka-java/3.7.0").
	Software []string `json:"software"`
	// Connections counts its connections.
	Connections int `json:"connections"`
	// APIs are the APIs it used, each with the versions used.
	APIs []APIUse `json:"apis"`
	// Sequences are its connections' normalised request sequences (see
	// Sequence), each with how many connections had it.
	Sequences []SequenceCount `json:"sequences"`
	// Errors are the Kafka errors its responses carried, per API
	// ("Produce UNKNOWN_TOPIC_OR_PARTITION").
	Errors []string `json:"errors"`
	// Topics are the topics it named, by name (a topic only an ID names,
	// whose name no exchange gave, is left out: IDs change with every
	// cluster).
	Topics []string `json:"topics"`
	// Configs are the config resources it asked about or changed
	// ("topic orders", "broker 0"), with the config names it named
	// ("topic orders: retention.ms").
	Configs []string `json:"configs"`
	// Codecs are the compression codecs of the record batches it
	// produced ("gzip"), Formats their record formats ("v2": magic 2).
	Codecs  []string `json:"codecs"`
	Formats []string `json:"formats"`
	// Acks are the acks of its Produce requests ("all", "1", "0").
	Acks []string `json:"acks"`
	// Latency is per API (answered requests only).
	Latency []LatencyStat `json:"latency"`
	// Capped says the lists above (and Latency's counts) leave out some
	// of what the client did: past the Collector's budget, a new API,
	// version, sequence, error, topic, config, codec, format, acks,
	// software name or latency sample of a client already listed is not
	// kept.
	Capped bool `json:"capped,omitempty"`
}

// APIUse is one API and the versions used.
type APIUse struct {
	API      string  `json:"api"`
	Key      int16   `json:"apiKey"`
	Versions []int16 `json:"versions"`
}

// SequenceCount is a normalised request sequence and how many
// connections had it.
type SequenceCount struct {
	Sequence    string `json:"sequence"`
	Connections int    `json:"connections"`
}

// LatencyStat is one API's latency percentiles, in milliseconds.
type LatencyStat struct {
	API   string  `json:"api"`
	Count int64   `json:"count"`
	P50Ms float64 `json:"p50Ms"`
	P99Ms float64 `json:"p99Ms"`
	MaxMs float64 `json:"maxMs"`
}

// Broker is what one broker said of itself.
type Broker struct {
	Address string `json:"broker"`
	// Advertised are the version ranges of its last error-free
	// ApiVersions response ("Produce 3-12"), by API key.
	Advertised []APIRange `json:"advertised"`
	// Errors are the Kafka errors it answered with, per API.
	Errors []string `json:"errors"`
	// Capped says Errors leaves some out (the Collector's budget), or
	// that a newer advertisement than Advertised did not fit.
	Capped bool `json:"capped,omitempty"`
}

// APIRange is one API key's advertised versions.
type APIRange struct {
	API string `json:"api"`
	Key int16  `json:"apiKey"`
	Min int16  `json:"minVersion"`
	Max int16  `json:"maxVersion"`
}

// Periodic reports whether an API is sent again and again by a healthy
// client (heartbeats, fetches, metadata refreshes, telemetry): its
// repeats in a sequence are not counted, and heartbeats and telemetry,
// whose timing decides whether they happen at all, are left out of
// sequences (they stay in APIs).
func Periodic(key int16) (repeats, timed bool) {
	switch key {
	case 12, 63, 68, 74, 76, 71, 72: // Heartbeat, BrokerHeartbeat, ConsumerGroupHeartbeat, ShareGroupHeartbeat, StreamsGroupHeartbeat, GetTelemetrySubscriptions, PushTelemetry
		return true, true
	case 1, 3, 78, 8, 2: // Fetch, Metadata, ShareFetch, OffsetCommit (auto-commit), ListOffsets
		return true, false
	}
	return false, false
}

// DefaultMaxMemory is a Collector's default budget: 64 MiB, about
// 100,000 client IDs that each sent one API on one connection (about
// 600 bytes each with a short ID and sequence), or 500 busy clients with
// 10 APIs' latency kept exactly (4096 samples, 64 KiB an API, counted
// with the slack of the slice that holds them).
const DefaultMaxMemory = 64 << 20

// Costs in bytes of what a Collector keeps, beside the strings: each
// struct in its size class, with its map entry and its share of the
// map's buckets.
const (
	costClient  = 400 // clientAcc and its three maps
	costBroker  = 160 // brokerAcc, beside its address
	costSetItem = 48  // an entry of a string set or count map, beside the string
	costAPI     = 112 // an API's version set
	costVersion = 16  // a version in it
	costLatency = 128 // a stats.Latency and its map entry
	costSample  = 16  // a latency sample kept exactly: 8 bytes, with the slice's growth slack
	// costRangeEntry is an advertised range: its facts.APIRange (8) and
	// the APIRange the Profile turns it into (24, in a slice grown by
	// append: up to 48), which lives as long as the collector's.
	costRangeEntry = 64
)

// Collector builds a Profile from exchanges and events (a dissect.Sink).
//
// What it keeps of clients and brokers is counted against its budget
// (the costs above, charged as entries are added): past it, a new client
// ID or broker is not kept (Profile.Folded counts their requests,
// connections and exchanges), and a client or broker already kept adds
// nothing new to its lists (Capped). Open connections' sequences are
// bounded by the connections reassembly keeps open
// (--max-connection-memory) and MaxSequence.
type Collector struct {
	names       *facts.Names
	clients     map[string]*clientAcc
	brokers     map[string]*brokerAcc
	conns       map[*reassembly.Conn]*connAcc
	maxMem, mem int64
	folded      Folded
}

type clientAcc struct {
	capped                bool
	software              map[string]bool
	connections           int
	apis                  map[int16]map[int16]bool
	sequences             map[string]int
	errors, topics, confs map[string]bool
	codecs, formats, acks map[string]bool
	latency               map[int16]*stats.Latency
}

type brokerAcc struct {
	advertised []facts.APIRange
	errors     map[string]bool
	capped     bool
}

type connAcc struct {
	client   string
	steps    []string
	lastKey  int16
	repeated bool
}

// NewCollector returns an empty Collector that resolves topic IDs with
// names (the names a Metadata of the capture states are learnt into it);
// nil: a Names of its own.
func NewCollector(names *facts.Names) *Collector {
	return NewBoundedCollector(names, DefaultMaxMemory)
}

// NewBoundedCollector is NewCollector with a budget of maxMemory bytes
// (0 or less: DefaultMaxMemory).
func NewBoundedCollector(names *facts.Names, maxMemory int64) *Collector {
	if names == nil {
		names = facts.NewNames()
	}
	if maxMemory <= 0 {
		maxMemory = DefaultMaxMemory
	}
	return &Collector{names: names, clients: map[string]*clientAcc{},
		brokers: map[string]*brokerAcc{}, conns: map[*reassembly.Conn]*connAcc{}, maxMem: maxMemory}
}

// take charges n bytes and reports whether they fit; when they do not,
// nothing is charged.
func (c *Collector) take(n int64) bool {
	if c.mem+n > c.maxMem {
		return false
	}
	c.mem += n
	return true
}

// set adds k to m when it fits the budget, or sets *capped.
func (c *Collector) set(m map[string]bool, k string, capped *bool) map[string]bool {
	if m[k] {
		return m
	}
	if !c.take(costSetItem + int64(len(k))) {
		*capped = true
		return m
	}
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
}

// client returns the accumulator of client ID id, nil when it is not
// kept (the budget).
func (c *Collector) client(id string) *clientAcc {
	cl := c.clients[id]
	if cl == nil {
		if !c.take(costClient + int64(len(id))) {
			return nil
		}
		cl = &clientAcc{apis: map[int16]map[int16]bool{}, sequences: map[string]int{}, latency: map[int16]*stats.Latency{}}
		c.clients[id] = cl
	}
	return cl
}

// broker returns the accumulator of a broker, nil when it is not kept.
func (c *Collector) broker(addr string) *brokerAcc {
	b := c.brokers[addr]
	if b == nil {
		if !c.take(costBroker + int64(len(addr))) {
			return nil
		}
		b = &brokerAcc{}
		c.brokers[addr] = b
	}
	return b
}

// apiName is Kafka's name of an API key.
func apiName(key int16) string { return protocol.APIName(key) }

// Exchange adds one exchange; call it in emit order (topic IDs are
// resolved as they are learnt).
func (c *Collector) Exchange(ex *dissect.Exchange) {
	fx := ex.Facts()
	c.names.Resolve(fx)
	if ex.Request == nil || ex.Kind == dissect.KindSASL {
		return // an orphan or a raw SASL token: no client, API or version to speak of
	}
	broker := ""
	if ex.Broker.IsValid() {
		broker = ex.Broker.String()
	}
	b := c.broker(broker)
	if b == nil {
		c.folded.BrokerExchanges++
	}
	name := apiName(ex.APIKey)
	if b != nil {
		for _, e := range fx.Errors {
			b.errors = c.set(b.errors, name+" "+e.Name, &b.capped)
		}
		if fx.APIVersions != nil && fx.APIVersions.Error == 0 && len(fx.APIVersions.Ranges) > 0 {
			if n := len(fx.APIVersions.Ranges) - cap(b.advertised); n <= 0 || c.take(costRangeEntry*int64(n)) {
				b.advertised = append(b.advertised[:0], fx.APIVersions.Ranges...)
			} else {
				b.capped = true
			}
		}
	}
	if ex.Conn != nil {
		cn := c.conns[ex.Conn]
		if cn == nil {
			cn = &connAcc{client: ex.ClientID, lastKey: -1}
			c.conns[ex.Conn] = cn
		}
		cn.step(ex.APIKey)
	}
	cl := c.client(ex.ClientID)
	if cl == nil {
		c.folded.Requests++
		return
	}
	c.clientExchange(cl, ex, fx, name)
}

// clientExchange adds what one exchange says of its client.
func (c *Collector) clientExchange(cl *clientAcc, ex *dissect.Exchange, fx *facts.Exchange, name string) {
	vs := cl.apis[ex.APIKey]
	switch {
	case vs == nil && !c.take(costAPI+costVersion):
		cl.capped = true
	case vs == nil:
		cl.apis[ex.APIKey] = map[int16]bool{ex.APIVersion: true}
	case vs[ex.APIVersion]:
	case c.take(costVersion):
		vs[ex.APIVersion] = true
	default:
		cl.capped = true
	}
	for _, e := range fx.Errors {
		cl.errors = c.set(cl.errors, name+" "+e.Name, &cl.capped)
	}
	for _, t := range fx.AllTopics() {
		if !isTopicID(fx, t) {
			cl.topics = c.set(cl.topics, t, &cl.capped)
		}
	}
	for _, r := range fx.Resources {
		what := r.TypeName
		if what == "" {
			what = "type " + itoa(int64(r.Type))
		}
		res := what + " " + r.Name
		if r.Pattern >= 0 {
			res += " (" + r.PatternName + ")"
		}
		cl.confs = c.set(cl.confs, res, &cl.capped)
		for _, cf := range r.Configs {
			cl.confs = c.set(cl.confs, res+": "+cf.Name, &cl.capped)
		}
	}
	if ex.APIKey == 0 { // Produce: what it wrote
		for _, t := range fx.Topics {
			for _, p := range t.Partitions {
				if p.Records == nil {
					continue
				}
				for _, n := range p.Records.Codecs.Names() {
					cl.codecs = c.set(cl.codecs, n, &cl.capped)
				}
				for m := 0; m < 3; m++ {
					if p.Records.Magics&(1<<m) != 0 {
						cl.formats = c.set(cl.formats, "v"+itoa(int64(m)), &cl.capped)
					}
				}
			}
		}
		if fx.HasAcks {
			a := itoa(int64(fx.Acks))
			if fx.Acks == -1 {
				a = "all"
			}
			cl.acks = c.set(cl.acks, a, &cl.capped)
		}
	}
	if fx.Software.Name != "" {
		cl.software = c.set(cl.software, fx.Software.Name+"/"+fx.Software.Version, &cl.capped)
	}
	if l := ex.Latency(); l >= 0 {
		acc := cl.latency[ex.APIKey]
		if acc == nil && c.take(costLatency) {
			acc = &stats.Latency{}
			cl.latency[ex.APIKey] = acc
		}
		// A sample kept exactly costs its 8 bytes (and the slice's
		// slack); past stats.ExactSamples the Latency keeps fixed
		// buckets instead, which the samples' charge covers.
		switch {
		case acc == nil:
			cl.capped = true
		case acc.Count() >= stats.ExactSamples || c.take(costSample):
			acc.Add(l)
		default:
			cl.capped = true
		}
	}
}

// isTopicID reports whether label is a topic ID no exchange named.
func isTopicID(fx *facts.Exchange, label string) bool {
	return slices.Contains(fx.TopicIDs(), label)
}

// step adds a request to the connection's sequence: periodic APIs'
// repeats are not counted, other repeats are marked "+" once (a retry, a
// second batch); timed periodic APIs are left out.
func (cn *connAcc) step(key int16) {
	repeats, timed := Periodic(key)
	if timed {
		return
	}
	if key == cn.lastKey {
		if !repeats && !cn.repeated && len(cn.steps) > 0 {
			cn.steps[len(cn.steps)-1] += "+"
			cn.repeated = true
		}
		return
	}
	cn.lastKey, cn.repeated = key, false
	switch {
	case len(cn.steps) < MaxSequence:
		cn.steps = append(cn.steps, apiName(key))
	case len(cn.steps) == MaxSequence:
		cn.steps = append(cn.steps, "…")
	}
}

// Event ends a connection's sequence at its close.
func (c *Collector) Event(ev *dissect.Event) {
	if ev.Kind == dissect.EventClose && ev.Conn != nil {
		if cn := c.conns[ev.Conn]; cn != nil {
			c.fold(cn)
			delete(c.conns, ev.Conn)
		}
	}
}

func (c *Collector) fold(cn *connAcc) {
	cl := c.client(cn.client)
	if cl == nil {
		c.folded.Connections++
		return
	}
	cl.connections++
	seq := strings.Join(cn.steps, " ")
	if seq == "" {
		seq = "(periodic requests only)"
	}
	if _, ok := cl.sequences[seq]; ok || c.take(costSetItem+int64(len(seq))) {
		cl.sequences[seq]++
	} else {
		cl.capped = true
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Profile returns the profile of everything added so far; connections
// still open count as closed.
func (c *Collector) Profile() *Profile {
	for k, cn := range c.conns {
		c.fold(cn)
		delete(c.conns, k)
	}
	p := &Profile{Clients: []Client{}, Brokers: []Broker{}}
	for id, cl := range c.clients {
		out := Client{ClientID: id, Software: sortedSet(cl.software), Connections: cl.connections,
			Errors: sortedSet(cl.errors), Topics: sortedSet(cl.topics), Configs: sortedSet(cl.confs),
			Codecs: sortedSet(cl.codecs), Formats: sortedSet(cl.formats), Acks: sortedSet(cl.acks),
			APIs: []APIUse{}, Sequences: []SequenceCount{}, Latency: []LatencyStat{}, Capped: cl.capped}
		for key, vs := range cl.apis {
			u := APIUse{API: apiName(key), Key: key}
			for v := range vs {
				u.Versions = append(u.Versions, v)
			}
			slices.Sort(u.Versions)
			out.APIs = append(out.APIs, u)
		}
		slices.SortFunc(out.APIs, func(a, b APIUse) int { return cmp.Compare(a.Key, b.Key) })
		for s, n := range cl.sequences {
			out.Sequences = append(out.Sequences, SequenceCount{Sequence: s, Connections: n})
		}
		slices.SortFunc(out.Sequences, func(a, b SequenceCount) int { return strings.Compare(a.Sequence, b.Sequence) })
		keys := make([]int16, 0, len(cl.latency))
		for k := range cl.latency {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			l := cl.latency[k]
			out.Latency = append(out.Latency, LatencyStat{API: apiName(k), Count: l.Count(),
				P50Ms: ms(l.Percentile(50)), P99Ms: ms(l.Percentile(99)), MaxMs: ms(l.Max())})
		}
		p.Clients = append(p.Clients, out)
	}
	slices.SortFunc(p.Clients, func(a, b Client) int { return strings.Compare(a.ClientID, b.ClientID) })
	for addr, b := range c.brokers {
		out := Broker{Address: addr, Errors: sortedSet(b.errors), Advertised: []APIRange{}, Capped: b.capped}
		for _, r := range b.advertised {
			out.Advertised = append(out.Advertised, APIRange{API: apiName(r.Key), Key: r.Key, Min: r.Min, Max: r.Max})
		}
		// Stable: of a key listed twice, clusterRanges keeps the last.
		slices.SortStableFunc(out.Advertised, func(x, y APIRange) int { return cmp.Compare(x.Key, y.Key) })
		p.Brokers = append(p.Brokers, out)
	}
	slices.SortFunc(p.Brokers, func(a, b Broker) int { return strings.Compare(a.Address, b.Address) })
	if c.folded != (Folded{}) {
		f := c.folded
		f.MaxMemory = c.maxMem
		p.Folded = &f
	}
	return p
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
