package protocol

import (
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkPlan holds plan p, of fields in version ver of a message flexible
// in ver when flex, decoded at depth, to the schema: its fields are the
// fields present and not tagged in ver, in order, each with what ver says
// of it; its tagged fields those tagged in ver; its counts those of the
// fields. It returns the number of field plans checked.
func checkPlan(t *testing.T, where string, p *structPlan, fields []Field, ver int16, flex bool, depth int) int {
	t.Helper()
	var present, tagged []*Field
	for i := range fields {
		f := &fields[i]
		switch {
		case !f.Versions.Contains(ver):
		case f.TaggedVersions.Contains(ver):
			if f.Tag >= 0 {
				tagged = append(tagged, f)
			}
		default:
			present = append(present, f)
		}
	}
	if len(p.fields) != len(present) || len(p.tagged) != len(tagged) {
		t.Fatalf("%s: plan has %d fields and %d tagged, the schema %d and %d", where, len(p.fields), len(p.tagged), len(present), len(tagged))
	}
	kept, keptRoles := 0, RoleSet{}
	n := 0
	for i, f := range present {
		n += checkFieldPlan(t, where, &p.fields[i], f, ver, flex, depth)
		if !f.skim {
			kept++
			if f.Role != RoleNone {
				keptRoles[f.Role>>6&1] |= 1 << (f.Role & 63)
			}
		}
	}
	for i, f := range tagged {
		fp := &p.tagged[i]
		if fp.tag != f.Tag {
			t.Errorf("%s.%s: tag %d, want %d", where, f.Name, fp.tag, f.Tag)
		}
		n += checkFieldPlan(t, where, fp, f, ver, flex, depth)
	}
	buffer := 0
	if flex {
		buffer = 1
	}
	if p.kids != len(present)+buffer || p.kidsKept != kept+buffer || p.keptRoles != keptRoles {
		t.Errorf("%s: kids %d, kept %d, roles %v; want %d, %d, %v", where, p.kids, p.kidsKept, p.keptRoles, len(present)+buffer, kept+buffer, keptRoles)
	}
	if p.config != isConfigEntry(fields) || p.fixed != fixedFields(fields, ver) {
		t.Errorf("%s: config %v, fixed %d; want %v, %d", where, p.config, p.fixed, isConfigEntry(fields), fixedFields(fields, ver))
	}
	return n
}

func checkFieldPlan(t *testing.T, where string, fp *fieldPlan, f *Field, ver int16, flex bool, depth int) int {
	t.Helper()
	where += "." + f.Name
	if fp.f != f {
		t.Fatalf("%s: plan of field %s", where, fp.f.Name)
	}
	nullable, compact := f.NullableVersions.Contains(ver), compactIn(f, flex, ver)
	if fp.nullable != nullable || fp.compact != compact || fp.skim != f.skim || fp.role != f.Role {
		t.Errorf("%s: nullable %v compact %v skim %v role %v; want %v %v %v %v", where, fp.nullable, fp.compact, fp.skim, fp.role, nullable, compact, f.skim, f.Role)
	}
	n := 1
	switch f.Kind {
	case TypeString, TypeBytes, TypeRecords:
		if fp.typ != wireTypeName(f.Kind, compact, nullable) {
			t.Errorf("%s: type %q", where, fp.typ)
		}
	case TypeStruct:
		n += checkSub(t, where, fp, f, ver, flex, depth)
	case TypeArray:
		if fp.elem == nil || fp.elem != f.elem {
			t.Fatalf("%s: element field %p, want the table's %p", where, fp.elem, f.elem)
		}
		if want := minSize(f.elem, false, ver, flex, depth); fp.minElem != want || want < 1 {
			t.Errorf("%s: element size %d, want %d", where, fp.minElem, want)
		}
		if f.Elem == TypeStruct {
			n += checkSub(t, where, fp, f, ver, flex, depth)
		} else if fp.elemPlan == nil || fp.elemPlan.f != f.elem || fp.elemPlan.nullable || fp.elemPlan.compact != compactIn(f.elem, flex, ver) {
			t.Errorf("%s: element plan %+v", where, fp.elemPlan)
		}
	}
	return n
}

func checkSub(t *testing.T, where string, fp *fieldPlan, f *Field, ver int16, flex bool, depth int) int {
	t.Helper()
	if depth >= maxDepth {
		if fp.sub != nil {
			t.Errorf("%s: a plan past maxDepth", where)
		}
		return 0
	}
	if fp.sub == nil {
		t.Fatalf("%s: no plan for the struct's fields", where)
	}
	return checkPlan(t, where, fp.sub, f.Fields, ver, flex, depth+1)
}

// TestPlanMatchesSchema holds the plan of every version of every message
// of the table to the schema, and each plan to its slot: built once,
// handed out again.
func TestPlanMatchesSchema(t *testing.T) {
	versions, fields := 0, 0
	for _, m := range Schemas {
		if len(m.plans) != int(m.ValidVersions.Max-m.ValidVersions.Min+1) || len(m.plans) > maxPlanVersions {
			t.Errorf("%s: %d plan slots for versions %v", m.Name, len(m.plans), m.ValidVersions)
		}
		for v := m.ValidVersions.Min; v <= m.ValidVersions.Max; v++ {
			p := planOf(m, v)
			fields += checkPlan(t, fmt.Sprintf("%s v%d", m.Name, v), p, m.Fields, v, m.FlexibleVersions.Contains(v), 1)
			if planOf(m, v) != p {
				t.Errorf("%s v%d: a second plan", m.Name, v)
			}
			versions++
		}
	}
	t.Logf("%d message versions, %d field plans of %d bytes", versions, fields, unsafe.Sizeof(fieldPlan{}))
	if versions < 700 || fields < 6000 {
		t.Errorf("%d message versions, %d field plans: the table is not all there", versions, fields)
	}
}

// TestPlanValues pins a few plans by hand: an ApiVersions response's
// keys (fixed-size elements of 6 bytes, 7 with their tagged-field count
// when flexible) and its tagged features, a Produce request's records.
func TestPlanValues(t *testing.T) {
	for _, c := range []struct {
		ver       int16
		min, kids int
		tagged    []int32
	}{
		{0, 6, 2, nil},
		{2, 6, 3, nil},
		{3, 7, 4, []int32{0, 1, 2, 3}},
		{4, 7, 4, []int32{0, 1, 2, 3}},
	} {
		p := planOf(Lookup(KeyApiVersions, true, c.ver), c.ver)
		keys := p.fields[1]
		if keys.f.Name != "ApiKeys" || keys.minElem != c.min || keys.sub.fixed != 6 || len(keys.sub.fields) != 3 {
			t.Errorf("v%d: ApiKeys %s, element at least %d bytes, fixed %d, %d fields; want ApiKeys, %d, 6, 3", c.ver, keys.f.Name, keys.minElem, keys.sub.fixed, len(keys.sub.fields), c.min)
		}
		if p.kids != c.kids {
			t.Errorf("v%d: %d children, want %d", c.ver, p.kids, c.kids)
		}
		var tags []int32
		for _, fp := range p.tagged {
			tags = append(tags, fp.tag)
		}
		if fmt.Sprint(tags) != fmt.Sprint(c.tagged) {
			t.Errorf("v%d: tags %v, want %v", c.ver, tags, c.tagged)
		}
		if fp := p.taggedField(1); c.ver >= 3 && (fp == nil || fp.f.Name != "FinalizedFeaturesEpoch") {
			t.Errorf("v%d: tag 1 is %+v, want FinalizedFeaturesEpoch", c.ver, fp)
		}
		if p.taggedField(7) != nil || p.taggedField(1<<31) != nil {
			t.Errorf("v%d: an unknown tag found", c.ver)
		}
	}
	p := planOf(Lookup(KeyProduce, false, 9), 9)
	parts := p.fields[3].sub.fields[1].sub
	if rec := parts.fields[1]; rec.f.Name != "Records" || rec.typ != "compact_records" || !rec.nullable || !rec.compact {
		t.Errorf("Produce v9 records: %s %q nullable %v compact %v", rec.f.Name, rec.typ, rec.nullable, rec.compact)
	}
}

// TestPlanConcurrent builds the plans of a fresh copy of the table's
// slots from several goroutines at once: each version gets one plan,
// whoever built it.
func TestPlanConcurrent(t *testing.T) {
	m := *Lookup(KeyMetadata, true, 12)
	m.plans = planSlots(&m)
	const workers = 8
	got := make([][]*structPlan, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := m.ValidVersions.Min; v <= m.ValidVersions.Max; v++ {
				got[w] = append(got[w], planOf(&m, v))
			}
		}()
	}
	wg.Wait()
	for w := 1; w < workers; w++ {
		for i := range got[0] {
			if got[w][i] != got[0][i] {
				t.Fatalf("version %d: worker %d has another plan", int(m.ValidVersions.Min)+i, w)
			}
		}
	}
	for i := range m.plans {
		if m.plans[i].Load() != got[0][i] {
			t.Fatalf("version %d: the slot holds another plan", int(m.ValidVersions.Min)+i)
		}
	}
}

