package tlsdec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/hmac"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"hash"

	"golang.org/x/crypto/chacha20poly1305"
)

// Record protection: one direction's keys and sequence number, opening
// TLSCiphertext records (RFC 5246 section 6.2.3, RFC 8446 section 5.2).

// errAuth is a record that does not authenticate: a wrong key, a wrong
// sequence number (records lost), or corrupt data.
var errAuth = errors.New("record failed authentication")

// errShort is a record too short for its cipher's overhead.
var errShort = errors.New("record shorter than its cipher's overhead")

// protection is the read state of one direction under one key.
type protection struct {
	s     *suite
	tls13 bool
	seq   uint64

	aead     cipher.AEAD
	iv       []byte // 12 bytes XORed with the sequence number, or TLS 1.2 GCM/CCM's 4-byte salt
	explicit int    // explicit nonce bytes in each record (TLS 1.2 GCM and CCM: 8)

	block  cipher.Block // CBC
	mac    hash.Hash    // CBC: HMAC with the MAC key
	etm    bool         // CBC: encrypt_then_mac (RFC 7366)
	macBuf []byte

	nonce [12]byte
	ad    [13]byte
}

// newProtection makes the read state for key, iv (and macKey for CBC).
func newProtection(s *suite, tls13 bool, key, iv, macKey []byte, etm bool) (*protection, error) {
	p := &protection{s: s, tls13: tls13, iv: iv, etm: etm}
	var err error
	switch s.kind {
	case kindGCM:
		var b cipher.Block
		if b, err = aes.NewCipher(key); err == nil {
			p.aead, err = cipher.NewGCM(b)
		}
	case kindChaCha:
		p.aead, err = chacha20poly1305.New(key)
	case kindCCM, kindCCM8:
		var b cipher.Block
		if b, err = aes.NewCipher(key); err == nil {
			tag := 16
			if s.kind == kindCCM8 {
				tag = 8
			}
			p.aead = newCCM(b, tag)
		}
	case kindCBC:
		p.block, err = aes.NewCipher(key)
	case kind3DES:
		p.block, err = des.NewTripleDESCipher(key)
	default:
		err = errors.New("unsupported cipher")
	}
	if err != nil {
		return nil, err
	}
	if p.block != nil {
		p.mac = hmac.New(s.mac, macKey)
	}
	if !tls13 && p.aead != nil && s.kind != kindChaCha {
		p.explicit = 8
	}
	return p, nil
}

// overhead is the least number of fragment bytes a record needs beyond
// its plaintext, and the plaintext's offset in the fragment.
func (p *protection) offset() int {
	if p.block != nil {
		return p.block.BlockSize()
	}
	return p.explicit
}

// open decrypts one record: hdr is its 5-byte header, frag its fragment.
// The plaintext (TLS 1.3: the inner plaintext's content, padding and
// content type removed) is appended to dst; typ is its content type. The
// plaintext's bytes are those of frag from offset() on. The sequence
// number advances whether or not the record authenticates.
func (p *protection) open(dst []byte, hdr [5]byte, frag []byte) (pt []byte, typ byte, err error) {
	seq := p.seq
	p.seq++
	if p.block != nil {
		return p.openCBC(dst, hdr, frag, seq)
	}
	tag := p.aead.Overhead()
	if len(frag) < p.explicit+tag {
		return dst, 0, errShort
	}
	// Nonce: TLS 1.3 and ChaCha20 XOR the sequence number into the IV;
	// TLS 1.2 GCM and CCM take the record's explicit nonce after the salt.
	nonce := p.nonce[:p.aead.NonceSize()]
	if p.explicit > 0 {
		copy(nonce, p.iv)
		copy(nonce[len(p.iv):], frag[:p.explicit])
	} else {
		copy(nonce, p.iv)
		var s [8]byte
		binary.BigEndian.PutUint64(s[:], seq)
		subtle.XORBytes(nonce[len(nonce)-8:], nonce[len(nonce)-8:], s[:])
	}
	ct := frag[p.explicit:]
	var ad []byte
	if p.tls13 {
		ad = p.ad[:5]
		copy(ad, hdr[:])
	} else {
		ad = p.ad[:]
		binary.BigEndian.PutUint64(ad, seq)
		ad[8], ad[9], ad[10] = hdr[0], hdr[1], hdr[2]
		binary.BigEndian.PutUint16(ad[11:], uint16(len(ct)-tag))
	}
	start := len(dst)
	out, err := p.aead.Open(dst, nonce, ct, ad)
	if err != nil {
		return dst, 0, errAuth
	}
	if !p.tls13 {
		return out, hdr[0], nil
	}
	// TLSInnerPlaintext: content, content type, zero padding (RFC 8446
	// section 5.4).
	i := len(out) - 1
	for i >= start && out[i] == 0 {
		i--
	}
	if i < start {
		return dst, 0, errors.New("TLS 1.3 record without a content type (all padding)")
	}
	return out[:i], out[i], nil
}

// openCBC decrypts a CBC record: IV, then the encrypted plaintext, MAC
// and padding (MAC-then-encrypt, RFC 5246 section 6.2.3.2), or with
// encrypt_then_mac the MAC over IV and ciphertext after them (RFC 7366).
func (p *protection) openCBC(dst []byte, hdr [5]byte, frag []byte, seq uint64) ([]byte, byte, error) {
	bs := p.block.BlockSize()
	ml := p.mac.Size()
	macAt := len(frag)
	if p.etm {
		if len(frag) < bs+bs+ml {
			return dst, 0, errShort
		}
		macAt = len(frag) - ml
		if !hmac.Equal(p.sum(seq, hdr, frag[:macAt]), frag[macAt:]) {
			return dst, 0, errAuth
		}
	}
	enc := frag[bs:macAt]
	if len(enc) < bs || len(enc)%bs != 0 || !p.etm && len(enc) < ml+1 {
		return dst, 0, errShort
	}
	start := len(dst)
	dst = append(dst, enc...)
	out := dst[start:]
	cipher.NewCBCDecrypter(p.block, frag[:bs]).CryptBlocks(out, out)
	pad := int(out[len(out)-1])
	end := len(out) - 1 - pad
	if end < 0 || !p.etm && end < ml {
		return dst[:start], 0, errAuth
	}
	for _, c := range out[end : len(out)-1] {
		if int(c) != pad {
			return dst[:start], 0, errAuth
		}
	}
	if !p.etm {
		end -= ml
		if !hmac.Equal(p.sum(seq, hdr, out[:end]), out[end:end+ml]) {
			return dst[:start], 0, errAuth
		}
	}
	return dst[:start+end], hdr[0], nil
}

// sum is the record MAC (RFC 5246 section 6.2.3.1): HMAC(seq_num ||
// type || version || length || data).
func (p *protection) sum(seq uint64, hdr [5]byte, data []byte) []byte {
	var h [13]byte
	binary.BigEndian.PutUint64(h[:], seq)
	h[8], h[9], h[10] = hdr[0], hdr[1], hdr[2]
	binary.BigEndian.PutUint16(h[11:], uint16(len(data)))
	p.mac.Reset()
	p.mac.Write(h[:])
	p.mac.Write(data)
	p.macBuf = p.mac.Sum(p.macBuf[:0])
	return p.macBuf
}
