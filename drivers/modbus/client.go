package modbus

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	gb "github.com/goburrow/modbus"
)

// link is a transport shared by the devices (unit ids) on one TCP
// connection or one serial bus. The Client holds link.lock() around a
// transaction; send runs with the lock held.
type link interface {
	acquire(ctx context.Context) error
	release()
	// send performs one transaction: it writes adu and returns the response
	// ADU, valid until the next send. It honours ctx's deadline.
	send(ctx context.Context, adu []byte) ([]byte, error)
	// fail is told that the transaction failed after send returned
	// (verification, CRC or decoding failure, exception or not) so it can
	// resynchronise.
	fail(err error)
	stats() *Stats
}

// sem is a lock whose waiters queue in order and can give up when their
// context ends. (A channel, unlike sync.Mutex, is also what testing/synctest
// treats as durably blocking.)
type sem chan struct{}

func newSem() sem { return make(sem, 1) }

func (s sem) acquire(ctx context.Context) error {
	select {
	case s <- struct{}{}:
		return nil
	default:
	}
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s sem) release() { <-s }

// boundTransporter adapts a link to goburrow's context-free Transporter:
// the Client sets ctx under the link's lock before each call.
type boundTransporter struct {
	ctx context.Context
	l   link
}

func (b *boundTransporter) Send(adu []byte) ([]byte, error) { return b.l.send(b.ctx, adu) }

// Client talks to one device (one unit id) over a link, using goburrow's
// framing (its RTU packager; for TCP tcpFraming) through modbus.NewClient2 with this
// package's transports. Every call takes a context whose deadline bounds
// the transaction. A Client is safe for concurrent use; transactions of all
// Clients of one link run one after another, in the order they asked (a
// channel semaphore: its waiters queue in order); a call whose context ends
// while it waits gives up without touching the link.
type Client struct {
	unit  uint8
	l     link
	bt    boundTransporter
	mb    gb.Client
	p     gb.Packager
	req   gb.ProtocolDataUnit // a read's request, reused under the link's lock
	reqD  [4]byte             // its data: address and count
	Stats Stats               // this device's counters; link state and reconnects are the link's
}

// Reconnect closes the link's connection (TCP) or port (RTU), shared by
// every Client of the link, so that the next request opens it again at
// once; see TCP.Reconnect.
func (c *Client) Reconnect(ctx context.Context) error {
	if r, ok := c.l.(interface{ Reconnect(context.Context) error }); ok {
		return r.Reconnect(ctx)
	}
	return nil
}

func newClient(l link, unit uint8, p gb.Packager) *Client {
	c := &Client{unit: unit, l: l, p: p}
	c.bt.l = l
	c.mb = gb.NewClient2(p, &c.bt)
	return c
}

// Unit returns the client's unit id.
func (c *Client) Unit() uint8 { return c.unit }

// Snapshot returns the device's counters with the link's state and
// reconnect count.
func (c *Client) Snapshot() StatsSnapshot {
	s := c.Stats.Snapshot()
	ls := c.l.stats().Snapshot()
	s.State = ls.State
	s.Reconnects = ls.Reconnects
	return s
}

// do runs one goburrow call with the link locked and ctx bound, copies the
// result into dst and records statistics.
func (c *Client) do(ctx context.Context, op func() ([]byte, error), dst []byte, opName func() string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		err = wrapErr(opName(), err)
		c.Stats.record(err, 0)
		return dst[:0], err
	}
	if err := c.l.acquire(ctx); err != nil {
		err = wrapErr(opName(), err)
		c.Stats.record(err, 0)
		return dst[:0], err
	}
	c.bt.ctx = ctx
	t0 := time.Now()
	res, err := op()
	rtt := time.Since(t0)
	if err != nil {
		c.l.fail(err)
	} else {
		dst = append(dst[:0], res...)
	}
	c.bt.ctx = nil
	c.l.release()
	if err != nil {
		err = wrapErr(opName(), err)
		c.l.stats().record(err, rtt)
		c.Stats.record(err, rtt)
		return dst[:0], err
	}
	c.l.stats().record(nil, rtt)
	c.Stats.record(nil, rtt)
	return dst, nil
}

