package protocol

import (
	"encoding/hex"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// This is a differential test against franz-go's kmsg, an independent
// implementation of Kafka's messages: for every request and response type
// kmsg has and every version it supports, a message filled with distinct
// non-default values is encoded by kmsg and decoded by kwire. Every value
// kwire decodes must be one kmsg wrote, at the same array positions and
// under a field of a matching name; the decode must consume every byte.

// unknownTestTag is a tag number no Kafka message uses, set on the top
// level of flexible messages through kmsg's UnknownTags.
const unknownTestTag = 4095

type kmsgLeaf struct {
	path   string // "Topics[0].Partitions[1].Partition"
	idx    string // the array indices along the path: "0,1"
	name   string // the last struct field name
	parent string // the path of the struct holding the field
	ord    int    // the field's index in that struct
}

// filler fills kmsg structs with distinct values by reflection.
type filler struct {
	n       int64 // next integer value, above the int8 range
	n8      int64
	slices  int
	strings int
}

func (f *filler) fill(v reflect.Value, top bool) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() || (top && sf.Name == "Version") || sf.Type == reflect.TypeOf(kmsg.Tags{}) {
				continue
			}
			f.fill(v.Field(i), false)
		}
	case reflect.Int8:
		f.n8 = f.n8%100 + 1
		v.SetInt(f.n8)
	case reflect.Int16, reflect.Int32, reflect.Int64:
		f.n++
		v.SetInt(1000 + f.n)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f.n++
		v.SetUint(uint64(1000 + f.n))
	case reflect.Float64:
		f.n++
		v.SetFloat(float64(1000+f.n) + 0.25)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		f.strings++
		v.SetString("s" + strconv.Itoa(f.strings))
	case reflect.Pointer:
		f.strings++
		if f.strings%5 == 0 {
			return // leave some nullable values null
		}
		p := reflect.New(v.Type().Elem())
		f.fill(p.Elem(), false)
		v.Set(p)
	case reflect.Array: // uuid
		f.n++
		for i := 0; i < v.Len(); i++ {
			v.Index(i).SetUint(uint64(byte(f.n + int64(i)*7)))
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			f.n++
			v.SetBytes([]byte{0xb0, byte(f.n), byte(f.n >> 8), 0x0b})
			return
		}
		f.slices++
		if f.slices%7 == 0 {
			return // some arrays null or empty
		}
		n := 1 + f.slices%2
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			f.fill(s.Index(i), false)
		}
		v.Set(s)
	}
}

// leafKey is the value key shared by kmsg leaves and kwire nodes; ok is
// false for values too common to identify a field (bools, empty, null).
func kmsgLeafKey(v reflect.Value) (string, bool) {
	switch v.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "i:" + strconv.FormatInt(v.Int(), 10), true
	case reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "i:" + strconv.FormatUint(v.Uint(), 10), true
	case reflect.Float64:
		return "f:" + strconv.FormatFloat(v.Float(), 'g', -1, 64), true
	case reflect.String:
		return "s:" + v.String(), v.Len() > 0
	case reflect.Array:
		b := make([]byte, v.Len())
		for i := range b {
			b[i] = byte(v.Index(i).Uint())
		}
		return "u:" + hex.EncodeToString(b), true
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return "b:" + hex.EncodeToString(v.Bytes()), v.Len() > 0
		}
	}
	return "", false
}

// collectKmsg maps each identifying value in v to where kmsg holds it.
// at describes the field v belongs to (name, parent, ord).
func collectKmsg(v reflect.Value, path, idx string, at kmsgLeaf, out map[string][]kmsgLeaf) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < v.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() || sf.Type == reflect.TypeOf(kmsg.Tags{}) || (path == "" && sf.Name == "Version") {
				continue
			}
			collectKmsg(v.Field(i), joinPath(path, sf.Name), idx, kmsgLeaf{name: sf.Name, parent: path, ord: i}, out)
		}
		return
	case reflect.Pointer:
		if !v.IsNil() {
			collectKmsg(v.Elem(), path, idx, at, out)
		}
		return
	case reflect.Slice:
		if v.Type().Elem().Kind() != reflect.Uint8 {
			for i := 0; i < v.Len(); i++ {
				collectKmsg(v.Index(i), path+"["+strconv.Itoa(i)+"]", joinIdx(idx, i), at, out)
			}
			return
		}
	}
	if key, ok := kmsgLeafKey(v); ok {
		at.path, at.idx = path, idx
		out[key] = append(out[key], at)
	}
}

func joinPath(p, name string) string {
	if p == "" {
		return name
	}
	return p + "." + name
}

