package gpio

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	pgpio "periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"

	"github.com/edged/edged/board"
)

func openSim(t *testing.T, pins ...PinConfig) (*Driver, *Sim) {
	t.Helper()
	b := board.Sim()
	s := NewSim(b)
	d, err := Open(b, s, pins)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, s
}

func mustReading(t *testing.T, d *Driver, name string) Reading {
	t.Helper()
	r, err := d.Reading(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestInputs(t *testing.T) {
	d, s := openSim(t, PinConfig{Name: "DI1"}, PinConfig{Name: "DI2"})
	if r := mustReading(t, d, "DI1"); !errors.Is(r.Err, ErrNotSampled) {
		t.Fatalf("before Scan: %+v", r)
	}
	s.SetInput("DI1", true)
	rs := d.Scan()
	if len(rs) != 2 || rs[0].Name != "DI1" || !rs[0].Value || rs[0].Err != nil || rs[1].Value || rs[1].Err != nil {
		t.Fatalf("%+v", rs)
	}
	if rs[0].Dir != board.Input {
		t.Errorf("dir %v", rs[0].Dir)
	}
	s.SetInput("DI1", false)
	s.SetInput("DI2", true)
	d.Scan()
	if r := mustReading(t, d, "DI1"); r.Value {
		t.Error("DI1 still high")
	}
	if r := mustReading(t, d, "DI2"); !r.Value {
		t.Error("DI2 low")
	}
}

func TestDebounce(t *testing.T) {
	d, s := openSim(t, PinConfig{Name: "DI1", Debounce: 3})
	steps := []struct {
		in, want bool
	}{
		{false, false}, // first sample taken as is
		{true, false},  // 1
		{true, false},  // 2
		{false, false}, // bounce: count restarts
		{true, false},  // 1
		{true, false},  // 2
		{true, true},   // 3: accepted
		{false, true},  // 1
		{true, true},   // equal to state: count cleared
		{false, true},  // 1
		{false, true},  // 2
		{false, false}, // 3
	}
	for i, st := range steps {
		s.SetInput("DI1", st.in)
		r := d.Scan()[0]
		if r.Err != nil || r.Value != st.want {
			t.Fatalf("step %d: in %v: got %+v, want %v", i, st.in, r, st.want)
		}
	}
}

func TestDebounceErrorRestartsCount(t *testing.T) {
	d, s := openSim(t, PinConfig{Name: "DI1", Debounce: 2})
	s.SetInput("DI1", false)
	d.Scan()
	s.SetInput("DI1", true)
	d.Scan() // 1
	s.SetFault("DI1", errors.New("EIO"))
	if r := d.Scan()[0]; r.Err == nil {
		t.Fatal("no error")
	}
	s.SetFault("DI1", nil)
	if r := d.Scan()[0]; r.Value { // 1 again, not 2
		t.Fatal("a failed read did not restart the debounce count")
	}
	if r := d.Scan()[0]; !r.Value {
		t.Fatal("not accepted after 2 samples")
	}
}

func TestOutputsAndLoopback(t *testing.T) {
	d, s := openSim(t,
		PinConfig{Name: "DO1", Initial: true}, PinConfig{Name: "DO2"},
		PinConfig{Name: "DI1"}, PinConfig{Name: "DI2"}, PinConfig{Name: "DI3"}, PinConfig{Name: "DO3"})
	if !s.Pin("DO1").Read() {
		t.Error("DO1 initial level not driven")
	}
	d.Scan()
	for n, want := range map[string]bool{"DO1": true, "DI1": true, "DO2": false, "DI2": false} {
		if r := mustReading(t, d, n); r.Err != nil || r.Value != want {
			t.Errorf("%s = %+v, want %v", n, r, want)
		}
	}
	if err := d.Write("DO2", true); err != nil {
		t.Fatal(err)
	}
	if err := d.Write("DO1", false); err != nil {
		t.Fatal(err)
	}
	if err := d.Write("DO3", true); err != nil {
		t.Fatal(err)
	}
	d.Scan()
	for n, want := range map[string]bool{"DO1": false, "DI1": false, "DO2": true, "DI2": true, "DI3": true, "DO3": true} {
		if r := mustReading(t, d, n); r.Err != nil || r.Value != want {
			t.Errorf("%s = %+v, want %v", n, r, want)
		}
	}
	if err := d.Write("DI1", true); !errors.Is(err, ErrNotOutput) {
		t.Errorf("write to input: %v", err)
	}
}

func TestSimFullLoopback(t *testing.T) {
	var pins []PinConfig
	for _, n := range []string{"DI1", "DI2", "DI3", "DI4", "DO1", "DO2", "DO3", "DO4"} {
		pins = append(pins, PinConfig{Name: n})
	}
	d, _ := openSim(t, pins...)
	for i := 0; i < 16; i++ {
		for j := 0; j < 4; j++ {
			if err := d.Write("DO"+string(rune('1'+j)), i&(1<<j) != 0); err != nil {
				t.Fatal(err)
			}
		}
		rs := d.Scan()
		for j := 0; j < 4; j++ {
			if rs[j].Value != (i&(1<<j) != 0) || rs[j].Value != rs[4+j].Value {
				t.Fatalf("pattern %04b: %+v", i, rs)
			}
		}
	}
}

func TestErrorSurfacing(t *testing.T) {
	d, s := openSim(t, PinConfig{Name: "DI1"}, PinConfig{Name: "DI2"}, PinConfig{Name: "DO3"})
	eio := errors.New("EIO")
	s.SetInput("DI1", true)
	d.Scan()
	s.SetFault("DI1", eio)
	s.SetFault("DO3", eio)
	rs := d.Scan()
	if !errors.Is(rs[0].Err, eio) {
		t.Errorf("DI1: %+v", rs[0])
	}
	if rs[1].Err != nil {
		t.Errorf("a fault on DI1 affected DI2: %+v", rs[1])
	}
	if !errors.Is(rs[2].Err, eio) {
		t.Errorf("DO3 read-back: %+v", rs[2])
	}
	if err := d.Write("DO3", true); !errors.Is(err, eio) {
		t.Errorf("write to faulty output: %v", err)
	}
	s.SetFault("DI1", nil)
	if r := d.Scan()[0]; r.Err != nil || !r.Value {
		t.Errorf("after repair: %+v", r)
	}
}

func TestUnknownPins(t *testing.T) {
	b := board.Sim()
	_, err := Open(b, NewSim(b), []PinConfig{{Name: "DI9"}, {Name: "DI1"}, {Name: "DI1"}, {Name: "DO1", Debounce: 2}, {Name: "DI2", Debounce: -1}})
	if err == nil {
		t.Fatal("no error")
	}
	if !errors.Is(err, ErrUnknownPin) {
		t.Errorf("not ErrUnknownPin: %v", err)
	}
	for _, s := range []string{`"DI9"`, "DI1, DI2, DI3, DI4, DO1", `"DI1": listed twice`, `"DO1": debounce on an output`, `"DI2": debounce -1`} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	d, _ := openSim(t, PinConfig{Name: "DI1"})
	if _, err := d.Reading("DO1"); !errors.Is(err, ErrUnknownPin) {
		t.Errorf("Reading: %v", err)
	}
	if err := d.Write("X", true); !errors.Is(err, ErrUnknownPin) || !strings.Contains(err.Error(), "opened: DI1") {
		t.Errorf("Write: %v", err)
	}
}

func TestActiveLow(t *testing.T) {
	b := board.Sim()
	g := b.GPIO["DO1"]
	g.ActiveLow = true
	b.GPIO["DO1"] = g
	g = b.GPIO["DI1"]
	g.ActiveLow = true
	b.GPIO["DI1"] = g
	s := NewSim(b)
	d, err := Open(b, s, []PinConfig{{Name: "DO1", Initial: true}, {Name: "DI1"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Pin("DO1").Read() != pgpio.Low {
		t.Error("active-low output on is not electrically low")
	}
	rs := d.Scan()
	if !rs[0].Value || !rs[1].Value {
		t.Errorf("%+v", rs)
	}
}

func TestClose(t *testing.T) {
	d, _ := openSim(t, PinConfig{Name: "DO1"})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if r := d.Scan()[0]; !errors.Is(r.Err, ErrClosed) {
		t.Errorf("%+v", r)
	}
	if err := d.Write("DO1", true); !errors.Is(err, ErrClosed) {
		t.Error(err)
	}
}

func TestPeriphPinWithoutFaulter(t *testing.T) {
	p := PeriphPin{&gpiotest.Pin{N: "X", L: pgpio.High}}
	if v, err := p.Read(); err != nil || !v {
		t.Fatal(v, err)
	}
	if v, err := (PeriphPin{&FaultPin{Pin: &gpiotest.Pin{}}}).Read(); err != nil || v {
		t.Fatal(v, err)
	}
}

func TestInvalid(t *testing.T) {
	if _, err := Invalid.Read(); err == nil {
		t.Error("Invalid.Read succeeded")
	}
	if err := Invalid.Out(true); err == nil {
		t.Error("Invalid.Out succeeded")
	}
}

func TestScanDoesNotAllocate(t *testing.T) {
	d, _ := openSim(t, PinConfig{Name: "DI1", Debounce: 2}, PinConfig{Name: "DO1"})
	if n := testing.AllocsPerRun(100, func() { d.Scan() }); n != 0 {
		t.Errorf("Scan allocates %v times", n)
	}
}

func TestSimRejectsOtherChips(t *testing.T) {
	b := board.GenericARMv7()
	_, err := Open(b, NewSim(b), []PinConfig{{Name: "DI1"}})
	if !errors.Is(err, ErrSimLine) {
		t.Errorf("%v", err)
	}
}

// TestChardevAbsent checks the clear run-time error where the character
// device is absent (this CI machine has no /dev/gpiochip*; skipped where it
// has one).
func TestChardevAbsent(t *testing.T) {
	if runtime.GOOS == "linux" && hasGPIOChip() {
		t.Skip("this machine has a GPIO character device")
	}
	b := board.RPi4()
	_, err := Open(b, NewChardev(), []PinConfig{{Name: "DI1"}})
	if !errors.Is(err, ErrNoChardev) {
		t.Fatalf("got %v, want ErrNoChardev", err)
	}
	if !strings.Contains(err.Error(), "DI1") || !strings.Contains(err.Error(), "gpiochip0") {
		t.Errorf("error does not name the pin: %v", err)
	}
}
