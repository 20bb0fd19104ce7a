package tlsdec

import (
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"testing"
)

// seal13 encrypts a TLS 1.3 record (RFC 8446 section 5.2) for the tests:
// content, then its content type, under p at sequence number seq.
func seal13(p *protection, seq uint64, typ byte, content []byte) []byte {
	inner := append(append([]byte(nil), content...), typ)
	n := len(inner) + p.aead.Overhead()
	hdr := []byte{ctApplicationData, 3, 3, byte(n >> 8), byte(n)}
	nonce := make([]byte, 12)
	copy(nonce, p.iv)
	var sq [8]byte
	binary.BigEndian.PutUint64(sq[:], seq)
	subtle.XORBytes(nonce[4:], nonce[4:], sq[:])
	return p.aead.Seal(hdr, nonce, inner, hdr)
}

// keyUpdater sits between a Go TLS 1.3 client and the server: after the
// client's second application record it sends a KeyUpdate with
// update_requested in the client's name, and re-encrypts the client's
// later records under the next traffic secret. Go's server answers with
// a KeyUpdate of its own: so both directions change keys, one by Go's
// crypto/tls.
func keyUpdater(t *testing.T, kl *KeyLog, cr *[32]byte) func(net.Conn) net.Conn {
	return func(up net.Conn) net.Conn {
		client, mine := net.Pipe()
		suiteID := make(chan uint16, 1)
		go func() {
			// Server to client, untouched; the ServerHello tells the
			// suite (Go picks AES or ChaCha20 by the machine).
			hdr := make([]byte, 5)
			first := true
			for {
				if _, err := io.ReadFull(up, hdr); err != nil {
					mine.Close()
					return
				}
				frag := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
				if _, err := io.ReadFull(up, frag); err != nil {
					mine.Close()
					return
				}
				if first {
					first = false
					sid := int(frag[4+2+32])
					suiteID <- binary.BigEndian.Uint16(frag[4+2+32+1+sid:])
				}
				if _, err := mine.Write(append(hdr, frag...)); err != nil {
					return
				}
			}
		}()
		go func() {
			defer up.Close()
			var s *suite
			var old, next *protection
			encrypted, shift := 0, uint64(0)
			hdr := make([]byte, 5)
			for {
				if _, err := io.ReadFull(mine, hdr); err != nil {
					return
				}
				frag := make([]byte, binary.BigEndian.Uint16(hdr[3:]))
				if _, err := io.ReadFull(mine, frag); err != nil {
					return
				}
				rec := append(append([]byte(nil), hdr...), frag...)
				if hdr[0] == ctClientHelloRecord(hdr, frag) {
					copy(cr[:], frag[4+2:4+2+32])
				}
				if hdr[0] == ctApplicationData {
					encrypted++
					if encrypted >= 2 && old == nil { // the first one is the client's Finished
						s = suiteByID(<-suiteID)
						sec, _ := kl.Lookup(*cr)
						key, iv := trafficKeys13(s, sec.ClientTraffic)
						old, _ = newProtection(s, true, key, iv, nil, false)
						key, iv = trafficKeys13(s, nextSecret13(s, sec.ClientTraffic))
						next, _ = newProtection(s, true, key, iv, nil, false)
					}
					switch app := uint64(encrypted - 2); {
					case old != nil && app == 2:
						// KeyUpdate(update_requested) under the old key at
						// the sequence number the client's record would
						// have had; that record follows under the new key.
						if _, err := up.Write(seal13(old, app, ctHandshake, []byte{hsKeyUpdate, 0, 0, 1, 1})); err != nil {
							return
						}
						shift = app
						fallthrough
					case old != nil && app > 2:
						old.seq = app
						pt, typ, err := old.open(nil, [5]byte(hdr), frag)
						if err != nil {
							t.Errorf("keyUpdater: %v", err)
							return
						}
						rec = seal13(next, app-shift, typ, pt)
					}
				}
				if _, err := up.Write(rec); err != nil {
					return
				}
			}
		}()
		return client
	}
}

// ctClientHelloRecord returns ctHandshake when hdr and frag are a
// ClientHello record, else 0.
func ctClientHelloRecord(hdr, frag []byte) byte {
	if hdr[0] == ctHandshake && len(frag) > 38 && frag[0] == hsClientHello {
		return ctHandshake
	}
	return 0
}

func TestKeyUpdate(t *testing.T) {
	rec := &recording{}
	var kl KeyLog
	var cr [32]byte
	c, s := configs(t, &kl, tls.VersionTLS13, 0)
	runVia(t, rec, c, s, nil, keyUpdater(t, &kl, &cr))
	col := replay(rec.pkts, Options{Keys: &kl})
	checkSession(t, col, rec.pkts)
	var updates [2]int
	for _, e := range col.events {
		if e.Kind == EventKeyUpdate {
			updates[e.Dir]++
		}
	}
	if updates != [2]int{1, 1} {
		t.Errorf("KeyUpdates per direction %v, want [1 1]; events %s", updates, describe(col.events))
	}
}
