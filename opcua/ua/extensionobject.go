package ua

import (
	"bytes"
	"encoding/binary"

	"github.com/edged/edged/opcua/ua/status"
)

// bodies maps a DefaultBinary encoding id to a constructor of its Body.
// It is written only by RegisterBody, which runs from init functions, and
// read afterwards without a lock: registering after init is a data race.
var bodies = map[NodeID]func() Body{}

// RegisterBody makes ExtensionObject.Decode decode a binary body whose
// TypeId is id (a DataType's DefaultBinary encoding id) into a fresh value
// from newBody. It must be called from an init function (generated code
// does so), never after: the registry is read without locking. Registering
// an id twice panics.
func RegisterBody(id NodeID, newBody func() Body) {
	if _, dup := bodies[id]; dup {
		panic("ua: RegisterBody called twice for " + id.String())
	}
	bodies[id] = newBody
}

// NewBody returns a fresh Body for the encoding id, and whether one is
// registered.
func NewBody(id NodeID) (Body, bool) {
	newBody, ok := bodies[id]
	if !ok {
		return nil, false
	}
	return newBody(), true
}

// Encode appends the ExtensionObject (OPC 10000-6 §5.2.2.15): the TypeId,
// the encoding byte, and unless it is ExtensionObjectEmpty an Int32 length
// and the body. With a Body, the TypeId is Body.BinaryEncodingID(), the
// encoding is binary and the body is encoded in place (the length is
// patched in afterwards). Without one, TypeID, Encoding and Raw are
// written as they stand, so a body that was not decoded passes on
// unchanged; a nil Raw is written as length -1.
func (v *ExtensionObject) Encode(b []byte) []byte {
	if v.Body != nil {
		id := v.Body.BinaryEncodingID()
		b = id.Encode(b)
		b = append(b, ExtensionObjectBinary)
		at := len(b)
		b = append(b, 0, 0, 0, 0)
		b = v.Body.Encode(b)
		binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-4))
		return b
	}
	b = v.TypeID.Encode(b)
	b = append(b, v.Encoding)
	if v.Encoding == ExtensionObjectEmpty {
		return b
	}
	return AppendByteString(b, v.Raw)
}

// Decode reads an ExtensionObject. It counts one level against
// Limits.MaxDepth. A binary body of a registered TypeId (see RegisterBody)
// is decoded into Body, which must consume exactly the encoded length
// (else status.BadDecodingError); when v.Body already has that type it is
// decoded into, so that a reused value does not allocate. Any other body,
// XML or of an unknown type, is kept in Raw (copied into Raw's capacity,
// or aliasing the input with Decoder.Alias) with TypeID and Encoding, and
// Body is nil. An encoding byte above 2 is status.BadDecodingError; a body
// longer than the input is status.BadDecodingError and one longer than
// Limits.MaxByteStringLength (for XML, MaxStringLength)
// status.BadEncodingLimitsExceeded.
func (v *ExtensionObject) Decode(d *Decoder) {
	if !d.Enter() {
		return
	}
	defer d.Leave()
	v.TypeID.Decode(d)
	v.Encoding = d.ReadUint8()
	if d.err != nil {
		return
	}
	switch v.Encoding {
	case ExtensionObjectEmpty:
		v.Body, v.Raw = nil, nil
	case ExtensionObjectBinary:
		v.decodeBinary(d)
	case ExtensionObjectXML:
		v.Body = nil
		v.Raw = d.readRaw(v.Raw, d.Limits.MaxStringLength)
	default:
		d.Fail(status.BadDecodingError)
	}
}

func (v *ExtensionObject) decodeBinary(d *Decoder) {
	newBody, known := bodies[v.TypeID]
	if !known {
		v.Body = nil
		v.Raw = d.ReadByteString(v.Raw)
		return
	}
	n := d.readLen(d.Limits.MaxByteStringLength)
	if n < 0 {
		// A null body of a known type: nothing to decode.
		v.Body, v.Raw = nil, nil
		return
	}
	body := v.Body
	if body == nil || body.BinaryEncodingID() != v.TypeID {
		body = newBody()
	}
	// Decode the body with d limited to the declared length: a
	// sub-decoder in effect that shares Limits, Alias and the depth, but
	// costs no allocation.
	full, end := d.buf, d.off+n
	d.buf = d.buf[:end]
	body.Decode(d)
	if d.err == nil && d.off != end {
		d.Fail(status.BadDecodingError)
	}
	d.buf = full
	if d.err != nil {
		d.off = len(d.buf)
		return
	}
	v.Body, v.Raw = body, nil
}

// readRaw reads an Int32 length and that many bytes, like ReadByteString
// but against limit max.
func (d *Decoder) readRaw(dst []byte, max int) []byte {
	n := d.readLen(max)
	if n < 0 {
		return nil
	}
	p := d.next(n)
	if d.err != nil {
		return nil
	}
	if d.Alias {
		return p
	}
	if dst == nil {
		dst = make([]byte, 0, n)
	}
	return append(dst[:0], p...)
}

// extensionObjectEqual reports whether a and b encode the same. Values
// with a Body are encoded to compare them, which allocates.
func extensionObjectEqual(a, b *ExtensionObject) bool {
	if a.Body == nil && b.Body == nil {
		if a.TypeID != b.TypeID || a.Encoding != b.Encoding {
			return false
		}
		if a.Encoding == ExtensionObjectEmpty {
			return true
		}
		return (a.Raw == nil) == (b.Raw == nil) && bytes.Equal(a.Raw, b.Raw)
	}
	return bytes.Equal(a.Encode(nil), b.Encode(nil))
}
