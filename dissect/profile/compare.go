package profile

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/kwire/kwire/dissect/stats"
)

// Change is one difference between two profiles.
type Change struct {
	// Kind is what changed (the Kind* constants).
	Kind string `json:"kind"`
	// Client is the client ID it concerns, Broker the broker's address;
	// "" when it concerns none (the cluster).
	Client string `json:"clientId"`
	Broker string `json:"broker"`
	// Item names the thing that changed: an API, a topic, an error
	// ("Produce UNKNOWN_TOPIC_OR_PARTITION"), a sequence, a config.
	Item string `json:"item"`
	// Before and After say what it was and is; "" when absent on that
	// side, Present when the thing is there and that is all there is to
	// say (an API, a topic or a request sequence used, a broker seen).
	Before string `json:"before"`
	After  string `json:"after"`
	// Note explains, where there is more to say (a lost version's impact).
	Note string `json:"note"`
}

// Present is the Before or After of a change in which the thing exists
// on that side, and nothing more is said of it.
const Present = "yes"

// Kinds of change.
const (
	KindClient     = "client"     // a client ID seen on one side only
	KindSoftware   = "software"   // client software names/versions (KIP-511)
	KindAPI        = "api"        // an API used on one side only
	KindVersion    = "version"    // an API used with other versions
	KindSequence   = "sequence"   // a connection's normalised request sequence
	KindError      = "error"      // a Kafka error per API
	KindTopic      = "topic"      // a topic named
	KindConfig     = "config"     // a config resource or name asked about or changed
	KindCodec      = "codec"      // a compression codec produced with
	KindFormat     = "format"     // a record format (magic) produced
	KindAcks       = "acks"       // a Produce acks setting
	KindLatency    = "latency"    // an API's p99 latency beyond the threshold
	KindBroker     = "broker"     // a broker address seen on one side only
	KindAdvertised = "advertised" // an API's cluster version range (versions --against)
	KindLost       = "lostVersion"
)

// Options tune Compare.
type Options struct {
	// LatencyRatio and LatencyMinMs: an API's p99 latency is a change when
	// it grew or shrank by more than LatencyRatio times and by more than
	// LatencyMinMs milliseconds, with at least LatencyMinCount answered
	// requests on each side. LatencyRatio 0 compares no latency.
	LatencyRatio    float64
	LatencyMinMs    float64
	LatencyMinCount int64
	// Ignore are patterns of changes to leave out: "KIND" (every change
	// of that kind), "KIND:ITEM" (ITEM a path.Match pattern: "error:*
	// NOT_COORDINATOR"), "client:ID" (every change of clients matching
	// ID).
	Ignore []string
}

// DefaultOptions are kwire diff's defaults: p99 latency changes of more
// than 2 times and 10 ms, over at least 10 requests each side.
var DefaultOptions = Options{LatencyRatio: 2, LatencyMinMs: 10, LatencyMinCount: 10}

// ValidIgnore checks an --ignore pattern.
func ValidIgnore(p string) error {
	kind, item, hasItem := strings.Cut(p, ":")
	if !slices.Contains(Kinds(), kind) {
		return fmt.Errorf("%q: unknown kind %q (want one of %s)", p, kind, strings.Join(Kinds(), ", "))
	}
	if hasItem {
		if _, err := path.Match(item, ""); err != nil {
			return fmt.Errorf("%q: %v", p, err)
		}
	}
	return nil
}

// Kinds lists the kinds of change.
func Kinds() []string {
	return []string{KindClient, KindSoftware, KindAPI, KindVersion, KindSequence, KindError, KindTopic,
		KindConfig, KindCodec, KindFormat, KindAcks, KindLatency, KindBroker, KindAdvertised, KindLost}
}

func (o *Options) ignored(c Change) bool {
	for _, p := range o.Ignore {
		kind, item, hasItem := strings.Cut(p, ":")
		if kind == KindClient && hasItem && c.Client != "" {
			if ok, _ := path.Match(item, c.Client); ok {
				return true
			}
			continue
		}
		if kind != c.Kind {
			continue
		}
		if !hasItem {
			return true
		}
		if ok, _ := path.Match(item, c.Item); ok {
			return true
		}
	}
	return false
}

