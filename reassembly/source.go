package reassembly

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// PacketSource yields captured packets in capture order. It is how Run
// reads files (pcap, pcapng) and how a live capture (AF_PACKET) feeds the
// assembler.
type PacketSource interface {
	// ReadPacket returns the next packet: its captured bytes, valid only
	// until the next call; its capture info (Timestamp, CaptureLength, and
	// Length, the length on the wire); and the link type of its interface.
	// It returns io.EOF after the last packet. Any other error ends the
	// input; Run flushes what it has and returns the error.
	ReadPacket() (data []byte, ci gopacket.CaptureInfo, link layers.LinkType, err error)
}

// Errors of capture input. FileError wraps one of them; test with
// errors.Is.
var (
	// ErrNotCapture: the input is neither pcap nor pcapng (after
	// decompression, if it was gzip).
	ErrNotCapture = errors.New("not a pcap or pcapng file")
	// ErrTruncated: the input ends inside a packet record or block. Every
	// packet before it was delivered.
	ErrTruncated = errors.New("capture file truncated")
	// ErrCorrupt: a record or block header is inconsistent (a capture
	// length above the snap length, a bad block length, a bad gzip
	// checksum...). Every packet before it was delivered.
	ErrCorrupt = errors.New("corrupt capture file")
)

// FileError reports a problem with one capture file, with the number of
// packets read from it before the problem. errors.Is(err, ErrTruncated)
// (or ErrNotCapture, ErrCorrupt) tells the kind; the underlying cause, such
// as io.ErrUnexpectedEOF or an *os.PathError, is wrapped too.
type FileError struct {
	Path    string // as given; "-" is standard input
	Packets int64  // packets read from this file before the error
	Kind    error  // ErrNotCapture, ErrTruncated, ErrCorrupt, or nil (I/O error)
	Err     error  // the cause
}

func (e *FileError) Error() string {
	name := e.Path
	if name == "-" {
		name = "standard input"
	}
	switch e.Kind {
	case nil:
		return fmt.Sprintf("%s: %v", name, e.Err)
	case ErrNotCapture:
		return fmt.Sprintf("%s: %v (%v)", name, e.Kind, e.Err)
	}
	return fmt.Sprintf("%s: %v after packet %d: %v", name, e.Kind, e.Packets, e.Err)
}

// Unwrap returns the kind and the cause.
func (e *FileError) Unwrap() []error {
	if e.Kind == nil {
		return []error{e.Err}
	}
	return []error{e.Kind, e.Err}
}

// Capture file magic numbers (first four bytes), as read big-endian.
const (
	magicPcapMicroLE = 0xD4C3B2A1 // a1b2c3d4 written little-endian
	magicPcapMicroBE = 0xA1B2C3D4
	magicPcapNanoLE  = 0x4D3CB2A1
	magicPcapNanoBE  = 0xA1B23C4D
	magicPcapNG      = 0x0A0D0D0A // section header block type, either byte order
	magicModifiedLE  = 0x34CDB2A1 // Kuznetzov's modified pcap: not supported
	magicModifiedBE  = 0xA1B2CD34
	magicGzip        = 0x1F8B
)

// FileInfo describes one input file of ReadFiles.
type FileInfo struct {
	Path       string // as given to ReadFiles
	Format     string // "pcap" or "pcapng"; empty when the file could not be read
	Compressed bool   // the file was gzip-compressed
	Packets    int64  // packets read from it
	// LinkTypes lists the link types of its packets in order of first
	// appearance (pcapng files can mix interfaces).
	LinkTypes []layers.LinkType
	Err       error // the *FileError that ended it early, if any
}

// fileSource reads one pcap or pcapng file. It implements PacketSource.
type fileSource struct {
	info   *FileInfo
	closer io.Closer
	pcap   *pcapReader
	ng     *pcapgo.NgReader
	last   layers.LinkType // avoids a slice search for the common case
	done   bool
}

