package plc

import (
	"math"
	"strconv"
	"strings"

	"github.com/edged/edged/opcua/ua/status"
)

// Type is the data type of a tag and of a Value.
type Type uint8

// The tag types. Invalid is the zero Value's type.
const (
	Invalid Type = iota
	Bool
	Int16
	UInt16
	Int32
	UInt32
	Int64
	UInt64
	Float32
	Float64
	String
)

var typeNames = [...]string{"Invalid", "Bool", "Int16", "UInt16", "Int32", "UInt32", "Int64", "UInt64", "Float32", "Float64", "String"}

// String returns the type's name as in the configuration ("Float32").
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "Type(" + strconv.Itoa(int(t)) + ")"
}

// ParseType returns the Type named s, as Type.String spells it or in any
// case ("float32" as the configuration file spells it).
func ParseType(s string) (Type, bool) {
	for i, n := range typeNames {
		if i > 0 && strings.EqualFold(n, s) {
			return Type(i), true
		}
	}
	return Invalid, false
}

// Valid reports whether t is one of the tag types.
func (t Type) Valid() bool { return t >= Bool && t <= String }

func (t Type) signed() bool   { return t == Int16 || t == Int32 || t == Int64 }
func (t Type) unsigned() bool { return t == UInt16 || t == UInt32 || t == UInt64 }
func (t Type) float() bool    { return t == Float32 || t == Float64 }

// Value is a tag value: a type, the bits of a number or bool in a uint64,
// and the text of a String. It is a small value type: copying it, storing
// it in the image and reading it back never allocate.
//
// Bits: Bool is 0 or 1; signed integers are sign-extended to 64 bits;
// unsigned integers are zero-extended; Float32 and Float64 hold the
// float64 bits (a Float32 Value holds a float64 exactly representable as
// float32).
type Value struct {
	bits uint64
	str  string
	typ  Type
}

// BoolValue returns a Bool Value.
func BoolValue(b bool) Value {
	if b {
		return Value{typ: Bool, bits: 1}
	}
	return Value{typ: Bool}
}

// Int16Value returns an Int16 Value.
func Int16Value(v int16) Value { return Value{typ: Int16, bits: uint64(int64(v))} }

// UInt16Value returns a UInt16 Value.
func UInt16Value(v uint16) Value { return Value{typ: UInt16, bits: uint64(v)} }

// Int32Value returns an Int32 Value.
func Int32Value(v int32) Value { return Value{typ: Int32, bits: uint64(int64(v))} }

// UInt32Value returns a UInt32 Value.
func UInt32Value(v uint32) Value { return Value{typ: UInt32, bits: uint64(v)} }

// Int64Value returns an Int64 Value.
func Int64Value(v int64) Value { return Value{typ: Int64, bits: uint64(v)} }

// UInt64Value returns a UInt64 Value.
func UInt64Value(v uint64) Value { return Value{typ: UInt64, bits: v} }

// Float32Value returns a Float32 Value.
func Float32Value(v float32) Value { return Value{typ: Float32, bits: math.Float64bits(float64(v))} }

// Float64Value returns a Float64 Value.
func Float64Value(v float64) Value { return Value{typ: Float64, bits: math.Float64bits(v)} }

// FromBits returns the Value of type t with bits (see Value), the
// inverse of Bits for every type but String, which it returns empty.
func FromBits(t Type, bits uint64) Value {
	if t == String {
		return Value{typ: String}
	}
	return Value{typ: t, bits: bits}
}

// StringValue returns a String Value.
func StringValue(s string) Value { return Value{typ: String, str: s} }

// Type returns v's type.
func (v Value) Type() Type { return v.typ }

// Bits returns the raw bits (see Value).
func (v Value) Bits() uint64 { return v.bits }

// Bool returns a Bool's value, or whether a number is not zero.
func (v Value) Bool() bool {
	if v.typ.float() {
		return math.Float64frombits(v.bits) != 0
	}
	return v.bits != 0
}

// Int64 returns v as an int64: integers exactly (a UInt64 above MaxInt64
// wraps), floats truncated toward zero, Bool as 0 or 1, a String 0.
func (v Value) Int64() int64 {
	if v.typ.float() {
		return int64(math.Float64frombits(v.bits))
	}
	if v.typ == String {
		return 0
	}
	return int64(v.bits)
}

