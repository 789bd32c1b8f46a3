package historian

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/plctest"
	"github.com/edged/edged/tsdb"
)

const ms = time.Millisecond

// rig is an engine with one fake device "d", its configuration document
// and a store.
type rig struct {
	e    *plc.Engine
	f    *plctest.Fake
	conf *config.Config
	db   *tsdb.DB
	dir  string
}

// tagSpec is a tag of the rig: its engine type and its history.
type tagSpec struct {
	name string
	typ  plc.Type
	h    *config.TagHistory
	sc   *config.Scaling
}

func newRig(t testing.TB, dir string, tags ...tagSpec) *rig {
	r := &rig{f: &plctest.Fake{}, dir: dir}
	pc := plc.Config{Devices: []plc.DeviceConfig{{Name: "d", Device: r.f}}}
	dev := config.Device{Name: "d", Kind: config.KindSim}
	for _, ts := range tags {
		pc.Tags = append(pc.Tags, plc.Tag{Device: "d", Name: ts.name, Type: ts.typ})
		dev.Tags = append(dev.Tags, config.Tag{Name: ts.name, History: ts.h, Scaling: ts.sc})
	}
	var err error
	if r.e, err = plc.New(pc); err != nil {
		t.Fatal(err)
	}
	r.conf = &config.Config{Devices: []config.Device{dev}, History: config.DefaultHistory()}
	r.open(t)
	return r
}

func (r *rig) open(t testing.TB) {
	db, err := tsdb.Open(r.dir, tsdb.Options{FlushInterval: time.Hour, Reserve: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	r.db = db
	t.Cleanup(func() { db.Close() })
}

// samples returns the series of tag name, as recorded.
func (r *rig) samples(t testing.TB, name string, kind tsdb.Kind) []tsdb.Sample {
	id, err := r.db.Series(SeriesKey("d", name), kind)
	if err != nil {
		t.Fatal(err)
	}
	var out []tsdb.Sample
	r.db.Scan(id, math.MinInt64, math.MaxInt64, false, 0, func(s *tsdb.Sample) bool {
		out = append(out, *s)
		return true
	})
	return out
}

// run runs the engine and a historian of it for d, with step called
// every cycle before the engine polls.
func (r *rig) run(t *testing.T, d time.Duration, step func(cycle int)) {
	hs, err := New(r.db, r.e, r.conf, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	hs.Start()
	n := 0
	cancel := r.e.Subscribe(func(*plc.Image) {
		n++
		if step != nil {
			step(n)
		}
	})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.e.Run(ctx) }()
	time.Sleep(d)
	synctest.Wait()
	stop()
	<-done
	cancel()
	hs.Stop()
}

func values(ss []tsdb.Sample) []float64 {
	var out []float64
	for _, s := range ss {
		if !s.NoValue {
			out = append(out, math.Float64frombits(s.Value))
		}
	}
	return out
}

// TestOnChangeAndDeadband: a tag on change records each new value once
// (not its repeated reads); on a deadband only the moves beyond it; the
// percent deadband is of the EU range.
func TestOnChangeAndDeadband(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, t.TempDir(),
			tagSpec{name: "c", typ: plc.UInt32, h: &config.TagHistory{Mode: config.OnChange}},
			tagSpec{name: "a", typ: plc.Float64, h: &config.TagHistory{Mode: config.OnDeadband, Deadband: 1, DeadbandType: config.DeadbandAbsolute}},
			tagSpec{name: "p", typ: plc.Float64, h: &config.TagHistory{Mode: config.OnDeadband, Deadband: 10, DeadbandType: config.DeadbandPercent},
				sc: &config.Scaling{RawMin: 0, RawMax: 100, EUMin: 0, EUMax: 50}}, // 10 % of 50: 5
		)
		moves := []float64{0, 0.5, 0.9, 1.2, 1.3, 3, 2.5, 1.9, 10, 13, 16, 15}
		r.run(t, 200*ms, func(n int) {
			i := min(n/3, len(moves)-1) // each value read three cycles
			r.f.Set(0, plc.UInt32Value(uint32(i)))
			r.f.Set(1, plc.Float64Value(moves[i]))
			r.f.Set(2, plc.Float64Value(moves[i]))
		})
		c := r.samples(t, "c", tsdb.Int)
		for i, s := range c {
			if s.Value != uint64(i) || s.Status != uint32(status.Good) {
				t.Fatalf("c sample %d: %+v", i, s)
			}
		}
		if len(c) != len(moves) {
			t.Errorf("c: %d samples, want %d", len(c), len(moves))
		}
		if got, want := values(r.samples(t, "a", tsdb.Float64)), []float64{0, 1.2, 3, 1.9, 10, 13, 16}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("deadband 1: %v, want %v", got, want)
		}
		if got, want := values(r.samples(t, "p", tsdb.Float64)), []float64{0, 10, 16}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("deadband 10 %% of 50: %v, want %v", got, want)
		}
		r.db.Close()
	})
}

