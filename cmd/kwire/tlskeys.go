package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/tlsdec"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// tlsKeys is a run's TLS key material: the --tls-keylog files (NSS key
// log format) and the secrets of the captures' pcapng Decryption Secrets
// Blocks. With follow (kwire live) the files are read again, from where
// they ended, whenever a connection looks up a client random not yet
// known (at most every followEvery): clients append a line per
// connection while it handshakes. It implements tlsdec.Keys.
type tlsKeys struct {
	kl     tlsdec.KeyLog
	paths  []string
	follow bool

	mu    sync.Mutex
	files []*os.File // follow: open files, nil until a path exists
	last  time.Time
	dsb   int // Decryption Secrets Blocks read

	maxBytes int64 // --max-tls-key-memory (kl.MaxBytes), for messages

	// waiting are the follow notes for files empty or missing at the
	// start (followNotes).
	waiting []string
}

// followEvery bounds how often kwire live re-reads the key log files.
const followEvery = 20 * time.Millisecond

// loadTLSKeys reads the key log files. A file that cannot be read, or
// holds no key log line (empty), is a usage error, except with follow
// (kwire live): a file that does not exist yet or is empty is read again
// as it grows (a client will write to it), and followNotes says so.
// maxBytes bounds the secrets kept, the files' and the Decryption Secrets
// Blocks' together (tlsdec.KeyLog.MaxBytes; 0: no bound).
func loadTLSKeys(paths []string, follow bool, maxBytes int64) (*tlsKeys, error) {
	k := &tlsKeys{paths: paths, follow: follow, files: make([]*os.File, len(paths)), maxBytes: maxBytes}
	k.kl.MaxBytes = maxBytes
	for i, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			if follow && errors.Is(err, fs.ErrNotExist) {
				k.waiting = append(k.waiting, fmt.Sprintf("--tls-keylog %s does not exist yet: it is read once it does, as it grows", p))
				continue
			}
			k.close()
			return nil, usageErrorf("--tls-keylog: %v", err)
		}
		lines0, bad0 := k.kl.Lines()
		br := bufio.NewReader(f)
		head, _ := br.Peek(utf16Sniff)
		var r io.Reader = br
		switch e, ok := keyLogUTF16(head); {
		case ok && follow:
			// Growing files are read again from where they ended, as
			// written: a UTF-16 one would be lines of NULs, none a key.
			f.Close()
			k.close()
			return nil, usageErrorf("--tls-keylog %s is UTF-16 (%s), which kwire live does not read as it grows: convert it to UTF-8 (iconv -f %s -t UTF-8 %s > keys.log, or in PowerShell Get-Content %s | Set-Content -Encoding ascii keys.log) or give the clients' own key log (SSLKEYLOGFILE writes UTF-8)",
				p, e, e.iconv, p, p)
		case ok:
			// A key log passed through Windows PowerShell's > is UTF-16,
			// with a byte order mark or (Out-File -Encoding Unicode in
			// some versions, editors) without: read as what it is.
			r = transform.NewReader(br, e.decoder())
		case !follow:
			// UTF-8 with a byte order mark (a Windows editor): the mark
			// is dropped.
			r = transform.NewReader(br, unicode.BOMOverride(encoding.Nop.NewDecoder()))
		}
		n, err := io.Copy(&k.kl, r)
		if err != nil {
			f.Close()
			k.close()
			return nil, usageErrorf("--tls-keylog %s: %v", p, err)
		}
		if follow {
			k.files[i] = f
			if lines, _ := k.kl.Lines(); lines == lines0 {
				k.waiting = append(k.waiting, fmt.Sprintf("--tls-keylog %s is empty: it is read again as it grows", p))
			}
			continue
		}
		k.kl.Flush()
		f.Close()
		if lines, _ := k.kl.Lines(); lines == lines0 {
			// No key at all: saying nothing would read as "no key log
			// given", and every TLS connection would stay encrypted.
			k.close()
			what := "is empty"
			if n > 0 {
				what = "holds no key log line (only comments and blank lines)"
			}
			return nil, usageErrorf("--tls-keylog %s %s: no key to decrypt with; give the file the clients wrote their keys to (SSLKEYLOGFILE, tls.Config.KeyLogWriter) once they had connected", p, what)
		}
		if lines, bad := k.kl.Lines(); lines > lines0 && bad-bad0 == lines-lines0 {
			// Not a key log at all (a wrong file): saying nothing would
			// read as "no key log given".
			k.close()
			return nil, usageErrorf("--tls-keylog %s: none of its %d lines is an NSS key log line (LABEL CLIENT_RANDOM SECRET, e.g. CLIENT_RANDOM <64 hex digits> <96 hex digits>)", p, lines-lines0)
		}
	}
	return k, nil
}

// utf16Sniff is how many bytes of a key log keyLogUTF16 looks at.
const utf16Sniff = 512

// utf16Form is a UTF-16 key log's byte order and whether it starts with a
// byte order mark.
type utf16Form struct {
	big, bom bool
	iconv    string // iconv's name of it: UTF-16LE, UTF-16BE, or UTF-16 with a mark
}

func (e utf16Form) String() string {
	s := "little-endian"
	if e.big {
		s = "big-endian"
	}
	if e.bom {
		return s + ", with a byte order mark"
	}
	return s + ", no byte order mark"
}

// decoder decodes the form to UTF-8, dropping a byte order mark.
func (e utf16Form) decoder() transform.Transformer {
	if e.bom {
		return unicode.BOMOverride(encoding.Nop.NewDecoder())
	}
	order := unicode.LittleEndian
	if e.big {
		order = unicode.BigEndian
	}
	return unicode.UTF16(order, unicode.IgnoreBOM).NewDecoder()
}

