package main

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// TestRunModes: the default pipeline and -sync print the same counts, and
// they are real counts.
func TestRunModes(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "pcaps", "*.pcap"))
	if len(paths) == 0 {
		t.Skip("no captures in ../../pcaps")
	}
	var out [2]bytes.Buffer
	for i, args := range [][]string{paths, append([]string{"-sync"}, paths...)} {
		var stderr bytes.Buffer
		if st := run(args, &out[i], &stderr); st != 0 {
			t.Fatalf("%v: status %d, %s", args[:1], st, stderr.String())
		}
	}
	if out[0].String() != out[1].String() {
		t.Errorf("pipelined:\n%s\nsynchronous:\n%s", out[0].String(), out[1].String())
	}
	lines := regexp.MustCompile(`(?m)^.*: [1-9]\d* packets, [1-9]\d* connections, [1-9]\d*\+[1-9]\d* bytes, \d+ gaps \(\d+ bytes\)$`).FindAllString(out[0].String(), -1)
	if len(lines) != len(paths) {
		t.Errorf("%d lines with counts for %d files:\n%s", len(lines), len(paths), out[0].String())
	}
	var stderr bytes.Buffer
	if st := run([]string{"-sync"}, &out[0], &stderr); st != 2 {
		t.Errorf("no file: status %d, want 2", st)
	}
}

// fullBatches is an independent count of the magic 2 record batches of a
// capture: every frame decoded in full (Records on, no BatchHeadersOnly),
// so the decoder itself decompresses each batch and decodes its records;
// a batch's decompressed size is the sum of its records' spans, which
// must cover the decompressed bytes.
type fullBatches struct {
	t         *testing.T
	exchanges int64
	batches   [protocol.CodecZstd + 1]codecTotal
	records   int64
}

func (f *fullBatches) Exchange(ex *dissect.Exchange) {
	f.exchanges++
	for _, fr := range []*dissect.Frame{ex.Request, ex.Response} {
		if fr != nil && fr.Tree != nil && fr.Tree.Root != nil {
			f.walk(fr.Tree, fr.Tree.Root)
		}
	}
}

func (f *fullBatches) Event(*dissect.Event) {}

func (f *fullBatches) walk(t *protocol.Tree, n *protocol.Node) {
	if n.Name != "RecordBatch" {
		for _, c := range n.Children {
			f.walk(t, c)
		}
		return
	}
	if n.Child("Magic").Int != 2 {
		return
	}
	codec := protocol.Codec(n.Child("Attributes").Int & 7)
	recs := n.Child("Records")
	if recs.Flags&protocol.FlagError != 0 {
		f.t.Errorf("batch at %#x: %s", n.Off, recs.Note)
		return
	}
	if int64(len(recs.Children)) != recs.Int {
		f.t.Errorf("batch at %#x: %d records decoded, count %d", n.Off, len(recs.Children), recs.Int)
	}
	size := int64(0)
	for _, r := range recs.Children {
		size += int64(r.Len)
		if codec != protocol.CodecNone && r.Space == n.Space {
			f.t.Errorf("batch at %#x (%s): record %s in the frame's space", n.Off, codec, r.Name)
		}
	}
	if len(recs.Children) > 0 && codec != protocol.CodecNone {
		if inner := int64(len(t.Spaces[recs.Children[0].Space].Data)); inner != size {
			f.t.Errorf("batch at %#x (%s): records cover %d of %d decompressed bytes", n.Off, codec, size, inner)
		}
	}
	c := &f.batches[codec]
	c.Batches++
	c.Compressed += int64(recs.Len - 4) // the records count, then the payload
	c.Decompressed += size
	f.records += int64(len(recs.Children))
}

