package ua

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// NewVariant returns a Variant holding x, which is nil (the null Variant)
// or a Go value of a built-in type:
//
//	Built-in type     scalar                   array
//	Boolean           bool                     []bool
//	SByte             int8                     []int8
//	Byte              uint8 (byte)             []uint8, see NewByteArray
//	Int16 … UInt64    int16 … uint64           []int16 … []uint64
//	Float, Double     float32, float64         []float32, []float64
//	String            string                   []string
//	DateTime          time.Time                []time.Time
//	Guid              GUID                     []GUID
//	ByteString        []byte                   [][]byte
//	XmlElement        XMLElement               []XMLElement
//	NodeId            NodeID                   []NodeID
//	ExpandedNodeId    ExpandedNodeID           []ExpandedNodeID
//	StatusCode        StatusCode               []StatusCode
//	QualifiedName     QualifiedName            []QualifiedName
//	LocalizedText     LocalizedText            []LocalizedText
//	ExtensionObject   ExtensionObject, Body    []ExtensionObject
//	DataValue         DataValue                []DataValue
//	Variant           (arrays only)            []Variant
//	DiagnosticInfo    DiagnosticInfo           []DiagnosticInfo
//
// Since []byte is a ByteString, a one-dimensional Byte array is made with
// NewByteArray; NewMatrix takes a []byte as Byte elements. A Body is
// wrapped in an ExtensionObject. Slices are not copied: the Variant shares
// them. A nil slice is a null array. Other Go types (int, a Variant
// scalar, pointers) are an error.
//
// A DateTime keeps what the UA DateTime encoding keeps: 100 ns resolution
// in UTC, clamped to the range from 1601 to MaxDateTime (see
// DateTimeTicks).
func NewVariant(x any) (Variant, error) {
	if v, ok := newScalar(x); ok {
		return v, nil
	}
	if v, ok := newArray(x); ok {
		return v, nil
	}
	switch t := x.(type) {
	case Variant:
		return Variant{}, errors.New("ua: NewVariant: a Variant cannot hold a Variant scalar (only an array of Variants)")
	case Body:
		return Variant{typ: TypeExtensionObject, obj: &ExtensionObject{Body: t}}, nil
	}
	return Variant{}, fmt.Errorf("ua: NewVariant: %T is not a built-in type", x)
}

// newScalar is NewVariant of a scalar of a built-in type; false for
// anything else.
func newScalar(x any) (v Variant, ok bool) {
	switch t := x.(type) {
	case nil:
	case bool:
		v.SetBool(t)
	case int8:
		v.SetInt8(t)
	case uint8:
		v.SetUint8(t)
	case int16:
		v.SetInt16(t)
	case uint16:
		v.SetUint16(t)
	case int32:
		v.SetInt32(t)
	case uint32:
		v.SetUint32(t)
	case int64:
		v.SetInt64(t)
	case uint64:
		v.SetUint64(t)
	case float32:
		v.SetFloat32(t)
	case float64:
		v.SetFloat64(t)
	case string:
		v.SetString(t)
	case time.Time:
		v.SetDateTime(t)
	case []byte:
		v.SetByteString(t)
	case StatusCode:
		v.SetStatusCode(t)
	case XMLElement:
		v = Variant{typ: TypeXMLElement, str: string(t)}
	case GUID:
		v = Variant{typ: TypeGUID, obj: &t}
	case NodeID:
		v = Variant{typ: TypeNodeID, obj: &t}
	case ExpandedNodeID:
		v = Variant{typ: TypeExpandedNodeID, obj: &t}
	case QualifiedName:
		v = Variant{typ: TypeQualifiedName, obj: &t}
	case LocalizedText:
		v = Variant{typ: TypeLocalizedText, obj: &t}
	case ExtensionObject:
		v = Variant{typ: TypeExtensionObject, obj: &t}
	case DataValue:
		v = Variant{typ: TypeDataValue, obj: &t}
	case DiagnosticInfo:
		v = Variant{typ: TypeDiagnosticInfo, obj: &t}
	default:
		return Variant{}, false
	}
	return v, true
}

// newArray is NewVariant of a slice of a built-in type; false for
// anything else. It keeps x itself, so the slice is not boxed a second
// time.
func newArray(x any) (v Variant, ok bool) {
	switch x.(type) {
	case []bool:
		v = Variant{typ: TypeBoolean, array: true, obj: x}
	case []int8:
		v = Variant{typ: TypeSByte, array: true, obj: x}
	case []int16:
		v = Variant{typ: TypeInt16, array: true, obj: x}
	case []uint16:
		v = Variant{typ: TypeUInt16, array: true, obj: x}
	case []int32:
		v = Variant{typ: TypeInt32, array: true, obj: x}
	case []uint32:
		v = Variant{typ: TypeUInt32, array: true, obj: x}
	case []int64:
		v = Variant{typ: TypeInt64, array: true, obj: x}
	case []uint64:
		v = Variant{typ: TypeUInt64, array: true, obj: x}
	case []float32:
		v = Variant{typ: TypeFloat, array: true, obj: x}
	case []float64:
		v = Variant{typ: TypeDouble, array: true, obj: x}
	case []string:
		v = Variant{typ: TypeString, array: true, obj: x}
	case []time.Time:
		v = Variant{typ: TypeDateTime, array: true, obj: x}
	case []GUID:
		v = Variant{typ: TypeGUID, array: true, obj: x}
	case [][]byte:
		v = Variant{typ: TypeByteString, array: true, obj: x}
	case []XMLElement:
		v = Variant{typ: TypeXMLElement, array: true, obj: x}
	case []NodeID:
		v = Variant{typ: TypeNodeID, array: true, obj: x}
	case []ExpandedNodeID:
		v = Variant{typ: TypeExpandedNodeID, array: true, obj: x}
	case []StatusCode:
		v = Variant{typ: TypeStatusCode, array: true, obj: x}
	case []QualifiedName:
		v = Variant{typ: TypeQualifiedName, array: true, obj: x}
	case []LocalizedText:
		v = Variant{typ: TypeLocalizedText, array: true, obj: x}
	case []ExtensionObject:
		v = Variant{typ: TypeExtensionObject, array: true, obj: x}
	case []DataValue:
		v = Variant{typ: TypeDataValue, array: true, obj: x}
	case []Variant:
		v = Variant{typ: TypeVariant, array: true, obj: x}
	case []DiagnosticInfo:
		v = Variant{typ: TypeDiagnosticInfo, array: true, obj: x}
	default:
		return Variant{}, false
	}
	return v, true
}

// MustVariant is NewVariant that panics on error, for tests and static
// data.
func MustVariant(x any) Variant {
	v, err := NewVariant(x)
	if err != nil {
		panic(err)
	}
	return v
}

// NewByteArray returns a Variant holding a one-dimensional array of Byte
// (not a ByteString, which NewVariant makes of a []byte). The slice is
// shared; nil is a null array.
func NewByteArray(b []byte) Variant {
	return Variant{typ: TypeByte, array: true, obj: b}
}

// NewMatrix returns a Variant holding a multi-dimensional array: values is
// a slice of a type that NewVariant takes as an array (or a []byte, taken
// as Byte elements) holding the elements flattened with the last index
// varying fastest, and dims are the lengths of the dimensions, at least
// two, none negative, whose product is len(values). dims is copied, values
// shared.
func NewMatrix(values any, dims []int32) (Variant, error) {
	var v Variant
	if b, ok := values.([]byte); ok {
		v = NewByteArray(b)
	} else {
		var err error
		if v, err = NewVariant(values); err != nil {
			return Variant{}, fmt.Errorf("ua: NewMatrix: %T is not a slice of a built-in type", values)
		}
		if !v.array {
			return Variant{}, fmt.Errorf("ua: NewMatrix: values must be a slice, not %T", values)
		}
	}
	if len(dims) < 2 {
		return Variant{}, errors.New("ua: NewMatrix: a matrix has at least 2 dimensions (use NewVariant for one)")
	}
	n := int64(v.Len())
	if n > math.MaxInt32 {
		return Variant{}, fmt.Errorf("ua: NewMatrix: %d values do not fit an Int32 length", n)
	}
	p, ok := dimsProduct(dims, n)
	if !ok {
		return Variant{}, fmt.Errorf("ua: NewMatrix: negative dimension in %v", dims)
	}
	if p != n {
		return Variant{}, fmt.Errorf("ua: NewMatrix: dimensions %v do not match %d values", dims, n)
	}
	d := slices.Clone(dims)
	v.dims = &d
	return v, nil
}

