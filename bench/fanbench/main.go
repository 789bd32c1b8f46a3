// Command fanbench is the benchmark of subscription fan-out, run by
// `make bench-fanout`: many sessions, each with one subscription of many
// monitored items on tags that change in every scan cycle. It is a
// benchmark, not a test: it reports figures and asserts nothing about them.
//
// It has two roles:
//
//	fanbench [-sessions 20] [-items 1000] [-publish 5ms] [-sampling 5ms] [-queue 10] [-inflight 5]
//	         [-duration 10s] [-warmup 3s] [-load-prefix 'taskset -c 1'] [-sim-in-memory=false]
//	fanbench load -url URL -ns N -sessions 20 -items 1000 ...
//
// The main role runs what edged runs, in its own process (which `make
// bench-fanout` pins to core 0): the simulated PLC's Modbus TCP slave
// (plc/sim, not ticking: see below) holding 1,000 tags on 4 devices (units
// 1..4, 250 tags each, each device on its own registers: uint16, int32,
// float32 and float64 holding registers), polled through the real driver
// (plc/devices) by the scan engine at 5 ms, and shown over OPC UA by the
// binding and opcua/server on a loopback port. The driver polls the slave
// in memory (sim.Options.InMemory), as edged does; with
// -sim-in-memory=false over loopback TCP.
//
// Every tag changes in every cycle, and never twice between two polls: a
// subscriber to the engine's images (run by the engine after each publish,
// before the next cycle starts) writes the next change number k into every
// register of a device once the image holds the device's previous number,
// so that the next poll reads it. A device whose poll came late keeps its
// number until an image shows it. A tag's value is its device's k (a
// uint16 k mod 2¹⁶, an int32 k mod 2³², a float32 k mod 2²⁴, a float64 k),
// so the load finds every lost change from the values alone.
//
// The load role (a child process, after -load-prefix, which `make
// bench-fanout` uses to pin it to core 1) opens -sessions sessions with our
// raw client (internal/testutil/uaclient); each creates one subscription (-publish
// interval) with -items monitored items (-sampling interval, -queue queue
// size, discard oldest) on the tags, the same tags in every session, and
// keeps -inflight Publish requests in flight, each acknowledging what the
// previous response brought. It decodes only what it counts: sequence
// numbers, client handles, the value and the status of each
// MonitoredItemNotification, into reused state. Per subscription it checks
// that the NotificationMessage sequence numbers follow each other (a
// keep-alive carries the next number without using it, OPC 10000-4
// §5.13.1.1); per item that the value is the previous one plus one (else
// the changes in between are lost); and it counts the values that carry the
// overflow bit (StatusCode InfoType 0x0480), which the server sets on the
// value that follows a discarded one in an item's queue.
//
// The report: sessions, items, cycles, notifications per second delivered
// and expected (the tag changes the engine published × sessions), lost
// changes, overflows, sequence gaps, the server process's CPU time
// (getrusage, as a percentage of one core) and the load's (if the load is
// near 100 %, the client is the bottleneck, not the server), the engine's
// overruns and start jitter p99.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/drivers/modbus/slave"
	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

func main() { kit.Main("fanbench", "load", loadMain, benchMain) }

// The bench configuration: devices × tags per device, each device on its
// own block of registers.
const (
	benchDevices = 4
	tagsPerDev   = 250
	benchTags    = benchDevices * tagsPerDev
	regBase      = 1000 // the first device's block
	regBlock     = 500  // registers per device
)

// tagLayout is one block of tags of one type in a device's registers.
type tagLayout struct {
	prefix string
	typ    config.Type
	n      int
	off    int // first register, from the device's block
	regs   int // registers per tag
}

var layout = []tagLayout{
	{"U", config.UInt16, 100, 0, 1},
	{"L", config.Int32, 50, 100, 2},
	{"F", config.Float32, 50, 200, 2},
	{"D", config.Float64, 50, 300, 4},
}

