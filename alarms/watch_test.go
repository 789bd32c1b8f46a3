package alarms

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/plctest"
)

const ms = time.Millisecond

// TestWatch: the alarms of a configuration on a running engine: a limit
// alarm on a float, an off-normal alarm on a bool, the device's
// communication alarm when it stops answering; each change delivered in
// order.
func TestWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &plctest.Fake{}
		e, err := plc.New(plc.Config{Devices: []plc.DeviceConfig{{Name: "d", Device: f}}, NoCommAfter: 50 * ms,
			Tags: []plc.Tag{{Device: "d", Name: "T", Type: plc.Float64}, {Device: "d", Name: "B", Type: plc.Bool}}})
		if err != nil {
			t.Fatal(err)
		}
		high, normal := 10.0, 0.0
		conf := &config.Config{Devices: []config.Device{{Name: "d", CommAlarm: &config.CommAlarm{Severity: 900},
			Tags: []config.Tag{
				{Name: "T", Alarm: &config.TagAlarm{Kind: config.AlarmLimit, High: &high, Deadband: 1, Severity: 500}},
				{Name: "B", Alarm: &config.TagAlarm{Kind: config.AlarmOffNormal, Normal: &normal, Severity: 300, Message: "door open"}},
			}}}}
		w, err := NewWatch(e, conf, 64)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var got []string
		w.Start(func(ev *Event) {
			mu.Lock()
			got = append(got, fmt.Sprintf("%s/%s %s", ev.Config.Source, ev.Config.Name, describe(&Condition{Config: *ev.Config, State: ev.State}, ev.Change)))
			mu.Unlock()
		})
		n := 0
		cancel := e.Subscribe(func(*plc.Image) {
			n++
			switch n {
			case 2:
				f.Set(0, plc.Float64Value(5))
			case 5:
				f.Set(0, plc.Float64Value(10.5))
			case 8:
				f.Set(0, plc.Float64Value(9.5)) // within the deadband: still active
			case 10:
				f.Set(0, plc.Float64Value(8.9))
			case 12:
				f.Set(1, plc.BoolValue(true))
			case 14:
				f.Set(1, plc.BoolValue(false))
			case 20:
				f.SetError(fmt.Errorf("unplugged"))
			}
		})
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		time.Sleep(300 * ms)
		synctest.Wait()
		f.SetError(nil)
		time.Sleep(50 * ms)
		synctest.Wait()
		stop()
		<-done
		cancel()
		w.Stop()
		want := []string{
			"d.T/Limit Activated, active=true High bits=0000 acked=false confirmed=false retain=true",
			"d.T/Limit Deactivated, active=false Normal bits=0000 acked=false confirmed=false retain=true",
			"d.B/OffNormal Activated, active=true Normal bits=0000 acked=false confirmed=false retain=true",
			"d.B/OffNormal Deactivated, active=false Normal bits=0000 acked=false confirmed=false retain=true",
		}
		mu.Lock()
		defer mu.Unlock()
		// The tag alarms' changes (their qualities apart: the device's
		// silence makes them Uncertain, then Bad), and the communication
		// alarm's.
		var comm, changes []string
		for _, g := range got {
			switch {
			case strings.HasPrefix(g, "d/Communication"):
				comm = append(comm, g)
			case !strings.Contains(g, "QualityChanged"):
				changes = append(changes, g)
			}
		}
		same(t, changes, want)
		same(t, comm, []string{
			"d/Communication Activated, active=true Normal bits=0000 acked=false confirmed=false retain=true",
			"d/Communication Deactivated, active=false Normal bits=0000 acked=false confirmed=false retain=true",
		})
		if w.Dropped() != 0 {
			t.Fatalf("%d dropped", w.Dropped())
		}
	})
}

// TestWatchStorm: every alarm of 10,000 tags becoming active in one image
// goes through a queue of 64 changes: each change is delivered or counted
// as dropped, and the queue never holds more than its length.
func TestWatchStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w, delivered := storm(t, 64)
		if uint64(delivered)+w.Dropped() != stormTags || delivered == 0 || w.Dropped() == 0 {
			t.Fatalf("%d delivered, %d dropped, want %d in all", delivered, w.Dropped(), stormTags)
		}
		if len(w.queue) != 64 {
			t.Errorf("a queue of %d changes, bound 64", len(w.queue))
		}
		t.Logf("%d delivered, %d dropped", delivered, w.Dropped())
	})
}

