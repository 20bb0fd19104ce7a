package reassembly

// Classic pcap files (draft-ietf-opsawg-pcap): pcapgo.Reader reads them,
// one record at a time from pcapShim, which checks that each record is
// whole before the reader sees it and corrects the quirks libpcap reads
// and pcapgo refuses (see capfile.go).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pcapFile is a classic pcap file: pcapgo's reader over the shim.
type pcapFile struct {
	shim pcapShim
	r    *pcapgo.Reader
	link layers.LinkType
}

// pcapShim hands pcapgo.Reader the file header, then one whole record
// at a time (header and data), from the input. It is the reader's only
// input.
type pcapShim struct {
	s       *fileSource
	u       unitReader
	order   binary.ByteOrder
	snaplen uint32
	// swapped says how the file's writer placed the two lengths: 1, in
	// each other's place (versions before 2.3); 2, in each other's place
	// when the captured length is the larger (2.3: libpcap's rule, since
	// 2.3 writers differ).
	swapped int8
	records int64 // records handed over
	at      int64 // the offset of the last record read
	// joined is the header of a pcap file found where the next record
	// should be (files joined end to end), and its magic number: next
	// returns errJoined and the reader is opened again after it.
	joined      []byte
	joinedMagic uint32
}

// newPcap checks the 24-byte file header and opens pcapgo's reader on it.
func newPcap(s *fileSource, magic uint32) (*pcapFile, error) {
	h, err := s.in.read(24)
	if err != nil {
		return nil, s.cut(err, "the file ends inside its %d-byte pcap file header (%d bytes are there)", 24, len(h))
	}
	p := &pcapFile{shim: pcapShim{s: s}}
	if err := p.open(h, magic); err != nil {
		return nil, err
	}
	return p, nil
}

// open reads file header h (24 bytes, its magic number magic) and opens
// a pcapgo reader after it: for the file's first header, and again for
// each header of a file joined after it (pcapShim.joined).
func (p *pcapFile) open(h []byte, magic uint32) error {
	sh, s := &p.shim, p.shim.s
	sh.order, sh.swapped = binary.ByteOrder(binary.LittleEndian), 0
	switch magic {
	case magicPcapMicroBE, magicPcapNanoBE:
		sh.order = binary.BigEndian
	}
	major, minor := sh.order.Uint16(h[4:6]), sh.order.Uint16(h[6:8])
	switch {
	case major != 2:
		return s.notCapture(fmt.Errorf("pcap version %d.%d: only version 2 exists", major, minor))
	case minor > 4:
		// libpcap refuses them too: no such version was written.
		return s.notCapture(fmt.Errorf("pcap version %d.%d: versions 2.0 to 2.4 exist", major, minor))
	case minor < 3:
		sh.swapped = 1
	case minor == 3:
		sh.swapped = 2
	}
	sh.snaplen = sh.order.Uint32(h[16:20])
	sh.u.set(h, nil)
	// pcapgo reads version 2.4 only. The versions before differ in the
	// order of a record's two lengths alone, which the shim puts right
	// in each record header it hands over: to the reader the file is a
	// 2.4 file.
	sh.order.PutUint16(sh.u.lead[6:8], 4)
	sh.u.next, sh.u.err = sh.next, nil
	r, err := pcapgo.NewReader(&sh.u)
	if err != nil {
		if s.info.Err != nil {
			return s.info.Err
		}
		return s.notCapture(fmt.Errorf("pcapgo cannot read its header: %v", err))
	}
	// The link type is the low 16 bits (pcapgo keeps those); bits 26-31
	// may say that frames end with a frame check sequence, which the IP
	// header's length leaves out anyway.
	p.r, p.link = r, r.LinkType()
	return nil
}

// isPcapMagic reports whether m, read big-endian, is a classic pcap
// file's magic number in either byte order and time unit.
func isPcapMagic(m uint32) bool {
	switch m {
	case magicPcapMicroLE, magicPcapMicroBE, magicPcapNanoLE, magicPcapNanoBE:
		return true
	}
	return false
}

// errJoined is what the shim gives the reader when a pcap file header
// stands where a record's header should (pcapShim.joined).
var errJoined = errors.New("a pcap file header follows")

