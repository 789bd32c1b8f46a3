package sim_test

import (
	"context"
	"encoding/binary"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/edged/edged/drivers/modbus"
	"github.com/edged/edged/drivers/modbus/slave"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

func startManual(t *testing.T) *sim.Sim {
	t.Helper()
	s, err := sim.StartOptions(t.Context(), sim.Options{Manual: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func client(t *testing.T, s *sim.Sim) *modbus.Client {
	t.Helper()
	l := modbus.NewTCP(modbus.TCPConfig{Address: s.Addr()})
	t.Cleanup(func() { l.Close() })
	return l.Client(1)
}

func readHR(t *testing.T, c *modbus.Client, addr, n uint16) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	b, err := c.Read(ctx, modbus.HoldingRegisters, addr, n, nil)
	if err != nil {
		t.Fatalf("read hr:%d+%d: %v", addr, n, err)
	}
	return b
}

// TestRegisterMap steps the simulator by hand and reads every signal of the
// documented map through the real driver.
func TestRegisterMap(t *testing.T) {
	s := startManual(t)
	c := client(t, s)
	for range 150 {
		s.Step()
	}
	const n = 150
	regs := readHR(t, c, 0, 9)
	if got := binary.BigEndian.Uint32(regs[0:]); got != n {
		t.Errorf("Counter = %d, want %d", got, n)
	}
	if got, want := math.Float64frombits(binary.BigEndian.Uint64(regs[4:])), math.Sin(2*math.Pi*n/2000); got != want {
		t.Errorf("Sine = %v, want %v", got, want)
	}
	if got, want := math.Float32frombits(binary.BigEndian.Uint32(regs[12:])), float32(100*float64(n)/2000); got != want {
		t.Errorf("Ramp = %v, want %v", got, want)
	}
	ctx := t.Context()
	bits, err := c.Read(ctx, modbus.Coils, sim.CoilToggle, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := bits[0]&1 != 0; got != sim.Toggle(n) || !got {
		t.Errorf("Toggle at tick %d = %v, want true", n, got)
	}
	// Toggle flips every 100 ticks.
	for i, want := range map[uint64]bool{0: false, 99: false, 100: true, 199: true, 200: false} {
		if sim.Toggle(i) != want {
			t.Errorf("Toggle(%d) = %v, want %v", i, !want, want)
		}
	}
	// Ramp wraps after 10 s.
	if sim.Ramp(2000) != 0 || sim.Ramp(1999) <= 99 {
		t.Errorf("Ramp(1999) = %v, Ramp(2000) = %v", sim.Ramp(1999), sim.Ramp(2000))
	}
}

// TestCommandStatus checks that Status copies Command on the tick after the
// write, not before, and that Setpoint keeps what is written.
func TestCommandStatus(t *testing.T) {
	s := startManual(t)
	c := client(t, s)
	ctx := t.Context()
	if err := c.WriteRegisters(ctx, sim.RegCommand, []byte{0x12, 0x34}); err != nil {
		t.Fatal(err)
	}
	var sp [4]byte
	binary.BigEndian.PutUint32(sp[:], math.Float32bits(21.5))
	if err := c.WriteRegisters(ctx, sim.RegSetpoint, sp[:]); err != nil {
		t.Fatal(err)
	}
	if got := binary.BigEndian.Uint16(readHR(t, c, sim.RegStatus, 1)); got != 0 {
		t.Fatalf("Status before the next tick = %#x, want 0", got)
	}
	s.Step()
	if got := binary.BigEndian.Uint16(readHR(t, c, sim.RegStatus, 1)); got != 0x1234 {
		t.Fatalf("Status after a tick = %#x, want 0x1234", got)
	}
	if got := math.Float32frombits(binary.BigEndian.Uint32(readHR(t, c, sim.RegSetpoint, 2))); got != 21.5 {
		t.Fatalf("Setpoint = %v, want 21.5", got)
	}
}

// TestOutOfBank checks the exception that tests rely on.
func TestOutOfBank(t *testing.T) {
	s := startManual(t)
	c := client(t, s)
	_, err := c.Read(t.Context(), modbus.HoldingRegisters, sim.BankSize, 1, nil)
	if modbus.StatusOf(err) != status.BadConfigurationError {
		t.Fatalf("read beyond the bank: %v, want exception 2 (BadConfigurationError)", err)
	}
}

// TestClock runs the simulator on its clock, polled through the driver
// over its in-memory connection (Dial), as edged polls it: the Counter
// increases and Status takes a written Command, with no Step. Bounded
// waits, no timing assertion.
func TestClock(t *testing.T) {
	s, err := sim.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := modbus.NewTCP(modbus.TCPConfig{Address: s.Addr(), Dial: s.Dial})
	defer l.Close()
	c := l.Client(1)
	first := binary.BigEndian.Uint32(readHR(t, c, sim.RegCounter, 2))
	if err := c.WriteRegisters(t.Context(), sim.RegCommand, []byte{0x43, 0x21}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		counter := binary.BigEndian.Uint32(readHR(t, c, sim.RegCounter, 2))
		st := binary.BigEndian.Uint16(readHR(t, c, sim.RegStatus, 1))
		if counter > first && st == 0x4321 {
			if ticks := s.Ticks(); ticks < uint64(counter) {
				t.Errorf("Ticks %d below the Counter read, %d", ticks, counter)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Counter %d (from %d), Status %#x", counter, first, st)
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(t.Context(), modbus.HoldingRegisters, 0, 1, nil); err == nil {
		t.Error("a read after Close succeeded")
	}
}

// TestTicker: the same over TCP, as other Modbus clients see it.
func TestTicker(t *testing.T) {
	s, err := sim.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := client(t, s)
	first := binary.BigEndian.Uint32(readHR(t, c, sim.RegCounter, 2))
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := binary.BigEndian.Uint32(readHR(t, c, sim.RegCounter, 2)); got > first {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Counter stayed at %d", first)
		}
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestConfig checks that Config is config.Simulator with the slave's port
// and that it validates.
func TestConfig(t *testing.T) {
	s := startManual(t)
	c := s.Config()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	d, ok := c.Device(sim.DeviceName)
	if !ok || d.Kind != config.KindModbusTCP || d.ModbusTCP.Address != s.Addr() {
		t.Fatalf("device sim: %+v", d)
	}
	if strings.HasSuffix(s.Addr(), ":0") {
		t.Fatalf("address %s has no port", s.Addr())
	}
	// The map in the configuration is the slave's.
	want := map[string]string{"Counter": "hr:0", "Sine": "hr:2", "Ramp": "hr:6", "Status": "hr:8", "Setpoint": "hr:100", "Command": "hr:102", "Toggle": "co:0"}
	for _, tag := range d.Tags {
		if want[tag.Name] != tag.Address {
			t.Errorf("tag %s at %s, the simulator has it at %s", tag.Name, tag.Address, want[tag.Name])
		}
	}
	if _, ok := c.Device(sim.GPIODeviceName); !ok {
		t.Error("no GPIO device")
	}
}

var mbpollLine = regexp.MustCompile(`(?m)^\[(\d+)\]:\s+(-?\d+)\s*$`)

// mbpoll runs mbpoll against the simulator with the options args and the
// values to write (none for a read), and returns the values it printed, by
// reference.
func mbpoll(t *testing.T, s *sim.Sim, args []string, write ...string) map[int]int64 {
	t.Helper()
	_, port, _ := strings.Cut(s.Addr(), ":")
	full := append([]string{"-m", "tcp", "-a", "1", "-1", "-0", "-p", port}, args...)
	full = append(full, "127.0.0.1")
	full = append(full, write...)
	out, err := exec.CommandContext(t.Context(), "mbpoll", full...).CombinedOutput()
	if err != nil {
		t.Fatalf("mbpoll %s: %v\n%s", strings.Join(full, " "), err, out)
	}
	vals := map[int]int64{}
	for _, m := range mbpollLine.FindAllStringSubmatch(string(out), -1) {
		ref, _ := strconv.Atoi(m[1])
		v, _ := strconv.ParseInt(m[2], 10, 64)
		vals[ref] = v
	}
	return vals
}

// TestMbpoll reads the simulator with mbpoll (an independent Modbus master):
// the Counter as a big-endian 32-bit integer, and the Command→Status loop
// written and read by mbpoll. mbpoll's -0 makes references 0-based.
func TestMbpoll(t *testing.T) {
	peer.Command(t, "mbpoll", "mbpoll")
	s := startManual(t)
	for range 42 {
		s.Step()
	}
	got := mbpoll(t, s, []string{"-t", "4:int", "-B", "-r", "0", "-c", "1"})
	if got[0] != 42 {
		t.Fatalf("mbpoll read Counter %v, want [0]=42", got)
	}
	// Write Command = 4321 with mbpoll, tick, read Status with mbpoll.
	mbpoll(t, s, []string{"-t", "4", "-r", strconv.Itoa(sim.RegCommand)}, "4321")
	if got := mbpoll(t, s, []string{"-t", "4", "-r", strconv.Itoa(sim.RegStatus), "-c", "1"}); got[sim.RegStatus] != 0 {
		t.Fatalf("Status before the tick: %v, want 0", got)
	}
	s.Step()
	if got := mbpoll(t, s, []string{"-t", "4", "-r", strconv.Itoa(sim.RegStatus), "-c", "1"}); got[sim.RegStatus] != 4321 {
		t.Fatalf("Status after the tick: %v, want [%d]=4321", got, sim.RegStatus)
	}
	if got := mbpoll(t, s, []string{"-t", "4:int", "-B", "-r", "0", "-c", "1"}); got[0] != 43 {
		t.Fatalf("Counter after the tick: %v, want [0]=43", got)
	}
}

// TestChurn: the input registers a client reads hold the churn bank's
// values: each register the step of its class's last change, less than a
// second ago, from which ChurnChanged recovers when it changed.
func TestChurn(t *testing.T) {
	s, err := sim.StartOptions(t.Context(), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ir []uint16
	var at time.Time
	s.Update(func(b *slave.Bank) {
		at = time.Now()
		ir = append(ir, b.InputRegisters...)
	})
	if len(ir) != sim.BankSize {
		t.Fatalf("%d input registers, want %d", len(ir), sim.BankSize)
	}
	for i, v := range ir {
		changed := sim.ChurnChanged(v, at)
		age := at.Sub(changed)
		if age < 0 || age >= sim.ChurnClasses*sim.ChurnPeriod {
			t.Fatalf("ir:%d = %d changed %v before the read, want within a second", i, v, age)
		}
		if k := sim.ChurnStep(changed); k%sim.ChurnClasses != int64(i%sim.ChurnClasses) || uint16(k) != v {
			t.Fatalf("ir:%d = %d: changed at step %d, not of its class %d", i, v, k, i%sim.ChurnClasses)
		}
	}
}

// TestChurnChanged: ChurnChanged inverts the low 16 bits of a step, also
// across their wrap.
func TestChurnChanged(t *testing.T) {
	now := time.Unix(1_800_000_000, 55e6)
	k := sim.ChurnStep(now)
	for _, back := range []int64{0, 1, 9, 65535} {
		step := k - back
		got := sim.ChurnChanged(uint16(step), now)
		if want := time.Unix(0, step*int64(sim.ChurnPeriod)); !got.Equal(want) {
			t.Errorf("%d steps back: %v, want %v", back, got, want)
		}
	}
}

// TestChurnStepsBetweenPolls: the churn bank steps between a client's
// polls, not during one: the reads of a burst, as a poll of several
// devices makes them, see one step while within half a period of its
// first, also when a step of the wall clock falls among them.
func TestChurnStepsBetweenPolls(t *testing.T) {
	s, err := sim.StartOptions(t.Context(), sim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read := func() (at time.Time, ir [sim.ChurnClasses]uint16) {
		s.Update(func(b *slave.Bank) {
			at = time.Now()
			copy(ir[:], b.InputRegisters)
		})
		return at, ir
	}
	values := map[[sim.ChurnClasses]uint16]bool{}
	checked := 0
	// Bursts of ten reads 200 µs apart, a period apart, until the bank
	// has taken ten values (or, on a machine that stalls the test for
	// long, 20 s).
	end := time.Now().Add(20 * time.Second)
	for len(values) < 10 && time.Now().Before(end) {
		first := time.Now() // the bank's burst begins at the next read, after it
		_, want := read()
		values[want] = true
		for range 9 {
			time.Sleep(200 * time.Microsecond)
			at, ir := read()
			values[ir] = true
			if at.Sub(first) >= sim.Period/2 {
				continue // maybe a later burst for the bank
			}
			checked++
			if ir != want {
				t.Fatalf("a read %v after the first of its burst: the churn registers %v, then %v", at.Sub(first), want, ir)
			}
		}
		time.Sleep(sim.Period)
	}
	if len(values) < 10 || checked == 0 {
		t.Fatalf("the churn registers took %d values in 20 s, %d reads checked; want 10 (a step every %v)", len(values), checked, sim.ChurnPeriod)
	}
}
