// Package capturetest builds capture files for tests: it reads the
// packets of a golden capture (with gopacket/pcapgo's Reader on its own,
// without the checks kwire's reassembly puts in front of it), writes classic pcap and pcapng files with every block type
// and writer quirk, wraps packets in tunnels, re-frames them in other link
// types, compresses files, and records where each structural part of a
// written file lies, so that a test can cut or damage it at each one.
//
// It is test support: only _test.go files import it.
package capturetest

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
)

// Packet is one captured frame.
type Packet struct {
	Time   time.Time
	Data   []byte // the captured bytes
	Length int    // the length on the wire
}

// ReadPcap reads every packet of a classic pcap file with pcapgo.
func ReadPcap(path string) (link uint32, pkts []Packet, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return 0, nil, err
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err == io.EOF {
			return uint32(r.LinkType()), pkts, nil
		}
		if err != nil {
			return 0, nil, err
		}
		pkts = append(pkts, Packet{Time: ci.Timestamp, Data: data, Length: ci.Length})
	}
}

// Part is a structural part of a written file: a file header, a record
// header, a record's data, a block's header or the rest of a block.
type Part struct {
	What string // "file header", "record header", "record data", "block header", "block"
	// Block names the block's type as kwire's messages do ("an enhanced
	// packet block"), for pcapng.
	Block string
	// Index is the 1-based number of the record or block.
	Index    int
	Off, Len int
	// Packets counts the packets complete before the part.
	Packets int
	// Total is the record's or block's whole length (record: 16 + data).
	Total int
	// Packet is set on the part that completes a packet: a record's data,
	// the rest of a packet block.
	Packet bool
}

// File is a written capture with its parts.
type File struct {
	Bytes   []byte
	Parts   []Part
	Packets int
}

// PrefixPackets is the number of complete packets in the first n bytes.
func (f *File) PrefixPackets(n int) int {
	k := 0
	for _, p := range f.Parts {
		if p.Packet && p.Off+p.Len <= n {
			k++
		}
	}
	return k
}

// PcapOptions choose a classic pcap file's header and quirks.
type PcapOptions struct {
	Link      uint32
	BigEndian bool
	Nano      bool   // nanosecond timestamps (magic a1b23c4d)
	Snaplen   uint32 // 0 is written as 0
	Minor     uint16 // version minor; 0 means 4
	// SwapLengths writes each record's captured and original lengths in
	// each other's place, as writers of pcap 2.3 and before did.
	SwapLengths bool
}

// Pcap writes a classic pcap file. A packet's Length is written as its
// original length, whatever len(Data) is.
func Pcap(o PcapOptions, pkts []Packet) *File {
	var order binary.ByteOrder = binary.LittleEndian
	if o.BigEndian {
		order = binary.BigEndian
	}
	magic := uint32(0xa1b2c3d4)
	if o.Nano {
		magic = 0xa1b23c4d
	}
	minor := o.Minor
	if minor == 0 {
		minor = 4
	}
	f := &File{}
	h := make([]byte, 24)
	order.PutUint32(h[0:], magic)
	order.PutUint16(h[4:], 2)
	order.PutUint16(h[6:], minor)
	order.PutUint32(h[16:], o.Snaplen)
	order.PutUint32(h[20:], o.Link)
	f.Bytes = h
	f.Parts = append(f.Parts, Part{What: "file header", Off: 0, Len: 24, Total: 24})
	for i, p := range pkts {
		r := make([]byte, 16)
		frac := p.Time.Nanosecond()
		if !o.Nano {
			frac /= 1000
		}
		order.PutUint32(r[0:], uint32(p.Time.Unix()))
		order.PutUint32(r[4:], uint32(frac))
		caplen, length := uint32(len(p.Data)), uint32(p.Length)
		if o.SwapLengths {
			caplen, length = length, caplen
		}
		order.PutUint32(r[8:], caplen)
		order.PutUint32(r[12:], length)
		off := len(f.Bytes)
		f.Parts = append(f.Parts,
			Part{What: "record header", Index: i + 1, Off: off, Len: 16, Packets: i, Total: 16 + len(p.Data)},
			Part{What: "record data", Index: i + 1, Off: off + 16, Len: len(p.Data), Packets: i, Total: 16 + len(p.Data), Packet: true})
		f.Bytes = append(append(f.Bytes, r...), p.Data...)
	}
	f.Packets = len(pkts)
	return f
}

// Option is a pcapng option.
type Option struct {
	Code  uint16
	Value []byte
}

