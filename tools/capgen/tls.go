package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// runTLS: a kgo client producing and consuming over TLS, so the capture
// holds TLS records where Kafka frames would be (a dissector can only say
// "TLS" there). The certificate is self-signed and made for the run.
func runTLS(ports []int) error {
	cert, err := selfSigned()
	if err != nil {
		return err
	}
	port := ports[0]
	c, err := newCluster(port, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
		kfake.SeedTopics(1, "capgen-tls"))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(addr(port)), kgo.ClientID("capgen-kgo-tls"),
		kgo.DialTLSConfig(&tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12})} //nolint:gosec // throwaway self-signed broker
	rs := codecRecords("kgo", "tls", "capgen-tls")
	if err := produceKgo(ctx, opts, rs); err != nil {
		return err
	}
	return consumeKgo(ctx, len(rs), append(opts, kgo.ConsumeTopics("capgen-tls"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
}

// selfSigned makes a throwaway certificate for 127.0.0.1.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "capgen"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
