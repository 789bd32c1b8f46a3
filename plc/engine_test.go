package plc_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/plctest"
)

const ms = time.Millisecond

// build makes an engine over one plctest.Fake per device name.
func build(t testing.TB, cfg plc.Config, devs ...string) (*plc.Engine, map[string]*plctest.Fake) {
	t.Helper()
	fakes := make(map[string]*plctest.Fake)
	for _, d := range devs {
		f := &plctest.Fake{}
		fakes[d] = f
		cfg.Devices = append(cfg.Devices, plc.DeviceConfig{Name: d, Device: f})
	}
	e, err := plc.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, fakes
}

// start runs e in the background; stop cancels it and waits for Run.
func start(t testing.TB, e *plc.Engine) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
}

// clock moves fake time to t0+d and waits for the bubble to settle.
type clock struct{ t0 time.Time }

func (c clock) at(d time.Duration) {
	time.Sleep(c.t0.Add(d).Sub(time.Now()))
	synctest.Wait()
}

func (c clock) ms(t time.Time) time.Duration {
	if t.IsZero() {
		return -1
	}
	return t.Sub(c.t0)
}

func handle(t testing.TB, e *plc.Engine, dev, name string) plc.Handle {
	t.Helper()
	h, ok := e.Lookup(dev, name)
	if !ok {
		t.Fatalf("no tag %s.%s", dev, name)
	}
	return h
}

func TestNewErrors(t *testing.T) {
	f := &plctest.Fake{}
	dev := []plc.DeviceConfig{{Name: "plc1", Device: f}}
	for _, tt := range []struct {
		cfg  plc.Config
		want string
	}{
		{plc.Config{Devices: dev, Tags: []plc.Tag{{Device: "plc2", Name: "a", Type: plc.Bool}}}, `tag plc2.a: Device: no device "plc2"`},
		{plc.Config{Devices: dev, Tags: []plc.Tag{{Device: "plc1", Name: "a"}}}, "tag plc1.a: Type"},
		{plc.Config{Devices: dev, Tags: []plc.Tag{{Device: "plc1", Name: "a", Type: plc.Bool, Scan: 7 * ms}}}, "tag plc1.a: Scan: 7ms is not a positive multiple of the period 5ms"},
		{plc.Config{Devices: dev, Tags: []plc.Tag{{Device: "plc1", Name: "a", Type: plc.Bool}, {Device: "plc1", Name: "a", Type: plc.Int16}}}, "tag plc1.a: Name used twice"},
		{plc.Config{Devices: append(dev, dev...)}, `device "plc1": Name used twice`},
		{plc.Config{Devices: []plc.DeviceConfig{{Name: "x"}}}, `device "x": Device is nil`},
		{plc.Config{CollectTimeout: 5 * ms}, "CollectTimeout 5ms is not shorter than the Period 5ms"},
	} {
		_, err := plc.New(tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New: %v, want an error with %q", err, tt.want)
		}
	}
	f.FailBind(status.BadConfigurationError)
	_, err := plc.New(plc.Config{Devices: dev, Tags: []plc.Tag{{Device: "plc1", Name: "a", Type: plc.Bool}}})
	if err == nil || !strings.Contains(err.Error(), "device plc1: BadConfigurationError") {
		t.Errorf("New with failing Bind: %v", err)
	}
}

func TestInitialImage(t *testing.T) {
	e, _ := build(t, plc.Config{Tags: []plc.Tag{{Device: "d", Name: "a", Type: plc.Float64}, {Device: "d", Name: "b", Type: plc.String}}}, "d")
	im := e.Image()
	if im.Cycle() != 0 || im.Len() != 2 || !im.Time().IsZero() {
		t.Fatalf("initial image: cycle %d, len %d, time %v", im.Cycle(), im.Len(), im.Time())
	}
	for h := range plc.Handle(2) {
		if s := im.Sample(h); s.Status != status.BadWaitingForInitialData || s.Value.Type() != plc.Invalid || !s.Timestamp().IsZero() {
			t.Errorf("tag %d: %+v", h, s)
		}
	}
	if e.Healthy() {
		t.Error("Healthy before Run")
	}
}

