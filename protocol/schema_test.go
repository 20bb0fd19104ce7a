package protocol

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/protocol/internal/schemagen/gen"
)

const (
	genTrunk = "trunk-678c0e07"
	gen39    = "3.9.0-rc3"
)

// TestTableStats logs the size of the table and checks that its
// per-direction version ranges never overlap, so that Lookup is unambiguous.
func TestTableStats(t *testing.T) {
	keys := map[int16]bool{}
	triples := 0
	type slot struct {
		key  int16
		typ  MessageType
		name string
		v    int16
	}
	served := map[slot]*MessageSchema{}
	for _, m := range Schemas {
		if m.ValidVersions.Empty() {
			t.Errorf("%s (%s) serves no version", m.Name, m.Generation)
			continue
		}
		s := slot{key: m.APIKey, typ: m.Type}
		if m.APIKey < 0 {
			s.name = m.Name
		} else {
			keys[m.APIKey] = true
			triples += int(m.ValidVersions.Max-m.ValidVersions.Min) + 1
		}
		for v := m.ValidVersions.Min; v <= m.ValidVersions.Max; v++ {
			s.v = v
			if prev := served[s]; prev != nil {
				t.Errorf("version %d served by both %s (%s) and %s (%s)", v, prev.Name, prev.Generation, m.Name, m.Generation)
			}
			served[s] = m
		}
	}
	t.Logf("schema table: %d messages, %d API keys, %d (key, version, direction) triples", len(Schemas), len(keys), triples)
	if len(Schemas) == 0 || triples == 0 {
		t.Fatal("empty schema table")
	}
}

func TestLookupChoosesGeneration(t *testing.T) {
	tests := []struct {
		key      int16
		response bool
		v        int16
		name     string
		gen      string
	}{
		{0, false, 0, "ProduceRequest", gen39},
		{0, false, 2, "ProduceRequest", gen39},
		{0, false, 3, "ProduceRequest", genTrunk},
		{0, false, 13, "ProduceRequest", genTrunk},
		{0, true, 2, "ProduceResponse", gen39},
		{0, true, 13, "ProduceResponse", genTrunk},
		{1, false, 3, "FetchRequest", gen39},
		{1, false, 4, "FetchRequest", genTrunk},
		{1, false, 18, "FetchRequest", genTrunk},
		{2, false, 0, "ListOffsetsRequest", gen39},
		{2, false, 11, "ListOffsetsRequest", genTrunk},
		{18, true, 5, "ApiVersionsResponse", genTrunk},
		{74, false, 0, "ListConfigResourcesRequest", genTrunk},
		{74, false, 1, "ListConfigResourcesRequest", genTrunk},
		{74, true, 0, "ListConfigResourcesResponse", genTrunk},
	}
	for _, tt := range tests {
		m := Lookup(tt.key, tt.response, tt.v)
		if m == nil {
			t.Errorf("Lookup(%d, %v, %d) = nil, want %s from %s", tt.key, tt.response, tt.v, tt.name, tt.gen)
			continue
		}
		if m.Name != tt.name || m.Generation != tt.gen || m.APIKey != tt.key {
			t.Errorf("Lookup(%d, %v, %d) = %s key %d from %s, want %s from %s",
				tt.key, tt.response, tt.v, m.Name, m.APIKey, m.Generation, tt.name, tt.gen)
		}
	}
	for _, miss := range []struct {
		key int16
		v   int16
	}{{0, 14}, {1, 19}, {18, 6}, {94, 0}, {-1, 0}, {74, 2}} {
		if m := Lookup(miss.key, false, miss.v); m != nil {
			t.Errorf("Lookup(%d, false, %d) = %s (%s), want nil", miss.key, miss.v, m.Name, m.Generation)
		}
	}
}

// Key 74 was renamed: 3.9 declares ListClientMetricsResources v0 only, and
// trunk's ListConfigResources covers v0-1, so the 3.9 name serves nothing.
func TestKey74Renamed(t *testing.T) {
	for _, m := range Schemas {
		if m.APIKey == 74 && m.Name != "ListConfigResourcesRequest" && m.Name != "ListConfigResourcesResponse" {
			t.Errorf("key 74 served by %s (%s) for %+v", m.Name, m.Generation, m.ValidVersions)
		}
	}
	if got := APIName(74); got != "ListConfigResources" {
		t.Errorf("APIName(74) = %q, want ListConfigResources", got)
	}
}

