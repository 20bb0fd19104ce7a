// Package statsview writes the reports of package dissect/stats: the
// `kwire stats` tables (per API and version, client, topic-partition,
// connection; latency histograms and latency over time; the slowest
// exchanges), the `kwire versions` tables (advertised ranges per broker,
// versions per client, the API × client × broker matrix, flags) and the
// `--against` comparison, as aligned text or as JSON.
//
// Contract: statsview never decodes and never computes statistics; it
// formats stats.Report, stats.VersionsReport and stats.Comparison exactly
// as given. Output is deterministic (the reports are sorted; durations are
// formatted without the clock). Colors are by role (header, API name,
// error, latency, flag, faint) and only when Options.Color is set; the
// alignment is computed on the uncolored text, so colors never shift
// columns.
//
// To add a section: build a table (newTable, add rows of cells with a
// role each), write it with a heading, and add its JSON field to the
// report type in dissect/stats, so text and JSON stay the same facts.
package statsview

import (
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/kwire/kwire/render/termsafe"
)

// Options control the text output.
type Options struct {
	// Color adds terminal colors by role; when false no escape code is
	// written.
	Color bool
	// Rows is how many rows the CLIENTS, PARTITIONS and CONNECTIONS
	// tables show, those of most interest first (DefaultRows when 0, all
	// when negative); a line says how many were left out.
	Rows int
	// Int64Strings writes the JSON documents' 64-bit integers (producer
	// IDs, offsets, byte counts) as decimal strings (--json-int64 string).
	Int64Strings bool
}

type role uint8

const (
	rolePlain role = iota
	roleHeader
	roleAPI
	roleError
	roleLatency
	roleFlag
	roleOK
	roleFaint
	numRoles
)

var escapes = func() (e [numRoles][2]string) {
	attrs := [numRoles][]color.Attribute{
		roleHeader:  {color.Bold},
		roleAPI:     {color.FgMagenta, color.Bold},
		roleError:   {color.FgRed, color.Bold},
		roleLatency: {color.FgCyan},
		roleFlag:    {color.FgYellow},
		roleOK:      {color.FgGreen},
		roleFaint:   {color.Faint},
	}
	for r, a := range attrs {
		if len(a) == 0 {
			continue
		}
		c := color.New(a...)
		c.EnableColor()
		pre, post, _ := strings.Cut(c.Sprint("\x00"), "\x00")
		e[r] = [2]string{pre, post}
	}
	return e
}()

// paint returns s in the role's color when on.
func paint(on bool, r role, s string) string {
	if !on || s == "" || escapes[r][0] == "" {
		return s
	}
	return escapes[r][0] + s + escapes[r][1]
}

type cell struct {
	s      string
	r      role
	detail bool // a detail line (table.detail), not a column
}

// c and cr make cells; what a cell says is escaped (termsafe.Escape): a
// value from the capture keeps no control character, so no newline of
// its own breaks the table.
func c(s string) cell              { return cell{s: termsafe.Escape(s)} }
func cr(r role, s string) cell     { return cell{s: termsafe.Escape(s), r: r} }
func width(s string) int           { return utf8.RuneCountInString(s) }
func pad(n int) string             { return strings.Repeat(" ", max(n, 0)) }
func (t *table) add(cells ...cell) { t.rows = append(t.rows, cells) }

// text returns every cell's text, for checks on the content.
func (t *table) text() string {
	var b strings.Builder
	for _, row := range t.rows {
		for _, cl := range row {
			b.WriteString(cl.s)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// detail adds a line written as is (after the indent) under the last row;
// it takes no part in the column widths.
func (t *table) detail(s string) {
	t.rows = append(t.rows, []cell{{s: termsafe.Escape(s), detail: true}})
}

// table is a text table: columns separated by two spaces, numeric
// columns (right) aligned right, no trailing spaces.
type table struct {
	titles []string
	right  []bool
	rows   [][]cell
	indent string
	noHead bool // write no title line
	// spill, when set, is called every spillRows rows written: it may
	// write out what w holds (spiller).
	spill func(*strings.Builder)
}

// spillRows is how often table.write calls its spill.
const spillRows = 1024

// newTable makes a table; a title starting with ">" is right-aligned (the
// ">" is not printed).
func newTable(titles ...string) *table {
	t := &table{}
	for _, s := range titles {
		r := strings.HasPrefix(s, ">")
		t.titles = append(t.titles, strings.TrimPrefix(s, ">"))
		t.right = append(t.right, r)
	}
	return t
}

func (t *table) write(w *strings.Builder, o Options) {
	n := len(t.titles)
	widths := make([]int, n)
	for i, s := range t.titles {
		if !t.noHead {
			widths[i] = width(s)
		}
	}
	for _, row := range t.rows {
		for i, cl := range row {
			if i < n && !cl.detail {
				widths[i] = max(widths[i], width(cl.s))
			}
		}
	}
	line := func(cells []cell) {
		var b strings.Builder
		b.WriteString(t.indent)
		last := len(cells) - 1
		for last > 0 && cells[last].s == "" {
			last--
		}
		for i := 0; i <= last && i < n; i++ {
			cl := cells[i]
			gap := widths[i] - width(cl.s)
			if i > 0 {
				b.WriteString("  ")
			}
			if t.right[i] {
				b.WriteString(pad(gap))
			}
			b.WriteString(paint(o.Color, cl.r, cl.s))
			if !t.right[i] && i < last {
				b.WriteString(pad(gap))
			}
		}
		w.WriteString(strings.TrimRight(b.String(), " "))
		w.WriteByte('\n')
	}
	hdr := make([]cell, n)
	for i, s := range t.titles {
		hdr[i] = cr(roleHeader, s)
	}
	if !t.noHead {
		line(hdr)
	}
	for i, row := range t.rows {
		if t.spill != nil && i%spillRows == spillRows-1 {
			t.spill(w)
		}
		if len(row) == 1 && row[0].detail {
			w.WriteString(t.indent + paint(o.Color, roleFaint, row[0].s) + "\n")
			continue
		}
		line(row)
	}
}

// spiller writes out what a text being built holds, past min bytes,
// all but its last byte (what heading looks at: that something came
// before it): the text is the same, written in pieces. err is the
// first write's error; none is tried after it.
type spiller struct {
	out io.Writer
	min int
	err error
}

func (s *spiller) spill(w *strings.Builder) {
	if s == nil || s.err != nil || w.Len() < max(s.min, 1) {
		return
	}
	text := w.String()
	_, s.err = io.WriteString(s.out, text[:len(text)-1])
	w.Reset()
	w.WriteString(text[len(text)-1:])
}

// heading writes a section title.
func heading(w *strings.Builder, o Options, s string) {
	if w.Len() > 0 {
		w.WriteByte('\n')
	}
	w.WriteString(paint(o.Color, roleHeader, termsafe.Escape(s)))
	w.WriteByte('\n')
}

func flush(out io.Writer, w *strings.Builder) error {
	_, err := io.WriteString(out, w.String())
	return err
}
