package devices

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/edged/edged/board"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
)

// Drivers are the drivers Build made, in groups that are made and closed
// together: one Modbus TCP device, one GPIO device, or every device on
// one serial port (they share the bus). Change makes the drivers of
// another configuration and keeps the groups that stay the same.
type Drivers struct {
	opts   Options
	groups map[string]*group
}

// group is the drivers of one group.
type group struct {
	key  string
	sig  [sha256.Size]byte // of the configuration of its devices: equal sig, same drivers
	devs map[string]plc.Device
	cl   closers
}

// groupKey is the group of device d of cfg.
func groupKey(cfg *config.Config, d *config.Device) string {
	if d.Kind == config.KindModbusRTU && d.ModbusRTU != nil {
		port := d.ModbusRTU.Port
		if p, err := board.Lookup(cfg.Board); err == nil {
			if sp, ok := p.Serial[port]; ok {
				port = sp.Device
			}
		}
		return "bus:" + port
	}
	return "dev:" + d.Name
}

// groupSig is the SHA-256 of the configuration of the devices of group
// key in cfg, in their order, with the board for the kinds whose drivers
// depend on it (a hash, not the text: a group of 1,000 tags would keep
// about 100 KB).
func groupSig(cfg *config.Config, key string) [sha256.Size]byte {
	var devs []config.Device
	board := ""
	for i := range cfg.Devices {
		d := &cfg.Devices[i]
		if groupKey(cfg, d) == key {
			devs = append(devs, *d)
			if d.Kind == config.KindModbusRTU || d.Kind == config.KindGPIO {
				board = cfg.Board
			}
		}
	}
	b, _ := json.Marshal(struct {
		Board string
		Devs  []config.Device
		Base  int
		Scan  map[string]int
	}{board, devs, cfg.BaseCycleMs, cfg.ScanClasses})
	return sha256.Sum256(b)
}

// Change returns the engine's configuration of cfg (validated here),
// with the drivers of the groups whose configuration is unchanged kept
// (the same plc.Device values, so that plc.Engine.Reconfigure keeps them
// running) and new drivers for the others, and the Drivers that now
// hold them. retire closes the drivers of the groups that did not stay:
// call it after Reconfigure returned. On an error nothing changes and
// the new drivers made so far are closed.
func (ds *Drivers) Change(cfg *config.Config) (_ plc.Config, _ *Drivers, retire func() error, _ error) {
	if err := cfg.Validate(); err != nil {
		return plc.Config{}, nil, nil, err
	}
	keep := map[string]*group{}
	for k, g := range ds.groups {
		if groupSig(cfg, k) == g.sig {
			keep[k] = g
		}
	}
	next := &Drivers{opts: ds.opts, groups: map[string]*group{}}
	out, err := next.build(cfg, keep)
	if err != nil {
		return plc.Config{}, nil, nil, err
	}
	var old []*group
	for k, g := range ds.groups {
		if keep[k] == nil {
			old = append(old, g)
		} else {
			next.groups[k] = g
		}
	}
	slices.SortFunc(old, func(a, b *group) int { return strings.Compare(a.key, b.key) })
	return out, next, func() error {
		var errs []error
		for _, g := range old {
			errs = append(errs, g.cl.Close())
		}
		return errors.Join(errs...)
	}, nil
}

// CloseNew closes the drivers of ds that old does not have: those a
// Change made, when the change is not used after all.
func (ds *Drivers) CloseNew(old *Drivers) error {
	var errs []error
	for k, g := range ds.groups {
		if old.groups[k] != g {
			errs = append(errs, g.cl.Close())
		}
	}
	return errors.Join(errs...)
}

// Close closes every driver and returns their errors joined.
func (ds *Drivers) Close() error {
	var errs []error
	keys := make([]string, 0, len(ds.groups))
	for k := range ds.groups {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range slices.Backward(keys) {
		errs = append(errs, ds.groups[k].cl.Close())
	}
	return errors.Join(errs...)
}
