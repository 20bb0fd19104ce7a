package main

// The selections tshark users have, for commands that read files: --merge
// (several files as one capture), -f (a read filter in tcpdump's syntax),
// --since and --until (capture times or offsets from the start), --frame
// ranges, and read's -c. They narrow what is read (-f), or which
// exchanges are shown (the others), never how a connection is dissected:
// an exchange is selected by its request's capture time and packets.

import (
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/reassembly/live"
	"github.com/spf13/pflag"
)

// fileFlags are the flags of the commands that read capture files (not
// live): --merge and -f.
type fileFlags struct {
	Merge      bool
	ReadFilter string // -f
}

func (o *fileFlags) addFlags(f *pflag.FlagSet) {
	f.BoolVar(&o.Merge, "merge", false,
		"read the files as one capture, merged by packet time: a connection spanning the files of a ring buffer (tcpdump -C/-G) is one connection, captures split by direction pair up; packet and stream numbers count through the merge")
	f.StringVarP(&o.ReadFilter, "read-filter", "f", "",
		"read only the packets that pass this `FILTER`, in tcpdump syntax ("+live.FilterSyntax+"), as tcpdump -r FILE FILTER does (each packet as captured: a tunnel's outer headers, each IP fragment): the others are skipped before numbering")
}

// packetFilter returns the reassembly.Options.PacketFilter for -f and
// records the capture time of the first packet read in start (for
// --since and --until offsets); nil when neither is needed.
func (o *fileFlags) packetFilter(start *captureStart) (func([]byte, gopacket.CaptureInfo, layers.LinkType) bool, error) {
	var keep func([]byte) bool
	if o.ReadFilter != "" {
		f, err := live.FileFilter(o.ReadFilter)
		if err != nil {
			if _, _, ferr := compileFilter(o.ReadFilter); ferr == nil {
				// api == "Produce": an expression over exchanges,
				// which is --filter's.
				return nil, usageErrorf("-f: %v\nkwire: '%s' is an expression over exchanges: give it with --filter (-f, --read-filter, takes a packet filter in tcpdump syntax)", err, o.ReadFilter)
			}
			return nil, usageErrorf("-f: %v", err)
		}
		keep = f
	}
	if keep == nil && start == nil {
		return nil, nil
	}
	return func(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) bool {
		if start != nil {
			start.see(ci.Timestamp)
		}
		if keep == nil {
			return true
		}
		ip, ok := reassembly.IPHeader(data, link)
		if !ok {
			ip = nil // no IP: only a filter such as not host X passes it
		}
		return keep(ip)
	}, nil
}

// captureStart is the capture time of the first packet of the capture
// being read, set on reassembly's reading goroutine and read by the
// sink's.
type captureStart struct{ nanos atomic.Int64 }

func (s *captureStart) see(t time.Time) {
	if s.nanos.Load() == 0 {
		s.nanos.Store(t.UnixNano() | 1) // never 0 once seen
	}
}

// reset forgets the start: the next file is a capture of its own.
func (s *captureStart) reset() { s.nanos.Store(0) }

func (s *captureStart) time() (time.Time, bool) {
	n := s.nanos.Load()
	return time.Unix(0, n), n != 0
}

// timeBound is a --since or --until: a capture time, or an offset from
// the capture's first packet.
type timeBound struct {
	set    bool
	at     time.Time
	offset time.Duration
	isOff  bool
}

// parseTimeBound reads an RFC 3339 time ("2026-11-29T12:51:40Z", with
// fractions or a zone offset) or an offset from the start of the capture
// ("90s", "+1m30s", "1.5").
func parseTimeBound(flag, s string) (timeBound, error) {
	if s == "" {
		return timeBound{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return timeBound{set: true, at: t}, nil
	}
	off := strings.TrimPrefix(s, "+")
	d, err := time.ParseDuration(off)
	if err != nil {
		f, ferr := strconv.ParseFloat(off, 64)
		if ferr != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) || f > 1e9 {
			return timeBound{}, usageErrorf("%s %q: want a time in RFC 3339 form (2026-11-29T12:51:40Z) or an offset from the capture's first packet (90s, +1m30s, 1.5)", flag, s)
		}
		d = time.Duration(f * float64(time.Second))
	}
	if d < 0 {
		return timeBound{}, usageErrorf("%s %q: an offset from the start cannot be negative", flag, s)
	}
	return timeBound{set: true, offset: d, isOff: true}, nil
}