// TestWatchQueueGrows: the queue starts at queueStart changes and grows
// in a storm, up to its bound: with a bound above the storm, nothing is
// dropped; a watch without a storm keeps the queue it started with.
func TestWatchQueueGrows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const bound = 2 * stormTags
		w, delivered := storm(t, bound)
		if delivered != stormTags || w.Dropped() != 0 {
			t.Fatalf("%d delivered, %d dropped, want all %d delivered", delivered, w.Dropped(), stormTags)
		}
		if n := len(w.queue); n <= queueStart || n > bound {
			t.Errorf("a queue of %d changes after the storm, want more than %d and at most %d", n, queueStart, bound)
		}
		t.Logf("the queue grew to %d changes", len(w.queue))
	})
	f := &plctest.Fake{}
	e, err := plc.New(plc.Config{Devices: []plc.DeviceConfig{{Name: "d", Device: f}}, Tags: []plc.Tag{{Device: "d", Name: "T", Type: plc.Float64}}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWatch(e, &config.Config{Devices: []config.Device{{Name: "d"}}}, 4096)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.queue) != queueStart {
		t.Errorf("a new watch's queue holds %d changes, want %d", len(w.queue), queueStart)
	}
}

// stormTags is how many alarms storm makes active at once.
const stormTags = 10000

// storm runs the engine of stormTags Float64 tags with a high limit alarm
// each, a watch of them with a queue of queueLen changes, and sets every
// tag beyond its limit in the third cycle; it returns the stopped watch
// and how many changes it delivered. The queue never holds more than its
// length.
func storm(t *testing.T, queueLen int) (*Watch, int) {
	f := &plctest.Fake{}
	pc := plc.Config{Devices: []plc.DeviceConfig{{Name: "d", Device: f}}}
	dev := config.Device{Name: "d"}
	high := 1.0
	for i := range stormTags {
		name := fmt.Sprintf("T%05d", i)
		pc.Tags = append(pc.Tags, plc.Tag{Device: "d", Name: name, Type: plc.Float64})
		dev.Tags = append(dev.Tags, config.Tag{Name: name, Alarm: &config.TagAlarm{Kind: config.AlarmLimit, High: &high, Severity: 100}})
	}
	e, err := plc.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWatch(e, &config.Config{Devices: []config.Device{dev}}, queueLen)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	delivered := 0
	w.Start(func(*Event) {
		mu.Lock()
		delivered++
		mu.Unlock()
	})
	cycles := 0
	cancel := e.Subscribe(func(*plc.Image) {
		if cycles++; cycles == 3 {
			f.SetAll(plc.Float64Value(2)) // every alarm at once
		}
		w.qmu.Lock()
		if w.n > len(w.queue) || len(w.queue) > w.qmax {
			t.Errorf("the queue holds %d of %d (bound %d)", w.n, len(w.queue), w.qmax)
		}
		w.qmu.Unlock()
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	time.Sleep(100 * ms)
	synctest.Wait()
	stop()
	<-done
	cancel()
	w.Stop()
	mu.Lock()
	defer mu.Unlock()
	return w, delivered
}

// TestSystemConditions: every configuration has the gateway's own
// conditions after its own; a check run each second (OnTick) sets them,
// and each change is delivered like an alarm's.
func TestSystemConditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e, err := plc.New(plc.Config{Devices: []plc.DeviceConfig{{Name: "d", Device: &plctest.Fake{}}},
			Tags: []plc.Tag{{Device: "d", Name: "T", Type: plc.Float64}}})
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewWatch(e, &config.Config{Devices: []config.Device{{Name: "d", Tags: []config.Tag{{Name: "T"}}}}}, 64)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Configs()) != len(SystemConditions) || w.Configs()[1].Name != "HistoryStore" || w.Configs()[1].Source != SystemSource {
			t.Fatalf("conditions %+v", w.Configs())
		}
		ticks := 0
		w.OnTick(func(now time.Time) {
			ticks++
			w.SetSystem("HistoryStore", ticks >= 2 && ticks < 4, now)
			w.SetSystem("NoSuchCondition", true, now) // ignored
		})
		var mu sync.Mutex
		var got []string
		w.Start(func(ev *Event) {
			mu.Lock()
			got = append(got, fmt.Sprintf("%s/%s %s", ev.Config.Source, ev.Config.Name, describe(&Condition{Config: *ev.Config, State: ev.State}, ev.Change)))
			mu.Unlock()
		})
		time.Sleep(5*time.Second + ms)
		synctest.Wait()
		w.Stop()
		mu.Lock()
		defer mu.Unlock()
		same(t, got, []string{
			"Server/HistoryStore Activated, active=true Normal bits=0000 acked=false confirmed=false retain=true",
			"Server/HistoryStore Deactivated, active=false Normal bits=0000 acked=false confirmed=false retain=true",
		})
	})
}

