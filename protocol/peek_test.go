package protocol

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// kmsgRequestFrame encodes r (its version set) as a whole request frame
// with client id "peek", as a client sends it.
func kmsgRequestFrame(r kmsg.Request, corr int32) []byte {
	b := make([]byte, 4, 128)
	b = binary.BigEndian.AppendUint16(b, uint16(r.Key()))
	b = binary.BigEndian.AppendUint16(b, uint16(r.GetVersion()))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	hv := RequestHeaderVersion(r.Key(), r.GetVersion())
	if hv >= 1 {
		b = append(b, 0, 4, 'p', 'e', 'e', 'k')
	}
	if hv >= 2 {
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// kmsgResponseFrame encodes r as a whole response frame.
func kmsgResponseFrame(r kmsg.Response, corr int32) []byte {
	b := make([]byte, 4, 128)
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if ResponseHeaderVersion(r.Key(), r.GetVersion()) >= 1 {
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

func TestPeekProduceAcks(t *testing.T) {
	vs := apiVersionsOf(t, 0)
	for v := vs.Min; v <= vs.Max; v++ {
		for _, acks := range []int16{-1, 0, 1} {
			r := kmsg.NewPtrProduceRequest()
			r.Version = v
			r.Acks = acks
			tid := "txn-1"
			r.TransactionID = &tid
			r.TimeoutMillis = 30000
			tp := kmsg.NewProduceRequestTopic()
			tp.Topic = "orders"
			pp := kmsg.NewProduceRequestTopicPartition()
			pp.Records = []byte{1, 2, 3}
			tp.Partitions = append(tp.Partitions, pp)
			r.Topics = append(r.Topics, tp)
			fb := kmsgRequestFrame(r, 7)
			got, ok := PeekProduceAcks(fb)
			if !ok || got != acks {
				t.Errorf("v%d acks %d: got %d, %v", v, acks, got, ok)
			}
			// Cut right after Acks: still read; cut inside it: not.
			n := bytes.Index(fb, binary.BigEndian.AppendUint32(nil, 30000)) // TimeoutMs follows Acks
			if n < 0 {
				t.Fatalf("v%d: no timeout in %x", v, fb)
			}
			if got, ok := PeekProduceAcks(fb[:n]); !ok || got != acks {
				t.Errorf("v%d cut after acks: got %d, %v", v, got, ok)
			}
			if _, ok := PeekProduceAcks(fb[:n-1]); ok {
				t.Errorf("v%d cut inside acks: ok", v)
			}
		}
	}
	// Not a Produce request, or a version kwire does not know.
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 9
	if _, ok := PeekProduceAcks(kmsgRequestFrame(md, 1)); ok {
		t.Error("Metadata request: ok")
	}
	p := kmsg.NewPtrProduceRequest()
	p.Version = 3
	fb := kmsgRequestFrame(p, 1)
	binary.BigEndian.PutUint16(fb[6:], 99)
	if _, ok := PeekProduceAcks(fb); ok {
		t.Error("Produce v99: ok")
	}
}

func TestPeekSaslHandshakeAndErrorCode(t *testing.T) {
	for v := int16(0); v <= 1; v++ {
		r := kmsg.NewPtrSASLHandshakeRequest()
		r.Version, r.Mechanism = v, "SCRAM-SHA-512"
		if m, ok := PeekSaslHandshake(kmsgRequestFrame(r, 3)); !ok || m != "SCRAM-SHA-512" {
			t.Errorf("SaslHandshake v%d: %q, %v", v, m, ok)
		}
		resp := kmsg.NewPtrSASLHandshakeResponse()
		resp.Version, resp.ErrorCode = v, 33 // UNSUPPORTED_SASL_MECHANISM
		resp.SupportedMechanisms = []string{"PLAIN"}
		if c, ok := PeekErrorCode(kmsgResponseFrame(resp, 3), 17, v); !ok || c != 33 {
			t.Errorf("SaslHandshakeResponse v%d: %d, %v", v, c, ok)
		}
	}
	// ApiVersions: response header v0 whatever the version (KIP-511),
	// and an unknown version read as v0.
	for _, v := range []int16{0, 3, 4} {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version, resp.ErrorCode = v, 35
		fb := kmsgResponseFrame(resp, 1)
		if c, ok := PeekErrorCode(fb, 18, v); !ok || c != 35 {
			t.Errorf("ApiVersionsResponse v%d: %d, %v", v, c, ok)
		}
	}
	v0 := kmsg.NewPtrApiVersionsResponse()
	v0.ErrorCode = 35
	if c, ok := PeekErrorCode(kmsgResponseFrame(v0, 1), 18, 99); !ok || c != 35 {
		t.Errorf("ApiVersionsResponse v99 answered at v0: %d, %v", c, ok)
	}
}

func TestPeekAPIVersions(t *testing.T) {
	for _, v := range []int16{0, 1, 2, 3, 4} {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = v
		for _, k := range [][3]int16{{0, 3, 11}, {18, 0, 4}, {3, 1, 12}} {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MinVersion, ak.MaxVersion = k[0], k[1], k[2]
			resp.ApiKeys = append(resp.ApiKeys, ak)
		}
		code, ranges, ok := PeekAPIVersions(kmsgResponseFrame(resp, 1), v)
		want := []APIRange{{Key: 0, Min: 3, Max: 11}, {Key: 18, Min: 0, Max: 4}, {Key: 3, Min: 1, Max: 12}}
		if !ok || code != 0 || len(ranges) != len(want) {
			t.Fatalf("v%d: code %d ranges %v ok %v", v, code, ranges, ok)
		}
		for i := range want {
			if ranges[i] != want[i] {
				t.Errorf("v%d range %d: %v, want %v", v, i, ranges[i], want[i])
			}
		}
		fb := kmsgResponseFrame(resp, 1)
		if _, _, ok := PeekAPIVersions(fb[:len(fb)/2], v); ok {
			t.Errorf("v%d cut inside ApiKeys: ok", v)
		}
	}
}

// TestPeekAPIVersionsTagged: ApiKeys whose elements have no tagged
// fields, read at once, and ApiKeys with some elements that have, read
// field by field, give their ranges, and a frame cut anywhere before the
// end of ApiKeys is not ok.
func TestPeekAPIVersionsTagged(t *testing.T) {
	for _, c := range []struct{ v, taggedEvery int16 }{{3, 0}, {3, 3}, {4, 0}, {4, 3}, {4, 9}} {
		v := c.v
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = v
		var want []APIRange
		for i := range int16(9) {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MinVersion, ak.MaxVersion = 3*i, i, 20+i
			if c.taggedEvery > 0 && i%c.taggedEvery == c.taggedEvery-1 {
				ak.UnknownTags.Set(uint32(i), []byte{byte(i), 0xff, 0}) // a 0 byte that is not a count
			}
			resp.ApiKeys = append(resp.ApiKeys, ak)
			want = append(want, APIRange{Key: 3 * i, Min: i, Max: 20 + i})
		}
		fb := kmsgResponseFrame(resp, 1)
		code, ranges, ok := PeekAPIVersions(fb, v)
		if !ok || code != 0 || !slices.Equal(ranges, want) {
			t.Fatalf("v%d: code %d ranges %v ok %v, want %v", v, code, ranges, ok, want)
		}
		// ApiKeys ends before ThrottleTimeMs (4 bytes) and the tagged
		// fields after it (1 byte: none).
		end := len(fb) - 5
		for cut := range len(fb) {
			_, ranges, ok := PeekAPIVersions(fb[:cut], v)
			if ok != (cut >= end) || ok && !slices.Equal(ranges, want) {
				t.Errorf("v%d cut at %d of %d: ok %v, ranges %v", v, cut, len(fb), ok, ranges)
			}
		}
	}
}

// TestPeekAPIVersionsNull: a null ApiKeys (length -1, or compact 0)
// gives no ranges and ok, an empty one too.
func TestPeekAPIVersionsNull(t *testing.T) {
	for _, v := range []int16{0, 2, 3, 4} {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = v
		empty := kmsg.NewApiVersionsResponseApiKey()
		empty.ApiKey = 7
		for _, keys := range [][]kmsg.ApiVersionsResponseApiKey{nil, {empty}} {
			resp.ApiKeys = keys
			fb := kmsgResponseFrame(resp, 1)
			// ErrorCode at 8, ApiKeys' length at 10 (the response
			// header of ApiVersions is v0: no tagged fields).
			null := slices.Clone(fb)
			if v >= 3 {
				null[10] = 0 // compact: null
			} else {
				binary.BigEndian.PutUint32(null[10:], 0xffffffff)
			}
			for _, c := range []struct {
				name string
				fb   []byte
				want int
			}{{"as sent", fb, len(keys)}, {"null", null, 0}} {
				if c.name == "null" && len(keys) > 0 {
					continue // the element's bytes would follow a null array
				}
				code, ranges, ok := PeekAPIVersions(c.fb, v)
				if !ok || code != 0 || len(ranges) != c.want {
					t.Errorf("v%d %s with %d keys: code %d ranges %v ok %v", v, c.name, len(keys), code, ranges, ok)
				}
			}
		}
	}
}

// TestPeekAllocs: the dissector peeks at every Produce request.
func TestPeekAllocs(t *testing.T) {
	r := kmsg.NewPtrProduceRequest()
	r.Version = 9
	fb := kmsgRequestFrame(r, 1)
	PeekProduceAcks(fb)
	if n := testing.AllocsPerRun(100, func() { PeekProduceAcks(fb) }); n > 0 {
		t.Errorf("%.1f allocations per peek", n)
	}
	// Every connection's ApiVersions response is peeked: its ranges are
	// the one allocation.
	av := kmsg.NewPtrApiVersionsResponse()
	av.Version = 3
	for i := range int16(60) {
		ak := kmsg.NewApiVersionsResponseApiKey()
		ak.ApiKey, ak.MaxVersion = i, 9
		av.ApiKeys = append(av.ApiKeys, ak)
	}
	fb = kmsgResponseFrame(av, 1)
	if n := testing.AllocsPerRun(100, func() { PeekAPIVersions(fb, 3) }); n != 1 {
		t.Errorf("%.1f allocations per ApiVersions peek, want 1 (the ranges)", n)
	}
}

func apiVersionsOf(t *testing.T, key int16) Versions {
	for _, a := range APIs() {
		if a.Key == key {
			return a.Versions
		}
	}
	t.Fatalf("no API key %d", key)
	return NoVersions
}

// librdkafka 0.9.1-1.3.0 sent ApiVersions v0 with 4 trailing zero bytes:
// shown and explained, not an error. Other trailing bytes still are.
func TestQuirkLibrdkafkaAPIVersionsV0(t *testing.T) {
	// length 21, ApiVersions v0, corr 1, client id "rdkafka", then INT32 0.
	fb := []byte{0, 0, 0, 21, 0, 18, 0, 0, 0, 0, 0, 1, 0, 7, 'r', 'd', 'k', 'a', 'f', 'k', 'a', 0, 0, 0, 0}
	tr := DecodeRequest(fb)
	if tr.Err != nil || tr.FirstError() != nil {
		t.Fatalf("error %v / %v", tr.Err, tr.FirstError())
	}
	_, _, body := FrameParts(tr.Root)
	left := body.Child("leftover")
	if left == nil || left.Off != 21 || left.Len != 4 || left.Flags&FlagLenient == 0 ||
		!strings.Contains(left.Note, "librdkafka 0.9.1 to 1.3.0") || !strings.Contains(left.Note, "not an error") {
		t.Fatalf("leftover %+v", left)
	}
	for _, tc := range []struct {
		name string
		fb   []byte
	}{
		{"not zero", []byte{0, 0, 0, 21, 0, 18, 0, 0, 0, 0, 0, 1, 0, 7, 'r', 'd', 'k', 'a', 'f', 'k', 'a', 0, 0, 0, 1}},
		{"5 bytes", []byte{0, 0, 0, 22, 0, 18, 0, 0, 0, 0, 0, 1, 0, 7, 'r', 'd', 'k', 'a', 'f', 'k', 'a', 0, 0, 0, 0, 0}},
		{"v1", []byte{0, 0, 0, 21, 0, 18, 0, 1, 0, 0, 0, 1, 0, 7, 'r', 'd', 'k', 'a', 'f', 'k', 'a', 0, 0, 0, 0}},
	} {
		if tr := DecodeRequest(tc.fb); !errors.Is(tr.Err, ErrLeftover) {
			t.Errorf("%s: error %v, want ErrLeftover", tc.name, tr.Err)
		}
	}
}

// FuzzPeekAPIVersions: PeekAPIVersions, which reads the usual elements at
// once, gives what reading every element field by field (as it did
// before, peekAPIVersionsFieldwise) gives, on any bytes.
func FuzzPeekAPIVersions(f *testing.F) {
	for _, v := range []int16{0, 1, 2, 3, 4} {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.Version = v
		for i := range int16(5) {
			ak := kmsg.NewApiVersionsResponseApiKey()
			ak.ApiKey, ak.MaxVersion = i, 2*i
			if v >= 3 && i == 3 {
				ak.UnknownTags.Set(9, []byte{1, 2})
			}
			resp.ApiKeys = append(resp.ApiKeys, ak)
		}
		f.Add(kmsgResponseFrame(resp, 1), v)
	}
	f.Fuzz(func(t *testing.T, frame []byte, ver int16) {
		code, ranges, ok := PeekAPIVersions(frame, ver)
		wcode, wranges, wok := peekAPIVersionsFieldwise(frame, ver)
		if code != wcode || ok != wok || !slices.Equal(ranges, wranges) {
			t.Fatalf("v%d: %d %v %v, field by field %d %v %v", ver, code, ranges, ok, wcode, wranges, wok)
		}
	})
}

// peekAPIVersionsFieldwise is PeekAPIVersions as it was before it read
// elements at once: every element field by field.
func peekAPIVersionsFieldwise(frame []byte, ver int16) (code int16, ranges []APIRange, ok bool) {
	var r Reader
	if _, _, ok := skimTo(&r, frame, true, keyApiVersions, ver, "ErrorCode"); !ok {
		return 0, nil, false
	}
	code = r.Int16()
	f, compact, ok := skimTo(&r, frame, true, keyApiVersions, ver, "ApiKeys")
	if !ok || f.Kind != TypeArray || f.Elem != TypeStruct {
		return code, nil, false
	}
	flex := Lookup(keyApiVersions, true, ver).FlexibleVersions.Contains(ver)
	var n int
	if compact {
		n = r.CompactArrayLen(6)
	} else {
		n = r.ArrayLen(6)
	}
	if r.err != nil {
		return code, nil, false
	}
	// Which of each element's fields go where, worked out once: an
	// element is then read with no look at the schema.
	const (
		skipField = iota
		keyField
		minField
		maxField
	)
	var slots [8]uint8
	k := 0
	for i := range f.Fields {
		g := &f.Fields[i]
		if !g.Versions.Contains(ver) || g.TaggedVersions.Contains(ver) {
			continue
		}
		if g.Kind != TypeInt16 || k == len(slots) {
			return code, nil, false // not the layout this reads
		}
		switch g.Name {
		case "ApiKey":
			slots[k] = keyField
		case "MinVersion":
			slots[k] = minField
		case "MaxVersion":
			slots[k] = maxField
		}
		k++
	}
	ranges = make([]APIRange, 0, max(n, 0))
	for range n {
		var a APIRange
		for _, slot := range slots[:k] {
			v := r.Int16()
			switch slot {
			case keyField:
				a.Key = v
			case minField:
				a.Min = v
			case maxField:
				a.Max = v
			}
		}
		if flex {
			r.TaggedFields(nil)
		}
		if r.err != nil {
			return code, nil, false
		}
		ranges = append(ranges, a)
	}
	return code, ranges, true
}
