package live

// The capture filter of the pure-Go (AF_PACKET) capture: a small subset of
// tcpdump's filter language (pcap-filter(7)), parsed here and compiled to a
// classic BPF program with golang.org/x/net/bpf, which the kernel runs on
// every packet before it is copied to kwire.
//
// To add a primitive: a case in filterParser.primitive, an op below, its
// String form, its code in compiler.gen for both address families, rows in
// filter_test.go's TestFilterMatches (accepting and rejecting packets), and
// its words in FilterSyntax and isKeyword.

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/bpf"
)

// ErrUnsupportedFilter is wrapped by a *FilterError for a filter that uses
// tcpdump syntax the pure-Go compiler does not know (udp, ether, vlan,
// byte offsets, host names...). The pcap build (-tags pcap) hands filters
// to libpcap, which knows all of it.
var ErrUnsupportedFilter = errors.New("not supported by the pure-Go capture filter")

// FilterError reports a capture filter that could not be compiled.
type FilterError struct {
	Expr        string // the filter as given
	Offset      int    // byte offset in Expr of the token at fault (len(Expr) at the end)
	Msg         string
	Unsupported bool // tcpdump syntax outside the supported subset
	// File marks a filter for capture files (FileFilter), which no build
	// hands to libpcap: its message does not suggest the pcap build.
	File bool
}

// FilterSyntax lists what the pure-Go filter understands, for messages and
// help texts.
const FilterSyntax = `[tcp] [src|dst] port N, [tcp] [src|dst] portrange N-M, ` +
	`[src|dst] host ADDR, [src|dst] net ADDR/BITS, tcp, ip, ip6, ` +
	`combined with and (&&), or (||), not (!) and parentheses`

func (e *FilterError) Error() string {
	at := "at the end"
	if e.Offset < len(e.Expr) {
		at = fmt.Sprintf("at %q (offset %d)", tokenAt(e.Expr, e.Offset), e.Offset)
	}
	s := fmt.Sprintf("capture filter %q: %s: %s", e.Expr, at, e.Msg)
	switch {
	case e.Unsupported && e.File:
		s += "; the pure-Go filter of capture files supports " + FilterSyntax + " (in every build: files never go through libpcap)"
	case e.Unsupported:
		s += "; the pure-Go capture supports " + FilterSyntax +
			"; build kwire with -tags pcap (libpcap) for full tcpdump syntax"
	}
	return s
}

// Unwrap returns ErrUnsupportedFilter for unsupported syntax.
func (e *FilterError) Unwrap() error {
	if e.Unsupported {
		return ErrUnsupportedFilter
	}
	return nil
}

func tokenAt(s string, off int) string {
	end := off
	for end < len(s) && s[end] != ' ' && s[end] != '\t' {
		end++
	}
	return s[off:end]
}

// Filter expression tree.
type op uint8

const (
	opOr        op = iota // l || r
	opAnd                 // l && r
	opNot                 // !l
	opTCP                 // every TCP packet ("tcp"); the program only passes TCP anyway
	opIPv4                // "ip"
	opIPv6                // "ip6"
	opPort                // port lo
	opPortRange           // port in [lo, hi]
	opNet                 // address in prefix ("host" is a full-length prefix)
)

// side says which endpoint a primitive looks at.
type side uint8

const (
	sideEither side = iota // source or destination (tcpdump's default)
	sideSrc
	sideDst
)

type node struct {
	op     op
	l, r   *node
	side   side
	lo, hi uint16
	prefix netip.Prefix
	// tcp marks a port or portrange written after tcp. Without it a
	// capture file's filter (program.file) takes UDP and SCTP ports too,
	// as tcpdump does; the live capture passes TCP only either way.
	tcp bool
}

