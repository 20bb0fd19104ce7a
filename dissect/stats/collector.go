package stats

import (
	"cmp"
	"container/heap"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// Options configure a Collector.
type Options struct {
	// Top keeps the Top slowest answered exchanges (0: none).
	Top int
	// Names names topics known only by ID (facts.Names): the run's, shared
	// with the other readers of its exchanges; nil gives the Collector one
	// of its own.
	Names *facts.Names
	// MaxMemory bounds, in bytes, the per-connection detail the report
	// keeps (see Collector); 0 means DefaultMaxMemory.
	MaxMemory int64
}

// DefaultMaxMemory is Options.MaxMemory's default: 4 MiB, the rows of
// about 8,000 connections that ended (costConnRow each) and the client
// addresses (costAddr each, at most a quarter of it). More costs CPU as
// well as memory: every byte kept is scanned by each garbage collection
// (docs/performance.md, issue 15).
const DefaultMaxMemory = 4 << 20

// Costs in bytes of the per-connection detail, counted against
// Options.MaxMemory: a connection's accumulator (connAcc, about 400
// bytes in its size class) with its share of the heap and map holding
// it, plus its TLS strings; a client address in a client's set.
const (
	costConnRow = 512
	costAddr    = 64
)

// Costs in bytes of the clients' and partitions' rows, counted against a
// budget of their own as large as Options.MaxMemory (tableMem): a
// client's accumulator with its four maps (and its ID), an API a client
// used and each version of it, an error code or a software name it got
// or gave, a partition's accumulator (and its topic name), a codec of a
// partition. A capture naming more clients or partitions than that holds
// has the rest folded into totals (Report.FoldedClients,
// Report.FoldedPartitions), whatever the peers send: client IDs and
// topic-partitions are theirs to make up.
const (
	costClient    = 640
	costClientAPI = 96
	costAPIVer    = 32
	costCode      = 32
	costPart      = 320
	costCodec     = 32
)

// Collector aggregates exchanges and events into a Report. It implements
// dissect.Sink; calls must come from one goroutine (the dissector's).
//
// What it keeps per connection is bounded by Options.MaxMemory: a
// connection open in the capture has its accumulator (their number is
// bounded by reassembly's connection memory, --max-connection-memory);
// when it ends (dissect.EventClose) its row joins the rows kept, and
// while those cost more than the budget, the row that RankConns puts
// last (fewest problems, then fewest frames, then the shortest) is
// folded into Report.FoldedConnections, which keeps its totals; a row
// ranked after one already folded is folded at once, so the rows kept
// are always the top of all the connections that ended. Clients
// count their connections and keep their addresses while the addresses'
// cost stays under a quarter of the budget (ClientStats.AddressesCapped
// past it). Clients and partitions keep their rows while those cost at
// most as much again (costClient, costPart); past it a new client ID's
// or partition's counts are folded into Report.FoldedClients or
// Report.FoldedPartitions, and a kept client's new API versions, errors
// and software are left out (ClientStats.DetailCapped). Every total
// stays exact: only rows and detail are left out, and the report says
// so.
type Collector struct {
	opts Options
	tls  *TLSCounts // Report.TLS; nil until a TLS connection

	origin      time.Time // first capture time seen: the series' origin
	first, last time.Time

	exchanges, orphans, sasl, skipped int64
	cutFrames, notCaptured            int64 // Report.CutFrames, NotCapturedBytes

	apis    map[apiVer]*apiAcc
	series  map[int16]*Series
	clients map[clientKey]*clientAcc
	parts   map[partKey]*partAcc
	conns   map[*reassembly.Conn]*connAcc // open connections
	ended   endedHeap                     // rows of connections that ended, least telling first
	folded  FoldedConns                   // the ended connections whose rows were folded
	anyConn bool                          // a connection was seen (SetFile)
	mem     int64                         // cost of the rows in ended
	// bestFolded is the most telling row folded (RankConns): a row that
	// ends ranked after it is folded at once.
	bestFolded *connAcc
	addrMem    int64          // cost of the clients' addresses
	slow       []SlowExchange // sorted slowest first, at most opts.Top
	// errPlaces count errors by code, API and place, at most
	// maxMemory()/8 bytes of them (errPlaceMem); errFolded the errors of
	// places past it.
	errPlaces   map[errPlace]int64
	errPlaceMem int64
	errFolded   int64
	// tableMem is the cost of the clients' and partitions' rows, at most
	// maxMemory(); otherClient and otherPart take the counts of those
	// past it.
	tableMem    int64
	otherClient *clientAcc
	otherPart   *partAcc

	file    string // the capture being read (SetFile)
	fileIdx int    // its position among the files read, from 0
}

type apiVer struct{ key, ver int16 }

type apiAcc struct {
	requests, responses, unanswered, noResponse int64
	reqBytes, respBytes                         int64
	lat                                         Latency
	errors                                      map[int16]int64
}

// clientKey is a client ID as the reports group requests by it: the
// request header's ClientId, null, or not captured (the header was cut
// before it ended: dissect.Exchange.ClientIDNotCaptured), one group of
// its own, never "".
type clientKey struct {
	id          string
	null        bool
	notCaptured bool
}

func clientKeyOf(x *dissect.Exchange) clientKey {
	if x.ClientIDNotCaptured {
		return clientKey{notCaptured: true}
	}
	return clientKey{x.ClientID, x.ClientIDNull, false}
}

// ptr is the client ID as the reports write it: nil when null or not
// captured.
func (k clientKey) ptr() *string {
	if k.null || k.notCaptured {
		return nil
	}
	id := k.id
	return &id
}

// compareClientCaptured orders client IDs as compareClient, those not
// captured (an, bn) after every other.
func compareClientCaptured(a *string, an bool, b *string, bn bool) int {
	if an != bn {
		if bn {
			return -1
		}
		return 1
	}
	return compareClient(a, b)
}

type clientAcc struct {
	software map[string]struct{}
	addrs    map[netip.Addr]struct{}
	addrsCap bool  // an address was not kept (Options.MaxMemory)
	capped   bool  // an API version, error or software was not kept (tableMem)
	conns    int64 // connections it sent requests on
	requests int64
	apis     map[int16]map[int16]int64 // key -> version -> requests
	errors   map[int16]int64
}

type partKey struct {
	topic string
	id    [16]byte
	hasID bool // the wire carried a topic ID (possibly all zeros)
	part  int32
}

type partAcc struct {
	produce, fetch FlowStats
	codecs         map[string]struct{}
}

type connAcc struct {
	c              *reassembly.Conn // nil once the connection ended
	index          int              // c.Index
	file           string
	fileIdx        int
	client, broker netip.AddrPort
	roles          bool // client and broker are known from an exchange
	first, last    time.Time
	s              ConnStats
	clients        []*clientAcc // the clients that sent requests on it, usually one; clientSet past 8
	clientSet      map[*clientAcc]struct{}
	cost           int64
}

// NewCollector returns an empty Collector.
func NewCollector(opts Options) *Collector {
	if opts.Names == nil {
		opts.Names = facts.NewNames()
	}
	return &Collector{
		opts:    opts,
		apis:    make(map[apiVer]*apiAcc),
		series:  make(map[int16]*Series),
		clients: make(map[clientKey]*clientAcc),
		parts:   make(map[partKey]*partAcc),
		conns:   make(map[*reassembly.Conn]*connAcc),
	}
}

func (c *Collector) maxMemory() int64 {
	if c.opts.MaxMemory > 0 {
		return c.opts.MaxMemory
	}
	return DefaultMaxMemory
}

var _ dissect.Sink = (*Collector)(nil)

// SetFile names the capture file whose exchanges and events follow, for
// the connections and slowest exchanges of the report (frame numbers and
// connection indexes restart with each file). Calls after the first mark
// the start of a new file.
func (c *Collector) SetFile(name string) {
	if c.file != "" || c.anyConn {
		c.fileIdx++
	}
	c.file = name
}

func (c *Collector) seen(t time.Time) {
	if t.IsZero() {
		return
	}
	if c.origin.IsZero() {
		c.origin = t
	}
	if c.first.IsZero() || t.Before(c.first) {
		c.first = t
	}
	if t.After(c.last) {
		c.last = t
	}
}

func (c *Collector) conn(rc *reassembly.Conn) *connAcc {
	if rc == nil {
		return nil
	}
	a := c.conns[rc]
	if a == nil {
		a = &connAcc{c: rc, index: rc.Index, client: rc.A, broker: rc.B, file: c.file, fileIdx: c.fileIdx, cost: costConnRow}
		c.conns[rc] = a
		c.anyConn = true
	}
	return a
}

// end moves the row of a connection that ended from the open ones to
// those kept, folding the least telling rows while they cost more than
// the budget.
func (c *Collector) end(a *connAcc) {
	delete(c.conns, a.c)
	a.s.Retransmissions = a.c.Stats.Retransmissions
	a.s.Conflicts = a.c.Stats.Conflicts
	a.s.OutOfOrder = a.c.Stats.OutOfOrder
	a.c, a.clients, a.clientSet = nil, nil, nil
	if c.bestFolded != nil && rankAcc(a, c.bestFolded) > 0 {
		// Less telling than a row already folded: the rows kept stay the
		// top of all those that ended.
		c.fold(a)
		return
	}
	heap.Push(&c.ended, a)
	c.mem += a.cost
	for c.mem+c.addrMem > c.maxMemory() && c.ended.Len() > 0 {
		f := heap.Pop(&c.ended).(*connAcc)
		c.mem -= f.cost
		c.fold(f)
	}
}

// fold adds the row of a connection that ended to the folded totals.
func (c *Collector) fold(a *connAcc) {
	c.folded.add(a)
	if c.bestFolded == nil || rankAcc(a, c.bestFolded) < 0 {
		c.bestFolded = a
	}
}

func (a *connAcc) seen(t time.Time) {
	if t.IsZero() {
		return
	}
	if a.first.IsZero() || t.Before(a.first) {
		a.first = t
	}
	if t.After(a.last) {
		a.last = t
	}
}

// Event records a connection-level event.
func (c *Collector) Event(e *dissect.Event) {
	if e == nil {
		return
	}
	if e.Kind == dissect.EventSkipped {
		c.skipped++
		if e.TLS != nil {
			c.countTLS(e.TLS)
		}
		return
	}
	if e.Kind == dissect.EventTLS {
		c.countTLS(e.TLS)
	}
	c.seen(e.Time)
	a := c.conn(e.Conn)
	if a == nil {
		return
	}
	a.seen(e.Time)
	switch e.Kind {
	case dissect.EventGap:
		a.s.Gaps++
		a.s.GapBytes += max(e.Bytes, 0)
	case dissect.EventResync:
		a.s.Resyncs++
	case dissect.EventTLS:
		a.s.TLS = true
		if st := e.TLS; st != nil {
			a.s.TLSDecrypted, a.s.TLSReason = st.Decrypted, st.Reason
			a.s.TLSVersion, a.s.TLSSuite, a.s.TLSSNI, a.s.TLSALPN = st.Version, st.Suite, st.SNI, st.ALPN
			a.cost += int64(len(st.Reason) + len(st.Version) + len(st.Suite) + len(st.SNI) + len(st.ALPN))
		}
	case dissect.EventClose:
		a.s.Closed = true
		c.end(a)
	case dissect.EventBadFrame:
		a.s.BadFrames++
	case dissect.EventTruncated:
		a.s.Truncated++
	}
}

// countTLS counts a TLS connection's status (Report.TLS): decrypted, or
// not by its reason (one of dissect's few: no budget needed).
func (c *Collector) countTLS(st *dissect.TLSStatus) {
	if c.tls == nil {
		c.tls = &TLSCounts{Reasons: []TLSReason{}}
	}
	t := c.tls
	t.Connections++
	if st != nil && st.Decrypted {
		t.Decrypted++
		return
	}
	t.NotDecrypted++
	reason := ""
	if st != nil {
		reason = st.Reason
	}
	i, found := slices.BinarySearchFunc(t.Reasons, reason, func(r TLSReason, s string) int { return strings.Compare(r.Reason, s) })
	if !found {
		t.Reasons = slices.Insert(t.Reasons, i, TLSReason{Reason: reason})
	}
	t.Reasons[i].Count++
}

// Exchange records one exchange.
func (c *Collector) Exchange(x *dissect.Exchange) {
	if x == nil {
		return
	}
	c.exchanges++
	a := c.conn(x.Conn)
	if a != nil && x.Client.IsValid() && x.Broker.IsValid() {
		a.client, a.broker, a.roles = x.Client, x.Broker, true
	}
	for _, f := range []*dissect.Frame{x.Request, x.Response} {
		if f == nil {
			continue
		}
		c.seen(f.Time)
		c.seen(f.End)
		if f.Cut() {
			c.cutFrames++
			c.notCaptured += int64(f.Size() - f.Captured())
		}
		if a != nil {
			a.seen(f.Time)
			a.seen(f.End)
			if f.Failed() {
				a.s.DecodeFailures++
			}
		}
	}
	if a != nil {
		if x.Request != nil {
			a.s.RequestFrames++
			a.s.RequestBytes += int64(x.Request.Size())
		}
		if x.Response != nil {
			a.s.ResponseFrames++
			a.s.ResponseBytes += int64(x.Response.Size())
		}
	}
	switch x.Kind {
	case dissect.KindOrphan:
		c.orphans++
		if a != nil {
			a.s.Orphans++
		}
		return
	case dissect.KindSASL:
		c.sasl++
		return
	case dissect.KindUnanswered:
		if a != nil && !x.InFlight { // in flight when -c stopped the read: not unanswered
			a.s.Unanswered++
		}
	}
	if x.Request == nil {
		return
	}
	c.request(x, a)
}

// request accounts an exchange that has its request.
func (c *Collector) request(x *dissect.Exchange, a *connAcc) {
	k := apiVer{x.APIKey, x.APIVersion}
	api := c.apis[k]
	if api == nil {
		api = &apiAcc{errors: make(map[int16]int64)}
		c.apis[k] = api
	}
	api.requests++
	api.reqBytes += int64(x.Request.Size())
	switch x.Kind {
	case dissect.KindUnanswered:
		if !x.InFlight {
			api.unanswered++
		}
	case dissect.KindNoResponse:
		api.noResponse++
	}

	cl := c.client(x)
	if a != nil && a.addClient(cl) {
		cl.conns++
	}
	cl.requests++
	vs := cl.apis[x.APIKey]
	if vs == nil && c.take(costClientAPI, cl) {
		vs = make(map[int16]int64)
		cl.apis[x.APIKey] = vs
	}
	if vs != nil {
		if _, ok := vs[x.APIVersion]; ok || c.take(costAPIVer, cl) {
			vs[x.APIVersion]++
		}
	}

	fx := x.Facts()
	c.opts.Names.Resolve(fx)
	if sw := fx.Software; sw.Name != "" {
		k := sw.Name + "/" + sw.Version
		if _, ok := cl.software[k]; ok || c.take(costCode+int64(len(k)), cl) {
			cl.software[k] = struct{}{}
		}
	}
	if x.APIKey == protocol.KeyProduce {
		c.records(fx, func(a *partAcc) *FlowStats { return &a.produce })
	}

	if x.Response == nil {
		return
	}
	api.responses++
	api.respBytes += int64(x.Response.Size())
	if d := x.Latency(); d >= 0 {
		api.lat.Add(d)
		s := c.series[x.APIKey]
		if s == nil {
			s = &Series{Origin: c.origin}
			c.series[x.APIKey] = s
		}
		s.Add(x.Request.Time, d)
		c.top(x, d)
	}
	for i := range fx.Errors {
		code := fx.Errors[i].Code
		api.errors[code]++
		if _, ok := cl.errors[code]; ok || c.take(costCode, cl) {
			cl.errors[code]++
		}
		c.errorPlace(x.APIKey, fx, &fx.Errors[i])
	}
	if x.APIKey == protocol.KeyFetch {
		c.records(fx, func(a *partAcc) *FlowStats { return &a.fetch })
	}
}

// errPlace is where an error was answered: its code, API, topic (its
// label, "" for none) and partition (-1 for none).
type errPlace struct {
	code, api int16
	topic     string
	part      int32
}

// costErrPlace is what an errPlace costs beside its topic name: the map
// entry and its count.
const costErrPlace = 64

// errorPlace counts e, an error of fx's response to API key.
func (c *Collector) errorPlace(key int16, fx *facts.Exchange, e *facts.Error) {
	k := errPlace{code: e.Code, api: key, part: -1}
	if e.Topic >= 0 && e.Topic < len(fx.Topics) {
		k.topic, k.part = fx.Topics[e.Topic].Label(), e.Partition
	}
	if n, ok := c.errPlaces[k]; ok {
		c.errPlaces[k] = n + 1
		return
	}
	cost := costErrPlace + int64(len(k.topic))
	if c.errPlaceMem+cost > c.maxMemory()/8 {
		c.errFolded++
		return
	}
	if c.errPlaces == nil {
		c.errPlaces = make(map[errPlace]int64)
	}
	c.errPlaceMem += cost
	c.errPlaces[k] = 1
}

// errorPlaces returns the places counted, most frequent first.
func (c *Collector) errorPlaces() []ErrorPlace {
	out := make([]ErrorPlace, 0, len(c.errPlaces))
	for k, n := range c.errPlaces {
		ep := ErrorPlace{Name: protocol.KafkaErrorName(k.code), Code: k.code, API: protocol.APIName(k.api), Count: n}
		if k.topic != "" {
			ep.Topic = &k.topic
			if k.part >= 0 {
				ep.Partition = &k.part
			}
		}
		out = append(out, ep)
	}
	slices.SortFunc(out, func(a, b ErrorPlace) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name), cmp.Compare(a.API, b.API),
			cmp.Compare(deref(a.Topic), deref(b.Topic)), cmp.Compare(derefInt(a.Partition), derefInt(b.Partition)))
	})
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(p *int32) int32 {
	if p == nil {
		return -1
	}
	return *p
}