// TestPlanOutsideTable: a schema built outside the table has no slots;
// it decodes by a plan built for the call.
func TestPlanOutsideTable(t *testing.T) {
	m := &MessageSchema{Name: "Small", APIKey: -1, Type: TypeData, ValidVersions: Versions{0, 0}, FlexibleVersions: NoVersions,
		Fields: []Field{{Name: "Names", Type: "[]string", Kind: TypeArray, Elem: TypeString, Versions: Versions{0, MaxVersion}, NullableVersions: NoVersions, TaggedVersions: NoVersions, Tag: -1}}}
	if p := planOf(m, 0); m.plans != nil || len(p.fields) != 1 || p.fields[0].elem == nil || p.fields[0].minElem != 2 || p.fields[0].elemPlan.typ != "string" {
		t.Fatalf("plan %+v", p)
	}
	// Names: 2 elements, "x", then a length of 5 with nothing left.
	b := unhex(t, "00000002 0001 78 0005")
	var ip interp
	ip.reset(&Decoder{}, b, "struct")
	root := ip.newNode()
	ip.message(m, 0, root, len(b), true)
	want := "Small v0 names[1]: length 5 exceeds the 0 bytes left (offset 0x7)"
	if ip.err == nil || ip.err.Error() != want {
		t.Errorf("error %v, want %s", ip.err, want)
	}
	if a := root.Children[0]; a.Name != "Names" || a.Int != 2 || len(a.Children) != 1 || a.Children[0].Str != "x" || a.Children[0].Name != "[0]" {
		t.Errorf("array %+v", a)
	}
}

