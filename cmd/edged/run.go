package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/edged/edged/binding"
	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/plc"
	pconfig "github.com/edged/edged/plc/config"
)

// shutdownTimeout bounds how long run waits for connections to close.
const shutdownTimeout = 5 * time.Second

// run serves until ctx is done: the stack configuration of the command
// line (startup.go), the stack started (internal/stack: the built-in
// simulator if the configuration polls it, the devices, the scan engine,
// the server and the binding, the configuration service, the watchdog),
// what it serves said on out, the scan statistics every cfg.reportEvery;
// at the end the stack shuts down in the reverse order.
func run(ctx context.Context, cfg config, out io.Writer) error {
	sc, loaded, err := startupConfig(cfg, out)
	if err != nil {
		return err
	}
	st, err := stack.New(sc)
	loaded() // the certificate's loading is over either way
	if err != nil {
		return err
	}
	announce(out, cfg, st, &sc)
	// The configuration is garbage before the start returns memory to
	// the system: with many tags it takes megabytes.
	sc.Plant = nil
	if err := st.Start(); err != nil {
		return err
	}
	announceStarted(out, cfg, st, &sc)
	err = serve(ctx, cfg, st, out)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if cerr := st.Close(sctx); cerr != nil {
		for _, line := range strings.Split(cerr.Error(), "\n") {
			fmt.Fprintf(out, "edged: %s\n", line)
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(out, "edged: shut down cleanly")
	return nil
}

// serve prints the scan statistics every cfg.reportEvery until ctx is
// done or the server stops serving (its listener failed).
func serve(ctx context.Context, cfg config, st *stack.Stack, out io.Writer) error {
	var tick <-chan time.Time
	if cfg.reportEvery > 0 {
		t := time.NewTicker(cfg.reportEvery)
		defer t.Stop()
		tick = t.C
	}
	var d plc.Diagnostics
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-st.Served():
			return fmt.Errorf("OPC UA server: %w", st.ServeErr())
		case <-tick:
			st.Engine.Diagnostics(&d)
			printReport(out, &d)
		}
	}
}

// announce says what edged will serve: the endpoint URLs, the simulator,
// the tags.
func announce(out io.Writer, cfg config, st *stack.Stack, sc *stack.Config) {
	fmt.Fprintf(out, "edged %s: OPC UA endpoint URL %s (listening on %s)\n", version, st.URL, st.Listener.Addr())
	if h, _, _ := net.SplitHostPort(cfg.listen); isWildcard(h) {
		var urls []string
		for _, ip := range interfaceIPs() {
			urls = append(urls, endpointURL(ip.String(), st.Listener.Addr().(*net.TCPAddr).Port))
		}
		if len(urls) > 0 {
			fmt.Fprintf(out, "edged: also reachable at %s; GetEndpoints answers with the host a client used\n", strings.Join(urls, ", "))
		}
	}
	if st.Sim != nil {
		fmt.Fprintf(out, "edged: built-in simulated PLC (Modbus TCP slave) at %s\n", st.Sim.Addr())
	}
	if st.WriteCommand {
		fmt.Fprintf(out, "edged: method ns=%d;s=sim.WriteCommand(UInt16) writes sim.Command and returns once the PLC has it\n", st.Binding.Namespace())
	}
	printTags(out, sc.Plant, st.Binding)
}

// announceStarted says how it runs: the scan thread, the stack's notes,
// the watchdog, the configuration service.
func announceStarted(out io.Writer, cfg config, st *stack.Stack, sc *stack.Config) {
	if rt := sc.RealTime; (rt.Priority > 0 || rt.CPU >= 0) && st.RealTimeErr() == nil {
		fmt.Fprintf(out, "edged: scan thread: SCHED_FIFO priority %d, CPU %d (-1: any)\n", rt.Priority, rt.CPU)
	}
	for _, n := range st.Notes {
		fmt.Fprintf(out, "edged: %s\n", n)
	}
	fmt.Fprintf(out, "edged: serving OPC UA clients\n")
	if ts := st.Server.ReverseStates(); len(ts) > 0 {
		urls := make([]string, len(ts))
		for i, t := range ts {
			urls[i] = t.URL
		}
		fmt.Fprintf(out, "edged: reverse connect to %s (Diagnostics/ReverseConnect)\n", strings.Join(urls, ", "))
	}
	if sc.Watchdog != "" {
		fmt.Fprintf(out, "edged: watchdog %s, timeout %v, fed while the scan is healthy\n", sc.Watchdog, sc.WatchdogTimeout)
	}
	if cfg.stallAfter > 0 {
		fmt.Fprintf(out, "edged: WARNING: TEST ONLY: the scan stops in %v (--test-stall-scan-after)\n", cfg.stallAfter)
	}
	fmt.Fprintf(out, "edged: configuration over OPC UA at Objects/Configuration (ns=%d), versions in %s\n", st.Config.Namespace(), sc.Versions.Dir())
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
	var alarmed []string
	for _, d := range conf.Devices {
		if d.CommAlarm != nil {
			alarmed = append(alarmed, d.Name+"/Communication")
		}
		for _, t := range d.Tags {
			if t.Alarm != nil {
				alarmed = append(alarmed, fmt.Sprintf("%s.%s/%s", d.Name, t.Name, map[pconfig.AlarmKind]string{pconfig.AlarmLimit: "Limit", pconfig.AlarmLimits: "Limit", pconfig.AlarmOffNormal: "OffNormal"}[t.Alarm.Kind]))
			}
		}
	}
	if len(alarmed) > 0 {
		const most = 8
		more := ""
		if len(alarmed) > most {
			more = fmt.Sprintf(" ... (%d more)", len(alarmed)-most)
			alarmed = alarmed[:most]
		}
		fmt.Fprintf(out, "edged: alarms, as events of the Server object: %s%s\n", strings.Join(alarmed, ", "), more)
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