// Read reads count registers (register areas; 2 bytes each, as on the wire)
// or bits (bit areas; packed least significant bit first) of area from
// address, appending the response data to dst[:0].
func (c *Client) Read(ctx context.Context, area Area, address, count uint16, dst []byte) ([]byte, error) {
	name := func() string { return fmt.Sprintf("read %v %d+%d unit %d", area, address, count, c.unit) }
	if area.IsBit() && (count < 1 || count > MaxBits) || !area.IsBit() && (count < 1 || count > MaxRegisters) {
		return dst[:0], &Error{Op: name(), Status: status.BadOutOfRange, Err: fmt.Errorf("count %d out of range", count)}
	}
	if int(address)+int(count) > 65536 {
		return dst[:0], &Error{Op: name(), Status: status.BadOutOfRange, Err: errors.New("range runs past address 65535")}
	}
	var fc byte
	switch area {
	case Coils:
		fc = gb.FuncCodeReadCoils
	case DiscreteInputs:
		fc = gb.FuncCodeReadDiscreteInputs
	case InputRegisters:
		fc = gb.FuncCodeReadInputRegisters
	case HoldingRegisters:
		fc = gb.FuncCodeReadHoldingRegisters
	default:
		return dst[:0], &Error{Op: name(), Status: status.BadConfigurationError, Err: fmt.Errorf("invalid area %d", area)}
	}
	out, err := c.do(ctx, func() ([]byte, error) { return c.read(fc, address, count) }, dst, name)
	if err == nil {
		want := 2 * int(count)
		if area.IsBit() {
			want = (int(count) + 7) / 8
		}
		if len(out) != want {
			err = &Error{Op: name(), Status: status.BadCommunicationError, Err: fmt.Errorf("%w: %d data bytes, want %d", ErrFrame, len(out), want)}
			return dst[:0], err
		}
	}
	return out, err
}

// read is goburrow's client's read of function code fc (1 to 4), with
// its checks and errors, but with a request PDU that the Client reuses:
// goburrow's makes one and its data for every transaction, which with
// thousands of polled tags was most of what an idle edged allocated. It
// runs under the link's lock (do).
func (c *Client) read(fc byte, address, count uint16) ([]byte, error) {
	binary.BigEndian.PutUint16(c.reqD[:], address)
	binary.BigEndian.PutUint16(c.reqD[2:], count)
	c.req = gb.ProtocolDataUnit{FunctionCode: fc, Data: c.reqD[:]}
	req, err := c.p.Encode(&c.req)
	if err != nil {
		return nil, err
	}
	adu, err := c.bt.Send(req)
	if err != nil {
		return nil, err
	}
	if err := c.p.Verify(req, adu); err != nil {
		return nil, err
	}
	resp, err := c.p.Decode(adu)
	if err != nil {
		return nil, err
	}
	if resp.FunctionCode != fc {
		e := &gb.ModbusError{FunctionCode: resp.FunctionCode}
		if len(resp.Data) > 0 {
			e.ExceptionCode = resp.Data[0]
		}
		return nil, e
	}
	if len(resp.Data) == 0 {
		return nil, errors.New("modbus: response data is empty")
	}
	if n := int(resp.Data[0]); n != len(resp.Data)-1 {
		return nil, fmt.Errorf("modbus: response data size '%v' does not match count '%v'", len(resp.Data)-1, n)
	}
	return resp.Data[1:], nil
}

// ReadBlock reads one block of a plan.
func (c *Client) ReadBlock(ctx context.Context, b *Block, dst []byte) ([]byte, error) {
	return c.Read(ctx, b.Area, b.Start, b.Count, dst)
}

