package bombs

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"

	"github.com/klauspost/compress/gzip"
)

// Codec numbers of the batch attributes (Kafka protocol guide, "Record
// Batch"; KIP-110 for zstd).
const (
	None   = 0
	GzipC  = 1
	Snappy = 2
	LZ4C   = 3
	ZstdC  = 4
)

// Record is one record of a magic 2 batch; a value of ValueZeros zero
// bytes when Value is nil and ValueZeros > 0.
type Record struct {
	Key        []byte // nil: null
	Value      []byte
	ValueZeros int64
	// Length, when not 0, replaces the record's length field with a lie.
	Length int64
}

// Records encodes records as the (uncompressed) content of a magic 2
// batch: each a varint length, attributes, timestamp and offset deltas,
// key, value and an empty header array (Kafka protocol guide, "Record").
func Records(recs ...Record) Stream {
	var s Stream
	for i, r := range recs {
		head := []byte{0}                          // attributes
		head = binary.AppendVarint(head, int64(i)) // timestamp delta
		head = binary.AppendVarint(head, int64(i)) // offset delta
		if r.Key == nil {
			head = binary.AppendVarint(head, -1)
		} else {
			head = binary.AppendVarint(head, int64(len(r.Key)))
			head = append(head, r.Key...)
		}
		vlen := int64(len(r.Value))
		if r.Value == nil {
			vlen = r.ValueZeros
		}
		head = binary.AppendVarint(head, vlen)
		tail := []byte{0} // no headers
		length := int64(len(head)) + vlen + int64(len(tail))
		if r.Length != 0 {
			length = r.Length
		}
		s = s.Lit(append(binary.AppendVarint(nil, length), head...))
		if r.Value != nil {
			s = s.Lit(r.Value)
		} else {
			s = s.Zeros(r.ValueZeros)
		}
		s = s.Lit(tail)
	}
	return s
}

// Batch is a magic 2 record batch.
type Batch struct {
	Codec   int
	Count   int32 // the record count field
	Payload []byte
}

// Encode writes the batch with its length and a correct CRC-32C.
func (b Batch) Encode() []byte {
	out := binary.BigEndian.AppendUint64(nil, 0) // base offset
	out = binary.BigEndian.AppendUint32(out, 0)  // batch length, set below
	out = binary.BigEndian.AppendUint32(out, 0)  // partition leader epoch
	out = append(out, 2)                         // magic
	out = binary.BigEndian.AppendUint32(out, 0)  // crc, set below
	out = binary.BigEndian.AppendUint16(out, uint16(b.Codec))
	out = binary.BigEndian.AppendUint32(out, uint32(max(b.Count-1, 0))) // last offset delta
	out = binary.BigEndian.AppendUint64(out, 1700000000000)             // base timestamp
	out = binary.BigEndian.AppendUint64(out, 1700000000000)             // max timestamp
	out = binary.BigEndian.AppendUint64(out, ^uint64(0))                // producer id -1
	out = binary.BigEndian.AppendUint16(out, 0xffff)                    // producer epoch -1
	out = binary.BigEndian.AppendUint32(out, 0xffffffff)                // base sequence -1
	out = binary.BigEndian.AppendUint32(out, uint32(b.Count))
	out = append(out, b.Payload...)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// Compress encodes s with codec (snappy as snappy-java's xerial framing,
// the Java client's).
func Compress(codec int, s Stream) []byte {
	switch codec {
	case GzipC:
		return Gzip(s, nil)
	case Snappy:
		return Xerial(s)
	case LZ4C:
		return LZ4(s, nil)
	case ZstdC:
		return Zstd(s, nil)
	}
	return s.Bytes()
}

// Message is a legacy (magic 0 or 1) message.
type Message struct {
	Magic int8
	Codec int
	Key   []byte // nil: null
	Value []byte // nil: null
}

// Encode writes the message at offset with its size and IEEE CRC-32
// (Kafka protocol guide, "Message Sets").
func (m Message) Encode(offset int64) []byte {
	out := binary.BigEndian.AppendUint64(nil, uint64(offset))
	out = binary.BigEndian.AppendUint32(out, 0) // size, set below
	out = binary.BigEndian.AppendUint32(out, 0) // crc, set below
	out = append(out, byte(m.Magic), byte(m.Codec))
	if m.Magic >= 1 {
		out = binary.BigEndian.AppendUint64(out, 1700000000000)
	}
	for _, b := range [][]byte{m.Key, m.Value} {
		if b == nil {
			out = binary.BigEndian.AppendUint32(out, 0xffffffff)
			continue
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
		out = append(out, b...)
	}
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[12:], crc32.ChecksumIEEE(out[16:]))
	return out
}

// NestedGzip is a legacy message set of one gzip wrapper message whose
// inner set holds fan wrappers, each holding fan wrappers, levels deep,
// the innermost holding fan plain messages of value: fan^levels messages
// in a few kilobytes (a wrapper's copies compress to almost nothing).
func NestedGzip(magic int8, levels, fan int, value []byte) []byte {
	var set []byte
	for i := range fan {
		set = append(set, Message{Magic: magic, Value: value}.Encode(int64(i))...)
	}
	for range levels {
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		w.Write(set)
		w.Close()
		wrapper := Message{Magic: magic, Codec: GzipC, Value: z.Bytes()}.Encode(int64(fan - 1))
		set = bytes.Repeat(wrapper, fan)
	}
	return set[:len(set)/fan] // one wrapper of the outermost level
}
