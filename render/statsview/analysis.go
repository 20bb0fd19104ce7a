package statsview

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"github.com/kwire/kwire/render/termsafe"
	"io"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kwire/kwire/analysis"
	"github.com/kwire/kwire/internal/jsonint64"
)

// The reports of package analysis: kwire groups (per group its members,
// generations with every member's assignment, a swim lane of members by
// generation, commits and a timeline), kwire txns (per transactional ID
// its producer instances, epochs and transactions; what consumers were
// told), and the findings (a section of kwire stats, one line each in
// kwire read --findings). As for the stats, nothing is computed here:
// the reports are written as given.

// clockOf formats a capture time as the timelines do (15:04:05.000 UTC),
// "-" when unknown.
func clockOf(t analysis.Time) string {
	if t.IsZero() {
		return "-"
	}
	return time.Time(t).UTC().Format("15:04:05.000")
}

func millis(m *analysis.Millis) string {
	if m == nil {
		return "-"
	}
	return Duration(int64(*m))
}

func deref[T any](p *T, none string, f func(T) string) string {
	if p == nil {
		return none
	}
	return f(*p)
}

func str(s string) string { return s }

// connectWorkerText is a Kafka Connect worker's line under its row: its
// URL and config offset, its leader, and what its latest assignment says
// beside the connectors and tasks the ASSIGNED column shows.
func connectWorkerText(w *analysis.ConnectWorker) string {
	var parts []string
	if w.URL != nil {
		parts = append(parts, fmt.Sprintf("url %s, config offset %s", *w.URL, deref(w.ConfigOffset, "-", func(v int64) string { return strconv.FormatInt(v, 10) })))
	}
	if a := w.Assignment; a != nil {
		parts = append(parts, fmt.Sprintf("leader %s (%s)", a.Leader, a.LeaderURL),
			fmt.Sprintf("assignment v%d at config offset %d", a.Version, a.ConfigOffset))
		if a.Error != "NONE" {
			parts = append(parts, "error "+a.Error)
		}
		if len(a.Revoked) > 0 {
			parts = append(parts, "revoked "+analysis.ConnectorsText(a.Revoked))
		}
		if a.DelayMs > 0 {
			parts = append(parts, "rebalance scheduled in "+Duration(int64(a.DelayMs)*1e6))
		}
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, "; ")
}

func i32(v int32) string { return strconv.Itoa(int(v)) }

// tps writes an assignment compactly: "t[0-3] u[1]", "-" when empty.
func tps(l []analysis.TopicPartition) string {
	if len(l) == 0 {
		return "-"
	}
	var parts []string
	for _, tp := range l {
		parts = append(parts, tp.Topic+"["+analysis.PartitionRanges(tp.Partitions)+"]")
	}
	return strings.Join(parts, " ")
}

// movedText gives a generation's moves, one item per topic and pair of
// members, in the order of their first move: "t[2,3] a→b", not
// "t[2] a→b, t[3] a→b" (a rebalance moves partitions in sets; one item
// each hid all but the first behind "+N more"). name gives a member's
// name from its ID ("-" for none).
func movedText(moved []analysis.Move, name func(*string) string) []string {
	type key struct{ topic, from, to string }
	var order []key
	parts := map[key][]int32{}
	for _, mv := range moved {
		k := key{mv.Topic, name(mv.From), name(mv.To)}
		if _, ok := parts[k]; !ok {
			order = append(order, k)
		}
		parts[k] = append(parts[k], mv.Partition)
	}
	ms := make([]string, 0, len(order))
	for _, k := range order {
		ps := parts[k]
		slices.Sort(ps)
		ps = slices.Compact(ps)
		ms = append(ms, fmt.Sprintf("%s[%s] %s→%s", k.topic, analysis.PartitionRanges(ps), k.from, k.to))
	}
	return ms
}

// lane writes a member's partitions in a swim-lane cell: the partitions
// alone when the group has one topic.
func lane(l []analysis.TopicPartition, oneTopic bool) string {
	if len(l) == 0 {
		return "none"
	}
	if oneTopic && len(l) == 1 {
		return analysis.PartitionRanges(l[0].Partitions)
	}
	return tps(l)
}

// GroupsOptions control kwire groups' text.
type GroupsOptions struct {
	Options
	// Timeline adds each group's timeline, one line per event.
	Timeline bool
}

// WriteGroups writes the groups report as text: per group a summary,
// MEMBERS, GENERATIONS (each member's assignment), SWIM LANES (members
// by generation), COMMITS and, with o.Timeline, TIMELINE.
func WriteGroups(out io.Writer, r *analysis.GroupsReport, o GroupsOptions) error {
	return WriteGroupsSeq(out, r, groupsOf(r), o)
}

