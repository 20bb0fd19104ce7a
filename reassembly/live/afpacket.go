//go:build linux && !pcap

package live

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/net/bpf"
)

// Backend names the capture mechanism of this build.
const Backend = "AF_PACKET (pure Go)"

// Ring geometry. A TPACKET_V3 block holds whole packets, so it must be
// larger than the largest packet: 64 KiB GSO packets on loopback, up to
// about 185 KiB with BIG TCP. Frames only matter for the ring's
// bookkeeping in V3.
const (
	ringBlockSize = 1 << 20
	ringFrameSize = 1 << 12
	// ringBlockTimeout is how long the kernel fills a block before
	// handing it over anyway: the latency of a quiet capture.
	ringBlockTimeout = 20 * time.Millisecond
)

type afHandle struct {
	tp      *afpacket.TPacket
	iface   string
	expr    string
	started time.Time // packets stamped earlier may predate the filter
	drops   int64     // reads that saw a packet from before the filter
}

// permissionFix explains how to get a capability: root, or setcap on
// the binary (file capabilities survive until the binary is replaced).
func permissionFix(need, exe string) string {
	caps := "cap_net_raw"
	if need == "CAP_NET_ADMIN" {
		caps = "cap_net_raw,cap_net_admin"
	}
	return fmt.Sprintf("capturing packets needs %s: run kwire as root (sudo), or grant the binary the capability once:\n"+
		"  sudo setcap %s+ep %s", need, caps, exe)
}

func openHandle(cfg *Config) (handle, error) {
	expr, err := buildExpr(cfg)
	if err != nil {
		return nil, err
	}
	prog := program{expr: expr, snaplen: uint32(cfg.Snaplen), kernel: true}
	if cfg.Interface != "" {
		ifc, err := net.InterfaceByName(cfg.Interface)
		if err != nil {
			return nil, &InterfaceError{Name: cfg.Interface, Available: interfaceNames()}
		}
		prog.dropOutgoing = ifc.Flags&net.FlagLoopback != 0
	} else {
		ifcs, _ := net.Interfaces()
		for _, ifc := range ifcs {
			if ifc.Flags&net.FlagLoopback != 0 {
				prog.loopbacks = append(prog.loopbacks, ifc.Index)
			}
		}
		if cfg.Promiscuous {
			return nil, errors.New("promiscuous mode needs an interface, not all of them")
		}
	}
	insns, err := prog.compile()
	if err != nil {
		return nil, &FilterError{Expr: cfg.Filter, Offset: len(cfg.Filter), Msg: err.Error()}
	}
	raw, err := bpf.Assemble(insns)
	if err != nil {
		return nil, fmt.Errorf("assembling the capture filter: %w", err)
	}

	blocks := max(1, (cfg.BufferSize+ringBlockSize-1)/ringBlockSize)
	tp, err := afpacket.NewTPacket(
		afpacket.OptInterface(cfg.Interface),
		afpacket.OptSocketType(afpacket.SocketDgram),
		afpacket.TPacketVersion3,
		afpacket.OptBlockSize(ringBlockSize),
		afpacket.OptFrameSize(ringFrameSize),
		afpacket.OptNumBlocks(blocks),
		afpacket.OptBlockTimeout(ringBlockTimeout),
		afpacket.OptPollTimeout(PollInterval),
	)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, &PermissionError{Interface: cfg.Interface, Err: err, Need: "CAP_NET_RAW"}
		}
		return nil, fmt.Errorf("opening an AF_PACKET socket on %s: %w", ifaceName(cfg.Interface), err)
	}
	if err := tp.SetBPF(raw); err != nil {
		tp.Close()
		return nil, fmt.Errorf("attaching the capture filter: %w", err)
	}
	if cfg.Promiscuous {
		if err := tp.SetPromiscuous(true); err != nil {
			tp.Close()
			if errors.Is(err, os.ErrPermission) {
				return nil, &PermissionError{Interface: cfg.Interface, Err: err, Need: "CAP_NET_ADMIN"}
			}
			return nil, fmt.Errorf("promiscuous mode on %s: %w", cfg.Interface, err)
		}
	}
	shown := expr.String()
	if cfg.Filter != "" {
		shown = "tcp and (" + cfg.Filter + ")"
	}
	return &afHandle{tp: tp, iface: cfg.Interface, expr: shown, started: time.Now()}, nil
}

// buildExpr parses the filter, or builds the default one from the ports.
func buildExpr(cfg *Config) (*node, error) {
	if cfg.Filter == "" {
		return portsFilter(cfg.Ports), nil
	}
	return parseFilter(cfg.Filter)
}

// read returns the next packet. Packets the socket queued between its
// creation and the filter's attachment were not filtered (and on loopback
// would be duplicated): they are recognised by their timestamps, which
// the kernel takes when it runs the filter, and skipped.
func (h *afHandle) read() ([]byte, gopacket.CaptureInfo, error) {
	for {
		data, ci, err := h.tp.ZeroCopyReadPacketData()
		switch {
		case errors.Is(err, afpacket.ErrTimeout):
			return nil, ci, errIdle
		case err != nil:
			return nil, ci, fmt.Errorf("capturing on %s: %w", ifaceName(h.iface), err)
		case ci.Timestamp.Before(h.started):
			h.drops++
			continue
		}
		ci.InterfaceIndex = 0
		ci.AncillaryData = nil // VLAN tags stripped by the NIC are not needed
		return data, ci, nil
	}
}

func (h *afHandle) linkType() layers.LinkType { return layers.LinkTypeRaw }

func (h *afHandle) stats() (Stats, error) {
	_, v3, err := h.tp.SocketStats()
	if err != nil {
		return Stats{Received: -1}, err
	}
	// tp_packets counts every packet the filter passed, tp_drops those of
	// them that found the ring full.
	return Stats{Received: int64(v3.Packets()) - h.drops, Dropped: int64(v3.Drops())}, nil
}

func (h *afHandle) close()         { h.tp.Close() }
func (h *afHandle) filter() string { return h.expr }
func (h *afHandle) name() string {
	if h.iface == "" {
		return AnyInterface
	}
	return h.iface
}

// interfaceNames lists the interfaces for an InterfaceError, with "any".
func interfaceNames() []string {
	names := []string{AnyInterface}
	ifcs, _ := net.Interfaces()
	for _, ifc := range ifcs {
		names = append(names, ifc.Name)
	}
	return sortedNames(names)
}
