package reassembly

// Writer quirks and link types: a golden capture rewritten as other
// tools write captures, read into the same streams.

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/kwire/kwire/internal/capturetest"
)

// relinked returns pkts re-framed for link, each through fn first when
// fn is not nil.
func relinked(t *testing.T, pkts []capturetest.Packet, link uint32, fn func([]byte) ([]byte, error)) []capturetest.Packet {
	t.Helper()
	out := make([]capturetest.Packet, len(pkts))
	for i, p := range pkts {
		data := p.Data
		var err error
		if fn != nil {
			if data, err = fn(data); err != nil {
				t.Fatal(err)
			}
		}
		if data, err = capturetest.Relink(data, link); err != nil {
			t.Fatal(err)
		}
		out[i] = capturetest.Packet{Time: p.Time, Data: data, Length: len(data)}
	}
	return out
}

// TestWriterQuirks reads a golden capture as sniffers, libraries and old
// tools write it: each gives the same streams as the original, and a
// quirk is counted once per file, never per packet as an error.
func TestWriterQuirks(t *testing.T) {
	pkts := goldenPackets(t)["kgo-produce-consume.pcap"]
	want, _ := mustRead(t, capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts).Bytes, Options{})

	// The public sniffer's capture: every record's captured length above
	// its original length (92 > 76).
	longer := make([]capturetest.Packet, len(pkts))
	for i, p := range pkts {
		longer[i] = capturetest.Packet{Time: p.Time, Data: p.Data, Length: len(p.Data) - 16}
	}
	// Old writers: lengths swapped (pcap 2.3 and before); visible only
	// when a packet was cut by the snap length.
	cut := make([]capturetest.Packet, len(pkts))
	for i, p := range pkts {
		cut[i] = capturetest.Packet{Time: p.Time, Data: p.Data[:min(len(p.Data), 1000)], Length: len(p.Data)}
	}
	wantCut, _ := mustRead(t, capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 1000}, cut).Bytes, Options{})
	long, firstLong := 0, int64(0) // packets longer than a 200-byte snap length
	for i, p := range pkts {
		if len(p.Data) > 200 {
			long++
			if firstLong == 0 {
				firstLong = int64(i + 1)
			}
		}
	}
	cutLong := 0 // packets cut by the 1000-byte snap length
	for _, p := range pkts {
		if len(p.Data) > 1000 {
			cutLong++
		}
	}
	if cutLong == 0 {
		t.Fatal("no packet above 1000 bytes: the swapped-lengths cases prove nothing")
	}

	for _, c := range []struct {
		name   string
		opts   capturetest.PcapOptions
		pkts   []capturetest.Packet
		want   *rec
		quirks []QuirkCount
	}{
		{"captured length above original length", capturetest.PcapOptions{Link: 1, Snaplen: 262144}, longer, want,
			[]QuirkCount{{QuirkCapLenAboveLen, int64(len(pkts)), 1}}},
		{"snap length 0", capturetest.PcapOptions{Link: 1, Snaplen: 0}, pkts, want, nil},
		{"captured length above snap length", capturetest.PcapOptions{Link: 1, Snaplen: 200}, pkts, want,
			[]QuirkCount{{QuirkCapLenAboveSnapLen, int64(long), firstLong}}},
		{"nanosecond magic", capturetest.PcapOptions{Link: 1, Snaplen: 262144, Nano: true}, pkts, want, nil},
		{"big-endian", capturetest.PcapOptions{Link: 1, Snaplen: 262144, BigEndian: true}, pkts, want, nil},
		{"big-endian nanosecond", capturetest.PcapOptions{Link: 1, Snaplen: 262144, BigEndian: true, Nano: true}, pkts, want, nil},
		{"version 2.3, lengths swapped", capturetest.PcapOptions{Link: 1, Snaplen: 1000, Minor: 3, SwapLengths: true}, cut, wantCut,
			[]QuirkCount{{QuirkLengthsSwapped, int64(cutLong), 0}}},
		{"version 2.2, lengths swapped", capturetest.PcapOptions{Link: 1, Snaplen: 1000, Minor: 2, SwapLengths: true}, cut, wantCut,
			[]QuirkCount{{QuirkLengthsSwapped, int64(len(pkts)), 1}}},
		{"linux cooked (SLL)", capturetest.PcapOptions{Link: capturetest.LinkSLL, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkSLL, nil), want, nil},
		{"linux cooked v2 (SLL2)", capturetest.PcapOptions{Link: capturetest.LinkSLL2, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkSLL2, nil), want, nil},
		{"raw IP (101)", capturetest.PcapOptions{Link: capturetest.LinkRaw, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkRaw, nil), want, nil},
		{"raw IP (12)", capturetest.PcapOptions{Link: capturetest.LinkRaw12, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkRaw12, nil), want, nil},
		{"raw IP (14)", capturetest.PcapOptions{Link: capturetest.LinkRaw14, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkRaw14, nil), want, nil},
		{"raw IPv4 (228)", capturetest.PcapOptions{Link: capturetest.LinkIPv4, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkIPv4, nil), want, nil},
		{"raw IPv6 (229)", capturetest.PcapOptions{Link: capturetest.LinkIPv6, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkIPv6, capturetest.ToIPv6), want, nil},
		{"BSD loopback (NULL)", capturetest.PcapOptions{Link: capturetest.LinkNull, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkNull, nil), want, nil},
		{"BSD loopback (NULL) big-endian", capturetest.PcapOptions{Link: capturetest.LinkNull, Snaplen: 262144, BigEndian: true}, relinked(t, pkts, capturetest.LinkNullBE, nil), want, nil},
		{"BSD loopback IPv6", capturetest.PcapOptions{Link: capturetest.LinkNull, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkNull, capturetest.ToIPv6), want, nil},
		{"OpenBSD loopback (LOOP)", capturetest.PcapOptions{Link: capturetest.LinkLoop, Snaplen: 262144}, relinked(t, pkts, capturetest.LinkLoop, nil), want, nil},
		{"802.1Q VLAN", capturetest.PcapOptions{Link: 1, Snaplen: 262144}, relinked(t, pkts, 1, func(b []byte) ([]byte, error) { return capturetest.Wrap(b, capturetest.VLAN) }), want, nil},
		{"QinQ", capturetest.PcapOptions{Link: 1, Snaplen: 262144}, relinked(t, pkts, 1, func(b []byte) ([]byte, error) {
			return capturetest.Wrap(b, capturetest.VLAN, capturetest.VLAN)
		}), want, nil},
	} {
		f := capturetest.Pcap(c.opts, c.pkts)
		got, sum, err := readBytes(t, f.Bytes, Options{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if sum.DecodeErrors != 0 || sum.Packets != int64(len(pkts)) || sum.TCPPackets != int64(len(pkts)) {
			t.Errorf("%s: %d packets, %d TCP, %d decode errors", c.name, sum.Packets, sum.TCPPackets, sum.DecodeErrors)
		}
		compareStreams(t, c.name, c.want, got)
		q := sum.Files[0].Quirks
		if c.name == "version 2.3, lengths swapped" && len(q) == 1 {
			c.quirks[0].First = q[0].First // the first packet above 1000 bytes
		}
		if len(q) != len(c.quirks) || (len(q) > 0 && q[0] != c.quirks[0]) {
			t.Errorf("%s: quirks %+v, want %+v", c.name, q, c.quirks)
		}
	}
}

// TestPcapngResolutions: pcapng timestamps in microseconds (the default),
// nanoseconds and a binary resolution give the same times.
func TestPcapngResolutions(t *testing.T) {
	pkts := firstPackets(t, 5)
	for _, exp := range []uint8{6, 9} {
		w := capturetest.NewNg()
		w.SHB(exp == 9, 1)
		w.IDB(1, 0, exp)
		for _, p := range pkts {
			w.EPB(0, p)
		}
		h, _ := mustRead(t, w.File().Bytes, Options{})
		if len(h.chunks) == 0 {
			t.Fatal("no data")
		}
		for _, c := range h.chunks {
			p := pkts[c.frame-1]
			if !c.time.Equal(p.Time.Truncate(1000)) {
				t.Errorf("resolution 10^-%d: frame %d at %v, want %v", exp, c.frame, c.time, p.Time)
			}
		}
	}
	// Binary resolutions, and picoseconds with if_tsoffset -1 s: raw
	// timestamps read through the file reader, exact to the nanosecond
	// (pcapgo scales binary fractions by a whole number of nanoseconds
	// per unit: the shim hands it nanoseconds).
	minus1 := binary.LittleEndian.AppendUint64(nil, ^uint64(0))
	for _, c := range []struct {
		name    string
		resol   byte
		offset  []byte
		ts      uint64
		sec, ns int64
	}{
		{"2^-20 s", 0x80 | 20, nil, 3<<20 | 1<<19, 3, 500000000},
		{"2^-30 s", 0x80 | 30, nil, 9<<30 | (1<<30 - 1), 9, 999999999},
		{"2^-32 s", 0x80 | 32, nil, 7<<32 | 1<<30, 7, 250000000},
		{"2^-63 s", 0x80 | 63, nil, 1 << 62, 0, 500000000},
		{"10^-12 s, offset -1 s", 12, minus1, 5_000_000_000_123, 4, 0},
		{"10^-19 s", 19, nil, 1_5000000000_000000000, 1, 500000000},
	} {
		w := capturetest.NewNg()
		w.SHB(false, 1)
		opts := []capturetest.Option{{Code: 9, Value: []byte{c.resol}}}
		if c.offset != nil {
			opts = append(opts, capturetest.Option{Code: 14, Value: c.offset})
		}
		w.IDB(1, 0, 6, opts...)
		w.Raw(6, epbAt(pkts[0], c.ts))
		w.Raw(6, epbAt(pkts[1], c.ts+1))
		times, err := packetTimes(w.File().Bytes)
		if err != nil || len(times) != 2 {
			t.Fatalf("%s: %d packets, %v", c.name, len(times), err)
		}
		if got := times[0]; got.Unix() != c.sec || int64(got.Nanosecond()) != c.ns {
			t.Errorf("%s: %d.%09d, want %d.%09d", c.name, got.Unix(), got.Nanosecond(), c.sec, c.ns)
		}
		if times[1].Before(times[0]) {
			t.Errorf("%s: one unit later is %v, before %v", c.name, times[1], times[0])
		}
	}
}

// epbAt is the body of an enhanced packet block of p on interface 0
// whose timestamp is ts units of the interface's resolution.
func epbAt(p capturetest.Packet, ts uint64) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(ts>>32))
	b = binary.LittleEndian.AppendUint32(b, uint32(ts))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(p.Data)))
	b = binary.LittleEndian.AppendUint32(b, uint32(p.Length))
	b = append(b, p.Data...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// packetTimes reads a capture held in memory with the file readers and
// returns its packets' times.
func packetTimes(data []byte) ([]time.Time, error) {
	var info FileInfo
	src, err := newFileSource("capture", memFile{bytes.NewReader(data)}, &info, sourceOptions{window: DefaultMaxCaptureWindow})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	var times []time.Time
	for {
		_, ci, _, err := src.ReadPacket()
		if err == io.EOF {
			return times, nil
		}
		if err != nil {
			return times, err
		}
		times = append(times, ci.Timestamp)
	}
}

// TestQuirkCapLenAboveLenCountedOnce: the quirk is one QuirkCount, with
// the first packet's number, whatever the number of packets.
func TestQuirkCapLenAboveLenCountedOnce(t *testing.T) {
	pkts := firstPackets(t, 20)
	for i := range pkts {
		if i >= 4 {
			pkts[i].Length = len(pkts[i].Data) - 16
		}
	}
	_, info, err := readAll(capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts).Bytes, sourceOptions{})
	if err != nil || len(info.Quirks) != 1 || info.Quirks[0] != (QuirkCount{QuirkCapLenAboveLen, 16, 5}) {
		t.Errorf("quirks %+v, %v", info.Quirks, err)
	}
	if !bytes.Contains([]byte(info.Quirks[0].Quirk.String()), []byte("more bytes than were on the wire")) {
		t.Errorf("quirk text %q", info.Quirks[0].Quirk)
	}
}

