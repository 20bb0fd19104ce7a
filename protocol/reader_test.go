package protocol

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.NewReplacer(" ", "", "\n", "", "\t", "").Replace(s))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// primCase reads one primitive from in and checks the value, the bytes
// consumed and the error.
type primCase struct {
	name    string
	in      string // hex
	read    func(r *Reader) any
	want    any
	used    int   // bytes consumed on success
	err     error // sentinel, nil for success
	errOff  int
	errText string // substring of the error text
}

func TestReaderPrimitives(t *testing.T) {
	i8 := func(r *Reader) any { return r.Int8() }
	i16 := func(r *Reader) any { return r.Int16() }
	u16 := func(r *Reader) any { return r.Uint16() }
	i32 := func(r *Reader) any { return r.Int32() }
	u32 := func(r *Reader) any { return r.Uint32() }
	i64 := func(r *Reader) any { return r.Int64() }
	f64 := func(r *Reader) any { return r.Float64() }
	boo := func(r *Reader) any { return r.Bool() }
	uid := func(r *Reader) any { return r.Uuid() }
	vi := func(r *Reader) any { return r.Varint() }
	vl := func(r *Reader) any { return r.Varlong() }
	uv := func(r *Reader) any { return r.UnsignedVarint() }
	str := func(r *Reader) any { return r.String() }
	nstr := func(r *Reader) any { s, null := r.NullableString(); return [2]any{s, null} }
	cstr := func(r *Reader) any { return r.CompactString() }
	cnstr := func(r *Reader) any { s, null := r.CompactNullableString(); return [2]any{s, null} }
	byt := func(r *Reader) any { return hex.EncodeToString(r.Bytes()) }
	nbyt := func(r *Reader) any { b := r.NullableBytes(); return [2]any{hex.EncodeToString(b), b == nil} }
	cbyt := func(r *Reader) any { return hex.EncodeToString(r.CompactBytes()) }
	cnbyt := func(r *Reader) any { b := r.CompactNullableBytes(); return [2]any{hex.EncodeToString(b), b == nil} }
	arr4 := func(r *Reader) any { return r.ArrayLen(4) }
	carr4 := func(r *Reader) any { return r.CompactArrayLen(4) }
	tfc := func(r *Reader) any { return r.TaggedFieldCount() }
	tf := func(r *Reader) any {
		var got []string
		r.TaggedFields(func(tag uint32, data []byte) {
			got = append(got, hex.EncodeToString([]byte{byte(tag)})+":"+hex.EncodeToString(data))
		})
		return strings.Join(got, ",")
	}

	cases := []primCase{
		{name: "int8", in: "ff", read: i8, want: int8(-1), used: 1},
		{name: "int8 short", in: "", read: i8, err: ErrShort, errText: "need 1 bytes, 0 left"},
		{name: "int16", in: "8001", read: i16, want: int16(-32767), used: 2},
		{name: "int16 short", in: "80", read: i16, err: ErrShort},
		{name: "uint16", in: "ffff", read: u16, want: uint16(65535), used: 2},
		{name: "uint16 short", in: "ff", read: u16, err: ErrShort},
		{name: "int32", in: "00000013", read: i32, want: int32(19), used: 4},
		{name: "int32 short", in: "000000", read: i32, err: ErrShort},
		{name: "uint32", in: "fffffffe", read: u32, want: uint32(math.MaxUint32 - 1), used: 4},
		{name: "uint32 short", in: "ff", read: u32, err: ErrShort},
		{name: "int64", in: "8000000000000000", read: i64, want: int64(math.MinInt64), used: 8},
		{name: "int64 short", in: "80000000000000", read: i64, err: ErrShort},
		{name: "float64", in: "3ff8000000000000", read: f64, want: 1.5, used: 8},
		{name: "float64 short", in: "3ff8", read: f64, err: ErrShort},
		{name: "bool true", in: "01", read: boo, want: true, used: 1},
		{name: "bool false", in: "00", read: boo, want: false, used: 1},
		{name: "bool short", in: "", read: boo, err: ErrShort},
		{name: "uuid", in: "000102030405060708090a0b0c0d0e0f", read: uid,
			want: [16]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, used: 16},
		{name: "uuid short", in: "0001020304050607", read: uid, err: ErrShort},

		// Varints: UNSIGNED_VARINT 300 = AC 02, VARINT 300 = D8 04.
		{name: "uvarint 300", in: "ac02", read: uv, want: uint32(300), used: 2},
		{name: "uvarint 0", in: "00", read: uv, want: uint32(0), used: 1},
		{name: "uvarint max", in: "ffffffff0f", read: uv, want: uint32(math.MaxUint32), used: 5},
		{name: "uvarint sixth byte", in: "ffffffff8f01", read: uv, err: ErrVarint, errText: "longer than 5 bytes"},
		{name: "uvarint unterminated", in: "ff", read: uv, err: ErrVarint, errText: "runs past the end"},
		{name: "varint 300", in: "d804", read: vi, want: int32(300), used: 2},
		{name: "varint -1", in: "01", read: vi, want: int32(-1), used: 1},
		{name: "varint min", in: "ffffffff0f", read: vi, want: int32(math.MinInt32), used: 5},
		{name: "varint overlong", in: "8080808080 00", read: vi, err: ErrVarint},
		{name: "varlong 300", in: "d804", read: vl, want: int64(300), used: 2},
		{name: "varlong min", in: "ffffffffffffffffff01", read: vl, want: int64(math.MinInt64), used: 10},
		{name: "varlong eleventh byte", in: "ffffffffffffffffff8101", read: vl, err: ErrVarint, errText: "longer than 10 bytes"},

		// Strings: STRING "cat" = 00 03 63 61 74, COMPACT_STRING "cat" = 04 63 61 74.
		{name: "string cat", in: "0003636174", read: str, want: "cat", used: 5},
		{name: "string empty", in: "0000", read: str, want: "", used: 2},
		{name: "string null not nullable", in: "ffff", read: str, err: ErrNegative, errText: "not nullable"},
		{name: "string negative", in: "fffe", read: str, err: ErrNegative, errText: "invalid negative length -2"},
		{name: "string too long", in: "0005636174", read: str, err: ErrLength, errText: "length 5 exceeds the 3 bytes left"},
		{name: "nullable string null", in: "ffff", read: nstr, want: [2]any{"", true}, used: 2},
		{name: "nullable string cat", in: "0003636174", read: nstr, want: [2]any{"cat", false}, used: 5},
		{name: "nullable string hostile", in: "7fff00", read: nstr, err: ErrLength, errText: "length 32767 exceeds the 1 bytes left"},
		{name: "compact string cat", in: "04636174", read: cstr, want: "cat", used: 4},
		{name: "compact string empty", in: "01", read: cstr, want: "", used: 1},
		{name: "compact string null not nullable", in: "00", read: cstr, err: ErrNegative},
		{name: "compact string huge", in: "ffffffff0f", read: cstr, err: ErrLength},
		{name: "compact nullable string null", in: "00", read: cnstr, want: [2]any{"", true}, used: 1},
		{name: "compact nullable string empty", in: "01", read: cnstr, want: [2]any{"", false}, used: 1},
		{name: "compact nullable string hostile", in: "0a6162", read: cnstr, err: ErrLength, errText: "length 9 exceeds the 2 bytes left"},

		// Bytes.
		{name: "bytes", in: "00000002beef", read: byt, want: "beef", used: 6},
		{name: "bytes null not nullable", in: "ffffffff", read: byt, err: ErrNegative},
		{name: "bytes hostile", in: "7fffffff00", read: byt, err: ErrLength, errText: "length 2147483647 exceeds the 1 bytes left"},
		{name: "nullable bytes null", in: "ffffffff", read: nbyt, want: [2]any{"", true}, used: 4},
		{name: "nullable bytes empty", in: "00000000", read: nbyt, want: [2]any{"", false}, used: 4},
		{name: "nullable bytes negative", in: "fffffff0", read: nbyt, err: ErrNegative},
		{name: "compact bytes", in: "03beef", read: cbyt, want: "beef", used: 3},
		{name: "compact bytes null not nullable", in: "00", read: cbyt, err: ErrNegative},
		{name: "compact nullable bytes null", in: "00", read: cnbyt, want: [2]any{"", true}, used: 1},
		{name: "compact nullable bytes hostile", in: "8001", read: cnbyt, err: ErrLength},

		// Arrays: a count needs count*minElem bytes.
		{name: "array 2", in: "00000002 0000000100000002", read: arr4, want: 2, used: 4},
		{name: "array null", in: "ffffffff", read: arr4, want: -1, used: 4},
		{name: "array negative", in: "fffffffe", read: arr4, err: ErrNegative},
		{name: "array hostile count", in: "7fffffff 00000000", read: arr4, err: ErrLength,
			errText: "array count 2147483647 needs at least 8589934588 bytes, 4 left"},
		{name: "compact array 2", in: "03 0000000100000002", read: carr4, want: 2, used: 1},
		{name: "compact array null", in: "00", read: carr4, want: -1, used: 1},
		{name: "compact array hostile", in: "03 00000001", read: carr4, err: ErrLength,
			errText: "array count 2 needs at least 8 bytes, 4 left"},

		// Tagged fields.
		{name: "tagged count 0", in: "00 05", read: tfc, want: 0, used: 1},
		{name: "tagged count 1", in: "01 0000", read: tfc, want: 1, used: 1},
		{name: "tagged count 128", in: "8001" + strings.Repeat("0000", 128), read: tfc, want: 128, used: 2},
		{name: "tagged count short", in: "", read: tfc, err: ErrVarint, errText: "runs past the end"},
		{name: "tagged none", in: "00", read: tf, want: "", used: 1},
		{name: "tagged two", in: "02 0002cafe 6305 68656c6c6f", read: tf, want: "00:cafe,63:68656c6c6f", used: 12},
		{name: "tagged hostile count", in: "7f 0000", read: tf, err: ErrLength, errText: "tagged field count 127"},
		{name: "tagged hostile size", in: "01 0009cafe", read: tf, err: ErrLength, errOff: 2, errText: "length 9 exceeds the 2 bytes left"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := unhex(t, c.in)
			r := NewReader(in)
			got := c.read(r)
			if c.err != nil {
				if !errors.Is(r.Err(), c.err) {
					t.Fatalf("err = %v, want %v", r.Err(), c.err)
				}
				if r.ErrOffset() != c.errOff {
					t.Errorf("err offset = %d, want %d", r.ErrOffset(), c.errOff)
				}
				if !strings.Contains(r.Err().Error(), c.errText) {
					t.Errorf("err text %q lacks %q", r.Err(), c.errText)
				}
				// Sticky: a later read fails too and returns zero.
				if v := r.Int8(); v != 0 || r.Err() == nil {
					t.Errorf("read after failure returned %d, err %v", v, r.Err())
				}
				return
			}
			if r.Err() != nil {
				t.Fatalf("unexpected err %v at %d", r.Err(), r.ErrOffset())
			}
			if got != c.want {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
			if r.Offset() != c.used {
				t.Errorf("consumed %d bytes, want %d", r.Offset(), c.used)
			}
		})
	}
}