// Len returns the number of elements of an array (of all dimensions), 0
// for a scalar.
func (v Variant) Len() int {
	if !v.array {
		return 0
	}
	switch s := v.obj.(type) {
	case []bool:
		return len(s)
	case []int8:
		return len(s)
	case []uint8:
		return len(s)
	case []int16:
		return len(s)
	case []uint16:
		return len(s)
	case []int32:
		return len(s)
	case []uint32:
		return len(s)
	case []int64:
		return len(s)
	case []uint64:
		return len(s)
	case []float32:
		return len(s)
	case []float64:
		return len(s)
	case []string:
		return len(s)
	case []time.Time:
		return len(s)
	case []GUID:
		return len(s)
	case [][]byte:
		return len(s)
	case []XMLElement:
		return len(s)
	case []NodeID:
		return len(s)
	case []ExpandedNodeID:
		return len(s)
	case []StatusCode:
		return len(s)
	case []QualifiedName:
		return len(s)
	case []LocalizedText:
		return len(s)
	case []ExtensionObject:
		return len(s)
	case []DataValue:
		return len(s)
	case []Variant:
		return len(s)
	case []DiagnosticInfo:
		return len(s)
	}
	return 0
}

// Value returns the value as the Go type that NewVariant takes for it (see
// there): nil for the null Variant, a scalar by value, an array as the
// slice v holds (shared, not copied). A Byte array and a ByteString both
// come back as []byte; IsArray tells them apart. A value of a reserved
// type id (26-31) comes back as []byte or [][]byte.
func (v Variant) Value() any {
	if v.array {
		return v.obj
	}
	switch v.typ {
	case TypeNull:
		return nil
	case TypeBoolean:
		return v.num != 0
	case TypeSByte:
		return int8(v.num)
	case TypeByte:
		return uint8(v.num)
	case TypeInt16:
		return int16(v.num)
	case TypeUInt16:
		return uint16(v.num)
	case TypeInt32:
		return int32(v.num)
	case TypeUInt32:
		return uint32(v.num)
	case TypeInt64:
		return int64(v.num)
	case TypeUInt64:
		return v.num
	case TypeFloat:
		return math.Float32frombits(uint32(v.num))
	case TypeDouble:
		return math.Float64frombits(v.num)
	case TypeString:
		return v.str
	case TypeDateTime:
		return TimeFromTicks(int64(v.num))
	case TypeXMLElement:
		return XMLElement(v.str)
	case TypeStatusCode:
		return StatusCode(v.num)
	case TypeGUID:
		return deref[GUID](v.obj)
	case TypeNodeID:
		return deref[NodeID](v.obj)
	case TypeExpandedNodeID:
		return deref[ExpandedNodeID](v.obj)
	case TypeQualifiedName:
		return deref[QualifiedName](v.obj)
	case TypeLocalizedText:
		return deref[LocalizedText](v.obj)
	case TypeExtensionObject:
		return deref[ExtensionObject](v.obj)
	case TypeDataValue:
		return deref[DataValue](v.obj)
	case TypeDiagnosticInfo:
		return deref[DiagnosticInfo](v.obj)
	}
	return v.byteString() // ByteString and the reserved type ids
}

// deref returns the *T held in obj as a T, T's zero value if none.
func deref[T any](obj any) T {
	if p, _ := obj.(*T); p != nil {
		return *p
	}
	var zero T
	return zero
}

// setNum makes v a numeric scalar of typ.
func (v *Variant) setNum(typ TypeID, n uint64) {
	v.shape(typ, false)
	v.num = n
}

// The Set methods make v a scalar of their type, without allocating.

// SetBool makes v the Boolean x.
func (v *Variant) SetBool(x bool) { v.setNum(TypeBoolean, boolBits(x)) }

