// Package stack starts what edged runs in one process — the built-in
// simulator when asked, the devices, the scan engine, the OPC UA server,
// the binding between them, the configuration service, the watchdog — and
// shuts it down in the reverse order. cmd/edged and the benchmark commands
// use it, so that they run the same wiring.
//
//	st, err := stack.New(stack.Config{Plant: &conf, Listener: ln, Server: srvConf, Simulator: &sim.Options{}})
//	...                      // st.Engine.Subscribe, st.Binding.AddWriteMethod
//	err = st.Start()         // the server hears of every image, engine and server run
//	...
//	err = st.Close(ctx)      // everything started, newest first
package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edged/edged/alarms"
	"github.com/edged/edged/binding"
	"github.com/edged/edged/board"
	"github.com/edged/edged/configsvc"
	"github.com/edged/edged/historian"
	"github.com/edged/edged/northbound"
	"github.com/edged/edged/opcua/events"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/plc"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
	"github.com/edged/edged/plc/sim"
	"github.com/edged/edged/tsdb"
)

// PreciseWake is how much of each wait for the next cycle the engine sleeps
// with nanosleep (see plc.Config.PreciseWake): Go's timer alone wakes an
// idle process up to 1 ms late.
const PreciseWake = time.Millisecond

// Config says what to start. The stack owns what it is given (the
// listener, the versions' store) from New on: it closes them on an error
// and at Close. It keeps no reference to Plant after New.
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
	// opc.tcp:// and the listener's address. Its Runtime is Runtime's.
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
	// goroutine (board.RealTime.Apply, on its own locked thread); with a
	// priority or a CPU, memory is locked too.
	RealTime *board.RealTime
	// Versions, when set, is the store of the configuration's versions,
	// its current version Plant: the stack serves Objects/Configuration
	// (configsvc) and, with Control, the control socket of `edged config`,
	// and reverts a version that the last run left waiting for Confirm.
	Versions *configsvc.Store
	Control  bool
	// Watchdog, when not "", is the hardware watchdog's device: fed while
	// the scan is healthy, disarmed at a clean Close. WatchdogTimeout is
	// its timeout.
	Watchdog        string
	WatchdogTimeout time.Duration
	// StallAfter, when > 0, stops the scan that long after Start, as a
	// hung scan would (test only: it proves the watchdog).
	StallAfter time.Duration
	// HistoryDir, when not "", is the folder of the history store
	// (package tsdb): the tags with a history are recorded into it
	// (package historian) and served by HistoryRead.
	HistoryDir string
	// Runtime is the process's runtime policy (see Runtime).
	Runtime Runtime
	// ReverseConnect are clients the server connects to (reverse
	// connect, opc.tcp://host:port), besides those of Plant's opcua
	// section.
	ReverseConnect []string
}

// Runtime are the hooks through which the parts tell the process's
// runtime policy what they do; nil fields do nothing. The stack changes no
// process-wide runtime state itself.
type Runtime struct {
	// HeavyWork is called as a goroutine starts milliseconds of
	// computation (asymmetric cryptography, password hashes, a
	// configuration change); the function it returns is called as it
	// ends.
	HeavyWork func() (done func())
	// ChangeWork is called as a configuration change starts: heavy work
	// that also allocates megabytes (the document decoded and checked,
	// drivers and nodes made); the function it returns is called as it
	// ends. Nil: HeavyWork is called instead.
	ChangeWork func() (done func())
	// MemoryReleased is called when much memory became garbage: after the
	// start, after a configuration change, after the server gave back
	// large request buffers or many monitored items, after the history
	// store wrote a block.
	MemoryReleased func()
	// RealTimeScan is called before the scan's thread gets a real-time
	// priority.
	RealTimeScan func()
	// Housekeeping runs on a goroutine of its own from Start until Close
	// closes stop: the policy's periodic work.
	Housekeeping func(stop <-chan struct{})
}

