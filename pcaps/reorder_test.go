package pcaps

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// Captures written out of order, made from kgo-produce-consume.pcap
// (Ethernet, IPv4, a broker on 19092) by moving packets as a capture merged
// from two capture points (mergecap, clocks a few hundred microseconds
// apart), one taken on several NIC queues or a bonded link would have
// them; generated here, not committed.

type pcapRec struct {
	ci   gopacket.CaptureInfo
	data []byte
}

// tcpInfo is what tcpOf reads of an Ethernet/IPv4/TCP frame: ports,
// sequence and acknowledgement numbers, header and payload offsets and the
// payload's length.
type tcpInfo struct {
	sport, dport uint16
	seq, ack     uint32
	tcp, pay     int // offsets of the TCP header and of the payload
	plen         int
}

func tcpOf(t *testing.T, b []byte) tcpInfo {
	t.Helper()
	if len(b) < 54 || binary.BigEndian.Uint16(b[12:]) != 0x0800 || b[23] != 6 {
		t.Fatalf("not Ethernet/IPv4/TCP: % x", b[:min(len(b), 40)])
	}
	ihl := int(b[14]&15) * 4
	tcp := 14 + ihl
	thl := int(b[tcp+12]>>4) * 4
	tot := int(binary.BigEndian.Uint16(b[16:]))
	return tcpInfo{sport: binary.BigEndian.Uint16(b[tcp:]), dport: binary.BigEndian.Uint16(b[tcp+2:]),
		seq: binary.BigEndian.Uint32(b[tcp+4:]), ack: binary.BigEndian.Uint32(b[tcp+8:]),
		tcp: tcp, pay: tcp + thl, plen: tot - ihl - thl}
}

// splitSeg cuts a data segment in two at payload byte n.
func splitSeg(t *testing.T, b []byte, n int) (first, second []byte) {
	p := tcpOf(t, b)
	first = slices.Clone(b[:p.pay+n])
	second = append(slices.Clone(b[:p.pay]), b[p.pay+n:p.pay+p.plen]...)
	for _, x := range []struct {
		b   []byte
		l   int
		seq uint32
	}{{first, n, p.seq}, {second, p.plen - n, p.seq + uint32(n)}} {
		binary.BigEndian.PutUint16(x.b[16:], uint16(p.pay-14+x.l))
		binary.BigEndian.PutUint32(x.b[p.tcp+4:], x.seq)
	}
	return first, second
}

const reorderBroker = 19092

// moved is a request the reordering moved or dropped: its connection's
// client port and the correlation ID of the frame its payload starts.
type moved struct {
	port uint16
	corr int32
}

// reorder rewrites recs: every nth request segment of the client (not a
// connection's first) is
//   - "respfirst": written after the first segment of its response,
//     stamped 1µs after it;
//   - "ooo": split in two, the second half written first;
//   - "both": split in two, the second half written in its place, the
//     first after the response's first segment;
//   - "lost": dropped (a request the capture really missed).
func reorder(t *testing.T, recs []pcapRec, mode string, every int) ([]pcapRec, []moved) {
	t.Helper()
	out := slices.Clone(recs)
	var got []moved
	seen := map[uint16]bool{}
	count := 0
	for i := 0; i < len(out); i++ {
		p := tcpOf(t, out[i].data)
		if p.dport != reorderBroker || p.plen < 12 {
			continue
		}
		if !seen[p.sport] {
			seen[p.sport] = true
			continue
		}
		if count++; count%every != 0 {
			continue
		}
		m := moved{port: p.sport, corr: int32(binary.BigEndian.Uint32(out[i].data[p.pay+8:]))}
		end := p.seq + uint32(p.plen)
		j := slices.IndexFunc(out[i+1:], func(r pcapRec) bool {
			q := tcpOf(t, r.data)
			return q.sport == reorderBroker && q.dport == p.sport && q.plen > 0 && int32(q.ack-end) >= 0
		})
		if mode == "lost" {
			out = slices.Delete(out, i, i+1)
			got = append(got, m)
			i--
			continue
		}
		if j < 0 {
			continue // not answered: left alone
		}
		j += i + 1
		req := out[i]
		late := func(b []byte) pcapRec {
			ci := out[j].ci
			ci.Timestamp = ci.Timestamp.Add(time.Microsecond)
			ci.CaptureLength, ci.Length = len(b), len(b)
			return pcapRec{ci: ci, data: b}
		}
		switch mode {
		case "respfirst":
			out = slices.Insert(out, j+1, late(req.data))
			out = slices.Delete(out, i, i+1)
			i--
		case "ooo":
			a, b := splitSeg(t, req.data, p.plen/2)
			ca, cb := req.ci, req.ci
			ca.CaptureLength, ca.Length = len(a), len(a)
			cb.CaptureLength, cb.Length = len(b), len(b)
			ca.Timestamp = ca.Timestamp.Add(time.Microsecond)
			out = slices.Replace(out, i, i+1, pcapRec{cb, b}, pcapRec{ca, a})
			i++
		case "both":
			a, b := splitSeg(t, req.data, p.plen/2)
			cb := req.ci
			cb.CaptureLength, cb.Length = len(b), len(b)
			out = slices.Insert(out, j+1, late(a))
			out[i] = pcapRec{cb, b}
		}
		got = append(got, m)
	}
	return out, got
}