// TestFloorTotals: -frames and -inflate find the batches, payload bytes
// and decompressed bytes that a full decode of the codec-matrix capture
// finds, for each codec, and the exchanges of its golden output.
func TestFloorTotals(t *testing.T) {
	const file, port = "kgo-produce-consume.pcap", 19092
	path := filepath.Join("..", "..", "pcaps", file)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("golden capture missing: %v", err)
	}
	dopts, err := dissectOptions("19092")
	if err != nil {
		t.Fatal(err)
	}

	full := &fullBatches{t: t}
	fopts := dopts
	fopts.Decoder.BatchHeadersOnly = false
	d := dissect.New(fopts, full)
	if _, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, d); err != nil {
		t.Fatal(err)
	}
	d.Finish()
	for c := protocol.CodecGzip; c <= protocol.CodecZstd; c++ {
		// The capture is the codec matrix: every codec, and real
		// compression.
		if b := full.batches[c]; b.Batches == 0 || b.Decompressed <= b.Compressed {
			t.Errorf("full decode: %s: %+v, want batches that inflate", c, b)
		}
	}

	golden, err := os.ReadFile(filepath.Join("..", "..", "pcaps", "golden", "kgo-produce-consume.text.golden"))
	if err != nil {
		t.Skipf("golden output missing: %v", err)
	}
	wantEx := int64(exchangeLines(golden))

	for _, inflate := range []bool{false, true} {
		for _, sync := range []bool{false, true} {
			got, sum, ds, err := readFloor(path, reassembly.Options{Synchronous: sync}, dopts, inflate)
			if err != nil {
				t.Fatalf("inflate=%t sync=%t: %v", inflate, sync, err)
			}
			name := fmt.Sprintf("inflate=%t sync=%t", inflate, sync)
			if got.Exchanges != wantEx || got.Exchanges != full.exchanges || ds.Exchanges != wantEx {
				t.Errorf("%s: %d exchanges (dissector %d), full decode %d, golden %d", name, got.Exchanges, ds.Exchanges, full.exchanges, wantEx)
			}
			if sum.Packets == 0 || ds.Frames < 2*wantEx-ds.NoResponse-ds.Unanswered-ds.Orphans-ds.SASL {
				t.Errorf("%s: %d packets, %d frames for %d exchanges", name, sum.Packets, ds.Frames, wantEx)
			}
			if got.Errors != 0 || got.BadCRC != 0 {
				t.Errorf("%s: %d decompression errors, %d bad CRCs", name, got.Errors, got.BadCRC)
			}
			for c, d := range got.Times {
				if inflate != (d > 0) && c != int(protocol.CodecNone) || c == int(protocol.CodecNone) && d != 0 {
					t.Errorf("%s: %s: %v decompressing", name, protocol.Codec(c), d)
				}
			}
			for c := range got.Batches {
				want := full.batches[c]
				if !inflate && c != int(protocol.CodecNone) {
					want.Decompressed = 0 // -frames inflates nothing
				}
				if got.Batches[c] != want {
					t.Errorf("%s: %s: %+v, full decode %+v", name, protocol.Codec(c), got.Batches[c], want)
				}
			}
		}
	}
}

// TestFloorLine: the line -inflate prints carries the totals, and flag
// errors are usage errors.
func TestFloorLine(t *testing.T) {
	path := filepath.Join("..", "..", "pcaps", "kgo-produce-consume.pcap")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("golden capture missing: %v", err)
	}
	dopts, _ := dissectOptions("19092")
	tot, sum, ds, err := readFloor(path, reassembly.Options{}, dopts, true)
	if err != nil {
		t.Fatal(err)
	}
	var out, errw bytes.Buffer
	if st := run([]string{"-inflate", "-port", "19092", path}, &out, &errw); st != 0 {
		t.Fatalf("status %d: %s", st, errw.String())
	}
	all, compressed := tot.batchCount()
	var in, inflated int64
	for c := protocol.CodecGzip; c <= protocol.CodecZstd; c++ {
		in += tot.Batches[c].Compressed
		inflated += tot.Batches[c].Decompressed
	}
	want := fmt.Sprintf("%s: %d packets, %d connections, %d frames, %d exchanges, %d batches (%d compressed, 0 bad CRC), %d -> %d bytes; gzip %d: %d -> %d (",
		path, sum.Packets, sum.Connections, ds.Frames, tot.Exchanges, all, compressed, in, inflated,
		tot.Batches[protocol.CodecGzip].Batches, tot.Batches[protocol.CodecGzip].Compressed, tot.Batches[protocol.CodecGzip].Decompressed)
	if !strings.HasPrefix(out.String(), want) || !strings.HasSuffix(out.String(), "; 0 errors\n") {
		t.Errorf("got  %q\nwant %q...; 0 errors", out.String(), want)
	}
	for _, args := range [][]string{
		{"-frames", "-inflate", path},
		{"-inflate", "-port", "0", path},
		{"-frames", "-port", "x", path},
		{"-inflate"},
		{"-nosuchflag", path},
	} {
		if st := run(args, &out, &errw); st != 2 {
			t.Errorf("%q: status %d, want 2", args, st)
		}
	}
}

