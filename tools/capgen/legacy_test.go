package main

import (
	"encoding/binary"
	"hash/crc32"
	"testing"
)

// legacyMessage encodes one magic 0 or 1 message entry with offset 0.
func legacyMessage(magic, attr byte, key, val []byte) []byte {
	m := []byte{0, 0, 0, 0, magic, attr}
	if magic == 1 {
		m = binary.BigEndian.AppendUint64(m, 1700000000000)
	}
	m = appendLegacyBytes(m, key)
	m = appendLegacyBytes(m, val)
	binary.BigEndian.PutUint32(m, crc32.ChecksumIEEE(m[4:]))
	e := binary.BigEndian.AppendUint64(nil, 0)
	e = binary.BigEndian.AppendUint32(e, uint32(len(m)))
	return append(e, m...)
}

// entries lists the offsets of a message set and checks every CRC.
func entries(t *testing.T, set []byte) (offs []int64, msgs [][]byte) {
	t.Helper()
	for len(set) > 0 {
		size := int(binary.BigEndian.Uint32(set[8:]))
		m := set[12 : 12+size]
		if crc32.ChecksumIEEE(m[4:]) != binary.BigEndian.Uint32(m) {
			t.Fatalf("bad CRC at offset %d", int64(binary.BigEndian.Uint64(set)))
		}
		offs = append(offs, int64(binary.BigEndian.Uint64(set)))
		msgs = append(msgs, m)
		set = set[12+size:]
	}
	return offs, msgs
}

func TestAssignOffsetsUncompressed(t *testing.T) {
	set := append(legacyMessage(1, 0, []byte("a"), []byte("1")), legacyMessage(1, 0, nil, []byte("2"))...)
	out, n, err := assignOffsets(set, 5)
	if err != nil || n != 2 {
		t.Fatalf("assignOffsets = %d, %v", n, err)
	}
	offs, _ := entries(t, out)
	if len(offs) != 2 || offs[0] != 5 || offs[1] != 6 {
		t.Fatalf("offsets %v, want [5 6]", offs)
	}
}

func TestAssignOffsetsCompressedMagic0(t *testing.T) {
	for _, codec := range []byte{1, 2} {
		var inner []byte
		for _, v := range []string{"x", "y", "z"} {
			inner = append(inner, legacyMessage(0, 0, nil, []byte(v))...)
		}
		z, err := compressLegacy(codec, inner)
		if err != nil {
			t.Fatal(err)
		}
		out, n, err := assignOffsets(legacyMessage(0, codec, nil, z), 10)
		if err != nil || n != 3 {
			t.Fatalf("codec %d: assignOffsets = %d, %v", codec, n, err)
		}
		offs, msgs := entries(t, out)
		if len(offs) != 1 || offs[0] != 12 {
			t.Fatalf("codec %d: wrapper offsets %v, want [12]", codec, offs)
		}
		_, rest, _ := legacyBytes(msgs[0][6:])
		val, _, _ := legacyBytes(rest)
		plain, err := decompressLegacy(codec, val)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := entries(t, plain); len(got) != 3 || got[0] != 10 || got[2] != 12 {
			t.Fatalf("codec %d: inner offsets %v, want [10 11 12]", codec, got)
		}
	}
}

func TestAssignOffsetsRejectsGarbage(t *testing.T) {
	for _, set := range [][]byte{
		{1, 2, 3},
		append(binary.BigEndian.AppendUint64(nil, 0), 0, 0, 1, 0), // size past the end
		legacyMessage(0, 1, nil, []byte("not gzip")),
	} {
		if _, _, err := assignOffsets(set, 0); err == nil {
			t.Errorf("assignOffsets(%x) succeeded", set)
		}
	}
}