func TestReaderLimitAndReset(t *testing.T) {
	b := unhex(t, "0003636174 0003646f67")
	var r Reader
	r.Reset(b, 5, 10)
	if s := r.String(); s != "dog" || r.Err() != nil {
		t.Fatalf("String at 5 = %q, %v", s, r.Err())
	}
	r.Reset(b, 0, 10)
	old := r.SetEnd(4)
	if s := r.String(); r.Err() == nil {
		t.Fatalf("String inside a 4-byte limit = %q, want an error", s)
	}
	if !errors.Is(r.Err(), ErrLength) || r.ErrOffset() != 0 {
		t.Errorf("err %v at %d, want ErrLength at 0", r.Err(), r.ErrOffset())
	}
	if old != 10 {
		t.Errorf("old end %d, want 10", old)
	}
}

func TestReaderBytesAlias(t *testing.T) {
	b := unhex(t, "00000002beef")
	r := NewReader(b)
	got := r.Bytes()
	if !bytes.Equal(got, b[4:]) || &got[0] != &b[4] {
		t.Fatalf("Bytes does not alias the input")
	}
	if cap(got) != 2 {
		t.Errorf("cap %d lets an append overwrite the input", cap(got))
	}
}

func TestReaderNoAllocs(t *testing.T) {
	b := unhex(t, "01 0002 00000003 0000000000000004 3ff0000000000000 000102030405060708090a0b0c0d0e0f ac02 d804 00000002beef")
	r := NewReader(b)
	allocs := testing.AllocsPerRun(100, func() {
		r.Reset(b, 0, len(b))
		r.Int8()
		r.Int16()
		r.Int32()
		r.Int64()
		r.Float64()
		r.Uuid()
		r.UnsignedVarint()
		r.Varint()
		r.Bytes()
		if r.Err() != nil || r.Remaining() != 0 {
			t.Fatalf("err %v, %d left", r.Err(), r.Remaining())
		}
	})
	if allocs != 0 {
		t.Errorf("fixed-size reads allocate %v times per run", allocs)
	}
}

