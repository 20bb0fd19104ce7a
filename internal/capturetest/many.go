package capturetest

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Multiply writes copies of an Ethernet/IPv4 capture's packets as one
// pcap file: copy i is shifted by i×spacing in time and its clients (the
// side whose port is not brokerPort) get the address 10.(i>>16).(i>>8).i+1
// (IPv4 and TCP checksums recomputed), so that the copies are distinct
// connections that overlap in time: a capture of many connections at
// once, as a busy broker sees, from a small one. Packets are written in
// time order (a merge of the copies); memory is the source's packets.
func Multiply(pkts []Packet, copies int, spacing time.Duration, brokerPort uint16, w io.Writer) error {
	pw := pcapgo.NewWriterNanos(w)
	if err := pw.WriteFileHeader(262144, layers.LinkTypeEthernet); err != nil {
		return err
	}
	if len(pkts) == 0 {
		return nil
	}
	h := &copyHeap{pkts: pkts, spacing: spacing}
	for i := range copies {
		h.items = append(h.items, copyPos{copy: i})
	}
	heap.Init(h)
	buf := make([]byte, 0, 65536)
	for h.Len() > 0 {
		top := h.items[0]
		p := pkts[top.next]
		buf = append(buf[:0], p.Data...)
		if err := rewriteClient(buf, top.copy, brokerPort); err != nil {
			return fmt.Errorf("packet %d: %w", top.next+1, err)
		}
		ci := gopacket.CaptureInfo{Timestamp: h.time(top), CaptureLength: len(buf), Length: p.Length}
		if err := pw.WritePacket(ci, buf); err != nil {
			return err
		}
		if top.next+1 < len(pkts) {
			h.items[0].next++
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return nil
}

type copyPos struct{ copy, next int }

type copyHeap struct {
	items   []copyPos
	pkts    []Packet
	spacing time.Duration
}

func (h *copyHeap) time(c copyPos) time.Time {
	return h.pkts[c.next].Time.Add(time.Duration(c.copy) * h.spacing)
}
func (h *copyHeap) Len() int { return len(h.items) }
func (h *copyHeap) Less(i, j int) bool {
	a, b := h.time(h.items[i]), h.time(h.items[j])
	if !a.Equal(b) {
		return a.Before(b)
	}
	return h.items[i].copy < h.items[j].copy
}
func (h *copyHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *copyHeap) Push(x any)    { h.items = append(h.items, x.(copyPos)) }
func (h *copyHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// rewriteClient gives the client side of an Ethernet/IPv4/TCP frame the
// address of copy i and fixes the checksums; other frames are left alone.
func rewriteClient(b []byte, i int, brokerPort uint16) error {
	if len(b) < 14+20 || binary.BigEndian.Uint16(b[12:]) != 0x0800 {
		return nil
	}
	ip := b[14:]
	ihl := int(ip[0]&15) * 4
	if ip[0]>>4 != 4 || ihl < 20 || len(ip) < ihl+20 || ip[9] != 6 {
		return nil
	}
	tcp := ip[ihl:]
	addr := [4]byte{10, byte(i >> 16), byte(i >> 8), byte(i) + 1}
	switch {
	case binary.BigEndian.Uint16(tcp[2:]) == brokerPort: // to the broker: the source is the client
		copy(ip[12:16], addr[:])
	case binary.BigEndian.Uint16(tcp[0:]) == brokerPort:
		copy(ip[16:20], addr[:])
	default:
		return nil
	}
	total := int(binary.BigEndian.Uint16(ip[2:]))
	if total > len(ip) || total < ihl {
		return fmt.Errorf("IP total length %d of %d bytes", total, len(ip))
	}
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], checksum(ip[:ihl]))
	seg := ip[ihl:total]
	if len(seg) < 18 {
		return nil
	}
	seg[16], seg[17] = 0, 0
	var pseudo uint32
	for _, a := range [][]byte{ip[12:14], ip[14:16], ip[16:18], ip[18:20]} {
		pseudo += uint32(binary.BigEndian.Uint16(a))
	}
	pseudo += 6 + uint32(len(seg))
	binary.BigEndian.PutUint16(seg[16:], checksumFrom(seg, pseudo))
	return nil
}

// checksumFrom is the Internet checksum (RFC 1071) of b, starting from
// sum (a pseudo-header's).
func checksumFrom(b []byte, sum uint32) uint16 {
	for len(b) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		sum += uint32(b[0]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
