package statsview

import (
	"encoding/json"
	"fmt"
	"github.com/kwire/kwire/render/termsafe"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/kwire/kwire/dissect/stats"
	"github.com/kwire/kwire/render/units"
)

func rangeText(r *stats.Range) string {
	if r == nil {
		return "-"
	}
	switch {
	case r.Min > r.Max:
		return fmt.Sprintf("%d-%d (none usable)", r.Min, r.Max)
	case r.Min == r.Max:
		return strconv.Itoa(int(r.Min))
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}

// plural returns "1 API range", "62 API ranges".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// noBrokersText says why no ApiVersions response is in the report.
func noBrokersText(r *stats.VersionsReport) string {
	if len(r.Clients) == 0 {
		return "(no ApiVersions response captured: no Kafka exchange was found at all;\n" +
			" the note on standard error says what the capture holds instead)\n"
	}
	if n := r.NotCapturedAdvertisements; n > 0 {
		return fmt.Sprintf("(no ApiVersions response captured whole: the ranges of %s were\n"+
			" not captured (a gap or the snap length cut them). The brokers' ranges are\n"+
			" unknown, so MATRIX says \"unknown\")\n", plural(int(n), "response", "responses"))
	}
	return "(no ApiVersions response captured: the clients did not ask for one.\n" +
		" SASL v0 clients and clients older than Kafka 0.10 skip it, or the capture\n" +
		" began after their connections opened. The brokers' ranges are unknown,\n" +
		" so MATRIX says \"unknown\")\n"
}

func features(fs []stats.Feature) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s %d-%d", f.Name, f.Min, f.Max)
	}
	return strings.Join(parts, ", ")
}

func finalizedFeatures(fs []stats.FinalizedFeature) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprintf("%s %d-%d", f.Name, f.Min, f.Max)
	}
	return strings.Join(parts, ", ")
}

