package stack

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/edged/edged/opcua/server"
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