func newClientAcc() *clientAcc {
	return &clientAcc{
		software: make(map[string]struct{}),
		addrs:    make(map[netip.Addr]struct{}),
		apis:     make(map[int16]map[int16]int64),
		errors:   make(map[int16]int64),
	}
}

// take charges cost to the clients' and partitions' rows, and reports
// whether it fit; when it did not, cl (if any) is marked capped.
func (c *Collector) take(cost int64, cl *clientAcc) bool {
	if c.tableMem+cost > c.maxMemory() {
		if cl != nil {
			cl.capped = true
		}
		return false
	}
	c.tableMem += cost
	return true
}

func (c *Collector) client(x *dissect.Exchange) *clientAcc {
	k := clientKeyOf(x)
	cl := c.clients[k]
	if cl == nil {
		if !c.take(costClient+int64(len(k.id)), nil) {
			// Past the budget: the client's counts go to the folded row.
			if c.otherClient == nil {
				c.otherClient = newClientAcc()
			}
			return c.otherClient
		}
		cl = newClientAcc()
		c.clients[k] = cl
	}
	if ad := x.Client.Addr(); x.Client.IsValid() && !cl.addrsCap {
		if _, ok := cl.addrs[ad]; !ok {
			if c.addrMem+costAddr > c.maxMemory()/4 {
				cl.addrsCap = true
			} else {
				cl.addrs[ad] = struct{}{}
				c.addrMem += costAddr
			}
		}
	}
	return cl
}

