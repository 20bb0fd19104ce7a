package protocol

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// sameButOmitted checks that kept, decoded with Decoder.KeepValue, is the
// tree whole (decoded keeping everything) but for the tails of long
// values: the same nodes, spans, values and notes; a value's Raw the
// first bytes of whole's, the rest omitted (FlagOmitted); a raw node's Raw a
// prefix of whole's.
func sameButOmitted(t *testing.T, whole, kept *Node, keep int, path string) {
	t.Helper()
	if whole.Name != kept.Name || whole.Type != kept.Type || whole.Kind != kept.Kind || whole.Flags != kept.Flags&^FlagOmitted ||
		whole.Space != kept.Space || whole.Off != kept.Off || whole.Len != kept.Len || whole.Int != kept.Int ||
		whole.Str != kept.Str || whole.Note != kept.Note {
		t.Fatalf("%s: node differs:\nwhole %s %s k%d f%b s%d [%d,+%d) %d %q\nkept  %s %s k%d f%b s%d [%d,+%d) %d %q", path,
			whole.Name, whole.Type, whole.Kind, whole.Flags, whole.Space, whole.Off, whole.Len, whole.Int, whole.Note,
			kept.Name, kept.Type, kept.Kind, kept.Flags, kept.Space, kept.Off, kept.Len, kept.Int, kept.Note)
	}
	if whole.RawLen() != kept.RawLen() || !bytes.HasPrefix(whole.Raw, kept.Raw) {
		t.Fatalf("%s: raw %d bytes (%d kept), want %d (%x... vs %x...)", path, kept.RawLen(), len(kept.Raw), whole.RawLen(),
			kept.Raw[:min(8, len(kept.Raw))], whole.Raw[:min(8, len(whole.Raw))])
	}
	if kept.Kind == KindBytes && kept.Space > 0 && len(kept.Raw) < min(len(whole.Raw), keep) {
		t.Fatalf("%s: %d bytes kept of %d, want %d", path, len(kept.Raw), len(whole.Raw), min(len(whole.Raw), keep))
	}
	if len(whole.Children) != len(kept.Children) {
		t.Fatalf("%s: %d children, want %d", path, len(kept.Children), len(whole.Children))
	}
	for i := range whole.Children {
		sameButOmitted(t, whole.Children[i], kept.Children[i], keep, path+"/"+whole.Children[i].Name)
	}
}

// keepRecords are records whose keys, values and headers are short and
// long (past any KeepValue the tests use), null and empty.
func keepRecords() []recRecord {
	long := func(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }
	return []recRecord{
		{Key: []byte("k"), Value: []byte("short")},
		{OffsetDelta: 1, Key: long(3000, 'k'), Value: long(100000, 'v')},
		{OffsetDelta: 2, Value: nil, Headers: [][2][]byte{{long(500, 'h'), long(70000, 'x')}, {[]byte("t"), nil}}},
		{OffsetDelta: 3, Key: []byte{}, Value: long(40, 'a'), Headers: [][2][]byte{{[]byte("a"), []byte("b")}}},
		{OffsetDelta: 4, Value: long(1<<20, 'z')},
	}
}

// With KeepValue, a compressed batch decodes to the same tree as without
// (secrets shown: what is withheld depends on what is kept,
// TestCompressedBytesWithheldUnlessAllDecoded),
// in every codec, but for the tails of its long values, which are not in
// memory: the decompressed space keeps little more than KeepValue bytes a
// value, and its size is the stream's.
func TestKeepValueSameTree(t *testing.T) {
	for c := CodecNone; c <= CodecZstd; c++ {
		for _, keep := range []int{1, 16, 256, 4096} {
			t.Run(fmt.Sprintf("%s/%d", c, keep), func(t *testing.T) {
				b := recBuild(t, c, 100, 1700000000000, keepRecords())
				whole := (&Decoder{ShowSecrets: true}).DecodeRecordBatches(b)
				kept := (&Decoder{KeepValue: keep, ShowSecrets: true}).DecodeRecordBatches(b)
				sameButOmitted(t, whole.Root, kept.Root, keep, "")
				if len(whole.Spaces) != len(kept.Spaces) {
					t.Fatalf("%d spaces, want %d", len(kept.Spaces), len(whole.Spaces))
				}
				for i := 1; i < len(kept.Spaces); i++ {
					ws, ks := &whole.Spaces[i], &kept.Spaces[i]
					if ks.Size() != len(ws.Data) || ks.Name != ws.Name {
						t.Errorf("space %d: %q of %d bytes, want %q of %d", i, ks.Name, ks.Size(), ws.Name, len(ws.Data))
					}
					// Six long values: each keeps keep bytes.
					if max := 2000 + 6*keep; len(ks.Data) > max {
						t.Errorf("space %d keeps %d bytes, want at most %d", i, len(ks.Data), max)
					}
				}
			})
		}
	}
}

