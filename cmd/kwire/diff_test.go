package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kwire/kwire/dissect/profile"
	"github.com/kwire/kwire/render/statsview"
)

// diffPcap is a capture of pcaps/diff (tools/capgen's diff scenarios).
func diffPcap(t *testing.T, name string) string {
	return goldenPcap(t, filepath.Join("diff", name))
}

// runDiffJSON runs kwire diff --json and returns its changes, each as
// its JSON keys' raw values.
func runDiffJSON(t *testing.T, args ...string) ([]map[string]json.RawMessage, int) {
	t.Helper()
	out, errOut, code := kwireInProcess(t, append([]string{"diff", "--json", "--port", "19390"}, args...)...)
	var d struct {
		Equal   bool
		Changes []map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v: %s %s", err, out, errOut)
	}
	if d.Equal != (len(d.Changes) == 0) {
		t.Errorf("equal %v with %d changes", d.Equal, len(d.Changes))
	}
	return d.Changes, code
}

// changeStrings writes each change as the JSON values of its keys, in
// the schema's order, joined by "|": absent values are null, a thing
// only present on a side is true (docs/json.md).
func changeStrings(cs []map[string]json.RawMessage) []string {
	var out []string
	for _, c := range cs {
		var vs []string
		for _, k := range []string{"kind", "clientId", "broker", "item", "before", "after", "note"} {
			v, ok := c[k]
			if !ok {
				v = json.RawMessage("MISSING")
			}
			vs = append(vs, string(v))
		}
		out = append(out, strings.Join(vs, "|"))
	}
	return out
}

