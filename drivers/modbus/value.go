package modbus

import (
	"fmt"
	"math"
	"strings"

	"github.com/edged/edged/opcua/ua/status"
)

// Type is the data type of a point.
type Type uint8

// Point types. Registers used: Bool 1 bit (coils/discrete inputs only);
// Bit 1 register (bit Point.Bit of it); Int16/Uint16 1; Int32/Uint32/Float32
// 2; Int64/Uint64/Float64 4; String Point.Len registers (2 characters each).
const (
	Bool Type = iota + 1
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Uint64
	Float32
	Float64
	String
	Bit
)

var typeNames = [...]string{"", "bool", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float32", "float64", "string", "bit"}

func (t Type) String() string {
	if int(t) < len(typeNames) && t != 0 {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// ParseType parses the names String returns.
func ParseType(s string) (Type, error) {
	for i, n := range typeNames {
		if i > 0 && n == s {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("modbus: unknown type %q", s)
}

// Registers returns the number of registers a value of type t occupies;
// strLen is used for String. Bool occupies no register (it is a bit).
func (t Type) Registers(strLen uint16) int {
	switch t {
	case Int16, Uint16, Bit:
		return 1
	case Int32, Uint32, Float32:
		return 2
	case Int64, Uint64, Float64:
		return 4
	case String:
		return int(strLen)
	}
	return 0
}

// Order is the byte and word order of a multi-register value.
//
// Name the bytes of a value from the most significant: A B C D for 32 bits
// (A B C D E F G H for 64 bits). Registers are listed in address order; each
// register is written as its two bytes in the order they travel on the wire
// (Modbus sends the high byte of a register first).
//
//	ABCD  big-endian (Modbus standard)    reg0=A B  reg1=C D
//	CDAB  word swap                       reg0=C D  reg1=A B
//	BADC  byte swap within each register  reg0=B A  reg1=D C
//	DCBA  little-endian                   reg0=D C  reg1=B A
//
// For 64-bit values "word swap" reverses the order of all four registers:
// ABCD: reg0..3 = AB CD EF GH; CDAB: GH EF CD AB; BADC: BA DC FE HG;
// DCBA: HG FE DC BA.
//
// Worked example: float32 123.456 is 0x42F6E979 (A=42 B=F6 C=E9 D=79):
//
//	ABCD  registers 0x42F6 0xE979
//	CDAB  registers 0xE979 0x42F6
//	BADC  registers 0xF642 0x79E9
//	DCBA  registers 0x79E9 0xF642
//
// 16-bit types and Bit: only the byte swap applies (BADC and DCBA read
// register 0x1234 as 0x3412). Strings: characters are taken two per register
// in address order, the high byte first (ABCD, CDAB) or the low byte first
// (BADC, DCBA); the word order does not apply to strings. The zero Order
// means "the device's default", which itself defaults to ABCD.
type Order uint8

// Byte and word orders; see Order.
const (
	OrderDefault Order = iota
	ABCD
	CDAB
	BADC
	DCBA
)

func (o Order) String() string {
	switch o {
	case OrderDefault:
		return "default"
	case ABCD:
		return "ABCD"
	case CDAB:
		return "CDAB"
	case BADC:
		return "BADC"
	case DCBA:
		return "DCBA"
	}
	return fmt.Sprintf("order(%d)", uint8(o))
}

// ParseOrder parses "ABCD", "CDAB", "BADC", "DCBA" (and "" as OrderDefault).
func ParseOrder(s string) (Order, error) {
	switch strings.ToUpper(s) {
	case "":
		return OrderDefault, nil
	case "ABCD":
		return ABCD, nil
	case "CDAB":
		return CDAB, nil
	case "BADC":
		return BADC, nil
	case "DCBA":
		return DCBA, nil
	}
	return 0, fmt.Errorf("modbus: unknown byte order %q (want ABCD, CDAB, BADC or DCBA)", s)
}

func (o Order) wordSwap() bool { return o == CDAB || o == DCBA }
func (o Order) byteSwap() bool { return o == BADC || o == DCBA }

// resolve returns o, or def when o is OrderDefault, or ABCD when both are.
func (o Order) resolve(def Order) Order {
	if o != OrderDefault {
		return o
	}
	if def != OrderDefault {
		return def
	}
	return ABCD
}

// Range is a closed range of values, the OPC UA EURange.
type Range struct {
	Low, High float64
}

// Scaling maps raw values linearly to engineering units:
// eng = EU.Low + (raw - Raw.Low) * (EU.High - EU.Low) / (Raw.High - Raw.Low).
// The zero Scaling (Raw.Low == Raw.High) means no scaling. Example: a 4–20 mA
// input read as 0..27648 counts for 0..10 bar is
// Scaling{Raw: Range{0, 27648}, EU: Range{0, 10}}; raw 13824 → 5 bar.
type Scaling struct {
	Raw Range
	EU  Range
}

// Enabled reports whether s scales; a nil s does not.
func (s *Scaling) Enabled() bool { return s != nil && s.Raw.Low != s.Raw.High }

// EURange returns the engineering range (the OPC UA EURange property).
func (s Scaling) EURange() Range { return s.EU }

// ToEU converts a raw value to engineering units.
func (s Scaling) ToEU(raw float64) float64 {
	if !s.Enabled() {
		return raw
	}
	return s.EU.Low + (raw-s.Raw.Low)*(s.EU.High-s.EU.Low)/(s.Raw.High-s.Raw.Low)
}

// ToRaw converts an engineering value to the raw value (the inverse of ToEU).
func (s Scaling) ToRaw(eu float64) float64 {
	if !s.Enabled() || s.EU.High == s.EU.Low {
		return eu
	}
	return s.Raw.Low + (eu-s.EU.Low)*(s.Raw.High-s.Raw.Low)/(s.EU.High-s.EU.Low)
}

// Point is one tag's place in a device: where it is, how it is encoded.
type Point struct {
	Unit    uint8    // Modbus unit (slave) id
	Area    Area     // data area
	Address uint16   // 0-based protocol address of the first register or bit
	Type    Type     // data type
	Bit     uint8    // Type Bit: bit number 0..15 of the register (0 = least significant)
	Len     uint16   // Type String: length in registers (2 characters each)
	Order   Order    // OrderDefault: the device's order
	Scale   *Scaling // nil: none; behind a pointer, since few points scale (24 bytes a point, not 48)
}

// Span returns the number of registers (register areas) or bits (bit areas)
// the point occupies.
func (p *Point) Span() int {
	if p.Area.IsBit() {
		return 1
	}
	return p.Type.Registers(p.Len)
}

// Validate checks that the type suits the area and that the point lies
// inside the 65,536-entry address space.
func (p *Point) Validate() error {
	if !p.Area.Valid() {
		return fmt.Errorf("modbus: invalid area %d", p.Area)
	}
	if p.Area.IsBit() {
		if p.Type != Bool {
			return fmt.Errorf("modbus: %v at %d: type %v on a bit area (only bool)", p.Area, p.Address, p.Type)
		}
		return nil
	}
	switch p.Type {
	case Bool:
		return fmt.Errorf("modbus: %v at %d: type bool needs coils or discrete inputs; use type bit for a bit of a register", p.Area, p.Address)
	case Bit:
		if p.Bit > 15 {
			return fmt.Errorf("modbus: %v at %d: bit %d out of range 0..15", p.Area, p.Address, p.Bit)
		}
	case String:
		if p.Len < 1 || p.Len > MaxRegisters {
			return fmt.Errorf("modbus: %v at %d: string length %d registers out of range 1..%d", p.Area, p.Address, p.Len, MaxRegisters)
		}
	case Int16, Uint16, Int32, Uint32, Int64, Uint64, Float32, Float64:
	default:
		return fmt.Errorf("modbus: %v at %d: unknown type %v", p.Area, p.Address, p.Type)
	}
	if end := int(p.Address) + p.Span(); end > 65536 {
		return fmt.Errorf("modbus: %v at %d: %v of %d registers runs past address 65535", p.Area, p.Address, p.Type, p.Span())
	}
	return nil
}

// Value is a decoded point value. It is a small value type and decoding
// into it allocates nothing, except for String, whose text is a new string.
// Numbers are held as 64 bits: integers and Bool as their integer value
// (signed types sign-extended), floats as IEEE-754 float64 bits. When the
// point scales, Decode returns a Float64 value in engineering units.
type Value struct {
	typ  Type
	bits uint64
	str  string
}

// Constructors of Value.
func BoolValue(b bool) Value {
	if b {
		return Value{typ: Bool, bits: 1}
	}
	return Value{typ: Bool}
}
func IntValue(t Type, v int64) Value     { return Value{typ: t, bits: uint64(v)} }
func UintValue(t Type, v uint64) Value   { return Value{typ: t, bits: v} }
func FloatValue(t Type, v float64) Value { return Value{typ: t, bits: math.Float64bits(v)} }
func StringValue(s string) Value         { return Value{typ: String, str: s} }

// Type returns the value's type (0 for the zero Value).
func (v Value) Type() Type { return v.typ }

// Bool returns the value as a bool (non-zero is true).
func (v Value) Bool() bool {
	if v.typ == Float32 || v.typ == Float64 {
		return v.Float64() != 0
	}
	return v.bits != 0
}

// Int64 returns an integer value; floats are truncated.
func (v Value) Int64() int64 {
	if v.typ == Float32 || v.typ == Float64 {
		return int64(math.Float64frombits(v.bits))
	}
	return int64(v.bits)
}

// Uint64 returns an unsigned value; floats are truncated.
func (v Value) Uint64() uint64 {
	if v.typ == Float32 || v.typ == Float64 {
		return uint64(math.Float64frombits(v.bits))
	}
	return v.bits
}

// Float64 returns any numeric value as float64.
func (v Value) Float64() float64 {
	switch v.typ {
	case Float32, Float64:
		return math.Float64frombits(v.bits)
	case Int16, Int32, Int64:
		return float64(int64(v.bits))
	}
	return float64(v.bits)
}

// Str returns the text of a String value.
func (v Value) Str() string { return v.str }

// String formats the value for logs.
func (v Value) String() string {
	switch v.typ {
	case String:
		return fmt.Sprintf("%q", v.str)
	case Bool, Bit:
		return fmt.Sprint(v.Bool())
	case Float32, Float64:
		return fmt.Sprint(v.Float64())
	case Int16, Int32, Int64:
		return fmt.Sprint(v.Int64())
	case 0:
		return "<none>"
	}
	return fmt.Sprint(v.bits)
}

// gather reads n (1, 2 or 4) registers from regs in order o and returns them
// as one big-endian integer.
func gather(regs []byte, n int, o Order) uint64 {
	var x uint64
	for i := 0; i < n; i++ {
		src := i
		if o.wordSwap() {
			src = n - 1 - i
		}
		hi, lo := regs[2*src], regs[2*src+1]
		if o.byteSwap() {
			hi, lo = lo, hi
		}
		x = x<<16 | uint64(hi)<<8 | uint64(lo)
	}
	return x
}

// scatter is the inverse of gather: it writes x into n registers of regs.
func scatter(regs []byte, n int, o Order, x uint64) {
	for i := 0; i < n; i++ {
		w := uint16(x >> (16 * uint(n-1-i)))
		hi, lo := byte(w>>8), byte(w)
		if o.byteSwap() {
			hi, lo = lo, hi
		}
		dst := i
		if o.wordSwap() {
			dst = n - 1 - i
		}
		regs[2*dst], regs[2*dst+1] = hi, lo
	}
}

// DecodeRegisters decodes a register-area point from regs, the bytes of
// registers starting at the point's own address (2 bytes per register, as
// on the wire). def is the device's default order. Scaling is applied.
func (p *Point) DecodeRegisters(regs []byte, def Order) (Value, error) {
	n := p.Type.Registers(p.Len)
	if n == 0 || p.Area.IsBit() {
		return Value{}, fmt.Errorf("modbus: decode %v as registers: %w", p.Type, status.BadConfigurationError)
	}
	if len(regs) < 2*n {
		return Value{}, fmt.Errorf("modbus: decode %v: %d bytes, need %d: %w", p.Type, len(regs), 2*n, status.BadCommunicationError)
	}
	o := p.Order.resolve(def)
	var v Value
	switch p.Type {
	case String:
		return Value{typ: String, str: decodeString(regs[:2*n], o)}, nil
	case Bit:
		x := gather(regs, 1, o)
		return Value{typ: Bit, bits: (x >> (p.Bit & 15)) & 1}, nil
	case Int16:
		v = Value{typ: Int16, bits: uint64(int64(int16(gather(regs, 1, o))))}
	case Uint16:
		v = Value{typ: Uint16, bits: gather(regs, 1, o)}
	case Int32:
		v = Value{typ: Int32, bits: uint64(int64(int32(gather(regs, 2, o))))}
	case Uint32:
		v = Value{typ: Uint32, bits: gather(regs, 2, o)}
	case Int64:
		v = Value{typ: Int64, bits: gather(regs, 4, o)}
	case Uint64:
		v = Value{typ: Uint64, bits: gather(regs, 4, o)}
	case Float32:
		f := math.Float32frombits(uint32(gather(regs, 2, o)))
		v = Value{typ: Float32, bits: math.Float64bits(float64(f))}
	case Float64:
		v = Value{typ: Float64, bits: gather(regs, 4, o)}
	}
	if p.Scale.Enabled() {
		return FloatValue(Float64, p.Scale.ToEU(v.Float64())), nil
	}
	return v, nil
}

func decodeString(b []byte, o Order) string {
	var buf [2 * MaxRegisters]byte
	n := 0
	for i := 0; i+1 < len(b); i += 2 {
		hi, lo := b[i], b[i+1]
		if o.byteSwap() {
			hi, lo = lo, hi
		}
		buf[n], buf[n+1] = hi, lo
		n += 2
	}
	s := buf[:n]
	for i, c := range s {
		if c == 0 {
			s = s[:i]
			break
		}
	}
	return string(s)
}

// Decode decodes the point from a block read: data is the response data of
// a read of the point's area starting at blockStart (registers: 2 bytes
// each; bits: packed, least significant bit first, as Modbus sends them).
// def is the device's default order.
func (p *Point) Decode(data []byte, blockStart uint16, def Order) (Value, error) {
	if p.Address < blockStart {
		return Value{}, fmt.Errorf("modbus: point at %d before block start %d: %w", p.Address, blockStart, status.BadConfigurationError)
	}
	off := int(p.Address - blockStart)
	if p.Area.IsBit() {
		if off/8 >= len(data) {
			return Value{}, fmt.Errorf("modbus: bit %d beyond %d bytes of data: %w", off, len(data), status.BadCommunicationError)
		}
		return BoolValue(data[off/8]>>(off%8)&1 != 0), nil
	}
	if 2*off > len(data) {
		return Value{}, fmt.Errorf("modbus: register %d beyond %d bytes of data: %w", off, len(data), status.BadCommunicationError)
	}
	return p.DecodeRegisters(data[2*off:], def)
}

// EncodeRegisters encodes v for a write of the point and appends the
// register bytes to dst. Scaling is reversed (v is in engineering units)
// and the raw value rounded to the nearest integer for integer types.
// A value that does not fit the type is an error with status.BadOutOfRange;
// a value of the wrong kind (a string for a number) status.BadTypeMismatch.
// For Bit, the register's other bits are taken from cur (the current
// register value); the caller reads it first.
func (p *Point) EncodeRegisters(dst []byte, v Value, def Order, cur uint16) ([]byte, error) {
	n := p.Type.Registers(p.Len)
	if n == 0 || p.Area.IsBit() {
		return dst, fmt.Errorf("modbus: encode %v as registers: %w", p.Type, status.BadConfigurationError)
	}
	o := p.Order.resolve(def)
	start := len(dst)
	for i := 0; i < 2*n; i++ {
		dst = append(dst, 0)
	}
	regs := dst[start:]
	if p.Type == String {
		if v.typ != String {
			return dst[:start], fmt.Errorf("modbus: write %v to a string point: %w", v.typ, status.BadTypeMismatch)
		}
		if len(v.str) > 2*n {
			return dst[:start], fmt.Errorf("modbus: string of %d bytes does not fit %d registers: %w", len(v.str), n, status.BadOutOfRange)
		}
		for i := 0; i < len(v.str); i++ {
			j := i
			if o.byteSwap() {
				j ^= 1
			}
			regs[j] = v.str[i]
		}
		return dst, nil
	}
	if v.typ == String || v.typ == 0 {
		return dst[:start], fmt.Errorf("modbus: write %v to a %v point: %w", v.typ, p.Type, status.BadTypeMismatch)
	}
	if p.Type == Bit {
		b := v.Bool()
		if v.typ != Bool && v.typ != Bit {
			if f := v.Float64(); f != 0 && f != 1 {
				return dst[:start], fmt.Errorf("modbus: value %v does not fit a bit: %w", v, status.BadOutOfRange)
			}
		}
		w := cur &^ (1 << (p.Bit & 15))
		if b {
			w |= 1 << (p.Bit & 15)
		}
		scatter(regs, 1, o, uint64(w))
		return dst, nil
	}
	x, err := p.rawBits(v)
	if err != nil {
		return dst[:start], err
	}
	scatter(regs, n, o, x)
	return dst, nil
}

// rawBits converts v (engineering units when scaled) to the point type's
// bit pattern, checking the range.
func (p *Point) rawBits(v Value) (uint64, error) {
	scaled := p.Scale.Enabled()
	isFloat := v.typ == Float32 || v.typ == Float64
	switch p.Type {
	case Float32:
		f := v.Float64()
		if scaled {
			f = p.Scale.ToRaw(f)
		}
		if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
			return 0, fmt.Errorf("modbus: value %v does not fit float32: %w", f, status.BadOutOfRange)
		}
		return uint64(math.Float32bits(float32(f))), nil
	case Float64:
		f := v.Float64()
		if scaled {
			f = p.Scale.ToRaw(f)
		}
		return math.Float64bits(f), nil
	}
	var lo, hi float64
	var bits uint
	signed := false
	switch p.Type {
	case Int16:
		lo, hi, bits, signed = math.MinInt16, math.MaxInt16, 16, true
	case Uint16:
		lo, hi, bits = 0, math.MaxUint16, 16
	case Int32:
		lo, hi, bits, signed = math.MinInt32, math.MaxInt32, 32, true
	case Uint32:
		lo, hi, bits = 0, math.MaxUint32, 32
	case Int64:
		bits, signed = 64, true
	case Uint64:
		bits = 64
	default:
		return 0, fmt.Errorf("modbus: encode type %v: %w", p.Type, status.BadConfigurationError)
	}
	mask := uint64(1)<<bits - 1
	if bits == 64 {
		mask = math.MaxUint64
	}
	if scaled || isFloat {
		f := v.Float64()
		if scaled {
			f = p.Scale.ToRaw(f)
		}
		f = math.Round(f)
		if bits == 64 {
			if signed {
				lo, hi = math.MinInt64, 0x1p63
			} else {
				lo, hi = 0, 0x1p64
			}
			if math.IsNaN(f) || f < lo || f >= hi {
				return 0, fmt.Errorf("modbus: value %v does not fit %v: %w", f, p.Type, status.BadOutOfRange)
			}
			if signed {
				return uint64(int64(f)), nil
			}
			return uint64(f), nil
		}
		if math.IsNaN(f) || f < lo || f > hi {
			return 0, fmt.Errorf("modbus: value %v does not fit %v (%v..%v): %w", f, p.Type, lo, hi, status.BadOutOfRange)
		}
		return uint64(int64(f)) & mask, nil
	}
	// Integer (or bool) source, exact range check.
	srcSigned := v.typ == Int16 || v.typ == Int32 || v.typ == Int64
	if srcSigned {
		i := v.Int64()
		if !signed && i < 0 || bits < 64 && signed && (i < int64(lo) || i > int64(hi)) || bits < 64 && !signed && i > int64(hi) {
			return 0, fmt.Errorf("modbus: value %d does not fit %v: %w", i, p.Type, status.BadOutOfRange)
		}
		return uint64(i) & mask, nil
	}
	u := v.Uint64()
	if signed && (bits == 64 && u > math.MaxInt64 || bits < 64 && u > uint64(hi)) || !signed && bits < 64 && u > uint64(hi) {
		return 0, fmt.Errorf("modbus: value %d does not fit %v: %w", u, p.Type, status.BadOutOfRange)
	}
	return u & mask, nil
}
