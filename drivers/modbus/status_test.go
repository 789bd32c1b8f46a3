package modbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/edged/edged/opcua/ua/status"
	gb "github.com/goburrow/modbus"
)

func TestExceptionStatus(t *testing.T) {
	want := map[byte]status.Code{
		1: 0x803D0000, 2: 0x80890000, 3: 0x803C0000, 4: 0x808B0000, 5: 0x80B20000, 6: 0x80040000,
		7: 0x803D0000, 8: 0x808B0000, 9: 0x80010000, 10: 0x80310000, 11: 0x800A0000, 0: 0x80010000, 12: 0x80010000,
	}
	for code, st := range want {
		if got := ExceptionStatus(code); got != st {
			t.Errorf("exception %d: %v, want %v", code, got, st)
		}
		err := wrapErr("read", &gb.ModbusError{FunctionCode: 0x83, ExceptionCode: code})
		var e *Error
		if !errors.As(err, &e) || e.Exception != code || e.Status != st || !errors.Is(err, st) || StatusOf(err) != st {
			t.Errorf("exception %d: %#v", code, err)
		}
	}
	for err, st := range map[error]status.Code{
		nil:        status.Good,
		ErrTimeout: status.BadTimeout,
		fmt.Errorf("x: %w", os.ErrDeadlineExceeded): status.BadTimeout,
		context.DeadlineExceeded:                    status.BadTimeout,
		context.Canceled:                            status.BadShutdown,
		ErrDown:                                     status.BadNoCommunication,
		ErrFrame:                                    status.BadCommunicationError,
		errors.New("modbus: response crc '1' does not match expected '2'"): status.BadCommunicationError,
		status.BadOutOfRange: status.BadOutOfRange,
	} {
		if got := StatusOf(err); got != st {
			t.Errorf("StatusOf(%v) = %v, want %v", err, got, st)
		}
	}
	if status.BadTimeout.String() != "BadTimeout" || status.Code(0x8FFF0000).String() != "0x8FFF0000" {
		t.Error("String")
	}
}
