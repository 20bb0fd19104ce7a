package reassembly

import (
	"encoding/binary"
	"io"
)

// Decryption Secrets Blocks (pcapng, draft-ietf-opsawg-pcapng section
// 4.7; block type 0x0000000A): key material written into a capture, by
// `editcap --inject-secrets tls,KEYLOG` or by eBPF capture tools.
// gopacket's pcapgo reader skips them, so dsbTap watches the pcapng byte
// stream on its way to the reader and hands each one's secrets to
// Options.Secrets (TLS key logs are of type SecretsTLSKeyLog). It keeps
// only the block being read and at most maxDSB bytes of it: a larger
// block is skipped.

// SecretsTLSKeyLog is the secrets type of a Decryption Secrets Block
// holding an NSS key log ("TLSK").
const SecretsTLSKeyLog = 0x544c534b

const (
	blockDSB = 0x0000000a
	blockSHB = 0x0a0d0d0a
	maxDSB   = 16 << 20
)

// dsbTap is an io.Reader passing r's bytes through and calling fn with
// the secrets type and data of each Decryption Secrets Block.
type dsbTap struct {
	r     io.Reader
	fn    func(kind uint32, data []byte)
	order binary.ByteOrder // of the current section; nil before the first
	hdr   [12]byte         // block type, total length, first body word
	nhdr  int
	left  int64  // bytes of the current block still to come
	keep  []byte // the DSB being read (after its 8-byte header)
	dsb   bool
	off   bool // the stream is not pcapng as expected: stop looking
}

func (t *dsbTap) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if !t.off {
		t.scan(p[:n])
	}
	return n, err
}

func (t *dsbTap) scan(b []byte) {
	for len(b) > 0 && !t.off {
		if t.left == 0 {
			k := copy(t.hdr[t.nhdr:], b)
			t.nhdr += k
			b = b[k:]
			if t.nhdr < len(t.hdr) {
				return
			}
			t.nhdr = 0
			t.start()
			continue
		}
		k := int(min(int64(len(b)), t.left))
		if t.dsb {
			t.keep = append(t.keep, b[:k]...)
		}
		b = b[k:]
		t.left -= int64(k)
		if t.left == 0 && t.dsb {
			t.deliver()
		}
	}
}

// start reads a block header.
func (t *dsbTap) start() {
	if binary.BigEndian.Uint32(t.hdr[:4]) == blockSHB {
		// The byte-order magic 0x1A2B3C4D says the section's order.
		switch binary.LittleEndian.Uint32(t.hdr[8:]) {
		case 0x1a2b3c4d:
			t.order = binary.LittleEndian
		case 0x4d3c2b1a:
			t.order = binary.BigEndian
		default:
			t.off = true
			return
		}
	}
	if t.order == nil {
		t.off = true
		return
	}
	n := int64(t.order.Uint32(t.hdr[4:8]))
	if n < 12 || n%4 != 0 {
		t.off = true
		return
	}
	t.left = n - 12
	t.dsb = t.order.Uint32(t.hdr[:4]) == blockDSB && n <= maxDSB
	if t.dsb {
		t.keep = append(t.keep[:0], t.hdr[8:]...)
		if t.left == 0 {
			t.deliver()
		}
	}
}

// deliver hands a whole DSB's secrets to fn: secrets type, secrets
// length, the secrets (padded), options, total length.
func (t *dsbTap) deliver() {
	t.dsb = false
	b := t.keep
	if len(b) < 8 {
		return
	}
	kind, n := t.order.Uint32(b), int64(t.order.Uint32(b[4:]))
	if n > int64(len(b)-8) {
		return
	}
	t.fn(kind, b[8:8+n])
	if cap(t.keep) > 64<<10 {
		t.keep = nil
	}
}
