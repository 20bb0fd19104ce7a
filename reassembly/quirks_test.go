package reassembly

// Writer quirks and link types: a golden capture rewritten as other
// tools write captures, read into the same streams.

import (
	"bytes"
	"testing"

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
	// 2^-20 seconds: 1048576 units a second.
	var ifc = ngInterface{binary: true, exp: 20}
	if got := ifc.time(3<<20 | 1<<19); got.Unix() != 3 || got.Nanosecond() != 500000000 {
		t.Errorf("binary resolution: %v", got)
	}
	ifc = ngInterface{exp: 12, offset: -1}
	if got := ifc.time(5_000_000_000_123); got.Unix() != 4 || got.Nanosecond() != 0 {
		t.Errorf("picoseconds with offset -1 s: %v", got)
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
