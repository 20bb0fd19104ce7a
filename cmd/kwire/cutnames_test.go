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

// TestMaxNamesMemoryWarns: stats, groups and txns, whose reports keep
// names of their own, warn as read does when --max-names-memory kept
// topic names from being learnt, and say nothing at the default.
func TestMaxNamesMemoryWarns(t *testing.T) {
	const capture = "../../pcaps/kgo-produce-consume.pcap"
	const warning = "topic names not kept past --max-names-memory (1): their topic IDs are shown unresolved"
	for _, cmd := range []string{"stats", "groups", "txns"} {
		_, _, errOut := runWith(t, "", cmd, "--max-names-memory", "1", capture)
		if !strings.Contains(errOut, warning) {
			t.Errorf("%s --max-names-memory 1: stderr %q", cmd, errOut)
		}
		if _, _, errOut := runWith(t, "", cmd, capture); strings.Contains(errOut, "not kept past --max-names-memory") {
			t.Errorf("%s at the default: stderr %q", cmd, errOut)
		}
	}
}
