package devices_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/devices"
	"github.com/edged/edged/plc/sim"
)

// bigConfig returns a configuration of 4 Modbus TCP devices with 250 tags
// each, laid out as PLC programs often are: 40 float32 process values in a
// row, 30 status words with a few unused registers between groups, 10
// bits of an alarm word, 20 int32 counters every 4 registers, 10 float64
// totals, 10 float32 setpoints (read-write), 60 analog inputs (scaled
// uint16 input registers) on 4 cards of 15 channels, 40 coils (32
// outputs, read-write, and 8 more further on) and 30 discrete inputs; scan
// classes from 5 ms to 1 s. Every address is below sim.BankSize.
func bigConfig(addrs [4]string) *config.Config {
	cfg := config.Default()
	classes := []string{"fast", "normal", "slow", "second"}
	for d, addr := range addrs {
		dev := config.Device{
			Name: fmt.Sprintf("plc%d", d+1), Kind: config.KindModbusTCP, NoCommTimeoutMs: 5000,
			ModbusTCP: config.DefaultModbusTCP(addr),
		}
		n := 0
		add := func(typ config.Type, addr string, acc config.Access, f func(*config.Tag)) {
			t := config.Tag{Name: fmt.Sprintf("T%03d", n), Type: typ, Address: addr, ScanClass: classes[n%len(classes)], Access: acc}
			if f != nil {
				f(&t)
			}
			dev.Tags = append(dev.Tags, t)
			n++
		}
		hr := func(a int) string { return config.FormatAddress(config.HoldingRegisters, a) }
		for i := range 40 {
			add(config.Float32, hr(2*i), config.Read, nil)
		}
		for i := range 30 {
			add(config.UInt16, hr(200+i+(i/10)*3), config.Read, nil) // groups of 10, 3 spare registers between
		}
		for i := range 10 {
			b := i
			add(config.Bool, hr(300), config.Read, func(t *config.Tag) { t.Bit = &b })
		}
		for i := range 20 {
			add(config.Int32, hr(400+4*i), config.Read, nil)
		}
		for i := range 10 {
			add(config.Float64, hr(1000+4*i), config.Read, nil)
		}
		for i := range 10 {
			add(config.Float32, hr(1100+2*i), config.ReadWrite, func(t *config.Tag) { t.ScanClass = "slow" })
		}
		for card := range 4 {
			for ch := range 15 {
				add(config.UInt16, config.FormatAddress(config.InputRegisters, 100*card+ch), config.Read, func(t *config.Tag) {
					t.Scaling = &config.Scaling{RawMin: 0, RawMax: 27648, EUMin: 0, EUMax: 100}
					t.Units = "P1"
				})
			}
		}
		for i := range 32 {
			add(config.Bool, config.FormatAddress(config.Coils, i), config.ReadWrite, nil)
		}
		for i := range 8 {
			add(config.Bool, config.FormatAddress(config.Coils, 100+i), config.Read, nil)
		}
		for i := range 30 {
			add(config.Bool, config.FormatAddress(config.DiscreteInputs, i), config.Read, nil)
		}
		cfg.Devices = append(cfg.Devices, dev)
	}
	return &cfg
}

