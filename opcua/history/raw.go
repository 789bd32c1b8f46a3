package history

import "github.com/edged/edged/opcua/ua/status"

// Raw is a read of raw values (OPC 10000-11 §6.5.3, ReadRawModifiedDetails
// with isReadModified false). Times are Unix ns; a time not specified
// (DateTime.MinValue on the wire) has its Set flag false.
type Raw struct {
	Start, End       int64
	StartSet, EndSet bool
	NumValues        uint32 // 0: all
	Bounds           bool
}

// RawCursor is where a raw read goes on: the zero value starts it.
type RawCursor struct {
	phase uint8 // 0 the first bound, 1 the data, 2 the last bound, 3 done
	pos   int64 // the data left: forward at or after pos, reverse at or before
}

// Check returns the read's status: Good, or Bad_HistoryOperationInvalid
// when fewer than two of the start time, the end time and the number of
// values are given.
func (q *Raw) Check() error {
	n := 0
	for _, b := range []bool{q.StartSet, q.EndSet, q.NumValues > 0} {
		if b {
			n++
		}
	}
	if n < 2 {
		return status.BadHistoryOperationInvalid
	}
	return nil
}

// reverse reports whether the read goes back in time: the end before the
// start, or only the end given.
func (q *Raw) reverse() bool {
	return q.StartSet && q.EndSet && q.End < q.Start || !q.StartSet
}

// from is where the read starts: the start time, or the end time when only
// it is given.
func (q *Raw) from() int64 {
	if q.StartSet {
		return q.Start
	}
	return q.End
}

// farTime is the time of the bound past the end: the end time, or the
// start time (unspecified) when only the end is given.
func (q *Raw) farTime() int64 {
	if q.StartSet && q.EndSet {
		return q.End
	}
	if q.StartSet {
		return q.End // not given: DateTime.MinValue
	}
	return q.Start
}

// Read gives emit the next values of the read of variable h, at most
// limit (> 0), and returns how many and whether more are left; cur holds
// the place. The Value emit gets is valid during the call.
// Bounds (returnBounds) are the value at the start time or the one before
// it (after it, going back) and the value at the end time or the one
// after it (before it), each Bad_BoundNotFound at its time when there is
// none (OPC 10000-11 §4.4, Table 1).
func (q *Raw) Read(r Reader, h uint32, cur *RawCursor, limit int, emit func(*Value)) (int, bool, error) {
	rev := q.reverse()
	a := q.from()
	same := q.StartSet && q.EndSet && q.Start == q.End
	n := 0
	for {
		switch cur.phase {
		case 0:
			cur.pos = a
			if q.Bounds {
				if n == limit {
					return n, true, nil
				}
				b, err := q.startBound(r, h, rev, a)
				if err != nil {
					return n, false, err
				}
				emit(&b)
				n++
				if b.T == a && b.Status != status.BadBoundNotFound {
					cur.pos = step(a, rev)
				}
			}
			cur.phase = 1
		case 1:
			lo, hi, ok := q.dataRange(cur.pos, rev, same)
			more := false
			if ok {
				err := r.Read(h, lo, hi, rev, func(v *Value) bool {
					if n == limit {
						more = true
						return false
					}
					emit(v)
					cur.pos = step(v.T, rev)
					n++
					return true
				})
				if err != nil {
					return n, false, err
				}
			}
			if more {
				return n, true, nil
			}
			cur.phase = 2
		case 2:
			if q.Bounds {
				if n == limit {
					return n, true, nil
				}
				b, err := q.endBound(r, h, rev, same)
				if err != nil {
					return n, false, err
				}
				emit(&b)
				n++
			}
			cur.phase = 3
		default:
			return n, false, nil
		}
	}
}

// step returns the time just past t in the read's direction.
func step(t int64, rev bool) int64 {
	if rev {
		return t - 1
	}
	return t + 1
}

// dataRange returns the closed range of the data left from pos.
func (q *Raw) dataRange(pos int64, rev, same bool) (lo, hi int64, ok bool) {
	switch {
	case same:
		if q.Bounds || pos != q.Start {
			return 0, 0, false // the value at the time is the first bound
		}
		return pos, pos, true
	case rev:
		lo = MinTime
		if q.StartSet && q.EndSet {
			lo = q.End + 1
		}
		return lo, pos, pos >= lo
	default:
		hi = MaxTime
		if q.EndSet {
			hi = q.End - 1
		}
		return pos, hi, pos <= hi
	}
}

// startBound is the value at a, else the last before it (the first after
// it, going back).
func (q *Raw) startBound(r Reader, h uint32, rev bool, a int64) (Value, error) {
	var v Value
	var ok bool
	var err error
	if rev {
		v, ok, err = one(r, h, a, MaxTime, false)
	} else {
		v, ok, err = one(r, h, MinTime, a, true)
	}
	if err != nil || !ok {
		return boundNotFound(a), err
	}
	return v, nil
}

// endBound is the value at the end time, else the first after it (the
// last before it, going back); with the same start and end time the first
// after it.
func (q *Raw) endBound(r Reader, h uint32, rev, same bool) (Value, error) {
	far := q.farTime()
	if !(q.StartSet && q.EndSet) {
		// One time and a count: the bound lies past the last value.
		return boundNotFound(far), nil
	}
	var v Value
	var ok bool
	var err error
	switch {
	case same:
		v, ok, err = one(r, h, far+1, MaxTime, false)
	case rev:
		v, ok, err = one(r, h, MinTime, far, true)
	default:
		v, ok, err = one(r, h, far, MaxTime, false)
	}
	if err != nil || !ok {
		return boundNotFound(far), err
	}
	return v, nil
}