// checkWindow rejects a --since at or after --until when both are of the
// same kind (two times, or two offsets): the window would select nothing.
func checkWindow(since, until timeBound) error {
	switch {
	case !since.set || !until.set || since.isOff != until.isOff:
		return nil
	case since.isOff && since.offset >= until.offset, !since.isOff && !since.at.Before(until.at):
		return usageErrorf("--since %s is not before --until %s: the window selects nothing", since, until)
	}
	return nil
}

// String is the bound as given back: an offset ("+3s") or an RFC 3339
// time.
func (b timeBound) String() string {
	if b.isOff {
		return "+" + b.offset.String()
	}
	return b.at.Format(time.RFC3339Nano)
}

// resolve returns the bound's capture time given the capture's start.
func (b timeBound) resolve(start *captureStart) (time.Time, bool) {
	if !b.isOff {
		return b.at, true
	}
	t0, ok := start.time()
	if !ok {
		return time.Time{}, false
	}
	return t0.Add(b.offset), true
}

// timeWindow selects exchanges by their request's capture time (the
// response's for an orphan): since <= t < until.
type timeWindow struct {
	since, until timeBound
	start        *captureStart
}

func (w *timeWindow) active() bool { return w != nil && (w.since.set || w.until.set) }

// flags gives the window back as its flags: "--since +10m --until ...".
func (w *timeWindow) flags() string {
	var f []string
	if w.since.set {
		f = append(f, "--since "+w.since.String())
	}
	if w.until.set {
		f = append(f, "--until "+w.until.String())
	}
	return strings.Join(f, " ")
}

func (w *timeWindow) match(ex *dissect.Exchange) bool {
	t := ex.Time()
	if w.since.set {
		if b, ok := w.since.resolve(w.start); ok && t.Before(b) {
			return false
		}
	}
	if w.until.set {
		if b, ok := w.until.resolve(w.start); ok && !t.Before(b) {
			return false
		}
	}
	return true
}

// frameRange is packets First to Last (Last 0: to the end).
type frameRange struct{ First, Last int64 }

// parseFrameRanges reads --frame: packet numbers and ranges,
// comma-separated ("12", "100-200", "5000-": to the end).
func parseFrameRanges(specs []string) ([]frameRange, error) {
	var out []frameRange
	for _, spec := range specs {
		for _, part := range strings.Split(spec, ",") {
			part = strings.TrimSpace(part)
			lo, hi, isRange := strings.Cut(part, "-")
			first, err := strconv.ParseInt(lo, 10, 64)
			if err != nil || first < 1 {
				return nil, usageErrorf("--frame %q: packets are numbered from 1 (N, N-M or N-)", part)
			}
			r := frameRange{First: first, Last: first}
			if isRange {
				r.Last = 0
				if hi != "" {
					last, err := strconv.ParseInt(hi, 10, 64)
					if err != nil || last < first {
						return nil, usageErrorf("--frame %q: the range must end at or after its start (N-M, N-)", part)
					}
					r.Last = last
				}
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// overlaps reports whether the packets of frame fr meet the range.
func (r frameRange) overlaps(fr *dissect.Frame) bool {
	if fr == nil {
		return false
	}
	return fr.LastPacket >= r.First && (r.Last == 0 || fr.FirstPacket <= r.Last)
}

// matchFrames reports whether a packet of ex's request or response is in
// one of the ranges.
func matchFrames(ranges []frameRange, ex *dissect.Exchange) bool {
	for _, r := range ranges {
		if r.overlaps(ex.Request) || r.overlaps(ex.Response) {
			return true
		}
	}
	return false
}

// apply sets --merge and -f on a captureReader.
func (o *fileFlags) apply(cr *captureReader) error {
	pf, err := o.packetFilter(nil)
	if err != nil {
		return err
	}
	cr.merge = o.Merge
	cr.ropts.PacketFilter = pf
	return nil
}

// describeRanges is the ranges as --frame takes them.
func describeRanges(ranges []frameRange) string {
	var parts []string
	for _, r := range ranges {
		switch {
		case r.Last == r.First:
			parts = append(parts, strconv.FormatInt(r.First, 10))
		case r.Last == 0:
			parts = append(parts, strconv.FormatInt(r.First, 10)+"-")
		default:
			parts = append(parts, strconv.FormatInt(r.First, 10)+"-"+strconv.FormatInt(r.Last, 10))
		}
	}
	return strings.Join(parts, ",")
}
