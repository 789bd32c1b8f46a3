package addrspace

import (
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
)

// MaxRangeDims is the most dimensions a NumericRange may have here.
const MaxRangeDims = 8

// NumericRange is a parsed IndexRange (OPC 10000-4 §7.27): for each
// dimension the first and last index, both included. The zero value has
// no dimensions: no range.
type NumericRange struct {
	n      int
	lo, hi [MaxRangeDims]uint32
}

// Dims returns the number of dimensions, 0 for no range.
func (r *NumericRange) Dims() int { return r.n }

// Dim returns the first and last index of dimension i.
func (r *NumericRange) Dim(i int) (lo, hi uint32) { return r.lo[i], r.hi[i] }

// ParseNumericRange parses s: "" (no range), an index "6", a range "5:7"
// whose first index is lower than the second, or one of those per
// dimension separated by commas ("1:2,0:1"). Anything else, including
// white space, is status.BadIndexRangeInvalid. It does not allocate.
func ParseNumericRange(s string) (NumericRange, error) {
	var r NumericRange
	if s == "" {
		return r, nil
	}
	for i := 0; ; {
		if r.n == MaxRangeDims {
			return NumericRange{}, status.BadIndexRangeInvalid
		}
		lo, j, ok := parseIndex(s, i)
		if !ok {
			return NumericRange{}, status.BadIndexRangeInvalid
		}
		hi := lo
		if j < len(s) && s[j] == ':' {
			if hi, j, ok = parseIndex(s, j+1); !ok || hi <= lo {
				return NumericRange{}, status.BadIndexRangeInvalid
			}
		}
		r.lo[r.n], r.hi[r.n] = lo, hi
		r.n++
		if j == len(s) {
			return r, nil
		}
		if s[j] != ',' {
			return NumericRange{}, status.BadIndexRangeInvalid
		}
		i = j + 1
	}
}

// parseIndex reads the decimal number at s[i:], returning it and the
// index after it.
func parseIndex(s string, i int) (uint32, int, bool) {
	var v uint64
	j := i
	for ; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
		v = v*10 + uint64(s[j]-'0')
		if v > 1<<32-1 {
			return 0, j, false
		}
	}
	return uint32(v), j, j > i
}

// span clamps dimension d of r to a length n: the first index and the
// count, ok false when the first index is out of range.
func (r *NumericRange) span(d int, n int) (lo, count int, ok bool) {
	if uint64(r.lo[d]) >= uint64(n) {
		return 0, 0, false
	}
	hi := min(uint64(r.hi[d]), uint64(n-1))
	return int(r.lo[d]), int(hi-uint64(r.lo[d])) + 1, true
}

// Apply returns the part of v that r selects (OPC 10000-4 §7.27): a slice
// of a one-dimensional array, a block of a multi-dimensional array (one
// range per dimension), a substring of a String or ByteString scalar, and
// for an array of Strings or ByteStrings one more range selecting within
// each element. Indexes past the end are clamped; a first index out of
// range, a range that does not fit v's shape, or a null v is
// status.BadIndexRangeNoData. The result may share storage with v.
func (r *NumericRange) Apply(v ua.Variant) (ua.Variant, ua.StatusCode) {
	if r.n == 0 {
		return v, status.Good
	}
	if v.IsNull() {
		return ua.Variant{}, status.BadIndexRangeNoData
	}
	if !v.IsArray() {
		if r.n != 1 {
			return ua.Variant{}, status.BadIndexRangeNoData
		}
		return r.applyScalar(v, 0)
	}
	dims := v.ArrayDimensions()
	nd := max(len(dims), 1)
	strs := v.Type() == ua.TypeString || v.Type() == ua.TypeByteString
	if r.n != nd && !(strs && r.n == nd+1) {
		return ua.Variant{}, status.BadIndexRangeNoData
	}
	var out ua.Variant
	if nd == 1 {
		lo, count, ok := r.span(0, v.Len())
		if !ok {
			return ua.Variant{}, status.BadIndexRangeNoData
		}
		out = sliceArray(v, lo, lo+count)
	} else {
		idx, newDims, ok := r.blockIndexes(dims)
		if !ok {
			return ua.Variant{}, status.BadIndexRangeNoData
		}
		out = pickArray(v, idx, newDims)
	}
	if r.n == nd+1 {
		return r.applyElements(out, nd)
	}
	return out, status.Good
}

// applyScalar selects within a String or ByteString scalar by range d.
func (r *NumericRange) applyScalar(v ua.Variant, d int) (ua.Variant, ua.StatusCode) {
	switch v.Type() {
	case ua.TypeString:
		s, _ := v.StringValue()
		lo, count, ok := r.span(d, len(s))
		if !ok {
			return ua.Variant{}, status.BadIndexRangeNoData
		}
		var out ua.Variant
		out.SetString(s[lo : lo+count])
		return out, status.Good
	case ua.TypeByteString:
		b, _ := v.ByteString()
		lo, count, ok := r.span(d, len(b))
		if !ok {
			return ua.Variant{}, status.BadIndexRangeNoData
		}
		var out ua.Variant
		out.SetByteString(b[lo : lo+count : lo+count])
		return out, status.Good
	}
	return ua.Variant{}, status.BadIndexRangeNoData
}

