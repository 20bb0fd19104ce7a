package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/capturetest"
)

// snapCut writes the capture pcaps/name with every packet cut to snap
// bytes, as tcpdump -s SNAP or editcap -s SNAP write it (the wire length
// kept); "" when the file is not a classic pcap.
func snapCut(t *testing.T, name string, snap int) string {
	t.Helper()
	link, pkts, err := capturetest.ReadPcap(goldenPcap(t, name))
	if err != nil {
		return ""
	}
	for i := range pkts {
		if len(pkts[i].Data) > snap {
			pkts[i].Data = pkts[i].Data[:snap]
		}
	}
	return writeTemp(t, fmt.Sprintf("s%d-%s", snap, name), capturetest.Pcap(capturetest.PcapOptions{Link: link, Snaplen: uint32(snap)}, pkts).Bytes)
}

// snapMsg and snapExchange are the keys of read --json these tests read.
type snapMsg struct {
	Frame    int64 `json:"frame"`
	Size     int   `json:"size"`
	Captured int   `json:"capturedBytes"`
}

type snapExchange struct {
	Kind        string   `json:"kind"`
	Corr        int32    `json:"correlationId"`
	ClientID    *string  `json:"clientId"`
	NotCaptured bool     `json:"clientIdNotCaptured"`
	Request     *snapMsg `json:"request"`
	Response    *snapMsg `json:"response"`
	Notes       []string `json:"notes"`
}

// readExchanges runs read --json on path and returns its exchanges by
// their request's first packet and correlation ID, and the exit status.
func readExchanges(t *testing.T, path string) (map[[2]int64]snapExchange, int) {
	t.Helper()
	out, _, code := kwireInProcess(t, "read", "--json", path)
	m := map[[2]int64]snapExchange{}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var x snapExchange
		if err := json.Unmarshal(sc.Bytes(), &x); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if x.Request != nil && x.Kind != "" {
			m[[2]int64{x.Request.Frame, int64(x.Corr)}] = x
		}
	}
	return m, code
}

func strOrNull(p *string) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprintf("%q", *p)
}

// TestSnapLengthClientIDNotCaptured: every shipped pcap, cut to snap
// lengths that end inside the request headers (80: 14 bytes of Kafka
// after loopback's Ethernet, IPv4 and TCP with timestamps, up to the
// ClientId's length), inside or after the ClientId (96, 128), reads as it
// does whole wherever the capture holds it, and says "not captured"
// where not: a request is the same exchange (its first packet and
// correlation ID) with the same clientId, or with clientId null and
// clientIdNotCaptured true — never "" where the whole capture has an ID —
// and the same size, its frame's wire size from its length prefix, with
// capturedBytes the part held. Before, a header cut in its ClientId read
// clientId "" and sizes were the bytes captured (kgo-produce-consume at
// -s 80: 143 requests of client "", 2002 bytes of 17123 sent).
func TestSnapLengthClientIDNotCaptured(t *testing.T) {
	pcaps, _ := filepath.Glob(filepath.Join("..", "..", "pcaps", "*.pcap"))
	if len(pcaps) == 0 {
		t.Skip("no pcaps/*.pcap")
	}
	total := map[int]int{}
	compared := 0
	for _, p := range pcaps {
		name := filepath.Base(p)
		whole, _ := readExchanges(t, p)
		for _, snap := range []int{80, 96, 128} {
			path := snapCut(t, name, snap)
			if path == "" {
				continue
			}
			cut, code := readExchanges(t, path)
			cutFrames := 0
			for k, x := range cut {
				w, ok := whole[k]
				if !ok {
					continue // a request the cut capture reads where the whole has none: no ID to compare
				}
				compared++
				where := fmt.Sprintf("%s -s %d, packet %d corr %d", name, snap, k[0], k[1])
				if x.NotCaptured {
					total[snap]++
					if x.ClientID != nil {
						t.Errorf("%s: clientIdNotCaptured with clientId %s, want null", where, strOrNull(x.ClientID))
					}
				} else if strOrNull(x.ClientID) != strOrNull(w.ClientID) {
					t.Errorf("%s: clientId %s, whole capture %s", where, strOrNull(x.ClientID), strOrNull(w.ClientID))
				}
				for side, m := range map[string][2]*snapMsg{"request": {x.Request, w.Request}, "response": {x.Response, w.Response}} {
					c, wm := m[0], m[1]
					if c == nil || wm == nil || c.Frame != wm.Frame {
						continue
					}
					if c.Size != wm.Size || c.Captured > c.Size {
						t.Errorf("%s: %s size %d, captured %d; whole capture %d", where, side, c.Size, c.Captured, wm.Size)
					}
					if c.Captured < c.Size {
						cutFrames++
						if note := fmt.Sprintf("%d of %d bytes captured", c.Captured, c.Size); !strings.Contains(strings.Join(x.Notes, "; "), note) {
							t.Errorf("%s: %s cut, notes %q hold no %q", where, side, x.Notes, note)
						}
					}
				}
			}
			if cutFrames > 0 && code != exitData {
				t.Errorf("%s -s %d: %d frames cut, exit %d, want %d", name, snap, cutFrames, code, exitData)
			}
		}
	}
	if total[80] == 0 || total[80] > compared {
		t.Errorf("%d requests read clientIdNotCaptured at -s 80 of %d compared", total[80], compared)
	}
	t.Logf("%d exchanges compared; requests whose client ID was not captured, by snap length: %v", compared, total)
}

