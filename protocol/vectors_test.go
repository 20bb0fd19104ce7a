package protocol

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// sharedDir returns ../shared beside the module root (or $KWIRE_SHARED),
// skipping the test when it is missing.
func sharedDir(t testing.TB) string {
	t.Helper()
	d, ok := findShared()
	if !ok {
		t.Skipf("../shared not found at %q (set KWIRE_SHARED): skipping tests that need Kafka's vectors", d)
	}
	return d
}

// findShared locates ../shared beside the module root, or $KWIRE_SHARED.
func findShared() (string, bool) {
	if d := os.Getenv("KWIRE_SHARED"); d != "" {
		_, err := os.Stat(d)
		return d, err == nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
	d := filepath.Join(dir, "..", "shared")
	_, err = os.Stat(d)
	return d, err == nil
}

// vector is one entry of ../shared/kafka-vectors/messages/*/v*.json.
type vector struct {
	Name        string          `json:"name"`
	Message     string          `json:"message"`
	APIKey      *int16          `json:"api_key"`
	Direction   string          `json:"direction"`
	Version     int16           `json:"version"`
	JSONValue   json.RawMessage `json:"json_value"`
	UnknownTags []struct {
		Tag     uint32 `json:"tag"`
		DataHex string `json:"data_hex"`
	} `json:"unknown_tagged_fields"`
	Hex  string `json:"hex"`
	file string
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	vs, err := readVectors(sharedDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) == 0 {
		t.Skip("no vectors under ../shared/kafka-vectors/messages")
	}
	return vs
}

// readVectors reads every vector under shared/kafka-vectors/messages.
func readVectors(shared string) ([]vector, error) {
	dir := filepath.Join(shared, "kafka-vectors", "messages")
	files, err := filepath.Glob(filepath.Join(dir, "*", "v*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []vector
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var doc struct {
			Vectors []vector `json:"vectors"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rel, _ := filepath.Rel(dir, f)
		for i := range doc.Vectors {
			doc.Vectors[i].file = rel
		}
		out = append(out, doc.Vectors...)
	}
	return out, nil
}

// decodeVector decodes a vector's bytes the way its direction says.
func decodeVector(d *Decoder, v *vector, b []byte) *Tree {
	if v.Direction == "framing" || v.APIKey == nil {
		return d.DecodeStruct(v.Message, v.Version, b)
	}
	return d.DecodeBody(*v.APIKey, v.Version, v.Direction == "response", b)
}

func TestVectors(t *testing.T) {
	vectors := loadVectors(t)
	// Secrets stay visible: the vectors hold Kafka's bytes, not a display.
	d := &Decoder{ShowSecrets: true, Records: true}
	pass := 0
	var failures, pruned []string
	for i := range vectors {
		v := &vectors[i]
		msg, extra := checkVector(d, v)
		if msg != "" {
			failures = append(failures, fmt.Sprintf("%s %q: %s", v.file, v.Name, msg))
			continue
		}
		if len(extra) > 0 {
			pruned = append(pruned, fmt.Sprintf("%s %q: %v", v.file, v.Name, extra))
		}
		pass++
	}
	for _, p := range pruned {
		t.Logf("json_value names fields its version does not declare (no wire bytes; not compared): %s", p)
	}
	summary := fmt.Sprintf("%d/%d vectors", pass, len(vectors))
	t.Log(summary)
	if testing.Verbose() {
		fmt.Println(summary)
	}
	for i, f := range failures {
		if i == 60 {
			t.Errorf("... and %d more", len(failures)-60)
			break
		}
		t.Error(f)
	}
}

// checkVector returns "" when v decodes to its json_value and unknown
// tagged fields, consuming every byte, or a description of the mismatch.
// Members of json_value naming fields that the schema does not declare in
// the vector's version carry no bytes on the wire; they are removed before
// comparing and returned in extra (a few of Kafka's hand-written vectors
// list a newer version's fields at their defaults).
func checkVector(d *Decoder, v *vector) (string, []string) {
	var extra []string
	b, err := hex.DecodeString(v.Hex)
	if err != nil {
		return "bad hex: " + err.Error(), extra
	}
	tree := decodeVector(d, v, b)
	if tree.Err != nil {
		return "decode error: " + tree.Err.Error(), extra
	}
	if tree.Root.Off != 0 || tree.Root.Len != len(b) {
		return fmt.Sprintf("root spans [%d,%d), input is %d bytes", tree.Root.Off, tree.Root.End(), len(b)), extra
	}
	if p := spanProblem(tree); p != "" {
		return "spans: " + p, extra
	}
	got, err := json.Marshal(BodyJSON(tree.Root))
	if err != nil {
		return "marshal: " + err.Error(), extra
	}
	gv, err := decodeJSONNumbers(got)
	if err != nil {
		return "re-read: " + err.Error(), extra
	}
	wv, err := decodeJSONNumbers(v.JSONValue)
	if err != nil {
		return "json_value: " + err.Error(), extra
	}
	if m := LookupName(v.Message, v.Version); m != nil {
		extra = pruneUndeclared("", wv, m.Fields, v.Version)
	}
	if diff := jsonDiff("", wv, gv); diff != "" {
		return diff, extra
	}
	var wantTags, gotTags []string
	for _, u := range v.UnknownTags {
		wantTags = append(wantTags, fmt.Sprintf("%d:%s", u.Tag, strings.ToLower(u.DataHex)))
	}
	for _, u := range UnknownTaggedFields(tree.Root) {
		gotTags = append(gotTags, fmt.Sprintf("%d:%x", u.Tag, u.Data))
	}
	if strings.Join(wantTags, ",") != strings.Join(gotTags, ",") {
		return fmt.Sprintf("unknown tagged fields %v, want %v", gotTags, wantTags), extra
	}
	return "", extra
}

// pruneUndeclared deletes from JSON object v the members whose schema
// field (by lower-cased name) is not present in version ver, recursing into
// structs and struct arrays, and returns their paths.
func pruneUndeclared(path string, v any, fields []Field, ver int16) []string {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	for i := range fields {
		f := &fields[i]
		key := lowerFirst(f.Name)
		val, ok := obj[key]
		if !ok {
			continue
		}
		if !f.Versions.Contains(ver) {
			delete(obj, key)
			out = append(out, path+"."+key)
			continue
		}
		switch x := val.(type) {
		case map[string]any:
			out = append(out, pruneUndeclared(path+"."+key, x, f.Fields, ver)...)
		case []any:
			for j, e := range x {
				out = append(out, pruneUndeclared(fmt.Sprintf("%s.%s[%d]", path, key, j), e, f.Fields, ver)...)
			}
		}
	}
	return out
}

func decodeJSONNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// jsonDiff compares two JSON values semantically (object member order
// ignored, numbers compared exactly as decimals) and describes the first
// difference by path.
func jsonDiff(path string, want, got any) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want an object", orRoot(path), short(got))
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return fmt.Sprintf("%s: missing", path+"."+k)
			}
			if d := jsonDiff(path+"."+k, w[k], gv); d != "" {
				return d
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return fmt.Sprintf("%s: unexpected member %s", path+"."+k, short(g[k]))
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Sprintf("%s: got %s, want an array", orRoot(path), short(got))
		}
		if len(g) != len(w) {
			return fmt.Sprintf("%s: %d elements, want %d", orRoot(path), len(g), len(w))
		}
		for i := range w {
			if d := jsonDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); d != "" {
				return d
			}
		}
		return ""
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return fmt.Sprintf("%s: got %s, want %s", orRoot(path), short(got), w)
		}
		wr, ok1 := new(big.Rat).SetString(string(w))
		gr, ok2 := new(big.Rat).SetString(string(g))
		if !ok1 || !ok2 || wr.Cmp(gr) != 0 {
			return fmt.Sprintf("%s: got %s, want %s", orRoot(path), g, w)
		}
		return ""
	default:
		if want != got {
			return fmt.Sprintf("%s: got %s, want %s", orRoot(path), short(got), short(want))
		}
		return ""
	}
}

func orRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}
