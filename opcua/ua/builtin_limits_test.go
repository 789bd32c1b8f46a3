package ua

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/edged/edged/opcua/ua/status"
)

// bigLimits lets every length through, so that only the remaining input
// can stop a claimed length.
var bigLimits = Limits{
	MaxStringLength:     math.MaxInt32,
	MaxByteStringLength: math.MaxInt32,
	MaxArrayLength:      math.MaxInt32,
	MaxDepth:            64,
}

// claimed is the length 0x7FFFFFFF, little-endian.
var claimed = []byte{0xFF, 0xFF, 0xFF, 0x7F}

// lengthCases are inputs whose length field claims 0x7FFFFFFF elements or
// bytes with only a few bytes behind it.
func lengthCases() []struct {
	name string
	b    []byte
	dec  func(*Decoder)
} {
	variant := func(d *Decoder) { var v Variant; v.Decode(d) }
	// Decoding into a fresh Variant allocates for the empty array that
	// precedes the bad dimensions; a reused one does not.
	reused := new(Variant)
	type tc = struct {
		name string
		b    []byte
		dec  func(*Decoder)
	}
	cases := []tc{
		{"String", cat(claimed, []byte("abc")), func(d *Decoder) { d.ReadString() }},
		{"ByteString", cat(claimed, []byte{1, 2, 3}), func(d *Decoder) { d.ReadByteString(nil) }},
		{"array length", cat(claimed, []byte{1, 2, 3}), func(d *Decoder) { d.ReadArrayLen(1) }},
		{"NodeId string", cat([]byte{0x03, 0x01, 0x00}, claimed, []byte("a")), func(d *Decoder) { var n NodeID; n.Decode(d) }},
		{"NodeId opaque", cat([]byte{0x05, 0x01, 0x00}, claimed, []byte("a")), func(d *Decoder) { var n NodeID; n.Decode(d) }},
		{"ExpandedNodeId URI", cat([]byte{0x80, 0x01}, claimed, []byte("a")), func(d *Decoder) { var n ExpandedNodeID; n.Decode(d) }},
		{"QualifiedName", cat([]byte{0x00, 0x00}, claimed), func(d *Decoder) { var q QualifiedName; q.Decode(d) }},
		{"LocalizedText", cat([]byte{0x02}, claimed), func(d *Decoder) { var l LocalizedText; l.Decode(d) }},
		{"DiagnosticInfo AdditionalInfo", cat([]byte{0x10}, claimed), func(d *Decoder) { var v DiagnosticInfo; v.Decode(d) }},
		{"ExtensionObject unknown body", cat([]byte{0x01, 0x02, 0x88, 0x13, 0x01}, claimed, []byte{0}), func(d *Decoder) { var v ExtensionObject; v.Decode(d) }},
		{"ExtensionObject registered body", cat([]byte{0x01, 0x01, 0x92, 0x10, 0x01}, claimed, []byte{0}), func(d *Decoder) { var v ExtensionObject; v.Decode(d) }},
		{"ExtensionObject XML body", cat([]byte{0x00, 0x00, 0x02}, claimed, []byte{0}), func(d *Decoder) { var v ExtensionObject; v.Decode(d) }},
		{"Variant String", cat([]byte{0x0C}, claimed, []byte("a")), variant},
		{"Variant ByteString", cat([]byte{0x0F}, claimed, []byte("a")), variant},
		{"Variant reserved type 27", cat([]byte{0x1B}, claimed, []byte("a")), variant},
		{"Variant array dims count", cat([]byte{0xC1, 0, 0, 0, 0}, claimed, []byte{0, 0, 0, 0}), func(d *Decoder) { reused.Decode(d) }},
	}
	// An array of every type, claiming 0x7FFFFFFF elements.
	for typ := TypeBoolean; typ <= typeReservedLast; typ++ {
		cases = append(cases, tc{"Variant " + typ.String() + " array", cat([]byte{byte(typ) | 0x80}, claimed, rep([]byte{0}, 20)), variant})
	}
	return cases
}

