package reassembly

import (
	"bytes"
	"context"
	"io"
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

func BenchmarkReassemble(b *testing.B) {
	data, want := benchCapture(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var info FileInfo
		src, err := newFileSource("bench", io.NopCloser(bytes.NewReader(data)), &info)
		if err != nil {
			b.Fatal(err)
		}
		h := &countBytes{}
		sum, err := Run(context.Background(), src, Options{}, h)
		if err != nil || sum.Connections != 16 {
			b.Fatalf("err %v, summary %+v", err, sum)
		}
		if h.n != want {
			b.Fatalf("delivered %d bytes, want %d", h.n, want)
		}
	}
}
