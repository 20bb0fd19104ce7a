package render

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/protocol"
)

// hexPerLine is the number of bytes on one hex line, as in hexdump -C.
const hexPerLine = 16

// hexColumn is the width of the hex column: 16 bytes as "xx" separated by
// spaces, with an extra space after the eighth (hexdump -C's layout).
const hexColumn = hexPerLine*3 - 1 + 1

const hexDigits = "0123456789abcdef"

// appendOffset appends off in lowercase hex, zero-padded to width digits.
func appendOffset(b []byte, off, width int) []byte {
	var tmp [16]byte
	s := strconv.AppendInt(tmp[:0], int64(off), 16)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendHexColumn appends up to 16 bytes in hexdump -C's hex layout, padded
// to hexColumn; masked bytes show as "**".
func appendHexColumn(b []byte, data []byte, masked bool) []byte {
	start := len(b)
	for i, x := range data {
		if i > 0 {
			b = append(b, ' ')
		}
		if i == 8 {
			b = append(b, ' ')
		}
		if masked {
			b = append(b, '*', '*')
		} else {
			b = append(b, hexDigits[x>>4], hexDigits[x&0xf])
		}
	}
	for len(b)-start < hexColumn {
		b = append(b, ' ')
	}
	return b
}

// dumpLine appends one hexdump -C line: offset, hex column, |ascii|.
func dumpLine(b []byte, data []byte, off, width int, c bool) []byte {
	b = paint(b, c, roleOffset, string(appendOffset(nil, off, width)))
	b = append(b, "  "...)
	b = appendHexColumn(b, data, false)
	b = append(b, "  |"...)
	for _, x := range data {
		if x < 0x20 || x > 0x7e {
			x = '.'
		}
		b = append(b, x)
	}
	return append(b, '|')
}

// HexDump writes data in hexdump -C's format: 16 bytes per line with an
// 8-digit hex offset counted from base, the bytes in hex and the printable
// ASCII between bars, then a last line with the offset just past the end.
// It is for raw bytes nothing decoded (orphans, undecodable frames); unlike
// hexdump -C it never folds repeated lines.
func HexDump(w io.Writer, data []byte, base int) error {
	var buf []byte
	for i := 0; i < len(data); i += hexPerLine {
		buf = dumpLine(buf, data[i:min(i+hexPerLine, len(data))], base+i, 8, false)
		buf = append(buf, '\n')
		if len(buf) > 32<<10 {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	buf = appendOffset(buf, base+len(data), 8)
	buf = append(buf, '\n')
	_, err := w.Write(buf)
	return err
}

// Hex writes t as an annotated hex walk-through (kwire's -x output): every
// leaf field's bytes beside its path and value, in wire order,
//
//	0000  00 00 00 13                                       Length 19
//	0004  00 12                                             RequestHeader.RequestApiKey 18 (ApiVersions)
//	000c  00 09                                             RequestHeader.ClientId (length 9)
//	000e  77 69 72 65 2d 72 65 61  64                       RequestHeader.ClientId "wire-read"
//
// Offsets are hex, relative to the start of the byte space (space 0 is the
// frame). Values longer than 16 bytes wrap onto further lines. The length
// prefix of a string, bytes or records value gets its own line; bytes
// between leaf fields (array counts, struct prefixes, anything the tree
// leaves unlabelled) get a line labelled with the enclosing field, so every
// byte of every space appears exactly once, but for two kinds of span that
// a line stands for instead of listing them:
//
//   - a BYTES value (record key, value, header value, bytes field) longer
//     than Options.MaxValue (unless negative: no limit) shows its first
//     MaxValue bytes, then, in the hex column,
//     "… N more bytes of NAME (offset 0xFIRST – 0xLAST)", the first and
//     last bytes left out, inclusive;
//   - a value marked protocol.FlagRedacted (unless Options.ShowSecrets)
//     is one line at its offset with "<redacted>" in the hex column,
//     labelled with its path: neither its bytes nor its length are shown.
//     A redacted value with parts (SASL AuthBytes split into user name and
//     password) shows its parts, secrets withheld, and withholds its own
//     length prefix.
//
// So that no two offsets give a withheld span's length, the lines after
// one, to the end of its space, show offsets relative to its end:
// "+0000" is the byte just after it. In a space that holds a withheld
// span every offset has one more digit ("00065" before, "+0000" after),
// so that the columns stay aligned. What still tells a secret's length:
// the frame's Length, minus the bytes of every field shown.
//
// Bytes the decoder produced itself (decompressed record batches,
// Tree.Spaces[1:]) follow in their own section headed by the space's name,
// with offsets inside that space.
func Hex(w io.Writer, t *protocol.Tree, opts Options) error {
	if t == nil || len(t.Spaces) == 0 {
		return nil
	}
	h := &hexWalker{w: w, o: &opts, t: t, deferred: make(map[int][]deferred)}
	for sp := range t.Spaces {
		h.space = sp
		h.data = t.Spaces[sp].Data
		h.omit = t.Spaces[sp].Omitted
		h.size = t.Spaces[sp].Size()
		h.oi, h.shift = 0, 0
		h.pos = 0
		h.width = 4
		for n := h.size; n >= 1<<16; n >>= 4 {
			h.width++
		}
		h.rel = -1
		if h.withholds(t.Root, sp, 0) {
			h.rel = -2 // absolute, one digit wider, until a withheld span
			h.width++
		}
		var roots []deferred
		if sp == 0 {
			if t.Root != nil {
				roots = []deferred{{n: t.Root}}
			}
		} else {
			roots = h.deferred[sp]
			slices.SortStableFunc(roots, func(a, b deferred) int { return a.n.Off - b.n.Off })
			h.buf = append(h.buf, '\n')
			h.buf = paint(h.buf, opts.Color, roleNote, "-- "+t.Spaces[sp].Name+" ("+itoa(int64(h.size))+" bytes) --")
			h.buf = append(h.buf, '\n')
		}
		for _, r := range roots {
			if r.n.Off > h.pos {
				h.bytes(h.pos, r.n.Off, "(not decoded)", false, true)
			}
			path := r.path
			if sp == 0 && (isFrameRoot(r.n) || r.n.Kind == protocol.KindRecords) {
				path = "" // the frame's root: its children name themselves
			}
			h.walk(r.n, path, r.redacted, sp == 0 && path == "")
		}
		if h.pos < h.size {
			h.bytes(h.pos, h.size, "(not decoded)", false, true)
		}
		h.flush(false)
	}
	if t.Err != nil {
		line, r := errorLine(t)
		h.buf = paint(h.buf, opts.Color, r, line)
		h.buf = append(h.buf, '\n')
	}
	h.flush(true)
	return h.err
}

type deferred struct {
	n        *protocol.Node
	path     string
	redacted bool
}

type hexWalker struct {
	w        io.Writer
	o        *Options
	t        *protocol.Tree
	buf      []byte
	err      error
	space    int
	data     []byte          // the bytes the space kept
	omit     []protocol.Span // the spans it omitted (protocol.Space.Omitted)
	size     int             // its size, omitted spans included
	oi       int             // omit[oi] is the first span not wholly before the last bytes read
	shift    int             // bytes omitted before omit[oi]
	pos      int
	width    int
	deferred map[int][]deferred
	// rel is the end of the last withheld span in the space, from which
	// later offsets count ("+0004"); -2 before the space's first one, -1
	// in a space without any.
	rel int
}

// withholds reports whether n or a node under it in space sp is withheld.
func (h *hexWalker) withholds(n *protocol.Node, sp, depth int) bool {
	if n == nil || depth > 256 {
		return false
	}
	if n.Space == sp && isRedacted(n, h.o) {
		return true
	}
	for _, c := range n.Children {
		if h.withholds(c, sp, depth+1) {
			return true
		}
	}
	return false
}

// offset appends off as a dump line's offset: absolute, or after a
// withheld span "+" and the distance from its end.
func (h *hexWalker) offset(b []byte, off int) []byte {
	if h.rel >= 0 && off >= h.rel {
		b = append(b, '+')
		return appendOffset(b, off-h.rel, h.width-1)
	}
	return appendOffset(b, off, h.width)
}

// offsetText is offset in the words of an elided value's line: "0x1f4",
// or "+0x4" after a withheld span.
func (h *hexWalker) offsetText(off int) string {
	if h.rel >= 0 && off >= h.rel {
		return "+0x" + strconv.FormatInt(int64(off-h.rel), 16)
	}
	return "0x" + strconv.FormatInt(int64(off), 16)
}

func (h *hexWalker) flush(force bool) {
	if h.err != nil {
		h.buf = h.buf[:0]
		return
	}
	if force || len(h.buf) > 32<<10 {
		_, h.err = h.w.Write(h.buf)
		h.buf = h.buf[:0]
	}
}

func joinPath(path, name string) string {
	switch {
	case path == "":
		return name
	case name == "":
		return path
	case name[0] == '[':
		return path + name
	}
	return path + "." + name
}

// childPath returns the path of c, the i-th child of n: batches in a
// RECORDS field and the inner messages of a legacy wrapper's MessageSet
// are numbered ("Records.RecordBatch[1]", "MessageSet.Message[2]") since
// they share a name.
func childPath(path string, n, c *protocol.Node, i int) string {
	switch {
	case (n.Kind == protocol.KindRecords || isMessageSet(n)) && c.Name != "" && c.Name[0] != '[':
		return joinPath(path, c.Name+"["+strconv.Itoa(i)+"]")
	case n.Kind == protocol.KindTaggedFields:
		// A tagged field is a field of the struct, not of its buffer.
		if path == n.Name {
			return c.Name
		}
		if p, ok := strings.CutSuffix(path, "."+n.Name); ok {
			return joinPath(p, c.Name)
		}
	}
	return joinPath(path, c.Name)
}

// otherSpace returns the name of the first space other than the current one
// that n's children live in, or "".
func (h *hexWalker) otherSpace(n *protocol.Node) string {
	for _, c := range n.Children {
		if c.Space != h.space && c.Space >= 0 && c.Space < len(h.t.Spaces) {
			return h.t.Spaces[c.Space].Name
		}
	}
	return ""
}

// walk dumps n's span: its same-space children in order, with the bytes
// between them labelled, or n itself when it has none. Children in other
// spaces are deferred to their space's section. isRoot keeps the root's
// name out of the paths.
//
// A redacted node without children has its bytes masked, and so has
// everything under it; a redacted node with children (SASL AuthBytes split
// into authzid, username and password) leaves masking to the children
// flagged themselves, but for its own bytes when none of its children is
// in this space (a compressed payload).
func (h *hexWalker) walk(n *protocol.Node, path string, red, isRoot bool) {
	if len(n.Children) == 0 && isRedacted(n, h.o) {
		red = true
	}
	kids := 0
	for i, c := range n.Children {
		if c.Space == h.space {
			kids++
		} else if c.Space > h.space && c.Space < len(h.t.Spaces) {
			h.deferred[c.Space] = append(h.deferred[c.Space], deferred{c, childPath(path, n, c, i), red})
		}
	}
	if kids == 0 {
		// Withheld, with its parts in another space (a compressed payload
		// whose records are decoded in their own section): its own bytes
		// here are masked too.
		h.leaf(n, path, red || isRedacted(n, h.o))
		return
	}
	first := true
	for i, c := range n.Children {
		if c.Space != h.space {
			continue
		}
		cp := childPath(path, n, c, i)
		if c.Off > h.pos {
			var label []byte
			mask := red
			switch {
			case first && !isRoot && isRedacted(n, h.o):
				// A withheld value's parts: its length prefix (and
				// whatever precedes the first part) would tell the
				// length of the whole.
				label = append(label, path...)
				label = append(label, " (prefix)"...)
				mask = true
			case first && !isRoot:
				label = append(label, path...)
				label = append(label, ' ')
				label = h.prefixText(label, n)
			default:
				label = append(label, cp...)
				label = append(label, " (prefix)"...)
			}
			h.bytes(h.pos, c.Off, string(label), mask, true)
		}
		first = false
		h.walk(c, cp, red, false)
	}
	if end := min(n.End(), h.size); end > h.pos {
		label := path + " (trailing bytes)"
		if s := h.otherSpace(n); s != "" {
			label = path + " (encoded; decoded in " + s + ")"
		}
		if isRoot {
			label = "(not decoded)"
		}
		h.bytes(h.pos, end, label, red, true)
	}
}

// prefixText describes the bytes at the start of container n before its
// first child: an array count, a records length, a tagged-field count.
func (h *hexWalker) prefixText(b []byte, n *protocol.Node) []byte {
	switch n.Kind {
	case protocol.KindArray:
		return appendValue(b, n, h.o, false)
	case protocol.KindRecords:
		b = append(b, "(length "...)
		b = strconv.AppendInt(b, int64(n.Len-(h.firstChildOff(n)-n.Off)), 10)
		return append(b, ')')
	case protocol.KindTaggedFields:
		return appendValue(b, n, h.o, false)
	case protocol.KindBytes:
		if n.Flags&protocol.FlagNull == 0 {
			b = append(b, "(length "...)
			b = strconv.AppendInt(b, int64(n.RawLen()), 10)
			return append(b, ')')
		}
	}
	if n.Flags&protocol.FlagTagged != 0 {
		return append(b, "(tag and size)"...)
	}
	return append(b, "(prefix)"...)
}

func (h *hexWalker) firstChildOff(n *protocol.Node) int {
	for _, c := range n.Children {
		if c.Space == h.space {
			return c.Off
		}
	}
	return n.End()
}

// leaf dumps a node without same-space children, splitting off the length
// prefix of strings, bytes and records.
func (h *hexWalker) leaf(n *protocol.Node, path string, red bool) {
	o := h.o
	start := max(n.Off, h.pos)
	end := min(n.End(), h.size)
	if end < start {
		end = start
	}
	if path == "" {
		path = n.Name
	}
	other := h.otherSpace(n)
	if n.Flags&protocol.FlagNull == 0 && start == n.Off && !red {
		vlen := -1
		switch n.Kind {
		case protocol.KindString:
			vlen = len(n.Str)
		case protocol.KindBytes, protocol.KindRecords:
			vlen = n.RawLen()
		case protocol.KindArray:
			if other != "" && n.Len > 4 {
				vlen = n.Len - 4 // a compressed batch's record count, then its payload
			}
		}
		maxPrefix := 5 // an INT16, INT32 or varint length
		what := " (length " + itoa(int64(vlen)) + ")"
		if n.Flags&protocol.FlagTagged != 0 {
			maxPrefix = 15 // tag, size and length varints
			what = " (tag, size, length " + itoa(int64(vlen)) + ")"
		}
		if n.Kind == protocol.KindArray {
			what = " [" + itoa(n.Int) + "]"
		}
		if p := n.Len - vlen; vlen > 0 && p > 0 && p <= maxPrefix && start+p <= end {
			h.bytes(start, start+p, path+what, false, true)
			start += p
			if n.Kind == protocol.KindArray {
				h.bytes(start, end, path+" (compressed, "+itoa(int64(vlen))+" bytes; decoded in "+other+")", red, false)
				return
			}
		}
	}
	lb := append([]byte(nil), path...)
	if red {
		// The whole span, length prefix included, on one line without
		// its bytes (bytes): nothing tells the secret's length.
		h.bytes(start, end, string(appendNotes(lb, n, o)), true, false)
		return
	}
	switch n.Kind {
	case protocol.KindStruct:
		if typeShown(n) {
			lb = append(lb, ' ')
			lb = paint(lb, o.Color, roleAPI, n.Type)
		}
	default:
		lb = append(lb, ' ')
		r := roleValue
		if isErrorCode(n) && n.Int != 0 || n.Kind == protocol.KindRaw {
			r = roleError
		}
		lb = paint(lb, o.Color, r, string(appendValue(nil, n, o, false)))
	}
	lb = appendNotes(lb, n, o)
	if other != "" {
		lb = append(lb, " (decoded in "...)
		lb = append(lb, other...)
		lb = append(lb, ')')
	}
	if n.Kind == protocol.KindStruct && n.Len == 0 {
		lb = append(lb, " (empty)"...)
	}
	if cut := n.End() - n.RawLen() + o.maxValue(); n.Kind == protocol.KindBytes && o.MaxValue >= 0 &&
		n.RawLen() > o.maxValue() && start <= cut-o.maxValue() && end == n.End() {
		// A long value: its first MaxValue bytes, then one line for the rest.
		h.bytes(start, cut, string(lb), false, false)
		h.elide(cut, end, n.Name)
		return
	}
	h.bytes(start, end, string(lb), red, false)
}

// elide writes the line standing for data[start:end) of a value cut at
// Options.MaxValue, in place of its hex lines:
//
//	… 1499744 more bytes of Value (offset 0x140 – 0x16e2bf)
//
// in the hex column, the offsets being the first and the last byte left
// out (inclusive, in the current space).
func (h *hexWalker) elide(start, end int, name string) {
	start = min(max(start, h.pos, 0), h.size)
	end = min(max(end, start), h.size)
	if end <= start {
		return
	}
	for range h.width + 2 {
		h.buf = append(h.buf, ' ')
	}
	line := "… " + itoa(int64(end-start)) + " more bytes of " + name +
		" (offset " + h.offsetText(start) + " – " + h.offsetText(end-1) + ")"
	h.buf = paint(h.buf, h.o.Color, roleFaint, line)
	h.buf = append(h.buf, '\n')
	h.pos = max(h.pos, end)
	h.flush(false)
}

// bytes writes the lines for data[start:end), label on the first; an empty
// span still gets its labelled line. faint dims the label of unlabelled
// structure.
func (h *hexWalker) bytes(start, end int, label string, masked, faint bool) {
	// Spans outside the space (a tree not built by protocol's decoder) are
	// clipped: the dump never reads past its bytes nor lists one twice.
	start = min(max(start, h.pos, 0), h.size)
	end = min(max(end, start), h.size)
	if len(h.omit) > 0 && !masked {
		h.keptBytes(start, end, label, faint)
		return
	}
	c := h.o.Color
	if masked {
		// A withheld secret: one line at its offset, without its bytes and
		// without a length, whatever the secret's size; the offsets after
		// it count from its end.
		h.buf = paint(h.buf, c, roleOffset, string(h.offset(nil, start)))
		h.buf = append(h.buf, "  "...)
		h.buf = paint(h.buf, c, roleNote, redacted)
		for range hexColumn - len(redacted) {
			h.buf = append(h.buf, ' ')
		}
		h.buf = append(h.buf, "  "...)
		h.buf = append(h.buf, strings.TrimSuffix(label, " "+redacted)...)
		h.buf = trimRight(h.buf)
		h.buf = append(h.buf, '\n')
		h.pos = max(h.pos, end)
		h.rel = h.pos
		h.flush(false)
		return
	}
	for off := start; ; off += hexPerLine {
		stop := min(off+hexPerLine, end)
		h.buf = paint(h.buf, c, roleOffset, string(h.offset(nil, off)))
		h.buf = append(h.buf, "  "...)
		h.buf = appendHexColumn(h.buf, h.data[off-h.shift:stop-h.shift], masked)
		if off == start {
			h.buf = append(h.buf, "  "...)
			if faint {
				h.buf = paint(h.buf, c, roleFaint, label)
			} else {
				h.buf = append(h.buf, label...)
			}
		}
		h.buf = trimRight(h.buf)
		h.buf = append(h.buf, '\n')
		if stop >= end {
			break
		}
		h.flush(false) // a long span's lines go out as they are made, not all at once
	}
	h.pos = max(h.pos, end)
	h.flush(false)
}

// keptBytes is bytes for a space with omitted spans: the kept runs of
// [start, end) as hex lines (label on the first), each omitted run as
// one line standing for it:
//
//	… 1499744 bytes not kept (offset 0x140 – 0x16e2bf)
func (h *hexWalker) keptBytes(start, end int, label string, faint bool) {
	// omit[oi] is the first span that does not end at or before start
	// (the walk goes forward; start over when it does not).
	if h.oi > 0 && (h.oi > len(h.omit) || h.omit[h.oi-1].Off+h.omit[h.oi-1].Len > start) {
		h.oi, h.shift = 0, 0
	}
	for h.oi < len(h.omit) && h.omit[h.oi].Off+h.omit[h.oi].Len <= start {
		h.shift += h.omit[h.oi].Len
		h.oi++
	}
	if start == end {
		omit := h.omit
		h.omit = nil
		h.bytes(start, end, label, false, faint)
		h.omit = omit
		return
	}
	for first := true; start < end; first = false {
		stop := end
		if h.oi < len(h.omit) {
			o := h.omit[h.oi]
			if o.Off <= start {
				stop = min(end, o.Off+o.Len)
				for range h.width + 2 {
					h.buf = append(h.buf, ' ')
				}
				line := "… " + itoa(int64(stop-start)) + " bytes not kept (offset 0x" + strconv.FormatInt(int64(start), 16) +
					" – 0x" + strconv.FormatInt(int64(stop-1), 16) + ")"
				if first && label != "" {
					line += "  " + label
				}
				h.buf = paint(h.buf, h.o.Color, roleFaint, line)
				h.buf = append(h.buf, '\n')
				if stop == o.Off+o.Len {
					h.shift += o.Len
					h.oi++
				}
				h.pos = max(h.pos, stop)
				start = stop
				h.flush(false)
				continue
			}
			stop = min(end, o.Off)
		}
		omit := h.omit
		h.omit = nil // the kept run: read as a space without omissions, at shift
		h.bytes(start, stop, label, false, faint)
		h.omit = omit
		label = "" // only the range's first line carries it
		start = stop
	}
}

func trimRight(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// UndecodedFrame writes a frame nothing decoded (dissect.Frame.Tree nil:
// cut by a gap or the end of the capture, an orphan whose API is not
// known) for -V and -x: a line saying so, then its captured bytes as
// HexDump lines, so that nothing the capture holds is lost — or, as the
// bytes may hold a secret (dissect.Frame.Withheld: bytes not decoded
// are withheld, whatever the API), one line marking them withheld, their
// length hidden (the dissector sets Withheld only without
// --show-secrets).
func UndecodedFrame(w io.Writer, fr *dissect.Frame) error {
	if fr.Withheld {
		_, err := fmt.Fprintf(w, "not decoded; %s: withheld, it may hold a secret (--show-secrets shows it)\n", redacted)
		return err
	}
	if _, err := fmt.Fprintf(w, "not decoded: %d bytes\n", len(fr.Bytes)); err != nil {
		return err
	}
	return HexDump(w, fr.Bytes, 0)
}