// TestErrorPaths: a failure's path names the fields it is in, with their
// elements, in a tagged field or not; a sparse decode, which reads many
// of them without nodes (sparse.go), fails where the full one does,
// with the same path, for every cut of these bodies and every byte
// changed to 0x7f or 0xff (a length or count too large); the node cap, which a
// full decode reaches at every node, fails in elements of scalar arrays
// too.
func TestErrorPaths(t *testing.T) {
	av := kmsgResponseFrame(&kmsg.ApiVersionsResponse{Version: 3,
		ApiKeys:           []kmsg.ApiVersionsResponseApiKey{{ApiKey: 0, MaxVersion: 9}, {ApiKey: 1, MaxVersion: 12}},
		SupportedFeatures: []kmsg.ApiVersionsResponseSupportedFeature{{Name: "metadata.version", MinVersion: 1, MaxVersion: 20}},
	}, 1)[8:]
	md := kmsg.NewMetadataResponse()
	md.Version = 12
	md.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 1, Host: "b1", Port: 9092}}
	tp := kmsg.NewMetadataResponseTopic()
	tp.Topic = kmsg.StringPtr("orders")
	for p := range 2 {
		pp := kmsg.NewMetadataResponseTopicPartition()
		pp.Partition, pp.Replicas, pp.ISR = int32(p), []int32{1, 2, 3}, []int32{1, 2, 3}
		tp.Partitions = append(tp.Partitions, pp)
	}
	md.Topics = append(md.Topics, tp)
	mb := md.AppendTo(nil)
	for _, c := range []struct {
		key, ver int16
		body     []byte
		want     []string // among the paths of cuts and changed bytes
		capped   []string // among the paths of full decodes at every node cap
	}{
		{KeyApiVersions, 3, av, []string{
			"ApiVersionsResponse v3 apiKeys",
			"ApiVersionsResponse v3 supportedFeatures[0].name",
			"ApiVersionsResponse v3 throttleTimeMs",
		}, []string{
			"ApiVersionsResponse v3 apiKeys[1].maxVersion",
			"ApiVersionsResponse v3 apiKeys[1]",
			"ApiVersionsResponse v3 supportedFeatures[0].maxVersion",
		}},
		{KeyMetadata, 12, mb, []string{
			"MetadataResponse v12 brokers[0].host",
			"MetadataResponse v12 topics[0].name",
			"MetadataResponse v12 topics[0].partitions[1].isrNodes",
		}, []string{
			"MetadataResponse v12 topics[0].partitions[1].replicaNodes[2]",
			"MetadataResponse v12 topics[0].partitions[0].offlineReplicas",
		}},
	} {
		seen := map[string]bool{}
		full, sparse := Decoder{}, Decoder{Sparse: true, SparseDrop: NewRoleSet(RoleAPIRanges)}
		decode := func(what string, b []byte) {
			ft, st := full.DecodeBody(c.key, c.ver, true, b), sparse.DecodeBody(c.key, c.ver, true, b)
			if (ft.Err == nil) != (st.Err == nil) || ft.Err != nil && ft.Err.Error() != st.Err.Error() {
				t.Fatalf("%s: full %v, sparse %v", what, ft.Err, st.Err)
			}
			if ft.Err != nil {
				seen[ft.Err.Path] = true
			}
		}
		for l := range len(c.body) {
			decode(fmt.Sprintf("cut at %d", l), c.body[:l])
			for _, x := range []byte{0x7f, 0xff} {
				b := append([]byte(nil), c.body...)
				b[l] = x
				decode(fmt.Sprintf("byte %d set to %#x", l, x), b)
			}
		}
		for _, w := range c.want {
			if !seen[w] {
				t.Errorf("nothing failed at %s; paths %v", w, seen)
			}
		}
		capped := map[string]bool{}
		for k := 2; ; k++ {
			d := Decoder{MaxNodes: k}
			tr := d.DecodeBody(c.key, c.ver, true, c.body)
			if tr.Err == nil {
				break
			}
			capped[tr.Err.Path] = true
		}
		for _, w := range c.capped {
			if !capped[w] {
				t.Errorf("no node cap failed at %s; paths %v", w, capped)
			}
		}
	}
}

