package reassembly

// Reading the two capture file formats: classic pcap
// (draft-ietf-opsawg-pcap, "PCAP Capture File Format") and pcapng
// (draft-ietf-opsawg-pcapng, "PCAP Now Generic").
//
// These are small readers of our own rather than gopacket/pcapgo's,
// because pcapgo's classic reader takes a file cut right after a record
// header for a clean end (packets silently lost), refuses records whose
// captured length exceeds their original length and files of version
// 2.3 and older (libpcap and Wireshark read all three), and its pcapng
// reader trusts block lengths (a lying one makes it discard the rest of
// the file as one block), never checks the trailing copy of a block's
// length, and keeps Decryption Secrets Blocks to itself. Every problem
// here is located (record or block number, byte offset) and said in
// words, and no length from the file is allocated before its bytes are
// there.
//
// To accept a new writer quirk: add a Quirk, count it where the reader
// meets it (fileSource.quirk), and add a generated capture that shows it
// to quirks_test.go.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// Bounds of the capture file structure. Memory grows with the bytes that
// are really there, never with a length the file claims, so these only
// say what is taken for a damaged file.
const (
	// maxSnapLen is the snap length every capture tool stays within
	// (libpcap's and Wireshark's MAXIMUM_SNAPLEN, 256 KiB). A classic pcap
	// record may be longer only when the file's header says so.
	maxSnapLen = 262144
	// maxRecord bounds one packet record, whatever the header says: a
	// length above it is damage, not a packet (64 KiB is IP's limit; Linux
	// BIG TCP reaches 512 KiB).
	maxRecord = 64 << 20
	// maxBlock bounds one pcapng block (a packet block, or a Decryption
	// Secrets Block holding a key log).
	maxBlock = maxRecord + 1<<20
)

// Quirk is a departure from a capture format that the reader accepts, as
// libpcap and Wireshark do. FileInfo.Quirks counts them per file.
type Quirk uint8

// Quirks.
const (
	// QuirkCapLenAboveLen: records whose captured length exceeds their
	// length on the wire (some sniffers write the buffer they captured
	// into); they are read as captured.
	QuirkCapLenAboveLen Quirk = iota + 1
	// QuirkCapLenAboveSnapLen: records longer than the file's snap length
	// (dpkt and others do not truncate to the snap length they write);
	// they are read whole.
	QuirkCapLenAboveSnapLen
	// QuirkLengthsSwapped: records of a pcap file of version 2.3 or
	// older, whose writers swapped the captured and original lengths;
	// read with the lengths swapped back, as libpcap does.
	QuirkLengthsSwapped
	// QuirkUnknownSection: pcapng sections of a major version other
	// than 1, which the format says to skip: their packets are not read.
	QuirkUnknownSection
)

// String says what the quirk is, after a count of Unit: "20 packets
// say they captured more bytes than were on the wire; read as captured".
func (q Quirk) String() string {
	switch q {
	case QuirkCapLenAboveLen:
		return "say they captured more bytes than were on the wire; read as captured"
	case QuirkCapLenAboveSnapLen:
		return "are longer than the file's snap length; read whole"
	case QuirkLengthsSwapped:
		return "have their captured and original lengths swapped (pcap before version 2.4); read swapped back"
	case QuirkUnknownSection:
		return "are of a pcapng version this reader does not know (major version other than 1): skipped, their packets are not read"
	}
	return fmt.Sprintf("have quirk %d", uint8(q))
}

// Unit is what a quirk counts: "packet" or "section".
func (q Quirk) Unit() string {
	if q == QuirkUnknownSection {
		return "section"
	}
	return "packet"
}

// Lost reports whether packets under the quirk are not read.
func (q Quirk) Lost() bool { return q == QuirkUnknownSection }

// QuirkCount counts one quirk in a file.
type QuirkCount struct {
	Quirk Quirk
	Count int64 // records (sections for QuirkUnknownSection)
	// First is the frame number of the first packet with the quirk, or
	// for a section, the number of packets read before it.
	First int64
}

