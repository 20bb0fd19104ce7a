// Package live captures packets from a network interface and hands them to
// the reassembly package, as a reassembly.PacketSource. It knows nothing
// about Kafka: it captures TCP packets that pass a filter.
//
// # Backends
//
// By default, on Linux, capture is pure Go: an AF_PACKET socket with a
// TPACKET_V3 memory-mapped ring (github.com/gopacket/gopacket/afpacket),
// opened SOCK_DGRAM so that every packet starts at its IP header (link
// type RAW) whatever the interface, "any" included. The filter runs in the
// kernel as classic BPF built with golang.org/x/net/bpf from a subset of
// tcpdump's syntax (FilterSyntax). On a loopback interface each packet is
// seen twice, leaving and arriving: the filter drops the leaving copy
// (PACKET_OUTGOING). No libpcap and no cgo are needed. The kernel filter
// passes TCP only: over IPv4 (not later fragments, which carry no ports)
// and over IPv6 without extension headers; VLAN-tagged packets the
// network card did not untag are not seen.
//
// Built with -tags pcap, capture goes through libpcap
// (github.com/gopacket/gopacket/pcap): this works on macOS and the BSDs
// (lo0) and takes filters in full tcpdump syntax. Without that tag, on
// systems other than Linux, Open fails and says to build with it.
//
// # Errors
//
// Open reports a missing capture privilege with a *PermissionError
// (errors.Is(err, ErrPermission)), an unknown interface with an
// *InterfaceError listing the interfaces that exist, and a filter outside
// the supported subset with a *FilterError (errors.Is(err,
// ErrUnsupportedFilter)).
//
// # Ending
//
// ReadPacket returns io.EOF when Config.Context is done, Config.Duration
// has passed or Config.Count packets were delivered: Source.Stopped says
// which. It wakes at least every PollInterval to notice, so an idle
// interface does not keep it blocked.
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Defaults for Config fields left zero.
const (
	// DefaultSnaplen keeps whole packets: 262144 bytes, tcpdump's default,
	// above the 64 KiB a GSO packet on loopback can reach.
	DefaultSnaplen = 262144
	// DefaultBufferSize is the kernel buffer for packets kwire has not read
	// yet: 32 MiB, a fraction of a second of a busy 1 Gbit/s link, enough
	// for bursts of large Fetch responses while the dissector decodes.
	DefaultBufferSize = 32 << 20
)

// PollInterval is the longest ReadPacket blocks without a packet before it
// checks the context, the duration and the count.
const PollInterval = 100 * time.Millisecond

// AnyInterface captures on every interface (Linux, and libpcap's "any").
const AnyInterface = "any"

// Config describes a capture.
type Config struct {
	// Context ends the capture when done (Ctrl-C). nil never ends it.
	Context context.Context
	// Interface is the interface name ("eth0", "lo", "lo0"); "" or "any"
	// captures on all interfaces (Linux only).
	Interface string
	// Filter is a capture filter. With the pure-Go backend it is the
	// subset of tcpdump's syntax described by FilterSyntax, and only TCP
	// packets pass; with the pcap backend it is handed to libpcap as is.
	// Empty means the default: TCP packets from or to one of Ports, or all
	// TCP when Ports is empty.
	Filter string
	// Ports are the TCP ports of the default filter.
	Ports []uint16
	// Snaplen is the number of bytes kept of each packet; 0 means
	// DefaultSnaplen.
	Snaplen int
	// BufferSize is the kernel buffer in bytes; 0 means DefaultBufferSize.
	// The pure-Go backend rounds it up to whole 1 MiB blocks.
	BufferSize int
	// Promiscuous puts the interface in promiscuous mode, to see traffic
	// of other hosts (mirror ports). Not possible with "any".
	Promiscuous bool
	// Duration ends the capture this long after Open; 0 means no limit.
	Duration time.Duration
	// Count ends the capture after this many packets; 0 means no limit.
	Count int64
	// Record, when not nil, receives every packet delivered, as a pcapng
	// stream (one interface, its link type, its filter), with the kernel's
	// counts in an interface statistics block at Close. It is flushed at
	// least every second and at Close.
	Record io.Writer
}

// Errors of Open. The concrete errors wrap them; test with errors.Is.
var (
	// ErrPermission: the process may not capture packets.
	ErrPermission = errors.New("no permission to capture packets")
	// ErrNoInterface: no interface has the name given.
	ErrNoInterface = errors.New("no such interface")
	// ErrUnsupported: this build cannot capture on this system.
	ErrUnsupported = errors.New("live capture not supported by this build")
)

