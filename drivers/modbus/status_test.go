package modbus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	gb "github.com/goburrow/modbus"
)

func TestExceptionStatus(t *testing.T) {
	want := map[byte]StatusCode{
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
	for err, st := range map[error]StatusCode{
		nil:        StatusGood,
		ErrTimeout: StatusBadTimeout,
		fmt.Errorf("x: %w", os.ErrDeadlineExceeded): StatusBadTimeout,
		context.DeadlineExceeded:                    StatusBadTimeout,
		context.Canceled:                            StatusBadShutdown,
		ErrDown:                                     StatusBadNoCommunication,
		ErrFrame:                                    StatusBadCommunicationError,
		errors.New("modbus: response crc '1' does not match expected '2'"): StatusBadCommunicationError,
		StatusBadOutOfRange: StatusBadOutOfRange,
	} {
		if got := StatusOf(err); got != st {
			t.Errorf("StatusOf(%v) = %v, want %v", err, got, st)
		}
	}
	if StatusBadTimeout.String() != "BadTimeout" || StatusCode(0x80AB0000).String() != "0x80AB0000" {
		t.Error("String")
	}
}

// The constants agree with the OPC UA schema's StatusCode.csv (in the
// shared checkout next to the repository).
func TestStatusCodesMatchSchema(t *testing.T) {
	b, err := os.ReadFile("../../../shared/opcua-schema/StatusCode.csv")
	if err != nil {
		t.Skipf("StatusCode.csv not available: %v", err)
	}
	schema := map[string]uint32{}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ",", 3)
		if len(f) < 2 {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 32)
		if err == nil {
			schema[f[0]] = uint32(v)
		}
	}
	for code, name := range statusNames {
		v, ok := schema[name]
		if !ok || v != uint32(code) {
			t.Errorf("%s = 0x%08X here, 0x%08X (%v) in StatusCode.csv", name, uint32(code), v, ok)
		}
	}
}
