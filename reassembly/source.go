package reassembly

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
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
	// decompression, if it was compressed).
	ErrNotCapture = errors.New("not a pcap or pcapng file")
	// ErrTruncated: the input ends inside a packet record or block, or
	// its compressed data is cut short. Every packet before it was
	// delivered.
	ErrTruncated = errors.New("capture file truncated")
	// ErrCorrupt: a record or block is inconsistent (a length that
	// cannot be, a bad block length, a bad checksum of the compressed
	// data...). Every packet before it was delivered.
	ErrCorrupt = errors.New("corrupt capture file")
	// ErrLimit: the compressed data needs a decompression window beyond
	// Options.MaxCaptureWindow. Every packet before it was delivered.
	ErrLimit = errors.New("capture file beyond a limit")
)

// FileError reports a problem with one capture file, with the number of
// packets read from it before the problem. errors.Is(err, ErrTruncated)
// (or ErrNotCapture, ErrCorrupt, ErrLimit) tells the kind; the
// underlying cause, such as io.ErrUnexpectedEOF, a decompressor's error
// or an *os.PathError, is wrapped too. Err's text says what happened and
// where (record or block number, byte offset) in words.
type FileError struct {
	Path    string // as given; "-" is standard input
	Packets int64  // packets read from this file before the error
	Kind    error  // ErrNotCapture, ErrTruncated, ErrCorrupt, ErrLimit, or nil (I/O error)
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
	if e.Packets == 0 {
		return fmt.Sprintf("%s: %v before its first packet: %v", name, e.Kind, e.Err)
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

// readError is a located problem in a capture file, in words; it wraps
// its cause (io.ErrUnexpectedEOF, a *codecError), if any.
type readError struct {
	msg   string
	cause error
}

func (e *readError) Error() string { return e.msg }
func (e *readError) Unwrap() error { return e.cause }

// Capture file magic numbers (first four bytes), as read big-endian.
const (
	magicPcapMicroLE = 0xD4C3B2A1 // a1b2c3d4 written little-endian
	magicPcapMicroBE = 0xA1B2C3D4
	magicPcapNanoLE  = 0x4D3CB2A1
	magicPcapNanoBE  = 0xA1B23C4D
	magicPcapNG      = 0x0A0D0D0A // section header block type, either byte order
	magicModifiedLE  = 0x34CDB2A1 // Kuznetzov's modified pcap: not supported
	magicModifiedBE  = 0xA1B2CD34
)

// FileInfo describes one input file of ReadFiles.
type FileInfo struct {
	Path   string // as given to ReadFiles
	Format string // "pcap" or "pcapng"; empty when the file could not be read
	// Compression names the codec the file was compressed with ("gzip",
	// "zstd", "xz", "bzip2", "lz4"), "" when it was not; Compressed is
	// Compression != "".
	Compression string
	Compressed  bool
	Packets     int64 // packets read from it
	// LinkTypes lists the link types of its packets in order of first
	// appearance (pcapng files can mix interfaces).
	LinkTypes []layers.LinkType
	// Quirks counts the departures from the format that were accepted
	// (see Quirk), in order of first appearance.
	Quirks []QuirkCount
	// SecretsBlocks counts pcapng Decryption Secrets Blocks (see
	// Options.Secrets).
	SecretsBlocks int
	Err           error // the *FileError that ended it early, if any
}

// fileSource reads one pcap or pcapng file. It implements PacketSource.
type fileSource struct {
	info    *FileInfo
	closer  io.Closer
	release func() // the decompressor's
	in      input
	rec     recordReader
	last    layers.LinkType // avoids a slice search for the common case
	done    bool
	file    int                     // Conn.File of the file (for DecryptionSecrets)
	secrets func(DecryptionSecrets) // Options.Secrets
}

// sourceOptions are what a fileSource takes from Options.
type sourceOptions struct {
	window int64 // MaxCaptureWindow
	// maxExpanded, when positive, ends a compressed input after that
	// many decompressed bytes: the fuzz targets' bound on bombs (a
	// 64 KiB zstd file can expand to gigabytes, which is a capture to
	// read, not a failure).
	maxExpanded int64
	file        int
	secrets     func(DecryptionSecrets)
}

func (o *Options) sourceOptions(file int) sourceOptions {
	w := o.MaxCaptureWindow
	if w <= 0 {
		w = DefaultMaxCaptureWindow
	}
	return sourceOptions{window: w, file: file, secrets: o.Secrets}
}

// openFile opens path ("-" for standard input) and reads its header. The
// returned source is nil when the header could not be read; err is then a
// *FileError.
func openFile(path string, info *FileInfo, opts sourceOptions) (*fileSource, error) {
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
	s, err := newFileSource(path, rc, info, opts)
	if err != nil {
		rc.Close()
		return nil, err
	}
	return s, nil
}

// bufferSize is the read buffer for r: readBufferSize, or less for an
// input known to be smaller (a small file, a byte slice).
func bufferSize(r io.Reader) int {
	size := int64(-1)
	switch v := r.(type) {
	case interface{ Stat() (os.FileInfo, error) }:
		if st, err := v.Stat(); err == nil && st.Mode().IsRegular() {
			size = st.Size()
		}
	case interface{ Len() int }:
		size = int64(v.Len())
	}
	if size < 0 || size >= readBufferSize {
		return readBufferSize
	}
	return max(int(size), 4096)
}

// newFileSource detects the format of r by its magic number (never by the
// file name): a compressed stream is unwrapped first, then pcap or pcapng
// is read. r need not be seekable.
func newFileSource(path string, r io.ReadCloser, info *FileInfo, opts sourceOptions) (*fileSource, error) {
	s := &fileSource{info: info, closer: r, release: func() {}, file: opts.file, secrets: opts.secrets}
	info.Path = path
	br := bufio.NewReaderSize(r, bufferSize(r))
	head, err := br.Peek(6)
	if codec := codecOf(head); codec != "" {
		info.Compression, info.Compressed = codec, true // by its magic, whether or not it opens
		zr, release, zerr := openCodec(codec, br, opts.window)
		if zerr != nil {
			return nil, s.fail(&FileError{Kind: (&codecError{codec: codec, err: zerr}).kind(),
				Err: &readError{msg: (&codecError{codec: codec, err: zerr}).text(), cause: zerr}})
		}
		s.release = release
		if opts.maxExpanded > 0 {
			zr = io.LimitReader(zr, opts.maxExpanded)
		}
		br = bufio.NewReaderSize(zr, readBufferSize)
		head, err = br.Peek(4)
	}
	s.in.r = br
	if len(head) < 4 {
		var ce *codecError
		switch {
		case errors.As(err, &ce):
			return nil, s.fail(&FileError{Kind: ce.kind(), Err: &readError{msg: ce.text(), cause: err}})
		case err == nil || err == io.EOF || err == bufio.ErrBufferFull:
			what := "the file"
			if info.Compressed {
				what = "its " + info.Compression + " data"
			}
			if len(head) == 0 {
				return nil, s.notCapture(errors.New(what + " is empty"))
			}
			return nil, s.notCapture(fmt.Errorf("%s holds only %d byte%s", what, len(head), plural(len(head))))
		}
		return nil, s.fail(&FileError{Err: err})
	}
	magic := binary.BigEndian.Uint32(head)
	switch magic {
	case magicPcapMicroLE, magicPcapMicroBE, magicPcapNanoLE, magicPcapNanoBE:
		info.Format = "pcap"
		p, err := newPcap(s, magic)
		if err != nil {
			return nil, err
		}
		s.rec = p
	case magicPcapNG:
		info.Format = "pcapng"
		g, err := newPcapng(s)
		if err != nil {
			return nil, err
		}
		s.rec = g
	case magicModifiedLE, magicModifiedBE:
		return nil, s.notCapture(fmt.Errorf("modified (Kuznetzov) pcap, magic 0x%08x, is not supported; convert it with editcap", magic))
	default:
		if info.Compressed {
			// Damaged compressed data can decompress to garbage before
			// its checksum fails: let the codec have its say first.
			var ce *codecError
			if _, perr := br.Peek(br.Size()); errors.As(perr, &ce) {
				return nil, s.fail(&FileError{Kind: ce.kind(), Err: &readError{msg: ce.text(), cause: perr}})
			}
			return nil, s.notCapture(fmt.Errorf("%s-compressed, then magic 0x%08x%s", info.Compression, magic, textHint(br)))
		}
		return nil, s.notCapture(fmt.Errorf("magic 0x%08x%s", magic, textHint(br)))
	}
	return s, nil
}

// textHint says, for input that is not a capture, that it starts with
// text when its first 8 bytes or more are printable ASCII (a log, a hex
// dump, a document given by mistake): ", which starts as text: \"...\"",
// those bytes quoted, at most 24; "" otherwise.
func textHint(br *bufio.Reader) string {
	head, _ := br.Peek(24)
	n := 0
	for n < len(head) && head[n] >= 0x20 && head[n] <= 0x7e {
		n++
	}
	if n < 8 {
		return "" // random bytes start with so many printable ones once in 3,000
	}
	return ", which starts as text: " + strconv.Quote(string(head[:n]))
}

// fail records e (a *FileError without its path and count) as the
// file's error and returns it.
func (s *fileSource) fail(e *FileError) error {
	e.Path, e.Packets = s.info.Path, s.info.Packets
	s.info.Err = e
	s.done = true
	return e
}

// Sniff names what a file starting with head is, by its magic number as
// the readers tell it: "pcap", "pcapng", a compression a capture may be
// in ("gzip-compressed", ...), or "" for none of these (head: at least
// its first 6 bytes, when it has them).
func Sniff(head []byte) string {
	if c := codecOf(head); c != "" {
		return c + "-compressed"
	}
	if len(head) < 4 {
		return ""
	}
	switch binary.BigEndian.Uint32(head) {
	case magicPcapMicroLE, magicPcapMicroBE, magicPcapNanoLE, magicPcapNanoBE, magicModifiedLE, magicModifiedBE:
		return "pcap"
	case magicPcapNG:
		return "pcapng"
	}
	return ""
}

func (s *fileSource) notCapture(err error) error {
	return s.fail(&FileError{Kind: ErrNotCapture, Err: err})
}

// at names a byte offset of the (decompressed) input in messages.
func (s *fileSource) at(off int64) string {
	if s.info.Compressed {
		return fmt.Sprintf("byte %d of the decompressed data", off)
	}
	return fmt.Sprintf("byte %d", off)
}

// cut reports that the input ended, or failed, where it should have
// held more: err is input.read's. The message gets the decompressor's
// reason when it has one.
func (s *fileSource) cut(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	var ce *codecError
	switch {
	case errors.As(err, &ce):
		kind := ce.kind()
		if kind == ErrTruncated {
			msg = strings.Replace(msg, "the file ends inside", "the "+ce.codec+" data ends inside", 1) + ": the compressed file was cut short"
		} else {
			msg = ce.text() + " (" + msg + ")"
		}
		return s.fail(&FileError{Kind: kind, Err: &readError{msg: msg, cause: err}})
	case err == io.ErrUnexpectedEOF:
		if s.info.Compressed {
			msg = strings.Replace(msg, "the file ends inside", "the decompressed data ends inside", 1)
		}
		return s.fail(&FileError{Kind: ErrTruncated, Err: &readError{msg: msg, cause: err}})
	}
	return s.fail(&FileError{Err: err}) // an I/O error, e.g. EIO: its own words
}

// corrupt reports an inconsistent record or block.
func (s *fileSource) corrupt(format string, args ...any) error {
	return s.fail(&FileError{Kind: ErrCorrupt, Err: &readError{msg: fmt.Sprintf(format, args...)}})
}

// quirk counts a quirk of the packet about to be delivered.
func (s *fileSource) quirk(q Quirk) { s.quirkAt(q, s.info.Packets+1) }

func (s *fileSource) quirkAt(q Quirk, first int64) {
	qs := s.info.Quirks
	for i := range qs {
		if qs[i].Quirk == q {
			qs[i].Count++
			return
		}
	}
	s.info.Quirks = append(qs, QuirkCount{Quirk: q, Count: 1, First: first})
}

// ReadPacket implements PacketSource.
func (s *fileSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if s.done {
		return nil, gopacket.CaptureInfo{}, 0, io.EOF
	}
	data, ci, link, err := s.rec.next(s)
	if err != nil {
		s.done = true
		switch {
		case s.info.Err != nil:
			// The shim's: what the reader saw was the unit the shim
			// refused.
			err = s.info.Err
		case err != io.EOF:
			// The shim hands over only units the reader can read: an
			// error of its own is said with the unit it came from.
			err = s.corrupt("%s could not be read: pcapgo: %v", s.rec.where(s), err)
		}
		return nil, ci, 0, err
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
	s.release()
	return s.closer.Close()
}

// multiSource reads several files as one capture: one after the other
// (Options.Concatenate), or merged by packet time (Options.Merge). A file
// that fails is recorded in its FileInfo and skipped; reading goes on with
// the next file (merged: with the others).
type multiSource struct {
	opts  Options
	paths []string
	infos []FileInfo
	i     int // Concatenate: the next file to open
	cur   *fileSource
	errs  []error

	// Merge: every file is open at once, each with its next packet
	// waiting in heads (a packet's data stays valid until its own file is
	// read again); last is the file of the packet returned last, read
	// again on the next call.
	merge  bool
	opened bool
	heads  []mergeHead
	last   int
}

// mergeHead is one merged file and its next packet.
type mergeHead struct {
	src  *fileSource // nil once the file has ended
	data []byte
	ci   gopacket.CaptureInfo
	link layers.LinkType
}

// current is the index of the file of the packet returned last: Conn.File
// of a connection that packet opens.
func (m *multiSource) current() int {
	if m.merge {
		return m.last
	}
	return m.i - 1
}

func (m *multiSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if m.merge {
		return m.readMerged()
	}
	for {
		if m.cur == nil {
			if m.i >= len(m.paths) {
				return nil, gopacket.CaptureInfo{}, 0, io.EOF
			}
			s, err := openFile(m.paths[m.i], &m.infos[m.i], m.opts.sourceOptions(m.i))
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

// readMerged returns the earliest of the files' next packets (the first
// file's on a tie, so that files of one capture split by time keep their
// order), then reads that file's next one. Packets out of time order
// inside one file keep their order: the merge compares the files' heads.
func (m *multiSource) readMerged() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	if !m.opened {
		m.opened = true
		m.heads = make([]mergeHead, len(m.paths))
		for i, p := range m.paths {
			s, err := openFile(p, &m.infos[i], m.opts.sourceOptions(i))
			if err != nil {
				m.errs = append(m.errs, err)
				continue
			}
			m.heads[i].src = s
			m.advance(i)
		}
	} else if m.last >= 0 {
		m.advance(m.last)
	}
	m.last = -1
	for i := range m.heads {
		h := &m.heads[i]
		if h.src == nil {
			continue
		}
		if m.last < 0 || h.ci.Timestamp.Before(m.heads[m.last].ci.Timestamp) {
			m.last = i
		}
	}
	if m.last < 0 {
		return nil, gopacket.CaptureInfo{}, 0, io.EOF
	}
	h := &m.heads[m.last]
	return h.data, h.ci, h.link, nil
}

// advance reads file i's next packet into its head, closing the file at
// its end or error.
func (m *multiSource) advance(i int) {
	h := &m.heads[i]
	data, ci, link, err := h.src.ReadPacket()
	if err == nil {
		h.data, h.ci, h.link = data, ci, link
		return
	}
	if err != io.EOF {
		m.errs = append(m.errs, err)
	}
	h.src.Close()
	*h = mergeHead{}
}

func (m *multiSource) close() {
	if m.cur != nil {
		m.cur.Close()
		m.cur = nil
	}
	for i := range m.heads {
		if m.heads[i].src != nil {
			m.heads[i].src.Close()
			m.heads[i] = mergeHead{}
		}
	}
}

// filterSource passes on the packets of a source that Options.PacketFilter
// accepts, and counts the others.
type filterSource struct {
	PacketSource
	keep    func([]byte, gopacket.CaptureInfo, layers.LinkType) bool
	skipped int64 // packets keep rejected
}

func (f *filterSource) ReadPacket() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	for {
		data, ci, link, err := f.PacketSource.ReadPacket()
		if err != nil || f.keep(data, ci, link) {
			return data, ci, link, err
		}
		f.skipped++
	}
}

// filtered wraps src in a filterSource when opts has a PacketFilter.
func (o *Options) filtered(src PacketSource) PacketSource {
	if o.PacketFilter == nil {
		return src
	}
	return &filterSource{PacketSource: src, keep: o.PacketFilter}
}

// IPHeader returns the IP header and what follows it in a packet of link
// type link (Ethernet with 802.1Q/QinQ tags, Linux cooked v1 and v2, BSD
// loopback, raw IP), for a filter that reads packets from their IP header
// as the pure-Go capture filter does; ok is false for other link types and
// for packets that do not carry IP at the link layer. Tunnels are not
// opened and fragments not reassembled: a filter sees the outer headers
// and each fragment, as tcpdump's does (which, unlike this, does not look
// through VLAN tags unless told to with vlan).
func IPHeader(data []byte, link layers.LinkType) (ip []byte, ok bool) {
	etherType := func(off int) ([]byte, bool) {
		for {
			if len(data) < off+2 {
				return nil, false
			}
			switch binary.BigEndian.Uint16(data[off:]) {
			case 0x0800, 0x86DD:
				return data[off+2:], true
			case 0x8100, 0x88A8, 0x9100: // VLAN tags
				off += 4
			default:
				return nil, false
			}
		}
	}
	switch link {
	case layers.LinkTypeEthernet:
		return etherType(12)
	case layers.LinkTypeLinuxSLL:
		return etherType(14)
	case layers.LinkTypeLinuxSLL2:
		if len(data) < 20 {
			return nil, false
		}
		if t := binary.BigEndian.Uint16(data); t == 0x0800 || t == 0x86DD {
			return data[20:], true
		}
		return nil, false
	case layers.LinkTypeNull, layers.LinkTypeLoop:
		if len(data) < 4 {
			return nil, false
		}
		data = data[4:]
	case layers.LinkTypeRaw, layers.LinkTypeIPv4, layers.LinkTypeIPv6, 12:
	default:
		return nil, false
	}
	if len(data) == 0 || data[0]>>4 != 4 && data[0]>>4 != 6 {
		return nil, false
	}
	return data, true
}

// readBufferSize is the read buffer of a capture file: large enough that
// reading costs few system calls, and that a record up to the largest
// snap length (maxSnapLen) is handed out from the buffer without a copy.
const readBufferSize = 256<<10 + 64