// TestPlanner1000 reports the planner's request count for 1,000 tags on 4
// devices (bigConfig, default limits: 125 registers, 2000 bits, gap 10).
func TestPlanner1000(t *testing.T) {
	cfg := bigConfig([4]string{"127.0.0.1:5021", "127.0.0.1:5022", "127.0.0.1:5023", "127.0.0.1:5024"})
	pc, cl, err := devices.Build(cfg, devices.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if len(pc.Tags) != 1000 || len(pc.Devices) != 4 {
		t.Fatalf("%d tags on %d devices", len(pc.Tags), len(pc.Devices))
	}
	if _, err := plc.New(pc); err != nil { // binds, which plans
		t.Fatal(err)
	}
	total := 0
	per := make([]int, 0, 4)
	for _, d := range pc.Devices {
		n, ok := devices.Blocks(d.Device)
		if !ok {
			t.Fatalf("%s is not a Modbus device", d.Name)
		}
		per = append(per, n)
		total += n
	}
	// Per device: hr 0..79 (1), hr 200..235 (1: 36 registers across the
	// 3-register gaps), hr 300 (1: 64 registers further), hr 400..479 (1),
	// hr 1000..1039 and 1100..1119 (2), input registers on 4 cards (4),
	// coils 0..31 and 100..107 (2: a gap of 68 bits), discrete inputs (1).
	if total != 4*13 {
		t.Errorf("%d requests, want 52 (13 per device)", total)
	}
	t.Logf("planner: 1000 tags on 4 devices -> %d read requests per full poll (per device %v)", total, per)
}

// startBig starts 4 simulators (real 5 ms ticks) and returns bigConfig on
// them.
func startBig(tb testing.TB) *config.Config {
	var addrs [4]string
	for i := range addrs {
		s, err := sim.Start(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		addrs[i] = s.Addr()
	}
	return bigConfig(addrs)
}

// BenchmarkPoll1000 is the I/O of one engine cycle in which every tag is
// due: the 4 devices of bigConfig polled at once, one goroutine each (as the
// engine does), over 4 simulators on loopback.
func BenchmarkPoll1000(b *testing.B) {
	cfg := startBig(b)
	pc, cl, err := devices.Build(cfg, devices.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	if _, err := plc.New(pc); err != nil {
		b.Fatal(err)
	}
	type work struct {
		dev plc.Device
		due []plc.Handle
		out []plc.Sample
	}
	ws := make([]*work, len(pc.Devices))
	for i, d := range pc.Devices {
		ws[i] = &work{dev: d.Device}
	}
	for h, t := range pc.Tags {
		for i, d := range pc.Devices {
			if d.Name == t.Device {
				ws[i].due = append(ws[i].due, plc.Handle(h))
			}
		}
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	start := make([]chan struct{}, len(ws))
	errs := make([]error, len(ws))
	for i, w := range ws {
		w.out = make([]plc.Sample, len(w.due))
		start[i] = make(chan struct{})
		go func() {
			for range start[i] {
				errs[i] = w.dev.Poll(ctx, w.due, w.out)
				wg.Done()
			}
		}()
	}
	defer func() {
		for _, c := range start {
			close(c)
		}
	}()
	cycle := func() {
		wg.Add(len(ws))
		for _, c := range start {
			c <- struct{}{}
		}
		wg.Wait()
	}
	cycle()
	for i, w := range ws {
		if errs[i] != nil {
			b.Fatal(errs[i])
		}
		for k, s := range w.out {
			if !s.Status.IsGood() {
				b.Fatalf("%s: %v", pc.Tags[w.due[k]].Name, s.Status)
			}
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		cycle()
	}
}

// BenchmarkEngine1000 runs the engine at its 5 ms period over bigConfig on
// 4 simulators for b.N cycles. ns/op is the period (the cycle is paced);
// the figures are the metrics, over the b.N cycles measured (the engine's
// window is b.N cycles, so the start-up is not in it): cycle time (start to
// publish) and start jitter percentiles, overruns, and allocations per
// cycle of the whole process (engine, drivers, simulators).
func BenchmarkEngine1000(b *testing.B) {
	cfg := startBig(b)
	pc, cl, err := devices.Build(cfg, devices.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	pc.Window = max(b.N, 2)
	e, err := plc.New(pc)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	r := &running{Engine: e, cfg: pc}
	r.waitGood(b, r.all()...)
	var d0, d plc.Diagnostics
	var ms0, ms1 runtime.MemStats
	r.Diagnostics(&d0)
	runtime.ReadMemStats(&ms0)
	c0 := r.Image().Cycle()
	b.ResetTimer()
	for r.Image().Cycle() < c0+uint64(b.N) {
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	r.Diagnostics(&d)
	cycles := float64(r.Image().Cycle() - c0)
	b.ReportMetric(float64(d.CycleTime.P50.Nanoseconds()), "cycle-p50-ns")
	b.ReportMetric(float64(d.CycleTime.P99.Nanoseconds()), "cycle-p99-ns")
	b.ReportMetric(float64(d.CycleTime.Max.Nanoseconds()), "cycle-max-ns")
	b.ReportMetric(float64(d.StartJitter.P50.Nanoseconds()), "jitter-p50-ns")
	b.ReportMetric(float64(d.StartJitter.P99.Nanoseconds()), "jitter-p99-ns")
	b.ReportMetric(float64(d.Overruns-d0.Overruns), "overruns")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/cycles, "allocs/cycle")
}
