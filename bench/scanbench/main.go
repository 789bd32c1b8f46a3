// Command scanbench is the benchmark of the scan cycle under OPC UA load,
// run by `make bench-scan` (and `make bench`). It is a benchmark, not a
// test: it reports figures and asserts nothing about them.
//
// It has two roles:
//
//	scanbench [-duration 60s] [-warmup 5s] [-clients 10] [-nodes 100] [-load-prefix 'taskset -c 1']
//	scanbench load -url URL -ns N -clients 10 -nodes 100
//
// The main role runs, in its own process, what edged runs: the built-in
// simulated PLC (plc/sim), here holding 1,000 tags on 4 Modbus TCP devices
// (units 1..4 of the simulator, 250 tags each, all in the 5 ms scan class:
// uint16, float32, int32 and float64 holding registers and coils), polled
// through the real driver (plc/devices) by the scan engine at 5 ms, and
// shown over OPC UA by the binding and opcua/server on a loopback port.
// It then starts the load role as a child process (after -load-prefix,
// which `make bench-scan` uses to pin it to another core than this one) and
// waits for its clients to connect. After the warm-up it measures, over
// -duration: the cycle time and start jitter (p50, p99, max over exactly the
// measured cycles: the engine's window is set to their number), the
// overruns, the Modbus requests per cycle, the process's CPU time
// (getrusage, user + system, as a percentage of one core) and the clients'
// Reads.
//
// The load role connects -clients gopcua clients (SecurityPolicy None,
// anonymous); client i reads the -nodes tags from the i·nodes-th on, in one
// Read request, again and again, until its standard input ends; then it
// prints "reads=N errors=N".
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/edged/edged/alarms"
	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/board"
	"github.com/edged/edged/historian"
	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
	"github.com/edged/edged/tsdb"
)

func main() { kit.Main("scanbench", "load", loadMain, benchMain) }

// The bench configuration: devices × tags per device.
const (
	benchDevices = 4
	tagsPerDev   = 250
)

// tagLayout is one block of tags of one type per device, on consecutive
// addresses.
type tagLayout struct {
	prefix string
	typ    config.Type
	n      int
	area   string
	start  int
}

var layout = []tagLayout{
	{"U", config.UInt16, 100, "hr", 1000},
	{"F", config.Float32, 50, "hr", 1100},
	{"L", config.Int32, 50, "hr", 1200},
	{"D", config.Float64, 25, "hr", 1300},
	{"B", config.Bool, 25, "co", 100},
}

// deviceName returns the name of bench device i (0-based).
func deviceName(i int) string { return fmt.Sprintf("d%d", i+1) }

// tagName returns the name of a device's tag j (0-based) and its block.
func tagName(j int) (string, *tagLayout, int) {
	for k := range layout {
		l := &layout[k]
		if j < l.n {
			return fmt.Sprintf("%s%03d", l.prefix, j), l, j
		}
		j -= l.n
	}
	panic("scanbench: tag index out of range")
}

// benchConfig returns the 1,000-tag configuration polling the simulator at
// addr.
func benchConfig(addr string) config.Config {
	c := config.Default()
	c.Board = "sim"
	for i := range benchDevices {
		tcp := config.DefaultModbusTCP(addr)
		tcp.UnitID = config.Int(i + 1)
		d := config.Device{Name: deviceName(i), Kind: config.KindModbusTCP, NoCommTimeoutMs: 5000, ModbusTCP: tcp}
		for j := range tagsPerDev {
			name, l, k := tagName(j)
			off := l.start + k*max(l.typ.Registers(0), 1)
			d.Tags = append(d.Tags, config.Tag{Name: name, Type: l.typ, Address: fmt.Sprintf("%s:%d", l.area, off),
				ScanClass: "fast", Access: config.Read})
		}
		c.Devices = append(c.Devices, d)
	}
	return c
}

type benchFlags struct {
	duration, warmup time.Duration
	clients, nodes   int
	loadPrefix       string
	memprofile       string
	trace            string
	applies          int
	rtPriority       int
	rtCPU            int
	bulk             int     // tags in the 1 s class besides the 1,000 (history.go)
	bulkClass        string  // their scan class: "second" or "fast"
	alarms           bool    // a limit alarm on each of them
	alarmHigh        float64 // its High limit
	history          string  // "", "change" or "sim" (history.go)
	historyDir       string  // the store's, a temporary folder
}

