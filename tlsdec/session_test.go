package tlsdec

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"math/big"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sessions made by Go's crypto/tls over net.Pipe, recorded as a capture
// would see them (each Write cut into "packets" of varied sizes, numbered
// in order), with the secrets from Config.KeyLogWriter; then read back
// through Conn and compared with what the two sides sent.

// pkt is one recorded "packet".
type pkt struct {
	dir   Dir
	data  []byte
	frame int64
}

// recording is the capture of one or more sessions.
type recording struct {
	mu    sync.Mutex
	pkts  []pkt
	frame int64
}

// sizes cut writes into packets: small ones split records and headers.
var sizes = []int{3, 1460, 700, 1, 9000, 5, 64, 16500}

func (r *recording) add(dir Dir, b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(b) > 0 {
		n := min(len(b), sizes[int(r.frame)%len(sizes)])
		r.frame++
		r.pkts = append(r.pkts, pkt{dir, bytes.Clone(b[:n]), r.frame})
		b = b[n:]
	}
}

// tap records what is written through a net.Conn as direction dir.
type tap struct {
	net.Conn
	dir Dir
	rec *recording
}

func (t tap) Write(b []byte) (int, error) {
	t.rec.add(t.dir, b)
	return t.Conn.Write(b)
}

// messages are what the client sends; the server answers each with
// "re:" and the message.
var messages = [][]byte{
	[]byte("hello"),
	bytes.Repeat([]byte("0123456789"), 4000), // 40 kB: several records
	[]byte("x"),
	bytes.Repeat([]byte{0}, 300),
}

func answer(m []byte) []byte { return append([]byte("re:"), m...) }

// runSession runs one client/server session over net.Pipe into rec,
// the client as Dir 0. The server echoes; the client closes.
func runSession(t *testing.T, rec *recording, ccfg, scfg *tls.Config, mid func(c *tls.Conn)) tls.ConnectionState {
	return runVia(t, rec, ccfg, scfg, mid, nil)
}

// runVia is runSession with the client's bytes passing through
// transport (given the client's end of the recorded pipe, it returns the
// conn the client uses).
func runVia(t *testing.T, rec *recording, ccfg, scfg *tls.Config, mid func(c *tls.Conn), transport func(net.Conn) net.Conn) tls.ConnectionState {
	t.Helper()
	a, b := net.Pipe()
	var st tls.ConnectionState
	errc := make(chan error, 1)
	go func() {
		srv := tls.Server(tap{b, 1, rec}, scfg)
		defer srv.Close()
		for {
			hdr := make([]byte, 4)
			if _, err := io.ReadFull(srv, hdr); err != nil {
				if err == io.EOF {
					err = nil
				}
				errc <- err
				return
			}
			n := int(hdr[0])<<24 | int(hdr[1])<<16 | int(hdr[2])<<8 | int(hdr[3])
			m := make([]byte, n)
			if _, err := io.ReadFull(srv, m); err != nil {
				errc <- err
				return
			}
			if _, err := srv.Write(frame(answer(m))); err != nil {
				errc <- err
				return
			}
		}
	}()
	var cc net.Conn = tap{a, 0, rec}
	if transport != nil {
		cc = transport(cc)
	}
	cl := tls.Client(cc, ccfg)
	if err := cl.Handshake(); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	for i, m := range messages {
		if i == 2 && mid != nil {
			mid(cl)
		}
		if _, err := cl.Write(frame(m)); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, 4+len(answer(m)))
		if _, err := io.ReadFull(cl, got); err != nil {
			t.Fatal(err)
		}
	}
	st = cl.ConnectionState()
	cl.Close()
	if err := <-errc; err != nil {
		t.Fatalf("server: %v", err)
	}
	return st
}

// frame puts a 4-byte length before m.
func frame(m []byte) []byte {
	return append([]byte{byte(len(m) >> 24), byte(len(m) >> 16), byte(len(m) >> 8), byte(len(m))}, m...)
}

// wantStream is what direction dir carries in a session.
func wantStream(dir Dir) []byte {
	var b []byte
	for _, m := range messages {
		if dir == 0 {
			b = append(b, frame(m)...)
		} else {
			b = append(b, frame(answer(m))...)
		}
	}
	return b
}

// collector is a Handler that keeps everything.
type collector struct {
	pt     [2][]byte
	frames [2][]int64 // the frame of each Plaintext call
	lost   [2]int
	events []*Event
}

