package render

import (
	"encoding/base64"

	"github.com/kwire/kwire/protocol"
)

// This file writes a header or body in Kafka's JsonConverter form straight
// from the node tree into the output (jsonWriter.direct): the bytes that
// appendAnyJSON writes for protocol.BodyJSONWith's value as patch amends
// it (typed record batches, withheld secrets, undecoded spans), without
// building that value: an Object of boxed members for every struct, a
// lower-cased name for every member, then a walk of it all again. On
// captures of many small exchanges building and walking the value was a
// fifth of kwire read --json's CPU.
//
// The rules are the value path's, node by node:
//
//   - a struct's members follow its schema's fields (protocol.JSONFields
//     at the root, the field's Fields below), a tagged field absent in the
//     version gives its default (protocol.AppendDefaultJSON) unless the
//     struct failed; without a schema, its children in wire order, tagged
//     ones last; unknown tagged fields are left out (collectUnknown lists
//     them);
//   - what patch changes: a BYTES value marked FlagRedacted is the base64
//     of withheldBytes, a redacted value without children "<redacted>"
//     (null or not), a RECORDS value with decoded batches written by value
//     (typed, or as patch leaves it), and a struct's undecoded spans an
//     "_undecoded" array after its members;
//   - strings with encoding/json's HTML escaping, as appendAnyJSON writes
//     the converter's value.
//
// patch amends the value member by member, finding each node's member by
// its name: on a tree where a name comes twice in one struct (a tag
// repeated on the wire), an array holds an undecoded span, or nesting is
// deeper than patch follows, what it writes depends on more than the node
// at hand. direct gives such trees up (odd) and converter takes the value
// path for them, which stays for that and as the oracle the tests hold
// this one to (TestDirectConverter, FuzzDirectConverter).

// maxDirectDepth is the nesting direct follows; deeper trees take the
// value path (patch follows 128 levels; Kafka's schemas nest about 10).
const maxDirectDepth = 100

// redactedHTML is "<redacted>" as a JSON string with HTML escaping.
const redactedHTML = `"\u003credacted\u003e"`

// noSecrets is the Options under which withheldBytes withholds, as
// protocol.BodyJSON does whatever the options.
var noSecrets Options

// direct appends node n (a header or body, not KindRaw) as converter
// writes it, and reports false, with b as it was, for a tree it leaves to
// the value path.
func (j *jsonWriter) direct(b []byte, n *protocol.Node) ([]byte, bool) {
	start := len(b)
	html := j.html
	j.html = true // record batches and undecoded spans escape as appendAnyJSON would
	j.odd = false
	if out, ok := j.directPatched(b, n); ok {
		b = out
	} else if fields, ok := protocol.JSONFields(n); ok {
		b = j.directStruct(b, n, fields, n.Ver, 0)
	} else {
		b = j.directNode(b, n, nil, 0, 0)
	}
	j.html = html
	if j.odd {
		return b[:start], false
	}
	return b, true
}

// directPatched appends n as patch replaces it, and reports whether it
// does (patch's rules that replace a node's value whole).
func (j *jsonWriter) directPatched(b []byte, n *protocol.Node) ([]byte, bool) {
	if n.Kind == protocol.KindBytes && n.Flags&protocol.FlagRedacted != 0 {
		return appendBase64String(b, withheldBytes(n, j.o)), true
	}
	if len(n.Children) == 0 {
		if n.Kind == protocol.KindRecords && j.typedRecords {
			return b, false // nothing to type: patch leaves it
		}
		if isRedacted(n, j.o) {
			return append(b, redactedHTML...), true
		}
		return b, false
	}
	if n.Kind == protocol.KindRecords && (j.typedRecords || j.needsPatch(n, 0)) {
		return j.value(b, n, n.Name, nil, false), true
	}
	return b, false
}

