package protocol

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"
)

// Fuzz targets for the decoder, seeded from Kafka's vectors when
// ../shared is present and from hand-written frames. They assert: no
// panic, a node count bounded by the input size, every node's span inside
// its parent's (same space), siblings ordered, the root covering the input.
//
//	go test ./protocol -run '^$' -fuzz FuzzDecodeBody -fuzztime 30s

// nodeBudget bounds the nodes a decode may build from n input bytes: every
// node but a struct consumes at least one byte of its own, and structs nest
// at most maxDepth deep over the same bytes.
func nodeBudget(tree *Tree) int {
	total := 0
	for _, s := range tree.Spaces {
		total += len(s.Data)
	}
	return 2*maxDepth*(total+1) + 64
}

func checkFuzzTree(t *testing.T, tree *Tree) {
	t.Helper()
	if p := spanProblem(tree); p != "" {
		t.Fatal(p)
	}
	if n, max := countNodes(tree.Root), nodeBudget(tree); n > max {
		t.Fatalf("%d nodes for %d input bytes (budget %d)", n, len(tree.Spaces[0].Data), max)
	}
	if tree.Err != nil && (tree.Err.Off < 0 || tree.Err.Off > len(tree.Spaces[tree.Err.Space].Data)) {
		t.Fatalf("error offset %d outside the input: %v", tree.Err.Off, tree.Err)
	}
}

func addVectorSeeds(f *testing.F, add func(v *vector, b []byte)) {
	dir, ok := findShared()
	if !ok {
		return
	}
	vs, err := readVectors(dir)
	if err != nil {
		f.Fatal(err)
	}
	for i := range vs {
		b, err := hex.DecodeString(vs[i].Hex)
		if err == nil && vs[i].APIKey != nil {
			add(&vs[i], b)
		}
	}
}

func FuzzDecodeBody(f *testing.F) {
	f.Add(int16(18), int16(3), false, unhex(f, "08 7530332d617070 04 312e30 00"))
	f.Add(int16(18), int16(4), false, unhex(f, "08 7530332d617070 04 312e30 01 63 05 68656c6c6f"))
	f.Add(int16(0), int16(9), false, unhex(f, "00 0001 00000064 02 0274 04 00000000 00 00 00000001 01 00 00000002 8927 616263"))
	f.Add(int16(18), int16(3), true, unhex(f, "0000 02 0012 0000 0004 00 00000000 02 00 01 01 01 08 0000000000000007"))
	f.Add(int16(1234), int16(0), false, []byte{1, 2, 3})
	addVectorSeeds(f, func(v *vector, b []byte) {
		f.Add(*v.APIKey, v.Version, v.Direction == "response", b)
	})
	f.Fuzz(func(t *testing.T, key, version int16, response bool, body []byte) {
		d := &Decoder{Records: len(body)%2 == 0}
		checkFuzzTree(t, d.DecodeBody(key, version, response, body))
	})
}

func FuzzDecodeFrame(f *testing.F) {
	f.Add(unhex(f, "00000013 0012 0000 01020304 0009 776972652d72656164"), false, int16(0), int16(0))
	f.Add(unhex(f, "0000001b 0012 0003 00000002 0003 753033 00 08 7530332d617070 04 312e30 00"), false, int16(0), int16(0))
	f.Add(unhex(f, "0000000a 00000001 0000 00000000"), true, int16(18), int16(2))
	addVectorSeeds(f, func(v *vector, b []byte) {
		if v.Direction != "request" {
			return
		}
		// Wrap the body in a frame with header v1 or v2.
		hv := RequestHeaderVersion(*v.APIKey, v.Version)
		frame := binary.BigEndian.AppendUint32(nil, 0)
		frame = binary.BigEndian.AppendUint16(frame, uint16(*v.APIKey))
		frame = binary.BigEndian.AppendUint16(frame, uint16(v.Version))
		frame = binary.BigEndian.AppendUint32(frame, 7)
		if hv >= 1 {
			frame = append(frame, 0, 1, 'k')
		}
		if hv >= 2 {
			frame = append(frame, 0)
		}
		frame = append(frame, b...)
		binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
		f.Add(frame, false, int16(0), int16(0))
	})
	f.Fuzz(func(t *testing.T, frame []byte, response bool, key, version int16) {
		var tree *Tree
		if response {
			tree = DecodeResponse(frame, key, version)
		} else {
			tree = DecodeRequest(frame)
			if len(frame) >= 4 {
				// ParseRequestHeader agrees with the tree on the header.
				h, err := ParseRequestHeader(frame[4:])
				_, hdr, _ := FrameParts(tree.Root)
				if err == nil && hdr != nil && hdr.Flags&FlagError == 0 && len(frame) >= 4+h.Len {
					if hdr.Len != h.Len || hdr.Child("CorrelationId").Int != int64(h.CorrelationID) {
						t.Fatalf("ParseRequestHeader %+v disagrees with header node [%d,%d)", h, hdr.Off, hdr.End())
					}
				}
			}
		}
		checkFuzzTree(t, tree)
	})
}

