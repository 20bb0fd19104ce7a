// Package connecttest writes Kafka Connect's group protocol blobs for
// tests, byte by byte with encoding/binary (franz-go's kmsg has no Connect
// types): a worker's metadata (JoinGroup protocol metadata, DescribeGroups
// MemberMetadata) and an assignment (SyncGroup, DescribeGroups
// MemberAssignment, a v1+ metadata's allocation), as Apache Kafka's
// connect/runtime ConnectProtocol.java (v0) and
// IncrementalCooperativeConnectProtocol.java (v1, v2) lay them out:
// an INT16 version, then INT16-length strings, INT64 and INT32 integers,
// INT32-counted arrays (-1 null) and INT32-length bytes (-1 null).
//
// It is test support: only _test.go files import it.
package connecttest

import "encoding/binary"

// Connector is one connector and the task IDs assigned (or revoked) with
// it; task -1 is the connector instance itself.
type Connector struct {
	Name  string
	Tasks []int32
}

// Assignment is a Connect assignment. Revoked and Delay are written from
// version 1; NullAssigned and NullRevoked write a null array (-1).
type Assignment struct {
	Version                   int16
	Error                     int16
	Leader, LeaderURL         string
	ConfigOffset              int64
	Assigned, Revoked         []Connector
	NullAssigned, NullRevoked bool
	Delay                     int32
}

// Metadata writes a worker's metadata: version, url, config offset and,
// from version 1, the allocation as nullable bytes (alloc nil: null).
func Metadata(version int16, url string, configOffset int64, alloc []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(version))
	b = str(b, url)
	b = binary.BigEndian.AppendUint64(b, uint64(configOffset))
	if version >= 1 {
		if alloc == nil {
			b = binary.BigEndian.AppendUint32(b, 0xffffffff)
		} else {
			b = binary.BigEndian.AppendUint32(b, uint32(len(alloc)))
			b = append(b, alloc...)
		}
	}
	return b
}

// Bytes writes a as its version's layout.
func (a Assignment) Bytes() []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(a.Version))
	b = binary.BigEndian.AppendUint16(b, uint16(a.Error))
	b = str(b, a.Leader)
	b = str(b, a.LeaderURL)
	b = binary.BigEndian.AppendUint64(b, uint64(a.ConfigOffset))
	b = connectors(b, a.Assigned, a.NullAssigned)
	if a.Version >= 1 {
		b = connectors(b, a.Revoked, a.NullRevoked)
		b = binary.BigEndian.AppendUint32(b, uint32(a.Delay))
	}
	return b
}

func str(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func connectors(b []byte, cs []Connector, null bool) []byte {
	if null {
		return binary.BigEndian.AppendUint32(b, 0xffffffff)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(cs)))
	for _, c := range cs {
		b = str(b, c.Name)
		b = binary.BigEndian.AppendUint32(b, uint32(len(c.Tasks)))
		for _, t := range c.Tasks {
			b = binary.BigEndian.AppendUint32(b, uint32(t))
		}
	}
	return b
}
