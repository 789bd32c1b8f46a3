// Package sparkplug encodes and decodes the payloads of Sparkplug B 3.0
// (the specification's sparkplug_b.proto) and names its topics. It
// appends to the caller's buffer and never allocates to encode; it knows
// nothing of MQTT or of the scan engine.
package sparkplug

import (
	"encoding/binary"
	"math"
)

// DataType is a Sparkplug B data type (sparkplug_b.proto, DataType).
type DataType uint32

// The data types edged uses.
const (
	Int8     DataType = 1
	Int16    DataType = 2
	Int32    DataType = 3
	Int64    DataType = 4
	UInt8    DataType = 5
	UInt16   DataType = 6
	UInt32   DataType = 7
	UInt64   DataType = 8
	Float    DataType = 9
	Double   DataType = 10
	Boolean  DataType = 11
	String   DataType = 12
	DateTime DataType = 13
	Text     DataType = 14
)

// Field numbers of Payload, Metric, PropertySet and PropertyValue.
const (
	fPayloadTimestamp = 1
	fPayloadMetrics   = 2
	fPayloadSeq       = 3

	fMetricName       = 1
	fMetricAlias      = 2
	fMetricTimestamp  = 3
	fMetricDatatype   = 4
	fMetricHistorical = 5
	fMetricIsNull     = 7
	fMetricProperties = 9
	fMetricInt        = 10
	fMetricLong       = 11
	fMetricFloat      = 12
	fMetricDouble     = 13
	fMetricBoolean    = 14
	fMetricString     = 15

	fSetKeys   = 1
	fSetValues = 2

	fPropType    = 1
	fPropIsNull  = 2
	fPropInt     = 3
	fPropLong    = 4
	fPropFloat   = 5
	fPropDouble  = 6
	fPropBoolean = 7
	fPropString  = 8
)

// Wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// Value is a metric's or a property's value: Bits holds a number or a
// Boolean as its type says (integers as two's complement, sign-extended;
// Float and Double as math.Float64bits; Boolean 0 or 1), Text a String's
// or Text's characters. Null makes it a null value.
type Value struct {
	Type DataType
	Bits uint64
	Text string
	Null bool
}

// Property is one entry of a metric's PropertySet.
type Property struct {
	Key   string
	Value Value
}

// Metric is one metric of a payload. A zero Alias with HasAlias false
// leaves the alias out; an empty Name leaves the name out (a DATA
// message with aliases); a zero Timestamp leaves it out; OmitType leaves
// the datatype out (a DATA message: the birth said it).
type Metric struct {
	Name       string
	Alias      uint64
	HasAlias   bool
	Timestamp  uint64 // ms since the Unix epoch
	Historical bool
	OmitType   bool
	Value      Value
	Properties []Property

	// What Decode found of a value without a datatype, for As.
	rawField int
	rawNum   uint64
	rawText  []byte
}

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarint(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

func appendString(b []byte, field int, s string) []byte {
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(s)))
	return append(b, s...)
}

func appendFixed32(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}

func appendFixed64(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), v)
}

// beginMessage appends the tag of a length-delimited field and one byte
// for its length, which endMessage fixes; it returns where the body
// starts.
func beginMessage(b []byte, field int) ([]byte, int) {
	b = appendTag(b, field, wireBytes)
	return append(b, 0), len(b) + 1
}

// endMessage writes the length of the body begun at start, moving the
// body when the length takes more than one byte.
func endMessage(b []byte, start int) []byte {
	n := len(b) - start
	if n < 0x80 {
		b[start-1] = byte(n)
		return b
	}
	var lb [binary.MaxVarintLen64]byte
	ln := binary.PutUvarint(lb[:], uint64(n))
	b = append(b, lb[:ln-1]...) // room for the extra length bytes
	copy(b[start-1+ln:], b[start:start+n])
	copy(b[start-1:], lb[:ln])
	return b
}

// AppendHeader appends a payload's timestamp (ms since the Unix epoch)
// and, with hasSeq, its sequence number: the fields before the metrics.
// Fields may come in any order in protobuf; these come first so that a
// payload is built in one pass.
func AppendHeader(b []byte, timestamp uint64, seq uint64, hasSeq bool) []byte {
	b = appendVarint(b, fPayloadTimestamp, timestamp)
	if hasSeq {
		b = appendVarint(b, fPayloadSeq, seq)
	}
	return b
}

// AppendMetric appends m as one metric of a payload.
func AppendMetric(b []byte, m *Metric) []byte {
	b, start := beginMessage(b, fPayloadMetrics)
	if m.Name != "" {
		b = appendString(b, fMetricName, m.Name)
	}
	if m.HasAlias {
		b = appendVarint(b, fMetricAlias, m.Alias)
	}
	if m.Timestamp != 0 {
		b = appendVarint(b, fMetricTimestamp, m.Timestamp)
	}
	if !m.OmitType {
		b = appendVarint(b, fMetricDatatype, uint64(m.Value.Type))
	}
	if m.Historical {
		b = appendVarint(b, fMetricHistorical, 1)
	}
	if len(m.Properties) > 0 {
		b = appendProperties(b, m.Properties)
	}
	if m.Value.Null {
		return endMessage(appendVarint(b, fMetricIsNull, 1), start)
	}
	b = appendValue(b, &m.Value, fMetricInt)
	return endMessage(b, start)
}

// appendValue appends v in the value field of its type; intField is the
// message's int_value field (long, float, double, boolean and string
// follow it in both Metric and PropertyValue).
func appendValue(b []byte, v *Value, intField int) []byte {
	switch v.Type {
	case Int8, Int16, Int32, UInt8, UInt16, UInt32:
		return appendVarint(b, intField, uint64(uint32(v.Bits)))
	case Int64, UInt64, DateTime:
		return appendVarint(b, intField+1, v.Bits)
	case Float:
		return appendFixed32(b, intField+2, math.Float32bits(float32(math.Float64frombits(v.Bits))))
	case Double:
		return appendFixed64(b, intField+3, v.Bits)
	case Boolean:
		return appendVarint(b, intField+4, v.Bits&1)
	case String, Text:
		return appendString(b, intField+5, v.Text)
	}
	return b
}

// appendProperties appends ps as a metric's PropertySet.
func appendProperties(b []byte, ps []Property) []byte {
	b, start := beginMessage(b, fMetricProperties)
	for i := range ps {
		b = appendString(b, fSetKeys, ps[i].Key)
	}
	for i := range ps {
		var vs int
		b, vs = beginMessage(b, fSetValues)
		v := &ps[i].Value
		b = appendVarint(b, fPropType, uint64(v.Type))
		if v.Null {
			b = appendVarint(b, fPropIsNull, 1)
		} else {
			b = appendValue(b, v, fPropInt)
		}
		b = endMessage(b, vs)
	}
	return endMessage(b, start)
}
