package history

import (
	"math"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// Value is one raw value of a variable's history: its source timestamp
// (Unix ns), status and value (null when the status is Bad).
type Value struct {
	T      int64
	Status ua.StatusCode
	V      ua.Variant
}

// The historian bits of a DataValue's status (OPC 10000-4 §7.39.1): the
// info type DataValue and the aggregate flags.
const (
	infoDataValue ua.StatusCode = 0x0400
	Calculated    ua.StatusCode = infoDataValue | 0x01
	Interpolated  ua.StatusCode = infoDataValue | 0x02
	Partial       ua.StatusCode = infoDataValue | 0x04
	ExtraData     ua.StatusCode = infoDataValue | 0x08
	MultiValue    ua.StatusCode = infoDataValue | 0x10
	historianMask ua.StatusCode = 0x0403 // info type and the Raw/Calculated/Interpolated field
)

// withCode returns s with the code (severity and sub-code) of c and s's
// info bits: as a status changes from Good to Uncertain, its Interpolated
// or Calculated flag stays.
func withCode(s, c ua.StatusCode) ua.StatusCode { return c.Code() | s&0xFFFF }

// withFlags returns s with the historian flags f added.
func withFlags(s, f ua.StatusCode) ua.StatusCode { return s | f }

// toFloat returns v's value as a float64 (see ua.Variant.Number).
func toFloat(v *ua.Variant) (float64, bool) { return v.Number() }

// fromFloat returns x as a Variant of type t (the type of the raw values
// it was computed from): integers rounded half to even, as a cast in the
// reference implementation does, and clamped to the type's range.
func fromFloat(x float64, t ua.TypeID) ua.Variant {
	var v ua.Variant
	r := math.RoundToEven(x)
	clamp := func(lo, hi float64) float64 { return max(lo, min(hi, r)) }
	switch t {
	case ua.TypeBoolean:
		v.SetBool(x != 0)
	case ua.TypeSByte:
		v.SetInt8(int8(clamp(math.MinInt8, math.MaxInt8)))
	case ua.TypeByte:
		v.SetUint8(uint8(clamp(0, math.MaxUint8)))
	case ua.TypeInt16:
		v.SetInt16(int16(clamp(math.MinInt16, math.MaxInt16)))
	case ua.TypeUInt16:
		v.SetUint16(uint16(clamp(0, math.MaxUint16)))
	case ua.TypeInt32:
		v.SetInt32(int32(clamp(math.MinInt32, math.MaxInt32)))
	case ua.TypeUInt32:
		v.SetUint32(uint32(clamp(0, math.MaxUint32)))
	case ua.TypeInt64:
		v.SetInt64(int64(clamp(math.MinInt64, math.MaxInt64)))
	case ua.TypeUInt64:
		v.SetUint64(uint64(clamp(0, math.MaxUint64)))
	case ua.TypeFloat:
		v.SetFloat32(float32(x))
	default:
		v.SetFloat64(x)
	}
	return v
}

// noData is the result of an interval or a time without data.
func noData(t int64) Value { return Value{T: t, Status: status.BadNoData} }
