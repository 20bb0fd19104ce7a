package protocol

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/kwire/kwire/internal/poison"
)

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
	FlagRedacted                    // a secret (secrets.go) withheld from output; its value is emptied
	FlagPartial                     // a partial record batch at the end of a fetch (normal)
	FlagAbsOffset                   // a record or legacy message node whose Int is its absolute offset
	FlagOmitted                     // a record key, value or header whose tail the decoder did not keep (RawLen)
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
	Flags Flags  // Flag* bits: null, tagged, unknown, truncated, lenient, error, redacted, partial, abs offset
	// Ver is the version of a message or header node, and of a BYTES node
	// holding an embedded struct (a consumer subscription or assignment,
	// an envelope's principal: the version its first two bytes give); 0
	// for other nodes.
	Ver   int16
	Space int // index into Tree.Spaces; 0 is the frame
	Off   int // offset of the first byte in Space, in bytes
	Len   int // span length in bytes: [Off, Off+Len)

	// Field is the schema field the node is a value of: a field of a
	// message or struct (zz_schema.go), for an array element the array's
	// element field (Field.ElemOf is the array), for record batches,
	// records and legacy messages the fields of recordfields.go. It is nil
	// for frames, message roots, synthetic labels and undecoded spans.
	// Its Role says what the value means (roles.go).
	Field *Field

	// Int holds KindInt, KindBool, KindArray count, KindUnknownTag tag;
	// for a record or legacy message struct with FlagAbsOffset, its
	// absolute offset (the batch's BaseOffset plus the record's
	// OffsetDelta; for a message inside a magic 1 wrapper, computed from
	// the wrapper's offset, KIP-31).
	Int   int64
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

// RawLen returns the length in bytes of the node's raw value: for
// KindRaw its whole span, otherwise len(Raw), but for a value marked
// FlagOmitted (Decoder.KeepValue: a record key, value or header key or
// value inflated from a compressed batch, whose first len(Raw) bytes only
// were kept; the rest is an omitted span of its Space): the span less the
// varint length before the value. A value whose Raw is shorter than RawLen
// starts at End()-RawLen().
func (n *Node) RawLen() int {
	switch {
	case n.Kind == KindRaw:
		return max(n.Len, len(n.Raw))
	case n.Flags&FlagOmitted != 0:
		// Len = varint size of v (zig-zag) + v: one v fits.
		for p := 1; p <= 5; p++ {
			if v := n.Len - p; v >= 0 && varintSize(int64(v)) == p {
				return v
			}
		}
	}
	return len(n.Raw)
}

// varintSize is the size of v as a VARINT (zig-zag LEB128).
func varintSize(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for ; u >= 0x80; u >>= 7 {
		n++
	}
	return n
}

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

// ChildOf returns the first direct child that is a value of field f (its
// Field is f), or nil. Readers find fields by identity with it, never by
// name: n.ChildOf(protocol.Batch.Magic).
func (n *Node) ChildOf(f *Field) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Field == f {
			return c
		}
	}
	return nil
}

// Space is a byte space a Tree's nodes point into.
type Space struct {
	Name string // "frame", or e.g. "decompressed gzip batch at 0x1f4"
	Data []byte // the bytes kept; nodes' Raw values alias it
	// Omitted lists, in order, the spans of the space whose bytes the
	// decoder did not keep (Decoder.KeepValue, or the rest of a space the
	// decoder stopped reading); Data holds the other bytes, in order.
	// Offsets are the space's own, as if nothing were omitted: the span
	// [Off, Off+Len) of byte space offsets. nil for the frame.
	Omitted []Span
}

// Span is a half-open span [Off, Off+Len) of a space.
type Span struct{ Off, Len int }

// Size returns the space's length in bytes, omitted spans included.
func (s *Space) Size() int {
	n := len(s.Data)
	for _, o := range s.Omitted {
		n += o.Len
	}
	return n
}

// Kept returns the bytes of [off, end) kept in the space, stopping at the
// first omitted byte: all of them when nothing in the span was omitted.
func (s *Space) Kept(off, end int) []byte {
	shift := 0
	for _, o := range s.Omitted {
		if o.Off >= end {
			break
		}
		if o.Off+o.Len <= off {
			shift += o.Len
			continue
		}
		end = max(o.Off, off) // the span reaches into [off, end)
		break
	}
	p, q := off-shift, end-shift
	if p < 0 || q > len(s.Data) || q < p {
		return nil
	}
	return s.Data[p:q:q]
}

