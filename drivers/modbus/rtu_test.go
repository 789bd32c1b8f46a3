package modbus

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/edged/edged/opcua/ua/status"
	"github.com/goburrow/serial"
)

func crc16(b []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, c := range b {
		crc ^= uint16(c)
		for i := 0; i < 8; i++ {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

func withCRC(b []byte) []byte {
	c := crc16(b)
	return append(b, byte(c), byte(c>>8))
}

type fakeByte struct {
	at time.Time
	b  byte
}

// fakePort is a serial line with a simulated device on it, in fake time
// (run it inside a synctest bubble): a request written at T is on the line
// for len*char; the device answers after turnaround (plus extra), and byte i
// of its answer is complete at start + (i+1)*char. Reads return the bytes
// that have arrived, or serial.ErrTimeout after PollInterval.
type fakePort struct {
	t          *testing.T
	char       time.Duration
	turnaround time.Duration
	// device answers request number n (0-based); nil means silence.
	device func(n int, req []byte) (resp []byte, extra time.Duration)

	mu      sync.Mutex
	n       int
	pending []fakeByte
	writes  []time.Time // when each request started
	ends    []time.Time // when the last byte of each answer arrived
}

func (f *fakePort) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if len(f.pending) > 0 {
		f.t.Errorf("request written at %v while %d bytes of an answer are still arriving", now, len(f.pending))
	}
	if crc16(p[:len(p)-2]) != binary.LittleEndian.Uint16(p[len(p)-2:]) {
		f.t.Errorf("request % x: bad CRC", p)
	}
	f.writes = append(f.writes, now)
	resp, extra := f.device(f.n, append([]byte(nil), p...))
	f.n++
	start := now.Add(time.Duration(len(p))*f.char + f.turnaround + extra)
	for i, c := range resp {
		f.pending = append(f.pending, fakeByte{start.Add(time.Duration(i+1) * f.char), c})
	}
	if len(resp) > 0 {
		f.ends = append(f.ends, start.Add(time.Duration(len(resp))*f.char))
	}
	return len(p), nil
}

func (f *fakePort) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	deadline := time.Now().Add(PollInterval)
	for {
		f.mu.Lock()
		now := time.Now()
		k := 0
		for k < len(p) && len(f.pending) > 0 && !f.pending[0].at.After(now) {
			p[k] = f.pending[0].b
			f.pending = f.pending[1:]
			k++
		}
		next := deadline
		if len(f.pending) > 0 && f.pending[0].at.Before(next) {
			next = f.pending[0].at
		}
		f.mu.Unlock()
		if k > 0 {
			return k, nil
		}
		if !now.Before(deadline) {
			return 0, serial.ErrTimeout
		}
		time.Sleep(next.Sub(now))
	}
}

func (f *fakePort) Close() error { return nil }

// registerDevice answers function 3 with register i = unit*1000+address+i,
// and echoes writes (6, 16).
func registerDevice(req []byte) []byte {
	unit, fc := req[0], req[1]
	addr, qty := binary.BigEndian.Uint16(req[2:]), binary.BigEndian.Uint16(req[4:])
	switch fc {
	case 3:
		r := []byte{unit, fc, byte(2 * qty)}
		for i := uint16(0); i < qty; i++ {
			r = binary.BigEndian.AppendUint16(r, uint16(unit)*1000+addr+i)
		}
		return withCRC(r)
	case 6, 16:
		return withCRC(append([]byte(nil), req[:6]...))
	}
	return withCRC([]byte{unit, fc | 0x80, 1})
}

func newFakeBus(t *testing.T, cfg SerialConfig, device func(n int, req []byte) ([]byte, time.Duration)) (*RTU, *fakePort) {
	cfg = cfg.withDefaults()
	f := &fakePort{t: t, char: cfg.CharTime(), turnaround: 3 * time.Millisecond, device: device}
	cfg.Open = func(*SerialConfig) (io.ReadWriteCloser, error) { return f, nil }
	return NewRTU(cfg), f
}

func TestRTUTimingValues(t *testing.T) {
	for _, tc := range []struct {
		cfg            SerialConfig
		char, t35, t15 time.Duration
	}{
		{SerialConfig{BaudRate: 9600, Parity: "E"}, 1145833, 4010415, 1718749},
		{SerialConfig{BaudRate: 9600, Parity: "N", StopBits: 1}, 1041666, 3645831, 1562499},
		{SerialConfig{BaudRate: 19200, Parity: "N", StopBits: 2}, 572916, 2005206, 859374},
		{SerialConfig{BaudRate: 38400}, 286458, 1750 * time.Microsecond, 750 * time.Microsecond},
		{SerialConfig{BaudRate: 115200, DataBits: 7, Parity: "O"}, 86805, 1750 * time.Microsecond, 750 * time.Microsecond},
	} {
		c := tc.cfg.withDefaults()
		if c.CharTime() != tc.char || c.T35() != tc.t35 || c.T15() != tc.t15 {
			t.Errorf("%+v: char %v t3.5 %v t1.5 %v; want %v %v %v", tc.cfg, c.CharTime(), c.T35(), c.T15(), tc.char, tc.t35, tc.t15)
		}
	}
	if c := (SerialConfig{}).withDefaults(); c.BaudRate != 19200 || c.Parity != "E" || c.DataBits != 8 || c.StopBits != 1 || c.InterCharTimeout != 20*time.Millisecond {
		t.Errorf("defaults %+v", c)
	}
	for _, tc := range []struct {
		b    []byte
		want int
	}{
		{[]byte{1}, 0}, {[]byte{1, 3}, 0}, {[]byte{1, 3, 20}, 25}, {[]byte{1, 0x83}, 5},
		{[]byte{1, 6}, 8}, {[]byte{1, 16}, 8}, {[]byte{1, 1, 1}, 6}, {[]byte{1, 22}, 10}, {[]byte{1, 43}, -1},
	} {
		if got := responseLength(tc.b); got != tc.want {
			t.Errorf("responseLength(% x) = %d, want %d", tc.b, got, tc.want)
		}
	}
}

// The transaction takes exactly: the rest of T3.5, the request on the line,
// the device's turnaround, the response on the line — no fixed sleep; and
// the next request starts exactly T3.5 after the last byte of the answer.
func TestRTUTiming(t *testing.T) {
	for _, baud := range []int{9600, 19200, 115200} {
		t.Run(fmt.Sprint(baud), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				bus, f := newFakeBus(t, SerialConfig{BaudRate: baud}, func(n int, req []byte) ([]byte, time.Duration) {
					return registerDevice(req), 0
				})
				cfg := bus.Config()
				ctx := context.Background()
				t0 := time.Now()
				data, err := bus.Client(1).Read(ctx, HoldingRegisters, 10, 10, nil)
				if err != nil {
					t.Fatal(err)
				}
				if binary.BigEndian.Uint16(data) != 1010 || binary.BigEndian.Uint16(data[18:]) != 1019 {
					t.Errorf("data % x", data)
				}
				// 8-byte request, 25-byte response.
				want := cfg.T35() + 8*cfg.CharTime() + f.turnaround + 25*cfg.CharTime()
				if got := time.Since(t0); got != want {
					t.Errorf("first transaction took %v, want %v", got, want)
				}
				t1 := time.Now()
				if err := bus.Client(2).WriteRegisters(ctx, 5, []byte{0, 1, 0, 2}); err != nil {
					t.Fatal(err)
				}
				if gap := f.writes[1].Sub(f.ends[0]); gap != cfg.T35() {
					t.Errorf("silence before the second request %v, want T3.5 = %v", gap, cfg.T35())
				}
				// 13-byte request (fc 16, 2 registers), 8-byte response.
				want = cfg.T35() + 13*cfg.CharTime() + f.turnaround + 8*cfg.CharTime()
				if got := time.Since(t1); got != want {
					t.Errorf("write took %v, want %v", got, want)
				}
				// After a pause longer than T3.5, no wait at all.
				time.Sleep(10 * time.Millisecond)
				t2 := time.Now()
				bus.Client(3).Read(ctx, HoldingRegisters, 0, 1, nil)
				if f.writes[2] != t2 {
					t.Errorf("request after an idle bus waited %v", f.writes[2].Sub(t2))
				}
				bus.Close()
			})
		})
	}
}