// Compare returns the changes from before to after, in a stable order:
// clients by ID (their changes by kind), then brokers, then the cluster's
// versions. No change means the two captures did the same.
func Compare(before, after *Profile, o Options) []Change {
	var out []Change
	add := func(c Change) {
		if !o.ignored(c) {
			out = append(out, c)
		}
	}
	bc := map[string]*Client{}
	for i := range before.Clients {
		bc[before.Clients[i].ClientID] = &before.Clients[i]
	}
	ac := map[string]*Client{}
	for i := range after.Clients {
		ac[after.Clients[i].ClientID] = &after.Clients[i]
	}
	for _, id := range unionKeys(bc, ac) {
		b, a := bc[id], ac[id]
		switch {
		case a == nil:
			add(Change{Kind: KindClient, Client: id, Item: id, Before: clientSummary(b), Note: foldedNote(after, "after")})
			continue
		case b == nil:
			add(Change{Kind: KindClient, Client: id, Item: id, After: clientSummary(a), Note: foldedNote(before, "before")})
			continue
		}
		first := len(out)
		if !slices.Equal(b.Software, a.Software) {
			add(Change{Kind: KindSoftware, Client: id, Item: "software", Before: strings.Join(b.Software, ", "), After: strings.Join(a.Software, ", ")})
		}
		bv, av := apiMap(b.APIs), apiMap(a.APIs)
		for _, api := range unionKeys(bv, av) {
			x, y := bv[api], av[api]
			switch {
			case x == nil:
				add(Change{Kind: KindAPI, Client: id, Item: api, After: versionText(y.Versions)})
			case y == nil:
				add(Change{Kind: KindAPI, Client: id, Item: api, Before: versionText(x.Versions)})
			case !slices.Equal(x.Versions, y.Versions):
				add(Change{Kind: KindVersion, Client: id, Item: api, Before: versionText(x.Versions), After: versionText(y.Versions)})
			}
		}
		seqs := func(c *Client) []string {
			var s []string
			for _, q := range c.Sequences {
				s = append(s, q.Sequence)
			}
			return s
		}
		for _, d := range setDiff(KindSequence, id, seqs(b), seqs(a)) {
			add(d)
		}
		for _, pair := range []struct {
			kind string
			b, a []string
		}{
			{KindError, b.Errors, a.Errors}, {KindTopic, b.Topics, a.Topics}, {KindConfig, b.Configs, a.Configs},
			{KindCodec, b.Codecs, a.Codecs}, {KindFormat, b.Formats, a.Formats}, {KindAcks, b.Acks, a.Acks},
		} {
			for _, d := range setDiff(pair.kind, id, pair.b, pair.a) {
				add(d)
			}
		}
		if o.LatencyRatio > 0 {
			bl, al := latencyMap(b.Latency), latencyMap(a.Latency)
			for _, api := range unionKeys(bl, al) {
				x, y := bl[api], al[api]
				if x == nil || y == nil || x.Count < o.LatencyMinCount || y.Count < o.LatencyMinCount {
					continue
				}
				hi, lo := max(x.P99Ms, y.P99Ms), min(x.P99Ms, y.P99Ms)
				if hi-lo > o.LatencyMinMs && (lo == 0 || hi/lo > o.LatencyRatio) {
					add(Change{Kind: KindLatency, Client: id, Item: api,
						Before: fmt.Sprintf("p99 %.3gms (%d requests)", x.P99Ms, x.Count),
						After:  fmt.Sprintf("p99 %.3gms (%d requests)", y.P99Ms, y.Count)})
				}
			}
		}
		if b.Capped || a.Capped {
			// What a capped side lacks may be what its budget left out.
			for i := first; i < len(out); i++ {
				if out[i].Note == "" {
					out[i].Note = CappedNote
				}
			}
		}
	}

	bb, ab := brokerMap(before.Brokers), brokerMap(after.Brokers)
	for _, addr := range unionKeys(bb, ab) {
		x, y := bb[addr], ab[addr]
		switch {
		case x == nil:
			add(Change{Kind: KindBroker, Broker: addr, Item: addr, After: Present})
		case y == nil:
			add(Change{Kind: KindBroker, Broker: addr, Item: addr, Before: Present})
		default:
			for _, d := range setDiff(KindError, "", x.Errors, y.Errors) {
				d.Broker = addr
				add(d)
			}
		}
	}

	// The cluster's version ranges (what every broker accepts), and the
	// versions clients used before that the cluster after refuses: what
	// kwire versions --against reports.
	// Ranges moved need both sides' ranges; a version lost needs only
	// the ranges after (a client that never sent ApiVersions, a capture
	// begun after it did, still used versions), and when there are
	// ranges before, a version some broker before accepted.
	rb, nb := clusterRanges(before.Brokers)
	ra, na := clusterRanges(after.Brokers)
	if nb > 0 && na > 0 {
		for _, api := range unionKeys(rb, ra) {
			x, y := rb[api], ra[api]
			if x != nil && y != nil && *x == *y {
				continue
			}
			add(Change{Kind: KindAdvertised, Item: api, Before: rangeText(x), After: rangeText(y)})
		}
	}
	if na > 0 {
		for _, c := range before.Clients {
			for _, u := range c.APIs {
				r := ra[u.API]
				var lost []int16
				for _, v := range u.Versions {
					// Lost: refused after, and accepted before by some
					// broker when the cluster before advertised (a
					// version every broker refused too is no change:
					// kwire diff of a capture with itself listed them).
					if (r == nil || v < r.Min || v > r.Max) && (nb == 0 || acceptedBy(before.Brokers, u.API, v)) {
						lost = append(lost, v)
					}
				}
				if len(lost) == 0 {
					continue
				}
				var sr *stats.Range
				if r != nil {
					sr = &stats.Range{Key: r.Key, Name: r.API, Min: r.Min, Max: r.Max}
				}
				impact := stats.LostImpact(lost, sr)
				if impact == stats.ImpactAPIRemoved && advertisedBy(after.Brokers, u.API) {
					impact = stats.ImpactAPINotEveryBroker
				}
				add(Change{Kind: KindLost, Client: c.ClientID, Item: u.API, Before: versionText(lost), After: rangeText(r),
					Note: stats.ImpactText(impact, sr)})
			}
		}
	}
	return out
}

