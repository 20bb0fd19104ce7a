package reassembly

// Reading the two capture file formats, classic pcap
// (draft-ietf-opsawg-pcap, "PCAP Capture File Format") and pcapng
// (draft-ietf-opsawg-pcapng, "PCAP Now Generic"), with gopacket's
// readers: pcapgo.Reader (pcap.go) and pcapgo.NgReader (pcapng.go).
//
// The readers trust the lengths a file gives, and a file cut or damaged
// makes them lose packets silently or read garbage: pcapgo.Reader takes a
// file cut right after a record header for a clean end, and refuses the
// quirks libpcap reads (a captured length above the original length,
// the swapped lengths of pcap 2.3 and older); NgReader never checks a
// block's trailing length, reads a packet or an option past the end of
// its block when their lengths say so, and keeps Decryption Secrets
// Blocks to itself. So each reader reads from a unitReader: a shim that
// hands it the file one whole unit (a pcap record, a pcapng block) at a
// time, after checking that the unit's bytes are all there and that the
// lengths inside it stay inside it. A unit that fails is never handed
// over: the shim says what is wrong, in words, with the record or block
// number and the byte offset (fileSource.cut, fileSource.corrupt), and
// the reader's own error is dropped for it. The shims look only at
// lengths, counts and the few fields whose quirks they correct; packets,
// timestamps (but those of binary resolution: pcapng.go), link types and
// options are the readers' to read.
//
// To accept a new writer quirk: add a Quirk, count it where the shim or
// the reader meets it (fileSource.quirk), correct the unit the reader is
// handed if the reader refuses it, and add a generated capture that
// shows it to quirks_test.go.

import (
	"bufio"
	"fmt"
	"io"
	"slices"

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
	// QuirkJoinedFiles: pcap file headers where a packet record was
	// expected: files joined end to end (cat a.pcap b.pcap), read on
	// under each header's byte order, time unit and link type, as if the
	// files were given one after the other.
	QuirkJoinedFiles
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
	case QuirkJoinedFiles:
		return "found where a packet record was expected (pcap files joined end to end); read on under each"
	}
	return fmt.Sprintf("have quirk %d", uint8(q))
}

// Unit is what a quirk counts: "packet" or "section".
func (q Quirk) Unit() string {
	switch q {
	case QuirkUnknownSection:
		return "section"
	case QuirkJoinedFiles:
		return "pcap file header"
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
	// lines), valid only until the callee returns: it is the block as
	// read (up to 65 MiB), not copied; the callee copies what it keeps.
	Data []byte
}

// input is the (decompressed) byte stream of a capture file, under the
// shims. Its offset counts the bytes consumed, for messages.
type input struct {
	r   *bufio.Reader
	off int64
	big []byte // the bytes of a unit longer than r's buffer
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

// peek returns up to the next n bytes (n at most the buffer's size)
// without consuming them, valid until the next call; fewer at the end of
// the stream or on a read error.
func (in *input) peek(n int) []byte {
	b, _ := in.r.Peek(n)
	return b
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

// unitReader is the io.Reader a pcapgo reader reads: the input, one
// checked unit (a pcap record, a pcapng block) at a time. A unit is the
// bytes in lead (its first bytes, copied so that the shim may correct
// them) followed by tail (the rest, in the input's buffer). next reads
// and checks the following unit and sets lead and tail; it returns io.EOF
// at a clean end of the input and the *FileError of a unit that failed,
// which Read returns from then on.
//
// A Read never returns bytes of two units: the reader's bufio.Reader
// reads again only once it has consumed every byte it was given, so when
// next runs, the reader is done with the units before, and the packets
// it returned are all those before the unit next reads (fileSource's
// count is exact for a quirk's first packet and a secret's Frames).
type unitReader struct {
	lead, tail []byte
	scratch    []byte // lead's memory
	next       func() error
	err        error
}

func (u *unitReader) Read(p []byte) (int, error) {
	for len(u.lead) == 0 && len(u.tail) == 0 {
		if u.err != nil {
			return 0, u.err
		}
		if u.err = u.next(); u.err != nil {
			return 0, u.err
		}
	}
	src := &u.tail
	if len(u.lead) > 0 {
		src = &u.lead
	}
	n := copy(p, *src)
	*src = (*src)[n:]
	return n, nil
}

// set makes the next unit hdr (copied) followed by rest.
func (u *unitReader) set(hdr, rest []byte) {
	u.scratch = append(u.scratch[:0], hdr...)
	u.lead, u.tail = u.scratch, rest
}

// own copies the first n bytes of the unit's tail into lead, after the
// hl bytes lead holds already, and returns the unit's bytes from hl on
// for the shim to correct (n bytes or more).
func (u *unitReader) own(hl, n int) []byte {
	if have := len(u.lead) - hl; have < n {
		u.scratch = append(u.lead, u.tail[:n-have]...)
		u.lead, u.tail = u.scratch, u.tail[n-have:]
	}
	return u.lead[hl:]
}

// recordReader reads the packets of one capture format through its
// pcapgo reader.
type recordReader interface {
	// next returns the reader's next packet, its capture info and link
	// type, or the reader's error; fileSource.ReadPacket replaces the
	// error with the shim's when the shim failed.
	next(s *fileSource) ([]byte, gopacket.CaptureInfo, layers.LinkType, error)
	// where names the unit the shim read last, for a reader's error
	// that the shim did not foresee: "block 7 (an enhanced packet
	// block, at byte 4100)".
	where(s *fileSource) string
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