// WriteGroupsSeq is WriteGroups for the groups groups yields (r's own
// Groups not looked at), each written out before the next is asked for:
// one group's report and text are held at a time
// (analysis.Analyzer.GroupReports builds them as they are asked for).
// After the groups, the count of those not kept, when some were.
func WriteGroupsSeq(out io.Writer, r *analysis.GroupsReport, groups iter.Seq[*analysis.GroupReport], o GroupsOptions) error {
	var w strings.Builder
	n := 0
	// A group of 100,000 members is written out a table (and 1,024 rows)
	// at a time, not held as text whole.
	sp := &spiller{out: out, min: 1 << 16}
	for g := range groups {
		w.Reset()
		if n > 0 {
			// The blank line heading writes after what came before.
			if _, err := io.WriteString(out, "\n"); err != nil {
				return err
			}
		}
		n++
		writeGroup(&w, g, o, sp)
		if sp.err != nil {
			return sp.err
		}
		if err := flush(out, &w); err != nil {
			return err
		}
	}
	w.Reset()
	if n == 0 {
		w.WriteString("no groups\n")
	}
	if r.GroupsNotKept > 0 {
		fmt.Fprintf(&w, "not kept (--max-analysis-memory): %d groups, evicted whole, the least recently active first\n", r.GroupsNotKept)
	}
	cutLine(&w, r.CutExchanges, "groups")
	return flush(out, &w)
}

// groupsOf yields r's groups.
func groupsOf(r *analysis.GroupsReport) iter.Seq[*analysis.GroupReport] {
	return func(yield func(*analysis.GroupReport) bool) {
		for i := range r.Groups {
			if !yield(&r.Groups[i]) {
				return
			}
		}
	}
}