// PermissionError reports that capturing was refused.
type PermissionError struct {
	Interface string
	Err       error  // the system's error
	Need      string // what is missing, e.g. "CAP_NET_RAW"
}

func (e *PermissionError) Error() string {
	return fmt.Sprintf("capturing on %s: %v (needs %s)", ifaceName(e.Interface), e.Err, e.Need)
}

// Unwrap returns ErrPermission and the system's error.
func (e *PermissionError) Unwrap() []error { return []error{ErrPermission, e.Err} }

// Fix says how to get the permission, in a few lines for the user, with
// exe the path of the program to grant it to.
func (e *PermissionError) Fix(exe string) string { return permissionFix(e.Need, exe) }

// InterfaceError reports an interface name that does not exist.
type InterfaceError struct {
	Name      string
	Available []string // the interfaces that exist, sorted
}

func (e *InterfaceError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("no interface %q (and none found)", e.Name)
	}
	return fmt.Sprintf("no interface %q; available: %s", e.Name, strings.Join(e.Available, ", "))
}

// Unwrap returns ErrNoInterface.
func (e *InterfaceError) Unwrap() error { return ErrNoInterface }

func ifaceName(s string) string {
	if s == "" {
		return "all interfaces"
	}
	return s
}

// Stats are a capture's counts.
type Stats struct {
	// Packets counts packets delivered by ReadPacket.
	Packets int64
	// Received counts packets the kernel's filter passed (delivered or
	// dropped), when the backend reports it; -1 when unknown.
	Received int64
	// Dropped counts packets that passed the filter but were lost because
	// the buffer was full (kwire read too slowly). Each drop is a hole in
	// some TCP stream.
	Dropped int64
	// IfDropped counts packets the interface or its driver dropped, when
	// the backend reports it (libpcap on some systems); 0 otherwise.
	IfDropped int64
}

// Stop reasons, from Source.Stopped.
const (
	StopNone     = ""            // still capturing
	StopContext  = "interrupted" // Config.Context was done
	StopDuration = "duration"    // Config.Duration passed
	StopCount    = "count"       // Config.Count packets were delivered
	StopError    = "error"       // the capture failed
)

// handle is what a backend provides.
type handle interface {
	// read returns the next packet, valid until the next call, or
	// errIdle after about PollInterval without one.
	read() ([]byte, gopacket.CaptureInfo, error)
	linkType() layers.LinkType
	// stats returns the kernel's counts so far (Received, Dropped,
	// IfDropped; Packets is the Source's).
	stats() (Stats, error)
	close()
	// filter is the filter in force, for the pcapng interface block.
	filter() string
	// name is the interface's name as the backend knows it.
	name() string
}

// errIdle is a backend's "no packet within PollInterval".
var errIdle = errors.New("idle")

// Source is a live capture. It implements reassembly.PacketSource; it is
// not safe for concurrent use, except Stats.
type Source struct {
	h        handle
	ctx      context.Context
	deadline time.Time
	count    int64
	packets  int64
	stopped  string
	rec      *recorder
	final    *Stats
}

// Open starts a capture. Packets are buffered by the kernel from then on;
// read them with ReadPacket and end with Close.
func Open(cfg Config) (*Source, error) {
	if cfg.Snaplen <= 0 {
		cfg.Snaplen = DefaultSnaplen
	}
	if cfg.BufferSize <= 0 {
		cfg.BufferSize = DefaultBufferSize
	}
	if cfg.Interface == AnyInterface {
		cfg.Interface = ""
	}
	h, err := openHandle(&cfg)
	if err != nil {
		return nil, err
	}
	s := &Source{h: h, ctx: cfg.Context, count: cfg.Count}
	if s.ctx == nil {
		s.ctx = context.Background()
	}
	if cfg.Duration > 0 {
		s.deadline = time.Now().Add(cfg.Duration)
	}
	if cfg.Record != nil {
		s.rec, err = newRecorder(cfg.Record, h, uint32(cfg.Snaplen))
		if err != nil {
			h.close()
			return nil, fmt.Errorf("writing the capture: %w", err)
		}
	}
	return s, nil
}

// LinkType is the link type of the packets ReadPacket returns.
func (s *Source) LinkType() layers.LinkType { return s.h.linkType() }

// Interface is the name of the interface captured on ("" for all).
func (s *Source) Interface() string { return s.h.name() }

// Filter is the capture filter in force, in tcpdump syntax.
func (s *Source) Filter() string { return s.h.filter() }

