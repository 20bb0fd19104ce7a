package pcaps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// dropSecondTail copies slow-broker.pcap without the last segment of its
// second Produce request (each request is 2148 bytes: a 1448-byte
// segment, MTU 1500, and a 700-byte one): a packet the capture missed
// although the broker received it (it acknowledges those bytes and
// answers). It returns the copy's path.
func dropSecondTail(t *testing.T) string {
	t.Helper()
	in, err := os.Open("slow-broker.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r, err := pcapgo.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := pcapgo.NewWriterNanos(&out)
	if err := w.WriteFileHeader(r.Snaplen(), r.LinkType()); err != nil {
		t.Fatal(err)
	}
	tails, dropped := 0, 0
	prev := 0 // the payload length of the previous client→broker segment
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(data, layers.LayerTypeEthernet, gopacket.NoCopy)
		if tcp, ok := p.Layer(layers.LayerTypeTCP).(*layers.TCP); ok && tcp.DstPort == 19352 {
			n := len(tcp.Payload)
			if n == 700 && prev == 1448 {
				tails++
				if tails == 2 {
					dropped++
					prev = n
					continue
				}
			}
			if n > 0 {
				prev = n
			}
		}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if dropped != 1 {
		t.Fatalf("found %d second Produce tails to drop, want 1", dropped)
	}
	path := filepath.Join(t.TempDir(), "slow-broker-missed.pcap")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCaptureLossIsNotNetworkTime: a segment the capture missed (the
// broker acknowledged it) cuts one Produce request; the requests after it
// are read whole. The slow-broker finding must still split the slowest
// exchange as the whole capture does: the broker's time, a network share
// of about the round trip, and no segment out of order (the bytes after
// the hole came in order: nothing was sent again). It read "network
// 252ms (request sent over 252ms; 1 segment out of order (bytes before
// them lost and sent again))": the request after the gap was timed from
// the packet before it, and the segment after a hole given up at once
// was counted out of order. Nor may the batch the gap cut read as a
// producer's broken sequence (sequence-error, severity error).
func TestCaptureLossIsNotNetworkTime(t *testing.T) {
	path := dropSecondTail(t)
	res := kwire(t, "read", "--findings", "--json", path)
	if res.exit != 1 {
		t.Errorf("exit status %d, want 1 (bytes lost)\n%s", res.exit, res.stderr)
	}
	if !bytes.Contains(res.stderr, []byte("1 gap (700 bytes lost)")) {
		t.Errorf("stderr does not count the 700 bytes lost:\n%s", res.stderr)
	}
	type split struct {
		TotalMs, BrokerMs, NetworkMs, RequestMs float64
		OutOfOrder                              int
		Verdict                                 string
	}
	var slow *split
	for _, line := range bytes.Split(res.stdout, []byte("\n")) {
		var d struct {
			Kind, Rule string
			Split      *split
		}
		if len(line) == 0 || json.Unmarshal(line, &d) != nil || d.Kind != "finding" {
			continue
		}
		switch d.Rule {
		case "sequence-error":
			t.Errorf("a sequence-error finding for the batch the gap cut: %s", line)
		case "slow-network":
			t.Errorf("a slow-network finding: %s", line)
		case "slow-broker":
			slow = d.Split
		}
	}
	if slow == nil {
		t.Fatal("no slow-broker finding")
	}
	// The slowest Produce, as in slow-broker.pcap whole: 281ms, all
	// the broker's; the round trip is 0.016ms.
	if slow.TotalMs < 250 || slow.BrokerMs < slow.TotalMs-1 || slow.NetworkMs > 1 || slow.RequestMs > 1 || slow.OutOfOrder != 0 || slow.Verdict != "broker" {
		t.Errorf("slowest exchange split %+v, want the broker's time (network under 1ms, request sent at once, nothing out of order)", *slow)
	}
	if d := slow.TotalMs - slow.BrokerMs - slow.NetworkMs; d > 0.01 || d < -0.01 {
		t.Errorf("split %+v: broker and network do not add up to the total", *slow)
	}
}

// dropEvery copies capture src without every n-th packet from the
// off-th on (1-based), as a capture that lost packets at the capture
// point does (tcpdump's kernel drops, a mirror port's): the peers
// received them.
func dropEvery(t *testing.T, src string, n, off int) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r, err := pcapgo.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	w := pcapgo.NewWriterNanos(&out)
	if err := w.WriteFileHeader(r.Snaplen(), r.LinkType()); err != nil {
		t.Fatal(err)
	}
	for i := 1; ; i++ {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		if i%n == off%n {
			continue
		}
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("%s-drop%d-%d.pcap", src, n, off))
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// findingRules returns the rules of kwire read --findings --json's
// findings on capture, with their subjects.
func findingRules(t *testing.T, capture string) map[string][]string {
	t.Helper()
	res := kwire(t, "read", "--findings", "--json", capture)
	rules := map[string][]string{}
	for _, line := range bytes.Split(res.stdout, []byte("\n")) {
		var d struct{ Kind, Rule, Subject, Detail string }
		if len(line) == 0 || json.Unmarshal(line, &d) != nil || d.Kind != "finding" {
			continue
		}
		rules[d.Rule] = append(rules[d.Rule], d.Subject+": "+d.Detail)
	}
	return rules
}

// TestCaptureLossRaisesNoAbsenceFindings: rules that conclude from what
// a capture does not hold must not fire on what it lost. With every
// 11th packet dropped, throttle.pcap raised skipped-apiversions (the
// connection's ApiVersions was in the packet lost), and leader-move.pcap
// request-timeout, severity error ("never answered": the responses were
// in the broker's bytes lost), and sequence-error, severity error
// ("sequence 9-9 overlaps what was written (up to 29)": a Produce whose
// response the gap made unreadable completed at its connection's end,
// after the batches its producer wrote later elsewhere). None of them is
// in the whole captures.
func TestCaptureLossRaisesNoAbsenceFindings(t *testing.T) {
	absence := []string{"skipped-apiversions", "request-timeout", "sequence-error"}
	lossy := 0
	for _, c := range []string{"throttle.pcap", "leader-move.pcap", "txn-fenced.pcap", "group-rebalance-kgo.pcap"} {
		whole := findingRules(t, c)
		for _, off := range []int{3, 7} {
			path := dropEvery(t, c, 11, off)
			if res := kwire(t, "read", path); res.exit == 1 && bytes.Contains(res.stderr, []byte(" gap")) {
				lossy++
			}
			got := findingRules(t, path)
			for _, rule := range absence {
				if len(got[rule]) > 0 && len(whole[rule]) == 0 {
					t.Errorf("%s without every 11th packet from %d: %s, which the whole capture has not: %v", c, off, rule, got[rule])
				}
			}
		}
	}
	if lossy == 0 {
		t.Error("no capture lost bytes with its packets dropped: the test tests nothing")
	}
}
