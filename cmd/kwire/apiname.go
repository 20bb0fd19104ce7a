package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kwire/kwire/protocol"
)

// parseAPI resolves an API given by key ("18") or by name, in any case and
// with or without a "Request"/"Response" suffix ("ApiVersions",
// "apiversions"). Unknown numeric keys in the int16 range are accepted (the
// decoder shows them as UNKNOWN); unknown names are an error.
func parseAPI(s string) (int16, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 16); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("API key %d is negative", n)
		}
		return int16(n), nil
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil || strings.Trim(s, "0123456789+-") == "" && s != "" {
		return 0, fmt.Errorf("API key %s is out of range: keys are 0 to 32767 (see 'kwire apis')", s)
	}
	name := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(s), "request"), "response")
	for _, a := range protocol.APIs() {
		if strings.ToLower(a.Name) == name {
			return a.Key, nil
		}
	}
	return 0, fmt.Errorf("unknown API %q; the nearest: %s (see 'kwire apis')", s, strings.Join(nearest(s, apiNameList()), ", "))
}

// apiNameList returns the names of every API key, as Kafka names them.
func apiNameList() []string {
	var names []string
	for _, a := range protocol.APIs() {
		names = append(names, a.Name)
	}
	return names
}

// parseAPIList parses a comma-separated list of APIs for --api.
func parseAPIList(list []string) (map[int16]bool, error) {
	keys := make(map[int16]bool)
	for _, item := range list {
		for _, s := range strings.Split(item, ",") {
			if strings.TrimSpace(s) == "" {
				continue
			}
			k, err := parseAPI(s)
			if err != nil {
				return nil, err
			}
			keys[k] = true
		}
	}
	return keys, nil
}

// resolveStruct returns the schema name matching name case-insensitively,
// with the versions any generation defines, for --type. Unknown names are
// an error listing the header and data structs.
func resolveStruct(name string) (string, protocol.Versions, error) {
	var (
		canon string
		vers  = protocol.NoVersions
		names []string
	)
	for _, m := range protocol.Schemas {
		if m.Type == protocol.TypeHeader || m.Type == protocol.TypeData {
			if !slices.Contains(names, m.Name) {
				names = append(names, m.Name)
			}
		}
		if !strings.EqualFold(m.Name, name) || m.ValidVersions.Empty() {
			continue
		}
		canon = m.Name
		if vers.Empty() {
			vers = m.ValidVersions
		} else {
			vers.Min, vers.Max = min(vers.Min, m.ValidVersions.Min), max(vers.Max, m.ValidVersions.Max)
		}
	}
	if canon == "" {
		slices.Sort(names)
		return "", vers, fmt.Errorf("unknown struct %q; headers and data structs: %s, RecordBatch", name, strings.Join(names, ", "))
	}
	return canon, vers, nil
}

// knownVersions describes the versions of API key, for error messages:
// "Produce has versions 0-13", "API key 999 is unknown".
func knownVersions(key int16) string {
	for _, a := range protocol.APIs() {
		if a.Key == key {
			return fmt.Sprintf("%s has versions %s", a.Name, versionRange(a.Versions))
		}
	}
	return fmt.Sprintf("API key %d is unknown (see 'kwire apis')", key)
}
