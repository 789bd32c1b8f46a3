// Package devices turns a configuration (plc/config) into the scan engine's
// devices and tags (plc.Config): the adapters between the engine's Device
// interface and the drivers (drivers/modbus, drivers/gpio).
//
// # What Build makes
//
//   - One plc.Device per modbus-tcp device: one connection (modbus.TCP) to its
//     address, polling its unit id.
//   - One plc.Device per modbus-rtu device: its unit ids on one serial bus
//     (modbus.RTU), served one after another. Two configured devices on the
//     same port share one bus object, whose queue serializes their
//     transactions; each is its own plc.Device (its own tags and NodeIds).
//     A port of the board profile marked RS485 gets the kernel's RS-485 mode
//     (RTS high while sending).
//   - One plc.Device per gpio device: a drivers/gpio Driver on the board
//     of the configuration.
//   - A sim device (kind "sim") is polled over Modbus TCP, like a modbus-tcp
//     device with config.DefaultModbusTCP settings, at Options.SimAddress:
//     the address of a running plc/sim simulator.
//
// The tags are plc.Tags in the configuration's order — devices in order,
// each device's tags in order — so that the handle of a tag (its index in
// plc.Config.Tags) is its position in that walk, and a binding finds a tag's
// configuration (units, scaling, description) by walking the configuration
// the same way. A tag's scan class becomes a duration (the class's multiple
// of the base cycle), its access mode plc.Read or plc.ReadWrite, its type
// TagType.
//
// # Engine settings
//
// plc.Config.Period is the base cycle. The engine has one NoCommAfter for
// all devices, while the configuration has one no_comm_timeout_ms per
// device: Build uses the smallest (a device never shows a stale value longer
// than its own setting; another may turn Bad_NoCommunication earlier than
// its own setting says). PollTimeout is twice the largest Modbus request
// timeout, at least 1 s: a request is bounded by its device's timeout_ms
// (see the Modbus adapter), so a poll that runs past PollTimeout is one that
// has many blocks on a device that answers slowly, and counts as not
// answering. The other engine settings keep the engine's defaults.
//
// # Modbus adapter
//
// On Bind the adapter turns each bound tag into a modbus.Point (area and
// address from config.ParseAddress, type, bit, string length, order override,
// scaling, unit) and plans the block reads with modbus.Plan (the device's
// max_registers, max_bits and max_gap, the gap applying to registers and bits
// alike); Bind again re-plans. A Poll reads only the blocks that hold a due
// tag, in plan order, each request bounded by the device's timeout_ms (and by
// the poll's deadline; the request's context, when its deadline is the
// timeout's, is one small allocation), reusing one buffer per block, and
// decodes each due tag from its block:
//
//   - A Modbus exception answer gives the tags of that block the mapped status
//     (modbus.ExceptionStatus: exception 2, illegal data address, is
//     Bad_ConfigurationError...). When the block holds more than one point,
//     the adapter splits it at once: it reads each due point of the block
//     alone, so that the exception lands on the tag that caused it only, and
//     keeps reading that block point by point until the next Bind (a device
//     that refuses an address inside a merged block would otherwise fail the
//     block at every poll). Set max_gap to 0 for devices with holes in their
//     map to avoid this.
//   - A communication failure (timeout, connection refused or lost: a status
//     for which plc.Status.IsCommunication is true) stops reading that unit
//     for this poll; its unread due tags get that status, which the engine
//     shows as Uncertain_LastUsableValue and later Bad_NoCommunication. When no
//     block of the poll was read, Poll returns the error: the device did not
//     answer.
//   - A decoding failure gives the tag the status of the error.
//
// Values: a tag of a Modbus integer or float type gets a Value of that type;
// a bool is a coil, a discrete input or a bit of a register. With scaling
// the value is in engineering units: a Float64 tag (the configuration's rule
// for a scaled tag), except a scaled float32, which stays a Float32 tag.
//
// Writes: a coil with function code 5, one register with 6, several with 16
// (modbus.Client.WritePoint; function code 15, several coils, is never
// needed for one tag). A bool on a bit of a holding register is a
// read-modify-write: the register is read (function code 3), the bit
// changed and the register written back (6); this is not atomic on the
// device, so a PLC that changes the other bits of that register between
// the two requests loses that change. A scaled tag is written in engineering
// units, converted back to the raw value. A write error is a plc.Status
// (the mapped exception, Bad_Timeout, Bad_NoCommunication...).
//
// Stats: requests, errors, timeouts, reconnects and the last error are the
// driver's counters summed over the device's unit ids (modbus.Client.Stats;
// reconnects are the link's); LastErrorTime is when the adapter saw the last
// failed request; RoundTrip is the round trip of the last successful request;
// State is the link's state ("connected", "connecting", "down").
//
// # GPIO adapter
//
// The GPIO device opens the pins named by its tags' addresses with
// drivers/gpio (each input with its debounce, each output driven low at
// start). A Poll scans every pin once (gpio.Driver.Scan, so debounce counts
// polls: scan GPIO tags in the base cycle's class for a debounce in cycles)
// and gives each due tag the pin's level, or Bad_DeviceFailure when the read
// of that pin failed — never a silent false. A Write drives an output and
// fails with Bad_NotWritable on an input. Options.GPIO is the backend;
// without it, board "sim" uses the simulated board (outputs looped back to
// inputs) and any other board the Linux GPIO character device.
package devices