func (c *Collector) part(topic string, id [16]byte, hasID bool, p int32) *partAcc {
	k := partKey{topic, id, hasID, p}
	a := c.parts[k]
	if a == nil {
		if !c.take(costPart+int64(len(topic)), nil) {
			if c.otherPart == nil {
				c.otherPart = &partAcc{codecs: make(map[string]struct{})}
			}
			return c.otherPart
		}
		a = &partAcc{codecs: make(map[string]struct{})}
		c.parts[k] = a
	}
	return a
}

// addClient records that cl sent requests on the connection, and reports
// whether it is the first time: a slice for the usual one or few, a set
// past 8 (a connection may carry many client IDs).
func (a *connAcc) addClient(cl *clientAcc) bool {
	if a.clientSet != nil {
		if _, ok := a.clientSet[cl]; ok {
			return false
		}
		a.clientSet[cl] = struct{}{}
		return true
	}
	if slices.Contains(a.clients, cl) {
		return false
	}
	if len(a.clients) < 8 {
		a.clients = append(a.clients, cl)
		return true
	}
	a.clientSet = make(map[*clientAcc]struct{}, 16)
	for _, x := range a.clients {
		a.clientSet[x] = struct{}{}
	}
	a.clients = nil
	a.clientSet[cl] = struct{}{}
	return true
}

