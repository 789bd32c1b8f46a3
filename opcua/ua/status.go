package ua

import "github.com/edged/edged/opcua/ua/status"

// StatusCode is the built-in type StatusCode (OPC 10000-6 §5.2.2.11): a
// status.Code, whose constants (status.Good, status.BadTimeout, ...) name
// the codes.
type StatusCode = status.Code