// ReadPacket implements reassembly.PacketSource. It blocks until a packet
// arrives or the capture ends (io.EOF; see Stopped). A recording error
// ends the capture with that error.
func (s *Source) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	link := s.h.linkType()
	for {
		if s.stopped != StopNone {
			return nil, gopacket.CaptureInfo{}, link, io.EOF
		}
		if s.ctx.Err() != nil {
			s.stopped = StopContext
			continue
		}
		if !s.deadline.IsZero() && !time.Now().Before(s.deadline) {
			s.stopped = StopDuration
			continue
		}
		if s.count > 0 && s.packets >= s.count {
			s.stopped = StopCount
			continue
		}
		data, ci, err := s.h.read()
		if err == errIdle {
			if s.rec != nil {
				if err := s.rec.tick(); err != nil {
					s.stopped = StopError
					return nil, ci, link, err
				}
			}
			continue
		}
		if err != nil {
			s.stopped = StopError
			return nil, ci, link, err
		}
		s.packets++
		if s.rec != nil {
			if err := s.rec.write(ci, data); err != nil {
				s.stopped = StopError
				return nil, ci, link, fmt.Errorf("writing the capture: %w", err)
			}
		}
		return data, ci, link, nil
	}
}

// Stopped says why ReadPacket returned io.EOF: one of the Stop* constants
// (StopNone while capturing).
func (s *Source) Stopped() string { return s.stopped }

// Stats returns the counts so far (after Close, the final counts).
func (s *Source) Stats() Stats {
	if s.final != nil {
		return *s.final
	}
	st, err := s.h.stats()
	if err != nil {
		st = Stats{Received: -1}
	}
	st.Packets = s.packets
	return st
}

// Close ends the capture: the final counts are taken, the recording (if
// any) gets its statistics block and is flushed, and the socket is closed.
// It returns the recording's error, if any. Close is idempotent.
func (s *Source) Close() error {
	if s.final != nil {
		return nil
	}
	st := s.Stats()
	s.final = &st
	var err error
	if s.rec != nil {
		err = s.rec.close(st)
	}
	s.h.close()
	return err
}

// recorder writes the packets of a Source as pcapng.
type recorder struct {
	w         *pcapgo.NgWriter
	start     time.Time
	lastFlush time.Time
}

// recordFlushEvery bounds how long recorded packets stay in memory.
const recordFlushEvery = time.Second

func newRecorder(w io.Writer, h handle, snaplen uint32) (*recorder, error) {
	ng, err := pcapgo.NewNgWriterInterface(w, pcapgo.NgInterface{
		Name:                h.name(),
		Filter:              h.filter(),
		LinkType:            h.linkType(),
		SnapLength:          snaplen,
		TimestampResolution: 9, // nanoseconds
	}, pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "kwire live"}})
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &recorder{w: ng, start: now, lastFlush: now}, nil
}

func (r *recorder) write(ci gopacket.CaptureInfo, data []byte) error {
	ci.InterfaceIndex = 0 // the file's only interface
	ci.AncillaryData = nil
	if err := r.w.WritePacket(ci, data); err != nil {
		return err
	}
	return r.tick()
}

// tick flushes when the last flush is older than recordFlushEvery.
func (r *recorder) tick() error {
	if now := time.Now(); now.Sub(r.lastFlush) >= recordFlushEvery {
		r.lastFlush = now
		return r.w.Flush()
	}
	return nil
}

func (r *recorder) close(st Stats) error {
	is := pcapgo.NgInterfaceStatistics{
		LastUpdate:      time.Now(),
		StartTime:       r.start,
		EndTime:         time.Now(),
		PacketsReceived: pcapgo.NgNoValue64,
		PacketsDropped:  uint64(st.Dropped + st.IfDropped),
	}
	if st.Received >= 0 {
		is.PacketsReceived = uint64(st.Received)
	}
	err := r.w.WriteInterfaceStats(0, is)
	return errors.Join(err, r.w.Flush())
}

// Interfaces lists the names of the interfaces this build can capture on,
// sorted ("any" included where it exists).
func Interfaces() []string { return interfaceNames() }

// unsupportedError is Open's error in a build that cannot capture on goos:
// it wraps ErrUnsupported and says how to get a build that can.
func unsupportedError(goos string) error {
	return fmt.Errorf("%w on %s: kwire captures in pure Go on Linux only; build it with libpcap to capture here (go build -tags pcap ./cmd/kwire: cgo, with libpcap, or Npcap's SDK on Windows), or capture with tcpdump or Wireshark and run kwire read on the file", ErrUnsupported, goos)
}

// sortedNames returns names sorted and without duplicates.
func sortedNames(names []string) []string {
	slices.Sort(names)
	return slices.Compact(names)
}
