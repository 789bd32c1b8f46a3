package modbus

// Tests against independent Modbus peers: a pymodbus server (Debian
// python3-pymodbus) over TCP and over RTU through a socat pty pair, and
// mbpoll (Debian mbpoll) polling our slave. scripts/deps.sh installs them;
// a test skips only when its peer is not installed.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edged/edged/internal/testutil/peer"

	"github.com/edged/edged/drivers/modbus/slave"
	"github.com/edged/edged/opcua/ua/status"
)

// pythonWithPymodbus returns an interpreter that imports pymodbus (the one
// on PATH may be a virtualenv or pyenv without the Debian package).
func pythonWithPymodbus(t *testing.T) string {
	t.Helper()
	return peer.Python(t, "python3-pymodbus, python3-serial, python3-serial-asyncio", "pymodbus", "serial_asyncio")
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startProcess starts cmd, waits for "ready" on its stdout, and kills it at
// the end of the test.
func startProcess(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, stderr.String())
		}
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("%s exited: %s", name, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s not ready", name)
	}
}

type known struct {
	addr string // in either notation
	p    Point  // Area and Address come from addr
	want Value
}

// The values testdata/pymodbus_server.py holds, encoded there by Python's struct.
var pymodbusValues = []known{
	{"400001", Point{Type: Int16}, IntValue(Int16, -12345)},
	{"hr:1", Point{Type: Uint16}, UintValue(Uint16, 54321)},
	{"40003", Point{Type: Int32}, IntValue(Int32, -123456789)},
	{"400005", Point{Type: Uint32}, UintValue(Uint32, 3123456789)},
	{"hr:6", Point{Type: Int64}, IntValue(Int64, -1234567890123456789)},
	{"40011", Point{Type: Uint64}, UintValue(Uint64, 12345678901234567890)},
	{"400015", Point{Type: Float32}, FloatValue(Float32, float64(float32(-3.25e7)))},
	{"hr:16", Point{Type: Float64}, FloatValue(Float64, 6.02214076e23)},
	{"40021", Point{Type: String, Len: 4}, StringValue("pymodbus")},
	{"400025", Point{Type: Bit, Bit: 13}, UintValue(Bit, 1)},
	{"hr:24", Point{Type: Bit, Bit: 12}, UintValue(Bit, 0)},
	{"30001", Point{Type: Float32, Order: CDAB}, FloatValue(Float32, float64(float32(123.456)))},
	{"ir:2", Point{Type: Uint16}, UintValue(Uint16, 0x1234)},
	{"300004", Point{Type: Int32, Order: DCBA}, IntValue(Int32, -2)},
	{"00001", Point{Type: Bool}, BoolValue(false)},
	{"coils:1", Point{Type: Bool}, BoolValue(true)},
	{"000004", Point{Type: Bool}, BoolValue(true)},
	{"00005", Point{Type: Bool}, BoolValue(true)},
	{"co:10", Point{Type: Bool}, BoolValue(true)},
	{"10004", Point{Type: Bool}, BoolValue(true)},
	{"di:7", Point{Type: Bool}, BoolValue(true)},
	{"100007", Point{Type: Bool}, BoolValue(false)},
}

func readAndCheck(t *testing.T, c *Client, pts []Point, want []Value) {
	t.Helper()
	blocks, err := Plan(pts, PlanOptions{MaxGapRegisters: 8, MaxGapBits: 32})
	if err != nil {
		t.Fatal(err)
	}
	var buf []byte
	for _, b := range blocks {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		buf, err = c.ReadBlock(ctx, &b, buf)
		cancel()
		if err != nil {
			t.Fatalf("block %+v: %v", b, err)
		}
		for _, i := range b.Points {
			got, err := pts[i].Decode(buf, b.Start, ABCD)
			if err != nil || got != want[i] {
				t.Errorf("%v %v at %s: got %v (%v), want %v", pts[i].Type, pts[i].Order, FormatAddress(pts[i].Area, pts[i].Address), got, err, want[i])
			}
		}
	}
}

