// Package sim is edged's built-in simulated PLC: what edged runs when it has
// no configuration, and what the tests of the scan engine poll:
//
//	s, err := sim.Start(ctx) // a Modbus TCP slave at s.Addr(), GPIO at s.GPIO()
//	cfg := s.Config()        // the configuration that polls it
//
// How it works, and why, is in docs/simulator.md.
package sim

import (
	"context"
	"errors"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/board"
	"github.com/edged/edged/drivers/gpio"
	"github.com/edged/edged/drivers/modbus/slave"
	"github.com/edged/edged/plc/config"
)

// Period is the simulated PLC's cycle: one tick.
const Period = 5 * time.Millisecond

// BankSize is the number of entries in each Modbus area of the simulated
// PLC.
const BankSize = 4096

// The register map (0-based addresses; see the package documentation).
const (
	RegCounter  = 0   // holding registers 0..1, uint32
	RegSine     = 2   // holding registers 2..5, float64
	RegRamp     = 6   // holding registers 6..7, float32
	RegStatus   = 8   // holding register 8, uint16
	RegSetpoint = 100 // holding registers 100..101, float32, writable
	RegCommand  = 102 // holding register 102, uint16, writable
	CoilToggle  = 0   // coil 0, bool
)

// The churn bank: every input register (ir:0..BankSize-1) changes once a
// second, a tenth of them every ChurnPeriod of the wall clock: at step k
// (ChurnStep), the registers i with i % ChurnClasses == k % ChurnClasses
// take the value uint16(k). A client that receives a value v at time t
// knows when it changed: at the last step ≤ ChurnStep(t) whose low 16
// bits are v (ChurnChanged). It is the load of a plant whose SCADA
// subscribes to thousands of tags of which a tenth change per 100 ms (make
// bench-peer); the benchmark's peer server runs the same logic.
const (
	ChurnPeriod  = 100 * time.Millisecond
	ChurnClasses = 10
)

// ChurnStep is the churn bank's step at t: the time since the Unix epoch
// over ChurnPeriod.
func ChurnStep(t time.Time) int64 { return t.UnixNano() / int64(ChurnPeriod) }

// ChurnChanged returns when a churn register holding v, read at t, took
// that value: the start of the last step ≤ ChurnStep(t) whose low 16 bits
// are v.
func ChurnChanged(v uint16, t time.Time) time.Time {
	k := ChurnStep(t)
	k -= int64(uint16(k) - v) // back by (k - v) mod 2¹⁶ steps
	return time.Unix(0, k*int64(ChurnPeriod))
}

// Periods of the simulated signals, in ticks.
const (
	SinePeriodTicks   = 2000 // 10 s
	RampPeriodTicks   = 2000 // 10 s
	ToggleHalfPeriod  = 100  // 500 ms
	DeviceName        = "sim"
	GPIODeviceName    = "io"
	rampMax           = 100.0
	defaultListenAddr = config.SimulatorAddress
)

// Options configure a Sim. The zero value polls over loopback TCP.
type Options struct {
	// Addr is the slave's listen address; "" is config.SimulatorAddress
	// (127.0.0.1, a free port).
	Addr string
	// Manual, when true, stops the clock: the simulation advances only
	// when Step is called.
	Manual bool
	// InMemory has edged's own driver poll the simulator over Dial's
	// in-memory connection, on the scan's goroutine (internal/stack),
	// instead of loopback TCP: a third of the idle CPU and context
	// switches. edged sets it unless --sim-in-memory=false; the slave
	// listens on TCP either way.
	InMemory bool
}