// directNode appends n, the value of field f (nil when not known) in
// version v, as BodyJSON's nodeJSON gives it and patch amends it.
func (j *jsonWriter) directNode(b []byte, n *protocol.Node, f *protocol.Field, v int16, depth int) []byte {
	if out, ok := j.directPatched(b, n); ok {
		return out
	}
	if n.Flags&protocol.FlagNull != 0 {
		return append(b, "null"...)
	}
	if n.Flags&protocol.FlagRedacted != 0 && len(n.Children) == 0 && n.Kind != protocol.KindBytes && n.Kind != protocol.KindRecords {
		return append(b, redactedHTML...)
	}
	switch n.Kind {
	case protocol.KindStruct:
		var sub []protocol.Field
		if f != nil {
			sub = f.Fields
		}
		return j.directStruct(b, n, sub, v, depth)
	case protocol.KindArray:
		var sub []protocol.Field
		if f != nil {
			sub = f.Fields
		}
		if depth > maxDirectDepth {
			j.odd = true
			return b
		}
		b = append(b, '[')
		for i, c := range n.Children {
			if c.Kind == protocol.KindRaw {
				j.odd = true // left out of the value, and patch then leaves the array alone
				return b
			}
			if i > 0 {
				b = append(b, ',')
			}
			if c.Kind != protocol.KindStruct {
				b = j.directNode(b, c, nil, v, depth+1)
			} else if out, ok := j.directPatched(b, c); ok {
				b = out
			} else {
				b = j.directStruct(b, c, sub, v, depth+1)
			}
		}
		return append(b, ']')
	case protocol.KindInt, protocol.KindBool, protocol.KindFloat:
		return j.appendScalar(b, n)
	case protocol.KindString:
		return appendStdString(b, n.Str, true)
	case protocol.KindUUID:
		b = append(b, '"')
		b = base64.RawURLEncoding.AppendEncode(b, n.Raw)
		return append(b, '"')
	case protocol.KindBytes, protocol.KindRecords:
		raw := n.Raw
		if n.Flags&protocol.FlagRedacted != 0 {
			raw = withheldBytes(n, &noSecrets)
		}
		return appendBase64String(b, raw)
	case protocol.KindUnknownTag, protocol.KindRaw:
		return appendBase64String(b, n.Raw)
	}
	return append(b, "null"...)
}