// TestSnapLengthStatsNotCaptured: kwire stats and versions on
// kgo-produce-consume cut to 80 bytes list its 143 requests under one
// "<not captured>" client (clientId null, clientIdNotCaptured true), not
// client "", and count the bytes sent as the whole capture does (17123
// in requests, 46678 in responses; it said 2002 and 1960), with the 283
// frames cut and their 59839 bytes not captured. Its 41 ApiVersions
// responses, cut before their ranges, are counted as such, not listed as
// a broker advertising nothing (which flagged every API out of range).
func TestSnapLengthStatsNotCaptured(t *testing.T) {
	stats := func(path string) map[string]any {
		out, _, _ := kwireInProcess(t, "stats", "--json", path)
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return r
	}
	bytes := func(r map[string]any) (req, resp float64) {
		for _, a := range r["apis"].([]any) {
			req += a.(map[string]any)["requestBytes"].(float64)
			resp += a.(map[string]any)["responseBytes"].(float64)
		}
		return req, resp
	}
	whole := stats(goldenPcap(t, "kgo-produce-consume.pcap"))
	path := snapCut(t, "kgo-produce-consume.pcap", 80)
	cut := stats(path)
	wreq, wresp := bytes(whole)
	creq, cresp := bytes(cut)
	if wreq != 17123 || wresp != 46678 || creq != wreq || cresp != wresp {
		t.Errorf("bytes in requests/responses: cut %v/%v, whole %v/%v, want 17123/46678 both", creq, cresp, wreq, wresp)
	}
	if cut["cutFrames"] != 283.0 || cut["notCapturedBytes"] != 59839.0 || whole["cutFrames"] != 0.0 {
		t.Errorf("cutFrames %v, notCapturedBytes %v (whole capture: %v cut); want 283, 59839 (0)", cut["cutFrames"], cut["notCapturedBytes"], whole["cutFrames"])
	}
	cl := cut["clients"].([]any)
	if len(cl) != 1 {
		t.Fatalf("clients %v, want the one not captured", cl)
	}
	if c := cl[0].(map[string]any); c["clientId"] != nil || c["clientIdNotCaptured"] != true || c["requests"] != 143.0 {
		t.Errorf("client %v, want clientId null, clientIdNotCaptured true, 143 requests", c)
	}
	out, _, code := kwireInProcess(t, "stats", path)
	if !strings.Contains(out, "\n<not captured>  -         127.0.0.1     41   143  -\n") || strings.Contains(out, `""`) || code != exitData {
		t.Errorf("exit %d, stats CLIENTS:\n%s", code, out)
	}
	if want := "BYTES are as sent, by the frames' length prefixes: 283 frames cut by a gap or the snap length, 58.4KiB of them not captured\n"; !strings.Contains(out, want) {
		t.Errorf("stats holds no %q", want)
	}
	out, _, code = kwireInProcess(t, "versions", "--json", path)
	var v struct {
		Brokers     []any `json:"brokers"`
		NotCaptured int   `json:"notCapturedAdvertisements"`
		Flags       []any `json:"flags"`
		Clients     []struct {
			ClientID    *string `json:"clientId"`
			NotCaptured bool    `json:"clientIdNotCaptured"`
		} `json:"clients"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Brokers) != 0 || v.NotCaptured != 41 || len(v.Flags) != 0 || len(v.Clients) != 1 || v.Clients[0].ClientID != nil || !v.Clients[0].NotCaptured || code != exitData {
		t.Errorf("versions: exit %d, %d brokers, %d advertisements not captured, %d flags, clients %+v; want 1, 0, 41, 0, one not captured", code, len(v.Brokers), v.NotCaptured, len(v.Flags), v.Clients)
	}
	out, _, _ = kwireInProcess(t, "read", path)
	if n := strings.Count(out, " client=<not captured> "); n != 143 || strings.Contains(out, `client=""`) {
		t.Errorf("%d lines say client=<not captured>, want 143, none client=\"\"", n)
	}
	// Its groups' exchanges were not decoded: groups and txns say so
	// rather than only "no groups" (the whole capture has two groups).
	for _, cmd := range []string{"groups", "txns"} {
		var r struct {
			Cut int64 `json:"cutExchanges"`
		}
		out, _, code = kwireInProcess(t, cmd, "--json", path)
		if err := json.Unmarshal([]byte(out), &r); err != nil || r.Cut != 143 || code != exitData {
			t.Errorf("%s --json: exit %d, cutExchanges %d (%v), want 143", cmd, code, r.Cut, err)
		}
		out, _, _ = kwireInProcess(t, cmd, goldenPcap(t, "kgo-produce-consume.pcap"))
		if strings.Contains(out, "not decoded") {
			t.Errorf("%s of the whole capture says %q", cmd, out)
		}
	}
	out, _, _ = kwireInProcess(t, "groups", path)
	if want := "no groups\nnot decoded: 143 exchanges whose frames were cut (by a gap, the snap length or the end of the capture); what they said of groups is not here\n"; out != want {
		t.Errorf("groups says %q, want %q", out, want)
	}
}

// TestSnapLengthFlagNamesNotCaptured: mixed-versions.pcap cut to 80
// bytes keeps its KIP-511 downgrade (ApiVersions v5 answered
// UNSUPPORTED_VERSION, retried with v2, 4 times), whose client ID was
// not captured: the flag says "client <not captured>" (JSON
// clientIdNotCaptured true) and marks that client's row, not every
// client's, as a flag without a client would.
func TestSnapLengthFlagNamesNotCaptured(t *testing.T) {
	path := snapCut(t, "mixed-versions.pcap", 80)
	out, _, code := kwireInProcess(t, "versions", "--json", path)
	var v struct {
		Flags []struct {
			Kind        string `json:"kind"`
			ClientID    string `json:"clientId"`
			NotCaptured bool   `json:"clientIdNotCaptured"`
			Count       int    `json:"count"`
		} `json:"flags"`
		Matrix []struct {
			API         string   `json:"api"`
			NotCaptured bool     `json:"clientIdNotCaptured"`
			Broker      string   `json:"broker"`
			Flags       []string `json:"flags"`
		} `json:"matrix"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Flags) != 1 || v.Flags[0].Kind != "apiversions-downgrade" || !v.Flags[0].NotCaptured || v.Flags[0].ClientID != "" || v.Flags[0].Count != 4 || code != exitData {
		t.Fatalf("exit %d, flags %+v; want one apiversions-downgrade of the client not captured, seen 4 times", code, v.Flags)
	}
	marked := 0
	for _, m := range v.Matrix {
		if len(m.Flags) > 0 {
			marked++
			if !m.NotCaptured || m.API != "ApiVersions" || m.Broker != "127.0.0.1:19098" {
				t.Errorf("row %+v marked", m)
			}
		}
	}
	if marked != 1 {
		t.Errorf("%d matrix rows marked, want the ApiVersions row of 127.0.0.1:19098", marked)
	}
	out, _, _ = kwireInProcess(t, "versions", path)
	if !strings.Contains(out, "[client <not captured>, broker 127.0.0.1:19098, packet 90, seen 4×]") {
		t.Errorf("versions FLAGS names no client <not captured>:\n%s", out)
	}
}