// KeepValue below zero keeps no byte of a value, and the tree is still
// the same.
func TestKeepValueNone(t *testing.T) {
	b := recBuild(t, CodecGzip, 0, 0, keepRecords())
	whole := (&Decoder{ShowSecrets: true}).DecodeRecordBatches(b)
	kept := (&Decoder{KeepValue: -1, ShowSecrets: true}).DecodeRecordBatches(b)
	sameButOmitted(t, whole.Root, kept.Root, 0, "")
	if n := len(kept.Spaces[1].Data); n > 200 {
		t.Errorf("%d bytes kept", n)
	}
}

// Hostile records (lying lengths and counts, bytes after the records)
// decode to the same errors with KeepValue as without: what the keeper
// omits is never what the decoder reports on.
func TestKeepValueHostile(t *testing.T) {
	rec := func(body []byte) []byte { return append(binary.AppendVarint(nil, int64(len(body))), body...) }
	head := []byte{0, 0, 0} // attributes, timestamp delta 0, offset delta 0
	long := bytes.Repeat([]byte{'x'}, 5000)
	cases := map[string][]byte{
		"value longer than the record": rec(append(append(bytes.Clone(head), 1 /* key null */, 0xd0, 0x0f /* 1000 */), long[:10]...)),
		"negative key length":          rec(append(bytes.Clone(head), 3, 'a')),
		"header count too large":       rec(append(append(append(bytes.Clone(head), 1, 0xa0, 0x1f), long[:2000]...), 0xfe, 0x7f)),
		"bytes after the headers":      rec(append(append(append(bytes.Clone(head), 1, 0xa0, 0x1f), long[:2000]...), append([]byte{0}, long...)...)),
		"record length negative":       append(binary.AppendVarint(nil, -5), long...),
		"bad varint":                   append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, long...),
		"after the last record":        append(rec(append(append(bytes.Clone(head), 1, 0xa0, 0x1f), append(long[:2000], 0)...)), long...),
		"cut short":                    rec(append(append(bytes.Clone(head), 1, 0xa0, 0x1f), long[:2000]...))[:1500],
	}
	for name, payload := range cases {
		for c := CodecGzip; c <= CodecZstd; c++ {
			t.Run(name+"/"+c.String(), func(t *testing.T) {
				b := rawBatch(t, c, 1, payload)
				whole := (&Decoder{ShowSecrets: true}).DecodeRecordBatches(b)
				kept := (&Decoder{KeepValue: 100, ShowSecrets: true}).DecodeRecordBatches(b)
				if recErrors(whole.Root) == nil && name != "cut short" {
					t.Logf("no error in %q", name)
				}
				sameButOmitted(t, whole.Root, kept.Root, 100, "")
			})
		}
	}
}

// rawBatch builds a v2 batch of count records whose (uncompressed)
// record bytes are payload, compressed with codec.
func rawBatch(t testing.TB, codec Codec, count int32, payload []byte) []byte {
	body := recCompress(t, codec, payload)
	b := binary.BigEndian.AppendUint64(nil, 0)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	b = append(b, 2)
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(codec))
	b = binary.BigEndian.AppendUint32(b, 0)
	b = binary.BigEndian.AppendUint64(b, 0)
	b = binary.BigEndian.AppendUint64(b, 0)
	b = binary.BigEndian.AppendUint64(b, ^uint64(0))
	b = binary.BigEndian.AppendUint16(b, 0xffff)
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)
	b = binary.BigEndian.AppendUint32(b, uint32(count))
	b = append(b, body...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}