// TestPeriodic: a periodic tag is recorded at the multiples of its period
// with the value read last, and not again while it was not read again.
func TestPeriodic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, t.TempDir(), tagSpec{name: "s", typ: plc.Float64, h: &config.TagHistory{Mode: config.Periodic, PeriodMs: 50}})
		r.run(t, 500*ms, func(n int) { r.f.Set(0, plc.Float64Value(float64(n))) })
		ss := r.samples(t, "s", tsdb.Float64)
		if len(ss) < 8 || len(ss) > 11 {
			t.Fatalf("%d samples in 500 ms at 50 ms", len(ss))
		}
		for i, s := range ss {
			if s.Time%int64(50*ms) != 0 {
				t.Errorf("sample %d at %d, not a multiple of 50 ms", i, s.Time)
			}
			if i > 0 && s.Time-ss[i-1].Time != int64(50*ms) {
				t.Errorf("sample %d %v after the last", i, time.Duration(s.Time-ss[i-1].Time))
			}
		}
		r.db.Close()
	})
}

// TestDeviceDownAndRestart: a device that stops answering is recorded as
// its tags' statuses (Uncertain_LastUsableValue at the time it was noticed,
// then Bad_NoCommunication); a restart of the recorder marks the time the
// store last ran as Bad_DataLost.
func TestDeviceDownAndRestart(t *testing.T) {
	dir := t.TempDir()
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, dir, tagSpec{name: "c", typ: plc.UInt32, h: &config.TagHistory{Mode: config.OnChange}})
		r.e = mustEngineNoComm(t, r, 50*ms)
		r.run(t, 300*ms, func(n int) {
			r.f.Set(0, plc.UInt32Value(uint32(n)))
			if n == 20 {
				r.f.SetError(fmt.Errorf("unplugged"))
			}
		})
		ss := r.samples(t, "c", tsdb.Int)
		var sts []string
		for _, s := range ss {
			if len(sts) == 0 || sts[len(sts)-1] != status.Code(s.Status).Name() {
				sts = append(sts, status.Code(s.Status).Name())
			}
		}
		if fmt.Sprint(sts) != "[Good UncertainLastUsableValue BadNoCommunication]" {
			t.Errorf("statuses %v", sts)
		}
		for i := 1; i < len(ss); i++ {
			if ss[i].Time <= ss[i-1].Time {
				t.Fatalf("sample %d not after the last", i)
			}
		}
		r.db.Close()
		// Again, as after a restart.
		r.open(t)
		r.f.SetError(nil)
		r.e = mustEngineNoComm(t, r, 50*ms)
		r.run(t, 100*ms, func(n int) { r.f.Set(0, plc.UInt32Value(uint32(1000+n))) })
		ss = r.samples(t, "c", tsdb.Int)
		gap := -1
		for i, s := range ss {
			if s.Status == uint32(status.BadDataLost) {
				gap = i
			}
		}
		if gap < 0 || gap == len(ss)-1 || !ss[gap].NoValue || ss[gap+1].Value < 1000 {
			t.Fatalf("no restart gap before the new values: %+v", ss[max(gap-1, 0):min(gap+2, len(ss))])
		}
		r.db.Close()
	})
}

// mustEngineNoComm rebuilds r's engine with NoCommAfter d.
func mustEngineNoComm(t *testing.T, r *rig, d time.Duration) *plc.Engine {
	pc := plc.Config{Devices: []plc.DeviceConfig{{Name: "d", Device: r.f}}, NoCommAfter: d}
	for _, ct := range r.conf.Devices[0].Tags {
		pc.Tags = append(pc.Tags, plc.Tag{Device: "d", Name: ct.Name, Type: plc.UInt32})
	}
	e, err := plc.New(pc)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestStoreFullGap: samples the store refuses leave a Bad_DataLost gap
// at the first of them, recorded when the store takes samples again.
func TestStoreFullGap(t *testing.T) {
	r := newRig(t, t.TempDir(), tagSpec{name: "c", typ: plc.UInt32, h: &config.TagHistory{Mode: config.OnChange}})
	hs, err := New(r.db, r.e, r.conf, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tg := hs.lay.Load().tags[0]
	s := plc.Sample{Value: plc.UInt32Value(1), Status: status.Good, Time: 1e18}
	hs.append(tg, &s, s.Time)
	r.db.Close() // appends fail from now on
	s = plc.Sample{Value: plc.UInt32Value(2), Status: status.Good, Time: 2e18}
	hs.append(tg, &s, s.Time)
	if tg.lost != 2e18 || hs.Stats().Dropped != 1 {
		t.Fatalf("lost %d, stats %+v", tg.lost, hs.Stats())
	}
	r.open(t)
	hs.db = r.db
	s = plc.Sample{Value: plc.UInt32Value(3), Status: status.Good, Time: 3e18}
	hs.append(tg, &s, s.Time)
	ss := r.samples(t, "c", tsdb.Int)
	// The first sample was in the closed store's log only until Close
	// flushed it.
	if len(ss) != 3 || ss[1].Status != uint32(status.BadDataLost) || ss[1].Time != 2e18 || ss[2].Value != 3 {
		t.Fatalf("%+v", ss)
	}
}

// TestApplyLive: a tag given a history starts recording, one whose
// history is removed stops, a kept one keeps its state.
func TestApplyLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, t.TempDir(),
			tagSpec{name: "a", typ: plc.UInt32, h: &config.TagHistory{Mode: config.OnChange}},
			tagSpec{name: "b", typ: plc.UInt32})
		hs, err := New(r.db, r.e, r.conf, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, _, ok := hs.Series(1); ok {
			t.Fatal("b historized")
		}
		next := *r.conf
		next.Devices = []config.Device{r.conf.Devices[0]}
		next.Devices[0].Tags = []config.Tag{r.conf.Devices[0].Tags[0], {Name: "b", History: &config.TagHistory{Mode: config.OnChange}}}
		next.Devices[0].Tags[0].History = nil
		if err := hs.Apply(&next); err != nil {
			t.Fatal(err)
		}
		if _, _, _, ok := hs.Series(0); ok {
			t.Error("a still historized")
		}
		if _, typ, stepped, ok := hs.Series(1); !ok || typ != plc.UInt32 || !stepped {
			t.Error("b not historized")
		}
		r.db.Close()
	})
}