func TestAPIs(t *testing.T) {
	apis := APIs()
	want := map[int16]APIInfo{
		0:  {Key: 0, Name: "Produce", Versions: Versions{0, 13}, FirstFlexible: 9},
		1:  {Key: 1, Name: "Fetch", Versions: Versions{0, 18}, FirstFlexible: 12},
		2:  {Key: 2, Name: "ListOffsets", Versions: Versions{0, 11}, FirstFlexible: 6},
		4:  {Key: 4, Name: "LeaderAndIsr", Versions: Versions{0, 7}, FirstFlexible: 4},
		5:  {Key: 5, Name: "StopReplica", Versions: Versions{0, 4}, FirstFlexible: 2},
		6:  {Key: 6, Name: "UpdateMetadata", Versions: Versions{0, 8}, FirstFlexible: 6},
		7:  {Key: 7, Name: "ControlledShutdown", Versions: Versions{0, 3}, FirstFlexible: 3},
		18: {Key: 18, Name: "ApiVersions", Versions: Versions{0, 5}, FirstFlexible: 3},
		74: {Key: 74, Name: "ListConfigResources", Versions: Versions{0, 1}, FirstFlexible: 0},
	}
	byKey := map[int16]APIInfo{}
	for i, a := range apis {
		if i > 0 && apis[i-1].Key >= a.Key {
			t.Errorf("APIs not sorted by key: %d before %d", apis[i-1].Key, a.Key)
		}
		byKey[a.Key] = a
		if a.Name == "" || a.Versions.Empty() {
			t.Errorf("APIs()[%d] = %+v: no name or versions", i, a)
		}
		if got := APIName(a.Key); got != a.Name {
			t.Errorf("APIName(%d) = %q, want %q", a.Key, got, a.Name)
		}
		// Every version in the span must be served by a request definition.
		for v := a.Versions.Min; v <= a.Versions.Max; v++ {
			if Lookup(a.Key, false, v) == nil {
				t.Errorf("%s v%d in APIs() span but Lookup finds no request", a.Name, v)
			}
		}
	}
	for k, w := range want {
		if got, ok := byKey[k]; !ok || got != w {
			t.Errorf("APIs() key %d = %+v, want %+v", k, got, w)
		}
	}
	var missing []int16
	for k := int16(0); k <= 93; k++ {
		if _, ok := byKey[k]; !ok {
			missing = append(missing, k)
		}
	}
	// Kafka's API keys 0-93 have no holes across the two generations.
	if len(missing) > 0 {
		t.Errorf("API keys missing from 0-93: %v", missing)
	}
	if len(apis) != 94 {
		t.Errorf("len(APIs()) = %d, want 94 (keys 0-93)", len(apis))
	}
	for _, k := range []int16{-2, -1, 94, 1000, 32767} {
		if got, want := APIName(k), "UNKNOWN("+itoa(k)+")"; got != want {
			t.Errorf("APIName(%d) = %q, want %q", k, got, want)
		}
	}
	apis[0].Name = "changed"
	if APIs()[0].Name == "changed" {
		t.Error("APIs() returns the shared table, not a copy")
	}
}

func itoa(k int16) string {
	if k < 0 {
		return "-" + itoa(-k)
	}
	if k < 10 {
		return string(rune('0' + k))
	}
	return itoa(k/10) + string(rune('0'+k%10))
}

// The ZooKeeper-era inter-broker APIs exist only in 3.9 and keep all their
// versions, in both directions.
func TestRemovedAPIsKept(t *testing.T) {
	for _, tt := range []struct {
		key  int16
		name string
		max  int16
	}{{4, "LeaderAndIsr", 7}, {5, "StopReplica", 4}, {6, "UpdateMetadata", 8}, {7, "ControlledShutdown", 3}} {
		for v := int16(0); v <= tt.max+1; v++ {
			for _, resp := range []bool{false, true} {
				m := Lookup(tt.key, resp, v)
				if v > tt.max {
					if m != nil {
						t.Errorf("%s v%d: found %s, want nil", tt.name, v, m.Name)
					}
					continue
				}
				suffix := "Request"
				if resp {
					suffix = "Response"
				}
				if m == nil || m.Name != tt.name+suffix || m.Generation != gen39 || len(m.Fields) == 0 {
					t.Errorf("%s%s v%d: got %+v", tt.name, suffix, v, m)
				}
			}
		}
	}
}