// records counts the record batches of each partition of fx into the
// FlowStats flow picks, and their codecs.
func (c *Collector) records(fx *facts.Exchange, flow func(*partAcc) *FlowStats) {
	for i := range fx.Topics {
		t := &fx.Topics[i]
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if p.Records == nil {
				continue
			}
			name, id, hasID := t.Name, t.ID, t.HasID
			if t.ZeroID() {
				name, hasID = t.Label(), false // Kafka's "no ID" is no topic's
			}
			a := c.part(name, id, hasID, p.Index)
			flow(a).add(p.Records)
			for _, cd := range p.Records.Codecs.Names() {
				if _, ok := a.codecs[cd]; ok || c.take(costCodec, nil) {
					a.codecs[cd] = struct{}{}
				}
			}
		}
	}
}

// top keeps the opts.Top slowest exchanges.
func (c *Collector) top(x *dissect.Exchange, d time.Duration) {
	if c.opts.Top <= 0 {
		return
	}
	var wait time.Duration
	if fx := x.Facts(); x.APIKey == protocol.KeyFetch && fx.MaxWaitMs > 0 {
		wait = min(d, time.Duration(fx.MaxWaitMs)*time.Millisecond)
	}
	s := SlowExchange{
		Latency:             Millis(d),
		WaitMs:              Millis(wait),
		Key:                 x.APIKey,
		Name:                protocol.APIName(x.APIKey),
		Version:             x.APIVersion,
		CorrelationID:       x.CorrelationID,
		ClientID:            clientKeyOf(x).ptr(),
		ClientIDNotCaptured: x.ClientIDNotCaptured,
		Client:              addrString(x.Client),
		Broker:              addrString(x.Broker),
		RequestFrame:        x.Request.FirstPacket,
		ResponseFrame:       x.Response.FirstPacket,
		Time:                timeString(x.Request.Time),
		File:                c.file,
		fileIdx:             c.fileIdx,
	}
	if x.Conn != nil {
		s.Conn = x.Conn.Index
	}
	i, _ := slices.BinarySearchFunc(c.slow, s, compareSlow)
	if i >= c.opts.Top {
		return
	}
	c.slow = slices.Insert(c.slow, i, s)
	if len(c.slow) > c.opts.Top {
		c.slow = c.slow[:c.opts.Top]
	}
}

