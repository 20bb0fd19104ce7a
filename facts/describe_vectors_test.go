package facts

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kwire/kwire/protocol"
)

// TestDescribedVectors holds the described groups' facts of the
// ConsumerGroupDescribe responses Kafka's own code encoded
// (../shared/kafka-vectors) to the values Kafka's JSON says they carry:
// every group, member, member epoch and assigned partition.
func TestDescribedVectors(t *testing.T) {
	dir := os.Getenv("KWIRE_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "kafka-vectors", "messages", "ConsumerGroupDescribeResponse", "v*.json"))
	if len(files) == 0 {
		t.Skipf("../shared not found at %q (set KWIRE_SHARED): skipping the test over Kafka's vectors", dir)
	}
	type tps struct {
		TopicName  string  `json:"topicName"`
		Partitions []int32 `json:"partitions"`
	}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Vectors []struct {
				Name      string `json:"name"`
				Version   int16  `json:"version"`
				Hex       string `json:"hex"`
				JSONValue struct {
					Groups []struct {
						GroupID    string `json:"groupId"`
						ErrorCode  int16  `json:"errorCode"`
						GroupEpoch int32  `json:"groupEpoch"`
						Members    []struct {
							MemberID    string `json:"memberId"`
							MemberEpoch int32  `json:"memberEpoch"`
							Assignment  struct {
								TopicPartitions []tps `json:"topicPartitions"`
							} `json:"assignment"`
							TargetAssignment struct {
								TopicPartitions []tps `json:"topicPartitions"`
							} `json:"targetAssignment"`
						} `json:"members"`
					} `json:"groups"`
				} `json:"json_value"`
			} `json:"vectors"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range doc.Vectors {
			body, err := hex.DecodeString(v.Hex)
			if err != nil {
				t.Fatal(err)
			}
			tr := protocol.DecodeBody(protocol.KeyConsumerGroupDescribe, v.Version, true, body)
			if tr.Err != nil {
				t.Fatalf("%s: %v", v.Name, tr.Err)
			}
			fx := Of(protocol.KeyConsumerGroupDescribe, v.Version, nil, tr)
			want := v.JSONValue.Groups
			if len(fx.Described) != len(want) {
				t.Errorf("%s: %d groups described, want %d", v.Name, len(fx.Described), len(want))
				continue
			}
			for i, wg := range want {
				d := &fx.Described[i]
				if d.ID != wg.GroupID || d.Error != wg.ErrorCode || d.Epoch != wg.GroupEpoch || len(d.Members) != len(wg.Members) {
					t.Errorf("%s: group %+v, want %+v", v.Name, *d, wg)
					continue
				}
				for j, wm := range wg.Members {
					m := &d.Members[j]
					same := func(a *Assignment, w []tps) bool {
						if a == nil || len(a.Partitions) != len(w) {
							return false
						}
						for k := range w {
							if a.Partitions[k].Topic != w[k].TopicName || len(a.Partitions[k].Partitions) != len(w[k].Partitions) {
								return false
							}
							for x := range w[k].Partitions {
								if a.Partitions[k].Partitions[x] != w[k].Partitions[x] {
									return false
								}
							}
						}
						return true
					}
					if m.ID != wm.MemberID || !m.HasEpoch || m.Epoch != wm.MemberEpoch ||
						!same(m.Assignment, wm.Assignment.TopicPartitions) || !same(m.Target, wm.TargetAssignment.TopicPartitions) {
						t.Errorf("%s: member %+v, want %+v", v.Name, *m, wm)
					}
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("no vector had a member")
	}
}

// TestActiveProducersVectors holds the active producers of the
// DescribeProducers responses Kafka's own code encoded to the values
// Kafka's JSON says they carry.
func TestActiveProducersVectors(t *testing.T) {
	dir := os.Getenv("KWIRE_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "kafka-vectors", "messages", "DescribeProducersResponse", "v*.json"))
	if len(files) == 0 {
		t.Skipf("../shared not found at %q (set KWIRE_SHARED): skipping the test over Kafka's vectors", dir)
	}
	n := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Vectors []struct {
				Name      string `json:"name"`
				Version   int16  `json:"version"`
				Hex       string `json:"hex"`
				JSONValue struct {
					Topics []struct {
						Name       string `json:"name"`
						Partitions []struct {
							PartitionIndex  int32            `json:"partitionIndex"`
							ActiveProducers []ActiveProducer `json:"activeProducers"`
						} `json:"partitions"`
					} `json:"topics"`
				} `json:"json_value"`
			} `json:"vectors"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range doc.Vectors {
			body, err := hex.DecodeString(v.Hex)
			if err != nil {
				t.Fatal(err)
			}
			tr := protocol.DecodeBody(protocol.KeyDescribeProducers, v.Version, true, body)
			if tr.Err != nil {
				t.Fatalf("%s: %v", v.Name, tr.Err)
			}
			fx := Of(protocol.KeyDescribeProducers, v.Version, nil, tr)
			for _, wt := range v.JSONValue.Topics {
				for _, wp := range wt.Partitions {
					var p *Partition
					for i := range fx.Topics {
						for j := range fx.Topics[i].Partitions {
							if fx.Topics[i].Name == wt.Name && fx.Topics[i].Partitions[j].Index == wp.PartitionIndex {
								p = &fx.Topics[i].Partitions[j]
							}
						}
					}
					if p == nil {
						t.Errorf("%s: no partition %s[%d]", v.Name, wt.Name, wp.PartitionIndex)
						continue
					}
					if int(p.ActiveProducers) != len(wp.ActiveProducers) || !slices.Equal(p.Producers, wp.ActiveProducers) {
						t.Errorf("%s: %s[%d]: %d %+v, want %+v", v.Name, wt.Name, wp.PartitionIndex, p.ActiveProducers, p.Producers, wp.ActiveProducers)
					}
					n += len(wp.ActiveProducers)
				}
			}
		}
	}
	if n == 0 {
		t.Errorf("no vector had an active producer")
	}
}

