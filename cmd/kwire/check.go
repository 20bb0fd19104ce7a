package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	pathpkg "path"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/kwire/kwire/analysis"
	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/render"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

type checkOptions struct {
	capture  captureFlags
	files    fileFlags
	analysis analysisFlags
	JUnit    string
	Verbose  bool
}

func newCheckCmd(s *ioStreams, g *globalOptions) *cobra.Command {
	o := &checkOptions{}
	cmd := &cobra.Command{
		Use:   "check [flags] SPEC CAPTURE...",
		Short: "Assert what a capture's Kafka traffic must and must not hold, for CI",
		Long: `Check captures against a spec: a YAML file of assertions over their
exchanges, each written in kwire read's --filter language (the names of
kwire read --json: api, apiVersion, clientId, latencyMs, errors, topics,
facts..., see kwire read --help). Prints PASS or FAIL per check with the
reason and up to three exchanges at fault (each after its capture file's
name when several are read without --merge); --junit FILE also writes a
JUnit XML report for CI systems.

  checks:
    - name: produces with a recent version
      expect: 'api == "Produce" && apiVersion >= 9'
      atLeast: 1             # also atMost, exactly; atLeast 1 by default
    - name: no errors at all
      none: 'len(errors) > 0'
    - name: never UNSUPPORTED_VERSION
      none: '"UNSUPPORTED_VERSION" in errors'
    - name: never a version the broker did not advertise
      noFinding: unadvertised-version   # the broker closes the connection
                                        # on one, with no error to match
    - name: ApiVersions first on every connection
      first: 'api == "ApiVersions"'
    - name: Metadata before any Produce, per client
      before: 'api == "Metadata"'
      then: 'api == "Produce"'
      per: client            # connection, client or capture (default)
    - name: every Produce answered within 200 ms
      where: 'api == "Produce" && kind != "noResponse"'   # acks=0 needs none
      every: 'latencyMs != nil && latencyMs < 200'
    - name: Fetch p99 under 600 ms
      where: 'api == "Fetch"'
      latency: {p99: 600}    # ms; also p50, p90, max
    - name: the capture is whole
      complete: true         # no gaps, resyncs, bad or truncated frames, decode failures
    - name: no broker was slow
      noFinding: 'slow-*'    # rules of docs/findings.md, glob patterns
    - name: nothing alarming
      noFinding: '*'
      severity: error        # info, warning or error

Kinds of check (one per item, with name):
  expect EXPR     how many exchanges match: atLeast N (default 1), atMost N,
                  exactly N
  none EXPR       no exchange matches
  every EXPR      every exchange matching where (default all) matches EXPR
  first EXPR      the first request of every Kafka connection matches (a
                  connection whose start the capture does not hold, caught
                  mid-stream or cut before it, is left out and counted)
  before A, then B
                  every exchange matching B has one matching A before it
                  (by request packet) in the same connection, client (ID)
                  or capture, as per says
  latency         answered exchanges matching where: p50, p90, p99 and max
                  in milliseconds at most these (fails when none matches)
  complete true   the captures were fully dissected: nothing lost,
                  truncated, skipped or malformed, and no response that no
                  captured request explains on a connection captured from
                  its SYN (the holes a kwire read -w file marks as left
                  out are not losses: the reason says how many bytes)
  finding RULE, noFinding RULE
                  a finding of that rule (docs/findings.md; a glob pattern,
                  with severity: info, warning or error) is, or is not, in
                  the captures; a pattern that matches no rule is a spec
                  error
Orders go by the requests' packet numbers: with several files, each is a
capture of its own unless --merge.

Captures that hold no Kafka exchange fail (a "captures" line): every
check would pass on them. Exit status: 0 every check passed; 1 a check failed; 2 usage error, a
spec that does not parse (a YAML error, an unknown key, a bad expression,
a finding pattern that matches no rule, a count or latency below 0, a
capture given as the spec) or a capture that cannot be read. A capture
not fully dissected gives a warning (and fails "complete").`,
		Example: `  # In CI, after the client's tests ran under tcpdump
  kwire check --port 9092 --junit kwire-junit.xml kafka-checks.yaml client-tests.pcap`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return &exitError{code: exitUsage, full: true,
					err: fmt.Errorf("%s: want a SPEC file and at least one CAPTURE", cmd.CommandPath())}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), o, s, g.colorEnabled(s), args[0], args[1:])
		},
	}
	f := cmd.Flags()
	o.capture.addFlags(f, true, 0)
	o.files.addFlags(f)
	o.analysis.addFlags(f, true)
	f.StringVar(&o.JUnit, "junit", "", "also write a JUnit XML report to `FILE` (one testcase per check)")
	f.BoolVar(&o.Verbose, "verbose", false, "also list the exchanges that made each check pass")
	return cmd
}

