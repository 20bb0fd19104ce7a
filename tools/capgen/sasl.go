package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

const (
	saslTopic = "capgen-sasl"
	saslUser  = "capgen"
	saslPass  = "capgen-secret"

	// saslWrongPass and saslUnknownUser mark the attempts that must fail.
	saslWrongPass   = "capgen-wrong-password"
	saslUnknownUser = "capgen-unknown-user"
)

// failAuthentication makes the cluster answer a SaslAuthenticate whose
// bytes contain marker with SASL_AUTHENTICATION_FAILED, as Kafka does
// before closing the connection (kfake itself only closes it).
func failAuthentication(c *kfake.Cluster, marker string) {
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(r kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := r.(*kmsg.SASLAuthenticateRequest)
		if !bytes.Contains(req.SASLAuthBytes, []byte(marker)) {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed: Invalid username or password"
		resp.ErrorMessage = &msg
		return resp, nil, true
	})
}

// saslRoundTrip produces three records and reads them back as an
// authenticated kgo client, then tries once with a wrong password.
func saslRoundTrip(port int, clientID string, good, bad sasl.Mechanism) error {
	seed := kgo.SeedBrokers(addr(port))
	ctx, cancel := withTimeout(time.Minute)
	defer cancel()
	var rs []*kgo.Record
	for i := 0; i < 3; i++ {
		rs = append(rs, &kgo.Record{Topic: saslTopic, Key: []byte(fmt.Sprintf("%s-%d", clientID, i)),
			Value: []byte("authenticated record")})
	}
	if err := produceKgo(ctx, []kgo.Opt{seed, kgo.ClientID(clientID), kgo.SASL(good)}, rs); err != nil {
		return fmt.Errorf("produce: %w", err)
	}
	if err := consumeKgo(ctx, len(rs), seed, kgo.ClientID(clientID), kgo.SASL(good),
		kgo.ConsumeTopics(saslTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())); err != nil {
		return fmt.Errorf("consume: %w", err)
	}
	// Bad credentials: SaslAuthenticate answers SASL_AUTHENTICATION_FAILED.
	cl, err := kgo.NewClient(seed, kgo.ClientID(clientID+"-badpass"), kgo.SASL(bad))
	if err != nil {
		return err
	}
	defer cl.Close()
	pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
	defer pcancel()
	if err := cl.Ping(pctx); err == nil {
		return errors.New("authentication with a wrong password succeeded")
	}
	return nil
}

// runSaslPlain: SaslHandshake v1 + SaslAuthenticate with PLAIN.
func runSaslPlain(ports []int) error {
	c, err := newCluster(ports[0], kfake.EnableSASL(), kfake.Superuser("PLAIN", saslUser, saslPass),
		kfake.SeedTopics(1, saslTopic))
	if err != nil {
		return err
	}
	defer c.Close()
	failAuthentication(c, saslWrongPass)
	return saslRoundTrip(ports[0], "capgen-kgo-sasl-plain",
		plain.Auth{User: saslUser, Pass: saslPass}.AsMechanism(),
		plain.Auth{User: saslUser, Pass: saslWrongPass}.AsMechanism())
}

// runSaslScram: SaslHandshake v1 + two SaslAuthenticate round trips with
// SCRAM-SHA-256, then the same with SCRAM-SHA-512.
func runSaslScram(ports []int) error {
	c, err := newCluster(ports[0], kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-256", saslUser, saslPass),
		kfake.User("SCRAM-SHA-512", saslUser+"-512", saslPass), kfake.SeedTopics(1, saslTopic))
	if err != nil {
		return err
	}
	defer c.Close()
	failAuthentication(c, "n="+saslUnknownUser)
	if err := saslRoundTrip(ports[0], "capgen-kgo-sasl-scram256",
		scram.Auth{User: saslUser, Pass: saslPass}.AsSha256Mechanism(),
		scram.Auth{User: saslUnknownUser, Pass: saslPass}.AsSha256Mechanism()); err != nil {
		return fmt.Errorf("SCRAM-SHA-256: %w", err)
	}
	seed := kgo.SeedBrokers(addr(ports[0]))
	cl, err := kgo.NewClient(seed, kgo.ClientID("capgen-kgo-sasl-scram512"),
		kgo.SASL(scram.Auth{User: saslUser + "-512", Pass: saslPass}.AsSha512Mechanism()))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := withTimeout(stepTimeout)
	defer cancel()
	if err := cl.Ping(ctx); err != nil {
		return fmt.Errorf("SCRAM-SHA-512: %w", err)
	}
	return nil
}