// joinedHeader reports whether the 24 bytes at h are the header of a
// pcap file joined after the one read (cat a.pcap b.pcap > c.pcap), and
// its magic number. A record header can begin with a magic number's
// bytes (a record stamped 2011-01-23 22:58:41 in seconds can), so the
// header must also say version 2.0 to 2.4 with the time zone and
// accuracy fields zero, as every writer sets them: read as a record,
// those eight bytes would be a record of no bytes, neither captured nor
// on the wire, which no writer writes.
func joinedHeader(h []byte) (uint32, bool) {
	magic := binary.BigEndian.Uint32(h)
	var order binary.ByteOrder = binary.LittleEndian
	switch magic {
	case magicPcapMicroLE, magicPcapNanoLE:
	case magicPcapMicroBE, magicPcapNanoBE:
		order = binary.BigEndian
	default:
		return 0, false
	}
	major, minor := order.Uint16(h[4:6]), order.Uint16(h[6:8])
	return magic, major == 2 && minor <= 4 && order.Uint64(h[8:16]) == 0
}

// next reads the next record, checks it and corrects its header, and
// makes it the unit to hand over.
func (sh *pcapShim) next() error {
	s := sh.s
	at := s.in.off
	h, err := s.in.readOrEnd(16)
	if err == io.EOF {
		return io.EOF
	}
	rec := sh.records + 1
	if err != nil {
		return s.cut(err, "the file ends inside the header of packet record %d (at %s: %d of its 16 bytes are there)", rec, s.at(at), len(h))
	}
	sh.u.set(h, nil) // copied: reading the data may move the input's buffer
	hdr := sh.u.lead
	if isPcapMagic(binary.BigEndian.Uint32(hdr)) {
		if more := s.in.peek(8); len(more) == 8 {
			h := append(append(make([]byte, 0, 24), hdr...), more...)
			if magic, ok := joinedHeader(h); ok {
				s.in.read(8)
				sh.joined, sh.joinedMagic = h, magic
				sh.u.lead = nil
				s.quirkAt(QuirkJoinedFiles, rec)
				return errJoined
			}
		}
	}
	caplen, length := sh.order.Uint32(hdr[8:12]), sh.order.Uint32(hdr[12:16])
	if sh.swapped == 1 || (sh.swapped == 2 && caplen > length) {
		caplen, length = length, caplen
		s.quirkAt(QuirkLengthsSwapped, rec)
	}
	limit := max(sh.snaplen, maxSnapLen) // what pcapgo takes, too
	if caplen > limit || caplen > maxRecord {
		return s.corrupt("packet record %d (at %s) says it holds %d bytes, more than the file's snap length (%d) and the %d bytes capture tools write: the file is damaged from there",
			rec, s.at(at), caplen, sh.snaplen, maxSnapLen)
	}
	if caplen > length {
		// pcapgo refuses such a record; libpcap and Wireshark read it
		// as captured, and so does the reader once the record says it
		// was as long on the wire.
		s.quirkAt(QuirkCapLenAboveLen, rec)
		length = caplen
	}
	if sh.snaplen != 0 && caplen > sh.snaplen {
		s.quirkAt(QuirkCapLenAboveSnapLen, rec) // pcapgo reads it whole
	}
	sh.order.PutUint32(hdr[8:12], caplen)
	sh.order.PutUint32(hdr[12:16], length)
	data, err := s.in.read(int(caplen))
	if err != nil {
		return s.cut(err, "the file ends inside packet record %d (at %s: %d of its %d bytes are there)", rec, s.at(at), 16+len(data), 16+caplen)
	}
	sh.u.tail = data
	sh.records, sh.at = rec, at
	return nil
}

func (p *pcapFile) next(*fileSource) ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	for {
		data, ci, err := p.r.ZeroCopyReadPacketData()
		if h := p.shim.joined; err != nil && h != nil {
			// Read on under the joined file's header: its byte order,
			// time unit, snap length and link type.
			p.shim.joined = nil
			if err := p.open(h, p.shim.joinedMagic); err != nil {
				return nil, ci, 0, err
			}
			continue
		}
		return data, ci, p.link, err
	}
}

func (p *pcapFile) where(s *fileSource) string {
	return fmt.Sprintf("packet record %d (at %s)", p.shim.records, s.at(p.shim.at))
}
