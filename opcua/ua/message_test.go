package ua_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/id"
	"github.com/edged/edged/opcua/ua/status"
)

// readRequestVector is a ReadRequest message annotated field by field, and
// the value it encodes.
var readRequestVector = []byte{
	0x01, 0x00, 0x77, 0x02, // type id: four-byte NodeId, ns 0, i=631 (ReadRequest_Encoding_DefaultBinary)
	// RequestHeader
	0x05, 0x01, 0x00, // AuthenticationToken: ByteString NodeId, ns 1
	0x04, 0x00, 0x00, 0x00, 0xca, 0xfe, 0xba, 0xbe, // identifier: 4 bytes
	0x70, 0x56, 0x34, 0x12, 0xb0, 0xa8, 0xda, 0x01, // Timestamp: 0x01daa8b012345670 ticks
	0x07, 0x00, 0x00, 0x00, // RequestHandle 7
	0x00, 0x00, 0x00, 0x00, // ReturnDiagnostics 0
	0xff, 0xff, 0xff, 0xff, // AuditEntryId: null String
	0x88, 0x13, 0x00, 0x00, // TimeoutHint 5000 ms
	0x00, 0x00, 0x00, // AdditionalHeader: TypeId i=0 (two-byte), no body
	// ReadRequest
	0x00, 0x00, 0x00, 0x00, 0x00, 0x40, 0x7f, 0x40, // MaxAge 500.0
	0x02, 0x00, 0x00, 0x00, // TimestampsToReturn Both
	0x01, 0x00, 0x00, 0x00, // NodesToRead: 1 element
	0x03, 0x02, 0x00, // NodeId: String, ns 2
	0x0b, 0x00, 0x00, 0x00, 's', 'i', 'm', '.', 'C', 'o', 'u', 'n', 't', 'e', 'r', // "sim.Counter"
	0x0d, 0x00, 0x00, 0x00, // AttributeId 13 (Value)
	0xff, 0xff, 0xff, 0xff, // IndexRange: null String
	0x00, 0x00, 0xff, 0xff, 0xff, 0xff, // DataEncoding: ns 0, null name
}

func readRequestVectorValue() *ua.ReadRequest {
	return &ua.ReadRequest{
		RequestHeader: ua.RequestHeader{
			AuthenticationToken: ua.NewOpaqueNodeID(1, []byte{0xca, 0xfe, 0xba, 0xbe}),
			Timestamp:           ua.TimeFromTicks(0x01daa8b012345670),
			RequestHandle:       7,
			TimeoutHint:         5000,
		},
		MaxAge:             500,
		TimestampsToReturn: ua.TimestampsToReturnBoth,
		NodesToRead: []ua.ReadValueID{{
			NodeID:      ua.NewStringNodeID(2, "sim.Counter"),
			AttributeID: uint32(ua.AttributeIDValue),
		}},
	}
}

func TestAppendMessageVector(t *testing.T) {
	prefix := []byte("hdr")
	got := ua.AppendMessage(prefix, readRequestVectorValue())
	if !bytes.HasPrefix(got, prefix) {
		t.Fatalf("AppendMessage overwrote the buffer's prefix: % x", got[:3])
	}
	if got := got[len(prefix):]; !bytes.Equal(got, readRequestVector) {
		t.Errorf("AppendMessage:\n got % x\nwant % x", got, readRequestVector)
	}
}

func TestDecodeMessageVector(t *testing.T) {
	m, err := ua.DecodeMessage(ua.NewDecoder(readRequestVector))
	if err != nil {
		t.Fatalf("DecodeMessage: %v", err)
	}
	if d := diff(m, ua.Body(readRequestVectorValue())); d != "" {
		t.Errorf("DecodeMessage: %s", d)
	}

	var req ua.ReadRequest
	if err := ua.DecodeMessageInto(ua.NewDecoder(readRequestVector), &req); err != nil {
		t.Fatalf("DecodeMessageInto: %v", err)
	}
	if d := diff(&req, readRequestVectorValue()); d != "" {
		t.Errorf("DecodeMessageInto: %s", d)
	}
}

