package ua

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/edged/edged/opcua/ua/status"
)

// TestNewVariantValue checks that Value gives back what NewVariant took,
// with the right type and shape, for every built-in type.
func TestNewVariantValue(t *testing.T) {
	for _, c := range variantCases() {
		if c.typ != TypeVariant {
			v, err := NewVariant(c.a)
			if err != nil {
				t.Fatalf("%v: %v", c.typ, err)
			}
			if v.Type() != c.typ || v.IsArray() || v.IsNull() || v.Len() != 0 || v.ArrayDimensions() != nil {
				t.Errorf("%v scalar: type %v, array %v, len %d", c.typ, v.Type(), v.IsArray(), v.Len())
			}
			if got := v.Value(); !equalValues(got, c.a) {
				t.Errorf("%v scalar: Value() = %#v, want %#v", c.typ, got, c.a)
			}
		}
		var v Variant
		if c.typ == TypeByte {
			v = NewByteArray(c.arr.([]byte))
		} else {
			v = MustVariant(c.arr)
		}
		if v.Type() != c.typ || !v.IsArray() || v.Len() != 2 || v.ArrayDimensions() != nil {
			t.Errorf("%v array: type %v, array %v, len %d", c.typ, v.Type(), v.IsArray(), v.Len())
		}
		if got := v.Value(); !sameSlice(got, c.arr) {
			t.Errorf("%v array: Value() is not the slice given", c.typ)
		}
		m, err := NewMatrix(c.mat, []int32{2, 3})
		if err != nil {
			t.Fatalf("%v matrix: %v", c.typ, err)
		}
		if m.Type() != c.typ || !m.IsArray() || m.Len() != 6 || !reflect.DeepEqual(m.ArrayDimensions(), []int32{2, 3}) {
			t.Errorf("%v matrix: type %v, array %v, len %d, dims %v", c.typ, m.Type(), m.IsArray(), m.Len(), m.ArrayDimensions())
		}
	}
	if v := MustVariant(nil); !v.IsNull() || v.Type() != TypeNull || v.Value() != nil {
		t.Errorf("nil: %v", v)
	}
	// DateTime keeps 100 ns in UTC.
	local := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))
	if got := MustVariant(local).Value().(time.Time); !got.Equal(local.Truncate(100)) || got.Location() != time.UTC {
		t.Errorf("DateTime: %v", got)
	}
}

// sameSlice reports whether a and b are the same slice (not a copy).
func sameSlice(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Type() == vb.Type() && va.Len() == vb.Len() && va.Pointer() == vb.Pointer()
}

func TestNewVariantErrors(t *testing.T) {
	var x int32
	for _, bad := range []any{1, uint(1), &x, struct{}{}, MustVariant(int32(1)), []int{1}, map[string]int{}, [2]int32{}} {
		if _, err := NewVariant(bad); err == nil || !strings.HasPrefix(err.Error(), "ua: NewVariant: ") {
			t.Errorf("NewVariant(%T): err %v", bad, err)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MustVariant(1) did not panic")
		}
	}()
	MustVariant(1)
}

func TestNewMatrix(t *testing.T) {
	dims := []int32{2, 2}
	m, err := NewMatrix([]byte{1, 2, 3, 4}, dims)
	if err != nil || m.Type() != TypeByte || !m.IsArray() {
		t.Fatalf("Byte matrix: %v, %v", m, err)
	}
	dims[0] = 9 // the dimensions were copied
	if !reflect.DeepEqual(m.ArrayDimensions(), []int32{2, 2}) {
		t.Errorf("dims %v", m.ArrayDimensions())
	}
	if _, err := NewMatrix([]float64(nil), []int32{0, 5}); err != nil {
		t.Errorf("null 0×5 matrix: %v", err)
	}
	for _, tt := range []struct {
		values any
		dims   []int32
	}{
		{int32(1), []int32{1, 1}},
		{1, []int32{1, 1}},
		{[]int32{1, 2}, []int32{2}},
		{[]int32{1, 2}, nil},
		{[]int32{1, 2}, []int32{2, 2}},
		{[]int32{1, 2}, []int32{-1, -2}},
		{[]int32{}, []int32{-1, 0}},
		{[]int32{1}, []int32{math.MaxInt32, math.MaxInt32, math.MaxInt32}},
	} {
		if _, err := NewMatrix(tt.values, tt.dims); err == nil || !strings.HasPrefix(err.Error(), "ua: NewMatrix: ") {
			t.Errorf("NewMatrix(%#v, %v): err %v", tt.values, tt.dims, err)
		}
	}
}

