package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/internal/testutil/uaclient"
	"github.com/edged/edged/opcua/ua"
	pconfig "github.com/edged/edged/plc/config"
)

// The memory role (make bench-memory): edged with a configuration of
// many tags on simulated devices, its resident memory idle and with many
// sessions reading them.

// genConfig writes the configuration of the memory benchmark: the
// simulator's, and devices devices of perDevice UInt16 tags each on the
// simulator's holding registers (Modbus TCP at the simulator's address),
// in scan class class; with ticks, the simulator's device also has ticks
// tags sim.Tick0.., each the lowest bit of sim.Counter (hr:1, its low
// word) with an off-normal alarm: each active and inactive in turn every
// 5 ms.
func genConfig(w io.Writer, devices, perDevice int, class string, ticks int, churn bool) error {
	if devices < 0 || devices == 0 && ticks == 0 || perDevice < 1 || perDevice > 4000 || ticks < 0 || ticks > 1000 {
		return fmt.Errorf("uabench genconfig: %d devices of %d tags, %d tick alarms: want at least 1 device (0 with -tick-alarms) of 1..4,000 tags, at most 1,000 tick alarms", devices, perDevice, ticks)
	}
	c := pconfig.Simulator()
	for i := range ticks {
		bit, normal := 0, 0.0
		c.Devices[0].Tags = append(c.Devices[0].Tags, pconfig.Tag{Name: fmt.Sprintf("Tick%d", i), Type: pconfig.Bool, Address: "hr:1", Bit: &bit,
			ScanClass: "fast", Access: pconfig.Read, Description: "the counter's lowest bit",
			Alarm: &pconfig.TagAlarm{Kind: pconfig.AlarmOffNormal, Normal: &normal, Severity: 500, Message: "tick"}})
	}
	for d := range devices {
		dev := pconfig.Device{Name: fmt.Sprintf("bulk%d", d), Kind: pconfig.KindModbusTCP, NoCommTimeoutMs: 5000,
			ModbusTCP: pconfig.DefaultModbusTCP(pconfig.SimulatorAddress)}
		for i := range perDevice {
			addr := fmt.Sprintf("hr:%d", 200+i)
			if churn {
				addr = fmt.Sprintf("ir:%d", i)
			}
			dev.Tags = append(dev.Tags, pconfig.Tag{Name: fmt.Sprintf("T%04d", i), Type: pconfig.UInt16,
				Address: addr, ScanClass: class, Access: pconfig.Read})
		}
		c.Devices = append(c.Devices, dev)
	}
	if err := c.Validate(); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// memFlags configure the memory role.
type memFlags struct {
	argv      []string
	addr      string
	ns        uint16
	devices   int
	perDevice int
	sessions  int
	nodes     int
	settle    time.Duration
	duration  time.Duration
}

// memory starts edged, measures its RSS idle after settle, then with
// sessions sessions each reading nodes tags of its own (one Read in
// flight) for duration, and prints both.
func memory(f memFlags, w io.Writer) error {
	p, err := startProc(f.argv, f.addr)
	if err != nil {
		return err
	}
	defer p.stop()
	time.Sleep(f.settle)
	idle, err := p.sample()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "uabench: edged with %d tags on %d devices, idle after %v: RSS %.1f MiB (high-water %.1f MiB), %d threads\n",
		f.devices*f.perDevice, f.devices, f.settle, mib(idle.rss), mib(idle.hwm), idle.thread)

	var readers []*reader
	defer func() {
		for _, r := range readers {
			r.c.Conn().Close()
		}
	}()
	total := f.devices * f.perDevice
	for s := range f.sessions {
		c, err := uaclient.DialSession(f.addr, "uabench", 10*time.Second)
		if err != nil {
			return err
		}
		req := &ua.ReadRequest{TimestampsToReturn: ua.TimestampsToReturnBoth}
		for k := range f.nodes {
			i := (s*f.nodes + k) % total
			name := fmt.Sprintf("bulk%d.T%04d", i/f.perDevice, i%f.perDevice)
			req.NodesToRead = append(req.NodesToRead, ua.ReadValueID{NodeID: ua.NewStringNodeID(f.ns, name), AttributeID: uint32(ua.AttributeIDValue)})
		}
		r, err := newReader(c, req, 1, false)
		if err != nil {
			c.Conn().Close()
			return err
		}
		readers = append(readers, r)
	}
	var phase atomic.Int32
	phase.Store(phaseMeasure)
	var wg sync.WaitGroup
	errs := make([]error, len(readers))
	for i, r := range readers {
		wg.Go(func() { errs[i] = r.run(&phase, 0) })
	}
	time.Sleep(f.duration)
	loaded, err := p.sample()
	phase.Store(phaseStop)
	wg.Wait()
	if err != nil {
		return err
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	var reads, bad uint64
	for _, r := range readers {
		reads += r.done.Load()
		bad += r.errs.Load()
		if e := r.lastEr.Load(); e != nil && bad > 0 {
			return fmt.Errorf("uabench: memory: %d bad responses, e.g. %s", bad, *e)
		}
	}
	fmt.Fprintf(w, "uabench: with %d sessions each reading %d tags (%d Reads in %v): RSS %.1f MiB, high-water %.1f MiB, %d threads\n",
		f.sessions, f.nodes, reads, f.duration, mib(loaded.rss), mib(loaded.hwm), loaded.thread)
	return nil
}