func fieldByName(fs []Field, name string) *Field {
	for i := range fs {
		if fs[i].Name == name {
			return &fs[i]
		}
	}
	return nil
}

func TestHeaders(t *testing.T) {
	for _, v := range []int16{1, 2} {
		h := LookupName("RequestHeader", v)
		if h == nil || h.Type != TypeHeader || h.Generation != genTrunk || h.APIKey != -1 {
			t.Fatalf("RequestHeader v%d = %+v", v, h)
		}
		c := fieldByName(h.Fields, "ClientId")
		if c == nil {
			t.Fatal("RequestHeader has no ClientId")
		}
		if !c.HasFlexibleVersions || !c.FlexibleVersions.Empty() || c.Kind != TypeString ||
			c.NullableVersions != (Versions{1, MaxVersion}) {
			t.Errorf("RequestHeader.ClientId = %+v, want a nullable string with flexibleVersions none", c)
		}
		if k := fieldByName(h.Fields, "RequestApiKey"); k == nil || k.HasFlexibleVersions || k.Kind != TypeInt16 {
			t.Errorf("RequestHeader.RequestApiKey = %+v", k)
		}
	}
	// Header v0 (ControlledShutdown v0 only) was dropped by Kafka 4.0.
	if h := LookupName("RequestHeader", 0); h == nil || h.Generation != gen39 || h.ValidVersions != (Versions{0, 0}) {
		t.Errorf("RequestHeader v0 = %+v, want the 3.9 definition trimmed to v0", h)
	}
	if h := LookupName("ResponseHeader", 1); h == nil || h.Type != TypeHeader || h.FlexibleVersions != (Versions{1, MaxVersion}) {
		t.Errorf("ResponseHeader v1 = %+v", h)
	}
	if h := LookupName("RequestHeader", 3); h != nil {
		t.Errorf("RequestHeader v3 = %s (%s), want nil", h.Name, h.Generation)
	}
}

func TestDataStructs(t *testing.T) {
	for _, name := range []string{
		"ConsumerProtocolSubscription", "ConsumerProtocolAssignment", "DefaultPrincipalData",
		"EndTxnMarker", "LeaderChangeMessage", "SnapshotHeaderRecord", "SnapshotFooterRecord",
		"KRaftVersionRecord", "VotersRecord",
	} {
		m := LookupName(name, 0)
		if m == nil || m.Type != TypeData || m.APIKey != -1 || len(m.Fields) == 0 {
			t.Errorf("LookupName(%q, 0) = %+v, want a data struct with fields", name, m)
		}
	}
}

func TestTaggedFields(t *testing.T) {
	for _, v := range []int16{3, 4, 5} {
		m := Lookup(18, true, v)
		if m == nil {
			t.Fatalf("ApiVersionsResponse v%d missing", v)
		}
		f := fieldByName(m.Fields, "SupportedFeatures")
		if f == nil || f.Tag != 0 || f.TaggedVersions != (Versions{3, MaxVersion}) ||
			f.Kind != TypeArray || f.Elem != TypeStruct || f.StructName != "SupportedFeatureKey" || len(f.Fields) != 3 {
			t.Errorf("ApiVersionsResponse v%d SupportedFeatures = %+v", v, f)
		}
		e := fieldByName(m.Fields, "FinalizedFeaturesEpoch")
		if e == nil || e.Tag != 1 || e.Default != "-1" || e.Kind != TypeInt64 {
			t.Errorf("ApiVersionsResponse v%d FinalizedFeaturesEpoch = %+v", v, e)
		}
		if k := fieldByName(m.Fields, "ErrorCode"); k == nil || k.Tag != -1 || !k.TaggedVersions.Empty() {
			t.Errorf("ApiVersionsResponse v%d ErrorCode = %+v, want untagged", v, k)
		}
	}
}

