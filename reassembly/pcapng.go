package reassembly

// pcapng files (draft-ietf-opsawg-pcapng): pcapgo.NgReader reads them,
// one block at a time from ngShim, which checks each block's framing and
// the lengths inside it before the reader sees it, takes the Decryption
// Secrets Blocks for Options.Secrets, and keeps from the reader the
// blocks kwire does not read (see capfile.go).

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pcapng block types (draft-ietf-opsawg-pcapng section 10.1).
const (
	blockSHB = 0x0A0D0D0A // the same in both byte orders
	blockIDB = 0x00000001
	blockPB  = 0x00000002 // obsolete Packet Block
	blockSPB = 0x00000003
	blockNRB = 0x00000004
	blockISB = 0x00000005
	blockEPB = 0x00000006
	blockDSB = 0x0000000A
)

const ngByteOrderMagic = 0x1A2B3C4D

// maxInterfaces bounds the interface descriptions of one section. The
// reader keeps each (pcapgo.NgInterface, with its name, description,
// filter and statistics: about 650 bytes, measured as 648 MB peak RSS for
// a section of 1,000,000 32-byte descriptions), and no budget flag counts
// them; a section's interfaces are what it captured on: one, a few for a
// multi-interface dumpcap, tens on a host with many virtual interfaces or
// in a mergecap of several captures. 4,096 is two orders of magnitude
// past that and keeps under 3 MB; a section that describes more is
// refused there as damaged (the packets before it are read).
const maxInterfaces = 4096

// blockName names a block type in messages.
func blockName(t uint32) string {
	switch t {
	case blockSHB:
		return "a section header block"
	case blockIDB:
		return "an interface description block"
	case blockPB:
		return "a packet block"
	case blockSPB:
		return "a simple packet block"
	case blockNRB:
		return "a name resolution block"
	case blockISB:
		return "an interface statistics block"
	case blockEPB:
		return "an enhanced packet block"
	case blockDSB:
		return "a decryption secrets block"
	}
	return fmt.Sprintf("a block of type 0x%08x", t)
}

// ngFile is a pcapng file: pcapgo's reader over the shim.
type ngFile struct {
	shim ngShim
	r    *pcapgo.NgReader // nil when the file holds no section the reader knows
}

// ngShim hands pcapgo.NgReader the blocks it reads packets from (section
// headers, interface descriptions, the three packet blocks), one whole
// block at a time, from the input. It is the reader's only input. The
// other blocks are checked as well and not handed over: the reader would
// only skip them, except the name resolution and interface statistics
// blocks, which it parses and kwire does not use, and the Decryption
// Secrets Blocks, which it keeps to itself; the shim gives those to
// Options.Secrets.
type ngShim struct {
	s      *fileSource
	u      unitReader
	order  binary.ByteOrder // of the current section
	blocks int64            // blocks read
	// The block read last, for messages: its type, its offset, and the
	// length of its header in u.lead (8 bytes, 12 for a section header,
	// whose byte-order magic the shim reads first).
	typ uint32
	at  int64
	hl  int
	// skip: the section is of a version the format says to skip (the
	// reader skips it too: NgReaderOptions.SkipUnknownVersion).
	skip   bool
	ifaces []ngInterface // the section's interfaces, described so far
}

// ngInterface is what the shim keeps of an interface description.
type ngInterface struct {
	snaplen uint32
	// binExp, when binary, is the timestamp resolution 2^-binExp seconds
	// (if_tsresol); the shim hands the reader those timestamps in
	// nanoseconds (see ngShim.check).
	binExp uint8
	binary bool
}

// newPcapng opens pcapgo's reader, which reads the first section header.
func newPcapng(s *fileSource) (*ngFile, error) {
	f := &ngFile{shim: ngShim{s: s, order: binary.LittleEndian}}
	f.shim.u.next = f.shim.next
	// WantMixedLinkType: interfaces of one file may differ in link type
	// (FileInfo.LinkTypes lists them); the reader gives each packet's.
	r, err := pcapgo.NewNgReader(&f.shim.u, pcapgo.NgReaderOptions{WantMixedLinkType: true, SkipUnknownVersion: true})
	switch {
	case s.info.Err != nil:
		return nil, s.info.Err
	case err == io.EOF:
		// Sections of unknown versions only (counted as quirks): the
		// file ends before a packet could be read.
	case err != nil:
		return nil, s.corrupt("%s could not be read: pcapgo: %v", f.where(s), err)
	}
	f.r = r
	return f, nil
}

