package modbus

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	gb "github.com/goburrow/modbus"
)

// tcpFraming makes the ADUs goburrow's TCP packager makes, transaction
// after transaction, decodes what it decodes, and allocates nothing; nor
// does a Read through it (Client.read reuses its request).
func TestTCPFraming(t *testing.T) {
	ours := &tcpFraming{gb: gb.NewTCPClientHandler("")}
	ours.gb.SlaveId = 7
	theirs := gb.NewTCPClientHandler("")
	theirs.SlaveId = 7
	for i, pdu := range []gb.ProtocolDataUnit{
		{FunctionCode: 3, Data: []byte{0, 10, 0, 2}},
		{FunctionCode: 16, Data: []byte{0, 1, 0, 1, 2, 0xab, 0xcd}},
		{FunctionCode: 1, Data: []byte{0, 0, 0, 8}},
	} {
		a, err := ours.Encode(&pdu)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := theirs.Encode(&pdu)
		if !bytes.Equal(a, b) {
			t.Errorf("request %d: % x, goburrow % x", i, a, b)
		}
		resp := append([]byte(nil), b...)
		if err := ours.Verify(a, resp); err != nil {
			t.Errorf("request %d: Verify: %v", i, err)
		}
		got, err := ours.Decode(resp)
		want, _ := theirs.Decode(resp)
		if err != nil || got.FunctionCode != want.FunctionCode || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("request %d: Decode %+v %v, goburrow %+v", i, got, err, want)
		}
	}
	for _, bad := range [][]byte{{0, 1, 0, 0, 0, 9, 7, 3}, {0, 1, 0, 0, 0, 1}, {0, 1, 0, 0, 0, 3, 7, 3}} {
		if _, err := ours.Decode(bad); !errors.Is(err, ErrFrame) {
			t.Errorf("Decode(% x): %v", bad, err)
		}
	}
	if _, err := ours.Encode(&gb.ProtocolDataUnit{FunctionCode: 16, Data: make([]byte, 253)}); !errors.Is(err, ErrFrame) {
		t.Errorf("a PDU of 254 bytes: %v", err)
	}
	pdu := gb.ProtocolDataUnit{FunctionCode: 3, Data: []byte{0, 10, 0, 2}}
	resp := []byte{0, 0, 0, 0, 0, 7, 7, 3, 4, 1, 2, 3, 4}
	if a := testing.AllocsPerRun(100, func() {
		ours.Encode(&pdu)
		ours.Decode(resp)
	}); a != 0 {
		t.Errorf("Encode and Decode: %v allocations", a)
	}

	read := loopbackRead(t)
	read()
	if a := testing.AllocsPerRun(100, read); a != 0 {
		t.Errorf("a Read: %v allocations", a)
	}
}

// Client.read checks a response as goburrow's client does: an exception
// is a ModbusError, a byte count that is not the data's or an empty
// response is an error, a good one is its data.
func TestClientReadChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		resp []byte // after the MBAP header's transaction id
		exc  byte   // the exception expected; 0: none
		ok   bool
	}{
		{"good", []byte{0, 0, 0, 7, 1, 3, 4, 1, 2, 3, 4}, 0, true},
		{"exception", []byte{0, 0, 0, 3, 1, 0x83, 2}, 2, false},
		{"count", []byte{0, 0, 0, 7, 1, 3, 6, 1, 2, 3, 4}, 0, false},
		{"empty", []byte{0, 0, 0, 2, 1, 3}, 0, false},
		// goburrow's reading: another function code is an exception, its
		// first data byte the code.
		{"function", []byte{0, 0, 0, 7, 1, 4, 4, 1, 2, 3, 4}, 4, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			link := pipeTCP(func(req []byte) []byte { return append(req[:2:2], tc.resp...) })
			defer link.Close()
			data, err := link.Client(1).Read(ctxT(t, time.Second), HoldingRegisters, 0, 2, nil)
			var e *Error
			switch {
			case tc.ok:
				if err != nil || !bytes.Equal(data, []byte{1, 2, 3, 4}) {
					t.Fatalf("% x, %v", data, err)
				}
			case err == nil:
				t.Fatalf("% x, no error", data)
			case !errors.As(err, &e) || e.Exception != tc.exc || e.Status == status.Good:
				t.Fatalf("%v (%#v), want exception %d and a bad status", err, e, tc.exc)
			}
		})
	}
}
