package ua

import (
	"math"
	"time"
	"unsafe"

	"github.com/edged/edged/opcua/ua/status"
)

// Variant encoding mask bits (OPC 10000-6 §5.2.2.16).
const (
	variantTypeMask = 0x3F // bits 0-5: the built-in type id
	variantDimsFlag = 0x40 // ArrayDimensions are encoded
	variantArray    = 0x80 // an array of values is encoded

	// typeReservedFirst to typeReservedLast are type ids that Part 6 does
	// not assign yet: a decoder accepts them and reads the value as a
	// ByteString (or an array of ByteStrings).
	typeReservedFirst TypeID = 26
	typeReservedLast  TypeID = 31
)

// minEncodedSize is the fewest bytes an element of each type takes on the
// wire; an array length is checked against it before allocating.
var minEncodedSize = [typeReservedLast + 1]int{
	TypeBoolean: 1, TypeSByte: 1, TypeByte: 1,
	TypeInt16: 2, TypeUInt16: 2, TypeInt32: 4, TypeUInt32: 4,
	TypeInt64: 8, TypeUInt64: 8, TypeFloat: 4, TypeDouble: 8,
	TypeString: 4, TypeDateTime: 8, TypeGUID: 16, TypeByteString: 4,
	TypeXMLElement: 4, TypeNodeID: 2, TypeExpandedNodeID: 2,
	TypeStatusCode: 4, TypeQualifiedName: 6, TypeLocalizedText: 1,
	TypeExtensionObject: 3, TypeDataValue: 1, TypeVariant: 1,
	TypeDiagnosticInfo: 1,

	// The reserved type ids hold ByteStrings.
	26: 4, 27: 4, 28: 4, 29: 4, 30: 4, 31: 4,
}

// shape makes v a value of type typ (array or scalar). When v already has
// that type and shape its storage is kept for reuse; otherwise v is
// cleared first, so that no field holds a value of another type.
func (v *Variant) shape(typ TypeID, array bool) {
	if v.typ != typ || v.array != array {
		*v = Variant{typ: typ, array: array}
	}
}

// Encode appends the Variant (OPC 10000-6 §5.2.2.16): the encoding mask
// (type id, 0x80 for an array, 0x40 when ArrayDimensions follow), then the
// scalar, or the Int32 length and elements of the array (a matrix
// flattened), then for a matrix the Int32 count and the dimensions. The
// null Variant is the single byte 0.
func (v *Variant) Encode(b []byte) []byte {
	if v.typ == TypeNull {
		return append(b, 0)
	}
	mask := byte(v.typ) & variantTypeMask
	if !v.array {
		return v.appendScalar(append(b, mask), v.typ)
	}
	mask |= variantArray
	withDims := v.encodesDims()
	if withDims {
		mask |= variantDimsFlag
	}
	b = v.appendArray(append(b, mask), v.typ)
	if withDims {
		dims := *v.dims
		b = AppendInt32(b, int32(len(dims)))
		for _, n := range dims {
			b = AppendInt32(b, n)
		}
	}
	return b
}

// encodesDims reports whether the ArrayDimensions are encoded: "only if
// the number of dimensions is 2 or greater and all dimensions have a length
// greater than 0" (OPC 10000-6 §5.2.2.16). Otherwise the values go out as a
// one-dimensional array.
func (v *Variant) encodesDims() bool {
	dims := v.ArrayDimensions()
	if len(dims) < 2 {
		return false
	}
	for _, n := range dims {
		if n <= 0 {
			return false
		}
	}
	return true
}

