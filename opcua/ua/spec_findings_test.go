package ua_test

// Regression tests of faults found while cross-checking the codec against
// gopcua, fuzzing it and reading Part 6. Each was written failing and
// reported to the owner of the code it names; its comment says whether it
// is fixed (and by which commit) or still fails.

import (
	"bytes"
	"math"
	"testing"

	"github.com/edged/edged/opcua/ua"
)

// TestEncodeNaN checks ours against Part 6 §5.2.2.3: every NaN, whatever
// its payload, is encoded as the quiet NaN 0xFFF8000000000000 (Double) or
// 0xFFC00000 (Float), in a Variant and in a structure field.
//
// It failed until a949b2b: AppendFloat32/AppendFloat64 (encode.go) and the
// Float and Double scalars of Variant.Encode (variant.go, appendScalar)
// wrote the NaN's bits as they stood, so Go's math.NaN()
// (0x7FF8000000000001) went out as 01 00 00 00 00 00 f8 7f.
func TestEncodeNaN(t *testing.T) {
	quiet64 := []byte{0, 0, 0, 0, 0, 0, 0xf8, 0xff}
	quiet32 := []byte{0, 0, 0xc0, 0xff}
	nan64 := []float64{math.NaN(), math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff8000000000000)}
	nan32 := []float32{float32(math.NaN()), math.Float32frombits(0x7f800001), math.Float32frombits(0xffc00000)}
	for _, f := range nan64 {
		if got := ua.AppendFloat64(nil, f); !bytes.Equal(got, quiet64) {
			t.Errorf("AppendFloat64(NaN %#x) = % x, want % x", math.Float64bits(f), got, quiet64)
		}
		if got := encodeVariant(ua.MustVariant(f))[1:]; !bytes.Equal(got, quiet64) {
			t.Errorf("Variant Double NaN %#x = % x, want % x", math.Float64bits(f), got, quiet64)
		}
		if got := encodeVariant(ua.MustVariant([]float64{f}))[5:]; !bytes.Equal(got, quiet64) {
			t.Errorf("Variant []Double NaN %#x = % x, want % x", math.Float64bits(f), got, quiet64)
		}
		r := ua.Range{Low: f}
		if got := r.Encode(nil)[:8]; !bytes.Equal(got, quiet64) {
			t.Errorf("Range.Low NaN %#x = % x, want % x", math.Float64bits(f), got, quiet64)
		}
	}
	for _, f := range nan32 {
		if got := ua.AppendFloat32(nil, f); !bytes.Equal(got, quiet32) {
			t.Errorf("AppendFloat32(NaN %#x) = % x, want % x", math.Float32bits(f), got, quiet32)
		}
		if got := encodeVariant(ua.MustVariant(f))[1:]; !bytes.Equal(got, quiet32) {
			t.Errorf("Variant Float NaN %#x = % x, want % x", math.Float32bits(f), got, quiet32)
		}
	}
}

// TestDecodeIntoUsedValue checks that decoding depends on the input alone,
// not on what the value decoded into held before: a server decodes every
// request into the same value, and a handler must not see a field as null
// or empty depending on the previous request. (Found by FuzzMessage.)
//
// It failed until d147dc4 for generated structures (uagen, gen_types.go):
// Decode did m.X = Grow(m.X, d.ReadArrayLen(n)), and ReadArrayLen returns
// 0 for both -1 (null) and 0; Grow(x, 0) is nil for a new value but x[:0],
// an empty non-nil slice, for a used one. So a null array decoded to nil
// (encoded again as -1) into a new value and to an empty slice (encoded as
// 0) into a used one, and an empty array likewise. Variant arrays had the
// same fault for empty arrays until variant.go decoded them as non-nil
// slices (now GrowArray); the last
// check below guards that.
//
// Null and empty arrays are the same value by OPC 10000-6 v1.05 §5.1.11,
// so nothing on the wire breaks; what breaks is the mapping the generated
// code documents ("nil is the null array") and determinism. The fix
// (Decoder.ReadArrayLenNull, null to nil and a length n to a non-nil
// slice) keeps reuse free of allocation, and every array now round-trips
// exactly.
func TestDecodeIntoUsedValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		seqs []uint32
	}{
		{"null array", nil},
		{"empty array", []uint32{}},
	} {
		msg := publishResponse()
		msg.AvailableSequenceNumbers = tc.seqs
		enc := ua.AppendMessage(nil, msg)

		var fresh ua.PublishResponse
		if err := ua.DecodeMessageInto(ua.NewDecoder(enc), &fresh); err != nil {
			t.Fatal(err)
		}
		used := publishResponse() // holds AvailableSequenceNumbers [11 12]
		if err := ua.DecodeMessageInto(ua.NewDecoder(enc), used); err != nil {
			t.Fatal(err)
		}
		f, u := fresh.AvailableSequenceNumbers, used.AvailableSequenceNumbers
		if (f == nil) != (u == nil) || len(f) != len(u) {
			t.Errorf("PublishResponse.AvailableSequenceNumbers, %s on the wire: decoded into a new value %#v, into a used one %#v", tc.name, f, u)
		}
	}

	enc := encodeVariant(ua.MustVariant([]int32{}))
	var fresh ua.Variant
	fresh.Decode(ua.NewDecoder(enc))
	used := ua.MustVariant([]int32{1, 2})
	used.Decode(ua.NewDecoder(enc))
	if !fresh.Equal(used) {
		t.Errorf("an empty Int32 array decoded into a new Variant is %v (encoded % x), into a used one %v (encoded % x)",
			fresh, encodeVariant(fresh), used, encodeVariant(used))
	}
}

// TestMatrixArrayDimensions checks OPC 10000-6 v1.05 §5.2.2.16: "The
// ArrayDimensions field shall only be present if the number of dimensions
// is 2 or greater and all dimensions have a length greater than 0."
//
// Fixed: Variant.Encode writes ArrayDimensions only for two or more
// dimensions all greater than 0. It failed before: NewMatrix accepts a zero dimension
// (dims [0 3] with no values), and Variant.Encode (variant.go) writes the
// ArrayDimensions of any Variant that has them, so that matrix goes out
// as c6 00000000 02000000 00000000 03000000; a Variant decoded with a
// single dimension ([2]) is likewise sent on with its ArrayDimensions. A
// fix: Encode writes ArrayDimensions (and mask bit 0x40) only for two or
// more dimensions all greater than 0, else the plain one-dimensional
// array; or NewMatrix refuses a zero dimension and Decode drops a
// single dimension.
func TestMatrixArrayDimensions(t *testing.T) {
	if v, err := ua.NewMatrix([]int32{}, []int32{0, 3}); err == nil {
		if enc := encodeVariant(v); enc[0]&0x40 != 0 {
			t.Errorf("NewMatrix(dims [0 3]) encodes ArrayDimensions: % x", enc)
		}
	}

	oneDim := []byte{
		0xc6,       // Int32, array, ArrayDimensions
		2, 0, 0, 0, // 2 elements
		1, 0, 0, 0, 2, 0, 0, 0,
		1, 0, 0, 0, // 1 dimension
		2, 0, 0, 0, // of 2
	}
	var v ua.Variant
	d := ua.NewDecoder(oneDim)
	v.Decode(d)
	if d.Err() != nil {
		return // refusing it is fine too
	}
	if enc := encodeVariant(v); enc[0]&0x40 != 0 {
		t.Errorf("a Variant decoded with one dimension is encoded with ArrayDimensions again: % x", enc)
	}
}
