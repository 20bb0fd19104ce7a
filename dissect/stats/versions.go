package stats

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
)

// This file answers "which versions": what each broker advertised in its
// ApiVersions responses (KIP-35; features from v3+ tagged fields, KIP-584),
// which version each client used per API, and the anomalies that explain
// upgrade failures. The report's JSON form is `kwire versions --json`.
//
// To add a new flag: add its FlagKind constant (the JSON spelling), raise
// it in VersionCollector.Report (or as the exchange arrives), and add a
// case to versions_test.go that builds the exchanges producing it.

// errUnsupportedVersion is Kafka's UNSUPPORTED_VERSION error code.
const errUnsupportedVersion = 35

// FlagKind names a version anomaly.
type FlagKind string

// Version anomalies, in report order.
const (
	// FlagOutOfRange: a client used a version outside the range the broker
	// advertised (or an API the broker did not list).
	FlagOutOfRange FlagKind = "out-of-range"
	// FlagDowngrade: an ApiVersions request was answered with
	// UNSUPPORTED_VERSION and the client retried with a lower version
	// (KIP-511).
	FlagDowngrade FlagKind = "apiversions-downgrade"
	// FlagClosedUnsupported: the broker closed the connection right after a
	// request, without answering, at a version it does not support: one
	// outside the range its ApiVersions response advertised for the API
	// (or of an API it did not list), or one that no Kafka release
	// defines (whether or not an advertisement was captured).
	FlagClosedUnsupported FlagKind = "closed-after-unsupported-version"
	// FlagMixed: brokers of one cluster advertised different ranges for
	// the same API (a mixed, mid-upgrade cluster); brokers whose Metadata
	// or DescribeCluster responses name different ClusterIds are
	// different clusters (facts.Exchange.ClusterID).
	FlagMixed FlagKind = "mixed-cluster"
	// FlagRejected: a version the broker advertises but rejects: answered
	// with a top-level UNSUPPORTED_VERSION while inside the advertised
	// range, or Produce v0-2 advertised by a Kafka 4.x broker only so that
	// old clients get an error (KAFKA-18659). An in-range request left
	// unanswered by a close is not flagged: the capture does not say who
	// closed, and clients close during long-poll Fetches.
	FlagRejected FlagKind = "advertised-but-rejected"
	// FlagNoUsable: a broker advertised a range whose minimum is above its
	// maximum (e.g. OffsetForLeaderEpoch 3-2), so no version of the API
	// can be used with it.
	FlagNoUsable FlagKind = "no-usable-version"
)

var flagOrder = []FlagKind{FlagOutOfRange, FlagNoUsable, FlagDowngrade, FlagClosedUnsupported, FlagMixed, FlagRejected}

// Flag is one anomaly. Version is -1 and Client or Broker empty when the
// flag is not about one version, client or broker.
type Flag struct {
	Kind     FlagKind `json:"kind"`
	Key      int16    `json:"apiKey"`
	API      string   `json:"api"`
	Version  int16    `json:"apiVersion"`
	ClientID string   `json:"clientId,omitempty"`
	// ClientIDNotCaptured says the flag is about the requests whose
	// header was cut before its ClientId ended (MatrixRow's row of
	// them), not about every client; absent otherwise.
	ClientIDNotCaptured bool   `json:"clientIdNotCaptured,omitempty"`
	Broker              string `json:"broker,omitempty"`
	Frame               int64  `json:"frame,omitempty"` // packet of the first request concerned, for kwire read --frame
	Count               int64  `json:"count,omitempty"` // requests concerned, when more than one can be
	Detail              string `json:"detail"`
}

// VersionsReport is the whole `kwire versions` answer.
type VersionsReport struct {
	Brokers []BrokerVersions `json:"brokers"` // sorted by address
	Clients []ClientVersions `json:"clients"` // sorted by client ID, null last
	Matrix  []MatrixRow      `json:"matrix"`  // sorted by API key, client ID, broker
	Flags   []Flag           `json:"flags"`   // sorted by kind (FlagKind order), key, broker, client, version
	// NotCapturedAdvertisements counts the ApiVersions responses whose
	// ranges the capture does not hold (a gap, or its snap length, cut
	// the frame before them: dissect.Frame.Cut): not in Brokers, which
	// would otherwise list a broker that advertises nothing.
	NotCapturedAdvertisements int64 `json:"notCapturedAdvertisements"`
	// Folded counts what the collector's memory budget left out; absent
	// when it left nothing out (VersionCollector).
	Folded *VersionsFolded `json:"folded,omitempty"`
}

// VersionsFolded counts what a VersionsReport does not list because its
// memory budget (NewBoundedVersionCollector, --max-versions-memory) was
// spent: the requests and responses concerned are counted, not listed.
// Brokers, clients, matrix rows and flags that are listed are exact.
type VersionsFolded struct {
	MaxMemory int64 `json:"maxMemoryBytes"` // the budget, in bytes
	// Advertisements counts the ApiVersions responses whose content was
	// not kept: of brokers not listed, or differing from the ones a
	// listed broker's advertisements keep. BrokerResponses is how many of them
	// came from brokers not listed (responses, not distinct brokers:
	// telling those apart would take the memory saved).
	Advertisements  int64 `json:"advertisements"`
	BrokerResponses int64 `json:"brokerResponses"`
	// ClientRequests counts the requests of client IDs not listed in
	// Clients; MatrixRequests the requests of API × client × broker cells
	// not in Matrix (their versions were not checked against the
	// broker's range: no out-of-range flag is raised for them).
	ClientRequests int64 `json:"clientRequests"`
	MatrixRequests int64 `json:"matrixRequests"`
	// Anomalies counts the requests whose anomaly (an ApiVersions retry
	// after UNSUPPORTED_VERSION, a close after an unknown version, an
	// in-range UNSUPPORTED_VERSION) could not be recorded: no flag says
	// them.
	Anomalies int64 `json:"anomalies"`
}