// A device that answers too late: the timeout is reported, the late bytes
// are drained, and the next transaction gets its own answer.
func TestRTUTimeoutAndLateReply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus, f := newFakeBus(t, SerialConfig{BaudRate: 19200, Timeout: 50 * time.Millisecond}, func(n int, req []byte) ([]byte, time.Duration) {
			switch n {
			case 1:
				return nil, 0 // silent
			case 2:
				return registerDevice(req), 60 * time.Millisecond // late
			}
			return registerDevice(req), 0
		})
		cfg := bus.Config()
		c := bus.Client(7)
		ctx := context.Background()
		if _, err := c.Read(ctx, HoldingRegisters, 0, 2, nil); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 2; i++ {
			t0 := time.Now()
			_, err := c.Read(ctx, HoldingRegisters, uint16(100*i), 2, nil)
			if StatusOf(err) != status.BadTimeout {
				t.Fatalf("request %d: %v, want BadTimeout", i, err)
			}
			// T3.5, request on the line, Timeout, at most one poll late,
			// then the drain: at least InterCharTimeout of silence, longer
			// while late bytes come in.
			min := cfg.T35() + 8*cfg.CharTime() + cfg.Timeout
			if got := time.Since(t0); got < min+cfg.InterCharTimeout {
				t.Errorf("timeout %d after %v, want at least %v", i, got, min+cfg.InterCharTimeout)
			}
		}
		data, err := c.Read(ctx, HoldingRegisters, 300, 2, nil)
		if err != nil || binary.BigEndian.Uint16(data) != 7300 {
			t.Errorf("after the late reply: % x %v", data, err)
		}
		if len(f.pending) != 0 {
			t.Errorf("%d bytes left on the line", len(f.pending))
		}
		// A context deadline earlier than Timeout wins.
		f.device = func(int, []byte) ([]byte, time.Duration) { return nil, 0 }
		ctx2, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		t0 := time.Now()
		_, err = c.Read(ctx2, HoldingRegisters, 0, 1, nil)
		if StatusOf(err) != status.BadTimeout || time.Since(t0) > 10*time.Millisecond+cfg.InterCharTimeout+2*PollInterval {
			t.Errorf("ctx deadline: %v after %v", err, time.Since(t0))
		}
		st := c.Snapshot()
		if st.Requests != 5 || st.Timeouts != 3 || st.State != StateConnected {
			t.Errorf("%+v", st)
		}
	})
}

func TestRTUErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus, _ := newFakeBus(t, SerialConfig{BaudRate: 19200}, func(n int, req []byte) ([]byte, time.Duration) {
			r := registerDevice(req)
			switch n {
			case 0: // bad CRC
				r[len(r)-1] ^= 0xFF
			case 1: // stops after 10 of 25 bytes
				r = r[:10]
			case 2: // exception 2
				r = withCRC([]byte{req[0], req[1] | 0x80, 2})
			case 3: // answer from another unit id
				r = registerDevice(append([]byte{9}, req[1:]...))
			}
			return r, 0
		})
		cfg := bus.Config()
		c := bus.Client(1)
		ctx := context.Background()
		_, err := c.Read(ctx, HoldingRegisters, 0, 10, nil)
		if StatusOf(err) != status.BadCommunicationError {
			t.Errorf("bad CRC: %v", err)
		}
		t0 := time.Now()
		_, err = c.Read(ctx, HoldingRegisters, 0, 10, nil)
		if !errors.Is(err, ErrFrame) || StatusOf(err) != status.BadCommunicationError {
			t.Errorf("truncated: %v", err)
		}
		// It ends InterCharTimeout (to a poll) after the 10th byte, plus the drain.
		end := cfg.T35() + 8*cfg.CharTime() + 3*time.Millisecond + 10*cfg.CharTime() + cfg.InterCharTimeout
		if got := time.Since(t0); got < end || got > end+cfg.InterCharTimeout+2*PollInterval {
			t.Errorf("truncated frame failed after %v, want %v..%v", got, end, end+cfg.InterCharTimeout+2*PollInterval)
		}
		_, err = c.Read(ctx, HoldingRegisters, 0, 10, nil)
		var e *Error
		if !errors.As(err, &e) || e.Exception != 2 || e.Status != status.BadConfigurationError {
			t.Errorf("exception: %v", err)
		}
		_, err = c.Read(ctx, HoldingRegisters, 0, 10, nil)
		if StatusOf(err) != status.BadCommunicationError {
			t.Errorf("wrong unit id: %v", err)
		}
		if _, err = c.Read(ctx, HoldingRegisters, 0, 10, nil); err != nil {
			t.Errorf("after the errors: %v", err)
		}
	})
}