func (v *Variant) appendScalar(b []byte, typ TypeID) []byte {
	switch typ {
	case TypeBoolean, TypeSByte, TypeByte:
		return append(b, byte(v.num))
	case TypeInt16, TypeUInt16:
		return AppendUint16(b, uint16(v.num))
	case TypeInt32, TypeUInt32, TypeStatusCode:
		return AppendUint32(b, uint32(v.num))
	case TypeInt64, TypeUInt64, TypeDateTime:
		return AppendUint64(b, v.num)
	case TypeFloat:
		return AppendFloat32(b, math.Float32frombits(uint32(v.num)))
	case TypeDouble:
		return AppendFloat64(b, math.Float64frombits(v.num))
	case TypeString, TypeXMLElement:
		return AppendString(b, v.str)
	case TypeGUID:
		return appendPtr[GUID](b, v.obj)
	case TypeNodeID:
		return appendPtr[NodeID](b, v.obj)
	case TypeExpandedNodeID:
		return appendPtr[ExpandedNodeID](b, v.obj)
	case TypeQualifiedName:
		return appendPtr[QualifiedName](b, v.obj)
	case TypeLocalizedText:
		return appendPtr[LocalizedText](b, v.obj)
	case TypeExtensionObject:
		return appendPtr[ExtensionObject](b, v.obj)
	case TypeDataValue:
		return appendPtr[DataValue](b, v.obj)
	case TypeDiagnosticInfo:
		return appendPtr[DiagnosticInfo](b, v.obj)
	}
	// TypeByteString and the reserved type ids 26-31. (A Variant scalar
	// cannot be built, nor decoded, for TypeVariant.)
	return AppendByteString(b, v.byteString())
}

// appendPtr appends the scalar *T held in obj, or T's zero value.
func appendPtr[T any, P codec[T]](b []byte, obj any) []byte {
	p, _ := obj.(*T)
	if p == nil {
		p = new(T)
	}
	return P(p).Encode(b)
}

// codec is a built-in type with pointer methods Encode and Decode.
type codec[T any] interface {
	*T
	Encode(b []byte) []byte
	Decode(d *Decoder)
}

func (v *Variant) appendArray(b []byte, typ TypeID) []byte {
	switch typ {
	case TypeBoolean:
		return appendSlice(b, v.obj, AppendBool)
	case TypeSByte:
		return appendSlice(b, v.obj, AppendInt8)
	case TypeByte:
		return appendSlice(b, v.obj, AppendUint8)
	case TypeInt16:
		return appendSlice(b, v.obj, AppendInt16)
	case TypeUInt16:
		return appendSlice(b, v.obj, AppendUint16)
	case TypeInt32:
		return appendSlice(b, v.obj, AppendInt32)
	case TypeUInt32:
		return appendSlice(b, v.obj, AppendUint32)
	case TypeInt64:
		return appendSlice(b, v.obj, AppendInt64)
	case TypeUInt64:
		return appendSlice(b, v.obj, AppendUint64)
	case TypeFloat:
		return appendSlice(b, v.obj, AppendFloat32)
	case TypeDouble:
		return appendSlice(b, v.obj, AppendFloat64)
	case TypeString:
		return appendSlice(b, v.obj, AppendString)
	case TypeDateTime:
		return appendSlice(b, v.obj, AppendDateTime)
	case TypeXMLElement:
		return appendSlice(b, v.obj, func(b []byte, x XMLElement) []byte { return AppendString(b, string(x)) })
	case TypeStatusCode:
		return appendSlice(b, v.obj, func(b []byte, s StatusCode) []byte { return AppendUint32(b, uint32(s)) })
	case TypeGUID:
		return appendCodecSlice[GUID](b, v.obj)
	case TypeNodeID:
		return appendCodecSlice[NodeID](b, v.obj)
	case TypeExpandedNodeID:
		return appendCodecSlice[ExpandedNodeID](b, v.obj)
	case TypeQualifiedName:
		return appendCodecSlice[QualifiedName](b, v.obj)
	case TypeLocalizedText:
		return appendCodecSlice[LocalizedText](b, v.obj)
	case TypeExtensionObject:
		return appendCodecSlice[ExtensionObject](b, v.obj)
	case TypeDataValue:
		return appendCodecSlice[DataValue](b, v.obj)
	case TypeVariant:
		return appendCodecSlice[Variant](b, v.obj)
	case TypeDiagnosticInfo:
		return appendCodecSlice[DiagnosticInfo](b, v.obj)
	}
	// TypeByteString and the reserved type ids.
	return appendSlice(b, v.obj, AppendByteString)
}

