// Package stack starts what edged runs in one process — the built-in
// simulator when asked, the devices, the scan engine, the OPC UA server and
// the binding between them — and shuts it down in order. cmd/edged and the
// benchmark commands use it, so that they run the same wiring.
//
//	st, err := stack.New(stack.Config{Plant: &conf, Listener: ln, Server: srvConf, Simulator: &sim.Options{}})
//	...                      // st.Engine.Subscribe, st.Binding.AddWriteMethod
//	err = st.Start()         // the server hears of every image, engine and server run
//	...
//	err = st.Close(ctx)      // server, engine, drivers, simulator
package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/edged/edged/binding"
	"github.com/edged/edged/board"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/plc"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
	"github.com/edged/edged/plc/sim"
)

// PreciseWake is how much of each wait for the next cycle the engine sleeps
// with nanosleep (see plc.Config.PreciseWake): Go's timer alone wakes an
// idle process up to 1 ms late.
const PreciseWake = time.Millisecond

// Config says what to start.
type Config struct {
	// Plant is the device and tag configuration, validated. Modbus TCP
	// devices at pconfig.SimulatorAddress get the simulator's address (in
	// Plant itself, so that what is shown is what is polled).
	Plant *pconfig.Config
	// Simulator starts the built-in simulator with these options; nil: no
	// simulator. NeedsSimulator tells whether a configuration polls it.
	Simulator *sim.Options
	// Listener is where the OPC UA server serves; nil: a new listener on
	// an ephemeral loopback port.
	Listener net.Listener
	// Server configures the OPC UA server; an empty EndpointURL becomes
	// opc.tcp:// and the listener's address.
	Server server.Config
	// Security, when set, gives Server.Security. It is called on the
	// goroutine that makes the server, beside the one that makes the
	// simulator, the drivers and the engine: a caller loads its
	// certificate and key meanwhile.
	Security func() (*server.Security, error)
	// Window is the engine's percentile window in cycles (0: the engine's
	// default).
	Window int
	// RealTime, when set, is the scheduling of the scan engine's
	// goroutine (board.RealTime.Apply, on its own locked thread).
	RealTime *board.RealTime
}

// Stack is the running wiring. Its fields are for reading and, between New
// and Start, for adding subscriptions and methods.
type Stack struct {
	Sim      *sim.Sim // nil without a simulator
	Engine   *plc.Engine
	Server   *server.Server
	Binding  *binding.Binding
	Listener net.Listener
	URL      string // the server's endpoint URL

	drivers    *devices.Drivers
	applyMu    sync.Mutex
	baseCycle  int // base_cycle_ms of what runs (the configuration itself is not kept)
	simAddr    string
	stopNotify func()
	stopEngine context.CancelFunc
	engineDone chan error
	served     chan struct{} // closed when Serve returned, with serveErr
	serveErr   error
	started    bool
	rt         *board.RealTime
	rtErr      error
}

// RealTimeProcs is the fewest Ps with a real-time scan thread. The scan
// gives its P back while it sleeps and needs one again when it wakes;
// with as many Ps as busy threads, one may be held by a thread of
// normal or lowest priority (a configuration change) that the kernel
// does not run while the scan's is runnable: a priority inversion that
// made 215 overruns in 100 changes on one core, 5 with four Ps.
const RealTimeProcs = 4