// TestScanClasses runs one second of cycles and checks that each tag was
// read in exactly the cycles of its class.
func TestScanClasses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		classes := map[string]time.Duration{"a": 0, "b": 10 * ms, "c": 100 * ms, "d": time.Second, "e": 15 * ms, "f": 5 * ms}
		var tags []plc.Tag
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			tags = append(tags, plc.Tag{Device: "dev", Name: n, Type: plc.UInt16, Scan: classes[n]})
		}
		e, fakes := build(t, plc.Config{Tags: tags}, "dev")
		f := fakes["dev"]
		f.LogPolls(true)
		c := clock{time.Now()}
		stop := start(t, e)
		c.at(999 * ms) // cycles 1..200, at 0, 5, ..., 995 ms
		stop()

		every := map[plc.Handle]int{}
		for i, tag := range tags {
			every[plc.Handle(i)] = int(max(tag.Scan, 5*ms) / (5 * ms))
		}
		want := map[string]int{"a": 200, "f": 200, "b": 100, "e": 67, "c": 10, "d": 1}
		for i, tag := range tags {
			if got := f.Reads(plc.Handle(i)); got != want[tag.Name] {
				t.Errorf("tag %s (scan %v) read %d times, want %d", tag.Name, tag.Scan, got, want[tag.Name])
			}
		}
		log := f.PollLog()
		if len(log) != 200 {
			t.Fatalf("%d polls, want 200", len(log))
		}
		for i, p := range log {
			k := int(c.ms(p.Start)/(5*ms)) + 1
			if k != i+1 || c.ms(p.Start)%(5*ms) != 0 {
				t.Fatalf("poll %d at %v, want cycle %d's deadline", i, c.ms(p.Start), i+1)
			}
			var due []plc.Handle
			for h := range plc.Handle(len(tags)) {
				if (k-1)%every[h] == 0 {
					due = append(due, h)
				}
			}
			got := slices.Sorted(slices.Values(p.Due))
			if !slices.Equal(got, due) {
				t.Errorf("cycle %d read %v, want %v", k, got, due)
			}
		}
		var d plc.Diagnostics
		e.Diagnostics(&d)
		if d.Cycles != 200 || d.Cycle != 200 || d.Overruns != 0 || d.StartJitter.Max != 0 {
			t.Errorf("diagnostics: %+v", d)
		}
	})
}

