package reassembly

// Capture files cut and damaged at every structural point: built from
// the golden captures (pcaps/*.pcap) and from a synthetic pcapng holding
// every block type (internal/capturetest), read with the file readers.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/internal/capturetest"
)

// goldenPackets returns the packets of the golden captures, by name.
func goldenPackets(t testing.TB) map[string][]capturetest.Packet {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(paths) == 0 {
		t.Skip("no golden captures in ../pcaps")
	}
	out := map[string][]capturetest.Packet{}
	for _, p := range paths {
		link, pkts, err := capturetest.ReadPcap(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if link != capturetest.LinkEthernet {
			t.Fatalf("%s: link type %d, the golden captures are Ethernet", p, link)
		}
		out[filepath.Base(p)] = pkts
	}
	return out
}

// firstPackets returns the first n packets of the main golden capture.
func firstPackets(t testing.TB, n int) []capturetest.Packet {
	t.Helper()
	pkts := goldenPackets(t)["kgo-produce-consume.pcap"]
	if len(pkts) < n {
		t.Skipf("kgo-produce-consume.pcap has %d packets", len(pkts))
	}
	return pkts[:n]
}

// readAll reads a capture held in memory with the file readers only (no
// reassembly): the packets and the error that ended it.
func readAll(data []byte, opts sourceOptions) (int64, *FileInfo, error) {
	var info FileInfo
	if opts.window == 0 {
		opts.window = DefaultMaxCaptureWindow
	}
	src, err := newFileSource("capture", memFile{bytes.NewReader(data)}, &info, opts)
	if err != nil {
		return 0, &info, err
	}
	defer src.Close()
	var n int64
	for {
		_, _, _, err := src.ReadPacket()
		if err == io.EOF {
			return n, &info, nil
		}
		if err != nil {
			return n, &info, err
		}
		n++
	}
}

// wantCut is the error text expected for a file cut n bytes in, inside
// part p (whose header part, for a block or record, is hdr).
func wantCut(f *capturetest.File, n int) (msg string, clean bool) {
	var hdr capturetest.Part
	for _, p := range f.Parts {
		if p.What == "record header" || p.What == "block header" || p.What == "file header" {
			hdr = p
		}
		if n < p.Off || n >= p.Off+p.Len {
			continue
		}
		k := n - p.Off
		switch p.What {
		case "file header":
			return fmt.Sprintf("the file ends inside its 24-byte pcap file header (%d bytes are there)", k), false
		case "record header":
			if k == 0 {
				return "", true
			}
			return fmt.Sprintf("the file ends inside the header of packet record %d (at byte %d: %d of its 16 bytes are there)", p.Index, p.Off, k), false
		case "record data":
			return fmt.Sprintf("the file ends inside packet record %d (at byte %d: %d of its %d bytes are there)", p.Index, hdr.Off, 16+k, p.Total), false
		case "block header":
			switch {
			case k == 0:
				return "", true
			case k < 8:
				return fmt.Sprintf("the file ends inside the header of block %d (at byte %d: %d of its 8 bytes are there)", p.Index, p.Off, k), false
			}
			return fmt.Sprintf("the file ends inside the header of block %d, a section header block (at byte %d: %d of its 12 bytes are there)", p.Index, p.Off, k), false
		case "block":
			return fmt.Sprintf("the file ends inside block %d, %s (at byte %d: %d of its %d bytes are there)", p.Index, p.Block, hdr.Off, n-hdr.Off, p.Total), false
		}
	}
	return "", true // the end of the file
}

// checkCuts reads f cut at each of the offsets and checks the error, its
// text and the packets read before it.
func checkCuts(t *testing.T, name string, f *capturetest.File, cuts []int) {
	t.Helper()
	for _, n := range cuts {
		got, _, err := readAll(f.Bytes[:n], sourceOptions{})
		want := int64(f.PrefixPackets(n))
		msg, clean := wantCut(f, n)
		switch {
		case n < 4:
			if !errors.Is(err, ErrNotCapture) {
				t.Errorf("%s cut at %d: %v, want ErrNotCapture", name, n, err)
			}
			continue
		case clean:
			if err != nil {
				t.Errorf("%s cut at %d (a record or block boundary): %v", name, n, err)
			}
		default:
			var fe *FileError
			if !errors.Is(err, ErrTruncated) || !errors.As(err, &fe) {
				t.Errorf("%s cut at %d: %v, want ErrTruncated", name, n, err)
				continue
			}
			if fe.Err.Error() != msg {
				t.Errorf("%s cut at %d:\n got %q\nwant %q", name, n, fe.Err, msg)
			}
			if fe.Packets != want {
				t.Errorf("%s cut at %d: the error says %d packets, want %d", name, n, fe.Packets, want)
			}
		}
		if got != want {
			t.Errorf("%s cut at %d: %d packets read, want the %d complete before the cut", name, n, got, want)
		}
	}
}

// TestTruncationEveryByte cuts a classic pcap and a pcapng holding every
// block type at every byte of their first packets.
func TestTruncationEveryByte(t *testing.T) {
	pkts := firstPackets(t, 12)
	for _, f := range []struct {
		name string
		file *capturetest.File
	}{
		{"pcap", capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts)},
		{"pcap-be-nano", capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144, BigEndian: true, Nano: true}, pkts)},
		{"pcapng", capturetest.Every(1, pkts)},
	} {
		cuts := make([]int, len(f.file.Bytes)+1)
		for i := range cuts {
			cuts[i] = i
		}
		checkCuts(t, f.name, f.file, cuts)
	}
}

