package modbus

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/edged/edged/opcua/ua/status"
)

func regsOf(ws ...uint16) []byte {
	b := make([]byte, 2*len(ws))
	for i, w := range ws {
		be16(b[2*i:], w)
	}
	return b
}

// Hand-computed vectors: value bytes A B C D (E F G H) from the most
// significant; registers as they travel on the wire.
func TestOrderVectors(t *testing.T) {
	tests := []struct {
		typ  Type
		o    Order
		regs []byte
		want Value
	}{
		// float32 123.456 = 0x42F6E979 (the Order doc comment's example)
		{Float32, ABCD, regsOf(0x42F6, 0xE979), FloatValue(Float32, float64(float32(123.456)))},
		{Float32, CDAB, regsOf(0xE979, 0x42F6), FloatValue(Float32, float64(float32(123.456)))},
		{Float32, BADC, regsOf(0xF642, 0x79E9), FloatValue(Float32, float64(float32(123.456)))},
		{Float32, DCBA, regsOf(0x79E9, 0xF642), FloatValue(Float32, float64(float32(123.456)))},
		// uint32 0x01020304
		{Uint32, ABCD, regsOf(0x0102, 0x0304), UintValue(Uint32, 0x01020304)},
		{Uint32, CDAB, regsOf(0x0304, 0x0102), UintValue(Uint32, 0x01020304)},
		{Uint32, BADC, regsOf(0x0201, 0x0403), UintValue(Uint32, 0x01020304)},
		{Uint32, DCBA, regsOf(0x0403, 0x0201), UintValue(Uint32, 0x01020304)},
		// int32 -2 = 0xFFFFFFFE
		{Int32, ABCD, regsOf(0xFFFF, 0xFFFE), IntValue(Int32, -2)},
		{Int32, CDAB, regsOf(0xFFFE, 0xFFFF), IntValue(Int32, -2)},
		{Int32, DCBA, regsOf(0xFEFF, 0xFFFF), IntValue(Int32, -2)},
		// uint64 0x0102030405060708
		{Uint64, ABCD, regsOf(0x0102, 0x0304, 0x0506, 0x0708), UintValue(Uint64, 0x0102030405060708)},
		{Uint64, CDAB, regsOf(0x0708, 0x0506, 0x0304, 0x0102), UintValue(Uint64, 0x0102030405060708)},
		{Uint64, BADC, regsOf(0x0201, 0x0403, 0x0605, 0x0807), UintValue(Uint64, 0x0102030405060708)},
		{Uint64, DCBA, regsOf(0x0807, 0x0605, 0x0403, 0x0201), UintValue(Uint64, 0x0102030405060708)},
		// int64 -2
		{Int64, ABCD, regsOf(0xFFFF, 0xFFFF, 0xFFFF, 0xFFFE), IntValue(Int64, -2)},
		{Int64, CDAB, regsOf(0xFFFE, 0xFFFF, 0xFFFF, 0xFFFF), IntValue(Int64, -2)},
		// float64 -2.5 = 0xC004000000000000
		{Float64, ABCD, regsOf(0xC004, 0, 0, 0), FloatValue(Float64, -2.5)},
		{Float64, CDAB, regsOf(0, 0, 0, 0xC004), FloatValue(Float64, -2.5)},
		{Float64, BADC, regsOf(0x04C0, 0, 0, 0), FloatValue(Float64, -2.5)},
		{Float64, DCBA, regsOf(0, 0, 0, 0x04C0), FloatValue(Float64, -2.5)},
		// 16 bits: only the byte swap applies
		{Int16, ABCD, regsOf(0xFFFE), IntValue(Int16, -2)},
		{Int16, CDAB, regsOf(0xFFFE), IntValue(Int16, -2)},
		{Int16, BADC, regsOf(0xFEFF), IntValue(Int16, -2)},
		{Uint16, DCBA, regsOf(0x3412), UintValue(Uint16, 0x1234)},
		{Uint16, ABCD, regsOf(0x1234), UintValue(Uint16, 0x1234)},
	}
	for _, tc := range tests {
		p := Point{Area: HoldingRegisters, Type: tc.typ}
		got, err := p.DecodeRegisters(tc.regs, tc.o)
		if err != nil || got != tc.want {
			t.Errorf("decode %v %v % x = %v, %v; want %v", tc.typ, tc.o, tc.regs, got, err, tc.want)
		}
		// Per-point override beats the device default.
		p.Order = tc.o
		if got, _ := p.DecodeRegisters(tc.regs, DCBA); got != tc.want && tc.o != DCBA {
			t.Errorf("override %v: got %v", tc.o, got)
		}
		p.Order = OrderDefault
		enc, err := p.EncodeRegisters(nil, tc.want, tc.o, 0)
		if err != nil || !bytes.Equal(enc, tc.regs) {
			t.Errorf("encode %v %v %v = % x, %v; want % x", tc.typ, tc.o, tc.want, enc, err, tc.regs)
		}
	}
}

