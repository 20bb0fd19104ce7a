// Package secretcorpus builds a hostile corpus of Kafka traffic full of
// known secrets, for the tests that check that kwire never shows one by
// default, in any output, and shows each with --show-secrets. It is test
// support code: nothing in kwire's commands imports it.
//
// The corpus (corpus.go) holds, for every secret-bearing schema field
// (protocol/secrets.go) in every version that has it, an exchange whose
// frames carry a secret there; SASL exchanges of every mechanism and
// message, malformed ones included, through SaslAuthenticate and as raw
// SaslHandshake v0 tokens; sensitive configs in every message that carries
// configs, by name, by IsSensitive and by ConfigType PASSWORD; Envelope
// requests and responses; unknown versions, leftovers and unknown tags of
// secret-bearing messages; frames cut by the end of the capture and orphan
// responses. Frames are encoded from kwire's schema table by Encode
// (encode.go), so a new schema version adds its cases; WritePcap
// (pcap.go) wraps them into TCP connections of a classic pcap file.
package secretcorpus

import (
	"encoding/binary"
	"math"
	"strconv"
	"strings"

	"github.com/kwire/kwire/protocol"
)

// Fill chooses field values for Encode. path names the field from the
// message down, with array indexes: "Resources[0].Configs[1].Value"; the
// top-level fields have no prefix. It returns the value and true to set
// it, or false for Encode's default. Values: string, []byte, int64, bool,
// float64, nil (null), and for an array field its element count (int).
type Fill func(path string, f *protocol.Field) (any, bool)

// Tag is a tagged field Encode appends to the message's top-level tagged
// buffer: a tag number the schema does not know, and its data.
type Tag struct {
	Tag  uint32
	Data []byte
}

// Encode encodes message m at version v: every field the version has, in
// order, with fill's values or defaults (0, false, "x", empty bytes, null
// records, one-element arrays, present nullable structs), compact forms
// and tagged-field buffers where the version is flexible (KIP-482), and
// tags appended to the top-level tagged buffer. It follows the same rules
// as protocol's decoder (protocol/interp.go), written anew so that a
// decoder bug is not copied into its test input.
func Encode(m *protocol.MessageSchema, v int16, fill Fill, tags ...Tag) []byte {
	e := &encoder{m: m, v: v, fill: fill, flex: m.FlexibleVersions.Contains(v)}
	var b []byte
	b = e.fields(b, "", m.Fields, tags)
	return b
}

type encoder struct {
	m    *protocol.MessageSchema
	v    int16
	fill Fill
	flex bool
}