// TestLengthBeyondInput checks that a length larger than the remaining
// input is BadDecodingError and allocates nothing, even when the limits
// would allow it.
func TestLengthBeyondInput(t *testing.T) {
	for _, tc := range lengthCases() {
		d := Decoder{Limits: bigLimits}
		d.Reset(tc.b)
		tc.dec(&d)
		if d.Err() != status.BadDecodingError {
			t.Errorf("%s: got %v, want BadDecodingError", tc.name, d.Err())
		}
		allocs := testing.AllocsPerRun(100, func() {
			d.Reset(tc.b)
			tc.dec(&d)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations", tc.name, allocs)
		}
	}
}

// TestLengthBeyondLimits checks that the same lengths, with the default
// limits, are BadEncodingLimitsExceeded.
func TestLengthBeyondLimits(t *testing.T) {
	for _, tc := range lengthCases() {
		if err := decodeErr(tc.b, tc.dec); err != status.BadEncodingLimitsExceeded {
			t.Errorf("%s: got %v, want BadEncodingLimitsExceeded", tc.name, err)
		}
	}
}

// TestSmallLimits checks each limit just above and at its value, with the
// input present.
func TestSmallLimits(t *testing.T) {
	lim := Limits{MaxStringLength: 4, MaxByteStringLength: 3, MaxArrayLength: 2, MaxDepth: 64}
	variant := func(d *Decoder) { var v Variant; v.Decode(d) }
	ext := func(d *Decoder) { var v ExtensionObject; v.Decode(d) }
	tests := []struct {
		name string
		b    []byte
		dec  func(*Decoder)
		want error
	}{
		{"String of 4", cat([]byte{4, 0, 0, 0}, []byte("abcd")), func(d *Decoder) { d.ReadString() }, nil},
		{"String of 5", cat([]byte{5, 0, 0, 0}, []byte("abcde")), func(d *Decoder) { d.ReadString() }, status.BadEncodingLimitsExceeded},
		{"ByteString of 3", []byte{3, 0, 0, 0, 1, 2, 3}, func(d *Decoder) { d.ReadByteString(nil) }, nil},
		{"ByteString of 4", []byte{4, 0, 0, 0, 1, 2, 3, 4}, func(d *Decoder) { d.ReadByteString(nil) }, status.BadEncodingLimitsExceeded},
		{"Variant array of 2", []byte{0x81, 2, 0, 0, 0, 1, 1}, variant, nil},
		{"Variant array of 3", []byte{0x81, 3, 0, 0, 0, 1, 1, 1}, variant, status.BadEncodingLimitsExceeded},
		{"Variant 3 dims", cat([]byte{0xC1, 1, 0, 0, 0, 1}, []byte{3, 0, 0, 0}, rep([]byte{1, 0, 0, 0}, 3)), variant, status.BadEncodingLimitsExceeded},
		{"ExtensionObject unknown body of 4", cat([]byte{0x01, 0x02, 0x88, 0x13, 0x01, 4, 0, 0, 0, 1, 2, 3, 4}), ext, status.BadEncodingLimitsExceeded},
		{"ExtensionObject registered body of 10", cat([]byte{0x01, 0x01, 0x92, 0x10, 0x01, 10, 0, 0, 0}, rep([]byte{0}, 10)), ext, status.BadEncodingLimitsExceeded},
		{"ExtensionObject XML body of 5", cat([]byte{0x00, 0x00, 0x02, 5, 0, 0, 0}, []byte("<a/> ")), ext, status.BadEncodingLimitsExceeded},
		{"ExtensionObject XML body of 4", cat([]byte{0x00, 0x00, 0x02, 4, 0, 0, 0}, []byte("<a/>")), ext, nil},
	}
	for _, tt := range tests {
		d := Decoder{Limits: lim}
		d.Reset(tt.b)
		tt.dec(&d)
		if d.Err() != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, d.Err(), tt.want)
		}
	}
}