// TestTruncationGolden cuts every golden capture at each structural point
// (inside the file header; inside, at the end of and right after a
// record header; inside and at the end of a record's data) of its first
// records, every 50th, and its last ones.
func TestTruncationGolden(t *testing.T) {
	for name, pkts := range goldenPackets(t) {
		f := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts)
		cuts := []int{5, 23}
		for _, p := range f.Parts {
			if p.What == "file header" || !(p.Index <= 3 || p.Index%50 == 0 || p.Index > len(pkts)-3) {
				continue
			}
			cuts = append(cuts, p.Off, p.Off+1, p.Off+p.Len-1)
		}
		checkCuts(t, name, f, cuts)
	}
}

// TestCutAfterRecordHeader is the case that was read as a clean end: the
// file ends right after a record's 16-byte header.
func TestCutAfterRecordHeader(t *testing.T) {
	pkts := firstPackets(t, 3)
	f := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts)
	n := f.Parts[len(f.Parts)-1].Off // the last record's data
	got, _, err := readAll(f.Bytes[:n], sourceOptions{})
	if !errors.Is(err, ErrTruncated) || got != 2 {
		t.Fatalf("%d packets, %v; want 2 and ErrTruncated", got, err)
	}
	want := fmt.Sprintf("capture: capture file truncated after packet 2: the file ends inside packet record 3 (at byte %d: 16 of its %d bytes are there)", n-16, 16+len(pkts[2].Data))
	if err.Error() != want {
		t.Errorf("\n got %q\nwant %q", err, want)
	}
}

// damage returns a copy of b with the uint32 at off set to v in order.
func damage(b []byte, off int, order binary.ByteOrder, v uint32) []byte {
	c := bytes.Clone(b)
	order.PutUint32(c[off:], v)
	return c
}