// BrokerVersions is one broker endpoint and every distinct ApiVersions
// response it sent, in the order first seen. Effective is the index of the
// advertisement used for comparisons (the latest without an error), or -1.
type BrokerVersions struct {
	Broker         string          `json:"broker"`
	Advertisements []Advertisement `json:"advertisements"`
	Effective      int             `json:"effective"`
}

// Advertisement is one ApiVersions response's content (ApiVersionsResponse
// .json): the API ranges, and from v3 the tagged SupportedFeatures,
// FinalizedFeaturesEpoch and FinalizedFeatures (KIP-584).
type Advertisement struct {
	RequestVersion    int16              `json:"requestVersion"`
	Error             string             `json:"error"` // "NONE" or e.g. "UNSUPPORTED_VERSION" (KIP-511: a v0 body)
	Ranges            []Range            `json:"ranges"`
	SupportedFeatures []Feature          `json:"supportedFeatures"`
	FinalizedFeatures []FinalizedFeature `json:"finalizedFeatures"`
	FinalizedEpoch    int64              `json:"finalizedFeaturesEpoch"` // -1 when absent
	FirstPacket       int64              `json:"frame"`
	Conn              int                `json:"stream"`
	Count             int64              `json:"count"` // identical responses seen
}

// Range is one API's advertised version range.
type Range struct {
	Key  int16  `json:"apiKey"`
	Name string `json:"api"`
	Min  int16  `json:"minVersion"`
	Max  int16  `json:"maxVersion"`
}

// Feature is a feature the broker supports: ApiVersionsResponse
// SupportedFeatures' Name, MinVersion and MaxVersion (KIP-584).
type Feature struct {
	Name string `json:"name"`
	Min  int16  `json:"minVersion"`
	Max  int16  `json:"maxVersion"`
}

// FinalizedFeature is a feature finalized cluster-wide: ApiVersionsResponse
// FinalizedFeatures' Name, MinVersionLevel and MaxVersionLevel (KIP-584).
type FinalizedFeature struct {
	Name string `json:"name"`
	Min  int16  `json:"minVersionLevel"`
	Max  int16  `json:"maxVersionLevel"`
}

// ClientVersions is one client ID: its software (KIP-511) and the versions
// it used per API.
type ClientVersions struct {
	ClientID *string `json:"clientId" jsonschema:"nullable"` // the request header's ClientId; null when it was null or not captured
	// ClientIDNotCaptured is true for the requests whose header was cut
	// before its ClientId ended (a gap, the capture's snap length): one
	// row, after every other, clientId null.
	ClientIDNotCaptured bool     `json:"clientIdNotCaptured"`
	Software            []string `json:"software"`
	APIs                []APIUse `json:"apis"`
	// Capped says Software or APIs leave out some of what the client
	// sent: kept past the collector's memory budget, they were not.
	Capped bool `json:"capped,omitempty"`
}

// MatrixRow is one API × (client, broker) cell: the versions used and the
// broker's effective advertised range.
type MatrixRow struct {
	Key                 int16   `json:"apiKey"`
	API                 string  `json:"api"`
	ClientID            *string `json:"clientId" jsonschema:"nullable"` // null when the header's was null or not captured
	ClientIDNotCaptured bool    `json:"clientIdNotCaptured"`            // true when the request headers were cut before their ClientId ended
	Broker              string  `json:"broker"`
	Versions            []int16 `json:"versions"`
	Requests            int64   `json:"requests"`
	// Advertised is the broker's range for the API; nil when the broker's
	// ApiVersions response was not captured or did not list the API
	// (Listed says which).
	Advertised *Range `json:"advertised" jsonschema:"nullable"`
	Listed     bool   `json:"listed"`
	// Status is "ok", "outside" (some version outside the range),
	// "downgraded" (ApiVersions only: the versions outside the range were
	// answered UNSUPPORTED_VERSION and the client retried lower, the
	// normal KIP-511 negotiation; no out-of-range flag is raised for them),
	// or "unknown" (no advertisement captured for the broker, or, when
	// VersionsReport.Folded counts brokers' responses, none kept).
	Status string     `json:"status"`
	Flags  []FlagKind `json:"flags"`
}

// DefaultVersionsMemory is the default budget of a VersionCollector:
// 16 MiB, the advertisements of about 2,600 brokers listing 90 APIs each
// (about 6 KiB apiece: costAdvertisement, a costRange and a name per
// range, the signature), or about 20,000 client IDs each with one matrix
// row (costVClient + costAPIVersions + costUse, about 800 bytes with
// their strings): far more than a cluster has.
const DefaultVersionsMemory = 16 << 20