// appendSlice appends the []T held in obj: its length (-1 for nil) and
// elements.
func appendSlice[T any](b []byte, obj any, appendElem func([]byte, T) []byte) []byte {
	s, _ := obj.([]T)
	b = AppendArrayLen(b, len(s), s == nil)
	for _, x := range s {
		b = appendElem(b, x)
	}
	return b
}

func appendCodecSlice[T any, P codec[T]](b []byte, obj any) []byte {
	s, _ := obj.([]T)
	b = AppendArrayLen(b, len(s), s == nil)
	for i := range s {
		b = P(&s[i]).Encode(b)
	}
	return b
}

// Decode reads a Variant. It counts one level against Limits.MaxDepth, so
// that arrays of Variants and DataValues in Variants cannot nest without
// bound.
//
// status.BadDecodingError is recorded for: a zero type id with other mask
// bits set, the ArrayDimensions flag without the array flag, a Variant
// scalar (Part 6 allows Variants only as array elements), type ids 32-63,
// ArrayDimensions that are absent although flagged, negative, or whose
// product differs from the array length. Type ids 26-31, which Part 6
// reserves, are accepted as Part 6 requires: the value is read as a
// ByteString or an array of ByteStrings, keeps its type id (Type reports
// it) and is encoded again as it came.
//
// Decoding into a Variant that holds a value of the same type and shape
// reuses its storage: numeric scalars and strings equal to the held one
// decode without allocating, arrays reuse the slice's capacity (a matrix
// also its dimensions') and non-numeric scalars are decoded into the value
// held. See the Variant type on sharing.
func (v *Variant) Decode(d *Decoder) {
	if !d.Enter() {
		return
	}
	defer d.Leave()
	mask := d.ReadUint8()
	if d.err != nil {
		return
	}
	typ := TypeID(mask & variantTypeMask)
	array := mask&variantArray != 0
	dims := mask&variantDimsFlag != 0
	switch {
	case typ == TypeNull && mask != 0,
		typ > typeReservedLast,
		dims && !array,
		typ == TypeVariant && !array:
		d.Fail(status.BadDecodingError)
		return
	case typ == TypeNull:
		v.Reset()
		return
	}
	v.shape(typ, array)
	if !array {
		v.decodeScalar(d, typ)
		return
	}
	n := v.decodeArray(d, typ)
	if !dims {
		v.dims = nil
		return
	}
	v.decodeDims(d, n)
}

func (v *Variant) decodeScalar(d *Decoder, typ TypeID) {
	switch typ {
	case TypeBoolean:
		v.num = boolBits(d.ReadBool())
	case TypeSByte:
		v.num = uint64(int64(d.ReadInt8()))
	case TypeByte:
		v.num = uint64(d.ReadUint8())
	case TypeInt16:
		v.num = uint64(int64(d.ReadInt16()))
	case TypeUInt16:
		v.num = uint64(d.ReadUint16())
	case TypeInt32:
		v.num = uint64(int64(d.ReadInt32()))
	case TypeUInt32, TypeFloat, TypeStatusCode:
		v.num = uint64(d.ReadUint32())
	case TypeInt64, TypeUInt64, TypeDouble:
		v.num = d.ReadUint64()
	case TypeDateTime:
		v.num = uint64(normalizeTicks(d.ReadInt64()))
	case TypeString, TypeXMLElement:
		v.str = d.ReadStringReuse(v.str)
	case TypeGUID:
		decodePtr[GUID](v, d)
	case TypeNodeID:
		decodePtr[NodeID](v, d)
	case TypeExpandedNodeID:
		decodePtr[ExpandedNodeID](v, d)
	case TypeQualifiedName:
		decodePtr[QualifiedName](v, d)
	case TypeLocalizedText:
		decodePtr[LocalizedText](v, d)
	case TypeExtensionObject:
		decodePtr[ExtensionObject](v, d)
	case TypeDataValue:
		decodePtr[DataValue](v, d)
	case TypeDiagnosticInfo:
		decodePtr[DiagnosticInfo](v, d)
	default: // TypeByteString and the reserved type ids
		// The header is reused as the bytes are (see Variant); a new one
		// only for a ByteString read.
		var old []byte
		p, ok := v.obj.(*[]byte)
		if ok {
			old = *p
		}
		b := d.ReadByteString(old)
		switch {
		case ok:
			*p = b
		case d.err == nil:
			p = new([]byte)
			*p = b
			v.obj = p
		}
	}
}

