package main

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// TLS scenarios whose key logs are kept beside their captures
// (<capture>.keylog, NSS key log format), so that kwire decrypts them:
// kgo over TLS 1.3 and TLS 1.2 (Config.KeyLogWriter), SCRAM inside TLS,
// a KeyUpdate in both directions, TLS 1.2 with a CBC suite through
// OpenSSL's s_client, kafka-python (SSLKEYLOGFILE), KafkaJS (the socket's
// keylog event), and a pcapng carrying its own keys (editcap
// --inject-secrets). The keys are throwaway: the certificate is made for
// the run.

// keylogFile is where the running scenario writes its key log (set by
// runScenario; "" for scenarios without one).
var keylogFile string

// keyLog opens the scenario's key log for appending.
func keyLog() (*os.File, error) {
	if keylogFile == "" {
		return nil, errors.New("no key log file for this scenario")
	}
	return os.OpenFile(keylogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}

// tlsCluster starts kfake with TLS (the server config's versions and
// suites) and a topic.
func tlsCluster(port int, scfg *tls.Config, topic string, opts ...kfake.Opt) (*kfake.Cluster, error) {
	cert, err := selfSigned()
	if err != nil {
		return nil, err
	}
	scfg.Certificates = []tls.Certificate{cert}
	return newCluster(port, append([]kfake.Opt{kfake.TLS(scfg), kfake.SeedTopics(1, topic)}, opts...)...)
}

// tlsRoundTrip produces the codec matrix and reads it back over TLS.
func tlsRoundTrip(port int, clientID, topic string, ccfg *tls.Config, extra ...kgo.Opt) error {
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	opts := append([]kgo.Opt{kgo.SeedBrokers(addr(port)), kgo.ClientID(clientID), kgo.DialTLSConfig(ccfg)}, extra...)
	for _, codec := range codecs {
		p := append(opts, kgo.ProducerBatchCompression(kgoCodec(codec)))
		if err := produceKgo(ctx, p, codecRecords(clientID, codec, topic)); err != nil {
			return fmt.Errorf("produce %s: %w", codec, err)
		}
	}
	return consumeKgo(ctx, 6*len(codecs), append(opts, kgo.ConsumeTopics(topic), kgo.ConsumerGroup(clientID+"-group"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
}

// clientTLS is a client config logging its keys to w.
func clientTLS(w io.Writer, minV, maxV uint16) *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, KeyLogWriter: w, MinVersion: minV, MaxVersion: maxV} //nolint:gosec // throwaway self-signed broker
}

// runTLS13: kgo over TLS 1.3.
func runTLS13(ports []int) error {
	kl, err := keyLog()
	if err != nil {
		return err
	}
	defer kl.Close()
	c, err := tlsCluster(ports[0], &tls.Config{MinVersion: tls.VersionTLS12}, "capgen-tls13")
	if err != nil {
		return err
	}
	defer c.Close()
	return tlsRoundTrip(ports[0], "capgen-kgo-tls13", "capgen-tls13", clientTLS(kl, tls.VersionTLS13, tls.VersionTLS13))
}

// runTLS12: kgo over TLS 1.2 (ECDHE-ECDSA-AES128-GCM-SHA256, extended
// master secret), the client's session resumed by ticket on its later
// connections.
func runTLS12(ports []int) error {
	kl, err := keyLog()
	if err != nil {
		return err
	}
	defer kl.Close()
	c, err := tlsCluster(ports[0], &tls.Config{MaxVersion: tls.VersionTLS12}, "capgen-tls12")
	if err != nil {
		return err
	}
	defer c.Close()
	ccfg := clientTLS(kl, tls.VersionTLS12, tls.VersionTLS12)
	ccfg.ClientSessionCache = tls.NewLRUClientSessionCache(8)
	return tlsRoundTrip(ports[0], "capgen-kgo-tls12", "capgen-tls12", ccfg)
}

// runSASLSSL: SASL_SSL, SCRAM-SHA-256 inside TLS 1.3 (the client proof
// is still a secret once decrypted).
func runSASLSSL(ports []int) error {
	kl, err := keyLog()
	if err != nil {
		return err
	}
	defer kl.Close()
	c, err := tlsCluster(ports[0], &tls.Config{MinVersion: tls.VersionTLS12}, saslTopic,
		kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", saslUser, saslPass))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(addr(ports[0])), kgo.ClientID("capgen-kgo-sasl-ssl"),
		kgo.DialTLSConfig(clientTLS(kl, tls.VersionTLS13, tls.VersionTLS13)),
		kgo.SASL(scram.Auth{User: saslUser, Pass: saslPass}.AsSha256Mechanism())}
	var rs []*kgo.Record
	for i := 0; i < 3; i++ {
		rs = append(rs, &kgo.Record{Topic: saslTopic, Key: []byte(fmt.Sprintf("sasl-ssl-%d", i)), Value: []byte("authenticated record over TLS")})
	}
	if err := produceKgo(ctx, opts, rs); err != nil {
		return err
	}
	return consumeKgo(ctx, len(rs), append(opts, kgo.ConsumeTopics(saslTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
}

// runTLSDSB: kgo over TLS 1.3 whose capture is turned into a pcapng with
// the key log inside (editcap --inject-secrets, see injectSecrets): no
// key log file is kept.
func runTLSDSB(ports []int) error {
	kl, err := keyLog()
	if err != nil {
		return err
	}
	defer kl.Close()
	c, err := tlsCluster(ports[0], &tls.Config{MinVersion: tls.VersionTLS13}, "capgen-tls-dsb")
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(addr(ports[0])), kgo.ClientID("capgen-kgo-tls-dsb"),
		kgo.DialTLSConfig(clientTLS(kl, tls.VersionTLS13, tls.VersionTLS13))}
	rs := codecRecords("kgo", "dsb", "capgen-tls-dsb")
	if err := produceKgo(ctx, opts, rs); err != nil {
		return err
	}
	return consumeKgo(ctx, len(rs), append(opts, kgo.ConsumeTopics("capgen-tls-dsb"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
}

// injectSecrets rewrites the capture as a pcapng with its key log in a
// Decryption Secrets Block, with Wireshark's editcap, and removes the key
// log file.
func injectSecrets(file string) error {
	editcap, err := ensureTool("editcap", "wireshark-common")
	if err != nil {
		return err
	}
	tmp := file + ".in"
	if err := os.Rename(file, tmp); err != nil {
		return err
	}
	defer os.Remove(tmp)
	out, err := exec.Command(editcap, "--inject-secrets", "tls,"+keylogFile, "-F", "pcapng", tmp, file).CombinedOutput()
	if err != nil {
		return fmt.Errorf("editcap: %w: %s", err, out)
	}
	return os.Remove(keylogFile)
}

// runTLSCBC: TLS 1.2 with ECDHE-ECDSA-AES128-SHA256 (CBC, HMAC-SHA256):
// every kgo connection goes through an OpenSSL s_client process, which
// logs the keys (-keylogfile), to kfake's TLS listener.
func runTLSCBC(ports []int) error {
	openssl, err := ensureTool("openssl", "openssl")
	if err != nil {
		return err
	}
	c, err := tlsCluster(ports[0], &tls.Config{MaxVersion: tls.VersionTLS12,
		CipherSuites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256}}, "capgen-tls-cbc")
	if err != nil {
		return err
	}
	defer c.Close()
	dial := func(ctx context.Context, _, host string) (net.Conn, error) {
		return sClient(openssl, host, "-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA256")
	}
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(addr(ports[0])), kgo.ClientID("capgen-kgo-tls-cbc"), kgo.Dialer(dial)}
	rs := codecRecords("kgo", "cbc", "capgen-tls-cbc")
	if err := produceKgo(ctx, opts, rs); err != nil {
		return err
	}
	return consumeKgo(ctx, len(rs), append(opts, kgo.ConsumeTopics("capgen-tls-cbc"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
}

// sClient runs `openssl s_client -quiet` to host and returns a conn over
// its standard input and output.
func sClient(openssl, host string, flags ...string) (net.Conn, error) {
	args := append([]string{"s_client", "-quiet", "-connect", host, "-keylogfile", keylogFile}, flags...)
	cmd := exec.Command(openssl, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	mine, theirs := net.Pipe()
	go func() { io.Copy(in, theirs); in.Close() }()
	go func() { io.Copy(theirs, out); theirs.Close() }()
	return &procConn{Conn: mine, cmd: cmd}, nil
}

// procConn is a conn whose Close also ends its process.
type procConn struct {
	net.Conn
	cmd  *exec.Cmd
	once sync.Once
}

func (p *procConn) Close() error {
	err := p.Conn.Close()
	p.once.Do(func() {
		time.Sleep(50 * time.Millisecond) // let s_client send close_notify
		p.cmd.Process.Kill()
		p.cmd.Wait()
	})
	return err
}

// runTLSKeyUpdate: kgo over TLS 1.3 through a proxy that sends a
// KeyUpdate (update_requested) in the client's name after the client's
// first application records and re-encrypts the client's later records
// under the next traffic secret; kfake's crypto/tls answers with a
// KeyUpdate of its own. Only the proxy-to-broker leg is captured (ports
// [0]); the client dials the proxy on ports[1].
func runTLSKeyUpdate(ports []int) error {
	kl, err := keyLog()
	if err != nil {
		return err
	}
	defer kl.Close()
	var keys bytes.Buffer
	var mu sync.Mutex
	w := io.MultiWriter(kl, lockedWriter{&mu, &keys})
	c, err := tlsCluster(ports[0], &tls.Config{MinVersion: tls.VersionTLS13}, "capgen-tls-keyupdate")
	if err != nil {
		return err
	}
	defer c.Close()
	ln, err := net.Listen("tcp", addr(ports[1]))
	if err != nil {
		return err
	}
	defer ln.Close()
	secret := func(cr []byte) []byte {
		mu.Lock()
		defer mu.Unlock()
		want := "CLIENT_TRAFFIC_SECRET_0 " + hex.EncodeToString(cr) + " "
		for _, l := range strings.Split(keys.String(), "\n") {
			if strings.HasPrefix(l, want) {
				b, _ := hex.DecodeString(strings.TrimPrefix(l, want))
				return b
			}
		}
		return nil
	}
	go func() {
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			bc, err := net.Dial("tcp", addr(ports[0]))
			if err != nil {
				cc.Close()
				continue
			}
			go keyUpdateProxy(cc, bc, secret)
		}
	}()
	// Every connection goes to the proxy, also those to the broker
	// address Metadata advertises (the broker's own port).
	ccfg := clientTLS(w, tls.VersionTLS13, tls.VersionTLS13)
	dial := func(ctx context.Context, network, host string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr(ports[1]))
		if err != nil {
			return nil, err
		}
		tc := tls.Client(c, ccfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			c.Close()
			return nil, err
		}
		return tc, nil
	}
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(addr(ports[0])), kgo.ClientID("capgen-kgo-tls-keyupdate"), kgo.Dialer(dial)}
	rs := codecRecords("kgo", "keyupdate", "capgen-tls-keyupdate")
	if err := produceKgo(ctx, opts, rs); err != nil {
		return err
	}
	return consumeKgo(ctx, len(rs), append(opts, kgo.ConsumeTopics("capgen-tls-keyupdate"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// keyUpdateProxy relays one connection, client cc to broker bc; see
// runTLSKeyUpdate. It speaks TLS 1.3's record layer itself (RFC 8446
// section 5.2, 7.1-7.3): the suite must be TLS_AES_128_GCM_SHA256 (Go's
// choice on machines with AES instructions), else records pass untouched.
func keyUpdateProxy(cc, bc net.Conn, secret func(cr []byte) []byte) {
	defer cc.Close()
	defer bc.Close()
	suite := make(chan uint16, 1)
	go func() {
		first := true
		for {
			hdr, frag, err := readRecord(bc)
			if err != nil {
				cc.Close()
				return
			}
			if first {
				first = false
				if len(frag) > 4+2+32+1 {
					sid := int(frag[4+2+32])
					if len(frag) >= 4+2+32+1+sid+2 {
						suite <- binary.BigEndian.Uint16(frag[4+2+32+1+sid:])
					}
				}
			}
			if _, err := cc.Write(append(hdr, frag...)); err != nil {
				return
			}
		}
	}()
	var cr []byte
	var old, next *aeadState
	encrypted := 0
	for {
		hdr, frag, err := readRecord(cc)
		if err != nil {
			return
		}
		rec := append(append([]byte(nil), hdr...), frag...)
		if hdr[0] == 22 && len(frag) > 38 && frag[0] == 1 {
			cr = append([]byte(nil), frag[6:38]...)
		}
		if hdr[0] == 23 {
			encrypted++
			if encrypted == 2 { // the first is the client's Finished
				s := secret(cr)
				select {
				case id := <-suite:
					if id == tls.TLS_AES_128_GCM_SHA256 && s != nil {
						old, next = newAEAD(s), newAEAD(nextSecret(s))
					}
				case <-time.After(5 * time.Second):
				}
			}
			app := uint64(encrypted - 2)
			if old != nil && app == 1 {
				// KeyUpdate(update_requested) at the sequence number the
				// client's record would have had.
				if _, err := bc.Write(old.seal(app, 22, []byte{24, 0, 0, 1, 1})); err != nil {
					return
				}
			}
			if old != nil && app >= 1 {
				pt, typ, err := old.open(app, hdr, frag)
				if err != nil {
					return
				}
				rec = next.seal(app-1, typ, pt)
			}
		}
		if _, err := bc.Write(rec); err != nil {
			return
		}
	}
}

func readRecord(r io.Reader) (hdr, frag []byte, err error) {
	hdr = make([]byte, 5)
	if _, err = io.ReadFull(r, hdr); err != nil {
		return nil, nil, err
	}
	frag = make([]byte, binary.BigEndian.Uint16(hdr[3:]))
	_, err = io.ReadFull(r, frag)
	return hdr, frag, err
}

// expandLabel is HKDF-Expand-Label with an empty context, SHA-256.
func expandLabel(secret []byte, label string, n int) []byte {
	info := []byte{byte(n >> 8), byte(n), byte(6 + len(label))}
	info = append(append(info, "tls13 "+label...), 0)
	out, _ := hkdf.Expand(sha256.New, secret, string(info), n)
	return out
}

func nextSecret(s []byte) []byte { return expandLabel(s, "traffic upd", 32) }

type aeadState struct {
	aead cipher.AEAD
	iv   []byte
}

func newAEAD(secret []byte) *aeadState {
	b, _ := aes.NewCipher(expandLabel(secret, "key", 16))
	g, _ := cipher.NewGCM(b)
	return &aeadState{g, expandLabel(secret, "iv", 12)}
}

func (a *aeadState) nonce(seq uint64) []byte {
	n := append([]byte(nil), a.iv...)
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], seq)
	subtle.XORBytes(n[4:], n[4:], s[:])
	return n
}

func (a *aeadState) seal(seq uint64, typ byte, content []byte) []byte {
	inner := append(append([]byte(nil), content...), typ)
	n := len(inner) + a.aead.Overhead()
	hdr := []byte{23, 3, 3, byte(n >> 8), byte(n)}
	return a.aead.Seal(hdr, a.nonce(seq), inner, hdr)
}

func (a *aeadState) open(seq uint64, hdr, frag []byte) ([]byte, byte, error) {
	pt, err := a.aead.Open(nil, a.nonce(seq), frag, hdr)
	if err != nil {
		return nil, 0, err
	}
	i := len(pt) - 1
	for i >= 0 && pt[i] == 0 {
		i--
	}
	if i < 0 {
		return nil, 0, errors.New("no content type")
	}
	return pt[:i], pt[i], nil
}