// Costs in bytes of what a VersionCollector keeps, counted against its
// budget beside the strings they hold (client IDs, names, signatures):
// each struct's size class with its map entry and the maps' share of
// buckets.
const (
	costBrokerAcc     = 192 // brokerAcc, its map entry (AddrPort key)
	costAdvertisement = 256 // Advertisement, its pointer and signature slots
	costRange         = 40  // a Range (its Name is APIName's, usually static)
	costFeature       = 40  // a Feature, beside its name
	costVClient       = 320 // vclientAcc with its two maps, its map entry
	costAPIVersions   = 112 // a client's per-API version map
	costVersionCount  = 24  // an entry of a version -> count map
	costUse           = 288 // useAcc with its two maps, its useKey entry
	costSeen          = 160 // a seenAcc or retryState with its map entry
	costSoftware      = 48  // a software string's set entry, beside it
)

// VersionCollector gathers what `kwire versions` reports. It implements
// dissect.Sink; calls must come from one goroutine.
//
// What it keeps is bounded in bytes by its budget (the costs above,
// counted as entries are added, never released): past it, a new broker's
// advertisement, a new client ID, matrix cell, software name, version or
// anomaly is not kept, and Report's Folded counts the requests and
// responses concerned. Entries already kept go on counting exactly.
type VersionCollector struct {
	maxMem, mem int64
	folded      VersionsFolded
	// notCapturedAds is VersionsReport.NotCapturedAdvertisements.
	notCapturedAds int64
	brokers        map[netip.AddrPort]*brokerAcc
	clients        map[clientKey]*vclientAcc
	uses           map[useKey]*useAcc
	retry          map[retryKey]retryState
	// Anomalies are aggregated per client, broker, API and version(s), so
	// memory grows with those, not with the number of requests.
	downgrades map[downgradeKey]*seenAcc
	closed     map[xKey]*seenAcc // unanswered requests on closed connections
	rejected   map[xKey]*seenAcc // requests answered with UNSUPPORTED_VERSION
}

type brokerAcc struct {
	ads    []*Advertisement
	sigs   []string
	latest int // index into ads of the latest error-free response, -1
	// cluster is the cluster ID the broker's latest Metadata or
	// DescribeCluster response stated; "" when none was captured.
	cluster string
}

type vclientAcc struct {
	software map[string]struct{}
	apis     map[int16]map[int16]int64
	capped   bool // a software name, API or version was not kept (the budget)
}

type useKey struct {
	client clientKey
	broker netip.AddrPort
	key    int16
}

type useAcc struct {
	versions   map[int16]int64
	firstFrame map[int16]int64
}

type retryKey struct {
	client clientKey
	broker netip.AddrPort
}

type retryState struct {
	ver       int16
	frame     int64 // packet of the request answered UNSUPPORTED_VERSION
	respFrame int64 // packet of that answer
	brokerMax int16 // the ApiVersions max the error response advertised, -1
}

type xKey struct {
	client clientKey
	broker netip.AddrPort
	key    int16
	ver    int16
}

type downgradeKey struct {
	client   clientKey
	broker   netip.AddrPort
	from, to int16
}

// seenAcc counts occurrences of one anomaly and remembers the first.
type seenAcc struct {
	count     int64
	frame     int64 // packet of the first request concerned
	errFrame  int64 // downgrades: the first request answered UNSUPPORTED_VERSION
	errResp   int64 // downgrades: that answer's packet
	brokerMax int16 // downgrades: the broker's ApiVersions maximum, -1
}

func (v *VersionCollector) seen(m map[xKey]*seenAcc, k xKey, frame int64) {
	a := m[k]
	if a == nil {
		if !v.take(costSeen + int64(len(k.client.id))) {
			v.folded.Anomalies++
			return
		}
		a = &seenAcc{frame: frame}
		m[k] = a
	}
	a.count++
}

// take charges n bytes to the budget and reports whether they fit; when
// they do not, nothing is charged.
func (v *VersionCollector) take(n int64) bool {
	if v.mem+n > v.maxMem {
		return false
	}
	v.mem += n
	return true
}

// NewVersionCollector returns an empty VersionCollector with the
// default budget (DefaultVersionsMemory).
func NewVersionCollector() *VersionCollector {
	return NewBoundedVersionCollector(DefaultVersionsMemory)
}

// NewBoundedVersionCollector returns an empty VersionCollector that keeps
// at most maxMemory bytes (the costs above; 0 or less:
// DefaultVersionsMemory).
func NewBoundedVersionCollector(maxMemory int64) *VersionCollector {
	if maxMemory <= 0 {
		maxMemory = DefaultVersionsMemory
	}
	return &VersionCollector{
		maxMem:  maxMemory,
		brokers: make(map[netip.AddrPort]*brokerAcc),
		clients: make(map[clientKey]*vclientAcc),
		uses:    make(map[useKey]*useAcc),
		retry:   make(map[retryKey]retryState),

		downgrades: make(map[downgradeKey]*seenAcc),
		closed:     make(map[xKey]*seenAcc),
		rejected:   make(map[xKey]*seenAcc),
	}
}

var _ dissect.Sink = (*VersionCollector)(nil)

// Event is part of dissect.Sink; connection events carry no version
// information.
func (v *VersionCollector) Event(*dissect.Event) {}