// TestMessageRoundTrip encodes every sample message, decodes it with
// DecodeMessage and DecodeMessageInto (into a new value and into one that
// held another message of the type), and checks the values and the
// re-encoding.
func TestMessageRoundTrip(t *testing.T) {
	samples := sampleMessages()
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			enc := ua.AppendMessage(nil, s.msg)
			got, err := ua.DecodeMessage(ua.NewDecoder(enc))
			if err != nil {
				t.Fatalf("DecodeMessage: %v", err)
			}
			if reflect.TypeOf(got) != reflect.TypeOf(s.msg) {
				t.Fatalf("DecodeMessage returned %T, want %T", got, s.msg)
			}
			if d := diff(got, s.msg); d != "" {
				t.Errorf("DecodeMessage: %s", d)
			}
			if re := ua.AppendMessage(nil, got); !bytes.Equal(re, enc) {
				t.Errorf("re-encoding differs:\n got % x\nwant % x", re, enc)
			}

			// Decode into a value that held each sample of the same
			// type, then this one.
			reused := reflect.New(reflect.TypeOf(s.msg).Elem()).Interface().(ua.Body)
			for _, other := range samples {
				if reflect.TypeOf(other.msg) != reflect.TypeOf(s.msg) {
					continue
				}
				if err := ua.DecodeMessageInto(ua.NewDecoder(ua.AppendMessage(nil, other.msg)), reused); err != nil {
					t.Fatalf("DecodeMessageInto(%s): %v", other.name, err)
				}
				if err := ua.DecodeMessageInto(ua.NewDecoder(enc), reused); err != nil {
					t.Fatalf("DecodeMessageInto after %s: %v", other.name, err)
				}
				if d := diff(reused, s.msg); d != "" {
					t.Errorf("DecodeMessageInto after %s: %s", other.name, d)
				}
			}
		})
	}
}

// TestDecodeMessageTruncated decodes every proper prefix of every sample
// message: each must fail with a StatusCode, the same one d keeps, and
// not panic.
func TestDecodeMessageTruncated(t *testing.T) {
	for _, s := range sampleMessages() {
		enc := ua.AppendMessage(nil, s.msg)
		into := reflect.New(reflect.TypeOf(s.msg).Elem()).Interface().(ua.Body)
		for n := range len(enc) {
			d := ua.NewDecoder(enc[:n])
			m, err := ua.DecodeMessage(d)
			var code ua.StatusCode
			if err == nil || m != nil || !errors.As(err, &code) || err != d.Err() {
				t.Fatalf("%s: DecodeMessage of %d of %d bytes = %v, %v (d.Err() %v); want nil and the decoder's StatusCode",
					s.name, n, len(enc), m, err, d.Err())
			}
			d.Reset(enc[:n])
			if err := ua.DecodeMessageInto(d, into); err == nil || err != d.Err() {
				t.Fatalf("%s: DecodeMessageInto of %d of %d bytes = %v (d.Err() %v)", s.name, n, len(enc), err, d.Err())
			}
		}
	}
}

func TestDecodeMessageTrailingBytes(t *testing.T) {
	enc := append(ua.AppendMessage(nil, newReadRequest(1)), 0)
	d := ua.NewDecoder(enc)
	if m, err := ua.DecodeMessage(d); err != status.BadDecodingError || m != nil {
		t.Errorf("DecodeMessage with a trailing byte = %v, %v; want nil, BadDecodingError", m, err)
	}
	if d.Err() != status.BadDecodingError {
		t.Errorf("d.Err() = %v, want BadDecodingError", d.Err())
	}
	var req ua.ReadRequest
	if err := ua.DecodeMessageInto(ua.NewDecoder(enc), &req); err != status.BadDecodingError {
		t.Errorf("DecodeMessageInto with a trailing byte = %v, want BadDecodingError", err)
	}
}