// runSaslV0 puts a SASL v0 front in the broker's listener (kfake only speaks
// SaslHandshake v1): a SaslHandshake v0 request is answered there, and the
// next frame is taken as a raw PLAIN token, not a Kafka request, answered
// with an empty 4-byte-length frame. sarama with SASL handshake v0 then
// produces and consumes; a raw client sends a wrong password, and the
// broker closes the connection, as Kafka does for v0.
func runSaslV0(ports []int) error {
	port := ports[0]
	c, err := newCluster(port, kfake.SeedTopics(1, saslTopic),
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			ln, err := net.Listen(network, address)
			if err != nil {
				return nil, err
			}
			return &saslV0Listener{Listener: ln}, nil
		}))
	if err != nil {
		return err
	}
	defer c.Close()

	cfg := saramaConfig("capgen-sarama-sasl-v0")
	cfg.Net.SASL.Enable = true
	cfg.Net.SASL.Mechanism = sarama.SASLTypePlaintext
	cfg.Net.SASL.Version = sarama.SASLHandshakeV0
	cfg.Net.SASL.Handshake = true
	cfg.ApiVersionsRequest = false // sarama refuses it with SASL v0
	cfg.Net.SASL.User = saslUser
	cfg.Net.SASL.Password = saslPass
	cfg.Producer.Return.Successes = true
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	brokers := []string{addr(port)}
	p, err := sarama.NewSyncProducer(brokers, cfg)
	if err != nil {
		return fmt.Errorf("sarama producer: %w", err)
	}
	for i := 0; i < 3; i++ {
		_, _, err = p.SendMessage(&sarama.ProducerMessage{Topic: saslTopic,
			Key: sarama.StringEncoder(fmt.Sprintf("sasl-v0-%d", i)), Value: sarama.StringEncoder("after a v0 handshake")})
		if err != nil {
			p.Close()
			return fmt.Errorf("sarama produce: %w", err)
		}
	}
	p.Close()
	cons, err := sarama.NewConsumer(brokers, cfg)
	if err != nil {
		return fmt.Errorf("sarama consumer: %w", err)
	}
	pc, err := cons.ConsumePartition(saslTopic, 0, sarama.OffsetOldest)
	if err != nil {
		cons.Close()
		return err
	}
	timeout := time.After(stepTimeout)
	for got := 0; got < 3; got++ {
		select {
		case <-pc.Messages():
		case <-timeout:
			cons.Close()
			return fmt.Errorf("sarama consumed %d of 3", got)
		}
	}
	pc.Close()
	cons.Close()

	// Raw: SaslHandshake v0, then a raw PLAIN token with a wrong password.
	rc, err := dialRaw(port, "capgen-raw-sasl-v0")
	if err != nil {
		return err
	}
	defer rc.close()
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version = 0
	hs.Mechanism = "PLAIN"
	hsr := kmsg.NewPtrSASLHandshakeResponse()
	if err := rc.roundTrip(hs, hsr, false); err != nil || hsr.ErrorCode != 0 {
		return fmt.Errorf("raw SaslHandshake v0: %v (error code %d)", err, hsr.ErrorCode)
	}
	tok := []byte("\x00" + saslUser + "\x00" + saslWrongPass)
	if _, err := rc.conn.Write(binary.BigEndian.AppendUint32(nil, uint32(len(tok)))); err != nil {
		return err
	}
	if _, err := rc.conn.Write(tok); err != nil {
		return err
	}
	if _, err := rc.readFrame(); err == nil {
		return errors.New("wrong v0 password was answered, want the connection closed")
	}
	return nil
}

// saslV0Listener wraps accepted connections in saslV0Conn.
type saslV0Listener struct{ net.Listener }

func (l *saslV0Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &saslV0Conn{Conn: c}, nil
}

// saslV0Conn answers SaslHandshake v0 and the raw token that follows it
// itself and passes every other frame through to kfake unchanged.
type saslV0Conn struct {
	net.Conn
	wmu       sync.Mutex
	pending   []byte
	wantToken bool
}

func (c *saslV0Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.Conn.Write(p)
}

func (c *saslV0Conn) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		var size [4]byte
		if _, err := io.ReadFull(c.Conn, size[:]); err != nil {
			return 0, err
		}
		n := binary.BigEndian.Uint32(size[:])
		if n > 64<<20 {
			c.Conn.Close()
			return 0, fmt.Errorf("frame of %d bytes", n)
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(c.Conn, body); err != nil {
			return 0, err
		}
		handled, err := c.intercept(body)
		if err != nil {
			c.Conn.Close()
			return 0, err
		}
		if !handled {
			c.pending = append(size[:], body...)
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// intercept handles the SASL v0 frames; it reports whether it did.
func (c *saslV0Conn) intercept(body []byte) (bool, error) {
	if c.wantToken {
		c.wantToken = false
		if !bytes.Equal(body, []byte("\x00"+saslUser+"\x00"+saslPass)) {
			return false, errors.New("SASL v0 PLAIN authentication failed")
		}
		_, err := c.Write([]byte{0, 0, 0, 0})
		return true, err
	}
	if len(body) < 8 || binary.BigEndian.Uint16(body) != 17 || binary.BigEndian.Uint16(body[2:]) != 0 {
		return false, nil
	}
	req := kmsg.NewPtrSASLHandshakeRequest()
	req.Version = 0
	rest := body[8:]
	if len(rest) < 2 {
		return false, errors.New("short SaslHandshake header")
	}
	idLen := int(int16(binary.BigEndian.Uint16(rest)))
	if idLen < 0 {
		idLen = 0
	}
	if len(rest) < 2+idLen {
		return false, errors.New("short SaslHandshake header")
	}
	if err := req.ReadFrom(rest[2+idLen:]); err != nil {
		return false, err
	}
	resp := kmsg.NewPtrSASLHandshakeResponse()
	resp.Version = 0
	resp.SupportedMechanisms = []string{"PLAIN"}
	if req.Mechanism != "PLAIN" {
		resp.ErrorCode = 33 // UNSUPPORTED_SASL_MECHANISM
	} else {
		c.wantToken = true
	}
	out := binary.BigEndian.AppendUint32(nil, 0)
	out = append(out, body[4:8]...) // correlation ID
	out = resp.AppendTo(out)
	binary.BigEndian.PutUint32(out, uint32(len(out)-4))
	_, err := c.Write(out)
	return true, err
}
