package plc

import (
	"context"
	"errors"

	"github.com/edged/edged/opcua/ua/status"
)

// Status is the status of a tag's value and of a driver operation: an
// OPC UA status code, held in the image as the OPC UA Read returns it.
//
// A status.Code is an error, so a driver returns one (or wraps one with
// %w) and the engine recovers it with errors.As; status.Good is not meant
// to be returned as an error.
type Status = status.Code

// IsCommunication reports whether s says that the data source did not
// answer (as opposed to answering with an error): BadTimeout,
// BadRequestTimeout, BadCommunicationError, BadNoCommunication,
// BadNotConnected, BadConnectionRejected, BadConnectionClosed. A tag whose
// read fails with such a status keeps its last value as
// UncertainLastUsableValue; see Engine.
func IsCommunication(s Status) bool {
	switch s.Code() {
	case status.BadTimeout, status.BadRequestTimeout, status.BadCommunicationError, status.BadNoCommunication,
		status.BadNotConnected, status.BadConnectionRejected, status.BadConnectionClosed:
		return true
	}
	return false
}

// StatusOf maps an error from a driver to its Status: nil is Good; an
// error that is or wraps a Status is that Status; a context deadline is
// BadTimeout; a cancelled context is BadShutdown; anything else is
// BadCommunicationError.
func StatusOf(err error) Status {
	if err == nil {
		return status.Good
	}
	var s Status
	if errors.As(err, &s) {
		return s
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return status.BadTimeout
	case errors.Is(err, context.Canceled):
		return status.BadShutdown
	}
	return status.BadCommunicationError
}
