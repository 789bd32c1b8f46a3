package alarms

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/edged/edged/opcua/ua/status"
)

// recorder keeps the events a set reports.
type recorder struct {
	events []string
	last   State
}

func (r *recorder) emit(c *Condition, ch Change) {
	r.last = c.State
	r.events = append(r.events, fmt.Sprintf("%s %s", c.Config.Name, describe(c, ch)))
}

// describe is an event as the tests read it: the changes, then the
// state (active level or bits, acked, confirmed, retain).
func describe(c *Condition, ch Change) string {
	names := []string{"Activated", "Deactivated", "LevelChanged", "QualityChanged", "Acknowledged", "Confirmed", "Commented", "Enabled", "Disabled", "Shelved", "Unshelved"}
	s := ""
	for i, n := range names {
		if ch&(1<<i) != 0 {
			s += n + ","
		}
	}
	st := &c.State
	return fmt.Sprintf("%s active=%v %v bits=%04b acked=%v confirmed=%v retain=%v", s, st.Active, st.Level, st.Bits, st.Acked, st.Confirmed, st.Retain)
}

var limits = Limits{HighHigh: 0.95, High: 0.9, Low: -0.9, LowLow: -0.95, Deadband: 0.02}

func feed(s *Set, id int, xs ...float64) {
	s.Begin()
	for i, x := range xs {
		s.Sample(id, x, 0, int64(i+1))
	}
	s.End()
}

// TestExclusiveLimits: levels with the deadband's hysteresis, a level
// change asks for a new acknowledgement.
func TestExclusiveLimits(t *testing.T) {
	var r recorder
	s := New([]Config{{Kind: ExclusiveLimit, Name: "Lim", Severity: 700, Limits: limits}}, r.emit)
	feed(s, 0, 0.5, 0.91, 0.96, 0.94, 0.92, 0.89, 0.87, 0.87, -0.91, -0.96, -0.94, -0.92, -0.5)
	want := []string{
		"Lim Activated, active=true High bits=0000 acked=false confirmed=false retain=true",
		"Lim LevelChanged, active=true HighHigh bits=0000 acked=false confirmed=false retain=true",
		"Lim LevelChanged, active=true High bits=0000 acked=false confirmed=false retain=true",
		"Lim Deactivated, active=false Normal bits=0000 acked=false confirmed=false retain=true",
		"Lim Activated, active=true Low bits=0000 acked=false confirmed=false retain=true",
		"Lim LevelChanged, active=true LowLow bits=0000 acked=false confirmed=false retain=true",
		"Lim LevelChanged, active=true Low bits=0000 acked=false confirmed=false retain=true",
		"Lim Deactivated, active=false Normal bits=0000 acked=false confirmed=false retain=true",
	}
	same(t, r.events, want)
	// An unset limit is never reached.
	r.events = nil
	s = New([]Config{{Kind: ExclusiveLimit, Name: "H", Limits: Limits{HighHigh: NoLimit, High: 10, Low: NoLimit, LowLow: NoLimit}}}, r.emit)
	feed(s, 0, -1e300, 0, 9.99, 10, 1e300, math.Inf(1), 9)
	same(t, r.events, []string{"H Activated, active=true High bits=0000 acked=false confirmed=false retain=true",
		"H Deactivated, active=false Normal bits=0000 acked=false confirmed=false retain=true"})
}

// TestNonExclusiveLimits: HighHigh and High at once, each with the
// deadband.
func TestNonExclusiveLimits(t *testing.T) {
	var r recorder
	s := New([]Config{{Kind: NonExclusiveLimit, Name: "N", Severity: 500, Limits: limits}}, r.emit)
	feed(s, 0, 0.91, 0.96, 0.94, 0.92, 0.5)
	same(t, r.events, []string{
		"N Activated, active=true Normal bits=0100 acked=false confirmed=false retain=true",
		"N LevelChanged, active=true Normal bits=1100 acked=false confirmed=false retain=true",
		"N LevelChanged, active=true Normal bits=0100 acked=false confirmed=false retain=true",
		"N Deactivated, active=false Normal bits=0000 acked=false confirmed=false retain=true",
	})
}

