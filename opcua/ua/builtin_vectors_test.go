package ua

import (
	"math"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// The vectors in this file are written by hand from OPC 10000-6 §5.2
// (UA Binary), field by field; none is produced by the encoder under test.
// Each is checked in both directions (unless marked decode- or
// encode-only) and every strict prefix of it must fail to decode.

// exampleGUID is the Guid of the example in OPC 10000-6 §5.2.2.7.
var exampleGUID = GUID{
	Data1: 0x72962B91,
	Data2: 0xFA75,
	Data3: 0x4AE6,
	Data4: [8]byte{0x8D, 0x28, 0xB4, 0x04, 0xDC, 0x7D, 0xAF, 0x63},
}

// exampleGUIDBytes is its encoding, as Part 6 gives it.
var exampleGUIDBytes = []byte{
	0x91, 0x2B, 0x96, 0x72, // Data1 0x72962B91, little-endian
	0x75, 0xFA, // Data2 0xFA75, little-endian
	0xE6, 0x4A, // Data3 0x4AE6, little-endian
	0x8D, 0x28, 0xB4, 0x04, 0xDC, 0x7D, 0xAF, 0x63, // Data4 as it stands
}

var (
	// unixEpoch is 1970-01-01, 116444736000000000 ticks after 1601
	// (11644473600 s · 10^7) = 0x019DB1DED53E8000.
	unixEpoch      = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	unixEpochBytes = []byte{0x00, 0x80, 0x3E, 0xD5, 0xDE, 0xB1, 0x9D, 0x01}

	// someTime is 2024-01-02T03:04:05.1234567Z: 13348638245 s after 1601,
	// so 133486382450000000 + 1234567 ticks = 0x01DA3D28585B9707.
	someTime      = time.Date(2024, 1, 2, 3, 4, 5, 123456700, time.UTC)
	someTimeBytes = []byte{0x07, 0x97, 0x5B, 0x58, 0x28, 0x3D, 0xDA, 0x01}

	maxInt64Bytes = []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}
)

func primitiveVectors() []vector {
	rb := (*Decoder).ReadBool
	return []vector{
		// Boolean (§5.2.2.1): one byte, 0 false, 1 true; any non-zero
		// value decodes as true.
		primVector("Boolean true", true, []byte{0x01}, AppendBool, rb),
		primVector("Boolean false", false, []byte{0x00}, AppendBool, rb),
		decodeOnly(primVector("Boolean 0x02 is true", true, []byte{0x02}, AppendBool, rb)),

		// Integers (§5.2.2.2): little-endian, two's complement.
		primVector("SByte -1", int8(-1), []byte{0xFF}, AppendInt8, (*Decoder).ReadInt8),
		primVector("SByte -128", int8(-128), []byte{0x80}, AppendInt8, (*Decoder).ReadInt8),
		primVector("SByte 127", int8(127), []byte{0x7F}, AppendInt8, (*Decoder).ReadInt8),
		primVector("Byte 0xAB", uint8(0xAB), []byte{0xAB}, AppendUint8, (*Decoder).ReadUint8),
		primVector("Int16 -2", int16(-2), []byte{0xFE, 0xFF}, AppendInt16, (*Decoder).ReadInt16),
		primVector("Int16 min", int16(math.MinInt16), []byte{0x00, 0x80}, AppendInt16, (*Decoder).ReadInt16),
		primVector("UInt16 0x1234", uint16(0x1234), []byte{0x34, 0x12}, AppendUint16, (*Decoder).ReadUint16),
		primVector("Int32 -1", int32(-1), []byte{0xFF, 0xFF, 0xFF, 0xFF}, AppendInt32, (*Decoder).ReadInt32),
		primVector("Int32 1000000", int32(1000000), []byte{0x40, 0x42, 0x0F, 0x00}, AppendInt32, (*Decoder).ReadInt32),
		primVector("Int32 min", int32(math.MinInt32), []byte{0x00, 0x00, 0x00, 0x80}, AppendInt32, (*Decoder).ReadInt32),
		primVector("UInt32 0xDEADBEEF", uint32(0xDEADBEEF), []byte{0xEF, 0xBE, 0xAD, 0xDE}, AppendUint32, (*Decoder).ReadUint32),
		primVector("Int64 -2", int64(-2), []byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, AppendInt64, (*Decoder).ReadInt64),
		primVector("Int64 0x0102030405060708", int64(0x0102030405060708),
			[]byte{0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}, AppendInt64, (*Decoder).ReadInt64),
		primVector("UInt64 max", uint64(math.MaxUint64),
			[]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, AppendUint64, (*Decoder).ReadUint64),

		// Float and Double (§5.2.2.3): IEEE 754, little-endian.
		primVector("Float 1", float32(1), []byte{0x00, 0x00, 0x80, 0x3F}, AppendFloat32, (*Decoder).ReadFloat32),       // 0x3F800000
		primVector("Float -2.5", float32(-2.5), []byte{0x00, 0x00, 0x20, 0xC0}, AppendFloat32, (*Decoder).ReadFloat32), // 0xC0200000
		// Every NaN is encoded as the quiet NaN 0xFFC00000 / 0xFFF8000000000000
		// (§5.2.2.3); any NaN decodes as a NaN.
		primVector("Float NaN", nan32, []byte{0x00, 0x00, 0xC0, 0xFF}, AppendFloat32, (*Decoder).ReadFloat32), // 0xFFC00000
		decodeOnly(primVector("Float NaN 0x7FC00000", nan32, []byte{0x00, 0x00, 0xC0, 0x7F}, AppendFloat32, (*Decoder).ReadFloat32)),
		encodeOnly(primVector("Float signaling NaN 0x7F800001", math.Float32frombits(0x7F800001), []byte{0x00, 0x00, 0xC0, 0xFF}, AppendFloat32, (*Decoder).ReadFloat32)),
		primVector("Float +Inf", float32(math.Inf(1)), []byte{0x00, 0x00, 0x80, 0x7F}, AppendFloat32, (*Decoder).ReadFloat32),   // 0x7F800000
		primVector("Float -Inf", float32(math.Inf(-1)), []byte{0x00, 0x00, 0x80, 0xFF}, AppendFloat32, (*Decoder).ReadFloat32),  // 0xFF800000
		primVector("Double 1", 1.0, []byte{0, 0, 0, 0, 0, 0, 0xF0, 0x3F}, AppendFloat64, (*Decoder).ReadFloat64),                // 0x3FF0000000000000
		primVector("Double 6.25", 6.25, []byte{0, 0, 0, 0, 0, 0, 0x19, 0x40}, AppendFloat64, (*Decoder).ReadFloat64),            // 0x4019000000000000
		primVector("Double -0", math.Copysign(0, -1), []byte{0, 0, 0, 0, 0, 0, 0, 0x80}, AppendFloat64, (*Decoder).ReadFloat64), // sign bit only
		primVector("Double NaN", math.NaN(), []byte{0, 0, 0, 0, 0, 0, 0xF8, 0xFF}, AppendFloat64, (*Decoder).ReadFloat64),       // 0xFFF8000000000000
		decodeOnly(primVector("Double NaN 0x7FF8000000000001", math.NaN(), []byte{0x01, 0, 0, 0, 0, 0, 0xF8, 0x7F}, AppendFloat64, (*Decoder).ReadFloat64)),
		encodeOnly(primVector("Double NaN 0xFFF0000000000001", math.Float64frombits(0xFFF0000000000001), []byte{0, 0, 0, 0, 0, 0, 0xF8, 0xFF}, AppendFloat64, (*Decoder).ReadFloat64)),
		primVector("Double +Inf", math.Inf(1), []byte{0, 0, 0, 0, 0, 0, 0xF0, 0x7F}, AppendFloat64, (*Decoder).ReadFloat64),  // 0x7FF0000000000000
		primVector("Double -Inf", math.Inf(-1), []byte{0, 0, 0, 0, 0, 0, 0xF0, 0xFF}, AppendFloat64, (*Decoder).ReadFloat64), // 0xFFF0000000000000

		// String (§5.2.2.4): Int32 byte length, then UTF-8; -1 is null.
		// Go's "" is encoded as null; a zero length decodes as "" too.
		primVector("String empty is null", "", []byte{0xFF, 0xFF, 0xFF, 0xFF}, AppendString, (*Decoder).ReadString),
		decodeOnly(primVector("String zero length", "", []byte{0x00, 0x00, 0x00, 0x00}, AppendString, (*Decoder).ReadString)),
		decodeOnly(primVector("String length -2 is null", "", []byte{0xFE, 0xFF, 0xFF, 0xFF}, AppendString, (*Decoder).ReadString)),
		// The example of §5.2.2.4: "水Boy" is 6 bytes of UTF-8.
		primVector("String 水Boy", "水Boy", []byte{
			0x06, 0x00, 0x00, 0x00, // length 6
			0xE6, 0xB0, 0xB4, // 水 U+6C34
			0x42, 0x6F, 0x79, // "Boy"
		}, AppendString, (*Decoder).ReadString),

		// ByteString (§5.2.2.7): like a String; nil is null (-1), an empty
		// slice has length 0.
		primVector("ByteString null", []byte(nil), []byte{0xFF, 0xFF, 0xFF, 0xFF}, AppendByteString, readByteString),
		primVector("ByteString empty", []byte{}, []byte{0x00, 0x00, 0x00, 0x00}, AppendByteString, readByteString),
		primVector("ByteString 01 02 03", []byte{1, 2, 3}, []byte{
			0x03, 0x00, 0x00, 0x00, // length 3
			0x01, 0x02, 0x03,
		}, AppendByteString, readByteString),

		// DateTime (§5.2.2.5): Int64 ticks of 100 ns since 1601-01-01 UTC.
		primVector("DateTime zero is 0", time.Time{}, make([]byte, 8), AppendDateTime, (*Decoder).ReadDateTime),
		primVector("DateTime 1970", unixEpoch, unixEpochBytes, AppendDateTime, (*Decoder).ReadDateTime),
		primVector("DateTime 2024-01-02T03:04:05.1234567", someTime, someTimeBytes, AppendDateTime, (*Decoder).ReadDateTime),
		primVector("DateTime max", MaxDateTime, maxInt64Bytes, AppendDateTime, (*Decoder).ReadDateTime),
		encodeOnly(primVector("DateTime 1601-01-01 is 0", time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), make([]byte, 8), AppendDateTime, (*Decoder).ReadDateTime)),
		encodeOnly(primVector("DateTime before 1601 is 0", time.Date(1600, 12, 31, 23, 0, 0, 0, time.UTC), make([]byte, 8), AppendDateTime, (*Decoder).ReadDateTime)),
		encodeOnly(primVector("DateTime year -5000 is 0", time.Date(-5000, 1, 1, 0, 0, 0, 0, time.UTC), make([]byte, 8), AppendDateTime, (*Decoder).ReadDateTime)),
		encodeOnly(primVector("DateTime 9999-12-31 23:59:59 is max", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC), maxInt64Bytes, AppendDateTime, (*Decoder).ReadDateTime)),
		encodeOnly(primVector("DateTime year 300000 is max", time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC), maxInt64Bytes, AppendDateTime, (*Decoder).ReadDateTime)),
		decodeOnly(primVector("DateTime -1 is zero", time.Time{}, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, AppendDateTime, (*Decoder).ReadDateTime)),
		// 2650467743990000000 = 0x24C85A5ED127A980 is 9999-12-31 23:59:59.
		decodeOnly(primVector("DateTime 9999-12-31 23:59:59 is max", MaxDateTime, []byte{0x80, 0xA9, 0x27, 0xD1, 0x5E, 0x5A, 0xC8, 0x24}, AppendDateTime, (*Decoder).ReadDateTime)),
		// A local time encodes as the same instant.
		encodeOnly(primVector("DateTime in UTC+2", time.Date(2024, 1, 2, 5, 4, 5, 123456700, time.FixedZone("x", 2*3600)), someTimeBytes, AppendDateTime, (*Decoder).ReadDateTime)),
	}
}