// String renders the tree in the filter language, fully parenthesised
// (tests and the pcapng interface's filter option).
func (n *node) String() string {
	dir := [...]string{"", "src ", "dst "}[n.side]
	switch n.op {
	case opOr:
		return "(" + n.l.String() + " or " + n.r.String() + ")"
	case opAnd:
		return "(" + n.l.String() + " and " + n.r.String() + ")"
	case opNot:
		return "not " + n.l.String()
	case opTCP:
		return "tcp"
	case opIPv4:
		return "ip"
	case opIPv6:
		return "ip6"
	case opPort:
		return fmt.Sprintf("tcp %sport %d", dir, n.lo)
	case opPortRange:
		return fmt.Sprintf("tcp %sportrange %d-%d", dir, n.lo, n.hi)
	case opNet:
		if n.prefix.IsSingleIP() {
			return dir + "host " + n.prefix.Addr().String()
		}
		return dir + "net " + n.prefix.String()
	}
	return "?"
}

// portsFilter is the default filter: TCP packets from or to one of ports,
// or every TCP packet when ports is empty.
func portsFilter(ports []uint16) *node {
	var e *node
	for _, r := range portRanges(ports) {
		n := &node{op: opPort, lo: r[0], hi: r[1]}
		if r[0] != r[1] {
			n.op = opPortRange
		}
		if e == nil {
			e = n
		} else {
			e = &node{op: opOr, l: e, r: n}
		}
	}
	if e == nil {
		e = &node{op: opTCP}
	}
	return e
}

// portRanges sorts ports and merges consecutive ones into inclusive
// ranges, so that a filter for --port 19092-19094 or 1-65535 is one range
// test, not a test per port (a program has at most maxInstructions).
func portRanges(ports []uint16) [][2]uint16 {
	s := slices.Clone(ports)
	slices.Sort(s)
	var out [][2]uint16
	for _, p := range s {
		if n := len(out); n > 0 && (p == out[n-1][1] || p == out[n-1][1]+1) {
			out[n-1][1] = p
			continue
		}
		out = append(out, [2]uint16{p, p})
	}
	return out
}

// filterToken is one word of a filter with its offset.
type filterToken struct {
	s   string
	off int
}

func tokenize(expr string) []filterToken {
	var toks []filterToken
	i := 0
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')':
			toks = append(toks, filterToken{expr[i : i+1], i})
			i++
		case c == '!':
			toks = append(toks, filterToken{"!", i})
			i++
		case strings.HasPrefix(expr[i:], "&&") || strings.HasPrefix(expr[i:], "||"):
			toks = append(toks, filterToken{expr[i : i+2], i})
			i += 2
		default:
			j := i
			for j < len(expr) && !strings.ContainsRune(" \t\n\r()", rune(expr[j])) &&
				!strings.HasPrefix(expr[j:], "&&") && !strings.HasPrefix(expr[j:], "||") {
				j++
			}
			toks = append(toks, filterToken{expr[i:j], i})
			i = j
		}
	}
	return toks
}

// maxFilterDepth bounds the nesting of parentheses and "not" so that a
// hostile filter cannot exhaust the stack.
const maxFilterDepth = 64

type filterParser struct {
	expr  string
	toks  []filterToken
	i     int
	depth int
}

// parseFilter parses expr in the supported subset of pcap-filter(7).
func parseFilter(expr string) (*node, error) {
	p := &filterParser{expr: expr, toks: tokenize(expr)}
	if len(p.toks) == 0 {
		return nil, p.fail(0, "empty filter", false)
	}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		t := p.toks[p.i]
		if t.s == ")" {
			return nil, p.fail(t.off, "unbalanced parenthesis", false)
		}
		return nil, p.fail(t.off, "expected and, or or the end of the filter", !isKeyword(t.s))
	}
	return n, nil
}

func (p *filterParser) fail(off int, msg string, unsupported bool) *FilterError {
	return &FilterError{Expr: p.expr, Offset: off, Msg: msg, Unsupported: unsupported}
}

func (p *filterParser) peek() (filterToken, bool) {
	if p.i >= len(p.toks) {
		return filterToken{off: len(p.expr)}, false
	}
	return p.toks[p.i], true
}

func (p *filterParser) next() (filterToken, bool) {
	t, ok := p.peek()
	if ok {
		p.i++
	}
	return t, ok
}

