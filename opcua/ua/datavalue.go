package ua

import (
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// DataValue encoding mask bits (OPC 10000-6 §5.2.2.17).
const (
	dataValueValue             = 0x01
	dataValueStatus            = 0x02
	dataValueSourceTimestamp   = 0x04
	dataValueServerTimestamp   = 0x08
	dataValueSourcePicoseconds = 0x10
	dataValueServerPicoseconds = 0x20
	dataValueKnown             = 0x3F

	// maxPicoseconds is the largest valid Picoseconds value; Part 6 has a
	// decoder read anything larger as 9999.
	maxPicoseconds = 9999
)

// Encode appends the DataValue (OPC 10000-6 §5.2.2.17): the encoding mask,
// then the fields that are set, in the order Value, Status,
// SourceTimestamp, SourcePicoseconds, ServerTimestamp, ServerPicoseconds.
// Value is set when it is not null, Status when it is not 0 (Good without
// info bits), a timestamp when its UA DateTime is not 0 (it is not zero and
// after 1601), picoseconds when not 0 and their timestamp is set.
// Picoseconds above 9999 are written as 9999.
func (v *DataValue) Encode(b []byte) []byte {
	var mask byte
	if !v.Value.IsNull() {
		mask |= dataValueValue
	}
	if v.Status != status.Good {
		mask |= dataValueStatus
	}
	src := DateTimeTicks(v.SourceTimestamp)
	if src != 0 {
		mask |= dataValueSourceTimestamp
		if v.SourcePicoseconds != 0 {
			mask |= dataValueSourcePicoseconds
		}
	}
	srv := DateTimeTicks(v.ServerTimestamp)
	if srv != 0 {
		mask |= dataValueServerTimestamp
		if v.ServerPicoseconds != 0 {
			mask |= dataValueServerPicoseconds
		}
	}
	b = append(b, mask)
	if mask&dataValueValue != 0 {
		b = v.Value.Encode(b)
	}
	if mask&dataValueStatus != 0 {
		b = AppendUint32(b, uint32(v.Status))
	}
	if mask&dataValueSourceTimestamp != 0 {
		b = AppendInt64(b, src)
	}
	if mask&dataValueSourcePicoseconds != 0 {
		b = AppendUint16(b, min(v.SourcePicoseconds, maxPicoseconds))
	}
	if mask&dataValueServerTimestamp != 0 {
		b = AppendInt64(b, srv)
	}
	if mask&dataValueServerPicoseconds != 0 {
		b = AppendUint16(b, min(v.ServerPicoseconds, maxPicoseconds))
	}
	return b
}

// AppendDataValue appends a DataValue of value v and status st whose
// timestamps are given as UA DateTimes (100 ns ticks since 1601, as
// DateTimeTicks returns them; 0: none), without picoseconds: Encode of such
// a DataValue, for an encoder that has ticks at hand.
func AppendDataValue(b []byte, v *Variant, st StatusCode, src, srv int64) []byte {
	var mask byte
	if !v.IsNull() {
		mask |= dataValueValue
	}
	if st != status.Good {
		mask |= dataValueStatus
	}
	if src != 0 {
		mask |= dataValueSourceTimestamp
	}
	if srv != 0 {
		mask |= dataValueServerTimestamp
	}
	b = append(b, mask)
	if mask&dataValueValue != 0 {
		b = v.Encode(b)
	}
	if mask&dataValueStatus != 0 {
		b = AppendUint32(b, uint32(st))
	}
	if src != 0 {
		b = AppendInt64(b, src)
	}
	if srv != 0 {
		b = AppendInt64(b, srv)
	}
	return b
}

// TicksFromUnixNano is the UA DateTime of Unix time ns (DateTimeTicks of
// time.Unix(0, ns), without the time.Time).
func TicksFromUnixNano(ns int64) int64 {
	t := ns/100 + unixTo1601*ticksPerSecond
	if ns < 0 && ns%100 != 0 {
		t--
	}
	return max(t, 0)
}

// Decode reads a DataValue. It counts one level against Limits.MaxDepth;
// a mask bit that Part 6 does not assign (0x40, 0x80) is
// status.BadDecodingError. Absent fields are zeroed. Picoseconds above 9999
// read as 9999, and picoseconds without their timestamp are ignored (read
// as 0), as Part 6 says. The Value is decoded into v.Value, reusing its
// storage (see Variant.Decode).
func (v *DataValue) Decode(d *Decoder) {
	if !d.Enter() {
		return
	}
	defer d.Leave()
	mask := d.ReadUint8()
	if mask&^dataValueKnown != 0 {
		d.Fail(status.BadDecodingError)
		return
	}
	if mask&dataValueValue != 0 {
		v.Value.Decode(d)
	} else {
		v.Value.Reset()
	}
	v.Status = status.Good
	if mask&dataValueStatus != 0 {
		v.Status = StatusCode(d.ReadUint32())
	}
	v.SourceTimestamp, v.SourcePicoseconds = readTimestamp(d, mask, dataValueSourceTimestamp, dataValueSourcePicoseconds)
	v.ServerTimestamp, v.ServerPicoseconds = readTimestamp(d, mask, dataValueServerTimestamp, dataValueServerPicoseconds)
}

func readTimestamp(d *Decoder, mask, tsBit, psBit byte) (ts time.Time, ps uint16) {
	if mask&tsBit != 0 {
		ts = d.ReadDateTime()
	}
	if mask&psBit != 0 {
		ps = min(d.ReadUint16(), maxPicoseconds)
		if mask&tsBit == 0 {
			ps = 0
		}
	}
	return ts, ps
}

// Equal reports whether v and w encode the same: equal Values (see
// Variant.Equal), Status codes, timestamps as UA DateTimes (100 ns ticks,
// so the zero time and a time before 1601 are equal) and picoseconds as
// they are encoded.
func (v *DataValue) Equal(w *DataValue) bool {
	return v.Status == w.Status &&
		DateTimeTicks(v.SourceTimestamp) == DateTimeTicks(w.SourceTimestamp) &&
		DateTimeTicks(v.ServerTimestamp) == DateTimeTicks(w.ServerTimestamp) &&
		encodedPicoseconds(v.SourceTimestamp, v.SourcePicoseconds) == encodedPicoseconds(w.SourceTimestamp, w.SourcePicoseconds) &&
		encodedPicoseconds(v.ServerTimestamp, v.ServerPicoseconds) == encodedPicoseconds(w.ServerTimestamp, w.ServerPicoseconds) &&
		v.Value.Equal(w.Value)
}

// encodedPicoseconds returns the picoseconds that Encode writes for a
// timestamp, 0 when it writes none.
func encodedPicoseconds(ts time.Time, ps uint16) uint16 {
	if DateTimeTicks(ts) == 0 {
		return 0
	}
	return min(ps, maxPicoseconds)
}