// WriteRegisters writes registers (2 bytes each, as on the wire) to holding
// registers from address: function code 6 for one register, 16 for more.
func (c *Client) WriteRegisters(ctx context.Context, address uint16, regs []byte) error {
	n := len(regs) / 2
	name := func() string { return fmt.Sprintf("write holding registers %d+%d unit %d", address, n, c.unit) }
	if len(regs)%2 != 0 || n < 1 || n > 123 || int(address)+n > 65536 {
		return &Error{Op: name(), Status: status.BadOutOfRange, Err: fmt.Errorf("%d bytes: want 1..123 whole registers within the address space", len(regs))}
	}
	var op func() ([]byte, error)
	if n == 1 {
		v := uint16(regs[0])<<8 | uint16(regs[1])
		op = func() ([]byte, error) { return c.mb.WriteSingleRegister(address, v) }
	} else {
		op = func() ([]byte, error) { return c.mb.WriteMultipleRegisters(address, uint16(n), regs) }
	}
	_, err := c.do(ctx, op, nil, name)
	return err
}

// WriteCoils writes n coils from address, packed least significant bit
// first in bits: function code 5 for one coil, 15 for more.
func (c *Client) WriteCoils(ctx context.Context, address uint16, n uint16, bits []byte) error {
	name := func() string { return fmt.Sprintf("write coils %d+%d unit %d", address, n, c.unit) }
	if n < 1 || n > 1968 || len(bits) < (int(n)+7)/8 || int(address)+int(n) > 65536 {
		return &Error{Op: name(), Status: status.BadOutOfRange, Err: fmt.Errorf("%d coils in %d bytes: want 1..1968 within the address space", n, len(bits))}
	}
	var op func() ([]byte, error)
	if n == 1 {
		var v uint16
		if bits[0]&1 != 0 {
			v = 0xFF00
		}
		op = func() ([]byte, error) { return c.mb.WriteSingleCoil(address, v) }
	} else {
		op = func() ([]byte, error) { return c.mb.WriteMultipleCoils(address, n, bits[:(n+7)/8]) }
	}
	_, err := c.do(ctx, op, nil, name)
	return err
}

// WritePoint encodes v for p (see Point.EncodeRegisters: range checks,
// scaling reversed) and writes it. def is the device's default order. A Bit
// point is a read-modify-write of its register (not atomic on the device).
func (c *Client) WritePoint(ctx context.Context, p *Point, v Value, def Order) error {
	if err := p.Validate(); err != nil {
		return &Error{Op: "write point", Status: status.BadConfigurationError, Err: err}
	}
	switch p.Area {
	case Coils:
		if v.typ == String || v.typ == 0 {
			return &Error{Op: "write coil", Status: status.BadTypeMismatch, Err: fmt.Errorf("value of type %v for a coil", v.typ)}
		}
		var b [1]byte
		if v.Bool() {
			b[0] = 1
		}
		return c.WriteCoils(ctx, p.Address, 1, b[:])
	case HoldingRegisters:
	default:
		return &Error{Op: "write point", Status: status.BadNotSupported, Err: fmt.Errorf("%v are read-only", p.Area)}
	}
	var cur uint16
	if p.Type == Bit {
		var buf [2]byte
		r, err := c.Read(ctx, HoldingRegisters, p.Address, 1, buf[:0])
		if err != nil {
			return err
		}
		cur = uint16(r[0])<<8 | uint16(r[1])
		// Read returns the register as on the wire; Bit applies the order,
		// so hand EncodeRegisters the value in the point's order.
		if p.Order.resolve(def).byteSwap() {
			cur = cur<<8 | cur>>8
		}
	}
	var buf [2 * MaxRegisters]byte
	regs, err := p.EncodeRegisters(buf[:0], v, def, cur)
	if err != nil {
		return &Error{Op: fmt.Sprintf("write %v at %d unit %d", p.Type, p.Address, c.unit), Status: StatusOf(err), Err: err}
	}
	return c.WriteRegisters(ctx, p.Address, regs)
}

func asError(err error, e **Error) bool { return errors.As(err, e) }