func (p *filterParser) or() (*node, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.peek()
		if !ok || (t.s != "or" && t.s != "||") {
			return l, nil
		}
		p.i++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = &node{op: opOr, l: l, r: r}
	}
}

func (p *filterParser) and() (*node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.peek()
		if !ok || (t.s != "and" && t.s != "&&") {
			return l, nil
		}
		p.i++
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = &node{op: opAnd, l: l, r: r}
	}
}

func (p *filterParser) unary() (*node, error) {
	t, ok := p.next()
	if !ok {
		return nil, p.fail(t.off, "expected a primitive (port, host, net...)", false)
	}
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxFilterDepth {
		return nil, p.fail(t.off, fmt.Sprintf("nested more than %d deep", maxFilterDepth), false)
	}
	switch t.s {
	case "not", "!":
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{op: opNot, l: n}, nil
	case "(":
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		c, ok := p.next()
		if !ok || c.s != ")" {
			return nil, p.fail(c.off, "missing closing parenthesis", false)
		}
		return n, nil
	}
	p.i--
	return p.primitive()
}

// primitive parses [tcp] [src|dst] (port|portrange|host|net) VALUE, or a
// lone tcp, ip or ip6.
func (p *filterParser) primitive() (*node, error) {
	t, _ := p.next()
	sawTCP := false
	if t.s == "tcp" {
		sawTCP = true
		n, ok := p.peek()
		if !ok || !isQualified(n.s) {
			return &node{op: opTCP}, nil
		}
		t, _ = p.next()
	}
	switch t.s {
	case "ip":
		return &node{op: opIPv4}, nil
	case "ip6":
		return &node{op: opIPv6}, nil
	}
	sd := sideEither
	switch t.s {
	case "src":
		sd = sideSrc
	case "dst":
		sd = sideDst
	}
	if sd != sideEither {
		n, ok := p.next()
		if !ok {
			return nil, p.fail(n.off, "expected port, portrange, host or net after "+t.s, false)
		}
		if n.s == "or" || n.s == "and" {
			return nil, p.fail(n.off, "\"src or dst\" and \"src and dst\" qualifiers", true)
		}
		t = n
	}
	switch t.s {
	case "port":
		v, ok := p.next()
		port, err := parsePort(v.s)
		if !ok || err != nil {
			return nil, p.fail(v.off, "port needs a number from 0 to 65535 (service names are not supported)", ok && !isKeyword(v.s) && err != nil && !isNumberish(v.s))
		}
		return &node{op: opPort, side: sd, lo: port, hi: port, tcp: sawTCP}, nil
	case "portrange":
		v, ok := p.next()
		a, b, found := strings.Cut(v.s, "-")
		lo, err1 := parsePort(a)
		hi, err2 := parsePort(b)
		if !ok || !found || err1 != nil || err2 != nil {
			return nil, p.fail(v.off, "portrange needs N-M, two numbers from 0 to 65535", false)
		}
		if lo > hi {
			lo, hi = hi, lo // as tcpdump does
		}
		return &node{op: opPortRange, side: sd, lo: lo, hi: hi, tcp: sawTCP}, nil
	case "host":
		if sawTCP {
			return nil, p.fail(t.off, "tcp host (a protocol before host)", true)
		}
		v, ok := p.next()
		a, err := netip.ParseAddr(v.s)
		if !ok || err != nil {
			return nil, p.fail(v.off, "host needs an IPv4 or IPv6 address (host names are not resolved)", ok && !isKeyword(v.s))
		}
		a = a.Unmap()
		if a.Zone() != "" {
			return nil, p.fail(v.off, "addresses with a zone", true)
		}
		return &node{op: opNet, side: sd, prefix: netip.PrefixFrom(a, a.BitLen())}, nil
	case "net":
		if sawTCP {
			return nil, p.fail(t.off, "tcp net (a protocol before net)", true)
		}
		v, ok := p.next()
		pf, err := netip.ParsePrefix(v.s)
		if !ok || err != nil {
			return nil, p.fail(v.off, "net needs ADDRESS/BITS, as 10.0.0.0/8 or fd00::/8", ok && !isKeyword(v.s) && !strings.Contains(v.s, "/"))
		}
		if pf.Masked() != pf {
			return nil, p.fail(v.off, "the address has bits set beyond the prefix length", false)
		}
		return &node{op: opNet, side: sd, prefix: pf}, nil
	}
	if t.s == ")" || t.s == "and" || t.s == "or" || t.s == "&&" || t.s == "||" {
		return nil, p.fail(t.off, "expected a primitive (port, host, net...)", false)
	}
	return nil, p.fail(t.off, "unsupported primitive", true)
}

