package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwire/kwire/internal/bombs"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// junitDoc is what a CI system reads of --junit's file.
type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Cases    []struct {
			Name    string `xml:"name,attr"`
			Class   string `xml:"classname,attr"`
			Failure *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) *junitDoc {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d junitDoc
	if err := xml.Unmarshal(b, &d); err != nil {
		t.Fatalf("JUnit does not parse: %v\n%s", err, b)
	}
	return &d
}

// TestCheckGolden: a spec that holds for a golden capture passes (exit
// 0), one whose every check but one fails says why each failed (exit 1),
// and the JUnit reports parse with one testcase per check.
func TestCheckGolden(t *testing.T) {
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	dir := t.TempDir()
	junit := filepath.Join(dir, "pass.xml")
	out, errOut, code := kwireInProcess(t, "check", "--port", "19092", "--junit", junit, "testdata/check/pass.yaml", pcap)
	if code != 0 || !strings.HasSuffix(out, "all 8 checks passed\n") || strings.Contains(out, "FAIL") {
		t.Errorf("pass spec: exit %d\n%s%s", code, out, errOut)
	}
	if d := readJUnit(t, junit); d.Tests != 8 || d.Failures != 0 || len(d.Suites) != 1 || len(d.Suites[0].Cases) != 8 ||
		d.Suites[0].Cases[0].Name != "ApiVersions first on every connection" || d.Suites[0].Cases[0].Class != "kwire.check.first" {
		t.Errorf("pass JUnit: %+v", d)
	}

	junit = filepath.Join(dir, "fail.xml")
	out, _, code = kwireInProcess(t, "check", "--port", "19092", "--junit", junit, "testdata/check/fail.yaml", pcap)
	if code != 1 {
		t.Errorf("fail spec: exit %d", code)
	}
	for _, want := range []string{
		"FAIL no errors at all: 11 exchanges match len(errors) > 0, want none\n    packets 313/314 ",
		"FAIL Produce v14: 0 exchanges match api == \"Produce\" && apiVersion >= 14, want at least 1\n",
		"FAIL at most 2 Fetch: 9 exchanges match api == \"Fetch\", want at most 2\n",
		"FAIL every Produce answered: 1 of 10 exchanges where api == \"Produce\" fail kind == \"paired\"\n    packets 261/- ",
		"FAIL Metadata first on every connection: 41 of 41 connections start otherwise than api == \"Metadata\"\n",
		"FAIL JoinGroup before any Fetch, per connection: ",
		"FAIL Fetch p99 under 1 microsecond: 7 answered exchanges: p99 ",
		"PASS still passes: 0 exchanges match api == \"SaslHandshake\", want none\n",
		"7 of 8 checks failed\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("fail spec output lacks %q:\n%s", want, out)
		}
	}
	d := readJUnit(t, junit)
	if d.Tests != 8 || d.Failures != 7 || d.Suites[0].Failures != 7 {
		t.Fatalf("fail JUnit: %+v", d)
	}
	c := d.Suites[0].Cases[2]
	if c.Failure == nil || c.Failure.Type != "expect" || c.Failure.Message != `9 exchanges match api == "Fetch", want at most 2` || !strings.Contains(c.Failure.Text, "Fetch v") {
		t.Errorf("failure %+v", c.Failure)
	}
	if d.Suites[0].Cases[7].Failure != nil {
		t.Errorf("the passing check has a failure")
	}
}

