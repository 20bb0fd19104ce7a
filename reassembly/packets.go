package reassembly

import (
	"context"
	"net/netip"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Packet is one captured packet as EachPacket gives it.
type Packet struct {
	// Frame is the packet's number as ReadFiles numbers it with the same
	// Options (1-based; through the merge with Merge, per file without
	// Merge or Concatenate); File the index of its file in the paths.
	Frame int64
	File  int
	// Data is the packet's captured bytes, valid only during the call;
	// CI its capture info; Link its link type.
	Data []byte
	CI   gopacket.CaptureInfo
	Link layers.LinkType
	// TCP says the packet is a TCP segment (tunnels opened, as the
	// reassembly opens them); Src and Dst are its endpoints, Flags the
	// TCP header's flags byte (FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10).
	// Fragment says it is an IP fragment: Src and Dst carry the addresses
	// (port 0).
	TCP, Fragment bool
	Src, Dst      netip.AddrPort
	Flags         uint8
	// Seq and Ack are a TCP segment's sequence and acknowledgement
	// numbers, Payload the bytes of payload its IP header declares (0
	// when its header is damaged).
	Seq     uint32
	Ack     uint32
	Payload int
}

// EachPacket reads the files as ReadFiles reads them with opts (Merge,
// Concatenate, PacketFilter; otherwise each file on its own) and calls fn
// with every packet, numbered as ReadFiles numbers them, without
// reassembling anything: a second pass over a capture that picks packets
// by what a first pass found (kwire read -w). fn's error, or ctx's, stops
// the reading and is returned, joined with the files' errors (as
// ReadFiles returns them).
func EachPacket(ctx context.Context, paths []string, opts Options, fn func(*Packet) error) error {
	var errs []error
	var fnFailed bool
	each := func(src PacketSource, file func() int) error {
		var p Packet
		d := decoded{tun: opts.tunnelConfig()}
		var frame int64
		var fnErr error
		err := eachPacket(ctx, opts.filtered(src), func(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) bool {
			frame++
			p = Packet{Frame: frame, File: file(), Data: data, CI: ci, Link: link}
			switch decodeFrame(link, data, &d) {
			case resTCP:
				if len(d.seg) >= 14 {
					p.TCP = true
					p.Src = netip.AddrPortFrom(addrOf(d.srcIP), be16(d.seg[0:2]))
					p.Dst = netip.AddrPortFrom(addrOf(d.dstIP), be16(d.seg[2:4]))
					p.Flags = d.seg[13]
					p.Seq, p.Ack = be32(d.seg[4:8]), be32(d.seg[8:12])
					if hl, res := tcpHeaderLen(d.seg, d.segLen); res == resTCP {
						p.Payload = d.segLen - hl
					}
				}
			case resFragment:
				p.Fragment = true
				p.Src = netip.AddrPortFrom(addrOf(d.srcIP), 0)
				p.Dst = netip.AddrPortFrom(addrOf(d.dstIP), 0)
			}
			fnErr = fn(&p)
			return fnErr == nil
		})
		if fnErr != nil {
			fnFailed = true
			return fnErr
		}
		return err
	}
	if opts.Concatenate || opts.Merge {
		m := &multiSource{opts: opts, paths: paths, infos: make([]FileInfo, len(paths)), merge: opts.Merge}
		err := each(m, m.current)
		m.close()
		errs = append(errs, m.errs...)
		if err != nil {
			errs = append(errs, err)
		}
		return joinErrors(errs)
	}
	for i, path := range paths {
		var info FileInfo
		src, err := openFile(path, &info, opts.sourceOptions(i))
		if err == nil {
			err = each(src, func() int { return i })
			src.Close()
		}
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil || fnFailed {
				break
			}
		}
	}
	return joinErrors(errs)
}

// addrOf is an IP address from 4 or 16 bytes.
func addrOf(b []byte) netip.Addr {
	a, _ := netip.AddrFromSlice(b)
	return a.Unmap()
}
