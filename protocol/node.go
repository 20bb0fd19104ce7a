package protocol

// Kind says how a Node's value is held.
type Kind uint8

// Node kinds.
const (
	KindStruct       Kind = iota // a message, header, struct or struct array element: Children
	KindArray                    // an array: Children are the elements; Int is the count (-1 null)
	KindInt                      // INT8..INT64, UINT16, UINT32, VARINT, VARLONG, UNSIGNED_VARINT: Int
	KindFloat                    // FLOAT64: Float
	KindBool                     // BOOLEAN: Int is 0 or 1
	KindString                   // STRING and variants: Str
	KindBytes                    // BYTES and variants: Raw (aliases the space's bytes)
	KindUUID                     // UUID: Raw, 16 bytes
	KindRecords                  // RECORDS: Raw; Children are record batches when decoded
	KindTaggedFields             // a tagged-field buffer: Children are the fields, known or unknown
	KindUnknownTag               // an unknown tagged field: Int is the tag, Raw its data
	KindRaw                      // bytes not decoded: unknown API/version, leftovers, after an error
)

// Flags annotate a Node.
type Flags uint16

// Node flags.
const (
	FlagNull      Flags = 1 << iota // the value is null
	FlagTagged                      // the field came from a tagged-field buffer
	FlagUnknown                     // unknown API key, version, tag or struct
	FlagTruncated                   // the value ends before its declared length
	FlagLenient                     // decoded despite a protocol violation (Note says which)
	FlagError                       // decoding failed here (Note says why)
	FlagRedacted                    // a secret (SASL password, SCRAM proof) withheld from output
	FlagPartial                     // a partial record batch at the end of a fetch (normal)
)

// Node is one decoded element of a Kafka frame: a field, a struct, an array
// element, a record batch or a span of undecoded bytes. Its bytes are the
// half-open span [Off, Off+Len) of space Space of the Tree it belongs to:
// space 0 is the frame as captured (offset 0 is the first byte of the 4-byte
// length prefix when a whole frame was decoded); other spaces hold bytes the
// decoder produced itself, e.g. decompressed record batches.
//
// A child's span lies inside its parent's span when both are in the same
// space; siblings are ordered by offset and do not overlap.
type Node struct {
	Name  string // schema field name ("ClientId"), "[3]" for array elements, or a label
	Type  string // Kafka type ("int16", "compact_string", "[]TopicData", "records", ...)
	Kind  Kind   // which value field holds the value (Int, Float, Str, Raw) or that it is a container
	Flags Flags  // Flag* bits: null, tagged, unknown, truncated, lenient, error, redacted, partial
	Space int    // index into Tree.Spaces; 0 is the frame
	Off   int    // offset of the first byte in Space, in bytes
	Len   int    // span length in bytes: [Off, Off+Len)

	Int   int64   // KindInt, KindBool, KindArray count, KindUnknownTag tag
	Float float64 // KindFloat
	Str   string  // KindString
	Raw   []byte  // KindBytes, KindUUID, KindRecords, KindUnknownTag, KindRaw

	// Note is a short human annotation: a Kafka error name for error codes
	// ("NOT_LEADER_OR_FOLLOWER"), a CRC verdict, an API name, why decoding
	// stopped. Empty when there is nothing to add.
	Note string

	Children []*Node // struct fields, array elements, batches and records, in wire order
}

// End returns the offset just past the node's span.
func (n *Node) End() int { return n.Off + n.Len }

// Child returns the first direct child with the given name, or nil.
func (n *Node) Child(name string) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Space is a byte space a Tree's nodes point into.
type Space struct {
	Name string // "frame", or e.g. "decompressed gzip batch at 0x1f4"
	Data []byte // the bytes; nodes' Raw values alias it
}

// Tree is the result of decoding one frame, body or struct.
type Tree struct {
	Root   *Node   // the frame (length, header, body) or the body or struct decoded
	Spaces []Space // Spaces[0] is the input
	// Err is the first decoding error, or nil. When set, Root holds what was
	// decoded before it and a KindRaw node for the rest.
	Err *DecodeError

	nodes int // nodes made for this tree so far, checked against Decoder.MaxNodes
}

// FirstError returns the first node of t, depth first, marked FlagError
// with a Note saying why, or nil. Record batches report their problems on
// their nodes (a corrupt or oversized compressed batch, a bad CRC, records
// past the node cap) and leave Err nil: this finds those too.
func (t *Tree) FirstError() *Node {
	if t == nil {
		return nil
	}
	return firstError(t.Root, 0)
}

func firstError(n *Node, depth int) *Node {
	if n == nil || depth > 2*maxDepth+16 { // a frame nests far less: records sit inside a few structs
		return nil
	}
	if n.Flags&FlagError != 0 && n.Note != "" {
		return n
	}
	for _, c := range n.Children {
		if f := firstError(c, depth+1); f != nil {
			return f
		}
	}
	return nil
}
