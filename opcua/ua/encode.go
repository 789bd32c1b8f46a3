package ua

import (
	"encoding/binary"
	"math"
)

// Append functions write the UA Binary encoding of a primitive to b and
// return the extended slice (OPC 10000-6 §5.2.2). All integers are
// little-endian; floats are IEEE 754.

// AppendBool appends a Boolean: one byte, 1 for true, 0 for false.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// AppendUint8 appends a Byte.
func AppendUint8(b []byte, v uint8) []byte { return append(b, v) }

// AppendInt8 appends an SByte.
func AppendInt8(b []byte, v int8) []byte { return append(b, byte(v)) }

// AppendInt16 appends an Int16.
func AppendInt16(b []byte, v int16) []byte { return binary.LittleEndian.AppendUint16(b, uint16(v)) }

// AppendUint16 appends a UInt16.
func AppendUint16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }

// AppendInt32 appends an Int32.
func AppendInt32(b []byte, v int32) []byte { return binary.LittleEndian.AppendUint32(b, uint32(v)) }

// AppendUint32 appends a UInt32.
func AppendUint32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }

// AppendInt64 appends an Int64.
func AppendInt64(b []byte, v int64) []byte { return binary.LittleEndian.AppendUint64(b, uint64(v)) }

// AppendUint64 appends a UInt64.
func AppendUint64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// The quiet NaNs that OPC 10000-6 §5.2.2.3 has encoders write for every
// NaN, whatever its sign and payload.
const (
	quietNaN32 = 0xFFC00000
	quietNaN64 = 0xFFF8000000000000
)

// AppendFloat32 appends a Float (IEEE 754 single precision). Every NaN is
// written as the quiet NaN 0xFFC00000 (OPC 10000-6 §5.2.2.3).
func AppendFloat32(b []byte, v float32) []byte {
	bits := math.Float32bits(v)
	if v != v {
		bits = quietNaN32
	}
	return binary.LittleEndian.AppendUint32(b, bits)
}

// AppendFloat64 appends a Double (IEEE 754 double precision). Every NaN is
// written as the quiet NaN 0xFFF8000000000000 (OPC 10000-6 §5.2.2.3).
func AppendFloat64(b []byte, v float64) []byte {
	bits := math.Float64bits(v)
	if v != v {
		bits = quietNaN64
	}
	return binary.LittleEndian.AppendUint64(b, bits)
}

// AppendString appends a String: an Int32 byte length and the UTF-8 bytes.
// The empty string is encoded as the null string (length -1); decoding
// either gives "".
func AppendString(b []byte, s string) []byte {
	if s == "" {
		return AppendInt32(b, -1)
	}
	b = AppendInt32(b, int32(len(s)))
	return append(b, s...)
}

// AppendByteString appends a ByteString: an Int32 length and the bytes. A
// nil slice is the null ByteString (length -1), an empty non-nil slice has
// length 0.
func AppendByteString(b []byte, v []byte) []byte {
	if v == nil {
		return AppendInt32(b, -1)
	}
	b = AppendInt32(b, int32(len(v)))
	return append(b, v...)
}

// AppendArrayLen appends the Int32 length that precedes an array's
// elements: -1 for a nil (null) array, else n.
func AppendArrayLen(b []byte, n int, isNil bool) []byte {
	if isNil {
		return AppendInt32(b, -1)
	}
	return AppendInt32(b, int32(n))
}