func TestStringAndBit(t *testing.T) {
	p := Point{Area: HoldingRegisters, Type: String, Len: 3}
	for _, tc := range []struct {
		o    Order
		regs []byte
		s    string
	}{
		{ABCD, []byte("ABCDE\x00"), "ABCDE"},
		{CDAB, []byte("ABCDEF"), "ABCDEF"},
		{BADC, []byte("BADC\x00E"), "ABCDE"},
		{DCBA, []byte("BA\x00\x00\x00\x00"), "AB"},
	} {
		v, err := p.DecodeRegisters(tc.regs, tc.o)
		if err != nil || v.Str() != tc.s || v.Type() != String {
			t.Errorf("%v: %q, %v; want %q", tc.o, v.Str(), err, tc.s)
		}
		enc, err := p.EncodeRegisters(nil, StringValue(tc.s), tc.o, 0)
		if err != nil || !bytes.Equal(enc, tc.regs) {
			t.Errorf("%v: encode % x, %v; want % x", tc.o, enc, err, tc.regs)
		}
	}
	if _, err := p.EncodeRegisters(nil, StringValue("1234567"), ABCD, 0); !errors.Is(err, status.BadOutOfRange) {
		t.Errorf("too long string: %v", err)
	}
	b := Point{Area: InputRegisters, Type: Bit, Bit: 9}
	if v, _ := b.DecodeRegisters(regsOf(0x0200), ABCD); !v.Bool() {
		t.Error("bit 9 of 0x0200 not set")
	}
	if v, _ := b.DecodeRegisters(regsOf(0x0002), BADC); !v.Bool() {
		t.Error("bit 9 of byte-swapped 0x0002 not set")
	}
	if v, _ := b.DecodeRegisters(regsOf(0xFDFF), ABCD); v.Bool() {
		t.Error("bit 9 of 0xFDFF set")
	}
	enc, err := b.EncodeRegisters(nil, BoolValue(true), ABCD, 0x0001)
	if err != nil || !bytes.Equal(enc, regsOf(0x0201)) {
		t.Errorf("set bit 9 in 0x0001: % x %v", enc, err)
	}
	enc, _ = b.EncodeRegisters(nil, BoolValue(false), ABCD, 0xFFFF)
	if !bytes.Equal(enc, regsOf(0xFDFF)) {
		t.Errorf("clear bit 9 in 0xFFFF: % x", enc)
	}
}

func TestEncodeRange(t *testing.T) {
	bad := []struct {
		typ Type
		v   Value
	}{
		{Int16, IntValue(Int64, 32768)},
		{Int16, IntValue(Int64, -32769)},
		{Uint16, IntValue(Int64, -1)},
		{Uint16, UintValue(Uint64, 65536)},
		{Int32, FloatValue(Float64, 2147483648)},
		{Uint32, FloatValue(Float64, -0.6)},
		{Uint32, UintValue(Uint64, 1<<32)},
		{Int64, UintValue(Uint64, 1<<63)},
		{Uint64, IntValue(Int64, -1)},
		{Uint64, FloatValue(Float64, 0x1p64)},
		{Float32, FloatValue(Float64, 1e39)},
		{Int16, FloatValue(Float64, math.NaN())},
	}
	for _, tc := range bad {
		p := Point{Area: HoldingRegisters, Type: tc.typ}
		_, err := p.EncodeRegisters(nil, tc.v, ABCD, 0)
		if !errors.Is(err, status.BadOutOfRange) {
			t.Errorf("encode %v into %v: err %v, want BadOutOfRange", tc.v, tc.typ, err)
		}
	}
	p := Point{Area: HoldingRegisters, Type: Int16}
	if _, err := p.EncodeRegisters(nil, StringValue("x"), ABCD, 0); !errors.Is(err, status.BadTypeMismatch) {
		t.Errorf("string into int16: %v", err)
	}
	good := []struct {
		typ  Type
		v    Value
		regs []byte
	}{
		{Int16, IntValue(Int64, -32768), regsOf(0x8000)},
		{Uint16, UintValue(Uint64, 65535), regsOf(0xFFFF)},
		{Int32, FloatValue(Float64, -1.4), regsOf(0xFFFF, 0xFFFF)},
		{Uint64, UintValue(Uint64, math.MaxUint64), regsOf(0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF)},
		{Int64, IntValue(Int64, math.MinInt64), regsOf(0x8000, 0, 0, 0)},
	}
	for _, tc := range good {
		p := Point{Area: HoldingRegisters, Type: tc.typ}
		enc, err := p.EncodeRegisters(nil, tc.v, ABCD, 0)
		if err != nil || !bytes.Equal(enc, tc.regs) {
			t.Errorf("encode %v into %v: % x, %v", tc.v, tc.typ, enc, err)
		}
	}
}