// decodePtr decodes a scalar *T into v.obj, into the value held when
// there is one.
func decodePtr[T any, P codec[T]](v *Variant, d *Decoder) {
	p, _ := v.obj.(*T)
	if p == nil {
		p = new(T)
		v.obj = p
	}
	P(p).Decode(d)
}

// decodeArray reads the Int32 length and the elements of an array of typ
// into v.obj and returns the length (0 for a null array).
func (v *Variant) decodeArray(d *Decoder, typ TypeID) int {
	n, null := d.ReadArrayLenNull(minEncodedSize[typ])
	if d.err != nil {
		return 0
	}
	switch typ {
	case TypeBoolean:
		decodeSlice(v, d, n, null, func(d *Decoder, p *bool) { *p = d.ReadBool() })
	case TypeSByte:
		decodeSlice(v, d, n, null, func(d *Decoder, p *int8) { *p = d.ReadInt8() })
	case TypeByte:
		decodeSlice(v, d, n, null, func(d *Decoder, p *uint8) { *p = d.ReadUint8() })
	case TypeInt16:
		decodeSlice(v, d, n, null, func(d *Decoder, p *int16) { *p = d.ReadInt16() })
	case TypeUInt16:
		decodeSlice(v, d, n, null, func(d *Decoder, p *uint16) { *p = d.ReadUint16() })
	case TypeInt32:
		decodeSlice(v, d, n, null, func(d *Decoder, p *int32) { *p = d.ReadInt32() })
	case TypeUInt32:
		decodeSlice(v, d, n, null, func(d *Decoder, p *uint32) { *p = d.ReadUint32() })
	case TypeInt64:
		decodeSlice(v, d, n, null, func(d *Decoder, p *int64) { *p = d.ReadInt64() })
	case TypeUInt64:
		decodeSlice(v, d, n, null, func(d *Decoder, p *uint64) { *p = d.ReadUint64() })
	case TypeFloat:
		decodeSlice(v, d, n, null, func(d *Decoder, p *float32) { *p = d.ReadFloat32() })
	case TypeDouble:
		decodeSlice(v, d, n, null, func(d *Decoder, p *float64) { *p = d.ReadFloat64() })
	case TypeString:
		decodeSlice(v, d, n, null, func(d *Decoder, p *string) { *p = d.ReadStringReuse(*p) })
	case TypeDateTime:
		decodeSlice(v, d, n, null, func(d *Decoder, p *time.Time) { *p = d.ReadDateTime() })
	case TypeXMLElement:
		decodeCodecSlice[XMLElement](v, d, n, null)
	case TypeStatusCode:
		decodeSlice(v, d, n, null, func(d *Decoder, p *StatusCode) { *p = StatusCode(d.ReadUint32()) })
	case TypeGUID:
		decodeCodecSlice[GUID](v, d, n, null)
	case TypeNodeID:
		decodeCodecSlice[NodeID](v, d, n, null)
	case TypeExpandedNodeID:
		decodeCodecSlice[ExpandedNodeID](v, d, n, null)
	case TypeQualifiedName:
		decodeCodecSlice[QualifiedName](v, d, n, null)
	case TypeLocalizedText:
		decodeCodecSlice[LocalizedText](v, d, n, null)
	case TypeExtensionObject:
		decodeCodecSlice[ExtensionObject](v, d, n, null)
	case TypeDataValue:
		decodeCodecSlice[DataValue](v, d, n, null)
	case TypeVariant:
		decodeCodecSlice[Variant](v, d, n, null)
	case TypeDiagnosticInfo:
		decodeCodecSlice[DiagnosticInfo](v, d, n, null)
	default: // TypeByteString and the reserved type ids
		decodeSlice(v, d, n, null, func(d *Decoder, p *[]byte) { *p = d.ReadByteString(*p) })
	}
	return n
}

