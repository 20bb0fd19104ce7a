package dissect

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// hx decodes annotated hex: whitespace is ignored and "//" starts a comment
// that runs to the end of the line.
func hx(t testing.TB, s string) []byte {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(strings.Join(strings.Fields(line), ""))
	}
	out, err := hex.DecodeString(b.String())
	if err != nil {
		t.Fatalf("bad hex: %v", err)
	}
	return out
}

// frame decodes annotated hex of a whole frame and checks its length prefix.
func frame(t testing.TB, s string) []byte {
	t.Helper()
	b := hx(t, s)
	if len(b) < 4 || int(binary.BigEndian.Uint32(b)) != len(b)-4 {
		t.Fatalf("frame length prefix %x does not match %d payload bytes", b[:min(4, len(b))], len(b)-4)
	}
	return b
}

// reqFrame builds a request frame for tests that need many: the header
// version follows protocol.RequestHeaderVersion, the client id is "kwire".
func reqFrame(key, ver int16, corr int32, body []byte) []byte {
	b := make([]byte, 4, 64)
	b = binary.BigEndian.AppendUint16(b, uint16(key))
	b = binary.BigEndian.AppendUint16(b, uint16(ver))
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	hv := protocol.RequestHeaderVersion(key, ver)
	if hv >= 1 {
		b = append(b, 0, 5, 'k', 'w', 'i', 'r', 'e')
	}
	if hv >= 2 {
		b = append(b, 0)
	}
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// respFrame builds a response frame: correlation id, a tagged-field byte
// when flexible (response header v1), then body.
func respFrame(corr int32, flexible bool, body []byte) []byte {
	b := make([]byte, 4, 64)
	b = binary.BigEndian.AppendUint32(b, uint32(corr))
	if flexible {
		b = append(b, 0)
	}
	b = append(b, body...)
	binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	return b
}

// recSink records what a Dissector reports.
type recSink struct {
	ex []*Exchange
	ev []*Event
}

func (s *recSink) Exchange(e *Exchange) { s.ex = append(s.ex, e) }
func (s *recSink) Event(e *Event)       { s.ev = append(s.ev, e) }

func (s *recSink) events(k EventKind) []*Event {
	var out []*Event
	for _, e := range s.ev {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func (s *recSink) kinds() []Kind {
	var out []Kind
	for _, e := range s.ex {
		out = append(out, e.Kind)
	}
	return out
}

// rig drives a Dissector with one synthetic connection. Packet n has time
// t0 + n ms.
type rig struct {
	t    testing.TB
	d    *Dissector
	sink *recSink
	c    *reassembly.Conn
	pkt  int64
}

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func pktTime(n int64) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }

var (
	clientAddr = netip.MustParseAddrPort("10.0.0.1:50123")
	brokerAddr = netip.MustParseAddrPort("10.0.0.2:9092")
)

func newRig(t testing.TB, opts Options, syn bool) *rig {
	r := &rig{t: t, sink: &recSink{}}
	r.d = New(opts, r.sink)
	r.c = &reassembly.Conn{Index: 0, A: clientAddr, B: brokerAddr, SawSYN: syn}
	r.d.Open(r.c)
	return r
}

// send delivers data as one packet in direction dir and returns its number.
func (r *rig) send(dir reassembly.Dir, data []byte) int64 {
	r.pkt++
	r.d.Data(r.c, dir, reassembly.Chunk{Data: append([]byte(nil), data...), Time: pktTime(r.pkt), Frame: r.pkt})
	return r.pkt
}

func (r *rig) client(data ...[]byte) int64 { return r.send(reassembly.AtoB, cat(data...)) }
func (r *rig) broker(data ...[]byte) int64 { return r.send(reassembly.BtoA, cat(data...)) }

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func hasNote(e *Exchange, sub string) bool {
	for _, n := range e.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// wantExchange checks the identity of an exchange.
func wantExchange(t testing.TB, e *Exchange, kind Kind, key, ver int16, corr int32) {
	t.Helper()
	if e.Kind != kind || e.APIKey != key || e.APIVersion != ver || e.CorrelationID != corr {
		t.Fatalf("exchange = kind %d %s v%d corr %d, want kind %d %s v%d corr %d (notes %q)",
			e.Kind, protocol.APIName(e.APIKey), e.APIVersion, e.CorrelationID,
			kind, protocol.APIName(key), ver, corr, e.Notes)
	}
}