func TestDecodeMessageUnknownType(t *testing.T) {
	for _, typeID := range []ua.NodeID{
		ua.NewNumericNodeID(0, id.Boolean), // a DataType, not an encoding
		ua.NewNumericNodeID(0, id.ReadRequest_Encoding_DefaultXml),
		ua.NewNumericNodeID(2, id.ReadRequest_Encoding_DefaultBinary), // right number, wrong namespace
		ua.NewStringNodeID(1, "vendor.Request"),
	} {
		enc := typeID.Encode(nil)
		enc = newReadRequest(1).Encode(enc)
		d := ua.NewDecoder(enc)
		m, err := ua.DecodeMessage(d)
		if m != nil || !errors.Is(err, status.BadDataTypeIDUnknown) {
			t.Errorf("DecodeMessage of type %v = %v, %v; want BadDataTypeIdUnknown", typeID, m, err)
			continue
		}
		var mte *ua.MessageTypeError
		if !errors.As(err, &mte) || mte.TypeID != typeID || !mte.Want.IsNull() {
			t.Errorf("DecodeMessage of type %v: error %#v, want a *MessageTypeError with TypeID %v", typeID, err, typeID)
		}
		var code ua.StatusCode
		if !errors.As(err, &code) || code != status.BadDataTypeIDUnknown {
			t.Errorf("errors.As(%v, *StatusCode) = %v", err, code)
		}
		if d.Err() != status.BadDataTypeIDUnknown || d.Remaining() != 0 {
			t.Errorf("after an unknown type d.Err() = %v, %d bytes remain; want BadDataTypeIdUnknown, 0", d.Err(), d.Remaining())
		}
		if !strings.Contains(err.Error(), typeID.String()) {
			t.Errorf("error %q does not name the type id %v", err, typeID)
		}
	}
}

// TestDecodeMessageExpandedTypeID checks that a type id with the
// ExpandedNodeId flags is refused: Part 6 §5.2.9 prefixes a message with
// a NodeId.
func TestDecodeMessageExpandedTypeID(t *testing.T) {
	enc := ua.AppendMessage(nil, newReadRequest(1))
	for _, flag := range []byte{0x40, 0x80} {
		b := bytes.Clone(enc)
		b[0] |= flag
		if _, err := ua.DecodeMessage(ua.NewDecoder(b)); err != status.BadDecodingError {
			t.Errorf("type id encoding byte %#x: DecodeMessage error %v, want BadDecodingError", b[0], err)
		}
	}
}

// TestDecodeMessageIntoWrongType is the client's case: a ServiceFault
// arrives where a ReadResponse was expected.
func TestDecodeMessageIntoWrongType(t *testing.T) {
	enc := ua.AppendMessage(nil, serviceFault())
	resp := newReadResponse(2)
	before := resp.Encode(nil)
	d := ua.NewDecoder(enc)
	err := ua.DecodeMessageInto(d, resp)
	var mte *ua.MessageTypeError
	if !errors.As(err, &mte) || !errors.Is(err, status.BadDataTypeIDUnknown) {
		t.Fatalf("DecodeMessageInto(ServiceFault, *ReadResponse) = %v, want a *MessageTypeError", err)
	}
	if want := ua.NewNumericNodeID(0, id.ServiceFault_Encoding_DefaultBinary); mte.TypeID != want {
		t.Errorf("TypeID = %v, want %v", mte.TypeID, want)
	}
	if want := ua.NewNumericNodeID(0, id.ReadResponse_Encoding_DefaultBinary); mte.Want != want {
		t.Errorf("Want = %v, want %v", mte.Want, want)
	}
	if !bytes.Equal(resp.Encode(nil), before) {
		t.Error("DecodeMessageInto modified the message after a type mismatch")
	}
	if d.Err() != status.BadDataTypeIDUnknown {
		t.Errorf("d.Err() = %v", d.Err())
	}

	d.Reset(enc)
	m, err := ua.DecodeMessage(d)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := m.(*ua.ServiceFault); !ok || f.ResponseHeader.ServiceResult != status.BadServiceUnsupported {
		t.Errorf("DecodeMessage = %#v, want the ServiceFault", m)
	}
}