// nestedExtensionObjects returns k ExtensionObjects with a nestBody, each
// holding a Variant with the next; the innermost Variant is null. That is
// 2k levels of nesting.
func nestedExtensionObjects(k int) []byte {
	b := make([]byte, 0, 10*k)
	for j := k; j > 0; j-- {
		// The body is the Variant: its mask and the j-1 levels inside,
		// of 10 bytes each.
		b = append(b, 0x01, 0x01, 0x93, 0x10) // TypeId ns=1;i=4243
		b = append(b, 0x01)                   // binary body
		b = binary.LittleEndian.AppendUint32(b, uint32(1+10*(j-1)))
		if j > 1 {
			b = append(b, 0x16) // Variant: ExtensionObject
		} else {
			b = append(b, 0x00) // Variant: null
		}
	}
	return b
}

// TestNestingDepth checks that nesting beyond MaxDepth is
// BadEncodingLimitsExceeded, also for input nested 100 000 deep (no stack
// overflow), and that nesting up to the limit decodes.
func TestNestingDepth(t *testing.T) {
	const deep = 100_000
	variant := func(d *Decoder) { var v Variant; v.Decode(d) }
	dataValue := func(d *Decoder) { var v DataValue; v.Decode(d) }
	diag := func(d *Decoder) { var v DiagnosticInfo; v.Decode(d) }
	ext := func(d *Decoder) { var v ExtensionObject; v.Decode(d) }

	// Each maker returns input nested n levels deep, counting every
	// Variant, DataValue, DiagnosticInfo and ExtensionObject.
	makers := []struct {
		name string
		make func(n int) []byte
		dec  func(*Decoder)
	}{
		{"Variant arrays of Variants", func(n int) []byte {
			// n-1 arrays of one Variant, then a null Variant.
			return cat(rep([]byte{0x98, 0x01, 0x00, 0x00, 0x00}, n-1), []byte{0x00})
		}, variant},
		{"DataValue in Variant", func(n int) []byte {
			// Variant(DataValue(Value: Variant(...))): pairs of levels,
			// the last DataValue empty.
			return cat(rep([]byte{0x17, 0x01}, n/2-1), []byte{0x17, 0x00})
		}, variant},
		{"DataValue holding Variants", func(n int) []byte {
			// The last Variant null.
			return cat(rep([]byte{0x01, 0x17}, n/2-1), []byte{0x01, 0x00})
		}, dataValue},
		{"DiagnosticInfo chain", func(n int) []byte {
			return cat(rep([]byte{0x40}, n-1), []byte{0x00})
		}, diag},
		{"ExtensionObject in Variant in ExtensionObject", func(n int) []byte {
			// Pairs of levels: the ExtensionObject and its body's Variant.
			return nestedExtensionObjects(n / 2)
		}, ext},
	}
	for _, m := range makers {
		for _, n := range []int{DefaultLimits.MaxDepth + 2, 1000, deep} {
			if err := decodeErr(m.make(n), m.dec); err != status.BadEncodingLimitsExceeded {
				t.Errorf("%s, %d levels: got %v, want BadEncodingLimitsExceeded", m.name, n, err)
			}
		}
		// Up to the limit it decodes, and every level was left again.
		b := m.make(DefaultLimits.MaxDepth)
		d := NewDecoder(b)
		m.dec(d)
		if d.Err() != nil || d.Remaining() != 0 || d.depth != 0 {
			t.Errorf("%s, %d levels: err %v, %d bytes left, depth %d", m.name, DefaultLimits.MaxDepth, d.Err(), d.Remaining(), d.depth)
		}
	}
}