// directStruct appends struct n as BodyJSON's structJSON gives it (fields
// in version v, or nil for wire order) and patch amends it.
func (j *jsonWriter) directStruct(b []byte, n *protocol.Node, fields []protocol.Field, v int16, depth int) []byte {
	if n.Flags&protocol.FlagNull != 0 {
		return append(b, "null"...)
	}
	if depth > maxDirectDepth {
		j.odd = true
		return b
	}
	var tagged *protocol.Node
	plain, raws := 0, 0 // children patch finds by name; undecoded spans
	for _, c := range n.Children {
		switch c.Kind {
		case protocol.KindTaggedFields:
			if tagged != nil {
				j.odd = true // structJSON reads the last, patch all of them
				return b
			}
			tagged = c
		case protocol.KindRaw:
			raws++
		default:
			plain++
		}
	}
	taggedPlain := 0
	if tagged != nil {
		for _, c := range tagged.Children {
			switch c.Kind {
			case protocol.KindRaw:
				j.odd = true // an "_undecoded" member of its own
				return b
			case protocol.KindUnknownTag:
			default:
				taggedPlain++
			}
		}
	}
	b = append(b, '{')
	first := true
	if fields == nil {
		if !j.wireNamesDistinct(n, tagged) {
			j.odd = true
			return b
		}
		for _, c := range n.Children {
			if c.Kind == protocol.KindTaggedFields || c.Kind == protocol.KindRaw {
				continue
			}
			b = j.directMember(b, c, nil, v, depth, first)
			first = false
		}
		if tagged != nil {
			for _, c := range tagged.Children {
				if c.Kind != protocol.KindUnknownTag {
					b = j.directMember(b, c, nil, v, depth, first)
					first = false
				}
			}
		}
	} else {
		// Each field's node is the first child of its name, in n or in
		// its tagged fields; the decoder gives them in the fields' order,
		// so the next one not yet taken is tried first. Every child must
		// be some field's (each name once): patch finds its member by
		// name, which another child of the same name would amend again.
		next, found, foundTagged := 0, 0, 0
		children := n.Children
		for i := range fields {
			f := &fields[i]
			var c *protocol.Node
			if f.TaggedVersions.Contains(v) {
				if c = tagged.Child(f.Name); c != nil {
					foundTagged++
				}
			} else {
				if next < len(children) && children[next].Name == f.Name {
					c = children[next]
					next++
				} else {
					c = n.Child(f.Name)
				}
				if c != nil {
					if c.Kind == protocol.KindTaggedFields || c.Kind == protocol.KindRaw {
						j.odd = true
						return b
					}
					found++
				}
			}
			if c == nil {
				if f.TaggedVersions.Contains(v) && f.Versions.Contains(v) && n.Flags&protocol.FlagError == 0 {
					if !first {
						b = append(b, ',')
					}
					first = false
					b = appendFieldKey(b, f)
					b = protocol.AppendDefaultJSON(b, f, v, j.o.Int64Strings, true)
				}
				continue
			}
			b = j.directMember(b, c, f, v, depth, first)
			first = false
		}
		if found != plain || foundTagged != taggedPlain {
			j.odd = true
			return b
		}
	}
	if raws > 0 {
		if !first {
			b = append(b, ',')
		}
		b = append(b, `"_undecoded":[`...)
		k := 0
		for _, c := range n.Children {
			if c.Kind != protocol.KindRaw {
				continue
			}
			if k > 0 {
				b = append(b, ',')
			}
			k++
			b = j.value(b, c, n.Name, nil, false)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// directMember appends child c of a struct, the value of field f (nil in
// wire order), with its key.
func (j *jsonWriter) directMember(b []byte, c *protocol.Node, f *protocol.Field, v int16, depth int, first bool) []byte {
	if !first {
		b = append(b, ',')
	}
	if f != nil {
		b = appendFieldKey(b, f)
	} else if g := c.Field; g != nil && g.Name == c.Name {
		b = appendFieldKey(b, g)
	} else if name := c.Name; name != "" && plainKey(name) {
		b = append(b, '"')
		if k := name[0]; k >= 'A' && k <= 'Z' {
			b = append(b, k+('a'-'A'))
			name = name[1:]
		}
		b = append(b, name...)
		b = append(b, '"', ':')
	} else {
		b = appendJSONKeyHTML(b, lowerFirst(c.Name))
	}
	return j.directNode(b, c, f, v, depth+1)
}

// wireNamesDistinct reports whether the children patch finds by name in a
// struct without a schema (n's, and its tagged fields' including unknown
// ones) have distinct keys, and keys patch finds (lowerCamel of each name
// the same as BodyJSON's lowerFirst: ASCII first letters).
func (j *jsonWriter) wireNamesDistinct(n, tagged *protocol.Node) bool {
	var room [32]*protocol.Node
	named := room[:0]
	for _, c := range n.Children {
		if c.Kind != protocol.KindTaggedFields && c.Kind != protocol.KindRaw {
			named = append(named, c)
		}
	}
	if tagged != nil {
		named = append(named, tagged.Children...)
	}
	for i, c := range named {
		if c.Name != "" && c.Name[0] >= 0x80 {
			return false
		}
		for _, d := range named[:i] {
			if sameKey(c.Name, d.Name) {
				return false
			}
		}
	}
	return true
}

// sameKey reports whether lowerFirst(a) == lowerFirst(b).
func sameKey(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	if a == "" {
		return true
	}
	return lowerASCII(a[0]) == lowerASCII(b[0]) && a[1:] == b[1:]
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

// lowerFirst lower-cases an ASCII first letter, as BodyJSON names members
// ("ClientId" → "clientId").
func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+('a'-'A')) + s[1:]
}

// appendFieldKey appends field f's JSON name as a key, and its colon.
func appendFieldKey(b []byte, f *protocol.Field) []byte {
	if k := f.JSONKey(); k != "" {
		return append(b, k...) // made once: nothing to escape
	}
	return appendJSONKeyHTML(b, f.JSONName())
}

// appendJSONKeyHTML appends key k, as appendAnyJSON writes an Object's
// keys, and its colon.
func appendJSONKeyHTML(b []byte, k string) []byte {
	return append(appendStdString(b, k, true), ':')
}
