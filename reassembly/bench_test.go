package reassembly

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

// benchCapture is a pcap of 16 interleaved connections, each sending
// 1400-byte segments both ways, with a reordered pair every 50 segments:
// about 5 MB.
func benchCapture(b testing.TB) (capture []byte, payload int64) {
	b.Helper()
	const conns, rounds = 16, 110
	var vs []*conv
	for i := range conns {
		v := newConv("10.0.0.1:"+strconv.Itoa(30000+i), "10.0.0.2:9092", uint32(i)*1e6, uint32(i)*1e6+5e8)
		v.handshake()
		vs = append(vs, v)
	}
	p := strings.Repeat("k", 1400)
	var segs []seg
	for _, v := range vs {
		segs = append(segs, v.segs...)
	}
	for r := range rounds {
		for _, v := range vs {
			if r%50 == 49 {
				x, y := v.next(true, p), v.next(true, p)
				segs = append(segs, y, x)
			} else {
				segs = append(segs, v.next(true, p))
			}
			segs = append(segs, v.next(false, p))
		}
	}
	for i := range segs {
		segs[i].at = 0
		payload += int64(len(segs[i].payload))
	}
	return pcapBytes(b, layers.LinkTypeEthernet, segs), payload
}

type countBytes struct {
	discard
	n int64
}

func (c *countBytes) Data(_ *Conn, _ Dir, ch Chunk) { c.n += int64(len(ch.Data)) }

// BenchmarkReassemble runs a 5 MB capture held in memory through Run, in
// both modes, with a handler that counts bytes.
func BenchmarkReassemble(b *testing.B) {
	data, want := benchCapture(b)
	for _, mode := range []struct {
		name string
		sync bool
	}{{"sync", true}, {"pipelined", false}} {
		b.Run(mode.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var info FileInfo
				src, err := newFileSource("bench", memFile{bytes.NewReader(data)}, &info, sourceOptions{window: DefaultMaxCaptureWindow})
				if err != nil {
					b.Fatal(err)
				}
				h := &countBytes{}
				sum, err := Run(context.Background(), src, Options{Synchronous: mode.sync}, h)
				if err != nil || sum.Connections != 16 {
					b.Fatalf("err %v, summary %+v", err, sum)
				}
				if h.n != want {
					b.Fatalf("delivered %d bytes, want %d", h.n, want)
				}
			}
		})
	}
}

// BenchmarkReadFiles reads KWIRE_BENCH_CAPTURE (a path relative to the
// module root, e.g. bench-captures/netns-2.1.pcap) with ReadFiles in both
// modes: the read+reassemble floor of kwire read.
func BenchmarkReadFiles(b *testing.B) {
	path := os.Getenv("KWIRE_BENCH_CAPTURE")
	if path == "" {
		b.Skip("KWIRE_BENCH_CAPTURE is not set")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", path)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name string
		sync bool
	}{{"sync", true}, {"pipelined", false}} {
		b.Run(mode.name, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				h := &countBytes{}
				if _, err := ReadFiles(context.Background(), []string{path}, Options{Synchronous: mode.sync}, h); err != nil {
					b.Fatal(err)
				}
				if h.n == 0 {
					b.Fatal("no bytes")
				}
			}
		})
	}
}
