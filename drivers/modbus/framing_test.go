package modbus

import (
	"bytes"
	"errors"
	"testing"

	gb "github.com/goburrow/modbus"
)

// tcpFraming makes the ADUs goburrow's TCP packager makes, transaction
// after transaction, decodes what it decodes, and allocates nothing; a
// Read through it allocates only goburrow client's request.
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
	if a := testing.AllocsPerRun(100, read); a > 2 {
		t.Errorf("a Read: %v allocations, want goburrow's 2 (its request PDU and data)", a)
	}
}
