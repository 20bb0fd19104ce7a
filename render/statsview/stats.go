package statsview

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/analysis"
	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/render/units"
)

// Duration formats nanoseconds as every kwire output does
// (units.Duration): "0", "0.209ms", "35.2ms", "1.25s".
func Duration[T ~int64](ns T) string { return units.Duration(time.Duration(ns)) }

// size formats a byte count as every kwire output does (units.Size):
// exact below 10 KiB, "1.43MiB" above.
func size(n int64) string { return units.Size(n) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// errorList formats error counts as "NAME×N, ..." or "-", at most
// maxWidth characters (see fitList).
func errorList(es []stats.ErrorCount, maxWidth int) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Name + units.Times + itoa(e.Count)
	}
	return fitList(parts, maxWidth)
}

// Widest list cells, in characters, so that the tables stay within about
// 120 columns; --json keeps every item.
const (
	maxErrorsCell  = 30
	maxAddrsCell   = 24
	maxSoftwareCol = 20
	maxDetail      = 110
)

// fitList joins items with ", ", or returns "-" when there are none. When
// the whole list is wider than maxWidth it keeps the leading items that
// fit (at least one) and ends with ", +N more" for the N left out:
// "Produce v13, Fetch v18, +14 more". Callers say where the full list is.
func fitList(items []string, maxWidth int) string {
	if len(items) == 0 {
		return "-"
	}
	full := strings.Join(items, ", ")
	if width(full) <= maxWidth {
		return full
	}
	var b strings.Builder
	for i, it := range items {
		rest := ", +" + strconv.Itoa(len(items)-i) + " more"
		if i > 0 && width(b.String())+2+width(it)+width(", +"+strconv.Itoa(len(items)-i-1)+" more") > maxWidth {
			b.WriteString(rest)
			return b.String()
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it)
	}
	return b.String()
}