// TestSlowDeviceDoesNotDelayOther: a device whose polls take 12 ms (more
// than two periods) is skipped while busy; the other is read every cycle
// and published in its own cycle.
func TestSlowDeviceDoesNotDelayOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fakes := build(t, plc.Config{Tags: []plc.Tag{
			{Device: "slow", Name: "s", Type: plc.Int32},
			{Device: "fast", Name: "f", Type: plc.Int32},
		}}, "slow", "fast")
		fakes["slow"].SetDelay(12 * ms)
		hs, hf := handle(t, e, "slow", "s"), handle(t, e, "fast", "f")
		var images []*plc.Image
		e.Subscribe(func(im *plc.Image) {
			im.Retain()
			images = append(images, im)
		})
		c := clock{time.Now()}
		stop := start(t, e)
		c.at(99 * ms) // cycles 1..20
		var d plc.Diagnostics
		e.Diagnostics(&d)
		stop()

		if len(images) != 20 {
			t.Fatalf("%d images, want 20", len(images))
		}
		for i, im := range images {
			if im.Cycle() != uint64(i+1) || c.ms(im.Time()) != time.Duration(i)*5*ms {
				t.Errorf("image %d: cycle %d at %v", i, im.Cycle(), c.ms(im.Time()))
			}
			// The fast device answers in its own cycle.
			if s := im.Sample(hf); s.Status != status.Good || !s.Timestamp().Equal(im.Time()) {
				t.Errorf("cycle %d: fast tag %v at %v", im.Cycle(), s.Status, c.ms(s.Timestamp()))
			}
		}
		// The slow device: polled in cycles 1, 4, 7, ..., 19 (every 15 ms),
		// each result published by the first cycle after it ends.
		if s := images[2].Sample(hs); s.Status != status.BadWaitingForInitialData {
			t.Errorf("cycle 3: slow tag %v", s.Status)
		}
		if s := images[3].Sample(hs); s.Status != status.Good || c.ms(s.Timestamp()) != 12*ms {
			t.Errorf("cycle 4: slow tag %v at %v, want Good at 12ms", s.Status, c.ms(s.Timestamp()))
		}
		if got := fakes["slow"].Polls(); got != 7 {
			t.Errorf("slow device: %d polls, want 7", got)
		}
		if got := fakes["fast"].Polls(); got != 20 {
			t.Errorf("fast device: %d polls, want 20", got)
		}
		if fakes["slow"].Overlapped() {
			t.Error("two polls of the slow device overlapped")
		}
		if d.Overruns != 0 {
			t.Errorf("overruns %d", d.Overruns)
		}
		if d.Devices[0].Name != "slow" || d.Devices[0].SkippedPolls != 13 || d.Devices[0].Polls != 6 || d.Devices[1].SkippedPolls != 0 {
			t.Errorf("device diagnostics: %+v", d.Devices)
		}
		if d.Devices[0].Driver.Requests != 7 {
			t.Errorf("driver stats not passed through: %+v", d.Devices[0].Driver)
		}
		// The cycles that waited for the slow device waited CollectTimeout.
		if d.CycleTime.Max != 2500*time.Microsecond {
			t.Errorf("cycle time max %v, want 2.5ms", d.CycleTime.Max)
		}
	})
}

// TestOverrun stalls the cycle goroutine for 17 ms in cycle 10: cycles 11
// and 12 are overruns, skipped; cycle 13 runs 2 ms late; none runs twice.
func TestOverrun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fakes := build(t, plc.Config{Tags: []plc.Tag{{Device: "d", Name: "a", Type: plc.Bool}}}, "d")
		var cycles []uint64
		e.Subscribe(func(im *plc.Image) {
			cycles = append(cycles, im.Cycle())
			if im.Cycle() == 10 {
				time.Sleep(17 * ms)
			}
		})
		c := clock{time.Now()}
		stop := start(t, e)
		c.at(99 * ms)
		stop()
		want := []uint64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16, 17, 18, 19, 20}
		if !slices.Equal(cycles, want) {
			t.Errorf("cycles %v, want %v", cycles, want)
		}
		if got := fakes["d"].Polls(); got != len(want) {
			t.Errorf("%d polls, want %d", got, len(want))
		}
		var d plc.Diagnostics
		e.Diagnostics(&d)
		if d.Overruns != 2 || d.Cycles != 18 || d.Cycle != 20 {
			t.Errorf("overruns %d, cycles %d, last %d; want 2, 18, 20", d.Overruns, d.Cycles, d.Cycle)
		}
		if d.StartJitter.Max != 2*ms || d.StartJitter.P50 != 0 || d.CycleTime.Max != 17*ms || d.CycleTime.P50 != 0 || d.CycleTime.N != 18 {
			t.Errorf("jitter %+v, cycle time %+v", d.StartJitter, d.CycleTime)
		}
	})
}

// TestQuality follows a tag through its statuses: Good, then its device
// stops answering (Uncertain with the last value and its original
// timestamp), BadNoCommunication after NoCommAfter, Good again; per-tag
// errors; a device that never answers; a device whose driver hangs.
func TestQuality(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fakes := build(t, plc.Config{
			NoCommAfter: 100 * ms,
			PollTimeout: 30 * ms,
			Tags: []plc.Tag{
				{Device: "d", Name: "x", Type: plc.Int32},
				{Device: "dead", Name: "y", Type: plc.Int32},
				{Device: "stuck", Name: "z", Type: plc.Float64},
			},
		}, "d", "dead", "stuck")
		hx, hy, hz := handle(t, e, "d", "x"), handle(t, e, "dead", "y"), handle(t, e, "stuck", "z")
		fd, fdead, fstuck := fakes["d"], fakes["dead"], fakes["stuck"]
		fd.Set(hx, plc.Int32Value(7))
		fdead.SetError(status.BadCommunicationError)
		fstuck.Set(hz, plc.Float64Value(1.5))
		c := clock{time.Now()}
		check := func(h plc.Handle, st plc.Status, v plc.Value, ts time.Duration) {
			t.Helper()
			s := e.Image().Sample(h)
			if s.Status != st || !s.Value.Equal(v) || c.ms(s.Timestamp()) != ts {
				t.Errorf("at %v: tag %d: %v %v(%v) at %v; want %v %v(%v) at %v", c.ms(time.Now()), h,
					s.Status, s.Value.Type(), s.Value, c.ms(s.Timestamp()), st, v.Type(), v, ts)
			}
		}
		none := plc.Value{}
		stop := start(t, e)

		c.at(22 * ms)
		check(hx, status.Good, plc.Int32Value(7), 20*ms)
		check(hy, status.BadWaitingForInitialData, none, -1)
		check(hz, status.Good, plc.Float64Value(1.5), 20*ms)
		fd.SetError(status.BadTimeout)
		fstuck.Hang() // the poll of cycle 6 (25 ms) hangs

		c.at(28 * ms) // cycle 6 waits CollectTimeout (2.5 ms) for the hung poll
		check(hx, status.UncertainLastUsableValue, plc.Int32Value(7), 20*ms)
		check(hz, status.Good, plc.Float64Value(1.5), 20*ms) // busy, not yet late
		c.at(57 * ms)
		check(hz, status.Good, plc.Float64Value(1.5), 20*ms) // 30 ms after 25 ms: not over PollTimeout yet
		c.at(62 * ms)
		check(hz, status.UncertainLastUsableValue, plc.Float64Value(1.5), 20*ms)
		c.at(97 * ms)
		check(hy, status.BadWaitingForInitialData, none, -1)
		c.at(102 * ms)
		check(hy, status.BadNoCommunication, none, 100*ms) // silent since the start
		c.at(117 * ms)
		check(hx, status.UncertainLastUsableValue, plc.Int32Value(7), 20*ms)
		check(hz, status.UncertainLastUsableValue, plc.Float64Value(1.5), 20*ms)
		c.at(122 * ms)
		check(hx, status.BadNoCommunication, none, 120*ms) // last answer at 20 ms
		check(hz, status.BadNoCommunication, none, 120*ms)

		fd.SetError(nil)
		fstuck.Release() // the hung poll answers now, and the device is polled again at 125 ms
		c.at(123 * ms)
		check(hz, status.BadNoCommunication, none, 120*ms) // published by the next cycle
		c.at(127 * ms)
		check(hz, status.Good, plc.Float64Value(1.5), 125*ms)
		check(hx, status.Good, plc.Int32Value(7), 125*ms)

		fd.SetTagStatus(hx, status.BadDeviceFailure)
		c.at(132 * ms)
		check(hx, status.BadDeviceFailure, none, 130*ms)
		fd.SetTagStatus(hx, status.BadTimeout) // a per-tag timeout: no answer for this tag
		c.at(137 * ms)
		check(hx, status.UncertainLastUsableValue, plc.Int32Value(7), 125*ms)
		fd.SetTagStatus(hx, status.Good)
		fd.Set(hx, plc.Int16Value(-3)) // converted to the tag's type
		c.at(142 * ms)
		check(hx, status.Good, plc.Int32Value(-3), 140*ms)
		fd.Set(hx, plc.StringValue("x"))
		c.at(147 * ms)
		check(hx, status.BadTypeMismatch, none, 145*ms)
		stop()

		var d plc.Diagnostics
		e.Diagnostics(&d)
		if !d.Devices[1].Failing || d.Devices[0].Failing || d.Devices[2].Failing {
			t.Errorf("Failing: %v %v %v", d.Devices[0].Failing, d.Devices[1].Failing, d.Devices[2].Failing)
		}
		if d.Devices[1].PollErrors != d.Devices[1].Polls || d.Devices[1].Polls == 0 {
			t.Errorf("dead device: %+v", d.Devices[1])
		}
	})
}