// writeGroup writes g's text to w; sp, when not nil, writes out what w
// holds as it grows (spiller).
func writeGroup(w *strings.Builder, g *analysis.GroupReport, o GroupsOptions, sp *spiller) {
	head := "GROUP " + g.GroupID + "  " + g.Protocol
	if g.ProtocolType != nil {
		head += ", protocol type " + *g.ProtocolType
	}
	if g.Assignor != nil {
		head += ", assignor " + *g.Assignor
	}
	if g.Coordinator != nil {
		head += ", coordinator " + *g.Coordinator
	}
	if g.State != nil {
		head += ", state " + *g.State + " (described)"
	}
	heading(w, o.Options, head)
	fileLine(w, g.File)
	word := "generation"
	if g.Protocol != "classic" {
		word = "member epoch"
	}
	gens := fmt.Sprintf("%d %s", g.GenerationCount, word)
	if g.GenerationCount != 1 {
		gens += "s"
	}
	if g.StaticRejoins > 0 {
		// An entry of the same number: counted apart, not as one more.
		gens += fmt.Sprintf(" (+%d static rejoin", g.StaticRejoins)
		if g.StaticRejoins != 1 {
			gens += "s"
		}
		gens += ")"
	}
	reb := "rebalances"
	if g.Rebalances == 1 {
		reb = "rebalance"
	}
	// Members dropped (--max-analysis-memory) count: the totals stay
	// whole when the detail does not.
	members := len(g.Members) + int(g.Dropped.Members)
	mem := "members"
	if members == 1 {
		mem = "member"
	}
	took := ""
	if g.Rebalances > 0 {
		took = " (" + Duration(int64(g.RebalanceMs)) + " in all)"
	}
	fmt.Fprintf(w, "%s to %s: %s, %d %s%s, %d %s", clockOf(g.First), clockOf(g.Last),
		gens, g.Rebalances, reb, took, members, mem)
	if len(g.Errors) > 0 {
		var es []string
		for _, e := range g.Errors {
			es = append(es, e.Name+"×"+strconv.FormatInt(e.Count, 10))
		}
		w.WriteString("; errors " + paint(o.Color, roleError, strings.Join(es, ", ")))
	}
	w.WriteByte('\n')
	switch d := g.Dropped; {
	case d.Evicted > 0:
		times := "once"
		if d.Evicted > 1 {
			times = fmt.Sprintf("%d times", d.Evicted)
		}
		fmt.Fprintf(w, "%s: a group of this ID was evicted whole %s before %s (--max-analysis-memory); this report, its counts included, holds what came after\n",
			paint(o.Color, roleFlag, "history partial"), times, clockOf(g.First))
	case d.MaybeEvicted:
		fmt.Fprintf(w, "%s: more groups were evicted whole (--max-analysis-memory) than their IDs could be remembered; this one may have been, before %s\n",
			paint(o.Color, roleFlag, "history may be partial"), clockOf(g.First))
	}
	if d := g.Dropped; d.Events > 0 || d.Generations > 0 || d.Members > 0 || d.Commits > 0 || d.Unfollowed > 0 {
		fmt.Fprintf(w, "not kept (--max-analysis-memory): %d events, %d generations, %d members, %d commits",
			g.Dropped.Events, g.Dropped.Generations, g.Dropped.Members, g.Dropped.Commits)
		if n := g.Dropped.Unfollowed; n > 0 {
			// Their IDs are not kept: a member seen twice counts twice.
			fmt.Fprintf(w, "; %d sightings of members still in the group not followed, not in the member count", n)
		}
		w.WriteByte('\n')
	}

	heading(w, o.Options, "  MEMBERS")
	t := newTable("MEMBER", "MEMBER ID", "INSTANCE", "CLIENT", "JOINED", "END", ">SESSION", ">HEARTBEATS", ">MAX GAP", ">LATE", ">MISSED", "ASSIGNED")
	t.indent = "  "
	for _, m := range g.Members {
		end := "member at end"
		if m.End != nil {
			end = *m.End + " " + clockOf(m.EndTime)
		}
		endRole := rolePlain
		if m.End != nil && (*m.End == "expired" || *m.End == "fenced") {
			endRole = roleError
		}
		late := cell{s: strconv.FormatInt(m.LateHeartbeats, 10)}
		if m.LateHeartbeats > 0 {
			late.r = roleFlag
		}
		missed := cell{s: strconv.FormatInt(m.MissedHeartbeats, 10)}
		if m.MissedHeartbeats > 0 {
			missed.r = roleError
		}
		assigned := tps(m.Assignment)
		if m.Connect != nil && m.Connect.Assignment != nil {
			assigned = analysis.ConnectorsText(m.Connect.Assignment.Connectors)
		}
		t.add(c(m.Name), c(shorten(m.MemberID, 36)), c(deref(m.GroupInstanceID, "-", str)), c(deref(m.Client, "-", str)),
			c(clockOf(m.Joined)), cr(endRole, end), c(deref(m.SessionTimeoutMs, "-", func(v int32) string { return Duration(int64(v) * 1e6) })),
			c(strconv.FormatInt(m.Heartbeats, 10)), cr(roleLatency, millis(m.MaxHeartbeatGapMs)), late, missed, c(assigned))
		if m.LeaveReason != nil {
			t.detail("    leave reason: " + *m.LeaveReason)
		}
		if m.Connect != nil {
			t.detail("    connect worker: " + connectWorkerText(m.Connect))
		}
	}
	t.spill = sp.spill
	t.write(w, o.Options)
	sp.spill(w)

	heading(w, o.Options, "  GENERATIONS")
	label := "GEN"
	if g.Protocol != "classic" {
		label = "EPOCH"
	}
	gt := newTable(">"+label, "START", ">TOOK", "CAUSE", "LEADER", "MEMBER", "ASSIGNED")
	gt.indent = "  "
	names := map[string]string{}
	for _, m := range g.Members {
		names[m.MemberID] = m.Name
	}
	name := func(id *string) string {
		if id == nil {
			return "-"
		}
		if n, ok := names[*id]; ok {
			return n
		}
		return *id
	}
	for _, gn := range g.Generations {
		leader := name(gn.Leader)
		first := true
		for _, gm := range gn.Members {
			assigned := "(not captured)"
			if gm.Assigned != nil {
				assigned = tps(gm.Assigned)
			}
			if gm.Via == "static-rejoin" {
				assigned += " (static rejoin)"
			}
			if first {
				gt.add(c(i32(gn.Generation)), c(clockOf(gn.Start)), cr(roleLatency, millis(gn.DurationMs)), cr(roleFlag, gn.Cause), c(leader), c(gm.Name), c(assigned))
				first = false
			} else {
				gt.add(c(""), c(""), c(""), c(""), c(""), c(gm.Name), c(assigned))
			}
		}
		if first {
			gt.add(c(i32(gn.Generation)), c(clockOf(gn.Start)), cr(roleLatency, millis(gn.DurationMs)), cr(roleFlag, gn.Cause), c(leader), c("-"), c("-"))
		}
		gt.detail("    " + gn.CauseDetail)
		if len(gn.Moved) > 0 {
			gt.detail("    moved: " + fitList(movedText(gn.Moved, name), maxDetail))
		}
	}
	if len(g.Generations) == 0 {
		// A group seen through describes or commits alone: no header
		// over no rows.
		w.WriteString("  (none captured)\n")
	} else {
		gt.spill = sp.spill
		gt.write(w, o.Options)
	}
	sp.spill(w)

	writeLanes(w, g, o, sp)
	sp.spill(w)

	heading(w, o.Options, "  COMMITS")
	if len(g.Commits) == 0 {
		w.WriteString("  (none)\n")
	} else {
		ct := newTable("PARTITION", ">OFFSET", ">"+label, "MEMBER", ">COMMITS", ">STALE", ">ERRORS", ">HIGH WM", ">LAG", ">FETCHED", "TIME")
		ct.indent = "  "
		for _, cm := range g.Commits {
			stale := cell{s: strconv.FormatInt(cm.Stale, 10)}
			if cm.Stale > 0 {
				stale.r = roleFlag
			}
			errs := cell{s: strconv.FormatInt(cm.Errors, 10)}
			if cm.Errors > 0 {
				errs.r = roleError
			}
			memberName := name(cm.MemberID)
			if cm.Fetched {
				memberName = "(OffsetFetch)"
			}
			i64 := func(v int64) string { return strconv.FormatInt(v, 10) }
			ct.add(c(fmt.Sprintf("%s[%d]", cm.Topic, cm.Partition)), c(i64(cm.Offset)), c(deref(cm.Generation, "-", i32)), c(memberName),
				c(i64(cm.Commits)), stale, errs, c(deref(cm.HighWatermark, "-", i64)), c(deref(cm.Lag, "-", i64)),
				c(deref(cm.FetchOffset, "-", i64)), c(clockOf(cm.Time)))
		}
		ct.spill = sp.spill
		ct.write(w, o.Options)
		w.WriteString("  LAG = high watermark - committed offset, from the latest Fetch response; FETCHED = the owner's latest fetch offset\n")
	}

	if o.Timeline {
		heading(w, o.Options, "  TIMELINE")
		tt := newTable("TIME", "MEMBER", "EVENT", ">PACKET", "DETAIL")
		tt.indent, tt.noHead = "  ", true
		for _, ev := range g.Timeline {
			role := rolePlain
			if ev.Error != nil || ev.Kind == "expired" {
				role = roleError
			}
			if ev.Kind == "generation" {
				role = roleHeader
			}
			pkt := "-"
			if ev.Ref.Frame > 0 {
				pkt = "#" + strconv.FormatInt(ev.Ref.Frame, 10)
			}
			tt.add(c(clockOf(ev.Time)), c(deref(ev.Member, "", str)), cr(role, ev.Kind), c(pkt), c(ev.Detail))
		}
		tt.spill = sp.spill
		tt.write(w, o.Options)
	}
}

