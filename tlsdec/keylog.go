package tlsdec

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"sync"
)

// The NSS key log format (the format of SSLKEYLOGFILE, of Go's
// tls.Config.KeyLogWriter, of OpenSSL's SSL_CTX_set_keylog_callback and of
// pcapng Decryption Secrets Blocks of type TLS Key Log, 0x544c534b): one
// secret per line, "LABEL <client random, 64 hex digits> <secret, hex>";
// lines starting with '#' and blank lines are comments. The labels kept:
//
//	CLIENT_RANDOM                    TLS 1.2 and earlier: the 48-byte master secret
//	CLIENT_HANDSHAKE_TRAFFIC_SECRET  TLS 1.3 (RFC 8446 section 7.1)
//	SERVER_HANDSHAKE_TRAFFIC_SECRET
//	CLIENT_TRAFFIC_SECRET_0
//	SERVER_TRAFFIC_SECRET_0
//
// Other labels (CLIENT_EARLY_TRAFFIC_SECRET, EXPORTER_SECRET,
// EARLY_EXPORTER_SECRET, RSA, PMS_CLIENT_RANDOM...) are skipped, as are
// lines that do not parse (counted in KeyLog.Malformed).

// maxKeyLogLine bounds a key log line: the longest valid one (a 31-byte
// label, a 64-digit client random and a 64-byte secret in hex) is under
// 240 bytes. A longer line is malformed; while it lasts, its bytes are not
// kept.
const maxKeyLogLine = 512

// maxSecret is the longest secret accepted: a SHA-512 sized traffic
// secret (64 bytes); TLS 1.3's are 32 or 48 bytes, master secrets 48.
const maxSecret = 64

// Secrets are the secrets a key log holds for one client random (the
// ClientHello.random of a connection). A nil slice was not logged.
type Secrets struct {
	Master          []byte // CLIENT_RANDOM: the TLS 1.2 master secret (RFC 5246 section 8.1)
	ClientHandshake []byte // CLIENT_HANDSHAKE_TRAFFIC_SECRET (RFC 8446 section 7.1)
	ServerHandshake []byte // SERVER_HANDSHAKE_TRAFFIC_SECRET
	ClientTraffic   []byte // CLIENT_TRAFFIC_SECRET_0
	ServerTraffic   []byte // SERVER_TRAFFIC_SECRET_0
}

// tls13 reports whether s holds a TLS 1.3 secret.
func (s *Secrets) tls13() bool {
	return s.ClientHandshake != nil || s.ServerHandshake != nil || s.ClientTraffic != nil || s.ServerTraffic != nil
}

// Keys is where a connection's secrets come from: a KeyLog, or anything
// that can look one up by client random. Implementations must be safe for
// use by several goroutines.
type Keys interface {
	// Lookup returns the secrets logged for a client random.
	Lookup(clientRandom [32]byte) (Secrets, bool)
	// Len is the number of client randoms with at least one secret, as
	// messages say it ("no key for this client random (12 keys loaded)").
	Len() int
}

// Dropper is implemented by Keys that drop secrets past a memory bound
// (KeyLog.MaxBytes): a connection with no key says how many were
// dropped, its own maybe among them.
type Dropper interface {
	// Dropped is the number of client randoms dropped with their secrets.
	Dropped() int
}

// Refresher is implemented by Keys that can learn secrets later (kwire
// live re-reads a growing key log at most every few milliseconds): a
// connection closing while its secrets are still missing calls Refresh
// once, unthrottled, before it reports that it has no key.
type Refresher interface {
	Refresh()
}

// KeyLog holds the secrets of NSS key log lines. Write and AddLine add
// lines; Lookup finds them. It is safe for use by several goroutines: in
// kwire live the key log file is re-read while connections look secrets
// up. The zero value is an empty key log with no memory bound.
type KeyLog struct {
	// MaxBytes bounds the memory the secrets take, in bytes: KeyCost for
	// each client random plus the bytes of its secrets. Past it the
	// client randoms added first are dropped, their secrets with them
	// (Dropped counts them): a key log, or a capture's Decryption
	// Secrets Blocks, of millions of lines (a few megabytes compressed)
	// would otherwise hold hundreds of bytes a line for the whole run.
	// 0: no bound. Set it before the first line is added.
	MaxBytes int64

	mu        sync.RWMutex
	m         map[[32]byte]*Secrets
	order     [][32]byte // the client randoms of m, oldest first from head
	head      int
	used      int64 // KeyCost a client random in m, plus its secrets
	dropped   int
	partial   []byte // an unfinished line of Write
	long      bool   // the unfinished line is over maxKeyLogLine: dropped
	malformed int
	lines     int
}

// KeyCost is what KeyLog.MaxBytes counts for a client random besides its
// secrets' bytes: its map entry, its Secrets and its place in the
// eviction order (32 bytes, up to twice as the order grows), about 240
// bytes as TestKeyLogCost measures them.
const KeyCost = 320

// Write adds the lines in p: it implements io.Writer so that a key log
// file can be copied into it as it grows. A line may arrive in pieces; an
// unfinished last line is kept until its newline comes (Flush takes it as
// it is). It never fails.
func (k *KeyLog) Write(p []byte) (int, error) {
	n := len(p)
	k.mu.Lock()
	defer k.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			k.keepPartial(p)
			break
		}
		line := p[:i]
		p = p[i+1:]
		if len(k.partial) > 0 || k.long {
			k.keepPartial(line)
			line, k.partial = k.partial, k.partial[:0]
			long := k.long
			k.long = false
			if long {
				k.lines++
				k.malformed++
				continue
			}
		}
		k.addLocked(line)
	}
	return n, nil
}