// TestDepthIsShared checks that siblings do not add up: a long array of
// Variants at the depth limit decodes.
func TestDepthIsShared(t *testing.T) {
	d := Decoder{Limits: Limits{MaxDepth: 2}}
	// Variant array (level 1) of 1000 Variants (level 2).
	b := cat([]byte{0x98, 0xE8, 0x03, 0x00, 0x00}, rep([]byte{0x06, 1, 0, 0, 0}, 1000))
	d.Reset(b)
	var v Variant
	v.Decode(&d)
	if d.Err() != nil || v.Len() != 1000 || d.depth != 0 {
		t.Fatalf("err %v, len %d, depth %d", d.Err(), v.Len(), d.depth)
	}
	// An ExtensionObject's body decodes one level below it.
	d = Decoder{Limits: Limits{MaxDepth: 2}}
	d.Reset(nestedExtensionObjects(1)) // ExtensionObject, null Variant
	var e ExtensionObject
	e.Decode(&d)
	if d.Err() != nil || d.depth != 0 {
		t.Fatalf("err %v, depth %d", d.Err(), d.depth)
	}
	d = Decoder{Limits: Limits{MaxDepth: 1}}
	d.Reset(nestedExtensionObjects(1))
	e.Decode(&d)
	if d.Err() != status.BadEncodingLimitsExceeded {
		t.Fatalf("MaxDepth 1: got %v", d.Err())
	}
}

// TestDimsProduct checks the product of ArrayDimensions against lengths
// at the edges of int32 and int64.
func TestDimsProduct(t *testing.T) {
	tests := []struct {
		dims  []int32
		limit int64
		want  int64
		ok    bool
	}{
		{[]int32{2, 3}, 6, 6, true},
		{[]int32{2, 3}, 5, 6, true},
		{[]int32{0, math.MaxInt32}, 0, 0, true},
		{[]int32{math.MaxInt32, math.MaxInt32, math.MaxInt32, 0}, 0, 0, true},
		{[]int32{math.MaxInt32, math.MaxInt32, math.MaxInt32}, math.MaxInt32, math.MaxInt32 + 1, true},
		{[]int32{65536, 65536}, math.MaxInt32, math.MaxInt32 + 1, true},
		{[]int32{46341, 46341}, math.MaxInt32, math.MaxInt32 + 1, true}, // 46341² = 2^31 + 4633
		{[]int32{46340, 46340}, math.MaxInt32, 46340 * 46340, true},
		{[]int32{1, -1}, 10, 0, false},
		{[]int32{math.MinInt32}, 10, 0, false},
	}
	for _, tt := range tests {
		got, ok := dimsProduct(tt.dims, tt.limit)
		if ok != tt.ok || (ok && (got != tt.want && !(tt.want > tt.limit && got > tt.limit))) {
			t.Errorf("dimsProduct(%v, %d) = %d, %v; want %d, %v", tt.dims, tt.limit, got, ok, tt.want, tt.ok)
		}
	}
}

func TestReadArrayLenNull(t *testing.T) {
	for _, tt := range []struct {
		b    []byte
		n    int
		null bool
		err  error
	}{
		{[]byte{0xFF, 0xFF, 0xFF, 0xFF}, 0, true, nil},
		{[]byte{0x00, 0x00, 0x00, 0x80}, 0, true, nil},
		{[]byte{0x00, 0x00, 0x00, 0x00}, 0, false, nil},
		{[]byte{0x02, 0x00, 0x00, 0x00, 1, 2}, 2, false, nil},
		{[]byte{0x03, 0x00, 0x00, 0x00, 1, 2}, 0, false, status.BadDecodingError},
		{[]byte{0x02, 0x00, 0x00}, 0, false, status.BadDecodingError},
		{cat(claimed, []byte{1}), 0, false, status.BadEncodingLimitsExceeded},
	} {
		d := NewDecoder(tt.b)
		n, null := d.ReadArrayLenNull(1)
		if n != tt.n || null != tt.null || d.Err() != tt.err {
			t.Errorf("% X: got %d, %v, %v; want %d, %v, %v", tt.b, n, null, d.Err(), tt.n, tt.null, tt.err)
		}
	}
}