// SetInt8 makes v the SByte x.
func (v *Variant) SetInt8(x int8) { v.setNum(TypeSByte, uint64(int64(x))) }

// SetUint8 makes v the Byte x.
func (v *Variant) SetUint8(x uint8) { v.setNum(TypeByte, uint64(x)) }

// SetInt16 makes v the Int16 x.
func (v *Variant) SetInt16(x int16) { v.setNum(TypeInt16, uint64(int64(x))) }

// SetUint16 makes v the UInt16 x.
func (v *Variant) SetUint16(x uint16) { v.setNum(TypeUInt16, uint64(x)) }

// SetInt32 makes v the Int32 x.
func (v *Variant) SetInt32(x int32) { v.setNum(TypeInt32, uint64(int64(x))) }

// SetUint32 makes v the UInt32 x.
func (v *Variant) SetUint32(x uint32) { v.setNum(TypeUInt32, uint64(x)) }

// SetInt64 makes v the Int64 x.
func (v *Variant) SetInt64(x int64) { v.setNum(TypeInt64, uint64(x)) }

// SetUint64 makes v the UInt64 x.
func (v *Variant) SetUint64(x uint64) { v.setNum(TypeUInt64, x) }

// SetFloat32 makes v the Float x.
func (v *Variant) SetFloat32(x float32) { v.setNum(TypeFloat, uint64(math.Float32bits(x))) }

// SetFloat64 makes v the Double x.
func (v *Variant) SetFloat64(x float64) { v.setNum(TypeDouble, math.Float64bits(x)) }

// SetDateTime makes v the DateTime t, kept as a UA DateTime (see
// DateTimeTicks).
func (v *Variant) SetDateTime(t time.Time) { v.setNum(TypeDateTime, uint64(DateTimeTicks(t))) }

// SetStatusCode makes v the StatusCode x.
func (v *Variant) SetStatusCode(x StatusCode) { v.setNum(TypeStatusCode, uint64(x)) }

// SetString makes v the String s.
func (v *Variant) SetString(s string) {
	v.shape(TypeString, false)
	v.str = s
}

// SetByteString makes v the ByteString b (shared, not copied; nil is the
// null ByteString). Unlike the other setters it allocates, 24 bytes for
// the slice's header, unless b is nil (see Variant).
func (v *Variant) SetByteString(b []byte) {
	v.shape(TypeByteString, false)
	if b == nil {
		v.obj = nil
		return
	}
	p := new([]byte) // a header of its own: a copy of v keeps its bytes
	*p = b
	v.obj = p
}

// The typed getters return the scalar and true when v is a scalar of
// exactly their type, else the zero value and false. They do not convert
// between types and do not allocate.

func (v *Variant) scalarNum(typ TypeID) (uint64, bool) {
	if v.typ != typ || v.array {
		return 0, false
	}
	return v.num, true
}

// Bool returns a Boolean scalar.
func (v Variant) Bool() (bool, bool) { n, ok := v.scalarNum(TypeBoolean); return n != 0, ok }

// Int8 returns an SByte scalar.
func (v Variant) Int8() (int8, bool) { n, ok := v.scalarNum(TypeSByte); return int8(n), ok }

// Uint8 returns a Byte scalar.
func (v Variant) Uint8() (uint8, bool) { n, ok := v.scalarNum(TypeByte); return uint8(n), ok }

// Int16 returns an Int16 scalar.
func (v Variant) Int16() (int16, bool) { n, ok := v.scalarNum(TypeInt16); return int16(n), ok }

// Uint16 returns a UInt16 scalar.
func (v Variant) Uint16() (uint16, bool) { n, ok := v.scalarNum(TypeUInt16); return uint16(n), ok }

// Int32 returns an Int32 scalar.
func (v Variant) Int32() (int32, bool) { n, ok := v.scalarNum(TypeInt32); return int32(n), ok }

// Uint32 returns a UInt32 scalar.
func (v Variant) Uint32() (uint32, bool) { n, ok := v.scalarNum(TypeUInt32); return uint32(n), ok }

