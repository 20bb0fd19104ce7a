package dissect

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/kwire/kwire/internal/poison"
	"github.com/kwire/kwire/protocol"
)

// Every golden capture dissects to the same exchanges and events whether
// pending requests stay in memory or nearly all of them go through the
// spill file, with or without DeferDecode.
func TestSpillGoldenCapturesIdentical(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(paths) == 0 {
		t.Skip("no golden captures in ../pcaps (make pcaps)")
	}
	total := int64(0)
	for _, path := range paths {
		for _, deferred := range []bool{false, true} {
			mem := dissectFileOpts(t, path, Options{Ports: capPorts, PendingMemory: -1, DeferDecode: deferred})
			sink := &recSink{}
			d := New(Options{Ports: capPorts, PendingMemory: 1, SpillDir: t.TempDir(), DeferDecode: deferred}, sink)
			runFile(t, d, path)
			total += d.spill.frames
			t.Logf("%s: %d requests spilled", filepath.Base(path), d.spill.frames)
			if d.spill.f != nil || d.spill.held != 0 || d.spill.used != 0 {
				t.Errorf("%s: after Finish: file %v, %d bytes held, %d blocks used", path, d.spill.f, d.spill.held, d.spill.used)
			}
			if len(sink.ex) != len(mem.sink.ex) || len(sink.ev) != len(mem.sink.ev) {
				t.Fatalf("%s: %d exchanges, %d events spilled; %d, %d in memory", path, len(sink.ex), len(sink.ev), len(mem.sink.ex), len(mem.sink.ev))
			}
			for i, e := range sink.ex {
				if deferred {
					e.Decode()
					mem.sink.ex[i].Decode()
				}
				unpool(e)
				unpool(mem.sink.ex[i])
				if !reflect.DeepEqual(e, mem.sink.ex[i]) {
					t.Errorf("%s: exchange %d differs when spilled:\n%+v\n%+v", path, i, e, mem.sink.ex[i])
				}
			}
			for i, e := range sink.ev {
				if !reflect.DeepEqual(e, mem.sink.ev[i]) {
					t.Errorf("%s: event %d differs when spilled: %+v, %+v", path, i, e, mem.sink.ev[i])
				}
			}
		}
	}
	if total == 0 {
		t.Fatal("no request was spilled in any golden capture")
	}
}

// unpool clears what ties e's frames to their Dissector's buffer pool.
func unpool(e *Exchange) {
	for _, f := range [...]*Frame{e.Request, e.Response} {
		if f != nil {
			f.pool = nil
		}
	}
}

// pipelined sends rounds of n requests of size bytes each (distinct
// contents) before their responses and returns the requests sent.
func pipelined(r *rig, rounds, n, size int) [][]byte {
	var sent [][]byte
	corr := int32(0)
	for range rounds {
		first := corr
		for range n {
			body := bytes.Repeat([]byte{byte(corr), byte(corr >> 8), 0x5a}, size/3)
			req := reqFrame(3, 1, corr, body) // Metadata v1 (body is garbage: decoding fails alike)
			sent = append(sent, req)
			// Two packets per request: the splitter builds it from parts.
			r.client(req[:len(req)/2])
			r.client(req[len(req)/2:])
			corr++
		}
		for c := first; c < corr; c++ {
			r.broker(respFrame(c, false, []byte{0, 0, 0, 0}))
		}
	}
	return sent
}