// applyElements applies range d to every String or ByteString of array v.
func (r *NumericRange) applyElements(v ua.Variant, d int) (ua.Variant, ua.StatusCode) {
	switch s := v.Value().(type) {
	case []string:
		out := make([]string, len(s))
		for i, e := range s {
			lo, count, ok := r.span(d, len(e))
			if !ok {
				return ua.Variant{}, status.BadIndexRangeNoData
			}
			out[i] = e[lo : lo+count]
		}
		return withDims(ua.MustVariant(out), v.ArrayDimensions()), status.Good
	case [][]byte:
		out := make([][]byte, len(s))
		for i, e := range s {
			lo, count, ok := r.span(d, len(e))
			if !ok {
				return ua.Variant{}, status.BadIndexRangeNoData
			}
			out[i] = e[lo : lo+count : lo+count]
		}
		return withDims(ua.MustVariant(out), v.ArrayDimensions()), status.Good
	}
	return ua.Variant{}, status.BadIndexRangeNoData
}

func withDims(v ua.Variant, dims []int32) ua.Variant {
	if len(dims) < 2 {
		return v
	}
	m, err := ua.NewMatrix(v.Value(), dims)
	if err != nil {
		return v
	}
	return m
}

// blockIndexes returns the flat indexes (last dimension fastest) of the
// block r selects in a matrix of dims, and the block's dimensions.
func (r *NumericRange) blockIndexes(dims []int32) ([]int, []int32, bool) {
	nd := len(dims)
	var lo, cnt [MaxRangeDims]int
	total := 1
	newDims := make([]int32, nd)
	for d := range nd {
		l, c, ok := r.span(d, int(dims[d]))
		if !ok {
			return nil, nil, false
		}
		lo[d], cnt[d] = l, c
		newDims[d] = int32(c)
		total *= c
	}
	idx := make([]int, 0, total)
	var pos [MaxRangeDims]int
	for {
		flat := 0
		for d := range nd {
			flat = flat*int(dims[d]) + lo[d] + pos[d]
		}
		idx = append(idx, flat)
		d := nd - 1
		for ; d >= 0; d-- {
			pos[d]++
			if pos[d] < cnt[d] {
				break
			}
			pos[d] = 0
		}
		if d < 0 {
			return idx, newDims, true
		}
	}
}

// sliceArray returns elements [lo:hi) of one-dimensional array v, sharing
// them.
func sliceArray(v ua.Variant, lo, hi int) ua.Variant {
	return mapArray(v, lo, hi, nil, nil)
}

// pickArray returns the elements idx of v as a matrix of dims.
func pickArray(v ua.Variant, idx []int, dims []int32) ua.Variant {
	return mapArray(v, 0, 0, idx, dims)
}

// mapArray slices v's elements [lo:hi), or picks idx when idx is not nil
// (then shaped by dims).
func mapArray(v ua.Variant, lo, hi int, idx []int, dims []int32) ua.Variant {
	switch s := v.Value().(type) {
	case []bool:
		return sub(s, lo, hi, idx, dims)
	case []int8:
		return sub(s, lo, hi, idx, dims)
	case []uint8:
		return sub(s, lo, hi, idx, dims)
	case []int16:
		return sub(s, lo, hi, idx, dims)
	case []uint16:
		return sub(s, lo, hi, idx, dims)
	case []int32:
		return sub(s, lo, hi, idx, dims)
	case []uint32:
		return sub(s, lo, hi, idx, dims)
	case []int64:
		return sub(s, lo, hi, idx, dims)
	case []uint64:
		return sub(s, lo, hi, idx, dims)
	case []float32:
		return sub(s, lo, hi, idx, dims)
	case []float64:
		return sub(s, lo, hi, idx, dims)
	case []string:
		return sub(s, lo, hi, idx, dims)
	case []time.Time:
		return sub(s, lo, hi, idx, dims)
	case []ua.GUID:
		return sub(s, lo, hi, idx, dims)
	case [][]byte:
		return sub(s, lo, hi, idx, dims)
	case []ua.XMLElement:
		return sub(s, lo, hi, idx, dims)
	case []ua.NodeID:
		return sub(s, lo, hi, idx, dims)
	case []ua.ExpandedNodeID:
		return sub(s, lo, hi, idx, dims)
	case []ua.StatusCode:
		return sub(s, lo, hi, idx, dims)
	case []ua.QualifiedName:
		return sub(s, lo, hi, idx, dims)
	case []ua.LocalizedText:
		return sub(s, lo, hi, idx, dims)
	case []ua.ExtensionObject:
		return sub(s, lo, hi, idx, dims)
	case []ua.DataValue:
		return sub(s, lo, hi, idx, dims)
	case []ua.Variant:
		return sub(s, lo, hi, idx, dims)
	case []ua.DiagnosticInfo:
		return sub(s, lo, hi, idx, dims)
	}
	return ua.Variant{}
}

func sub[T any](s []T, lo, hi int, idx []int, dims []int32) ua.Variant {
	var out []T
	if idx == nil {
		out = s[lo:hi:hi]
	} else {
		out = make([]T, len(idx))
		for i, j := range idx {
			out[i] = s[j]
		}
	}
	var v ua.Variant
	var err error
	if len(dims) >= 2 {
		v, err = ua.NewMatrix(out, dims)
	} else if b, ok := any(out).([]byte); ok {
		v = ua.NewByteArray(b)
	} else {
		v, err = ua.NewVariant(out)
	}
	if err != nil {
		panic("addrspace: " + err.Error()) // a slice of a built-in type always makes a Variant
	}
	return v
}
