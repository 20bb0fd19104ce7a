package dissect

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kmsgResponse encodes r as a response frame to corr, as a broker sends it.
func kmsgResponse(r kmsg.Response, corr int32) []byte {
	b := binary.BigEndian.AppendUint32(make([]byte, 4, 128), uint32(corr))
	if protocol.ResponseHeaderVersion(r.Key(), r.GetVersion()) >= 1 {
		b = append(b, 0)
	}
	b = r.AppendTo(b)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// describeGroupsV5 is a DescribeGroups v5 response for one stable
// consumer group with one member: no other (API, version) of the schema
// table decodes it whole.
func describeGroupsV5(corr int32) []byte {
	dg := kmsg.NewPtrDescribeGroupsResponse()
	dg.Version = 5
	g := kmsg.NewDescribeGroupsResponseGroup()
	g.Group, g.State, g.ProtocolType, g.Protocol = "orders-app", "Stable", "consumer", "range"
	m := kmsg.NewDescribeGroupsResponseGroupMember()
	m.MemberID, m.ClientID, m.ClientHost = "consumer-1-4f3c", "consumer-1", "/10.0.0.7"
	g.Members = append(g.Members, m)
	dg.Groups = append(dg.Groups, g)
	return kmsgResponse(dg, corr)
}

// orphanRig sends a request cut by a gap of unknown size (so that its
// response is an orphan), then the responses.
func orphanRig(t *testing.T, opts Options, resps ...[]byte) *rig {
	r := newRig(t, opts, true)
	r.client(frame(t, metadataV12Req)[:6])
	r.d.Gap(r.c, reassembly.AtoB, -1, pktTime(2))
	for _, b := range resps {
		r.broker(b)
	}
	r.d.Finish()
	return r
}

// An orphan only one (API, version) fits, of an API beyond the handful
// guessed before: said so, and decoded as it, marked a guess.
func TestOrphanUniqueGuessDecoded(t *testing.T) {
	for _, deferred := range []bool{false, true} {
		r := orphanRig(t, Options{DeferDecode: deferred}, describeGroupsV5(7))
		e := r.sink.ex[0]
		if e.Kind != KindOrphan || e.APIKey != -1 || e.Guess == nil {
			t.Fatalf("orphan %+v", e)
		}
		if g := *e.Guess; g.APIKey != 15 || g.APIVersion != 5 || g.Candidates != 1 || !g.Decoded || g.Partial {
			t.Errorf("guess %+v", g)
		}
		if !hasNote(e, "probably DescribeGroups v5: the only API and version whose response decodes the whole frame; decoded as it (a guess)") {
			t.Errorf("notes %q", e.Notes)
		}
		e.Decode()
		tr := e.Response.Tree
		if tr == nil || tr.Err != nil {
			t.Fatalf("deferred %v: response not decoded: %v", deferred, tr)
		}
		_, _, body := protocol.FrameParts(tr.Root)
		if body == nil || body.Name != "DescribeGroupsResponse" || body.Child("Groups") == nil {
			t.Errorf("body %+v", body)
		}
		if f := e.Facts(); f == nil || !strings.Contains(strings.Join(f.Groups, ",")+f.Group.ID, "orders-app") {
			t.Errorf("facts of the guess: %+v", f)
		}
		if e.Response.Failed() {
			t.Error("counted as a decode failure")
		}
	}
}

// When several fit: how many and the likeliest, those requested on the
// connection first; nothing decoded.
func TestOrphanAmbiguousLikeliest(t *testing.T) {
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.Version = 4
	r := newRig(t, Options{}, true)
	r.client(reqFrame(12, 4, 1, hx(t, `0a 6f 72 64 65 72 73 2d 61 70 70 00 00 00 01 02 6d 00 00 00`))) // Heartbeat v4: group, generation 1, member "m", no instance, tags
	r.broker(kmsgResponse(hb, 1))
	r.client(frame(t, metadataV12Req)[:6])
	r.d.Gap(r.c, reassembly.AtoB, -1, pktTime(4))
	r.broker(kmsgResponse(hb, 2))
	r.d.Finish()
	var o *Exchange
	for _, e := range r.sink.ex {
		if e.Kind == KindOrphan {
			o = e
		}
	}
	if o == nil || o.Guess == nil || o.Guess.Decoded || o.Guess.Candidates < 10 || o.Guess.APIKey != 12 || o.Guess.APIVersion != 4 {
		t.Fatalf("orphan %+v guess %+v", o, o.Guess)
	}
	if !hasNote(o, "API versions whose response decodes the whole frame, likeliest Heartbeat v4 (v4 requested on this connection), Produce v1-v8, Fetch v1-v6; not decoded") ||
		!hasNote(o, "; not decoded") || o.Response.Tree != nil {
		t.Errorf("notes %q", o.Notes)
	}
}

// Past guessFull orphans, or above guessMaxFrame, an orphan is tried only
// against what earlier orphans on its connection answered.
func TestOrphanGuessBudget(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, metadataV12Req)[:6])
	r.d.Gap(r.c, reassembly.AtoB, -1, pktTime(2))
	r.broker(describeGroupsV5(7)) // guessed in full
	r.d.guesses = guessFull
	r.broker(describeGroupsV5(8)) // as the earlier one
	hb := kmsg.NewPtrHeartbeatResponse()
	hb.Version = 4
	r.broker(kmsgResponse(hb, 9)) // nothing earlier fits: no guess
	r.d.Finish()
	if len(r.sink.ex) != 3 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	if g := r.sink.ex[1].Guess; g == nil || !g.Partial || !g.Decoded || g.APIKey != 15 ||
		!hasNote(r.sink.ex[1], "probably DescribeGroups v5, which earlier orphans on this connection answered; decoded as it (a guess; beyond the first 1024 orphans or 4 MiB of them") {
		t.Errorf("second orphan: %+v notes %q", g, r.sink.ex[1].Notes)
	}
	if g := r.sink.ex[2].Guess; g != nil || r.sink.ex[2].Response.Tree != nil {
		t.Errorf("third orphan guessed %+v", g)
	}
	if r.d.guesses != guessFull {
		t.Errorf("%d full guesses", r.d.guesses)
	}
}

