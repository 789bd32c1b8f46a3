// Package ua holds the OPC UA data types and their binary encoding
// (OPC 10000-6, UA Binary): the 25 built-in types, the structured and
// enumerated DataTypes and service messages generated from the normative
// schema, and the NodeId, StatusCode and AttributeId constants.
//
// # Encoding
//
// Every type appends its encoding to a caller's buffer:
//
//	b = req.Encode(b[:0])
//
// Encoders never fail: a value that cannot be represented (a string longer
// than 2^31-1 bytes, say) is a programming error that the caller rules out.
//
// # Decoding
//
// A Decoder walks a byte slice and keeps the first error it meets (sticky,
// like bufio.Scanner); after it every read returns a zero value. Types decode
// into a caller's value, reusing the capacity of its slices:
//
//	d.Reset(body)
//	req.Decode(&d)
//	if err := d.Err(); err != nil { ... } // a StatusCode
//
// A decoder never trusts a length: string, byte string and array lengths are
// checked against the bytes that remain and against Limits before anything is
// allocated, and the nesting of Variant, DataValue, DiagnosticInfo and
// ExtensionObject is bounded. A violation is status.BadDecodingError or
// status.BadEncodingLimitsExceeded.
//
// # Aliasing
//
// By default decoded strings and byte strings are copies. Strings are reused
// without allocation when the value decoded into already holds the same text
// (a connection decoding the same request again allocates nothing). With
// Decoder.Alias set, strings and byte strings point into the input buffer
// instead: they are valid only until that buffer is reused, and a handler
// that keeps one beyond the request must copy it (strings.Clone,
// bytes.Clone).
package ua

//go:generate go run ../internal/uagen -schema ../../../shared/opcua-schema -out .