// writeLanes writes a row per member, a column per generation: the
// partitions it had, "·" before it joined, and how it went.
func writeLanes(w *strings.Builder, g *analysis.GroupReport, o GroupsOptions, sp *spiller) {
	if len(g.Generations) == 0 {
		return
	}
	heading(w, o.Options, "  SWIM LANES (what each member had, generation by generation)")
	topics := map[string]bool{}
	for _, gn := range g.Generations {
		for _, gm := range gn.Members {
			for _, tp := range gm.Assigned {
				topics[tp.Topic] = true
			}
		}
	}
	oneTopic := len(topics) <= 1
	titles := []string{"MEMBER"}
	for i, gn := range g.Generations {
		t := i32(gn.Generation)
		if i > 0 && g.Generations[i-1].Generation == gn.Generation {
			t += "'" // the same number again: a static rejoin
		}
		titles = append(titles, t)
	}
	// A generation's members by member ID (the last entry of one, should
	// it be listed twice), so that a row is found once per generation, not
	// by a scan of all of its members: a JoinGroup may list 100,000.
	byID := make([]map[string]int, len(g.Generations))
	for i, gn := range g.Generations {
		byID[i] = make(map[string]int, len(gn.Members))
		for j, gm := range gn.Members {
			byID[i][gm.MemberID] = j
		}
	}
	t := newTable(titles...)
	t.indent = "  "
	t.spill = sp.spill
	for _, m := range g.Members {
		row := []cell{c(m.Name)}
		in, gone := false, false
		for i, gn := range g.Generations {
			var cellText string
			j, found := byID[i][m.MemberID]
			if found {
				in = true
				cellText = "?"
				if gm := gn.Members[j]; gm.Assigned != nil {
					cellText = lane(gm.Assigned, oneTopic)
				}
			}
			switch {
			case found:
				row = append(row, c(cellText))
			case in && !gone:
				gone = true
				end := "gone"
				if m.End != nil {
					end = *m.End
				}
				row = append(row, cr(roleFlag, "✗ "+end))
			default:
				row = append(row, c("·"))
			}
		}
		t.add(row...)
	}
	t.write(w, o.Options)
}

// WriteGroupsJSON writes the groups report as one indented JSON document
// (with o.Int64Strings, its 64-bit integers as decimal strings), one
// group at a time: the document is what encoding/json writes for r, but
// only one group's encoding is held at once. (Encoded whole, a report
// that --max-analysis-memory bounds took about six times its budget, in
// the encoder's buffer and its indented copy.)
func WriteGroupsJSON(w io.Writer, r *analysis.GroupsReport, o Options) error {
	if len(r.Groups) == 0 {
		return writeJSON(w, r, o)
	}
	return WriteGroupsJSONSeq(w, r, groupsOf(r), o)
}

