package dissect

import (
	"bytes"
	"github.com/kwire/kwire/protocol"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPendingQueueModel drives a pendingQueue with random pushes, takes of
// the oldest, takes by correlation ID (out of order, duplicates included)
// and drains, across the length where it starts indexing (pendingScan),
// and checks every answer against a plain slice searched in full.
func TestPendingQueueModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var p pendingQueue
	var model []*Exchange
	packet := int64(0)
	deepest := 0
	for step := range 40000 {
		switch op := rng.IntN(10); {
		case len(model) == 0 || op < 5 && len(model) < 64:
			// Few IDs, so that duplicates are common; bursts make the queue deep.
			for range 1 + rng.IntN(3)*rng.IntN(8) {
				packet++
				ex := &Exchange{CorrelationID: int32(rng.IntN(24)), Request: &Frame{FirstPacket: packet}}
				p.push(ex)
				model = append(model, ex)
			}
		case op < 7:
			if got := p.popOldest(); got != model[0] {
				t.Fatalf("step %d: popOldest gave %p, want %p", step, got, model[0])
			}
			model = model[1:]
		case op < 9:
			corr := int32(rng.IntN(24))
			i := slices.IndexFunc(model, func(e *Exchange) bool { return e.CorrelationID == corr })
			if got := p.index(corr); got != i {
				t.Fatalf("step %d: index(%d) = %d, want %d", step, corr, got, i)
			}
			if i >= 0 {
				if got := p.remove(corr); got != model[i] {
					t.Fatalf("step %d: remove(%d) gave the wrong request", step, corr)
				}
				model = slices.Delete(model, i, i+1)
			}
		default:
			if rng.IntN(20) == 0 {
				if got := p.drain(); !slices.Equal(got, model) {
					t.Fatalf("step %d: drain gave %d requests, want %d", step, len(got), len(model))
				}
				model = nil
			}
		}
		deepest = max(deepest, len(model))
		if p.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", step, p.len(), len(model))
		}
		for corr := range int32(24) {
			var want int64
			found := false
			for _, e := range model {
				if e.CorrelationID == corr {
					want, found = e.Request.FirstPacket, true
				}
			}
			got, ok := p.has(corr)
			if ok != found || got != want {
				t.Fatalf("step %d: has(%d) = %d, %v; want %d, %v", step, corr, got, ok, want, found)
			}
		}
		if len(model) > 0 && p.oldest() != model[0] {
			t.Fatalf("step %d: oldest is not the model's", step)
		}
		if len(model) == 0 && p.ids != nil {
			t.Fatalf("step %d: an empty queue keeps its index", step)
		}
	}
	if deepest <= 2*pendingScan {
		t.Errorf("the queue was never deeper than %d: the index was not exercised", deepest)
	}
}

// TestResyncWithheld: bytes a resync skips are withheld, on a connection
// whose client sent a SaslHandshake (a cut or corrupt SaslAuthenticate is
// skipped in pieces whose start is unknown) and on any other (a lost
// segment leaves an AlterConfigs request without its header, its
// password among the bytes skipped); --show-secrets keeps them.
func TestResyncWithheld(t *testing.T) {
	garbage := append(bytes.Repeat([]byte{0xff}, 16), "n=alice,r=abc,p=SECRETPROOF"...)
	for _, show := range []bool{false, true} {
		for _, sasl := range []bool{true, false} {
			r := rigFirstRequest(t, sasl, show)
			r.client(garbage, reqFrame(3, 1, 2, []byte{0, 0, 0, 0}))
			evs := r.sink.events(EventResync)
			if len(evs) == 0 {
				t.Fatalf("sasl %v: no resync", sasl)
			}
			for _, ev := range evs {
				if ev.Withheld == show || !show && len(ev.Data) > 0 || show && !bytes.Contains(ev.Data, []byte("SECRETPROOF")) {
					t.Errorf("sasl %v, --show-secrets %v: withheld %v, %d bytes kept", sasl, show, ev.Withheld, len(ev.Data))
				}
			}
		}
	}
}

// TestUnknownKeyWithheld: a request of an API key no schema knows (a
// SaslAuthenticate whose key was damaged reads as one) is withheld
// undecoded, on any connection; --show-secrets decodes it (shown raw).
func TestUnknownKeyWithheld(t *testing.T) {
	for _, show := range []bool{false, true} {
		for _, sasl := range []bool{true, false} {
			r := rigFirstRequest(t, sasl, show)
			r.client(reqFrame(250, 2, 2, []byte("\x00\x00\x00\x0d\x00alice\x00SECRET")))
			r.d.Finish()
			var got *Exchange
			for _, ex := range r.sink.ex {
				if ex.APIKey == 250 {
					got = ex
				}
			}
			if got == nil || got.Request == nil {
				t.Fatalf("sasl %v: no exchange of key 250 (%v)", sasl, r.sink.kinds())
			}
			if got.Request.Withheld == show || show != (got.Request.Tree != nil) {
				t.Errorf("sasl %v, --show-secrets %v: withheld %v, tree %v", sasl, show, got.Request.Withheld, got.Request.Tree != nil)
			}
		}
	}
}

// rigFirstRequest is a rig whose client sent its first request: a
// SaslHandshake (PLAIN) when sasl, else a Metadata request; show is
// --show-secrets.
func rigFirstRequest(t *testing.T, sasl, show bool) *rig {
	r := newRig(t, Options{Decoder: protocol.Decoder{ShowSecrets: show}}, true)
	if sasl {
		r.client(reqFrame(17, 1, 1, []byte{0, 5, 'P', 'L', 'A', 'I', 'N'}))
	} else {
		r.client(reqFrame(3, 1, 1, []byte{0, 0, 0, 0}))
	}
	return r
}