// isQualified reports whether a word continues a primitive after "tcp".
func isQualified(s string) bool {
	switch s {
	case "src", "dst", "port", "portrange", "host", "net":
		return true
	}
	return false
}

func isKeyword(s string) bool {
	switch s {
	case "and", "or", "not", "&&", "||", "!", "(", ")", "tcp", "ip", "ip6", "src", "dst", "port", "portrange", "host", "net":
		return true
	}
	return false
}

// isNumberish reports whether s looks like an attempt at a number (so a
// bad one is a syntax error, while "http" is an unsupported service name).
func isNumberish(s string) bool {
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '-' || s[0] == '+')
}

func parsePort(s string) (uint16, error) {
	n, err := strconv.ParseUint(s, 10, 16)
	return uint16(n), err
}

// Linux packet socket values for the program's prelude.
const (
	ethPIPv4       = 0x0800 // ETH_P_IP, as SKF_AD_PROTOCOL returns it (host order)
	ethPIPv6       = 0x86DD // ETH_P_IPV6
	packetOutgoing = 4      // PACKET_OUTGOING, skb->pkt_type of a packet the host sends
	ipProtoTCP     = 6
	ipProtoUDP     = 17
	ipProtoSCTP    = 132
	ipProtoFrag    = 44 // IPv6 fragment header
)

// program describes the BPF program to build.
type program struct {
	expr    *node
	snaplen uint32 // bytes kept of an accepted packet (the return value)
	// kernel adds the Linux-only prelude (SKF_AD_* loads), which
	// x/net/bpf's VM cannot run: it drops the outgoing copies on loopback
	// and non-IP packets.
	kernel bool
	// dropOutgoing drops every outgoing packet (the socket is bound to a
	// loopback interface, where each packet is seen leaving and arriving).
	dropOutgoing bool
	// loopbacks are interface indexes whose outgoing packets are dropped
	// (capturing on all interfaces).
	loopbacks []int
	// file builds the filter of packets read from a capture file, which
	// sees every IP packet as it was captured, as libpcap's does: any
	// protocol (a tunnel's outer headers), each IPv4 fragment. tcp tests
	// the protocol (IPv6: the next header, or the one after a fragment
	// header); a port is a TCP, UDP or SCTP port (TCP's after tcp) of a
	// packet that is not a later fragment. Without it only TCP packets
	// reach the expression, and those are the live capture's.
	file bool
}

