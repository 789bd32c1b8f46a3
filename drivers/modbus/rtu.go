package modbus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	gb "github.com/goburrow/modbus"
	"github.com/goburrow/serial"
)

// SerialConfig configures a Modbus RTU bus.
type SerialConfig struct {
	Device   string // e.g. /dev/ttyS1, /dev/ttyUSB0
	BaudRate int    // 0: 19200
	DataBits int    // 0: 8
	Parity   string // "N", "E" or "O"; "": "E" (the Modbus default)
	StopBits int    // 0: 1
	// Timeout bounds the wait for the first byte of a response when the
	// context has no (earlier) deadline. 0: 500 ms.
	Timeout time.Duration
	// InterCharTimeout: a silence this long inside a response ends it; a
	// response shorter than its function code / byte count says is then an
	// error. The specification's 1.5 character times (750 µs above 19,200
	// baud) is shorter than the scheduling and USB-adapter latency of a
	// Linux gateway, so the default is the larger of 1.5 character times
	// and 20 ms. Responses normally end by reaching their expected length,
	// not by this timeout, so it costs nothing on a healthy bus.
	InterCharTimeout time.Duration
	// RS485 is passed to github.com/goburrow/serial: the kernel's RS-485
	// mode (RTS driven around each transmission) for UARTs that need it.
	// Adapters that echo what they send are not supported.
	RS485 serial.RS485Config
	// Open opens the port; nil opens Device with github.com/goburrow/serial.
	// Reads on the returned port must return within PollInterval with
	// n == 0 when nothing arrives (an error for which IsTimeout is true, or
	// nil).
	Open func(cfg *SerialConfig) (io.ReadWriteCloser, error)
}

// PollInterval is how long one read of a serial port may block: the
// granularity of deadlines and of the inter-character timeout.
const PollInterval = time.Millisecond

// withDefaults returns cfg with the zero fields set.
func (cfg SerialConfig) withDefaults() SerialConfig {
	if cfg.BaudRate <= 0 {
		cfg.BaudRate = 19200
	}
	if cfg.DataBits <= 0 {
		cfg.DataBits = 8
	}
	if cfg.Parity == "" {
		cfg.Parity = "E"
	}
	if cfg.StopBits <= 0 {
		cfg.StopBits = 1
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 500 * time.Millisecond
	}
	if cfg.InterCharTimeout <= 0 {
		cfg.InterCharTimeout = max(cfg.T15(), 20*time.Millisecond)
	}
	return cfg
}

// Validate checks the fields a configuration file sets; zero values are
// valid (they take the defaults).
func (cfg SerialConfig) Validate() error {
	switch {
	case cfg.Device == "":
		return errors.New("modbus: serial: no device")
	case cfg.BaudRate < 0 || cfg.BaudRate > 4000000:
		return fmt.Errorf("modbus: serial %s: baud rate %d out of range", cfg.Device, cfg.BaudRate)
	case cfg.DataBits != 0 && (cfg.DataBits < 5 || cfg.DataBits > 8):
		return fmt.Errorf("modbus: serial %s: data bits %d, want 5..8", cfg.Device, cfg.DataBits)
	case cfg.StopBits != 0 && cfg.StopBits != 1 && cfg.StopBits != 2:
		return fmt.Errorf("modbus: serial %s: stop bits %d, want 1 or 2", cfg.Device, cfg.StopBits)
	case cfg.Parity != "" && cfg.Parity != "N" && cfg.Parity != "E" && cfg.Parity != "O":
		return fmt.Errorf("modbus: serial %s: parity %q, want N, E or O", cfg.Device, cfg.Parity)
	case cfg.Timeout < 0 || cfg.InterCharTimeout < 0:
		return fmt.Errorf("modbus: serial %s: negative timeout", cfg.Device)
	}
	return nil
}

// CharTime returns the time one character takes on the line: start bit,
// data bits, parity bit (unless "N") and stop bits, at the baud rate.
// 19200 8E1 (11 bits): 572.9 µs; 9600 8N1 (10 bits): 1041.7 µs.
func (cfg SerialConfig) CharTime() time.Duration {
	baud := cfg.BaudRate
	if baud <= 0 {
		baud = 19200
	}
	bits := 1 + cfg.DataBits + cfg.StopBits
	if cfg.DataBits <= 0 {
		bits += 8
	}
	if cfg.StopBits <= 0 {
		bits++
	}
	if cfg.Parity != "N" {
		bits++
	}
	return time.Duration(int64(bits) * int64(time.Second) / int64(baud))
}

// T35 returns the inter-frame silence: 3.5 character times, fixed at
// 1750 µs above 19,200 baud (Modbus over serial line, 2.5.1.1).
func (cfg SerialConfig) T35() time.Duration {
	if cfg.BaudRate > 19200 {
		return 1750 * time.Microsecond
	}
	return cfg.CharTime() * 7 / 2
}