// shorten cuts s to maxWidth characters, the last one "…".
func shorten(s string, maxWidth int) string {
	if width(s) <= maxWidth {
		return s
	}
	r := []rune(s)
	return string(r[:maxWidth-1]) + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// derefOr is *s, or "" when s is nil.
func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func clientIDText(id *string, notCaptured bool) string {
	switch {
	case notCaptured:
		return "<not captured>" // the request headers were cut before their ClientId ended
	case id == nil:
		return "(null)"
	case *id == "":
		return `""`
	}
	return *id
}

// StatsDoc is kwire stats's report: package stats's statistics and, when
// they were computed, package analysis's findings. Its JSON form is kwire
// stats --json (and the "stats" of read --json --stats's last record):
// the Report's keys, then "findings" (null when not computed) and
// "findingsDropped" (the occurrences of findings the analysis memory
// budget left out, analysis.FindingsReport.Dropped).
type StatsDoc struct {
	stats.Report
	Findings        []analysis.Finding `json:"findings" jsonschema:"nullable"`
	FindingsDropped int64              `json:"findingsDropped"`
}

// WriteStats writes the statistics as text tables: a summary line, the
// FINDINGS when computed, then APIS, CLIENTS, ERRORS, PARTITIONS, CONNECTIONS,
// LATENCY and, when the report has them, SLOWEST. Empty sections say
// "(none)".
func WriteStats(out io.Writer, d *StatsDoc, o Options) error {
	r := &d.Report
	var w strings.Builder
	span := "no Kafka traffic"
	if r.First != "" {
		first, _ := time.Parse(time.RFC3339Nano, r.First)
		last, _ := time.Parse(time.RFC3339Nano, r.Last)
		span = fmt.Sprintf("%s to %s (%s)", r.First, r.Last, Duration(int64(last.Sub(first))))
	}
	fmt.Fprintf(&w, "capture: %s\n", span)
	tls, decrypted := 0, 0
	for _, c := range r.Connections {
		switch {
		case c.TLSDecrypted:
			decrypted++
		case c.TLS:
			tls++
		}
	}
	conns := len(r.Connections)
	if f := r.FoldedConnections; f != nil {
		conns += int(f.Connections)
		tls += int(f.TLS)
		decrypted += int(f.TLSDecrypted)
	}
	fmt.Fprintf(&w, "exchanges: %d (of which orphan responses: %d, SASL token exchanges: %d), connections: %d Kafka",
		r.Exchanges, r.Orphans, r.SASLTokens, conns-tls)
	if decrypted > 0 {
		fmt.Fprintf(&w, " (%d decrypted from TLS)", decrypted)
	}
	if tls > 0 {
		fmt.Fprintf(&w, ", %d TLS (not decrypted)", tls)
	}
	fmt.Fprintf(&w, ", %d skipped\n", r.SkippedConn)
	if t := r.TLS; t != nil {
		// Every TLS connection, those skipped as not Kafka too: how many
		// were read and why the others were not.
		fmt.Fprintf(&w, "tls: %s, %d decrypted, %d not decrypted", plural(int(t.Connections), "connection", "connections"), t.Decrypted, t.NotDecrypted)
		for i, rs := range t.Reasons {
			sep := ", "
			if i == 0 {
				sep = " ("
			}
			fmt.Fprintf(&w, "%s%d %s", sep, rs.Count, rs.Reason)
		}
		if len(t.Reasons) > 0 {
			w.WriteString(")")
		}
		w.WriteString("\n")
	}
	if d.Findings != nil {
		writeFindings(&w, &analysis.FindingsReport{Findings: d.Findings, Dropped: d.FindingsDropped}, o, true)
	}

	heading(&w, o, "APIS")
	if len(r.APIs) == 0 {
		w.WriteString("(none)\n")
	} else {
		// MIN, P90 and the mean are left to --json, to keep the table
		// within about 120 columns.
		t := newTable("API", ">VER", ">REQ/RESP", ">UNANS", ">NO-RESP", ">BYTES", ">P50", ">P99", ">MAX", "ERRORS")
		for _, a := range r.APIs {
			l := a.Latency
			lat := func(v stats.Millis) cell {
				if l.Count == 0 {
					return c("-")
				}
				s := Duration(v)
				if !l.Exact && v != l.Min && v != l.Max {
					s = "~" + s
				}
				return cr(roleLatency, s)
			}
			errRole := roleError
			if len(a.Errors) == 0 {
				errRole = rolePlain
			}
			t.add(cr(roleAPI, a.Name), c(strconv.Itoa(int(a.Version))), c(itoa(a.Requests)+"/"+itoa(a.Responses)),
				c(itoa(a.Unanswered)), c(itoa(a.NoResponse)), c(size(a.RequestBytes)+"/"+size(a.ResponseBytes)),
				lat(l.P50), lat(l.P99), lat(l.Max), cr(errRole, errorList(a.Errors, maxErrorsCell)))
		}
		t.write(&w, o)
		w.WriteString("REQ/RESP = requests/responses, BYTES = in requests/in responses; MIN, P90, mean: --json\n")
		if r.CutFrames > 0 {
			fmt.Fprintf(&w, "BYTES are as sent, by the frames' length prefixes: %s cut by a gap or the snap length, %s of them not captured\n",
				plural(int(r.CutFrames), "frame", "frames"), size(r.NotCapturedBytes))
		}
	}

	heading(&w, o, "CLIENTS")
	if len(r.Clients) == 0 {
		w.WriteString("(none)\n")
	} else {
		// The APIs a client used go on a line of their own under its row.
		t := newTable("CLIENT ID", "SOFTWARE", "ADDRESSES", ">CONNS", ">REQS", "ERRORS")
		shown := topRows(r.Clients, o.rows(), func(a, b stats.ClientStats) int {
			return cmp.Or(cmp.Compare(errorTotal(b.Errors), errorTotal(a.Errors)), cmp.Compare(b.Requests, a.Requests))
		})
		for _, cl := range shown {
			apis := make([]string, len(cl.APIs))
			for i, u := range cl.APIs {
				apis[i] = u.Name + " " + versionList(u.Versions)
			}
			errRole := roleError
			if len(cl.Errors) == 0 {
				errRole = rolePlain
			}
			t.add(c(clientIDText(cl.ClientID, cl.ClientIDNotCaptured)), c(shorten(fitList(cl.Software, maxSoftwareCol), maxSoftwareCol)),
				c(fitList(cl.Addresses, maxAddrsCell)), c(strconv.Itoa(cl.Connections)), c(itoa(cl.Requests)),
				cr(errRole, errorList(cl.Errors, maxErrorsCell)))
			t.detail("  APIs: " + fitList(apis, maxDetail))
		}
		t.write(&w, o)
		moreRows(&w, len(shown), len(r.Clients), "clients", "those with errors, then the busiest")
		if n := countFunc(r.Clients, func(cl stats.ClientStats) bool { return cl.AddressesCapped }); n > 0 {
			fmt.Fprintf(&w, "the addresses of %s are not all kept (--max-stats-memory): ADDRESSES lists those kept\n", plural(n, "client", "clients"))
		}
		if n := countFunc(r.Clients, func(cl stats.ClientStats) bool { return cl.DetailCapped }); n > 0 {
			fmt.Fprintf(&w, "the APIs, errors or software of %s are not all kept (--max-stats-memory): REQS counts them all\n", plural(n, "client", "clients"))
		}
		if strings.Contains(t.text(), " more") {
			w.WriteString("lists ending in \"+N more\" leave N out; --json lists them all\n")
		}
	}
	if f := r.FoldedClients; f != nil {
		fmt.Fprintf(&w, "%s of further client IDs have no row (--max-stats-memory: clients and partitions past it are counted, not listed)\n",
			plural(int(f.Requests), "request", "requests"))
	}

	heading(&w, o, "ERRORS")
	if len(r.ErrorPlaces) == 0 && r.ErrorPlacesFolded == 0 {
		w.WriteString("(none)\n")
	} else {
		// Where each error was answered: the partition, else the topic,
		// else "-" (the request, a group, member, transaction, resource).
		t := newTable("ERROR", "API", "TOPIC", ">PART", ">COUNT")
		shown := topRows(r.ErrorPlaces, o.rows(), func(a, b stats.ErrorPlace) int { return cmp.Compare(b.Count, a.Count) })
		for _, ep := range shown {
			topic, part := "-", "-"
			if ep.Topic != nil {
				topic = *ep.Topic
			}
			if ep.Partition != nil {
				part = strconv.Itoa(int(*ep.Partition))
			}
			t.add(cr(roleError, ep.Name), cr(roleAPI, ep.API), c(topic), c(part), c(itoa(ep.Count)))
		}
		t.write(&w, o)
		moreRows(&w, len(shown), len(r.ErrorPlaces), "error places", "the most frequent")
		if r.ErrorPlacesFolded > 0 {
			fmt.Fprintf(&w, "%s at places not kept (--max-stats-memory): the APIS and CLIENTS counts hold them\n", plural(int(r.ErrorPlacesFolded), "error", "errors"))
		}
	}

	heading(&w, o, "PARTITIONS")
	if len(r.Partitions) == 0 {
		w.WriteString("(none)\n")
	} else {
		t := newTable("TOPIC", "PART", ">P.BATCH", ">P.RECS", ">P.WIRE", ">P.UNCOMPR",
			">F.BATCH", ">F.RECS", ">F.WIRE", ">F.UNCOMPR", "CODECS")
		shown := topRows(r.Partitions, o.rows(), func(a, b stats.PartitionStats) int {
			return cmp.Compare(b.Produce.WireBytes+b.Fetch.WireBytes, a.Produce.WireBytes+a.Fetch.WireBytes)
		})
		for _, p := range shown {
			topic := p.Topic
			if topic == "" {
				topic = "id:" + p.TopicID
			}
			t.add(c(topic), c(strconv.Itoa(int(p.Partition))),
				c(itoa(p.Produce.Batches)), c(itoa(p.Produce.Records)), c(size(p.Produce.WireBytes)), c(uncompressed(p.Produce)),
				c(itoa(p.Fetch.Batches)), c(itoa(p.Fetch.Records)), c(size(p.Fetch.WireBytes)), c(uncompressed(p.Fetch)),
				c(orDash(strings.Join(p.Codecs, ","))))
		}
		t.write(&w, o)
		w.WriteString("P. = in Produce requests, F. = in Fetch responses; bytes include batch headers\n")
		moreRows(&w, len(shown), len(r.Partitions), "partitions", "the most bytes")
	}
	if f := r.FoldedPartitions; f != nil {
		if f.Produce.Batches+f.Fetch.Batches == 0 {
			w.WriteString("further partitions (no record batch) have no row (--max-stats-memory)\n")
		} else {
			fmt.Fprintf(&w, "%s in Produce requests and %s in Fetch responses of further partitions have no row (--max-stats-memory)\n",
				plural(int(f.Produce.Batches), "batch", "batches"), plural(int(f.Fetch.Batches), "batch", "batches"))
		}
	}

	heading(&w, o, "CONNECTIONS")
	if len(r.Connections) == 0 && r.FoldedConnections != nil {
		writeFolded(&w, r.FoldedConnections)
	} else if len(r.Connections) == 0 {
		w.WriteString("(none)\n")
	} else {
		files := slices.ContainsFunc(r.Connections, func(cn stats.ConnStats) bool { return cn.File != "" })
		cols := []string{">#", "CLIENT", "BROKER", ">DURATION", ">REQ FR", ">RESP FR", "STATE", "PROBLEMS"}
		if files {
			cols = append([]string{"FILE"}, cols...)
		}
		t := newTable(cols...)
		shown := topRows(r.Connections, o.rows(), stats.RankConns)
		for _, cn := range shown {
			state := "open at end"
			switch {
			case cn.TLS && !cn.TLSDecrypted:
				state = "TLS, not decrypted"
				if cn.TLSReason != "" {
					state += ": " + cn.TLSReason
				}
			case cn.Closed:
				state = "closed"
			}
			if cn.TLSDecrypted {
				state = strings.TrimSpace(cn.TLSVersion+" "+cn.TLSSuite) + ", " + state
			}
			row := []cell{c(strconv.Itoa(cn.Index)), c(cn.Client), c(cn.Broker), cr(roleLatency, Duration(cn.Duration)),
				c(itoa(cn.RequestFrames)), c(itoa(cn.ResponseFrames)), c(state), connProblems(cn)}
			if files {
				row = append([]cell{c(cn.File)}, row...)
			}
			t.add(row...)
		}
		t.write(&w, o)
		if f := r.FoldedConnections; f != nil {
			rows := plural(len(r.Connections), "row", "rows")
			kept := "--all and --json show the " + rows + " kept"
			if len(shown) == len(r.Connections) {
				kept = rows + " kept, all shown"
			}
			fmt.Fprintf(&w, "%d of %d connections shown: those with problems, then the busiest (%s)\n", len(shown), conns, kept)
			writeFolded(&w, f)
		} else {
			moreRows(&w, len(shown), conns, "connections", "those with problems, then the busiest")
		}
	}

	heading(&w, o, "LATENCY")
	if len(r.Latency) == 0 {
		w.WriteString("(no answered requests)\n")
	}
	lats := r.Latency
	if n := o.latencyAPIs(); n >= 0 && len(lats) > n {
		// The APIs whose slowest answer took longest, in their order.
		lats = topRows(lats, n, func(a, b stats.LatencyOverAPI) int {
			return cmp.Compare(distMax(b), distMax(a))
		})
	}
	for _, l := range lats {
		writeLatency(&w, o, l)
	}
	if len(lats) < len(r.Latency) {
		fmt.Fprintf(&w, "%d of %d APIs shown: the slowest (--all shows every one)\n", len(lats), len(r.Latency))
	}

	if len(r.Slowest) > 0 {
		heading(&w, o, fmt.Sprintf("SLOWEST %d, by the time BEYOND the WAIT ASKED (kwire read --frame N shows one)", len(r.Slowest)))
		t := newTable(">BEYOND", ">LATENCY", ">WAIT ASKED", "API", ">VER", ">CORR ID", "CLIENT ID", "CLIENT", "BROKER", ">CONN", ">REQ PKT", ">RESP PKT")
		for _, s := range r.Slowest {
			// The rank: latency beyond a Fetch's MaxWaitMs (a long poll
			// answered at its wait found nothing; it is not slow).
			wait := "-"
			if s.WaitMs > 0 {
				wait = Duration(s.WaitMs)
			}
			t.add(cr(roleLatency, Duration(max(s.Latency-s.WaitMs, 0))), c(Duration(s.Latency)), c(wait), cr(roleAPI, s.Name), c(strconv.Itoa(int(s.Version))),
				c(strconv.Itoa(int(s.CorrelationID))), c(slowClientText(s)), c(s.Client), c(s.Broker),
				c(strconv.Itoa(s.Conn)), c(itoa(s.RequestFrame)), c(itoa(s.ResponseFrame)))
		}
		t.write(&w, o)
	}
	return flush(out, &w)
}

// DefaultRows is how many rows the CLIENTS, PARTITIONS and CONNECTIONS
// tables show unless Options.Rows says otherwise, and DefaultLatencyAPIs
// how many APIs the LATENCY section draws: with the APIS table, the
// report fits two screens (about 110 lines) however many connections,
// clients and partitions the capture has.
const (
	DefaultRows        = 10
	DefaultLatencyAPIs = 3
)

// latencyAPIs is how many APIs the LATENCY section shows (negative: all).
func (o Options) latencyAPIs() int {
	if o.Rows < 0 {
		return -1
	}
	return DefaultLatencyAPIs
}

// distMax is the upper end of an API's latency distribution.
func distMax(l stats.LatencyOverAPI) stats.Millis {
	if len(l.Distribution) == 0 {
		return 0
	}
	return l.Distribution[len(l.Distribution)-1].Hi
}

func (o Options) rows() int {
	if o.Rows == 0 {
		return DefaultRows
	}
	return o.Rows
}

// topRows returns the first n rows by rank (all when n is negative or the
// rows are fewer), in their own order.
func topRows[T any](rows []T, n int, rank func(a, b T) int) []T {
	if n < 0 || len(rows) <= n {
		return rows
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return rank(rows[a], rows[b]) })
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]T, n)
	for i, j := range idx {
		out[i] = rows[j]
	}
	return out
}