// BenchmarkEvaluate: a Watch's work in the scan for an image in which
// 10,000 UInt16 tags with a High limit alarm each changed, none crossing
// it (what bench-alarms' evaluated run does each cycle); ns per sample.
func BenchmarkEvaluate(b *testing.B) {
	const n = 10000
	f := &plctest.Fake{}
	tags := make([]plc.Tag, n)
	ctags := make([]config.Tag, n)
	high := 70000.0
	for i := range tags {
		name := fmt.Sprintf("T%04d", i)
		tags[i] = plc.Tag{Device: "d", Name: name, Type: plc.UInt16}
		ctags[i] = config.Tag{Name: name, Alarm: &config.TagAlarm{Kind: config.AlarmLimit, High: &high, Deadband: 100, Severity: 300}}
	}
	e, err := plc.New(plc.Config{Devices: []plc.DeviceConfig{{Name: "d", Device: f}}, Tags: tags})
	if err != nil {
		b.Fatal(err)
	}
	w, err := NewWatch(e, &config.Config{Devices: []config.Device{{Name: "d", Tags: ctags}}}, 64)
	if err != nil {
		b.Fatal(err)
	}
	var cycles atomic.Int64
	cancel := e.Subscribe(func(*plc.Image) {
		f.SetAll(plc.UInt16Value(uint16(cycles.Add(1))))
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	for cycles.Load() < 5 {
		time.Sleep(ms)
	}
	stop()
	<-done
	cancel()
	im := e.Acquire()
	defer im.Release()
	if len(im.Changed()) != n {
		b.Fatalf("%d tags changed in the last image, want %d", len(im.Changed()), n)
	}
	b.ReportAllocs()
	for b.Loop() {
		w.evaluate(im)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/sample")
}

// TestWatchEverySample: the images are evaluated off the scan's
// goroutine, in order and every one: a Boolean that changes on every
// cycle gives one alarm change per image, also while the evaluation is
// held up for many cycles (the scan then waits for room, and nothing is
// skipped).
func TestWatchEverySample(t *testing.T) {
	f := &plctest.Fake{}
	e, err := plc.New(plc.Config{Period: time.Millisecond, Devices: []plc.DeviceConfig{{Name: "d", Device: f}},
		Tags: []plc.Tag{{Device: "d", Name: "B", Type: plc.Bool}}})
	if err != nil {
		t.Fatal(err)
	}
	normal := 0.0
	conf := &config.Config{Devices: []config.Device{{Name: "d", Tags: []config.Tag{
		{Name: "B", Alarm: &config.TagAlarm{Kind: config.AlarmOffNormal, Normal: &normal, Severity: 300}}}}}}
	w, err := NewWatch(e, conf, 1024)
	if err != nil {
		t.Fatal(err)
	}
	var changes atomic.Int64
	w.Start(func(ev *Event) {
		if ev.Change == Activated || ev.Change == Deactivated {
			changes.Add(1)
		}
	})
	// Every image after the first flips B: the device reads the new
	// level in the next cycle.
	var flips atomic.Int64
	on := false
	stopFlips := make(chan struct{})
	cancel := e.Subscribe(func(im *plc.Image) {
		select {
		case <-stopFlips:
			return
		default:
		}
		if v := im.Value(0).Bool(); v == on && im.Status(0) == 0 {
			on = !on
			f.Set(0, plc.BoolValue(on))
			flips.Add(1)
		}
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	waitUntil(t, func() bool { return flips.Load() >= 50 })
	w.Set.Begin() // the evaluation held up: the images queue, then the scan waits
	time.Sleep(30 * ms)
	w.Set.End()
	waitUntil(t, func() bool { return flips.Load() >= 150 })
	close(stopFlips)
	want := flips.Load()
	waitUntil(t, func() bool { return changes.Load() >= want })
	stop()
	<-done
	cancel()
	w.Stop()
	if got := changes.Load(); got != want {
		t.Fatalf("%d alarm changes for %d flips of the input", got, want)
	}
}

// waitUntil polls cond until it holds; the bound only stops a hung test.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}