// TestWrite: a write is queued, applied in the next cycle before that
// cycle's poll (which reads it back), and its result is delivered.
func TestWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fakes := build(t, plc.Config{
			WriteTimeout: 50 * ms,
			Tags: []plc.Tag{
				{Device: "w", Name: "sp", Type: plc.Float32, Access: plc.ReadWrite},
				{Device: "w", Name: "st", Type: plc.UInt16},
			},
		}, "w")
		f := fakes["w"]
		hsp, hst := handle(t, e, "w", "sp"), handle(t, e, "w", "st")
		f.Set(hsp, plc.Float32Value(1))
		c := clock{time.Now()}
		type result struct {
			st plc.Status
			at time.Duration
		}
		var mu sync.Mutex
		var results []result
		done := func(st plc.Status) {
			mu.Lock()
			results = append(results, result{st, c.ms(time.Now())})
			mu.Unlock()
		}
		last := func() result {
			mu.Lock()
			defer mu.Unlock()
			if len(results) == 0 {
				return result{0, -1}
			}
			return results[len(results)-1]
		}
		stop := start(t, e)

		c.at(7 * ms)
		if st := e.Write(hsp, plc.Float64Value(2.5), done); st != status.Good {
			t.Fatalf("Write: %v", st)
		}
		for _, tt := range []struct {
			h    plc.Handle
			v    plc.Value
			want plc.Status
		}{
			{hst, plc.UInt16Value(1), status.BadNotWritable},
			{hsp, plc.StringValue("1"), status.BadTypeMismatch},
			{hsp, plc.Float64Value(1e300), status.BadOutOfRange},
			{99, plc.Float32Value(1), status.BadNodeIDUnknown},
		} {
			if st := e.Write(tt.h, tt.v, done); st != tt.want {
				t.Errorf("Write(%d, %v) = %v, want %v", tt.h, tt.v, st, tt.want)
			}
		}
		c.at(9 * ms)
		if r := last(); r.at != -1 {
			t.Errorf("write done before its cycle: %+v", r)
		}
		if s := e.Image().Sample(hsp); !s.Value.Equal(plc.Float32Value(1)) {
			t.Errorf("image before the write's cycle: %v", s.Value)
		}
		c.at(12 * ms)
		if r := last(); r != (result{status.Good, 10 * ms}) {
			t.Errorf("write result %+v, want Good at 10ms", r)
		}
		w := f.Written()
		if len(w) != 1 || w[0].Handle != hsp || !w[0].Value.Equal(plc.Float32Value(2.5)) || c.ms(w[0].Time) != 10*ms {
			t.Errorf("device got %+v", w)
		}
		im := e.Image()
		if s := im.Sample(hsp); im.Cycle() != 3 || s.Status != status.Good || !s.Value.Equal(plc.Float32Value(2.5)) || c.ms(s.Timestamp()) != 10*ms {
			t.Errorf("cycle %d: %+v, want 2.5 read back in cycle 3", im.Cycle(), s)
		}

		f.SetWriteError(status.BadDeviceFailure)
		e.Write(hsp, plc.Float32Value(3), done)
		c.at(17 * ms)
		if r := last(); r != (result{status.BadDeviceFailure, 15 * ms}) {
			t.Errorf("failed write result %+v", r)
		}
		f.SetWriteError(nil)

		f.Hang() // cycle 4's poll (20 ms) never ends: the next write waits, then times out
		c.at(21 * ms)
		e.Write(hsp, plc.Float32Value(4), done)
		c.at(72 * ms)
		if r := last(); r.st != status.BadDeviceFailure {
			t.Errorf("write to a busy device ended early: %+v", r)
		}
		c.at(77 * ms)
		if r := last(); r != (result{status.BadTimeout, 75 * ms}) {
			t.Errorf("write to a hung device: %+v, want BadTimeout at 75ms", r)
		}
		// A write still queued when Run ends gets BadShutdown.
		e.Write(hsp, plc.Float32Value(5), done)
		c.at(78 * ms)
		ended := make(chan struct{})
		go func() { stop(); close(ended) }()
		synctest.Wait()
		f.Release()
		<-ended
		if r := last(); r.st != status.BadShutdown {
			t.Errorf("write at shutdown: %+v", r)
		}
		if st := e.Write(hsp, plc.Float32Value(1), done); st != status.BadShutdown {
			t.Errorf("Write after Run: %v", st)
		}
		var d plc.Diagnostics
		e.Diagnostics(&d)
		if d.Devices[0].Writes != 3 || d.Devices[0].WriteErrors != 2 {
			t.Errorf("writes %d, errors %d; want 3, 2", d.Devices[0].Writes, d.Devices[0].WriteErrors)
		}
	})
}