func readByteString(d *Decoder) []byte { return d.ReadByteString(nil) }

func builtinVectors() []vector {
	return []vector{
		// Guid (§5.2.2.7).
		codecVector("Guid Part 6 example", exampleGUID, exampleGUIDBytes),
		codecVector("Guid zero", GUID{}, make([]byte, 16)),

		// NodeId (§5.2.2.9): encoding byte, then the form's fields.
		codecVector("NodeId null", NodeID{}, []byte{
			0x00, // two-byte form
			0x00, // id 0
		}),
		codecVector("NodeId two-byte i=255", NewNumericNodeID(0, 255), []byte{
			0x00, // two-byte form: namespace 0, id ≤ 255
			0xFF, // id 255
		}),
		codecVector("NodeId four-byte i=256", NewNumericNodeID(0, 256), []byte{
			0x01,       // four-byte form
			0x00,       // namespace 0 (Byte)
			0x00, 0x01, // id 256 (UInt16)
		}),
		codecVector("NodeId four-byte Part 6 example ns=5;i=1025", NewNumericNodeID(5, 1025), []byte{
			0x01,       // four-byte form
			0x05,       // namespace 5
			0x01, 0x04, // id 1025 = 0x0401
		}),
		codecVector("NodeId four-byte ns=255;i=65535", NewNumericNodeID(255, 65535), []byte{
			0x01,       // four-byte form: namespace ≤ 255, id ≤ 65535
			0xFF,       // namespace 255
			0xFF, 0xFF, // id 65535
		}),
		codecVector("NodeId numeric ns=256;i=1", NewNumericNodeID(256, 1), []byte{
			0x02,       // numeric form: namespace > 255
			0x00, 0x01, // namespace 256 (UInt16)
			0x01, 0x00, 0x00, 0x00, // id 1 (UInt32)
		}),
		codecVector("NodeId numeric i=65536", NewNumericNodeID(0, 65536), []byte{
			0x02,       // numeric form: id > 65535
			0x00, 0x00, // namespace 0
			0x00, 0x00, 0x01, 0x00, // id 65536
		}),
		codecVector("NodeId numeric ns=1;i=4294967295", NewNumericNodeID(1, math.MaxUint32), []byte{
			0x02,       // numeric form
			0x01, 0x00, // namespace 1
			0xFF, 0xFF, 0xFF, 0xFF, // id 2^32-1
		}),
		decodeOnly(codecVector("NodeId numeric form of i=5", NewNumericNodeID(0, 5), []byte{
			0x02,       // numeric form, where the two-byte form would do
			0x00, 0x00, // namespace 0
			0x05, 0x00, 0x00, 0x00, // id 5
		})),
		decodeOnly(codecVector("NodeId four-byte form of i=5", NewNumericNodeID(0, 5), []byte{
			0x01,       // four-byte form, where the two-byte form would do
			0x00,       // namespace 0
			0x05, 0x00, // id 5
		})),
		// The example of §5.2.2.9: ns=1, string "Hot水".
		codecVector("NodeId string Part 6 example", NewStringNodeID(1, "Hot水"), []byte{
			0x03,       // string form
			0x01, 0x00, // namespace 1
			0x06, 0x00, 0x00, 0x00, // length 6
			0x48, 0x6F, 0x74, // "Hot"
			0xE6, 0xB0, 0xB4, // 水
		}),
		codecVector("NodeId string empty", NewStringNodeID(2, ""), []byte{
			0x03,       // string form
			0x02, 0x00, // namespace 2
			0xFF, 0xFF, 0xFF, 0xFF, // null String
		}),
		codecVector("NodeId guid", NewGUIDNodeID(2, exampleGUID), cat([]byte{
			0x04,       // Guid form
			0x02, 0x00, // namespace 2
		}, exampleGUIDBytes)),
		codecVector("NodeId opaque", NewOpaqueNodeID(3, []byte{0xDE, 0xAD}), []byte{
			0x05,       // ByteString form
			0x03, 0x00, // namespace 3
			0x02, 0x00, 0x00, 0x00, // length 2
			0xDE, 0xAD,
		}),
		codecVector("NodeId opaque empty", NewOpaqueNodeID(3, nil), []byte{
			0x05,       // ByteString form
			0x03, 0x00, // namespace 3
			0xFF, 0xFF, 0xFF, 0xFF, // null ByteString
		}),
		decodeOnly(codecVector("NodeId opaque zero length", NewOpaqueNodeID(3, nil), []byte{
			0x05,       // ByteString form
			0x03, 0x00, // namespace 3
			0x00, 0x00, 0x00, 0x00, // length 0
		})),

		// ExpandedNodeId (§5.2.2.10): a NodeId whose encoding byte has
		// 0x80 (NamespaceUri follows) and 0x40 (ServerIndex follows).
		codecVector("ExpandedNodeId local", ExpandedNodeID{NodeID: NewNumericNodeID(0, 5)}, []byte{
			0x00, // two-byte form, no flags
			0x05, // id 5
		}),
		codecVector("ExpandedNodeId with URI", ExpandedNodeID{NodeID: NewNumericNodeID(0, 5), NamespaceURI: "urn:x"}, []byte{
			0x80,                   // two-byte form | NamespaceUri flag
			0x05,                   // id 5
			0x05, 0x00, 0x00, 0x00, // NamespaceUri length 5
			'u', 'r', 'n', ':', 'x',
		}),
		codecVector("ExpandedNodeId with server index", ExpandedNodeID{NodeID: NewStringNodeID(2, "foo"), ServerIndex: 1}, []byte{
			0x43,       // string form | ServerIndex flag
			0x02, 0x00, // namespace 2
			0x03, 0x00, 0x00, 0x00, // length 3
			'f', 'o', 'o',
			0x01, 0x00, 0x00, 0x00, // ServerIndex 1
		}),
		codecVector("ExpandedNodeId with URI and server index", ExpandedNodeID{NodeID: NewNumericNodeID(0, 1025), NamespaceURI: "urn:x", ServerIndex: 7}, []byte{
			0xC1,       // four-byte form | NamespaceUri | ServerIndex
			0x00,       // namespace 0
			0x01, 0x04, // id 1025
			0x05, 0x00, 0x00, 0x00, // NamespaceUri length 5
			'u', 'r', 'n', ':', 'x',
			0x07, 0x00, 0x00, 0x00, // ServerIndex 7
		}),
		// The namespace index is encoded as it stands, even with a URI.
		codecVector("ExpandedNodeId with URI keeps the index", ExpandedNodeID{NodeID: NewNumericNodeID(3, 7), NamespaceURI: "u"}, []byte{
			0x81,       // four-byte form | NamespaceUri
			0x03,       // namespace 3
			0x07, 0x00, // id 7
			0x01, 0x00, 0x00, 0x00, // NamespaceUri length 1
			'u',
		}),
		decodeOnly(codecVector("ExpandedNodeId URI flag with null URI", ExpandedNodeID{NodeID: NewNumericNodeID(0, 5)}, []byte{
			0x80,                   // two-byte form | NamespaceUri flag
			0x05,                   // id 5
			0xFF, 0xFF, 0xFF, 0xFF, // null NamespaceUri
		})),
		decodeOnly(codecVector("ExpandedNodeId server flag with 0", ExpandedNodeID{NodeID: NewNumericNodeID(0, 5)}, []byte{
			0x40,                   // two-byte form | ServerIndex flag
			0x05,                   // id 5
			0x00, 0x00, 0x00, 0x00, // ServerIndex 0
		})),

		// QualifiedName (§5.2.2.13): UInt16 namespace index, String name.
		codecVector("QualifiedName 2:Temp", QualifiedName{NamespaceIndex: 2, Name: "Temp"}, []byte{
			0x02, 0x00, // namespace 2
			0x04, 0x00, 0x00, 0x00, // length 4
			'T', 'e', 'm', 'p',
		}),
		codecVector("QualifiedName null", QualifiedName{}, []byte{
			0x00, 0x00, // namespace 0
			0xFF, 0xFF, 0xFF, 0xFF, // null name
		}),

		// LocalizedText (§5.2.2.14): mask 0x01 Locale, 0x02 Text.
		codecVector("LocalizedText empty", LocalizedText{}, []byte{
			0x00, // no fields
		}),
		codecVector("LocalizedText locale only", LocalizedText{Locale: "en"}, []byte{
			0x01,                   // Locale
			0x02, 0x00, 0x00, 0x00, // length 2
			'e', 'n',
		}),
		codecVector("LocalizedText text only", LocalizedText{Text: "Hi"}, []byte{
			0x02,                   // Text
			0x02, 0x00, 0x00, 0x00, // length 2
			'H', 'i',
		}),
		codecVector("LocalizedText both", LocalizedText{Locale: "de", Text: "Hallo"}, []byte{
			0x03,                   // Locale | Text
			0x02, 0x00, 0x00, 0x00, // Locale length 2
			'd', 'e',
			0x05, 0x00, 0x00, 0x00, // Text length 5
			'H', 'a', 'l', 'l', 'o',
		}),
		decodeOnly(codecVector("LocalizedText flagged but empty", LocalizedText{}, []byte{
			0x03,                   // Locale | Text
			0x00, 0x00, 0x00, 0x00, // Locale ""
			0xFF, 0xFF, 0xFF, 0xFF, // Text null
		})),

		// XmlElement (§5.2.2.8): a String.
		codecVector("XmlElement", XMLElement("<a/>"), []byte{
			0x04, 0x00, 0x00, 0x00, // length 4
			'<', 'a', '/', '>',
		}),
		codecVector("XmlElement null", XMLElement(""), []byte{0xFF, 0xFF, 0xFF, 0xFF}),

		// StatusCode (§5.2.2.11): a UInt32.
		primVector("StatusCode BadDecodingError", status.BadDecodingError, []byte{0x00, 0x00, 0x07, 0x80},
			func(b []byte, s StatusCode) []byte { return AppendUint32(b, uint32(s)) },
			func(d *Decoder) StatusCode { return StatusCode(d.ReadUint32()) }),
	}
}

