package ua_test

// Tests of Part 6 rules that the codec breaks, found while cross-checking
// it against gopcua and fuzzing it. They fail until the code they name is
// fixed; each says where and why.

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
// It FAILS at the time of writing: AppendFloat32/AppendFloat64
// (encode.go) and the Float and Double scalars of Variant.Encode
// (variant.go, appendScalar) write the NaN's bits as they stand, so Go's
// math.NaN() (0x7FF8000000000001) goes out as 01 00 00 00 00 00 f8 7f.
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