func (k *KeyLog) keepPartial(p []byte) {
	if k.long || len(k.partial)+len(p) > maxKeyLogLine {
		k.long = true
		k.partial = k.partial[:0]
		return
	}
	k.partial = append(k.partial, p...)
}

// Flush takes an unfinished last line written as a whole line.
func (k *KeyLog) Flush() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.long {
		k.lines++
		k.malformed++
	} else if len(k.partial) > 0 {
		k.addLocked(k.partial)
	}
	k.partial, k.long = k.partial[:0], false
}

// AddLine adds one key log line (without its newline). It returns an
// error saying what is wrong with a line that is neither a comment, nor
// blank, nor a well-formed secret (unknown labels are not errors).
func (k *KeyLog) AddLine(line []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.addLocked(line)
}

func (k *KeyLog) addLocked(line []byte) error {
	line = bytes.TrimRight(line, "\r")
	line = bytes.TrimPrefix(line, utf8BOM) // a file saved by a Windows editor
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] == '#' {
		return nil
	}
	k.lines++
	label, cr, secret, err := parseKeyLogLine(line)
	if err != nil {
		k.malformed++
		return err
	}
	var slot *[]byte
	if k.m == nil {
		k.m = make(map[[32]byte]*Secrets)
	}
	s := k.m[cr]
	added := s == nil
	if added {
		s = new(Secrets)
	}
	switch label {
	case "CLIENT_RANDOM":
		slot = &s.Master
	case "CLIENT_HANDSHAKE_TRAFFIC_SECRET":
		slot = &s.ClientHandshake
	case "SERVER_HANDSHAKE_TRAFFIC_SECRET":
		slot = &s.ServerHandshake
	case "CLIENT_TRAFFIC_SECRET_0":
		slot = &s.ClientTraffic
	case "SERVER_TRAFFIC_SECRET_0":
		slot = &s.ServerTraffic
	default:
		return nil // a label kwire does not use
	}
	k.used += int64(len(secret) - len(*slot))
	*slot = secret
	if added {
		k.m[cr] = s
		k.used += KeyCost
		k.order = append(k.order, cr)
	}
	k.evictLocked()
	return nil
}

// evictLocked drops the oldest client randoms while the secrets take more
// than MaxBytes.
func (k *KeyLog) evictLocked() {
	for k.MaxBytes > 0 && k.used > k.MaxBytes && k.head < len(k.order) {
		cr := k.order[k.head]
		k.order[k.head] = [32]byte{}
		k.head++
		if s := k.m[cr]; s != nil {
			k.used -= KeyCost + int64(len(s.Master)+len(s.ClientHandshake)+len(s.ServerHandshake)+len(s.ClientTraffic)+len(s.ServerTraffic))
			delete(k.m, cr)
			k.dropped++
		}
	}
	if k.head > 1024 && k.head > len(k.order)/2 {
		// Compact the order: its dropped half would otherwise stay
		// allocated for ever.
		n := copy(k.order, k.order[k.head:])
		clear(k.order[n:])
		k.order = k.order[:n]
		k.head = 0
	}
}

// Dropped returns how many client randoms were dropped, with their
// secrets, past MaxBytes.
func (k *KeyLog) Dropped() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.dropped
}

// utf8BOM is the byte order mark some Windows tools write at the start of
// a UTF-8 text file.
var utf8BOM = []byte("\ufeff")

// parseKeyLogLine splits "LABEL CLIENTRANDOM SECRET".
func parseKeyLogLine(line []byte) (label string, cr [32]byte, secret []byte, err error) {
	if len(line) > maxKeyLogLine {
		return "", cr, nil, fmt.Errorf("line of %d bytes, longer than any key log line", len(line))
	}
	f := bytes.Fields(line)
	if len(f) != 3 {
		return "", cr, nil, fmt.Errorf("%d fields, want 3 (label, client random, secret)", len(f))
	}
	label = string(f[0])
	for _, c := range f[0] {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return "", cr, nil, fmt.Errorf("label %q is not a key log label", f[0])
		}
	}
	if len(f[1]) != 64 {
		return "", cr, nil, fmt.Errorf("client random of %d hex digits, want 64", len(f[1]))
	}
	if _, err := hex.Decode(cr[:], f[1]); err != nil {
		return "", cr, nil, fmt.Errorf("client random: %v", err)
	}
	if len(f[2])%2 != 0 || len(f[2]) == 0 || len(f[2]) > 2*maxSecret {
		return "", cr, nil, fmt.Errorf("secret of %d hex digits", len(f[2]))
	}
	secret = make([]byte, len(f[2])/2)
	if _, err := hex.Decode(secret, f[2]); err != nil {
		return "", cr, nil, fmt.Errorf("secret: %v", err)
	}
	if label == "CLIENT_RANDOM" && len(secret) != 48 {
		return "", cr, nil, fmt.Errorf("CLIENT_RANDOM master secret of %d bytes, want 48", len(secret))
	}
	return label, cr, secret, nil
}

// Lookup implements Keys.
func (k *KeyLog) Lookup(cr [32]byte) (Secrets, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	s := k.m[cr]
	if s == nil {
		return Secrets{}, false
	}
	return *s, true
}

// Len implements Keys: the client randoms with a secret.
func (k *KeyLog) Len() int {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return len(k.m)
}

// Lines returns the secret lines read (comments and blank lines not
// counted) and, of them, those that did not parse.
func (k *KeyLog) Lines() (lines, malformed int) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.lines, k.malformed
}