// checkSpec is a spec file.
type checkSpec struct {
	Checks []checkItem `yaml:"checks"`
}

// checkItem is one check as written; exactly one kind is set.
type checkItem struct {
	Name     string             `yaml:"name"`
	Expect   string             `yaml:"expect"`
	AtLeast  *int64             `yaml:"atLeast"`
	AtMost   *int64             `yaml:"atMost"`
	Exactly  *int64             `yaml:"exactly"`
	None     string             `yaml:"none"`
	Every    string             `yaml:"every"`
	Where    string             `yaml:"where"`
	First    string             `yaml:"first"`
	Before   string             `yaml:"before"`
	Then     string             `yaml:"then"`
	Per      string             `yaml:"per"`
	Latency  map[string]float64 `yaml:"latency"`
	Complete bool               `yaml:"complete"`
	// Finding and NoFinding are rules of docs/findings.md (glob
	// patterns: "slow-*"), Severity (info, warning, error) narrows them.
	Finding   string `yaml:"finding"`
	NoFinding string `yaml:"noFinding"`
	Severity  string `yaml:"severity"`
}

// check is one compiled check with its state.
type check struct {
	item checkItem
	kind string
	line int // in the spec

	match, where, then *exprProgram // compiled expressions
	// readsNames says an expression reads topic names (readsTopicNames);
	// unnamed counts the exchanges it saw that named a topic by an ID
	// left unresolved once --max-names-memory had refused names: their
	// topics read as IDs, so the verdict is not decided.
	readsNames bool
	unnamed    int64

	count     int64
	seen      int64                   // exchanges where matched (every, latency)
	examples  []string                // up to 3 exchanges at fault (or matching)
	firsts    map[scopeKey]firstState // first: per connection; before/then: per scope
	unstarted int64                   // first: connections whose start the capture did not hold
	orderBad  map[scopeKey]bool
	lat       stats.Latency
	pass      bool
	reason    string
}

type scopeKey struct {
	file   int
	conn   int
	client string
}

// firstState is the earliest request of a scope: its packet, whether it
// matched, and its line; for before/then, the earliest A and B.
type firstState struct {
	frame, aFrame, bFrame int64
	ok                    bool
	line, bLine           string
}

const maxExamples = 3

var latencyKeys = []string{"p50", "p90", "p99", "max"}

