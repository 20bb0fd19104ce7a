package analysis

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/reassembly"
)

// DefaultMaxMemory is Options.MaxMemory's default: 64 MiB for every
// group, member, generation, producer, transaction and finding kept. A
// group's generation with 10 members of 10 partitions each costs about
// 3 KB, a timeline event about 250 bytes: a day of rebalancing every
// minute in a 100-member group fits several times over.
const DefaultMaxMemory = 64 << 20

// DefaultSlow is Options.Slow's default: an exchange answered this late
// (and not late by design: a Fetch's long poll, a JoinGroup waiting for a
// rebalance) is split between network and broker (rules slow-network,
// slow-broker).
const DefaultSlow = 100 * time.Millisecond

// Options configure an Analyzer.
type Options struct {
	// Names resolves topic IDs (facts.Names): the run's, shared with the
	// other readers of its exchanges; nil gives the Analyzer its own.
	Names *facts.Names
	// MaxMemory bounds, in bytes, what the reports keep (see the package
	// doc); 0 means DefaultMaxMemory.
	MaxMemory int64
	// Slow is the latency from which an exchange is slow; 0 means
	// DefaultSlow.
	Slow time.Duration
	// Groups, Transactions and Findings say which reports to build; all
	// false builds all three.
	Groups, Transactions, Findings bool
}

// Analyzer builds the reports from exchanges and events in emit order.
// It implements dissect.Sink; calls must come from one goroutine.
type Analyzer struct {
	opts      Options
	mem       budget
	file      string
	fileIdx   int
	files     int
	fileNames []string

	groups *groupTracker
	txns   *txnTracker
	find   *findEngine
	// cut counts the exchanges whose request or response the capture
	// holds only part of (dissect.Frame.Cut): not decoded, what they
	// said is in no report (GroupsReport.CutExchanges).
	cut int64
}

var _ dissect.Sink = (*Analyzer)(nil)

// New returns an empty Analyzer.
func New(opts Options) *Analyzer {
	if opts.Names == nil {
		opts.Names = facts.NewNames()
	}
	if opts.MaxMemory <= 0 {
		opts.MaxMemory = DefaultMaxMemory
	}
	if opts.Slow <= 0 {
		opts.Slow = DefaultSlow
	}
	if !opts.Groups && !opts.Transactions && !opts.Findings {
		opts.Groups, opts.Transactions, opts.Findings = true, true, true
	}
	a := &Analyzer{opts: opts}
	a.mem.max = opts.MaxMemory
	if opts.Groups || opts.Findings {
		// Findings about members rest on the group timelines.
		a.groups = newGroupTracker(&a.mem)
		a.groups.noTimeline = !opts.Groups
	}
	if opts.Transactions || opts.Findings {
		a.txns = newTxnTracker(&a.mem)
	}
	if opts.Findings {
		a.find = newFindEngine(&a.mem, opts.Slow)
	}
	return a
}

// SetFile names the capture file whose exchanges and events follow,
// a capture of its own: packet numbers restart, and its groups,
// producers and consumers are its own (a group seen in two files is two
// groups, each reported with its file). Call it before every file when
// more than one is read this way, never for one file or files merged
// into one capture: references name the file when it was called.
func (a *Analyzer) SetFile(name string) {
	if a.files > 0 {
		a.fileIdx++
		if a.groups != nil {
			a.groups.nextFile(a.fileIdx)
		}
		if a.txns != nil {
			a.txns.nextFile(a.fileIdx)
		}
	}
	a.files++
	a.file = name
	a.fileNames = append(a.fileNames, name)
}

// ref returns the reference of exchange x.
func (a *Analyzer) ref(x *dissect.Exchange) Ref {
	r := Ref{}
	if a.files > 0 {
		r.File = a.file
	}
	if x.Request != nil {
		r.Frame = x.Request.FirstPacket
	}
	if x.Response != nil {
		r.ResponseFrame = x.Response.FirstPacket
		if r.Frame == 0 {
			r.Frame = x.Response.FirstPacket
		}
	}
	return r
}

// Exchange implements dissect.Sink.
func (a *Analyzer) Exchange(x *dissect.Exchange) {
	if x == nil || x.Kind == dissect.KindOrphan || x.Kind == dissect.KindSASL && x.Request == nil {
		return
	}
	if x.Request != nil && x.Request.Cut() || x.Response != nil && x.Response.Cut() {
		a.cut++
	}
	fx := x.Facts()
	a.opts.Names.Resolve(fx)
	e := &xinfo{x: x, fx: fx, ref: a.ref(x), file: a.fileIdx}
	if x.Request != nil {
		e.at = x.Request.Time
	}
	if x.Response != nil {
		e.done = x.Response.Time
		e.answered = true
		if e.at.IsZero() {
			e.at = e.done
		}
	}
	if a.groups != nil {
		a.groups.exchange(e)
	}
	if a.txns != nil {
		a.txns.exchange(e)
	}
	if a.find != nil {
		a.find.exchange(e)
	}
}

