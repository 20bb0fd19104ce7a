package reassembly_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/reassembly/live"
)

// seen signals when a direction has delivered want bytes.
type seen struct {
	mu   sync.Mutex
	n    [2]int
	want int
	got  chan struct{}
}

func (s *seen) Open(*reassembly.Conn) {}
func (s *seen) Data(_ *reassembly.Conn, d reassembly.Dir, ch reassembly.Chunk) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n[d] += len(ch.Data)
	if s.n[0] == s.want && s.n[1] == s.want {
		close(s.got)
	}
}
func (s *seen) Gap(*reassembly.Conn, reassembly.Dir, int64, time.Time) {}
func (s *seen) Close(*reassembly.Conn, string, time.Time)              {}

// TestLiveCaptureIsPrompt: with a real capture on lo, a request and its
// echo reach the handler while the connection stays open and quiet: the
// pipeline does not wait for more packets to fill a batch.
func TestLiveCaptureIsPrompt(t *testing.T) {
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()
	port := uint16(ln.Addr().(*net.TCPAddr).Port)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src, err := live.Open(live.Config{Context: ctx, Interface: "lo", Ports: []uint16{port}})
	if err != nil {
		t.Skipf("live capture on lo: %v", err)
	}
	defer src.Close()
	const msg = "a request that waits for nothing"
	h := &seen{want: len(msg), got: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := reassembly.Run(context.Background(), src, reassembly.Options{IdleTimeout: time.Minute}, h)
		done <- err
	}()
	c, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatal(err)
	}
	// The connection stays open: no FIN, no more packets.
	select {
	case <-h.got:
	case <-time.After(3 * time.Second):
		t.Fatal("the request and its echo did not reach the handler within 3 s of being sent")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end within 5 s of the capture's end")
	}
}
