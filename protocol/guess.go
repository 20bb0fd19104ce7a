package protocol

// This file answers "which API and version could this response be?" for
// a response whose request was not captured (an orphan): responses carry
// no API key, so the only evidence is which response schemas decode the
// whole frame. A Prober tries them, reusing one interpreter's memory and
// building no error text, so that trying every (key, version) of the
// schema table — about a thousand — costs little per frame; record
// batches and embedded structs are not decoded while trying.

// APIVersion names one version of one API.
type APIVersion struct{ Key, Version int16 }

// errProbe is the failure of a probe: only that there was one matters.
var errProbe = &DecodeError{Path: "probe", Err: ErrShort}

// Prober tries response schemas on frames. The zero value is ready; a
// Prober is not safe for concurrent use.
type Prober struct {
	ip     interp
	t      Tree
	spaces [1]Space
	d      Decoder
	all    []probeSchema // every response schema, for Candidates
}

// probeSchema is one response schema to try, with its header's.
type probeSchema struct {
	APIVersion
	m, hs *MessageSchema
	hv    int16
}

// schema finds what Fits needs for key at version ver.
func probeSchemaOf(key, ver int16) (probeSchema, bool) {
	m := Lookup(key, true, ver)
	if m == nil {
		return probeSchema{}, false
	}
	hv := ResponseHeaderVersion(key, ver)
	hs := LookupName("ResponseHeader", hv)
	return probeSchema{APIVersion{key, ver}, m, hs, hv}, hs != nil
}

// Fits reports whether frame, a whole response frame (4-byte length
// prefix, response header, body), decodes as the response to API key key
// at version ver with no error and no byte left over (a known client
// quirk's leftover aside).
func (p *Prober) Fits(frame []byte, key, ver int16) bool {
	ps, ok := probeSchemaOf(key, ver)
	return ok && p.fits(frame, &ps)
}

func (p *Prober) fits(frame []byte, ps *probeSchema) bool {
	var r Reader
	r.Reset(frame, 0, len(frame))
	if size := r.Int32(); r.err != nil || int(size) != len(frame)-4 {
		return false
	}
	ip := &p.ip
	clear(ip.slab)
	slab, ptrs, path := ip.slab[:0], ip.ptrs[:0], ip.path[:0]
	clear(ptrs[:cap(ptrs)])
	p.t = Tree{}
	p.spaces[0] = Space{Name: "probe", Data: frame}
	p.t.Spaces = p.spaces[:]
	*ip = interp{d: &p.d, t: &p.t, slab: slab, ptrs: ptrs, path: path, probe: true}
	ip.r.Reset(frame, 4, len(frame))
	ip.message(ps.hs, ps.hv, ip.newNode(), len(frame), false)
	ok := ip.err == nil
	if ok {
		ip.message(ps.m, ps.Version, ip.newNode(), len(frame), true)
		ok = ip.err == nil
	}
	p.spaces[0] = Space{}
	ip.r.Reset(nil, 0, 0)
	return ok
}

// Candidates returns every (API key, version) whose response schema fits
// frame (Fits), in key and version order.
func (p *Prober) Candidates(frame []byte) []APIVersion {
	if p.all == nil {
		for _, a := range APIs() {
			for v := a.Versions.Min; v <= a.Versions.Max; v++ {
				if ps, ok := probeSchemaOf(a.Key, v); ok {
					p.all = append(p.all, ps)
				}
			}
		}
	}
	var out []APIVersion
	for i := range p.all {
		if p.fits(frame, &p.all[i]) {
			out = append(out, p.all[i].APIVersion)
		}
	}
	return out
}
