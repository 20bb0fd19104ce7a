package protocol

import "sync/atomic"

// This file holds the interpreter's plans: what decoding the fields of one
// struct in one message version needs to know of the schema, worked out
// once per (message, version) instead of for every struct the decoder
// meets. Without them every struct of a frame tested each of its fields'
// Versions and TaggedVersions twice (to size its children, then to
// decode), each field's NullableVersions and compactness, each array's
// element size and each tagged field's tag by a scan of the fields (an
// ApiVersions response of 60 keys: 60 times the same answers).
//
// A plan is a pure function of the schema table (after the package's
// init: roles, secrets, skims), the message's flexible versions and the
// version, and of the depth it is decoded at, which is fixed (the
// message's fields are at depth 1, a struct's fields one deeper), so that
// maxDepth's bounds apply to it as they did to the walk: a struct deeper
// than maxDepth has no plan (structFields and skipFields fail first), and
// minSize's answer past it is precomputed alike. TestPlanMatchesSchema
// holds every plan of every message version to the schema.
//
// Bounds: one plan per message version that is decoded, built at its
// first decode and kept (MessageSchema.plans, a slot per version of
// ValidVersions, given when the package initialises). The table has 757
// message versions with 6,308 fields present in them at every depth
// (TestPlanMatchesSchema), a fieldPlan of 64 bytes each: about 0.5 MB
// if every version of every message were met, a few KiB for the APIs a
// capture uses. Plans are built lazily and published with an atomic
// compare-and-swap: decoders on several goroutines may build the same
// plan at once, one of them is kept, and a published plan is never
// changed. A schema built outside the table (a test's) has no slots: its
// plan is built for each decode.

// structPlan is the plan of one struct's fields (a message, a struct
// field, the elements of a struct array) in one version.
type structPlan struct {
	// fields are the fields present and not tagged in the version, in
	// schema (wire) order.
	fields []fieldPlan
	// tagged are the fields tagged in the version, in schema order: a
	// tag is looked up among them first to last (taggedField).
	tagged []fieldPlan
	// kids is the room a full decode makes for the struct's children:
	// len(fields), and one more for the tagged-field buffer when the
	// message is flexible in the version.
	kids int
	// kidsKept is the same for a sparse decode whose SparseDrop names
	// none of keptRoles: the fields not skimmed (Field.skim), and the
	// buffer.
	kidsKept  int
	keptRoles RoleSet // the roles of the fields counted in kidsKept
	// config says the fields are a config entry's (isConfigEntry).
	config bool
	// fixed is fixedFields of the fields: their bytes when every one is
	// of a fixed size, else -1.
	fixed int
}

// fieldPlan is one field of a structPlan, with what its version says of
// it resolved.
type fieldPlan struct {
	f *Field
	// sub is the plan of the fields of a struct field or of the elements
	// of a struct array, one level deeper; nil for other kinds and for a
	// struct deeper than maxDepth.
	sub *structPlan
	// elem, for an array, is the element field (Field.elem); elemPlan is
	// its plan when the elements are not structs.
	elem     *Field
	elemPlan *fieldPlan
	// typ is a string, bytes or records field's wire type name
	// (wireTypeName).
	typ string
	// minElem, for an array, is the fewest bytes an element takes
	// (minSize), which the count is checked against.
	minElem  int
	tag      int32 // the tag, for a field tagged in the version
	nullable bool  // NullableVersions holds the version
	compact  bool  // encoded compactly (compactIn)
	skim     bool  // Field.skim: a sparse decode reads it without a node
	role     Role  // Field.Role
}

// planSlots returns the slots of m's plans, one per version of its
// ValidVersions (at most maxPlanVersions).
func planSlots(m *MessageSchema) []atomic.Pointer[structPlan] {
	n := int(m.ValidVersions.Max) - int(m.ValidVersions.Min) + 1
	if m.ValidVersions.Min < 0 || n <= 0 {
		return nil
	}
	return make([]atomic.Pointer[structPlan], min(n, maxPlanVersions))
}

// maxPlanVersions bounds the plan slots of one message: Kafka's messages
// have at most about 20 versions; the bound is for a table that would
// declare an open range.
const maxPlanVersions = 64

// initPlans gives every message of the table its plan slots.
func initPlans() {
	initSkim() // plans copy the skims
	for _, m := range Schemas {
		if m.plans == nil {
			m.plans = planSlots(m)
		}
	}
}

func init() { initPlans() }