func readRecs(t *testing.T, name string) []pcapRec {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var recs []pcapRec
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		recs = append(recs, pcapRec{ci, slices.Clone(data)})
	}
	return recs
}

func writeRecs(t *testing.T, recs []pcapRec) string {
	t.Helper()
	var b bytes.Buffer
	w := pcapgo.NewWriter(&b)
	if err := w.WriteFileHeader(65536, layers.LinkTypeEthernet); err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.WritePacket(r.ci, r.data); err != nil {
			t.Fatal(err)
		}
	}
	p := filepath.Join(t.TempDir(), "reordered.pcap")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// skew shifts every packet the clients sent (SYN included) by d and
// sorts the capture by time, packets of equal times in their order: a
// merge (mergecap) of a capture of the clients' packets whose clock was d
// behind with one of the broker's.
func skew(t *testing.T, recs []pcapRec, d time.Duration) []pcapRec {
	out := slices.Clone(recs)
	for i := range out {
		if tcpOf(t, out[i].data).dport == reorderBroker {
			out[i].ci.Timestamp = out[i].ci.Timestamp.Add(d)
		}
	}
	slices.SortStableFunc(out, func(a, b pcapRec) int { return a.ci.Timestamp.Compare(b.ci.Timestamp) })
	return out
}

// reorderDoc is what TestReorderedCaptures reads of an exchange.
type reorderDoc struct {
	Kind          string   `json:"kind"`
	Client        string   `json:"client"`
	API           string   `json:"api"`
	APIVersion    int16    `json:"apiVersion"`
	CorrelationID int32    `json:"correlationId"`
	LatencyMs     *float64 `json:"latencyMs"`
	Notes         []string `json:"notes"`
	Request       *struct {
		Frame     int64 `json:"frame"`
		LastFrame int64 `json:"lastFrame"`
	} `json:"request"`
	Response *struct {
		Frame int64 `json:"frame"`
	} `json:"response"`
}

func (d *reorderDoc) key() string {
	return fmt.Sprintf("%s %s v%d corr=%d %s", d.Client, d.API, d.APIVersion, d.CorrelationID, d.Kind)
}

func reorderDocs(t *testing.T, out []byte) []*reorderDoc {
	t.Helper()
	var docs []*reorderDoc
	for _, line := range bytes.Split(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		d := &reorderDoc{}
		if err := json.Unmarshal(line, d); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(eventKinds, d.Kind) {
			continue
		}
		docs = append(docs, d)
	}
	return docs
}

func isReordered(d *reorderDoc) bool {
	return slices.ContainsFunc(d.Notes, func(n string) bool { return strings.HasPrefix(n, "reordered: response captured") })
}

