// Package gen turns Apache Kafka's message JSON files
// (clients/src/main/resources/common/message/*.json) into the Go source of
// kwire's schema table, protocol/zz_schema.go: a composite literal of
// protocol.MessageSchema values. It is the library behind
// protocol/internal/schemagen; it does not import package protocol, so the
// protocol tests can regenerate the table in memory and compare it with the
// committed file.
//
// Generations are combined as ../shared/kafka-schemas/README.md says: for an
// API key, direction and version, the newest generation whose validVersions
// contains the version serves it. Older generations are emitted with their
// ValidVersions trimmed to the versions newer ones lack, one MessageSchema per
// contiguous range; headers and data structs are combined by name the same
// way. Fields are never merged across generations.
//
// kwire's own definitions (Input.Own, protocol/schemas: the structs Kafka
// embeds in BYTES fields without writing a JSON file for them, as Kafka
// Connect's group protocol) are read the same way, after the generations;
// one that Kafka's generations also define is an error, so that Kafka's
// own definition is never shadowed.
//
// Every input error (unknown type, unresolvable struct name, bad version
// string, unknown JSON key, duplicate message) is reported with the
// generation and file name.
package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// DefaultGenerations are the folders under ../shared/kafka-schemas that the
// committed table is generated from, newest first.
var DefaultGenerations = []string{"trunk-678c0e07", "3.9.0-rc3"}

// OwnName is the generation name of kwire's own definitions, and OwnDir
// their folder, relative to the module root.
const (
	OwnName = "kwire"
	OwnDir  = "protocol/schemas"
)

// Input is one generation of message JSON files.
type Input struct {
	Name string // generation name recorded in MessageSchema.Generation
	FS   fs.FS  // a folder holding *.json message files at its root
	// Own marks kwire's own definitions (OwnDir): given after Kafka's
	// generations, they may not define what those do.
	Own bool
}

// message types, in output order.
var messageTypes = map[string]string{
	"request":  "TypeRequest",
	"response": "TypeResponse",
	"header":   "TypeHeader",
	"data":     "TypeData",
}

// primitive Kafka types and the protocol.TypeKind constant each resolves to.
var primitives = map[string]string{
	"bool":    "TypeBool",
	"int8":    "TypeInt8",
	"int16":   "TypeInt16",
	"uint16":  "TypeUint16",
	"int32":   "TypeInt32",
	"uint32":  "TypeUint32",
	"int64":   "TypeInt64",
	"float64": "TypeFloat64",
	"uuid":    "TypeUUID",
	"string":  "TypeString",
	"bytes":   "TypeBytes",
	"records": "TypeRecords",
}

type field struct {
	name, typ        string
	kind, elem       string // protocol.TypeKind constant names; elem "" unless array
	versions         vrange
	nullable, tagged vrange
	tag              int
	flex             vrange
	hasFlex          bool
	entity, def      string
	structName       string
	fields           []*field
}

type strct struct {
	name     string
	versions vrange
	fields   []*field
}

type message struct {
	file, gen  string
	name, typ  string
	apiKey     int // -1 for headers and data
	valid      vrange
	flex       vrange
	headerVers map[int]int
	fields     []*field
	common     []*strct
}