// compile builds the filter for a SOCK_DGRAM packet socket, where every
// packet starts at its IP header. Shape:
//
//	[kernel] drop outgoing loopback copies; drop unless IPv4 or IPv6
//	dispatch on the IP version nibble (IPv6 through an unconditional
//	jump, whose offset is not limited to 255); early drop: ret #0
//	IPv4: TCP, not a later fragment; X = IP header length; the
//	      expression; ret #snaplen; ret #0
//	IPv6: next header TCP (no extension headers); the expression;
//	      ret #snaplen; ret #0
//
// A file's program (pr.file) has no TCP and fragment tests before the
// expression: its primitives test the protocol themselves.
//
// Each family ends with its own returns, so that the expression's
// conditional jumps (at most 255 instructions forward) only span that
// family's code: the default filter fits about 60 ports.
func (pr program) compile() ([]bpf.Instruction, error) {
	c := &compiler{}
	early := c.label() // drop before the families
	if pr.kernel {
		proto := c.label()
		if pr.dropOutgoing || len(pr.loopbacks) > 0 {
			out := c.label()
			c.emit(bpf.LoadExtension{Num: bpf.ExtType})
			c.jumpIf(bpf.JumpEqual, packetOutgoing, out, proto)
			c.place(out)
			if pr.dropOutgoing {
				c.jump(early)
			} else {
				c.emit(bpf.LoadExtension{Num: bpf.ExtInterfaceIndex})
				for _, idx := range pr.loopbacks {
					next := c.label()
					c.jumpIf(bpf.JumpEqual, uint32(idx), early, next)
					c.place(next)
				}
			}
		}
		c.place(proto)
		body := c.label()
		notV4 := c.label()
		c.emit(bpf.LoadExtension{Num: bpf.ExtProto})
		c.jumpIf(bpf.JumpEqual, ethPIPv4, body, notV4)
		c.place(notV4)
		c.jumpIf(bpf.JumpEqual, ethPIPv6, body, early)
		c.place(body)
	}
	v4, v6, notV4, toV6 := c.label(), c.label(), c.label(), c.label()
	c.emit(bpf.LoadAbsolute{Off: 0, Size: 1})
	c.emit(bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: 4})
	c.jumpIf(bpf.JumpEqual, 4, v4, notV4)
	c.place(notV4)
	c.jumpIf(bpf.JumpEqual, 6, toV6, early)
	c.place(toV6)
	c.jump(v6)
	c.place(early)
	c.emit(bpf.RetConstant{Val: 0})

	for _, fam := range []family{famIPv4, famIPv6} {
		accept, drop := c.label(), c.label()
		ok1, ok2 := c.label(), c.label()
		switch {
		case fam == famIPv4 && pr.file:
			c.place(v4)
			c.emit(bpf.LoadMemShift{Off: 0}) // X = IHL*4
		case fam == famIPv6 && pr.file:
			c.place(v6)
		case fam == famIPv4:
			c.place(v4)
			c.emit(bpf.LoadAbsolute{Off: 9, Size: 1}) // protocol
			c.jumpIf(bpf.JumpEqual, ipProtoTCP, ok1, drop)
			c.place(ok1)
			c.emit(bpf.LoadAbsolute{Off: 6, Size: 2}) // flags, fragment offset
			c.jumpIf(bpf.JumpBitsSet, 0x1FFF, drop, ok2)
			c.place(ok2)
			c.emit(bpf.LoadMemShift{Off: 0}) // X = IHL*4
		default:
			c.place(v6)
			c.emit(bpf.LoadAbsolute{Off: 6, Size: 1}) // next header
			c.jumpIf(bpf.JumpEqual, ipProtoTCP, ok1, drop)
			c.place(ok1)
		}
		c.file = pr.file
		c.gen(pr.expr, fam, accept, drop)
		c.place(accept)
		c.emit(bpf.RetConstant{Val: pr.snaplen})
		c.place(drop)
		c.emit(bpf.RetConstant{Val: 0})
	}
	return c.resolve()
}

type family uint8

const (
	famIPv4 family = iota
	famIPv6
)

// label is a position in the program, placed once; jumps to it are
// resolved at the end. Every jump goes forward (classic BPF has no other).
type label int

type fixup struct {
	at     int   // instruction index
	t, f   label // targets (f unused for Jump)
	uncond bool
}

// compiler assembles a program with symbolic forward jumps.
type compiler struct {
	ins    []bpf.Instruction
	places []int // label → instruction index, -1 until placed
	fixups []fixup
	err    error
	file   bool // program.file: primitives test the protocol
}

func (c *compiler) label() label {
	c.places = append(c.places, -1)
	return label(len(c.places) - 1)
}

func (c *compiler) place(l label) { c.places[l] = len(c.ins) }

func (c *compiler) emit(in bpf.Instruction) { c.ins = append(c.ins, in) }

func (c *compiler) jumpIf(cond bpf.JumpTest, val uint32, t, f label) {
	c.fixups = append(c.fixups, fixup{at: len(c.ins), t: t, f: f})
	c.emit(bpf.JumpIf{Cond: cond, Val: val})
}