// Uint64 returns v as a uint64: unsigned integers exactly, signed ones
// converted as Go converts them, floats truncated toward zero, a String 0.
func (v Value) Uint64() uint64 {
	if v.typ.float() {
		return uint64(math.Float64frombits(v.bits))
	}
	if v.typ == String {
		return 0
	}
	return v.bits
}

// Float64 returns v as a float64 (a String is 0).
func (v Value) Float64() float64 {
	switch {
	case v.typ.float():
		return math.Float64frombits(v.bits)
	case v.typ.signed():
		return float64(int64(v.bits))
	case v.typ == String:
		return 0
	}
	return float64(v.bits)
}

// Float32 returns v as a float32.
func (v Value) Float32() float32 { return float32(v.Float64()) }

// Text returns a String's text, and "" for other types.
func (v Value) Text() string { return v.str }

// String formats v for people (strconv, no allocation-free promise).
func (v Value) String() string {
	switch {
	case v.typ == Bool:
		return strconv.FormatBool(v.bits != 0)
	case v.typ.signed():
		return strconv.FormatInt(int64(v.bits), 10)
	case v.typ.unsigned():
		return strconv.FormatUint(v.bits, 10)
	case v.typ == Float32:
		return strconv.FormatFloat(v.Float64(), 'g', -1, 32)
	case v.typ == Float64:
		return strconv.FormatFloat(v.Float64(), 'g', -1, 64)
	case v.typ == String:
		return strconv.Quote(v.str)
	}
	return "<invalid>"
}

// Equal reports whether v and w have the same type and value (floats by
// their bits, so NaN equals the same NaN).
func (v Value) Equal(w Value) bool { return v == w }

// Convert returns v converted to type t, with status.BadTypeMismatch between a
// String and another type (or for an Invalid type) and status.BadOutOfRange for
// a number that t cannot hold (integers out of range, a float with a
// fraction or out of range converted to an integer, a finite float64
// beyond float32's range). Bool converts to and from numbers as 0 and 1;
// any other number is status.BadOutOfRange for Bool.
func (v Value) Convert(t Type) (Value, Status) {
	if v.typ == t {
		return v, status.Good
	}
	if !v.typ.Valid() || !t.Valid() || v.typ == String || t == String {
		return Value{}, status.BadTypeMismatch
	}
	switch {
	case t == Float64:
		return Float64Value(v.Float64()), status.Good
	case t == Float32:
		f := v.Float64()
		if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return Value{}, status.BadOutOfRange
		}
		return Float32Value(float32(f)), status.Good
	}
	// Integer or Bool target: get the exact integer first.
	var neg bool
	var mag uint64 // |value|
	switch {
	case v.typ.float():
		f := math.Float64frombits(v.bits)
		if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) || f >= 1<<64 || f < -(1<<63) {
			return Value{}, status.BadOutOfRange
		}
		if f < 0 {
			neg, mag = true, uint64(-int64(f))
			if f == -(1 << 63) {
				mag = 1 << 63
			}
		} else {
			mag = uint64(f)
		}
	case v.typ.signed():
		i := int64(v.bits)
		if i < 0 {
			neg, mag = true, uint64(-i) // -MinInt64 wraps to 1<<63, as wanted
		} else {
			mag = uint64(i)
		}
	default: // Bool, unsigned
		mag = v.bits
	}
	var lo, hi uint64 // allowed magnitude: negative up to lo, positive up to hi
	switch t {
	case Bool:
		hi = 1
	case Int16:
		lo, hi = 1<<15, 1<<15-1
	case UInt16:
		hi = 1<<16 - 1
	case Int32:
		lo, hi = 1<<31, 1<<31-1
	case UInt32:
		hi = 1<<32 - 1
	case Int64:
		lo, hi = 1<<63, 1<<63-1
	case UInt64:
		hi = math.MaxUint64
	}
	if (neg && mag > lo) || (!neg && mag > hi) {
		return Value{}, status.BadOutOfRange
	}
	bits := mag
	if neg {
		bits = uint64(-int64(mag))
	}
	return Value{typ: t, bits: bits}, status.Good
}
