package statsview

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/dissect/stats"
)

// Duration formats nanoseconds compactly and deterministically: "0",
// "850ns", "12.5µs", "3.25ms", "1.5s"; three significant digits at most.
func Duration(ns int64) string {
	if ns == 0 {
		return "0"
	}
	units := []struct {
		name string
		div  float64
	}{{"ns", 1}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}}
	i := 0
	for i < len(units)-1 && float64(ns) >= units[i+1].div {
		i++
	}
	var s string
	for {
		v := float64(ns) / units[i].div
		prec := 0
		switch {
		case v < 9.995:
			prec = 2
		case v < 99.95:
			prec = 1
		}
		s = strconv.FormatFloat(v, 'f', prec, 64)
		// Rounding up to 1000 moves to the next unit (999999ns is 1ms).
		if i == len(units)-1 || !strings.HasPrefix(s, "1000") {
			break
		}
		i++
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	unit := units[i].name
	return s + unit
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// errorList formats error counts as "NAME×N, ..." or "-".
func errorList(es []stats.ErrorCount) string {
	if len(es) == 0 {
		return "-"
	}
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Name + "×" + itoa(e.Count)
	}
	return strings.Join(parts, ", ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clientIDText(id string, null bool) string {
	switch {
	case null:
		return "(null)"
	case id == "":
		return `""`
	}
	return id
}

// WriteStats writes the statistics as text tables: a summary line, then
// APIS, CLIENTS, PARTITIONS, CONNECTIONS, LATENCY and, when the report
// has them, SLOWEST. Empty sections say "(none)".
func WriteStats(out io.Writer, r *stats.Report, o Options) error {
	var w strings.Builder
	span := "no Kafka traffic"
	if r.First != "" {
		first, _ := time.Parse(time.RFC3339Nano, r.First)
		last, _ := time.Parse(time.RFC3339Nano, r.Last)
		span = fmt.Sprintf("%s to %s (%s)", r.First, r.Last, Duration(int64(last.Sub(first))))
	}
	fmt.Fprintf(&w, "capture: %s\n", span)
	fmt.Fprintf(&w, "exchanges: %d, orphan responses: %d, SASL token exchanges: %d, connections: %d Kafka, %d skipped\n",
		r.Exchanges, r.Orphans, r.SASLTokens, len(r.Connections), r.SkippedConn)

	heading(&w, o, "APIS")
	if len(r.APIs) == 0 {
		w.WriteString("(none)\n")
	} else {
		t := newTable("API", ">VER", ">REQS", ">RESPS", ">UNANS", ">NO-RESP", ">REQ BYTES", ">RESP BYTES",
			">MIN", ">P50", ">P90", ">P99", ">MAX", "ERRORS")
		for _, a := range r.APIs {
			l := a.Latency
			lat := func(v int64) cell {
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
			t.add(cr(roleAPI, a.Name), c(strconv.Itoa(int(a.Version))), c(itoa(a.Requests)), c(itoa(a.Responses)),
				c(itoa(a.Unanswered)), c(itoa(a.NoResponse)), c(itoa(a.RequestBytes)), c(itoa(a.ResponseBytes)),
				lat(l.Min), lat(l.P50), lat(l.P90), lat(l.P99), lat(l.Max), cr(errRole, errorList(a.Errors)))
		}
		t.write(&w, o)
	}

	heading(&w, o, "CLIENTS")
	if len(r.Clients) == 0 {
		w.WriteString("(none)\n")
	} else {
		t := newTable("CLIENT ID", "SOFTWARE", "ADDRESSES", ">CONNS", ">REQS", "ERRORS", "APIS")
		for _, cl := range r.Clients {
			apis := make([]string, len(cl.APIs))
			for i, u := range cl.APIs {
				apis[i] = u.Name + " " + versionList(u.Versions)
			}
			errRole := roleError
			if len(cl.Errors) == 0 {
				errRole = rolePlain
			}
			t.add(c(clientIDText(cl.ClientID, cl.ClientIDNull)), c(orDash(strings.Join(cl.Software, ", "))),
				c(orDash(strings.Join(cl.Addresses, ", "))), c(strconv.Itoa(cl.Connections)), c(itoa(cl.Requests)),
				cr(errRole, errorList(cl.Errors)), c(orDash(strings.Join(apis, ", "))))
		}
		t.write(&w, o)
	}

	heading(&w, o, "PARTITIONS")
	if len(r.Partitions) == 0 {
		w.WriteString("(none)\n")
	} else {
		t := newTable("TOPIC", "PART", ">P.BATCHES", ">P.RECORDS", ">P.WIRE", ">P.UNCOMPR",
			">F.BATCHES", ">F.RECORDS", ">F.WIRE", ">F.UNCOMPR", "CODECS")
		for _, p := range r.Partitions {
			topic := p.Topic
			if topic == "" {
				topic = "id:" + p.TopicID
			}
			t.add(c(topic), c(strconv.Itoa(int(p.Partition))),
				c(itoa(p.Produce.Batches)), c(itoa(p.Produce.Records)), c(itoa(p.Produce.WireBytes)), c(uncompressed(p.Produce)),
				c(itoa(p.Fetch.Batches)), c(itoa(p.Fetch.Records)), c(itoa(p.Fetch.WireBytes)), c(uncompressed(p.Fetch)),
				c(orDash(strings.Join(p.Codecs, ","))))
		}
		t.write(&w, o)
		w.WriteString("P. = in Produce requests, F. = in Fetch responses; bytes include batch headers\n")
	}

	heading(&w, o, "CONNECTIONS")
	if len(r.Connections) == 0 {
		w.WriteString("(none)\n")
	} else {
		t := newTable(">#", "CLIENT", "BROKER", ">DURATION", ">REQ FR", ">RESP FR", ">GAPS", ">RETRANS",
			">ORPHANS", ">UNANS", ">DECODE ERR", ">RESYNC", ">BAD FR", ">TRUNC", "STATE")
		for _, cn := range r.Connections {
			state := "open at end"
			switch {
			case cn.TLS:
				state = "TLS, not decrypted"
			case cn.Closed:
				state = "closed"
			}
			problem := func(n int64) cell {
				if n == 0 {
					return c("0")
				}
				return cr(roleError, itoa(n))
			}
			t.add(c(strconv.Itoa(cn.Index)), c(cn.Client), c(cn.Broker), cr(roleLatency, Duration(cn.Duration)),
				c(itoa(cn.RequestFrames)), c(itoa(cn.ResponseFrames)), problem(cn.Gaps), problem(int64(cn.Retransmissions)),
				problem(cn.Orphans), problem(cn.Unanswered), problem(cn.DecodeFailures), problem(cn.Resyncs),
				problem(cn.BadFrames), problem(cn.Truncated), c(state))
		}
		t.write(&w, o)
	}

	heading(&w, o, "LATENCY")
	if len(r.Latency) == 0 {
		w.WriteString("(no answered requests)\n")
	}
	for _, l := range r.Latency {
		writeLatency(&w, o, l)
	}

	if len(r.Slowest) > 0 {
		heading(&w, o, fmt.Sprintf("SLOWEST %d (kwire read --frame N shows one)", len(r.Slowest)))
		t := newTable(">LATENCY", "API", ">VER", ">CORR ID", "CLIENT ID", "CLIENT", "BROKER", ">CONN", ">REQ FRAME", ">RESP FRAME")
		for _, s := range r.Slowest {
			t.add(cr(roleLatency, Duration(s.Latency)), cr(roleAPI, s.Name), c(strconv.Itoa(int(s.Version))),
				c(strconv.Itoa(int(s.CorrelationID))), c(orDash(s.ClientID)), c(s.Client), c(s.Broker),
				c(strconv.Itoa(s.Conn)), c(itoa(s.RequestFrame)), c(itoa(s.ResponseFrame)))
		}
		t.write(&w, o)
	}
	return flush(out, &w)
}

func uncompressed(f stats.FlowStats) string {
	s := itoa(f.UncompressedBytes)
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
	var top int64
	for _, b := range l.OverTime {
		top = max(top, b.Max)
	}
	var line strings.Builder
	for _, b := range l.OverTime {
		switch {
		case b.Count == 0:
			line.WriteRune('·')
		case top == 0:
			line.WriteRune(sparks[0])
		default:
			line.WriteRune(sparks[int(b.Max*int64(len(sparks)-1)/top)])
		}
	}
	fmt.Fprintf(w, "  over time, max per %s from %s: %s (peak %s)\n", Duration(l.BinWidth), l.Origin,
		paint(o.Color, roleLatency, line.String()), Duration(top))
}

// WriteStatsJSON writes the report as one indented JSON document: the
// stats.Report fields as their json tags name them.
func WriteStatsJSON(w io.Writer, r *stats.Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
