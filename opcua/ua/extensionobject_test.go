package ua

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"
)

func TestBodyRegistry(t *testing.T) {
	b, ok := NewBody(testBodyID)
	if _, isTest := b.(*testBody); !ok || !isTest {
		t.Errorf("NewBody(testBodyID) = %T, %v", b, ok)
	}
	if b2, _ := NewBody(testBodyID); b2 == b {
		t.Error("NewBody returned the same value twice")
	}
	if b, ok := NewBody(NewNumericNodeID(9, 9)); ok || b != nil {
		t.Errorf("NewBody(unknown) = %v, %v", b, ok)
	}
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "ns=1;i=4242") {
			t.Errorf("registering twice: %v", p)
		}
	}()
	RegisterBody(testBodyID, func() Body { return new(testBody) })
}

// TestExtensionObjectReuse checks that a Body of the decoded type is
// decoded into, and one of another type replaced.
func TestExtensionObjectReuse(t *testing.T) {
	enc := (&ExtensionObject{Body: &testBody{A: 5, S: "x"}}).Encode(nil)
	held := &testBody{A: 1, S: "old"}
	e := ExtensionObject{Body: held}
	d := NewDecoder(enc)
	e.Decode(d)
	if d.Err() != nil || e.Body != Body(held) || *held != (testBody{A: 5, S: "x"}) || e.Raw != nil {
		t.Errorf("reuse: %+v, %v", e, d.Err())
	}
	other := &nestBody{}
	e = ExtensionObject{Body: other, Raw: []byte{1}}
	d = NewDecoder(enc)
	e.Decode(d)
	if got, ok := e.Body.(*testBody); d.Err() != nil || !ok || *got != (testBody{A: 5, S: "x"}) || e.TypeID != testBodyID || e.Encoding != 1 {
		t.Errorf("replace: %+v, %v", e, d.Err())
	}
	// A raw body after a decoded one drops the Body.
	raw := []byte{0x01, 0x02, 0x88, 0x13, 0x01, 0x01, 0, 0, 0, 0x42}
	d = NewDecoder(raw)
	e.Decode(d)
	if d.Err() != nil || e.Body != nil || !bytes.Equal(e.Raw, []byte{0x42}) {
		t.Errorf("raw: %+v, %v", e, d.Err())
	}
}

// TestExtensionObjectRawAlias checks that a raw body is copied, or with
// Alias points into the input.
func TestExtensionObjectRawAlias(t *testing.T) {
	in := []byte{0x01, 0x02, 0x88, 0x13, 0x01, 0x02, 0, 0, 0, 0xAA, 0xBB}
	var e ExtensionObject
	d := NewDecoder(in)
	e.Decode(d)
	if unsafe.SliceData(e.Raw) == &in[9] {
		t.Error("Raw aliases the input without Alias")
	}
	d = NewDecoder(in)
	d.Alias = true
	var f ExtensionObject
	f.Decode(d)
	if unsafe.SliceData(f.Raw) != &in[9] || len(f.Raw) != 2 {
		t.Error("Raw does not alias the input with Alias")
	}
	if re := f.Encode(nil); !bytes.Equal(re, in) {
		t.Errorf("re-encoded % X", re)
	}
}

// bigBody encodes n bytes, to check the patched length beyond one byte.
type bigBody struct{ n int }

func (b *bigBody) BinaryEncodingID() NodeID { return NewNumericNodeID(1, 1) }
func (b *bigBody) Encode(p []byte) []byte   { return append(p, make([]byte, b.n)...) }
func (b *bigBody) Decode(d *Decoder)        {}

func TestExtensionObjectLengthPatch(t *testing.T) {
	b := (&ExtensionObject{Body: &bigBody{n: 0x012345}}).Encode([]byte{0xEE})
	want := []byte{
		0xEE,                   // what was there
		0x01, 0x01, 0x01, 0x00, // TypeId ns=1;i=1
		0x01,                   // binary
		0x45, 0x23, 0x01, 0x00, // length 0x012345
	}
	if !bytes.Equal(b[:len(want)], want) || len(b) != len(want)+0x012345 {
		t.Errorf("got % X... (%d bytes)", b[:len(want)], len(b))
	}
}