// Stack is the running wiring. Its fields are for reading and, between New
// and Start, for adding subscriptions and methods.
type Stack struct {
	reverse []server.ReverseTarget // the reverse-connect clients, for Start
	Sim     *sim.Sim               // nil without a simulator
	Engine  *plc.Engine
	// Historian records the history (nil without Config.HistoryDir).
	Historian *historian.Historian
	// Alarms evaluates the configuration's alarms (nil before Start, or
	// when there are none); a configuration change makes it anew.
	Alarms *alarms.Watch
	// Northbound is the Sparkplug B edge node (nil when the configuration
	// has none); a configuration change may make or stop it.
	Northbound *northbound.Node
	Server     *server.Server
	Binding    *binding.Binding
	Config     *configsvc.Service // nil without Config.Versions
	Listener   net.Listener
	URL        string // the server's endpoint URL
	// WriteCommand: the simulator's method sim.WriteCommand was added.
	WriteCommand bool
	// Notes say what the start could not do as asked (real-time
	// scheduling refused, say) and what it did on its own (a version
	// reverted): one sentence each, for the caller to show.
	Notes []string

	cfg       Config
	parts     []part // what was started, oldest first; Close closes them newest first
	drivers   *devices.Drivers
	applyMu   sync.Mutex
	alarmsMu  sync.Mutex // guards Alarms
	nbMu      sync.Mutex // guards Northbound
	baseCycle int        // base_cycle_ms of what runs (the configuration itself is not kept)
	simAddr   string
	served    chan struct{} // closed when Serve returned, with serveErr
	serveErr  error
	running   bool // Start was called
	rtErr     error
	rtRefused atomic.Bool      // the real-time scheduling or memory lock asked for was refused
	security  *server.Security // the server's, nil without
}

// part is something the stack started and how to stop it.
type part struct {
	name  string
	close func(ctx context.Context) error
}

// started records a part, to be closed by Close (or a failed New or Start).
func (st *Stack) started(name string, close func(ctx context.Context) error) {
	st.parts = append(st.parts, part{name, close})
}

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

// New builds the stack of cfg without running it: listener, simulator,
// drivers, engine, server, binding, configuration service. On error
// everything it started is closed again (the listener and the versions'
// store included).
func New(cfg Config) (_ *Stack, err error) {
	st := &Stack{cfg: cfg, Listener: cfg.Listener, baseCycle: cfg.Plant.BaseCycleMs}
	defer func() {
		if err != nil {
			st.Close(context.Background())
		}
	}()
	if v := cfg.Versions; v != nil { // v, not cfg: a closure must not keep cfg.Plant
		st.started("the configuration versions", func(context.Context) error { return v.Close() })
	}
	if st.Listener == nil {
		if st.Listener, err = server.Listen("127.0.0.1:0"); err != nil {
			return nil, err
		}
	}
	st.started("the listener", func(context.Context) error {
		if st.served != nil {
			return nil // the server's Shutdown closed it
		}
		return st.Listener.Close()
	})
	// The server (its address space; the certificate and key through
	// cfg.Security) is made on a goroutine of its own while this one makes
	// the simulator, the drivers and the engine. Most of a start on a slow
	// core is code running for the first time, and two cores share it.
	srvc := st.makeServer()
	joined := false
	defer func() {
		if !joined {
			<-srvc // an error before the server was taken: nothing is left running
		}
	}()
	if err := st.makeEngine(); err != nil {
		return nil, err
	}
	m := <-srvc
	joined = true
	if m.err != nil {
		return nil, m.err
	}
	st.Server, st.security = m.srv, m.sec
	if err := st.openHistory(); err != nil {
		return nil, err
	}
	if st.Binding, err = binding.New(st.Server.AddressSpace(), st.Engine, cfg.Plant, st.Historian); err != nil {
		return nil, err
	}
	if st.Alarms, err = newAlarms(st.Engine, cfg.Plant); err != nil {
		return nil, err
	}
	if err := st.addConditions(); err != nil {
		return nil, err
	}
	if h := st.Binding.History(); h != nil {
		if err := st.Server.AddHistory(st.Binding.Source(), h); err != nil {
			return nil, err
		}
	}
	if err := st.addSimMethod(); err != nil {
		return nil, err
	}
	if err := st.makeNorthbound(cfg.Plant); err != nil {
		return nil, err
	}
	if err := st.addReverseDiagnostics(); err != nil {
		return nil, err
	}
	for _, u := range cfg.ReverseConnect {
		if err := pconfig.CheckReverseURL(u); err != nil {
			return nil, fmt.Errorf("--reverse-connect: %w", err)
		}
	}
	st.reverse = st.reverseTargets(cfg.Plant) // dialled once the server serves
	if cfg.Versions != nil {
		change := cfg.Runtime.ChangeWork
		if change == nil {
			change = cfg.Runtime.HeavyWork
		}
		st.Config, err = configsvc.New(st.Server.AddressSpace(), configsvc.Options{
			Store: cfg.Versions, Target: st, Logger: cfg.Server.Logger, HeavyWork: change,
		})
		if err != nil {
			return nil, err
		}
		st.started("the configuration service", func(context.Context) error { st.Config.Close(); return nil })
	}
	if err := st.keepEvents(); err != nil {
		return nil, err
	}
	// The configuration is not kept: with many tags it takes megabytes,
	// and the engine, the binding and the store have what they need of it.
	st.cfg.Plant = nil
	return st, nil
}