func (f *ngFile) next(s *fileSource) ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if f.r == nil {
		return nil, gopacket.CaptureInfo{}, 0, io.EOF
	}
	data, ci, opts, err := f.r.ZeroCopyReadPacketDataWithOptions()
	if err != nil {
		return nil, ci, 0, err
	}
	var link layers.LinkType
	if len(ci.AncillaryData) > 0 { // WantMixedLinkType's
		link, _ = ci.AncillaryData[0].(layers.LinkType)
	}
	ci.AncillaryData = nil
	written := f.r.SectionInfo().Application == CutApplication
	if written {
		ci.AncillaryData = inCutFile
	}
	for _, c := range opts.Comments {
		if m, ok := cutOf(c); ok {
			ci.AncillaryData = []any{&m} // a packet after a cut (CutComment)
			if written {
				ci.AncillaryData = append(ci.AncillaryData, cutFile{})
			}
			break
		}
	}
	if ci.CaptureLength > ci.Length {
		// The reader leaves it so; read as captured, as for pcap.
		s.quirk(QuirkCapLenAboveLen)
		ci.Length = ci.CaptureLength
	}
	return data, ci, link, nil
}

func (f *ngFile) where(s *fileSource) string {
	return fmt.Sprintf("block %d (%s, at %s)", f.shim.blocks, blockName(f.shim.typ), s.at(f.shim.at))
}

// next reads blocks until one to hand over, or an error.
func (g *ngShim) next() error {
	for {
		typ, body, at, err := g.block()
		if err != nil {
			return err
		}
		hand, err := g.check(typ, body, at)
		if err != nil || hand {
			return err
		}
	}
}

// block reads the next block whole and checks its framing: its type,
// its body (between the header and the trailing length; for a section
// header, after the byte-order magic), valid until the next call, and
// its offset. The block is made the unit to hand over.
func (g *ngShim) block() (typ uint32, body []byte, at int64, err error) {
	s := g.s
	at = s.in.off
	h, err := s.in.readOrEnd(8)
	if err == io.EOF && g.blocks > 0 {
		return 0, nil, at, io.EOF
	}
	n := g.blocks + 1
	if err != nil {
		return 0, nil, at, s.cut(err, "the file ends inside the header of block %d (at %s: %d of its 8 bytes are there)", n, s.at(at), len(h))
	}
	var hdr [12]byte
	hl := copy(hdr[:], h)
	typ = g.order.Uint32(hdr[0:4])
	if typ == blockSHB {
		bom, err := s.in.read(4)
		if err != nil {
			return 0, nil, at, s.cut(err, "the file ends inside the header of block %d, a section header block (at %s: %d of its 12 bytes are there)", n, s.at(at), 8+len(bom))
		}
		switch {
		case binary.LittleEndian.Uint32(bom) == ngByteOrderMagic:
			g.order = binary.LittleEndian
		case binary.BigEndian.Uint32(bom) == ngByteOrderMagic:
			g.order = binary.BigEndian
		default:
			return 0, nil, at, s.corrupt("block %d (a section header block, at %s) has the byte-order magic 0x%08x, which is neither byte order of 0x1a2b3c4d", n, s.at(at), binary.BigEndian.Uint32(bom))
		}
		hl += copy(hdr[8:], bom)
	}
	total := g.order.Uint32(hdr[4:8])
	name := blockName(typ)
	switch {
	case total < 12 || (typ == blockSHB && total < 28):
		return 0, nil, at, s.corrupt("block %d (%s, at %s) says it is %d bytes long, less than the block's fixed fields", n, name, s.at(at), total)
	case total%4 != 0:
		return 0, nil, at, s.corrupt("block %d (%s, at %s) says it is %d bytes long, not a multiple of 4", n, name, s.at(at), total)
	case total > maxBlock:
		return 0, nil, at, s.corrupt("block %d (%s, at %s) says it is %d bytes long, more than the %d MiB this reader takes for a block: the file is damaged from there", n, name, s.at(at), total, maxBlock>>20)
	}
	rest, err := s.in.read(int(total) - hl)
	if err != nil {
		got := int(s.in.off - at)
		return 0, nil, at, s.cut(err, "the file ends inside block %d, %s (at %s: %d of its %d bytes are there)", n, name, s.at(at), got, total)
	}
	if trail := g.order.Uint32(rest[len(rest)-4:]); trail != total {
		return 0, nil, at, s.corrupt("block %d (%s, at %s) says it is %d bytes long at its start and %d at its end: a block length is wrong, the file is damaged from there", n, name, s.at(at), total, trail)
	}
	g.blocks++
	g.typ, g.at, g.hl = typ, at, hl
	g.u.set(hdr[:hl], rest)
	return typ, rest[:len(rest)-4], at, nil
}