func (c *collector) Plaintext(dir Dir, b []byte, at Mark) {
	c.pt[dir] = append(c.pt[dir], b...)
	c.frames[dir] = append(c.frames[dir], at.Frame)
}
func (c *collector) Lost(dir Dir, n int64, at Mark) { c.lost[dir]++ }
func (c *collector) Event(ev *Event)                { c.events = append(c.events, ev) }

func (c *collector) event(k EventKind) *Event {
	for _, e := range c.events {
		if e.Kind == k {
			return e
		}
	}
	return nil
}

// replay feeds pkts (one connection) to a new Conn.
func replay(pkts []pkt, opts Options) *collector {
	col := &collector{}
	c := NewConn(opts, col)
	for _, p := range pkts {
		c.Data(p.dir, p.data, Mark{Frame: p.frame, Time: time.Unix(p.frame, 0)})
	}
	c.Close()
	return col
}

// checkSession checks that col holds the whole session, with every
// plaintext piece attributed to a packet of its own direction, in order.
func checkSession(t *testing.T, col *collector, pkts []pkt) {
	t.Helper()
	if col.event(EventDecrypting) == nil {
		t.Fatalf("no EventDecrypting; events %v", describe(col.events))
	}
	for dir := range Dir(2) {
		if want := wantStream(dir); !bytes.Equal(col.pt[dir], want) {
			t.Errorf("dir %d: %d plaintext bytes, want %d (equal prefix %d)", dir, len(col.pt[dir]), len(want), commonPrefix(col.pt[dir], want))
		}
		if col.lost[dir] != 0 {
			t.Errorf("dir %d: %d losses", dir, col.lost[dir])
		}
		dirFrames := map[int64]bool{}
		for _, p := range pkts {
			if p.dir == dir {
				dirFrames[p.frame] = true
			}
		}
		var last int64
		for _, f := range col.frames[dir] {
			if !dirFrames[f] || f < last {
				t.Errorf("dir %d: plaintext attributed to frame %d (after %d), not a packet of this direction in order", dir, f, last)
				break
			}
			last = f
		}
	}
	for _, e := range col.events {
		if e.Kind == EventAuthFailed || e.Kind == EventMalformed || e.Kind == EventUndecrypted {
			t.Errorf("event %v", describe([]*Event{e}))
		}
	}
}

func commonPrefix(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

func describe(evs []*Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, fmt.Sprintf("%d:%s", e.Kind, e.Detail))
	}
	return strings.Join(s, "; ")
}

var (
	certsOnce       sync.Once
	ecCert, rsaCert tls.Certificate
	rsaKey          *rsa.PrivateKey
)

func certs(testing.TB) (ec, rs tls.Certificate) {
	certsOnce.Do(func() {
		ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		ecCert = selfSigned(ek, &ek.PublicKey)
		rsaKey, _ = rsa.GenerateKey(rand.Reader, 2048)
		rsaCert = selfSigned(rsaKey, &rsaKey.PublicKey)
	})
	return ecCert, rsaCert
}

func selfSigned(priv any, pub any) tls.Certificate {
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "kwire-test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		DNSNames:     []string{"broker.test"},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}
}

// configs returns a client and server config pair logging keys into kl.
func configs(t *testing.T, kl io.Writer, version uint16, suite uint16) (*tls.Config, *tls.Config) {
	ec, rs := certs(t)
	cert := ec
	if suite != 0 && strings.Contains(SuiteName(suite), "_RSA_") {
		cert = rs
	}
	c := &tls.Config{InsecureSkipVerify: true, ServerName: "broker.test", KeyLogWriter: kl, //nolint:gosec // test
		MinVersion: version, MaxVersion: version, NextProtos: []string{"kafka"}}
	s := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: version, MaxVersion: version, NextProtos: []string{"kafka"}}
	if suite != 0 {
		c.CipherSuites = []uint16{suite}
		s.CipherSuites = []uint16{suite}
	}
	return c, s
}

func TestGoTLS13(t *testing.T) {
	rec := &recording{}
	var kl KeyLog
	c, s := configs(t, &kl, tls.VersionTLS13, 0)
	st := runSession(t, rec, c, s, nil)
	col := replay(rec.pkts, Options{Keys: &kl})
	checkSession(t, col, rec.pkts)
	info := col.event(EventDecrypting).Info
	if info.Version != VersionTLS13 || info.Suite != st.CipherSuite || info.SNI != "broker.test" || info.ALPN != "kafka" {
		t.Errorf("info %+v, want suite %x SNI broker.test ALPN kafka", info, st.CipherSuite)
	}
	if a := col.event(EventAlert); a == nil || a.Detail != "TLS alert close_notify" || a.Dir != 0 {
		t.Errorf("close_notify: %+v", a)
	}
}

