package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/internal/capturetest"
	"github.com/kwire/kwire/render"
)

// splitReversed replaces packet i of pkts (Ethernet, IPv4, TCP with a
// payload) by segments of size payload bytes each, in reverse order: the
// first bytes arrive last.
func splitReversed(t *testing.T, pkts []capturetest.Packet, i, size int) []capturetest.Packet {
	t.Helper()
	p := gopacket.NewPacket(pkts[i].Data, layers.LayerTypeEthernet, gopacket.Default)
	eth, _ := p.Layer(layers.LayerTypeEthernet).(*layers.Ethernet)
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if eth == nil || ip == nil || tcp == nil || len(tcp.Payload) <= size {
		t.Fatalf("packet %d: no TCP payload of more than %d bytes over IPv4", i+1, size)
	}
	payload := tcp.Payload
	var segs []capturetest.Packet
	for off := 0; off < len(payload); off += size {
		e, ip4, tc := *eth, *ip, *tcp
		tc.Seq = tcp.Seq + uint32(off)
		if err := tc.SetNetworkLayerForChecksum(&ip4); err != nil {
			t.Fatal(err)
		}
		buf := gopacket.NewSerializeBuffer()
		opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
		if err := gopacket.SerializeLayers(buf, opts, &e, &ip4, &tc, gopacket.Payload(payload[off:min(off+size, len(payload))])); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		segs = append([]capturetest.Packet{{Time: pkts[i].Time, Data: b, Length: len(b)}}, segs...)
	}
	return append(append(append([]capturetest.Packet{}, pkts[:i]...), segs...), pkts[i+1:]...)
}

// TestReadOutOfOrderBudget: segments that arrive ahead of the first bytes
// of a request wait for them within --max-out-of-order. A budget too
// small for them gives the hole up, and says so — "given up (budget:
// --max-out-of-order)", naming the flag that raises it — not "lost": the
// bytes are in the capture, they came after the budget was full. Exit
// status 1 all the same: the request could not be read.
func TestReadOutOfOrderBudget(t *testing.T) {
	link, pkts, err := capturetest.ReadPcap(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil || link != 1 {
		t.Fatalf("link %d: %v", link, err)
	}
	// The first request of more than 330 bytes (packet 54: 1599 bytes, 200 segments),
	// as segments of 8 bytes, the first last.
	big, n := -1, 0
	for i := range pkts {
		p := gopacket.NewPacket(pkts[i].Data, layers.LayerTypeEthernet, gopacket.Default)
		if tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP); tcp != nil && tcp.DstPort == 19092 && len(tcp.Payload) > 330 {
			big, n = i, len(tcp.Payload)
			break
		}
	}
	if big != 53 || n != 1599 {
		t.Fatalf("packet %d of %d bytes; want 54 of 1599", big+1, n)
	}
	path := writeTemp(t, "reversed.pcap", pcapOf(splitReversed(t, pkts, big, 8)).Bytes)

	whole, _, code := kwireInProcess(t, "read", goldenPcap(t, "kgo-produce-consume.pcap"))
	if code != exitOK {
		t.Fatalf("golden capture: exit %d", code)
	}
	out, errOut, code := kwireInProcess(t, "read", path)
	if code != exitOK || errOut != "" || !strings.Contains(out, " Produce v13 corr=1 client=capgen-kgo-gzip ") {
		t.Errorf("default budget: exit %d, stderr %q, stdout\n%s", code, errOut, out)
	}
	if wl, ol := strings.Count(whole, "\n"), strings.Count(out, "\n"); wl != ol {
		t.Errorf("default budget: %d lines, want the %d of the capture in order", ol, wl)
	}

	// 10 pages: the 10th segment buffered gives up the 190 segments'
	// 1520 bytes before the 10 last (79 bytes).
	out, errOut, code = kwireInProcess(t, "read", "--verbose", "--max-out-of-order", "19000", path)
	gap := " GAP 1520 bytes (1520 bytes given up (budget): the segments that arrived ahead of them filled the out-of-order budget before they came (maybe captured later); a larger --max-out-of-order waits for them)\n"
	if !strings.Contains(out, gap) {
		t.Errorf("no %q in\n%s", gap, out)
	}
	if want := "kwire: warning: the capture could not be fully dissected: 1 gap (1520 bytes given up (budget: --max-out-of-order))"; code != exitData || !strings.HasPrefix(errOut, want) {
		t.Errorf("exit %d, stderr %q; want %d, %q…", code, errOut, exitData, want)
	}
	if strings.Contains(out+errOut, "lost") {
		t.Errorf("bytes given up said to be lost:\n%s%s", out, errOut)
	}
	out, _, _ = kwireInProcess(t, "read", "--json", "--max-out-of-order", "19000", path)
	if want := `"bytes":1520,"detail":"1520 bytes given up (budget): `; !strings.Contains(out, want) {
		t.Errorf("--json holds no %q", want)
	}
}

