package stats

import (
	"cmp"
	"fmt"
	"slices"
)

// Comparison is `kwire versions --against`: how the cluster's advertised
// ranges moved between two captures (before and after an upgrade) and which
// clients of the first capture would lose a version they use.
//
// A capture's cluster range for an API is what every broker in it accepts:
// the intersection of the brokers' effective ranges (VersionsReport
// .Brokers), absent when any broker does not list the API.
type Comparison struct {
	// BeforeBrokers and AfterBrokers count brokers with an error-free
	// ApiVersions response in each capture; with none, nothing is compared.
	BeforeBrokers int           `json:"beforeBrokers"`
	AfterBrokers  int           `json:"afterBrokers"`
	Ranges        []RangeChange `json:"ranges"` // APIs whose cluster range moved, by key
	Lost          []LostVersion `json:"lost"`   // by client ID (null last), then key
}

// RangeChange is one API's cluster range before and after; nil when absent.
type RangeChange struct {
	Key    int16  `json:"apiKey"`
	API    string `json:"api"`
	Before *Range `json:"before" jsonschema:"nullable"`
	After  *Range `json:"after" jsonschema:"nullable"`
	Change string `json:"change"` // e.g. "min 0 → 3, max 12 → 13" (--ascii: ->), "removed", "added"
}

// LostVersion is a client that used versions of an API that the second
// capture's cluster no longer accepts.
type LostVersion struct {
	ClientID            *string  `json:"clientId" jsonschema:"nullable"` // null when the header's was null or not captured
	ClientIDNotCaptured bool     `json:"clientIdNotCaptured"`            // true for the requests whose header was cut before its ClientId ended
	Software            []string `json:"software"`
	Key                 int16    `json:"apiKey"`
	API                 string   `json:"api"`
	Versions            []int16  `json:"versions"`                    // used before, outside the range after
	After               *Range   `json:"after" jsonschema:"nullable"` // nil: the API is gone
	// Impact says what the client meets after (Impact*): it negotiates a
	// lower version, the versions it used were removed, the API was, or
	// only some brokers after advertise the API.
	Impact string `json:"impact"`
}

// LostVersion impacts.
const (
	// ImpactNegotiateDown: every lost version is above the range after;
	// a client that picks the highest version both sides support (as
	// Kafka's clients do, KIP-35) goes on with the range's maximum.
	ImpactNegotiateDown = "negotiateDown"
	// ImpactVersionRemoved: some lost version is below the range after
	// (old versions removed, as Kafka 4.0 did, KIP-896): the client needs
	// one that speaks a newer version.
	ImpactVersionRemoved = "versionRemoved"
	// ImpactAPIRemoved: the cluster after no longer has the API: no
	// broker after advertises it.
	ImpactAPIRemoved = "apiRemoved"
	// ImpactAPINotEveryBroker: some brokers after advertise the API and
	// others do not (a rolling upgrade, an optional API such as
	// KIP-714's telemetry): a client meets it on some brokers only.
	ImpactAPINotEveryBroker = "apiNotOnEveryBroker"
)

// LostImpact classifies versions used before against the range after
// (nil: the API is gone).
func LostImpact(lost []int16, after *Range) string {
	if after == nil {
		return ImpactAPIRemoved
	}
	for _, v := range lost {
		if v < after.Min {
			return ImpactVersionRemoved
		}
	}
	return ImpactNegotiateDown
}

// ImpactText says an impact in words, for tables.
func ImpactText(impact string, after *Range) string {
	switch impact {
	case ImpactAPINotEveryBroker:
		return "API not advertised by every broker"
	case ImpactNegotiateDown:
		return fmt.Sprintf("will negotiate down to v%d", after.Max)
	case ImpactVersionRemoved:
		return fmt.Sprintf("version removed: needs v%d or later", after.Min)
	case ImpactAPIRemoved:
		return "API removed"
	}
	return impact
}

// ClusterRanges returns a report's cluster range per API key, and how many
// brokers contributed.
func ClusterRanges(r *VersionsReport) (map[int16]Range, int) {
	var out map[int16]Range
	n := 0
	for _, b := range r.Brokers {
		if b.Effective < 0 || b.Effective >= len(b.Advertisements) {
			continue
		}
		ad := &b.Advertisements[b.Effective]
		n++
		mine := make(map[int16]Range, len(ad.Ranges))
		for _, rg := range ad.Ranges {
			mine[rg.Key] = rg
		}
		if out == nil {
			out = mine
			continue
		}
		for k, rg := range out {
			m, ok := mine[k]
			if !ok || max(rg.Min, m.Min) > min(rg.Max, m.Max) {
				delete(out, k)
				continue
			}
			rg.Min, rg.Max = max(rg.Min, m.Min), min(rg.Max, m.Max)
			out[k] = rg
		}
	}
	if out == nil {
		out = map[int16]Range{}
	}
	return out, n
}

