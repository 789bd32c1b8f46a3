package addrspace

import (
	"testing"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// FuzzNumericRange parses arbitrary ranges and applies them to arrays,
// matrices and strings: no panic, and a result never larger than its input.
func FuzzNumericRange(f *testing.F) {
	for _, s := range []string{"", "0", "1:2", "1:2,0:1", "0:5,3", "0:2,4", "4294967295", "1,1,1", "9:10,0"} {
		f.Add(s)
	}
	matrix, _ := ua.NewMatrix([]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, []int32{3, 4})
	cube, _ := ua.NewMatrix(make([]string, 24), []int32{2, 3, 4})
	values := []ua.Variant{
		ua.MustVariant([]float64{0, 1, 2, 3}), ua.MustVariant([]string{"ab", "cde", ""}), ua.MustVariant("hello"),
		ua.MustVariant([]byte{1, 2}), ua.NewByteArray([]byte{1, 2, 3}), matrix, cube, ua.MustVariant(int32(1)),
		ua.MustVariant([][]byte{{1}, {2, 3}}), ua.MustVariant([]int32{}), {},
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseNumericRange(s)
		if err != nil {
			if err != status.BadIndexRangeInvalid {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		for _, v := range values {
			out, st := r.Apply(v)
			if st != status.Good && st != status.BadIndexRangeNoData {
				t.Fatalf("%q on %v: %v", s, v, st)
			}
			if st == status.Good && out.Len() > v.Len() {
				t.Fatalf("%q on %v: %v", s, v, out)
			}
		}
	})
}