// TestOffNormalAndCommunication: a Boolean away from its normal value; a
// device that stops answering, whatever the quality.
func TestOffNormalAndCommunication(t *testing.T) {
	var r recorder
	s := New([]Config{{Kind: OffNormal, Name: "Door", Normal: 0}, {Kind: Communication, Name: "Comm"}}, r.emit)
	feed(s, 0, 0, 1, 1, 0)
	s.Begin()
	s.Sample(1, 1, 0, 1)
	s.Sample(1, 0, uint32(status.BadNoCommunication), 2)
	s.Sample(1, 1, 0, 3)
	s.End()
	same(t, r.events, []string{
		"Door Activated, active=true Normal bits=0000 acked=false confirmed=false retain=true",
		"Door Deactivated, active=false Normal bits=0000 acked=false confirmed=false retain=true",
		"Comm Activated,QualityChanged, active=true Normal bits=0000 acked=false confirmed=false retain=true",
		"Comm Deactivated,QualityChanged, active=false Normal bits=0000 acked=false confirmed=false retain=true",
	})
}

// TestBadQuality: a bad input keeps the state and reports the quality.
func TestBadQuality(t *testing.T) {
	var r recorder
	s := New([]Config{{Kind: ExclusiveLimit, Name: "Lim", Limits: limits}}, r.emit)
	s.Begin()
	s.Sample(0, 0.91, 0, 1)
	s.Sample(0, 0, uint32(status.BadNoCommunication), 2)
	s.Sample(0, 0, uint32(status.BadNoCommunication), 3)
	s.Sample(0, 0.91, 0, 4)
	s.End()
	same(t, r.events, []string{
		"Lim Activated, active=true High bits=0000 acked=false confirmed=false retain=true",
		"Lim QualityChanged, active=true High bits=0000 acked=false confirmed=false retain=true",
		"Lim QualityChanged, active=true High bits=0000 acked=false confirmed=false retain=true",
	})
	if r.last.Quality != 0 {
		t.Fatalf("quality %x", r.last.Quality)
	}
}

// TestAcknowledgeConfirm: the operators' actions and their statuses.
func TestAcknowledgeConfirm(t *testing.T) {
	var r recorder
	s := New([]Config{{Kind: ExclusiveLimit, Name: "Lim", Severity: 700, Limits: limits}}, r.emit)
	now := time.Unix(1000, 0)
	feed(s, 0, 0.91)
	ev := r.last.EventID
	check := func(what string, got, want status.Code) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: %v, want %v", what, got, want)
		}
	}
	check("ack of another event", s.Acknowledge(0, []byte("not an event id.."), "", "op", now), status.BadEventIDUnknown)
	check("confirm before ack", s.Confirm(0, ev[:], "", "op", now), status.BadInvalidState)
	check("ack", s.Acknowledge(0, ev[:], "seen", "op", now), status.Good)
	if r.last.User != "op" || r.last.Comment != "seen" || !r.last.Acked || r.last.EventID == ev {
		t.Fatalf("after ack: %+v", r.last)
	}
	ev = r.last.EventID
	check("ack again", s.Acknowledge(0, ev[:], "", "op", now), status.BadConditionBranchAlreadyAcked)
	check("comment", s.AddComment(0, ev[:], "a note", "op2", now), status.Good)
	ev = r.last.EventID
	feed(s, 0, 0.5)
	if !r.last.Retain || r.last.Active {
		t.Fatalf("inactive, acked, not confirmed: %+v", r.last)
	}
	ev = r.last.EventID
	check("confirm", s.Confirm(0, ev[:], "", "op", now), status.Good)
	if r.last.Retain {
		t.Fatalf("inactive, acked, confirmed: retained")
	}
	ev = r.last.EventID
	check("confirm again", s.Confirm(0, ev[:], "", "op", now), status.BadConditionBranchAlreadyConfirmed)
	check("unknown condition", s.Acknowledge(7, ev[:], "", "op", now), status.BadNodeIDUnknown)
	t.Logf("%d events", len(r.events))
}

// TestEnableDisable: a disabled condition reports nothing but its
// disabling, follows its input meanwhile, and reports its state when
// enabled.
func TestEnableDisable(t *testing.T) {
	var r recorder
	s := New([]Config{{Kind: ExclusiveLimit, Name: "Lim", Limits: limits}}, r.emit)
	now := time.Unix(1000, 0)
	if code := s.Enable(0, "eng", now); code != status.BadConditionAlreadyEnabled {
		t.Fatal(code)
	}
	if code := s.Disable(0, "eng", now); code != status.Good {
		t.Fatal(code)
	}
	ev := r.last.EventID
	feed(s, 0, 0.91)
	if code := s.Acknowledge(0, ev[:], "", "op", now); code != status.BadEventIDUnknown {
		t.Fatal("ack of a disabled condition's event:", code)
	}
	if code := s.Disable(0, "eng", now); code != status.BadConditionAlreadyDisabled {
		t.Fatal(code)
	}
	if code := s.Enable(0, "eng", now); code != status.Good {
		t.Fatal(code)
	}
	same(t, r.events, []string{
		"Lim Disabled, active=false Normal bits=0000 acked=true confirmed=true retain=false",
		"Lim Enabled, active=true High bits=0000 acked=false confirmed=false retain=true",
	})
	var st State
	s.Get(0, &st)
	s.Disable(0, "eng", now)
	if code := s.AddComment(0, r.last.EventID[:], "x", "op", now); code != status.BadConditionDisabled {
		t.Fatal("comment on a disabled condition:", code)
	}
}

// TestShelving: timed (bounded, expiring), one-shot (until inactive),
// and unshelving.
func TestShelving(t *testing.T) {
	var r recorder
	s := New([]Config{{Kind: ExclusiveLimit, Name: "Lim", Limits: limits}}, r.emit)
	now := time.Unix(1000, 0)
	for _, d := range []time.Duration{0, -time.Second, MaxShelvingTime + 1} {
		if code := s.TimedShelve(0, d, "op", now); code != status.BadShelvingTimeOutOfRange {
			t.Fatalf("shelve for %v: %v", d, code)
		}
	}
	if code := s.Unshelve(0, "op", now); code != status.BadConditionNotShelved {
		t.Fatal(code)
	}
	if code := s.TimedShelve(0, time.Minute, "op", now); code != status.Good || r.last.Shelving != TimedShelved {
		t.Fatal(code, r.last.Shelving)
	}
	n := len(r.events)
	s.Tick(now.Add(59 * time.Second))
	if len(r.events) != n {
		t.Fatal("unshelved before its time")
	}
	s.Tick(now.Add(time.Minute))
	if r.last.Shelving != NotShelved || len(r.events) != n+1 {
		t.Fatalf("not unshelved at its time: %v", r.events[n:])
	}
	feed(s, 0, 0.91)
	if code := s.OneShotShelve(0, "op", now); code != status.Good {
		t.Fatal(code)
	}
	if code := s.OneShotShelve(0, "op", now); code != status.BadConditionAlreadyShelved {
		t.Fatal(code)
	}
	feed(s, 0, 0.5)
	if r.last.Shelving != NotShelved || r.events[len(r.events)-1] != "Lim Deactivated,Unshelved, active=false Normal bits=0000 acked=false confirmed=false retain=true" {
		t.Fatalf("one-shot shelving after the alarm ended: %v", r.events[len(r.events)-1])
	}
	// Tick looks for expired shelvings only while some are timed: the
	// count follows every way in and out of TimedShelved.
	for _, step := range []struct {
		do    func() status.Code
		timed int
	}{
		{func() status.Code { return s.TimedShelve(0, time.Minute, "op", now) }, 1},
		{func() status.Code { return s.TimedShelve(0, time.Hour, "op", now) }, 1},
		{func() status.Code { return s.Unshelve(0, "op", now) }, 0},
		{func() status.Code { return s.TimedShelve(0, time.Minute, "op", now) }, 1},
		{func() status.Code { return s.OneShotShelve(0, "op", now) }, 0},
		{func() status.Code { return s.TimedShelve(0, time.Minute, "op", now) }, 1},
		{func() status.Code { s.Tick(now.Add(time.Minute)); return status.Good }, 0},
	} {
		if code := step.do(); code != status.Good || s.timed != step.timed {
			t.Fatalf("%v, %d timed, want %d", code, s.timed, step.timed)
		}
	}
	if r.last.Shelving != NotShelved {
		t.Fatal("the last timed shelving did not end")
	}
}

