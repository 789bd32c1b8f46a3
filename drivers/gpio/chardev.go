package gpio

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"periph.io/x/conn/v3/driver/driverreg"
	pgpio "periph.io/x/conn/v3/gpio"
	"periph.io/x/host/v3/gpioioctl"

	"github.com/edged/edged/board"
)

// ErrNoChardev is returned when the Linux GPIO character device is absent:
// another OS, or a Linux without /dev/gpiochip*.
var ErrNoChardev = errors.New("gpio: no Linux GPIO character device (/dev/gpiochip*)")

// Chardev is the Backend on the Linux GPIO character device, through periph's
// gpioioctl. The package builds on every GOOS/GOARCH; on a system without
// the character device, OpenInput and OpenOutput return ErrNoChardev.
type Chardev struct {
	once  sync.Once
	err   error
	chips []*gpioioctl.GPIOChip
}

var _ Backend = (*Chardev)(nil)

// NewChardev returns the character-device backend. The chips are enumerated
// (periph's driverreg.Init) on first use.
func NewChardev() *Chardev { return &Chardev{} }

func (c *Chardev) init() error {
	c.once.Do(func() {
		if runtime.GOOS != "linux" {
			c.err = fmt.Errorf("%w: GOOS is %s", ErrNoChardev, runtime.GOOS)
			return
		}
		st, err := driverreg.Init()
		if err != nil {
			c.err = fmt.Errorf("%w: periph init: %v", ErrNoChardev, err)
			return
		}
		c.chips = gpioioctl.Chips
		if len(c.chips) == 0 {
			for _, f := range st.Failed {
				c.err = fmt.Errorf("%w: %v", ErrNoChardev, f)
				return
			}
			c.err = ErrNoChardev
		}
	})
	return c.err
}

// chip finds a chip by kernel name ("gpiochip0"), path ("/dev/gpiochip0")
// or label ("pinctrl-bcm2711").
func (c *Chardev) chip(name string) (*gpioioctl.GPIOChip, error) {
	if err := c.init(); err != nil {
		return nil, err
	}
	for _, ch := range c.chips {
		if ch.Name() == name || ch.Path() == name || ch.Label() == name {
			return ch, nil
		}
	}
	known := ""
	for _, ch := range c.chips {
		known += " " + ch.Name() + "(" + ch.Label() + ")"
	}
	return nil, fmt.Errorf("gpio: no chip %q (present:%s)", name, known)
}

// request requests one line as a one-line LineSet, whose Read and Out
// return the ioctl's error.
func (c *Chardev) request(pin board.GPIOPin, dir gpioioctl.LineDir) (*gpioioctl.LineSet, error) {
	ch, err := c.chip(pin.Chip)
	if err != nil {
		return nil, err
	}
	if pin.Line < 0 || pin.Line >= ch.LineCount() {
		return nil, fmt.Errorf("gpio: chip %s has no line %d (%d lines)", ch.Name(), pin.Line, ch.LineCount())
	}
	name := ch.ByNumber(pin.Line).Name()
	if name == "" || ch.ByName(name).Number() != pin.Line {
		return nil, fmt.Errorf("gpio: line %d of chip %s has no unique name; periph's gpioioctl requests LineSets by line name, so name it (gpio-line-names in the device tree)", pin.Line, ch.Name())
	}
	ls, err := ch.LineSetFromConfig(&gpioioctl.LineSetConfig{
		Lines:            []string{name},
		DefaultDirection: dir,
		DefaultEdge:      pgpio.NoEdge,
		DefaultPull:      pgpio.PullNoChange,
	})
	if err != nil {
		return nil, fmt.Errorf("gpio: request %s line %d (%s): %w", ch.Name(), pin.Line, name, err)
	}
	return ls, nil
}

// OpenInput implements Backend.
func (c *Chardev) OpenInput(pin board.GPIOPin) (Input, error) {
	ls, err := c.request(pin, gpioioctl.LineInput)
	if err != nil {
		return nil, err
	}
	return lineSet{ls}, nil
}

// OpenOutput implements Backend.
func (c *Chardev) OpenOutput(pin board.GPIOPin, initial bool) (Output, error) {
	ls, err := c.request(pin, gpioioctl.LineOutput)
	if err != nil {
		return nil, err
	}
	l := lineSet{ls}
	if err := l.Out(initial); err != nil {
		_ = ls.Close()
		return nil, err
	}
	return l, nil
}

type lineSet struct{ ls *gpioioctl.LineSet }

func (l lineSet) Read() (bool, error) {
	v, err := l.ls.Read(1)
	if err != nil {
		return false, fmt.Errorf("gpio: get line values: %w", err)
	}
	return v&1 != 0, nil
}

func (l lineSet) Out(v bool) error {
	var bits pgpio.GPIOValue
	if v {
		bits = 1
	}
	if err := l.ls.Out(bits, 1); err != nil {
		return fmt.Errorf("gpio: set line values: %w", err)
	}
	return nil
}

func (l lineSet) Close() error { return l.ls.Close() }