func dataValueVectors() []vector {
	return []vector{
		// DataValue (§5.2.2.17): mask, then Value, Status,
		// SourceTimestamp, SourcePicoseconds, ServerTimestamp,
		// ServerPicoseconds when their bit is set.
		codecVector("DataValue empty", DataValue{}, []byte{
			0x00, // nothing
		}),
		codecVector("DataValue value", DataValue{Value: MustVariant(int32(42))}, []byte{
			0x01,                   // Value
			0x06,                   // Variant: Int32
			0x2A, 0x00, 0x00, 0x00, // 42
		}),
		codecVector("DataValue status", DataValue{Status: status.BadDecodingError}, []byte{
			0x02,                   // StatusCode
			0x00, 0x00, 0x07, 0x80, // 0x80070000
		}),
		codecVector("DataValue source timestamp", DataValue{SourceTimestamp: unixEpoch}, cat([]byte{
			0x04, // SourceTimestamp
		}, unixEpochBytes)),
		codecVector("DataValue server timestamp", DataValue{ServerTimestamp: unixEpoch}, cat([]byte{
			0x08, // ServerTimestamp
		}, unixEpochBytes)),
		codecVector("DataValue source picoseconds", DataValue{SourceTimestamp: unixEpoch, SourcePicoseconds: 500}, cat([]byte{
			0x14, // SourceTimestamp | SourcePicoseconds
		}, unixEpochBytes, []byte{
			0xF4, 0x01, // 500
		})),
		codecVector("DataValue server picoseconds", DataValue{ServerTimestamp: unixEpoch, ServerPicoseconds: 9999}, cat([]byte{
			0x28, // ServerTimestamp | ServerPicoseconds
		}, unixEpochBytes, []byte{
			0x0F, 0x27, // 9999
		})),
		codecVector("DataValue all fields", DataValue{
			Value:             MustVariant(true),
			Status:            StatusCode(0x40000000), // Uncertain
			SourceTimestamp:   unixEpoch,
			SourcePicoseconds: 1,
			ServerTimestamp:   someTime,
			ServerPicoseconds: 2,
		}, cat([]byte{
			0x3F,       // all six bits
			0x01, 0x01, // Variant Boolean true
			0x00, 0x00, 0x00, 0x40, // Uncertain
		}, unixEpochBytes, []byte{
			0x01, 0x00, // SourcePicoseconds 1
		}, someTimeBytes, []byte{
			0x02, 0x00, // ServerPicoseconds 2
		})),
		decodeOnly(codecVector("DataValue picoseconds 10000 read as 9999", DataValue{SourceTimestamp: unixEpoch, SourcePicoseconds: 9999}, cat([]byte{
			0x14, // SourceTimestamp | SourcePicoseconds
		}, unixEpochBytes, []byte{
			0x10, 0x27, // 10000
		}))),
		decodeOnly(codecVector("DataValue picoseconds without timestamp ignored", DataValue{}, []byte{
			0x10,       // SourcePicoseconds only
			0x05, 0x00, // 5, ignored
		})),
		encodeOnly(codecVector("DataValue picoseconds without timestamp not written", DataValue{ServerPicoseconds: 5}, []byte{
			0x00,
		})),
		encodeOnly(codecVector("DataValue pre-1601 timestamp not written", DataValue{SourceTimestamp: time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC)}, []byte{
			0x00,
		})),
		encodeOnly(codecVector("DataValue picoseconds above 9999 written as 9999", DataValue{SourceTimestamp: unixEpoch, SourcePicoseconds: 60000}, cat([]byte{
			0x14, // SourceTimestamp | SourcePicoseconds
		}, unixEpochBytes, []byte{
			0x0F, 0x27, // 9999
		}))),
	}
}

