package render

import (
	"bytes"
	"encoding/json"
	"github.com/kwire/kwire/render/termsafe"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/protocol"
)

// Tree writes t as an indented field tree (kwire's -V output), one field per
// line, two spaces per level; fields as "Name: value (note)", structs,
// arrays and batches as "Name description" over their indented children:
//
//	Length: 19
//	RequestHeader v1
//	  RequestApiKey: 18 (ApiVersions)
//	  ClientId: "wire-read"
//	ApiVersionsRequest v0 (empty)
//
// A frame's root (protocol's "RequestFrame"/"ResponseFrame") is not a line
// of its own.
// Strings are quoted, bytes shown per Options.Values and cut past
// Options.MaxValue with their full length, UUIDs in Kafka's base64url form
// with the RFC 4122 hex form beside, error codes with their Kafka names,
// arrays with their counts (arrays of numbers inline), JSON text
// pretty-printed below its field, record batches and records with absolute
// offsets, timestamps and CRC verdicts, unknown tagged fields with tag, size,
// offset and hex, and KindRaw spans (bytes not decoded) in full as a hex
// dump. Empty tagged-field buffers are left out (Hex shows their byte). A
// decoding error ends the output on a line of its own.
func Tree(w io.Writer, t *protocol.Tree, opts Options) error {
	tw := treeWriters.Get().(*treeWriter)
	tw.w, tw.opts, tw.t, tw.err = w, opts, t, nil
	tw.pos = batchPos{text: tw.pos.text[:0]} // an empty text is formatted anew
	tw.o = &tw.opts
	base := max(opts.Indent, 0)
	if t == nil || t.Root == nil {
		tw.indent(base)
		tw.buf = append(tw.buf, "(nothing decoded)\n"...)
	} else if isFrameRoot(t.Root) {
		for _, c := range t.Root.Children {
			tw.node(c, base, nil, 0)
		}
	} else {
		tw.node(t.Root, base, nil, 0)
	}
	if t != nil && t.Err != nil {
		line, r := errorLine(t)
		tw.indent(base)
		tw.buf = paint(tw.buf, opts.Color, r, line)
		tw.buf = append(tw.buf, '\n')
	}
	tw.flush(true)
	err := tw.err
	if cap(tw.buf) > treeBufKeep {
		tw.buf = make([]byte, 0, treeBufSize)
	}
	tw.w, tw.t, tw.err, tw.opts, tw.o = nil, nil, nil, Options{}, nil
	tw.pos = batchPos{text: tw.pos.text[:0]}
	treeWriters.Put(tw)
	return err
}

// treeWriters recycles Tree's writers with their line buffers (it writes
// them out past 32 KiB, so they stay a little above that unless one line
// is longer) and its copy of the options, which -V would otherwise
// allocate for every frame.
var treeWriters = sync.Pool{New: func() any { return &treeWriter{buf: make([]byte, 0, treeBufSize)} }}

const treeBufSize = 40 << 10

const treeBufKeep = 256 << 10

type treeWriter struct {
	w    io.Writer
	o    *Options // &opts
	opts Options
	t    *protocol.Tree
	buf  []byte
	err  error

	pos batchPos
}

func (tw *treeWriter) flush(force bool) {
	if force || len(tw.buf) > 32<<10 || tw.err != nil { // inlined: most lines write nothing out
		tw.flushOut(force)
	}
}

func (tw *treeWriter) flushOut(force bool) {
	if tw.err != nil {
		tw.buf = tw.buf[:0]
		return
	}
	if force || len(tw.buf) > 32<<10 {
		_, tw.err = tw.w.Write(tw.buf)
		tw.buf = tw.buf[:0]
	}
}

func (tw *treeWriter) indent(depth int) {
	tw.buf = appendIndent(tw.buf, depth)
}

// spaces is the indentation of the deeper lines, sliced rather than built.
const spaces = "                                                                "