// TestCheckSpecErrors: a spec that cannot be used is exit 2 with where.
func TestCheckSpecErrors(t *testing.T) {
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	for _, c := range []struct{ spec, want string }{
		{"checks:\n  - name: x\n    expect: 'api =='\n", "spec SPEC:2 (x): expect: "},
		{"checks:\n  - name: x\n    expect: 'api == \"Produce\"'\n    none: 'len(errors) > 0'\n", "want exactly one of"},
		{"checks:\n  - name: x\n    expct: 'true'\n", `spec SPEC: line 3: unknown key "expct" in a check; known keys: name, expect, atLeast, atMost, exactly, none, every, where, first, before, then, per, latency, complete, finding, noFinding, severity` + "\n"},
		{"checks:\n  - name: x\n    expect: 'true'\n    atLeast: many\n", "spec SPEC: line 4: cannot unmarshal !!str `many` into a whole number\n"},
		{"checks:\n  - name: x\n    latency: [1]\n", "spec SPEC: line 3: cannot unmarshal !!seq into a mapping of numbers\n"},
		{"checks:\n  - name: x\n    noFinding: slow-brokr\n", `spec SPEC:2 (x): noFinding "slow-brokr" matches no finding rule; the rules are unadvertised-version, skipped-apiversions, `},
		{"checks:\n  - name: x\n    finding: 'sasl-*-failed'\n  - name: y\n    finding: 'zz*'\n", `spec SPEC:4 (y): finding "zz*" matches no finding rule; the rules are `},
		{"checks:\n  - name: x\n    before: 'true'\n", "before needs then"},
		{"checks:\n  - name: x\n    latency: {p95: 3}\n", "want p50, p90, p99 or max"},
		{"checks:\n  - expect: 'true'\n", "a check needs a name"},
		{"nothing: here\n", `spec SPEC: line 1: unknown key "nothing" at the top level; known keys: checks` + "\n"},
		{"checks: []\n", "no checks"},
		// The checks without checks: above them (the YAML decoder said
		// "cannot unmarshal !!seq into a mapping").
		{"- name: x\n  none: 'len(errors) > 0'\n", "spec SPEC: line 1: a list at the top level; the checks go in a list under checks:"},
		// Counts and ceilings below zero hold nothing.
		{"checks:\n  - name: x\n    expect: 'true'\n    atLeast: -3\n", "spec SPEC:2 (x): atLeast: -3 is not a count of exchanges: want 0 or more\n"},
		{"checks:\n  - name: x\n    expect: 'true'\n    atMost: -1\n", "spec SPEC:2 (x): atMost: -1 is not a count of exchanges: want 0 or more\n"},
		{"checks:\n  - name: x\n    expect: 'true'\n    exactly: -2\n", "spec SPEC:2 (x): exactly: -2 is not a count of exchanges: want 0 or more\n"},
		{"checks:\n  - name: x\n    expect: 'true'\n    atLeast: 5\n    atMost: 3\n", "spec SPEC:2 (x): atLeast 5 is above atMost 3: no count passes\n"},
		{"checks:\n  - name: x\n    latency: {p99: -5}\n", "spec SPEC:2 (x): latency p99: -5 is not a ceiling: want 0 or more milliseconds\n"},
		{"checks:\n  - name: x\n    latency: {max: .nan}\n", "spec SPEC:2 (x): latency max: NaN is not a ceiling: want 0 or more milliseconds\n"},
	} {
		p := filepath.Join(t.TempDir(), "spec.yaml")
		if err := os.WriteFile(p, []byte(c.spec), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := kwireInProcess(t, "check", p, pcap)
		if want := strings.ReplaceAll(c.want, "SPEC", p); code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d, %q; want %q", c.spec, code, errOut, want)
		}
		// The spec's words, never the Go types it is decoded into.
		for _, goName := range []string{"main.", "int64", "float64", "map[", "in type"} {
			if strings.Contains(errOut, goName) {
				t.Errorf("%q: %q names Go's %q", c.spec, errOut, goName)
			}
		}
	}
}