func diagnosticInfoVectors() []vector {
	return []vector{
		// DiagnosticInfo (§5.2.2.12): mask, then SymbolicId, NamespaceUri,
		// Locale, LocalizedText, AdditionalInfo, InnerStatusCode,
		// InnerDiagnosticInfo when their bit is set.
		codecVector("DiagnosticInfo empty", DiagnosticInfo{}, []byte{0x00}),
		codecVector("DiagnosticInfo SymbolicId", DiagnosticInfo{EncodingMask: DiagSymbolicID, SymbolicID: 1}, []byte{
			0x01,                   // SymbolicId
			0x01, 0x00, 0x00, 0x00, // 1
		}),
		codecVector("DiagnosticInfo NamespaceUri", DiagnosticInfo{EncodingMask: DiagNamespaceURI, NamespaceURI: -1}, []byte{
			0x02,                   // NamespaceUri
			0xFF, 0xFF, 0xFF, 0xFF, // -1 (no string)
		}),
		codecVector("DiagnosticInfo LocalizedText", DiagnosticInfo{EncodingMask: DiagLocalizedText, LocalizedText: 3}, []byte{
			0x04,                   // LocalizedText
			0x03, 0x00, 0x00, 0x00, // 3
		}),
		codecVector("DiagnosticInfo Locale", DiagnosticInfo{EncodingMask: DiagLocale, Locale: 4}, []byte{
			0x08,                   // Locale
			0x04, 0x00, 0x00, 0x00, // 4
		}),
		codecVector("DiagnosticInfo AdditionalInfo", DiagnosticInfo{EncodingMask: DiagAdditionalInfo, AdditionalInfo: "why"}, []byte{
			0x10,                   // AdditionalInfo
			0x03, 0x00, 0x00, 0x00, // length 3
			'w', 'h', 'y',
		}),
		codecVector("DiagnosticInfo InnerStatusCode", DiagnosticInfo{EncodingMask: DiagInnerStatusCode, InnerStatusCode: status.BadDecodingError}, []byte{
			0x20,                   // InnerStatusCode
			0x00, 0x00, 0x07, 0x80, // BadDecodingError
		}),
		codecVector("DiagnosticInfo InnerDiagnosticInfo", DiagnosticInfo{
			EncodingMask:        DiagInnerDiagnosticInfo,
			InnerDiagnosticInfo: &DiagnosticInfo{EncodingMask: DiagSymbolicID, SymbolicID: 2},
		}, []byte{
			0x40,                   // InnerDiagnosticInfo
			0x01,                   // inner: SymbolicId
			0x02, 0x00, 0x00, 0x00, // 2
		}),
		codecVector("DiagnosticInfo all fields, two levels nested", DiagnosticInfo{
			EncodingMask:    0x7F,
			SymbolicID:      1,
			NamespaceURI:    2,
			LocalizedText:   3,
			Locale:          4,
			AdditionalInfo:  "a",
			InnerStatusCode: StatusCode(0x80000000),
			InnerDiagnosticInfo: &DiagnosticInfo{
				EncodingMask: DiagLocale | DiagInnerDiagnosticInfo,
				Locale:       5,
				InnerDiagnosticInfo: &DiagnosticInfo{
					EncodingMask:    DiagInnerStatusCode,
					InnerStatusCode: status.BadEncodingLimitsExceeded,
				},
			},
		}, []byte{
			0x7F,                   // all seven bits
			0x01, 0x00, 0x00, 0x00, // SymbolicId 1
			0x02, 0x00, 0x00, 0x00, // NamespaceUri 2
			0x04, 0x00, 0x00, 0x00, // Locale 4 (before LocalizedText)
			0x03, 0x00, 0x00, 0x00, // LocalizedText 3
			0x01, 0x00, 0x00, 0x00, 'a', // AdditionalInfo "a"
			0x00, 0x00, 0x00, 0x80, // InnerStatusCode Bad
			0x48,                   // inner: Locale | InnerDiagnosticInfo
			0x05, 0x00, 0x00, 0x00, // Locale 5
			0x20,                   // inner inner: InnerStatusCode
			0x00, 0x00, 0x08, 0x80, // BadEncodingLimitsExceeded
		}),
		encodeOnly(codecVector("DiagnosticInfo inner bit without inner", DiagnosticInfo{EncodingMask: DiagInnerDiagnosticInfo | DiagSymbolicID, SymbolicID: 9}, []byte{
			0x01,                   // SymbolicId only: the inner bit is cleared
			0x09, 0x00, 0x00, 0x00, // 9
		})),
	}
}

