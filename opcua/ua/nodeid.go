package ua

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/edged/edged/opcua/ua/status"
)

// NodeId encoding bytes (OPC 10000-6 §5.2.2.9, Table 8). The two high bits
// are the ExpandedNodeId flags.
const (
	nodeIDTwoByte    = 0x00 // ns 0, id 0..255: the id as one Byte
	nodeIDFourByte   = 0x01 // ns 0..255, id 0..65535: Byte ns, UInt16 id
	nodeIDNumeric    = 0x02 // UInt16 ns, UInt32 id
	nodeIDString     = 0x03 // UInt16 ns, String
	nodeIDGUID       = 0x04 // UInt16 ns, Guid
	nodeIDByteString = 0x05 // UInt16 ns, ByteString

	nodeIDServerIndexFlag  = 0x40
	nodeIDNamespaceURIFlag = 0x80
)

// NewNumericNodeID returns the NodeId ns;i=id.
func NewNumericNodeID(ns uint16, id uint32) NodeID {
	return NodeID{Namespace: ns, Type: IDNumeric, Numeric: id}
}

// NewStringNodeID returns the NodeId ns;s=s.
func NewStringNodeID(ns uint16, s string) NodeID {
	return NodeID{Namespace: ns, Type: IDString, Text: s}
}

// NewGUIDNodeID returns the NodeId ns;g=g.
func NewGUIDNodeID(ns uint16, g GUID) NodeID {
	return NodeID{Namespace: ns, Type: IDGUID, GUID: g}
}

// NewOpaqueNodeID returns the NodeId ns;b=b. The bytes are copied.
func NewOpaqueNodeID(ns uint16, b []byte) NodeID {
	return NodeID{Namespace: ns, Type: IDOpaque, Text: string(b)}
}

// IsNull reports whether n is a null NodeId (OPC 10000-3 §8.2.4):
// namespace 0 and a numeric 0, an empty string, the zero Guid or an empty
// opaque identifier.
func (n NodeID) IsNull() bool {
	if n.Namespace != 0 {
		return false
	}
	switch n.Type {
	case IDNumeric:
		return n.Numeric == 0
	case IDString, IDOpaque:
		return n.Text == ""
	case IDGUID:
		return n.GUID.IsZero()
	}
	return false
}

// Encode appends the NodeId in the smallest form that holds it: numeric
// ids use the two-byte form (ns 0, id ≤ 255), the four-byte form
// (ns ≤ 255, id ≤ 65535) or the full numeric form. An opaque identifier is
// encoded as a ByteString, an empty one as null.
func (n *NodeID) Encode(b []byte) []byte { return n.encode(b, 0) }

// encode appends n with the ExpandedNodeId flags or-ed into the encoding
// byte.
func (n *NodeID) encode(b []byte, flags byte) []byte {
	switch n.Type {
	case IDString:
		b = append(b, nodeIDString|flags)
		b = AppendUint16(b, n.Namespace)
		return AppendString(b, n.Text)
	case IDGUID:
		b = append(b, nodeIDGUID|flags)
		b = AppendUint16(b, n.Namespace)
		return n.GUID.Encode(b)
	case IDOpaque:
		// A ByteString has the encoding of a String with the same bytes.
		b = append(b, nodeIDByteString|flags)
		b = AppendUint16(b, n.Namespace)
		return AppendString(b, n.Text)
	}
	// IDNumeric (and, as a programming error, an unknown Type).
	switch {
	case n.Namespace == 0 && n.Numeric <= 0xFF:
		return append(b, nodeIDTwoByte|flags, byte(n.Numeric))
	case n.Namespace <= 0xFF && n.Numeric <= 0xFFFF:
		b = append(b, nodeIDFourByte|flags, byte(n.Namespace))
		return AppendUint16(b, uint16(n.Numeric))
	}
	b = append(b, nodeIDNumeric|flags)
	b = AppendUint16(b, n.Namespace)
	return AppendUint32(b, n.Numeric)
}

// Decode reads a NodeId in any of its six forms. An encoding byte with
// unknown bits, or with the ExpandedNodeId flags, is status.BadDecodingError.
// A string or opaque identifier equal to the one n holds is reused
// without allocating (see Decoder.ReadStringReuse).
func (n *NodeID) Decode(d *Decoder) {
	if flags := n.decode(d); flags != 0 {
		d.Fail(status.BadDecodingError)
	}
}

