package render

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kwire/kwire/facts"
	"github.com/kwire/kwire/internal/jsonint64"
)

// checkFactsDoc compares appendFactsDoc with encoding/json on d, 64-bit
// integers as numbers and as strings.
func checkFactsDoc(t *testing.T, name string, d *FactsDoc) {
	t.Helper()
	for _, int64s := range []bool{false, true} {
		var v any = d
		if int64s {
			v = jsonint64.Strings(d)
		}
		want := stdJSON(t, v, false)
		got, ok := appendFactsDoc(nil, d, int64s)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("%s (int64 strings %v):\n got %s\nwant %s", name, int64s, got, want)
		}
	}
}

// appendFactsDoc writes what encoding/json writes for the facts of every
// exchange of the golden captures.
func TestFactsDocAppend(t *testing.T) {
	n := 0
	for _, f := range goldenCaptures(t) {
		for i, e := range captureExchanges(t, f, false) {
			checkFactsDoc(t, filepath.Base(f)+" exchange "+itoa(int64(i)), NewFactsDoc(e.Facts()))
			n++
		}
	}
	if n < 1000 {
		t.Errorf("only %d exchanges", n)
	}
	checkFactsDoc(t, "nil", nil)
	checkFactsDoc(t, "empty", NewFactsDoc(nil))
}

// Documents with every field set (pointers, slices of two, strings to
// escape, integers past 2^53), with none set (null), and with a random
// half set: a field added to a document and not to appendFactsDoc fails
// here.
func TestFactsDocAppendEveryField(t *testing.T) {
	strs := []string{"", "orders", `q"uo\\te`, "<a>&amp;</a>", "line\nbreak\t\x01", "é€\u2028\u2029", "bad \xff utf8"}
	ints := []int64{0, -1, 1, 127, -32768, 1 << 31, 1<<53 + 1, -1 << 62}
	r := rand.New(rand.NewPCG(7, 11))
	// fill sets v's fields: every one when p is 1, none when 0.
	var fill func(v reflect.Value, p float64, depth int)
	fill = func(v reflect.Value, p float64, depth int) {
		switch v.Kind() {
		case reflect.Pointer:
			if r.Float64() < p && depth < 8 {
				v.Set(reflect.New(v.Type().Elem()))
				fill(v.Elem(), p, depth+1)
			}
		case reflect.Slice:
			switch {
			case r.Float64() >= p:
				if r.IntN(2) == 0 {
					v.Set(reflect.MakeSlice(v.Type(), 0, 0)) // [] rather than null
				}
			case depth < 8:
				v.Set(reflect.MakeSlice(v.Type(), 2, 2))
				for i := 0; i < 2; i++ {
					fill(v.Index(i), p, depth+1)
				}
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				fill(v.Field(i), p, depth+1)
			}
		case reflect.String:
			v.SetString(strs[r.IntN(len(strs))])
		case reflect.Bool:
			v.SetBool(r.IntN(2) == 1)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			x := ints[r.IntN(len(ints))]
			if v.OverflowInt(x) {
				x = int64(r.IntN(100)) - 50
			}
			v.SetInt(x)
		default:
			t.Fatalf("a field of kind %s: appendFactsDoc and this test need to learn it", v.Kind())
		}
	}
	for i := range 300 {
		p := []float64{1, 0, 0.5}[i%3]
		d := &FactsDoc{}
		fill(reflect.ValueOf(d).Elem(), p, 0)
		checkFactsDoc(t, "filled p="+itoa(int64(p*100)), d)
	}
}

// appendFactsDoc allocates nothing but its output's growth.
func TestFactsDocAppendAllocs(t *testing.T) {
	var docs []*FactsDoc
	for _, f := range goldenCaptures(t)[:4] {
		for _, e := range captureExchanges(t, f, false) {
			docs = append(docs, NewFactsDoc(e.Facts()))
		}
	}
	buf := make([]byte, 0, 1<<20)
	for _, int64s := range []bool{false, true} {
		allocs := testing.AllocsPerRun(5, func() {
			for _, d := range docs {
				buf, _ = appendFactsDoc(buf[:0], d, int64s)
			}
		})
		if allocs != 0 {
			t.Errorf("appendFactsDoc (int64 strings %v): %.0f allocations for %d documents, want 0", int64s, allocs, len(docs))
		}
	}
}

// partitionDoc allocates one value for each offset a partition states,
// and nothing else for a partition without records or aborted
// transactions (ranging over a map of the offset kinds allocated the map
// for every partition).
func TestPartitionDocAllocs(t *testing.T) {
	p := &facts.Partition{Index: 3, AbortedTxns: -1, ActiveProducers: -1}
	p.Offsets.Set(facts.OffsetFetch, 100)
	p.Offsets.Set(facts.OffsetHighWatermark, 1<<40)
	p.Offsets.Set(facts.OffsetLeaderEpoch, 7)
	var pd PartitionDoc
	if a := testing.AllocsPerRun(100, func() { pd = partitionDoc(p) }); a != 3 {
		t.Errorf("partitionDoc of a partition with 3 offsets: %.0f allocations, want 3", a)
	}
	if *pd.FetchOffset != 100 || *pd.HighWatermark != 1<<40 || *pd.LeaderEpoch != 7 || pd.BaseOffset != nil || pd.Partition != 3 {
		t.Errorf("partitionDoc = %+v", pd)
	}
}

// NewFactsDoc makes each list at its length: an ApiVersions response's
// document (60-odd API ranges, its features) takes a handful of
// allocations, not one more for every doubling of each list.
func TestNewFactsDocAllocs(t *testing.T) {
	for _, e := range captureExchanges(t, filepath.Join("..", "pcaps", "kgo-produce-consume.pcap"), false) {
		fx := e.Facts()
		if fx == nil || fx.APIVersions == nil || len(fx.APIVersions.Ranges) < 40 {
			continue
		}
		var d *FactsDoc
		a := testing.AllocsPerRun(100, func() { d = NewFactsDoc(fx) })
		if len(d.APIVersions.Ranges) != len(fx.APIVersions.Ranges) || d.APIVersions.Ranges[0].API != "Produce" {
			t.Fatalf("ranges %+v", d.APIVersions.Ranges[:1])
		}
		// The document, its ApiVersions object, its three lists, and
		// each value it states behind a pointer.
		want := 5.0
		for _, set := range []bool{d.ThrottleTimeMs != nil, d.ClientSoftware != nil, d.APIVersions.FinalizedEpoch != nil} {
			if set {
				want++
			}
		}
		if a != want || want != 8 {
			t.Errorf("NewFactsDoc of an ApiVersions response (%d ranges, %d+%d features): %.0f allocations, want %.0f",
				len(fx.APIVersions.Ranges), len(fx.APIVersions.SupportedFeatures), len(fx.APIVersions.FinalizedFeatures), a, want)
		}
		return
	}
	t.Fatal("no ApiVersions response in kgo-produce-consume.pcap")
}
