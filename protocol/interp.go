package protocol

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// This file is the schema interpreter: it walks a MessageSchema's fields
// for one version and builds a Node tree with byte-exact spans, reading
// primitives with a Reader. The rules come from the Kafka protocol guide
// ("The Messages", "Protocol Primitive Types"), KIP-482 (flexible versions:
// compact strings/bytes/arrays, tagged fields) and
// ../shared/kafka-schemas/README.md:
//
//   - A field is present in version v when Versions.Contains(v).
//   - A field is encoded compactly when it is flexible: by its own
//     FlexibleVersions when HasFlexibleVersions is set, by the message's
//     otherwise.
//   - In the message's flexible versions every struct (the message itself,
//     struct fields, struct array elements) ends with a tagged-field buffer;
//     fields whose TaggedVersions contain v are read from it by tag.
//   - A nullable struct is preceded by an INT8 marker: -1 null, 1 present.
//
// These rules are applied once per message version, into its plan
// (plan.go), which the walk follows.
//
// Span rules: a node's span is the bytes it was read from, prefixes
// included (a string's length, an array's count). A known tagged field's
// span covers its tag and size varints and its data; its children (for a
// struct) cover the data only.

// maxDepth bounds struct nesting. Kafka's deepest messages nest about 6
// structs; the bound keeps a corrupt or hostile schema table from
// exhausting the stack.
const maxDepth = 32

// Node names and notes used by the interpreter.
const (
	nameTagged     = "TaggedFields"
	nameUndecoded  = "undecoded"
	nameLeftover   = "leftover"
	noteLenientNul = "null (-1) in a non-nullable field"
)

type pathElem struct {
	name string
	idx  int // array index, or -1
}

// interp decodes one input. It is not safe for concurrent use.
type interp struct {
	d     *Decoder
	t     *Tree
	r     Reader
	space int

	msg     *MessageSchema
	msgName string
	ver     int16
	flex    bool // the message is flexible in ver
	secret  bool // the message can carry secrets in ver: unparsed bytes are withheld
	// violations counts the protocol violations decoded leniently in the
	// message (a null where the field is not nullable, tags out of order,
	// bytes unread in a tagged field): in a message that can carry
	// secrets its values are then withheld (withholdMisplaced).
	violations int
	metaLog    bool // inside a topic of the KRaft metadata log: its records are withheld (secrets.go)
	// snapPos is the Position of the FetchSnapshot partition being
	// decoded (snapshot.go), -1 outside one: restored when a struct ends.
	snapPos int64
	// short: the input may end before the message does (a frame whose
	// length says more than it holds, a body or struct given alone), so a
	// failure for want of bytes may be only that (withholdMisplaced).
	short  bool
	sparse bool // Decoder.Sparse, in a body: skimmed fields get no node (sparse.go)

	cfgs []configEntry // config entries being decoded, innermost last (secrets.go)

	// path holds, innermost first, the fields a failure unwound through
	// (failedIn): nothing is kept while decoding succeeds, and capture
	// turns it into DecodeError.Path.
	path    []pathElem
	failIdx int // the element of the array the failure is in, plus one; 0 for none
	depth   int
	err     *DecodeError

	// probe says only whether the input decodes matters (guess.go): no
	// error text is built.
	probe bool

	slab    []Node
	ptrs    []*Node // backing store for Children slices
	nodeCap int     // Decoder.maxNodes, 0 until a node is made (countNode)

	strs strTable // string values met before (intern)
}

// strTable holds string values a decode made, for later decodes by the
// same interpreter: topic names, group and client IDs and the like come
// again and again, and a value met before costs no allocation. It holds
// at most strTableMax values of at most strTableLen bytes each (about
// 100 KiB), and is emptied when full; values that may be secret are never
// kept.
type strTable map[string]string

const (
	strTableMax = 512
	strTableLen = 128
)

// intern returns b as a string, the one made before when b's bytes came
// before and f's values may be kept (not secret, no part of a config
// entry).
func (ip *interp) intern(f *Field, b []byte) string {
	if ip.probe || len(b) > strTableLen || f.Secret != NotSecret || f.cfg != cfgNone {
		return string(b) // a probe keeps nothing
	}
	if s, ok := ip.strs[string(b)]; ok { // the lookup does not allocate
		return s
	}
	s := string(b)
	switch {
	case ip.strs == nil:
		ip.strs = make(strTable, 64)
	case len(ip.strs) >= strTableMax:
		clear(ip.strs)
	}
	ip.strs[s] = s
	return s
}