// parseSpec reads and compiles a spec.
func parseSpec(path string) ([]*check, bool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, usageErrorf("spec: %v", err)
	}
	if kind := reassembly.Sniff(b); kind != "" {
		// The arguments swapped: YAML would fail on the bytes ("invalid
		// trailing UTF-8 octet"), which says nothing of the mistake.
		return nil, false, usageErrorf("spec %s: this is a capture (%s), not a spec; usage: kwire check SPEC CAPTURE...", path, kind)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, false, usageErrorf("spec %s: %v", path, err)
	}
	if err := checkSpecKeys(&root); err != nil {
		return nil, false, usageErrorf("spec %s: %v", path, err)
	}
	var spec checkSpec
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&spec); err != nil && !errors.Is(err, io.EOF) {
		return nil, false, usageErrorf("spec %s: %s", path, specDecodeError(err))
	}
	if len(spec.Checks) == 0 {
		return nil, false, usageErrorf("spec %s: no checks (want a list under checks:)", path)
	}
	lines := checkLines(&root)
	var out []*check
	bodies := false
	for i, it := range spec.Checks {
		c := &check{item: it, firsts: map[scopeKey]firstState{}, orderBad: map[scopeKey]bool{}}
		if i < len(lines) {
			c.line = lines[i]
		}
		at := fmt.Sprintf("spec %s, check %d", path, i+1)
		if c.line > 0 {
			at = fmt.Sprintf("spec %s:%d", path, c.line)
		}
		if it.Name == "" {
			return nil, false, usageErrorf("%s: a check needs a name", at)
		}
		var kinds []string
		for k, set := range map[string]bool{"expect": it.Expect != "", "none": it.None != "", "every": it.Every != "",
			"first": it.First != "", "before": it.Before != "", "latency": len(it.Latency) > 0, "complete": it.Complete,
			"finding": it.Finding != "", "noFinding": it.NoFinding != ""} {
			if set {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) != 1 {
			return nil, false, usageErrorf("%s (%s): want exactly one of expect, none, every, first, before (with then), latency, complete, finding, noFinding; got %d", at, it.Name, len(kinds))
		}
		c.kind = kinds[0]
		compile := func(what, src string) (*exprProgram, error) {
			if src == "" {
				return nil, nil
			}
			p, b, err := compileFilter(src)
			if err != nil {
				return nil, usageErrorf("%s (%s): %s: %s", at, it.Name, what, strings.TrimPrefix(err.Error(), "--filter: "))
			}
			bodies = bodies || b
			return p, nil
		}
		var err error
		src := map[string]string{"expect": it.Expect, "none": it.None, "every": it.Every, "first": it.First, "before": it.Before}[c.kind]
		if c.match, err = compile(c.kind, src); err != nil {
			return nil, false, err
		}
		if c.where, err = compile("where", it.Where); err != nil {
			return nil, false, err
		}
		if c.then, err = compile("then", it.Then); err != nil {
			return nil, false, err
		}
		c.readsNames = readsTopicNames(src) || readsTopicNames(it.Where) || readsTopicNames(it.Then)
		switch {
		case c.kind == "before" && c.then == nil:
			return nil, false, usageErrorf("%s (%s): before needs then", at, it.Name)
		case c.kind != "before" && (it.Then != "" || it.Per != ""):
			return nil, false, usageErrorf("%s (%s): then and per go with before", at, it.Name)
		case c.kind != "every" && c.kind != "latency" && it.Where != "":
			return nil, false, usageErrorf("%s (%s): where goes with every and latency", at, it.Name)
		case c.kind != "expect" && (it.AtLeast != nil || it.AtMost != nil || it.Exactly != nil):
			return nil, false, usageErrorf("%s (%s): atLeast, atMost and exactly go with expect", at, it.Name)
		case it.Exactly != nil && (it.AtLeast != nil || it.AtMost != nil):
			return nil, false, usageErrorf("%s (%s): exactly excludes atLeast and atMost", at, it.Name)
		}
		switch it.Per {
		case "", "capture", "connection", "client":
		default:
			return nil, false, usageErrorf("%s (%s): per %q: want connection, client or capture", at, it.Name, it.Per)
		}
		if pat := it.Finding + it.NoFinding; pat != "" {
			if _, err := pathpkg.Match(pat, ""); err != nil {
				return nil, false, usageErrorf("%s (%s): rule pattern %q: %v", at, it.Name, pat, err)
			}
			if !matchesRule(pat) {
				// A misspelt rule would pass every noFinding check.
				return nil, false, usageErrorf("%s (%s): %s %q matches no finding rule; the rules are %s (docs/findings.md)",
					at, it.Name, c.kind, pat, strings.Join(ruleIDs(), ", "))
			}
		}
		switch {
		case it.Severity != "" && c.kind != "finding" && c.kind != "noFinding":
			return nil, false, usageErrorf("%s (%s): severity goes with finding and noFinding", at, it.Name)
		case it.Severity != "" && !slices.Contains([]string{"info", "warning", "error"}, it.Severity):
			return nil, false, usageErrorf("%s (%s): severity %q: want info, warning or error", at, it.Name, it.Severity)
		}
		for _, k := range slices.Sorted(maps.Keys(it.Latency)) {
			v := it.Latency[k]
			switch {
			case !slices.Contains(latencyKeys, k):
				return nil, false, usageErrorf("%s (%s): latency %s: want p50, p90, p99 or max with milliseconds", at, it.Name, k)
			case v < 0 || math.IsNaN(v):
				return nil, false, usageErrorf("%s (%s): latency %s: %g is not a ceiling: want 0 or more milliseconds", at, it.Name, k, v)
			}
		}
		for _, n := range []struct {
			key string
			v   *int64
		}{{"atLeast", it.AtLeast}, {"atMost", it.AtMost}, {"exactly", it.Exactly}} {
			if n.v != nil && *n.v < 0 {
				return nil, false, usageErrorf("%s (%s): %s: %d is not a count of exchanges: want 0 or more", at, it.Name, n.key, *n.v)
			}
		}
		if it.AtLeast != nil && it.AtMost != nil && *it.AtLeast > *it.AtMost {
			return nil, false, usageErrorf("%s (%s): atLeast %d is above atMost %d: no count passes", at, it.Name, *it.AtLeast, *it.AtMost)
		}
		out = append(out, c)
	}
	return out, bodies, nil
}

// ruleIDs are the IDs of the finding rules (analysis.Rules), in report
// order.
func ruleIDs() []string {
	ids := make([]string, len(analysis.Rules))
	for i, r := range analysis.Rules {
		ids[i] = r.ID
	}
	return ids
}

// matchesRule reports whether the glob pattern pat matches the ID of at
// least one finding rule.
func matchesRule(pat string) bool {
	for _, r := range analysis.Rules {
		if ok, _ := pathpkg.Match(pat, r.ID); ok {
			return true
		}
	}
	return false
}