// WriteGroupsJSONSeq is WriteGroupsJSON for the groups groups yields
// (r's own Groups not looked at), each encoded and written before the
// next is asked for; none: an empty list.
func WriteGroupsJSONSeq(w io.Writer, r *analysis.GroupsReport, groups iter.Seq[*analysis.GroupReport], o Options) error {
	// The document around the groups, from the encoder: an empty list
	// stands where they go.
	rest := *r
	rest.Groups = []analysis.GroupReport{}
	var frame bytes.Buffer
	if err := writeJSON(&frame, &rest, o); err != nil {
		return err
	}
	const slot = `"groups": []`
	head, tail, ok := bytes.Cut(frame.Bytes(), []byte(slot))
	if !ok {
		return fmt.Errorf("groups report: no %s in the encoder's document", slot)
	}
	ew := &errWriter{w: w}
	ew.write(head)
	n := 0
	for g := range groups {
		if n == 0 {
			ew.write([]byte(`"groups": [` + "\n"))
		} else {
			ew.write([]byte(",\n"))
		}
		n++
		ew.write([]byte("    "))
		if err := writeGroupJSON(ew, g, o); err != nil {
			return err
		}
		if ew.err != nil {
			return ew.err
		}
	}
	if n == 0 {
		ew.write([]byte(slot))
	} else {
		ew.write([]byte("\n  ]"))
	}
	ew.write(tail)
	return ew.err
}

// writeGroupJSON writes g as encoding/json does at the depth of an
// element of the document's groups (without its last newline), its
// members, generations, commits and timeline an element at a time: one
// group of 100,000 members is not held encoded whole (the group's other
// fields come from the encoder, the lists emptied).
func writeGroupJSON(ew *errWriter, g *analysis.GroupReport, o Options) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	encode := func(v any, prefix string) ([]byte, error) {
		buf.Reset()
		enc.SetIndent(prefix, "  ")
		if o.Int64Strings {
			v = jsonint64.Strings(v)
		}
		if err := enc.Encode(v); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
	frameOf := *g
	frameOf.Members, frameOf.Generations, frameOf.Commits, frameOf.Timeline = []analysis.MemberReport{}, []analysis.GenerationReport{}, []analysis.CommitReport{}, []analysis.Event{}
	b, err := encode(&frameOf, "    ")
	if err != nil {
		return err
	}
	frame := bytes.Clone(b)
	// Each list in the order of the fields, each element at the depth of
	// a list of a group's.
	const in, at = "        ", "      " // an element's indent, the list's closing bracket's
	lists := []struct {
		slot string
		nil  bool
		n    int
		elem func(i int) any
	}{
		{`"members": []`, g.Members == nil, len(g.Members), func(i int) any { return &g.Members[i] }},
		{`"generations": []`, g.Generations == nil, len(g.Generations), func(i int) any { return &g.Generations[i] }},
		{`"commits": []`, g.Commits == nil, len(g.Commits), func(i int) any { return &g.Commits[i] }},
		{`"timeline": []`, g.Timeline == nil, len(g.Timeline), func(i int) any { return &g.Timeline[i] }},
	}
	for _, l := range lists {
		before, after, ok := bytes.Cut(frame, []byte(l.slot))
		if !ok {
			return fmt.Errorf("groups report: no %s in the encoder's group", l.slot)
		}
		ew.write(before)
		key, _, _ := strings.Cut(l.slot, " ")
		switch {
		case l.nil:
			ew.write([]byte(key + " null"))
		case l.n == 0:
			ew.write([]byte(l.slot))
		default:
			ew.write([]byte(key + " [\n"))
			for i := range l.n {
				e, err := encode(l.elem(i), in)
				if err != nil {
					return err
				}
				if i > 0 {
					ew.write([]byte(",\n"))
				}
				ew.write([]byte(in))
				ew.write(e)
			}
			ew.write([]byte("\n" + at + "]"))
		}
		frame = after
	}
	ew.write(frame)
	return nil
}

// errWriter writes until a write fails, then keeps the error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) write(b []byte) {
	if e.err == nil {
		_, e.err = e.w.Write(b)
	}
}

// WriteTxnsJSON writes the transactions report as one indented JSON
// document (with o.Int64Strings, its 64-bit integers — producer IDs,
// offsets — as decimal strings).
func WriteTxnsJSON(w io.Writer, r *analysis.TxnsReport, o Options) error { return writeJSON(w, r, o) }

