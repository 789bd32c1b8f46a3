package ua

import (
	"bytes"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// allocCase is a value whose encoding into a buffer with room, and whose
// decoding into the value decoded before, must not allocate.
type allocCase struct {
	name   string
	encode func([]byte) []byte
	decode func(*Decoder)
	equal  func() bool // the decoded value equals the original
}

func newAllocCase[T any, P codec[T]](name string, v T, eq func(a, b *T) bool) allocCase {
	var got T
	return allocCase{
		name:   name,
		encode: func(b []byte) []byte { return P(&v).Encode(b) },
		decode: func(d *Decoder) { P(&got).Decode(d) },
		equal:  func() bool { return eq(&v, &got) },
	}
}

func allocCases() []allocCase {
	ts := time.Date(2025, 6, 1, 12, 0, 0, 123456700, time.UTC)
	dv := func(v Variant) DataValue {
		return DataValue{Value: v, SourceTimestamp: ts, ServerTimestamp: ts, ServerPicoseconds: 7}
	}
	var dDouble, dInt32, dBool, dUint32, dString, dStatus, dTime Variant
	dDouble.SetFloat64(21.5)
	dInt32.SetInt32(-7)
	dBool.SetBool(true)
	dUint32.SetUint32(4000000000)
	dString.SetString("sensor/temperature")
	dStatus.SetStatusCode(status.BadDecodingError)
	dTime.SetDateTime(ts)
	dvEq := (*DataValue).Equal
	varEq := func(a, b *Variant) bool { return a.Equal(*b) }
	deepEq := func(a, b any) bool { return equalValues(a, b) }
	nodeEq := func(a, b *NodeID) bool { return *a == *b }
	return []allocCase{
		newAllocCase("DataValue Double", dv(dDouble), dvEq),
		newAllocCase("DataValue Int32", dv(dInt32), dvEq),
		newAllocCase("DataValue Boolean", dv(dBool), dvEq),
		newAllocCase("DataValue UInt32", dv(dUint32), dvEq),
		newAllocCase("DataValue String", dv(dString), dvEq),
		newAllocCase("DataValue StatusCode", dv(dStatus), dvEq),
		newAllocCase("DataValue DateTime", dv(dTime), dvEq),
		newAllocCase("DataValue Bad status, no value", DataValue{Status: status.BadDecodingError, ServerTimestamp: ts}, dvEq),
		newAllocCase("NodeId numeric", NewNumericNodeID(2, 70000), nodeEq),
		newAllocCase("NodeId two-byte", NewNumericNodeID(0, 85), nodeEq),
		newAllocCase("NodeId string", NewStringNodeID(2, "sim.Counter"), nodeEq),
		newAllocCase("NodeId opaque", NewOpaqueNodeID(2, []byte{1, 2, 3}), nodeEq),
		newAllocCase("NodeId guid", NewGUIDNodeID(2, exampleGUID), nodeEq),
		newAllocCase("ExpandedNodeId", ExpandedNodeID{NodeID: NewStringNodeID(0, "x"), NamespaceURI: "urn:a", ServerIndex: 2},
			func(a, b *ExpandedNodeID) bool { return *a == *b }),
		newAllocCase("QualifiedName", QualifiedName{NamespaceIndex: 1, Name: "Temperature"},
			func(a, b *QualifiedName) bool { return *a == *b }),
		newAllocCase("LocalizedText", LocalizedText{Locale: "en", Text: "Temperature"},
			func(a, b *LocalizedText) bool { return *a == *b }),
		newAllocCase("DiagnosticInfo chain", DiagnosticInfo{
			EncodingMask: DiagAdditionalInfo | DiagInnerDiagnosticInfo, AdditionalInfo: "x",
			InnerDiagnosticInfo: &DiagnosticInfo{EncodingMask: DiagSymbolicID, SymbolicID: 1},
		}, func(a, b *DiagnosticInfo) bool { return diagnosticInfoEqual(a, b) }),
		newAllocCase("ExtensionObject registered body", ExtensionObject{Body: &testBody{A: 1, S: "abc"}},
			func(a, b *ExtensionObject) bool { return extensionObjectEqual(a, b) }),
		newAllocCase("ExtensionObject raw body", ExtensionObject{TypeID: NewNumericNodeID(2, 5000), Encoding: 1, Raw: []byte{1, 2, 3}},
			func(a, b *ExtensionObject) bool { return deepEq(*a, *b) }),
		newAllocCase("Variant Int32 array", MustVariant([]int32{1, 2, 3}), varEq),
		newAllocCase("Variant String array", MustVariant([]string{"a", "bc"}), varEq),
		newAllocCase("Variant Double matrix", mustMatrixNoT([]float64{1, 2, 3, 4, 5, 6}, 2, 3), varEq),
		newAllocCase("Variant ByteString", MustVariant([]byte{1, 2}), varEq),
		newAllocCase("Variant NodeId", MustVariant(NewStringNodeID(1, "a")), varEq),
		newAllocCase("Variant LocalizedText", MustVariant(LocalizedText{Text: "a"}), varEq),
		newAllocCase("Variant DataValue array", MustVariant([]DataValue{dv(dDouble), dv(dString)}), varEq),
		newAllocCase("Variant Variant array", MustVariant([]Variant{dInt32, dString}), varEq),
		newAllocCase("Variant ExtensionObject", MustVariant(&testBody{A: 2}), varEq),
	}
}

func mustMatrixNoT(values any, dims ...int32) Variant {
	v, err := NewMatrix(values, dims)
	if err != nil {
		panic(err)
	}
	return v
}

// TestZeroAllocs checks that encoding into a buffer with capacity and
// decoding into the value decoded before do not allocate.
func TestZeroAllocs(t *testing.T) {
	for _, c := range allocCases() {
		enc := c.encode(nil)
		buf := make([]byte, 0, 2*len(enc))
		if n := testing.AllocsPerRun(100, func() { buf = c.encode(buf[:0]) }); n != 0 {
			t.Errorf("%s: encode allocates %v times", c.name, n)
		}
		if !bytes.Equal(buf, enc) {
			t.Errorf("%s: encodings differ", c.name)
		}
		var d Decoder
		d.Reset(enc)
		c.decode(&d) // the first decode may allocate
		n := testing.AllocsPerRun(100, func() {
			d.Reset(enc)
			c.decode(&d)
		})
		if d.Err() != nil || d.Remaining() != 0 {
			t.Fatalf("%s: err %v, %d bytes left", c.name, d.Err(), d.Remaining())
		}
		if n != 0 {
			t.Errorf("%s: decoding again allocates %v times", c.name, n)
		}
		if !c.equal() {
			t.Errorf("%s: decoded value differs", c.name)
		}
		// With Alias set, strings and byte strings point into the input.
		d.Alias = true
		if n := testing.AllocsPerRun(100, func() {
			d.Reset(enc)
			c.decode(&d)
		}); n != 0 {
			t.Errorf("%s: decoding with Alias allocates %v times", c.name, n)
		}
		if !c.equal() {
			t.Errorf("%s: decoded value with Alias differs", c.name)
		}
	}
}

// TestSettersGettersZeroAllocs checks the hot-path accessors.
func TestSettersGettersZeroAllocs(t *testing.T) {
	var v Variant
	ts := time.Now()
	s := "abc"
	var sink float64
	n := testing.AllocsPerRun(100, func() {
		v.SetBool(true)
		v.SetInt8(-1)
		v.SetUint8(1)
		v.SetInt16(-1)
		v.SetUint16(1)
		v.SetInt32(-1)
		v.SetUint32(1)
		v.SetInt64(-1)
		v.SetUint64(1)
		v.SetFloat32(1.5)
		v.SetDateTime(ts)
		v.SetStatusCode(status.BadDecodingError)
		v.SetString(s)
		v.SetByteString(nil)
		v.SetFloat64(2.5)
		f, _ := v.Float64()
		i, _ := v.Int32()
		b, _ := v.Bool()
		tm, _ := v.DateTime()
		st, _ := v.StringValue()
		sink += f + float64(i) + float64(len(st)+tm.Second())
		if b {
			sink++
		}
	})
	if n != 0 {
		t.Errorf("setters and getters allocate %v times", n)
	}
	_ = sink
}
