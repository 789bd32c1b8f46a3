package gpio

import (
	"errors"
	"sync"

	pgpio "periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/edged/edged/board"
)

// Faulter is implemented by a periph pin that can tell whether its last
// operation failed, which periph's gpio.PinIn.Read cannot say.
type Faulter interface {
	// Fault returns the pin's current failure, nil when it works.
	Fault() error
}

// PeriphPin adapts a periph gpio.PinIO to Input and Output. Read checks the
// pin's Fault (when it implements Faulter) before and after periph's Read,
// so that a failing pin reports an error instead of a low level. A periph pin
// without Faulter cannot report a read failure: use it only where none can
// happen (a fake).
type PeriphPin struct {
	Pin pgpio.PinIO
}

var (
	_ Input  = PeriphPin{}
	_ Output = PeriphPin{}
)

func (p PeriphPin) fault() error {
	if f, ok := p.Pin.(Faulter); ok {
		return f.Fault()
	}
	return nil
}

// Read implements Input.
func (p PeriphPin) Read() (bool, error) {
	if err := p.fault(); err != nil {
		return false, err
	}
	l := p.Pin.Read()
	if err := p.fault(); err != nil {
		return false, err
	}
	return bool(l), nil
}

// Out implements Output.
func (p PeriphPin) Out(v bool) error {
	if err := p.fault(); err != nil {
		return err
	}
	return p.Pin.Out(pgpio.Level(v))
}

// Close implements Input and Output.
func (p PeriphPin) Close() error { return p.Pin.Halt() }

// FaultPin is a gpiotest.Pin with an injectable fault.
type FaultPin struct {
	*gpiotest.Pin
	mu  sync.Mutex
	err error
}

// Fault implements Faulter.
func (f *FaultPin) Fault() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// SetFault makes every later operation fail with err; nil repairs the pin.
func (f *FaultPin) SetFault(err error) {
	f.mu.Lock()
	f.err = err
	f.mu.Unlock()
}

// Sim is the Backend of the simulated board (board.Sim or any profile on the
// chip board.SimChip): one gpiotest.Pin per line, and each output DOn wired to
// the input DIn of the same number, so that what is written to DOn is read on
// DIn. An input without an output of its number floats low; tests set it
// with SetInput.
type Sim struct {
	mu    sync.Mutex
	pins  map[board.GPIOPin]*FaultPin // key without Dir and ActiveLow
	names map[string]board.GPIOPin
}

var _ Backend = (*Sim)(nil)

// ErrSimLine is returned by Sim for a pin that is not on board.SimChip.
var ErrSimLine = errors.New("gpio: not a line of the simulated chip")

// NewSim returns the simulated backend of profile p, wiring DOn to DIn.
func NewSim(p board.Profile) *Sim {
	s := &Sim{pins: map[board.GPIOPin]*FaultPin{}, names: map[string]board.GPIOPin{}}
	for _, n := range p.PinNames() {
		g := p.GPIO[n]
		if g.Chip != board.SimChip {
			continue
		}
		s.names[n] = key(g)
		s.pins[key(g)] = &FaultPin{Pin: &gpiotest.Pin{N: n, Num: g.Line, Fn: "GPIO"}}
	}
	// Loopback: DIn shares DOn's pin.
	for n, k := range s.names {
		if len(n) > 2 && n[:2] == "DI" {
			if o, ok := s.names["DO"+n[2:]]; ok {
				s.pins[k] = s.pins[o]
			}
		}
	}
	return s
}

func key(g board.GPIOPin) board.GPIOPin { return board.GPIOPin{Chip: g.Chip, Line: g.Line} }

func (s *Sim) pin(g board.GPIOPin) (*FaultPin, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pins[key(g)]
	if !ok {
		return nil, ErrSimLine
	}
	return p, nil
}

// OpenInput implements Backend.
func (s *Sim) OpenInput(g board.GPIOPin) (Input, error) {
	p, err := s.pin(g)
	if err != nil {
		return nil, err
	}
	return PeriphPin{p}, nil
}

// OpenOutput implements Backend.
func (s *Sim) OpenOutput(g board.GPIOPin, initial bool) (Output, error) {
	p, err := s.pin(g)
	if err != nil {
		return nil, err
	}
	o := PeriphPin{p}
	return o, o.Out(initial)
}

// Pin returns the fake behind the logical pin name (an input wired to an
// output returns the output's pin), nil if there is none.
func (s *Sim) Pin(name string) *FaultPin {
	g, ok := s.names[name]
	if !ok {
		return nil
	}
	p, _ := s.pin(g)
	return p
}

// SetInput sets the electrical level seen on the line of name.
func (s *Sim) SetInput(name string, v bool) error {
	p := s.Pin(name)
	if p == nil {
		return ErrUnknownPin
	}
	return p.Pin.Out(pgpio.Level(v))
}

// SetFault injects err into the line of name (nil repairs it).
func (s *Sim) SetFault(name string, err error) error {
	p := s.Pin(name)
	if p == nil {
		return ErrUnknownPin
	}
	p.SetFault(err)
	return nil
}
