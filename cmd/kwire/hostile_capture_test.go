package main

// Hostile and quirky capture files, end to end: each is built from a
// golden capture by internal/capturetest (cut at each structural point,
// damaged lengths, writer quirks, tunnels, compression), and kwire read
// must say what happened, exit with the right status, and still dissect
// every complete packet before the problem.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/capturetest"
)

// kwireRead runs kwire read in-process on one file.
func kwireRead(t *testing.T, path string, flags ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append(append([]string{"read"}, flags...), path), &ioStreams{Out: &out, ErrOut: &errOut})
	return out.String(), errOut.String(), code
}

// exchangeIDs lists what identifies each exchange of read --json's
// output: stream, kind, API key and version, correlation ID and the two
// endpoints.
func exchangeIDs(t *testing.T, ndjson string) []string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(ndjson), "\n") {
		if line == "" {
			continue
		}
		var v struct {
			Stream        int
			Kind          string
			Client        string
			Broker        string
			APIKey        *int `json:"apiKey"`
			APIVersion    *int `json:"apiVersion"`
			CorrelationID *int `json:"correlationId"`
		}
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		ids = append(ids, fmt.Sprintf("%d %s %s>%s key=%v v=%v corr=%v", v.Stream, v.Kind, v.Client, v.Broker, deref(v.APIKey), deref(v.APIVersion), deref(v.CorrelationID)))
	}
	return ids
}

func deref(p *int) any {
	if p == nil {
		return "-"
	}
	return *p
}

func goldenCaptures(t *testing.T) map[string][]capturetest.Packet {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("..", "..", "pcaps", "*.pcap"))
	if len(paths) == 0 {
		t.Skip("no golden captures in pcaps/")
	}
	out := map[string][]capturetest.Packet{}
	for _, p := range paths {
		_, pkts, err := capturetest.ReadPcap(p)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(p)] = pkts
	}
	return out
}

func pcapOf(pkts []capturetest.Packet) *capturetest.File {
	return capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts)
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadTruncatedCaptures cuts every golden capture inside its file
// header, inside a record header, right after it (the cut that used to
// pass for a clean end) and inside the record's data: exit 1, a warning
// that says where, and the exchanges of every packet before the cut,
// exactly those of a file that ends cleanly there.
func TestReadTruncatedCaptures(t *testing.T) {
	for name, pkts := range goldenCaptures(t) {
		f := pcapOf(pkts)
		k := len(pkts) / 2 // the record cut
		var hdr, data capturetest.Part
		for _, p := range f.Parts {
			if p.Index == k && p.What == "record header" {
				hdr = p
			}
			if p.Index == k && p.What == "record data" {
				data = p
			}
		}
		prefix := writeTemp(t, "prefix.pcap", pcapOf(pkts[:k-1]).Bytes)
		wantOut, _, code := kwireRead(t, prefix, "--json")
		if code != exitOK {
			t.Fatalf("%s: the clean prefix exits %d", name, code)
		}
		for _, c := range []struct {
			what string
			cut  int
			msg  string
		}{
			{"inside the record header", hdr.Off + 5, fmt.Sprintf("the file ends inside the header of packet record %d (at byte %d: 5 of its 16 bytes are there)", k, hdr.Off)},
			{"right after the record header", data.Off, fmt.Sprintf("the file ends inside packet record %d (at byte %d: 16 of its %d bytes are there)", k, hdr.Off, hdr.Total)},
			{"inside the record data", data.Off + data.Len/2, fmt.Sprintf("the file ends inside packet record %d (at byte %d: %d of its %d bytes are there)", k, hdr.Off, 16+data.Len/2, hdr.Total)},
		} {
			path := writeTemp(t, "cut.pcap", f.Bytes[:c.cut])
			out, errOut, code := kwireRead(t, path, "--json")
			if code != exitData {
				t.Errorf("%s cut %s: exit %d, want 1", name, c.what, code)
			}
			want := fmt.Sprintf("kwire: warning: %s: capture file truncated after packet %d: %s (everything before it is shown)\n", path, k-1, c.msg)
			if !strings.Contains(errOut, want) {
				t.Errorf("%s cut %s: stderr\n%s\nwant the line\n%s", name, c.what, errOut, want)
			}
			if out != wantOut {
				t.Errorf("%s cut %s: the exchanges differ from those of the packets before the cut", name, c.what)
			}
		}
		path := writeTemp(t, "header.pcap", f.Bytes[:10])
		_, errOut, code := kwireRead(t, path)
		if want := fmt.Sprintf("kwire: warning: %s: capture file truncated before its first packet: the file ends inside its 24-byte pcap file header (10 bytes are there): the capture holds no packets\n", path); code != exitData || errOut != want {
			t.Errorf("%s cut in the file header: exit %d, stderr %q\nwant %q", name, code, errOut, want)
		}
	}
}

