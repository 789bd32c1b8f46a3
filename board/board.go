// Package board describes the hardware edged runs on: which GPIO lines carry
// which logical signal, which serial device is which RS-485 port, where the
// hardware watchdog is and how the scan goroutine should be scheduled.
//
// A profile is pure data. Nothing here opens a device: drivers/gpio resolves
// pin names through a Profile, and cmd/edged (later, not done yet) applies the
// watchdog and the real-time hints at boot.
//
// Built-in profiles:
//
//	sim            the simulated board: DO1..DO4 wired back to DI1..DI4
//	rpi4           Raspberry Pi 4 (arm64), an example wiring on the 40-pin header
//	generic-armv7  a generic 32-bit ARM gateway with gpiochip0 and two UARTs
package board

import (
	"fmt"
	"sort"
	"strings"
)

// Direction is the direction of a GPIO line as wired on the board.
type Direction int

const (
	// Input is a digital input (DI).
	Input Direction = iota + 1
	// Output is a digital output (DO).
	Output
)

func (d Direction) String() string {
	switch d {
	case Input:
		return "input"
	case Output:
		return "output"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}

// GPIOPin locates one logical pin on a GPIO character device.
type GPIOPin struct {
	// Chip is the GPIO chip: a name such as "gpiochip0" (the chardev
	// /dev/gpiochip0) or its kernel label (for example "pinctrl-bcm2711").
	Chip string
	// Line is the line offset on that chip (not a header pin number).
	Line int
	// Dir is how the line is wired on this board.
	Dir Direction
	// ActiveLow inverts the electrical level: a logical true is a low line.
	ActiveLow bool
}

// SerialPort is one serial port of the board.
type SerialPort struct {
	// Device is the path of the tty, for example /dev/ttyS1.
	Device string
	// RS485 tells that the port is an RS-485 transceiver whose driver
	// direction the kernel switches (TIOCSRS485).
	RS485 bool
}

// RealTime is the scheduling of the 5 ms scan goroutine: when it asks
// for a CPU or a priority, the scan engine's goroutine locks itself to
// its OS thread and Apply sets its CPU affinity to CPU and its policy to
// SCHED_FIFO with Priority (edged's --rt-priority and --rt-cpu override
// them).
type RealTime struct {
	// CPU is the CPU to pin the scan thread to; -1 means no pinning.
	CPU int
	// Priority is the SCHED_FIFO priority (1..99); 0 means keep SCHED_OTHER.
	Priority int
}

// Wanted reports whether rt asks for anything: a priority or a CPU.
func (rt RealTime) Wanted() bool { return rt.Priority > 0 || rt.CPU >= 0 }

// Profile is the description of one board.
type Profile struct {
	// Name is the name used in the configuration ("board": "rpi4").
	Name string
	// Arch is the GOARCH the board runs ("arm64", "arm"; "" for any).
	Arch string
	// Description is one line for humans.
	Description string
	// GPIO maps a logical pin name ("DI1") to its chip and line.
	GPIO map[string]GPIOPin
	// Serial maps a logical port name ("RS485-1") to its device.
	Serial map[string]SerialPort
	// Watchdog is the hardware watchdog device, "" if the board has none.
	Watchdog string
	// RT are the real-time scheduling hints for the scan goroutine.
	RT RealTime
}

// Pin returns the pin called name.
func (p *Profile) Pin(name string) (GPIOPin, bool) {
	g, ok := p.GPIO[name]
	return g, ok
}

// PinNames returns the logical pin names, sorted.
func (p *Profile) PinNames() []string { return sortedKeys(p.GPIO) }

// SerialNames returns the logical serial port names, sorted.
func (p *Profile) SerialNames() []string { return sortedKeys(p.Serial) }

// Validate checks a profile: a name, pins with a chip, a line ≥ 0 and a
// direction, no two names on the same chip line, serial ports with a device.
func (p *Profile) Validate() error {
	var errs []string
	if p.Name == "" {
		errs = append(errs, "name: missing")
	}
	used := map[string]string{}
	for _, n := range p.PinNames() {
		g := p.GPIO[n]
		if g.Chip == "" {
			errs = append(errs, fmt.Sprintf("gpio[%s].chip: missing", n))
		}
		if g.Line < 0 {
			errs = append(errs, fmt.Sprintf("gpio[%s].line: %d is negative", n, g.Line))
		}
		if g.Dir != Input && g.Dir != Output {
			errs = append(errs, fmt.Sprintf("gpio[%s].dir: %v is neither input nor output", n, g.Dir))
		}
		k := fmt.Sprintf("%s/%d", g.Chip, g.Line)
		if o, ok := used[k]; ok {
			errs = append(errs, fmt.Sprintf("gpio[%s]: line %s already used by %s", n, k, o))
		}
		used[k] = n
	}
	for _, n := range p.SerialNames() {
		if p.Serial[n].Device == "" {
			errs = append(errs, fmt.Sprintf("serial[%s].device: missing", n))
		}
	}
	if p.RT.Priority < 0 || p.RT.Priority > 99 {
		errs = append(errs, fmt.Sprintf("rt.priority: %d is outside 0..99", p.RT.Priority))
	}
	if p.RT.CPU < -1 {
		errs = append(errs, fmt.Sprintf("rt.cpu: %d is below -1", p.RT.CPU))
	}
	if len(errs) > 0 {
		return fmt.Errorf("board %q: %s", p.Name, strings.Join(errs, "; "))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	s := make([]string, 0, len(m))
	for k := range m {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}

// builtin returns a fresh copy of each profile on every call, so a caller
// may modify what Lookup returns.
var builtin = map[string]func() Profile{
	"sim":           Sim,
	"rpi4":          RPi4,
	"generic-armv7": GenericARMv7,
}

// Names returns the names of the built-in profiles, sorted.
func Names() []string { return sortedKeys(builtin) }

// Lookup returns the built-in profile called name. The error lists the
// known names.
func Lookup(name string) (Profile, error) {
	f, ok := builtin[name]
	if !ok {
		return Profile{}, fmt.Errorf("board: unknown board %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return f(), nil
}

// SimChip is the chip name of the simulated board's GPIO lines.
const SimChip = "sim"

// Sim is the simulated board used by the built-in simulator and the tests:
// inputs DI1..DI4 on lines 0..3 and outputs DO1..DO4 on lines 4..7 of the chip
// "sim"; drivers/gpio's simulated backend wires DOn back to DIn.
// Its serial port is a pty created at run time, so it lists none.
func Sim() Profile {
	p := Profile{
		Name:        "sim",
		Description: "simulated board: DO1..DO4 loop back to DI1..DI4",
		GPIO:        map[string]GPIOPin{},
		Serial:      map[string]SerialPort{},
		RT:          RealTime{CPU: -1, Priority: 0},
	}
	for i := 0; i < 4; i++ {
		p.GPIO[fmt.Sprintf("DI%d", i+1)] = GPIOPin{Chip: SimChip, Line: i, Dir: Input}
		p.GPIO[fmt.Sprintf("DO%d", i+1)] = GPIOPin{Chip: SimChip, Line: 4 + i, Dir: Output}
	}
	return p
}

// RPi4 is a Raspberry Pi 4 Model B (arm64) used as a gateway. It is an example
// wiring, documented so that a real installation can copy and adapt it:
//
//	DI1..DI4  BCM GPIO 5, 6, 13, 19   (header pins 29, 31, 33, 35)
//	DO1..DO4  BCM GPIO 17, 27, 22, 23 (header pins 11, 13, 15, 16)
//
// all on gpiochip0 (label "pinctrl-bcm2711", the line offset is the BCM
// number). RS485-1 is the PL011 UART /dev/ttyAMA0 on GPIO 14/15 driving a
// transceiver whose DE line the kernel switches (dtoverlay with rs485 support);
// RS232-1 is the mini UART /dev/ttyS0. The watchdog is the BCM2835 one,
// /dev/watchdog0. The scan runs on CPU 3 (isolate it with isolcpus=3) at
// SCHED_FIFO priority 80.
func RPi4() Profile {
	return Profile{
		Name:        "rpi4",
		Arch:        "arm64",
		Description: "Raspberry Pi 4 Model B, example wiring on the 40-pin header",
		GPIO: map[string]GPIOPin{
			"DI1": {Chip: "gpiochip0", Line: 5, Dir: Input},
			"DI2": {Chip: "gpiochip0", Line: 6, Dir: Input},
			"DI3": {Chip: "gpiochip0", Line: 13, Dir: Input},
			"DI4": {Chip: "gpiochip0", Line: 19, Dir: Input},
			"DO1": {Chip: "gpiochip0", Line: 17, Dir: Output},
			"DO2": {Chip: "gpiochip0", Line: 27, Dir: Output},
			"DO3": {Chip: "gpiochip0", Line: 22, Dir: Output},
			"DO4": {Chip: "gpiochip0", Line: 23, Dir: Output},
		},
		Serial: map[string]SerialPort{
			"RS485-1": {Device: "/dev/ttyAMA0", RS485: true},
			"RS232-1": {Device: "/dev/ttyS0"},
		},
		Watchdog: "/dev/watchdog0",
		RT:       RealTime{CPU: 3, Priority: 80},
	}
}

// GenericARMv7 is a generic 32-bit ARM (GOARCH=arm, GOARM=7) DIN-rail gateway:
// eight inputs on gpiochip0 lines 0..7, four outputs on gpiochip1 lines 0..3,
// two RS-485 ports /dev/ttyS1 and /dev/ttyS2, the watchdog /dev/watchdog,
// the scan on CPU 1 at SCHED_FIFO priority 70. Adapt the lines to the
// actual device tree.
func GenericARMv7() Profile {
	p := Profile{
		Name:        "generic-armv7",
		Arch:        "arm",
		Description: "generic ARMv7 gateway: 8 DI on gpiochip0, 4 DO on gpiochip1, 2 RS-485",
		GPIO:        map[string]GPIOPin{},
		Serial: map[string]SerialPort{
			"RS485-1": {Device: "/dev/ttyS1", RS485: true},
			"RS485-2": {Device: "/dev/ttyS2", RS485: true},
		},
		Watchdog: "/dev/watchdog",
		RT:       RealTime{CPU: 1, Priority: 70},
	}
	for i := 0; i < 8; i++ {
		p.GPIO[fmt.Sprintf("DI%d", i+1)] = GPIOPin{Chip: "gpiochip0", Line: i, Dir: Input}
	}
	for i := 0; i < 4; i++ {
		p.GPIO[fmt.Sprintf("DO%d", i+1)] = GPIOPin{Chip: "gpiochip1", Line: i, Dir: Output}
	}
	return p
}