// Random records, decoded with and without KeepValue, agree.
func TestKeepValueRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	bs := func() []byte {
		switch rng.IntN(5) {
		case 0:
			return nil
		case 1:
			return []byte{}
		case 2:
			return bytes.Repeat([]byte{byte(rng.IntN(256))}, rng.IntN(20000))
		}
		return bytes.Repeat([]byte{'r'}, rng.IntN(300))
	}
	for i := range 60 {
		var recs []recRecord
		for j := range 1 + rng.IntN(20) {
			r := recRecord{OffsetDelta: int64(j), Key: bs(), Value: bs()}
			for range rng.IntN(4) {
				r.Headers = append(r.Headers, [2][]byte{bs(), bs()})
			}
			recs = append(recs, r)
		}
		c := Codec(1 + i%4)
		b := recBuild(t, c, 0, 0, recs)
		keep := []int{1, 7, 256, 1000}[i%4]
		whole := (&Decoder{ShowSecrets: true}).DecodeRecordBatches(b)
		kept := (&Decoder{KeepValue: keep, ShowSecrets: true}).DecodeRecordBatches(b)
		sameButOmitted(t, whole.Root, kept.Root, keep, fmt.Sprintf("case %d (%s, keep %d)", i, c, keep))
	}
}

// A record of a 256 MiB value, compressed to a few kilobytes, costs the
// decoder what it keeps, not what it inflates to.
func TestKeepValueBombMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("inflates 256 MiB")
	}
	var payload []byte
	payload = append(payload, 0, 0, 0, 1) // attributes, deltas, key null
	payload = binary.AppendVarint(payload, 256<<20)
	rec := append(binary.AppendVarint(nil, int64(len(payload))+256<<20+1), payload...)
	stream := append(append(rec, make([]byte, 256<<20)...), 0) // the value, no headers
	b := rawBatch(t, CodecZstd, 1, stream)
	stream = nil
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := Decoder{KeepValue: 256, MaxDecompressed: 512 << 20}
	tr := d.DecodeRecordBatches(b)
	runtime.ReadMemStats(&after)
	if errs := recErrors(tr.Root); errs != nil {
		t.Fatalf("errors: %v", errs)
	}
	v := recBatch(t, tr).Child("Records").Children[0].Child("Value")
	if v.RawLen() != 256<<20 || len(v.Raw) != 256 {
		t.Errorf("value of %d bytes, %d kept", v.RawLen(), len(v.Raw))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
		t.Errorf("decoding allocated %d MiB", alloc>>20)
	}
	if !strings.HasPrefix(recBatch(t, tr).Child("Records").Note, "zstd: ") {
		t.Errorf("note %q", recBatch(t, tr).Child("Records").Note)
	}
}

// countingBudget is a Budget granting up to max bytes (0: all), counting
// what is held.
type countingBudget struct {
	held, max, peak int64
	refused         int
}

func (b *countingBudget) Reserve(n int64) bool {
	if n > 0 && b.max > 0 && b.held+n > b.max {
		b.refused++
		return false
	}
	b.held += n
	b.peak = max(b.peak, b.held)
	return true
}

// A frame past Decoder.MaxMemory stops at the same record however warm
// the pools are, says so on its Records node and in Tree.Limits, and
// gives back all it reserved when released; what it reserved stays within
// the cap.
func TestMaxMemory(t *testing.T) {
	var recs []recRecord
	for i := range 20000 {
		recs = append(recs, recRecord{OffsetDelta: int64(i), Key: []byte("k"), Value: []byte("value")})
	}
	b := recBuild(t, CodecGzip, 0, 0, recs)
	var first string
	for round := range 3 {
		bud := &countingBudget{}
		d := Decoder{MaxMemory: 4 << 20, Budget: bud, KeepValue: 256}
		tr := d.DecodeRecordBatches(b)
		if tr.Limits != LimitMemory {
			t.Fatalf("limits %b", tr.Limits)
		}
		n := recBatch(t, tr).Child("Records")
		if !strings.Contains(n.Note, " not decoded: more than the 4 MiB of memory one frame may take") || n.Flags&FlagError == 0 {
			t.Errorf("note %q", n.Note)
		}
		if bud.peak > 4<<20 {
			t.Errorf("reserved %d bytes, over the 4 MiB cap", bud.peak)
		}
		got := fmt.Sprintf("%d %q", len(n.Children), n.Note)
		if round == 0 {
			first = got
		} else if got != first {
			t.Errorf("round %d: %s, first %s", round, got, first)
		}
		tr.Release()
		if bud.held != 0 {
			t.Errorf("%d bytes still reserved after Release", bud.held)
		}
	}
}