// Exchange records one exchange.
func (v *VersionCollector) Exchange(x *dissect.Exchange) {
	if x == nil || x.Request == nil || x.Kind == dissect.KindSASL || x.Kind == dissect.KindOrphan {
		return
	}
	ck := clientKeyOf(x)
	cl := v.client(ck, x.APIKey, x.APIVersion)
	if cl != nil {
		v.use(ck, x)
	} else {
		v.folded.MatrixRequests++ // a row whose client CLIENTS does not list would puzzle
	}

	fx := x.Facts()
	if fx.ClusterID != "" {
		if b := v.brokers[x.Broker]; b != nil && b.cluster != fx.ClusterID && v.take(int64(len(fx.ClusterID))) {
			b.cluster = fx.ClusterID
		}
	}
	if x.APIKey == protocol.KeyApiVersions {
		if sw := fx.Software; sw.Name != "" && cl != nil {
			s := sw.Name + "/" + sw.Version
			if _, ok := cl.software[s]; !ok && v.take(costSoftware+int64(len(s))) {
				cl.software[s] = struct{}{}
			} else if !ok {
				cl.capped = true
			}
		}
		v.apiVersions(x, ck, fx)
	}
	k := xKey{client: ck, broker: x.Broker, key: x.APIKey, ver: x.APIVersion}
	switch {
	case x.Kind == dissect.KindUnanswered && closedNote(x.Notes) != "":
		v.seen(v.closed, k, x.Request.FirstPacket)
	case x.Response != nil && x.APIKey != protocol.KeyApiVersions && topError(fx) == errUnsupportedVersion:
		v.seen(v.rejected, k, x.Request.FirstPacket)
	}
}

// client counts a request of client ck, API key and version ver, and
// returns the client's accumulator, nil when the client ID is not kept.
func (v *VersionCollector) client(ck clientKey, key, ver int16) *vclientAcc {
	cl := v.clients[ck]
	if cl == nil {
		if !v.take(costVClient + int64(len(ck.id))) {
			v.folded.ClientRequests++
			return nil
		}
		cl = &vclientAcc{software: make(map[string]struct{}), apis: make(map[int16]map[int16]int64)}
		v.clients[ck] = cl
	}
	vs := cl.apis[key]
	if vs == nil {
		if !v.take(costAPIVersions + costVersionCount) {
			cl.capped = true
			return cl
		}
		vs = make(map[int16]int64)
		cl.apis[key] = vs
	}
	if _, ok := vs[ver]; !ok && !v.take(costVersionCount) {
		cl.capped = true
		return cl
	}
	vs[ver]++
	return cl
}

// use counts x in its API × client × broker cell, when the cell is kept.
func (v *VersionCollector) use(ck clientKey, x *dissect.Exchange) {
	uk := useKey{ck, x.Broker, x.APIKey}
	u := v.uses[uk]
	if u == nil {
		if !v.take(costUse + int64(len(ck.id))) {
			v.folded.MatrixRequests++
			return
		}
		u = &useAcc{versions: make(map[int16]int64), firstFrame: make(map[int16]int64)}
		v.uses[uk] = u
	}
	if u.versions[x.APIVersion] == 0 {
		if !v.take(2 * costVersionCount) {
			// A version the row cannot list: the row is left as it was,
			// and the request counted as folded.
			v.folded.MatrixRequests++
			return
		}
		u.firstFrame[x.APIVersion] = x.Request.FirstPacket
	}
	u.versions[x.APIVersion]++
}

// closedNote returns the dissector's note saying the connection closed
// with no response, or "".
func closedNote(notes []string) string {
	for _, n := range notes {
		if strings.HasPrefix(n, "connection closed") {
			return n
		}
	}
	return ""
}

// topError returns the response's error code at its top level (one that
// belongs to no topic, partition or other entity), or 0.
func topError(fx *facts.Exchange) int16 {
	for i := range fx.Errors {
		if e := &fx.Errors[i]; e.Topic < 0 && e.Scope.Role == protocol.RoleNone {
			return e.Code
		}
	}
	return 0
}

// apiVersions records an ApiVersions exchange: the advertisement, and the
// KIP-511 retry after UNSUPPORTED_VERSION.
func (v *VersionCollector) apiVersions(x *dissect.Exchange, ck clientKey, fx *facts.Exchange) {
	rk := retryKey{ck, x.Broker}
	if st, ok := v.retry[rk]; ok && x.APIVersion < st.ver {
		dk := downgradeKey{ck, x.Broker, st.ver, x.APIVersion}
		a := v.downgrades[dk]
		switch {
		case a != nil:
			a.count++
		case v.take(costSeen + int64(len(ck.id))):
			a = &seenAcc{frame: x.Request.FirstPacket, errFrame: st.frame, errResp: st.respFrame, brokerMax: st.brokerMax, count: 1}
			v.downgrades[dk] = a
		default:
			v.folded.Anomalies++
		}
		delete(v.retry, rk) // its cost stays charged: the budget counts what was ever kept
	}
	if x.Response == nil {
		return
	}
	ad := parseAdvertisement(x, fx.APIVersions)
	if ad == nil {
		if x.Response.Cut() {
			v.notCapturedAds++
		}
		return
	}
	if ad.Error == protocol.KafkaErrorName(errUnsupportedVersion) {
		st := retryState{ver: x.APIVersion, frame: x.Request.FirstPacket, respFrame: x.Response.FirstPacket, brokerMax: -1}
		for _, r := range ad.Ranges {
			if r.Key == protocol.KeyApiVersions {
				st.brokerMax = r.Max
			}
		}
		if _, ok := v.retry[rk]; ok || v.take(costSeen+int64(len(ck.id))) {
			v.retry[rk] = st
		} else {
			v.folded.Anomalies++
		}
	}
	sig := ad.signature()
	b := v.brokers[x.Broker]
	i := -1
	switch {
	case b == nil && !v.take(costBrokerAcc+ad.cost(sig)):
		v.folded.Advertisements++
		v.folded.BrokerResponses++
		return
	case b == nil:
		b = &brokerAcc{latest: -1}
		v.brokers[x.Broker] = b
	default:
		i = slices.Index(b.sigs, sig)
	}
	switch {
	case i >= 0:
		b.ads[i].Count++
	case len(b.ads) == 0 || v.take(ad.cost(sig)):
		b.ads = append(b.ads, ad)
		b.sigs = append(b.sigs, sig)
		i = len(b.ads) - 1
	default:
		v.folded.Advertisements++
		return
	}
	if ad.Error == "NONE" {
		b.latest = i
	}
}

