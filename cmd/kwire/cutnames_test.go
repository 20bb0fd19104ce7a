package main

import (
	"bytes"
	"os"
	"path/filepath"
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
		pcapgo.NgWriterOptions{SectionInfo: pcapgo.NgSectionInfo{Comment: comment + " AAAA=short " + b.String() + "=evil\x1b"}})
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
	got := cutNames([]string{p, "-", filepath.Join(t.TempDir(), "missing")})
	if n, ok := got.Name(a); !ok || n != "orders" || got.Len() != 1 {
		t.Errorf("learnt %d names, %q for %s", got.Len(), n, a)
	}
}
