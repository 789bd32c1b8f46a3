// Command subbench is the latency benchmark of edged's subscriptions, run
// by `make bench-sub` (and `make bench`). It is a benchmark, not a test: it
// reports figures and asserts nothing about them.
//
// It has two roles:
//
//	subbench [-duration 10s] [-warmup 1s] [-reps 1000] [-inflight 4] [-queue 10] [-client-prefix 'taskset -c 1']
//	subbench client -addr HOST:PORT -ns N [-duration 10s] [-warmup 1s] [-reps 1000] [-inflight 4] [-queue 10]
//
// The main role runs, in its own process, what edged runs with its
// built-in simulated PLC: plc/sim, its configuration (config.Simulator),
// the real Modbus driver (plc/devices), the scan engine at 5 ms with
// PreciseWake, the binding (with the method sim.WriteCommand and
// Notify(SourceChanged)) and opcua/server on a loopback port. It records,
// in a subscriber of the engine registered before the binding's, the time
// (time.Now, CLOCK_REALTIME) at which each image carrying a new value of
// sim.Counter was published. It then starts the client role as a child
// process (after -client-prefix, which `make bench-sub` uses to pin it to
// another core than this one) and waits for it.
//
// The client role (internal/testutil/uaclient, see client.go) creates a
// subscription with a 5 ms publishing interval, monitored items on
// sim.Counter and sim.Status with 5 ms sampling and a queue, and keeps
// -inflight Publish requests outstanding, acknowledging every notification
// message. It measures:
//
//   - publish latency: engine publish of the image with a value of
//     sim.Counter → receipt of the Publish response that carries it. The
//     two ends are taken in two processes, both with time.Now().UnixNano()
//     (CLOCK_REALTIME, one clock for the machine); the client prints its
//     receipt times and this role matches them by counter value. It
//     reports p50, p99, max, the values matched and the values the engine
//     published in the window that never arrived (lost);
//   - write → status: -reps Writes of sim.Command, each followed by the
//     wait for the data change of sim.Status carrying the written value
//     (the simulator copies Command into Status on its next 5 ms tick, the
//     engine reads it back in the next cycle); then the same with Calls of
//     the method sim.WriteCommand, which returns once the PLC confirmed the
//     write. Both from the send of the request to the receipt of the data
//     change, in the client process alone.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edged/edged/bench/kit"
	"github.com/edged/edged/internal/stack"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

func main() { kit.Main("subbench", "client", clientMain, benchMain) }

type benchFlags struct {
	duration, warmup time.Duration
	reps             int
	inflight, queue  int
	clientPrefix     string
}

func benchMain(args []string, out io.Writer) error {
	var f benchFlags
	fs := flag.NewFlagSet("subbench", flag.ContinueOnError)
	fs.DurationVar(&f.duration, "duration", 10*time.Second, "measured window of the publish latency run")
	fs.DurationVar(&f.warmup, "warmup", time.Second, "warm-up before that window, not measured")
	fs.IntVar(&f.reps, "reps", 1000, "repetitions of the write → status and of the call → status runs")
	fs.IntVar(&f.inflight, "inflight", 4, "Publish requests the client keeps in flight")
	fs.IntVar(&f.queue, "queue", 10, "queue size of the monitored items")
	fs.StringVar(&f.clientPrefix, "client-prefix", "", "`command` words put before the client role's (e.g. 'taskset -c 1')")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if f.duration < 10*time.Millisecond || f.duration > time.Hour || f.warmup < 0 || f.reps < 1 || f.inflight < 1 || f.queue < 2 {
		return fmt.Errorf("want -duration 10ms..1h, -warmup ≥ 0, -reps ≥ 1, -inflight ≥ 1, -queue ≥ 2")
	}

	cfg := config.Simulator()
	// An off-normal alarm on sim.Status, which the client's event run
	// toggles through sim.Command.
	for i := range cfg.Devices[0].Tags {
		if t := &cfg.Devices[0].Tags[i]; t.Name == "Status" {
			normal := 0.0
			t.Alarm = &config.TagAlarm{Kind: config.AlarmOffNormal, Normal: &normal, Severity: 300}
		}
	}
	st, err := stack.New(stack.Config{Plant: &cfg, Simulator: &sim.Options{}, Server: server.Config{Logger: slog.New(slog.DiscardHandler)}, Runtime: stack.Policy()})
	if err != nil {
		return err
	}
	e, b, s, ln, url := st.Engine, st.Binding, st.Sim, st.Listener, st.URL
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		st.Close(sctx)
	}
	defer stop()
	counter, ok := e.Lookup("sim", "Counter")
	if !ok {
		return errors.New("no tag sim.Counter")
	}
	// The publish times, recorded before the binding hears of the image.
	pubs := newPubLog(f.warmup + f.duration + time.Minute)
	stopLog := e.Subscribe(func(im *plc.Image) { pubs.image(im, counter) })
	defer stopLog()
	if !st.WriteCommand {
		return errors.New("the stack has no sim.WriteCommand")
	}
	st.Start()

	fmt.Fprintf(out, "subbench: simulator at %s, %v scan cycle, %v simulator tick; OPC UA at %s; client: %d Publish requests in flight, "+
		"publishing 5 ms, sampling 5 ms, queue %d; warm-up %v, publish latency over %v, %d writes and %d calls\n",
		s.Addr(), e.Period(), sim.Period, url, f.inflight, f.queue, f.warmup, f.duration, f.reps, f.reps)
	load0 := kit.LoadAvg()
	cpu0, t0 := kit.CPUTime(), time.Now()
	var cmdLines bytes.Buffer // the client's result lines, printed after the publish latency
	recv, window, err := runClient(f, ln.Addr().String(), b.Namespace(), &cmdLines)
	cpu1, t1 := kit.CPUTime(), time.Now()
	stop() // the engine no longer publishes: pubs is ours to read
	if err != nil {
		out.Write(cmdLines.Bytes())
		return err
	}
	reportPublish(out, pubs, recv, window)
	out.Write(cmdLines.Bytes())
	fmt.Fprintf(out, "  server process CPU %.1f%% of one core over the client's run (%v); machine load average (1 min) %s at the start, %s at the end\n",
		100*(cpu1-cpu0).Seconds()/t1.Sub(t0).Seconds(), t1.Sub(t0).Round(time.Millisecond), load0, kit.LoadAvg())
	return nil
}

