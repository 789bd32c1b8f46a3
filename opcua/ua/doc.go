// Package ua holds the OPC UA data types and their binary encoding
// (OPC 10000-6, UA Binary): the 25 built-in types, the structured and
// enumerated DataTypes and service messages generated from the normative
// schema, and the NodeId, StatusCode and AttributeId constants.
//
// How it works, and why, is in docs/codec.md.
package ua

//go:generate go run ../internal/uagen -schema ../../../shared/opcua-schema -out .