// Tree is the result of decoding one frame, body or struct.
type Tree struct {
	Root   *Node   // the frame (length, header, body) or the body or struct decoded
	Spaces []Space // Spaces[0] is the input
	// Err is the first decoding error, or nil. When set, Root holds what was
	// decoded before it and a KindRaw node for the rest.
	Err *DecodeError

	// Limits says which of the decoder's bounds the tree reached: the
	// decompression cap, the memory cap, the node cap. The nodes where
	// decoding stopped have FlagError and a note saying why.
	Limits Limits

	nodes int // nodes made for this tree so far, checked against Decoder.MaxNodes

	mem treeMem // pooled memory the tree holds, for Release

	// firstErr caches FirstError's answer (noFirstError for none): the
	// read command asks it of every frame three times, and a tree of a
	// thousand records has ten thousand nodes.
	firstErr atomic.Value // of *Node; an atomic.Pointer would forbid copying a Tree

	space0 [1]Space // Spaces' first backing array: the input's
}

// KeptBytes returns the bytes t's spaces hold (the frame, and what its
// record batches inflated to as far as the decoder kept it: len(Data) of
// each Space); 0 for a nil tree.
func (t *Tree) KeptBytes() int {
	if t == nil {
		return 0
	}
	n := 0
	for i := range t.Spaces {
		n += len(t.Spaces[i].Data)
	}
	return n
}

// noFirstError is Tree.firstErr when the tree has no error node.
var noFirstError = new(Node)

// Release hands the memory the decoder took from its pools for t (the
// nodes of decoded records, decompressed bytes) back for later trees, and
// empties t (Root and Spaces become nil, so that a late reader finds
// nothing rather than another tree's nodes). Afterwards no node of t, nor
// any Raw slice or Children slice taken from one, may be used; strings
// (Name, Str, Note) stay valid. Releasing is optional (a tree never
// released is collected as usual) and must not run while anything else
// reads t. It spares the garbage collector the largest part of what
// decoding a Produce or Fetch with many records allocates.
func (t *Tree) Release() {
	if t == nil {
		return
	}
	t.Root, t.Spaces, t.Err = nil, nil, nil
	t.firstErr.Store(noFirstError)
	t.mem.release()
}

// Recycle is Release for a caller that gives up t itself too: nothing may
// refer to t afterwards (nor to its nodes, as after Release), for a later
// decode may hand out the same Tree. It spares the garbage collector the
// Tree, which a frame of a few nodes costs as much as its nodes (kwire
// read's one-line mode recycles every frame's). When released memory is
// poisoned (internal/poison), t is not reused: its Root becomes a
// poisoned node, so that a late reader shows it.
func (t *Tree) Recycle() {
	if t == nil {
		return
	}
	t.Release()
	if poison.Released {
		t.Root = &poisonedNode
		return
	}
	*t = Tree{}
	treePool.Put(t)
}

// treePool holds recycled Trees (Tree.Recycle) for newTree. As every
// sync.Pool, it holds them at most until the second garbage collection
// after their Recycle: no more than were in use.
var treePool sync.Pool // of *Tree, zeroed

