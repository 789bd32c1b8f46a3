package devices

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/edged/edged/board"
	"github.com/edged/edged/drivers/gpio"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
)

// gpioDevice is the plc.Device of a board's GPIO; see the package
// documentation.
type gpioDevice struct {
	name  string
	drv   *gpio.Driver
	pins  map[string]int // pin name → index in the readings of Scan
	local handleMap      // handle → pin index
	names []string       // handle's pin name, by pin index

	mu      sync.Mutex
	scans   uint64
	writes  uint64
	errs    uint64
	lastErr string
	lastAt  time.Time
	closed  bool
}

var _ plc.Device = (*gpioDevice)(nil)

func newGPIO(d *config.Device, prof board.Profile, be gpio.Backend) (*gpioDevice, error) {
	pins := make([]gpio.PinConfig, 0, len(d.Tags))
	for i := range d.Tags {
		t := &d.Tags[i]
		pins = append(pins, gpio.PinConfig{Name: t.Address, Debounce: t.Debounce})
	}
	drv, err := gpio.Open(prof, be, pins)
	if err != nil {
		return nil, fmt.Errorf("devices[%s]: board %s: %w", d.Name, prof.Name, err)
	}
	g := &gpioDevice{name: d.Name, drv: drv, pins: map[string]int{}}
	for i, n := range drv.Names() {
		g.pins[n] = i
		g.names = append(g.names, n)
	}
	return g, nil
}

// Bind implements plc.Device: a tag's address is its pin.
func (g *gpioDevice) Bind(bound []plc.BoundTag) error {
	local := newHandleMap(bound)
	var errs []error
	for _, b := range bound {
		p, ok := g.pins[b.Tag.Address]
		if !ok {
			errs = append(errs, fmt.Errorf("devices[%s].tags[%s].address: pin %q was not opened", g.name, b.Tag.Name, b.Tag.Address))
			continue
		}
		if b.Tag.Type != plc.Bool {
			errs = append(errs, fmt.Errorf("devices[%s].tags[%s].type: %v on a GPIO pin: only Bool", g.name, b.Tag.Name, b.Tag.Type))
			continue
		}
		local.set(b.Handle, int32(p))
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	g.local = local
	return nil
}

// Inline implements plc.Inline: reading and setting lines does not wait
// (the character device's ioctls, or the simulated board's memory).
func (g *gpioDevice) Inline() bool { return true }

// Poll implements plc.Device: one Scan of every pin, each due tag gets its
// pin's level or, when the pin's read failed, Bad_DeviceFailure.
func (g *gpioDevice) Poll(ctx context.Context, due []plc.Handle, out []plc.Sample) error {
	rs := g.drv.Scan()
	failed := 0
	var first error
	for k, h := range due {
		i := g.local.get(h)
		if i < 0 {
			out[k] = plc.Sample{Status: status.BadNodeIDUnknown}
			continue
		}
		r := &rs[i]
		switch {
		case r.Err == nil:
			out[k] = plc.Sample{Value: plc.BoolValue(r.Value), Status: status.Good}
		case errors.Is(r.Err, gpio.ErrNotSampled):
			out[k] = plc.Sample{Status: status.BadWaitingForInitialData}
		default:
			out[k] = plc.Sample{Status: status.BadDeviceFailure}
			failed++
			if first == nil {
				first = r.Err
			}
		}
	}
	g.mu.Lock()
	g.scans++
	g.errs += uint64(failed)
	if first != nil {
		g.lastErr, g.lastAt = first.Error(), time.Now()
	}
	g.mu.Unlock()
	return nil
}

// Write implements plc.Device: it drives the output pin of h.
func (g *gpioDevice) Write(ctx context.Context, h plc.Handle, v plc.Value) error {
	i := g.local.get(h)
	if i < 0 {
		return fmt.Errorf("devices[%s]: handle %d: %w", g.name, h, status.BadNodeIDUnknown)
	}
	name := g.names[i]
	err := g.drv.Write(name, v.Bool())
	g.mu.Lock()
	g.writes++
	if err != nil {
		g.errs++
		g.lastErr, g.lastAt = err.Error(), time.Now()
	}
	g.mu.Unlock()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gpio.ErrNotOutput):
		return fmt.Errorf("devices[%s]: pin %s: %w: %w", g.name, name, status.BadNotWritable, err)
	case errors.Is(err, gpio.ErrClosed):
		return fmt.Errorf("devices[%s]: pin %s: %w: %w", g.name, name, status.BadShutdown, err)
	default:
		return fmt.Errorf("devices[%s]: pin %s: %w: %w", g.name, name, status.BadDeviceFailure, err)
	}
}

// Stats implements plc.Device: Requests counts scans and writes, Errors the
// failed pin reads and writes.
func (g *gpioDevice) Stats() plc.DeviceStats {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := "open"
	if g.closed {
		st = "closed"
	}
	return plc.DeviceStats{
		Requests: g.scans + g.writes, Errors: g.errs,
		LastError: g.lastErr, LastErrorTime: g.lastAt, State: st,
	}
}

// Close releases the pins.
func (g *gpioDevice) Close() error {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	return g.drv.Close()
}
