package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kwire/kwire/facts"
)

// A cut file's section comment names topic IDs; kwire learns the legal
// names of well-formed IDs and passes over the rest (a name Kafka could
// not have, an ID that is not 16 bytes).
func TestCutNames(t *testing.T) {
	var a, b facts.TopicID
	a[0], b[0] = 1, 2
	names := facts.NewNames()
	names.Learn(a, "orders")
	names.Learn(b, "bad name\x1b[31m")
	comment := topicIDsComment(map[facts.TopicID]bool{a: true, b: true}, names)
	if comment != topicIDsPrefix+" "+a.String()+"=orders" {
		t.Fatalf("comment %q", comment)
	}
	var buf bytes.Buffer
	w, err := pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet},
		pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "kwire read -w", Comment: comment + " AAAA=short " + b.String() + "=evil\x1b"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cut.pcapng")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got := cutNames([]string{p, "-", filepath.Join(t.TempDir(), "missing")}, facts.DefaultMaxMemory)
	if n, ok := got.Name(a); !ok || n != "orders" || got.Len() != 1 {
		t.Errorf("learnt %d names, %q for %s", got.Len(), n, a)
	}

	// A file another tool wrote: its claims are not taken.
	buf.Reset()
	w, err = pcapgo.NewNgWriterInterface(&buf, pcapgo.NgInterface{LinkType: layers.LinkTypeEthernet},
		pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Application: "editcap", Comment: comment}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := cutNames([]string{p}, facts.DefaultMaxMemory); got.Len() != 0 {
		t.Errorf("learnt %d names from another tool's file", got.Len())
	}

	// Thousands of long names: the comment stays within one pcapng
	// option (65,535 bytes); "." and ".." are no names.
	ids := map[facts.TopicID]bool{}
	many := facts.NewNames()
	for i := range 2000 {
		var id facts.TopicID
		id[0], id[1] = byte(i), byte(i>>8)
		ids[id] = true
		many.Learn(id, strings.Repeat("t", 240)+strconv.Itoa(i))
	}
	if c := topicIDsComment(ids, many); len(c) > 65535 || len(c) < 50000 {
		t.Errorf("comment of %d bytes", len(c))
	}
	if legalName("..") || legalName(".") || !legalName("a..b") {
		t.Error("legalName")
	}
}

// TestMaxNamesMemory: --max-names-memory bounds the names of topic IDs
// every report learns: kgo-produce-consume's Fetch v18 names its topic by
// ID, resolved from the Metadata before it by default and left as the ID
// when the names may take one byte; stats' partitions likewise. Zero lifts
// the bound.
func TestMaxNamesMemory(t *testing.T) {
	const capture = "../../pcaps/kgo-produce-consume.pcap"
	const id = "TPmVKIH5EnVP0PVya1sZSg"
	fetch := func(out string) string {
		for l := range strings.Lines(out) {
			if strings.Contains(l, " Fetch v18 corr=1 ") {
				return l
			}
		}
		t.Fatalf("no Fetch v18 corr=1 line in\n%s", out)
		return ""
	}
	code, out, errOut := runWith(t, "", "read", capture)
	if l := fetch(out); code != exitOK || !strings.Contains(l, " capgen-codecs[0@0+30 ") || strings.Contains(l, id) || strings.Contains(errOut, "not kept") {
		t.Fatalf("default: exit %d (%s), line %q", code, errOut, l)
	}
	code, out, errOut = runWith(t, "", "read", "--max-names-memory", "1", capture)
	if l := fetch(out); code != exitOK || !strings.Contains(l, " "+id+"[0@0+30 ") || strings.Contains(l, "capgen-codecs") {
		t.Fatalf("1 byte: exit %d (%s), line %q", code, errOut, l)
	}
	if !strings.Contains(errOut, "topic names not kept past --max-names-memory (1): their topic IDs are shown unresolved; raise it, e.g. --max-names-memory 64MiB") {
		t.Errorf("1 byte: no warning in %q", errOut)
	}
	_, out, _ = runWith(t, "", "stats", "--max-names-memory", "1", capture)
	if !strings.Contains(out, id) {
		t.Errorf("stats with 1 byte of names does not show the topic ID:\n%s", out)
	}
	code, out, errOut = runWith(t, "", "read", "--max-names-memory", "0", capture)
	if l := fetch(out); code != exitOK || !strings.Contains(l, " capgen-codecs[0@0+30 ") {
		t.Errorf("0 (no bound): exit %d (%s), line %q", code, errOut, l)
	}
}

