package main

// A cut file's topic names: a capture cut down by read -w keeps topics
// named only by ID (Produce and Fetch v13+, KIP-516) whose names the
// Metadata exchanges it left out stated. The writer records those names
// in the file's section header comment (pcapng's opt_comment on the
// Section Header Block), topicIDsComment, and kwire reading the file back
// learns them before its first exchange, as from a Metadata response.

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/kwire/kwire/facts"
)

// topicIDsPrefix starts the section comment that names topic IDs.
const topicIDsPrefix = "kwire-topic-ids:"

// maxCutNames bounds the names a cut file records: the topics of the
// exchanges it holds.
const maxCutNames = 4096

// legalTopic is a legal Kafka topic name (Topic.java: ASCII letters,
// digits, '.', '_' and '-', at most 249 characters).
var legalTopic = regexp.MustCompile(`^[a-zA-Z0-9._-]{1,249}$`)

// legalName reports whether name is a legal Kafka topic name: "." and
// ".." are not (Topic.validate).
func legalName(name string) bool { return name != "." && name != ".." && legalTopic.MatchString(name) }

// topicIDsComment is the section comment naming the topic IDs ids by
// names: "kwire-topic-ids: ID=name ...", IDs in base64url as Kafka writes
// them, sorted; "" when none has a name.
func topicIDsComment(ids map[facts.TopicID]bool, names *facts.Names) string {
	var pairs []string
	for id := range ids {
		if name, ok := names.Name(id); ok && legalName(name) {
			pairs = append(pairs, id.String()+"="+name)
		}
	}
	if len(pairs) == 0 {
		return ""
	}
	slices.Sort(pairs)
	// One pcapng option holds at most 65,535 bytes (its length is 16
	// bits): the names past what fits are left out, not the file broken.
	b := []byte(topicIDsPrefix)
	for _, pr := range pairs {
		if len(b)+1+len(pr) > maxCommentBytes {
			break
		}
		b = append(append(b, ' '), pr...)
	}
	return string(b)
}

// maxCommentBytes is the longest section comment written: under the
// 65,535 bytes a pcapng option's 16-bit length holds.
const maxCommentBytes = 60000

// cutNames returns a Names, bounded to mem bytes (--max-names-memory),
// that knows the topic names the cut files among paths record
// (learnCutNames): one per consumer, each resolving in its own order.
func cutNames(paths []string, mem byteSize) *facts.Names {
	n := facts.NewNames()
	n.SetMemory(int64(mem))
	learnCutNames(paths, n)
	return n
}

// learnCutNames reads the section comments of the pcapng files among
// paths that name topic IDs (topicIDsComment) into names. Files that are
// not plain pcapng (pcap, compressed, standard input, pipes) are passed
// over: read -w writes plain pcapng.
func learnCutNames(paths []string, names *facts.Names) {
	for _, p := range paths {
		if p == "-" {
			continue
		}
		learnCutNamesFile(p, names)
	}
}

func learnCutNamesFile(path string, names *facts.Names) {
	// Regular files only: a pipe or a device (<(zcat ...), /dev/stdin)
	// would lose the bytes read here.
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return // the read reports an error
	}
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if magic, err := br.Peek(4); err != nil || string(magic) != "\x0a\x0d\x0d\x0a" {
		return
	}
	r, err := pcapgo.NewNgReader(io.LimitReader(br, 1<<20), pcapgo.NgReaderOptions{SkipUnknownVersion: true})
	if err != nil {
		return
	}
	si := r.SectionInfo()
	if si.Application != "kwire read -w" {
		return // names a file kwire did not write claims are not taken
	}
	rest, ok := strings.CutPrefix(si.Comment, topicIDsPrefix)
	if !ok {
		return
	}
	for i, pair := range strings.Fields(rest) {
		if i == maxCutNames {
			break
		}
		id, name, ok := strings.Cut(pair, "=")
		b, err := base64.RawURLEncoding.DecodeString(id)
		if !ok || err != nil || len(b) != len(facts.TopicID{}) || !legalName(name) {
			continue
		}
		names.Learn(facts.TopicID(b), name)
	}
}

// warnNamesRefused says, once, when names kept topic names from being
// learnt past --max-names-memory (mem): their topic IDs are shown
// unresolved. Each Names of a run learns the same names, each in its own
// order: the count said is the largest.
func warnNamesRefused(w io.Writer, mem byteSize, names ...*facts.Names) {
	warnNamesRefusedFor(w, mem, "", names...)
}

// warnNamesRefusedFor is warnNamesRefused with what else the unresolved
// IDs mean for the command's answer (consequence, after "shown
// unresolved"; "" for nothing).
func warnNamesRefusedFor(w io.Writer, mem byteSize, consequence string, names ...*facts.Names) {
	n := namesRefused(names...)
	if n == 0 {
		return
	}
	if consequence != "" {
		consequence = ": " + consequence
	}
	fmt.Fprintf(w, "kwire: warning: %d topic name%s not kept past --max-names-memory (%s): their topic IDs are shown unresolved%s; raise it, e.g. --max-names-memory %s\n",
		n, plural(int(min(n, 2))), mem, consequence, namesMemoryHint(mem))
}

// namesMemoryHint is the --max-names-memory to suggest past mem: four
// times it, 64 MiB at least.
func namesMemoryHint(mem byteSize) byteSize { return max(4*mem, 64<<20) }

// namesRefused is the largest Refused of names (nil ones count 0).
func namesRefused(names ...*facts.Names) int64 {
	var n int64
	for _, ns := range names {
		n = max(n, ns.Refused())
	}
	return n
}
