// Package slave is a Modbus TCP server (slave) serving an in-memory bank of
// coils, discrete inputs, input registers and holding registers. It answers
// function codes 1, 2, 3, 4, 5, 6, 15 and 16, with exception 1 (illegal
// function) for any other, 2 (illegal data address) for a range outside the
// bank and 3 (illegal data value) for a bad quantity, byte count or coil
// value. Every unit id is served from the same bank.
//
// It is goroutine-safe: connections are served concurrently, each request
// under the bank's lock, and Update runs a function (a simulation tick)
// under the same lock, so a client never reads half an update.
//
// edged's built-in simulator runs it on loopback and polls it with
// drivers/modbus.
package slave

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"time"
)

// Bank is the memory the slave serves. Registers are uint16 values (the
// slave puts them on the wire big-endian, as Modbus requires).
type Bank struct {
	Coils            []bool
	DiscreteInputs   []bool
	InputRegisters   []uint16
	HoldingRegisters []uint16
}

// NewBank returns a bank with n entries in each area (n ≤ 65536).
func NewBank(n int) *Bank {
	return &Bank{
		Coils:            make([]bool, n),
		DiscreteInputs:   make([]bool, n),
		InputRegisters:   make([]uint16, n),
		HoldingRegisters: make([]uint16, n),
	}
}

// Write describes a write a client made, for Server.OnWrite.
type Write struct {
	Function byte   // 5, 6, 15 or 16
	Address  uint16 // first coil or register
	Count    uint16
}

// Server serves a Bank over Modbus TCP.
type Server struct {
	mu   sync.Mutex
	bank *Bank
	// OnWrite, if set before Serve, is called under the bank's lock after
	// each successful write, with the bank.
	OnWrite func(b *Bank, w Write)
	// OnRequest, if set before Serve, is called under the bank's lock
	// before each request is handled, with the bank: a simulation whose
	// state is a function of time brings the bank up to date there, and
	// needs no clock of its own.
	OnRequest func(b *Bank)

	lmu   sync.Mutex
	ls    map[net.Listener]struct{}
	conns map[net.Conn]struct{}
	mems  map[*memConn]struct{} // see Conn
	wg    sync.WaitGroup
	done  bool
}

// New returns a server for bank.
func New(bank *Bank) *Server {
	return &Server{bank: bank, ls: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}, mems: map[*memConn]struct{}{}}
}

// Update runs f with the bank locked: the hook for a simulation tick.
func (s *Server) Update(f func(b *Bank)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.bank)
}

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("slave: server closed")

// ListenAndServe listens on addr ("127.0.0.1:0" for a free port) and
// serves in the background; it returns the listener's address.
func (s *Server) ListenAndServe(addr string) (net.Addr, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	go s.Serve(l)
	return l.Addr(), nil
}

