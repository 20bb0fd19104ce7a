package protocol

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
)

// This file renders a decoded message in Apache Kafka's JsonConverter form
// (the <Message>JsonConverter classes generated from the message JSON):
//
//   - field names are the schema names with the first letter lower-cased;
//   - every integer type, int64 included, is a JSON number;
//   - float64 is a JSON number (NaN and ±Inf, which JSON cannot hold, are
//     the strings "NaN", "Infinity", "-Infinity");
//   - uuid is Kafka's base64url string without padding (22 characters);
//   - bytes and records are standard base64 (records as raw bytes, even
//     when decoded into batches);
//   - tagged fields appear by name like other fields; unknown tagged fields
//     are left out (UnknownTaggedFields returns them);
//   - null is null;
//   - fields keep the schema's order (Object marshals in order).
//
// Secrets marked FlagRedacted (secrets.go) are withheld without giving
// their length: a string or a value without parts is "<redacted>"; in a
// bytes value with parts (a SASL token) each secret part's bytes are
// replaced by the 10 bytes "<redacted>".

// Member is one name/value pair of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object that marshals its members in order.
type Object []Member

// Get returns the value of the first member named key, and whether there
// was one.
func (o Object) Get(key string) (any, bool) {
	for _, m := range o {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// MarshalJSON writes the members in order.
func (o Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(m.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnknownTag is an unknown tagged field: its tag and data.
type UnknownTag struct {
	Tag  uint32 `json:"tag"`
	Data []byte `json:"data"`
}

// UnknownTaggedFields returns the unknown tagged fields in the tagged-field
// buffer of struct node n (not of its nested structs), in wire order.
func UnknownTaggedFields(n *Node) []UnknownTag {
	var out []UnknownTag
	for _, c := range n.Children {
		if c.Kind != KindTaggedFields {
			continue
		}
		for _, t := range c.Children {
			if t.Kind == KindUnknownTag {
				out = append(out, UnknownTag{Tag: uint32(t.Int), Data: t.Raw})
			}
		}
	}
	return out
}

// BodyJSON returns message, header or struct node n (a Tree's Root from
// DecodeBody or DecodeStruct, or the header or body of a frame) as a value
// that encoding/json marshals to Kafka's JsonConverter form: an Object for
// structs, []any for arrays, int64, float64, bool, string or nil for
// scalars. When n is named after a schema message and its Note is "vN",
// members follow the schema's field order; otherwise wire order with
// tagged fields last. Raw, undecoded and leftover nodes are left out.
func BodyJSON(n *Node) any {
	return bodyJSON(n, jsonForm{})
}

// BodyJSONLazyRecords is BodyJSON for callers that write decoded record
// batches in a form of their own: a RECORDS node with children (decoded
// batches) is a RecordsBase64 instead of its base64 string, which it
// marshals to, so that encoding the bytes is left to those who need it.
func BodyJSONLazyRecords(n *Node) any {
	return bodyJSON(n, jsonForm{lazyRecords: true})
}

// JSONOptions are the options of BodyJSONWith.
type JSONOptions struct {
	// LazyRecords is BodyJSONLazyRecords' option.
	LazyRecords bool
	// Int64Strings gives fields of Kafka type int64 as decimal strings
	// (for tools that read JSON numbers as doubles).
	Int64Strings bool
}

// BodyJSONWith is BodyJSON with options.
func BodyJSONWith(n *Node, o JSONOptions) any {
	return bodyJSON(n, jsonForm{lazyRecords: o.LazyRecords, int64Strings: o.Int64Strings})
}

// RecordsBase64 stands in BodyJSONLazyRecords' value for the base64
// string of a decoded RECORDS node: String returns it and MarshalJSON
// writes it as a JSON string.
type RecordsBase64 struct{ Node *Node }

// String returns the standard base64 of the node's bytes, as BodyJSON
// gives them.
func (r RecordsBase64) String() string {
	return base64.StdEncoding.EncodeToString(redacted(r.Node))
}

// MarshalJSON writes String as a JSON string.
func (r RecordsBase64) MarshalJSON() ([]byte, error) {
	return json.Marshal(r.String())
}

// jsonForm holds the options of a BodyJSON walk.
type jsonForm struct {
	lazyRecords  bool // decoded RECORDS as RecordsBase64
	int64Strings bool // int64 fields as decimal strings
}

func bodyJSON(n *Node, j jsonForm) any {
	if n == nil {
		return nil
	}
	if fields, ok := JSONFields(n); ok {
		return j.structJSON(n, fields, n.Ver)
	}
	return j.nodeJSON(n, nil, 0)
}

// JSONFields returns the schema fields in whose order BodyJSON gives the
// members of n's object (its version is n.Ver), and true, when n is a
// message, header or data struct node named after a schema the table
// holds for its version; otherwise nil and false (BodyJSON then gives
// n's children in wire order, as version 0).
func JSONFields(n *Node) ([]Field, bool) {
	if n.Kind == KindStruct && n.Field == nil && isMessageNode(n) {
		if m := LookupName(n.Name, n.Ver); m != nil {
			return m.Fields, true
		}
	}
	return nil, false
}

// setJSONNames sets the JSON name (Field.JSONName) of fields, of the
// fields below them and of their arrays' element fields, once when the
// package initialises (initRoles, after the element fields are made).
func setJSONNames(fields []Field, depth int) {
	if depth > maxDepth {
		return
	}
	for i := range fields {
		f := &fields[i]
		f.jsonName, f.jsonKey = lowerFirst(f.Name), jsonKeyOf(f.Name)
		if f.elem != nil {
			f.elem.jsonName, f.elem.jsonKey = lowerFirst(f.elem.Name), jsonKeyOf(f.elem.Name)
		}
		setJSONNames(f.Fields, depth+1)
	}
}

// jsonKeyOf is name's JsonConverter name quoted, with a colon, when it is
// letters, digits and underscores; "" otherwise.
func jsonKeyOf(name string) string {
	if name == "" {
		return ""
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return ""
		}
	}
	return `"` + lowerFirst(name) + `":`
}

// nodeJSONName is the JsonConverter name of node n: its field's, made
// once, when the node is named after it (as the decoder names them).
func nodeJSONName(n *Node) string {
	if f := n.Field; f != nil && f.Name == n.Name {
		return f.JSONName()
	}
	return lowerFirst(n.Name)
}

// isMessageNode reports whether n is a message, header or data struct
// node as the decoder builds them (its Ver is its version).
func isMessageNode(n *Node) bool {
	switch n.Type {
	case "request", "response", "header", "data":
		return true
	}
	return false
}

// structJSON renders a struct node; fields, when not nil, gives the order.
func (j jsonForm) structJSON(n *Node, fields []Field, v int16) any {
	if n.Flags&FlagNull != 0 {
		return nil
	}
	var tagged *Node
	for _, c := range n.Children {
		if c.Kind == KindTaggedFields {
			tagged = c
		}
	}
	obj := make(Object, 0, len(n.Children))
	if fields == nil {
		for _, c := range n.Children {
			if c.Kind == KindTaggedFields || c.Kind == KindRaw {
				continue
			}
			obj = append(obj, Member{nodeJSONName(c), j.nodeJSON(c, nil, v)})
		}
		if tagged != nil {
			for _, c := range tagged.Children {
				if c.Kind != KindUnknownTag {
					obj = append(obj, Member{nodeJSONName(c), j.nodeJSON(c, nil, v)})
				}
			}
		}
		return obj
	}
	for i := range fields {
		f := &fields[i]
		var c *Node
		if f.TaggedVersions.Contains(v) {
			c = tagged.Child(f.Name)
		} else {
			c = n.Child(f.Name)
		}
		if c == nil {
			if f.TaggedVersions.Contains(v) && f.Versions.Contains(v) && n.Flags&FlagError == 0 {
				// Kafka's JsonConverter writes an absent tag's default.
				obj = append(obj, Member{f.JSONName(), j.defaultJSON(f, v)})
			}
			continue // absent in this version, or not decoded
		}
		obj = append(obj, Member{f.JSONName(), j.nodeJSON(c, f, v)})
	}
	return obj
}

// nodeJSON renders one node; f is its schema field when known.
func (j jsonForm) nodeJSON(n *Node, f *Field, v int16) any {
	if n.Flags&FlagNull != 0 {
		return nil
	}
	if n.Flags&FlagRedacted != 0 && len(n.Children) == 0 && n.Kind != KindBytes && n.Kind != KindRecords {
		return redactedMark
	}
	var sub []Field
	if f != nil {
		sub = f.Fields
	}
	switch n.Kind {
	case KindStruct:
		return j.structJSON(n, sub, v)
	case KindArray:
		out := make([]any, 0, len(n.Children))
		for _, c := range n.Children {
			if c.Kind == KindRaw {
				continue
			}
			if c.Kind == KindStruct {
				out = append(out, j.structJSON(c, sub, v))
			} else {
				out = append(out, j.nodeJSON(c, nil, v))
			}
		}
		return out
	case KindInt:
		if j.int64Strings && n.Field != nil && n.Field.Kind == TypeInt64 {
			return strconv.FormatInt(n.Int, 10)
		}
		return n.Int
	case KindBool:
		return n.Int != 0
	case KindFloat:
		switch {
		case math.IsNaN(n.Float):
			return "NaN"
		case math.IsInf(n.Float, 1):
			return "Infinity"
		case math.IsInf(n.Float, -1):
			return "-Infinity"
		}
		return n.Float
	case KindString:
		return n.Str
	case KindUUID:
		return base64.RawURLEncoding.EncodeToString(n.Raw)
	case KindBytes, KindRecords:
		if j.lazyRecords && n.Kind == KindRecords && len(n.Children) > 0 {
			return RecordsBase64{n}
		}
		return base64.StdEncoding.EncodeToString(redacted(n))
	case KindUnknownTag, KindRaw:
		return base64.StdEncoding.EncodeToString(n.Raw)
	}
	return nil
}

// defaultJSON is the JsonConverter form of field f's default value in
// version v (the JSON "default", or the type's zero: 0, "", false, an
// all-zero uuid, empty bytes, an empty array, a struct of defaults).
// With int64Strings an int64 default is a decimal string, as a decoded
// int64 would be.
func (j jsonForm) defaultJSON(f *Field, v int16) any {
	if f.Default == "null" {
		return nil
	}
	if f.Kind == TypeInt64 && j.int64Strings {
		return strconv.FormatInt(defaultInt(f), 10)
	}
	switch f.Kind {
	case TypeBool:
		return f.Default == "true"
	case TypeInt8, TypeInt16, TypeUint16, TypeInt32, TypeUint32, TypeInt64:
		return defaultInt(f)
	case TypeFloat64:
		x, _ := strconv.ParseFloat(f.Default, 64)
		return x
	case TypeString:
		return f.Default
	case TypeUUID:
		return base64.RawURLEncoding.EncodeToString(make([]byte, 16))
	case TypeBytes, TypeRecords:
		return ""
	case TypeArray:
		return []any{}
	case TypeStruct:
		obj := Object{}
		for i := range f.Fields {
			g := &f.Fields[i]
			if g.Versions.Contains(v) {
				obj = append(obj, Member{g.JSONName(), j.defaultJSON(g, v)})
			}
		}
		return obj
	}
	return nil
}

// defaultInt is an integer field's default ("" is 0; hex as Kafka's
// JSON writes some, e.g. "0x7fffffff").
func defaultInt(f *Field) int64 {
	if f.Default == "" {
		return 0
	}
	if i, err := strconv.ParseInt(f.Default, 0, 64); err == nil {
		return i
	}
	if u, err := strconv.ParseUint(f.Default, 0, 64); err == nil {
		return int64(u)
	}
	return 0
}

// redactedMark stands for a withheld secret.
const redactedMark = "<redacted>"

// redacted returns n.Raw with the spans of FlagRedacted children replaced
// by redactedMark, n.Raw itself when nothing is redacted, and redactedMark
// alone for a redacted node without such children.
func redacted(n *Node) []byte {
	if n.Flags&FlagRedacted == 0 {
		return n.Raw
	}
	base := n.End() - len(n.Raw)
	var out []byte
	pos, found := 0, false
	for _, c := range n.Children {
		if c.Flags&FlagRedacted == 0 || c.Space != n.Space {
			continue
		}
		start, end := c.Off-base, c.End()-base
		if start < pos || end > len(n.Raw) || end < start {
			return []byte(redactedMark)
		}
		out = append(out, n.Raw[pos:start]...)
		out = append(out, redactedMark...)
		pos, found = end, true
	}
	if !found {
		return []byte(redactedMark)
	}
	return append(out, n.Raw[pos:]...)
}

// AppendDefaultJSON appends the value BodyJSON gives field f when it is a
// tagged field absent in version v (Kafka's JsonConverter writes its
// default: the JSON "default", or the type's zero) as encoding/json writes
// that value; int64Strings as JSONOptions has it, html as json.Marshal
// escapes '<', '>' and '&' in strings.
func AppendDefaultJSON(b []byte, f *Field, v int16, int64Strings, html bool) []byte {
	if f.Default == "null" {
		return append(b, "null"...)
	}
	switch f.Kind {
	case TypeBool:
		return strconv.AppendBool(b, f.Default == "true")
	case TypeInt64:
		if int64Strings {
			b = append(b, '"')
			b = strconv.AppendInt(b, defaultInt(f), 10)
			return append(b, '"')
		}
		return strconv.AppendInt(b, defaultInt(f), 10)
	case TypeInt8, TypeInt16, TypeUint16, TypeInt32, TypeUint32:
		return strconv.AppendInt(b, defaultInt(f), 10)
	case TypeUUID:
		return append(b, `"AAAAAAAAAAAAAAAAAAAAAA"`...) // 16 zero bytes, base64url
	case TypeBytes, TypeRecords:
		return append(b, `""`...)
	case TypeArray:
		return append(b, "[]"...)
	case TypeStruct:
		b = append(b, '{')
		first := true
		for i := range f.Fields {
			g := &f.Fields[i]
			if !g.Versions.Contains(v) {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			if k := g.JSONKey(); k != "" {
				b = append(b, k...)
			} else {
				b = appendJSONKey(b, g.JSONName(), html)
			}
			b = AppendDefaultJSON(b, g, v, int64Strings, html)
		}
		return append(b, '}')
	}
	// float64 and string defaults (no field of the table has one that is
	// not null): encoding/json writes them.
	return appendMarshaled(b, jsonForm{int64Strings: int64Strings}.defaultJSON(f, v), html)
}

// appendJSONKey appends name as a JSON object key and its colon.
func appendJSONKey(b []byte, name string, html bool) []byte {
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return append(appendMarshaled(b, name, html), ':')
		}
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// appendMarshaled appends v as encoding/json writes it, without a
// newline; html as json.Marshal escapes '<', '>' and '&'.
func appendMarshaled(b []byte, v any, html bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(v); err != nil {
		return append(b, "null"...) // no default value fails
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