// decode reads a NodeId and returns the ExpandedNodeId flags of its
// encoding byte. Every field of n is set, so that a reused NodeID compares
// equal to a fresh one.
func (n *NodeID) decode(d *Decoder) (flags byte) {
	enc := d.ReadUint8()
	if d.err != nil {
		*n = NodeID{}
		return 0
	}
	form := enc &^ (nodeIDServerIndexFlag | nodeIDNamespaceURIFlag)
	switch form {
	case nodeIDTwoByte:
		*n = NodeID{Numeric: uint32(d.ReadUint8())}
	case nodeIDFourByte:
		ns := uint16(d.ReadUint8())
		*n = NodeID{Namespace: ns, Numeric: uint32(d.ReadUint16())}
	case nodeIDNumeric:
		ns := d.ReadUint16()
		*n = NodeID{Namespace: ns, Numeric: d.ReadUint32()}
	case nodeIDString, nodeIDByteString:
		typ := IDString
		if form == nodeIDByteString {
			typ = IDOpaque
		}
		ns := d.ReadUint16()
		// The limit of a String applies to opaque ids too: both are
		// identifiers, which are short.
		text := d.ReadStringReuse(n.Text)
		*n = NodeID{Namespace: ns, Type: typ, Text: text}
	case nodeIDGUID:
		// Field by field: the GUID is decoded in place, not built on the
		// stack and copied.
		n.Namespace, n.Type, n.Numeric, n.Text = d.ReadUint16(), IDGUID, 0, ""
		n.GUID.Decode(d)
	default:
		*n = NodeID{}
		d.Fail(status.BadDecodingError)
		return 0
	}
	return enc & (nodeIDServerIndexFlag | nodeIDNamespaceURIFlag)
}

// String returns the text form of OPC 10000-6 §5.3.1.10:
// "ns=<index>;<type>=<id>" with the "ns=0;" clause left out, where type is
// i (numeric), s (string), g (Guid, see GUID.String) or b (opaque, in
// standard base64). Examples: "i=2253", "ns=2;s=sim.Counter",
// "ns=1;b=M/RbKBsRVkePCePcx24oRA==".
func (n NodeID) String() string { return string(n.appendText(nil)) }

func (n NodeID) appendText(b []byte) []byte {
	if n.Namespace != 0 {
		b = append(b, "ns="...)
		b = strconv.AppendUint(b, uint64(n.Namespace), 10)
		b = append(b, ';')
	}
	return n.appendID(b)
}

// appendID appends "<type>=<id>".
func (n NodeID) appendID(b []byte) []byte {
	switch n.Type {
	case IDNumeric:
		b = append(b, "i="...)
		return strconv.AppendUint(b, uint64(n.Numeric), 10)
	case IDString:
		b = append(b, "s="...)
		return append(b, n.Text...)
	case IDGUID:
		b = append(b, "g="...)
		return n.GUID.appendText(b)
	case IDOpaque:
		b = append(b, "b="...)
		return base64.StdEncoding.AppendEncode(b, []byte(n.Text))
	}
	return fmt.Appendf(b, "?%d=?", n.Type)
}

// ParseNodeID parses the text form that NodeID.String returns:
// an optional "ns=<0..65535>;" then "i=<0..4294967295>", "s=<any text>",
// "g=<Guid>" or "b=<standard base64>". The string identifier is taken as
// it stands, ';' and '=' included. A namespace URI ("nsu=") needs a
// namespace table and is refused; see ParseExpandedNodeID. Errors are
// *ParseError.
func ParseNodeID(s string) (NodeID, error) {
	n, err := parseNodeID(s)
	if err != nil {
		return NodeID{}, &ParseError{Kind: "NodeId", Input: s, Err: err}
	}
	return n, nil
}

func parseNodeID(s string) (NodeID, error) {
	if strings.HasPrefix(s, "nsu=") {
		return NodeID{}, errors.New("a namespace URI needs a namespace table (use ParseExpandedNodeID)")
	}
	ns, rest, err := parseNamespaceIndex(s)
	if err != nil {
		return NodeID{}, err
	}
	return parseIdentifier(ns, rest)
}

// parseNamespaceIndex parses an optional "ns=<index>;" prefix.
func parseNamespaceIndex(s string) (ns uint16, rest string, err error) {
	v, rest, ok := cutClause(s, "ns=")
	if !ok {
		return 0, s, nil
	}
	if v == "" && rest == "" {
		return 0, "", errors.New(`missing ';' after "ns="`)
	}
	n, err := strconv.ParseUint(v, 10, 16)
	if err != nil {
		return 0, "", fmt.Errorf("namespace index %q: want a number from 0 to 65535", v)
	}
	return uint16(n), rest, nil
}

// cutClause cuts "<key><value>;" from the start of s. It reports false when
// s does not start with key; a key without ';' gives empty value and rest.
func cutClause(s, key string) (value, rest string, ok bool) {
	if !strings.HasPrefix(s, key) {
		return "", s, false
	}
	value, rest, found := strings.Cut(s[len(key):], ";")
	if !found {
		return "", "", true
	}
	return value, rest, true
}

// parseIdentifier parses "<type>=<id>".
func parseIdentifier(ns uint16, s string) (NodeID, error) {
	if len(s) < 2 || s[1] != '=' || strings.IndexByte("isgb", s[0]) < 0 {
		return NodeID{}, errors.New(`want "i=", "s=", "g=" or "b=" before the identifier`)
	}
	v := s[2:]
	switch s[0] {
	case 'i':
		id, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return NodeID{}, fmt.Errorf("numeric identifier %q: want a number from 0 to 4294967295", v)
		}
		return NewNumericNodeID(ns, uint32(id)), nil
	case 's':
		return NewStringNodeID(ns, v), nil
	case 'g':
		g, err := parseGUID(v)
		if err != nil {
			return NodeID{}, fmt.Errorf("identifier %q after g=: %w", v, err)
		}
		return NewGUIDNodeID(ns, g), nil
	default: // 'b'
		p, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return NodeID{}, fmt.Errorf("opaque identifier %q: want standard base64: %w", v, err)
		}
		return NodeID{Namespace: ns, Type: IDOpaque, Text: string(p)}, nil
	}
}