import (
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/edged/edged/board"
	"github.com/edged/edged/drivers/gpio"
	"github.com/edged/edged/drivers/modbus"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/goburrow/serial"
)

// Options are what Build cannot take from the configuration.
type Options struct {
	// GPIO is the backend of gpio devices. Nil: gpio.NewSim on board
	// "sim", gpio.NewChardev on any other board.
	GPIO gpio.Backend
	// SimAddress is the Modbus TCP address of a running simulator
	// (plc/sim), where devices of kind "sim" are polled. A sim device
	// without it is an error.
	SimAddress string
	// TCP, if set, adjusts the settings of each Modbus TCP link before it
	// is made (tests shorten the reconnect back-off, say).
	TCP func(device string, cfg *modbus.TCPConfig)
	// RTU, if set, adjusts the settings of each serial bus before it is
	// made (tests open a pty or a fake line through cfg.Open).
	RTU func(port string, cfg *modbus.SerialConfig)
}

// Build turns cfg (validated again here) into the engine's configuration:
// the devices, with their drivers made but not connected (a Modbus link
// connects on its first request; GPIO lines are opened now), and the tags.
// The returned Closer closes the drivers: call it after the engine's Run
// has returned. Errors name the device, the tag and the field, as
// "devices[plc1].tags[Temp].address: ...".
func Build(cfg *config.Config, opts Options) (plc.Config, io.Closer, error) {
	if err := cfg.Validate(); err != nil {
		return plc.Config{}, nil, err
	}
	base := time.Duration(cfg.BaseCycleMs) * time.Millisecond
	out := plc.Config{Period: base}
	cl := &closers{}
	buses := map[string]*modbus.RTU{}
	var prof *board.Profile
	var errs []error
	var maxTimeout time.Duration
	for i := range cfg.Devices {
		d := &cfg.Devices[i]
		dp := "devices[" + d.Name + "]"
		nc := time.Duration(d.NoCommTimeoutMs) * time.Millisecond
		if out.NoCommAfter == 0 || nc < out.NoCommAfter {
			out.NoCommAfter = nc
		}
		var dev plc.Device
		var err error
		switch d.Kind {
		case config.KindModbusTCP, config.KindSim:
			m := d.ModbusTCP
			path := dp + ".modbus_tcp.address"
			if d.Kind == config.KindSim {
				m = config.DefaultModbusTCP(opts.SimAddress)
				path = dp + ".kind"
				if opts.SimAddress == "" {
					errs = append(errs, fmt.Errorf("%s: sim: no simulator address (devices.Options.SimAddress)", path))
					continue
				}
			}
			if _, port, _ := net.SplitHostPort(m.Address); port == "0" {
				errs = append(errs, fmt.Errorf("%s: %q: port 0 is the simulator's placeholder; start the simulator (plc/sim) and use the configuration it returns", path, m.Address))
				continue
			}
			tc := modbus.TCPConfig{Address: m.Address, Timeout: time.Duration(m.TimeoutMs) * time.Millisecond}
			if opts.TCP != nil {
				opts.TCP(d.Name, &tc)
			}
			if err := tc.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", path, err))
				continue
			}
			link := modbus.NewTCP(tc)
			cl.add(link)
			units := map[uint8]*modbus.Client{uint8(*m.UnitID): link.Client(uint8(*m.UnitID))}
			maxTimeout = max(maxTimeout, tc.Timeout)
			dev, err = newModbus(d, modbusSettings{
				unit: uint8(*m.UnitID), units: units, order: m.Order, timeout: tc.Timeout,
				plan: planOptions(m.MaxRegisters, m.MaxBits, m.MaxGap),
			})
		case config.KindModbusRTU:
			m := d.ModbusRTU
			if prof == nil {
				p, perr := board.Lookup(cfg.Board)
				if perr != nil {
					errs = append(errs, fmt.Errorf("board: %w", perr))
					continue
				}
				prof = &p
			}
			dev, err = buildRTU(d, m, prof, buses, cl, opts)
			maxTimeout = max(maxTimeout, time.Duration(m.TimeoutMs)*time.Millisecond)
		case config.KindGPIO:
			if prof == nil {
				p, perr := board.Lookup(cfg.Board)
				if perr != nil {
					errs = append(errs, fmt.Errorf("board: %w", perr))
					continue
				}
				prof = &p
			}
			be := opts.GPIO
			if be == nil {
				if prof.Name == "sim" {
					be = gpio.NewSim(*prof)
				} else {
					be = gpio.NewChardev()
				}
			}
			var g *gpioDevice
			g, err = newGPIO(d, *prof, be)
			if g != nil {
				cl.add(g)
				dev = g
			}
		default:
			err = fmt.Errorf("%s.kind: %q is not supported", dp, d.Kind)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out.Devices = append(out.Devices, plc.DeviceConfig{Name: d.Name, Device: dev})
		for j := range d.Tags {
			t := &d.Tags[j]
			acc := plc.Read
			if t.Access == config.ReadWrite {
				acc = plc.ReadWrite
			}
			out.Tags = append(out.Tags, plc.Tag{
				Device:  d.Name,
				Name:    t.Name,
				Type:    TagType(t),
				Access:  acc,
				Scan:    time.Duration(cfg.ScanClasses[t.ScanClass]) * base,
				Address: t.Address,
			})
		}
	}
	if len(errs) > 0 {
		cl.Close()
		return plc.Config{}, nil, errors.Join(errs...)
	}
	out.PollTimeout = max(time.Second, 2*maxTimeout)
	return out, cl, nil
}