// TestReadConflict: a TCP retransmission whose bytes differ from those
// it resends (here the broker's packet 29, 318 bytes of a response, again
// as packet 30 with a topic renamed) is told — a CONFLICT naming both packets and
// the stream offset, the summary's count, the connection's in stats
// --json — and sets exit status 1: the exchange shown decodes the first
// copy, which the broker may not have kept. It was counted as a plain
// retransmission, exit 0.
func TestReadConflict(t *testing.T) {
	link, pkts, err := capturetest.ReadPcap(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil || link != 1 {
		t.Fatalf("link %d: %v", link, err)
	}
	const i = 28 // packet 29: 318 bytes the broker sends on stream 2
	p := gopacket.NewPacket(pkts[i].Data, layers.LayerTypeEthernet, gopacket.Default)
	tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP)
	if tcp == nil || len(tcp.Payload) != 318 {
		t.Fatalf("packet 29: %v", p.Layers())
	}
	re := capturetest.Packet{Time: pkts[i].Time, Data: []byte(strings.Replace(string(pkts[i].Data), "capgen-codecs", "capgen-CODECS", 1)), Length: pkts[i].Length}
	if string(re.Data) == string(pkts[i].Data) {
		t.Fatal("no topic name in packet 29")
	}
	mod := append(append(append([]capturetest.Packet{}, pkts[:i+1]...), re), pkts[i+1:]...)
	path := writeTemp(t, "conflict.pcap", pcapOf(mod).Bytes)

	out, errOut, code := kwireInProcess(t, "read", path)
	line := " stream 2 127.0.0.1:19092 → 127.0.0.1:44320 CONFLICT 318 bytes packet 30 (retransmission with different data: packet 30 resends 318 bytes at stream offset 794 that packet 29 carried, with other bytes; the first copy is decoded)\n"
	if !strings.Contains(out, line) || strings.Contains(out, "capgen-CODECS") {
		t.Errorf("no %q, or not the first copy, in\n%s", line, out)
	}
	if want := "anomalies: 1 retransmission with different data\n"; !strings.HasSuffix(out, want) {
		t.Errorf("stdout ends %q, want %q", out[max(len(out)-200, 0):], want)
	}
	if want := "kwire: warning: the capture could not be fully dissected: 1 retransmission with different data (the first copy is decoded)\n"; code != exitData || errOut != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, errOut, exitData, want)
	}
	out, _, _ = kwireInProcess(t, "read", "--json", path)
	if want := `{"kind":"conflict","stream":2,"file":null,"client":"127.0.0.1:44320","broker":"127.0.0.1:19092","from":"127.0.0.1:19092","frame":30,`; !strings.Contains(out, want) {
		t.Errorf("--json holds no %q", want)
	}
	out, _, _ = kwireInProcess(t, "stats", "--json", path)
	if want := `"conflicts": 1,`; strings.Count(out, want) != 1 {
		t.Errorf("stats --json: %d connections with %q, want 1", strings.Count(out, want), want)
	}
}