func TestScaling(t *testing.T) {
	s := Scaling{Raw: Range{0, 27648}, EU: Range{0, 10}}
	if got := s.ToEU(13824); got != 5 {
		t.Errorf("ToEU(13824) = %v", got)
	}
	if got := s.ToRaw(2.5); got != 6912 {
		t.Errorf("ToRaw(2.5) = %v", got)
	}
	if s.EURange() != (Range{0, 10}) {
		t.Error("EURange")
	}
	// 4..20 mA as -100..+100 %
	s2 := Scaling{Raw: Range{4, 20}, EU: Range{-100, 100}}
	if got := s2.ToEU(12); got != 0 {
		t.Errorf("ToEU(12) = %v", got)
	}
	p := Point{Area: InputRegisters, Type: Int16, Scale: &Scaling{Raw: Range{-32768, 32767}, EU: Range{-1, 1}}}
	v, _ := p.DecodeRegisters(regsOf(0x7FFF), ABCD)
	if v.Type() != Float64 || v.Float64() != 1 {
		t.Errorf("scaled decode %v", v)
	}
	// Encode reverses the scaling; out-of-range engineering value fails.
	p.Area = HoldingRegisters
	enc, err := p.EncodeRegisters(nil, FloatValue(Float64, -1), ABCD, 0)
	if err != nil || !bytes.Equal(enc, regsOf(0x8000)) {
		t.Errorf("scaled encode -1: % x %v", enc, err)
	}
	if _, err := p.EncodeRegisters(nil, FloatValue(Float64, 1.1), ABCD, 0); !errors.Is(err, status.BadOutOfRange) {
		t.Errorf("scaled encode 1.1: %v", err)
	}
	if (&Scaling{}).Enabled() || (*Scaling)(nil).Enabled() || (Scaling{}).ToEU(3) != 3 {
		t.Error("zero scaling")
	}
}

func TestDecodeBlock(t *testing.T) {
	data := regsOf(0, 0x1234, 0x42F6, 0xE979)
	p := Point{Area: HoldingRegisters, Address: 102, Type: Float32}
	v, err := p.Decode(data, 100, ABCD)
	if err != nil || v.Float64() != float64(float32(123.456)) {
		t.Errorf("%v %v", v, err)
	}
	p = Point{Area: HoldingRegisters, Address: 103, Type: Float32}
	if _, err := p.Decode(data, 100, ABCD); err == nil {
		t.Error("decode past the block: no error")
	}
	c := Point{Area: Coils, Address: 10, Type: Bool}
	if v, _ := c.Decode([]byte{0x00, 0x04}, 0, ABCD); !v.Bool() {
		t.Error("coil 10 of 00 04")
	}
	if v, _ := c.Decode([]byte{0x00, 0x04}, 1, ABCD); v.Bool() {
		t.Error("coil 10 from 1 of 00 04 (bit 9)")
	}
}

func TestDecodeAllocs(t *testing.T) {
	data := make([]byte, 250)
	pts := decodeBenchPoints()
	n := testing.AllocsPerRun(100, func() {
		for i := range pts {
			pts[i].Decode(data, 0, CDAB)
		}
	})
	if n != 0 {
		t.Errorf("%v allocs per decode of %d points", n, len(pts))
	}
}

