package reassembly

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

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
	pcap   *pcapgo.Reader
	ng     *pcapgo.NgReader
	last   layers.LinkType // avoids a slice search for the common case
	done   bool
}

// openFile opens path ("-" for standard input) and reads its header. The
// returned source is nil when the header could not be read; err is then a
// *FileError.
func openFile(path string, info *FileInfo, secrets func(uint32, []byte)) (*fileSource, error) {
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
	s, err := newFileSourceSecrets(path, rc, info, secrets)
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
	return newFileSourceSecrets(path, r, info, nil)
}

// newFileSourceSecrets is newFileSource; secrets, when not nil, gets a
// pcapng file's Decryption Secrets Blocks (Options.Secrets).
func newFileSourceSecrets(path string, r io.ReadCloser, info *FileInfo, secrets func(uint32, []byte)) (*fileSource, error) {
	fail := func(kind, err error) (*fileSource, error) {
		e := &FileError{Path: path, Kind: kind, Err: err}
		info.Err = e
		return nil, e
	}
	br := bufio.NewReaderSize(r, readBufferSize)
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
		s.pcap, err = pcapgo.NewReader(br)
		if err != nil {
			return fail(kindOf(err), err)
		}
	case magicPcapNG:
		info.Format = "pcapng"
		var in io.Reader = br
		if secrets != nil {
			in = &dsbTap{r: br, fn: secrets}
		}
		s.ng, err = pcapgo.NewNgReader(in, pcapgo.NgReaderOptions{
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
		data, ci, err = s.pcap.ZeroCopyReadPacketData()
		link = s.pcap.LinkType()
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
	paths   []string
	infos   []FileInfo
	secrets func(uint32, []byte)
	i       int
	cur     *fileSource
	errs    []error
}

func (m *multiSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	for {
		if m.cur == nil {
			if m.i >= len(m.paths) {
				return nil, gopacket.CaptureInfo{}, 0, io.EOF
			}
			s, err := openFile(m.paths[m.i], &m.infos[m.i], m.secrets)
			m.i++
			if err != nil {
				m.errs = append(m.errs, err)
				continue
			}
			m.cur = s
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

// readBufferSize is the read buffer of a capture file: large enough that
// reading costs few system calls.
const readBufferSize = 1 << 20
