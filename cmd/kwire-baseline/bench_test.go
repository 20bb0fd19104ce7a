package main

// End-to-end benchmarks over golden captures in ../../pcaps: the same
// pipeline as kwire read (reassembly.ReadFiles → dissect → render into a
// 64 KiB bufio.Writer), output discarded. The sub-benchmarks are the
// output modes; "baseline" is this command's byte counter alone, "frames"
// and "inflate" its floors (-frames, -inflate).
//
//	go test ./cmd/kwire-baseline -run '^$' -bench ReadCapture -benchmem
//	go test ./cmd/kwire-baseline -run '^$' -bench ReadCapture/text -cpuprofile cpu.prof

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render"
)

// benchCaptures are golden captures with their broker ports: a large
// uncompressed value spread over many segments, and the codec matrix.
var benchCaptures = []struct {
	file string
	port uint16
}{
	{"kgo-large-value.pcap", 19096},
	{"kgo-produce-consume.pcap", 19092},
}

// sink renders every exchange as kwire read does in one mode.
type sink struct {
	w    *bufio.Writer
	mode string
	opts render.Options
	n    int
	err  error
}

func (s *sink) Exchange(ex *dissect.Exchange) {
	s.n++
	var err error
	switch s.mode {
	case "json":
		err = render.ExchangeJSON(s.w, ex, s.opts)
	case "tree":
		err = render.Line(s.w, ex, s.opts)
		for _, fr := range []*dissect.Frame{ex.Request, ex.Response} {
			if err == nil && fr != nil && fr.Tree != nil {
				err = render.Tree(s.w, fr.Tree, s.opts)
			}
		}
	default:
		err = render.Line(s.w, ex, s.opts)
	}
	if err != nil && s.err == nil {
		s.err = err
	}
}

func (s *sink) Event(ev *dissect.Event) {
	if s.mode == "json" {
		return
	}
	if err := render.EventLine(s.w, ev, s.opts); err != nil && s.err == nil {
		s.err = err
	}
}

// readCapture runs one capture through the pipeline and returns the
// number of exchanges rendered.
func readCapture(path string, port uint16, mode string) (int, error) {
	return readCapturePorts(path, []uint16{port}, mode)
}

func readCapturePorts(path string, ports []uint16, mode string) (int, error) {
	s := &sink{w: bufio.NewWriterSize(io.Discard, 64<<10), mode: mode}
	d := dissect.New(dissect.Options{Ports: ports, Decoder: protocol.Decoder{Records: true, BatchHeadersOnly: mode == "text"}}, s)
	_, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, d)
	d.Finish()
	if err == nil {
		err = s.err
	}
	if err == nil {
		err = s.w.Flush()
	}
	return s.n, err
}

func BenchmarkReadCapture(b *testing.B) {
	for _, c := range benchCaptures {
		path := filepath.Join("..", "..", "pcaps", c.file)
		st, err := os.Stat(path)
		if err != nil {
			b.Skipf("golden capture missing: %v", err)
		}
		b.Run(c.file+"/baseline", func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				var cnt counter
				if _, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, &cnt); err != nil {
					b.Fatal(err)
				}
				if cnt.bytes[0]+cnt.bytes[1] == 0 {
					b.Fatal("no bytes reassembled")
				}
			}
		})
		for _, inflate := range []bool{false, true} {
			name := c.file + "/frames"
			if inflate {
				name = c.file + "/inflate"
			}
			b.Run(name, func(b *testing.B) {
				dopts, err := dissectOptions(strconv.Itoa(int(c.port)))
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(st.Size())
				b.ReportAllocs()
				for b.Loop() {
					t, _, _, err := readFloor(path, reassembly.Options{}, dopts, inflate)
					if err != nil {
						b.Fatal(err)
					}
					if t.Exchanges == 0 {
						b.Fatal("no exchanges")
					}
				}
			})
		}
		for _, mode := range []string{"text", "tree", "json"} {
			b.Run(c.file+"/"+mode, func(b *testing.B) {
				b.SetBytes(st.Size())
				b.ReportAllocs()
				for b.Loop() {
					n, err := readCapture(path, c.port, mode)
					if err != nil {
						b.Fatal(err)
					}
					if n == 0 {
						b.Fatal("no exchanges")
					}
				}
			})
		}
	}
}

// BenchmarkReadBenchCapture reads the capture named by the environment
// variable KWIRE_BENCH_CAPTURE (one of make bench-captures', broker ports
// 19200-19202) in each mode: for profiling on big inputs.
//
//	KWIRE_BENCH_CAPTURE=bench-captures/netns-2.1.pcap go test ./cmd/kwire-baseline \
//	    -run '^$' -bench ReadBenchCapture/text -benchtime 1x -cpuprofile cpu.prof
func BenchmarkReadBenchCapture(b *testing.B) {
	path := os.Getenv("KWIRE_BENCH_CAPTURE")
	if path == "" {
		b.Skip("KWIRE_BENCH_CAPTURE is not set")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", "..", path)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"text", "tree", "json"} {
		b.Run(mode, func(b *testing.B) {
			b.SetBytes(st.Size())
			b.ReportAllocs()
			for b.Loop() {
				if _, err := readCapturePorts(path, []uint16{19200, 19201, 19202}, mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestReadCapture checks that the benchmark's pipeline finds the exchanges
// the golden text output lists, so the benchmark measures real work.
func TestReadCapture(t *testing.T) {
	for _, c := range benchCaptures {
		path := filepath.Join("..", "..", "pcaps", c.file)
		if _, err := os.Stat(path); err != nil {
			t.Skipf("golden capture missing: %v", err)
		}
		n, err := readCapture(path, c.port, "text")
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		golden, err := os.ReadFile(filepath.Join("..", "..", "pcaps", "golden", c.file[:len(c.file)-len(".pcap")]+".text.golden"))
		if err != nil {
			t.Skipf("golden output missing: %v", err)
		}
		if want := exchangeLines(golden); n != want {
			t.Errorf("%s: %d exchanges rendered, golden text output has %d exchange lines", c.file, n, want)
		}
	}
}

// exchangeLines reads the exchange count from the summary of a golden
// text output ("exchanges 33: 33 paired", possibly after other counts on
// the line); -1 when there is none.
func exchangeLines(golden []byte) int {
	m := exchangesRE.FindSubmatch(golden)
	if m == nil {
		return -1
	}
	n, err := strconv.Atoi(string(m[1]))
	if err != nil {
		return -1
	}
	return n
}

var exchangesRE = regexp.MustCompile(`(?m)(?:^|, )exchanges (\d+)(?::|$)`)
