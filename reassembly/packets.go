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
	// TCP says the packet is a TCP segment the reassembly reads: tunnels
	// opened and IP fragments rebuilt as the reassembly does both, a
	// segment that came in fragments given under its last fragment's
	// frame (that packet's Data), a segment whose TCP header is damaged
	// not one. Src and Dst are its endpoints, Flags the TCP header's
	// flags byte (FIN 0x01, SYN 0x02, RST 0x04, ACK 0x10).
	TCP      bool
	Src, Dst netip.AddrPort
	Flags    uint8
	// Seq and Ack are a TCP segment's sequence and acknowledgement
	// numbers, Payload the bytes of payload its IP header declares (0
	// for a RST, whose payload is no stream data).
	Seq     uint32
	Ack     uint32
	Payload int
	// Fragments are, for a TCP segment that came in IP fragments, the
	// frame numbers of every one of them (those of a tunnel datagram it
	// was inside too), in increasing order, Frame the last: a cut file
	// that holds the segment holds them all. Nil for a segment that came
	// whole; valid only during the call.
	Fragments []int64
}

// EachPacket reads the files as ReadFiles reads them with opts (Merge,
// Concatenate, PacketFilter; otherwise each file on its own) and calls fn
// with every packet, numbered as ReadFiles numbers them, without
// reassembling TCP (IP fragments are rebuilt, as ReadFiles rebuilds them,
// to tell their segments): a second pass over a capture that picks
// packets by what a first pass found (kwire read -w). fn's error, or
// ctx's, stops the reading and is returned, joined with the files'
// errors (as ReadFiles returns them).
func EachPacket(ctx context.Context, paths []string, opts Options, fn func(*Packet) error) error {
	var errs []error
	var fnFailed bool
	bufferTimeout := opts.BufferTimeout
	if bufferTimeout <= 0 {
		bufferTimeout = DefaultBufferTimeout
	}
	each := func(src PacketSource, file func() int) error {
		var p Packet
		var pk pkt
		// The reassembly's decoder, configured as a reading's, so that
		// fragments are rebuilt (or given up) as the read rebuilt them.
		var d decoder
		d.configure(opts, bufferTimeout)
		d.keepFrames = true
		var fnErr error
		err := eachPacket(ctx, opts.filtered(src), func(data []byte, ci gopacket.CaptureInfo, link layers.LinkType) bool {
			tcp := d.decode(data, ci, link, &pk)
			p = Packet{Frame: d.frame, File: file(), Data: data, CI: ci, Link: link}
			if tcp {
				seg := pk.seg
				p.TCP = true
				p.Src = netip.AddrPortFrom(addrOf(pk.src), be16(seg[0:2]))
				p.Dst = netip.AddrPortFrom(addrOf(pk.dst), be16(seg[2:4]))
				p.Flags = seg[13]
				p.Seq, p.Ack = be32(seg[4:8]), be32(seg[8:12])
				p.Payload = pk.plen
				if len(d.frames) > 0 {
					p.Fragments = d.frames
				}
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