// specKeys are the keys a spec's top level and its checks may have, in
// the spec's words (the yaml tags of checkSpec and checkItem).
var specKeys = sync.OnceValues(func() (top, item []string) {
	tags := func(t reflect.Type) []string {
		var out []string
		for i := range t.NumField() {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
				out = append(out, tag)
			}
		}
		return out
	}
	return tags(reflect.TypeFor[checkSpec]()), tags(reflect.TypeFor[checkItem]())
})

// checkSpecKeys reports the first key of the spec that is not one kwire
// check knows, with its line and the keys known there: the YAML decoder's
// own message names Go types.
func checkSpecKeys(root *yaml.Node) error {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil
	}
	top, item := specKeys()
	unknown := func(m *yaml.Node, known []string, where string) error {
		if m.Kind != yaml.MappingNode {
			return nil // the decoder says what is wrong with its type
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if k := m.Content[i]; !slices.Contains(known, k.Value) {
				return fmt.Errorf("line %d: unknown key %q%s; known keys: %s", k.Line, k.Value, where, strings.Join(known, ", "))
			}
		}
		return nil
	}
	m := root.Content[0]
	if m.Kind == yaml.SequenceNode {
		// The checks without their key: the decoder would say "cannot
		// unmarshal !!seq into a mapping".
		return fmt.Errorf("line %d: a list at the top level; the checks go in a list under checks: (checks:, then each check as  - name: ...)", m.Line)
	}
	if err := unknown(m, top, " at the top level"); err != nil {
		return err
	}
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "checks" || m.Content[i+1].Kind != yaml.SequenceNode {
			continue
		}
		for _, it := range m.Content[i+1].Content {
			if err := unknown(it, item, " in a check"); err != nil {
				return err
			}
		}
	}
	return nil
}

// yamlGoType matches the Go type names of the YAML decoder's messages
// ("into int64", "in type main.checkItem").
var yamlGoType = regexp.MustCompile(` (in type|into) (\[\])?(map\[string\])?(main\.)?[A-Za-z0-9]+`)

// specDecodeError words a YAML decoding error in the spec's terms: what
// was expected (a number, a list, text), not the Go type it was to fill.
func specDecodeError(err error) string {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err.Error()
	}
	msgs := make([]string, len(te.Errors))
	for i, m := range te.Errors {
		msgs[i] = yamlGoType.ReplaceAllStringFunc(m, func(g string) string {
			switch {
			case strings.HasPrefix(g, " in type"):
				return ""
			case strings.Contains(g, "[]"):
				return " into a list"
			case strings.Contains(g, "map["):
				return " into a mapping of numbers"
			case strings.HasSuffix(g, "int64"):
				return " into a whole number"
			case strings.HasSuffix(g, "float64"):
				return " into a number"
			case strings.HasSuffix(g, "bool"):
				return " into true or false"
			case strings.HasSuffix(g, "string"):
				return " into text"
			}
			return " into a mapping"
		})
	}
	return strings.Join(msgs, "; ")
}

// checkLines returns the line of each item under checks:.
func checkLines(root *yaml.Node) []int {
	if root.Kind != yaml.DocumentNode || len(root.Content) == 0 {
		return nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "checks" && m.Content[i+1].Kind == yaml.SequenceNode {
			var out []int
			for _, it := range m.Content[i+1].Content {
				out = append(out, it.Line)
			}
			return out
		}
	}
	return nil
}

// checkSink evaluates the checks on every exchange, in emit order.
type checkSink struct {
	checks []*check
	names  *facts.Names
	bodies bool
	file   int
	// path is the capture file being read when several are, each a
	// capture of its own (not --merge): the lines of exchanges name it,
	// their packet numbers being that file's.
	path string
	// perFile counts the exchanges of each file read on its own (by
	// file, from 0): one without Kafka fails the run ("captures").
	perFile map[int]int64
	// cuts holds, per connection of a cut file (kwire read -w), the
	// packet of its first hole the file's writer left (EventCut): a
	// first request after it may not be the connection's first.
	cuts map[scopeKey]int64
	// noSYN holds the connections caught mid-stream (no SYN captured):
	// their first request is not known.
	noSYN map[scopeKey]bool
}

func runExpr(p *exprProgram, f *exchangeFields) bool {
	out, err := expr.Run(p, f)
	if err != nil {
		return false
	}
	ok, _ := out.(bool)
	return ok
}

// exchangeLine is how a report names an exchange: its line, with the
// packet numbers, after the name of its capture file when several are
// read each as a capture of its own (file).
func exchangeLine(ex *dissect.Exchange, file string) string {
	var b strings.Builder
	if file != "" {
		b.WriteString(file + ": ")
	}
	b.WriteString("packets ")
	render.Line(&b, ex, render.Options{FrameNumbers: true})
	return strings.TrimSuffix(b.String(), "\n")
}

