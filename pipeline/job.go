package pipeline

import (
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
)

// job is one exchange, event or barrier in a Flight, as Ordered and
// DecodeAhead carry it: the exchange decoded on a worker with the job's
// share of the flight's memory, and decoded again at the head when that
// memory refused it.
type job struct {
	ex      *dissect.Exchange
	ev      *dissect.Event
	barrier chan struct{}
	size    int64   // the exchange's frame bytes
	mem     *JobMem // its memory in the flight (nil: not bounded): memv
	memv    JobMem
	dec     protocol.Decoder
	redo    bool          // the worker's decode was refused memory: decode again at the head
	decoded chan struct{} // closed (DecodeAhead) or sent on (Ordered) once the worker decoded
}

// budget is the job's memory as a protocol.Budget (nil when not bounded).
func (j *job) budget() protocol.Budget {
	if j.mem == nil {
		return nil
	}
	return j.mem
}

// decode decodes the job's exchange and its facts, on a worker; a decode
// the flight's memory refused is undone, for redecode at the head.
func (j *job) decode() {
	j.ex.DecodeWith(j.budget(), &j.dec)
	if j.mem != nil && j.mem.Aborted() {
		j.ex.Undecode()
		j.redo = true
		return
	}
	j.ex.Facts() // computed here, on every core; resolved in emit order
}

// redecode decodes again, once the job is the oldest in fl, an exchange
// whose decode was undone.
func (j *job) redecode(fl *Flight) {
	fl.WaitHead(j.mem)
	j.mem.Retry()
	j.ex.DecodeWith(j.budget(), &j.dec)
	j.redo = false
}