// deviceName returns the name of bench device i (0-based).
func deviceName(i int) string { return fmt.Sprintf("d%d", i+1) }

// tagName returns the name of a device's tag j (0-based) and its block and
// index in the block.
func tagName(j int) (string, *tagLayout, int) {
	for k := range layout {
		l := &layout[k]
		if j < l.n {
			return fmt.Sprintf("%s%03d", l.prefix, j), l, j
		}
		j -= l.n
	}
	panic("fanbench: tag index out of range")
}

// nodeName returns the NodeId string of bench tag g (0..benchTags-1).
func nodeName(g int) string {
	name, _, _ := tagName(g % tagsPerDev)
	return deviceName(g/tagsPerDev) + "." + name
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
			d.Tags = append(d.Tags, config.Tag{Name: name, Type: l.typ,
				Address:   fmt.Sprintf("hr:%d", regBase+i*regBlock+l.off+k*l.regs),
				ScanClass: "fast", Access: config.Read})
		}
		c.Devices = append(c.Devices, d)
	}
	return c
}

// putChange writes change number k into every tag register of device i
// (high word first, the default order).
func putChange(hr []uint16, i int, k uint64) {
	base := regBase + i*regBlock
	for _, l := range layout {
		for j := range l.n {
			r := hr[base+l.off+j*l.regs:]
			switch l.typ {
			case config.UInt16:
				r[0] = uint16(k)
			case config.Int32:
				put(r[:2], uint64(uint32(k)))
			case config.Float32:
				put(r[:2], uint64(math.Float32bits(float32(k%(1<<24)))))
			case config.Float64:
				put(r[:4], math.Float64bits(float64(k)))
			}
		}
	}
}

// put stores x in the registers r, high word first.
func put(r []uint16, x uint64) {
	for i := range r {
		r[len(r)-1-i] = uint16(x >> (16 * i))
	}
}

// changer makes every tag change once per cycle; see the package
// documentation. Its image function runs on the engine's goroutine.
type changer struct {
	s      *sim.Sim
	marker []plc.Handle // per device, its first (uint16) tag
	k      []uint64     // per device, the change number in its registers

	changes atomic.Uint64 // tag changes published by the engine
	images  atomic.Uint64 // images published
}

func newChanger(s *sim.Sim, e *plc.Engine) (*changer, error) {
	c := &changer{s: s, k: make([]uint64, benchDevices)}
	for i := range benchDevices {
		name, _, _ := tagName(0)
		h, ok := e.Lookup(deviceName(i), name)
		if !ok {
			return nil, fmt.Errorf("fanbench: no tag %s.%s", deviceName(i), name)
		}
		c.marker = append(c.marker, h)
	}
	return c, nil
}

func (c *changer) image(im *plc.Image) {
	c.changes.Add(uint64(len(im.Changed())))
	c.images.Add(1)
	var next [benchDevices]bool
	any := false
	for i, h := range c.marker {
		if im.Status(h).IsGood() && im.Value(h).Uint64() == uint64(uint16(c.k[i])) {
			c.k[i]++
			next[i], any = true, true
		}
	}
	if !any {
		return
	}
	c.s.Update(func(b *slave.Bank) {
		for i := range next {
			if next[i] {
				putChange(b.HoldingRegisters, i, c.k[i])
			}
		}
	})
}

type benchFlags struct {
	duration, warmup  time.Duration
	sessions, items   int
	publish, sampling time.Duration
	queue, inflight   int
	loadPrefix        string
	cpuprofile        string
	inMemory          bool
}

// loadArgs returns the load role's flags.
func (f *benchFlags) loadArgs(url string, ns uint16) []string {
	return []string{"-url", url, "-ns", fmt.Sprint(ns), "-sessions", fmt.Sprint(f.sessions),
		"-items", fmt.Sprint(f.items), "-publish", f.publish.String(), "-sampling", f.sampling.String(),
		"-queue", fmt.Sprint(f.queue), "-inflight", fmt.Sprint(f.inflight)}
}

