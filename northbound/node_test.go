package northbound

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edged/edged/mqtt"
	"github.com/edged/edged/plc"
	"github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/plctest"
	"github.com/edged/edged/sparkplug"
)

// sink is a broker that takes a connection, answers CONNECT and PINGREQ
// and counts the bytes of what else it reads.
type sink struct {
	ln    net.Listener
	bytes atomic.Int64
}

func newSink(t testing.TB) *sink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	return s
}

func (s *sink) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 1<<16)
	for {
		h, err := r.ReadByte()
		if err != nil {
			return
		}
		n, mul := 0, 1
		for {
			d, err := r.ReadByte()
			if err != nil {
				return
			}
			n += int(d&0x7f) * mul
			mul *= 128
			if d&0x80 == 0 {
				break
			}
		}
		if _, err := r.Discard(n); err != nil {
			return
		}
		switch h >> 4 {
		case 1: // CONNECT
			c.Write([]byte{0x20, 2, 0, 0})
		case 12: // PINGREQ
			c.Write(pingresp)
		default:
			s.bytes.Add(int64(n + 2))
		}
	}
}

var pingresp = []byte{0xd0, 0}

// rig is an engine of n Float64 tags of one fake device "d" (or, made
// by newRigOf, of several: "d0", "d1", ..., the tags dealt out in turn),
// two images of it in which every tag changed (held), and a loop born on
// a connection to a sink.
type rig struct {
	e      *plc.Engine
	f      *plctest.Fake // every device's
	images [2]*plc.Image
	l      *loop
	sink   *sink
}

func newRig(t testing.TB, n int) *rig { return newRigOf(t, n, 1) }

func newRigOf(t testing.TB, n, devices int) *rig {
	r := &rig{f: &plctest.Fake{}}
	var pc plc.Config
	conf := &config.Config{}
	for i := range devices {
		name := "d"
		if devices > 1 {
			name = fmt.Sprintf("d%d", i)
		}
		pc.Devices = append(pc.Devices, plc.DeviceConfig{Name: name, Device: r.f})
		conf.Devices = append(conf.Devices, config.Device{Name: name, Kind: config.KindSim})
	}
	for i := range n {
		name, d := fmt.Sprintf("T%05d", i), i%devices
		pc.Tags = append(pc.Tags, plc.Tag{Device: pc.Devices[d].Name, Name: name, Type: plc.Float64})
		conf.Devices[d].Tags = append(conf.Devices[d].Tags, config.Tag{Name: name})
	}
	var err error
	if r.e, err = plc.New(pc); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.e.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	for k := range r.images {
		// Two devices may be polled on either side of SetAll: then the
		// change spans two images, and the values go back and forth until
		// one image has it whole.
		want := float64(k + 1)
		for r.images[k] == nil {
			im := r.settle(n, want)
			if len(im.Changed()) == n {
				r.images[k] = im
				continue
			}
			im.Release()
			r.settle(n, -want).Release()
		}
	}
	t.Cleanup(func() { r.images[0].Release(); r.images[1].Release() })
	r.sink = newSink(t)
	st := &settings{brokers: []string{"tcp://" + r.sink.ln.Addr().String()}, group: "g", node: "n", clientID: "c", keepAlive: time.Minute, replayRate: 1000}
	node := &Node{opt: Options{Engine: r.e, Logger: slog.New(slog.DiscardHandler)}, log: slog.New(slog.DiscardHandler)}
	r.l = &loop{n: node, st: st, lay: newLayout(r.e, nil, conf, st), writes: make(chan struct{}, 1)}
	c, err := mqtt.Dial(context.Background(), st.brokers[0], mqtt.Options{ClientID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r.l.conn = c
	r.l.birth()
	// The rig replays its two images, taken before the birth; as images
	// after it (TestOlderImagesAfterBirth has the rule).
	r.l.birthCyc = 0
	return r
}

// settle sets every tag of r to v and returns the first image in which
// every one of its n tags has v (held).
func (r *rig) settle(n int, v float64) *plc.Image {
	r.f.SetAll(plc.Float64Value(v))
	for {
		im := r.e.Acquire()
		all := true
		for h := range n {
			all = all && im.Sample(plc.Handle(h)).Value.Float64() == v
		}
		if all {
			return im
		}
		im.Release()
		time.Sleep(time.Millisecond)
	}
}

// Publishing an image's changes as DDATA allocates nothing in the steady
// state: 0 allocations per DDATA (here of 100 metrics).
func TestDeviceDataAllocs(t *testing.T) {
	r := newRig(t, 100)
	for i := range 10 { // grow the buffers
		r.l.image(r.images[i%2])
	}
	before := r.l.n.cnt.messages.Load()
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		r.l.image(r.images[i%2])
		i++
	})
	if sent := r.l.n.cnt.messages.Load() - before; sent < 200 {
		t.Fatalf("%d DDATA for 201 images", sent)
	}
	if allocs != 0 {
		t.Errorf("%v allocations per DDATA, want 0", allocs)
	}
}