// TestReadPcapngBlocks: a pcapng of a golden capture with every block
// type (decryption secrets, custom, unknown, name resolution,
// statistics, a second section in the other byte order, obsolete and
// simple packet blocks) gives the same exchanges as the pcap; cut or
// damaged at each kind of block, the exchanges before it are those of a
// file that ends cleanly before that block.
func TestReadPcapngBlocks(t *testing.T) {
	pkts := goldenCaptures(t)["kgo-produce-consume.pcap"]
	plainOut, _, _ := kwireRead(t, writeTemp(t, "plain.pcap", pcapOf(pkts).Bytes), "--json")
	ng := capturetest.Every(1, pkts)
	out, errOut, code := kwireRead(t, writeTemp(t, "every.pcapng", ng.Bytes), "--json")
	if code != exitOK || !strings.HasPrefix(errOut, "packets ") || strings.Contains(errOut, "warning") {
		t.Fatalf("every block type: exit %d, stderr:\n%s", code, errOut)
	}
	want := exchangeIDs(t, plainOut)
	if got := exchangeIDs(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("every block type: %d exchanges, want the pcap's %d", len(got), len(want))
	}

	// One block of each kind, and a few enhanced packet blocks.
	seen := map[string]bool{}
	var blocks []capturetest.Part
	epbs := 0
	for _, p := range ng.Parts {
		if p.What != "block header" {
			continue
		}
		if p.Block == "an enhanced packet block" && epbs < 3 && p.Packets > 100 {
			epbs++
			blocks = append(blocks, p)
		} else if !seen[p.Block] && p.Index > 1 {
			blocks = append(blocks, p)
		}
		seen[p.Block] = true
	}
	if len(blocks) < 10 {
		t.Fatalf("only %d blocks to cut", len(blocks))
	}
	for _, b := range blocks {
		prefixOut, _, _ := kwireRead(t, writeTemp(t, "prefix.pcapng", ng.Bytes[:b.Off]), "--json")
		for _, c := range []struct {
			what string
			data []byte
			re   string
		}{
			{"cut in its header", ng.Bytes[:b.Off+3], fmt.Sprintf(`capture file truncated (after packet %d|before its first packet): the file ends inside the header of block %d \(at byte %d: 3 of its 8 bytes are there\)`, b.Packets, b.Index, b.Off)},
			{"cut in its body", ng.Bytes[:b.Off+b.Total-6], fmt.Sprintf(`capture file truncated (after packet %d|before its first packet): the file ends inside block %d, %s \(at byte %d: %d of its %d bytes are there\)`, b.Packets, b.Index, b.Block, b.Off, b.Total-6, b.Total)},
			{"length lies", lie(ng.Bytes, b), fmt.Sprintf(`corrupt capture file (after packet %d|before its first packet): block %d \(%s, at byte %d\) says it is %d bytes long at its start and \d+ at its end`, b.Packets, b.Index, b.Block, b.Off, b.Total+4)},
		} {
			out, errOut, code := kwireRead(t, writeTemp(t, "bad.pcapng", c.data), "--json")
			if code != exitData || !regexp.MustCompile(c.re).MatchString(errOut) {
				t.Errorf("block %d (%s) %s: exit %d, stderr:\n%s\nwant %s", b.Index, b.Block, c.what, code, errOut, c.re)
			}
			if out != prefixOut {
				t.Errorf("block %d (%s) %s: the exchanges differ from those of the blocks before it", b.Index, b.Block, c.what)
			}
		}
	}
}

// lie returns a copy of the file with block b's leading length 4 bytes
// too long, in the block's byte order.
func lie(file []byte, b capturetest.Part) []byte {
	c := bytes.Clone(file)
	v := uint32(b.Total + 4)
	if binary.LittleEndian.Uint32(c[b.Off+4:]) == uint32(b.Total) {
		binary.LittleEndian.PutUint32(c[b.Off+4:], v)
	} else {
		binary.BigEndian.PutUint32(c[b.Off+4:], v)
	}
	return c
}