func (k *checkSink) Exchange(ex *dissect.Exchange) {
	if k.perFile == nil {
		k.perFile = map[int]int64{}
	}
	k.perFile[max(k.file, 0)]++
	fx := ex.Facts()
	k.names.Resolve(fx)
	f := fieldsOf(ex, k.names, true, k.bodies)
	// A topic known by ID alone after names were refused may be one a
	// check looks for by name: the checks that read names cannot tell.
	if k.names.Refused() > 0 && fx.Unnamed() {
		for _, c := range k.checks {
			if c.readsNames {
				c.unnamed++
			}
		}
	}
	var line string
	lineOf := func() string {
		if line == "" {
			line = exchangeLine(ex, k.path)
		}
		return line
	}
	frame := int64(0)
	if ex.Request != nil {
		frame = ex.Request.FirstPacket
	} else if ex.Response != nil {
		frame = ex.Response.FirstPacket
	}
	conn := -1
	if ex.Conn != nil {
		conn = ex.Conn.Index
	}
	for _, c := range k.checks {
		switch c.kind {
		case "expect", "none":
			if runExpr(c.match, f) {
				c.count++
				if len(c.examples) < maxExamples {
					c.examples = append(c.examples, lineOf())
				}
			}
		case "every":
			if c.where != nil && !runExpr(c.where, f) {
				continue
			}
			c.seen++
			if !runExpr(c.match, f) {
				c.count++
				if len(c.examples) < maxExamples {
					c.examples = append(c.examples, lineOf())
				}
			}
		case "latency":
			if (c.where == nil || runExpr(c.where, f)) && ex.Latency() >= 0 {
				c.lat.Add(ex.Latency())
			}
		case "first":
			if ex.Request == nil || ex.Kind == dissect.KindSASL || conn < 0 {
				continue
			}
			key := scopeKey{file: k.file, conn: conn}
			if !ex.Conn.SawSYN {
				if k.noSYN == nil {
					k.noSYN = map[scopeKey]bool{}
				}
				k.noSYN[key] = true
				continue
			}
			st, ok := c.firsts[key]
			if !ok || frame < st.frame {
				c.firsts[key] = firstState{frame: frame, ok: runExpr(c.match, f), line: lineOf()}
			}
		case "before":
			if ex.Request == nil {
				continue
			}
			key := scopeKey{file: k.file}
			switch c.item.Per {
			case "connection":
				key.conn = conn
			case "client":
				key.client = ex.ClientID
			}
			st := c.firsts[key]
			if runExpr(c.match, f) && (st.aFrame == 0 || frame < st.aFrame) {
				st.aFrame = frame
			}
			if runExpr(c.then, f) && (st.bFrame == 0 || frame < st.bFrame) {
				st.bFrame, st.bLine = frame, lineOf()
			}
			c.firsts[key] = st
		}
	}
}

func (k *checkSink) Event(ev *dissect.Event) {
	if ev.Kind != dissect.EventCut || ev.Conn == nil {
		return
	}
	key := scopeKey{file: k.file, conn: ev.Conn.Index}
	if k.cuts == nil {
		k.cuts = map[scopeKey]int64{}
	}
	if at, ok := k.cuts[key]; !ok || ev.Frame < at {
		k.cuts[key] = ev.Frame
	}
}

// dropUnstarted leaves out of a first check the connections whose first
// request the capture may not hold: caught mid-stream (no SYN: the
// skipped-apiversions finding leaves them out too), or cut by a cut
// file's writer before the request seen first.
func (c *check) dropUnstarted(k *checkSink) {
	c.unstarted = int64(len(k.noSYN))
	for key, st := range c.firsts {
		if at, ok := k.cuts[key]; ok && at <= st.frame {
			delete(c.firsts, key)
			c.unstarted++
		}
	}
}

// verdict decides each check once everything was read; findings are the
// analysis's (docs/findings.md), nil when no check asks for them.
// undecided fails a check that reads topic names and saw exchanges
// naming a topic by an ID that --max-names-memory (mem) kept unresolved:
// a name it looks for may be behind the ID, so neither its pass nor its
// count can be trusted. The reason says so before the count it had.
func (c *check) undecided(mem byteSize) {
	if c.unnamed == 0 {
		return
	}
	c.pass = false
	c.reason = fmt.Sprintf("undecided: %d exchange%s named a topic by an ID whose name was not kept past --max-names-memory (%s), and the check reads topic names: raise it, e.g. --max-names-memory %s (counted: %s)",
		c.unnamed, plural(int(c.unnamed)), mem, namesMemoryHint(mem), c.reason)
}

// readsTopicNames reports whether the expression src reads what holds
// topic names: topics, subject or the facts document, or $env, the whole
// exchange, through which any of them can be read by a name in a string
// ($env["topics"], get($env, "facts")). "" reads nothing.
func readsTopicNames(src string) bool {
	if src == "" {
		return false
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return true // compiled before: cannot happen; assume it does
	}
	var v topicNameUse
	ast.Walk(&tree.Node, &v)
	return v.found
}

