package render

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/kwire/kwire/dissect"
	"github.com/kwire/kwire/pcaps"
	"github.com/kwire/kwire/protocol"
	"github.com/kwire/kwire/reassembly"
	"github.com/kwire/kwire/tlsdec"
)

// converterOptions are the options under which the direct converter is
// held to the value path: what changes a header's or body's JSON (64-bit
// integers as strings, secrets shown) and what changes typed record
// batches (the value forms, --max-value).
var converterOptions = []Options{
	{},
	{Int64Strings: true},
	{ShowSecrets: true},
	{Int64Strings: true, ShowSecrets: true, Values: ValuesHex, MaxValue: 3},
	{Values: ValuesBase64},
	{Values: ValuesNone},
	{Values: ValuesText, MaxValue: -1},
	{Values: ValuesText, MaxValue: 1},
}

// converterCheck holds jsonWriter.converter's direct writer to the value
// path (protocol.BodyJSONWith, patch, appendAnyJSON) on trees.
type converterCheck struct {
	t        *testing.T
	trees    int // trees compared
	writes   int // converters compared
	valueWay int // of them, those direct left to the value path
}

// check compares the two on the header and body of tr (or its root when
// it is neither a frame nor a message) under every option, typed records
// or not; name says where tr came from.
func (c *converterCheck) check(name string, tr *protocol.Tree, opts []Options) {
	c.t.Helper()
	if tr == nil || tr.Root == nil {
		return
	}
	c.trees++
	nodes := []*protocol.Node{headerOf(tr), bodyOf(tr)}
	if nodes[0] == nil && nodes[1] == nil {
		nodes = []*protocol.Node{tr.Root}
	}
	for _, n := range nodes {
		if n == nil {
			continue
		}
		for _, o := range opts {
			for _, typed := range []bool{false, true} {
				o := o
				want := (&jsonWriter{o: &o, typedRecords: typed, valuePath: true}).appendConverter(nil, n)
				j := &jsonWriter{o: &o, typedRecords: typed}
				got := j.appendConverter(nil, n)
				c.writes++
				c.valueWay += j.valueWrites
				if !bytes.Equal(got, want) {
					c.t.Fatalf("%s %s (typed %v, %+v):\n direct %s\n  value %s", name, n.Name, typed, o, got, want)
				}
			}
		}
	}
}

// captureExchanges dissects a golden capture, secrets shown or not.
func captureExchanges(t *testing.T, file string, show bool) []*dissect.Exchange {
	t.Helper()
	var s collectSink
	dopts := dissect.Options{Ports: pcaps.BrokerPorts(), Detect: true, Decoder: protocol.Decoder{Records: true, ShowSecrets: show}}
	if kl, ok := pcaps.KeyLog(file); ok {
		// The TLS captures' Kafka (SCRAM over TLS among them) too.
		b, err := os.ReadFile(kl)
		if err != nil {
			t.Fatal(err)
		}
		keys := &tlsdec.KeyLog{}
		keys.Write(b)
		keys.Flush()
		dopts.TLSKeys = keys
	}
	d := dissect.New(dopts, &s)
	if _, err := reassembly.ReadFiles(context.Background(), []string{file}, reassembly.Options{}, d); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	d.Finish()
	return s.ex
}

// goldenCaptures are pcaps/'s captures.
func goldenCaptures(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, g := range []string{"*.pcap", "*.pcapng"} {
		m, _ := filepath.Glob(filepath.Join("..", "pcaps", g))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no golden captures in ../pcaps")
	}
	return files
}

// The direct converter writes what the value path writes, byte for byte,
// for every frame of every golden capture (secrets withheld or shown when
// decoded, and when rendered), under every option, typed records or not;
// and whole frames never need the value path.
func TestDirectConverterCaptures(t *testing.T) {
	c := &converterCheck{t: t}
	for _, f := range goldenCaptures(t) {
		for _, show := range []bool{false, true} {
			for i, e := range captureExchanges(t, f, show) {
				for _, fr := range []*dissect.Frame{e.Request, e.Response} {
					if fr != nil && fr.Tree != nil {
						c.check(filepath.Base(f)+" exchange "+itoa(int64(i)), fr.Tree, converterOptions)
					}
				}
			}
		}
	}
	if c.trees < 2000 {
		t.Errorf("only %d frames compared", c.trees)
	}
	if c.valueWay != 0 {
		t.Errorf("%d of %d converters of whole frames took the value path", c.valueWay, c.writes)
	}
	t.Logf("%d frames, %d converters compared", c.trees, c.writes)
}