// Serve accepts connections on l until Close.
func (s *Server) Serve(l net.Listener) error {
	s.lmu.Lock()
	if s.done {
		s.lmu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.ls[l] = struct{}{}
	s.lmu.Unlock()
	var delay time.Duration
	for {
		c, err := l.Accept()
		if err != nil {
			s.lmu.Lock()
			done := s.done
			s.lmu.Unlock()
			if done {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = max(5*time.Millisecond, min(2*delay, time.Second))
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		s.lmu.Lock()
		if s.done {
			s.lmu.Unlock()
			c.Close()
			return ErrServerClosed
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.lmu.Unlock()
		go s.serveConn(c)
	}
}

// Close stops the listeners, closes the connections and waits for their
// goroutines.
func (s *Server) Close() error {
	s.lmu.Lock()
	s.done = true
	for l := range s.ls {
		l.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	for c := range s.mems {
		c.shut()
	}
	s.lmu.Unlock()
	s.wg.Wait()
	return nil
}

func (s *Server) serveConn(c net.Conn) {
	defer func() {
		c.Close()
		s.lmu.Lock()
		delete(s.conns, c)
		s.lmu.Unlock()
		s.wg.Done()
	}()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	// in holds what was read and not yet handled, from in[0]: a read
	// takes what has arrived, usually one whole request, and requests a
	// client pipelines are handled from it in turn.
	var in [2 * (7 + 253)]byte
	var resp [7 + 253]byte
	have := 0
	for {
		if have < 7 {
			n, err := io.ReadAtLeast(c, in[have:], 7-have)
			if err != nil {
				return
			}
			have += n
		}
		n := int(binary.BigEndian.Uint16(in[4:]))
		if binary.BigEndian.Uint16(in[2:]) != 0 || n < 2 || n > 254 {
			return // not Modbus: drop the connection
		}
		size := 6 + n
		if have < size {
			m, err := io.ReadAtLeast(c, in[have:], size-have)
			if err != nil {
				return
			}
			have += m
		}
		pdu := s.Handle(in[7:size], resp[7:7])
		copy(resp[:4], in[:4])
		binary.BigEndian.PutUint16(resp[4:], uint16(1+len(pdu)))
		resp[6] = in[6]
		have = copy(in[:], in[size:have])
		if _, err := c.Write(resp[:7+len(pdu)]); err != nil {
			return
		}
	}
}

func exception(dst []byte, fc, code byte) []byte { return append(dst, fc|0x80, code) }

// Handle executes one request PDU (function code and data) against the bank
// and appends the response PDU to dst. It is the whole protocol logic,
// independent of the TCP framing.
func (s *Server) Handle(pdu []byte, dst []byte) []byte {
	if len(pdu) < 1 {
		return exception(dst, 0, 1)
	}
	fc := pdu[0]
	d := pdu[1:]
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.bank
	if s.OnRequest != nil {
		s.OnRequest(b)
	}
	switch fc {
	case 1:
		return readBits(dst, fc, d, b.Coils)
	case 2:
		return readBits(dst, fc, d, b.DiscreteInputs)
	case 3:
		return readRegisters(dst, fc, d, b.HoldingRegisters)
	case 4:
		return readRegisters(dst, fc, d, b.InputRegisters)
	case 5, 15:
		return s.writeCoils(dst, pdu)
	case 6, 16:
		return s.writeRegisters(dst, pdu)
	}
	return exception(dst, fc, 1)
}

// readBits answers Read Coils (1) or Read Discrete Inputs (2) of bits.
func readBits(dst []byte, fc byte, d []byte, bits []bool) []byte {
	if len(d) != 4 {
		return exception(dst, fc, 3)
	}
	addr, qty := int(binary.BigEndian.Uint16(d)), int(binary.BigEndian.Uint16(d[2:]))
	if qty < 1 || qty > 2000 {
		return exception(dst, fc, 3)
	}
	if addr+qty > len(bits) {
		return exception(dst, fc, 2)
	}
	nb := (qty + 7) / 8
	dst = append(dst, fc, byte(nb))
	for i := 0; i < nb; i++ {
		var x byte
		for j := 0; j < 8 && 8*i+j < qty; j++ {
			if bits[addr+8*i+j] {
				x |= 1 << j
			}
		}
		dst = append(dst, x)
	}
	return dst
}

// readRegisters answers Read Holding Registers (3) or Read Input
// Registers (4) of regs.
func readRegisters(dst []byte, fc byte, d []byte, regs []uint16) []byte {
	if len(d) != 4 {
		return exception(dst, fc, 3)
	}
	addr, qty := int(binary.BigEndian.Uint16(d)), int(binary.BigEndian.Uint16(d[2:]))
	if qty < 1 || qty > 125 {
		return exception(dst, fc, 3)
	}
	if addr+qty > len(regs) {
		return exception(dst, fc, 2)
	}
	dst = append(dst, fc, byte(2*qty))
	for _, r := range regs[addr : addr+qty] {
		dst = append(dst, byte(r>>8), byte(r))
	}
	return dst
}

// writeCoils answers Write Single Coil (5) and Write Multiple Coils (15);
// mu is held.
func (s *Server) writeCoils(dst, pdu []byte) []byte {
	fc, d, b := pdu[0], pdu[1:], s.bank
	if fc == 5 {
		if len(d) != 4 {
			return exception(dst, fc, 3)
		}
		addr, v := int(binary.BigEndian.Uint16(d)), binary.BigEndian.Uint16(d[2:])
		if v != 0 && v != 0xFF00 {
			return exception(dst, fc, 3)
		}
		if addr >= len(b.Coils) {
			return exception(dst, fc, 2)
		}
		b.Coils[addr] = v == 0xFF00
		s.wrote(fc, addr, 1)
		return append(dst, pdu[:5]...)
	}
	if len(d) < 5 {
		return exception(dst, fc, 3)
	}
	addr, qty, nb := int(binary.BigEndian.Uint16(d)), int(binary.BigEndian.Uint16(d[2:])), int(d[4])
	if qty < 1 || qty > 1968 || nb != (qty+7)/8 || len(d) != 5+nb {
		return exception(dst, fc, 3)
	}
	if addr+qty > len(b.Coils) {
		return exception(dst, fc, 2)
	}
	for i := 0; i < qty; i++ {
		b.Coils[addr+i] = d[5+i/8]>>(i%8)&1 != 0
	}
	s.wrote(fc, addr, qty)
	return append(dst, pdu[:5]...)
}

// writeRegisters answers Write Single Register (6) and Write Multiple
// Registers (16); mu is held.
func (s *Server) writeRegisters(dst, pdu []byte) []byte {
	fc, d, b := pdu[0], pdu[1:], s.bank
	if fc == 6 {
		if len(d) != 4 {
			return exception(dst, fc, 3)
		}
		addr := int(binary.BigEndian.Uint16(d))
		if addr >= len(b.HoldingRegisters) {
			return exception(dst, fc, 2)
		}
		b.HoldingRegisters[addr] = binary.BigEndian.Uint16(d[2:])
		s.wrote(fc, addr, 1)
		return append(dst, pdu[:5]...)
	}
	if len(d) < 5 {
		return exception(dst, fc, 3)
	}
	addr, qty, nb := int(binary.BigEndian.Uint16(d)), int(binary.BigEndian.Uint16(d[2:])), int(d[4])
	if qty < 1 || qty > 123 || nb != 2*qty || len(d) != 5+nb {
		return exception(dst, fc, 3)
	}
	if addr+qty > len(b.HoldingRegisters) {
		return exception(dst, fc, 2)
	}
	for i := 0; i < qty; i++ {
		b.HoldingRegisters[addr+i] = binary.BigEndian.Uint16(d[5+2*i:])
	}
	s.wrote(fc, addr, qty)
	return append(dst, pdu[:5]...)
}

func (s *Server) wrote(fc byte, addr, n int) {
	if s.OnWrite != nil {
		s.OnWrite(s.bank, Write{Function: fc, Address: uint16(addr), Count: uint16(n)})
	}
}