// interps are the interpreters of finished decodes, kept for their path
// and config stacks: a frame's decode then allocates its tree and nodes
// only.
var interps = sync.Pool{New: func() any { return new(interp) }}

func getInterp() *interp { return interps.Get().(*interp) }

// putInterp hands ip back once its tree is taken (interp.tree): ip keeps
// no reference into the tree or the input.
func putInterp(ip *interp) {
	clear(ip.cfgs[:cap(ip.cfgs)])
	*ip = interp{path: ip.path[:0], cfgs: ip.cfgs[:0], strs: ip.strs}
	interps.Put(ip)
}

func (ip *interp) reset(d *Decoder, b []byte, spaceName string) {
	ip.d, ip.nodeCap = d, 0
	ip.t = d.newTree(b, spaceName)
	ip.r.Reset(b, 0, len(b))
	ip.space = 0
	ip.path = ip.path[:0]
	ip.failIdx = 0
	ip.depth = 0
	ip.err = nil
	ip.sparse = false
	ip.short = true // until decodeFrame reads a length that the frame holds
}

// newNode returns a zeroed node from the interpreter's slab. Nodes are
// allocated in growing chunks, so a tree costs a few allocations, not one
// per node. The node that passes the tree's cap (Decoder.MaxNodes) fails
// the reader, so decoding stops there as after any error and the rest of
// the input becomes an "undecoded" node; the few nodes made after that
// only describe the failure. Most nodes are past no bound and start no
// reservation: countNode's tests are skipped for them.
func (ip *interp) newNode() *Node {
	t := ip.t
	if t.nodes++; t.nodes > ip.nodeCap || uint(t.nodes)%reserveNodes == 1 || t.mem.denied {
		ip.countNode()
	}
	if len(ip.slab) == cap(ip.slab) {
		ip.slab = t.mem.slab(cap(ip.slab))
	}
	ip.slab = ip.slab[:len(ip.slab)+1]
	n := &ip.slab[len(ip.slab)-1]
	n.Space = ip.space
	return n
}

// countNode holds the node just counted to the tree's cap and memory
// (reserveNode), as newNode does for the node past a bound or starting a
// reservation (nodeCap, 0 until then, is set at a tree's first node).
func (ip *interp) countNode() {
	if ip.nodeCap == 0 {
		ip.nodeCap = ip.d.maxNodes()
	}
	if ip.t.nodes > ip.nodeCap && ip.r.err == nil {
		ip.r.Fail(ip.r.off, nodeLimitError{ip.nodeCap})
		ip.t.Limits |= LimitNodes
	}
	if !ip.t.reserveNode() && ip.r.err == nil {
		// Past the memory a frame may take: stop here, as at the node
		// cap (the node is still made, as are the few that say so).
		ip.r.Fail(ip.r.off, memoryLimitError{ip.t.mem.limit})
		ip.t.Limits |= LimitMemory
	}
}

// tree returns the tree decoded, its last slab and Children chunk noted
// as used as far as they are (Tree.Release clears no more).
func (ip *interp) tree() *Tree {
	ip.t.mem.used(ip.slab)
	ip.t.mem.usedPtrs(ip.ptrs)
	return ip.t
}

// children returns an empty Children slice with room for k nodes, carved
// from a shared backing array (appending past k reallocates, so slices
// never overlap).
func (ip *interp) children(k int) []*Node {
	if k > 256 {
		ip.t.mem.reserve(8 * int64(k)) // k is bounded by the bytes left; a refusal shows at the next slab
		return make([]*Node, 0, k)
	}
	if cap(ip.ptrs)-len(ip.ptrs) < k {
		ip.t.mem.usedPtrs(ip.ptrs)
		ip.ptrs = ip.t.mem.ptrChunk(cap(ip.ptrs), k)
	}
	i := len(ip.ptrs)
	ip.ptrs = ip.ptrs[:i+k]
	return ip.ptrs[i : i : i+k]
}