func extensionObjectVectors() []vector {
	return []vector{
		// ExtensionObject (§5.2.2.15): TypeId NodeId, encoding byte (0 no
		// body, 1 ByteString, 2 XmlElement), then Int32 length and body.
		codecVector("ExtensionObject null", ExtensionObject{}, []byte{
			0x00, 0x00, // TypeId i=0 (two-byte form)
			0x00, // no body
		}),
		codecVector("ExtensionObject no body", ExtensionObject{TypeID: NewNumericNodeID(0, 1025)}, []byte{
			0x01, 0x00, 0x01, 0x04, // TypeId i=1025 (four-byte form)
			0x00, // no body
		}),
		codecVector("ExtensionObject registered binary body", ExtensionObject{
			TypeID:   testBodyID,
			Encoding: ExtensionObjectBinary,
			Body:     &testBody{A: 7, S: "hi"},
		}, []byte{
			0x01, 0x01, 0x92, 0x10, // TypeId ns=1;i=4242 (four-byte form)
			0x01,                   // ByteString body
			0x0A, 0x00, 0x00, 0x00, // length 10
			0x07, 0x00, 0x00, 0x00, // A = 7
			0x02, 0x00, 0x00, 0x00, 'h', 'i', // S = "hi"
		}),
		codecVector("ExtensionObject unknown type kept raw", ExtensionObject{
			TypeID:   NewNumericNodeID(2, 5000),
			Encoding: ExtensionObjectBinary,
			Raw:      []byte{0xDE, 0xAD, 0xBE},
		}, []byte{
			0x01, 0x02, 0x88, 0x13, // TypeId ns=2;i=5000
			0x01,                   // ByteString body
			0x03, 0x00, 0x00, 0x00, // length 3
			0xDE, 0xAD, 0xBE, // body, not understood
		}),
		codecVector("ExtensionObject unknown type null body", ExtensionObject{
			TypeID:   NewNumericNodeID(2, 5000),
			Encoding: ExtensionObjectBinary,
		}, []byte{
			0x01, 0x02, 0x88, 0x13, // TypeId ns=2;i=5000
			0x01,                   // ByteString body
			0xFF, 0xFF, 0xFF, 0xFF, // null
		}),
		codecVector("ExtensionObject XML body", ExtensionObject{
			TypeID:   NewNumericNodeID(2, 5001),
			Encoding: ExtensionObjectXML,
			Raw:      []byte("<a/>"),
		}, []byte{
			0x01, 0x02, 0x89, 0x13, // TypeId ns=2;i=5001
			0x02,                   // XmlElement body
			0x04, 0x00, 0x00, 0x00, // length 4
			'<', 'a', '/', '>',
		}),
		codecVector("ExtensionObject XML body of a registered type stays raw", ExtensionObject{
			TypeID:   testBodyID,
			Encoding: ExtensionObjectXML,
			Raw:      []byte("<b/>"),
		}, []byte{
			0x01, 0x01, 0x92, 0x10, // TypeId ns=1;i=4242
			0x02,                   // XmlElement body
			0x04, 0x00, 0x00, 0x00, // length 4
			'<', 'b', '/', '>',
		}),
		// With a Body, the TypeId comes from the Body.
		encodeOnly(codecVector("ExtensionObject Body sets the TypeId", ExtensionObject{
			TypeID: NewNumericNodeID(0, 1),
			Body:   &testBody{A: -1},
		}, []byte{
			0x01, 0x01, 0x92, 0x10, // TypeId ns=1;i=4242
			0x01,                   // ByteString body
			0x08, 0x00, 0x00, 0x00, // length 8
			0xFF, 0xFF, 0xFF, 0xFF, // A = -1
			0xFF, 0xFF, 0xFF, 0xFF, // S null
		})),
	}
}

// variantCase gives, for one built-in type, two values a and b with their
// encodings written by hand; the Variant vectors are made from them: a as
// a scalar, [a b] as an array and [a b a b a b] as a 2×3 matrix.
type variantCase struct {
	typ    TypeID
	a, b   any    // Go values as NewVariant takes them
	ab, bb []byte // their encodings
	arr    any    // []T{a, b}
	mat    any    // []T{a, b, a, b, a, b}
}