// pubLog is a ring of the publish times of sim.Counter's values, indexed
// by value: it does not allocate per image.
type pubLog struct {
	mu       sync.Mutex
	val      []uint32
	ns       []int64
	ok       []bool
	last     uint32
	have     bool
	images   uint64 // images published
	same     uint64 // images in which Counter had not changed
	skipped  uint64 // Counter values the engine never saw (it moved by more than 1)
	badValue uint64 // images in which Counter was not good
}

func newPubLog(span time.Duration) *pubLog {
	n := 1 << bits.Len(uint(span/sim.Period)*2)
	return &pubLog{val: make([]uint32, n), ns: make([]int64, n), ok: make([]bool, n)}
}

// image records im: the time now if Counter has a new value in it.
func (p *pubLog) image(im *plc.Image, h plc.Handle) {
	now := time.Now().UnixNano()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.images++
	if im.Status(h) != status.Good {
		p.badValue++
		return
	}
	v := uint32(im.Value(h).Uint64())
	if p.have && v == p.last {
		p.same++
		return
	}
	if p.have && v-p.last > 1 {
		p.skipped += uint64(v - p.last - 1)
	}
	p.last, p.have = v, true
	i := int(v) & (len(p.val) - 1)
	p.val[i], p.ns[i], p.ok[i] = v, now, true
}

// at returns the publish time of counter value v.
func (p *pubLog) at(v uint32) (int64, bool) {
	i := int(v) & (len(p.val) - 1)
	if !p.ok[i] || p.val[i] != v {
		return 0, false
	}
	return p.ns[i], true
}

// reception is one value of sim.Counter received by the client.
type reception struct {
	val uint32
	ns  int64
}

// runClient runs the client role as a child process, copies its result
// lines to out and returns its receptions and its "window" line.
func runClient(f benchFlags, addr string, ns uint16, out io.Writer) ([]reception, string, error) {
	c, err := kit.StartChild("client", f.clientPrefix, "client", "-addr", addr, "-ns", fmt.Sprint(ns),
		"-warmup", f.warmup.String(), "-duration", f.duration.String(), "-reps", fmt.Sprint(f.reps),
		"-inflight", fmt.Sprint(f.inflight), "-queue", fmt.Sprint(f.queue))
	if err != nil {
		return nil, "", err
	}
	var recv []reception
	var window string
	err = c.Finish("client", func(line string) {
		switch {
		case strings.HasPrefix(line, "recv "):
			fs := strings.Fields(line)
			if len(fs) != 3 {
				return
			}
			v, err1 := strconv.ParseUint(fs[1], 10, 32)
			t, err2 := strconv.ParseInt(fs[2], 10, 64)
			if err1 == nil && err2 == nil {
				recv = append(recv, reception{uint32(v), t})
			}
		case strings.HasPrefix(line, "window "):
			window = strings.TrimPrefix(line, "window ")
		default:
			fmt.Fprintln(out, line)
		}
	})
	if err != nil {
		return nil, "", err
	}
	return recv, window, nil
}

// reportPublish matches the receptions with the publish times and prints
// the publish latency.
func reportPublish(out io.Writer, p *pubLog, recv []reception, window string) {
	lat := make([]time.Duration, 0, len(recv))
	got := make(map[uint32]bool, len(recv))
	unmatched := 0
	for _, r := range recv {
		got[r.val] = true
		if at, ok := p.at(r.val); ok {
			lat = append(lat, time.Duration(r.ns-at))
		} else {
			unmatched++
		}
	}
	// Lost: values the engine published between the first and the last
	// one received that never arrived.
	lost := 0
	if len(recv) > 0 {
		first, last := recv[0].val, recv[len(recv)-1].val
		for v := first; v != last+1; v++ {
			if _, ok := p.at(v); ok && !got[v] {
				lost++
			}
		}
	}
	fmt.Fprintf(out, "subbench: image published → Publish response received (sim.Counter), %d matched: p50 %v  p99 %v  max %v  (%d lost, %d unmatched)\n",
		len(lat), pct(lat, 50), pct(lat, 99), pct(lat, 100), lost, unmatched)
	fmt.Fprintf(out, "  distribution: %s\n", dist(lat))
	fmt.Fprintf(out, "  client in the window: %s\n", window)
	fmt.Fprintf(out, "  engine over the run: %d images, %d without a new Counter (engine and simulator ticks drift), %d Counter values never read, %d with a bad status\n",
		p.images, p.same, p.skipped, p.badValue)
}