// parseAdvertisement reads an ApiVersions response from its facts, or,
// when the frame was not decoded, from the dissector's Advertised ranges.
func parseAdvertisement(x *dissect.Exchange, av *facts.APIVersions) *Advertisement {
	ad := &Advertisement{RequestVersion: x.APIVersion, FinalizedEpoch: -1, FirstPacket: x.Response.FirstPacket,
		Count: 1, Ranges: []Range{}, SupportedFeatures: []Feature{}, FinalizedFeatures: []FinalizedFeature{}}
	if x.Conn != nil {
		ad.Conn = x.Conn.Index
	}
	if av == nil {
		b := x.Response.Bytes
		switch {
		case x.Advertised != nil:
			ad.Error = "NONE"
		case len(b) >= 10: // header v0: length, correlation ID, then ErrorCode
			code := int16(binary.BigEndian.Uint16(b[8:]))
			if code == 0 && x.Response.Cut() {
				// Cut by a gap or the snap length after its ErrorCode:
				// the ranges it advertised were not captured. No
				// advertisement rather than one of none, which would
				// make every API "not listed".
				return nil
			}
			ad.Error = protocol.KafkaErrorName(code)
		default:
			return nil
		}
		for _, r := range x.Advertised {
			ad.Ranges = append(ad.Ranges, Range{r.Key, protocol.APIName(r.Key), r.Min, r.Max})
		}
		sortRanges(ad.Ranges)
		return ad
	}
	ad.Error = protocol.KafkaErrorName(av.Error)
	for _, r := range av.Ranges {
		ad.Ranges = append(ad.Ranges, Range{r.Key, protocol.APIName(r.Key), r.Min, r.Max})
	}
	sortRanges(ad.Ranges)
	for _, f := range av.SupportedFeatures {
		ad.SupportedFeatures = append(ad.SupportedFeatures, Feature{f.Name, f.Min, f.Max})
	}
	ad.FinalizedEpoch = av.FinalizedEpoch
	for _, f := range av.FinalizedFeatures {
		ad.FinalizedFeatures = append(ad.FinalizedFeatures, FinalizedFeature{f.Name, f.Min, f.Max})
	}
	sortFeatures(ad.SupportedFeatures)
	sortFinalized(ad.FinalizedFeatures)
	return ad
}

func sortRanges(rs []Range) {
	slices.SortStableFunc(rs, func(a, b Range) int { return cmp.Compare(a.Key, b.Key) })
}

func sortFeatures(fs []Feature) {
	slices.SortStableFunc(fs, func(a, b Feature) int { return cmp.Compare(a.Name, b.Name) })
}

func sortFinalized(fs []FinalizedFeature) {
	slices.SortStableFunc(fs, func(a, b FinalizedFeature) int { return cmp.Compare(a.Name, b.Name) })
}

// cost is what keeping a, with its signature sig, costs.
func (a *Advertisement) cost(sig string) int64 {
	n := costAdvertisement + int64(len(sig)) + costRange*int64(len(a.Ranges))
	for _, r := range a.Ranges {
		n += int64(len(r.Name))
	}
	for _, f := range a.SupportedFeatures {
		n += costFeature + int64(len(f.Name))
	}
	for _, f := range a.FinalizedFeatures {
		n += costFeature + int64(len(f.Name))
	}
	return n
}

// signature identifies an advertisement's content (not where it was seen).
func (a *Advertisement) signature() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %d|", a.RequestVersion, a.Error, a.FinalizedEpoch)
	for _, r := range a.Ranges {
		fmt.Fprintf(&b, "%d:%d-%d,", r.Key, r.Min, r.Max)
	}
	for _, f := range a.SupportedFeatures {
		fmt.Fprintf(&b, "s%q:%d-%d,", f.Name, f.Min, f.Max)
	}
	for _, f := range a.FinalizedFeatures {
		fmt.Fprintf(&b, "f%q:%d-%d,", f.Name, f.Min, f.Max)
	}
	return b.String()
}

// effective returns the broker's advertisement used for comparisons.
func (v *VersionCollector) effective(broker netip.AddrPort) *Advertisement {
	b := v.brokers[broker]
	if b == nil || b.latest < 0 {
		return nil
	}
	return b.ads[b.latest]
}

// rangeOf returns the advertised range for key: of a key listed twice,
// the one listed last (facts.RangeOf; a.Ranges is sorted stably by key, so
// listings of one key keep their wire order).
func (a *Advertisement) rangeOf(key int16) (Range, bool) {
	for i := len(a.Ranges) - 1; i >= 0; i-- {
		if r := a.Ranges[i]; r.Key == key {
			return r, true
		}
	}
	return Range{}, false
}