// Compare compares two versions reports.
func Compare(before, after *VersionsReport) *Comparison {
	b, nb := ClusterRanges(before)
	a, na := ClusterRanges(after)
	c := &Comparison{BeforeBrokers: nb, AfterBrokers: na, Ranges: []RangeChange{}, Lost: []LostVersion{}}
	if na == 0 {
		return c
	}
	// With no ranges before there is nothing to compare them with, but
	// the versions the clients used (clients that never sent ApiVersions
	// among them, old ones most often) still meet the ranges after.
	if nb > 0 {
		c.Ranges = rangeChanges(b, a)
	}
	c.Lost = lostVersions(before, after, a, nb > 0)
	return c
}

// acceptedBy reports whether a broker of r advertised version v of API
// key: some broker of the cluster accepted it.
func acceptedBy(r *VersionsReport, key, v int16) bool {
	for _, b := range r.Brokers {
		if b.Effective < 0 || b.Effective >= len(b.Advertisements) {
			continue
		}
		for _, rg := range b.Advertisements[b.Effective].Ranges {
			if rg.Key == key && v >= rg.Min && v <= rg.Max {
				return true
			}
		}
	}
	return false
}

// advertises reports whether some broker of r advertises API key in its
// effective advertisement.
func advertises(r *VersionsReport, key int16) bool {
	for _, b := range r.Brokers {
		if b.Effective < 0 || b.Effective >= len(b.Advertisements) {
			continue
		}
		if _, ok := b.Advertisements[b.Effective].rangeOf(key); ok {
			return true
		}
	}
	return false
}

// rangeChanges lists the APIs whose cluster range moved from b to a.
func rangeChanges(b, a map[int16]Range) []RangeChange {
	out := []RangeChange{}
	keys := make([]int16, 0, len(a)+len(b))
	for k := range b {
		keys = append(keys, k)
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		rb, okb := b[k]
		ra, oka := a[k]
		ch := RangeChange{Key: k}
		switch {
		case okb && oka:
			if rb.Min == ra.Min && rb.Max == ra.Max {
				continue
			}
			ch.API, ch.Before, ch.After = rb.Name, &rb, &ra
			var parts []string
			if rb.Min != ra.Min {
				parts = append(parts, fmt.Sprintf("min %d → %d", rb.Min, ra.Min))
			}
			if rb.Max != ra.Max {
				parts = append(parts, fmt.Sprintf("max %d → %d", rb.Max, ra.Max))
			}
			ch.Change = joinComma(parts)
		case okb:
			ch.API, ch.Before, ch.Change = rb.Name, &rb, "removed"
		default:
			ch.API, ch.After, ch.Change = ra.Name, &ra, "added"
		}
		out = append(out, ch)
	}
	return out
}

// lostVersions lists the versions the clients of before used that the
// cluster ranges a refuse and, when hasB (the cluster before advertised),
// some broker before accepted: a version every broker refused before too
// is no change (versions --against of a capture with itself listed them).
func lostVersions(before, after *VersionsReport, a map[int16]Range, hasB bool) []LostVersion {
	out := []LostVersion{}
	for _, cl := range before.Clients {
		for _, u := range cl.APIs {
			ra, ok := a[u.Key]
			var lost []int16
			for _, v := range u.Versions {
				if (!ok || v < ra.Min || v > ra.Max) && (!hasB || acceptedBy(before, u.Key, v)) {
					lost = append(lost, v)
				}
			}
			if len(lost) == 0 {
				continue
			}
			l := LostVersion{ClientID: cl.ClientID, ClientIDNotCaptured: cl.ClientIDNotCaptured, Software: cl.Software,
				Key: u.Key, API: u.Name, Versions: lost}
			if ok {
				l.After = &ra
			}
			l.Impact = LostImpact(lost, l.After)
			if l.Impact == ImpactAPIRemoved && advertises(after, u.Key) {
				l.Impact = ImpactAPINotEveryBroker
			}
			out = append(out, l)
		}
	}
	slices.SortStableFunc(out, func(x, y LostVersion) int {
		return cmp.Or(compareClientCaptured(x.ClientID, x.ClientIDNotCaptured, y.ClientID, y.ClientIDNotCaptured), cmp.Compare(x.Key, y.Key))
	})
	return out
}

func joinComma(parts []string) string {
	s := ""
	for i, p := range parts {
		if i > 0 {
			s += ", "
		}
		s += p
	}
	return s
}