// TestAppendAllocs: recording samples of 100 tags allocates nothing.
func TestAppendAllocs(t *testing.T) {
	var specs []tagSpec
	for i := range 100 {
		specs = append(specs, tagSpec{name: fmt.Sprint("t", i), typ: plc.Float64, h: &config.TagHistory{Mode: config.OnChange}})
	}
	r := newRig(t, t.TempDir(), specs...)
	defer r.db.Close()
	hs, err := New(r.db, r.e, r.conf, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tags := hs.lay.Load().tags
	now := int64(1e18)
	round := func() {
		now += 1e9
		for i, tg := range tags {
			s := plc.Sample{Value: plc.Float64Value(math.Sin(float64(now) / 1e10)), Status: status.Good, Time: now + int64(i)}
			if hs.changed(tg, &s) {
				hs.append(tg, &s, recordTime(tg, &s, now))
			}
		}
	}
	for range 500 {
		round()
	}
	if a := testing.AllocsPerRun(100, round); a != 0 {
		t.Fatalf("%v allocations per round of 100 samples", a)
	}
}

// TestCounterBytesPerSample: a day of a counter recorded every second
// (+200 a second, as the simulator's Counter at 5 ms) takes at most 2
// bytes a sample in the store's blocks, where the log's samples end up.
func TestCounterBytesPerSample(t *testing.T) {
	const day = 86400
	r := newRig(t, t.TempDir(), tagSpec{name: "c", typ: plc.UInt32, h: &config.TagHistory{Mode: config.Periodic, PeriodMs: 1000}})
	r.db.Close()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	var clock atomic.Int64 // the store's flusher reads it too
	clock.Store(t0)
	db, err := tsdb.Open(r.dir, tsdb.Options{FlushInterval: time.Hour, Reserve: -1, Logger: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	hs, err := New(db, r.e, r.conf, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tg := hs.lay.Load().tags[0]
	for k := range int64(day) {
		now := t0 + k*1e9
		clock.Store(now)
		s := plc.Sample{Value: plc.UInt32Value(uint32(k * 200)), Status: status.Good, Time: now - 180e3} // read 180 µs before
		hs.append(tg, &s, now)
		if k%60 == 59 {
			db.Flush() // a flush a minute: the blocks are the same, the test quicker
		}
	}
	var st tsdb.Stats
	db.Stats(&st)
	if st.Appended != day || st.BlockSamples < day*9/10 {
		t.Fatalf("%d samples appended, %d in blocks", st.Appended, st.BlockSamples)
	}
	per := float64(st.BlockBytes) / float64(st.BlockSamples)
	t.Logf("%d samples in %d blocks: %d bytes, %.2f bytes/sample; the log %d bytes", st.BlockSamples, st.Blocks, st.BlockBytes, per, st.Bytes-st.BlockBytes)
	if per > 2 {
		t.Errorf("%.2f bytes per sample in blocks, want at most 2", per)
	}
}

// BenchmarkIngest: the CPU of recording one sample of one of 10,000
// tags, each a Float64 changing every second, with the store's flushes (a
// log record a second) and block cuts.
func BenchmarkIngest(b *testing.B) {
	const n = 10000
	var specs []tagSpec
	for i := range n {
		specs = append(specs, tagSpec{name: fmt.Sprint("t", i), typ: plc.Float64, h: &config.TagHistory{Mode: config.OnChange}})
	}
	r := newRig(b, b.TempDir(), specs...)
	defer r.db.Close()
	hs, err := New(r.db, r.e, r.conf, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	tags := hs.lay.Load().tags
	now := int64(1_700_000_000) * 1e9
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % n
		if k == 0 {
			now += 1e9
			if i > 0 {
				r.db.Flush()
			}
		}
		tg := tags[k]
		s := plc.Sample{Value: plc.Float64Value(math.Round(100*math.Sin(float64(now)/6e10+float64(k))) / 10), Status: status.Good, Time: now + int64(k)*1000}
		if hs.changed(tg, &s) {
			hs.append(tg, &s, recordTime(tg, &s, now))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/sample")
}

// cpuTime is the process's CPU time, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