// TestRetained: what a ConditionRefresh reports.
func TestRetained(t *testing.T) {
	var r recorder
	s := New([]Config{{Kind: ExclusiveLimit, Name: "A", Limits: limits}, {Kind: ExclusiveLimit, Name: "B", Limits: limits}, {Kind: OffNormal, Name: "C"}}, r.emit)
	feed(s, 0, 0.91)
	feed(s, 2, 1)
	s.Disable(2, "eng", time.Now())
	var names []string
	s.Retained(func(c *Condition) { names = append(names, c.Config.Name) })
	same(t, names, []string{"A"})
}

// TestSampleAllocs: a batch of samples, changing conditions among them,
// allocates nothing.
func TestSampleAllocs(t *testing.T) {
	cfg := make([]Config, 100)
	for i := range cfg {
		cfg[i] = Config{Kind: ExclusiveLimit, Name: "L", Limits: limits}
	}
	var last State
	s := New(cfg, func(c *Condition, ch Change) { last = c.State })
	x := 0.0
	if a := testing.AllocsPerRun(100, func() {
		x = 0.95 - x
		s.Begin()
		for i := range cfg {
			s.Sample(i, x, 0, 1)
		}
		s.End()
	}); a != 0 {
		t.Fatalf("%v allocations per batch", a)
	}
	_ = last
}

func same(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events:\n%s\nwant %d:\n%s", len(got), join(got), len(want), join(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("event %d:\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
}

func join(s []string) string {
	out := ""
	for _, x := range s {
		out += "  " + x + "\n"
	}
	return out
}

// BenchmarkLimitSample: one sample of one of 10,000 exclusive limit
// alarms, a sine's values (a change of state now and then), as a scan
// cycle's batch gives them.
func BenchmarkLimitSample(b *testing.B) {
	const n = 10000
	cfg := make([]Config, n)
	for i := range cfg {
		cfg[i] = Config{Kind: ExclusiveLimit, Name: "L", Severity: 500, Limits: limits}
	}
	s := New(cfg, func(c *Condition, ch Change) {})
	xs := make([]float64, 1000)
	for i := range xs {
		xs[i] = math.Sin(float64(i) * 2 * math.Pi / float64(len(xs)))
	}
	b.ReportAllocs()
	i := 0
	s.Begin()
	for b.Loop() {
		s.Sample(i%n, xs[(i/n)%len(xs)], 0, int64(i))
		i++
	}
	s.End()
}

// TestSampleLevels: the levels and bits a Set reaches over random samples
// are those of Limits.level and Limits.bits applied one sample after the
// other, whichever limits are set (the quiet band a sample may skip them
// in changes nothing).
func TestSampleLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(x float64) float64 {
		if rng.IntN(3) == 0 {
			return NoLimit
		}
		return x
	}
	for round := range 500 {
		l := Limits{HighHigh: pick(80), High: pick(60), Low: pick(20), LowLow: pick(5), Deadband: float64(rng.IntN(4))}
		s := New([]Config{{Kind: ExclusiveLimit, Limits: l}, {Kind: NonExclusiveLimit, Limits: l}}, func(*Condition, Change) {})
		var level Level
		var bits uint8
		s.Begin()
		for i := range 200 {
			x := rng.Float64()*100 - 5
			switch rng.IntN(20) {
			case 0:
				x = math.NaN()
			case 1:
				x = math.Inf(1 - 2*rng.IntN(2))
			case 2:
				x = []float64{80, 60, 20, 5, 78, 58, 22, 7}[rng.IntN(8)] // on a limit or a deadband's edge
			}
			s.Sample(0, x, 0, int64(i))
			s.Sample(1, x, 0, int64(i))
			level, bits = l.level(x, level), l.bits(x, bits)
			if got := s.conds[0].State; got.Level != level || got.Active != (level != None) {
				t.Fatalf("round %d %+v, sample %d (%v): level %v active %v, want %v", round, l, i, x, got.Level, got.Active, level)
			}
			if got := s.conds[1].State; got.Bits != bits || got.Active != (bits != 0) {
				t.Fatalf("round %d %+v, sample %d (%v): bits %04b active %v, want %04b", round, l, i, x, got.Bits, got.Active, bits)
			}
		}
		s.End()
	}
}