// Event implements dissect.Sink.
func (a *Analyzer) Event(ev *dissect.Event) {
	if ev != nil && a.txns != nil && ev.Conn != nil {
		switch {
		case ev.Kind == dissect.EventCut || ev.Kind == dissect.EventGap:
			// Sequences may have been left out with the exchanges: by
			// the writer of a cut file, or in bytes the capture lost
			// (a Produce cut by the gap is not decoded).
			a.txns.cut = true
			if a.txns.cuts == nil {
				a.txns.cuts = map[*reassembly.Conn]int{}
			}
			a.txns.cuts[ev.Conn]++
		case ev.Kind == dissect.EventClose && a.txns.cuts != nil:
			delete(a.txns.cuts, ev.Conn)
		}
	}
	if ev == nil || a.find == nil {
		return
	}
	a.find.event(ev, a.fileIdx, a.fileName())
}

func (a *Analyzer) fileName() string {
	if a.files > 1 {
		return a.file
	}
	return ""
}

// xinfo is one exchange as the trackers see it.
type xinfo struct {
	x        *dissect.Exchange
	fx       *facts.Exchange
	ref      Ref
	file     int       // index of its capture file
	at       time.Time // the request's capture time (the response's for none)
	done     time.Time // the response's, zero when unanswered
	answered bool
}

// topError is the first error not under a topic (the exchange's own or a
// member's), 0 when none.
func (e *xinfo) topError() int16 {
	for i := range e.fx.Errors {
		if e.fx.Errors[i].Topic < 0 {
			return e.fx.Errors[i].Code
		}
	}
	return 0
}

// Ref points at an exchange: its request's first packet (for kwire read
// --frame) and its response's, in a capture file named when several were
// read.
type Ref struct {
	Frame         int64  `json:"requestFrame"`
	ResponseFrame int64  `json:"responseFrame"` // 0: no response
	File          string `json:"file,omitempty"`
}

// Time is a capture time; JSON writes it RFC 3339 with nanoseconds in
// UTC, null when zero.
type Time time.Time

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	if time.Time(t).IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(time.Time(t).UTC().Format(time.RFC3339Nano))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	*t = Time(v)
	return err
}

// IsZero reports whether t is unset.
func (t Time) IsZero() bool { return time.Time(t).IsZero() }

// Millis is a duration in nanoseconds that JSON writes in milliseconds,
// with a fraction (1234567 ns is 1.234567).
type Millis int64

// MarshalJSON implements json.Marshaler.
func (d Millis) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(d)/1e6, 'f', -1, 64), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Millis) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*d = Millis(math.Round(f * 1e6))
	return nil
}

// Duration returns d as a time.Duration.
func (d Millis) Duration() time.Duration { return time.Duration(d) }

// ms returns a pointer to d in Millis.
func ms(d time.Duration) *Millis {
	m := Millis(d)
	return &m
}

func ptr[T any](v T) *T { return &v }

// strp returns nil for "" and a pointer to s otherwise.
func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// budget accounts the bytes the reports keep.
type budget struct {
	max, used int64
}

// take charges n bytes and reports whether they fit.
func (b *budget) take(n int64) bool {
	b.used += n
	return b.used <= b.max
}

func (b *budget) give(n int64) { b.used -= n }

func (b *budget) over() bool { return b.used > b.max }

// Costs in bytes of what the reports keep, beyond the strings: struct
// sizes rounded up, with the map and slice overhead of keeping them.
const (
	costCut        = 48 // a connection's entry in findEngine.cut
	costEvent      = 200
	costGeneration = 300
	costGenMember  = 120
	costMember     = 500
	costCommit     = 200
	costTP         = 40 // a topic-partitions entry, plus 4 per partition
	costTopicName  = 16 // a string header in a list of topic names
	costProducer   = 400
	costTxn        = 300
	costFinding    = 400
	costState      = 120 // a per-connection or per-partition state entry
)

func tpCost(tps []facts.TopicPartitions) int64 {
	n := int64(0)
	for _, tp := range tps {
		n += costTP + int64(len(tp.Topic)) + 4*int64(len(tp.Partitions))
	}
	return n
}

// namesCost is what a list of topic names (a member's subscription)
// costs: its strings and their headers.
func namesCost(names []string) int64 {
	n := int64(0)
	for _, s := range names {
		n += costTopicName + int64(len(s))
	}
	return n
}

// String formats t as the timelines do (15:04:05.000, UTC).
func (t Time) String() string { return clock(time.Time(t)) }
