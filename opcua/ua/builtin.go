package ua

import "time"

// This file declares the built-in types of OPC 10000-6 §5.2.2 that are not
// Go primitives. Their encoders and decoders live beside them.

// TypeID identifies a built-in type, as in a Variant's encoding mask
// (OPC 10000-6 §5.1.2). TypeNull is the empty Variant.
type TypeID uint8

// The built-in type ids.
const (
	TypeNull            TypeID = 0
	TypeBoolean         TypeID = 1
	TypeSByte           TypeID = 2
	TypeByte            TypeID = 3
	TypeInt16           TypeID = 4
	TypeUInt16          TypeID = 5
	TypeInt32           TypeID = 6
	TypeUInt32          TypeID = 7
	TypeInt64           TypeID = 8
	TypeUInt64          TypeID = 9
	TypeFloat           TypeID = 10
	TypeDouble          TypeID = 11
	TypeString          TypeID = 12
	TypeDateTime        TypeID = 13
	TypeGUID            TypeID = 14
	TypeByteString      TypeID = 15
	TypeXMLElement      TypeID = 16
	TypeNodeID          TypeID = 17
	TypeExpandedNodeID  TypeID = 18
	TypeStatusCode      TypeID = 19
	TypeQualifiedName   TypeID = 20
	TypeLocalizedText   TypeID = 21
	TypeExtensionObject TypeID = 22
	TypeDataValue       TypeID = 23
	TypeVariant         TypeID = 24
	TypeDiagnosticInfo  TypeID = 25
)

// GUID is a 16-byte globally unique identifier. Data1 to Data3 are encoded
// little-endian and Data4 as it stands (OPC 10000-6 §5.2.2.7).
type GUID struct {
	Data1 uint32
	Data2 uint16
	Data3 uint16
	Data4 [8]byte
}

// IDType is the kind of a NodeId's identifier.
type IDType uint8

// The identifier kinds of OPC 10000-3 §8.2.3.
const (
	IDNumeric IDType = iota
	IDString
	IDGUID
	IDOpaque
)

// NodeID identifies a node (OPC 10000-3 §8.2). It is comparable and can be
// a map key. Which identifier field counts depends on Type: Numeric, Text
// (for IDString the string, for IDOpaque the ByteString's bytes) or GUID.
type NodeID struct {
	Namespace uint16
	Type      IDType
	Numeric   uint32
	Text      string
	GUID      GUID
}

// ExpandedNodeID is a NodeID that may name its namespace by URI and live on
// another server (OPC 10000-6 §5.2.2.10).
type ExpandedNodeID struct {
	NodeID       NodeID
	NamespaceURI string
	ServerIndex  uint32
}

// QualifiedName is a name qualified by a namespace index.
type QualifiedName struct {
	NamespaceIndex uint16
	Name           string
}

// LocalizedText is a text with an optional locale. An empty field is not
// encoded (OPC 10000-6 §5.2.2.14).
type LocalizedText struct {
	Locale string
	Text   string
}

// XMLElement is an XML fragment, encoded as a String.
type XMLElement string

// DataValue is a value with its status and timestamps (OPC 10000-6
// §5.2.2.17). A field is encoded only when it is set: Value when it is not
// null, Status when not Good, a timestamp when not zero (nor before 1601),
// picoseconds when not 0 and their timestamp is set. (The fields are in
// the order that packs them: 16 bytes less than in the encoding's.)
type DataValue struct {
	Value             Variant
	SourceTimestamp   time.Time
	ServerTimestamp   time.Time
	Status            StatusCode
	SourcePicoseconds uint16
	ServerPicoseconds uint16
}

// DiagnosticInfo bits of EncodingMask (OPC 10000-6 §5.2.2.12).
const (
	DiagSymbolicID          uint8 = 0x01
	DiagNamespaceURI        uint8 = 0x02
	DiagLocalizedText       uint8 = 0x04
	DiagLocale              uint8 = 0x08
	DiagAdditionalInfo      uint8 = 0x10
	DiagInnerStatusCode     uint8 = 0x20
	DiagInnerDiagnosticInfo uint8 = 0x40
)

// DiagnosticInfo carries vendor diagnostics of an operation. EncodingMask
// says which fields are present; SymbolicID, NamespaceURI, LocalizedText and
// Locale index the response's string table.
type DiagnosticInfo struct {
	EncodingMask        uint8
	SymbolicID          int32
	NamespaceURI        int32
	Locale              int32
	LocalizedText       int32
	AdditionalInfo      string
	InnerStatusCode     StatusCode
	InnerDiagnosticInfo *DiagnosticInfo
}

// ExtensionObject encodings (OPC 10000-6 §5.2.2.15).
const (
	ExtensionObjectEmpty  uint8 = 0
	ExtensionObjectBinary uint8 = 1
	ExtensionObjectXML    uint8 = 2
)

// Body is a structure that can travel in an ExtensionObject: every
// generated structured DataType is one.
type Body interface {
	Encode(b []byte) []byte
	Decode(d *Decoder)
	// BinaryEncodingID is the NodeId of the type's DefaultBinary encoding.
	BinaryEncodingID() NodeID
}

// ExtensionObject is a structure carried with its encoding id. A body of a
// registered type (see RegisterBody) decodes into Body; any other body is
// kept as Raw bytes, with its TypeID and Encoding, so it can be passed on
// unchanged.
type ExtensionObject struct {
	TypeID   NodeID
	Encoding uint8
	Body     Body
	Raw      []byte
}

// Variant holds a value of any built-in type: a scalar, a one-dimensional
// array, or a multi-dimensional array with its ArrayDimensions
// (OPC 10000-6 §5.2.2.16). The zero Variant is null.
//
// Scalars of numeric types, Boolean, StatusCode and DateTime are stored
// without a heap allocation, so a Variant can be filled on the hot path for
// free with the Set methods and read with the typed getters (Int32,
// Float64, ...). NewVariant and Value convert from and to Go values; see
// NewVariant for the mapping of built-in types to Go types.
//
// A Variant shares storage like a slice: a copy made by assignment shares
// its array elements, ByteString bytes and non-numeric scalars (GUID,
// NodeID, DataValue, ...) with the original, and Decode reuses that
// storage. A value that must outlive the next Decode into the same Variant
// is copied first. (SetByteString allocates the slice's header, which the
// Variant keeps behind a pointer, as it keeps ArrayDimensions: a Variant is
// 56 bytes, and a node, a property or a DataValue holds one.)
type Variant struct {
	typ   TypeID
	array bool
	dims  *[]int32 // ArrayDimensions of a multi-dimensional array, else nil
	num   uint64   // numeric scalars (floats as IEEE bits), Boolean, StatusCode, DateTime ticks
	str   string   // String and XmlElement scalars
	obj   any      // other scalars (as *GUID, *NodeID, ...; ByteString and reserved type ids 26-31 as *[]byte) and arrays (as []T, see NewVariant)
}

// byteString returns the ByteString (or reserved-type) scalar v holds.
func (v *Variant) byteString() []byte {
	if p, ok := v.obj.(*[]byte); ok {
		return *p
	}
	return nil
}