// decodeSlice decodes n elements into the []T held in v.obj, reusing its
// capacity, or a nil slice for a null array.
func decodeSlice[T any](v *Variant, d *Decoder, n int, null bool, read func(*Decoder, *T)) {
	old, _ := v.obj.([]T)
	var s []T
	if !null {
		s = GrowArray(d, old, n)
		for i := range s {
			read(d, &s[i])
		}
	}
	storeSlice(v, old, s)
}

func decodeCodecSlice[T any, P codec[T]](v *Variant, d *Decoder, n int, null bool) {
	old, _ := v.obj.([]T)
	var s []T
	if !null {
		s = GrowArray(d, old, n)
		for i := range s {
			P(&s[i]).Decode(d)
		}
	}
	storeSlice(v, old, s)
}

// storeSlice stores s in v.obj. Storing a slice in an interface allocates,
// so it is skipped when v.obj already holds the same slice (a reused
// Variant decoding an array of the same length).
func storeSlice[T any](v *Variant, old, s []T) {
	if v.obj != nil && len(old) == len(s) && cap(old) == cap(s) &&
		unsafe.SliceData(old) == unsafe.SliceData(s) {
		return
	}
	v.obj = s
}

// decodeDims reads ArrayDimensions and checks them against the array
// length n.
func (v *Variant) decodeDims(d *Decoder, n int) {
	count := d.ReadArrayLen(4)
	if d.err != nil {
		return
	}
	if count == 0 {
		// Flagged, but null or empty.
		d.Fail(status.BadDecodingError)
		return
	}
	// Reused as the values are: a copy of v shares both with v.
	if v.dims == nil {
		v.dims = new([]int32)
	}
	dims := GrowArray(d, *v.dims, count)
	for i := range dims {
		dims[i] = d.ReadInt32()
	}
	*v.dims = dims
	if d.err != nil {
		return
	}
	if p, ok := dimsProduct(dims, int64(n)); !ok || p != int64(n) {
		d.Fail(status.BadDecodingError)
	}
}

// dimsProduct returns the product of dims, or a value above limit when it
// exceeds limit (limit ≥ 0). It reports false for a negative dimension. The
// product is computed in int64 and stops growing once it passes limit, so
// it cannot overflow.
func dimsProduct(dims []int32, limit int64) (int64, bool) {
	p := int64(1)
	for _, n := range dims {
		if n < 0 {
			return 0, false
		}
		if n == 0 {
			p = 0
			continue
		}
		if p <= limit && p != 0 {
			p *= int64(n) // ≤ 2^31 · 2^31: fits
		}
	}
	if p > limit {
		return limit + 1, true
	}
	return p, true
}

func boolBits(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Reset makes v the null Variant, dropping what it held.
func (v *Variant) Reset() { *v = Variant{} }

// IsNull reports whether v is the null Variant (type id 0).
func (v Variant) IsNull() bool { return v.typ == TypeNull }

// Type returns the built-in type of the value, or of the array's
// elements. It is TypeNull for the null Variant, and one of the reserved
// ids 26-31 for a value decoded with such an id (see Decode).
func (v Variant) Type() TypeID { return v.typ }

// IsArray reports whether v holds an array (one- or multi-dimensional).
func (v Variant) IsArray() bool { return v.array }

// ArrayDimensions returns the dimensions of a multi-dimensional array, nil
// for a scalar or a one-dimensional array. The slice is v's own: do not
// modify it.
func (v Variant) ArrayDimensions() []int32 {
	if v.dims == nil || len(*v.dims) == 0 {
		return nil
	}
	return *v.dims
}
