package ua

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

// testBody is a tiny structure registered under testBodyID for the
// ExtensionObject tests: an Int32 and a String.
type testBody struct {
	A int32
	S string
}

// testBodyID is ns=1;i=4242 (generated types live in namespace 0).
var testBodyID = NodeID{Namespace: 1, Numeric: 4242}

func (b *testBody) BinaryEncodingID() NodeID { return testBodyID }

func (b *testBody) Encode(p []byte) []byte {
	p = AppendInt32(p, b.A)
	return AppendString(p, b.S)
}

func (b *testBody) Decode(d *Decoder) {
	b.A = d.ReadInt32()
	b.S = d.ReadStringReuse(b.S)
}

// nestBody holds a Variant, so that ExtensionObjects nest (depth tests).
type nestBody struct{ V Variant }

// nestBodyID is ns=1;i=4243.
var nestBodyID = NodeID{Namespace: 1, Numeric: 4243}

func (b *nestBody) BinaryEncodingID() NodeID { return nestBodyID }
func (b *nestBody) Encode(p []byte) []byte   { return b.V.Encode(p) }
func (b *nestBody) Decode(d *Decoder)        { b.V.Decode(d) }

func init() {
	RegisterBody(testBodyID, func() Body { return new(testBody) })
	RegisterBody(nestBodyID, func() Body { return new(nestBody) })
}

// vector is a hand-written encoding of a value (from the OPC 10000-6 text,
// not from the encoder under test).
type vector struct {
	name string
	b    []byte
	// enc appends the value.
	enc func([]byte) []byte
	// dec decodes a fresh value and reports it and whether it equals the
	// value.
	dec func(*Decoder) (got any, ok bool)
	// decodeOnly: b decodes to the value, but the value encodes
	// differently (a non-canonical form). encodeOnly: the value encodes to
	// b, but b decodes to another value (a clamped DateTime, say).
	decodeOnly, encodeOnly bool
}

// codecVector makes a vector for a type with Encode and Decode methods.
func codecVector[T any, P codec[T]](name string, want T, b []byte) vector {
	return vector{
		name: name,
		b:    b,
		enc:  func(p []byte) []byte { return P(&want).Encode(p) },
		dec: func(d *Decoder) (any, bool) {
			var got T
			P(&got).Decode(d)
			return got, equalValues(want, got)
		},
	}
}

// primVector makes a vector for a primitive with an Append function and a
// Decoder method.
func primVector[T any](name string, want T, b []byte, app func([]byte, T) []byte, read func(*Decoder) T) vector {
	return vector{
		name: name,
		b:    b,
		enc:  func(p []byte) []byte { return app(p, want) },
		dec: func(d *Decoder) (any, bool) {
			got := read(d)
			return got, equalValues(want, got)
		},
	}
}

func decodeOnly(v vector) vector { v.decodeOnly = true; return v }
func encodeOnly(v vector) vector { v.encodeOnly = true; return v }

// equalValues compares decoded values: Variants and DataValues with their
// Equal methods, floats bitwise but every NaN equal, times as instants with their location,
// everything else with reflect.DeepEqual.
func equalValues(a, b any) bool {
	switch a := a.(type) {
	case Variant:
		return a.Equal(b.(Variant))
	case DataValue:
		bb := b.(DataValue)
		return a.Equal(&bb) && reflect.DeepEqual(a.SourceTimestamp, bb.SourceTimestamp) &&
			reflect.DeepEqual(a.ServerTimestamp, bb.ServerTimestamp)
	case float32:
		return float32Equal(a, b.(float32))
	case float64:
		return float64Equal(a, b.(float64))
	case time.Time:
		bt := b.(time.Time)
		return a.Equal(bt) && a.Location() == bt.Location() && a.IsZero() == bt.IsZero()
	}
	return reflect.DeepEqual(a, b)
}

// checkVector checks both directions of v, and that every strict prefix
// of v.b fails to decode.
func checkVector(t *testing.T, v vector) {
	t.Helper()
	if !v.decodeOnly {
		got := v.enc(nil)
		if !bytes.Equal(got, v.b) {
			t.Errorf("%s: encode\n got % X\nwant % X", v.name, got, v.b)
		}
		// Appending to a non-empty buffer keeps its contents.
		pre := []byte{0xEE}
		if got := v.enc(pre); !bytes.Equal(got, append([]byte{0xEE}, v.b...)) {
			t.Errorf("%s: encode after a prefix: % X", v.name, got)
		}
	}
	if !v.encodeOnly {
		d := NewDecoder(v.b)
		got, ok := v.dec(d)
		if err := d.Err(); err != nil {
			t.Errorf("%s: decode: %v", v.name, err)
		} else if !ok {
			t.Errorf("%s: decode: got %#v", v.name, got)
		}
		if d.Remaining() != 0 {
			t.Errorf("%s: decode left %d of %d bytes", v.name, d.Remaining(), len(v.b))
		}
	}
	checkTruncated(t, v)
}

// checkTruncated decodes every strict prefix of v.b: each must fail,
// without panicking.
func checkTruncated(t *testing.T, v vector) {
	t.Helper()
	var d Decoder
	for n := range len(v.b) {
		d.Reset(v.b[:n])
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("%s: decoding %d of %d bytes panics: %v", v.name, n, len(v.b), p)
				}
			}()
			v.dec(&d)
		}()
		if d.Err() == nil {
			t.Errorf("%s: decoding %d of %d bytes: no error", v.name, n, len(v.b))
		}
	}
}

// cat concatenates byte slices.
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// rep repeats p n times.
func rep(p []byte, n int) []byte { return bytes.Repeat(p, n) }

// decodeErr decodes b with dec and returns the decoder's error.
func decodeErr(b []byte, dec func(*Decoder)) error {
	d := NewDecoder(b)
	dec(d)
	return d.Err()
}