// exercisePeer reads the known values, then writes every type in every order
// and reads it back, writes coils, and provokes an exception.
func exercisePeer(t *testing.T, c *Client) {
	var pts []Point
	var want []Value
	for _, k := range pymodbusValues {
		a, addr, err := ParsePointAddress(k.addr)
		if err != nil {
			t.Fatal(err)
		}
		p := k.p
		p.Unit, p.Area, p.Address = c.Unit(), a, addr
		pts = append(pts, p)
		want = append(want, k.want)
	}
	readAndCheck(t, c, pts, want)

	pts, want = pts[:0], want[:0]
	a := uint16(100)
	for _, o := range []Order{ABCD, CDAB, BADC, DCBA} {
		for _, x := range []Value{
			IntValue(Int16, -2), UintValue(Uint16, 65000), IntValue(Int32, -70000), UintValue(Uint32, 4000000000),
			IntValue(Int64, -1<<62), UintValue(Uint64, 1<<63+5), FloatValue(Float32, -0.5), FloatValue(Float64, 1e-300),
			StringValue("abc"), UintValue(Bit, 1),
		} {
			p := Point{Unit: c.Unit(), Area: HoldingRegisters, Address: a, Type: x.Type(), Order: o, Len: 3, Bit: 3}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err := c.WritePoint(ctx, &p, x, ABCD)
			cancel()
			if err != nil {
				t.Fatalf("write %v %v at %d: %v", p.Type, o, a, err)
			}
			pts = append(pts, p)
			want = append(want, x)
			a += uint16(p.Span())
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.WriteCoils(ctx, 20, 10, []byte{0b01010101, 0b10}); err != nil {
		t.Fatal(err)
	}
	if err := c.WritePoint(ctx, &Point{Area: Coils, Address: 40, Type: Bool}, BoolValue(true), ABCD); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		pts = append(pts, Point{Unit: c.Unit(), Area: Coils, Address: uint16(20 + i), Type: Bool})
		want = append(want, BoolValue(i%2 == 0 && i < 8 || i == 9))
	}
	pts = append(pts, Point{Unit: c.Unit(), Area: Coils, Address: 40, Type: Bool})
	want = append(want, BoolValue(true))
	readAndCheck(t, c, pts, want)

	// Beyond the 300 registers pymodbus holds: illegal data address.
	_, err := c.Read(ctx, HoldingRegisters, 295, 10, nil)
	var e *Error
	if !errors.As(err, &e) || e.Exception != 2 || e.Status != status.BadConfigurationError {
		t.Errorf("read past the end: %v", err)
	}
	if _, err := c.Read(ctx, HoldingRegisters, 0, 1, nil); err != nil {
		t.Errorf("after the exception: %v", err)
	}
	t.Logf("stats: %+v", c.Snapshot())
}

func TestPymodbusTCP(t *testing.T) {
	py := pythonWithPymodbus(t)
	port := freePort(t)
	startProcess(t, py, "testdata/pymodbus_server.py", "tcp", strconv.Itoa(port))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ { // the server listens shortly after "ready"
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	link := NewTCP(TCPConfig{Address: addr})
	defer link.Close()
	exercisePeer(t, link.Client(1))
}

func TestPymodbusRTU(t *testing.T) {
	py := pythonWithPymodbus(t)
	peer.Command(t, "socat", "socat")
	dir := t.TempDir()
	x, y := filepath.Join(dir, "x"), filepath.Join(dir, "y")
	socat := exec.Command("socat", "-d", "-d", "pty,raw,echo=0,link="+x, "pty,raw,echo=0,link="+y)
	if err := socat.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { socat.Process.Kill(); socat.Wait() })
	for i := 0; ; i++ {
		_, e1 := os.Stat(x)
		_, e2 := os.Stat(y)
		if e1 == nil && e2 == nil {
			break
		}
		if i == 100 {
			t.Fatal("socat made no ptys")
		}
		time.Sleep(20 * time.Millisecond)
	}
	startProcess(t, py, "testdata/pymodbus_server.py", "rtu", y, "19200")
	// 8N1: Linux ptys refuse the parity bit.
	bus := NewRTU(SerialConfig{Device: x, BaudRate: 19200, Parity: "N", Timeout: time.Second})
	defer bus.Close()
	// The serial server opens its port after "ready": poll until it answers.
	for i := 0; ; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := bus.Client(1).Read(ctx, HoldingRegisters, 0, 1, nil)
		cancel()
		if err == nil {
			break
		}
		if i == 50 {
			t.Fatalf("pymodbus RTU server does not answer: %v", err)
		}
	}
	exercisePeer(t, bus.Client(1))
	// A unit id nobody answers: a timeout, and the bus still works after it.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := bus.Client(2).Read(ctx, HoldingRegisters, 0, 1, nil); StatusOf(err) != status.BadTimeout {
		t.Errorf("absent unit 2: %v", err)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	if _, err := bus.Client(1).Read(ctx2, HoldingRegisters, 0, 1, nil); err != nil {
		t.Errorf("unit 1 after unit 2's timeout: %v", err)
	}
}

