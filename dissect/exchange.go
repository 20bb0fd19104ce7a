package dissect

import (
	"net/netip"
	"time"

	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// Frame is one Kafka frame (4-byte length prefix and payload) cut from one
// direction of a connection.
type Frame struct {
	// FirstPacket and LastPacket are the capture's packet numbers (1-based, as
	// Wireshark numbers frames) holding the frame's first and last byte.
	FirstPacket, LastPacket int64
	// Time is the capture time of the frame's first byte; End of its last.
	Time, End time.Time
	// Bytes is the whole frame, length prefix included, as captured.
	// Owned by the Frame. A frame cut by a gap or by the end of the
	// capture holds only the bytes captured (a note on its exchange says
	// so) and is not decoded.
	Bytes []byte
	// Wire is the frame's size on the wire, length prefix included, as
	// its 4-byte length prefix states it, when the frame was cut (by a
	// gap, the capture's snap length, the end of the capture) and Bytes
	// holds only its first bytes; 0 for a frame captured whole. Size
	// reports it; Captured, the bytes the capture holds.
	Wire int
	// Withheld says that the frame was not decoded (Tree is nil: cut, an
	// orphan response kwire cannot place, an API key no schema knows):
	// bytes not decoded may hold a secret, whatever the API (a length
	// field too large swallows the frames after it; a damaged one starts
	// a frame inside another). Outputs show none of its bytes. Never set
	// with Options.Decoder.ShowSecrets.
	Withheld bool
	// Tree is the decoded frame (length, header, body), or nil when the
	// frame was not decoded (e.g. filtered out before decoding).
	Tree *protocol.Tree
	// TCP is what the TCP segments say about how the frame travelled
	// (retransmissions, bytes out of order, windows; tcptiming.go), set
	// when its exchange is emitted; nil when they say nothing: its
	// packets came in order and no segment concerned it. A pointer, so
	// that a pending request holds a word for it, not the whole.
	TCP *TCPTiming
	// RTT is the connection's shortest round trip in the frame's
	// direction at the capture point when its exchange was emitted
	// (reassembly.ConnStats.MinRTT): for a request captured at the
	// client, the network's round trip to the broker; 0 when not
	// measured.
	RTT time.Duration
	// tcpEnd is the stream offset after the packet that completed the
	// frame, -1 unknown.
	tcpEnd int64

	// lazy, when set, says the request frame is still to be decoded: the
	// Dissector does it just before its exchange is emitted.
	lazy lazyRequest
	// deferred, with Options.DeferDecode, says how Exchange.Decode is to
	// decode the frame; undo, once it did, how it did (Exchange.Undecode).
	deferred deferredDecode
	undo     deferredDecode
	// held says a pending request's Bytes count in spiller.held; spill,
	// when not nil, that they are in the spill file (Bytes is nil).
	held  bool
	spill *spilled
	// prev, next and listed link a held frame into spiller.spillable;
	// meta is the bookkeeping it counts in spiller.meta while pending.
	prev, next *Frame
	listed     bool
	meta       int32
	// pool is where Exchange.Release puts Bytes.
	pool *framePool
	// outcome is what decoding the frame gave (classify), set where it
	// was decoded.
	outcome outcome
}

// Failed reports whether the frame was decoded and its decoding failed:
// its tree has an error, or a record batch in it has (Tree.FirstError). It
// is what Problems.DecodeErrors counts; an unknown API key or version is
// not a failure (Unknown).
func (f *Frame) Failed() bool { return f.result() == outcomeFailed }

// Unknown reports whether the frame was decoded and is of an API key or
// version the schema table does not know (shown raw).
func (f *Frame) Unknown() bool { return f.result() == outcomeUnknown }

// result is the outcome the Dissector recorded, or for a Frame made
// elsewhere with a Tree, its classification.
func (f *Frame) result() outcome {
	if f.outcome == outcomeNone && f.Tree != nil {
		return classify(f.Tree)
	}
	return f.outcome
}

// deferredDecode is a frame decode left to Exchange.Decode: as a request,
// or as a response of API key and version key, ver, with dec; the outcome
// is counted in counts (the Dissector's).
type deferredDecode struct {
	dec      *protocol.Decoder // nil: nothing deferred
	counts   *decodeCounts
	response bool
	key, ver int16
}

// decodeDeferred decodes the frame if its decode was deferred, counts the
// outcome, and reports whether it failed. With b, the decoder's options
// are copied into scratch with b as their Budget.
func (f *Frame) decodeDeferred(b protocol.Budget, scratch *protocol.Decoder) (failed bool) {
	l := f.deferred
	if l.dec == nil {
		return false
	}
	f.deferred, f.undo = deferredDecode{}, l
	dec := l.dec
	if b != nil {
		*scratch = *l.dec
		scratch.Budget = b
		dec = scratch
	}
	if l.response {
		f.Tree = dec.DecodeResponse(f.Bytes, l.key, l.ver)
	} else {
		f.Tree = dec.DecodeRequest(f.Bytes)
	}
	f.outcome = l.counts.count(f.Tree)
	return f.Failed()
}

// Size returns the frame's size in bytes on the wire, length prefix
// included: that of its length prefix for a frame cut by a gap, the snap
// length or the end of the capture (Wire), else len(Bytes).
func (f *Frame) Size() int { return max(f.Wire, len(f.Bytes)) }

// Captured returns how many of the frame's bytes the capture holds, length
// prefix included: Size for a frame captured whole, fewer for one cut
// (Cut).
func (f *Frame) Captured() int { return len(f.Bytes) }

// Cut reports whether the capture holds only part of the frame: a gap, the
// capture's snap length or its end cut it (Size is then what its length
// prefix says, Captured what was captured).
func (f *Frame) Cut() bool { return f.Wire > len(f.Bytes) }

// Kind says what an Exchange holds.
type Kind uint8

// Exchange kinds.
const (
	KindPaired     Kind = iota // a request and its response
	KindNoResponse             // a request that needs none (Produce acks=0)
	KindUnanswered             // a request still unanswered at the end / at close
	KindOrphan                 // a response whose request was not captured
	KindSASL                   // a raw SASL token exchange after SaslHandshake v0
)

// Exchange is one Kafka request and its response on one connection.
type Exchange struct {
	Conn   *reassembly.Conn // the connection it was read from
	Client netip.AddrPort   // the side that sends requests
	Broker netip.AddrPort   // the other side
	Kind   Kind
	// InFlight marks a KindUnanswered exchange whose request was still
	// waiting for its response when the read was stopped (Dissector.Stop:
	// kwire read -c): not unanswered, its response may come later in the
	// capture.
	InFlight bool
	// Closed marks a KindUnanswered exchange whose connection ended with a
	// FIN or RST captured while it waited: not one the capture's end, an
	// idle timeout or -c left without its response. A broker closes the
	// connection on a request at a version it does not support (all APIs
	// but ApiVersions, KIP-511).
	Closed bool
	// Reordered marks a KindPaired exchange whose response's first packet
	// was captured before its request's last: written out of order (a
	// capture merged from two capture points whose clocks differ, one
	// taken on several NIC queues or a bonded link), as no broker answers
	// a request it has not read. Its latency is not measured (Latency is
	// -1): the capture's times do not give it.
	Reordered bool

	// The request header's RequestApiKey, RequestApiVersion,
	// CorrelationId and ClientId (Kafka protocol guide, "Headers";
	// RequestHeader.json). An orphan has APIKey and APIVersion -1 and the
	// response header's CorrelationId. ClientIDNull tells a null ClientId
	// (length -1) from "".
	APIKey        int16
	APIVersion    int16
	CorrelationID int32
	ClientID      string
	ClientIDNull  bool
	// ClientIDNotCaptured says the request's header was cut before its
	// ClientId ended (a gap, the capture's snap length, e.g. tcpdump -s
	// 80, or the end of the capture cut the frame inside its header):
	// the client ID is unknown, not "" (ClientID is "" and ClientIDNull
	// false). Outputs say "not captured" (ClientIDKnown).
	ClientIDNotCaptured bool

	Request  *Frame // nil for orphans
	Response *Frame // nil unless paired (or orphan)

	// Mechanism is the SASL mechanism of a SaslHandshake request or of a
	// KindSASL exchange ("PLAIN", "SCRAM-SHA-256", "GSSAPI"); User is the
	// user name read from a PLAIN or SCRAM client token. Empty otherwise.
	Mechanism string
	User      string

	// Advertised holds the API version ranges an ApiVersions response
	// advertises (Kafka protocol guide, ApiVersionsResponse.ApiKeys), in
	// wire order; nil for other exchanges or when the response carries an
	// error.
	Advertised []APIRange

	// TLS says the frames were decrypted from TLS records (their packet
	// numbers and times are those of the records' packets).
	TLS bool

	// Guess, for an orphan, is what its response probably answers, or nil
	// (guess.go). When Guess.Decoded, the response is decoded as the
	// guessed API and version (APIKey and APIVersion stay -1: no request
	// says so).
	Guess *Guess

	// Notes are anomalies and explanations in plain words, e.g.
	// "duplicate correlation ID 7 in flight", "version 13 outside the
	// broker's advertised range 0-12", "probably Metadata v12",
	// "UNSUPPORTED_VERSION: decoded as ApiVersions v0 (KIP-511)",
	// "connection closed with no response".
	Notes []string

	facts *facts.Exchange // computed by Facts
}

// Facts returns what the exchange says (package facts), computed from its
// frames' trees on the first call (decoding deferred frames first, as
// Decode does) and kept: every reader of an exchange sees the same facts.
// Topics named only by ID are named once a run's facts.Names resolves
// them, which readers do in emit order. Facts must not be called by two
// goroutines at once for one exchange, nor after Release if it was not
// called before.
func (e *Exchange) Facts() *facts.Exchange {
	if e.facts == nil {
		e.Decode()
		key, ver := e.APIKey, e.APIVersion
		if g := e.Guess; g != nil && g.Decoded {
			key, ver = g.APIKey, g.APIVersion // what the response was decoded as
		}
		e.facts = facts.Of(key, ver, treeOf(e.Request), treeOf(e.Response))
	}
	return e.facts
}

// ClientIDKnown reports whether the exchange's request header says what
// its ClientId is: there is a request, and its header was captured up to
// the end of its ClientId (not ClientIDNotCaptured). A known client ID
// may be null (ClientIDNull) or "".
func (e *Exchange) ClientIDKnown() bool { return e.Request != nil && !e.ClientIDNotCaptured }

func treeOf(f *Frame) *protocol.Tree {
	if f == nil {
		return nil
	}
	return f.Tree
}

// Decode decodes the frames the Dissector left undecoded because of
// Options.DeferDecode and returns how many of them failed (Frame.Failed);
// the Dissector's Summary counts them (DecodeErrors, Unknown). Frames already
// decoded, or not to be decoded (Options.Decode), are left alone. A sink
// may call Decode on any goroutine once it has the exchange (the Dissector
// no longer touches it), for several exchanges at once.
func (e *Exchange) Decode() int { return e.DecodeWith(nil, nil) }

// DecodeWith is Decode with b (when not nil) as the Budget of the memory
// decoding takes (protocol.Decoder.Budget: the trees reserve from it as
// they grow and give it back on Release); the decoder's options are
// copied into scratch for that, so that a caller decoding many exchanges
// allocates nothing more per exchange. The request is decoded before the
// response.
func (e *Exchange) DecodeWith(b protocol.Budget, scratch *protocol.Decoder) int {
	n := 0
	for _, f := range [...]*Frame{e.Request, e.Response} {
		if f != nil && f.decodeDeferred(b, scratch) {
			n++
		}
	}
	e.withholdEchoes()
	return n
}

// withholdEchoes withholds the response's error messages that repeat a
// secret withheld from the request (protocol.WithholdEchoes), once both
// frames are decoded: a broker's SASL callback or config validator may
// quote the password its request carried.
// Only requests of an API that carries secrets are searched: the others
// withhold nothing but spans not decoded, and walking every Produce's
// tree for them would cost every exchange.
func (e *Exchange) withholdEchoes() {
	if e.Request != nil && e.Response != nil && e.Request.Tree != nil && e.Response.Tree != nil &&
		protocol.KeyCarriesSecrets(e.APIKey, false) {
		protocol.WithholdEchoes(e.Request.Tree, e.Response.Tree)
	}
}

// Undecode undoes what Decode did: the frames it decoded lose their trees
// (released: their memory goes back to the pools and the Budget) and their
// facts, and will be decoded again by the next Decode. For a caller whose
// Budget refused memory a decode needed when it would not have had to (the
// memory was held by exchanges that will give it back): the trees it made
// depend on what was in flight then, and are decoded again later.
func (e *Exchange) Undecode() {
	for _, f := range [...]*Frame{e.Request, e.Response} {
		if f != nil && f.undo.dec != nil {
			f.undo.counts.uncount(f.outcome, f.Tree)
			f.outcome = outcomeNone
			f.Tree.Release()
			f.Tree, f.deferred, f.undo = nil, f.undo, deferredDecode{}
		}
	}
	e.facts = nil
}

// Time is when the exchange began: its request's first packet's capture
// time, else (an orphan) its response's; zero when neither is known.
func (e *Exchange) Time() time.Time {
	switch {
	case e.Request != nil:
		return e.Request.Time
	case e.Response != nil:
		return e.Response.Time
	}
	return time.Time{}
}

// Latency is the response time minus the request time, or -1 when the
// exchange has no response, either frame has no capture time (a pcapng
// Simple Packet Block carries none: its packets have the zero time), or
// the response was captured before its request (Reordered).
func (e *Exchange) Latency() time.Duration {
	if e.Request == nil || e.Response == nil || e.Request.Time.IsZero() || e.Response.Time.IsZero() || e.Reordered {
		return -1
	}
	return e.Response.Time.Sub(e.Request.Time)
}

// FrameBytes is the size in bytes of e's request and response frames as
// held in memory (Frame.Bytes): what the exchange weighs while it is
// queued for decoding and output.
func (e *Exchange) FrameBytes() int64 {
	var n int64
	for _, f := range [...]*Frame{e.Request, e.Response} {
		if f != nil {
			n += int64(len(f.Bytes))
		}
	}
	return n
}

// EventKind classifies connection-level events that are not exchanges.
type EventKind uint8

// Event kinds.
const (
	EventOpen      EventKind = iota // a Kafka connection was recognised
	EventSkipped                    // a connection was not Kafka (Detail says why)
	EventGap                        // bytes lost in one direction (Bytes)
	EventResync                     // the splitter skipped Bytes of garbage to find the next frame
	EventTLS                        // the connection is TLS: decrypted or why not (TLS; once per connection)
	EventClose                      // the connection ended
	EventBadFrame                   // a frame length was diagnosed as not Kafka (Detail: TLS, HTTP, SASL token, garbage)
	EventTruncated                  // a frame cut off by the end of the connection or capture, or by a gap (Bytes captured, Detail says which)
	EventTLSNote                    // the TLS layer: an alert, a KeyUpdate, bytes not decrypted after a failure (Bytes), 0-RTT data
	EventCut                        // bytes of one direction the capture's writer left out on purpose (Bytes; reassembly.CutComment: kwire read -w), not lost
	EventConflict                   // a retransmission whose bytes differ from those delivered (Bytes: the piece compared; Offset its stream offset; Frame the retransmission): the first copy is decoded
)

// Event is a connection-level happening worth telling the user.
type Event struct {
	Kind  EventKind
	Conn  *reassembly.Conn // the connection it happened on
	Dir   reassembly.Dir   // the direction whose bytes it concerns (EventOpen: the client's requests)
	Frame int64            // packet number where it happened, 0 if unknown
	Time  time.Time        // capture time; zero if unknown
	Bytes int64            // bytes lost, skipped or captured, as Kind says; 0 unknown or none
	// Offset, for EventConflict, is the stream offset of the bytes
	// whose retransmission differs (reassembly.Chunk.Offset's count: 0
	// is the direction's first byte).
	Offset int64
	// Data, for EventResync, holds the bytes skipped, in stream order (the
	// first 64 KiB of them when Bytes is larger; bytes lost in a gap while
	// scanning are not in it): nothing the capture held is dropped unseen.
	// Owned by the Event.
	Data []byte
	// ClosedBy, for EventClose, is the direction of the side that sent
	// the connection's first FIN or RST, and ClosedAt that packet's
	// capture time; ClosedAt is zero when neither was captured (the
	// capture ended, or the connection went idle).
	ClosedBy reassembly.Dir
	ClosedAt time.Time
	// Withheld says that Data was dropped because the bytes may hold a
	// secret (skipped inside a raw SASL exchange, unless
	// Options.Decoder.ShowSecrets): outputs say so instead of showing
	// them.
	Withheld bool
	Detail   string // what happened in plain words, as the text output shows it
	// TLS, for EventTLS, is the connection's TLS status; for an
	// EventSkipped of a TLS connection (SkipTLS), why it was not
	// decrypted (Reason, and what its handshake said when it was read).
	TLS *TLSStatus
	// Note, for EventTLSNote, says what it reports.
	Note TLSNote
}

// Sink receives the dissector's output, synchronously and in capture order
// of each exchange's completion.
type Sink interface {
	Exchange(*Exchange)
	Event(*Event)
}

// APIRange is one API key's supported version range as a broker advertises
// it in an ApiVersions response (KIP-35).
type APIRange = protocol.APIRange