// CappedNote is the Note of a change of a client whose profile, on
// either side, is capped (Client.Capped): the difference may be only what
// the budget left out.
const CappedNote = "a profile of this client is capped (--max-profile-memory): what it lacks may be what the budget left out"

// foldedNote is the Note of a client seen on one side only when the
// other side's profile folded client IDs (Profile.Folded): it may be
// among them.
func foldedNote(p *Profile, side string) string {
	if p.Folded == nil || p.Folded.Requests+p.Folded.Connections == 0 {
		return ""
	}
	return "the " + side + " profile folded client IDs past its budget (--max-profile-memory): this one may be among them"
}

func clientSummary(c *Client) string {
	s := fmt.Sprintf("%d connection%s", c.Connections, map[bool]string{true: "", false: "s"}[c.Connections == 1])
	if len(c.Software) > 0 {
		s = strings.Join(c.Software, ", ") + ", " + s
	}
	return s
}

func unionKeys[V any](a, b map[string]V) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func apiMap(us []APIUse) map[string]*APIUse {
	m := map[string]*APIUse{}
	for i := range us {
		m[us[i].API] = &us[i]
	}
	return m
}

func latencyMap(ls []LatencyStat) map[string]*LatencyStat {
	m := map[string]*LatencyStat{}
	for i := range ls {
		m[ls[i].API] = &ls[i]
	}
	return m
}

func brokerMap(bs []Broker) map[string]*Broker {
	m := map[string]*Broker{}
	for i := range bs {
		m[bs[i].Address] = &bs[i]
	}
	return m
}

// clusterRanges is, per API, the range every broker that advertised one
// accepts (absent when some broker does not list the API), and how many
// brokers advertised.
func clusterRanges(bs []Broker) (map[string]*APIRange, int) {
	var out map[string]*APIRange
	n := 0
	for _, b := range bs {
		if len(b.Advertised) == 0 {
			continue
		}
		n++
		mine := map[string]*APIRange{}
		for i := range b.Advertised {
			r := b.Advertised[i]
			mine[r.API] = &r
		}
		if out == nil {
			out = mine
			continue
		}
		for k, r := range out {
			m, ok := mine[k]
			if !ok || max(r.Min, m.Min) > min(r.Max, m.Max) {
				delete(out, k)
				continue
			}
			r.Min, r.Max = max(r.Min, m.Min), min(r.Max, m.Max)
		}
	}
	return out, n
}

// acceptedBy reports whether a broker of bs advertised version v of api.
func acceptedBy(bs []Broker, api string, v int16) bool {
	for _, b := range bs {
		for _, r := range b.Advertised {
			if r.API == api && v >= r.Min && v <= r.Max {
				return true
			}
		}
	}
	return false
}

// advertisedBy reports whether some broker of bs advertises api.
func advertisedBy(bs []Broker, api string) bool {
	for _, b := range bs {
		for _, r := range b.Advertised {
			if r.API == api {
				return true
			}
		}
	}
	return false
}

func rangeText(r *APIRange) string {
	if r == nil {
		return ""
	}
	return fmt.Sprintf("v%d-%d", r.Min, r.Max)
}

func versionText(vs []int16) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = "v" + itoa(int64(v))
	}
	return strings.Join(parts, ",")
}

// setDiff is the items of one kind present on one side only.
func setDiff(kind, client string, before, after []string) []Change {
	var out []Change
	for _, x := range before {
		if !slices.Contains(after, x) {
			out = append(out, Change{Kind: kind, Client: client, Item: x, Before: Present})
		}
	}
	for _, y := range after {
		if !slices.Contains(before, y) {
			out = append(out, Change{Kind: kind, Client: client, Item: y, After: Present})
		}
	}
	return out
}