// Generate reads every *.json file of every input (newest first), combines
// the generations and returns the gofmt'ed source of zz_schema.go.
func Generate(inputs []Input) ([]byte, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("schemagen: no input generations")
	}
	seenGen := map[string]bool{}
	groups := map[string][]*message{} // group key -> definitions, newest first
	var gens, own []string
	for _, in := range inputs {
		if in.Own {
			own = append(own, in.Name)
		} else if len(own) > 0 {
			return nil, fmt.Errorf("schemagen: generation %q given after kwire's own definitions", in.Name)
		} else {
			gens = append(gens, in.Name)
		}
		if seenGen[in.Name] {
			return nil, fmt.Errorf("schemagen: generation %q given twice", in.Name)
		}
		seenGen[in.Name] = true
		files, err := fs.Glob(in.FS, "*.json")
		if err != nil {
			return nil, fmt.Errorf("schemagen: %s: %w", in.Name, err)
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("schemagen: %s: no *.json message files", in.Name)
		}
		sort.Strings(files)
		inGen := map[string]string{}
		for _, f := range files {
			src, err := fs.ReadFile(in.FS, f)
			if err != nil {
				return nil, fmt.Errorf("schemagen: %s/%s: %w", in.Name, f, err)
			}
			m, err := parseMessage(src)
			if err != nil {
				return nil, fmt.Errorf("schemagen: %s/%s: %w", in.Name, f, err)
			}
			m.file, m.gen = path.Base(f), in.Name
			k := groupKey(m)
			if prev, ok := inGen[k]; ok {
				return nil, fmt.Errorf("schemagen: %s: %s and %s both define %s", in.Name, prev, f, describe(m))
			}
			if in.Own && len(groups[k]) > 0 {
				return nil, fmt.Errorf("schemagen: %s/%s defines %s, which Kafka's %s/%s defines", in.Name, f, describe(m), groups[k][0].gen, groups[k][0].file)
			}
			inGen[k] = f
			groups[k] = append(groups[k], m)
		}
	}

	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys) // group keys sort API messages by key and type, then by name

	var b bytes.Buffer
	b.WriteString("// Code generated by schemagen. DO NOT EDIT.\n\npackage protocol\n\n")
	fmt.Fprintf(&b, "// Schemas is every message definition from Kafka's message JSON files,\n// generations %s (newest first), combined by version", strings.Join(gens, ", "))
	if len(own) > 0 {
		fmt.Fprintf(&b, ",\n// and kwire's own definitions in that form (%s).\n", strings.Join(own, ", "))
	} else {
		b.WriteString(".\n")
	}
	b.WriteString("var Schemas = []*MessageSchema{\n")
	for _, k := range keys {
		covered := map[int]bool{}
		for _, m := range groups[k] {
			for _, r := range uncovered(m.valid, covered) {
				writeMessage(&b, m, r)
			}
			for v := m.valid.Min; v <= m.valid.Max; v++ {
				covered[v] = true
			}
		}
	}
	b.WriteString("}\n")
	out, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("schemagen: formatting output: %w", err)
	}
	return out, nil
}

func groupKey(m *message) string {
	if m.apiKey >= 0 {
		t := 0
		if m.typ == "response" {
			t = 1
		}
		return fmt.Sprintf("0/%05d/%d", m.apiKey, t)
	}
	return "1/" + m.name
}

func describe(m *message) string {
	if m.apiKey >= 0 {
		return fmt.Sprintf("the %s of API key %d", m.typ, m.apiKey)
	}
	return m.name
}

// uncovered returns the contiguous ranges of valid not yet in covered.
func uncovered(valid vrange, covered map[int]bool) []vrange {
	var out []vrange
	start := -1
	for v := valid.Min; v <= valid.Max+1; v++ {
		free := v <= valid.Max && !covered[v]
		switch {
		case free && start < 0:
			start = v
		case !free && start >= 0:
			out = append(out, vrange{start, v - 1})
			start = -1
		}
	}
	return out
}

func optVersions(s *string, what string) (vrange, error) {
	if s == nil {
		return noVersions, nil
	}
	r, err := parseVersions(*s)
	if err != nil {
		return vrange{}, fmt.Errorf("%s: %w", what, err)
	}
	return r, nil
}

func parseMessage(src []byte) (*message, error) {
	j, err := decodeMessage(src)
	if err != nil {
		return nil, err
	}
	m := &message{name: j.Name, typ: j.Type, apiKey: -1}
	if m.name == "" {
		return nil, fmt.Errorf("message has no name")
	}
	if _, ok := messageTypes[m.typ]; !ok {
		return nil, fmt.Errorf("%s: unknown message type %q", m.name, m.typ)
	}
	switch m.typ {
	case "request", "response":
		if j.APIKey == nil {
			return nil, fmt.Errorf("%s: %s without apiKey", m.name, m.typ)
		}
		if *j.APIKey < 0 || *j.APIKey > 32767 {
			return nil, fmt.Errorf("%s: apiKey %d out of range", m.name, *j.APIKey)
		}
		suffix := "Request"
		if m.typ == "response" {
			suffix = "Response"
		}
		if !strings.HasSuffix(m.name, suffix) || m.name == suffix {
			return nil, fmt.Errorf("%s: a %s's name must end in %q", m.name, m.typ, suffix)
		}
		m.apiKey = *j.APIKey
	default:
		if j.APIKey != nil {
			return nil, fmt.Errorf("%s: apiKey on a %s message", m.name, m.typ)
		}
	}
	if j.ValidVersions == nil {
		return nil, fmt.Errorf("%s: no validVersions", m.name)
	}
	if m.valid, err = optVersions(j.ValidVersions, m.name+" validVersions"); err != nil {
		return nil, err
	}
	if m.flex, err = optVersions(j.FlexibleVersions, m.name+" flexibleVersions"); err != nil {
		return nil, err
	}
	if j.DeprecatedVersions != "" {
		if _, err = optVersions(&j.DeprecatedVersions, m.name+" deprecatedVersions"); err != nil {
			return nil, err
		}
	}
	if len(j.HeaderVersions) > 0 {
		if m.headerVers, err = parseHeaderVersions(j.HeaderVersions, m.valid); err != nil {
			return nil, fmt.Errorf("%s headerVersions: %w", m.name, err)
		}
	}

	// Common structs: parse them all, then resolve references by name.
	raw := map[string]*jsonStruct{}
	for i := range j.CommonStructs {
		cs := &j.CommonStructs[i]
		if !isStructName(cs.Name) {
			return nil, fmt.Errorf("%s: bad common struct name %q", m.name, cs.Name)
		}
		if raw[cs.Name] != nil {
			return nil, fmt.Errorf("%s: common struct %s defined twice", m.name, cs.Name)
		}
		raw[cs.Name] = cs
	}
	r := &resolver{msg: m.name, raw: raw, done: map[string]*strct{}, busy: map[string]bool{}}
	for i := range j.CommonStructs {
		s, err := r.common(j.CommonStructs[i].Name)
		if err != nil {
			return nil, err
		}
		m.common = append(m.common, s)
	}
	if m.fields, err = r.fields(j.Fields, m.name); err != nil {
		return nil, err
	}
	return m, nil
}

