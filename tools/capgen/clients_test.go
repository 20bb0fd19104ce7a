package main

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestClientCaptures checks that the captures of the kafkapython and
// kafkajs scenarios hold what pcaps/README.md promises.
func TestClientCaptures(t *testing.T) {
	dir := filepath.Join("..", "..", "pcaps")
	if d := os.Getenv("CAPGEN_PCAPS_DIR"); d != "" {
		dir = d
	}
	cases := []struct {
		file     string
		clients  []string
		requests []string
		errs     map[string]int
		notes    []string // substrings every note must match one of
	}{{
		file: "kafkapython-produce-consume.pcap",
		clients: []string{"capgen-kafkapython-admin", "capgen-kafkapython-consumer", "capgen-kafkapython-gzip",
			"capgen-kafkapython-lz4", "capgen-kafkapython-none", "capgen-kafkapython-snappy", "capgen-kafkapython-zstd"},
		requests: []string{"ApiVersions v0", "Metadata v0", "Metadata v1", "Metadata v5", "CreateTopics v3",
			"DescribeConfigs v2", "Produce v7", "FindCoordinator v0", "JoinGroup v2", "SyncGroup v1", "Heartbeat v1",
			"OffsetFetch v1", "ListOffsets v1", "Fetch v4", "OffsetCommit v2", "LeaveGroup v1", "ListGroups v1",
			"DescribeGroups v3", "OffsetFetch v3"},
		errs:  map[string]int{},
		notes: []string{"Fetch v4"},
	}, {
		file: "kafkajs-produce-consume.pcap",
		clients: []string{"capgen-kafkajs-admin", "capgen-kafkajs-consumer", "capgen-kafkajs-gzip",
			"capgen-kafkajs-lz4", "capgen-kafkajs-none", "capgen-kafkajs-snappy", "capgen-kafkajs-zstd"},
		requests: []string{"ApiVersions v2", "Metadata v6", "CreateTopics v3", "InitProducerID v1", "Produce v7",
			"FindCoordinator v2", "JoinGroup v5", "SyncGroup v3", "Heartbeat v3", "OffsetFetch v4", "ListOffsets v3",
			"Fetch v11", "OffsetCommit v5", "LeaveGroup v3", "ListGroups v2", "DescribeGroups v2"},
		errs:  map[string]int{"JoinGroup: MEMBER_ID_REQUIRED (79)": 1},
		notes: []string{"Fetch v11"},
	}}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(dir, c.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("no capture: %v", err)
			}
			s, err := summarize(path)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for id := range s.clientIDs {
				ids = append(ids, id)
			}
			sort.Strings(ids)
			if !reflect.DeepEqual(ids, c.clients) {
				t.Errorf("client IDs %v, want %v", ids, c.clients)
			}
			for _, k := range c.requests {
				if s.apis[k] == 0 {
					t.Errorf("no %q (have %v)", k, s.apis)
				}
			}
			for k := range s.apis {
				if !strings.HasPrefix(k, "(") && !contains(c.requests, k) {
					t.Errorf("unexpected request %q", k)
				}
			}
			if !reflect.DeepEqual(s.errs, c.errs) {
				t.Errorf("error codes %v, want %v", s.errs, c.errs)
			}
			// Exactly one batch per codec each way: one produce per codec,
			// and the consumer reads them back.
			for _, k := range codecBatches("Produce", "Fetch") {
				if s.codecs[k] != 1 {
					t.Errorf("%d of %q, want 1 (have %v)", s.codecs[k], k, s.codecs)
				}
			}
			if len(s.codecs) != 2*len(codecs) {
				t.Errorf("batches %v, want one per codec each way", s.codecs)
			}
		notes:
			for _, n := range s.notes {
				for _, ok := range c.notes {
					if strings.Contains(n, ok) {
						continue notes
					}
				}
				t.Errorf("unexpected: %s", n)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