type madeServer struct {
	srv *server.Server
	sec *server.Security
	err error
}

// makeServer makes the server on a goroutine of its own; its result
// comes on the channel.
func (st *Stack) makeServer() <-chan madeServer {
	sc := st.cfg.Server
	if sc.EndpointURL == "" {
		sc.EndpointURL = "opc.tcp://" + st.Listener.Addr().String()
	}
	sc.Runtime = server.Runtime{HeavyWork: st.cfg.Runtime.HeavyWork, MemoryReleased: st.cfg.Runtime.MemoryReleased}
	st.URL = sc.EndpointURL
	srvc := make(chan madeServer, 1)
	go func() {
		var m madeServer
		if st.cfg.Security != nil {
			sc.Security, m.err = st.cfg.Security()
			m.sec = sc.Security
		}
		if m.err == nil {
			m.srv, m.err = server.New(sc)
		}
		srvc <- m
	}()
	return srvc
}

// openHistory opens the history store in Config.HistoryDir and makes the
// historian of the plant's tags; it records from Start on.
func (st *Stack) openHistory() error {
	if st.cfg.HistoryDir == "" {
		return nil
	}
	opt := tsdb.Options{Logger: st.cfg.Server.Logger}
	if h := st.cfg.Plant.History; h != nil {
		opt = historian.StoreOptions(h)
		opt.Logger = st.cfg.Server.Logger
	}
	opt.Released = st.cfg.Runtime.MemoryReleased
	db, err := tsdb.Open(st.cfg.HistoryDir, opt)
	if err != nil {
		return fmt.Errorf("history store %s: %w", st.cfg.HistoryDir, err)
	}
	st.started("the history store", func(context.Context) error { return db.Close() })
	st.Historian, err = historian.New(db, st.Engine, st.cfg.Plant, st.cfg.Server.Logger)
	return err
}

// keepEvents keeps the server's events (alarms, audit) in the history
// store, for HistoryRead of the Server object, the devices' folders and
// Objects/Configuration.
func (st *Stack) keepEvents() error {
	if st.Historian == nil {
		return nil
	}
	evs, err := historian.OpenEvents(st.Historian.DB())
	if err != nil {
		return fmt.Errorf("history store %s: the events: %w", st.cfg.HistoryDir, err)
	}
	var notifiers []ua.NodeID
	if st.Config != nil {
		notifiers = append(notifiers, st.Config.Object())
	}
	return st.Server.SetEventHistory(evs, notifiers...)
}

