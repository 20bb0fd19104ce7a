package dissect

import (
	"sync"

	"github.com/kwire/kwire/internal/poison"
)

// Recycled exchanges and frames. A sink that is the last to see an
// exchange (kwire read's one-line mode: nothing keeps it once its line is
// written) hands it back with Exchange.Recycle, and the Dissector's next
// exchanges and frames reuse the structs instead of allocating them: on
// captures of many small exchanges, these and the frames' trees were a
// third of what kwire read allocated. The pools are sync.Pools: they hold
// what was recycled at most until the second garbage collection after, no
// more than was in use. A sink that never recycles loses nothing.

var (
	exchangePool    sync.Pool // of *Exchange, zeroed
	frameStructPool sync.Pool // of *Frame, zeroed
)

// newExchange returns x in a recycled Exchange when there is one.
func newExchange(x Exchange) *Exchange {
	e, ok := exchangePool.Get().(*Exchange)
	if !ok {
		e = new(Exchange)
	}
	*e = x
	return e
}

// newFrame returns f in a recycled Frame when there is one.
func newFrame(f Frame) *Frame {
	p, ok := frameStructPool.Get().(*Frame)
	if !ok {
		p = new(Frame)
	}
	*p = f
	return p
}

// Recycle is Release for a sink that is the last to see e: the frames'
// buffers go back to the Dissector that made them, their trees to
// protocol's pools (protocol.Tree.Recycle), and e and its frames
// themselves are reused for later exchanges. Nothing may refer to e, its
// frames or their trees afterwards; e's facts (Facts) are not reused and
// may be kept. A sink calls it once, after everything it passes e to is
// done with it (Release may come before it; nothing after). When released
// memory is poisoned (internal/poison), e and its frames are overwritten
// instead, so that a late reader shows it, and never reused.
func (e *Exchange) Recycle() {
	frames := [...]*Frame{e.Request, e.Response}
	for _, f := range frames {
		if f != nil {
			f.Tree.Recycle()
			f.Tree = nil
		}
	}
	e.Release()
	if poison.Released {
		for _, f := range frames {
			if f != nil {
				*f = poisonedFrame
			}
		}
		facts := e.facts
		*e = poisonedExchange
		e.facts = facts
		return
	}
	for _, f := range frames {
		if f != nil {
			*f = Frame{}
			frameStructPool.Put(f)
		}
	}
	*e = Exchange{}
	exchangePool.Put(e)
}

// What a recycled exchange and its frames become when released memory
// is poisoned: values no capture gives, named RELEASED.
var (
	poisonedFrame = Frame{FirstPacket: -0x5a5a, LastPacket: -0x5a5a,
		Bytes: []byte{poison.Byte, poison.Byte, poison.Byte, poison.Byte, poison.Byte, poison.Byte, poison.Byte, poison.Byte}}
	poisonedExchange = Exchange{Kind: Kind(poison.Byte), APIKey: -0x5a5a, APIVersion: -0x5a5a, CorrelationID: -0x5a5a5a5a,
		ClientID: poison.Marker, Mechanism: poison.Marker, User: poison.Marker,
		Request: &poisonedFrame, Response: &poisonedFrame, Notes: []string{poison.Marker + ": used after dissect.Exchange.Recycle"}}
)