// Sim is a running simulated PLC and GPIO board.
type Sim struct {
	srv     *slave.Server
	addr    string
	board   *gpio.Sim
	manual  bool
	base    time.Time     // the start
	offset  atomic.Int64  // tick 0 is at base + offset ns (see catchUp)
	polled  bool          // a request came; under the bank's lock
	churned int64         // the churn bank's step; under the bank's lock
	burst   time.Time     // when the last burst of requests began (catchUp); under the bank's lock
	ticks   atomic.Uint64 // the tick the bank holds

	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// Start starts the simulated PLC with the zero Options: its slave listens
// on a free loopback port and it advances a tick every 5 ms until ctx
// ends or Close is called.
func Start(ctx context.Context) (*Sim, error) {
	return StartOptions(ctx, Options{})
}

// StartOptions starts the simulated PLC with opt; see Start.
//
// Without Manual the tick is the time since the start over Period, and
// the bank is brought up to it when a request comes (and by Update): a
// PLC whose registers are read every 5 ms looks the same as one that
// ticks on its own, and an idle simulator does not wake its process 200
// times a second.
func StartOptions(ctx context.Context, opt Options) (*Sim, error) {
	if opt.Addr == "" {
		opt.Addr = defaultListenAddr
	}
	s := &Sim{
		srv:    slave.New(slave.NewBank(BankSize)),
		board:  gpio.NewSim(board.Sim()),
		manual: opt.Manual,
		base:   time.Now(),
	}
	s.srv.Update(func(b *slave.Bank) { s.apply(b, 0) })
	if !opt.Manual {
		s.srv.OnRequest = s.catchUp
	}
	a, err := s.srv.ListenAndServe(opt.Addr)
	if err != nil {
		return nil, errors.Join(errors.New("sim: start the Modbus slave"), err)
	}
	s.addr = a.String()
	ctx, s.cancel = context.WithCancel(ctx)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		<-ctx.Done()
		s.srv.Close()
	}()
	return s, nil
}

// catchUp brings b, locked, to the tick of now: Status takes Command, as
// at every tick, and the signals take the new tick's values.
//
// The first request sets the clock's phase: it falls in the middle of
// its tick, so that a client that polls every Period (edged's engine, on
// absolute deadlines) reads each tick once, never two in one period for
// a little jitter, as it would with its polls at the ticks' edges.
func (s *Sim) catchUp(b *slave.Bank) {
	now := time.Now() // one clock reading a request
	if !s.polled {
		s.polled = true
		n := s.ticks.Load()
		s.offset.Store(int64(now.Sub(s.base) - time.Duration(n)*Period - Period/2))
	}
	// The churn bank steps between a client's polls, not during one: a
	// request within half a Period of the first of its burst sees that
	// one's step, so the requests of a poll of several devices see one
	// step, never the old one on some devices and the new one on others
	// (which would reach a subscriber as two messages a cycle apart where
	// the benchmark's peer writes the step at once).
	if now.Sub(s.burst) >= Period/2 {
		s.burst = now
		s.churn(b, ChurnStep(now))
	}
	n := s.tickAt(now)
	if n > s.ticks.Load() {
		s.ticks.Store(n)
		b.HoldingRegisters[RegStatus] = b.HoldingRegisters[RegCommand]
		s.apply(b, n)
	}
}

// churn brings the churn bank, locked, to step k (see ChurnPeriod); the
// first call sets every register.
func (s *Sim) churn(b *slave.Bank, k int64) {
	if k <= s.churned {
		return
	}
	ir := b.InputRegisters
	for step := max(s.churned+1, k-ChurnClasses+1); step <= k; step++ {
		v := uint16(step)
		for i := int(step % ChurnClasses); i < len(ir); i += ChurnClasses {
			ir[i] = v
		}
	}
	s.churned = k
}

// Step advances the simulation by one tick: it copies Command into Status
// and sets Counter, Sine, Ramp and Toggle for the new tick count, all under
// the slave's lock, so that a client never reads half a tick. Step is safe
// to call from any goroutine; with Options.Manual it is the only clock.
func (s *Sim) Step() {
	s.srv.Update(func(b *slave.Bank) {
		n := s.ticks.Add(1)
		b.HoldingRegisters[RegStatus] = b.HoldingRegisters[RegCommand]
		s.apply(b, n)
	})
}