// TestDiff: two runs of the same client scenario are equal; the client
// capped at Kafka 2.8's versions, or without its second topic, differs by
// exactly that.
func TestDiff(t *testing.T) {
	base, again := diffPcap(t, "diff-base.pcap"), diffPcap(t, "diff-again.pcap")
	capped, noAudit := diffPcap(t, "diff-capped.pcap"), diffPcap(t, "diff-no-audit.pcap")
	for _, c := range []struct {
		name  string
		after string
		want  []string
	}{
		{"same", again, nil},
		{"capped", capped, []string{
			`"version"|"capgen-diff-app"|null|"ApiVersions"|"v5"|"v3"|null`,
			`"version"|"capgen-diff-app"|null|"Fetch"|"v18"|"v12"|null`,
			`"version"|"capgen-diff-app"|null|"ListOffsets"|"v10"|"v6"|null`,
			`"version"|"capgen-diff-app"|null|"Metadata"|"v13"|"v11"|null`,
			`"version"|"capgen-diff-app"|null|"Produce"|"v13"|"v9"|null`,
		}},
		{"topic-missing", noAudit, []string{
			`"topic"|"capgen-diff-admin"|null|"capgen-diff-audit"|true|null|null`,
			`"sequence"|"capgen-diff-app"|null|"ApiVersions Produce+"|true|null|null`,
			`"sequence"|"capgen-diff-app"|null|"ApiVersions Produce"|null|true|null`,
			`"topic"|"capgen-diff-app"|null|"capgen-diff-audit"|true|null|null`,
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, code := runDiffJSON(t, base, c.after)
			if g := changeStrings(got); strings.Join(g, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(c.want, "\n"))
			}
			if want := map[bool]int{true: 0, false: 1}[len(c.want) == 0]; code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
		})
	}
	t.Run("ignore", func(t *testing.T) {
		got, code := runDiffJSON(t, "--ignore", "topic,sequence:*Produce*", base, noAudit)
		if len(got) != 0 || code != 0 {
			t.Errorf("exit %d, changes %v", code, changeStrings(got))
		}
		if _, errOut, code := kwireInProcess(t, "diff", "--ignore", "colour", base, again); code != 2 || !strings.Contains(errOut, "unknown kind") {
			t.Errorf("bad --ignore: exit %d %s", code, errOut)
		}
	})
	t.Run("snapshot", func(t *testing.T) {
		// read --normalize --json is a snapshot diff compares with a capture.
		snap, _, code := kwireInProcess(t, "read", "--normalize", "--json", "--port", "19390", base)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		p := filepath.Join(t.TempDir(), "golden.json")
		if err := os.WriteFile(p, []byte(snap), 0o644); err != nil {
			t.Fatal(err)
		}
		if got, code := runDiffJSON(t, p, again); len(got) != 0 || code != 0 {
			t.Errorf("snapshot vs the same scenario: exit %d, %v", code, changeStrings(got))
		}
		if got, _ := runDiffJSON(t, p, capped); len(got) != 5 {
			t.Errorf("snapshot vs capped: %v", changeStrings(got))
		}
		// The text snapshot is the same for both runs.
		a, _, _ := kwireInProcess(t, "read", "--normalize", "--port", "19390", base)
		b, _, _ := kwireInProcess(t, "read", "--normalize", "--port", "19390", again)
		if a != b || !strings.Contains(a, "sequence   ApiVersions Produce+\n") {
			t.Errorf("text snapshots differ or lack the produce sequence:\n%s\n---\n%s", a, b)
		}
		// Given to diff, the text snapshot is named as one, with the JSON
		// to write instead (it said: not a pcap or pcapng file, magic
		// 0x636c6965, "clie").
		txt := filepath.Join(t.TempDir(), "golden.txt")
		if err := os.WriteFile(txt, []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := kwireInProcess(t, "diff", txt, again)
		if want := "kwire: " + txt + ": a kwire read --normalize text snapshot; kwire diff reads the JSON one: write it with kwire read --normalize --json\n"; code != 2 || errOut != want {
			t.Errorf("text snapshot: exit %d, %q, want %q", code, errOut, want)
		}
	})
	t.Run("budget", func(t *testing.T) {
		// Past --max-profile-memory the profile counts the client IDs
		// it does not keep, and a diff against it says a client missing
		// may be one of them.
		snap, _, code := kwireInProcess(t, "read", "--normalize", "--json", "--port", "19390", "--max-profile-memory", "2KiB", base)
		if code != 0 || !strings.Contains(snap, "\n  \"folded\": {\n    \"maxMemoryBytes\": 2048,\n    \"requests\": 14,\n    \"connections\": 6,\n") {
			t.Errorf("exit %d: %s", code, snap)
		}
		full, _, _ := kwireInProcess(t, "read", "--normalize", "--json", "--port", "19390", base)
		if strings.Contains(full, "folded") {
			t.Errorf("default budget folded: %s", full)
		}
		p := filepath.Join(t.TempDir(), "full.json")
		if err := os.WriteFile(p, []byte(full), 0o644); err != nil {
			t.Fatal(err)
		}
		got, code := runDiffJSON(t, "--max-profile-memory", "2KiB", p, again)
		want := `"client"|"capgen-diff-app"|null|"capgen-diff-app"|"kgo/v1.22.3, 6 connections"|null|"the after profile folded client IDs past its budget (--max-profile-memory): this one may be among them"`
		if g := changeStrings(got); code != 1 || strings.Join(g, "\n") != want {
			t.Errorf("exit %d, changes:\n%s\nwant:\n%s", code, strings.Join(g, "\n"), want)
		}
		if _, errOut, code := kwireInProcess(t, "diff", "--max-profile-memory", "0", base, again); code != 2 || !strings.Contains(errOut, "--max-profile-memory must be positive") {
			t.Errorf("--max-profile-memory 0: exit %d %s", code, errOut)
		}
	})
	t.Run("text", func(t *testing.T) {
		out, _, code := kwireInProcess(t, "diff", "--port", "19390", base, capped)
		if code != 1 || !strings.Contains(out, "client capgen-diff-app\n  ~ version     ApiVersions: v5 → v3\n") || !strings.Contains(out, "\n  ~ version     Produce: v13 → v9\n") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
	t.Run("usage", func(t *testing.T) {
		if _, _, code := kwireInProcess(t, "diff", base); code != 2 {
			t.Errorf("one argument: exit %d", code)
		}
		if _, _, code := kwireInProcess(t, "diff", base, "/nonexistent.pcap"); code != 2 {
			t.Errorf("missing file: exit %d", code)
		}
	})
}

// TestDiffLostVersions: versions --against's comparison, folded into diff,
// tells a client that will negotiate down from one whose API is gone.
func TestDiffLostVersions(t *testing.T) {
	mk := func(advertised []profile.APIRange, used ...profile.APIUse) *profile.Profile {
		return &profile.Profile{
			Clients: []profile.Client{{ClientID: "app", APIs: used}},
			Brokers: []profile.Broker{{Address: "b:9092", Advertised: advertised}},
		}
	}
	before := mk([]profile.APIRange{{API: "Produce", Key: 0, Min: 3, Max: 13}, {API: "Fetch", Key: 1, Min: 4, Max: 17}, {API: "ListGroups", Key: 16, Min: 0, Max: 5}},
		profile.APIUse{API: "Produce", Key: 0, Versions: []int16{13}}, profile.APIUse{API: "Fetch", Key: 1, Versions: []int16{4}},
		profile.APIUse{API: "ListGroups", Key: 16, Versions: []int16{2}})
	after := mk([]profile.APIRange{{API: "Produce", Key: 0, Min: 3, Max: 11}, {API: "Fetch", Key: 1, Min: 5, Max: 17}},
		profile.APIUse{API: "Produce", Key: 0, Versions: []int16{13}}, profile.APIUse{API: "Fetch", Key: 1, Versions: []int16{4}},
		profile.APIUse{API: "ListGroups", Key: 16, Versions: []int16{2}})
	// Through diff --json's document.
	b, err := json.Marshal(statsview.NewDiffJSON(nil, nil, profile.Compare(before, after, profile.DefaultOptions)))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Changes []map[string]json.RawMessage }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	got := changeStrings(doc.Changes)
	want := []string{
		`"advertised"|null|null|"Fetch"|"v4-17"|"v5-17"|null`,
		`"advertised"|null|null|"ListGroups"|"v0-5"|null|null`,
		`"advertised"|null|null|"Produce"|"v3-13"|"v3-11"|null`,
		`"lostVersion"|"app"|null|"Produce"|"v13"|"v3-11"|"will negotiate down to v11"`,
		`"lostVersion"|"app"|null|"Fetch"|"v4"|"v5-17"|"version removed: needs v5 or later"`,
		`"lostVersion"|"app"|null|"ListGroups"|"v2"|null|"API removed"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDiffSameCaptureNoLostVersions: a profile compared with itself has
// no change, also when its cluster refuses versions its client used (one
// broker advertising Produce only, the client using Metadata v1): kwire
// diff of such a capture with itself listed "lostVersion Metadata: v1
// (API removed)" and exited 1.
func TestDiffSameCaptureNoLostVersions(t *testing.T) {
	p := &profile.Profile{
		Clients: []profile.Client{{ClientID: "app", APIs: []profile.APIUse{{API: "Metadata", Key: 3, Versions: []int16{1}}}}},
		Brokers: []profile.Broker{{Address: "b:9092", Advertised: []profile.APIRange{{API: "Produce", Key: 0, Min: 0, Max: 9}}}},
	}
	if ch := profile.Compare(p, p, profile.DefaultOptions); len(ch) != 0 {
		t.Errorf("changes %+v, want none", ch)
	}
}