func TestSubscribeHealthy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fakes := build(t, plc.Config{Tags: []plc.Tag{{Device: "d", Name: "a", Type: plc.Bool}}}, "d")
		var a, b int
		e.Subscribe(func(*plc.Image) { a++ })
		cancelB := e.Subscribe(func(*plc.Image) { b++ })
		c := clock{time.Now()}
		stop := start(t, e)
		c.at(22 * ms)
		if !e.Healthy() {
			t.Error("not Healthy while running")
		}
		cancelB()
		fakes["d"].Hang() // a hung device does not stop the cycle
		c.at(102 * ms)
		if !e.Healthy() {
			t.Error("not Healthy with a hung device")
		}
		fakes["d"].Release()
		stop()
		if a != 21 || b != 5 {
			t.Errorf("subscribers called %d and %d times, want 21 and 5", a, b)
		}
		if e.Healthy() {
			t.Error("Healthy after Run")
		}
	})
}

func TestPercentiles(t *testing.T) {
	var d []time.Duration
	for i := range 200 {
		d = append(d, time.Duration(i+1))
	}
	n, p50, p99, mx := plc.Percentile(d)
	if n != 200 || p50 != 100 || p99 != 198 || mx != 200 {
		t.Errorf("percentiles of 1..200: %d %v %v %v", n, p50, p99, mx)
	}
	if n, p50, _, _ := plc.Percentile(nil); n != 0 || p50 != 0 {
		t.Error("empty window")
	}
}

// TestPollTimeout: a poll that outlives PollTimeout sees its context end
// (the fake honours it) and fails with BadTimeout; the next poll gets a
// live context again.
func TestPollTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fakes := build(t, plc.Config{PollTimeout: 32 * ms, Tags: []plc.Tag{{Device: "d", Name: "a", Type: plc.Int16}}}, "d")
		f := fakes["d"]
		f.Set(0, plc.Int16Value(5))
		c := clock{time.Now()}
		stop := start(t, e)
		c.at(2 * ms)
		f.SetDelay(time.Hour) // the poll of cycle 2 (5 ms) times out at 37 ms
		c.at(36 * ms)
		if s := e.Image().Sample(0); s.Status != status.Good {
			t.Errorf("before the timeout: %+v", s)
		}
		c.at(43 * ms) // cycle 9 (40 ms) waited 2.5 ms for its own poll, which hangs again
		if s := e.Image().Sample(0); s.Status != status.UncertainLastUsableValue || c.ms(s.Timestamp()) != 0 {
			t.Errorf("after the timeout: %+v", s)
		}
		f.SetDelay(0) // the poll started at 40 ms still times out, at 72 ms
		c.at(77 * ms)
		if s := e.Image().Sample(0); s.Status != status.Good || c.ms(s.Timestamp()) != 75*ms {
			t.Errorf("after recovery: %+v at %v", s, c.ms(s.Timestamp()))
		}
		if st := f.Stats(); st.Timeouts != 2 {
			t.Errorf("driver timeouts %d, want 2", st.Timeouts)
		}
		stop()
	})
}

