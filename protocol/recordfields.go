package protocol

// The fields of record batches, records and legacy messages, for the nodes
// records.go builds to point at (Node.Field) as schema fields' nodes do.
// Kafka's message JSON has no schema for them: they are the content of the
// RECORDS type, laid out in the Kafka protocol guide ("Record Batch",
// "Record", "Message Sets"; KIP-98 for magic 2, KIP-32 for magic 1) and in
// ControlRecordType.java for control record keys. Readers (package facts)
// recognise these nodes by pointer: n.Field == protocol.Batch.ProducerId.

// BatchFieldSet is the set of a magic 2 record batch's fields.
type BatchFieldSet struct {
	Batch                *Field // the batch itself (KindStruct)
	BaseOffset           *Field // int64: the first record's offset
	BatchLength          *Field // int32: bytes after this field
	PartitionLeaderEpoch *Field // int32
	Magic                *Field // int8: 2
	Crc                  *Field // uint32: CRC-32C of Attributes to the end
	Attributes           *Field // int16: codec, timestamp type, transactional, control, delete horizon
	LastOffsetDelta      *Field // int32
	BaseTimestamp        *Field // int64, ms
	MaxTimestamp         *Field // int64, ms
	ProducerId           *Field // int64, -1 none
	ProducerEpoch        *Field // int16, -1 none
	BaseSequence         *Field // int32, -1 none
	Records              *Field // []Record: the records; each element's Field is Records.ElemField()
}

// RecordFieldSet is the set of a record's fields (inside a magic 2 batch).
type RecordFieldSet struct {
	Length         *Field // varint
	Attributes     *Field // int8 (unused by Kafka)
	TimestampDelta *Field // varlong, ms from the batch's BaseTimestamp
	OffsetDelta    *Field // varint, from the batch's BaseOffset
	Key            *Field // varint-length bytes; a control record's key has ControlKey children
	Value          *Field // varint-length bytes
	Headers        *Field // []Header; each element's Field is Headers.ElemField()
	HeaderKey      *Field // varint-length bytes
	HeaderValue    *Field // varint-length bytes
	ControlVersion *Field // int16: a control record key's version
	ControlType    *Field // int16: a control record key's type (0 ABORT, 1 COMMIT, ...)
	ValueVersion   *Field // int16: the version before an EndTxnMarker value
}

// MessageFieldSet is the set of a legacy message's fields (magic 0 and 1).
type MessageFieldSet struct {
	Message     *Field // the message itself (KindStruct)
	Offset      *Field // int64: absolute, or relative inside a magic 1 wrapper
	MessageSize *Field // int32
	Crc         *Field // uint32: IEEE CRC-32 of Magic to the end
	Magic       *Field // int8: 0 or 1
	Attributes  *Field // int8: codec, timestamp type (magic 1)
	Timestamp   *Field // int64, ms (magic 1)
	Key         *Field // int32-length bytes
	Value       *Field // int32-length bytes
	MessageSet  *Field // the inner messages of a compressed wrapper (KindStruct)
}

func rf(name, typ string, kind TypeKind, role Role) *Field {
	return &Field{Name: name, Type: typ, Kind: kind, Versions: Versions{0, MaxVersion},
		NullableVersions: NoVersions, TaggedVersions: NoVersions, Tag: -1, FlexibleVersions: NoVersions, Role: role}
}

// rfArray is rf for an array of structs, with its element field.
func rfArray(name, elemType string) *Field {
	f := &Field{Name: name, Type: "[]" + elemType, Kind: TypeArray, Elem: TypeStruct, StructName: elemType,
		Versions: Versions{0, MaxVersion}, NullableVersions: NoVersions, TaggedVersions: NoVersions, Tag: -1, FlexibleVersions: NoVersions}
	f.elem = elemFieldOf(f)
	return f
}

// Batch, Record and Message are the record-batch, record and legacy-message
// fields that record nodes point at.
var (
	Batch = BatchFieldSet{
		Batch:                rf("RecordBatch", "RecordBatch", TypeStruct, RoleNone),
		BaseOffset:           rf("BaseOffset", "int64", TypeInt64, RoleNone),
		BatchLength:          rf("BatchLength", "int32", TypeInt32, RoleNone),
		PartitionLeaderEpoch: rf("PartitionLeaderEpoch", "int32", TypeInt32, RoleLeaderEpoch),
		Magic:                rf("Magic", "int8", TypeInt8, RoleNone),
		Crc:                  rf("Crc", "uint32", TypeUint32, RoleNone),
		Attributes:           rf("Attributes", "int16", TypeInt16, RoleNone),
		LastOffsetDelta:      rf("LastOffsetDelta", "int32", TypeInt32, RoleNone),
		BaseTimestamp:        rf("BaseTimestamp", "int64", TypeInt64, RoleNone),
		MaxTimestamp:         rf("MaxTimestamp", "int64", TypeInt64, RoleNone),
		ProducerId:           rf("ProducerId", "int64", TypeInt64, RoleProducerID),
		ProducerEpoch:        rf("ProducerEpoch", "int16", TypeInt16, RoleProducerEpoch),
		BaseSequence:         rf("BaseSequence", "int32", TypeInt32, RoleNone),
		Records:              rfArray("Records", "Record"),
	}
	Record = RecordFieldSet{
		Length:         rf("Length", "varint", TypeInt32, RoleNone),
		Attributes:     rf("Attributes", "int8", TypeInt8, RoleNone),
		TimestampDelta: rf("TimestampDelta", "varlong", TypeInt64, RoleNone),
		OffsetDelta:    rf("OffsetDelta", "varint", TypeInt32, RoleNone),
		Key:            rf("Key", "bytes", TypeBytes, RoleNone),
		Value:          rf("Value", "bytes", TypeBytes, RoleNone),
		Headers:        rfArray("Headers", "Header"),
		HeaderKey:      rf("Key", "bytes", TypeBytes, RoleNone),
		HeaderValue:    rf("Value", "bytes", TypeBytes, RoleNone),
		ControlVersion: rf("Version", "int16", TypeInt16, RoleNone),
		ControlType:    rf("Type", "int16", TypeInt16, RoleNone),
		ValueVersion:   rf("Version", "int16", TypeInt16, RoleNone),
	}
	Message = MessageFieldSet{
		Message:     rf("Message", "Message", TypeStruct, RoleNone),
		Offset:      rf("Offset", "int64", TypeInt64, RoleNone),
		MessageSize: rf("MessageSize", "int32", TypeInt32, RoleNone),
		Crc:         rf("Crc", "uint32", TypeUint32, RoleNone),
		Magic:       rf("Magic", "int8", TypeInt8, RoleNone),
		Attributes:  rf("Attributes", "int8", TypeInt8, RoleNone),
		Timestamp:   rf("Timestamp", "int64", TypeInt64, RoleNone),
		Key:         rf("Key", "bytes", TypeBytes, RoleNone),
		Value:       rf("Value", "bytes", TypeBytes, RoleNone),
		MessageSet:  rf("MessageSet", "MessageSet", TypeStruct, RoleNone),
	}
)

// EmbeddedVersion is the field of the int16 version that opens an embedded
// struct (a consumer subscription or assignment, an envelope's principal):
// the first child of the BYTES node holding it.
var EmbeddedVersion = rf("Version", "int16", TypeInt16, RoleNone)
