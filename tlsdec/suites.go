package tlsdec

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"fmt"
	"hash"
)

// Cipher suites decrypted, by IANA number and name (the TLS Cipher Suites
// registry). To add a suite: a row in suites with its record protection
// (cipher kind and key length; for CBC its MAC hash) and the hash of its
// PRF (TLS 1.2) or HKDF (TLS 1.3); a new cipher kind also needs a case in
// newProtection (cipher.go) and a test session in conn_test.go.

// Protocol versions (RFC 8446 section 4.2.1's numbering).
const (
	VersionTLS10 = 0x0301
	VersionTLS11 = 0x0302
	VersionTLS12 = 0x0303
	VersionTLS13 = 0x0304
)

// VersionName returns "TLS 1.2" for 0x0303, "SSL 3.0" for 0x0300 and
// "0x%04x" for anything else.
func VersionName(v uint16) string {
	switch v {
	case 0x0300:
		return "SSL 3.0"
	case VersionTLS10:
		return "TLS 1.0"
	case VersionTLS11:
		return "TLS 1.1"
	case VersionTLS12:
		return "TLS 1.2"
	case VersionTLS13:
		return "TLS 1.3"
	}
	return fmt.Sprintf("0x%04x", v)
}

// cipherKind is a record protection algorithm.
type cipherKind uint8

const (
	kindGCM    cipherKind = iota + 1 // AES-GCM (RFC 5288; RFC 8446 section 5.3)
	kindChaCha                       // ChaCha20-Poly1305 (RFC 7905; RFC 8446)
	kindCCM                          // AES-CCM, 16-byte tag (RFC 6655; RFC 8446)
	kindCCM8                         // AES-CCM, 8-byte tag
	kindCBC                          // AES-CBC with HMAC (RFC 5246 section 6.2.3.2)
	kind3DES                         // 3DES-EDE-CBC with HMAC
)

// suite is one cipher suite's parameters.
type suite struct {
	id     uint16
	name   string
	tls13  bool
	kind   cipherKind
	keyLen int              // encryption key bytes
	mac    func() hash.Hash // CBC suites: the record MAC's hash
	prf    func() hash.Hash // the PRF's (TLS 1.2) or HKDF's (TLS 1.3) hash
}