func TestVariantGetters(t *testing.T) {
	var v Variant
	v.SetInt32(-5)
	if x, ok := v.Int32(); !ok || x != -5 {
		t.Errorf("Int32 = %v, %v", x, ok)
	}
	// No conversion between types.
	if _, ok := v.Int64(); ok {
		t.Error("Int64 of an Int32")
	}
	if _, ok := v.Uint32(); ok {
		t.Error("Uint32 of an Int32")
	}
	if _, ok := MustVariant([]int32{1}).Int32(); ok {
		t.Error("Int32 of an array")
	}
	if _, ok := MustVariant(XMLElement("<a/>")).StringValue(); ok {
		t.Error("StringValue of an XmlElement")
	}
	checks := []struct {
		set  func(*Variant)
		get  func(Variant) (any, bool)
		want any
	}{
		{func(v *Variant) { v.SetBool(true) }, func(v Variant) (any, bool) { return v.Bool() }, true},
		{func(v *Variant) { v.SetInt8(-8) }, func(v Variant) (any, bool) { return v.Int8() }, int8(-8)},
		{func(v *Variant) { v.SetUint8(8) }, func(v Variant) (any, bool) { return v.Uint8() }, uint8(8)},
		{func(v *Variant) { v.SetInt16(-16) }, func(v Variant) (any, bool) { return v.Int16() }, int16(-16)},
		{func(v *Variant) { v.SetUint16(16) }, func(v Variant) (any, bool) { return v.Uint16() }, uint16(16)},
		{func(v *Variant) { v.SetInt32(-32) }, func(v Variant) (any, bool) { return v.Int32() }, int32(-32)},
		{func(v *Variant) { v.SetUint32(32) }, func(v Variant) (any, bool) { return v.Uint32() }, uint32(32)},
		{func(v *Variant) { v.SetInt64(math.MinInt64) }, func(v Variant) (any, bool) { return v.Int64() }, int64(math.MinInt64)},
		{func(v *Variant) { v.SetUint64(math.MaxUint64) }, func(v Variant) (any, bool) { return v.Uint64() }, uint64(math.MaxUint64)},
		{func(v *Variant) { v.SetFloat32(-1.5) }, func(v Variant) (any, bool) { return v.Float32() }, float32(-1.5)},
		{func(v *Variant) { v.SetFloat64(math.Inf(-1)) }, func(v Variant) (any, bool) { return v.Float64() }, math.Inf(-1)},
		{func(v *Variant) { v.SetString("s") }, func(v Variant) (any, bool) { return v.StringValue() }, "s"},
		{func(v *Variant) { v.SetByteString([]byte{1}) }, func(v Variant) (any, bool) { return v.ByteString() }, []byte{1}},
		{func(v *Variant) { v.SetStatusCode(status.BadDecodingError) }, func(v Variant) (any, bool) { return v.StatusCode() }, status.BadDecodingError},
		{func(v *Variant) { v.SetDateTime(someTime) }, func(v Variant) (any, bool) { return v.DateTime() }, someTime},
	}
	// Each setter works over any previous content, and the Variant then
	// equals the one NewVariant makes of the value.
	v = MustVariant([]string{"old"})
	for _, c := range checks {
		c.set(&v)
		got, ok := c.get(v)
		if !ok || !equalValues(got, c.want) {
			t.Errorf("%T: got %v, %v", c.want, got, ok)
		}
		if w := MustVariant(c.want); !v.Equal(w) || !reflect.DeepEqual(v, w) {
			t.Errorf("%T: %#v differs from NewVariant's %#v", c.want, v, w)
		}
		if v.IsArray() || v.ArrayDimensions() != nil {
			t.Errorf("%T: still an array", c.want)
		}
		// Every other getter reports false.
		for _, o := range checks {
			if reflect.TypeOf(o.want) != reflect.TypeOf(c.want) {
				if _, ok := o.get(v); ok {
					t.Errorf("getter of %T accepts %T", o.want, c.want)
				}
			}
		}
	}
	v.Reset()
	if !v.IsNull() || !reflect.DeepEqual(v, Variant{}) {
		t.Errorf("Reset: %#v", v)
	}
}

