package sparkplug

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrMalformed is the error of every payload that is not a valid
// protobuf encoding of a Sparkplug B Payload, or whose metrics carry a
// value that does not fit their data type.
var ErrMalformed = errors.New("sparkplug: malformed payload")

// MaxMetrics bounds the metrics Decode accepts in one payload.
const MaxMetrics = 65536

// Header is what a payload says besides its metrics.
type Header struct {
	Timestamp uint64
	Seq       uint64
	HasSeq    bool
}

// Decode decodes payload b: it returns its header and calls fn with each
// metric, in order, until fn returns an error, which Decode returns. The
// metric's Properties are not decoded. A metric without a datatype (a
// command's or a DATA message's may leave it to the birth) has Value.Type
// 0: As reads its value for the type the birth gave. A malformed payload
// is ErrMalformed (fn may have seen the metrics before the fault).
func Decode(b []byte, fn func(*Metric) error) (Header, error) {
	var h Header
	n := 0
	for len(b) > 0 {
		field, wire, body, rest, v, err := next(b)
		if err != nil {
			return h, err
		}
		b = rest
		switch {
		case field == fPayloadTimestamp && wire == wireVarint:
			h.Timestamp = v
		case field == fPayloadSeq && wire == wireVarint:
			h.Seq, h.HasSeq = v, true
		case field == fPayloadMetrics && wire == wireBytes:
			if n++; n > MaxMetrics {
				return h, ErrMalformed
			}
			var m Metric
			if err := decodeMetric(body, &m); err != nil {
				return h, err
			}
			if err := fn(&m); err != nil {
				return h, err
			}
		}
	}
	return h, nil
}

// next reads one field of b: its number, wire type, the body of a
// length-delimited field or the value of a number, and what follows.
func next(b []byte) (field, wire int, body, rest []byte, v uint64, err error) {
	key, n := binary.Uvarint(b)
	if n <= 0 || key>>3 == 0 || key>>3 > math.MaxInt32 {
		return 0, 0, nil, nil, 0, ErrMalformed
	}
	field, wire, b = int(key>>3), int(key&7), b[n:]
	switch wire {
	case wireVarint:
		if v, n = binary.Uvarint(b); n <= 0 {
			return 0, 0, nil, nil, 0, ErrMalformed
		}
		return field, wire, nil, b[n:], v, nil
	case wireFixed64:
		if len(b) < 8 {
			return 0, 0, nil, nil, 0, ErrMalformed
		}
		return field, wire, nil, b[8:], binary.LittleEndian.Uint64(b), nil
	case wireFixed32:
		if len(b) < 4 {
			return 0, 0, nil, nil, 0, ErrMalformed
		}
		return field, wire, nil, b[4:], uint64(binary.LittleEndian.Uint32(b)), nil
	case wireBytes:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return 0, 0, nil, nil, 0, ErrMalformed
		}
		return field, wire, b[n : n+int(l)], b[n+int(l):], 0, nil
	}
	return 0, 0, nil, nil, 0, ErrMalformed // groups are not used by sparkplug_b.proto
}

// decodeMetric decodes a Metric message into m.
func decodeMetric(b []byte, m *Metric) error {
	var have int // the value field met, 0 for none
	var num uint64
	var text []byte
	for len(b) > 0 {
		field, wire, body, rest, v, err := next(b)
		if err != nil {
			return err
		}
		b = rest
		switch field {
		case fMetricName:
			if wire != wireBytes {
				return ErrMalformed
			}
			m.Name = string(body)
		case fMetricAlias:
			m.Alias, m.HasAlias = v, true
		case fMetricTimestamp:
			m.Timestamp = v
		case fMetricDatatype:
			m.Value.Type = DataType(v)
		case fMetricHistorical:
			m.Historical = v != 0
		case fMetricIsNull:
			m.Value.Null = v != 0
		case fMetricInt, fMetricLong, fMetricBoolean:
			if wire != wireVarint {
				return ErrMalformed
			}
			have, num = field, v
		case fMetricFloat:
			if wire != wireFixed32 {
				return ErrMalformed
			}
			have, num = field, v
		case fMetricDouble:
			if wire != wireFixed64 {
				return ErrMalformed
			}
			have, num = field, v
		case fMetricString:
			if wire != wireBytes {
				return ErrMalformed
			}
			have, text = field, body
		}
	}
	if m.Value.Null || have == 0 {
		m.Value.Null = true
		return nil
	}
	if m.Value.Type == 0 {
		m.rawField, m.rawNum, m.rawText = have, num, text
		return nil
	}
	return setValue(&m.Value, have, num, text)
}

// As returns the value of a metric that Decode found without a datatype,
// read as type t; ErrMalformed when the value's field is not t's. A
// metric with a datatype returns its Value, which must be of type t.
func (m *Metric) As(t DataType) (Value, error) {
	if m.Value.Type != 0 {
		if m.Value.Type != t {
			return Value{}, ErrMalformed
		}
		return m.Value, nil
	}
	v := Value{Type: t, Null: m.Value.Null}
	if v.Null {
		return v, nil
	}
	if err := setValue(&v, m.rawField, m.rawNum, m.rawText); err != nil {
		return Value{}, err
	}
	return v, nil
}

// setValue sets v from the value field have (a Metric's field number)
// for v's type: the field must be the one the type uses.
func setValue(v *Value, have int, num uint64, text []byte) error {
	switch v.Type {
	case Int8:
		return setInt(v, have == fMetricInt, int64(int8(num)), num)
	case Int16:
		return setInt(v, have == fMetricInt, int64(int16(num)), num)
	case Int32:
		return setInt(v, have == fMetricInt, int64(int32(num)), num)
	case UInt8:
		return setUint(v, have == fMetricInt && num <= math.MaxUint8, num)
	case UInt16:
		return setUint(v, have == fMetricInt && num <= math.MaxUint16, num)
	case UInt32:
		// The specification puts a UInt32 in int_value; Eclipse Tahu's
		// JavaScript encoder puts it in long_value. Both are read.
		return setUint(v, (have == fMetricInt || have == fMetricLong) && num <= math.MaxUint32, num)
	case Int64, UInt64, DateTime:
		return setUint(v, have == fMetricLong, num)
	case Float:
		return setUint(v, have == fMetricFloat, math.Float64bits(float64(math.Float32frombits(uint32(num)))))
	case Double:
		return setUint(v, have == fMetricDouble, num)
	case Boolean:
		return setUint(v, have == fMetricBoolean && num <= 1, num)
	case String, Text:
		if have != fMetricString {
			return ErrMalformed
		}
		v.Text = string(text)
		return nil
	}
	return ErrMalformed
}

// setInt sets a signed value of 32 bits or fewer: the wire carries it in
// a uint32, whose bits beyond the type must be its sign's extension (a
// decoder that wrote it as an int32 sign-extends it to 64 bits).
func setInt(v *Value, ok bool, x int64, num uint64) error {
	if !ok || (num > math.MaxUint32 && num != uint64(x)) || (num <= math.MaxUint32 && uint64(uint32(x)) != num) {
		return ErrMalformed
	}
	v.Bits = uint64(x)
	return nil
}

func setUint(v *Value, ok bool, bits uint64) error {
	if !ok {
		return ErrMalformed
	}
	v.Bits = bits
	return nil
}