// parseHeaderVersions reads a {"<versions>": headerVersion} map, expanded
// over the message's valid versions.
func parseHeaderVersions(raw []byte, valid vrange) (map[int]int, error) {
	var hv map[string]int
	if err := decodeStrict(raw, &hv); err != nil {
		return nil, err
	}
	out := map[int]int{}
	for k, h := range hv {
		r, err := parseVersions(k)
		if err != nil {
			return nil, err
		}
		if h < 0 || h > 32767 {
			return nil, fmt.Errorf("header version %d out of range", h)
		}
		for v := max(r.Min, valid.Min); v <= min(r.Max, valid.Max); v++ {
			if _, dup := out[v]; dup {
				return nil, fmt.Errorf("version %d mapped twice", v)
			}
			out[v] = h
		}
	}
	return out, nil
}

func isStructName(s string) bool { return s != "" && s[0] >= 'A' && s[0] <= 'Z' }

type resolver struct {
	msg  string
	raw  map[string]*jsonStruct
	done map[string]*strct
	busy map[string]bool
}

func (r *resolver) common(name string) (*strct, error) {
	if s := r.done[name]; s != nil {
		return s, nil
	}
	cs := r.raw[name]
	if cs == nil {
		return nil, fmt.Errorf("%s: unresolvable struct name %q (no inline fields and no common struct of that name)", r.msg, name)
	}
	if r.busy[name] {
		return nil, fmt.Errorf("%s: common struct %s contains itself", r.msg, name)
	}
	r.busy[name] = true
	defer delete(r.busy, name)
	s := &strct{name: name, versions: noVersions}
	if cs.Versions != nil {
		v, err := parseVersions(*cs.Versions)
		if err != nil {
			return nil, fmt.Errorf("%s: common struct %s versions: %w", r.msg, name, err)
		}
		s.versions = v
	}
	if len(cs.Fields) == 0 {
		return nil, fmt.Errorf("%s: common struct %s has no fields", r.msg, name)
	}
	fs, err := r.fields(cs.Fields, r.msg+"."+name)
	if err != nil {
		return nil, err
	}
	s.fields = fs
	r.done[name] = s
	return s, nil
}

func (r *resolver) fields(js []jsonField, where string) ([]*field, error) {
	out := make([]*field, 0, len(js))
	seen := map[string]bool{}
	for i := range js {
		f, err := r.field(&js[i], where)
		if err != nil {
			return nil, err
		}
		if seen[f.name] {
			return nil, fmt.Errorf("%s: field %s declared twice", where, f.name)
		}
		seen[f.name] = true
		out = append(out, f)
	}
	return out, nil
}