// topicNameUse notes an identifier that holds topic names (an
// ast.Visitor).
type topicNameUse struct{ found bool }

func (u *topicNameUse) Visit(n *ast.Node) {
	if id, ok := (*n).(*ast.IdentifierNode); ok {
		switch id.Value {
		case "topics", "subject", "facts", "$env":
			u.found = true
		}
	}
}

func (c *check) verdict(run *captureRun, findings []analysis.Finding) {
	it := &c.item
	switch c.kind {
	case "expect":
		lo, hi := int64(1), int64(-1)
		if it.AtLeast != nil {
			lo = *it.AtLeast
		}
		if it.AtMost != nil {
			hi = *it.AtMost
			if it.AtLeast == nil {
				lo = 0
			}
		}
		if it.Exactly != nil {
			lo, hi = *it.Exactly, *it.Exactly
		}
		c.pass = c.count >= lo && (hi < 0 || c.count <= hi)
		want := fmt.Sprintf("at least %d", lo)
		switch {
		case hi >= 0 && lo == hi:
			want = fmt.Sprintf("exactly %d", lo)
		case hi >= 0 && lo > 0:
			want = fmt.Sprintf("%d to %d", lo, hi)
		case hi >= 0:
			want = fmt.Sprintf("at most %d", hi)
		}
		c.reason = fmt.Sprintf("%d exchange%s match %s, want %s", c.count, plural(int(c.count)), it.Expect, want)
		if c.count == 1 {
			c.reason = fmt.Sprintf("1 exchange matches %s, want %s", it.Expect, want)
		}
	case "none":
		c.pass = c.count == 0
		c.reason = fmt.Sprintf("%d exchange%s match %s, want none", c.count, plural(int(c.count)), it.None)
		if c.count == 1 {
			c.reason = fmt.Sprintf("1 exchange matches %s, want none", it.None)
		}
	case "every":
		c.pass = c.count == 0
		scope := "exchanges"
		if it.Where != "" {
			scope = "exchanges where " + it.Where
		}
		c.reason = fmt.Sprintf("%d of %d %s fail %s", c.count, c.seen, scope, it.Every)
	case "latency":
		var parts, bad []string
		for _, k := range latencyKeys {
			limit, ok := it.Latency[k]
			if !ok {
				continue
			}
			var d time.Duration
			switch k {
			case "p50":
				d = c.lat.Percentile(50)
			case "p90":
				d = c.lat.Percentile(90)
			case "p99":
				d = c.lat.Percentile(99)
			case "max":
				d = c.lat.Max()
			}
			ms := float64(d) / float64(time.Millisecond)
			s := fmt.Sprintf("%s %.3gms (at most %gms)", k, ms, limit)
			parts = append(parts, s)
			if ms > limit {
				bad = append(bad, s)
			}
		}
		c.pass = len(bad) == 0 && c.lat.Count() > 0
		if c.lat.Count() == 0 {
			// Nothing to measure is no pass: a where that matches
			// nothing (a typo, a capture of something else) would
			// otherwise guard nothing.
			c.reason = "no answered exchange matches: no latency to check"
			break
		}
		c.reason = fmt.Sprintf("%d answered exchange%s: %s", c.lat.Count(), plural(int(c.lat.Count())), strings.Join(parts, ", "))
		if !c.pass {
			c.reason = fmt.Sprintf("%d answered exchange%s: %s", c.lat.Count(), plural(int(c.lat.Count())), strings.Join(bad, ", "))
		}
	case "first":
		bad := 0
		for _, st := range sortedFirsts(c.firsts) {
			if !st.ok {
				bad++
				if len(c.examples) < maxExamples {
					c.examples = append(c.examples, st.line)
				}
			}
		}
		c.pass = bad == 0
		c.reason = fmt.Sprintf("%d of %d connections start otherwise than %s", bad, len(c.firsts), it.First)
		if c.unstarted > 0 {
			c.reason += fmt.Sprintf(" (%d connection%s whose start the capture does not hold not checked)", c.unstarted, plural(int(c.unstarted)))
		}
	case "before":
		bad, with := 0, 0
		for _, st := range sortedFirsts(c.firsts) {
			if st.bFrame == 0 {
				continue
			}
			with++
			if st.aFrame == 0 || st.aFrame > st.bFrame {
				bad++
				if len(c.examples) < maxExamples {
					c.examples = append(c.examples, st.bLine)
				}
			}
		}
		per := it.Per
		if per == "" {
			per = "capture"
		}
		c.pass = bad == 0
		c.reason = fmt.Sprintf("%d of %d %ss with %s have no %s before it", bad, with, per, it.Then, it.Before)
	case "finding", "noFinding":
		pat := it.Finding + it.NoFinding
		what := pat
		if it.Severity != "" {
			what += " (" + it.Severity + ")"
		}
		n := 0
		for _, f := range findings {
			if ok, _ := pathpkg.Match(pat, f.Rule); !ok || it.Severity != "" && f.Severity != it.Severity {
				continue
			}
			n++
			if len(c.examples) < maxExamples {
				ex := fmt.Sprintf("%s %s: %s", f.Severity, f.Rule, f.Subject)
				if f.File != "" {
					ex = f.File + ": " + ex
				}
				c.examples = append(c.examples, ex)
			}
		}
		c.pass = n > 0 == (c.kind == "finding")
		want := "none"
		if c.kind == "finding" {
			want = "at least one"
		}
		c.reason = fmt.Sprintf("%d finding%s %s, want %s", n, plural(n), what, want)
	case "complete":
		p := run.problems()
		c.pass = p == "" && len(run.fileErrs) == 0
		c.reason = "fully dissected"
		if n := run.ds.CutBytes; n > 0 {
			// Holes a cut file declares (kwire read -w): not losses.
			c.reason += fmt.Sprintf(" (%d bytes left out by the capture's writer, kwire read -w)", n)
		}
		if !c.pass {
			c.reason = "not fully dissected: " + strings.TrimPrefix(p+fileErrList(run), ", ")
		}
	}
}