// Decryption secrets types of the pcapng Decryption Secrets Block
// (draft-ietf-opsawg-pcapng section 4.7).
const (
	SecretsTLSKeyLog uint32 = 0x544c534b // "TLSK": an NSS key log (SSLKEYLOGFILE lines)
	SecretsWireGuard uint32 = 0x57474b4c // "WGKL"
	SecretsZigBeeNWK uint32 = 0x5a4e574b // "ZNWK"
	SecretsZigBeeAPS uint32 = 0x5a415053 // "ZAPS"
	SecretsOPCUA     uint32 = 0x55414b4c // "UAKL"
	SecretsSSH       uint32 = 0x5353484b // "SSHK"
)

// DecryptionSecrets is the content of one pcapng Decryption Secrets Block
// (draft-ietf-opsawg-pcapng section 4.7), handed to Options.Secrets.
type DecryptionSecrets struct {
	// File is the index of the file in the paths given to ReadFiles.
	File int
	// Frames is the number of packets of the file read before the block:
	// the secrets apply to the frames after it (they usually come first).
	Frames int64
	// Type is the secrets type, e.g. SecretsTLSKeyLog.
	Type uint32
	// Data is the secrets as written (for SecretsTLSKeyLog, key log
	// lines); it belongs to the callee.
	Data []byte
}

// input is the (decompressed) byte stream of a capture file. Its offset
// counts the bytes consumed, for messages.
type input struct {
	r   *bufio.Reader
	off int64
	big []byte // the bytes of a record longer than r's buffer
}

// read returns the next n bytes, valid until the next call. When the
// stream ends first it returns the bytes there were and
// io.ErrUnexpectedEOF; a read error (a decompressor's) is returned as it
// is, with the bytes before it.
func (in *input) read(n int) ([]byte, error) {
	if n <= in.r.Size() {
		b, err := in.r.Peek(n)
		in.r.Discard(len(b))
		in.off += int64(len(b))
		if len(b) < n {
			return b, short(err)
		}
		return b, nil
	}
	// Longer than the buffer: gather the bytes as they come, so that a
	// length the file lies about costs only the bytes that are there.
	in.big = in.big[:0]
	for len(in.big) < n {
		chunk := min(n-len(in.big), 1<<20)
		in.big = slices.Grow(in.big, chunk)
		m, err := io.ReadFull(in.r, in.big[len(in.big):len(in.big)+chunk])
		in.big = in.big[:len(in.big)+m]
		in.off += int64(m)
		if err != nil {
			return in.big, short(err)
		}
	}
	return in.big, nil
}

// readOrEnd is read where the stream may end cleanly: it returns io.EOF
// when no byte is left.
func (in *input) readOrEnd(n int) ([]byte, error) {
	b, err := in.read(n)
	if len(b) == 0 && err == io.ErrUnexpectedEOF {
		return nil, io.EOF
	}
	return b, err
}

// short is the error of a read that got fewer bytes than it needed.
func short(err error) error {
	if err == nil || err == io.EOF || err == bufio.ErrBufferFull {
		return io.ErrUnexpectedEOF
	}
	return err
}

// recordReader reads the packets of one capture format.
type recordReader interface {
	next(s *fileSource) ([]byte, gopacket.CaptureInfo, layers.LinkType, error)
}

// Errors returned by recordReader.next are made by fileSource.cut and
// fileSource.corrupt; both are *FileError.

// --- classic pcap ---

// pcapReader reads a classic pcap file after its 24-byte header.
type pcapReader struct {
	order   binary.ByteOrder
	nano    bool // nanosecond timestamps (magic a1b23c4d)
	snaplen uint32
	link    layers.LinkType
	swapped int8 // 1: lengths swapped (version < 2.3), 2: swapped when caplen > len (2.3)
	records int64
}

// newPcapReader reads the file header.
func newPcapReader(s *fileSource, magic uint32) (*pcapReader, error) {
	h, err := s.in.read(24)
	if err != nil {
		return nil, s.cut(err, "the file ends inside its %d-byte pcap file header (%d bytes are there)", 24, len(h))
	}
	p := &pcapReader{order: binary.LittleEndian}
	switch magic {
	case magicPcapMicroBE, magicPcapNanoBE:
		p.order = binary.BigEndian
	}
	p.nano = magic == magicPcapNanoLE || magic == magicPcapNanoBE
	major, minor := p.order.Uint16(h[4:6]), p.order.Uint16(h[6:8])
	if major != 2 {
		return nil, s.notCapture(fmt.Errorf("pcap version %d.%d: only version 2 exists", major, minor))
	}
	switch {
	case minor < 3:
		p.swapped = 1
	case minor == 3:
		p.swapped = 2
	}
	p.snaplen = p.order.Uint32(h[16:20])
	// The link type is the low 16 bits; bits 26-31 may say that frames
	// end with a frame check sequence, which the IP header's length
	// leaves out anyway.
	p.link = layers.LinkType(p.order.Uint32(h[20:24]) & 0xFFFF)
	return p, nil
}