// TestMaxNamesMemoryWarns: every command that resolves topic IDs warns
// as read does when --max-names-memory kept topic names from being
// learnt (read's --stats and --findings reports, check, diff and
// --normalize included: each says what the unresolved IDs mean for its
// answer), and says nothing at the default.
func TestMaxNamesMemoryWarns(t *testing.T) {
	const capture = "../../pcaps/kgo-produce-consume.pcap"
	const warning = "19 topic names not kept past --max-names-memory (1): their topic IDs are shown unresolved"
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte("checks:\n  - name: fetches\n    expect: 'api == \"Fetch\"'\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args        []string
		consequence string
	}{
		{[]string{"stats"}, "; raise it"},
		{[]string{"stats", "--findings"}, "; raise it"},
		{[]string{"groups"}, "; raise it"},
		{[]string{"txns"}, "; raise it"},
		{[]string{"read"}, "; raise it"},
		{[]string{"read", "--stats"}, "; raise it"},
		{[]string{"read", "--findings"}, "; raise it"},
		{[]string{"read", "--stats", "--findings", "--json"}, "; raise it"},
		{[]string{"read", "--normalize"}, ": the snapshot holds those IDs, which kwire diff compares as topics other than their names; raise it"},
		{[]string{"diff", capture}, ": a topic one side names and the other does not reads as changed; raise it"},
		{[]string{"check", spec}, ": the checks that read topic names fail as undecided; raise it"},
	} {
		args := append(append(c.args[:1:1], "--max-names-memory", "1"), append(c.args[1:], capture)...)
		_, _, errOut := runWith(t, "", args...)
		if strings.Count(errOut, "not kept past --max-names-memory") != 1 || !strings.Contains(errOut, warning+c.consequence) {
			t.Errorf("%s: stderr %q", strings.Join(args, " "), errOut)
		}
		args = append(c.args[:1:1], append(c.args[1:], capture)...)
		if _, _, errOut := runWith(t, "", args...); strings.Contains(errOut, "not kept past --max-names-memory") {
			t.Errorf("%s at the default: stderr %q", strings.Join(args, " "), errOut)
		}
	}
}

// TestCheckUndecidedNames: a check that reads topic names cannot pass on
// exchanges whose topic IDs --max-names-memory kept unresolved:
// kgo-produce-consume fetches capgen-codecs by ID (Fetch v18), so "none
// fetches capgen-codecs" fails at the default, and with 1 byte of names
// the ID hides the name: undecided, a failure, not a pass. A check that
// reads no topic names (the count of Fetches) is not touched; one that
// reads them through $env by a string (get($env, "topics")) is undecided
// too (it passed, matching none).
func TestCheckUndecidedNames(t *testing.T) {
	const capture = "../../pcaps/kgo-produce-consume.pcap"
	spec := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(spec, []byte(`checks:
  - name: no fetch of capgen-codecs
    none: 'api == "Fetch" && "capgen-codecs" in topics'
  - name: no subject naming capgen-codecs in a Fetch
    every: 'subject not contains "capgen-codecs"'
    where: 'api == "Fetch"'
  - name: fetches
    expect: 'api == "Fetch"'
    exactly: 9
  - name: no fetch of capgen-codecs, through $env
    none: 'api == "Fetch" && "capgen-codecs" in get($env, "topics")'
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runWith(t, "", "check", spec, capture)
	if code != exitData || !strings.Contains(out, "FAIL no fetch of capgen-codecs: 5 exchanges match") ||
		!strings.Contains(out, "FAIL no subject naming capgen-codecs in a Fetch: 5 of 9 exchanges") ||
		!strings.Contains(out, "PASS fetches: 9 exchanges match") || strings.Contains(errOut, "not kept") ||
		!strings.Contains(out, "FAIL no fetch of capgen-codecs, through $env: 5 exchanges match") {
		t.Fatalf("default: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runWith(t, "", "check", "--max-names-memory", "1", spec, capture)
	want := []string{
		"FAIL no fetch of capgen-codecs: undecided: 21 exchanges named a topic by an ID whose name was not kept past --max-names-memory (1), and the check reads topic names: raise it, e.g. --max-names-memory 64MiB (counted: 0 exchanges match api == \"Fetch\" && \"capgen-codecs\" in topics, want none)",
		"FAIL no subject naming capgen-codecs in a Fetch: undecided: 21 exchanges",
		"PASS fetches: 9 exchanges match api == \"Fetch\", want exactly 9",
		// $env reads the names by a string: it passed (0 match).
		"FAIL no fetch of capgen-codecs, through $env: undecided: 21 exchanges",
		"3 of 4 checks failed",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("1 byte of names: exit %d, no %q in\n%s", code, w, out)
		}
	}
	if code != exitData {
		t.Errorf("1 byte of names: exit %d", code)
	}
}

// TestWriteNamesWithReports: read -w records the names of the topic IDs
// it writes also when --stats or --findings read the exchanges first:
// they resolve them with the run's one Names, where each had a Names of
// its own before and the first to read an exchange learnt its names
// alone (the cut read back showed the Fetch's topic ID, not
// capgen-codecs).
func TestWriteNamesWithReports(t *testing.T) {
	const capture = "../../pcaps/kgo-produce-consume.pcap"
	for _, flag := range []string{"--stats", "--findings"} {
		cut := filepath.Join(t.TempDir(), "cut.pcapng")
		if code, _, errOut := runWith(t, "", "read", flag, "--api", "Fetch", "-w", cut, capture); code != exitOK {
			t.Fatalf("read %s -w: exit %d: %s", flag, code, errOut)
		}
		_, out, _ := runWith(t, "", "read", cut)
		if !strings.Contains(out, " Fetch v18 corr=1 client=capgen-kgo-group 0.099ms 107B/2819B capgen-codecs[0@0+30 ") {
			t.Errorf("read %s -w, read back:\n%s", flag, out)
		}
	}
}