func benchMain(args []string, out io.Writer) error {
	f, err := parseBenchFlags(args)
	if err != nil {
		return err
	}
	if f.history != "" {
		if f.historyDir, err = os.MkdirTemp("", "scanbench-history-"); err != nil {
			return err
		}
		defer os.RemoveAll(f.historyDir)
	}
	st, ap, err := startStack(f, out)
	if err != nil {
		return err
	}
	defer func() {
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		st.Close(sctx)
	}()
	if ap != nil {
		defer ap.stop()
	}
	e, s, url := st.Engine, st.Sim, st.URL
	ld, err := startLoad(f, url, st.Binding.Namespace())
	if err != nil {
		return err
	}
	defer ld.kill()
	fmt.Fprintf(out, "scanbench: %d tags on %d devices of the simulator at %s, %v cycle; %d clients reading %d tags each over %s; warm-up %v, measuring %v\n",
		e.Len(), devices(f), s.Addr(), e.Period(), f.clients, f.nodes, url, f.warmup, f.duration)
	return measure(f, e, st.Historian, st.Alarms, ld, ap, out)
}

// devices is the number of devices of the run's configuration.
func devices(f benchFlags) int {
	n := benchDevices + f.bulk/bulkPerDevice
	if f.applies > 0 || f.bulk > 0 || f.history != "" {
		n++ // sim
	}
	return n
}

// parseBenchFlags parses and checks the command line.
func parseBenchFlags(args []string) (benchFlags, error) {
	var f benchFlags
	fs := flag.NewFlagSet("scanbench", flag.ContinueOnError)
	fs.DurationVar(&f.duration, "duration", 60*time.Second, "measured window")
	fs.DurationVar(&f.warmup, "warmup", 5*time.Second, "warm-up before the window, not measured")
	fs.IntVar(&f.clients, "clients", 10, "OPC UA clients (0: none, a baseline without load)")
	fs.IntVar(&f.nodes, "nodes", 100, "tags per client's Read request")
	fs.StringVar(&f.loadPrefix, "load-prefix", "", "`command` words put before the load role's (e.g. 'taskset -c 1')")
	fs.StringVar(&f.memprofile, "memprofile", "", "write an allocation profile of the measured window to `file`")
	fs.StringVar(&f.trace, "trace", "", "write an execution trace of the measured window to `file` (go tool trace)")
	fs.IntVar(&f.applies, "applies", 0, "configuration changes applied live during the measured window (see applies.go)")
	fs.IntVar(&f.rtPriority, "rt-priority", 0, "SCHED_FIFO `priority` of the scan thread, as edged's --rt-priority (0: normal scheduling)")
	fs.IntVar(&f.rtCPU, "rt-cpu", -1, "the `CPU` of the scan thread (-1: any)")
	fs.IntVar(&f.bulk, "bulk", 0, "`tags` in the 1 s scan class besides the 1,000, a multiple of 1,000 (history.go)")
	fs.StringVar(&f.bulkClass, "bulk-class", "second", "the bulk tags' scan `class`: second (1 s) or fast (the 5 ms cycle)")
	fs.BoolVar(&f.alarms, "alarms", false, "a High limit alarm on each bulk tag, evaluated on every sample (history.go)")
	fs.Float64Var(&f.alarmHigh, "alarm-high", 70000, "the alarms' High `limit`: 70000 is above every UInt16 (each sample evaluated, no change), 32768 crossed all the time by the simulator's words (a storm)")
	fs.StringVar(&f.history, "history", "", "record history: `change` (the bulk tags every second, the simulator's tags on every change) or sim (the simulator's tags as its configuration has them); empty: none")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.clients < 0 || f.nodes < 1 || f.clients*f.nodes > benchDevices*tagsPerDev {
		return f, fmt.Errorf("-clients %d -nodes %d: want at least 1 each and at most %d tags in all", f.clients, f.nodes, benchDevices*tagsPerDev)
	}
	if f.bulk < 0 || f.bulk%bulkPerDevice != 0 {
		return f, fmt.Errorf("-bulk %d: want a multiple of %d", f.bulk, bulkPerDevice)
	}
	if f.bulkClass != "second" && f.bulkClass != "fast" {
		return f, fmt.Errorf("-bulk-class %q: want second or fast", f.bulkClass)
	}
	if f.history != "" && f.history != "change" && f.history != "sim" {
		return f, fmt.Errorf("-history %q: want change, sim or nothing", f.history)
	}
	if f.applies > 0 && (f.bulk > 0 || f.history != "") {
		return f, fmt.Errorf("-applies goes with neither -bulk nor -history (both add the simulator's device)")
	}
	if f.duration < time.Second || f.warmup < 0 {
		return f, fmt.Errorf("-duration %v -warmup %v: want a duration of 1 s or more", f.duration, f.warmup)
	}

	return f, nil
}

