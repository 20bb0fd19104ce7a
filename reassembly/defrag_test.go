package reassembly

import (
	"context"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/kwire/kwire/internal/capturetest"
)

// fragments splits a raw IPv4 or IPv6 packet (LinkTypeRaw, no extension
// headers) into fragments of its payload at the given offsets (multiples
// of 8), as fragment segments with identification id.
func fragments(t *testing.T, pkt []byte, id uint32, cuts ...int) [][]byte {
	t.Helper()
	hl := 20
	if pkt[0]>>4 == 6 {
		hl = 40
	}
	payload := pkt[hl:]
	bounds := append(append([]int{0}, cuts...), len(payload))
	var out [][]byte
	for i := 0; i+1 < len(bounds); i++ {
		off, end := bounds[i], bounds[i+1]
		if off%8 != 0 {
			t.Fatalf("fragment offset %d is not a multiple of 8", off)
		}
		more := i+2 < len(bounds)
		part := payload[off:end]
		f := slices.Clone(pkt[:hl])
		if hl == 20 {
			ff := uint16(off / 8)
			if more {
				ff |= 0x2000
			}
			binary.BigEndian.PutUint16(f[2:4], uint16(hl+len(part)))
			binary.BigEndian.PutUint16(f[4:6], uint16(id))
			binary.BigEndian.PutUint16(f[6:8], ff)
			f = append(f, part...)
		} else {
			fo := uint16(off)
			if more {
				fo |= 1
			}
			next := f[6]
			f[6] = 44
			binary.BigEndian.PutUint16(f[4:6], uint16(8+len(part)))
			f = append(f, next, 0, byte(fo>>8), byte(fo), 0, 0, 0, 0)
			binary.BigEndian.PutUint32(f[len(f)-4:], id)
			f = append(f, part...)
		}
		out = append(out, f)
	}
	return out
}

// TestIPFragments: a TCP segment carried in IP fragments is delivered
// when its last fragment arrives, under that frame's number, and the
// connection it opens is numbered in Wireshark's order (tcp.stream is
// given at the packet that completes the datagram).
func TestIPFragments(t *testing.T) {
	for _, tc := range []struct{ name, c, s string }{
		{"IPv4", "10.0.0.1:40000", "10.0.0.2:9092"},
		{"IPv6", "[fd00::1]:40000", "[fd00::2]:9092"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A capture that starts mid-connection with a fragmented
			// request; its two fragments arrive in reverse order.
			a := newConv(tc.c, tc.s, 100, 900)
			req := a.next(true, strings.Repeat("fragmented request ", 4))
			whole := frame(t, layers.LinkTypeRaw, req)
			fr := fragments(t, whole, 77, 32)
			var segs []seg
			segs = append(segs, seg{at: time.Millisecond, raw: fr[1]}, seg{at: 2 * time.Millisecond, raw: fr[0]})
			a.at = 2 * time.Millisecond
			a.send(false, "response")
			b := newConv(strings.Replace(tc.c, "40000", "40001", 1), tc.s, 1, 1)
			b.at = a.at
			b.handshake()
			b.send(true, "next")
			segs = append(append(segs, a.segs...), b.segs...)
			h, sum := mustRead(t, pcapBytes(t, layers.LinkTypeRaw, segs), Options{})
			if len(h.conns) != 2 || h.conns[0].A != req.src || h.conns[1].A != b.c {
				t.Fatalf("log %v", h.log)
			}
			if got := h.stream(0, AtoB); got != string(req.payload) {
				t.Errorf("request %q, want %q", got, req.payload)
			}
			if h.stream(0, BtoA) != "response" || h.stream(1, AtoB) != "next" {
				t.Errorf("streams %q %q", h.stream(0, BtoA), h.stream(1, AtoB))
			}
			if len(h.chunks) == 0 || h.chunks[0].frame != 2 {
				t.Errorf("request chunk %+v, want frame 2 (the last fragment)", h.chunks)
			}
			if sum.Fragments != 0 || sum.TCPPackets != int64(len(segs)) || sum.DecodeErrors != 0 {
				t.Errorf("fragments %d, TCP packets %d, decode errors %d", sum.Fragments, sum.TCPPackets, sum.DecodeErrors)
			}
		})
	}
}

