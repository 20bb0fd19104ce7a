package dissect

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
)

// Messy captures: each test takes a golden capture from ../pcaps, damages
// it the way real captures are damaged (a lost, duplicated or reordered
// segment, a start in the middle of a frame, a file cut mid-packet, a small
// snap length, a correlation ID reused), writes it with pcapgo and checks
// what the dissector makes of it against the undamaged run.

// capPorts are the broker ports of the golden captures.
var capPorts = pcaps.BrokerPorts()

// capPacket is one captured packet, with its TCP payload located.
type capPacket struct {
	ci   gopacket.CaptureInfo
	data []byte
	// Filled for TCP packets:
	src, dst uint16
	seq      uint32
	payOff   int // offset of the TCP payload in data
	payLen   int
}

func (p *capPacket) payload() []byte { return p.data[p.payOff : p.payOff+p.payLen] }

// loadCapture reads a golden capture, skipping the test when it is missing.
func loadCapture(t *testing.T, name string) ([]capPacket, layers.LinkType) {
	t.Helper()
	path := filepath.Join("..", "pcaps", name)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is missing (make pcaps)", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var pkts []capPacket
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := capPacket{ci: ci, data: append([]byte(nil), data...)}
		pk := gopacket.NewPacket(p.data, r.LinkType(), gopacket.DecodeOptions{NoCopy: true, Lazy: true})
		if tcp, ok := pk.Layer(layers.LayerTypeTCP).(*layers.TCP); ok {
			p.src, p.dst, p.seq = uint16(tcp.SrcPort), uint16(tcp.DstPort), tcp.Seq
			p.payLen = len(tcp.Payload)
			p.payOff = len(p.data) - p.payLen
		}
		pkts = append(pkts, p)
	}
	if len(pkts) == 0 {
		t.Fatalf("%s holds no packets", path)
	}
	return pkts, r.LinkType()
}