// buildRTU makes the device of a modbus-rtu configuration on the bus of
// its port, shared with the other devices on that port.
func buildRTU(d *config.Device, m *config.ModbusRTU, prof *board.Profile, buses map[string]*modbus.RTU, cl *closers, opts Options) (plc.Device, error) {
	dev, rs485 := m.Port, false
	if sp, ok := prof.Serial[m.Port]; ok {
		dev, rs485 = sp.Device, sp.RS485
	}
	bus, ok := buses[dev]
	if !ok {
		sc := modbus.SerialConfig{
			Device: dev, BaudRate: m.Baud, DataBits: m.DataBits, Parity: string(m.Parity), StopBits: m.StopBits,
			Timeout: time.Duration(m.TimeoutMs) * time.Millisecond,
		}
		if rs485 {
			// The kernel drives the transceiver's DE line with RTS.
			sc.RS485 = serial.RS485Config{Enabled: true, RtsHighDuringSend: true}
		}
		if opts.RTU != nil {
			opts.RTU(m.Port, &sc)
		}
		if err := sc.Validate(); err != nil {
			return nil, fmt.Errorf("devices[%s].modbus_rtu: %w", d.Name, err)
		}
		bus = modbus.NewRTU(sc)
		buses[dev] = bus
		cl.add(bus)
	}
	units := map[uint8]*modbus.Client{}
	for _, u := range m.Units {
		units[uint8(u)] = bus.Client(uint8(u))
	}
	return newModbus(d, modbusSettings{
		unit: uint8(m.Units[0]), units: units, order: m.Order,
		timeout: time.Duration(m.TimeoutMs) * time.Millisecond,
		plan:    planOptions(m.MaxRegisters, m.MaxBits, m.MaxGap),
	})
}

func planOptions(regs, bits int, gap *int) modbus.PlanOptions {
	o := modbus.PlanOptions{MaxRegisters: regs, MaxBits: bits}
	if gap != nil {
		o.MaxGapRegisters, o.MaxGapBits = *gap, *gap
	}
	return o
}

// TagType returns the type of t's values in the process image: t's type,
// except that a scaled tag holds engineering units as a Float64 (a scaled
// float32 stays a Float32).
func TagType(t *config.Tag) plc.Type {
	if t.Scaling != nil && t.Type != config.Float32 {
		return plc.Float64
	}
	typ, _ := plc.ParseType(string(t.Type))
	return typ
}

// closers closes the drivers Build made, all of them, in reverse order.
type closers struct{ cs []io.Closer }

func (c *closers) add(x io.Closer) { c.cs = append(c.cs, x) }

// Close closes every driver and returns their errors joined.
func (c *closers) Close() error {
	var errs []error
	for i := len(c.cs) - 1; i >= 0; i-- {
		if err := c.cs[i].Close(); err != nil && !errors.Is(err, modbus.ErrClosed) && !errors.Is(err, gpio.ErrClosed) {
			errs = append(errs, err)
		}
	}
	c.cs = nil
	return errors.Join(errs...)
}