// TestIPFragmentsLost: a datagram missing a fragment, or with a fragment
// the snap length cut, delivers nothing; the hole becomes a gap of the
// TCP stream.
func TestIPFragmentsLost(t *testing.T) {
	for _, lose := range []string{"missing", "cut"} {
		t.Run(lose, func(t *testing.T) {
			a := newConv("10.0.0.1:40000", "10.0.0.2:9092", 100, 900)
			a.handshake()
			req := a.next(true, strings.Repeat("x", 48))
			fr := fragments(t, frame(t, layers.LinkTypeRaw, req), 5, 16, 32)
			segs := slices.Clone(a.segs)
			frags := []seg{{raw: fr[0]}, {raw: fr[2]}} // fr[1] missing
			if lose == "cut" {
				// All there, the last one cut: rebuilt, it would be short.
				frags = []seg{{raw: fr[0]}, {raw: fr[1]}, {raw: fr[2], snap: 30}}
			}
			for _, x := range frags {
				a.at += time.Millisecond
				x.at = a.at
				segs = append(segs, x)
			}
			n := len(a.segs)
			a.send(true, "after")
			a.send(false, "ack")
			segs = append(segs, a.segs[n:]...)
			h, sum := mustRead(t, pcapBytes(t, layers.LinkTypeRaw, segs), Options{})
			if got := h.stream(0, AtoB); got != "after" {
				t.Errorf("delivered %q, want only the bytes after the lost datagram", got)
			}
			if g := h.filter("gap 0 0"); !slices.Equal(g, []string{"gap 0 0 48"}) {
				t.Errorf("gaps %v, want one of the 48 payload bytes", g)
			}
			// Lost at the end of input: fragments not reassembled.
			if sum.Fragments != int64(len(frags)) || sum.DecodeErrors != 0 || sum.TCPPackets != int64(len(segs)-len(frags)) {
				t.Errorf("fragments %d, decode errors %d, TCP packets %d", sum.Fragments, sum.DecodeErrors, sum.TCPPackets)
			}
		})
	}
}

// TestIPFragmentsOverlap: a fragment that repeats bytes already held (a
// duplicate) is harmless; one that overlaps them with different bytes
// gets its datagram discarded, as Linux and RFC 5722 have receivers do
// (which copy a receiver keeps differs between systems): its bytes are a
// gap, counted in FragmentConflicts. kwire kept the later copy's bytes
// unsaid, a topic renamed by an overlapping fragment read as sent.
func TestIPFragmentsOverlap(t *testing.T) {
	for _, tc := range []struct {
		name     string
		conflict bool
	}{{"duplicate", false}, {"conflict", true}} {
		t.Run(tc.name, func(t *testing.T) {
			a := newConv("10.0.0.1:40000", "10.0.0.2:9092", 100, 900)
			a.handshake()
			req := a.next(true, strings.Repeat("x", 48))
			whole := frame(t, layers.LinkTypeRaw, req)
			fr := fragments(t, whole, 5, 16, 32)
			again := slices.Clone(fr[1])
			if tc.conflict {
				again[len(again)-1] = 'Z'
			}
			segs := slices.Clone(a.segs)
			for _, x := range [][]byte{fr[0], fr[1], again, fr[2]} {
				a.at += time.Millisecond
				segs = append(segs, seg{at: a.at, raw: x})
			}
			n := len(a.segs)
			a.send(true, "after")
			segs = append(segs, a.segs[n:]...)
			h, sum := mustRead(t, pcapBytes(t, layers.LinkTypeRaw, segs), Options{})
			want, frags, conflicts := strings.Repeat("x", 48)+"after", int64(0), int64(0)
			if tc.conflict {
				want, frags, conflicts = "after", 4, 4
			}
			if got := h.stream(0, AtoB); got != want {
				t.Errorf("delivered %q, want %q", got, want)
			}
			if sum.Fragments != frags || sum.FragmentConflicts != conflicts {
				t.Errorf("fragments %d, conflicts %d; want %d, %d", sum.Fragments, sum.FragmentConflicts, frags, conflicts)
			}
			if g := h.filter("gap 0 0"); tc.conflict != slices.Equal(g, []string{"gap 0 0 48"}) {
				t.Errorf("gaps %v", g)
			}
		})
	}
}