func TestDecodeMessageSticky(t *testing.T) {
	enc := ua.AppendMessage(nil, newReadRequest(1))
	d := ua.NewDecoder(enc)
	d.Fail(status.BadEncodingLimitsExceeded)
	off := d.Offset()
	if m, err := ua.DecodeMessage(d); m != nil || err != status.BadEncodingLimitsExceeded {
		t.Errorf("DecodeMessage on a failed decoder = %v, %v", m, err)
	}
	var req ua.ReadRequest
	if err := ua.DecodeMessageInto(d, &req); err != status.BadEncodingLimitsExceeded {
		t.Errorf("DecodeMessageInto on a failed decoder = %v", err)
	}
	if d.Offset() != off || len(req.NodesToRead) != 0 {
		t.Error("a failed decoder moved or decoded")
	}
}

func TestDecodeMessageLimits(t *testing.T) {
	enc := ua.AppendMessage(nil, newReadRequest(100))
	d := &ua.Decoder{Limits: ua.Limits{MaxArrayLength: 99}}
	d.Reset(enc)
	if _, err := ua.DecodeMessage(d); err != status.BadEncodingLimitsExceeded {
		t.Errorf("100 nodes with MaxArrayLength 99: error %v, want BadEncodingLimitsExceeded", err)
	}
	d = &ua.Decoder{Limits: ua.Limits{MaxArrayLength: 100}}
	d.Reset(enc)
	if _, err := ua.DecodeMessage(d); err != nil {
		t.Errorf("100 nodes with MaxArrayLength 100: %v", err)
	}
}

// TestDecodeMessageAlias decodes with Decoder.Alias: the strings of the
// message point into the input.
func TestDecodeMessageAlias(t *testing.T) {
	enc := ua.AppendMessage(nil, newReadRequest(3))
	d := &ua.Decoder{Alias: true}
	d.Reset(enc)
	var req ua.ReadRequest
	if err := ua.DecodeMessageInto(d, &req); err != nil {
		t.Fatal(err)
	}
	if d := diff(&req, newReadRequest(3)); d != "" {
		t.Fatal(d)
	}
	i := bytes.Index(enc, []byte("sim.Counter"))
	enc[i] = 'S'
	if got := req.NodesToRead[0].NodeID.Text; got != "Sim.Counter" {
		t.Errorf("with Alias the NodeId string is %q, want it to share the input", got)
	}
}

func TestMessageTypeErrorString(t *testing.T) {
	err := &ua.MessageTypeError{
		TypeID: ua.NewNumericNodeID(0, id.ServiceFault_Encoding_DefaultBinary),
		Want:   ua.NewNumericNodeID(0, id.ReadResponse_Encoding_DefaultBinary),
		Code:   status.BadDataTypeIDUnknown,
	}
	want := fmt.Sprintf("ua: message of type i=%d, want i=%d: ", id.ServiceFault_Encoding_DefaultBinary, id.ReadResponse_Encoding_DefaultBinary)
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "BadDataTypeIdUnknown") {
		t.Errorf("Error() = %q, want prefix %q and the status name", err.Error(), want)
	}
}

// diff compares two values of the ua package as UA values and returns a
// description of the first difference, "" if none. It compares field by
// field, except:
//   - time.Time as UA DateTimes (100 ns ticks since 1601);
//   - Variant and DataValue with their Equal methods;
//   - an ExtensionObject with a Body by its Body alone (Encode writes the
//     Body's own TypeID and binary encoding, whatever TypeID and Encoding
//     hold), one without by TypeID, Encoding and Raw;
//   - a nil slice equal to an empty one, since null and empty arrays,
//     Strings and ByteStrings are semantically the same and decoders need
//     not preserve the distinction (OPC 10000-6 v1.05 §5.1.11);
//   - floats bitwise, so that NaNs compare.
func diff(a, b any) string {
	return diffValue(reflect.ValueOf(a), reflect.ValueOf(b), "")
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	variantType         = reflect.TypeFor[ua.Variant]()
	dataValueType       = reflect.TypeFor[ua.DataValue]()
	extensionObjectType = reflect.TypeFor[ua.ExtensionObject]()
)