// startStack starts edged's stack with the bench configuration (with
// the applies' versions and sim.Counter when -applies).
func startStack(f benchFlags, out io.Writer) (*stack.Stack, *applier, error) {
	cfg := benchConfig(config.SimulatorAddress)
	if f.applies > 0 {
		cfg = withCounter(cfg, config.SimulatorAddress, false)
	}
	if f.bulk > 0 || f.history != "" {
		cfg = withBulk(cfg, config.SimulatorAddress, f.bulk, f.history, f.bulkClass, f.alarms, f.alarmHigh)
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	window := int(f.duration / time.Duration(cfg.BaseCycleMs) / time.Millisecond)
	sc := stack.Config{Plant: &cfg, Simulator: &sim.Options{}, Window: window,
		Server:   server.Config{Logger: slog.New(slog.DiscardHandler)},
		RealTime: &board.RealTime{Priority: f.rtPriority, CPU: f.rtCPU}, Runtime: stack.Policy()}
	sc.HistoryDir = f.historyDir
	var ap *applier
	if f.applies > 0 {
		var err error
		if ap, sc.Versions, err = newVersions(); err != nil {
			return nil, nil, err
		}
	}
	st, err := stack.New(sc)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*stack.Stack, *applier, error) {
		st.Close(context.Background())
		return nil, nil, err
	}
	if err := st.Start(); err != nil {
		return nil, nil, err
	}
	if f.rtPriority > 0 {
		if err := st.RealTimeErr(); err != nil {
			return fail(err)
		}
		if err := board.LockMemory(); err != nil {
			return fail(err)
		}
		fmt.Fprintf(out, "scanbench: scan thread SCHED_FIFO priority %d\n", f.rtPriority)
	}
	if ap != nil {
		if err := ap.start(st); err != nil {
			return fail(err)
		}
	}
	return st, ap, nil
}

// measure measures the window after the warm-up and reports it.
func measure(f benchFlags, e *plc.Engine, hs *historian.Historian, aw *alarms.Watch, ld *load, ap *applier, out io.Writer) error {
	time.Sleep(f.warmup)
	var d0, d1 plc.Diagnostics
	var h0, h1 tsdb.Stats
	e.Diagnostics(&d0)
	if hs != nil {
		hs.DB().Stats(&h0)
	}
	load0 := kit.LoadAvg()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, t0 := kit.CPUTime(), time.Now()
	if f.memprofile != "" {
		runtime.MemProfileRate = 4096
	}
	stopTrace, err := kit.StartTrace(f.trace)
	if err != nil {
		return err
	}
	if err := ld.mark(); err != nil {
		return err
	}
	if ap != nil {
		ap.run(f.applies, f.duration)
		time.Sleep(time.Until(t0.Add(f.duration)))
	} else {
		time.Sleep(f.duration)
	}
	stopTrace()
	e.Diagnostics(&d1)
	if hs != nil {
		hs.DB().Stats(&h1)
	}
	cpu1, t1 := kit.CPUTime(), time.Now()
	runtime.ReadMemStats(&m1)
	if f.memprofile != "" {
		if err := writeProfile(f.memprofile); err != nil {
			return err
		}
	}

	result, err := ld.finish()
	if err != nil {
		return err
	}
	report(out, &d0, &d1, cpu1-cpu0, t1.Sub(t0), result)
	if hs != nil {
		reportHistory(out, hs, &h0, &h1, t1.Sub(t0))
	}
	if aw != nil {
		fmt.Fprintf(out, "  alarms: %d conditions evaluated on every sample of their tags, %d changes dropped from the queue\n", aw.Set.Len(), aw.Dropped())
	}
	cur, hwm := rss()
	fmt.Fprintf(out, "  RSS %.1f MiB at the end, high-water mark %.1f MiB; %s\n", float64(cur)/1024, float64(hwm)/1024, goMemory())
	if ap != nil {
		ap.report(out)
	}
	wall := t1.Sub(t0).Seconds()
	fmt.Fprintf(out, "  allocated %.1f MB/s, %d GCs (%.1f/s), %d images allocated for readers\n",
		float64(m1.TotalAlloc-m0.TotalAlloc)/wall/1e6, m1.NumGC-m0.NumGC, float64(m1.NumGC-m0.NumGC)/wall,
		d1.ImagesAllocated-d0.ImagesAllocated)
	fmt.Fprintf(out, "  machine load average (1 min) %s at the start, %s at the end (other processes compete for the cores)\n", load0, kit.LoadAvg())
	return nil
}

