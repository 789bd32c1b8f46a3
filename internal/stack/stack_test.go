package stack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/edged/edged/board"
	"github.com/edged/edged/configsvc"
	"github.com/edged/edged/opcua/server"
	"github.com/edged/edged/opcua/ua"
	"github.com/edged/edged/opcua/ua/status"
	"github.com/edged/edged/plc"
	pconfig "github.com/edged/edged/plc/config"
	"github.com/edged/edged/plc/sim"
)

// TestStartClose: the simulator's configuration gets the simulator's
// address, the engine runs cycles once started, and Close stops every
// part cleanly and in order (the server no longer serves).
func TestStartClose(t *testing.T) {
	conf := pconfig.Simulator()
	if !NeedsSimulator(&conf) {
		t.Fatal("the simulator's configuration does not need the simulator")
	}
	st, err := New(Config{Plant: &conf, Simulator: &sim.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range conf.Devices {
		if d.ModbusTCP != nil && d.ModbusTCP.Address != st.Sim.Addr() {
			t.Errorf("device %s polls %s, not the simulator at %s", d.Name, d.ModbusTCP.Address, st.Sim.Addr())
		}
	}
	if st.URL != "opc.tcp://"+st.Listener.Addr().String() {
		t.Errorf("URL %q for listener %v", st.URL, st.Listener.Addr())
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err == nil {
		t.Error("a second Start succeeded")
	}
	for st.Engine.Image().Cycle() < 3 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := st.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-st.Served():
	default:
		t.Fatal("the server still serves after Close")
	}
	if err := st.ServeErr(); err != server.ErrServerClosed {
		t.Errorf("ServeErr %v, want ErrServerClosed", err)
	}
}

// TestNewFailsCleanly: a configuration the devices cannot use fails New,
// which closes the listener it was given.
func TestNewFailsCleanly(t *testing.T) {
	conf := pconfig.Simulator()
	conf.Devices[0].Tags[0].Address = "nonsense"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(Config{Plant: &conf, Simulator: &sim.Options{}, Listener: ln})
	if err == nil {
		st.Close(context.Background())
		t.Fatal("New accepted a bad tag address")
	}
	if _, err := ln.Accept(); err == nil {
		t.Error("the listener is still open after New failed")
	}
}

// TestApply: a running stack takes a new configuration live: a removed
// tag leaves the engine and the address space, an added device is
// polled and shown with its configuration properties, an unchanged tag
// keeps its node and value; a base cycle change is refused and changes
// nothing.
func TestApply(t *testing.T) {
	st := startSim(t)
	as := st.Server.AddressSpace()
	waitGood := func(dev, tag string) {
		t.Helper()
		h, ok := st.Engine.Lookup(dev, tag)
		if !ok {
			t.Fatalf("no tag %s.%s", dev, tag)
		}
		for i := 0; st.Engine.Image().Status(h) != status.Good; i++ {
			if i > 5000 {
				t.Fatalf("%s.%s never Good", dev, tag)
			}
			time.Sleep(time.Millisecond)
		}
	}
	waitGood("sim", "Sine")
	counter, _ := st.Engine.Lookup("sim", "Counter")

	next := pconfig.Simulator()
	next.Devices[0].Tags = next.Devices[0].Tags[1:] // no Counter
	plc2 := next.Devices[0]
	plc2.Name = "plc2"
	plc2.ModbusTCP = pconfig.DefaultModbusTCP(pconfig.SimulatorAddress)
	plc2.Tags = []pconfig.Tag{{Name: "Word", Type: pconfig.UInt16, Address: "hr:0", ScanClass: "fast", Access: pconfig.Read}}
	next.Devices = append(next.Devices, plc2)
	if err := st.Apply(context.Background(), &next); err != nil {
		t.Fatal(err)
	}
	if _, ok := st.Engine.Lookup("sim", "Counter"); ok {
		t.Fatal("sim.Counter is still in the engine")
	}
	if st.Engine.Image().Status(counter) != status.BadNodeIDUnknown {
		t.Fatal("the removed tag is not Bad_NodeIdUnknown in the image")
	}
	if as.Node(st.Binding.NodeID("sim", "Counter")) != nil {
		t.Fatal("sim.Counter is still in the address space")
	}
	waitGood("plc2", "Word")
	if n := as.Node(ua.NewStringNodeID(st.Binding.Namespace(), "plc2/Address")); n == nil || n.Value.Value.Value() != st.Sim.Addr() {
		t.Fatalf("plc2's Address property: %+v", n)
	}
	if as.Node(st.Binding.DeviceDiagnosticsNodeID("plc2", "Polls")) == nil {
		t.Fatal("plc2 has no Diagnostics")
	}
	if as.Node(st.Binding.NodeID("sim", "Sine")) == nil || as.Node(st.Binding.NodeID("plc2", "Word")) == nil {
		t.Fatal("a tag is missing from the address space")
	}

	slow := pconfig.Simulator()
	slow.BaseCycleMs = 10
	if err := st.Apply(context.Background(), &slow); !errors.Is(err, plc.ErrPeriodChange) {
		t.Fatalf("a base cycle change: %v", err)
	}
	if as.Node(st.Binding.NodeID("plc2", "Word")) == nil {
		t.Fatal("a refused change removed plc2")
	}
}

// TestWatch: the watchdog is fed while the scan runs and not once it
// stalls; Close writes the magic 'V'. A regular file stands in for the
// device: its ioctls fail, so each feed is the write every driver takes.
func TestWatch(t *testing.T) {
	st := startSim(t)
	dev := filepath.Join(t.TempDir(), "watchdog")
	os.WriteFile(dev, nil, 0o600)
	w, err := board.OpenWatchdog(dev, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { st.Watch(ctx, w); close(done) }()
	size := func() int64 { fi, _ := os.Stat(dev); return fi.Size() }
	for size() < 3 {
		time.Sleep(50 * time.Millisecond) // fed every 250 ms while healthy
	}
	st.Engine.Stall()
	for st.Engine.Healthy() {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // a feed that had passed Healthy
	n := size()
	time.Sleep(time.Second)
	if size() != n {
		t.Fatalf("fed %d times after the scan stalled", size()-n)
	}
	cancel()
	<-done
	w.Close()
	if b, _ := os.ReadFile(dev); b[len(b)-1] != 'V' {
		t.Fatal("Close did not write the magic V")
	}
}

// startSim starts the stack of the simulator's configuration until the
// test ends.
func startSim(t *testing.T) *Stack {
	t.Helper()
	conf := pconfig.Simulator()
	st, err := New(Config{Plant: &conf, Simulator: &sim.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close(context.Background()) })
	return st
}

// TestKeepsNoConfiguration: the stack keeps no reference to the
// configuration it was made from (with many tags it takes megabytes):
// once the caller drops it, the collector frees it.
func TestKeepsNoConfiguration(t *testing.T) {
	store, err := configsvc.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, w := newDropped(t, store)
	defer st.Close(context.Background())
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		runtime.GC()
		if w.Value() == nil {
			return
		}
	}
	t.Fatal("the configuration given to New is still reachable after it")
}

// newDropped makes a stack of the simulator's configuration, with
// versions, and returns it with a weak pointer to that configuration.
func newDropped(t *testing.T, store *configsvc.Store) (*Stack, weak.Pointer[pconfig.Config]) {
	conf := pconfig.Simulator()
	st, err := New(Config{Plant: &conf, Simulator: &sim.Options{}, Versions: store})
	if err != nil {
		t.Fatal(err)
	}
	return st, weak.Make(&conf)
}

// TestHousekeeping: Runtime.Housekeeping runs once Start started the
// stack, and Close waits for it to return after closing its stop.
func TestHousekeeping(t *testing.T) {
	conf := pconfig.Simulator()
	running := make(chan struct{})
	returned := false
	st, err := New(Config{Plant: &conf, Simulator: &sim.Options{},
		Runtime: Runtime{Housekeeping: func(stop <-chan struct{}) {
			close(running)
			<-stop
			returned = true
		}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	<-running
	if err := st.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !returned {
		t.Fatal("Close returned before the housekeeping did")
	}
}

// TestReleaseAfterStart: Start returns memory as it ends, and, with
// images large enough for it to matter, once more when the start's
// aftermath settled (the images the engine set aside during it
// forgotten), not before; with the simulator's few tags it does not.
func TestReleaseAfterStart(t *testing.T) {
	for _, bulk := range []int{0, settleReleaseTags} {
		conf := pconfig.Simulator()
		for i := range bulk {
			conf.Devices[0].Tags = append(conf.Devices[0].Tags, pconfig.Tag{Name: fmt.Sprintf("Bulk%d", i),
				Type: pconfig.UInt16, Address: "hr:0", ScanClass: "fast", Access: pconfig.Read})
		}
		released := make(chan time.Time, 16)
		st, err := New(Config{Plant: &conf, Simulator: &sim.Options{},
			Runtime: Runtime{MemoryReleased: func() { released <- time.Now() }}})
		if err != nil {
			t.Fatal(err)
		}
		started := time.Now() // the second release's timer starts after this
		if err := st.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-released:
		default:
			t.Fatal("no release as the start ended")
		}
		settle := st.settleAfter()
		if min := time.Duration(plc.CalmPublishes*conf.BaseCycleMs) * time.Millisecond; settle <= min {
			t.Fatalf("the second release %v after the start, before the engine forgot the images set aside (%v)", settle, min)
		}
		second := false
		wait := time.After(settle + 2*time.Second)
	collect:
		for {
			select {
			case at := <-released:
				if at.Sub(started) >= settle {
					second = true
					break collect
				}
			case <-wait:
				break collect
			}
		}
		st.Close(context.Background())
		if want := st.Engine.Len() >= settleReleaseTags; second != want {
			t.Errorf("%d tags: a second release %v, want %v", st.Engine.Len(), second, want)
		}
	}
}
