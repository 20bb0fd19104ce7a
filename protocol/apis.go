package protocol

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// APIs returns one APIInfo per API key in the schema table, sorted by key.
// Name comes from the request definition serving the highest version (key
// 74 is "ListConfigResources", its trunk name, not 3.9's
// "ListClientMetricsResources"). Versions spans every request version any
// generation declares; Kafka's ranges per key are contiguous, so the span
// is their union. FirstFlexible is the lowest of those versions that the
// serving definition's flexibleVersions contains, or -1.
//
// The result is a fresh copy; callers may modify it.
func APIs() []APIInfo { return slices.Clone(apiTable()) }

// APIName returns the name of API key key ("Produce" for 0), or
// "UNKNOWN(key)" when no generation of the schema table declares it.
func APIName(key int16) string {
	if t := apiNames(); key >= 0 && int(key) < len(t) && t[key] != "" {
		return t[key]
	}
	return "UNKNOWN(" + strconv.Itoa(int(key)) + ")"
}

// apiNames indexes the API names by key ("" for a hole): APIName runs for
// every ApiKey field -V shows (62 in each ApiVersions response), where a
// binary search of apiTable was 2% of the CPU on a capture of small
// exchanges.
var apiNames = sync.OnceValue(func() []string {
	t := apiTable()
	if len(t) == 0 {
		return nil
	}
	names := make([]string, int(t[len(t)-1].Key)+1)
	for _, a := range t {
		if a.Key >= 0 {
			names[a.Key] = a.Name
		}
	}
	return names
})

var apiTable = sync.OnceValue(func() []APIInfo {
	var out []APIInfo
	for k, ms := range byKey() {
		if len(ms) == 0 {
			continue
		}
		key := int16(k)
		info := APIInfo{Key: key, Versions: NoVersions, FirstFlexible: -1}
		var newest *MessageSchema
		for _, m := range ms {
			if m.Type != TypeRequest || m.ValidVersions.Empty() {
				continue
			}
			if info.Versions.Empty() {
				info.Versions = m.ValidVersions
			} else {
				info.Versions.Min = min(info.Versions.Min, m.ValidVersions.Min)
				info.Versions.Max = max(info.Versions.Max, m.ValidVersions.Max)
			}
			if newest == nil || m.ValidVersions.Max > newest.ValidVersions.Max {
				newest = m
			}
		}
		if newest == nil {
			continue // a response without a request: no API to name
		}
		info.Name = strings.TrimSuffix(newest.Name, "Request")
		for v := info.Versions.Min; v <= info.Versions.Max; v++ {
			if m := Lookup(key, false, v); m != nil && m.FlexibleVersions.Contains(v) {
				info.FirstFlexible = v
				break
			}
			if v == MaxVersion {
				break
			}
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b APIInfo) int { return int(a.Key) - int(b.Key) })
	return out
})

// frameNotes holds frameNote's answers for the API keys the schemas know
// and versions below 32, made on first use.
var frameNotes = sync.OnceValue(func() map[int32]string {
	m := make(map[int32]string)
	for _, a := range apiTable() {
		for v := int16(0); v < 32; v++ {
			m[int32(a.Key)<<16|int32(v)] = a.Name + " " + versionNote(v)
		}
	}
	return m
})

// frameNote is a decoded frame's root note: the API name and version
// ("Produce v9"), built once for the usual ones.
func frameNote(key, ver int16) string {
	if s, ok := frameNotes()[int32(key)<<16|int32(uint16(ver))]; ok {
		return s
	}
	return APIName(key) + " " + versionNote(ver)
}