// report prints the figures of the measured window.
func report(out io.Writer, d0, d1 *plc.Diagnostics, cpu, wall time.Duration, load string) {
	cycles := d1.Cycles - d0.Cycles
	var req, errs, skipped uint64
	before := map[string]*plc.DeviceDiagnostics{}
	for i := range d0.Devices {
		before[d0.Devices[i].Name] = &d0.Devices[i]
	}
	for i := range d1.Devices {
		d := &d1.Devices[i]
		b := before[d.Name]
		if b == nil || b.Driver.Requests > d.Driver.Requests { // a device added, or made anew, in the window
			b = &plc.DeviceDiagnostics{}
		}
		req += d.Driver.Requests - b.Driver.Requests
		errs += d.Driver.Errors - b.Driver.Errors
		skipped += d.SkippedPolls - b.SkippedPolls
	}
	perCycle := 0.0
	if cycles > 0 {
		perCycle = float64(req) / float64(cycles)
	}
	fmt.Fprintf(out, "scanbench: %d cycles in %v (percentiles over the last %d)\n", cycles, wall.Round(time.Millisecond), d1.CycleTime.N)
	fmt.Fprintf(out, "  cycle time    p50 %8v  p99 %8v  max %8v\n", d1.CycleTime.P50, d1.CycleTime.P99, d1.CycleTime.Max)
	fmt.Fprintf(out, "  start jitter  p50 %8v  p99 %8v  max %8v\n", d1.StartJitter.P50, d1.StartJitter.P99, d1.StartJitter.Max)
	fmt.Fprintf(out, "  overruns %d, skipped polls %d, Modbus requests %.2f per cycle (%d errors)\n",
		d1.Overruns-d0.Overruns, skipped, perCycle, errs)
	fmt.Fprintf(out, "  process CPU %.1f%% of one core (%v user+system)\n", 100*cpu.Seconds()/wall.Seconds(), cpu.Round(time.Millisecond))
	fmt.Fprintf(out, "  load: %s\n", load)
}

// writeProfile writes the allocation profile to path.
func writeProfile(path string) error {
	fp, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(fp, 0); err != nil {
		fp.Close()
		return err
	}
	return fp.Close()
}

// load is the load role in a child process; nil when there are no clients.
type load struct{ *kit.Child }

// startLoad starts the load role and waits for its clients to connect.
func startLoad(f benchFlags, url string, ns uint16) (*load, error) {
	if f.clients == 0 {
		return nil, nil
	}
	c, err := kit.StartChild("load", f.loadPrefix, "load", "-url", url, "-ns", fmt.Sprint(ns),
		"-clients", fmt.Sprint(f.clients), "-nodes", fmt.Sprint(f.nodes))
	if err != nil {
		return nil, err
	}
	if err := c.WaitReady("load"); err != nil {
		return nil, err
	}
	return &load{c}, nil
}

// mark starts the load's count.
func (l *load) mark() error {
	if l == nil {
		return nil
	}
	return l.Send("load", "mark")
}

// finish stops the load and returns its result line.
func (l *load) finish() (string, error) {
	if l == nil {
		return "none", nil
	}
	var result string
	err := l.Finish("load", func(line string) {
		if result == "" {
			result = line
		}
	})
	return result, err
}

// kill ends the load if it is still running.
func (l *load) kill() {
	if l != nil {
		l.Kill()
	}
}