// TestOrphanGuessByteBudget: past guessFullBytes of orphans tried in full,
// an orphan is tried only against what earlier orphans on its connection
// answered; 1024 orphans of 960 KB that most schemas read to their end
// took 5 s of CPU each.
func TestOrphanGuessByteBudget(t *testing.T) {
	r := newRig(t, Options{}, true)
	r.client(frame(t, metadataV12Req)[:6])
	r.d.Gap(r.c, reassembly.AtoB, -1, pktTime(2))
	r.broker(describeGroupsV5(7)) // guessed in full
	first := r.d.guessedBytes
	if r.d.guesses != 1 || first <= 0 {
		t.Fatalf("guesses %d, bytes %d", r.d.guesses, first)
	}
	r.d.guessedBytes = guessFullBytes - first + 1
	r.broker(describeGroupsV5(8)) // as the earlier one, not in full
	r.d.Finish()
	if len(r.sink.ex) != 2 {
		t.Fatalf("kinds %v", r.sink.kinds())
	}
	if g := r.sink.ex[1].Guess; g == nil || !g.Partial || !g.Decoded || g.APIKey != 15 {
		t.Errorf("second orphan: %+v notes %q", g, r.sink.ex[1].Notes)
	}
	if r.d.guesses != 1 {
		t.Errorf("%d full guesses", r.d.guesses)
	}
}

// BenchmarkGuessOrphans dissects a capture of 100,000 orphan responses on
// one connection (its requests not captured): the first guessFull are
// tried against every response schema, the rest against what those
// answered.
func BenchmarkGuessOrphans(b *testing.B) {
	const n = 100_000
	var stream []byte
	for i := range n {
		stream = append(stream, describeGroupsV5(int32(i))...)
	}
	b.SetBytes(int64(len(stream)))
	for b.Loop() {
		sink := &countSink{}
		d := New(Options{}, sink) // the guessed orphans decoded too
		c := &reassembly.Conn{A: clientAddr, B: brokerAddr, SawSYN: true}
		d.Open(c)
		d.Data(c, reassembly.AtoB, reassembly.Chunk{Data: hexOf(metadataV12Req)[:6], Frame: 1, Time: pktTime(1)})
		d.Gap(c, reassembly.AtoB, -1, pktTime(2))
		for i := 0; i < len(stream); i += 1448 {
			d.Data(c, reassembly.BtoA, reassembly.Chunk{Data: stream[i:min(i+1448, len(stream))], Frame: int64(3 + i/1448), Time: pktTime(3)})
		}
		d.Finish()
		if sink.n != n {
			b.Fatalf("%d exchanges", sink.n)
		}
	}
}

// hexOf decodes annotated hex for benchmarks.
func hexOf(s string) []byte {
	var b testing.B
	return hx(&b, s)
}