func (c *compiler) jump(t label) {
	c.fixups = append(c.fixups, fixup{at: len(c.ins), t: t, uncond: true})
	c.emit(bpf.Jump{})
}

// maxInstructions is the kernel's BPF_MAXINSNS.
const maxInstructions = 4096

func (c *compiler) resolve() ([]bpf.Instruction, error) {
	if c.err != nil {
		return nil, c.err
	}
	if len(c.ins) > maxInstructions {
		return nil, fmt.Errorf("filter needs %d BPF instructions, more than the kernel's %d", len(c.ins), maxInstructions)
	}
	skip := func(at int, l label) (int, error) {
		to := c.places[l]
		if to < 0 {
			return 0, fmt.Errorf("internal error: label %d never placed", l)
		}
		n := to - at - 1
		if n < 0 {
			return 0, fmt.Errorf("internal error: backward jump at %d", at)
		}
		return n, nil
	}
	for _, fx := range c.fixups {
		t, err := skip(fx.at, fx.t)
		if err != nil {
			return nil, err
		}
		if fx.uncond {
			c.ins[fx.at] = bpf.Jump{Skip: uint32(t)}
			continue
		}
		f, err := skip(fx.at, fx.f)
		if err != nil {
			return nil, err
		}
		if t > 255 || f > 255 {
			return nil, errors.New("filter too long: a conditional jump spans more than 255 BPF instructions; simplify it or use the pcap build")
		}
		j := c.ins[fx.at].(bpf.JumpIf)
		j.SkipTrue, j.SkipFalse = uint8(t), uint8(f)
		c.ins[fx.at] = j
	}
	return c.ins, nil
}

// Field offsets from the start of the IP header. IPv4 ports are loaded
// relative to X (the header length); IPv6 ports sit after the fixed
// 40-byte header (packets with extension headers were dropped above).
const (
	ipv4Src, ipv4Dst = 12, 16
	ipv6Src, ipv6Dst = 8, 24
	ipv6TCP          = 40
)

// gen emits code that jumps to t when n holds for a packet of family fam
// and to f when not.
func (c *compiler) gen(n *node, fam family, t, f label) {
	switch n.op {
	case opOr:
		mid := c.label()
		c.gen(n.l, fam, t, mid)
		c.place(mid)
		c.gen(n.r, fam, t, f)
	case opAnd:
		mid := c.label()
		c.gen(n.l, fam, mid, f)
		c.place(mid)
		c.gen(n.r, fam, t, f)
	case opNot:
		c.gen(n.l, fam, f, t)
	case opTCP:
		if !c.file {
			c.jump(t)
			return
		}
		if fam == famIPv4 {
			c.emit(bpf.LoadAbsolute{Off: 9, Size: 1})
			c.jumpIf(bpf.JumpEqual, ipProtoTCP, t, f)
			return
		}
		// As libpcap: TCP, or a fragment header followed by TCP.
		frag := c.label()
		c.emit(bpf.LoadAbsolute{Off: 6, Size: 1})
		c.jumpIf(bpf.JumpEqual, ipProtoTCP, t, frag)
		c.place(frag)
		after := c.label()
		c.jumpIf(bpf.JumpEqual, ipProtoFrag, after, f)
		c.place(after)
		c.emit(bpf.LoadAbsolute{Off: ipv6TCP, Size: 1})
		c.jumpIf(bpf.JumpEqual, ipProtoTCP, t, f)
	case opIPv4:
		c.jump(pick(fam == famIPv4, t, f))
	case opIPv6:
		c.jump(pick(fam == famIPv6, t, f))
	case opPort, opPortRange:
		if c.file {
			c.transport(n.tcp, fam, f)
		}
		c.sides(n.side, t, f, func(src bool, t, f label) {
			off := uint32(0)
			if !src {
				off = 2
			}
			if fam == famIPv4 {
				c.emit(bpf.LoadIndirect{Off: off, Size: 2})
			} else {
				c.emit(bpf.LoadAbsolute{Off: ipv6TCP + off, Size: 2})
			}
			if n.op == opPort {
				c.jumpIf(bpf.JumpEqual, uint32(n.lo), t, f)
				return
			}
			ge := c.label()
			c.jumpIf(bpf.JumpGreaterOrEqual, uint32(n.lo), ge, f)
			c.place(ge)
			c.jumpIf(bpf.JumpLessOrEqual, uint32(n.hi), t, f)
		})
	case opNet:
		is4 := n.prefix.Addr().Is4()
		if is4 != (fam == famIPv4) {
			c.jump(f) // an address of the other family never matches
			return
		}
		c.sides(n.side, t, f, func(src bool, t, f label) {
			base := pick[uint32](src, ipv4Src, ipv4Dst)
			if !is4 {
				base = pick[uint32](src, ipv6Src, ipv6Dst)
			}
			c.prefix(n.prefix, base, t, f)
		})
	default:
		// Unreachable: the parser makes no other ops.
		c.err = fmt.Errorf("internal error: unknown filter op %d", n.op)
	}
}

