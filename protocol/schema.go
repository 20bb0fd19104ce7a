package protocol

import (
	"math"
	"sync"
	"sync/atomic"
)

// This file defines the shape of kwire's schema table: the facts that Apache
// Kafka's message JSON files (clients/src/main/resources/common/message/*.json)
// state about every request, response, header and data struct. The table
// itself is generated into zz_schema.go by ./internal/schemagen
// (`go generate ./protocol` or `make generate`); exceptions the JSON cannot
// express live in headers.go.

//go:generate go run ./internal/schemagen -out zz_schema.go

// Versions is an inclusive range of versions as written in Kafka's JSON
// ("0+", "3-5", "7", "none"). An open range ("3+") has Max == MaxVersion.
// The empty range ("none") has Min > Max; use NoVersions.
type Versions struct {
	Min, Max int16
}

// MaxVersion stands for the open end of a "N+" range.
const MaxVersion = math.MaxInt16

// NoVersions is the empty range, written "none" in Kafka's JSON.
var NoVersions = Versions{Min: 0, Max: -1}

// Contains reports whether v is inside the range.
func (r Versions) Contains(v int16) bool { return r.Min <= v && v <= r.Max }

// Empty reports whether the range holds no version.
func (r Versions) Empty() bool { return r.Min > r.Max }

// TypeKind is the resolved kind of a field's Kafka type.
type TypeKind uint8

// Field type kinds, named after the Kafka protocol guide's primitive types.
// The wire encoding of strings, bytes and arrays (classic or compact) follows
// from the message's (or field's) flexible versions, not from the kind.
const (
	TypeInvalid TypeKind = iota
	TypeBool
	TypeInt8
	TypeInt16
	TypeUint16
	TypeInt32
	TypeUint32
	TypeInt64
	TypeFloat64
	TypeUUID
	TypeString
	TypeBytes
	TypeRecords
	TypeStruct // a single struct: Fields holds its fields
	TypeArray  // an array: Elem is the element kind; Fields holds struct element fields
)

// Field is one field of a message or struct, as declared in Kafka's JSON.
type Field struct {
	Name string   // e.g. "ClientId", as in the JSON
	Type string   // the JSON type string, e.g. "int16", "[]TopicData", "records"
	Kind TypeKind // the decoder's kind for Type
	Elem TypeKind // element kind when Kind == TypeArray

	Versions         Versions // versions in which the field exists
	NullableVersions Versions // versions in which it may be null
	TaggedVersions   Versions // versions in which it is a tagged field
	Tag              int32    // tag number; -1 when the field is never tagged

	// FlexibleVersions overrides the message's flexible versions for this
	// field when HasFlexibleVersions is set (e.g. RequestHeader.ClientId is
	// "none": a classic INT16-length string even in header v2).
	FlexibleVersions    Versions // the JSON "flexibleVersions" of the field
	HasFlexibleVersions bool     // the JSON gave one

	EntityType string // "topicName", "groupId", "brokerId", ... or ""
	Default    string // the JSON "default", verbatim, or ""

	// Secret says whether the field's value is a secret, set once when
	// the package initialises from the table in secrets.go.
	Secret Secrecy
	cfg    cfgPart  // the field's part in a config entry (secrets.go)
	snap   snapPart // the field's part in a FetchSnapshot chunk (snapshot.go)

	// StructName is the struct type's name for struct and array-of-struct
	// fields ("TopicData"); Fields are its fields, with common structs
	// (commonStructs in the JSON) resolved inline.
	StructName string
	Fields     []Field

	// Role is what the field means (roles.go), set once when the package
	// initialises; RoleNone when it means nothing kwire's facts use.
	Role Role
	// elem, for an array field, is the field that each element is a value
	// of: its Type is the element type ("TopicData", "int32"), its Kind
	// the element kind, its Fields the struct's fields, its Role the
	// array's. Set when the package initialises (initRoles).
	elem *Field
	// ElemOf, for an array's element field, is the array field.
	ElemOf *Field
	// values names the field's values (ValueName), set when the package
	// initialises; nil when they have no names.
	values valueNamer
	// skim says a sparse decode (Decoder.Sparse) reads the field without
	// a node: nothing in it means anything to the facts (sparse.go).
	skim bool
	// jsonName is the field's JsonConverter name (JSONName), set once
	// when the package initialises (setJSONNames); jsonKey that name as
	// a JSON object's key (JSONKey).
	jsonName, jsonKey string
}

// JSONName returns the field's name in Kafka's JsonConverter form: its
// schema name with the first letter lower-cased ("ClientId" → "clientId").
// The names of the schema table's fields are made once, when the package
// initialises; a field built elsewhere gets its name made at each call.
func (f *Field) JSONName() string {
	if f.jsonName == "" {
		return lowerFirst(f.Name)
	}
	return f.jsonName
}

