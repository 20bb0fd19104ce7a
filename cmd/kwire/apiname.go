package main

import (
	"fmt"
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
	name := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(s), "request"), "response")
	for _, a := range protocol.APIs() {
		if strings.ToLower(a.Name) == name {
			return a.Key, nil
		}
	}
	return 0, fmt.Errorf("unknown API %q (see 'kwire apis')", s)
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
