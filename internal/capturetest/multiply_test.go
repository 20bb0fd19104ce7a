package capturetest

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

type multPacket struct {
	ci   gopacket.CaptureInfo
	data []byte
}

func readMult(t *testing.T, b []byte) ([]multPacket, layers.LinkType) {
	t.Helper()
	r, err := pcapgo.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []multPacket
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		out = append(out, multPacket{ci, append([]byte(nil), data...)})
	}
	return out, r.LinkType()
}

// TestMultiply copies kgo-produce-consume.pcap three times and checks
// that each copy is the source with its client address replaced, its
// time shifted and its checksums right, merged in time order.
func TestMultiply(t *testing.T) {
	srcFile := filepath.Join("..", "..", "pcaps", "kgo-produce-consume.pcap")
	src, err := os.ReadFile(srcFile)
	if err != nil {
		t.Skipf("no source capture: %v", err)
	}
	const copies, gap = 3, 40 * time.Millisecond
	var out bytes.Buffer
	st, err := Multiply(bytes.NewReader(src), &out, MultiplyOptions{Copies: copies, Gap: gap})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := readMult(t, src)
	got, link := readMult(t, out.Bytes())
	if st.Packets != int64(len(want)) || st.Conns != 41 {
		t.Errorf("stats %+v, want %d packets and 41 connections", st, len(want))
	}
	if len(got) != copies*len(want) {
		t.Fatalf("%d packets, want %d", len(got), copies*len(want))
	}
	var again bytes.Buffer
	if _, err := Multiply(bytes.NewReader(src), &again, MultiplyOptions{Copies: copies, Gap: gap}); err != nil || !bytes.Equal(again.Bytes(), out.Bytes()) {
		t.Errorf("a second run gave other bytes (err %v)", err)
	}

	next := make([]int, copies) // per copy: index of its next source packet
	clients := map[string]bool{}
	for i, g := range got {
		if i > 0 && g.ci.Timestamp.Before(got[i-1].ci.Timestamp) {
			t.Fatalf("packet %d at %v before packet %d at %v", i, g.ci.Timestamp, i-1, got[i-1].ci.Timestamp)
		}
		pk := gopacket.NewPacket(g.data, link, gopacket.Default)
		ip, _ := pk.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		tcp, _ := pk.Layer(layers.LayerTypeTCP).(*layers.TCP)
		if ip == nil || tcp == nil {
			t.Fatalf("packet %d: not TCP over IPv4", i)
		}
		// The copy is told by the client address 10.0.0.k+1; the
		// broker keeps 127.0.0.1.
		client, broker, cport := ip.SrcIP, ip.DstIP, tcp.SrcPort
		if tcp.SrcPort == 19092 {
			client, broker, cport = broker, client, tcp.DstPort
		}
		if !broker.Equal(net.IPv4(127, 0, 0, 1)) || client[0] != 10 {
			t.Fatalf("packet %d: %v → %v, want a 10/8 client and broker 127.0.0.1", i, ip.SrcIP, ip.DstIP)
		}
		k := int(binary.BigEndian.Uint32(client.To4())&0xffffff) - 1
		if k < 0 || k >= copies {
			t.Fatalf("packet %d: client %v is no copy's", i, client)
		}
		clients[net.JoinHostPort(client.String(), cport.String())] = true
		w := want[next[k]]
		next[k]++
		if d := g.ci.Timestamp.Sub(w.ci.Timestamp); d != time.Duration(k)*gap {
			t.Fatalf("packet %d (copy %d): shifted by %v, want %v", i, k, d, time.Duration(k)*gap)
		}
		if g.ci.Length != w.ci.Length || len(g.data) != len(w.data) {
			t.Fatalf("packet %d: length %d/%d, want %d/%d", i, g.ci.Length, len(g.data), w.ci.Length, len(w.data))
		}
		// Everything but the client address and the two checksums is
		// the source's.
		masked := func(b []byte) []byte {
			b = append([]byte(nil), b...)
			ipOff := 14
			ihl := int(b[ipOff]&0xf) * 4
			clear(b[ipOff+10 : ipOff+12]) // IPv4 header checksum
			if tcp.SrcPort == 19092 {
				clear(b[ipOff+16 : ipOff+20])
			} else {
				clear(b[ipOff+12 : ipOff+16])
			}
			clear(b[ipOff+ihl+16 : ipOff+ihl+18]) // TCP checksum
			return b
		}
		if !bytes.Equal(masked(g.data), masked(w.data)) {
			t.Fatalf("packet %d (copy %d) differs from source packet %d beyond address and checksums", i, k, next[k]-1)
		}
		// The checksums are right for the new address.
		hdr := g.data[14 : 14+int(ip.IHL)*4]
		if sum := foldedSum(hdr); sum != 0xffff {
			t.Fatalf("packet %d: IPv4 header checksum does not verify (%#04x)", i, sum)
		}
		pseudo := append(append(append([]byte(nil), ip.SrcIP.To4()...), ip.DstIP.To4()...), 0, 6, 0, 0)
		seg := g.data[14+int(ip.IHL)*4 : 14+int(ip.Length)]
		binary.BigEndian.PutUint16(pseudo[10:], uint16(len(seg)))
		if sum := foldedSum(append(pseudo, seg...)); sum != 0xffff {
			t.Fatalf("packet %d: TCP checksum does not verify (%#04x)", i, sum)
		}
	}
	if len(clients) != copies*41 {
		t.Errorf("%d client endpoints, want %d", len(clients), copies*41)
	}
}