func variantCases() []variantCase {
	i32 := func(x int32) Variant { return MustVariant(x) }
	return []variantCase{
		{TypeBoolean, true, false, []byte{0x01}, []byte{0x00},
			[]bool{true, false}, []bool{true, false, true, false, true, false}},
		{TypeSByte, int8(-1), int8(5), []byte{0xFF}, []byte{0x05},
			[]int8{-1, 5}, []int8{-1, 5, -1, 5, -1, 5}},
		{TypeByte, uint8(0xAB), uint8(0), []byte{0xAB}, []byte{0x00},
			[]uint8{0xAB, 0}, []uint8{0xAB, 0, 0xAB, 0, 0xAB, 0}},
		{TypeInt16, int16(-2), int16(0x1234), []byte{0xFE, 0xFF}, []byte{0x34, 0x12},
			[]int16{-2, 0x1234}, []int16{-2, 0x1234, -2, 0x1234, -2, 0x1234}},
		{TypeUInt16, uint16(0xFFFF), uint16(1), []byte{0xFF, 0xFF}, []byte{0x01, 0x00},
			[]uint16{0xFFFF, 1}, []uint16{0xFFFF, 1, 0xFFFF, 1, 0xFFFF, 1}},
		{TypeInt32, int32(-1), int32(42), []byte{0xFF, 0xFF, 0xFF, 0xFF}, []byte{0x2A, 0, 0, 0},
			[]int32{-1, 42}, []int32{-1, 42, -1, 42, -1, 42}},
		{TypeUInt32, uint32(0xDEADBEEF), uint32(7), []byte{0xEF, 0xBE, 0xAD, 0xDE}, []byte{0x07, 0, 0, 0},
			[]uint32{0xDEADBEEF, 7}, []uint32{0xDEADBEEF, 7, 0xDEADBEEF, 7, 0xDEADBEEF, 7}},
		{TypeInt64, int64(-2), int64(0x0102030405060708),
			[]byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, []byte{0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01},
			[]int64{-2, 0x0102030405060708}, []int64{-2, 0x0102030405060708, -2, 0x0102030405060708, -2, 0x0102030405060708}},
		{TypeUInt64, uint64(math.MaxUint64), uint64(1),
			[]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, []byte{0x01, 0, 0, 0, 0, 0, 0, 0},
			[]uint64{math.MaxUint64, 1}, []uint64{math.MaxUint64, 1, math.MaxUint64, 1, math.MaxUint64, 1}},
		{TypeFloat, float32(1), nan32, []byte{0x00, 0x00, 0x80, 0x3F}, []byte{0x00, 0x00, 0xC0, 0xFF}, // 1, the quiet NaN
			[]float32{1, nan32}, []float32{1, nan32, 1, nan32, 1, nan32}},
		{TypeDouble, math.Copysign(0, -1), math.Inf(1), []byte{0, 0, 0, 0, 0, 0, 0, 0x80}, []byte{0, 0, 0, 0, 0, 0, 0xF0, 0x7F},
			[]float64{math.Copysign(0, -1), math.Inf(1)}, []float64{math.Copysign(0, -1), math.Inf(1), math.Copysign(0, -1), math.Inf(1), math.Copysign(0, -1), math.Inf(1)}},
		{TypeString, "水Boy", "", []byte{0x06, 0, 0, 0, 0xE6, 0xB0, 0xB4, 'B', 'o', 'y'}, []byte{0xFF, 0xFF, 0xFF, 0xFF},
			[]string{"水Boy", ""}, []string{"水Boy", "", "水Boy", "", "水Boy", ""}},
		{TypeDateTime, unixEpoch, time.Time{}, unixEpochBytes, make([]byte, 8),
			[]time.Time{unixEpoch, {}}, []time.Time{unixEpoch, {}, unixEpoch, {}, unixEpoch, {}}},
		{TypeGUID, exampleGUID, GUID{}, exampleGUIDBytes, make([]byte, 16),
			[]GUID{exampleGUID, {}}, []GUID{exampleGUID, {}, exampleGUID, {}, exampleGUID, {}}},
		{TypeByteString, []byte{1, 2, 3}, []byte(nil), []byte{0x03, 0, 0, 0, 1, 2, 3}, []byte{0xFF, 0xFF, 0xFF, 0xFF},
			[][]byte{{1, 2, 3}, nil}, [][]byte{{1, 2, 3}, nil, {1, 2, 3}, nil, {1, 2, 3}, nil}},
		{TypeXMLElement, XMLElement("<a/>"), XMLElement(""), []byte{0x04, 0, 0, 0, '<', 'a', '/', '>'}, []byte{0xFF, 0xFF, 0xFF, 0xFF},
			[]XMLElement{"<a/>", ""}, []XMLElement{"<a/>", "", "<a/>", "", "<a/>", ""}},
		{TypeNodeID, NewNumericNodeID(0, 255), NewStringNodeID(1, "A"),
			[]byte{0x00, 0xFF},                           // two-byte i=255
			[]byte{0x03, 0x01, 0x00, 0x01, 0, 0, 0, 'A'}, // string ns=1 "A"
			[]NodeID{NewNumericNodeID(0, 255), NewStringNodeID(1, "A")},
			[]NodeID{NewNumericNodeID(0, 255), NewStringNodeID(1, "A"), NewNumericNodeID(0, 255), NewStringNodeID(1, "A"), NewNumericNodeID(0, 255), NewStringNodeID(1, "A")}},
		{TypeExpandedNodeID, ExpandedNodeID{NodeID: NewNumericNodeID(0, 5), ServerIndex: 1}, ExpandedNodeID{NodeID: NewNumericNodeID(0, 1), NamespaceURI: "urn:x"},
			[]byte{0x40, 0x05, 0x01, 0, 0, 0},                          // two-byte i=5 | ServerIndex, 1
			[]byte{0x80, 0x01, 0x05, 0, 0, 0, 'u', 'r', 'n', ':', 'x'}, // two-byte i=1 | NamespaceUri, "urn:x"
			[]ExpandedNodeID{{NodeID: NewNumericNodeID(0, 5), ServerIndex: 1}, {NodeID: NewNumericNodeID(0, 1), NamespaceURI: "urn:x"}},
			[]ExpandedNodeID{{NodeID: NewNumericNodeID(0, 5), ServerIndex: 1}, {NodeID: NewNumericNodeID(0, 1), NamespaceURI: "urn:x"}, {NodeID: NewNumericNodeID(0, 5), ServerIndex: 1}, {NodeID: NewNumericNodeID(0, 1), NamespaceURI: "urn:x"}, {NodeID: NewNumericNodeID(0, 5), ServerIndex: 1}, {NodeID: NewNumericNodeID(0, 1), NamespaceURI: "urn:x"}}},
		{TypeStatusCode, status.BadDecodingError, status.Good, []byte{0x00, 0x00, 0x07, 0x80}, []byte{0, 0, 0, 0},
			[]StatusCode{status.BadDecodingError, status.Good}, []StatusCode{status.BadDecodingError, status.Good, status.BadDecodingError, status.Good, status.BadDecodingError, status.Good}},
		{TypeQualifiedName, QualifiedName{NamespaceIndex: 1, Name: "A"}, QualifiedName{},
			[]byte{0x01, 0x00, 0x01, 0, 0, 0, 'A'},     // ns 1, "A"
			[]byte{0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF}, // ns 0, null
			[]QualifiedName{{1, "A"}, {}}, []QualifiedName{{1, "A"}, {}, {1, "A"}, {}, {1, "A"}, {}}},
		{TypeLocalizedText, LocalizedText{Locale: "en", Text: "Hi"}, LocalizedText{},
			[]byte{0x03, 0x02, 0, 0, 0, 'e', 'n', 0x02, 0, 0, 0, 'H', 'i'}, // Locale | Text
			[]byte{0x00}, // nothing
			[]LocalizedText{{"en", "Hi"}, {}}, []LocalizedText{{"en", "Hi"}, {}, {"en", "Hi"}, {}, {"en", "Hi"}, {}}},
		{TypeExtensionObject, ExtensionObject{Body: &testBody{A: 7, S: "hi"}}, ExtensionObject{},
			[]byte{0x01, 0x01, 0x92, 0x10, 0x01, 0x0A, 0, 0, 0, 0x07, 0, 0, 0, 0x02, 0, 0, 0, 'h', 'i'}, // ns=1;i=4242, binary, 10 bytes
			[]byte{0x00, 0x00, 0x00}, // i=0, no body
			[]ExtensionObject{{Body: &testBody{A: 7, S: "hi"}}, {}},
			[]ExtensionObject{{Body: &testBody{A: 7, S: "hi"}}, {}, {Body: &testBody{A: 7, S: "hi"}}, {}, {Body: &testBody{A: 7, S: "hi"}}, {}}},
		{TypeDataValue, DataValue{Value: i32(1)}, DataValue{Status: status.BadDecodingError},
			[]byte{0x01, 0x06, 0x01, 0, 0, 0},    // Value: Int32 1
			[]byte{0x02, 0x00, 0x00, 0x07, 0x80}, // Status
			[]DataValue{{Value: i32(1)}, {Status: status.BadDecodingError}},
			[]DataValue{{Value: i32(1)}, {Status: status.BadDecodingError}, {Value: i32(1)}, {Status: status.BadDecodingError}, {Value: i32(1)}, {Status: status.BadDecodingError}}},
		{TypeVariant, i32(1), Variant{},
			[]byte{0x06, 0x01, 0, 0, 0}, // Int32 1
			[]byte{0x00},                // null
			[]Variant{i32(1), {}}, []Variant{i32(1), {}, i32(1), {}, i32(1), {}}},
		{TypeDiagnosticInfo, DiagnosticInfo{EncodingMask: DiagSymbolicID, SymbolicID: 3}, DiagnosticInfo{},
			[]byte{0x01, 0x03, 0, 0, 0}, // SymbolicId 3
			[]byte{0x00},                // nothing
			[]DiagnosticInfo{{EncodingMask: DiagSymbolicID, SymbolicID: 3}, {}},
			[]DiagnosticInfo{{EncodingMask: DiagSymbolicID, SymbolicID: 3}, {}, {EncodingMask: DiagSymbolicID, SymbolicID: 3}, {}, {EncodingMask: DiagSymbolicID, SymbolicID: 3}, {}}},
	}
}