// openFile opens path ("-" for standard input) and reads its header. The
// returned source is nil when the header could not be read; err is then a
// *FileError.
func openFile(path string, info *FileInfo) (*fileSource, error) {
	info.Path = path
	var rc io.ReadCloser
	if path == "-" {
		rc = io.NopCloser(os.Stdin)
	} else {
		f, err := os.Open(path)
		if err != nil {
			e := &FileError{Path: path, Err: err}
			info.Err = e
			return nil, e
		}
		rc = f
	}
	s, err := newFileSource(path, rc, info)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return s, nil
}

// newFileSource detects the format of r by its magic number (never by the
// file name): gzip is unwrapped first, then pcap or pcapng is read. r need
// not be seekable.
func newFileSource(path string, r io.ReadCloser, info *FileInfo) (*fileSource, error) {
	fail := func(kind, err error) (*fileSource, error) {
		e := &FileError{Path: path, Kind: kind, Err: err}
		info.Err = e
		return nil, e
	}
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(4)
	if len(head) >= 2 && binary.BigEndian.Uint16(head) == magicGzip {
		zr, zerr := gzip.NewReader(br)
		if zerr != nil {
			return fail(ErrCorrupt, fmt.Errorf("gzip: %w", zerr))
		}
		info.Compressed = true
		br = bufio.NewReaderSize(zr, 1<<16)
		head, err = br.Peek(4)
	}
	if len(head) < 4 {
		if err == nil || err == io.EOF {
			return fail(ErrNotCapture, fmt.Errorf("only %d bytes", len(head)))
		}
		return fail(kindOf(err), err)
	}
	magic := binary.BigEndian.Uint32(head)
	s := &fileSource{info: info, closer: r}
	switch magic {
	case magicPcapMicroLE, magicPcapMicroBE, magicPcapNanoLE, magicPcapNanoBE:
		info.Format = "pcap"
		s.pcap, err = newPcapReader(br)
		if err != nil {
			return fail(kindOf(err), err)
		}
	case magicPcapNG:
		info.Format = "pcapng"
		s.ng, err = pcapgo.NewNgReader(br, pcapgo.NgReaderOptions{
			WantMixedLinkType:  true,
			SkipUnknownVersion: true,
		})
		if err != nil {
			return fail(kindOf(err), err)
		}
	case magicModifiedLE, magicModifiedBE:
		return fail(ErrNotCapture, fmt.Errorf("modified (Kuznetzov) pcap, magic 0x%08x, is not supported; convert it with editcap", magic))
	default:
		return fail(ErrNotCapture, fmt.Errorf("magic 0x%08x", magic))
	}
	return s, nil
}

// kindOf classifies a reader error.
func kindOf(err error) error {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return ErrTruncated
	case errors.Is(err, io.EOF):
		return ErrTruncated
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return nil
	}
	return ErrCorrupt
}

// ReadPacket implements PacketSource.
func (s *fileSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if s.done {
		return nil, gopacket.CaptureInfo{}, 0, io.EOF
	}
	var (
		data []byte
		ci   gopacket.CaptureInfo
		link layers.LinkType
		err  error
	)
	if s.pcap != nil {
		data, ci, err = s.pcap.read()
		link = s.pcap.link
	} else {
		data, ci, err = s.ng.ZeroCopyReadPacketData()
		if len(ci.AncillaryData) > 0 {
			link, _ = ci.AncillaryData[0].(layers.LinkType)
		}
	}
	if err != nil {
		s.done = true
		if err == io.EOF {
			return nil, ci, 0, io.EOF
		}
		e := &FileError{Path: s.info.Path, Packets: s.info.Packets, Kind: kindOf(err), Err: err}
		s.info.Err = e
		return nil, ci, 0, e
	}
	s.info.Packets++
	if link != s.last || len(s.info.LinkTypes) == 0 {
		s.last = link
		if !slices.Contains(s.info.LinkTypes, link) {
			s.info.LinkTypes = append(s.info.LinkTypes, link)
		}
	}
	return data, ci, link, nil
}

func (s *fileSource) Close() error {
	s.done = true
	return s.closer.Close()
}

// multiSource reads several files as one capture (Options.Concatenate).
// A file that fails is recorded in its FileInfo and skipped; reading goes on
// with the next file.
type multiSource struct {
	paths []string
	infos []FileInfo
	i     int
	cur   *fileSource
	errs  []error
	// For the pipeline: renew is given to the pcap files' readers, and
	// opened is called when a file is opened, before its first packet.
	renew  func([]byte) []byte
	opened func()
}