// The same on Kafka's vectors, whole and cut at every byte (a body cut
// short fails where it is cut: partial trees, "undecoded" spans).
func TestDirectConverterKafkaVectors(t *testing.T) {
	vs := loadVectorsIfPresent(t)
	if vs == nil {
		t.Skip("../shared/kafka-vectors not found (set KWIRE_SHARED)")
	}
	c := &converterCheck{t: t}
	for _, v := range vs {
		body := mustHex(t, v.Hex)
		for _, show := range []bool{false, true} {
			d := protocol.Decoder{Records: true, ShowSecrets: show}
			decode := func(b []byte) *protocol.Tree {
				if v.Direction == "framing" || v.APIKey < 0 {
					return d.DecodeStruct(v.Message, v.Version, b)
				}
				return d.DecodeBody(v.APIKey, v.Version, v.Direction == "response", b)
			}
			name := v.Message + " v" + itoa(int64(v.Version)) + " " + v.Name
			c.check(name, decode(body), converterOptions)
			opts := converterOptions[:2]
			if show || testing.Short() {
				opts = converterOptions[:1]
			}
			for k := 0; k < len(body); k++ {
				c.check(name+" cut at "+itoa(int64(k)), decode(body[:k]), opts)
			}
		}
	}
	if c.trees < 1000 {
		t.Errorf("only %d trees compared", c.trees)
	}
	t.Logf("%d trees, %d converters compared, %d by the value path", c.trees, c.writes, c.valueWay)
}

// Every distinct frame of the golden captures cut short (its length
// prefix kept, or set to what is left) and with a byte flipped: the
// damaged trees the decoder makes of them are written alike too, at 12
// places in each frame (8 with -short); Kafka's vectors are cut at every
// byte (TestDirectConverterKafkaVectors).
func TestDirectConverterDamagedFrames(t *testing.T) {
	c := &converterCheck{t: t}
	d := protocol.Decoder{Records: true}
	seen := map[string]bool{}
	for _, f := range goldenCaptures(t) {
		for i, e := range captureExchanges(t, f, false) {
			for _, fr := range []*dissect.Frame{e.Request, e.Response} {
				if fr == nil || len(fr.Bytes) < 8 {
					continue
				}
				frame := fr.Bytes
				key := string(frame)
				if fr == e.Response {
					key = string(binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, uint16(e.APIKey)), uint16(e.APIVersion))) + key
				}
				if seen[key] {
					continue
				}
				seen[key] = true
				decode := func(b []byte) *protocol.Tree {
					if fr == e.Request {
						return d.DecodeRequest(b)
					}
					return d.DecodeResponse(b, e.APIKey, e.APIVersion)
				}
				name := filepath.Base(f) + " exchange " + itoa(int64(i))
				step := max(1, len(frame)/12)
				if testing.Short() {
					step = max(step, len(frame)/8)
				}
				for k := 4; k < len(frame); k += step {
					cut := append([]byte(nil), frame[:k]...)
					c.check(name+" cut at "+itoa(int64(k)), decode(cut), converterOptions[:2])
					binary.BigEndian.PutUint32(cut, uint32(k-4))
					c.check(name+" cut at "+itoa(int64(k))+", length fixed", decode(cut), converterOptions[:2])
					flipped := append([]byte(nil), frame...)
					flipped[k] ^= 0xff
					c.check(name+" byte "+itoa(int64(k))+" flipped", decode(flipped), converterOptions[:1])
				}
			}
		}
	}
	t.Logf("%d trees, %d converters compared, %d by the value path", c.trees, c.writes, c.valueWay)
}

// FuzzDirectConverter decodes arbitrary request frames and holds the
// direct converter to the value path on their header and body.
func FuzzDirectConverter(f *testing.F) {
	f.Add(mustHex(f, apiVersionsHex))
	f.Add(produceV9().Spaces[0].Data)
	for _, v := range loadVectorsIfPresent(f) {
		if v.Direction != "request" || v.APIKey < 0 {
			continue
		}
		body := mustHex(f, v.Hex)
		hdr := binary.BigEndian.AppendUint16(nil, uint16(v.APIKey))
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(v.Version))
		hdr = binary.BigEndian.AppendUint32(hdr, 7)
		hdr = append(hdr, 0, 1, 'c')
		frame := binary.BigEndian.AppendUint32(nil, uint32(len(hdr)+len(body)))
		f.Add(append(append(frame, hdr...), body...))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		c := &converterCheck{t: t}
		for _, show := range []bool{false, true} {
			d := protocol.Decoder{Records: true, ShowSecrets: show, MaxDecompressed: 1 << 16}
			c.check("fuzz", d.DecodeRequest(frame), converterOptions)
		}
	})
}