// NeedsSimulator reports whether c polls the built-in simulator: a device
// of kind sim, a Modbus TCP device at pconfig.SimulatorAddress (as in
// pconfig.Simulator), or GPIO on the simulated board.
func NeedsSimulator(c *pconfig.Config) bool {
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

// New builds the stack of cfg without running it. On error everything it
// started is closed again (the listener included).
func New(cfg Config) (_ *Stack, err error) {
	st := &Stack{Listener: cfg.Listener, rt: cfg.RealTime}
	defer func() {
		if err != nil {
			st.closeParts()
			if st.Listener != nil {
				st.Listener.Close()
			}
		}
	}()
	if st.Listener == nil {
		if st.Listener, err = server.Listen("127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	// The server (its address space; the certificate and key through
	// cfg.Security) is made on a goroutine of its own while this one makes
	// the simulator, the drivers and the engine. Most of a start on a slow
	// core is code running for the first time, and two cores share it.
	sc := cfg.Server
	if sc.EndpointURL == "" {
		sc.EndpointURL = "opc.tcp://" + st.Listener.Addr().String()
	}
	st.URL = sc.EndpointURL
	type madeServer struct {
		srv *server.Server
		err error
	}
	srvc := make(chan madeServer, 1)
	go func() {
		var m madeServer
		if cfg.Security != nil {
			sc.Security, m.err = cfg.Security()
		}
		if m.err == nil {
			m.srv, m.err = server.New(sc)
		}
		srvc <- m
	}()
	joined := false
	defer func() {
		if !joined {
			<-srvc // an error before the server was taken: nothing is left running
		}
	}()
	conf := cfg.Plant
	var opts devices.Options
	if cfg.Simulator != nil {
		if st.Sim, err = sim.StartOptions(context.Background(), *cfg.Simulator); err != nil {
			return nil, fmt.Errorf("built-in simulator: %w", err)
		}
		opts.SimAddress = st.Sim.Addr()
		if cfg.Simulator.InMemory {
			opts.SimDial = st.Sim.Dial
		}
		if conf.Board == "sim" {
			opts.GPIO = st.Sim.GPIO() // else the board's own GPIO
		}
		for i := range conf.Devices {
			if t := conf.Devices[i].ModbusTCP; t != nil && t.Address == pconfig.SimulatorAddress {
				t.Address = st.Sim.Addr()
			}
		}
	}
	st.simAddr = opts.SimAddress
	pc, drivers, err := devices.Build(conf, opts)
	if err != nil {
		return nil, err
	}
	st.drivers = drivers
	pc.PreciseWake = PreciseWake
	// A real-time scan thread sleeps its whole wait itself (see
	// plc.Config.OwnThreadWait).
	pc.OwnThreadWait = cfg.RealTime != nil && cfg.RealTime.Priority > 0
	if cfg.Window > 0 {
		pc.Window = cfg.Window
	}
	if st.Engine, err = plc.New(pc); err != nil {
		return nil, err
	}
	m := <-srvc
	joined = true
	if m.err != nil {
		return nil, m.err
	}
	st.Server = m.srv
	if st.Binding, err = binding.New(st.Server.AddressSpace(), st.Engine, conf); err != nil {
		return nil, err
	}
	st.baseCycle = conf.BaseCycleMs
	return st, nil
}

// Apply changes the running devices and tags to those of conf, live:
// the binding checks it, the drivers of the devices that changed are
// made (devices.Drivers.Change), the engine takes the change between two
// cycles (plc.Engine.Reconfigure), the address space follows
// (binding.Apply), and the old drivers are closed. Modbus TCP devices at
// pconfig.SimulatorAddress get the simulator's address, in conf itself.
// On an error before the engine took the change nothing changed; base
// cycle changes are refused (plc.ErrPeriodChange). Calls are serialized.
func (st *Stack) Apply(ctx context.Context, conf *pconfig.Config) error {
	st.applyMu.Lock()
	defer st.applyMu.Unlock()
	if conf.BaseCycleMs != st.baseCycle {
		return fmt.Errorf("base_cycle_ms: %d to %d: %w", st.baseCycle, conf.BaseCycleMs, plc.ErrPeriodChange)
	}
	if st.simAddr != "" {
		for i := range conf.Devices {
			if t := conf.Devices[i].ModbusTCP; t != nil && t.Address == pconfig.SimulatorAddress {
				t.Address = st.simAddr
			}
		}
	}
	if err := st.Binding.Check(conf); err != nil {
		return err
	}
	pc, drivers, retire, err := st.drivers.Change(conf)
	if err != nil {
		return err
	}
	if err := st.Engine.Reconfigure(ctx, pc); err != nil {
		// The engine kept the old devices: close the new drivers only.
		drivers.CloseNew(st.drivers)
		return err
	}
	st.drivers = drivers
	err = st.Binding.Apply(conf)
	if rerr := retire(); rerr != nil {
		err = errors.Join(err, fmt.Errorf("closing the old drivers: %w", rerr))
	}
	return err
}

// Start has the server hear of every image the engine publishes, so that
// monitored items sample in the cycle in which their tag changed, then
// subscribes after (hooks that run once the server was told), and runs the
// engine and the server.
func (st *Stack) Start(after ...func(*plc.Image)) error {
	if st.started {
		return errors.New("stack: started twice")
	}
	st.started = true
	st.stopNotify = st.Binding.Notify(st.Server.SourceChanged)
	for _, f := range after {
		st.Engine.Subscribe(f)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st.stopEngine = cancel
	st.engineDone = make(chan error, 1)
	if st.rt != nil && st.rt.Priority > 0 && runtime.GOMAXPROCS(0) < RealTimeProcs {
		runtime.GOMAXPROCS(RealTimeProcs)
	}
	applied := make(chan error, 1)
	go func() {
		// Run runs on this goroutine: Apply's thread is the scan's.
		if st.rt != nil {
			applied <- st.rt.Apply()
		} else {
			applied <- nil
		}
		st.engineDone <- st.Engine.Run(ctx)
	}()
	st.rtErr = <-applied
	st.served = make(chan struct{})
	go func() {
		st.serveErr = st.Server.Serve(st.Listener)
		close(st.served)
	}()
	return nil
}

// Watch feeds w while the scan engine is healthy (Engine.Healthy: cycles
// publishing images, not stalled), checked four times per timeout, never
// from a timer alone, until ctx ends. A scan that stops makes the board
// reset within the timeout. The caller disarms w (Close) after a clean
// shutdown.
func (st *Stack) Watch(ctx context.Context, w *board.Watchdog) {
	t := time.NewTicker(max(w.Timeout()/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if st.Engine.Healthy() {
				w.Feed()
			}
		}
	}
}

// RealTimeErr is what Config.RealTime could not be given (not permitted,
// say), nil if all was; the scan then runs with normal scheduling.
func (st *Stack) RealTimeErr() error { return st.rtErr }

// Served is closed when the server stopped serving: after Close, or when
// its listener failed (ServeErr says why). Nil before Start.
func (st *Stack) Served() <-chan struct{} { return st.served }

// ServeErr is what stopped the server, once Served is closed:
// server.ErrServerClosed after Close, else the listener's error.
func (st *Stack) ServeErr() error {
	<-st.served
	return st.serveErr
}

// Close shuts the stack down in order: the server (waiting up to ctx for
// its connections), the engine, the drivers, the simulator. Each part
// that fails to stop cleanly adds a line to the error returned; the
// others are stopped all the same.
func (st *Stack) Close(ctx context.Context) error {
	var errs []error
	if st.started {
		if err := st.Server.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("shutdown: %w", err))
		}
		if err := st.ServeErr(); !errors.Is(err, server.ErrServerClosed) {
			errs = append(errs, fmt.Errorf("OPC UA server: %w", err))
		}
		st.stopEngine()
		if err := <-st.engineDone; err != nil {
			errs = append(errs, fmt.Errorf("scan engine: %w", err))
		}
		st.stopNotify()
	} else if st.Listener != nil {
		st.Listener.Close()
	}
	errs = append(errs, st.closeParts()...)
	return errors.Join(errs...)
}

// closeParts closes the drivers and the simulator.
func (st *Stack) closeParts() []error {
	var errs []error
	if st.drivers != nil {
		if err := st.drivers.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the drivers: %w", err))
		}
		st.drivers = nil
	}
	if st.Sim != nil {
		if err := st.Sim.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing the simulator: %w", err))
		}
	}
	return errs
}
