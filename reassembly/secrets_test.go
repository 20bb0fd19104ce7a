package reassembly

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// TestDecryptionSecrets: the secrets of a pcapng file's Decryption
// Secrets Blocks reach Options.Secrets before the packets after them, in
// both byte orders, and a file without any works as before.
func TestDecryptionSecrets(t *testing.T) {
	keylog := []byte("CLIENT_RANDOM 00 11\n")
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriter(&buf, layers.LinkTypeEthernet)
	if err != nil {
		t.Fatal(err)
	}
	pkt := synPacket()
	w.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(pkt), Length: len(pkt)}, pkt)
	if err := w.WriteDecryptionSecretsBlock(SecretsTLSKeyLog, keylog); err != nil {
		t.Fatal(err)
	}
	w.WriteDecryptionSecretsBlock(0x5353484b, []byte("SSH secrets")) // another kind
	w.WritePacket(gopacket.CaptureInfo{Timestamp: time.Unix(2, 0), CaptureLength: len(pkt), Length: len(pkt)}, pkt)
	w.Flush()
	for _, order := range []string{"little", "big"} {
		b := buf.Bytes()
		if order == "big" {
			b = swapNg(t, b)
		}
		path := filepath.Join(t.TempDir(), "s.pcapng")
		os.WriteFile(path, b, 0o600)
		var got []string
		packetsBefore := -1
		h := &countHandler{}
		opts := Options{Synchronous: true, Secrets: func(s DecryptionSecrets) {
			got = append(got, string(s.Data))
			if s.Type == SecretsTLSKeyLog {
				packetsBefore = h.opens
			}
		}}
		sum, err := ReadFiles(context.Background(), []string{path}, opts, h)
		if err != nil {
			t.Fatalf("%s: %v", order, err)
		}
		if len(got) != 2 || got[0] != string(keylog) || got[1] != "SSH secrets" || sum.Packets != 2 {
			t.Errorf("%s endian: secrets %q, packets %d", order, got, sum.Packets)
		}
		if packetsBefore < 0 || packetsBefore > 1 {
			t.Errorf("%s endian: the key log came after %d connections were opened, want at most 1", order, packetsBefore)
		}
	}
}

// countHandler counts Opens.
type countHandler struct{ opens int }

func (c *countHandler) Open(*Conn)                       { c.opens++ }
func (c *countHandler) Data(*Conn, Dir, Chunk)           {}
func (c *countHandler) Gap(*Conn, Dir, int64, time.Time) {}
func (c *countHandler) Close(*Conn, string, time.Time)   {}

// synPacket is an Ethernet/IPv4/TCP SYN with a payload byte.
func synPacket() []byte {
	eth := &layers.Ethernet{SrcMAC: make([]byte, 6), DstMAC: make([]byte, 6), EthernetType: layers.EthernetTypeIPv4}
	ip := &layers.IPv4{Version: 4, TTL: 64, Protocol: layers.IPProtocolTCP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	tcp := &layers.TCP{SrcPort: 40000, DstPort: 9092, Seq: 1, PSH: true, ACK: true, Window: 100}
	tcp.SetNetworkLayerForChecksum(ip)
	out := gopacket.NewSerializeBuffer()
	gopacket.SerializeLayers(out, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, tcp, gopacket.Payload("x"))
	return out.Bytes()
}

// swapNg rewrites a little-endian pcapng file as big-endian: each
// block's header words and those of the blocks' fixed fields this test
// writes (SHB, IDB, EPB, DSB); options and payloads are left as bytes.
func swapNg(t *testing.T, b []byte) []byte {
	t.Helper()
	out := bytes.Clone(b)
	le, be := binary.LittleEndian, binary.BigEndian
	sw32 := func(i int) { be.PutUint32(out[i:], le.Uint32(b[i:])) }
	sw16 := func(i int) { be.PutUint16(out[i:], le.Uint16(b[i:])) }
	for i := 0; i < len(b); {
		typ, n := le.Uint32(b[i:]), int(le.Uint32(b[i+4:]))
		sw32(i)
		sw32(i + 4)
		sw32(i + n - 4)
		body := i + 8
		switch typ {
		case blockSHB:
			sw32(body)
			sw16(body + 4)
			sw16(body + 6)
			for k := 0; k < 8; k++ {
				out[body+8+k] = b[body+8+7-k]
			}
			swapOpts(out, b, body+16, i+n-4)
		case 1: // IDB
			sw16(body)
			sw32(body + 4)
			swapOpts(out, b, body+8, i+n-4)
		case 6: // EPB
			for k := 0; k < 5; k++ {
				sw32(body + 4*k)
			}
			capLen := int(le.Uint32(b[body+12:]))
			swapOpts(out, b, body+20+(capLen+3)&^3, i+n-4)
		case blockDSB:
			sw32(body)
			sw32(body + 4)
			sl := int(le.Uint32(b[body+4:]))
			swapOpts(out, b, body+8+(sl+3)&^3, i+n-4)
		}
		i += n
	}
	return out
}

// swapOpts swaps the code and length of each option in b[from:to].
func swapOpts(out, b []byte, from, to int) {
	le, be := binary.LittleEndian, binary.BigEndian
	for i := from; i+4 <= to; {
		code, n := le.Uint16(b[i:]), int(le.Uint16(b[i+2:]))
		be.PutUint16(out[i:], code)
		be.PutUint16(out[i+2:], uint16(n))
		if code == 0 {
			return
		}
		i += 4 + (n+3)&^3
	}
}
