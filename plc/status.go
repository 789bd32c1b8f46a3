package plc

import (
	"context"
	"errors"
	"fmt"
)

// Status is an OPC UA status code (OPC 10000-4 §7.39, numbers from
// StatusCode.csv). The image holds it as the OPC UA Read returns it, so a
// binding converts it with a plain type conversion.
//
// Status implements error, so a driver returns a Status (or wraps one
// with %w) and the engine recovers it with errors.As; Good is not meant to
// be returned as an error.
type Status uint32

// Status codes used by the scan engine and its drivers.
const (
	Good                                    Status = 0x00000000
	GoodLocalOverride                       Status = 0x00960000
	UncertainLastUsableValue                Status = 0x40900000
	UncertainSubstituteValue                Status = 0x40910000
	UncertainInitialValue                   Status = 0x40920000
	UncertainSensorNotAccurate              Status = 0x40930000
	UncertainNoCommunicationLastUsableValue Status = 0x408F0000

	BadUnexpectedError       Status = 0x80010000
	BadInternalError         Status = 0x80020000
	BadResourceUnavailable   Status = 0x80040000
	BadCommunicationError    Status = 0x80050000
	BadTimeout               Status = 0x800A0000
	BadShutdown              Status = 0x800C0000
	BadTooManyOperations     Status = 0x80100000
	BadNoCommunication       Status = 0x80310000
	BadWaitingForInitialData Status = 0x80320000
	BadNodeIDUnknown         Status = 0x80340000
	BadNotReadable           Status = 0x803A0000
	BadNotWritable           Status = 0x803B0000
	BadOutOfRange            Status = 0x803C0000
	BadNotSupported          Status = 0x803D0000
	BadNotFound              Status = 0x803E0000
	BadTypeMismatch          Status = 0x80740000
	BadRequestTimeout        Status = 0x80850000
	BadConfigurationError    Status = 0x80890000
	BadNotConnected          Status = 0x808A0000
	BadDeviceFailure         Status = 0x808B0000
	BadSensorFailure         Status = 0x808C0000
	BadOutOfService          Status = 0x808D0000
	BadInvalidArgument       Status = 0x80AB0000
	BadConnectionRejected    Status = 0x80AC0000
	BadConnectionClosed      Status = 0x80AE0000
)

var statusNames = map[Status]string{
	Good:                                    "Good",
	GoodLocalOverride:                       "GoodLocalOverride",
	UncertainLastUsableValue:                "UncertainLastUsableValue",
	UncertainSubstituteValue:                "UncertainSubstituteValue",
	UncertainInitialValue:                   "UncertainInitialValue",
	UncertainSensorNotAccurate:              "UncertainSensorNotAccurate",
	UncertainNoCommunicationLastUsableValue: "UncertainNoCommunicationLastUsableValue",
	BadUnexpectedError:                      "BadUnexpectedError",
	BadInternalError:                        "BadInternalError",
	BadResourceUnavailable:                  "BadResourceUnavailable",
	BadCommunicationError:                   "BadCommunicationError",
	BadTimeout:                              "BadTimeout",
	BadShutdown:                             "BadShutdown",
	BadTooManyOperations:                    "BadTooManyOperations",
	BadNoCommunication:                      "BadNoCommunication",
	BadWaitingForInitialData:                "BadWaitingForInitialData",
	BadNodeIDUnknown:                        "BadNodeIdUnknown",
	BadNotReadable:                          "BadNotReadable",
	BadNotWritable:                          "BadNotWritable",
	BadOutOfRange:                           "BadOutOfRange",
	BadNotSupported:                         "BadNotSupported",
	BadNotFound:                             "BadNotFound",
	BadTypeMismatch:                         "BadTypeMismatch",
	BadRequestTimeout:                       "BadRequestTimeout",
	BadConfigurationError:                   "BadConfigurationError",
	BadNotConnected:                         "BadNotConnected",
	BadDeviceFailure:                        "BadDeviceFailure",
	BadSensorFailure:                        "BadSensorFailure",
	BadOutOfService:                         "BadOutOfService",
	BadInvalidArgument:                      "BadInvalidArgument",
	BadConnectionRejected:                   "BadConnectionRejected",
	BadConnectionClosed:                     "BadConnectionClosed",
}

// IsGood reports whether the severity is Good.
func (s Status) IsGood() bool { return s&0xC0000000 == 0 }

// IsUncertain reports whether the severity is Uncertain.
func (s Status) IsUncertain() bool { return s&0xC0000000 == 0x40000000 }

// IsBad reports whether the severity is Bad.
func (s Status) IsBad() bool { return s&0x80000000 != 0 }

// Code is s without its info bits (the low 16 bits).
func (s Status) Code() Status { return s & 0xFFFF0000 }

// String returns the symbolic name, or the number in hex for a code this
// package does not name.
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	if n, ok := statusNames[s.Code()]; ok {
		return fmt.Sprintf("%s(0x%08X)", n, uint32(s))
	}
	return fmt.Sprintf("0x%08X", uint32(s))
}

// Error returns String.
func (s Status) Error() string { return s.String() }

// IsCommunication reports whether s says that the data source did not
// answer (as opposed to answering with an error): BadTimeout,
// BadRequestTimeout, BadCommunicationError, BadNoCommunication,
// BadNotConnected, BadConnectionRejected, BadConnectionClosed. A tag whose
// read fails with such a status keeps its last value as
// UncertainLastUsableValue; see Engine.
func (s Status) IsCommunication() bool {
	switch s.Code() {
	case BadTimeout, BadRequestTimeout, BadCommunicationError, BadNoCommunication,
		BadNotConnected, BadConnectionRejected, BadConnectionClosed:
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
		return Good
	}
	var s Status
	if errors.As(err, &s) {
		return s
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return BadTimeout
	case errors.Is(err, context.Canceled):
		return BadShutdown
	}
	return BadCommunicationError
}
