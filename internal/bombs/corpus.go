package bombs

import (
	"bytes"
	"fmt"
	"math/rand/v2"
)

// Scale sizes the corpus: Full is what issue 12 measured, Small what
// tests run (with caps lowered to match).
type Scale struct {
	Huge   int64 // one bomb's decompressed size (the issue: 1 and 4 GiB)
	Big    int64 // a valid record's value (the issue: 250 MiB)
	Medium int64 // each of many bombs in a frame
	Frames int   // frames of the many-frame captures (the issue: 64)
	Fan    int   // wrappers per level of the nested legacy set (the issue: 1000)
}

// Full is the corpus: 1 and 4 GiB bombs, 250 MiB records in 64
// frames, three gzip levels of 1000 wrappers.
var Full = Scale{Huge: 4 << 30, Big: 250 << 20, Medium: 32 << 20, Frames: 64, Fan: 1000}

// Small is the corpus the tests run, with --max-decompressed 16MiB.
var Small = Scale{Huge: 256 << 20, Big: 12 << 20, Medium: 4 << 20, Frames: 8, Fan: 60}

// Capture is one capture of the corpus: Exchanges builds its exchanges,
// the last of which is always an ordinary small Produce (the rest of the
// capture must still be decoded after a bomb).
type Capture struct {
	Name  string
	About string
	// Inflates is the largest decompressed size of one frame's records,
	// all batches together (what a cap compares with); 0 for captures
	// whose records are not compressed.
	Inflates  int64
	Exchanges func() []Exchange
}

// Pcap builds the capture's pcap file.
func (c Capture) Pcap() []byte {
	var b bytes.Buffer
	if err := WritePcap(&b, c.Exchanges()); err != nil {
		panic("bombs: " + err.Error()) // writing to memory does not fail
	}
	return b.Bytes()
}

// oneRecord is the content of a batch of one record whose value is n
// zero bytes.
func oneRecord(n int64) Stream { return Records(Record{Key: []byte("k"), ValueZeros: n}) }

// produceAndFetch returns a Produce exchange whose request carries each
// of the batches in partitions of topic "bombs", then a Fetch exchange
// whose response carries them, then an ordinary Produce.
func produceAndFetch(corr int32, batches ...[]byte) []Exchange {
	var parts []Partition
	for i, b := range batches {
		parts = append(parts, Partition{Topic: "bombs", Index: int32(i), Records: b})
	}
	return []Exchange{
		{ProduceRequest(3, corr, parts), ProduceResponse(corr, parts)},
		{FetchRequest(corr+1, parts), FetchResponse(corr+1, parts)},
	}
}

// tail is the ordinary exchange every capture ends with: a Produce of
// one gzip batch of three small records.
func tail(corr int32) Exchange {
	recs := Records(Record{Key: []byte("a"), Value: []byte("after the bombs")},
		Record{Key: []byte("b"), Value: []byte("still decoded")}, Record{Value: []byte("3")})
	b := Batch{Codec: GzipC, Count: 3, Payload: Gzip(recs, nil)}.Encode()
	parts := []Partition{{Topic: "after", Index: 0, Records: b}}
	return Exchange{ProduceRequest(3, corr, parts), ProduceResponse(corr, parts)}
}

func u64(v uint64) *uint64 { return &v }
func u32(v uint32) *uint32 { return &v }