// TestBatchOfHostile: batch nodes whose spans or values do not fit are
// skipped, without a panic.
func TestBatchOfHostile(t *testing.T) {
	data := make([]byte, 80)
	batch := func(magic, attrs int64, recs protocol.Node) *protocol.Node {
		recs.Field = protocol.Batch.Records
		return &protocol.Node{Name: "RecordBatch", Type: "RecordBatch", Field: protocol.Batch.Batch, Children: []*protocol.Node{
			{Name: "Magic", Field: protocol.Batch.Magic, Int: magic}, {Name: "Attributes", Field: protocol.Batch.Attributes, Int: attrs}, &recs,
		}}
	}
	ok := protocol.Node{Name: "Records", Off: 57, Len: 23, Int: 1}
	for _, tc := range []struct {
		name string
		n    *protocol.Node
		want bool
	}{
		{"fits", batch(2, 1, ok), true},
		{"magic 1", batch(1, 1, ok), false},
		{"codec 5", batch(2, 5, ok), false},
		{"past the space", batch(2, 1, protocol.Node{Name: "Records", Off: 57, Len: 24, Int: 1}), false},
		{"shorter than the count", batch(2, 1, protocol.Node{Name: "Records", Off: 57, Len: 3, Int: 1}), false},
		{"negative offset", batch(2, 1, protocol.Node{Name: "Records", Off: -8, Len: 20, Int: 1}), false},
		{"no such space", batch(2, 1, protocol.Node{Name: "Records", Space: 3, Off: 57, Len: 23, Int: 1}), false},
		{"negative count", batch(2, 1, protocol.Node{Name: "Records", Off: 57, Len: 23, Int: -1}), false},
		{"no records node", &protocol.Node{Name: "RecordBatch", Type: "RecordBatch"}, false},
	} {
		tree := &protocol.Tree{Root: tc.n, Spaces: []protocol.Space{{Name: "frame", Data: data}}}
		b, got := batchOf(tree, tc.n)
		if got != tc.want {
			t.Errorf("%s: ok %t, want %t", tc.name, got, tc.want)
		}
		if got && (len(b.payload) != 19 || b.codec != protocol.CodecGzip) {
			t.Errorf("%s: payload %d bytes, codec %s; want 19, gzip", tc.name, len(b.payload), b.codec)
		}
	}
}

// TestGopacketFloor: gopacket's assembler alone delivers the bytes that
// kwire's reassembly delivers on a capture without gaps, and counts its
// packets.
func TestGopacketFloor(t *testing.T) {
	path := filepath.Join("..", "..", "pcaps", "kgo-produce-consume.pcap")
	if _, err := os.Stat(path); err != nil {
		t.Skip("no capture")
	}
	var c counter
	sum, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, &c)
	if err != nil || c.gaps != 0 {
		t.Fatalf("reassembly: %v, %d gaps", err, c.gaps)
	}
	g, err := gopacketFloor(path, false)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := gopacketFloor(path, true)
	if err != nil || gc.bytes != g.bytes || gc.crc == 0 {
		t.Errorf("-gopacket -copy: %d bytes (want %d), CRC %08x, %v", gc.bytes, g.bytes, gc.crc, err)
	}
	if g.packets != sum.Packets || g.tcp != sum.Packets || g.bytes != c.bytes[0]+c.bytes[1] || g.bytes == 0 {
		t.Errorf("-gopacket: %d packets (%d TCP), %d bytes; reassembly: %d packets, %d bytes", g.packets, g.tcp, g.bytes, sum.Packets, c.bytes[0]+c.bytes[1])
	}
	var out, stderr bytes.Buffer
	if st := run([]string{"-gopacket", path}, &out, &stderr); st != 0 || !strings.Contains(out.String(), fmt.Sprintf(": %d packets, %d TCP, ", g.packets, g.tcp)) {
		t.Errorf("-gopacket: status %d, %q %q", st, out.String(), stderr.String())
	}
	if st := run([]string{"-gopacket", "-frames", path}, &out, &stderr); st != 2 {
		t.Errorf("-gopacket -frames: status %d, want 2", st)
	}
	if st := run([]string{"-copy", path}, &out, &stderr); st != 2 {
		t.Errorf("-copy without -gopacket: status %d, want 2", st)
	}
}

// -copy's copy wraps around its buffer and checksums every byte once, in
// order.
func TestGopacketCopy(t *testing.T) {
	all := make([]byte, 100)
	for i := range all {
		all[i] = byte(i * 7)
	}
	g := gopacketTotals{copy: true, buf: make([]byte, 7)}
	rest := all
	for _, n := range []int{3, 10, 0, 1, 50, 36} {
		g.take(rest[:n])
		rest = rest[n:]
	}
	if want := crc32.Checksum(all, castagnoli); g.crc != want {
		t.Errorf("CRC-32C %08x, want %08x", g.crc, want)
	}
	// 100 bytes through 7: the last 2 at the start, after 14 turns.
	if g.off != 2 || !bytes.Equal(g.buf[:2], all[98:]) || !bytes.Equal(g.buf[2:], all[93:98]) {
		t.Errorf("buffer %v at %d, want the last bytes %v", g.buf, g.off, all[93:])
	}
}
