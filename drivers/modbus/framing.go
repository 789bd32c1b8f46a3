package modbus

import (
	"encoding/binary"
	"fmt"

	gb "github.com/goburrow/modbus"
)

// tcpFraming is the Packager of a TCP Client: goburrow's MBAP framing
// (the same ADU as its TCP packager's Encode, its Verify), but Encode and
// Decode reuse the Client's buffers, where goburrow's allocate an ADU
// and a PDU for every transaction (half of what a read allocated, and
// with many polled tags work for the collector). A Client runs
// one transaction at a time (its link's lock), and copies the result
// before the next; goburrow's client does not keep either.
type tcpFraming struct {
	gb   *gb.TCPClientHandler // Verify; its SlaveId is the unit id
	tid  uint16
	adu  [tcpMaxADU]byte
	resp gb.ProtocolDataUnit
}

func (f *tcpFraming) Encode(pdu *gb.ProtocolDataUnit) ([]byte, error) {
	n := tcpHeader + 1 + len(pdu.Data)
	if n > len(f.adu) {
		return nil, fmt.Errorf("%w: request PDU of %d bytes", ErrFrame, 1+len(pdu.Data))
	}
	f.tid++
	b := f.adu[:n]
	binary.BigEndian.PutUint16(b, f.tid)
	binary.BigEndian.PutUint16(b[2:], 0) // protocol: Modbus
	binary.BigEndian.PutUint16(b[4:], uint16(2+len(pdu.Data)))
	b[6] = f.gb.SlaveId
	b[tcpHeader] = pdu.FunctionCode
	copy(b[tcpHeader+1:], pdu.Data)
	return b, nil
}

func (f *tcpFraming) Verify(req, resp []byte) error { return f.gb.Verify(req, resp) }

func (f *tcpFraming) Decode(adu []byte) (*gb.ProtocolDataUnit, error) {
	// The length counts the unit id and the PDU.
	if len(adu) < tcpHeader+1 || int(binary.BigEndian.Uint16(adu[4:])) != len(adu)-tcpHeader+1 {
		return nil, fmt.Errorf("%w: a response of %d bytes with another MBAP length", ErrFrame, len(adu))
	}
	f.resp = gb.ProtocolDataUnit{FunctionCode: adu[tcpHeader], Data: adu[tcpHeader+1:]}
	return &f.resp, nil
}
