// Command sparkbench measures edged's Sparkplug B edge node (make
// bench-sparkplug): the stack with the simulator at 5 ms and -bulk tags
// read every second, publishing to a mosquitto broker, and a consumer
// (the load role, another process) that decodes every message.
//
// The throughput runs alternate the stack without and with the northbound,
// -rounds times, and report the CPU per published metric (the difference
// of the two, over the metrics published), the bytes on the wire per
// metric, change → consumer latency (the metric's source timestamp, 1 ms
// resolution, to its arrival: an upper bound), and the scan's cycle time
// and overruns side by side. With -outage D the broker is stopped for D
// after the warm-up and started again: the forwarding of what edged kept
// is timed, and the latency of the live data that arrives meanwhile.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/internal/testutil/mosquitto"
	"github.com/edged/edged/mqtt"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
	"github.com/edged/edged/sparkplug"
)

func main() { kit.Main("sparkbench", "consume", consumeMain, benchMain) }

type flags struct {
	duration, warmup time.Duration
	rounds           int
	bulk             int
	outage           time.Duration
	loadPrefix       string
	brokerPrefix     string
	cpuprofile       string
	trace            string
	bulkOnly         bool
	floor            bool
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("sparkbench", flag.ContinueOnError)
	fs.DurationVar(&f.duration, "duration", 30*time.Second, "measured window of each run")
	fs.DurationVar(&f.warmup, "warmup", 5*time.Second, "warm-up before each window")
	fs.IntVar(&f.rounds, "rounds", 3, "throughput rounds, each a run without and one with the northbound")
	fs.IntVar(&f.bulk, "bulk", 10000, "`tags` read every second besides the simulator's, a multiple of 1,000")
	fs.DurationVar(&f.outage, "outage", 0, "instead of the throughput runs: stop the broker this long, then time the forwarding")
	fs.StringVar(&f.loadPrefix, "load-prefix", "", "`command` words before the consumer's (e.g. 'taskset -c 1')")
	fs.StringVar(&f.brokerPrefix, "broker-prefix", "", "`command` words before mosquitto's")
	fs.BoolVar(&f.floor, "floor", false, "instead: the floor of one small PUBLISH every 5 ms (package mqtt alone, no stack), CPU per message")
	fs.BoolVar(&f.bulkOnly, "bulk-only", false, "publish the bulk tags only, not the simulator's (which change every 5 ms cycle)")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the runs with the northbound to `file`")
	fs.StringVar(&f.trace, "trace", "", "write an execution trace of the runs with the northbound (with -outage: of the forwarding) to `file`")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.bulk%1000 != 0 || f.bulk < 0 {
		return f, errors.New("-bulk: a multiple of 1,000")
	}
	return f, nil
}

// plant is the configuration: the simulator's device (its history as
// shipped) and bulk/1000 devices of 1,000 UInt16 tags in the 1 s class,
// each a word of the simulator's Counter, Sine or Ramp (hr:1..7, which
// change every tick), with northbound when broker is set.
func plant(bulk int, broker string, bulkOnly bool) config.Config {
	c := config.Simulator()
	c.Devices = c.Devices[:1] // the sim PLC; not the GPIO
	for d := range bulk / 1000 {
		dev := config.Device{Name: fmt.Sprintf("b%d", d), Kind: config.KindModbusTCP, NoCommTimeoutMs: 5000,
			ModbusTCP: config.DefaultModbusTCP(config.SimulatorAddress)}
		for j := range 1000 {
			dev.Tags = append(dev.Tags, config.Tag{Name: fmt.Sprintf("W%04d", j), Type: config.UInt16,
				Address: fmt.Sprintf("hr:%d", 1+j%7), ScanClass: "second", Access: config.Read})
		}
		c.Devices = append(c.Devices, dev)
	}
	if broker != "" {
		c.Northbound = config.DefaultSparkplug(broker)
		c.Northbound.Sparkplug.EdgeNodeID = "bench"
		if bulkOnly {
			for _, d := range c.Devices[1:] {
				for _, t := range d.Tags {
					c.Northbound.Sparkplug.Tags = append(c.Northbound.Sparkplug.Tags, config.SparkplugTag{Device: d.Name, Name: t.Name})
				}
			}
		}
	}
	return c
}

