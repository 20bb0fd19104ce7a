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
// Reader calls in the same order, by the same plan, the same path
// recorded for the error's location), but gets no node. The rest of the
// tree is what the full decoder builds: the same nodes, spans, notes and
// flags.
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

// skim marks, once, the fields a sparse decode reads without a node.
var skimOnce sync.Once

func initSkim() {
	skimOnce.Do(func() {
		initSecrets()  // secrets and config entry parts are kept
		initSnapshot() // and a snapshot chunk's position
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
		kept := f.Role != RoleNone && !idList(f) || f.Secret != NotSecret || f.cfg != cfgNone || f.snap != snapNone
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

// skip reads the value of the field of fp as field does, building no
// node. A failure is left in the reader, as field leaves it.
func (ip *interp) skip(fp *fieldPlan) {
	r := &ip.r
	f := fp.f
	switch f.Kind {
	case TypeBool, TypeInt8, TypeInt16, TypeUint16, TypeInt32, TypeUint32, TypeInt64, TypeFloat64, TypeUUID:
		r.take(fixedSize(f.Kind))
	case TypeString, TypeBytes, TypeRecords:
		var size int
		switch {
		case fp.compact:
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
		if fp.nullable {
			if marker := r.Int8(); r.err != nil || marker < 0 {
				return
			}
		}
		ip.skipFields(fp.sub)
	case TypeArray:
		ip.skipArray(fp)
	default:
		r.Fail(r.off, fmt.Errorf("%w: field type %q (kind %d) has no wire form", ErrShort, f.Type, f.Kind))
	}
}

// skipFields reads a struct's fields (plan p) and tagged-field buffer as
// structFields does, building no node.
func (ip *interp) skipFields(p *structPlan) {
	r := &ip.r
	if ip.depth++; ip.depth > maxDepth {
		r.Fail(r.off, ErrTooDeep)
		ip.depth--
		return
	}
	for i := range p.fields {
		fp := &p.fields[i]
		ip.skip(fp)
		if r.err != nil {
			ip.failedIn(fp.f.Name)
			ip.depth--
			return
		}
	}
	if ip.flex {
		ip.skipTagged(p)
	}
	ip.depth--
}

// skipArray reads an array as array does, building no node.
func (ip *interp) skipArray(fp *fieldPlan) {
	r := &ip.r
	f := fp.f
	var count int
	if fp.compact {
		count = r.CompactArrayLen(fp.minElem)
	} else {
		count = r.ArrayLen(fp.minElem)
	}
	if r.err != nil || count <= 0 {
		return
	}
	fixed := -1 // the bytes of an element of fixed-size fields (its tagged fields apart)
	if f.Elem == TypeStruct && fp.sub != nil {
		fixed = fp.sub.fixed
	}
	for i := 0; i < count; i++ {
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
			ip.skipFields(fp.sub)
		} else {
			ip.skip(fp.elemPlan)
		}
		if r.err != nil {
			ip.failIdx = i + 1
			return
		}
	}
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

// skipTagged reads a tagged-field buffer of a struct of plan p as
// taggedBuffer does, building no node.
func (ip *interp) skipTagged(p *structPlan) {
	r := &ip.r
	if r.noTags() {
		return
	}
	count := r.TaggedFieldCount()
	if r.err != nil {
		return
	}
	for i := 0; i < count; i++ {
		tag, dataEnd, ok := ip.taggedHead()
		if !ok {
			return
		}
		fp := p.taggedField(tag)
		if fp == nil {
			r.take(dataEnd - r.off)
			continue
		}
		if !ip.skipTaggedField(fp, dataEnd) {
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

// skipTaggedField reads the data of the known tagged field of fp, up to
// dataEnd, without a node, and reports success; bytes of it left unread
// are passed over, as taggedBuffer passes them.
func (ip *interp) skipTaggedField(fp *fieldPlan, dataEnd int) bool {
	r := &ip.r
	old := r.end
	r.end = dataEnd
	ip.skip(fp)
	r.end = old
	if r.err != nil {
		ip.failedIn(fp.f.Name)
		return false
	}
	r.off = max(r.off, dataEnd)
	return true
}