// failedIn records, on the way out of a failure, that it happened in
// the field named name (in its element failIdx-1 when failIdx is set by
// an array; Kafka has no arrays of arrays): each field on the way adds
// itself, innermost first, so the path costs nothing while decoding
// succeeds. The fields that unwind are those open when the failure was
// first noticed: the path names them as a stack kept for every field
// entered did (ProduceRequest v9 topicData[0].partitionData[2].records).
func (ip *interp) failedIn(name string) {
	ip.path = append(ip.path, pathElem{name: name, idx: ip.failIdx - 1})
	ip.failIdx = 0
}

// capture turns the reader's failure into ip.err with the path it
// unwound through (failedIn): message captures once its fields are
// decoded, when every field the failure was in has added itself.
func (ip *interp) capture() {
	if ip.err == nil && ip.r.err != nil {
		if ip.probe {
			ip.err = errProbe
			return
		}
		ip.err = &DecodeError{Off: ip.r.errOff, Space: ip.space, Path: ip.pathString(), Err: ip.r.err}
	}
}

// pathString formats the path a failure unwound through, outermost
// first, as "ProduceRequest v9 topicData[0].partitionData[2].records".
func (ip *interp) pathString() string {
	var b strings.Builder
	b.WriteString(ip.msgName)
	if ip.msg != nil {
		b.WriteString(" v")
		b.WriteString(strconv.Itoa(int(ip.ver)))
	}
	for i := range ip.path {
		e := ip.path[len(ip.path)-1-i]
		if i == 0 {
			b.WriteByte(' ')
		} else {
			b.WriteByte('.')
		}
		b.WriteString(lowerFirst(e.name))
		if e.idx >= 0 {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(e.idx))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// lowerFirst lower-cases the first letter, as Kafka's JsonConverter names
// fields ("ClientId" → "clientId").
func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+('a'-'A')) + s[1:]
}

var versionNotes = func() (a [64]string) {
	for i := range a {
		a[i] = "v" + strconv.Itoa(i)
	}
	return a
}()

func versionNote(v int16) string {
	if v >= 0 && int(v) < len(versionNotes) {
		return versionNotes[v]
	}
	return "v" + strconv.Itoa(int(v))
}

var indexNames = func() (a [256]string) {
	for i := range a {
		a[i] = "[" + strconv.Itoa(i) + "]"
	}
	return a
}()

func indexName(i int) string {
	if i < len(indexNames) {
		return indexNames[i]
	}
	return "[" + strconv.Itoa(i) + "]"
}

// message decodes message m at version ver from the reader's offset up to
// end into n, which becomes a KindStruct node named after the message.
// On failure n ends with an "undecoded" KindRaw node covering the rest up
// to end. When whole is set, bytes left before end after a complete decode
// become a "leftover" node and ip.err wraps ErrLeftover; otherwise n ends
// where the message does (a header followed by its body).
func (ip *interp) message(m *MessageSchema, ver int16, n *Node, end int, whole bool) {
	r := &ip.r
	old := r.SetEnd(end)
	defer func() { r.end = old }()
	ip.msg, ip.msgName, ip.ver = m, m.Name, ver
	ip.flex = m.FlexibleVersions.Contains(ver)
	ip.secret = m.carriesSecrets(ver)
	ip.violations = 0
	ip.cfgs = ip.cfgs[:0]
	ip.path, ip.failIdx = ip.path[:0], 0
	n.Kind = KindStruct
	n.Name = m.Name
	n.Type = messageTypeName(m.Type)
	n.Note = versionNote(ver)
	n.Ver = ver
	n.Off = r.off
	n.Space = ip.space
	ip.structFields(planOf(m, ver), n)
	if r.err != nil {
		ip.capture()
		ip.undecoded(n, r.errOff, end)
		if k := len(n.Children); k > 0 && n.Children[k-1].Name == nameUndecoded {
			ip.withholdRaw(n.Children[k-1])
		}
		ip.withholdMisplaced(n)
		return
	}
	if !whole {
		n.Len = r.off - n.Off
		return
	}
	if r.off < end && ip.probe {
		if _, ok := knownLeftover(m, ver, r.b[r.off:end]); !ok {
			ip.err = errProbe
		}
		r.off = end
		n.Len = end - n.Off
		return
	}
	if r.off < end {
		left := ip.rawNode(nameLeftover, r.off, end)
		if note, ok := knownLeftover(m, ver, left.Raw); ok {
			left.Note, left.Flags = note, left.Flags|FlagLenient
			n.Children = append(n.Children, left)
			r.off = end
			n.Len = end - n.Off
			return
		}
		left.Note = fmt.Sprintf("%d bytes left over after %s %s", end-r.off, m.Name, versionNote(ver))
		ip.withholdRaw(left)
		ip.withholdMisplaced(n)
		n.Children = append(n.Children, left)
		if ip.err == nil {
			ip.err = &DecodeError{Off: r.off, Space: ip.space, Path: ip.pathString(),
				Err: fmt.Errorf("%w: %d bytes", ErrLeftover, end-r.off)}
		}
		r.off = end
	}
	n.Len = end - n.Off
	if ip.violations > 0 && ip.secret && n.Flags&FlagRedacted == 0 {
		// Read despite a violation: a length or a null where none may be
		// can as well be bytes out of place (a frame cut and filled by the
		// next one), so a credential may sit in any string.
		ip.withholdMisplacedAs(n, "withheld: the message broke the protocol, so a credential may be misplaced here")
	}
}