// Crafted pipelined requests far above the budget come back byte for byte,
// and the spill file's space is reused from round to round.
func TestSpillPipelinedRoundTrip(t *testing.T) {
	const rounds, n, size = 6, 40, 3000
	// 10 KiB for frames besides the bookkeeping of n pending requests.
	budget := int64(10<<10 + n*pendingCost)
	r := newRig(t, Options{PendingMemory: budget, SpillDir: t.TempDir()}, true)
	sent := pipelined(r, rounds, n, size)
	sp := &r.d.spill
	if len(r.sink.ex) != rounds*n {
		t.Fatalf("%d exchanges, want %d", len(r.sink.ex), rounds*n)
	}
	for i, e := range r.sink.ex {
		wantExchange(t, e, KindPaired, 3, 1, int32(i))
		if !bytes.Equal(e.Request.Bytes, sent[i]) {
			t.Fatalf("request %d: %d bytes back, differ from the %d sent", i, len(e.Request.Bytes), len(sent[i]))
		}
		if e.Request.Tree == nil {
			t.Fatalf("request %d not decoded after reading it back", i)
		}
	}
	// Once a round's n requests are pending, 3 of their frames fit in the
	// 10 KiB left beside the bookkeeping; the other 37 were spilled (the
	// first ones held, then spilled newest first to make room).
	const kept = 3
	if want := int64(rounds * (n - kept)); sp.frames != want {
		t.Errorf("%d frames spilled, want %d", sp.frames, want)
	}
	// A round's spilled frames fit in perRound blocks; the file never
	// grows past one round's worth although 6 rounds go through it.
	perRound := int32((n - kept) * ((len(sent[0]) + spillBlock - 1) / spillBlock))
	if sp.peak > perRound || sp.blocks > perRound {
		t.Errorf("spill file: %d blocks, peak %d in use; one round needs %d", sp.blocks, sp.peak, perRound)
	}
	if sp.used != 0 || sp.held != 0 {
		t.Errorf("after the last response: %d blocks used, %d bytes held", sp.used, sp.held)
	}
	fi, err := sp.f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if max := int64(perRound) * spillBlock; fi.Size() > max {
		t.Errorf("spill file is %d bytes, more than one round's %d", fi.Size(), max)
	}
	r.d.Finish()
	if sp.f != nil {
		t.Error("spill file still open after Finish")
	}
	if left, _ := os.ReadDir(r.d.opts.SpillDir); len(left) != 0 {
		t.Errorf("files left in the spill directory: %v", left)
	}
}

// Pending requests still in the file at a close or at the end of the
// capture are read back for their unanswered exchanges.
func TestSpillUnansweredAtEnd(t *testing.T) {
	r := newRig(t, Options{PendingMemory: 1, SpillDir: t.TempDir()}, true)
	var sent [][]byte
	for i := range int32(5) {
		req := reqFrame(3, 1, i, bytes.Repeat([]byte{byte(i)}, 500))
		sent = append(sent, req)
		r.client(req)
	}
	r.d.Finish()
	if len(r.sink.ex) != 5 || r.d.spill.frames != 5 {
		t.Fatalf("%d exchanges, %d spilled", len(r.sink.ex), r.d.spill.frames)
	}
	for i, e := range r.sink.ex {
		if e.Kind != KindUnanswered || !bytes.Equal(e.Request.Bytes, sent[i]) {
			t.Errorf("exchange %d: kind %d, %d bytes", i, e.Kind, len(e.Request.Bytes))
		}
	}
}

// A spill directory that cannot hold the file: requests stay in memory,
// the output is the same but for one note, on the first exchange
// concerned.
func TestSpillUnusableDirKeepsInMemory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	r := newRig(t, Options{PendingMemory: 10 << 10, SpillDir: dir}, true)
	ref := newRig(t, Options{PendingMemory: -1}, true)
	sent := pipelined(r, 2, 20, 3000)
	pipelined(ref, 2, 20, 3000)
	noted := 0
	for i, e := range r.sink.ex {
		if !bytes.Equal(e.Request.Bytes, sent[i]) {
			t.Fatalf("request %d differs", i)
		}
		notes := e.Notes
		if hasNote(e, "spill file failed") {
			noted++
			if i != 2 {
				// 3006-byte frames, 768 bytes of bookkeeping each:
				// the third does not fit in 10 KiB.
				t.Errorf("note on exchange %d, want 2 (the first past the budget)", i)
			}
			notes = notes[:len(notes)-1]
		}
		if !slices.Equal(notes, ref.sink.ex[i].Notes) {
			t.Errorf("exchange %d notes %q, want %q", i, e.Notes, ref.sink.ex[i].Notes)
		}
	}
	if noted != 1 {
		t.Errorf("%d exchanges say the spill file failed, want 1", noted)
	}
	if r.d.spill.frames != 0 || r.d.spill.err == nil {
		t.Errorf("%d frames spilled, error %v", r.d.spill.frames, r.d.spill.err)
	}
}