// WriteVersions writes the versions report as text: BROKERS (each
// ApiVersions response seen, with features), ADVERTISED (API × broker,
// the effective ranges; rows where brokers differ are marked "*"),
// CLIENTS, MATRIX (API × client × broker) and FLAGS.
func WriteVersions(out io.Writer, r *stats.VersionsReport, o Options) error {
	var w strings.Builder
	heading(&w, o, "BROKERS")
	if len(r.Brokers) == 0 {
		w.WriteString(noBrokersText(r))
	} else if n := r.NotCapturedAdvertisements; n > 0 {
		fmt.Fprintf(&w, "(and %s whose ranges were not captured: a gap or the snap length cut them)\n",
			plural(int(n), "ApiVersions response", "ApiVersions responses"))
	}
	for _, b := range r.Brokers {
		fmt.Fprintf(&w, "%s\n", paint(o.Color, roleAPI, b.Broker))
		for i, ad := range b.Advertisements {
			mark := " "
			if i == b.Effective {
				mark = "*"
			}
			errText := "no error"
			ranges := plural(len(ad.Ranges), "API range", "API ranges")
			if ad.Error != "NONE" {
				errText = paint(o.Color, roleError, ad.Error)
				if ad.Error == "UNSUPPORTED_VERSION" {
					ranges += " (KIP-511: the broker's own ApiVersions range, for the client to retry lower)"
				}
			}
			fmt.Fprintf(&w, " %s ApiVersions v%d: %s, %s, packet %d, conn %d, seen %d%s\n",
				mark, ad.RequestVersion, errText, ranges, ad.FirstPacket, ad.Conn, ad.Count, units.Times)
			if ad.Error != "NONE" && len(ad.Ranges) > 0 {
				parts := make([]string, len(ad.Ranges))
				for j, rg := range ad.Ranges {
					parts[j] = rg.Name + " " + rangeText(&rg)
				}
				fmt.Fprintf(&w, "     ranges: %s\n", strings.Join(parts, ", "))
			}
			if len(ad.SupportedFeatures) > 0 {
				fmt.Fprintf(&w, "     supported features: %s\n", features(ad.SupportedFeatures))
			}
			if len(ad.FinalizedFeatures) > 0 || ad.FinalizedEpoch >= 0 {
				fmt.Fprintf(&w, "     finalized features (epoch %d): %s\n", ad.FinalizedEpoch, orDash(finalizedFeatures(ad.FinalizedFeatures)))
			}
		}
	}
	writeAdvertised(&w, r, o)

	heading(&w, o, "CLIENTS")
	if len(r.Clients) == 0 {
		w.WriteString("(none)\n")
	} else {
		t := newTable("CLIENT ID", "SOFTWARE", "VERSIONS USED")
		for _, cl := range r.Clients {
			apis := make([]string, len(cl.APIs))
			for i, u := range cl.APIs {
				apis[i] = u.Name + " " + versionList(u.Versions)
			}
			t.add(c(clientIDText(cl.ClientID, cl.ClientIDNotCaptured)), c(orDash(strings.Join(cl.Software, ", "))),
				c(strings.Join(apis, ", ")))
		}
		t.write(&w, o)
	}

	heading(&w, o, "MATRIX")
	if len(r.Matrix) == 0 {
		w.WriteString("(none)\n")
	} else {
		t := newTable("API", "CLIENT ID", "BROKER", ">USED", ">ADVERTISED", "STATUS", "FLAGS")
		mixed := false
		for _, m := range r.Matrix {
			adv := rangeText(m.Advertised)
			if m.Status != "unknown" && !m.Listed {
				adv = "not listed"
			}
			st, status := roleOK, m.Status
			switch m.Status {
			case "outside":
				st = roleError
			case "unknown":
				st = roleFaint
			case "downgraded":
				status = "downgraded (KIP-511)"
			}
			// mixed-cluster concerns the API, not the row: FLAGS says it
			// once per API, the row only carries a "*".
			var flags []string
			for _, f := range m.Flags {
				if f == stats.FlagMixed {
					adv += "*"
					mixed = true
					continue
				}
				flags = append(flags, string(f))
			}
			t.add(cr(roleAPI, m.API), c(clientIDText(m.ClientID, m.ClientIDNotCaptured)), c(m.Broker),
				c(strings.ReplaceAll(versionList(m.Versions), "v", "")), c(adv), cr(st, status),
				cr(roleFlag, strings.Join(flags, ", ")))
		}
		t.write(&w, o)
		if mixed {
			w.WriteString("* = brokers advertise different ranges for the API (mixed-cluster, see FLAGS)\n")
		}
	}

	heading(&w, o, "FLAGS")
	if len(r.Flags) == 0 {
		w.WriteString("(none)\n")
	}
	used := map[int16]bool{}
	for _, m := range r.Matrix {
		used[m.Key] = true
	}
	var unused []string
	for _, f := range r.Flags {
		if f.Kind == stats.FlagMixed && !used[f.Key] {
			// Differences in APIs nobody used are listed in one line.
			unused = append(unused, f.API)
			continue
		}
		var where []string
		if f.ClientIDNotCaptured {
			where = append(where, "client "+clientIDText(nil, true))
		}
		if f.ClientID != "" {
			where = append(where, "client "+f.ClientID)
		}
		if f.Broker != "" {
			where = append(where, "broker "+f.Broker)
		}
		if f.Frame > 0 {
			where = append(where, "packet "+itoa(f.Frame))
		}
		if f.Count > 1 {
			where = append(where, "seen "+itoa(f.Count)+units.Times)
		}
		loc := ""
		if len(where) > 0 {
			loc = " [" + strings.Join(where, ", ") + "]"
		}
		fmt.Fprintf(&w, "%s %s: %s%s\n", paint(o.Color, roleFlag, string(f.Kind)), paint(o.Color, roleAPI, f.API), termsafe.Escape(f.Detail), loc)
	}
	if len(unused) > 0 {
		fmt.Fprintf(&w, "%s: brokers also differ on %s no captured client used (ADVERTISED has them all): %s\n",
			paint(o.Color, roleFlag, string(stats.FlagMixed)), plural(len(unused), "API", "APIs"), fitList(unused, 60))
	}
	writeVersionsFolded(&w, r, o)
	return flush(out, &w)
}

