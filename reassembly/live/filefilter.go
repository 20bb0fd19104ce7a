package live

import (
	"golang.org/x/net/bpf"
)

// FileFilter compiles expr, in the subset of tcpdump's syntax that the
// pure-Go capture understands (FilterSyntax), for packets read from
// capture files, as tcpdump -r FILE FILTER applies it: the returned
// function reports whether the filter accepts a packet as it was
// captured, given from its IP header (see reassembly.IPHeader), or nil
// for a packet that carries no IP. It runs a classic BPF program
// (golang.org/x/net/bpf's VM) that sees every IP packet, not only TCP:
// a tunnel's outer headers (ip, host 10.0.0.1 and port 4789 match a
// VXLAN packet by its outer IPv4 and UDP headers) and each IPv4
// fragment (host matches every fragment; port, as libpcap's, only the
// first, which holds the ports). A packet without IP fails every
// primitive, so not host 10.0.0.1 accepts it, as tcpdump does. A filter
// outside the subset is a *FilterError, in every build (files never go
// through libpcap).
func FileFilter(expr string) (func(ip []byte) bool, error) {
	n, err := parseFilter(expr)
	if err != nil {
		if fe, ok := err.(*FilterError); ok {
			fe.File = true
		}
		return nil, err
	}
	ins, err := program{expr: n, snaplen: 1, file: true}.compile()
	if err != nil {
		return nil, err
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		return nil, err
	}
	noIP := n.noIP()
	return func(ip []byte) bool {
		if ip == nil {
			return noIP
		}
		n, err := vm.Run(ip)
		return err == nil && n > 0
	}, nil
}

// noIP reports whether the filter accepts a packet that carries no IP:
// every primitive is false of it.
func (n *node) noIP() bool {
	switch n.op {
	case opOr:
		return n.l.noIP() || n.r.noIP()
	case opAnd:
		return n.l.noIP() && n.r.noIP()
	case opNot:
		return !n.l.noIP()
	}
	return false
}