// undecoded appends to n a KindRaw node for [from, end) after a failure
// and stretches n to end.
func (ip *interp) undecoded(n *Node, from, end int) {
	from = max(from, n.Off)
	if from < end {
		u := ip.rawNode(nameUndecoded, from, end)
		u.Flags |= FlagError
		if ip.err != nil && !ip.probe {
			u.Note = ip.err.Err.Error()
		}
		n.Children = append(n.Children, u)
	}
	n.Flags |= FlagError
	n.Len = end - n.Off
	ip.r.off = max(ip.r.off, min(end, ip.r.end))
}

func (ip *interp) rawNode(name string, from, end int) *Node {
	u := ip.newNode()
	u.Name, u.Type, u.Kind = name, "bytes", KindRaw
	u.Off, u.Len = from, end-from
	u.Raw = ip.r.b[from:end:end]
	return u
}

func messageTypeName(t MessageType) string {
	switch t {
	case TypeRequest:
		return "request"
	case TypeResponse:
		return "response"
	case TypeHeader:
		return "header"
	}
	return "data"
}

// structFields decodes the fields of one struct, by its plan p for the
// message version, into n's children, then its tagged-field buffer in
// flexible versions. It reports success. p is nil only past maxDepth,
// which fails before it is read.
func (ip *interp) structFields(p *structPlan, n *Node) bool {
	r := &ip.r
	if ip.depth++; ip.depth > maxDepth {
		r.Fail(r.off, ErrTooDeep)
		ip.depth--
		return false
	}
	if n.Children == nil {
		n.Children = ip.children(ip.kids(p))
	}
	cfg := -1
	if ip.secret && p.config {
		cfg = ip.beginConfig()
		defer ip.endConfig()
	}
	metaLog := ip.metaLog // a topic's records only: restored when the struct ends
	snapPos := ip.snapPos
	ip.snapPos = -1
	for i := range p.fields {
		fp := &p.fields[i]
		if ip.sparse && ip.skimmed(fp) {
			ip.skip(fp)
			if r.err != nil {
				ip.failedIn(fp.f.Name)
				ip.depth--
				ip.metaLog, ip.snapPos = metaLog, snapPos
				return false
			}
			continue
		}
		c := ip.field(fp)
		if c != nil {
			n.Children = append(n.Children, c)
			if f := fp.f; f.Secret != NotSecret {
				ip.secretField(f, c)
			}
			if fp.role == RoleTopicName || fp.role == RoleTopicID || fp.f.Kind == TypeRecords {
				ip.metadataLog(fp.f, c)
			}
			if fp.f.snap == snapPosition && c.Kind == KindInt {
				ip.snapPos = c.Int
			}
			if cfg >= 0 && fp.f.cfg != cfgNone {
				ip.cfgs[cfg].note(fp.f, c)
			}
		}
		if r.err != nil {
			ip.failedIn(fp.f.Name)
			ip.depth--
			ip.metaLog, ip.snapPos = metaLog, snapPos
			return false
		}
	}
	if ip.flex {
		ip.taggedBuffer(p, n)
	}
	ip.depth--
	ip.metaLog, ip.snapPos = metaLog, snapPos
	return r.err == nil
}

