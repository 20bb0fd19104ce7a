package tlsdec

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Sessions between OpenSSL's s_client and s_server (an implementation
// other than Go's, with suites Go lacks: TLS 1.3 AES-256-GCM, ChaCha20
// and CCM chosen by the server, TLS 1.2 CBC with encrypt-then-MAC, CCM),
// through a recording proxy on loopback (ephemeral ports), decrypted
// with s_client's -keylogfile. Skipped without the openssl command.

type opensslCase struct {
	name    string
	server  []string // s_server flags choosing version and suite
	client  []string
	suite   uint16
	version uint16
	etm     bool
}

var opensslCases = []opensslCase{
	// s_client's R between the lines: a renegotiation, the second line
	// under its keys.
	{"TLS12-RENEG", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-GCM-SHA256", "-client_renegotiation"}, nil, 0xc02b, VersionTLS12, false},
	// The client's key share (X25519) is not the server's group: a
	// HelloRetryRequest.
	{"TLS13-HRR", []string{"-tls1_3", "-groups", "P-384"}, []string{"-groups", "X25519:P-384"}, 0x1302, VersionTLS13, false},
	{"TLS13-AES256", []string{"-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384"}, nil, 0x1302, VersionTLS13, false},
	{"TLS13-CHACHA20", []string{"-tls1_3", "-ciphersuites", "TLS_CHACHA20_POLY1305_SHA256"}, nil, 0x1303, VersionTLS13, false},
	{"TLS13-CCM", []string{"-tls1_3", "-ciphersuites", "TLS_AES_128_CCM_SHA256"}, []string{"-ciphersuites", "TLS_AES_128_CCM_SHA256"}, 0x1304, VersionTLS13, false},
	{"TLS13-CCM8", []string{"-tls1_3", "-ciphersuites", "TLS_AES_128_CCM_8_SHA256"}, []string{"-ciphersuites", "TLS_AES_128_CCM_8_SHA256"}, 0x1305, VersionTLS13, false},
	{"TLS12-CBC-SHA-ETM", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA"}, nil, 0xc009, VersionTLS12, true},
	{"TLS12-CBC-SHA384-MtE", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-SHA384", "-no_etm"}, []string{"-no_etm"}, 0xc024, VersionTLS12, false},
	{"TLS12-CBC-SHA256-ETM", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA256"}, nil, 0xc023, VersionTLS12, true},
	{"TLS12-CCM", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES256-CCM"}, []string{"-cipher", "ECDHE-ECDSA-AES256-CCM"}, 0xc0ad, VersionTLS12, false},
	{"TLS12-CCM8", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-CCM8"}, []string{"-cipher", "ECDHE-ECDSA-AES128-CCM8"}, 0xc0ae, VersionTLS12, false},
	{"TLS12-CHACHA20", []string{"-tls1_2", "-cipher", "ECDHE-ECDSA-CHACHA20-POLY1305"}, nil, 0xcca9, VersionTLS12, false},
}

func TestOpenSSL(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("no openssl command")
	}
	dir := t.TempDir()
	ec, _ := certs(t)
	der, _ := x509.MarshalPKCS8PrivateKey(ec.PrivateKey)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ec.Certificate[0]})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	os.WriteFile(filepath.Join(dir, "c.pem"), certPEM, 0o600)
	os.WriteFile(filepath.Join(dir, "k.pem"), keyPEM, 0o600)
	for _, tc := range opensslCases {
		t.Run(tc.name, func(t *testing.T) {
			pkts, kl := runOpenSSL(t, dir, tc)
			if tc.name == "TLS13-HRR" {
				// The server asks for another key share (RFC 8446
				// section 4.1.4): a HelloRetryRequest, then a second
				// ClientHello, with the same random.
				var server []byte
				for _, p := range pkts {
					if p.dir == 1 {
						server = append(server, p.data...)
					}
				}
				if !bytes.Contains(server, helloRetryRandom[:]) {
					t.Fatal("no HelloRetryRequest in the session")
				}
			}
			col := replay(pkts, Options{Keys: kl})
			ev := col.event(EventDecrypting)
			if ev == nil {
				t.Fatalf("not decrypted: %s", describe(col.events))
			}
			if ev.Info.Suite != tc.suite || ev.Info.Version != tc.version || ev.Info.ETM != tc.etm {
				t.Errorf("info %+v", ev.Info)
			}
			if got := string(col.pt[0]); got != "hello world\nsecond line\n" {
				t.Errorf("client sent %q", got)
			}
			if !bytes.Contains(col.pt[1], []byte("dlrow olleh")) || !bytes.Contains(col.pt[1], []byte("enil dnoces")) {
				t.Errorf("server sent %q", col.pt[1])
			}
			var updates [2]int
			for _, e := range col.events {
				if e.Kind == EventKeyUpdate {
					updates[e.Dir]++
				}
				if e.Kind == EventAuthFailed || e.Kind == EventMalformed {
					t.Errorf("event %s", e.Detail)
				}
			}
			if tc.version == VersionTLS13 && updates != [2]int{1, 1} {
				t.Errorf("key updates %v, want one each way (s_client's K)", updates)
			}
			if tc.name == "TLS12-RENEG" {
				checkRenegotiation(t, pkts, kl, col, updates)
			}
		})
	}
}

// runOpenSSL runs s_server and s_client through a recording proxy.
// checkRenegotiation: a TLS 1.2 renegotiation is followed with the key
// log's master secret for its client random (one event, the lines after
// it decrypted, checked by the caller); without that key, the records
// after each side's ChangeCipherSpec are not decrypted, and an event says
// why (not "wrong key").
func checkRenegotiation(t *testing.T, pkts []pkt, kl *KeyLog, col *collector, updates [2]int) {
	t.Helper()
	if kl.Len() != 2 {
		t.Fatalf("key log of %d client randoms, want 2 (the handshake and the renegotiation)", kl.Len())
	}
	if updates[0]+updates[1] != 1 || !strings.Contains(col.event(EventKeyUpdate).Detail, "TLS renegotiation (client random ") {
		t.Errorf("events %s, want one renegotiation", describe(col.events))
	}
	// The first handshake's key alone.
	var first KeyLog
	var firstRandom [32]byte
	var client []byte
	for _, p := range pkts {
		if p.dir == 0 {
			client = append(client, p.data...)
		}
	}
	if len(client) < 43 || client[0] != ctHandshake || client[5] != hsClientHello {
		t.Fatalf("the client's first bytes % x are no ClientHello", client[:min(len(client), 8)])
	}
	copy(firstRandom[:], client[11:43]) // record header 5, handshake header 4, version 2
	s, ok := kl.Lookup(firstRandom)
	if !ok {
		t.Fatalf("no key for the first ClientHello's random %x", firstRandom)
	}
	first.AddLine([]byte(fmt.Sprintf("CLIENT_RANDOM %x %x", firstRandom, s.Master)))
	col = replay(pkts, Options{Keys: &first})
	if got := string(col.pt[0]); got != "hello world\n" {
		t.Errorf("renegotiation without its key: client sent %q, want the first line only", got)
	}
	if col.lost != [2]int{1, 1} {
		t.Errorf("renegotiation without its key: losses %v, want one each way", col.lost)
	}
	var why []string
	for _, e := range col.events {
		if e.Kind == EventAuthFailed {
			t.Errorf("renegotiation without its key: %s", e.Detail)
		}
		if e.Kind == EventUnsupported {
			why = append(why, e.Detail)
		}
	}
	if len(why) != 3 || !strings.HasPrefix(why[0], "TLS renegotiation: no key for its client random ") ||
		why[1] != "TLS renegotiation with no key for its client random: the records after its ChangeCipherSpec are not decrypted" || why[2] != why[1] {
		t.Errorf("renegotiation without its key: events %q", why)
	}

	// Live (Options.Wait): the renegotiation's line comes to the key log
	// later than its handshake, after any packet or only at Close; the
	// records after each side's ChangeCipherSpec wait for it, and the
	// session reads as with every key at the start. It was looked up once,
	// at the ServerHello: missing then, the rest was not decrypted.
	var reneg [32]byte
	for cr := range kl.m {
		if cr != firstRandom {
			reneg = cr
		}
	}
	rs, _ := kl.Lookup(reneg)
	line := []byte(fmt.Sprintf("CLIENT_RANDOM %x %x", reneg, rs.Master))
	full := replay(pkts, Options{Keys: kl})
	for at := range len(pkts) + 1 {
		var late KeyLog
		late.AddLine([]byte(fmt.Sprintf("CLIENT_RANDOM %x %x", firstRandom, s.Master)))
		m := &meter{}
		col := replayLate(pkts, Options{Keys: &late, Wait: true, Reserve: m.reserve}, &late, line, at)
		for dir := range 2 {
			if !bytes.Equal(col.pt[dir], full.pt[dir]) {
				t.Errorf("key after packet %d: dir %d: %q, want %q", at, dir, col.pt[dir], full.pt[dir])
			}
		}
		if col.lost != [2]int{} || m.cur != 0 {
			t.Errorf("key after packet %d: losses %v, %d bytes still reserved", at, col.lost, m.cur)
		}
		if e := col.event(EventKeyUpdate); e == nil || !strings.Contains(e.Detail, "TLS renegotiation (client random ") ||
			col.event(EventUnsupported) != nil || col.event(EventAuthFailed) != nil {
			t.Errorf("key after packet %d: events %s", at, describe(col.events))
		}
	}
	// Never there: given up at Close, as without Wait.
	var never KeyLog
	never.AddLine([]byte(fmt.Sprintf("CLIENT_RANDOM %x %x", firstRandom, s.Master)))
	col = replay(pkts, Options{Keys: &never, Wait: true})
	why = why[:0]
	for _, e := range col.events {
		if e.Kind == EventUnsupported {
			why = append(why, e.Detail)
		}
	}
	if got := string(col.pt[0]); got != "hello world\n" || col.lost != [2]int{1, 1} || len(why) != 3 ||
		!strings.HasPrefix(why[0], "TLS renegotiation: no key for its client random ") ||
		why[1] != "TLS renegotiation with no key for its client random: the records after its ChangeCipherSpec are not decrypted" || why[2] != why[1] {
		t.Errorf("live, renegotiation key never in the key log: client sent %q, losses %v, events %q", got, col.lost, why)
	}
}

// replayLate is replay with line added to kl before packet at (after the
// last, before Close, for len(pkts)): a key log file a client appends to.
func replayLate(pkts []pkt, opts Options, kl *KeyLog, line []byte, at int) *collector {
	col := &collector{}
	c := NewConn(opts, col)
	for i, p := range pkts {
		if i == at {
			kl.AddLine(line)
		}
		c.Data(p.dir, p.data, Mark{Frame: p.frame, Time: time.Unix(p.frame, 0)})
	}
	if at >= len(pkts) {
		kl.AddLine(line)
	}
	c.Close()
	return col
}

func runOpenSSL(t *testing.T, dir string, tc opensslCase) ([]pkt, *KeyLog) {
	t.Helper()
	srv := exec.Command("openssl", append([]string{"s_server", "-accept", "127.0.0.1:0", "-naccept", "1", "-rev",
		"-cert", filepath.Join(dir, "c.pem"), "-key", filepath.Join(dir, "k.pem")}, tc.server...)...)
	out, _ := srv.StdoutPipe()
	srv.Stderr = io.Discard
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	sc := bufio.NewScanner(out)
	addr := ""
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "ACCEPT" {
			addr = f[1]
			break
		}
	}
	if addr == "" {
		t.Fatal("s_server did not say where it listens")
	}
	go io.Copy(io.Discard, out)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rec := &recording{}
	fromServer := make(chan struct{}, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		s, err := net.Dial("tcp", addr)
		if err != nil {
			return
		}
		defer s.Close()
		go func() {
			buf := make([]byte, 1<<16)
			for {
				n, err := s.Read(buf)
				if n > 0 {
					rec.add(1, buf[:n])
					c.Write(buf[:n])
					select {
					case fromServer <- struct{}{}:
					default:
					}
				}
				if err != nil {
					c.(*net.TCPConn).CloseWrite()
					return
				}
			}
		}()
		buf := make([]byte, 1<<16)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				rec.add(0, buf[:n])
				s.Write(buf[:n])
			}
			if err != nil {
				s.(*net.TCPConn).CloseWrite()
				time.Sleep(100 * time.Millisecond)
				return
			}
		}
	}()
	keylog := filepath.Join(dir, tc.name+".keylog")
	cl := exec.Command("openssl", append([]string{"s_client", "-connect", ln.Addr().String(), "-keylogfile", keylog}, tc.client...)...)
	in, _ := cl.StdinPipe()
	cl.Stdout, cl.Stderr = io.Discard, io.Discard
	if err := cl.Start(); err != nil {
		t.Fatal(err)
	}
	wait := func() {
		select {
		case <-fromServer:
		case <-time.After(5 * time.Second):
			t.Error("no answer from s_server")
		}
	}
	drain := func() {
		for {
			select {
			case <-fromServer:
			case <-time.After(200 * time.Millisecond):
				return
			}
		}
	}
	drain() // the handshake
	for _, line := range []string{"hello world\n", "K\n", "R\n", "second line\n"} {
		if line == "K\n" && tc.version != VersionTLS13 {
			continue
		}
		if line == "R\n" && tc.name != "TLS12-RENEG" {
			continue
		}
		if line == "R\n" {
			io.WriteString(in, line)
			time.Sleep(300 * time.Millisecond)
			drain()
			continue
		}
		io.WriteString(in, line)
		if line == "K\n" {
			// The server answers the update request with its next
			// record (RFC 8446 section 4.6.3), the echo of the next line.
			time.Sleep(100 * time.Millisecond)
			continue
		}
		wait()
		drain()
	}
	in.Close()
	cl.Wait()
	<-done
	var kl KeyLog
	b, err := os.ReadFile(keylog)
	if err != nil {
		t.Fatal(err)
	}
	kl.Write(b)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.pkts, &kl
}