// TestDefragBounds: pending datagrams are bounded in number and bytes and
// expire by capture time.
func TestDefragBounds(t *testing.T) {
	var f defragmenter
	src, dst := []byte{10, 0, 0, 1}, []byte{10, 0, 0, 2}
	now := t0
	data := make([]byte, 64<<10-64)
	for i := range maxFragDatagrams + 300 {
		fr := fragment{id: uint32(i), proto: 6, off: 0, more: true, data: data}
		if _, _, ok := f.add(src, dst, &fr, now); ok {
			t.Fatal("a first fragment completed a datagram")
		}
		if len(f.pending) > maxFragDatagrams || f.bytes > DefaultMaxFragmentMemory {
			t.Fatalf("after %d datagrams: %d pending, %d bytes", i+1, len(f.pending), f.bytes)
		}
	}
	evicted := f.takeLost()
	if evicted == 0 {
		t.Error("nothing evicted")
	}
	f.expire(now.Add(time.Second))
	if len(f.pending) != 0 || len(f.order) != 0 || f.bytes != 0 {
		t.Errorf("after expiry: %d pending, %d ordered, %d bytes", len(f.pending), len(f.order), f.bytes)
	}
	if n := evicted + f.takeLost(); n != maxFragDatagrams+300 {
		t.Errorf("%d fragments lost, want all %d", n, maxFragDatagrams+300)
	}
	// A fragment reaching past 64 KiB gives the datagram up.
	fr := fragment{id: 1, proto: 6, off: 65528, more: false, data: make([]byte, 16)}
	if _, _, ok := f.add(src, dst, &fr, now); ok || f.bytes != fragDatagramCost || f.takeLost() != 1 {
		t.Errorf("oversized datagram: ok %v, %d bytes held", ok, f.bytes)
	}
}

// FuzzDefrag feeds arbitrary fragment sequences to the defragmenter: no
// panic, bounds kept, a rebuilt datagram as long as its last fragment says.
func FuzzDefrag(f *testing.F) {
	f.Add([]byte{0, 0, 16, 1, 0, 2, 8, 0})
	f.Add([]byte{0, 4, 8, 0, 0, 0, 40, 1, 0, 9, 8, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d defragmenter
		src, dst := []byte{1, 2, 3, 4}, []byte{5, 6, 7, 8}
		for i := 0; i+4 <= len(b); i += 4 {
			// Each 4 bytes: offset in 8-byte units (2), length, flags (bit 0: more, bit 1: cut, bits 2-3: id).
			fr := fragment{id: uint32(b[i+3] >> 2 & 3), proto: 6, off: int(binary.BigEndian.Uint16(b[i:])) * 8 % (maxDatagram + 9),
				more: b[i+3]&1 != 0, data: make([]byte, b[i+2]), cut: b[i+3]&2 != 0}
			out, n, ok := d.add(src, dst, &fr, t0.Add(time.Duration(i)*time.Second))
			if ok && (n < 1 || !fr.more && len(out) != fr.off+len(fr.data)) {
				t.Fatalf("rebuilt %d bytes, the last fragment ends at %d", len(out), fr.off+len(fr.data))
			}
			if len(d.pending) > maxFragDatagrams || d.bytes > DefaultMaxFragmentMemory || d.bytes < 0 {
				t.Fatalf("%d pending, %d bytes", len(d.pending), d.bytes)
			}
			d.expire(t0.Add(time.Duration(i-8) * time.Second))
		}
	})
}

// TestDefragMemoryBound: Options.MaxFragmentMemory bounds the bytes held,
// fragments and their bookkeeping: with 100 KiB, 60 KiB datagrams are
// held one at a time, the older one given up for the newer.
func TestDefragMemoryBound(t *testing.T) {
	f := defragmenter{maxBytes: 100 << 10}
	src, dst := []byte{10, 0, 0, 1}, []byte{10, 0, 0, 2}
	half := make([]byte, 30<<10)
	for i := range 10 {
		fr := fragment{id: uint32(i), proto: 6, off: 0, more: true, data: half}
		f.add(src, dst, &fr, t0)
		fr2 := fragment{id: uint32(i), proto: 6, off: len(half), more: true, data: half}
		f.add(src, dst, &fr2, t0)
		if f.bytes > 100<<10 {
			t.Fatalf("after %d datagrams: %d bytes held, above the bound", i+1, f.bytes)
		}
	}
	if len(f.pending) != 1 {
		t.Errorf("%d datagrams pending, want the last one", len(f.pending))
	}
	if lost := f.takeLost(); lost != 18 {
		t.Errorf("%d fragments lost, want the 18 of the 9 older datagrams", lost)
	}
	// One fragment above the bound alone is given up at once.
	small := defragmenter{maxBytes: 1000}
	fr := fragment{id: 1, proto: 6, off: 0, more: true, data: make([]byte, 2000)}
	if _, _, ok := small.add(src, dst, &fr, t0); ok || len(small.pending) != 0 || small.bytes != 0 || small.takeLost() != 1 {
		t.Errorf("oversized fragment: %d pending, %d bytes", len(small.pending), small.bytes)
	}
}

