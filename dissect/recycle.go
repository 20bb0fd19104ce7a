package dissect

import (
	"sync"

	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/internal/poison"
	"github.com/kwire/kwire/reassembly"
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
	connPool        sync.Pool // of *conn, zeroed but for the capacity of its slices
	splitterPool    sync.Pool // of *splitter, likewise
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

// Done hands back what e holds once a sink, and everything it passed e
// to, are done with it: with recycle (the sink is the last to see e and
// keeps nothing of it but what its facts hold), Recycle; else its trees'
// nodes and decompressed bytes to protocol's pools and its frame buffers
// to the Dissector (protocol.Tree.Release, Release). On a capture of
// small exchanges the structs Recycle reuses, made afresh for each, were
// half of what read -V allocated on two cores (many-250).
func (e *Exchange) Done(recycle bool) {
	if recycle {
		e.Recycle()
		return
	}
	for _, f := range [...]*Frame{e.Request, e.Response} {
		if f != nil {
			f.Tree.Release()
		}
	}
	e.Release()
}

// Recycle is Release for a sink that is the last to see e: the frames'
// buffers go back to the Dissector that made them, their trees to
// protocol's pools (protocol.Tree.Recycle), e's facts to facts.Recycle,
// and e and its frames themselves are reused for later exchanges.
// Nothing may refer to e, its frames, their trees or e's facts
// afterwards (what the facts hold, their slices and strings, may be
// kept). A sink calls it once, after everything it passes e to is done
// with it (Release may come before it; nothing after). When released
// memory is poisoned (internal/poison), e, its frames and its facts are
// overwritten instead, so that a late reader shows it, and never reused.
func (e *Exchange) Recycle() {
	frames := [...]*Frame{e.Request, e.Response}
	for _, f := range frames {
		if f != nil {
			f.Tree.Recycle()
			f.Tree = nil
		}
	}
	e.Release()
	facts.Recycle(e.facts)
	if poison.Released {
		for _, f := range frames {
			if f != nil {
				*f = poisonedFrame
			}
		}
		fx := e.facts
		*e = poisonedExchange
		e.facts = fx
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

// Recycled connections. A capture of many short connections (a client
// that connects, asks for ApiVersions and Metadata and goes) costs as much
// per connection as per exchange: its state (conn, two splitters) and
// their first slices are reused from a connection that closed instead of
// allocated (Dissector.Close; not for TLS connections, whose decryption
// state refers to them). Nothing refers to a conn once closed: the
// Dissector forgets it, its pending requests are emitted, its events
// name the reassembly.Conn.

// newConn returns the state of a new connection, recycled when there is
// some.
func (d *Dissector) newConn(rc *reassembly.Conn) *conn {
	c, ok := connPool.Get().(*conn)
	if !ok {
		c = new(conn)
	}
	c.d, c.c, c.busyAt = d, rc, -1
	c.pending.c = c
	return c
}

// recycle hands back the state of a connection that closed, when
// nothing can still refer to it.
func (c *conn) recycle() {
	if poison.Released || c.tls != nil || c.busyAt >= 0 || c.pending.len() > 0 {
		return
	}
	for _, s := range c.split {
		if s != nil {
			*s = splitter{marks: s.marks[:0], smarks: s.smarks[:0]}
			splitterPool.Put(s)
		}
	}
	clear(c.pending.q[:cap(c.pending.q)])
	*c = conn{used: c.used[:0], pending: pendingQueue{q: c.pending.q[:0]}, pre: c.pre[:0]}
	connPool.Put(c)
}