// moreRows says how many rows a table left out, which it kept and how to
// see them all.
func moreRows(w *strings.Builder, shown, total int, what, which string) {
	if shown < total {
		fmt.Fprintf(w, "%d of %d %s shown: %s (--all shows every row, --json lists them all)\n", shown, total, what, which)
	}
}

func errorTotal(es []stats.ErrorCount) int64 {
	var n int64
	for _, e := range es {
		n += e.Count
	}
	return n
}

// writeFolded says how many connections have no row of their own and
// what they carried, in two lines:
//
//	+40990 connections folded into these totals, without rows (--max-stats-memory 8MiB): ended, at most 1 problem each
//	  their totals: 123 request frames, 120 response frames, 1.2MiB in requests/800KiB in responses, 3 unanswered
func writeFolded(w *strings.Builder, f *stats.FoldedConns) {
	worst := "none with a problem"
	if f.MaxProblems > 0 {
		worst = "at most " + plural(int(f.MaxProblems), "problem", "problems") + " each"
	}
	fmt.Fprintf(w, "+%d connections folded into these totals, without rows (--max-stats-memory %s): ended, %s\n",
		f.Connections, flagSize(f.MaxMemory), worst)
	totals := []string{plural(int(f.RequestFrames), "request frame", "request frames"), plural(int(f.ResponseFrames), "response frame", "response frames"),
		size(f.RequestBytes) + " in requests/" + size(f.ResponseBytes) + " in responses"}
	if t := connProblems(stats.ConnStats{Gaps: f.Gaps, Retransmissions: int(f.Retransmissions), Conflicts: int(f.Conflicts), Orphans: f.Orphans, Unanswered: f.Unanswered,
		DecodeFailures: f.DecodeFailures, Resyncs: f.Resyncs, BadFrames: f.BadFrames, Truncated: f.Truncated}); t.s != "-" {
		totals = append(totals, t.s)
	}
	fmt.Fprintf(w, "  their totals: %s\n", strings.Join(totals, ", "))
}