// TestEachPacketFragments: EachPacket rebuilds IP fragments as a read
// does and gives a segment that came in fragments under its last one,
// with the frame numbers of all of them (a tunnel datagram's fragments
// around an inner fragment's too); the fragments before it are no TCP
// segment. The segments are those of the capture unfragmented.
func TestEachPacketFragments(t *testing.T) {
	pkts := goldenPackets(t)["kgo-produce-consume.pcap"]
	type segment struct {
		src, dst       string
		seq, ack       uint32
		flags          uint8
		payload        int
		frame          int64
		fragments      []int64
		fragmentedFrom int // the original packet, 1-based; 0: not fragmented
	}
	var frags []capturetest.Packet
	var want []segment
	fragmented := 0
	for i, p := range pkts {
		var parts [][]byte
		if len(p.Data) > 14+20+400 {
			var err error
			if parts, err = capturetest.FragmentIPv4(p.Data, 200); err != nil {
				t.Fatal(err)
			}
			switch fragmented % 3 {
			case 1: // the last fragment first
				parts[0], parts[1] = parts[1], parts[0]
			case 2: // each fragment in IPIP, whose packet is fragmented
				var outer [][]byte
				for _, inner := range parts {
					w, err := capturetest.Wrap(inner, capturetest.IPIP)
					if err != nil {
						t.Fatal(err)
					}
					o, err := capturetest.FragmentIPv4(w, 104)
					if err != nil {
						t.Fatal(err)
					}
					outer = append(outer, o...)
				}
				parts = outer
			}
			fragmented++
		} else {
			parts = [][]byte{p.Data}
		}
		first := int64(len(frags)) + 1
		for _, f := range parts {
			frags = append(frags, capturetest.Packet{Time: p.Time, Data: f, Length: len(f)})
		}
		s := segment{frame: int64(len(frags))}
		if len(parts) > 1 {
			s.fragmentedFrom = i + 1
			for f := first; f <= int64(len(frags)); f++ {
				s.fragments = append(s.fragments, f)
			}
		}
		want = append(want, s)
	}
	if fragmented < 9 {
		t.Fatalf("only %d packets fragmented", fragmented)
	}
	orig := writeFile(t, "orig.pcap", capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, pkts).Bytes)
	i := 0
	if err := EachPacket(context.Background(), []string{orig}, Options{}, func(p *Packet) error {
		if !p.TCP || p.Fragments != nil {
			t.Fatalf("original packet %d: TCP %v, fragments %v", p.Frame, p.TCP, p.Fragments)
		}
		w := &want[i]
		w.src, w.dst, w.seq, w.ack, w.flags, w.payload = p.Src.String(), p.Dst.String(), p.Seq, p.Ack, p.Flags, p.Payload
		i++
		return nil
	}); err != nil || i != len(pkts) {
		t.Fatalf("%d packets of %d: %v", i, len(pkts), err)
	}
	path := writeFile(t, "frag.pcap", capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 262144}, frags).Bytes)
	var got []segment
	if err := EachPacket(context.Background(), []string{path}, Options{}, func(p *Packet) error {
		if p.TCP {
			got = append(got, segment{src: p.Src.String(), dst: p.Dst.String(), seq: p.Seq, ack: p.Ack, flags: p.Flags,
				payload: p.Payload, frame: p.Frame, fragments: slices.Clone(p.Fragments)})
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d TCP segments, want %d", len(got), len(want))
	}
	for i := range want {
		w := want[i]
		w.fragmentedFrom = 0
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("segment %d (packet %d fragmented): got %+v, want %+v", i+1, want[i].fragmentedFrom, got[i], w)
		}
	}
}