// apply writes the signals of tick n into b.
func (s *Sim) apply(b *slave.Bank, n uint64) {
	hr := b.HoldingRegisters
	put32(hr[RegCounter:], uint32(n))
	put64(hr[RegSine:], math.Float64bits(Sine(n)))
	put32(hr[RegRamp:], math.Float32bits(Ramp(n)))
	b.Coils[CoilToggle] = Toggle(n)
}

// Counter returns the Counter of tick n.
func Counter(n uint64) uint32 { return uint32(n) }

// Sine returns the Sine of tick n: sin(2π·t/10 s).
func Sine(n uint64) float64 {
	return math.Sin(2 * math.Pi * float64(n%SinePeriodTicks) / SinePeriodTicks)
}

// Ramp returns the Ramp of tick n: 0..100 in 10 s, then again.
func Ramp(n uint64) float32 {
	return float32(rampMax * float64(n%RampPeriodTicks) / RampPeriodTicks)
}

// Toggle returns the Toggle of tick n: it flips every 100 ticks (500 ms).
func Toggle(n uint64) bool { return (n/ToggleHalfPeriod)%2 == 1 }

// put32 stores x in two registers, high word first (ABCD).
func put32(r []uint16, x uint32) {
	r[0] = uint16(x >> 16)
	r[1] = uint16(x)
}

// put64 stores x in four registers, high word first (ABCD).
func put64(r []uint16, x uint64) {
	r[0] = uint16(x >> 48)
	r[1] = uint16(x >> 32)
	r[2] = uint16(x >> 16)
	r[3] = uint16(x)
}

// Addr returns the slave's address, "127.0.0.1:<port>".
func (s *Sim) Addr() string { return s.addr }

// Dial connects to the simulated PLC in memory (slave.Server.Conn),
// whatever network and address it is given: the dialer of
// devices.Options.SimDial, with which edged polls its own simulator
// through the real Modbus TCP driver without the kernel's loopback.
func (s *Sim) Dial(ctx context.Context, network, address string) (net.Conn, error) {
	return s.srv.Conn()
}

// Ticks returns the number of ticks so far (Counter's value, before it
// wraps).
func (s *Sim) Ticks() uint64 {
	if s.manual {
		return s.ticks.Load()
	}
	return max(s.ticks.Load(), s.tickAt(time.Now()))
}

// tickAt is the tick of the clock at t.
func (s *Sim) tickAt(t time.Time) uint64 {
	d := t.Sub(s.base) - time.Duration(s.offset.Load())
	if d < 0 {
		return 0
	}
	return uint64(d / Period)
}

// GPIO returns the simulated GPIO board (board "sim"), for
// devices.Options.GPIO: DOn loops back to DIn; tests inject faults with its
// SetFault.
func (s *Sim) GPIO() *gpio.Sim { return s.board }

// Update runs f with the simulated PLC's memory locked (see
// slave.Server.Update): for tests that set or inspect registers directly.
func (s *Sim) Update(f func(b *slave.Bank)) {
	s.srv.Update(func(b *slave.Bank) {
		if !s.manual {
			s.catchUp(b)
		}
		f(b)
	})
}

// Config returns the configuration that polls this simulator through the
// real drivers: config.Simulator() with the sim device's address set to
// Addr. Each call returns a new Config.
func (s *Sim) Config() config.Config {
	c := config.Simulator()
	for i := range c.Devices {
		if d := &c.Devices[i]; d.Name == DeviceName && d.ModbusTCP != nil {
			d.ModbusTCP.Address = s.addr
		}
	}
	return c
}

// Close stops the slave (closing its connections, the in-memory ones too) and waits
// for them. Calling it again does nothing.
func (s *Sim) Close() error {
	s.once.Do(func() {
		s.cancel()
		s.wg.Wait()
	})
	return nil
}
