package modbus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/edged/edged/opcua/ua/status"
	gb "github.com/goburrow/modbus"
)

// ExceptionStatus maps a Modbus exception code to an OPC UA status code.
//
//	code  Modbus exception                           OPC UA status                        why
//	1     Illegal Function                           BadNotSupported        0x803D0000    the device does not support the function
//	2     Illegal Data Address                       BadConfigurationError  0x80890000    the tag names an address the device does not have
//	3     Illegal Data Value                         BadOutOfRange          0x803C0000    quantity or written value not accepted
//	4     Server Device Failure                      BadDeviceFailure       0x808B0000    unrecoverable error in the device
//	5     Acknowledge (long operation under way)     BadWaitingForResponse  0x80B20000    accepted, result not available yet
//	6     Server Device Busy                         BadResourceUnavailable 0x80040000    device busy, retry later
//	7     Negative Acknowledge (legacy programming)  BadNotSupported        0x803D0000    the device cannot perform the function
//	8     Memory Parity Error                        BadDeviceFailure       0x808B0000    device memory fault
//	9     (not defined by the specification)         BadUnexpectedError     0x80010000
//	10    Gateway Path Unavailable                   BadNoCommunication     0x80310000    gateway has no path to the target
//	11    Gateway Target Device Failed to Respond    BadTimeout             0x800A0000    target behind the gateway timed out
//	other (not defined)                              BadUnexpectedError     0x80010000
//
// Errors that are not exceptions (see StatusOf):
//
//	response timeout, context deadline            BadTimeout             0x800A0000
//	CRC error, malformed/short frame, wrong
//	transaction/unit id, I/O error on a link       BadCommunicationError  0x80050000
//	device down: not connected, waiting for the
//	reconnect back-off, or the dial failed         BadNoCommunication     0x80310000
//	context cancelled (shutdown)                   BadShutdown            0x800C0000
//	value does not fit the type / area on write    BadOutOfRange          0x803C0000
//	Go value of the wrong kind on write            BadTypeMismatch        0x80740000
func ExceptionStatus(code byte) status.Code {
	switch code {
	case 1, 7:
		return status.BadNotSupported
	case 2:
		return status.BadConfigurationError
	case 3:
		return status.BadOutOfRange
	case 4, 8:
		return status.BadDeviceFailure
	case 5:
		return status.BadWaitingForResponse
	case 6:
		return status.BadResourceUnavailable
	case 10:
		return status.BadNoCommunication
	case 11:
		return status.BadTimeout
	}
	return status.BadUnexpectedError
}

// Error is the error type of every device call of this package. It carries
// the OPC UA status for the failure, the Modbus exception code when the
// device answered with one, and the cause.
type Error struct {
	Op        string      // what was attempted, e.g. "read holding registers 100+10 unit 1"
	Status    status.Code // the OPC UA status for the tags involved
	Exception byte        // the Modbus exception code, 0 when not an exception response
	Err       error       // the cause
}

func (e *Error) Error() string {
	if e.Op == "" {
		return fmt.Sprintf("modbus: %v (%v)", e.Err, e.Status)
	}
	return fmt.Sprintf("modbus: %s: %v (%v)", e.Op, e.Err, e.Status)
}

// Unwrap returns the cause and the status, so errors.Is works on both.
func (e *Error) Unwrap() []error { return []error{e.Err, e.Status} }

// Sentinel causes.
var (
	// ErrTimeout: no (complete) response within the deadline.
	ErrTimeout = errors.New("response timeout")
	// ErrDown: the link is down and the reconnect back-off has not expired.
	ErrDown = errors.New("device down, waiting to reconnect")
	// ErrClosed: the transport was closed.
	ErrClosed = errors.New("transport closed")
	// ErrFrame: a malformed, short or out-of-step response frame.
	ErrFrame = errors.New("malformed response frame")
)

// StatusOf returns the OPC UA status for err: status.Good for nil, the status
// an *Error or status.Code carries, and otherwise a classification of the
// cause (timeouts → BadTimeout, cancellation → BadShutdown, the rest
// → BadCommunicationError).
func StatusOf(err error) status.Code {
	if err == nil {
		return status.Good
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	var s status.Code
	if errors.As(err, &s) {
		return s
	}
	return classify(err)
}

// classify maps a cause that is not already an *Error to a status.
func classify(err error) status.Code {
	var mb *gb.ModbusError
	switch {
	case errors.As(err, &mb):
		return ExceptionStatus(mb.ExceptionCode)
	case errors.Is(err, ErrDown), errors.Is(err, ErrClosed):
		return status.BadNoCommunication
	case errors.Is(err, context.Canceled):
		return status.BadShutdown
	case errors.Is(err, ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		return status.BadTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return status.BadTimeout
	}
	return status.BadCommunicationError
}

// wrapErr builds the *Error for a failed device call.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	out := &Error{Op: op, Err: err, Status: classify(err)}
	var mb *gb.ModbusError
	if errors.As(err, &mb) {
		out.Exception = mb.ExceptionCode
	}
	return out
}