func fileErrList(r *captureRun) string {
	var s string
	for _, e := range r.fileErrs {
		s += ", " + fileErrorText(e)
	}
	return s
}

// sortedFirsts lists states by their first packet, for stable examples.
func sortedFirsts(m map[scopeKey]firstState) []firstState {
	out := make([]firstState, 0, len(m))
	for _, st := range m {
		out = append(out, st)
	}
	slices.SortStableFunc(out, func(a, b firstState) int {
		return cmp.Compare(min0(a.frame, a.bFrame), min0(b.frame, b.bFrame))
	})
	return out
}

func min0(a, b int64) int64 {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	return min(a, b)
}

func runCheck(ctx context.Context, o *checkOptions, s *ioStreams, color bool, specPath string, paths []string) error {
	checks, bodies, err := parseSpec(specPath)
	if err != nil {
		return err
	}
	if o.JUnit != "" {
		if err := checkWritable("--junit", o.JUnit, append([]string{specPath}, paths...)...); err != nil {
			return err
		}
	}
	dopts, err := o.capture.dissectOptions(valuesNotShown)
	if err != nil {
		return err
	}
	dopts.Decoder.BatchHeadersOnly = !bodies
	dopts.Decoder.Sparse = !bodies // the checks read facts unless a rule reads bodies
	sink := &checkSink{checks: checks, names: cutNames(paths, o.capture.MaxNamesMemory), bodies: bodies, file: -1}
	var an *analysis.Analyzer
	var ds dissect.Sink = sink
	if slices.ContainsFunc(checks, func(c *check) bool { return c.kind == "finding" || c.kind == "noFinding" }) {
		aopts, err := o.analysis.options()
		if err != nil {
			return err
		}
		aopts.Findings = true
		aopts.Names = sink.names // an exchange is resolved once, by the first to read it
		an = analysis.New(aopts)
		ds = teeSink{sink, an}
	}
	bar := startProgressFor(s, paths)
	cr := &captureReader{opts: dopts, ropts: o.capture.reassemblyOptions(), wrap: bar.wrap}
	if err := o.files.apply(cr); err != nil {
		return err
	}
	cr.onFile = func(p string) {
		sink.file++
		if len(paths) > 1 {
			sink.path = p
			if an != nil {
				an.SetFile(p)
			}
		}
	}
	start := time.Now()
	run := cr.read(ctx, paths, ds)
	bar.finish()
	if !run.readAny || hasUnreadable(&run) {
		var said bytes.Buffer
		err := run.status(io.MultiWriter(s.ErrOut, &said))
		if o.JUnit != "" {
			// The report CI shows says why: left as checkWritable made
			// it, empty, a JUnit reader fails on it with a parse error.
			why := strings.TrimSpace(strings.ReplaceAll(said.String(), "kwire: ", ""))
			if why == "" && err != nil {
				why = err.Error()
			}
			c := &check{item: checkItem{Name: "captures"}, kind: "captures", reason: "the captures could not be read, nothing was checked: " + why}
			if jerr := writeJUnit(o.JUnit, specPath, paths, []*check{c}, 1, time.Since(start)); jerr != nil {
				fmt.Fprintf(s.ErrOut, "kwire: --junit: %v\n", jerr)
			}
		}
		if err != nil {
			return err
		}
		return silentExit(exitUsage)
	}
	var findings []analysis.Finding
	if an != nil {
		findings = an.Findings().Findings
	}
	failed := 0
	for _, c := range checks {
		if c.kind == "first" {
			c.dropUnstarted(sink)
		}
		c.verdict(&run, findings)
		c.undecided(o.capture.MaxNamesMemory)
		if !c.pass {
			failed++
		}
	}
	// Checks over no Kafka traffic pass by default (none, every,
	// complete, ...): a capture of the wrong interface, port or filter
	// would go green. It is a failure of its own, for the captures, or
	// for each file of several read on their own (a host's).
	var empty []string
	if len(paths) > 1 && !o.files.Merge && run.ds.Exchanges > 0 {
		for i, p := range paths {
			if sink.perFile[i] == 0 {
				empty = append(empty, p)
			}
		}
	}
	switch {
	case run.ds.Exchanges == 0:
		checks = append(checks, &check{item: checkItem{Name: "captures"}, kind: "captures",
			reason: "no Kafka exchange in the captures: nothing was checked (the wrong interface, port or capture filter?)"})
		failed++
	case len(empty) > 0:
		checks = append(checks, &check{item: checkItem{Name: "captures"}, kind: "captures",
			reason: "no Kafka exchange in " + strings.Join(empty, ", ") + ": nothing of it was checked (the wrong interface, port or capture filter?)"})
		failed++
	}
	elapsed := time.Since(start)

	w := bufio.NewWriter(s.Out)
	for _, c := range checks {
		word := paintRole(color, c.pass)
		fmt.Fprintf(w, "%s %s: %s\n", word, c.item.Name, c.reason)
		if !c.pass || o.Verbose {
			for _, ex := range c.examples {
				fmt.Fprintf(w, "    %s\n", ex)
			}
		}
	}
	// Not "N passed, N failed" alone: CI systems read that line as their
	// own test runner's.
	if failed == 0 {
		fmt.Fprintf(w, "all %d check%s passed\n", len(checks), plural(len(checks)))
	} else {
		fmt.Fprintf(w, "%d of %d check%s failed\n", failed, len(checks), plural(len(checks)))
	}
	if err := w.Flush(); err != nil {
		return dataErrorf("writing output: %w", err)
	}
	if o.JUnit != "" {
		if err := writeJUnit(o.JUnit, specPath, paths, checks, failed, elapsed); err != nil {
			return dataErrorf("--junit: %v", err)
		}
	}
	warnNamesRefusedFor(s.ErrOut, o.capture.MaxNamesMemory, "the checks that read topic names fail as undecided", sink.names)
	run.status(s.ErrOut) // warnings only: the checks decide
	if failed > 0 {
		return silentExit(exitData)
	}
	return nil
}