// TestReadConflictResegmented: a retransmission whose bytes differ that
// does not cover the delivered packet whole (here the broker's packet 29
// resent one byte shorter, as packet 30, with a topic renamed — as a
// client that resent "beforerst" as "afterrst" did) is a CONFLICT with
// exit status 1, the first copy decoded: it passed unseen with exit 0,
// only whole delivered packets being compared. The same bytes resent
// shorter are no conflict.
func TestReadConflictResegmented(t *testing.T) {
	link, pkts, err := capturetest.ReadPcap(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil || link != 1 {
		t.Fatalf("link %d: %v", link, err)
	}
	const i = 28 // packet 29: 318 bytes the broker sends on stream 2
	p := gopacket.NewPacket(pkts[i].Data, layers.LayerTypeEthernet, gopacket.Default)
	ip, _ := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
	if tcp, _ := p.Layer(layers.LayerTypeTCP).(*layers.TCP); tcp == nil || ip == nil || len(tcp.Payload) != 318 || len(pkts[i].Data) != 14+int(ip.Length) {
		t.Fatalf("packet 29: %v", p.Layers())
	}
	// shorter is packet 29 without its last byte, its IPv4 total length
	// one less.
	shorter := func(data string) capturetest.Packet {
		b := []byte(data[:len(data)-1])
		binary.BigEndian.PutUint16(b[16:], ip.Length-1)
		return capturetest.Packet{Time: pkts[i].Time, Data: b, Length: len(b)}
	}
	for _, tc := range []struct {
		name     string
		resent   capturetest.Packet
		conflict bool
	}{
		{"other bytes", shorter(strings.Replace(string(pkts[i].Data), "capgen-codecs", "capgen-CODECS", 1)), true},
		{"same bytes", shorter(string(pkts[i].Data)), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mod := append(append(append([]capturetest.Packet{}, pkts[:i+1]...), tc.resent), pkts[i+1:]...)
			path := writeTemp(t, "conflict.pcap", pcapOf(mod).Bytes)
			out, errOut, code := kwireInProcess(t, "read", path)
			line := " stream 2 127.0.0.1:19092 → 127.0.0.1:44320 CONFLICT 318 bytes packet 30 (retransmission with different data: packet 30 resends 318 bytes at stream offset 794 that packet 29 carried, with other bytes; the first copy is decoded)\n"
			if got := strings.Contains(out, line); got != tc.conflict || strings.Contains(out, "capgen-CODECS") {
				t.Errorf("CONFLICT line %v, want %v, or not the first copy, in\n%s", got, tc.conflict, out)
			}
			want, wantCode := "", exitOK
			if tc.conflict {
				want, wantCode = "kwire: warning: the capture could not be fully dissected: 1 retransmission with different data (the first copy is decoded)\n", exitData
			}
			if code != wantCode || errOut != want {
				t.Errorf("exit %d, stderr %q; want %d, %q", code, errOut, wantCode, want)
			}
		})
	}
}

// TestReadUnparsedPackets: packets past a parsing limit of kwire's own
// (here more than 8 VLAN tags) are counted and said — "N packets could
// not be parsed (N with more than 8 VLAN tags)" — with exit status 1: a
// Kafka capture all of whose packets are past it read as one without
// Kafka, exit 0. At the limit (8 tags) everything is read.
func TestReadUnparsedPackets(t *testing.T) {
	golden := goldenPcap(t, "kgo-produce-consume.pcap")
	link, pkts, err := capturetest.ReadPcap(golden)
	if err != nil || link != 1 {
		t.Fatalf("link %d: %v", link, err)
	}
	tagged := func(n int) string {
		out := make([]capturetest.Packet, len(pkts))
		for i, p := range pkts {
			d := append([]byte{}, p.Data[:12]...)
			for range n {
				d = append(d, 0x81, 0x00, 0x00, 0x01)
			}
			d = append(d, p.Data[12:]...)
			out[i] = capturetest.Packet{Time: p.Time, Data: d, Length: p.Length + 4*n}
		}
		return writeTemp(t, fmt.Sprintf("vlan%d.pcap", n), pcapOf(out).Bytes)
	}
	want, _, _ := kwireInProcess(t, "read", golden)
	out, errOut, code := kwireInProcess(t, "read", tagged(8))
	if code != exitOK || errOut != "" || out != want {
		t.Errorf("8 tags: exit %d, stderr %q, output the same as untagged: %v", code, errOut, out == want)
	}
	out, errOut, code = kwireInProcess(t, "read", tagged(9))
	n := len(pkts)
	if want := fmt.Sprintf("anomalies: %d packets could not be parsed (%d with more than 8 VLAN tags)\n", n, n); !strings.HasSuffix(out, want) {
		t.Errorf("9 tags: stdout\n%s\nwant it to end %q", out, want)
	}
	if want := fmt.Sprintf("kwire: warning: %d packets could not be parsed (%d with more than 8 VLAN tags): not dissected\nkwire: no Kafka connections found: no TCP connections in %d packets, %d of which could not be parsed\n", n, n, n, n); code != exitData || errOut != want {
		t.Errorf("9 tags: exit %d, stderr %q; want %d, %q", code, errOut, exitData, want)
	}
}

