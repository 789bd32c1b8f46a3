package ua

import "github.com/edged/edged/opcua/ua/status"

// Service messages. A request or response travels as the NodeId of its
// DefaultBinary DataTypeEncoding followed by the structure's encoding
// (OPC 10000-6 §5.2.9, "Messages"): an ExtensionObject without its
// encoding byte and length. The type id is a NodeId, not an
// ExpandedNodeId, so a namespace URI or server index flag in its encoding
// byte is status.BadDecodingError.
//
// A message fills the rest of its input: the caller hands the decoder the
// message body alone (the chunks of a secure channel message reassembled,
// without headers, padding or signature), and bytes left after the
// structure are status.BadDecodingError.

// A Request is a service request: every generated structure whose first
// field is its RequestHeader.
type Request interface {
	Body
	Header() *RequestHeader
}

// A Response is a service response (ServiceFault included): every
// generated structure whose first field is its ResponseHeader.
type Response interface {
	Body
	Header() *ResponseHeader
}

var (
	_ Request  = (*ReadRequest)(nil)
	_ Response = (*ServiceFault)(nil)
)

// AppendMessage appends m as a service message: the NodeId
// m.BinaryEncodingID() in its smallest form, then m's encoding.
func AppendMessage(b []byte, m Body) []byte {
	id := m.BinaryEncodingID()
	b = id.Encode(b)
	return m.Encode(b)
}

// DecodeMessage reads a service message: its type NodeId, then a body of
// the type registered for that id (see RegisterBody and NewBody), freshly
// allocated. The whole input must be consumed.
//
// A type id that is not registered is a *MessageTypeError with code
// status.BadDataTypeIDUnknown ("the data type id is not recognized"),
// which errors.Is and errors.As find. That code, rather than
// status.BadDecodingError, keeps a well-formed message of an unknown type
// apart from a malformed one: a server answers the first with a
// ServiceFault of status.BadServiceUnsupported and the second with
// status.BadDecodingError. Any other failure is the StatusCode
// that d records (status.BadDecodingError, status.BadEncodingLimitsExceeded).
// Either way d keeps the StatusCode as its sticky error and the returned
// Body is nil.
func DecodeMessage(d *Decoder) (Body, error) {
	if d.err != nil {
		return nil, d.err
	}
	var typeID NodeID
	typeID.Decode(d)
	if d.err != nil {
		return nil, d.err
	}
	m, ok := NewBody(typeID)
	if !ok {
		d.Fail(status.BadDataTypeIDUnknown)
		return nil, &MessageTypeError{TypeID: typeID, Code: status.BadDataTypeIDUnknown}
	}
	m.Decode(d)
	if err := d.endMessage(); err != nil {
		return nil, err
	}
	return m, nil
}

// DecodeMessageInto reads a service message of m's type into m, reusing
// m's slices and strings as its Decode method does: decoding a request
// into the value the previous one was decoded into does not allocate when
// their strings are equal and their arrays no longer (the server's path).
// The whole input must be consumed.
//
// A type id other than m.BinaryEncodingID() is a *MessageTypeError with
// code status.BadDataTypeIDUnknown and m is left untouched; a client that
// expects a response and gets a ServiceFault finds its id in the error's
// TypeID and decodes the input again with DecodeMessage. Other failures
// are the StatusCode that d records, and m is then partly overwritten.
func DecodeMessageInto(d *Decoder, m Body) error {
	if d.err != nil {
		return d.err
	}
	var typeID NodeID
	typeID.Decode(d)
	if d.err != nil {
		return d.err
	}
	if want := m.BinaryEncodingID(); typeID != want {
		d.Fail(status.BadDataTypeIDUnknown)
		return &MessageTypeError{TypeID: typeID, Want: want, Code: status.BadDataTypeIDUnknown}
	}
	return DecodeBodyInto(d, m)
}

// DecodeBodyInto is DecodeMessageInto after the type id: the caller has
// read it from d and found it to be m.BinaryEncodingID() (a server that
// chose m by it), so it is not decoded twice.
func DecodeBodyInto(d *Decoder, m Body) error {
	m.Decode(d)
	return d.endMessage()
}

// endMessage checks that a message body consumed the whole input and
// returns d's error.
func (d *Decoder) endMessage() error {
	if d.err == nil && d.off != len(d.buf) {
		d.Fail(status.BadDecodingError)
	}
	return d.err
}

// MessageTypeError reports a message whose type NodeId cannot be decoded:
// not registered (DecodeMessage) or not the one expected
// (DecodeMessageInto). It unwraps to Code.
type MessageTypeError struct {
	TypeID NodeID     // the type NodeId read from the message
	Want   NodeID     // the type DecodeMessageInto expected; null for DecodeMessage
	Code   StatusCode // status.BadDataTypeIDUnknown
}

func (e *MessageTypeError) Error() string {
	if e.Want.IsNull() {
		return "ua: message of unknown type " + e.TypeID.String() + ": " + e.Code.Error()
	}
	return "ua: message of type " + e.TypeID.String() + ", want " + e.Want.String() + ": " + e.Code.Error()
}

// Unwrap returns e.Code.
func (e *MessageTypeError) Unwrap() error { return e.Code }