// TestCheckFindings: finding and noFinding assert the analysis's findings
// (docs/findings.md) by rule and severity.
func TestCheckFindings(t *testing.T) {
	slow, throttle := goldenPcap(t, "slow-broker.pcap"), goldenPcap(t, "throttle.pcap")
	spec := filepath.Join(t.TempDir(), "findings.yaml")
	if err := os.WriteFile(spec, []byte(`checks:
  - name: the slow broker is found
    finding: 'slow-broker'
  - name: no error among the findings
    noFinding: '*'
    severity: error
  - name: no throttling
    noFinding: throttled
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kwireInProcess(t, "check", "--port", "19350,19351", spec, slow)
	if code != 0 || !strings.Contains(out, "PASS the slow broker is found: 1 finding slow-broker, want at least one\n") {
		t.Errorf("slow-broker: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = kwireInProcess(t, "check", "--port", "19352", spec, throttle)
	for _, want := range []string{
		"FAIL the slow broker is found: 0 findings slow-broker, want at least one\n",
		"FAIL no error among the findings: 1 finding * (error), want none\n    error quota-exceeded: ",
		"FAIL no throttling: 3 findings throttled, want none\n    warning throttled: ",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("throttle: exit %d, no %q in\n%s", code, want, out)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("checks:\n  - name: x\n    noFinding: '*'\n    severity: fatal\n"), 0o644)
	if _, errOut, code := kwireInProcess(t, "check", bad, slow); code != 2 || !strings.Contains(errOut, "want info, warning or error") {
		t.Errorf("bad severity: exit %d %s", code, errOut)
	}
}

// TestCheckOneCheck: the summary of a spec with one check is singular,
// passing and failing.
func TestCheckOneCheck(t *testing.T) {
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	for _, c := range []struct{ expect, want string }{
		{`expect: 'api == "Produce"'`, "all 1 check passed\n"},
		{`expect: 'api == "AlterPartitionReassignments"'`, "1 of 1 check failed\n"},
		// A latency over nothing guards nothing: it fails.
		{"where: 'api == \"Produce\"'\n    latency: {max: 10000}", "all 1 check passed\n"},
		{"where: 'api == \"AlterPartitionReassignments\"'\n    latency: {max: 10000}", "FAIL one: no answered exchange matches: no latency to check\n1 of 1 check failed\n"},
	} {
		p := filepath.Join(t.TempDir(), "spec.yaml")
		if err := os.WriteFile(p, []byte("checks:\n  - name: one\n    "+c.expect+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, errOut, _ := kwireInProcess(t, "check", "--port", "19092", p, pcap)
		if !strings.HasSuffix(out, c.want) {
			t.Errorf("%s: %q%s, want it to end %q", c.expect, out, errOut, c.want)
		}
	}
}

// TestCheckArguments: a capture given as the spec (the arguments swapped)
// is named as such, with the usage, not read as YAML ("invalid trailing
// UTF-8 octet"); with several captures and no --merge, every exchange a
// failing check lists names its file (each a capture of its own, its
// packet numbers its own).
func TestCheckArguments(t *testing.T) {
	pcap := goldenPcap(t, "kgo-produce-consume.pcap")
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte("checks:\n  - name: no errors\n    none: 'len(errors) > 0'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := kwireInProcess(t, "check", pcap, spec)
	if want := "kwire: spec " + pcap + ": this is a capture (pcap), not a spec; usage: kwire check SPEC CAPTURE...\n"; code != 2 || errOut != want {
		t.Errorf("swapped: exit %d, %q; want %q", code, errOut, want)
	}
	leader := goldenPcap(t, "leader-move.pcap")
	out, _, code := kwireInProcess(t, "check", spec, leader, pcap)
	var listed int
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "    ") {
			listed++
			if !strings.HasPrefix(l, "    "+leader+": packets ") && !strings.HasPrefix(l, "    "+pcap+": packets ") {
				t.Errorf("an exchange without its file: %q", l)
			}
		}
	}
	if code != 1 || listed != 3 || !strings.Contains(out, "    "+leader+": packets 212/213 ") {
		t.Errorf("exit %d, %d listed:\n%s", code, listed, out)
	}
	// One capture, or several merged: packet numbers need no file.
	out, _, _ = kwireInProcess(t, "check", "--merge", spec, leader, pcap)
	if !strings.Contains(out, "\n    packets ") || strings.Contains(out, leader+":") {
		t.Errorf("--merge:\n%s", out)
	}
}

// TestCheckNoKafka: a capture with no Kafka exchange (the wrong interface
// or port in CI) fails with a line of its own, though every check of a
// "none" or "every" kind passes on it.
func TestCheckNoKafka(t *testing.T) {
	dir := t.TempDir()
	pcap := filepath.Join(dir, "empty.pcap")
	// A pcap file header (little-endian, version 2.4, snap length 65535,
	// Ethernet) and no packet.
	hdr := []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0}
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(pcap, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, []byte("checks:\n  - name: no errors\n    none: 'len(errors) > 0'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kwireInProcess(t, "check", spec, pcap)
	if code != 1 || !strings.Contains(out, "PASS no errors") || !strings.Contains(out, "FAIL captures: no Kafka exchange in the captures") || !strings.HasSuffix(out, "1 of 2 checks failed\n") {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
	// Several captures of their own (hosts): the one without Kafka fails.
	good := goldenPcap(t, "kgo-produce-consume.pcap")
	out, errOut, code = kwireInProcess(t, "check", spec, good, pcap)
	if code != 1 || !strings.Contains(out, "FAIL captures: no Kafka exchange in "+pcap+":") {
		t.Errorf("two captures, one empty: exit %d:\n%s%s", code, out, errOut)
	}
}

// TestCheckFirstMidStream: a first check judges only connections whose
// start the capture holds. A capture begun mid-stream (packets 300 on of
// kgo-produce-consume.pcap) holds connections whose first request went
// before it: they are said to be left out, not failed for a request
// that was not their first.
func TestCheckFirstMidStream(t *testing.T) {
	dir := t.TempDir()
	pkts, link := readPackets(t, goldenPcap(t, "kgo-produce-consume.pcap"))
	mid := writePackets(t, dir, "mid.pcap", link, pkts[299:])
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, []byte("checks:\n  - name: first\n    first: 'api == \"ApiVersions\"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kwireInProcess(t, "check", spec, mid)
	want := "PASS first: 0 of 18 connections start otherwise than api == \"ApiVersions\" (5 connections whose start the capture does not hold not checked)\n"
	if code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("exit %d:\n%s%s\nwant it to start %q", code, out, errOut, want)
	}
}

// TestGroupsGoneNotExpired: a member the group rebalanced without 301 ms
// after its last heartbeat, with a session timeout of 3 s, did not expire:
// it left, or was removed, by a request the capture does not hold (here
// capgen-kgo-b's LeaveGroup packet is dropped). It ends "gone", with no
// member-expired finding, and the generation's cause is a leave.
func TestGroupsGoneNotExpired(t *testing.T) {
	dir := t.TempDir()
	pkts, link := readPackets(t, goldenPcap(t, "group-rebalance-kgo.pcap"))
	pkts = append(pkts[:286:286], pkts[287:]...) // packet 287: capgen-kgo-b's LeaveGroup
	pcap := writePackets(t, dir, "noleave.pcap", link, pkts)
	out, errOut, _ := kwireInProcess(t, "groups", "--json", pcap)
	var rep struct {
		Groups []struct {
			Members []struct {
				Name string  `json:"name"`
				End  *string `json:"end"`
			} `json:"members"`
			Generations []struct {
				Cause string `json:"cause"`
			} `json:"generations"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Groups) != 1 {
		t.Fatalf("%v: %s%s", err, out, errOut)
	}
	ends := map[string]string{}
	for _, m := range rep.Groups[0].Members {
		if m.End != nil {
			ends[m.Name] = *m.End
		}
	}
	var causes []string
	for _, g := range rep.Groups[0].Generations {
		causes = append(causes, g.Cause)
	}
	if ends["capgen-kgo-b"] != "gone" || ends["capgen-kgo-a"] != "expired" || fmt.Sprint(causes) != "[join join join leave static-rejoin timeout]" {
		t.Errorf("ends %v, causes %v", ends, causes)
	}
	out, _, _ = kwireInProcess(t, "read", "--findings", pcap)
	if strings.Contains(out, "member-expired capgen-kgo-b") || !strings.Contains(out, "member-expired capgen-kgo-a") {
		t.Errorf("findings:\n%s", out)
	}
}

// TestReportsLaterNames: groups and txns, made at the end of a capture,
// name the topics their exchanges named by ID alone with the names a
// Metadata stated later, as stats does. Captures begun after the clients'
// first Metadata (packets 300 on of kgo-produce-consume.pcap, 60 on of
// group-kip848.pcap, 40 on of txn-read-committed.pcap).
func TestReportsLaterNames(t *testing.T) {
	dir := t.TempDir()
	from := func(name string, first int) string {
		pkts, link := readPackets(t, goldenPcap(t, name))
		return writePackets(t, dir, name, link, pkts[first-1:])
	}
	out, errOut, _ := kwireInProcess(t, "groups", "--group", "capgen-kgo-group", "--timeline=false", from("kgo-produce-consume.pcap", 300))
	if !strings.Contains(out, "\n  capgen-codecs[0]      30    1  capgen-kgo-group        1 ") || strings.Contains(out, "TPmVKIH5EnVP0PVya1sZSg") {
		t.Errorf("classic group: one row for capgen-codecs[0], its commit:\n%s%s", out, errOut)
	}
	out, errOut, _ = kwireInProcess(t, "groups", "--timeline=false", from("group-kip848.pcap", 60))
	if !strings.Contains(out, "join           -       capgen-kgo-848-a   capgen-rebalance[0-3]\n") || strings.Contains(out, "uMWW_OB1TeFEdMAw-1udkw") || strings.Contains(out, "-→") {
		t.Errorf("KIP-848 group: epoch 1 assigned capgen-rebalance[0-3] alone, no move from nobody:\n%s%s", out, errOut)
	}
	out, errOut, _ = kwireInProcess(t, "txns", from("txn-read-committed.pcap", 40))
	if !strings.Contains(out, "commit   capgen-txn-rc[0+3] (seq 0-2)") || strings.Contains(out, "_Mg8rGtBKCsNopCy8TWbYw") {
		t.Errorf("txns: records named capgen-txn-rc:\n%s%s", out, errOut)
	}
}

// TestCheckExampleUnadvertisedVersion: docs/examples/kafka-checks.yaml
// fails a client that sends a version its broker did not advertise
// (Produce v2 to a broker of Kafka 4, 3-12). The broker closes the
// connection on it with no UNSUPPORTED_VERSION to match, so the
// "never an UNSUPPORTED_VERSION" check passes; the unadvertised-version
// finding is what catches it.
func TestCheckExampleUnadvertisedVersion(t *testing.T) {
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("legacy-app"))
	av := kmsg.NewPtrApiVersionsRequest()
	av.Version = 0
	avResp := kmsg.NewPtrApiVersionsResponse()
	avResp.Version = 0
	for _, k := range [][3]int16{{0, 3, 12}, {3, 0, 12}, {18, 0, 4}} {
		avResp.ApiKeys = append(avResp.ApiKeys, kmsg.ApiVersionsResponseApiKey{ApiKey: k[0], MinVersion: k[1], MaxVersion: k[2]})
	}
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 1
	mdResp := kmsg.NewPtrMetadataResponse()
	mdResp.Version = 1
	prod := kmsg.NewPtrProduceRequest()
	prod.Version, prod.Acks, prod.TimeoutMillis = 2, -1, 1000
	respFrame := func(corr int32, r kmsg.Response) []byte {
		b := binary.BigEndian.AppendUint32(make([]byte, 4), uint32(corr))
		b = r.AppendTo(b)
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
		return b
	}
	var buf bytes.Buffer
	if err := bombs.WritePcap(&buf, []bombs.Exchange{
		{Request: f.AppendRequest(nil, av, 1), Response: respFrame(1, avResp)},
		{Request: f.AppendRequest(nil, md, 2), Response: respFrame(2, mdResp)},
		{Request: f.AppendRequest(nil, prod, 3)}, // the broker closes the connection
	}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "after-upgrade.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := kwireInProcess(t, "check", filepath.Join("..", "..", "docs", "examples", "kafka-checks.yaml"), path)
	for _, want := range []string{
		"PASS never an UNSUPPORTED_VERSION: 0 exchanges match",
		"FAIL never a version the broker did not advertise: 1 finding unadvertised-version, want none\n    warning unadvertised-version: legacy-app Produce v2 broker 10.0.0.2:9092\n",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("exit %d, no %q in\n%s%s", code, want, out, errOut)
		}
	}
}

// TestCheckJUnitUnreadableCapture: a capture kwire cannot read (missing,
// empty) exits 2, and the --junit report says why in a failed testcase.
// The report was left empty (as the check that it can be written made
// it), which a CI system's JUnit reader fails to parse.
func TestCheckJUnitUnreadableCapture(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pcap")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ capture, why string }{
		{filepath.Join(dir, "missing.pcap"), "missing.pcap: no such file or directory"},
		{empty, "empty.pcap: not a pcap or pcapng file (the file is empty)"},
	} {
		junit := filepath.Join(dir, "report.xml")
		_, errOut, code := kwireInProcess(t, "check", "--junit", junit, "testdata/check/pass.yaml", tc.capture)
		if code != 2 || !strings.Contains(errOut, tc.why) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tc.capture, code, errOut, tc.why)
		}
		d := readJUnit(t, junit)
		if d.Tests != 1 || d.Failures != 1 || len(d.Suites) != 1 || len(d.Suites[0].Cases) != 1 {
			t.Fatalf("%s: JUnit %+v, want one failed testcase", tc.capture, d)
		}
		c := d.Suites[0].Cases[0]
		if c.Name != "captures" || c.Failure == nil || !strings.Contains(c.Failure.Message, "nothing was checked: ") || !strings.Contains(c.Failure.Message, tc.why) {
			t.Errorf("%s: testcase %+v, want captures failed with %q", tc.capture, c, tc.why)
		}
		os.Remove(junit)
	}
}
