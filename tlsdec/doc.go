// Package tlsdec decrypts captured TLS 1.2 and TLS 1.3 connections with
// the secrets of a key log (NSS key log format), for a dissector that
// reads what the connection carried.
//
// It sits between TCP reassembly and the application dissector: a Conn
// is fed each direction's reassembled bytes (Data, Gap), frames TLS
// records (RFC 8446 section 5; RFC 5246 section 6.2), reads the
// ClientHello and ServerHello (random, version with supported_versions,
// cipher suite, SNI, ALPN, extended master secret, encrypt-then-MAC),
// looks the connection's secrets up by client random (Keys, KeyLog), and
// derives the record keys: TLS 1.3 with HKDF-Expand-Label from the logged
// traffic secrets (RFC 8446 section 7), following the handshake-to-
// application key change at each side's Finished and KeyUpdate (section
// 7.2); TLS 1.2 with the PRF's key expansion from the logged master
// secret (RFC 5246 section 6.3), switching at each ChangeCipherSpec.
// Records are opened with AES-GCM, AES-CCM, ChaCha20-Poly1305 (RFC 5288,
// RFC 6655, RFC 7905, RFC 8446 section 5.3) or AES/3DES-CBC with HMAC,
// MAC-then-encrypt or encrypt-then-MAC (RFC 5246 section 6.2.3.2, RFC
// 7366); the suites are listed in suites.go. Application data goes to the
// Handler as plaintext; alerts, key updates and what could not be
// decrypted go as Events.
//
// Contract:
//   - Every plaintext byte keeps the packet that carried it: Plaintext is
//     called once per packet a record's bytes came in, with that packet's
//     Mark (byte i of a record's plaintext is byte offset+i of its
//     fragment, where offset is the explicit nonce or IV).
//   - Nothing undecryptable is passed on as plaintext. A record that
//     fails authentication ends the direction: Lost is called and the
//     rest is counted (EventUndecrypted at Close), never delivered.
//   - Memory per Conn is bounded: one record (MaxRecord bytes) and one
//     handshake message (64 KiB) per direction; a hostile length is
//     rejected, never allocated. Records held for keys (Options.Wait) are
//     accounted through Options.Reserve, which may refuse them.
//   - It knows nothing of what the connection carries, reads no files,
//     logs nothing and does not panic on any input.
package tlsdec