// FirstError returns the first node of t, depth first, marked FlagError
// with a Note saying why, or nil. Record batches report their problems on
// their nodes (a corrupt or oversized compressed batch, a bad CRC, records
// past the node cap) and leave Err nil: this finds those too. The answer
// is computed once, when first asked: the decoder has finished the tree
// by then, and nothing else marks nodes as errors.
func (t *Tree) FirstError() *Node {
	if t == nil {
		return nil
	}
	if v, ok := t.firstErr.Load().(*Node); ok {
		if v == noFirstError {
			return nil
		}
		return v
	}
	var n *Node
	if !t.mem.holds(t.Root) || t.mem.anyError() {
		n = firstError(t.Root, 0)
	}
	if n == nil {
		t.firstErr.Store(noFirstError)
	} else {
		t.firstErr.Store(n)
	}
	return n
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

// holds reports whether n is one of m's nodes. A tree whose root is was
// made by the decoder, and every node of it then is too (its nodes come
// from its slabs alone, an embedded tree's included: absorb).
func (m *treeMem) holds(n *Node) bool {
	if n == nil {
		return false
	}
	p := uintptr(unsafe.Pointer(n))
	for _, u := range m.slabs {
		s := (*u.p)[:cap(*u.p)]
		if base := uintptr(unsafe.Pointer(&s[0])); p >= base && p < base+uintptr(len(s))*unsafe.Sizeof(Node{}) {
			return true
		}
	}
	return false
}

// anyError reports whether one of m's nodes is marked FlagError with a
// note: when none is, a tree m holds has no first error, which a scan of
// the slabs, in the order the decoder made them, says faster than a walk
// of the tree (a fifth of the instructions of an ApiVersions response's).
func (m *treeMem) anyError() bool {
	for _, u := range m.slabs {
		for i := range (*u.p)[:u.n] {
			if n := &(*u.p)[i]; n.Flags&FlagError != 0 && n.Note != "" {
				return true
			}
		}
	}
	return false
}

// Pooled memory. A tree's node slabs, Children chunks and decompressed
// bytes come from pools; the tree notes what it took (treeMem) and
// Tree.Release hands it back. Without Release nothing comes back and the
// pools stay empty: decoding then allocates as it always did. Small
// frames (a Heartbeat, an OffsetCommit: tens of nodes) take a small slab,
// large ones grow through the classes, so that many small trees in flight
// hold little and one large tree makes few slabs.

// Node slab classes (nodes per slab) and Children chunk classes (pointers
// per chunk). A tree's first slab is the smallest class; each next one is
// the next class up, then the largest again.
var (
	slabClasses = [...]int{32, 128, 512}
	ptrClasses  = [...]int{64, 1024}
)

var (
	slabPools [len(slabClasses)]sync.Pool // of *[]Node, zeroed, of the class's capacity
	ptrPools  [len(ptrClasses)]sync.Pool  // of *[]*Node, zeroed, of the class's capacity
)

// bufClasses pool decompressed buffers by capacity: class c holds buffers
// of at least 1<<c bytes, from 64 KiB to 64 MiB.
const (
	minBufClass = 16
	maxBufClass = 26
)

var bufPools [maxBufClass + 1]sync.Pool // of *[]byte

// treeMem is the pooled memory a tree holds, and what its decoding has
// reserved (Decoder.MaxMemory, Decoder.Budget).
type treeMem struct {
	slabs []slabUse
	ptrs  []ptrUse
	bufs  [][]byte

	// A small frame's tree takes a slab and a chunk or two: their
	// records are kept here, not in slices of their own.
	slabs0 [2]slabUse
	ptrs0  [2]ptrUse

	budget   Budget
	limit    int64 // what the tree may reserve (Decoder.MaxMemory)
	reserved int64 // what it holds reserved
	denied   bool  // a reservation failed: every later one fails too
}

// Memory costs the decoder reserves (Decoder.MaxMemory), in bytes: a
// node with its share of a Children slice and of the notes the decoder
// writes (a record's timestamp note is about 50 bytes), and a space.
const (
	nodeCost  = int64(unsafe.Sizeof(Node{})) + 40
	spaceCost = int64(unsafe.Sizeof(Space{})) + 64
)

// reserve takes n bytes of the tree's memory and reports whether it may;
// once a reservation fails, all later ones do (so that where decoding
// stopped depends on the frame alone, not on what came after).
func (m *treeMem) reserve(n int64) bool {
	if m == nil || n <= 0 {
		return true
	}
	if m.denied || m.limit > 0 && m.reserved+n > m.limit {
		m.denied = true
		return false
	}
	if m.budget != nil && !m.budget.Reserve(n) {
		m.denied = true
		return false
	}
	m.reserved += n
	return true
}

// canReserve reports whether n more bytes would fit the tree's limit (not
// asking the Budget: an estimate).
func (m *treeMem) canReserve(n int64) bool {
	return m == nil || !m.denied && (m.limit <= 0 || m.reserved+n <= m.limit)
}

// unreserve gives back n bytes reserved for something freed.
func (m *treeMem) unreserve(n int64) {
	if m == nil || n <= 0 {
		return
	}
	m.reserved -= n
	if m.budget != nil {
		m.budget.Reserve(-n)
	}
}

// absorb moves what sub, the memory of a tree decoded on the side
// (an embedded request, a control record's value), holds into m.
func (m *treeMem) absorb(sub *treeMem) {
	m.slabs = append(m.slabs, sub.slabs...)
	m.ptrs = append(m.ptrs, sub.ptrs...)
	m.bufs = append(m.bufs, sub.bufs...)
	m.reserved += sub.reserved
	m.denied = m.denied || sub.denied
	*sub = treeMem{}
}

// slabUse is a pooled slab (its full capacity), its class, and how many
// of its nodes may have been used.
type slabUse struct {
	p     *[]Node
	n     int
	class int
}

// ptrUse is a pooled Children chunk and how many of its pointers may
// have been used.
type ptrUse struct {
	p     *[]*Node
	n     int
	class int
}

// used notes that s, the tree's slab last handed out by slab, holds len(s)
// nodes (the rest was never touched, and release need not clear it).
func (m *treeMem) used(s []Node) {
	if len(s) == 0 {
		return
	}
	for k := len(m.slabs) - 1; k >= 0; k-- {
		if u := &m.slabs[k]; &(*u.p)[:1][0] == &s[:1][0] {
			u.n = len(s)
			return
		}
	}
}

// slab returns an empty node slab to follow one of capacity last (0 for
// a tree's first): a pooled one of the next class.
func (m *treeMem) slab(last int) []Node {
	class := 0
	for class < len(slabClasses)-1 && slabClasses[class] <= last {
		class++
	}
	p, ok := slabPools[class].Get().(*[]Node)
	if !ok {
		s := make([]Node, slabClasses[class])
		p = &s
	}
	m.slabs = append(m.slabs, slabUse{p, slabClasses[class], class})
	return (*p)[:0]
}

// reserveNodes is how many nodes' memory a tree reserves at a time.
const reserveNodes = 256

// reserveNode accounts one more node of t's (t.nodes counts it already):
// every reserveNodes nodes their memory is reserved, so that where a
// refusal falls depends on the node count alone, not on the slabs the
// pools happened to give. It reports false once refused.
func (t *Tree) reserveNode() bool {
	if t.nodes%reserveNodes == 1 {
		return t.mem.reserve(reserveNodes * nodeCost)
	}
	return !t.mem.denied
}

// ptrChunk returns an empty chunk of Children pointers with room for at
// least k (k at most the largest class) to follow one of capacity last.
func (m *treeMem) ptrChunk(last, k int) []*Node {
	class := 0
	for class < len(ptrClasses)-1 && (ptrClasses[class] <= last || ptrClasses[class] < k) {
		class++
	}
	m.reserve(8 * int64(ptrClasses[class]))
	p, ok := ptrPools[class].Get().(*[]*Node)
	if !ok {
		s := make([]*Node, ptrClasses[class])
		p = &s
	}
	m.ptrs = append(m.ptrs, ptrUse{p, ptrClasses[class], class})
	return (*p)[:0]
}

// usedPtrs is used for a Children chunk.
func (m *treeMem) usedPtrs(s []*Node) {
	if cap(s) == 0 {
		return
	}
	for k := len(m.ptrs) - 1; k >= 0; k-- {
		if u := &m.ptrs[k]; &(*u.p)[:1][0] == &s[:1][0] {
			u.n = len(s)
			return
		}
	}
}

// buf returns an empty buffer with room for at least n bytes, pooled when
// n is in the pooled classes (m, when not nil, then keeps it for release).
func (m *treeMem) buf(n int) []byte {
	c := bits.Len(uint(max(n, 1) - 1)) // the class whose buffers hold n
	if m == nil || c > maxBufClass {
		return make([]byte, 0, n)
	}
	c = max(c, minBufClass)
	if p, ok := bufPools[c].Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<c)
}

