package statsview

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"github.com/kwire/kwire/render/termsafe"
	"io"
	"slices"
	"strings"

	"github.com/kwire/kwire/dissect/profile"
)

// WriteProfile writes a capture's normalised profile (kwire read
// --normalize) as text: per client its software, APIs and versions,
// request sequences, errors, topics, configs, codecs, formats and acks;
// per broker its advertised ranges and errors. Latency and connection
// counts, which change from run to run, are left out of the text (the
// JSON has them).
func WriteProfile(out io.Writer, p *profile.Profile, o Options) error {
	var w strings.Builder
	// Items come from the wire (software names, topics, config names and
	// values, error places): written escaped (termsafe.Escape), so that
	// none acts on the terminal or reorders what is shown.
	list := func(name string, items []string) {
		v := "-"
		if len(items) > 0 {
			v = termsafe.Escape(strings.Join(items, ", "))
		}
		fmt.Fprintf(&w, "  %-10s %s\n", name, v)
	}
	// The text goes out a client or broker at a time: a profile of many
	// is not held twice, as itself and as its text.
	spill := func() error {
		if w.Len() < 64<<10 {
			return nil
		}
		err := flush(out, &w)
		w.Reset()
		return err
	}
	for _, c := range p.Clients {
		if err := spill(); err != nil {
			return err
		}
		w.WriteString(paint(o.Color, roleHeader, "client "+quoteID(c.ClientID)) + "\n")
		list("software", c.Software)
		var apis []string
		for _, u := range c.APIs {
			apis = append(apis, u.API+" "+strings.ReplaceAll(versionList(u.Versions), ", ", ","))
		}
		list("apis", apis)
		for _, s := range c.Sequences {
			fmt.Fprintf(&w, "  %-10s %s\n", "sequence", termsafe.Escape(s.Sequence))
		}
		list("errors", c.Errors)
		list("topics", c.Topics)
		list("configs", c.Configs)
		list("codecs", c.Codecs)
		list("formats", c.Formats)
		list("acks", c.Acks)
		if c.Capped {
			fmt.Fprintf(&w, "  %-10s %s\n", "capped", "past --max-profile-memory: these lists and latency leave out some of what it did")
		}
	}
	for _, b := range p.Brokers {
		if err := spill(); err != nil {
			return err
		}
		w.WriteString(paint(o.Color, roleHeader, "broker "+b.Address) + "\n")
		var rs []string
		for _, r := range b.Advertised {
			rs = append(rs, fmt.Sprintf("%s %d-%d", r.API, r.Min, r.Max))
		}
		list("advertised", rs)
		list("errors", b.Errors)
		if b.Capped {
			fmt.Fprintf(&w, "  %-10s %s\n", "capped", "past --max-profile-memory: its errors or latest advertisement are not all kept")
		}
	}
	if f := p.Folded; f != nil {
		fmt.Fprintf(&w, "%s\n", paint(o.Color, roleHeader, "not kept (--max-profile-memory "+flagSize(f.MaxMemory)+": counted, not listed)"))
		fmt.Fprintf(&w, "  %-10s %d requests, %d connections of client IDs not listed\n", "clients", f.Requests, f.Connections)
		if f.BrokerExchanges > 0 {
			fmt.Fprintf(&w, "  %-10s %d exchanges with brokers not listed\n", "brokers", f.BrokerExchanges)
		}
	}
	return flush(out, &w)
}

// quoteID is a client ID for a heading: quoted when empty or spaced.
func quoteID(id string) string {
	if id == "" || strings.ContainsAny(id, " \"") || !termsafe.Safe(id) {
		return fmt.Sprintf("%q", id)
	}
	return id
}

// WriteProfileJSON writes a profile as one indented JSON document: the
// snapshot kwire diff can compare with a capture.
//
// It is written a client or broker at a time (writeJSONObject), as
// json.Encoder would write the whole Profile: its members are clients,
// brokers and folded, in this order.
func WriteProfileJSON(w io.Writer, p *profile.Profile) error {
	ms := []jsonMember{
		arrayMember("clients", p.Clients),
		arrayMember("brokers", p.Brokers),
	}
	if p.Folded != nil {
		ms = append(ms, jsonMember{name: "folded", value: p.Folded})
	}
	return writeJSONObject(w, ms)
}

// jsonMember is a member of a JSON object written by writeJSONObject: an
// array of n elements (elem returns each; null when nil is set, as
// encoding/json writes a nil slice), or one value.
type jsonMember struct {
	name  string
	n     int
	elem  func(i int) any
	null  bool
	value any
}

func arrayMember[T any](name string, s []T) jsonMember {
	return jsonMember{name: name, n: len(s), elem: func(i int) any { return &s[i] }, null: s == nil}
}

// writeJSONObject writes an object of members one array element at a
// time, byte for byte what json.Encoder (two-space indent, no HTML
// escaping) writes of a struct with those members in that order:
// encoding/json builds a document whole, twice when indenting, which for
// a report of many clients or brokers would take several times the
// report's own memory.
func writeJSONObject(w io.Writer, ms []jsonMember) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var err error
	put := func(s string) {
		if err == nil {
			_, err = io.WriteString(w, s)
		}
	}
	// value writes v indented at the depth prefix gives.
	value := func(v any, prefix string) {
		if err != nil {
			return
		}
		buf.Reset()
		enc.SetIndent(prefix, "  ")
		if err = enc.Encode(v); err == nil {
			_, err = w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		}
	}
	if len(ms) == 0 {
		put("{}\n")
		return err
	}
	put("{\n")
	for k, m := range ms {
		put(`  "` + m.name + `": `)
		switch {
		case m.elem == nil:
			value(m.value, "  ")
		case m.null:
			put("null")
		case m.n == 0:
			put("[]")
		default:
			put("[\n")
			for i := range m.n {
				put("    ")
				value(m.elem(i), "    ")
				if i < m.n-1 {
					put(",")
				}
				put("\n")
			}
			put("  ]")
		}
		if k < len(ms)-1 {
			put(",")
		}
		put("\n")
	}
	put("}\n")
	return err
}