func TestVariantEqual(t *testing.T) {
	nan := math.NaN()
	negZero := math.Copysign(0, -1)
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	equal := [][2]Variant{
		{MustVariant(nan), MustVariant(nan)},
		{MustVariant([]float64{nan}), MustVariant([]float64{nan})},
		{MustVariant(t0), MustVariant(t0.Add(50))},                           // same 100 ns tick
		{MustVariant([]time.Time{t0}), MustVariant([]time.Time{t0.Add(99)})}, // same tick
		{MustVariant(time.Time{}), MustVariant(time.Date(1500, 1, 1, 0, 0, 0, 0, time.UTC))},
		{MustVariant(t0), MustVariant(t0.In(time.FixedZone("x", 7200)))},
		{MustVariant(ExtensionObject{Body: &testBody{A: 1}}), MustVariant(ExtensionObject{
			TypeID: testBodyID, Encoding: 1, Raw: []byte{1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF}})},
		{MustVariant(DiagnosticInfo{EncodingMask: DiagLocale, Locale: 1, SymbolicID: 5}), MustVariant(DiagnosticInfo{EncodingMask: DiagLocale, Locale: 1})},
		{MustVariant([]Variant{MustVariant("a")}), MustVariant([]Variant{MustVariant("a")})},
		{mustMatrix(t, []int32{1, 2}, 1, 2), mustMatrix(t, []int32{1, 2}, 1, 2)},
		{{}, {}},
	}
	for _, p := range equal {
		if !p[0].Equal(p[1]) || !p[1].Equal(p[0]) {
			t.Errorf("%v and %v differ", p[0], p[1])
		}
	}
	differ := [][2]Variant{
		{MustVariant(0.0), MustVariant(negZero)},
		{MustVariant(int32(1)), MustVariant(uint32(1))},
		{MustVariant(int32(1)), MustVariant([]int32{1})},
		{MustVariant([]int32(nil)), MustVariant([]int32{})},
		{MustVariant([]byte(nil)), MustVariant([]byte{})},
		{MustVariant([]byte{1}), NewByteArray([]byte{1})},
		{MustVariant([]int32{1, 2}), mustMatrix(t, []int32{1, 2}, 1, 2)},
		{mustMatrix(t, []int32{1, 2}, 1, 2), mustMatrix(t, []int32{1, 2}, 2, 1)},
		{MustVariant("a"), MustVariant(XMLElement("a"))},
		{MustVariant(t0), MustVariant(t0.Add(100))},
		{MustVariant(NewNumericNodeID(0, 1)), MustVariant(NewNumericNodeID(1, 1))},
		{MustVariant(DataValue{Status: 1}), MustVariant(DataValue{})},
		{MustVariant([]Variant{MustVariant("a")}), MustVariant([]Variant{MustVariant("b")})},
		{MustVariant(ExtensionObject{Body: &testBody{A: 1}}), MustVariant(ExtensionObject{Body: &testBody{A: 2}})},
		{MustVariant(int32(0)), {}},
	}
	for _, p := range differ {
		if p[0].Equal(p[1]) || p[1].Equal(p[0]) {
			t.Errorf("%v and %v are equal", p[0], p[1])
		}
	}
}