// compareSlow orders by the latency beyond the wait asked for, longest
// first, then slowest first, then by request frame.
func compareSlow(a, b SlowExchange) int {
	if c := cmp.Compare(b.Latency-b.WaitMs, a.Latency-a.WaitMs); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Latency, a.Latency); c != 0 {
		return c
	}
	if c := cmp.Compare(a.fileIdx, b.fileIdx); c != 0 {
		return c
	}
	if c := cmp.Compare(a.RequestFrame, b.RequestFrame); c != 0 {
		return c
	}
	return cmp.Compare(a.Conn, b.Conn)
}

func addrString(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// tlsReport is a copy of the TLS counts, nil without TLS.
func (c *Collector) tlsReport() *TLSCounts {
	if c.tls == nil {
		return nil
	}
	t := *c.tls
	t.Reasons = slices.Clone(t.Reasons)
	return &t
}

// Report returns the statistics so far. It may be called more than once
// (kwire live prints one at the end); the Collector keeps counting.
func (c *Collector) Report() *Report {
	r := &Report{
		First:            timeString(c.first),
		Last:             timeString(c.last),
		Exchanges:        c.exchanges,
		Orphans:          c.orphans,
		CutFrames:        c.cutFrames,
		NotCapturedBytes: c.notCaptured,
		SASLTokens:       c.sasl,
		SkippedConn:      c.skipped,
		TLS:              c.tlsReport(),
		APIs:             []APIStats{},
		Clients:          []ClientStats{},
		Partitions:       []PartitionStats{},
		Connections:      []ConnStats{},
		Latency:          []LatencyOverAPI{},
		Slowest:          slices.Clone(c.slow),
	}
	if r.Slowest == nil {
		r.Slowest = []SlowExchange{}
	}
	for k, a := range c.apis {
		r.APIs = append(r.APIs, APIStats{
			Key: k.key, Name: protocol.APIName(k.key), Version: k.ver,
			Requests: a.requests, Responses: a.responses,
			Unanswered: a.unanswered, NoResponse: a.noResponse,
			RequestBytes: a.reqBytes, ResponseBytes: a.respBytes,
			Latency: summary(&a.lat),
			Errors:  errorCounts(a.errors),
		})
	}
	slices.SortFunc(r.APIs, func(a, b APIStats) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Version, b.Version))
	})
	for k, a := range c.clients {
		r.Clients = append(r.Clients, c.clientStats(k, a))
	}
	slices.SortFunc(r.Clients, func(a, b ClientStats) int {
		return compareClientCaptured(a.ClientID, a.ClientIDNotCaptured, b.ClientID, b.ClientIDNotCaptured)
	})
	r.Partitions = c.partitions()
	if c.otherClient != nil {
		f := c.clientStats(clientKey{}, c.otherClient)
		r.FoldedClients = &f
	}
	if a := c.otherPart; a != nil {
		r.FoldedPartitions = &PartitionStats{Partition: -1, Produce: a.produce, Fetch: a.fetch, Codecs: sortedKeys(a.codecs)}
	}
	r.ErrorPlaces, r.ErrorPlacesFolded = c.errorPlaces(), c.errFolded
	for _, a := range c.conns {
		r.Connections = append(r.Connections, a.stats())
	}
	for _, a := range c.ended {
		r.Connections = append(r.Connections, a.stats())
	}
	slices.SortFunc(r.Connections, compareConnOrder)
	if c.folded.Connections > 0 {
		f := c.folded
		f.First, f.Last = timeString(c.folded.first), timeString(c.folded.last)
		f.MaxMemory = c.maxMemory()
		r.FoldedConnections = &f
	}
	r.Latency = c.latencyOverAPI()
	return r
}