// Corpus returns the hostile captures at scale s.
func Corpus(s Scale) []Capture {
	one := func(codec int, payload []byte) []byte {
		return Batch{Codec: codec, Count: 1, Payload: payload}.Encode()
	}
	single := func(name, about string, inflates int64, batch func() []byte) Capture {
		return Capture{Name: name, About: about, Inflates: inflates, Exchanges: func() []Exchange {
			return append(produceAndFetch(1, batch()), tail(3))
		}}
	}
	caps := []Capture{
		{
			Name: fmt.Sprintf("zstd-%dx%s", s.Frames, sizeName(s.Big)),
			About: fmt.Sprintf("%d Produce requests, each batch one zstd record of %s (the issue's out-of-memory capture)",
				s.Frames, sizeName(s.Big)),
			Inflates: oneRecord(s.Big).Size(),
			Exchanges: func() []Exchange {
				b := one(ZstdC, Zstd(oneRecord(s.Big), nil))
				var exs []Exchange
				for i := range s.Frames {
					parts := []Partition{{Topic: "big", Index: 0, Records: b}}
					exs = append(exs, Exchange{ProduceRequest(3, int32(i+1), parts), ProduceResponse(int32(i+1), parts)})
				}
				return append(exs, tail(int32(s.Frames+1)))
			},
		},
	}
	for _, n := range []int{1, 4, 16} {
		caps = append(caps, Capture{
			Name:     fmt.Sprintf("gzip-%s-x%d", sizeName(s.Big), n),
			About:    fmt.Sprintf("%d Produce requests, each batch one gzip record of %s (valid: memory must not grow with them)", n, sizeName(s.Big)),
			Inflates: oneRecord(s.Big).Size(),
			Exchanges: func() []Exchange {
				b := one(GzipC, Gzip(oneRecord(s.Big), nil))
				var exs []Exchange
				for i := range n {
					parts := []Partition{{Topic: "big", Index: 0, Records: b}}
					exs = append(exs, Exchange{ProduceRequest(3, int32(i+1), parts), ProduceResponse(int32(i+1), parts)})
				}
				return append(exs, tail(int32(n+1)))
			},
		})
	}
	caps = append(caps, Capture{
		Name: fmt.Sprintf("gzip-1MiB-batches-x%d", 2*s.Frames),
		About: fmt.Sprintf("%d Produce requests and %d Fetch responses of a gzip batch of 1000 records of 1 KiB text "+
			"(ordinary traffic, as capgen's benchmark captures: the memory of a valid capture)", 2*s.Frames, 2*s.Frames),
		Inflates: 0,
		Exchanges: func() []Exchange {
			// Text values that compress as logs do (about 1.3 to 1), from a
			// fixed seed.
			rng := rand.New(rand.NewPCG(12, 12))
			var recs []Record
			for i := range 1000 {
				v := make([]byte, 1024)
				const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 ={}:,"
				for j := range v {
					v[j] = alphabet[rng.IntN(len(alphabet))]
				}
				recs = append(recs, Record{Key: fmt.Appendf(nil, "key-%d", i), Value: v})
			}
			b := Batch{Codec: GzipC, Count: 1000, Payload: Gzip(Records(recs...), nil)}.Encode()
			var exs []Exchange
			for i := range 2 * s.Frames {
				parts := []Partition{{Topic: "orders", Index: int32(i % 6), Records: b}}
				exs = append(exs, Exchange{ProduceRequest(3, int32(2*i+1), parts), ProduceResponse(int32(2*i+1), parts)},
					Exchange{FetchRequest(int32(2*i+2), parts), FetchResponse(int32(2*i+2), parts)})
			}
			return append(exs, tail(int32(4*s.Frames+1)))
		},
	})
	huge := oneRecord(s.Huge)
	caps = append(caps,
		single("gzip-"+sizeName(s.Huge), "one gzip batch inflating to "+sizeName(s.Huge), huge.Size(),
			func() []byte { return one(GzipC, Gzip(huge, nil)) }),
		single("lz4-"+sizeName(s.Huge), "one LZ4 batch inflating to "+sizeName(s.Huge), huge.Size(),
			func() []byte { return one(LZ4C, LZ4(huge, nil)) }),
		single("zstd-"+sizeName(s.Huge), "one zstd batch inflating to "+sizeName(s.Huge)+", its frame content size saying so", huge.Size(),
			func() []byte { return one(ZstdC, Zstd(huge, u64(uint64(huge.Size())))) }),
		single("xerial-"+sizeName(s.Huge/8), "one snappy (xerial) batch inflating to "+sizeName(s.Huge/8), oneRecord(s.Huge/8).Size(),
			func() []byte { return one(Snappy, Xerial(oneRecord(s.Huge/8))) }),
		single("snappy-raw-"+sizeName(s.Huge/8), "one raw snappy batch inflating to "+sizeName(s.Huge/8), oneRecord(s.Huge/8).Size(),
			func() []byte { return one(Snappy, RawSnappy(oneRecord(s.Huge/8), nil)) }),
		single("gzip-isize-lie", "a gzip batch inflating to "+sizeName(s.Huge)+" whose trailer claims 1 KiB", huge.Size(),
			func() []byte { return one(GzipC, Gzip(huge, u32(1024))) }),
		single("zstd-fcs-lie", "a zstd batch inflating to "+sizeName(s.Huge)+" whose frame header claims 1 KiB", huge.Size(),
			func() []byte { return one(ZstdC, Zstd(huge, u64(1024))) }),
		single("lz4-size-lie", "an LZ4 batch inflating to "+sizeName(s.Huge)+" whose frame descriptor claims 1 KiB", huge.Size(),
			func() []byte { return one(LZ4C, LZ4(huge, u64(1024))) }),
		single("snappy-raw-length-lie", "a raw snappy block of 1 KiB claiming to inflate to 4 GiB", 4<<30-1,
			func() []byte { return one(Snappy, RawSnappy(oneRecord(1000), u64(4<<30-1))) }),
		single("record-count-lie", "a gzip batch of minimal records claiming 2147483647 of them, inflating to "+sizeName(s.Huge/4), s.Huge/4,
			func() []byte {
				rec := Records(Record{Value: []byte{}}).Bytes() // 7 bytes
				n := s.Huge / 4 / int64(len(rec))
				var st Stream
				st = st.Lit(bytes.Repeat(rec, int(min(n, 1<<20))))
				payload := Gzip(repeatStream(st, n/(1<<20)), nil)
				return Batch{Codec: GzipC, Count: 1<<31 - 1, Payload: payload}.Encode()
			}),
		single("record-length-lie", "a zstd batch whose record claims 1 GiB in a few bytes", 64,
			func() []byte {
				return one(ZstdC, Zstd(Records(Record{Value: []byte("x"), Length: 1 << 30}), nil))
			}),
		Capture{
			Name:     fmt.Sprintf("zstd-many-%s", sizeName(s.Medium)),
			About:    fmt.Sprintf("%d Produce requests of 16 zstd batches of %s each (many medium bombs)", min(s.Frames, 16), sizeName(s.Medium)),
			Inflates: 16 * oneRecord(s.Medium).Size(),
			Exchanges: func() []Exchange {
				b := one(ZstdC, Zstd(oneRecord(s.Medium), nil))
				var exs []Exchange
				for i := range min(s.Frames, 16) {
					var parts []Partition
					for p := range 16 {
						parts = append(parts, Partition{Topic: "many", Index: int32(p), Records: b})
					}
					exs = append(exs, Exchange{ProduceRequest(3, int32(i+1), parts), ProduceResponse(int32(i+1), parts)})
				}
				return append(exs, tail(int32(len(exs)+1)))
			},
		},
	)
	for _, magic := range []int8{1, 0} {
		name := "legacy-nested-gzip"
		if magic == 0 {
			name += "-magic0"
		}
		caps = append(caps, Capture{
			Name:     name,
			About:    fmt.Sprintf("a legacy (magic %d) message set nesting three gzip levels of %d messages each, in a Produce request and a Fetch response", magic, s.Fan),
			Inflates: 0, // nested: see the test
			Exchanges: func() []Exchange {
				set := NestedGzip(magic, 3, s.Fan, []byte("v"))
				parts := []Partition{{Topic: "legacy", Index: 0, Records: set}}
				return []Exchange{
					{ProduceRequest(2, 1, parts), ProduceResponse(1, parts)},
					{FetchRequest(2, parts), FetchResponse(2, parts)},
					tail(3),
				}
			},
		})
	}
	return caps
}

// repeatStream is s repeated n times (at least once).
func repeatStream(s Stream, n int64) Stream {
	var out Stream
	for range max(n, 1) {
		out = append(out, s...)
	}
	return out
}

// sizeName spells n as "250MiB" or "4GiB".
func sizeName(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}
