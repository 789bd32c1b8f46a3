// Package devices turns a configuration (plc/config) into the scan engine's
// devices and tags (plc.Config): Build opens the drivers (drivers/modbus,
// drivers/gpio) the configuration names and adapts them to plc.Device.
// How devices, buses and engine settings are derived is in docs/devices.md.
package devices

import (
	"context"
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
	// SimDial, if set, is the dialer of the Modbus TCP links to
	// SimAddress (the simulator's in-memory connection, sim.Sim.Dial).
	SimDial func(ctx context.Context, network, address string) (net.Conn, error)
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
// The returned Drivers close the drivers: call Close after the engine's
// Run has returned. Errors name the device, the tag and the field, as
// "devices[plc1].tags[Temp].address: ...".
func Build(cfg *config.Config, opts Options) (plc.Config, *Drivers, error) {
	if err := cfg.Validate(); err != nil {
		return plc.Config{}, nil, err
	}
	ds := &Drivers{opts: opts, groups: map[string]*group{}}
	out, err := ds.build(cfg, nil)
	if err != nil {
		return plc.Config{}, nil, err
	}
	return out, ds, nil
}

// build makes the drivers of the devices of cfg that are not in keep (by
// group key), adds their groups to ds, and returns the engine's
// configuration of all of cfg, with the Devices of keep's groups for the
// others.
func (ds *Drivers) build(cfg *config.Config, keep map[string]*group) (plc.Config, error) {
	b := &builder{cfg: cfg, opts: ds.opts, buses: map[string]*modbus.RTU{}}
	out := plc.Config{Period: time.Duration(cfg.BaseCycleMs) * time.Millisecond}
	made := map[string]*group{}
	var errs []error
	for i := range cfg.Devices {
		d := &cfg.Devices[i]
		gk := groupKey(cfg, d)
		if g := keep[gk]; g != nil {
			out.Devices = append(out.Devices, plc.DeviceConfig{Name: d.Name, Device: g.devs[d.Name]})
			out.Tags = appendTags(out.Tags, cfg, d)
			b.maxTimeout = max(b.maxTimeout, deviceTimeout(d))
			continue
		}
		g := made[gk]
		if g == nil {
			g = &group{key: gk, devs: map[string]plc.Device{}, sig: groupSig(cfg, gk)}
			made[gk] = g
		}
		if nc := time.Duration(d.NoCommTimeoutMs) * time.Millisecond; out.NoCommAfter == 0 || nc < out.NoCommAfter {
			out.NoCommAfter = nc
		}
		dev, err := b.device(d, &g.cl)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g.devs[d.Name] = dev
		out.Devices = append(out.Devices, plc.DeviceConfig{Name: d.Name, Device: dev})
		out.Tags = appendTags(out.Tags, cfg, d)
	}
	if len(errs) > 0 {
		for _, g := range made {
			g.cl.Close()
		}
		return plc.Config{}, errors.Join(errs...)
	}
	for k, g := range made {
		ds.groups[k] = g
	}
	out.PollTimeout = max(time.Second, 2*b.maxTimeout)
	return out, nil
}

// builder makes the drivers of one configuration.
type builder struct {
	cfg        *config.Config
	opts       Options
	buses      map[string]*modbus.RTU // the serial buses made, by port
	prof       *board.Profile         // the board's, once looked up
	maxTimeout time.Duration          // of the devices' requests
}

// device makes the driver of d, its closers added to cl.
func (b *builder) device(d *config.Device, cl *closers) (plc.Device, error) {
	switch d.Kind {
	case config.KindModbusTCP, config.KindSim:
		return b.modbusTCP(d, cl)
	case config.KindModbusRTU:
		prof, err := b.board()
		if err != nil {
			return nil, err
		}
		b.maxTimeout = max(b.maxTimeout, time.Duration(d.ModbusRTU.TimeoutMs)*time.Millisecond)
		return buildRTU(d, d.ModbusRTU, prof, b.buses, cl, b.opts)
	case config.KindGPIO:
		prof, err := b.board()
		if err != nil {
			return nil, err
		}
		be := b.opts.GPIO
		if be == nil {
			if prof.Name == "sim" {
				be = gpio.NewSim(*prof)
			} else {
				be = gpio.NewChardev()
			}
		}
		g, err := newGPIO(d, *prof, be)
		if g == nil {
			return nil, err
		}
		cl.add(g)
		return g, err
	}
	return nil, fmt.Errorf("devices[%s].kind: %q is not supported", d.Name, d.Kind)
}

// board is the configuration's board profile.
func (b *builder) board() (*board.Profile, error) {
	if b.prof == nil {
		p, err := board.Lookup(b.cfg.Board)
		if err != nil {
			return nil, fmt.Errorf("board: %w", err)
		}
		b.prof = &p
	}
	return b.prof, nil
}

// modbusTCP makes the driver of a Modbus TCP device, or of the built-in
// simulator (kind sim): a link of its own and its unit's client.
func (b *builder) modbusTCP(d *config.Device, cl *closers) (plc.Device, error) {
	m := d.ModbusTCP
	path := "devices[" + d.Name + "].modbus_tcp.address"
	if d.Kind == config.KindSim {
		m = config.DefaultModbusTCP(b.opts.SimAddress)
		path = "devices[" + d.Name + "].kind"
		if b.opts.SimAddress == "" {
			return nil, fmt.Errorf("%s: sim: no simulator address (devices.Options.SimAddress)", path)
		}
	}
	if _, port, _ := net.SplitHostPort(m.Address); port == "0" {
		return nil, fmt.Errorf("%s: %q: port 0 is the simulator's placeholder; start the simulator (plc/sim) and use the configuration it returns", path, m.Address)
	}
	tc := modbus.TCPConfig{Address: m.Address, Timeout: time.Duration(m.TimeoutMs) * time.Millisecond}
	if b.opts.TCP != nil {
		b.opts.TCP(d.Name, &tc)
	}
	// The simulator's link is in memory, unless a test dials it its own
	// way; its polls then never wait (Inline).
	inMemory := b.opts.SimDial != nil && tc.Address == b.opts.SimAddress && tc.Dial == nil
	if inMemory {
		tc.Dial = b.opts.SimDial
	}
	if err := tc.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	link := modbus.NewTCP(tc)
	cl.add(link)
	units := map[uint8]*modbus.Client{uint8(*m.UnitID): link.Client(uint8(*m.UnitID))}
	b.maxTimeout = max(b.maxTimeout, tc.Timeout)
	return newModbus(d, modbusSettings{
		unit: uint8(*m.UnitID), units: units, order: m.Order, // the link's Timeout bounds each request
		plan: planOptions(m.MaxRegisters, m.MaxBits, m.MaxGap), inline: inMemory,
	})
}

// appendTags appends the engine's tags of device d of cfg.
func appendTags(tags []plc.Tag, cfg *config.Config, d *config.Device) []plc.Tag {
	base := time.Duration(cfg.BaseCycleMs) * time.Millisecond
	for j := range d.Tags {
		t := &d.Tags[j]
		acc := plc.Read
		if t.Access == config.ReadWrite {
			acc = plc.ReadWrite
		}
		tags = append(tags, plc.Tag{
			Device:    d.Name,
			Name:      t.Name,
			Type:      TagType(t),
			Access:    acc,
			Scan:      time.Duration(cfg.ScanClasses[t.ScanClass]) * base,
			Address:   t.Address,
			WriteMin:  clonePtr(t.WriteMin),
			WriteMax:  clonePtr(t.WriteMax),
			NonFinite: t.AllowNonFinite,
		})
	}
	return tags
}

// deviceTimeout is the request timeout of d's driver, 0 for GPIO.
func deviceTimeout(d *config.Device) time.Duration {
	switch {
	case d.ModbusTCP != nil:
		return time.Duration(d.ModbusTCP.TimeoutMs) * time.Millisecond
	case d.ModbusRTU != nil:
		return time.Duration(d.ModbusRTU.TimeoutMs) * time.Millisecond
	}
	return 0
}

// clonePtr returns a pointer to a copy of *p, nil for nil: the engine's
// tags share nothing with the configuration.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
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