func (p *pcapReader) next(s *fileSource) ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	var ci gopacket.CaptureInfo
	at := s.in.off
	h, err := s.in.readOrEnd(16)
	if err == io.EOF {
		return nil, ci, 0, io.EOF
	}
	rec := p.records + 1
	if err != nil {
		return nil, ci, 0, s.cut(err, "the file ends inside the header of packet record %d (at %s: %d of its 16 bytes are there)", rec, s.at(at), len(h))
	}
	sec, frac := p.order.Uint32(h[0:4]), p.order.Uint32(h[4:8])
	caplen, length := p.order.Uint32(h[8:12]), p.order.Uint32(h[12:16])
	if p.swapped == 1 || (p.swapped == 2 && caplen > length) {
		caplen, length = length, caplen
		s.quirk(QuirkLengthsSwapped)
	}
	limit := max(p.snaplen, maxSnapLen)
	if caplen > limit || caplen > maxRecord {
		return nil, ci, 0, s.corrupt("packet record %d (at %s) says it holds %d bytes, more than the file's snap length (%d) and the %d bytes capture tools write: the file is damaged from there",
			rec, s.at(at), caplen, p.snaplen, maxSnapLen)
	}
	if caplen > length {
		s.quirk(QuirkCapLenAboveLen)
		length = caplen
	}
	if p.snaplen != 0 && caplen > p.snaplen {
		s.quirk(QuirkCapLenAboveSnapLen)
	}
	data, err := s.in.read(int(caplen))
	if err != nil {
		return nil, ci, 0, s.cut(err, "the file ends inside packet record %d (at %s: %d of its %d bytes are there)", rec, s.at(at), 16+len(data), 16+caplen)
	}
	p.records++
	nsec := int64(frac)
	if !p.nano {
		nsec *= 1000
	}
	ci.Timestamp = time.Unix(int64(sec), nsec).UTC()
	ci.CaptureLength = int(caplen)
	ci.Length = int(length)
	return data, ci, p.link, nil
}

// --- pcapng ---

// pcapng block types (draft-ietf-opsawg-pcapng section 10.1).
const (
	blockSHB = 0x0A0D0D0A
	blockIDB = 0x00000001
	blockPB  = 0x00000002 // obsolete Packet Block
	blockSPB = 0x00000003
	blockNRB = 0x00000004
	blockISB = 0x00000005
	blockEPB = 0x00000006
	blockDSB = 0x0000000A
)

const ngByteOrderMagic = 0x1A2B3C4D

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

// ngInterface is what the reader keeps of an interface description.
type ngInterface struct {
	link    layers.LinkType
	snaplen uint32
	// A timestamp counts units of 10^-exp seconds (2^-exp when binary),
	// plus offset seconds (if_tsresol, if_tsoffset).
	exp    uint8
	binary bool
	offset int64
}

// ngReader reads a pcapng file block by block.
type ngReader struct {
	order  binary.ByteOrder
	ifaces []ngInterface
	blocks int64
	skip   bool // inside a section of an unknown version
}

func newNgReader() *ngReader { return &ngReader{order: binary.LittleEndian} }