func joinIdx(idx string, i int) string {
	if idx == "" {
		return strconv.Itoa(i)
	}
	return idx + "," + strconv.Itoa(i)
}

type kwireLeaf struct {
	key, path, idx, name string
	parent               string // the path of the struct holding the field
	tagged               bool
}

// collectKwire lists kwire's identifying leaves with their array indices.
// at carries the name, parent and taggedness of the enclosing field.
func collectKwire(n *Node, path, idx string, at kwireLeaf, out *[]kwireLeaf) {
	switch {
	case strings.HasPrefix(n.Name, "["):
		i, _ := strconv.Atoi(strings.Trim(n.Name, "[]"))
		path += n.Name
		idx = joinIdx(idx, i)
	case n.Kind == KindTaggedFields:
	default:
		at = kwireLeaf{name: n.Name, parent: path, tagged: n.Flags&FlagTagged != 0}
		path = joinPath(path, n.Name)
	}
	if n.Flags&FlagNull != 0 {
		return
	}
	var key string
	switch n.Kind {
	case KindStruct, KindArray, KindTaggedFields:
		for _, c := range n.Children {
			collectKwire(c, path, idx, at, out)
		}
		return
	case KindInt:
		key = "i:" + strconv.FormatInt(n.Int, 10)
	case KindFloat:
		key = "f:" + strconv.FormatFloat(n.Float, 'g', -1, 64)
	case KindString:
		if n.Str == "" {
			return
		}
		key = "s:" + n.Str
	case KindUUID:
		key = "u:" + hex.EncodeToString(n.Raw)
	case KindBytes, KindRecords:
		if len(n.Raw) == 0 {
			return
		}
		key = "b:" + hex.EncodeToString(n.Raw)
	default:
		return
	}
	at.key, at.path, at.idx = key, path, idx
	*out = append(*out, at)
}

// kmsgDiffers lists kmsg messages whose encoding differs from the pinned
// Kafka JSON (../shared/kafka-schemas), the authority for kwire's table, in
// a way that changes the bytes; their triples are skipped with a log line,
// not compared. Each entry names the difference.
var kmsgDiffers = map[string]string{
	"StreamsGroupDescribeResponse v1": "kmsg v1.15.1 has Groups[].AssignorName (v1+), which Kafka's StreamsGroupDescribeResponse.json at trunk 678c0e07 does not declare",
	"StopReplicaRequest v4":           "kmsg v1.15.1 writes IsKRaftController after ControllerEpoch; Kafka's StopReplicaRequest.json (3.9.0-rc3) declares it before",
}

func TestKmsgDifferential(t *testing.T) {
	triples, leaves, renamed, skipped := 0, 0, 0, 0
	var missing []string
	for key := int16(0); key <= 100; key++ {
		for _, response := range []bool{false, true} {
			var proto interface {
				MaxVersion() int16
			}
			if response {
				if r := kmsg.ResponseForKey(key); r != nil {
					proto = r
				}
			} else if r := kmsg.RequestForKey(key); r != nil {
				proto = r
			}
			if proto == nil {
				continue
			}
			minV := int16(-1)
			for _, m := range schemasByKey(key) {
				if (m.Type == TypeResponse) == response && m.Type != TypeHeader && (minV < 0 || m.ValidVersions.Min < minV) {
					minV = m.ValidVersions.Min
				}
			}
			if minV < 0 {
				// An API key newer than the pinned Kafka JSON
				// (../shared/kafka-schemas): kwire decodes it as
				// unknown, which is tested elsewhere.
				t.Logf("kmsg knows key %d (%s), which the schema table does not declare", key, reflect.TypeOf(proto).Elem().Name())
				continue
			}
			for v := minV; v <= proto.MaxVersion(); v++ {
				if Lookup(key, response, v) == nil {
					missing = append(missing, fmt.Sprintf("key %d response=%v v%d", key, response, v))
					continue
				}
				name := reflect.TypeOf(proto).Elem().Name() + " v" + strconv.Itoa(int(v))
				if why, ok := kmsgDiffers[name]; ok {
					t.Logf("skipping %s: %s", name, why)
					skipped++
					continue
				}
				n, r := checkKmsg(t, key, v, response)
				leaves += n
				renamed += r
				triples++
			}
		}
	}
	for _, m := range missing {
		t.Errorf("kmsg supports a version kwire lacks: %s", m)
	}
	summary := fmt.Sprintf("kmsg differential: %d (key, version, direction) triples checked, %d skipped, %d field values compared (%d under fields kmsg names differently)", triples, skipped, leaves, renamed)
	t.Log(summary)
	if testing.Verbose() {
		fmt.Println(summary)
	}
	if triples == 0 {
		t.Fatal("no triples checked")
	}
}