func (m *multiSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	for {
		if m.cur == nil {
			if m.i >= len(m.paths) {
				return nil, gopacket.CaptureInfo{}, 0, io.EOF
			}
			s, err := openFile(m.paths[m.i], &m.infos[m.i])
			m.i++
			if err != nil {
				m.errs = append(m.errs, err)
				continue
			}
			m.cur = s
			if s.pcap != nil {
				s.pcap.renew = m.renew
			}
			if m.opened != nil {
				m.opened()
			}
		}
		data, ci, link, err := m.cur.ReadPacket()
		if err == nil {
			return data, ci, link, nil
		}
		if err != io.EOF {
			m.errs = append(m.errs, err)
		}
		m.cur.Close()
		m.cur = nil
	}
}

func (m *multiSource) close() {
	if m.cur != nil {
		m.cur.Close()
		m.cur = nil
	}
}

// readBufferSize is the read buffer of a pcap file read synchronously:
// larger than the largest record read in place (pcapMaxRecord), and large
// enough that reading costs few system calls.
const readBufferSize = 1 << 20

// pcapMaxSnaplen is the capture length a pcap record may have whatever
// the file's snap length (libpcap's MAXIMUM_SNAPLEN), as
// gopacket/pcapgo's reader accepts.
const pcapMaxSnaplen = 262144

// pcapReader reads the records of a pcap file (the libpcap format: a
// 24-byte file header, then a 16-byte header before each packet) in
// place: a packet's bytes are a slice of the read buffer, valid until the
// next call. gopacket/pcapgo's Reader copies every packet twice; this
// reader accepts and rejects the same records, with the same errors.
type pcapReader struct {
	rd  io.Reader
	buf []byte // len(buf) == cap(buf); nil before the first read
	r   int    // start of the unread bytes
	w   int    // end of the bytes read
	err error  // the error that ended rd
	// renew, when set, gives the buffer to read on in when buf is used
	// up (the pipeline's batch buffers): the bytes of the packets read
	// from buf stay where they are.
	renew func(used []byte) []byte
	// records counts the records read from buf, to give it up after
	// maxRecords when renew is set (the batch's packet descriptors are
	// bounded too).
	records int
	order   binary.ByteOrder
	nanos   uint32 // factor from the timestamp's fraction to nanoseconds
	snaplen uint32
	link    layers.LinkType
	skip    int // bytes of the last packet, consumed at the next read
}

func newPcapReader(rd io.Reader) (*pcapReader, error) {
	var h [24]byte
	if _, err := io.ReadFull(rd, h[:]); err != nil {
		return nil, err
	}
	p := &pcapReader{rd: rd}
	switch binary.BigEndian.Uint32(h[0:4]) {
	case magicPcapMicroLE:
		p.order, p.nanos = binary.LittleEndian, 1000
	case magicPcapMicroBE:
		p.order, p.nanos = binary.BigEndian, 1000
	case magicPcapNanoLE:
		p.order, p.nanos = binary.LittleEndian, 1
	case magicPcapNanoBE:
		p.order, p.nanos = binary.BigEndian, 1
	default:
		return nil, fmt.Errorf("Unknown magic %x", binary.LittleEndian.Uint32(h[0:4]))
	}
	if v := p.order.Uint16(h[4:6]); v != 2 {
		return nil, fmt.Errorf("Unknown major version %d", v)
	}
	if v := p.order.Uint16(h[6:8]); v != 4 {
		return nil, fmt.Errorf("Unknown minor version %d", v)
	}
	p.snaplen = p.order.Uint32(h[16:20])
	p.link = layers.LinkType(p.order.Uint32(h[20:24]))
	return p, nil
}

// pcapMaxRecord is the longest record read in place: a record header and
// pcapMaxSnaplen bytes. Every buffer holds one.
const pcapMaxRecord = 16 + pcapMaxSnaplen