// DiffJSON is kwire diff --json's document.
type DiffJSON struct {
	Before  []string     `json:"before"` // the captures (or snapshot) of each side
	After   []string     `json:"after"`
	Equal   bool         `json:"equal"`
	Changes []DiffChange `json:"changes"`
}

// DiffChange is one change of kwire diff --json, in kwire's JSON
// vocabulary (docs/json.md): what is absent is null.
type DiffChange struct {
	Kind   string  `json:"kind"`                           // profile.Kind*: client, api, version, topic, ...
	Client *string `json:"clientId" jsonschema:"nullable"` // the client ID it concerns; null: none
	Broker *string `json:"broker" jsonschema:"nullable"`   // the broker address it concerns; null: none
	Item   string  `json:"item"`                           // what changed: an API, a topic, an error, a sequence
	// Before and After are what it was and is: a string, true when the
	// thing is there and nothing more is said (an API, a topic, a
	// sequence used; a broker seen), null when it is absent on that side.
	Before any     `json:"before" jsonschema:"oneof_type=string;boolean;null"`
	After  any     `json:"after" jsonschema:"oneof_type=string;boolean;null"`
	Note   *string `json:"note" jsonschema:"nullable"` // more to say (a lost version's impact); null: nothing
}

// NewDiffJSON is the document of the changes from the captures (or
// snapshots) before to after.
func NewDiffJSON(before, after []string, changes []profile.Change) *DiffJSON {
	d := &DiffJSON{Before: before, After: after, Equal: len(changes) == 0, Changes: make([]DiffChange, len(changes))}
	side := func(v string) any {
		switch v {
		case "":
			return nil
		case profile.Present:
			return true
		}
		return v
	}
	opt := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	for i, c := range changes {
		d.Changes[i] = DiffChange{Kind: c.Kind, Client: opt(c.Client), Broker: opt(c.Broker), Item: c.Item,
			Before: side(c.Before), After: side(c.After), Note: opt(c.Note)}
	}
	return d
}

// WriteDiffJSON writes kwire diff's JSON document.
func WriteDiffJSON(w io.Writer, d *DiffJSON) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(d)
}

// WriteDiff writes kwire diff's changes as text, grouped by client, then
// brokers, then the cluster: "- " a thing only before, "+ " only after,
// "~ " a thing on both sides that changed (before → after).
func WriteDiff(out io.Writer, before, after string, changes []profile.Change, o Options) error {
	var w strings.Builder
	if len(changes) == 0 {
		fmt.Fprintf(&w, "no differences between %s and %s\n", before, after)
		return flush(out, &w)
	}
	fmt.Fprintf(&w, "%d difference%s from %s to %s\n", len(changes), map[bool]string{true: "", false: "s"}[len(changes) == 1], before, after)
	// profile.Compare lists the versions a client loses (lostVersion)
	// after the cluster's ranges: each client's changes are brought
	// together here, so that a client has one heading.
	changes = slices.Clone(changes)
	slices.SortStableFunc(changes, func(x, y profile.Change) int {
		cx, kx := diffHeading(x)
		cy, ky := diffHeading(y)
		return cmp.Or(cmp.Compare(cx, cy), cmp.Compare(kx, ky))
	})
	group := "\x00"
	for _, c := range changes {
		g := "cluster"
		switch {
		case c.Client != "":
			g = "client " + quoteID(c.Client)
		case c.Broker != "":
			g = "broker " + c.Broker
		}
		if g != group {
			group = g
			w.WriteString(paint(o.Color, roleHeader, g) + "\n")
		}
		var line string
		item, before, after := termsafe.Escape(c.Item), termsafe.Escape(c.Before), termsafe.Escape(c.After) // from the wire
		switch {
		case c.After == "":
			line = paint(o.Color, roleError, "- ") + fmt.Sprintf("%-11s %s", c.Kind, item)
			if c.Before != profile.Present && c.Before != "" {
				line += ": " + before
			}
		case c.Before == "":
			line = paint(o.Color, roleOK, "+ ") + fmt.Sprintf("%-11s %s", c.Kind, item)
			if c.After != profile.Present {
				line += ": " + after
			}
		default:
			line = paint(o.Color, roleFlag, "~ ") + fmt.Sprintf("%-11s %s: %s → %s", c.Kind, item, before, after)
		}
		if c.Note != "" {
			line += " (" + termsafe.Escape(c.Note) + ")"
		}
		w.WriteString("  " + line + "\n")
	}
	return flush(out, &w)
}

// diffHeading says under which heading kwire diff's text lists a
// change, and in what order: its client (0), else its broker (1), else
// the cluster (2).
func diffHeading(c profile.Change) (class int, key string) {
	switch {
	case c.Client != "":
		return 0, c.Client
	case c.Broker != "":
		return 1, c.Broker
	}
	return 2, ""
}

// StatsRecord is the last line of kwire read --json --stats (and live
// --json --stats): the statistics report as one NDJSON record.
type StatsRecord struct {
	Kind  string    `json:"kind" jsonschema:"enum=stats"` // "stats"
	Stats *StatsDoc `json:"stats"`
}