// compactIn reports whether f is encoded compactly in version ver of a
// message that is flexible in ver when flex: by the field's own flexible
// versions when the JSON gives them, by the message's otherwise.
func compactIn(f *Field, flex bool, ver int16) bool {
	if f.HasFlexibleVersions {
		return f.FlexibleVersions.Contains(ver)
	}
	return flex
}

// fixedSize returns the size in bytes of a fixed-size kind, 0 for others.
func fixedSize(k TypeKind) int {
	switch k {
	case TypeBool, TypeInt8:
		return 1
	case TypeInt16, TypeUint16:
		return 2
	case TypeInt32, TypeUint32:
		return 4
	case TypeInt64, TypeFloat64:
		return 8
	case TypeUUID:
		return 16
	}
	return 0
}

// field decodes the value of the field of fp. It returns nil when
// nothing of the field could be read; a struct or array that failed
// part-way is returned with the children decoded before the failure.
func (ip *interp) field(fp *fieldPlan) *Node {
	r := &ip.r
	f := fp.f
	off := r.off
	var n *Node
	leaf := func(k Kind) *Node {
		if r.err != nil {
			return nil
		}
		n = ip.newNode()
		n.Name, n.Type, n.Kind, n.Field = f.Name, f.Type, k, f
		n.Off, n.Len = off, r.off-off
		return n
	}
	switch f.Kind {
	case TypeBool:
		v := r.Bool()
		if leaf(KindBool) != nil && v {
			n.Int = 1
		}
	case TypeInt8:
		v := r.Int8()
		if leaf(KindInt) != nil {
			n.Int = int64(v)
		}
	case TypeInt16:
		v := r.Int16()
		if leaf(KindInt) != nil {
			n.Int = int64(v)
			if f.Role == RoleErrorCode {
				n.Note = KafkaErrorName(v)
			}
		}
	case TypeUint16:
		v := r.Uint16()
		if leaf(KindInt) != nil {
			n.Int = int64(v)
		}
	case TypeInt32:
		v := r.Int32()
		if leaf(KindInt) != nil {
			n.Int = int64(v)
		}
	case TypeUint32:
		v := r.Uint32()
		if leaf(KindInt) != nil {
			n.Int = int64(v)
		}
	case TypeInt64:
		v := r.Int64()
		if leaf(KindInt) != nil {
			n.Int = v
		}
	case TypeFloat64:
		v := r.Float64()
		if leaf(KindFloat) != nil {
			n.Float = v
		}
	case TypeUUID:
		b := r.take(16)
		if leaf(KindUUID) != nil {
			n.Raw = b
		}
	case TypeString, TypeBytes, TypeRecords:
		return ip.lenValue(fp)
	case TypeStruct:
		return ip.structField(fp)
	case TypeArray:
		return ip.array(fp)
	default:
		r.Fail(off, fmt.Errorf("%w: field type %q (kind %d) has no wire form", ErrShort, f.Type, f.Kind))
	}
	return n
}

// wireTypeName names the wire form of a string, bytes or records field.
func wireTypeName(k TypeKind, compact, nullable bool) string {
	switch k {
	case TypeString:
		switch {
		case compact && nullable:
			return "compact_nullable_string"
		case compact:
			return "compact_string"
		case nullable:
			return "nullable_string"
		}
		return "string"
	case TypeBytes:
		switch {
		case compact && nullable:
			return "compact_nullable_bytes"
		case compact:
			return "compact_bytes"
		case nullable:
			return "nullable_bytes"
		}
		return "bytes"
	}
	if compact {
		return "compact_records"
	}
	return "records"
}