func TestGoTLS12Suites(t *testing.T) {
	for _, id := range []uint16{
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
		tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
		tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
		tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
		tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_RSA_WITH_AES_128_CBC_SHA,
		tls.TLS_RSA_WITH_AES_256_CBC_SHA,
		tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
		tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
		tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
	} {
		t.Run(SuiteName(id), func(t *testing.T) {
			rec := &recording{}
			var kl KeyLog
			c, s := configs(t, &kl, tls.VersionTLS12, id)
			st := runSession(t, rec, c, s, nil)
			if st.CipherSuite != id {
				t.Fatalf("negotiated %s", SuiteName(st.CipherSuite))
			}
			col := replay(rec.pkts, Options{Keys: &kl})
			checkSession(t, col, rec.pkts)
			info := col.event(EventDecrypting).Info
			if info.Version != VersionTLS12 || info.Suite != id || !info.EMS || info.ALPN != "kafka" {
				t.Errorf("info %+v", info)
			}
		})
	}
}

// TestResumption: a second connection resumes the first one's session
// (TLS 1.2 session ticket, TLS 1.3 PSK); the key log names the new client
// random.
func TestResumption(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(VersionName(v), func(t *testing.T) {
			var kl KeyLog
			c, s := configs(t, &kl, v, 0)
			c.ClientSessionCache = tls.NewLRUClientSessionCache(4)
			first := &recording{}
			runSession(t, first, c, s, nil)
			second := &recording{}
			st := runSession(t, second, c, s, nil)
			if !st.DidResume {
				t.Fatal("the second session did not resume")
			}
			var ss Sessions
			checkSession(t, replay(first.pkts, Options{Keys: &kl, Sessions: &ss}), first.pkts)
			col := replay(second.pkts, Options{Keys: &kl, Sessions: &ss})
			checkSession(t, col, second.pkts)
			if !col.event(EventDecrypting).Info.Resumed {
				t.Error("Info.Resumed not set")
			}
		})
	}
}

// TestMasterSecretEMS checks the TLS 1.2 master secret derivation with
// the extended master secret (RFC 7627), which a key log of pre-master
// secrets needs: with RSA key exchange the test can decrypt the
// pre-master secret from ClientKeyExchange with the server's key and
// compare with what Go logged.
func TestMasterSecretEMS(t *testing.T) {
	rec := &recording{}
	var kl KeyLog
	c, s := configs(t, &kl, tls.VersionTLS12, tls.TLS_RSA_WITH_AES_128_GCM_SHA256)
	runSession(t, rec, c, s, nil)
	// Collect each direction's handshake messages in the clear (up to
	// ChangeCipherSpec).
	var transcript []byte
	var cr, sr [32]byte
	var pms []byte
	stream := [2][]byte{}
	for _, p := range rec.pkts {
		stream[p.dir] = append(stream[p.dir], p.data...)
	}
	msgs := [2][][]byte{}
	for d := range 2 {
		b := stream[d]
		var hs []byte
		for len(b) >= 5 && b[0] == ctHandshake {
			n := int(b[3])<<8 | int(b[4])
			hs = append(hs, b[5:5+n]...)
			b = b[5+n:]
		}
		for len(hs) >= 4 {
			n := int(hs[1])<<16 | int(hs[2])<<8 | int(hs[3])
			msgs[d] = append(msgs[d], hs[:4+n])
			hs = hs[4+n:]
		}
	}
	// Order: ClientHello; ServerHello, Certificate, ServerHelloDone;
	// ClientKeyExchange.
	transcript = append(transcript, msgs[0][0]...)
	for _, m := range msgs[1] {
		transcript = append(transcript, m...)
	}
	cke := msgs[0][1]
	transcript = append(transcript, cke...)
	copy(cr[:], msgs[0][0][6:38])
	copy(sr[:], msgs[1][0][6:38])
	certs(t)
	//lint:ignore SA1019 RSA key exchange is what TLS 1.2 put on this wire; the test decrypts its own.
	pms, err := rsa.DecryptPKCS1v15(nil, rsaKey, cke[6:])
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256Sum(transcript)
	got := MasterSecret12(sha256New, pms, cr, sr, sum)
	logged, _ := kl.Lookup(cr)
	if !bytes.Equal(got, logged.Master) {
		t.Errorf("extended master secret %x, logged %x", got, logged.Master)
	}
	if bytes.Equal(MasterSecret12(sha256New, pms, cr, sr, nil), logged.Master) {
		t.Error("the classic derivation gave the extended master secret")
	}
}