func benchMain(args []string, out io.Writer) error {
	f, err := parseBenchFlags(args)
	if err != nil {
		return err
	}
	cfg := benchConfig(config.SimulatorAddress)
	if err := cfg.Validate(); err != nil {
		return err
	}
	window := max(int(f.duration/(time.Duration(cfg.BaseCycleMs)*time.Millisecond)), 16)
	st, err := stack.New(stack.Config{Plant: &cfg, Simulator: &sim.Options{Manual: true, InMemory: f.inMemory}, Window: window, Runtime: stack.Policy(),
		Server: server.Config{Logger: slog.New(slog.DiscardHandler)}})
	if err != nil {
		return err
	}
	defer func() {
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		st.Close(sctx)
	}()
	e, b, s, url := st.Engine, st.Binding, st.Sim, st.URL
	ch, err := newChanger(s, e)
	if err != nil {
		return err
	}
	// Monitored items sample in the cycle in which their tag changed, as
	// in edged; the changer runs after the server was told.
	st.Start(ch.image)

	fmt.Fprintf(out, "fanbench: %d tags on %d devices of the simulator at %s, %v cycle, every tag changing every cycle; %d sessions × %d items over %s (publishing %v, sampling %v, queue %d, %d Publish in flight); warm-up %v, measuring %v\n",
		e.Len(), benchDevices, s.Addr(), e.Period(), f.sessions, f.items, url, f.publish, f.sampling, f.queue, f.inflight, f.warmup, f.duration)
	ld, err := startLoad(f.loadPrefix, f.loadArgs(url, b.Namespace()))
	if err != nil {
		return err
	}
	defer ld.kill()

	return measure(f, e, ch, ld, out)
}

// parseBenchFlags parses and checks the command line.
func parseBenchFlags(args []string) (benchFlags, error) {
	var f benchFlags
	fs := flag.NewFlagSet("fanbench", flag.ContinueOnError)
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "measured window")
	fs.DurationVar(&f.warmup, "warmup", 3*time.Second, "warm-up before the window, not measured")
	fs.IntVar(&f.sessions, "sessions", 20, "sessions, one subscription each")
	fs.IntVar(&f.items, "items", benchTags, "monitored items per subscription, on tags 0..items-1")
	fs.DurationVar(&f.publish, "publish", 5*time.Millisecond, "requested publishing interval")
	fs.DurationVar(&f.sampling, "sampling", 5*time.Millisecond, "requested sampling interval")
	fs.IntVar(&f.queue, "queue", 10, "requested queue size of each item (discard oldest)")
	fs.IntVar(&f.inflight, "inflight", 5, "Publish requests in flight per session")
	fs.StringVar(&f.loadPrefix, "load-prefix", "", "`command` words put before the load role's (e.g. 'taskset -c 1')")
	fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the server process over the measured window to `file`")
	fs.BoolVar(&f.inMemory, "sim-in-memory", true, "poll the simulator in memory (sim.Options.InMemory), as edged does; false: over loopback TCP")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if f.sessions < 1 || f.items < 1 || f.items > benchTags || f.queue < 1 || f.inflight < 1 || f.inflight > 10 {
		return f, fmt.Errorf("-sessions %d -items %d -queue %d -inflight %d: want sessions ≥ 1, 1 ≤ items ≤ %d, queue ≥ 1, 1 ≤ inflight ≤ 10",
			f.sessions, f.items, f.queue, f.inflight, benchTags)
	}
	if f.duration <= 0 || f.warmup < 0 || f.publish <= 0 || f.sampling < 0 {
		return f, fmt.Errorf("-duration %v -warmup %v -publish %v -sampling %v: want positive durations", f.duration, f.warmup, f.publish, f.sampling)
	}

	return f, nil
}