func startStack(c config.Config, historyDir string, window int) (*stack.Stack, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	st, err := stack.New(stack.Config{Plant: &c, Simulator: &sim.Options{InMemory: true}, Window: window, HistoryDir: historyDir,
		Server: server.Config{Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}, Runtime: stack.Policy()})
	if err != nil {
		return nil, err
	}
	if err := st.Start(); err != nil {
		return nil, err
	}
	return st, nil
}

// run is the figures of one measured window.
type run struct {
	northbound       bool
	cpu, wall        time.Duration
	cycleP99, cycMax time.Duration
	overruns         uint64
	metrics, msgs    uint64
	consumer         map[string]string
}

func benchMain(args []string, out io.Writer) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "sparkbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b, err := mosquitto.Run(dir, f.brokerPrefix)
	if err != nil {
		return err
	}
	defer b.Stop()
	if f.outage > 0 {
		return outage(f, b, dir, out)
	}
	if f.floor {
		return floor(f, b, out)
	}
	fmt.Fprintf(out, "sparkbench: the simulator at 5 ms and %d tags read every second; without and with the northbound to mosquitto at %s, %d rounds of %v (warm-up %v)\n",
		f.bulk, b.URL(0), f.rounds, f.duration, f.warmup)
	var runs []run
	for r := range f.rounds {
		for _, nb := range []bool{false, true} {
			x, err := throughput(f, b, nb)
			if err != nil {
				return err
			}
			report(out, r+1, &x)
			runs = append(runs, x)
		}
	}
	summary(out, runs)
	return nil
}

// throughput runs one measured window.
func throughput(f flags, b *mosquitto.Broker, nb bool) (run, error) {
	x := run{northbound: nb}
	broker := ""
	var cons *kit.Child
	if nb {
		broker = b.URL(0)
		var err error
		if cons, err = startConsumer(f, broker); err != nil {
			return x, err
		}
		defer cons.Kill()
	}
	window := int(f.duration / (5 * time.Millisecond))
	st, err := startStack(plant(f.bulk, broker, f.bulkOnly), "", window)
	if err != nil {
		return x, err
	}
	defer st.Close(context.Background())
	time.Sleep(f.warmup)
	runtime.GC()
	var d0, d1 plc.Diagnostics
	st.Engine.Diagnostics(&d0)
	var s0 = statsOf(st)
	if cons != nil {
		if err := cons.Send("consumer", "mark"); err != nil {
			return x, err
		}
	}
	if nb && f.cpuprofile != "" {
		pf, err := os.Create(f.cpuprofile)
		if err != nil {
			return x, err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return x, err
		}
	}
	if nb {
		stopTrace, err := kit.StartTrace(f.trace)
		if err != nil {
			return x, err
		}
		defer stopTrace()
	}
	cpu0, t0 := kit.CPUTime(), time.Now()
	time.Sleep(f.duration)
	cpu1, t1 := kit.CPUTime(), time.Now()
	if nb && f.cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	st.Engine.Diagnostics(&d1)
	s1 := statsOf(st)
	x.cpu, x.wall = cpu1-cpu0, t1.Sub(t0)
	x.cycleP99, x.cycMax = d1.CycleTime.P99, d1.CycleTime.Max
	x.overruns = d1.Overruns - d0.Overruns
	x.metrics, x.msgs = s1[0]-s0[0], s1[1]-s0[1]
	if cons != nil {
		x.consumer = map[string]string{}
		err := cons.Finish("consumer", func(line string) {
			if k, v, ok := strings.Cut(line, "="); ok {
				x.consumer[k] = v
			}
		})
		if err != nil {
			return x, err
		}
	}
	return x, nil
}

// statsOf returns the node's metrics and messages published (0 without).
func statsOf(st *stack.Stack) [2]uint64 {
	if st.Northbound == nil {
		return [2]uint64{}
	}
	s := st.Northbound.Stats()
	return [2]uint64{s.Metrics, s.Messages}
}