func countFunc[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// flagSize writes n bytes as kwire's size flags take them: "8MiB",
// "1536KiB", "1000".
func flagSize(n int64) string {
	for _, u := range []struct {
		name  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return itoa(n>>u.shift) + u.name
		}
	}
	return itoa(n)
}

// connProblems lists a connection's non-zero problem counts ("1 gap,
// 2 unanswered, 2 decode failures"), or "-".
func connProblems(cn stats.ConnStats) cell {
	var ps []string
	add := func(n int64, one, many string) {
		switch {
		case n == 1:
			ps = append(ps, "1 "+one)
		case n > 1:
			ps = append(ps, itoa(n)+" "+many)
		}
	}
	add(cn.Gaps, "gap", "gaps")
	add(int64(cn.Retransmissions), "retransmission", "retransmissions")
	add(int64(cn.Conflicts), "with different data", "with different data")
	add(cn.Orphans, "orphan", "orphans")
	add(cn.Unanswered, "unanswered", "unanswered")
	add(cn.DecodeFailures, "decode failure", "decode failures")
	add(cn.Resyncs, "resync", "resyncs")
	add(cn.BadFrames, "bad frame", "bad frames")
	add(cn.Truncated, "truncated frame", "truncated frames")
	if len(ps) == 0 {
		return c("-")
	}
	return cr(roleError, strings.Join(ps, ", "))
}