// T15 returns 1.5 character times, fixed at 750 µs above 19,200 baud.
func (cfg SerialConfig) T15() time.Duration {
	if cfg.BaudRate > 19200 {
		return 750 * time.Microsecond
	}
	return cfg.CharTime() * 3 / 2
}

// IsTimeout reports whether err is a serial read timeout.
func IsTimeout(err error) bool {
	if errors.Is(err, serial.ErrTimeout) {
		return true
	}
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// RTU is a Modbus RTU bus: one serial port (RS-485) shared by the Clients
// of the unit ids on it (RTU.Client). Transactions run one after another
// in the order they were asked for (a queue; a request whose context
// ends while it waits is dropped from it). Timing:
//
//   - Before each request the bus is silent for T35 since the last byte sent
//     or received; only the part of it that has not already passed is
//     waited.
//   - The response is read as it arrives: its expected length follows from
//     its function code (exception: 5 bytes; write single/multiple: 8) or
//     its byte count (reads: 5 + count); the read returns when that many
//     bytes are in, with no fixed delay. A response whose first byte does
//     not come by the deadline is a timeout; one that stops early for
//     InterCharTimeout is a framing error. The CRC is checked by goburrow's
//     RTU packager.
//   - After a failed transaction the bus reads and discards input until it
//     has been silent for InterCharTimeout, so a late or garbled reply
//     cannot be taken for the next answer. An I/O error closes the port; it
//     is reopened with the same back-off as TCP.
type RTU struct {
	cfg    SerialConfig
	sem    sem        // held for a transaction and for Close
	mu     sync.Mutex // guards the Client map
	port   io.ReadWriteCloser
	buf    [256]byte
	last   time.Time // end of the last byte sent or received
	st     Stats
	fails  int
	next   time.Time
	opens  int
	broken bool // the port failed: close it in fail
	wrote  bool // the failed transaction reached the line: drain in fail
	done   bool
	units  map[uint8]*Client
}

// NewRTU returns a bus on cfg; the port is opened on first use.
func NewRTU(cfg SerialConfig) *RTU {
	b := &RTU{cfg: cfg.withDefaults(), sem: newSem(), units: map[uint8]*Client{}}
	b.st.setState(StateDown)
	return b
}

// Config returns the configuration with defaults applied.
func (b *RTU) Config() SerialConfig { return b.cfg }

// Client returns the Client for unit id unit (1..247) on this bus (the same
// one for the same unit). Its framing is goburrow's RTU packager.
func (b *RTU) Client(unit uint8) *Client {
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.units[unit]; ok {
		return c
	}
	h := gb.NewRTUClientHandler(b.cfg.Device) // used only as Packager
	h.SlaveId = unit
	c := newClient(b, unit, h)
	b.units[unit] = c
	return c
}

// Stats returns the bus's counters.
func (b *RTU) Stats() *Stats { return &b.st }

// Close closes the port; later calls fail with ErrClosed.
func (b *RTU) Close() error {
	b.sem.acquire(context.Background())
	defer b.sem.release()
	b.done = true
	b.st.setState(StateDown)
	if b.port != nil {
		err := b.port.Close()
		b.port = nil
		return err
	}
	return nil
}

func (b *RTU) acquire(ctx context.Context) error { return b.sem.acquire(ctx) }
func (b *RTU) release()                          { b.sem.release() }
func (b *RTU) stats() *Stats                     { return &b.st }

func (b *RTU) open() (io.ReadWriteCloser, error) {
	if b.cfg.Open != nil {
		return b.cfg.Open(&b.cfg)
	}
	return serial.Open(&serial.Config{
		Address:  b.cfg.Device,
		BaudRate: b.cfg.BaudRate,
		DataBits: b.cfg.DataBits,
		StopBits: b.cfg.StopBits,
		Parity:   b.cfg.Parity,
		Timeout:  PollInterval,
		RS485:    b.cfg.RS485,
	})
}

func (b *RTU) connectLocked() error {
	if b.done {
		return ErrClosed
	}
	if b.port != nil {
		return nil
	}
	if now := time.Now(); now.Before(b.next) {
		return fmt.Errorf("%w (%v left)", ErrDown, b.next.Sub(now).Round(time.Millisecond))
	}
	b.st.setState(StateConnecting)
	p, err := b.open()
	if err != nil {
		b.fails++
		b.next = time.Now().Add(backoff(b.fails, 50*time.Millisecond, 5*time.Second))
		b.st.setState(StateDown)
		return fmt.Errorf("%w: %w", ErrDown, err)
	}
	b.port = p
	b.opens++
	if b.opens > 1 {
		b.st.Reconnects.Add(1)
	}
	b.last = time.Now()
	b.st.setState(StateConnected)
	return nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	if ctx.Done() == nil {
		time.Sleep(d)
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// responseLength returns the length of the RTU response frame that starts
// with b (at least 2 bytes: unit id, function code; 3 for reads), or 0 when
// b is too short to tell, or -1 when the function code does not say.
func responseLength(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	fc := b[1]
	switch {
	case fc&0x80 != 0:
		return 5 // unit, fc|0x80, exception code, CRC
	case fc == 1, fc == 2, fc == 3, fc == 4, fc == 23:
		if len(b) < 3 {
			return 0
		}
		return 3 + int(b[2]) + 2 // unit, fc, byte count, data, CRC
	case fc == 5, fc == 6, fc == 15, fc == 16:
		return 8 // unit, fc, address, value/quantity, CRC
	case fc == 22:
		return 10
	}
	return -1
}

// send writes one request and reads its response. Caller holds b.sem.
func (b *RTU) send(ctx context.Context, adu []byte) ([]byte, error) {
	b.wrote = false
	if err := b.connectLocked(); err != nil {
		return nil, err
	}
	// Inter-frame silence: wait only what is left of T35.
	if err := sleepCtx(ctx, time.Until(b.last.Add(b.cfg.T35()))); err != nil {
		return nil, err
	}
	b.wrote = true
	if _, err := b.port.Write(adu); err != nil {
		b.broken = true
		return nil, err
	}
	// The request is on the line until its last character is out.
	sent := time.Now().Add(time.Duration(len(adu)) * b.cfg.CharTime())
	b.last = sent
	deadline := sent.Add(b.cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	n, err := b.readFrame(ctx, deadline)
	if err != nil {
		return nil, err
	}
	b.fails = 0
	return b.buf[:n], nil
}

// readFrame reads one response into b.buf and returns its length.
func (b *RTU) readFrame(ctx context.Context, deadline time.Time) (int, error) {
	n, want := 0, 3 // every response has at least 4 bytes: 3 is safe to ask for
	var lastByte time.Time
	for {
		k, err := b.port.Read(b.buf[n:want])
		now := time.Now()
		if k > 0 {
			n += k
			lastByte = now
			b.last = now
			switch l := responseLength(b.buf[:n]); {
			case l > len(b.buf):
				return 0, fmt.Errorf("%w: response claims %d bytes", ErrFrame, l)
			case l > 0:
				want = l
			case l < 0:
				want = len(b.buf) // unknown function: read until silence
			}
			if n == want {
				if responseLength(b.buf[:n]) == n {
					return n, nil
				}
				if n == len(b.buf) {
					return 0, fmt.Errorf("%w: response longer than %d bytes", ErrFrame, len(b.buf))
				}
			}
			continue
		}
		if err != nil && !IsTimeout(err) {
			b.broken = true
			return 0, err
		}
		if n == 0 {
			if ce := ctx.Err(); ce != nil {
				if errors.Is(ce, context.DeadlineExceeded) {
					return 0, fmt.Errorf("%w: %w", ErrTimeout, ce)
				}
				return 0, ce
			}
			if !now.Before(deadline) {
				return 0, ErrTimeout
			}
			continue
		}
		if now.Sub(lastByte) >= b.cfg.InterCharTimeout {
			if responseLength(b.buf[:n]) < 0 {
				return n, nil // unknown length: the silence ends the frame
			}
			return 0, fmt.Errorf("%w: response stopped after %d of %d bytes", ErrFrame, n, want)
		}
	}
}

// fail resynchronises after a failed transaction: an exception response
// was complete; otherwise discard input until the line is silent, or close
// the port after an I/O error. Caller holds b.sem.
func (b *RTU) fail(err error) {
	var mb *gb.ModbusError
	if errors.As(err, &mb) || b.port == nil {
		return
	}
	if b.broken {
		b.broken = false
		b.port.Close()
		b.port = nil
		b.fails++
		b.next = time.Now().Add(backoff(b.fails, 50*time.Millisecond, 5*time.Second))
		b.st.setState(StateDown)
		return
	}
	if b.wrote {
		b.drain()
	}
}

// drain discards input until the line has been silent for
// InterCharTimeout (bounded to 256 reads).
func (b *RTU) drain() {
	var junk [64]byte
	quiet := time.Now()
	for i := 0; i < 256; i++ {
		k, err := b.port.Read(junk[:])
		now := time.Now()
		if k > 0 {
			quiet = now
			b.last = now
			continue
		}
		if err != nil && !IsTimeout(err) {
			b.broken = true
			b.fail(err)
			return
		}
		if now.Sub(quiet) >= b.cfg.InterCharTimeout {
			return
		}
	}
}

// Reconnect closes the serial port, if open, so that the next request
// reopens it at once (the back-off is reset). It waits for a transaction
// in progress, up to ctx; the bus stays usable (unlike Close).
func (b *RTU) Reconnect(ctx context.Context) error {
	if err := b.sem.acquire(ctx); err != nil {
		return err
	}
	defer b.sem.release()
	if b.done {
		return ErrClosed
	}
	if b.port != nil {
		b.port.Close()
		b.port = nil
	}
	b.fails, b.next = 0, time.Time{}
	b.st.setState(StateDown)
	return nil
}