// Ng writes a pcapng file block by block.
type Ng struct {
	f     File
	order interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}
	blocks int
	// exp is each interface's timestamp resolution (10^-exp seconds).
	exp []uint8
}

// NewNg starts a pcapng file; its first block must be SHB.
func NewNg() *Ng { return &Ng{order: binary.LittleEndian} }

// SetOrder writes the following blocks in another byte order than their
// section's (to make a broken file).
func (w *Ng) SetOrder(bigEndian bool) {
	w.order = binary.LittleEndian
	if bigEndian {
		w.order = binary.BigEndian
	}
}

// Block names as kwire says them.
func blockName(t uint32) string {
	switch t {
	case 0x0A0D0D0A:
		return "a section header block"
	case 1:
		return "an interface description block"
	case 2:
		return "a packet block"
	case 3:
		return "a simple packet block"
	case 4:
		return "a name resolution block"
	case 5:
		return "an interface statistics block"
	case 6:
		return "an enhanced packet block"
	case 10:
		return "a decryption secrets block"
	}
	return fmt.Sprintf("a block of type 0x%08x", t)
}

func (w *Ng) options(opts []Option) []byte {
	if len(opts) == 0 {
		return nil
	}
	var b []byte
	for _, o := range opts {
		h := make([]byte, 4)
		w.order.PutUint16(h[0:], o.Code)
		w.order.PutUint16(h[2:], uint16(len(o.Value)))
		b = append(append(b, h...), pad(o.Value)...)
	}
	return append(b, 0, 0, 0, 0) // opt_endofopt
}

func pad(b []byte) []byte {
	out := append([]byte(nil), b...)
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	return out
}

// Raw writes a block of any type with the given body (padded to 4).
func (w *Ng) Raw(typ uint32, body []byte) { w.block(typ, pad(body), false) }

func (w *Ng) block(typ uint32, body []byte, packet bool) {
	total := 12 + len(body)
	b := make([]byte, 8, total)
	w.order.PutUint32(b[0:], typ)
	w.order.PutUint32(b[4:], uint32(total))
	b = append(b, body...)
	b = w.order.AppendUint32(b, uint32(total))
	w.blocks++
	off := len(w.f.Bytes)
	hl := 8
	if typ == 0x0A0D0D0A {
		hl = 12
	}
	name := blockName(typ)
	w.f.Parts = append(w.f.Parts,
		Part{What: "block header", Block: name, Index: w.blocks, Off: off, Len: hl, Packets: w.f.Packets, Total: total},
		Part{What: "block", Block: name, Index: w.blocks, Off: off + hl, Len: total - hl, Packets: w.f.Packets, Total: total, Packet: packet})
	w.f.Bytes = append(w.f.Bytes, b...)
	if packet {
		w.f.Packets++
	}
}

// SHB starts a section, in big-endian byte order if asked; later blocks
// use that order. The interfaces of the previous section are forgotten.
func (w *Ng) SHB(bigEndian bool, major uint16, opts ...Option) {
	w.SetOrder(bigEndian)
	w.exp = nil
	body := make([]byte, 16)
	w.order.PutUint32(body[0:], 0x1A2B3C4D)
	w.order.PutUint16(body[4:], major)
	w.order.PutUint16(body[6:], 0)
	binary.LittleEndian.PutUint64(body[8:], ^uint64(0)) // section length unknown
	body = append(body, w.options(opts)...)
	// The byte-order magic is part of the header for the parts.
	total := 12 + len(body)
	b := make([]byte, 8, total)
	w.order.PutUint32(b[0:], 0x0A0D0D0A)
	w.order.PutUint32(b[4:], uint32(total))
	b = append(b, body...)
	b = w.order.AppendUint32(b, uint32(total))
	w.blocks++
	off := len(w.f.Bytes)
	name := blockName(0x0A0D0D0A)
	w.f.Parts = append(w.f.Parts,
		Part{What: "block header", Block: name, Index: w.blocks, Off: off, Len: 12, Packets: w.f.Packets, Total: total},
		Part{What: "block", Block: name, Index: w.blocks, Off: off + 12, Len: total - 12, Packets: w.f.Packets, Total: total})
	w.f.Bytes = append(w.f.Bytes, b...)
}

// IDB describes an interface. exp is its timestamp resolution,
// 10^-exp seconds (written as if_tsresol unless it is 6).
func (w *Ng) IDB(link uint16, snaplen uint32, exp uint8, opts ...Option) {
	body := make([]byte, 8)
	w.order.PutUint16(body[0:], link)
	w.order.PutUint32(body[4:], snaplen)
	if exp != 6 {
		opts = append(opts, Option{Code: 9, Value: []byte{exp}})
	}
	w.exp = append(w.exp, exp)
	w.block(1, append(body, w.options(opts)...), false)
}