func paintRole(color, pass bool) string {
	switch {
	case pass && color:
		return "\x1b[32mPASS\x1b[0m"
	case pass:
		return "PASS"
	case color:
		return "\x1b[31;1mFAIL\x1b[0m"
	}
	return "FAIL"
}

// JUnit XML, as CI systems read it (the Ant/Surefire schema's subset:
// testsuites > testsuite > testcase with failure).
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string       `xml:"name,attr"`
	Tests     int          `xml:"tests,attr"`
	Failures  int          `xml:"failures,attr"`
	Errors    int          `xml:"errors,attr"`
	Time      string       `xml:"time,attr"`
	Timestamp string       `xml:"timestamp,attr"`
	Cases     []junitCase  `xml:"testcase"`
	Props     []junitProp  `xml:"properties>property"`
	SystemOut *junitOutput `xml:"system-out,omitempty"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut *junitOutput  `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitOutput struct {
	Text string `xml:",chardata"`
}

func writeJUnit(path, spec string, captures []string, checks []*check, failed int, elapsed time.Duration) error {
	secs := fmt.Sprintf("%.3f", elapsed.Seconds())
	suite := junitSuite{Name: "kwire check " + spec, Tests: len(checks), Failures: failed, Time: secs,
		Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05")}
	for _, cp := range captures {
		suite.Props = append(suite.Props, junitProp{Name: "capture", Value: cp})
	}
	for _, c := range checks {
		tc := junitCase{Name: c.item.Name, Classname: "kwire.check." + c.kind, Time: "0"}
		detail := c.reason
		if len(c.examples) > 0 {
			detail += "\n" + strings.Join(c.examples, "\n")
		}
		if c.pass {
			tc.SystemOut = &junitOutput{Text: detail}
		} else {
			tc.Failure = &junitFailure{Message: c.reason, Type: c.kind, Text: detail}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	doc := junitSuites{Name: "kwire check", Tests: len(checks), Failures: failed, Time: secs, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), append(b, '\n')...)
	return os.WriteFile(path, b, 0o644)
}