func (e *encoder) fields(b []byte, path string, fields []protocol.Field, tags []Tag) []byte {
	for i := range fields {
		f := &fields[i]
		if !f.Versions.Contains(e.v) || f.TaggedVersions.Contains(e.v) {
			continue
		}
		b = e.field(b, join(path, f.Name), f, f.NullableVersions.Contains(e.v))
	}
	if e.flex {
		b = binary.AppendUvarint(b, uint64(len(tags)))
		for _, t := range tags {
			b = binary.AppendUvarint(b, uint64(t.Tag))
			b = binary.AppendUvarint(b, uint64(len(t.Data)))
			b = append(b, t.Data...)
		}
	}
	return b
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (e *encoder) compact(f *protocol.Field) bool {
	if f.HasFlexibleVersions {
		return f.FlexibleVersions.Contains(e.v)
	}
	return e.flex
}

func (e *encoder) value(path string, f *protocol.Field) (any, bool) {
	if e.fill == nil {
		return nil, false
	}
	return e.fill(path, f)
}

func (e *encoder) field(b []byte, path string, f *protocol.Field, nullable bool) []byte {
	val, set := e.value(path, f)
	switch f.Kind {
	case protocol.TypeBool:
		x, _ := val.(bool)
		if x {
			return append(b, 1)
		}
		return append(b, 0)
	case protocol.TypeInt8:
		return append(b, byte(intOf(val)))
	case protocol.TypeInt16, protocol.TypeUint16:
		return binary.BigEndian.AppendUint16(b, uint16(intOf(val)))
	case protocol.TypeInt32, protocol.TypeUint32:
		return binary.BigEndian.AppendUint32(b, uint32(intOf(val)))
	case protocol.TypeInt64:
		return binary.BigEndian.AppendUint64(b, uint64(intOf(val)))
	case protocol.TypeFloat64:
		x, _ := val.(float64)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(x))
	case protocol.TypeUUID:
		u := make([]byte, 16)
		if x, ok := val.([]byte); ok {
			copy(u, x)
		}
		return append(b, u...)
	case protocol.TypeString:
		if set && val == nil {
			return e.null(b, f, nullable, false)
		}
		s := "x"
		if x, ok := val.(string); ok {
			s = x
		}
		if e.compact(f) {
			b = binary.AppendUvarint(b, uint64(len(s)+1))
		} else {
			b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
		}
		return append(b, s...)
	case protocol.TypeBytes, protocol.TypeRecords:
		if set && val == nil || !set && f.Kind == protocol.TypeRecords && nullable {
			return e.null(b, f, nullable, true)
		}
		var x []byte
		switch y := val.(type) {
		case []byte:
			x = y
		case string:
			x = []byte(y)
		}
		if e.compact(f) {
			b = binary.AppendUvarint(b, uint64(len(x)+1))
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(len(x)))
		}
		return append(b, x...)
	case protocol.TypeStruct:
		if nullable {
			if set && val == nil {
				return append(b, 0xff)
			}
			b = append(b, 1)
		}
		return e.fields(b, path, f.Fields, nil)
	case protocol.TypeArray:
		n := 1
		if x, ok := val.(int); ok {
			n = x
		}
		if e.compact(f) {
			b = binary.AppendUvarint(b, uint64(n+1))
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(n))
		}
		elem := protocol.Field{Name: f.Name, Type: strings.TrimPrefix(f.Type, "[]"), Kind: f.Elem,
			Versions: f.Versions, NullableVersions: protocol.NoVersions, TaggedVersions: protocol.NoVersions, Tag: -1,
			FlexibleVersions: f.FlexibleVersions, HasFlexibleVersions: f.HasFlexibleVersions, Fields: f.Fields}
		for i := range n {
			p := path + "[" + strconv.Itoa(i) + "]"
			if f.Elem == protocol.TypeStruct {
				b = e.fields(b, p, f.Fields, nil)
			} else {
				b = e.field(b, p, &elem, false)
			}
		}
		return b
	}
	return b
}

func (e *encoder) null(b []byte, f *protocol.Field, nullable, isBytes bool) []byte {
	switch {
	case e.compact(f):
		return append(b, 0)
	case isBytes:
		return binary.BigEndian.AppendUint32(b, 0xffffffff)
	}
	return binary.BigEndian.AppendUint16(b, 0xffff)
}

func intOf(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	}
	return 0
}

// RequestFrame returns a whole request frame: the 4-byte length, the
// request header (its version from protocol.RequestHeaderVersion: api key,
// version, correlation id, client id, tagged fields) and body.
func RequestFrame(key, ver int16, corr int32, clientID string, body []byte) []byte {
	h := binary.BigEndian.AppendUint16(nil, uint16(key))
	h = binary.BigEndian.AppendUint16(h, uint16(ver))
	h = binary.BigEndian.AppendUint32(h, uint32(corr))
	hv := protocol.RequestHeaderVersion(key, ver)
	if hv >= 1 {
		h = binary.BigEndian.AppendUint16(h, uint16(len(clientID)))
		h = append(h, clientID...)
	}
	if hv >= 2 {
		h = append(h, 0)
	}
	return frame(h, body)
}

// ResponseFrame returns a whole response frame to version ver of key.
func ResponseFrame(key, ver int16, corr int32, body []byte) []byte {
	h := binary.BigEndian.AppendUint32(nil, uint32(corr))
	if protocol.ResponseHeaderVersion(key, ver) >= 1 {
		h = append(h, 0)
	}
	return frame(h, body)
}

func frame(h, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(h)+len(body)))
	return append(append(b, h...), body...)
}
