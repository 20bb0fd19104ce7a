package live

import (
	"golang.org/x/net/bpf"
)

// FileFilter compiles expr, in the subset of tcpdump's syntax that the
// pure-Go capture understands (FilterSyntax), for packets read from
// capture files: the returned function runs the same classic BPF program
// (golang.org/x/net/bpf's VM) on a packet given from its IP header (see
// reassembly.IPHeader) and reports whether the filter accepts it. Like the
// capture filter it passes TCP only, over IPv4 (not later fragments) and
// over IPv6 without extension headers. A filter outside the subset is a
// *FilterError, in every build (files never go through libpcap).
func FileFilter(expr string) (func(ip []byte) bool, error) {
	n, err := parseFilter(expr)
	if err != nil {
		return nil, err
	}
	ins, err := program{expr: n, snaplen: 1}.compile()
	if err != nil {
		return nil, err
	}
	vm, err := bpf.NewVM(ins)
	if err != nil {
		return nil, err
	}
	return func(ip []byte) bool {
		n, err := vm.Run(ip)
		return err == nil && n > 0
	}, nil
}
