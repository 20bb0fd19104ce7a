package reassembly

// Fuzz targets for every way a capture is read: the file formats (pcap,
// pcapng) and their compressions through newFileSource, the whole
// pipeline after them, and the tunnels. Seeds come from the golden
// captures (their first packets, so that an exec stays fast), rewritten
// by internal/capturetest.

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/kwire/kwire/internal/capturetest"
)

// fuzzSeeds returns small captures made from the golden captures: the
// first packets of a few, as pcap (both byte orders), as a pcapng with
// every block type, tunnelled, in other link types, and compressed.
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	golden := goldenPackets(t)
	for _, name := range []string{"kgo-produce-consume.pcap", "sasl-scram.pcap", "sarama-legacy-message-sets.pcap"} {
		pkts := golden[name]
		if len(pkts) > 6 {
			pkts = pkts[:6] // the handshake and a request or two: small seeds keep execs and minimization fast
		}
		seeds = append(seeds,
			capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts).Bytes,
			capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144, BigEndian: true, Nano: true}, pkts).Bytes,
			capturetest.Every(1, pkts).Bytes)
	}
	pkts := golden["kgo-produce-consume.pcap"][:6]
	for _, tun := range [][]capturetest.Tunnel{{capturetest.VXLAN}, {capturetest.GRETEB, capturetest.ERSPAN3}, {capturetest.Geneve}, {capturetest.IPIP, capturetest.IP4in6}} {
		seeds = append(seeds, capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, tunnelled(t, pkts, nil, tun...)).Bytes)
	}
	for _, link := range []uint32{capturetest.LinkSLL2, capturetest.LinkNull, capturetest.LinkRaw} {
		seeds = append(seeds, capturetest.Pcap(capturetest.PcapOptions{Link: link & 0xffff, Snaplen: 262144}, relinkedTB(t, pkts, link)).Bytes)
	}
	plain := seeds[0]
	for _, codec := range []string{"gzip", "zstd", "xz", "lz4"} {
		z, err := capturetest.Compress(codec, plain)
		if err != nil {
			t.Fatal(err)
		}
		seeds = append(seeds, z)
	}
	return seeds
}

func relinkedTB(t testing.TB, pkts []capturetest.Packet, link uint32) []capturetest.Packet {
	out := make([]capturetest.Packet, len(pkts))
	for i, p := range pkts {
		data, err := capturetest.Relink(p.Data, link)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = capturetest.Packet{Time: p.Time, Data: data, Length: len(data)}
	}
	return out
}

// readCaptureChecked reads data as a capture file through Run and checks
// the handler contract and that every error is a FileError of a known
// kind whose text is not a raw library error.
func readCaptureChecked(t *testing.T, data []byte) {
	var info FileInfo
	src, err := newFileSource("fuzz", memFile{bytes.NewReader(data)}, &info, sourceOptions{window: 1 << 20, maxExpanded: 4 << 20})
	if err != nil {
		checkFileError(t, err)
		return
	}
	defer src.Close()
	// The contract's checker: a payload on the 4-tuple of a connection
	// closed by RST or FIN opens a new Conn under the same Index.
	h := &invariants{t: t, open: map[*Conn]bool{}, next: map[*Conn]*[2]int64{}, closedIndex: map[int]bool{}}
	// Both modes: the pipeline for even lengths.
	sum, err := Run(context.Background(), src, Options{MaxBufferedPagesPerConn: 8, Synchronous: len(data)%2 == 1, MaxFragmentMemory: 1 << 20}, h)
	if err != nil {
		checkFileError(t, err)
	}
	if h.opened != h.closed || h.opened != sum.Connections {
		t.Fatalf("%d connections, %d opened, %d closed", sum.Connections, h.opened, h.closed)
	}
	if sum.Packets != info.Packets || h.maxF > sum.Packets ||
		sum.TCPPackets+sum.NonTCP+sum.Fragments+sum.DecodeErrors+sum.UnsupportedLink != sum.Packets {
		t.Fatalf("file %d packets, summary %+v, highest frame %d", info.Packets, sum, h.maxF)
	}
}