// block reads the next block: its type, its body (between the length
// fields, valid until the next call), its number and its offset.
func (r *ngReader) block(s *fileSource) (typ uint32, body []byte, at int64, err error) {
	at = s.in.off
	h, err := s.in.readOrEnd(8)
	if err == io.EOF && r.blocks > 0 {
		return 0, nil, at, io.EOF
	}
	n := r.blocks + 1
	if err != nil {
		return 0, nil, at, s.cut(err, "the file ends inside the header of block %d (at %s: %d of its 8 bytes are there)", n, s.at(at), len(h))
	}
	typ = r.order.Uint32(h[0:4])
	var hdr [8]byte
	copy(hdr[:], h)
	if typ == blockSHB || binary.BigEndian.Uint32(hdr[0:4]) == blockSHB {
		typ = blockSHB
		bom, err := s.in.read(4)
		if err != nil {
			return 0, nil, at, s.cut(err, "the file ends inside the header of block %d, a section header block (at %s: %d of its 12 bytes are there)", n, s.at(at), 8+len(bom))
		}
		switch {
		case binary.LittleEndian.Uint32(bom) == ngByteOrderMagic:
			r.order = binary.LittleEndian
		case binary.BigEndian.Uint32(bom) == ngByteOrderMagic:
			r.order = binary.BigEndian
		default:
			return 0, nil, at, s.corrupt("block %d (a section header block, at %s) has the byte-order magic 0x%08x, which is neither byte order of 0x1a2b3c4d", n, s.at(at), binary.BigEndian.Uint32(bom))
		}
	}
	total := r.order.Uint32(hdr[4:8])
	name := blockName(typ)
	switch {
	case total < 12 || (typ == blockSHB && total < 28):
		return 0, nil, at, s.corrupt("block %d (%s, at %s) says it is %d bytes long, less than the block's fixed fields", n, name, s.at(at), total)
	case total%4 != 0:
		return 0, nil, at, s.corrupt("block %d (%s, at %s) says it is %d bytes long, not a multiple of 4", n, name, s.at(at), total)
	case total > maxBlock:
		return 0, nil, at, s.corrupt("block %d (%s, at %s) says it is %d bytes long, more than the %d MiB this reader takes for a block: the file is damaged from there", n, name, s.at(at), total, maxBlock>>20)
	}
	rest := int(total) - 8
	if typ == blockSHB {
		rest -= 4
	}
	b, err := s.in.read(rest)
	if err != nil {
		got := int(s.in.off - at)
		return 0, nil, at, s.cut(err, "the file ends inside block %d, %s (at %s: %d of its %d bytes are there)", n, name, s.at(at), got, total)
	}
	if trail := r.order.Uint32(b[len(b)-4:]); trail != total {
		return 0, nil, at, s.corrupt("block %d (%s, at %s) says it is %d bytes long at its start and %d at its end: a block length is wrong, the file is damaged from there", n, name, s.at(at), total, trail)
	}
	r.blocks++
	return typ, b[:len(b)-4], at, nil
}