func report(out io.Writer, round int, x *run) {
	what := "without northbound"
	if x.northbound {
		what = "with northbound   "
	}
	fmt.Fprintf(out, "round %d %s: CPU %5.1f %% of a core; cycle p99 %v max %v; overruns %d", round, what,
		100*x.cpu.Seconds()/x.wall.Seconds(), x.cycleP99.Round(time.Microsecond), x.cycMax.Round(time.Microsecond), x.overruns)
	if x.northbound {
		c := x.consumer
		fmt.Fprintf(out, "; published %d metrics in %d messages (%.0f metrics/s); consumer: %s metrics, %s bytes/metric, latency from the value's read p50 %s p99 %s max %s, from the image p50 %s p99 %s max %s (the %s messages of 100 metrics or more: p50 %s max %s), seq gaps %s",
			x.metrics, x.msgs, float64(x.metrics)/x.wall.Seconds(), c["metrics"], c["bytes_per_metric"], c["p50"], c["p99"], c["max"],
			c["msg_p50"], c["msg_p99"], c["msg_max"], c["big"], c["big_p50"], c["big_max"], c["seq_gaps"])
	}
	fmt.Fprintln(out)
}

// summary prints the medians and the CPU per published metric.
func summary(out io.Writer, runs []run) {
	var off, on []float64
	var offP99, onP99 []time.Duration
	var offOver, onOver uint64
	var perMetric []float64
	for i := 0; i+1 < len(runs); i += 2 {
		a, b := &runs[i], &runs[i+1]
		ca, cb := a.cpu.Seconds()/a.wall.Seconds(), b.cpu.Seconds()/b.wall.Seconds()
		off, on = append(off, ca), append(on, cb)
		offP99, onP99 = append(offP99, a.cycleP99), append(onP99, b.cycleP99)
		offOver, onOver = offOver+a.overruns, onOver+b.overruns
		if b.metrics > 0 {
			perMetric = append(perMetric, (cb-ca)*b.wall.Seconds()/float64(b.metrics)*1e9)
		}
	}
	fmt.Fprintf(out, "median CPU: %.1f %% without, %.1f %% with the northbound; CPU per published metric (difference / metrics): median %.0f ns (rounds %s)\n",
		100*median(off), 100*median(on), median(perMetric), fmtAll(perMetric))
	fmt.Fprintf(out, "cycle p99 median: %v without, %v with; overruns: %d without, %d with\n",
		medianD(offP99).Round(time.Microsecond), medianD(onP99).Round(time.Microsecond), offOver, onOver)
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianD(x []time.Duration) time.Duration {
	if len(x) == 0 {
		return 0
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}

func fmtAll(x []float64) string {
	var s []string
	for _, v := range x {
		s = append(s, strconv.FormatFloat(v, 'f', 0, 64))
	}
	return strings.Join(s, ", ")
}

// outage runs the simulator alone with its history and the northbound,
// stops the broker for f.outage and times the forwarding when it is back.
func outage(f flags, b *mosquitto.Broker, dir string, out io.Writer) error {
	cons, err := startConsumer(f, b.URL(0))
	if err != nil {
		return err
	}
	defer cons.Kill()
	// The engine's percentile window as shipped (1,024 cycles): every
	// caller of its Diagnostics (the alarms' scan check, the node's scan
	// figures, this bench) sorts the window on the scan's one P, and a
	// window of the whole outage (120,000 cycles for 10 minutes) took
	// 14 ms a sort there, longer than a cycle.
	st, err := startStack(plant(0, b.URL(0), false), dir+"/history", 0)
	if err != nil {
		return err
	}
	defer st.Close(context.Background())
	time.Sleep(f.warmup)
	fmt.Fprintf(out, "sparkbench: the simulator with its history; the broker stopped for %v\n", f.outage)
	var dOut plc.Diagnostics
	st.Engine.Diagnostics(&dOut)
	b.Stop()
	time.Sleep(f.outage)
	if err := cons.Send("consumer", "mark"); err != nil {
		return err
	}
	var d0, d1 plc.Diagnostics
	st.Engine.Diagnostics(&d0)
	fmt.Fprintf(out, "scan overruns during the outage: %d in %v\n", d0.Overruns-dOut.Overruns, f.outage)
	restarted := time.Now()
	stopTrace, err := kit.StartTrace(f.trace)
	if err != nil {
		return err
	}
	defer stopTrace()
	if err := b.Restart(); err != nil {
		return err
	}
	// Wait for the forwarding to start and end.
	n := st.Northbound
	var began time.Time
	for n.Stats().Replayed == 0 || n.Stats().Backlog > 0 {
		if time.Since(restarted) > 30*time.Minute {
			return errors.New("the forwarding did not end in 30 minutes")
		}
		if began.IsZero() && n.Stats().Replayed > 0 {
			began = time.Now()
		}
		time.Sleep(time.Millisecond)
	}
	if began.IsZero() {
		began = time.Now()
	}
	done := time.Since(began)
	time.Sleep(time.Second) // live data after it, for the consumer
	st.Engine.Diagnostics(&d1)
	s := n.Stats()
	res := map[string]string{}
	if err := cons.Finish("consumer", func(line string) {
		if k, v, ok := strings.Cut(line, "="); ok {
			res[k] = v
		}
	}); err != nil {
		return err
	}
	fmt.Fprintf(out, "forwarded %d stored samples in %v from the first, %v after the broker came back (%.0f samples/s); consumer: %s historical metrics, live latency (from the value's read) during the forwarding p50 %s p99 %s max %s (%s live metrics), seq gaps %s; scan overruns meanwhile %d, cycle max of the last 1,024 %v\n",
		s.Replayed, done.Round(time.Millisecond), began.Sub(restarted).Round(time.Millisecond), float64(s.Replayed)/done.Seconds(), res["historical"], res["p50"], res["p99"], res["max"], res["metrics"], res["seq_gaps"],
		d1.Overruns-d0.Overruns, d1.CycleTime.Max.Round(time.Microsecond))
	return nil
}

// floor measures what a publish every 5 ms costs on this machine before
// any of edged's work: a goroutine woken every 5 ms, first doing nothing,
// then publishing a DDATA of three metrics through package mqtt (a
// PINGREQ every 20 ms, as the northbound marks); the difference of the
// process's CPU over the messages.
func floor(f flags, b *mosquitto.Broker, out io.Writer) error {
	cons, err := startConsumer(f, b.URL(0))
	if err != nil {
		return err
	}
	defer cons.Kill()
	c, err := mqtt.Dial(context.Background(), b.URL(0), mqtt.Options{ClientID: "sparkbench-floor", KeepAlive: 30 * time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	payload := sparkplug.AppendHeader(nil, uint64(time.Now().UnixMilli()), 1, true)
	for i := range 3 {
		payload = sparkplug.AppendMetric(payload, &sparkplug.Metric{Alias: uint64(9 + i), HasAlias: true, OmitType: true,
			Timestamp: uint64(time.Now().UnixMilli()), Value: sparkplug.Value{Type: sparkplug.Double, Bits: uint64(i)}})
	}
	// cycle wakes every 5 ms for f.duration, publishing with publish, and
	// returns the CPU share and the wake-ups.
	cycle := func(publish bool) (float64, int, error) {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		n := 0
		var lastMark time.Time
		cpu0, t0 := kit.CPUTime(), time.Now()
		for now := range tick.C {
			if now.Sub(t0) >= f.duration {
				break
			}
			n++
			if !publish {
				continue
			}
			c.Publish("spBv1.0/edged/DDATA/bench/sim", payload, false)
			if now.Sub(lastMark) >= 20*time.Millisecond {
				c.Mark()
				lastMark = now
			}
			if err := c.Flush(); err != nil {
				return 0, 0, err
			}
		}
		return (kit.CPUTime() - cpu0).Seconds() / time.Since(t0).Seconds(), n, nil
	}
	time.Sleep(f.warmup)
	for r := range f.rounds {
		idle, _, err := cycle(false)
		if err != nil {
			return err
		}
		busy, n, err := cycle(true)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "floor round %d: a goroutine woken every 5 ms: %.2f %% of a core idle, %.2f %% publishing %d messages of %d bytes: %.1f µs of CPU per message\n",
			r+1, 100*idle, 100*busy, n, len(payload), (busy-idle)*f.duration.Seconds()/float64(n)*1e6)
	}
	return cons.Finish("consumer", nil)
}

// startConsumer starts the consumer role on the broker at url and waits
// until it subscribed.
func startConsumer(f flags, url string) (*kit.Child, error) {
	c, err := kit.StartChild("consumer", f.loadPrefix, "consume", url)
	if err != nil {
		return nil, err
	}
	if err := c.WaitReady("consumer"); err != nil {
		return nil, err
	}
	return c, nil
}