// A frame that cannot be read back keeps its header and says why; it is
// not decoded.
func TestSpillReadBackFailure(t *testing.T) {
	r := newRig(t, Options{PendingMemory: 1, SpillDir: t.TempDir()}, true)
	req := reqFrame(3, 1, 7, bytes.Repeat([]byte{1}, 1000))
	r.client(req)
	r.d.spill.f.Close() // reads now fail
	r.broker(respFrame(7, false, []byte{0, 0, 0, 0}))
	if len(r.sink.ex) != 1 {
		t.Fatalf("%d exchanges", len(r.sink.ex))
	}
	e := r.sink.ex[0]
	wantExchange(t, e, KindPaired, 3, 1, 7)
	if !bytes.Equal(e.Request.Bytes, req[:spillHead]) || e.Request.Tree != nil || !hasNote(e, "reading it back from the spill file failed") {
		t.Errorf("request %d bytes, tree %v, notes %q", len(e.Request.Bytes), e.Request.Tree != nil, e.Notes)
	}
}

// Buffers of spilled frames are reused for the next large frames, and only
// when they fit.
func TestSpillPoolFits(t *testing.T) {
	if poison.Released {
		t.Skip("kwirepoison: released buffers are poisoned, never pooled")
	}
	sp := framePool{max: poolBytes}
	sp.put(make([]byte, 100))        // small: pooled apart (TestSmallPool)
	sp.put(make([]byte, 10, 1<<20))  // 1 MiB
	sp.put(make([]byte, 0, 100<<10)) // 100 KiB
	if len(sp.bufs) != 2 {
		t.Fatalf("%d buffers pooled, want 2", len(sp.bufs))
	}
	if b := sp.take(400 << 10); b != nil {
		t.Errorf("a 400 KiB frame got a %d-byte buffer (neither fits within 2x)", cap(b))
	}
	if b := sp.take(600 << 10); cap(b) != 1<<20 || len(b) != 0 {
		t.Errorf("600 KiB frame: buffer len %d cap %d, want the 1 MiB one", len(b), cap(b))
	}
	if b := sp.take(90 << 10); cap(b) != 100<<10 {
		t.Errorf("90 KiB frame: cap %d", cap(b))
	}
	if len(sp.bufs) != 0 || sp.bytes != 0 {
		t.Errorf("pool left %d buffers, %d bytes", len(sp.bufs), sp.bytes)
	}
	for range poolMax + 2 {
		sp.put(make([]byte, 0, 64<<10))
	}
	if len(sp.bufs) != poolMax {
		t.Errorf("pool holds %d buffers, at most %d", len(sp.bufs), poolMax)
	}
	// Bounded in bytes: 1 MiB buffers up to poolBytes.
	sp = framePool{max: poolBytes}
	for range poolBytes>>20 + 2 {
		sp.put(make([]byte, 0, 1<<20))
	}
	if sp.bytes != poolBytes || len(sp.bufs) != poolBytes>>20 {
		t.Errorf("pool holds %d buffers of %d bytes, at most %d bytes", len(sp.bufs), sp.bytes, poolBytes)
	}
	// The smallest buffer that fits is taken.
	sp = framePool{max: poolBytes}
	for _, c := range []int{190 << 10, 120 << 10, 150 << 10} {
		sp.put(make([]byte, 0, c))
	}
	if b := sp.take(100 << 10); cap(b) != 120<<10 {
		t.Errorf("a 100 KiB frame got a buffer of %d bytes, want the smallest that fits (120 KiB)", cap(b))
	}
}