// measure measures the window after the warm-up and reports it.
func measure(f benchFlags, e *plc.Engine, ch *changer, ld *load, out io.Writer) error {
	time.Sleep(f.warmup)
	var d0, d1 plc.Diagnostics
	e.Diagnostics(&d0)
	load0 := kit.LoadAvg()
	c0, i0 := ch.changes.Load(), ch.images.Load()
	cpu0, t0 := kit.CPUTime(), time.Now()
	if f.cpuprofile != "" {
		fp, err := os.Create(f.cpuprofile)
		if err != nil {
			return err
		}
		defer fp.Close()
		if err := pprof.StartCPUProfile(fp); err != nil {
			return err
		}
	}
	if err := ld.send("mark"); err != nil {
		return err
	}
	time.Sleep(f.duration)
	if f.cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	if err := ld.send("stop"); err != nil {
		return err
	}
	e.Diagnostics(&d1)
	c1, i1 := ch.changes.Load(), ch.images.Load()
	cpu1, t1 := kit.CPUTime(), time.Now()

	line, err := ld.finish()
	if err != nil {
		return err
	}
	r, err := parseResult(line)
	if err != nil {
		return err
	}
	rep := report{
		sessions: f.sessions, items: f.items, period: e.Period(),
		cycles: d1.Cycles - d0.Cycles, images: i1 - i0, changes: c1 - c0,
		wall: t1.Sub(t0), cpu: cpu1 - cpu0, load: r,
		overruns: d1.Overruns - d0.Overruns, jitterP99: d1.StartJitter.P99, cycleP99: d1.CycleTime.P99,
	}
	for i := range d1.Devices {
		rep.skipped += d1.Devices[i].SkippedPolls - d0.Devices[i].SkippedPolls
	}
	rep.print(out)
	fmt.Fprintf(out, "  machine load average (1 min) %s at the start, %s at the end (other processes compete for the cores)\n", load0, kit.LoadAvg())
	return nil
}

// report is the figures of one run.
type report struct {
	sessions, items         int
	period                  time.Duration
	cycles, images, changes uint64
	wall, cpu               time.Duration
	load                    result
	overruns, skipped       uint64
	jitterP99, cycleP99     time.Duration
}

func (r *report) print(out io.Writer) {
	sec := r.wall.Seconds()
	// The changes of the monitored tags: the items watch tags 0..items-1
	// of the 1,000, which all change alike.
	expected := float64(r.changes) * float64(r.items) / benchTags * float64(r.sessions)
	perTag := 0.0
	if r.cycles > 0 {
		perTag = float64(r.changes) / float64(r.cycles) / benchTags
	}
	fmt.Fprintf(out, "fanbench: sessions=%d items=%d cycles=%d images=%d tag changes=%d (%.3f per tag per cycle) in %v\n",
		r.sessions, r.items, r.cycles, r.images, r.changes, perTag, r.wall.Round(time.Millisecond))
	ratio := 0.0
	if expected > 0 {
		ratio = 100 * float64(r.load.notifications) / expected
	}
	fmt.Fprintf(out, "  notifications/s delivered %.0f, expected %.0f (changes × sessions): %.1f%%; nominal %.0f (every item every %v cycle)\n",
		float64(r.load.notifications)/sec, expected/sec, ratio, float64(r.sessions*r.items)/r.period.Seconds(), r.period)
	fmt.Fprintf(out, "  lost=%d overflows=%d sequence_gaps=%d keepalives=%d bad_status=%d errors=%d messages=%d\n",
		r.load.lost, r.load.overflows, r.load.gaps, r.load.keepAlives, r.load.badStatus, r.load.errors, r.load.messages)
	us := func(v uint64) time.Duration { return time.Duration(v) * time.Microsecond }
	fmt.Fprintf(out, "  spacing of a subscription's messages with data (PublishTime): min %v, p50 %v, max %v\n",
		us(r.load.gapMin), us(r.load.gapP50), us(r.load.gapMax))
	fmt.Fprintf(out, "  server CPU %.1f%% of one core; load CPU %.1f%% of one core%s\n",
		100*r.cpu.Seconds()/sec, r.load.cpuPct, r.load.note())
	fmt.Fprintf(out, "  engine overruns %d, skipped polls %d, start jitter p99 %v, cycle time p99 %v\n",
		r.overruns, r.skipped, r.jitterP99, r.cycleP99)
	if r.load.lastErr != "" {
		fmt.Fprintf(out, "  load's last error: %s\n", r.load.lastErr)
	}
}