func (w *Ng) ts(iface int, t time.Time) uint64 {
	exp := uint8(6)
	if iface < len(w.exp) {
		exp = w.exp[iface]
	}
	u := uint64(1)
	for range exp {
		u *= 10
	}
	frac := uint64(t.Nanosecond())
	if exp <= 9 {
		for range 9 - exp {
			frac /= 10
		}
	}
	return uint64(t.Unix())*u + frac
}

// EPB writes an enhanced packet block.
func (w *Ng) EPB(iface int, p Packet, opts ...Option) {
	body := make([]byte, 20)
	ts := w.ts(iface, p.Time)
	w.order.PutUint32(body[0:], uint32(iface))
	w.order.PutUint32(body[4:], uint32(ts>>32))
	w.order.PutUint32(body[8:], uint32(ts))
	w.order.PutUint32(body[12:], uint32(len(p.Data)))
	w.order.PutUint32(body[16:], uint32(p.Length))
	body = append(append(body, pad(p.Data)...), w.options(opts)...)
	w.block(6, body, true)
}

// PB writes an obsolete packet block.
func (w *Ng) PB(iface int, p Packet) {
	body := make([]byte, 20)
	ts := w.ts(iface, p.Time)
	w.order.PutUint16(body[0:], uint16(iface))
	w.order.PutUint32(body[4:], uint32(ts>>32))
	w.order.PutUint32(body[8:], uint32(ts))
	w.order.PutUint32(body[12:], uint32(len(p.Data)))
	w.order.PutUint32(body[16:], uint32(p.Length))
	w.block(2, append(body, pad(p.Data)...), true)
}

// SPB writes a simple packet block (interface 0, no timestamp).
func (w *Ng) SPB(p Packet) {
	body := make([]byte, 4)
	w.order.PutUint32(body[0:], uint32(p.Length))
	w.block(3, append(body, pad(p.Data)...), true)
}

// DSB writes a decryption secrets block.
func (w *Ng) DSB(typ uint32, secrets []byte) {
	body := make([]byte, 8)
	w.order.PutUint32(body[0:], typ)
	w.order.PutUint32(body[4:], uint32(len(secrets)))
	w.block(10, append(body, pad(secrets)...), false)
}

// File returns the file written so far.
func (w *Ng) File() *File {
	f := w.f
	f.Bytes = append([]byte(nil), w.f.Bytes...)
	f.Parts = append([]Part(nil), w.f.Parts...)
	return &f
}

// Every writes a pcapng file of pkts with every block type: a section
// header with options, an interface with if_name and nanosecond
// timestamps, a name resolution block, a decryption secrets block (a TLS
// key log), a custom block and one of an unknown type, the packets in
// enhanced packet blocks (some with a comment option) with interface
// statistics after them, and from the middle on a second section in the
// other byte order whose packets alternate between obsolete packet
// blocks and simple packet blocks.
func Every(link uint16, pkts []Packet) *File {
	w := NewNg()
	w.SHB(false, 1, Option{Code: 4, Value: []byte("capturetest")})
	w.IDB(link, 262144, 9, Option{Code: 2, Value: []byte("lo")})
	w.Raw(4, []byte{1, 0, 8, 0, 127, 0, 0, 1, 'l', 'o', 'c', 'a', 'l', 'h', 'o', 's', 't', 0, 0, 0, 0, 0, 0, 0})
	// A well-formed NSS key log line (a 32-byte client random, a 48-byte
	// master secret) for no connection of the capture.
	w.DSB(0x544c534b, []byte("CLIENT_RANDOM "+strings.Repeat("00", 32)+" "+strings.Repeat("11", 48)+"\n"))
	w.Raw(0x00000BAD, []byte{0, 0, 0x7f, 0xfe, 'c', 'u', 's', 't', 'o', 'm'})
	w.Raw(0x00000042, []byte("a block type no one knows"))
	half := len(pkts) / 2
	for i, p := range pkts[:half] {
		if i%3 == 1 {
			w.EPB(0, p, Option{Code: 1, Value: []byte("comment")})
		} else {
			w.EPB(0, p)
		}
	}
	isb := make([]byte, 12)
	w.Raw(5, isb)
	w.SHB(true, 1)
	w.IDB(link, 0, 6)
	for i, p := range pkts[half:] {
		if i%2 == 0 {
			w.PB(0, p)
		} else {
			w.SPB(p)
		}
	}
	return w.File()
}
