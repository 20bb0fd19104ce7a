package main

// This file is the -gopacket floor: what the libraries kwire reads with
// cost on their own, without any of kwire's code. gopacket's pcapgo
// reads the file (pcap or pcapng), a DecodingLayerParser decodes the
// link, IP and TCP headers into reused layers, and gopacket's
// reassembly.Assembler puts every TCP connection's bytes in order into
// streams that only count them. kwire's reassembly package does this and
// more (IP defragmentation, tunnels, gaps, packet numbers and times per
// byte, bounds): kwire-baseline without flags against -gopacket is that
// package's own cost, kwire read against -gopacket is everything kwire
// adds to its libraries.
//
// With -copy the streams also copy every byte they are given, once, into
// a reused 4 MiB buffer, and compute the CRC-32C of every byte: the
// least a Kafka dissector adds to the libraries in the one-line mode (a
// frame must be contiguous to be decoded, and a record batch's CRC
// covers all its bytes), without any framing, decoding or bookkeeping.

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	gpr "github.com/gopacket/gopacket/reassembly"
)

// gopacketTotals are what the -gopacket floor counted.
type gopacketTotals struct {
	packets, tcp int64
	streams      int64
	bytes        int64 // reassembled payload bytes, both directions
	// With -copy: the bytes copied into buf (at off, wrapping) and their
	// CRC-32C (Castagnoli) as one sequence.
	copy bool
	buf  []byte
	off  int
	crc  uint32
}

// copyBuf is the size of -copy's buffer: about twice the largest frames
// of the benchmark captures.
const copyBuf = 4 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// gopacketFloor reads path with pcapgo and gopacket's assembler alone
// (and with copy, copies and checksums every reassembled byte).
func gopacketFloor(path string, copy bool) (gopacketTotals, error) {
	t := gopacketTotals{copy: copy}
	if copy {
		t.buf = make([]byte, copyBuf)
	}
	f, err := os.Open(path)
	if err != nil {
		return t, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var src interface {
		ZeroCopyReadPacketData() ([]byte, gopacket.CaptureInfo, error)
		LinkType() layers.LinkType
	}
	if magic, err := br.Peek(4); err == nil && string(magic) == "\x0a\x0d\x0d\x0a" {
		r, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			return t, err
		}
		src = r
	} else {
		r, err := pcapgo.NewReader(br)
		if err != nil {
			return t, err
		}
		src = r
	}
	var (
		eth     layers.Ethernet
		sll     layers.LinuxSLL
		ip4     layers.IPv4
		ip6     layers.IPv6
		tcp     layers.TCP
		decoded []gopacket.LayerType
	)
	var first gopacket.LayerType
	switch src.LinkType() {
	case layers.LinkTypeEthernet:
		first = layers.LayerTypeEthernet
	case layers.LinkTypeLinuxSLL:
		first = layers.LayerTypeLinuxSLL
	case layers.LinkTypeRaw, layers.LinkTypeIPv4:
		first = layers.LayerTypeIPv4
	case layers.LinkTypeIPv6:
		first = layers.LayerTypeIPv6
	default:
		return t, fmt.Errorf("-gopacket reads Ethernet, Linux cooked and raw IP captures, not link type %v", src.LinkType())
	}
	parser := gopacket.NewDecodingLayerParser(first, &eth, &sll, &ip4, &ip6, &tcp)
	parser.IgnoreUnsupported = true
	factory := &countFactory{t: &t}
	asm := gpr.NewAssembler(gpr.NewStreamPool(factory))
	var ctx countCtx
	for {
		data, ci, err := src.ZeroCopyReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			asm.FlushAll()
			return t, err
		}
		t.packets++
		if err := parser.DecodeLayers(data, &decoded); err != nil && len(decoded) == 0 {
			continue
		}
		var flow gopacket.Flow
		hasTCP := false
		for _, l := range decoded {
			switch l {
			case layers.LayerTypeIPv4:
				flow = ip4.NetworkFlow()
			case layers.LayerTypeIPv6:
				flow = ip6.NetworkFlow()
			case layers.LayerTypeTCP:
				hasTCP = true
			}
		}
		if !hasTCP {
			continue
		}
		t.tcp++
		ctx.ci = ci
		asm.AssembleWithContext(flow, &tcp, &ctx)
	}
	asm.FlushAll()
	return t, nil
}

// countCtx is the assembler context of a packet: its capture info.
type countCtx struct{ ci gopacket.CaptureInfo }

func (c *countCtx) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

// countFactory makes streams that count the bytes they are given.
type countFactory struct{ t *gopacketTotals }

func (f *countFactory) New(_, _ gopacket.Flow, _ *layers.TCP, _ gpr.AssemblerContext) gpr.Stream {
	f.t.streams++
	return &countStream{t: f.t}
}

type countStream struct{ t *gopacketTotals }

func (s *countStream) Accept(*layers.TCP, gopacket.CaptureInfo, gpr.TCPFlowDirection, gpr.Sequence, *bool, gpr.AssemblerContext) bool {
	return true
}

func (s *countStream) ReassembledSG(sg gpr.ScatterGather, _ gpr.AssemblerContext) {
	n, _ := sg.Lengths()
	s.t.bytes += int64(n)
	if s.t.copy && n > 0 {
		s.t.take(sg.Fetch(n))
	}
}

// take copies b into t.buf (wrapping around) and adds the copy to t.crc.
func (t *gopacketTotals) take(b []byte) {
	for len(b) > 0 {
		if t.off == len(t.buf) {
			t.off = 0
		}
		k := copy(t.buf[t.off:], b)
		t.crc = crc32.Update(t.crc, castagnoli, t.buf[t.off:t.off+k])
		t.off += k
		b = b[k:]
	}
}

func (s *countStream) ReassemblyComplete(gpr.AssemblerContext) bool { return true }

// printGopacket writes one file's line for -gopacket.
func printGopacket(w io.Writer, path string, t gopacketTotals) {
	fmt.Fprintf(w, "%s: %d packets, %d TCP, %d streams, %d bytes", path, t.packets, t.tcp, t.streams, t.bytes)
	if t.copy {
		fmt.Fprintf(w, ", copied, CRC-32C %08x", t.crc)
	}
	fmt.Fprintln(w)
}
