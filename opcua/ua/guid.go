package ua

import (
	"encoding/binary"
	"errors"
	"strconv"
)

// Encode appends the Guid: Data1 (UInt32), Data2 and Data3 (UInt16)
// little-endian, then the 8 bytes of Data4 as they stand
// (OPC 10000-6 §5.2.2.7).
func (g *GUID) Encode(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, g.Data1)
	b = binary.LittleEndian.AppendUint16(b, g.Data2)
	b = binary.LittleEndian.AppendUint16(b, g.Data3)
	return append(b, g.Data4[:]...)
}

// Decode reads a Guid.
func (g *GUID) Decode(d *Decoder) {
	p := d.ReadBytes(16)
	if p == nil {
		*g = GUID{}
		return
	}
	g.Data1 = binary.LittleEndian.Uint32(p)
	g.Data2 = binary.LittleEndian.Uint16(p[4:])
	g.Data3 = binary.LittleEndian.Uint16(p[6:])
	copy(g.Data4[:], p[8:])
}

// IsZero reports whether g is the null Guid (all zeros).
func (g GUID) IsZero() bool { return g == GUID{} }

// String returns g in the form of OPC 10000-6 §5.1.3,
// "72962B91-FA75-4AE6-8D28-B404DC7DAF63": Data1, Data2, Data3, the first
// two bytes of Data4 and its last six, in upper-case hexadecimal.
func (g GUID) String() string {
	var s [36]byte
	g.appendText(s[:0])
	return string(s[:])
}

func (g GUID) appendText(b []byte) []byte {
	const hexdigits = "0123456789ABCDEF"
	hex := func(b []byte, v uint64, digits int) []byte {
		for i := digits - 1; i >= 0; i-- {
			b = append(b, hexdigits[(v>>(4*uint(i)))&0xF])
		}
		return b
	}
	b = hex(b, uint64(g.Data1), 8)
	b = append(b, '-')
	b = hex(b, uint64(g.Data2), 4)
	b = append(b, '-')
	b = hex(b, uint64(g.Data3), 4)
	b = append(b, '-')
	for i, c := range g.Data4 {
		if i == 2 {
			b = append(b, '-')
		}
		b = hex(b, uint64(c), 2)
	}
	return b
}

var errGUIDSyntax = errors.New("want XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX in hexadecimal")

// ParseGUID parses a Guid in the form that String returns. Hexadecimal
// digits may be upper or lower case; the Guid may be enclosed in braces
// ("{...}"), as some tools print it.
func ParseGUID(s string) (GUID, error) {
	g, err := parseGUID(s)
	if err != nil {
		return GUID{}, &ParseError{Kind: "Guid", Input: s, Err: err}
	}
	return g, nil
}

func parseGUID(s string) (GUID, error) {
	if len(s) == 38 && s[0] == '{' && s[37] == '}' {
		s = s[1:37]
	}
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return GUID{}, errGUIDSyntax
	}
	// Positions of the 16 bytes' first hex digit, in text order.
	var raw [16]byte
	pos := 0
	for i := range raw {
		if pos == 8 || pos == 13 || pos == 18 || pos == 23 {
			pos++
		}
		hi, ok1 := unhex(s[pos])
		lo, ok2 := unhex(s[pos+1])
		if !ok1 || !ok2 {
			return GUID{}, errGUIDSyntax
		}
		raw[i] = hi<<4 | lo
		pos += 2
	}
	var g GUID
	g.Data1 = binary.BigEndian.Uint32(raw[0:])
	g.Data2 = binary.BigEndian.Uint16(raw[4:])
	g.Data3 = binary.BigEndian.Uint16(raw[6:])
	copy(g.Data4[:], raw[8:])
	return g, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// ParseError reports a text form (of a NodeId, ExpandedNodeId or Guid)
// that could not be parsed.
type ParseError struct {
	Kind  string // "NodeId", "ExpandedNodeId" or "Guid"
	Input string // the text given
	Err   error  // what is wrong with it
}

func (e *ParseError) Error() string {
	return "ua: invalid " + e.Kind + " " + strconv.Quote(e.Input) + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }
