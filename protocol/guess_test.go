package protocol

import (
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Every response kmsg encodes fits its own (key, version); a frame with a
// byte more or less does not.
func TestProberFitsOwnSchema(t *testing.T) {
	var p Prober
	n := 0
	for _, r := range []kmsg.Response{
		kmsg.NewPtrMetadataResponse(), kmsg.NewPtrHeartbeatResponse(), kmsg.NewPtrFindCoordinatorResponse(),
		kmsg.NewPtrSyncGroupResponse(), kmsg.NewPtrDescribeGroupsResponse(), kmsg.NewPtrListOffsetsResponse(),
		kmsg.NewPtrCreateTopicsResponse(), kmsg.NewPtrInitProducerIDResponse(),
	} {
		for v := r.GetVersion(); v <= r.MaxVersion(); v++ {
			if Lookup(r.Key(), true, v) == nil {
				continue
			}
			r.SetVersion(v)
			fb := kmsgResponseFrame(r, 5)
			if !p.Fits(fb, r.Key(), v) {
				t.Errorf("%s v%d does not fit its own schema", APIName(r.Key()), v)
			}
			long := append(append([]byte(nil), fb...), 0)
			long[3]++
			if p.Fits(long, r.Key(), v) {
				t.Errorf("%s v%d with a byte more fits", APIName(r.Key()), v)
			}
			found := false
			for _, c := range p.Candidates(fb) {
				found = found || c == APIVersion{r.Key(), v}
			}
			if !found {
				t.Errorf("%s v%d: not among the candidates", APIName(r.Key()), v)
			}
			n++
		}
	}
	if n < 50 {
		t.Errorf("only %d versions tried", n)
	}
}

func TestProberAllocs(t *testing.T) {
	var p Prober
	r := kmsg.NewPtrMetadataResponse()
	r.Version = 12
	fb := kmsgResponseFrame(r, 5)
	p.Candidates(fb)
	n := testing.AllocsPerRun(20, func() { p.Candidates(fb) })
	t.Logf("%.0f allocations for %d candidates", n, len(p.all))
	// A failed read allocates its small error value; nothing else should.
	if n > 2*float64(len(p.all)) {
		t.Errorf("%.0f allocations to try %d schemas", n, len(p.all))
	}
}

func BenchmarkProberCandidates(b *testing.B) {
	var p Prober
	r := kmsg.NewPtrMetadataResponse()
	r.Version = 12
	t := kmsg.NewMetadataResponseTopic()
	name := "orders"
	t.Topic = &name
	t.Partitions = make([]kmsg.MetadataResponseTopicPartition, 3)
	r.Topics = append(r.Topics, t)
	fb := kmsgResponseFrame(r, 5)
	b.ReportAllocs()
	for b.Loop() {
		p.Candidates(fb)
	}
}

// For every response kmsg can encode, filled with distinct values, at
// every version: its own (key, version) is among the candidates, and for
// most APIs a filled response fits nothing else — the guess is not
// limited to a few well-known keys.
func TestProberEveryResponse(t *testing.T) {
	var p Prober
	tried, unique := 0, map[int16]bool{}
	for key := int16(0); key <= 100; key++ {
		proto := kmsg.ResponseForKey(key)
		if proto == nil {
			continue
		}
		for v := int16(0); v <= proto.MaxVersion(); v++ {
			if Lookup(key, true, v) == nil {
				continue
			}
			r := kmsg.ResponseForKey(key)
			if _, skip := kmsgDiffers[reflect.TypeOf(r).Elem().Name()+" v"+itoa16(v)]; skip {
				continue
			}
			r.SetVersion(v)
			f := &filler{}
			f.fill(reflect.ValueOf(r).Elem(), true)
			fb := kmsgResponseFrame(r, 9)
			c := p.Candidates(fb)
			if !slices.Contains(c, APIVersion{key, v}) {
				t.Errorf("%s v%d: not among its %d candidates", APIName(key), v, len(c))
			}
			if len(c) == 1 {
				unique[key] = true
			}
			tried++
		}
	}
	t.Logf("%d responses tried; %d API keys have a version whose filled response fits only itself", tried, len(unique))
	if tried < 300 || len(unique) < 45 {
		t.Errorf("%d responses tried, %d keys with a unique guess", tried, len(unique))
	}
}
