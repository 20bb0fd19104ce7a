//go:build pcap

package live

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcap"
)

// Backend names the capture mechanism of this build.
const Backend = "libpcap"

// permissionFix explains how to get capture privileges for libpcap.
func permissionFix(need, exe string) string {
	if runtime.GOOS == "linux" {
		return fmt.Sprintf("capturing packets needs %s: run kwire as root (sudo), or grant the binary the capabilities once:\n"+
			"  sudo setcap cap_net_raw,cap_net_admin+ep %s", need, exe)
	}
	return fmt.Sprintf("capturing packets needs %s: run kwire as root (sudo), or give your user read access to "+
		"the /dev/bpf* devices (on macOS, Wireshark's ChmodBPF package does that)", need)
}

type pcapHandle struct {
	h     *pcap.Handle
	iface string
	expr  string
}

func openHandle(cfg *Config) (handle, error) {
	device := cfg.Interface
	if device == "" {
		device = AnyInterface
	}
	if err := checkDevice(device); err != nil {
		return nil, err
	}
	in, err := pcap.NewInactiveHandle(device)
	if err != nil {
		return nil, fmt.Errorf("libpcap on %s: %w", device, err)
	}
	defer in.CleanUp()
	settings := []error{
		in.SetSnapLen(cfg.Snaplen),
		in.SetPromisc(cfg.Promiscuous),
		in.SetTimeout(PollInterval),
		in.SetImmediateMode(true),
		in.SetBufferSize(cfg.BufferSize),
	}
	if err := errors.Join(settings...); err != nil {
		return nil, fmt.Errorf("libpcap on %s: %w", device, err)
	}
	h, err := in.Activate()
	if err != nil {
		msg := err.Error()
		lower := strings.ToLower(msg)
		if strings.Contains(lower, "permission") || strings.Contains(lower, "not permitted") {
			return nil, &PermissionError{Interface: cfg.Interface, Err: err, Need: permissionNeed()}
		}
		if strings.Contains(lower, "no such device") {
			return nil, &InterfaceError{Name: device, Available: interfaceNames()}
		}
		return nil, fmt.Errorf("libpcap on %s: %w", device, err)
	}
	expr := cfg.Filter
	if expr == "" {
		expr = defaultPcapFilter(cfg.Ports)
	}
	if err := h.SetBPFFilter(expr); err != nil {
		h.Close()
		return nil, &FilterError{Expr: expr, Offset: len(expr), Msg: err.Error()}
	}
	return &pcapHandle{h: h, iface: cfg.Interface, expr: expr}, nil
}

// permissionNeed names the privilege libpcap lacks on this system.
func permissionNeed() string {
	if runtime.GOOS == "linux" {
		return "CAP_NET_RAW"
	}
	return "access to /dev/bpf*"
}

// defaultPcapFilter is the default filter in tcpdump syntax.
func defaultPcapFilter(ports []uint16) string {
	if len(ports) == 0 {
		return "tcp"
	}
	var b strings.Builder
	b.WriteString("tcp and (")
	for i, r := range portRanges(ports) {
		if i > 0 {
			b.WriteString(" or ")
		}
		if r[0] == r[1] {
			fmt.Fprintf(&b, "port %d", r[0])
		} else {
			fmt.Fprintf(&b, "portrange %d-%d", r[0], r[1])
		}
	}
	b.WriteString(")")
	return b.String()
}

// checkDevice fails with an InterfaceError when libpcap does not list the
// device ("any" is listed on Linux only).
func checkDevice(device string) error {
	devs, err := pcap.FindAllDevs()
	if err != nil {
		return nil // let Activate say what is wrong
	}
	for _, d := range devs {
		if d.Name == device {
			return nil
		}
	}
	return &InterfaceError{Name: device, Available: interfaceNames()}
}

func (h *pcapHandle) read() ([]byte, gopacket.CaptureInfo, error) {
	data, ci, err := h.h.ZeroCopyReadPacketData()
	switch {
	case errors.Is(err, pcap.NextErrorTimeoutExpired):
		return nil, ci, errIdle
	case err != nil:
		return nil, ci, fmt.Errorf("capturing on %s: %w", ifaceName(h.iface), err)
	}
	ci.InterfaceIndex = 0
	ci.AncillaryData = nil
	return data, ci, nil
}

func (h *pcapHandle) linkType() layers.LinkType { return h.h.LinkType() }

func (h *pcapHandle) stats() (Stats, error) {
	st, err := h.h.Stats()
	if err != nil {
		return Stats{Received: -1}, err
	}
	return Stats{Received: int64(st.PacketsReceived), Dropped: int64(st.PacketsDropped), IfDropped: int64(st.PacketsIfDropped)}, nil
}

func (h *pcapHandle) close()         { h.h.Close() }
func (h *pcapHandle) filter() string { return h.expr }
func (h *pcapHandle) name() string {
	if h.iface == "" {
		return AnyInterface
	}
	return h.iface
}

// interfaceNames lists the devices libpcap can open.
func interfaceNames() []string {
	devs, _ := pcap.FindAllDevs()
	names := make([]string, 0, len(devs))
	for _, d := range devs {
		names = append(names, d.Name)
	}
	return sortedNames(names)
}