// check checks the lengths inside a block the way NgReader will read
// them (it reads on into the next block where they lie), corrects what
// the reader would get wrong, and says whether the reader is to be
// handed the block.
func (g *ngShim) check(typ uint32, body []byte, at int64) (hand bool, err error) {
	s := g.s
	bad := func(format string, args ...any) error {
		return s.corrupt("block %d (%s, at %s) "+format, append([]any{g.blocks, blockName(typ), s.at(at)}, args...)...)
	}
	if typ == blockSHB {
		major, minor := g.order.Uint16(body[0:2]), g.order.Uint16(body[2:4])
		g.ifaces = g.ifaces[:0]
		g.skip = major != 1
		if g.skip {
			s.quirkAt(QuirkUnknownSection, s.info.Packets)
			return true, nil
		}
		if err := g.options(body, 12, nil); err != nil {
			return false, bad("%v", err)
		}
		if minor != 0 {
			// NgReader skips every section but 1.0's. A minor version
			// only adds to the format (1.2 files exist, written by old
			// tools; Wireshark reads them): to the reader it is 1.0.
			g.order.PutUint16(g.u.own(g.hl, 4)[2:4], 0)
		}
		return true, nil
	}
	if g.skip {
		return false, nil // the reader skips the section: nothing of it is handed over
	}
	switch typ {
	case blockIDB:
		if len(body) < 8 {
			return false, bad("is too short for an interface description (%d bytes)", len(body))
		}
		if len(g.ifaces) >= maxInterfaces {
			return false, bad("describes interface %d of its section, more than the %d a section may have here (captures have a few, tens at most): the file is damaged from there", len(g.ifaces), maxInterfaces)
		}
		ifc := ngInterface{snaplen: g.order.Uint32(body[4:8])}
		if err := g.options(body, 8, func(code uint16, v []byte, off int) error {
			if code != 9 || len(v) < 1 { // if_tsresol
				return nil
			}
			ifc.binary, ifc.binExp = v[0]&0x80 != 0, v[0]&0x7F
			if (ifc.binary && ifc.binExp > 63) || (!ifc.binary && ifc.binExp > 19) {
				base := 10
				if ifc.binary {
					base = 2
				}
				return fmt.Errorf("gives a timestamp resolution of %d^-%d seconds, finer than 64-bit timestamps can count", base, ifc.binExp)
			}
			if ifc.binary {
				// NgReader scales binary fractions by a whole number of
				// nanoseconds per unit (953 for 2^-20 s, 1 for 2^-30 s:
				// times up to 7% of a second off); its decimal
				// resolutions are exact. The shim hands the reader this
				// interface's timestamps in nanoseconds.
				g.u.own(g.hl, off+1)[off] = 9
			}
			return nil
		}); err != nil {
			return false, bad("%v", err)
		}
		g.ifaces = append(g.ifaces, ifc)
	case blockEPB, blockPB:
		if len(body) < 20 {
			return false, bad("is too short for a packet (%d bytes)", len(body))
		}
		var id uint32
		if typ == blockEPB {
			id = g.order.Uint32(body[0:4])
		} else {
			id = uint32(g.order.Uint16(body[0:2]))
		}
		caplen := g.order.Uint32(body[12:16])
		if room := uint32(len(body) - 20); caplen > room {
			return false, bad("says its packet holds %d bytes, but the block has room for %d: a length is wrong, the file is damaged from there", caplen, room)
		}
		if int(id) >= len(g.ifaces) {
			return false, bad("holds a packet of interface %d, but the section has described %d interface%s", id, len(g.ifaces), plural(len(g.ifaces)))
		}
		if typ == blockEPB { // the reader reads an enhanced packet block's options
			if err := g.options(body, 20+int(caplen+3)&^3, nil); err != nil {
				return false, bad("%v", err)
			}
		}
		if ifc := g.ifaces[id]; ifc.binary {
			b := g.u.own(g.hl, 12)
			ts := uint64(g.order.Uint32(b[4:8]))<<32 | uint64(g.order.Uint32(b[8:12]))
			ns := binaryNanos(ts, ifc.binExp)
			g.order.PutUint32(b[4:8], uint32(ns>>32))
			g.order.PutUint32(b[8:12], uint32(ns))
		}
	case blockSPB:
		if len(body) < 4 {
			return false, bad("is too short for a packet (%d bytes)", len(body))
		}
		if len(g.ifaces) == 0 {
			return false, bad("holds a packet, but the section has described no interface")
		}
		// Its captured length is the original length cut to interface
		// 0's snap length (section 4.4), which the block must hold.
		length, snap := g.order.Uint32(body[0:4]), g.ifaces[0].snaplen
		caplen := length
		if snap != 0 {
			caplen = min(caplen, snap)
		}
		switch room := uint32(len(body) - 4); {
		case caplen <= room:
		case snap != 0:
			return false, bad("says its packet is %d bytes long, %d of them captured (the interface's snap length), but the block has room for %d: a length is wrong, the file is damaged from there", length, caplen, room)
		default:
			return false, bad("says its packet is %d bytes long, but the block has room for %d: a length is wrong, the file is damaged from there", length, room)
		}
	case blockDSB:
		if len(body) < 8 {
			return false, bad("is too short for decryption secrets (%d bytes)", len(body))
		}
		kind, size := g.order.Uint32(body[0:4]), g.order.Uint32(body[4:8])
		if size > uint32(len(body)-8) {
			return false, bad("says it holds %d bytes of secrets, but the block has room for %d", size, len(body)-8)
		}
		s.info.SecretsBlocks++
		if s.secrets != nil {
			s.secrets(DecryptionSecrets{File: s.file, Frames: s.info.Packets, Type: kind, Data: body[8 : 8+size]})
		}
		return false, nil
	default:
		// Name resolution, interface statistics, custom and unknown
		// blocks carry no packet.
		return false, nil
	}
	return true, nil
}