// TestLyingLengths damages the lengths of every block of the pcapng
// (leading and trailing total length, a packet's captured length, an
// option's length, the secrets length) and a classic pcap record's
// captured length: each is ErrCorrupt (or ErrTruncated when the lie
// points past the end of the file), said in words, with every packet
// before the damaged block read.
func TestLyingLengths(t *testing.T) {
	pkts := firstPackets(t, 8)
	f := capturetest.Every(1, pkts)
	orderAt := func(off int) binary.ByteOrder { // the second section is big-endian
		order := binary.ByteOrder(binary.LittleEndian)
		for _, p := range f.Parts {
			if p.Off > off {
				break
			}
			if p.What == "block header" && p.Block == "a section header block" {
				order = binary.LittleEndian
				if p.Index > 1 {
					order = binary.BigEndian
				}
			}
		}
		return order
	}
	for _, h := range f.Parts {
		if h.What != "block header" {
			continue
		}
		order := orderAt(h.Off)
		end := h.Off + h.Total
		last := end == len(f.Bytes)
		prefix := fmt.Sprintf("block %d (%s, at byte %d) ", h.Index, h.Block, h.Off)
		cases := []struct {
			name string
			data []byte
			want string // a prefix of the message; "" for ErrTruncated
		}{
			{"length +4", damage(f.Bytes, h.Off+4, order, uint32(h.Total+4)), prefix + fmt.Sprintf("says it is %d bytes long at its start and ", h.Total+4)},
			{"length -4", damage(f.Bytes, h.Off+4, order, uint32(h.Total-4)), prefix + fmt.Sprintf("says it is %d bytes long at its start and ", h.Total-4)},
			{"length 7", damage(f.Bytes, h.Off+4, order, 7), prefix + "says it is 7 bytes long, less than the block's fixed fields"},
			{"length odd", damage(f.Bytes, h.Off+4, order, uint32(h.Total+2)), prefix + fmt.Sprintf("says it is %d bytes long, not a multiple of 4", h.Total+2)},
			{"length huge", damage(f.Bytes, h.Off+4, order, 0x7ffffff0), prefix + "says it is 2147483632 bytes long, more than the 65 MiB this reader takes for a block: the file is damaged from there"},
			{"trailer", damage(f.Bytes, end-4, order, uint32(h.Total+8)), prefix + fmt.Sprintf("says it is %d bytes long at its start and %d at its end: a block length is wrong, the file is damaged from there", h.Total, h.Total+8)},
		}
		if last {
			cases[0].want = ""
		}
		if h.Block == "a section header block" && h.Total-4 < 28 {
			cases[1].want = prefix + fmt.Sprintf("says it is %d bytes long, less than the block's fixed fields", h.Total-4)
		}
		switch h.Block {
		case "an enhanced packet block", "a packet block":
			cases = append(cases, struct {
				name string
				data []byte
				want string
			}{"captured length", damage(f.Bytes, h.Off+8+12, order, uint32(h.Total)), prefix + fmt.Sprintf("says its packet holds %d bytes, but the block has room for %d", h.Total, h.Total-32)})
			if h.Block == "an enhanced packet block" {
				cases = append(cases, struct {
					name string
					data []byte
					want string
				}{"interface", damage(f.Bytes, h.Off+8, order, 3), prefix + "holds a packet of interface 3, but the section has described 1 interface"})
			}
		case "a decryption secrets block":
			cases = append(cases, struct {
				name string
				data []byte
				want string
			}{"secrets length", damage(f.Bytes, h.Off+12, order, 1000), prefix + fmt.Sprintf("says it holds 1000 bytes of secrets, but the block has room for %d", h.Total-20)})
		case "an interface description block":
			if h.Total == 20 { // no options
				break
			}
			// Its first option, if_name, made to run past the block.
			c := bytes.Clone(f.Bytes)
			order.PutUint16(c[h.Off+16+2:], 200)
			cases = append(cases, struct {
				name string
				data []byte
				want string
			}{"option length", c, prefix + "has an option (code 2) of 200 bytes that runs past the end of the block"})
		case "a section header block":
			cases = append(cases, struct {
				name string
				data []byte
				want string
			}{"byte order", damage(f.Bytes, h.Off+8, binary.BigEndian, 0x01020304), prefix + "has the byte-order magic 0x01020304, which is neither byte order of 0x1a2b3c4d"})
		}
		for _, c := range cases {
			got, _, err := readAll(c.data, sourceOptions{})
			var fe *FileError
			switch {
			case c.want == "":
				if !errors.Is(err, ErrTruncated) {
					t.Errorf("block %d %s: %v, want ErrTruncated", h.Index, c.name, err)
				}
			case !errors.Is(err, ErrCorrupt) || !errors.As(err, &fe):
				t.Errorf("block %d (%s) %s: %v, want ErrCorrupt", h.Index, h.Block, c.name, err)
				continue
			case !strings.HasPrefix(fe.Err.Error(), c.want):
				t.Errorf("block %d %s:\n got %q\nwant %q...", h.Index, c.name, fe.Err, c.want)
			}
			if int(got) != h.Packets {
				t.Errorf("block %d (%s) %s: %d packets read, want the %d before it", h.Index, h.Block, c.name, got, h.Packets)
			}
		}
	}

	// Classic pcap: a record's captured length beyond any snap length.
	p := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 65535}, pkts)
	rec := p.Parts[5] // the header of record 3
	got, _, err := readAll(damage(p.Bytes, rec.Off+8, binary.LittleEndian, 300000), sourceOptions{})
	want := fmt.Sprintf("packet record 3 (at byte %d) says it holds 300000 bytes, more than the file's snap length (65535) and the 262144 bytes capture tools write: the file is damaged from there", rec.Off)
	var fe *FileError
	if !errors.Is(err, ErrCorrupt) || !errors.As(err, &fe) || fe.Err.Error() != want || got != 2 {
		t.Errorf("pcap record length: %d packets, %v\nwant 2 packets and %q", got, err, want)
	}
}