// Fields that name a common struct carry its fields inline, and the message
// lists the common struct too.
func TestCommonStructsResolved(t *testing.T) {
	n := 0
	for _, m := range Schemas {
		common := map[string]Struct{}
		for _, s := range m.CommonStructs {
			if len(s.Fields) == 0 {
				t.Errorf("%s (%s): common struct %s has no fields", m.Name, m.Generation, s.Name)
			}
			common[s.Name] = s
		}
		walkFields(m.Fields, func(f *Field) {
			s, ok := common[f.StructName]
			if !ok {
				return
			}
			n++
			if len(f.Fields) != len(s.Fields) {
				t.Errorf("%s.%s: %d fields inline, common struct %s has %d", m.Name, f.Name, len(f.Fields), s.Name, len(s.Fields))
				return
			}
			for i := range f.Fields {
				if f.Fields[i].Name != s.Fields[i].Name || f.Fields[i].Type != s.Fields[i].Type {
					t.Errorf("%s.%s field %d = %s, common struct has %s", m.Name, f.Name, i, f.Fields[i].Name, s.Fields[i].Name)
				}
			}
		})
	}
	if n == 0 {
		t.Error("no field refers to a common struct")
	}
	m := Lookup(24, false, 4) // AddPartitionsToTxn v4 uses the common struct AddPartitionsToTxnTopic
	if m == nil || len(m.CommonStructs) == 0 {
		t.Fatalf("AddPartitionsToTxnRequest v4 = %+v, want common structs", m)
	}
}

func walkFields(fs []Field, fn func(*Field)) {
	for i := range fs {
		fn(&fs[i])
		walkFields(fs[i].Fields, fn)
	}
}

// Every field's kind is resolved, every struct field has fields, and
// tags agree with taggedVersions.
func TestFieldInvariants(t *testing.T) {
	count := 0
	check := func(m *MessageSchema, fs []Field) {
		walkFields(fs, func(f *Field) {
			count++
			where := m.Name + "(" + m.Generation + ")." + f.Name
			if f.Kind <= TypeInvalid || f.Kind > TypeArray {
				t.Errorf("%s: invalid kind %d for type %q", where, f.Kind, f.Type)
			}
			isStruct := f.Kind == TypeStruct || (f.Kind == TypeArray && f.Elem == TypeStruct)
			switch {
			case f.Kind == TypeArray && (f.Elem <= TypeInvalid || f.Elem >= TypeArray):
				t.Errorf("%s: array of invalid kind %d", where, f.Elem)
			case f.Kind != TypeArray && f.Elem != TypeInvalid:
				t.Errorf("%s: non-array with element kind %d", where, f.Elem)
			case isStruct && (len(f.Fields) == 0 || f.StructName == ""):
				t.Errorf("%s: struct field %q without fields", where, f.Type)
			case !isStruct && (len(f.Fields) > 0 || f.StructName != ""):
				t.Errorf("%s: %q has struct fields", where, f.Type)
			}
			if (f.Tag >= 0) == f.TaggedVersions.Empty() || f.Tag < -1 {
				t.Errorf("%s: tag %d with taggedVersions %+v", where, f.Tag, f.TaggedVersions)
			}
			if f.Versions.Empty() {
				t.Errorf("%s: no versions", where)
			}
			if !f.HasFlexibleVersions && !f.FlexibleVersions.Empty() {
				t.Errorf("%s: FlexibleVersions %+v without HasFlexibleVersions", where, f.FlexibleVersions)
			}
		})
	}
	for _, m := range Schemas {
		check(m, m.Fields)
		for _, s := range m.CommonStructs {
			check(m, s.Fields)
		}
	}
	if count == 0 {
		t.Fatal("no fields in the table")
	}
}

// sharedDir returns $KWIRE_SHARED or ../shared next to the module root
// (this package's parent folder), or "" when neither exists.
func schemaSharedDir(t *testing.T) string {
	dir := os.Getenv("KWIRE_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared")
	}
	if _, err := os.Stat(filepath.Join(dir, "kafka-schemas")); err != nil {
		return ""
	}
	return dir
}

// TestGeneratedUpToDate regenerates the table in memory and compares it with
// the committed zz_schema.go: CI fails when they differ.
func TestGeneratedUpToDate(t *testing.T) {
	shared := schemaSharedDir(t)
	if shared == "" {
		t.Skip("../shared/kafka-schemas not found (set KWIRE_SHARED): cannot regenerate the schema table")
	}
	var inputs []gen.Input
	for _, g := range gen.DefaultGenerations {
		inputs = append(inputs, gen.Input{Name: g, FS: os.DirFS(filepath.Join(shared, "kafka-schemas", g))})
	}
	// kwire's own definitions (protocol/schemas; this package's folder is
	// the test's working directory).
	inputs = append(inputs, gen.Input{Name: gen.OwnName, FS: os.DirFS("schemas"), Own: true})
	want, err := gen.Generate(inputs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("zz_schema.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("zz_schema.go is out of date: run `go generate ./protocol` and commit the result")
	}
}