// appendIndent appends two spaces per level of depth.
func appendIndent(b []byte, depth int) []byte {
	for depth > len(spaces)/2 {
		b = append(b, spaces...)
		depth -= len(spaces) / 2
	}
	return append(b, spaces[:2*depth]...)
}

// head writes the indentation and "name:" of a line.
func (tw *treeWriter) head(n *protocol.Node, depth int) {
	b := appendIndent(tw.buf, depth)
	b = paint(b, tw.o.Color, roleName, n.Name)
	tw.buf = append(b, ':')
}

// scalar reports whether n prints on one line with no children.
func scalar(n *protocol.Node) bool {
	switch n.Kind {
	case protocol.KindInt, protocol.KindBool, protocol.KindFloat, protocol.KindUUID:
		return len(n.Children) == 0
	}
	return false
}

// node writes n at depth; batch is the enclosing record batch and space
// the byte space of n's parent.
func (tw *treeWriter) node(n *protocol.Node, depth int, batch *protocol.Node, space int) {
	o := tw.o
	c := o.Color
	if n.Kind == protocol.KindInt && len(n.Children) == 0 && n.Flags == 0 && !c && !isCRC(n) {
		tw.leafInt(n, depth) // what leaf does for it, without the tests below
		return
	}
	switch {
	case n.Kind == protocol.KindTaggedFields && len(n.Children) == 0 && n.Note == "" &&
		n.Flags&^protocol.FlagTagged == 0:
		return // an empty tagged-field buffer says nothing
	case n.Kind == protocol.KindRaw:
		tw.head(n, depth)
		tw.buf = append(tw.buf, ' ')
		tw.buf = paint(tw.buf, c, roleNote, string(appendValue(nil, n, o, true)))
		tw.buf = appendNotes(tw.buf, n, o)
		tw.buf = append(tw.buf, '\n')
		if !isRedacted(n, o) {
			limit := len(n.Raw) // bytes not decoded are shown in full (all the decoder kept)...
			if n.Flags&protocol.FlagPartial != 0 {
				limit = o.maxValue() // ...but a partial batch is the normal end of a fetch
			}
			tw.hexLines(n.Raw, n.RawLen(), n.Off, depth+1, limit)
		}
		tw.flush(false)
		return
	case n.Kind == protocol.KindRecords && len(n.Children) == 0:
		tw.head(n, depth)
		tw.buf = append(tw.buf, ' ')
		tw.buf = appendValue(tw.buf, n, o, true)
		tw.buf = appendNotes(tw.buf, n, o)
		tw.buf = append(tw.buf, '\n')
		if n.Flags&protocol.FlagNull == 0 && !isRedacted(n, o) && o.Values != ValuesNone {
			tw.hexLines(n.Raw, len(n.Raw), 0, depth+1, o.maxValue())
		}
		tw.flush(false)
		return
	case n.Kind == protocol.KindArray && len(n.Children) > 0 && allScalar(n.Children):
		tw.head(n, depth)
		tw.buf = append(tw.buf, ' ')
		tw.buf = appendValue(tw.buf, n, o, false)
		for i, e := range n.Children {
			if i == 0 {
				tw.buf = append(tw.buf, ' ')
			} else {
				tw.buf = append(tw.buf, ", "...)
			}
			tw.buf = paint(tw.buf, c, roleValue, string(appendValue(nil, e, o, false)))
			tw.buf = tw.appendEnum(tw.buf, e)
			if e.Note != "" {
				tw.buf = append(tw.buf, " ("...)
				tw.buf = append(tw.buf, e.Note...)
				tw.buf = append(tw.buf, ')')
			}
		}
		tw.buf = appendNotes(tw.buf, n, o)
		tw.buf = append(tw.buf, '\n')
		tw.flush(false)
		return
	}

	if len(n.Children) == 0 && n.Kind != protocol.KindStruct {
		tw.leaf(n, depth)
		return
	}

	// A container: struct, array, record batch, decoded records, tags;
	// its line has no colon.
	tw.indent(depth)
	tw.buf = paint(tw.buf, c, roleName, n.Name)
	switch {
	case isBatch(n):
		tw.buf = append(tw.buf, ' ')
		tw.buf = append(tw.buf, batchDescription(n)...)
		batch = n
	case batch != nil && isRecord(n):
		if off, ts, ok := tw.pos.position(batch, n); ok {
			b := append(tw.buf, " offset "...)
			if c {
				b = paint(b, c, roleValue, itoa(off))
				b = append(b, " timestamp "...)
				b = paint(b, c, roleValue, msTime(ts))
			} else {
				b = strconv.AppendInt(b, off, 10)
				b = append(b, " timestamp "...)
				b = tw.pos.appendTime(b, ts)
			}
			tw.buf = b
		}
	case n.Kind == protocol.KindStruct:
		if typeShown(n) {
			tw.buf = append(tw.buf, ' ')
			tw.buf = paint(tw.buf, c, roleAPI, n.Type)
		}
	default:
		tw.buf = append(tw.buf, ' ')
		tw.buf = appendValue(tw.buf, n, o, true)
	}
	if n.Kind == protocol.KindRecords {
		batches, partial := 0, false
		for _, k := range n.Children {
			if k.Kind == protocol.KindStruct {
				batches++
			}
			partial = partial || k.Flags&protocol.FlagPartial != 0
		}
		tw.buf = append(tw.buf, ", "...)
		switch {
		case batches == 0 && partial:
			tw.buf = append(tw.buf, "a partial batch"...)
		case batches == 1:
			tw.buf = append(tw.buf, "1 batch"...)
		default:
			tw.buf = strconv.AppendInt(tw.buf, int64(batches), 10)
			tw.buf = append(tw.buf, " batches"...)
		}
		if partial && batches > 0 {
			tw.buf = append(tw.buf, " and a partial one"...)
		}
	}
	if n.Space != space && tw.t != nil && n.Space >= 0 && n.Space < len(tw.t.Spaces) {
		tw.buf = append(tw.buf, " ["...)
		tw.buf = append(tw.buf, tw.t.Spaces[n.Space].Name...)
		tw.buf = append(tw.buf, ']')
	}
	tw.buf = appendNotes(tw.buf, n, o)
	if n.Kind == protocol.KindStruct && len(n.Children) == 0 {
		tw.buf = append(tw.buf, " (empty)"...)
	}
	tw.buf = append(tw.buf, '\n')
	tw.flush(false)
	// A redacted container (SASL AuthBytes split into parts) holds the
	// secret in a child flagged itself; its value was withheld above.
	sp := n.Space // the space mark shows where a run of siblings changes space
	for _, k := range n.Children {
		tw.node(k, depth+1, batch, sp)
		sp = k.Space
	}
}

