package tlsdec

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"
)

// Decryption throughput against the cipher's own: BenchmarkConn runs a
// recorded TLS 1.3 session (AES-128-GCM, 16 KiB records, cut into 1448-
// byte packets as on a 1500-MTU link) through Conn; BenchmarkAESGCMOpen
// opens the same number of bytes in 16 KiB records with the standard
// library's AES-GCM and nothing else. Their MB/s ratio is the record
// layer's overhead (framing, per-packet delivery, the plaintext copy).

// bulkSession records a client sending n bytes in 16 KiB writes.
func bulkSession(b *testing.B, n int) ([]pkt, *KeyLog) {
	rec := &recording{}
	var kl KeyLog
	ec, _ := certs(nil)
	c := &tls.Config{InsecureSkipVerify: true, KeyLogWriter: &kl, MinVersion: tls.VersionTLS13, CipherSuites: nil} //nolint:gosec // test
	s := &tls.Config{Certificates: []tls.Certificate{ec}, MinVersion: tls.VersionTLS13}
	a, z := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv := tls.Server(mtuTap{tap{z, 1, rec}}, s)
		io.Copy(io.Discard, srv)
		srv.Close()
	}()
	cl := tls.Client(mtuTap{tap{a, 0, rec}}, c)
	chunk := bytes.Repeat([]byte("kafka record batch bytes "), 16384/25+1)[:16384]
	for sent := 0; sent < n; sent += len(chunk) {
		if _, err := cl.Write(chunk); err != nil {
			b.Fatal(err)
		}
	}
	cl.Close()
	<-done
	return rec.pkts, &kl
}

// mtuTap records writes cut into 1448-byte packets.
type mtuTap struct{ tap }

func (m mtuTap) Write(p []byte) (int, error) {
	for b := p; len(b) > 0; {
		k := min(len(b), 1448)
		m.rec.mu.Lock()
		m.rec.frame++
		m.rec.pkts = append(m.rec.pkts, pkt{m.dir, bytes.Clone(b[:k]), m.rec.frame})
		m.rec.mu.Unlock()
		b = b[k:]
	}
	return m.Conn.Write(p)
}

type discard struct{ n int }

func (d *discard) Plaintext(_ Dir, b []byte, _ Mark) { d.n += len(b) }
func (d *discard) Lost(Dir, int64, Mark)             {}
func (d *discard) Event(*Event)                      {}

func BenchmarkConn(b *testing.B) {
	const size = 8 << 20
	pkts, kl := bulkSession(b, size)
	var wire int64
	for _, p := range pkts {
		wire += int64(len(p.data))
	}
	b.SetBytes(wire)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		d := &discard{}
		c := NewConn(Options{Keys: kl}, d)
		for _, p := range pkts {
			c.Data(p.dir, p.data, Mark{Frame: p.frame, Time: time.Time{}})
		}
		c.Close()
		if d.n < size {
			b.Fatalf("%d bytes decrypted", d.n)
		}
	}
}

func BenchmarkAESGCMOpen(b *testing.B) {
	const size = 8 << 20
	blk, _ := aes.NewCipher(make([]byte, 16))
	g, _ := cipher.NewGCM(blk)
	nonce := make([]byte, 12)
	pt := make([]byte, 16384+1)
	rec := g.Seal(nil, nonce, pt, nil)
	out := make([]byte, 0, len(pt))
	n := size / 16384
	b.SetBytes(int64(n * (len(rec) + 5)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for range n {
			if _, err := g.Open(out[:0], nonce, rec, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}