// A Budget that refuses stops the decode as MaxMemory does; the memory
// comes back on Release.
func TestBudgetRefuses(t *testing.T) {
	var recs []recRecord
	for i := range 5000 {
		recs = append(recs, recRecord{OffsetDelta: int64(i), Value: []byte("v")})
	}
	b := recBuild(t, CodecGzip, 0, 0, recs)
	bud := &countingBudget{max: 1 << 20}
	tr := (&Decoder{Budget: bud}).DecodeRecordBatches(b)
	if tr.Limits&LimitMemory == 0 || bud.refused == 0 {
		t.Fatalf("limits %b, %d refusals", tr.Limits, bud.refused)
	}
	if bud.peak > 1<<20 {
		t.Errorf("held %d bytes past the budget", bud.peak)
	}
	tr.Release()
	if bud.held != 0 {
		t.Errorf("%d bytes held after Release", bud.held)
	}
}

// The cap on a frame's decompressed bytes is exact: a stream of the cap's
// size is whole, one more byte is a bomb decoded up to the cap.
func TestDecompressedCapExact(t *testing.T) {
	b := recBuild(t, CodecLZ4, 0, 0, []recRecord{{Value: make([]byte, 100000)}})
	whole := (&Decoder{ShowSecrets: true}).DecodeRecordBatches(b)
	size := int64(whole.Spaces[1].Size())
	if tr := (&Decoder{MaxDecompressed: size, KeepValue: 10}).DecodeRecordBatches(b); tr.Limits != 0 || recErrors(tr.Root) != nil {
		t.Errorf("at the cap: limits %b, %v", tr.Limits, recErrors(tr.Root))
	}
	tr := (&Decoder{MaxDecompressed: size - 1, KeepValue: 10}).DecodeRecordBatches(b)
	if tr.Limits != LimitDecompressed || tr.Spaces[1].Size() != int(size-1) {
		t.Errorf("one byte below: limits %b, %d bytes", tr.Limits, tr.Spaces[1].Size())
	}
}

// FuzzKeepValue: whatever the records' bytes, a decode keeping only a few
// bytes of each value is the whole decode but for the omitted tails.
//
//	go test ./protocol -run '^$' -fuzz FuzzKeepValue -fuzztime 60s
func FuzzKeepValue(f *testing.F) {
	var seed []byte
	for _, r := range keepRecords()[:4] {
		rec := []byte{0}
		rec = appendVarint(rec, r.TimestampDelta)
		rec = appendVarint(rec, r.OffsetDelta)
		rec = appendVarBytes(rec, r.Key)
		rec = appendVarBytes(rec, r.Value)
		rec = appendVarint(rec, int64(len(r.Headers)))
		for _, h := range r.Headers {
			rec = appendVarBytes(rec, h[0])
			rec = appendVarBytes(rec, h[1])
		}
		seed = append(appendVarint(seed, int64(len(rec))), rec...)
	}
	f.Add(seed, uint8(4), uint16(16))
	f.Add(seed[:len(seed)/2], uint8(2), uint16(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, uint8(1), uint16(3))
	f.Fuzz(func(t *testing.T, payload []byte, count uint8, keep uint16) {
		b := rawBatch(t, CodecSnappy, int32(count), payload) // snappy: quick to make
		whole := (&Decoder{MaxDecompressed: fuzzCap}).DecodeRecordBatches(b)
		kept := (&Decoder{MaxDecompressed: fuzzCap, KeepValue: int(keep%300) + 1}).DecodeRecordBatches(b)
		sameButOmitted(t, whole.Root, kept.Root, int(keep%300)+1, "")
	})
}