// stats is a's row.
func (a *connAcc) stats() ConnStats {
	s := a.s
	s.Index = a.index
	s.File, s.fileIdx = a.file, a.fileIdx
	s.Client, s.Broker = addrString(a.client), addrString(a.broker)
	s.First, s.Last = timeString(a.first), timeString(a.last)
	if !a.first.IsZero() {
		s.Duration = Millis(a.last.Sub(a.first))
	}
	if a.c != nil {
		s.Retransmissions = a.c.Stats.Retransmissions
		s.Conflicts = a.c.Stats.Conflicts
		s.OutOfOrder = a.c.Stats.OutOfOrder
	}
	return s
}

// compareConnOrder is the order of Report.Connections: by file, Index,
// then the first time and endpoints.
func compareConnOrder(a, b ConnStats) int {
	return cmp.Or(cmp.Compare(a.fileIdx, b.fileIdx), cmp.Compare(a.Index, b.Index), cmp.Compare(a.First, b.First),
		cmp.Compare(a.Client, b.Client), cmp.Compare(a.Broker, b.Broker))
}

// RankConns orders connections most telling first: the most problems
// (ConnStats.Problems), then the most frames, then the longest. The
// Collector keeps the rows it ranks first (Options.MaxMemory) and
// kwire stats shows them in its CONNECTIONS table; ties go by
// Report.Connections's order.
func RankConns(a, b ConnStats) int {
	return cmp.Or(cmp.Compare(b.Problems(), a.Problems()),
		cmp.Compare(b.RequestFrames+b.ResponseFrames, a.RequestFrames+a.ResponseFrames),
		cmp.Compare(b.Duration, a.Duration))
}