func diffValue(a, b reflect.Value, path string) string {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			return fmt.Sprintf("%s: %v vs %v", path, a, b)
		}
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: type %v vs %v", path, a.Type(), b.Type())
	}
	switch a.Type() {
	case timeType:
		ta, tb := a.Interface().(time.Time), b.Interface().(time.Time)
		if ua.DateTimeTicks(ta) != ua.DateTimeTicks(tb) {
			return fmt.Sprintf("%s: %v vs %v", path, ta, tb)
		}
		return ""
	case variantType:
		va, vb := a.Interface().(ua.Variant), b.Interface().(ua.Variant)
		if !va.Equal(vb) {
			return fmt.Sprintf("%s: %v vs %v", path, va, vb)
		}
		return ""
	case dataValueType:
		da, db := a.Interface().(ua.DataValue), b.Interface().(ua.DataValue)
		if !da.Equal(&db) {
			return fmt.Sprintf("%s: %+v vs %+v", path, da, db)
		}
		return ""
	case extensionObjectType:
		ea, eb := a.Interface().(ua.ExtensionObject), b.Interface().(ua.ExtensionObject)
		if ea.Body != nil || eb.Body != nil {
			return diffValue(reflect.ValueOf(ea.Body), reflect.ValueOf(eb.Body), path+".Body")
		}
		if ea.TypeID != eb.TypeID || ea.Encoding != eb.Encoding || !bytes.Equal(ea.Raw, eb.Raw) {
			return fmt.Sprintf("%s: %+v vs %+v", path, ea, eb)
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if !f.IsExported() {
				panic("diff: unexported field " + a.Type().String() + "." + f.Name)
			}
			if d := diffValue(a.Field(i), b.Field(i), path+"."+f.Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d vs %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := diffValue(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: %v vs %v", path, a, b)
			}
			return ""
		}
		return diffValue(a.Elem(), b.Elem(), path)
	case reflect.Float32, reflect.Float64:
		if math.Float64bits(a.Float()) != math.Float64bits(b.Float()) {
			return fmt.Sprintf("%s: %v vs %v", path, a.Float(), b.Float())
		}
		return ""
	}
	if !a.Equal(b) {
		return fmt.Sprintf("%s: %#v vs %#v", path, a, b)
	}
	return ""
}

// TestDiff checks that diff sees a change deep in a message and treats
// what §5.1.11 calls the same as equal.
func TestDiff(t *testing.T) {
	a, b := fullBrowseResponse(), fullBrowseResponse()
	if d := diff(a, b); d != "" {
		t.Fatalf("diff of equal messages: %s", d)
	}
	b.Results[1].References[1].DisplayName.Locale = "de"
	if d := diff(a, b); !strings.Contains(d, ".Results[1].References[1].DisplayName.Locale") {
		t.Errorf("diff = %q, want the changed Locale", d)
	}
	b = fullBrowseResponse()
	b.DiagnosticInfos[0].InnerDiagnosticInfo.InnerStatusCode = 0
	if d := diff(a, b); d == "" {
		t.Error("diff misses a change in an inner DiagnosticInfo")
	}
	c, e := newReadResponse(2), newReadResponse(2)
	e.Results[1].Value.SetUint32(1)
	if d := diff(c, e); d == "" {
		t.Error("diff misses a changed Variant")
	}
	e = newReadResponse(2)
	e.ResponseHeader.StringTable = []string{}
	if d := diff(c, e); d != "" {
		t.Errorf("diff tells a null array from an empty one: %s", d)
	}
}
