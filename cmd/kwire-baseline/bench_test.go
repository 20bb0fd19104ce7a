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
	"runtime"
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

// smallExchanges are the exchanges of kgo-produce-consume.pcap (143:
// ApiVersions, Metadata, Produce, Fetch, group, transaction and telemetry
// APIs; most frames under 1 KB) as their frames' bytes, for the cost of
// one exchange's decoding, facts and line apart from reading the capture.
func smallExchanges(b *testing.B) []*dissect.Exchange {
	path := filepath.Join("..", "..", "pcaps", "kgo-produce-consume.pcap")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("golden capture missing: %v", err)
	}
	k := &keepSink{}
	d := dissect.New(dissect.Options{Ports: []uint16{19092},
		Decoder: protocol.Decoder{Records: true, BatchHeadersOnly: true}}, k)
	if _, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, d); err != nil {
		b.Fatal(err)
	}
	d.Finish()
	if len(k.ex) != 143 {
		b.Fatalf("%d exchanges, want 143", len(k.ex))
	}
	return k.ex
}

type keepSink struct{ ex []*dissect.Exchange }

func (k *keepSink) Exchange(e *dissect.Exchange) { k.ex = append(k.ex, e) }
func (k *keepSink) Event(*dissect.Event)         {}

// BenchmarkSmallExchanges decodes the 143 exchanges of
// kgo-produce-consume.pcap as read's one-line mode does (record batch
// headers only): "decode" the frames' trees, "facts" also their facts,
// "line" also the line, each exchange's trees released after it. It
// reports ns/exchange, and on Linux cpu-ns/exchange: the CPU time of the
// benchmark's thread (the garbage collector's work on other threads not
// included), steadier than wall time on a shared machine.
//
//	go test ./cmd/kwire-baseline -run '^$' -bench SmallExchanges -benchmem
func BenchmarkSmallExchanges(b *testing.B) {
	exs := smallExchanges(b)
	dec := protocol.Decoder{Records: true, BatchHeadersOnly: true}
	for _, stage := range []string{"decode", "facts", "line"} {
		b.Run(stage, func(b *testing.B) {
			w := bufio.NewWriterSize(io.Discard, 64<<10)
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0, cpuOK := threadCPU()
			n := 0
			for b.Loop() {
				for _, e := range exs {
					var req, resp *protocol.Tree
					if f := e.Request; f != nil && f.Bytes != nil {
						req = dec.DecodeRequest(f.Bytes)
					}
					if f := e.Response; f != nil && f.Bytes != nil {
						resp = dec.DecodeResponse(f.Bytes, e.APIKey, e.APIVersion)
					}
					if stage != "decode" {
						c := *e // facts not computed yet, frames decoded at collection
						setTrees(&c, req, resp)
						fx := c.Facts()
						if stage == "line" {
							if err := render.Line(w, &c, render.Options{Facts: fx}); err != nil {
								b.Fatal(err)
							}
						}
					}
					req.Release()
					resp.Release()
					n++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/exchange")
			if cpu1, ok := threadCPU(); ok && cpuOK {
				b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(n), "cpu-ns/exchange")
			}
		})
	}
}

// setTrees gives c, a copy of an exchange, frames of its own holding req
// and resp.
func setTrees(c *dissect.Exchange, req, resp *protocol.Tree) {
	if c.Request != nil {
		f := *c.Request
		f.Tree = req
		c.Request = &f
	}
	if c.Response != nil {
		f := *c.Response
		f.Tree = resp
		c.Response = &f
	}
}