func (r *ngReader) next(s *fileSource) ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	var ci gopacket.CaptureInfo
	for {
		typ, body, at, err := r.block(s)
		if err != nil {
			return nil, ci, 0, err
		}
		n := r.blocks
		bad := func(format string, args ...any) error {
			return s.corrupt("block %d (%s, at %s) "+format, append([]any{n, blockName(typ), s.at(at)}, args...)...)
		}
		if typ == blockSHB {
			major, minor := r.order.Uint16(body[0:2]), r.order.Uint16(body[2:4])
			r.ifaces = r.ifaces[:0]
			r.skip = major != 1
			if r.skip {
				s.quirkAt(QuirkUnknownSection, s.info.Packets)
				_ = minor
			}
			continue
		}
		if r.skip {
			continue
		}
		switch typ {
		case blockIDB:
			if len(body) < 8 {
				return nil, ci, 0, bad("is too short for an interface description (%d bytes)", len(body))
			}
			ifc := ngInterface{link: layers.LinkType(r.order.Uint16(body[0:2])), snaplen: r.order.Uint32(body[4:8]), exp: 6}
			if err := r.options(body[8:], func(code uint16, v []byte) error {
				switch code {
				case 9: // if_tsresol
					if len(v) < 1 {
						return nil
					}
					ifc.binary, ifc.exp = v[0]&0x80 != 0, v[0]&0x7F
					if (ifc.binary && ifc.exp > 63) || (!ifc.binary && ifc.exp > 19) {
						base := 10
						if ifc.binary {
							base = 2
						}
						return fmt.Errorf("gives a timestamp resolution of %d^-%d seconds, finer than 64-bit timestamps can count", base, ifc.exp)
					}
				case 14: // if_tsoffset
					if len(v) >= 8 {
						ifc.offset = int64(r.order.Uint64(v))
					}
				}
				return nil
			}); err != nil {
				return nil, ci, 0, bad("%v", err)
			}
			r.ifaces = append(r.ifaces, ifc)
		case blockEPB, blockPB:
			if len(body) < 20 {
				return nil, ci, 0, bad("is too short for a packet (%d bytes)", len(body))
			}
			var id uint32
			if typ == blockEPB {
				id = r.order.Uint32(body[0:4])
			} else {
				id = uint32(r.order.Uint16(body[0:2]))
			}
			caplen, length := r.order.Uint32(body[12:16]), r.order.Uint32(body[16:20])
			if room := uint32(len(body) - 20); caplen > room {
				return nil, ci, 0, bad("says its packet holds %d bytes, but the block has room for %d: a length is wrong, the file is damaged from there", caplen, room)
			}
			if int(id) >= len(r.ifaces) {
				return nil, ci, 0, bad("holds a packet of interface %d, but the section has described %d interface%s", id, len(r.ifaces), plural(len(r.ifaces)))
			}
			ifc := &r.ifaces[id]
			ts := uint64(r.order.Uint32(body[4:8]))<<32 | uint64(r.order.Uint32(body[8:12]))
			ci.Timestamp = ifc.time(ts)
			if caplen > length {
				s.quirk(QuirkCapLenAboveLen)
				length = caplen
			}
			ci.CaptureLength, ci.Length, ci.InterfaceIndex = int(caplen), int(length), int(id)
			return body[20 : 20+caplen], ci, ifc.link, nil
		case blockSPB:
			if len(body) < 4 {
				return nil, ci, 0, bad("is too short for a packet (%d bytes)", len(body))
			}
			if len(r.ifaces) == 0 {
				return nil, ci, 0, bad("holds a packet, but the section has described no interface")
			}
			ifc := &r.ifaces[0]
			length := r.order.Uint32(body[0:4])
			caplen := min(length, uint32(len(body)-4))
			if ifc.snaplen != 0 {
				caplen = min(caplen, ifc.snaplen)
			}
			// A simple packet block has no timestamp.
			ci.Timestamp = time.Unix(0, 0).UTC()
			ci.CaptureLength, ci.Length = int(caplen), int(length)
			return body[4 : 4+caplen], ci, ifc.link, nil
		case blockDSB:
			if len(body) < 8 {
				return nil, ci, 0, bad("is too short for decryption secrets (%d bytes)", len(body))
			}
			kind, size := r.order.Uint32(body[0:4]), r.order.Uint32(body[4:8])
			if size > uint32(len(body)-8) {
				return nil, ci, 0, bad("says it holds %d bytes of secrets, but the block has room for %d", size, len(body)-8)
			}
			s.info.SecretsBlocks++
			if s.secrets != nil {
				s.secrets(DecryptionSecrets{File: s.file, Frames: s.info.Packets, Type: kind, Data: slices.Clone(body[8 : 8+size])})
			}
		default:
			// Name resolution, interface statistics, custom and unknown
			// blocks carry no packet.
		}
	}
}

// options walks a block's options (draft-ietf-opsawg-pcapng section
// 3.5), calling fn with each code and value. A malformed option list is
// an error in words.
func (r *ngReader) options(b []byte, fn func(code uint16, v []byte) error) error {
	for len(b) >= 4 {
		code, n := r.order.Uint16(b[0:2]), int(r.order.Uint16(b[2:4]))
		if code == 0 { // opt_endofopt
			return nil
		}
		padded := (n + 3) &^ 3
		if 4+padded > len(b) {
			if 4+n > len(b) {
				return fmt.Errorf("has an option (code %d) of %d bytes that runs past the end of the block", code, n)
			}
			padded = n // the last option's padding is missing: take it
		}
		if err := fn(code, b[4:4+n]); err != nil {
			return err
		}
		b = b[4+padded:]
	}
	return nil
}

// time converts a timestamp of the interface to a time.
func (ifc *ngInterface) time(ts uint64) time.Time {
	var sec, nsec uint64
	switch {
	case ifc.binary:
		sec = ts >> ifc.exp
		frac := ts & (1<<ifc.exp - 1)
		hi, lo := bits.Mul64(frac, 1e9)
		if ifc.exp > 0 {
			nsec = lo>>ifc.exp | hi<<(64-ifc.exp)
		}
	default:
		unit := pow10(ifc.exp)
		sec, nsec = ts/unit, ts%unit
		if ifc.exp <= 9 {
			nsec *= pow10(9 - ifc.exp)
		} else {
			nsec /= pow10(ifc.exp - 9)
		}
	}
	s := int64(min(sec, math.MaxInt64/2)) + ifc.offset
	return time.Unix(s, int64(nsec)).UTC()
}

func pow10(n uint8) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