// Int64 returns an Int64 scalar.
func (v Variant) Int64() (int64, bool) { n, ok := v.scalarNum(TypeInt64); return int64(n), ok }

// Uint64 returns a UInt64 scalar.
func (v Variant) Uint64() (uint64, bool) { return v.scalarNum(TypeUInt64) }

// Float32 returns a Float scalar.
func (v Variant) Float32() (float32, bool) {
	n, ok := v.scalarNum(TypeFloat)
	return math.Float32frombits(uint32(n)), ok
}

// Float64 returns a Double scalar.
func (v Variant) Float64() (float64, bool) {
	n, ok := v.scalarNum(TypeDouble)
	return math.Float64frombits(n), ok
}

// Number returns a numeric or Boolean scalar as a float64 (a Boolean as
// 0 or 1; a 64-bit integer beyond 2^53 rounded), false for any other
// value.
func (v Variant) Number() (float64, bool) {
	if v.array {
		return 0, false
	}
	switch v.typ {
	case TypeBoolean, TypeByte, TypeUInt16, TypeUInt32, TypeUInt64:
		return float64(v.num), true
	case TypeSByte, TypeInt16, TypeInt32, TypeInt64:
		return float64(int64(v.num)), true
	case TypeFloat:
		return float64(math.Float32frombits(uint32(v.num))), true
	case TypeDouble:
		return math.Float64frombits(v.num), true
	}
	return 0, false
}

// DateTime returns a DateTime scalar (see TimeFromTicks).
func (v Variant) DateTime() (time.Time, bool) {
	n, ok := v.scalarNum(TypeDateTime)
	if !ok {
		return time.Time{}, false
	}
	return TimeFromTicks(int64(n)), true
}

// StatusCode returns a StatusCode scalar.
func (v Variant) StatusCode() (StatusCode, bool) {
	n, ok := v.scalarNum(TypeStatusCode)
	return StatusCode(n), ok
}

// StringValue returns a String scalar. (String formats the Variant.)
func (v Variant) StringValue() (string, bool) {
	if v.typ != TypeString || v.array {
		return "", false
	}
	return v.str, true
}

// GUIDValue returns a Guid scalar.
func (v Variant) GUIDValue() (GUID, bool) { return objScalar[GUID](v, TypeGUID) }

// NodeIDValue returns a NodeId scalar.
func (v Variant) NodeIDValue() (NodeID, bool) { return objScalar[NodeID](v, TypeNodeID) }

// ExpandedNodeIDValue returns an ExpandedNodeId scalar.
func (v Variant) ExpandedNodeIDValue() (ExpandedNodeID, bool) {
	return objScalar[ExpandedNodeID](v, TypeExpandedNodeID)
}

// QualifiedNameValue returns a QualifiedName scalar.
func (v Variant) QualifiedNameValue() (QualifiedName, bool) {
	return objScalar[QualifiedName](v, TypeQualifiedName)
}

// LocalizedTextValue returns a LocalizedText scalar.
func (v Variant) LocalizedTextValue() (LocalizedText, bool) {
	return objScalar[LocalizedText](v, TypeLocalizedText)
}

// objScalar returns the scalar of typ that v holds behind its pointer,
// without boxing it as Value does.
func objScalar[T any](v Variant, typ TypeID) (T, bool) {
	if v.typ != typ || v.array {
		var zero T
		return zero, false
	}
	return deref[T](v.obj), true
}

// ByteString returns a ByteString scalar, shared with v.
func (v Variant) ByteString() ([]byte, bool) {
	if v.typ != TypeByteString || v.array {
		return nil, false
	}
	return v.byteString(), true
}