// checkKmsg encodes one filled kmsg message and compares kwire's decode.
func checkKmsg(t *testing.T, key, version int16, response bool) (compared, renamed int) {
	t.Helper()
	var msg interface {
		SetVersion(int16)
		IsFlexible() bool
		AppendTo([]byte) []byte
	}
	if response {
		msg = kmsg.ResponseForKey(key)
	} else {
		msg = kmsg.RequestForKey(key)
	}
	msg.SetVersion(version)
	rv := reflect.ValueOf(msg).Elem()
	f := &filler{}
	f.fill(rv, true)
	if msg.IsFlexible() {
		if tags := rv.FieldByName("UnknownTags"); tags.IsValid() {
			tags.Addr().Interface().(*kmsg.Tags).Set(unknownTestTag, []byte("kw"))
		}
	}
	body := msg.AppendTo(nil)
	where := fmt.Sprintf("%s v%d", rv.Type().Name(), version)

	// Secrets shown: the comparison is of values (secrets_test.go checks
	// that they are withheld by default).
	tree := (&Decoder{ShowSecrets: true}).DecodeBody(key, version, response, body)
	if tree.Err != nil {
		t.Errorf("%s: %v\n  bytes %x", where, tree.Err, body)
		return 0, 0
	}
	if p := spanProblem(tree); p != "" {
		t.Errorf("%s: %s", where, p)
	}
	m := Lookup(key, response, version)
	if msg.IsFlexible() {
		seen := false
		for _, u := range UnknownTaggedFields(tree.Root) {
			switch {
			case u.Tag == unknownTestTag && string(u.Data) == "kw":
				seen = true
			case tagDeclaredElsewhere(m.Fields, u.Tag, version):
				t.Logf("%s: kmsg writes tag %d, which Kafka's JSON declares only in other versions", where, u.Tag)
			default:
				t.Errorf("%s: unexpected unknown tag %d (%x)", where, u.Tag, u.Data)
			}
		}
		if !seen {
			t.Errorf("%s: unknown tag %d \"kw\" not reported", where, unknownTestTag)
		}
	}

	want := map[string][]kmsgLeaf{}
	collectKmsg(rv, "", "", kmsgLeaf{}, want)
	var got []kwireLeaf
	collectKwire(tree.Root, "", "", kwireLeaf{}, &got)
	errs := 0
	fail := func(format string, args ...any) {
		errs++
		if errs <= 5 {
			t.Errorf("%s: "+format, append([]any{where}, args...)...)
		}
	}
	// kwire struct path -> kmsg struct path, and the last kmsg field
	// ordinal seen in it (wire order must follow kmsg's declaration order).
	parents := map[string]string{}
	lastOrd := map[string]int{}
	for _, g := range got {
		cands := want[g.key]
		var match *kmsgLeaf
		for i := range cands {
			if cands[i].idx == g.idx {
				match = &cands[i]
				break
			}
		}
		switch {
		case len(cands) == 0:
			fail("kwire %s = %s, a value kmsg never wrote", g.path, g.key)
			continue
		case match == nil:
			fail("kwire %s = %s at indices [%s]; kmsg has it at %s", g.path, g.key, g.idx, cands[0].path)
			continue
		}
		if p, ok := parents[g.parent]; ok && p != match.parent {
			fail("kwire struct %s holds values from kmsg %s and %s", orRoot(g.parent), orRoot(p), orRoot(match.parent))
			continue
		}
		parents[g.parent] = match.parent
		if !g.tagged {
			if last, ok := lastOrd[g.parent]; ok && match.ord < last {
				fail("kwire %s (kmsg %s) comes after a field kmsg declares later", g.path, match.path)
				continue
			}
			lastOrd[g.parent] = match.ord
		}
		compared++
		if !strings.EqualFold(match.name, g.name) {
			renamed++
		}
	}
	if errs > 5 {
		t.Errorf("%s: %d mismatches in all", where, errs)
	}
	return compared, renamed
}

// tagDeclaredElsewhere reports whether some field of fields (not nested)
// uses tag in a version other than v.
func tagDeclaredElsewhere(fields []Field, tag uint32, v int16) bool {
	for i := range fields {
		f := &fields[i]
		if f.Tag >= 0 && uint32(f.Tag) == tag && !(f.TaggedVersions.Contains(v) && f.Versions.Contains(v)) {
			return true
		}
	}
	return false
}
