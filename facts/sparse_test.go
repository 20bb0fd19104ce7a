package facts

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kwire/kwire/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// sharedVectors returns every body vector (one with an API key) under
// $KWIRE_SHARED or ../shared beside the module, skipping the test when
// they are missing.
func sharedVectors(t *testing.T) []bodyVector {
	t.Helper()
	dir := os.Getenv("KWIRE_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "kafka-vectors", "messages", "*", "v*.json"))
	if len(files) == 0 {
		t.Skipf("../shared not found at %q (set KWIRE_SHARED): skipping the test over Kafka's vectors", dir)
	}
	var out []bodyVector
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Vectors []struct {
				Name      string `json:"name"`
				APIKey    *int16 `json:"api_key"`
				Direction string `json:"direction"`
				Version   int16  `json:"version"`
				Hex       string `json:"hex"`
			} `json:"vectors"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range doc.Vectors {
			if v.APIKey == nil {
				continue
			}
			b, err := hex.DecodeString(v.Hex)
			if err != nil {
				t.Fatalf("%s %s: %v", f, v.Name, err)
			}
			out = append(out, bodyVector{name: filepath.Base(filepath.Dir(f)) + "/" + v.Name, key: *v.APIKey,
				ver: v.Version, response: v.Direction == "response", body: b})
		}
	}
	return out
}

type bodyVector struct {
	name     string
	key, ver int16
	response bool
	body     []byte
}

// treeNodes counts the nodes of a tree.
func treeNodes(n *protocol.Node) int {
	if n == nil {
		return 0
	}
	k := 1
	for _, c := range n.Children {
		k += treeNodes(c)
	}
	return k
}

func errText(t *protocol.Tree) string {
	if t.Err == nil {
		return ""
	}
	return t.Err.Error()
}

func firstErrText(t *protocol.Tree) string {
	if n := t.FirstError(); n != nil {
		return n.Name + ": " + n.Note
	}
	return ""
}

// agree holds a sparse tree to the full one: the same facts, error and
// first node error.
func agree(t *testing.T, name string, key, ver int16, response bool, full, sparse *protocol.Tree) {
	t.Helper()
	var fullFx, sparseFx *Exchange
	if response {
		fullFx, sparseFx = Of(key, ver, nil, full), Of(key, ver, nil, sparse)
	} else {
		fullFx, sparseFx = Of(key, ver, full, nil), Of(key, ver, sparse, nil)
	}
	if !reflect.DeepEqual(fullFx, sparseFx) {
		t.Errorf("%s: facts differ\nfull:   %+v\nsparse: %+v", name, fullFx, sparseFx)
	}
	if a, b := errText(full), errText(sparse); a != b {
		t.Errorf("%s: error %q, sparse %q", name, a, b)
	}
	if a, b := firstErrText(full), firstErrText(sparse); a != b {
		t.Errorf("%s: first node error %q, sparse %q", name, a, b)
	}
}

// prune removes from n's subtree the nodes whose role is in drop: the
// full tree as a sparse decode with SparseDrop drop sees it.
func prune(n *protocol.Node, drop *protocol.RoleSet) {
	if n == nil {
		return
	}
	kept := n.Children[:0]
	for _, c := range n.Children {
		if r := c.Role(); r != protocol.RoleNone && drop.Has(r) && c.Field != nil && c.Field.ElemOf == nil {
			continue
		}
		prune(c, drop)
		kept = append(kept, c)
	}
	n.Children = kept
}

// TestSparseFactsAgree: on every Kafka vector, whole and cut short at
// every eighth of its length, a sparse decode (protocol.Decoder.Sparse)
// gives the facts, the error and the first node error of the full
// decode; with SparseDrop, those of the full tree without the dropped
// roles' fields. Sparse trees keep fewer nodes, and an ApiVersions
// response without its ranges a handful.
func TestSparseFactsAgree(t *testing.T) {
	vs := sharedVectors(t)
	drop := protocol.NewRoleSet(protocol.RoleAPIRanges, protocol.RoleSupportedFeatures, protocol.RoleFinalizedFeatures)
	full := protocol.Decoder{Records: true}
	sparse := protocol.Decoder{Records: true, Sparse: true}
	dropping := protocol.Decoder{Records: true, Sparse: true, SparseDrop: drop}
	var nFull, nSparse, nAV int
	for _, v := range vs {
		for cut := 8; cut >= 1; cut-- {
			b := v.body[:len(v.body)*cut/8]
			name := v.name
			if cut < 8 {
				name = fmt.Sprintf("%s cut to %d of %d bytes", v.name, len(b), len(v.body))
			}
			ft := full.DecodeBody(v.key, v.ver, v.response, b)
			st := sparse.DecodeBody(v.key, v.ver, v.response, b)
			agree(t, name, v.key, v.ver, v.response, ft, st)
			if cut == 8 {
				nFull += treeNodes(ft.Root)
				nSparse += treeNodes(st.Root)
			}
			dt := dropping.DecodeBody(v.key, v.ver, v.response, b)
			prune(ft.Root, &drop)
			agree(t, name+" (SparseDrop)", v.key, v.ver, v.response, ft, dt)
			if cut == 8 && v.key == protocol.KeyApiVersions && v.response {
				nAV = max(nAV, treeNodes(dt.Root))
			}
		}
	}
	t.Logf("%d vectors: %d nodes in full trees, %d in sparse ones; ApiVersions responses without ranges at most %d", len(vs), nFull, nSparse, nAV)
	if nSparse >= nFull {
		t.Errorf("sparse trees keep %d of %d nodes: the sparse decode skims nothing", nSparse, nFull)
	}
	if nAV == 0 || nAV > 12 {
		t.Errorf("an ApiVersions response without its ranges keeps up to %d nodes, want 1 to 12", nAV)
	}
}

// TestSparseApiVersions: a broker's ApiVersions response of 60 ranges
// decodes, without them, to a handful of nodes that still give its error
// code, throttle and features epoch.
func TestSparseApiVersions(t *testing.T) {
	resp := kmsg.NewApiVersionsResponse()
	resp.Version = 3
	resp.ErrorCode = 35 // UNSUPPORTED_VERSION
	resp.ThrottleMillis = 7
	resp.FinalizedFeaturesEpoch = 12
	for k := range int16(60) {
		resp.ApiKeys = append(resp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k, MinVersion: 0, MaxVersion: 9})
	}
	b := resp.AppendTo(nil)
	d := protocol.Decoder{Sparse: true, SparseDrop: protocol.NewRoleSet(protocol.RoleAPIRanges)}
	tr := d.DecodeBody(protocol.KeyApiVersions, 3, true, b)
	if tr.Err != nil {
		t.Fatal(tr.Err)
	}
	full := protocol.DecodeBody(protocol.KeyApiVersions, 3, true, b)
	if n, m := treeNodes(tr.Root), treeNodes(full.Root); n > 12 || m < 240 {
		t.Errorf("nodes: sparse %d (want at most 12), full %d (want 240 or more)", n, m)
	}
	fx := Of(protocol.KeyApiVersions, 3, nil, tr)
	if fx.ThrottleMs != 7 || len(fx.Errors) != 1 || fx.Errors[0].Code != 35 {
		t.Errorf("throttle %d, errors %+v; want 7 and UNSUPPORTED_VERSION", fx.ThrottleMs, fx.Errors)
	}
	if fx.APIVersions == nil || fx.APIVersions.Error != 35 || fx.APIVersions.FinalizedEpoch != 12 || len(fx.APIVersions.Ranges) != 0 {
		t.Errorf("APIVersions %+v: want error 35, epoch 12, no ranges", fx.APIVersions)
	}
	if full := Of(protocol.KeyApiVersions, 3, nil, full); len(full.APIVersions.Ranges) != 60 {
		t.Errorf("full decode: %d ranges, want 60", len(full.APIVersions.Ranges))
	}

	// Cut at every byte, and with a tagged field in one range: the
	// skimmed ranges fail where and as the full decode's do.
	resp.ApiKeys[30].UnknownTags.Set(9, []byte("tag"))
	b = resp.AppendTo(nil)
	drop := protocol.NewRoleSet(protocol.RoleAPIRanges)
	for n := range len(b) + 1 {
		full := protocol.DecodeBody(protocol.KeyApiVersions, 3, true, b[:n])
		prune(full.Root, &drop)
		agree(t, fmt.Sprintf("ApiVersions v3 cut to %d of %d bytes", n, len(b)), protocol.KeyApiVersions, 3, true,
			full, d.DecodeBody(protocol.KeyApiVersions, 3, true, b[:n]))
	}
}

// FuzzSparseAgree holds sparse decodes to full ones on any body of any
// API key and version: `go test ./facts -fuzz FuzzSparseAgree`. Its seeds
// are a few bodies kmsg encodes; the vectors' run is TestSparseFactsAgree.
func FuzzSparseAgree(f *testing.F) {
	av := kmsg.NewApiVersionsResponse()
	av.Version = 3
	av.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MaxVersion: 11}, {ApiKey: 1, MaxVersion: 17}}
	f.Add(int16(protocol.KeyApiVersions), int16(3), true, av.AppendTo(nil))
	md := kmsg.NewMetadataResponse()
	md.Version = 12
	md.Topics = []kmsg.MetadataResponseTopic{{Topic: kmsg.StringPtr("t"), Partitions: []kmsg.MetadataResponseTopicPartition{{Partition: 3, Replicas: []int32{1, 2}}}}}
	f.Add(int16(protocol.KeyMetadata), int16(12), true, md.AppendTo(nil))
	drop := protocol.NewRoleSet(protocol.RoleAPIRanges, protocol.RoleSupportedFeatures, protocol.RoleFinalizedFeatures)
	f.Fuzz(func(t *testing.T, key, ver int16, response bool, b []byte) {
		key, ver = key&127, ver&31
		full := protocol.Decoder{Records: true}
		sparse := protocol.Decoder{Records: true, Sparse: true}
		dropping := protocol.Decoder{Records: true, Sparse: true, SparseDrop: drop}
		ft := full.DecodeBody(key, ver, response, b)
		agree(t, "fuzz", key, ver, response, ft, sparse.DecodeBody(key, ver, response, b))
		prune(ft.Root, &drop)
		agree(t, "fuzz (SparseDrop)", key, ver, response, ft, dropping.DecodeBody(key, ver, response, b))
	})
}