// Equal reports whether v and w hold the same value: the same type,
// shape, dimensions and elements. Floats compare as they are encoded:
// bitwise, so 0 differs from -0, except that every NaN equals every other
// NaN (all are encoded as the one quiet NaN; a value that stays NaN is no
// change). DateTimes compare as UA
// DateTimes, a null array differs from an empty one and a null ByteString
// from an empty one. DataValues, DiagnosticInfos and ExtensionObjects
// compare as encoded (ExtensionObjects with a Body are encoded for it,
// which allocates); nothing else allocates.
func (v Variant) Equal(w Variant) bool {
	if v.typ != w.typ || v.array != w.array || !slices.Equal(v.ArrayDimensions(), w.ArrayDimensions()) {
		return false
	}
	if v.array {
		return arrayEqual(v.typ, v.obj, w.obj)
	}
	switch v.typ {
	case TypeString, TypeXMLElement:
		return v.str == w.str
	case TypeGUID:
		return deref[GUID](v.obj) == deref[GUID](w.obj)
	case TypeNodeID:
		return ptrEqual[NodeID](v.obj, w.obj)
	case TypeExpandedNodeID:
		return ptrEqual[ExpandedNodeID](v.obj, w.obj)
	case TypeQualifiedName:
		return ptrEqual[QualifiedName](v.obj, w.obj)
	case TypeLocalizedText:
		return ptrEqual[LocalizedText](v.obj, w.obj)
	case TypeExtensionObject:
		return extensionObjectEqual(ptrOrZero[ExtensionObject](v.obj), ptrOrZero[ExtensionObject](w.obj))
	case TypeDataValue:
		return ptrOrZero[DataValue](v.obj).Equal(ptrOrZero[DataValue](w.obj))
	case TypeDiagnosticInfo:
		return diagnosticInfoEqual(ptrOrZero[DiagnosticInfo](v.obj), ptrOrZero[DiagnosticInfo](w.obj))
	case TypeByteString, 26, 27, 28, 29, 30, 31:
		return bytesEqual(v.byteString(), w.byteString())
	case TypeFloat:
		return float32Equal(math.Float32frombits(uint32(v.num)), math.Float32frombits(uint32(w.num)))
	case TypeDouble:
		return float64Equal(math.Float64frombits(v.num), math.Float64frombits(w.num))
	}
	return v.num == w.num // integers, Boolean, StatusCode, DateTime, null
}

// float32Equal compares as encoded: bitwise, all NaNs equal.
func float32Equal(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || x != x && y != y
}

// float64Equal compares as encoded: bitwise, all NaNs equal.
func float64Equal(x, y float64) bool {
	return math.Float64bits(x) == math.Float64bits(y) || x != x && y != y
}

func ptrOrZero[T any](obj any) *T {
	if p, _ := obj.(*T); p != nil {
		return p
	}
	return new(T)
}

func ptrEqual[T comparable](a, b any) bool {
	pa, _ := a.(*T)
	pb, _ := b.(*T)
	if pa == nil || pb == nil {
		var zero T
		return (pa == nil || *pa == zero) && (pb == nil || *pb == zero)
	}
	return *pa == *pb
}