// TestPcapngEveryBlock: the pcapng with every block type (a decryption
// secrets block, a custom and an unknown block, name resolution,
// statistics, a second section in the other byte order, obsolete and
// simple packet blocks) gives the same streams as the classic pcap of the
// same packets, and its secrets go to Options.Secrets.
func TestPcapngEveryBlock(t *testing.T) {
	pkts := goldenPackets(t)["kgo-produce-consume.pcap"]
	// Simple packet blocks have no timestamp: only the first half (in
	// enhanced packet blocks) keeps its times, so compare streams only.
	ng := capturetest.Every(1, pkts)
	plain := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts)
	var secrets []DecryptionSecrets
	hn, sn, err := readBytes(t, ng.Bytes, Options{Secrets: func(s DecryptionSecrets) { s.Data = slices.Clone(s.Data); secrets = append(secrets, s) }, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	hp, sp := mustRead(t, plain.Bytes, Options{})
	if sn.Packets != sp.Packets || sn.Connections != sp.Connections || sn.Files[0].Format != "pcapng" {
		t.Fatalf("pcapng: %d packets %d connections; pcap: %d, %d", sn.Packets, sn.Connections, sp.Packets, sp.Connections)
	}
	compareStreams(t, "pcapng", hp, hn)
	if len(secrets) != 1 || secrets[0].Type != SecretsTLSKeyLog || !strings.HasPrefix(string(secrets[0].Data), "CLIENT_RANDOM 0000") || secrets[0].Frames != 0 {
		t.Errorf("secrets %+v", secrets)
	}
	if sn.Files[0].SecretsBlocks != 1 {
		t.Errorf("SecretsBlocks %d", sn.Files[0].SecretsBlocks)
	}
}

// compareStreams checks that two runs saw the same connections (by
// ports) with the same bytes in each direction.
func compareStreams(t *testing.T, name string, want, got *rec) {
	t.Helper()
	if len(got.conns) != len(want.conns) {
		t.Fatalf("%s: %d connections, want %d", name, len(got.conns), len(want.conns))
	}
	for i, c := range want.conns {
		g := got.conns[i]
		if g.A.Port() != c.A.Port() || g.B.Port() != c.B.Port() {
			t.Errorf("%s: connection %d is %v > %v, want %v > %v", name, i, g.A, g.B, c.A, c.B)
		}
		for _, d := range []Dir{AtoB, BtoA} {
			if got.stream(g.Index, d) != want.stream(c.Index, d) {
				t.Errorf("%s: connection %d %v: %d bytes, want %d", name, i, d, len(got.stream(g.Index, d)), len(want.stream(c.Index, d)))
			}
		}
	}
}

// TestUnknownSectionVersion: a pcapng section of major version 2 is
// skipped, as the format says, and counted as a quirk that loses
// packets.
func TestUnknownSectionVersion(t *testing.T) {
	pkts := firstPackets(t, 6)
	w := capturetest.NewNg()
	w.SHB(false, 1)
	w.IDB(1, 0, 6)
	for _, p := range pkts[:3] {
		w.EPB(0, p)
	}
	w.SHB(false, 2)
	w.IDB(1, 0, 6)
	for _, p := range pkts[3:] {
		w.EPB(0, p)
	}
	got, info, err := readAll(w.File().Bytes, sourceOptions{})
	if err != nil || got != 3 {
		t.Fatalf("%d packets, %v", got, err)
	}
	if len(info.Quirks) != 1 || info.Quirks[0] != (QuirkCount{Quirk: QuirkUnknownSection, Count: 1, First: 3}) || !info.Quirks[0].Quirk.Lost() {
		t.Errorf("quirks %+v", info.Quirks)
	}
}

// TestPcapVersions: pcap 2.0 to 2.4 are read (the lengths of 2.0-2.3
// records swapped back, see TestWriterQuirks); other versions are not
// captures, as libpcap says too.
func TestPcapVersions(t *testing.T) {
	pkts := firstPackets(t, 3)
	for _, c := range []struct {
		major, minor uint16
		want         string // "" when read
	}{
		{2, 0, ""}, {2, 1, ""}, {2, 4, ""},
		{2, 5, "pcap version 2.5: versions 2.0 to 2.4 exist"},
		{1, 4, "pcap version 1.4: only version 2 exists"},
		{3, 0, "pcap version 3.0: only version 2 exists"},
	} {
		f := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts)
		binary.LittleEndian.PutUint16(f.Bytes[4:], c.major)
		binary.LittleEndian.PutUint16(f.Bytes[6:], c.minor)
		n, _, err := readAll(f.Bytes, sourceOptions{})
		var fe *FileError
		switch {
		case c.want == "" && (err != nil || n != 3):
			t.Errorf("%d.%d: %d packets, %v", c.major, c.minor, n, err)
		case c.want != "" && (!errors.Is(err, ErrNotCapture) || !errors.As(err, &fe) || fe.Err.Error() != c.want):
			t.Errorf("%d.%d: %v, want ErrNotCapture: %s", c.major, c.minor, err, c.want)
		}
	}
}