// writeCapture writes packets as a classic pcap file in a temp directory.
func writeCapture(t *testing.T, pkts []capPacket, link layers.LinkType) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "messy.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := pcapgo.NewWriterNanos(f)
	if err := w.WriteFileHeader(262144, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range pkts {
		ci := p.ci
		ci.CaptureLength = len(p.data)
		if err := w.WritePacket(ci, p.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// runResult is what a dissection of one capture produced.
type runResult struct {
	sink *recSink
	sum  Summary
	err  error
}

func dissectFile(t *testing.T, path string) runResult {
	t.Helper()
	return dissectFileOpts(t, path, Options{Ports: capPorts})
}

func dissectFileOpts(t *testing.T, path string, opts Options) runResult {
	t.Helper()
	sink := &recSink{}
	d := New(opts, sink)
	err := runFile(t, d, path)
	return runResult{sink, d.Summary(), err}
}

// runFile reads a capture into d and finishes it.
func runFile(t *testing.T, d *Dissector, path string) error {
	t.Helper()
	_, err := reassembly.ReadFiles(context.Background(), []string{path}, reassembly.Options{}, d)
	d.Finish()
	return err
}

// exKey identifies an exchange independently of packet numbers.
type exKey struct {
	conn       string
	kind       Kind
	key, ver   int16
	corr       int32
	reqT, resT int64
}

func keyOf(e *Exchange) exKey {
	k := exKey{conn: e.Client.String() + ">" + e.Broker.String(), kind: e.Kind, key: e.APIKey, ver: e.APIVersion, corr: e.CorrelationID}
	if e.Request != nil {
		k.reqT = e.Request.Time.UnixNano()
	}
	if e.Response != nil {
		k.resT = e.Response.Time.UnixNano()
	}
	return k
}

func keys(r runResult) map[exKey]int {
	m := map[exKey]int{}
	for _, e := range r.sink.ex {
		m[keyOf(e)]++
	}
	return m
}

// sameExchanges reports the first difference between two runs' exchanges.
func sameExchanges(a, b runResult) error {
	ka, kb := keys(a), keys(b)
	for k, n := range ka {
		if kb[k] != n {
			return fmt.Errorf("exchange %+v: %d vs %d", k, n, kb[k])
		}
	}
	for k, n := range kb {
		if ka[k] != n {
			return fmt.Errorf("exchange %+v: %d vs %d", k, ka[k], n)
		}
	}
	return nil
}

// dataPackets returns the indexes of packets carrying TCP payload.
func dataPackets(pkts []capPacket) []int {
	var out []int
	for i, p := range pkts {
		if p.payLen > 0 {
			out = append(out, i)
		}
	}
	return out
}

func isBrokerPort(p uint16) bool {
	for _, q := range capPorts {
		if p == q {
			return true
		}
	}
	return false
}

// wholeRequest says whether payload is exactly one request frame, and
// returns its correlation ID.
func wholeRequest(payload []byte) (int32, bool) {
	if len(payload) < 12 || int(binary.BigEndian.Uint32(payload)) != len(payload)-4 {
		return 0, false
	}
	return int32(binary.BigEndian.Uint32(payload[8:])), true
}

func without(pkts []capPacket, drop ...int) []capPacket {
	out := make([]capPacket, 0, len(pkts))
	for i, p := range pkts {
		skip := false
		for _, d := range drop {
			skip = skip || d == i
		}
		if !skip {
			out = append(out, p)
		}
	}
	return out
}

const messyBase = "sarama-produce-consume.pcap"

func TestMessyBaseline(t *testing.T) {
	pkts, link := loadCapture(t, messyBase)
	base := dissectFile(t, writeCapture(t, pkts, link))
	s := base.sum
	if base.err != nil || s.Kafka == 0 || s.Paired == 0 || s.Paired != s.Exchanges || s.Gaps != 0 || s.Resyncs != 0 || s.BadFrames != 0 || s.DecodeErrors != 0 {
		t.Fatalf("the undamaged capture should pair cleanly: err %v, summary %+v", base.err, s)
	}
}

// allCaptures lists the golden captures, skipping the test when there are
// none.
func allCaptures(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(files) == 0 {
		t.Skip("../pcaps has no captures (make pcaps)")
	}
	return files
}

// TestMessyDuplicateSegment duplicates data packets (a retransmission)
// across every golden capture: the exchanges must not change.
func TestMessyDuplicateSegment(t *testing.T) {
	for _, f := range allCaptures(t) {
		pkts, link := loadCapture(t, filepath.Base(f))
		base := dissectFile(t, writeCapture(t, pkts, link))
		data := dataPackets(pkts)
		for k := 1; k < len(data); k += max(1, len(data)/6) {
			at := data[k]
			dup := append(append(append([]capPacket(nil), pkts[:at+1]...), pkts[at]), pkts[at+1:]...)
			got := dissectFile(t, writeCapture(t, dup, link))
			if err := sameExchanges(base, got); err != nil {
				t.Errorf("%s, packet %d twice: %v", filepath.Base(f), at+1, err)
			}
			if got.sum.Gaps != 0 || got.sum.Resyncs != 0 || got.sum.BadFrames != 0 {
				t.Errorf("%s, packet %d twice: summary %+v", filepath.Base(f), at+1, got.sum)
			}
		}
	}
}

// TestMessyReorderedSegments swaps two adjacent data packets of one
// direction of one connection (the second arrives first, then the first
// fills the hole) across every golden capture: the exchanges must not
// change. Only packets adjacent in the capture are swapped, so no ACK
// between them vouches for the first (an ACK of unseen bytes would rightly
// make it a gap).
func TestMessyReorderedSegments(t *testing.T) {
	swapped := 0
	for _, f := range allCaptures(t) {
		pkts, link := loadCapture(t, filepath.Base(f))
		base := dissectFile(t, writeCapture(t, pkts, link))
		data := dataPackets(pkts)
		n := 0
		for k := 0; k+1 < len(data) && n < 3; k++ {
			i, j := data[k], data[k+1]
			if j != i+1 || pkts[i].src != pkts[j].src || pkts[i].dst != pkts[j].dst {
				continue
			}
			re := append([]capPacket(nil), pkts...)
			re[i], re[j] = re[j], re[i]
			re[i].ci.Timestamp, re[j].ci.Timestamp = pkts[i].ci.Timestamp, pkts[j].ci.Timestamp
			got := dissectFile(t, writeCapture(t, re, link))
			if got.sum.Gaps != 0 || got.sum.Resyncs != 0 || got.sum.Paired != base.sum.Paired || got.sum.Orphans != 0 {
				t.Errorf("%s, packets %d and %d swapped: summary %+v (baseline paired %d)", filepath.Base(f), i+1, j+1, got.sum, base.sum.Paired)
			}
			n++
		}
		swapped += n
	}
	if swapped == 0 {
		t.Skip("no two adjacent data packets in one direction to swap")
	}
	t.Logf("%d swaps", swapped)
}

func TestMessyDroppedSegment(t *testing.T) {
	pkts, link := loadCapture(t, messyBase)
	base := dissectFile(t, writeCapture(t, pkts, link))
	// Drop a client packet that holds exactly one request frame, in the
	// middle of the capture: its response becomes an orphan, with a guess.
	var at int = -1
	var corr int32
	data := dataPackets(pkts)
	for _, i := range data[len(data)/2:] {
		if isBrokerPort(pkts[i].dst) {
			if c, ok := wholeRequest(pkts[i].payload()); ok {
				at, corr = i, c
				break
			}
		}
	}
	if at < 0 {
		t.Skip("no single-request client packet to drop")
	}
	got := dissectFile(t, writeCapture(t, without(pkts, at), link))
	s := got.sum
	if s.Gaps < 1 || s.Paired != base.sum.Paired-1 || s.Orphans != 1 || s.BadFrames != 0 {
		t.Fatalf("dropped packet %d: summary %+v (baseline paired %d)", at+1, s, base.sum.Paired)
	}
	for _, e := range got.sink.ex {
		if e.Kind == KindOrphan {
			if e.CorrelationID != corr {
				t.Errorf("orphan correlation ID %d, want %d (the dropped request's)", e.CorrelationID, corr)
			}
			t.Logf("orphan notes: %q", e.Notes)
		}
	}
}

func TestMessyStartMidFrame(t *testing.T) {
	// kgo-large-value.pcap has a 1.5 MB Produce request and a Fetch
	// response that each span many segments: start the capture inside
	// each, so one direction begins mid-frame with no SYN.
	pkts, link := loadCapture(t, "kgo-large-value.pcap")
	base := dissectFile(t, writeCapture(t, pkts, link))
	var big *Exchange
	for _, dir := range []string{"request", "response"} {
		t.Run(dir, func(t *testing.T) {
			big = nil
			for _, e := range base.sink.ex {
				f := e.Request
				if dir == "response" {
					f = e.Response
				}
				if f != nil && f.LastPacket-f.FirstPacket >= 4 && (big == nil || f.Size() > frameOf(big, dir).Size()) {
					big = e
				}
			}
			if big == nil {
				t.Skip("no frame spanning several packets")
			}
			f := frameOf(big, dir)
			cut := int(f.FirstPacket+f.LastPacket) / 2 // packet numbers are 1-based
			got := dissectFile(t, writeCapture(t, pkts[cut-1:], link))
			// Exchanges whose request starts after the cut pair as before.
			after := int64(0)
			for _, e := range base.sink.ex {
				if e.Request != nil && e.Request.FirstPacket >= int64(cut) && e.Kind == KindPaired {
					after++
				}
			}
			if got.sum.Paired < after || got.sum.Paired > after+1 {
				t.Errorf("cut at packet %d: %d paired, want %d (those requested after the cut)", cut, got.sum.Paired, after)
			}
			resync := 0
			for _, ev := range got.sink.events(EventResync) {
				sender := ev.Conn.A
				if ev.Dir == reassembly.BtoA {
					sender = ev.Conn.B
				}
				want := big.Client
				if dir == "response" {
					want = big.Broker
				}
				if ev.Bytes > 0 && sender.Port() == want.Port() {
					resync++
				}
			}
			if resync != 1 || got.sum.BadFrames != 0 {
				t.Errorf("cut at packet %d: %d resyncs on the connection, %d bad frames; summary %+v", cut, resync, got.sum.BadFrames, got.sum)
			}
		})
	}
}

func frameOf(e *Exchange, dir string) *Frame {
	if dir == "response" {
		return e.Response
	}
	return e.Request
}

func TestMessyTruncatedFile(t *testing.T) {
	pkts, link := loadCapture(t, messyBase)
	base := dissectFile(t, writeCapture(t, pkts, link))
	path := writeCapture(t, pkts, link)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the file in the middle of the last data packet's record.
	data := dataPackets(pkts)
	last := pkts[data[len(data)-1]]
	trail := 0
	for _, p := range pkts[data[len(data)-1]+1:] {
		trail += 16 + len(p.data)
	}
	size := fi.Size() - int64(trail) - int64(len(last.data)/2)
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
	got := dissectFile(t, path)
	// Everything but the exchange of the last data packet survives.
	if got.sum.Paired < base.sum.Paired-1 || got.sum.Paired > base.sum.Paired || got.sum.Orphans != 0 {
		t.Errorf("truncated file: summary %+v (baseline paired %d), read error %v", got.sum, base.sum.Paired, got.err)
	}
}

// TestMessySmallSnapLength cuts every packet of every golden capture to a
// small snap length. Loopback packets carry 66 bytes of Ethernet, IPv4 and
// TCP headers (with timestamps), so a snap length of 96 leaves 30 payload
// bytes: the request header up to part of the client id, the response's
// correlation ID. Every exchange must still pair; at 160 (94 payload
// bytes) the exchanges must be exactly those of the whole capture (at 96,
// the Acks of a Produce with a long client id may be cut, so an acks=0
// request can only be reported unanswered).
func TestMessySmallSnapLength(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(files) == 0 {
		t.Skip("../pcaps has no captures (make pcaps)")
	}
	for _, f := range files {
		pkts, link := loadCapture(t, filepath.Base(f))
		base := dissectFile(t, writeCapture(t, pkts, link))
		for _, snap := range []int{96, 160} {
			cut := make([]capPacket, len(pkts))
			for i, p := range pkts {
				cut[i] = p
				if len(p.data) > snap {
					cut[i].data = p.data[:snap]
				}
			}
			got := dissectFile(t, writeCapture(t, cut, link))
			s := got.sum
			// A request that starts past the snap length of its packet
			// (a client that writes several requests in one segment) is
			// lost whole: its response is an orphan, or lost too.
			lost := headerlessRequests(pkts, snap)
			if s.Paired != base.sum.Paired-lost || s.Orphans > lost || s.SASL != base.sum.SASL || s.BadFrames != 0 || s.Resyncs != 0 {
				t.Errorf("%s snap length %d: summary %+v (baseline paired %d, %d requests not captured)", filepath.Base(f), snap, s, base.sum.Paired, lost)
			}
			if base.sum.Frames > 0 && (s.Truncated == 0 || s.Gaps == 0) {
				t.Errorf("%s snap length %d: nothing truncated? %+v", filepath.Base(f), snap, s)
			}
			if err := sameExchanges(base, got); snap >= 160 && lost == 0 && err != nil {
				t.Errorf("%s snap length %d: %v", filepath.Base(f), snap, err)
			}
		}
	}
}

// headerlessRequests counts the request frames of pkts (client to broker
// port, in order, as in the golden captures) whose first 12 bytes (length,
// API key and version, correlation ID) are not all within the first snap
// bytes of their packets.
func headerlessRequests(pkts []capPacket, snap int) int64 {
	type at struct{ pkt, off int } // where a stream byte was captured
	streams := map[uint16]*struct {
		data []byte
		pos  []at
	}{}
	var order []uint16
	for i, p := range pkts {
		if p.payLen == 0 || !isBrokerPort(p.dst) {
			continue
		}
		s := streams[p.src]
		if s == nil {
			s = &struct {
				data []byte
				pos  []at
			}{}
			streams[p.src] = s
			order = append(order, p.src)
		}
		for j := range p.payLen {
			s.pos = append(s.pos, at{i, p.payOff + j})
		}
		s.data = append(s.data, p.payload()...)
	}
	var n int64
	for _, port := range order {
		s := streams[port]
		for off := 0; off+4 <= len(s.data); {
			for i := off; i < min(off+12, len(s.data)); i++ {
				if s.pos[i].off >= snap {
					n++
					break
				}
			}
			off += 4 + int(binary.BigEndian.Uint32(s.data[off:]))
		}
	}
	return n
}

func TestMessySameCorrelationIDTwice(t *testing.T) {
	pkts, link := loadCapture(t, messyBase)
	base := dissectFile(t, writeCapture(t, pkts, link))
	// Give the second request of a connection (and its response) the
	// first request's correlation ID: pairing stays FIFO and correct.
	var first *Exchange
	var second *Exchange
	for _, e := range base.sink.ex {
		if e.Kind != KindPaired {
			continue
		}
		if first != nil && e.Conn == first.Conn && e.Request.FirstPacket == e.Request.LastPacket && e.Response.FirstPacket == e.Response.LastPacket {
			second = e
			break
		}
		if first == nil && e.Request.FirstPacket == e.Request.LastPacket {
			first = e
		}
	}
	if second == nil {
		t.Skip("no suitable pair of exchanges")
	}
	re := append([]capPacket(nil), pkts...)
	patchCorr := func(pkt int64, frame []byte, off int) {
		p := &re[pkt-1]
		p.data = append([]byte(nil), p.data...)
		i := indexOf(p.payload(), frame)
		if i < 0 {
			t.Fatalf("frame not found in packet %d", pkt)
		}
		binary.BigEndian.PutUint32(p.data[p.payOff+i+off:], uint32(first.CorrelationID))
	}
	patchCorr(second.Request.FirstPacket, second.Request.Bytes, 8)
	patchCorr(second.Response.FirstPacket, second.Response.Bytes, 4)
	got := dissectFile(t, writeCapture(t, re, link))
	if got.sum.Paired != base.sum.Paired || got.sum.Orphans != 0 || got.sum.DuplicateIDs != 0 {
		t.Fatalf("summary %+v (baseline paired %d)", got.sum, base.sum.Paired)
	}
	n := 0
	for _, e := range got.sink.ex {
		if e.Conn.Index == first.Conn.Index && e.CorrelationID == first.CorrelationID {
			n++
			if e.Kind != KindPaired || e.Response.Time.Before(e.Request.Time) {
				t.Errorf("exchange %+v", e)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d exchanges with correlation ID %d, want 2", n, first.CorrelationID)
	}
}

func indexOf(b, sub []byte) int {
	for i := 0; i+len(sub) <= len(b); i++ {
		if string(b[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return -1
}

// TestMessyStartAnywhere cuts every golden capture at several packets (no
// SYN for the connections open there) and checks that every exchange whose
// request and response both come after the cut is still found, paired.
func TestMessyStartAnywhere(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(files) == 0 {
		t.Skip("../pcaps has no captures (make pcaps)")
	}
	for _, f := range files {
		pkts, link := loadCapture(t, filepath.Base(f))
		base := dissectFile(t, writeCapture(t, pkts, link))
		for _, frac := range []int{10, 35, 60, 85} {
			cut := len(pkts) * frac / 100 // first packet kept, 0-based
			got := dissectFile(t, writeCapture(t, pkts[cut:], link))
			gk := keys(got)
			missing := 0
			for _, e := range base.sink.ex {
				if e.Kind == KindPaired && e.Request.FirstPacket > int64(cut) && gk[keyOf(e)] == 0 {
					missing++
					if missing <= 3 {
						t.Errorf("%s cut at packet %d: missing %s v%d correlation ID %d (packets %d-%d)", filepath.Base(f), cut+1,
							protocol.APIName(e.APIKey), e.APIVersion, e.CorrelationID, e.Request.FirstPacket, e.Response.LastPacket)
					}
				}
			}
			if got.sum.BadFrames != 0 {
				t.Errorf("%s cut at packet %d: %d bad frames", filepath.Base(f), cut+1, got.sum.BadFrames)
			}
		}
	}
}

// TestMessyDropAnySegment drops, one at a time, a dozen data packets spread
// over each golden capture: every exchange whose frames do not include the
// dropped packet must still be found, paired, and nothing may be taken for
// a bad frame.
func TestMessyDropAnySegment(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "pcaps", "*.pcap"))
	if len(files) == 0 {
		t.Skip("../pcaps has no captures (make pcaps)")
	}
	for _, f := range files {
		pkts, link := loadCapture(t, filepath.Base(f))
		base := dissectFile(t, writeCapture(t, pkts, link))
		data := dataPackets(pkts)
		for k := 0; k < len(data); k += max(1, len(data)/12) {
			drop := data[k]
			num := int64(drop + 1)
			got := dissectFile(t, writeCapture(t, without(pkts, drop), link))
			gk := keys(got)
			for _, e := range base.sink.ex {
				if e.Kind != KindPaired {
					continue
				}
				touched := false
				for _, fr := range []*Frame{e.Request, e.Response} {
					touched = touched || num >= fr.FirstPacket && num <= fr.LastPacket
				}
				if !touched && gk[keyOf(e)] == 0 {
					t.Errorf("%s without packet %d: lost %s v%d correlation ID %d (packets %d-%d)", filepath.Base(f), num,
						protocol.APIName(e.APIKey), e.APIVersion, e.CorrelationID, e.Request.FirstPacket, e.Response.LastPacket)
				}
			}
			if got.sum.BadFrames != 0 {
				t.Errorf("%s without packet %d: %d bad frames", filepath.Base(f), num, got.sum.BadFrames)
			}
		}
	}
}