// bytesEqual compares two ByteStrings, null differing from empty.
func bytesEqual(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func arrayEqual(typ TypeID, a, b any) bool {
	switch typ {
	case TypeBoolean:
		return sliceEqual(a, b, func(x, y bool) bool { return x == y })
	case TypeSByte:
		return sliceEqual(a, b, func(x, y int8) bool { return x == y })
	case TypeByte:
		return sliceEqual(a, b, func(x, y uint8) bool { return x == y })
	case TypeInt16:
		return sliceEqual(a, b, func(x, y int16) bool { return x == y })
	case TypeUInt16:
		return sliceEqual(a, b, func(x, y uint16) bool { return x == y })
	case TypeInt32:
		return sliceEqual(a, b, func(x, y int32) bool { return x == y })
	case TypeUInt32:
		return sliceEqual(a, b, func(x, y uint32) bool { return x == y })
	case TypeInt64:
		return sliceEqual(a, b, func(x, y int64) bool { return x == y })
	case TypeUInt64:
		return sliceEqual(a, b, func(x, y uint64) bool { return x == y })
	case TypeFloat:
		return sliceEqual(a, b, float32Equal)
	case TypeDouble:
		return sliceEqual(a, b, float64Equal)
	case TypeString:
		return sliceEqual(a, b, func(x, y string) bool { return x == y })
	case TypeDateTime:
		return sliceEqual(a, b, func(x, y time.Time) bool { return DateTimeTicks(x) == DateTimeTicks(y) })
	case TypeXMLElement:
		return sliceEqual(a, b, func(x, y XMLElement) bool { return x == y })
	case TypeStatusCode:
		return sliceEqual(a, b, func(x, y StatusCode) bool { return x == y })
	case TypeGUID:
		return sliceEqual(a, b, func(x, y GUID) bool { return x == y })
	case TypeNodeID:
		return slicePtrEqual(a, b, func(x, y *NodeID) bool { return *x == *y })
	case TypeExpandedNodeID:
		return slicePtrEqual(a, b, func(x, y *ExpandedNodeID) bool { return *x == *y })
	case TypeQualifiedName:
		return slicePtrEqual(a, b, func(x, y *QualifiedName) bool { return *x == *y })
	case TypeLocalizedText:
		return slicePtrEqual(a, b, func(x, y *LocalizedText) bool { return *x == *y })
	case TypeExtensionObject:
		return slicePtrEqual(a, b, extensionObjectEqual)
	case TypeDataValue:
		return slicePtrEqual(a, b, (*DataValue).Equal)
	case TypeVariant:
		return slicePtrEqual(a, b, func(x, y *Variant) bool { return x.Equal(*y) })
	case TypeDiagnosticInfo:
		return slicePtrEqual(a, b, diagnosticInfoEqual)
	}
	return sliceEqual(a, b, bytesEqual) // ByteString and the reserved ids
}

func sliceEqual[T any](a, b any, eq func(x, y T) bool) bool {
	sa, _ := a.([]T)
	sb, _ := b.([]T)
	if len(sa) != len(sb) || (sa == nil) != (sb == nil) {
		return false
	}
	for i := range sa {
		if !eq(sa[i], sb[i]) {
			return false
		}
	}
	return true
}

func slicePtrEqual[T any](a, b any, eq func(x, y *T) bool) bool {
	sa, _ := a.([]T)
	sb, _ := b.([]T)
	if len(sa) != len(sb) || (sa == nil) != (sb == nil) {
		return false
	}
	for i := range sa {
		if !eq(&sa[i], &sb[i]) {
			return false
		}
	}
	return true
}

// String formats v for logs and tests, e.g. "Int32(42)",
// "[]Double[1 2.5]" or "[]Int32[1 2 3 4 5 6] dims [2 3]".
func (v Variant) String() string {
	switch {
	case v.typ == TypeNull:
		return "null"
	case !v.array:
		return fmt.Sprintf("%v(%v)", v.typ, v.Value())
	case len(v.ArrayDimensions()) > 0:
		return fmt.Sprintf("[]%v%v dims %v", v.typ, v.obj, v.ArrayDimensions())
	}
	return fmt.Sprintf("[]%v%v", v.typ, v.obj)
}

var typeNames = [...]string{
	TypeNull:            "Null",
	TypeBoolean:         "Boolean",
	TypeSByte:           "SByte",
	TypeByte:            "Byte",
	TypeInt16:           "Int16",
	TypeUInt16:          "UInt16",
	TypeInt32:           "Int32",
	TypeUInt32:          "UInt32",
	TypeInt64:           "Int64",
	TypeUInt64:          "UInt64",
	TypeFloat:           "Float",
	TypeDouble:          "Double",
	TypeString:          "String",
	TypeDateTime:        "DateTime",
	TypeGUID:            "Guid",
	TypeByteString:      "ByteString",
	TypeXMLElement:      "XmlElement",
	TypeNodeID:          "NodeId",
	TypeExpandedNodeID:  "ExpandedNodeId",
	TypeStatusCode:      "StatusCode",
	TypeQualifiedName:   "QualifiedName",
	TypeLocalizedText:   "LocalizedText",
	TypeExtensionObject: "ExtensionObject",
	TypeDataValue:       "DataValue",
	TypeVariant:         "Variant",
	TypeDiagnosticInfo:  "DiagnosticInfo",
}

// String returns the type's name in Part 6 ("Int32", "NodeId"), or
// "TypeID(n)" for an unassigned id.
func (t TypeID) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "TypeID(" + strconv.Itoa(int(t)) + ")"
}