// mbpoll, an independent master, reads and writes our slave.
func TestMbpollReadsSlave(t *testing.T) {
	peer.Command(t, "mbpoll", "mbpoll")
	s := slave.New(slave.NewBank(100))
	var writes []slave.Write
	s.OnWrite = func(b *slave.Bank, w slave.Write) { writes = append(writes, w) }
	addr, err := s.ListenAndServe("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	port := strconv.Itoa(addr.(*net.TCPAddr).Port)
	s.Update(func(b *slave.Bank) { // a simulation tick
		for i := 0; i < 10; i++ {
			b.HoldingRegisters[i] = uint16(1000*i + 7)
			b.InputRegisters[i] = uint16(65535 - i)
			b.Coils[i] = i%3 == 0
		}
	})
	// run runs mbpoll with options, then the host, then values to write.
	run := func(opts []string, values ...string) map[int]string {
		args := append([]string{"-m", "tcp", "-a", "1", "-1", "-0", "-p", port}, opts...)
		args = append(append(args, "127.0.0.1"), values...)
		out, err := exec.Command("mbpoll", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("mbpoll %v: %v\n%s", args, err, out)
		}
		vals := map[int]string{}
		for _, m := range regexp.MustCompile(`(?m)^\[(\d+)\]:\s+(\S+)`).FindAllStringSubmatch(string(out), -1) {
			n, _ := strconv.Atoi(m[1])
			vals[n] = m[2]
		}
		return vals
	}
	hr := run([]string{"-t", "4", "-r", "0", "-c", "10"})
	ir := run([]string{"-t", "3", "-r", "0", "-c", "10"})
	co := run([]string{"-t", "0", "-r", "0", "-c", "10"})
	for i := 0; i < 10; i++ {
		if hr[i] != strconv.Itoa(1000*i+7) {
			t.Errorf("mbpoll holding register %d: %q", i, hr[i])
		}
		if ir[i] != strconv.Itoa(65535-i) {
			t.Errorf("mbpoll input register %d: %q", i, ir[i])
		}
		want := "0"
		if i%3 == 0 {
			want = "1"
		}
		if co[i] != want {
			t.Errorf("mbpoll coil %d: %q", i, co[i])
		}
	}
	// Writes from mbpoll: one register (fc 6), several (fc 16).
	run([]string{"-t", "4", "-r", "50"}, "4242")
	run([]string{"-t", "4", "-r", "60"}, "1", "2", "3")
	s.Update(func(b *slave.Bank) {
		if b.HoldingRegisters[50] != 4242 || b.HoldingRegisters[60] != 1 || b.HoldingRegisters[62] != 3 {
			t.Errorf("after mbpoll writes: %v", b.HoldingRegisters[50:63])
		}
		if len(writes) != 2 || writes[0].Function != 6 || writes[1].Function != 16 || writes[1].Count != 3 {
			t.Errorf("OnWrite saw %+v", writes)
		}
	})
	// Out of the bank: mbpoll reports the exception.
	out, _ := exec.Command("mbpoll", "-m", "tcp", "-a", "1", "-1", "-0", "-p", port, "-r", "95", "-c", "10", "127.0.0.1").CombinedOutput()
	if !strings.Contains(strings.ToLower(string(out)), "illegal data address") {
		t.Errorf("mbpoll past the bank: %s", out)
	}
}