// keyLogUTF16 reports whether a key log that starts with head is UTF-16,
// and in which form. A byte order mark (FF FE, FE FF) says so; without
// one, a key log is text of ASCII (labels, hex, '#' comments) in which
// UTF-8 has no NUL byte and UTF-16 one in every other byte: little-endian
// when nine in ten of head's 16-bit units are a non-zero byte then a NUL
// (and none the other way), big-endian the other way round. Two units at
// least are needed.
func keyLogUTF16(head []byte) (utf16Form, bool) {
	switch {
	case len(head) >= 2 && head[0] == 0xff && head[1] == 0xfe:
		return utf16Form{bom: true, iconv: "UTF-16"}, true
	case len(head) >= 2 && head[0] == 0xfe && head[1] == 0xff:
		return utf16Form{big: true, bom: true, iconv: "UTF-16"}, true
	}
	units := len(head) / 2
	var le, be int
	for i := 0; i+1 < len(head); i += 2 {
		switch a, b := head[i], head[i+1]; {
		case a != 0 && b == 0:
			le++
		case a == 0 && b != 0:
			be++
		}
	}
	switch {
	case units < 2:
	case le >= 2 && be == 0 && le*10 >= units*9:
		return utf16Form{iconv: "UTF-16LE"}, true
	case be >= 2 && le == 0 && be*10 >= units*9:
		return utf16Form{big: true, iconv: "UTF-16BE"}, true
	}
	return utf16Form{}, false
}

// Lookup implements tlsdec.Keys.
func (k *tlsKeys) Lookup(cr [32]byte) (tlsdec.Secrets, bool) {
	if s, ok := k.kl.Lookup(cr); ok || !k.follow {
		return s, ok
	}
	if k.refresh() {
		return k.kl.Lookup(cr)
	}
	return tlsdec.Secrets{}, false
}

// Len implements tlsdec.Keys.
func (k *tlsKeys) Len() int { return k.kl.Len() }

// given says whether secrets were given at all: some are kept, or all
// were dropped past --max-tls-key-memory (then a TLS connection not
// decrypted is one whose key was given and lost, not one with no key log).
func (k *tlsKeys) given() bool { return k != nil && (k.kl.Len() > 0 || k.kl.Dropped() > 0) }

// Dropped implements tlsdec.Dropper.
func (k *tlsKeys) Dropped() int { return k.kl.Dropped() }

// Refresh implements tlsdec.Refresher: it reads what was appended to the
// files now, however recently it last looked.
func (k *tlsKeys) Refresh() {
	if !k.follow {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.readLocked()
}

// refresh reads what was appended to the files, at most every
// followEvery; it reports whether it looked.
func (k *tlsKeys) refresh() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if time.Since(k.last) < followEvery {
		return false
	}
	k.readLocked()
	return true
}

func (k *tlsKeys) readLocked() {
	k.last = time.Now()
	for i, p := range k.paths {
		if k.files[i] == nil {
			f, err := os.Open(p)
			if err != nil {
				continue
			}
			k.files[i] = f
		}
		io.Copy(&k.kl, k.files[i])
	}
}

// followNotes says once, at the start of kwire live, which key log files
// are empty or missing: they are read again as clients write to them,
// and TLS connections are decrypted once their keys are there.
func (k *tlsKeys) followNotes(w io.Writer) {
	if k == nil {
		return
	}
	for _, n := range k.waiting {
		fmt.Fprintf(w, "kwire: note: %s (TLS connections are decrypted once their keys are in it)\n", n)
	}
}

// secrets takes a Decryption Secrets Block (reassembly.Options.Secrets).
func (k *tlsKeys) secrets(s reassembly.DecryptionSecrets) {
	if s.Type != reassembly.SecretsTLSKeyLog {
		return
	}
	k.mu.Lock()
	k.dsb++
	k.mu.Unlock()
	k.kl.Write(s.Data)
	k.kl.Write([]byte{'\n'})
}

// keyMemoryHint is a --max-tls-key-memory that would have kept the
// dropped client randoms too: a power of two past what the kept ones took
// a random, times all of them.
func (k *tlsKeys) keyMemoryHint(dropped, kept int) byteSize {
	need := k.maxBytes / int64(max(kept, 1)) * int64(dropped+kept)
	b := int64(1 << 20)
	for b < need || b < 2*k.maxBytes {
		b *= 2
	}
	return byteSize(b)
}

// blocks returns how many Decryption Secrets Blocks of TLS keys were read
// (0 for a nil k).
func (k *tlsKeys) blocks() int {
	if k == nil {
		return 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dsb
}

func (k *tlsKeys) close() {
	for _, f := range k.files {
		if f != nil {
			f.Close()
		}
	}
}

// warnings says what was wrong with the key logs, for standard error.
func (k *tlsKeys) warnings(w io.Writer) {
	if k == nil {
		return
	}
	if lines, bad := k.kl.Lines(); bad > 0 {
		fmt.Fprintf(w, "kwire: warning: %d of %d key log lines are not NSS key log lines (LABEL CLIENT_RANDOM SECRET) and were skipped\n", bad, lines)
	}
	if n := k.kl.Dropped(); n > 0 {
		kept := k.kl.Len()
		fmt.Fprintf(w, "kwire: warning: the secrets of %d TLS client random%s, those read first, were dropped: the key logs and Decryption Secrets Blocks hold more than --max-tls-key-memory keeps (%v, %d client random%s); a TLS connection that needed them is not decrypted; raise it, e.g. --max-tls-key-memory %v, or 0 for no bound\n",
			n, plural(n), byteSize(k.maxBytes), kept, plural(kept), k.keyMemoryHint(n, kept))
	}
}