func checkFileError(t *testing.T, err error) {
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *FileError", err, err)
	}
	switch fe.Kind {
	case ErrNotCapture, ErrTruncated, ErrCorrupt, ErrLimit:
	default:
		t.Fatalf("error %v: kind %v", err, fe.Kind)
	}
	if rawGoError(fe.Err.Error()) {
		t.Fatalf("raw library error in %q", err)
	}
	if strings.Contains(fe.Err.Error(), "could not be read: pcapgo") {
		// The shims hand pcapgo's readers only what they can read.
		t.Fatalf("pcapgo failed on what a shim handed it: %q", err)
	}
}

// FuzzReadCapture feeds arbitrary bytes through file detection,
// decompression, pcap/pcapng reading, decoding (tunnels included) and
// reassembly. It must never panic, errors are located FileErrors in
// words, and the handler contract holds.
func FuzzReadCapture(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		readCaptureChecked(t, data)
	})
}

// FuzzCompressedCapture compresses a capture with a codec, cuts the
// compressed file, and checks the reader against the plain file: the
// packets read are the plain file's first ones, all of them when
// nothing was cut and the plain file ended cleanly.
func FuzzCompressedCapture(f *testing.F) {
	for i, s := range fuzzSeeds(f)[:9] {
		f.Add(s, uint8(i), uint16(0))
		f.Add(s, uint8(i), uint16(len(s)/2))
	}
	codecs := []string{"gzip", "zstd", "xz", "lz4"}
	f.Fuzz(func(t *testing.T, plain []byte, codec uint8, cut uint16) {
		if len(plain) > 1<<15 {
			return
		}
		z, err := capturetest.Compress(codecs[int(codec)%len(codecs)], plain)
		if err != nil {
			t.Fatal(err)
		}
		if cut > 0 && int(cut) < len(z) {
			z = z[:cut]
		}
		np, _, perr := readAll(plain, sourceOptions{})
		nz, _, zerr := readAll(z, sourceOptions{maxExpanded: 1 << 20})
		if zerr != nil {
			checkFileError(t, zerr)
		}
		switch {
		case nz > np:
			t.Fatalf("%d packets from the compressed file, %d from the plain one", nz, np)
		case cut == 0 && nz != np:
			t.Fatalf("whole: %d packets from the compressed file, %d from the plain one (%v, %v)", nz, np, zerr, perr)
		case cut == 0 && (perr == nil) != (zerr == nil):
			t.Fatalf("whole: compressed %v, plain %v", zerr, perr)
		}
	})
}

// FuzzTunnel wraps a frame in fuzzed tunnels: whatever the frame, the
// tunnelled one decodes to the same TCP segment, addresses and all.
func FuzzTunnel(f *testing.F) {
	for _, p := range goldenPackets(f)["kgo-produce-consume.pcap"][:6] {
		f.Add(p.Data, []byte{0})
		f.Add(p.Data, []byte{3, 9, 14})
	}
	f.Fuzz(func(t *testing.T, frame []byte, sel []byte) {
		if len(sel) > 4 {
			sel = sel[:4]
		}
		var tuns []capturetest.Tunnel
		for _, s := range sel {
			tuns = append(tuns, capturetest.Tunnels[int(s)%len(capturetest.Tunnels)])
		}
		wrapped, err := capturetest.Wrap(frame, tuns...)
		if err != nil {
			return // the frame cannot carry those tunnels
		}
		cfg := (&Options{}).tunnelConfig()
		in, out := decoded{tun: cfg}, decoded{tun: cfg}
		rin := decodeFrame(layers.LinkTypeEthernet, frame, &in)
		rout := decodeFrame(layers.LinkTypeEthernet, wrapped, &out)
		if rin != resTCP {
			return
		}
		if rout != resTCP || !bytes.Equal(in.seg, out.seg) || in.segLen != out.segLen ||
			!bytes.Equal(in.srcIP, out.srcIP) || !bytes.Equal(in.dstIP, out.dstIP) {
			t.Fatalf("%v: plain %d %x>%x %d bytes; tunnelled %d %x>%x %d bytes", tuns, rin, in.srcIP, in.dstIP, len(in.seg), rout, out.srcIP, out.dstIP, len(out.seg))
		}
	})
}

// BenchmarkFuzzReadCapture is FuzzReadCapture's body on its seeds: what
// one exec costs (without the fuzzer's instrumentation).
func BenchmarkFuzzReadCapture(b *testing.B) {
	seeds := fuzzSeeds(b)
	t := &testing.T{}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		readCaptureChecked(t, seeds[i%len(seeds)])
	}
}
