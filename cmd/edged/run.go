package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/edged/edged/binding"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/uasc"
	"github.com/edged/edged/plc"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
	"github.com/edged/edged/plc/sim"
)

// shutdownTimeout bounds how long run waits for connections to close.
const shutdownTimeout = 5 * time.Second

// preciseWake is how much of each wait for the next cycle edged sleeps
// with nanosleep (see plc.Config.PreciseWake).
const preciseWake = time.Millisecond

// needsSimulator reports whether c polls the built-in simulator: a device
// of kind sim, a modbus-tcp device at pconfig.SimulatorAddress (as in
// pconfig.Simulator), or GPIO on the simulated board.
func needsSimulator(c *pconfig.Config) bool {
	for i := range c.Devices {
		d := &c.Devices[i]
		switch {
		case d.Kind == pconfig.KindSim,
			d.Kind == pconfig.KindModbusTCP && d.ModbusTCP != nil && d.ModbusTCP.Address == pconfig.SimulatorAddress,
			d.Kind == pconfig.KindGPIO && c.Board == "sim":
			return true
		}
	}
	return false
}

// run serves conf until ctx is done: it binds the OPC UA listen address,
// starts the built-in simulator if conf polls it (putting its address into
// the devices at pconfig.SimulatorAddress), builds the devices and the scan
// engine, shows the tags and the Diagnostics object in the address space,
// runs the engine and the server, and prints the scan statistics every
// cfg.reportEvery. At the end it shuts down the server, then the engine and
// the drivers, then the simulator.
func run(ctx context.Context, cfg config, conf *pconfig.Config, out io.Writer) (err error) {
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on --listen %s: %w", cfg.listen, err)
	}
	defer func() {
		if err != nil {
			ln.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	url := endpointURL(cfg.advertiseHost, port)

	var opts devices.Options
	var s *sim.Sim
	if needsSimulator(conf) {
		if s, err = sim.Start(context.Background()); err != nil {
			return fmt.Errorf("built-in simulator: %w", err)
		}
		defer s.Close()
		opts.SimAddress = s.Addr()
		if conf.Board == "sim" {
			opts.GPIO = s.GPIO() // else the board's own GPIO
		}
		for i := range conf.Devices {
			if t := conf.Devices[i].ModbusTCP; t != nil && t.Address == pconfig.SimulatorAddress {
				t.Address = s.Addr()
			}
		}
	}
	pc, drivers, err := devices.Build(conf, opts)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			drivers.Close()
		}
	}()
	// Wake for each cycle with nanosleep, not only Go's timer, which wakes
	// an idle process up to 1 ms late (plc.Config.PreciseWake).
	pc.PreciseWake = preciseWake
	e, err := plc.New(pc)
	if err != nil {
		return err
	}
	srv, err := newServer(cfg, url, out)
	if err != nil {
		return err
	}
	b, err := binding.New(srv.AddressSpace(), e, conf)
	if err != nil {
		return err
	}
	// Monitored items sample in the cycle in which their tag changed.
	defer b.Notify(srv.SourceChanged)()

	fmt.Fprintf(out, "edged %s: OPC UA endpoint URL %s (listening on %s)\n", version, url, ln.Addr())
	if s != nil {
		fmt.Fprintf(out, "edged: built-in simulated PLC (Modbus TCP slave) at %s\n", s.Addr())
		if h, ok := e.Lookup("sim", "Command"); ok && e.Tag(h).Access == plc.ReadWrite {
			if err := b.AddWriteMethod("sim", "WriteCommand", "Command"); err != nil {
				return err
			}
			fmt.Fprintf(out, "edged: method ns=%d;s=sim.WriteCommand(UInt16) writes sim.Command and returns once the PLC has it\n", b.Namespace())
		}
	}
	printTags(out, conf, b)

	ectx, stopEngine := context.WithCancel(context.Background())
	defer stopEngine()
	engineDone := make(chan error, 1)
	go func() { engineDone <- e.Run(ectx) }()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	var tick <-chan time.Time
	if cfg.reportEvery > 0 {
		t := time.NewTicker(cfg.reportEvery)
		defer t.Stop()
		tick = t.C
	}
	var d plc.Diagnostics
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case err := <-serveErr: // the listener failed
			stopEngine()
			<-engineDone
			return fmt.Errorf("OPC UA server: %w", err)
		case <-tick:
			e.Diagnostics(&d)
			printReport(out, &d)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		fmt.Fprintf(out, "edged: shutdown: %v\n", err)
	}
	if err := <-serveErr; !errors.Is(err, server.ErrServerClosed) {
		fmt.Fprintf(out, "edged: OPC UA server: %v\n", err)
	}
	stopEngine()
	if err := <-engineDone; err != nil {
		fmt.Fprintf(out, "edged: scan engine: %v\n", err)
	}
	if err := drivers.Close(); err != nil {
		fmt.Fprintf(out, "edged: closing the drivers: %v\n", err)
	}
	if s != nil {
		if err := s.Close(); err != nil {
			fmt.Fprintf(out, "edged: closing the simulator: %v\n", err)
		}
	}
	fmt.Fprintln(out, "edged: shut down cleanly")
	return nil
}

// printTags lists the devices and their tags' NodeIds.
func printTags(out io.Writer, conf *pconfig.Config, b *binding.Binding) {
	n := 0
	for _, d := range conf.Devices {
		n += len(d.Tags)
	}
	fmt.Fprintf(out, "edged: %d devices, %d tags in namespace %s (ns=%d), %v base cycle; Diagnostics under Objects/Diagnostics (%s)\n",
		len(conf.Devices), n, binding.NamespaceURI, b.Namespace(), time.Duration(conf.BaseCycleMs)*time.Millisecond, binding.DiagnosticsNamespaceURI)
	for _, d := range conf.Devices {
		var names []string
		for _, t := range d.Tags {
			names = append(names, t.Name)
		}
		const most = 12
		more := ""
		if len(names) > most {
			more = fmt.Sprintf(" ... (%d more)", len(names)-most)
			names = names[:most]
		}
		fmt.Fprintf(out, "edged:   %s (%s): ns=%d;s=%s.{%s}%s\n", d.Name, d.Kind, b.Namespace(), d.Name, strings.Join(names, ","), more)
	}
}

// printReport prints one line of scan statistics.
func printReport(out io.Writer, d *plc.Diagnostics) {
	var failing []string
	for _, dev := range d.Devices {
		if dev.Failing {
			failing = append(failing, dev.Name)
		}
	}
	f := ""
	if len(failing) > 0 {
		f = " failing: " + strings.Join(failing, ",")
	}
	fmt.Fprintf(out, "edged: scan: cycles=%d overruns=%d cycle p50/p99/max=%v/%v/%v jitter p50/p99/max=%v/%v/%v%s\n",
		d.Cycles, d.Overruns, us(d.CycleTime.P50), us(d.CycleTime.P99), us(d.CycleTime.Max),
		us(d.StartJitter.P50), us(d.StartJitter.P99), us(d.StartJitter.Max), f)
}

// us rounds d to microseconds, for people.
func us(d time.Duration) time.Duration {
	return d.Round(time.Microsecond)
}

// newServer configures the OPC UA server from the command line.
func newServer(cfg config, url string, out io.Writer) (*server.Server, error) {
	return server.New(server.Config{
		EndpointURL:     url,
		SoftwareVersion: version,
		MaxSessions:     cfg.maxSessions,
		MaxConnections:  cfg.maxConnections,
		DataEfficient:   cfg.dataEfficient,
		Channel:         &uasc.Config{ReadSpin: cfg.readSpin},
		Logger:          slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}
