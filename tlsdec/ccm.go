package tlsdec

import (
	"crypto/cipher"
	"crypto/subtle"
	"encoding/binary"
	"errors"
)

// ccm is AES-CCM (RFC 3610; NIST SP 800-38C) as TLS uses it (RFC 6655,
// RFC 8446): a 12-byte nonce (so a 3-byte length field, L = 3) and a tag
// of 16 or 8 bytes. Only Open is needed to read captures; Seal exists for
// the tests. The standard library and x/crypto have no CCM.
type ccm struct {
	b   cipher.Block
	tag int
}

func newCCM(b cipher.Block, tag int) cipher.AEAD { return &ccm{b: b, tag: tag} }

const ccmNonce = 12

func (c *ccm) NonceSize() int { return ccmNonce }
func (c *ccm) Overhead() int  { return c.tag }

// ctr fills out with the key stream block of counter i (A_i of RFC 3610
// section 2.3).
func (c *ccm) ctr(out *[16]byte, nonce []byte, i uint32) {
	out[0] = byte(15 - len(nonce) - 1) // L-1
	copy(out[1:], nonce)
	out[13], out[14], out[15] = byte(i>>16), byte(i>>8), byte(i)
	c.b.Encrypt(out[:], out[:])
}

// mac is the CBC-MAC T of RFC 3610 section 2.2 over ad and plaintext.
func (c *ccm) mac(nonce, plaintext, ad []byte) [16]byte {
	var x [16]byte
	flags := byte(0)
	if len(ad) > 0 {
		flags |= 0x40
	}
	flags |= byte((c.tag-2)/2) << 3
	flags |= byte(15 - len(nonce) - 1)
	x[0] = flags
	copy(x[1:], nonce)
	n := len(plaintext)
	x[13], x[14], x[15] = byte(n>>16), byte(n>>8), byte(n)
	c.b.Encrypt(x[:], x[:])
	block := func(b []byte) {
		subtle.XORBytes(x[:len(b)], x[:len(b)], b)
		c.b.Encrypt(x[:], x[:])
	}
	if len(ad) > 0 {
		// ad is under 2^16-2^8 bytes in TLS: a 2-byte length prefix.
		var first [16]byte
		binary.BigEndian.PutUint16(first[:], uint16(len(ad)))
		k := copy(first[2:], ad)
		block(first[:])
		for rest := ad[k:]; len(rest) > 0; {
			var b [16]byte
			m := copy(b[:], rest)
			rest = rest[m:]
			block(b[:])
		}
	}
	for rest := plaintext; len(rest) > 0; {
		var b [16]byte
		m := copy(b[:], rest)
		rest = rest[m:]
		block(b[:])
	}
	return x
}

// xorStream XORs src with the key stream from counter 1 into dst.
func (c *ccm) xorStream(dst, src, nonce []byte) {
	var ks [16]byte
	for i := uint32(1); len(src) > 0; i++ {
		c.ctr(&ks, nonce, i)
		n := subtle.XORBytes(dst, src, ks[:])
		dst, src = dst[n:], src[n:]
	}
}

func (c *ccm) Seal(dst, nonce, plaintext, ad []byte) []byte {
	t := c.mac(nonce, plaintext, ad)
	var s0 [16]byte
	c.ctr(&s0, nonce, 0)
	start := len(dst)
	dst = append(dst, make([]byte, len(plaintext)+c.tag)...)
	out := dst[start:]
	c.xorStream(out, plaintext, nonce)
	subtle.XORBytes(out[len(plaintext):], t[:c.tag], s0[:c.tag])
	return dst
}

var errCCM = errors.New("ccm: message authentication failed")

func (c *ccm) Open(dst, nonce, ciphertext, ad []byte) ([]byte, error) {
	if len(ciphertext) < c.tag || len(nonce) != ccmNonce || len(ciphertext)-c.tag >= 1<<24 {
		return nil, errCCM
	}
	n := len(ciphertext) - c.tag
	start := len(dst)
	dst = append(dst, ciphertext[:n]...)
	out := dst[start:]
	c.xorStream(out, out, nonce)
	t := c.mac(nonce, out, ad)
	var s0 [16]byte
	c.ctr(&s0, nonce, 0)
	subtle.XORBytes(t[:c.tag], t[:c.tag], s0[:c.tag])
	if subtle.ConstantTimeCompare(t[:c.tag], ciphertext[n:]) != 1 {
		clear(out)
		return dst[:start], errCCM
	}
	return dst, nil
}