// transport emits the tests of a file's port primitive that the live
// program makes before the expression: the protocol is TCP (tcpOnly) or
// one with ports (TCP, UDP, SCTP), and an IPv4 packet is not a later
// fragment; falls through when they hold, jumps to f when not. IPv6
// ports are read after the fixed header, as libpcap reads them.
func (c *compiler) transport(tcpOnly bool, fam family, f label) {
	ok := c.label()
	c.emit(bpf.LoadAbsolute{Off: pick[uint32](fam == famIPv4, 9, 6), Size: 1})
	if tcpOnly {
		c.jumpIf(bpf.JumpEqual, ipProtoTCP, ok, f)
	} else {
		notTCP, notUDP := c.label(), c.label()
		c.jumpIf(bpf.JumpEqual, ipProtoTCP, ok, notTCP)
		c.place(notTCP)
		c.jumpIf(bpf.JumpEqual, ipProtoUDP, ok, notUDP)
		c.place(notUDP)
		c.jumpIf(bpf.JumpEqual, ipProtoSCTP, ok, f)
	}
	c.place(ok)
	if fam == famIPv4 {
		first := c.label()
		c.emit(bpf.LoadAbsolute{Off: 6, Size: 2}) // flags, fragment offset
		c.jumpIf(bpf.JumpBitsSet, 0x1FFF, f, first)
		c.place(first)
	}
}

func pick[T any](cond bool, a, b T) T {
	if cond {
		return a
	}
	return b
}

// sides runs one(src) then one(dst) for sideEither, so that either side
// matching jumps to t.
func (c *compiler) sides(sd side, t, f label, one func(src bool, t, f label)) {
	switch sd {
	case sideSrc:
		one(true, t, f)
	case sideDst:
		one(false, t, f)
	default:
		other := c.label()
		one(true, t, other)
		c.place(other)
		one(false, t, f)
	}
}

// prefix compares the address at base with pf, 32 bits at a time.
func (c *compiler) prefix(pf netip.Prefix, base uint32, t, f label) {
	bits := pf.Bits()
	if bits == 0 {
		c.jump(t)
		return
	}
	raw := pf.Addr().AsSlice()
	for w := 0; w*32 < bits; w++ {
		val := uint32(raw[4*w])<<24 | uint32(raw[4*w+1])<<16 | uint32(raw[4*w+2])<<8 | uint32(raw[4*w+3])
		c.emit(bpf.LoadAbsolute{Off: base + uint32(4*w), Size: 4})
		if rest := bits - 32*w; rest < 32 {
			mask := ^uint32(0) << (32 - rest)
			c.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: mask})
			val &= mask
		}
		if (w+1)*32 >= bits {
			c.jumpIf(bpf.JumpEqual, val, t, f)
		} else {
			next := c.label()
			c.jumpIf(bpf.JumpEqual, val, next, f)
			c.place(next)
		}
	}
}