func variantVectors(t testing.TB) []vector {
	var vs []vector
	vs = append(vs,
		// Variant (§5.2.2.16): mask = type id | 0x80 array | 0x40
		// ArrayDimensions; a null Variant is the single byte 0.
		codecVector("Variant null", Variant{}, []byte{0x00}),
	)
	cases := variantCases()
	if len(cases) != 25 {
		t.Fatalf("%d Variant cases, want one per built-in type", len(cases))
	}
	for _, c := range cases {
		name := "Variant " + c.typ.String()
		if c.typ != TypeVariant {
			vs = append(vs, codecVector(name+" scalar", MustVariant(c.a), cat(
				[]byte{byte(c.typ)}, // mask: type id
				c.ab,                // value
			)))
		}
		var arr Variant
		if c.typ == TypeByte {
			arr = NewByteArray(c.arr.([]byte))
		} else {
			arr = MustVariant(c.arr)
		}
		vs = append(vs, codecVector(name+" array", arr, cat(
			[]byte{byte(c.typ) | 0x80}, // mask: type id | array
			[]byte{0x02, 0, 0, 0},      // ArrayLength 2
			c.ab, c.bb,                 // elements
		)))
		mat, err := NewMatrix(c.mat, []int32{2, 3})
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, codecVector(name+" 2×3 matrix", mat, cat(
			[]byte{byte(c.typ) | 0xC0},         // mask: type id | array | ArrayDimensions
			[]byte{0x06, 0, 0, 0},              // ArrayLength 6
			c.ab, c.bb, c.ab, c.bb, c.ab, c.bb, // elements, last index fastest
			[]byte{0x02, 0, 0, 0}, // 2 dimensions
			[]byte{0x02, 0, 0, 0}, // 2
			[]byte{0x03, 0, 0, 0}, // 3
		)))
	}
	vs = append(vs,
		codecVector("Variant null Int32 array", MustVariant([]int32(nil)), []byte{
			0x86,                   // Int32 | array
			0xFF, 0xFF, 0xFF, 0xFF, // ArrayLength -1: null array
		}),
		codecVector("Variant empty Int32 array", MustVariant([]int32{}), []byte{
			0x86,                   // Int32 | array
			0x00, 0x00, 0x00, 0x00, // ArrayLength 0
		}),
		// A matrix with a zero dimension is accepted, but "the
		// ArrayDimensions field shall only be present if the number of
		// dimensions is 2 or greater and all dimensions have a length
		// greater than 0" (§5.2.2.16): it goes out as an empty array.
		decodeOnly(codecVector("Variant 0×3 matrix", mustMatrix(t, []float64{}, 0, 3), []byte{
			0xCB,                   // Double | array | ArrayDimensions
			0x00, 0x00, 0x00, 0x00, // ArrayLength 0
			0x02, 0x00, 0x00, 0x00, // 2 dimensions
			0x00, 0x00, 0x00, 0x00, // 0
			0x03, 0x00, 0x00, 0x00, // 3
		})),
		encodeOnly(codecVector("Variant 0×3 matrix encodes without dimensions", mustMatrix(t, []float64{}, 0, 3), []byte{
			0x8B,                   // Double | array
			0x00, 0x00, 0x00, 0x00, // ArrayLength 0
		})),
		codecVector("Variant 2×1×2 matrix", mustMatrix(t, []int16{1, 2, 3, 4}, 2, 1, 2), []byte{
			0xC4,                   // Int16 | array | ArrayDimensions
			0x04, 0x00, 0x00, 0x00, // ArrayLength 4
			0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x04, 0x00, // 1 2 3 4
			0x03, 0x00, 0x00, 0x00, // 3 dimensions
			0x02, 0x00, 0x00, 0x00, // 2
			0x01, 0x00, 0x00, 0x00, // 1
			0x02, 0x00, 0x00, 0x00, // 2
		}),
		codecVector("Variant Byte array is not a ByteString", NewByteArray([]byte{1, 2}), []byte{
			0x83,                   // Byte | array
			0x02, 0x00, 0x00, 0x00, // ArrayLength 2
			0x01, 0x02,
		}),
		codecVector("Variant array of arrays", MustVariant([]Variant{MustVariant([]bool{true})}), []byte{
			0x98,                   // Variant | array
			0x01, 0x00, 0x00, 0x00, // ArrayLength 1
			0x81,                   // element: Boolean | array
			0x01, 0x00, 0x00, 0x00, // ArrayLength 1
			0x01, // true
		}),
		codecVector("Variant DataValue holding a Variant array", MustVariant(DataValue{Value: NewByteArray(nil)}), []byte{
			0x17,                   // DataValue
			0x01,                   // DataValue mask: Value
			0x83,                   // Variant: Byte | array
			0xFF, 0xFF, 0xFF, 0xFF, // null array
		}),
		codecVector("Variant ExtensionObject unknown raw", MustVariant(ExtensionObject{TypeID: NewNumericNodeID(2, 5000), Encoding: 1, Raw: []byte{9}}), []byte{
			0x16,                   // ExtensionObject
			0x01, 0x02, 0x88, 0x13, // TypeId ns=2;i=5000
			0x01,                   // ByteString body
			0x01, 0x00, 0x00, 0x00, // length 1
			0x09,
		}),
		// A Body given to NewVariant is wrapped in an ExtensionObject.
		codecVector("Variant of a Body", MustVariant(&testBody{A: 1}), []byte{
			0x16,                   // ExtensionObject
			0x01, 0x01, 0x92, 0x10, // TypeId ns=1;i=4242
			0x01,                   // ByteString body
			0x08, 0x00, 0x00, 0x00, // length 8
			0x01, 0x00, 0x00, 0x00, // A = 1
			0xFF, 0xFF, 0xFF, 0xFF, // S null
		}),
		// One dimension is not what encoders write (§5.2.2.16); it is
		// accepted, and passed on as a plain one-dimensional array.
		decodeOnly(codecVector("Variant one ArrayDimension accepted", Variant{typ: TypeBoolean, array: true, obj: []bool{true}, dims: &[]int32{1}}, []byte{
			0xC1,                   // Boolean | array | ArrayDimensions
			0x01, 0x00, 0x00, 0x00, // ArrayLength 1
			0x01,                   // true
			0x01, 0x00, 0x00, 0x00, // 1 dimension
			0x01, 0x00, 0x00, 0x00, // 1
		})),
		encodeOnly(codecVector("Variant one ArrayDimension encodes without it", Variant{typ: TypeBoolean, array: true, obj: []bool{true}, dims: &[]int32{1}}, []byte{
			0x81,                   // Boolean | array
			0x01, 0x00, 0x00, 0x00, // ArrayLength 1
			0x01, // true
		})),
		// Type ids 26-31 are reserved: a decoder reads the value as a
		// ByteString and passes it on with its type id.
		codecVector("Variant reserved type 26 scalar", Variant{typ: 26, obj: &[]byte{0xAA}}, []byte{
			0x1A,                   // type id 26
			0x01, 0x00, 0x00, 0x00, // ByteString length 1
			0xAA,
		}),
		codecVector("Variant reserved type 31 array", Variant{typ: 31, array: true, obj: [][]byte{nil, {}}}, []byte{
			0x9F,                   // type id 31 | array
			0x02, 0x00, 0x00, 0x00, // ArrayLength 2
			0xFF, 0xFF, 0xFF, 0xFF, // null ByteString
			0x00, 0x00, 0x00, 0x00, // empty ByteString
		}),
		decodeOnly(codecVector("Variant DateTime -5 is 0", MustVariant(time.Time{}), []byte{
			0x0D,                                           // DateTime
			0xFB, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // -5
		})),
	)
	return vs
}