var suites = []suite{
	// TLS 1.3 (RFC 8446 appendix B.4).
	{0x1301, "TLS_AES_128_GCM_SHA256", true, kindGCM, 16, nil, sha256.New},
	{0x1302, "TLS_AES_256_GCM_SHA384", true, kindGCM, 32, nil, sha512.New384},
	{0x1303, "TLS_CHACHA20_POLY1305_SHA256", true, kindChaCha, 32, nil, sha256.New},
	{0x1304, "TLS_AES_128_CCM_SHA256", true, kindCCM, 16, nil, sha256.New},
	{0x1305, "TLS_AES_128_CCM_8_SHA256", true, kindCCM8, 16, nil, sha256.New},

	// TLS 1.2 AEAD (RFC 5288, RFC 5289, RFC 7905, RFC 6655, RFC 7251).
	{0x009c, "TLS_RSA_WITH_AES_128_GCM_SHA256", false, kindGCM, 16, nil, sha256.New},
	{0x009d, "TLS_RSA_WITH_AES_256_GCM_SHA384", false, kindGCM, 32, nil, sha512.New384},
	{0x009e, "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256", false, kindGCM, 16, nil, sha256.New},
	{0x009f, "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384", false, kindGCM, 32, nil, sha512.New384},
	{0xc02b, "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", false, kindGCM, 16, nil, sha256.New},
	{0xc02c, "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", false, kindGCM, 32, nil, sha512.New384},
	{0xc02f, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", false, kindGCM, 16, nil, sha256.New},
	{0xc030, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", false, kindGCM, 32, nil, sha512.New384},
	{0xcca8, "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", false, kindChaCha, 32, nil, sha256.New},
	{0xcca9, "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", false, kindChaCha, 32, nil, sha256.New},
	{0xccaa, "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256", false, kindChaCha, 32, nil, sha256.New},
	{0xc09c, "TLS_RSA_WITH_AES_128_CCM", false, kindCCM, 16, nil, sha256.New},
	{0xc09d, "TLS_RSA_WITH_AES_256_CCM", false, kindCCM, 32, nil, sha256.New},
	{0xc09e, "TLS_DHE_RSA_WITH_AES_128_CCM", false, kindCCM, 16, nil, sha256.New},
	{0xc09f, "TLS_DHE_RSA_WITH_AES_256_CCM", false, kindCCM, 32, nil, sha256.New},
	{0xc0a0, "TLS_RSA_WITH_AES_128_CCM_8", false, kindCCM8, 16, nil, sha256.New},
	{0xc0a1, "TLS_RSA_WITH_AES_256_CCM_8", false, kindCCM8, 32, nil, sha256.New},
	{0xc0ac, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM", false, kindCCM, 16, nil, sha256.New},
	{0xc0ad, "TLS_ECDHE_ECDSA_WITH_AES_256_CCM", false, kindCCM, 32, nil, sha256.New},
	{0xc0ae, "TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8", false, kindCCM8, 16, nil, sha256.New},
	{0xc0af, "TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8", false, kindCCM8, 32, nil, sha256.New},

	// TLS 1.2 CBC with HMAC (RFC 5246 appendix A.5, RFC 4492, RFC 5289).
	{0x002f, "TLS_RSA_WITH_AES_128_CBC_SHA", false, kindCBC, 16, sha1.New, sha256.New},
	{0x0033, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA", false, kindCBC, 16, sha1.New, sha256.New},
	{0x0035, "TLS_RSA_WITH_AES_256_CBC_SHA", false, kindCBC, 32, sha1.New, sha256.New},
	{0x0039, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA", false, kindCBC, 32, sha1.New, sha256.New},
	{0x003c, "TLS_RSA_WITH_AES_128_CBC_SHA256", false, kindCBC, 16, sha256.New, sha256.New},
	{0x003d, "TLS_RSA_WITH_AES_256_CBC_SHA256", false, kindCBC, 32, sha256.New, sha256.New},
	{0x0067, "TLS_DHE_RSA_WITH_AES_128_CBC_SHA256", false, kindCBC, 16, sha256.New, sha256.New},
	{0x006b, "TLS_DHE_RSA_WITH_AES_256_CBC_SHA256", false, kindCBC, 32, sha256.New, sha256.New},
	{0xc009, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", false, kindCBC, 16, sha1.New, sha256.New},
	{0xc00a, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", false, kindCBC, 32, sha1.New, sha256.New},
	{0xc013, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", false, kindCBC, 16, sha1.New, sha256.New},
	{0xc014, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", false, kindCBC, 32, sha1.New, sha256.New},
	{0xc023, "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", false, kindCBC, 16, sha256.New, sha256.New},
	{0xc024, "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", false, kindCBC, 32, sha512.New384, sha512.New384},
	{0xc027, "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", false, kindCBC, 16, sha256.New, sha256.New},
	{0xc028, "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384", false, kindCBC, 32, sha512.New384, sha512.New384},
	{0x000a, "TLS_RSA_WITH_3DES_EDE_CBC_SHA", false, kind3DES, 24, sha1.New, sha256.New},
	{0xc012, "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", false, kind3DES, 24, sha1.New, sha256.New},
}

// suiteByID returns the suite numbered id, or nil.
func suiteByID(id uint16) *suite {
	for i := range suites {
		if suites[i].id == id {
			return &suites[i]
		}
	}
	return nil
}

// SuiteName returns the IANA name of cipher suite id when kwire decrypts
// it, else "0x%04x".
func SuiteName(id uint16) string {
	if s := suiteByID(id); s != nil {
		return s.name
	}
	return fmt.Sprintf("0x%04x", id)
}

// ivLen is the bytes of IV a suite derives per direction: the implicit
// nonce of AEAD suites (4 for TLS 1.2 GCM and CCM, 12 for ChaCha20 and all
// of TLS 1.3), none for CBC (its IV is explicit in each record).
func (s *suite) ivLen() int {
	switch {
	case s.tls13 || s.kind == kindChaCha:
		return 12
	case s.kind == kindCBC || s.kind == kind3DES:
		return 0
	}
	return 4
}

// macLen is the HMAC key (and tag) length of a CBC suite, else 0.
func (s *suite) macLen() int {
	if s.mac == nil {
		return 0
	}
	return s.mac().Size()
}

// prf12 is the TLS 1.2 PRF (RFC 5246 section 5): P_hash(secret, label ||
// seed), n bytes.
func prf12(h func() hash.Hash, secret []byte, label string, seed []byte, n int) []byte {
	ls := make([]byte, 0, len(label)+len(seed))
	ls = append(append(ls, label...), seed...)
	out := make([]byte, 0, n+64)
	mac := hmac.New(h, secret)
	mac.Write(ls)
	a := mac.Sum(nil) // A(1)
	for len(out) < n {
		mac.Reset()
		mac.Write(a)
		mac.Write(ls)
		out = mac.Sum(out)
		mac.Reset()
		mac.Write(a)
		a = mac.Sum(a[:0])
	}
	return out[:n]
}

// keyBlock12 derives one connection's TLS 1.2 keys from its master secret
// (RFC 5246 section 6.3): key_block = PRF(master, "key expansion",
// server_random || client_random), cut into the client and server MAC
// keys, encryption keys and IVs, in that order.
func keyBlock12(s *suite, master []byte, clientRandom, serverRandom [32]byte) (cMAC, sMAC, cKey, sKey, cIV, sIV []byte) {
	seed := make([]byte, 0, 64)
	seed = append(append(seed, serverRandom[:]...), clientRandom[:]...)
	m, k, iv := s.macLen(), s.keyLen, s.ivLen()
	b := prf12(s.prf, master, "key expansion", seed, 2*(m+k+iv))
	take := func(n int) []byte {
		x := b[:n:n]
		b = b[n:]
		return x
	}
	cMAC, sMAC = take(m), take(m)
	cKey, sKey = take(k), take(k)
	cIV, sIV = take(iv), take(iv)
	return
}

// MasterSecret12 derives a TLS 1.2 master secret from a pre-master secret
// (RFC 5246 section 8.1): PRF(pre_master, "master secret", client_random
// || server_random), or with the extended master secret extension (RFC
// 7627 section 4) PRF(pre_master, "extended master secret", session_hash),
// where session_hash is the handshake transcript's hash up to and
// including ClientKeyExchange. prfHash is the suite's PRF hash (SHA-256
// unless the suite names SHA-384). The result is 48 bytes.
func MasterSecret12(prfHash func() hash.Hash, preMaster []byte, clientRandom, serverRandom [32]byte, sessionHash []byte) []byte {
	if sessionHash != nil {
		return prf12(prfHash, preMaster, "extended master secret", sessionHash, 48)
	}
	seed := make([]byte, 0, 64)
	seed = append(append(seed, clientRandom[:]...), serverRandom[:]...)
	return prf12(prfHash, preMaster, "master secret", seed, 48)
}

// expandLabel is HKDF-Expand-Label (RFC 8446 section 7.1) with an empty
// context: HKDF-Expand(secret, HkdfLabel, n), HkdfLabel being the length
// n (uint16), "tls13 " + label (with a length byte) and the context (with
// a length byte).
func expandLabel(h func() hash.Hash, secret []byte, label string, context []byte, n int) []byte {
	info := make([]byte, 0, 4+6+len(label)+len(context))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, byte(len(context)))
	info = append(info, context...)
	out, err := hkdf.Expand(h, secret, string(info), n)
	if err != nil {
		// Only a length above 255 hash blocks fails; kwire asks for at
		// most a hash's size.
		panic("tlsdec: " + err.Error())
	}
	return out
}

// trafficKeys13 derives a TLS 1.3 record key and IV from a traffic secret
// (RFC 8446 section 7.3).
func trafficKeys13(s *suite, secret []byte) (key, iv []byte) {
	return expandLabel(s.prf, secret, "key", nil, s.keyLen), expandLabel(s.prf, secret, "iv", nil, 12)
}

// nextSecret13 is the traffic secret after a KeyUpdate (RFC 8446 section
// 7.2): HKDF-Expand-Label(secret, "traffic upd", "", Hash.length).
func nextSecret13(s *suite, secret []byte) []byte {
	return expandLabel(s.prf, secret, "traffic upd", nil, s.prf().Size())
}