// TestPcapngManyInterfaces: a section may describe maxInterfaces
// interfaces; one more is refused there as a damaged file, naming the
// block, after the packets before it (pcapgo keeps every description
// of a section: a million took 648 MB).
func TestPcapngManyInterfaces(t *testing.T) {
	pkts := firstPackets(t, 2)
	for _, extra := range []int{0, 1} {
		w := capturetest.NewNg()
		w.SHB(false, 1)
		w.IDB(1, 0, 6)
		w.EPB(0, pkts[0])
		for range maxInterfaces - 1 + extra {
			w.IDB(1, 0, 6)
		}
		w.EPB(0, pkts[1])
		times, err := packetTimes(w.File().Bytes)
		if extra == 0 {
			if err != nil || len(times) != 2 {
				t.Errorf("%d interfaces: %d packets, %v", maxInterfaces, len(times), err)
			}
			continue
		}
		want := fmt.Sprintf("block %d (an interface description block, at byte %d) describes interface 4096 of its section, more than the 4096",
			maxInterfaces+3, 28+20+epbLen(pkts[0])+(maxInterfaces-1)*20)
		if len(times) != 1 || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), want) {
			t.Errorf("%d interfaces: %d packets, %v; want 1 packet, then ErrCorrupt %q", maxInterfaces+1, len(times), err, want)
		}
	}
}

// epbLen is the length of the enhanced packet block of p.
func epbLen(p capturetest.Packet) int { return 12 + len(epbAt(p, 0)) }