func FuzzPrimitives(f *testing.F) {
	for _, s := range []string{"ac02", "d804", "0003636174", "04636174", "00", "01", "ffff", "ffffffff",
		"7fffffff00", "ffffffffffffffffff8101", "02 0002cafe 6305 68656c6c6f", "8080808080 00"} {
		f.Add(unhex(f, s))
	}
	addVectorSeeds(f, func(_ *vector, b []byte) { f.Add(b) })
	f.Fuzz(func(t *testing.T, b []byte) {
		ops := []func(r *Reader) int{ // each returns the bytes it claims to hold, or -1
			func(r *Reader) int { r.Int8(); return -1 },
			func(r *Reader) int { r.Int16(); return -1 },
			func(r *Reader) int { r.Uint16(); return -1 },
			func(r *Reader) int { r.Int32(); return -1 },
			func(r *Reader) int { r.Uint32(); return -1 },
			func(r *Reader) int { r.Int64(); return -1 },
			func(r *Reader) int { r.Float64(); return -1 },
			func(r *Reader) int { r.Bool(); return -1 },
			func(r *Reader) int { r.Uuid(); return -1 },
			func(r *Reader) int { r.Varint(); return -1 },
			func(r *Reader) int { r.Varlong(); return -1 },
			func(r *Reader) int { r.UnsignedVarint(); return -1 },
			func(r *Reader) int { return len(r.String()) },
			func(r *Reader) int { s, _ := r.NullableString(); return len(s) },
			func(r *Reader) int { return len(r.CompactString()) },
			func(r *Reader) int { s, _ := r.CompactNullableString(); return len(s) },
			func(r *Reader) int { return len(r.Bytes()) },
			func(r *Reader) int { return len(r.NullableBytes()) },
			func(r *Reader) int { return len(r.CompactBytes()) },
			func(r *Reader) int { return len(r.CompactNullableBytes()) },
			func(r *Reader) int { return 3 * r.ArrayLen(3) },
			func(r *Reader) int { return 3 * r.CompactArrayLen(3) },
			func(r *Reader) int { return 2 * r.TaggedFieldCount() },
			func(r *Reader) int { r.TaggedFields(nil); return -1 },
		}
		for i, op := range ops {
			r := NewReader(b)
			before := r.Remaining()
			claimed := op(r)
			if r.Offset() < 0 || r.Offset() > len(b) {
				t.Fatalf("op %d: offset %d outside [0,%d]", i, r.Offset(), len(b))
			}
			if r.Err() != nil {
				if r.ErrOffset() < 0 || r.ErrOffset() > len(b) {
					t.Fatalf("op %d: error offset %d", i, r.ErrOffset())
				}
				if !errors.Is(r.Err(), ErrShort) && !errors.Is(r.Err(), ErrLength) &&
					!errors.Is(r.Err(), ErrNegative) && !errors.Is(r.Err(), ErrVarint) {
					t.Fatalf("op %d: error %v is no sentinel", i, r.Err())
				}
				off := r.Offset()
				r.Int64()
				if r.Offset() != off {
					t.Fatalf("op %d: a read after the failure moved the cursor", i)
				}
				continue
			}
			if claimed > before {
				t.Fatalf("op %d: holds %d bytes with only %d in the input", i, claimed, before)
			}
			if r.Offset() == 0 {
				t.Fatalf("op %d: succeeded without consuming a byte", i)
			}
		}
	})
}

// BenchmarkDecodeBody decodes a Produce v9 request (one topic, three
// partitions with 64-byte record sets) and a Fetch v12 response (one topic,
// three partitions).
func BenchmarkDecodeBody(b *testing.B) {
	for _, c := range benchBodies() {
		if tree := DecodeBody(c.key, c.ver, c.response, c.body); tree.Err != nil {
			b.Fatalf("%s: %v", c.name, tree.Err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				DecodeBody(c.key, c.ver, c.response, c.body)
			}
		})
	}
}

type benchBody struct {
	name     string
	key, ver int16
	response bool
	body     []byte
}

func benchBodies() []benchBody {
	records := make([]byte, 64)
	produce := []byte{0x00, 0x00, 0x01, 0x00, 0x00, 0x75, 0x30, 0x02, 0x07}
	produce = append(produce, "orders"...)
	produce = append(produce, 0x04)
	for p := 0; p < 3; p++ {
		produce = binary.BigEndian.AppendUint32(produce, uint32(p))
		produce = append(produce, byte(len(records)+1))
		produce = append(produce, records...)
		produce = append(produce, 0)
	}
	produce = append(produce, 0, 0)

	// FetchResponse v12: throttle, error, session id, 1 topic "orders",
	// 3 partitions (index, error, hw, lso, log start, aborted null,
	// preferred replica, records), tags.
	fetch := binary.BigEndian.AppendUint32(nil, 0)
	fetch = append(fetch, 0, 0)
	fetch = binary.BigEndian.AppendUint32(fetch, 77)
	fetch = append(fetch, 0x02, 0x07)
	fetch = append(fetch, "orders"...)
	fetch = append(fetch, 0x04)
	for p := 0; p < 3; p++ {
		fetch = binary.BigEndian.AppendUint32(fetch, uint32(p))
		fetch = append(fetch, 0, 0)
		fetch = binary.BigEndian.AppendUint64(fetch, 100)
		fetch = binary.BigEndian.AppendUint64(fetch, 100)
		fetch = binary.BigEndian.AppendUint64(fetch, 0)
		fetch = append(fetch, 0x00)
		fetch = binary.BigEndian.AppendUint32(fetch, 0xffffffff)
		fetch = append(fetch, byte(len(records)+1))
		fetch = append(fetch, records...)
		fetch = append(fetch, 0)
	}
	fetch = append(fetch, 0, 0)

	return []benchBody{
		{"ProduceRequest_v9", 0, 9, false, produce},
		{"FetchResponse_v12", 1, 12, true, fetch},
	}
}