func writeJSON(w io.Writer, v any, o Options) error {
	if o.Int64Strings {
		v = jsonint64.Strings(v)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// packetText is a packet number, "-" for none (an instance whose
// InitProducerId the capture does not have).
func packetText(n int64) string {
	if n <= 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// fileLine says, under a group's or producer's heading, which capture
// file its report is of when several were read each as a capture of its
// own (file: its name; "" writes nothing): the packet numbers that
// follow are that file's.
func fileLine(w *strings.Builder, file string) {
	if file != "" {
		fmt.Fprintf(w, "in %s (a capture of its own: packet numbers are this file's)\n", file)
	}
}

// WriteTxns writes the transactions report as text: per transactional ID
// (or idempotent producer) its instances and epochs, its transactions,
// its sequence issues; then CONSUMERS: what each was told about
// transactions.
func WriteTxns(out io.Writer, r *analysis.TxnsReport, o Options) error {
	var w strings.Builder
	if len(r.Producers) == 0 {
		w.WriteString("no transactional or idempotent producers\n")
	}
	for i := range r.Producers {
		writeProducer(&w, &r.Producers[i], o)
	}
	if len(r.Consumers) > 0 {
		heading(&w, o, "CONSUMERS (what their Fetch responses said of transactions)")
		cols := []string{"CLIENT ID", "ISOLATION", ">FETCHES", ">TXN BATCHES", ">COMMITS", ">ABORTS", "ABORTED TRANSACTIONS LISTED"}
		files := slices.ContainsFunc(r.Consumers, func(cn analysis.ConsumerReport) bool { return cn.File != "" })
		if files {
			cols = append([]string{"FILE"}, cols...)
		}
		t := newTable(cols...)
		for _, cn := range r.Consumers {
			var ab []string
			for _, a := range cn.AbortedTransactions {
				who := strconv.FormatInt(a.ProducerID, 10)
				if a.TransactionalID != nil {
					who = *a.TransactionalID
				}
				ab = append(ab, fmt.Sprintf("%s from %s[%d@%d]", who, a.Topic, a.Partition, a.FirstOffset))
			}
			row := []cell{c(derefOr(cn.ClientID)), c(orDash(strings.Join(cn.IsolationLevels, ","))), c(strconv.FormatInt(cn.Fetches, 10)),
				c(strconv.FormatInt(cn.TransactionalBatches, 10)), c(strconv.FormatInt(cn.Commits, 10)), c(strconv.FormatInt(cn.Aborts, 10)),
				c(fitList(ab, maxDetail))}
			if files {
				row = append([]cell{c(cn.File)}, row...)
			}
			t.add(row...)
		}
		t.write(&w, o)
		w.WriteString("COMMITS, ABORTS = transaction markers (control batches) fetched\n")
	}
	if r.Dropped.Any() {
		fmt.Fprintf(&w, "not kept (--max-analysis-memory): %d producers, %d transactions, %d sequence issues\n",
			r.Dropped.Producers, r.Dropped.Transactions, r.Dropped.SequenceIssues)
	}
	cutLine(&w, r.CutExchanges, "producers and transactions")
	return flush(out, &w)
}

// cutLine says that n exchanges were cut (a gap, the snap length) and not
// decoded: what they said of what (groups, ...) is not in the report.
func cutLine(w *strings.Builder, n int64, what string) {
	if n > 0 {
		fmt.Fprintf(w, "not decoded: %s whose frames were cut (by a gap, the snap length or the end of the capture); what they said of %s is not here\n",
			plural(int(n), "exchange", "exchanges"), what)
	}
}

func writeProducer(w *strings.Builder, p *analysis.ProducerReport, o Options) {
	head := "IDEMPOTENT PRODUCER"
	if p.TransactionalID != nil {
		head = "TRANSACTIONAL ID " + *p.TransactionalID
	}
	var ids []string
	for _, id := range p.ProducerIDs {
		ids = append(ids, strconv.FormatInt(id, 10))
	}
	head += "  producer ID " + orDash(strings.Join(ids, ", "))
	heading(w, o, head)
	fileLine(w, p.File)
	fmt.Fprintf(w, "%s to %s: %s, %s", clockOf(p.First), clockOf(p.Last), count(int64(len(p.Instances)), "instance"), count(p.TransactionCount, "transaction"))
	if len(p.Errors) > 0 {
		var es []string
		for _, e := range p.Errors {
			es = append(es, e.Name+"×"+strconv.FormatInt(e.Count, 10))
		}
		w.WriteString("; errors " + paint(o.Color, roleError, strings.Join(es, ", ")))
	}
	w.WriteByte('\n')
	it := newTable("INIT", "CLIENT ID", "CLIENT", ">PRODUCER ID", "EPOCHS", "FENCED BY", ">PACKET")
	it.indent = "  "
	bumped := false // an epoch shown with the * the legend explains
	for _, in := range p.Instances {
		var ep []string
		pid := in.ProducerID
		for _, e := range in.Epochs {
			s := strconv.Itoa(int(e.Epoch))
			if e.ProducerID != pid && e.ProducerID >= 0 {
				// A new producer ID (EndTxn v5 past the last epoch,
				// KIP-890): its epochs follow it.
				pid = e.ProducerID
				s = "pid " + strconv.FormatInt(pid, 10) + ": " + s
			}
			if e.By == "EndTxn" {
				s += "*"
				bumped = bumped || in.Error == nil
			}
			ep = append(ep, s)
		}
		fenced := cell{s: "-"}
		if in.FencedBy != nil {
			fenced = cr(roleError, fmt.Sprintf("%s (epoch %d) %s", derefOr(in.FencedBy.ClientID), in.FencedBy.ProducerEpoch, clockOf(in.FencedBy.Time)))
		}
		epochs := orDash(strings.Join(ep, " "))
		if in.Error != nil {
			epochs = *in.Error
		}
		if in.RequestedProducerID >= 0 {
			epochs += fmt.Sprintf(" (asked to bump %d/%d, KIP-360)", in.RequestedProducerID, in.RequestedEpoch)
		}
		it.add(c(clockOf(in.Time)), c(deref(in.ClientID, "-", str)), c(deref(in.Client, "-", str)), c(strconv.FormatInt(in.ProducerID, 10)),
			c(epochs), fenced, c(packetText(in.Ref.Frame)))
	}
	if len(p.Instances) == 0 {
		// A header over no rows read as a table cut short.
		w.WriteString("  INIT  (no InitProducerId captured: the producer got its ID before the capture, or on a connection not captured)\n")
	} else {
		it.write(w, o)
	}
	if len(p.Records) > 0 {
		w.WriteString("  written outside transactions: " + fitList(recordsText(p.Records), maxDetail) + "\n")
	}
	if bumped {
		w.WriteString("  EPOCHS: * = bumped by EndTxn (KIP-890)\n")
	}
	if len(p.Transactions) > 0 {
		tt := newTable(">#", "START", ">TOOK", "CLIENT ID", ">EPOCH", "OUTCOME", "RECORDS", "ADDED", "GROUPS", "ERRORS")
		tt.indent = "  "
		for i, x := range p.Transactions {
			recs := recordsText(x.Records)
			role := roleOK
			switch x.Outcome {
			case "abort", "open", "unanswered":
				role = roleFlag
			case "fenced", "failed":
				role = roleError
			}
			var errs []string
			if x.Error != nil {
				errs = append(errs, "EndTxn "+*x.Error)
			}
			if x.AddError != nil {
				errs = append(errs, x.AddError.API+" "+x.AddError.Error)
			}
			if x.ProduceError != nil {
				errs = append(errs, "Produce "+*x.ProduceError)
			}
			outcome := x.Outcome
			if x.EndTxn != nil && x.Outcome != "commit" && x.Outcome != "abort" {
				outcome += " (" + *x.EndTxn + ")"
			}
			tt.add(c(strconv.Itoa(i+1)), c(clockOf(x.Start)), cr(roleLatency, millis(x.DurationMs)), c(deref(x.ClientID, "-", str)),
				c(strconv.Itoa(int(x.ProducerEpoch))), cr(role, outcome), c(orDash(strings.Join(recs, ", "))), c(tps(x.Added)),
				c(orDash(strings.Join(x.Groups, ","))), cr(roleError, orDash(strings.Join(errs, ", "))))
		}
		tt.write(w, o)
	}
	if len(p.Sequences) > 0 {
		st := newTable("TIME", "KIND", "PARTITION", ">PRODUCER ID", ">EPOCH", "DETAIL", ">PACKET")
		st.indent = "  "
		for _, s := range p.Sequences {
			st.add(c(clockOf(s.Time)), cr(roleFlag, s.Kind), c(fmt.Sprintf("%s[%d]", s.Topic, s.Partition)), c(strconv.FormatInt(s.ProducerID, 10)),
				c(strconv.Itoa(int(s.ProducerEpoch))), c(s.Detail), c(strconv.FormatInt(s.Ref.Frame, 10)))
		}
		st.write(w, o)
	}
	if len(p.Described) > 0 {
		// An admin's DescribeProducers (KIP-664): the broker's view.
		dt := newTable("TIME", "DESCRIBED BY", "PARTITION", ">PRODUCER ID", ">EPOCH", ">LAST SEQ", "OPEN TXN FROM", ">PACKET")
		dt.indent = "  "
		for _, d := range p.Described {
			open := "-"
			if d.CurrentTxnStartOffset >= 0 {
				open = "offset " + strconv.FormatInt(d.CurrentTxnStartOffset, 10)
			}
			dt.add(c(clockOf(d.Time)), c(orDash(derefOr(d.ClientID))), c(fmt.Sprintf("%s[%d]", d.Topic, d.Partition)),
				c(strconv.FormatInt(d.ProducerID, 10)), c(strconv.Itoa(int(d.ProducerEpoch))), c(strconv.Itoa(int(d.LastSequence))),
				c(open), c(strconv.FormatInt(d.Ref.Frame, 10)))
		}
		dt.write(w, o)
	}
}

// recordsText writes records per partition: "t-0:4 (seq 0-3)".
func recordsText(rs []analysis.TxnRecordsReport) []string {
	var out []string
	for _, r := range rs {
		s := fmt.Sprintf("%s[%d+%d]", termsafe.Escape(r.Topic), r.Partition, r.Records) // as a line writes records
		if r.FirstSeq != nil {
			s += fmt.Sprintf(" (seq %d-%d)", *r.FirstSeq, *r.LastSequence)
		}
		out = append(out, s)
	}
	return out
}

// FindingLine is one finding as kwire read --findings prints it:
// time, severity, rule, subject, count, detail and the packets.
func FindingLine(f *analysis.Finding, o Options) string {
	return findingHead(f, o) + ": " + termsafe.Escape(f.Detail) + " " + findingPackets(f, -1)
}

// findingHead is a finding's time, severity, rule, subject and count.
func findingHead(f *analysis.Finding, o Options) string {
	role := roleFaint
	switch f.Severity {
	case analysis.SevError:
		role = roleError
	case analysis.SevWarning:
		role = roleFlag
	}
	var b strings.Builder
	b.WriteString(clockOf(f.Time))
	b.WriteByte(' ')
	b.WriteString(paint(o.Color, role, f.Severity))
	b.WriteByte(' ')
	b.WriteString(paint(o.Color, roleHeader, f.Rule))
	b.WriteByte(' ')
	b.WriteString(termsafe.Escape(f.Subject))
	if f.Count > 1 {
		fmt.Fprintf(&b, " ×%d", f.Count)
	}
	return b.String()
}

// findingPackets is a finding's evidence: "[packets 12,14 +3]", at most
// max packet numbers (all that the finding keeps when max is negative).
func findingPackets(f *analysis.Finding, max int) string {
	var b strings.Builder
	b.WriteString("[")
	if f.File != "" {
		b.WriteString(f.File + " ")
	}
	b.WriteString("packets ")
	pk, more := f.Packets, f.MorePackets
	if max >= 0 && len(pk) > max {
		more += int64(len(pk) - max)
		pk = pk[:max]
	}
	for i, p := range pk {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(p, 10))
	}
	if more > 0 {
		fmt.Fprintf(&b, " +%d", more)
	}
	b.WriteString("]")
	return b.String()
}

// WriteFindings writes the findings, one line each (FindingLine), under
// a FINDINGS heading; "(none)" when there are none.
func WriteFindings(out io.Writer, r *analysis.FindingsReport, o Options) error {
	var w strings.Builder
	writeFindings(&w, r, o, false)
	return flush(out, &w)
}

// writeFindings writes the FINDINGS section; with wrap (kwire stats) each
// finding's detail and packets go on indented lines of at most 120
// columns under its head.
func writeFindings(w *strings.Builder, r *analysis.FindingsReport, o Options, wrap bool) {
	heading(w, o, "FINDINGS (docs/findings.md; kwire read --frame N shows a packet's exchange)")
	if len(r.Findings) == 0 {
		w.WriteString("(none)\n")
	}
	shown := r.Findings
	if wrap {
		// kwire stats fits two screens: the errors first, then the
		// warnings and the findings with the most occurrences, kept in
		// time order.
		shown = topRows(r.Findings, o.rows(), func(a, b analysis.Finding) int {
			if c := severityRank(a.Severity) - severityRank(b.Severity); c != 0 {
				return c
			}
			return cmp.Compare(b.Count, a.Count)
		})
	}
	for i := range shown {
		f := &shown[i]
		if !wrap {
			w.WriteString(FindingLine(f, o))
			w.WriteByte('\n')
			continue
		}
		w.WriteString(findingHead(f, o))
		w.WriteByte('\n')
		for _, l := range wrapWords(termsafe.Escape(f.Detail)+" "+findingPackets(f, statsPackets), 116) {
			w.WriteString("    " + l + "\n")
		}
	}
	moreRows(w, len(shown), len(r.Findings), "findings", "by severity (errors, warnings, then information), then the most frequent")
	if r.Dropped > 0 {
		fmt.Fprintf(w, "%d occurrences of findings not kept (--max-analysis-memory)\n", r.Dropped)
	}
}

// statsPackets is how many evidence packets a finding lists in kwire
// stats's text (the first ones found; --json and read --findings list
// all that the finding keeps).
const statsPackets = 5

// severityRank orders severities for ranking: errors first.
func severityRank(s string) int {
	switch s {
	case analysis.SevError:
		return 0
	case analysis.SevWarning:
		return 1
	}
	return 2
}

// FindingDoc is a finding as one line of kwire read --json: the finding
// with "kind": "finding".
type FindingDoc struct {
	Kind string `json:"kind"`
	analysis.Finding
}

// WriteFindingsNDJSON writes each finding as one JSON line (FindingDoc;
// with o.Int64Strings its 64-bit integers as decimal strings).
func WriteFindingsNDJSON(w io.Writer, r *analysis.FindingsReport, o Options) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range r.Findings {
		var v any = FindingDoc{Kind: "finding", Finding: r.Findings[i]}
		if o.Int64Strings {
			v = jsonint64.Strings(v)
		}
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

// wrapWords cuts s into lines of at most n characters at spaces (a
// longer word stays whole).
func wrapWords(s string, n int) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case width(line)+1+width(word) <= n:
			line += " " + word
		default:
			out = append(out, line)
			line = word
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// count writes "1 instance", "3 instances".
func count(n int64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.FormatInt(n, 10) + " " + what + "s"
}