// lenValue decodes a STRING, BYTES or RECORDS field in any of its forms.
// A null where the field is not nullable decodes as null with FlagLenient.
func (ip *interp) lenValue(fp *fieldPlan) *Node {
	r := &ip.r
	f := fp.f
	off := r.off
	var size int
	switch {
	case fp.compact:
		size = r.CompactLen()
	case f.Kind == TypeString:
		size = r.StringLen()
	default:
		size = r.BytesLen()
	}
	if r.err != nil {
		return nil
	}
	n := ip.newNode()
	n.Name, n.Type, n.Off, n.Field = f.Name, fp.typ, off, f
	switch f.Kind {
	case TypeString:
		n.Kind = KindString
	case TypeBytes:
		n.Kind = KindBytes
	default:
		n.Kind = KindRecords
	}
	if size < 0 {
		n.Flags |= FlagNull
		if !fp.nullable {
			n.Flags |= FlagLenient
			n.Note = noteLenientNul
			ip.violations++
		}
		n.Len = r.off - off
		return n
	}
	b := r.take(size)
	n.Len = r.off - off
	if f.Kind == TypeString {
		n.Str = ip.intern(f, b)
		return n
	}
	n.Raw = b
	if f.Kind == TypeRecords {
		switch {
		case f.snap == snapChunk && ip.snapPos > 0 && len(b) > 0:
			// A snapshot chunk past its start: not record batches.
			ip.d.unalignedChunk(ip.t, n, ip.snapPos)
		case ip.d.Records:
			ip.d.decodeRecords(ip.t, n)
		case !ip.d.ShowSecrets && len(b) > 0:
			// Records not decoded cannot be told free of credentials
			// (a Kafka Connect configuration record, the KRaft metadata
			// log's): withheld as every span kwire did not decode is.
			withhold(n)
			n.Note = joinNote(n.Note, "withheld: records not decoded cannot be told free of credentials (--show-secrets shows them)")
		}
	}
	return n
}

// structField decodes a single (non-array) struct field.
func (ip *interp) structField(fp *fieldPlan) *Node {
	r := &ip.r
	f := fp.f
	off := r.off
	if fp.nullable {
		marker := r.Int8()
		if r.err != nil {
			return nil
		}
		if marker < 0 {
			n := ip.newNode()
			n.Name, n.Type, n.Kind, n.Flags, n.Field = f.Name, f.Type, KindStruct, FlagNull, f
			n.Off, n.Len = off, r.off-off
			return n
		}
	}
	n := ip.newNode()
	n.Name, n.Type, n.Kind, n.Off, n.Field = f.Name, f.Type, KindStruct, off, f
	if !ip.structFields(fp.sub, n) {
		n.Len = max(0, r.errOff-off)
		return n
	}
	n.Len = r.off - off
	return n
}

// array decodes an array field: a count (classic INT32 or compact
// UNSIGNED_VARINT) checked against the bytes left for the elements' minimal
// size, then the elements. A failure in an element leaves its index in
// failIdx for the path.
func (ip *interp) array(fp *fieldPlan) *Node {
	r := &ip.r
	f := fp.f
	off := r.off
	elem := fp.elem
	var count int
	if fp.compact {
		count = r.CompactArrayLen(fp.minElem)
	} else {
		count = r.ArrayLen(fp.minElem)
	}
	if r.err != nil {
		return nil
	}
	n := ip.newNode()
	n.Name, n.Type, n.Kind, n.Off, n.Int, n.Field = f.Name, f.Type, KindArray, off, int64(count), f
	if count < 0 {
		n.Flags |= FlagNull
		if !fp.nullable {
			n.Flags |= FlagLenient
			n.Note = noteLenientNul
			ip.violations++
		}
		n.Len = r.off - off
		return n
	}
	n.Children = ip.children(count)
	for i := 0; i < count; i++ {
		var c *Node
		if f.Elem == TypeStruct {
			c = ip.newNode()
			c.Name, c.Type, c.Kind, c.Off, c.Field = indexName(i), elem.Type, KindStruct, r.off, elem
			if !ip.structFields(fp.sub, c) {
				c.Len = max(0, r.errOff-c.Off)
			} else {
				c.Len = r.off - c.Off
			}
		} else if c = ip.field(fp.elemPlan); c != nil {
			c.Name = indexName(i)
		}
		if c != nil {
			n.Children = append(n.Children, c)
		}
		if r.err != nil {
			ip.failIdx = i + 1
			n.Len = max(0, r.errOff-off)
			return n
		}
	}
	n.Len = r.off - off
	return n
}