// makeEngine starts the simulator if asked, makes the drivers and the
// engine.
func (st *Stack) makeEngine() error {
	conf := st.cfg.Plant
	var opts devices.Options
	if so := st.cfg.Simulator; so != nil {
		s, err := sim.StartOptions(context.Background(), *so)
		if err != nil {
			return fmt.Errorf("built-in simulator: %w", err)
		}
		st.Sim = s
		st.started("the simulator", func(context.Context) error { return s.Close() })
		opts.SimAddress = s.Addr()
		if so.InMemory {
			opts.SimDial = s.Dial
		}
		if conf.Board == "sim" {
			opts.GPIO = s.GPIO() // else the board's own GPIO
		}
		st.simAddr = s.Addr()
		st.useSimulator(conf)
	}
	pc, drivers, err := devices.Build(conf, opts)
	if err != nil {
		return err
	}
	st.drivers = drivers
	st.started("the drivers", func(context.Context) error { return st.drivers.Close() })
	pc.PreciseWake = PreciseWake
	// A real-time scan thread sleeps its whole wait itself (see
	// plc.Config.OwnThreadWait).
	pc.OwnThreadWait = st.realTime()
	if st.cfg.Window > 0 {
		pc.Window = st.cfg.Window
	}
	st.Engine, err = plc.New(pc)
	return err
}

// useSimulator gives the Modbus TCP devices at pconfig.SimulatorAddress
// the simulator's address, in conf itself.
func (st *Stack) useSimulator(conf *pconfig.Config) {
	if st.simAddr == "" {
		return
	}
	for i := range conf.Devices {
		if t := conf.Devices[i].ModbusTCP; t != nil && t.Address == pconfig.SimulatorAddress {
			t.Address = st.simAddr
		}
	}
}

// addSimMethod adds the simulator's method sim.WriteCommand when the
// configuration has a writable sim.Command.
func (st *Stack) addSimMethod() error {
	if st.Sim == nil {
		return nil
	}
	if h, ok := st.Engine.Lookup("sim", "Command"); !ok || st.Engine.Tag(h).Access != plc.ReadWrite {
		return nil
	}
	st.WriteCommand = true
	return st.Binding.AddWriteMethod("sim", "WriteCommand", "Command")
}

// realTime reports whether the scan thread gets a real-time priority.
func (st *Stack) realTime() bool { return st.cfg.RealTime != nil && st.cfg.RealTime.Priority > 0 }

// Check tells whether conf can run beside what runs (configsvc.Target):
// the binding's check.
func (st *Stack) Check(conf *pconfig.Config) error {
	if err := st.Binding.Check(conf); err != nil {
		return err
	}
	return checkNorthbound(conf)
}