// TestReadCountInFlight: -c stops the read; a request then waiting for
// its response is in flight, not unanswered — its response may come
// later in the capture (here it does) — and a frame partly read when the
// read stopped (connection 1's 4 MiB request) was cut by the stop, not by
// the capture: dropped, no truncated frame, exit 0. They were "1
// unanswered", "1 truncated frame", exit 1.
func TestReadCountInFlight(t *testing.T) {
	apiReq := func(corr byte) []byte {
		b, _ := hex.DecodeString("0000001300120000000000" + fmt.Sprintf("%02x", corr) + "0009776972652d72656164")
		return b
	}
	apiResp := func(corr byte) []byte {
		b, _ := hex.DecodeString("0000000a000000" + fmt.Sprintf("%02x", corr) + "000000000000")
		return b
	}
	c := newTCPCapture(19092, true) // connection 0: 10.0.0.1
	c.data(true, apiReq(1))
	a := c.seq
	// Connection 1 (10.0.0.3): an exchange (the one -c 1 shows), then a
	// request of 4 MiB, far more than the reader reads ahead.
	c.client, c.seq = [4]byte{10, 0, 0, 3}, [2]uint32{7000, 9000}
	const syn, ack = 0x02, 0x10
	c.packet(true, syn, nil)
	c.packet(false, syn|ack, nil)
	c.packet(true, ack, nil)
	c.data(true, apiReq(7))
	c.data(false, apiResp(7))
	big := make([]byte, 4<<20)
	copy(big, apiReq(8))
	binary.BigEndian.PutUint32(big, uint32(len(big)-4))
	c.stream(true, big)
	c.data(false, apiResp(8))
	// Connection 0's response, at the end.
	c.client, c.seq = [4]byte{10, 0, 0, 1}, a
	c.data(false, apiResp(1))
	path := writeTemp(t, "inflight.pcap", c.buf)

	for _, procs := range []int{1, 2} {
		code, out, errOut := runIn(t, procs, "read", "-c", "1", path)
		if !strings.Contains(out, "ApiVersions v0 corr=7 client=wire-read") {
			t.Errorf("procs %d: the first exchange is not shown:\n%s", procs, out)
		}
		if want := "frames 3, exchanges 2: 1 paired, 1 in flight at stop\n"; code != exitOK || !strings.Contains(out, want) || strings.Contains(out, "truncated") || strings.Contains(out, "unanswered") {
			t.Errorf("procs %d: exit %d, stdout\n%s\nstderr %q; want %q, exit 0", procs, code, out, errOut, want)
		}
	}
}

// TestWriteEmptySelection: -w with a selection that holds no exchange
// writes a file of no packets, as asked, and warns: it used to say only
// "written: 0 packets of 0 exchanges" among the summary's lines.
func TestWriteEmptySelection(t *testing.T) {
	out := filepath.Join(t.TempDir(), "none.pcapng")
	_, errOut, code := kwireInProcess(t, "read", "-f", "host 192.0.2.1", "-w", out, goldenPcap(t, "kgo-produce-consume.pcap"))
	if want := "kwire: warning: -w " + out + ": no exchange was selected: the file holds no packets\n"; code != exitOK || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want %q", code, errOut, want)
	}
	_, errOut, _ = kwireInProcess(t, "read", "-c", "2", "-w", out, goldenPcap(t, "kgo-produce-consume.pcap"))
	if strings.Contains(errOut, "no exchange was selected") {
		t.Errorf("warned of a selection of 2 exchanges: %q", errOut)
	}
}

// The JSON kind of a request in flight when -c stopped the read.
func TestExchangeKindInFlight(t *testing.T) {
	e := &dissect.Exchange{Kind: dissect.KindUnanswered}
	if k := render.ExchangeKind(e); k != "unanswered" {
		t.Errorf("unanswered: %q", k)
	}
	e.InFlight = true
	if k := render.ExchangeKind(e); k != "inFlight" {
		t.Errorf("in flight: %q", k)
	}
	var f exchangeFields
	f.fill(e, false)
	if f.Kind != "inFlight" {
		t.Errorf("--filter's kind: %q", f.Kind)
	}
}