// minSize is the fewest bytes a value of field f (nullable when so) can
// take in version ver of a message flexible in ver when flex, in a struct
// decoded at depth: the bound that array counts are checked against. A
// struct past maxDepth counts as one byte.
func minSize(f *Field, nullable bool, ver int16, flex bool, depth int) int {
	compact := compactIn(f, flex, ver)
	if n := fixedSize(f.Kind); n > 0 {
		return n
	}
	switch f.Kind {
	case TypeString:
		if compact {
			return 1
		}
		return 2
	case TypeBytes, TypeRecords, TypeArray:
		if compact {
			return 1
		}
		return 4
	case TypeStruct:
		if nullable {
			return 1
		}
		if depth >= maxDepth {
			return 1
		}
		total := 0
		for i := range f.Fields {
			g := &f.Fields[i]
			if g.Versions.Contains(ver) && !g.TaggedVersions.Contains(ver) {
				total += minSize(g, g.NullableVersions.Contains(ver), ver, flex, depth+1)
			}
		}
		if flex {
			total++ // the tagged-field buffer's count
		}
		return total
	}
	return 1
}

// taggedBuffer decodes a struct's tagged-field buffer (KIP-482) into a
// KindTaggedFields child of parent. Known tags are decoded by name (with
// FlagTagged); unknown ones become KindUnknownTag nodes named
// "UNKNOWN(tag)" holding the tag in Int and the data in Raw.
func (ip *interp) taggedBuffer(p *structPlan, parent *Node) {
	r := &ip.r
	off := r.off
	count := 0
	if !r.noTags() {
		if count = r.TaggedFieldCount(); r.err != nil {
			return
		}
	}
	tn := ip.newNode()
	tn.Name, tn.Type, tn.Kind, tn.Off, tn.Int = nameTagged, "tagged_fields", KindTaggedFields, off, int64(count)
	parent.Children = append(parent.Children, tn)
	prev := int64(-1)
	for i := 0; i < count; i++ {
		eoff := r.off
		tag, dataEnd, ok := ip.taggedHead()
		if !ok {
			break
		}
		size := int64(dataEnd - r.off)
		var c *Node
		if fp := p.taggedField(tag); fp != nil && ip.sparse && ip.skimmed(fp) {
			if !ip.skipTaggedField(fp, dataEnd) {
				break
			}
			prev = int64(tag)
			continue
		} else if fp != nil {
			f := fp.f
			old := r.end
			r.end = dataEnd
			c = ip.field(fp)
			if r.err != nil {
				ip.failedIn(f.Name)
			}
			r.end = old
			if c != nil {
				c.Flags |= FlagTagged
				c.Off = eoff
				if f.Secret != NotSecret {
					ip.secretField(f, c)
				}
				if r.err != nil {
					c.Len = max(0, r.errOff-eoff)
					tn.Children = append(tn.Children, c)
				}
			}
			if r.err != nil {
				break
			}
			if r.off < dataEnd {
				c.Flags |= FlagLenient
				c.Note = fmt.Sprintf("%d unread bytes at the end of tagged field %d", dataEnd-r.off, tag)
				ip.violations++
				r.off = dataEnd
			}
			c.Len = dataEnd - eoff
		} else {
			c = ip.newNode()
			c.Name, c.Type, c.Kind = "UNKNOWN("+strconv.FormatUint(uint64(tag), 10)+")", "tagged_field", KindUnknownTag
			c.Flags = FlagTagged | FlagUnknown
			c.Int = int64(tag)
			c.Raw = r.take(int(size))
			c.Off, c.Len = eoff, dataEnd-eoff
			c.Note = fmt.Sprintf("unknown tag %d, %d bytes", tag, size)
			if !ip.d.ShowSecrets {
				c.Note = fmt.Sprintf("unknown tag %d", tag)
				ip.withholdRaw(c)
			}
		}
		if int64(tag) <= prev {
			ip.violations++
			c.Flags |= FlagLenient
			c.Note = strings.TrimPrefix(c.Note+"; tags out of order", "; ")
		}
		prev = int64(tag)
		tn.Children = append(tn.Children, c)
	}
	if r.err != nil {
		tn.Len = max(0, r.errOff-off)
		return
	}
	tn.Len = r.off - off
}