// isFrameRoot reports whether n is the root of a decoded frame (protocol's
// "RequestFrame"/"ResponseFrame", Type "frame"), or a nameless root; its
// children are shown at the top level.
func isFrameRoot(n *protocol.Node) bool {
	return n.Kind == protocol.KindStruct && (n.Type == "frame" || n.Name == "")
}

// typeShown reports whether a struct's Type adds to its name: struct type
// names ("TopicProduceData") do, the decoder's message kinds ("request",
// "header", ...) do not.
func typeShown(n *protocol.Node) bool {
	switch n.Type {
	case "", n.Name, "request", "response", "header", "data", "frame":
		return false
	}
	return true
}

func allScalar(ns []*protocol.Node) bool {
	for _, n := range ns {
		if !scalar(n) || n.Flags&(protocol.FlagError|protocol.FlagUnknown|protocol.FlagTruncated) != 0 {
			return false
		}
	}
	return true
}

// leaf writes a field with no children.
func (tw *treeWriter) leaf(n *protocol.Node, depth int) {
	o := tw.o
	if n.Kind == protocol.KindInt && n.Flags == 0 && !o.Color && !isCRC(n) {
		tw.leafInt(n, depth)
		return
	}
	tw.leafAny(n, depth)
}

// leafAny is leaf's general path.
func (tw *treeWriter) leafAny(n *protocol.Node, depth int) {
	o := tw.o
	tw.head(n, depth)
	tw.buf = append(tw.buf, ' ')
	if n.Kind == protocol.KindUnknownTag {
		tw.buf = paint(tw.buf, o.Color, roleNote, "unknown ")
		tw.buf = append(tw.buf, "tag "...)
		tw.buf = appendInt(tw.buf, n.Int)
		if isRedacted(n, o) {
			tw.buf = append(tw.buf, " at 0x"...)
			tw.buf = strconv.AppendInt(tw.buf, int64(n.Off), 16)
			tw.buf = append(tw.buf, ": "+redacted...) // no length either
		} else {
			tw.buf = append(tw.buf, ", "...)
			tw.buf = strconv.AppendInt(tw.buf, int64(len(n.Raw)), 10)
			tw.buf = append(tw.buf, " bytes at 0x"...)
			tw.buf = strconv.AppendInt(tw.buf, int64(n.Off), 16)
			tw.buf = append(tw.buf, ": "...)
			tw.buf = appendBytesValue(tw.buf, n.Raw, len(n.Raw), ValuesHex, o.maxValue())
		}
		tw.buf = appendNotes(tw.buf, n, o)
		tw.buf = append(tw.buf, '\n')
		tw.flush(false)
		return
	}
	if n.Kind != protocol.KindString && n.Kind != protocol.KindBytes {
		// jsonText's answer: nil (numbers, UUIDs, most leaves)
	} else if lines := jsonLines(n, o); lines != nil {
		tw.buf = paint(tw.buf, o.Color, roleFaint, "JSON, "+itoa(int64(lines.size))+" bytes")
		tw.buf = appendNotes(tw.buf, n, o)
		tw.buf = append(tw.buf, '\n')
		for _, line := range lines.lines {
			tw.indent(depth + 1)
			tw.buf = paint(tw.buf, o.Color, roleValue, line)
			tw.buf = append(tw.buf, '\n')
		}
		tw.flush(false)
		return
	}
	b := tw.buf // one store into tw per line: fewer GC write barriers
	if o.Color {
		r := roleValue
		if isErrorCode(n) && n.Int != 0 {
			r = roleError
		}
		b = paint(b, true, r, string(appendValue(nil, n, o, true)))
	} else {
		b = appendValue(b, n, o, true)
	}
	b = tw.appendEnum(b, n)
	b = tw.appendTopicName(b, n)
	b = appendNotes(b, n, o)
	tw.buf = append(b, '\n')
	tw.flush(false)
}