// TestWriteReadBack: a written tag of a slow class is read back in the
// write's cycle.
func TestWriteReadBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fakes := build(t, plc.Config{Tags: []plc.Tag{
			{Device: "d", Name: "slow", Type: plc.UInt16, Access: plc.ReadWrite, Scan: time.Second},
			{Device: "d", Name: "fast", Type: plc.UInt16, Access: plc.ReadWrite},
		}}, "d")
		f := fakes["d"]
		f.LogPolls(true)
		c := clock{time.Now()}
		stop := start(t, e)
		c.at(7 * ms)
		e.Write(0, plc.UInt16Value(9), nil)
		e.Write(0, plc.UInt16Value(10), nil)
		e.Write(1, plc.UInt16Value(11), nil)
		c.at(12 * ms)
		stop()
		if s := e.Image().Sample(0); !s.Value.Equal(plc.UInt16Value(10)) || c.ms(s.Timestamp()) != 10*ms {
			t.Errorf("slow tag after the write: %+v", s)
		}
		log := f.PollLog()
		if got := log[2].Due; c.ms(log[2].Start) != 10*ms || !slices.Equal(got, []plc.Handle{1, 0}) {
			t.Errorf("cycle 3 read %v at %v, want [1 0]", got, c.ms(log[2].Start))
		}
	})
}

// TestWriteAnsweredWithItsImage: a Good write is answered once an image
// holding the value read back is published, so that a Read after the
// answer sees it; a failed write is answered at once.
func TestWriteAnsweredWithItsImage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, fakes := build(t, plc.Config{Tags: []plc.Tag{
			{Device: "d", Name: "a", Type: plc.UInt16, Access: plc.ReadWrite},
			{Device: "d", Name: "b", Type: plc.UInt16, Access: plc.ReadWrite},
		}}, "d")
		stop := start(t, e)
		defer stop()
		c := clock{time.Now()}
		for i := range 20 {
			c.at(time.Duration(7+5*i) * ms)
			v := plc.UInt16Value(uint16(100 + i))
			seen := make(chan plc.Value, 1)
			if st := e.Write(0, v, func(st plc.Status) {
				if st != status.Good {
					t.Errorf("write %d: %v", i, st)
				}
				seen <- e.Image().Sample(0).Value
			}); st != status.Good {
				t.Fatalf("Write: %v", st)
			}
			synctest.Wait()
			if len(seen) != 0 {
				t.Fatalf("write %d answered before its cycle", i)
			}
			c.at(time.Duration(7+5*i+4) * ms)
			select {
			case got := <-seen:
				if !got.Equal(v) {
					t.Errorf("write %d answered Good while the image holds %v", i, got)
				}
			default:
				t.Fatalf("write %d not answered within its cycle", i)
			}
		}
		fakes["d"].SetWriteError(status.BadDeviceFailure)
		var got plc.Status
		e.Write(1, plc.UInt16Value(1), func(st plc.Status) { got = st })
		c.at(111 * ms)
		if got != status.BadDeviceFailure {
			t.Errorf("failed write answered %v", got)
		}
	})
}

