package ua

import (
	"bytes"
	"testing"
)

// FuzzBuiltins decodes arbitrary bytes as a Variant, a DataValue, a
// DiagnosticInfo, an ExtensionObject, a NodeID and an ExpandedNodeID. None
// may panic; whenever decoding succeeds, the value's encoding must decode
// (fresh, into the used value, and with Alias) to a value that encodes to
// the same bytes.
func FuzzBuiltins(f *testing.F) {
	for _, v := range allVectors(f) {
		f.Add(v.b)
		if !v.decodeOnly {
			f.Add(v.enc(nil))
		}
	}
	f.Add(nestedExtensionObjects(3))
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzCodec(t, "Variant", b, func(a, b *Variant) bool { return a.Equal(*b) })
		fuzzCodec(t, "DataValue", b, (*DataValue).Equal)
		fuzzCodec(t, "DiagnosticInfo", b, diagnosticInfoEqual)
		fuzzCodec(t, "ExtensionObject", b, extensionObjectEqual)
		fuzzCodec(t, "NodeID", b, func(a, b *NodeID) bool { return *a == *b })
		fuzzCodec(t, "ExpandedNodeID", b, func(a, b *ExpandedNodeID) bool { return *a == *b })
	})
}

func fuzzCodec[T any, P codec[T]](t *testing.T, name string, in []byte, equal func(a, b *T) bool) {
	var v T
	d := NewDecoder(in)
	P(&v).Decode(d)
	if d.Err() != nil {
		return
	}
	if d.depth != 0 {
		t.Fatalf("%s: depth %d after decoding", name, d.depth)
	}
	enc := P(&v).Encode(nil)

	// Decode the encoding into a fresh value, and into v again (which
	// reuses its storage), with and without Alias.
	for _, alias := range []bool{false, true} {
		var fresh T
		for _, got := range []*T{&fresh, &v} {
			d := NewDecoder(enc)
			d.Alias = alias
			P(got).Decode(d)
			if err := d.Err(); err != nil {
				t.Fatalf("%s: re-encoding % X of input % X does not decode: %v", name, enc, in, err)
			}
			if d.Remaining() != 0 {
				t.Fatalf("%s: %d bytes of re-encoding % X left", name, d.Remaining(), enc)
			}
			if again := P(got).Encode(nil); !bytes.Equal(again, enc) {
				t.Fatalf("%s: input % X\nencodes as % X\n   then as % X", name, in, enc, again)
			}
		}
		if !equal(&fresh, &v) {
			t.Fatalf("%s: values decoded from % X differ", name, enc)
		}
	}
}