// Apply changes the running devices and tags to those of conf, live
// (configsvc.Target): the binding checks it, the drivers of the devices
// that changed are made (devices.Drivers.Change), the engine takes the
// change between two cycles (plc.Engine.Reconfigure), the address space
// follows (binding.Apply), and the old drivers are closed. Modbus TCP
// devices at pconfig.SimulatorAddress get the simulator's address, in conf
// itself. On an error before the engine took the change nothing changed;
// base cycle changes are refused (plc.ErrPeriodChange). Calls are
// serialized. What the change no longer needs is released afterwards
// (Runtime.MemoryReleased).
func (st *Stack) Apply(ctx context.Context, conf *pconfig.Config) error {
	st.applyMu.Lock()
	defer st.applyMu.Unlock()
	if conf.BaseCycleMs != st.baseCycle {
		return fmt.Errorf("base_cycle_ms: %d to %d: %w", st.baseCycle, conf.BaseCycleMs, plc.ErrPeriodChange)
	}
	st.useSimulator(conf)
	if err := st.Check(conf); err != nil {
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
	if st.Historian != nil {
		if herr := st.Historian.Apply(conf); herr != nil {
			err = herr
		}
	}
	if berr := st.Binding.Apply(conf); berr != nil {
		err = errors.Join(err, berr)
	}
	if nerr := st.applyNorthbound(conf); nerr != nil {
		err = errors.Join(err, nerr)
	}
	if st.running {
		if rerr := st.applyReverse(conf); rerr != nil {
			err = errors.Join(err, rerr)
		}
	} else {
		st.reverse = st.reverseTargets(conf)
	}
	if w, aerr := newAlarms(st.Engine, conf); aerr != nil {
		err = errors.Join(err, aerr)
	} else {
		if st.running {
			st.stopAlarms()
			st.startAlarms(w)
		} else {
			st.Alarms = w
		}
		if cerr := st.Binding.SetConditions(configsOf(w)); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	if rerr := retire(); rerr != nil {
		err = errors.Join(err, fmt.Errorf("closing the old drivers: %w", rerr))
	}
	if f := st.cfg.Runtime.MemoryReleased; f != nil {
		go f()
	}
	return err
}

// Start runs what New made, in this order: the watchdog; the server's
// hearing of every image the engine publishes, so that monitored items
// sample in the cycle in which their tag changed, then the subscriptions
// of after (hooks that run once the server was told); the engine; the
// server; the revert of a version left pending and the control socket.
// On error everything started is closed again.
func (st *Stack) Start(after ...func(*plc.Image)) (err error) {
	if st.running {
		return errors.New("stack: started twice")
	}
	st.running = true
	defer func() {
		if err != nil {
			st.Close(context.Background())
		}
	}()
	if err := st.startWatchdog(); err != nil {
		return err
	}
	stopNotify := st.Binding.Notify(st.Server.SourceValuesChanged)
	st.started("the binding's notifications", func(context.Context) error { stopNotify(); return nil })
	if hs := st.Historian; hs != nil {
		hs.Start()
		st.started("the historian", func(context.Context) error { hs.Stop(); return nil })
	}
	st.startAlarms(st.Alarms)
	st.started("the alarms", func(context.Context) error { st.stopAlarms(); return nil })
	if n := st.Northbound; n != nil {
		n.Start()
	}
	st.started("the northbound", func(context.Context) error { st.stopNorthbound(); return nil })
	for _, f := range after {
		st.Engine.Subscribe(f)
	}
	st.startEngine()
	st.served = make(chan struct{})
	go func() {
		st.serveErr = st.Server.Serve(st.Listener)
		close(st.served)
	}()
	st.started("the OPC UA server", st.shutdownServer)
	if err := st.Server.SetReverseConnect(st.reverse); err != nil {
		return fmt.Errorf("opcua.reverse_connect: %w", err)
	}
	st.startConfiguration()
	if f := st.cfg.Runtime.Housekeeping; f != nil {
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			f(stop)
		}()
		st.started("the runtime's housekeeping", func(context.Context) error { close(stop); <-done; return nil })
	}
	if f := st.cfg.Runtime.MemoryReleased; f != nil {
		f() // what the start needed and no longer does
		// Once more when the start's aftermath settled: the images readers
		// held across the first publishes, which the engine forgets after
		// plc.CalmPublishes calm ones, and the first polls' garbage. Only
		// where images are large: a collection is work the scan shares
		// its cores with.
		if st.Engine.Len() >= settleReleaseTags {
			t := time.AfterFunc(st.settleAfter(), f)
			st.started("the release after the start", func(context.Context) error { t.Stop(); return nil })
		}
	}
	return nil
}

// settleReleaseTags is the fewest tags for which the start returns
// memory a second time: an image of 1,000 tags takes 24 KB, of 10,000
// 240 KB.
const settleReleaseTags = 2000

// settleAfter is how long after the start the engine has forgotten the
// images set aside during it: plc.CalmPublishes base cycles, and a
// second.
func (st *Stack) settleAfter() time.Duration {
	return time.Duration(plc.CalmPublishes*st.baseCycle)*time.Millisecond + time.Second
}

// alarmQueue bounds the alarm changes waiting to become events.
const alarmQueue = 4096

// newAlarms makes the watch of conf's alarms, nil when it has none.
func newAlarms(e *plc.Engine, conf *pconfig.Config) (*alarms.Watch, error) {
	w, err := alarms.NewWatch(e, conf, alarmQueue)
	if err != nil || w.Set.Len() == 0 {
		return nil, err
	}
	return w, nil
}

// startAlarms starts w (nil: none): the alarms evaluated on the engine's
// images, their changes posted as events to the server.
func (st *Stack) startAlarms(w *alarms.Watch) {
	if w == nil {
		return
	}
	ty := st.Server.EventTypes()
	st.systemChecks(w)
	// The changes of a batch go to the server at once (one hand-over to
	// its subscriptions' goroutine for a cycle's changes, not one each).
	// The server keeps each batch's slice: the next is made as long as
	// the last (up to 256), when its first change comes.
	var batch []server.PostedEvent
	last := 1
	w.StartBatch(func(ev *alarms.Event) {
		if batch == nil {
			batch = make([]server.PostedEvent, 0, last)
		}
		e, notifiers := st.Binding.AlarmEvent(ty, ev)
		batch = append(batch, server.PostedEvent{Event: e, Notifiers: notifiers})
	}, func() {
		st.Server.PostEvents(batch)
		last, batch = min(max(len(batch), 1), 256), nil
	})
	st.alarmsMu.Lock()
	st.Alarms = w
	st.alarmsMu.Unlock()
}

// Who may act on the conditions: acknowledge, confirm and comment; enable
// and disable.
var (
	conditionOperators   = server.RolesOf(server.RoleOperator, server.RoleEngineer, server.RoleSupervisor, server.RoleConfigureAdmin)
	conditionConfigurers = server.RolesOf(server.RoleEngineer, server.RoleSupervisor, server.RoleConfigureAdmin)
)

// addConditions adds the condition methods and the conditions' nodes.
func (st *Stack) addConditions() error {
	err := st.Binding.AddConditionMethods(binding.ConditionMethods{
		Set: func() *alarms.Set {
			st.alarmsMu.Lock()
			defer st.alarmsMu.Unlock()
			if st.Alarms == nil {
				return nil
			}
			return st.Alarms.Set
		},
		Caller: func(ctx context.Context) string {
			c, _ := server.CallerFrom(ctx)
			return c.UserName
		},
		OperateRoles: uint32(conditionOperators), ConfigureRoles: uint32(conditionConfigurers),
	})
	if err != nil {
		return err
	}
	ty := st.Server.EventTypes()
	err = st.Server.SetConditionRefresh(func() []events.Event {
		st.alarmsMu.Lock()
		w := st.Alarms
		st.alarmsMu.Unlock()
		var out []events.Event
		if w != nil {
			w.Set.Retained(func(c *alarms.Condition) {
				e, _ := st.Binding.AlarmEvent(ty, &alarms.Event{Cond: c.ID, Config: &c.Config, State: c.State})
				out = append(out, e)
			})
		}
		return out
	})
	if err != nil {
		return err
	}
	return st.Binding.SetConditions(configsOf(st.Alarms))
}

// configsOf returns w's conditions (none for nil).
func configsOf(w *alarms.Watch) []alarms.Config {
	if w == nil {
		return nil
	}
	return w.Configs()
}

// stopAlarms stops the alarms' evaluation, if it runs.
func (st *Stack) stopAlarms() {
	st.alarmsMu.Lock()
	w := st.Alarms
	st.Alarms = nil
	st.alarmsMu.Unlock()
	if w != nil {
		w.Stop()
	}
}

// startWatchdog opens the watchdog and feeds it while the scan is
// healthy; closing it disarms it (after the engine stopped: it is
// started first).
func (st *Stack) startWatchdog() error {
	if st.cfg.Watchdog == "" {
		return nil
	}
	wd, err := board.OpenWatchdog(st.cfg.Watchdog, st.cfg.WatchdogTimeout)
	if err != nil {
		return fmt.Errorf("watchdog %s: %w", st.cfg.Watchdog, err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { st.Watch(ctx, wd); close(done) }()
	st.started("the watchdog", func(context.Context) error {
		stop()
		<-done
		return wd.Close() // disarmed (magic close)
	})
	return nil
}

// startEngine runs the engine on a goroutine of its own, with the
// real-time scheduling asked for, and the test stall.
func (st *Stack) startEngine() {
	if st.realTime() && st.cfg.Runtime.RealTimeScan != nil {
		st.cfg.Runtime.RealTimeScan()
	}
	ctx, cancel := context.WithCancel(context.Background())
	engineDone := make(chan error, 1)
	applied := make(chan error, 1)
	go func() {
		// Run runs on this goroutine: Apply's thread is the scan's.
		if rt := st.cfg.RealTime; rt != nil {
			applied <- rt.Apply()
		} else {
			applied <- nil
		}
		engineDone <- st.Engine.Run(ctx)
	}()
	st.rtErr = <-applied
	st.started("the scan engine", func(context.Context) error {
		cancel()
		return <-engineDone
	})
	if rt := st.cfg.RealTime; rt != nil && (rt.Priority > 0 || rt.CPU >= 0) {
		if st.rtErr != nil {
			st.Notes = append(st.Notes, fmt.Sprintf("WARNING: the scan runs with normal scheduling: %v", st.rtErr))
			st.rtRefused.Store(true)
		}
		if err := board.LockMemory(); err != nil {
			st.Notes = append(st.Notes, fmt.Sprintf("WARNING: memory not locked: %v", err))
			st.rtRefused.Store(true)
		}
	}
	if st.cfg.StallAfter > 0 {
		t := time.AfterFunc(st.cfg.StallAfter, st.Engine.Stall)
		st.started("the test stall", func(context.Context) error { t.Stop(); return nil })
	}
}

// shutdownServer stops the server, waiting up to ctx for its
// connections.
func (st *Stack) shutdownServer(ctx context.Context) error {
	var errs []error
	if err := st.Server.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("shutdown: %w", err))
	}
	if err := st.ServeErr(); !errors.Is(err, server.ErrServerClosed) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// startConfiguration reverts a version left pending by the last run and
// serves the control socket.
func (st *Stack) startConfiguration() {
	if st.Config == nil {
		return
	}
	if v, err := st.Config.RevertPending(context.Background()); err != nil {
		st.Notes = append(st.Notes, fmt.Sprintf("WARNING: reverting the unconfirmed configuration: %v", err))
	} else if v != 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("configuration version %d: the version before the unconfirmed one, restored", v))
	}
	if !st.cfg.Control {
		return
	}
	stop, err := st.Config.ServeControl(context.Background())
	if err != nil {
		st.Notes = append(st.Notes, fmt.Sprintf("WARNING: no control socket for edged config: %v", err))
		return
	}
	st.started("the control socket", func(context.Context) error { stop(); return nil })
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

// Close stops what New and Start started, newest first: the control
// socket, the server (waiting up to ctx for its connections), the engine,
// the watchdog (disarmed), the configuration service, the drivers, the
// simulator, the listener, the versions' store. Each part that fails to
// stop cleanly adds a line to the error returned; the others are stopped
// all the same. Close may be called again; it does nothing more.
func (st *Stack) Close(ctx context.Context) error {
	var errs []error
	for i := len(st.parts) - 1; i >= 0; i-- {
		p := st.parts[i]
		if err := p.close(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.name, err))
		}
	}
	st.parts = nil
	return errors.Join(errs...)
}