// TestPcapngReaderShim: what the shim corrects or keeps from pcapgo's
// reader, which would stop or skip where libpcap and Wireshark read on:
// a section of minor version 2, an opt_endofopt with a length,
// statistics of an interface never described and a name resolution
// block of garbage, secrets in a skipped section. Every packet is read.
func TestPcapngReaderShim(t *testing.T) {
	pkts := firstPackets(t, 6)
	w := capturetest.NewNg()
	w.SHB(false, 1)
	// if_name "lo", then opt_endofopt saying it holds 4 bytes.
	idb := []byte{1, 0, 0, 0, 0, 0, 4, 0, 2, 0, 2, 0, 'l', 'o', 0, 0, 0, 0, 4, 0, 0xde, 0xad, 0xbe, 0xef}
	w.Raw(1, idb)
	w.EPB(0, pkts[0])
	w.Raw(5, []byte{7, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 9, 0, 0xff, 0xff}) // statistics of interface 7, an option past the end
	w.Raw(4, []byte{1, 0, 0xff, 0xff, 127, 0, 0, 1})                       // an IPv4 record of 65535 bytes
	w.EPB(0, pkts[1])
	w.SHB(true, 2) // skipped, its secrets too
	w.DSB(SecretsTLSKeyLog, []byte("CLIENT_RANDOM aa bb\n"))
	w.IDB(1, 0, 6)
	w.EPB(0, pkts[2])
	w.SHB(false, 1)
	w.IDB(1, 0, 6)
	for _, p := range pkts[3:] {
		w.EPB(0, p)
	}
	f := w.File()
	binary.LittleEndian.PutUint16(f.Bytes[14:], 2) // the first section is 1.2
	var secrets []DecryptionSecrets
	n, info, err := readAll(f.Bytes, sourceOptions{secrets: func(s DecryptionSecrets) { secrets = append(secrets, s) }})
	if err != nil || n != 5 {
		t.Fatalf("%d packets, %v; want 5", n, err)
	}
	if len(info.Quirks) != 1 || info.Quirks[0] != (QuirkCount{Quirk: QuirkUnknownSection, Count: 1, First: 2}) {
		t.Errorf("quirks %+v", info.Quirks)
	}
	if len(secrets) != 0 || info.SecretsBlocks != 0 {
		t.Errorf("secrets of a skipped section: %+v, %d blocks", secrets, info.SecretsBlocks)
	}
}