// leafInt is leaf for the most common field of all, an integer with no
// flag (not null, not redacted, nothing to mark) and no color, which is
// not a CRC: what leaf's general path writes for it (appendValue,
// appendEnum, appendNotes; TestLeafIntAgrees holds the two together), in
// a third of the instructions.
func (tw *treeWriter) leafInt(n *protocol.Node, depth int) {
	b := appendIndent(tw.buf, depth)
	b = append(b, n.Name...)
	b = append(b, ": "...)
	b = appendInt(b, n.Int)
	note := n.Note
	if note == "" && n.Field != nil { // a field with no note (most): its value's name, or an API key's
		if name := protocol.ValueName(n.Field, n.Int); name != "" {
			b = append(b, " ("...)
			b = append(b, name...)
			b = append(b, ')')
		}
		if n.Field.Role == protocol.RoleAPIKey {
			note = noteOf(n)
		}
	}
	if note != "" {
		note = trimValueNote(note, n.Int)
	}
	if note != "" {
		b = append(b, " ("...)
		b = append(b, note...)
		b = append(b, ')')
	}
	tw.buf = append(b, '\n')
	tw.flush(false)
}

// appendTopicName appends " (name)" after a topic ID whose name the
// exchange's facts know (Options.Facts).
func (tw *treeWriter) appendTopicName(b []byte, n *protocol.Node) []byte {
	if n.Kind != protocol.KindUUID {
		return b
	}
	fx := tw.o.Facts
	if fx == nil || n.Role() != protocol.RoleTopicID || len(n.Raw) != 16 {
		return b
	}
	id := facts.TopicID(n.Raw)
	for i := range fx.Topics {
		if t := &fx.Topics[i]; t.HasID && t.ID == id && t.Name != "" {
			b = append(b, " ("...)
			b = paint(b, tw.o.Color, roleNote, termsafe.Quote(t.Name))
			return append(b, ')')
		}
	}
	return b
}

