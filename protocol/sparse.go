package protocol

import (
	"fmt"
	"sync"
)

// This file is the sparse decoding of Decoder.Sparse: a body decoded for
// what the facts layer reads (package facts) and nothing else. A field
// whose value means nothing to the facts — no Role, no secret, no config
// entry part, not bytes or records, and nothing of the kind inside it —
// is read and checked exactly as the full decoder reads it (the same
// Reader calls in the same order, the same path pushed for the error's
// location), but gets no node. The rest of the tree is what the full
// decoder builds: the same nodes, spans, notes and flags.
//
// What a sparse tree keeps, by construction, is every node facts.Of reads:
// fields with a role, bytes fields (SASL tokens, subscriptions and
// assignments, embedded requests), RECORDS fields, secret fields and
// config entry parts (secrets.go), and the structs and arrays above them,
// arrays with all their elements. TestSparseFactsAgree holds facts.Of of
// both trees equal, with their errors, on every vector, and
// FuzzSparseAgree on any body.
//
// The limits on one tree (Decoder.MaxNodes, Decoder.MaxMemory) count what
// the tree holds, as they bound memory: a field read without a node costs
// none, so a sparse decode reaches them later than a full one, or not at
// all — a frame too large to decode whole for -V (an ApiVersions response
// of millions of ranges) still gives the facts of its line. The time a
// skimmed span takes is bounded by its bytes (every element of an array
// takes at least one byte, as array counts are checked against the bytes
// left). Below the limits the two decodes fail alike.

// RoleSet is a set of roles (Decoder.SparseDrop). The zero set is empty.
type RoleSet [2]uint64

// NewRoleSet returns the set of roles rs.
func NewRoleSet(rs ...Role) RoleSet {
	var s RoleSet
	for _, r := range rs {
		s[r>>6&1] |= 1 << (r & 63)
	}
	return s
}

// Has reports whether r is in s.
func (s *RoleSet) Has(r Role) bool { return s[r>>6&1]&(1<<(r&63)) != 0 }

// compile-time check that every role fits a RoleSet.
var _ [128 - numRoles]struct{}

// skimmed reports whether a sparse decode reads f without a node.
func (ip *interp) skimmed(f *Field) bool {
	return f.skim || f.Role != RoleNone && ip.d.SparseDrop.Has(f.Role)
}

// skim marks, once, the fields a sparse decode reads without a node.
var skimOnce sync.Once

func initSkim() {
	skimOnce.Do(func() {
		initSecrets() // secrets and config entry parts are kept
		for _, m := range Schemas {
			markSkim(m.Fields, 0)
		}
	})
}

func init() { initSkim() }

// markSkim sets skim on fields and below, and reports whether any of them
// is kept (not skimmed).
func markSkim(fields []Field, depth int) (anyKept bool) {
	for i := range fields {
		f := &fields[i]
		kept := f.Role != RoleNone && !idList(f) || f.Secret != NotSecret || f.cfg != cfgNone
		switch f.Kind {
		case TypeBytes, TypeRecords:
			kept = true
		case TypeArray:
			if f.Elem == TypeBytes || f.Elem == TypeRecords {
				kept = true
			}
		}
		if len(f.Fields) > 0 {
			if depth >= maxDepth || markSkim(f.Fields, depth+1) {
				kept = true
			}
		}
		f.skim = !kept
		if f.elem != nil {
			f.elem.skim = f.skim
		}
		anyKept = anyKept || kept
	}
	return anyKept
}

// idList reports whether f is a list of broker, producer or topic IDs
// (a partition's replicas, ISR and offline replicas; DescribeProducers'
// and the quota APIs' filters): the facts layer reads those IDs one at a
// time, as a struct's own field, never as a list (facts/build.go's view
// skips arrays of them), so a list of them is skimmed like a field
// without a role. On a Metadata response of a cluster of 80,000
// partitions they are half the nodes.
func idList(f *Field) bool {
	if f.Kind != TypeArray || f.Elem == TypeStruct {
		return false
	}
	switch f.Role {
	case RoleBrokerID, RoleProducerID, RoleTopicID:
		return true
	}
	return false
}

// skip reads the value of field f (nullable when its version says so) as
// field does, building no node. A failure is left in the reader, as
// field leaves it.
func (ip *interp) skip(f *Field, nullable bool) {
	r := &ip.r
	switch f.Kind {
	case TypeBool, TypeInt8, TypeInt16, TypeUint16, TypeInt32, TypeUint32, TypeInt64, TypeFloat64, TypeUUID:
		r.take(fixedSize(f.Kind))
	case TypeString, TypeBytes, TypeRecords:
		var size int
		switch {
		case ip.fieldFlex(f):
			size = r.CompactLen()
		case f.Kind == TypeString:
			size = r.StringLen()
		default:
			size = r.BytesLen()
		}
		if r.err == nil && size > 0 {
			r.take(size)
		}
	case TypeStruct:
		if nullable {
			if marker := r.Int8(); r.err != nil || marker < 0 {
				return
			}
		}
		ip.skipFields(f.Fields)
	case TypeArray:
		ip.skipArray(f)
	default:
		r.Fail(r.off, fmt.Errorf("%w: field type %q (kind %d) has no wire form", ErrShort, f.Type, f.Kind))
	}
}