// Report returns the versions report so far.
func (v *VersionCollector) Report() *VersionsReport {
	r := &VersionsReport{Brokers: []BrokerVersions{}, Clients: []ClientVersions{}, Matrix: []MatrixRow{}, Flags: v.downgradeFlags(),
		NotCapturedAdvertisements: v.notCapturedAds}
	addrs := make([]netip.AddrPort, 0, len(v.brokers))
	for a := range v.brokers {
		addrs = append(addrs, a)
	}
	slices.SortFunc(addrs, func(a, b netip.AddrPort) int { return a.Compare(b) })
	for _, a := range addrs {
		b := v.brokers[a]
		bv := BrokerVersions{Broker: addrString(a), Effective: b.latest}
		for _, ad := range b.ads {
			bv.Advertisements = append(bv.Advertisements, *ad)
		}
		r.Brokers = append(r.Brokers, bv)
	}
	for k, c := range v.clients {
		cv := ClientVersions{ClientID: k.ptr(), ClientIDNotCaptured: k.notCaptured, Software: sortedKeys(c.software), APIs: apiUses(c.apis), Capped: c.capped}
		r.Clients = append(r.Clients, cv)
	}
	slices.SortFunc(r.Clients, func(a, b ClientVersions) int {
		return compareClientCaptured(a.ClientID, a.ClientIDNotCaptured, b.ClientID, b.ClientIDNotCaptured)
	})

	r.Flags = append(r.Flags, v.matrix(r)...)
	r.Flags = append(r.Flags, v.mixed(addrs)...)
	r.Flags = append(r.Flags, v.noUsableFlags(addrs)...)
	r.Flags = append(r.Flags, v.closedFlags()...)
	r.Flags = append(r.Flags, v.rejectedFlags(addrs)...)
	slices.SortStableFunc(r.Flags, compareFlags)
	v.markMatrix(r)
	if v.folded != (VersionsFolded{}) {
		f := v.folded
		f.MaxMemory = v.maxMem
		r.Folded = &f
	}
	return r
}

// compareClient orders client IDs by text, a null one last.
func compareClient(a, b *string) int {
	if (a == nil) != (b == nil) {
		if a == nil {
			return 1
		}
		return -1
	}
	if a == nil {
		return 0
	}
	return cmp.Compare(*a, *b)
}

func compareFlags(a, b Flag) int {
	return cmp.Or(
		cmp.Compare(slices.Index(flagOrder, a.Kind), slices.Index(flagOrder, b.Kind)),
		cmp.Compare(a.Key, b.Key), cmp.Compare(a.Broker, b.Broker), cmp.Compare(a.ClientID, b.ClientID),
		cmp.Compare(a.Version, b.Version), cmp.Compare(a.Frame, b.Frame), cmp.Compare(a.Detail, b.Detail),
		cmp.Compare(a.Count, b.Count))
}

// matrix fills r.Matrix and returns the out-of-range flags.
func (v *VersionCollector) matrix(r *VersionsReport) []Flag {
	var flags []Flag
	from := v.downgradedSet()
	for k, u := range v.uses {
		row := MatrixRow{Key: k.key, API: protocol.APIName(k.key), ClientID: k.client.ptr(), ClientIDNotCaptured: k.client.notCaptured,
			Broker: addrString(k.broker), Versions: []int16{}, Status: "unknown", Flags: []FlagKind{}}
		for ver, n := range u.versions {
			row.Versions = append(row.Versions, ver)
			row.Requests += n
		}
		slices.Sort(row.Versions)
		if ad := v.effective(k.broker); ad != nil {
			rg, ok := ad.rangeOf(k.key)
			row.Listed = ok
			if ok {
				row.Advertised = &rg
			}
			row.Status = "ok"
			for _, ver := range row.Versions {
				if ok && rg.Min <= ver && ver <= rg.Max {
					continue
				}
				if k.key == protocol.KeyApiVersions && downgradedFrom(from, k.client, k.broker, ver) {
					if row.Status == "ok" {
						row.Status = "downgraded"
					}
					continue
				}
				row.Status = "outside"
				detail := fmt.Sprintf("%s v%d used, the broker advertises %s", row.API, ver, rangeText(rg, ok))
				flags = append(flags, Flag{Kind: FlagOutOfRange, Key: k.key, API: row.API, Version: ver,
					ClientID: k.client.id, ClientIDNotCaptured: k.client.notCaptured, Broker: row.Broker, Frame: u.firstFrame[ver], Count: u.versions[ver], Detail: detail})
			}
		}
		r.Matrix = append(r.Matrix, row)
	}
	slices.SortFunc(r.Matrix, func(a, b MatrixRow) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), compareClientCaptured(a.ClientID, a.ClientIDNotCaptured, b.ClientID, b.ClientIDNotCaptured),
			cmp.Compare(a.Broker, b.Broker))
	})
	return flags
}

// downgradedFrom reports whether the client retried a lower ApiVersions
// version after the broker answered version ver with UNSUPPORTED_VERSION;
// from is the set of (client, broker, version) so answered
// (downgradedSet).
func downgradedFrom(from map[retryKeyVer]bool, c clientKey, broker netip.AddrPort, ver int16) bool {
	return from[retryKeyVer{retryKey{c, broker}, ver}]
}

// retryKeyVer is a client, a broker and the ApiVersions version it
// answered UNSUPPORTED_VERSION.
type retryKeyVer struct {
	retryKey
	ver int16
}

// downgradedSet indexes the downgrades by client, broker and the version
// retried from.
func (v *VersionCollector) downgradedSet() map[retryKeyVer]bool {
	m := make(map[retryKeyVer]bool, len(v.downgrades))
	for k := range v.downgrades {
		m[retryKeyVer{retryKey{k.client, k.broker}, k.from}] = true
	}
	return m
}