// Problems counts what went wrong on the connection: gaps,
// retransmissions, orphans, unanswered requests, decode failures,
// resyncs, bad and truncated frames.
func (s ConnStats) Problems() int64 {
	return s.Gaps + s.Orphans + s.Unanswered + s.DecodeFailures + s.Resyncs + s.BadFrames + s.Truncated + int64(s.Retransmissions)
}

// endedHeap holds the rows of connections that ended, the least telling
// (RankConns last, then the latest in Report.Connections's order) at
// the top, the next to fold.
type endedHeap []*connAcc

func (h endedHeap) Len() int           { return len(h) }
func (h endedHeap) Less(i, j int) bool { return rankAcc(h[i], h[j]) > 0 }

// rankAcc is RankConns, then Report.Connections's order, of two rows
// that ended, without formatting them (but when file and Index tie).
func rankAcc(a, b *connAcc) int {
	if c := cmp.Or(cmp.Compare(b.s.Problems(), a.s.Problems()),
		cmp.Compare(b.s.RequestFrames+b.s.ResponseFrames, a.s.RequestFrames+a.s.ResponseFrames),
		cmp.Compare(b.duration(), a.duration()),
		cmp.Compare(a.fileIdx, b.fileIdx), cmp.Compare(a.index, b.index)); c != 0 {
		return c
	}
	return compareConnOrder(a.stats(), b.stats())
}

// duration is ConnStats.Duration.
func (a *connAcc) duration() time.Duration {
	if a.first.IsZero() {
		return 0
	}
	return a.last.Sub(a.first)
}
func (h endedHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endedHeap) Push(x any)   { *h = append(*h, x.(*connAcc)) }
func (h *endedHeap) Pop() any {
	old := *h
	a := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return a
}

func summary(l *Latency) LatencySummary {
	return LatencySummary{
		Count: l.Count(),
		Min:   Millis(l.Min()),
		P50:   Millis(l.Percentile(50)),
		P90:   Millis(l.Percentile(90)),
		P99:   Millis(l.Percentile(99)),
		Max:   Millis(l.Max()),
		Mean:  Millis(l.Mean()),
		Exact: l.Exact(),
	}
}

func errorCounts(m map[int16]int64) []ErrorCount {
	out := make([]ErrorCount, 0, len(m))
	for code, n := range m {
		out = append(out, ErrorCount{Name: protocol.KafkaErrorName(code), Code: code, Count: n})
	}
	slices.SortFunc(out, func(a, b ErrorCount) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Code, b.Code))
	})
	return out
}

