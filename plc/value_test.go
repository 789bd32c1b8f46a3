package plc_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
)

func TestValueConvert(t *testing.T) {
	tests := []struct {
		in   plc.Value
		to   plc.Type
		want plc.Value
		st   plc.Status
	}{
		{plc.Int16Value(-5), plc.Int32, plc.Int32Value(-5), status.Good},
		{plc.Int16Value(-5), plc.UInt16, plc.Value{}, status.BadOutOfRange},
		{plc.Int32Value(70000), plc.Int16, plc.Value{}, status.BadOutOfRange},
		{plc.Int32Value(-32768), plc.Int16, plc.Int16Value(-32768), status.Good},
		{plc.Int32Value(32768), plc.Int16, plc.Value{}, status.BadOutOfRange},
		{plc.UInt32Value(65535), plc.UInt16, plc.UInt16Value(65535), status.Good},
		{plc.UInt64Value(math.MaxUint64), plc.Int64, plc.Value{}, status.BadOutOfRange},
		{plc.Int64Value(math.MinInt64), plc.Int64, plc.Int64Value(math.MinInt64), status.Good},
		{plc.Int64Value(math.MinInt64), plc.Float64, plc.Float64Value(-(1 << 63)), status.Good},
		{plc.Float64Value(-(1 << 63)), plc.Int64, plc.Int64Value(math.MinInt64), status.Good},
		{plc.Float64Value(1 << 63), plc.Int64, plc.Value{}, status.BadOutOfRange},
		{plc.Float64Value(1 << 63), plc.UInt64, plc.UInt64Value(1 << 63), status.Good},
		{plc.Float64Value(2.5), plc.Int32, plc.Value{}, status.BadOutOfRange},
		{plc.Float64Value(3), plc.UInt16, plc.UInt16Value(3), status.Good},
		{plc.Float64Value(math.NaN()), plc.Int32, plc.Value{}, status.BadOutOfRange},
		{plc.Float64Value(1e300), plc.Float32, plc.Value{}, status.BadOutOfRange},
		{plc.Float64Value(1.5), plc.Float32, plc.Float32Value(1.5), status.Good},
		{plc.BoolValue(true), plc.UInt16, plc.UInt16Value(1), status.Good},
		{plc.UInt16Value(1), plc.Bool, plc.BoolValue(true), status.Good},
		{plc.UInt16Value(0), plc.Bool, plc.BoolValue(false), status.Good},
		{plc.UInt16Value(2), plc.Bool, plc.Value{}, status.BadOutOfRange},
		{plc.Int16Value(-1), plc.Bool, plc.Value{}, status.BadOutOfRange},
		{plc.StringValue("x"), plc.Int16, plc.Value{}, status.BadTypeMismatch},
		{plc.Int16Value(1), plc.String, plc.Value{}, status.BadTypeMismatch},
		{plc.StringValue("x"), plc.String, plc.StringValue("x"), status.Good},
		{plc.Value{}, plc.Int16, plc.Value{}, status.BadTypeMismatch},
	}
	for _, tt := range tests {
		got, st := tt.in.Convert(tt.to)
		if st != tt.st || !got.Equal(tt.want) {
			t.Errorf("%v(%v).Convert(%v) = %v(%v), %v; want %v(%v), %v", tt.in.Type(), tt.in, tt.to, got.Type(), got, st, tt.want.Type(), tt.want, tt.st)
		}
	}
}

func TestValueAccessors(t *testing.T) {
	if v := plc.Int16Value(-2); v.Int64() != -2 || v.Float64() != -2 || !v.Bool() || v.String() != "-2" {
		t.Errorf("Int16(-2): %d %g %v %q", v.Int64(), v.Float64(), v.Bool(), v.String())
	}
	if v := plc.UInt64Value(math.MaxUint64); v.Uint64() != math.MaxUint64 || v.Float64() != math.MaxUint64 {
		t.Errorf("UInt64 max: %d %g", v.Uint64(), v.Float64())
	}
	if v := plc.Float32Value(0.1); v.Float32() != 0.1 || v.String() != "0.1" {
		t.Errorf("Float32(0.1): %v %q", v.Float32(), v.String())
	}
	if v := plc.StringValue("abc"); v.Text() != "abc" || v.Int64() != 0 || v.String() != `"abc"` {
		t.Errorf("String: %q %d %q", v.Text(), v.Int64(), v.String())
	}
	for typ := plc.Bool; typ <= plc.String; typ++ {
		if got, ok := plc.ParseType(typ.String()); !ok || got != typ {
			t.Errorf("ParseType(%q) = %v, %v", typ.String(), got, ok)
		}
	}
	if got, ok := plc.ParseType("uint16"); !ok || got != plc.UInt16 {
		t.Errorf("ParseType(uint16) = %v, %v", got, ok)
	}
	if _, ok := plc.ParseType("Invalid"); ok {
		t.Error("ParseType(Invalid) ok")
	}
}

func TestStatus(t *testing.T) {
	// Numbers from ../shared/opcua-schema/StatusCode.csv.
	for st, want := range map[plc.Status]uint32{
		status.Good: 0, status.BadWaitingForInitialData: 0x80320000, status.UncertainLastUsableValue: 0x40900000,
		status.BadNoCommunication: 0x80310000, status.BadTimeout: 0x800A0000, status.BadCommunicationError: 0x80050000,
		status.BadNotWritable: 0x803B0000, status.BadTypeMismatch: 0x80740000, status.BadOutOfRange: 0x803C0000,
		status.BadDeviceFailure: 0x808B0000, status.BadShutdown: 0x800C0000, status.BadResourceUnavailable: 0x80040000,
	} {
		if uint32(st) != want {
			t.Errorf("%v = %#x, want %#x", st, uint32(st), want)
		}
	}
	if !status.UncertainLastUsableValue.IsUncertain() || !status.BadTimeout.IsBad() || !status.Good.IsGood() {
		t.Error("severity bits")
	}
	if s := plc.Status(0x80310001).String(); s != "BadNoCommunication(0x80310001)" {
		t.Errorf("String = %q", s)
	}
	wrapped := fmt.Errorf("modbus: %w", status.BadDeviceFailure)
	for _, tt := range []struct {
		err  error
		want plc.Status
	}{
		{nil, status.Good},
		{status.BadTimeout, status.BadTimeout},
		{wrapped, status.BadDeviceFailure},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), status.BadTimeout},
		{context.Canceled, status.BadShutdown},
		{errors.New("EOF"), status.BadCommunicationError},
	} {
		if got := plc.StatusOf(tt.err); got != tt.want {
			t.Errorf("StatusOf(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
	if !errors.Is(wrapped, status.BadDeviceFailure) {
		t.Error("errors.Is on a wrapped Status")
	}
}