// noUsableFlags flags every advertised range whose minimum is above its
// maximum, once per broker and API.
func (v *VersionCollector) noUsableFlags(addrs []netip.AddrPort) []Flag {
	var flags []Flag
	for _, a := range addrs {
		ad := v.effective(a)
		if ad == nil {
			continue
		}
		for _, rg := range ad.Ranges {
			if rg.Min > rg.Max {
				flags = append(flags, Flag{Kind: FlagNoUsable, Key: rg.Key, API: rg.Name, Version: -1, Broker: addrString(a),
					Detail: fmt.Sprintf("the broker advertises v%d-%d: %s", rg.Min, rg.Max, rangeText(rg, true))})
			}
		}
	}
	return flags
}

// rangeText says what a broker advertises for an API: "v3", "v0-13",
// "no usable version (min 3 > max 2)", or "nothing for it" when the API is
// not listed.
func rangeText(r Range, listed bool) string {
	if !listed {
		return "nothing for it"
	}
	if r.Min > r.Max {
		return fmt.Sprintf("no usable version (min %d > max %d)", r.Min, r.Max)
	}
	if r.Min == r.Max {
		return fmt.Sprintf("v%d", r.Min)
	}
	return fmt.Sprintf("v%d-%d", r.Min, r.Max)
}

// flagScope is the API, broker and client ID a flag concerns ("": every
// broker, every client).
type flagScope struct {
	key            int16
	broker, client string
	notCaptured    bool // the client whose ID was not captured
}

// markMatrix copies each flag's kind onto the matrix rows it concerns.
// The flags are indexed by their scope, so that each row looks up only
// those that may concern it: time grows with rows plus flags (and the
// flags of one scope), not with their product.
func (v *VersionCollector) markMatrix(r *VersionsReport) {
	byScope := map[flagScope][]int{}
	for i, f := range r.Flags {
		s := flagScope{f.Key, f.Broker, f.ClientID, f.ClientIDNotCaptured}
		byScope[s] = append(byScope[s], i)
	}
	var cands []int
	for i := range r.Matrix {
		row := &r.Matrix[i]
		// A flag whose broker or client is "" concerns every broker or
		// client; a row whose broker or client ID is "" looks up a scope
		// twice, hence the Compact.
		cands = cands[:0]
		id := "" // a flag names a null client ID "", as it does no client
		if row.ClientID != nil {
			id = *row.ClientID
		}
		nc := row.ClientIDNotCaptured
		for _, s := range []flagScope{{row.Key, row.Broker, id, nc}, {row.Key, "", id, nc},
			{row.Key, row.Broker, "", false}, {row.Key, "", "", false}} {
			cands = append(cands, byScope[s]...)
		}
		slices.Sort(cands)
		cands = slices.Compact(cands)
		for _, fi := range cands {
			f := &r.Flags[fi]
			if slices.Contains(row.Flags, f.Kind) {
				continue
			}
			if f.Version >= 0 && !slices.Contains(row.Versions, f.Version) {
				continue
			}
			if f.Kind == FlagRejected && f.Version < 0 && !usesRejected(row) {
				continue // the Kafka 4.x Produce v0-2 note concerns only clients using them
			}
			row.Flags = append(row.Flags, f.Kind)
		}
		slices.SortFunc(row.Flags, func(a, b FlagKind) int {
			return cmp.Compare(slices.Index(flagOrder, a), slices.Index(flagOrder, b))
		})
	}
}

func usesRejected(row *MatrixRow) bool {
	return row.Key == protocol.KeyProduce && slices.ContainsFunc(row.Versions, func(v int16) bool { return v <= 2 })
}

// mixed flags APIs whose effective ranges differ between brokers of one
// cluster: brokers whose Metadata or DescribeCluster responses name
// different cluster IDs are different clusters (a capture of two
// clusters is no cluster mid-upgrade); a broker whose cluster was not
// captured counts in the one cluster named, when only one was.
func (v *VersionCollector) mixed(addrs []netip.AddrPort) []Flag {
	byCluster := map[string][]netip.AddrPort{}
	for _, a := range addrs {
		c := ""
		if b := v.brokers[a]; b != nil {
			c = b.cluster
		}
		byCluster[c] = append(byCluster[c], a)
	}
	if len(byCluster) == 2 && byCluster[""] != nil {
		for c, as := range byCluster {
			if c != "" {
				byCluster[c] = append(as, byCluster[""]...)
			}
		}
		delete(byCluster, "")
	}
	var flags []Flag
	for _, c := range slices.Sorted(maps.Keys(byCluster)) {
		fs := v.mixedIn(byCluster[c])
		if len(byCluster) > 1 && c != "" {
			for i := range fs {
				fs[i].Detail = "cluster " + c + ": " + fs[i].Detail
			}
		}
		flags = append(flags, fs...)
	}
	return flags
}

