// Package gpio reads digital inputs and drives digital outputs of the
// gateway's own I/O through periph.io, with the pins named by a board
// profile (package board): "DI1" rather than gpiochip0 line 5.
//
// periph's gpio.PinIn.Read returns a Level and no error: a failed read is
// indistinguishable from a low line. edged must never turn a failure into a
// silent false, so this package has its own Input and Output interfaces whose
// reads return an error, and two backends behind them:
//
//   - Chardev, the Linux GPIO character device through periph's gpioioctl
//     package (host/v3), not sysfs. Each pin is requested as a one-line
//     gpioioctl.LineSet, because LineSet.Read and LineSet.Out return the
//     ioctl's error (GPIO_V2_LINE_GET_VALUES / SET_VALUES), unlike
//     GPIOLine.Read, which logs the error and returns false. What periph lets
//     us detect: a chip that is absent or cannot be opened (at Open), a line
//     that is busy or cannot be requested (EBUSY etc., at Open), and every
//     failing get/set-values ioctl afterwards (EIO from an I²C expander,
//     ENODEV after a hot unplug) as an error of that pin's Read or Out.
//     LineSets select lines by name, so a line must have a unique name on its
//     chip (gpio-line-names in the device tree); Open rejects an unnamed line
//     with an error saying so rather than falling back to the error-less
//     GPIOLine.Read.
//   - Sim, a simulated board built from periph's gpiotest fakes, whose outputs
//     DOn loop back to the inputs DIn, with fault injection per line.
//
// A Driver samples all its pins once per call of Scan (the scan engine calls
// it once per cycle), applies the debounce of each input, and reports per pin
// its value and error. Debounce is a count of consecutive equal samples, not
// a time: deterministic at any cycle time.
//
// This package knows nothing of plc/ or opcua/.
package gpio

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/edged/edged/board"
)

// Input is a digital input line. Unlike periph's gpio.PinIn, a read that
// fails says so.
type Input interface {
	// Read samples the line; true is the logical (active) level.
	Read() (bool, error)
	Close() error
}

// Output is a digital output line.
type Output interface {
	// Out drives the line; true is the logical (active) level.
	Out(v bool) error
	// Read reads the line's level back.
	Read() (bool, error)
	Close() error
}

// Backend opens the lines of a board.
type Backend interface {
	// OpenInput requests pin as an input.
	OpenInput(pin board.GPIOPin) (Input, error)
	// OpenOutput requests pin as an output driven at initial.
	OpenOutput(pin board.GPIOPin, initial bool) (Output, error)
}

var (
	// ErrUnknownPin is returned for a pin name the board does not have or
	// the driver did not open.
	ErrUnknownPin = errors.New("gpio: unknown pin")
	// ErrNotOutput is returned by Write to an input.
	ErrNotOutput = errors.New("gpio: pin is not an output")
	// ErrNotSampled is the error of a pin that Scan has not sampled yet.
	ErrNotSampled = errors.New("gpio: pin not sampled yet")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("gpio: driver closed")
)

// Invalid is a line that fails every call, the do-nothing value. It is an
// Output and, having Read and Close, also an Input.
var Invalid Output = invalid{}

type invalid struct{}

var errInvalid = errors.New("gpio: invalid pin")

func (invalid) Read() (bool, error) { return false, errInvalid }
func (invalid) Out(bool) error      { return errInvalid }
func (invalid) Close() error        { return nil }

var (
	_ Input  = invalid{}
	_ Output = invalid{}
)

// PinConfig selects one pin of the board for a Driver.
type PinConfig struct {
	// Name is the logical name in the board profile, e.g. "DI1".
	Name string
	// Debounce, for an input, is the number of consecutive equal samples
	// needed to accept a new level; 0 and 1 mean no debounce. The first
	// successful sample is taken as is. A failed read restarts the count.
	// Must be 0 for an output.
	Debounce int
	// Initial, for an output, is the level driven when it is opened.
	Initial bool
}

// Reading is the state of one pin after a Scan.
type Reading struct {
	Name string
	Dir  board.Direction
	// Value is the debounced level of an input, the level read back from an
	// output. Meaningless when Err is not nil.
	Value bool
	// Err is the error of the last sample; nil when it succeeded.
	// ErrNotSampled before the first Scan.
	Err error
}

type pinState struct {
	cfg  PinConfig
	dir  board.Direction
	in   Input
	out  Output
	deb  debouncer
	read *Reading // into Driver.readings
}

// Driver owns the opened pins of one board. It is not safe for concurrent
// use: one goroutine (the device's goroutine of the scan engine) calls it.
type Driver struct {
	board    string
	pins     []*pinState
	byName   map[string]*pinState
	readings []Reading
	closed   bool
}