// TestPcapngInnerLengths: lengths inside a block that pcapgo's reader
// would follow into the next block (an enhanced packet block's option,
// a simple packet block's packet length) are corrupt, said in words,
// with the packets before read.
func TestPcapngInnerLengths(t *testing.T) {
	pkts := firstPackets(t, 4)
	for _, c := range []struct {
		name string
		snap uint32
		// damage returns the file with block 4 (the second packet)
		// damaged, and the message wanted.
		damage func(f *capturetest.File, blk capturetest.Part) string
		spb    bool
	}{
		{"enhanced packet block option", 0, func(f *capturetest.File, blk capturetest.Part) string {
			off := blk.Off + 8 + 20 + (len(pkts[1].Data)+3)&^3
			binary.LittleEndian.PutUint16(f.Bytes[off+2:], 200)
			return "has an option (code 1) of 200 bytes that runs past the end of the block"
		}, false},
		{"simple packet block length", 0, func(f *capturetest.File, blk capturetest.Part) string {
			binary.LittleEndian.PutUint32(f.Bytes[blk.Off+8:], uint32(len(pkts[1].Data)+100))
			return fmt.Sprintf("says its packet is %d bytes long, but the block has room for %d: a length is wrong, the file is damaged from there", len(pkts[1].Data)+100, (len(pkts[1].Data)+3)&^3)
		}, true},
		// Written with 40 of the 60 bytes the snap length keeps.
		{"simple packet block length, snap length", 60, func(f *capturetest.File, blk capturetest.Part) string {
			return fmt.Sprintf("says its packet is %d bytes long, 60 of them captured (the interface's snap length), but the block has room for 40: a length is wrong, the file is damaged from there", len(pkts[1].Data))
		}, true},
	} {
		w := capturetest.NewNg()
		w.SHB(false, 1)
		w.IDB(1, c.snap, 6)
		for i, p := range pkts {
			switch {
			case c.spb && c.snap != 0:
				keep := int(c.snap)
				if i == 1 {
					keep = 40
				}
				w.SPB(capturetest.Packet{Data: p.Data[:keep], Length: len(p.Data)})
			case c.spb:
				w.SPB(p)
			default:
				w.EPB(0, p, capturetest.Option{Code: 1, Value: []byte("comment")})
			}
		}
		f := w.File()
		var blk capturetest.Part
		for _, p := range f.Parts {
			if p.What == "block header" && p.Index == 4 {
				blk = p
			}
		}
		want := fmt.Sprintf("block 4 (%s, at byte %d) %s", blk.Block, blk.Off, c.damage(f, blk))
		n, _, err := readAll(f.Bytes, sourceOptions{})
		var fe *FileError
		if !errors.Is(err, ErrCorrupt) || !errors.As(err, &fe) || fe.Err.Error() != want || n != 1 {
			t.Errorf("%s: %d packets, %v\nwant 1 packet and %q", c.name, n, err, want)
		}
	}
}

// TestPcapJoinedFiles: pcap files joined end to end (cat a.pcap b.pcap)
// are read on under each header, in its byte order and time unit, as
// tcpdump reading them one after the other would; the join is a quirk
// counted once per header. A record whose first bytes happen to be a
// magic number (stamped 2055-12-17 in a little-endian file) stays a
// record.
func TestPcapJoinedFiles(t *testing.T) {
	pkts := firstPackets(t, 6)
	a := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts[:2])
	b := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 65535, BigEndian: true, Nano: true, Minor: 2, SwapLengths: true}, pkts[2:4])
	odd := slices.Clone(pkts[4:6])
	odd[0].Time = time.Unix(0xA1B2C3D4, 262146*1000) // little-endian bytes d4 c3 b2 a1 02 00 04 00: a magic and version 2.4
	c := capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, odd)
	joined := slices.Concat(a.Bytes, b.Bytes, c.Bytes)
	var info FileInfo
	src, err := newFileSource("capture", memFile{bytes.NewReader(joined)}, &info, sourceOptions{window: DefaultMaxCaptureWindow})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var got []capturetest.Packet
	for {
		data, ci, _, err := src.ReadPacket()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d packets: %v", len(got), err)
		}
		got = append(got, capturetest.Packet{Time: ci.Timestamp, Data: slices.Clone(data), Length: ci.Length})
	}
	if len(got) != 6 {
		t.Fatalf("%d packets, want 6", len(got))
	}
	for i, p := range got {
		want := pkts[i]
		if i == 4 {
			want = odd[0]
		}
		if !p.Time.Equal(want.Time) || !bytes.Equal(p.Data, want.Data) || p.Length != want.Length {
			t.Errorf("packet %d: %v %d bytes (%d), want %v %d bytes (%d)", i+1, p.Time, len(p.Data), p.Length, want.Time, len(want.Data), want.Length)
		}
	}
	want := []QuirkCount{{Quirk: QuirkLengthsSwapped, Count: 2, First: 3}, {Quirk: QuirkJoinedFiles, Count: 2, First: 3}}
	if !slices.ContainsFunc(info.Quirks, func(q QuirkCount) bool { return q == want[0] }) || !slices.ContainsFunc(info.Quirks, func(q QuirkCount) bool { return q == want[1] }) || len(info.Quirks) != 2 {
		t.Errorf("quirks %+v, want %+v", info.Quirks, want)
	}
}
