package reassembly

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// TestMerge: a connection split by direction into two files, and one cut
// in time into three (a ring buffer), read with Merge give the calls of
// the whole capture read as one file; frames count through the merge and
// Conn.File is the file of the connection's first packet.
func TestMerge(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	w := basicConv("10.0.0.3:3", "10.0.0.4:4")
	for i := range w.segs {
		w.segs[i].at += v.segs[len(v.segs)-1].at/2 + 333*time.Microsecond // overlaps v in time, no tie
	}
	all := append(slices.Clone(v.segs), w.segs...)
	slices.SortStableFunc(all, func(a, b seg) int { return int(a.at - b.at) })
	whole, _ := mustRead(t, pcapBytes(t, layers.LinkTypeEthernet, all), Options{})

	read := func(t *testing.T, parts [][]seg) (*rec, Summary) {
		var paths []string
		for i, p := range parts {
			paths = append(paths, writeFile(t, string(rune('a'+i)), pcapBytes(t, layers.LinkTypeEthernet, p)))
		}
		h := newRec()
		sum, err := ReadFiles(context.Background(), paths, Options{Merge: true}, h)
		if err != nil {
			t.Fatal(err)
		}
		return h, sum
	}
	t.Run("directions", func(t *testing.T) {
		var ab, ba []seg
		for _, s := range all {
			if s.src == ap("10.0.0.1:1") || s.src == ap("10.0.0.3:3") {
				ab = append(ab, s)
			} else {
				ba = append(ba, s)
			}
		}
		h, sum := read(t, [][]seg{ba, ab}) // the server's side first
		if !slices.Equal(h.log, whole.log) {
			t.Errorf("merged log\n%v\nwant\n%v", h.log, whole.log)
		}
		if sum.Packets != int64(len(all)) || len(sum.Files) != 2 || sum.Files[0].Packets != int64(len(ba)) {
			t.Errorf("summary %+v", sum)
		}
		if h.conns[0].File != 1 || h.conns[1].File != 1 {
			t.Errorf("files %d %d, want 1 (the SYNs')", h.conns[0].File, h.conns[1].File)
		}
	})
	t.Run("ring", func(t *testing.T) {
		n := len(all) / 3
		// Given out of order: the merge orders by time.
		h, _ := read(t, [][]seg{all[2*n:], all[:n], all[n : 2*n]})
		if !slices.Equal(h.log, whole.log) {
			t.Errorf("merged log\n%v\nwant\n%v", h.log, whole.log)
		}
		if h.conns[0].File != 1 {
			t.Errorf("file %d, want 1", h.conns[0].File)
		}
	})
}

// TestPacketFilter: packets the filter rejects are not numbered.
func TestPacketFilter(t *testing.T) {
	v := basicConv("10.0.0.1:1", "10.0.0.2:2")
	w := basicConv("10.0.0.3:3", "10.0.0.4:4")
	b := pcapBytes(t, layers.LinkTypeEthernet, append(v.segs, w.segs...))
	var sawIP int
	keep := func(data []byte, _ gopacket.CaptureInfo, link layers.LinkType) bool {
		ip, ok := IPHeader(data, link)
		if !ok {
			return false
		}
		sawIP++
		return ip[15] == 3 || ip[19] == 3 // 10.0.0.3 either way
	}
	h, sum := mustRead(t, b, Options{PacketFilter: keep})
	if len(h.conns) != 1 || h.conns[0].A != ap("10.0.0.3:3") || h.conns[0].Index != 0 {
		t.Fatalf("conns %v", h.log)
	}
	if sum.Packets != int64(len(w.segs)) || sawIP != len(v.segs)+len(w.segs) {
		t.Errorf("packets %d (want %d), filter saw %d", sum.Packets, len(w.segs), sawIP)
	}
	if h.chunks[0].frame != 4 {
		t.Errorf("first data in frame %d, want 4 (renumbered)", h.chunks[0].frame)
	}
}

func TestIPHeader(t *testing.T) {
	s := seg{src: ap("10.0.0.1:1"), dst: ap("10.0.0.2:2"), seq: 1, flags: "A", payload: []byte("x")}
	for _, link := range []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL, layers.LinkTypeLinuxSLL2, layers.LinkTypeNull, layers.LinkTypeRaw} {
		ip, ok := IPHeader(frame(t, link, s), link)
		if !ok || ip[0]>>4 != 4 || ip[12] != 10 || ip[19] != 2 {
			t.Errorf("%v: %v %x", link, ok, ip)
		}
	}
	if _, ok := IPHeader([]byte{1, 2}, layers.LinkTypeEthernet); ok {
		t.Error("short frame accepted")
	}
}