// mixedIn flags APIs whose effective ranges differ between the brokers
// addrs.
func (v *VersionCollector) mixedIn(addrs []netip.AddrPort) []Flag {
	type brokerAd struct {
		addr netip.AddrPort
		ad   *Advertisement
	}
	var ads []brokerAd
	keys := map[int16]bool{}
	for _, a := range addrs {
		if ad := v.effective(a); ad != nil {
			ads = append(ads, brokerAd{a, ad})
			for _, r := range ad.Ranges {
				keys[r.Key] = true
			}
		}
	}
	if len(ads) < 2 {
		return nil
	}
	sorted := make([]int16, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	slices.Sort(sorted)
	var flags []Flag
	for _, k := range sorted {
		var parts []string
		distinct := map[string]bool{}
		for _, b := range ads {
			rg, ok := b.ad.rangeOf(k)
			s := rangeText(rg, ok)
			if !ok {
				s = "none"
			}
			distinct[s] = true
			parts = append(parts, addrString(b.addr)+" "+s)
		}
		if len(distinct) > 1 {
			flags = append(flags, Flag{Kind: FlagMixed, Key: k, API: protocol.APIName(k), Version: -1,
				Detail: "brokers advertise different ranges: " + strings.Join(parts, ", ")})
		}
	}
	return flags
}

// downgradeFlags returns one flag per client, broker and downgrade.
func (v *VersionCollector) downgradeFlags() []Flag {
	flags := []Flag{}
	for k, a := range v.downgrades {
		detail := fmt.Sprintf("ApiVersions v%d (packet %d) was answered UNSUPPORTED_VERSION (packet %d); retried with v%d", k.from, a.errFrame, a.errResp, k.to)
		if a.brokerMax >= 0 {
			detail += fmt.Sprintf(", the broker's maximum being v%d", a.brokerMax)
		}
		flags = append(flags, Flag{Kind: FlagDowngrade, Key: protocol.KeyApiVersions, API: protocol.APIName(protocol.KeyApiVersions),
			Version: k.to, ClientID: k.client.id, ClientIDNotCaptured: k.client.notCaptured, Broker: addrString(k.broker), Frame: a.frame, Count: a.count,
			Detail: detail + " (KIP-511: the usual negotiation with an older broker, not a fault)"})
	}
	return flags
}

// closedFlags flags requests left unanswered by a close when their version
// is unknown: outside the broker's advertised range, or defined by no Kafka
// release in kwire's schema table.
func (v *VersionCollector) closedFlags() []Flag {
	var flags []Flag
	for p, seen := range v.closed {
		name := protocol.APIName(p.key)
		known := protocol.Lookup(p.key, false, p.ver) != nil
		ad := v.effective(p.broker)
		var rg Range
		listed := false
		if ad != nil {
			rg, listed = ad.rangeOf(p.key)
		}
		inRange := listed && rg.Min <= p.ver && p.ver <= rg.Max
		f := Flag{Key: p.key, API: name, Version: p.ver, ClientID: p.client.id, ClientIDNotCaptured: p.client.notCaptured, Broker: addrString(p.broker),
			Frame: seen.frame, Count: seen.count}
		switch {
		case !known || (ad != nil && !inRange):
			f.Kind = FlagClosedUnsupported
			why := "no Kafka release defines it"
			if known {
				why = "the broker advertises " + rangeText(rg, listed)
			} else if ad != nil {
				why += "; the broker advertises " + rangeText(rg, listed)
			}
			f.Detail = fmt.Sprintf("%s v%d: connection closed with no response (%s)", name, p.ver, why)
		default:
			// In range, or no advertisement to judge by: an ordinary
			// close (consumers close in the middle of a long-poll Fetch;
			// who closed is not known here).
			continue
		}
		flags = append(flags, f)
	}
	return flags
}

// kafka4Produce is the Produce version below which Kafka 4.x rejects
// requests it still advertises (KAFKA-18659: brokers keep advertising
// Produce v0 so that old clients get an error response, not a silent
// disconnect; KIP-896 removed v0-2).
const kafka4Produce = 3

// kafka4FetchMin: Kafka 4.x (KIP-896) advertises Fetch from v4; older
// brokers from v0. It tells a 4.x broker apart from an older one.
const kafka4FetchMin = 4

// rejectedFlags flags versions a broker advertised but answered with
// UNSUPPORTED_VERSION, and Kafka 4.x brokers advertising Produce v0-2.
func (v *VersionCollector) rejectedFlags(addrs []netip.AddrPort) []Flag {
	var flags []Flag
	for p, seen := range v.rejected {
		name := protocol.APIName(p.key)
		f := Flag{Kind: FlagRejected, Key: p.key, API: name, Version: p.ver, ClientID: p.client.id, ClientIDNotCaptured: p.client.notCaptured,
			Broker: addrString(p.broker), Frame: seen.frame, Count: seen.count}
		if ad := v.effective(p.broker); ad != nil {
			if rg, ok := ad.rangeOf(p.key); ok && rg.Min <= p.ver && p.ver <= rg.Max {
				f.Detail = fmt.Sprintf("%s v%d is inside the advertised %s but was answered UNSUPPORTED_VERSION", name, p.ver, rangeText(rg, true))
				flags = append(flags, f)
			}
		}
	}
	for _, a := range addrs {
		ad := v.effective(a)
		if ad == nil {
			continue
		}
		prod, okP := ad.rangeOf(protocol.KeyProduce)
		fetch, okF := ad.rangeOf(protocol.KeyFetch)
		if okP && okF && prod.Min < kafka4Produce && fetch.Min >= kafka4FetchMin {
			flags = append(flags, Flag{Kind: FlagRejected, Key: protocol.KeyProduce, API: protocol.APIName(protocol.KeyProduce), Version: -1,
				Broker: addrString(a),
				Detail: fmt.Sprintf("advertises Produce v%d-%d but, like Kafka 4.x (Fetch from v%d), rejects Produce v0-2 (KAFKA-18659, KIP-896)",
					prod.Min, prod.Max, fetch.Min)})
		}
	}
	return flags
}