// TestVariantDecodeReuse checks that decoding into a Variant holding an
// array of the same type reuses the slice, and that a type change
// replaces it.
func TestVariantDecodeReuse(t *testing.T) {
	v := MustVariant(make([]int32, 10))
	old := v.Value().([]int32)
	d := NewDecoder(MustVariantEnc([]int32{7, 8, 9}))
	v.Decode(d)
	got := v.Value().([]int32)
	if d.Err() != nil || !reflect.DeepEqual(got, []int32{7, 8, 9}) || unsafe.SliceData(got) != unsafe.SliceData(old) {
		t.Fatalf("got %v (%v), reused %v", got, d.Err(), unsafe.SliceData(got) == unsafe.SliceData(old))
	}
	// A String array: the strings themselves are reused when equal.
	v = MustVariant([]string{"alpha", "beta"})
	alpha := v.Value().([]string)[0]
	d = NewDecoder(MustVariantEnc([]string{"alpha", "gamma"}))
	v.Decode(d)
	s := v.Value().([]string)
	if s[1] != "gamma" || unsafe.StringData(s[0]) != unsafe.StringData(alpha) {
		t.Errorf("String array: %v", s)
	}
	// Another type: the old slice is dropped.
	d = NewDecoder(MustVariantEnc([]uint32{1}))
	v.Decode(d)
	if u, ok := v.Value().([]uint32); !ok || len(u) != 1 || u[0] != 1 {
		t.Errorf("UInt32 array: %#v", v.Value())
	}
	// A scalar after an array, and an array after a matrix.
	d = NewDecoder(MustVariantEnc(int32(3)))
	v.Decode(d)
	if x, ok := v.Int32(); !ok || x != 3 || v.IsArray() {
		t.Errorf("scalar: %v", v)
	}
	v = mustMatrix(t, []int32{1, 2, 3, 4}, 2, 2)
	d = NewDecoder(MustVariantEnc([]int32{5}))
	v.Decode(d)
	if v.ArrayDimensions() != nil || !reflect.DeepEqual(v, MustVariant([]int32{5})) {
		t.Errorf("array after matrix: %#v", v)
	}
	// A null Variant clears everything.
	d = NewDecoder([]byte{0})
	v.Decode(d)
	if !reflect.DeepEqual(v, Variant{}) {
		t.Errorf("null: %#v", v)
	}
}

// MustVariantEnc returns the encoding of MustVariant(x).
func MustVariantEnc(x any) []byte {
	v := MustVariant(x)
	return v.Encode(nil)
}

func TestVariantString(t *testing.T) {
	for v, want := range map[*Variant]string{
		new(Variant):                                        "null",
		ptr(MustVariant(int32(42))):                         "Int32(42)",
		ptr(MustVariant([]float64{1, 2.5})):                 "[]Double[1 2.5]",
		ptr(mustMatrix(t, []int32{1, 2, 3, 4, 5, 6}, 2, 3)): "[]Int32[1 2 3 4 5 6] dims [2 3]",
		ptr(MustVariant(NewStringNodeID(2, "a"))):           "NodeId(ns=2;s=a)",
	} {
		if got := v.String(); got != want {
			t.Errorf("String = %q, want %q", got, want)
		}
	}
	if TypeDiagnosticInfo.String() != "DiagnosticInfo" || TypeID(26).String() != "TypeID(26)" || TypeNull.String() != "Null" {
		t.Error("TypeID.String")
	}
}

func ptr[T any](v T) *T { return &v }

// TestVariantReservedTypes checks that type ids 26-31 decode as
// ByteStrings (OPC 10000-6 §5.2.2.16) and are passed on unchanged.
func TestVariantReservedTypes(t *testing.T) {
	for typ := typeReservedFirst; typ <= typeReservedLast; typ++ {
		b := []byte{byte(typ), 0x02, 0, 0, 0, 0xAB, 0xCD}
		var v Variant
		d := NewDecoder(b)
		v.Decode(d)
		if d.Err() != nil || v.Type() != typ || v.IsArray() {
			t.Fatalf("type %d: %v, %v", typ, v, d.Err())
		}
		if got, ok := v.Value().([]byte); !ok || !reflect.DeepEqual(got, []byte{0xAB, 0xCD}) {
			t.Errorf("type %d: Value %#v", typ, v.Value())
		}
		if _, ok := v.ByteString(); ok {
			t.Errorf("type %d: ByteString accepts it", typ)
		}
		if re := v.Encode(nil); !reflect.DeepEqual(re, b) {
			t.Errorf("type %d: re-encoded % X", typ, re)
		}
	}
}

func TestVariantNumber(t *testing.T) {
	for _, tc := range []struct {
		v    Variant
		want float64
		ok   bool
	}{
		{MustVariant(true), 1, true},
		{MustVariant(int16(-7)), -7, true},
		{MustVariant(uint64(1 << 40)), 1 << 40, true},
		{MustVariant(float32(2.5)), 2.5, true},
		{MustVariant(-0.25), -0.25, true},
		{MustVariant("3"), 0, false},
		{MustVariant([]int32{1}), 0, false},
		{Variant{}, 0, false},
	} {
		if got, ok := tc.v.Number(); got != tc.want || ok != tc.ok {
			t.Errorf("%v: Number() = %v, %v; want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}
