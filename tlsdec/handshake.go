package tlsdec

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// Handshake messages read (RFC 8446 section 4; RFC 5246 section 7.4):
// ClientHello and ServerHello for the randoms, version, cipher suite and
// extensions; EncryptedExtensions for TLS 1.3's ALPN; Finished and
// KeyUpdate for key changes. Everything else is skipped by its length.

// Handshake message types.
const (
	hsClientHello         = 1
	hsServerHello         = 2
	hsNewSessionTicket    = 4
	hsEndOfEarlyData      = 5
	hsEncryptedExtensions = 8
	hsCertificate         = 11
	hsFinished            = 20
	hsKeyUpdate           = 24
)

// Extensions (IANA TLS ExtensionType Values).
const (
	extServerName       = 0
	extALPN             = 16
	extEncryptThenMAC   = 22
	extExtendedMaster   = 23
	extSessionTicket    = 35
	extPreSharedKey     = 41
	extEarlyData        = 42
	extSupportedVersion = 43
)

// helloRetryRandom is ServerHello.random of a HelloRetryRequest (RFC 8446
// section 4.1.3).
var helloRetryRandom = [32]byte{
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
}

var errHello = errors.New("malformed hello")

// reader is a bounds-checked cursor; a failure is sticky.
type reader struct {
	b   []byte
	bad bool
}

func (r *reader) n(k int) []byte {
	if r.bad || k < 0 || k > len(r.b) {
		r.bad = true
		return nil
	}
	x := r.b[:k]
	r.b = r.b[k:]
	return x
}

func (r *reader) u8() int {
	b := r.n(1)
	if b == nil {
		return 0
	}
	return int(b[0])
}

func (r *reader) u16() int {
	b := r.n(2)
	if b == nil {
		return 0
	}
	return int(binary.BigEndian.Uint16(b))
}

func (r *reader) vec8() []byte  { return r.n(r.u8()) }
func (r *reader) vec16() []byte { return r.n(r.u16()) }

// hello is what the hellos tell.
type hello struct {
	random        [32]byte
	version       uint16   // legacy_version, or the supported_versions choice (ServerHello)
	versions      []uint16 // ClientHello supported_versions
	sessionID     []byte
	suite         uint16   // ServerHello
	suites        []uint16 // ClientHello
	sni           string
	alpn          []string
	ems, etm, psk bool
	earlyData     bool
	ticket        []byte // ClientHello session_ticket (RFC 5077)
}

// parseHello reads a ClientHello or ServerHello body (after the 4-byte
// handshake header).
func parseHello(b []byte, client bool) (*hello, error) {
	r := &reader{b: b}
	h := &hello{}
	h.version = uint16(r.u16())
	copy(h.random[:], r.n(32))
	h.sessionID = bytes.Clone(r.vec8())
	if client {
		cs := &reader{b: r.vec16()}
		for len(cs.b) >= 2 {
			h.suites = append(h.suites, uint16(cs.u16()))
		}
		r.vec8() // compression methods
	} else {
		h.suite = uint16(r.u16())
		r.u8() // compression method
	}
	if r.bad {
		return nil, errHello
	}
	if len(r.b) == 0 {
		return h, nil // no extensions (allowed before TLS 1.3)
	}
	exts := &reader{b: r.vec16()}
	for len(exts.b) > 0 && !exts.bad {
		typ := exts.u16()
		data := &reader{b: exts.vec16()}
		switch typ {
		case extServerName:
			if client {
				list := &reader{b: data.vec16()}
				for len(list.b) > 0 && !list.bad {
					kind := list.u8()
					name := list.vec16()
					if kind == 0 && h.sni == "" {
						h.sni = string(name)
					}
				}
			}
		case extALPN:
			list := &reader{b: data.vec16()}
			for len(list.b) > 0 && !list.bad {
				if p := list.vec8(); p != nil {
					h.alpn = append(h.alpn, string(p))
				}
			}
		case extSessionTicket:
			if client && len(data.b) > 0 {
				h.ticket = bytes.Clone(data.b)
			}
		case extEncryptThenMAC:
			h.etm = true
		case extExtendedMaster:
			h.ems = true
		case extPreSharedKey:
			h.psk = true
		case extEarlyData:
			h.earlyData = true
		case extSupportedVersion:
			if client {
				list := &reader{b: data.vec8()}
				for len(list.b) >= 2 {
					h.versions = append(h.versions, uint16(list.u16()))
				}
			} else if v := data.u16(); !data.bad {
				h.version = uint16(v)
			}
		}
	}
	if exts.bad {
		return nil, errHello
	}
	return h, nil
}

// parseEncryptedExtensions returns the ALPN protocol the server chose
// (RFC 8446 section 4.3.1), if any.
func parseEncryptedExtensions(b []byte) (alpn string, early bool) {
	r := &reader{b: b}
	exts := &reader{b: r.vec16()}
	for len(exts.b) > 0 && !exts.bad {
		typ := exts.u16()
		data := &reader{b: exts.vec16()}
		switch typ {
		case extALPN:
			list := &reader{b: data.vec16()}
			if p := list.vec8(); !list.bad {
				alpn = string(p)
			}
		case extEarlyData:
			early = true
		}
	}
	return alpn, early
}

// peekEE returns the ALPN of an EncryptedExtensions message at the start
// of b (a decrypted handshake record), if b starts with a whole one.
func peekEE(b []byte) (string, bool) {
	if len(b) < 4 || b[0] != hsEncryptedExtensions {
		return "", false
	}
	n := int(b[1])<<16 | int(b[2])<<8 | int(b[3])
	if n > len(b)-4 {
		return "", false
	}
	alpn, _ := parseEncryptedExtensions(b[4 : 4+n])
	return alpn, true
}