// Several unit ids on one bus from several goroutines: requests never
// overlap, each is preceded by T3.5 of silence, and each gets its own data.
func TestRTUSharedBus(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		bus, f := newFakeBus(t, SerialConfig{BaudRate: 115200}, func(n int, req []byte) ([]byte, time.Duration) {
			return registerDevice(req), 0
		})
		var wg sync.WaitGroup
		for u := uint8(1); u <= 3; u++ {
			wg.Go(func() {
				c := bus.Client(u)
				for i := 0; i < 10; i++ {
					data, err := c.Read(context.Background(), HoldingRegisters, uint16(i), 3, nil)
					if err != nil {
						t.Error(err)
						return
					}
					if got, want := binary.BigEndian.Uint16(data), uint16(u)*1000+uint16(i); got != want {
						t.Errorf("unit %d read %d: got %d", u, i, got)
					}
				}
			})
		}
		wg.Wait()
		if len(f.writes) != 30 {
			t.Fatalf("%d requests", len(f.writes))
		}
		for i := 1; i < 30; i++ {
			if gap := f.writes[i].Sub(f.ends[i-1]); gap < bus.Config().T35() {
				t.Errorf("request %d: %v of silence", i, gap)
			}
		}
	})
}

// Whatever arrives on the line, the RTU bus returns an error or a response
// of the right size and never panics.
func FuzzRTUResponse(f *testing.F) {
	f.Add(registerDevice([]byte{1, 3, 0, 0, 0, 2}), false)
	f.Add([]byte{1, 0x83, 2}, true)
	f.Add([]byte{1, 3, 0xFF}, true)
	f.Add([]byte{1, 43, 1, 2, 3}, true)
	f.Fuzz(func(t *testing.T, resp []byte, fixCRC bool) {
		if len(resp) > 300 {
			return
		}
		if fixCRC {
			resp = withCRC(append([]byte(nil), resp...))
		}
		synctest.Test(t, func(t *testing.T) {
			bus, _ := newFakeBus(t, SerialConfig{BaudRate: 115200, Timeout: 20 * time.Millisecond}, func(n int, req []byte) ([]byte, time.Duration) {
				return resp, 0
			})
			defer bus.Close()
			data, err := bus.Client(1).Read(context.Background(), HoldingRegisters, 0, 2, nil)
			if err == nil && len(data) != 4 {
				t.Fatalf("%d bytes of data", len(data))
			}
		})
	})
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []SerialConfig{{}, {Device: "/dev/x", DataBits: 9}, {Device: "/dev/x", StopBits: 3}, {Device: "/dev/x", Parity: "M"}, {Device: "/dev/x", BaudRate: -1}} {
		if c.Validate() == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	if err := (SerialConfig{Device: "/dev/ttyS1", BaudRate: 9600, Parity: "N", StopBits: 2}).Validate(); err != nil {
		t.Error(err)
	}
	if (TCPConfig{Address: "plc1"}).Validate() == nil || (TCPConfig{Address: "plc1:502", Timeout: -1}).Validate() == nil {
		t.Error("bad TCP config accepted")
	}
	if err := (TCPConfig{Address: "10.0.0.5:502"}).Validate(); err != nil {
		t.Error(err)
	}
}