// keep notes that the tree's space data b, made by buf or by a decoder,
// may be pooled on release.
func (m *treeMem) keep(b []byte) {
	if m != nil && cap(b) >= 1<<minBufClass {
		m.bufs = append(m.bufs, b)
	}
}

func (m *treeMem) release() {
	if poison.Released {
		m.poison()
		return
	}
	for _, s := range m.slabs {
		clear((*s.p)[:s.n]) // drop what the nodes point to
		slabPools[s.class].Put(s.p)
	}
	for _, p := range m.ptrs {
		clear((*p.p)[:p.n])
		ptrPools[p.class].Put(p.p)
	}
	for _, b := range m.bufs {
		putBuf(b)
	}
	if m.budget != nil && m.reserved > 0 {
		m.budget.Reserve(-m.reserved)
	}
	*m = treeMem{}
}

// poisonedNode is what every node of a released tree becomes when
// released memory is poisoned (internal/poison): a raw span of poisoned
// bytes named RELEASED, so that a use after release shows in any output.
var poisonedNode = Node{Name: poison.Marker, Type: poison.Marker, Kind: KindRaw, Flags: FlagError,
	Str: poison.Marker, Note: poison.Marker + ": used after protocol.Tree.Release", Int: -0x5a5a5a5a,
	Raw: []byte{poison.Byte, poison.Byte, poison.Byte, poison.Byte}, Len: 4}

// poison overwrites what m holds (every node, every Children pointer,
// every decompressed byte) with poison instead of pooling it, gives back
// its reservation, and forgets it.
func (m *treeMem) poison() {
	for _, s := range m.slabs {
		for i := range (*s.p)[:s.n] {
			(*s.p)[i] = poisonedNode
			(*s.p)[i].Children = []*Node{&poisonedNode}
		}
	}
	for _, p := range m.ptrs {
		for i := range (*p.p)[:p.n] {
			(*p.p)[i] = &poisonedNode
		}
	}
	for _, b := range m.bufs {
		poison.Fill(b)
	}
	if m.budget != nil && m.reserved > 0 {
		m.budget.Reserve(-m.reserved)
	}
	*m = treeMem{}
}

// putBuf hands b, no longer used, to the buffer pools (when its size is
// pooled).
func putBuf(b []byte) {
	if cap(b) < 1<<minBufClass || cap(b) > 2<<maxBufClass {
		return // too small to be worth it, or too large to keep around
	}
	c := min(bits.Len(uint(cap(b)))-1, maxBufClass) // the class b can serve
	b = b[:0]
	bufPools[c].Put(&b)
}