// planOf returns the plan of message m's fields in version ver, building
// it on first use.
func planOf(m *MessageSchema, ver int16) *structPlan {
	flex := m.FlexibleVersions.Contains(ver)
	i := int(ver) - int(m.ValidVersions.Min)
	if i < 0 || i >= len(m.plans) {
		return buildPlan(m.Fields, ver, flex, 1)
	}
	slot := &m.plans[i]
	if p := slot.Load(); p != nil {
		return p
	}
	p := buildPlan(m.Fields, ver, flex, 1)
	if slot.CompareAndSwap(nil, p) {
		return p
	}
	return slot.Load()
}

// buildPlan returns the plan of fields in version ver of a message
// flexible in ver when flex, decoded at depth (structFields' depth once
// it entered the struct; the message's own fields are at 1).
func buildPlan(fields []Field, ver int16, flex bool, depth int) *structPlan {
	p := &structPlan{config: isConfigEntry(fields), fixed: fixedFields(fields, ver)}
	n, t := 0, 0
	for i := range fields {
		f := &fields[i]
		switch {
		case !f.Versions.Contains(ver):
		case f.TaggedVersions.Contains(ver):
			if f.Tag >= 0 {
				t++
			}
		default:
			n++
		}
	}
	p.fields = make([]fieldPlan, 0, n)
	if t > 0 {
		p.tagged = make([]fieldPlan, 0, t)
	}
	for i := range fields {
		f := &fields[i]
		if !f.Versions.Contains(ver) {
			continue
		}
		fp := planField(f, f.NullableVersions.Contains(ver), ver, flex, depth)
		if !f.TaggedVersions.Contains(ver) {
			p.fields = append(p.fields, fp)
			if !f.skim {
				p.kidsKept++
				if f.Role != RoleNone {
					p.keptRoles[f.Role>>6&1] |= 1 << (f.Role & 63)
				}
			}
		} else if f.Tag >= 0 {
			fp.tag = f.Tag
			p.tagged = append(p.tagged, fp)
		}
	}
	p.kids = len(p.fields)
	if flex {
		p.kids++
		p.kidsKept++
	}
	return p
}

// planField returns the plan of field f (nullable in the version when
// nullable) of a struct decoded at depth.
func planField(f *Field, nullable bool, ver int16, flex bool, depth int) fieldPlan {
	fp := fieldPlan{
		f:        f,
		tag:      -1,
		nullable: nullable,
		compact:  compactIn(f, flex, ver),
		skim:     f.skim,
		role:     f.Role,
	}
	switch f.Kind {
	case TypeString, TypeBytes, TypeRecords:
		fp.typ = wireTypeName(f.Kind, fp.compact, nullable)
	case TypeStruct:
		if depth < maxDepth {
			fp.sub = buildPlan(f.Fields, ver, flex, depth+1)
		}
	case TypeArray:
		fp.elem = f.elem
		if fp.elem == nil { // a field built outside the schema table
			fp.elem = elemFieldOf(f)
		}
		fp.minElem = minSize(fp.elem, false, ver, flex, depth)
		if f.Elem == TypeStruct {
			if depth < maxDepth {
				fp.sub = buildPlan(f.Fields, ver, flex, depth+1)
			}
		} else {
			e := planField(fp.elem, false, ver, flex, depth)
			fp.elemPlan = &e
		}
	}
	return fp
}

// skimmed reports whether a sparse decode reads the field of fp without
// a node: nothing in it means anything to the facts, or its role is one
// the caller drops (Decoder.SparseDrop).
func (ip *interp) skimmed(fp *fieldPlan) bool {
	return fp.skim || fp.role != RoleNone && ip.d.SparseDrop.Has(fp.role)
}

// kids returns the room for the children of a struct of plan p in the
// current decode.
func (ip *interp) kids(p *structPlan) int {
	if !ip.sparse {
		return p.kids
	}
	if drop := &ip.d.SparseDrop; drop[0]&p.keptRoles[0] == 0 && drop[1]&p.keptRoles[1] == 0 {
		return p.kidsKept
	}
	k := 0
	for i := range p.fields {
		if !ip.skimmed(&p.fields[i]) {
			k++
		}
	}
	if ip.flex {
		k++
	}
	return k
}

// taggedField returns the plan of the field tagged tag in p's version,
// or nil.
func (p *structPlan) taggedField(tag uint32) *fieldPlan {
	for i := range p.tagged {
		if p.tagged[i].tag == int32(tag) {
			return &p.tagged[i]
		}
	}
	return nil
}