// BenchmarkDecodePlans decodes small responses of many structs, as a
// broker's many short connections send them: an ApiVersions response of
// 60 keys, whole and sparse (the one-line mode skims its ranges), and a
// Metadata response of 20 partitions.
func BenchmarkDecodePlans(b *testing.B) {
	av := apiVersionsResponse(1, 3, 60)[8:]
	md := kmsg.NewMetadataResponse()
	md.Version = 12
	md.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 1, Host: "b1", Port: 9092}, {NodeID: 2, Host: "b2", Port: 9092}}
	tp := kmsg.NewMetadataResponseTopic()
	tp.Topic = kmsg.StringPtr("orders")
	for p := range 20 {
		pp := kmsg.NewMetadataResponseTopicPartition()
		pp.Partition, pp.Leader, pp.Replicas, pp.ISR = int32(p), int32(p%2+1), []int32{1, 2}, []int32{1, 2}
		tp.Partitions = append(tp.Partitions, pp)
	}
	md.Topics = append(md.Topics, tp)
	mb := md.AppendTo(nil)
	for _, c := range []struct {
		name     string
		d        Decoder
		key, ver int16
		body     []byte
	}{
		{"ApiVersionsResponse_v3", Decoder{}, KeyApiVersions, 3, av},
		{"ApiVersionsResponse_v3_sparse", Decoder{Sparse: true, SparseDrop: NewRoleSet(RoleAPIRanges)}, KeyApiVersions, 3, av},
		{"MetadataResponse_v12", Decoder{}, KeyMetadata, 12, mb},
		{"MetadataResponse_v12_sparse", Decoder{Sparse: true}, KeyMetadata, 12, mb},
	} {
		if tree := c.d.DecodeBody(c.key, c.ver, true, c.body); tree.Err != nil {
			b.Fatalf("%s: %v", c.name, tree.Err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				c.d.DecodeBody(c.key, c.ver, true, c.body).Release()
			}
		})
	}
}