// TestReadCapLenQuirk: the public sniffer's capture whose records say 92
// bytes captured of 76 on the wire is read, with one note, exit 0.
func TestReadCapLenQuirk(t *testing.T) {
	pkts := goldenCaptures(t)["kgo-produce-consume.pcap"]
	plainOut, _, _ := kwireRead(t, writeTemp(t, "plain.pcap", pcapOf(pkts).Bytes))
	quirky := make([]capturetest.Packet, len(pkts))
	for i, p := range pkts {
		quirky[i] = capturetest.Packet{Time: p.Time, Data: p.Data, Length: len(p.Data) - 16}
	}
	path := writeTemp(t, "sniffer.pcap", pcapOf(quirky).Bytes)
	out, errOut, code := kwireRead(t, path)
	want := fmt.Sprintf("kwire: note: %s: %d packets say they captured more bytes than were on the wire; read as captured (the first: packet 1)\n", path, len(pkts))
	if code != exitOK || errOut != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, errOut, want)
	}
	if out != plainOut {
		t.Error("the output differs from the plain capture's")
	}
}

// TestReadTunnelledCaptures wraps every packet of a golden capture in
// each tunnel (and nested ones): kwire finds the same exchanges (count,
// API keys, correlation IDs, inner endpoints) as in the plain capture.
func TestReadTunnelledCaptures(t *testing.T) {
	pkts := goldenCaptures(t)["kgo-produce-consume.pcap"]
	plainOut, _, _ := kwireRead(t, writeTemp(t, "plain.pcap", pcapOf(pkts).Bytes), "--json")
	want := exchangeIDs(t, plainOut)
	cases := [][]capturetest.Tunnel{{capturetest.VXLAN, capturetest.GREIP, capturetest.VLAN}}
	for _, tun := range capturetest.Tunnels {
		if tun != capturetest.IP6in4 && tun != capturetest.IP6in6 { // those need an IPv6 inner packet
			cases = append(cases, []capturetest.Tunnel{tun})
		}
	}
	for _, tuns := range cases {
		wrapped := make([]capturetest.Packet, len(pkts))
		for i, p := range pkts {
			data, err := capturetest.Wrap(p.Data, tuns...)
			if err != nil {
				t.Fatal(err)
			}
			wrapped[i] = capturetest.Packet{Time: p.Time, Data: data, Length: len(data)}
		}
		out, errOut, code := kwireRead(t, writeTemp(t, "tunnel.pcap", pcapOf(wrapped).Bytes), "--json")
		got := exchangeIDs(t, out)
		if code != exitOK || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%v: exit %d, %d exchanges (want %d); stderr:\n%s", tuns, code, len(got), len(want), errOut)
		}
	}
}

// TestReadCompressedWindow: a zstd capture asking for a larger window than
// --max-capture-window is refused in words, exit 1; raised, it reads.
func TestReadCompressedWindow(t *testing.T) {
	pkts := goldenCaptures(t)["unsupported-versions.pcap"]
	plain := pcapOf(pkts).Bytes
	// One zstd frame, one raw block, asking for an 8 MiB window.
	z := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 13 << 3}
	h := uint32(1) | uint32(len(plain))<<3
	z = append(append(z, byte(h), byte(h>>8), byte(h>>16)), plain...)
	path := writeTemp(t, "window.pcap.zst", z)
	_, errOut, code := kwireRead(t, path, "--max-capture-window", "4MiB")
	want := fmt.Sprintf("kwire: warning: %s: capture file beyond a limit before its first packet: the zstd data needs a decompression window larger than --max-capture-window allows: raise it, or decompress the file first: the capture holds no packets\n", path)
	if code != exitData || errOut != want {
		t.Errorf("exit %d, stderr %q\nwant %q", code, errOut, want)
	}
	plainOut, _, _ := kwireRead(t, writeTemp(t, "plain.pcap", plain))
	if out, errOut, code := kwireRead(t, path, "--max-capture-window", "8MiB"); code != exitOK || out != plainOut {
		t.Errorf("8 MiB allowed: exit %d, stderr %s", code, errOut)
	}
}