// Encode appends the ExpandedNodeId (OPC 10000-6 §5.2.2.10): the NodeId
// with flag 0x80 in its encoding byte when NamespaceURI is not empty and
// 0x40 when ServerIndex is not 0, then the NamespaceUri and ServerIndex
// when flagged. The NodeId's namespace index is encoded as it stands; Part
// 6 wants it 0 when a NamespaceURI is given, which is for the caller to
// ensure (ParseExpandedNodeID does).
func (e *ExpandedNodeID) Encode(b []byte) []byte {
	var flags byte
	if e.NamespaceURI != "" {
		flags |= nodeIDNamespaceURIFlag
	}
	if e.ServerIndex != 0 {
		flags |= nodeIDServerIndexFlag
	}
	b = e.NodeID.encode(b, flags)
	if e.NamespaceURI != "" {
		b = AppendString(b, e.NamespaceURI)
	}
	if e.ServerIndex != 0 {
		b = AppendUint32(b, e.ServerIndex)
	}
	return b
}

// Decode reads an ExpandedNodeId. The namespace index is kept as read,
// even when a NamespaceUri is present.
func (e *ExpandedNodeID) Decode(d *Decoder) {
	flags := e.NodeID.decode(d)
	if flags&nodeIDNamespaceURIFlag != 0 {
		e.NamespaceURI = d.ReadStringReuse(e.NamespaceURI)
	} else {
		e.NamespaceURI = ""
	}
	e.ServerIndex = 0
	if flags&nodeIDServerIndexFlag != 0 {
		e.ServerIndex = d.ReadUint32()
	}
}

// IsNull reports whether e is local (no URI, server 0) and its NodeId
// null.
func (e ExpandedNodeID) IsNull() bool {
	return e.NamespaceURI == "" && e.ServerIndex == 0 && e.NodeID.IsNull()
}

// String returns the text form of OPC 10000-6 §5.3.1.11:
// "svr=<index>;nsu=<uri>;<type>=<id>" or "svr=<index>;ns=<index>;...",
// where "svr=0;" is left out, the namespace index is left out when a URI
// is given, and ';' and '%' in the URI are written %3B and %25.
func (e ExpandedNodeID) String() string {
	var b []byte
	if e.ServerIndex != 0 {
		b = append(b, "svr="...)
		b = strconv.AppendUint(b, uint64(e.ServerIndex), 10)
		b = append(b, ';')
	}
	if e.NamespaceURI == "" {
		return string(e.NodeID.appendText(b))
	}
	b = append(b, "nsu="...)
	for i := 0; i < len(e.NamespaceURI); i++ {
		switch c := e.NamespaceURI[i]; c {
		case ';':
			b = append(b, "%3B"...)
		case '%':
			b = append(b, "%25"...)
		default:
			b = append(b, c)
		}
	}
	b = append(b, ';')
	return string(e.NodeID.appendID(b))
}

// ParseExpandedNodeID parses the text form that ExpandedNodeID.String
// returns: optional "svr=<index>;", then optional "nsu=<uri>;" (with %XX
// escapes) or "ns=<index>;", then the identifier as in ParseNodeID. Errors
// are *ParseError.
func ParseExpandedNodeID(s string) (ExpandedNodeID, error) {
	e, err := parseExpandedNodeID(s)
	if err != nil {
		return ExpandedNodeID{}, &ParseError{Kind: "ExpandedNodeId", Input: s, Err: err}
	}
	return e, nil
}

func parseExpandedNodeID(s string) (ExpandedNodeID, error) {
	var e ExpandedNodeID
	rest := s
	if v, r, ok := cutClause(rest, "svr="); ok {
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return e, fmt.Errorf("server index %q: want a number from 0 to 4294967295", v)
		}
		e.ServerIndex, rest = uint32(n), r
	}
	if v, r, ok := cutClause(rest, "nsu="); ok {
		if r == "" && v == "" {
			return e, errors.New(`missing ';' after "nsu="`)
		}
		uri, err := unescapeURI(v)
		if err != nil {
			return e, err
		}
		id, err := parseIdentifier(0, r)
		if err != nil {
			return e, err
		}
		e.NodeID, e.NamespaceURI = id, uri
		return e, nil
	}
	id, err := parseNodeID(rest)
	if err != nil {
		return e, err
	}
	e.NodeID = id
	return e, nil
}

func unescapeURI(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("namespace URI %q: '%%' not followed by two hexadecimal digits", s)
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("namespace URI %q: '%%' not followed by two hexadecimal digits", s)
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), nil
}