// writeVersionsFolded says what the report left out past its memory
// budget, under a heading of its own:
//
//	NOT KEPT (--max-versions-memory 16MiB: counted, not listed)
//	29000 ApiVersions responses (28990 from brokers not listed above)
//	...
func writeVersionsFolded(w *strings.Builder, r *stats.VersionsReport, o Options) {
	f := r.Folded
	n := countFunc(r.Clients, func(cl stats.ClientVersions) bool { return cl.Capped })
	if f == nil && n == 0 {
		return
	}
	budget := "--max-versions-memory"
	if f != nil {
		budget += " " + flagSize(f.MaxMemory)
	}
	heading(w, o, "NOT KEPT ("+budget+": counted, not listed; what is listed is exact)")
	if f != nil {
		if f.Advertisements > 0 {
			fmt.Fprintf(w, "%s not kept (%d from brokers not listed in BROKERS: a MATRIX row of theirs says unknown)\n",
				plural(int(f.Advertisements), "ApiVersions response", "ApiVersions responses"), f.BrokerResponses)
		}
		if f.ClientRequests > 0 {
			fmt.Fprintf(w, "%s of client IDs not listed in CLIENTS\n", plural(int(f.ClientRequests), "request", "requests"))
		}
		if f.MatrixRequests > 0 {
			fmt.Fprintf(w, "%s in MATRIX cells not kept: not checked against their brokers' ranges\n", plural(int(f.MatrixRequests), "request", "requests"))
		}
		if f.Anomalies > 0 {
			fmt.Fprintf(w, "%s whose anomaly (downgrade, close, rejection) was not recorded in FLAGS\n", plural(int(f.Anomalies), "request", "requests"))
		}
	}
	if n > 0 {
		fmt.Fprintf(w, "%s marked capped: their software or versions are not all listed\n", plural(n, "client", "clients"))
	}
}

// writeAdvertised writes the effective ranges, one column per broker.
func writeAdvertised(w *strings.Builder, r *stats.VersionsReport, o Options) {
	type col struct {
		broker string
		ranges map[int16]stats.Range
	}
	var cols []col
	keys := map[int16]string{}
	for _, b := range r.Brokers {
		if b.Effective < 0 || b.Effective >= len(b.Advertisements) {
			continue
		}
		m := map[int16]stats.Range{}
		for _, rg := range b.Advertisements[b.Effective].Ranges {
			m[rg.Key] = rg
			keys[rg.Key] = rg.Name
		}
		cols = append(cols, col{b.Broker, m})
	}
	if len(cols) == 0 {
		return
	}
	heading(w, o, "ADVERTISED (effective ranges; * = brokers differ)")
	titles := []string{">KEY", "API"}
	for _, cl := range cols {
		titles = append(titles, ">"+cl.broker)
	}
	titles = append(titles, "")
	t := newTable(titles...)
	sorted := make([]int, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, int(k))
	}
	slices.Sort(sorted)
	for _, k := range sorted {
		row := []cell{c(strconv.Itoa(k)), cr(roleAPI, keys[int16(k)])}
		seen := map[string]bool{}
		for _, cl := range cols {
			s := "-"
			if rg, ok := cl.ranges[int16(k)]; ok {
				s = rangeText(&rg)
			}
			seen[s] = true
			row = append(row, c(s))
		}
		if len(seen) > 1 {
			row = append(row, cr(roleFlag, "*"))
			for i := 2; i < len(row)-1; i++ {
				row[i].r = roleFlag
			}
		} else {
			row = append(row, c(""))
		}
		t.add(row...)
	}
	t.write(w, o)
}

// WriteVersionsJSON writes the report as one indented JSON document.
//
// It is written a broker, client, row or flag at a time
// (writeJSONObject), as json.Encoder would write the whole report.
func WriteVersionsJSON(w io.Writer, r *stats.VersionsReport) error {
	ms := []jsonMember{
		arrayMember("brokers", r.Brokers),
		arrayMember("clients", r.Clients),
		arrayMember("matrix", r.Matrix),
		arrayMember("flags", r.Flags),
		{name: "notCapturedAdvertisements", value: r.NotCapturedAdvertisements},
	}
	if r.Folded != nil {
		ms = append(ms, jsonMember{name: "folded", value: r.Folded})
	}
	return writeJSONObject(w, ms)
}

// ComparisonJSON is the `kwire versions --against --json` document.
type ComparisonJSON struct {
	Before     string                `json:"before"`                             // the files, as given
	After      string                `json:"after"`                              // likewise
	Comparison *stats.Comparison     `json:"comparison" jsonschema:"nullable"`   // what changed from Before to After
	BeforeRep  *stats.VersionsReport `json:"beforeReport" jsonschema:"nullable"` // kwire versions's report of Before
	AfterRep   *stats.VersionsReport `json:"afterReport" jsonschema:"nullable"`  // and of After
}

// WriteComparison writes an --against comparison as text: RANGES MOVED
// and CLIENTS LOSING A VERSION.
func WriteComparison(out io.Writer, before, after string, cmp *stats.Comparison, o Options) error {
	var w strings.Builder
	fmt.Fprintf(&w, "before: %s (%s advertising)\nafter:  %s (%s advertising)\n",
		before, plural(cmp.BeforeBrokers, "broker", "brokers"), after, plural(cmp.AfterBrokers, "broker", "brokers"))
	if cmp.AfterBrokers == 0 {
		w.WriteString("nothing to compare: the after capture holds no error-free ApiVersions response, so what its brokers accept is not known\n")
		return flush(out, &w)
	}
	heading(&w, o, "RANGES MOVED (what every broker accepts)")
	if cmp.BeforeBrokers == 0 {
		w.WriteString("(not known: the before capture holds no error-free ApiVersions response; its clients' versions are still checked below)\n")
	} else if len(cmp.Ranges) == 0 {
		w.WriteString("(none)\n")
	} else {
		t := newTable(">KEY", "API", ">BEFORE", ">AFTER", "CHANGE")
		for _, ch := range cmp.Ranges {
			t.add(c(strconv.Itoa(int(ch.Key))), cr(roleAPI, ch.API), c(rangeText(ch.Before)), c(rangeText(ch.After)), cr(roleFlag, ch.Change))
		}
		t.write(&w, o)
	}
	heading(&w, o, "CLIENTS LOSING A VERSION")
	if len(cmp.Lost) == 0 {
		w.WriteString("(none)\n")
	} else {
		t := newTable("CLIENT ID", "SOFTWARE", "API", ">USED", ">AFTER", "IMPACT")
		for _, l := range cmp.Lost {
			after := rangeText(l.After)
			switch {
			case l.After == nil && l.Impact == stats.ImpactAPINotEveryBroker:
				after = "-" // on some brokers only: no range all accept
			case l.After == nil:
				after = "removed"
			}
			t.add(c(clientIDText(l.ClientID, l.ClientIDNotCaptured)), c(orDash(strings.Join(l.Software, ", "))),
				cr(roleAPI, l.API), cr(roleError, strings.ReplaceAll(versionList(l.Versions), "v", "")), c(after),
				c(stats.ImpactText(l.Impact, l.After)))
		}
		t.write(&w, o)
	}
	return flush(out, &w)
}

// WriteComparisonJSON writes an --against comparison as one JSON document.
func WriteComparisonJSON(w io.Writer, doc *ComparisonJSON) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(doc)
}
