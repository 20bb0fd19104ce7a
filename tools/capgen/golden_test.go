package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGoldenCaptures checks that the committed captures hold what
// pcaps/README.md promises.
func TestGoldenCaptures(t *testing.T) {
	dir := filepath.Join("..", "..", "pcaps")
	if d := os.Getenv("CAPGEN_PCAPS_DIR"); d != "" {
		dir = d // check a fresh run: go run . -out DIR
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no pcaps directory: %v", err)
	}
	type want struct {
		requests, errs, batches []string
		notes                   []string // substrings every note must match one of
	}
	cases := map[string]want{
		"kgo-produce-consume.pcap": {
			requests: []string{"CreateTopics v7", "DeleteTopics v6", "DescribeConfigs v4", "JoinGroup v9", "SyncGroup v5",
				"Heartbeat v4", "OffsetCommit v10", "LeaveGroup v5", "ConsumerGroupHeartbeat v1", "EndTxn v5",
				"ListOffsets v10", "Produce v12", "Produce v13", "(Produce with acks=0: no response)", "Fetch v18", "(Fetch partition listing aborted transactions)"},
			errs: []string{"CreateTopics: TOPIC_ALREADY_EXISTS (36)", "DeleteTopics: UNKNOWN_TOPIC_OR_PARTITION (3)",
				"Fetch: OFFSET_OUT_OF_RANGE (1)", "Produce: UNKNOWN_TOPIC_ID (100)", "Produce: UNKNOWN_TOPIC_OR_PARTITION (3)",
				"Metadata: UNKNOWN_TOPIC_OR_PARTITION (3)"},
			batches: codecBatches("Produce", "Fetch", "Produce: none transactional batch", "Fetch: none control batch"),
			notes:   []string{"Fetch v18"},
		},
		"sarama-produce-consume.pcap": {
			requests: []string{"Produce v7", "Fetch v10", "JoinGroup v3", "SyncGroup v2", "Heartbeat v2", "LeaveGroup v2", "CreateTopics v3"},
			batches:  codecBatches("Produce", "Fetch"),
		},
		"kafkago-produce-consume.pcap": {
			requests: []string{"Produce v8", "Fetch v10", "JoinGroup v2", "SyncGroup v0", "LeaveGroup v0", "OffsetCommit v2"},
			batches:  codecBatches("Produce", "Fetch"),
		},
		"kcat-produce-consume.pcap": {
			requests: []string{"Produce v7", "Fetch v11", "Metadata v4", "JoinGroup v5", "SyncGroup v3", "LeaveGroup v1"},
			errs:     []string{"JoinGroup: MEMBER_ID_REQUIRED (79)"},
			batches:  codecBatches("Produce", "Fetch"),
			notes:    []string{"Fetch v11"},
		},
		"kgo-large-value.pcap": {
			requests: []string{"Produce v13", "Fetch v18"},
			batches:  []string{"Produce: none batch", "Fetch: none batch"},
		},
		"mixed-versions.pcap": {
			requests: []string{"Produce v13", "Produce v7", "Fetch v18", "Fetch v10", "ApiVersions v2", "ApiVersions response downgraded to v0"},
			errs:     []string{"ApiVersions: UNSUPPORTED_VERSION (35)"},
		},
		"unsupported-versions.pcap": {
			requests: []string{"ApiVersions v99", "ApiVersions v5", "Metadata v99", "ApiVersions response downgraded to v0"},
			errs:     []string{"ApiVersions: UNSUPPORTED_VERSION (35)"},
			notes:    []string{"Metadata v99 corr 3"},
		},
		"sasl-plain.pcap": {
			requests: []string{"SASLHandshake v1", "SASLAuthenticate v2", "Produce v13"},
			errs:     []string{"SASLAuthenticate: SASL_AUTHENTICATION_FAILED (58)"},
			notes:    []string{"Fetch v18"},
		},
		"sasl-scram.pcap": {
			requests: []string{"SASLHandshake v1", "SASLAuthenticate v2", "Produce v13"},
			errs:     []string{"SASLAuthenticate: SASL_AUTHENTICATION_FAILED (58)"},
			notes:    []string{"Fetch v18"},
		},
		"sasl-v0-raw.pcap": {
			requests: []string{"SASLHandshake v0", "(raw SASL token, after SaslHandshake v0)", "(raw SASL token response, empty)", "Produce v7"},
			notes:    []string{"raw SASL token not answered"},
		},
		"kgo-tls.pcap": {
			notes: []string{"bytes left after the last whole frame"},
		},
		"kafkapython-produce-consume.pcap": {
			requests: []string{"Produce v7", "Fetch v4", "JoinGroup v2", "SyncGroup v1", "Heartbeat v1", "LeaveGroup v1"},
			batches:  codecBatches("Produce", "Fetch"),
			notes:    []string{"Fetch v4"},
		},
		"kafkajs-produce-consume.pcap": {
			requests: []string{"Produce v7", "Fetch v11", "JoinGroup v5", "SyncGroup v3", "Heartbeat v3", "LeaveGroup v3"},
			errs:     []string{"JoinGroup: MEMBER_ID_REQUIRED (79)"},
			batches:  codecBatches("Produce", "Fetch"),
			notes:    []string{"Fetch v11"},
		},
		"sarama-legacy-message-sets.pcap": {
			requests: []string{"Produce v0", "Produce v2", "Fetch v0", "Fetch v2", "Metadata v0", "Metadata v1", "ListOffsets v0"},
			batches: []string{"Produce: none magic 0 message", "Produce: gzip magic 0 message", "Produce: snappy magic 0 message",
				"Produce: none magic 1 message", "Produce: gzip magic 1 message", "Produce: snappy magic 1 message",
				"Produce: lz4 magic 1 message", "Fetch: gzip magic 0 message", "Fetch: lz4 magic 1 message"},
		},
	}
	// The TLS captures with key logs: encrypted for this checker (kwire's
	// pcaps tests compare them with tshark's decryption).
	for _, name := range []string{"kgo-tls13.pcap", "kgo-tls12.pcap", "kgo-tls-sasl-scram.pcap", "kgo-tls-keyupdate.pcap",
		"kgo-tls-cbc-openssl.pcap", "kafkapython-tls.pcap", "kafkajs-tls.pcap"} {
		cases[name] = want{notes: []string{"bytes left after the last whole frame"}}
	}
	// Captures with an expectation file are TestExpectations' to check.
	all, _ := filepath.Glob(filepath.Join(dir, "*.pcap"))
	var files []string
	for _, f := range all {
		if _, err := os.Stat(expectFile(f)); err != nil {
			files = append(files, f)
		}
	}
	if len(files) != len(cases) {
		t.Errorf("%d captures without an expectation file in %s, %d described here", len(files), dir, len(cases))
	}
	for name, w := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := summarize(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if s.conns == 0 {
				t.Fatal("no connections")
			}
			for _, k := range w.requests {
				if s.apis[k] == 0 {
					t.Errorf("no %q", k)
				}
			}
			for _, k := range w.errs {
				if s.errs[k] == 0 {
					t.Errorf("no error %q (have %v)", k, s.errs)
				}
			}
			if len(w.errs) == 0 && len(s.errs) > 0 && !strings.Contains(name, "tls") {
				t.Errorf("unexpected error codes %v", s.errs)
			}
			for _, k := range w.batches {
				if s.codecs[k] == 0 {
					t.Errorf("no %q (have %v)", k, s.codecs)
				}
			}
		notes:
			for _, n := range s.notes {
				for _, ok := range w.notes {
					if strings.Contains(n, ok) {
						continue notes
					}
				}
				t.Errorf("unexpected: %s", n)
			}
		})
	}
}

// codecBatches lists one batch of every codec for each API, plus extra.
func codecBatches(apis ...string) []string {
	var out []string
	for _, a := range apis {
		if strings.Contains(a, ":") {
			out = append(out, a)
			continue
		}
		for _, c := range codecs {
			out = append(out, a+": "+c+" batch")
		}
	}
	return out
}