// ensure reads until n (at most pcapMaxRecord) unread bytes are
// buffered, or the input ends.
func (p *pcapReader) ensure(n int) bool {
	empty := 0
	for p.w-p.r < n {
		if p.err != nil {
			return false
		}
		if len(p.buf)-p.r < n {
			p.move()
		}
		to := len(p.buf)
		if p.renew != nil {
			// Read in steps, so that the bytes to move when the records
			// are many are few.
			to = min(to, max(p.w+pcapReadStep, p.r+n))
		}
		m, err := p.rd.Read(p.buf[p.w:to])
		p.w += m
		switch {
		case err != nil:
			p.err = err
		case m == 0:
			if empty++; empty >= 100 {
				p.err = io.ErrNoProgress
			}
		}
	}
	return true
}

// move moves the unread bytes to the start of a buffer: a new one from
// renew, when set, or the same one.
func (p *pcapReader) move() {
	nb := p.buf
	switch {
	case p.renew != nil:
		nb = p.renew(p.buf)
	case nb == nil:
		nb = make([]byte, readBufferSize)
	}
	nb = nb[:cap(nb)]
	copy(nb, p.buf[p.r:p.w])
	p.w -= p.r
	p.r = 0
	p.buf = nb
	p.records = 0
}

// Reading in place for the pipeline: at most pcapMaxRecords records per
// buffer, read pcapReadStep bytes at a time.
const (
	pcapMaxRecords = 512
	pcapReadStep   = 128 << 10
)

// read returns the next packet, io.EOF at the end of the file, or the
// error that ended it.
func (p *pcapReader) read() ([]byte, gopacket.CaptureInfo, error) {
	var ci gopacket.CaptureInfo
	p.r += p.skip
	p.skip = 0
	if p.renew != nil && p.records >= pcapMaxRecords {
		p.move()
	}
	if !p.ensure(16) {
		return nil, ci, shortRead(p.w-p.r, p.err)
	}
	h := p.buf[p.r : p.r+16]
	ci.Timestamp = time.Unix(int64(p.order.Uint32(h[0:4])), int64(p.order.Uint32(h[4:8])*p.nanos)).UTC()
	ci.CaptureLength = int(p.order.Uint32(h[8:12]))
	ci.Length = int(p.order.Uint32(h[12:16]))
	if ci.CaptureLength > max(int(p.snaplen), pcapMaxSnaplen) {
		return nil, ci, fmt.Errorf("capture length exceeds snap length: %d > %d", ci.CaptureLength, p.snaplen)
	}
	if ci.CaptureLength > ci.Length {
		return nil, ci, fmt.Errorf("capture length exceeds original packet length: %d > %d", ci.CaptureLength, ci.Length)
	}
	n := 16 + ci.CaptureLength
	if n > pcapMaxRecord {
		// Only with a snap length above libpcap's maximum: read it into
		// a buffer that grows with the bytes actually there.
		p.r += 16
		var b bytes.Buffer
		b.Grow(pcapMaxSnaplen)
		m, err := io.CopyN(&b, io.MultiReader(bytes.NewReader(p.buf[p.r:p.w]), p.errReader()), int64(ci.CaptureLength))
		p.r += min(int(m), p.w-p.r)
		if err == io.EOF && m > 0 {
			err = io.ErrUnexpectedEOF
		}
		return b.Bytes(), ci, err
	}
	if !p.ensure(n) {
		return nil, ci, shortRead(p.w-p.r-16, p.err)
	}
	data := p.buf[p.r+16 : p.r+n : p.r+n]
	p.skip = n
	p.records++
	return data, ci, nil
}

// errReader is rd, or its error once it failed.
func (p *pcapReader) errReader() io.Reader {
	if p.err != nil {
		return errorReader{p.err}
	}
	return p.rd
}

// errorReader is a reader that fails with err.
type errorReader struct{ err error }

func (r errorReader) Read([]byte) (int, error) { return 0, r.err }

// shortRead is io.ReadFull's error after n bytes and the reader's err.
func shortRead(n int, err error) error {
	switch {
	case err == io.EOF && n > 0:
		return io.ErrUnexpectedEOF
	case err == nil:
		return io.ErrUnexpectedEOF
	}
	return err
}