// TestInitProducerIdV6Vectors holds the producer facts of the
// InitProducerId v6 requests Kafka's own code encoded (KIP-939) to the
// values Kafka's JSON gives: the transactional ID, producer ID and
// epoch, Enable2Pc and KeepPreparedTxn.
func TestInitProducerIdV6Vectors(t *testing.T) {
	dir := os.Getenv("KWIRE_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared")
	}
	f := filepath.Join(dir, "kafka-vectors", "messages", "InitProducerIdRequest", "v6.json")
	raw, err := os.ReadFile(f)
	if err != nil {
		t.Skipf("../shared not found at %q (set KWIRE_SHARED): skipping the test over Kafka's vectors", dir)
	}
	var doc struct {
		Vectors []struct {
			Name      string `json:"name"`
			Hex       string `json:"hex"`
			JSONValue struct {
				TransactionalID *string `json:"transactionalId"`
				ProducerID      int64   `json:"producerId"`
				ProducerEpoch   int16   `json:"producerEpoch"`
				Enable2Pc       bool    `json:"enable2Pc"`
				KeepPreparedTxn bool    `json:"keepPreparedTxn"`
			} `json:"json_value"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	both := false
	for _, v := range doc.Vectors {
		body, err := hex.DecodeString(v.Hex)
		if err != nil {
			t.Fatal(err)
		}
		tr := protocol.DecodeBody(protocol.KeyInitProducerId, 6, false, body)
		if tr.Err != nil {
			t.Fatalf("%s: %v", v.Name, tr.Err)
		}
		p := Of(protocol.KeyInitProducerId, 6, tr, nil).Producer
		w := v.JSONValue
		if p.HasTxnID != (w.TransactionalID != nil) || w.TransactionalID != nil && p.TransactionalID != *w.TransactionalID ||
			p.ID != w.ProducerID || p.Epoch != w.ProducerEpoch || p.Enable2PC != w.Enable2Pc || p.KeepPrepared != w.KeepPreparedTxn || p.HasOngoing {
			t.Errorf("%s: producer %+v, want %+v", v.Name, p, w)
		}
		both = both || w.Enable2Pc && w.KeepPreparedTxn
	}
	if !both {
		t.Errorf("no vector set Enable2Pc and KeepPreparedTxn")
	}
}