// decodeBenchPoints: 60 values in one 125-register block.
func decodeBenchPoints() []Point {
	var pts []Point
	types := []Type{Float32, Int16, Uint32, Uint16, Int32, Bit, Float64, Int64, Uint64}
	addr := 0
	for i := 0; len(pts) < 60; i++ {
		tp := types[i%len(types)]
		p := Point{Area: HoldingRegisters, Address: uint16(addr), Type: tp, Bit: uint8(i % 16)}
		if i%5 == 0 {
			p.Scale = &Scaling{Raw: Range{0, 1000}, EU: Range{0, 100}}
		}
		if addr+p.Span() > 125 {
			addr = 0
			continue
		}
		pts = append(pts, p)
		addr += p.Span()
	}
	return pts
}

func BenchmarkDecodeBlock(b *testing.B) {
	data := make([]byte, 250)
	for i := range data {
		data[i] = byte(i)
	}
	pts := decodeBenchPoints()
	b.ReportAllocs()
	var sink float64
	for b.Loop() {
		for i := range pts {
			v, _ := pts[i].Decode(data, 0, ABCD)
			sink += v.Float64()
		}
	}
	_ = sink
}

func TestParseAddress(t *testing.T) {
	ok := []struct {
		s    string
		a    Area
		addr uint16
	}{
		{"40001", HoldingRegisters, 0},
		{"40100", HoldingRegisters, 99},
		{"49999", HoldingRegisters, 9998},
		{"400001", HoldingRegisters, 0},
		{"465536", HoldingRegisters, 65535},
		{"30001", InputRegisters, 0},
		{"300010", InputRegisters, 9},
		{"10001", DiscreteInputs, 0},
		{"00001", Coils, 0},
		{"000020", Coils, 19},
	}
	for _, tc := range ok {
		a, addr, err := ParseAddress(tc.s)
		if err != nil || a != tc.a || addr != tc.addr {
			t.Errorf("ParseAddress(%q) = %v %d %v", tc.s, a, addr, err)
		}
		a2, addr2, err := ParsePointAddress(tc.s)
		if err != nil || a2 != a || addr2 != addr {
			t.Errorf("ParsePointAddress(%q) = %v %d %v", tc.s, a2, addr2, err)
		}
	}
	if FormatAddress(HoldingRegisters, 0) != "400001" || FormatAddress(Coils, 65535) != "065536" {
		t.Error("FormatAddress")
	}
	for _, s := range []string{"", "4001", "40000", "400000", "465537", "20001", "50001", "4000a", "4000001", "-4001", "hr:65536", "xx:1", "hr:-1"} {
		_, _, err := ParsePointAddress(s)
		if err == nil {
			t.Errorf("ParsePointAddress(%q): no error", s)
			continue
		}
		if want := "\"" + s + "\""; !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("error %q does not name the input %s", err, want)
		}
	}
	for _, tc := range []struct {
		s    string
		a    Area
		addr uint16
	}{{"hr:0", HoldingRegisters, 0}, {"coils:17", Coils, 17}, {"ir:65535", InputRegisters, 65535}, {"di:3", DiscreteInputs, 3}} {
		a, addr, err := ParsePointAddress(tc.s)
		if err != nil || a != tc.a || addr != tc.addr {
			t.Errorf("ParsePointAddress(%q) = %v %d %v", tc.s, a, addr, err)
		}
	}
}

func TestValidate(t *testing.T) {
	bad := []Point{
		{Area: Coils, Type: Int16},
		{Area: HoldingRegisters, Type: Bool},
		{Area: HoldingRegisters, Type: Bit, Bit: 16},
		{Area: HoldingRegisters, Type: String},
		{Area: HoldingRegisters, Type: String, Len: 126},
		{Area: HoldingRegisters, Type: Float64, Address: 65533},
		{Area: 2, Type: Int16},
		{Area: HoldingRegisters, Type: 99},
	}
	for _, p := range bad {
		if err := p.Validate(); err == nil {
			t.Errorf("%+v: no error", p)
		}
	}
	if err := (&Point{Area: HoldingRegisters, Type: Float64, Address: 65532}).Validate(); err != nil {
		t.Error(err)
	}
}

func be16(b []byte, v uint16) { b[0], b[1] = byte(v>>8), byte(v) }