// appendEnum appends " (name)" when n is an integer field whose value
// Kafka names (protocol.ValueName: IsolationLevel 1 → read_committed) and
// the decoder gave no note of its own.
func (tw *treeWriter) appendEnum(b []byte, n *protocol.Node) []byte {
	if n.Kind != protocol.KindInt || n.Note != "" || n.Flags&protocol.FlagNull != 0 || isRedacted(n, tw.o) {
		return b
	}
	name := protocol.ValueName(n.Field, n.Int)
	if name == "" {
		return b
	}
	b = append(b, " ("...)
	b = paint(b, tw.o.Color, roleNote, name)
	return append(b, ')')
}

// prettyJSON is a JSON value indented for -V: its lines, and the size of
// the text it was made from.
type prettyJSON struct {
	lines []string
	size  int
}

// jsonLines returns n's value indented (jsonText), or nil when it is not
// JSON or a line of it is not printable text (termsafe.Safe: a string
// holding bytes that are not UTF-8, a C1 control, a bidirectional
// override): such a value is shown quoted, as any other is.
func jsonLines(n *protocol.Node, o *Options) *prettyJSON {
	js := jsonText(n, o)
	if js == nil {
		return nil
	}
	var ind bytes.Buffer
	if json.Indent(&ind, js, "", "  ") != nil {
		return nil
	}
	p := &prettyJSON{size: len(js)}
	for line := range strings.SplitSeq(ind.String(), "\n") {
		if !termsafe.Safe(line) {
			return nil
		}
		p.lines = append(p.lines, line)
	}
	return p
}

// jsonText returns the value of a string or printable bytes field when it
// is a JSON object or array no longer than MaxValue, else nil.
func jsonText(n *protocol.Node, o *Options) []byte {
	if isRedacted(n, o) || n.Flags&protocol.FlagNull != 0 {
		return nil
	}
	var b []byte
	switch {
	case n.Kind == protocol.KindString:
		// The cheap tests first, before copying the string.
		if t := strings.TrimSpace(n.Str); len(n.Str) > o.maxValue() || len(t) < 2 || t[0] != '{' && t[0] != '[' {
			return nil
		}
		b = []byte(n.Str)
	case n.Kind == protocol.KindBytes && o.Values == ValuesText:
		b = n.Raw
		if len(b) > o.maxValue() {
			return nil
		}
	default:
		return nil
	}
	t := bytes.TrimSpace(b)
	if len(t) < 2 || len(b) > o.maxValue() || (t[0] != '{' && t[0] != '[') || !json.Valid(t) {
		return nil
	}
	return t
}

// hexLines writes up to max bytes of data as hexdump -C lines at depth,
// offsets starting at base, then the full length when cut.
func (tw *treeWriter) hexLines(data []byte, total, base, depth, max int) {
	show := data
	if len(show) > max {
		show = show[:max]
	}
	for i := 0; i < len(show); i += 16 {
		end := min(i+16, len(show))
		tw.indent(depth)
		tw.buf = dumpLine(tw.buf, show[i:end], base+i, 8, tw.o.Color)
		tw.buf = append(tw.buf, '\n')
		tw.flush(false)
	}
	if len(show) < total {
		tw.indent(depth)
		tw.buf = append(tw.buf, "... ("...)
		tw.buf = strconv.AppendInt(tw.buf, int64(total), 10)
		tw.buf = append(tw.buf, " bytes"...)
		if len(show) == len(data) && len(data) < total {
			tw.buf = append(tw.buf, "; the rest not kept"...)
		}
		tw.buf = append(tw.buf, ")\n"...)
	}
}