// TestReorderedCaptures: responses written before their requests (and
// requests split and written out of order) pair as in the capture
// they were made from, by connection and correlation ID, with exit status
// 0; those whose response came first are marked reordered, latency null,
// and only they; a request really missing is still a gap and its response
// an orphan, exit status 1; --reorder-window 0 gives holes up at once.
func TestReorderedCaptures(t *testing.T) {
	src := "kgo-produce-consume.pcap"
	recs := readRecs(t, src)
	base := kwire(t, "read", "--json", src)
	if base.exit != 0 {
		t.Fatalf("%s: exit %d", src, base.exit)
	}
	var want []string
	for _, d := range reorderDocs(t, base.stdout) {
		want = append(want, d.key())
	}
	slices.Sort(want)
	if len(want) != 143 {
		t.Fatalf("%s: %d exchanges, want 143", src, len(want))
	}
	clientOf := func(m moved) string { return fmt.Sprintf("127.0.0.1:%d", m.port) }
	for _, mode := range []string{"respfirst", "ooo", "both"} {
		t.Run(mode, func(t *testing.T) {
			out, mv := reorder(t, recs, mode, 5)
			if len(mv) < 10 {
				t.Fatalf("%d requests moved", len(mv))
			}
			p := writeRecs(t, out)
			res := kwire(t, "read", "--json", p)
			if res.exit != 0 {
				t.Fatalf("exit %d: %s", res.exit, res.stderr)
			}
			docs := reorderDocs(t, res.stdout)
			var got []string
			reordered := map[string]bool{}
			for _, d := range docs {
				got = append(got, d.key())
				if isReordered(d) {
					reordered[fmt.Sprintf("%s %d", d.Client, d.CorrelationID)] = true
					if d.LatencyMs != nil || d.Kind != "paired" {
						t.Errorf("reordered %s: latency %v", d.key(), d.LatencyMs)
					}
				} else if d.Kind == "paired" && (d.LatencyMs == nil || *d.LatencyMs < 0) {
					t.Errorf("%s: latency %v", d.key(), d.LatencyMs)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("exchanges differ from %s's:\n%s", src, strings.Join(diffLines(want, got), "\n"))
			}
			var wantReordered []string
			if mode != "ooo" {
				for _, m := range mv {
					wantReordered = append(wantReordered, fmt.Sprintf("%s %d", clientOf(m), m.corr))
				}
			}
			gotReordered := slices.Sorted(maps.Keys(reordered))
			slices.Sort(wantReordered)
			t.Logf("%d requests moved, %d pairs reordered, %d exchanges", len(mv), len(gotReordered), len(got))
			if !slices.Equal(gotReordered, wantReordered) {
				t.Errorf("reordered %v\nwant %v", gotReordered, wantReordered)
			}
			if mode == "respfirst" {
				// Without the window, as before it: the late requests are gaps.
				res := kwire(t, "read", "--json", "--reorder-window", "0", p)
				n := 0
				for _, d := range reorderDocs(t, res.stdout) {
					if d.Kind == "orphan" {
						n++
					}
				}
				if res.exit != 1 || n != len(mv) {
					t.Errorf("--reorder-window 0: exit %d, %d orphans, want 1, %d", res.exit, n, len(mv))
				}
			}
		})
	}
	// All of the clients' packets 300µs late, then 5 ms (within the
	// window): every pair whose response's first packet came less than
	// that after its request's last is reordered, and only those.
	for _, d := range []time.Duration{300 * time.Microsecond, 5 * time.Millisecond} {
		t.Run(fmt.Sprintf("skew%dus", d.Microseconds()), func(t *testing.T) {
			var wantReordered []string
			for _, e := range reorderDocs(t, base.stdout) {
				if e.Kind != "paired" {
					continue
				}
				req, resp := recs[e.Request.LastFrame-1].ci.Timestamp, recs[e.Response.Frame-1].ci.Timestamp
				if resp.Before(req.Add(d)) {
					wantReordered = append(wantReordered, fmt.Sprintf("%s %d", e.Client, e.CorrelationID))
				}
			}
			p := writeRecs(t, skew(t, recs, d))
			res := kwire(t, "read", "--json", p)
			if res.exit != 0 {
				t.Fatalf("exit %d: %s", res.exit, res.stderr)
			}
			var got, gotReordered []string
			for _, e := range reorderDocs(t, res.stdout) {
				got = append(got, e.key())
				if isReordered(e) {
					gotReordered = append(gotReordered, fmt.Sprintf("%s %d", e.Client, e.CorrelationID))
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("exchanges differ from %s's:\n%s", src, strings.Join(diffLines(want, got), "\n"))
			}
			slices.Sort(gotReordered)
			slices.Sort(wantReordered)
			t.Logf("%d pairs reordered", len(gotReordered))
			if len(wantReordered) < 100 || !slices.Equal(gotReordered, wantReordered) {
				t.Errorf("reordered:\n%s", strings.Join(diffLines(wantReordered, gotReordered), "\n"))
			}
		})
	}
	t.Run("lost", func(t *testing.T) {
		out, mv := reorder(t, recs, "lost", 5)
		p := writeRecs(t, out)
		res := kwire(t, "read", "--json", p)
		if res.exit != 1 || !strings.Contains(string(res.stderr), fmt.Sprintf("%d gaps", len(mv))) {
			t.Errorf("exit %d, stderr %s; want 1 and %d gaps", res.exit, res.stderr, len(mv))
		}
		var orphans, wantOrphans []string
		for _, d := range reorderDocs(t, res.stdout) {
			if isReordered(d) {
				t.Errorf("%s reordered", d.key())
			}
			if d.Kind == "orphan" {
				orphans = append(orphans, fmt.Sprintf("%s %d", d.Client, d.CorrelationID))
			}
		}
		for _, m := range mv {
			wantOrphans = append(wantOrphans, fmt.Sprintf("%s %d", clientOf(m), m.corr))
		}
		slices.Sort(orphans)
		slices.Sort(wantOrphans)
		if !slices.Equal(orphans, wantOrphans) {
			t.Errorf("orphans %v\nwant %v", orphans, wantOrphans)
		}
	})
}

func diffLines(want, got []string) []string {
	var d []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			d = append(d, "- "+w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			d = append(d, "+ "+g)
		}
	}
	return d
}