func (r *resolver) field(j *jsonField, where string) (*field, error) {
	if j.Name == "" {
		return nil, fmt.Errorf("%s: field without a name", where)
	}
	where = where + "." + j.Name
	f := &field{name: j.Name, typ: j.Type, entity: j.EntityType, tag: -1}
	var err error
	if j.Versions == nil {
		return nil, fmt.Errorf("%s: field has no versions", where)
	}
	if f.versions, err = optVersions(j.Versions, where+" versions"); err != nil {
		return nil, err
	}
	if f.nullable, err = optVersions(j.NullableVersions, where+" nullableVersions"); err != nil {
		return nil, err
	}
	if f.tagged, err = optVersions(j.TaggedVersions, where+" taggedVersions"); err != nil {
		return nil, err
	}
	if j.FlexibleVersions != nil {
		f.hasFlex = true
		if f.flex, err = optVersions(j.FlexibleVersions, where+" flexibleVersions"); err != nil {
			return nil, err
		}
	} else {
		f.flex = noVersions
	}
	hasTag := len(j.Tag) > 0
	switch {
	case hasTag && j.TaggedVersions == nil:
		return nil, fmt.Errorf("%s: tag without taggedVersions", where)
	case !hasTag && j.TaggedVersions != nil:
		return nil, fmt.Errorf("%s: taggedVersions without tag", where)
	case hasTag:
		if f.tag, err = tagNumber(j.Tag); err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
	}
	if f.def, err = defaultText(j.Default); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}

	base, isArray := strings.CutPrefix(j.Type, "[]")
	if kind, ok := primitives[base]; ok {
		if j.Fields != nil {
			return nil, fmt.Errorf("%s: type %q cannot have fields", where, j.Type)
		}
		if isArray {
			f.kind, f.elem = "TypeArray", kind
		} else {
			f.kind = kind
		}
		return f, nil
	}
	if !isStructName(base) {
		return nil, fmt.Errorf("%s: unknown type %q", where, j.Type)
	}
	f.structName = base
	if isArray {
		f.kind, f.elem = "TypeArray", "TypeStruct"
	} else {
		f.kind = "TypeStruct"
	}
	if len(j.Fields) > 0 {
		if r.raw[base] != nil {
			return nil, fmt.Errorf("%s: struct %s has inline fields and is also a common struct", where, base)
		}
		if f.fields, err = r.fields(j.Fields, where); err != nil {
			return nil, err
		}
		return f, nil
	}
	s, err := r.common(base)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	f.fields = s.fields
	return f, nil
}

// --- output ---

func writeMessage(b *bytes.Buffer, m *message, valid vrange) {
	b.WriteString("{\n")
	fmt.Fprintf(b, "Name: %q,\n", m.name)
	fmt.Fprintf(b, "APIKey: %d,\n", m.apiKey)
	fmt.Fprintf(b, "Type: %s,\n", messageTypes[m.typ])
	fmt.Fprintf(b, "ValidVersions: %s,\n", versions(valid))
	fmt.Fprintf(b, "FlexibleVersions: %s,\n", versions(m.flex))
	if m.headerVers != nil {
		var vs []int
		for v := range m.headerVers {
			if valid.contains(v) {
				vs = append(vs, v)
			}
		}
		sort.Ints(vs)
		b.WriteString("HeaderVersions: map[int16]int16{")
		for _, v := range vs {
			fmt.Fprintf(b, "%d: %d, ", v, m.headerVers[v])
		}
		b.WriteString("},\n")
	}
	fmt.Fprintf(b, "Generation: %q,\n", m.gen)
	if len(m.fields) > 0 {
		b.WriteString("Fields: []Field{\n")
		writeFields(b, m.fields)
		b.WriteString("},\n")
	}
	if len(m.common) > 0 {
		b.WriteString("CommonStructs: []Struct{\n")
		for _, s := range m.common {
			fmt.Fprintf(b, "{Name: %q, Versions: %s, Fields: []Field{\n", s.name, versions(s.versions))
			writeFields(b, s.fields)
			b.WriteString("}},\n")
		}
		b.WriteString("},\n")
	}
	b.WriteString("},\n")
}

func writeFields(b *bytes.Buffer, fs []*field) {
	for _, f := range fs {
		fmt.Fprintf(b, "{Name: %q, Type: %q, Kind: %s, ", f.name, f.typ, f.kind)
		if f.elem != "" {
			fmt.Fprintf(b, "Elem: %s, ", f.elem)
		}
		fmt.Fprintf(b, "Versions: %s, NullableVersions: %s, TaggedVersions: %s, Tag: %d, FlexibleVersions: %s",
			versions(f.versions), versions(f.nullable), versions(f.tagged), f.tag, versions(f.flex))
		if f.hasFlex {
			b.WriteString(", HasFlexibleVersions: true")
		}
		if f.entity != "" {
			fmt.Fprintf(b, ", EntityType: %q", f.entity)
		}
		if f.def != "" {
			fmt.Fprintf(b, ", Default: %q", f.def)
		}
		if f.structName != "" {
			fmt.Fprintf(b, ", StructName: %q, Fields: []Field{\n", f.structName)
			writeFields(b, f.fields)
			b.WriteString("}")
		}
		b.WriteString("},\n")
	}
}

func versions(r vrange) string {
	if r.empty() {
		return "NoVersions"
	}
	hi := strconv.Itoa(r.Max)
	if r.Max == maxVersion {
		hi = "MaxVersion"
	}
	return fmt.Sprintf("Versions{%d, %s}", r.Min, hi)
}