// skipFields reads a struct's fields and tagged-field buffer as
// structFields does, building no node.
func (ip *interp) skipFields(fields []Field) {
	r := &ip.r
	if ip.depth++; ip.depth > maxDepth {
		r.Fail(r.off, ErrTooDeep)
		ip.depth--
		return
	}
	for i := range fields {
		f := &fields[i]
		if !f.Versions.Contains(ip.ver) || f.TaggedVersions.Contains(ip.ver) {
			continue
		}
		ip.push(f.Name)
		ip.skip(f, f.NullableVersions.Contains(ip.ver))
		ip.pop()
		if r.err != nil {
			ip.depth--
			return
		}
	}
	if ip.flex {
		ip.skipTagged(fields)
	}
	ip.depth--
}

// skipArray reads an array as array does, building no node.
func (ip *interp) skipArray(f *Field) {
	r := &ip.r
	elem := f.elem
	if elem == nil {
		elem = elemFieldOf(f)
	}
	minElem := ip.minSize(elem, false)
	var count int
	if ip.fieldFlex(f) {
		count = r.CompactArrayLen(minElem)
	} else {
		count = r.ArrayLen(minElem)
	}
	if r.err != nil || count <= 0 {
		return
	}
	top := len(ip.path) - 1
	fixed := -1 // the bytes of an element of fixed-size fields (its tagged fields apart)
	if f.Elem == TypeStruct && ip.depth < maxDepth {
		fixed = fixedFields(f.Fields, ip.ver)
	}
	for i := 0; i < count; i++ {
		ip.path[top].idx = i
		// An element of fixed-size fields, all there, with no tagged
		// field: its bytes are passed over at once. Any other reads field
		// by field, as it fails at the same place.
		if fixed >= 0 && r.lim-r.off > fixed && (!ip.flex || r.b[r.off-r.shift+fixed] == 0) {
			r.off += fixed
			if ip.flex {
				r.off++
			}
			continue
		}
		if f.Elem == TypeStruct {
			ip.skipFields(f.Fields)
		} else {
			ip.skip(elem, false)
		}
		if r.err != nil {
			ip.capture()
			return
		}
	}
	ip.path[top].idx = -1
}

// fixedFields returns the bytes that fields take in version ver when all
// that are there (not tagged) are of fixed size, else -1.
func fixedFields(fields []Field, ver int16) int {
	n := 0
	for i := range fields {
		f := &fields[i]
		if !f.Versions.Contains(ver) || f.TaggedVersions.Contains(ver) {
			continue
		}
		k := fixedSize(f.Kind)
		if k == 0 {
			return -1
		}
		n += k
	}
	return n
}

// skipTagged reads a tagged-field buffer as taggedBuffer does, building
// no node.
func (ip *interp) skipTagged(fields []Field) {
	r := &ip.r
	count := r.TaggedFieldCount()
	if r.err != nil {
		return
	}
	for i := 0; i < count; i++ {
		tag, dataEnd, ok := ip.taggedHead()
		if !ok {
			return
		}
		f := taggedField(fields, tag, ip.ver)
		if f == nil {
			r.take(dataEnd - r.off)
			continue
		}
		if !ip.skipTaggedField(f, dataEnd) {
			return
		}
	}
}

// taggedHead reads a tagged field's tag and size (KIP-482) and returns
// the tag and where its data ends, or ok false after a failure.
func (ip *interp) taggedHead() (tag uint32, dataEnd int, ok bool) {
	r := &ip.r
	tag = r.UnsignedVarint()
	sizeOff := r.off
	size := int64(r.UnsignedVarint())
	if r.err == nil {
		r.checkLen(sizeOff, size)
	}
	if r.err != nil {
		return 0, 0, false
	}
	return tag, r.off + int(size), true
}

// skipTaggedField reads the data of known tagged field f, up to dataEnd,
// without a node, and reports success; bytes of it left unread are
// passed over, as taggedBuffer passes them.
func (ip *interp) skipTaggedField(f *Field, dataEnd int) bool {
	r := &ip.r
	old := r.end
	r.end = dataEnd
	ip.push(f.Name)
	ip.skip(f, f.NullableVersions.Contains(ip.ver))
	ip.pop()
	r.end = old
	if r.err != nil {
		return false
	}
	r.off = max(r.off, dataEnd)
	return true
}
