package ua

import (
	"strconv"

	"github.com/edged/edged/opcua/ua/status"
)

// LocalizedText encoding mask bits (OPC 10000-6 §5.2.2.14).
const (
	localizedTextLocale = 0x01
	localizedTextText   = 0x02
)

// Encode appends the QualifiedName: the UInt16 namespace index, then the
// name as a String (OPC 10000-6 §5.2.2.13).
func (q *QualifiedName) Encode(b []byte) []byte {
	b = AppendUint16(b, q.NamespaceIndex)
	return AppendString(b, q.Name)
}

// Decode reads a QualifiedName, reusing the name q holds when equal.
func (q *QualifiedName) Decode(d *Decoder) {
	q.NamespaceIndex = d.ReadUint16()
	q.Name = d.ReadStringReuse(q.Name)
}

// String returns "<index>:<name>", or the name alone in namespace 0.
func (q QualifiedName) String() string {
	if q.NamespaceIndex == 0 {
		return q.Name
	}
	return strconv.FormatUint(uint64(q.NamespaceIndex), 10) + ":" + q.Name
}

// Encode appends the LocalizedText (OPC 10000-6 §5.2.2.14): an encoding
// mask with 0x01 when Locale is not empty and 0x02 when Text is not empty,
// then those fields as Strings.
func (t *LocalizedText) Encode(b []byte) []byte {
	var mask byte
	if t.Locale != "" {
		mask |= localizedTextLocale
	}
	if t.Text != "" {
		mask |= localizedTextText
	}
	b = append(b, mask)
	if t.Locale != "" {
		b = AppendString(b, t.Locale)
	}
	if t.Text != "" {
		b = AppendString(b, t.Text)
	}
	return b
}

// Decode reads a LocalizedText. A mask bit other than 0x01 and 0x02 is
// status.BadDecodingError.
func (t *LocalizedText) Decode(d *Decoder) {
	mask := d.ReadUint8()
	if mask&^(localizedTextLocale|localizedTextText) != 0 {
		d.Fail(status.BadDecodingError)
	}
	if mask&localizedTextLocale != 0 {
		t.Locale = d.ReadStringReuse(t.Locale)
	} else {
		t.Locale = ""
	}
	if mask&localizedTextText != 0 {
		t.Text = d.ReadStringReuse(t.Text)
	} else {
		t.Text = ""
	}
}

// Encode appends the XmlElement, which is encoded as a String
// (OPC 10000-6 §5.2.2.8).
func (x *XMLElement) Encode(b []byte) []byte { return AppendString(b, string(*x)) }

// Decode reads an XmlElement.
func (x *XMLElement) Decode(d *Decoder) { *x = XMLElement(d.ReadStringReuse(string(*x))) }
