package main

import (
	"encoding/binary"
	"hash/crc32"
	"time"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rawBatch encodes an uncompressed, non-idempotent v2 record batch holding
// one record per key/value pair (a nil key or value is encoded as null).
func rawBatch(ts time.Time, kvs ...[2][]byte) []byte {
	var recs []byte
	for i, kv := range kvs {
		var body []byte
		body = append(body, 0)                     // attributes
		body = binary.AppendVarint(body, 0)        // timestamp delta
		body = binary.AppendVarint(body, int64(i)) // offset delta
		for _, b := range kv {
			if b == nil {
				body = binary.AppendVarint(body, -1)
				continue
			}
			body = binary.AppendVarint(body, int64(len(b)))
			body = append(body, b...)
		}
		body = binary.AppendVarint(body, 0) // header count
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	ms := ts.UnixMilli()
	b := make([]byte, 0, 61+len(recs))
	b = binary.BigEndian.AppendUint64(b, 0)                  // base offset
	b = binary.BigEndian.AppendUint32(b, 0)                  // batch length, below
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)         // partition leader epoch -1
	b = append(b, 2)                                         // magic
	b = binary.BigEndian.AppendUint32(b, 0)                  // crc, below
	b = binary.BigEndian.AppendUint16(b, 0)                  // attributes
	b = binary.BigEndian.AppendUint32(b, uint32(len(kvs)-1)) // last offset delta
	b = binary.BigEndian.AppendUint64(b, uint64(ms))         // base timestamp
	b = binary.BigEndian.AppendUint64(b, uint64(ms))         // max timestamp
	b = binary.BigEndian.AppendUint64(b, 0xffffffffffffffff) // producer id -1
	b = binary.BigEndian.AppendUint16(b, 0xffff)             // producer epoch -1
	b = binary.BigEndian.AppendUint32(b, 0xffffffff)         // base sequence -1
	b = binary.BigEndian.AppendUint32(b, uint32(len(kvs)))   // record count
	b = append(b, recs...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
	return b
}