func mustMatrix(t testing.TB, values any, dims ...int32) Variant {
	t.Helper()
	v, err := NewMatrix(values, dims)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func allVectors(t testing.TB) []vector {
	var vs []vector
	vs = append(vs, primitiveVectors()...)
	vs = append(vs, builtinVectors()...)
	vs = append(vs, dataValueVectors()...)
	vs = append(vs, diagnosticInfoVectors()...)
	vs = append(vs, extensionObjectVectors()...)
	vs = append(vs, variantVectors(t)...)
	return vs
}

func TestBuiltinVectors(t *testing.T) {
	vs := allVectors(t)
	for _, v := range vs {
		checkVector(t, v)
	}
	t.Logf("%d vectors", len(vs))
}

// TestInvalidEncodings checks encodings that Part 6 rules out.
func TestInvalidEncodings(t *testing.T) {
	variant := func(d *Decoder) { var v Variant; v.Decode(d) }
	nodeID := func(d *Decoder) { var n NodeID; n.Decode(d) }
	expanded := func(d *Decoder) { var e ExpandedNodeID; e.Decode(d) }
	dataValue := func(d *Decoder) { var v DataValue; v.Decode(d) }
	diag := func(d *Decoder) { var v DiagnosticInfo; v.Decode(d) }
	ext := func(d *Decoder) { var v ExtensionObject; v.Decode(d) }
	text := func(d *Decoder) { var v LocalizedText; v.Decode(d) }
	tests := []struct {
		name string
		dec  func(*Decoder)
		b    []byte
	}{
		{"NodeId encoding 0x06", nodeID, []byte{0x06, 0x00, 0x00}},
		{"NodeId encoding 0x0F", nodeID, []byte{0x0F, 0x00, 0x00}},
		{"NodeId encoding 0x10", nodeID, []byte{0x10, 0x00}},
		{"NodeId encoding 0x20", nodeID, []byte{0x20, 0x00}},
		{"NodeId with NamespaceUri flag", nodeID, []byte{0x80, 0x05, 0xFF, 0xFF, 0xFF, 0xFF}},
		{"NodeId with ServerIndex flag", nodeID, []byte{0x40, 0x05, 0, 0, 0, 0}},
		{"ExpandedNodeId encoding 0xC6", expanded, []byte{0xC6, 0x00, 0x00}},
		{"LocalizedText mask 0x04", text, []byte{0x04}},
		{"DataValue mask 0x40", dataValue, []byte{0x40}},
		{"DataValue mask 0x80", dataValue, []byte{0x80}},
		{"DiagnosticInfo mask 0x80", diag, []byte{0x80}},
		{"DiagnosticInfo inner mask 0x80", diag, []byte{0x40, 0x80}},
		{"ExtensionObject encoding 3", ext, []byte{0x00, 0x00, 0x03}},
		{"ExtensionObject encoding 0xFF", ext, []byte{0x00, 0x00, 0xFF, 0x00, 0x00, 0x00, 0x00}},
		{"ExtensionObject body shorter than its length", ext, []byte{
			0x01, 0x01, 0x92, 0x10, // testBody
			0x01,                   // binary
			0x0C, 0x00, 0x00, 0x00, // length 12, the body takes 10
			0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 'h', 'i', 0x00, 0x00,
		}},
		{"ExtensionObject body longer than its length", ext, []byte{
			0x01, 0x01, 0x92, 0x10, // testBody
			0x01,                   // binary
			0x08, 0x00, 0x00, 0x00, // length 8, the body needs 10
			0x07, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 'h', 'i',
		}},
		{"Variant null with array bit", variant, []byte{0x80, 0x00, 0x00, 0x00, 0x00}},
		{"Variant null with dims bit", variant, []byte{0x40}},
		{"Variant type 32", variant, []byte{0x20, 0x00}},
		{"Variant type 63", variant, []byte{0x3F, 0x00}},
		{"Variant dims bit without array bit", variant, []byte{0x46, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00}},
		{"Variant scalar of Variant", variant, []byte{0x18, 0x06, 0x01, 0x00, 0x00, 0x00}},
		{"Variant dims null", variant, []byte{0xC1, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF}},
		{"Variant dims empty", variant, []byte{0xC1, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00}},
		{"Variant dims product 2×2 for 3", variant, cat(
			[]byte{0xC1, 0x03, 0, 0, 0, 1, 1, 1},                 // Boolean array of 3
			[]byte{0x02, 0, 0, 0, 0x02, 0, 0, 0, 0x02, 0, 0, 0}), // dims [2 2]
		},
		{"Variant negative dimension", variant, cat(
			[]byte{0xC1, 0x00, 0, 0, 0},                                   // Boolean array of 0
			[]byte{0x02, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0, 0, 0}), // dims [-1 0]
		},
		{"Variant dimension 0 for 1 element", variant, cat(
			[]byte{0xC1, 0x01, 0, 0, 0, 1},                       // Boolean array of 1
			[]byte{0x02, 0, 0, 0, 0x01, 0, 0, 0, 0x00, 0, 0, 0}), // dims [1 0]
		},
		{"Variant dims overflowing int32", variant, cat(
			[]byte{0xC1, 0x00, 0, 0, 0}, // Boolean array of 0
			[]byte{0x02, 0, 0, 0, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00}), // dims [65536 65536]: 2^32
		},
		{"Variant dims overflowing int64", variant, cat(
			[]byte{0xC1, 0x01, 0, 0, 0, 1}, // Boolean array of 1
			[]byte{0x04, 0, 0, 0},          // 4 dims of 2^31-1: 2^124
			rep([]byte{0xFF, 0xFF, 0xFF, 0x7F}, 4)),
		},
		{"Variant dims with a zero after a huge product", variant, cat(
			[]byte{0xC1, 0x01, 0, 0, 0, 1}, // Boolean array of 1
			[]byte{0x03, 0, 0, 0},          // dims [2^31-1, 2^31-1, 0]: product 0
			rep([]byte{0xFF, 0xFF, 0xFF, 0x7F}, 2), []byte{0, 0, 0, 0}),
		},
	}
	for _, tt := range tests {
		if err := decodeErr(tt.b, tt.dec); err != status.BadDecodingError {
			t.Errorf("%s: got %v, want BadDecodingError", tt.name, err)
		}
	}
}

// nan32 is the quiet NaN 0x7FC00000.
var nan32 = math.Float32frombits(0x7FC00000)