// Open opens the pins of b listed in pins through be. It checks every pin
// first and returns all problems at once: unknown names (listing the board's
// pins), duplicates, a debounce on an output or a negative one.
func Open(b board.Profile, be Backend, pins []PinConfig) (*Driver, error) {
	var errs []error
	seen := map[string]bool{}
	for i, pc := range pins {
		g, ok := b.Pin(pc.Name)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("pins[%d] %q: %w on board %q (known: %s)", i, pc.Name, ErrUnknownPin, b.Name, strings.Join(b.PinNames(), ", ")))
			continue
		case seen[pc.Name]:
			errs = append(errs, fmt.Errorf("pins[%d] %q: listed twice", i, pc.Name))
		case pc.Debounce < 0:
			errs = append(errs, fmt.Errorf("pins[%d] %q: debounce %d is negative", i, pc.Name, pc.Debounce))
		case pc.Debounce > 0 && g.Dir != board.Input:
			errs = append(errs, fmt.Errorf("pins[%d] %q: debounce on an output", i, pc.Name))
		}
		seen[pc.Name] = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	d := &Driver{board: b.Name, byName: map[string]*pinState{}, readings: make([]Reading, len(pins))}
	for i, pc := range pins {
		g, _ := b.Pin(pc.Name)
		ps := &pinState{cfg: pc, dir: g.Dir, deb: debouncer{n: pc.Debounce}, read: &d.readings[i]}
		var err error
		if g.Dir == board.Output {
			var o Output
			o, err = be.OpenOutput(g, pc.Initial != g.ActiveLow)
			ps.out = o
		} else {
			var in Input
			in, err = be.OpenInput(g)
			ps.in = in
		}
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("gpio: pin %s (%s line %d): %w", pc.Name, g.Chip, g.Line, err)
		}
		if g.ActiveLow {
			if ps.in != nil {
				ps.in = activeLow{ps.in}
			} else {
				ps.out = activeLow{ps.out}
			}
		}
		*ps.read = Reading{Name: pc.Name, Dir: g.Dir, Err: ErrNotSampled}
		d.pins = append(d.pins, ps)
		d.byName[pc.Name] = ps
	}
	return d, nil
}

// Scan samples every pin once, inputs through their debounce, outputs read
// back, and returns the readings in the order of Open's pins. The slice is
// owned by the Driver and valid until the next Scan; Scan does not allocate.
func (d *Driver) Scan() []Reading {
	for _, p := range d.pins {
		r := p.read
		if d.closed {
			r.Err = ErrClosed
			continue
		}
		var v bool
		var err error
		if p.in != nil {
			v, err = p.in.Read()
		} else {
			v, err = p.out.Read()
		}
		if err != nil {
			p.deb.reset()
			r.Err = err
			continue
		}
		if p.in != nil {
			v = p.deb.sample(v)
		}
		r.Value, r.Err = v, nil
	}
	return d.readings
}

// Reading returns the state of the pin called name as of the last Scan.
func (d *Driver) Reading(name string) (Reading, error) {
	p, ok := d.byName[name]
	if !ok {
		return Reading{}, d.unknown(name)
	}
	return *p.read, nil
}

// Write drives the output called name. The new level shows in the next
// Scan's reading.
func (d *Driver) Write(name string, v bool) error {
	p, ok := d.byName[name]
	if !ok {
		return d.unknown(name)
	}
	if p.out == nil {
		return fmt.Errorf("gpio: %s: %w", name, ErrNotOutput)
	}
	if d.closed {
		return ErrClosed
	}
	if err := p.out.Out(v); err != nil {
		return fmt.Errorf("gpio: %s: %w", name, err)
	}
	return nil
}

// Names returns the names of the opened pins in the order of Open.
func (d *Driver) Names() []string {
	s := make([]string, len(d.pins))
	for i, p := range d.pins {
		s[i] = p.cfg.Name
	}
	return s
}

// Close releases every line. Later calls fail with ErrClosed.
func (d *Driver) Close() error {
	var errs []error
	for _, p := range d.pins {
		if p.in != nil {
			errs = append(errs, p.in.Close())
		} else if p.out != nil {
			errs = append(errs, p.out.Close())
		}
	}
	d.closed = true
	return errors.Join(errs...)
}

func (d *Driver) unknown(name string) error {
	known := make([]string, 0, len(d.byName))
	for n := range d.byName {
		known = append(known, n)
	}
	sort.Strings(known)
	return fmt.Errorf("%q: %w of board %q (opened: %s)", name, ErrUnknownPin, d.board, strings.Join(known, ", "))
}

// debouncer accepts a new level after n consecutive samples of it.
type debouncer struct {
	n     int
	valid bool // state holds a level
	state bool
	cand  bool
	count int
}

func (d *debouncer) sample(v bool) bool {
	if !d.valid {
		d.valid, d.state, d.count = true, v, 0
		return v
	}
	if v == d.state {
		d.count = 0
		return d.state
	}
	if d.count > 0 && v == d.cand {
		d.count++
	} else {
		d.cand, d.count = v, 1
	}
	if d.count >= d.n {
		d.state, d.count = v, 0
	}
	return d.state
}

func (d *debouncer) reset() { d.count = 0 }

// line is what Input and Output have in common.
type line interface {
	Read() (bool, error)
	Close() error
}

// activeLow inverts a line.
type activeLow struct{ l line }

func (a activeLow) Read() (bool, error) {
	v, err := a.l.Read()
	return !v, err
}

func (a activeLow) Out(v bool) error { return a.l.(Output).Out(!v) }
func (a activeLow) Close() error     { return a.l.Close() }
