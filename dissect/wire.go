package dissect

import (
	"encoding/binary"
	"errors"

	"github.com/kwire/kwire/protocol"
)

// The few body fields the dissector must read itself, before (and
// regardless of) decoding: Produce's Acks, SaslHandshake's Mechanism and
// ApiVersions' ranges. Each read is bounds-checked; a failure returns ok
// false.

var errTagged = errors.New("malformed tagged fields")

// uvarint reads an unsigned varint of at most 5 bytes (KIP-482) at off.
func uvarint(b []byte, off int) (v uint32, next int, ok bool) {
	for i := 0; i < 5; i++ {
		if off+i >= len(b) {
			return 0, off, false
		}
		c := b[off+i]
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v, off + i + 1, true
		}
	}
	return 0, off, false
}

// skipTagged skips a tagged-field buffer (KIP-482: count, then tag, size
// and data for each) at off and returns the offset after it.
func skipTagged(b []byte, off int) (int, error) {
	n, off, ok := uvarint(b, off)
	if !ok {
		return off, errTagged
	}
	for range n {
		var size uint32
		if _, off, ok = uvarint(b, off); !ok {
			return off, errTagged
		}
		if size, off, ok = uvarint(b, off); !ok || uint64(size) > uint64(len(b)-off) {
			return off, errTagged
		}
		off += int(size)
	}
	return off, nil
}

// readString reads a classic STRING (INT16 length) at off.
func readString(b []byte, off int) (string, bool) {
	if off+2 > len(b) {
		return "", false
	}
	n := int(int16(binary.BigEndian.Uint16(b[off:])))
	if n < 0 || off+2+n > len(b) {
		return "", false
	}
	return string(b[off+2 : off+2+n]), true
}

// produceAcks reads ProduceRequest.Acks (ProduceRequest.json): after the
// header, v3+ carries TransactionalId (nullable string, compact from v9),
// then Acks (int16).
func produceAcks(fb []byte, h protocol.RequestHeader) (int16, bool) {
	off := 4 + h.Len
	if h.APIVersion >= 3 {
		if h.HeaderVersion >= 2 {
			n, next, ok := uvarint(fb, off)
			if !ok || n > 0 && uint64(n-1) > uint64(len(fb)-next) {
				return 0, false
			}
			off = next
			if n > 0 {
				off += int(n - 1)
			}
		} else {
			if off+2 > len(fb) {
				return 0, false
			}
			n := int(int16(binary.BigEndian.Uint16(fb[off:])))
			off += 2
			if n > 0 {
				if n > len(fb)-off {
					return 0, false
				}
				off += n
			}
		}
	}
	if off+2 > len(fb) {
		return 0, false
	}
	return int16(binary.BigEndian.Uint16(fb[off:])), true
}

// parseAPIVersions reads ApiVersionsResponse (ApiVersionsResponse.json) of
// version ver from a whole frame: response header v0 (always, KIP-511),
// ErrorCode, then ApiKeys (ApiKey, MinVersion, MaxVersion; compact array
// with tagged fields from v3).
func parseAPIVersions(fb []byte, ver int16) (code int16, ranges []APIRange, ok bool) {
	off := 8
	if off+2 > len(fb) {
		return 0, nil, false
	}
	code = int16(binary.BigEndian.Uint16(fb[off:]))
	off += 2
	var n int
	if ver >= 3 {
		c, next, ok := uvarint(fb, off)
		if !ok || c == 0 {
			return code, nil, ok
		}
		n, off = int(c-1), next
	} else {
		if off+4 > len(fb) {
			return code, nil, false
		}
		n = int(int32(binary.BigEndian.Uint32(fb[off:])))
		off += 4
		if n < 0 {
			return code, nil, true
		}
	}
	if n > (len(fb)-off)/6 {
		return code, nil, false
	}
	ranges = make([]APIRange, 0, n)
	for range n {
		if off+6 > len(fb) {
			return code, nil, false
		}
		ranges = append(ranges, APIRange{
			Key: int16(binary.BigEndian.Uint16(fb[off:])),
			Min: int16(binary.BigEndian.Uint16(fb[off+2:])),
			Max: int16(binary.BigEndian.Uint16(fb[off+4:])),
		})
		off += 6
		if ver >= 3 {
			var err error
			if off, err = skipTagged(fb, off); err != nil {
				return code, nil, false
			}
		}
	}
	return code, ranges, true
}