// result is the load's result line, "result k=v ...".
type result struct {
	notifications, messages, keepAlives      uint64
	lost, overflows, gaps, badStatus, errors uint64
	// The spacing of a subscription's messages with data by their
	// PublishTime, µs: smallest, median, largest.
	gapMin, gapP50, gapMax uint64
	cpuPct                 float64
	lastErr                string
}

// note says when the load, not the server, limits the rate.
func (r *result) note() string {
	if r.cpuPct >= 90 {
		return " (the load is near a full core: the client may be the bottleneck)"
	}
	return ""
}

func (r *result) format() string {
	return fmt.Sprintf("result notifications=%d messages=%d keepalives=%d lost=%d overflows=%d gaps=%d bad_status=%d errors=%d spacing_min=%d spacing_p50=%d spacing_max=%d cpu=%.1f last_error=%s",
		r.notifications, r.messages, r.keepAlives, r.lost, r.overflows, r.gaps, r.badStatus, r.errors, r.gapMin, r.gapP50, r.gapMax, r.cpuPct, strconv.Quote(r.lastErr))
}

func parseResult(line string) (result, error) {
	var r result
	rest, ok := strings.CutPrefix(line, "result ")
	if !ok {
		return r, fmt.Errorf("the load's result: %q", line)
	}
	rest, errPart, _ := strings.Cut(rest, " last_error=")
	if errPart != "" {
		s, err := strconv.Unquote(errPart)
		if err != nil {
			return r, fmt.Errorf("the load's result: %q: %w", line, err)
		}
		r.lastErr = s
	}
	u := map[string]*uint64{"notifications": &r.notifications, "messages": &r.messages, "keepalives": &r.keepAlives,
		"lost": &r.lost, "overflows": &r.overflows, "gaps": &r.gaps, "bad_status": &r.badStatus, "errors": &r.errors,
		"spacing_min": &r.gapMin, "spacing_p50": &r.gapP50, "spacing_max": &r.gapMax}
	for _, kv := range strings.Fields(rest) {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		if p := u[k]; p != nil {
			*p, err = strconv.ParseUint(v, 10, 64)
		} else if k == "cpu" {
			r.cpuPct, err = strconv.ParseFloat(v, 64)
		} else {
			err = errors.New("unknown field")
		}
		if err != nil {
			return r, fmt.Errorf("the load's result: %q: %s: %w", line, kv, err)
		}
	}
	return r, nil
}

// load is the load role in a child process.
type load struct{ *kit.Child }

// startLoad starts the load role with args after the words of prefix and
// waits until its subscriptions are set up.
func startLoad(prefix string, args []string) (*load, error) {
	c, err := kit.StartChild("load", prefix, append([]string{"load"}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := c.WaitReady("load"); err != nil {
		return nil, err
	}
	return &load{c}, nil
}

// send sends the load a command line: "mark" starts its count, "stop"
// ends it.
func (l *load) send(cmd string) error { return l.Send("load", cmd) }

// finish closes the load's input and returns its result line.
func (l *load) finish() (string, error) {
	var res string
	err := l.Finish("load", func(line string) {
		if strings.HasPrefix(line, "result ") {
			res = line
		}
	})
	return res, err
}

// kill ends the load if it is still running.
func (l *load) kill() {
	if l != nil {
		l.Kill()
	}
}
