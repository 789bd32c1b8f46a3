package board

import (
	"strings"
	"testing"
)

func TestBuiltinProfilesValidate(t *testing.T) {
	for _, n := range Names() {
		p, err := Lookup(n)
		if err != nil {
			t.Fatal(err)
		}
		if p.Name != n {
			t.Errorf("Lookup(%q).Name = %q", n, p.Name)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", n, err)
		}
		if p.RT.CPU < -1 {
			t.Errorf("%s: cpu %d", n, p.RT.CPU)
		}
	}
	if got := strings.Join(Names(), ","); got != "generic-armv7,rpi4,sim" {
		t.Errorf("Names() = %s", got)
	}
}

func TestLookupUnknownListsKnown(t *testing.T) {
	_, err := Lookup("beaglebone")
	if err == nil {
		t.Fatal("no error")
	}
	for _, n := range []string{"beaglebone", "sim", "rpi4", "generic-armv7"} {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("error %q does not name %q", err, n)
		}
	}
}

func TestLookupReturnsCopy(t *testing.T) {
	p, _ := Lookup("sim")
	delete(p.GPIO, "DI1")
	q, _ := Lookup("sim")
	if _, ok := q.Pin("DI1"); !ok {
		t.Fatal("modifying a looked-up profile changed the built-in one")
	}
}

func TestSimWiring(t *testing.T) {
	p := Sim()
	want := map[string]GPIOPin{
		"DI1": {Chip: SimChip, Line: 0, Dir: Input},
		"DI4": {Chip: SimChip, Line: 3, Dir: Input},
		"DO1": {Chip: SimChip, Line: 4, Dir: Output},
		"DO4": {Chip: SimChip, Line: 7, Dir: Output},
	}
	for n, w := range want {
		if g, ok := p.Pin(n); !ok || g != w {
			t.Errorf("%s = %+v, %v; want %+v", n, g, ok, w)
		}
	}
	if len(p.PinNames()) != 8 {
		t.Errorf("pins %v", p.PinNames())
	}
}

func TestRPi4(t *testing.T) {
	p := RPi4()
	if p.Arch != "arm64" || p.Watchdog == "" || !p.Serial["RS485-1"].RS485 {
		t.Errorf("%+v", p)
	}
	if p.RT.Priority < 1 || p.RT.Priority > 99 {
		t.Errorf("priority %d", p.RT.Priority)
	}
}

func TestValidateReportsAll(t *testing.T) {
	p := Profile{
		Name: "bad",
		GPIO: map[string]GPIOPin{
			"A": {Chip: "", Line: -1, Dir: 0},
			"B": {Chip: "c", Line: 1, Dir: Input},
			"C": {Chip: "c", Line: 1, Dir: Output},
		},
		Serial: map[string]SerialPort{"S": {}},
		RT:     RealTime{CPU: -2, Priority: 100},
	}
	err := p.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"gpio[A].chip", "gpio[A].line", "gpio[A].dir", "gpio[C]: line c/1 already used by B", "serial[S].device", "rt.priority", "rt.cpu"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q: %v", s, err)
		}
	}
}
