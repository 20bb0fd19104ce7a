package protocol

import (
	"errors"
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

// A consumer subscription as Kafka serializes it (and -V shows it, with
// its version first) decodes whole; its fields are those DecodeStruct
// finds after the version.
func TestDecodeVersioned(t *testing.T) {
	s := kmsg.NewConsumerMemberMetadata()
	s.Version = 3
	s.Topics = []string{"orders", "payments"}
	s.OwnedPartitions = []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "orders", Partitions: []int32{0, 2}}}
	b := s.AppendTo(nil)
	if b[0] != 0 || b[1] != 3 {
		t.Fatalf("no version prefix: %x", b)
	}
	tr := decodeVersioned("ConsumerProtocolSubscription", b)
	if tr.Err != nil {
		t.Fatal(tr.Err)
	}
	r := tr.Root
	if r.Name != "ConsumerProtocolSubscription" || r.Note != "v3" || r.Off != 0 || r.Len != len(b) || r.Children[0].Name != "Version" || r.Children[0].Int != 3 {
		t.Errorf("root %+v, first child %+v", r, r.Children[0])
	}
	bare := DecodeStruct("ConsumerProtocolSubscription", 3, b[2:])
	if bare.Err != nil || len(bare.Root.Children)+1 != len(r.Children) {
		t.Errorf("bare decode: %v, %d children vs %d", bare.Err, len(bare.Root.Children), len(r.Children))
	}
	if topics := r.Child("Topics"); topics == nil || len(topics.Children) != 2 || topics.Children[1].Str != "payments" || topics.Children[1].Off != bare.Root.Child("Topics").Children[1].Off+2 {
		t.Errorf("topics %+v", topics)
	}
	if tr := decodeVersioned("ConsumerProtocolSubscription", []byte{0, 99, 1, 2}); !errors.Is(tr.Err, ErrUnknownVers) {
		t.Errorf("v99: %v", tr.Err)
	}
	if tr := decodeVersioned("ConsumerProtocolSubscription", []byte{0}); tr.Err == nil {
		t.Error("1 byte: no error")
	}
}

// decodeVersioned is DecodeVersioned with the zero Decoder.
func decodeVersioned(name string, b []byte) *Tree { return zeroDecoder.DecodeVersioned(name, b) }