// Trees whose value patch amends by more than the node at hand go the
// value path, and converter still writes what it did: a known tag
// repeated (patch amends the first member again with the second node),
// an undecoded span inside an array (left out, and nothing below it
// patched), a struct without a schema naming two children alike.
func TestDirectConverterGivesUp(t *testing.T) {
	vs := loadVectorsIfPresent(t)
	if vs == nil {
		t.Skip("../shared/kafka-vectors not found (set KWIRE_SHARED)")
	}
	var walk func(n *protocol.Node, visit func(*protocol.Node))
	walk = func(n *protocol.Node, visit func(*protocol.Node)) {
		visit(n)
		for _, c := range n.Children {
			walk(c, visit)
		}
	}
	mutations := map[string]func(root *protocol.Node) bool{
		"tag repeated": func(root *protocol.Node) bool {
			done := false
			walk(root, func(n *protocol.Node) {
				if !done && n.Kind == protocol.KindTaggedFields && len(n.Children) > 0 && n.Children[0].Kind != protocol.KindUnknownTag {
					n.Children = append(n.Children, n.Children[0])
					done = true
				}
			})
			return done
		},
		"undecoded in an array": func(root *protocol.Node) bool {
			done := false
			walk(root, func(n *protocol.Node) {
				if !done && n.Kind == protocol.KindArray && len(n.Children) > 0 {
					n.Children = append(n.Children, &protocol.Node{Name: "undecoded", Kind: protocol.KindRaw, Raw: []byte("<&>")})
					done = true
				}
			})
			return done
		},
		"no schema, a name twice": func(root *protocol.Node) bool {
			if len(root.Children) == 0 {
				return false
			}
			root.Type = "label" // not a message node: wire order
			root.Children = append(root.Children, root.Children[0])
			return true
		},
	}
	for what, mutate := range mutations {
		mutated := 0
		for _, v := range vs {
			tr := decodeVectorShow(t, v, true)
			if tr == nil || tr.Root == nil || !mutate(tr.Root) {
				continue
			}
			mutated++
			for _, typed := range []bool{false, true} {
				o := Options{}
				want := (&jsonWriter{o: &o, typedRecords: typed, valuePath: true}).appendConverter(nil, tr.Root)
				j := &jsonWriter{o: &o, typedRecords: typed}
				got := j.appendConverter(nil, tr.Root)
				if !bytes.Equal(got, want) {
					t.Fatalf("%s, %s v%d %s:\n got %s\nwant %s", what, v.Message, v.Version, v.Name, got, want)
				}
				if j.valueWrites != 1 {
					t.Fatalf("%s, %s v%d %s: the value path wrote %d converters, want 1", what, v.Message, v.Version, v.Name, j.valueWrites)
				}
			}
		}
		if mutated < 10 {
			t.Errorf("%s: only %d vectors", what, mutated)
		}
	}
}

// The direct converter allocates nothing for a header or a body without
// record batches or withheld secrets (the value path allocated an Object,
// a slice or a boxed value for nearly every node); with them, what value
// and withheldBytes need.
func TestDirectConverterAllocs(t *testing.T) {
	var plain, other []*protocol.Node
	nodes := 0
	for _, f := range goldenCaptures(t) {
		for _, e := range captureExchanges(t, f, false) {
			for _, fr := range []*dissect.Frame{e.Request, e.Response} {
				if fr == nil || fr.Tree == nil {
					continue
				}
				for _, n := range []*protocol.Node{headerOf(fr.Tree), bodyOf(fr.Tree)} {
					if n == nil || n.Kind == protocol.KindRaw {
						continue
					}
					j := &jsonWriter{o: &Options{}, typedRecords: true}
					if j.needsPatch(n, 0) {
						other = append(other, n)
					} else {
						plain = append(plain, n)
						nodes += countNodes(n)
					}
				}
			}
		}
	}
	if len(plain) < 1000 || len(other) < 100 {
		t.Fatalf("%d plain headers and bodies, %d with batches or secrets", len(plain), len(other))
	}
	buf := make([]byte, 0, 64<<20)
	j := &jsonWriter{o: &Options{}, typedRecords: true}
	direct := testing.AllocsPerRun(3, func() {
		for _, n := range plain {
			buf = j.appendConverter(buf[:0], n)
			j.unknown = j.unknown[:0]
		}
	})
	j.valuePath = true
	value := testing.AllocsPerRun(3, func() {
		for _, n := range plain {
			buf = j.appendConverter(buf[:0], n)
			j.unknown = j.unknown[:0]
		}
	})
	t.Logf("%d headers and bodies of %d nodes: %.0f allocations direct, %.0f by the value path", len(plain), nodes, direct, value)
	if direct != 0 {
		t.Errorf("%d headers and bodies without batches or secrets: %.0f allocations, want 0", len(plain), direct)
	}
	j.valuePath = false
	withOther := testing.AllocsPerRun(3, func() {
		for _, n := range other {
			buf = j.appendConverter(buf[:0], n)
			j.unknown = j.unknown[:0]
		}
	})
	j.valuePath = true
	valueOther := testing.AllocsPerRun(3, func() {
		for _, n := range other {
			buf = j.appendConverter(buf[:0], n)
			j.unknown = j.unknown[:0]
		}
	})
	t.Logf("%d with batches or secrets: %.0f allocations direct, %.0f by the value path", len(other), withOther, valueOther)
	if withOther > valueOther/4 {
		t.Errorf("%d headers and bodies with batches or secrets: %.0f allocations, want at most a quarter of the value path's %.0f", len(other), withOther, valueOther)
	}
}

func countNodes(n *protocol.Node) int {
	k := 1
	for _, c := range n.Children {
		k += countNodes(c)
	}
	return k
}