// foldedSum is the folded one's complement sum of b (RFC 1071): 0xffff
// over data that includes its own correct checksum.
func foldedSum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// TestMultiplyNoSYN: a connection whose start is not in the source is
// refused without Ports and told apart with them.
func TestMultiplyNoSYN(t *testing.T) {
	var src bytes.Buffer
	w := pcapgo.NewWriter(&src)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1700000000, 0)
	for i, dir := range []bool{true, false} { // to the broker, then back
		eth := &layers.Ethernet{SrcMAC: make(net.HardwareAddr, 6), DstMAC: make(net.HardwareAddr, 6), EthernetType: layers.EthernetTypeIPv4}
		ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: net.IPv4(192, 0, 2, 7), DstIP: net.IPv4(192, 0, 2, 1)}
		tcp := &layers.TCP{SrcPort: 40000, DstPort: 9092, ACK: true, PSH: true, Seq: 100, Window: 512}
		if !dir {
			ip.SrcIP, ip.DstIP = ip.DstIP, ip.SrcIP
			tcp.SrcPort, tcp.DstPort = tcp.DstPort, tcp.SrcPort
		}
		if err := tcp.SetNetworkLayerForChecksum(ip); err != nil {
			t.Fatal(err)
		}
		buf := gopacket.NewSerializeBuffer()
		if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
			eth, ip, tcp, gopacket.Payload("abcd")); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: t0.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(b), Length: len(b)}, b); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Multiply(bytes.NewReader(src.Bytes()), &bytes.Buffer{}, MultiplyOptions{Copies: 2, Gap: time.Second})
	if err == nil || !strings.Contains(err.Error(), "no SYN") {
		t.Fatalf("without Ports: err %v, want one about the missing SYN", err)
	}
	var out bytes.Buffer
	if _, err := Multiply(bytes.NewReader(src.Bytes()), &out, MultiplyOptions{Copies: 2, Gap: time.Second, Ports: []uint16{9092}}); err != nil {
		t.Fatal(err)
	}
	got, link := readMult(t, out.Bytes())
	var addrs []string
	for _, g := range got {
		ip := gopacket.NewPacket(g.data, link, gopacket.Default).Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		addrs = append(addrs, ip.SrcIP.String()+">"+ip.DstIP.String())
	}
	if want := "10.0.0.1>192.0.2.1 192.0.2.1>10.0.0.1 10.0.0.2>192.0.2.1 192.0.2.1>10.0.0.2"; strings.Join(addrs, " ") != want {
		t.Errorf("addresses %v, want %s", addrs, want)
	}
}