// TestNoTagsPastEnd: the one-byte read of an empty tagged-field buffer
// (Reader.noTags) fails where TaggedFieldCount's check does. Inside a
// known tagged field, the field's data end narrows the reader's end but
// not its limit, so an ApiVersions v3 response whose SupportedFeatures
// tag says 22 bytes for its 23 reads the element's last int16 up to
// that end and then finds its empty buffer past it: the decode fails
// there, full and sparse, as it did before the one-byte read.
func TestNoTagsPastEnd(t *testing.T) {
	body := unhex(t, "0000 02 0012 0000 0005 00"+ // error, ApiKeys: ApiVersions 0-5
		"00000000"+ // throttle
		"04"+ // 4 tagged fields
		"00 16 02 11 6d657461646174612e76657273696f6e 0001 0014 00"+ // tag 0: 22 bytes declared, 23 written
		"01 08 000000000000002a"+ // tag 1: epoch 42
		"02 17 02 11 6d657461646174612e76657273696f6e 0014 0001 00"+ // tag 2
		"03 01 01") // tag 3
	want := "ApiVersionsResponse v3 supportedFeatures[0]: tagged field count 0 needs at least 0 bytes, -1 left (offset 0x27)"
	for _, d := range []Decoder{{}, {Sparse: true}, {Sparse: true, SparseDrop: NewRoleSet(RoleAPIRanges)}} {
		tr := d.DecodeBody(KeyApiVersions, 3, true, body)
		if tr.Err == nil || tr.Err.Error() != want {
			t.Errorf("sparse %v: error %v, want %s", d.Sparse, tr.Err, want)
		}
	}
}