// options checks a block's options (draft-ietf-opsawg-pcapng section
// 3.5), from body[from:], the way NgReader reads them: each must end
// inside the block; opt_endofopt, or the end of the block, ends them.
// fn, when not nil, is called with each option's code, value and the
// value's offset in body. A malformed option list is an error in words.
func (g *ngShim) options(body []byte, from int, fn func(code uint16, v []byte, off int) error) error {
	for off := from; off+4 <= len(body); {
		code, n := g.order.Uint16(body[off:]), int(g.order.Uint16(body[off+2:]))
		if code == 0 { // opt_endofopt
			if n != 0 {
				// The reader fails on an opt_endofopt with a length,
				// which ends the options all the same.
				g.order.PutUint16(g.u.own(g.hl, off+4)[off+2:], 0)
			}
			return nil
		}
		end := off + 4 + (n+3)&^3
		if end > len(body) {
			return fmt.Errorf("has an option (code %d) of %d bytes that runs past the end of the block", code, n)
		}
		if fn != nil {
			if err := fn(code, body[off+4:off+4+n], off+4); err != nil {
				return err
			}
		}
		off = end
	}
	return nil
}

// binaryNanos converts a timestamp in units of 2^-exp seconds (exp at
// most 63) to nanoseconds, rounding down; a time past the year 2554
// becomes the largest.
func binaryNanos(ts uint64, exp uint8) uint64 {
	sec, frac := ts>>exp, ts&(1<<exp-1)
	hi, lo := bits.Mul64(frac, 1e9)
	ns := lo>>exp | hi<<(64-exp) // frac*1e9 < 2^(exp+30): the shift keeps it whole
	if sec > (math.MaxUint64-ns)/1e9 {
		return math.MaxUint64
	}
	return sec*1e9 + ns
}