// BenchmarkDeviceData: the CPU of publishing one image in which 10,000
// metrics changed (encoding, the write to the socket); ns/metric is the
// cost per published metric, B/metric the bytes on the wire.
func BenchmarkDeviceData(b *testing.B) {
	const n = 10000
	r := newRig(b, n)
	for i := range 4 {
		r.l.image(r.images[i%2])
	}
	b0 := r.sink.bytes.Load()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.l.image(r.images[i%2])
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/metric")
	// The sink's count lags the socket by what is in flight: wait for it.
	want := b0 + 1
	for deadline := time.Now().Add(5 * time.Second); r.sink.bytes.Load() < want && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	b.ReportMetric(float64(r.sink.bytes.Load()-b0)/float64(b.N)/n, "B/metric")
}

// DDATA carry aliases only, and a metric's change, its value: decoded
// back here (the interop tests decode them with Tahu).
func TestDeviceDataContent(t *testing.T) {
	r := newRig(t, 3)
	var got []sparkplug.Metric
	r.l.image(r.images[0])
	r.l.image(r.images[1])
	// The last DDATA is still in the loop's buffer.
	if _, err := sparkplug.Decode(r.l.buf, func(m *sparkplug.Metric) error { got = append(got, *m); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d metrics: %+v", len(got), got)
	}
	for i, m := range got {
		v, err := m.As(sparkplug.Double)
		if m.Name != "" || !m.HasAlias || m.Alias != uint64(len(nodeMetrics)+1+i) || m.Value.Type != 0 || err != nil ||
			plc.FromBits(plc.Float64, v.Bits).Float64() != 2 || m.Timestamp == 0 {
			t.Errorf("metric %d: %+v", i, m)
		}
	}
}

// With each device's DDATA published as the loop reaches the next
// device's changes (dataNow), an image still gives one DDATA per device
// and every metric once: three devices, three DDATA an image.
func TestDeviceDataPerDevice(t *testing.T) {
	const devices, n = 3, 90
	r := newRigOf(t, n, devices)
	for i := range 4 {
		messages, metrics := r.l.n.cnt.messages.Load(), r.l.n.cnt.metrics.Load()
		r.l.image(r.images[i%2])
		if got := r.l.n.cnt.messages.Load() - messages; got != devices {
			t.Errorf("image %d: %d DDATA, want %d", i, got, devices)
		}
		if got := r.l.n.cnt.metrics.Load() - metrics; got != n {
			t.Errorf("image %d: %d metrics, want %d", i, got, n)
		}
		for _, d := range r.l.lay.devices {
			if len(d.dirty) != 0 {
				t.Errorf("image %d: device %s has %d metrics pending", i, d.name, len(d.dirty))
			}
		}
	}
}

func TestReadSecret(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("pw\n"), 0o644)
	if _, err := readSecret(open); err == nil || !strings.Contains(err.Error(), "0600") {
		t.Errorf("a secret readable by others: %v", err)
	}
	closed := filepath.Join(dir, "closed")
	os.WriteFile(closed, []byte("pw\n"), 0o600)
	if b, err := readSecret(closed); err != nil || string(b) != "pw\n" {
		t.Errorf("%q %v", b, err)
	}
	if _, err := readSecret(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	s, err := resolve(&config.Sparkplug{Brokers: []string{"tcp://b"}, GroupID: "g", EdgeNodeID: "n", KeepAliveS: 5, Username: "u", PasswordFile: closed, ReplayRate: 100})
	if err != nil || string(s.password) != "pw" || s.clientID != "edged-g-n" {
		t.Errorf("%+v %v", s, err)
	}
	if _, err := resolve(&config.Sparkplug{Brokers: []string{"tcp://b"}, GroupID: "g", KeepAliveS: 5, Username: "u", PasswordFile: open}); err == nil ||
		!strings.Contains(err.Error(), "northbound.sparkplug.password_file") {
		t.Errorf("%v", err)
	}
}

func TestQualityAndDeadband(t *testing.T) {
	for st, want := range map[plc.Status]uint64{0: 192, 0x40920000: 500, 0x80310000: 0} {
		if q := quality(st); q != want {
			t.Errorf("quality(%#x) = %d, want %d", uint32(st), q, want)
		}
	}
	m := &metric{typ: plc.Float64, deadband: 0.5, have: true, sentBits: plc.Float64Value(10).Bits()}
	for v, want := range map[float64]bool{10.4: false, 9.6: false, 10.5: true, 9: true} {
		s := plc.Sample{Value: plc.Float64Value(v)}
		if got := m.changedEnough(&s); got != want {
			t.Errorf("%v after 10 with deadband 0.5: %v", v, got)
		}
	}
}

// The watermark keeps the newest position the broker confirmed while
// every sample goes out before the previous one's mark is answered.
func TestWatermark(t *testing.T) {
	var w watermark
	w.reset(0)
	// Samples at 1..8, a mark every 4 (marks 1, 2), answers lagging.
	w.advance(1, 1, 0)
	w.advance(2, 1, 0)
	if got := w.confirmedAt(0); got != 0 {
		t.Fatalf("nothing answered: %d", got)
	}
	w.advance(3, 2, 0) // mark 1 sent, unanswered: 2 waits
	if got := w.confirmedAt(0); got != 0 {
		t.Fatalf("mark 1 unanswered: %d", got)
	}
	w.advance(4, 2, 1) // mark 1 answered: 2 confirmed
	if got := w.confirmedAt(1); got != 2 {
		t.Fatalf("mark 1 answered: %d, want 2", got)
	}
	w.advance(5, 3, 1)
	if got := w.confirmedAt(2); got != 4 {
		t.Fatalf("mark 2 answered: %d, want 4", got)
	}
	if got := w.confirmedAt(3); got != 5 {
		t.Fatalf("mark 3 answered: %d, want 5", got)
	}
}

// With min_interval_ms a device's changes within the interval wait and go
// out together, the latest value of each.
func TestMinInterval(t *testing.T) {
	r := newRig(t, 3)
	r.l.st.minInterval = time.Hour
	before := r.l.n.cnt.messages.Load()
	r.l.image(r.images[0]) // the first DDATA since the birth goes out
	r.l.image(r.images[1]) // within the hour: kept
	r.l.image(r.images[0])
	if n := r.l.n.cnt.messages.Load() - before; n != 1 {
		t.Fatalf("%d DDATA within the interval, want 1", n)
	}
	d := r.l.lay.devices[0]
	if len(d.dirty) != 3 || plc.FromBits(plc.Float64, d.dirty[0].next.Value.Bits()).Float64() != 1 {
		t.Fatalf("pending: %d metrics", len(d.dirty))
	}
	d.lastSent -= int64(time.Hour) // the interval passed
	r.l.image(r.images[1])
	if n := r.l.n.cnt.messages.Load() - before; n != 2 {
		t.Fatalf("%d DDATA after the interval, want 2", n)
	}
}

// Births asked for before the engine's first cycle wait for its first
// image: before it, no value has a time (a birth then carried the zero
// time as a timestamp, which Tahu's consumer could not read).
func TestBirthWaitsForFirstCycle(t *testing.T) {
	f := &plctest.Fake{}
	e, err := plc.New(plc.Config{Devices: []plc.DeviceConfig{{Name: "d", Device: f}}, Tags: []plc.Tag{{Device: "d", Name: "T", Type: plc.Float64}}})
	if err != nil {
		t.Fatal(err)
	}
	s := newSink(t)
	st := &settings{brokers: []string{"tcp://" + s.ln.Addr().String()}, group: "g", node: "n", clientID: "c", keepAlive: time.Minute, replayRate: 1000}
	node := &Node{opt: Options{Engine: e, Logger: slog.New(slog.DiscardHandler)}, log: slog.New(slog.DiscardHandler)}
	conf := &config.Config{Devices: []config.Device{{Name: "d", Kind: config.KindSim, Tags: []config.Tag{{Name: "T"}}}}}
	l := &loop{n: node, st: st, lay: newLayout(e, nil, conf, st)}
	c, err := mqtt.Dial(context.Background(), st.brokers[0], mqtt.Options{ClientID: "c"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	l.conn = c
	l.birth()
	if l.born || !l.birthDue || node.cnt.messages.Load() != 0 {
		t.Fatalf("born %v, due %v, %d messages before the first cycle", l.born, l.birthDue, node.cnt.messages.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	defer func() { cancel(); <-done }()
	for {
		im := e.Acquire()
		if im.Cycle() > 0 {
			l.image(im)
			im.Release()
			break
		}
		im.Release()
		time.Sleep(time.Millisecond)
	}
	if !l.born || l.birthDue || node.cnt.messages.Load() != 2 {
		t.Fatalf("born %v, due %v, %d messages after the first cycle (want NBIRTH and DBIRTH)", l.born, l.birthDue, node.cnt.messages.Load())
	}
	if l.lay.devices[0].metrics[0].birthT <= 0 && l.lay.devices[0].metrics[0].have {
		t.Fatalf("a birth value without a time")
	}
}

// TestOlderImagesAfterBirth: images still queued when the births took a
// newer image publish nothing: their values are older than the births'
// (sent after them they would go back in time, then repeat the births').
func TestOlderImagesAfterBirth(t *testing.T) {
	r := newRig(t, 10)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		im := r.e.Acquire()
		newer := im.Cycle() > r.images[1].Cycle()
		im.Release()
		if newer || time.Now().After(deadline) {
			break
		}
	}
	r.l.birth() // from the engine's newest image, after the rig's two
	if r.l.birthCyc <= r.images[1].Cycle() {
		t.Fatalf("the birth's image (cycle %d) is not newer than the rig's (%d)", r.l.birthCyc, r.images[1].Cycle())
	}
	before := r.l.n.cnt.messages.Load()
	r.l.image(r.images[0])
	r.l.image(r.images[1])
	if sent := r.l.n.cnt.messages.Load() - before; sent != 0 {
		t.Fatalf("%d messages for images older than the births", sent)
	}
	im := r.e.Acquire() // the births' image or a newer one: goes through
	defer im.Release()
	if im.Cycle() < r.l.birthCyc {
		t.Fatalf("the newest image (cycle %d) is older than the births' (%d)", im.Cycle(), r.l.birthCyc)
	}
}
