package history

import (
	"math"

	"github.com/edged/edged/opcua/ua/status"
)

// Reader is a store of variables' raw values, by the variable's handle.
type Reader interface {
	// Read calls fn with the raw values of variable h whose source time
	// lies in [from, to] (Unix ns), in time order, or newest first with
	// reverse, until fn returns false. The Value is valid during the
	// call only. Times of one variable's values are distinct.
	Read(h uint32, from, to int64, reverse bool, fn func(*Value) bool) error
}

// Unbounded times of a Reader's Read.
const (
	MinTime int64 = math.MinInt64
	MaxTime int64 = math.MaxInt64
)

// one returns the first value Read gives for [from, to], ok false for
// none.
func one(r Reader, h uint32, from, to int64, reverse bool) (v Value, ok bool, err error) {
	err = r.Read(h, from, to, reverse, func(x *Value) bool {
		v, ok = *x, true
		return false
	})
	return v, ok, err
}

// boundNotFound is the value a read returns for a bound it did not find
// at time t.
func boundNotFound(t int64) Value { return Value{T: t, Status: status.BadBoundNotFound} }