// TestWriteLimits: NaN and ±Inf are refused with Bad_OutOfRange unless
// the tag allows them; a tag's write limits refuse values beyond them
// (never clamped) and take those on them; nothing refused reaches the
// device.
func TestWriteLimits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lo, hi := -10.0, 100.0
		e, fakes := build(t, plc.Config{
			WriteTimeout: 50 * ms,
			Tags: []plc.Tag{
				{Device: "w", Name: "f", Type: plc.Float32, Access: plc.ReadWrite},
				{Device: "w", Name: "nan", Type: plc.Float64, Access: plc.ReadWrite, NonFinite: true},
				{Device: "w", Name: "lim", Type: plc.Int16, Access: plc.ReadWrite, WriteMin: &lo, WriteMax: &hi},
			},
		}, "w")
		hf, hnan, hlim := handle(t, e, "w", "f"), handle(t, e, "w", "nan"), handle(t, e, "w", "lim")
		stop := start(t, e)
		defer stop()
		for _, tt := range []struct {
			h    plc.Handle
			v    plc.Value
			want plc.Status
		}{
			{hf, plc.Float64Value(math.NaN()), status.BadOutOfRange},
			{hf, plc.Float32Value(float32(math.Inf(1))), status.BadOutOfRange},
			{hf, plc.Float64Value(math.Inf(-1)), status.BadOutOfRange},
			{hnan, plc.Float64Value(math.NaN()), status.Good},
			{hnan, plc.Float64Value(math.Inf(1)), status.Good},
			{hlim, plc.Int16Value(101), status.BadOutOfRange},
			{hlim, plc.Int16Value(-11), status.BadOutOfRange},
			{hlim, plc.Int16Value(100), status.Good},
			{hlim, plc.Int16Value(-10), status.Good},
		} {
			if st := e.Write(tt.h, tt.v, nil); st != tt.want {
				t.Errorf("Write(%s, %v) = %v, want %v", e.Tag(tt.h).Name, tt.v, st, tt.want)
			}
		}
		time.Sleep(20 * ms)
		synctest.Wait()
		var got []string
		for _, w := range fakes["w"].Written() {
			got = append(got, e.Tag(w.Handle).Name+"="+w.Value.String())
		}
		if want := []string{"nan=NaN", "nan=+Inf", "lim=100", "lim=-10"}; !slices.Equal(got, want) {
			t.Errorf("device got %v, want %v", got, want)
		}
	})
}

// TestLastUsableKept: a tag's last usable value is kept apart only while
// its state is Bad (a device's error for it), so that a failure of its
// device then shows it as UncertainLastUsableValue; once the tag reads
// well again nothing is kept for it.
func TestLastUsableKept(t *testing.T) {
	e, fakes := build(t, plc.Config{Period: 2 * time.Minute, CollectTimeout: time.Minute, NoCommAfter: time.Hour,
		Tags: []plc.Tag{{Device: "d", Name: "x", Type: plc.Int32}, {Device: "d", Name: "y", Type: plc.Int32}}}, "d")
	f := fakes["d"]
	hx, hy := handle(t, e, "d", "x"), handle(t, e, "d", "y")
	ctx := manual(t, e)
	f.Set(hx, plc.Int32Value(7))
	f.Set(hy, plc.Int32Value(8))
	n := uint64(0)
	cycle := func() { n++; e.CycleForTest(ctx, n) }
	cycle()
	if got := e.LastKeptForTest(); got != 0 {
		t.Fatalf("%d last values kept with every tag Good, want 0", got)
	}
	f.SetTagStatus(hx, status.BadDeviceFailure)
	cycle()
	if got := e.LastKeptForTest(); got != 1 {
		t.Fatalf("%d last values kept with one tag Bad, want 1", got)
	}
	f.SetTagStatus(hx, status.Good)
	f.SetError(status.BadCommunicationError)
	cycle()
	// x's 7 was kept apart while x was Bad; y's 8 was its state.
	if s := e.Image().Sample(hx); s.Status != status.UncertainLastUsableValue || !s.Value.Equal(plc.Int32Value(7)) {
		t.Errorf("x after its device failed: %v %v, want UncertainLastUsableValue 7", s.Status, s.Value)
	}
	if s := e.Image().Sample(hy); s.Status != status.UncertainLastUsableValue || !s.Value.Equal(plc.Int32Value(8)) {
		t.Errorf("y after its device failed: %v %v, want UncertainLastUsableValue 8", s.Status, s.Value)
	}
	f.SetError(nil)
	cycle()
	if got := e.LastKeptForTest(); got != 0 {
		t.Errorf("%d last values kept after the tags read well again, want 0", got)
	}
}
