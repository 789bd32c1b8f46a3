package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/edged/edged/binding"
	"github.com/edged/edged/board"
	"github.com/edged/edged/internal/cfgstore"
	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/opcua/pki"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/uasc"
	"github.com/edged/edged/opcua/users"
	"github.com/edged/edged/plc"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

// shutdownTimeout bounds how long run waits for connections to close.
const shutdownTimeout = 5 * time.Second

// run serves the configuration chooseConfig picks until ctx is done: it
// binds the OPC UA listen address, starts the stack (internal/stack: the
// built-in simulator if the configuration polls it, the devices, the scan engine, the server and the binding), shows the
// tags and the Diagnostics object in the address space, and prints the
// scan statistics every cfg.reportEvery. At the end the stack shuts down
// in order: the server, the engine and the drivers, the simulator.
func run(ctx context.Context, cfg config, out io.Writer) error {
	ln, err := server.Listen(cfg.listen)
	if err != nil {
		return fmt.Errorf("cannot listen on --listen %s: %w", cfg.listen, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	scfg := serverConfig(cfg, endpointURL(cfg.advertiseHost, port), out)
	// The certificate and key are loaded (or made, at the first start)
	// while the configuration is chosen and the devices and the engine
	// are made: on a slow core that is a third of the start. What it
	// says comes after the configuration's lines.
	var (
		sec     *server.Security
		secErr  error
		secOut  bytes.Buffer
		secDone = make(chan struct{})
	)
	go func() {
		defer close(secDone)
		sec, secErr = setupSecurity(cfg, cfg.hostname, &secOut, func(st *pki.Store, trust string) {
			st.LogRejections(scfg.Logger, trust)
		})
	}()
	defer func() { <-secDone }() // never left writing the data folder
	security := func() (*server.Security, error) {
		<-secDone
		out.Write(secOut.Bytes())
		secOut.Reset()
		return sec, secErr
	}
	auth := gatewayAuth{users: users.Open(cfg.dataDir), anonymous: cfg.anonymous}
	scfg.Authenticator, scfg.RoleIdentities = auth, auth.roleIdentities
	versions, release, err := openVersions(cfg.dataDir)
	if err != nil {
		ln.Close()
		return fmt.Errorf("--data-dir %s: %w", cfg.dataDir, err)
	}
	defer release()
	conf, err := chooseConfig(cfg, versions, out)
	if err != nil {
		ln.Close()
		return err
	}
	prof, err := board.Lookup(conf.Board)
	if err != nil {
		ln.Close()
		return err
	}
	rt := prof.RT
	if cfg.rtPriority >= 0 {
		rt.Priority = cfg.rtPriority
	}
	if cfg.rtCPU >= 0 {
		rt.CPU = cfg.rtCPU
	} else if cfg.rtCPU == -2 {
		rt.CPU = -1
	}
	if rt.CPU >= runtime.NumCPU() {
		rt.CPU = -1 // a board profile for more cores than this machine has
	}
	sc := stack.Config{Plant: conf, Listener: ln, Server: scfg, Security: security, RealTime: &rt}
	if stack.NeedsSimulator(conf) {
		sc.Simulator = &sim.Options{InMemory: cfg.simInMemory}
	}
	st, err := stack.New(sc)
	if err != nil {
		return err
	}
	e, b := st.Engine, st.Binding
	fmt.Fprintf(out, "edged %s: OPC UA endpoint URL %s (listening on %s)\n", version, st.URL, ln.Addr())
	if h, _, _ := net.SplitHostPort(cfg.listen); isWildcard(h) {
		var urls []string
		for _, ip := range interfaceIPs() {
			urls = append(urls, endpointURL(ip.String(), port))
		}
		if len(urls) > 0 {
			fmt.Fprintf(out, "edged: also reachable at %s; GetEndpoints answers with the host a client used\n", strings.Join(urls, ", "))
		}
	}
	if st.Sim != nil {
		fmt.Fprintf(out, "edged: built-in simulated PLC (Modbus TCP slave) at %s\n", st.Sim.Addr())
		if h, ok := e.Lookup("sim", "Command"); ok && e.Tag(h).Access == plc.ReadWrite {
			if err := b.AddWriteMethod("sim", "WriteCommand", "Command"); err != nil {
				st.Close(context.Background())
				return err
			}
			fmt.Fprintf(out, "edged: method ns=%d;s=sim.WriteCommand(UInt16) writes sim.Command and returns once the PLC has it\n", b.Namespace())
		}
	}
	printTags(out, conf, b)
	apply := func(ctx context.Context, c *pconfig.Config) error {
		err := st.Apply(ctx, c)
		go func() {
			debug.FreeOSMemory() // what the change no longer needs
			tuneGC()
		}()
		return err
	}
	svc, err := b.AddConfiguration(binding.ConfigOptions{
		Store: versions, Audit: cfgstore.NewAudit(versions.Dir()), Apply: apply, Logger: scfg.Logger,
	})
	if err != nil {
		st.Close(context.Background())
		return err
	}
	defer svc.Close()
	st.Start()
	// Give back to the system the pages the start needed and no longer
	// does (the configuration's parsing, the address space's building):
	// the runtime's scavenger would return them only over minutes.
	debug.FreeOSMemory()
	tuneGC()
	if rt.Priority > 0 || rt.CPU >= 0 {
		if err := st.RealTimeErr(); err != nil {
			fmt.Fprintf(out, "edged: WARNING: the scan runs with normal scheduling: %v\n", err)
		} else {
			fmt.Fprintf(out, "edged: scan thread: SCHED_FIFO priority %d, CPU %d (-1: any)\n", rt.Priority, rt.CPU)
		}
		if err := board.LockMemory(); err != nil {
			fmt.Fprintf(out, "edged: WARNING: memory not locked: %v\n", err)
		}
	}
	fmt.Fprintf(out, "edged: serving OPC UA clients\n")
	wdPath := prof.Watchdog
	if cfg.watchdog != "" {
		wdPath = cfg.watchdog
	}
	if wdPath != "" && wdPath != "none" {
		wd, err := board.OpenWatchdog(wdPath, cfg.watchdogTimeout)
		if err != nil {
			st.Close(context.Background())
			return fmt.Errorf("--watchdog %s: %w", wdPath, err)
		}
		wctx, stopWatch := context.WithCancel(context.Background())
		go st.Watch(wctx, wd)
		defer wd.Close() // after the shutdown below: disarmed (magic close)
		defer stopWatch()
		fmt.Fprintf(out, "edged: watchdog %s, timeout %v, fed while the scan is healthy\n", wdPath, wd.Timeout())
	}
	if cfg.stallAfter > 0 {
		fmt.Fprintf(out, "edged: WARNING: TEST ONLY: the scan stops in %v (--test-stall-scan-after)\n", cfg.stallAfter)
		time.AfterFunc(cfg.stallAfter, st.Engine.Stall)
	}
	if v, err := svc.RevertPending(ctx); err != nil {
		fmt.Fprintf(out, "edged: WARNING: reverting the unconfirmed configuration: %v\n", err)
	} else if v != 0 {
		fmt.Fprintf(out, "edged: configuration version %d: the version before the unconfirmed one, restored\n", v)
	}
	stopControl, err := serveControl(ctx, cfg.dataDir, svc)
	if err != nil {
		fmt.Fprintf(out, "edged: WARNING: no control socket for edged config: %v\n", err)
	} else {
		defer stopControl()
	}
	fmt.Fprintf(out, "edged: configuration over OPC UA at Objects/Configuration (ns=%d), versions in %s\n", svc.Namespace(), versions.Dir())

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
		case <-st.Served(): // the listener failed
			err := st.ServeErr()
			st.Close(context.Background())
			return fmt.Errorf("OPC UA server: %w", err)
		case <-tick:
			e.Diagnostics(&d)
			printReport(out, &d)
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := st.Close(sctx); err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			fmt.Fprintf(out, "edged: %s\n", line)
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
	if len(conf.Devices) == 0 {
		fmt.Fprintln(out, "edged: the configuration has no devices: nothing is polled, and the server shows only its own nodes")
	}
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

// serverConfig configures the OPC UA server from the command line.
func serverConfig(cfg config, url string, out io.Writer) server.Config {
	number, date := buildStamp()
	return server.Config{
		EndpointURL:     url,
		SoftwareVersion: version,
		BuildNumber:     number,
		BuildDate:       date,
		MaxSessions:     cfg.maxSessions,
		MaxConnections:  cfg.maxConnections,
		DataEfficient:   cfg.dataEfficient,
		Poller:          cfg.poller,
		Channel:         &uasc.Config{ReadSpin: cfg.readSpin},
		Logger:          slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}