func uncompressed(f stats.FlowStats) string {
	s := size(f.UncompressedBytes)
	if f.UnknownSize > 0 {
		s += "+?"
	}
	return s
}

// versionList formats sorted versions as "v3" or "v3,v9".
func versionList(vs []int16) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = "v" + strconv.Itoa(int(v))
	}
	return strings.Join(parts, ",")
}

// barWidth is the longest histogram bar, in cells.
const barWidth = 30

// sparks are the levels of the over-time line, lowest first.
var sparks = []rune("▁▂▃▄▅▆▇█")

// writeLatency writes one API's distribution (one bar per power-of-two
// bin) and its latency over time (one character per time bin, its height
// the bin's maximum relative to the largest; "·" for an empty bin).
func writeLatency(w *strings.Builder, o Options, l stats.LatencyOverAPI) {
	fmt.Fprintf(w, "%s (%d answered)\n", paint(o.Color, roleAPI, l.Name), l.Count)
	var most int64
	for _, b := range l.Distribution {
		most = max(most, b.Count)
	}
	t := newTable(">FROM", ">TO", "", ">COUNT")
	t.noHead = true
	t.indent = "  "
	for i, b := range l.Distribution {
		if b.Count == 0 {
			// Runs of empty bins collapse into one "…" row.
			if l.Distribution[i-1].Count != 0 {
				t.add(c("…"))
			}
			continue
		}
		n := 0
		if most > 0 {
			n = int((b.Count*barWidth + most - 1) / most)
		}
		t.add(c(Duration(b.Lo)), c("< "+Duration(b.Hi)), cr(roleLatency, strings.Repeat("█", n)+pad(barWidth-n)), c(itoa(b.Count)))
	}
	t.write(w, o)
	if len(l.OverTime) == 0 {
		return
	}
	var top stats.Millis
	for _, b := range l.OverTime {
		top = max(top, b.Max)
	}
	var line strings.Builder
	for _, b := range l.OverTime {
		switch {
		case b.Count == 0:
			line.WriteRune('·')
		case top <= 0 || b.Max <= 0:
			line.WriteRune(sparks[0])
		default:
			// In floating point: b.Max × 7 overflows an int64 of
			// nanoseconds past 41 years (a capture's clock gone wrong).
			i := int(float64(b.Max) / float64(top) * float64(len(sparks)-1))
			line.WriteRune(sparks[min(max(i, 0), len(sparks)-1)])
		}
	}
	// The line goes under its legend, so that a long capture keeps the
	// width within about 120 columns.
	fmt.Fprintf(w, "  over time, max per %s from %s (peak %s):\n  %s\n", Duration(l.BinWidth), l.Origin,
		Duration(top), paint(o.Color, roleLatency, line.String()))
}

// WriteStatsJSON writes the report as one indented JSON document: the
// stats.Report fields as their json tags name them (with o.Int64Strings,
// 64-bit integers as decimal strings).
func WriteStatsJSON(w io.Writer, d *StatsDoc, o Options) error {
	return writeJSON(w, d, o)
}

// slowClientText is a slowest exchange's client ID: "-" when null or "",
// "<not captured>" when its request header was cut before it.
func slowClientText(s stats.SlowExchange) string {
	if s.ClientIDNotCaptured {
		return clientIDText(nil, true)
	}
	return orDash(derefOr(s.ClientID))
}
