package main

import (
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/capturetest"
)

// TestReadSnapLength: a capture taken with a snap length (as editcap -s
// 120 or tcpdump -s 120 make it) says its missing bytes were not
// captured, cut by the snap length, not lost on the network: on the
// summary (how many packets, cut to how many bytes) and in each GAP's
// description (the packet, its captured and wire lengths). It was "200
// gaps (49741 bytes lost)" and "GAP 740 bytes (740 bytes lost)". The
// gaps stay, and so does exit status 1: the capture could not be fully
// dissected.
func TestReadSnapLength(t *testing.T) {
	link, pkts, err := capturetest.ReadPcap(goldenPcap(t, "kgo-produce-consume.pcap"))
	if err != nil || link != 1 {
		t.Fatalf("link %d: %v", link, err)
	}
	cut := 0
	for i := range pkts {
		if len(pkts[i].Data) > 120 {
			pkts[i].Data = pkts[i].Data[:120]
			cut++
		}
	}
	path := writeTemp(t, "snap120.pcap", capturetest.Pcap(capturetest.PcapOptions{Link: 1, Snaplen: 120}, pkts).Bytes)
	out, errOut, code := kwireInProcess(t, "read", path)
	if cut != 200 {
		t.Fatalf("%d packets cut, want 200 (as editcap -s 120 cuts them)", cut)
	}
	gaps := "200 gaps (49741 bytes not captured: the snap length cut 200 packets to 120 bytes)"
	if want := "anomalies: " + gaps + ", 200 truncated frames\n"; !strings.HasSuffix(out, want) {
		t.Errorf("stdout ends\n%s\nwant it to end %q", out[max(len(out)-300, 0):], want)
	}
	if want := "kwire: warning: the capture could not be fully dissected: " + gaps + ", 200 truncated frames\n"; code != exitData || errOut != want {
		t.Errorf("exit %d, stderr %q; want %d, %q", code, errOut, exitData, want)
	}
	out, _, _ = kwireInProcess(t, "read", "--verbose", path)
	if want := " GAP 740 bytes (740 bytes not captured: the snap length cut packet 6 to 120 of its 860 bytes)\n"; !strings.Contains(out, want) {
		t.Errorf("--verbose holds no %q", want)
	}
}