// TestSnapLengthHeadersCut: a snap length that cuts the packets' headers
// (60 bytes: Ethernet, IPv4 and 26 of the TCP header's 32) is said to be
// the cause, with the length and what to do, not counted as malformed
// packets; exit status 1.
func TestSnapLengthHeadersCut(t *testing.T) {
	p := snapCut(t, "kgo-produce-consume.pcap", 60)
	if p == "" {
		t.Fatal("kgo-produce-consume.pcap is not a classic pcap")
	}
	out, errOut, code := kwireInProcess(t, "read", p)
	const why = "648 with headers cut by the snap length (60 bytes captured of each packet at most): capture with a larger one, e.g. tcpdump -s 0"
	if code != exitData || !strings.Contains(out, "anomalies: 648 packets could not be parsed ("+why+")") ||
		!strings.Contains(errOut, "warning: 648 packets could not be parsed ("+why+")") || strings.Contains(out+errOut, "malformed") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	// 70 bytes: the headers of all but the SYNs, and 4 bytes of payload,
	// too few to tell Kafka by: the hint says the snap length is why.
	_, errOut, _ = kwireInProcess(t, "read", snapCut(t, "kgo-produce-consume.pcap", 70))
	if !strings.Contains(errOut, "no Kafka connections found: 41 connections skipped: not Kafka; the snap length kept 70 bytes of each packet, too few to recognise Kafka") {
		t.Errorf("-s 70: stderr %s", errOut)
	}
}