// The pool holds more when only batch headers are decoded.
// TestSmallPool: small frames take buffers of their size class, which
// hold them with at most a quarter (or 15 bytes) to spare; a
// released buffer serves the frames of the largest class its capacity
// holds; what is pooled stays within smallPoolBytes.
func TestSmallPool(t *testing.T) {
	for _, c := range []struct{ n, class, size int }{
		{1, 0, 16}, {4, 0, 16}, {16, 0, 16}, {17, 1, 32}, {48, 2, 48}, {64, 3, 64}, {65, 4, 80}, {80, 4, 80},
		{81, 5, 96}, {128, 7, 128}, {129, 8, 160}, {1000, 19, 1024}, {1025, 20, 1280}, {poolMin - 1, smallClasses - 1, poolMin},
	} {
		if class, size := smallClass(c.n); class != c.class || size != c.size {
			t.Errorf("smallClass(%d) = %d, %d; want %d, %d", c.n, class, size, c.class, c.size)
		}
	}
	last := 0
	for n := 1; n < poolMin; n++ {
		class, size := smallClass(n)
		if size < n || size > max(n+15, n+n/4) || class < last || class >= smallClasses {
			t.Fatalf("smallClass(%d) = %d, %d", n, class, size)
		}
		last = class
	}
	if poison.Released {
		t.Skip("kwirepoison: released buffers are poisoned, never pooled")
	}
	var p framePool
	if b := p.take(90); len(b) != 0 || cap(b) != 96 {
		t.Errorf("a 90-byte frame from an empty pool: len %d cap %d, want a new 96-byte buffer", len(b), cap(b))
	}
	b100 := make([]byte, 7, 100)
	p.put(b100) // serves 96 bytes
	if b := p.take(97); cap(b) != 112 {
		t.Errorf("a 97-byte frame got cap %d, want a new 112-byte buffer", cap(b))
	}
	if b := p.take(90); len(b) != 0 || cap(b) != 100 || &b[:1][0] != &b100[0] {
		t.Errorf("a 90-byte frame got len %d cap %d, want the 100-byte buffer released", len(b), cap(b))
	}
	if p.smallBytes != 0 {
		t.Errorf("%d bytes left pooled", p.smallBytes)
	}
	for range smallPoolBytes/1024 + 10 {
		p.put(make([]byte, 0, 1024))
	}
	if p.smallBytes != smallPoolBytes || len(p.small[19]) != smallPoolBytes/1024 {
		t.Errorf("%d bytes in %d buffers pooled, bound %d", p.smallBytes, len(p.small[19]), smallPoolBytes)
	}
}

func TestPoolBound(t *testing.T) {
	for _, tc := range []struct {
		headers bool
		want    int
	}{{false, poolBytes}, {true, poolBytesHeaders}} {
		d := New(Options{Decoder: protocol.Decoder{BatchHeadersOnly: tc.headers}}, &recSink{})
		if got := d.spill.pool.max; got != tc.want {
			t.Errorf("BatchHeadersOnly %v: pool bound %d, want %d", tc.headers, got, tc.want)
		}
	}
}