// JSONKey returns the field's JSON name quoted and followed by a colon
// ("\"clientId\":"), ready to append to a JSON object, when the name is
// letters, digits and underscores (every name of the schema table), which
// no JSON encoder escapes; "" for a field outside the table or another
// name.
func (f *Field) JSONKey() string { return f.jsonKey }

// ElemField returns the field describing each element of array field f (a
// node for an array element has it as its Field), or nil when f is not an
// array.
func (f *Field) ElemField() *Field {
	if f == nil {
		return nil
	}
	return f.elem
}

// Struct is a named struct type from a message's commonStructs.
type Struct struct {
	Name     string   // "TopicData", as in the JSON
	Versions Versions // the versions the JSON declares it for
	Fields   []Field  // its fields, as declared
}

// MessageType is the "type" of a Kafka message JSON file.
type MessageType uint8

// Message types.
const (
	TypeRequest MessageType = iota
	TypeResponse
	TypeHeader
	TypeData // non-RPC structs: ConsumerProtocolSubscription, EndTxnMarker, ...
)

// MessageSchema is the definition of one Kafka message from one generation
// of the JSON files.
type MessageSchema struct {
	Name             string      // "ProduceRequest"
	APIKey           int16       // -1 for headers and data structs
	Type             MessageType // request, response, header or data
	ValidVersions    Versions    // after combining generations: the versions this definition serves
	FlexibleVersions Versions    // versions with compact types and tagged fields (KIP-482)
	// HeaderVersions, when the JSON has a headerVersions map, gives the
	// header version for each message version; nil otherwise.
	HeaderVersions map[int16]int16
	Fields         []Field  // the top-level fields
	CommonStructs  []Struct // the JSON "commonStructs", for reference (Fields has them inline)
	// Generation names the folder the definition came from
	// ("trunk-678c0e07", "3.9.0-rc3").
	Generation string

	// secretVers, set when the package initialises (secrets.go), is the
	// smallest range of versions holding every version with a field that
	// can carry a secret; nil when none has one.
	secretVers *Versions

	// plans holds the interpreter's plan of each version (plan.go),
	// indexed from ValidVersions.Min, built at the version's first
	// decode; nil for a schema built outside the table.
	plans []atomic.Pointer[structPlan]
}

// Lookup returns the definition that serves version v of the message with
// API key key in the given direction, or nil when no generation declares it.
// Following ../shared/kafka-schemas/README.md, the newest generation whose
// validVersions contains v wins; the generator has already trimmed older
// generations to the versions newer ones lack.
func Lookup(key int16, response bool, v int16) *MessageSchema {
	t := TypeRequest
	if response {
		t = TypeResponse
	}
	for _, m := range schemasByKey(key) {
		if m.Type == t && m.ValidVersions.Contains(v) {
			return m
		}
	}
	return nil
}

// LookupName returns the definition of the named message (request,
// response, header or data struct) that serves version v, or nil.
func LookupName(name string, v int16) *MessageSchema {
	for _, m := range byName()[name] {
		if m.ValidVersions.Contains(v) {
			return m
		}
	}
	return nil
}

// byName indexes Schemas by name, in table order (LookupName runs for
// every frame's header: a scan of the whole table was 6% of decoding a
// small exchange).
var byName = sync.OnceValue(func() map[string][]*MessageSchema {
	m := make(map[string][]*MessageSchema)
	for _, s := range Schemas {
		m[s.Name] = append(m[s.Name], s)
	}
	return m
})

// APIInfo summarises one API key across every generation.
type APIInfo struct {
	Key           int16    // API key, as in the request's JSON "apiKey"
	Name          string   // "Produce", from the request's name without "Request"
	Versions      Versions // union of request validVersions across generations
	FirstFlexible int16    // first flexible request version, or -1
}

// byKey indexes the schemas of API messages by key (a slice: Lookup runs
// for every frame the dissector peeks at, and a map lookup was most of it).
var byKey = sync.OnceValue(func() [][]*MessageSchema {
	var t [][]*MessageSchema
	for _, s := range Schemas {
		if s.APIKey >= 0 {
			if int(s.APIKey) >= len(t) {
				t = append(t, make([][]*MessageSchema, int(s.APIKey)+1-len(t))...)
			}
			t[s.APIKey] = append(t[s.APIKey], s)
		}
	}
	return t
})

func schemasByKey(key int16) []*MessageSchema {
	if t := byKey(); key >= 0 && int(key) < len(t) {
		return t[key]
	}
	return nil
}