func (c *Collector) clientStats(k clientKey, a *clientAcc) ClientStats {
	s := ClientStats{
		ClientID:            k.ptr(),
		ClientIDNotCaptured: k.notCaptured,
		Software:            sortedKeys(a.software),
		Addresses:           []string{},
		Connections:         int(a.conns),
		AddressesCapped:     a.addrsCap,
		DetailCapped:        a.capped,
		Requests:            a.requests,
		Errors:              errorCounts(a.errors),
	}
	for ad := range a.addrs {
		s.Addresses = append(s.Addresses, ad.String())
	}
	slices.Sort(s.Addresses)
	s.APIs = apiUses(a.apis)
	return s
}

// apiUses turns requests counted by API key and version into APIUse
// entries, sorted by key, versions ascending; [] (not nil) when empty.
func apiUses(apis map[int16]map[int16]int64) []APIUse {
	us := []APIUse{}
	for key, vs := range apis {
		u := APIUse{Key: key, Name: protocol.APIName(key), Versions: []int16{}}
		for v, n := range vs {
			u.Versions = append(u.Versions, v)
			u.Requests += n
		}
		slices.Sort(u.Versions)
		us = append(us, u)
	}
	slices.SortFunc(us, func(a, b APIUse) int { return cmp.Compare(a.Key, b.Key) })
	return us
}

// partitions resolves topic IDs to names where a Metadata response mapped
// them, merging an ID-keyed partition into its named twin, and sorts.
func (c *Collector) partitions() []PartitionStats {
	type outKey struct {
		topic string
		id    [16]byte
		hasID bool
		part  int32
	}
	// Topic name -> ID, for entries keyed by name only.
	ids := make(map[string][16]byte, c.opts.Names.Len())
	c.opts.Names.Range(func(id facts.TopicID, name string) {
		if old, ok := ids[name]; !ok || compareID(id, old) < 0 {
			ids[name] = id // deterministic when a name had several IDs (recreated topic)
		}
	})
	merged := make(map[outKey]*PartitionStats)
	codecs := make(map[outKey]map[string]struct{})
	for k, a := range c.parts {
		ok := outKey(k)
		if ok.topic == "" && ok.hasID {
			ok.topic, _ = c.opts.Names.Name(ok.id)
		}
		if !ok.hasID && ok.topic != "" {
			ok.id, ok.hasID = ids[ok.topic]
		}
		p := merged[ok]
		if p == nil {
			p = &PartitionStats{Topic: ok.topic, Partition: ok.part}
			if ok.hasID {
				p.TopicID = TopicIDString(ok.id)
			}
			merged[ok] = p
			codecs[ok] = make(map[string]struct{})
		}
		addFlow(&p.Produce, a.produce)
		addFlow(&p.Fetch, a.fetch)
		for cd := range a.codecs {
			codecs[ok][cd] = struct{}{}
		}
	}
	out := make([]PartitionStats, 0, len(merged))
	for k, p := range merged {
		p.Codecs = sortedKeys(codecs[k])
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b PartitionStats) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.TopicID, b.TopicID),
			cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

func compareID(a, b [16]byte) int {
	for i := range a {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

func addFlow(dst *FlowStats, src FlowStats) {
	dst.Batches += src.Batches
	dst.Records += src.Records
	dst.WireBytes += src.WireBytes
	dst.UncompressedBytes += src.UncompressedBytes
	dst.UnknownSize += src.UnknownSize
}

func (c *Collector) latencyOverAPI() []LatencyOverAPI {
	byKey := make(map[int16]*Latency)
	keys := make([]int16, 0)
	for k, a := range c.apis {
		if a.lat.Count() == 0 {
			continue
		}
		l := byKey[k.key]
		if l == nil {
			l = &Latency{}
			byKey[k.key] = l
			keys = append(keys, k.key)
		}
		l.merge(&a.lat)
	}
	slices.Sort(keys)
	out := make([]LatencyOverAPI, 0, len(keys))
	for _, k := range keys {
		l := byKey[k]
		o := LatencyOverAPI{Key: k, Name: protocol.APIName(k), Count: l.Count(),
			Distribution: []DistBin{}, OverTime: []TimeBin{}}
		for _, b := range l.Distribution() {
			o.Distribution = append(o.Distribution, DistBin{Millis(b.Lo), Millis(b.Hi), b.Count})
		}
		if s := c.series[k]; s != nil {
			o.Origin = timeString(s.Origin)
			o.BinWidth = Millis(s.Width)
			for _, b := range s.Bins {
				tb := TimeBin{Count: b.Count, Max: Millis(b.Max)}
				if b.Count > 0 {
					tb.Mean = Millis(int64(b.Sum) / b.Count)
				}
				o.OverTime = append(o.OverTime, tb)
			}
		}
		out = append(out, o)
	}
	return out
}

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