// A released exchange's large frame buffers hold the next large frames.
func TestReleaseReusesBuffers(t *testing.T) {
	if poison.Released {
		t.Skip("kwirepoison: released buffers are poisoned, never pooled")
	}
	r := newRig(t, Options{}, true)
	big := bytes.Repeat([]byte{7}, 100<<10)
	r.client(reqFrame(3, 1, 1, nil))
	r.broker(respFrame(1, false, big))
	if len(r.sink.ex) != 1 {
		t.Fatalf("%d exchanges", len(r.sink.ex))
	}
	first := r.sink.ex[0]
	old := &first.Response.Bytes[0]
	first.Release()
	if first.Response.Bytes != nil || first.Response.Tree != nil || first.Request.Bytes != nil {
		t.Fatal("Release left bytes or a tree")
	}
	first.Release() // twice is harmless
	big[0] = 9
	r.client(reqFrame(3, 1, 2, nil))
	r.broker(respFrame(2, false, big))
	second := r.sink.ex[1]
	if &second.Response.Bytes[0] != old {
		t.Error("the next large frame did not reuse the released buffer")
	}
	if want := respFrame(2, false, big); !bytes.Equal(second.Response.Bytes, want) {
		t.Error("the reused buffer does not hold the new frame")
	}
	// Not released: a third frame gets a fresh buffer.
	r.client(reqFrame(3, 1, 3, nil))
	r.broker(respFrame(3, false, big))
	if &r.sink.ex[2].Response.Bytes[0] == &second.Response.Bytes[0] {
		t.Error("a buffer still in use was reused")
	}
}

// Large request frames (spillLarge bytes or more) stay in memory only
// while those held take at most a quarter of the budget, however much room
// the budget has; small ones fill it. Every frame comes back byte for byte.
func TestSpillLargeShare(t *testing.T) {
	const n = 8
	size := spillLarge + 1000
	budget := int64(2 << 20) // room for 8 large frames, a quarter for 3
	r := newRig(t, Options{PendingMemory: budget, SpillDir: t.TempDir()}, true)
	sent := pipelined(r, 1, n, size)
	sp := &r.d.spill
	// Frames of about 66.5 KiB: 7 fit in a quarter of 2 MiB (524,288
	// bytes), the 8th goes to the file.
	per := int64(len(sent[0]))
	kept := budget / largeShare / per
	if want := n - kept; sp.frames != want {
		t.Errorf("%d large frames spilled, want %d (%d kept in a quarter of the budget)", sp.frames, want, kept)
	}
	for i, e := range r.sink.ex {
		if !bytes.Equal(e.Request.Bytes, sent[i]) {
			t.Fatalf("request %d: %d bytes back, differ from the %d sent", i, len(e.Request.Bytes), len(sent[i]))
		}
	}
	if sp.held != 0 || sp.large != 0 {
		t.Errorf("after the last response: %d bytes held, %d of them large", sp.held, sp.large)
	}
	// Small frames fill the whole budget: none spilled.
	r = newRig(t, Options{PendingMemory: budget, SpillDir: t.TempDir()}, true)
	pipelined(r, 1, 64, 20000)
	if r.d.spill.frames != 0 {
		t.Errorf("%d small frames spilled with the budget's room", r.d.spill.frames)
	}
}

// With the spill file unusable, large frames past their share of the bound
// but within it stay in memory with nothing said: the bound was not
// passed (no note, no SpillError); past the bound it is said, once.
func TestSpillUnusableDirWithinBound(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	size := spillLarge + 1000
	r := newRig(t, Options{PendingMemory: 2 << 20, SpillDir: dir}, true)
	pipelined(r, 1, 8, size) // 8 × 66.5 KiB: past a quarter of 2 MiB, within 2 MiB
	for i, e := range r.sink.ex {
		if hasNote(e, "spill file failed") {
			t.Errorf("exchange %d says the spill file failed within the bound", i)
		}
	}
	if r.d.spill.err != nil || r.d.spill.fileErr == nil {
		t.Errorf("within the bound: err %v, fileErr %v", r.d.spill.err, r.d.spill.fileErr)
	}
	r = newRig(t, Options{PendingMemory: 256 << 10, SpillDir: dir}, true)
	pipelined(r, 1, 8, size) // past 256 KiB
	noted := 0
	for _, e := range r.sink.ex {
		if hasNote(e, "spill file failed") {
			noted++
		}
	}
	if noted != 1 || r.d.spill.err == nil {
		t.Errorf("past the bound: %d notes, err %v; want 1 and the error", noted, r.d.spill.err)
	}
}
